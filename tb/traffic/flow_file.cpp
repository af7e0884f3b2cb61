// HPCC flow files (Li et al., SIGCOMM 2019, traffic_gen format): reading with
// FILE:LINE:COL errors and writing, exact to the picosecond.
#include <algorithm>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "core/config.h"
#include "traffic/text_input.h"
#include "traffic/traffic.h"

namespace rocesim::traffic {

namespace {
constexpr const char* kFields[] = {"src", "dst", "pg", "dport", "size", "start_s"};
constexpr const char* kFormat = " (line format: src dst pg dport size start_s)";
}  // namespace

std::vector<Flow> parse_flow_file(std::string_view text, const std::string& name, const std::string& key_path,
                                  uint32_t num_hosts, const std::string& tag, uint8_t dscp,
                                  const std::vector<uint32_t>* host_of_id) {
  using detail::where;
  const std::vector<detail::Line> lines = detail::split_lines(text);
  if (lines.empty())
    throw core::ConfigError(where(name, 1, 1), key_path, "empty file: expected the number of flows on the first line");
  const detail::Line& head = lines[0];
  if (head.fields.size() > 1)
    throw core::ConfigError(where(name, head.number, head.fields[1].col), key_path,
                            "extra field '" + std::string(head.fields[1].text) +
                                "' (the first line is the number of flows)");
  uint64_t count = 0;
  if (std::string e = detail::parse_u64(head.fields[0].text, count); !e.empty())
    throw core::ConfigError(where(name, head.number, head.fields[0].col), key_path, "flow count: " + e);

  std::vector<Flow> flows;
  flows.reserve(std::min<uint64_t>(count, lines.size() - 1));
  for (size_t li = 1; li < lines.size(); ++li) {
    const detail::Line& l = lines[li];
    auto fail = [&](size_t field, const std::string& why) {
      throw core::ConfigError(where(name, l.number, l.fields[field].col), key_path,
                              std::string(kFields[field]) + ": " + why);
    };
    if (flows.size() == count)
      throw core::ConfigError(where(name, l.number, l.fields[0].col), key_path,
                              "more flow lines than the " + std::to_string(count) + " declared on line " +
                                  std::to_string(head.number));
    if (l.fields.size() < 6)
      throw core::ConfigError(where(name, l.number, l.end_col), key_path,
                              std::string("missing field '") + kFields[l.fields.size()] + "'" + kFormat);
    if (l.fields.size() > 6)
      throw core::ConfigError(where(name, l.number, l.fields[6].col), key_path,
                              "extra field '" + std::string(l.fields[6].text) + "'" + kFormat);
    uint64_t v[5];
    for (size_t i = 0; i < 5; ++i)
      if (std::string e = detail::parse_u64(l.fields[i].text, v[i]); !e.empty()) fail(i, e);
    uint32_t host[2];
    for (size_t i = 0; i < 2; ++i) {
      if (host_of_id) {
        if (v[i] >= host_of_id->size())
          fail(i, "node " + std::to_string(v[i]) + " out of range (the topology has " +
                      std::to_string(host_of_id->size()) + " nodes)");
        host[i] = (*host_of_id)[v[i]];
        if (host[i] == kNotHost) fail(i, "node " + std::to_string(v[i]) + " is a switch, not a host");
      } else {
        if (v[i] >= num_hosts)
          fail(i, "host " + std::to_string(v[i]) + " out of range (" + std::to_string(num_hosts) + " hosts)");
        host[i] = static_cast<uint32_t>(v[i]);
      }
    }
    if (v[1] == v[0]) fail(1, "same host as src (" + std::to_string(v[0]) + ")");
    if (v[2] > 7) fail(2, "priority must be 0..7, got " + std::to_string(v[2]));
    if (v[3] > 65535) fail(3, "port must be 0..65535, got " + std::to_string(v[3]));
    if (v[4] == 0) fail(4, "must be at least 1 byte");
    uint64_t start_ps = 0;
    if (std::string e = detail::parse_seconds_ps(l.fields[5].text, start_ps); !e.empty()) fail(5, e);
    Flow f;
    f.src = host[0];
    f.dst = host[1];
    f.pcp = static_cast<uint8_t>(v[2]);
    f.dport = static_cast<uint16_t>(v[3]);
    f.dscp = dscp;
    f.size_bytes = v[4];
    f.start_ps = start_ps;
    f.tag = tag;
    flows.push_back(std::move(f));
  }
  if (flows.size() != count)
    throw core::ConfigError(where(name, head.number, head.fields[0].col), key_path,
                            "declares " + std::to_string(count) + " flows but the file has " +
                                std::to_string(flows.size()));
  return flows;
}

std::vector<Flow> read_flow_file(const std::string& path, const std::string& key_path, uint32_t num_hosts,
                                 const std::string& tag, uint8_t dscp, const std::vector<uint32_t>* host_of_id) {
  return parse_flow_file(detail::read_whole_file(path, key_path), path, key_path, num_hosts, tag, dscp, host_of_id);
}

std::string format_seconds(uint64_t ps) {
  constexpr uint64_t kPsPerS = 1000000000000ull;
  std::string frac = std::to_string(ps % kPsPerS);
  frac.insert(0, 12 - frac.size(), '0');
  while (frac.size() > 9 && frac.back() == '0') frac.pop_back();  // HPCC writes %.9f; keep ps when needed
  return std::to_string(ps / kPsPerS) + "." + frac;
}

void write_flows(std::ostream& os, const std::vector<Flow>& flows, const std::vector<uint32_t>* id_of_host) {
  os << flows.size() << "\n";
  for (const Flow& f : flows) {
    const uint32_t src = id_of_host ? id_of_host->at(f.src) : f.src, dst = id_of_host ? id_of_host->at(f.dst) : f.dst;
    os << src << " " << dst << " " << int(f.pcp) << " " << f.dport << " " << f.size_bytes << " "
       << format_seconds(f.start_ps) << "\n";
  }
}

void write_flow_file(const std::string& path, const std::vector<Flow>& flows) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) throw std::runtime_error("cannot write flow file " + path);
  write_flows(os, flows);
  os.close();
  if (!os) throw std::runtime_error("error writing flow file " + path);
}

}  // namespace rocesim::traffic

// The flow-record collector: JSON lines in, flows joined, paths rebuilt, CSV out.
// Semantics in collector.h.
#include "collector/collector.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace rocesim::collector {

namespace an = rocesim::analytics;
namespace topo_ns = rocesim::topology;

namespace {

// yaml-cpp reads JSON (a YAML 1.2 flow mapping); these helpers name the key
// that is missing or has the wrong type.
YAML::Node need(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  if (!v) throw std::runtime_error(std::string("missing key \"") + key + "\"");
  return v;
}

template <class T>
T get(const YAML::Node& n, const char* key) {
  const YAML::Node v = need(n, key);
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    throw std::runtime_error(std::string("key \"") + key + "\": not a valid value");
  }
}

uint64_t get_opt(const YAML::Node& n, const char* key, bool& valid) {
  const YAML::Node v = need(n, key);
  valid = !v.IsNull();
  return valid ? get<uint64_t>(n, key) : 0;
}

uint32_t parse_ip(const std::string& s, const char* key) {
  uint32_t ip = 0;
  size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = pos;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    if (end == pos || end - pos > 3 || std::stoul(s.substr(pos, end - pos)) > 255 ||
        (i < 3 ? end >= s.size() || s[end] != '.' : end != s.size()))
      throw std::runtime_error(std::string("key \"") + key + "\": not a dotted IPv4 address");
    ip = ip << 8 | uint32_t(std::stoul(s.substr(pos, end - pos)));
    pos = end + 1;
  }
  return ip;
}

an::ExportReason parse_reason(const std::string& s) {
  for (an::ExportReason r : {an::ExportReason::idle, an::ExportReason::active, an::ExportReason::end_detected,
                             an::ExportReason::forced})
    if (s == an::export_reason_name(r)) return r;
  throw std::runtime_error("key \"reason\": unknown reason \"" + s + "\"");
}

void parse_dir(const YAML::Node& d, an::DirRecord& o) {
  o.packets = get<uint64_t>(d, "packets");
  o.octets = get<uint64_t>(d, "octets");
  o.data_packets = get<uint64_t>(d, "data_packets");
  o.payload_bytes = get<uint64_t>(d, "payload_bytes");
  o.retx_packets = get<uint64_t>(d, "retx_packets");
  o.naks = get<uint32_t>(d, "naks");
  o.other_naks = get<uint32_t>(d, "other_naks");
  const YAML::Node loss = need(d, "loss_ns");
  if (!loss.IsSequence() || loss.size() > an::kMaxLossTimes)
    throw std::runtime_error("key \"loss_ns\": a list of at most 4 times");
  o.loss_count = uint32_t(loss.size());
  for (size_t k = 0; k < loss.size(); ++k) o.loss_ns[k] = loss[k].as<uint64_t>();
  o.rtt_avg_ns = get_opt(d, "rtt_avg_ns", o.rtt_valid);
  o.rtt_samples = get<uint32_t>(d, "rtt_samples");
  o.large = get<bool>(d, "large");
  o.throughput_bps = get_opt(d, "throughput_bps", o.throughput_valid);
  bool max_valid = false;
  o.throughput_max_bps = get_opt(d, "throughput_max_bps", max_valid);
  bool port_valid = false;
  const uint64_t port = get_opt(d, "ingress_port", port_valid);
  o.ingress_port = port_valid ? uint32_t(port) : an::kNoPort;
  o.port_changes = get<uint32_t>(d, "port_changes");
}

struct PerSwitch {
  uint32_t domain = 0;
  uint64_t packets[2] = {}, naks[2] = {}, rtt_samples[2] = {}, tp_max[2] = {};
  uint64_t rtt_weighted[2] = {};  // sum of avg * samples (ns)
  uint32_t port[2] = {an::kNoPort, an::kNoPort};
};

std::string node_name(const topo_ns::Topology* t, uint32_t node) {
  if (t && node < t->nodes.size()) return t->nodes[node].name;
  return "domain" + std::to_string(node);
}

// The node the frame came from into switch `domain` on `port`, or kNoNode.
uint32_t upstream(const topo_ns::Topology& t, uint32_t domain, uint32_t port) {
  if (domain >= t.nodes.size() || t.nodes[domain].kind != topo_ns::Node::sw || port >= t.nodes[domain].ports)
    return topo_ns::kNoNode;
  return t.peer(topo_ns::PortRef{domain, port}).node;
}

bool linked(const topo_ns::Topology& t, uint32_t sw, uint32_t node) {
  for (uint32_t p = 0; p < t.nodes[sw].ports; ++p)
    if (t.peer(topo_ns::PortRef{sw, p}).node == node) return true;
  return false;
}

// Totals and the path of direction d; `order` gets the indices into sw of
// the switches on the path, in path order.
void build_dir(const std::vector<PerSwitch>& sw, int d, uint32_t sender_ip, uint32_t receiver_ip,
               const topo_ns::Topology* t, DirReport& o, std::vector<uint32_t>& order) {
  for (const PerSwitch& s : sw) {
    o.packets = std::max(o.packets, s.packets[d]);
    o.naks = std::max(o.naks, s.naks[d]);
    o.throughput_max_bps = std::max(o.throughput_max_bps, s.tp_max[d]);
  }
  if (!t) return;
  const uint32_t sh = t->host_by_ip(sender_ip), rh = t->host_by_ip(receiver_ip);
  if (sh == topo_ns::kNoNode) return;
  // Follow "whose ingress faces the previous node" from the sender host.
  uint32_t cur = t->hosts[sh];
  o.path.push_back(cur);
  std::vector<bool> used(sw.size(), false);
  for (;;) {
    size_t next = sw.size();
    for (size_t i = 0; i < sw.size(); ++i)
      if (!used[i] && sw[i].port[d] != an::kNoPort && upstream(*t, sw[i].domain, sw[i].port[d]) == cur) {
        next = i;
        break;
      }
    if (next == sw.size()) break;
    used[next] = true;
    order.push_back(uint32_t(next));
    cur = sw[next].domain;
    o.path.push_back(cur);
  }
  bool all = true;
  for (size_t i = 0; i < sw.size(); ++i) all = all && (used[i] || sw[i].port[d] == an::kNoPort);
  if (rh != topo_ns::kNoNode && !order.empty() && linked(*t, cur, t->hosts[rh])) {
    o.path.push_back(t->hosts[rh]);
    o.path_complete = all;
  }
}

// Where the NAKs for d's data were seen (they travel d's reverse path, whose
// switch order is `back`), and d's RTT at the first switch of d's path.
void finish_dir(const std::vector<PerSwitch>& sw, int d, const std::vector<uint32_t>& order,
                const std::vector<uint32_t>& back, DirReport& o) {
  std::vector<bool> listed(sw.size(), false);
  for (uint32_t i : back)
    if (sw[i].naks[d]) o.nak_switches.emplace_back(sw[i].domain, sw[i].naks[d]), listed[i] = true;
  for (size_t i = 0; i < sw.size(); ++i)
    if (!listed[i] && sw[i].naks[d]) o.nak_switches.emplace_back(sw[i].domain, sw[i].naks[d]);
  size_t pick = sw.size();
  if (!order.empty() && sw[order[0]].rtt_samples[d]) pick = order[0];
  if (pick == sw.size())
    for (size_t i = 0; i < sw.size(); ++i)
      if (sw[i].rtt_samples[d] && (pick == sw.size() || sw[i].rtt_samples[d] > sw[pick].rtt_samples[d])) pick = i;
  if (pick != sw.size()) {
    o.rtt_valid = true;
    o.rtt_avg_ns = sw[pick].rtt_weighted[d] / sw[pick].rtt_samples[d];
    o.rtt_switch = sw[pick].domain;
  }
}

}  // namespace

std::string read_records(std::istream& in, const std::string& name, std::vector<an::FlowRecord>& out) {
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const YAML::Node j = YAML::Load(line);
      if (!j.IsMap()) throw std::runtime_error("not a JSON object");
      an::FlowRecord r;
      r.domain_id = get<uint32_t>(j, "domain");
      r.server_ip = parse_ip(get<std::string>(j, "server_ip"), "server_ip");
      r.client_ip = parse_ip(get<std::string>(j, "client_ip"), "client_ip");
      r.client_qp = get<uint32_t>(j, "client_qp");
      r.server_qp = get<uint32_t>(j, "server_qp");
      r.start_ns = get<uint64_t>(j, "start_ns");
      r.end_ns = get<uint64_t>(j, "end_ns");
      r.export_ns = get<uint64_t>(j, "export_ns");
      r.reason = parse_reason(get<std::string>(j, "reason"));
      r.established = get<bool>(j, "established");
      parse_dir(need(j, "c2s"), r.dir[an::kC2s]);
      parse_dir(need(j, "s2c"), r.dir[an::kS2c]);
      out.push_back(r);
    } catch (const YAML::Exception& e) {
      return name + ":" + std::to_string(n) + ": not JSON: " + e.msg;
    } catch (const std::exception& e) {
      return name + ":" + std::to_string(n) + ": " + e.what();
    }
  }
  return "";
}

std::vector<FlowReport> join(const std::vector<an::FlowRecord>& records, const topo_ns::Topology* t) {
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;
  std::map<Key, size_t> index;
  std::vector<FlowReport> flows;
  std::vector<std::vector<PerSwitch>> per;  // per flow, per switch
  for (const an::FlowRecord& r : records) {
    const Key k{r.server_ip, r.client_ip, r.client_qp, r.server_qp};
    auto [it, fresh] = index.emplace(k, flows.size());
    if (fresh) {
      FlowReport f;
      f.server_ip = r.server_ip, f.client_ip = r.client_ip, f.client_qp = r.client_qp, f.server_qp = r.server_qp;
      flows.push_back(f);
      per.emplace_back();
    }
    FlowReport& f = flows[it->second];
    ++f.records;
    f.established = f.established || r.established;
    std::vector<PerSwitch>& sw = per[it->second];
    auto s = std::find_if(sw.begin(), sw.end(), [&](const PerSwitch& x) { return x.domain == r.domain_id; });
    if (s == sw.end()) {
      sw.emplace_back();
      sw.back().domain = r.domain_id;
      s = sw.end() - 1;
    }
    for (int d = 0; d < 2; ++d) {
      const an::DirRecord& x = r.dir[d];
      s->packets[d] += x.packets;
      s->naks[d] += x.naks;
      if (x.rtt_valid) s->rtt_weighted[d] += x.rtt_avg_ns * x.rtt_samples, s->rtt_samples[d] += x.rtt_samples;
      if (x.throughput_valid) s->tp_max[d] = std::max(s->tp_max[d], x.throughput_max_bps);
      if (x.ingress_port != an::kNoPort) s->port[d] = x.ingress_port;
    }
  }
  for (size_t i = 0; i < flows.size(); ++i) {
    std::vector<PerSwitch>& sw = per[i];
    std::sort(sw.begin(), sw.end(), [](const PerSwitch& a, const PerSwitch& b) { return a.domain < b.domain; });
    flows[i].switches = uint32_t(sw.size());
    std::vector<uint32_t> order[2];
    build_dir(sw, an::kC2s, flows[i].client_ip, flows[i].server_ip, t, flows[i].dir[an::kC2s], order[an::kC2s]);
    build_dir(sw, an::kS2c, flows[i].server_ip, flows[i].client_ip, t, flows[i].dir[an::kS2c], order[an::kS2c]);
    for (int d = 0; d < 2; ++d) finish_dir(sw, d, order[d], order[d ^ 1], flows[i].dir[d]);
  }
  return flows;
}

void write_csv(std::ostream& out, const std::vector<FlowReport>& flows, const topo_ns::Topology* t) {
  out << "server_ip,client_ip,client_qp,server_qp,switches,records,established";
  for (const char* d : {"c2s", "s2c"})
    for (const char* c : {"packets", "naks", "nak_switches", "rtt_avg_ns", "rtt_switch", "throughput_max_bps", "path"})
      out << ',' << d << '_' << c;
  out << '\n';
  for (const FlowReport& f : flows) {
    out << topo_ns::ip_to_string(f.server_ip) << ',' << topo_ns::ip_to_string(f.client_ip) << ',' << f.client_qp
        << ',' << f.server_qp << ',' << f.switches << ',' << f.records << ',' << (f.established ? 1 : 0);
    for (const DirReport& d : f.dir) {
      out << ',' << d.packets << ',' << d.naks << ',';
      for (size_t i = 0; i < d.nak_switches.size(); ++i)
        out << (i ? ";" : "") << node_name(t, d.nak_switches[i].first) << ':' << d.nak_switches[i].second;
      out << ',';
      if (d.rtt_valid) out << d.rtt_avg_ns;
      out << ',' << (d.rtt_valid ? node_name(t, d.rtt_switch) : "") << ',' << d.throughput_max_bps << ',';
      for (size_t i = 0; i < d.path.size(); ++i) out << (i ? ">" : "") << node_name(t, d.path[i]);
      if (!d.path_complete && !d.path.empty()) out << ">?";
    }
    out << '\n';
  }
}

}  // namespace rocesim::collector

#include "sim/paths.h"

#include <algorithm>
#include <sstream>

#include "core/time.h"
#include "sim/fabric.h"
#include "sim/outputs.h"

namespace rocesim::sim {

namespace pk = rocesim::packet;

PathRecorder::PathRecorder(size_t flows, std::vector<std::string> switch_names)
    : m_dirs(flows * kDirs), m_names(std::move(switch_names)) {}

void PathRecorder::on_hop(uint32_t sw, pk::Packet& p, const sw::Hop& h) {
  if (p.flow_id >= m_dirs.size() / kDirs || p.path_dir >= kDirs) return;  // not a flow of the run
  Dir& d = m_dirs[p.flow_id * kDirs + p.path_dir];
  uint32_t& c = d.slot(h.index);
  const uint64_t now = core::now_ps();
  if (c != kNone) {
    Row& r = d.rows[c];
    if (r.sw == sw && r.in_port == h.in_port && r.out_port == h.out_port) {
      r.last_ps = now;
      ++r.packets;
      r.bytes += p.frame_len();
      return;
    }
  }
  Row r;
  r.sw = sw;
  r.in_port = h.in_port;
  r.out_port = h.out_port;
  r.group = h.group;
  r.member = h.member;
  r.hop = h.index;
  r.queue = h.queue;
  r.first_ps = r.last_ps = now;
  r.packets = 1;
  r.bytes = p.frame_len();
  c = static_cast<uint32_t>(d.rows.size());
  d.rows.push_back(r);
}

std::string PathRecorder::current_path(size_t f, pk::PathDir dir) const {
  const Dir& d = m_dirs.at(f * kDirs + static_cast<size_t>(dir));
  std::string s;
  for (size_t i = 0; i < d.hops(); ++i) {
    const uint32_t c = d.open(i);
    if (c == kNone) continue;
    const Row& r = d.rows[c];
    if (!s.empty()) s += ' ';
    s += m_names[r.sw] + ":" + std::to_string(r.in_port) + ">" + std::to_string(r.out_port);
  }
  return s;
}

uint64_t PathRecorder::changes(size_t f, pk::PathDir dir) const {
  const Dir& d = m_dirs.at(f * kDirs + static_cast<size_t>(dir));
  size_t hops = 0;
  for (size_t i = 0; i < d.hops(); ++i) hops += d.open(i) != kNone;
  return d.rows.size() - hops;
}

std::string PathRecorder::csv() const {
  std::string o = "flow_id,dir,hop,switch,in_port,out_port,group,member,queue,first_ns,last_ns,packets,bytes\n";
  const size_t flows = m_dirs.size() / kDirs;
  o.reserve(64 + flows * 4 * 3 * 72);
  std::vector<Row> v;
  for (size_t f = 0; f < flows; ++f)
    for (size_t d = 1; d < kDirs; ++d) {
      const Dir& dir = m_dirs[f * kDirs + d];
      if (dir.rows.empty()) continue;
      v = dir.rows;  // opening order is time order; a stable sort by hop keeps it within a hop
      std::stable_sort(v.begin(), v.end(), [](const Row& a, const Row& b) { return a.hop < b.hop; });
      const char* name = pk::path_dir_name(static_cast<pk::PathDir>(d));
      for (const Row& r : v) {
        append_uint(o, f);
        o += ',';
        o += name;
        o += ',';
        append_uint(o, r.hop);
        o += ',';
        o += m_names[r.sw];
        for (uint64_t x : {uint64_t{r.in_port}, uint64_t{r.out_port}, uint64_t{r.group}, uint64_t{r.member},
                           uint64_t{r.queue}}) {
          o += ',';
          append_uint(o, x);
        }
        o += ',';
        append_ns(o, r.first_ps);
        o += ',';
        append_ns(o, r.last_ps);
        o += ',';
        append_uint(o, r.packets);
        o += ',';
        append_uint(o, r.bytes);
        o += '\n';
      }
    }
  return o;
}

}  // namespace rocesim::sim

namespace rocesim::sim {

std::string ecmp_members_csv(const Fabric& f) {
  std::ostringstream o;
  o << "switch,role,group,member,port,up,packets,bytes\n";
  const topology::Topology& T = f.scenario().topo;
  for (size_t i = 0; i < f.switches().size(); ++i) {
    const sw::Switch& S = *f.switches()[i];
    const std::string& role = T.nodes[T.switches[i]].role;
    const auto& groups = S.config().groups;
    for (uint32_t g = 0; g < groups.size(); ++g)
      for (uint32_t m = 0; m < groups[g].size(); ++m) {
        const sw::MemberCount& c = S.member_count(g, m);
        o << S.basename() << ',' << role << ',' << g << ',' << m << ',' << groups[g][m] << ','
          << (S.ecmp().member_up(g, m) ? 1 : 0) << ',' << c.packets << ',' << c.bytes << '\n';
      }
  }
  return o.str();
}

std::string ecmp_summary_json(const Fabric& f) {
  struct Tier {
    std::string role;
    size_t switches = 0, groups = 0;
    std::vector<std::pair<uint64_t, std::string>> ports;  // bytes, "switch:port"
  };
  std::vector<Tier> tiers;
  const topology::Topology& T = f.scenario().topo;
  for (size_t i = 0; i < f.switches().size(); ++i) {
    const sw::Switch& S = *f.switches()[i];
    const auto& groups = S.config().groups;
    std::vector<uint64_t> bytes(S.num_ports(), 0);
    std::vector<uint8_t> member(S.num_ports(), 0);
    size_t multi = 0;
    for (uint32_t g = 0; g < groups.size(); ++g) {
      if (groups[g].size() < 2) continue;
      ++multi;
      for (uint32_t m = 0; m < groups[g].size(); ++m) {
        bytes[groups[g][m]] += S.member_count(g, m).bytes;
        member[groups[g][m]] = 1;
      }
    }
    if (!multi) continue;
    const std::string& role = T.nodes[T.switches[i]].role;
    auto t = std::find_if(tiers.begin(), tiers.end(), [&](const Tier& x) { return x.role == role; });
    if (t == tiers.end()) t = tiers.insert(tiers.end(), Tier{role, 0, 0, {}});
    ++t->switches;
    t->groups += multi;
    for (uint32_t p = 0; p < S.num_ports(); ++p)
      if (member[p]) t->ports.emplace_back(bytes[p], std::string(S.basename()) + ":" + std::to_string(p));
  }
  if (tiers.empty()) return "";
  std::ostringstream o;
  o << "  \"ecmp\": {\"tiers\": [";
  for (size_t k = 0; k < tiers.size(); ++k) {
    const Tier& t = tiers[k];
    uint64_t sum = 0;
    size_t busiest = 0;
    for (size_t j = 0; j < t.ports.size(); ++j) {
      sum += t.ports[j].first;
      if (t.ports[j].first > t.ports[busiest].first) busiest = j;
    }
    const double mean = static_cast<double>(sum) / static_cast<double>(t.ports.size());
    const double maxb = static_cast<double>(t.ports[busiest].first);
    o << (k ? ",\n" : "\n") << "    {\"role\": " << json_quote(t.role) << ", \"switches\": " << t.switches
      << ", \"groups\": " << t.groups << ", \"member_ports\": " << t.ports.size()
      << ", \"member_bytes_mean\": " << json_num(mean) << ", \"member_bytes_max\": " << t.ports[busiest].first
      << ", \"busiest\": " << json_quote(t.ports[busiest].second)
      << ", \"imbalance_max_over_mean\": " << json_num(mean > 0 ? maxb / mean : 0.0) << "}";
  }
  o << "\n  ]},\n";
  return o.str();
}

}  // namespace rocesim::sim

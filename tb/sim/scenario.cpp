#include "sim/scenario.h"

#include <cmath>
#include <sstream>

#include "core/units.h"

namespace rocesim::sim {

using core::CfgNode;

bool parse_host_name(const std::string& name, uint32_t& index) {
  if (name.size() < 2 || name[0] != 'h') return false;
  uint64_t v = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    if (i == 1 && name[i] == '0' && name.size() > 2) return false;  // no leading zeros
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
    if (v > 1000000) return false;
  }
  index = static_cast<uint32_t>(v);
  return true;
}

namespace {

constexpr uint64_t kGbps = 1000000000ull;

void read_links(const CfgNode& n, LinksSection& l) {
  l.link.rate_bps = n.rate("rate", l.link.rate_bps, 1000000ull, 1600 * kGbps);
  const double metres = n.real("cable_m", static_cast<double>(l.link.length_mm) / 1000.0, 0.0, 100000.0);
  l.link.length_mm = static_cast<uint64_t>(std::llround(metres * 1000.0));
  l.link.delay_per_m_ps = n.time("delay_per_m", l.link.delay_per_m_ps, 0, 1000000);
  l.link.loss = n.real("loss", l.link.loss, 0.0, 1.0);
  l.check_fcs = n.boolean("check_fcs", l.check_fcs);
  l.check_icrc = n.boolean("check_icrc", l.check_icrc);
  n.finish();
}

void read_hosts(const CfgNode& n, HostsSection& h) {
  h.mtu = static_cast<uint32_t>(n.integer("mtu", h.mtu, 256, 4096));
  if (h.mtu != 256 && h.mtu != 512 && h.mtu != 1024 && h.mtu != 2048 && h.mtu != 4096)
    n.fail_key("mtu", "must be an IBTA path MTU: 256, 512, 1024, 2048 or 4096");
  h.vlan = n.boolean("vlan", h.vlan);
  h.pcp = static_cast<uint32_t>(n.integer("pcp", h.pcp, 0, 7));
  h.dscp = static_cast<uint32_t>(n.integer("dscp", h.dscp, 0, 63));
  const std::string ecn = n.choice("ecn", h.ecn == 2 ? "ect0" : h.ecn == 1 ? "ect1" : "not_ect",
                                   {"ect0", "ect1", "not_ect"});
  h.ecn = ecn == "ect0" ? 2 : ecn == "ect1" ? 1 : 0;
  n.finish();
}

uint32_t host_ref(const CfgNode& f, const std::string& key, const std::string& value, uint32_t hosts) {
  uint32_t idx = 0;
  if (!parse_host_name(value, idx)) f.fail_key(key, "expected a host name h<i>, got '" + value + "'");
  if (idx >= hosts)
    f.fail_key(key, "no host '" + value + "': the topology has h0..h" + std::to_string(hosts - 1));
  return idx;
}

}  // namespace

Scenario read_scenario(const core::Config& cfg) {
  Scenario s;
  s.file = cfg.file();
  const CfgNode root = cfg.root();
  s.name = root.str("name", "unnamed");
  s.seed = static_cast<uint64_t>(root.integer("seed", 1, 0, INT64_MAX));

  const CfgNode sim = root.map("sim");
  s.sim.duration_ps = sim.time("duration", s.sim.duration_ps, 1, 3600ull * 1000000000000ull);
  s.sim.stop_when_done = sim.boolean("stop_when_done", s.sim.stop_when_done);
  sim.finish();

  const CfgNode topo = root.map("topology");
  s.topology.kind = topo.choice("kind", s.topology.kind, {"direct"});
  s.topology.hosts = static_cast<uint32_t>(topo.integer("hosts", 2, 2, 2));
  topo.finish();

  read_links(root.map("links"), s.links);
  read_hosts(root.map("hosts"), s.hosts);

  for (const CfgNode& f : root.seq("flows")) {
    FlowSpec fl;
    fl.src = f.str("src");
    fl.dst = f.str("dst");
    fl.src_index = host_ref(f, "src", fl.src, s.topology.hosts);
    fl.dst_index = host_ref(f, "dst", fl.dst, s.topology.hosts);
    if (fl.src_index == fl.dst_index) f.fail_key("dst", "a flow's src and dst must differ");
    fl.message_bytes = f.size("size");
    if (fl.message_bytes == 0 || fl.message_bytes > (1ull << 40)) f.fail_key("size", "must be between 1B and 1TiB");
    fl.messages = static_cast<uint32_t>(f.integer("messages", 1, 1, 100000000));
    fl.rate_bps = f.rate("rate", s.links.link.rate_bps, 1000ull, s.links.link.rate_bps);
    fl.start_ps = f.time("start", 0);
    f.finish();
    s.flows.push_back(fl);
  }
  root.finish();
  return s;
}

std::string emit_resolved(const Scenario& s) {
  using core::format_rate;
  using core::format_size;
  using core::format_time;
  std::ostringstream o;
  o << "# Effective configuration of this run (defaults and --set overrides applied).\n";
  o << "# Generated from " << s.file << "; rocesim run accepts it as it is.\n";
  o << "name: " << s.name << "\n";
  o << "seed: " << s.seed << "\n";
  o << "sim:\n";
  o << "  duration: " << format_time(s.sim.duration_ps) << "\n";
  o << "  stop_when_done: " << (s.sim.stop_when_done ? "true" : "false") << "\n";
  o << "topology:\n";
  o << "  kind: " << s.topology.kind << "\n";
  o << "  hosts: " << s.topology.hosts << "\n";
  o << "links:\n";
  o << "  rate: " << format_rate(s.links.link.rate_bps) << "\n";
  std::ostringstream m;
  m << static_cast<double>(s.links.link.length_mm) / 1000.0;
  o << "  cable_m: " << m.str() << "\n";
  o << "  delay_per_m: " << format_time(s.links.link.delay_per_m_ps) << "\n";
  std::ostringstream loss;
  loss.precision(17);
  loss << s.links.link.loss;
  o << "  loss: " << loss.str() << "\n";
  o << "  check_fcs: " << (s.links.check_fcs ? "true" : "false") << "\n";
  o << "  check_icrc: " << (s.links.check_icrc ? "true" : "false") << "\n";
  o << "hosts:\n";
  o << "  mtu: " << s.hosts.mtu << "\n";
  o << "  vlan: " << (s.hosts.vlan ? "true" : "false") << "\n";
  o << "  pcp: " << s.hosts.pcp << "\n";
  o << "  dscp: " << s.hosts.dscp << "\n";
  o << "  ecn: " << (s.hosts.ecn == 2 ? "ect0" : s.hosts.ecn == 1 ? "ect1" : "not_ect") << "\n";
  if (s.flows.empty()) {
    o << "flows: []\n";
  } else {
    o << "flows:\n";
    for (const FlowSpec& f : s.flows) {
      o << "  - src: " << f.src << "\n";
      o << "    dst: " << f.dst << "\n";
      o << "    size: " << format_size(f.message_bytes) << "\n";
      o << "    messages: " << f.messages << "\n";
      o << "    rate: " << format_rate(f.rate_bps) << "\n";
      o << "    start: " << format_time(f.start_ps) << "\n";
    }
  }
  return o.str();
}

}  // namespace rocesim::sim

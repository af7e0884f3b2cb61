#include "sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/rng.h"
#include "core/units.h"

namespace rocesim::sim {

using core::CfgNode;


uint32_t Scenario::num_hosts() const {
  return topology.kind == "direct" ? 2 : static_cast<uint32_t>(topo.hosts.size());
}

uint64_t Scenario::host_rate(uint32_t h) const {
  if (topology.kind == "direct") return links.link.rate_bps;
  return topo.link_at({topo.hosts[h], 0}).rate_bps;
}

std::vector<PortPhys> Scenario::switch_ports(uint32_t n) const {
  std::vector<PortPhys> v(topo.nodes[n].ports);
  for (uint32_t p = 0; p < v.size(); ++p) {
    const topology::LinkSpec& l = topo.link_at({n, p});
    v[p].rate_bps = l.rate_bps;
    v[p].cable_ps = l.length_mm * links.link.delay_per_m_ps / 1000;
  }
  return v;
}

namespace {

constexpr uint64_t kGbps = 1000000000ull;
constexpr uint64_t kMaxRate = 1600 * kGbps;

uint64_t metres_to_mm(const CfgNode& n, const std::string& key, uint64_t def_mm) {
  const double m = n.real(key, static_cast<double>(def_mm) / 1000.0, 0.0, 100000.0);
  return static_cast<uint64_t>(std::llround(m * 1000.0));
}

std::string mm_text(uint64_t mm) {
  std::ostringstream o;
  o << static_cast<double>(mm) / 1000.0;
  return o.str();
}

// Parameters of the given kind from one mapping (a topology file's root or
// the scenario's `topology:`); absent keys keep the values already in t.
void read_topology_params(const CfgNode& n, TopologySection& t) {
  (void)n.str("kind", t.kind);  // consumed by the caller
  if (t.kind == "single_switch") {
    auto& p = t.single;
    p.hosts = static_cast<uint32_t>(n.integer("hosts", p.hosts, 1, topology::kMaxHosts));
    p.host_rate = n.rate("host_rate", p.host_rate, 1000000, kMaxRate);
    p.cable_mm = metres_to_mm(n, "cable_m", p.cable_mm);
  } else if (t.kind == "leaf_spine") {
    auto& p = t.leaf_spine;
    p.leaves = static_cast<uint32_t>(n.integer("leaves", p.leaves, 1, topology::kMaxLeaves));
    p.spines = static_cast<uint32_t>(n.integer("spines", p.spines, 1, 4096));
    p.hosts_per_leaf = static_cast<uint32_t>(n.integer("hosts_per_leaf", p.hosts_per_leaf, 1, topology::kMaxHosts));
    p.host_rate = n.rate("host_rate", p.host_rate, 1000000, kMaxRate);
    p.fabric_rate = n.rate("fabric_rate", p.fabric_rate, 1000000, kMaxRate);
    p.links_per_leaf_spine = static_cast<uint32_t>(n.integer("links_per_leaf_spine", p.links_per_leaf_spine, 1, 64));
    p.host_cable_mm = metres_to_mm(n, "host_cable_m", p.host_cable_mm);
    p.fabric_cable_mm = metres_to_mm(n, "fabric_cable_m", p.fabric_cable_mm);
  } else if (t.kind == "fat_tree") {
    auto& p = t.fat_tree;
    p.k = static_cast<uint32_t>(n.integer("k", p.k, 2, 62));
    if (p.k % 2) n.fail_key("k", "must be even");
    p.rate = n.rate("rate", p.rate, 1000000, kMaxRate);
    p.cable_mm = metres_to_mm(n, "cable_m", p.cable_mm);
  } else if (t.kind == "ring") {
    auto& p = t.ring;
    p.switches = static_cast<uint32_t>(n.integer("switches", p.switches, 3, 4096));
    p.hosts_per_switch = static_cast<uint32_t>(n.integer("hosts_per_switch", p.hosts_per_switch, 1, 1024));
    p.rate = n.rate("rate", p.rate, 1000000, kMaxRate);
    p.cable_mm = metres_to_mm(n, "cable_m", p.cable_mm);
    p.clockwise = n.boolean("clockwise", p.clockwise);
  } else {
    (void)n.integer("hosts", 2, 2, 2);  // direct: exactly h0 and h1
  }
  n.finish();
}

void read_topology(const CfgNode& n, const std::string& scenario_file, TopologySection& t) {
  const std::vector<std::string> kinds{"direct", "single_switch", "leaf_spine", "fat_tree", "ring"};
  std::unique_ptr<core::Config> file_cfg;
  if (n.has("file")) {
    t.file = n.str("file");
    const std::string path = resolve_relative(scenario_file, t.file);
    try {
      file_cfg = core::Config::load_file(path);
    } catch (const core::ConfigError& e) {
      if (e.key_path().empty() && e.where() == path) n.fail_key("file", e.reason());
      throw;
    }
    const CfgNode froot = file_cfg->root();
    t.kind = froot.choice("kind", "direct", kinds);
    if (n.has("kind")) t.kind = n.choice("kind", t.kind, kinds);
    read_topology_params(froot, t);
  } else {
    (void)n.has("file");
    t.kind = n.choice("kind", t.kind, kinds);
  }
  (void)n.str("file", t.file);
  read_topology_params(n, t);
}

void read_links(const CfgNode& n, LinksSection& l) {
  l.link.rate_bps = n.rate("rate", l.link.rate_bps, 1000000ull, kMaxRate);
  l.link.length_mm = metres_to_mm(n, "cable_m", l.link.length_mm);
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
  h.rc = n.choice("transport", h.rc ? "rc" : "open_loop", {"rc", "open_loop"}) == "rc";
  h.cm = n.boolean("cm", h.cm);
  h.ack_every = static_cast<uint32_t>(n.integer("ack_every", h.ack_every, 1, 1 << 20));
  h.max_outstanding = static_cast<uint32_t>(n.integer("max_outstanding", h.max_outstanding, 1, 1 << 23));
  h.rto_ps = n.time("rto", h.rto_ps, 1000000, 3600ull * 1000000000000ull);
  const bool explicit_cnp_gap = n.has("min_time_between_cnps");
  h.min_time_between_cnps_ps = n.time("min_time_between_cnps", h.min_time_between_cnps_ps, 0, 1000000000000ull);
  h.dcqcn = n.choice("cc", h.dcqcn ? "dcqcn" : "none", {"none", "dcqcn"}) == "dcqcn";
  const CfgNode d = n.map("dcqcn");
  h.dcqcn_preset = d.choice("preset", h.dcqcn_preset, {"paper", "nvidia"});
  cc::DcqcnConfig& c = h.dcqcn_cfg;
  c = h.dcqcn_preset == "paper" ? cc::DcqcnConfig::paper(100000000000ull) : cc::DcqcnConfig::nvidia(100000000000ull);
  c.g = d.real("g", c.g, 0.0, 1.0);
  c.initial_alpha = d.real("initial_alpha", c.initial_alpha, 0.0, 1.0);
  c.alpha_period_ps = d.time("alpha_timer", c.alpha_period_ps, 1);
  c.increase_timer_ps = d.time("rate_increase_timer", c.increase_timer_ps);
  c.byte_counter_bytes = d.size("byte_counter", c.byte_counter_bytes);
  c.fast_recovery_stages = static_cast<uint32_t>(d.integer("fast_recovery_stages", c.fast_recovery_stages, 0, 1000));
  c.ai_rate_bps = d.rate("ai_rate", c.ai_rate_bps);
  c.hai_rate_bps = d.rate("hai_rate", c.hai_rate_bps);
  c.min_rate_bps = d.rate("min_rate", c.min_rate_bps);
  c.min_dec_factor = d.real("min_dec_factor", c.min_dec_factor, 0.0, 1.0);
  c.rate_reduce_monitor_period_ps = d.time("rate_reduce_monitor_period", c.rate_reduce_monitor_period_ps);
  c.clamp_target = d.boolean("clamp_target", c.clamp_target);
  c.min_time_between_cnps_ps = d.time("min_time_between_cnps", c.min_time_between_cnps_ps);
  d.finish();
  {
    const std::vector<std::string> errs = c.validate();
    if (!errs.empty()) d.fail(errs.front());
  }
  // With DCQCN the NP's CNP spacing comes from the preset unless set here.
  if (h.dcqcn && !explicit_cnp_gap) h.min_time_between_cnps_ps = c.min_time_between_cnps_ps;
  h.cc_log = n.boolean("cc_log", h.cc_log);
  const CfgNode rb = n.map("rx_buffer");
  h.rx_buffer_bytes = rb.size("size", 0);
  h.rx_drain_bps = rb.rate("drain_rate", h.rx_buffer_bytes ? 0 : 0);
  if (h.rx_buffer_bytes && !h.rx_drain_bps) rb.fail_key("drain_rate", "missing required key (with a receive buffer)");
  h.rx_pfc = rb.boolean("pfc", h.rx_pfc);
  h.rx_xoff_bytes = rb.size("xoff", h.rx_buffer_bytes * 3 / 4);
  h.rx_xon_bytes = rb.size("xon", h.rx_buffer_bytes / 4);
  if (h.rx_buffer_bytes && (h.rx_xoff_bytes > h.rx_buffer_bytes || h.rx_xon_bytes >= h.rx_xoff_bytes))
    rb.fail("need xon < xoff <= size");
  rb.finish();
  n.finish();
}


void build_topology(const CfgNode& where, Scenario& s) {
  const TopologySection& t = s.topology;
  try {
    if (t.kind == "single_switch") {
      s.topo = topology::single_switch(t.single);
    } else if (t.kind == "leaf_spine") {
      s.topo = topology::leaf_spine(t.leaf_spine);
    } else if (t.kind == "fat_tree") {
      s.topo = topology::fat_tree(t.fat_tree);
    } else if (t.kind == "ring") {
      s.topo = topology::ring(t.ring);
    }
  } catch (const std::invalid_argument& e) {
    where.fail(e.what());
  }
}

void read_flows(const CfgNode& root, Scenario& s) {
  const uint32_t hosts = s.num_hosts();
  size_t i = 0;
  for (const CfgNode& f : root.seq("flows")) {
    FlowEntry e;
    e.pattern = f.choice("pattern", "", {"", "permutation"});
    FlowSpec& fl = e.flow;
    fl.message_bytes = f.size("size");
    if (fl.message_bytes == 0 || fl.message_bytes > (1ull << 40)) f.fail_key("size", "must be between 1B and 1TiB");
    fl.messages = static_cast<uint32_t>(f.integer("messages", 1, 1, 100000000));
    if (fl.messages > kMaxFlowBytes / fl.message_bytes)
      f.fail_key("messages", "size x messages = " + core::format_size(fl.message_bytes) + " x " +
                                 std::to_string(fl.messages) + " is more than a flow may carry: at most " +
                                 std::to_string(kMaxFlowBytes) + " B (2^50, 1 PiB) per flow");
    fl.start_ps = f.time("start", 0);
    fl.send = f.choice("op", "write", {"write", "send"}) == "send";
    fl.pcp = s.hosts.pcp;
    fl.dscp = s.hosts.dscp;
    if (e.pattern.empty()) {
      fl.src = f.str("src");
      fl.dst = f.str("dst");
      fl.src_index = host_ref(f, "src", fl.src, hosts);
      fl.dst_index = host_ref(f, "dst", fl.dst, hosts);
      if (fl.src_index == fl.dst_index) f.fail_key("dst", "a flow's src and dst must differ");
      const uint64_t line = s.host_rate(fl.src_index);
      e.explicit_rate = f.has("rate");
      fl.rate_bps = f.rate("rate", line, 1000ull, line);
      fl.pcp = static_cast<uint32_t>(f.integer("pcp", s.hosts.pcp, 0, 7));
      fl.dscp = static_cast<uint32_t>(f.integer("dscp", s.hosts.dscp, 0, 63));
      f.finish();
      s.flows.push_back(fl);
    } else {
      // Every host sends to a distinct other host: a random cyclic permutation
      // (Sattolo's algorithm), from this entry's own RNG stream.
      e.load = f.real("load", 1.0, 0.000001, 1.0);
      f.finish();
      if (hosts < 2) f.fail_key("pattern", "a permutation needs at least 2 hosts");
      std::vector<uint32_t> perm(hosts);
      for (uint32_t h = 0; h < hosts; ++h) perm[h] = h;
      core::Rng rng(s.seed, "flows[" + std::to_string(i) + "].permutation");
      for (uint32_t k = hosts - 1; k > 0; --k) std::swap(perm[k], perm[rng.below(k)]);
      for (uint32_t h = 0; h < hosts; ++h) {
        FlowSpec x = fl;
        x.src_index = h;
        x.dst_index = perm[h];
        x.src = "h" + std::to_string(h);
        x.dst = "h" + std::to_string(perm[h]);
        x.rate_bps = static_cast<uint64_t>(std::llround(static_cast<double>(s.host_rate(h)) * e.load));
        s.flows.push_back(x);
      }
    }
    s.flow_entries.push_back(e);
    ++i;
  }
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
  s.sim.deadlock_after_ps = sim.time("deadlock_after", s.sim.deadlock_after_ps, 1);
  s.sim.max_memory_bytes = sim.size("max_memory", s.sim.max_memory_bytes);
  s.sim.max_output_bytes = sim.size("max_output", s.sim.max_output_bytes);
  sim.finish();

  const CfgNode topo = root.map("topology");
  read_topology(topo, s.file, s.topology);
  read_links(root.map("links"), s.links);
  read_hosts(root.map("hosts"), s.hosts);
  const CfgNode swn = root.map("switch");
  s.sw = read_switch(swn);
  const CfgNode st = root.map("stats");
  s.stats.interval_ps = st.time("interval", s.stats.interval_ps, 0, 3600ull * 1000000000000ull);
  s.stats.flow_series = st.boolean("flow_series", s.stats.flow_series);
  st.finish();

  build_topology(topo, s);
  s.pfc = read_pfc(root.map("pfc"), s.num_hosts());
  {
    // A configured refresh applies to every switch port and, with PFC from a
    // receive buffer, to every NIC port.
    std::vector<uint64_t> rates;
    for (uint32_t n : s.topo.switches)
      for (const PortPhys& p : s.switch_ports(n)) rates.push_back(p.rate_bps);
    if (s.hosts.rx_buffer_bytes && s.hosts.rx_pfc)
      for (uint32_t h = 0; h < s.num_hosts(); ++h) rates.push_back(s.host_rate(h));
    check_pfc_refresh(root.map("pfc"), s.pfc, rates);
  }
  for (uint32_t n : s.topo.switches) check_switch_config(s.sw, s.pfc, s.switch_ports(n), s.max_frame_bytes(), swn);
  read_flows(root, s);
  // Generated traffic follows the explicit flows (its `after` indices shift by them).
  const uint32_t base = static_cast<uint32_t>(s.flows.size());
  for (traffic::Flow& g : read_traffic(root, s, s.traffic_entries)) {
    FlowSpec f;
    f.src_index = g.src;
    f.dst_index = g.dst;
    f.src = "h" + std::to_string(g.src);
    f.dst = "h" + std::to_string(g.dst);
    f.message_bytes = g.size_bytes;
    f.messages = 1;
    f.rate_bps = s.host_rate(g.src);
    f.start_ps = g.start_ps;
    f.pcp = g.pcp;
    f.dscp = g.dscp;
    f.tag = g.tag;
    for (uint32_t a : g.after) f.after.push_back(a + base);
    s.flows.push_back(std::move(f));
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
  o << "  deadlock_after: " << format_time(s.sim.deadlock_after_ps) << "\n";
  o << "  max_memory: " << format_size(s.sim.max_memory_bytes) << "\n";
  o << "  max_output: " << format_size(s.sim.max_output_bytes) << "\n";
  o << "topology:\n";
  if (!s.topology.file.empty()) o << "  # parameters read from " << s.topology.file << "\n";
  o << "  kind: " << s.topology.kind << "\n";
  const TopologySection& t = s.topology;
  if (t.kind == "single_switch") {
    o << "  hosts: " << t.single.hosts << "\n  host_rate: " << format_rate(t.single.host_rate)
      << "\n  cable_m: " << mm_text(t.single.cable_mm) << "\n";
  } else if (t.kind == "leaf_spine") {
    const auto& p = t.leaf_spine;
    o << "  leaves: " << p.leaves << "\n  spines: " << p.spines << "\n  hosts_per_leaf: " << p.hosts_per_leaf
      << "\n  host_rate: " << format_rate(p.host_rate) << "\n  fabric_rate: " << format_rate(p.fabric_rate)
      << "\n  links_per_leaf_spine: " << p.links_per_leaf_spine << "\n  host_cable_m: " << mm_text(p.host_cable_mm)
      << "\n  fabric_cable_m: " << mm_text(p.fabric_cable_mm) << "\n";
  } else if (t.kind == "fat_tree") {
    o << "  k: " << t.fat_tree.k << "\n  rate: " << format_rate(t.fat_tree.rate)
      << "\n  cable_m: " << mm_text(t.fat_tree.cable_mm) << "\n";
  } else if (t.kind == "ring") {
    o << "  switches: " << t.ring.switches << "\n  hosts_per_switch: " << t.ring.hosts_per_switch
      << "\n  rate: " << format_rate(t.ring.rate) << "\n  cable_m: " << mm_text(t.ring.cable_mm)
      << "\n  clockwise: " << (t.ring.clockwise ? "true" : "false") << "\n";
  } else {
    o << "  hosts: 2\n";
  }
  o << "links:\n";
  o << "  rate: " << format_rate(s.links.link.rate_bps) << "\n";
  o << "  cable_m: " << mm_text(s.links.link.length_mm) << "\n";
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
  o << "  transport: " << (s.hosts.rc ? "rc" : "open_loop") << "\n";
  o << "  cm: " << (s.hosts.cm ? "true" : "false") << "\n";
  o << "  ack_every: " << s.hosts.ack_every << "\n";
  o << "  max_outstanding: " << s.hosts.max_outstanding << "\n";
  o << "  rto: " << format_time(s.hosts.rto_ps) << "\n";
  o << "  min_time_between_cnps: " << format_time(s.hosts.min_time_between_cnps_ps) << "\n";
  o << "  cc: " << (s.hosts.dcqcn ? "dcqcn" : "none") << "\n";
  if (s.hosts.rx_buffer_bytes)
    o << "  rx_buffer: {size: " << format_size(s.hosts.rx_buffer_bytes) << ", drain_rate: " << format_rate(s.hosts.rx_drain_bps)
      << ", pfc: " << (s.hosts.rx_pfc ? "true" : "false") << ", xoff: " << format_size(s.hosts.rx_xoff_bytes)
      << ", xon: " << format_size(s.hosts.rx_xon_bytes) << "}\n";
  o << "  cc_log: " << (s.hosts.cc_log ? "true" : "false") << "\n";
  {
    const cc::DcqcnConfig& c = s.hosts.dcqcn_cfg;
    std::ostringstream d;
    d.precision(17);
    d << "  dcqcn: {preset: " << s.hosts.dcqcn_preset << ", g: " << c.g << ", initial_alpha: " << c.initial_alpha
      << ", alpha_timer: " << format_time(c.alpha_period_ps) << ", rate_increase_timer: " << format_time(c.increase_timer_ps)
      << ", byte_counter: " << format_size(c.byte_counter_bytes) << ", fast_recovery_stages: " << c.fast_recovery_stages
      << ", ai_rate: " << format_rate(c.ai_rate_bps) << ", hai_rate: " << format_rate(c.hai_rate_bps)
      << ", min_rate: " << format_rate(c.min_rate_bps) << ", min_dec_factor: " << c.min_dec_factor
      << ", rate_reduce_monitor_period: " << format_time(c.rate_reduce_monitor_period_ps)
      << ", clamp_target: " << (c.clamp_target ? "true" : "false")
      << ", min_time_between_cnps: " << format_time(c.min_time_between_cnps_ps) << "}\n";
    o << d.str();
  }
  o << "switch:\n" << emit_switch(s.sw);
  o << "pfc:\n" << emit_pfc(s.pfc);
  if (s.pfc.headroom == PfcSpec::Headroom::automatic && !s.topo.switches.empty()) {
    // The computed headroom per distinct port (SONiC formula), for the record.
    std::vector<std::string> seen;
    for (uint32_t n : s.topo.switches) {
      const sw::SwitchConfig c = make_switch_config(s.sw, s.pfc, s.switch_ports(n), s.max_frame_bytes());
      const std::vector<PortPhys> ports = s.switch_ports(n);
      for (size_t p = 0; p < ports.size(); ++p) {
        uint32_t cells = 0;
        for (uint32_t pg : s.sw.lossless_pgs) cells = std::max(cells, c.mmu.ports[p].pgs[pg].headroom_cells);
        const std::string line = "  #   " + format_rate(ports[p].rate_bps) + " port, " +
                                 format_time(ports[p].cable_ps) + " cable: " +
                                 format_size(static_cast<uint64_t>(cells) * s.sw.cell_bytes) + " (" +
                                 std::to_string(cells) + " cells)\n";
        if (std::find(seen.begin(), seen.end(), line) == seen.end()) seen.push_back(line);
      }
    }
    o << "  # headroom: auto computed per lossless PG (SONiC formula):\n";
    for (const std::string& l : seen) o << l;
  }
  o << "stats:\n  interval: " << format_time(s.stats.interval_ps) << "\n";
  o << "  flow_series: " << (s.stats.flow_series ? "true" : "false") << "\n";
  if (s.traffic_entries.empty()) {
    o << "traffic: []\n";
  } else {
    o << "traffic:\n";
    for (const TrafficEntry& t : s.traffic_entries) o << "  - " << t.text << "\n";
  }
  if (s.flow_entries.empty()) {
    o << "flows: []\n";
  } else {
    o << "flows:\n";
    for (const FlowEntry& e : s.flow_entries) {
      const FlowSpec& f = e.flow;
      if (e.pattern.empty()) {
        o << "  - src: " << f.src << "\n";
        o << "    dst: " << f.dst << "\n";
      } else {
        std::ostringstream load;
        load.precision(17);
        load << e.load;
        o << "  - pattern: " << e.pattern << "\n";
        o << "    load: " << load.str() << "\n";
      }
      o << "    size: " << format_size(f.message_bytes) << "\n";
      o << "    messages: " << f.messages << "\n";
      if (e.pattern.empty()) {
        o << "    rate: " << format_rate(f.rate_bps) << "\n";
        o << "    pcp: " << f.pcp << "\n";
        o << "    dscp: " << f.dscp << "\n";
      }
      o << "    start: " << format_time(f.start_ps) << "\n";
      o << "    op: " << (f.send ? "send" : "write") << "\n";
    }
  }
  return o.str();
}

}  // namespace rocesim::sim

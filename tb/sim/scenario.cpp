#include "sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/rng.h"
#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif
#include "core/units.h"
#include "topology/hpcc.h"

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
    v[p].cable_ps = topology::cable_delay_ps(l, links.link.delay_per_m_ps);
  }
  return v;
}

namespace {

constexpr uint64_t kGbps = 1000000000ull;
constexpr uint64_t kMaxRate = 1600 * kGbps;

// ---------------------------------------------------------------------------
// Key tables of the sections read here (config_util.h: one table drives the
// reader, the resolved config and docs/config.md's key reference).

constexpr uint64_t kHourPs = 3600ull * 1000000000000ull;

const KeyTable<SimSection>& sim_keys() {
  using S = SimSection;
  static const KeyTable<S> t{
      keys::time<S>("duration", ROCESIM_MEMBER(duration_ps), 1, kHourPs, "simulated time limit"),
      keys::boolean<S>("stop_when_done", ROCESIM_MEMBER(stop_when_done),
                       "stop as soon as every flow has completed (the run's `sim_time_ns` is then the last completion)"),
      keys::time<S>("deadlock_after", ROCESIM_MEMBER(deadlock_after_ps), 1, UINT64_MAX,
                    "a run that ends with frames in flight and no data delivered for this long is reported as "
                    "deadlocked (`pfc.deadlock` in summary.json)"),
      keys::size<S>("max_memory", ROCESIM_MEMBER(max_memory_bytes), 0, UINT64_MAX,
                    "budget for the estimated peak resident memory, checked before the model is built (`0`: no limit); "
                    "see [Limits](#limits-and-budgets)"),
      keys::size<S>("max_output", ROCESIM_MEMBER(max_output_bytes), 0, UINT64_MAX,
                    "budget for the estimated bytes written into `--out`, checked before the model is built (`0`: no "
                    "limit)"),
  };
  return t;
}

const KeyTable<topology::SingleParams>& single_switch_keys() {
  using S = topology::SingleParams;
  static const KeyTable<S> t{
      keys::integer<S>("hosts", ROCESIM_MEMBER(hosts), 1, topology::kMaxHosts, "hosts, `h<i>` on port i"),
      keys::rate<S>("host_rate", ROCESIM_MEMBER(host_rate), 1000000, kMaxRate, "host link speed"),
      keys::metres<S>("cable_m", ROCESIM_MEMBER(cable_mm), "cable length of every link, metres"),
  };
  return t;
}

const KeyTable<topology::LeafSpineParams>& leaf_spine_keys() {
  using S = topology::LeafSpineParams;
  static const KeyTable<S> t{
      keys::integer<S>("leaves", ROCESIM_MEMBER(leaves), 1, topology::kMaxLeaves, "leaf switches `leaf<i>`"),
      keys::integer<S>("spines", ROCESIM_MEMBER(spines), 1, 4096, "spine switches `spine<i>`"),
      keys::integer<S>("hosts_per_leaf", ROCESIM_MEMBER(hosts_per_leaf), 1, topology::kMaxHosts,
                       "hosts under each leaf (leaves x hosts_per_leaf hosts in all)"),
      keys::rate<S>("host_rate", ROCESIM_MEMBER(host_rate), 1000000, kMaxRate, "host link speed"),
      keys::rate<S>("fabric_rate", ROCESIM_MEMBER(fabric_rate), 1000000, kMaxRate, "leaf-spine link speed"),
      keys::integer<S>("links_per_leaf_spine", ROCESIM_MEMBER(links_per_leaf_spine), 1, 64,
                       "parallel cables per leaf-spine pair (each an ECMP member)"),
      keys::metres<S>("host_cable_m", ROCESIM_MEMBER(host_cable_mm), "host cable length, metres"),
      keys::metres<S>("fabric_cable_m", ROCESIM_MEMBER(fabric_cable_mm), "leaf-spine cable length, metres"),
      keys::boolean<S>("mlag", ROCESIM_MEMBER(mlag),
                       "M-LAG pairs: leaf 2k and 2k+1 joined by a peer link on their last port, the pair's "
                       "2 x hosts_per_leaf hosts each dual-homed to both (port 0 to leaf 2k, port 1 to leaf 2k+1, "
                       "the NIC hashes each QP onto one of them); `leaves` must be even. See "
                       "[M-LAG](analytics.md#m-lag)"),
      keys::rate<S>("peer_rate", ROCESIM_MEMBER(peer_rate), 0, kMaxRate,
                    "peer-link speed with `mlag` (`0`: `fabric_rate`)"),
      keys::metres<S>("peer_cable_m", ROCESIM_MEMBER(peer_cable_mm),
                      "peer-link cable length with `mlag`, metres (`0`: `fabric_cable_m`)"),
  };
  return t;
}

const KeyTable<topology::FatTreeParams>& fat_tree_keys() {
  using S = topology::FatTreeParams;
  static const KeyTable<S> t{
      {"k", "integer, even, 2 .. 62",
       "k-ary fat-tree (Al-Fares 2008): k pods of k/2 ToR + k/2 aggregation switches, (k/2)^2 cores, k^3/4 hosts",
       [](const CfgNode& n, const std::string& k, S& s) {
         s.k = static_cast<uint32_t>(n.integer(k, s.k, 2, 62));
         if (s.k % 2) n.fail_key(k, "must be even");
       },
       [](const S& s) { return std::to_string(s.k); }},
      keys::rate<S>("rate", ROCESIM_MEMBER(rate), 1000000, kMaxRate, "every link's speed"),
      keys::metres<S>("cable_m", ROCESIM_MEMBER(cable_mm), "cable length of every link, metres"),
  };
  return t;
}

const KeyTable<topology::RingParams>& ring_keys() {
  using S = topology::RingParams;
  static const KeyTable<S> t{
      keys::integer<S>("switches", ROCESIM_MEMBER(switches), 3, 4096,
                       "a ring of switches `ring<i>` (port H clockwise, H+1 counter-clockwise)"),
      keys::integer<S>("hosts_per_switch", ROCESIM_MEMBER(hosts_per_switch), 1, 1024, "hosts on each switch"),
      keys::rate<S>("rate", ROCESIM_MEMBER(rate), 1000000, kMaxRate, "every link's speed"),
      keys::metres<S>("cable_m", ROCESIM_MEMBER(cable_mm), "cable length of every link, metres"),
      keys::boolean<S>("clockwise", ROCESIM_MEMBER(clockwise),
                       "route everything clockwise (a cyclic buffer dependency: the PFC deadlock case); `false`: "
                       "shortest paths"),
  };
  return t;
}

const KeyTable<LinksSection>& links_keys() {
  using S = LinksSection;
  static const KeyTable<S> t{
      keys::rate<S>("rate", ROCESIM_MEMBER(link.rate_bps), 1000000ull, kMaxRate,
                    "line rate of the `direct` link (switch topologies set their own rates)"),
      keys::metres<S>("cable_m", ROCESIM_MEMBER(link.length_mm),
                      "cable length of the `direct` link in metres (kept in mm)"),
      keys::time<S>("delay_per_m", ROCESIM_MEMBER(link.delay_per_m_ps), 0, 1000000,
                    "propagation delay per metre, on every cable"),
      keys::real<S>("loss", ROCESIM_MEMBER(link.loss), 0.0, 1.0,
                    "probability that a frame is lost on a cable (every cable, each direction); lost frames are "
                    "counted under `link_loss`"),
      keys::boolean<S>("check_fcs", ROCESIM_MEMBER(check_fcs),
                       "receiving MACs (hosts and switches) verify the FCS (drop reason `bad_fcs`)"),
      keys::boolean<S>("check_icrc", ROCESIM_MEMBER(check_icrc),
                       "receiving hosts verify the RoCEv2 ICRC (drop reason `bad_icrc`); switches never do: the ICRC "
                       "is end-to-end"),
      {"failures", "list of `{link, down, up, detection}`",
       "scheduled link failures (docs/ecmp.md, \"Link failure\"): the cable with one end at `link` (`NODE:PORT`, "
       "e.g. `leaf0:16`) is down from `down` until `up` (absent: for good); frames on it meanwhile are lost "
       "(`link_down`). `detection` (default `10us`) after each change the switches at its ends drop the port from "
       "their ECMP groups (and flush its queues, `link_down`) or take it back",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (!n.has(k)) {
           (void)n.seq(k);
           return;
         }
         s.failures.clear();
         for (const CfgNode& e : n.seq(k)) {
           LinkFailure f;
           f.link = e.str("link");
           f.down_ps = e.time("down");
           f.up_ps = e.time("up", UINT64_MAX);
           if (e.has("up") && f.up_ps <= f.down_ps) e.fail_key("up", "must be later than down");
           f.detection_ps = e.time("detection", f.detection_ps, 0, kHourPs);
           e.finish();
           s.failures.push_back(f);
         }
       },
       [](const S& s) {
         std::string o;
         for (const LinkFailure& f : s.failures) {
           o += (o.empty() ? "{" : ", {") + std::string("link: ") + f.link + ", down: " + core::format_time(f.down_ps);
           if (f.up_ps != UINT64_MAX) o += ", up: " + core::format_time(f.up_ps);
           o += ", detection: " + core::format_time(f.detection_ps) + "}";
         }
         return "[" + o + "]";
       }},
      {"lossy", "list of `{link, loss}`",
       "lossy cables: the cable with one end at `link` (`NODE:PORT`, e.g. `spine0:1`) loses each frame, in each "
       "direction, with probability `loss` (in place of `links.loss`; counted under `link_loss`)",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (!n.has(k)) {
           (void)n.seq(k);
           return;
         }
         s.lossy.clear();
         for (const CfgNode& e : n.seq(k)) {
           LossyLink l;
           l.link = e.str("link");
           l.loss = e.real("loss", 0.0, 0.0, 1.0);
           if (!e.has("loss")) e.missing("loss");
           e.finish();
           s.lossy.push_back(l);
         }
       },
       [](const S& s) {
         std::string o;
         for (const LossyLink& l : s.lossy)
           o += (o.empty() ? "{" : ", {") + std::string("link: ") + l.link + ", loss: " + real_text(l.loss) + "}";
         // Not written when empty: resolved configurations from before the key stay as they were.
         return o.empty() ? o : "[" + o + "]";
       },
       "none"},
  };
  return t;
}

// A `link: NODE:PORT` of entry e of links.<what> against the topology: a
// cabled port; node and port out.
void resolve_link_end(const CfgNode& e, const std::string& text, const char* what, const Scenario& s, uint32_t& node,
                      uint32_t& port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    e.fail_key("link", "'" + text + "': give one end of the cable as NODE:PORT, e.g. leaf0:16");
  const std::string name = text.substr(0, colon), p = text.substr(colon + 1);
  if (p.find_first_not_of("0123456789") != std::string::npos || p.size() > 6)
    e.fail_key("link", "'" + text + "': the port is a number");
  if (s.topology.kind == "direct") e.fail_key("link", std::string(what) + " need a switch topology (topology.kind)");
  const uint32_t n = s.topo.find(name);
  if (n == topology::kNoNode) e.fail_key("link", "'" + text + "': no node '" + name + "' in this topology");
  const uint32_t pi = static_cast<uint32_t>(std::stoul(p));
  if (pi >= s.topo.port_link[n].size()) e.fail_key("link", "'" + text + "': " + name + " has no cable on port " + p);
  node = n;
  port = pi;
}

// links.failures[].link and links.lossy[].link against the topology: NODE:PORT names a cabled port.
void resolve_failures(const CfgNode& links, Scenario& s) {
  const std::vector<CfgNode> items = links.seq("failures");
  for (size_t i = 0; i < s.links.failures.size(); ++i) {
    LinkFailure& f = s.links.failures[i];
    resolve_link_end(items.at(i), f.link, "link failures", s, f.node, f.port);
  }
  const std::vector<CfgNode> lossy = links.seq("lossy");
  for (size_t i = 0; i < s.links.lossy.size(); ++i) {
    LossyLink& l = s.links.lossy[i];
    resolve_link_end(lossy.at(i), l.link, "lossy links", s, l.node, l.port);
    for (size_t j = 0; j < i; ++j)
      if (s.topo.port_link[s.links.lossy[j].node][s.links.lossy[j].port] == s.topo.port_link[l.node][l.port])
        lossy.at(i).fail_key("link", "'" + l.link + "': the same cable as links.lossy[" + std::to_string(j) + "] (" +
                                         s.links.lossy[j].link + ")");
  }
}

// hosts.dcqcn, after `preset` (which sets every default of the table).
const KeyTable<cc::DcqcnConfig>& dcqcn_keys() {
  using S = cc::DcqcnConfig;
  static const KeyTable<S> t{
      keys::real<S>("g", ROCESIM_MEMBER(g), 0.0, 1.0, "alpha gain"),
      keys::real<S>("initial_alpha", ROCESIM_MEMBER(initial_alpha), 0.0, 1.0, "alpha at the first CNP"),
      keys::time<S>("alpha_timer", ROCESIM_MEMBER(alpha_period_ps), 1, UINT64_MAX, "alpha decay period"),
      keys::time<S>("rate_increase_timer", ROCESIM_MEMBER(increase_timer_ps), 0, UINT64_MAX, "rate-increase timer"),
      keys::size<S>("byte_counter", ROCESIM_MEMBER(byte_counter_bytes), 0, UINT64_MAX, "rate-increase byte counter"),
      keys::integer<S>("fast_recovery_stages", ROCESIM_MEMBER(fast_recovery_stages), 0, 1000,
                       "F: fast-recovery stages before additive increase"),
      keys::rate<S>("ai_rate", ROCESIM_MEMBER(ai_rate_bps), 0, UINT64_MAX, "additive increase step"),
      keys::rate<S>("hai_rate", ROCESIM_MEMBER(hai_rate_bps), 0, UINT64_MAX, "hyper increase step"),
      keys::rate<S>("min_rate", ROCESIM_MEMBER(min_rate_bps), 0, UINT64_MAX, "rate floor"),
      keys::real<S>("min_dec_factor", ROCESIM_MEMBER(min_dec_factor), 0.0, 1.0,
                    "NVIDIA-style limit on one cut (see `tb/nic/cc/dcqcn_rp.h`)"),
      keys::time<S>("rate_reduce_monitor_period", ROCESIM_MEMBER(rate_reduce_monitor_period_ps), 0, UINT64_MAX,
                    "NVIDIA-style: at most one cut per this period"),
      keys::boolean<S>("clamp_target", ROCESIM_MEMBER(clamp_target), "NVIDIA-style: the target rate follows each cut"),
  };
  return t;
}

std::string ecn_word(uint32_t e) { return e == 2 ? "ect0" : e == 1 ? "ect1" : "not_ect"; }

std::string emit_rx_buffer(const HostsSection& h) {
  if (!h.rx_buffer_bytes) return "{}";
  return "{size: " + core::format_size(h.rx_buffer_bytes) + ", drain_rate: " + core::format_rate(h.rx_drain_bps) +
         ", pfc: " + (h.rx_pfc ? "true" : "false") + ", xoff: " + core::format_size(h.rx_xoff_bytes) +
         ", xon: " + core::format_size(h.rx_xon_bytes) + "}";
}

const KeyTable<HostsSection>& hosts_keys() {
  using S = HostsSection;
  static const KeyTable<S> t{
      {"mtu", "256, 512, 1024, 2048, 4096", "RoCE path MTU: payload bytes per packet",
       [](const CfgNode& n, const std::string& k, S& h) {
         h.mtu = static_cast<uint32_t>(n.integer(k, h.mtu, 256, 4096));
         if (h.mtu != 256 && h.mtu != 512 && h.mtu != 1024 && h.mtu != 2048 && h.mtu != 4096)
           n.fail_key(k, "must be an IBTA path MTU: 256, 512, 1024, 2048 or 4096");
       },
       [](const S& h) { return std::to_string(h.mtu); }},
      keys::boolean<S>("vlan", ROCESIM_MEMBER(vlan), "send with an 802.1Q tag (the priority is carried in PCP)"),
      keys::integer<S>("pcp", ROCESIM_MEMBER(pcp), 0, 7, "priority code point of data frames (RoCE on priority 3)"),
      keys::integer<S>("dscp", ROCESIM_MEMBER(dscp), 0, 63, "IPv4 DSCP of data frames"),
      keys::choice<S>(
          "ecn", {"ect0", "ect1", "not_ect"}, [](const S& h) { return ecn_word(h.ecn); },
          [](S& h, const std::string& w) { h.ecn = w == "ect0" ? 2 : w == "ect1" ? 1 : 0; },
          "ECN codepoint of data frames"),
      keys::choice<S>(
          "transport", {"rc", "open_loop"}, [](const S& h) { return std::string(h.rc ? "rc" : "open_loop"); },
          [](S& h, const std::string& w) { h.rc = w == "rc"; },
          "every host's transport. `rc`: RoCEv2 Reliable Connection (the keys below marked RC); `open_loop`: each "
          "flow is paced at its rate and never waits: no CM, ACKs, retransmission or congestion control, but PFC "
          "pauses hold it"),
      keys::boolean<S>("cm", ROCESIM_MEMBER(cm),
                       "RC: connection setup with CM REQ/REP/RTU MADs to QP1 before data (REQ re-sent after `rto`)"),
      keys::integer<S>("ack_every", ROCESIM_MEMBER(ack_every), 1, 1 << 20,
                       "RC: AckReq on every Nth packet (and every message's last); the receiver coalesces ACKs to that"),
      keys::integer<S>("max_outstanding", ROCESIM_MEMBER(max_outstanding), 1, 1 << 23,
                       "RC: packets sent and not yet acknowledged; at least `ack_every`"),
      keys::time<S>("rto", ROCESIM_MEMBER(rto_ps), 1000000, kHourPs,
                    "RC: retransmission timeout, go back to the oldest unacknowledged packet (IBTA local ACK timeout "
                    "10 = 4.096 us x 2^10)"),
      keys::choice<S>(
          "cc", {"none", "dcqcn"}, [](const S& h) { return std::string(h.dcqcn ? "dcqcn" : "none"); },
          [](S& h, const std::string& w) { h.dcqcn = w == "dcqcn"; },
          "congestion control of RC senders; with `none` RC receivers still send CNPs for CE-marked packets "
          "(counted in `flows.csv`) and the senders ignore them; with `open_loop` it has no effect (no CNPs, no "
          "rate changes)"),
      keys::with_default(
          keys::time<S>("min_time_between_cnps", ROCESIM_MEMBER(min_time_between_cnps_ps), 0, 1000000000000ull,
                        "receiver (NP): at most one CNP per QP per this. The only key for it: "
                        "`dcqcn.min_time_between_cnps` is a deprecated alias, refused when both are given with "
                        "different values"),
          "`4us` (DCQCN: the preset's, paper `50us`, nvidia `4us`)"),
      {"dcqcn", "map", "DCQCN parameters: `preset` (`paper`: Zhu et al. 2015; `nvidia`: ConnectX firmware "
                       "defaults), then the keys `hosts.dcqcn.*` below, which override the preset's",
       [](const CfgNode& n, const std::string& k, S& h) {
         const CfgNode d = n.map(k);
         h.dcqcn_preset = d.choice("preset", h.dcqcn_preset, {"paper", "nvidia"});
         cc::DcqcnConfig& c = h.dcqcn_cfg;
         c = h.dcqcn_preset == "paper" ? cc::DcqcnConfig::paper(100000000000ull)
                                       : cc::DcqcnConfig::nvidia(100000000000ull);
         read_keys(dcqcn_keys(), d, c);
         // One key per value: the NP's CNP spacing is hosts.min_time_between_cnps;
         // with DCQCN it defaults to the preset's. The old dcqcn.min_time_between_cnps
         // is read as an alias and must agree when both are given.
         const bool top = n.has("min_time_between_cnps");
         if (d.has("min_time_between_cnps")) {
           const uint64_t alias = d.time("min_time_between_cnps", 0, 0, 1000000000000ull);
           if (top && alias != h.min_time_between_cnps_ps)
             d.fail_key("min_time_between_cnps",
                        "deprecated alias of hosts.min_time_between_cnps, which is given as " +
                            core::format_time(h.min_time_between_cnps_ps) + ": give one (hosts.min_time_between_cnps)");
           h.min_time_between_cnps_ps = alias;
         } else if (h.dcqcn && !top) {
           h.min_time_between_cnps_ps = c.min_time_between_cnps_ps;
         }
         c.min_time_between_cnps_ps = h.min_time_between_cnps_ps;
         d.finish();
         const std::vector<std::string> errs = c.validate();
         if (!errs.empty()) d.fail(errs.front());
       },
       [](const S& h) {
         return "{preset: " + h.dcqcn_preset + ", " + emit_flow(dcqcn_keys(), h.dcqcn_cfg).substr(1);
       },
       "`{preset: paper, ...}`"},
      keys::boolean<S>("cc_log", ROCESIM_MEMBER(cc_log), "write `cc.csv` (every reaction point event) when DCQCN runs"),
      {"rx_buffer", "`{size, drain_rate, pfc, xoff, xon}`",
       "a NIC receive buffer drained at `drain_rate`; with `pfc` (default; off when `pfc.enabled` is `false`) the "
       "NIC pauses its switch port on the frame's priority when the buffer reaches `xoff` (default 3/4 of size) and "
       "resumes (XON) at or below `xon` (1/4); without, overflow drops (`nic_buffer`). The NIC has no PFC keys of "
       "its own: its XOFF frames carry `pfc.pause_quanta`, and while the buffer stays above `xon` the XOFF is "
       "re-sent every `pfc.refresh` (auto: half the pause time at the NIC's speed), timed from the XOFF transition "
       "as the switch's refresh; an XON ends the refreshes",
       [](const CfgNode& n, const std::string& k, S& h) {
         const CfgNode rb = n.map(k);
         h.rx_buffer_bytes = rb.size("size", 0);
         h.rx_drain_bps = rb.rate("drain_rate", 0);
         if (h.rx_buffer_bytes && !h.rx_drain_bps)
           rb.fail_key("drain_rate", "missing required key (with a receive buffer)");
         h.rx_pfc = rb.boolean("pfc", h.rx_pfc);
         h.rx_xoff_bytes = rb.size("xoff", h.rx_buffer_bytes * 3 / 4);
         h.rx_xon_bytes = rb.size("xon", h.rx_buffer_bytes / 4);
         if (h.rx_buffer_bytes && (h.rx_xoff_bytes > h.rx_buffer_bytes || h.rx_xon_bytes >= h.rx_xoff_bytes))
           rb.fail("need xon < xoff <= size");
         rb.finish();
       },
       emit_rx_buffer, "none"},
  };
  return t;
}

const KeyTable<StatsSection>& stats_keys() {
  using S = StatsSection;
  static const KeyTable<S> t{
      keys::time<S>("interval", ROCESIM_MEMBER(interval_ps), 0, kHourPs,
                    "sampling interval of `queues.csv`, `ports.csv` and `classes.csv` (and `flow_series.csv`); `0` writes none"),
      keys::boolean<S>("flow_series", ROCESIM_MEMBER(flow_series),
                       "also write `flow_series.csv`: each flow's receive throughput per interval"),
      keys::boolean<S>("paths", ROCESIM_MEMBER(paths),
                       "record which way every flow's frames went (switch topologies): `paths.csv`, "
                       "`ecmp_members.csv`, flows.csv's `path`, `rev_path` and `path_changes`, summary.json's `ecmp`"),
      {"packet_trace", "map `{flows, tags, sample}`",
       "data packets to follow hop by hop into `packet_trace.csv` (docs/outputs.md): all of the flows whose ids "
       "are in `flows` or whose tags are in `tags`, and of every other flow each packet with probability "
       "`sample` (0..1); none by default",
       [](const CfgNode& n, const std::string& k, S& s) {
         const CfgNode m = n.map(k);
         if (!n.has(k)) return;
         s.packet_trace = PacketTraceSpec{};
         for (const CfgNode& e : m.seq("flows"))
           s.packet_trace.flows.push_back(static_cast<uint64_t>(e.as_integer(0, INT64_MAX)));
         for (const CfgNode& e : m.seq("tags")) s.packet_trace.tags.push_back(e.as_str());
         s.packet_trace.sample = m.real("sample", 0.0, 0.0, 1.0);
         m.finish();
       },
       [](const S& s) {
         const PacketTraceSpec& t = s.packet_trace;
         std::string o = "{flows: [";
         for (size_t i = 0; i < t.flows.size(); ++i) o += (i ? ", " : "") + std::to_string(t.flows[i]);
         o += "], tags: [";
         for (size_t i = 0; i < t.tags.size(); ++i) o += (i ? ", " : "") + t.tags[i];
         char b[32];
         std::snprintf(b, sizeof b, "%.17g", t.sample);
         return o + "], sample: " + b + "}";
       }},
  };
  return t;
}

// Parameters of the given kind from one mapping (a topology file's root or
// the scenario's `topology:`); absent keys keep the values already in t.
void read_topology_params(const CfgNode& n, TopologySection& t) {
  (void)n.str("kind", t.kind);  // consumed by the caller
  if (t.kind == "single_switch") {
    read_keys(single_switch_keys(), n, t.single);
  } else if (t.kind == "leaf_spine") {
    read_keys(leaf_spine_keys(), n, t.leaf_spine);
    // M-LAG pairs leaves 2k and 2k+1: at the key that makes it impossible.
    if (t.leaf_spine.mlag && t.leaf_spine.leaves % 2)
      n.fail_key(n.has("leaves") ? "leaves" : "mlag",
                 "mlag pairs leaves 2k and 2k+1: leaves (" + std::to_string(t.leaf_spine.leaves) + ") must be even");
  } else if (t.kind == "fat_tree") {
    read_keys(fat_tree_keys(), n, t.fat_tree);
  } else if (t.kind == "ring") {
    read_keys(ring_keys(), n, t.ring);
  } else if (t.kind != "hpcc") {  // hpcc: everything is in the HPCC file
    (void)n.integer("hosts", 2, 2, 2);  // direct: exactly h0 and h1
  }
  n.finish();
}

const std::vector<std::string> kTopologyKinds{"direct", "single_switch", "leaf_spine", "fat_tree", "ring", "hpcc"};

// `topology:`'s own keys, with the scenario file a `file` is relative to.
struct TopologyRead {
  TopologySection t;
  std::string scenario_file;
};

const KeyTable<TopologyRead>& topology_keys() {
  using S = TopologyRead;
  static const KeyTable<S> t{
      // Before `kind`: the file gives the kind and parameters, inline keys override them.
      {"file", "string", "topology file, relative to the scenario file. With `kind: hpcc` here: an HPCC ns-3 "
                         "topology file (`mix/*.txt`, docs/migration-hpcc.md), written to config.resolved.yaml as "
                         "an absolute path. Otherwise a YAML file to read `kind` and the parameters from; inline keys "
                         "override the file's; never written to config.resolved.yaml, which spells the parameters out",
       [](const CfgNode& n, const std::string& k, S& r) {
         if (!n.has(k)) return;
         r.t.file = n.str(k);
         // kind hpcc (given here): the file is HPCC's text format, read by build_topology.
         if (n.has("kind") && n.choice("kind", r.t.kind, kTopologyKinds) == "hpcc") {
           r.t.kind = "hpcc";
           return;
         }
         const std::string path = resolve_relative(r.scenario_file, r.t.file);
         std::unique_ptr<core::Config> file_cfg;
         try {
           file_cfg = core::Config::load_file(path);
         } catch (const core::ConfigError& e) {
           if (e.key_path().empty() && e.where() == path) n.fail_key(k, "'" + r.t.file + "': " + e.reason());
           throw;
         }
         const CfgNode froot = file_cfg->root();
         r.t.kind = froot.choice("kind", "direct", kTopologyKinds);
         if (r.t.kind == "hpcc")
           froot.fail_key("kind", "kind hpcc names its HPCC file in the scenario itself: topology: {kind: hpcc, "
                                  "file: PATH}");
         if (n.has("kind")) r.t.kind = n.choice("kind", r.t.kind, kTopologyKinds);
         read_topology_params(froot, r.t);
       },
       [](const S& r) {
         return r.t.kind == "hpcc" ? yaml_quote(absolute_path(r.scenario_file, r.t.file)) : std::string();
       },
       "none"},
      keys::choice<S>(
          "kind", kTopologyKinds, [](const S& r) { return r.t.kind; }, [](S& r, const std::string& w) { r.t.kind = w; },
          "`direct`: `h0` and `h1` on one cable (rate and cable from `links`); `single_switch`; `leaf_spine`; "
          "`fat_tree`; `ring`: the keys of each kind below; `hpcc`: the HPCC topology file `file` (hosts `h<i>` "
          "in node-id order, switch id n `sw<n>`)"),
  };
  return t;
}

void read_topology(const CfgNode& n, const std::string& scenario_file, TopologySection& t) {
  TopologyRead r{t, scenario_file};
  read_keys(topology_keys(), n, r);
  t = r.t;
  read_topology_params(n, t);
  if (t.kind == "hpcc" && t.file.empty())
    n.fail_key("kind", "kind hpcc needs `file`: the HPCC topology file (relative to the scenario file)");
}

void read_links(const CfgNode& n, LinksSection& l) {
  read_keys(links_keys(), n, l);
  n.finish();
}

void read_hosts(const CfgNode& n, HostsSection& h) {
  read_keys(hosts_keys(), n, h);
  // The responder ACKs every ack_every-th packet (and a message's last): a
  // requester allowed fewer unacknowledged packets would wait for an rto
  // each time its window fills, a silent stall rather than a slow flow.
  if (h.rc && h.max_outstanding < h.ack_every)
    n.fail_key(n.has("max_outstanding") ? "max_outstanding" : "ack_every",
               "RC: max_outstanding (" + std::to_string(h.max_outstanding) + ") is below ack_every (" +
                   std::to_string(h.ack_every) + "): the receiver ACKs only every " + std::to_string(h.ack_every) +
                   "th packet, so the sender would stall for an rto each time its window fills; give ack_every <= "
                   "max_outstanding");
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
    } else if (t.kind == "hpcc") {
      const std::string path = resolve_relative(s.file, t.file);
      try {
        s.topo = topology::read_hpcc_topology(path, where.path().empty() ? "file" : where.path() + ".file");
      } catch (const core::ConfigError& e) {
        // A file that cannot be read: at the key that names it. Its contents: at FILE:LINE:COL.
        if (e.where() == path) where.fail_key("file", "'" + t.file + "': " + e.reason());
        throw;
      }
    }
  } catch (const std::invalid_argument& e) {
    where.fail(e.what());
  }
}

// One `flows:` entry with the scenario it refers to (hosts, their rates and
// the `hosts` defaults of pcp and dscp).
struct FlowRead {
  FlowEntry e;
  const Scenario* s = nullptr;
  bool single() const { return e.pattern.empty(); }
};

// A key of single flows only (absent from a pattern's table row set: read
// nothing there, so finish() refuses it in a pattern entry).
Key<FlowRead> single_only(Key<FlowRead> k) {
  auto read = k.read;
  auto emit = k.emit;
  k.read = [read](const CfgNode& n, const std::string& key, FlowRead& r) {
    if (r.single()) read(n, key, r);
  };
  k.emit = [emit](const FlowRead& r) { return r.single() ? emit(r) : std::string(); };
  return k;
}

const KeyTable<FlowRead>& flow_keys() {
  using S = FlowRead;
  auto host = [](const char* name, std::string FlowSpec::*name_m, uint32_t FlowSpec::*index_m, std::string doc) {
    return single_only({name, "host name `h<i>`", std::move(doc),
                        [name_m, index_m](const CfgNode& n, const std::string& k, S& r) {
                          FlowSpec& f = r.e.flow;
                          f.*name_m = n.str(k);
                          f.*index_m = host_ref(n, k, f.*name_m, r.s->num_hosts());
                          if (k == "dst" && f.src_index == f.dst_index) n.fail_key(k, "a flow's src and dst must differ");
                        },
                        [name_m](const S& r) { return yaml_quote(r.e.flow.*name_m); }, "*required*"});
  };
  static const KeyTable<S> t{
      {"pattern", "`permutation`",
       "instead of `src`/`dst`: every host sends to one other host, a random cyclic permutation (Sattolo's "
       "algorithm) drawn from the run seed and the entry's index",
       [](const CfgNode& n, const std::string& k, S& r) { r.e.pattern = n.choice(k, r.e.pattern, {"permutation"}); },
       [](const S& r) { return r.e.pattern; }, "none"},
      host("src", &FlowSpec::src, &FlowSpec::src_index, "sender"),
      host("dst", &FlowSpec::dst, &FlowSpec::dst_index, "receiver, not `src`"),
      {"load", "number, 0.000001 .. 1", "with `pattern`: each flow's rate as a fraction of its sender's link",
       [](const CfgNode& n, const std::string& k, S& r) {
         if (!r.single()) r.e.load = n.real(k, 1.0, 0.000001, 1.0);
       },
       [](const S& r) { return r.single() ? std::string() : real_text(r.e.load); }, "`1`"},
      {"size", "size, 1B .. 1TiB", "bytes per message",
       [](const CfgNode& n, const std::string& k, S& r) {
         (void)n.size(k);  // required: "missing required key" (naming a misspelt one) when absent
         r.e.flow.message_bytes = n.size(k, 0, 1, 1ull << 40);
       },
       [](const S& r) { return core::format_size(r.e.flow.message_bytes); }, "*required*"},
      {"messages", "integer, 1 .. 100000000",
       "messages sent back to back; `size` x `messages` at most 2^50 B (1 PiB)",
       [](const CfgNode& n, const std::string& k, S& r) {
         FlowSpec& f = r.e.flow;
         f.messages = static_cast<uint32_t>(n.integer(k, f.messages, 1, 100000000));
         if (f.messages > kMaxFlowBytes / f.message_bytes)
           n.fail_key(k, "size x messages = " + core::format_size(f.message_bytes) + " x " +
                             std::to_string(f.messages) + " is more than a flow may carry: at most " +
                             std::to_string(kMaxFlowBytes) + " B (2^50, 1 PiB) per flow");
       },
       [](const S& r) { return std::to_string(r.e.flow.messages); }},
      single_only({"rate", "rate, 1Kbps .. the sender's link", "pacing rate on wire bytes",
                   [](const CfgNode& n, const std::string& k, S& r) {
                     const uint64_t line = r.s->host_rate(r.e.flow.src_index);
                     r.e.explicit_rate = n.has(k);
                     r.e.flow.rate_bps = n.rate(k, line, 1000ull, line);
                   },
                   [](const S& r) { return core::format_rate(r.e.flow.rate_bps); }, "the sender's link rate"}),
      single_only(keys::with_default(keys::integer<S>("pcp", ROCESIM_MEMBER(e.flow.pcp), 0, 7, "the flow's priority"),
                                     "`hosts.pcp`")),
      single_only(keys::with_default(keys::integer<S>("dscp", ROCESIM_MEMBER(e.flow.dscp), 0, 63, "the flow's DSCP"),
                                     "`hosts.dscp`")),
      keys::time<S>("start", ROCESIM_MEMBER(e.flow.start_ps), 0, UINT64_MAX, "time of the first packet"),
      keys::choice<S>(
          "op", {"write", "send"}, [](const S& r) { return std::string(r.e.flow.send ? "send" : "write"); },
          [](S& r, const std::string& w) { r.e.flow.send = w == "send"; },
          "RDMA WRITE (RETH in the first packet) or SEND messages"),
  };
  return t;
}

void read_flows(const CfgNode& root, Scenario& s) {
  const uint32_t hosts = s.num_hosts();
  size_t i = 0;
  for (const CfgNode& f : root.seq("flows")) {
    FlowRead r;
    r.s = &s;
    r.e.flow.pcp = s.hosts.pcp;  // a pattern's flows, and a single flow's default
    r.e.flow.dscp = s.hosts.dscp;
    read_keys(flow_keys(), f, r);
    f.finish();
    const FlowEntry& e = r.e;
    const FlowSpec& fl = e.flow;
    if (e.pattern.empty()) {
      s.flows.push_back(fl);
    } else {
      // Every host sends to a distinct other host: a random cyclic permutation
      // (Sattolo's algorithm), from this entry's own RNG stream.
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

std::string emit_flow_entry(const FlowEntry& e) {
  FlowRead r;
  r.e = e;
  std::string o = emit_keys(flow_keys(), r, "    ");
  return "  - " + o.substr(4);
}

// The top level's own keys (the sections are read by read_scenario, in the
// order their checks need).
const KeyTable<Scenario>& top_keys() {
  using S = Scenario;
  static const KeyTable<S> t{
      {"name", "string", "scenario name, copied into `summary.json`",
       [](const CfgNode& n, const std::string& k, S& s) { s.name = n.str(k, s.name); },
       [](const S& s) { return yaml_quote(s.name); }},
      keys::integer<S>("seed", ROCESIM_MEMBER(seed), 0, INT64_MAX, "run seed (`--seed` overrides)"),
  };
  return t;
}

// switch.queue_impl: rtl and lockstep need the RTL, and every switch must fit
// the parameters it was built with (rtl::QmRtl refuses what does not): tried
// once per distinct port count, at load.
void check_rtl(const Scenario& s, const CfgNode& swn) {
#if ROCESIM_HAVE_RTL
  std::vector<size_t> tried;
  for (uint32_t n : s.topo.switches) {
    const std::vector<PortPhys> ports = s.switch_ports(n);
    if (std::find(tried.begin(), tried.end(), ports.size()) != tried.end()) continue;
    tried.push_back(ports.size());
    try {
      rtl::QmRtl::check(sw::Switch::queue_manager_config(make_switch_config(s.sw, s.pfc, ports, s.max_frame_bytes())));
    } catch (const std::invalid_argument& e) {
      swn.fail_key("queue_impl", s.sw.queue_impl + ": switch " + s.topo.nodes[n].name + " (" + std::to_string(ports.size()) +
                                     " ports, " + std::to_string(s.sw.buffer_bytes / s.sw.cell_bytes) +
                                     " cells) does not fit the RTL as built (at most " +
                                     std::to_string(rtl::QmRtl::kPorts) + " ports, " +
                                     std::to_string(rtl::QmRtl::kCells) + " cells): " + e.what());
    }
  }
#else
  (void)s;
  swn.fail_key("queue_impl", s.sw.queue_impl + " needs the RTL model, and this build has none (Verilator was not found)");
#endif
}

}  // namespace

Scenario read_scenario(const core::Config& cfg) {
  Scenario s;
  s.file = cfg.file();
  const CfgNode root = cfg.root();
  read_keys(top_keys(), root, s);

  const CfgNode sim = root.map("sim");
  read_keys(sim_keys(), sim, s.sim);
  sim.finish();

  const CfgNode topo = root.map("topology");
  read_topology(topo, s.file, s.topology);
  read_links(root.map("links"), s.links);
  read_hosts(root.map("hosts"), s.hosts);
  const CfgNode swn = root.map("switch");
  s.sw = read_switch(swn);
  const CfgNode st = root.map("stats");
  read_keys(stats_keys(), st, s.stats);
  st.finish();

  build_topology(topo, s);
  resolve_failures(root.map("links"), s);
  check_ecmp_names(swn.map("ecmp"), s.sw.ecmp, s.topo);
  check_analytics(swn.map("analytics"), s.sw.analytics, s.topo, s.topology.kind == "direct");
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
  if (s.sw.queue_impl != "tlm") check_rtl(s, swn);
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
    f.dport = g.dport;
    f.tag = g.tag;
    for (uint32_t a : g.after) f.after.push_back(a + base);
    s.flows.push_back(std::move(f));
  }
  // stats.packet_trace names flows that exist.
  if (st.has("packet_trace")) {
    const CfgNode pt = st.map("packet_trace");
    if (s.stats.packet_trace.any() && s.topology.kind == "direct")
      st.fail_key("packet_trace", "packet traces follow packets through switches: the direct topology has none");
    const std::vector<CfgNode> ids = pt.seq("flows");
    for (size_t i = 0; i < s.stats.packet_trace.flows.size(); ++i)
      if (s.stats.packet_trace.flows[i] >= s.flows.size())
        ids.at(i).fail("flow " + std::to_string(s.stats.packet_trace.flows[i]) + " does not exist (the run has " +
                       std::to_string(s.flows.size()) + " flows, ids from 0)");
    const std::vector<CfgNode> tags = pt.seq("tags");
    for (size_t i = 0; i < s.stats.packet_trace.tags.size(); ++i) {
      const std::string& t = s.stats.packet_trace.tags[i];
      if (std::none_of(s.flows.begin(), s.flows.end(), [&](const FlowSpec& f) { return f.tag == t; }))
        tags.at(i).fail("no flow has the tag '" + t + "'");
    }
  }
  root.finish();
  return s;
}

std::vector<std::string> key_reference_sections() {
  std::vector<std::string> v{"top",   "sim",  "topology", "topology.single_switch", "topology.leaf_spine",
                             "topology.fat_tree", "topology.ring", "links", "hosts", "switch", "pfc", "stats"};
  for (const std::string& k : traffic_kinds()) v.push_back("traffic." + k);
  v.push_back("flows");
  return v;
}

std::string key_reference(const std::string& section) {
  std::string o = reference_header();
  if (section == "top") {
    o += reference_rows(top_keys(), Scenario{});
  } else if (section == "sim") {
    o += reference_rows(sim_keys(), SimSection{});
  } else if (section == "topology") {
    o += reference_rows(topology_keys(), TopologyRead{});
  } else if (section == "topology.single_switch") {
    o += reference_rows(single_switch_keys(), topology::SingleParams{});
  } else if (section == "topology.leaf_spine") {
    o += reference_rows(leaf_spine_keys(), topology::LeafSpineParams{});
  } else if (section == "topology.fat_tree") {
    o += reference_rows(fat_tree_keys(), topology::FatTreeParams{});
  } else if (section == "topology.ring") {
    o += reference_rows(ring_keys(), topology::RingParams{});
  } else if (section == "links") {
    o += reference_rows(links_keys(), LinksSection{});
  } else if (section == "hosts") {
    o += reference_rows(hosts_keys(), HostsSection{});
    // hosts.dcqcn: the defaults are the preset's (shown: paper, the default preset).
    o += "| `dcqcn.preset` | `paper`, `nvidia` | `paper` | the preset that sets every `dcqcn.*` default below "
         "(shown: paper's) |\n";
    o += reference_rows(dcqcn_keys(), cc::DcqcnConfig::paper(100000000000ull), "dcqcn.");
    o += "| `dcqcn.min_time_between_cnps` | time | deprecated | alias of `hosts.min_time_between_cnps`; refused "
         "when both are given with different values; never written to config.resolved.yaml |\n";
  } else if (section == "switch") {
    return switch_key_reference();
  } else if (section == "pfc") {
    return pfc_key_reference();
  } else if (section == "flows") {
    o += reference_rows(flow_keys(), FlowRead{});
  } else if (section == "stats") {
    o += reference_rows(stats_keys(), StatsSection{});
  } else if (section.rfind("traffic.", 0) == 0) {
    return traffic_key_reference(section.substr(8));
  } else {
    return "";
  }
  return o;
}

std::string emit_resolved(const Scenario& s) {
  using core::format_rate;
  using core::format_size;
  using core::format_time;
  std::ostringstream o;
  o << "# Effective configuration of this run (defaults and --set overrides applied).\n";
  o << "# Generated from " << yaml_quote(s.file) << "; rocesim run accepts it as it is.\n";
  if (!s.topology.file.empty() && s.topology.kind != "hpcc")
    o << "# Topology parameters read from " << yaml_quote(absolute_path(s.file, s.topology.file))
      << " (spelled out below).\n";
  o << emit_keys(top_keys(), s, "");
  o << "sim:\n" << emit_keys(sim_keys(), s.sim, "  ");
  o << "topology:\n";
  const TopologySection& t = s.topology;
  o << emit_keys(topology_keys(), TopologyRead{t, s.file}, "  ");
  if (t.kind == "single_switch") {
    o << emit_keys(single_switch_keys(), t.single, "  ");
  } else if (t.kind == "leaf_spine") {
    o << emit_keys(leaf_spine_keys(), t.leaf_spine, "  ");
  } else if (t.kind == "fat_tree") {
    o << emit_keys(fat_tree_keys(), t.fat_tree, "  ");
  } else if (t.kind == "ring") {
    o << emit_keys(ring_keys(), t.ring, "  ");
  } else if (t.kind != "hpcc") {
    o << "  hosts: 2\n";
  }
  o << "links:\n" << emit_keys(links_keys(), s.links, "  ");
  o << "hosts:\n" << emit_keys(hosts_keys(), s.hosts, "  ");
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
  o << "stats:\n" << emit_keys(stats_keys(), s.stats, "  ");
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
    for (const FlowEntry& e : s.flow_entries) o << emit_flow_entry(e);
  }
  return o.str();
}

}  // namespace rocesim::sim

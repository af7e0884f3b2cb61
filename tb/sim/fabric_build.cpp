// The fabric builder: the model a Scenario describes (hosts, switches with
// their configuration and RTL, links), the flow records and their
// dependencies, and every flow's unloaded path (for the ideal FCT).
#include "sim/fabric.h"

#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/time.h"
#include "sim/analytics_run.h"
#include "sim/outputs.h"
#include "sim/packet_trace.h"
#include "sim/paths.h"
#include "sim/sampler.h"

namespace rocesim::sim {

using namespace sc_core;

#if ROCESIM_HAVE_RTL
namespace {
// The RTL's configuration: the model's, unless ROCESIM_RTL_FAULT asks for a
// fault injected on purpose, to see lockstep catch and report it (tests,
// docs/queue-manager.md): "dt_shift" doubles every dynamic-threshold alpha
// of the RTL (dynamic_th n + 1).
qm::Config rtl_config(qm::Config c) {
  const char* f = std::getenv("ROCESIM_RTL_FAULT");
  if (f && std::string(f) == "dt_shift")
    for (mmu::PortConfig& p : c.mmu.ports)
      for (mmu::PgProfile& g : p.pgs) ++g.threshold.dynamic_th;
  return c;
}
}  // namespace
#endif

namespace {

host::HostConfig host_config(const Scenario& s, uint32_t i, uint32_t ip, packet::Mac mac, uint64_t rate) {
  host::HostConfig hc;
  hc.index = i;
  hc.ip = ip;
  hc.mac = mac;
  hc.mtu = s.hosts.mtu;
  hc.vlan = s.hosts.vlan;
  hc.pcp = static_cast<uint8_t>(s.hosts.pcp);
  hc.dscp = static_cast<uint8_t>(s.hosts.dscp);
  hc.ecn = static_cast<uint8_t>(s.hosts.ecn);
  hc.port.rate_bps = rate;
  hc.port.checks.check_fcs = s.links.check_fcs;
  hc.port.checks.check_icrc = s.links.check_icrc;
  hc.rc = s.hosts.rc;
  hc.cm = s.hosts.cm;
  hc.ack_every = s.hosts.ack_every;
  hc.max_outstanding = s.hosts.max_outstanding;
  hc.rto_ps = s.hosts.rto_ps;
  hc.min_time_between_cnps_ps = s.hosts.min_time_between_cnps_ps;
  hc.rx_buffer_bytes = s.hosts.rx_buffer_bytes;
  hc.rx_drain_bps = s.hosts.rx_drain_bps;
  hc.rx_pfc = s.hosts.rx_pfc && s.pfc.enabled;
  hc.rx_xoff_bytes = s.hosts.rx_xoff_bytes;
  hc.rx_xon_bytes = s.hosts.rx_xon_bytes;
  hc.pause_quanta = static_cast<uint16_t>(s.pfc.pause_quanta);
  hc.rx_refresh_ps = s.pfc.refresh_ps;  // pfc.refresh: 0 (auto) = half the pause time at the NIC's speed
  hc.dcqcn = s.hosts.rc && s.hosts.dcqcn;
  hc.dcqcn_cfg = s.hosts.dcqcn_cfg;
  hc.cnp_pcp = s.hosts.dcqcn_cfg.cnp_priority;
  hc.cnp_dscp = s.hosts.dcqcn_cfg.cnp_dscp;
  hc.port.honor_pause = s.pfc.enabled;
  hc.port.pause_response_ps = s.pfc.response_ps;
  return hc;
}

}  // namespace

Fabric::Fabric(sc_module_name name, const Scenario& s) : sc_module(name), m_s(s), m_pool(1024), m_ledger(m_pool) {
  const topology::Topology& T = m_s.topo;
  if (m_s.topology.kind == "direct") {
    for (uint32_t i = 0; i < 2; ++i) {
      m_hosts.push_back(std::make_unique<host::Host>(
          ("h" + std::to_string(i)).c_str(),
          host_config(m_s, i, topology::host_ip_of(i), 0x020000000000ull | i, m_s.links.link.rate_bps), m_ledger));
    }
    m_links.push_back(std::make_unique<link::Link>("link_h0_h1", m_s.links.link, m_ledger, m_s.seed));
    link::connect(m_hosts[0]->mac, *m_links[0], m_hosts[1]->mac);
  } else {
    // Modules per node, in node order (hosts first).
    m_sw_index.assign(T.nodes.size(), -1);
    for (uint32_t n = 0; n < T.nodes.size(); ++n) {
      const topology::Node& node = T.nodes[n];
      if (node.kind == topology::Node::host) {
        const uint64_t rate = T.link_at({n, 0}).rate_bps;
        // A dual-homed (M-LAG) host: a LAG of its two ports, one MAC address.
        host::HostConfig hc = host_config(m_s, node.index, node.ip, T.mac_of(n, 0), rate);
        hc.ports = node.ports;
        m_hosts.push_back(std::make_unique<host::Host>(node.name.c_str(), hc, m_ledger));
        continue;
      }
      // Validated in read_scenario: cannot fail here.
      sw::SwitchConfig c = make_switch_config(m_s.sw, m_s.pfc, m_s.switch_ports(n), m_s.max_frame_bytes());
      for (uint32_t p = 0; p < node.ports; ++p) c.port_macs.push_back(T.mac_of(n, p));
      c.seed = m_s.seed;
      // Switches check the FCS of every frame but not the ICRC: the ICRC is
      // end-to-end (IBTA), verified by the receiving NIC.
      c.checks.check_fcs = m_s.links.check_fcs;
      c.checks.check_icrc = false;
      c.ecmp = switch_ecmp(m_s.sw.ecmp, node, m_s.seed);
      for (const topology::Group& g : T.groups[n]) c.groups.emplace_back(g.ports.begin(), g.ports.end());
      m_routes.push_back(std::make_unique<TopoRoutes>(T.routes[n]));
      m_switches.push_back(std::make_unique<sw::Switch>(node.name.c_str(), c, *m_routes.back(), m_ledger));
      m_switches.back()->set_event_log(&m_events);
#if ROCESIM_HAVE_RTL
      if (m_s.sw.queue_impl != "tlm") {  // rtl or lockstep; validated in read_scenario: fits the RTL
        sw::Switch& S = *m_switches.back();
        auto r = std::make_unique<rtl::QmRtl>(rtl_config(S.qm_model().config()));
        rtl::QmRtl* rp = r.get();
        rp->set_clock(c.clock_period_ps, [] { return core::now_ps(); });  // its waveform in simulated time
        m_rtl.push_back(rp);
        if (m_s.sw.queue_impl == "rtl") {
          S.enable_rtl(std::move(r));
        } else {
          S.enable_lockstep(std::move(r));
          S.lockstep_for_setup().compare_cycles([rp] { return rp->last_cycles(); },
                                                qm::CycleModel{c.cycles.mmu, c.buffer.read_cells_per_cycle});
        }
      }
#endif
      m_sw_index[n] = static_cast<int>(m_switches.size() - 1);
    }
    auto mac_at = [&](topology::PortRef r) -> link::Mac& {
      if (m_sw_index[r.node] >= 0) return *m_switches[static_cast<size_t>(m_sw_index[r.node])]->ports[r.port];
      return m_hosts[T.nodes[r.node].index]->port_mac(r.port);
    };
    for (const topology::LinkSpec& l : T.links) {
      link::LinkConfig lc = m_s.links.link;
      lc.rate_bps = l.rate_bps;
      lc.length_mm = l.length_mm;
      if (l.delay_ps != topology::kCableDelay) lc.fixed_delay_ps = l.delay_ps;
      if (l.loss >= 0.0) lc.loss = l.loss;
      for (const LossyLink& x : m_s.links.lossy)  // links.lossy: this cable's own loss
        if (&T.links[T.port_link[x.node][x.port]] == &l) lc.loss = x.loss;
      const std::string lname = "link_" + T.nodes[l.a.node].name + "_" + std::to_string(l.a.port) + "_" +
                                T.nodes[l.b.node].name + "_" + std::to_string(l.b.port);
      m_links.push_back(std::make_unique<link::Link>(lname.c_str(), lc, m_ledger, m_s.seed));
      link::connect(mac_at(l.a), *m_links.back(), mac_at(l.b));
    }
    // Scheduled failures: the cable is down over [down, up); each switch end
    // drops the port from its groups `detection` later, and takes it back.
    for (const LinkFailure& f : m_s.links.failures) {
      const uint32_t i = T.port_link.at(f.node).at(f.port);  // m_links follows T.links
      const topology::LinkSpec& l = T.links[i];
      m_links[i]->add_down(f.down_ps, f.up_ps);
      for (const topology::PortRef end : {l.a, l.b}) {
        if (m_sw_index[end.node] < 0) continue;
        sw::Switch& S = *m_switches[static_cast<size_t>(m_sw_index[end.node])];
        S.set_port_up_at(end.port, f.down_ps + f.detection_ps, false);
        if (f.up_ps != UINT64_MAX) S.set_port_up_at(end.port, f.up_ps + f.detection_ps, true);
      }
    }
  }
  for (auto& h : m_hosts) {
    h->set_listener(this);
    if (m_s.hosts.dcqcn && m_s.hosts.cc_log) h->set_cc_log(&m_cc);
    for (uint32_t p = 0; p < h->num_ports(); ++p) h->port_mac(p).set_event_log(&m_events, h->basename());
    h->set_event_log(&m_events);
  }
  if (m_s.pfc.storm) {
    const PfcSpec& p = m_s.pfc;
    m_hosts[p.storm_host_index]->start_pause_storm(p.storm_start_ps, static_cast<uint8_t>(p.storm_priority),
                                                   static_cast<uint16_t>(p.pause_quanta));
  }

  // Flow records live in a vector sized once, so hosts may keep pointers.
  m_flows.resize(m_s.flows.size());
  std::vector<uint32_t> next_qp(m_hosts.size(), host::kFirstQp);
  for (size_t i = 0; i < m_s.flows.size(); ++i) {
    const FlowSpec& fs = m_s.flows[i];
    host::FlowRecord& r = m_flows[i];
    r.id = static_cast<uint32_t>(i);
    r.src = fs.src_index;
    r.dst = fs.dst_index;
    r.message_bytes = fs.message_bytes;
    r.messages = fs.messages;
    r.rate_bps = fs.rate_bps;
    r.start_ps = fs.start_ps;
    r.pcp = static_cast<uint8_t>(fs.pcp);
    r.send = fs.send;
    r.dscp = static_cast<uint8_t>(fs.dscp);
    r.src_qp = next_qp[r.src]++;
    r.dst_qp = next_qp[r.dst]++;
  }
  // Dependencies (collectives): a flow starts once all the flows it waits for completed.
  m_waiting.assign(m_flows.size(), 0);
  m_dependents.assign(m_flows.size(), {});
  for (size_t i = 0; i < m_s.flows.size(); ++i) {
    for (uint32_t a : m_s.flows[i].after) {
      ++m_waiting[i];
      m_dependents[a].push_back(static_cast<uint32_t>(i));
    }
  }
  for (host::FlowRecord& r : m_flows) {
    const host::HostConfig& dst = m_hosts[r.dst]->config();
    m_hosts[r.src]->add_send_flow(&r, dst.ip, dst.mac, m_waiting[r.id] > 0);
    const host::HostConfig& src = m_hosts[r.src]->config();
    m_hosts[r.dst]->add_recv_flow(&r, src.ip, src.mac);
  }
  m_flows_left = m_flows.size();

  // Unloaded path of every flow (at each switch the member its hash unit
  // picks for the flow's data packets, whose key is built here as the
  // switch's ingress builds it from the headers): cables, switch pipelines,
  // store-and-forward of one MTU frame per switch, bottleneck rate.
  m_flow_base_ps.assign(m_flows.size(), 0);
  m_flow_bottleneck.assign(m_flows.size(), 0);
  for (size_t i = 0; i < m_flows.size(); ++i) {
    const host::FlowRecord& r = m_flows[i];
    uint64_t base = 0, bottleneck = std::min(r.rate_bps, m_hosts[r.src]->mac.rate_bps());
    if (m_s.topology.kind == "direct") {
      base = m_s.links.link.delay_ps();
    } else {
      const uint32_t frame = static_cast<uint32_t>(std::min<uint64_t>(r.message_bytes, m_s.hosts.mtu)) + 82;
      // The port the sender's QP hashes onto (a LAG), as the host sends.
      topology::PortRef at{T.hosts[r.src], host::lag_port(r.src, r.src_qp, m_hosts[r.src]->num_ports())};
      const uint32_t dst_node = T.hosts[r.dst];
      ecmp::Key key;
      key.src_ip = m_hosts[r.src]->config().ip;
      key.dst_ip = m_hosts[r.dst]->config().ip;
      key.proto = 17;  // UDP (packet::build_roce)
      key.sport = host::connection_udp_sport(r);
      key.dport = packet::kRoceUdpPort;
      key.dest_qp = r.dst_qp;
      for (int hop = 0; hop < 64; ++hop) {
        const topology::LinkSpec& l = T.link_at(at);
        base += topology::cable_delay_ps(l, m_s.links.link.delay_per_m_ps);
        bottleneck = std::min(bottleneck, l.rate_bps);
        const topology::PortRef next = T.peer(at);
        if (next.node == dst_node) break;
        const int si = m_sw_index[next.node];
        if (si < 0) break;
        const sw::SwitchConfig& c = m_switches[si]->config();
        const uint32_t cells = (frame + c.buffer.cell_bytes - 1) / c.buffer.cell_bytes;
        const uint64_t cyc = c.cycles.parser + c.cycles.lookup + c.ecmp.hash_cycles + c.cycles.mmu + c.cycles.egress +
                             (cells + c.buffer.write_cells_per_cycle - 1) / c.buffer.write_cells_per_cycle +
                             (cells + c.buffer.read_cells_per_cycle - 1) / c.buffer.read_cells_per_cycle;
        base += cyc * c.clock_period_ps;
        // Next hop toward the destination: the member the switch's hash unit picks.
        const uint32_t grp = m_routes[si]->lookup(key.dst_ip);
        if (grp == topology::kNoRoute) break;
        key.in_port = next.port;
        const uint32_t out = m_switches[si]->ecmp().pick(grp, key);
        if (out == ecmp::Unit::kNone) break;
        at = {next.node, out};
        base += core::serialization_ps(packet::kPreambleSfdBytes + frame, T.link_at(at).rate_bps);
      }
    }
    m_flow_base_ps[i] = base;
    m_flow_bottleneck[i] = bottleneck;
  }

  m_sampler = std::make_unique<Sampler>(m_s, m_hosts, m_switches, m_flows);
  if (m_s.sw.analytics.enabled && !m_switches.empty()) {
    std::vector<uint32_t> nodes(m_switches.size());
    for (uint32_t n = 0; n < m_sw_index.size(); ++n)
      if (m_sw_index[n] >= 0) nodes[static_cast<size_t>(m_sw_index[n])] = n;
    m_analytics = std::make_unique<FabricAnalytics>(m_s, m_switches, nodes);
  }
  if (m_switches.empty()) return;
  if (m_s.stats.paths) {
    std::vector<std::string> names;
    for (const auto& sw : m_switches) names.emplace_back(sw->basename());
    m_paths = std::make_unique<PathRecorder>(m_flows.size(), std::move(names));
  }
  // The switches report hops to the tracer, which passes them on to the path
  // recorder, or to the recorder alone.
  sw::HopObserver* hops = m_paths.get();
  if (m_s.stats.packet_trace.any()) {
    std::vector<sw::Switch*> sws;
    for (const auto& sw : m_switches) sws.push_back(sw.get());
    m_tracer = std::make_unique<PacketTracer>(m_s, std::move(sws), m_paths.get());
    hops = m_tracer.get();
  }
  if (hops)
    for (size_t i = 0; i < m_switches.size(); ++i) m_switches[i]->set_hop_observer(hops, static_cast<uint32_t>(i));
}

bool Fabric::open_analytics(const std::string& dir, std::string& why) {
  return !m_analytics || m_analytics->open(dir, why);
}

void Fabric::finish_analytics(uint64_t end_ps, std::vector<OutputFailure>& failed) {
  if (m_analytics) m_analytics->finish(end_ps, failed);
}

}  // namespace rocesim::sim

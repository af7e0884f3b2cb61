#include "sim/fabric.h"

#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/time.h"
#include "sim/outputs.h"

namespace rocesim::sim {

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

using namespace sc_core;

bool parse_pcap_request(const std::string& arg, PcapRequest& out, std::string& why) {
  const size_t colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size()) {
    why = "expected NODE:PORT, e.g. h0:0";
    return false;
  }
  out.arg = arg;
  out.node = arg.substr(0, colon);
  const std::string port = arg.substr(colon + 1);
  uint64_t v = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || v > 100000) {
      why = "PORT must be a port number, got '" + port + "'";
      return false;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out.port = static_cast<uint32_t>(v);
  return true;
}

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
        m_hosts.push_back(std::make_unique<host::Host>(
            node.name.c_str(), host_config(m_s, node.index, node.ip, T.mac_of(n, 0), rate), m_ledger));
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
      return m_hosts[T.nodes[r.node].index]->mac;
    };
    for (const topology::LinkSpec& l : T.links) {
      link::LinkConfig lc = m_s.links.link;
      lc.rate_bps = l.rate_bps;
      lc.length_mm = l.length_mm;
      const std::string lname = "link_" + T.nodes[l.a.node].name + "_" + std::to_string(l.a.port) + "_" +
                                T.nodes[l.b.node].name + "_" + std::to_string(l.b.port);
      m_links.push_back(std::make_unique<link::Link>(lname.c_str(), lc, m_ledger, m_s.seed));
      link::connect(mac_at(l.a), *m_links.back(), mac_at(l.b));
    }
  }
  for (auto& h : m_hosts) {
    h->set_listener(this);
    if (m_s.hosts.dcqcn && m_s.hosts.cc_log) h->set_cc_log(&m_cc);
    h->mac.set_event_log(&m_events, h->basename());
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
      topology::PortRef at{T.hosts[r.src], 0};
      const uint32_t dst_node = T.hosts[r.dst];
      ecmp::Key key;
      key.src_ip = m_hosts[r.src]->config().ip;
      key.dst_ip = m_hosts[r.dst]->config().ip;
      key.proto = 17;  // UDP (packet::build_roce)
      key.sport = host::data_udp_sport(r);
      key.dport = packet::kRoceUdpPort;
      key.dest_qp = r.dst_qp;
      for (int hop = 0; hop < 64; ++hop) {
        const topology::LinkSpec& l = T.link_at(at);
        base += l.length_mm * m_s.links.link.delay_per_m_ps / 1000;
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

  m_sample_ev.bind<&Fabric::on_sample>(this);
}

Fabric::~Fabric() {
  if (m_series) std::fclose(m_series);
  if (m_flow_series) std::fclose(m_flow_series);
}

uint64_t Fabric::rtl_cycles() const {
  uint64_t n = 0;
#if ROCESIM_HAVE_RTL
  for (const rtl::QmRtl* r : m_rtl) n += r->cycles();
#endif
  return n;
}

bool Fabric::trace_rtl(const std::string& stem, const std::function<bool(const std::string&)>& selected,
                       uint64_t from_ps, uint64_t to_ps, std::vector<std::string>& files, std::string& why) {
#if ROCESIM_HAVE_RTL
  // The driver's ports (rtl/qm/qm.sv), grouped as docs/rtl.md lists them.
  static const char* const kGroups[][2] = {
      {"operation", "clk rst op_valid op_ready op_kind op_in_port op_pg op_out_port op_queue op_cells op_bytes "
                    "op_lossless op_ecn_frame op_ecn op_rand32 op_discard"},
      {"result", "res_valid res_kind res_error res_verdict res_lossless res_in_headroom res_head_cell res_cells "
                 "res_bytes res_in_port res_pg res_out_port res_queue res_in_reserved res_in_shared res_headroom "
                 "res_eg_reserved res_eg_shared res_pg_reserved res_pg_shared res_pg_headroom res_pg_threshold res_pfc "
                 "res_ecn_decided res_ecn_fired res_ecn_mark res_ecn_drew res_cycles"},
      {"engine", "busy idle"}};
  for (size_t i = 0; i < m_rtl.size() && i < m_switches.size(); ++i) {
    const std::string name = m_switches[i]->basename();
    if (!selected(name)) continue;
    const std::string fst = stem + ".rtl." + name + ".fst", gtkw = stem + ".rtl." + name + ".gtkw";
    std::string g = "[*] rocesim RTL waveform of " + name + " (docs/waveforms.md): gtkwave " + fst + " " + gtkw + "\n";
    g += "[dumpfile] \"" + fst + "\"\n";
    for (const auto& grp : kGroups) {
      g += "@800200\n-" + std::string(grp[0]) + "\n@28\n";
      std::istringstream sigs(grp[1]);
      for (std::string sg; sigs >> sg;) g += "qm." + sg + "\n";  // the model's top scope (Vqm named "qm")
      g += "@1000200\n-" + std::string(grp[0]) + "\n";
    }
    if (!write_file_atomic(gtkw, g, why)) return false;
    m_rtl[i]->trace(fst, from_ps, to_ps);
    files.push_back(fst);
    files.push_back(gtkw);
  }
  return true;
#else
  (void)stem, (void)selected, (void)from_ps, (void)to_ps, (void)files, (void)why;
  return true;
#endif
}

uint64_t Fabric::ideal_fct_ps(const host::FlowRecord& r) const {
  // Every frame's wire time at the bottleneck, less the last frame's IFG (the
  // flow ends with its last bit), plus the unloaded path: exact for an isolated
  // flow on the direct topology.
  const uint64_t bytes = r.wire_bytes_sent > packet::kIfgBytes ? r.wire_bytes_sent - packet::kIfgBytes : 0;
  // RC with connection setup: the CM REQ/REP round trip comes first.
  const uint64_t setup = m_s.hosts.rc && m_s.hosts.cm ? 2 * m_flow_base_ps[r.id] : 0;
  return setup + core::serialization_ps(bytes, m_flow_bottleneck[r.id]) + m_flow_base_ps[r.id];
}

link::Mac* Fabric::find_mac(const std::string& node, uint32_t port, std::string& why) const {
  for (const auto& h : m_hosts) {
    if (node != h->basename()) continue;
    if (port != 0) {
      why = "node '" + node + "' has 1 port (port 0)";
      return nullptr;
    }
    return &h->mac;
  }
  for (const auto& s : m_switches) {
    if (node != s->basename()) continue;
    if (port >= s->num_ports()) {
      why = "node '" + node + "' has " + std::to_string(s->num_ports()) + " ports (0.." +
            std::to_string(s->num_ports() - 1) + ")";
      return nullptr;
    }
    return s->ports[port].get();
  }
  std::string names;
  size_t shown = 0;
  for (const auto& h : m_hosts) {
    if (shown++ < 4) names += (names.empty() ? "" : ", ") + std::string(h->basename());
  }
  for (const auto& s : m_switches) {
    if (shown++ < 8) names += (names.empty() ? "" : ", ") + std::string(s->basename());
  }
  if (shown > 8) names += ", ...";
  why = "no node '" + node + "' in this topology (nodes: " + names + ")";
  return nullptr;
}

std::string Fabric::check_pcap(const PcapRequest& r) const {
  std::string why;
  find_mac(r.node, r.port, why);
  return why;
}

bool Fabric::open_pcaps(const std::vector<PcapRequest>& reqs, const std::string& dir, std::string& why) {
  for (const PcapRequest& r : reqs) {
    link::Mac* mac = find_mac(r.node, r.port, why);
    const std::string base = dir + "/" + r.node + "-p" + std::to_string(r.port);
    auto rx = std::make_unique<link::PcapWriter>(base + "-rx.pcap", r.snaplen);
    auto tx = std::make_unique<link::PcapWriter>(base + "-tx.pcap", r.snaplen);
    if (!rx->open() || !tx->open()) {
      why = "cannot write " + base + "-*.pcap: " + std::strerror(errno);
      return false;
    }
    mac->set_pcap(rx.get(), tx.get());
    m_pcaps.push_back(std::move(rx));
    m_pcaps.push_back(std::move(tx));
  }
  return true;
}

bool Fabric::open_op_record(const std::string& path, std::string& why) {
  m_ops_path = path;
  m_ops = std::fopen((path + ".partial").c_str(), "w");
  if (!m_ops) {
    why = "--record-ops " + path + ": cannot write " + path + ".partial: " + std::strerror(errno);
    return false;
  }
  std::string head = "rocesim-qm-ops 1\n# scenario " + m_s.name + ", seed " + std::to_string(m_s.seed) +
                     "; format: tlm/qm/ops_file.h; replay: qm_replay FILE\n";
  for (size_t i = 0; i < m_switches.size(); ++i)
    head += qm::config_text(static_cast<uint32_t>(i), m_switches[i]->basename(), m_switches[i]->qm_model().config());
  std::fputs(head.c_str(), m_ops);
  for (size_t i = 0; i < m_switches.size(); ++i) m_switches[i]->record_ops(m_ops, static_cast<uint32_t>(i));
  return true;
}

bool Fabric::open_time_series(const std::string& dir, std::string& why) {
  if (m_s.stats.interval_ps == 0) return true;
  if (m_s.stats.flow_series) {
    m_flow_series_path = dir + "/flow_series.csv";
    m_flow_series = std::fopen((m_flow_series_path + ".partial").c_str(), "w");
    if (!m_flow_series) {
      why = "cannot write " + m_flow_series_path + ": " + std::strerror(errno);
      return false;
    }
    std::fputs("time_ns,flow,src,dst,bytes_received,throughput_bps\n", m_flow_series);
    m_last_flow_bytes.assign(m_flows.size(), 0);
    m_sample_ev.after(m_s.stats.interval_ps);
  }
  if (m_switches.empty()) return true;
  m_series_path = dir + "/queues.csv";
  m_series = std::fopen((m_series_path + ".partial").c_str(), "w");
  if (!m_series) {
    why = "cannot write " + m_series_path + ": " + std::strerror(errno);
    return false;
  }
  std::fputs("time_ns,node,port,queue,depth_packets,depth_bytes,depth_cells,enq_packets,deq_packets,"
             "dropped_packets,deq_bytes_interval,buffer_used_cells,ecn_marked,ecn_mark_ratio\n",
             m_series);
  // One slot per (switch, port, queue): a switch may have any number of ports.
  m_queue_base.clear();
  size_t slots = 0;
  for (const auto& sw : m_switches) {
    m_queue_base.push_back(slots);
    slots += sw->num_ports() * 8;
  }
  m_last_deq.assign(slots, 0);
  m_last_ecn.assign(slots, ecn::Counters{});
  m_sample_ev.after(m_s.stats.interval_ps);
  return true;
}

void Fabric::on_sample() {
  if (m_series) sample_queues();
  if (m_flow_series) {
    // Per-flow receive throughput over the last interval, for flows that moved.
    const uint64_t now = core::now_ps();
    char line[160];
    for (const host::FlowRecord& f : m_flows) {
      const uint64_t d = f.bytes_received - m_last_flow_bytes[f.id];
      if (!d) continue;
      m_last_flow_bytes[f.id] = f.bytes_received;
      std::snprintf(line, sizeof line, "%" PRIu64 ".%03" PRIu64 ",%u,h%u,h%u,%" PRIu64 ",%.0f\n", now / 1000, now % 1000,
                    f.id, f.src, f.dst, f.bytes_received,
                    static_cast<double>(d) * 8e12 / static_cast<double>(m_s.stats.interval_ps));
      std::fputs(line, m_flow_series);
    }
  }
  // Keep why the first write failed (a full disk) for the report at close.
  if (m_series && !m_series_errno && std::ferror(m_series)) m_series_errno = errno ? errno : EIO;
  if (m_flow_series && !m_flow_series_errno && std::ferror(m_flow_series))
    m_flow_series_errno = errno ? errno : EIO;
  m_sample_ev.after(m_s.stats.interval_ps);
}

void Fabric::sample_queues() {
  const uint64_t now = core::now_ps();
  char line[256];
  for (size_t si = 0; si < m_switches.size(); ++si) {
    const sw::Switch& s = *m_switches[si];
    for (uint32_t p = 0; p < s.num_ports(); ++p) {
      for (uint32_t q = 0; q < 8; ++q) {
        const sw::QueueStats& qs = s.queue_stats(p, q);
        const size_t key = m_queue_base[si] + p * 8 + q;
        const uint64_t deq_bytes = qs.deq_bytes - m_last_deq[key];
        // Only queues that hold something or moved something since the last sample.
        if (qs.depth_packets == 0 && deq_bytes == 0) continue;
        m_last_deq[key] = qs.deq_bytes;
        const mmu::QueueCounters& qc = s.mmu().queue_counters(static_cast<uint16_t>(p), static_cast<uint8_t>(q));
        const ecn::Counters ec = s.ecn_counters(p, q);
        const ecn::Counters d = ec - m_last_ecn[key];
        m_last_ecn[key] = ec;
        std::snprintf(line, sizeof line,
                      "%" PRIu64 ".%03" PRIu64 ",%s,%u,%u,%u,%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                      ",%" PRIu64 ",%u,%" PRIu64 ",%.6f\n",
                      now / 1000, now % 1000, s.basename(), p, q, qs.depth_packets, qs.depth_bytes, qs.depth_cells,
                      qs.enq_packets, qs.deq_packets, qc.dropped.total_packets(), deq_bytes, s.mmu().total_used(),
                      ec.marked, d.seen ? static_cast<double>(d.marked) / static_cast<double>(d.seen) : 0.0);
        std::fputs(line, m_series);
      }
    }
  }
}

std::string Fabric::hpcc_flow_file() const {
  // HPCC's traffic format (count, then "src dst pg dport size start_s"), one
  // line per flow with all its bytes (HPCC has no messages within a flow), so
  // the run's flows replay in other simulators.
  std::vector<traffic::Flow> v;
  for (const host::FlowRecord& r : m_flows) {
    traffic::Flow f;
    f.src = r.src;
    f.dst = r.dst;
    f.size_bytes = r.total_bytes();
    f.start_ps = m_s.flows[r.id].start_ps;
    f.pcp = r.pcp;
    f.dscp = r.dscp;
    v.push_back(f);
  }
  std::ostringstream o;
  traffic::write_flows(o, v);
  return o.str();
}

std::string Fabric::cc_csv() const { return event_csv(m_cc, kCcCsvHeader); }

std::string Fabric::pfc_csv() const { return event_csv(m_events, kPfcCsvHeader); }

bool Fabric::open_event_logs(const std::string& dir, std::string& why) {
  m_pfc_stream = std::make_unique<EventCsvStream>();
  if (!m_pfc_stream->open(dir + "/pfc.csv", kPfcCsvHeader, why)) return false;
  if (!has_cc_log()) return true;
  m_cc_stream = std::make_unique<EventCsvStream>();
  return m_cc_stream->open(dir + "/cc.csv", kCcCsvHeader, why);
}

bool Fabric::close_streams() {
  std::vector<OutputFailure> failed;
  return close_streams(failed);
}

namespace {

// Closes a streamed CSV and renames NAME.partial to NAME; on any write error
// (a full disk is seen here at the latest) removes the .partial instead.
// first_err: the errno of the first failed write (Fabric::on_sample records it).
void close_stream(std::FILE*& f, const std::string& path, int first_err, std::vector<OutputFailure>& failed) {
  if (!f) return;
  const std::string tmp = path + ".partial";
  errno = 0;
  bool ok = std::ferror(f) == 0;
  int err = first_err;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  f = nullptr;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (ok) return;
  std::remove(tmp.c_str());
  failed.push_back({path, err ? std::strerror(err) : "write error"});
}

}  // namespace

bool Fabric::close_streams(std::vector<OutputFailure>& failed) {
  const size_t before = failed.size();
  // Every output is attempted: one failure does not keep the others as .partial.
  for (auto& p : m_pcaps) {
    errno = 0;
    if (p->close()) continue;
    const int err = errno;
    std::remove((p->path() + ".partial").c_str());
    failed.push_back({p->path(), err ? std::strerror(err) : "write error"});
  }
  close_stream(m_flow_series, m_flow_series_path, m_flow_series_errno, failed);
  close_stream(m_ops, m_ops_path, 0, failed);
  close_stream(m_series, m_series_path, m_series_errno, failed);
  if (m_pfc_stream) m_pfc_stream->close(m_events, failed);
  if (m_cc_stream) m_cc_stream->close(m_cc, failed);
  return failed.size() == before;
}

void Fabric::on_flow_done(host::FlowRecord& f) {
  for (uint32_t d : m_dependents[f.id])
    if (--m_waiting[d] == 0) m_hosts[m_flows[d].src]->release_flow(&m_flows[d]);
  if (--m_flows_left == 0 && m_s.sim.stop_when_done) sc_stop();
}

size_t Fabric::frames_held() const {
  size_t n = 0;
  for (const auto& h : m_hosts) n += h->frames_held();
  for (const auto& s : m_switches) n += s->frames_held();
  return n;
}

void Fabric::check_invariants(bool on) {
  if (on) m_inv = std::make_unique<InvariantChecker>(*this);
  else m_inv.reset();
}

RunResult Fabric::run(const RunControl& ctl) {
  RunResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t end_ps = m_s.sim.duration_ps;
  if (end_ps == 0 || (m_flows_left == 0 && m_s.sim.stop_when_done)) {
    sc_start(SC_ZERO_TIME);
  } else {
    // Slices of simulated time, sized to take about 10 ms of wall time each:
    // a signal or the wall-clock limit is honoured within a slice, at a cost of
    // one kernel entry per slice (no process polls). sc_start(t) leaves the
    // processes due at exactly t runnable for the next call, so the events and
    // their order are those of one sc_start(duration).
    uint64_t slice_ps = std::min<uint64_t>(end_ps, 1000000);  // 1 us to begin with
    core::Calendar& calendar = core::Calendar::get();
    for (;;) {
      const uint64_t now = core::now_ps();
      if (now >= end_ps || sc_get_status() == SC_STOPPED) break;  // the end, or sc_stop (stop_when_done)
      if (ctl.signal && *ctl.signal) {
        r.stop_signal = *ctl.signal;
        break;
      }
      const auto ts = std::chrono::steady_clock::now();
      if (ctl.max_wall_s > 0 && std::chrono::duration<double>(ts - t0).count() >= ctl.max_wall_s) {
        r.wall_limit = true;
        break;
      }
      const uint64_t step = std::min(slice_ps, end_ps - now);
      // Checked runs also stop at each multiple of kInvariantSlicePs, where they are checked.
      const uint64_t d = m_inv ? std::min(step, kInvariantSlicePs - now % kInvariantSlicePs) : step;
      // The calendar runs ahead of the kernel within the slice (core/calendar.h).
      calendar.set_run_ahead(now + d);
      sc_start(core::ps(d));
      if (m_pfc_stream) m_pfc_stream->flush(m_events, core::now_ps());  // every row before now is in
      if (m_cc_stream) m_cc_stream->flush(m_cc, core::now_ps());
      if (m_inv && core::now_ps() % kInvariantSlicePs == 0 && !m_inv->check(false)) break;
      const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
      if (w < 0.005 && slice_ps < end_ps) slice_ps *= 2;
      else if (w > 0.02 && slice_ps > 1000) slice_ps /= 2;
    }
  }
  core::Calendar::get().set_run_ahead(0);  // later sc_start calls (tests) step without it
  if (m_inv) m_inv->check(true);  // always at the end (a no-op after a violation)
  const auto t1 = std::chrono::steady_clock::now();
  r.wall_time_s = std::chrono::duration<double>(t1 - t0).count();
  r.sim_time_ps = core::now_ps();
  r.events = m_ledger.events();
  r.link_hops = m_ledger.link_hops();
  r.sent = m_ledger.sent();
  r.delivered = m_ledger.delivered();
  r.dropped = m_ledger.dropped();
  r.in_flight = frames_held();
  r.pool_in_use = m_ledger.alive();
  r.conserved = r.sent == r.delivered + r.dropped + r.in_flight && r.pool_in_use == r.in_flight;
  r.all_flows_done = m_flows_left == 0;
  r.last_delivery_ps = m_ledger.last_delivery_ps();
  r.deadlock = r.in_flight > 0 && r.sim_time_ps - r.last_delivery_ps >= m_s.sim.deadlock_after_ps;
  return r;
}

}  // namespace rocesim::sim

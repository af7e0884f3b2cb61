#include "host/host.h"

#include <algorithm>
#include <iterator>

#include "core/rng.h"
#include "core/time.h"

namespace rocesim::host {

using namespace sc_core;
namespace pk = rocesim::packet;

namespace {
// Min-heaps of (time, QP index): the earliest time on top, the lower index first at equal times.
constexpr auto kLater = std::greater<std::pair<uint64_t, uint32_t>>();
}  // namespace

Host::Host(sc_module_name name, const HostConfig& cfg, link::Ledger& ledger)
    : sc_module(name), mac("mac", 0, cfg.port, ledger), tx_out("tx_out"), rx_in("rx_in"), m_cfg(cfg), m_ledger(ledger) {
  tx_out.bind(static_cast<link::pkt_bw_if&>(*this));
  rx_in.bind(static_cast<link::pkt_fw_if&>(*this));
  tx_out.bind(mac.tx_in);
  mac.rx_out.bind(rx_in);
  mac.set_ready(this);
  if (cfg.ports == 2) {
    // Port 1 of the LAG: its own MAC and sockets, bound to this host as port 0's are.
    m_mac1 = std::make_unique<link::Mac>("mac1", 1, cfg.port, ledger);
    m_tx_out1 = std::make_unique<link::pkt_initiator_socket>("tx_out1");
    m_rx_in1 = std::make_unique<link::pkt_target_socket>("rx_in1");
    m_tx_out1->bind(static_cast<link::pkt_bw_if&>(*this));
    m_rx_in1->bind(static_cast<link::pkt_fw_if&>(*this));
    m_tx_out1->bind(m_mac1->tx_in);
    m_mac1->rx_out.bind(*m_rx_in1);
    m_mac1->set_ready(this);
  }
  m_wake_ev.bind<&Host::on_wake>(this);
  m_storm_ev.bind<&Host::on_storm>(this);
  m_rto_ev.bind<&Host::on_rto>(this);
  m_cc_ev.bind<&Host::on_cc>(this);
  m_drain_ev.bind<&Host::on_drain>(this);
  m_rx_refresh_ev.bind<&Host::on_rx_refresh>(this);
  m_rx_refresh_period_ps =
      cfg.rx_refresh_ps ? cfg.rx_refresh_ps : pfc::quanta_ps(cfg.pause_quanta, mac.rate_bps()) / 2;
  std::fill(std::begin(m_rx_refresh_at), std::end(m_rx_refresh_at), UINT64_MAX);
}

void Host::arm_rx_refresh(uint64_t t_ps) {
  // One timer for all priorities at the earliest schedule; a timer keeps the
  // earliest time it is armed for, so only an earlier time re-arms it.
  if (t_ps >= m_rx_refresh_ev_at) return;
  m_rx_refresh_ev_at = t_ps;
  m_rx_refresh_ev.at(t_ps);
}

void Host::on_rx_refresh() {
  // While the buffer stays above XON, keep the switch paused: each XOFF
  // priority re-sends at its own schedule (XOFF transition + k x period). The
  // event may fire for a schedule an XON has since cancelled: nothing is due then.
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  m_rx_refresh_ev_at = UINT64_MAX;
  uint64_t next = UINT64_MAX;
  for (int q = 0; q < 8; ++q) {
    uint64_t& at = m_rx_refresh_at[q];
    if (at == UINT64_MAX) continue;
    if (at <= now) {
      ++m_rx_refreshes;
      rx_pause(static_cast<uint8_t>(q), true);
      at += m_rx_refresh_period_ps;
    }
    next = std::min(next, at);
  }
  if (next != UINT64_MAX) arm_rx_refresh(next);
}

void Host::send_pause(uint8_t prio, uint16_t quanta) {
  // On every port: each of a LAG's ports feeds the one receive buffer.
  uint16_t timers[8] = {};
  timers[prio] = quanta;
  for (uint32_t port = 0; port < num_ports(); ++port) {
    pk::Packet* p = m_ledger.create();
    pk::build_pfc(*p, m_cfg.mac, static_cast<uint16_t>(1u << prio), timers);
    p->created_ps = core::now_ps();
    port_mac(port).send_control(p);
  }
}

void Host::rx_pause(uint8_t prio, bool xoff) { send_pause(prio, xoff ? m_cfg.pause_quanta : 0); }

void Host::kick_all() {
  mac.kick();
  if (m_mac1) m_mac1->kick();
}

void Host::rx_transition(uint8_t prio, bool xoff) {
  // A transition starts (XOFF) or ends (XON) the priority's refresh schedule.
  const uint64_t now = core::now_ps();
  m_rx_refresh_at[prio] = xoff ? now + m_rx_refresh_period_ps : UINT64_MAX;
  if (xoff) arm_rx_refresh(m_rx_refresh_at[prio]);
  if (m_log)
    for (uint32_t port = 0; port < num_ports(); ++port)
      m_log->push_back(pfc::Event{now, basename(), port, prio, xoff ? "xoff" : "xon"});
  rx_pause(prio, xoff);
}

void Host::on_drain() {
  // The head frame has been drained from the receive buffer: process it.
  m_ledger.count_event();
  pk::Packet* p = m_rxq.front();
  m_rxq.pop_front();
  m_rx_bytes -= p->frame_len();
  const uint8_t prio = p->meta.pcp;
  process(p);
  if (m_cfg.rx_pfc && m_rx_bytes <= m_cfg.rx_xon_bytes && m_rx_xoff) {
    for (int q = 0; q < 8; ++q)
      if (m_rx_xoff >> q & 1) rx_transition(static_cast<uint8_t>(q), false);
    m_rx_xoff = 0;
  }
  (void)prio;
  if (m_rxq.empty()) {
    m_draining = false;
    return;
  }
  m_drain_ev.after(core::serialization_ps(m_rxq.front()->frame_len(), m_cfg.rx_drain_bps));
}

void Host::log_rp(void* ctx, const cc::RpSample& s) {
  auto* h = static_cast<std::pair<Host*, uint32_t>*>(ctx);
  if (h->first->m_cc_log) h->first->m_cc_log->push_back(CcSample{h->second, s});
  const HostTrace* t = h->first->m_trace;
  if (t && t->flow_rate[h->second] != link::kNoTrace) t->rec->set(t->flow_rate[h->second], s.time_ps, s.rate_bps);
}

void Host::set_trace(const HostTrace* t) {
  m_trace = t;
  if (!t) return;
  for (SendState& s : m_send) {
    if (!s.rp || t->flow_rate[s.rec->id] == link::kNoTrace) continue;
    t->rec->set(t->flow_rate[s.rec->id], core::now_ps(), s.rp->rate_bps());
    if (m_cc_log) continue;  // the observer is installed (add_send_flow)
    m_rp_ctx.push_back(std::make_unique<std::pair<Host*, uint32_t>>(this, s.rec->id));
    s.rp->set_observer(&Host::log_rp, m_rp_ctx.back().get());
  }
}

void Host::cc_update(uint32_t i) {
  SendState& s = m_send[i];
  const uint64_t key = s.rp->next_event_ps();
  if (key == s.cc_key) return;
  s.cc_key = key;
  if (key == cc::DcqcnRp::kNever) return;  // the old entry, if any, is stale now
  m_cc_heap.emplace_back(key, i);
  std::push_heap(m_cc_heap.begin(), m_cc_heap.end(), kLater);
}

void Host::arm_cc() {
  // The earliest DCQCN timer of all QPs: the heap's top, once stale entries are gone.
  while (!m_cc_heap.empty() && m_send[m_cc_heap.front().second].cc_key != m_cc_heap.front().first) {
    std::pop_heap(m_cc_heap.begin(), m_cc_heap.end(), kLater);
    m_cc_heap.pop_back();
  }
  const uint64_t t = m_cc_heap.empty() ? UINT64_MAX : m_cc_heap.front().first;
  if (t == UINT64_MAX || t >= m_cc_at) return;
  const uint64_t now = core::now_ps();
  m_cc_at = std::max(t, now);
  m_cc_ev.at(m_cc_at);
}

void Host::on_cc() {
  // DCQCN timers (alpha decay, rate increase) at their exact times.
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  m_cc_at = UINT64_MAX;
  // Every reaction point with a timer due, in QP order (the order of their
  // cc.csv rows at equal times); advance() does nothing for the others.
  m_due.clear();
  while (!m_cc_heap.empty() && m_cc_heap.front().first <= now) {
    const TimedIndex e = m_cc_heap.front();
    std::pop_heap(m_cc_heap.begin(), m_cc_heap.end(), kLater);
    m_cc_heap.pop_back();
    if (m_send[e.second].cc_key == e.first) m_due.push_back(e.second);
  }
  std::sort(m_due.begin(), m_due.end());
  m_due.erase(std::unique(m_due.begin(), m_due.end()), m_due.end());
  for (uint32_t i : m_due) {
    m_send[i].cc_key = rc::kNever;  // its entry is popped
    m_send[i].rp->advance(now);
    cc_update(i);
  }
  arm_cc();
  kick_all();
}

void Host::start_pause_storm(uint64_t start_ps, uint8_t prio, uint16_t quanta) {
  m_storm_prio = prio;
  m_storm_quanta = quanta;
  m_storm_ev.at(std::max(start_ps, core::now_ps()));
}

void Host::on_storm() {
  m_ledger.count_event();
  // The first storm frame is the XOFF transition; the rest keep it (refreshes).
  if (!m_storm_started && m_log)
    for (uint32_t port = 0; port < num_ports(); ++port)
      m_log->push_back(pfc::Event{core::now_ps(), basename(), port, m_storm_prio, "xoff"});
  m_storm_started = true;
  send_pause(m_storm_prio, m_storm_quanta);
  m_storm_ev.after(pfc::quanta_ps(m_storm_quanta, mac.rate_bps()) / 2);
}

void Host::add_send_flow(FlowRecord* f, uint32_t peer_ip, pk::Mac peer_mac, bool blocked) {
  const uint32_t ppm = static_cast<uint32_t>((f->message_bytes + m_cfg.mtu - 1) / m_cfg.mtu);
  SendState s(f, peer_ip, peer_mac, ppm, rc::RcRequester(rc_config(), ppm, static_cast<uint64_t>(ppm) * f->messages));
  s.blocked = blocked;
  s.next_ps = f->start_ps;
  if (m_cfg.rc && m_cfg.dcqcn) {
    cc::DcqcnConfig c = m_cfg.dcqcn_cfg;
    c.line_rate_bps = mac.rate_bps();
    s.rp = std::make_unique<cc::DcqcnRp>(c);
    if (m_cc_log) {
      // The observer context lives as long as the host (a small vector of pairs, one per flow).
      m_rp_ctx.push_back(std::make_unique<std::pair<Host*, uint32_t>>(this, f->id));
      s.rp->set_observer(&Host::log_rp, m_rp_ctx.back().get());
    }
  }
  s.udp_sport = connection_udp_sport(*f);
  s.port = lag_port(m_cfg.index, f->src_qp, num_ports());
  const size_t qi = f->src_qp - kFirstQp;
  if (m_send_by_qp.size() <= qi) m_send_by_qp.resize(qi + 1, -1);
  m_send_by_qp[qi] = static_cast<int>(m_send.size());
  const uint32_t i = static_cast<uint32_t>(m_send.size());
  m_send_by_flow[f->id] = i;
  m_send.push_back(std::move(s));
  // Room for every QP, so that the lists do not grow while the simulation
  // runs (doubling: adding n flows costs O(n)).
  if (m_active.capacity() < m_send.size()) {
    const size_t cap = 2 * m_send.size();
    m_active.reserve(cap);
    m_starts.reserve(cap);
    m_timed.reserve(cap);
    m_due.reserve(cap);
    if (m_send[i].rp) m_cc_heap.reserve(2 * cap);
  }
  if (blocked) return;
  start_qp(i);
  // Wake at the earliest flow start; a timer keeps the earliest time it is armed for.
  m_wake_ev.at(std::max(f->start_ps, core::now_ps()));
  m_wake_at = std::min(m_wake_at, f->start_ps);
}

uint16_t connection_udp_sport(const FlowRecord& f) {
  // RoCEv2 puts flow entropy in the UDP source port (IBTA Annex A17); keep it in 0xC000..0xFFFF.
  // One port per connection, used by every frame of it in both directions:
  // the requester's data, the responder's ACKs/NAKs/CNPs and the CM MADs
  // each way. A17 derives the port from the GRH flow label, which the CM REQ
  // carries (Primary Flow Label) so that both ends use the same one.
  return static_cast<uint16_t>(
      0xC000 | (core::fnv1a64(std::to_string(f.src_qp) + ":" + std::to_string(f.dst_qp) + ":" + std::to_string(f.src)) &
                0x3fff));
}

uint32_t lag_port(uint32_t host, uint32_t qp, uint32_t ports) {
  if (ports < 2) return 0;
  // Fibonacci hashing of (host, QP): the high bits of the product.
  return static_cast<uint32_t>(((uint64_t{host} << 32 | qp) * 0x9E3779B97F4A7C15ull) >> 32) % ports;
}

void Host::release_flow(FlowRecord* f) {
  const size_t qi = f->src_qp - kFirstQp;
  SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
  if (!s.blocked) return;
  s.blocked = false;
  const uint64_t now = core::now_ps();
  f->start_ps = std::max(f->start_ps, now);
  s.next_ps = f->start_ps;
  start_qp(static_cast<uint32_t>(m_send_by_qp[qi]));
  if (f->start_ps < m_wake_at) {
    m_wake_at = f->start_ps;
    m_wake_ev.at(f->start_ps);
  }
}

void Host::add_recv_flow(FlowRecord* f, uint32_t peer_ip, pk::Mac peer_mac) {
  const size_t idx = f->dst_qp - kFirstQp;
  if (m_recv.size() <= idx) m_recv.resize(idx + 1);
  RecvState& r = m_recv[idx];
  r.rec = f;
  r.peer_ip = peer_ip;
  r.peer_mac = peer_mac;
  r.np = cc::DcqcnNp(m_cfg.min_time_between_cnps_ps);
  r.rx = rc::RcResponder(rc_config(), f->total_bytes());
  m_recv_by_flow[f->id] = static_cast<uint32_t>(idx);
  // The responder answers on the connection's own UDP source port (see
  // connection_udp_sport): its ACKs, NAKs and CNPs hash like the data under a
  // symmetric ECMP hash, so both directions can take the same switches.
  r.udp_sport = connection_udp_sport(*f);
  r.port = lag_port(m_cfg.index, f->dst_qp, num_ports());
}

void Host::on_wake() {
  m_ledger.count_event();
  m_wake_at = UINT64_MAX;
  kick_all();
}

rc::RcConfig Host::rc_config() const {
  rc::RcConfig c;
  c.ack_every = m_cfg.ack_every;
  c.max_outstanding = m_cfg.max_outstanding;
  c.rto_ps = m_cfg.rto_ps;
  c.cm = m_cfg.rc && m_cfg.cm;  // open loop: no connection setup
  return c;
}

void Host::start_qp(uint32_t i) {
  // Before its start a flow only sets the wake-up (next_frame reads the heap's top).
  const SendState& s = m_send[i];
  if (s.next_ps > core::now_ps() && s.qp.has_data()) {
    m_starts.emplace_back(s.next_ps, i);
    std::push_heap(m_starts.begin(), m_starts.end(), kLater);
  } else {
    activate(i);
  }
}

void Host::activate(uint32_t i) {
  SendState& s = m_send[i];
  if (s.active) return;
  s.active = true;
  m_active.insert(std::lower_bound(m_active.begin(), m_active.end(), i), i);
}

void Host::time_qp(uint32_t i) {
  SendState& s = m_send[i];
  if (s.timed) return;
  s.timed = true;
  m_timed.push_back(i);
}

bool Host::rc_received(const FlowRecord& f, uint64_t& next_index) const {
  const size_t idx = f.dst_qp - kFirstQp;
  if (f.dst_qp < kFirstQp || idx >= m_recv.size() || m_recv[idx].rec != &f) return false;
  next_index = m_recv[idx].rx.epsn_index();
  return true;
}

bool Host::rc_sent(const FlowRecord& f, uint64_t& high_sent, uint64_t& acked) const {
  const size_t qi = f.src_qp - kFirstQp;
  if (f.src_qp < kFirstQp || qi >= m_send_by_qp.size() || m_send_by_qp[qi] < 0) return false;
  const SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
  if (s.rec != &f) return false;
  high_sent = s.qp.high_sent();
  acked = s.qp.snd_una();
  return true;
}

void Host::headers(pk::EthSpec& eth, pk::Ipv4Spec& ip, pk::Mac peer_mac, uint32_t peer_ip, uint8_t pcp, uint8_t dscp,
                   uint8_t ecn) const {
  eth.dst = peer_mac;
  eth.src = m_cfg.mac;
  eth.vlan = m_cfg.vlan;
  eth.pcp = pcp;
  ip.src = m_cfg.ip;
  ip.dst = peer_ip;
  ip.dscp = dscp;
  ip.ecn = ecn;
}

uint32_t Host::payload_of(const SendState& s, uint64_t idx) const {
  const uint64_t offset = (idx % s.ppm) * m_cfg.mtu;
  return static_cast<uint32_t>(std::min<uint64_t>(s.rec->message_bytes - offset, m_cfg.mtu));
}

pk::Packet* Host::make_packet(SendState& s, const rc::TxPacket& tx) {
  FlowRecord& r = *s.rec;
  const uint64_t idx = tx.index;
  const uint64_t msg = idx / s.ppm;
  const uint64_t seg = idx % s.ppm;
  const uint64_t offset = seg * m_cfg.mtu;
  const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(r.message_bytes - offset, m_cfg.mtu));
  const bool first = seg == 0;
  const bool last = seg + 1 == s.ppm;

  pk::BthSpec bth;
  if (r.send) {  // SEND: no RETH, the receiver's posted buffer takes it
    bth.opcode = first && last ? pk::op::kSendOnly
                 : first       ? pk::op::kSendFirst
                 : last        ? pk::op::kSendLast
                               : pk::op::kSendMiddle;
  } else {
    bth.opcode = first && last ? pk::op::kWriteOnly
                 : first       ? pk::op::kWriteFirst
                 : last        ? pk::op::kWriteLast
                               : pk::op::kWriteMiddle;
  }
  // Request an ACK at message end, and every ack_every packets under RC.
  bth.ackreq = m_cfg.rc ? s.qp.ack_request(idx) : last;
  bth.pad_count = pk::ib_pad_count(len);  // payload + pad is a multiple of 4 (IBTA 9.2.1)
  bth.dest_qp = r.dst_qp;
  bth.psn = tx.psn;
  pk::RethSpec reth;
  reth.va = 0x10000000ull + msg * r.message_bytes;
  reth.rkey = 0x1000 + r.dst_qp;
  reth.dma_len = static_cast<uint32_t>(std::min<uint64_t>(r.message_bytes, UINT32_MAX));

  pk::EthSpec eth;
  pk::Ipv4Spec ip;
  headers(eth, ip, s.peer_mac, s.peer_ip, r.pcp, r.dscp, m_cfg.ecn);
  ip.id = static_cast<uint16_t>(r.packets_sent);

  pk::Packet* p = m_ledger.create();
  pk::build_roce(*p, eth, ip, s.udp_sport, bth, first && !r.send ? &reth : nullptr, nullptr, len);
  p->flow_id = r.id;
  p->path_dir = static_cast<uint8_t>(pk::PathDir::fwd);
  p->created_ps = core::now_ps();
  p->prio = r.pcp;
  ++r.packets_sent;
  if (tx.retransmission) {
    ++r.retransmitted;
  } else {
    r.bytes_sent += len;
    r.wire_bytes_sent += p->wire_bytes();
  }
  return p;
}

void Host::queue_ctrl(pk::Packet* p, uint32_t port) {
  m_ctrl[port].push_back(p);
  port_mac(port).kick();
}

void Host::send_ack(RecvState& st, uint32_t psn, uint8_t syndrome) {
  FlowRecord& r = *st.rec;
  if (syndrome == rc::kNakPsnSeqError) ++r.naks_sent;
  pk::EthSpec eth;
  pk::Ipv4Spec ip;
  headers(eth, ip, st.peer_mac, st.peer_ip, r.pcp, r.dscp, m_cfg.ecn);
  pk::BthSpec bth;
  bth.opcode = pk::op::kAck;
  bth.dest_qp = r.src_qp;
  bth.psn = psn & 0xffffff;
  pk::AethSpec aeth;
  aeth.syndrome = syndrome;
  aeth.msn = static_cast<uint32_t>(r.messages_received & 0xffffff);
  pk::Packet* p = m_ledger.create();
  pk::build_roce(*p, eth, ip, st.udp_sport, bth, nullptr, &aeth, 0);
  p->flow_id = r.id;
  p->path_dir = static_cast<uint8_t>(pk::PathDir::rev);
  p->created_ps = core::now_ps();
  p->prio = r.pcp;
  queue_ctrl(p, st.port);
}

void Host::send_cnp(RecvState& st) {
  FlowRecord& r = *st.rec;
  pk::EthSpec eth;
  pk::Ipv4Spec ip;
  headers(eth, ip, st.peer_mac, st.peer_ip, m_cfg.cnp_pcp, m_cfg.cnp_dscp, 0b10);
  pk::Packet* p = m_ledger.create();
  pk::build_cnp(*p, eth, ip, st.udp_sport, r.src_qp);
  p->flow_id = r.id;
  p->path_dir = static_cast<uint8_t>(pk::PathDir::rev);
  p->created_ps = core::now_ps();
  p->prio = m_cfg.cnp_pcp;
  ++r.cnps_sent;
  queue_ctrl(p, st.port);
}

void Host::send_cm(uint16_t attr, const FlowRecord& f, uint32_t peer_ip, pk::Mac peer_mac, bool from_sender,
                   uint32_t port) {
  pk::EthSpec eth;
  pk::Ipv4Spec ip;
  headers(eth, ip, peer_mac, peer_ip, f.pcp, f.dscp, 0);
  pk::CmSpec cm;
  cm.attr_id = attr;
  cm.tid = 0x524f4345ull << 16 | f.id;  // "ROCE" + flow id
  // Communication ids: the sender's is 2*id+1, the receiver's 2*id+2.
  cm.local_comm_id = from_sender ? 2 * f.id + 1 : 2 * f.id + 2;
  cm.remote_comm_id = attr == pk::cm::kReq ? 0 : (from_sender ? 2 * f.id + 2 : 2 * f.id + 1);
  cm.local_qpn = from_sender ? f.src_qp : f.dst_qp;
  cm.starting_psn = 0;
  // The connection's port, both ways, and in the REQ its flow label: A17's
  // UDP source port of a label below 2^14 is 0xC000 | label.
  const uint16_t sport = connection_udp_sport(f);
  if (attr == pk::cm::kReq) cm.flow_label = sport & 0x3fffu;
  pk::Packet* p = m_ledger.create();
  pk::build_cm(*p, eth, ip, sport, cm);
  p->flow_id = f.id;
  p->path_dir = static_cast<uint8_t>(from_sender ? pk::PathDir::cm_fwd : pk::PathDir::cm_rev);
  p->created_ps = core::now_ps();
  p->prio = f.pcp;
  queue_ctrl(p, port);
}

void Host::on_tx_ready(uint32_t port) {
  pk::Packet* p = next_frame(port);
  if (!p) return;
  sc_time zero = SC_ZERO_TIME;
  (port ? *m_tx_out1 : tx_out)->b_transport(*p, zero);
}

pk::Packet* Host::next_frame(uint32_t port) {
  const uint64_t now = core::now_ps();
  core::Ring<pk::Packet*>& ctrl = m_ctrl[port];
  // Control frames first (ACK/NAK, CNP, CM), unless their priority is paused.
  const uint8_t paused = port_mac(port).paused_mask();
  if (!ctrl.empty() && !(paused >> ctrl.front()->prio & 1)) {
    pk::Packet* p = ctrl.front();
    ctrl.pop_front();
    return p;
  }
  // Flows whose start has come join the round robin.
  while (!m_starts.empty() && m_starts.front().first <= now) {
    const uint32_t i = m_starts.front().second;
    std::pop_heap(m_starts.begin(), m_starts.end(), kLater);
    m_starts.pop_back();
    activate(i);
  }
  const size_t n = m_send.size();
  uint64_t earliest = m_starts.empty() ? UINT64_MAX : m_starts.front().first;
  // The QPs that may send, in index order from the round-robin position on
  // (cyclically); the others would be passed over.
  const size_t na = m_active.size();
  size_t& rr = m_rr[port];
  const size_t first = static_cast<size_t>(std::lower_bound(m_active.begin(), m_active.end(), rr) - m_active.begin());
  bool finished = false;  // a QP with nothing left to do: dropped from m_active below
  pk::Packet* out = nullptr;
  for (size_t k = 0; k < na; ++k) {
    const uint32_t i = m_active[(first + k) % na];
    SendState& s = m_send[i];
    FlowRecord& r = *s.rec;
    if (!s.qp.has_data() && (!m_cfg.rc || s.qp.established())) {
      s.active = false;  // sent everything: back on a go-back (NAK, timeout)
      finished = true;
      continue;
    }
    if (s.port != port) continue;  // a LAG: the QP sends on its other port
    if (s.next_ps > now) {
      if (s.qp.has_data()) earliest = std::min(earliest, s.next_ps);
      continue;
    }
    if (m_cfg.rc && !s.qp.established()) {
      // Connection setup: a REQ at the flow's start, repeated after a timeout.
      if (s.qp.req_due(now)) {
        if (s.qp.req_sent_ps()) ++r.cm_retries;  // a REQ before this one went unanswered
        s.qp.req_sent(now);
        send_cm(pk::cm::kReq, r, s.peer_ip, s.peer_mac, true, s.port);
        time_qp(i);
        arm_rto(now + m_cfg.rto_ps);
      }
      continue;
    }
    if (paused >> r.pcp & 1) continue;  // PFC: the MAC kicks us when the pause ends
    if (m_cfg.rc && !s.qp.window_open()) continue;  // waits for ACKs
    // Deficit round robin among QPs (quantum: one MTU of payload), so QPs
    // with different packet sizes share the port byte-fairly: a QP keeps the
    // turn while its deficit covers its next packet.
    const uint32_t len = payload_of(s, s.qp.next_index());
    if (s.deficit < len) s.deficit += m_cfg.mtu;
    s.deficit -= len;
    if (r.first_tx_ps == UINT64_MAX) r.first_tx_ps = now;
    const rc::TxPacket tx = s.qp.send(now);
    if (m_cfg.rc && !tx.retransmission && s.qp.ack_request(tx.index) && s.rtt_n < SendState::kRttPending) {
      const uint32_t k = (s.rtt_head + s.rtt_n++) % SendState::kRttPending;
      s.rtt_index[k] = tx.index;
      s.rtt_sent_ps[k] = now;
    }
    pk::Packet* p = make_packet(s, tx);
    if (!s.qp.has_data()) s.deficit = 0;  // an idle QP keeps no credit
    const bool keep = s.qp.has_data() && s.deficit >= payload_of(s, s.qp.next_index());
    rr = keep ? i : (i + 1) % n;
    if (m_cfg.rc) {
      time_qp(i);
      arm_rto(s.qp.progress_ps() + m_cfg.rto_ps);  // the timer runs from the first outstanding packet
    }
    // Pace at the flow's rate on wire bytes; a flow stalled behind others does
    // not earn a burst (next start counts from now at the latest).
    uint64_t rate = r.rate_bps;
    if (s.rp) {
      s.rp->on_bytes_sent(p->frame_len(), now);  // DCQCN's byte counter
      rate = std::min(rate, s.rp->rate_bps());
      cc_update(i);
      arm_cc();
    }
    s.next_ps = std::max(s.next_ps, now) + core::serialization_ps(p->wire_bytes(), rate);
    out = p;
    break;
  }
  if (finished)
    m_active.erase(std::remove_if(m_active.begin(), m_active.end(), [this](uint32_t i) { return !m_send[i].active; }),
                   m_active.end());
  if (out) return out;
  if (!ctrl.empty()) {  // queued above (a CM REQ), or paused: the MAC kicks us on resume
    if (paused >> ctrl.front()->prio & 1) return nullptr;
    pk::Packet* p = ctrl.front();
    ctrl.pop_front();
    return p;
  }
  if (earliest != UINT64_MAX && earliest < m_wake_at) {
    m_wake_at = earliest;
    m_wake_ev.at(earliest);
  }
  return nullptr;
}

void Host::arm_rto(uint64_t t_ps) {
  if (t_ps >= m_rto_at) return;
  m_rto_at = t_ps;
  m_rto_ev.at(t_ps);
}

void Host::on_rto() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  m_rto_at = UINT64_MAX;
  uint64_t next = UINT64_MAX;
  bool kick = false;
  size_t kept = 0;
  for (size_t k = 0; k < m_timed.size(); ++k) {
    const uint32_t i = m_timed[k];
    SendState& s = m_send[i];
    if (!s.qp.established()) {
      m_timed[kept++] = i;
      if (s.qp.req_sent_ps() && s.rec->start_ps <= now) {
        const uint64_t due = s.qp.rto_deadline();
        if (due <= now) {
          // Due: next_frame re-sends the REQ at the port's next transmit
          // opportunity (now if it is idle, else when its frame ends or a
          // pause lifts) and arms the timer for the next one. Nothing to wait
          // for here meanwhile (the timer used to re-arm 1 ps later until then).
          kick = true;
        } else {
          next = std::min(next, due);
        }
      }
      continue;
    }
    if (s.qp.on_timer(now)) {
      // Timeout: back to the oldest unacknowledged packet. The event is armed
      // for rto after it even though nothing is outstanding until the resend.
      ++s.rec->timeouts;
      s.rtt_n = 0;  // Karn: the requests waiting are sent again
      activate(i);
      kick = true;
      m_timed[kept++] = i;
      next = std::min(next, s.qp.progress_ps() + m_cfg.rto_ps);
      continue;
    }
    const uint64_t due = s.qp.rto_deadline();
    if (due == rc::kNever) {
      s.timed = false;  // nothing outstanding: back with its next packet
      continue;
    }
    m_timed[kept++] = i;
    next = std::min(next, due);
  }
  m_timed.resize(kept);
  if (next != UINT64_MAX) arm_rto(std::max(next, now + 1));
  if (kick) kick_all();
}

void Host::flow_received(FlowRecord& r) {
  if (r.done()) return;
  r.finish_ps = core::now_ps();
  if (m_listener) m_listener->on_flow_done(r);
}

void Host::on_data(RecvState& st, const pk::Meta& m) {
  FlowRecord& r = *st.rec;
  ++r.packets_received;
  // NP: one CNP per QP per min_time_between_cnps (DCQCN; NVIDIA 4 us).
  if (m.ecn == 0b11 && m_cfg.rc && st.np.on_ce_packet(core::now_ps())) send_cnp(st);
  const bool msg_end = m.opcode == pk::op::kWriteLast || m.opcode == pk::op::kWriteOnly ||
                       m.opcode == pk::op::kSendLast || m.opcode == pk::op::kSendOnly;
  if (!m_cfg.rc) {
    if (m.psn != st.expected_psn) ++r.psn_errors;
    st.expected_psn = (m.psn + 1) & 0xffffff;
    r.bytes_received += m.l4_payload_len;
    if (msg_end) ++r.messages_received;
    if (r.bytes_received >= r.total_bytes() && r.messages_received >= r.messages) flow_received(r);
    return;
  }
  const rc::RxResult x = st.rx.on_data(m.psn, m.ackreq, m.l4_payload_len);
  if (x.verdict == rc::RxVerdict::in_order) {
    r.bytes_received += m.l4_payload_len;
    if (msg_end) ++r.messages_received;
  } else if (x.verdict == rc::RxVerdict::gap) {
    ++r.psn_errors;
  }
  if (x.response != rc::RxResponse::none) send_ack(st, x.psn, x.syndrome);
  if (x.complete) flow_received(r);
}

void Host::on_ack(const pk::Meta& m) {
  const size_t qi = m.dest_qp - kFirstQp;
  if (m.dest_qp < kFirstQp || qi >= m_send_by_qp.size() || m_send_by_qp[qi] < 0) return;
  const uint32_t i = static_cast<uint32_t>(m_send_by_qp[qi]);
  SendState& s = m_send[i];
  FlowRecord& r = *s.rec;
  const uint64_t now = core::now_ps();
  // RTT samples: the waiting requests this ACK (<= its index) or NAK (< its index) covers.
  const bool ack = m.aeth_syndrome >> 5 == 0, nak = m.aeth_syndrome == rc::kNakPsnSeqError;
  if (ack || nak) {
    const uint64_t ai = rc::index_of(s.qp.snd_una(), m.psn);
    while (s.rtt_n && (ack ? s.rtt_index[s.rtt_head] <= ai : s.rtt_index[s.rtt_head] < ai)) {
      ++r.rtt_samples;
      r.rtt_sum_ps += now - s.rtt_sent_ps[s.rtt_head];
      s.rtt_head = (s.rtt_head + 1) % SendState::kRttPending;
      --s.rtt_n;
    }
    if (nak) s.rtt_n = 0;  // go back N: what still waits is sent again (Karn)
  }
  if (ack) {  // ACK: everything up to psn received
    if (s.qp.on_ack(m.psn, now)) {
      if (s.qp.done() && r.acked_ps == UINT64_MAX) r.acked_ps = now;
      port_mac(s.port).kick();  // the window may have opened
    }
  } else if (m.aeth_syndrome == rc::kNakPsnSeqError) {
    ++r.naks_received;
    if (s.qp.on_nak(m.psn, now)) {  // go back N
      activate(i);
      port_mac(s.port).kick();
    }
  }
}

void Host::on_cm(const pk::Meta& m) {
  const uint32_t fid = (m.cm.local_comm_id - 1) / 2;
  if (m.cm.attr_id == pk::cm::kReq) {
    // Receiver side: find the flow by the sender's QP and address, answer REP.
    const auto it = m_recv_by_flow.find(fid);
    if (it == m_recv_by_flow.end()) return;
    RecvState& st = m_recv[it->second];
    if (st.peer_ip != m.src_ip || st.rec->src_qp != m.cm.local_qpn) return;
    st.rx.on_req();
    send_cm(pk::cm::kRep, *st.rec, st.peer_ip, st.peer_mac, false, st.port);
    return;
  }
  if (m.cm.attr_id == pk::cm::kRep) {
    const auto it = m_send_by_flow.find((m.cm.remote_comm_id - 1) / 2);
    if (it == m_send_by_flow.end()) return;
    SendState& s = m_send[it->second];
    if (!s.qp.on_rep()) return;  // a duplicate
    s.rec->setup_done_ps = core::now_ps();
    send_cm(pk::cm::kRtu, *s.rec, s.peer_ip, s.peer_mac, true, s.port);
    port_mac(s.port).kick();
    return;
  }
  if (m.cm.attr_id == pk::cm::kRtu) {
    const auto it = m_recv_by_flow.find(fid);
    if (it != m_recv_by_flow.end() && m_recv[it->second].peer_ip == m.src_ip) m_recv[it->second].rx.on_rtu();
  }
  // Data is accepted once it arrives, RTU or not (rc/rc_qp.h).
}

void Host::b_transport(pk::Packet& pkt, sc_time&) {
  if (pkt.traced && m_listener) m_listener->on_traced_rx(*this, pkt);
  if (!m_cfg.rx_buffer_bytes) {
    process(&pkt);
    return;
  }
  // Through the receive buffer, drained at rx_drain_bps.
  if (m_rx_bytes + pkt.frame_len() > m_cfg.rx_buffer_bytes) {
    ++m_rx_drops;
    m_ledger.drop(&pkt, pk::DropReason::nic_buffer);
    return;
  }
  m_rxq.push_back(&pkt);
  m_rx_bytes += pkt.frame_len();
  m_rx_peak = std::max(m_rx_peak, m_rx_bytes);
  const uint8_t prio = pkt.meta.pcp;
  if (m_cfg.rx_pfc && m_rx_bytes >= m_cfg.rx_xoff_bytes && !(m_rx_xoff >> prio & 1)) {
    m_rx_xoff |= static_cast<uint8_t>(1u << prio);
    rx_transition(prio, true);
  }
  if (!m_draining) {
    m_draining = true;
    m_drain_ev.after(core::serialization_ps(pkt.frame_len(), m_cfg.rx_drain_bps));
  }
}

void Host::process(pk::Packet* p) {
  const pk::Meta& m = p->meta;
  if (m.dst_ip != m_cfg.ip) {
    ++m_unexpected;
    m_ledger.drop(p, pk::DropReason::no_route);
    return;
  }
  if (m.kind == pk::FrameKind::cm && m_cfg.rc) {
    on_cm(m);
    m_ledger.deliver(p);
    return;
  }
  if (m.kind == pk::FrameKind::cnp) {
    const size_t qi = m.dest_qp - kFirstQp;
    if (m.dest_qp >= kFirstQp && qi < m_send_by_qp.size() && m_send_by_qp[qi] >= 0) {
      SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
      ++s.rec->cnps_received;
      if (s.rp) {
        s.rp->on_cnp(core::now_ps());
        cc_update(static_cast<uint32_t>(m_send_by_qp[qi]));
        arm_cc();
      }
    }
    m_ledger.deliver(p);
    return;
  }
  if (m.kind != pk::FrameKind::roce) {
    ++m_unexpected;
    m_ledger.drop(p, pk::DropReason::no_route);
    return;
  }
  if (m.opcode == pk::op::kAck) {
    on_ack(m);
    m_ledger.deliver(p);
    return;
  }
  const size_t idx = m.dest_qp - kFirstQp;
  if (m.dest_qp < kFirstQp || idx >= m_recv.size() || !m_recv[idx].rec) {
    ++m_unexpected;
    m_ledger.drop(p, pk::DropReason::no_route);
    return;
  }
  RecvState& st = m_recv[idx];
  if (st.rec->first_rx_ps == UINT64_MAX) st.rec->first_rx_ps = p->rx_first_bit_ps;
  on_data(st, m);
  m_ledger.deliver(p);
}

}  // namespace rocesim::host

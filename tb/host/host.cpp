#include "host/host.h"

#include <algorithm>
#include <iterator>

#include "core/rng.h"
#include "core/time.h"

namespace rocesim::host {

using namespace sc_core;
namespace pk = rocesim::packet;

namespace {
constexpr uint8_t kAckSyndrome = 0x1f;  // ACK, unlimited credits (IBTA 9.7.5.1)
constexpr uint8_t kNakPsnSeqError = 0x60;
constexpr uint32_t kGsiQp = 1;
}  // namespace

Host::Host(sc_module_name name, const HostConfig& cfg, link::Ledger& ledger)
    : sc_module(name), mac("mac", 0, cfg.port, ledger), tx_out("tx_out"), rx_in("rx_in"), m_cfg(cfg), m_ledger(ledger) {
  tx_out.bind(static_cast<link::pkt_bw_if&>(*this));
  rx_in.bind(static_cast<link::pkt_fw_if&>(*this));
  tx_out.bind(mac.tx_in);
  mac.rx_out.bind(rx_in);
  mac.set_ready(this);
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

void Host::rx_pause(uint8_t prio, bool xoff) {
  uint16_t timers[8] = {};
  timers[prio] = xoff ? m_cfg.pause_quanta : 0;
  pk::Packet* p = m_ledger.create();
  pk::build_pfc(*p, m_cfg.mac, static_cast<uint16_t>(1u << prio), timers);
  p->created_ps = core::now_ps();
  mac.send_control(p);
}

void Host::rx_transition(uint8_t prio, bool xoff) {
  // A transition starts (XOFF) or ends (XON) the priority's refresh schedule.
  const uint64_t now = core::now_ps();
  m_rx_refresh_at[prio] = xoff ? now + m_rx_refresh_period_ps : UINT64_MAX;
  if (xoff) arm_rx_refresh(m_rx_refresh_at[prio]);
  if (m_log) m_log->push_back(pfc::Event{now, basename(), 0, prio, xoff ? "xoff" : "xon"});
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

void Host::arm_cc() {
  uint64_t t = UINT64_MAX;
  for (const SendState& s : m_send)
    if (s.rp) t = std::min(t, s.rp->next_event_ps());
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
  for (SendState& s : m_send)
    if (s.rp) s.rp->advance(now);
  arm_cc();
  mac.kick();
}

void Host::start_pause_storm(uint64_t start_ps, uint8_t prio, uint16_t quanta) {
  m_storm_prio = prio;
  m_storm_quanta = quanta;
  m_storm_ev.at(std::max(start_ps, core::now_ps()));
}

void Host::on_storm() {
  m_ledger.count_event();
  uint16_t timers[8] = {};
  timers[m_storm_prio] = m_storm_quanta;
  pk::Packet* p = m_ledger.create();
  pk::build_pfc(*p, m_cfg.mac, static_cast<uint16_t>(1u << m_storm_prio), timers);
  p->created_ps = core::now_ps();
  // The first storm frame is the XOFF transition; the rest keep it (refreshes).
  if (!m_storm_started && m_log) m_log->push_back(pfc::Event{core::now_ps(), basename(), 0, m_storm_prio, "xoff"});
  m_storm_started = true;
  mac.send_control(p);
  m_storm_ev.after(pfc::quanta_ps(m_storm_quanta, mac.rate_bps()) / 2);
}

void Host::add_send_flow(FlowRecord* f, uint32_t peer_ip, pk::Mac peer_mac, bool blocked) {
  SendState s;
  s.blocked = blocked;
  s.rec = f;
  s.peer_ip = peer_ip;
  s.peer_mac = peer_mac;
  s.ppm = static_cast<uint32_t>((f->message_bytes + m_cfg.mtu - 1) / m_cfg.mtu);
  s.total_pkts = static_cast<uint64_t>(s.ppm) * f->messages;
  s.next_ps = f->start_ps;
  s.established = !(m_cfg.rc && m_cfg.cm);
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
  // RoCEv2 puts flow entropy in the UDP source port (IBTA Annex A17); keep it in 0xC000..0xFFFF.
  s.udp_sport = static_cast<uint16_t>(0xC000 | (core::fnv1a64(std::to_string(f->src_qp) + ":" + std::to_string(f->dst_qp) +
                                                              ":" + std::to_string(f->src)) & 0x3fff));
  const size_t qi = f->src_qp - kFirstQp;
  if (m_send_by_qp.size() <= qi) m_send_by_qp.resize(qi + 1, -1);
  m_send_by_qp[qi] = static_cast<int>(m_send.size());
  m_send.push_back(std::move(s));
  if (blocked) return;
  // Wake at the earliest flow start; a timer keeps the earliest time it is armed for.
  m_wake_ev.at(std::max(f->start_ps, core::now_ps()));
  m_wake_at = std::min(m_wake_at, f->start_ps);
}

void Host::release_flow(FlowRecord* f) {
  const size_t qi = f->src_qp - kFirstQp;
  SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
  if (!s.blocked) return;
  s.blocked = false;
  const uint64_t now = core::now_ps();
  f->start_ps = std::max(f->start_ps, now);
  s.next_ps = f->start_ps;
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
  r.udp_sport = static_cast<uint16_t>(0xC000 | (core::fnv1a64("ack:" + std::to_string(f->dst_qp) + ":" +
                                                              std::to_string(f->dst)) & 0x3fff));
}

void Host::on_wake() {
  m_ledger.count_event();
  m_wake_at = UINT64_MAX;
  mac.kick();
}

uint64_t Host::psn_to_index(uint64_t base, uint32_t psn) const {
  // The index with PSN `psn` nearest to base (PSNs wrap at 2^24).
  const int32_t d = static_cast<int32_t>(((psn - static_cast<uint32_t>(base)) & 0xffffff) << 8) >> 8;
  return static_cast<uint64_t>(static_cast<int64_t>(base) + d);
}

bool Host::rc_received(const FlowRecord& f, uint64_t& next_index) const {
  const size_t idx = f.dst_qp - kFirstQp;
  if (f.dst_qp < kFirstQp || idx >= m_recv.size() || m_recv[idx].rec != &f) return false;
  next_index = m_recv[idx].epsn;
  return true;
}

bool Host::rc_sent(const FlowRecord& f, uint64_t& high_sent, uint64_t& acked) const {
  const size_t qi = f.src_qp - kFirstQp;
  if (f.src_qp < kFirstQp || qi >= m_send_by_qp.size() || m_send_by_qp[qi] < 0) return false;
  const SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
  if (s.rec != &f) return false;
  high_sent = s.high_sent;
  acked = s.snd_una;
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

pk::Packet* Host::make_packet(SendState& s, uint64_t idx) {
  FlowRecord& r = *s.rec;
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
  bth.ackreq = last || (m_cfg.rc && (idx + 1) % m_cfg.ack_every == 0);
  bth.pad_count = pk::ib_pad_count(len);  // payload + pad is a multiple of 4 (IBTA 9.2.1)
  bth.dest_qp = r.dst_qp;
  bth.psn = static_cast<uint32_t>(idx & 0xffffff);
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
  p->created_ps = core::now_ps();
  p->prio = r.pcp;
  ++r.packets_sent;
  if (idx < s.high_sent) {
    ++r.retransmitted;
  } else {
    r.bytes_sent += len;
    r.wire_bytes_sent += p->wire_bytes();
    s.high_sent = idx + 1;
  }
  return p;
}

void Host::queue_ctrl(pk::Packet* p) {
  m_ctrl.push_back(p);
  mac.kick();
}

void Host::send_ack(RecvState& st, uint32_t psn, uint8_t syndrome) {
  const FlowRecord& r = *st.rec;
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
  p->created_ps = core::now_ps();
  p->prio = r.pcp;
  queue_ctrl(p);
}

void Host::send_cnp(RecvState& st) {
  FlowRecord& r = *st.rec;
  pk::EthSpec eth;
  pk::Ipv4Spec ip;
  headers(eth, ip, st.peer_mac, st.peer_ip, m_cfg.cnp_pcp, m_cfg.cnp_dscp, 0b10);
  pk::Packet* p = m_ledger.create();
  pk::build_cnp(*p, eth, ip, st.udp_sport, r.src_qp);
  p->created_ps = core::now_ps();
  p->prio = m_cfg.cnp_pcp;
  ++r.cnps_sent;
  queue_ctrl(p);
}

void Host::send_cm(uint16_t attr, const FlowRecord& f, uint32_t peer_ip, pk::Mac peer_mac, bool from_sender) {
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
  pk::Packet* p = m_ledger.create();
  pk::build_cm(*p, eth, ip, 0xC000 | (f.id & 0x3fff), cm);
  p->created_ps = core::now_ps();
  p->prio = f.pcp;
  queue_ctrl(p);
}

void Host::on_tx_ready(uint32_t) {
  pk::Packet* p = next_frame();
  if (!p) return;
  sc_time zero = SC_ZERO_TIME;
  tx_out->b_transport(*p, zero);
}

pk::Packet* Host::next_frame() {
  const uint64_t now = core::now_ps();
  // Control frames first (ACK/NAK, CNP, CM), unless their priority is paused.
  const uint8_t paused = mac.paused_mask();
  if (!m_ctrl.empty() && !(paused >> m_ctrl.front()->prio & 1)) {
    pk::Packet* p = m_ctrl.front();
    m_ctrl.pop_front();
    return p;
  }
  const size_t n = m_send.size();
  uint64_t earliest = UINT64_MAX;
  for (size_t k = 0; k < n; ++k) {
    SendState& s = m_send[(m_rr + k) % n];
    FlowRecord& r = *s.rec;
    if (s.blocked) continue;
    if (s.next_ps > now) {
      if (s.snd_nxt < s.total_pkts) earliest = std::min(earliest, s.next_ps);
      continue;
    }
    if (m_cfg.rc && !s.established) {
      // Connection setup: a REQ at the flow's start, repeated after a timeout.
      if (s.cm_sent_ps == 0 || now - s.cm_sent_ps >= m_cfg.rto_ps) {
        s.cm_sent_ps = std::max<uint64_t>(now, 1);
        send_cm(pk::cm::kReq, r, s.peer_ip, s.peer_mac, true);
        arm_rto(now + m_cfg.rto_ps);
      }
      continue;
    }
    if (s.snd_nxt >= s.total_pkts) continue;
    if (paused >> r.pcp & 1) continue;  // PFC: the MAC kicks us when the pause ends
    if (m_cfg.rc && s.snd_nxt - s.snd_una >= m_cfg.max_outstanding) continue;  // waits for ACKs
    // Deficit round robin among QPs (quantum: one MTU of payload), so QPs
    // with different packet sizes share the port byte-fairly: a QP keeps the
    // turn while its deficit covers its next packet.
    const uint32_t len = payload_of(s, s.snd_nxt);
    if (s.deficit < len) s.deficit += m_cfg.mtu;
    s.deficit -= len;
    if (r.first_tx_ps == UINT64_MAX) r.first_tx_ps = now;
    pk::Packet* p = make_packet(s, s.snd_nxt);
    ++s.snd_nxt;
    if (s.snd_nxt >= s.total_pkts) s.deficit = 0;  // an idle QP keeps no credit
    const bool keep = s.snd_nxt < s.total_pkts && s.deficit >= payload_of(s, s.snd_nxt);
    m_rr = keep ? (m_rr + k) % n : (m_rr + k + 1) % n;
    if (m_cfg.rc) {
      if (s.snd_una + 1 == s.snd_nxt) s.progress_ps = now;  // first outstanding packet: the timer starts
      arm_rto(s.progress_ps + m_cfg.rto_ps);
    }
    // Pace at the flow's rate on wire bytes; a flow stalled behind others does
    // not earn a burst (next start counts from now at the latest).
    uint64_t rate = r.rate_bps;
    if (s.rp) {
      s.rp->on_bytes_sent(p->frame_len(), now);  // DCQCN's byte counter
      rate = std::min(rate, s.rp->rate_bps());
      arm_cc();
    }
    s.next_ps = std::max(s.next_ps, now) + core::serialization_ps(p->wire_bytes(), rate);
    return p;
  }
  if (!m_ctrl.empty()) {  // queued above (a CM REQ), or paused: the MAC kicks us on resume
    if (paused >> m_ctrl.front()->prio & 1) return nullptr;
    pk::Packet* p = m_ctrl.front();
    m_ctrl.pop_front();
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
  for (SendState& s : m_send) {
    if (!s.established) {
      if (s.cm_sent_ps && s.rec->start_ps <= now) {
        kick = true;  // next_frame re-sends the REQ when it is due
        next = std::min(next, s.cm_sent_ps + m_cfg.rto_ps);
      }
      continue;
    }
    if (s.done || s.snd_una == s.snd_nxt) continue;
    if (now - s.progress_ps >= m_cfg.rto_ps) {
      // Timeout: go back to the oldest unacknowledged packet.
      ++s.rec->timeouts;
      s.snd_nxt = s.snd_una;
      s.progress_ps = now;
      kick = true;
    }
    next = std::min(next, s.progress_ps + m_cfg.rto_ps);
  }
  if (next != UINT64_MAX) arm_rto(std::max(next, now + 1));
  if (kick) mac.kick();
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
  const uint64_t idx = psn_to_index(st.epsn, m.psn);
  if (idx == st.epsn) {
    ++st.epsn;
    st.nak_outstanding = false;
    r.bytes_received += m.l4_payload_len;
    if (msg_end) ++r.messages_received;
    const bool complete = r.bytes_received >= r.total_bytes();
    if (m.ackreq || ++st.since_ack >= m_cfg.ack_every || complete) {
      st.since_ack = 0;
      send_ack(st, m.psn, kAckSyndrome);
    }
    if (complete) flow_received(r);
  } else if (idx > st.epsn) {
    // A gap: NAK the expected PSN once; the sender goes back N.
    ++r.psn_errors;
    if (!st.nak_outstanding) {
      st.nak_outstanding = true;
      send_ack(st, static_cast<uint32_t>(st.epsn & 0xffffff), kNakPsnSeqError);
    }
  } else {
    // A duplicate (after a go-back-N): acknowledge what we have.
    send_ack(st, static_cast<uint32_t>((st.epsn - 1) & 0xffffff), kAckSyndrome);
  }
}

void Host::on_ack(const pk::Meta& m) {
  const size_t qi = m.dest_qp - kFirstQp;
  if (m.dest_qp < kFirstQp || qi >= m_send_by_qp.size() || m_send_by_qp[qi] < 0) return;
  SendState& s = m_send[static_cast<size_t>(m_send_by_qp[qi])];
  FlowRecord& r = *s.rec;
  const uint64_t now = core::now_ps();
  if (m.aeth_syndrome >> 5 == 0) {  // ACK: everything up to psn received
    const uint64_t idx = psn_to_index(s.snd_una, m.psn) + 1;
    if (idx > s.snd_una && idx <= s.high_sent) {
      s.snd_una = idx;
      s.progress_ps = now;
      if (s.snd_nxt < s.snd_una) s.snd_nxt = s.snd_una;
      if (s.snd_una >= s.total_pkts && !s.done) {
        s.done = true;
        r.acked_ps = now;
      }
      mac.kick();  // the window may have opened
    }
  } else if (m.aeth_syndrome == kNakPsnSeqError) {
    ++r.naks_received;
    const uint64_t idx = psn_to_index(s.snd_una, m.psn);
    if (idx >= s.snd_una && idx <= s.high_sent) {
      s.snd_una = idx;
      s.snd_nxt = idx;  // go back N
      s.progress_ps = now;
      mac.kick();
    }
  }
}

void Host::on_cm(const pk::Meta& m) {
  const uint32_t fid = (m.cm_local_comm_id - 1) / 2;
  if (m.cm_attr_id == pk::cm::kReq) {
    // Receiver side: find the flow by the sender's QP and address, answer REP.
    for (RecvState& st : m_recv) {
      if (!st.rec || st.rec->id != fid || st.peer_ip != m.src_ip || st.rec->src_qp != m.cm_local_qpn) continue;
      send_cm(pk::cm::kRep, *st.rec, st.peer_ip, st.peer_mac, false);
      return;
    }
  } else if (m.cm_attr_id == pk::cm::kRep) {
    const uint32_t sfid = (m.cm_remote_comm_id - 1) / 2;
    for (SendState& s : m_send) {
      if (s.rec->id != sfid || s.established) continue;
      s.established = true;
      send_cm(pk::cm::kRtu, *s.rec, s.peer_ip, s.peer_mac, true);
      mac.kick();
      return;
    }
  }
  // RTU (and duplicates): nothing to do; data is accepted once it arrives.
}

void Host::b_transport(pk::Packet& pkt, sc_time&) {
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

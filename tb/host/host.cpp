#include "host/host.h"

#include <algorithm>

#include "core/rng.h"
#include "core/time.h"

namespace rocesim::host {

using namespace sc_core;
namespace pk = rocesim::packet;

Host::Host(sc_module_name name, const HostConfig& cfg, link::Ledger& ledger)
    : sc_module(name), mac("mac", 0, cfg.port, ledger), tx_out("tx_out"), rx_in("rx_in"), m_cfg(cfg), m_ledger(ledger) {
  tx_out.bind(static_cast<link::pkt_bw_if&>(*this));
  rx_in.bind(static_cast<link::pkt_fw_if&>(*this));
  tx_out.bind(mac.tx_in);
  mac.rx_out.bind(rx_in);
  mac.set_ready(this);
  SC_METHOD(on_wake);
  sensitive << m_wake_ev;
  dont_initialize();
  SC_METHOD(on_storm);
  sensitive << m_storm_ev;
  dont_initialize();
}

void Host::start_pause_storm(uint64_t start_ps, uint8_t prio, uint16_t quanta) {
  m_storm_prio = prio;
  m_storm_quanta = quanta;
  m_storm_ev.notify(core::ps(start_ps));
}

void Host::on_storm() {
  m_ledger.count_event();
  uint16_t timers[8] = {};
  timers[m_storm_prio] = m_storm_quanta;
  pk::Packet* p = m_ledger.create();
  pk::build_pfc(*p, m_cfg.mac, static_cast<uint16_t>(1u << m_storm_prio), timers);
  p->created_ps = core::now_ps();
  mac.send_control(p);
  m_storm_ev.notify(core::ps(pfc::quanta_ps(m_storm_quanta, mac.rate_bps()) / 2));
}

void Host::add_send_flow(FlowRecord* f, uint32_t peer_ip, pk::Mac peer_mac) {
  SendState s;
  s.rec = f;
  s.peer_ip = peer_ip;
  s.peer_mac = peer_mac;
  s.next_ps = f->start_ps;
  // RoCEv2 puts flow entropy in the UDP source port (IBTA Annex A17); keep it in 0xC000..0xFFFF.
  s.udp_sport = static_cast<uint16_t>(0xC000 | (core::fnv1a64(std::to_string(f->src_qp) + ":" + std::to_string(f->dst_qp) +
                                                              ":" + std::to_string(f->src)) & 0x3fff));
  m_send.push_back(s);
  // Wake at the earliest flow start; SystemC keeps the earliest pending notification.
  m_wake_ev.notify(core::ps(f->start_ps));
  m_wake_at = std::min(m_wake_at, f->start_ps);
}

void Host::add_recv_flow(FlowRecord* f) {
  const size_t idx = f->dst_qp - kFirstQp;
  if (m_recv.size() <= idx) m_recv.resize(idx + 1, RecvState{nullptr});
  m_recv[idx].rec = f;
}

void Host::on_wake() {
  m_ledger.count_event();
  m_wake_at = UINT64_MAX;
  mac.kick();
}

pk::Packet* Host::make_packet(SendState& s) {
  FlowRecord& r = *s.rec;
  const uint64_t left_in_msg = r.message_bytes - s.msg_offset;
  const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(left_in_msg, m_cfg.mtu));
  const bool first = s.msg_offset == 0;
  const bool last = len == left_in_msg;

  pk::BthSpec bth;
  bth.opcode = first && last ? pk::op::kWriteOnly
               : first       ? pk::op::kWriteFirst
               : last        ? pk::op::kWriteLast
                             : pk::op::kWriteMiddle;
  bth.ackreq = last;  // request an ACK at message end, as RC NICs do
  bth.pad_count = pk::ib_pad_count(len);  // payload + pad is a multiple of 4 (IBTA 9.2.1)
  bth.dest_qp = r.dst_qp;
  bth.psn = s.psn;
  pk::RethSpec reth;
  reth.va = 0x10000000ull + static_cast<uint64_t>(s.msg_index) * r.message_bytes;
  reth.rkey = 0x1000 + r.dst_qp;
  reth.dma_len = static_cast<uint32_t>(std::min<uint64_t>(r.message_bytes, UINT32_MAX));

  pk::EthSpec eth;
  eth.dst = s.peer_mac;
  eth.src = m_cfg.mac;
  eth.vlan = m_cfg.vlan;
  eth.pcp = r.pcp;
  pk::Ipv4Spec ip;
  ip.src = m_cfg.ip;
  ip.dst = s.peer_ip;
  ip.dscp = r.dscp;
  ip.ecn = m_cfg.ecn;
  ip.id = static_cast<uint16_t>(r.packets_sent);

  pk::Packet* p = m_ledger.create();
  pk::build_roce(*p, eth, ip, s.udp_sport, bth, first ? &reth : nullptr, nullptr, len);
  p->flow_id = r.id;
  p->created_ps = core::now_ps();
  p->prio = r.pcp;

  s.psn = (s.psn + 1) & 0xffffff;
  s.msg_offset += len;
  r.bytes_sent += len;
  ++r.packets_sent;
  r.wire_bytes_sent += p->wire_bytes();
  if (last) {
    s.msg_offset = 0;
    ++s.msg_index;
  }
  return p;
}

void Host::on_tx_ready(uint32_t) {
  pk::Packet* p = next_frame();
  if (!p) return;
  sc_time zero = SC_ZERO_TIME;
  tx_out->b_transport(*p, zero);
}

pk::Packet* Host::next_frame() {
  const uint64_t now = core::now_ps();
  const size_t n = m_send.size();
  uint64_t earliest = UINT64_MAX;
  // Priorities paused by the switch (PFC): their flows wait; the MAC kicks us
  // when a pause ends.
  const uint8_t paused = n ? mac.paused_mask() : 0;
  for (size_t k = 0; k < n; ++k) {
    SendState& s = m_send[(m_rr + k) % n];
    if (s.rec->bytes_sent >= s.rec->total_bytes()) continue;
    if (paused >> s.rec->pcp & 1) continue;
    if (s.next_ps > now) {
      earliest = std::min(earliest, s.next_ps);
      continue;
    }
    m_rr = (m_rr + k + 1) % n;
    if (s.rec->first_tx_ps == UINT64_MAX) s.rec->first_tx_ps = now;
    pk::Packet* p = make_packet(s);
    // Pace at the flow's rate on wire bytes; a flow stalled behind others does
    // not earn a burst (next start counts from now at the latest).
    s.next_ps = std::max(s.next_ps, now) + core::serialization_ps(p->wire_bytes(), s.rec->rate_bps);
    return p;
  }
  if (earliest != UINT64_MAX && earliest < m_wake_at) {
    m_wake_at = earliest;
    m_wake_ev.notify(core::ps(earliest - now));
  }
  return nullptr;
}

void Host::b_transport(pk::Packet& pkt, sc_time&) {
  pk::Packet* p = &pkt;
  const uint64_t first_bit_ps = p->rx_first_bit_ps;
  const pk::Meta& m = p->meta;
  if (m.kind != pk::FrameKind::roce || m.dst_ip != m_cfg.ip) {
    ++m_unexpected;
    m_ledger.drop(p, pk::DropReason::no_route);
    return;
  }
  const size_t idx = m.dest_qp - kFirstQp;
  if (m.dest_qp < kFirstQp || idx >= m_recv.size() || !m_recv[idx].rec) {
    ++m_unexpected;
    m_ledger.drop(p, pk::DropReason::no_route);
    return;
  }
  RecvState& st = m_recv[idx];
  FlowRecord& r = *st.rec;
  if (r.first_rx_ps == UINT64_MAX) r.first_rx_ps = first_bit_ps;
  if (m.psn != st.expected_psn) ++r.psn_errors;
  st.expected_psn = (m.psn + 1) & 0xffffff;
  ++r.packets_received;
  r.bytes_received += m.l4_payload_len;
  const bool msg_end = m.opcode == pk::op::kWriteLast || m.opcode == pk::op::kWriteOnly;
  if (msg_end) ++r.messages_received;
  m_ledger.deliver(p);
  if (!r.done() && r.bytes_received >= r.total_bytes() && r.messages_received >= r.messages) {
    r.finish_ps = core::now_ps();
    if (m_listener) m_listener->on_flow_done(r);
  }
}

}  // namespace rocesim::host

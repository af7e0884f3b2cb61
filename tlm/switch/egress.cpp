// Egress and scheduling: when a port is free, the scheduler picks among the
// queues whose head is eligible, the queue manager dequeues it (release, PFC
// state, ECN at dequeue) and the buffer read hands the frame to the MAC.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "switch/switch.h"

namespace rocesim::sw {

using namespace sc_core;
namespace pk = rocesim::packet;

void Switch::schedule_wake(uint32_t port, uint64_t t_ps) {
  // A busy port pulls again when its frame ends; that pull schedules a wake if
  // nothing is eligible by then. So only an idle port needs one now; a busy
  // one is kicked, so that its MAC wants the frame's end.
  PortState& ps = m_port[port];
  if (!ps.staged && ps.mac->tx_busy()) {
    ps.mac->kick();
    return;
  }
  if (t_ps >= ps.wake_at) return;  // an earlier wake will look again
  ps.wake_at = t_ps;
  const bool earliest = m_wakes.empty() || t_ps < m_wakes.front().first;
  m_wakes.emplace_back(t_ps, port);
  std::push_heap(m_wakes.begin(), m_wakes.end(), std::greater<>());
  if (earliest) m_wake_ev.at(t_ps);
}

void Switch::on_egress_wake() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_wakes.empty() && m_wakes.front().first <= now) {
    std::pop_heap(m_wakes.begin(), m_wakes.end(), std::greater<>());
    const auto [t, port] = m_wakes.back();
    m_wakes.pop_back();
    PortState& ps = m_port[port];
    if (ps.wake_at == t) ps.wake_at = UINT64_MAX;
    ps.mac->kick();
  }
  if (!m_wakes.empty()) m_wake_ev.at(m_wakes.front().first);
}

void Switch::on_tx_ready(uint32_t port) {
  pk::Packet* p = pull(port);
  if (!p) return;
  if (p->traced && m_hops) m_hops->on_depart(m_hop_index, *p, port);
  sc_time zero = SC_ZERO_TIME;
  tx_if(port)->b_transport(*p, zero);
}

pk::Packet* Switch::pull(uint32_t port) {
  const uint64_t now = core::now_ps();
  PortState& st = m_port[port];
  if (st.staged) {
    if (st.staged_ready_ps > now) return nullptr;  // its read is still in progress; a wake is pending
    pk::Packet* p = st.staged;
    st.staged = nullptr;
    return p;
  }
  // The scheduler chooses among the queues whose head is eligible (written
  // and read); PFC-paused queues are skipped (the MAC kicks us when a pause
  // ends). Nothing eligible: wake at the earliest head or shaper time.
  const uint8_t paused = paused_queues(port);
  sched::Heads heads{};
  uint64_t earliest = UINT64_MAX;
  // Only the queues holding packets (PortState::nonempty) have a head to look at.
  const QueueList* const lists = &m_qlist[port * 8];
  for (unsigned mask = st.nonempty; mask; mask &= mask - 1) {
    const int q = __builtin_ctz(mask);
    const pk::Packet& hp = *lists[q].head;
    if (hp.eligible_ps <= now) {
      heads[q] = hp.frame_len();
    } else if (!(paused >> q & 1)) {
      earliest = std::min(earliest, hp.eligible_ps);
    }
  }
  sched::Scheduler& sc = m_sched[port];
  const int chosen = sc.pick(heads, paused, now);
  if (chosen < 0) {
    earliest = std::min(earliest, sc.next_eligible_ps(heads, paused, now));
    if (earliest != UINT64_MAX) schedule_wake(port, earliest);
    return nullptr;
  }
  sc.sent(chosen, heads[chosen], now);
  const uint32_t qi = port * 8 + static_cast<uint32_t>(chosen);
  pk::Packet* p = lists[chosen].head;
  const qm::DequeueResult e = dequeue(qi, *p, false);

  // Read the header bytes back out of the cells. The egress pipeline prefetches:
  // the read was issued `read` cycles before the last clock edge at or before
  // now (the packet became eligible only after them), so an uncontended read
  // is done by that edge and the frame starts exactly at the previous frame's
  // end, back to back. Only when the memory's read bandwidth cannot keep up
  // (other ports' reads, or fewer cells per cycle than the line rate needs)
  // does the frame wait, until the clock edge that ends its read.
  const uint32_t read_cycles = (e.cells + m_cfg.buffer.read_cells_per_cycle - 1) / m_cfg.buffer.read_cells_per_cycle;
  m_gp.set_command(tlm::TLM_READ_COMMAND);
  m_gp.set_address(static_cast<uint64_t>(e.head_cell) * m_cfg.buffer.cell_bytes);
  m_gp.set_data_ptr(p->hdr);
  m_gp.set_data_length(p->hdr_len);
  m_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  m_cc.cells = e.cells;
  m_cc.lead_ps = std::min<uint64_t>(now % m_cfg.clock_period_ps + cycles(read_cycles), now);
  sc_time d = SC_ZERO_TIME;
  buf_if()->b_transport(m_gp, d);
  if (!m_gp.is_response_ok()) SC_REPORT_ERROR("rocesim/switch", "packet buffer read failed");
  ecn_apply(qi, *p, e.ecn);  // after the read: the mark rewrites the bytes read back
  if (d == SC_ZERO_TIME) return p;
  st.staged = p;
  st.staged_ready_ps = now + core::to_ps(d);
  schedule_wake(port, st.staged_ready_ps);
  return nullptr;
}

qm::DequeueResult Switch::dequeue(uint32_t qi, pk::Packet& p, bool discard) {
  qm::DequeueOp op;
  op.port = static_cast<uint16_t>(qi / 8);
  op.queue = static_cast<uint8_t>(qi % 8);
  op.ecn_frame = ecn_frame(p);
  op.ecn = p.meta.ecn;
  op.rand32 = m_wred_word[qi];
  op.discard = discard;
  const qm::DequeueResult rel = m_qm->dequeue(op);
  // The queue manager's head is the list's: the frame leaves the list.
  QueueList& ql = m_qlist[qi];
  if (ql.head != &p || rel.head_cell != p.queue_cell) fail_queue_order(qi, rel.head_cell);
  ql.head = p.queue_next;
  if (!ql.head) ql.tail = nullptr;
  p.queue_next = nullptr;
  PgStats& ps = m_pgstats[rel.charge.in_port * 8 + rel.charge.pg];
  touch_pg(ps);
  ps.cells = rel.pg.total();
  QueueStats& qs = m_qstats[qi];
  touch_queue(qs);
  ++qs.deq_packets;
  qs.deq_bytes += rel.bytes;
  PortState& port = m_port[qi / 8];
  if (--qs.depth_packets == 0) port.nonempty &= static_cast<uint8_t>(~(1u << (qi % 8)));
  if (port.dlb) {
    m_port_bytes[qi / 8] -= rel.bytes;
    dlb_release(p);
    // The frame leaves on this port now (or is discarded): its wire bytes feed
    // the members' utilization only when it is sent.
    if (!discard)
      for (const DlbMember& d : m_port_dlb[qi / 8]) m_dlb[d.block].sent(d.member, core::now_ps(), p.wire_bytes());
    dlb_queue_changed(qi / 8);
  }
  qs.depth_bytes -= rel.bytes;
  qs.depth_cells -= rel.cells;
  if (m_trace) trace_op(qi, rel.ecn.mark, rel.charge);
  pfc_action(rel.charge.in_port, rel.charge.pg, rel.pfc);
  return rel;
}

void Switch::fail_queue_order(uint32_t qi, uint32_t dequeued_cell) const {
  const pk::Packet* first = m_qlist[qi].head;
  throw std::logic_error("switch: the queue manager dequeued cell " + std::to_string(dequeued_cell) + " of queue " +
                         std::to_string(qi % 8) + " of port " + std::to_string(qi / 8) +
                         ", the queue's first frame is at cell " + std::to_string(first ? first->queue_cell : qm::kNoCell));
}

uint8_t Switch::queues_of(uint8_t prios) const {
  uint8_t q = 0;
  for (int p = 0; p < 8; ++p)
    if (prios >> p & 1) q |= static_cast<uint8_t>(1u << m_prio_queue[p]);
  return q;
}

uint8_t Switch::paused_queues(uint32_t port) {
  const uint8_t prios = ports[port]->paused_mask();
  if (!prios) return 0;
  uint8_t q = queues_of(prios);
  // A queue the watchdog declared stormed ignores the pause (forward), or
  // has nothing to send (drop).
  if (m_cfg.pfc.watchdog)
    for (int k = 0; k < 8; ++k)
      if (m_wd[port * 8 + k].stormed) q &= static_cast<uint8_t>(~(1u << k));
  return q;
}

}  // namespace rocesim::sw

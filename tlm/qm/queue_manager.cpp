#include "qm/queue_manager.h"

#include <string>

namespace rocesim::qm {

const char* pfc_action_name(PfcAction a) {
  switch (a) {
    case PfcAction::xoff: return "xoff";
    case PfcAction::xon: return "xon";
    default: return "none";
  }
}

QueueManager::QueueManager(const Config& cfg) : m_cfg(cfg), m_mmu(cfg.mmu) {
  // The list 0, 1, ..., total - 1, all of it never used: nothing per cell is written.
  m_total = cfg.mmu.total_cells;
  m_next = core::ZeroArray<uint32_t>(m_total);
  m_free_head = m_total ? 0 : kNoCell;
  m_free_count = m_total;
  const size_t n = cfg.mmu.ports.size();
  m_q.resize(n * kQueues);
  m_gen.resize(n * kQueues);
  for (const mmu::PortConfig& pc : cfg.mmu.ports) m_lossless_pgs.push_back(mmu::lossless_pg_mask(pc));
  for (int q = 0; q < kQueues; ++q) {
    if (cfg.ecn[q].mode == ecn::MarkerConfig::Mode::off) {
      (void)ecn::Marker(cfg.ecn[q]);  // validated all the same (throws as a kept one would)
      m_marker_of[q] = -1;
    } else {
      m_marker_of[q] = static_cast<int8_t>(m_markers_per_port++);
    }
  }
  m_markers.reserve(n * m_markers_per_port);
  for (size_t p = 0; p < n; ++p)
    for (int q = 0; q < kQueues; ++q)
      if (m_marker_of[q] >= 0) m_markers.emplace_back(cfg.ecn[q]);
}

PfcAction QueueManager::pfc_eval(uint16_t port, uint8_t pg, const mmu::PgState& st, bool in_headroom) {
  if (!m_cfg.pfc_enabled || !(m_cfg.pfc_pgs >> pg & 1)) return PfcAction::none;
  switch (m_gen[qi(port, pg)].update(m_cfg.pfc, st.shared, st.headroom, st.threshold, in_headroom)) {
    case pfc::Generator::Action::xoff: return PfcAction::xoff;
    case pfc::Generator::Action::xon: return PfcAction::xon;
    default: return PfcAction::none;
  }
}

EcnResult QueueManager::ecn_decide(uint16_t port, uint8_t queue, uint64_t len, uint8_t ecn, uint32_t rand32) {
  ecn::Marker& m = m_markers[size_t(port) * m_markers_per_port + size_t(m_marker_of[queue])];
  const ecn::Decision d = m.decide_with(len, ecn, rand32);
  return EcnResult{true, d.would_mark, d.mark, d.drew};
}

uint32_t QueueManager::take_cells(uint32_t n, uint32_t* last_out) {
  // The freed cells first, a run at a time (their links lead, at the end, to m_fresh), ...
  const uint32_t head = m_free_head;
  uint32_t last = kNoCell;
  while (n > 0 && m_run_count > 0) {
    Run& r = top_run();
    if (n >= r.len) {
      last = r.tail;
      n -= r.len;
      --m_run_count;
    } else {
      uint32_t c = r.head;
      for (uint32_t i = 1; i < n; ++i) c = m_next[c];
      last = c;
      r.head = m_next[c];
      r.len -= n;
      n = 0;
    }
  }
  // ... then never-used ones, in order, linked as they are taken.
  if (n > 0) {
    for (uint32_t i = 1; i < n; ++i) m_next[m_fresh + i - 1] = m_fresh + i;
    last = m_fresh + n - 1;
    m_fresh += n;
  }
  m_next[last] = kNoCell;
  m_free_head = m_run_count > 0 ? top_run().head : m_fresh < m_total ? m_fresh : kNoCell;
  *last_out = last;
  return head;
}

void QueueManager::push_run(const Run& r) {
  if (m_run_count == kMaxRuns) {
    // The bottom run b0 follows b1 in the list: together they are one run.
    const Run b0 = m_runs[m_run_bottom];
    m_run_bottom = (m_run_bottom + 1) & (kMaxRuns - 1);
    Run& b1 = m_runs[m_run_bottom];
    b1.tail = b0.tail;
    b1.len += b0.len;
    --m_run_count;
  }
  m_runs[(m_run_bottom + m_run_count) & (kMaxRuns - 1)] = r;
  ++m_run_count;
}

EnqueueResult QueueManager::enqueue(const EnqueueOp& op) {
  const size_t q = qi(op.out_port, op.queue);
  if (op.out_port >= ports() || op.queue >= kQueues)
    throw std::invalid_argument("qm::enqueue: no queue (" + std::to_string(op.out_port) + ", " +
                                std::to_string(op.queue) + ")");
  // The queue as the packet finds it (ECN at enqueue), read before the admit charges it.
  const uint64_t q_cells_before = m_mmu.queue_cells(op.out_port, op.queue);
  const mmu::AdmitResult r = m_mmu.admit(op.admit_op());  // throws on a malformed op
  EnqueueResult out;
  out.verdict = r.verdict;
  out.lossless = r.lossless;
  out.in_headroom = r.in_headroom;
  out.charge = r.charge;
  out.pg = r.pg;
  if (!r.admitted()) return out;

  // Cells off the free list, in list order. The MMU's ingress view fits the
  // buffer (mmu::validate), so they are there.
  if (op.cells > m_free_count) throw std::logic_error("qm::enqueue: admitted a packet the free list cannot hold");
  uint32_t tail;
  const uint32_t head = take_cells(op.cells, &tail);
  m_free_count -= op.cells;
  out.head_cell = head;

  if (r.lossless) out.pfc = pfc_eval(op.in_port, op.pg, r.pg, r.in_headroom);

  Queue& qu = m_q[q];
  const ecn::MarkerConfig& mc = m_cfg.ecn[op.queue];
  if (op.ecn_frame && mc.mode != ecn::MarkerConfig::Mode::off && mc.point == ecn::MarkerConfig::Point::enqueue)
    out.ecn = ecn_decide(op.out_port, op.queue, mc.unit == ecn::MarkerConfig::Unit::cells ? q_cells_before : qu.bytes,
                         op.ecn, op.rand32);

  uint32_t id;
  if (!m_desc_free.empty()) {
    id = m_desc_free.back();
    m_desc_free.pop_back();
  } else {
    // A new peak of packets held: the pool grows (and the free list's room
    // with it, so a release never allocates).
    id = static_cast<uint32_t>(m_desc.size());
    m_desc.emplace_back();
    if (m_desc_free.capacity() < m_desc.capacity()) m_desc_free.reserve(m_desc.capacity());
  }
  Desc& d = m_desc[id];
  d.next = kNoDesc;
  d.head = head;
  d.tail = tail;
  d.cells = op.cells;
  d.bytes = op.bytes;
  d.in_port = op.in_port;
  d.pg = op.pg;
  if (qu.tail_desc == kNoDesc) {
    qu.head = head;
    qu.head_desc = id;
  } else {
    m_desc[qu.tail_desc].next = id;
  }
  qu.tail_desc = id;
  ++qu.packets;
  qu.bytes += op.bytes;
  return out;
}

DequeueResult QueueManager::dequeue(const DequeueOp& op) {
  if (op.port >= ports() || op.queue >= kQueues)
    throw std::invalid_argument("qm::dequeue: no queue (" + std::to_string(op.port) + ", " + std::to_string(op.queue) +
                                ")");
  const size_t q = qi(op.port, op.queue);
  Queue& qu = m_q[q];
  if (qu.head == kNoCell) throw std::logic_error("qm::dequeue: queue is empty");
  const uint32_t head = qu.head;
  const uint32_t id = qu.head_desc;
  const Desc d = m_desc[id];
  m_desc_free.push_back(id);
  qu.head_desc = d.next;
  if (d.next == kNoDesc) {
    qu.head = kNoCell;
    qu.tail_desc = kNoDesc;
  } else {
    qu.head = m_desc[d.next].head;
  }
  --qu.packets;
  qu.bytes -= d.bytes;

  DequeueResult out;
  out.head_cell = head;
  out.cells = d.cells;
  out.bytes = d.bytes;
  mmu::ReleaseOp ro;
  ro.in_port = d.in_port;
  ro.pg = d.pg;
  ro.out_port = op.port;
  ro.queue = op.queue;
  ro.cells = d.cells;
  const mmu::ReleaseResult rel = m_mmu.release(ro);
  out.charge = rel.returned;
  out.charge.in_port = d.in_port;
  out.charge.pg = d.pg;
  out.charge.out_port = op.port;
  out.charge.queue = op.queue;
  out.pg = rel.pg;
  if ((m_lossless_pgs[d.in_port] >> d.pg) & 1) out.pfc = pfc_eval(d.in_port, d.pg, rel.pg, false);

  // The chain back onto the free list, whole: its head is handed out next.
  m_next[d.tail] = m_free_head;
  m_free_head = head;
  push_run(Run{head, d.tail, d.cells});
  m_free_count += d.cells;

  const ecn::MarkerConfig& mc = m_cfg.ecn[op.queue];
  if (!op.discard && op.ecn_frame && mc.mode != ecn::MarkerConfig::Mode::off &&
      mc.point == ecn::MarkerConfig::Point::dequeue)
    out.ecn = ecn_decide(op.port, op.queue, mc.unit == ecn::MarkerConfig::Unit::cells ? rel.queue.total() : qu.bytes,
                         op.ecn, op.rand32);
  return out;
}

PfcAction QueueManager::pfc_tick(uint16_t port, uint8_t pg) {
  if (port >= ports() || pg >= kQueues) throw std::invalid_argument("qm::pfc_tick: no PG");
  if (!m_gen[qi(port, pg)].xoff()) return PfcAction::none;
  return pfc_eval(port, pg, m_mmu.pg_state(port, pg), false);
}

void QueueManager::take_cells_unaccounted_for_test(uint32_t n) {
  for (uint32_t i = 0; i < n && m_free_count > 0; ++i) {
    uint32_t last;
    take_cells(1, &last);
    --m_free_count;
  }
}

uint32_t QueueManager::free_list_length() const {
  // The freed cells are walked (a corrupted link shows as a cycle or a short
  // count); the never-used ones after them are a range.
  uint32_t n = 0, c = m_free_head;
  for (; c < m_fresh && n <= m_total; c = m_next[c]) ++n;
  if (c >= m_total || n > m_total) return n;
  return n + (m_total - c);
}

}  // namespace rocesim::qm

#include "qm/lockstep.h"

#include <stdexcept>

namespace rocesim::qm {

namespace {

template <class T>
std::string pair_text(const char* field, const T& want, const T& got) {
  return std::string(field) + ": expected " + std::to_string(want) + ", got " + std::to_string(got);
}

}  // namespace

void LockstepQueueManager::compare_cycles(std::function<uint32_t()> dut_cycles, CycleModel model) {
  m_dut_cycles = std::move(dut_cycles);
  m_cycle_model = model;
}

void LockstepQueueManager::cycles(uint32_t tlm_cycles) {
  if (m_dut_cycles) ++m_diff[int64_t(m_dut_cycles()) - int64_t(tlm_cycles)];
}

CycleDiffs cycle_diffs(const std::map<int64_t, uint64_t>& h) {
  CycleDiffs d;
  for (const auto& [v, k] : h) d.n += k;
  if (d.n == 0) return d;
  d.min = h.begin()->first;
  d.max = h.rbegin()->first;
  // Nearest rank: the smallest value with at least ceil(p * n) operations at or below it.
  const uint64_t r50 = (d.n + 1) / 2, r99 = (99 * d.n + 99) / 100;
  uint64_t seen = 0;
  bool got50 = false;
  for (const auto& [v, k] : h) {
    seen += k;
    if (!got50 && seen >= r50) {
      d.p50 = v;
      got50 = true;
    }
    if (seen >= r99) {
      d.p99 = v;
      break;
    }
  }
  return d;
}

void LockstepQueueManager::mismatch(const OpRecord& ref, const std::string& what) {
  if (m_mismatches++ == 0) {
    std::string line = op_text(ref);
    line.pop_back();
    m_first = Mismatch{ref.t_ps, line, what};
  }
}

void LockstepQueueManager::check(const OpRecord& ref, const OpRecord& dut, uint16_t port, uint8_t queue,
                                 uint16_t pg_port, uint8_t pg) {
  ++m_ops;
  std::string diff;
  if (!same_result(ref, dut, diff)) return mismatch(ref, diff);
  // The state the operation touched, read from both.
  if (m_inner.head_cell(port, queue) != m_dut.head_cell(port, queue))
    return mismatch(ref, pair_text("queue head", m_inner.head_cell(port, queue), m_dut.head_cell(port, queue)));
  if (m_inner.queue_packets(port, queue) != m_dut.queue_packets(port, queue))
    return mismatch(ref, pair_text("queue packets", m_inner.queue_packets(port, queue), m_dut.queue_packets(port, queue)));
  if (m_inner.queue_bytes(port, queue) != m_dut.queue_bytes(port, queue))
    return mismatch(ref, pair_text("queue bytes", m_inner.queue_bytes(port, queue), m_dut.queue_bytes(port, queue)));
  const mmu::QueueState qa = m_inner.queue_state(port, queue), qb = m_dut.queue_state(port, queue);
  if (qa.reserved != qb.reserved || qa.shared != qb.shared)
    return mismatch(ref, pair_text("queue cells", qa.total(), qb.total()));
  const mmu::PgState ga = m_inner.pg_state(pg_port, pg), gb = m_dut.pg_state(pg_port, pg);
  if (ga.reserved != gb.reserved || ga.shared != gb.shared || ga.headroom != gb.headroom || ga.threshold != gb.threshold)
    return mismatch(ref, pair_text("PG shared", ga.shared, gb.shared) + " (reserved " + std::to_string(ga.reserved) +
                             "/" + std::to_string(gb.reserved) + ", headroom " + std::to_string(ga.headroom) + "/" +
                             std::to_string(gb.headroom) + ", threshold " + std::to_string(ga.threshold) + "/" +
                             std::to_string(gb.threshold) + ")");
  if (m_inner.xoff(pg_port, pg) != m_dut.xoff(pg_port, pg))
    return mismatch(ref, pair_text("PG xoff", int(m_inner.xoff(pg_port, pg)), int(m_dut.xoff(pg_port, pg))));
  if (m_inner.free_cells() != m_dut.free_cells())
    return mismatch(ref, pair_text("free cells", m_inner.free_cells(), m_dut.free_cells()));
}

EnqueueResult LockstepQueueManager::enqueue(const EnqueueOp& op) {
  OpRecord a, b;
  a.kind = b.kind = OpKind::enqueue;
  a.t_ps = b.t_ps = m_now();
  a.enq = b.enq = op;
  a.enq_r = m_inner.enqueue(op);
  b.enq_r = m_dut.enqueue(op);
  cycles(m_cycle_model.enqueue_cycles());
  check(a, b, op.out_port, op.queue, op.in_port, op.pg);
  return a.enq_r;
}

DequeueResult LockstepQueueManager::dequeue(const DequeueOp& op) {
  OpRecord a, b;
  a.kind = b.kind = OpKind::dequeue;
  a.t_ps = b.t_ps = m_now();
  a.deq = b.deq = op;
  a.deq_r = m_inner.dequeue(op);
  try {
    b.deq_r = m_dut.dequeue(op);
  } catch (const std::logic_error& e) {
    ++m_ops;
    mismatch(a, std::string("the RTL refuses the dequeue: ") + e.what());
    return a.deq_r;
  }
  cycles(m_cycle_model.dequeue_cycles(a.deq_r.cells));
  check(a, b, op.port, op.queue, a.deq_r.charge.in_port, a.deq_r.charge.pg);
  return a.deq_r;
}

PfcAction LockstepQueueManager::pfc_tick(uint16_t port, uint8_t pg) {
  OpRecord a, b;
  a.kind = b.kind = OpKind::tick;
  a.t_ps = b.t_ps = m_now();
  a.tick_port = b.tick_port = port;
  a.tick_pg = b.tick_pg = pg;
  a.tick_r = m_inner.pfc_tick(port, pg);
  b.tick_r = m_dut.pfc_tick(port, pg);
  cycles(0);
  check(a, b, port, 0, port, pg);
  return a.tick_r;
}

}  // namespace rocesim::qm

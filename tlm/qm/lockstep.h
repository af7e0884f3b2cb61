// Lockstep: two queue managers behind one interface, driven with every
// operation, compared after each. The reference (the C++ model) answers the
// caller; the other (the Verilated RTL, rtl::QmRtl) must give the same
// result, field by field (qm::same_result), and the same state for what the
// operation touched (the queue's head, packets and bytes, the PG's state and
// XOFF flag, the free cells). The first difference is kept with the time,
// the operation and both values; the caller fails the run on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "qm/ops_file.h"
#include "qm/queue_manager.h"

namespace rocesim::qm {

struct Mismatch {
  uint64_t t_ps = 0;
  std::string op;    // the operation and the reference's result (an ops-file line, without newline)
  std::string what;  // "field: expected X, got Y"
};

// The cycles the TLM model charges an operation, against which the RTL's
// decision cycles (its res_cycles) are compared (docs/queue-manager.md):
// an enqueue, the admission stage (switch.pipeline.mmu cycles); a dequeue,
// the egress read of the packet's cells (ceil(cells / read_cells_per_cycle));
// a PFC refresh tick, none (the TLM model evaluates it at the timer's instant).
struct CycleModel {
  uint32_t enqueue = 0;
  uint32_t read_cells_per_cycle = 1;
  uint32_t enqueue_cycles() const { return enqueue; }
  uint32_t dequeue_cycles(uint32_t cells) const { return (cells + read_cells_per_cycle - 1) / read_cells_per_cycle; }
};

// Nearest-rank percentiles of the signed differences (RTL minus TLM cycles).
struct CycleDiffs {
  uint64_t n = 0;
  int64_t p50 = 0, p99 = 0, min = 0, max = 0;
};

CycleDiffs cycle_diffs(const std::map<int64_t, uint64_t>& histogram);

class LockstepQueueManager final : public ForwardingQueueManager {
 public:
  // Reads are the reference's.
  LockstepQueueManager(QueueManagerIf& ref, QueueManagerIf& dut, std::function<uint64_t()> now)
      : ForwardingQueueManager(ref), m_dut(dut), m_now(std::move(now)) {}
  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;

  // Cycle agreement: after each operation, dut_cycles() is the RTL's decision
  // cycles for it, compared with what `model` charges. Before the first operation.
  void compare_cycles(std::function<uint32_t()> dut_cycles, CycleModel model);
  CycleDiffs cycle_diffs() const { return qm::cycle_diffs(m_diff); }
  const std::map<int64_t, uint64_t>& cycle_histogram() const { return m_diff; }  // difference -> operations

  uint64_t operations() const { return m_ops; }
  uint64_t mismatches() const { return m_mismatches; }
  const Mismatch& first_mismatch() const { return m_first; }

 private:
  // Compares the two results, then the state the operation touched.
  void check(const OpRecord& ref, const OpRecord& dut, uint16_t port, uint8_t queue, uint16_t pg_port, uint8_t pg);
  void mismatch(const OpRecord& ref, const std::string& what);
  void cycles(uint32_t tlm_cycles);
  QueueManagerIf& m_dut;
  std::function<uint64_t()> m_now;
  std::function<uint32_t()> m_dut_cycles;
  CycleModel m_cycle_model;
  std::map<int64_t, uint64_t> m_diff;  // difference -> operations (a few distinct values: no allocation in steady state)
  uint64_t m_ops = 0, m_mismatches = 0;
  Mismatch m_first;
};

}  // namespace rocesim::qm

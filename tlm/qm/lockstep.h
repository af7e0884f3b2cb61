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
#include <string>

#include "qm/ops_file.h"
#include "qm/queue_manager.h"

namespace rocesim::qm {

struct Mismatch {
  uint64_t t_ps = 0;
  std::string op;    // the operation and the reference's result (an ops-file line, without newline)
  std::string what;  // "field: expected X, got Y"
};

class LockstepQueueManager final : public ForwardingQueueManager {
 public:
  // Reads are the reference's.
  LockstepQueueManager(QueueManagerIf& ref, QueueManagerIf& dut, std::function<uint64_t()> now)
      : ForwardingQueueManager(ref), m_dut(dut), m_now(std::move(now)) {}
  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;

  uint64_t operations() const { return m_ops; }
  uint64_t mismatches() const { return m_mismatches; }
  const Mismatch& first_mismatch() const { return m_first; }

 private:
  // Compares the two results, then the state the operation touched.
  void check(const OpRecord& ref, const OpRecord& dut, uint16_t port, uint8_t queue, uint16_t pg_port, uint8_t pg);
  void mismatch(const OpRecord& ref, const std::string& what);
  QueueManagerIf& m_dut;
  std::function<uint64_t()> m_now;
  uint64_t m_ops = 0, m_mismatches = 0;
  Mismatch m_first;
};

}  // namespace rocesim::qm

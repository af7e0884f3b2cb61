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

class LockstepQueueManager final : public QueueManagerIf {
 public:
  LockstepQueueManager(QueueManagerIf& ref, QueueManagerIf& dut, std::function<uint64_t()> now)
      : m_ref(ref), m_dut(dut), m_now(std::move(now)) {}
  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;
  uint32_t head_cell(uint16_t port, uint8_t queue) const override { return m_ref.head_cell(port, queue); }
  uint32_t queue_packets(uint16_t port, uint8_t queue) const override { return m_ref.queue_packets(port, queue); }
  uint64_t queue_bytes(uint16_t port, uint8_t queue) const override { return m_ref.queue_bytes(port, queue); }
  uint32_t next_cell(uint32_t cell) const override { return m_ref.next_cell(cell); }
  uint32_t free_cells() const override { return m_ref.free_cells(); }
  bool xoff(uint16_t port, uint8_t pg) const override { return m_ref.xoff(port, pg); }
  mmu::PgState pg_state(uint16_t port, uint8_t pg) const override { return m_ref.pg_state(port, pg); }
  mmu::QueueState queue_state(uint16_t port, uint8_t queue) const override { return m_ref.queue_state(port, queue); }
  uint32_t cells_for(uint64_t bytes) const override { return m_ref.cells_for(bytes); }

  uint64_t operations() const { return m_ops; }
  uint64_t mismatches() const { return m_mismatches; }
  const Mismatch& first_mismatch() const { return m_first; }

 private:
  // Compares the two results, then the state the operation touched.
  void check(const OpRecord& ref, const OpRecord& dut, uint16_t port, uint8_t queue, uint16_t pg_port, uint8_t pg);
  void mismatch(const OpRecord& ref, const std::string& what);
  QueueManagerIf& m_ref;
  QueueManagerIf& m_dut;
  std::function<uint64_t()> m_now;
  uint64_t m_ops = 0, m_mismatches = 0;
  Mismatch m_first;
};

}  // namespace rocesim::qm

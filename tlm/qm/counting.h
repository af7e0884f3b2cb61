// The statistics of a queue manager that keeps none of its own: in rtl mode
// (switch.queue_impl: rtl) the Verilated RTL makes every decision and holds
// the state, and this decorator keeps the counters the outputs report (the
// MMU's admitted, released and dropped packets and cells by reason, every
// peak, and each queue's ECN counters), booked from each operation's result
// with the same code the C++ model counts with (mmu::Mmu::book and release,
// ecn::count). Nothing here decides: the results it passes on are the inner
// queue manager's, unchanged; the reads are the inner one's.
//
// Booking a release recomputes the buckets the cells come back from with the
// MMU's release rule (headroom, shared, reserve); in rtl mode they are
// checked against the RTL's: a difference throws std::logic_error (the RTL
// and the C++ accounting disagree, which a lockstep run would name).
#pragma once

#include <cstdint>
#include <vector>

#include "ecn/marker.h"
#include "mmu/mmu.h"
#include "qm/queue_manager.h"

namespace rocesim::qm {

class CountingQueueManager final : public ForwardingQueueManager {
 public:
  // cfg: the inner queue manager's configuration (for the MMU's profiles).
  CountingQueueManager(QueueManagerIf& inner, const Config& cfg);
  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;

  const mmu::Mmu& mmu() const { return m_book; }
  const ecn::Counters& ecn_counters(uint16_t port, uint8_t queue) const { return m_ecn[size_t(port) * kQueues + queue]; }
  uint64_t operations() const { return m_ops; }

 private:
  void count_ecn(uint16_t port, uint8_t queue, const EcnResult& e, uint8_t ecn_in);
  mmu::Mmu m_book;
  std::vector<ecn::Counters> m_ecn;  // port * 8 + queue
  uint64_t m_ops = 0;
};

}  // namespace rocesim::qm

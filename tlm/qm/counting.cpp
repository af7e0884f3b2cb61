#include "qm/counting.h"

#include <stdexcept>
#include <string>

namespace rocesim::qm {

CountingQueueManager::CountingQueueManager(QueueManagerIf& inner, const Config& cfg)
    : ForwardingQueueManager(inner), m_book(cfg.mmu), m_ecn(cfg.mmu.ports.size() * kQueues) {}

void CountingQueueManager::count_ecn(uint16_t port, uint8_t queue, const EcnResult& e, uint8_t ecn_in) {
  if (e.decided) ecn::count(m_ecn[size_t(port) * kQueues + queue], e.fired, e.drew, ecn_in);
}

EnqueueResult CountingQueueManager::enqueue(const EnqueueOp& op) {
  const EnqueueResult r = m_inner.enqueue(op);
  ++m_ops;
  m_book.book(op.admit_op(), r.verdict, r.charge);
  count_ecn(op.out_port, op.queue, r.ecn, op.ecn);
  return r;
}

DequeueResult CountingQueueManager::dequeue(const DequeueOp& op) {
  const DequeueResult r = m_inner.dequeue(op);
  ++m_ops;
  const mmu::ReleaseResult rel = m_book.release(mmu::ReleaseOp::of(r.charge));
  const mmu::Charge& b = rel.returned;
  if (b.in_reserved != r.charge.in_reserved || b.in_shared != r.charge.in_shared || b.headroom != r.charge.headroom ||
      b.eg_reserved != r.charge.eg_reserved || b.eg_shared != r.charge.eg_shared)
    throw std::logic_error("qm: the release of " + std::to_string(r.cells) + " cells from port " +
                           std::to_string(op.port) + " queue " + std::to_string(op.queue) +
                           " came back from other buckets than the MMU's release rule gives");
  if (!op.discard) count_ecn(op.port, op.queue, r.ecn, op.ecn);
  return r;
}

PfcAction CountingQueueManager::pfc_tick(uint16_t port, uint8_t pg) {
  ++m_ops;
  return m_inner.pfc_tick(port, pg);
}

}  // namespace rocesim::qm

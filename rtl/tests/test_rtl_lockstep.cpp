// The lockstep scoreboard (tlm/qm/lockstep.h) with the Verilated RTL as the
// second queue manager: identical configurations agree on every operation;
// an RTL configured with one parameter off (the alpha shift of a PG's
// dynamic threshold, or the XON offset of the PFC hysteresis) is caught at
// the first operation whose result differs, with the time, the operation,
// the expected and the actual value.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "qm/lockstep.h"
#include "qm/queue_manager.h"
#include "qm_rtl.h"

using namespace rocesim;

namespace {

constexpr uint32_t kPool = 128;

// 2 ports, 256 cells; ingress pool 0 and egress pool 1 of 128 cells, dynamic
// thresholds alpha 1 (n = 0) everywhere, no reserves; markers off.
qm::Config config() {
  qm::Config c;
  mmu::Config& m = c.mmu;
  m.cell_bytes = 256;
  m.total_cells = 256;
  m.pools.push_back(mmu::PoolConfig{"in", mmu::PoolType::ingress, kPool, mmu::ThresholdMode::dynamic_th});
  m.pools.push_back(mmu::PoolConfig{"eg", mmu::PoolType::egress, kPool, mmu::ThresholdMode::dynamic_th});
  m.ports.resize(2);
  for (mmu::PortConfig& p : m.ports) {
    for (mmu::PgProfile& g : p.pgs) {
      g.pool = 0;
      g.threshold = mmu::Threshold{mmu::ThresholdMode::dynamic_th, 0, 0};
    }
    for (mmu::QueueProfile& q : p.queues) {
      q.pool = 1;
      q.threshold = mmu::Threshold{mmu::ThresholdMode::dynamic_th, 0, 0};
    }
  }
  for (ecn::MarkerConfig& e : c.ecn) e.mode = ecn::MarkerConfig::Mode::off;
  return c;
}

qm::EnqueueOp enq(uint8_t pg, uint32_t cells, bool lossless = false) {
  qm::EnqueueOp o;
  o.in_port = 0;
  o.pg = pg;
  o.out_port = 1;
  o.queue = pg;
  o.cells = cells;
  o.bytes = cells * 256;
  o.lossless = lossless;
  return o;
}

}  // namespace

TEST(RtlLockstep, IdenticalConfigurationsAgreeOnEveryOperation) {
  qm::QueueManager model(config());
  rtl::QmRtl dut(config());
  uint64_t t = 0;
  qm::LockstepQueueManager ls(model, dut, [&t] { return t; });
  // Fill queue 0 until drops (alpha 1 at 128 cells: DT settles near 64), then drain.
  uint32_t admitted = 0;
  for (int i = 0; i < 200; ++i, t += 1000) admitted += ls.enqueue(enq(0, 1 + i % 3)).admitted();
  EXPECT_GT(admitted, 0u);
  EXPECT_LT(admitted, 200u) << "the stream reaches the dynamic threshold: drops are compared too";
  for (uint32_t k = 0; k < admitted; ++k, t += 1000) {
    qm::DequeueOp d;
    d.port = 1;
    d.queue = 0;
    ls.dequeue(d);
  }
  EXPECT_EQ(ls.operations(), 200u + admitted);
  EXPECT_EQ(ls.mismatches(), 0u) << ls.first_mismatch().what << " at " << ls.first_mismatch().op;
}

// The RTL with PG (0, 0) at dynamic_th 1 (alpha 2) instead of 0 (alpha 1):
// after the first 1-cell admit the PG's threshold is alpha x (pool - used) =
// 1 x (128 - 1) = 127 in the model and 2 x 127 = 254 in the RTL.
TEST(RtlLockstep, AnAlphaShiftOffByOneIsCaughtAtTheFirstOperation) {
  qm::Config broken = config();
  broken.mmu.ports[0].pgs[0].threshold.dynamic_th = 1;
  qm::QueueManager model(config());
  rtl::QmRtl dut(broken);
  uint64_t t = 123456;
  qm::LockstepQueueManager ls(model, dut, [&t] { return t; });
  const qm::EnqueueResult r = ls.enqueue(enq(0, 1));
  EXPECT_TRUE(r.admitted());
  EXPECT_EQ(r.pg.threshold, (kPool - 1) << 0) << "the caller gets the model's result";
  ASSERT_EQ(ls.mismatches(), 1u);
  const qm::Mismatch& m = ls.first_mismatch();
  EXPECT_EQ(m.t_ps, 123456u);
  EXPECT_EQ(m.what, "pg.threshold: expected " + std::to_string(kPool - 1) + ", got " + std::to_string((kPool - 1) << 1));
  EXPECT_EQ(m.op.rfind("E 123456 0 0 0 1 0 1 256 ", 0), 0u) << m.op;
}

// PFC hysteresis: XOFF at a static 8 cells, XON when shared + offset < 8.
// The model's offset is 2 (XON when shared <= 5), the RTL's 4 (shared <= 3):
// draining from 8, the release that leaves 5 resumes in the model only.
TEST(RtlLockstep, AnXonOffsetOffIsCaughtAtTheReleaseThatResumes) {
  auto pfc = [](uint32_t offset) {
    qm::Config c = config();
    c.mmu.ports[0].pgs[3].lossless = true;
    c.mmu.ports[0].pgs[3].headroom_cells = 16;
    c.pfc_enabled = true;
    c.pfc_pgs = 1u << 3;
    c.pfc.dynamic_xoff = false;
    c.pfc.xoff_cells = 8;
    c.pfc.xon_rule = pfc::GeneratorConfig::XonRule::offset;
    c.pfc.xon_offset_cells = offset;
    return c;
  };
  qm::QueueManager model(pfc(2));
  rtl::QmRtl dut(pfc(4));
  uint64_t t = 0;
  qm::LockstepQueueManager ls(model, dut, [&t] { return t; });
  for (int i = 0; i < 8; ++i, ++t) ls.enqueue(enq(3, 1, true));  // shared 8: XOFF on the 8th in both
  EXPECT_EQ(ls.mismatches(), 0u) << ls.first_mismatch().what;
  EXPECT_TRUE(model.xoff(0, 3));
  uint32_t left = 8;
  while (ls.mismatches() == 0 && left > 0) {
    qm::DequeueOp d;
    d.port = 1;
    d.queue = 3;
    ls.dequeue(d);
    --left;
    ++t;
  }
  // The first difference: the release leaving 5 (5 + 2 < 8 resumes; 5 + 4 < 8 does not).
  EXPECT_EQ(left, 5u);
  EXPECT_EQ(ls.first_mismatch().what, "pfc: expected xon, got none");
  EXPECT_EQ(ls.first_mismatch().op.rfind("D ", 0), 0u) << ls.first_mismatch().op;
}

// MMU admission semantics: static caps, reserves, lossy drop reasons,
// lossless headroom, release order, and conservation over a random stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <utility>
#include <stdexcept>
#include <vector>

#include "mmu_test_util.h"
#include "packet/packet.h"

namespace rocesim::mmu::test {
namespace {

size_t vi(Verdict v) { return static_cast<size_t>(v); }

TEST(Cells, CeilOfBytesOverCell) {
  EXPECT_EQ(cells_for_bytes(0, 256), 0u);
  EXPECT_EQ(cells_for_bytes(1, 256), 1u);
  EXPECT_EQ(cells_for_bytes(256, 256), 1u);
  EXPECT_EQ(cells_for_bytes(257, 256), 2u);
  EXPECT_EQ(cells_for_bytes(1518, 256), 6u);
  EXPECT_EQ(cells_for_bytes(4200, 208), 21u);  // 20 * 208 = 4160 < 4200
  Mmu mmu(base_config(1, 100, 10, 10));
  EXPECT_EQ(mmu.cells_for(64), 1u);
  EXPECT_EQ(mmu.cells_for(9216), 36u);
}

// Each drop verdict's name is the packet layer's name of the drop reason it
// becomes (the one drops.csv and summary.json print), compared with
// packet::drop_reason_name itself so that a rename on either side fails.
TEST(Verdicts, NamesAreThePacketLayersDropReasonNames) {
  namespace pk = rocesim::packet;
  const std::pair<Verdict, pk::DropReason> kMap[] = {
      {Verdict::drop_ingress_limit, pk::DropReason::ingress_limit},
      {Verdict::drop_egress_limit, pk::DropReason::egress_limit},
      {Verdict::drop_pool_full, pk::DropReason::pool_full},
      {Verdict::drop_headroom_overflow, pk::DropReason::headroom_overflow},
  };
  ASSERT_EQ(std::size(kMap), kVerdicts - 1) << "every drop verdict is mapped";
  for (const auto& [v, r] : kMap) {
    EXPECT_STREQ(verdict_name(v), pk::drop_reason_name(r));
    // And no other reason carries that name.
    int same = 0;
    for (size_t i = 0; i < static_cast<size_t>(pk::DropReason::count_); ++i)
      same += std::string(pk::drop_reason_name(static_cast<pk::DropReason>(i))) == verdict_name(v);
    EXPECT_EQ(same, 1) << verdict_name(v);
  }
  // admit is not a drop reason.
  for (size_t i = 0; i < static_cast<size_t>(pk::DropReason::count_); ++i)
    EXPECT_STRNE(pk::drop_reason_name(static_cast<pk::DropReason>(i)), verdict_name(Verdict::admit));
}

TEST(StaticThreshold, CapsEgressQueueAtItsValueExactly) {
  Config c = base_config(2, 10000, 5000, 5000);
  c.ports[1].queues[0].threshold = stat(100);
  c.ports[1].queues[1].threshold = stat(100);
  Mmu mmu(c);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 1)).admitted()) << i;
  AdmitResult a = mmu.admit(op(0, 0, 1, 0, 1));
  EXPECT_EQ(a.verdict, Verdict::drop_egress_limit);
  EXPECT_EQ(a.queue.total(), 100u);
  EXPECT_EQ(a.queue.threshold, 100u);
  // 3-cell packets: 33 fit (99 cells); a 34th would end at 102 > 100.
  for (int i = 0; i < 33; ++i) ASSERT_TRUE(mmu.admit(op(0, 1, 1, 1, 3)).admitted()) << i;
  EXPECT_EQ(mmu.admit(op(0, 1, 1, 1, 3)).verdict, Verdict::drop_egress_limit);
  EXPECT_EQ(mmu.queue_state(1, 1).total(), 99u);
  EXPECT_TRUE(mmu.admit(op(0, 1, 1, 1, 1)).admitted()) << "99 + 1 <= 100";
  EXPECT_EQ(mmu.admit(op(0, 1, 1, 1, 1)).verdict, Verdict::drop_egress_limit);
  EXPECT_EQ(mmu.queue_counters(1, 0).peak_cells, 100u);
  EXPECT_EQ(mmu.queue_counters(1, 1).peak_cells, 100u);
  // A release makes room for exactly one more cell.
  mmu.release(ReleaseOp{0, 0, 1, 0, 1});
  EXPECT_TRUE(mmu.admit(op(0, 0, 1, 0, 1)).admitted());
  EXPECT_FALSE(mmu.admit(op(0, 0, 1, 0, 1)).admitted());
}

TEST(StaticThreshold, CapsIngressPgAtItsValueExactly) {
  Config c = base_config(2, 10000, 5000, 5000);
  c.ports[0].pgs[2].threshold = stat(50);
  c.ports[0].pgs[2].reserved_cells = 7;
  Mmu mmu(c);
  for (int i = 0; i < 57; ++i) ASSERT_TRUE(mmu.admit(op(0, 2, 1, 0, 1)).admitted()) << i;
  const AdmitResult a = mmu.admit(op(0, 2, 1, 0, 1));
  EXPECT_EQ(a.verdict, Verdict::drop_ingress_limit);
  EXPECT_EQ(a.pg.reserved, 7u);
  EXPECT_EQ(a.pg.shared, 50u) << "the static limit counts shared use, beyond the reserve";
  EXPECT_EQ(a.pg.threshold, 50u);
}

TEST(Reserve, QueueTakesItsReserveWhenThePoolIsExhausted) {
  Config c = base_config(3, 10000, 5000, 1000);
  c.ports[2].queues[0].threshold = stat(5000);  // never binds before the pool does
  c.ports[2].queues[1].reserved_cells = 10;
  Mmu mmu(c);
  AdmitResult a;
  int n = 0;
  while ((a = mmu.admit(op(0, 0, 2, 0, 1))).admitted()) ++n;
  EXPECT_EQ(n, 1000);
  EXPECT_EQ(a.verdict, Verdict::drop_pool_full);
  EXPECT_EQ(mmu.pool(kEgressPool).used, 1000u);
  for (int i = 0; i < 8; ++i) {
    a = mmu.admit(op(1, 0, 2, 1, 1));
    ASSERT_TRUE(a.admitted()) << i;
    EXPECT_EQ(a.charge.eg_reserved, 1u);
    EXPECT_EQ(a.charge.eg_shared, 0u);
  }
  // 2 reserve cells left: a 4-cell packet needs 2 shared cells the pool lacks.
  a = mmu.admit(op(1, 0, 2, 1, 4));
  EXPECT_EQ(a.verdict, Verdict::drop_pool_full);
  EXPECT_EQ(a.charge.cells(), 0u) << "a dropped packet charges nothing";
  EXPECT_TRUE(mmu.admit(op(1, 0, 2, 1, 2)).admitted());
  EXPECT_EQ(mmu.queue_state(2, 1).reserved, 10u);
  EXPECT_EQ(mmu.admit(op(1, 0, 2, 1, 1)).verdict, Verdict::drop_pool_full);
  EXPECT_EQ(mmu.total_used(), 1010u);
}

TEST(Reserve, PgTakesItsReserveWhenTheIngressPoolIsExhausted) {
  Config c = base_config(3, 10000, 1000, 5000);
  for (PortConfig& p : c.ports)
    for (QueueProfile& q : p.queues) q.threshold = stat(5000);
  c.ports[1].pgs[0].reserved_cells = 10;
  Mmu mmu(c);
  int n = 0;
  AdmitResult a;
  while ((a = mmu.admit(op(0, 0, 2, 0, 1))).admitted()) ++n;
  EXPECT_EQ(n, 1000);
  EXPECT_EQ(a.verdict, Verdict::drop_pool_full);
  for (int i = 0; i < 10; ++i) {
    a = mmu.admit(op(1, 0, 2, 0, 1));
    ASSERT_TRUE(a.admitted()) << i;
    EXPECT_EQ(a.charge.in_reserved, 1u);
  }
  EXPECT_EQ(mmu.admit(op(1, 0, 2, 0, 1)).verdict, Verdict::drop_pool_full);
  EXPECT_EQ(mmu.pool(kIngressPool).used, 1000u);
}

TEST(Lossy, DropReasonsAndCounters) {
  Config c = base_config(2, 10000, 5000, 5000);
  c.ports[0].pgs[1].threshold = stat(5);
  c.ports[1].queues[1].threshold = stat(3);
  Mmu mmu(c);
  // Ingress limit.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(mmu.admit(op(0, 1, 1, 2, 1)).admitted());
  const PgState before = mmu.pg_state(0, 1);
  AdmitResult a = mmu.admit(op(0, 1, 1, 2, 2));
  EXPECT_EQ(a.verdict, Verdict::drop_ingress_limit);
  EXPECT_EQ(a.pg.shared, before.shared) << "nothing charged";
  EXPECT_EQ(mmu.queue_state(1, 2).total(), 5u);
  // Egress limit.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(mmu.admit(op(0, 2, 1, 1, 1)).admitted());
  a = mmu.admit(op(0, 2, 1, 1, 1));
  EXPECT_EQ(a.verdict, Verdict::drop_egress_limit);
  EXPECT_EQ(mmu.pg_state(0, 2).total(), 3u) << "ingress charge rolled back on an egress drop";
  EXPECT_EQ(mmu.pool(kIngressPool).used, 8u);
  // Both limits reached: ingress is checked first.
  EXPECT_EQ(mmu.admit(op(0, 1, 1, 1, 1)).verdict, Verdict::drop_ingress_limit);

  EXPECT_EQ(mmu.pg_counters(0, 1).dropped.packets[vi(Verdict::drop_ingress_limit)], 2u);
  EXPECT_EQ(mmu.pg_counters(0, 1).dropped.cells[vi(Verdict::drop_ingress_limit)], 3u);
  EXPECT_EQ(mmu.queue_counters(1, 2).dropped.packets[vi(Verdict::drop_ingress_limit)], 1u);
  EXPECT_EQ(mmu.queue_counters(1, 1).dropped.packets[vi(Verdict::drop_egress_limit)], 1u);
  EXPECT_EQ(mmu.queue_counters(1, 1).dropped.packets[vi(Verdict::drop_ingress_limit)], 1u);
  EXPECT_EQ(mmu.pg_counters(0, 2).dropped.packets[vi(Verdict::drop_egress_limit)], 1u);
  EXPECT_EQ(mmu.drops().packets[vi(Verdict::drop_ingress_limit)], 2u);
  EXPECT_EQ(mmu.drops().packets[vi(Verdict::drop_egress_limit)], 1u);
  EXPECT_EQ(mmu.drops().total_packets(), 3u);
  EXPECT_EQ(mmu.admitted_packets(), 8u);
  EXPECT_EQ(mmu.pg_counters(0, 1).admitted_cells, 5u);
}

TEST(Lossy, PoolFullWhenTheSharedPartDoesNotFit) {
  Config c = base_config(2, 10000, 5000, 10);
  c.ports[1].queues[0].threshold = dyn(7);
  Mmu mmu(c);
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 4)).admitted());
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 4)).admitted());
  AdmitResult a = mmu.admit(op(0, 0, 1, 0, 4));
  EXPECT_EQ(a.verdict, Verdict::drop_pool_full) << "threshold 128*2 passes, 8 + 4 > 10 does not fit";
  EXPECT_EQ(a.queue.threshold, 256u);
  EXPECT_TRUE(mmu.admit(op(0, 0, 1, 0, 2)).admitted());
  EXPECT_EQ(mmu.pool(kEgressPool).used, 10u);
  EXPECT_EQ(mmu.pool(kEgressPool).peak, 10u);
  // Ingress pool full.
  Config d = base_config(2, 10000, 6, 1000);
  Mmu m2(d);
  ASSERT_TRUE(m2.admit(op(0, 0, 1, 0, 5)).admitted());
  EXPECT_EQ(m2.admit(op(0, 1, 1, 0, 2)).verdict, Verdict::drop_pool_full);
  EXPECT_EQ(m2.drops().cells[vi(Verdict::drop_pool_full)], 2u);
}

// PG 3 of port 0: lossless, reserve 4, static shared limit 10, headroom 20.
Config lossless_config(uint32_t egress_pool) {
  Config c = base_config(2, 10000, 5000, egress_pool);
  PgProfile& g = c.ports[0].pgs[3];
  g.lossless = true;
  g.reserved_cells = 4;
  g.threshold = stat(10);
  g.headroom_cells = 20;
  c.ports[1].queues[3].threshold = stat(2);  // would drop lossy traffic almost at once
  return c;
}

TEST(Lossless, OverflowGoesToHeadroomThenDropsOnlyWhenHeadroomIsFull) {
  Mmu mmu(lossless_config(20));
  for (int i = 0; i < 34; ++i) {
    const AdmitResult a = mmu.admit(op(0, 3, 1, 3, 1, true));
    ASSERT_TRUE(a.admitted()) << i;
    EXPECT_TRUE(a.lossless);
    if (i < 4) {
      EXPECT_EQ(a.charge.in_reserved, 1u) << i;
      EXPECT_FALSE(a.in_headroom);
    } else if (i < 14) {
      EXPECT_EQ(a.charge.in_shared, 1u) << i;
      EXPECT_FALSE(a.in_headroom);
      EXPECT_EQ(a.pg.shared, uint32_t(i - 3));
    } else {
      EXPECT_EQ(a.charge.headroom, 1u) << i;
      EXPECT_TRUE(a.in_headroom) << i;
      EXPECT_EQ(a.pg.shared, 10u);
      EXPECT_EQ(a.pg.headroom, uint32_t(i - 13));
    }
    EXPECT_EQ(a.pg.threshold, 10u);
  }
  const AdmitResult a = mmu.admit(op(0, 3, 1, 3, 1, true));
  EXPECT_EQ(a.verdict, Verdict::drop_headroom_overflow);
  EXPECT_FALSE(a.in_headroom);
  EXPECT_EQ(mmu.pg_counters(0, 3).headroom_packets, 20u);
  EXPECT_EQ(mmu.pg_counters(0, 3).peak_headroom, 20u);
  EXPECT_EQ(mmu.drops().packets[vi(Verdict::drop_headroom_overflow)], 1u);
  // Egress is accounting only: the queue's static limit of 2 and its pool of
  // 20 did not drop anything; the pool is over-committed by lossless cells.
  EXPECT_EQ(mmu.queue_state(1, 3).total(), 34u);
  EXPECT_EQ(mmu.pool(kEgressPool).used, 34u);
  // A lossy packet to another queue of that pool finds no free cell.
  EXPECT_EQ(mmu.admit(op(0, 0, 1, 4, 1)).verdict, Verdict::drop_pool_full);
}

TEST(Lossless, NoPartialHeadroomAndNoSplitSharedHeadroom) {
  Mmu mmu(lossless_config(1000));
  for (int i = 0; i < 4 + 8; ++i) ASSERT_TRUE(mmu.admit(op(0, 3, 1, 3, 1, true)).admitted());
  // Shared at 8 of 10: a 3-cell packet does not fit under the static limit,
  // so all 3 cells go to headroom (not 2 shared + 1 headroom).
  AdmitResult a = mmu.admit(op(0, 3, 1, 3, 3, true));
  ASSERT_TRUE(a.admitted());
  EXPECT_EQ(a.charge.in_shared, 0u);
  EXPECT_EQ(a.charge.headroom, 3u);
  EXPECT_EQ(a.pg.shared, 8u);
  // A 2-cell packet still fits in shared.
  a = mmu.admit(op(0, 3, 1, 3, 2, true));
  EXPECT_EQ(a.charge.in_shared, 2u);
  EXPECT_FALSE(a.in_headroom);
  // Headroom 3 of 20: 17 left; an 18-cell packet overflows whole.
  a = mmu.admit(op(0, 3, 1, 3, 18, true));
  EXPECT_EQ(a.verdict, Verdict::drop_headroom_overflow);
  EXPECT_EQ(mmu.pg_state(0, 3).headroom, 3u);
  EXPECT_TRUE(mmu.admit(op(0, 3, 1, 3, 17, true)).in_headroom);
  EXPECT_EQ(mmu.pg_state(0, 3).headroom, 20u);
}

TEST(Lossless, ReleaseReturnsHeadroomFirstThenSharedThenReserve) {
  Mmu mmu(lossless_config(1000));
  for (int i = 0; i < 34; ++i) ASSERT_TRUE(mmu.admit(op(0, 3, 1, 3, 1, true)).admitted());
  // PG: reserved 4, shared 10, headroom 20. Release oldest-first packets:
  // even though the first packets were charged to the reserve, the cells
  // come back from headroom first.
  for (int i = 0; i < 5; ++i) {
    const ReleaseResult r = mmu.release(ReleaseOp{0, 3, 1, 3, 1});
    EXPECT_EQ(r.returned.headroom, 1u);
    EXPECT_EQ(r.returned.in_reserved, 0u);
    EXPECT_EQ(r.returned.eg_shared, 1u) << "queue: shared before reserve";
  }
  PgState s = mmu.pg_state(0, 3);
  EXPECT_EQ(s.headroom, 15u);
  EXPECT_EQ(s.shared, 10u);
  EXPECT_EQ(s.reserved, 4u);
  // One 20-cell release: 15 headroom + 5 shared.
  ReleaseResult r = mmu.release(ReleaseOp{0, 3, 1, 3, 20});
  EXPECT_EQ(r.returned.headroom, 15u);
  EXPECT_EQ(r.returned.in_shared, 5u);
  EXPECT_EQ(r.returned.in_reserved, 0u);
  EXPECT_EQ(r.pg.shared, 5u);
  EXPECT_EQ(r.pg.headroom, 0u);
  EXPECT_EQ(mmu.pool(kIngressPool).used, 5u);
  // 7 more: 5 shared + 2 reserve.
  r = mmu.release(ReleaseOp{0, 3, 1, 3, 7});
  EXPECT_EQ(r.returned.in_shared, 5u);
  EXPECT_EQ(r.returned.in_reserved, 2u);
  EXPECT_EQ(r.pg.total(), 2u);
  EXPECT_EQ(r.pg.reserved, 2u);
}

TEST(Lossless, FullPoolSendsLosslessToHeadroomNotToADrop) {
  Config c = lossless_config(1000);
  c.pools[kIngressPool].size_cells = 6;
  c.ports[0].pgs[3].threshold = stat(100);
  Mmu mmu(c);
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 6)).admitted());  // a lossy PG fills the ingress pool
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(mmu.admit(op(0, 3, 1, 3, 1, true)).in_headroom);  // reserve
  const AdmitResult a = mmu.admit(op(0, 3, 1, 3, 2, true));
  EXPECT_TRUE(a.admitted());
  EXPECT_TRUE(a.in_headroom);
  EXPECT_EQ(a.charge.headroom, 2u);
}

TEST(Lossless, LosslessPacketOnALossyPgIsHandledAsLossy) {
  Config c = lossless_config(1000);
  c.ports[0].pgs[1].threshold = stat(2);
  Mmu mmu(c);
  EXPECT_TRUE(mmu.admit(op(0, 1, 1, 0, 2, true)).admitted());
  const AdmitResult a = mmu.admit(op(0, 1, 1, 0, 1, true));
  EXPECT_FALSE(a.lossless);
  EXPECT_EQ(a.verdict, Verdict::drop_ingress_limit);
  // And a lossy packet on the lossless PG is dropped at the PG limit.
  for (int i = 0; i < 14; ++i) ASSERT_TRUE(mmu.admit(op(0, 3, 1, 0, 1, false)).admitted());
  EXPECT_EQ(mmu.admit(op(0, 3, 1, 0, 1, false)).verdict, Verdict::drop_ingress_limit);
}

TEST(Lossless, SharedHeadroomPoolLimitsByPgAndByPool) {
  Config c = base_config(2, 10000, 1000, 5000);
  c.shared_headroom_cells = 25;
  for (uint8_t g : {3, 4}) {
    PgProfile& p = c.ports[0].pgs[g];
    p.lossless = true;
    p.threshold = stat(0);  // straight to headroom
    p.headroom_cells = 20;  // the PG's limit inside the shared pool
  }
  Mmu mmu(c);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(mmu.admit(op(0, 3, 1, 3, 1, true)).in_headroom) << i;
  EXPECT_EQ(mmu.admit(op(0, 3, 1, 3, 1, true)).verdict, Verdict::drop_headroom_overflow) << "PG limit";
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(mmu.admit(op(0, 4, 1, 4, 1, true)).in_headroom) << i;
  EXPECT_EQ(mmu.admit(op(0, 4, 1, 4, 1, true)).verdict, Verdict::drop_headroom_overflow) << "pool limit";
  EXPECT_EQ(mmu.headroom_pool_used(), 25u);
  mmu.release(ReleaseOp{0, 3, 1, 3, 3});
  EXPECT_EQ(mmu.headroom_pool_used(), 22u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(mmu.admit(op(0, 4, 1, 4, 1, true)).admitted()) << i;
  EXPECT_FALSE(mmu.admit(op(0, 4, 1, 4, 1, true)).admitted());
  EXPECT_EQ(mmu.headroom_pool_peak(), 25u);
  EXPECT_EQ(mmu.pg_state(0, 4).headroom, 8u);
}

// A dynamic PG threshold moves when other PGs of the pool change: the PFC
// generator reads it with pg_state() at any time.
TEST(PfcState, DynamicPgThresholdFollowsThePool) {
  Config c = base_config(2, 10000, 100, 5000);
  c.ports[0].pgs[3].threshold = dyn(0);
  c.ports[0].pgs[3].lossless = true;
  c.ports[0].pgs[3].headroom_cells = 10;
  Mmu mmu(c);
  EXPECT_EQ(mmu.pg_state(0, 3).threshold, 100u);
  ASSERT_TRUE(mmu.admit(op(1, 0, 1, 0, 30)).admitted());  // another PG in the pool
  EXPECT_EQ(mmu.pg_state(0, 3).threshold, 70u);
  // PG 3 grows while shared < 70 - shared: up to 35 with 1-cell packets.
  AdmitResult a;
  int n = 0;
  while (!(a = mmu.admit(op(0, 3, 1, 3, 1, true))).in_headroom) ++n;
  EXPECT_EQ(n, 35);
  EXPECT_EQ(a.pg.shared, 35u);
  EXPECT_EQ(a.pg.threshold, 35u);
  EXPECT_EQ(a.pg.headroom, 1u);
  const ReleaseResult r = mmu.release(ReleaseOp{1, 0, 1, 0, 30});
  EXPECT_EQ(r.pg.shared, 0u) << "result is about the released packet's PG";
  EXPECT_EQ(mmu.pg_state(0, 3).threshold, 65u);
}

TEST(Operations, MalformedOperationsThrow) {
  Mmu mmu(base_config(2, 1000, 100, 100));
  EXPECT_THROW(mmu.admit(op(2, 0, 1, 0, 1)), std::invalid_argument);
  EXPECT_THROW(mmu.admit(op(0, 8, 1, 0, 1)), std::invalid_argument);
  EXPECT_THROW(mmu.admit(op(0, 0, 1, 8, 1)), std::invalid_argument);
  EXPECT_THROW(mmu.admit(op(0, 0, 1, 0, 0)), std::invalid_argument);
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 3)).admitted());
  EXPECT_THROW(mmu.release(ReleaseOp{0, 0, 1, 0, 4}), std::invalid_argument);
  EXPECT_THROW(mmu.release(ReleaseOp{0, 1, 1, 0, 1}), std::invalid_argument) << "PG 1 holds nothing";
  EXPECT_EQ(mmu.total_used(), 3u) << "a rejected release changes nothing";
}

TEST(Counters, ResetPeaksStartsANewInterval) {
  Mmu mmu(base_config(2, 1000, 500, 500));
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 40)).admitted());
  ASSERT_TRUE(mmu.admit(op(0, 0, 1, 0, 10)).admitted());
  mmu.release(ReleaseOp{0, 0, 1, 0, 40});
  EXPECT_EQ(mmu.total_peak(), 50u);
  EXPECT_EQ(mmu.pg_counters(0, 0).peak_cells, 50u);
  EXPECT_EQ(mmu.queue_counters(1, 0).peak_cells, 50u);
  EXPECT_EQ(mmu.pool(kEgressPool).peak, 50u);
  mmu.reset_peaks();
  EXPECT_EQ(mmu.total_peak(), 10u);
  EXPECT_EQ(mmu.pg_counters(0, 0).peak_cells, 10u);
  EXPECT_EQ(mmu.queue_counters(1, 0).peak_cells, 10u);
  EXPECT_EQ(mmu.pool(kIngressPool).peak, 10u);
}

// Invariants that hold after every operation.
void check_invariants(const Mmu& mmu, const Config& c) {
  uint64_t pg_sum = 0, q_sum = 0, hdrm_sum = 0;
  std::vector<uint64_t> pool_sum(c.pools.size(), 0);
  for (uint16_t p = 0; p < c.ports.size(); ++p) {
    for (uint8_t g = 0; g < kPgsPerPort; ++g) {
      const PgState s = mmu.pg_state(p, g);
      const PgProfile& prof = c.ports[p].pgs[g];
      ASSERT_EQ(s.reserved, std::min(s.total(), prof.reserved_cells)) << "port " << p << " PG " << int(g);
      ASSERT_LE(s.headroom, prof.headroom_cells);
      if (prof.threshold.mode == ThresholdMode::static_th) {
        ASSERT_LE(s.shared, prof.threshold.static_cells);
      }
      pg_sum += s.total();
      hdrm_sum += s.headroom;
      pool_sum[prof.pool] += s.shared;
    }
    for (uint8_t q = 0; q < kQueuesPerPort; ++q) {
      const QueueState s = mmu.queue_state(p, q);
      ASSERT_EQ(s.reserved, std::min(s.total(), c.ports[p].queues[q].reserved_cells));
      q_sum += s.total();
      pool_sum[c.ports[p].queues[q].pool] += s.shared;
    }
  }
  ASSERT_EQ(pg_sum, mmu.total_used());
  ASSERT_EQ(q_sum, mmu.total_used());
  ASSERT_LE(mmu.total_used(), c.total_cells);
  ASSERT_EQ(c.shared_headroom_cells > 0 ? hdrm_sum : 0, mmu.headroom_pool_used());
  ASSERT_LE(mmu.headroom_pool_used(), c.shared_headroom_cells);
  for (size_t i = 0; i < c.pools.size(); ++i) {
    ASSERT_EQ(pool_sum[i], mmu.pool(i).used) << "pool " << i;
    if (c.pools[i].type == PoolType::ingress) {
      ASSERT_LE(mmu.pool(i).used, c.pools[i].size_cells);
    }
  }
}

Config random_config(bool shared_headroom) {
  Config c = base_config(4, 4000, 1200, 900);
  c.pools.push_back(PoolConfig{"egress_lossless_pool", PoolType::egress, 600, ThresholdMode::static_th});
  c.pools.push_back(PoolConfig{"ingress_lossy_pool", PoolType::ingress, 500, ThresholdMode::dynamic_th});
  if (shared_headroom) c.shared_headroom_cells = 90;
  for (PortConfig& p : c.ports) {
    for (uint8_t g = 0; g < kPgsPerPort; ++g) {
      PgProfile& pg = p.pgs[g];
      pg.pool = 3;  // lossy ingress pool, dynamic
      pg.reserved_cells = 4;
      pg.threshold = dyn(int(g % 3) - 1);
    }
    for (uint8_t g : {3, 4}) {
      PgProfile& pg = p.pgs[g];
      pg.pool = 0;
      pg.lossless = true;
      pg.reserved_cells = 8;
      pg.threshold = g == 3 ? dyn(-1) : stat(60);
      pg.headroom_cells = 30;
    }
    for (uint8_t q = 0; q < kQueuesPerPort; ++q) {
      QueueProfile& qp = p.queues[q];
      qp.reserved_cells = q % 2 ? 3 : 0;
      qp.threshold = q == 5 ? stat(40) : dyn(int(q % 4) - 2);
    }
    p.queues[3].pool = p.queues[4].pool = 2;  // lossless queues, accounting only
  }
  return c;
}

class RandomStream : public ::testing::TestWithParam<bool> {};

TEST_P(RandomStream, ReleaseUndoesAdmitAndEveryCounterReturnsToZero) {
  const Config c = random_config(GetParam());
  ASSERT_TRUE(validate(c).empty());
  Mmu mmu(c);
  TestRng rng(0x5eed0001);
  std::vector<ReleaseOp> held;
  uint64_t in_headroom = 0;
  for (int step = 0; step < 200000; ++step) {
    // Admit more often than release while the buffer is light, so it fills
    // and every limit is exercised; releases pick a random held packet.
    const bool do_admit = held.empty() || rng.below(100) < (held.size() < 300 ? 70u : 45u);
    if (do_admit) {
      const uint8_t pg = uint8_t(rng.below(8));
      const bool lossless = (pg == 3 || pg == 4) ? rng.below(10) != 0 : rng.below(10) == 0;
      const uint8_t q = (pg == 3 || pg == 4) ? pg : uint8_t(rng.below(8));
      const AdmitOp o = op(uint16_t(rng.below(4)), pg, uint16_t(rng.below(4)), q, 1 + rng.below(9), lossless);
      const AdmitResult a = mmu.admit(o);
      if (a.admitted()) {
        ASSERT_EQ(a.charge.cells(), o.cells);
        ASSERT_EQ(a.charge.eg_reserved + a.charge.eg_shared, o.cells);
        in_headroom += a.in_headroom;
        held.push_back(ReleaseOp::of(a.charge));
      } else {
        ASSERT_EQ(a.charge.cells(), 0u);
        if (a.lossless) {
          ASSERT_EQ(a.verdict, Verdict::drop_headroom_overflow);
        } else {
          ASSERT_NE(a.verdict, Verdict::drop_headroom_overflow);
        }
      }
    } else {
      const size_t i = rng.below(uint32_t(held.size()));
      const ReleaseResult r = mmu.release(held[i]);
      ASSERT_EQ(r.returned.cells(), held[i].cells);
      held[i] = held.back();
      held.pop_back();
    }
    if (step % 7 == 0) check_invariants(mmu, c);
    ASSERT_EQ(mmu.admitted_packets() - mmu.released_packets(), held.size());
  }
  EXPECT_GT(in_headroom, 100u) << "the stream reaches headroom";
  EXPECT_GT(mmu.drops().packets[vi(Verdict::drop_headroom_overflow)], 0u);
  EXPECT_GT(mmu.drops().packets[vi(Verdict::drop_ingress_limit)], 0u);
  EXPECT_GT(mmu.drops().packets[vi(Verdict::drop_egress_limit)], 0u);
  EXPECT_GT(mmu.drops().packets[vi(Verdict::drop_pool_full)], 0u);

  while (!held.empty()) {
    mmu.release(held.back());
    held.pop_back();
  }
  check_invariants(mmu, c);
  EXPECT_EQ(mmu.total_used(), 0u);
  EXPECT_EQ(mmu.headroom_pool_used(), 0u);
  for (size_t i = 0; i < mmu.pools(); ++i) EXPECT_EQ(mmu.pool(i).used, 0u) << i;
  for (uint16_t p = 0; p < 4; ++p) {
    for (uint8_t g = 0; g < 8; ++g) {
      const PgState s = mmu.pg_state(p, g);
      EXPECT_EQ(s.reserved + s.shared + s.headroom, 0u);
      const PgCounters& k = mmu.pg_counters(p, g);
      EXPECT_EQ(k.admitted_cells, k.released_cells);
      EXPECT_EQ(k.admitted_packets, k.released_packets);
      const QueueState qs = mmu.queue_state(p, g);
      EXPECT_EQ(qs.reserved + qs.shared, 0u);
      const QueueCounters& qk = mmu.queue_counters(p, g);
      EXPECT_EQ(qk.admitted_cells, qk.released_cells);
    }
  }
  EXPECT_GT(mmu.total_peak(), 500u);
  EXPECT_EQ(mmu.admitted_packets(), mmu.released_packets());
}

bool same_counts(const DropCounters& a, const DropCounters& b) { return a.packets == b.packets && a.cells == b.cells; }

// book(): the decisions of one MMU booked into another (what rtl mode does
// with the RTL's results, tlm/qm/counting.h) leave the second with the same
// state and every counter the same as the first, after every operation of a
// random stream that reaches every verdict; a charge that does not hold the
// packet's cells is refused.
TEST_P(RandomStream, BookingTheDecisionsOfAnotherMmuGivesTheSameCounters) {
  const Config c = random_config(GetParam());
  Mmu decide(c), book(c);
  TestRng rng(0x5eed0002);
  std::vector<ReleaseOp> held;
  std::array<uint64_t, kVerdicts> seen{};
  for (int step = 0; step < 50000; ++step) {
    if (held.empty() || rng.below(100) < (held.size() < 300 ? 70u : 45u)) {
      const uint8_t pg = uint8_t(rng.below(8));
      const bool lossless = (pg == 3 || pg == 4) ? rng.below(10) != 0 : rng.below(10) == 0;
      const AdmitOp o = op(uint16_t(rng.below(4)), pg, uint16_t(rng.below(4)), (pg == 3 || pg == 4) ? pg : uint8_t(rng.below(8)),
                           1 + rng.below(9), lossless);
      const AdmitResult a = decide.admit(o);
      const AdmitResult b = book.book(o, a.verdict, a.charge);
      ++seen[vi(a.verdict)];
      ASSERT_EQ(b.verdict, a.verdict);
      ASSERT_EQ(b.lossless, a.lossless);
      ASSERT_EQ(b.in_headroom, a.in_headroom);
      ASSERT_EQ(b.charge.cells(), a.charge.cells());
      ASSERT_EQ(b.pg.total(), a.pg.total());
      ASSERT_EQ(b.pg.threshold, a.pg.threshold);
      if (a.admitted()) held.push_back(ReleaseOp::of(a.charge));
    } else {
      const size_t i = rng.below(uint32_t(held.size()));
      decide.release(held[i]);
      book.release(held[i]);
      held[i] = held.back();
      held.pop_back();
    }
    if (step % 97 == 0 || step == 49999) {
      ASSERT_EQ(book.total_used(), decide.total_used());
      ASSERT_EQ(book.total_peak(), decide.total_peak());
      ASSERT_EQ(book.headroom_pool_peak(), decide.headroom_pool_peak());
      ASSERT_TRUE(same_counts(book.drops(), decide.drops()));
      for (size_t i = 0; i < c.pools.size(); ++i) {
        ASSERT_EQ(book.pool(i).used, decide.pool(i).used);
        ASSERT_EQ(book.pool(i).peak, decide.pool(i).peak);
      }
      for (uint16_t p = 0; p < c.ports.size(); ++p)
        for (uint8_t k = 0; k < 8; ++k) {
          const PgCounters &x = book.pg_counters(p, k), &y = decide.pg_counters(p, k);
          ASSERT_TRUE(x.admitted_cells == y.admitted_cells && x.released_cells == y.released_cells &&
                      x.headroom_cells == y.headroom_cells && x.peak_cells == y.peak_cells &&
                      x.peak_shared == y.peak_shared && x.peak_headroom == y.peak_headroom &&
                      same_counts(x.dropped, y.dropped))
              << "PG " << p << "/" << int(k) << " at step " << step;
          const QueueCounters &u = book.queue_counters(p, k), &v = decide.queue_counters(p, k);
          ASSERT_TRUE(u.admitted_cells == v.admitted_cells && u.released_cells == v.released_cells &&
                      u.peak_cells == v.peak_cells && u.peak_shared == v.peak_shared && same_counts(u.dropped, v.dropped))
              << "queue " << p << "/" << int(k) << " at step " << step;
        }
    }
  }
  for (size_t v = 0; v < kVerdicts; ++v) EXPECT_GT(seen[v], 0u) << verdict_name(Verdict(v));
  Charge bad;
  bad.in_shared = 2;
  bad.eg_shared = 3;
  EXPECT_THROW(book.book(op(0, 0, 1, 0, 3), Verdict::admit, bad), std::invalid_argument);  // ingress 2 != 3
  bad.in_shared = 3;
  bad.eg_shared = 2;
  EXPECT_THROW(book.book(op(0, 0, 1, 0, 3), Verdict::admit, bad), std::invalid_argument);  // egress 2 != 3
}

INSTANTIATE_TEST_SUITE_P(PerPgAndSharedHeadroom, RandomStream, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "shared_headroom_pool" : "per_pg_headroom");

                         });

// A reference MMU written here from the rules in mmu.h (not from mmu.cpp):
// reserve first, then shared if the check passes (pool room before the
// threshold; dynamic T = alpha * (size - used) saturating at 0, compared with
// the shared use before the packet; static: shared + part <= S), else lossy
// drop or lossless headroom (all of the part, the PG's limit and, with a
// shared headroom pool, the pool's room); lossless egress is accounting
// only; release returns PG headroom, shared, reserve and queue shared,
// reserve, in that order. The real MMU must agree with it on every verdict,
// every charged and returned bucket and every reported threshold.
class RefMmu {
 public:
  explicit RefMmu(const Config& c)
      : m_c(c), m_pg(c.ports.size() * kPgsPerPort), m_q(c.ports.size() * kQueuesPerPort), m_used(c.pools.size(), 0) {}

  struct Result {
    Verdict verdict = Verdict::admit;
    uint32_t in_res = 0, in_sh = 0, hdrm = 0, eg_res = 0, eg_sh = 0;
    bool in_headroom = false;
  };

  Result admit(const AdmitOp& o) {
    const PgProfile& gp = m_c.ports[o.in_port].pgs[o.pg];
    const QueueProfile& qp = m_c.ports[o.out_port].queues[o.queue];
    Acct& g = m_pg[o.in_port * kPgsPerPort + o.pg];
    Acct& q = m_q[o.out_port * kQueuesPerPort + o.queue];
    Result r;
    r.in_res = std::min(o.cells, gp.reserved_cells - g.res);
    const uint32_t in_part = o.cells - r.in_res;
    r.eg_res = std::min(o.cells, qp.reserved_cells - q.res);
    const uint32_t eg_part = o.cells - r.eg_res;
    const Verdict in_v = in_part ? check(gp.threshold, gp.pool, g.sh, in_part, Verdict::drop_ingress_limit)
                                 : Verdict::admit;
    const Verdict eg_v = eg_part ? check(qp.threshold, qp.pool, q.sh, eg_part, Verdict::drop_egress_limit)
                                 : Verdict::admit;
    if (o.lossless && gp.lossless) {
      if (in_v == Verdict::admit) {
        r.in_sh = in_part;
      } else {
        const bool pg_room = g.hdrm + in_part <= gp.headroom_cells;
        const bool pool_room = m_c.shared_headroom_cells == 0 || m_hdrm + in_part <= m_c.shared_headroom_cells;
        if (!pg_room || !pool_room) return drop(Verdict::drop_headroom_overflow);
        r.hdrm = in_part;
        r.in_headroom = true;
      }
      r.eg_sh = eg_part;  // never dropped at egress
    } else {
      if (in_v != Verdict::admit) return drop(in_v);
      if (eg_v != Verdict::admit) return drop(eg_v);
      r.in_sh = in_part;
      r.eg_sh = eg_part;
    }
    g.res += r.in_res;
    g.sh += r.in_sh;
    g.hdrm += r.hdrm;
    q.res += r.eg_res;
    q.sh += r.eg_sh;
    m_used[gp.pool] += r.in_sh;
    m_used[qp.pool] += r.eg_sh;
    if (m_c.shared_headroom_cells) m_hdrm += r.hdrm;
    return r;
  }

  Result release(const ReleaseOp& o) {
    const PgProfile& gp = m_c.ports[o.in_port].pgs[o.pg];
    const QueueProfile& qp = m_c.ports[o.out_port].queues[o.queue];
    Acct& g = m_pg[o.in_port * kPgsPerPort + o.pg];
    Acct& q = m_q[o.out_port * kQueuesPerPort + o.queue];
    Result r;
    uint32_t left = o.cells;
    r.hdrm = std::min(left, g.hdrm);
    left -= r.hdrm;
    r.in_sh = std::min(left, g.sh);
    left -= r.in_sh;
    r.in_res = left;
    r.eg_sh = std::min(o.cells, q.sh);
    r.eg_res = o.cells - r.eg_sh;
    g.hdrm -= r.hdrm;
    g.sh -= r.in_sh;
    g.res -= r.in_res;
    q.sh -= r.eg_sh;
    q.res -= r.eg_res;
    m_used[gp.pool] -= r.in_sh;
    m_used[qp.pool] -= r.eg_sh;
    if (m_c.shared_headroom_cells) m_hdrm -= r.hdrm;
    return r;
  }

  uint64_t threshold(const Threshold& t, uint32_t pool) const {
    const PoolConfig& pc = m_c.pools[pool];
    const ThresholdMode mode = t.mode == ThresholdMode::from_pool ? pc.mode : t.mode;
    if (mode == ThresholdMode::static_th) return t.static_cells;
    const uint64_t free = pc.size_cells > m_used[pool] ? pc.size_cells - m_used[pool] : 0;
    return t.dynamic_th >= 0 ? free << t.dynamic_th : free >> -t.dynamic_th;
  }
  uint64_t pg_threshold(uint16_t port, uint8_t pg) const {
    const PgProfile& gp = m_c.ports[port].pgs[pg];
    return threshold(gp.threshold, gp.pool);
  }
  uint64_t q_threshold(uint16_t port, uint8_t q) const {
    const QueueProfile& qp = m_c.ports[port].queues[q];
    return threshold(qp.threshold, qp.pool);
  }

 private:
  struct Acct {
    uint32_t res = 0, sh = 0, hdrm = 0;
  };
  Verdict check(const Threshold& t, uint32_t pool, uint32_t shared, uint32_t part, Verdict limit) const {
    if (m_used[pool] + uint64_t(part) > m_c.pools[pool].size_cells) return Verdict::drop_pool_full;
    const ThresholdMode mode = t.mode == ThresholdMode::from_pool ? m_c.pools[pool].mode : t.mode;
    if (mode == ThresholdMode::static_th) return shared + uint64_t(part) <= t.static_cells ? Verdict::admit : limit;
    return shared < threshold(t, pool) ? Verdict::admit : limit;
  }
  static Result drop(Verdict v) {
    Result r;
    r.verdict = v;
    return r;
  }

  Config m_c;
  std::vector<Acct> m_pg, m_q;
  std::vector<uint64_t> m_used;
  uint64_t m_hdrm = 0;
};

class AgainstReference : public ::testing::TestWithParam<bool> {};

TEST_P(AgainstReference, EveryDecisionBucketAndThresholdOfARandomStream) {
  const Config c = random_config(GetParam());
  Mmu mmu(c);
  RefMmu ref(c);
  TestRng rng(42);
  std::vector<ReleaseOp> held;
  std::array<uint64_t, kVerdicts> seen{};
  for (int i = 0; i < 200000; ++i) {
    // The mix of RandomStream: fills the buffer and reaches every limit.
    if (held.empty() || rng.below(100) < (held.size() < 300 ? 70u : 45u)) {
      const uint8_t pg = uint8_t(rng.below(8));
      const bool lossless = (pg == 3 || pg == 4) ? rng.below(10) != 0 : rng.below(10) == 0;
      const uint8_t q = (pg == 3 || pg == 4) ? pg : uint8_t(rng.below(8));
      const AdmitOp o = op(uint16_t(rng.below(4)), pg, uint16_t(rng.below(4)), q, 1 + rng.below(9), lossless);
      const AdmitResult x = mmu.admit(o);
      const RefMmu::Result y = ref.admit(o);
      ++seen[vi(y.verdict)];
      ASSERT_EQ(x.verdict, y.verdict) << "op " << i;
      ASSERT_EQ(x.in_headroom, y.in_headroom) << "op " << i;
      ASSERT_EQ(x.charge.in_reserved, y.in_res) << "op " << i;
      ASSERT_EQ(x.charge.in_shared, y.in_sh) << "op " << i;
      ASSERT_EQ(x.charge.headroom, y.hdrm) << "op " << i;
      ASSERT_EQ(x.charge.eg_reserved, y.eg_res) << "op " << i;
      ASSERT_EQ(x.charge.eg_shared, y.eg_sh) << "op " << i;
      ASSERT_EQ(x.pg.threshold, ref.pg_threshold(o.in_port, o.pg)) << "op " << i;
      ASSERT_EQ(x.queue.threshold, ref.q_threshold(o.out_port, o.queue)) << "op " << i;
      if (x.admitted()) held.push_back(ReleaseOp::of(x.charge));
    } else {
      const size_t k = rng.below(uint32_t(held.size()));
      const ReleaseResult x = mmu.release(held[k]);
      const RefMmu::Result y = ref.release(held[k]);
      ASSERT_EQ(x.returned.headroom, y.hdrm) << "op " << i;
      ASSERT_EQ(x.returned.in_shared, y.in_sh) << "op " << i;
      ASSERT_EQ(x.returned.in_reserved, y.in_res) << "op " << i;
      ASSERT_EQ(x.returned.eg_shared, y.eg_sh) << "op " << i;
      ASSERT_EQ(x.returned.eg_reserved, y.eg_res) << "op " << i;
      ASSERT_EQ(x.pg.threshold, ref.pg_threshold(held[k].in_port, held[k].pg)) << "op " << i;
      held[k] = held.back();
      held.pop_back();
    }
  }
  // The stream reaches every verdict, so each rule was compared.
  for (size_t v = 0; v < kVerdicts; ++v) EXPECT_GT(seen[v], 50u) << verdict_name(Verdict(v));
}

INSTANTIATE_TEST_SUITE_P(PerPgAndSharedHeadroom, AgainstReference, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "shared_headroom_pool" : "per_pg_headroom");
                         });

}  // namespace
}  // namespace rocesim::mmu::test

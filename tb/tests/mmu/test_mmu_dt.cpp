// Dynamic thresholds reach the Choudhury-Hahne steady state (IEEE/ACM ToN
// 1998): with one egress pool of B cells, alpha = 2^n and N overloaded
// queues, each queue settles at alpha*B/(1+N*alpha) and B/(1+N*alpha) stays
// free. Discrete check of issue 3's "Done when": every queue stays within one
// cell (the threshold's floor) plus one packet of the target, for n in
// {-2, 0, 2}, N in {1, 2, 4}, with 1-cell and 4-cell (MTU-sized) packets.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <tuple>
#include <vector>

#include "mmu_test_util.h"

namespace rocesim::mmu::test {
namespace {

constexpr uint32_t kB = 12000;  // egress pool, cells

class DynamicThreshold : public ::testing::TestWithParam<std::tuple<int, unsigned, uint32_t>> {};

// Each round: two senders per queue (ports 2i and 2i+1, as two line-rate
// hosts) each offer one packet, round-robin over the N queues (sender 0 to
// queues 0..N-1, then sender 1 to queues 0..N-1); then every queue drains
// one packet. Offered 2:1 over the drain, so every queue is overloaded.
//
// What is observed once settled:
//  - level: each queue's length after the round's arrivals, i.e. the level
//    DT admission holds it at (the drain then takes one packet off it);
//  - mean: each queue's length averaged over every operation;
//  - lo/hi: extremes over every operation (the drain dips a queue one packet
//    below its level).
struct Observed {
  std::vector<uint32_t> level_lo, level_hi, lo, hi;
  std::vector<double> mean;
  uint32_t free_lo = UINT32_MAX, free_hi = 0;
};

Observed drive(Mmu& mmu, uint32_t pool, unsigned nq, uint32_t cells, uint32_t settle_rounds,
               uint32_t observe_rounds) {
  const uint16_t out = 8;
  std::vector<std::deque<uint16_t>> fifo(nq);  // ingress port of each queued packet
  Observed o;
  o.level_lo.assign(nq, UINT32_MAX);
  o.level_hi.assign(nq, 0);
  o.lo.assign(nq, UINT32_MAX);
  o.hi.assign(nq, 0);
  std::vector<uint64_t> sum(nq, 0);
  uint64_t samples = 0;
  auto observe = [&](bool on) {
    if (!on) return;
    ++samples;
    for (unsigned i = 0; i < nq; ++i) {
      const uint32_t q = mmu.queue_state(out, uint8_t(i)).total();
      o.lo[i] = std::min(o.lo[i], q);
      o.hi[i] = std::max(o.hi[i], q);
      sum[i] += q;
    }
  };
  for (uint32_t r = 0; r < settle_rounds + observe_rounds; ++r) {
    const bool on = r >= settle_rounds;
    for (uint16_t s = 0; s < 2; ++s) {
      for (unsigned i = 0; i < nq; ++i) {
        const uint16_t in = uint16_t(2 * i + s);
        const AdmitResult a = mmu.admit(op(in, 0, out, uint8_t(i), cells));
        if (a.admitted()) {
          fifo[i].push_back(in);
        } else {
          EXPECT_EQ(a.verdict, Verdict::drop_egress_limit) << "the queue threshold binds, not the pool";
        }
        observe(on);
      }
    }
    if (on) {
      uint32_t total = 0;
      for (unsigned i = 0; i < nq; ++i) {
        const uint32_t q = mmu.queue_state(out, uint8_t(i)).total();
        o.level_lo[i] = std::min(o.level_lo[i], q);
        o.level_hi[i] = std::max(o.level_hi[i], q);
        total += q;
      }
      o.free_lo = std::min(o.free_lo, pool - total);
      o.free_hi = std::max(o.free_hi, pool - total);
    }
    for (unsigned i = 0; i < nq; ++i) {
      if (fifo[i].empty()) continue;
      mmu.release(ReleaseOp{fifo[i].front(), 0, out, uint8_t(i), cells});
      fifo[i].pop_front();
      observe(on);
    }
  }
  o.mean.resize(nq);
  for (unsigned i = 0; i < nq; ++i) o.mean[i] = double(sum[i]) / double(samples);
  return o;
}

Config dt_config(int n, uint32_t pool = kB) {
  // Ingress never binds: a large ingress pool with a static limit at its size.
  Config c = base_config(9, 200000, 150000, pool);
  for (QueueProfile& q : c.ports[8].queues) q.threshold = dyn(n);
  return c;
}

TEST_P(DynamicThreshold, SettlesAtAlphaBOverOnePlusNAlpha) {
  const auto [n, nq, cells] = GetParam();
  // 12000 divides evenly for some (alpha, N); 9973 (prime) for none.
  for (const uint32_t B : {kB, 9973u}) {
    SCOPED_TRACE("B = " + std::to_string(B));
    Mmu mmu(dt_config(n, B));
    const double alpha = std::ldexp(1.0, n);
    const double target = alpha * B / (1.0 + nq * alpha);
    const double tol = 1.0 + cells;  // one cell (the threshold's floor) plus one packet
    // Filling takes at most about B / cells rounds (net growth of one packet
    // per round per queue); settle for twice that, then watch as long again.
    const uint32_t rounds = 2 * B / cells + 100;
    const Observed o = drive(mmu, B, nq, cells, rounds, rounds);
    for (unsigned i = 0; i < nq; ++i) {
      SCOPED_TRACE("queue " + std::to_string(i) + ", target " + std::to_string(target));
      EXPECT_GE(double(o.level_lo[i]), target - tol);
      EXPECT_LE(double(o.level_hi[i]), target + tol);
      EXPECT_NEAR(o.mean[i], target, tol);
      // Between arrivals the drain takes one more packet off the level.
      EXPECT_GE(double(o.lo[i]), target - tol - cells);
      EXPECT_LE(double(o.hi[i]), target + tol);
    }
    // The pool keeps B/(1+N*alpha) free, within N*(1 cell + 1 packet).
    const double free_target = B / (1.0 + nq * alpha);
    EXPECT_GE(double(o.free_lo), free_target - nq * tol);
    EXPECT_LE(double(o.free_hi), free_target + nq * tol);
    // Nothing is lost from the books.
    uint64_t held = 0;
    for (unsigned i = 0; i < nq; ++i) held += mmu.queue_state(8, uint8_t(i)).total();
    EXPECT_EQ(mmu.total_used(), held);
    EXPECT_EQ(mmu.pool(kEgressPool).used, held) << "no queue reserve: everything is shared";
    EXPECT_LE(mmu.pool(kEgressPool).peak, B);
  }
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, DynamicThreshold,
                         ::testing::Combine(::testing::Values(-2, 0, 2), ::testing::Values(1u, 2u, 4u),
                                            ::testing::Values(1u, 4u)),
                         [](const ::testing::TestParamInfo<DynamicThreshold::ParamType>& info) {
                           const int n = std::get<0>(info.param);
                           return std::string("n") + (n < 0 ? "m" : "") + std::to_string(std::abs(n)) + "_N" +
                                  std::to_string(std::get<1>(info.param)) + "_cells" +
                                  std::to_string(std::get<2>(info.param));
                         });

// The paper's two worked values, exactly: alpha = 1, N = 1 -> B/2; N = 2 -> B/3.
TEST(DynamicThresholdExact, AlphaOneGivesHalfAndThird) {
  for (unsigned nq : {1u, 2u}) {
    Mmu mmu(dt_config(0));
    const Observed o = drive(mmu, kB, nq, 1, 3 * kB, 1000);
    const uint32_t target = kB / (1 + nq);  // 6000 or 4000
    for (unsigned i = 0; i < nq; ++i) {
      EXPECT_GE(o.level_lo[i] + 1, target) << "N=" << nq;
      EXPECT_LE(o.level_hi[i], target + 1) << "N=" << nq;
    }
  }
}

// DT compares the *shared* use: a queue with a reserve R holds R more than
// its unreserved peers, which still settle at the same shared value.
TEST(DynamicThresholdExact, ReserveIsNotPartOfTheContest) {
  const uint32_t R = 500;
  Config c = dt_config(0);
  c.ports[8].queues[0].reserved_cells = R;
  Mmu mmu(c);
  const Observed o = drive(mmu, kB, 2, 1, 3 * kB, 1000);
  const double target = kB / 3.0;
  EXPECT_NEAR(o.level_lo[0], target + R, 2.0) << "queue 0: reserve + share";
  EXPECT_NEAR(o.level_hi[0], target + R, 2.0);
  EXPECT_NEAR(o.level_lo[1], target, 2.0);
  EXPECT_NEAR(o.level_hi[1], target, 2.0);
  const QueueState q0 = mmu.queue_state(8, 0);
  EXPECT_EQ(q0.reserved, R) << "reserve stays full while the queue holds shared cells";
}

// The threshold is alpha * free computed with shifts, floor for alpha < 1.
TEST(DynamicThresholdExact, ThresholdIsShiftOfFreeCells) {
  Config c = base_config(2, 20000, 10000, 1001);
  c.ports[1].queues[0].threshold = dyn(-2);
  c.ports[1].queues[1].threshold = dyn(2);
  c.ports[1].queues[2].threshold = dyn(-7);
  c.ports[1].queues[3].threshold = dyn(7);
  c.ports[1].queues[4].threshold = stat(77);
  Mmu mmu(c);
  EXPECT_EQ(mmu.queue_state(1, 0).threshold, 1001u / 4);  // 250, floor
  EXPECT_EQ(mmu.queue_state(1, 1).threshold, 4004u);
  EXPECT_EQ(mmu.queue_state(1, 2).threshold, 1001u >> 7);  // 7
  EXPECT_EQ(mmu.queue_state(1, 3).threshold, 1001u << 7);
  EXPECT_EQ(mmu.queue_state(1, 4).threshold, 77u);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(mmu.admit(op(0, 0, 1, 5, 1)).admitted());
  EXPECT_EQ(mmu.queue_state(1, 0).threshold, 991u / 4) << "free cells fell to 991";
  EXPECT_EQ(mmu.queue_state(1, 1).threshold, 3964u);
  // Before-enqueue rule (Choudhury-Hahne): the queue is compared with T at
  // arrival, and a packet may carry it past T.
  Config d = base_config(2, 20000, 10000, 100);
  d.ports[1].queues[0].threshold = dyn(0);
  Mmu m2(d);
  // 1-cell packets: admitted while Q < 100 - Q, i.e. up to Q = 50.
  int n = 0;
  while (m2.admit(op(0, 0, 1, 0, 1)).admitted()) ++n;
  EXPECT_EQ(n, 50);
  m2.release(ReleaseOp{0, 0, 1, 0, 3});  // Q = 47, T = 53
  EXPECT_EQ(m2.queue_state(1, 0).threshold, 53u);
  const AdmitResult big = m2.admit(op(0, 0, 1, 0, 10));
  EXPECT_TRUE(big.admitted()) << "47 < 53 at arrival, though 57 > 53 after";
  EXPECT_EQ(big.queue.total(), 57u);
  EXPECT_EQ(big.queue.threshold, 43u);
  EXPECT_EQ(m2.admit(op(0, 0, 1, 0, 1)).verdict, Verdict::drop_egress_limit);
}

}  // namespace
}  // namespace rocesim::mmu::test

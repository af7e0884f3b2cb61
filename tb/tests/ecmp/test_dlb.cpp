// The dynamic load-balancing decision block (ecmp/dlb.h): the DRE's
// utilization against the EWMA it defines, the flowlet gap, the rule that a
// flow never moves while it has packets queued on its member (checked as
// in-order delivery over FIFO members under random service), avoid_hot, and
// members going down.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "ecmp/dlb.h"

using namespace rocesim::ecmp;

namespace {

constexpr uint64_t kUs = 1000000;  // ps
constexpr uint64_t k100G = 100000000000ull;

DlbConfig flowlet_cfg() {
  DlbConfig c;
  c.mode = DlbMode::flowlet;
  c.gap_ps = 100 * kUs;
  c.metric = LoadMetric::queue_bytes;
  c.table_bits = 8;
  return c;
}

}  // namespace

TEST(Dre, SteadyUtilizationWithinAlphaOfTheSentFraction) {
  // 1000 B frames at half of 100 Gbps: one every 160 ns (80 ns of wire time).
  // tau = 64 us, alpha = 1/16: in steady state X lies between r tau (1 -
  // alpha) / 8 and r tau / 8 (dlb.h), so u in [0.5 (1 - alpha), 0.5], give or
  // take one frame's share of the window: f = 8 x 1000 B / (100 Gbps x 64 us).
  Dre d(k100G, 64 * kUs, 4);
  const double f = 8.0 * 1000 / (1e11 * 64e-6);
  uint64_t t = 0;
  for (; t < 20 * 64 * kUs; t += 160000) d.add(t, 1000);
  double lo = 1, hi = 0;
  for (uint64_t end = t + 64 * kUs; t < end; t += 160000) {
    d.add(t, 1000);
    const double u = d.utilization(t + 80000);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_GE(lo, 0.5 * (1 - 1.0 / 16) - f);
  EXPECT_LE(hi, 0.5 + f);
}

TEST(Dre, IdleDecaysByOneMinusAlphaPerPeriod) {
  // After n idle periods X = X0 (1 - alpha)^n (up to the integer shift's
  // rounding, under 2^shift bytes per step): one tau = 16 periods.
  Dre d(k100G, 64 * kUs, 4);
  for (uint64_t t = 0; t < 10 * 64 * kUs; t += 80000) d.add(t, 1000);  // line rate
  const uint64_t t0 = 10 * 64 * kUs;                                     // a period boundary
  const double x0 = static_cast<double>(d.bytes(t0));
  for (int n : {1, 4, 16, 64}) {
    const double want = x0 * std::pow(15.0 / 16, n);
    EXPECT_NEAR(static_cast<double>(d.bytes(t0 + n * 4 * kUs)), want, 16.0 * n) << n << " periods";
  }
  EXPECT_NEAR(d.utilization(t0 + 1000 * 64 * kUs), 0.0, 1e-3);
}

TEST(Flowlet, StaysWithinTheGapAndMovesToTheLeastLoadedAfterIt) {
  FlowletGroup g(flowlet_cfg(), {k100G, k100G, k100G});
  g.set_queue_bytes(0, 100000);
  g.set_queue_bytes(1, 0);
  g.set_queue_bytes(2, 50000);
  // A new flowlet: the least loaded (1), although the hash says 0.
  FlowletGroup::Decision d = g.choose(7, 0, 0);
  EXPECT_EQ(d.member, 1u);
  EXPECT_FALSE(d.moved);
  g.dequeued(d.entry);
  // Load moves away from 1; packets 10 us apart (inside the 100 us gap) stay.
  g.set_queue_bytes(1, 500000);
  g.set_queue_bytes(0, 0);
  for (uint64_t t = 10 * kUs; t <= 200 * kUs; t += 10 * kUs) {
    d = g.choose(7, 0, t);
    EXPECT_EQ(d.member, 1u) << t;
    g.dequeued(d.entry);
  }
  EXPECT_EQ(g.stats().moves, 0u);
  // A gap of exactly the timeout starts a new flowlet: it moves to 0.
  d = g.choose(7, 0, 300 * kUs);
  EXPECT_EQ(d.member, 0u);
  EXPECT_TRUE(d.moved);
  EXPECT_EQ(g.stats().moves, 1u);
  EXPECT_EQ(g.stats().new_flowlets, 2u);
}

TEST(Flowlet, NeverMovesWhilePacketsAreQueuedOnItsMember) {
  FlowletGroup g(flowlet_cfg(), {k100G, k100G});
  g.set_queue_bytes(1, 1000);
  const FlowletGroup::Decision a = g.choose(3, 0, 0);
  ASSERT_EQ(a.member, 0u);
  // Its member is paused: the packet stays queued for 1 ms, ten gaps; member
  // 1 becomes the lighter one. The flow's next packets stay on 0.
  g.set_queue_bytes(0, 900000);
  g.set_queue_bytes(1, 0);
  const FlowletGroup::Decision b = g.choose(3, 1, 1000 * kUs);
  EXPECT_EQ(b.member, 0u);
  EXPECT_EQ(g.stats().held_queued, 1u);
  EXPECT_EQ(g.entry_queued(a.entry), 2u);
  g.dequeued(a.entry);
  g.dequeued(b.entry);
  EXPECT_EQ(g.entry_queued(a.entry), 0u);
  // Drained, and a gap since its last packet: now it may move.
  const FlowletGroup::Decision c = g.choose(3, 1, 1000 * kUs + 100 * kUs);
  EXPECT_EQ(c.member, 1u);
  EXPECT_TRUE(c.moved);
}

TEST(Flowlet, FifoMembersDeliverEveryFlowInOrderUnderRandomService) {
  // 4 members, each a FIFO served at random times (some long stalls, as
  // under PFC); 64 flows over 16 table entries (collisions share entries);
  // loads change at random, gap 0 (every packet may start a flowlet), so
  // only the queued rule keeps order. Whatever leaves a member's FIFO must
  // be each flow's next sequence number.
  DlbConfig c = flowlet_cfg();
  c.gap_ps = 0;
  c.table_bits = 4;
  FlowletGroup g(c, {k100G, k100G, k100G, k100G});
  struct Pkt {
    uint32_t flow, seq, entry;
  };
  std::vector<std::deque<Pkt>> fifo(4);
  std::vector<uint32_t> next_seq(64, 0), next_rx(64, 0);
  std::mt19937 rng(31);
  uint64_t t = 0;
  for (int step = 0; step < 200000; ++step) {
    t += 1 + rng() % 2000000;
    if (rng() % 3 == 0) {
      for (uint32_t m = 0; m < 4; ++m) g.set_queue_bytes(m, rng() % 100000 + 1000 * fifo[m].size());
    }
    if (rng() % 2 == 0) {
      const uint32_t f = rng() % 64;
      const FlowletGroup::Decision d = g.choose(f * 2654435761u >> 8, f % 4, t);
      ASSERT_NE(d.member, FlowletGroup::kNone);
      fifo[d.member].push_back({f, next_seq[f]++, d.entry});
    } else {
      const uint32_t m = rng() % 4;
      if (m == 3 && rng() % 8 != 0) continue;  // member 3 mostly stalled
      if (fifo[m].empty()) continue;
      const Pkt p = fifo[m].front();
      fifo[m].pop_front();
      ASSERT_EQ(p.seq, next_rx[p.flow]) << "flow " << p.flow << " reordered";
      ++next_rx[p.flow];
      g.dequeued(p.entry);
    }
  }
  // Not vacuous: flows did move between members.
  EXPECT_GT(g.stats().moves, 1000u);
  EXPECT_GT(g.stats().held_queued, 0u);
}

TEST(Flowlet, AvoidHotSteersNewFlowsOffMembersAboveTheThreshold) {
  DlbConfig c = flowlet_cfg();
  c.mode = DlbMode::avoid_hot;
  c.threshold = 0.8;
  FlowletGroup g(c, {k100G, k100G, k100G, k100G});
  // 1000 B frames for 10 tau: member 2 at line rate (one per 80 ns: u in
  // [15/16, 1]), 3 at 90 % (one per 88.889 ns: u in [0.84, 0.9]), both hot.
  const uint64_t until = 640 * kUs;
  for (uint64_t t = 0; t < until; t += 80000) g.sent(2, t, 1000);
  for (uint64_t t = 0; t < until; t += 88889) g.sent(3, t, 1000);
  ASSERT_GT(g.utilization(2, until), 0.8);
  ASSERT_GT(g.utilization(3, until), 0.8);
  ASSERT_LT(g.utilization(0, until), 0.8);
  // Hashed to a cool member: kept. Hashed to 2: the next cool one in group
  // order after it is 0 (3 is hot too).
  EXPECT_EQ(g.choose(1, 1, until).member, 1u);
  EXPECT_EQ(g.choose(2, 2, until).member, 0u);
  EXPECT_EQ(g.stats().avoided_hot, 1u);
  // All hot (0 and 1 at line rate as 2): the least utilized, 3.
  for (uint64_t t = 0; t < until; t += 80000) g.sent(0, t, 1000), g.sent(1, t, 1000);
  EXPECT_EQ(g.choose(5, 2, until).member, 3u);
}

TEST(Flowlet, AMemberGoingDownIsLeftAtOnce) {
  FlowletGroup g(flowlet_cfg(), {k100G, k100G, k100G});
  const FlowletGroup::Decision a = g.choose(9, 1, 0);
  ASSERT_EQ(a.member, 1u);
  g.set_up(1, false);
  // Inside the gap and with a packet queued, yet its member is down.
  const FlowletGroup::Decision b = g.choose(9, 1, 1 * kUs);
  EXPECT_NE(b.member, 1u);
  EXPECT_NE(b.member, FlowletGroup::kNone);
  EXPECT_TRUE(b.moved);
  g.set_up(0, false);
  g.set_up(2, false);
  EXPECT_EQ(g.choose(9, 1, 2 * kUs).member, FlowletGroup::kNone);
}

TEST(Flowlet, OffIsTheStaticHash) {
  DlbConfig c;
  FlowletGroup g(c, {k100G, k100G});
  g.set_queue_bytes(0, 1 << 20);
  const FlowletGroup::Decision d = g.choose(4, 0, 0);
  EXPECT_EQ(d.member, 0u);
  EXPECT_EQ(d.entry, FlowletGroup::kNone);
  EXPECT_EQ(g.stats().new_flowlets, 0u);
}

TEST(Flowlet, ValidateRefusesBadConfigs) {
  DlbConfig c;
  EXPECT_TRUE(c.validate().empty());
  c.shift = 0;
  EXPECT_EQ(c.validate().size(), 1u);
  c = DlbConfig{};
  c.window_ps = 8;  // < 2^4 ps
  EXPECT_EQ(c.validate().size(), 1u);
  c = DlbConfig{};
  c.threshold = 1.5;
  EXPECT_EQ(c.validate().size(), 1u);
  c = DlbConfig{};
  c.table_bits = 21;
  EXPECT_EQ(c.validate().size(), 1u);
}

// Spraying (dlb.h): round robin visits the members up in turn, skipping one
// that is down; random picks each member up with probability 1/up, which a
// count over 40 000 packets must show within 5 binomial standard deviations
// (sd = sqrt(n p (1 - p))), never a member down, the same stream for the
// same seed and another for another seed. Neither keeps a flowlet entry.
TEST(Spray, RoundRobinTakesTheMembersUpInTurnAndRandomIsUniformOverThem) {
  DlbConfig rr;
  rr.mode = DlbMode::spray_round_robin;
  FlowletGroup g(rr, {k100G, k100G, k100G, k100G});
  std::vector<uint32_t> seen;
  for (int i = 0; i < 8; ++i) seen.push_back(g.choose(5, 2, 0).member);
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  g.set_up(2, false);
  seen.clear();
  for (int i = 0; i < 6; ++i) seen.push_back(g.choose(5, 2, 0).member);
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 3, 0, 1, 3}));
  EXPECT_EQ(g.choose(5, 2, 0).entry, FlowletGroup::kNone);

  DlbConfig rnd;
  rnd.mode = DlbMode::spray_random;
  FlowletGroup a(rnd, {k100G, k100G, k100G, k100G}, 11), b(rnd, {k100G, k100G, k100G, k100G}, 11),
      c(rnd, {k100G, k100G, k100G, k100G}, 12);
  a.set_up(1, false), b.set_up(1, false), c.set_up(1, false);
  constexpr int kN = 40000;
  std::map<uint32_t, int> count;
  int same_b = 0, same_c = 0;
  for (int i = 0; i < kN; ++i) {
    const uint32_t m = a.choose(7, 0, 0).member;  // the hash and hashed member play no part
    ++count[m];
    same_b += b.choose(9, 3, 0).member == m;
    same_c += c.choose(7, 0, 0).member == m;
  }
  EXPECT_EQ(count.count(1), 0u) << "a member down is never chosen";
  const double p = 1.0 / 3, sd = std::sqrt(kN * p * (1 - p));
  for (uint32_t m : {0u, 2u, 3u}) EXPECT_NEAR(count[m], kN * p, 5 * sd) << "member " << m;
  EXPECT_EQ(same_b, kN) << "same seed, same stream";
  EXPECT_LT(same_c, kN * p + 5 * sd) << "another seed: agreement at chance (1/3)";
  a.set_up(0, false), a.set_up(2, false), a.set_up(3, false);
  EXPECT_EQ(a.choose(7, 0, 0).member, FlowletGroup::kNone);
}

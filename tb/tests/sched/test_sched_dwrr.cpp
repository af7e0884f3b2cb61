// DWRR and strict priority: exact DRR traces, byte shares 1:2:5, strict
// preemption at frame boundaries, paused queues (no burst after resume).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sched_test_util.h"

namespace rocesim::sched::test {
namespace {

// --- Exact DRR behaviour on hand-computed traces ---------------------------

TEST(Dwrr, ExactTraceWithExactFitAndCarriedDeficit) {
  // Quanta 1000 (q0) and 2000 (q1), max frame 1000. q0 sends 500-B frames,
  // q1 900-B frames. By hand (Shreedhar & Varghese):
  //   q0 turn: D=1000 -> 500 (500) -> 500 == D, sent (0) -> 500 > 0: ends, D 0
  //   q1 turn: D=2000 -> 900 (1100) -> 900 (200) -> ends, D 200
  //   q0 turn: D=1000 -> 500, 500 -> D 0
  //   q1 turn: D=2200 -> 900 (1300), 900 (400) -> ends, D 400
  //   q1 next: D=2400 -> 900 x2 (600) ... and so on.
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1000;
  p.queues[0] = {Mode::dwrr, 1000, {}};
  p.queues[1] = {Mode::dwrr, 2000, {}};
  Port port(p);
  port.src[0] = Source::fixed(500);
  port.src[1] = Source::fixed(900);
  const std::vector<int> want = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  const std::vector<uint64_t> d_after = {500, 0, 1100, 200, 500, 0, 1300, 400, 500, 0, 1500, 600, 500, 0, 1700, 800};
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(port.step(), want[i]) << "frame " << i;
    EXPECT_EQ(port.s.deficit(want[i]), d_after[i]) << "frame " << i;
  }
  // q1 at 800 + 2000 = 2800 now sends three 900-B frames in its turn.
  EXPECT_EQ(port.step(), 0);
  EXPECT_EQ(port.step(), 0);
  EXPECT_EQ(port.step(), 1);
  EXPECT_EQ(port.step(), 1);
  EXPECT_EQ(port.step(), 1);
  EXPECT_EQ(port.s.deficit(1), 100u);
  EXPECT_EQ(port.s.counters(1).turns, 5u);
  EXPECT_EQ(port.s.counters(0).turns, 5u);
}

TEST(Dwrr, HeadAboveDeficitEndsTurnAndKeepsDeficit) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1500;
  p.queues[2] = {Mode::dwrr, 1500, {}};
  p.queues[5] = {Mode::dwrr, 1500, {}};
  Scheduler s(p);
  Heads h{};
  h[2] = 1000;
  h[5] = 1500;
  ASSERT_EQ(s.pick(h, 0, 0), 2);  // joins in index order: 2 first
  s.sent(2, 1000, 0);
  EXPECT_EQ(s.deficit(2), 500u);
  h[2] = 501;  // one byte too many
  ASSERT_EQ(s.pick(h, 0, 0), 5);
  EXPECT_EQ(s.deficit(2), 500u) << "kept when the turn ends";
  s.sent(5, 1500, 0);
  ASSERT_EQ(s.pick(h, 0, 0), 2);
  EXPECT_EQ(s.deficit(2), 2000u);
}

TEST(Dwrr, EmptiedQueueLosesDeficitAndRejoinsAtTail) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1000;
  for (int q : {0, 1, 2}) p.queues[q] = {Mode::dwrr, 3000, {}};
  Scheduler s(p);
  Heads h{100, 100, 100, 0, 0, 0, 0, 0};
  ASSERT_EQ(s.pick(h, 0, 0), 0);
  s.sent(0, 100, 0);
  EXPECT_EQ(s.deficit(0), 2900u);
  h[0] = 0;  // q0 empties in its turn
  ASSERT_EQ(s.pick(h, 0, 0), 1);
  EXPECT_EQ(s.deficit(0), 0u) << "an empty queue banks no credit";
  s.sent(1, 100, 0);
  h[0] = 100;  // back: joins behind q2
  DwrrList l = s.dwrr_list();
  ASSERT_EQ(l.size, 2);  // q1 (in its turn), q2
  EXPECT_EQ(s.pick(h, 0, 0), 1) << "q1's turn continues";
  l = s.dwrr_list();
  ASSERT_EQ(l.size, 3);
  EXPECT_EQ(l.order[0], 1);
  EXPECT_EQ(l.order[1], 2);
  EXPECT_EQ(l.order[2], 0);
  EXPECT_TRUE(l.turn_open);
}

TEST(Dwrr, ZeroHeadIsNeverPickedAndNothingGivesMinusOne) {
  Scheduler s(dwrr_125(0, 1, 2));
  Heads h{};
  EXPECT_EQ(s.pick(h, 0, 0), -1);
  EXPECT_EQ(s.next_eligible_ps(h, 0, 0), kNever);
  h[3] = 100;  // strict queue 3
  EXPECT_EQ(s.pick(h, 0xff, 0), -1) << "everything paused";
  EXPECT_EQ(s.next_eligible_ps(h, 0xff, 0), kNever);
  EXPECT_EQ(s.port_counters().idle_picks, 2u);
  // Random heads and pause masks: the pick has a head and is not paused, and
  // returns -1 only when no such queue exists (no shapers here).
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    for (size_t q = 0; q < kQueues; ++q) h[q] = rng.next() % 3 == 0 ? 0 : rng.uniform(64, 4096);
    const uint8_t paused = static_cast<uint8_t>(rng.next() & rng.next());
    const int c = s.pick(h, paused, uint64_t(i));
    bool any = false;
    for (size_t q = 0; q < kQueues; ++q) any |= h[q] != 0 && !((paused >> q) & 1);
    if (!any) {
      ASSERT_EQ(c, -1) << i;
      continue;
    }
    ASSERT_GE(c, 0) << i;
    ASSERT_NE(h[c], 0u) << i;
    ASSERT_EQ((paused >> c) & 1, 0) << i;
    s.sent(c, h[c], uint64_t(i));
  }
}

// --- Shares ------------------------------------------------------------------

TEST(DwrrShares, Weights125MixedFrames64To4096) {
  Port port(dwrr_125());
  for (int q : {0, 1, 2}) port.src[q] = Source::uniform(64, 4096);
  port.run(100000);
  expect_shares(port.bytes, kShares125);
  // Throughput on the 100 Gbps port: 12.5, 25, 62.5 Gbps within 2 %.
  const double secs = double(port.now) * 1e-12;
  for (int q : {0, 1, 2})
    EXPECT_NEAR(double(port.bytes[q]) * 8 / secs, 100e9 * kShares125[q], 0.02 * 100e9 * kShares125[q]) << q;
}

TEST(DwrrShares, Weights125OnOtherQueuesWithSmallBaseQuantum) {
  // Base 1500 with 1500-B max frames (the 1500/3000/7500 example), queues 7, 3, 4.
  Port port(dwrr_125(7, 3, 4, 1500), k100G, 99);
  for (int q : {7, 3, 4}) port.src[q] = Source::uniform(64, 1500);
  port.run(100000);
  std::array<double, kQueues> want{};
  want[7] = 1.0 / 8;
  want[3] = 2.0 / 8;
  want[4] = 5.0 / 8;
  expect_shares(port.bytes, want);
  EXPECT_EQ(port.s.config().queues[4].quantum_bytes, 7500u);
}

TEST(DwrrShares, Weights125FixedFrameSizesPerQueue) {
  // Each queue its own frame size; every assignment of {64, 1500, 4096}
  // (the small-frame queue sends ~64x more frames than the large-frame one).
  std::array<uint32_t, 3> sizes{64, 1500, 4096};
  std::sort(sizes.begin(), sizes.end());
  do {
    Port port(dwrr_125());
    for (int q : {0, 1, 2}) port.src[q] = Source::fixed(sizes[q]);
    port.run(100000);
    SCOPED_TRACE(testing::Message() << "sizes " << sizes[0] << "," << sizes[1] << "," << sizes[2]);
    expect_shares(port.bytes, kShares125);
  } while (std::next_permutation(sizes.begin(), sizes.end()));
}

// --- Strict priority ---------------------------------------------------------

TEST(Strict, HigherStrictQueueAlwaysWins) {
  Scheduler s(PortConfig::strict_priority());
  Rng rng(3);
  for (int i = 0; i < 10000; ++i) {
    Heads h{};
    for (size_t q = 0; q < kQueues; ++q)
      if (rng.next() & 1) h[q] = rng.uniform(64, 9216);
    int want = -1;
    for (int q = 7; q >= 0; --q)
      if (h[q] != 0) {
        want = q;
        break;
      }
    const int c = s.pick(h, 0, 0);
    ASSERT_EQ(c, want) << i;
    if (c >= 0) s.sent(c, h[c], 0);
  }
}

TEST(Strict, StrictBeatsDwrrWhicheverIndex) {
  // Strict queue 1 (low index) still beats DWRR queues 5..7.
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 4096;
  for (int q : {5, 6, 7}) p.queues[q] = {Mode::dwrr, 4096, {}};
  Scheduler s(p);
  Heads h{0, 64, 0, 0, 0, 100, 100, 100};
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(s.pick(h, 0, 0), 1);
    s.sent(1, 64, 0);
  }
  h[1] = 0;
  EXPECT_EQ(s.pick(h, 0, 0), 5);
}

TEST(Strict, PreemptsAtNextPickAndDwrrResumesWhereItStopped) {
  // Reference run: DWRR only. Then the same run with strict frames injected
  // at random frame boundaries: every pick with strict traffic returns the
  // strict queue, and the DWRR picks, taken alone, are the same sequence with
  // the same deficits (the round continues where it stopped).
  auto cfg = [] {
    PortConfig p = dwrr_125();
    p.queues[6] = {Mode::strict, 0, {}};
    return p;
  };
  Port ref(cfg(), k100G, 11);
  Port mix(cfg(), k100G, 11);  // same seed: DWRR frame sizes drawn in the same order
  for (int q : {0, 1, 2}) ref.src[q] = mix.src[q] = Source::uniform(64, 4096);
  std::vector<int> ref_seq;
  std::vector<uint64_t> ref_def;
  for (int i = 0; i < 20000; ++i) {
    const int c = ref.step();
    ref_seq.push_back(c);
    ref_def.push_back(ref.s.deficit(c));
  }
  Rng rng(5);
  size_t k = 0;
  uint64_t strict_frames = 0;
  while (k < ref_seq.size()) {
    if (rng.next() % 4 == 0) mix.q[6].push_back(rng.uniform(64, 4096));  // strict arrival
    const bool strict_waiting = !mix.q[6].empty();
    const int c = mix.step();
    if (strict_waiting) {
      ASSERT_EQ(c, 6) << "strict traffic must go at the next frame boundary";
      ++strict_frames;
      continue;
    }
    ASSERT_EQ(c, ref_seq[k]) << "DWRR pick " << k;
    ASSERT_EQ(mix.s.deficit(c), ref_def[k]) << "DWRR pick " << k;
    ++k;
  }
  EXPECT_GT(strict_frames, 4000u);
  std::array<uint64_t, kQueues> dwrr = mix.bytes;
  dwrr[6] = 0;
  expect_shares(dwrr, kShares125);
}

TEST(Strict, LongRunSharesWithIntermittentStrictBursts) {
  PortConfig p = dwrr_125();
  p.queues[7] = {Mode::strict, 0, {}};
  Port port(p, k100G, 21);
  for (int q : {0, 1, 2}) port.src[q] = Source::uniform(64, 4096);
  Rng rng(8);
  for (int i = 0; i < 100000; ++i) {
    if (rng.next() % 50 == 0)  // a burst of up to 20 strict frames
      for (uint32_t n = rng.uniform(1, 20); n > 0; --n) port.q[7].push_back(rng.uniform(64, 4096));
    port.step();
  }
  EXPECT_GT(port.frames[7], 10000u);
  std::array<uint64_t, kQueues> dwrr = port.bytes;
  dwrr[7] = 0;
  expect_shares(dwrr, kShares125);
}

TEST(Strict, PausedStrictQueueIsSkippedOthersProceed) {
  PortConfig p = dwrr_125();
  p.queues[7] = {Mode::strict, 0, {}};
  p.queues[6] = {Mode::strict, 0, {}};
  Port port(p);
  for (int q : {0, 1, 2, 6, 7}) port.src[q] = Source::fixed(1000);
  EXPECT_EQ(port.step(), 7);
  port.paused = 1u << 7;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(port.step(), 6) << "7 paused: the next strict queue";
  port.paused = (1u << 7) | (1u << 6);
  port.reset_tallies();
  port.run(8000);
  EXPECT_EQ(port.frames[7] + port.frames[6], 0u);
  expect_shares(port.bytes, kShares125);
  port.paused = 0;
  EXPECT_EQ(port.step(), 7) << "resumed strict queue goes at once";
}

// --- Pause (PFC) -------------------------------------------------------------

// Bytes sent by queue q in each maximal run of consecutive picks of q.
struct Runs {
  std::vector<uint64_t> bytes;
  int last = -1;
  void add(int c, uint32_t b, int q) {
    if (c == q) {
      if (last != q) bytes.push_back(0);
      bytes.back() += b;
    }
    last = c;
  }
};

TEST(Pause, NoBurstAfterResumeAndSharesRecover) {
  const int kQ = 1;  // weight 2, quantum 8192
  const uint64_t quantum = 8192;
  Port port(dwrr_125(), k100G, 31);
  for (int q : {0, 1, 2}) port.src[q] = Source::uniform(64, 4096);
  Rng rng(77);
  port.run(5000);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    // Pause q1 at a random point of its turns (after 0..3 of its frames).
    const uint32_t skip = rng.uniform(0, 3);
    for (uint32_t seen = 0, i = 0;; ++i) {
      ASSERT_LT(i, 1000u) << "queue " << kQ << " is not served";
      if (port.step() == kQ && seen++ >= skip) break;
    }
    port.paused = 1u << kQ;
    const uint64_t d_pause = port.s.deficit(kQ);
    const uint64_t turns = port.s.counters(kQ).turns;
    // Many rounds without it (~170 rounds of q0 + q2).
    for (int i = 0; i < 2000; ++i) ASSERT_NE(port.step(), kQ);
    EXPECT_EQ(port.s.counters(kQ).turns, turns) << "no turns while paused";
    EXPECT_EQ(port.s.deficit(kQ), d_pause) << "deficit kept, not grown";
    port.paused = 0;
    // Right after resume: its first run of consecutive frames is at most
    // deficit-at-pause + one quantum; later runs obey the DRR bound
    // (leftover < max frame, plus one quantum).
    Runs r;
    for (int i = 0; i < 400; ++i) {
      const size_t before = port.bytes[kQ];
      const int c = port.step();
      r.add(c, static_cast<uint32_t>(port.bytes[kQ] - before), kQ);
    }
    ASSERT_GE(r.bytes.size(), 3u) << "it is served again";
    EXPECT_LE(r.bytes[0], d_pause + quantum);
    for (size_t i = 1; i < r.bytes.size(); ++i) EXPECT_LE(r.bytes[i], 4095 + quantum) << "run " << i;
  }
  // Nothing paused: long-run shares as configured.
  port.reset_tallies();
  port.run(100000);
  expect_shares(port.bytes, kShares125);
}

TEST(Pause, PausedQueueLeavesListAndRejoinsAtTailWithItsDeficit) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1000;
  for (int q : {0, 1, 2}) p.queues[q] = {Mode::dwrr, 1000, {}};
  Scheduler s(p);
  Heads h{600, 600, 600, 0, 0, 0, 0, 0};
  ASSERT_EQ(s.pick(h, 0, 0), 0);  // q0's turn: D 1000
  s.sent(0, 600, 0);              // D 400
  // q0 paused mid-turn: it leaves the list keeping 400; q1's turn starts.
  ASSERT_EQ(s.pick(h, 1u << 0, 0), 1);
  EXPECT_EQ(s.deficit(0), 400u);
  DwrrList l = s.dwrr_list();
  ASSERT_EQ(l.size, 2);
  EXPECT_EQ(l.order[0], 1);
  EXPECT_EQ(l.order[1], 2);
  s.sent(1, 600, 0);
  // Many rounds of q1, q2 while q0 is paused.
  for (int i = 0; i < 100; ++i) {
    const int c = s.pick(h, 1u << 0, 0);
    ASSERT_NE(c, 0);
    s.sent(c, 600, 0);
  }
  EXPECT_EQ(s.deficit(0), 400u);
  EXPECT_EQ(s.counters(0).turns, 1u);
  // Resume: q0 rejoins at the tail and, at its turn, has 400 + 1000 = 1400:
  // two 600-B frames, not a burst for the 50 rounds it missed.
  int c = s.pick(h, 0, 0);
  EXPECT_NE(c, 0) << "it rejoins behind the others";
  for (int i = 0; c != 0; ++i) {
    ASSERT_LT(i, 10);
    s.sent(c, 600, 0);
    c = s.pick(h, 0, 0);
  }
  EXPECT_EQ(s.deficit(0), 1400u);
  int run = 0;
  while (c == 0 && run < 10) {
    s.sent(0, 600, 0);
    ++run;
    c = s.pick(h, 0, 0);
  }
  EXPECT_EQ(run, 2);
  EXPECT_EQ(s.deficit(0), 200u);
}

TEST(Pause, QueueThatEmptiesWhilePausedLosesItsDeficit) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1000;
  for (int q : {0, 1}) p.queues[q] = {Mode::dwrr, 1000, {}};
  Scheduler s(p);
  Heads h{300, 300, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(s.pick(h, 0, 0), 0);
  s.sent(0, 300, 0);
  ASSERT_EQ(s.pick(h, 1, 0), 1);
  EXPECT_EQ(s.deficit(0), 700u);
  s.sent(1, 300, 0);
  h[0] = 0;  // discarded while paused
  ASSERT_EQ(s.pick(h, 1, 0), 1);
  EXPECT_EQ(s.deficit(0), 0u);
}

}  // namespace
}  // namespace rocesim::sched::test

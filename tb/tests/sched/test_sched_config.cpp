// Scheduler configuration (validate(), weight helpers, defaults) and the
// caller contract (monotonic time, head sizes, sent() matching the pick).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "sched_test_util.h"

namespace rocesim::sched::test {
namespace {

bool has_msg(const std::vector<std::string>& v, const std::string& part) {
  for (const std::string& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

TEST(Config, WeightsToQuanta) {
  EXPECT_EQ(quantum_for_weight(1, 1500), 1500u);
  EXPECT_EQ(quantum_for_weight(2, 1500), 3000u);
  EXPECT_EQ(quantum_for_weight(5, 1500), 7500u);
  EXPECT_EQ(quantum_for_weight(0, 1500), 0u);
  EXPECT_EQ(quantum_for_weight(1u << 20, 1u << 20), UINT32_MAX) << "saturates";
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 1500;
  set_dwrr_weights(p, {1, 2, 5, 0, 0, 0, 0, 0}, 1500);
  EXPECT_EQ(p.queues[0].mode, Mode::dwrr);
  EXPECT_EQ(p.queues[0].quantum_bytes, 1500u);
  EXPECT_EQ(p.queues[1].quantum_bytes, 3000u);
  EXPECT_EQ(p.queues[2].quantum_bytes, 7500u);
  EXPECT_EQ(p.queues[3].mode, Mode::strict) << "weight 0 leaves the queue as it was";
  EXPECT_TRUE(validate(p).empty());
  EXPECT_STREQ(mode_name(Mode::strict), "strict");
  EXPECT_STREQ(mode_name(Mode::dwrr), "dwrr");
}

TEST(Config, Defaults) {
  const PortConfig sp = PortConfig::strict_priority();
  for (const QueueConfig& q : sp.queues) EXPECT_EQ(q.mode, Mode::strict);
  EXPECT_TRUE(validate(sp).empty());
  EXPECT_TRUE(validate(PortConfig{}).empty());
  const PortConfig rd = PortConfig::roce_default();
  EXPECT_TRUE(validate(rd).empty());
  for (unsigned q = 0; q < kQueues; ++q) EXPECT_EQ(rd.queues[q].mode, q >= 6 ? Mode::strict : Mode::dwrr) << q;
  EXPECT_EQ(rd.queues[3].quantum_bytes, rd.max_frame_bytes);
  // CNP on 6 beats RoCE data on 3.
  Scheduler s(rd);
  Heads h{};
  h[3] = 4096;
  h[6] = 64;
  EXPECT_EQ(s.pick(h, 0, 0), 6);
}

TEST(Config, ValidateReportsEachProblem) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = 4096;
  p.queues[1] = {Mode::dwrr, 4095, {}};
  p.queues[2] = {Mode::dwrr, 0, {}};
  p.queues[3].shaper = {0, 5000};                    // burst without rate
  p.queues[4].shaper = {kMaxRateBps + 1, 8192};      // rate too high
  p.queues[5].shaper = {1'000'000'000, 4000};        // burst below the largest frame
  p.queues[6].shaper = {1'000'000'000, kMaxBurstBytes + 1};
  p.queues[7].mode = static_cast<Mode>(9);
  p.shaper = {1'000'000'000, 100};
  const std::vector<std::string> e = validate(p);
  EXPECT_EQ(e.size(), 8u);
  EXPECT_TRUE(has_msg(e, "queue 1: DWRR quantum_bytes 4095 is below max_frame_bytes 4096"));
  EXPECT_TRUE(has_msg(e, "queue 2: DWRR quantum_bytes 0"));
  EXPECT_TRUE(has_msg(e, "queue 3: shaper burst_bytes 5000 without a rate"));
  EXPECT_TRUE(has_msg(e, "queue 4: shaper rate_bps"));
  EXPECT_TRUE(has_msg(e, "queue 5: shaper burst_bytes 4000 is below max_frame_bytes 4096"));
  EXPECT_TRUE(has_msg(e, "queue 6: shaper burst_bytes 1048577 exceeds"));
  EXPECT_TRUE(has_msg(e, "queue 7: unknown mode 9"));
  EXPECT_TRUE(has_msg(e, "port: shaper burst_bytes 100"));
  PortConfig z;
  z.max_frame_bytes = 0;
  EXPECT_TRUE(has_msg(validate(z), "max_frame_bytes must be > 0"));
  try {
    Scheduler s(p);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("queue 5: shaper burst_bytes 4000"), std::string::npos);
  }
}

// Every queue's head is checked against max_frame_bytes, and every non-empty
// head counts as backlogged: with one head at queue q, strict priority picks
// q at any size up to the limit and throws above it, including sizes with
// the top bit set (an unsigned compare).
TEST(Contract, EveryQueuesHeadIsCheckedAndSeen) {
  PortConfig p = PortConfig::strict_priority();
  const uint32_t max = p.max_frame_bytes;
  uint64_t t = 0;
  for (int q = 0; q < 8; ++q) {
    for (uint32_t bytes : {1u, max - 1, max}) {
      Scheduler s(p);
      Heads h{};
      h[q] = bytes;
      EXPECT_EQ(s.pick(h, 0, t), q) << "queue " << q << " head " << bytes;
    }
    for (uint32_t bytes : {max + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu}) {
      Scheduler s(p);
      Heads h{};
      h[q] = bytes;
      EXPECT_THROW(s.pick(h, 0, t), std::invalid_argument) << "queue " << q << " head " << bytes;
      // Another queue's head at the limit does not hide it.
      h[(q + 3) % 8] = max;
      EXPECT_THROW(s.pick(h, 0, t), std::invalid_argument) << "queue " << q << " head " << bytes;
    }
    // Two backlogged queues: strict priority takes the higher one.
    Scheduler s(p);
    Heads h{};
    h[q] = 100;
    h[(q + 5) % 8] = 200;
    EXPECT_EQ(s.pick(h, 0, t), std::max(q, (q + 5) % 8));
    // Paused, the other one.
    EXPECT_EQ(s.pick(h, static_cast<uint8_t>(1u << std::max(q, (q + 5) % 8)), t), std::min(q, (q + 5) % 8));
    t += 10;
  }
}

TEST(Contract, CallerMistakesThrow) {
  PortConfig p = dwrr_125();
  Scheduler s(p);
  Heads h{1000, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_THROW(s.sent(0, 1000, 0), std::invalid_argument) << "no pick";
  ASSERT_EQ(s.pick(h, 0, 100), 0);
  EXPECT_THROW(s.sent(1, 1000, 100), std::invalid_argument) << "not the picked queue";
  EXPECT_THROW(s.sent(0, 999, 100), std::invalid_argument) << "not the picked frame";
  EXPECT_THROW(s.sent(0, 1000, 99), std::invalid_argument) << "time backwards";
  EXPECT_THROW(s.sent(8, 1000, 100), std::invalid_argument);
  EXPECT_THROW(s.deficit(-1), std::invalid_argument);
  s.sent(0, 1000, 100);
  EXPECT_THROW(s.sent(0, 1000, 100), std::invalid_argument) << "sent twice";
  EXPECT_THROW(s.pick(h, 0, 99), std::invalid_argument);
  EXPECT_THROW(s.next_eligible_ps(h, 0, 99), std::invalid_argument);
  h[0] = 4097;
  EXPECT_THROW(s.pick(h, 0, 100), std::invalid_argument) << "head above max_frame_bytes";
  // Counters.
  EXPECT_EQ(s.counters(0).picks, 1u);
  EXPECT_EQ(s.counters(0).frames, 1u);
  EXPECT_EQ(s.counters(0).bytes, 1000u);
  EXPECT_EQ(s.counters(0).turns, 1u);
  EXPECT_EQ(s.port_counters().frames, 1u);
  EXPECT_EQ(s.port_counters().bytes, 1000u);
}

TEST(Contract, RepeatedPickWithoutSentIsIdempotent) {
  Scheduler s(dwrr_125());
  Heads h{1000, 2000, 3000, 0, 0, 0, 0, 0};
  const int c = s.pick(h, 0, 0);
  const uint64_t d = s.deficit(c);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.pick(h, 0, 0), c);
  EXPECT_EQ(s.deficit(c), d) << "no quantum added twice";
  EXPECT_EQ(s.counters(c).turns, 1u);
  EXPECT_EQ(s.counters(c).picks, 6u);
}

}  // namespace
}  // namespace rocesim::sched::test

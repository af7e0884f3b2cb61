// Test harness for the egress scheduler: a port whose queues hold frame
// sizes, saturated sources that keep every fed queue non-empty, and time
// driven as the frames are serialized on the link. When nothing may go, the
// port sleeps until next_eligible_ps() and checks that the pick then succeeds
// (the caller never polls).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>

#include "sched/config.h"
#include "sched/scheduler.h"

namespace rocesim::sched::test {

// splitmix64 (our own, fixed seed): deterministic across platforms, unlike
// std::uniform_int_distribution.
class Rng {
 public:
  explicit Rng(uint64_t seed) : m_s(seed) {}
  uint64_t next() {
    uint64_t z = (m_s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (the modulo bias is < 2^-50 here).
  uint32_t uniform(uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(next() % (uint64_t(hi) - lo + 1)); }

 private:
  uint64_t m_s;
};

struct Source {
  enum class Kind { none, fixed, uniform } kind = Kind::none;
  uint32_t lo = 0, hi = 0;
  static Source fixed(uint32_t b) { return {Kind::fixed, b, b}; }
  static Source uniform(uint32_t lo, uint32_t hi) { return {Kind::uniform, lo, hi}; }
};

inline constexpr uint64_t k100G = 100'000'000'000ull;

class Port {
 public:
  explicit Port(const PortConfig& c, uint64_t link_bps = k100G, uint64_t seed = 1)
      : s(c), link_bps(link_bps), rng(seed) {}

  Scheduler s;
  std::array<std::deque<uint32_t>, kQueues> q;  // frame sizes, front = head
  std::array<Source, kQueues> src{};            // saturated sources
  uint64_t link_bps;
  uint64_t now = 0;
  uint8_t paused = 0;
  Rng rng;
  std::array<uint64_t, kQueues> bytes{}, frames{};
  uint64_t wakes = 0;  // sleeps until next_eligible_ps

  Heads heads() const {
    Heads h{};
    for (size_t i = 0; i < kQueues; ++i) h[i] = q[i].empty() ? 0 : q[i].front();
    return h;
  }
  uint64_t tx_ps(uint32_t b) const { return (uint64_t(b) * 8'000'000'000'000ull + link_bps - 1) / link_bps; }

  // One frame boundary: send one frame (sleeping first if a shaper holds
  // everything back) and return its queue, or -1 if nothing can ever go.
  int step() {
    refill();
    Heads h = heads();
    int c = s.pick(h, paused, now);
    if (c < 0) {
      const uint64_t t = s.next_eligible_ps(h, paused, now);
      if (t == kNever) return -1;
      EXPECT_GT(t, now) << "pick failed now, so the wake must be later";
      now = t;
      ++wakes;
      c = s.pick(h, paused, now);
      EXPECT_GE(c, 0) << "next_eligible_ps was not exact at " << now;
      if (c < 0) return -1;
    }
    const size_t qi = static_cast<size_t>(c);
    EXPECT_FALSE(q[qi].empty());
    EXPECT_EQ((paused >> qi) & 1, 0) << "paused queue " << c << " picked";
    const uint32_t b = q[qi].front();
    q[qi].pop_front();
    s.sent(c, b, now);
    now += tx_ps(b);
    bytes[qi] += b;
    ++frames[qi];
    return c;
  }

  void run(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i)
      if (step() < 0) return;
  }

  void reset_tallies() {
    bytes.fill(0);
    frames.fill(0);
  }
  uint64_t total_bytes() const {
    uint64_t t = 0;
    for (uint64_t b : bytes) t += b;
    return t;
  }

 private:
  void refill() {
    for (size_t i = 0; i < kQueues; ++i) {
      if (src[i].kind == Source::Kind::none || !q[i].empty()) continue;
      q[i].push_back(src[i].kind == Source::Kind::fixed ? src[i].lo : rng.uniform(src[i].lo, src[i].hi));
    }
  }
};

// Weights 1:2:5 on queues a, b, c with a base quantum of max_frame (4096).
inline PortConfig dwrr_125(uint8_t a = 0, uint8_t b = 1, uint8_t c = 2, uint32_t max_frame = 4096) {
  PortConfig p = PortConfig::strict_priority();
  p.max_frame_bytes = max_frame;
  std::array<uint32_t, kQueues> w{};
  w[a] = 1;
  w[b] = 2;
  w[c] = 5;
  set_dwrr_weights(p, w, max_frame);
  return p;
}

// Asserts each queue's byte share is within rel (relative) of its expected share.
inline void expect_shares(const std::array<uint64_t, kQueues>& bytes, const std::array<double, kQueues>& expected,
                          double rel = 0.02) {
  uint64_t total = 0;
  for (uint64_t b : bytes) total += b;
  ASSERT_GT(total, 0u);
  for (size_t i = 0; i < kQueues; ++i) {
    const double share = double(bytes[i]) / double(total);
    if (expected[i] == 0)
      EXPECT_EQ(bytes[i], 0u) << "queue " << i;
    else
      EXPECT_NEAR(share, expected[i], rel * expected[i]) << "queue " << i << " share " << share;
  }
}

inline constexpr std::array<double, kQueues> kShares125{1.0 / 8, 2.0 / 8, 5.0 / 8, 0, 0, 0, 0, 0};

}  // namespace rocesim::sched::test

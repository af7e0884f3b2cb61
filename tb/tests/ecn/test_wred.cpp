// WRED with the queue held at fixed depths: the measured mark fraction over
// many packets against Pmax*(q-Kmin)/(Kmax-Kmin) (RED, Floyd & Jacobson 1993;
// the DCQCN marking curve), within 3 standard errors; exactly 0 at or below
// Kmin and exactly 1 above Kmax.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/rng.h"
#include "ecn/marker.h"

namespace rocesim::ecn {
namespace {

constexpr int kPackets = 100000;

struct Case {
  const char* name;
  uint64_t kmin, kmax;
  double pmax;
  MarkerConfig::Unit unit;
  uint64_t depths[5];  // strictly between Kmin and Kmax
};

// Marks out of kPackets ECT(0) packets at depth q, on a fresh stream per depth.
uint64_t marks_at(const MarkerConfig& c, uint64_t q, uint64_t seed) {
  Marker m(c, core::Rng(seed, "leaf0.eth" + std::to_string(q) + ".q3"));
  uint64_t n = 0;
  for (int i = 0; i < kPackets; ++i) n += m.decide(q, codepoint::kEct0).mark;
  EXPECT_EQ(m.counters().marked, n);
  EXPECT_EQ(m.counters().seen, uint64_t(kPackets));
  return n;
}

class Wred : public ::testing::TestWithParam<Case> {};

TEST_P(Wred, MarkFractionFollowsTheRamp) {
  const Case& k = GetParam();
  MarkerConfig c;
  c.mode = MarkerConfig::Mode::wred;
  c.unit = k.unit;
  c.kmin = k.kmin;
  c.kmax = k.kmax;
  c.pmax = k.pmax;

  auto expect_fraction = [&](uint64_t q) {
    const double p = k.pmax * double(q - k.kmin) / double(k.kmax - k.kmin);
    const double got = double(marks_at(c, q, 2024)) / kPackets;
    const double se = std::sqrt(p * (1 - p) / kPackets);
    EXPECT_NEAR(got, p, 3 * se + 1e-12) << k.name << " q=" << q << " expected p=" << p;
    return got;
  };

  double prev = 0;
  for (uint64_t q : k.depths) {
    ASSERT_GT(q, k.kmin);
    ASSERT_LT(q, k.kmax);
    const double got = expect_fraction(q);
    EXPECT_GT(got, prev) << k.name << ": the fraction rises with depth";
    prev = got;
  }
  // At Kmax the probability is Pmax (exactly 1 when Pmax is 1).
  if (k.pmax == 1.0) EXPECT_EQ(marks_at(c, k.kmax, 7), uint64_t(kPackets)) << k.name;
  else expect_fraction(k.kmax);

  // At and below Kmin: exactly none; above Kmax: exactly all.
  EXPECT_EQ(marks_at(c, k.kmin, 1), 0u) << k.name;
  EXPECT_EQ(marks_at(c, k.kmin - 1, 1), 0u) << k.name;
  EXPECT_EQ(marks_at(c, 0, 1), 0u) << k.name;
  EXPECT_EQ(marks_at(c, k.kmax + 1, 1), uint64_t(kPackets)) << k.name;
  EXPECT_EQ(marks_at(c, 4 * k.kmax, 1), uint64_t(kPackets)) << k.name;
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Wred,
    ::testing::Values(
        // HPCC's per-25G setting (REFERENCE.md), bytes.
        Case{"hpcc", 100000, 400000, 0.2, MarkerConfig::Unit::bytes, {101000, 160000, 250000, 340000, 399999}},
        // Same ramp with Pmax 1: the fraction climbs to 1 at Kmax.
        Case{"pmax1", 100000, 400000, 1.0, MarkerConfig::Unit::bytes, {100300, 130000, 250000, 370000, 399000}},
        // DCQCN paper's Kmin/Kmax with Pmax 1 %, bytes.
        Case{"dcqcn", 5000, 200000, 0.01, MarkerConfig::Unit::bytes, {10000, 50000, 100000, 150000, 199999}},
        // In cells, a short ramp where each cell is a large step.
        Case{"cells", 10, 20, 0.5, MarkerConfig::Unit::cells, {11, 13, 15, 17, 19}}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace rocesim::ecn

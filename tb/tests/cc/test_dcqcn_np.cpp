// DcqcnNp: a burst of CE packets on one QP yields CNPs no closer than
// min_time_between_cnps, each sent by the first CE packet that is allowed.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nic/cc/dcqcn_config.h"
#include "nic/cc/dcqcn_np.h"

namespace cc = rocesim::cc;

namespace {

constexpr uint64_t kG = 1000000000ull;
constexpr uint64_t kNs = 1000;  // ps

// Feeds n CE packets `gap` apart starting at t0; returns the CNP times.
std::vector<uint64_t> burst(cc::DcqcnNp& np, uint64_t t0, uint64_t gap, int n) {
  std::vector<uint64_t> cnps;
  for (int k = 0; k < n; ++k) {
    const uint64_t t = t0 + uint64_t(k) * gap;
    if (np.on_ce_packet(t)) cnps.push_back(t);
  }
  return cnps;
}

// Checks the spacing rule on CNP times from a burst of CE packets `gap`
// apart starting at t0: the first CE packet triggers, consecutive CNPs are
// >= min apart, and each CNP is the first CE packet at or after the earliest
// allowed time (the CE packet before it was too early).
void check_spacing(const std::vector<uint64_t>& cnps, uint64_t t0, uint64_t gap, uint64_t min) {
  ASSERT_FALSE(cnps.empty());
  EXPECT_EQ(cnps[0], t0);
  for (size_t k = 1; k < cnps.size(); ++k) {
    const uint64_t allowed = cnps[k - 1] + min;
    EXPECT_GE(cnps[k] - cnps[k - 1], min) << k;
    EXPECT_GE(cnps[k], allowed) << k;
    EXPECT_LT(cnps[k] - gap, allowed) << "CNP " << k << " was not sent as soon as allowed";
  }
}

TEST(DcqcnNp, BurstNvidiaSpacing) {
  const cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  cc::DcqcnNp np(c);
  EXPECT_EQ(np.min_time_between_cnps_ps(), 4000 * kNs);
  const auto cnps = burst(np, 0, 100 * kNs, 10000);  // 0 .. 999.9 us
  check_spacing(cnps, 0, 100 * kNs, 4000 * kNs);
  // 4 us is a multiple of the 100 ns gap: CNPs at exactly 0, 4, 8, ... 996 us.
  ASSERT_EQ(cnps.size(), 250u);
  for (size_t k = 0; k < cnps.size(); ++k) EXPECT_EQ(cnps[k], k * 4000 * kNs);
  EXPECT_EQ(np.counters().ce_packets, 10000u);
  EXPECT_EQ(np.counters().cnps, 250u);
  EXPECT_EQ(np.counters().suppressed, 10000u - 250u);
  EXPECT_EQ(np.last_cnp_ps(), 996000 * kNs);
  EXPECT_EQ(np.next_allowed_ps(), 1000000 * kNs);
}

TEST(DcqcnNp, BurstPaperSpacing) {
  cc::DcqcnNp np(cc::DcqcnConfig::paper(40 * kG));
  const uint64_t t0 = 12345;  // arbitrary start, not on a grid
  const auto cnps = burst(np, t0, 100 * kNs, 10000);
  check_spacing(cnps, t0, 100 * kNs, 50000 * kNs);
  ASSERT_EQ(cnps.size(), 20u);
  for (size_t k = 0; k < cnps.size(); ++k) EXPECT_EQ(cnps[k], t0 + k * 50000 * kNs);
}

TEST(DcqcnNp, MinimumNotAMultipleOfThePacketGap) {
  // 4.05 us with CE packets every 100 ns: each CNP waits for the next packet
  // after the minimum, so the spacing is 4.1 us.
  cc::DcqcnNp np(4050 * kNs);
  const auto cnps = burst(np, 0, 100 * kNs, 10000);
  check_spacing(cnps, 0, 100 * kNs, 4050 * kNs);
  ASSERT_EQ(cnps.size(), 244u);  // 0, 4.1, ..., 243*4.1 = 996.3 us
  for (size_t k = 1; k < cnps.size(); ++k) EXPECT_EQ(cnps[k] - cnps[k - 1], 4100 * kNs);
}

TEST(DcqcnNp, ExactlyTheMinimumIsAllowed) {
  cc::DcqcnNp np(4000 * kNs);
  EXPECT_TRUE(np.on_ce_packet(1000));
  EXPECT_FALSE(np.on_ce_packet(1000 + 4000 * kNs - 1));
  EXPECT_TRUE(np.on_ce_packet(1000 + 4000 * kNs));
  EXPECT_FALSE(np.on_ce_packet(1000 + 4000 * kNs));  // same instant again
}

TEST(DcqcnNp, FirstCeAlwaysTriggersAndZeroMinimumTriggersEvery) {
  cc::DcqcnNp np(0);
  for (uint64_t t = 0; t < 100; ++t) EXPECT_TRUE(np.on_ce_packet(t * 7));
  EXPECT_EQ(np.counters().cnps, 100u);
  EXPECT_EQ(np.counters().suppressed, 0u);

  cc::DcqcnNp late(50000 * kNs);
  EXPECT_EQ(late.last_cnp_ps(), cc::DcqcnNp::kNever);
  EXPECT_EQ(late.next_allowed_ps(), 0u);
  EXPECT_TRUE(late.on_ce_packet(987654321));  // the first CE of the QP, whenever it comes
}

TEST(DcqcnNp, QpsAreIndependentAndResetForgets) {
  cc::DcqcnNp a(4000 * kNs), b(4000 * kNs);
  EXPECT_TRUE(a.on_ce_packet(0));
  EXPECT_TRUE(b.on_ce_packet(100 * kNs));  // a's CNP does not suppress b
  EXPECT_FALSE(a.on_ce_packet(200 * kNs));
  EXPECT_FALSE(b.on_ce_packet(200 * kNs));
  a.reset();
  EXPECT_EQ(a.counters().ce_packets, 0u);
  EXPECT_TRUE(a.on_ce_packet(300 * kNs));
}

TEST(DcqcnNp, EarlierTimeIsTakenAsLatest) {
  cc::DcqcnNp np(4000 * kNs);
  EXPECT_TRUE(np.on_ce_packet(10000 * kNs));
  EXPECT_FALSE(np.on_ce_packet(0));  // taken as 10 us: too soon
  EXPECT_TRUE(np.on_ce_packet(14000 * kNs));
}

}  // namespace

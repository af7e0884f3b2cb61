// The ECN sweep's trade-off at its two ends, fast enough for the default
// suite: regress/sweeps/ecn_sweep.sh with SEEDS=3 KS="32 256" on
// configs/scenarios/ecn_k_sweep.yaml (the full sweep is test_ecn_sweep,
// label long). The three seeds of the two K values must not overlap, with
// room to spare: K = 256 KiB's worst seed beats K = 32 KiB's best on
// throughput by more than K = 32 KiB's own seed spread (max - min), and its
// fewest pause frames and lowest short-flow p99 slowdown are above
// K = 32 KiB's most (low K: DCQCN over-reduces; high K: the queue reaches
// PFC's XOFF and delays the short flows).
#include <gtest/gtest.h>

#include <string>

#include "cli_util.h"
#include "ecn_sweep_runs.h"

using namespace clitest;
using namespace ecnsweep;

TEST(EcnSweepQuick, HighKBeatsLowKOnThroughputAndPausesMore) {
  const std::string out = temp_dir();
  const Result r =
      sh("SEEDS=3 KS='32 256' ROCESIM=" + bin() + " " + src_dir() + "/regress/sweeps/ecn_sweep.sh " + out);
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto by_k = read_runs(out + "/ecn_sweep_runs.csv");
  ASSERT_EQ(by_k.size(), 2u);
  const Seeds& k32 = by_k.at(32 * 1024);
  const Seeds& k256 = by_k.at(256 * 1024);
  ASSERT_EQ(k32.tput.size(), 3u);
  ASSERT_EQ(k256.tput.size(), 3u);
  EXPECT_GT(lo(k256.tput) - hi(k32.tput), spread(k32.tput)) << lo(k256.tput) << " vs " << hi(k32.tput);
  EXPECT_GT(lo(k256.pauses), hi(k32.pauses));
  EXPECT_GT(lo(k256.p99), hi(k32.p99));
  sh("rm -rf " + out);
}

// regress/sweeps/ecn_sweep.sh on configs/scenarios/ecn_incast.yaml (closed
// loop: RC + DCQCN), as users run it: the seed's K sweep, 32 KiB to 256 KiB
// in 32 KiB steps, 10 seeds per K. Issue 9's claim: some K gives a higher
// median throughput or a lower median p99 FCT slowdown than the smallest K
// (at the smallest K DCQCN is cut most often, so the long flows lose rate).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

TEST(EcnSweep, SomeKBeatsTheSmallestKOnThroughputOrTail) {
  const std::string out = temp_dir();
  const Result r = sh("ROCESIM=" + bin() + " " + src_dir() + "/regress/sweeps/ecn_sweep.sh " + out);
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream f(out + "/ecn_sweep.csv");
  std::string line;
  ASSERT_TRUE(std::getline(f, line));
  ASSERT_EQ(line.rfind("k_bytes,runs,throughput_gbps_median,throughput_gbps_p90,slowdown_p99_median", 0), 0u) << line;
  struct Row { unsigned long k; int runs; double tput, p99; };
  std::vector<Row> rows;
  while (std::getline(f, line)) {
    Row w{};
    double t90 = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lu,%d,%lf,%lf,%lf", &w.k, &w.runs, &w.tput, &t90, &w.p99), 5) << line;
    rows.push_back(w);
  }
  // The seed's sweep: 32 KiB .. 256 KiB in 32 KiB steps.
  ASSERT_EQ(rows.size(), 8u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].k, (i + 1) * 32 * 1024ul);
    EXPECT_EQ(rows[i].runs, 10);
  }
  bool better = false;
  for (size_t i = 1; i < rows.size(); ++i)
    better = better || rows[i].tput > rows[0].tput || rows[i].p99 < rows[0].p99;
  EXPECT_TRUE(better) << "no K beats K = 32 KiB on median throughput or median p99 slowdown";
  sh("rm -rf " + out);
}

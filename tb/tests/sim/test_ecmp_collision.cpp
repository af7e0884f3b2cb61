// configs/scenarios/ecmp_collision.yaml shows what its comment says: with
// static hashing some of leaf0's uplinks take more than their share of the
// sixteen long flows, and the seed article's rehash (avoid_hot) and
// flowlets (least utilized uplink) each lower the long flows' p95 FCT. Over
// seeds 1..3 (the hash seeds derive from the run seed, so each seed is
// another collision pattern), the median of the per-run p95 (nearest rank
// over the 16 long flows, flows.csv) must be lower than static's; every long
// flow completes and nothing is dropped. docs/results.md has the 10-seed
// figures (regress/suites/ecmp_collision.yaml).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

struct RunResult {
  double p95_us = 0;
  size_t long_flows = 0, long_completed = 0;
  std::string summary;
};

RunResult run(const std::string& lb, int seed) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/ecmp_collision.yaml --out " + dir +
                           "/out --quiet --set switch.ecmp.load_balancing=" + lb + " --set seed=" + std::to_string(seed));
  EXPECT_EQ(r.rc, 0) << r.err;
  RunResult o;
  const Csv csv = parse_csv(slurp(dir + "/out/flows.csv"));
  o.summary = slurp(dir + "/out/summary.json");
  std::system(("rm -rf " + dir).c_str());
  std::vector<double> f;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    if (csv.at(i, "tag") != "long") continue;
    ++o.long_flows;
    if (csv.at(i, "completed") != "1") continue;
    ++o.long_completed;
    f.push_back(std::stod(csv.at(i, "fct_ns")) / 1000.0);
  }
  std::sort(f.begin(), f.end());
  if (!f.empty()) o.p95_us = f[static_cast<size_t>(std::ceil(0.95 * f.size())) - 1];  // nearest rank
  return o;
}

double median_p95(const std::string& lb) {
  std::vector<double> p;
  for (int seed = 1; seed <= 3; ++seed) {
    const RunResult r = run(lb, seed);
    EXPECT_EQ(r.long_flows, 16u) << lb << " seed " << seed;
    EXPECT_EQ(r.long_completed, r.long_flows) << lb << " seed " << seed;
    EXPECT_NE(r.summary.find("\"dropped\": 0,"), std::string::npos) << lb << " seed " << seed << ": drops";
    p.push_back(r.p95_us);
  }
  std::sort(p.begin(), p.end());
  return p[1];
}

}  // namespace

TEST(EcmpCollision, TheSeedsRehashAndFlowletsLowerTheLongFlowsP95Fct) {
  const double st = median_p95("static"), hot = median_p95("avoid_hot"), fl = median_p95("flowlet");
  // Sixteen 2 MB flows at 25 Gbps take at least 640 us each: a p95 below that is a broken measurement.
  ASSERT_GT(st, 640.0);
  EXPECT_LT(hot, st) << "avoid_hot " << hot << " us vs static " << st << " us";
  EXPECT_LT(fl, st) << "flowlet " << fl << " us vs static " << st << " us";
  RecordProperty("p95_us_static", std::to_string(st));
  RecordProperty("p95_us_avoid_hot", std::to_string(hot));
  RecordProperty("p95_us_flowlet", std::to_string(fl));
}

// configs/scenarios/ecmp_polarization.yaml shows what its comment says: with
// the same hash function and seed at every switch of a k = 8 fat-tree, an
// aggregation switch sends the flows a ToR hashed to it onto one of its four
// core uplinks (the ToR's hash mod 4 is the agg's too), and a seed per switch
// or another function at the aggregation tier cures it. Imbalance of a tier:
// the busiest link's bytes over the mean of that tier's links (summary.json
// ports, tx_bytes; agg g's ports 4..7 go to cores, tor t's ports 4..7 to
// aggs, tb/topology/builders.h). Expected from first principles: polarized,
// at most one uplink of four per agg carries its up traffic, so the tier's
// busiest link carries about 4 x the mean or more; balanced, near 1. The test
// asks for a factor of at least 2 between polarized and each cure, and that
// the ToR tier (hashed once, never polarized) stays below 2 in every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

struct Imbalance {
  double core = 0, tor = 0;  // agg->core and tor->agg: max / mean of tx_bytes
};

Imbalance run(const std::string& set) {
  const std::string dir = temp_dir();
  const Result r =
      rocesim("run " + src_dir() + "/configs/scenarios/ecmp_polarization.yaml --out " + dir + "/out --quiet " + set);
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/out/summary.json");
  std::system(("rm -rf " + dir).c_str());
  std::vector<double> core, tor;
  const std::regex re("\\{\"node\": \"(agg|tor)[0-9]+\", \"port\": ([0-9]+), [^}]*\"tx_bytes\": ([0-9]+)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    if (std::stoi((*it)[2]) < 4) continue;  // ports 0..3 face down
    ((*it)[1] == "agg" ? core : tor).push_back(std::stod((*it)[3]));
  }
  EXPECT_EQ(core.size(), 32u * 4) << "agg uplinks";
  EXPECT_EQ(tor.size(), 32u * 4) << "tor uplinks";
  const auto ratio = [](const std::vector<double>& v) {
    if (v.empty()) return 0.0;
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    return mean > 0 ? *std::max_element(v.begin(), v.end()) / mean : 0.0;
  };
  return {ratio(core), ratio(tor)};
}

}  // namespace

TEST(EcmpPolarization, SameFunctionAndSeedEverywherePolarizesTheCoreTierAndEitherCureLifts) {
  const Imbalance pol = run("");
  const Imbalance seeds = run("--set switch.ecmp.seed=0");
  const Imbalance funcs = run("--set switch.ecmp.tiers.agg.function=crc16_ccitt");
  EXPECT_GE(pol.core, 3.0) << "one uplink of four per agg: about 4 x the mean";
  EXPECT_GE(pol.core, 2 * seeds.core) << "per-switch seeds: " << seeds.core << " vs " << pol.core;
  EXPECT_GE(pol.core, 2 * funcs.core) << "another function at the agg tier: " << funcs.core << " vs " << pol.core;
  for (const Imbalance& i : {pol, seeds, funcs}) EXPECT_LT(i.tor, 2.0) << "the ToR tier is hashed once";
  RecordProperty("core_imbalance_polarized", std::to_string(pol.core));
  RecordProperty("core_imbalance_per_switch_seeds", std::to_string(seeds.core));
  RecordProperty("core_imbalance_agg_function", std::to_string(funcs.core));
}

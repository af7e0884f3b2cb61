// switch.queue_impl: lockstep (issue 11 item 3): every queue-manager
// operation of a run goes to the C++ model and to the Verilated RTL, and the
// two are compared after each. Shipped scenarios with PFC (pfc_incast), ECN
// (ecn_incast, WRED) and dynamic-threshold drops (pfc_incast without PFC)
// run with zero mismatches and give the same outputs as the model alone; a
// switch larger than the RTL's build is refused at load.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

uint64_t json_u64(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([0-9]+)"))) return UINT64_MAX;
  return std::stoull(m[1]);
}

bool has_rtl() {
  const Result r = rocesim("validate " + src_dir() + "/configs/scenarios/pfc_incast.yaml --queue-impl lockstep --quiet");
  return r.err.find("this build has none") == std::string::npos;
}

struct Case {
  const char* name;
  const char* scenario;
  const char* extra;
};

class LockstepScenario : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(LockstepScenario, AgreesWithTheRtlOnEveryOperation) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const Case& c = GetParam();
  const std::string dir = temp_dir();
  const std::string base = "run " + src_dir() + "/configs/scenarios/" + c.scenario + ".yaml " + c.extra + " --quiet";
  const Result tlm = rocesim(base + " --out " + dir + "/tlm");
  ASSERT_EQ(tlm.rc, 0) << tlm.err;
  const Result ls = rocesim(base + " --out " + dir + "/ls --queue-impl lockstep");
  ASSERT_EQ(ls.rc, 0) << ls.err;
  const std::string sum = slurp(dir + "/ls/summary.json");
  EXPECT_GE(json_u64(sum, "operations"), 5000u) << sum;
  EXPECT_EQ(json_u64(sum, "mismatches"), 0u) << sum;
  // The model decides in both runs and the RTL agrees: the same outputs.
  for (const char* f : {"flows.csv", "queues.csv", "pfc.csv"})
    EXPECT_TRUE(slurp(dir + "/tlm/" + f) == slurp(dir + "/ls/" + f)) << f;
  // What each case exercises, from the run's own counters.
  const std::string t = slurp(dir + "/tlm/summary.json");
  const std::string what = c.name;
  const char* counter = what == "pfc" ? "pause_frames_tx" : what == "ecn" ? "marked" : "dropped";
  EXPECT_GT(json_u64(t, counter), 0u) << counter << "\n" << t;
  std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(Shipped, LockstepScenario,
                         ::testing::Values(Case{"pfc", "pfc_incast", ""}, Case{"ecn", "ecn_incast", ""},
                                           Case{"dt_drops", "pfc_incast", "--set pfc.enabled=false"}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(Lockstep, ASwitchLargerThanTheRtlIsRefusedAtLoad) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const std::string dir = temp_dir();
  write_file(dir + "/big.yaml", "topology: {kind: single_switch, hosts: 40}\nflows: [{src: h0, dst: h1, size: 1KiB}]\n");
  const Result r = rocesim("run " + dir + "/big.yaml --out " + dir + "/o --queue-impl lockstep");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("key 'switch.queue_impl'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("40 ports"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir + "/o")) << "refused before anything is built";
  std::system(("rm -rf " + dir).c_str());
}

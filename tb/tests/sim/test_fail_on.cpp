// rocesim run --fail-on COND,... (docs/user-guide.md): exit 1 when a named
// condition holds at the end of a completed run, 0 when none does, 2 for an
// unknown name with nothing written. Each condition is run on a scenario
// that has it and one that does not; whether it holds is read from the same
// run's summary.json (an independent output: the condition's definition
// applied to its fields), and the test first makes sure that each "has it"
// scenario does have it, so no case is vacuous.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

std::string scenario(const std::string& name) { return src_dir() + "/configs/scenarios/" + name + ".yaml"; }

// The first "KEY": INTEGER in the document (the top-level member for the keys
// used here: they come before the per-switch blocks).
uint64_t first_u64(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([0-9]+)"))) return UINT64_MAX;
  return std::stoull(m[1]);
}

// The condition, from summary.json's fields.
bool holds(const std::string& cond, const std::string& s) {
  if (cond == "deadlock") return s.find("\"deadlock\": true") != std::string::npos;
  // Only lossless frames go to a PG's headroom, and the watchdog drops only
  // from queues stormed by PFC pauses.
  if (cond == "lossless_drops") return first_u64(s, "headroom_overflow") + first_u64(s, "pfc_watchdog") > 0;
  if (cond == "drops") return first_u64(s, "dropped") > 0;
  if (cond == "unfinished_flows") {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(s, m, std::regex("\"flows\": \\{\"total\": ([0-9]+), \"completed\": ([0-9]+)")));
    return m[1] != m[2];
  }
  ADD_FAILURE() << cond;
  return false;
}

struct Case {
  const char* cond;
  std::string args;  // CONFIG and --set options
  bool has_it;
};

}  // namespace

TEST(FailOn, EachConditionFailsTheRunExactlyWhenItHolds) {
  const std::string incast = scenario("pfc_incast");
  const Case cases[] = {
      {"deadlock", scenario("pfc_deadlock") + " --set sim.duration=2ms", true},
      {"deadlock", incast, false},
      // Drops on the lossless priority: headroom too small for the in-flight
      // data (headroom_overflow), and a storm's watchdog (pfc_watchdog).
      {"lossless_drops", incast + " --set pfc.headroom=5KiB", true},
      {"lossless_drops", scenario("pfc_storm"), true},
      // Lossy drops (the ingress limit on DSCP 0) are not lossless drops ...
      {"lossless_drops", scenario("single_switch_incast"), false},
      {"lossless_drops", incast, false},
      // ... but they are drops.
      {"drops", scenario("single_switch_incast"), true},
      {"drops", incast, false},
      {"unfinished_flows", scenario("single_switch_incast"), true},
      {"unfinished_flows", incast, false},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string out = temp_dir() + "/run" + std::to_string(n++);
    const Result r = rocesim("run " + c.args + " --out " + out + " --quiet --fail-on " + c.cond);
    const std::string s = slurp(out + "/summary.json");
    ASSERT_FALSE(s.empty()) << c.cond << " " << c.args << ": " << r.err;
    const bool h = holds(c.cond, s);
    EXPECT_EQ(h, c.has_it) << c.cond << " " << c.args << ": the scenario is not what the case needs";
    EXPECT_EQ(r.rc, h ? 1 : 0) << c.cond << " " << c.args << ": " << r.err;
    const std::string line = "rocesim: --fail-on " + std::string(c.cond) + ": ";
    if (h) {
      EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.err, "");
    }
    EXPECT_NE(s.find("\"complete\": true"), std::string::npos) << "the outputs are written as usual";
  }
}

TEST(FailOn, SeveralConditionsReportEachThatHolds) {
  const std::string out = temp_dir() + "/out";
  // single_switch_incast drops (lossy) and completes no flow; no deadlock, no lossless drop.
  const Result r = rocesim("run " + scenario("single_switch_incast") + " --out " + out +
                           " --quiet --fail-on deadlock,lossless_drops --fail-on=drops,unfinished_flows,drops");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.find("--fail-on deadlock"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--fail-on lossless_drops"), std::string::npos) << r.err;
  const size_t d = r.err.find("rocesim: --fail-on drops: ");
  EXPECT_NE(d, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("rocesim: --fail-on drops: ", d + 1), std::string::npos) << "drops given twice, reported once";
  EXPECT_NE(r.err.find("rocesim: --fail-on unfinished_flows: 8 of 8 flows did not complete"), std::string::npos)
      << r.err;
}

TEST(FailOn, UnknownConditionIsBadInputAndWritesNothing) {
  for (const char* arg : {"--fail-on deadlock,lossles_drops", "--fail-on deadlock,", "--fail-on", "--fail-on="}) {
    const std::string out = temp_dir() + "/never";
    const Result r = rocesim("run " + scenario("two_hosts") + " --out " + out + " " + arg);
    EXPECT_EQ(r.rc, 2) << arg;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("rocesim: --fail-on", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("deadlock, lossless_drops, drops or unfinished_flows"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(out)) << arg;
  }
  const Result r = rocesim("run " + scenario("two_hosts") + " --out " + temp_dir() + "/x --fail-on lossles_drops");
  EXPECT_NE(r.err.find("unknown condition 'lossles_drops'"), std::string::npos) << r.err;
}

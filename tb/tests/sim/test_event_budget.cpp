// No timer spins. A 16-to-1 incast repeated 250 times, 20 us apart, with CM
// connection setup (configs/scenarios/incast_dcqcn.yaml, 4 000 flows): many
// REQs come due while their port is busy or paused. The host's timer used to
// re-arm itself 1 ps later until the port could send the REQ, one event per
// picosecond (26.8 M events for 56 600 link hops). Expected from the event
// path (docs/design.md): a link hop costs an admission, an egress wake-up
// and at most a frame end, and timers are per flow, not per picosecond, so
// the run must stay within 4 events per link hop; and REQs did come due
// again (flows.csv cm_retries), so the path is exercised.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

uint64_t summary_number(const std::string& s, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": ([0-9]+)");
  return std::regex_search(s, m, re) ? std::stoull(m[1]) : 0;
}

}  // namespace

TEST(EventBudget, ConnectionSetupWhilePortsAreBusyCostsNoEventPerPicosecond) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/incast_dcqcn.yaml --out " + dir +
                           "/out --quiet --set traffic[0].count=250 --set traffic[0].interval=20us"
                           " --set traffic[0].size=64KB --set sim.duration=4800us --set stats.interval=0");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string summary = slurp(dir + "/out/summary.json");
  const Csv flows = parse_csv(slurp(dir + "/out/flows.csv"));
  std::system(("rm -rf " + dir).c_str());
  const uint64_t events = summary_number(summary, "events"), hops = summary_number(summary, "link_hops");
  ASSERT_GT(hops, 10000u);
  EXPECT_LE(events, 4 * hops) << events << " events for " << hops << " link hops";

  ASSERT_TRUE(flows.has("cm_retries"));
  uint64_t retries = 0;
  for (size_t i = 0; i < flows.rows.size(); ++i) retries += std::stoull(flows.at(i, "cm_retries"));
  EXPECT_GT(retries, 0u) << "REQs came due again: the timer path this test is about ran";
}

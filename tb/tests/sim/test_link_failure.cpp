// links.failures in a run (docs/ecmp.md, "Link failure"). Two leaves of 8
// hosts and two spines, every link 100 Gbps; eight 1 MiB RC flows from
// leaf0's hosts to leaf1's. leaf0's port 8, its cable to spine0 (spine0's
// port 0), goes down at 30 us for good, with a detection delay of 5 us:
// - frames on the cable from 30 us are lost, counted under link_down, and RC
//   recovers them: every flow completes;
// - from the detection on (35 us, plus one frame's wire time for a frame
//   started just before), neither end sends anything onto the cable
//   (ports.csv tx_bytes of leaf0:8 and spine0:0 are 0 in every later
//   interval), while before the failure both carried traffic (the hash put
//   flows or their ACKs there: the check is not vacuous);
// - bad references are refused with the key's place.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

std::string scenario(const std::string& failures) {
  std::string s =
      "name: link_failure\nsim: {duration: 20ms, stop_when_done: true}\n"
      "topology: {kind: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 8, host_rate: 100Gbps, "
      "fabric_rate: 100Gbps}\n"
      "links: {failures: " + failures + "}\n"
      "hosts: {transport: rc, mtu: 4096}\nstats: {interval: 1us}\nflows:\n";
  for (int i = 0; i < 8; ++i)
    s += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(8 + i) + ", size: 1MiB, start: 0us}\n";
  return s;
}

struct PortRow {
  double t_ns, interval_ns;
  std::string node;
  int port;
  uint64_t tx_bytes;
};

std::vector<PortRow> read_ports(const std::string& text) {
  const Csv csv = parse_csv(text);
  std::vector<PortRow> rows;
  for (size_t i = 0; i < csv.rows.size(); ++i)
    rows.push_back({std::stod(csv.at(i, "time_ns")), std::stod(csv.at(i, "interval_ns")), csv.at(i, "node"),
                    std::stoi(csv.at(i, "port")), std::stoull(csv.at(i, "tx_bytes"))});
  return rows;
}

}  // namespace

TEST(LinkFailure, TheDeadCableCarriesNothingAfterDetectionAndRcRecoversEveryFlow) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml", scenario("[{link: \"leaf0:8\", down: 30us, detection: 5us}]"));
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string flows = slurp(dir + "/out/flows.csv"), summary = slurp(dir + "/out/summary.json");
  const std::vector<PortRow> ports = read_ports(slurp(dir + "/out/ports.csv"));
  std::system(("rm -rf " + dir).c_str());

  // Every flow completed: summary.json's flows block, and eight rows in flows.csv.
  EXPECT_EQ(std::count(flows.begin(), flows.end(), '\n'), 1 + 8);
  EXPECT_NE(summary.find("\"flows\": {\"total\": 8, \"completed\": 8,"), std::string::npos) << "every RC flow completes";
  const auto lost = summary.find("\"link_down\": ");
  ASSERT_NE(lost, std::string::npos);
  EXPECT_GT(std::stoull(summary.substr(lost + 13)), 0u) << "frames on the cable when it failed are lost";

  // 4 KiB frames at 100 Gbps: (4096 + 82 + 20) B x 80 ps < 0.34 us; a frame
  // started before the detection ends by 35.34 us.
  const double quiet_from_ns = 35000 + 340;
  uint64_t before[2] = {0, 0}, after[2] = {0, 0};
  for (const PortRow& p : ports) {
    const int which = p.node == "leaf0" && p.port == 8 ? 0 : p.node == "spine0" && p.port == 0 ? 1 : -1;
    if (which < 0) continue;
    const double start = p.t_ns - p.interval_ns;
    if (p.t_ns <= 30000) before[which] += p.tx_bytes;
    if (start >= quiet_from_ns) after[which] += p.tx_bytes;
  }
  EXPECT_GT(before[0], 0u) << "leaf0:8 carried traffic before the failure";
  EXPECT_GT(before[1], 0u) << "spine0:0 carried traffic before the failure";
  EXPECT_EQ(after[0], 0u) << "leaf0 sent onto the dead cable after detection";
  EXPECT_EQ(after[1], 0u) << "spine0 sent onto the dead cable after detection";
}

TEST(LinkFailure, BadReferencesAreRefusedWithTheKeysPlace) {
  const std::string dir = temp_dir();
  const auto refused = [&](const std::string& failures, const std::string& what) {
    write_file(dir + "/s.yaml", scenario(failures));
    const Result r = rocesim("validate " + dir + "/s.yaml");
    EXPECT_EQ(r.rc, 2) << failures;
    EXPECT_NE(r.err.find("s.yaml:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  refused("[{link: \"leaf9:8\", down: 30us}]", "no node 'leaf9'");
  refused("[{link: \"leaf0:99\", down: 30us}]", "no cable on port 99");
  refused("[{link: leaf0, down: 30us}]", "NODE:PORT");
  refused("[{link: \"leaf0:8\", down: 30us, up: 10us}]", "later than down");
  refused("[{link: \"leaf0:8\"}]", "down");
  std::system(("rm -rf " + dir).c_str());
}

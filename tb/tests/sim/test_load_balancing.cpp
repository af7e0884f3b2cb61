// switch.ecmp.load_balancing in a run (docs/ecmp.md, "Dynamic load
// balancing"). Six RC flows, 100 Gbps each with at most 8 packets
// outstanding (an ACK for each), from leaf0's hosts to six of leaf1's,
// starting 7 us apart, over two spines: the
// only queues are at leaf0's two uplinks (every link is 100 Gbps, each spine
// forwards what one uplink sends, each receiver takes one flow), so both paths
// downstream of leaf0 take the same time and the order a flow's packets
// leave leaf0 in is the order they arrive in.
// - flowlet, with a flowlet gap of 1 ns: the gap rule alone would move a flow
//   between nearly every two packets; the rule that a flow never moves while
//   it has packets queued on its member is what keeps it in order. So no
//   receiver may see a PSN gap (flows.csv psn_errors: the RC responder's
//   out-of-order arrivals; nothing is lost in a lossless fabric), while
//   leaf0's counters show that flowlets did move and that the queued rule
//   held packets.
// - spray_random: each packet takes a random uplink, whose queue differs
//   from the other's, so receivers see gaps, NAK them, and go-back-N still
//   completes every flow. (Round robin over two uplinks fed alike keeps
//   their queues equal, and with them the order.)
// - static: the same traffic hashed per flow sees no gap (the comparison).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

constexpr int kFlows = 6;

std::string scenario(const std::string& ecmp) {
  std::string s =
      "name: load_balancing\nsim: {duration: 20ms, stop_when_done: true}\n"
      "topology: {kind: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 8, host_rate: 100Gbps, "
      "fabric_rate: 100Gbps}\n"
      "hosts: {transport: rc, mtu: 1024, max_outstanding: 8, ack_every: 1}\n"
      "switch: {ecmp: " + ecmp + "}\nflows:\n";
  for (int i = 0; i < kFlows; ++i)
    s += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(8 + i) + ", size: 256KiB, start: " + std::to_string(7 * i) + "us}\n";
  return s;
}

struct Flow {
  uint64_t psn_errors = 0, naks = 0;
  bool completed = false;
};

std::vector<Flow> read_flows(const std::string& text) {
  const Csv csv = parse_csv(text);
  std::vector<Flow> rows;
  for (size_t i = 0; i < csv.rows.size(); ++i)
    rows.push_back({std::stoull(csv.at(i, "psn_errors")), std::stoull(csv.at(i, "naks_received")),
                    csv.at(i, "completed") == "1"});
  return rows;
}

struct Outcome {
  std::vector<Flow> flows;
  std::string summary;
};

Outcome run(const std::string& ecmp) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml", scenario(ecmp));
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  EXPECT_EQ(r.rc, 0) << r.err;
  Outcome o;
  o.flows = read_flows(slurp(dir + "/out/flows.csv"));
  o.summary = slurp(dir + "/out/summary.json");
  std::system(("rm -rf " + dir).c_str());
  return o;
}

// leaf0's load_balancing counter `name` from summary.json (-1 when absent).
long long leaf0_counter(const std::string& summary, const std::string& name) {
  const std::regex re("\"name\": \"leaf0\"[^\\n]*\"load_balancing\": \\{[^}]*\"" + name + "\": ([0-9]+)");
  std::smatch m;
  return std::regex_search(summary, m, re) ? std::stoll(m[1]) : -1;
}

// summary.json packets.dropped: frames dropped anywhere, for any reason.
uint64_t dropped(const std::string& summary) {
  const std::regex re("\"packets\": \\{\"sent\": [0-9]+, \"delivered\": [0-9]+, \"dropped\": ([0-9]+)");
  std::smatch m;
  return std::regex_search(summary, m, re) ? std::stoull(m[1]) : ~0ull;
}

}  // namespace

TEST(LoadBalancing, FlowletsKeepLosslessFlowsInOrderWhileMovingThem) {
  const Outcome r = run("{load_balancing: flowlet, flowlet_gap: 1ns, flowlet_metric: queue_bytes}");
  ASSERT_EQ(r.flows.size(), size_t(kFlows));
  EXPECT_EQ(dropped(r.summary), 0u);
  for (int i = 0; i < kFlows; ++i) {
    EXPECT_TRUE(r.flows[i].completed) << "flow " << i;
    EXPECT_EQ(r.flows[i].psn_errors, 0u) << "flow " << i << " arrived out of order";
    EXPECT_EQ(r.flows[i].naks, 0u) << "flow " << i;
  }
  // Not vacuous: flowlets moved between the uplinks, and the queued rule held packets.
  EXPECT_GT(leaf0_counter(r.summary, "moves"), 0);
  EXPECT_GT(leaf0_counter(r.summary, "held_queued"), 0);
}

TEST(LoadBalancing, SprayingReordersAndGoBackNRecovers) {
  const Outcome s = run("{load_balancing: spray_random}");
  ASSERT_EQ(s.flows.size(), size_t(kFlows));
  uint64_t gaps = 0, naks = 0;
  for (int i = 0; i < kFlows; ++i) {
    EXPECT_TRUE(s.flows[i].completed) << "flow " << i;
    gaps += s.flows[i].psn_errors;
    naks += s.flows[i].naks;
  }
  EXPECT_GT(gaps, 0u) << "spraying over unequal queues reorders";
  EXPECT_GT(naks, 0u) << "and the gaps are NAKed";
  EXPECT_EQ(leaf0_counter(s.summary, "moves"), 0) << "spraying keeps no flowlets";

  const Outcome h = run("{load_balancing: static}");
  for (int i = 0; i < kFlows; ++i) {
    EXPECT_TRUE(h.flows[i].completed) << "flow " << i;
    EXPECT_EQ(h.flows[i].psn_errors, 0u) << "static hashing keeps each flow on one path";
  }
  EXPECT_EQ(leaf0_counter(h.summary, "moves"), -1) << "static: no load_balancing block";
}

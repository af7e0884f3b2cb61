// switch.ecmp in a run: the fabric's ideal FCT (flows.csv) follows the path
// the switches' hash units pick, and ecmp.hash_cycles delays the ingress
// pipeline, per switch through `ecmp.switches`. Which spine each flow took
// is read from an independent output: summary.json's per-port frame counts,
// decoded with flows of 1, 2, 4, ... 128 packets (a spine's count is the sum
// of its flows' packets, so its binary digits name them).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

constexpr int kFlows = 8;

// Two leaves of 8 hosts, two spines; flow i from h<i> (leaf0) to h<8+i>
// (leaf1), 2^i packets of one MTU, alone in the fabric (starts 100 us
// apart; the longest lasts 128 x 354 ns at 25 Gbps), open loop: no ACKs, no
// congestion, so nothing else crosses a spine.
std::string scenario(const std::string& ecmp) {
  std::string s = "name: ecmp_path\nsim: {duration: 2ms}\n"
                  "topology: {kind: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 8}\n"
                  "hosts: {mtu: 1024}\n"
                  "switch: {ecmp: " + ecmp + "}\nflows:\n";
  for (int i = 0; i < kFlows; ++i)
    s += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(8 + i) + ", size: " +
         std::to_string(1024 << i) + "B, start: " + std::to_string(100 * i) + "us}\n";
  return s;
}

struct FlowRow {
  double fct_ns = 0, ideal_ns = 0;
};

std::vector<FlowRow> read_flows(const std::string& text) {
  const Csv csv = parse_csv(text);
  std::vector<FlowRow> rows;
  for (size_t i = 0; i < csv.rows.size(); ++i)
    rows.push_back({std::stod(csv.at(i, "fct_ns")), std::stod(csv.at(i, "ideal_fct_ns"))});
  return rows;
}

// tx_frames of (node, port) from summary.json's "ports" list.
uint64_t tx_frames(const std::string& summary, const std::string& node, int port) {
  const std::regex re("\\{\"node\": \"" + node + "\", \"port\": " + std::to_string(port) +
                      ", \"rate_bps\": [0-9]+, \"tx_frames\": ([0-9]+)");
  std::smatch m;
  if (!std::regex_search(summary, m, re)) {
    ADD_FAILURE() << "no port " << node << ":" << port << " in summary.json";
    return 0;
  }
  return std::stoull(m[1]);
}

struct Run {
  std::vector<FlowRow> flows;
  uint64_t spine0 = 0, spine1 = 0;  // frames each spine sent to leaf1 (its port 1)
};

Run run(const std::string& ecmp) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml", scenario(ecmp));
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  EXPECT_EQ(r.rc, 0) << r.err;
  Run o;
  o.flows = read_flows(slurp(dir + "/out/flows.csv"));
  const std::string summary = slurp(dir + "/out/summary.json");
  o.spine0 = tx_frames(summary, "spine0", 1);
  o.spine1 = tx_frames(summary, "spine1", 1);
  std::system(("rm -rf " + dir).c_str());
  return o;
}

void check(const std::string& function) {
  const Run a = run("{function: " + function + "}");
  // 1000 hash cycles at spine1 (1 ns clock): 1000 ns more on its paths.
  const Run b = run("{function: " + function + ", switches: {spine1: {hash_cycles: 1000}}}");
  ASSERT_EQ(a.flows.size(), size_t(kFlows));
  ASSERT_EQ(b.flows.size(), size_t(kFlows));
  // Every data packet crossed one spine: 1 + 2 + ... + 128 = 255.
  ASSERT_EQ(b.spine0 + b.spine1, 255u);
  EXPECT_EQ(a.spine1, b.spine1) << "hash_cycles changed the paths";
  // Both spines carry flows (else the check below cannot tell a first-member
  // ideal path from the hashed one).
  ASSERT_GT(b.spine1, 0u);
  ASSERT_GT(b.spine0, 0u);
  for (int i = 0; i < kFlows; ++i) {
    const bool via_spine1 = (b.spine1 >> i) & 1;
    const double extra = via_spine1 ? 1000.0 : 0.0;
    EXPECT_NEAR(b.flows[i].ideal_ns - a.flows[i].ideal_ns, extra, 1e-3) << function << " flow " << i;
    // Alone in the fabric, the flow's FCT moves by exactly as much.
    EXPECT_NEAR(b.flows[i].fct_ns - a.flows[i].fct_ns, extra, 1e-3) << function << " flow " << i;
  }
}

}  // namespace

TEST(EcmpPath, IdealFctFollowsTheHashedPathMurmur3) { check("murmur3"); }
TEST(EcmpPath, IdealFctFollowsTheHashedPathCrc16) { check("crc16_arc"); }
TEST(EcmpPath, IdealFctFollowsTheHashedPathBucketTable) { check("crc16_ccitt, selection: table, table_bits: 6"); }

// paths.csv reproduces the path every flow's frames took (issue 13, item 3).
//
// On configs/scenarios/ecmp_collision.yaml (16 leaves x 16 hosts, 4 spines:
// 2 408 flows with CM setup, RC ACKs and background), run with static
// hashing and with flowlets of a 2 us gap (168 flows move), until every
// frame is delivered, the test checks paths.csv
// against sources that do not come from it:
//  - every switch port's MAC counters (summary.json ports: tx_frames,
//    tx_bytes, rx_frames, rx_bytes): the rows leaving a port add up to what
//    its MAC sent and the rows entering it to what it received, frame for
//    frame and byte for byte (the run has no drop and no PFC frame, asserted
//    first, so every frame a port carries is one of a flow's);
//  - the cabling, from the leaf-spine layout of tb/topology/builders.h
//    (leaf l port j < 16: host 16 l + j; leaf l port 16 + s: spine s port l):
//    every direction's rows form a walk from the sending host's leaf port,
//    over cables, to the receiving host's;
//  - each flow's data packets as its NIC counted them (flows.csv
//    packets_sent): every hop of the fwd direction carried all of them;
//  - ecmp_members.csv: what the members of the groups were given per port is
//    what the ports sent;
//  - flows.csv path: the last row of each hop, in hop order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

constexpr int kHostsPerLeaf = 16, kSpines = 4;

struct PortCount {
  uint64_t frames = 0, bytes = 0;
};
using PortKey = std::pair<std::string, int>;  // (switch, port)

std::string leaf(int l) { return "leaf" + std::to_string(l); }

// The far end of (switch, port) in the layout above: ("h", host) for a host.
PortKey peer(const std::string& sw, int port) {
  if (sw.rfind("leaf", 0) == 0) {
    const int l = std::stoi(sw.substr(4));
    if (port < kHostsPerLeaf) return {"h", l * kHostsPerLeaf + port};
    return {"spine" + std::to_string(port - kHostsPerLeaf), l};
  }
  return {leaf(port), kHostsPerLeaf + std::stoi(sw.substr(5))};
}

struct Run {
  Csv paths, flows, members;
  std::map<PortKey, PortCount> tx, rx;
  uint64_t moves = 0;
  std::string summary;
};

Run run(const std::string& set) {
  const std::string dir = temp_dir();
  // Run on after the last flow is done, until every frame (the last ACKs) is delivered.
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/ecmp_collision.yaml --out " + dir +
                           "/out --quiet --set sim.stop_when_done=false --set sim.duration=3ms " + set);
  EXPECT_EQ(r.rc, 0) << r.err;
  Run o;
  o.paths = parse_csv(slurp(dir + "/out/paths.csv"));
  o.flows = parse_csv(slurp(dir + "/out/flows.csv"));
  o.members = parse_csv(slurp(dir + "/out/ecmp_members.csv"));
  const std::string s = slurp(dir + "/out/summary.json");
  std::system(("rm -rf " + dir).c_str());
  o.summary = s;
  EXPECT_NE(s.find("\"pause_frames_tx\": 0,"), std::string::npos) << "the checks assume no PFC frame";
  EXPECT_NE(s.find("\"dropped\": 0,"), std::string::npos) << "the checks assume no drop";
  EXPECT_NE(s.find("\"in_flight_at_end\": 0}"), std::string::npos) << "the checks assume every frame delivered";
  const std::regex re(
      "\\{\"node\": \"((?:leaf|spine)[0-9]+)\", \"port\": ([0-9]+), [^}]*\"tx_frames\": ([0-9]+), \"tx_bytes\": "
      "([0-9]+), \"rx_frames\": ([0-9]+), \"rx_bytes\": ([0-9]+)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    const PortKey k{(*it)[1], std::stoi((*it)[2])};
    o.tx[k] = {std::stoull((*it)[3]), std::stoull((*it)[4])};
    o.rx[k] = {std::stoull((*it)[5]), std::stoull((*it)[6])};
  }
  EXPECT_EQ(o.tx.size(), 16u * 20 + 4u * 16) << "every switch port in summary.json";
  const std::regex mv("\"moves\": ([0-9]+)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), mv); it != std::sregex_iterator(); ++it)
    o.moves += std::stoull((*it)[1]);
  return o;
}

void check(const Run& o, bool moves_expected) {
  const Csv& P = o.paths;
  ASSERT_FALSE(P.rows.empty());
  // 1. Per-port counters.
  std::map<PortKey, PortCount> out, in;
  for (size_t i = 0; i < P.rows.size(); ++i) {
    const std::string sw = P.at(i, "switch");
    const uint64_t n = std::stoull(P.at(i, "packets")), b = std::stoull(P.at(i, "bytes"));
    PortCount& t = out[{sw, std::stoi(P.at(i, "out_port"))}];
    t.frames += n, t.bytes += b;
    PortCount& r = in[{sw, std::stoi(P.at(i, "in_port"))}];
    r.frames += n, r.bytes += b;
  }
  for (const auto& [k, c] : o.tx) {
    EXPECT_EQ(out[k].frames, c.frames) << k.first << ":" << k.second << " frames sent";
    EXPECT_EQ(out[k].bytes, c.bytes) << k.first << ":" << k.second << " bytes sent";
    EXPECT_EQ(in[k].frames, o.rx.at(k).frames) << k.first << ":" << k.second << " frames received";
    EXPECT_EQ(in[k].bytes, o.rx.at(k).bytes) << k.first << ":" << k.second << " bytes received";
  }
  EXPECT_EQ(out.size(), o.tx.size()) << "no row names a port the fabric does not have";

  // 2. Walks over the cabling, and 3. the NIC's packet counts.
  const Csv& F = o.flows;
  std::map<std::pair<int, std::string>, std::vector<size_t>> by_dir;  // (flow, dir) -> rows
  for (size_t i = 0; i < P.rows.size(); ++i) by_dir[{std::stoi(P.at(i, "flow_id")), P.at(i, "dir")}].push_back(i);
  size_t changed = 0;
  for (size_t f = 0; f < F.rows.size(); ++f) {
    const int src = std::stoi(F.at(f, "src").substr(1)), dst = std::stoi(F.at(f, "dst").substr(1));
    for (const std::string dir : {"fwd", "rev", "cm_fwd", "cm_rev"}) {
      const bool forward = dir == "fwd" || dir == "cm_fwd";
      const int from = forward ? src : dst, to = forward ? dst : src;
      const auto it = by_dir.find({static_cast<int>(f), dir});
      if (dir != "rev") {
        ASSERT_NE(it, by_dir.end()) << "flow " << f << " " << dir << " has no path";
      }
      if (it == by_dir.end()) continue;  // a flow whose responder sent no ACK (none here, but not required)
      std::map<int, std::vector<size_t>> hop;
      for (size_t i : it->second) hop[std::stoi(P.at(i, "hop"))].push_back(i);
      const int last = hop.rbegin()->first;
      EXPECT_EQ(hop.begin()->first, 0);
      EXPECT_EQ(static_cast<int>(hop.size()), last + 1) << "flow " << f << " " << dir << ": a hop is missing";
      std::string path;
      for (const auto& [h, rows] : hop) {
        uint64_t packets = 0;
        for (size_t i : rows) {
          const std::string sw = P.at(i, "switch");
          const int ip = std::stoi(P.at(i, "in_port")), op = std::stoi(P.at(i, "out_port"));
          packets += std::stoull(P.at(i, "packets"));
          // Where the frame came from: the sender, or some row of the hop before.
          const PortKey came = peer(sw, ip);
          if (h == 0) {
            EXPECT_EQ(came, PortKey("h", from)) << "flow " << f << " " << dir << " hop 0 enters " << sw << ":" << ip;
          } else {
            bool linked = false;
            for (size_t j : hop.at(h - 1))
              linked |= PortKey(P.at(j, "switch"), std::stoi(P.at(j, "out_port"))) == came;
            EXPECT_TRUE(linked) << "flow " << f << " " << dir << " hop " << h << " enters " << sw << ":" << ip
                                << ", which no row of hop " << h - 1 << " leaves by";
          }
          if (h == last) {
            EXPECT_EQ(peer(sw, op), PortKey("h", to)) << "flow " << f << " " << dir << " ends elsewhere";
          }
        }
        if (dir == "fwd") {
          EXPECT_EQ(packets, std::stoull(F.at(f, "packets_sent"))) << "flow " << f << " hop " << h << " carried";
        }
        const size_t now = rows.back();  // rows of a hop are in time order
        path += (path.empty() ? "" : " ") + P.at(now, "switch") + ":" + P.at(now, "in_port") + ">" + P.at(now, "out_port");
      }
      if (dir == "fwd") {
        EXPECT_EQ(F.at(f, "path"), path) << "flow " << f;
      } else if (dir == "rev") {
        EXPECT_EQ(F.at(f, "rev_path"), path) << "flow " << f;
      }
    }
    changed += std::stoull(F.at(f, "path_changes")) > 0;
  }
  if (moves_expected) {
    EXPECT_GT(o.moves, 0u) << "the load balancer moved flowlets";
    EXPECT_GT(changed, 0u) << "and paths.csv shows the moves";
  } else {
    EXPECT_EQ(changed, 0u) << "static hashing never moves a flow";
  }

  // 4. ecmp_members.csv against the ports.
  std::map<PortKey, PortCount> given;
  const Csv& M = o.members;
  for (size_t i = 0; i < M.rows.size(); ++i) {
    PortCount& g = given[{M.at(i, "switch"), std::stoi(M.at(i, "port"))}];
    g.frames += std::stoull(M.at(i, "packets"));
    g.bytes += std::stoull(M.at(i, "bytes"));
  }
  for (const auto& [k, c] : o.tx) {
    EXPECT_EQ(given[k].frames, c.frames) << k.first << ":" << k.second;
    EXPECT_EQ(given[k].bytes, c.bytes) << k.first << ":" << k.second;
  }

  // 5. summary.json's leaf-tier imbalance: over the leaf ports that are
  // members of a group of two or more, the busiest one's bytes (summed over
  // those groups) over their mean.
  std::map<std::pair<std::string, std::string>, int> group_size;
  for (size_t i = 0; i < M.rows.size(); ++i) ++group_size[{M.at(i, "switch"), M.at(i, "group")}];
  std::map<PortKey, double> up;
  for (size_t i = 0; i < M.rows.size(); ++i)
    if (M.at(i, "role") == "leaf" && group_size[{M.at(i, "switch"), M.at(i, "group")}] > 1)
      up[{M.at(i, "switch"), std::stoi(M.at(i, "port"))}] += std::stod(M.at(i, "bytes"));
  ASSERT_EQ(up.size(), 16u * kSpines) << "each leaf's uplinks form its multi-member group";
  double sum = 0, max = 0;
  for (const auto& [k, b] : up) sum += b, max = std::max(max, b);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.summary, m,
                                std::regex("\"role\": \"leaf\", [^}]*\"imbalance_max_over_mean\": ([0-9.e+]+)")));
  EXPECT_NEAR(std::stod(m[1]), max / (sum / static_cast<double>(up.size())), 1e-4 * max / sum * up.size());
}

}  // namespace

TEST(Paths, StaticHashingEveryFlowsPathMatchesThePortCountersAndTheCabling) { check(run(""), false); }

TEST(Paths, FlowletMovesAreRowsAndStillAddUpToThePortCounters) {
  // A 2 us flowlet gap: the long flows' RC windows leave such gaps, so flows move.
  check(run("--set switch.ecmp.load_balancing=flowlet --set switch.ecmp.flowlet_gap=2us"), true);
}

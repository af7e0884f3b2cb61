// switch.analytics in a run (issue 14, docs/analytics.md): the analyzer in
// every switch, its records, the collector's flow_report.csv, checked
// against what the NICs measured themselves (flows.csv naks_sent,
// rtt_avg_ns: host.cpp, independent of the switches) and against
// rate-limit arithmetic done here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../analytics/ipfix_check.h"
#include "cli_util.h"
#include "collector/collector.h"
#include "topology/topology.h"

using namespace clitest;

namespace {

const std::string kScenario = "/configs/scenarios/analytics_lossy_spine.yaml";

using FlowKey = std::tuple<std::string, std::string, std::string, std::string>;  // server, client, client QP, server QP

std::string ip_of(const std::string& host) {  // "h3" -> "10.0.0.4" (topology.h's addressing)
  const uint32_t ip = rocesim::topology::host_ip_of(static_cast<uint32_t>(std::stoul(host.substr(1))));
  return std::to_string(ip >> 24) + "." + std::to_string(ip >> 16 & 255) + "." + std::to_string(ip >> 8 & 255) + "." +
         std::to_string(ip & 255);
}

// A flow of flows.csv under the report's key: the sender is the client (it sent the CM REQ).
FlowKey key_of(const Csv& flows, size_t i) {
  return {ip_of(flows.at(i, "dst")), ip_of(flows.at(i, "src")), flows.at(i, "src_qp"), flows.at(i, "dst_qp")};
}

std::map<FlowKey, size_t> report_rows(const Csv& rep) {
  std::map<FlowKey, size_t> m;
  for (size_t i = 0; i < rep.rows.size(); ++i)
    m[{rep.at(i, "server_ip"), rep.at(i, "client_ip"), rep.at(i, "client_qp"), rep.at(i, "server_qp")}] = i;
  return m;
}

// The integer `key` of the first flat object of summary.json that starts
// with `opening`, or UINT64_MAX.
uint64_t field(const std::string& summary, const std::string& opening, const std::string& key) {
  const size_t at = summary.find(opening);
  if (at == std::string::npos) return UINT64_MAX;
  const size_t end = summary.find('}', at);
  const size_t k = summary.find("\"" + key + "\": ", at);
  if (k == std::string::npos || k > end) return UINT64_MAX;
  return std::stoull(summary.substr(k + key.size() + 4));
}

// One counter of summary.json's analytics object of switch `name` (the
// summary writes one switch per line).
uint64_t counter(const std::string& summary, const std::string& name, const std::string& key) {
  return field(summary, "{\"name\": \"" + name + "\", \"domain\"", key);
}

// A port's counter in summary.json's "ports" list (one port per line).
uint64_t port_counter(const std::string& summary, const std::string& node, int port, const std::string& key) {
  return field(summary, "{\"node\": \"" + node + "\", \"port\": " + std::to_string(port) + ",", key);
}

struct RunOut {
  std::string dir;
  Result r;
  Csv flows, report;
  std::string summary;
};

RunOut run(const std::string& config, const std::string& args) {
  RunOut x;
  x.dir = temp_dir();
  x.r = clitest::rocesim("run " + config + " --out " + x.dir + "/out --quiet " + args);
  x.flows = parse_csv(slurp(x.dir + "/out/flows.csv"));
  x.report = parse_csv(slurp(x.dir + "/out/flow_report.csv"));
  x.summary = slurp(x.dir + "/out/summary.json");
  return x;
}

}  // namespace

// The collector's flows with loss are exactly the flows whose receiving NIC
// sent NAKs, with the NICs' counts per direction: c2s (the data) as
// flows.csv naks_sent, s2c none (the client receives no data, so its NIC
// sends no NAK). Over several seeds, one of which loses a NAK after the
// analysing switch (the sender's naks_received below the receiver's
// naks_sent): the receiver's leaf saw it, so it is still counted
// (docs/analytics.md).
TEST(AnalyticsRun, FlowsWithLossAreTheFlowsWhoseReceiversSentNaksWithTheirCounts) {
  uint64_t lost_naks = 0, lossy_flows = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RunOut x = run(src_dir() + kScenario, "--seed " + std::to_string(seed));
    ASSERT_EQ(x.r.rc, 0) << x.r.err;
    const std::map<FlowKey, size_t> rep = report_rows(x.report);
    ASSERT_EQ(x.flows.rows.size(), 16u);
    EXPECT_EQ(rep.size(), x.flows.rows.size()) << "every flow is tracked somewhere";
    for (size_t i = 0; i < x.flows.rows.size(); ++i) {
      SCOPED_TRACE("flow " + x.flows.at(i, "flow_id"));
      ASSERT_EQ(x.flows.at(i, "completed"), "1");
      const auto it = rep.find(key_of(x.flows, i));
      ASSERT_NE(it, rep.end());
      const uint64_t sent = std::stoull(x.flows.at(i, "naks_sent"));
      EXPECT_EQ(std::stoull(x.report.at(it->second, "c2s_naks")), sent);
      EXPECT_EQ(x.report.at(it->second, "s2c_naks"), "0");
      EXPECT_EQ(x.report.at(it->second, "c2s_nak_switches").empty(), sent == 0);
      lossy_flows += sent > 0;
      lost_naks += sent - std::stoull(x.flows.at(i, "naks_received"));
    }
    if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
  }
  EXPECT_GT(lossy_flows, 12u) << "the lossy cable made losses";
  EXPECT_GT(lost_naks, 0u) << "no seed lost a NAK after the receiver's leaf: that case is not exercised";
}

// The collector rebuilds each direction's path from the switches' ingress
// ports alone; paths.csv records what each switch did with the frames
// (tb/sim/paths.h, independent of analytics). Every tracked flow's c2s path
// (client = the sender) is the sender host, the switches of its data (`fwd`)
// rows in hop order, and the receiver; the s2c path those of its ACKs
// (`rev`). The scenario hashes symmetrically with one seed and every frame
// of a connection carries one UDP source port, so the CM MADs take the
// data's switches too (each spine sees the setup of what it carries: the
// paths are complete). With the asymmetric hash (the default) the two
// directions and so REQ and REP part at the leaves, and some spine sees a
// REP without its REQ: such a flow's path is incomplete at the collector,
// the case the seed article excludes outside M-LAG.
TEST(AnalyticsRun, ReconstructedPathsArePathsCsvForEveryTrackedFlow) {
  for (int seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RunOut x = run(src_dir() + kScenario, "--seed " + std::to_string(seed));
    ASSERT_EQ(x.r.rc, 0) << x.r.err;
    const Csv paths = parse_csv(slurp(x.dir + "/out/paths.csv"));
    // (flow id, dir) -> switch names by hop, one row per hop (static hashing moves nothing).
    std::map<std::pair<std::string, std::string>, std::map<int, std::string>> hops;
    for (size_t r = 0; r < paths.rows.size(); ++r) {
      auto& h = hops[{paths.at(r, "flow_id"), paths.at(r, "dir")}];
      const int hop = std::stoi(paths.at(r, "hop"));
      ASSERT_EQ(h.count(hop), 0u) << "flow " << paths.at(r, "flow_id") << " moved at hop " << hop;
      h[hop] = paths.at(r, "switch");
    }
    auto chain = [&](const std::string& id, const std::string& dir, const std::string& from, const std::string& to) {
      std::string s = from;
      int next = 0;
      for (const auto& [hop, sw] : hops[{id, dir}]) {
        EXPECT_EQ(hop, next++) << id << " " << dir;
        s += ">" + sw;
      }
      return s + ">" + to;
    };
    const std::map<FlowKey, size_t> rep = report_rows(x.report);
    ASSERT_EQ(rep.size(), 16u);
    for (size_t i = 0; i < x.flows.rows.size(); ++i) {
      const std::string id = x.flows.at(i, "flow_id"), src = x.flows.at(i, "src"), dst = x.flows.at(i, "dst");
      SCOPED_TRACE("flow " + id);
      const auto it = rep.find(key_of(x.flows, i));
      ASSERT_NE(it, rep.end());
      const std::string c2s = chain(id, "fwd", src, dst), s2c = chain(id, "rev", dst, src);
      EXPECT_EQ(std::count(c2s.begin(), c2s.end(), '>'), 4) << c2s << ": three switches between leaves";
      EXPECT_EQ(x.report.at(it->second, "c2s_path"), c2s);
      EXPECT_EQ(x.report.at(it->second, "s2c_path"), s2c);
      // The setup went the data's way: the REQ/RTU as the data, the REP as the ACKs.
      EXPECT_EQ(chain(id, "cm_fwd", src, dst), c2s);
      EXPECT_EQ(chain(id, "cm_rev", dst, src), s2c);
      EXPECT_EQ(x.report.at(it->second, "switches"), "3");
    }
    if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
  }
  const RunOut a = run(src_dir() + kScenario, "--set switch.ecmp.symmetric=false");
  ASSERT_EQ(a.r.rc, 0) << a.r.err;
  size_t incomplete = 0;
  for (size_t r = 0; r < a.report.rows.size(); ++r) incomplete += a.report.at(r, "c2s_path").back() == '?';
  EXPECT_GT(incomplete, 0u) << "asymmetric paths left every spine's view whole: the case above is not shown";
  EXPECT_GT(counter(a.summary, "spine0", "rep_without_req") + counter(a.summary, "spine1", "rep_without_req"), 0u);
  if (!HasFailure()) std::system(("rm -rf " + a.dir).c_str());
}

// The collector's RTT of each flow's data (c2s, at the sender's leaf) is the
// NIC's less what the leaf cannot see: the request's and the ACK's time on
// the host cable and the leaf's forwarding of the ACK to the host. From
// first principles (docs/fidelity.md's switch timing): request frame (MTU
// 1024 payload + 66 B of Ethernet, 802.1Q, IPv4, UDP, BTH, ICRC and FCS) and
// ACK frame (70 B) plus 8 B preamble each at the host rate (25 Gbps), the
// 2 m host cable (5 ns/m) each way, and the ACK's buffer write (1 cycle),
// egress (6) and read (1) cycles of 1 ns. Within 5 % (the bound;
// the NIC averages every sample, the switch its last 8 per record).
TEST(AnalyticsRun, RttAtTheSendersLeafIsTheNicsLessTheHostLink) {
  const RunOut x = run(src_dir() + kScenario, "");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  const double rate = 25e9, ps = 1e12;
  const double offset_ns = ((8 + 1090) * 8 / rate + (8 + 70) * 8 / rate) * 1e9 + 2 * 2 * 5000 / ps * 1e9 + 8;
  const std::map<FlowKey, size_t> rep = report_rows(x.report);
  size_t compared = 0;
  for (size_t i = 0; i < x.flows.rows.size(); ++i) {
    SCOPED_TRACE("flow " + x.flows.at(i, "flow_id"));
    const auto it = rep.find(key_of(x.flows, i));
    ASSERT_NE(it, rep.end());
    ASSERT_FALSE(x.flows.at(i, "rtt_avg_ns").empty());
    const double nic = std::stod(x.flows.at(i, "rtt_avg_ns"));
    ASSERT_FALSE(x.report.at(it->second, "c2s_rtt_avg_ns").empty());
    const double sw = std::stod(x.report.at(it->second, "c2s_rtt_avg_ns"));
    // The sender's leaf: leaf<h / 4> (4 hosts per leaf).
    EXPECT_EQ(x.report.at(it->second, "c2s_rtt_switch"),
              "leaf" + std::to_string(std::stoul(x.flows.at(i, "src").substr(1)) / 4));
    EXPECT_NEAR(sw, nic - offset_ns, 0.05 * (nic - offset_ns)) << "NIC " << nic << " ns";
    EXPECT_TRUE(x.report.at(it->second, "s2c_rtt_avg_ns").empty()) << "no requests from the server";
    ++compared;
  }
  EXPECT_EQ(compared, 16u);
  if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
}

// enable_at: connections set up before it are not tracked, their packets
// seen afterwards are counted as untracked; connections set up after it are
// tracked. Half the flows start at 0 (set up within a few us), half at
// 150 us; analytics starts at 100 us, while the first half still sends.
TEST(AnalyticsRun, FlowsSetUpBeforeEnableAtAreNotTrackedAndCounted) {
  const std::string dir = temp_dir();
  std::string s = slurp(src_dir() + kScenario);
  s = s.substr(0, s.find("flows:")) + "flows:\n";
  for (int i = 0; i < 16; ++i)
    s += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string((i + 8) % 16) +
         ", size: 64KiB, messages: 4, rate: 5Gbps, start: " + (i % 2 ? "150us" : "0us") + "}\n";
  write_file(dir + "/s.yaml", s);
  const RunOut x = run(dir + "/s.yaml", "--set switch.analytics.enable_at=100us --set links.lossy=[]");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  const std::map<FlowKey, size_t> rep = report_rows(x.report);
  for (size_t i = 0; i < x.flows.rows.size(); ++i) {
    const bool early = std::stoul(x.flows.at(i, "flow_id")) % 2 == 0;
    ASSERT_LT(std::stod(x.flows.at(i, "setup_done_ns")), early ? 100000.0 : 1e12);
    if (early) {
      ASSERT_GT(std::stod(x.flows.at(i, "finish_ns")), 100000.0) << "still sending at enable_at";
    }
    EXPECT_EQ(rep.count(key_of(x.flows, i)), early ? 0u : 1u) << "flow " << x.flows.at(i, "flow_id");
  }
  // Every leaf carries early flows' packets after 100 us (each sends and receives one).
  for (int l = 0; l < 4; ++l) EXPECT_GT(counter(x.summary, "leaf" + std::to_string(l), "untracked_packets"), 0u);
  // Without enable_at the leaves track every packet (the CM and the data of a
  // connection cross them both ways; the spines may see only part of it).
  const RunOut y = run(dir + "/s.yaml", "--set links.lossy=[]");
  ASSERT_EQ(y.r.rc, 0) << y.r.err;
  for (int l = 0; l < 4; ++l) EXPECT_EQ(counter(y.summary, "leaf" + std::to_string(l), "untracked_packets"), 0u);
  EXPECT_EQ(report_rows(y.report).size(), 16u);
  if (!HasFailure()) std::system(("rm -rf " + dir + " " + x.dir + " " + y.dir).c_str());
}

// A table smaller than the flows a switch sees tracks exactly its capacity
// and counts the rest: each leaf carries 8 connections (4 hosts sending, 4
// receiving), its table holds 3 and nothing ages out before the end.
TEST(AnalyticsRun, TableSmallerThanTheFlowsTracksExactlyItsCapacity) {
  const RunOut x = run(src_dir() + kScenario,
                    "--set links.lossy=[] --set switch.analytics.table_capacity=3 "
                    "--set switch.analytics.inactive_timeout=1s --set switch.analytics.active_timeout=1s");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  std::map<uint32_t, std::set<FlowKey>> by_domain;  // flows each switch exported, from the JSON lines
  std::istringstream in(slurp(x.dir + "/out/flow_records.jsonl"));
  for (std::string line; std::getline(in, line);) {
    auto field = [&](const std::string& k) {
      const size_t a = line.find("\"" + k + "\":") + k.size() + 3;
      const size_t b = line.find_first_of(",}", a);
      std::string v = line.substr(a, b - a);
      if (!v.empty() && v[0] == '"') v = v.substr(1, v.size() - 2);
      return v;
    };
    by_domain[static_cast<uint32_t>(std::stoul(field("domain")))].insert(
        {field("server_ip"), field("client_ip"), field("client_qp"), field("server_qp")});
  }
  for (int l = 0; l < 4; ++l) {
    const std::string leaf = "leaf" + std::to_string(l);
    SCOPED_TRACE(leaf);
    // Connections through the leaf: flows.csv's flows with an end under it.
    uint64_t through = 0;
    for (size_t i = 0; i < x.flows.rows.size(); ++i)
      through += std::stoul(x.flows.at(i, "src").substr(1)) / 4 == uint64_t(l) ||
                 std::stoul(x.flows.at(i, "dst").substr(1)) / 4 == uint64_t(l);
    ASSERT_EQ(through, 8u);
    EXPECT_EQ(counter(x.summary, leaf, "flows_created"), 3u);
    EXPECT_EQ(counter(x.summary, leaf, "setups_not_tracked"), through - 3);
    EXPECT_GT(counter(x.summary, leaf, "untracked_packets"), 0u) << "the others' packets";
    const uint64_t domain = counter(x.summary, leaf, "domain");
    EXPECT_EQ(by_domain[static_cast<uint32_t>(domain)].size(), 3u);
  }
  if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
}

// Rate limits: a token bucket of rate r and depth b, full at the start,
// passes at most b + r * T items in T. With r = 1/s and a run far shorter
// than 1 s, r * T < 1: exactly min(n, b) of n items pass. n comes from a run
// without the limit: the mirrored frames (selection does not depend on the
// capacity) and the records generated (an export drop restarts the flow's
// interval all the same), per switch.
TEST(AnalyticsRun, MirrorAndExportRateLimitsDropWhatExceedsThem) {
  const RunOut base = run(src_dir() + kScenario, "--set links.lossy=[]");
  ASSERT_EQ(base.r.rc, 0) << base.r.err;
  const std::vector<std::string> sw{"leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"};
  const uint64_t b = 40;
  const RunOut cap = run(src_dir() + kScenario, "--set links.lossy=[] --set switch.analytics.capacity_pps=1 "
                                             "--set switch.analytics.capacity_burst=" + std::to_string(b));
  ASSERT_EQ(cap.r.rc, 0) << cap.r.err;
  for (const std::string& s : sw) {
    SCOPED_TRACE(s);
    const uint64_t n = counter(base.summary, s, "mirrored");
    ASSERT_GT(n, b);
    EXPECT_EQ(counter(base.summary, s, "capacity_dropped"), 0u);
    EXPECT_EQ(counter(cap.summary, s, "mirrored"), n);
    EXPECT_EQ(counter(cap.summary, s, "capacity_dropped"), n - b);
  }
  const uint64_t e = 2;
  const RunOut ex = run(src_dir() + kScenario, "--set links.lossy=[] --set switch.analytics.export_rps=1 "
                                            "--set switch.analytics.export_burst=" + std::to_string(e));
  ASSERT_EQ(ex.r.rc, 0) << ex.r.err;
  uint64_t lines_expected = 0;
  for (const std::string& s : sw) {
    SCOPED_TRACE(s);
    const uint64_t n = counter(base.summary, s, "records");
    ASSERT_GT(n, e);
    EXPECT_EQ(counter(ex.summary, s, "records"), n);
    EXPECT_EQ(counter(ex.summary, s, "records_exported"), e);
    EXPECT_EQ(counter(ex.summary, s, "records_dropped"), n - e);
    lines_expected += e;
  }
  // The file holds the exported records only.
  uint64_t lines = 0;
  std::istringstream in(slurp(ex.dir + "/out/flow_records.jsonl"));
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, lines_expected);
  if (!HasFailure()) std::system(("rm -rf " + base.dir + " " + cap.dir + " " + ex.dir).c_str());
}

// The run's IPFIX file decodes in tshark with no malformed or expert
// warning, every record equal to its JSON line (the block test's checker).
TEST(AnalyticsRun, TsharkDecodesTheRunsIpfixFileAsItsJsonLines) {
  if (sh("command -v tshark").rc != 0) GTEST_SKIP() << "tshark is not installed: IPFIX decode not checked";
  const RunOut x = run(src_dir() + kScenario, "");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  const rocesim::analytics::test::IpfixChecked n = rocesim::analytics::test::expect_ipfix_equals_jsonl(
      x.dir + "/out/flow_records.jsonl", x.dir + "/out/flow_records.ipfix");
  EXPECT_GT(n.records, 50u);
  EXPECT_GT(n.naks, 2u);
  EXPECT_GT(n.rtt, 20u);
  if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
}

// Performance mode: a rule (h0 -> h8, the QP of h0's flow at h8) selects
// that flow and its return direction, nothing else; only analysed ports
// mirror: with the leaves' host ports off, only the spines track anything.
TEST(AnalyticsRun, PerformanceRulesAndPortsSelectWhatIsAnalysed) {
  const RunOut base = run(src_dir() + kScenario, "--set links.lossy=[]");
  ASSERT_EQ(base.r.rc, 0) << base.r.err;
  ASSERT_EQ(base.flows.at(0, "src"), "h0");
  ASSERT_EQ(base.flows.at(0, "dst"), "h8");
  const RunOut x = run(src_dir() + kScenario, "--set links.lossy=[] --set switch.analytics.mode=performance "
                                              "--set 'switch.analytics.rules=[{src: " + ip_of("h0") + "/32, dst: " +
                                                  ip_of("h8") + "/32, qp: " + base.flows.at(0, "dst_qp") + "}]'");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  // Flow 0, and no flow between other hosts. (Flow 8, h8 -> h0, may be set
  // up too: its REQ matches the return rule and its REP the forward rule by
  // addresses, as analyzer.h says CM MADs are matched.)
  const std::map<FlowKey, size_t> rep = report_rows(x.report);
  ASSERT_EQ(rep.count(key_of(x.flows, 0)), 1u);
  for (const auto& [k, row] : rep) {
    const std::set<std::string> ends{std::get<0>(k), std::get<1>(k)};
    EXPECT_EQ(ends, (std::set<std::string>{ip_of("h0"), ip_of("h8")}));
  }
  // The flow's packets both ways, as loss mode counted them at its leaves.
  const std::map<FlowKey, size_t> all = report_rows(base.report);
  const size_t i = rep.at(key_of(x.flows, 0)), j = all.at(key_of(base.flows, 0));
  EXPECT_EQ(x.report.at(i, "c2s_packets"), base.report.at(j, "c2s_packets"));
  EXPECT_EQ(x.report.at(i, "s2c_packets"), base.report.at(j, "s2c_packets"));
  // Ports 0..3 only: a leaf's host ports (its uplinks are 4 and 5), every
  // port of a spine (it has 4). A leaf then sees the REQs and RTUs but not
  // the REPs, which come from the spines: it tracks nothing. The spines
  // track what they tracked with every port analysed.
  const RunOut p = run(src_dir() + kScenario, "--set links.lossy=[] --set 'switch.analytics.ports=[0, 1, 2, 3]'");
  ASSERT_EQ(p.r.rc, 0) << p.r.err;
  for (int l = 0; l < 4; ++l) {
    const std::string leaf = "leaf" + std::to_string(l);
    EXPECT_EQ(counter(p.summary, leaf, "flows_created"), 0u) << leaf;
    EXPECT_GT(counter(p.summary, leaf, "rtu_without_rep"), 0u) << leaf;
    EXPECT_GT(counter(p.summary, leaf, "not_selected"), 0u) << leaf;
  }
  EXPECT_GT(counter(base.summary, "spine0", "flows_created") + counter(base.summary, "spine1", "flows_created"), 0u);
  for (const char* sp : {"spine0", "spine1"}) {
    EXPECT_EQ(counter(p.summary, sp, "flows_created"), counter(base.summary, sp, "flows_created")) << sp;
    EXPECT_EQ(counter(p.summary, sp, "not_selected"), 0u) << sp;
  }
  if (!HasFailure()) std::system(("rm -rf " + base.dir + " " + x.dir + " " + p.dir).c_str());
}

// Nothing is written when analytics is off; same seed, same bytes when on.
TEST(AnalyticsRun, OffWritesNothingAndOnIsDeterministic) {
  const RunOut off = run(src_dir() + kScenario, "--set switch.analytics.enabled=false");
  ASSERT_EQ(off.r.rc, 0) << off.r.err;
  for (const char* f : {"flow_records.jsonl", "flow_records.ipfix", "flow_report.csv"})
    EXPECT_FALSE(exists(off.dir + "/out/" + f)) << f;
  EXPECT_EQ(off.summary.find("\"analytics\""), std::string::npos);
  EXPECT_FALSE(off.flows.has("naks_sent"));
  const RunOut a = run(src_dir() + kScenario, ""), b = run(src_dir() + kScenario, "");
  ASSERT_EQ(a.r.rc, 0) << a.r.err;
  for (const char* f : {"flow_records.jsonl", "flow_records.ipfix", "flow_report.csv", "flows.csv"})
    EXPECT_EQ(slurp(a.dir + "/out/" + f), slurp(b.dir + "/out/" + f)) << f;
  EXPECT_EQ(strip_wall(a.summary), strip_wall(b.summary));
  if (!HasFailure()) std::system(("rm -rf " + off.dir + " " + a.dir + " " + b.dir).c_str());
}

// Bad switch.analytics values: FILE:LINE:COL and the key, exit 2, no output.
TEST(AnalyticsRun, BadValuesAreRefusedWithTheirPlace) {
  const std::string dir = temp_dir();
  std::string base = slurp(src_dir() + kScenario);
  const std::string at = "  analytics:\n    enabled: true\n";
  const size_t mode = base.find("    mode: loss\n");
  ASSERT_NE(mode, std::string::npos);
  base.erase(mode, std::string("    mode: loss\n").size());  // the cases give their own
  ASSERT_NE(base.find(at), std::string::npos);
  struct Case {
    std::string insert, key, says;
  } cases[] = {
      {"    rules: [{src: 10.0.0.0/24}]\n", "switch.analytics.rules", "mode performance"},
      {"    mode: performance\n", "switch.analytics.rules", "at least one"},
      {"    mode: performance\n    rules: [{src: 10.0.0.0/33}]\n", "switch.analytics.rules[0].src", "IPv4 prefix"},
      {"    mode: performance\n    rules: [{dst: 10.0.0.1, qp: 16777216}]\n", "switch.analytics.rules[0].qp", ""},
      {"    ports: [0, 99]\n", "switch.analytics.ports", "port 99"},
      {"    ports: some\n", "switch.analytics.ports", "all"},
      {"    table_capacity: 0\n", "switch.analytics.table_capacity", ""},
      {"    scan_interval: 0s\n", "switch.analytics.scan_interval", ""},
      {"    mode: lossy\n", "switch.analytics.mode", ""},
      {"    colour: blue\n", "switch.analytics.colour", "unknown key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.insert);
    std::string s = base;
    s.insert(s.find(at) + at.size(), c.insert);
    write_file(dir + "/s.yaml", s);
    const Result r = clitest::rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("s.yaml:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'" + c.key + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/out")) << "nothing written";
  }
  // links.lossy: a cable twice, a node that is not there.
  for (const std::string& l : {std::string("[{link: spine0:2, loss: 0.1}, {link: leaf2:4, loss: 0.1}]"),
                               std::string("[{link: spine9:0, loss: 0.1}]"), std::string("[{link: spine0:2}]")}) {
    SCOPED_TRACE(l);
    std::string s = base;
    const size_t p = s.find("  lossy: ");
    s = s.substr(0, p) + "  lossy: " + l + s.substr(s.find('\n', p));
    write_file(dir + "/s.yaml", s);
    const Result r = clitest::rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("key 'links.lossy[") , std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/out"));
  }
  // M-LAG needs pairs of leaves; the peer link's speed has a unit.
  for (const auto& [set, key, says] : {std::tuple<std::string, std::string, std::string>{
                                           "topology.leaves=3", "topology.leaves", "must be even"},
                                       {"topology.peer_rate=5", "topology.peer_rate", "unit"}}) {
    SCOPED_TRACE(set);
    const Result r = clitest::rocesim("run " + src_dir() + "/configs/scenarios/analytics_mlag.yaml --set " + set +
                                      " --out " + dir + "/out --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("'" + key + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/out"));
  }
  write_file(dir + "/m.yaml", "name: m\ntopology:\n  kind: leaf_spine\n  leaves: 5\n  mlag: true\nflows: []\n");
  const Result m = clitest::rocesim("run " + dir + "/m.yaml --out " + dir + "/out --quiet");
  EXPECT_EQ(m.rc, 2) << m.err;
  EXPECT_NE(m.err.find("m.yaml:4:11: key 'topology.leaves'"), std::string::npos) << m.err;
  // Analytics needs switches.
  write_file(dir + "/d.yaml", "name: d\nswitch: {analytics: {enabled: true}}\nflows: [{src: h0, dst: h1, size: 1KiB}]\n");
  const Result r = clitest::rocesim("run " + dir + "/d.yaml --out " + dir + "/out --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("'switch.analytics.enabled'"), std::string::npos) << r.err;
  if (!HasFailure()) std::system(("rm -rf " + dir).c_str());
}

// M-LAG (the seed article's figure 3, docs/analytics.md "M-LAG"): leaves
// leaf0+leaf1 and leaf2+leaf3 are pairs, h0..h3 dual-homed to the first,
// h4..h7 to the second; each pair member's peer link is its port 6 (4 host
// ports, 2 spines). paths.csv (tb/sim/paths.h, independent of analytics)
// says which member carried a flow's data (fwd) and which its ACKs (rev) in
// each pair. For every flow and pair:
//  - both members hold the flow (records for its key from both domains);
//  - the data member saw the data itself, the ACK member the ACKs; where
//    they differ (the directions cross different members) the data member
//    saw no ACK itself yet has RTT samples: the ACKs its peer forwarded;
//  - NAKs are counted once per pair: the pair's c2s NAKs (both members'
//    records summed) equal the receiving NIC's naks_sent in the receiver's
//    pair (every NAK crosses it: host links lose nothing) and the sending
//    NIC's naks_received in the sender's pair (what survived the lossy
//    spine cable); s2c none (the client receives no data).
// And the peer links carry the synchronization frames and nothing else:
// each member's peer-port tx bytes equal the bytes of the frames its
// analyzer sent, which from the frame layout are 64 B per setup (14 B
// header + 16 B + 16 B, padded to 60, + FCS), 100 B per forwarded ACK
// (14 + 16 + a 66 B ACK: Ethernet, 802.1Q, IPv4, UDP, BTH, AETH, ICRC; +
// FCS) and 360 B per forwarded REP (14 + 16 + 326 B: ... BTH, DETH, the
// 256 B MAD, ICRC; + FCS).
TEST(AnalyticsRun, MlagPairsTrackBothDirectionsOnBothMembersAndCountEachNakOnce) {
  const std::string scenario = src_dir() + "/configs/scenarios/analytics_mlag.yaml";
  constexpr uint32_t kLeaf0 = 8;  // node of leaf0: after the 8 hosts (the IPFIX domain)
  uint64_t crossed = 0, crossed_rtt = 0, naks = 0, lost_naks = 0;
  for (int seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RunOut x = run(scenario, "--seed " + std::to_string(seed));
    ASSERT_EQ(x.r.rc, 0) << x.r.err;
    ASSERT_EQ(x.flows.rows.size(), 8u);
    std::ifstream in(x.dir + "/out/flow_records.jsonl");
    std::vector<rocesim::analytics::FlowRecord> recs;
    ASSERT_EQ(rocesim::collector::read_records(in, "flow_records.jsonl", recs), "");
    // (key, domain) -> the records' sums.
    struct Sum {
      uint64_t packets[2] = {}, data[2] = {}, naks[2] = {}, rtt[2] = {};
    };
    std::map<std::pair<FlowKey, uint32_t>, Sum> by;
    for (const auto& r : recs) {
      const FlowKey k{rocesim::topology::ip_to_string(r.server_ip), rocesim::topology::ip_to_string(r.client_ip),
                      std::to_string(r.client_qp), std::to_string(r.server_qp)};
      Sum& s = by[{k, r.domain_id}];
      for (int d = 0; d < 2; ++d) {
        s.packets[d] += r.dir[d].packets;
        s.data[d] += r.dir[d].data_packets;
        s.naks[d] += r.dir[d].naks;
        s.rtt[d] += r.dir[d].rtt_samples;
      }
    }
    const Csv paths = parse_csv(slurp(x.dir + "/out/paths.csv"));
    for (size_t i = 0; i < x.flows.rows.size(); ++i) {
      const std::string id = x.flows.at(i, "flow_id");
      SCOPED_TRACE("flow " + id);
      ASSERT_EQ(x.flows.at(i, "completed"), "1");
      const FlowKey key = key_of(x.flows, i);
      const uint32_t src_pair = std::stoul(x.flows.at(i, "src").substr(1)) / 4;
      const uint32_t dst_pair = std::stoul(x.flows.at(i, "dst").substr(1)) / 4;
      ASSERT_NE(src_pair, dst_pair);
      // The member of `pair` that paths.csv shows carrying the flow's `dir` frames.
      auto member = [&](const std::string& dir, uint32_t pair) {
        std::set<std::string> seen;
        for (size_t r = 0; r < paths.rows.size(); ++r) {
          const std::string sw = paths.at(r, "switch");
          if (paths.at(r, "flow_id") == id && paths.at(r, "dir") == dir && sw.rfind("leaf", 0) == 0 &&
              std::stoul(sw.substr(4)) / 2 == pair)
            seen.insert(sw);
        }
        EXPECT_EQ(seen.size(), 1u) << dir << " in pair " << pair;
        return seen.empty() ? UINT32_MAX : kLeaf0 + static_cast<uint32_t>(std::stoul(seen.begin()->substr(4)));
      };
      const uint64_t sent = std::stoull(x.flows.at(i, "naks_sent")), received = std::stoull(x.flows.at(i, "naks_received"));
      for (const uint32_t pair : {src_pair, dst_pair}) {
        SCOPED_TRACE("pair " + std::to_string(pair));
        const uint32_t data = member("fwd", pair), ack = member("rev", pair);
        const uint32_t a = kLeaf0 + 2 * pair, b = a + 1;
        ASSERT_TRUE(by.count(std::make_pair(key, a)) && by.count(std::make_pair(key, b))) << "tracked on both members";
        const Sum& D = by[std::make_pair(key, data)];
        const Sum& A = by[std::make_pair(key, ack)];
        const Sum& SA = by[std::make_pair(key, a)];
        const Sum& SB = by[std::make_pair(key, b)];
        EXPECT_GT(D.data[0], 0u);
        EXPECT_GT(A.packets[1], 0u);
        if (data != ack) {
          ++crossed;
          EXPECT_EQ(D.packets[1], 0u) << "the data member saw no ACK itself";
          EXPECT_EQ(A.packets[0], 0u) << "the ACK member saw no data itself";
          EXPECT_GT(D.rtt[0], 0u) << "RTT from the ACKs the peer forwarded";
          crossed_rtt += D.rtt[0] > 0;
        }
        EXPECT_EQ(SA.naks[0] + SB.naks[0], pair == dst_pair ? sent : received);
        EXPECT_EQ(SA.naks[1] + SB.naks[1], 0u);
      }
      naks += sent;
      lost_naks += sent - received;
    }
    // The NICs use both ports of their LAG (each QP one of them).
    uint64_t tx_port[2] = {};
    for (int h = 0; h < 8; ++h)
      for (int p = 0; p < 2; ++p) tx_port[p] += port_counter(x.summary, "h" + std::to_string(h), p, "tx_frames");
    EXPECT_GT(tx_port[0], 0u);
    EXPECT_GT(tx_port[1], 0u);
    for (int l = 0; l < 4; ++l) {
      const std::string leaf = "leaf" + std::to_string(l), peer = "leaf" + std::to_string(l ^ 1);
      SCOPED_TRACE(leaf);
      const uint64_t bytes = counter(x.summary, leaf, "sync_bytes_sent");
      EXPECT_EQ(bytes, 64 * counter(x.summary, leaf, "sync_setup_sent") + 100 * counter(x.summary, leaf, "sync_ack_sent") +
                           360 * counter(x.summary, leaf, "sync_rep_sent"));
      EXPECT_GT(counter(x.summary, leaf, "sync_setup_sent"), 0u);
      EXPECT_EQ(port_counter(x.summary, leaf, 6, "tx_bytes"), bytes);
      EXPECT_EQ(port_counter(x.summary, leaf, 6, "tx_frames"), counter(x.summary, leaf, "sync_frames_sent"));
      EXPECT_EQ(port_counter(x.summary, leaf, 6, "rx_bytes"), counter(x.summary, peer, "sync_bytes_sent"));
      // Admitted by the analyzer: all but those still in the peer's receive
      // pipeline when the run stopped (its last flow done).
      const uint64_t got = counter(x.summary, leaf, "sync_received"), sent = counter(x.summary, peer, "sync_frames_sent");
      EXPECT_LE(got, sent);
      EXPECT_GE(got + 2, sent);
      EXPECT_EQ(counter(x.summary, leaf, "sync_bad"), 0u);
      EXPECT_EQ(counter(x.summary, leaf, "peer_link_frames"), 0u) << "only synchronization crosses the peer link";
    }
    if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
  }
  std::printf("M-LAG: %llu flow-pairs crossed, %llu of them with forwarded-ACK RTT; %llu NAKs, %llu lost\n",
              (unsigned long long)crossed, (unsigned long long)crossed_rtt, (unsigned long long)naks,
              (unsigned long long)lost_naks);
  EXPECT_GT(crossed, 8u) << "few flows crossed different members: the case is not exercised";
  EXPECT_GT(naks, 0u) << "the lossy cable made no loss";
  EXPECT_GT(lost_naks, 0u) << "no NAK was lost between the pairs: the sender's-pair count is not distinguished";
}

// On the wire, read by an independent parser: tshark sees on leaf0's peer
// port (6) only EtherType 0x88B5 frames, between leaf0's and leaf1's port
// MACs (topology.h: 0x028000000000 | node << 16 | port; leaf0 is node 8),
// as many of each size (without FCS: 356 B REP, 60 B setup, 96 B ACK; the
// layout in docs/analytics.md) as leaf0's analyzer says it sent.
TEST(AnalyticsRun, MlagSyncFramesOnTheWireAreWhatTheAnalyzerSent) {
  if (sh("command -v tshark").rc != 0) GTEST_SKIP() << "tshark is not installed";
  const RunOut x = run(src_dir() + "/configs/scenarios/analytics_mlag.yaml", "--pcap leaf0:6");
  ASSERT_EQ(x.r.rc, 0) << x.r.err;
  const Result t = sh("tshark -r " + x.dir + "/out/pcap/leaf0-p6-tx.pcap -T fields -e frame.len -e eth.type -e eth.src -e eth.dst 2>/dev/null");
  ASSERT_EQ(t.rc, 0);
  std::map<std::string, uint64_t> by_len;
  std::istringstream in(t.out);
  std::string len, type, src, dst;
  uint64_t frames = 0;
  while (in >> len >> type >> src >> dst) {
    ++frames;
    ++by_len[len];
    EXPECT_EQ(type, "0x88b5");
    EXPECT_EQ(src, "02:80:00:08:00:06");
    EXPECT_EQ(dst, "02:80:00:09:00:06");
  }
  EXPECT_EQ(frames, counter(x.summary, "leaf0", "sync_frames_sent"));
  EXPECT_EQ(by_len["356"], counter(x.summary, "leaf0", "sync_rep_sent"));
  EXPECT_EQ(by_len["60"], counter(x.summary, "leaf0", "sync_setup_sent"));
  EXPECT_EQ(by_len["96"], counter(x.summary, "leaf0", "sync_ack_sent"));
  EXPECT_GT(by_len["96"], 0u);
  if (!HasFailure()) std::system(("rm -rf " + x.dir).c_str());
}

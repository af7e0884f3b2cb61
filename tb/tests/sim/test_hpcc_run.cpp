// An HPCC set-up run unchanged (docs/migration-hpcc.md): a two-tier HPCC
// topology file (switches numbered first, mixed rates and delays) and an HPCC
// flow file that names hosts by those node ids. fct.txt must match flows.csv
// line for line, with the addresses from HPCC's rule (computed here from the
// octets); flows.hpcc.txt must give the flow file back; the links must carry
// the file's delays and error rates. Bad files: exit 2, FILE:LINE:COL, no output.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "cli_util.h"

namespace {

using namespace clitest;

// The fabric by HPCC node id: leaves 0, 1, spines 2, 3, hosts 4..9 (4, 5, 6
// on leaf 0, 7, 8, 9 on leaf 1). Host 5 runs at 10 Gbps, the rest at 25.
constexpr uint32_t kNodes = 10;
bool is_switch(uint32_t id) { return id < 4; }
struct TLink {
  uint32_t a, b;
  const char* rate;
  const char* delay;
  uint64_t delay_ps;  // the delay text worked out by hand
  const char* error_rate;
};
const std::vector<TLink> kLinks = {
    {0, 2, "100Gbps", "1us", 1000000, "0"},       {0, 3, "100Gbps", "0.0015ms", 1500000, "0"},
    {1, 2, "100Gbps", "1000ns", 1000000, "0"},    {1, 3, "40Gbps", "2us", 2000000, "0"},
    {4, 0, "25Gbps", "0.001ms", 1000000, "0"},    {5, 0, "10Gbps", "500ns", 500000, "0"},
    {6, 0, "25Gbps", "750000ps", 750000, "0"},    {7, 1, "25Gbps", "1us", 1000000, "0"},
    {8, 1, "25Gbps", "0.002ms", 2000000, "0"},    {9, 1, "25Gbps", "1us", 1000000, "0"},
};

std::string topology_text(const std::vector<TLink>& links) {
  std::string t = std::to_string(kNodes) + " 4 " + std::to_string(links.size()) + "\n0 1 2 3\n";
  for (const TLink& l : links)
    t += std::to_string(l.a) + " " + std::to_string(l.b) + " " + l.rate + " " + l.delay + " " + l.error_rate + "\n";
  return t;
}

// rocesim's name of node id (hpcc.h): hosts h<rank in id order>, switches sw<id>.
std::string name_of(uint32_t id) { return is_switch(id) ? "sw" + std::to_string(id) : "h" + std::to_string(id - 4); }

// HPCC's host address (third.cc, node_id_to_ip): 11.(id / 256).(id % 256).1.
uint32_t hpcc_ip(uint32_t id) { return 11u << 24 | (id / 256) << 16 | (id % 256) << 8 | 1u; }

struct TFlow {
  uint32_t src, dst, pg, dport;
  uint64_t size;
  const char* start;  // seconds, 9 decimals as rocesim writes them
};
// Ties in start time and several flows per source, so sport numbering and
// completion order are both exercised; dport 200 marks an incast class as in
// HPCC's analysis scripts.
const std::vector<TFlow> kFlows = {
    {4, 7, 3, 100, 200000, "2.000000000"}, {5, 8, 3, 100, 30000, "2.000000000"}, {7, 4, 3, 100, 1000, "2.000001000"},
    {8, 6, 3, 200, 20000, "2.000002000"},  {9, 6, 3, 200, 20000, "2.000002000"}, {4, 9, 3, 100, 50000, "2.000003000"},
    {4, 5, 3, 100, 4000, "2.000000500"},   {6, 9, 3, 100, 100000, "2.000004000"},
};

std::string flow_text() {
  std::string t = std::to_string(kFlows.size()) + "\n";
  for (const TFlow& f : kFlows)
    t += std::to_string(f.src) + " " + std::to_string(f.dst) + " " + std::to_string(f.pg) + " " +
         std::to_string(f.dport) + " " + std::to_string(f.size) + " " + f.start + "\n";
  return t;
}

uint64_t nearest_ns(uint64_t ps) { return (ps + 500) / 1000; }  // HPCC writes whole ns; half up

std::string scenario(const std::string& topo, const std::string& flows, const std::string& extra = "") {
  return "name: hpcc_run\nsim: {duration: 2010ms}\ntopology: {kind: hpcc, file: " + topo + "}\n" +
         "hosts: {transport: rc, cc: dcqcn}\ntraffic:\n  - {kind: flow_file, file: " + flows + "}\n" + extra;
}

TEST(HpccRun, FctTxtMatchesFlowsCsv) {
  const std::string dir = temp_dir();
  write_file(dir + "/topo.txt", topology_text(kLinks));
  write_file(dir + "/flow.txt", flow_text());
  write_file(dir + "/s.yaml", scenario("topo.txt", "flow.txt"));
  const Result r = rocesim("run -q " + dir + "/s.yaml --out " + dir + "/out");
  ASSERT_EQ(r.rc, 0) << r.err;

  const Csv flows = parse_csv(slurp(dir + "/out/flows.csv"));
  ASSERT_EQ(flows.rows.size(), kFlows.size());
  // flows.csv rows are the flow file's lines in order; hosts by rocesim's names.
  for (size_t i = 0; i < kFlows.size(); ++i) {
    EXPECT_EQ(flows.at(i, "src"), name_of(kFlows[i].src)) << i;
    EXPECT_EQ(flows.at(i, "dst"), name_of(kFlows[i].dst)) << i;
    EXPECT_EQ(flows.at(i, "completed"), "1") << i;
  }

  // sport: HPCC numbers each source's flows 10000, 10001, ... as they start
  // (file order among equal start times).
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> flow_of;  // (sip, dip, sport) -> flow
  {
    std::vector<size_t> order(kFlows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [](size_t a, size_t b) { return std::string(kFlows[a].start) < kFlows[b].start; });
    std::map<uint32_t, uint32_t> next;
    for (size_t i : order) {
      const uint32_t sport = 10000 + next[kFlows[i].src]++;
      flow_of[{hpcc_ip(kFlows[i].src), hpcc_ip(kFlows[i].dst), sport}] = i;
    }
  }

  // fct.txt: "%08x %08x %u %u %lu %lu %lu %lu" per completed flow, completion order.
  std::istringstream in(slurp(dir + "/out/fct.txt"));
  std::string line;
  std::set<size_t> seen;
  uint64_t last_finish_ps = 0;
  size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    unsigned sip = 0, dip = 0, sport = 0, dport = 0;
    unsigned long long size = 0, start = 0, fct = 0, standalone = 0;
    char tail = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%8x %8x %u %u %llu %llu %llu %llu%c", &sip, &dip, &sport, &dport, &size,
                          &start, &fct, &standalone, &tail),
              8)
        << line;
    char hex[20];
    std::snprintf(hex, sizeof hex, "%08x %08x ", sip, dip);
    EXPECT_EQ(line.substr(0, 18), hex) << "addresses as 8 hex digits: " << line;
    const auto it = flow_of.find({sip, dip, sport});
    ASSERT_NE(it, flow_of.end()) << "no flow with these addresses and sport: " << line;
    const size_t i = it->second;
    EXPECT_TRUE(seen.insert(i).second) << "flow " << i << " twice";
    EXPECT_EQ(dport, kFlows[i].dport) << line;
    EXPECT_EQ(size, kFlows[i].size) << line;
    EXPECT_EQ(std::to_string(size), flows.at(i, "size_bytes"));
    EXPECT_EQ(start, nearest_ns(ns_text_ps(flows.at(i, "start_ns")))) << line;
    EXPECT_EQ(fct, nearest_ns(ns_text_ps(flows.at(i, "fct_ns")))) << line;
    EXPECT_EQ(standalone, nearest_ns(ns_text_ps(flows.at(i, "ideal_fct_ns")))) << line;
    const uint64_t finish_ps = ns_text_ps(flows.at(i, "finish_ns"));
    EXPECT_GE(finish_ps, last_finish_ps) << "completion order: " << line;
    last_finish_ps = finish_ps;
  }
  EXPECT_EQ(lines, kFlows.size());

  // flows.hpcc.txt names hosts by the topology file's ids: the flow file back.
  EXPECT_EQ(slurp(dir + "/out/flows.hpcc.txt"), flow_text());

  // Every link has the file's delay (summary.json's links, named after both
  // ends and their ports; a node's ports follow the file's line order).
  const std::string summary = slurp(dir + "/out/summary.json");
  std::map<uint32_t, uint32_t> next_port;
  for (const TLink& l : kLinks) {
    const std::string name = "link_" + name_of(l.a) + "_" + std::to_string(next_port[l.a]++) + "_" + name_of(l.b) +
                             "_" + std::to_string(next_port[l.b]++);
    const size_t at = summary.find("\"name\": \"" + name + "\"");
    ASSERT_NE(at, std::string::npos) << name;
    const size_t d = summary.find("\"delay_ns\": ", at);
    ASSERT_NE(d, std::string::npos);
    EXPECT_EQ(ns_text_ps(summary.substr(d + 12, summary.find(',', d) - d - 12)), l.delay_ps) << name;
  }
  std::system(("rm -rf " + dir).c_str());
}

// A nonzero error_rate is that link's loss, both directions; the other links
// keep links.loss (0). Open-loop flows both ways over the lossy link: lost
// frames within 5 sigma of the binomial mean (the link's seed is fixed).
TEST(HpccRun, ErrorRateIsThatLinksLoss) {
  const std::string dir = temp_dir();
  write_file(dir + "/topo.txt", "3 1 2\n2\n0 2 25Gbps 1us 0.05\n1 2 25Gbps 1us 0\n");
  write_file(dir + "/flow.txt", "2\n0 1 3 100 400000 0.000001\n1 0 3 100 400000 0.000001\n");
  write_file(dir + "/s.yaml", "sim: {duration: 1ms}\ntopology: {kind: hpcc, file: topo.txt}\n"
                              "traffic:\n  - {kind: flow_file, file: flow.txt}\n");
  const Result r = rocesim("run -q " + dir + "/s.yaml --out " + dir + "/out");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/out/summary.json");
  auto field = [&](const std::string& link, const std::string& key) {
    const size_t at = s.find("\"name\": \"" + link + "\"");
    EXPECT_NE(at, std::string::npos) << link;
    const size_t k = s.find("\"" + key + "\": ", at);
    return std::stod(s.substr(k + key.size() + 4));
  };
  const double frames = field("link_h0_0_sw2_0", "frames_ab") + field("link_h0_0_sw2_0", "frames_ba");
  const double lost = field("link_h0_0_sw2_0", "lost");
  ASSERT_GT(frames, 500) << "both directions carry traffic";
  const double mean = 0.05 * frames, sigma = std::sqrt(frames * 0.05 * 0.95);
  EXPECT_NEAR(lost, mean, 5 * sigma) << lost << " of " << frames;
  EXPECT_EQ(field("link_h1_0_sw2_1", "lost"), 0) << "error_rate 0: links.loss (0)";
  std::system(("rm -rf " + dir).c_str());
}

TEST(HpccRun, BadFilesExitTwoWithFileLineColumnAndWriteNothing) {
  const std::string dir = temp_dir();
  write_file(dir + "/flow.txt", flow_text());
  struct Case {
    std::string topo, flows, want;
  };
  std::vector<TLink> bad = kLinks;
  bad[3].rate = "40Gbs";
  const std::vector<Case> cases = {
      // A typo in a rate: the topology file's line 6 (link 4), column 5.
      {topology_text(bad), flow_text(), dir + "/t.txt:6:5: key 'topology.file': rate: unknown unit 'Gbs'"},
      // A flow from a switch: the flow file's line 2, column 1.
      {topology_text(kLinks), "1\n0 7 3 100 1000 2.0\n",
       dir + "/f.txt:2:1: key 'traffic[0].file': src: node 0 is a switch, not a host"},
      {topology_text(kLinks), "1\n4 10 3 100 1000 2.0\n", dir + "/f.txt:2:3: key 'traffic[0].file': dst: node 10 out of range"},
  };
  for (const Case& c : cases) {
    write_file(dir + "/t.txt", c.topo);
    write_file(dir + "/f.txt", c.flows);
    write_file(dir + "/s.yaml", scenario("t.txt", "f.txt"));
    const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/out")) << "nothing written";
  }
  // No file, or kind hpcc without one: named at the key.
  write_file(dir + "/s.yaml", scenario("missing.txt", "flow.txt"));
  Result r = rocesim("validate " + dir + "/s.yaml");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("s.yaml:3:30: key 'topology.file': 'missing.txt': cannot open file"), std::string::npos) << r.err;
  write_file(dir + "/s.yaml", "topology: {kind: hpcc}\n");
  r = rocesim("validate " + dir + "/s.yaml");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("s.yaml:1:18: key 'topology.kind': kind hpcc needs `file`"), std::string::npos) << r.err;
  std::system(("rm -rf " + dir).c_str());
}

TEST(HpccRun, KeysTopologyShowsHpcc) {
  const Result r = rocesim("keys topology");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("`hpcc`"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HPCC ns-3 topology file"), std::string::npos) << r.out;
}

}  // namespace

// HPCC topology files (topology/hpcc.h): a two-tier fabric written by the test
// with mixed rates, delays and units is read back node by node, link by link,
// and its routes are checked against the test's own BFS (HPCC's rule, from
// third.cc's CalculateRoute: from every host, through switches only, every
// neighbour one hop closer is a next hop). Bad input: FILE:LINE:COL.
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config.h"
#include "topology/hpcc.h"
#include "topology/route_table.h"

namespace rocesim::topology {
namespace {

// One link as the test writes it: the text HPCC would read and what it means
// (bit/s and ps worked out by hand from the SI units).
struct TLink {
  uint32_t a, b;
  const char* rate;
  uint64_t bps;
  const char* delay;
  uint64_t ps;
  const char* error_rate;
  double loss;  // expected LinkSpec::loss (< 0: links.loss)
};

struct TFile {
  uint32_t nodes = 0;
  std::vector<uint32_t> switches;
  std::vector<TLink> links;
  std::string text() const {
    std::string t = std::to_string(nodes) + " " + std::to_string(switches.size()) + " " + std::to_string(links.size()) + "\n";
    for (size_t i = 0; i < switches.size(); ++i) t += (i ? " " : "") + std::to_string(switches[i]);
    t += "\n";
    for (const TLink& l : links)
      t += std::to_string(l.a) + " " + std::to_string(l.b) + " " + l.rate + " " + l.delay + " " + l.error_rate + "\n";
    return t;
  }
  bool is_switch(uint32_t id) const {
    for (uint32_t s : switches)
      if (s == id) return true;
    return false;
  }
};

// 3 leaves x 2 hosts, 2 spines; hosts 0..5 first (as HPCC's own files).
// Leaf l = id 6+l, spine s = id 9+s. Host links mix 25G/10G and units; one
// uplink runs at 40G and one carries an error rate.
TFile two_tier_hosts_first() {
  TFile f;
  f.nodes = 11;
  f.switches = {6, 7, 8, 9, 10};
  f.links = {
      {0, 6, "25Gbps", 25000000000ull, "0.001ms", 1000000, "0", -1},
      {1, 6, "10Gbps", 10000000000ull, "1500ns", 1500000, "0", -1},
      {2, 7, "25Gb/s", 25000000000ull, "2us", 2000000, "0", -1},
      {3, 7, "2.5Gbps", 2500000000ull, "0.0005ms", 500000, "0", -1},
      {4, 8, "25000Mbps", 25000000000ull, "750000ps", 750000, "0", -1},
      {5, 8, "1.25GBps", 10000000000ull, "0.000001s", 1000000, "0.001", 0.001},
      {6, 9, "100Gbps", 100000000000ull, "1us", 1000000, "0", -1},
      {6, 10, "100Gbps", 100000000000ull, "3us", 3000000, "0", -1},
      {7, 9, "40Gbps", 40000000000ull, "1us", 1000000, "0", -1},
      {7, 10, "100Gbps", 100000000000ull, "1us", 1000000, "0", -1},
      {8, 9, "100Gbps", 100000000000ull, "0.5us", 500000, "0", -1},
      {8, 10, "0.1Tbps", 100000000000ull, "1us", 1000000, "0", -1},
  };
  return f;
}

// The same kind of fabric with the switches numbered first and the link lines
// in no particular order: hosts are h<i> in id order whatever their ids, and
// ports follow the line order. Leaves 0, 1, spines 2, 3, hosts 4..7; one extra
// leaf-leaf link gives the leaves a one-hop path besides the two via spines.
TFile two_tier_switches_first() {
  TFile f;
  f.nodes = 8;
  f.switches = {3, 0, 2, 1};
  f.links = {
      {0, 2, "100Gbps", 100000000000ull, "1us", 1000000, "0", -1},
      {7, 1, "25Gbps", 25000000000ull, "600ns", 600000, "0", -1},
      {4, 0, "25Gbps", 25000000000ull, "600ns", 600000, "0", -1},
      {1, 3, "100Gbps", 100000000000ull, "1us", 1000000, "0", -1},
      {0, 3, "100Gbps", 100000000000ull, "2us", 2000000, "0", -1},
      {5, 0, "10Gbps", 10000000000ull, "1us", 1000000, "0", -1},
      {2, 1, "100Gbps", 100000000000ull, "1us", 1000000, "0", -1},
      {1, 6, "50Gbps", 50000000000ull, "1us", 1000000, "0", -1},
      {0, 1, "200Gbps", 200000000000ull, "5us", 5000000, "0", -1},
  };
  return f;
}

// The name the reader gives file id `id` (hpcc.h): h<rank among host ids>, sw<id>.
std::string name_of(const TFile& f, uint32_t id) {
  if (f.is_switch(id)) return "sw" + std::to_string(id);
  uint32_t rank = 0;
  for (uint32_t i = 0; i < id; ++i) rank += f.is_switch(i) ? 0 : 1;
  return "h" + std::to_string(rank);
}

// Checks nodes, links (ends, ports in line order, rate, delay, loss) and the
// route of every switch toward every host against the test's BFS.
void check(const TFile& f) {
  const Topology t = parse_hpcc_topology(f.text(), "t.txt", "topology.file");
  ASSERT_EQ(t.nodes.size(), f.nodes);
  ASSERT_EQ(t.switches.size(), f.switches.size());
  ASSERT_EQ(t.hosts.size(), f.nodes - f.switches.size());
  ASSERT_EQ(t.file_ids.size(), f.nodes);
  for (uint32_t id = 0; id < f.nodes; ++id) {
    const uint32_t n = t.find(name_of(f, id));
    ASSERT_NE(n, kNoNode) << name_of(f, id);
    EXPECT_EQ(t.file_ids[n], id);
    EXPECT_EQ(t.nodes[n].kind == Node::sw, f.is_switch(id)) << id;
  }
  // Hosts in id order: h<i> is the i-th host id.
  uint32_t prev = 0;
  for (uint32_t i = 0; i < t.hosts.size(); ++i) {
    const uint32_t id = t.file_ids[t.hosts[i]];
    if (i) {
      EXPECT_GT(id, prev);
    }
    prev = id;
    EXPECT_EQ(t.nodes[t.hosts[i]].name, "h" + std::to_string(i));
  }

  // Ports: a node's k-th link line is its port k.
  std::map<uint32_t, uint32_t> next_port;
  std::vector<std::pair<uint32_t, uint32_t>> port_of(f.links.size());  // (port at a, port at b)
  for (size_t i = 0; i < f.links.size(); ++i) port_of[i] = {next_port[f.links[i].a]++, next_port[f.links[i].b]++};
  ASSERT_EQ(t.links.size(), f.links.size());
  for (size_t i = 0; i < f.links.size(); ++i) {
    const TLink& w = f.links[i];
    const LinkSpec& l = t.links[i];
    EXPECT_EQ(t.nodes[l.a.node].name, name_of(f, w.a)) << "link " << i;
    EXPECT_EQ(t.nodes[l.b.node].name, name_of(f, w.b)) << "link " << i;
    EXPECT_EQ(l.a.port, port_of[i].first) << "link " << i;
    EXPECT_EQ(l.b.port, port_of[i].second) << "link " << i;
    EXPECT_EQ(l.rate_bps, w.bps) << "link " << i << " " << w.rate;
    EXPECT_EQ(l.delay_ps, w.ps) << "link " << i << " " << w.delay;
    EXPECT_EQ(cable_delay_ps(l, 5000), w.ps) << "the file's delay, whatever the cable length";
    EXPECT_DOUBLE_EQ(l.loss, w.loss) << "link " << i;
  }
  for (uint32_t id = 0; id < f.nodes; ++id) EXPECT_EQ(t.nodes[t.find(name_of(f, id))].ports, next_port[id]) << id;

  // Routes: BFS from every host over the test's own adjacency (by file id).
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> adj;  // id -> (neighbour, local port)
  for (size_t i = 0; i < f.links.size(); ++i) {
    adj[f.links[i].a].push_back({f.links[i].b, port_of[i].first});
    adj[f.links[i].b].push_back({f.links[i].a, port_of[i].second});
  }
  size_t checked = 0;
  for (uint32_t dst = 0; dst < f.nodes; ++dst) {
    if (f.is_switch(dst)) continue;
    std::map<uint32_t, uint32_t> dist{{dst, 0}};
    std::vector<uint32_t> q{dst};
    for (size_t i = 0; i < q.size(); ++i)
      for (auto [nb, port] : adj[q[i]]) {
        (void)port;
        if (dist.count(nb)) continue;
        dist[nb] = dist[q[i]] + 1;
        if (f.is_switch(nb)) q.push_back(nb);  // hosts do not forward
      }
    const uint32_t ip = t.host_ip(t.nodes[t.find(name_of(f, dst))].index);
    for (uint32_t sw : f.switches) {
      std::set<uint32_t> want;
      for (auto [nb, port] : adj[sw])
        if (dist.count(nb) && dist.count(sw) && dist[nb] + 1 == dist[sw]) want.insert(port);
      const uint32_t n = t.find(name_of(f, sw));
      const uint32_t g = RouteTable(t.routes[n]).lookup(ip);
      ASSERT_NE(g, kNoRoute) << name_of(f, sw) << " -> " << name_of(f, dst);
      const std::vector<uint32_t>& ports = t.groups[n][g].ports;
      EXPECT_EQ(std::set<uint32_t>(ports.begin(), ports.end()), want) << name_of(f, sw) << " -> " << name_of(f, dst);
      ++checked;
    }
  }
  EXPECT_EQ(checked, f.switches.size() * t.hosts.size());
}

TEST(Hpcc, TwoTierHostsFirst) {
  const TFile f = two_tier_hosts_first();
  check(f);
  // Spot checks of the BFS itself: from leaf sw6 toward h2 (on leaf sw7) both
  // spines (ports 2, 3); from spine sw9 toward h0 only its port to sw6 (port 0).
  const Topology t = parse_hpcc_topology(f.text(), "t.txt", "k");
  auto group = [&](const char* sw, uint32_t h) {
    const uint32_t n = t.find(sw);
    return t.groups[n][RouteTable(t.routes[n]).lookup(t.host_ip(h))].ports;
  };
  EXPECT_EQ(group("sw6", 2), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(group("sw9", 0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(group("sw6", 1), (std::vector<uint32_t>{1}));
}

TEST(Hpcc, SwitchesFirstAndLinesInAnyOrder) {
  const TFile f = two_tier_switches_first();
  check(f);
  // Leaf 0 reaches host 7 (on leaf 1) over the direct leaf-leaf link only:
  // one hop beats the two via spines. Leaf 0's links in line order: spine 2,
  // host 4, spine 3, host 5, leaf 1 -> port 4.
  const Topology t = parse_hpcc_topology(f.text(), "t.txt", "k");
  const uint32_t n = t.find("sw0");
  const uint32_t h7 = t.nodes[t.find(name_of(f, 7))].index;
  EXPECT_EQ(name_of(f, 7), "h3");
  EXPECT_EQ(t.groups[n][RouteTable(t.routes[n]).lookup(t.host_ip(h7))].ports, (std::vector<uint32_t>{4}));
}

TEST(Hpcc, NodeIdToIpIsHpccs) {
  // 11.X.Y.1 with X = id / 256, Y = id % 256 (third.cc, node_id_to_ip), from the octets.
  auto octets = [](uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; };
  EXPECT_EQ(hpcc_ip_of(0), octets(11, 0, 0, 1));
  EXPECT_EQ(hpcc_ip_of(5), octets(11, 0, 5, 1));
  EXPECT_EQ(hpcc_ip_of(255), octets(11, 0, 255, 1));
  EXPECT_EQ(hpcc_ip_of(256), octets(11, 1, 0, 1));
  EXPECT_EQ(hpcc_ip_of(320), octets(11, 1, 64, 1));
  EXPECT_EQ(hpcc_ip_of(65535), octets(11, 255, 255, 1));
}

TEST(Hpcc, RatesAndDelays) {
  struct R {
    const char* text;
    uint64_t want;
  };
  for (const R& r : {R{"100Gbps", 100000000000ull}, R{"25Gb/s", 25000000000ull}, R{"1bps", 1}, R{"1.5kbps", 1500},
                     R{"1.5Kbps", 1500}, R{"10Mb/s", 10000000}, R{"1.6Tbps", 1600000000000ull}, R{"1B/s", 8},
                     R{"0.125Bps", 1}, R{"12.5GBps", 100000000000ull}}) {
    uint64_t v = 0;
    EXPECT_EQ(parse_hpcc_rate(r.text, v), "") << r.text;
    EXPECT_EQ(v, r.want) << r.text;
  }
  for (const R& r : {R{"0.001ms", 1000000}, R{"1us", 1000000}, R{"1ns", 1000}, R{"7ps", 7}, R{"1s", 1000000000000ull},
                     R{"0.0000000000010s", 1}, R{"2.5us", 2500000}, R{"0ns", 0}}) {
    uint64_t v = 0;
    EXPECT_EQ(parse_hpcc_delay(r.text, v), "") << r.text;
    EXPECT_EQ(v, r.want) << r.text;
  }
  struct Bad {
    const char* text;
    const char* why;
  };
  uint64_t v = 0;
  for (const Bad& b : {Bad{"100", "missing unit"}, Bad{"100Gbs", "unknown unit 'Gbs'"}, Bad{"1.5bps", "whole number of bps"},
                       Bad{"-1Gbps", "negative"}, Bad{"Gbps", "expected a rate"}, Bad{"1e9bps", "unknown unit 'e9bps'"}})
    EXPECT_NE(parse_hpcc_rate(b.text, v).find(b.why), std::string::npos) << b.text << ": " << parse_hpcc_rate(b.text, v);
  for (const Bad& b : {Bad{"1.5ps", "whole number of ps"}, Bad{"1m", "unknown unit 'm'"}, Bad{"5", "missing unit"},
                       Bad{"99999999999999999999s", "too large"}})
    EXPECT_NE(parse_hpcc_delay(b.text, v).find(b.why), std::string::npos) << b.text << ": " << parse_hpcc_delay(b.text, v);
}

TEST(Hpcc, BadInputNamesFileLineColumn) {
  const std::string L = " 100Gbps 1us 0\n";  // the rest of a good link line
  struct Case {
    std::string text;
    std::string where;  // FILE:LINE:COL
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "t.txt:1:1", "empty file"},
      {"3 1\n", "t.txt:1:4", "missing the link count"},
      {"3 1 2 9\n", "t.txt:1:7", "extra field '9'"},
      {"x 1 2\n", "t.txt:1:1", "node count"},
      {"3 4 2\n", "t.txt:1:3", "switch count 4 exceeds the node count 3"},
      {"70000 1 0\n0\n", "t.txt:1:1", "must be <= 65536"},
      {"3 1 2\n5\n", "t.txt:2:1", "switch id 5 out of range (3 nodes)"},
      {"4 2 2\n2 2\n", "t.txt:2:3", "switch 2 listed twice"},
      {"3 2 2\n2\n", "t.txt:1:3", "declares 2 switches but the file lists 1"},
      {"3 1 2\n2 0\n", "t.txt:2:3", "extra field '0' after the 1 switch ids"},
      {"3 1 2\n2\n0 2 100Gbps 1us\n", "t.txt:3:16", "missing field 'error_rate'"},
      {"3 1 2\n2\n0 2 100Gbps 1us 0 7\n", "t.txt:3:19", "extra field '7'"},
      {"3 1 2\n2\n0 3" + L, "t.txt:3:3", "dst: node 3 out of range"},
      {"3 1 2\n2\n2 2" + L, "t.txt:3:3", "dst: same node as src (2)"},
      {"3 1 2\n2\n0 2 100Gbs 1us 0\n", "t.txt:3:5", "rate: unknown unit 'Gbs'"},
      {"3 1 2\n2\n0 2 0Gbps 1us 0\n", "t.txt:3:5", "rate: '0Gbps' is outside 1Mbps .. 1600Gbps"},
      {"3 1 2\n2\n0 2 999999bps 1us 0\n", "t.txt:3:5", "rate: '999999bps' is outside 1Mbps .. 1600Gbps"},
      {"3 1 2\n2\n0 2 1601Gbps 1us 0\n", "t.txt:3:5", "rate: '1601Gbps' is outside"},
      {"3 1 2\n2\n0 2 1Mbps 1.000000000001s 0\n", "t.txt:3:11", "delay: '1.000000000001s' is more than 1s"},
      {"3 1 2\n2\n0 2 100Gbps 1.5ps 0\n", "t.txt:3:13", "delay: '1.5ps' is not a whole number of ps"},
      {"3 1 2\n2\n0 2 100Gbps 1us 1.5\n", "t.txt:3:17", "error_rate: must be in 0..1"},
      {"3 1 2\n2\n0 2 100Gbps 1us -0.1\n", "t.txt:3:17", "error_rate:"},
      {"3 1 3\n2\n0 2" + L + "1 2" + L + "0 1" + L, "t.txt:5:1",
       "src: host 0 (h0) already has a link on line 3: rocesim's hosts have one port"},
      {"3 1 1\n2\n0 2" + L + "1 2" + L, "t.txt:4:1", "more link lines than the 1 declared on line 1"},
      {"3 1 2\n2\n0 2" + L, "t.txt:1:5", "declares 2 links but the file has 1"},
      {"3 1 1\n2\n0 2" + L, "t.txt:1:1", "host 1 has no link"},
      {"4 2 2\n2 3\n0 2" + L + "1 2" + L, "t.txt:2:3", "switch 3 has no link"},
  };
  for (const Case& c : cases) {
    try {
      (void)parse_hpcc_topology(c.text, "t.txt", "topology.file");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const core::ConfigError& e) {
      EXPECT_EQ(e.where(), c.where) << c.text << "\n" << e.what();
      EXPECT_EQ(e.key_path(), "topology.file");
      EXPECT_NE(e.reason().find(c.why), std::string::npos) << c.text << "\n" << e.what();
    }
  }
}

TEST(Hpcc, CommentsAndBlankLinesAndSwitchIdsOverSeveralLines) {
  const Topology t = parse_hpcc_topology(
      "# a comment\n\n4 2 3\n2\n3   # the second switch\n0 2 10Gbps 1us 0\n1 3 10Gbps 1us 0\n2\t3\t40Gbps\t2us\t0\n",
      "t.txt", "k");
  EXPECT_EQ(t.hosts.size(), 2u);
  EXPECT_EQ(t.nodes[t.find("sw3")].ports, 2u);
  EXPECT_EQ(t.links[2].rate_bps, 40000000000ull);
}

TEST(Hpcc, MissingFileIsAConfigError) {
  try {
    (void)read_hpcc_topology("/nonexistent/topo.txt", "topology.file");
    ADD_FAILURE() << "accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.where(), "/nonexistent/topo.txt");
    EXPECT_NE(e.reason().find("cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rocesim::topology

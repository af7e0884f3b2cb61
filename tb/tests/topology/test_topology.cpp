// Topology builders and route generation: shapes, names, port numbering,
// addressing, and an all-pairs walk of every ECMP path through the generated
// routes (looked up with RouteTable, as the switch does).
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "topology/builders.h"
#include "topology/route_table.h"
#include "topology/topology.h"

namespace rocesim::topology {
namespace {

// Path lengths (in switches traversed) -> number of paths of that length.
using Lengths = std::map<uint32_t, uint64_t>;

// Walks the generated routes literally, one path at a time: at every switch it
// looks the destination up with RouteTable (as the switch model does) and
// follows EVERY member of the group. Records the first error (loop, black
// hole, wrong host) rather than failing a million times.
class Walker {
 public:
  explicit Walker(const Topology& t) : m_t(t), m_tables(t.nodes.size()), m_on_path(t.nodes.size(), 0) {
    for (uint32_t s : t.switches) m_tables[s] = RouteTable(t.routes[s]);
  }

  Lengths walk(uint32_t src_host, uint32_t dst_host) {
    Lengths out;
    m_dst = m_t.hosts.at(dst_host);
    m_ip = m_t.host_ip(dst_host);
    step(m_t.peer(PortRef{m_t.hosts.at(src_host), 0}).node, 1, out);
    return out;
  }

  const std::string& error() const { return m_error; }

 private:
  void step(uint32_t sw, uint32_t hops, Lengths& out) {
    if (!m_error.empty()) return;
    if (m_t.nodes[sw].kind == Node::host) {
      if (sw == m_dst) {
        ++out[hops - 1];
      } else {
        m_error = "traffic for " + m_t.nodes[m_dst].name + " reaches " + m_t.nodes[sw].name;
      }
      return;
    }
    if (m_on_path[sw]) {
      m_error = "loop through " + m_t.nodes[sw].name + " toward " + m_t.nodes[m_dst].name;
      return;
    }
    const uint32_t g = m_tables[sw].lookup(m_ip);
    if (g == kNoRoute) {
      m_error = m_t.nodes[sw].name + " has no route to " + m_t.nodes[m_dst].name;
      return;
    }
    m_on_path[sw] = 1;
    for (uint32_t port : m_t.groups[sw].at(g).ports) step(m_t.peer(PortRef{sw, port}).node, hops + 1, out);
    m_on_path[sw] = 0;
  }

  const Topology& m_t;
  std::vector<RouteTable> m_tables;
  std::vector<char> m_on_path;
  uint32_t m_dst = 0, m_ip = 0;
  std::string m_error;
};

// Every ordered host pair: all ECMP paths have expect(src, dst).first switch
// hops, and there are expect(...).second of them.
using Want = std::pair<uint32_t, uint64_t>;
void check_all_pairs(const Topology& t, const std::function<Want(uint32_t, uint32_t)>& expect) {
  Walker w(t);
  const uint32_t n = static_cast<uint32_t>(t.hosts.size());
  uint64_t pairs = 0, bad = 0;
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      const Lengths got = w.walk(s, d);
      ASSERT_TRUE(w.error().empty()) << "h" << s << " -> h" << d << ": " << w.error();
      const auto [hops, paths] = expect(s, d);
      ++pairs;
      if (got != Lengths{{hops, paths}} && ++bad <= 5) {
        std::string seen;
        for (const auto& [len, count] : got) seen += " " + std::to_string(count) + " of " + std::to_string(len) + " hops;";
        ADD_FAILURE() << "h" << s << " -> h" << d << ":" << seen << " expected " << paths << " of " << hops << " hops";
      }
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(pairs, static_cast<uint64_t>(n) * (n - 1));
}

// Every port of every node is the end of exactly one link, and peer() is an involution.
void check_ports_connected_once(const Topology& t) {
  std::map<std::pair<uint32_t, uint32_t>, int> uses;
  for (const LinkSpec& l : t.links)
    for (PortRef p : {l.a, l.b}) {
      ASSERT_LT(p.node, t.nodes.size());
      ASSERT_LT(p.port, t.nodes[p.node].ports) << t.nodes[p.node].name;
      ++uses[{p.node, p.port}];
    }
  size_t ports = 0;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    for (uint32_t p = 0; p < t.nodes[n].ports; ++p) {
      EXPECT_EQ((uses[{n, p}]), 1) << t.nodes[n].name << ":" << p;
      EXPECT_EQ(t.peer(t.peer(PortRef{n, p})), (PortRef{n, p}));
    }
    ports += t.nodes[n].ports;
    if (t.nodes[n].kind == Node::host) {
      // One port, or two to two different switches (dual-homed, M-LAG).
      EXPECT_TRUE(t.nodes[n].ports == 1 || t.nodes[n].ports == 2) << t.nodes[n].name;
      if (t.nodes[n].ports == 2) {
        EXPECT_NE(t.peer(PortRef{n, 0}).node, t.peer(PortRef{n, 1}).node);
      }
    }
  }
  EXPECT_EQ(ports, 2 * t.links.size());
}

// The group a switch uses toward h<i>, as a port list.
std::vector<uint32_t> ports_toward(const Topology& t, uint32_t sw, uint32_t host) {
  const uint32_t g = RouteTable(t.routes[sw]).lookup(t.host_ip(host));
  if (g == kNoRoute) return {};
  return t.groups[sw].at(g).ports;
}

std::vector<uint32_t> range(uint32_t lo, uint32_t n) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(lo + i);
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

// ---------------------------------------------------------------- single switch

TEST(SingleSwitch, DefaultShapeAndNumbering) {
  const Topology t = single_switch();
  EXPECT_EQ(t.kind, "single_switch");
  ASSERT_EQ(t.hosts.size(), 16u);
  ASSERT_EQ(t.switches.size(), 1u);
  EXPECT_EQ(t.links.size(), 16u);
  const uint32_t sw = t.find("sw0");
  ASSERT_EQ(sw, 16u);
  EXPECT_EQ(t.nodes[sw].kind, Node::sw);
  EXPECT_EQ(t.nodes[sw].role, "sw");
  EXPECT_EQ(t.nodes[sw].ports, 16u);
  check_ports_connected_once(t);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(t.peer(PortRef{sw, i}), (PortRef{i, 0}));
    EXPECT_EQ(t.link_at(PortRef{i, 0}).rate_bps, 100'000'000'000ull);
    EXPECT_EQ(t.link_at(PortRef{i, 0}).length_mm, 2000u);
    EXPECT_EQ(ports_toward(t, sw, i), std::vector<uint32_t>{i});
  }
  EXPECT_EQ(t.routes[sw].size(), 16u);
  EXPECT_EQ(t.groups[sw].size(), 16u);
  EXPECT_TRUE(t.routes[0].empty());
  check_all_pairs(t, [](uint32_t, uint32_t) { return Want{1, 1}; });
}

TEST(SingleSwitch, ParamsApply) {
  const Topology t = single_switch(SingleParams{3, 400'000'000'000ull, 500});
  EXPECT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[t.find("sw0")].ports, 3u);
  EXPECT_EQ(t.links[2].rate_bps, 400'000'000'000ull);
  EXPECT_EQ(t.links[2].length_mm, 500u);
  EXPECT_EQ(t.find("h3"), kNoNode);
  check_all_pairs(t, [](uint32_t, uint32_t) { return Want{1, 1}; });
}

// ---------------------------------------------------------------- leaf-spine

TEST(LeafSpine, DefaultIsTheSeedFabric) {
  const Topology t = leaf_spine();
  EXPECT_EQ(t.kind, "leaf_spine");
  ASSERT_EQ(t.hosts.size(), 256u);
  ASSERT_EQ(t.switches.size(), 20u);
  ASSERT_EQ(t.links.size(), 256u + 64u);
  EXPECT_EQ(t.route_style, RouteStyle::per_host);
  check_ports_connected_once(t);

  for (uint32_t i = 0; i < 256; ++i) {
    const Node& h = t.nodes[t.hosts[i]];
    EXPECT_EQ(t.hosts[i], i);
    EXPECT_EQ(h.name, "h" + std::to_string(i));
    EXPECT_EQ(h.index, i);
    EXPECT_EQ(h.role, "host");
    EXPECT_EQ(h.kind, Node::host);
    EXPECT_EQ(t.find(h.name), i);
  }
  for (uint32_t l = 0; l < 16; ++l) {
    const uint32_t n = t.find("leaf" + std::to_string(l));
    ASSERT_EQ(n, 256 + l);
    EXPECT_EQ(t.nodes[n].role, "leaf");
    EXPECT_EQ(t.nodes[n].index, l);
    EXPECT_EQ(t.nodes[n].ports, 20u);
    for (uint32_t j = 0; j < 16; ++j) {
      EXPECT_EQ(t.peer(PortRef{n, j}), (PortRef{l * 16 + j, 0}));
      EXPECT_EQ(t.link_at(PortRef{n, j}).rate_bps, 25'000'000'000ull);
      EXPECT_EQ(t.link_at(PortRef{n, j}).length_mm, 2000u);
    }
    for (uint32_t s = 0; s < 4; ++s) {
      EXPECT_EQ(t.peer(PortRef{n, 16 + s}), (PortRef{272 + s, l}));
      EXPECT_EQ(t.link_at(PortRef{n, 16 + s}).rate_bps, 100'000'000'000ull);
      EXPECT_EQ(t.link_at(PortRef{n, 16 + s}).length_mm, 10000u);
    }
    // 16 single-port host groups plus one shared 4-port uplink group.
    EXPECT_EQ(t.groups[n].size(), 17u);
    EXPECT_EQ(t.routes[n].size(), 256u);
    for (uint32_t d = 0; d < 256; ++d)
      EXPECT_EQ(ports_toward(t, n, d), d / 16 == l ? std::vector<uint32_t>{d % 16} : range(16, 4));
  }
  for (uint32_t s = 0; s < 4; ++s) {
    const uint32_t n = t.find("spine" + std::to_string(s));
    ASSERT_EQ(n, 272 + s);
    EXPECT_EQ(t.nodes[n].role, "spine");
    EXPECT_EQ(t.nodes[n].index, s);
    EXPECT_EQ(t.nodes[n].ports, 16u);
    EXPECT_EQ(t.groups[n].size(), 16u);
    for (uint32_t d = 0; d < 256; ++d) EXPECT_EQ(ports_toward(t, n, d), std::vector<uint32_t>{d / 16});
  }
  EXPECT_EQ(t.summary(), "leaf_spine: 256 hosts, 20 switches, 320 links, 5120 routes");
}

// M-LAG: 2 pairs (leaf0/leaf1, leaf2/leaf3), 2 spines, 4 dual-homed hosts per pair.
TEST(LeafSpine, MlagPairsDualHomeTheirHosts) {
  LeafSpineParams p;
  p.leaves = 4, p.spines = 2, p.hosts_per_leaf = 2, p.mlag = true, p.peer_rate = 400'000'000'000ull;
  const Topology t = leaf_spine(p);
  ASSERT_EQ(t.hosts.size(), 8u);
  // 8 port-0 links, 8 port-1 links, 4 x 2 fabric links, 2 peer links.
  ASSERT_EQ(t.links.size(), 8u + 8u + 8u + 2u);
  check_ports_connected_once(t);
  const uint32_t leaf0 = t.find("leaf0"), spine0 = t.find("spine0");
  ASSERT_EQ(mlag_peer_port(p), 6u);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t.nodes[i].ports, 2u);
    // Convention: links[i] is h<i>'s port-0 link.
    EXPECT_EQ(t.links[i].a, (PortRef{i, 0}));
    const uint32_t pair = i / 4;
    EXPECT_EQ(t.peer(PortRef{i, 0}), (PortRef{leaf0 + 2 * pair, i % 4}));
    EXPECT_EQ(t.peer(PortRef{i, 1}), (PortRef{leaf0 + 2 * pair + 1, i % 4}));
  }
  for (uint32_t l = 0; l < 4; ++l) {
    const uint32_t n = leaf0 + l;
    EXPECT_EQ(t.nodes[n].ports, 7u);
    EXPECT_EQ(t.peer(PortRef{n, 6}), (PortRef{leaf0 + (l ^ 1), 6}));
    EXPECT_EQ(t.peer_link_port(n), 6u);
    EXPECT_EQ(t.link_at(PortRef{n, 6}).rate_bps, 400'000'000'000ull);
    EXPECT_EQ(t.link_at(PortRef{n, 6}).length_mm, p.fabric_cable_mm);
    for (uint32_t s = 0; s < 2; ++s) EXPECT_EQ(t.peer(PortRef{n, 4 + s}), (PortRef{spine0 + s, l}));
    // Own pair's hosts straight down; the other pair's over both spines,
    // never over the peer link (both members are as close to those hosts).
    for (uint32_t d = 0; d < 8; ++d)
      EXPECT_EQ(ports_toward(t, n, d), d / 4 == l / 2 ? std::vector<uint32_t>{d % 4} : range(4, 2)) << n << " " << d;
  }
  for (uint32_t n : {0u, 7u, spine0, spine0 + 1}) EXPECT_EQ(t.peer_link_port(n), kNoNode) << n;
  EXPECT_EQ(leaf_spine(LeafSpineParams{}).peer_link_port(leaf0), kNoNode);  // no pairs without mlag
  // A spine reaches a pair's host over both members.
  for (uint32_t s = 0; s < 2; ++s)
    for (uint32_t d = 0; d < 8; ++d)
      EXPECT_EQ(ports_toward(t, spine0 + s, d), (std::vector<uint32_t>{2 * (d / 4), 2 * (d / 4) + 1}));
  // From each host's port-0 leaf: same pair 1 switch, 1 path; other pair
  // 3 switches over 2 spines x 2 members = 4 paths.
  check_all_pairs(t, [](uint32_t a, uint32_t b) { return a / 4 == b / 4 ? Want{1, 1} : Want{3, 4}; });
  // Peer rate defaults to the fabric rate.
  p.peer_rate = 0;
  EXPECT_EQ(leaf_spine(p).link_at(PortRef{leaf0, 6}).rate_bps, p.fabric_rate);
}

TEST(LeafSpine, MlagRejectsOddLeavesAndBadDualHoming) {
  LeafSpineParams p;
  p.leaves = 3, p.mlag = true;
  EXPECT_EQ(error_of([&] { leaf_spine(p); }), "leaf_spine.leaves = 3: must be even with mlag (pairs of leaves)");
  p.leaves = 2, p.spines = 1, p.hosts_per_leaf = 1;
  Topology t = leaf_spine(p);
  // Links: 0 h0:0-leaf0:0, 1 h1:0-leaf0:1, 2 h0:1-leaf1:0, 3 h1:1-leaf1:1.
  Topology bad = t;
  std::swap(bad.links[1].b, bad.links[2].b);  // h1:0 -> leaf1:0, h0:1 -> leaf0:1
  EXPECT_EQ(error_of([&] { finalize(bad); }),
            "topology: dual-homed host h0 has both ports on leaf0: must be two different switches");
  bad = t;
  bad.links[2].b = PortRef{1, 1};                                          // h0:1 - h1:1
  bad.links[3] = LinkSpec{PortRef{t.find("leaf1"), 0}, PortRef{t.find("leaf1"), 1}, 1, 1};
  EXPECT_EQ(error_of([&] { finalize(bad); }), "topology: dual-homed host h0 has a port to h1:1: must be a switch");
}

TEST(LeafSpine, DefaultRoutesEveryPairOverAllFourSpines) {
  const Topology t = leaf_spine();
  check_all_pairs(t, [](uint32_t s, uint32_t d) { return s / 16 == d / 16 ? Want{1, 1} : Want{3, 4}; });
}

TEST(LeafSpine, ParallelLinksAreSeparateEcmpMembers) {
  LeafSpineParams p;
  p.leaves = 3;
  p.spines = 2;
  p.hosts_per_leaf = 5;
  p.links_per_leaf_spine = 2;
  const Topology t = leaf_spine(p);
  ASSERT_EQ(t.hosts.size(), 15u);
  ASSERT_EQ(t.links.size(), 15u + 3 * 2 * 2);
  check_ports_connected_once(t);
  const uint32_t leaf1 = t.find("leaf1"), spine1 = t.find("spine1");
  EXPECT_EQ(t.nodes[leaf1].ports, 5u + 4u);
  EXPECT_EQ(t.nodes[spine1].ports, 6u);
  // Leaf port hpl + s*links + k <-> spine port l*links + k.
  EXPECT_EQ(t.peer(PortRef{leaf1, 5 + 1 * 2 + 1}), (PortRef{spine1, 1 * 2 + 1}));
  EXPECT_EQ(t.peer(PortRef{leaf1, 5 + 1 * 2 + 0}), (PortRef{spine1, 1 * 2 + 0}));
  EXPECT_EQ(ports_toward(t, leaf1, 0), range(5, 4));
  EXPECT_EQ(ports_toward(t, spine1, 14), (std::vector<uint32_t>{4, 5}));
  // 2 spines x 2 links up x 2 links down.
  check_all_pairs(t, [](uint32_t s, uint32_t d) { return s / 5 == d / 5 ? Want{1, 1} : Want{3, 8}; });
}

TEST(LeafSpine, SingleLeafNeedsNoSpineRoutes) {
  LeafSpineParams p;
  p.leaves = 1;
  p.spines = 2;
  p.hosts_per_leaf = 4;
  const Topology t = leaf_spine(p);
  // The spines are only reachable through leaf0, and leaf0 never sends up.
  for (uint32_t d = 0; d < 4; ++d) EXPECT_EQ(ports_toward(t, t.find("leaf0"), d), std::vector<uint32_t>{d});
  EXPECT_EQ(ports_toward(t, t.find("spine1"), 2), std::vector<uint32_t>{0});
  check_all_pairs(t, [](uint32_t, uint32_t) { return Want{1, 1}; });
}

// ---------------------------------------------------------------- fat-tree

void check_fat_tree(uint32_t k) {
  SCOPED_TRACE("k=" + std::to_string(k));
  const Topology t = fat_tree(FatTreeParams{k, 100'000'000'000ull, 2000, RouteStyle::automatic});
  const uint32_t h = k / 2, H = k * k * k / 4;
  ASSERT_EQ(t.hosts.size(), H);
  ASSERT_EQ(t.switches.size(), k * h + k * h + h * h);
  EXPECT_EQ(t.links.size(), 3u * H);
  check_ports_connected_once(t);

  std::map<std::string, uint32_t> per_role;
  for (uint32_t n : t.switches) {
    ++per_role[t.nodes[n].role];
    EXPECT_EQ(t.nodes[n].ports, k) << t.nodes[n].name;
  }
  EXPECT_EQ(per_role["tor"], k * h);
  EXPECT_EQ(per_role["agg"], k * h);
  EXPECT_EQ(per_role["core"], h * h);  // (k/2)^2
  const uint32_t tor0 = t.find("tor0"), agg0 = t.find("agg0"), core0 = t.find("core0");
  ASSERT_EQ(tor0, H);
  ASSERT_EQ(agg0, H + k * h);
  ASSERT_EQ(core0, H + 2 * k * h);
  EXPECT_EQ(t.nodes[t.find("core" + std::to_string(h * h - 1))].index, h * h - 1);
  EXPECT_EQ(t.find("core" + std::to_string(h * h)), kNoNode);

  for (uint32_t tor = 0; tor < k * h; ++tor) {
    const uint32_t n = tor0 + tor, pod = tor / h;
    EXPECT_EQ(t.nodes[n].name, "tor" + std::to_string(tor));
    for (uint32_t j = 0; j < h; ++j) EXPECT_EQ(t.peer(PortRef{n, j}), (PortRef{tor * h + j, 0}));
    for (uint32_t a = 0; a < h; ++a) EXPECT_EQ(t.peer(PortRef{n, h + a}), (PortRef{agg0 + pod * h + a, tor % h}));
    EXPECT_EQ(t.groups[n].size(), h + 1);  // one per host port, one for all uplinks
    for (uint32_t d = 0; d < H; ++d) {
      const uint32_t dtor = d / h;
      // Anything off this tor, same pod or not, goes up over all k/2 uplinks.
      EXPECT_EQ(ports_toward(t, n, d), dtor == tor ? std::vector<uint32_t>{d % h} : range(h, h));
    }
  }
  for (uint32_t g = 0; g < k * h; ++g) {
    const uint32_t n = agg0 + g, pod = g / h;
    for (uint32_t c = 0; c < h; ++c) EXPECT_EQ(t.peer(PortRef{n, h + c}), (PortRef{core0 + (g % h) * h + c, pod}));
    EXPECT_EQ(t.groups[n].size(), h + 1);
    for (uint32_t d = 0; d < H; ++d) {
      const uint32_t dtor = d / h, dpod = dtor / h;
      EXPECT_EQ(ports_toward(t, n, d), dpod == pod ? std::vector<uint32_t>{dtor % h} : range(h, h));
    }
  }
  for (uint32_t c = 0; c < h * h; ++c) {
    const uint32_t n = core0 + c;
    EXPECT_EQ(t.groups[n].size(), k);
    for (uint32_t p = 0; p < k; ++p) EXPECT_EQ(t.peer(PortRef{n, p}), (PortRef{agg0 + p * h + c / h, h + c % h}));
    for (uint32_t d = 0; d < H; ++d) EXPECT_EQ(ports_toward(t, n, d), std::vector<uint32_t>{d / (h * h)});
  }

  check_all_pairs(t, [h](uint32_t s, uint32_t d) {
    if (s / h == d / h) return Want{1, 1};               // same tor
    if (s / (h * h) == d / (h * h)) return Want{3, h};   // same pod: via any agg
    return Want{5, uint64_t{h} * h};                     // other pod: any agg, any core of its group
  });
}

TEST(FatTree, K4) { check_fat_tree(4); }
TEST(FatTree, K8) { check_fat_tree(8); }
TEST(FatTree, K2IsTheSmallest) {
  const Topology t = fat_tree(FatTreeParams{2, 100'000'000'000ull, 2000, RouteStyle::automatic});
  EXPECT_EQ(t.hosts.size(), 2u);
  EXPECT_EQ(t.switches.size(), 5u);
  check_all_pairs(t, [](uint32_t, uint32_t) { return Want{5, 1}; });  // 2 pods, 1 host each
}

TEST(FatTree, ParamsApply) {
  const Topology t = fat_tree(FatTreeParams{4, 400'000'000'000ull, 7000, RouteStyle::automatic});
  for (const LinkSpec& l : t.links) {
    EXPECT_EQ(l.rate_bps, 400'000'000'000ull);
    EXPECT_EQ(l.length_mm, 7000u);
  }
}

// ---------------------------------------------------------------- route styles

// The aggregated style forwards every host address exactly as per_host does,
// and non-host addresses find no route in either.
void check_styles_agree(const std::function<Topology(RouteStyle)>& build) {
  const Topology a = build(RouteStyle::per_host);
  const Topology b = build(RouteStyle::aggregated);
  EXPECT_EQ(a.route_style, RouteStyle::per_host);
  EXPECT_EQ(b.route_style, RouteStyle::aggregated);
  size_t ra = 0, rb = 0;
  const uint32_t H = static_cast<uint32_t>(a.hosts.size());
  const std::vector<uint32_t> strangers = {0, 0x0A000000u, host_ip_of(H), host_ip_of(H) + 1, 0x0AFFFFFFu,
                                           0x0B000001u, 0xFFFFFFFFu, 0x09FFFFFFu};
  for (uint32_t n : a.switches) {
    ra += a.routes[n].size();
    rb += b.routes[n].size();
    const RouteTable ta(a.routes[n]), tb(b.routes[n]);
    for (uint32_t d = 0; d < H; ++d) {
      const uint32_t ip = a.host_ip(d);
      ASSERT_NE(ta.lookup(ip), kNoRoute);
      ASSERT_NE(tb.lookup(ip), kNoRoute) << a.nodes[n].name << " h" << d;
      EXPECT_EQ(a.groups[n][ta.lookup(ip)].ports, b.groups[n][tb.lookup(ip)].ports) << a.nodes[n].name << " h" << d;
    }
    for (uint32_t ip : strangers) {
      EXPECT_EQ(ta.lookup(ip), kNoRoute) << ip_to_string(ip);
      EXPECT_EQ(tb.lookup(ip), kNoRoute) << a.nodes[n].name << " " << ip_to_string(ip);
    }
  }
  EXPECT_LT(rb * 4, ra) << "aggregation should shrink the tables";
}

TEST(RouteStyles, AggregatedForwardsLikePerHost) {
  check_styles_agree([](RouteStyle s) {
    LeafSpineParams p;
    p.routes = s;
    return leaf_spine(p);
  });
  check_styles_agree([](RouteStyle s) { return fat_tree(FatTreeParams{8, 100'000'000'000ull, 2000, s}); });
}

TEST(RouteStyles, AggregatedLeafSpineStillRoutesEveryPair) {
  LeafSpineParams p;
  p.routes = RouteStyle::aggregated;
  const Topology t = leaf_spine(p);
  // leaf3's remote hosts are h0..h47 (10.0.0.1-.48: /32 /31 /30 /29 /28 /28 /32)
  // and h64..h255 (10.0.0.65-10.0.1.0: /32 /31 /30 /29 /28 /27 /25 /32); its
  // own 16 hosts each have their own port: 7 + 8 + 16.
  EXPECT_EQ(t.routes[t.find("leaf3")].size(), 31u);
  check_all_pairs(t, [](uint32_t s, uint32_t d) { return s / 16 == d / 16 ? Want{1, 1} : Want{3, 4}; });
}

TEST(RouteStyles, AutomaticSwitchesToAggregatedWhenLarge) {
  // 24^3/4 = 3456 hosts x 720 switches = 2.5M /32s: still per host.
  EXPECT_EQ(fat_tree(FatTreeParams{24, 100'000'000'000ull, 2000, RouteStyle::automatic}).route_style,
            RouteStyle::per_host);
  // 28: 5488 hosts x 980 switches = 5.4M > 4Mi: aggregated.
  const Topology t = fat_tree(FatTreeParams{28, 100'000'000'000ull, 2000, RouteStyle::automatic});
  EXPECT_EQ(t.route_style, RouteStyle::aggregated);
  size_t routes = 0;
  for (const auto& r : t.routes) routes += r.size();
  EXPECT_LT(routes, 200000u);
}

TEST(RouteStyles, HugePerHostIsRefused) {
  EXPECT_EQ(error_of([] { fat_tree(FatTreeParams{62, 100'000'000'000ull, 2000, RouteStyle::per_host}); }),
            "topology: per_host routes: 4805 switches x 59582 hosts = 286291510 routes: must be <= 67108864 "
            "(use aggregated)");
}

// ---------------------------------------------------------------- generic routing

// Hand-made graph: a ring s0-s1-s2-s3-s0 with a double cable s0=s1, a hostless
// transit switch s4 between s0 and s2 and also cabled to s3 (an odd cycle, so
// s3 and s4 are equally far from s0 and must not use each other), and an
// island s5 with its own host.
Topology ring() {
  Topology t;
  t.kind = "ring";
  for (uint32_t i = 0; i < 5; ++i) t.nodes.push_back(Node{"h" + std::to_string(i), Node::host, i, "host", 1, host_ip_of(i)});
  const uint32_t ports[6] = {5, 4, 4, 4, 3, 1};
  for (uint32_t i = 0; i < 6; ++i) t.nodes.push_back(Node{"s" + std::to_string(i), Node::sw, i, "sw", ports[i], 0});
  auto link = [&](uint32_t na, uint32_t pa, uint32_t nb, uint32_t pb) {
    t.links.push_back(LinkSpec{PortRef{na, pa}, PortRef{nb, pb}, 100'000'000'000ull, 1000});
  };
  const uint32_t s0 = 5, s1 = 6, s2 = 7, s3 = 8, s4 = 9, s5 = 10;
  link(0, 0, s0, 0);
  link(1, 0, s1, 0);
  link(2, 0, s2, 0);
  link(3, 0, s3, 0);
  link(4, 0, s5, 0);
  link(s0, 1, s1, 1);
  link(s0, 2, s1, 2);
  link(s1, 3, s2, 1);
  link(s2, 2, s3, 1);
  link(s3, 2, s0, 3);
  link(s4, 0, s0, 4);
  link(s4, 1, s2, 3);
  link(s3, 3, s4, 2);
  return t;
}

TEST(GenericRouting, ShortestPathEcmpOnAnArbitraryGraph) {
  Topology t = ring();
  finalize(t);
  const uint32_t s0 = t.find("s0"), s1 = t.find("s1"), s2 = t.find("s2"), s3 = t.find("s3"), s4 = t.find("s4"), s5 = t.find("s5");
  using V = std::vector<uint32_t>;
  EXPECT_EQ(ports_toward(t, s0, 0), V{0});
  EXPECT_EQ(ports_toward(t, s0, 1), (V{1, 2}));        // both parallel cables
  EXPECT_EQ(ports_toward(t, s0, 2), (V{1, 2, 3, 4}));  // via s1 (x2), s3, s4: all 2 hops
  EXPECT_EQ(ports_toward(t, s0, 3), V{3});
  EXPECT_EQ(ports_toward(t, s1, 3), (V{1, 2, 3}));     // via s0 (x2) or s2
  EXPECT_EQ(ports_toward(t, s2, 0), (V{1, 2, 3}));     // via s1, s3, s4
  EXPECT_EQ(ports_toward(t, s4, 1), (V{0, 1}));
  EXPECT_EQ(ports_toward(t, s4, 3), V{2});
  EXPECT_EQ(ports_toward(t, s3, 0), V{2});            // not via s4, which is as far as s3
  EXPECT_EQ(ports_toward(t, s4, 4), V{});             // the island is unreachable
  EXPECT_EQ(ports_toward(t, s0, 4), V{});
  EXPECT_EQ(ports_toward(t, s5, 4), V{0});
  EXPECT_EQ(ports_toward(t, s5, 0), V{});
  EXPECT_TRUE(t.routes[s4].size() == 4u);              // h0..h3
  EXPECT_EQ(t.routes[s5].size(), 1u);
  // s0's groups: {0}, {1,2}, {3}, {1,2,3,4}: deduplicated, each sorted.
  EXPECT_EQ(t.groups[s0].size(), 4u);

  Walker w(t);
  EXPECT_EQ(w.walk(0, 2), (Lengths{{3, 4}}));  // s0=s1 twice, s3 or s4, then s2
  EXPECT_EQ(w.walk(3, 1), (Lengths{{3, 3}}));  // s3, then s2 or s0 (two cables), then s1
  EXPECT_EQ(w.walk(3, 0), (Lengths{{2, 1}}));
  EXPECT_TRUE(w.error().empty()) << w.error();
  w.walk(0, 4);
  EXPECT_EQ(w.error(), "s0 has no route to h4");
}

TEST(GenericRouting, FinalizeRejectsMalformedGraphs) {
  auto err = [](const std::function<void(Topology&)>& spoil) {
    Topology t = ring();
    spoil(t);
    return error_of([&] { finalize(t); });
  };
  EXPECT_EQ(err([](Topology&) {}), "no exception");
  EXPECT_EQ(err([](Topology& t) { t.links.pop_back(); }), "topology: port s3:3 is not connected");
  EXPECT_EQ(err([](Topology& t) { t.links.back().b = PortRef{7, 1}; }),
            "topology: port s2:1 is on links #7 and #12");
  EXPECT_EQ(err([](Topology& t) { t.links.back().b = PortRef{7, 9}; }),
            "topology: link #12 ends at nonexistent port s2:9");
  EXPECT_EQ(err([](Topology& t) { t.nodes[0].ports = 3; }),
            "topology: host h0 has 3 ports: must be 1 (or 2, dual-homed)");
  EXPECT_EQ(err([](Topology& t) { t.nodes[0].ports = 2; }), "topology: port h0:1 is not connected");
  EXPECT_EQ(err([](Topology& t) { t.nodes[6].name = "s0"; }), "topology: duplicate node name 's0'");
  EXPECT_EQ(err([](Topology& t) { t.links[3].rate_bps = 0; }), "topology: link #3 has rate 0: must be > 0");
  EXPECT_EQ(err([](Topology& t) { t.nodes[2].ip = 1; }), "topology: host h2 has ip 0.0.0.1, expected 10.0.0.3");
  EXPECT_EQ(err([](Topology& t) { std::swap(t.nodes[4], t.nodes[5]); }),
            "topology: host h4 is node #5 with index 4: hosts must come first, in index order");
}

// ---------------------------------------------------------------- addressing

TEST(Addressing, HostIpsAndMacs) {
  EXPECT_EQ(host_ip_of(0), 0x0A000001u);
  EXPECT_EQ(ip_to_string(host_ip_of(0)), "10.0.0.1");
  EXPECT_EQ(ip_to_string(host_ip_of(254)), "10.0.0.255");
  EXPECT_EQ(ip_to_string(host_ip_of(255)), "10.0.1.0");
  EXPECT_EQ(ip_to_string(host_ip_of(kMaxHosts - 1)), "10.0.253.232");

  const Topology t = leaf_spine();
  EXPECT_EQ(t.host_ip(17), 0x0A000012u);
  EXPECT_EQ(t.nodes[17].ip, 0x0A000012u);
  EXPECT_EQ(t.nodes[t.find("leaf0")].ip, 0u);
  EXPECT_EQ(t.host_by_ip(0x0A000012u), 17u);
  EXPECT_EQ(t.host_by_ip(host_ip_of(256)), kNoNode);
  EXPECT_EQ(t.host_by_ip(0x0A000000u), kNoNode);
  EXPECT_THROW(t.host_ip(256), std::out_of_range);
  EXPECT_THROW(t.peer(PortRef{0, 1}), std::out_of_range);
  EXPECT_THROW(t.peer(PortRef{9999, 0}), std::out_of_range);
  EXPECT_THROW(t.mac_of(t.find("spine0"), 16), std::out_of_range);

  EXPECT_EQ(t.mac_of(0, 0), 0x020000000000ull);
  EXPECT_EQ(t.mac_of(255, 0), 0x0200000000FFull);
  EXPECT_EQ(t.mac_of(t.find("leaf0"), 3), 0x028000000000ull | (256ull << 16) | 3);

  for (const Topology& f : {t, fat_tree(FatTreeParams{8, 100'000'000'000ull, 2000, RouteStyle::automatic})}) {
    std::set<uint64_t> seen;
    size_t ports = 0;
    for (uint32_t n = 0; n < f.nodes.size(); ++n)
      for (uint32_t p = 0; p < f.nodes[n].ports; ++p) {
        const uint64_t m = f.mac_of(n, p);
        EXPECT_LT(m, 1ull << 48);
        EXPECT_EQ((m >> 40) & 0x03, 0x02u) << "locally administered unicast";
        seen.insert(m);
        ++ports;
      }
    EXPECT_EQ(seen.size(), ports) << f.kind;
  }
}

// ---------------------------------------------------------------- validation

TEST(Validation, SingleSwitch) {
  EXPECT_EQ(error_of([] { single_switch(SingleParams{0}); }), "single_switch.hosts = 0: must be >= 1");
  EXPECT_EQ(error_of([] { single_switch(SingleParams{65001}); }), "single_switch.hosts = 65001: must be <= 65000");
  EXPECT_EQ(error_of([] { single_switch(SingleParams{4, 0}); }), "single_switch.host_rate = 0: must be > 0 bps");
  EXPECT_EQ(single_switch(SingleParams{65000}).hosts.size(), 65000u);
}

TEST(Validation, LeafSpine) {
  auto err = [](const std::function<void(LeafSpineParams&)>& set) {
    LeafSpineParams p;
    set(p);
    return error_of([&] { leaf_spine(p); });
  };
  EXPECT_EQ(err([](auto& p) { p.leaves = 0; }), "leaf_spine.leaves = 0: must be >= 1");
  EXPECT_EQ(err([](auto& p) { p.spines = 0; }), "leaf_spine.spines = 0: must be >= 1");
  EXPECT_EQ(err([](auto& p) { p.hosts_per_leaf = 0; }), "leaf_spine.hosts_per_leaf = 0: must be >= 1");
  EXPECT_EQ(err([](auto& p) { p.links_per_leaf_spine = 0; }), "leaf_spine.links_per_leaf_spine = 0: must be >= 1");
  EXPECT_EQ(err([](auto& p) { p.host_rate = 0; }), "leaf_spine.host_rate = 0: must be > 0 bps");
  EXPECT_EQ(err([](auto& p) { p.fabric_rate = 0; }), "leaf_spine.fabric_rate = 0: must be > 0 bps");
  EXPECT_EQ(err([](auto& p) { p.leaves = 4096; }), "leaf_spine: leaves * hosts_per_leaf = 65536 hosts: must be <= 65000");
  EXPECT_EQ(err([](auto& p) { p.hosts_per_leaf = 0xffffffffu; }),
            "leaf_spine: leaves * hosts_per_leaf = 68719476720 hosts: must be <= 65000");
  EXPECT_EQ(err([](auto& p) { p.leaves = 4097, p.hosts_per_leaf = 1; }), "leaf_spine.leaves = 4097: must be <= 4096");
  EXPECT_EQ(err([](auto& p) { p.leaves = 1024, p.spines = 512, p.hosts_per_leaf = 1; }),
            "leaf_spine: leaves * spines * links_per_leaf_spine = 524288 fabric links: must be <= 262144");
  EXPECT_EQ(err([](auto& p) { p.spines = 0xffffffffu, p.links_per_leaf_spine = 0xffffffffu; }),
            "leaf_spine: leaves * spines * links_per_leaf_spine = more than 262144 fabric links: must be <= 262144");
  EXPECT_EQ(err([](auto& p) { p.leaves = 1, p.spines = 1, p.links_per_leaf_spine = 65536; }),
            "leaf_spine: hosts_per_leaf + spines * links_per_leaf_spine = 65552 leaf ports: must be <= 65536");
  EXPECT_EQ(err([](auto& p) { p.leaves = 4000, p.spines = 1, p.hosts_per_leaf = 1, p.links_per_leaf_spine = 17; }),
            "leaf_spine: leaves * links_per_leaf_spine = 68000 spine ports: must be <= 65536");
}

TEST(Validation, FatTree) {
  auto err = [](uint32_t k, uint64_t rate = 100'000'000'000ull) {
    return error_of([&] { fat_tree(FatTreeParams{k, rate, 2000, RouteStyle::automatic}); });
  };
  EXPECT_EQ(err(0), "fat_tree.k = 0: must be even and >= 2");
  EXPECT_EQ(err(3), "fat_tree.k = 3: must be even and >= 2");
  EXPECT_EQ(err(64), "fat_tree.k = 64: k^3/4 = 65536 hosts: must be <= 65000 (k <= 62)");
  EXPECT_EQ(err(4000000000u), "fat_tree.k = 4000000000: k^3/4 hosts: must be <= 65000 (k <= 62)");
  EXPECT_EQ(err(4, 0), "fat_tree.rate = 0: must be > 0 bps");
}

}  // namespace
}  // namespace rocesim::topology

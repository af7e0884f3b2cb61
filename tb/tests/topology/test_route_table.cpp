// RouteTable: longest-prefix match against a brute-force scan, error cases,
// and no heap allocation on the lookup path.
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "topology/route_table.h"

namespace rocesim::topology::test_support {
extern std::atomic<uint64_t> g_allocations;  // alloc_count.cpp: every global operator new
}  // namespace rocesim::topology::test_support

namespace rocesim::topology {
namespace {

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }

uint32_t mask_of(uint8_t len) { return len == 0 ? 0u : 0xffffffffu << (32 - len); }

// Reference: scan every route, keep the longest match.
uint32_t brute_lookup(const std::vector<Route>& routes, uint32_t dst, int* matched_len = nullptr) {
  int best = -1;
  uint32_t g = kNoRoute;
  for (const Route& r : routes) {
    if ((dst & mask_of(r.prefix_len)) == r.prefix && r.prefix_len > best) {
      best = r.prefix_len;
      g = r.group;
    }
  }
  if (matched_len) *matched_len = best;
  return g;
}

TEST(RouteTable, EmptyFindsNothing) {
  RouteTable t;
  EXPECT_EQ(t.lookup(ip(10, 0, 0, 1)), kNoRoute);
  RouteTable u(std::vector<Route>{});
  EXPECT_EQ(u.lookup(0), kNoRoute);
  EXPECT_EQ(u.size(), 0u);
  EXPECT_EQ(u.levels(), 0u);
}

TEST(RouteTable, DefaultRouteOnly) {
  RouteTable t({Route{0, 0, 7}});
  EXPECT_EQ(t.lookup(0), 7u);
  EXPECT_EQ(t.lookup(0xffffffffu), 7u);
  EXPECT_EQ(t.levels(), 1u);
}

TEST(RouteTable, NestedPrefixesPickTheLongest) {
  const std::vector<Route> routes = {
      {0, 0, 0},
      {ip(10, 0, 0, 0), 8, 1},
      {ip(10, 1, 0, 0), 16, 2},
      {ip(10, 1, 2, 0), 24, 3},
      {ip(10, 1, 2, 3), 32, 4},
      {ip(10, 1, 2, 4), 31, 5},   // 10.1.2.4 and .5
  };
  RouteTable t(routes);
  EXPECT_EQ(t.size(), 6u);
  EXPECT_EQ(t.levels(), 6u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 3)), 4u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 4)), 5u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 5)), 5u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 6)), 3u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 2)), 3u);
  EXPECT_EQ(t.lookup(ip(10, 1, 3, 3)), 2u);
  EXPECT_EQ(t.lookup(ip(10, 2, 2, 3)), 1u);
  EXPECT_EQ(t.lookup(ip(11, 1, 2, 3)), 0u);
  // Without the default, a miss is kNoRoute.
  RouteTable n(std::vector<Route>(routes.begin() + 1, routes.end()));
  EXPECT_EQ(n.lookup(ip(11, 1, 2, 3)), kNoRoute);
  EXPECT_EQ(n.lookup(ip(10, 9, 9, 9)), 1u);
}

TEST(RouteTable, RandomOverlappingPrefixesMatchBruteForce) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<uint32_t> any;
  std::map<std::pair<uint32_t, int>, uint32_t> chosen;  // (prefix, len) -> group
  std::vector<Route> routes;
  auto add = [&](uint32_t prefix, uint8_t len) {
    prefix &= mask_of(len);
    if (chosen.count({prefix, len})) return;
    const uint32_t g = any(rng) % 97;
    chosen[{prefix, len}] = g;
    routes.push_back(Route{prefix, len, g});
  };
  // Nest most longer prefixes inside shorter ones so they overlap.
  auto inside = [&](uint8_t parent_len) {
    std::vector<const Route*> parents;
    for (const Route& r : routes)
      if (r.prefix_len == parent_len) parents.push_back(&r);
    const Route& p = *parents[any(rng) % parents.size()];
    return p.prefix | (any(rng) & ~mask_of(parent_len));
  };
  add(0, 0);
  for (int i = 0; i < 8; ++i) add(any(rng), 8);
  for (int i = 0; i < 64; ++i) add(i % 2 ? inside(8) : any(rng), 16);
  for (int i = 0; i < 1024; ++i) add(i % 4 ? inside(16) : any(rng), 24);
  for (int i = 0; i < 256; ++i) add(inside(16), 20);
  for (int i = 0; i < 4096; ++i) add(i % 4 ? inside(24) : any(rng), 32);
  for (int i = 0; i < 256; ++i) add(inside(24), 30);

  RouteTable t(routes);
  EXPECT_EQ(t.size(), routes.size());
  EXPECT_EQ(t.levels(), 7u);  // /0 /8 /16 /20 /24 /30 /32

  std::map<int, int> hits_by_len;
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t dst;
    if (i % 2) {
      dst = any(rng);
    } else {  // under a random route, random low bits: exercises every level
      const Route& r = routes[any(rng) % routes.size()];
      dst = r.prefix | (any(rng) & ~mask_of(r.prefix_len));
    }
    int len = -1;
    const uint32_t want = brute_lookup(routes, dst, &len);
    ++hits_by_len[len];
    if (t.lookup(dst) != want && ++mismatches <= 5)
      ADD_FAILURE() << ip_to_string(dst) << ": table " << t.lookup(dst) << ", brute force " << want << " (/" << len << ")";
  }
  EXPECT_EQ(mismatches, 0);
  // The draw really hit every length, so every level was exercised.
  for (int len : {0, 8, 16, 20, 24, 30, 32}) EXPECT_GT(hits_by_len[len], 100) << "/" << len;
}

TEST(RouteTable, RejectsMalformedRoutes) {
  auto msg = [](const std::vector<Route>& rs) -> std::string {
    try {
      RouteTable t(rs);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_NE(msg({Route{0, 33, 1}}).find("prefix length 33 > 32"), std::string::npos);
  EXPECT_NE(msg({Route{ip(10, 1, 2, 3), 24, 1}}).find("10.1.2.3/24 has bits set below its prefix length"),
            std::string::npos);
  EXPECT_NE(msg({Route{ip(10, 0, 0, 0), 0, 1}}).find("10.0.0.0/0 has bits set"), std::string::npos);
  EXPECT_NE(msg({Route{ip(10, 1, 2, 0), 24, kNoRoute}}).find("has no group"), std::string::npos);
  EXPECT_NE(msg({Route{ip(10, 1, 2, 0), 24, 1}, Route{ip(10, 1, 2, 0), 24, 2}}).find("listed twice"),
            std::string::npos);
  EXPECT_NE(msg({Route{0, 0, 1}, Route{0, 0, 2}}).find("0.0.0.0/0 listed twice"), std::string::npos);
  // An identical repeat is harmless.
  RouteTable t({Route{ip(10, 1, 2, 0), 24, 1}, Route{ip(10, 1, 2, 0), 24, 1}});
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 99)), 1u);
}

TEST(RouteTable, LookupDoesNotAllocate) {
  std::vector<Route> routes{{0, 0, 3}};
  for (uint32_t i = 0; i < 1000; ++i) routes.push_back(Route{ip(10, 0, 0, 0) + i + 1, 32, i % 7});
  routes.push_back(Route{ip(10, 0, 4, 0), 24, 9});
  RouteTable t(routes);
  uint64_t sum = 0;
  const uint64_t before = test_support::g_allocations.load();
  for (uint32_t i = 0; i < 100000; ++i) sum += t.lookup(ip(10, 0, 0, 0) + (i % 2048));
  const uint64_t after = test_support::g_allocations.load();
  EXPECT_EQ(after - before, 0u);
  EXPECT_GT(sum, 0u);
  // The counter is live: building a table does allocate.
  RouteTable again(routes);
  EXPECT_GT(test_support::g_allocations.load(), after);
  EXPECT_EQ(again.lookup(ip(10, 0, 4, 9)), 9u);
}

}  // namespace
}  // namespace rocesim::topology

// Generators: Poisson load statistics, incast timing, collective structure,
// determinism, and list combination.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "traffic/traffic.h"

namespace rc = rocesim::core;
namespace rt = rocesim::traffic;

namespace {

constexpr uint64_t kGbps = 1000000000ull;
constexpr uint64_t kPsPerS = 1000000000000ull;

// Depth of a flow in its `after` chain (0 = no dependency); every flow here has at most one.
std::vector<uint32_t> chain_depths(const std::vector<rt::Flow>& flows) {
  std::vector<uint32_t> d(flows.size(), 0);
  for (size_t i = 0; i < flows.size(); ++i) {
    uint32_t n = 0;
    for (size_t j = i; !flows[j].after.empty(); j = flows[j].after[0]) {
      EXPECT_EQ(flows[j].after.size(), 1u);
      EXPECT_LT(flows[j].after[0], j);  // dependencies point backwards: a list in dependency order
      ++n;
    }
    d[i] = n;
  }
  return d;
}

std::string invalid_what(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace

// ------------------------------------------------------------------ Poisson load

TEST(Background, FlowCountAndOfferedLoadMatchPoisson) {
  const rt::Hosts hosts(16, 100 * kGbps);
  rt::BackgroundParams p;
  p.load = 0.3;
  p.size_bytes = 65536;
  p.start_ps = 5 * rt::kPsPerUs;
  p.duration_ps = 10 * rt::kPsPerMs;
  rc::Rng rng(42, "traffic.background");
  const auto flows = rt::background(p, hosts, rng);

  // lambda = load * C / (8 * size), C = 16 x 100 Gbps; the count is Poisson(lambda T).
  const double lambda = 0.3 * 16 * 100e9 / (8.0 * 65536);
  const double expected = lambda * 0.010;
  EXPECT_NEAR(double(flows.size()), expected, 3 * std::sqrt(expected));
  // A Poisson process, not just the right mean: counts in disjoint windows
  // are independent Poisson, so over k = 100 windows of 100 us (about 91.6
  // flows each) the dispersion statistic sum (n_i - mean)^2 / mean is
  // chi-square with k - 1 = 99 degrees of freedom: mean 99, sd sqrt(2 * 99)
  // = 14.1; 4 sd either side. Periodic arrivals would give about 0, bursty
  // ones far more.
  {
    const size_t k = 100;
    const uint64_t win = p.duration_ps / k;
    std::vector<double> count(k, 0);
    for (const rt::Flow& f : flows) count[std::min<size_t>((f.start_ps - p.start_ps) / win, k - 1)] += 1;
    const double mean = double(flows.size()) / k;
    double d = 0;
    for (double c : count) d += (c - mean) * (c - mean) / mean;
    EXPECT_NEAR(d, double(k - 1), 4 * std::sqrt(2.0 * (k - 1))) << "index of dispersion over " << k << " windows";
  }

  std::vector<uint64_t> per_src(16), per_dst(16);
  uint64_t prev = 0;
  for (const rt::Flow& f : flows) {
    EXPECT_NE(f.src, f.dst);
    EXPECT_EQ(f.size_bytes, 65536u);
    EXPECT_GE(f.start_ps, p.start_ps);
    EXPECT_LT(f.start_ps, p.start_ps + p.duration_ps);
    EXPECT_GE(f.start_ps, prev);  // sorted by start
    prev = f.start_ps;
    EXPECT_EQ(f.tag, "background");
    ++per_src[f.src];
    ++per_dst[f.dst];
  }
  // Uniform sources and destinations: each about n/16 (binomial, 4 sigma over 32 counts).
  const double n = double(flows.size()), q = 1.0 / 16;
  for (int h = 0; h < 16; ++h) {
    EXPECT_NEAR(double(per_src[h]), n * q, 4 * std::sqrt(n * q * (1 - q))) << h;
    EXPECT_NEAR(double(per_dst[h]), n * q, 4 * std::sqrt(n * q * (1 - q))) << h;
  }
  // Exponential gaps: mean 1/lambda within 3 standard errors (sd of an exponential = its mean).
  const double mean_gap = double(flows.back().start_ps - flows.front().start_ps) / (n - 1) / kPsPerS;
  EXPECT_NEAR(mean_gap, 1 / lambda, 3 * (1 / lambda) / std::sqrt(n - 1));
}

TEST(Background, SourcesWeightedByLinkRate) {
  // 8 hosts at 100 Gbps and 8 at 25 Gbps: each host offers load * its own rate.
  std::vector<uint64_t> rates(16, 100 * kGbps);
  for (int h = 8; h < 16; ++h) rates[h] = 25 * kGbps;
  rt::BackgroundParams p;
  p.load = 0.5;
  p.size_bytes = 100000;
  p.duration_ps = 20 * rt::kPsPerMs;
  rc::Rng rng(3, "bg");
  const auto flows = rt::background(p, rt::Hosts(rates), rng);
  const double c = 8 * 100e9 + 8 * 25e9;
  const double expected = 0.5 * c / (8.0 * 100000) * 0.020;
  EXPECT_NEAR(double(flows.size()), expected, 3 * std::sqrt(expected));
  uint64_t fast = 0;
  for (const auto& f : flows) fast += f.src < 8;
  const double share = 800e9 / c, n = double(flows.size());
  EXPECT_NEAR(double(fast), n * share, 3 * std::sqrt(n * share * (1 - share)));
}

TEST(CdfWorkload, WebSearchLoadAndCount) {
  const rt::Hosts hosts(16, 100 * kGbps);
  rt::CdfWorkloadParams p;  // WebSearch by default
  p.load = 0.5;
  p.duration_ps = 100 * rt::kPsPerMs;
  rc::Rng rng(11, "traffic[0]");
  const auto flows = rt::cdf_workload(p, hosts, rng);
  const double lambda = 0.5 * 16 * 100e9 / (8 * 1711250.0);  // mean of WebSearch
  const double expected = lambda * 0.1;
  EXPECT_NEAR(double(flows.size()), expected, 3 * std::sqrt(expected));
  // Bytes: compound Poisson, Var = lambda T E[S^2] (E[S^2] estimated from the flows).
  double bytes = 0, sq = 0;
  for (const auto& f : flows) {
    bytes += double(f.size_bytes);
    sq += double(f.size_bytes) * double(f.size_bytes);
    EXPECT_EQ(f.tag, "websearch");
    EXPECT_LE(f.size_bytes, 30000000u);
  }
  const double es2 = sq / double(flows.size());
  EXPECT_NEAR(bytes * 8 / 0.1, 0.5 * 16 * 100e9, 3 * std::sqrt(expected * es2) * 8 / 0.1);
}

TEST(CdfWorkload, GivenSourceAndDestinationSets) {
  const rt::Hosts hosts(8, 25 * kGbps);
  rt::CdfWorkloadParams p;
  p.cdf = rt::Cdf::fb_hadoop();
  p.srcs = {0, 1, 2, 3};
  p.dsts = {3, 4, 5};
  p.load = 0.4;
  p.duration_ps = 50 * rt::kPsPerMs;
  p.tag = "hadoop";
  rc::Rng rng(5, "t");
  const auto flows = rt::cdf_workload(p, hosts, rng);
  // Capacity counts the 4 sources only.
  const double expected = 0.4 * 4 * 25e9 / (8 * 120420.75) * 0.050;
  EXPECT_NEAR(double(flows.size()), expected, 3 * std::sqrt(expected));
  std::set<uint32_t> from3;
  for (const auto& f : flows) {
    EXPECT_LE(f.src, 3u);
    EXPECT_GE(f.dst, 3u);
    EXPECT_LE(f.dst, 5u);
    EXPECT_NE(f.src, f.dst);
    EXPECT_EQ(f.tag, "hadoop");
    if (f.src == 3) from3.insert(f.dst);
  }
  EXPECT_EQ(from3, (std::set<uint32_t>{4, 5}));
  p.srcs = {4};
  p.dsts = {4};
  EXPECT_EQ(invalid_what([&] { rt::cdf_workload(p, hosts, rng); }),
            "cdf_workload.dsts: no destination other than source host 4");
}

TEST(Background, ZeroLoadAndGuards) {
  const rt::Hosts hosts(4, 100 * kGbps);
  rc::Rng rng(1, "x");
  rt::BackgroundParams p;
  p.load = 0;
  EXPECT_TRUE(rt::background(p, hosts, rng).empty());
  p.load = 1;
  p.max_flows = 10;
  EXPECT_THROW(rt::background(p, hosts, rng), std::invalid_argument);
  p.load = -0.1;
  EXPECT_EQ(invalid_what([&] { rt::background(p, hosts, rng); }),
            "background.load = -0.100000: must be a finite number >= 0");
}

// ------------------------------------------------------------------ incast

TEST(Incast, RoundsAndSizesExact) {
  const rt::Hosts hosts(16, 25 * kGbps);
  rt::IncastParams p;
  p.receiver = 7;
  p.senders = {1, 2, 3, 9};
  p.size_bytes = 131072;
  p.start_ps = 1000;
  p.interval_ps = 100 * rt::kPsPerUs;
  p.count = 5;
  rc::Rng rng(1, "incast");
  const auto flows = rt::incast(p, hosts, rng);
  ASSERT_EQ(flows.size(), 20u);
  for (uint32_t r = 0; r < 5; ++r)
    for (uint32_t s = 0; s < 4; ++s) {
      const rt::Flow& f = flows[r * 4 + s];
      EXPECT_EQ(f.src, p.senders[s]);
      EXPECT_EQ(f.dst, 7u);
      EXPECT_EQ(f.size_bytes, 131072u);
      EXPECT_EQ(f.start_ps, 1000 + r * 100 * rt::kPsPerUs);
      EXPECT_TRUE(f.after.empty());
    }
}

TEST(Incast, JitterWithinBoundsPerSenderPerRound) {
  const rt::Hosts hosts(64, 25 * kGbps);
  rt::IncastParams p;
  p.receiver = 0;
  p.fan_in = 16;
  p.count = 50;
  p.interval_ps = 10 * rt::kPsPerUs;
  p.jitter_ps = 2 * rt::kPsPerUs;
  rc::Rng rng(9, "incast");
  const auto flows = rt::incast(p, hosts, rng);
  ASSERT_EQ(flows.size(), 800u);
  std::set<uint32_t> senders;
  uint64_t lo = UINT64_MAX, hi = 0;
  std::map<uint32_t, std::set<uint64_t>> offsets_of;  // per sender, over rounds
  for (size_t i = 0; i < flows.size(); ++i) {
    const uint64_t round = i / 16;
    const uint64_t off = flows[i].start_ps - round * p.interval_ps;
    EXPECT_GE(flows[i].start_ps, round * p.interval_ps);
    EXPECT_LT(off, p.jitter_ps);
    lo = std::min(lo, off);
    hi = std::max(hi, off);
    senders.insert(flows[i].src);
    offsets_of[flows[i].src].insert(off);
  }
  EXPECT_EQ(senders.size(), 16u);
  EXPECT_EQ(senders.count(0), 0u);
  // 800 uniform draws on [0, 2 us): the extremes come within 1 % of the ends.
  EXPECT_LT(lo, p.jitter_ps / 100);
  EXPECT_GT(hi, p.jitter_ps * 99 / 100);
  for (const auto& [s, offs] : offsets_of) EXPECT_GT(offs.size(), 40u) << "sender " << s;  // redrawn each round
}

TEST(Incast, JitterIntervalIsHalfOpen) {
  const rt::Hosts hosts(8, 25 * kGbps);
  rt::IncastParams p;
  p.receiver = 0;
  p.senders = {1, 2, 3, 4, 5, 6, 7};
  p.count = 20;
  p.interval_ps = 1000;
  p.jitter_ps = 1;  // [0, 1 ps): no offset at all
  rc::Rng rng(1, "i");
  for (const auto& f : rt::incast(p, hosts, rng)) EXPECT_EQ(f.start_ps % 1000, 0u) << f;
  p.jitter_ps = 3;  // offsets 0, 1, 2 all occur, never 3
  std::set<uint64_t> offs;
  for (const auto& f : rt::incast(p, hosts, rng)) offs.insert(f.start_ps % 1000);
  EXPECT_EQ(offs, (std::set<uint64_t>{0, 1, 2}));
}

TEST(Incast, RandomSendersDistinctAndExcludeReceiver) {
  const rt::Hosts hosts(16, 25 * kGbps);
  rt::IncastParams p;
  p.receiver = 5;
  p.fan_in = 15;  // everyone else
  rc::Rng rng(2, "i");
  const auto flows = rt::incast(p, hosts, rng);
  std::vector<uint32_t> got;
  for (const auto& f : flows) got.push_back(f.src);
  EXPECT_EQ(got, (std::vector<uint32_t>{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  p.fan_in = 16;
  EXPECT_EQ(invalid_what([&] { rt::incast(p, hosts, rng); }),
            "incast.fan_in = 16: must be 1..15 (hosts other than the receiver)");
  p.senders = {1, 5};
  EXPECT_EQ(invalid_what([&] { rt::incast(p, hosts, rng); }), "incast.senders[1] = 5: is the receiver");
  p.receiver = 16;
  EXPECT_EQ(invalid_what([&] { rt::incast(p, hosts, rng); }), "incast.receiver = 16: host out of range (16 hosts)");
}

// ------------------------------------------------------------------ collectives

TEST(RingAllReduce, StepsSizesAndDependencies) {
  const rt::Hosts hosts(16, 100 * kGbps);
  rt::AllReduceParams p;
  p.ranks = {3, 5, 7, 1, 0, 2, 4, 6};
  p.size_bytes = 8 << 20;
  p.start_ps = 777;
  rc::Rng rng(1, "ar");
  const auto flows = rt::ring_allreduce(p, hosts, rng);
  const uint32_t n = 8;
  ASSERT_EQ(flows.size(), n * 2 * (n - 1));
  rt::check_flows(flows, 16);
  std::map<uint32_t, uint32_t> succ;  // ring successor of each host
  for (uint32_t r = 0; r < n; ++r) succ[p.ranks[r]] = p.ranks[(r + 1) % n];
  const auto depth = chain_depths(flows);
  std::map<uint32_t, std::set<uint32_t>> senders_at;  // step -> ranks sending in it
  for (size_t i = 0; i < flows.size(); ++i) {
    const rt::Flow& f = flows[i];
    EXPECT_EQ(f.size_bytes, 1u << 20);
    EXPECT_EQ(f.dst, succ.at(f.src));
    EXPECT_EQ(f.start_ps, 777u);
    EXPECT_LT(depth[i], 2 * (n - 1));
    EXPECT_TRUE(senders_at[depth[i]].insert(f.src).second) << "two sends by one rank in a step";
    if (!f.after.empty()) {
      // Step k+1 of rank i waits for the flow into rank i at step k.
      EXPECT_EQ(flows[f.after[0]].dst, f.src);
      EXPECT_EQ(depth[f.after[0]] + 1, depth[i]);
    }
  }
  EXPECT_EQ(senders_at.size(), 2 * (n - 1));
  for (const auto& [k, s] : senders_at) EXPECT_EQ(s.size(), n) << "step " << k;
}

TEST(RingAllReduce, UnevenChunksForwardWhatArrived) {
  const rt::Hosts hosts(5, 100 * kGbps);
  rt::AllReduceParams p;  // all hosts
  p.size_bytes = 1000003;  // 200000 * 5 + 3
  rc::Rng rng(1, "ar");
  const auto flows = rt::ring_allreduce(p, hosts, rng);
  ASSERT_EQ(flows.size(), 5u * 8);
  for (uint32_t k = 0; k < 8; ++k) {
    uint64_t step_bytes = 0;
    for (uint32_t r = 0; r < 5; ++r) {
      const auto& f = flows[k * 5 + r];
      EXPECT_TRUE(f.size_bytes == 200000 || f.size_bytes == 200001) << f;
      step_bytes += f.size_bytes;
    }
    EXPECT_EQ(step_bytes, 1000003u) << "step " << k;  // every chunk moves once per step
  }
  // A rank forwards the chunk it just received: same size along the chain.
  for (const auto& f : flows) {
    if (!f.after.empty()) {
      EXPECT_EQ(f.size_bytes, flows[f.after[0]].size_bytes) << f;
    }
  }
  p.ranks = {2};
  EXPECT_EQ(invalid_what([&] { rt::ring_allreduce(p, hosts, rng); }), "allreduce.ranks: 1 ranks: need at least 2");
}

TEST(AllToAll, CountsAndSteps) {
  const rt::Hosts hosts(8, 100 * kGbps);
  rt::AllToAllParams p;
  p.ranks = {7, 6, 5, 4, 3, 2};
  p.size_bytes = 6000;
  rc::Rng rng(1, "a2a");
  const auto flows = rt::all_to_all(p, hosts, rng);
  const uint32_t n = 6;
  ASSERT_EQ(flows.size(), n * (n - 1));
  rt::check_flows(flows, 8);
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  const auto depth = chain_depths(flows);
  std::map<uint32_t, std::multiset<uint32_t>> src_at, dst_at;
  for (size_t i = 0; i < flows.size(); ++i) {
    const auto& f = flows[i];
    EXPECT_EQ(f.size_bytes, 1000u);
    EXPECT_TRUE(pairs.insert({f.src, f.dst}).second);
    if (!f.after.empty()) {
      EXPECT_EQ(flows[f.after[0]].src, f.src);  // the sender's previous step
    }
    src_at[depth[i]].insert(f.src);
    dst_at[depth[i]].insert(f.dst);
    // Shift pattern: in step k (depth k-1) rank i sends to rank i + k.
    size_t si = 0, di = 0;
    for (size_t r = 0; r < n; ++r) {
      if (p.ranks[r] == f.src) si = r;
      if (p.ranks[r] == f.dst) di = r;
    }
    EXPECT_EQ((di + n - si) % n, depth[i] + 1u);
  }
  EXPECT_EQ(pairs.size(), size_t(n) * (n - 1));
  ASSERT_EQ(src_at.size(), n - 1u);
  for (uint32_t k = 0; k + 1 < n; ++k) {  // each rank sends once and receives once per step
    EXPECT_EQ(std::set<uint32_t>(src_at[k].begin(), src_at[k].end()).size(), n);
    EXPECT_EQ(std::set<uint32_t>(dst_at[k].begin(), dst_at[k].end()).size(), n);
  }
  p.stepped = false;
  for (const auto& f : rt::all_to_all(p, hosts, rng)) EXPECT_TRUE(f.after.empty());
}

// ------------------------------------------------------------------ long flows

TEST(LongFlows, StaggerAndOverrides) {
  const rt::Hosts hosts(4, 100 * kGbps);
  rt::LongFlowParams p;
  p.pairs = {{0, 1, {}, {}}, {2, 1, {}, {}}, {3, 0, 5000, 42}};
  p.start_ps = 10;
  p.stagger_ps = 5 * rt::kPsPerMs;
  rc::Rng rng(1, "long");
  const auto flows = rt::long_flows(p, hosts, rng);
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0], (rt::Flow{0, 1, 1000000000, 10, 3, 26, "long", {}, 100}));
  EXPECT_EQ(flows[1], (rt::Flow{2, 1, 1000000000, 10 + 5 * rt::kPsPerMs, 3, 26, "long", {}, 100}));
  EXPECT_EQ(flows[2], (rt::Flow{3, 0, 5000, 42, 3, 26, "long", {}, 100}));
  p.pairs = {{1, 1, {}, {}}};
  EXPECT_EQ(invalid_what([&] { rt::long_flows(p, hosts, rng); }), "long.pairs[0].dst = 1: same host as src");
}

// ------------------------------------------------------------------ determinism

TEST(Determinism, SameSeedSameListDifferentSeedDifferent) {
  const rt::Hosts hosts(32, 25 * kGbps);
  auto run = [&](uint64_t seed) {
    rt::CdfWorkloadParams w;
    w.cdf = rt::Cdf::fb_hadoop();
    w.duration_ps = 2 * rt::kPsPerMs;
    rt::IncastParams in;
    in.fan_in = 8;
    in.count = 3;
    in.jitter_ps = 1000000;
    rt::BackgroundParams bg;
    bg.cdf = rt::Cdf::websearch();
    bg.load = 0.2;
    std::vector<rt::Flow> all;
    rc::Rng r0(seed, "traffic[0]"), r1(seed, "traffic[1]"), r2(seed, "traffic[2]");
    rt::append(all, rt::cdf_workload(w, hosts, r0));
    rt::append(all, rt::incast(in, hosts, r1));
    rt::append(all, rt::background(bg, hosts, r2));
    return all;
  };
  const auto a = run(1), b = run(1), c = run(2);
  ASSERT_GT(a.size(), 100u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Not just the count: the first flows themselves differ.
  size_t same = 0;
  for (size_t i = 0; i < std::min(a.size(), c.size()); ++i) same += a[i] == c[i];
  EXPECT_LT(same, a.size() / 10);
}

// ------------------------------------------------------------------ lists

TEST(FlowLists, AppendShiftsAndSortRemapsDependencies) {
  const rt::Hosts hosts(4, 100 * kGbps);
  rc::Rng rng(1, "x");
  std::vector<rt::Flow> all;
  rt::LongFlowParams lp;
  lp.pairs = {{0, 1, {}, 500}};
  rt::append(all, rt::long_flows(lp, hosts, rng));
  rt::AllReduceParams ap;
  ap.ranks = {0, 1, 2};
  ap.size_bytes = 3000;
  ap.start_ps = 100;
  rt::append(all, rt::ring_allreduce(ap, hosts, rng));
  ASSERT_EQ(all.size(), 1u + 12);
  EXPECT_EQ(all[4].after, (std::vector<uint32_t>{1 + 2}));  // step 1 rank 0 after step 0 rank 2, shifted by 1
  rt::check_flows(all, 4);

  const auto before = all;
  rt::sort_by_start(all);
  rt::check_flows(all, 4);
  ASSERT_EQ(all.back(), before[0]);  // the long flow (start 500) moves last
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    EXPECT_EQ(all[i].src, before[i + 1].src);
    for (size_t j = 0; j < all[i].after.size(); ++j) EXPECT_EQ(all[i].after[j] + 1, before[i + 1].after[j]);
  }

  all[0].after = {5};
  all[5].after = {0};
  EXPECT_EQ(invalid_what([&] { rt::check_flows(all, 4); }), "flow 0: in a dependency cycle (or waits on one)");
  all[0].after = {0};
  EXPECT_EQ(invalid_what([&] { rt::check_flows(all, 4); }), "flow 0: depends on itself");
}

// `traffic[]` key tables (issue 10 item 4): each generator kind's table reads
// the entry, writes it into config.resolved.yaml with every key spelled out,
// and the resolved config gives the same flows and is a fixed point. Expected
// flows are worked out here from the generators' definitions (traffic.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>

#include "cli_util.h"
#include "core/config.h"
#include "sim/scenario.h"

using namespace rocesim;
using namespace clitest;

namespace {

constexpr uint64_t kUs = 1000000, kNs = 1000;

sim::Scenario load(const std::string& text, const std::string& name) {
  return sim::read_scenario(*core::Config::load_string(text, name));
}

// The resolved text without its two header comments (which name the file it came from).
std::string body(const std::string& resolved) { return resolved.substr(resolved.find("\nname:") + 1); }

// The `traffic:` entries of a resolved config, one flow map each.
std::vector<std::string> traffic_entries(const std::string& resolved) {
  std::vector<std::string> v;
  size_t p = resolved.find("\ntraffic:\n");
  if (p == std::string::npos) return v;
  p += 10;
  while (resolved.compare(p, 4, "  - ") == 0) {
    const size_t e = resolved.find('\n', p);
    v.push_back(resolved.substr(p + 4, e - p - 4));
    p = e + 1;
  }
  return v;
}

void expect_same_flows(const sim::Scenario& a, const sim::Scenario& b, const std::string& what) {
  ASSERT_EQ(a.flows.size(), b.flows.size()) << what;
  for (size_t i = 0; i < a.flows.size(); ++i) {
    const sim::FlowSpec &x = a.flows[i], &y = b.flows[i];
    SCOPED_TRACE(what + ": flow " + std::to_string(i));
    EXPECT_EQ(x.src_index, y.src_index);
    EXPECT_EQ(x.dst_index, y.dst_index);
    EXPECT_EQ(x.message_bytes, y.message_bytes);
    EXPECT_EQ(x.start_ps, y.start_ps);
    EXPECT_EQ(x.pcp, y.pcp);
    EXPECT_EQ(x.dscp, y.dscp);
    EXPECT_EQ(x.after, y.after);
    EXPECT_EQ(x.tag, y.tag);
  }
}

// 20 hosts on one switch: more than incast's default fan_in (16) needs.
const std::string kTopo = "topology: {kind: single_switch, hosts: 20}\n";

struct RoundTrip {
  sim::Scenario first, second;
  std::string text;
};

// Reads `entry` as the only traffic entry of a scenario in `dir`/in, writes
// the resolved config, reads that back as if from `dir`/out (another
// folder), checks same flows and a fixed point.
RoundTrip round_trip(const std::string& dir, const std::string& entry) {
  RoundTrip r;
  r.first = load(kTopo + "traffic:\n  - " + entry + "\n", dir + "/in/s.yaml");
  r.text = sim::emit_resolved(r.first);
  try {
    r.second = load(r.text, dir + "/out/config.resolved.yaml");
  } catch (const core::ConfigError& e) {
    ADD_FAILURE() << entry << ": resolved config rejected: " << e.what() << "\n" << r.text;
    return r;
  }
  expect_same_flows(r.first, r.second, entry);
  EXPECT_EQ(body(sim::emit_resolved(r.second)), body(r.text)) << entry << ": not a fixed point";
  return r;
}

std::string only_entry(const RoundTrip& r) {
  const std::vector<std::string> e = traffic_entries(r.text);
  return e.size() == 1 ? e[0] : "(" + std::to_string(e.size()) + " entries)";
}

// Chunk c of a buffer of `size` bytes cut into n (traffic.h): size/n, plus one for c < size % n.
uint64_t chunk(uint64_t size, uint64_t n, uint64_t c) { return size / n + (c < size % n ? 1 : 0); }

class TrafficKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir();
    std::system(("mkdir -p " + dir + "/in " + dir + "/out").c_str());
  }
  void TearDown() override { std::system(("rm -rf " + dir).c_str()); }
  std::string dir;
};

}  // namespace

TEST_F(TrafficKeys, Long) {
  // Pair i starts at start + i x stagger unless it gives its own start; size unless its own.
  const RoundTrip r = round_trip(dir,
                                 "{kind: long, pcp: 4, dscp: 10, pairs: [{src: h0, dst: h1}, {src: h2, dst: h3, "
                                 "size: 5KiB}, {src: h4, dst: h5, start: 7us}], size: 3MiB, start: 2us, "
                                 "stagger: 1500ns}");
  ASSERT_EQ(r.first.flows.size(), 3u);
  const uint64_t want_size[] = {3ull << 20, 5 * 1024, 3ull << 20};
  const uint64_t want_start[] = {2 * kUs, 2 * kUs + 1500 * kNs, 7 * kUs};
  for (uint32_t i = 0; i < 3; ++i) {
    const sim::FlowSpec& f = r.first.flows[i];
    EXPECT_EQ(f.src_index, 2 * i);
    EXPECT_EQ(f.dst_index, 2 * i + 1);
    EXPECT_EQ(f.message_bytes, want_size[i]);
    EXPECT_EQ(f.start_ps, want_start[i]);
    EXPECT_EQ(f.pcp, 4u);
    EXPECT_EQ(f.dscp, 10u);
    EXPECT_EQ(f.tag, "long");
  }
  // A pair's own size or start is written only when given; the others follow the entry's.
  EXPECT_EQ(only_entry(r),
            "{kind: long, pcp: 4, dscp: 10, pairs: [{src: h0, dst: h1}, {src: h2, dst: h3, size: 5KiB}, "
            "{src: h4, dst: h5, start: 7us}], size: 3MiB, start: 2us, stagger: 1500ns}");

  const RoundTrip d = round_trip(dir, "{kind: long, pairs: [{src: h7, dst: h2}]}");
  ASSERT_EQ(d.first.flows.size(), 1u);
  EXPECT_EQ(d.first.flows[0].message_bytes, 1000000000u);  // 1 GB
  EXPECT_EQ(d.first.flows[0].start_ps, 0u);
  EXPECT_EQ(d.first.flows[0].pcp, 3u);  // hosts.pcp
  EXPECT_EQ(d.first.flows[0].dscp, 26u);
  EXPECT_EQ(only_entry(d),
            "{kind: long, pcp: 3, dscp: 26, pairs: [{src: h7, dst: h2}], size: 1GB, start: 0ps, stagger: 0ps}");
}

TEST_F(TrafficKeys, Incast) {
  const RoundTrip r = round_trip(dir,
                                 "{kind: incast, pcp: 1, dscp: 8, receiver: h9, senders: [h1, h4, h2], size: 10KiB, "
                                 "start: 5us, interval: 20us, count: 3, jitter: 2us}");
  // Round by round, senders in the given order; each start in [round start, + jitter).
  ASSERT_EQ(r.first.flows.size(), 9u);
  const uint32_t senders[] = {1, 4, 2};
  for (uint32_t round = 0; round < 3; ++round)
    for (uint32_t j = 0; j < 3; ++j) {
      const sim::FlowSpec& f = r.first.flows[round * 3 + j];
      EXPECT_EQ(f.src_index, senders[j]);
      EXPECT_EQ(f.dst_index, 9u);
      EXPECT_EQ(f.message_bytes, 10240u);
      EXPECT_GE(f.start_ps, 5 * kUs + round * 20 * kUs);
      EXPECT_LT(f.start_ps, 5 * kUs + round * 20 * kUs + 2 * kUs);
      EXPECT_EQ(f.pcp, 1u);
      EXPECT_EQ(f.dscp, 8u);
      EXPECT_EQ(f.tag, "incast");
    }
  // With senders, fan_in is not in force and not written.
  EXPECT_EQ(only_entry(r),
            "{kind: incast, pcp: 1, dscp: 8, receiver: h9, senders: [h1, h4, h2], size: 10KiB, start: 5us, "
            "interval: 20us, count: 3, jitter: 2us}");

  // Only the receiver: fan_in 16 random distinct senders, sorted, never the receiver; one round of 64 KiB at 0.
  const RoundTrip d = round_trip(dir, "{kind: incast, receiver: h3}");
  ASSERT_EQ(d.first.flows.size(), 16u);
  std::set<uint32_t> seen;
  for (size_t i = 0; i < 16; ++i) {
    const sim::FlowSpec& f = d.first.flows[i];
    EXPECT_NE(f.src_index, 3u);
    EXPECT_LT(f.src_index, 20u);
    if (i) {
      EXPECT_LT(d.first.flows[i - 1].src_index, f.src_index);
    }
    seen.insert(f.src_index);
    EXPECT_EQ(f.dst_index, 3u);
    EXPECT_EQ(f.message_bytes, 65536u);
    EXPECT_EQ(f.start_ps, 0u);
  }
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_EQ(only_entry(d),
            "{kind: incast, pcp: 3, dscp: 26, receiver: h3, senders: [], fan_in: 16, size: 64KiB, start: 0ps, "
            "interval: 1ms, count: 1, jitter: 0ps}");
}

TEST_F(TrafficKeys, Background) {
  const RoundTrip r =
      round_trip(dir, "{kind: background, pcp: 2, dscp: 4, load: 0.3, start: 1us, duration: 30us, size: 2KiB}");
  // Expected arrivals: load x 20 x 100 Gbps x 30 us / (8 x 2048 B) = 109.9; Poisson, so well above 50.
  EXPECT_GT(r.first.flows.size(), 50u);
  for (const sim::FlowSpec& f : r.first.flows) {
    EXPECT_NE(f.src_index, f.dst_index);
    EXPECT_EQ(f.message_bytes, 2048u);
    EXPECT_GE(f.start_ps, 1 * kUs);
    EXPECT_LT(f.start_ps, 31 * kUs);
    EXPECT_EQ(f.pcp, 2u);
    EXPECT_EQ(f.dscp, 4u);
    EXPECT_EQ(f.tag, "background");
  }
  EXPECT_EQ(only_entry(r), "{kind: background, pcp: 2, dscp: 4, load: 0.3, start: 1us, duration: 30us, size: 2KiB}");

  // Sizes from a CDF: `size` is not in force and not written.
  const RoundTrip c = round_trip(dir, "{kind: background, load: 0.2, duration: 200us, cdf: fb_hadoop, size: 1KiB}");
  EXPECT_FALSE(c.first.flows.empty());
  EXPECT_EQ(only_entry(c),
            "{kind: background, pcp: 3, dscp: 26, load: 0.2, start: 0ps, duration: 200us, cdf: fb_hadoop}");

  const RoundTrip d = round_trip(dir, "{kind: background}");
  // 0.1 x 2 Tbps x 1 ms / (8 x 4096 B) = 6103.5 expected.
  EXPECT_GT(d.first.flows.size(), 5500u);
  EXPECT_LT(d.first.flows.size(), 6700u);
  EXPECT_EQ(only_entry(d), "{kind: background, pcp: 3, dscp: 26, load: 0.1, start: 0ps, duration: 1ms, size: 4KiB}");
}

TEST_F(TrafficKeys, Cdf) {
  const RoundTrip r = round_trip(dir,
                                 "{kind: cdf, pcp: 5, dscp: 40, cdf: fb_hadoop, load: 0.4, start: 3us, duration: "
                                 "400us, srcs: [h0, h7, h3], dsts: h10-h15}");
  EXPECT_FALSE(r.first.flows.empty());
  for (const sim::FlowSpec& f : r.first.flows) {
    EXPECT_TRUE(f.src_index == 0 || f.src_index == 7 || f.src_index == 3) << f.src_index;
    EXPECT_GE(f.dst_index, 10u);
    EXPECT_LE(f.dst_index, 15u);
    EXPECT_GE(f.start_ps, 3 * kUs);
    EXPECT_LT(f.start_ps, 403 * kUs);
    EXPECT_EQ(f.pcp, 5u);
    EXPECT_EQ(f.dscp, 40u);
    EXPECT_EQ(f.tag, "fb_hadoop");  // the CDF's name
  }
  EXPECT_EQ(only_entry(r),
            "{kind: cdf, pcp: 5, dscp: 40, cdf: fb_hadoop, load: 0.4, start: 3us, duration: 400us, srcs: [h0, h7, "
            "h3], dsts: h10-h15}");

  const RoundTrip d = round_trip(dir, "{kind: cdf}");
  EXPECT_FALSE(d.first.flows.empty());
  for (const sim::FlowSpec& f : d.first.flows) {
    EXPECT_LT(f.start_ps, 1000 * kUs);
    EXPECT_EQ(f.tag, "websearch");
  }
  EXPECT_EQ(only_entry(d),
            "{kind: cdf, pcp: 3, dscp: 26, cdf: websearch, load: 0.5, start: 0ps, duration: 1ms, srcs: all, "
            "dsts: all}");
}

TEST_F(TrafficKeys, AllReduce) {
  const RoundTrip r =
      round_trip(dir, "{kind: allreduce, pcp: 4, dscp: 12, ranks: [h5, h0, h3, h9], size: 1001B, start: 4us}");
  // Ring all-reduce over N = 4 ranks: 2(N-1) = 6 steps of N flows; flow (k, r) at k*N + r goes
  // ranks[r] -> ranks[r+1 mod N] with chunk (r - k) mod N, after flow (k-1, r-1 mod N).
  const uint32_t ranks[] = {5, 0, 3, 9};
  const uint64_t N = 4;
  ASSERT_EQ(r.first.flows.size(), 24u);
  for (uint64_t k = 0; k < 6; ++k)
    for (uint64_t q = 0; q < N; ++q) {
      const sim::FlowSpec& f = r.first.flows[k * N + q];
      EXPECT_EQ(f.src_index, ranks[q]);
      EXPECT_EQ(f.dst_index, ranks[(q + 1) % N]);
      EXPECT_EQ(f.message_bytes, chunk(1001, N, (q + 6 * N - k) % N));
      EXPECT_EQ(f.start_ps, 4 * kUs);
      EXPECT_EQ(f.pcp, 4u);
      EXPECT_EQ(f.dscp, 12u);
      const std::vector<uint32_t> after =
          k ? std::vector<uint32_t>{static_cast<uint32_t>((k - 1) * N + (q + N - 1) % N)} : std::vector<uint32_t>{};
      EXPECT_EQ(f.after, after);
      EXPECT_EQ(f.tag, "allreduce");
    }
  EXPECT_EQ(only_entry(r), "{kind: allreduce, pcp: 4, dscp: 12, ranks: [h5, h0, h3, h9], size: 1001B, start: 4us}");

  // Every host, 64 MiB: 2 x 19 steps of 20 flows.
  const RoundTrip d = round_trip(dir, "{kind: allreduce}");
  ASSERT_EQ(d.first.flows.size(), 2u * 19 * 20);
  EXPECT_EQ(d.first.flows[0].message_bytes, chunk(64ull << 20, 20, 0));
  EXPECT_EQ(only_entry(d), "{kind: allreduce, pcp: 3, dscp: 26, ranks: all, size: 64MiB, start: 0ps}");
}

TEST_F(TrafficKeys, AllToAll) {
  const RoundTrip r =
      round_trip(dir, "{kind: alltoall, pcp: 0, dscp: 0, ranks: h2-h5, size: 4KiB, start: 1us, stepped: false}");
  // N = 4: step k = 1..3, flow (k, i) at (k-1)*N + i goes ranks[i] -> ranks[(i+k) mod N] with chunk (i+k) mod N.
  const uint64_t N = 4;
  ASSERT_EQ(r.first.flows.size(), 12u);
  for (uint64_t k = 1; k < N; ++k)
    for (uint64_t i = 0; i < N; ++i) {
      const sim::FlowSpec& f = r.first.flows[(k - 1) * N + i];
      EXPECT_EQ(f.src_index, 2 + i);
      EXPECT_EQ(f.dst_index, 2 + (i + k) % N);
      EXPECT_EQ(f.message_bytes, 1024u);
      EXPECT_EQ(f.start_ps, 1 * kUs);
      EXPECT_EQ(f.pcp, 0u);
      EXPECT_EQ(f.dscp, 0u);
      EXPECT_TRUE(f.after.empty());
      EXPECT_EQ(f.tag, "alltoall");
    }
  EXPECT_EQ(only_entry(r), "{kind: alltoall, pcp: 0, dscp: 0, ranks: h2-h5, size: 4KiB, start: 1us, stepped: false}");

  // Stepped (default): flow (k, i) waits for flow (k-1, i).
  const RoundTrip d = round_trip(dir, "{kind: alltoall}");
  const uint64_t H = 20;
  ASSERT_EQ(d.first.flows.size(), H * (H - 1));
  for (uint64_t k = 1; k < H; ++k)
    for (uint64_t i = 0; i < H; ++i) {
      const sim::FlowSpec& f = d.first.flows[(k - 1) * H + i];
      EXPECT_EQ(f.dst_index, (i + k) % H);
      const std::vector<uint32_t> after =
          k > 1 ? std::vector<uint32_t>{static_cast<uint32_t>((k - 2) * H + i)} : std::vector<uint32_t>{};
      EXPECT_EQ(f.after, after);
    }
  EXPECT_EQ(only_entry(d), "{kind: alltoall, pcp: 3, dscp: 26, ranks: all, size: 64MiB, start: 0ps, stepped: true}");
}

// A flow file relative to the scenario: written as an absolute path, read
// back from another folder. Its priority comes from the file's pg column, so
// the accepted `pcp` is not written.
TEST_F(TrafficKeys, FlowFile) {
  write_file(dir + "/in/flows.txt", "3\n0 1 3 100 4096 0.000001\n2 5 1 100 100 0.0000025\n7 6 0 100 9 0\n");
  const RoundTrip r = round_trip(dir, "{kind: flow_file, pcp: 6, dscp: 7, file: flows.txt}");
  ASSERT_EQ(r.first.flows.size(), 3u);
  const uint32_t src[] = {0, 2, 7}, dst[] = {1, 5, 6}, pcp[] = {3, 1, 0};
  const uint64_t size[] = {4096, 100, 9}, start[] = {1 * kUs, 2500 * kNs, 0};
  for (size_t i = 0; i < 3; ++i) {
    const sim::FlowSpec& f = r.first.flows[i];
    EXPECT_EQ(f.src_index, src[i]);
    EXPECT_EQ(f.dst_index, dst[i]);
    EXPECT_EQ(f.pcp, pcp[i]);
    EXPECT_EQ(f.message_bytes, size[i]);
    EXPECT_EQ(f.start_ps, start[i]);
    EXPECT_EQ(f.dscp, 7u);
    EXPECT_EQ(f.tag, "flow_file");
  }
  EXPECT_EQ(only_entry(r), "{kind: flow_file, dscp: 7, file: " + dir + "/in/flows.txt}");

  const RoundTrip d = round_trip(dir, "{kind: flow_file, file: flows.txt}");
  ASSERT_EQ(d.first.flows.size(), 3u);
  EXPECT_EQ(d.first.flows[0].dscp, 26u);  // hosts.dscp
  EXPECT_EQ(only_entry(d), "{kind: flow_file, dscp: 26, file: " + dir + "/in/flows.txt}");
}

// A CDF file relative to the scenario, for both kinds that take one: written
// as an absolute path, read back from another folder, the same flows with the
// same tag (the CDF is named after the file's absolute path, even when the
// scenario itself is named relative to the working directory).
TEST_F(TrafficKeys, RelativeCdfFile) {
  write_file(dir + "/in/sizes.cdf", "1000 0\n2000 50\n4000 100\n");
  const RoundTrip r = round_trip(dir, "{kind: cdf, cdf: sizes.cdf, load: 0.3, duration: 20us}");
  ASSERT_FALSE(r.first.flows.empty());
  for (const sim::FlowSpec& f : r.first.flows) {
    EXPECT_GE(f.message_bytes, 1000u);
    EXPECT_LE(f.message_bytes, 4000u);
    EXPECT_EQ(f.tag, dir + "/in/sizes.cdf");
  }
  EXPECT_EQ(only_entry(r), "{kind: cdf, pcp: 3, dscp: 26, cdf: " + dir +
                               "/in/sizes.cdf, load: 0.3, start: 0ps, duration: 20us, srcs: all, dsts: all}");
  const RoundTrip b = round_trip(dir, "{kind: background, cdf: sizes.cdf, load: 0.3, duration: 20us}");
  ASSERT_FALSE(b.first.flows.empty());
  for (const sim::FlowSpec& f : b.first.flows) EXPECT_LE(f.message_bytes, 4000u);
  EXPECT_NE(only_entry(b).find("cdf: " + dir + "/in/sizes.cdf}"), std::string::npos) << only_entry(b);

  // The scenario named relative to the working directory ("in/s.yaml" from dir).
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  const sim::Scenario rel = load(kTopo + "traffic:\n  - {kind: cdf, cdf: sizes.cdf, duration: 20us}\n", "in/s.yaml");
  const std::string text = sim::emit_resolved(rel);
  ASSERT_EQ(chdir("/"), 0);
  const sim::Scenario back = load(text, "/config.resolved.yaml");
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_FALSE(rel.flows.empty());
  EXPECT_EQ(rel.flows[0].tag, dir + "/in/sizes.cdf");
  expect_same_flows(rel, back, "relative scenario name");
}

// Host lists: `all`, a range, a list, a non-contiguous list, an empty list.
// Each reads back to the same list (the ring order of an all-reduce: flow r
// of step 0 goes ranks[r] -> ranks[r+1]) and is written in its shortest form.
TEST_F(TrafficKeys, HostListForms) {
  struct Case {
    std::string written, resolved;
    std::vector<uint32_t> ranks;
  };
  std::vector<uint32_t> every(20);
  for (uint32_t i = 0; i < 20; ++i) every[i] = i;
  std::string all_list;
  for (uint32_t i = 0; i < 20; ++i) all_list += (i ? ", h" : "[h") + std::to_string(i);
  all_list += "]";
  for (const Case& c : std::vector<Case>{
           {"all", "all", every},
           {"[]", "all", every},  // empty ranks: every host
           {all_list, "all", every},
           {"h4-h8", "h4-h8", {4, 5, 6, 7, 8}},
           {"[h11, h12, h13]", "h11-h13", {11, 12, 13}},
           {"[h6, h2, h19]", "[h6, h2, h19]", {6, 2, 19}},
           {"[h1, h2, h4]", "[h1, h2, h4]", {1, 2, 4}},
           {"[h3, h2]", "[h3, h2]", {3, 2}},
       }) {
    SCOPED_TRACE(c.written);
    const RoundTrip r = round_trip(dir, "{kind: allreduce, size: 1MiB, ranks: " + c.written + "}");
    const size_t N = c.ranks.size();
    for (const sim::Scenario* s : {&r.first, &r.second}) {
      ASSERT_EQ(s->flows.size(), 2 * (N - 1) * N);
      for (size_t q = 0; q < N; ++q) {
        EXPECT_EQ(s->flows[q].src_index, c.ranks[q]);
        EXPECT_EQ(s->flows[q].dst_index, c.ranks[(q + 1) % N]);
      }
    }
    EXPECT_NE(only_entry(r).find("ranks: " + c.resolved + ","), std::string::npos) << only_entry(r);
  }
  // Incast senders: a one-host range is a list; an empty list means random senders and stays empty.
  const RoundTrip one = round_trip(dir, "{kind: incast, receiver: h0, senders: h3-h3}");
  ASSERT_EQ(one.first.flows.size(), 1u);
  EXPECT_EQ(one.first.flows[0].src_index, 3u);
  EXPECT_NE(only_entry(one).find("senders: [h3],"), std::string::npos) << only_entry(one);
  const RoundTrip rnd = round_trip(dir, "{kind: incast, receiver: h0, senders: [], fan_in: 5}");
  EXPECT_EQ(rnd.first.flows.size(), 5u);
  EXPECT_NE(only_entry(rnd).find("senders: [], fan_in: 5,"), std::string::npos) << only_entry(rnd);
  // cdf srcs/dsts: empty means every host, like `all`.
  const RoundTrip s = round_trip(dir, "{kind: cdf, duration: 20us, srcs: [], dsts: h0-h19}");
  EXPECT_NE(only_entry(s).find("srcs: all, dsts: all}"), std::string::npos) << only_entry(s);
}

// Every kind in one scenario, after explicit flows: `after` indices shift by
// the flows before them, and the whole resolved config is a fixed point.
TEST_F(TrafficKeys, AllKindsTogether) {
  write_file(dir + "/in/f.txt", "1\n3 4 3 100 1000 0.000002\n");
  const std::string scen = kTopo +
                           "flows:\n  - {src: h0, dst: h1, size: 4KiB}\n"
                           "traffic:\n"
                           "  - {kind: long, pairs: [{src: h0, dst: h1}], size: 1MiB}\n"
                           "  - {kind: incast, receiver: h2, senders: h3-h6}\n"
                           "  - {kind: background, duration: 5us}\n"
                           "  - {kind: cdf, duration: 5us, srcs: [h1, h9]}\n"
                           "  - {kind: allreduce, ranks: h0-h3, size: 4KiB}\n"
                           "  - {kind: alltoall, ranks: [h8, h1, h2], size: 3KiB}\n"
                           "  - {kind: flow_file, file: f.txt}\n";
  const sim::Scenario a = load(scen, dir + "/in/s.yaml");
  const std::string text = sim::emit_resolved(a);
  EXPECT_EQ(traffic_entries(text).size(), 7u) << text;
  const sim::Scenario b = load(text, dir + "/out/config.resolved.yaml");
  expect_same_flows(a, b, "all kinds");
  EXPECT_EQ(body(sim::emit_resolved(b)), body(text));
  // The all-reduce's first step-1 flow waits for a flow of its own generator.
  size_t first = 0;
  while (first < a.flows.size() && a.flows[first].tag != "allreduce") ++first;
  ASSERT_LT(first + 4, a.flows.size());
  EXPECT_EQ(a.flows[first + 4].after, std::vector<uint32_t>{static_cast<uint32_t>(first + 3)});
}

// A key of another kind (or misspelt) is refused by the entry's table, at the
// key, with its FILE:LINE:COL; keys of a long pair likewise.
TEST_F(TrafficKeys, KeyOfAnotherKindRefused) {
  struct Case {
    std::string entry, key;
  };
  for (const Case& c : std::vector<Case>{
           {"{kind: incast, receiver: h0, senders: [h1], stepped: true}", "traffic[0].stepped"},
           {"{kind: allreduce, cdf: websearch}", "traffic[0].cdf"},
           {"{kind: background, fan_in: 3}", "traffic[0].fan_in"},
           {"{kind: long, pairs: [{src: h0, dst: h1}], receiver: h2}", "traffic[0].receiver"},
           {"{kind: cdf, size: 4KiB}", "traffic[0].size"},
           {"{kind: alltoall, senders: h1-h3}", "traffic[0].senders"},
           {"{kind: flow_file, file: nosuchfile.txt, load: 0.5}", "traffic[0].load"},
           {"{kind: long, pairs: [{src: h0, dst: h1, stagger: 1us}]}", "traffic[0].pairs[0].stagger"},
       }) {
    SCOPED_TRACE(c.entry);
    try {
      load(kTopo + "traffic:\n  - " + c.entry + "\n", dir + "/in/s.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const core::ConfigError& e) {
      EXPECT_EQ(e.key_path(), c.key) << e.what();
      EXPECT_NE(e.reason().find("unknown key"), std::string::npos) << e.what();
      const std::string key = c.key.substr(c.key.rfind('.') + 1);
      const size_t col = c.entry.find(key + ":") + 5;  // "  - " plus 1-based
      EXPECT_EQ(e.where(), dir + "/in/s.yaml:3:" + std::to_string(col)) << e.what();
    }
  }
}

// Ranges the tables state are the ones the reader enforces.
TEST_F(TrafficKeys, RangesEnforcedAtTheKey) {
  struct Case {
    std::string entry, key, part;
  };
  for (const Case& c : std::vector<Case>{
           {"{kind: incast, receiver: h0, fan_in: 21}", "traffic[0].fan_in", "at most 20"},
           {"{kind: incast, receiver: h0, count: 0}", "traffic[0].count", "at least 1"},
           {"{kind: incast, receiver: h0, interval: 0ps}", "traffic[0].interval", "at least 1ps"},
           {"{kind: background, load: 1.5}", "traffic[0].load", "at most 1"},
           {"{kind: cdf, duration: 0ps}", "traffic[0].duration", "at least 1ps"},
           {"{kind: allreduce, size: 0B}", "traffic[0].size", "at least 1B"},
           {"{kind: long, pairs: [{src: h0, dst: h1, size: 0B}]}", "traffic[0].pairs[0].size", "at least 1B"},
           {"{kind: long, pcp: 8}", "traffic[0].pcp", "at most 7"},
           {"{kind: flow_file, file: f, dscp: 64}", "traffic[0].dscp", "at most 63"},
           {"{kind: incast, receiver: h20}", "traffic[0].receiver", "no host 'h20'"},
           {"{kind: incast}", "traffic[0].receiver", "missing required key"},
           {"{kind: flow_file}", "traffic[0].file", "missing required key"},
           {"{kind: long, pairs: [{src: h0}]}", "traffic[0].pairs[0].dst", "missing required key"},
       }) {
    SCOPED_TRACE(c.entry);
    try {
      load(kTopo + "traffic:\n  - " + c.entry + "\n", dir + "/in/s.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const core::ConfigError& e) {
      EXPECT_EQ(e.key_path(), c.key) << e.what();
      EXPECT_NE(e.reason().find(c.part), std::string::npos) << e.what();
    }
  }
}

// `rocesim keys` and docs/config.md know a section per kind.
TEST(TrafficKeyReference, OneSectionPerKind) {
  const std::vector<std::string> secs = sim::key_reference_sections();
  for (const std::string k : {"long", "incast", "background", "cdf", "allreduce", "alltoall", "flow_file"}) {
    EXPECT_NE(std::find(secs.begin(), secs.end(), "traffic." + k), secs.end()) << k;
    const std::string ref = sim::key_reference("traffic." + k);
    EXPECT_NE(ref.find("| `kind` | `" + k + "` |"), std::string::npos) << ref;
  }
  EXPECT_NE(sim::key_reference("traffic.long").find("| `pairs[].src` |"), std::string::npos);
  EXPECT_EQ(sim::key_reference("traffic.nosuchkind"), "");
}

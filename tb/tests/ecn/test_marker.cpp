// Marker rules other than the WRED statistics: threshold edges, hysteresis
// episodes, codepoint handling and counters, the exact fixed-point WRED
// compare and its random-stream consumption, determinism, validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "ecn/marker.h"

namespace rocesim::ecn {
namespace {

using Mode = MarkerConfig::Mode;
namespace cp = codepoint;

MarkerConfig cfg_threshold(uint64_t k) {
  MarkerConfig c;
  c.mode = Mode::threshold;
  c.k = k;
  return c;
}

MarkerConfig cfg_wred(uint64_t kmin, uint64_t kmax, double pmax) {
  MarkerConfig c;
  c.mode = Mode::wred;
  c.kmin = kmin;
  c.kmax = kmax;
  c.pmax = pmax;
  return c;
}

MarkerConfig cfg_hyst(uint64_t high, uint64_t low) {
  MarkerConfig c;
  c.mode = Mode::hysteresis;
  c.k_high = high;
  c.k_low = low;
  return c;
}

core::Rng rng(uint64_t seed = 1) { return core::Rng(seed, "sw0.eth3.q3"); }

// ---------------------------------------------------------------- threshold

TEST(Threshold, FiresStrictlyAboveK) {
  Marker m(cfg_threshold(65536), rng());
  EXPECT_FALSE(m.decide(0, cp::kEct0).mark);
  EXPECT_FALSE(m.decide(65535, cp::kEct0).mark);
  const Decision at = m.decide(65536, cp::kEct0);
  EXPECT_FALSE(at.mark) << "q == K does not mark";
  EXPECT_FALSE(at.would_mark);
  EXPECT_EQ(at.ecn_out, cp::kEct0);
  const Decision above = m.decide(65537, cp::kEct0);
  EXPECT_TRUE(above.mark) << "q == K+1 marks";
  EXPECT_EQ(above.ecn_out, cp::kCe);
  EXPECT_FALSE(above.drew) << "only WRED draws";
  EXPECT_EQ(m.counters().seen, 4u);
  EXPECT_EQ(m.counters().marked, 1u);
  EXPECT_EQ(m.counters().draws, 0u);
}

TEST(Threshold, ZeroKMarksAnyBacklog) {
  Marker m(cfg_threshold(0), rng());
  EXPECT_FALSE(m.decide(0, cp::kEct1).mark);
  EXPECT_TRUE(m.decide(1, cp::kEct1).mark);
}

TEST(Off, NeverFiresButCounts) {
  MarkerConfig c;  // mode off
  Marker m(c, rng());
  for (uint64_t q : {0ull, 1ull, 1ull << 40}) {
    const Decision d = m.decide(q, cp::kEct0);
    EXPECT_FALSE(d.mark);
    EXPECT_FALSE(d.would_mark);
  }
  EXPECT_EQ(m.counters().seen, 3u);
  EXPECT_EQ(m.counters().ect_seen, 3u);
  EXPECT_EQ(m.counters().fired(), 0u);
}

// ---------------------------------------------------------------- codepoints

TEST(Codepoints, OnlyEctBecomesCe) {
  Marker m(cfg_threshold(1000), rng());
  const Decision not_ect = m.decide(5000, cp::kNotEct);
  EXPECT_FALSE(not_ect.mark);
  EXPECT_TRUE(not_ect.would_mark);
  EXPECT_FALSE(not_ect.ect);
  EXPECT_EQ(not_ect.ecn_out, cp::kNotEct);

  const Decision ect1 = m.decide(5000, cp::kEct1);
  EXPECT_TRUE(ect1.mark);
  EXPECT_TRUE(ect1.ect);
  EXPECT_EQ(ect1.ecn_out, cp::kCe);

  const Decision ect0 = m.decide(5000, cp::kEct0);
  EXPECT_TRUE(ect0.mark);
  EXPECT_EQ(ect0.ecn_out, cp::kCe);

  const Decision ce = m.decide(5000, cp::kCe);
  EXPECT_FALSE(ce.mark) << "already CE: not newly marked";
  EXPECT_TRUE(ce.would_mark);
  EXPECT_FALSE(ce.ect);
  EXPECT_EQ(ce.ecn_out, cp::kCe);

  // Below K nothing fires, whatever the codepoint.
  for (uint8_t e = 0; e < 4; ++e) {
    const Decision d = m.decide(1000, e);
    EXPECT_FALSE(d.would_mark);
    EXPECT_EQ(d.ecn_out, e);
  }

  const Counters& c = m.counters();
  EXPECT_EQ(c.seen, 8u);
  EXPECT_EQ(c.ect_seen, 4u);
  EXPECT_EQ(c.ce_seen, 2u);
  EXPECT_EQ(c.marked, 2u);
  EXPECT_EQ(c.would_mark, 2u) << "not-ECT and CE firings";
  EXPECT_EQ(c.fired(), 4u);
}

TEST(Codepoints, NotEctNeverMarkedInAnyMode) {
  const MarkerConfig cfgs[] = {cfg_threshold(0), cfg_wred(100, 400, 1.0), cfg_hyst(300, 200)};
  for (const MarkerConfig& c : cfgs) {
    Marker m(c, rng());
    core::Rng qs(9, "q");
    uint64_t fired = 0;
    for (int i = 0; i < 5000; ++i) {
      const Decision d = m.decide(qs.below(1000), cp::kNotEct);
      ASSERT_FALSE(d.mark) << mode_name(c.mode);
      fired += d.would_mark;
    }
    EXPECT_EQ(m.counters().marked, 0u) << mode_name(c.mode);
    EXPECT_EQ(m.counters().would_mark, fired) << mode_name(c.mode);
    EXPECT_GT(fired, 1000u) << mode_name(c.mode) << ": the rule did fire";
  }
}

TEST(Codepoints, OutOfRangeCodepointIsACallerBug) {
  Marker m(cfg_threshold(0), rng());
  EXPECT_THROW(m.decide(10, 4), std::invalid_argument);
  EXPECT_EQ(m.counters().seen, 0u);
}

TEST(Counters, SnapshotsSubtract) {
  Marker m(cfg_threshold(10), rng());
  m.decide(20, cp::kEct0);
  m.decide(5, cp::kEct0);
  const Counters a = m.snapshot();
  m.decide(20, cp::kNotEct);
  m.decide(20, cp::kEct1);
  m.decide(20, cp::kCe);
  const Counters d = m.snapshot() - a;
  EXPECT_EQ(d.seen, 3u);
  EXPECT_EQ(d.ect_seen, 1u);
  EXPECT_EQ(d.ce_seen, 1u);
  EXPECT_EQ(d.marked, 1u);
  EXPECT_EQ(d.would_mark, 2u);
  EXPECT_DOUBLE_EQ(d.mark_ratio(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(a.mark_ratio(), 0.5);
  EXPECT_EQ(Counters{}.mark_ratio(), 0.0);
  EXPECT_EQ(a.seen, 2u) << "a snapshot is a copy";
}

// ---------------------------------------------------------------- hysteresis

struct Step {
  uint64_t q;
  bool fires;
};

TEST(Hysteresis, MarksFromFirstOverHighToFirstUnderLow) {
  const uint64_t hi = 200000, lo = 100000;
  // A queue that rises past K_high, wanders (noise) between, falls below
  // K_low, wanders again without exceeding K_high, then exceeds it again.
  const std::vector<Step> trace = {
      {50000, false},  {120000, false}, {90000, false},  {180000, false},
      {200000, false},  // == K_high: does not start
      {150000, false}, {199999, false},
      {200001, true},  // first over K_high: starts
      {180000, true},  {250000, true},
      {100000, true},  // == K_low: does not stop
      {130000, true},  {100001, true},  {210000, true},  {120000, true},
      {99999, false},  // first under K_low: stops (this packet unmarked)
      {150000, false},
      {200000, false},  // == K_high: no restart
      {50000, false},  {199000, false}, {110000, false}, {0, false},
      {300000, true},  // over K_high again: restarts
      {100000, true},  {90000, false},
  };
  Marker m(cfg_hyst(hi, lo), rng());
  uint64_t marks = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    const Decision d = m.decide(trace[i].q, cp::kEct0);
    EXPECT_EQ(d.mark, trace[i].fires) << "packet " << i << " q=" << trace[i].q;
    EXPECT_EQ(d.would_mark, trace[i].fires) << "packet " << i;
    EXPECT_EQ(m.hysteresis_on(), trace[i].fires) << "packet " << i;
    marks += trace[i].fires;
  }
  EXPECT_EQ(m.counters().marked, marks);
  EXPECT_EQ(marks, 10u);
}

// A long noisy trace: the episodes are found by searching for the crossings
// (a different formulation from the marker's state update).
TEST(Hysteresis, NoisySawtoothEpisodes) {
  const uint64_t hi = 300000, lo = 120000;
  core::Rng noise(5, "noise");
  std::vector<uint64_t> q;
  for (int cycle = 0; cycle < 20; ++cycle) {
    for (int i = 0; i < 400; ++i) q.push_back(uint64_t(i) * 1000 + noise.below(40000));          // rise to ~440k
    for (int i = 400; i > 0; --i) q.push_back(uint64_t(i) * 1000 + noise.below(40000));          // fall
  }
  std::vector<bool> expect(q.size(), false);
  size_t episodes = 0;
  for (size_t i = 0; i < q.size();) {
    while (i < q.size() && q[i] <= hi) ++i;  // first over K_high
    if (i == q.size()) break;
    ++episodes;
    while (i < q.size() && q[i] >= lo) expect[i++] = true;  // until the first under K_low
  }
  ASSERT_EQ(episodes, 20u) << "each cycle gives one episode despite the noise";

  Marker m(cfg_hyst(hi, lo), rng());
  for (size_t i = 0; i < q.size(); ++i) {
    // Alternate codepoints: the state belongs to the queue, not the flow.
    const uint8_t e = (i % 3 == 0) ? cp::kNotEct : cp::kEct0;
    const Decision d = m.decide(q[i], e);
    ASSERT_EQ(d.would_mark, bool(expect[i])) << "packet " << i << " q=" << q[i];
    ASSERT_EQ(d.mark, expect[i] && e == cp::kEct0) << "packet " << i;
  }
}

TEST(Hysteresis, NotEctPacketStartsTheEpisode) {
  Marker m(cfg_hyst(1000, 500), rng());
  const Decision a = m.decide(1001, cp::kNotEct);
  EXPECT_FALSE(a.mark);
  EXPECT_TRUE(a.would_mark);
  EXPECT_TRUE(m.decide(700, cp::kEct0).mark) << "episode started by a not-ECT packet";
  EXPECT_FALSE(m.decide(499, cp::kCe).would_mark);
  EXPECT_FALSE(m.decide(700, cp::kEct0).mark);
}

TEST(Hysteresis, EqualThresholdsActLikeAThresholdWithMemoryAtK) {
  Marker m(cfg_hyst(1000, 1000), rng());
  EXPECT_FALSE(m.decide(1000, cp::kEct0).mark);
  EXPECT_TRUE(m.decide(1001, cp::kEct0).mark);
  EXPECT_TRUE(m.decide(1000, cp::kEct0).mark) << "q == K keeps the state";
  EXPECT_FALSE(m.decide(999, cp::kEct0).mark);
  EXPECT_FALSE(m.decide(1000, cp::kEct0).mark);
}

// ---------------------------------------------------------------- WRED, exact rule

TEST(WredRule, FixedPointProbability) {
  EXPECT_EQ(pmax_fixed(1.0), 1ull << 32);
  EXPECT_EQ(pmax_fixed(0.5), 1ull << 31);
  EXPECT_EQ(pmax_fixed(0.2), 858993459u);  // 858993459.2
  EXPECT_EQ(pmax_fixed(0.01), 42949673u);  // 42949672.96
  EXPECT_EQ(pmax_fixed(std::ldexp(1.0, -33)), 1u) << "0.5 rounds half away from zero";
  EXPECT_EQ(pmax_fixed(std::ldexp(0.99, -33)), 0u);
  EXPECT_EQ(pmax_fixed(0.0), 0u);
  EXPECT_EQ(pmax_fixed(std::nan("")), 0u);
}

TEST(WredRule, CompareBoundariesByHand) {
  // Kmin 100 KB, Kmax 400 KB, Pmax 0.2, q = 250 KB: d*P32/span =
  // 150000 * 858993459 / 300000 = 429496729.5, so r fires iff r <= 429496729.
  Marker m(cfg_wred(100000, 400000, 0.2), rng());
  const WredRule& w = m.wred();
  EXPECT_EQ(w.p32, 858993459u);
  EXPECT_TRUE(w.fires(250000, 0));
  EXPECT_TRUE(w.fires(250000, 429496729u));
  EXPECT_FALSE(w.fires(250000, 429496730u));
  EXPECT_FALSE(w.fires(250000, 0xffffffffu));
  // At Kmax, p = Pmax: fires iff r < P32.
  EXPECT_TRUE(w.fires(400000, 858993458u));
  EXPECT_FALSE(w.fires(400000, 858993459u));

  // Pmax 1: q = Kmin+1 fires iff r * 300000 < 2^32, i.e. r <= 14316
  // (2^32 / 300000 = 14316.56); at q = Kmax every word fires.
  Marker m1(cfg_wred(100000, 400000, 1.0), rng());
  EXPECT_TRUE(m1.wred().fires(100001, 14316));
  EXPECT_FALSE(m1.wred().fires(100001, 14317));
  EXPECT_TRUE(m1.wred().fires(400000, 0xffffffffu));

  // The widest span the validation allows does not overflow 64 bits.
  Marker wide(cfg_wred(0, 0xffffffffull, 1.0), rng());
  EXPECT_TRUE(wide.wred().fires(0xffffffffull, 0xffffffffu));
  EXPECT_TRUE(wide.wred().fires(1, 1));   // 2^32-1 < 2^32
  EXPECT_FALSE(wide.wred().fires(1, 2));  // 2^33-2 >= 2^32
}

TEST(WredRule, RampEdgesAreDeterministic) {
  Marker m(cfg_wred(100000, 400000, 0.2), rng());
  for (uint64_t q : {0ull, 99999ull, 100000ull}) {
    const Decision d = m.decide(q, cp::kEct0);
    EXPECT_FALSE(d.would_mark) << q;
    EXPECT_FALSE(d.drew) << q;
  }
  for (uint64_t q : {400001ull, 1000000ull}) {
    const Decision d = m.decide(q, cp::kEct0);
    EXPECT_TRUE(d.mark) << q;
    EXPECT_FALSE(d.drew) << q;
  }
  EXPECT_TRUE(m.decide(100001, cp::kEct0).drew);
  EXPECT_TRUE(m.decide(400000, cp::kEct0).drew) << "Kmax is in the ramp";
  EXPECT_EQ(m.counters().draws, 2u);
}

// One 32-bit word per packet in (Kmin, Kmax], taken as the upper half of the
// stream's next 64-bit output, and none elsewhere (whatever the codepoint).
TEST(WredRule, ConsumesOneWordPerRampPacket) {
  const uint64_t kmin = 5000, kmax = 200000;  // DCQCN paper's Kmin/Kmax
  Marker m(cfg_wred(kmin, kmax, 0.01), core::Rng(77, "leaf3.eth17.q3"));
  core::Rng ref(77, "leaf3.eth17.q3");
  core::Rng qs(3, "trace");
  uint64_t ramp = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t q = qs.below(250000);
    const uint8_t e = uint8_t(qs.below(4));
    const Decision d = m.decide(q, e);
    const bool in_ramp = q > kmin && q <= kmax;
    ASSERT_EQ(d.drew, in_ramp) << "q=" << q;
    if (in_ramp) {
      ++ramp;
      const uint32_t r = uint32_t(ref.next_u64() >> 32);
      ASSERT_EQ(d.rand32, r) << "packet " << i;
      ASSERT_EQ(d.would_mark, uint64_t(r) * (kmax - kmin) < (q - kmin) * 42949673ull) << "packet " << i;
    } else {
      ASSERT_EQ(d.rand32, 0u);
      ASSERT_EQ(d.would_mark, q > kmax);
    }
  }
  EXPECT_EQ(m.counters().draws, ramp);
  EXPECT_GT(ramp, 10000u);
}

// ---------------------------------------------------------------- determinism

// The decisions a seed and a queue name imply, computed here from the rule in
// marker.h (not by a second Marker): for q in (Kmin, Kmax] the word is the
// upper half of the stream's next 64-bit output and the packet fires iff
// r * (Kmax - Kmin) < (q - Kmin) * P32; above Kmax always, at or below Kmin
// never. P32 for Pmax 0.2 is round(0.2 * 2^32) = round(858993459.2).
struct Expected {
  bool fired, drew;
  uint32_t r;
};
constexpr uint64_t kP32Of02 = 858993459;

std::vector<Expected> expected_wred(uint64_t kmin, uint64_t kmax, uint64_t p32, core::Rng stream,
                                    const std::vector<uint64_t>& qs) {
  std::vector<Expected> out;
  for (uint64_t q : qs) {
    if (q > kmax) {
      out.push_back({true, false, 0});
    } else if (q > kmin) {
      const uint32_t r = uint32_t(stream.next_u64() >> 32);
      out.push_back({uint64_t(r) * (kmax - kmin) < (q - kmin) * p32, true, r});
    } else {
      out.push_back({false, false, 0});
    }
  }
  return out;
}

// A fixed trace of queue lengths and codepoints.
struct Trace {
  std::vector<uint64_t> q;
  std::vector<uint8_t> ecn;
};
Trace trace(int n) {
  core::Rng t(11, "trace");
  Trace tr;
  for (int i = 0; i < n; ++i) {
    tr.q.push_back(t.below(450000));
    tr.ecn.push_back(uint8_t(t.below(4)));
  }
  return tr;
}

// Every decision of a marker seeded (seed, name) equals the one computed from
// that stream; two seeds (or two names) give decisions that differ where
// their words do, about 2 p (1 - p) of the ramp packets.
TEST(Determinism, DecisionsAreTheOnesTheSeedAndQueueNameImply) {
  const uint64_t kmin = 100000, kmax = 400000;
  const Trace tr = trace(20000);
  struct Stream {
    uint64_t seed;
    const char* name;
  };
  std::vector<std::vector<Expected>> exp;
  for (const Stream& st : {Stream{42, "sw1.eth3.q3"}, Stream{43, "sw1.eth3.q3"}, Stream{42, "sw1.eth3.q4"}}) {
    exp.push_back(expected_wred(kmin, kmax, kP32Of02, core::Rng(st.seed, st.name), tr.q));
    Marker m(cfg_wred(kmin, kmax, 0.2), core::Rng(st.seed, st.name));
    for (size_t i = 0; i < tr.q.size(); ++i) {
      const Expected& e = exp.back()[i];
      const Decision d = m.decide(tr.q[i], tr.ecn[i]);
      const bool ect = tr.ecn[i] == cp::kEct0 || tr.ecn[i] == cp::kEct1;
      ASSERT_EQ(d.would_mark, e.fired) << st.seed << " " << st.name << " packet " << i;
      ASSERT_EQ(d.drew, e.drew) << "packet " << i;
      ASSERT_EQ(d.rand32, e.r) << "packet " << i;
      ASSERT_EQ(d.ect, ect) << "packet " << i;
      ASSERT_EQ(d.mark, e.fired && ect) << "packet " << i;
      ASSERT_EQ(d.ecn_out, d.mark ? cp::kCe : tr.ecn[i]) << "packet " << i;
    }
  }
  // Two independent streams over the same trace disagree with probability
  // 2 p (1 - p) on a ramp packet of probability p = 0.2 (q - Kmin) / (Kmax - Kmin).
  double mean = 0, var = 0;
  size_t diff_seed = 0, diff_name = 0;
  for (size_t i = 0; i < tr.q.size(); ++i) {
    diff_seed += exp[0][i].fired != exp[1][i].fired;
    diff_name += exp[0][i].fired != exp[2][i].fired;
    if (tr.q[i] > kmin && tr.q[i] <= kmax) {
      const double p = 0.2 * double(tr.q[i] - kmin) / double(kmax - kmin);
      const double d = 2 * p * (1 - p);
      mean += d;
      var += d * (1 - d);
    }
  }
  EXPECT_NEAR(double(diff_seed), mean, 5 * std::sqrt(var));
  EXPECT_NEAR(double(diff_name), mean, 5 * std::sqrt(var));
}

// A copy continues the original's stream where it stands. Kmin 1000, Kmax
// 5000, Pmax 1/2 (P32 = 2^31) at q = 3000: fires iff r * 4000 < 2000 * 2^31,
// i.e. iff r < 2^30. The first 100 decisions used words 1..100, so both the
// original and the copy then decide by words 101..1100 of the stream.
TEST(Determinism, CopiedMarkerContinuesTheStreamWhereItStands) {
  Marker a(cfg_wred(1000, 5000, 0.5), rng(8));
  core::Rng words = rng(8);
  uint64_t fired_before = 0;
  for (int i = 0; i < 100; ++i) {
    a.decide(3000, cp::kEct0);
    fired_before += uint32_t(words.next_u64() >> 32) < (1u << 30);
  }
  Marker b = a;
  uint64_t fired = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint32_t r = uint32_t(words.next_u64() >> 32);
    const bool expect = r < (1u << 30);
    fired += expect;
    const Decision da = a.decide(3000, cp::kEct0), db = b.decide(3000, cp::kEct0);
    ASSERT_EQ(da.rand32, r) << i;
    ASSERT_EQ(db.rand32, r) << i;
    ASSERT_EQ(da.mark, expect) << i;
    ASSERT_EQ(db.mark, expect) << i;
  }
  EXPECT_EQ(a.counters().draws, 1100u);
  EXPECT_EQ(b.counters().draws, 1100u);
  EXPECT_EQ(a.counters().marked, fired_before + fired);
  EXPECT_EQ(b.counters().marked, fired_before + fired) << "the copy carries the counters";
}

// ---------------------------------------------------------------- validation

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& e : v)
    if (e.find(s) != std::string::npos) return true;
  return false;
}

TEST(Config, DefaultsAreValidInEveryMode) {
  for (Mode mode : {Mode::off, Mode::threshold, Mode::wred, Mode::hysteresis}) {
    MarkerConfig c;
    c.mode = mode;
    EXPECT_TRUE(c.validate().empty()) << mode_name(mode);
  }
}

TEST(Config, WredErrors) {
  EXPECT_TRUE(has(cfg_wred(100, 100, 0.2).validate(), "kmin (100) must be below kmax (100)"));
  EXPECT_TRUE(has(cfg_wred(200, 100, 0.2).validate(), "must be below kmax"));
  EXPECT_TRUE(has(cfg_wred(0, 1ull << 32, 0.2).validate(), "below 2^32"));
  EXPECT_TRUE(cfg_wred(0, (1ull << 32) - 1, 0.2).validate().empty());
  EXPECT_TRUE(cfg_wred(7, 8, 1.0).validate().empty());
  for (double p : {0.0, -0.1, 1.0000001, std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_TRUE(has(cfg_wred(100, 200, p).validate(), "must be in (0, 1]")) << p;
  EXPECT_TRUE(has(cfg_wred(100, 200, std::ldexp(0.99, -33)).validate(), "rounds to probability 0"));
  EXPECT_TRUE(cfg_wred(100, 200, std::ldexp(1.0, -33)).validate().empty());
  EXPECT_EQ(cfg_wred(200, 100, 0.0).validate().size(), 2u) << "every problem reported";
}

TEST(Config, HysteresisErrors) {
  EXPECT_TRUE(has(cfg_hyst(100, 101).validate(), "k_low (101) must not exceed k_high (100)"));
  EXPECT_TRUE(cfg_hyst(100, 100).validate().empty());
}

TEST(Config, OnlyTheModesFieldsAreChecked) {
  MarkerConfig c = cfg_threshold(5);
  c.kmin = c.kmax = 0;
  c.pmax = 0;
  c.k_low = 10;
  c.k_high = 1;
  EXPECT_TRUE(c.validate().empty());
}

TEST(Config, MarkerRejectsInvalidConfig) {
  try {
    Marker m(cfg_wred(10, 10, 2.0), rng());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string s = e.what();
    EXPECT_NE(s.find("kmin"), std::string::npos) << s;
    EXPECT_NE(s.find("pmax"), std::string::npos) << s;
  }
}

// Units (config.h): bytes -> cells rounds each threshold up, cells -> bytes
// multiplies; expectations by hand at 256-byte cells.
TEST(Config, UnitConversionRoundsUpToCells) {
  MarkerConfig b;  // the struct's defaults, bytes
  ASSERT_EQ(b.unit, MarkerConfig::Unit::bytes);
  const MarkerConfig c = b.in_unit(MarkerConfig::Unit::cells, 256);
  EXPECT_EQ(c.unit, MarkerConfig::Unit::cells);
  EXPECT_EQ(c.k, 391u);       // 100000 / 256 = 390.625
  EXPECT_EQ(c.kmin, 391u);
  EXPECT_EQ(c.kmax, 1563u);   // 1562.5
  EXPECT_EQ(c.k_high, 782u);  // 781.25
  EXPECT_EQ(c.k_low, 391u);
  EXPECT_EQ(c.pmax, b.pmax);
  // An exact multiple stays exact; 1 byte is one cell; 0 stays 0.
  MarkerConfig e = cfg_threshold(512);
  e.kmin = 1;
  e.kmax = 0;
  const MarkerConfig ec = e.in_unit(MarkerConfig::Unit::cells, 256);
  EXPECT_EQ(ec.k, 2u);
  EXPECT_EQ(ec.kmin, 1u);
  EXPECT_EQ(ec.kmax, 0u);
  // Back to bytes: K_c * cell, never below the original byte value.
  const MarkerConfig back = c.in_unit(MarkerConfig::Unit::bytes, 256);
  EXPECT_EQ(back.unit, MarkerConfig::Unit::bytes);
  EXPECT_EQ(back.k, 391u * 256);
  EXPECT_EQ(back.kmax, 1563u * 256);
  // Same unit: unchanged.
  EXPECT_EQ(c.in_unit(MarkerConfig::Unit::cells, 208).kmax, 1563u);
  EXPECT_THROW(b.in_unit(MarkerConfig::Unit::cells, 0), std::invalid_argument);
  EXPECT_STREQ(unit_name(MarkerConfig::Unit::cells), "cells");
  EXPECT_STREQ(unit_name(MarkerConfig::Unit::bytes), "bytes");
}

TEST(Config, Names) {
  EXPECT_STREQ(mode_name(Mode::wred), "wred");
  EXPECT_STREQ(mode_name(Mode::hysteresis), "hysteresis");
  EXPECT_STREQ(point_name(MarkerConfig::Point::dequeue), "dequeue");
}

}  // namespace
}  // namespace rocesim::ecn

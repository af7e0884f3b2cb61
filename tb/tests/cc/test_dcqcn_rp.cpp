// DcqcnRp with a stub clock (the test passes the times): decrease on CNP,
// fast recovery, alpha decay, additive and hyper increase, the byte counter,
// rate bounds, the monitor period, target clamp modes, release, and exact
// timer processing by next_event_ps()/advance(). Expected values are written
// from the formulas in nic/cc/dcqcn_rp.h, not from the code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "nic/cc/dcqcn_config.h"
#include "nic/cc/dcqcn_rp.h"

namespace cc = rocesim::cc;
using cc::RpEvent;
using cc::RpTrigger;

namespace {

constexpr uint64_t kG = 1000000000ull;
constexpr uint64_t kM = 1000000ull;
constexpr uint64_t kUs = cc::kPsPerUs;
constexpr uint64_t kNever = cc::DcqcnRp::kNever;

// ---------------------------------------------------------------- decrease

TEST(DcqcnRp, IdleBeforeFirstCnp) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG));
  EXPECT_FALSE(rp.active());
  EXPECT_EQ(rp.rate_bps(), 100 * kG);
  EXPECT_EQ(rp.target_bps(), 100 * kG);
  EXPECT_EQ(rp.alpha(), 1.0);
  EXPECT_EQ(rp.next_event_ps(), kNever);  // no timer runs before the first CNP
  rp.on_bytes_sent(50 * kM * 1000, 10 * kUs);  // 50 GB: not counted while idle
  rp.advance(1000000 * kUs);
  EXPECT_EQ(rp.counters().increase_events(), 0u);
  EXPECT_EQ(rp.byte_accumulator(), 0u);
  EXPECT_EQ(rp.rate_bps(), 100 * kG);

  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.initial_rate_bps = 40 * kG;
  cc::DcqcnRp slow(c);
  EXPECT_EQ(slow.rate_bps(), 40 * kG);
  EXPECT_EQ(slow.target_bps(), 100 * kG);
}

TEST(DcqcnRp, FirstCnpWithAlphaOneHalvesRate) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG));
  const uint64_t t0 = 7 * kUs + 3;
  rp.on_cnp(t0);
  EXPECT_TRUE(rp.active());
  EXPECT_EQ(rp.rate_bps(), 50 * kG);     // RC * (1 - 1/2)
  EXPECT_EQ(rp.target_bps(), 100 * kG);  // RT = the old RC
  EXPECT_EQ(rp.alpha(), 1.0);            // (1-g)*1 + g
  EXPECT_EQ(rp.counters().cnps, 1u);
  EXPECT_EQ(rp.counters().first_cnps, 1u);
  EXPECT_EQ(rp.counters().decreases, 1u);
  EXPECT_EQ(rp.last_decrease_ps(), t0);
  EXPECT_EQ(rp.next_event_ps(), t0 + 55 * kUs);  // alpha and increase timers start

  // Any g: alpha = 1 halves, and stays 1; a second CNP halves again with
  // RT = the rate before that CNP.
  for (double g : {1.0 / 16, 0.3, 1.0}) {
    cc::DcqcnConfig c = cc::DcqcnConfig::paper(25 * kG);
    c.g = g;
    cc::DcqcnRp r(c);
    r.on_cnp(0);
    EXPECT_EQ(r.rate_bps(), 12500 * kM) << g;
    EXPECT_EQ(r.target_bps(), 25 * kG) << g;
    EXPECT_EQ(r.alpha(), 1.0) << g;
    r.on_cnp(1 * kUs);
    EXPECT_EQ(r.rate_bps(), 6250 * kM) << g;
    EXPECT_EQ(r.target_bps(), 12500 * kM) << g;
  }
}

TEST(DcqcnRp, NvidiaFirstCnpKeepsTargetAndUsesInitialAlpha) {
  cc::DcqcnRp rp(cc::DcqcnConfig::nvidia(100 * kG));
  EXPECT_EQ(rp.alpha(), 1023.0 / 1024);
  rp.on_cnp(0);
  // RC * (1 - (1023/1024)/2) = 100e9 * 1025/2048, exact.
  EXPECT_EQ(rp.rate_bps(), 50048828125u);
  // clamp_tgt_rate 0 and no increase yet: RT keeps the line rate.
  EXPECT_EQ(rp.target_bps(), 100 * kG);
  EXPECT_EQ(rp.alpha(), (1019.0 / 1024) * (1023.0 / 1024) + 5.0 / 1024);
}

TEST(DcqcnRp, DecreaseUsesAlphaAndMinDecFactor) {
  // decrease_gain 1 (rpg_gd 10): alpha = 1 would cut to 0; min_dec_factor
  // 0.5 keeps it at half; without it the rate falls to min_rate.
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.decrease_gain = 1.0;
  c.min_dec_factor = 0.5;
  cc::DcqcnRp a(c);
  a.on_cnp(0);
  EXPECT_EQ(a.rate_bps(), 50 * kG);
  c.min_dec_factor = 0;
  cc::DcqcnRp b(c);
  b.on_cnp(0);
  EXPECT_EQ(b.rate_bps(), c.min_rate_bps);

  // alpha 0.25 with gain 1/2: RC * 0.875.
  c = cc::DcqcnConfig::paper(100 * kG);
  c.initial_alpha = 0.25;
  cc::DcqcnRp d(c);
  d.on_cnp(0);
  EXPECT_EQ(d.rate_bps(), 87500 * kM);
  EXPECT_EQ(d.alpha(), (1 - 1.0 / 256) * 0.25 + 1.0 / 256);
}

TEST(DcqcnRp, RateOnFirstCnp) {
  cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  c.rate_on_first_cnp_bps = 40 * kG;
  cc::DcqcnRp rp(c);
  rp.on_cnp(0);
  EXPECT_EQ(rp.rate_bps(), 40 * kG);
  EXPECT_EQ(rp.target_bps(), 40 * kG);
  EXPECT_EQ(rp.alpha(), 1023.0 / 1024);
  EXPECT_EQ(rp.counters().first_cnps, 1u);
  // The next CNP (after the monitor period) is an ordinary decrease.
  rp.on_cnp(10 * kUs);
  EXPECT_LT(rp.rate_bps(), 40 * kG);
}

// ------------------------------------------------------------ fast recovery

// R_k = R_T - (R_T - R_0)/2^k for k = 1..F, one timer event at a time.
TEST(DcqcnRp, FastRecoveryFollowsHalvingToTarget) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG), 64);
  const uint64_t t0 = 1000;
  rp.on_cnp(t0);
  const double r0 = 50e9, rt = 100e9;
  for (int k = 1; k <= 5; ++k) {
    const uint64_t tk = t0 + uint64_t(k) * 55 * kUs;
    rp.advance(tk - 1);
    EXPECT_EQ(rp.counters().timer_events, uint64_t(k - 1)) << "timer fired early, k=" << k;
    rp.advance(tk);
    const double expect = rt - (rt - r0) / std::pow(2.0, k);  // exact in double here
    EXPECT_EQ(rp.rate_bps(), uint64_t(expect)) << "k=" << k;
    EXPECT_EQ(rp.target_bps(), 100 * kG) << "k=" << k;
    EXPECT_EQ(rp.counters().fast_recovery, uint64_t(k));
    EXPECT_EQ(rp.timer_stage(), uint64_t(k));
    const cc::RpSample& s = rp.log_at(rp.log_size() - 1);
    EXPECT_EQ(s.event, RpEvent::fast_recovery);
    EXPECT_EQ(s.trigger, RpTrigger::increase_timer);
    EXPECT_EQ(s.time_ps, tk);
  }
  EXPECT_EQ(rp.rate_bps(), 98437500000u);  // 100 - 50/32 Gb/s
  // Event F+1 is additive: RT would be 100 G + 40 M, capped at line rate.
  rp.advance(t0 + 6 * 55 * kUs);
  EXPECT_EQ(rp.counters().additive, 1u);
  EXPECT_EQ(rp.target_bps(), 100 * kG);
  EXPECT_EQ(rp.rate_bps(), (98437500000u + 100 * kG + 1) / 2);
}

// With F = 1 (NVIDIA) and a difference not divisible by 2: the rounded
// form R_1 = R_T - floor((R_T - R_0)/2).
TEST(DcqcnRp, FastRecoveryRoundsTowardTarget) {
  cc::DcqcnRp rp(cc::DcqcnConfig::nvidia(25 * kG));
  rp.on_cnp(0);
  const uint64_t r0 = 12512207031u;  // floor(25e9 * 1025/2048)
  EXPECT_EQ(rp.rate_bps(), r0);
  EXPECT_EQ(rp.target_bps(), 25 * kG);
  rp.advance(300 * kUs);
  EXPECT_EQ(rp.counters().fast_recovery, 1u);
  EXPECT_EQ(rp.rate_bps(), 25 * kG - (25 * kG - r0) / 2);
  rp.advance(600 * kUs);  // i = 2 > F = 1: additive, RT stays capped
  EXPECT_EQ(rp.counters().additive, 1u);
}

TEST(DcqcnRp, FastRecoveryForEachF) {
  for (uint32_t f : {0u, 1u, 3u, 5u, 8u}) {
    cc::DcqcnConfig c = cc::DcqcnConfig::paper(64 * kG);
    c.fast_recovery_stages = f;
    cc::DcqcnRp rp(c);
    rp.on_cnp(0);  // R0 = 32 G, RT = 64 G; 32e9 is divisible by 2^8
    for (uint32_t k = 1; k <= f; ++k) {
      rp.advance(uint64_t(k) * 55 * kUs);
      EXPECT_EQ(rp.rate_bps(), 64 * kG - (32 * kG >> k)) << "F=" << f << " k=" << k;
    }
    EXPECT_EQ(rp.counters().fast_recovery, f);
    rp.advance(uint64_t(f + 1) * 55 * kUs);
    EXPECT_EQ(rp.counters().additive, 1u) << "F=" << f;
  }
}

// ------------------------------------------------------------------- alpha

TEST(DcqcnRp, AlphaDecaysAsPowerOfOneMinusG) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG));
  const double g = 1.0 / 256;
  const uint64_t t0 = 5;
  rp.on_cnp(t0);
  ASSERT_EQ(rp.alpha(), 1.0);
  double expect = 1.0;
  for (int n = 1; n <= 300; ++n) {
    rp.advance(t0 + uint64_t(n) * 55 * kUs);
    expect *= (1 - g);
    EXPECT_EQ(rp.alpha(), expect) << "n=" << n;
    EXPECT_NEAR(rp.alpha(), std::pow(1 - g, n), 1e-12) << "n=" << n;
    EXPECT_EQ(rp.counters().alpha_decays, uint64_t(n));
  }

  // NVIDIA: alpha_0 after the first CNP, then (1019/1024)^n per microsecond.
  cc::DcqcnRp nv(cc::DcqcnConfig::nvidia(100 * kG));
  nv.on_cnp(0);
  const double a0 = nv.alpha();
  for (int n = 1; n <= 250; ++n) {
    nv.advance(uint64_t(n) * kUs);
    EXPECT_NEAR(nv.alpha(), a0 * std::pow(1019.0 / 1024, n), 1e-12) << "n=" << n;
  }
}

TEST(DcqcnRp, CnpRestartsAlphaTimer) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG));
  rp.on_cnp(0);
  rp.advance(54 * kUs);
  rp.on_cnp(54 * kUs);  // 1 us before the alpha timer would expire
  EXPECT_EQ(rp.next_event_ps(), 109 * kUs);
  rp.advance(108 * kUs);
  EXPECT_EQ(rp.counters().alpha_decays, 0u);
  EXPECT_EQ(rp.alpha(), 1.0);
  rp.advance(109 * kUs);
  EXPECT_EQ(rp.counters().alpha_decays, 1u);
  EXPECT_EQ(rp.alpha(), 1 - 1.0 / 256);
  // Alpha rises by g on the next CNP: (1-g)*alpha + g.
  rp.on_cnp(110 * kUs);
  const double g = 1.0 / 256;
  EXPECT_EQ(rp.alpha(), (1 - g) * (1 - g) + g);
}

// --------------------------------------------------------- additive / hyper

// Paper preset with B = 1 MB. Two CNPs put RT below line rate (RT = 50 G,
// RC = 25 G); then F = 5 fast-recovery steps; then each further event adds
// R_AI = 40 Mb/s to RT while only one counter has passed F, and R_HAI =
// 200 Mb/s once both have. RC = ceil((RT + RC)/2) after each event.
TEST(DcqcnRp, AdditiveThenHyperSteps) {
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.byte_counter_bytes = 1000000;
  cc::DcqcnRp rp(c, 128);
  const uint64_t T = 55 * kUs, t0 = 1 * kUs;
  rp.on_cnp(0);
  rp.on_cnp(t0);
  ASSERT_EQ(rp.target_bps(), 50 * kG);
  ASSERT_EQ(rp.rate_bps(), 25 * kG);

  // Fast recovery by the timer: i = 1..5.
  for (int k = 1; k <= 5; ++k) {
    rp.advance(t0 + uint64_t(k) * T);
    EXPECT_EQ(rp.rate_bps(), 50 * kG - (25 * kG >> k)) << k;
  }
  EXPECT_EQ(rp.rate_bps(), 49218750000u);

  // i = 6, j = 0: additive.
  rp.advance(t0 + 6 * T);
  EXPECT_EQ(rp.target_bps(), 50040 * kM);
  EXPECT_EQ(rp.rate_bps(), 49629375000u);  // (49218750000 + 50040000000) / 2
  // i = 7: additive.
  rp.advance(t0 + 7 * T);
  EXPECT_EQ(rp.target_bps(), 50080 * kM);
  EXPECT_EQ(rp.rate_bps(), 49854687500u);
  EXPECT_EQ(rp.counters().additive, 2u);
  EXPECT_EQ(rp.counters().hyper, 0u);

  // Byte-counter events j = 1..5 (i = 7 > F, j <= F): additive each.
  uint64_t rt = 50080 * kM, rc = 49854687500u;
  const uint64_t tb = t0 + 7 * T + 10 * kUs;
  for (int jj = 1; jj <= 5; ++jj) {
    rp.on_bytes_sent(1000000, tb);
    rt += 40 * kM;
    rc = (rt + rc + 1) / 2;
    EXPECT_EQ(rp.byte_stage(), uint64_t(jj));
    EXPECT_EQ(rp.target_bps(), rt) << "j=" << jj;
    EXPECT_EQ(rp.rate_bps(), rc) << "j=" << jj;
    EXPECT_EQ(rp.log_at(rp.log_size() - 1).event, RpEvent::additive_increase);
  }
  EXPECT_EQ(rt, 50280 * kM);
  EXPECT_EQ(rp.counters().additive, 7u);

  // j = 6: min(i, j) = 6 > F: hyper, RT += R_HAI.
  rp.on_bytes_sent(1000000, tb);
  rt += 200 * kM;
  rc = (rt + rc + 1) / 2;
  EXPECT_EQ(rp.target_bps(), 50480 * kM);
  EXPECT_EQ(rp.rate_bps(), rc);
  EXPECT_EQ(rp.counters().hyper, 1u);
  EXPECT_EQ(rp.log_at(rp.log_size() - 1).event, RpEvent::hyper_increase);
  EXPECT_EQ(rp.log_at(rp.log_size() - 1).trigger, RpTrigger::byte_counter);

  // Every later event, timer or bytes, is hyper: +200 Mb/s each.
  rp.advance(t0 + 8 * T);  // i = 8
  EXPECT_EQ(rp.target_bps(), 50680 * kM);
  rp.on_bytes_sent(2000000, t0 + 8 * T + 1);  // j = 7, 8
  EXPECT_EQ(rp.target_bps(), 51080 * kM);
  EXPECT_EQ(rp.counters().hyper, 4u);
  EXPECT_EQ(rp.counters().fast_recovery, 5u);
  EXPECT_EQ(rp.counters().additive, 7u);

  // A CNP resets the stages: the next event is fast recovery again.
  rp.on_cnp(t0 + 8 * T + 2);
  EXPECT_EQ(rp.timer_stage(), 0u);
  EXPECT_EQ(rp.byte_stage(), 0u);
  rp.on_bytes_sent(1000000, t0 + 8 * T + 3);
  EXPECT_EQ(rp.counters().fast_recovery, 6u);
}

TEST(DcqcnRp, HyperScaledByStage) {
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.byte_counter_bytes = 1000000;
  c.hyper_scaled_by_stage = true;
  cc::DcqcnRp rp(c);
  rp.on_cnp(0);
  rp.on_cnp(1);  // RT = 50 G
  rp.on_bytes_sent(6000000, 2);  // j = 1..5 fast recovery, j = 6 additive (i = 0)
  EXPECT_EQ(rp.counters().fast_recovery, 5u);
  EXPECT_EQ(rp.counters().additive, 1u);
  EXPECT_EQ(rp.target_bps(), 50040 * kM);
  for (int k = 1; k <= 5; ++k) rp.advance(1 + uint64_t(k) * 55 * kUs);  // i = 1..5: additive (j = 6 > F)
  EXPECT_EQ(rp.counters().additive, 6u);
  EXPECT_EQ(rp.target_bps(), 50240 * kM);
  rp.advance(1 + 6 * 55 * kUs);  // i = 6, j = 6: hyper, (6-5) * R_HAI
  EXPECT_EQ(rp.target_bps(), 50440 * kM);
  rp.on_bytes_sent(1000000, 1 + 6 * 55 * kUs);  // j = 7, i = 6: min 6, (6-5) * R_HAI
  EXPECT_EQ(rp.target_bps(), 50640 * kM);
  rp.advance(1 + 7 * 55 * kUs);  // i = 7, j = 7: (7-5) * R_HAI
  EXPECT_EQ(rp.target_bps(), 51040 * kM);
  EXPECT_EQ(rp.counters().hyper, 3u);
}

// ------------------------------------------------------------ byte counter

TEST(DcqcnRp, ByteCounterFiresEveryBBytes) {
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.byte_counter_bytes = 1000000;
  c.increase_timer_ps = 0;  // byte counter only
  cc::DcqcnRp rp(c);
  rp.on_cnp(0);  // R0 = 50 G, RT = 100 G
  EXPECT_EQ(rp.next_event_ps(), 55 * kUs);  // only the alpha timer
  rp.on_bytes_sent(999999, 1);
  EXPECT_EQ(rp.counters().byte_events, 0u);
  EXPECT_EQ(rp.byte_accumulator(), 999999u);
  rp.on_bytes_sent(1, 2);
  EXPECT_EQ(rp.counters().byte_events, 1u);
  EXPECT_EQ(rp.byte_accumulator(), 0u);
  EXPECT_EQ(rp.rate_bps(), 75 * kG);  // k = 1
  rp.on_bytes_sent(3000005, 3);       // three events at once, 5 bytes left over
  EXPECT_EQ(rp.counters().byte_events, 4u);
  EXPECT_EQ(rp.byte_accumulator(), 5u);
  EXPECT_EQ(rp.rate_bps(), 100 * kG - 50 * kG / 16);  // k = 4

  // Packet by packet: 1000-byte packets, one event on every 1000th packet.
  cc::DcqcnRp p(c);
  p.on_cnp(0);
  for (int n = 1; n <= 5000; ++n) {
    p.on_bytes_sent(1000, uint64_t(n) * 80000);  // 80 ns per packet
    EXPECT_EQ(p.counters().byte_events, uint64_t(n / 1000)) << n;
  }
  // A decrease clears the accumulator.
  p.on_bytes_sent(700, 5001 * 80000ull);
  EXPECT_EQ(p.byte_accumulator(), 700u);
  p.on_cnp(5002 * 80000ull);
  EXPECT_EQ(p.byte_accumulator(), 0u);
}

// -------------------------------------------------------------------- bounds

struct BoundsCheck {
  uint64_t min = 0, line = 0, samples = 0;
  bool ok = true;
};

void check_bounds(void* ctx, const cc::RpSample& s) {
  auto* b = static_cast<BoundsCheck*>(ctx);
  ++b->samples;
  if (s.rate_bps < b->min || s.rate_bps > s.target_bps || s.target_bps > b->line || s.alpha < 0 || s.alpha > 1) {
    b->ok = false;
    ADD_FAILURE() << "out of bounds at " << s.time_ps << ": RC " << s.rate_bps << " RT " << s.target_bps << " alpha "
                  << s.alpha << " after " << cc::rp_event_name(s.event);
  }
}

TEST(DcqcnRp, RatesStayWithinMinAndLine) {
  for (int preset = 0; preset < 2; ++preset) {
    const cc::DcqcnConfig c = preset ? cc::DcqcnConfig::nvidia(25 * kG) : cc::DcqcnConfig::paper(25 * kG);
    cc::DcqcnRp rp(c);
    BoundsCheck b{c.min_rate_bps, c.line_rate_bps};
    rp.set_observer(check_bounds, &b);
    // A CNP storm: one every 2 us for 10 ms drives RC to the floor.
    uint64_t t = 0;
    for (; t < 10000 * kUs; t += 2 * kUs) {
      rp.on_cnp(t);
      EXPECT_GE(rp.rate_bps(), c.min_rate_bps);
    }
    EXPECT_EQ(rp.rate_bps(), c.min_rate_bps) << preset;
    // Then 100 ms without CNPs, sending at the current rate in 1 us slices.
    for (; t < 110000 * kUs; t += kUs) {
      rp.advance(t);
      rp.on_bytes_sent(rp.rate_bps() / 8 / 1000000, t);
      EXPECT_LE(rp.rate_bps(), c.line_rate_bps);
      EXPECT_LE(rp.target_bps(), c.line_rate_bps);
    }
    EXPECT_EQ(rp.rate_bps(), c.line_rate_bps) << preset;
    EXPECT_TRUE(b.ok);
    EXPECT_GT(b.samples, 1000u);
    EXPECT_GT(rp.counters().hyper, 0u) << preset;
  }
}

// ---------------------------------------------------- monitor period, clamp

TEST(DcqcnRp, AtMostOneDecreasePerMonitorPeriod) {
  cc::DcqcnRp rp(cc::DcqcnConfig::nvidia(100 * kG), 256);
  rp.on_cnp(0);  // immediate
  const uint64_t r1 = rp.rate_bps();
  rp.on_cnp(1 * kUs);  // deferred to 4 us
  EXPECT_TRUE(rp.decrease_pending());
  EXPECT_EQ(rp.rate_bps(), r1);
  rp.on_cnp(2 * kUs);  // merged
  EXPECT_EQ(rp.counters().cnps, 3u);
  EXPECT_EQ(rp.counters().cnps_deferred, 1u);
  EXPECT_EQ(rp.counters().cnps_coalesced, 1u);
  EXPECT_EQ(rp.counters().decreases, 1u);
  rp.advance(4 * kUs - 1);
  EXPECT_EQ(rp.counters().decreases, 1u);
  rp.advance(4 * kUs);
  EXPECT_EQ(rp.counters().decreases, 2u);
  EXPECT_EQ(rp.last_decrease_ps(), 4 * kUs);
  EXPECT_LT(rp.rate_bps(), r1);
  EXPECT_FALSE(rp.decrease_pending());
  // The decrease is logged at exactly 4 us.
  bool seen = false;
  for (size_t k = 0; k < rp.log_size(); ++k) {
    const cc::RpSample& s = rp.log_at(k);
    if (s.event == RpEvent::decrease) {
      EXPECT_EQ(s.time_ps, 4 * kUs);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
  // Exactly one period later a CNP acts at once.
  rp.on_cnp(8 * kUs);
  EXPECT_EQ(rp.counters().decreases, 3u);
  EXPECT_EQ(rp.last_decrease_ps(), 8 * kUs);

  // Paper: every CNP decreases at once.
  cc::DcqcnRp p(cc::DcqcnConfig::paper(100 * kG));
  for (int k = 0; k < 5; ++k) p.on_cnp(uint64_t(k));
  EXPECT_EQ(p.counters().decreases, 5u);
  EXPECT_EQ(p.rate_bps(), 100 * kG / 32);
}

TEST(DcqcnRp, NvidiaClampOnlyAfterAnIncrease) {
  cc::DcqcnRp rp(cc::DcqcnConfig::nvidia(100 * kG));
  rp.on_cnp(0);
  const uint64_t r1 = rp.rate_bps();
  rp.on_cnp(10 * kUs);  // no increase since the first cut: RT stays
  EXPECT_EQ(rp.target_bps(), 100 * kG);
  const uint64_t r2 = rp.rate_bps();
  EXPECT_LT(r2, r1);
  rp.advance(310 * kUs);  // one timer increase (fast recovery, i = 1)
  EXPECT_EQ(rp.counters().timer_events, 1u);
  const uint64_t r3 = rp.rate_bps();
  rp.on_cnp(311 * kUs);  // clamp_tgt_rate_after_time_inc: RT = RC
  EXPECT_EQ(rp.target_bps(), r3);

  // With clamp_target_after_timer_increase off, a timer increase does not
  // clamp, a byte-counter increase does.
  cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  c.clamp_target_after_timer_increase = false;
  cc::DcqcnRp q(c);
  q.on_cnp(0);
  q.advance(300 * kUs);
  q.on_cnp(301 * kUs);
  EXPECT_EQ(q.target_bps(), 100 * kG);
  q.on_bytes_sent(c.byte_counter_bytes, 302 * kUs);
  const uint64_t rq = q.rate_bps();
  q.on_cnp(310 * kUs);
  EXPECT_EQ(q.target_bps(), rq);

  // clamp_target (paper): always.
  c.clamp_target = true;
  cc::DcqcnRp p(c);
  p.on_cnp(0);
  EXPECT_EQ(p.target_bps(), 100 * kG);  // RT = RC before the cut = line rate
  const uint64_t rp1 = p.rate_bps();
  p.on_cnp(10 * kUs);
  EXPECT_EQ(p.target_bps(), rp1);
}

// ------------------------------------------------------------------ release

TEST(DcqcnRp, NvidiaReleasesAtLineRate) {
  const cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  cc::DcqcnRp rp(c, 16);
  rp.on_cnp(0);
  uint64_t t = 0;
  while (rp.active() && t < 100000 * kUs) {
    t += kUs;
    rp.advance(t);
    rp.on_bytes_sent(rp.rate_bps() / 8 / 1000000, t);
  }
  ASSERT_FALSE(rp.active());
  EXPECT_EQ(rp.counters().releases, 1u);
  EXPECT_EQ(rp.rate_bps(), 100 * kG);
  EXPECT_EQ(rp.target_bps(), 100 * kG);
  EXPECT_EQ(rp.alpha(), 1023.0 / 1024);
  EXPECT_EQ(rp.next_event_ps(), kNever);
  EXPECT_EQ(rp.log_at(rp.log_size() - 1).event, RpEvent::release);
  rp.on_cnp(t + 1);
  EXPECT_EQ(rp.counters().first_cnps, 2u);
  EXPECT_EQ(rp.rate_bps(), 50048828125u);

  // The paper preset keeps its timers at line rate.
  cc::DcqcnRp p(cc::DcqcnConfig::paper(100 * kG));
  p.on_cnp(0);
  p.advance(100000 * kUs);
  EXPECT_TRUE(p.active());
  EXPECT_EQ(p.rate_bps(), 100 * kG);
  EXPECT_NE(p.next_event_ps(), kNever);
}

// ------------------------------------------------- next_event_ps / advance

// Alpha period 7 us, increase timer 11 us: one advance far in the future
// processes every event at its exact time, in time order (alpha before
// increase at equal times), identically to stepping by next_event_ps().
TEST(DcqcnRp, AdvanceProcessesEventsAtExactTimesInOrder) {
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.alpha_period_ps = 7 * kUs;
  c.increase_timer_ps = 11 * kUs;
  const uint64_t t0 = 3, horizon = t0 + 100 * kUs;

  std::vector<std::pair<uint64_t, RpEvent>> expect;
  for (uint64_t k = 1; t0 + 7 * kUs * k <= horizon; ++k) expect.push_back({t0 + 7 * kUs * k, RpEvent::alpha_decay});
  for (uint64_t m = 1; t0 + 11 * kUs * m <= horizon; ++m) {
    const RpEvent e = m <= 5 ? RpEvent::fast_recovery : RpEvent::additive_increase;
    expect.push_back({t0 + 11 * kUs * m, e});
  }
  std::stable_sort(expect.begin(), expect.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });  // alpha first on ties (77 us)
  ASSERT_EQ(expect.size(), 14u + 9u);

  cc::DcqcnRp big(c, 64);
  big.on_cnp(t0);
  EXPECT_EQ(big.next_event_ps(), t0 + 7 * kUs);
  big.advance(t0 + 7 * kUs - 1);  // before the first event: nothing
  EXPECT_EQ(big.log_size(), 1u);
  big.advance(horizon);
  ASSERT_EQ(big.log_size(), 1 + expect.size());
  for (size_t k = 0; k < expect.size(); ++k) {
    EXPECT_EQ(big.log_at(k + 1).time_ps, expect[k].first) << k;
    EXPECT_EQ(big.log_at(k + 1).event, expect[k].second) << k;
  }
  EXPECT_EQ(big.next_event_ps(), t0 + 105 * kUs);  // 15 * 7 us

  cc::DcqcnRp step(c, 64);
  step.on_cnp(t0);
  size_t wakeups = 0;
  while (step.next_event_ps() <= horizon) {
    step.advance(step.next_event_ps());
    ++wakeups;
  }
  EXPECT_EQ(wakeups, expect.size() - 1);  // the two events at 77 us share one wake-up
  ASSERT_EQ(step.log_size(), big.log_size());
  for (size_t k = 0; k < big.log_size(); ++k) {
    EXPECT_EQ(step.log_at(k).time_ps, big.log_at(k).time_ps);
    EXPECT_EQ(step.log_at(k).rate_bps, big.log_at(k).rate_bps);
    EXPECT_EQ(step.log_at(k).target_bps, big.log_at(k).target_bps);
    EXPECT_EQ(step.log_at(k).alpha, big.log_at(k).alpha);
  }
  EXPECT_EQ(step.rate_bps(), big.rate_bps());
  EXPECT_EQ(step.alpha(), big.alpha());
}

TEST(DcqcnRp, PendingDecreaseComesFirstAtEqualTimes) {
  // Monitor period 4 us, alpha period 4 us: the deferred decrease at 4 us
  // restarts the alpha timer, which then does not fire at 4 us.
  cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  c.alpha_period_ps = 4 * kUs;
  cc::DcqcnRp rp(c, 8);
  rp.on_cnp(0);
  rp.on_cnp(1 * kUs);
  EXPECT_EQ(rp.next_event_ps(), 4 * kUs);
  rp.advance(4 * kUs);
  EXPECT_EQ(rp.counters().decreases, 2u);
  EXPECT_EQ(rp.counters().alpha_decays, 0u);
  EXPECT_EQ(rp.next_event_ps(), 8 * kUs);
}

TEST(DcqcnRp, InputsAtAnEventTimeComeAfterIt) {
  // A CNP at the increase timer's time: the timer event (fast recovery)
  // happens first, then the CNP cuts from the recovered rate.
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG));
  rp.on_cnp(0);
  rp.on_cnp(55 * kUs);
  EXPECT_EQ(rp.counters().fast_recovery, 1u);
  EXPECT_EQ(rp.counters().alpha_decays, 1u);
  EXPECT_EQ(rp.target_bps(), 75 * kG);  // clamp to the recovered rate
  // alpha = (1-g) after the decay; the cut uses it, then alpha rises.
  const double g = 1.0 / 256, a = 1 - g;
  EXPECT_EQ(rp.rate_bps(), uint64_t(std::floor(75e9 * (1 - a * 0.5))));
  EXPECT_EQ(rp.alpha(), (1 - g) * a + g);
}

TEST(DcqcnRp, EarlierTimeIsTakenAsLatest) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG), 8);
  rp.on_cnp(100 * kUs);
  rp.on_cnp(10 * kUs);  // taken as 100 us
  EXPECT_EQ(rp.last_decrease_ps(), 100 * kUs);
  rp.advance(0);
  EXPECT_EQ(rp.counters().alpha_decays, 0u);
  EXPECT_EQ(rp.log_at(1).time_ps, 100 * kUs);
}

TEST(DcqcnRp, ZeroPeriodsDisableTimersInsteadOfHanging) {
  // validate() rejects alpha_period_ps = 0; the RP still must not spin.
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.alpha_period_ps = 0;
  c.increase_timer_ps = 0;
  ASSERT_FALSE(c.validate().empty());
  cc::DcqcnRp rp(c);
  rp.on_cnp(0);
  EXPECT_EQ(rp.next_event_ps(), kNever);
  rp.advance(1000000 * kUs);
  EXPECT_EQ(rp.counters().alpha_decays, 0u);
}

// ------------------------------------------------------- log and observer

void count_samples(void* ctx, const cc::RpSample&) { ++*static_cast<int*>(ctx); }

TEST(DcqcnRp, RingKeepsTheLastChangesAndObserverSeesAll) {
  cc::DcqcnRp rp(cc::DcqcnConfig::paper(100 * kG), 4);
  int seen = 0;
  rp.set_observer(count_samples, &seen);
  rp.on_cnp(0);
  rp.advance(5 * 55 * kUs);  // 5 alpha decays + 5 fast recovery steps
  EXPECT_EQ(seen, 11);
  EXPECT_EQ(rp.log_size(), 4u);
  EXPECT_EQ(rp.log_overwritten(), 7u);
  // Oldest first: the last two timer instants, alpha then increase each.
  EXPECT_EQ(rp.log_at(0).time_ps, 4 * 55 * kUs);
  EXPECT_EQ(rp.log_at(0).event, RpEvent::alpha_decay);
  EXPECT_EQ(rp.log_at(1).event, RpEvent::fast_recovery);
  EXPECT_EQ(rp.log_at(3).time_ps, 5 * 55 * kUs);
  EXPECT_EQ(rp.log_at(3).rate_bps, rp.rate_bps());
  EXPECT_EQ(rp.log_at(3).target_bps, rp.target_bps());
  EXPECT_EQ(rp.log_at(3).alpha, rp.alpha());
  EXPECT_STREQ(cc::rp_event_name(rp.log_at(3).event), "fast_recovery");
  EXPECT_STREQ(cc::rp_trigger_name(rp.log_at(3).trigger), "increase_timer");
  rp.set_observer(nullptr, nullptr);
  rp.on_cnp(5 * 55 * kUs + 1);
  EXPECT_EQ(seen, 11);
  rp.reset();
  EXPECT_EQ(rp.log_size(), 0u);
  EXPECT_FALSE(rp.active());
  EXPECT_EQ(rp.counters().cnps, 0u);
  EXPECT_EQ(rp.rate_bps(), 100 * kG);
}

}  // namespace

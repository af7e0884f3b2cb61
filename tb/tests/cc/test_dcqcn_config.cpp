// DcqcnConfig: both presets match their published sources (cited per value)
// and validate; validate() names each bad field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nic/cc/dcqcn_config.h"

namespace cc = rocesim::cc;

namespace {

constexpr uint64_t kG = 1000000000ull;

bool mentions(const std::vector<std::string>& errs, const std::string& word) {
  for (const auto& e : errs)
    if (e.find(word) != std::string::npos) return true;
  return false;
}

// The presets against their published sources, each value written in the
// source's own units and converted here (Mb/s -> bit/s, us -> ps, firmware
// fixed-point fields -> fractions), with the source on the line. Sources:
//   [Z] D. Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//       SIGCOMM 2015 (section 3: the RP/NP algorithm and its parameters);
//   [R] /work/shared/design/REFERENCE.md, "DCQCN", which states the paper's
//       and NVIDIA's defaults;
//   [N] NVIDIA ConnectX firmware defaults (DOCA "DCQCN CC Parameters",
//       MLNX_OFED roce_rp / roce_np sysfs: rpg_*, dce_tcp_*, ...);
//   [H] HPCC's ns-3 (MinRate default), for the one value the paper omits.
// Relations the sources state are checked from the fields as well, so a
// preset that keeps its numbers but breaks the algorithm's intent fails too.
TEST(DcqcnConfig, PaperPresetMatchesZhuEtAl2015) {
  const uint64_t us = 1000000, mbps = 1000000;  // ps per us, bit/s per Mb/s
  const cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  EXPECT_TRUE(c.validate().empty());
  EXPECT_EQ(c.line_rate_bps, 100 * kG);
  EXPECT_EQ(c.start_rate_bps(), 100 * kG) << "[Z] a flow starts at line rate";
  EXPECT_EQ(c.g, 1.0 / 256) << "[Z][R] g = 1/256";
  EXPECT_EQ(c.initial_alpha, 1.0) << "[Z] alpha starts at 1";
  EXPECT_EQ(c.alpha_period_ps, 55 * us) << "[Z][R] alpha timer K = 55 us";
  EXPECT_EQ(c.increase_timer_ps, 55 * us) << "[Z][R] rate-increase timer T = 55 us";
  EXPECT_EQ(c.byte_counter_bytes, 10ull * 1000 * 1000) << "[Z][R] byte counter B = 10 MB";
  EXPECT_EQ(c.fast_recovery_stages, 5u) << "[Z][R] F = 5 fast-recovery steps";
  EXPECT_EQ(c.ai_rate_bps, 40 * mbps) << "[Z][R] R_AI = 40 Mb/s";
  EXPECT_EQ(c.hai_rate_bps, 200 * mbps) << "[R] R_HAI = 200 Mb/s (paper / ns-3)";
  EXPECT_EQ(c.min_rate_bps, 100 * mbps) << "[H] no floor in the paper; ns-3 MinRate 100 Mb/s";
  EXPECT_EQ(c.min_time_between_cnps_ps, 50 * us) << "[Z][R] NP: at most one CNP per 50 us per QP";
  EXPECT_EQ(c.cnp_priority, 6) << "[R] CNP priority 6";
  EXPECT_EQ(c.cnp_dscp, 48) << "[R] CNP DSCP 48";
  // [Z] Relations of the algorithm:
  // - a decrease is RC * (1 - alpha/2), and with alpha = 1 the first CNP halves RC ([R]);
  EXPECT_EQ(1.0 - c.initial_alpha * c.decrease_gain, 0.5);
  EXPECT_EQ(c.min_dec_factor, 0.0) << "the paper has no floor on one cut";
  // - every CNP cuts and clamps the target: RT = RC on each CNP;
  EXPECT_EQ(c.rate_reduce_monitor_period_ps, 0u);
  EXPECT_TRUE(c.clamp_target);
  EXPECT_EQ(c.rate_on_first_cnp_bps, 0u);
  // - alpha is updated only when no CNP came for a whole K, so K must exceed
  //   the NP's CNP interval (55 us > 50 us);
  EXPECT_GT(c.alpha_period_ps, c.min_time_between_cnps_ps);
  // - hyper increase adds R_HAI per event (not stage-scaled) and the RP keeps
  //   running at line rate (no release);
  EXPECT_FALSE(c.hyper_scaled_by_stage);
  EXPECT_FALSE(c.release_at_line_rate);
  // - hyper increase steps faster than additive increase.
  EXPECT_LT(c.ai_rate_bps, c.hai_rate_bps);
}

TEST(DcqcnConfig, NvidiaPresetMatchesTheConnectXFirmwareDefaults) {
  const uint64_t us = 1000000, mbps = 1000000;
  const cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  EXPECT_TRUE(c.validate().empty());
  // Firmware fields as documented, in their own units.
  const uint32_t rpg_ai_rate = 5, rpg_hai_rate = 50, rpg_min_rate = 1;  // Mb/s [N][R]
  const uint32_t rpg_time_reset = 300;                                  // us [N][R]
  const uint32_t rpg_byte_reset = 32767;                                // 64-byte units [N]
  const uint32_t rpg_threshold = 1;                                     // F [N]
  const uint32_t rpg_gd = 11;                                           // cut = alpha / 2^(rpg_gd - 10) [N]
  const uint32_t rpg_min_dec_fac = 50;                                  // percent [N][R]
  const uint32_t dce_tcp_g = 1019;                                      // weight of the old alpha, /1024 [N][R]
  const uint32_t dce_tcp_rtt = 1;                                       // us, alpha period [N]
  const uint32_t initial_alpha_value = 1023;                            // /1024 [N][R]
  const uint32_t rate_reduce_monitor_period = 4;                        // us [N][R]
  const uint32_t min_time_between_cnps = 4;                             // us [N][R]
  const uint32_t cnp_802p_prio = 6, cnp_dscp = 48;                      // [N][R]
  EXPECT_EQ(c.line_rate_bps, 100 * kG) << "rpg_max_rate 0 = line rate";
  EXPECT_EQ(c.ai_rate_bps, rpg_ai_rate * mbps);
  EXPECT_EQ(c.hai_rate_bps, rpg_hai_rate * mbps);
  EXPECT_EQ(c.min_rate_bps, rpg_min_rate * mbps);
  EXPECT_EQ(c.increase_timer_ps, rpg_time_reset * us);
  EXPECT_EQ(c.byte_counter_bytes, uint64_t(rpg_byte_reset) * 64);
  EXPECT_EQ(c.fast_recovery_stages, rpg_threshold);
  EXPECT_EQ(c.decrease_gain, 1.0 / double(1u << (rpg_gd - 10)));
  EXPECT_EQ(c.min_dec_factor, rpg_min_dec_fac / 100.0);
  // alpha' = alpha * dce_tcp_g / 1024 (+ (1024 - dce_tcp_g) / 1024 on a CNP): g = 5/1024.
  EXPECT_EQ(1.0 - c.g, dce_tcp_g / 1024.0);
  EXPECT_EQ(c.g, (1024 - dce_tcp_g) / 1024.0);
  EXPECT_EQ(c.alpha_period_ps, dce_tcp_rtt * us);
  EXPECT_EQ(c.initial_alpha, initial_alpha_value / 1024.0);
  EXPECT_EQ(c.rate_reduce_monitor_period_ps, rate_reduce_monitor_period * us);
  EXPECT_EQ(c.min_time_between_cnps_ps, min_time_between_cnps * us);
  EXPECT_EQ(c.cnp_priority, cnp_802p_prio);
  EXPECT_EQ(c.cnp_dscp, cnp_dscp);
  EXPECT_EQ(c.rate_on_first_cnp_bps, 0u) << "rate_to_set_on_first_cnp 0";
  EXPECT_FALSE(c.clamp_target) << "clamp_tgt_rate 0";
  EXPECT_TRUE(c.clamp_target_after_timer_increase) << "clamp_tgt_rate_after_time_inc 1";
  EXPECT_TRUE(c.release_at_line_rate) << "the rate limiter is released at line rate";
  // Relations: the first cut, 1 - (1023/1024)/2 = 0.5005, stays above the
  // rpg_min_dec_fac floor of 0.5 (alpha <= 1 and gain 1/2 never go below it);
  // hyper increase steps faster than additive increase.
  EXPECT_EQ(1.0 - c.initial_alpha * c.decrease_gain, 1.0 - 1023.0 / 2048);
  EXPECT_GE(1.0 - 1.0 * c.decrease_gain, c.min_dec_factor);
  EXPECT_LT(c.ai_rate_bps, c.hai_rate_bps);
}

TEST(DcqcnConfig, PresetsValidateAtCommonSpeeds) {
  for (uint64_t gbps : {10, 25, 40, 50, 100, 200, 400, 800}) {
    EXPECT_TRUE(cc::DcqcnConfig::paper(gbps * kG).validate().empty()) << gbps;
    EXPECT_TRUE(cc::DcqcnConfig::nvidia(gbps * kG).validate().empty()) << gbps;
  }
}

TEST(DcqcnConfig, ValidateNamesEachProblem) {
  auto bad = [](auto mutate, const std::string& word) {
    cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
    mutate(c);
    const auto errs = c.validate();
    EXPECT_FALSE(errs.empty()) << word;
    EXPECT_TRUE(mentions(errs, word)) << word;
  };
  bad([](cc::DcqcnConfig& c) { c.line_rate_bps = 0; }, "line_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.line_rate_bps = uint64_t(1) << 51; }, "line_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.initial_rate_bps = 101 * kG; }, "initial_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.min_rate_bps = 0; }, "min_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.initial_rate_bps = 50000000; }, "min_rate_bps");  // below the 100 Mb/s floor
  bad([](cc::DcqcnConfig& c) { c.rate_on_first_cnp_bps = 1; }, "rate_on_first_cnp_bps");
  bad([](cc::DcqcnConfig& c) { c.g = 0; }, "g ");
  bad([](cc::DcqcnConfig& c) { c.g = 1.5; }, "g ");
  bad([](cc::DcqcnConfig& c) { c.initial_alpha = 1.01; }, "initial_alpha");
  bad([](cc::DcqcnConfig& c) { c.alpha_period_ps = 0; }, "alpha_period_ps");
  bad([](cc::DcqcnConfig& c) { c.decrease_gain = 0; }, "decrease_gain");
  bad([](cc::DcqcnConfig& c) { c.min_dec_factor = 1; }, "min_dec_factor");
  bad(
      [](cc::DcqcnConfig& c) {
        c.increase_timer_ps = 0;
        c.byte_counter_bytes = 0;
      },
      "never recover");
  bad([](cc::DcqcnConfig& c) { c.ai_rate_bps = 200 * kG; }, "ai_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.hai_rate_bps = 200 * kG; }, "hai_rate_bps");
  bad([](cc::DcqcnConfig& c) { c.cnp_priority = 8; }, "cnp_priority");
  bad([](cc::DcqcnConfig& c) { c.cnp_dscp = 64; }, "cnp_dscp");

  // Either increase trigger alone is enough.
  cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  c.increase_timer_ps = 0;
  EXPECT_TRUE(c.validate().empty());
  c = cc::DcqcnConfig::paper(100 * kG);
  c.byte_counter_bytes = 0;
  EXPECT_TRUE(c.validate().empty());
}

}  // namespace

// DcqcnConfig: both presets carry the documented values and validate;
// validate() names each bad field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nic/cc/dcqcn_config.h"

namespace cc = rocesim::cc;

namespace {

constexpr uint64_t kG = 1000000000ull;
constexpr uint64_t kUs = cc::kPsPerUs;

bool mentions(const std::vector<std::string>& errs, const std::string& word) {
  for (const auto& e : errs)
    if (e.find(word) != std::string::npos) return true;
  return false;
}

TEST(DcqcnConfig, PaperPresetValues) {
  const cc::DcqcnConfig c = cc::DcqcnConfig::paper(100 * kG);
  EXPECT_TRUE(c.validate().empty());
  EXPECT_EQ(c.line_rate_bps, 100 * kG);
  EXPECT_EQ(c.start_rate_bps(), 100 * kG);
  EXPECT_EQ(c.g, 1.0 / 256);
  EXPECT_EQ(c.initial_alpha, 1.0);
  EXPECT_EQ(c.alpha_period_ps, 55 * kUs);
  EXPECT_EQ(c.increase_timer_ps, 55 * kUs);
  EXPECT_EQ(c.byte_counter_bytes, 10000000u);
  EXPECT_EQ(c.fast_recovery_stages, 5u);
  EXPECT_EQ(c.ai_rate_bps, 40000000u);
  EXPECT_EQ(c.hai_rate_bps, 200000000u);
  EXPECT_FALSE(c.hyper_scaled_by_stage);
  EXPECT_EQ(c.min_rate_bps, 100000000u);
  EXPECT_EQ(c.decrease_gain, 0.5);
  EXPECT_EQ(c.min_dec_factor, 0.0);
  EXPECT_EQ(c.rate_reduce_monitor_period_ps, 0u);
  EXPECT_TRUE(c.clamp_target);
  EXPECT_EQ(c.rate_on_first_cnp_bps, 0u);
  EXPECT_FALSE(c.release_at_line_rate);
  EXPECT_EQ(c.min_time_between_cnps_ps, 50 * kUs);
  EXPECT_EQ(c.cnp_priority, 6);
  EXPECT_EQ(c.cnp_dscp, 48);
}

TEST(DcqcnConfig, NvidiaPresetValues) {
  const cc::DcqcnConfig c = cc::DcqcnConfig::nvidia(100 * kG);
  EXPECT_TRUE(c.validate().empty());
  EXPECT_EQ(c.line_rate_bps, 100 * kG);
  EXPECT_EQ(c.g, 5.0 / 1024);  // dce_tcp_g 1019: alpha' = alpha*1019/1024 (+ 5/1024)
  EXPECT_EQ(c.g, cc::g_from_dce_tcp_g(1019));
  EXPECT_EQ(1.0 - c.g, 1019.0 / 1024);
  EXPECT_EQ(c.initial_alpha, 1023.0 / 1024);
  EXPECT_EQ(c.alpha_period_ps, 1 * kUs);
  EXPECT_EQ(c.increase_timer_ps, 300 * kUs);
  EXPECT_EQ(c.byte_counter_bytes, 32767u * 64);
  EXPECT_EQ(c.fast_recovery_stages, 1u);
  EXPECT_EQ(c.ai_rate_bps, 5000000u);
  EXPECT_EQ(c.hai_rate_bps, 50000000u);
  EXPECT_EQ(c.min_rate_bps, 1000000u);
  EXPECT_EQ(c.decrease_gain, 0.5);
  EXPECT_EQ(c.min_dec_factor, 0.5);
  EXPECT_EQ(c.rate_reduce_monitor_period_ps, 4 * kUs);
  EXPECT_FALSE(c.clamp_target);
  EXPECT_TRUE(c.clamp_target_after_timer_increase);
  EXPECT_EQ(c.rate_on_first_cnp_bps, 0u);
  EXPECT_TRUE(c.release_at_line_rate);
  EXPECT_EQ(c.min_time_between_cnps_ps, 4 * kUs);
  EXPECT_EQ(c.cnp_priority, 6);
  EXPECT_EQ(c.cnp_dscp, 48);
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

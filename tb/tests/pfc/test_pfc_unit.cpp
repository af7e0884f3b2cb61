// The PFC blocks on their own: pause receiver timing, XOFF/XON hysteresis,
// and the SONiC headroom formula.
#include <gtest/gtest.h>

#include "pfc/pfc.h"

using namespace rocesim::pfc;

namespace {
const uint16_t kT3[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
const uint16_t kZero[8] = {};
}  // namespace

TEST(Quanta, OneQuantumIs512BitTimes) {
  EXPECT_EQ(quanta_ps(1, 100000000000ull), 5120u);   // 5.12 ns at 100G
  EXPECT_EQ(quanta_ps(1, 25000000000ull), 20480u);   // 20.48 ns at 25G
  EXPECT_EQ(quanta_ps(65535, 400000000000ull), 83884800u);
}

TEST(PauseReceiver, TimerPausesForTQuantaAfterTheResponseDelay) {
  PauseReceiver r(100000000000ull, 700);
  r.on_frame(1000, 1u << 3, kT3);
  EXPECT_EQ(r.paused_mask(1000), 0u);
  EXPECT_EQ(r.paused_mask(1699), 0u) << "not before the response delay";
  EXPECT_EQ(r.paused_mask(1700), 1u << 3);
  EXPECT_EQ(r.next_change(1700), 1700u + 5120000u);
  EXPECT_EQ(r.paused_mask(1700 + 5120000 - 1), 1u << 3);
  EXPECT_EQ(r.paused_mask(1700 + 5120000), 0u);
  const auto st = r.stats(3, 10000000);
  EXPECT_EQ(st.pauses, 1u);
  EXPECT_EQ(st.paused_ps, 5120000u);
  EXPECT_EQ(st.longest_ps, 5120000u);
}

TEST(PauseReceiver, RefreshExtendsAndTimerZeroResumes) {
  PauseReceiver r(100000000000ull, 0);
  r.on_frame(0, 1u << 3, kT3);                 // until 5.12 us
  r.on_frame(2000000, 1u << 3, kT3);           // refreshed at 2 us: until 7.12 us
  EXPECT_EQ(r.paused_mask(6000000), 1u << 3);
  r.on_frame(6500000, 1u << 3, kZero);         // XON at 6.5 us
  EXPECT_EQ(r.paused_mask(6500000), 0u);
  const auto st = r.stats(3, 9000000);
  EXPECT_EQ(st.pauses, 1u) << "one continuous pause";
  EXPECT_EQ(st.paused_ps, 6500000u);
  EXPECT_EQ(st.frames, 3u);
}

TEST(PauseReceiver, OnlyEnabledClassesArePaused) {
  PauseReceiver r(100000000000ull, 0);
  const uint16_t t[8] = {0, 0, 0, 100, 100, 0, 0, 0};
  r.on_frame(0, 1u << 4, t);  // timer for 3 present but class 3 not enabled
  EXPECT_EQ(r.paused_mask(1), 1u << 4);
  std::vector<PauseReceiver::Transition> log;
  r.paused_mask(10000000);
  r.drain_transitions([&](const PauseReceiver::Transition& x) { log.push_back(x); });
  ASSERT_EQ(log.size(), 2u);
  EXPECT_TRUE(log[0].paused);
  EXPECT_EQ(log[1].t_ps, 100u * 5120);
  EXPECT_FALSE(log[1].paused);
}

TEST(Generator, XoffAtThresholdXonBelowThresholdMinusOffset) {
  GeneratorConfig c;
  c.dynamic_xoff = false;
  c.xoff_cells = 100;
  c.xon_offset_cells = 30;
  Generator g;
  EXPECT_EQ(g.update(c, 99, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 100, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(g.update(c, 120, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 70, 0, 0, false), Generator::Action::none) << "70 is not below 100 - 30";
  EXPECT_EQ(g.update(c, 69, 5, 0, false), Generator::Action::none) << "headroom still in use";
  EXPECT_EQ(g.update(c, 69, 0, 0, false), Generator::Action::xon);
  EXPECT_EQ(g.transitions(), 2u);
}

TEST(Generator, HeadroomUseTriggersXoffAndRatioRuleIsLowEqualsHalfHigh) {
  GeneratorConfig c;  // dynamic: the MMU's threshold
  c.xon_rule = GeneratorConfig::XonRule::ratio;
  c.xon_ratio_q16 = xon_ratio_fixed(0.5);
  EXPECT_EQ(c.xon_ratio_q16, 1u << 15) << "1/2 is exact in 2^-16 units";
  Generator g;
  EXPECT_EQ(g.update(c, 10, 0, 1000, true), Generator::Action::xoff) << "into headroom: XOFF";
  EXPECT_EQ(g.update(c, 501, 0, 1000, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 500, 0, 1000, false), Generator::Action::xon);
  // An odd threshold: half of 1001 is 500.5, so the XON level is floor(500.5) = 500.
  EXPECT_EQ(g.update(c, 0, 0, 1001, true), Generator::Action::xoff);
  EXPECT_EQ(g.update(c, 501, 0, 1001, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 500, 0, 1001, false), Generator::Action::xon);
}

// The ratio as an integer fraction of 2^16, rounded down (pfc.h): checked
// against hand-computed products, not against a double compare.
TEST(Generator, RatioIsFixedPointRoundedDownAndTheCompareIsExact) {
  EXPECT_EQ(xon_ratio_fixed(0.0), 0u);
  EXPECT_EQ(xon_ratio_fixed(1.0), 65536u);
  EXPECT_EQ(xon_ratio_fixed(0.75), 49152u);
  // 0.3 * 65536 = 19660.8 -> 19660; 0.9 * 65536 = 58982.4 -> 58982.
  EXPECT_EQ(xon_ratio_fixed(0.3), 19660u);
  EXPECT_EQ(xon_ratio_fixed(0.9), 58982u);
  EXPECT_EQ(xon_ratio_fixed(1.0 / 65536 * 0.999), 0u) << "below one unit: 0 (resume only when empty)";

  GeneratorConfig c;
  c.dynamic_xoff = false;
  c.xoff_cells = 1000;
  c.xon_rule = GeneratorConfig::XonRule::ratio;
  c.xon_ratio_q16 = xon_ratio_fixed(0.3);
  // XON level floor(19660 * 1000 / 65536) = floor(299.98...) = 299, where
  // the real 0.3 * 1000 would allow 300: the band is never narrower.
  Generator g;
  ASSERT_EQ(g.update(c, 1000, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(g.update(c, 300, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 299, 0, 0, false), Generator::Action::xon);

  // Ratio 1 resumes at the XOFF level itself; ratio 0 only when empty.
  c.xon_ratio_q16 = xon_ratio_fixed(1.0);
  Generator one;
  ASSERT_EQ(one.update(c, 1001, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(one.update(c, 1000, 0, 0, false), Generator::Action::xon);
  c.xon_ratio_q16 = 0;
  Generator zero;
  ASSERT_EQ(zero.update(c, 1000, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(zero.update(c, 1, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(zero.update(c, 0, 0, 0, false), Generator::Action::xon);

  // No overflow at a 64-bit static level: (2^63) * 2^-1 = 2^62.
  c.xoff_cells = 1ull << 63;
  c.xon_ratio_q16 = 1u << 15;
  Generator big;
  ASSERT_EQ(big.update(c, 1ull << 63, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(big.update(c, (1ull << 62) + 1, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(big.update(c, 1ull << 62, 0, 0, false), Generator::Action::xon);
}

TEST(Generator, AbsoluteRule) {
  GeneratorConfig c;
  c.dynamic_xoff = false;
  c.xoff_cells = 100;
  c.xon_rule = GeneratorConfig::XonRule::absolute;
  c.xon_cells = 40;
  Generator g;
  ASSERT_EQ(g.update(c, 100, 0, 0, false), Generator::Action::xoff);
  EXPECT_EQ(g.update(c, 41, 0, 0, false), Generator::Action::none);
  EXPECT_EQ(g.update(c, 40, 0, 0, false), Generator::Action::xon) << "at or below xon";
}

TEST(Headroom, SonicFormula) {
  // 100G, 2 m (10 ns): cable = 10e-9 * 100e9 / 8 = 125 B; peer = 394 * 64 = 25216 B;
  // propagation = 4178 + 2 * 125 + 1024 + 25216 = 30668; xoff = 4178 + 30668 = 34846.
  HeadroomInputs in;
  in.rate_bps = 100000000000ull;
  in.cable_delay_ps = 10000;
  in.mtu_bytes = in.lossless_mtu_bytes = 4178;
  in.mac_phy_delay_bytes = 1024;
  EXPECT_EQ(headroom_bytes(in), 34846u);
  EXPECT_EQ(peer_response_quanta(25000000000ull), 80u);
  EXPECT_EQ(peer_response_quanta(400000000000ull), 905u);
  EXPECT_EQ(peer_response_quanta(75000000000ull), 271u);  // halfway between 50G (147) and 100G (394), rounded up
  // Longer cable, more headroom: 300 m at 25G = 1.5 us = 4687.5 B each way.
  in.rate_bps = 25000000000ull;
  in.cable_delay_ps = 1500000;
  EXPECT_EQ(headroom_bytes(in), 4178u + 4178 + 9375 + 1024 + 80 * 64);
}

// Scenario reading: defaults, units, and the resolved config round trip.
#include <gtest/gtest.h>

#include "core/config.h"
#include "sim/scenario.h"

using namespace rocesim;

TEST(Scenario, DefaultsAndUnits) {
  auto cfg = core::Config::load_string(
      "name: x\nlinks:\n  rate: 25Gbps\n  cable_m: 1.5\nflows:\n  - {src: h1, dst: h0, size: 1MiB, start: 2us}\n",
      "inline.yaml");
  const sim::Scenario s = sim::read_scenario(*cfg);
  EXPECT_EQ(s.links.link.rate_bps, 25000000000ull);
  EXPECT_EQ(s.links.link.length_mm, 1500u);
  EXPECT_EQ(s.links.link.delay_ps(), 7500u);
  ASSERT_EQ(s.flows.size(), 1u);
  EXPECT_EQ(s.flows[0].src_index, 1u);
  EXPECT_EQ(s.flows[0].message_bytes, 1048576u);
  EXPECT_EQ(s.flows[0].start_ps, 2000000u);
  EXPECT_EQ(s.flows[0].rate_bps, 25000000000ull) << "flow rate defaults to the link rate";
  EXPECT_EQ(s.hosts.mtu, 1024u);
  EXPECT_EQ(s.hosts.pcp, 3u);
}

TEST(Scenario, ResolvedConfigReadsBackToTheSameScenario) {
  auto cfg = core::Config::load_string(
      "name: rt\nseed: 42\nsim: {duration: 3ms}\nlinks: {rate: 400Gbps, cable_m: 0.25, loss: 0.001}\n"
      "hosts: {mtu: 4096, vlan: false, ecn: not_ect}\n"
      "flows:\n  - {src: h0, dst: h1, size: 1000B, messages: 3, rate: 7Mbps, start: 1500ns}\n",
      "rt.yaml");
  const sim::Scenario a = sim::read_scenario(*cfg);
  const std::string text = sim::emit_resolved(a);
  auto cfg2 = core::Config::load_string(text, "resolved.yaml");
  const sim::Scenario b = sim::read_scenario(*cfg2);
  const std::string again = sim::emit_resolved(b);
  EXPECT_EQ(again.substr(again.find("name:")), text.substr(text.find("name:")));
  EXPECT_EQ(b.seed, 42u);
  EXPECT_EQ(b.sim.duration_ps, 3000000000ull);
  EXPECT_EQ(b.links.link.rate_bps, 400000000000ull);
  EXPECT_EQ(b.links.link.length_mm, 250u);
  EXPECT_DOUBLE_EQ(b.links.link.loss, 0.001);
  EXPECT_EQ(b.hosts.ecn, 0u);
  EXPECT_FALSE(b.hosts.vlan);
  EXPECT_EQ(b.flows[0].message_bytes, 1000u);
  EXPECT_EQ(b.flows[0].rate_bps, 7000000u);
  EXPECT_EQ(b.flows[0].start_ps, 1500000u);
}

TEST(Scenario, HostNames) {
  uint32_t i = 0;
  EXPECT_TRUE(sim::parse_host_name("h0", i));
  EXPECT_EQ(i, 0u);
  EXPECT_TRUE(sim::parse_host_name("h255", i));
  EXPECT_EQ(i, 255u);
  EXPECT_FALSE(sim::parse_host_name("h", i));
  EXPECT_FALSE(sim::parse_host_name("h01", i));
  EXPECT_FALSE(sim::parse_host_name("x1", i));
  EXPECT_FALSE(sim::parse_host_name("h1a", i));
}

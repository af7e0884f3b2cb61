// When XON is evaluated (tlm/pfc/pfc.h, "When it is evaluated"): on the PG's
// own admits and releases and on its refresh tick, never on other PGs'
// operations although a dynamic threshold moves with them. In-process, with
// the MMU sampled from a SystemC thread so that the test evaluates the XON
// rule itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/time.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

struct Sample {
  uint64_t t_ps;
  uint32_t pool_used;           // ingress lossless pool, shared cells
  uint32_t a_shared, a_headroom;
  uint64_t a_admitted, a_released;  // PG A's own operations so far
};

}  // namespace

// PG A = (sw0 port 0, PG 3) holds packets it cannot send: its egress (to h2)
// is paused by h2's storm from t = 0, so A has no release, and once it is
// XOFF its sender is paused, so no admit either. Two lossy PGs (h1 and h3,
// 2:1 incast into h4 with small frames) share A's pool, each capped by a
// static 15 KiB = 60 cells, so they hold 2 x 60 cells (less at most a
// 2-cell frame each) while they send and keep A's dynamic threshold at
// T = pool - used = 240 - 120 - s_A. A's 4178-byte frames take 17 cells:
// with s_A = 51 its next frame still goes to shared (51 < 69), and then
// s_A = 68 >= T = 52: XOFF with no headroom in use. When the lossy flows
// end and drain, T = 240 - 68 = 172 and A's XON rule (68 + 64 < 172) holds,
// but nothing of A's own happens any more: A resumes at its next refresh
// tick, XOFF + n * refresh, the first tick at which the rule holds.
// Evaluated on its own operations only, it would stay XOFF for ever (the
// refresh re-sending the pause).
TEST(XonSemantics, XoffPgWithoutOwnOperationsResumesOnItsRefreshTickAfterThePoolFrees) {
  const uint64_t R = 50000000;  // refresh, ps
  const std::string yaml =
      "name: xon_tick\n"
      "sim: {duration: 300us, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 5, host_rate: 100Gbps, cable_m: 2}\n"
      "hosts: {mtu: 4096}\n"
      "switch:\n"
      "  mmu:\n"
      "    pools: {ingress_lossless: 60KiB}\n"
      "    pg_lossless: {reserved: 0, dynamic_th: 0}\n"
      "    pg_lossy: {pool: ingress_lossless, reserved: 0, static_th: 15KiB}\n"
      "pfc:\n"
      "  xon_offset: 16KiB\n"
      "  refresh: 50us\n"
      "  storm: {host: h2, start: 0us, priority: 3}\n"
      "stats: {interval: 0}\n"
      "flows:\n"
      "  - {src: h0, dst: h2, size: 1MiB, rate: 2Gbps}\n"
      "  - {src: h1, dst: h4, size: 256B, messages: 8400, pcp: 1, dscp: 10}\n"
      "  - {src: h3, dst: h4, size: 256B, messages: 8400, pcp: 1, dscp: 10}\n";
  // The rule's constants, from the configuration (256-byte cells): pool
  // 60 KiB = 240 cells, offset 16 KiB = 64 cells, alpha = 2^0.
  const uint32_t pool = 60 * 1024 / 256, offset = 16 * 1024 / 256;
  auto cfg = core::Config::load_string(yaml, "xon_tick.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  sw::Switch& sw0 = *fabric.switches().at(0);
  ASSERT_EQ(sw0.mmu().config().pools.at(0).size_cells, pool);

  std::vector<Sample> samples;
  const uint64_t step = 100000;  // 100 ns
  sc_core::sc_spawn([&] {
    for (;;) {
      const mmu::Mmu& m = sw0.mmu();
      const mmu::PgState a = m.pg_state(0, 3);
      const mmu::PgCounters& k = m.pg_counters(0, 3);
      samples.push_back(Sample{core::now_ps(), m.pool(0).used, a.shared, a.headroom, k.admitted_packets,
                               k.released_packets});
      sc_core::wait(core::ps(step));
    }
  });
  fabric.run();

  // The XON rule (offset rule, dynamic XOFF level) on a sample, evaluated here.
  auto rule = [&](const Sample& s) {
    const uint64_t T = pool > s.pool_used ? pool - s.pool_used : 0;
    return s.a_headroom == 0 && s.a_shared + offset < T;
  };
  auto at = [&](uint64_t t) -> const Sample& {  // the last sample at or before t
    size_t i = 0;
    while (i + 1 < samples.size() && samples[i + 1].t_ps <= t) ++i;
    return samples[i];
  };
  // A's episode: its first XOFF and the XON that ends it.
  uint64_t t_xoff = 0, t_xon = 0;
  for (const pfc::Event& e : fabric.pfc_events()) {
    if (std::string(e.node) != "sw0" || e.port != 0 || e.prio != 3) continue;
    const std::string what = e.what;
    if (what == "xoff" && !t_xoff) t_xoff = e.t_ps;
    if (what == "xon" && t_xoff && !t_xon) t_xon = e.t_ps;
  }
  ASSERT_GT(t_xoff, 0u) << "A reached XOFF";
  ASSERT_GT(t_xon, 0u) << "A resumed";
  {
    const Sample& x = at(t_xoff + step);
    ASSERT_EQ(x.a_headroom, 0u) << "the case needs an XOFF on shared use, not on headroom";
    ASSERT_EQ(x.a_shared, 4u * 17) << "XOFF at s_A = 68 cells (above)";
  }

  // The expected XON: the first tick XOFF + n R at which the rule holds, with
  // the pool state stable around it (the samples 1 us before and after agree).
  uint64_t expect = 0;
  for (uint64_t n = 1; t_xoff + n * R < scen.sim.duration_ps; ++n) {
    const uint64_t t = t_xoff + n * R;
    const bool before = rule(at(t - 1000000)), after = rule(at(t + 1000000));
    ASSERT_EQ(before, after) << "the pool changes within 1 us of tick " << n << "; the case is ill-posed";
    if (before) {
      expect = t;
      break;
    }
  }
  ASSERT_GT(expect, 0u) << "the pool frees before the run ends";
  EXPECT_EQ(t_xon, expect) << "XON at the first refresh tick at which the rule holds";

  // The rule held before that tick already (the other PGs drained in
  // between), and A had no operation of its own from its XOFF to its XON:
  // only the tick can have resumed it.
  uint64_t t_rule = 0;
  for (const Sample& s : samples)
    if (s.t_ps > t_xoff && rule(s)) {
      t_rule = s.t_ps;
      break;
    }
  ASSERT_GT(t_rule, 0u);
  // That is when the lossy senders stop: 8400 frames of 256 + 82 B, each
  // with 20 B of preamble and gap, at 100 Gbps end at 240.576 us; their
  // 2 x 60 cells (2-cell frames) drain in 60 frame times, 1.7 us, after that.
  const uint64_t t_lossy_end = 8400ull * (256 + 82 + 20) * 8 * 10;  // ps at 100 Gbps
  EXPECT_GE(t_rule, t_lossy_end);
  EXPECT_LE(t_rule, t_lossy_end + 5000000);
  EXPECT_LT(t_rule + R / 10, t_xon) << "A stays XOFF for a while after the pool frees";
  EXPECT_GT(t_rule, expect - R) << "not at an earlier tick";
  const Sample& s0 = at(t_xoff + step);
  const Sample& s1 = at(t_xon - 1);
  EXPECT_EQ(s0.a_admitted, s1.a_admitted) << "no admit of A while XOFF";
  EXPECT_EQ(s0.a_released, s1.a_released) << "no release of A while XOFF";
  // Ticks 1 .. n-1 re-sent the pause; tick n sent the XON instead. (The run
  // ends before A, sending again, can reach a second XOFF's first refresh.)
  EXPECT_EQ(sw0.pfc_stats(0).refreshes, (expect - t_xoff) / R - 1);
  EXPECT_EQ(sw0.pfc_stats(0).xon[3], 1u);
}

// The shipped PFC and ECN scenarios show what their header comments say:
// congestion spreading through every tier of the leaf-spine, a storm that
// makes the switch pause the sender, a deadlock that only the watchdog breaks
// (and then every RC flow completes), and an ECN threshold sweep with a
// trade-off. Each test runs the shipped file from ROCESIM_SRC in-process (one
// simulation per test process), except the sweep, which runs
// regress/sweeps/ecn_sweep.sh with the rocesim binary as users do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/config.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

std::string scenario_path(const std::string& name) { return clitest::src_dir() + "/configs/scenarios/" + name; }

struct ShippedRun {
  sim::Scenario scen;
  std::unique_ptr<sim::Fabric> fabric;
  sim::RunResult result;
};

// Loads configs/scenarios/NAME, applies --set overrides, builds and runs it.
ShippedRun run_shipped(const std::string& name, const std::vector<std::string>& sets = {}) {
  ShippedRun r;
  auto cfg = core::Config::load_file(scenario_path(name));
  for (const auto& s : sets) cfg->apply_set(s);
  r.scen = sim::read_scenario(*cfg);
  r.fabric = std::make_unique<sim::Fabric>("fabric", r.scen);
  r.result = r.fabric->run();
  EXPECT_TRUE(r.result.conserved) << "sent " << r.result.sent << " delivered " << r.result.delivered << " dropped "
                                  << r.result.dropped << " in flight " << r.result.in_flight;
  return r;
}

bool is(const pfc::Event& e, const char* what) { return std::string(e.what) == what; }

}  // namespace

// The incast's only bottleneck is leaf0's port to h0; PFC must carry it back
// three tiers: leaf0 pauses the spines, every spine pauses sender leaves, and
// every sender leaf pauses its senders, in that order. The tiers are found
// from the topology (each XOFF's port and the node at its other end), not
// from port numbers.
TEST(ShippedScenarios, PfcIncastLeafSpineSendsXoffOnEveryTier) {
  ShippedRun r = run_shipped("pfc_incast_leafspine.yaml");
  const topology::Topology& t = r.scen.topo;
  ASSERT_FALSE(r.fabric->flows().empty());

  const uint32_t receiver = r.fabric->flows()[0].dst;
  const uint32_t recv_leaf = t.peer({t.hosts.at(receiver), 0}).node;
  std::set<uint32_t> senders, send_leaves;
  std::map<uint32_t, uint64_t> senders_per_leaf;
  for (const auto& f : r.fabric->flows()) {
    ASSERT_EQ(f.dst, receiver) << "one incast";
    senders.insert(t.hosts.at(f.src));
    const uint32_t leaf = t.peer({t.hosts.at(f.src), 0}).node;
    ASSERT_NE(leaf, recv_leaf) << "the senders are on other leaves";
    send_leaves.insert(leaf);
    ++senders_per_leaf[leaf];
  }
  std::set<uint32_t> spines;
  for (uint32_t n : t.switches)
    if (t.nodes[n].role == "spine") spines.insert(n);
  ASSERT_FALSE(spines.empty());

  // Precondition of "spreading": no sender leaf's uplinks are oversubscribed
  // by the incast (senders x host rate <= uplinks x fabric rate), so a pause
  // upstream of leaf0 can only come from PFC carrying leaf0's congestion back.
  for (const auto& [leaf, n] : senders_per_leaf) {
    uint64_t up = 0, host_rate = 0;
    for (uint32_t p = 0; p < t.nodes[leaf].ports; ++p) {
      const auto& l = t.link_at({leaf, p});
      if (spines.count(t.peer({leaf, p}).node)) up += l.rate_bps;
      else host_rate = l.rate_bps;
    }
    EXPECT_LE(n * host_rate, up) << t.nodes[leaf].name;
  }

  uint64_t tier1 = 0;  // receiver leaf -> spine
  std::map<uint32_t, uint64_t> tier2;  // spine -> sender leaf, per spine
  std::map<uint32_t, uint64_t> tier3;  // sender leaf -> sender host, per leaf
  uint64_t first1 = UINT64_MAX, first2 = UINT64_MAX, first3 = UINT64_MAX;
  for (const pfc::Event& e : r.fabric->pfc_events()) {
    if (!is(e, "xoff")) continue;
    const uint32_t node = t.find(e.node);
    ASSERT_NE(node, topology::kNoNode) << e.node;
    const uint32_t peer = t.peer({node, e.port}).node;
    if (node == recv_leaf && spines.count(peer)) {
      ++tier1;
      first1 = std::min(first1, e.t_ps);
    } else if (spines.count(node) && send_leaves.count(peer)) {
      ++tier2[node];
      first2 = std::min(first2, e.t_ps);
    } else if (send_leaves.count(node) && senders.count(peer)) {
      ++tier3[node];
      first3 = std::min(first3, e.t_ps);
    }
  }
  EXPECT_GT(tier1, 0u) << "the receiver's leaf pauses the spines";
  for (uint32_t s : spines) EXPECT_GT(tier2[s], 0u) << t.nodes[s].name << " pauses no sender leaf";
  for (uint32_t l : send_leaves) EXPECT_GT(tier3[l], 0u) << t.nodes[l].name << " pauses none of its senders";
  EXPECT_LT(first1, first2) << "the spines pause after leaf0 pauses them";
  EXPECT_LT(first2, first3) << "the sender leaves pause after the spines pause them";

  EXPECT_EQ(r.result.dropped, 0u) << "PFC keeps it lossless";
  EXPECT_TRUE(r.result.all_flows_done);
}

// h3 storms from 50 us. h0's packets to h3 fill h0's PG in sw0 until it
// reaches XOFF, and sw0 pauses h0 before the watchdog fires; the watchdog's
// drops then empty the PG and sw0 resumes h0. h1 is never paused and its
// flow completes.
TEST(ShippedScenarios, PfcStormSwitchPausesTheSenderBeforeTheWatchdog) {
  ShippedRun r = run_shipped("pfc_storm.yaml");
  const topology::Topology& t = r.scen.topo;
  const auto& flows = r.fabric->flows();
  ASSERT_EQ(flows.size(), 2u);
  const uint32_t h0 = flows[0].src, h1 = flows[1].src;
  const topology::PortRef to_h3 = t.peer({t.hosts.at(flows[0].dst), 0});
  const topology::PortRef from_h0 = t.peer({t.hosts.at(h0), 0});
  const topology::PortRef from_h1 = t.peer({t.hosts.at(h1), 0});
  const std::string sw = t.nodes[to_h3.node].name;
  const uint8_t prio = r.scen.hosts.pcp;

  uint64_t storm_paused = UINT64_MAX, xoff_h0 = UINT64_MAX, h0_paused = UINT64_MAX, detected = UINT64_MAX,
           xon_h0 = UINT64_MAX;
  int xoff_h1 = 0;
  for (const pfc::Event& e : r.fabric->pfc_events()) {
    const bool on_sw = e.node == sw;
    if (on_sw && e.port == to_h3.port && is(e, "pause_start") && storm_paused == UINT64_MAX) storm_paused = e.t_ps;
    if (on_sw && e.port == to_h3.port && is(e, "storm_detected") && detected == UINT64_MAX) detected = e.t_ps;
    if (on_sw && e.port == from_h0.port && e.prio == prio && is(e, "xoff") && xoff_h0 == UINT64_MAX) xoff_h0 = e.t_ps;
    if (on_sw && e.port == from_h0.port && e.prio == prio && is(e, "xon") && xon_h0 == UINT64_MAX) xon_h0 = e.t_ps;
    if (on_sw && e.port == from_h1.port && is(e, "xoff")) ++xoff_h1;
    if (e.node == t.nodes[t.hosts.at(h0)].name && is(e, "pause_start") && h0_paused == UINT64_MAX) h0_paused = e.t_ps;
  }
  ASSERT_NE(storm_paused, UINT64_MAX) << "the storm pauses the switch's port to h3";
  ASSERT_NE(xoff_h0, UINT64_MAX) << "the switch pauses h0 in turn";
  ASSERT_NE(detected, UINT64_MAX) << "the watchdog declares the storm";
  EXPECT_LT(storm_paused, xoff_h0);
  EXPECT_LT(xoff_h0, h0_paused) << "h0's transmitter stops after the XOFF arrives";
  EXPECT_LT(xoff_h0, detected) << "the pause reaches h0 before the watchdog acts";
  EXPECT_GE(xon_h0, detected) << "h0 is resumed once the watchdog's drops empty its PG";
  EXPECT_NE(xon_h0, UINT64_MAX);
  EXPECT_EQ(xoff_h1, 0) << "h1 does not send to the stormed port";

  // When: Choudhury-Hahne with alpha = 2^dynamic_th = 1 and one PG filling
  // the ingress lossless pool P: XOFF when its shared use S reaches P - S,
  // i.e. S = P/2, plus the PG's reserve. From the moment the port to h3 stops,
  // h0's 100 Gbps of WRITE_MIDDLE frames (MTU + 66 B headers: Eth 14, 802.1Q 4,
  // IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4) each add ceil(frame / cell) cells,
  // one per (frame + 20 B preamble/IFG) x 8 / rate. Tolerance: 8 frames for
  // what the switch already held when the pause took effect.
  ASSERT_TRUE(r.scen.sw.pg_lossless.dynamic && r.scen.sw.pg_lossless.dynamic_th == 0);
  const uint64_t cell = r.scen.sw.cell_bytes;
  const uint64_t frame = r.scen.hosts.mtu + 66;
  const uint64_t cells_per_frame = (frame + cell - 1) / cell;
  const uint64_t pool_cells = r.scen.sw.ingress_lossless_pool / cell;
  const uint64_t reserve_cells = (r.scen.sw.pg_lossless.reserved_bytes + cell - 1) / cell;
  const double frames = double(pool_cells / 2 + reserve_cells) / double(cells_per_frame);
  const double frame_ps = double((frame + 20) * 8) * 1e12 / double(r.scen.host_rate(h0));
  const double expect_ps = double(storm_paused) + frames * frame_ps;
  EXPECT_NEAR(double(xoff_h0), expect_ps, 8 * frame_ps);

  EXPECT_GT(r.fabric->ledger().dropped(packet::DropReason::pfc_watchdog), 0u);
  EXPECT_FALSE(flows[0].done()) << "h0 -> h3 stalls";
  EXPECT_TRUE(flows[1].done()) << "h1 -> h2 keeps flowing";
}

// Without the watchdog the ring deadlocks: no delivery for deadlock_after,
// frames stuck, no flow complete.
TEST(ShippedScenarios, PfcDeadlockWithoutWatchdogDeadlocks) {
  ShippedRun r = run_shipped("pfc_deadlock.yaml");
  EXPECT_FALSE(r.scen.pfc.watchdog);
  EXPECT_TRUE(r.result.deadlock);
  EXPECT_GT(r.result.in_flight, 0u);
  for (const auto& f : r.fabric->flows()) EXPECT_FALSE(f.done()) << "flow " << f.id;
  EXPECT_EQ(r.fabric->ledger().dropped(), 0u) << "PFC loses nothing, it just stops";
}

// With the watchdog the cycle is broken and RC delivers every byte of every
// flow (each flow's receiver counts all its bytes), the watchdog's drops
// recovered by retransmission.
TEST(ShippedScenarios, PfcDeadlockWithWatchdogCompletesEveryFlow) {
  ShippedRun r = run_shipped("pfc_deadlock.yaml", {"pfc.watchdog.enabled=true"});
  EXPECT_FALSE(r.result.deadlock);
  EXPECT_TRUE(r.result.all_flows_done);
  uint64_t retransmitted = 0;
  for (const auto& f : r.fabric->flows()) {
    EXPECT_TRUE(f.done()) << "flow " << f.id;
    EXPECT_EQ(f.bytes_received, f.total_bytes()) << "flow " << f.id;
    retransmitted += f.retransmitted;
  }
  const uint64_t wd_drops = r.fabric->ledger().dropped(packet::DropReason::pfc_watchdog);
  EXPECT_GT(wd_drops, 0u) << "the watchdog broke the cycle by dropping";
  EXPECT_GT(retransmitted, 0u) << "RC sent the dropped packets again";
  int detected = 0;
  for (const pfc::Event& e : r.fabric->pfc_events()) detected += is(e, "storm_detected");
  EXPECT_GT(detected, 0);
}

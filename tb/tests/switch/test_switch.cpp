// The switch chip end to end, in-process: dynamic thresholds against
// Choudhury & Hahne, static caps, lossy overload drops, pipeline timing in
// store-and-forward and cut-through, buffer bandwidth contention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/rng.h"
#include "core/time.h"
#include "qm/queue_manager.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

struct SimRun {
  sim::Scenario scen;
  std::unique_ptr<sim::Fabric> fabric;
  sim::RunResult result;
};

// Builds and runs a scenario given as YAML (one per test process: SystemC elaborates once).
SimRun run_yaml(const std::string& yaml) {
  SimRun r;
  auto cfg = core::Config::load_string(yaml, "test.yaml");
  r.scen = sim::read_scenario(*cfg);
  r.fabric = std::make_unique<sim::Fabric>("fabric", r.scen);
  r.result = r.fabric->run();
  EXPECT_TRUE(r.result.conserved) << "sent " << r.result.sent << " delivered " << r.result.delivered << " dropped "
                                  << r.result.dropped << " in flight " << r.result.in_flight;
  return r;
}

// A single switch with lossy traffic (DSCP 0 -> TC 0 -> lossy PG 0 and queue 0)
// and a large ingress lossy pool, so only the egress side binds.
std::string lossy_switch(uint32_t hosts, const std::string& queue_profile, const std::string& egress_pool,
                         const std::string& duration = "400us") {
  return "name: t\n"
         "sim: {duration: " + duration + ", stop_when_done: false}\n"
         "topology: {kind: single_switch, hosts: " + std::to_string(hosts) + ", host_rate: 100Gbps, cable_m: 1}\n"
         "hosts: {mtu: 1024, dscp: 0, pcp: 0}\n"
         "stats: {interval: 0}\n"
         "switch:\n"
         "  buffer: {size: 16MiB, cell: 256B}\n"
         "  mmu:\n"
         "    pools: {ingress_lossless: 256KiB, ingress_lossy: 15MiB, egress_lossless: 256KiB, egress_lossy: " +
         egress_pool + "}\n"
         "    shared_headroom: 128KiB\n"
         "    pg_lossy: {reserved: 0B, dynamic_th: 7}\n"
         "    queue_lossy: " + queue_profile + "\n";
}

}  // namespace

// N egress queues, each fed by two line-rate senders, settle at
// alpha*B/(1+N*alpha) (Choudhury & Hahne 1998) within one cell plus one MTU frame.
struct DtCase {
  int n;       // alpha = 2^n
  uint32_t N;  // overloaded queues
};
void PrintTo(const DtCase& c, std::ostream* os) { *os << "n=" << c.n << " N=" << c.N; }

class DynamicThreshold : public ::testing::TestWithParam<DtCase> {};

TEST_P(DynamicThreshold, QueuesSettleAtAlphaBOverOnePlusNAlpha) {
  const DtCase c = GetParam();
  const uint32_t N = c.N;
  const uint64_t B_cells = 4096;  // 1 MiB egress lossy pool of 256 B cells
  std::string yaml = lossy_switch(3 * N, "{reserved: 0B, dynamic_th: " + std::to_string(c.n) + "}", "1MiB");
  yaml += "flows:\n";
  // Senders h0..h(2N-1); queue i is port 2N+i (host h(2N+i)), fed by h(2i) and h(2i+1).
  for (uint32_t i = 0; i < N; ++i) {
    for (uint32_t k = 0; k < 2; ++k) {
      yaml += "  - {src: h" + std::to_string(2 * i + k) + ", dst: h" + std::to_string(2 * N + i) +
              ", size: 1MiB, messages: 100}\n";
    }
  }
  auto cfg = core::Config::load_string(yaml, "dt.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  const sw::Switch& s = *fabric.switches().at(0);
  // Let the queues fill (1 MiB at an excess of 100 Gbps takes about 84 us),
  // then measure each queue's time-averaged depth over the next 200 us.
  sc_core::sc_start(core::ps(200000000));
  std::vector<sw::QueueStats> before;
  for (uint32_t i = 0; i < N; ++i) before.push_back(s.queue_stats_now(2 * N + i, 0));
  sc_core::sc_start(core::ps(200000000));
  const double alpha = std::ldexp(1.0, c.n);
  const double expect = alpha * B_cells / (1.0 + N * alpha);
  // Frame of a 1024 B payload: 14+4+20+8+12+1024+4+4 = 1090 B -> 5 cells.
  const double tol = 1 + 5;
  for (uint32_t i = 0; i < N; ++i) {
    const uint32_t port = 2 * N + i;
    const sw::QueueStats after = s.queue_stats_now(port, 0);
    const double avg = static_cast<double>((after.area_cells - before[i].area_cells) /
                                           static_cast<long double>(after.last_change_ps - before[i].last_change_ps));
    EXPECT_NEAR(avg, expect, tol) << "time-averaged queue on port " << port;
    // The queue at the end is in the band too, give or take the packet in transit.
    EXPECT_NEAR(after.depth_cells, expect, tol + 5) << "queue on port " << port << " at the end";
    EXPECT_GT(s.mmu().queue_counters(static_cast<uint16_t>(port), 0).dropped.packets[size_t(mmu::Verdict::drop_egress_limit)], 0u)
        << "the queue must be overloaded";
  }
  const link::Ledger& L = fabric.ledger();
  EXPECT_EQ(L.dropped(packet::DropReason::egress_limit), L.dropped()) << "every drop is an egress-limit drop";
}

INSTANTIATE_TEST_SUITE_P(Alphas, DynamicThreshold,
                         ::testing::Values(DtCase{-2, 1}, DtCase{-2, 2}, DtCase{-2, 4}, DtCase{0, 1}, DtCase{0, 2},
                                           DtCase{0, 4}, DtCase{2, 1}, DtCase{2, 2}, DtCase{2, 4}),
                         [](const ::testing::TestParamInfo<DtCase>& i) {
                           return "n" + std::string(i.param.n < 0 ? "m" : "") + std::to_string(std::abs(i.param.n)) +
                                  "_N" + std::to_string(i.param.N);
                         });

TEST(StaticThreshold, CapsTheQueueAtItsValue) {
  std::string yaml = lossy_switch(3, "{reserved: 0B, static_th: 100KiB}", "4MiB");
  yaml += "flows:\n  - {src: h0, dst: h2, size: 1MiB, messages: 50}\n  - {src: h1, dst: h2, size: 1MiB, messages: 50}\n";
  SimRun r = run_yaml(yaml);
  const sw::Switch& s = *r.fabric->switches().at(0);
  const uint32_t cap = 100 * 1024 / 256;  // 400 cells
  const sw::QueueStats q = s.queue_stats(2, 0);
  EXPECT_LE(q.peak_cells, cap);
  EXPECT_GE(q.peak_cells, cap - 4) << "the queue fills up to the cap (within one frame)";
  EXPECT_GT(r.fabric->ledger().dropped(packet::DropReason::egress_limit), 0u);
}

TEST(LossyOverload, TwoToOneDeliversWhatTheEgressSendsPlusTheDtQueueAndDropsTheRest) {
  // Two line-rate senders, 8 MiB each, into one 100 Gbps port whose queue has
  // a dynamic threshold with alpha = 1 over a 2 MiB egress pool.
  std::string yaml = lossy_switch(3, "{reserved: 0B, dynamic_th: 0}", "2MiB", "2ms");
  yaml += "flows:\n  - {src: h0, dst: h2, size: 1MiB, messages: 8}\n  - {src: h1, dst: h2, size: 1MiB, messages: 8}\n";
  SimRun r = run_yaml(yaml);
  const sw::Switch& s = *r.fabric->switches().at(0);
  // Per sender: 8 messages of 1 MiB at MTU 1024 = 8192 frames.
  const uint64_t per_sender = 8ull * 1024 * 1024 / 1024;
  const uint64_t sent = r.result.sent;
  ASSERT_EQ(sent, 2 * per_sender);
  EXPECT_EQ(r.result.in_flight, 0u) << "the run outlasts the burst";

  // Expected deliveries, from first principles:
  //  - Every frame is 5 cells of 256 B (WRITE_MIDDLE/LAST 1090 B, WRITE_FIRST
  //    1106 B), so the queue's shared use s is a multiple of 5 cells.
  //  - The queue is the pool's only user, so Choudhury & Hahne's threshold is
  //    T = alpha * (B - s) with B = 2 MiB / 256 B = 8192 cells, alpha = 1, and
  //    a frame is admitted iff s < T before it (mmu.h), i.e. s < B / 2 = 4096.
  //    The queue's steady state alpha*B/(1+alpha) = 4096 cells is 819.2
  //    frames: admitted while it holds k <= 819 frames, so it peaks at
  //    Q = floor((4096 - 1) / 5) + 1 = 820 frames and stays there: each
  //    frame the egress takes out (releasing its cells at its start) lets
  //    exactly one of the next two arrivals in.
  //  - The egress sends back to back at line rate (the same rate and frame
  //    sizes as each sender) from its first frame until the queue is empty,
  //    so while the senders send their 8192 frames each it takes 8192 frames
  //    out of the queue, give or take one: its start lags the first arrival by
  //    a constant pipeline delay (< one frame time), and up to 16 WRITE_FIRST
  //    frames 16 B longer shift the phase by at most 16 * 16 B / 1110 B = 0.23
  //    frame.
  //  So delivered = 8192 + 820 = 9012 frames (+-1 for the phase at the end of
  //  the burst), and everything else is dropped at the egress limit.
  const uint64_t cell = 256, frame_cells = (1090 + cell - 1) / cell;
  ASSERT_EQ(frame_cells, (1106 + cell - 1) / cell) << "WRITE_FIRST frames take as many cells";
  const uint64_t B = 2 * 1024 * 1024 / cell;
  const uint64_t steady = B / 2;                            // alpha*B/(1+alpha) cells, alpha = 1
  const uint64_t queue_frames = (steady - 1) / frame_cells + 1;  // admitted while s <= steady - 1
  ASSERT_EQ(queue_frames, 820u);
  const uint64_t expect_delivered = per_sender + queue_frames;
  EXPECT_NEAR(double(r.result.delivered), double(expect_delivered), 1.0)
      << "delivered = what the egress sends during the burst + the DT queue";
  EXPECT_NEAR(double(r.result.dropped), double(sent - expect_delivered), 1.0);
  EXPECT_EQ(r.result.dropped + r.result.delivered, sent);
  // The drops are all at the egress limit, and the MMU's counters agree.
  EXPECT_EQ(r.fabric->ledger().dropped(packet::DropReason::egress_limit), r.result.dropped);
  EXPECT_EQ(s.mmu().queue_counters(2, 0).dropped.total_packets(), r.result.dropped);
  // The queue peaked at Q frames, in cells: 820 * 5 = 4100 = T + 4.
  EXPECT_EQ(s.queue_stats(2, 0).peak_cells, queue_frames * frame_cells);
  EXPECT_EQ(s.ports[2]->stats().tx_frames, r.result.delivered);
}

namespace {
// One frame through an idle switch; returns (switch last-bit-in, first-bit-out at the switch egress).
struct Latency {
  uint64_t in_last, in_hdr, out_first;
  uint32_t frame, hdr, cells;
};
Latency one_frame(bool cut_through, const std::string& extra) {
  const std::string yaml =
      "name: lat\n"
      "topology: {kind: single_switch, hosts: 2, host_rate: 100Gbps, cable_m: 3}\n"
      "hosts: {mtu: 4096}\n"
      "stats: {interval: 0}\n"
      "switch:\n"
      "  clock_period: 1100ps\n"
      "  pipeline: {parser: 7, lookup: 11, mmu: 5, egress: 13}\n"
      "  cut_through: " + std::string(cut_through ? "true" : "false") + "\n" + extra +
      "flows:\n  - {src: h0, dst: h1, size: 3000B, start: 333ns}\n";
  SimRun r = run_yaml(yaml);
  const host::FlowRecord& f = r.fabric->flows().at(0);
  EXPECT_TRUE(f.done());
  Latency l{};
  // WRITE_ONLY with RETH, 802.1Q: 14+4+20+8+12+16 = 74 B of headers, +3000 payload, +4 ICRC, +4 FCS.
  l.hdr = 74;
  l.frame = 74 + 3000 + 8;
  l.cells = (l.frame + 255) / 256;
  const uint64_t cable = 15000;  // 3 m
  const uint64_t first_in = 333000 + cable;
  l.in_last = first_in + (8ull + l.frame) * 80;
  l.in_hdr = first_in + (8ull + l.hdr) * 80;
  l.out_first = f.first_rx_ps - cable;
  return l;
}
uint64_t align(uint64_t t, uint64_t p) { return (t + p - 1) / p * p; }
}  // namespace

TEST(Pipeline, StoreAndForwardLatencyIsPipelineCyclesFromTheNextClockEdge) {
  const Latency l = one_frame(false, "");
  const uint64_t P = 1100;
  // Default buffer: 16 cells written and read per cycle -> 1 cycle each for 13 cells.
  const uint64_t cycles = 7 + 11 + 5 + 1 + 13 + 1;
  EXPECT_EQ(l.out_first, align(l.in_last, P) + cycles * P);
  EXPECT_NE(l.in_last % P, 0u) << "the case exercises the alignment to a clock edge";
}

TEST(Pipeline, SlowerBufferAddsItsWriteAndReadCycles) {
  const Latency l = one_frame(false, "  buffer: {write_cells_per_cycle: 2, read_cells_per_cycle: 4}\n");
  const uint64_t P = 1100;
  // 13 cells: ceil(13/2) = 7 write cycles, ceil(13/4) = 4 read cycles.
  const uint64_t cycles = 7 + 11 + 5 + 7 + 13 + 4;
  EXPECT_EQ(l.out_first, align(l.in_last, P) + cycles * P);
}

TEST(Pipeline, CutThroughStartsAfterTheHeaderNotTheLastBit) {
  const Latency l = one_frame(true, "");
  const uint64_t P = 1100;
  // First cell written and read: one cycle each.
  const uint64_t cycles = 7 + 11 + 5 + 1 + 13 + 1;
  EXPECT_EQ(l.out_first, align(l.in_hdr, P) + cycles * P);
  EXPECT_LT(l.out_first, l.in_last) << "the frame leaves before it has fully arrived";
}

TEST(Pipeline, CutThroughFallsBackToStoreAndForwardIntoAFasterPortAndCutsIntoSameOrSlower) {
  // Two leaves, one spine; hosts at 25 Gbps, leaf-spine links at 100 Gbps.
  // Flow 0, h0 (leaf0) -> h2 (leaf1): leaf0 forwards 25G -> 100G (faster: the
  // egress would underrun, so store-and-forward), the spine 100G -> 100G
  // (same: cut through), leaf1 100G -> 25G (slower: cut through).
  // Flow 1, much later, h1 -> h0 on leaf0: 25G -> 25G, cut through.
  // One 3000 B WRITE_ONLY frame each (MTU 4096), every port idle when it comes.
  const std::string yaml =
      "name: ct\n"
      "topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 2, host_rate: 25Gbps, fabric_rate: 100Gbps,"
      " host_cable_m: 3, fabric_cable_m: 10}\n"
      "hosts: {mtu: 4096}\n"
      "stats: {interval: 0}\n"
      "switch:\n"
      "  clock_period: 1100ps\n"
      "  pipeline: {parser: 7, lookup: 11, mmu: 5, egress: 13}\n"
      "  cut_through: true\n"
      "flows:\n  - {src: h0, dst: h2, size: 3000B, start: 333ns}\n  - {src: h1, dst: h0, size: 3000B, start: 20us}\n";
  SimRun r = run_yaml(yaml);
  auto sw = [&](const std::string& name) -> const sw::Switch& {
    for (const auto& s : r.fabric->switches())
      if (name == s->basename()) return *s;
    ADD_FAILURE() << "no switch " << name;
    return *r.fabric->switches().at(0);
  };
  const host::FlowRecord& f0 = r.fabric->flows().at(0);
  const host::FlowRecord& f1 = r.fabric->flows().at(1);
  ASSERT_TRUE(f0.done());
  ASSERT_TRUE(f1.done());
  // Cut-through packets per switch, from the paths: leaf0 cuts flow 1 only,
  // the spine and leaf1 cut flow 0.
  EXPECT_EQ(sw("leaf0").cut_through_packets(), 1u) << "flow 0 falls back at leaf0, flow 1 cuts through";
  EXPECT_EQ(sw("spine0").cut_through_packets(), 1u);
  EXPECT_EQ(sw("leaf1").cut_through_packets(), 1u);

  // Latency, with the formulas of the Pipeline tests above: 1100 ps clock;
  // store-and-forward from the clock edge after the last bit, cut-through from
  // the edge after the headers, then parser + lookup + mmu + buffer write +
  // egress + buffer read cycles (13 cells and the first cell: one write and one
  // read cycle each at 16 cells per cycle).
  const uint64_t P = 1100, cycles = 7 + 11 + 5 + 1 + 13 + 1;
  const uint64_t hdr = 74, frame = 74 + 3000 + 8;  // 802.1Q RoCEv2 WRITE_ONLY with RETH; ICRC + FCS
  const uint64_t host_cable = 15000, fabric_cable = 50000;  // 3 m and 10 m at 5 ns/m
  const uint64_t b25 = 320, b100 = 80;                      // ps per byte at 25 and 100 Gbps
  // Flow 0 at leaf0: arrives at 25G; falls back, so it leaves from its last bit.
  const uint64_t leaf0_in = 333000 + host_cable;
  const uint64_t leaf0_out = align(leaf0_in + (8 + frame) * b25, P) + cycles * P;
  EXPECT_NE((leaf0_in + (8 + frame) * b25) % P, 0u) << "the case exercises the alignment to a clock edge";
  // At the spine (100G in): cut through from its headers.
  const uint64_t spine_in = leaf0_out + fabric_cable;
  const uint64_t spine_out = align(spine_in + (8 + hdr) * b100, P) + cycles * P;
  EXPECT_LT(spine_out, spine_in + (8 + frame) * b100) << "the spine sends before the last bit is in";
  // At leaf1 (100G in, 25G out): cut through from its headers.
  const uint64_t leaf1_in = spine_out + fabric_cable;
  const uint64_t leaf1_out = align(leaf1_in + (8 + hdr) * b100, P) + cycles * P;
  EXPECT_EQ(f0.first_rx_ps, leaf1_out + host_cable);
  // What cutting through at leaf0 would have given instead (it would have
  // underrun the 100G uplink): the frame leaves after its headers.
  EXPECT_GT(leaf0_out, align(leaf0_in + (8 + hdr) * b25, P) + cycles * P + 3000 * b25 / 2);
  // Flow 1 at leaf0, 25G -> 25G: cut through from its headers.
  const uint64_t f1_in = 20000000 + host_cable;
  EXPECT_EQ(f1.first_rx_ps, align(f1_in + (8 + hdr) * b25, P) + cycles * P + host_cable);
}

TEST(Buffer, WriteBandwidthContentionDelaysLaterPackets) {
  // Eight senders to eight receivers, one frame each, all arriving in the same
  // cycle. One cell written per cycle: each 5-cell frame holds the write port
  // for 5 cycles, so the k-th admitted frame leaves 5k cycles later.
  std::string yaml =
      "name: bw\n"
      "topology: {kind: single_switch, hosts: 16, host_rate: 100Gbps, cable_m: 1}\n"
      "stats: {interval: 0}\n"
      "switch:\n"
      "  clock_period: 1ns\n"
      "  buffer: {write_cells_per_cycle: 1, read_cells_per_cycle: 16}\n"
      "flows:\n";
  for (int i = 0; i < 8; ++i)
    yaml += "  - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(8 + i) + ", size: 1024B}\n";
  SimRun r = run_yaml(yaml);
  std::vector<uint64_t> lat;
  for (const auto& f : r.fabric->flows()) {
    ASSERT_TRUE(f.done());
    lat.push_back(f.first_rx_ps);
  }
  std::sort(lat.begin(), lat.end());
  // 1024 B payload WRITE_ONLY: 74 + 1024 + 8 = 1106 B -> 5 cells.
  for (size_t k = 1; k < lat.size(); ++k) EXPECT_EQ(lat[k] - lat[k - 1], 5000u) << "frame " << k;
  EXPECT_GT(r.fabric->switches().at(0)->buffer.stats().write_wait_ps, 0u);
  // With enough bandwidth, the same frames leave together.
  EXPECT_EQ(lat.back() - lat.front(), 7u * 5000);
}

TEST(Buffer, InvalidBufferConfigurationIsRejectedAtLoad) {
  const std::string yaml =
      "name: bad\n"
      "topology: {kind: single_switch, hosts: 64}\n"
      "switch:\n"
      "  mmu: {shared_headroom: 0B, pg_lossless: {reserved: 4608B, dynamic_th: 0, headroom: 160000B}}\n";
  auto cfg = core::Config::load_string(yaml, "bad.yaml");
  try {
    (void)sim::read_scenario(*cfg);
    FAIL() << "expected a configuration error";
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "switch");
    // 64 ports x 2 lossless PGs x 160000 B of reserved headroom = 20 MB > 16 MiB.
    EXPECT_NE(e.reason().find("64-port switch"), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("exceed"), std::string::npos) << e.what();
  }
}

// Issue 5: DWRR weights 1:2:5 on one 100 Gbps egress port, queues kept
// saturated by three line-rate senders with different frame sizes, get byte
// shares within 2 % of 1/8, 2/8 and 5/8; a strict queue with traffic takes
// what it offers ahead of them.
TEST(Scheduler, DwrrSharesOnASaturatedPortAndStrictPreemption) {
  const std::string yaml =
      "name: dwrr\n"
      "sim: {duration: 1500us, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 5, host_rate: 100Gbps, cable_m: 1}\n"
      "hosts: {mtu: 4096, pcp: 0}\n"
      "stats: {interval: 0}\n"
      "switch:\n"
      "  qos: {dscp_to_tc: {8: 1, 16: 2, 48: 6}}\n"
      "  scheduler:\n"
      "    queues: {0: {mode: dwrr, weight: 1}, 1: {mode: dwrr, weight: 2}, 2: {mode: dwrr, weight: 5}, 6: {mode: strict}}\n"
      "flows:\n"
      // Frames of 146 B (64 B payload), 1582 B (1500 B) and a 4178 B / 986 B mix (5000 B messages).
      "  - {src: h0, dst: h4, size: 64B, messages: 10000000, dscp: 0}\n"
      "  - {src: h1, dst: h4, size: 1500B, messages: 1000000, dscp: 8}\n"
      "  - {src: h2, dst: h4, size: 5000B, messages: 1000000, dscp: 16}\n"
      // A strict flow at 20 Gbps from 800 us on.
      "  - {src: h3, dst: h4, size: 4KiB, messages: 1000000, rate: 20Gbps, dscp: 48, start: 800us}\n";
  auto cfg = core::Config::load_string(yaml, "dwrr.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  const sw::Switch& s = *fabric.switches().at(0);
  auto deq = [&](uint32_t q) { return s.queue_stats(4, q).deq_bytes; };
  // Window 1 (no strict traffic): 200 us .. 700 us.
  sc_core::sc_start(core::ps(200000000));
  const uint64_t a0 = deq(0), a1 = deq(1), a2 = deq(2);
  sc_core::sc_start(core::ps(500000000));
  const double d0 = double(deq(0) - a0), d1 = double(deq(1) - a1), d2 = double(deq(2) - a2);
  const double sum = d0 + d1 + d2;
  EXPECT_NEAR(d0 / sum, 1.0 / 8, 0.02 / 8) << "queue 0";
  EXPECT_NEAR(d1 / sum, 2.0 / 8, 0.02 * 2 / 8) << "queue 1";
  EXPECT_NEAR(d2 / sum, 5.0 / 8, 0.02 * 5 / 8) << "queue 2";
  // The port ran at line rate: 500 us at 100 Gbps, less preamble and IFG per frame.
  EXPECT_GT(sum, 0.9 * 100e9 / 8 * 500e-6);
  // Window 2 (strict queue 6 sending 20 Gbps): 1000 us .. 1500 us.
  sc_core::sc_start(core::ps(300000000));
  const uint64_t b0 = deq(0), b1 = deq(1), b2 = deq(2), b6 = deq(6);
  sc_core::sc_start(core::ps(500000000));
  const double e0 = double(deq(0) - b0), e1 = double(deq(1) - b1), e2 = double(deq(2) - b2), e6 = double(deq(6) - b6);
  // The strict queue gets all it offers: 20 Gbps of frames (4178 B frames of 4 KiB paced on wire bytes).
  EXPECT_NEAR(e6 * 8 / 500e-6, 20e9 * 4178.0 / 4198.0, 0.01 * 20e9);
  const double rest = e0 + e1 + e2;
  EXPECT_NEAR(e0 / rest, 1.0 / 8, 0.02 / 8);
  EXPECT_NEAR(e1 / rest, 2.0 / 8, 0.02 * 2 / 8);
  EXPECT_NEAR(e2 / rest, 5.0 / 8, 0.02 * 5 / 8);
}

// The ingress arbiter: four senders in lockstep (same start, rate and cable)
// overload one egress queue, so at every clock edge their four frames arrive
// together and the queue's dynamic threshold admits only the first ones. A
// fixed order among the four would starve the last; the round-robin arbiter
// (each port first equally often, docs/fidelity.md) gives each an equal share
// of the egress port: by symmetry a quarter of what was delivered, within a
// few frames.
TEST(IngressArbiter, SimultaneousArrivalsShareAnOverloadedQueueEqually) {
  std::string yaml = lossy_switch(5, "{reserved: 0B, dynamic_th: -2}", "256KiB");
  yaml += "flows:\n";
  for (int i = 0; i < 4; ++i) yaml += "  - {src: h" + std::to_string(i) + ", dst: h4, size: 1MiB, messages: 100}\n";
  SimRun r = run_yaml(yaml);
  const link::Ledger& L = r.fabric->ledger();
  ASSERT_GT(L.dropped(packet::DropReason::egress_limit), 1000u) << "the queue must be overloaded";
  uint64_t total = 0;
  std::vector<uint64_t> got;
  for (const auto& f : r.fabric->flows()) {
    got.push_back(f.bytes_received);
    total += f.bytes_received;
  }
  ASSERT_EQ(got.size(), 4u);
  const double share = static_cast<double>(total) / 4;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(static_cast<double>(got[i]), share, 4 * 1024.0) << "flow " << i << " of 4 (payload 1024 B per frame)";
}

namespace {

// A queue manager for switch.queue_impl: rtl, here a C++ model behind a
// wrapper whose dequeue can misreport the cell it took (a faulty RTL).
class MisreportingQm final : public qm::ForwardingQueueManager {
 public:
  MisreportingQm(std::unique_ptr<qm::QueueManager> inner, uint64_t wrong_from)
      : ForwardingQueueManager(*inner), m_own(std::move(inner)), m_wrong_from(wrong_from) {}
  qm::EnqueueResult enqueue(const qm::EnqueueOp& op) override { return m_inner.enqueue(op); }
  qm::DequeueResult dequeue(const qm::DequeueOp& op) override {
    qm::DequeueResult r = m_inner.dequeue(op);
    if (++m_dequeues >= m_wrong_from) r.head_cell += 1;
    return r;
  }
  qm::PfcAction pfc_tick(uint16_t port, uint8_t pg) override { return m_inner.pfc_tick(port, pg); }
  uint64_t dequeues() const { return m_dequeues; }

 private:
  std::unique_ptr<qm::QueueManager> m_own;
  uint64_t m_wrong_from;
  uint64_t m_dequeues = 0;
};

// Two senders into one receiver, the egress queue backlogged.
std::string two_to_one_lists() {
  std::string yaml = lossy_switch(3, "{reserved: 0B, dynamic_th: 0}", "4MiB", "200us");
  yaml += "flows:\n  - {src: h0, dst: h2, size: 64KiB, messages: 4}\n  - {src: h1, dst: h2, size: 64KiB, messages: 4}\n";
  return yaml;
}

sim::RunResult run_with_qm(const std::string& yaml, uint64_t wrong_from, const MisreportingQm** qm_out,
                           std::unique_ptr<sim::Fabric>& fabric) {
  auto cfg = core::Config::load_string(yaml, "test.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  fabric = std::make_unique<sim::Fabric>("fabric", scen);
  sw::Switch& s = *fabric->switches().at(0);
  auto qm = std::make_unique<MisreportingQm>(std::make_unique<qm::QueueManager>(s.qm_model().config()), wrong_from);
  *qm_out = qm.get();
  s.enable_rtl(std::move(qm));
  return fabric->run();
}

}  // namespace

// The switch holds its queued frames as lists through the frames (in the
// queue manager's order, no per-cell array), and checks each dequeue's head
// cell against the queue's first frame: a queue manager (the RTL) that
// takes another cell is reported, not answered with the wrong frame. The
// same wrapper telling the truth runs clean, so the error is the cell's.
TEST(QueueLists, TheQueueManagersHeadCellIsTheQueuesFirstFrame) {
  std::unique_ptr<sim::Fabric> fabric;
  const MisreportingQm* qm = nullptr;
  const sim::RunResult r = run_with_qm(two_to_one_lists(), UINT64_MAX, &qm, fabric);
  EXPECT_TRUE(r.conserved);
  uint64_t got = 0;
  for (const auto& f : fabric->flows()) got += f.bytes_received;
  EXPECT_EQ(got, 2u * 4 * 64 * 1024) << "every message delivered through the wrapped queue manager";
  EXPECT_EQ(qm->dequeues(), 2u * 4 * 64) << "8 messages of 64 KiB in frames of 1024 B of payload (the MTU)";
}

TEST(QueueLists, ADequeueOfAnotherCellIsAnError) {
  std::unique_ptr<sim::Fabric> fabric;
  const MisreportingQm* qm = nullptr;
  // The error is expected here: SystemC reports it (and throws) without the
  // test main's handler, which fails the test on any error.
  const auto quiet = [](const sc_core::sc_report& r, const sc_core::sc_actions& a) {
    sc_core::sc_report_handler::default_handler(r, a & ~sc_core::SC_DISPLAY);
  };
  const sc_core::sc_report_handler_proc before = sc_core::sc_report_handler::set_handler(quiet);
  std::string what;
  try {
    run_with_qm(two_to_one_lists(), 10, &qm, fabric);
  } catch (const std::exception& e) {
    what = e.what();
  }
  sc_core::sc_report_handler::set_handler(before);
  EXPECT_NE(what.find("the queue manager dequeued cell"), std::string::npos) << "error: '" << what << "'";
  EXPECT_NE(what.find("the queue's first frame is at cell"), std::string::npos) << what;
  ASSERT_NE(qm, nullptr);
  EXPECT_EQ(qm->dequeues(), 10u) << "stopped at the first misreported dequeue";
}

namespace {

// Records the WRED word each enqueue carries; optionally claims a WRED draw
// on the first enqueue (a queue manager that misreports).
class WordRecordingQm final : public qm::ForwardingQueueManager {
 public:
  WordRecordingQm(std::unique_ptr<qm::QueueManager> inner, bool claim_draw)
      : ForwardingQueueManager(*inner), m_own(std::move(inner)), m_claim_draw(claim_draw) {}
  qm::EnqueueResult enqueue(const qm::EnqueueOp& op) override {
    ops.push_back(op);
    qm::EnqueueResult r = m_inner.enqueue(op);
    if (m_claim_draw && ops.size() == 1) r.ecn.drew = true;
    return r;
  }
  qm::DequeueResult dequeue(const qm::DequeueOp& op) override { return m_inner.dequeue(op); }
  qm::PfcAction pfc_tick(uint16_t port, uint8_t pg) override { return m_inner.pfc_tick(port, pg); }
  std::vector<qm::EnqueueOp> ops;

 private:
  std::unique_ptr<qm::QueueManager> m_own;
  bool m_claim_draw;
};

// two_to_one_lists() with ECN marking off on every queue.
std::string two_to_one_no_marking() {
  std::string yaml = two_to_one_lists();
  const size_t flows = yaml.find("flows:");
  return yaml.insert(flows, "  ecn: {mode: off}\n");
}

}  // namespace

// With no queue marking ECN the switch keeps no WRED streams, yet every
// operation still carries each queue's word: the first of the stream the
// run seed and the queue's name define (what an ops file records and the
// RTL replays). Expected words computed here from core::Rng.
TEST(WredWords, AQueueThatDoesNotMarkCarriesItsStreamsFirstWord) {
  auto cfg = core::Config::load_string(two_to_one_no_marking(), "test.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  sw::Switch& s = *fabric.switches().at(0);
  for (const ecn::MarkerConfig& e : s.config().ecn)
    ASSERT_EQ(e.mode, ecn::MarkerConfig::Mode::off) << "the scenario must mark on no queue";
  auto qm = std::make_unique<WordRecordingQm>(std::make_unique<qm::QueueManager>(s.qm_model().config()), false);
  const WordRecordingQm* rec = qm.get();
  s.enable_rtl(std::move(qm));
  fabric.run();
  ASSERT_GT(rec->ops.size(), 100u);
  for (const qm::EnqueueOp& op : rec->ops) {
    core::Rng stream(scen.seed, std::string(s.name()) + ".p" + std::to_string(op.out_port) + ".q" +
                                    std::to_string(op.queue) + ".ecn");
    ASSERT_EQ(op.rand32, static_cast<uint32_t>(stream.next_u64() >> 32)) << op.out_port << ":" << unsigned(op.queue);
  }
}

TEST(WredWords, ADrawOnAQueueThatDoesNotMarkIsAnError) {
  auto cfg = core::Config::load_string(two_to_one_no_marking(), "test.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  sw::Switch& s = *fabric.switches().at(0);
  s.enable_rtl(std::make_unique<WordRecordingQm>(std::make_unique<qm::QueueManager>(s.qm_model().config()), true));
  const auto quiet = [](const sc_core::sc_report& r, const sc_core::sc_actions& a) {
    sc_core::sc_report_handler::default_handler(r, a & ~sc_core::SC_DISPLAY);
  };
  const sc_core::sc_report_handler_proc before = sc_core::sc_report_handler::set_handler(quiet);
  std::string what;
  try {
    fabric.run();
  } catch (const std::exception& e) {
    what = e.what();
  }
  sc_core::sc_report_handler::set_handler(before);
  EXPECT_NE(what.find("a WRED draw on a queue with no ECN marking"), std::string::npos) << "error: '" << what << "'";
}

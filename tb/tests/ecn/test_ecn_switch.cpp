// Which queue length the switch's ECN decision sees (tlm/ecn/marker.h,
// "Which queue length"): at enqueue the queue before the packet's own cells
// are charged, although the MMU has already charged them. In-process runs
// with a threshold placed exactly between the two lengths, and the
// `ecn.unit: cells` configuration.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/config.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

struct Marks {
  uint64_t seen, marked, sent;
};

// h0 and h1 send the same paced flow to h2 at 40 Gbps each, from t = 0 with
// equal cables, so each frame of h0 arrives at the switch in the same
// picosecond as one of h1: the first of the pair to be admitted finds the
// queue to h2 empty, the second finds the first (whose transmission starts
// some cycles later). Two frames leave in 2 x 1110 x 8 / 100G = 178 ns, before
// the next pair comes 222 ns later, so the queue is empty again. Payload
// 1024 B: a frame of 1024 + 62..82 B takes 5 cells of 256 B whatever its
// headers, so the queue each packet finds is 0 or 5 cells, and without the
// packet's own cells it would be 5 or 10.
Marks run(const std::string& ecn) {
  const std::string yaml =
      "name: ecn_point\n"
      "sim: {duration: 100us, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 3, host_rate: 100Gbps, cable_m: 2}\n"
      "hosts: {mtu: 1024}\n"
      "switch: {ecn: " + ecn + "}\n"
      "stats: {interval: 0}\n"
      "flows:\n"
      "  - {src: h0, dst: h2, size: 1024B, messages: 400, rate: 40Gbps}\n"
      "  - {src: h1, dst: h2, size: 1024B, messages: 400, rate: 40Gbps}\n";
  auto cfg = core::Config::load_string(yaml, "ecn_point.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  fabric.run();
  const sw::Switch& sw0 = *fabric.switches().at(0);
  const ecn::Counters& c = sw0.ecn_counters(2, 3);  // port to h2, RoCE queue 3
  uint64_t sent = 0;
  for (const auto& f : fabric.flows()) sent += f.packets_sent;
  return Marks{c.seen, c.marked, sent};
}

}  // namespace

// Before its own charge the two packets of a pair find 0 and 5 cells; with
// it they would see 5 and 10. K = 4 marks exactly the second of every pair
// (5 > 4, 0 <= 4); counting the packet's own cells would mark both.
TEST(EcnPoint, EnqueueSeesTheQueueBeforeThePacketsOwnCells) {
  const Marks m = run("{mode: threshold, unit: cells, k: 4}");
  ASSERT_EQ(m.sent, 800u);
  EXPECT_EQ(m.seen, 800u);
  EXPECT_EQ(m.marked, 400u) << "one of each pair";
}

// K = 5 cells: the second packet finds exactly 5 and 5 > 5 is false, so
// nothing is marked; counting its own cells would mark it (10 > 5).
TEST(EcnPoint, EnqueueThresholdAtTheFoundLengthDoesNotFire) {
  const Marks m = run("{mode: threshold, unit: cells, k: 5}");
  EXPECT_EQ(m.seen, 800u);
  EXPECT_EQ(m.marked, 0u);
}

// The same instants in bytes: the second packet finds one frame (1024 +
// headers > 1024 B), the first finds 0, so K = 1024 B marks one of each pair
// (with the packet's own bytes both would exceed 1024 B).
TEST(EcnPoint, EnqueueInBytesSeesTheSameInstant) {
  const Marks m = run("{mode: threshold, k: 1024B}");
  EXPECT_EQ(m.seen, 800u);
  EXPECT_EQ(m.marked, 400u);
}

// At dequeue the packet sees what it leaves behind: the first of a pair
// leaves the second (5 cells), the second leaves nothing, so K = 4 marks
// exactly one of each pair, and so does K = 0 (0 > 0 is false). (One run per
// test: a process elaborates SystemC once.)
TEST(EcnPoint, DequeueSeesWhatThePacketLeavesBehind) {
  EXPECT_EQ(run("{mode: threshold, point: dequeue, unit: cells, k: 4}").marked, 400u);
}
TEST(EcnPoint, DequeueAtKZeroMarksOnlyThePacketThatLeavesABacklog) {
  EXPECT_EQ(run("{mode: threshold, point: dequeue, unit: cells, k: 0}").marked, 400u);
}

// `unit: cells` alone keeps the byte defaults' meaning: each threshold is
// converted at the buffer's cell size, rounded up (ecn/config.h), instead
// of reinterpreting 100000 bytes as 100000 cells; explicit integers are
// cells; a per-queue override inherits the section's unit.
TEST(EcnConfig, UnitCellsConvertsTheByteDefaultsAtTheCellSize) {
  auto spec = [](const std::string& sw) {
    auto cfg = core::Config::load_string("name: u\ntopology: {kind: single_switch, hosts: 2}\nswitch: " + sw + "\n",
                                         "u.yaml");
    return sim::read_scenario(*cfg).sw;
  };
  const sim::SwitchSpec a = spec("{ecn: {unit: cells}}");
  EXPECT_EQ(a.ecn.unit, ecn::MarkerConfig::Unit::cells);
  EXPECT_EQ(a.ecn.kmin, 391u);   // ceil(100000 / 256)
  EXPECT_EQ(a.ecn.kmax, 1563u);  // ceil(400000 / 256)
  EXPECT_EQ(a.ecn.k, 391u);
  EXPECT_EQ(a.ecn.k_high, 782u);  // ceil(200000 / 256)
  EXPECT_EQ(a.ecn.k_low, 391u);
  const sim::SwitchSpec b = spec("{buffer: {cell: 128B}, ecn: {unit: cells, kmin: 10, queues: {3: {kmax: 20}}}}");
  EXPECT_EQ(b.ecn.kmin, 10u);
  EXPECT_EQ(b.ecn.kmax, 3125u);  // 400000 / 128
  EXPECT_EQ(b.ecn_queue[3].unit, ecn::MarkerConfig::Unit::cells);
  EXPECT_EQ(b.ecn_queue[3].kmin, 10u);
  EXPECT_EQ(b.ecn_queue[3].kmax, 20u);
  // A queue back in bytes: the section's cells times the cell size.
  const sim::SwitchSpec c = spec("{ecn: {unit: cells, kmin: 10, queues: {3: {unit: bytes}}}}");
  EXPECT_EQ(c.ecn_queue[3].unit, ecn::MarkerConfig::Unit::bytes);
  EXPECT_EQ(c.ecn_queue[3].kmin, 2560u);
  // Defaults: bytes.
  EXPECT_EQ(spec("{}").ecn.unit, ecn::MarkerConfig::Unit::bytes);
  EXPECT_EQ(spec("{}").ecn.kmin, 100000u);
}

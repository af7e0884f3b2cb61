// Pause timing on the wire (802.1Qbb), in-process: a pause with timer T at
// speed S stops its priority for T * 512 / S seconds, a frame already being
// sent is not cut, and another priority keeps its throughput meanwhile.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "core/config.h"
#include "core/time.h"
#include "packet/build.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

struct Record {
  uint64_t t_ns;
  uint32_t len;
  uint8_t pcp;
};

// Frames of a pcap written by link::PcapWriter: time, length and 802.1Q PCP.
std::vector<Record> read_pcap(const std::string& path) {
  std::vector<Record> out;
  std::ifstream f(path, std::ios::binary);
  char gh[24];
  f.read(gh, sizeof gh);
  uint32_t rh[4];
  std::vector<uint8_t> buf;
  while (f.read(reinterpret_cast<char*>(rh), sizeof rh)) {
    buf.resize(rh[2]);
    f.read(reinterpret_cast<char*>(buf.data()), rh[2]);
    const bool vlan = buf.size() > 15 && buf[12] == 0x81 && buf[13] == 0x00;
    out.push_back(Record{uint64_t(rh[0]) * 1000000000ull + rh[1], rh[3], static_cast<uint8_t>(vlan ? buf[14] >> 5 : 0)});
  }
  return out;
}

}  // namespace

TEST(PauseTiming, PriorityStopsForTQuantaWithoutCuttingAFrameAndOthersKeepFlowing) {
  const std::string yaml =
      "name: timing\n"
      "sim: {duration: 60us, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 2, host_rate: 100Gbps, cable_m: 2}\n"
      "hosts: {mtu: 4096}\n"
      "pfc: {mac_response_delay: 500ns}\n"
      "stats: {interval: 0}\n"
      "flows:\n"
      "  - {src: h0, dst: h1, size: 64MiB, rate: 50Gbps, pcp: 3, dscp: 26}\n"
      "  - {src: h0, dst: h1, size: 64MiB, rate: 50Gbps, pcp: 1, dscp: 10}\n";
  auto cfg = core::Config::load_string(yaml, "timing.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  char tmpl[] = "/tmp/rocesim-pfc-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  sim::PcapRequest req;
  req.node = "h0";
  std::string why;
  ASSERT_TRUE(fabric.open_pcaps({req}, dir, why)) << why;

  // At 20 us the switch sends h0 one pause for priority 3, T = 2000 quanta
  // (10.24 us at 100 Gbps), and never refreshes it.
  const uint16_t T = 2000;
  sw::Switch& sw0 = *fabric.switches().at(0);
  link::Ledger& ledger = const_cast<link::Ledger&>(fabric.ledger());
  sc_core::sc_spawn([&] {
    sc_core::wait(core::ps(20000000));
    packet::Packet* p = ledger.create();
    uint16_t timers[8] = {};
    timers[3] = T;
    packet::build_pfc(*p, 0x028000000000ull, 1u << 3, timers);
    sw0.ports[0]->send_control(p);
  });
  fabric.run();
  ASSERT_TRUE(fabric.close_streams());

  // The pause frame leaves sw0 at 20 us if the port is idle (nothing flows to
  // h0): its last bit reaches h0 after (8 + 64) B at 100 Gbps and 10 ns of
  // cable, and takes effect 500 ns later.
  EXPECT_EQ(sw0.ports[0]->stats().pause_tx, 1u);
  const uint64_t t_eff_ns = 20000 + 5 /* 5.76 ns */ + 10 + 500;
  const uint64_t dur_ns = uint64_t(T) * 512 * 1000 / 100000;  // 10240 ns
  const std::vector<Record> tx = read_pcap(dir + "/h0-p0-tx.pcap");
  ASSERT_GT(tx.size(), 100u);
  const double frame_ns = (4096 + 82 + 20) * 8 / 100.0;  // one MTU frame on the wire: 335.84 ns

  uint64_t last_before = 0, first_after = UINT64_MAX;
  uint64_t prio1_bytes_in_pause = 0;
  for (const Record& r : tx) {
    if (r.pcp == 3) {
      if (r.t_ns <= t_eff_ns) last_before = r.t_ns;
      if (r.t_ns > t_eff_ns && first_after == UINT64_MAX) first_after = r.t_ns;
      // No priority-3 frame starts while the pause holds.
      EXPECT_FALSE(r.t_ns > t_eff_ns + 1 && r.t_ns < t_eff_ns + dur_ns) << "priority 3 frame at " << r.t_ns << " ns";
    }
    if (r.pcp == 1 && r.t_ns >= t_eff_ns && r.t_ns + frame_ns <= t_eff_ns + dur_ns) prio1_bytes_in_pause += r.len + 4;
  }
  ASSERT_GT(last_before, 0u);
  ASSERT_NE(first_after, UINT64_MAX);
  // Resumes when the timer runs out, within one frame time (a priority-1
  // frame may be on the wire then, and is not cut either).
  EXPECT_GE(first_after + 1, t_eff_ns + dur_ns);
  EXPECT_LE(first_after, t_eff_ns + dur_ns + frame_ns + 1);
  // The last priority-3 frame before the pause started before it took effect
  // and went out whole: every frame of the run arrived intact.
  EXPECT_LE(last_before, t_eff_ns);
  EXPECT_EQ(fabric.ledger().dropped(), 0u);
  for (const auto& f : fabric.flows()) EXPECT_EQ(f.psn_errors, 0u);
  // Priority 1 kept its 50 Gbps meanwhile (within two frames).
  const double expect = 50e9 / 8 * dur_ns * 1e-9;
  EXPECT_NEAR(static_cast<double>(prio1_bytes_in_pause), expect, 2 * 4202.0);
  const auto st = fabric.hosts()[0]->mac.pause_stats(3);
  EXPECT_EQ(st.frames, 1u);
  EXPECT_EQ(st.paused_ps, dur_ns * 1000) << "paused exactly T * 512 bit times";
}

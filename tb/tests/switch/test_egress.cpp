// A backlogged switch egress port sends frames back to back at exactly line
// rate (802.3: a frame of F bytes incl. FCS occupies (8 + F + 12) * 8 / rate
// on the wire with its preamble and inter-frame gap), whatever the core
// clock, and when the packet buffer's read bandwidth cannot sustain the line
// rate, frames are spaced by their read time instead. Also: a lone line-rate
// DCQCN flow through an uncongested port sees no ECN mark and no CNP.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../link/pcap_read.h"
#include "core/config.h"
#include "core/time.h"
#include "link/pcap.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

// RDMA WRITE_ONLY with RETH behind an 802.1Q tag: Ethernet 14 + tag 4 + IPv4
// 20 + UDP 8 + BTH 12 + RETH 16 = 74 B of headers, then the payload, ICRC 4
// and FCS 4 (IBTA vol. 1 annex A17; IEEE 802.3).
uint32_t frame_bytes(uint32_t payload) { return 74 + payload + 8; }
// Wire time of one frame at 100 Gbps: 80 ps per byte, preamble+SFD 8 and IFG 12.
uint64_t wire_ps_100g(uint32_t frame) { return (frame + 20ull) * 80; }

// First-bit arrival times (exact ps) of the frames of one length at a MAC.
// Optionally also written to a capture.
struct Arrivals : link::FrameTap {
  uint32_t frame = 0;
  std::vector<uint64_t> t;
  uint64_t others = 0;
  link::PcapWriter* pcap = nullptr;
  void write(uint64_t ts_ps, const packet::Packet& p) override {
    if (pcap) pcap->write(ts_ps, p);
    if (p.frame_len() == frame) {
      t.push_back(ts_ps);
    } else {
      ++others;
    }
  }
};

// Two senders (h0, h1) at line rate into one 100 Gbps receiver (h2) through
// one switch, on a lossy queue with room to spare: the egress port towards h2
// is backlogged from its second frame on.
std::string two_to_one(uint32_t payload, const std::string& clock, const std::string& buffer, uint32_t messages,
                       const std::string& duration) {
  const uint32_t mtu = payload <= 256 ? 256 : payload <= 1024 ? 1024 : 4096;
  return "name: b2b\n"
         "sim: {duration: " + duration + ", stop_when_done: false}\n"
         "topology: {kind: single_switch, hosts: 3, host_rate: 100Gbps, cable_m: 1}\n"
         "hosts: {mtu: " + std::to_string(mtu) + ", dscp: 0, pcp: 0}\n"
         "stats: {interval: 0}\n"
         "switch:\n"
         "  clock_period: " + clock + "\n"
         "  buffer: " + buffer + "\n"
         "  mmu:\n"
         "    pools: {ingress_lossless: 256KiB, ingress_lossy: 15MiB, egress_lossless: 256KiB, egress_lossy: 15MiB}\n"
         "    shared_headroom: 128KiB\n"
         "    pg_lossy: {reserved: 0B, dynamic_th: 7}\n"
         "    queue_lossy: {reserved: 0B, dynamic_th: 0}\n"
         "flows:\n"
         "  - {src: h0, dst: h2, size: " + std::to_string(payload) + "B, messages: " + std::to_string(messages) + "}\n"
         "  - {src: h1, dst: h2, size: " + std::to_string(payload) + "B, messages: " + std::to_string(messages) + "}\n";
}

// pcap record timestamps, read with our own parser (not the writer's code).
std::vector<uint64_t> pcap_times_ns(const std::string& path, uint32_t caplen_of_interest) {
  const testkit::PcapFile f = testkit::read_pcap(path);
  EXPECT_EQ(f.magic, 0xa1b23c4du) << "nanosecond pcap magic";
  std::vector<uint64_t> t;
  for (const testkit::PcapRecord& r : f.records)
    if (r.orig_len == caplen_of_interest) t.push_back(r.ns);
  return t;
}

// Capture timestamps are the exact first-bit times truncated to the ns, so
// with exact gaps of W ps each recorded gap is floor(W/1000) or
// ceil(W/1000) ns, and n gaps span n * W within 1 ns.
void expect_capture_gaps(const std::vector<uint64_t>& t, uint64_t W, uint32_t n) {
  ASSERT_GE(t.size(), n + 1u);
  const uint64_t lo = W / 1000, hi = (W + 999) / 1000;
  uint32_t wrong = 0;
  for (uint32_t k = 1; k <= n; ++k) {
    const uint64_t g = t[k] - t[k - 1];
    if ((g < lo || g > hi) && wrong++ < 5) ADD_FAILURE() << "capture gap " << k << " is " << g << " ns";
  }
  EXPECT_EQ(wrong, 0u);
  const int64_t span_ps = static_cast<int64_t>((t[n] - t[0]) * 1000);
  EXPECT_LE(std::llabs(span_ps - static_cast<int64_t>(n * W)), 1000) << n << " gaps of " << W << " ps";
}

struct B2bCase {
  uint32_t payload;
  uint64_t clock_ps;
};
void PrintTo(const B2bCase& c, std::ostream* os) { *os << c.payload << " B at " << c.clock_ps << " ps"; }

class BackToBack : public ::testing::TestWithParam<B2bCase> {};

constexpr uint32_t kGaps = 10000;

TEST_P(BackToBack, EveryGapIsTheWireTimeAndTheEgressIsNeverIdle) {
  const B2bCase c = GetParam();
  const uint32_t F = frame_bytes(c.payload);
  const uint64_t W = wire_ps_100g(F);
  // Each sender offers line rate, so the receiver gets one frame per W while
  // both send: 12 000 messages each keep the egress backlogged for 12 000 W.
  const uint32_t messages = 12000;
  const std::string yaml = two_to_one(c.payload, std::to_string(c.clock_ps) + "ps", "{size: 16MiB, cell: 256B}",
                                      messages, std::to_string(messages * W / 1000 + 1000) + "ns");
  auto cfg = core::Config::load_string(yaml, "b2b.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  const std::string cap = ::testing::TempDir() + "rocesim_b2b_" + std::to_string(c.payload) + "_" +
                          std::to_string(c.clock_ps) + ".pcap";
  link::PcapWriter pcap(cap);
  ASSERT_TRUE(pcap.open());
  Arrivals rx;
  rx.frame = F;
  rx.pcap = &pcap;
  fabric.hosts().at(2)->mac.set_pcap(&rx, nullptr);
  const link::Mac& egress = *fabric.switches().at(0)->ports.at(2);

  // Busy fraction of the egress over a window of 10 500 wire times inside the
  // backlog: busy time is booked whole at each frame's start, so a port that
  // never idles books at least (window - W): a fraction >= 1 - 1/10500.
  const uint64_t t1 = 500 * W, t2 = 11000 * W;
  sc_core::sc_start(core::ps(t1));
  const uint64_t busy1 = egress.stats().tx_busy_ps;
  sc_core::sc_start(core::ps(t2 - t1));
  const uint64_t busy2 = egress.stats().tx_busy_ps;
  const double busy_fraction = static_cast<double>(busy2 - busy1) / static_cast<double>(t2 - t1);
  EXPECT_GE(busy_fraction, 0.9999) << "egress tx_busy_fraction over [" << t1 << ", " << t2 << "] ps";

  ASSERT_GE(rx.t.size(), kGaps + 1u) << "frames of " << F << " B at h2";
  EXPECT_EQ(rx.others, 0u) << "only the two flows' frames reach h2";
  uint32_t wrong = 0;
  for (uint32_t k = 1; k <= kGaps; ++k) {
    const uint64_t gap = rx.t[k] - rx.t[k - 1];
    if (gap != W && wrong++ < 5) ADD_FAILURE() << "gap " << k << " is " << gap << " ps, wire time " << W << " ps";
  }
  EXPECT_EQ(wrong, 0u) << "of " << kGaps << " gaps";
  // The same frames in a capture (frames without FCS), read back by our own parser.
  ASSERT_TRUE(pcap.close());
  expect_capture_gaps(pcap_times_ns(cap, F - 4), W, kGaps);
  std::remove(cap.c_str());
}

INSTANTIATE_TEST_SUITE_P(PayloadsAndClocks, BackToBack,
                         ::testing::Values(B2bCase{64, 1000}, B2bCase{1024, 1000}, B2bCase{4096, 1000},
                                           B2bCase{64, 3000}, B2bCase{1024, 3000}, B2bCase{4096, 3000}),
                         [](const ::testing::TestParamInfo<B2bCase>& i) {
                           return "payload" + std::to_string(i.param.payload) + "_clock" +
                                  std::to_string(i.param.clock_ps) + "ps";
                         });

TEST(BackToBack, ReadBandwidthBelowLineRateSpacesFramesByTheirReadTime) {
  // 64 B cells read one per 6 ns cycle: 64 * 8 / 6 ns = 85.3 Gbps < 100 Gbps.
  const uint32_t payload = 1024, cell = 64, per_cycle = 1;
  const uint64_t P = 6000;
  const uint32_t F = frame_bytes(payload);             // 1106 B
  const uint64_t W = wire_ps_100g(F);                  // 90 080 ps
  const uint64_t cells = (F + cell - 1) / cell;        // 18 cells
  const uint64_t read_ps = (cells + per_cycle - 1) / per_cycle * P;  // 108 000 ps
  ASSERT_GT(read_ps, W) << "the case must be read-bound";
  const uint32_t messages = 12000;
  const std::string yaml =
      two_to_one(payload, "6ns", "{size: 16MiB, cell: 64B, read_cells_per_cycle: 1, write_cells_per_cycle: 16}",
                 messages, std::to_string(messages * read_ps / 1000) + "ns");
  auto cfg = core::Config::load_string(yaml, "b2b.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  Arrivals rx;
  rx.frame = F;
  fabric.hosts().at(2)->mac.set_pcap(&rx, nullptr);
  fabric.run();
  ASSERT_GE(rx.t.size(), kGaps + 1u);
  // One port alone on the read port: each frame's cells follow the previous
  // frame's in the read calendar, so frames leave one read time apart, each
  // at the clock edge that ends its read.
  uint32_t wrong = 0;
  for (uint32_t k = 1; k <= kGaps; ++k) {
    const uint64_t gap = rx.t[k] - rx.t[k - 1];
    if (gap != read_ps && wrong++ < 5) ADD_FAILURE() << "gap " << k << " is " << gap << " ps, read time " << read_ps;
  }
  EXPECT_EQ(wrong, 0u);
  const link::MacStats& out = fabric.switches().at(0)->ports.at(2)->stats();
  const double busy = static_cast<double>(out.tx_busy_ps) / static_cast<double>(rx.t.back() + W - rx.t.front());
  EXPECT_NEAR(busy, static_cast<double>(W) / static_cast<double>(read_ps), 1e-3) << "the port idles W/read of the time";
}

TEST(BackToBack, TheCaptureShowsTheWireTimeToTheNanosecond) {
  const char* bin = std::getenv("ROCESIM_BIN");
  ASSERT_NE(bin, nullptr) << "ROCESIM_BIN is set by ctest";
  const uint32_t payload = 1024;
  const uint32_t F = frame_bytes(payload);
  const uint64_t W = wire_ps_100g(F);  // 90 080 ps
  const std::string dir = ::testing::TempDir() + "rocesim_b2b_capture";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  {
    std::ofstream y(dir + "/b2b.yaml");
    y << two_to_one(payload, "1ns", "{size: 16MiB, cell: 256B}", 12000, "1100us");
  }
  const std::string cmd = std::string(bin) + " run " + dir + "/b2b.yaml --out " + dir + "/out --pcap h2:0 >" + dir +
                          "/log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "see " << dir << "/log";
  // Captures hold the frame without its FCS.
  const std::vector<uint64_t> t = pcap_times_ns(dir + "/out/pcap/h2-p0-rx.pcap", F - 4);
  ASSERT_GE(t.size(), kGaps + 1u);
  expect_capture_gaps(t, W, kGaps);
  std::system(("rm -rf " + dir).c_str());
}

// A lone RC + DCQCN flow at line rate through one switch whose egress runs at
// the same line rate never builds a queue (the egress drains exactly as fast
// as the flow arrives), so WRED never marks and the NIC never sends a CNP.
TEST(LoneFlow, LineRateDcqcnFlowSeesNoMarkAndNoCnpIn10ms) {
  const std::string yaml =
      "name: lone\n"
      "sim: {duration: 10ms, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 3, host_rate: 100Gbps}\n"
      "hosts: {mtu: 4096, transport: rc, cc: dcqcn, dcqcn: {preset: paper}}\n"
      "pfc: {headroom: auto}\n"
      "switch:\n"
      "  ecn: {mode: wred, kmin: 20KB, kmax: 100KB, pmax: 0.2}\n"
      "stats: {interval: 0}\n"
      "flows:\n"
      "  - {src: h0, dst: h2, size: 64MiB, messages: 20}\n";
  auto cfg = core::Config::load_string(yaml, "lone.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  sim::Fabric fabric("fabric", scen);
  fabric.run();
  const sw::Switch& s = *fabric.switches().at(0);
  const host::FlowRecord& f = fabric.flows().at(0);
  uint64_t marked = 0, fired = 0, seen = 0;
  for (uint32_t q = 0; q < 8; ++q) {
    marked += s.ecn_counters(2, q).marked;
    fired += s.ecn_counters(2, q).fired();
    seen += s.ecn_counters(2, q).seen;
  }
  EXPECT_GT(seen, 0u) << "the marker saw the flow's packets";
  EXPECT_EQ(marked, 0u);
  EXPECT_EQ(fired, 0u);
  EXPECT_EQ(f.cnps_received, 0u);
  EXPECT_EQ(f.cnps_sent, 0u);
  // And it ran at line rate: 4096 B payload in frames of 74 + 4096 + 8 B
  // (RETH on the first packet only makes the others 16 B shorter, so this is
  // a lower bound), so at least 10 ms * 100 Gbps * 4096 / (4178 + 20) B of
  // payload, less the connection setup and the first round trip (< 20 us).
  const double goodput_floor = (10e-3 - 20e-6) * 100e9 / 8 * 4096.0 / (4178 + 20);
  EXPECT_GE(static_cast<double>(f.bytes_received), goodput_floor);
}

}  // namespace

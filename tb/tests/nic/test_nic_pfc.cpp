// PFC from the NIC's receive buffer (hosts.rx_buffer): while the buffer stays
// above XON, the NIC re-sends XOFF exactly every refresh period after its XOFF
// transition (pfc.refresh, or auto = half the pause time at the port's speed,
// 802.1Qbb: a quantum is 512 bit times), and an XOFF transition comes only
// after an XON. The frames are read from the NIC's transmit side by an
// independent parser of the wire bytes (in process, to the picosecond) and
// of the pcap the CLI writes (to the nanosecond).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../link/pcap_read.h"
#include "../sim/cli_util.h"
#include "core/config.h"
#include "core/time.h"
#include "link/pcap.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

constexpr uint64_t kPsPerS = 1000000000000ull;
constexpr uint64_t kQuantumBits = 512;  // 802.1Qbb: one pause quantum = 512 bit times
constexpr int kPrio = 3;                // pfc_incast's RoCE traffic: PCP 3, lossless

// One PFC frame as read from its bytes (802.1Qbb, 802.3 Annex 31D): untagged,
// to 01-80-C2-00-00-01, EtherType 0x8808, opcode 0x0101, class-enable vector,
// eight 16-bit timers, all big-endian.
struct Pfc {
  uint64_t t;              // ps in process, ns from a pcap
  uint16_t class_enable;
  uint16_t timer[8];
  uint64_t level = 0;      // in process: the NIC's buffer bytes when it sent the frame
};

uint16_t be16(const uint8_t* b) { return static_cast<uint16_t>(b[0] << 8 | b[1]); }

// False if the bytes are not a PFC frame.
bool parse_pfc(const uint8_t* b, size_t n, uint64_t t, Pfc& out) {
  static const uint8_t kDst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
  if (n < 14 + 20 || std::memcmp(b, kDst, 6) != 0 || be16(b + 12) != 0x8808 || be16(b + 14) != 0x0101) return false;
  out.t = t;
  out.class_enable = be16(b + 16);
  for (int i = 0; i < 8; ++i) out.timer[i] = be16(b + 18 + 2 * i);
  return true;
}

// The frames a MAC sends, serialized and parsed as bytes.
struct PfcTap : link::FrameTap {
  const host::Host* nic = nullptr;
  std::vector<Pfc> pfc;
  uint64_t other = 0;
  void write(uint64_t ts_ps, const packet::Packet& p) override {
    uint8_t buf[2048];
    const size_t n = p.serialize(buf, sizeof buf);
    Pfc f{};
    if (!parse_pfc(buf, n, ts_ps, f)) {
      ++other;
      return;
    }
    f.level = nic->rx_buffer_level();
    pfc.push_back(f);
  }
};

// Reads a nanosecond pcap (magic 0xa1b23c4d, little-endian as written on x86).
std::vector<Pfc> read_pcap_pfc(const std::string& path, uint64_t& other) {
  const testkit::PcapFile file = testkit::read_pcap(path);
  std::vector<Pfc> out;
  other = 0;
  if (file.magic != 0xa1b23c4d) {
    ADD_FAILURE() << path << ": not a nanosecond pcap";
    return out;
  }
  for (const testkit::PcapRecord& r : file.records) {
    Pfc f{};
    if (parse_pfc(reinterpret_cast<const uint8_t*>(r.data.data()), r.incl_len, r.ns, f)) {
      out.push_back(f);
    } else {
      ++other;
    }
  }
  return out;
}

// What the sequence of the NIC's PFC frames on kPrio shows.
struct Episodes {
  uint64_t transitions = 0, refreshes = 0, xons = 0;
};

// Checks the sequence: every frame is for kPrio only with the configured
// timer (XOFF) or 0 (XON); an XOFF after an XOFF (no XON between) is a
// refresh, exactly `period` after the previous one; an XON follows an XOFF
// (never another XON) within one period of it (a refresh due earlier would
// have gone first). Levels are checked when known (in process).
Episodes check_sequence(const std::vector<Pfc>& f, uint16_t quanta, uint64_t period, bool levels, uint64_t xoff_bytes,
                        uint64_t xon_bytes) {
  Episodes e;
  bool xoff = false;
  uint64_t last = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const Pfc& p = f[i];
    EXPECT_EQ(p.class_enable, 1u << kPrio) << "frame " << i;
    const bool is_xoff = p.timer[kPrio] != 0;
    if (is_xoff) {
      EXPECT_EQ(p.timer[kPrio], quanta) << "frame " << i;
    }
    if (is_xoff && xoff) {
      ++e.refreshes;
      EXPECT_EQ(p.t - last, period) << "refresh " << i << " at " << p.t;
      if (levels) {
        EXPECT_GT(p.level, xon_bytes) << "a refresh only while the buffer stays above XON, frame " << i;
      }
    } else if (is_xoff) {
      ++e.transitions;
      if (levels) {
        EXPECT_GE(p.level, xoff_bytes) << "XOFF transition at the XOFF point, frame " << i;
      }
    } else {
      ++e.xons;
      EXPECT_TRUE(xoff) << "an XON follows an XOFF, frame " << i << " at " << p.t;
      EXPECT_LE(p.t - last, period) << "no refresh missed before the XON, frame " << i;
      if (levels) {
        EXPECT_LE(p.level, xon_bytes) << "XON at the XON point, frame " << i;
      }
    }
    xoff = is_xoff;
    last = p.t;
  }
  return e;
}

}  // namespace

// In process, to the picosecond, with the auto period. pause_quanta 1001 at
// 100 Gbps: a pause of 1001 x 512 bits / 100 Gbps = 5125.12 ns, refreshed
// every 2562.56 ns (not a whole number of ns: a capture could not show it
// exactly). A 10 Gbps drain keeps the buffer above XON for (xoff - xon) x 8 /
// 10 Gbps = 104.9 us at a time: about 40 refreshes per episode.
TEST(NicPfc, XoffRefreshesAreExactlyHalfThePauseTimeApartToThePicosecond) {
  auto cfg = core::Config::load_file(std::string(ROCESIM_SOURCE_DIR) + "/configs/scenarios/pfc_incast.yaml");
  cfg->apply_set("hosts.rx_buffer={size: 256KiB, drain_rate: 10Gbps}");
  cfg->apply_set("pfc.pause_quanta=1001");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  const uint16_t quanta = 1001;
  const uint64_t rate = 100000000000ull;
  const uint64_t pause_num = quanta * kQuantumBits * kPsPerS;
  ASSERT_EQ(pause_num % rate, 0u) << "the pause time is a whole number of ps at this speed";
  const uint64_t pause_ps = pause_num / rate;
  ASSERT_EQ(pause_ps % 2, 0u);
  const uint64_t period = pause_ps / 2;  // 2 562 560 ps
  const uint64_t xoff_bytes = 256 * 1024 * 3 / 4, xon_bytes = 256 * 1024 / 4;  // docs/config.md defaults

  sim::Fabric fabric("fabric", scen);
  host::Host& nic = *fabric.hosts().at(16);
  ASSERT_EQ(nic.mac.rate_bps(), rate);
  PfcTap tap;
  tap.nic = &nic;
  nic.mac.set_pcap(nullptr, &tap);
  sc_core::sc_start(core::ps(300000000));  // 300 us

  EXPECT_EQ(tap.other, 0u) << "an open-loop receiver sends only pause frames: nothing delays them on the wire";
  const Episodes e = check_sequence(tap.pfc, quanta, period, true, xoff_bytes, xon_bytes);
  EXPECT_GE(e.transitions, 2u);
  EXPECT_GE(e.xons, 2u);
  EXPECT_GE(e.refreshes, 60u) << "the buffer stays above XON for many periods";
  EXPECT_EQ(nic.rx_refreshes(), e.refreshes);
  EXPECT_EQ(nic.rx_buffer_drops(), 0u);

  // The refreshes keep the switch's port to h16 paused: every pause end the
  // switch sees there follows an XON from the NIC (none is the timer running out).
  const topology::Topology& T = scen.topo;
  const topology::PortRef nic_port{T.hosts[16], 0};
  const topology::LinkSpec& l = T.link_at(nic_port);
  const topology::PortRef sw = l.a == nic_port ? l.b : l.a;
  const std::string sw_name = T.nodes[sw.node].name;
  uint64_t ends = 0;
  for (const pfc::Event& ev : fabric.pfc_events()) {
    if (sw_name != ev.node || ev.port != sw.port || ev.prio != kPrio || std::string(ev.what) != "pause_end") continue;
    ++ends;
    const Pfc* before = nullptr;
    for (const Pfc& p : tap.pfc)
      if (p.t < ev.t_ps) before = &p;
    ASSERT_NE(before, nullptr);
    EXPECT_EQ(before->timer[kPrio], 0) << "pause end at " << ev.t_ps << " ps without an XON: the pause expired";
  }
  EXPECT_GE(ends, 2u);
}

// Through the CLI and its capture, with a configured period: pfc.refresh=3us
// is a whole number of ns, so every refresh gap in the ns capture is exactly
// 3000 ns (floor((t0 + k x 3 us) / 1 ns) = floor(t0 / 1 ns) + k x 3000).
TEST(NicPfc, ConfiguredRefreshPeriodInTheCapture) {
  const std::string dir = clitest::temp_dir();
  const clitest::Result r = clitest::rocesim(
      "run " + clitest::src_dir() + "/configs/scenarios/pfc_incast.yaml --out " + dir +
      " --set 'hosts.rx_buffer={size: 256KiB, drain_rate: 10Gbps}' --set pfc.refresh=3us --set sim.duration=300us"
      " --pcap h16:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  uint64_t other = 0;
  const std::vector<Pfc> f = read_pcap_pfc(dir + "/pcap/h16-p0-tx.pcap", other);
  EXPECT_EQ(other, 0u);
  const Episodes e = check_sequence(f, 0xffff, 3000, false, 0, 0);
  EXPECT_GE(e.transitions, 2u);
  EXPECT_GE(e.refreshes, 60u);
  std::system(("rm -rf " + dir).c_str());
}

// The repro: a 40 Gbps drain holds the buffer above XON for (xoff -
// xon) x 8 / 40 Gbps = 26.2 us, well within the auto period (65535 x 512 bits
// / 100 Gbps / 2 = 167.77 us): no refresh is due, so XOFF and XON alternate.
TEST(NicPfc, ShortEpisodesAlternateXoffAndXonWithoutRefreshes) {
  const std::string dir = clitest::temp_dir();
  const clitest::Result r = clitest::rocesim(
      "run " + clitest::src_dir() + "/configs/scenarios/pfc_incast.yaml --out " + dir +
      " --set 'hosts.rx_buffer={size: 256KiB, drain_rate: 40Gbps}' --pcap h16:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  uint64_t other = 0;
  const std::vector<Pfc> f = read_pcap_pfc(dir + "/pcap/h16-p0-tx.pcap", other);
  const uint64_t period_ns = 0xffffull * kQuantumBits * (kPsPerS / 1000) / 100000000000ull / 2;  // 167769 (.6)
  const Episodes e = check_sequence(f, 0xffff, period_ns, false, 0, 0);
  EXPECT_GE(e.transitions, 10u);
  EXPECT_EQ(e.refreshes, 0u);
  EXPECT_LE(e.transitions - e.xons, 1u);
  // pfc.csv lists every XOFF/XON transition sent: h16's rows are the
  // capture's transitions, one for one.
  std::ifstream csv(dir + "/pfc.csv");
  std::string line;
  uint64_t xoff_rows = 0, xon_rows = 0;
  while (std::getline(csv, line)) {
    if (line.find(",h16,0,3,xoff") != std::string::npos) ++xoff_rows;
    if (line.find(",h16,0,3,xon") != std::string::npos) ++xon_rows;
  }
  EXPECT_EQ(xoff_rows, e.transitions) << "XOFF transitions of h16 in pfc.csv";
  EXPECT_EQ(xon_rows, e.xons) << "XON transitions of h16 in pfc.csv";
  std::system(("rm -rf " + dir).c_str());
}

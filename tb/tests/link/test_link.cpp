// MAC + link timing: serialization with preamble/SFD, FCS and IFG, 64 B minimum,
// cable delay, pcap timestamps, and receive-side checks.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include <systemc>

#include "core/time.h"
#include "link/link.h"
#include "link/mac.h"
#include "link/pcap.h"
#include "packet/build.h"
#include "packet/crc.h"
#include "endpoint.h"
#include "frames.h"

using namespace rocesim;
using namespace sc_core;

namespace {

using testkit::roce_frame;

// Recompute only the FCS, so the frame reaches the parser with a bad header.
void refresh_fcs(packet::Packet& p) {
  std::vector<uint8_t> buf(p.frame_len_no_fcs());
  p.serialize(buf.data(), buf.size());
  p.fcs = packet::crc32(buf.data(), buf.size());
}

// Two MACs joined by a link, with a source on a and a recording sink on b.
struct Bench {
  packet::PacketPool pool;
  link::Ledger ledger{pool};
  link::LinkConfig lc;
  std::unique_ptr<link::Mac> a, b;
  std::unique_ptr<link::Link> l;
  std::unique_ptr<testkit::Endpoint> src, sink;
  std::vector<packet::Packet*> q;  // frames for src to send, in order
  size_t next = 0;

  explicit Bench(uint64_t rate_bps, uint64_t length_mm) {
    lc.rate_bps = rate_bps;
    lc.length_mm = length_mm;
    link::MacConfig mc;
    mc.rate_bps = rate_bps;
    a = std::make_unique<link::Mac>("a", 0, mc, ledger);
    b = std::make_unique<link::Mac>("b", 0, mc, ledger);
    l = std::make_unique<link::Link>("cable", lc, ledger, 1);
    link::connect(*a, *l, *b);
    src = std::make_unique<testkit::Endpoint>("src", *a, ledger);
    sink = std::make_unique<testkit::Endpoint>("sink", *b, ledger);
    src->next = [this]() { return next < q.size() ? q[next++] : nullptr; };
  }
  void start_at(uint64_t t_ps) {
    sc_spawn([this, t_ps] {
      wait(core::ps(t_ps));
      a->kick();
    });
  }
};

struct PcapRecord {
  uint32_t sec, nsec, incl, orig;
};

std::vector<PcapRecord> read_pcap(const std::string& path, uint32_t& magic) {
  std::vector<PcapRecord> out;
  std::ifstream f(path, std::ios::binary);
  uint32_t gh[6];
  f.read(reinterpret_cast<char*>(gh), sizeof gh);
  magic = gh[0];
  PcapRecord r;
  while (f.read(reinterpret_cast<char*>(&r), sizeof r)) {
    out.push_back(r);
    f.seekg(r.incl, std::ios::cur);
  }
  return out;
}

}  // namespace

TEST(Link, BackToBack1500BytePayloadAt100GIsFramePlus20BytesApart) {
  Bench bench(100000000000ull, 2000);  // 2 m at 5 ns/m
  link::PcapWriter tx_cap("test_link_tx.pcap"), rx_cap("test_link_rx.pcap");
  ASSERT_TRUE(tx_cap.open());
  ASSERT_TRUE(rx_cap.open());
  bench.a->set_pcap(nullptr, &tx_cap);
  bench.b->set_pcap(&rx_cap, nullptr);
  constexpr int kFrames = 100;
  for (int i = 0; i < kFrames; ++i) bench.q.push_back(roce_frame(bench.ledger, 1500, i));
  const uint32_t frame = bench.q[0]->frame_len();
  ASSERT_EQ(frame, 14u + 20 + 8 + 12 + 1500 + 4 + 4);  // Eth, IPv4, UDP, BTH, payload, ICRC, FCS
  bench.start_at(0);
  sc_start();
  ASSERT_TRUE(tx_cap.close());
  ASSERT_TRUE(rx_cap.close());

  // (frame + 20 B) * 8 / 100e9 s = (1562 + 20) * 80 ps = 126560 ps.
  const uint64_t spacing = (frame + 20ull) * 8 * 1000000000000ull / 100000000000ull;
  ASSERT_EQ(spacing, 126560u);
  const uint64_t cable = 10000;  // 2 m * 5 ns/m
  ASSERT_EQ(bench.sink->first_bit.size(), static_cast<size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_EQ(bench.sink->first_bit[i], i * spacing + cable) << "frame " << i;
    // Last bit: preamble+SFD and the frame, not the IFG.
    EXPECT_EQ(bench.sink->last_bit[i], i * spacing + cable + (frame + 8ull) * 80) << "frame " << i;
  }
  EXPECT_EQ(bench.ledger.delivered(), static_cast<uint64_t>(kFrames));
  EXPECT_EQ(bench.a->stats().tx_busy_ps, kFrames * spacing);

  // The captures: first bit on the wire, ns resolution (truncated from exact ps).
  uint32_t magic = 0;
  const auto tx = read_pcap("test_link_tx.pcap", magic);
  EXPECT_EQ(magic, 0xa1b23c4du);
  const auto rx = read_pcap("test_link_rx.pcap", magic);
  ASSERT_EQ(tx.size(), static_cast<size_t>(kFrames));
  ASSERT_EQ(rx.size(), static_cast<size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) {
    const uint64_t tx_ns = tx[i].sec * 1000000000ull + tx[i].nsec;
    const uint64_t rx_ns = rx[i].sec * 1000000000ull + rx[i].nsec;
    EXPECT_EQ(tx_ns, i * spacing / 1000) << "frame " << i;
    EXPECT_EQ(rx_ns, (i * spacing + cable) / 1000) << "frame " << i;
    EXPECT_EQ(tx[i].orig, frame - 4) << "pcap holds the frame without FCS";
    EXPECT_EQ(tx[i].incl, tx[i].orig) << "full-length frame";
  }
  // Two back-to-back frames whose spacing is a whole number of ns in the pcap:
  // frames 0 and 25 are 25 * 126.56 ns = 3164 ns apart exactly.
  const uint64_t t0 = tx[0].sec * 1000000000ull + tx[0].nsec;
  const uint64_t t25 = tx[25].sec * 1000000000ull + tx[25].nsec;
  EXPECT_EQ(t25 - t0, 3164u);
  std::remove("test_link_tx.pcap");
  std::remove("test_link_rx.pcap");
}

TEST(Link, CableDelayAddsExactlyItsConfiguredAmount) {
  // 37.5 m at 5 ns/m = 187.5 ns; 25 Gbps: 320 ps per byte.
  Bench bench(25000000000ull, 37500);
  bench.q.push_back(roce_frame(bench.ledger, 1000, 0));
  const uint32_t frame = bench.q[0]->frame_len();
  bench.start_at(1000);
  sc_start();
  ASSERT_EQ(bench.sink->first_bit.size(), 1u);
  EXPECT_EQ(bench.sink->first_bit[0], 1000u + 187500u);
  EXPECT_EQ(bench.sink->last_bit[0], 1000u + 187500u + (frame + 8ull) * 320);
}

TEST(Link, MinimumFrameIs64BytesOnTheWirePlusPreambleAndIfg) {
  Bench bench(100000000000ull, 0);
  // An untagged SEND_ONLY with no payload is 58 B + FCS: padded to 64 B.
  for (int i = 0; i < 3; ++i) bench.q.push_back(roce_frame(bench.ledger, 0, i, packet::op::kSendOnly));
  EXPECT_EQ(bench.q[0]->frame_len(), 64u);
  EXPECT_EQ(bench.q[0]->pad_len, 2u);
  bench.start_at(0);
  sc_start();
  ASSERT_EQ(bench.sink->first_bit.size(), 3u);
  // 64 + 8 + 12 = 84 B = 6720 ps at 100G.
  EXPECT_EQ(bench.sink->first_bit[1] - bench.sink->first_bit[0], 6720u);
  EXPECT_EQ(bench.sink->first_bit[2] - bench.sink->first_bit[1], 6720u);
}

TEST(Link, PfcFramesAreConsumedByTheMacAndPauseItsTransmitter) {
  // b pauses a's priority 3 for 1000 quanta (1000 * 512 bits at 100G = 5.12 us):
  // a's next priority-3 frame waits until the pause ends.
  Bench bench(100000000000ull, 0);
  packet::Packet* pause = bench.ledger.create();
  const uint16_t timers[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
  packet::build_pfc(*pause, 0x020000000002ull, 1u << 3, timers);
  EXPECT_EQ(pause->frame_len(), 64u);
  sc_spawn([&] { bench.b->send_control(pause); });
  sc_start(core::ps(10000));
  EXPECT_EQ(bench.a->stats().pause_rx, 1u);
  EXPECT_EQ(bench.sink->received, 0u) << "a PFC frame is not handed up";
  EXPECT_EQ(bench.ledger.delivered(), 1u) << "it is consumed (delivered) by the MAC";
  // Its last bit reached a at 72 * 80 ps = 5760 ps: paused from then (no response delay).
  EXPECT_EQ(bench.a->paused_mask(), 1u << 3);
  sc_start(core::ps(5760 + 5120000 - 10000 - 1));
  EXPECT_EQ(bench.a->paused_mask(), 1u << 3);
  sc_start(core::ps(1));
  EXPECT_EQ(bench.a->paused_mask(), 0u) << "the pause lasts exactly 1000 quanta";
  const auto st = bench.a->pause_stats(3);
  EXPECT_EQ(st.frames, 1u);
  EXPECT_EQ(st.paused_ps, 5120000u);
}

TEST(Link, CorruptedFcsIsDroppedWithReason) {
  Bench bench(100000000000ull, 1000);
  packet::Packet* good = roce_frame(bench.ledger, 256, 0);
  packet::Packet* bad = roce_frame(bench.ledger, 256, 1);
  bad->fcs ^= 0x1;
  packet::Packet* bad_ip = roce_frame(bench.ledger, 256, 2);
  bad_ip->hdr[14 + 8] ^= 0x40;  // TTL byte: IPv4 checksum no longer verifies; FCS recomputed below
  refresh_fcs(*bad_ip);
  bench.q = {good, bad, bad_ip};
  bench.start_at(0);
  sc_start();
  EXPECT_EQ(bench.ledger.delivered(), 1u);
  EXPECT_EQ(bench.ledger.dropped(packet::DropReason::bad_fcs), 1u);
  EXPECT_EQ(bench.ledger.dropped(packet::DropReason::bad_ip_checksum), 1u);
  EXPECT_EQ(bench.b->stats().rx_dropped, 2u);
  EXPECT_EQ(bench.ledger.sent(), bench.ledger.delivered() + bench.ledger.dropped());
  EXPECT_EQ(bench.pool.in_use(), 0u);
}

namespace {

// One run of a lossy 100 Gbps link (loss 0.25, 2 m) carrying `frames`
// back-to-back 64 B-payload frames. SystemC elaborates once per process, so
// each run happens in a forked child, before this process has elaborated
// anything; the child reports through a pipe what the sink received and what
// the ledger counted.
struct LossRun {
  bool ok = false;
  uint64_t sent = 0, delivered = 0, link_loss = 0;
  std::vector<bool> arrived;  // per frame, in send order
};

LossRun lossy_run(uint64_t seed, uint32_t frames) {
  LossRun out;
  int fd[2];
  if (pipe(fd) != 0) return out;
  const pid_t pid = fork();
  if (pid < 0) return out;
  if (pid == 0) {
    close(fd[0]);
    packet::PacketPool pool;
    link::Ledger ledger(pool);
    link::LinkConfig lc;
    lc.loss = 0.25;
    link::MacConfig mc;
    link::Mac a("a", 0, mc, ledger), b("b", 0, mc, ledger);
    link::Link l("lossy", lc, ledger, seed);
    link::connect(a, l, b);
    testkit::Endpoint src("src", a, ledger), sink("sink", b, ledger);
    uint32_t n = 0;
    src.next = [&]() { return n < frames ? roce_frame(ledger, 64, n++) : nullptr; };
    sc_spawn([&a] { a.kick(); });
    sc_start();
    std::vector<uint64_t> msg{ledger.sent(), ledger.delivered(), ledger.dropped(packet::DropReason::link_loss),
                              sink.first_bit.size()};
    msg.insert(msg.end(), sink.first_bit.begin(), sink.first_bit.end());
    const char* p = reinterpret_cast<const char*>(msg.data());
    size_t left = msg.size() * sizeof(uint64_t);
    while (left > 0) {
      const ssize_t w = write(fd[1], p, left);
      if (w <= 0) _exit(3);
      p += w;
      left -= static_cast<size_t>(w);
    }
    _exit(0);  // no static destructors, no gtest teardown in the child
  }
  close(fd[1]);
  std::vector<uint64_t> msg;
  uint64_t word;
  for (;;) {  // read whole words
    size_t got = 0;
    while (got < sizeof word) {
      const ssize_t r = read(fd[0], reinterpret_cast<char*>(&word) + got, sizeof word - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    if (got < sizeof word) break;
    msg.push_back(word);
  }
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || msg.size() < 4 || msg.size() != 4 + msg[3]) return out;
  out.sent = msg[0];
  out.delivered = msg[1];
  out.link_loss = msg[2];
  // Frame k's first bit is sent at k * (frame + 20 B) * 80 ps and arrives 2 m
  // (10 ns) later: the arrival time names the frame.
  const uint64_t spacing = (14 + 20 + 8 + 12 + 64 + 4 + 4 + 20) * 80ull, cable = 10000;
  out.arrived.assign(frames, false);
  for (size_t i = 4; i < msg.size(); ++i) {
    const uint64_t t = msg[i] - cable;
    if (t % spacing != 0 || t / spacing >= frames) return out;
    out.arrived[t / spacing] = true;
  }
  out.ok = true;
  return out;
}

}  // namespace

TEST(Link, ConfiguredLossDropsFramesWithReasonAndIsSeedDeterministic) {
  const uint32_t n = 2000;
  const double p = 0.25;
  const LossRun a = lossy_run(7, n), b = lossy_run(7, n), c = lossy_run(8, n);
  ASSERT_TRUE(a.ok && b.ok && c.ok) << "child runs";
  for (const LossRun* r : {&a, &b, &c}) {
    EXPECT_EQ(r->sent, n);
    // Every frame not received was dropped on the cable, under link_loss.
    uint64_t arrived = 0;
    for (bool x : r->arrived) arrived += x;
    EXPECT_EQ(r->delivered, arrived);
    EXPECT_EQ(r->link_loss, n - arrived);
    // Binomial(2000, 0.25): mean 500, sd sqrt(n p (1-p)) = 19.4; 4 sd either side.
    const double mean = n * p, sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(double(r->link_loss), mean, 4 * sd);
    // Independent per frame (not bursty): pairs of consecutive losses number
    // about (n-1) p^2 = 125, sd sqrt((n-1) p^2 (1-p^2)) = 10.8 (4 sd; the
    // pairs overlap, which only narrows the spread for p < 1/2).
    uint64_t pairs = 0;
    for (uint32_t k = 1; k < n; ++k) pairs += !r->arrived[k - 1] && !r->arrived[k];
    EXPECT_NEAR(double(pairs), (n - 1) * p * p, 4 * std::sqrt((n - 1) * p * p * (1 - p * p)));
  }
  // Same seed: the same frames are lost, frame by frame.
  EXPECT_EQ(a.arrived, b.arrived);
  // Another seed: an independent stream, so the two runs disagree on a frame
  // with probability 2 p (1-p) = 0.375: about 750 of 2000, sd 21.7 (4 sd).
  uint64_t differ = 0;
  for (uint32_t k = 0; k < n; ++k) differ += a.arrived[k] != c.arrived[k];
  const double q = 2 * p * (1 - p);
  EXPECT_NEAR(double(differ), n * q, 4 * std::sqrt(n * q * (1 - q)));
}

// A link failure (link.h): a frame on the cable at any moment of a down
// interval, from its first bit leaving to its last bit arriving, is lost and
// counted under link_down; the others arrive as ever. 20 back-to-back 1500 B
// frames at 100 Gbps over 2 m: frame i is on the cable over
// [i x 126 560, i x 126 560 + 125 600 + 10 000] ps (spacing, last bit and
// cable as the first test computes them); the cable is down over
// [300 000, 700 000) ps and again over [2 000 000, 2 000 001).
TEST(Link, FramesOnACableWhileItIsDownAreLostWithReason) {
  Bench bench(100000000000ull, 2000);
  const uint64_t spacing = 126560, last = 125600, cable = 10000;
  const std::vector<std::pair<uint64_t, uint64_t>> down = {{300000, 700000}, {2000000, 2000001}};
  bench.l->add_down(down[1].first, down[1].second);  // out of order: the link sorts them
  bench.l->add_down(down[0].first, down[0].second);
  EXPECT_THROW(bench.l->add_down(5, 5), std::invalid_argument);
  EXPECT_TRUE(bench.l->down_at(300000));
  EXPECT_FALSE(bench.l->down_at(700000));
  constexpr int kFrames = 20;
  for (int i = 0; i < kFrames; ++i) bench.q.push_back(roce_frame(bench.ledger, 1500, i));
  bench.start_at(0);
  sc_start();
  std::vector<uint64_t> want;
  uint64_t lost = 0;
  for (int i = 0; i < kFrames; ++i) {
    const uint64_t t0 = i * spacing, t1 = t0 + last + cable;
    bool on_when_down = false;
    for (const auto& [from, until] : down) on_when_down |= from <= t1 && until > t0;
    if (on_when_down) {
      ++lost;
    } else {
      want.push_back(t0 + cable);
    }
  }
  ASSERT_GT(lost, 2u);  // the intervals do catch frames: frames 2..5 and 15
  EXPECT_EQ(bench.sink->first_bit, want);
  EXPECT_EQ(bench.l->lost_down(0), lost);
  EXPECT_EQ(bench.l->lost_down(1), 0u);
  EXPECT_EQ(bench.ledger.dropped(packet::DropReason::link_down), lost);
  EXPECT_EQ(bench.ledger.delivered(), kFrames - lost);
}

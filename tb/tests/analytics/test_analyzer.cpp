// The analytics block (tlm/analytics/analyzer.h) driven with frames from the
// model's own builders (frames.h). Expected values come from the article's
// rules as analyzer.h states them, IBTA header sizes, and token-bucket and
// aging formulas evaluated here.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>

#include "analytics/analyzer.h"
#include "frames.h"
#include "packet/build.h"

// Heap allocations, counted while g_count_allocs is set (the steady-state
// test; the counting operator new is in alloc_hooks.cpp).
extern std::atomic<bool> g_count_allocs;
extern std::atomic<uint64_t> g_allocs;

namespace rocesim::analytics {
namespace {

using namespace test;
namespace pk = rocesim::packet;

constexpr uint64_t kUs = 1'000'000, kNs = 1'000;  // ps

Config base() {
  Config c;
  c.timestamp_resolution_ps = 1;
  c.scan_interval_ps = 1 * kUs;
  c.inactive_timeout_ps = 10 * kUs;
  c.active_timeout_ps = 50 * kUs;
  c.large_flow_bytes = 1'000'000'000;
  return c;
}

// Calls advance() at every sweep time up to each event, as the owner's timer
// would, so sweeps happen at every multiple of scan_interval.
struct Driver {
  Analyzer& a;
  uint64_t t = 0;
  void at(uint64_t when) {
    const uint64_t scan = a.config().scan_interval_ps;
    for (uint64_t g = (t / scan + 1) * scan; g <= when; g += scan) a.advance(g);
    t = when;
  }
  void frame(const pk::Packet& p, uint32_t port, uint64_t when) {
    at(when);
    a.on_frame(p, port, when);
  }
  // CM REQ (port 1), REP (port 2) and RTU (port 1), 100 ns apart from `when`.
  void setup(const Conn& c, uint64_t when) {
    frame(cm(c, pk::cm::kReq), 1, when);
    frame(cm(c, pk::cm::kRep), 2, when + 100 * kNs);
    frame(cm(c, pk::cm::kRtu), 1, when + 200 * kNs);
  }
};

// IPv4 total length of a RoCEv2 packet (RFC 791 20 B, RFC 768 8 B, IBTA BTH 12 B,
// the extended headers, payload and pad, ICRC 4 B).
uint64_t roce_ip_len(uint32_t ext, uint32_t payload) { return 20 + 8 + 12 + ext + payload + (4 - payload % 4) % 4 + 4; }

TEST(Analytics, SetupDataAndAckMakeOneBidirectionalRecord) {
  Analyzer a(base());
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(7);
  d.setup(c, 0);
  EXPECT_EQ(a.flows(), 1u);
  const uint64_t t_req = 3 * kUs, t_ack = t_req + 1'234'567;
  d.frame(data(c, kC2s, pk::op::kWriteOnly, 0, true, 1000), 1, t_req);
  d.frame(ack(c, kC2s, 0), 2, t_ack);
  d.at(5 * kUs);
  a.flush(5 * kUs);
  ASSERT_EQ(out.records.size(), 1u);
  const FlowRecord& r = out.records[0];
  EXPECT_EQ(r.server_ip, c.server_ip);
  EXPECT_EQ(r.client_ip, c.client_ip);
  EXPECT_EQ(r.client_qp, c.client_qp);
  EXPECT_EQ(r.server_qp, c.server_qp);
  EXPECT_TRUE(r.established);
  EXPECT_EQ(r.reason, ExportReason::forced);
  EXPECT_EQ(r.start_ns, 100u);            // the REP, 100 ns after the REQ
  EXPECT_EQ(r.end_ns, t_ack / kNs);       // the last frame, ns rounded down
  EXPECT_EQ(r.export_ns, 5000u);
  const DirRecord& f = r.dir[kC2s];
  EXPECT_EQ(f.packets, 1u);
  EXPECT_EQ(f.octets, roce_ip_len(16, 1000));  // WRITE ONLY carries a RETH (16 B)
  EXPECT_EQ(f.data_packets, 1u);
  EXPECT_EQ(f.payload_bytes, 1000u);
  EXPECT_EQ(f.ingress_port, 1u);
  EXPECT_TRUE(f.rtt_valid);
  EXPECT_EQ(f.rtt_samples, 1u);
  EXPECT_EQ(f.rtt_avg_ns, (t_ack - t_req) / kNs);
  EXPECT_EQ(f.naks, 0u);
  const DirRecord& b = r.dir[kS2c];
  EXPECT_EQ(b.packets, 1u);
  EXPECT_EQ(b.octets, roce_ip_len(4, 0));  // ACK: AETH (4 B)
  EXPECT_EQ(b.data_packets, 0u);
  EXPECT_EQ(b.ingress_port, 2u);
  EXPECT_FALSE(b.rtt_valid);
  EXPECT_EQ(a.stats().tracked_packets, 2u);
  EXPECT_EQ(a.stats().cm_packets, 3u);
  EXPECT_EQ(a.flows(), 0u);
  EXPECT_EQ(a.pending(), 0u);  // the RTU ended the pending setup
}

// Table 2: the client QP is the Dest QP of packets from the server, the
// server QP that of packets from the client.
TEST(Analytics, FlowKeyFollowsTable2) {
  Analyzer a(base());
  Driver d{a};
  const Conn c = conn(3);
  d.setup(c, 0);
  d.frame(data(c, kS2c, pk::op::kSendOnly, 0, true, 64), 2, 1 * kUs);  // to the client QP
  d.frame(data(c, kC2s, pk::op::kSendOnly, 0, true, 64), 1, 1 * kUs);  // to the server QP
  EXPECT_EQ(a.stats().tracked_packets, 2u);
  Conn swapped = c;  // the server's packets carrying the server QP: no such flow direction
  swapped.client_qp = c.server_qp;
  d.frame(data(swapped, kS2c, pk::op::kSendOnly, 1, true, 64), 2, 2 * kUs);
  EXPECT_EQ(a.stats().untracked_packets, 1u);
}

TEST(Analytics, TableOfNTracksNAndCountsTheRest) {
  Config cfg = base();
  const uint32_t n = 4, k = 3;
  cfg.table_capacity = n;
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  for (uint32_t i = 0; i < n + k; ++i) d.setup(conn(i), i * kNs * 300);
  EXPECT_EQ(a.flows(), n);
  EXPECT_EQ(a.stats().flows_created, n);
  EXPECT_EQ(a.stats().setups_not_tracked, k);
  for (uint32_t i = 0; i < n + k; ++i) d.frame(data(conn(i), kC2s, pk::op::kWriteOnly, 0, true, 100), 1, 3 * kUs);
  EXPECT_EQ(a.stats().tracked_packets, n);
  EXPECT_EQ(a.stats().untracked_packets, k);
  a.flush(4 * kUs);
  ASSERT_EQ(out.records.size(), n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(out.records[i].client_qp, conn(i).client_qp);  // the first n setups
}

TEST(Analytics, InactiveAgingFreesEntriesForLaterFlows) {
  Config cfg = base();
  cfg.table_capacity = 2;
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  d.setup(conn(0), 0);
  d.setup(conn(1), 500 * kNs);  // its RTU, the flow's last frame, at 700 ns
  d.setup(conn(2), 1 * kUs);
  EXPECT_EQ(a.stats().setups_not_tracked, 1u);
  // A flow is idle-aged at the first sweep (a multiple of scan) at or after
  // last frame + inactive_timeout.
  const uint64_t scan = cfg.scan_interval_ps, last1 = 700 * kNs;
  const uint64_t s = (last1 + cfg.inactive_timeout_ps + scan - 1) / scan * scan;
  d.at(s - scan);
  EXPECT_EQ(a.flows(), 2u);  // not yet
  d.at(s);
  EXPECT_EQ(a.flows(), 0u);
  ASSERT_EQ(out.records.size(), 2u);
  for (const FlowRecord& r : out.records) {
    EXPECT_EQ(r.reason, ExportReason::idle);
    EXPECT_EQ(r.export_ns, s / kNs);
  }
  d.setup(conn(3), s + 1 * kUs);
  d.setup(conn(4), s + 2 * kUs);
  EXPECT_EQ(a.flows(), 2u);
  EXPECT_EQ(a.stats().flows_created, 4u);
  EXPECT_EQ(a.stats().setups_not_tracked, 1u);
}

TEST(Analytics, ActiveAgingExportsAndResetsNakCounters) {
  const Config cfg = base();  // active 50 us, inactive 10 us, sweeps every 1 us
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(1);
  d.setup(c, 0);  // flow created by the REP at 100 ns
  const uint64_t created = 100 * kNs;
  // A request every 5 us and its ACK 1 us later, through 100 us; NAKs (for the
  // client's data) at 10 and 20 us in the first period and at 60 us in the second.
  const std::vector<uint64_t> nak_times = {12 * kUs + 500 * kNs, 22 * kUs + 500 * kNs, 62 * kUs + 500 * kNs};
  uint32_t psn = 0;
  size_t next_nak = 0;
  for (uint64_t t = 5 * kUs; t <= 100 * kUs; t += 5 * kUs) {
    d.frame(data(c, kC2s, pk::op::kWriteOnly, psn, true, 512), 1, t);
    d.frame(ack(c, kC2s, psn), 2, t + 1 * kUs);
    ++psn;
    while (next_nak < nak_times.size() && nak_times[next_nak] < t + 5 * kUs) {
      d.frame(ack(c, kC2s, psn, 0x60), 2, nak_times[next_nak]);
      ++next_nak;
    }
  }
  const uint64_t last = 101 * kUs;  // the last ACK
  d.at(last + cfg.inactive_timeout_ps);
  // Active exports at the first sweeps at or after created + 50 us and + 100 us.
  auto grid_up = [&](uint64_t t) { return (t + cfg.scan_interval_ps - 1) / cfg.scan_interval_ps * cfg.scan_interval_ps; };
  ASSERT_EQ(out.records.size(), 3u);
  EXPECT_EQ(out.records[0].reason, ExportReason::active);
  EXPECT_EQ(out.records[0].export_ns, grid_up(created + cfg.active_timeout_ps) / kNs);
  EXPECT_EQ(out.records[0].dir[kC2s].naks, 2u);
  ASSERT_EQ(out.records[0].dir[kC2s].loss_count, 2u);
  EXPECT_EQ(out.records[0].dir[kC2s].loss_ns[0], nak_times[0] / kNs);
  EXPECT_EQ(out.records[0].dir[kC2s].loss_ns[1], nak_times[1] / kNs);
  EXPECT_EQ(out.records[0].dir[kS2c].naks, 0u);
  EXPECT_EQ(out.records[1].reason, ExportReason::active);
  EXPECT_EQ(out.records[1].export_ns, grid_up(created + 2 * cfg.active_timeout_ps) / kNs);
  EXPECT_EQ(out.records[1].dir[kC2s].naks, 1u);  // reset by the first active export
  ASSERT_EQ(out.records[1].dir[kC2s].loss_count, 1u);
  EXPECT_EQ(out.records[1].dir[kC2s].loss_ns[0], nak_times[2] / kNs);
  EXPECT_EQ(out.records[2].reason, ExportReason::idle);
  EXPECT_EQ(out.records[2].export_ns, grid_up(last + cfg.inactive_timeout_ps) / kNs);
  EXPECT_EQ(out.records[2].dir[kC2s].naks, 0u);
  // Packet deltas per export: every frame of the flow is in exactly one record.
  uint64_t c2s = 0, s2c = 0;
  for (const FlowRecord& r : out.records) c2s += r.dir[kC2s].packets, s2c += r.dir[kS2c].packets;
  EXPECT_EQ(c2s, 20u);                     // requests at 5, 10, ... 100 us
  EXPECT_EQ(s2c, 20u + nak_times.size());  // their ACKs and the NAKs
  // The last period (100.1 .. 111 us) saw only the last request's ACK.
  EXPECT_EQ(out.records[2].dir[kC2s].rtt_samples, 1u);
}

TEST(Analytics, FlowsWhoseSetupWasNotSeenAreCountedNotTracked) {
  Analyzer a(base());
  Driver d{a};
  const Conn c = conn(5);  // connected before analytics was enabled
  d.frame(data(c, kC2s, pk::op::kWriteFirst, 0, false, 1024), 1, 1 * kUs);
  d.frame(data(c, kC2s, pk::op::kWriteLast, 1, true, 1024), 1, 2 * kUs);
  d.frame(ack(c, kC2s, 1), 2, 3 * kUs);
  EXPECT_EQ(a.stats().untracked_packets, 3u);
  EXPECT_EQ(a.stats().tracked_packets, 0u);
  d.frame(cm(c, pk::cm::kRep), 2, 4 * kUs);  // a REP without its REQ makes no flow
  d.frame(cm(c, pk::cm::kRtu), 1, 5 * kUs);
  EXPECT_EQ(a.stats().rep_without_req, 1u);
  EXPECT_EQ(a.stats().rtu_without_rep, 1u);
  EXPECT_EQ(a.flows(), 0u);
}

// Token bucket full at time 0 with B tokens, refilled at R per second; frames
// every dt < 1/R. The k-th arrival (time t_k) is accepted iff the tokens
// earned so far exceed those spent: by induction the accepted count after t_k
// is min(k + 1, floor(B + R t_k)) as floor(B + R t) grows by at most 1 per
// arrival (R dt <= 1).
TEST(Analytics, MirrorCapacityDropsAndCountsTheExcess) {
  Config cfg = base();
  cfg.capacity_pps = 1'000'000;  // one per us
  cfg.capacity_burst = 4;
  Analyzer a(cfg);
  const uint64_t m = 100, dt = 250 * kNs;
  const Conn c = conn(0);
  for (uint64_t i = 0; i < m; ++i) a.on_mirrored(data(c, kC2s, pk::op::kSendOnly, uint32_t(i), true, 64), 1, i * dt);
  const uint64_t t_last = (m - 1) * dt;
  const uint64_t accepted = std::min<uint64_t>(m, cfg.capacity_burst + cfg.capacity_pps * t_last / 1'000'000'000'000ull);
  EXPECT_EQ(accepted, 28u);  // 4 + floor(24.75)
  EXPECT_EQ(a.stats().mirrored, m);
  EXPECT_EQ(a.stats().capacity_dropped, m - accepted);
  EXPECT_EQ(a.stats().untracked_packets, accepted);  // the accepted ones were analysed
}

TEST(Analytics, ExportRateDropsAndCountsTheExcess) {
  Config cfg = base();
  cfg.export_rps = 100'000;  // one record per 10 us
  cfg.export_burst = 3;
  cfg.table_capacity = 64;
  cfg.scan_interval_ps = 10 * kUs;  // so that each batch ages at one sweep
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const uint64_t scan = cfg.scan_interval_ps;
  auto grid_up = [&](uint64_t t) { return (t + scan - 1) / scan * scan; };
  const uint32_t batch = 10;
  // Batch 1: set up at 0 .. 2.9 us (last frames, the RTUs, at i * 300 + 200 ns).
  for (uint32_t i = 0; i < batch; ++i) d.setup(conn(i), i * 300 * kNs);
  const uint64_t first = 200 * kNs, last = (batch - 1) * 300 * kNs + 200 * kNs;
  const uint64_t s1 = grid_up(last + cfg.inactive_timeout_ps);
  ASSERT_EQ(grid_up(first + cfg.inactive_timeout_ps), s1) << "the test wants batch 1 aged at one sweep";
  d.at(s1);
  // Batch 2: the same pattern from s1.
  for (uint32_t i = 0; i < batch; ++i) d.setup(conn(100 + i), s1 + i * 300 * kNs);
  const uint64_t s2 = grid_up(s1 + last + cfg.inactive_timeout_ps);
  ASSERT_EQ(grid_up(s1 + first + cfg.inactive_timeout_ps), s2);
  d.at(s2);
  EXPECT_EQ(a.stats().records, 2u * batch);
  // The bucket starts full and nothing was exported before s1: 3 tokens at
  // s1, none after them; at s2 it holds floor(R (s2 - s1)), at most the burst.
  const uint64_t at_s1 = std::min<uint64_t>(batch, cfg.export_burst);
  const uint64_t earned = cfg.export_rps * (s2 - s1) / 1'000'000'000'000ull;
  const uint64_t at_s2 = std::min<uint64_t>({batch, cfg.export_burst, earned});
  EXPECT_EQ(at_s1 + at_s2, 5u);  // 3 + floor(1e5/s * 20 us)
  EXPECT_EQ(a.stats().records_exported, at_s1 + at_s2);
  EXPECT_EQ(a.stats().records_dropped, 2u * batch - at_s1 - at_s2);
  EXPECT_EQ(out.records.size(), at_s1 + at_s2);
}

TEST(Analytics, RttIsTheSlidingAverageOfTheLastWindow) {
  Analyzer a(base());
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(2);
  d.setup(c, 0);
  std::vector<uint64_t> rtt_ns;
  uint64_t t = 1 * kUs;
  for (uint32_t i = 0; i < 12; ++i) {
    rtt_ns.push_back(1000 + 37 * i);
    // A two-packet message: only its last packet is a request.
    d.frame(data(c, kS2c, pk::op::kSendFirst, 2 * i, false, 1024), 2, t);
    d.frame(data(c, kS2c, pk::op::kSendLast, 2 * i + 1, false, 1024), 2, t + 10 * kNs);
    d.frame(ack(c, kS2c, 2 * i + 1), 1, t + 10 * kNs + rtt_ns.back() * kNs);
    t += 3 * kUs;
  }
  a.flush(t);
  ASSERT_EQ(out.records.size(), 1u);
  const DirRecord& r = out.records[0].dir[kS2c];
  const uint64_t sum = std::accumulate(rtt_ns.end() - kRttWindow, rtt_ns.end(), uint64_t(0));
  EXPECT_EQ(r.rtt_samples, 12u);
  EXPECT_EQ(r.rtt_avg_ns, sum / kRttWindow);
  EXPECT_FALSE(out.records[0].dir[kC2s].rtt_valid);
}

// ACK PSN p covers requests <= p, a NAK (sequence error) for p those < p; a
// retransmitted request makes the waiting samples ambiguous (Karn).
TEST(Analytics, AckCoverageAndRetransmission) {
  Analyzer a(base());
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(4);
  d.setup(c, 0);
  d.frame(data(c, kC2s, pk::op::kWriteOnly, 3, true, 100), 1, 1 * kUs);
  d.frame(data(c, kC2s, pk::op::kWriteOnly, 4, true, 100), 1, 2 * kUs);
  d.frame(ack(c, kC2s, 4, 0x60), 2, 5 * kUs);  // NAK 4: 3 arrived, 4 lost
  d.frame(data(c, kC2s, pk::op::kWriteOnly, 4, true, 100), 1, 6 * kUs);  // go back: retransmission
  d.frame(ack(c, kC2s, 4), 2, 8 * kUs);
  d.frame(data(c, kC2s, pk::op::kWriteOnly, 5, true, 100), 1, 9 * kUs);  // a first transmission again
  d.frame(ack(c, kC2s, 5), 2, 12 * kUs);
  a.flush(13 * kUs);
  ASSERT_EQ(out.records.size(), 1u);
  const DirRecord& r = out.records[0].dir[kC2s];
  EXPECT_EQ(r.naks, 1u);
  EXPECT_EQ(r.retx_packets, 1u);
  // Samples: PSN 3 covered by the NAK (5 - 1 us); PSN 4's first send was
  // dropped from the window by the retransmission, which is no request
  // itself (its ACK at 8 us gives nothing); PSN 5, sent first at 9 us, 12 - 9 us.
  EXPECT_EQ(r.rtt_samples, 2u);
  EXPECT_EQ(r.rtt_avg_ns, (4000u + 3000u) / 2);
}

TEST(Analytics, TimestampsAreQuantized) {
  Config cfg = base();
  cfg.timestamp_resolution_ps = 1000;
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(9);
  d.setup(c, 0);
  const uint64_t t_req = 3'000'700, t_ack = 4'500'300;  // ps
  d.frame(data(c, kC2s, pk::op::kSendOnly, 0, true, 8), 1, t_req);
  d.frame(ack(c, kC2s, 0), 2, t_ack);
  a.flush(6 * kUs);
  ASSERT_EQ(out.records.size(), 1u);
  // Both stamps rounded down to 1 ns first: 4500 - 3000 (the raw difference is 1499.6 ns).
  EXPECT_EQ(out.records[0].dir[kC2s].rtt_avg_ns, 4500u - 3000u);
}

TEST(Analytics, ThroughputOnlyForLargeFlows) {
  Config cfg = base();
  cfg.throughput_interval_ps = 1 * kUs;
  cfg.large_flow_bytes = 10'000;
  Analyzer a(cfg);
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn big = conn(1), small = conn(2);
  d.setup(big, 0);
  d.setup(small, 1 * kUs);
  const uint32_t pkt = 4000, n = 5;
  for (uint32_t i = 0; i < n; ++i)  // all in the interval [10 us, 11 us)
    d.frame(data(big, kC2s, pk::op::kWriteMiddle, i, false, pkt), 1, 10 * kUs + i * 100 * kNs);
  d.frame(data(small, kC2s, pk::op::kWriteOnly, 0, true, 1000), 1, 10 * kUs);
  a.flush(11 * kUs + 500 * kNs);
  ASSERT_EQ(out.records.size(), 2u);
  const DirRecord& b = out.records[0].client_qp == big.client_qp ? out.records[0].dir[kC2s] : out.records[1].dir[kC2s];
  const DirRecord& s = out.records[0].client_qp == big.client_qp ? out.records[1].dir[kC2s] : out.records[0].dir[kC2s];
  EXPECT_TRUE(b.large);
  ASSERT_TRUE(b.throughput_valid);
  const uint64_t bps = uint64_t(pkt) * n * 8 * 1'000'000;  // bytes * 8 bits per 1 us
  EXPECT_EQ(b.throughput_bps, bps);
  EXPECT_EQ(b.throughput_max_bps, bps);
  EXPECT_EQ(b.payload_bytes, uint64_t(pkt) * n);
  EXPECT_FALSE(s.large);
  EXPECT_FALSE(s.throughput_valid);
}

TEST(Analytics, IngressPortAndPathChange) {
  Analyzer a(base());
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(6);
  d.setup(c, 0);
  d.frame(data(c, kC2s, pk::op::kSendOnly, 0, true, 8), 1, 1 * kUs);
  d.frame(data(c, kC2s, pk::op::kSendOnly, 1, true, 8), 3, 2 * kUs);
  a.flush(3 * kUs);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].dir[kC2s].ingress_port, 3u);
  EXPECT_EQ(out.records[0].dir[kC2s].port_changes, 1u);
  EXPECT_EQ(out.records[0].dir[kS2c].ingress_port, kNoPort);
}

TEST(Analytics, ReusedKeyEndsTheOldFlow) {
  Analyzer a(base());
  Collect out;
  a.add_sink(&out);
  Driver d{a};
  const Conn c = conn(8);
  d.setup(c, 0);
  Conn again = c;  // same addresses and server QP, a new client QP and comm id
  again.id = c.id + 1000;
  again.client_qp = c.client_qp + 0x10000;
  d.setup(again, 1 * kUs);
  EXPECT_EQ(a.stats().flows_replaced, 1u);
  EXPECT_EQ(a.flows(), 1u);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].reason, ExportReason::end_detected);
  EXPECT_EQ(out.records[0].client_qp, c.client_qp);
  d.setup(again, 2 * kUs);  // a repeated setup of the same connection
  EXPECT_EQ(a.stats().setups_duplicate, 1u);
  EXPECT_EQ(a.flows(), 1u);
}

TEST(Analytics, LossModeSelectsAllRoceOnEnabledPortsAndRefusesRules) {
  Analyzer a(base());
  EXPECT_NE(a.add_rule(Rule{}), nullptr);
  const Conn c = conn(0);
  EXPECT_TRUE(a.selects(cm(c, pk::cm::kReq).meta, 0));
  EXPECT_TRUE(a.selects(data(c, kC2s, pk::op::kReadRequest, 0, true, 0).meta, 5));
  EXPECT_TRUE(a.selects(ack(c, kC2s, 0, 0x60).meta, 5));
  pk::Packet cnp;
  pk::build_cnp(cnp, eth(), ip(c.server_ip, c.client_ip), 1, c.client_qp);
  EXPECT_FALSE(a.selects(cnp.meta, 5));  // not a class the analyzer handles
  a.enable_port(5, false);
  EXPECT_FALSE(a.selects(ack(c, kC2s, 0).meta, 5));
  EXPECT_FALSE(a.selects(ack(c, kC2s, 0).meta, a.config().ports));  // no such port
}

TEST(Analytics, PerformanceModeRulesAndTheReturnRule) {
  Config cfg = base();
  cfg.mode = Mode::performance;
  Analyzer a(cfg);
  const Conn c0 = conn(0), c1 = conn(1);
  Rule r;
  r.src_ip = 0x0a000000, r.src_len = 16;  // clients 10.0/16
  r.dst_ip = 0x0a010000, r.dst_len = 16;  // servers 10.1/16
  r.has_qp = true, r.qp = c0.server_qp;
  EXPECT_EQ(a.add_rule(r), nullptr);
  Rule bad = r;
  bad.src_len = 33;
  EXPECT_NE(a.add_rule(bad), nullptr);
  EXPECT_TRUE(a.selects(cm(c0, pk::cm::kReq).meta, 0));
  EXPECT_TRUE(a.selects(cm(c0, pk::cm::kRep).meta, 0));   // return rule, LocalQPN = the rule's QP
  EXPECT_FALSE(a.selects(cm(c1, pk::cm::kRep).meta, 0));  // another server QP
  EXPECT_TRUE(a.selects(data(c0, kC2s, pk::op::kWriteOnly, 0, true, 8).meta, 0));
  EXPECT_FALSE(a.selects(data(c1, kC2s, pk::op::kWriteOnly, 0, true, 8).meta, 0));
  EXPECT_TRUE(a.selects(data(c0, kS2c, pk::op::kWriteOnly, 0, true, 8).meta, 0));  // return: addresses only
  EXPECT_TRUE(a.selects(ack(c0, kC2s, 0).meta, 0));
  Conn other = c0;
  other.client_ip = 0x0a020001;  // outside both prefixes
  EXPECT_FALSE(a.selects(data(other, kC2s, pk::op::kWriteOnly, 0, true, 8).meta, 0));
  EXPECT_FALSE(a.selects(data(other, kS2c, pk::op::kWriteOnly, 0, true, 8).meta, 0));

  // End to end: c1's REP is not mirrored, so only c0 becomes a flow.
  Driver d{a};
  d.setup(c0, 0);
  d.setup(c1, 1 * kUs);
  EXPECT_EQ(a.stats().flows_created, 1u);
  EXPECT_EQ(a.stats().not_selected, 1u);      // c1's REP
  EXPECT_EQ(a.stats().rtu_without_rep, 1u);   // c1's RTU (forward, by addresses)
  d.frame(data(c1, kC2s, pk::op::kWriteOnly, 0, true, 8), 1, 2 * kUs);  // not selected
  d.frame(data(c1, kS2c, pk::op::kWriteOnly, 0, true, 8), 2, 2 * kUs);  // selected by the return rule
  EXPECT_EQ(a.stats().not_selected, 2u);
  EXPECT_EQ(a.stats().untracked_packets, 1u);
}

TEST(Analytics, NonIpv4AndNonRoceAreCountedAndDiscarded) {
  Analyzer a(base());
  const Conn c = conn(0);
  const uint16_t timers[8] = {0};
  pk::Packet pfc;
  pk::build_pfc(pfc, 0x020000000001ull, 1, timers);
  a.on_mirrored(pfc, 0, 1);
  pk::Packet udp = data(c, kC2s, pk::op::kSendOnly, 0, true, 64);
  udp.hdr[udp.meta.l4_offset + 3] ^= 1;  // UDP destination port 4790: IPv4 UDP, not RoCEv2
  pk::finalize(udp);
  a.on_mirrored(udp, 0, 2);
  pk::Packet cnp;
  pk::build_cnp(cnp, eth(), ip(c.server_ip, c.client_ip), 1, c.client_qp);
  a.on_mirrored(cnp, 0, 3);
  pk::Packet runt = data(c, kC2s, pk::op::kSendOnly, 0, true, 64);
  runt.hdr_len = 20, runt.payload_len = 0, runt.trailer_len = 0, runt.pad_len = 0;  // 24 B: truncated
  a.on_mirrored(runt, 0, 4);
  // Raw bytes (as a capture holds them) go through the same parser.
  const pk::Packet ok = data(c, kC2s, pk::op::kSendOnly, 0, true, 64);
  std::vector<uint8_t> bytes(ok.frame_len_no_fcs());
  ok.serialize(bytes.data(), bytes.size());
  a.on_mirrored_bytes(bytes.data(), bytes.size(), 0, 5);
  EXPECT_EQ(a.stats().mirrored, 5u);
  EXPECT_EQ(a.stats().non_ipv4, 1u);
  EXPECT_EQ(a.stats().non_roce, 1u);
  EXPECT_EQ(a.stats().unsupported_opcode, 1u);
  EXPECT_EQ(a.stats().bad_frames, 1u);
  EXPECT_EQ(a.stats().untracked_packets, 1u);  // parsed and analysed (no flow)
}

TEST(Analytics, BadConfigIsRefusedNamingTheField) {
  Config cfg = base();
  cfg.table_capacity = 0;
  ASSERT_NE(check_config(cfg), nullptr);
  EXPECT_NE(std::string(check_config(cfg)).find("table_capacity"), std::string::npos);
  EXPECT_THROW(Analyzer{cfg}, std::invalid_argument);
  cfg = base();
  cfg.export_rps = 10;
  cfg.export_burst = 0;
  EXPECT_NE(std::string(check_config(cfg)).find("export_burst"), std::string::npos);
}

// Steady state: frames of tracked and untracked flows and sweeps allocate nothing.
// The members of an M-LAG pair (analyzer.h "M-LAG", the seed article's
// figure 3): what one sends waits in its link until the test delivers it, as
// a frame on the peer link would.
struct SyncLink : PeerLink {
  Analyzer* to = nullptr;
  std::vector<std::vector<uint8_t>> queue;
  void send_sync(const uint8_t* p, size_t n) override { queue.emplace_back(p, p + n); }
  // Delivers everything queued, at `when`; returns the messages delivered.
  size_t deliver(uint64_t when) {
    std::vector<std::vector<uint8_t>> q;
    q.swap(queue);
    for (const auto& m : q) to->on_sync(m.data(), m.size(), when);
    return q.size();
  }
};

// Leaf1 (a) sees the client's REQ, RTU and data; leaf2 (b) the server's REP
// and ACKs. b forwards the REP, a builds the flow and sends the setup, b
// builds the same entry; ACKs seen by b reach a, which takes RTT (at the
// ACK's own time at b) and loss from them; a NAK a sees itself is counted by
// a alone even when b has also carried data of that direction (the
// counted flag); frames arriving on the peer-link port are not analysed.
TEST(Analytics, MlagMembersSyncSetupAndCountEachNakOnce) {
  constexpr uint32_t kPeer = 9;
  Analyzer a(base()), b(base());
  SyncLink to_b, to_a;  // a's messages to b, b's to a
  to_b.to = &b, to_a.to = &a;
  a.set_peer(kPeer, &to_b);
  b.set_peer(kPeer, &to_a);
  Collect out_a, out_b;
  a.add_sink(&out_a);
  b.add_sink(&out_b);
  const Conn c = conn(3);
  a.on_frame(cm(c, pk::cm::kReq), 1, 0);
  b.on_frame(cm(c, pk::cm::kRep), 2, 100 * kNs);
  EXPECT_EQ(b.stats().rep_without_req, 0u);
  EXPECT_EQ(b.stats().sync_rep_sent, 1u);
  EXPECT_EQ(b.flows(), 0u);
  EXPECT_EQ(to_a.deliver(150 * kNs), 1u);  // the REP reaches a: it holds the REQ
  EXPECT_EQ(a.flows(), 1u);
  EXPECT_EQ(a.stats().sync_setup_sent, 1u);
  EXPECT_EQ(to_b.deliver(200 * kNs), 1u);  // the setup reaches b
  EXPECT_EQ(b.flows(), 1u);
  EXPECT_EQ(b.stats().sync_flows_created, 1u);
  a.on_frame(cm(c, pk::cm::kRtu), 1, 300 * kNs);
  EXPECT_EQ(a.stats().sync_setup_sent, 2u);  // again, established
  to_b.deliver(350 * kNs);

  const uint64_t t_req = 1 * kUs, t_ack = t_req + 777 * kNs;
  a.on_frame(data(c, kC2s, pk::op::kWriteOnly, 0, true, 1000), 1, t_req);
  b.on_frame(ack(c, kC2s, 0), 2, t_ack);
  EXPECT_EQ(b.stats().sync_ack_sent, 1u);
  to_a.deliver(t_ack + 500 * kNs);  // late: the RTT is still the ACK's time at b less the request's at a
  EXPECT_EQ(a.stats().sync_acks_used, 1u);
  a.on_frame(data(c, kC2s, pk::op::kWriteOnly, 1, true, 1000), 1, 2 * kUs);
  b.on_frame(ack(c, kC2s, 1, 0x60), 2, 2 * kUs + 100 * kNs);  // NAK at b: b carried no data, a counts it
  to_a.deliver(2 * kUs + 200 * kNs);
  b.on_frame(data(c, kC2s, pk::op::kWriteOnly, 1, true, 1000), 2, 3 * kUs);  // b carries data now too
  a.on_frame(ack(c, kC2s, 1, 0x60), 1, 3 * kUs + 100 * kNs);  // NAK at a: counted by a, flagged so
  to_b.deliver(3 * kUs + 200 * kNs);
  EXPECT_EQ(b.stats().sync_acks_used, 0u);
  // Arriving on the peer link: not analysed.
  const uint64_t tracked = a.stats().tracked_packets;
  a.on_frame(data(c, kC2s, pk::op::kWriteOnly, 2, true, 1000), kPeer, 4 * kUs);
  EXPECT_EQ(a.stats().tracked_packets, tracked);
  EXPECT_EQ(a.stats().peer_link_frames, 1u);
  // A message that is not one.
  const uint8_t junk[kSyncHeader] = {2, 1};
  a.on_sync(junk, sizeof junk, 4 * kUs);
  EXPECT_EQ(a.stats().sync_bad, 1u);
  const uint8_t short_setup[kSyncHeader + 8] = {kSyncVersion, uint8_t(SyncKind::setup)};  // body under 16 B
  a.on_sync(short_setup, sizeof short_setup, 4 * kUs);
  EXPECT_EQ(a.stats().sync_bad, 2u);
  std::vector<uint8_t> not_ack(kSyncHeader, 0);  // kind ack carrying a CM REP
  not_ack[0] = kSyncVersion, not_ack[1] = uint8_t(SyncKind::ack);
  const pk::Packet rep = cm(c, pk::cm::kRep);
  not_ack.resize(kSyncHeader + rep.frame_len_no_fcs());
  rep.serialize(not_ack.data() + kSyncHeader, rep.frame_len_no_fcs());
  a.on_sync(not_ack.data(), not_ack.size(), 4 * kUs);
  EXPECT_EQ(a.stats().sync_bad, 3u);
  a.on_sync(not_ack.data(), kSyncHeader + 10, 4 * kUs);  // a truncated frame
  EXPECT_EQ(a.stats().sync_bad, 4u);

  a.flush(5 * kUs);
  b.flush(5 * kUs);
  ASSERT_EQ(out_a.records.size(), 1u);
  ASSERT_EQ(out_b.records.size(), 1u);
  const FlowRecord &ra = out_a.records[0], &rb = out_b.records[0];
  for (const FlowRecord* r : {&ra, &rb}) {
    EXPECT_EQ(r->server_ip, c.server_ip);
    EXPECT_EQ(r->client_ip, c.client_ip);
    EXPECT_EQ(r->client_qp, c.client_qp);
    EXPECT_EQ(r->server_qp, c.server_qp);
    EXPECT_TRUE(r->established);
    EXPECT_EQ(r->start_ns, 100u) << "both entries start at the REP";
  }
  EXPECT_EQ(ra.dir[kC2s].data_packets, 2u);
  EXPECT_EQ(ra.dir[kC2s].naks, 2u);
  EXPECT_EQ(ra.dir[kC2s].rtt_samples, 1u);
  EXPECT_EQ(ra.dir[kC2s].rtt_avg_ns, (t_ack - t_req) / kNs);
  EXPECT_EQ(ra.dir[kS2c].packets, 1u);  // the NAK it saw itself
  EXPECT_EQ(rb.dir[kC2s].data_packets, 1u);
  EXPECT_EQ(rb.dir[kC2s].naks, 0u) << "the pair counts each NAK once";
  EXPECT_EQ(rb.dir[kC2s].rtt_samples, 0u);
  EXPECT_EQ(rb.dir[kS2c].packets, 2u);
  EXPECT_EQ(rb.dir[kS2c].ingress_port, 2u);
}

TEST(Analytics, NoHeapAllocationPerFrame) {
  Config cfg = base();
  cfg.table_capacity = 64;
  cfg.inactive_timeout_ps = 1'000'000'000'000ull;  // active sweeps only
  Analyzer a(cfg);
  Driver d{a};
  for (uint32_t i = 0; i < 32; ++i) d.setup(conn(i), i * 300 * kNs);
  std::vector<pk::Packet> frames;
  for (uint32_t i = 0; i < 40; ++i) {  // 8 of them untracked
    frames.push_back(data(conn(i), kC2s, pk::op::kWriteOnly, 0, true, 256));
    frames.push_back(ack(conn(i), kC2s, 0));
  }
  g_allocs = 0;
  g_count_allocs = true;
  uint64_t t = 20 * kUs;
  for (int round = 0; round < 50; ++round)
    for (const pk::Packet& p : frames) a.on_frame(p, 1, t += 100 * kNs);  // 400 us: 8 active sweeps
  g_count_allocs = false;
  EXPECT_EQ(g_allocs.load(), 0u);
  EXPECT_EQ(a.stats().tracked_packets, 50u * 64);
}

}  // namespace
}  // namespace rocesim::analytics

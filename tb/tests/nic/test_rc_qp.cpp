// The RC queue pair block (tb/nic/rc) driven without SystemC: PSN
// sequencing and wrap, AckReq and ACK coalescing, NAK and go-back-N,
// retransmission timeout, CM REQ/REP/RTU. Expected values come from the IBTA
// rules as REFERENCE.md ("RoCEv2 frames") and the block's header state them,
// computed here from the packet indices, not read from the block.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "nic/rc/rc_qp.h"

namespace rc = rocesim::rc;

namespace {

constexpr uint64_t kPsnSpace = 1ull << 24;  // PSNs are 24-bit (IBTA 9.7.1)
constexpr uint64_t kRto = 4096000ull << 10; // IBTA local ACK timeout 10: 4.096 us x 2^10, in ps

rc::RcConfig config(uint32_t ack_every, uint32_t max_outstanding, bool cm = false) {
  rc::RcConfig c;
  c.ack_every = ack_every;
  c.max_outstanding = max_outstanding;
  c.rto_ps = kRto;
  c.cm = cm;
  return c;
}

}  // namespace

TEST(RcPsn, PsnIsTheIndexModulo2To24AndMapsBackToTheNearestIndex) {
  EXPECT_EQ(rc::psn_of(0), 0u);
  EXPECT_EQ(rc::psn_of(kPsnSpace - 1), 0xffffffu);
  EXPECT_EQ(rc::psn_of(kPsnSpace), 0u);
  EXPECT_EQ(rc::psn_of(3 * kPsnSpace + 7), 7u);
  // Ahead of the reference across the wrap: base 2^24 - 2, PSN 1 is 3 ahead.
  EXPECT_EQ(rc::index_of(kPsnSpace - 2, 1), kPsnSpace + 1);
  // Behind it across the wrap: base 2^24 + 5, PSN 2^24 - 2 is 7 behind.
  EXPECT_EQ(rc::index_of(kPsnSpace + 5, 0xfffffe), kPsnSpace - 2);
  // The window is [-2^23, 2^23): 2^23 - 1 ahead stays ahead, 2^23 ahead is taken as behind.
  const uint64_t base = 5 * kPsnSpace;
  const uint64_t half = kPsnSpace / 2;
  EXPECT_EQ(rc::index_of(base, rc::psn_of(base + half - 1)), base + half - 1);
  EXPECT_EQ(rc::index_of(base, rc::psn_of(base + half)), base - half);
  EXPECT_EQ(rc::index_of(base, rc::psn_of(base - half)), base - half);
}

TEST(RcRequester, SendsConsecutivePsnsAndRequestsAcksAtMessageEndAndEveryAckEvery) {
  // 4 messages of 3 packets, ack_every 5.
  const uint32_t ppm = 3, every = 5;
  rc::RcRequester q(config(every, 1000), ppm, 4 * ppm);
  EXPECT_TRUE(q.established()) << "without CM the QP is ready at once";
  uint64_t t = 1000;
  for (uint64_t i = 0; i < 4 * ppm; ++i) {
    ASSERT_TRUE(q.has_data());
    const rc::TxPacket p = q.send(t += 10);
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.psn, i);  // starting PSN 0
    EXPECT_FALSE(p.retransmission);
    const bool last_of_message = i % ppm == ppm - 1;
    const bool every_nth = (i + 1) % every == 0;
    EXPECT_EQ(q.ack_request(i), last_of_message || every_nth) << i;
  }
  EXPECT_FALSE(q.has_data());
  EXPECT_EQ(q.high_sent(), 4u * ppm);
  EXPECT_EQ(q.snd_una(), 0u);
}

TEST(RcRequester, WindowLimitsOutstandingPacketsAndAcksAreCumulative) {
  const uint32_t window = 4;
  rc::RcRequester q(config(1, window), 1, 10);
  for (uint32_t i = 0; i < window; ++i) {
    ASSERT_TRUE(q.window_open());
    q.send(100);
  }
  EXPECT_FALSE(q.window_open()) << window << " outstanding";
  // An ACK for PSN 2 acknowledges 0, 1 and 2: the window opens by 3.
  EXPECT_TRUE(q.on_ack(2, 200));
  EXPECT_EQ(q.snd_una(), 3u);
  EXPECT_EQ(q.progress_ps(), 200u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.window_open());
    q.send(300);
  }
  EXPECT_FALSE(q.window_open());
  // An old ACK (PSN 1 < snd_una) and one beyond what was sent (high_sent = 7) change nothing.
  EXPECT_FALSE(q.on_ack(1, 400));
  EXPECT_FALSE(q.on_ack(7, 400));
  EXPECT_EQ(q.snd_una(), 3u);
  EXPECT_EQ(q.progress_ps(), 200u) << "no progress from an ignored ACK";
  EXPECT_FALSE(q.done());
  while (q.has_data()) {
    q.on_ack(rc::psn_of(q.snd_nxt() - 1), 500);
    q.send(500);
  }
  EXPECT_FALSE(q.done()) << "the last packet is not acknowledged yet";
  EXPECT_TRUE(q.on_ack(9, 600));
  EXPECT_TRUE(q.done());
  EXPECT_EQ(q.rto_deadline(), rc::kNever) << "nothing pending once done";
}

TEST(RcResponder, CoalescesAcksEveryAckEveryPacketsAndAnswersAckReqAndTheLastPacket) {
  // 23 packets of 100 bytes, ack_every 4; packets 9 and 15 carry AckReq.
  const uint32_t every = 4, n = 23, len = 100;
  rc::RcResponder r(config(every, 1000), uint64_t(n) * len);
  uint32_t since = 0;  // accepted packets since the last ACK, counted here
  std::vector<uint32_t> acks, want;
  for (uint32_t i = 0; i < n; ++i) {
    const bool ackreq = i == 9 || i == 15;
    const rc::RxResult x = r.on_data(i, ackreq, len);
    EXPECT_EQ(x.verdict, rc::RxVerdict::in_order);
    EXPECT_EQ(x.complete, i == n - 1);
    if (x.response == rc::RxResponse::ack) {
      EXPECT_EQ(x.syndrome, rc::kAckSyndrome);
      EXPECT_EQ(x.psn, i) << "an ACK names the packet that triggered it";
      acks.push_back(i);
    }
    EXPECT_NE(x.response, rc::RxResponse::nak);
    // The rule: AckReq answers at once and restarts the count; else every
    // ack_every-th accepted packet, and the packet that completes the flow.
    if (ackreq) {
      since = 0;
      want.push_back(i);
    } else if (++since == every || i == n - 1) {
      since = 0;
      want.push_back(i);
    }
  }
  EXPECT_EQ(acks, want);
  // Spelled out: 3 (4th packet), 7, 9 (AckReq), 13, 15 (AckReq), 19, 22 (last).
  EXPECT_EQ(want, (std::vector<uint32_t>{3, 7, 9, 13, 15, 19, 22}));
  EXPECT_EQ(r.epsn_index(), n);
  EXPECT_EQ(r.bytes_received(), uint64_t(n) * len);
}

TEST(RcResponder, NaksTheExpectedPsnOnceOnAGapAndAcksDuplicatesWithWhatItHas) {
  rc::RcResponder r(config(1, 1000), 1000000);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(r.on_data(i, false, 10).response, rc::RxResponse::ack);
  // Packet 5 lost: 6 and 7 arrive. One NAK (PSN sequence error) for 5.
  rc::RxResult x = r.on_data(6, false, 10);
  EXPECT_EQ(x.verdict, rc::RxVerdict::gap);
  EXPECT_EQ(x.response, rc::RxResponse::nak);
  EXPECT_EQ(x.syndrome, rc::kNakPsnSeqError);
  EXPECT_EQ(x.psn, 5u);
  x = r.on_data(7, false, 10);
  EXPECT_EQ(x.verdict, rc::RxVerdict::gap);
  EXPECT_EQ(x.response, rc::RxResponse::none) << "one NAK per gap";
  EXPECT_EQ(r.bytes_received(), 50u) << "out-of-order packets are not accepted";
  // A duplicate (the requester went back further): ACK the last in-order packet, 4.
  x = r.on_data(3, false, 10);
  EXPECT_EQ(x.verdict, rc::RxVerdict::duplicate);
  EXPECT_EQ(x.response, rc::RxResponse::ack);
  EXPECT_EQ(x.psn, 4u);
  // The go-back-N resend repairs the gap; a new gap NAKs again.
  EXPECT_EQ(r.on_data(5, false, 10).verdict, rc::RxVerdict::in_order);
  EXPECT_FALSE(r.nak_outstanding());
  x = r.on_data(8, false, 10);
  EXPECT_EQ(x.response, rc::RxResponse::nak);
  EXPECT_EQ(x.psn, 6u);
  // Across the PSN wrap: the expected index comes from the 24-bit PSN.
  rc::RcResponder w(config(1, 1000), UINT64_MAX);
  for (uint64_t i = 0; i < kPsnSpace + 2; ++i) ASSERT_EQ(w.on_data(rc::psn_of(i), false, 1).verdict, rc::RxVerdict::in_order);
  EXPECT_EQ(w.epsn_index(), kPsnSpace + 2);
  x = w.on_data(rc::psn_of(kPsnSpace - 1), false, 1);  // PSN 0xffffff: 3 behind
  EXPECT_EQ(x.verdict, rc::RxVerdict::duplicate);
  EXPECT_EQ(x.psn, 1u) << "ACK of index 2^24 + 1";
}

TEST(RcRequester, NakGoesBackNAndResendsEverythingFromTheNakedPsn) {
  rc::RcRequester q(config(1, 64), 1, 20);
  for (int i = 0; i < 12; ++i) q.send(100);
  // A NAK outside [snd_una, high_sent] is ignored.
  EXPECT_FALSE(q.on_nak(13, 150));
  EXPECT_TRUE(q.on_ack(3, 200));  // 0..3 arrived
  EXPECT_FALSE(q.on_nak(2, 210)) << "PSN 2 is below snd_una = 4";
  EXPECT_TRUE(q.on_nak(7, 300));
  EXPECT_EQ(q.snd_una(), 7u) << "a NAK acknowledges everything before its PSN";
  EXPECT_EQ(q.snd_nxt(), 7u);
  EXPECT_EQ(q.progress_ps(), 300u);
  // Go-back-N: 7..11 again (retransmissions), then 12.. for the first time.
  for (uint64_t i = 7; i < 14; ++i) {
    const rc::TxPacket p = q.send(400);
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.retransmission, i < 12) << i;
  }
  EXPECT_EQ(q.high_sent(), 14u);
}

TEST(RcRequester, TimeoutGoesBackToTheOldestUnacknowledgedPacketRtoAfterTheLastProgress) {
  rc::RcRequester q(config(1, 64), 1, 4);
  EXPECT_EQ(q.rto_deadline(), rc::kNever) << "no timer with nothing outstanding";
  const uint64_t t0 = 1000000;
  q.send(t0);
  EXPECT_EQ(q.rto_deadline(), t0 + kRto) << "the first outstanding packet starts the timer";
  q.send(t0 + 500);
  q.send(t0 + 900);
  EXPECT_EQ(q.rto_deadline(), t0 + kRto) << "later packets do not restart it";
  const uint64_t t1 = t0 + 5000;
  ASSERT_TRUE(q.on_ack(0, t1));
  EXPECT_EQ(q.rto_deadline(), t1 + kRto) << "progress restarts it";
  EXPECT_FALSE(q.on_timer(t1 + kRto - 1));
  EXPECT_EQ(q.snd_nxt(), 3u);
  ASSERT_TRUE(q.on_timer(t1 + kRto));
  EXPECT_EQ(q.snd_nxt(), 1u) << "back to snd_una";
  EXPECT_EQ(q.snd_una(), 1u);
  EXPECT_EQ(q.rto_deadline(), rc::kNever) << "nothing outstanding until the go-back resends";
  EXPECT_TRUE(q.send(t1 + kRto).retransmission);
  EXPECT_EQ(q.rto_deadline(), t1 + 2 * kRto) << "the resend restarts the timer";
}

TEST(RcConnection, ReqAtStartRepeatedEveryRtoUntilRepAndOneRtu) {
  rc::RcConfig c = config(1, 64, /*cm=*/true);
  rc::RcRequester q(c, 1, 3);
  rc::RcResponder r(c, 3000);
  EXPECT_FALSE(q.established());
  EXPECT_EQ(q.rto_deadline(), rc::kNever) << "no timer before the first REQ";
  const uint64_t t0 = 7000;
  ASSERT_TRUE(q.req_due(t0));
  q.req_sent(t0);
  EXPECT_EQ(q.rto_deadline(), t0 + kRto);
  EXPECT_FALSE(q.req_due(t0 + kRto - 1));
  EXPECT_FALSE(q.on_timer(t0 + kRto)) << "the REQ's repeat is not a data timeout";
  ASSERT_TRUE(q.req_due(t0 + kRto)) << "the REQ (or its REP) was lost: again after rto";
  q.req_sent(t0 + kRto);
  // The responder answers every REQ (here two arrive) with a REP.
  r.on_req();
  r.on_req();
  EXPECT_EQ(r.reqs(), 2u);
  EXPECT_TRUE(q.on_rep()) << "the first REP establishes: send the RTU";
  EXPECT_FALSE(q.on_rep()) << "a duplicate REP gets no second RTU";
  EXPECT_TRUE(q.established());
  EXPECT_FALSE(q.req_due(t0 + 5 * kRto));
  EXPECT_EQ(q.rto_deadline(), rc::kNever);
  // Data may overtake the RTU: the responder accepts it.
  EXPECT_FALSE(r.rtu_received());
  EXPECT_EQ(r.on_data(q.send(t0 + 2 * kRto).psn, false, 1000).verdict, rc::RxVerdict::in_order);
  r.on_rtu();
  EXPECT_TRUE(r.rtu_received());
  // Time 0 is a real time: a REQ at 0 counts as sent.
  rc::RcRequester z(c, 1, 1);
  z.req_sent(0);
  EXPECT_NE(z.req_sent_ps(), 0u);
  EXPECT_FALSE(z.req_due(0));
}

// Requester and responder over a lossless, in-order wire except for the
// packets `lost` (first transmissions only), with every packet sent at once
// the window allows and responses returned after the whole burst: go-back-N
// resends, for each loss, the lost packet and every packet sent after it
// before the NAK arrived.
TEST(RcLoop, EveryByteArrivesInOrderAndGoBackNResendsFromEachLoss) {
  const uint32_t window = 8, total = 8;
  rc::RcConfig c = config(1, window);
  rc::RcRequester q(c, 1, total);
  rc::RcResponder r(c, uint64_t(total) * 1000);
  // Round 1: 0..7 go out; 5 is lost.
  std::deque<rc::RxResult> back;
  uint64_t t = 1000, retrans = 0;
  while (q.has_data() && q.window_open()) {
    const rc::TxPacket p = q.send(t);
    retrans += p.retransmission;
    if (p.index == 5) continue;
    back.push_back(r.on_data(p.psn, false, 1000));
  }
  t += 10000;
  for (const rc::RxResult& x : back) {
    if (x.response == rc::RxResponse::ack) q.on_ack(x.psn, t);
    if (x.response == rc::RxResponse::nak) q.on_nak(x.psn, t);
  }
  back.clear();
  // ACKs for 0..4, one NAK for 5 (packets 6 and 7 made the gap): back to 5.
  EXPECT_EQ(q.snd_una(), 5u);
  EXPECT_EQ(q.snd_nxt(), 5u);
  bool complete = false;
  while (q.has_data() && q.window_open()) {
    const rc::TxPacket p = q.send(t);
    retrans += p.retransmission;
    const rc::RxResult x = r.on_data(p.psn, false, 1000);
    complete = x.complete;
    if (x.response == rc::RxResponse::ack) q.on_ack(x.psn, t + 10000);
  }
  EXPECT_EQ(retrans, total - 5u) << "5, 6 and 7 again";
  EXPECT_TRUE(complete);
  EXPECT_TRUE(q.done());
  EXPECT_EQ(r.bytes_received(), uint64_t(total) * 1000);
}

TEST(RcLoop, ALostLastPacketIsRecoveredByTheTimeoutOnly) {
  rc::RcConfig c = config(4, 64);
  rc::RcRequester q(c, 4, 4);  // one message of 4 packets: AckReq on the last
  rc::RcResponder r(c, 4 * 100);
  const uint64_t t0 = 1000;
  for (int i = 0; i < 4; ++i) {
    const rc::TxPacket p = q.send(t0);
    if (p.index == 3) continue;  // lost: no later packet shows the gap, so no NAK
    const rc::RxResult x = r.on_data(p.psn, q.ack_request(p.index), 100);
    EXPECT_EQ(x.response, rc::RxResponse::none) << "no ACK before the 4th packet";
  }
  EXPECT_EQ(q.rto_deadline(), t0 + kRto);
  ASSERT_TRUE(q.on_timer(t0 + kRto));
  const rc::TxPacket p = q.send(t0 + kRto);
  EXPECT_EQ(p.index, 0u) << "go back to snd_una: nothing was acknowledged";
  // The responder has 0..2: packet 0 is a duplicate, ACKed with PSN 2 (what
  // it has); that moves the window past the go-back point, so 3 goes next.
  rc::RxResult d = r.on_data(p.psn, false, 100);
  EXPECT_EQ(d.verdict, rc::RxVerdict::duplicate);
  EXPECT_EQ(d.psn, 2u);
  ASSERT_TRUE(q.on_ack(d.psn, t0 + kRto + 1));
  EXPECT_EQ(q.snd_nxt(), 3u);
  EXPECT_EQ(q.snd_una(), 3u);
  const rc::RxResult x = r.on_data(q.send(t0 + kRto + 2).psn, true, 100);
  EXPECT_TRUE(x.complete);
  EXPECT_TRUE(q.on_ack(x.psn, t0 + kRto + 3));
  EXPECT_TRUE(q.done());
}

// RoCEv2 Reliable Connection (RC) transport of one queue pair, as two pure
// state machines: the requester (the end that sends RDMA WRITE / SEND
// packets) and the responder (the end that receives them and answers with
// ACK/NAK). No SystemC and no packets: time is integer picoseconds passed in
// by the caller (tb/host/host.cpp), which builds and sends the frames these
// decide on, paces and arbitrates the port, and arms the one timer
// (rto_deadline()). Like tb/nic/cc (DCQCN), the block is driven and tested
// without a simulation kernel (tb/tests/nic/test_rc_qp.cpp).
//
// Rules (IBTA Vol. 1 ch. 9.7, REFERENCE.md "RoCEv2 frames"):
//   PSN: packets of a QP are numbered 0, 1, 2, ... (the packet index, 64
//     bit); the PSN on the wire is the index mod 2^24 (starting PSN 0). A PSN
//     received is mapped back to the index nearest to a reference (the
//     responder's expected index, the requester's oldest unacknowledged one):
//     within -2^23 .. 2^23 - 1 of it (index_of()).
//   AckReq: set on the last packet of each message and on every packet whose
//     index + 1 is a multiple of ack_every.
//   Responder, packet with index i, expected e (ePSN):
//     i == e: accepted (e += 1). An ACK (syndrome 0x1f: unlimited credits)
//       for its PSN when it carries AckReq, when ack_every packets were
//       accepted since the last ACK (coalescing), or when it completes the
//       flow's bytes. A gap NAKed earlier is repaired: a new gap NAKs again.
//     i > e: a gap (a packet was lost). NAK PSN sequence error (0x60) for
//       e's PSN, once until the gap is repaired.
//     i < e: a duplicate (the requester went back): ACK e - 1 (what we have),
//       so the requester's window moves on.
//   Requester: at most max_outstanding packets sent and not acknowledged.
//     ACK for PSN p: everything up to index(p) arrived; snd_una = index(p)+1
//       when that is new and not beyond what was sent. NAK for PSN p: go back
//       N: snd_una = snd_nxt = index(p) (p in [snd_una, high_sent]). Both
//       restart the timer (progress). The flow is done when snd_una reaches
//       the last packet + 1.
//     Timer: while packets are outstanding, rto_ps after the last progress
//       (an ACK or NAK moving the window, a timeout, or the first packet sent
//       with nothing outstanding) the requester goes back to snd_una.
//   Connection setup (cm): before data the requester sends a CM REQ (to
//     QP1) when the flow starts and again every rto_ps until a REP arrives;
//     the REP establishes the QP and is answered with one RTU (a duplicate
//     REP gets none). The responder answers every REQ with a REP (a lost REP
//     is repaired by the repeated REQ) and accepts data whether or not the
//     RTU has arrived (IBTA: the first data packet has the RTU's effect).
//     Without cm the QP is established at once.
//
// The open-loop transport (tb/host) uses the requester as its packet
// sequencer only: send() and has_data(), without ACKs or the timer.
//
// Cost: O(1) per call. No heap allocation.
#pragma once

#include <cstdint>

namespace rocesim::rc {

inline constexpr uint64_t kNever = UINT64_MAX;
inline constexpr uint8_t kAckSyndrome = 0x1f;     // ACK, unlimited credits (IBTA 9.7.5.1)
inline constexpr uint8_t kNakPsnSeqError = 0x60;  // NAK, PSN sequence error
inline constexpr uint32_t kPsnMask = 0xffffff;    // PSNs are 24 bits

// The PSN of packet `index`.
inline uint32_t psn_of(uint64_t index) { return static_cast<uint32_t>(index & kPsnMask); }
// The index with PSN `psn` nearest to `base`: base + d, d in [-2^23, 2^23).
inline uint64_t index_of(uint64_t base, uint32_t psn) {
  const int32_t d = static_cast<int32_t>(((psn - static_cast<uint32_t>(base)) & kPsnMask) << 8) >> 8;
  return static_cast<uint64_t>(static_cast<int64_t>(base) + d);
}

struct RcConfig {
  uint32_t ack_every = 16;          // AckReq / ACK coalescing, packets (>= 1)
  uint32_t max_outstanding = 1024;  // packets sent and not acknowledged (>= 1)
  uint64_t rto_ps = 4194304000;     // retransmission timeout (IBTA local ACK timeout 10: 4.096 us x 2^10)
  bool cm = true;                   // connection setup with CM REQ/REP/RTU before data
};

// One packet the requester decided to send.
struct TxPacket {
  uint64_t index = 0;
  uint32_t psn = 0;
  bool retransmission = false;  // sent before (go-back-N or timeout)
};

class RcRequester {
 public:
  // Messages of packets_per_message packets each, total_packets in all.
  RcRequester(const RcConfig& cfg, uint32_t packets_per_message, uint64_t total_packets);

  // --- Connection setup (CM).
  bool established() const { return established_; }
  // A REQ is due at now: not established, and none sent yet or rto_ps since the last.
  bool req_due(uint64_t now_ps) const {
    return !established_ && (req_sent_ps_ == 0 || (now_ps >= req_sent_ps_ && now_ps - req_sent_ps_ >= cfg_.rto_ps));
  }
  // The caller sent a REQ at now (time 0 is recorded as 1: 0 means none yet).
  void req_sent(uint64_t now_ps) { req_sent_ps_ = now_ps > 1 ? now_ps : 1; }
  uint64_t req_sent_ps() const { return req_sent_ps_; }  // 0: no REQ sent yet
  // A REP arrived: true if it established the QP (the caller answers with an
  // RTU); false if it was already established (a duplicate).
  bool on_rep();

  // --- Sending.
  bool has_data() const { return nxt_ < total_; }  // a packet is left to send (first time or again)
  bool window_open() const { return nxt_ - una_ < cfg_.max_outstanding; }
  uint64_t next_index() const { return nxt_; }
  // Whether packet `index` carries AckReq: last of its message, or index + 1 a multiple of ack_every.
  bool ack_request(uint64_t index) const {
    return (index % ppm_) + 1 == ppm_ || (index + 1) % cfg_.ack_every == 0;
  }
  // Packet next_index() goes out at now (has_data() must hold). The timer
  // starts when it is the only one outstanding.
  TxPacket send(uint64_t now_ps);

  // --- Responses.
  // ACK for `psn` at now: true if it moved the window (the caller may send again).
  bool on_ack(uint32_t psn, uint64_t now_ps);
  // NAK (PSN sequence error) for `psn` at now: true if it went back.
  bool on_nak(uint32_t psn, uint64_t now_ps);

  // --- Timer.
  // When the caller must call on_timer(): the REQ's repeat while not
  // established (kNever before the first REQ), else the last progress +
  // rto_ps while packets are outstanding; kNever when nothing is pending.
  uint64_t rto_deadline() const;
  // At now: a timeout if packets are outstanding and rto_ps passed since the
  // last progress: go back to snd_una; true then.
  bool on_timer(uint64_t now_ps);

  uint64_t snd_una() const { return una_; }      // oldest unacknowledged
  uint64_t snd_nxt() const { return nxt_; }      // next to send
  uint64_t high_sent() const { return high_; }   // packets sent at least once
  uint64_t total_packets() const { return total_; }
  uint64_t progress_ps() const { return progress_ps_; }
  bool done() const { return done_; }            // every packet acknowledged
  bool outstanding() const { return una_ != nxt_; }

 private:
  RcConfig cfg_;
  uint32_t ppm_;
  uint64_t total_;
  uint64_t una_ = 0, nxt_ = 0, high_ = 0;
  uint64_t progress_ps_ = 0;
  uint64_t req_sent_ps_ = 0;
  bool established_;
  bool done_ = false;
};

// What the responder does with a data packet.
enum class RxVerdict : uint8_t { in_order, gap, duplicate };
enum class RxResponse : uint8_t { none, ack, nak };

struct RxResult {
  RxVerdict verdict = RxVerdict::in_order;
  RxResponse response = RxResponse::none;
  uint32_t psn = 0;          // of the ACK/NAK
  uint8_t syndrome = 0;      // AETH syndrome of the ACK/NAK
  bool complete = false;     // in order, and it completed the flow's bytes
};

class RcResponder {
 public:
  // The flow carries total_bytes of payload.
  RcResponder(const RcConfig& cfg, uint64_t total_bytes);
  RcResponder() = default;  // no flow: total 0

  // A data packet with `psn`, AckReq flag and payload bytes arrived.
  RxResult on_data(uint32_t psn, bool ackreq, uint32_t payload_bytes);
  // CM: a REQ arrived; the caller answers with a REP (every time).
  void on_req() { ++reqs_; }
  // CM: the RTU arrived.
  void on_rtu() { rtu_ = true; }

  uint64_t epsn_index() const { return epsn_; }  // next expected packet index
  uint64_t bytes_received() const { return bytes_; }
  bool nak_outstanding() const { return nak_outstanding_; }
  uint64_t reqs() const { return reqs_; }
  bool rtu_received() const { return rtu_; }

 private:
  RcConfig cfg_;
  uint64_t total_bytes_ = 0;
  uint64_t epsn_ = 0;
  uint64_t bytes_ = 0;
  uint32_t since_ack_ = 0;
  bool nak_outstanding_ = false;
  uint64_t reqs_ = 0;
  bool rtu_ = false;
};

}  // namespace rocesim::rc

#include "nic/rc/rc_qp.h"

namespace rocesim::rc {

RcRequester::RcRequester(const RcConfig& cfg, uint32_t packets_per_message, uint64_t total_packets)
    : cfg_(cfg), ppm_(packets_per_message ? packets_per_message : 1), total_(total_packets), established_(!cfg.cm) {}

bool RcRequester::on_rep() {
  if (established_) return false;
  established_ = true;
  return true;
}

TxPacket RcRequester::send(uint64_t now_ps) {
  TxPacket t;
  t.index = nxt_;
  t.psn = psn_of(nxt_);
  t.retransmission = nxt_ < high_;
  if (!t.retransmission) high_ = nxt_ + 1;
  ++nxt_;
  if (una_ + 1 == nxt_) progress_ps_ = now_ps;  // the first outstanding packet: the timer starts
  return t;
}

bool RcRequester::on_ack(uint32_t psn, uint64_t now_ps) {
  // Everything up to psn arrived: the window starts after it.
  const uint64_t idx = index_of(una_, psn) + 1;
  if (idx <= una_ || idx > high_) return false;  // old, or beyond what was sent
  una_ = idx;
  progress_ps_ = now_ps;
  if (nxt_ < una_) nxt_ = una_;  // acknowledged past a go-back point
  if (una_ >= total_) done_ = true;
  return true;
}

bool RcRequester::on_nak(uint32_t psn, uint64_t now_ps) {
  // The responder expects psn: everything before it arrived; go back to it.
  const uint64_t idx = index_of(una_, psn);
  if (idx < una_ || idx > high_) return false;
  una_ = idx;
  nxt_ = idx;
  progress_ps_ = now_ps;
  return true;
}

uint64_t RcRequester::rto_deadline() const {
  if (!established_) return req_sent_ps_ ? req_sent_ps_ + cfg_.rto_ps : kNever;
  if (done_ || una_ == nxt_) return kNever;
  return progress_ps_ + cfg_.rto_ps;
}

bool RcRequester::on_timer(uint64_t now_ps) {
  if (!established_ || done_ || una_ == nxt_ || now_ps - progress_ps_ < cfg_.rto_ps) return false;
  nxt_ = una_;  // go back to the oldest unacknowledged packet
  progress_ps_ = now_ps;
  return true;
}

RcResponder::RcResponder(const RcConfig& cfg, uint64_t total_bytes) : cfg_(cfg), total_bytes_(total_bytes) {}

RxResult RcResponder::on_data(uint32_t psn, bool ackreq, uint32_t payload_bytes) {
  RxResult r;
  const uint64_t idx = index_of(epsn_, psn);
  if (idx == epsn_) {
    ++epsn_;
    nak_outstanding_ = false;
    bytes_ += payload_bytes;
    r.complete = bytes_ >= total_bytes_;
    // Coalescing: an ACK when asked, every ack_every packets, and at the end.
    // (A requested ACK resets the count without counting the packet.)
    if (ackreq || ++since_ack_ >= cfg_.ack_every || r.complete) {
      since_ack_ = 0;
      r.response = RxResponse::ack;
      r.psn = psn & kPsnMask;
      r.syndrome = kAckSyndrome;
    }
  } else if (idx > epsn_) {
    // A gap: NAK the expected PSN once; the requester goes back N.
    r.verdict = RxVerdict::gap;
    if (!nak_outstanding_) {
      nak_outstanding_ = true;
      r.response = RxResponse::nak;
      r.psn = psn_of(epsn_);
      r.syndrome = kNakPsnSeqError;
    }
  } else {
    // A duplicate (after a go-back-N): acknowledge what we have.
    r.verdict = RxVerdict::duplicate;
    r.response = RxResponse::ack;
    r.psn = psn_of(epsn_ - 1);
    r.syndrome = kAckSyndrome;
  }
  return r;
}

}  // namespace rocesim::rc

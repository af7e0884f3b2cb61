// The ECN marker of one egress (port, queue), as a deterministic operation
// interface: decide(queue_len, ecn) per packet. No SystemC and no time; the
// only randomness is a caller-supplied core::Rng consumed by an exact rule,
// so the Verilated RTL can be driven with the same operations (and the same
// random words, Decision::rand32) and compared decision by decision.
//
// Codepoints (RFC 3168 section 5, the low 2 bits of the IPv4 TOS byte):
//   00 not-ECT, 01 ECT(1), 10 ECT(0), 11 CE.
//   - ECT(0) and ECT(1) are markable: when the rule fires they become CE
//     (Decision::mark).
//   - not-ECT is never marked (RFC 3168 6.1.1.1: a router would drop it
//     instead; the model leaves dropping to the MMU), but the firing is
//     counted in would_mark so the offered congestion signal is visible.
//   - CE stays CE. It is not newly marked (marked counts ECT -> CE changes
//     only, so marked <= ect_seen), and a firing on it counts in would_mark.
//   Decision::would_mark is the rule's output whatever the codepoint;
//   Counters::would_mark counts only the firings that changed nothing.
//   Every decision updates the marker's state (hysteresis) and stream (WRED)
//   the same way whatever the codepoint: the state is the queue's, not the
//   flow's.
//
// Rules, on q = queue_len in the configured unit (bytes or cells), all
// integer compares (the only non-integer input, Pmax, becomes P32 below):
//   off:        never fires.
//   threshold:  fires iff q > K (the DCTCP step; q == K does not fire).
//   wred:       q <= Kmin never; q > Kmax always; Kmin < q <= Kmax with
//               probability Pmax*(q-Kmin)/(Kmax-Kmin) (Floyd & Jacobson,
//               "Random Early Detection Gateways", 1993, on the
//               instantaneous queue as in DCQCN, Zhu et al., SIGCOMM 2015:
//               no averaging, no count-since-last-mark correction).
//   hysteresis: a per-queue flag. A packet with q > K_high sets it, a packet
//               with q < K_low clears it, otherwise it keeps its value; the
//               rule fires iff the flag is set after that update. So firing
//               starts on the first packet over K_high (inclusive) and stops
//               on the first packet under K_low (that packet is not marked);
//               q == K_high does not start it, q == K_low does not stop it.
//
// WRED, exactly (the RTL implements the same compare):
//   P32 = round(Pmax * 2^32), half away from zero, in [1, 2^32] (validate()
//         rejects a Pmax that rounds to 0); computed once at construction.
//   For Kmin < q <= Kmax (and only then) draw one 32-bit word
//         r = upper 32 bits of rng.next_u64()
//   and fire iff  r * (Kmax - Kmin) < (q - Kmin) * P32
//   in unsigned 64-bit arithmetic (no overflow: Kmax - Kmin < 2^32 is
//   validated, r < 2^32, P32 <= 2^32). One word per packet in the ramp, none
//   outside it, so the stream position depends only on the sequence of queue
//   lengths. The ramp is (Kmin, Kmax], Kmax included (p = Pmax there, a draw
//   is needed unless Pmax = 1; it is drawn in every case to keep the rule
//   uniform). The realized probability is ceil((q-Kmin)*P32/(Kmax-Kmin))/2^32,
//   within 2^-31 of Pmax*(q-Kmin)/(Kmax-Kmin); with Pmax = 1 it is exactly 1
//   at q = Kmax.
//
// Which queue length: the marker compares the number it is given, in the
// configured unit (config.h). The switch (tlm/switch/switch.cpp ecn_mark)
// passes the egress queue's occupancy without the packet itself:
//   - enqueue: what the packet finds, i.e. the queue *before* its own cells
//     are charged. The MMU has already admitted and charged the packet when
//     the marker runs, so in cells this is the MMU's queue counter minus the
//     packet's egress charge: the value the admission pipeline read for its
//     own threshold compare (mmu.h: "s < T before it is enqueued"), so the
//     RTL needs one counter read per packet for both, and no adder. The
//     same definition as DCTCP's "queue occupancy upon arrival > K" and as
//     RED's arrival-time queue. A packet of c cells arriving at a queue of
//     q cells is marked by a threshold K iff q > K, even if q + c > K.
//   - dequeue: what it leaves behind, the queue after its cells are
//     returned.
// In bytes, the same instants on the switch's per-queue byte counter.
//
// Counters are cumulative and never reset: a sampler keeps the previous
// snapshot and subtracts (operator-) for the mark ratio of an interval.
//
// Cost: O(1), no allocation.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "ecn/config.h"

namespace rocesim::ecn {

namespace codepoint {
inline constexpr uint8_t kNotEct = 0b00, kEct1 = 0b01, kEct0 = 0b10, kCe = 0b11;
}

// round(pmax * 2^32), half away from zero; 0 for pmax <= 0 or NaN, 2^32 for pmax >= 1.
uint64_t pmax_fixed(double pmax);

// The fixed-point WRED ramp (see the header comment).
struct WredRule {
  uint64_t kmin = 0, kmax = 0;
  uint64_t p32 = 0;  // round(Pmax * 2^32)

  // Kmin < q <= Kmax: the packet draws a random word.
  bool in_ramp(uint64_t q) const { return q > kmin && q <= kmax; }
  // For q in the ramp only.
  bool fires(uint64_t q, uint32_t rand32) const {
    return uint64_t(rand32) * (kmax - kmin) < (q - kmin) * p32;
  }
};

struct Decision {
  bool mark = false;        // rewrite the ECN field to CE (fired and ECT(0)/ECT(1))
  bool would_mark = false;  // the rule fired, whatever the codepoint
  bool ect = false;         // the packet was ECT(0) or ECT(1)
  bool drew = false;        // WRED consumed a random word (Kmin < q <= Kmax)
  uint32_t rand32 = 0;      // that word (0 when !drew), for the RTL in lockstep
  uint8_t ecn_out = 0;      // the codepoint after the decision (CE when mark)
};

struct Counters {
  uint64_t seen = 0;        // packets decided
  uint64_t ect_seen = 0;    // of which ECT(0) or ECT(1)
  uint64_t ce_seen = 0;     // of which already CE on arrival
  uint64_t marked = 0;      // ECT(0)/ECT(1) changed to CE
  uint64_t would_mark = 0;  // fired on a not-ECT or CE packet (left unchanged)
  uint64_t draws = 0;       // WRED random words consumed

  uint64_t fired() const { return marked + would_mark; }
  double mark_ratio() const { return seen ? double(marked) / double(seen) : 0.0; }
};
// Counts one decision with the packet's codepoint on arrival (ecn_in): what
// Marker::decide_with counts, also used to keep the counters of a queue
// manager whose decisions are made elsewhere (the RTL in rtl mode, tlm/qm).
void count(Counters& c, bool would_mark, bool drew, uint8_t ecn_in);
// Counts in (earlier, later]: both snapshots of the same marker.
Counters operator-(const Counters& later, const Counters& earlier);
bool operator==(const Counters& a, const Counters& b);

class Marker {
 public:
  // Throws std::invalid_argument with validate()'s messages, one per line.
  // rng: this marker's own stream (the switch seeds it from the run seed and
  // the queue's hierarchical name); only the wred mode draws from it.
  Marker(const MarkerConfig& config, core::Rng rng);
  // Without a stream of its own: only decide_with() (the caller supplies the words).
  explicit Marker(const MarkerConfig& config) : Marker(config, core::Rng(0, "")) {}

  // The operation (mirrored by the RTL). ecn is the 2-bit codepoint; a value
  // above 3 is a caller bug and throws std::invalid_argument.
  Decision decide(uint64_t queue_len, uint8_t ecn);
  // The same rule with the WRED word supplied: rand32 is used (Decision::drew)
  // iff the queue is in the ramp; the marker's own stream is not touched. The
  // queue manager (tlm/qm) decides this way, so that the RTL, given the same
  // word, decides the same; the caller advances its stream only on a draw.
  Decision decide_with(uint64_t queue_len, uint8_t ecn, uint32_t rand32);
  // Whether a decision at queue_len would use a word (wred and Kmin < q <= Kmax).
  bool draws_at(uint64_t queue_len) const {
    return m_config.mode == MarkerConfig::Mode::wred && m_wred.in_ramp(queue_len);
  }

  bool hysteresis_on() const { return m_hyst_on; }  // hysteresis flag now
  const Counters& counters() const { return m_ctr; }
  Counters snapshot() const { return m_ctr; }
  const MarkerConfig& config() const { return m_config; }
  const WredRule& wred() const { return m_wred; }

 private:
  MarkerConfig m_config;
  WredRule m_wred;
  core::Rng m_rng;
  bool m_hyst_on = false;
  Counters m_ctr;
};

}  // namespace rocesim::ecn

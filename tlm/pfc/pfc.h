// Priority-based flow control (IEEE 802.1Qbb): the pause receiver every MAC
// has, the XOFF/XON generator of a switch's lossless priority groups, the
// SONiC headroom formula, and the event log behind pfc.csv.
//
// Plain C++ with time as integer picoseconds: the MAC and the switch call in
// with the current time, and schedule their own wake-ups from next_change().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ring.h"

namespace rocesim::pfc {

inline constexpr int kPriorities = 8;
inline constexpr uint32_t kQuantumBits = 512;  // one pause quantum = 512 bit times (802.1Qbb)

// Picoseconds of `quanta` pause quanta at `rate_bps` (rounded up to a ps).
uint64_t quanta_ps(uint32_t quanta, uint64_t rate_bps);

// What the receiving side of one port knows about the pauses its peer sent.
// A PFC frame received with its last bit at t takes effect at t + response
// delay: for each priority in its class-enable vector, a timer of T quanta
// pauses that priority until then + T * 512 bit times; T = 0 resumes. A later
// frame replaces the earlier one's timer from its own effect time. The MAC
// stops a paused priority at the next frame boundary: callers ask
// paused_mask() only when choosing the next frame, never mid-frame.
class PauseReceiver {
 public:
  explicit PauseReceiver(uint64_t rate_bps = 100000000000ull, uint64_t response_delay_ps = 0)
      : m_rate(rate_bps), m_delay(response_delay_ps) {}

  // A PFC frame whose last bit arrived at now_ps.
  void on_frame(uint64_t now_ps, uint16_t class_enable, const uint16_t timers[kPriorities]);
  // Bit p set: priority p is paused at now_ps.
  uint8_t paused_mask(uint64_t now_ps) { return m_active ? paused_mask_slow(now_ps) : 0; }
  // The next time after now_ps at which the mask can change (a frame taking
  // effect, a timer expiring), or UINT64_MAX.
  uint64_t next_change(uint64_t now_ps);

  struct PrioStats {
    uint64_t frames = 0;           // PFC frames received with this priority enabled
    uint64_t pauses = 0;           // transitions from running to paused
    uint64_t paused_ps = 0;        // total time paused (up to the last update)
    uint64_t longest_ps = 0;       // longest single pause
  };
  // Statistics with the current pause accounted up to now_ps.
  PrioStats stats(int prio, uint64_t now_ps);
  // Pause transitions since the last call, for the event log: (time, prio, paused?).
  struct Transition {
    uint64_t t_ps;
    uint8_t prio;
    bool paused;
  };
  bool has_transitions() const { return !m_log.empty(); }
  template <typename F>
  void drain_transitions(F&& f) {
    while (!m_log.empty()) {
      f(m_log.front());
      m_log.pop_front();
    }
  }

 private:
  struct Update {
    uint64_t at_ps;      // when it takes effect
    uint64_t until_ps;   // paused until (== at_ps for a resume)
  };
  struct Prio {
    uint64_t until_ps = 0;     // paused while now < until
    bool paused = false;       // as of the last advance
    uint64_t since_ps = 0;     // start of the current pause
    core::Ring<Update> pending{4};
    PrioStats st;
  };
  uint8_t paused_mask_slow(uint64_t now_ps);
  // Applies pending updates and expiries up to now_ps, in time order.
  void advance(Prio& p, int prio, uint64_t now_ps);
  void set_state(Prio& p, int prio, bool paused, uint64_t t_ps);

  uint64_t m_rate, m_delay;
  std::array<Prio, kPriorities> m_prio;
  uint8_t m_active = 0;  // priorities paused or with pending updates (the common case is none)
  core::Ring<Transition> m_log{16};
};

// XOFF/XON decision of one (ingress port, PG), with hysteresis. Integer
// cells only (the RTL mirrors it): the caller passes the PG's shared and
// headroom use and the MMU's current threshold on its shared use.
//
// When it is evaluated (decision semantics, the same in the model and the
// RTL; docs/design.md "Decision semantics"):
//   - on every admit and release of the PG's own packets, with the PG's state
//     after that operation (Mmu::admit/release return it);
//   - on the PG's refresh tick while it is XOFF, with its state read at that
//     instant (Mmu::pg_state): when the XON rule holds then, the switch sends
//     XON instead of the refresh.
//   It is not evaluated when only other PGs of the pool change, although a
//   dynamic threshold moves with them. A hardware MMU compares a PG's
//   counters with its threshold when that PG's counters are updated (one
//   compare per operation); re-evaluating every XOFF PG of a pool on every
//   other PG's operation is a scan the per-cell pipeline cannot afford. The
//   refresh tick is the per-PG timer the hardware already has (it re-sends
//   the pause); evaluating there bounds how late a pool change is noticed to
//   one refresh period, and it is needed for liveness: an XOFF PG whose
//   packets have all left has no operation of its own any more (its sender
//   is paused), so a threshold that rose only because other PGs drained
//   would otherwise never release it, and the refresh would keep its sender
//   paused for ever. An XOFF that a pool change alone would cause is not
//   sent until the PG's next admit, the only time it takes buffer.
struct GeneratorConfig {
  bool dynamic_xoff = true;    // XOFF at the MMU's dynamic threshold; else at xoff_cells
  uint64_t xoff_cells = 0;     // static XOFF threshold on shared use
  // XON rule (SONiC), with X the XOFF level (the threshold, or xoff_cells):
  //   offset:   resume when shared + xon_offset_cells < X;
  //   absolute: resume when shared <= xon_cells;
  //   ratio:    resume when shared * 2^16 <= xon_ratio_q16 * X, i.e.
  //             shared <= floor(xon_ratio_q16 * X / 2^16), exact integers
  //             (the seed's "low = half of high" is xon_ratio_q16 = 32768).
  enum class XonRule : uint8_t { offset, absolute, ratio };
  XonRule xon_rule = XonRule::offset;
  uint64_t xon_offset_cells = 0;
  uint64_t xon_cells = 0;
  uint32_t xon_ratio_q16 = 0;  // ratio in units of 2^-16, 0 .. kXonRatioOne; see xon_ratio_fixed()
};
inline constexpr uint32_t kXonRatioOne = 1u << 16;
// A configured ratio in [0, 1] as xon_ratio_q16: floor(ratio * 2^16) (exact
// for the binary fractions 1/2, 1/4, 3/4, ...), clamped to [0, 2^16]. Floor,
// so the XON level never exceeds the configured fraction of the XOFF level:
// the hysteresis band is never narrower than asked. Config-time only.
uint32_t xon_ratio_fixed(double ratio);

class Generator {
 public:
  enum class Action : uint8_t { none, xoff, xon };
  // One evaluation: shared and headroom cells of the PG, the MMU's current
  // threshold on its shared use, and whether the packet just admitted went
  // into headroom (false on a release or a refresh tick).
  Action update(const GeneratorConfig& c, uint64_t shared, uint64_t headroom, uint64_t threshold, bool in_headroom);
  bool xoff() const { return m_xoff; }
  uint64_t transitions() const { return m_transitions; }

 private:
  bool m_xoff = false;
  uint64_t m_transitions = 0;
};

// Per-PG headroom in bytes by the SONiC dynamic headroom calculation. A
// configuration-time computation (its result is a per-PG constant the RTL is
// configured with, not a decision it mirrors), rounded up to a byte
// (sonic-buffermgrd, "Dynamic headroom calculation" design):
//   cable bytes  = cable delay * port speed / 8
//   peer response = quanta(speed) * 512 / 8, quanta 25G 80, 40G 118, 50G 147,
//                   100G 394, 200G 453, 400G 905 (interpolated by speed between)
//   propagation  = mtu + 2 * (cable bytes + gearbox bytes) + mac_phy_delay + peer response
//   xoff         = lossless_mtu + propagation * cell_occupancy
struct HeadroomInputs {
  uint64_t rate_bps = 100000000000ull;
  uint64_t cable_delay_ps = 10000;
  uint64_t mtu_bytes = 4096 + 82;          // the largest frame on the port
  uint64_t lossless_mtu_bytes = 4096 + 82; // the largest lossless frame
  uint64_t mac_phy_delay_bytes = 1024;
  uint64_t gearbox_bytes = 0;
  double cell_occupancy = 1.0;
};
uint64_t peer_response_quanta(uint64_t rate_bps);
uint64_t headroom_bytes(const HeadroomInputs& in);

// One row of pfc.csv.
struct Event {
  uint64_t t_ps;
  const char* node;  // the node's SystemC basename (outlives the log)
  uint32_t port;
  uint8_t prio;
  const char* what;  // "xoff", "xon", "pause_start", "pause_end", "storm_detected", "storm_restored"
};

}  // namespace rocesim::pfc

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

// XOFF/XON decision of one (ingress port, PG), with hysteresis. The MMU
// reports the PG's shared use and headroom use after every admit and release;
// the generator turns them into transitions.
struct GeneratorConfig {
  bool dynamic_xoff = true;    // XOFF at the MMU's dynamic threshold; else at xoff_cells
  uint64_t xoff_cells = 0;     // static XOFF threshold on shared use
  // XON rule (SONiC): resume when shared use falls below the XOFF threshold
  // minus xon_offset_cells, or to xon_cells when use_xon_absolute, or to
  // xon_ratio times the threshold when xon_ratio > 0 (the seed's "low = half of high").
  uint64_t xon_offset_cells = 0;
  bool use_xon_absolute = false;
  uint64_t xon_cells = 0;
  double xon_ratio = 0;
};

class Generator {
 public:
  enum class Action : uint8_t { none, xoff, xon };
  // After an MMU operation: shared and headroom cells of the PG, the MMU's
  // current threshold on its shared use, and whether the packet just admitted
  // went into headroom.
  Action update(const GeneratorConfig& c, uint64_t shared, uint64_t headroom, uint64_t threshold, bool in_headroom);
  bool xoff() const { return m_xoff; }
  uint64_t transitions() const { return m_transitions; }

 private:
  bool m_xoff = false;
  uint64_t m_transitions = 0;
};

// Per-PG headroom in bytes by the SONiC dynamic headroom calculation
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

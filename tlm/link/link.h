// A full-duplex cable between two MACs: each direction adds the propagation
// delay (length x delay per metre, exact in ps) and may lose frames with a
// configured probability (for loss-recovery experiments).
//
// Failures: the cable may be down over given intervals [from, until) of
// simulated time (a link failure and its repair, known from the scenario). A
// frame that is on the cable at any moment of one, from its first bit
// leaving the sender to its last bit arriving, is lost in both directions
// (counted under link_down). The check is made when the sender starts the
// frame, against the intervals, so a failure costs no event of its own.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "core/rng.h"
#include "link/ledger.h"
#include "link/protocol.h"

namespace rocesim::link {

struct LinkConfig {
  uint64_t rate_bps = 100000000000ull;  // both ends run at this rate
  uint64_t length_mm = 2000;            // cable length in millimetres
  uint64_t delay_per_m_ps = 5000;       // propagation, about 5 ns/m in fibre or copper
  double loss = 0.0;                    // probability a frame is lost, per direction
  // Propagation delay given outright (a topology file's per-link delay);
  // UINT64_MAX: length_mm x delay_per_m_ps.
  uint64_t fixed_delay_ps = UINT64_MAX;
  uint64_t delay_ps() const {
    return fixed_delay_ps != UINT64_MAX ? fixed_delay_ps : length_mm * delay_per_m_ps / 1000;
  }
};

class Link : public sc_core::sc_module {
 public:
  // Direction a->b: MAC a's tx binds to a_in; b_out binds to MAC b's rx. And back.
  pkt_target_socket a_in, b_in;
  pkt_initiator_socket a_out, b_out;

  Link(sc_core::sc_module_name name, const LinkConfig& cfg, Ledger& ledger, uint64_t seed);

  const LinkConfig& config() const { return m_cfg; }
  uint64_t frames(int dir) const { return (dir == 0 ? m_ab : m_ba).m_frames; }
  uint64_t lost(int dir) const { return m_lost[dir]; }
  // Frames lost because the cable was down (both directions' counts apart).
  uint64_t lost_down(int dir) const { return m_lost_down[dir]; }
  // The cable is down over [from_ps, until_ps) (until_ps = UINT64_MAX: for
  // good). Intervals may be added in any order before or during a run; one
  // that ends at or before it starts is refused (std::invalid_argument).
  void add_down(uint64_t from_ps, uint64_t until_ps);
  // Whether the cable is down at t_ps.
  bool down_at(uint64_t t_ps) const;

 private:
  // One direction's forward interface. What a frame on a plain cable (no loss, no down
  // intervals) needs is here, in one cache line: the far end's interface
  // (cached at the end of elaboration, as out-> would return it), the delay,
  // the ledger, the frame count (in a large fabric a cable is cold at each
  // frame: every line touched is a miss).
  class Dir : public PacketTargetBase, public PacketInitiatorBase {
   public:
    Dir(Link& l, int d) : m_link(l), m_ledger(l.m_ledger), m_delay(l.m_delay), m_dir(d) {}
    void b_transport(packet::Packet& p, sc_core::sc_time& delay) override;
   private:
    friend class Link;
    Link& m_link;
    Ledger& m_ledger;
    pkt_fw_if* m_out = nullptr;
    sc_core::sc_time m_delay;
    uint64_t m_frames = 0;
    int m_dir;
    bool m_plain = false;  // no loss configured and no down interval (set at the end of elaboration)
  };
  void end_of_elaboration() override;
  // A frame on a cable that may lose it: true when it is lost (and counted).
  bool lose(packet::Packet& p, const sc_core::sc_time& delay, int dir);
  // The far end's interface through the socket (before the end of elaboration caches it).
  pkt_fw_if* socket_out(int dir) { return (dir == 0 ? b_out : a_out).operator->(); }

  LinkConfig m_cfg;
  Ledger& m_ledger;
  core::Rng m_rng;
  sc_core::sc_time m_delay;
  Dir m_ab{*this, 0}, m_ba{*this, 1};
  uint64_t m_lost[2] = {0, 0};
  uint64_t m_lost_down[2] = {0, 0};
  std::vector<std::pair<uint64_t, uint64_t>> m_down;  // [from, until), sorted by from
  bool overlaps_down(uint64_t t0, uint64_t t1) const;
};

// Bind two MACs through a link.
class Mac;
void connect(Mac& a, Link& l, Mac& b);

}  // namespace rocesim::link

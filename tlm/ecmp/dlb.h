// Dynamic load balancing decisions for one ECMP group: which member a packet
// takes when the choice may depend on load. Pure C++17, explicit time in ps,
// no SystemC; the switch keeps one per group of more than one member when
// switch.ecmp.load_balancing is not static (docs/ecmp.md). The static hash
// (ecmp.h) stays the fallback and the tie-breaker.
//
// Utilization per member: a Discounting Rate Estimator (DRE, Alizadeh et
// al., "CONGA: Distributed Congestion-Aware Load Balancing for Datacenters",
// SIGCOMM 2014, section 3.2), as switch ASICs keep it: a register X of bytes,
// X += the frame's wire bytes when the member sends one, and every period T
// X -= X >> shift (alpha = 2^-shift). The decays are applied lazily, in
// order, for the periods elapsed since the last update (a frame sent in a
// period is added after that period's decay). X is an EWMA of the bytes per
// period with time constant tau = T x 2^shift (the `window`): at a constant
// rate r it settles between r tau (1 - alpha) / 8 and r tau / 8 bytes, so
//   utilization = 8 X / (rate x tau)
// reads within alpha below the true fraction of line rate (and 0 .. ~1.0).
//
// Flowlet table: 2^table_bits entries indexed by the low bits of the flow's
// hash (flows that collide share an entry, as in hardware flowlet tables).
// An entry holds the member its flowlet is on, the time of its last packet
// and the number of its packets still queued on that member (the caller
// reports each one leaving with dequeued()). For a packet of hash h at t:
//   1. The entry is live when it was used before and t - last < gap (the
//      flowlet timeout), or it still has packets queued on its member:
//      the packet stays on the entry's member. This second rule is what
//      keeps a lossless flow in order at this switch: a flow whose packets
//      sit in a (say PFC-paused) queue never moves however long the gap; a
//      gap longer than the largest difference in path delay downstream
//      keeps it in order beyond (the caller's choice of `gap`).
//   2. Otherwise (a new flowlet), the member is chosen by the mode:
//      - avoid_hot (the seed article's simple dynamic rehash): the hashed
//        member, unless its utilization is above `threshold`; then the
//        first member at or below it in group order after the hashed one
//        (wrapping); if all are above, the least utilized.
//      - flowlet: the least loaded member by `metric` (queued bytes as the
//        caller reports them, or the utilization), ties to the hashed
//        member, then to the lowest index.
//   3. A member that is down is never chosen, and an entry on a member that
//      went down is re-chosen at once (its queued packets are lost there).
//   mode off: always the hashed member (no table use).
//   spray_random, spray_round_robin (per-packet spraying, for comparison):
//   every packet takes a member of its own, uniformly at random (a
//   splitmix64 stream from the group's seed) or the next member up in turn;
//   no table, no order kept: RC receivers see the reordering.
// No allocation per packet: the table and the members are sized at
// construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::ecmp {

enum class DlbMode : uint8_t { off, avoid_hot, flowlet, spray_random, spray_round_robin };
enum class LoadMetric : uint8_t { queue_bytes, utilization };
// Names as the config spells them, in enum order: dlb_mode_names()[int(m)]
// (DlbMode::off is `static`), load_metric_names()[int(m)].
const std::vector<std::string>& dlb_mode_names();
const std::vector<std::string>& load_metric_names();

struct DlbConfig {
  DlbMode mode = DlbMode::off;
  uint64_t window_ps = 64000000;       // tau, the EWMA's time constant (64 us)
  uint32_t shift = 4;                  // alpha = 2^-shift; the DRE period is window >> shift
  double threshold = 0.8;              // avoid_hot: a member above this is hot
  uint64_t gap_ps = 100000000;         // the flowlet timeout (100 us)
  LoadMetric metric = LoadMetric::queue_bytes;
  uint32_t table_bits = 12;            // flowlet table entries: 2^table_bits
  // Empty when usable; otherwise one message per problem.
  std::vector<std::string> validate() const;
};

// The DRE of one member (above).
class Dre {
 public:
  Dre(uint64_t rate_bps, uint64_t window_ps, uint32_t shift);
  // A frame of `wire_bytes` (preamble, frame and IFG) sent at now_ps.
  void add(uint64_t now_ps, uint32_t wire_bytes);
  // The register at now_ps (decays of the periods up to now applied).
  uint64_t bytes(uint64_t now_ps) const;
  double utilization(uint64_t now_ps) const;

 private:
  uint64_t decayed(uint64_t now_ps) const;
  uint64_t m_rate_bps, m_window_ps, m_period_ps;
  uint32_t m_shift;
  uint64_t m_x = 0;
  uint64_t m_period_index = 0;  // the period of the last update
};

class FlowletGroup {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // One member per rate (its link's speed), all up; seed: spray_random's stream.
  FlowletGroup(const DlbConfig& c, const std::vector<uint64_t>& member_rates_bps, uint64_t seed = 0);

  struct Decision {
    uint32_t member = kNone;   // kNone: no member up
    uint32_t entry = kNone;    // flowlet entry to pass to dequeued() (kNone with mode off)
    bool moved = false;        // a new flowlet took a different member than the entry had
  };
  // The member for a packet of flow hash h whose static choice is `hashed`,
  // at now_ps; counts the packet as queued on it (pass d.entry to dequeued()).
  Decision choose(uint32_t h, uint32_t hashed, uint64_t now_ps);
  // A packet counted by choose() left its member's queue (sent or dropped).
  void dequeued(uint32_t entry);

  // Load inputs, kept current by the caller.
  void sent(uint32_t m, uint64_t now_ps, uint32_t wire_bytes) { m_dre[m].add(now_ps, wire_bytes); }
  void set_queue_bytes(uint32_t m, uint64_t bytes) { m_queue[m] = bytes; }
  void set_up(uint32_t m, bool up) { m_up[m] = up; }
  bool is_up(uint32_t m) const { return m_up[m] != 0; }
  double utilization(uint32_t m, uint64_t now_ps) const { return m_dre[m].utilization(now_ps); }
  uint32_t members() const { return static_cast<uint32_t>(m_up.size()); }

  struct Stats {
    uint64_t new_flowlets = 0;   // packets that started a flowlet (rule 2)
    uint64_t moves = 0;          // ... on a different member than the entry's last
    uint64_t held_queued = 0;    // packets past the gap kept on their member by rule 1 (queued packets)
    uint64_t avoided_hot = 0;    // avoid_hot: new flowlets steered off a hot hashed member
  };
  const Stats& stats() const { return m_stats; }
  // The entry's state (tests and path recording).
  uint32_t entry_member(uint32_t e) const { return m_table[e].member; }
  uint32_t entry_queued(uint32_t e) const { return m_table[e].queued; }

 private:
  struct Entry {
    uint64_t last_ps = 0;
    uint32_t member = kNone;   // kNone: never used
    uint32_t queued = 0;
  };
  uint32_t pick_new(uint32_t hashed, uint64_t now_ps);
  uint32_t spray();
  double load(uint32_t m, uint64_t now_ps) const;

  DlbConfig m_cfg;
  uint32_t m_mask;
  std::vector<Entry> m_table;
  std::vector<Dre> m_dre;
  std::vector<uint64_t> m_queue;
  std::vector<uint8_t> m_up;
  uint64_t m_rng;         // spray_random: splitmix64 state
  uint32_t m_rr = 0;      // spray_round_robin: the member sent to last
  Stats m_stats;
};

}  // namespace rocesim::ecmp

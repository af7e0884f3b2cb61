// Egress scheduler of one port: strict priority plus deficit weighted round
// robin (DWRR) over 8 queues, with optional token-bucket shapers per queue
// and per port. A pure, deterministic block: no SystemC, no randomness, time
// passed in as integer picoseconds. The caller owns the queues and tells the
// scheduler only the size of each head frame and which queues are paused.
//
// Use (once per frame boundary of the port):
//   int q = s.pick(heads, paused, now);    // -1: nothing may go now
//   if (q >= 0) { dequeue from q; s.sent(q, heads[q], now); }
//   else if ((t = s.next_eligible_ps(heads, paused, now)) != kNever) wake at t;
// A wake-up is needed only for shapers: a pause change or an arrival is an
// input change, after which the caller simply picks again.
//
// Inputs
//   head_bytes[q]: bytes of queue q's head frame, 0 when the queue is empty
//     or its head is not yet eligible (both count as empty: see DWRR below).
//     Must not exceed PortConfig::max_frame_bytes.
//   paused_mask bit q: queue q may not send (PFC XOFF on its priority).
//   now_ps: must not decrease from one call to the next.
//
// Choice at a pick. A queue is eligible when it has a head, is not paused and
// its own shaper (if any) holds >= head bytes.
//   1. Strict queues first: the eligible strict queue with the highest index
//      (7 beats 6 ...), as in the switch's former inline loop and in
//      802.1Q strict priority where a higher queue is a higher class.
//   2. Otherwise DWRR among the eligible DWRR queues (below).
//   3. Port shaper: the chosen queue's head must fit the port bucket, else
//      pick() returns -1 (no other queue is tried: a smaller frame must not
//      overtake the chosen one, which would distort the shares).
//   A pick that returns -1 changes no scheduling state except that empty
//   queues leave the DWRR list (deficit 0). So repeated picks while nothing
//   can go are harmless and next_eligible_ps() stays exact.
//
// DWRR (Shreedhar & Varghese, "Efficient fair queueing using deficit round
//   robin", SIGCOMM 1995), byte-accurate: an active list of backlogged,
//   eligible DWRR queues, served in order. When a queue's turn starts its
//   deficit += quantum; it sends while head <= deficit, each frame taking
//   deficit -= bytes; when its head exceeds its deficit its turn ends and it
//   moves to the tail keeping its deficit; a queue that empties leaves the
//   list and its deficit becomes 0 (an idle queue banks no credit). A queue
//   that becomes backlogged joins the tail with deficit 0. Several queues
//   joining at the same pick join in index order. With quanta >= the largest
//   frame (validate()) every turn sends at least one frame, so the byte
//   shares of saturated queues tend to quantum_i / sum(quanta), off by less
//   than one largest frame per queue at any time.
//   Strict traffic preempts DWRR only at frame boundaries (a pick) and leaves
//   the DWRR state untouched: the queue whose turn it was continues its turn
//   with the same deficit afterwards.
//
// Paused or shaper-blocked DWRR queues (the rule; PFC in 802.1Qbb pauses a
//   priority, and it must not come back with extra credit):
//   - A queue that is paused, or whose head does not fit its own shaper, at
//     a pick that returns a queue leaves the active list and keeps its
//     current deficit (it is not reset: the queue is not empty). If it was
//     in the middle of its turn, that turn ends.
//   - While out of the list it is given no turns, so it gains no quantum for
//     the rounds it misses.
//   - When it is eligible again it re-joins at the tail with the kept
//     deficit, and gets one quantum when its next turn starts. So in its
//     first turn after a pause it sends at most deficit-at-pause + quantum
//     bytes; after that the usual DRR bounds hold.
//   - If it empties while out of the list (frames discarded), its deficit
//     becomes 0 as for any empty queue.
//   Paused strict queues are simply skipped.
//
// Shapers (shaper.h): a queue shaper limits one queue, the port shaper all
//   frames of the port, strict ones included. sent() takes the frame's bytes
//   from both buckets.
//
// Cost: O(8) per call, no heap allocation; next_eligible_ps() O(8^2).
#pragma once

#include <array>
#include <cstdint>

#include "sched/config.h"
#include "sched/shaper.h"

namespace rocesim::sched {

using Heads = std::array<uint32_t, kQueues>;
inline constexpr uint64_t kNever = UINT64_MAX;

struct QueueCounters {
  uint64_t picks = 0;   // picks that returned this queue
  uint64_t frames = 0;  // sent() frames
  uint64_t bytes = 0;   // sent() bytes
  uint64_t turns = 0;   // DWRR turns started (quanta granted)
};

struct PortCounters {
  uint64_t picks = 0;                // picks that returned a queue
  uint64_t frames = 0, bytes = 0;    // sent()
  uint64_t idle_picks = 0;           // picks that returned -1 (incl. port shaper)
  uint64_t port_shaper_blocked = 0;  // of those, a queue was chosen but the port bucket was short
};

// The DWRR active list as the tests and reports see it.
struct DwrrList {
  std::array<uint8_t, kQueues> order{};  // order[0] has the current (or next) turn
  uint8_t size = 0;
  bool turn_open = false;  // order[0]'s turn has started (its quantum is added)
};

class Scheduler {
 public:
  // Throws std::invalid_argument with validate()'s messages, one per line.
  explicit Scheduler(const PortConfig& config);

  // The queue to send from now, or -1. A queue is returned only if its head
  // is non-zero and it is not paused. Throws std::invalid_argument if time
  // goes backwards or a head exceeds max_frame_bytes.
  int pick(const Heads& head_bytes, uint8_t paused_mask, uint64_t now_ps);

  // The caller transmits the frame the last pick() chose: q and bytes must be
  // that pick's queue and head_bytes[q] (else std::invalid_argument).
  // Charges the DWRR deficit and the queue and port shapers.
  void sent(int q, uint32_t bytes, uint64_t now_ps);

  // The earliest time >= now_ps at which pick() with the same inputs returns
  // a queue (now_ps if it would now), or kNever if none would ever (all
  // queues empty or paused). Exact to the picosecond while the inputs and
  // the scheduler are unchanged; picks returning -1 in between do not change
  // it.
  uint64_t next_eligible_ps(const Heads& head_bytes, uint8_t paused_mask, uint64_t now_ps) const;

  // State.
  uint64_t deficit(int q) const { return m_dwrr.deficit[check_q(q)]; }
  DwrrList dwrr_list() const { return m_dwrr.list; }
  uint64_t queue_tokens_bytes(int q, uint64_t t_ps) const { return m_qshaper[check_q(q)].bytes_at(t_ps); }
  uint64_t port_tokens_bytes(uint64_t t_ps) const { return m_pshaper.bytes_at(t_ps); }

  // Cumulative counters.
  const QueueCounters& counters(int q) const { return m_ctr[check_q(q)]; }
  const PortCounters& port_counters() const { return m_port; }

  const PortConfig& config() const { return m_cfg; }

 private:
  struct Dwrr {
    DwrrList list;
    std::array<uint64_t, kQueues> deficit{};
    uint8_t member = 0;  // mask of the queues in list
    uint8_t credit = 0;  // mask of the queues whose deficit may be non-zero
  };
  using Opened = std::array<uint32_t, kQueues>;  // turns started during one choice

  static size_t check_q(int q);
  // The backlogged queues (bit q: a frame at the head of queue q). Throws
  // std::invalid_argument on time going back or a head beyond
  // max_frame_bytes (the test here, the message out of line).
  uint8_t checked_backlog(const Heads& head_bytes, uint64_t now_ps, const char* what) const;
  [[noreturn, gnu::cold, gnu::noinline]] void fail_inputs(const Heads& head_bytes, uint64_t now_ps,
                                                          const char* what) const;
  // The backlogged queues that are not paused and whose own shaper holds their head.
  uint8_t eligible_mask(uint8_t backlogged, const Heads& head_bytes, uint8_t paused_mask, uint64_t t_ps) const;
  // The queue chosen among `eligible` (strict, then DWRR), ignoring the port
  // shaper; updates `d` as a pick returning that queue would. -1 if none.
  int choose(Dwrr& d, uint8_t eligible, uint8_t backlogged, const Heads& head_bytes, Opened* opened) const;
  // Empty queues leave the list, deficit 0.
  void drop_empty(Dwrr& d, uint8_t backlogged) const;

  // What a pick and its sent() read and write first, together (in a large
  // fabric a port's scheduler is cold at each pick: every line touched is a
  // miss): the DWRR state, the masks, the pending pick, the port's counters;
  // then the per-queue counters (one queue's per pick), the shapers (read
  // only where the masks say one is enabled), the configuration.
  Dwrr m_dwrr;
  uint64_t m_last_ps = 0;
  int m_pending = -1;  // the last pick's queue, until sent()
  uint32_t m_pending_bytes = 0;
  uint32_t m_max_frame = 0;  // m_cfg.max_frame_bytes
  uint8_t m_strict = 0;  // mask of strict queues
  uint8_t m_shaped = 0;  // mask of queues with a shaper
  bool m_port_shaped = false;  // the port shaper is enabled
  std::array<uint32_t, kQueues> m_quantum{};
  PortCounters m_port;
  std::array<QueueCounters, kQueues> m_ctr{};
  std::array<TokenBucket, kQueues> m_qshaper{};
  TokenBucket m_pshaper;
  PortConfig m_cfg;
};

}  // namespace rocesim::sched

// Run-time invariants of a built Fabric (`rocesim run --check-invariants`).
//
// The run is cut into slices of simulated time (kInvariantSlicePs); after
// each slice, and always at the end, check() looks at the whole model. SystemC
// methods run to completion, so between two slices every frame, cell and
// counter is in a consistent place. The checks, by name (the name is the
// first word of a violation's message):
//
//   packet-conservation  the ledger: sent == delivered + dropped + in flight,
//                        where in flight is what the switches, MACs (wire and
//                        FIFOs) and hosts hold (as Fabric::run counts it);
//   packet-pool          the packet pool's frames in use == in flight;
//   cell-accounting      per switch: the MMU's cells in use == the buffer's
//                        cells in use (total - free-list count) == the sum of
//                        its egress queues' cells; at every 64th check and at
//                        the end also the free-list count == the cells found
//                        by walking the free list;
//   queue-cells          per (switch, port, queue): the MMU's egress view of
//                        the queue == the queue's cells;
//   pg-cells             per switch: the sum of the MMU's ingress (port, PG)
//                        views == its cells in use;
//   queue-depth          per queue: packets enqueued - dequeued == depth, and
//                        per switch the MMU's admitted - released packets ==
//                        the packets in its queues;
//   counter-underflow    no counter has wrapped below zero: a 64-bit counter
//                        at or above 2^63, a 32-bit one at or above 2^31
//                        (ledger, switch queues and PGs, MMU buckets and
//                        pools, buffer, receive buffers, flow records);
//   flow-bytes           no flow has received more bytes than it sends;
//   rc-psn-order         RC receivers accept packets in PSN order: per QP the
//                        next expected packet index never goes back, the
//                        bytes received are exactly those of the packets
//                        before it (full MTU payloads, the message's last
//                        packet the rest), it is at most the packets the
//                        sender has sent, and at least those it has seen
//                        acknowledged.
//
// The first broken invariant ends the run: check() returns false and
// violation() says which invariant, where, when and with which values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::sim {

class Fabric;

// Simulated time between two checks: 10 us. The checks cost O(queues + PGs +
// flows) each (the free-list walk O(buffer cells), every 64th check), a few
// percent of the simulation's wall time on the leaf-spine (docs/robustness.md).
inline constexpr uint64_t kInvariantSlicePs = 10000000;

struct InvariantViolation {
  std::string invariant;  // e.g. "cell-accounting"
  std::string node;       // e.g. "leaf0", "h3", or "fabric" for the whole model
  std::string detail;     // the values that disagree
  uint64_t time_ps = 0;
  // "cell-accounting on leaf0 at 10000 ns: ..."
  std::string message() const;
};

class InvariantChecker {
 public:
  explicit InvariantChecker(const Fabric& f);

  // Checks every invariant now (final: also the O(cells) free-list walk).
  // False at the first violation, which violation() then describes; after a
  // violation it returns false without checking again.
  bool check(bool final);
  bool ok() const { return m_violation.invariant.empty(); }
  const InvariantViolation& violation() const { return m_violation; }
  uint64_t checks() const { return m_checks; }

 private:
  bool fail(const char* invariant, const std::string& node, const std::string& detail);
  bool check_ledger();
  bool check_switches(bool walk_free_list);
  bool check_hosts();
  bool check_flows();

  const Fabric& m_f;
  std::vector<uint64_t> m_last_next;  // per flow: the RC receiver's next expected index at the last check
  uint64_t m_checks = 0;
  InvariantViolation m_violation;
};

}  // namespace rocesim::sim

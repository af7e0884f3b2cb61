#include "sim/invariants.h"

#include <cinttypes>
#include <cstdio>

#include "core/time.h"
#include "sim/fabric.h"
#include "sim/outputs.h"

namespace rocesim::sim {

namespace {

constexpr uint64_t kNeg64 = uint64_t{1} << 63;  // a uint64 at or above this has wrapped below zero
constexpr uint64_t kNeg32 = uint64_t{1} << 31;  // likewise for the 32-bit counters

std::string u(uint64_t v) { return std::to_string(v); }

std::string queue_name(const char* node, uint32_t port, uint32_t q) {
  return std::string(node) + " port " + u(port) + " queue " + u(q);
}

}  // namespace

std::string InvariantViolation::message() const {
  return invariant + " on " + node + " at " + ps_to_ns_text(time_ps) + " ns: " + detail;
}

InvariantChecker::InvariantChecker(const Fabric& f) : m_f(f), m_last_next(f.flows().size(), 0) {}

bool InvariantChecker::fail(const char* invariant, const std::string& node, const std::string& detail) {
  m_violation.invariant = invariant;
  m_violation.node = node;
  m_violation.detail = detail;
  m_violation.time_ps = core::now_ps();
  return false;
}

bool InvariantChecker::check(bool final) {
  if (!ok()) return false;
  ++m_checks;
  return check_ledger() && check_switches(final || m_checks % 64 == 0) && check_hosts() && check_flows();
}

bool InvariantChecker::check_ledger() {
  const link::Ledger& l = m_f.ledger();
  // Frames in flight: what the hosts (with their MACs: FIFOs and the cable
  // into them) and the switches (pending admission, queued, staged, their
  // MACs) hold, as Fabric::run counts them.
  uint64_t held = 0;
  for (const auto& h : m_f.hosts()) held += h->frames_held();
  for (const auto& s : m_f.switches()) held += s->frames_held();
  for (const auto& [name, v] : {std::pair<const char*, uint64_t>{"sent", l.sent()},
                                {"delivered", l.delivered()},
                                {"dropped", l.dropped()}}) {
    if (v >= kNeg64) return fail("counter-underflow", "fabric", std::string("ledger ") + name + " = " + u(v));
  }
  // Every frame the model created is delivered, dropped with a reason, or
  // still somewhere in it (a queue, a FIFO, on a cable).
  if (l.sent() != l.delivered() + l.dropped() + held)
    return fail("packet-conservation", "fabric",
                "sent " + u(l.sent()) + " != delivered " + u(l.delivered()) + " + dropped " + u(l.dropped()) +
                    " + in flight " + u(held));
  uint64_t by_reason = 0;
  for (size_t r = 0; r < static_cast<size_t>(packet::DropReason::count_); ++r)
    by_reason += l.dropped(static_cast<packet::DropReason>(r));
  const uint64_t no_reason = l.dropped(packet::DropReason::none);
  if (no_reason != 0 || by_reason != l.dropped())
    return fail("packet-conservation", "fabric",
                u(no_reason) + " frames dropped without a reason; drops by reason sum to " + u(by_reason) +
                    ", total " + u(l.dropped()));
  if (l.alive() != held)
    return fail("packet-pool", "fabric",
                "packet pool holds " + u(l.alive()) + " frames, the model " + u(held) + " (sent " + u(l.sent()) +
                    ", delivered " + u(l.delivered()) + ", dropped " + u(l.dropped()) + ")");
  return true;
}

bool InvariantChecker::check_switches(bool walk_free_list) {
  for (const auto& sp : m_f.switches()) {
    const sw::Switch& s = *sp;
    const char* node = s.basename();
    const mmu::Mmu& m = s.mmu();
    const qm::QueueManager& b = s.qm_model();
    const uint32_t total = b.total_cells();
    const uint32_t free = s.queue_manager().free_cells();  // the RTL's in rtl mode
    if (free > total)
      return fail("counter-underflow", node, "buffer free cells " + u(free) + " > total cells " + u(total));
    if (m.total_used() >= kNeg32)
      return fail("counter-underflow", node, "MMU cells in use = " + u(m.total_used()));
    for (size_t i = 0; i < m.pools(); ++i)
      if (m.pool(i).used >= kNeg32)
        return fail("counter-underflow", node, "MMU pool " + u(i) + " used = " + u(m.pool(i).used));
    if (m.headroom_pool_used() >= kNeg32)
      return fail("counter-underflow", node, "MMU headroom pool used = " + u(m.headroom_pool_used()));
    const uint32_t buffer_used = total - free;
    if (m.total_used() != buffer_used)
      return fail("cell-accounting", node,
                  "MMU cells in use " + u(m.total_used()) + " != buffer cells in use " + u(buffer_used) + " (" +
                      u(total) + " cells, " + u(free) + " on the free list)");

    uint64_t queue_cells = 0, queue_packets = 0, pg_cells = 0;
    for (uint32_t p = 0; p < s.num_ports(); ++p) {
      for (uint32_t q = 0; q < 8; ++q) {
        const sw::QueueStats& qs = s.queue_stats(p, q);
        for (const auto& [name, v] :
             {std::pair<const char*, uint64_t>{"enq_packets", qs.enq_packets}, {"enq_bytes", qs.enq_bytes},
              {"deq_packets", qs.deq_packets}, {"deq_bytes", qs.deq_bytes}, {"depth_bytes", qs.depth_bytes}}) {
          if (v >= kNeg64) return fail("counter-underflow", queue_name(node, p, q), std::string(name) + " = " + u(v));
        }
        for (const auto& [name, v] : {std::pair<const char*, uint64_t>{"depth_packets", qs.depth_packets},
                                      {"depth_cells", qs.depth_cells}}) {
          if (v >= kNeg32) return fail("counter-underflow", queue_name(node, p, q), std::string(name) + " = " + u(v));
        }
        if (qs.enq_packets - qs.deq_packets != qs.depth_packets || qs.enq_bytes - qs.deq_bytes != qs.depth_bytes)
          return fail("queue-depth", queue_name(node, p, q),
                      "enqueued " + u(qs.enq_packets) + " - dequeued " + u(qs.deq_packets) + " packets != depth " +
                          u(qs.depth_packets) + ", or enqueued " + u(qs.enq_bytes) + " - dequeued " +
                          u(qs.deq_bytes) + " bytes != depth " + u(qs.depth_bytes));
        const mmu::QueueState qm = m.queue_state(static_cast<uint16_t>(p), static_cast<uint8_t>(q));
        if (qm.reserved >= kNeg32 || qm.shared >= kNeg32)
          return fail("counter-underflow", queue_name(node, p, q),
                      "MMU queue reserved " + u(qm.reserved) + ", shared " + u(qm.shared));
        if (qm.total() != qs.depth_cells)
          return fail("queue-cells", queue_name(node, p, q),
                      "MMU egress cells " + u(qm.total()) + " (reserved " + u(qm.reserved) + " + shared " +
                          u(qm.shared) + ") != queue cells " + u(qs.depth_cells));
        queue_cells += qs.depth_cells;
        queue_packets += qs.depth_packets;
        const mmu::PgState pg = m.pg_state(static_cast<uint16_t>(p), static_cast<uint8_t>(q));
        if (pg.reserved >= kNeg32 || pg.shared >= kNeg32 || pg.headroom >= kNeg32)
          return fail("counter-underflow", std::string(node) + " port " + u(p) + " PG " + u(q),
                      "MMU PG reserved " + u(pg.reserved) + ", shared " + u(pg.shared) + ", headroom " +
                          u(pg.headroom));
        pg_cells += pg.total();
      }
    }
    if (queue_cells != m.total_used())
      return fail("cell-accounting", node,
                  "cells in its queues " + u(queue_cells) + " != MMU cells in use " + u(m.total_used()) +
                      " (buffer cells in use " + u(buffer_used) + ")");
    if (pg_cells != m.total_used())
      return fail("pg-cells", node,
                  "MMU ingress (port, PG) cells sum to " + u(pg_cells) + " != MMU cells in use " +
                      u(m.total_used()));
    if (m.admitted_packets() < m.released_packets() ||
        m.admitted_packets() - m.released_packets() != queue_packets)
      return fail("queue-depth", node,
                  "MMU admitted " + u(m.admitted_packets()) + " - released " + u(m.released_packets()) +
                      " packets != packets in its queues " + u(queue_packets));
    // The walk follows the C++ model's pointers; in rtl mode the RTL holds them (not walked).
    if (walk_free_list && !s.rtl_counts()) {
      const uint32_t walked = b.free_list_length();
      if (walked != free)
        return fail("cell-accounting", node,
                    "free-list count " + u(free) + " != cells on the free list " +
                        (walked > total ? "(a cycle: more than " + u(total) + ")" : u(walked)));
    }
  }
  return true;
}

bool InvariantChecker::check_hosts() {
  for (const auto& h : m_f.hosts()) {
    if (h->rx_buffer_level() >= kNeg64)
      return fail("counter-underflow", h->basename(), "receive buffer level = " + u(h->rx_buffer_level()) + " bytes");
  }
  return true;
}

bool InvariantChecker::check_flows() {
  const auto& hosts = m_f.hosts();
  const bool rc = m_f.scenario().hosts.rc;
  for (const host::FlowRecord& f : m_f.flows()) {
    // Names for a message, built only when one is needed.
    auto node = [&] { return "h" + u(f.dst); };
    auto flow = [&] { return "flow " + u(f.id) + " (h" + u(f.src) + " -> h" + u(f.dst) + ")"; };
    for (const auto& [name, v] : {std::pair<const char*, uint64_t>{"bytes_sent", f.bytes_sent},
                                  {"packets_sent", f.packets_sent},
                                  {"wire_bytes_sent", f.wire_bytes_sent},
                                  {"bytes_received", f.bytes_received},
                                  {"packets_received", f.packets_received},
                                  {"psn_errors", f.psn_errors},
                                  {"messages_received", f.messages_received},
                                  {"retransmitted", f.retransmitted},
                                  {"timeouts", f.timeouts},
                                  {"naks_received", f.naks_received},
                                  {"cnps_received", f.cnps_received},
                                  {"cnps_sent", f.cnps_sent}}) {
      if (v >= kNeg64) return fail("counter-underflow", node(), flow() + " " + name + " = " + u(v));
    }
    if (f.bytes_received > f.total_bytes())
      return fail("flow-bytes", node(),
                  flow() + " received " + u(f.bytes_received) + " bytes of " + u(f.total_bytes()));
    if (!rc) continue;
    uint64_t next = 0, high_sent = 0, acked = 0;
    if (!hosts[f.dst]->rc_received(f, next) || !hosts[f.src]->rc_sent(f, high_sent, acked)) continue;
    // Packets of a message carry mtu payload bytes each but the last, which
    // carries the rest (IBTA segmentation): the first `next` packets of the
    // flow hold this many bytes.
    const uint64_t mtu = hosts[f.dst]->config().mtu;
    const uint64_t ppm = (f.message_bytes + mtu - 1) / mtu;
    const uint64_t prefix = ppm ? next / ppm * f.message_bytes + next % ppm * mtu : 0;
    if (next < m_last_next[f.id])
      return fail("rc-psn-order", node(),
                  flow() + " QP " + u(f.dst_qp) + ": next expected packet " + u(next) + " went back from " +
                      u(m_last_next[f.id]));
    if (f.bytes_received != prefix)
      return fail("rc-psn-order", node(),
                  flow() + " QP " + u(f.dst_qp) + ": bytes received " + u(f.bytes_received) +
                      " != the first " + u(next) + " packets' " + u(prefix) + " bytes");
    if (next > high_sent)
      return fail("rc-psn-order", node(),
                  flow() + " QP " + u(f.dst_qp) + ": accepted " + u(next) + " packets, the sender sent " +
                      u(high_sent));
    if (acked > next)
      return fail("rc-psn-order", node(),
                  flow() + " QP " + u(f.dst_qp) + ": the sender saw " + u(acked) + " packets acknowledged, " +
                      "the receiver accepted " + u(next));
    m_last_next[f.id] = next;
  }
  return true;
}

}  // namespace rocesim::sim

// The packet ledger: every frame the model creates is counted as sent, and
// leaves the model exactly once, as delivered or as dropped with a reason.
// At the end of a run, sent == delivered + dropped + in flight must hold.
#pragma once

#include <array>
#include <cstdint>

#include <systemc>

#include "core/time.h"
#include "packet/packet.h"

namespace rocesim::link {

class Ledger {
 public:
  explicit Ledger(packet::PacketPool& pool) : m_pool(pool) {}

  packet::PacketPool& pool() { return m_pool; }

  // A new frame enters the model (from the pool, counted as sent).
  packet::Packet* create() {
    packet::Packet* p = m_pool.acquire();
    p->id = ++m_sent;
    return p;
  }
  // The frame reached its final consumer.
  void deliver(packet::Packet* p) {
    ++m_delivered;
    // Progress means data, not pause frames (a PFC storm is no progress).
    if (p->meta.kind != packet::FrameKind::pfc) m_last_delivery_ps = core::now_ps();
    m_pool.release(p);
  }
  void drop(packet::Packet* p, packet::DropReason why) {
    ++m_dropped[static_cast<size_t>(why)];
    ++m_dropped_total;
    m_pool.release(p);
  }
  void count_hop() { ++m_link_hops; }
  void count_event() { ++m_events; }

  uint64_t sent() const { return m_sent; }
  uint64_t delivered() const { return m_delivered; }
  uint64_t dropped() const { return m_dropped_total; }
  uint64_t dropped(packet::DropReason why) const { return m_dropped[static_cast<size_t>(why)]; }
  uint64_t link_hops() const { return m_link_hops; }
  uint64_t last_delivery_ps() const { return m_last_delivery_ps; }
  uint64_t events() const { return m_events; }
  // Frames alive in the model according to the pool.
  uint64_t alive() const { return m_pool.in_use(); }

 private:
  packet::PacketPool& m_pool;
  uint64_t m_last_delivery_ps = 0;
  uint64_t m_sent = 0, m_delivered = 0, m_dropped_total = 0, m_link_hops = 0, m_events = 0;
  std::array<uint64_t, static_cast<size_t>(packet::DropReason::count_)> m_dropped{};
};

}  // namespace rocesim::link

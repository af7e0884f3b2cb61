// PFC control: pause frames on the queue manager's XOFF/XON transitions,
// their refresh while a PG stays XOFF (with the XON check at each tick), and
// the PFC watchdog on egress queues.
#include <algorithm>
#include <functional>

#include "packet/build.h"
#include "switch/switch.h"

namespace rocesim::sw {

using namespace sc_core;
namespace pk = rocesim::packet;

void Switch::pfc_action(uint32_t port, uint8_t pg, qm::PfcAction a) {
  if (a == qm::PfcAction::xoff) send_pause(port, pg, true);
  if (a == qm::PfcAction::xon) send_pause(port, pg, false);
}

void Switch::send_pause(uint32_t port, uint8_t pg, bool xoff, bool refresh) {
  const uint8_t prios = m_pg_prios[pg];
  if (!refresh) {  // a transition: count and log it per priority
    for (int p = 0; p < 8; ++p) {
      if (!(prios >> p & 1)) continue;
      ++(xoff ? m_pfc_stats[port].xoff : m_pfc_stats[port].xon)[p];
      if (m_log) m_log->push_back(pfc::Event{core::now_ps(), basename(), port, static_cast<uint8_t>(p), xoff ? "xoff" : "xon"});
    }
    if (m_trace && m_trace->pg_xoff[port * 8 + pg] != link::kNoTrace)
      m_trace->rec->set(m_trace->pg_xoff[port * 8 + pg], core::now_ps(), xoff);
  }
  uint16_t timers[8] = {};
  for (int p = 0; p < 8; ++p)
    if (prios >> p & 1) timers[p] = xoff ? m_cfg.pfc.pause_quanta : 0;
  pk::Packet* f = m_ledger.create();
  pk::build_pfc(*f, port < m_cfg.port_macs.size() ? m_cfg.port_macs[port] : 0x028000000000ull | port, prios, timers);
  f->created_ps = core::now_ps();
  ports[port]->send_control(f);
  if (!xoff) return;
  // Keep the peer paused: re-send before its timer runs out.
  const uint64_t t = core::now_ps() + m_refresh_ps[port];
  const bool earliest = m_refresh.empty() || t < m_refresh.front().first;
  m_refresh.emplace_back(t, port * 8 + pg);
  std::push_heap(m_refresh.begin(), m_refresh.end(), std::greater<>());
  if (earliest) m_refresh_ev.at(t);
}

void Switch::on_refresh() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_refresh.empty() && m_refresh.front().first <= now) {
    std::pop_heap(m_refresh.begin(), m_refresh.end(), std::greater<>());
    const uint32_t key = m_refresh.back().second;
    m_refresh.pop_back();
    // Only the newest schedule of a PG that is still XOFF re-sends (an XON in
    // between ends the refreshes; a new XOFF scheduled its own).
    const uint16_t port = static_cast<uint16_t>(key / 8);
    const uint8_t pg = static_cast<uint8_t>(key % 8);
    if (!m_qm->xoff(port, pg)) continue;
    bool newer = false;
    for (const auto& r : m_refresh) newer |= r.second == key;
    if (newer) continue;
    // The refresh tick re-evaluates XON on the PG's state now (pfc.h: a
    // dynamic threshold may have risen because other PGs drained, and an
    // XOFF PG with nothing left has no operation of its own to resume on).
    if (m_qm->pfc_tick(port, pg) == qm::PfcAction::xon) {
      send_pause(port, pg, false);
      continue;
    }
    ++m_pfc_stats[key / 8].refreshes;
    send_pause(key / 8, static_cast<uint8_t>(key % 8), true, true);
  }
  if (!m_refresh.empty()) m_refresh_ev.at(m_refresh.front().first);
}

void Switch::flush_queue(uint32_t qi, pk::DropReason why) {
  while (pk::Packet* p = m_qlist[qi].head) {
    buffer.detach(p->queue_cell);  // the packet goes back to the pool unread: the cell keeps its bytes
    dequeue(qi, *p, true);
    drop(p, why, qi);
  }
}

void Switch::on_watchdog() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  const PfcConfig& c = m_cfg.pfc;
  for (uint32_t port = 0; port < ports.size(); ++port) {
    const uint8_t paused = queues_of(ports[port]->paused_mask());
    for (uint32_t q = 0; q < 8; ++q) {
      const uint32_t qi = port * 8 + q;
      Wd& w = m_wd[qi];
      const QueueStats& qs = m_qstats[qi];
      const bool is_paused = paused >> q & 1;
      const uint8_t q_prios = m_queue_prios[q];
      auto log = [&](const char* what) {
        if (!m_log) return;
        for (int p = 0; p < 8; ++p)
          if (q_prios >> p & 1) m_log->push_back(pfc::Event{now, basename(), port, static_cast<uint8_t>(p), what});
      };
      if (!w.stormed) {
        if (!is_paused || qs.depth_packets == 0 || qs.deq_packets != w.deq_at_check) {
          w.stuck_since = is_paused && qs.depth_packets ? now : UINT64_MAX;
          w.deq_at_check = qs.deq_packets;
          continue;
        }
        if (w.stuck_since == UINT64_MAX) w.stuck_since = now;
        if (now - w.stuck_since < c.wd_detection_ps) continue;
        // Paused, holding packets, and nothing sent for the detection time: a storm.
        w.stormed = true;
        w.free_since = UINT64_MAX;
        ++m_wd_events;
        ++m_pfc_stats[port].storms;
        log("storm_detected");
        if (c.wd_drop) flush_queue(qi, pk::DropReason::pfc_watchdog);
        ports[port]->kick();
        continue;
      }
      if (c.wd_drop) flush_queue(qi, pk::DropReason::pfc_watchdog);
      if (is_paused) {
        w.free_since = UINT64_MAX;
        continue;
      }
      if (w.free_since == UINT64_MAX) w.free_since = now;
      if (now - w.free_since < c.wd_restoration_ps) continue;
      w.stormed = false;
      w.stuck_since = UINT64_MAX;
      w.deq_at_check = qs.deq_packets;
      log("storm_restored");
    }
  }
  m_wd_ev.at(now + c.wd_poll_ps);
}

}  // namespace rocesim::sw

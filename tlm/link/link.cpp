#include "link/link.h"

#include "core/time.h"
#include "link/mac.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rocesim::link {

using namespace sc_core;

Link::Link(sc_module_name name, const LinkConfig& cfg, Ledger& ledger, uint64_t seed)
    : sc_module(name),
      a_in("a_in"),
      b_in("b_in"),
      a_out("a_out"),
      b_out("b_out"),
      m_cfg(cfg),
      m_ledger(ledger),
      m_rng(seed, std::string(this->name())),
      m_delay(core::ps(cfg.delay_ps())) {
  a_in.bind(static_cast<pkt_fw_if&>(m_ab));
  b_out.bind(static_cast<pkt_bw_if&>(m_ab));
  b_in.bind(static_cast<pkt_fw_if&>(m_ba));
  a_out.bind(static_cast<pkt_bw_if&>(m_ba));
}

void Link::add_down(uint64_t from_ps, uint64_t until_ps) {
  if (until_ps <= from_ps)
    throw std::invalid_argument(std::string(name()) + ": a down interval must end after it starts (" +
                                std::to_string(from_ps) + " ps .. " + std::to_string(until_ps) + " ps)");
  m_down.emplace_back(from_ps, until_ps);
  std::sort(m_down.begin(), m_down.end());
  m_ab.m_plain = m_ba.m_plain = false;
}

void Link::end_of_elaboration() {
  // Bound by now (SystemC checks the binding before this callback).
  m_ab.m_out = socket_out(0);
  m_ba.m_out = socket_out(1);
  m_ab.m_plain = m_ba.m_plain = m_cfg.loss == 0.0 && m_down.empty();
}

bool Link::down_at(uint64_t t) const { return overlaps_down(t, t); }

bool Link::overlaps_down(uint64_t t0, uint64_t t1) const {
  // [from, until) meets [t0, t1] (t1 inclusive: the last bit's arrival).
  for (const auto& [from, until] : m_down)
    if (from <= t1 && until > t0) return true;
  return false;
}

bool Link::lose(packet::Packet& p, const sc_time& delay, int dir) {
  if (!m_down.empty()) {
    // On the cable from its first bit leaving (now) to its last bit arriving.
    const uint64_t t0 = core::now_ps();
    if (overlaps_down(t0, t0 + core::to_ps(delay) + m_cfg.delay_ps())) {
      ++m_lost_down[dir];
      m_ledger.drop(&p, packet::DropReason::link_down);
      return true;
    }
  }
  // Draw only when loss is configured, so enabling it elsewhere does not shift this stream.
  if (m_cfg.loss > 0.0 && m_rng.bernoulli(m_cfg.loss)) {
    ++m_lost[dir];
    m_ledger.drop(&p, packet::DropReason::link_loss);
    return true;
  }
  return false;
}

void Link::Dir::b_transport(packet::Packet& p, sc_time& delay) {
  ++m_frames;
  if (!m_plain && m_link.lose(p, delay, m_dir)) return;
  m_ledger.count_hop();
  delay += m_delay;
  (m_out ? m_out : m_link.socket_out(m_dir))->b_transport(p, delay);
}

void connect(Mac& a, Link& l, Mac& b) {
  a.tx.bind(l.a_in);
  l.b_out.bind(b.rx);
  b.tx.bind(l.b_in);
  l.a_out.bind(a.rx);
}

}  // namespace rocesim::link

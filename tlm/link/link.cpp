#include "link/link.h"

#include "core/time.h"
#include "link/mac.h"

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

void Link::Dir::b_transport(packet::Packet& p, sc_time& delay) {
  Link& l = m_link;
  ++l.m_frames[m_dir];
  // Draw only when loss is configured, so enabling it elsewhere does not shift this stream.
  if (l.m_cfg.loss > 0.0 && l.m_rng.bernoulli(l.m_cfg.loss)) {
    ++l.m_lost[m_dir];
    l.m_ledger.drop(&p, packet::DropReason::link_loss);
    return;
  }
  l.m_ledger.count_hop();
  delay += l.m_delay;
  (m_dir == 0 ? l.b_out : l.a_out)->b_transport(p, delay);
}

void connect(Mac& a, Link& l, Mac& b) {
  a.tx.bind(l.a_in);
  l.b_out.bind(b.rx);
  b.tx.bind(l.b_in);
  l.a_out.bind(a.rx);
}

}  // namespace rocesim::link

#include "ecmp/dlb.h"

namespace rocesim::ecmp {

const std::vector<std::string>& dlb_mode_names() {
  static const std::vector<std::string> v{"static", "avoid_hot", "flowlet", "spray_random", "spray_round_robin"};
  return v;
}
const std::vector<std::string>& load_metric_names() {
  static const std::vector<std::string> v{"queue_bytes", "utilization"};
  return v;
}

std::vector<std::string> DlbConfig::validate() const {
  std::vector<std::string> e;
  if (shift < 1 || shift > 16) e.push_back("shift " + std::to_string(shift) + " is outside 1 .. 16");
  if ((window_ps >> (shift > 63 ? 63 : shift)) == 0) e.push_back("window shorter than 2^shift ps: no DRE period");
  if (!(threshold >= 0.0 && threshold <= 1.0)) e.push_back("threshold is outside 0 .. 1");
  if (table_bits < 1 || table_bits > 20) e.push_back("table_bits " + std::to_string(table_bits) + " is outside 1 .. 20");
  return e;
}

Dre::Dre(uint64_t rate_bps, uint64_t window_ps, uint32_t shift)
    : m_rate_bps(rate_bps), m_window_ps(window_ps), m_period_ps(window_ps >> shift), m_shift(shift) {}

uint64_t Dre::decayed(uint64_t now_ps) const {
  const uint64_t p = now_ps / m_period_ps;
  uint64_t x = m_x;
  // X -= X >> shift once per period boundary passed; below 2^shift it no longer changes.
  for (uint64_t k = m_period_index; k < p && (x >> m_shift) != 0; ++k) x -= x >> m_shift;
  return x;
}

void Dre::add(uint64_t now_ps, uint32_t wire_bytes) {
  m_x = decayed(now_ps);
  m_period_index = now_ps / m_period_ps;
  m_x += wire_bytes;
}

uint64_t Dre::bytes(uint64_t now_ps) const { return decayed(now_ps); }

double Dre::utilization(uint64_t now_ps) const {
  // 8 X / (rate x tau), tau in ps.
  return 8.0 * static_cast<double>(decayed(now_ps)) * 1e12 /
         (static_cast<double>(m_rate_bps) * static_cast<double>(m_window_ps));
}

FlowletGroup::FlowletGroup(const DlbConfig& c, const std::vector<uint64_t>& rates, uint64_t seed)
    : m_cfg(c),
      m_mask((1u << c.table_bits) - 1),
      m_table(c.mode == DlbMode::avoid_hot || c.mode == DlbMode::flowlet ? size_t(1) << c.table_bits : 0),
      m_queue(rates.size(), 0),
      m_up(rates.size(), 1),
      m_rng(seed),
      m_rr(static_cast<uint32_t>(rates.size()) - 1) {
  m_dre.reserve(rates.size());
  for (uint64_t r : rates) m_dre.emplace_back(r, c.window_ps, c.shift);
}

double FlowletGroup::load(uint32_t m, uint64_t now_ps) const {
  return m_cfg.metric == LoadMetric::queue_bytes ? static_cast<double>(m_queue[m]) : m_dre[m].utilization(now_ps);
}

uint32_t FlowletGroup::pick_new(uint32_t hashed, uint64_t now_ps) {
  const uint32_t n = members();
  if (m_cfg.mode == DlbMode::avoid_hot) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t m = (hashed + i) % n;
      if (m_up[m] && m_dre[m].utilization(now_ps) <= m_cfg.threshold) {
        if (i) ++m_stats.avoided_hot;
        return m;
      }
    }
    // Every member up is hot: the least utilized (the hashed one on a tie).
  }
  const bool util = m_cfg.mode == DlbMode::avoid_hot;
  auto L = [&](uint32_t m) { return util ? m_dre[m].utilization(now_ps) : load(m, now_ps); };
  uint32_t best = hashed < n && m_up[hashed] ? hashed : kNone;
  for (uint32_t m = 0; m < n; ++m) {
    if (!m_up[m]) continue;
    if (best == kNone || L(m) < L(best)) best = m;
  }
  if (m_cfg.mode == DlbMode::avoid_hot && best != hashed && best != kNone) ++m_stats.avoided_hot;
  return best;
}

uint32_t FlowletGroup::spray() {
  const uint32_t n = members();
  uint32_t up = 0;
  for (uint8_t u : m_up) up += u;
  if (up == 0) return kNone;
  if (m_cfg.mode == DlbMode::spray_round_robin) {
    do m_rr = (m_rr + 1) % n;
    while (!m_up[m_rr]);
    return m_rr;
  }
  // splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
  // generators", OOPSLA 2014), then the k-th member up, k uniform by
  // Lemire's multiply-shift (bias below 2^-32 for these group sizes).
  uint64_t z = (m_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  uint32_t k = static_cast<uint32_t>(((z >> 32) * up) >> 32);
  for (uint32_t m = 0; m < n; ++m)
    if (m_up[m] && k-- == 0) return m;
  return kNone;  // not reached
}

FlowletGroup::Decision FlowletGroup::choose(uint32_t h, uint32_t hashed, uint64_t now_ps) {
  Decision d;
  if (m_cfg.mode == DlbMode::off) {
    d.member = hashed < members() && m_up[hashed] ? hashed : kNone;
    return d;
  }
  if (m_cfg.mode == DlbMode::spray_random || m_cfg.mode == DlbMode::spray_round_robin) {
    d.member = spray();
    return d;
  }
  const uint32_t e = h & m_mask;
  Entry& E = m_table[e];
  const bool used = E.member != kNone && m_up[E.member];
  const bool in_gap = used && now_ps - E.last_ps < m_cfg.gap_ps;
  if (used && (in_gap || E.queued > 0)) {
    if (!in_gap) ++m_stats.held_queued;
  } else {
    const uint32_t m = pick_new(hashed, now_ps);
    if (m == kNone) return d;
    ++m_stats.new_flowlets;
    if (E.member != kNone && E.member != m) {
      d.moved = true;
      ++m_stats.moves;
    }
    E.member = m;
  }
  E.last_ps = now_ps;
  ++E.queued;
  d.member = E.member;
  d.entry = e;
  return d;
}

void FlowletGroup::dequeued(uint32_t entry) {
  if (entry < m_table.size() && m_table[entry].queued) --m_table[entry].queued;
}

}  // namespace rocesim::ecmp

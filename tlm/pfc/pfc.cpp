#include "pfc/pfc.h"

#include <algorithm>
#include <cmath>

namespace rocesim::pfc {

uint64_t quanta_ps(uint32_t quanta, uint64_t rate_bps) {
  const unsigned __int128 num = static_cast<unsigned __int128>(quanta) * kQuantumBits * 1000000000000ull;
  return static_cast<uint64_t>((num + rate_bps - 1) / rate_bps);
}

void PauseReceiver::set_state(Prio& p, int prio, bool paused, uint64_t t_ps) {
  if (paused == p.paused) return;
  if (paused) {
    p.since_ps = t_ps;
    ++p.st.pauses;
  } else {
    const uint64_t d = t_ps - p.since_ps;
    p.st.paused_ps += d;
    p.st.longest_ps = std::max(p.st.longest_ps, d);
  }
  p.paused = paused;
  m_log.push_back(Transition{t_ps, static_cast<uint8_t>(prio), paused});
}

void PauseReceiver::advance(Prio& p, int prio, uint64_t now_ps) {
  for (;;) {
    const uint64_t t_pend = p.pending.empty() ? UINT64_MAX : p.pending.front().at_ps;
    const uint64_t t_exp = p.paused ? p.until_ps : UINT64_MAX;
    const uint64_t t = std::min(t_pend, t_exp);
    if (t > now_ps) {
      if (t == UINT64_MAX) m_active &= static_cast<uint8_t>(~(1u << prio));  // idle again
      return;
    }
    if (t_exp <= t_pend) {
      set_state(p, prio, false, p.until_ps);  // the timer ran out
      continue;
    }
    const Update u = p.pending.front();
    p.pending.pop_front();
    p.until_ps = u.until_ps;
    // A timer > 0 (re)starts the pause from its effect time; 0 resumes.
    set_state(p, prio, u.until_ps > u.at_ps, u.at_ps);
  }
}

void PauseReceiver::on_frame(uint64_t now_ps, uint16_t class_enable, const uint16_t timers[kPriorities]) {
  for (int i = 0; i < kPriorities; ++i) {
    if (!(class_enable >> i & 1)) continue;
    Prio& p = m_prio[i];
    advance(p, i, now_ps);
    ++p.st.frames;
    m_active |= static_cast<uint8_t>(1u << i);
    const uint64_t at = now_ps + m_delay;
    p.pending.push_back(Update{at, at + quanta_ps(timers[i], m_rate)});
  }
}

uint8_t PauseReceiver::paused_mask_slow(uint64_t now_ps) {
  uint8_t m = 0;
  for (int i = 0; i < kPriorities; ++i) {
    Prio& p = m_prio[i];
    if (!(m_active >> i & 1)) continue;
    advance(p, i, now_ps);
    if (p.paused) m |= static_cast<uint8_t>(1u << i);
  }
  return m;
}

uint64_t PauseReceiver::next_change(uint64_t now_ps) {
  uint64_t t = UINT64_MAX;
  for (int i = 0; i < kPriorities; ++i) {
    Prio& p = m_prio[i];
    if (!(m_active >> i & 1)) continue;
    advance(p, i, now_ps);
    if (!p.pending.empty()) t = std::min(t, p.pending.front().at_ps);
    if (p.paused) t = std::min(t, p.until_ps);
  }
  return t;
}

PauseReceiver::PrioStats PauseReceiver::stats(int prio, uint64_t now_ps) {
  Prio& p = m_prio[prio];
  advance(p, prio, now_ps);
  PrioStats s = p.st;
  if (p.paused) {
    const uint64_t d = now_ps - p.since_ps;
    s.paused_ps += d;
    s.longest_ps = std::max(s.longest_ps, d);
  }
  return s;
}

Generator::Action Generator::update(const GeneratorConfig& c, uint64_t shared, uint64_t headroom, uint64_t threshold,
                                    bool in_headroom) {
  const uint64_t xoff_level = c.dynamic_xoff ? threshold : c.xoff_cells;
  if (!m_xoff) {
    // XOFF when the PG reaches its threshold or has to use headroom (SONiC).
    if (in_headroom || headroom > 0 || shared >= xoff_level) {
      m_xoff = true;
      ++m_transitions;
      return Action::xoff;
    }
    return Action::none;
  }
  if (headroom > 0) return Action::none;  // still absorbing in-flight data
  bool resume = false;
  switch (c.xon_rule) {
    case GeneratorConfig::XonRule::absolute:
      resume = shared <= c.xon_cells;
      break;
    case GeneratorConfig::XonRule::ratio:
      // 128-bit products: exact for any 64-bit level.
      resume = static_cast<unsigned __int128>(shared) * kXonRatioOne <=
               static_cast<unsigned __int128>(c.xon_ratio_q16) * xoff_level;
      break;
    case GeneratorConfig::XonRule::offset:
      resume = shared + c.xon_offset_cells < xoff_level;
      break;
  }
  if (!resume) return Action::none;
  m_xoff = false;
  ++m_transitions;
  return Action::xon;
}

uint32_t xon_ratio_fixed(double ratio) {
  if (!(ratio > 0.0)) return 0;
  if (ratio >= 1.0) return kXonRatioOne;
  // Scaling by a power of two is exact; floor is the one rounding step.
  return static_cast<uint32_t>(std::floor(ratio * static_cast<double>(kXonRatioOne)));
}

uint64_t peer_response_quanta(uint64_t rate_bps) {
  // SONiC's per-speed peer response in quanta; linear between the listed speeds.
  static const std::pair<double, double> kTable[] = {{25e9, 80}, {40e9, 118}, {50e9, 147},
                                                      {100e9, 394}, {200e9, 453}, {400e9, 905}};
  const double r = static_cast<double>(rate_bps);
  if (r <= kTable[0].first) return 80;
  for (size_t i = 1; i < sizeof kTable / sizeof kTable[0]; ++i) {
    if (r <= kTable[i].first) {
      const auto [r0, q0] = kTable[i - 1];
      const auto [r1, q1] = kTable[i];
      return static_cast<uint64_t>(std::ceil(q0 + (q1 - q0) * (r - r0) / (r1 - r0)));
    }
  }
  return static_cast<uint64_t>(std::ceil(905.0 * r / 400e9));
}

uint64_t headroom_bytes(const HeadroomInputs& in) {
  const double cable = static_cast<double>(in.cable_delay_ps) * 1e-12 * static_cast<double>(in.rate_bps) / 8.0;
  const double peer = static_cast<double>(peer_response_quanta(in.rate_bps) * kQuantumBits / 8);
  const double propagation = static_cast<double>(in.mtu_bytes) + 2.0 * (cable + static_cast<double>(in.gearbox_bytes)) +
                             static_cast<double>(in.mac_phy_delay_bytes) + peer;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(in.lossless_mtu_bytes) + propagation * in.cell_occupancy));
}

}  // namespace rocesim::pfc

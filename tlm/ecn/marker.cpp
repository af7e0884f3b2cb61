#include "ecn/marker.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rocesim::ecn {

uint64_t pmax_fixed(double pmax) {
  if (!(pmax > 0.0)) return 0;
  if (pmax >= 1.0) return uint64_t(1) << 32;
  // Scaling by a power of two is exact; llround is the one rounding step
  // (half away from zero), the same on every IEEE-754 platform.
  return uint64_t(std::llround(pmax * 4294967296.0));
}

void count(Counters& c, bool would_mark, bool drew, uint8_t ecn_in) {
  const bool ect = ecn_in == codepoint::kEct0 || ecn_in == codepoint::kEct1;
  const bool mark = would_mark && ect;
  ++c.seen;
  c.ect_seen += ect;
  c.ce_seen += ecn_in == codepoint::kCe;
  c.marked += mark;
  c.would_mark += would_mark && !mark;
  c.draws += drew;
}

Counters operator-(const Counters& a, const Counters& b) {
  Counters d;
  d.seen = a.seen - b.seen;
  d.ect_seen = a.ect_seen - b.ect_seen;
  d.ce_seen = a.ce_seen - b.ce_seen;
  d.marked = a.marked - b.marked;
  d.would_mark = a.would_mark - b.would_mark;
  d.draws = a.draws - b.draws;
  return d;
}

bool operator==(const Counters& a, const Counters& b) {
  return a.seen == b.seen && a.ect_seen == b.ect_seen && a.ce_seen == b.ce_seen && a.marked == b.marked &&
         a.would_mark == b.would_mark && a.draws == b.draws;
}

Marker::Marker(const MarkerConfig& config, core::Rng rng) : m_config(config), m_rng(rng) {
  const std::vector<std::string> err = config.validate();
  if (!err.empty()) {
    std::string all = "ECN marker configuration:";
    for (const std::string& e : err) all += "\n" + e;
    throw std::invalid_argument(all);
  }
  m_wred = {config.kmin, config.kmax, pmax_fixed(config.pmax)};
}

Decision Marker::decide(uint64_t q, uint8_t ecn) {
  // One word per decision in the ramp, none outside it (the header's rule).
  return decide_with(q, ecn, draws_at(q) ? uint32_t(m_rng.next_u64() >> 32) : 0u);
}

Decision Marker::decide_with(uint64_t q, uint8_t ecn, uint32_t rand32) {
  if (ecn > 3) throw std::invalid_argument("ecn::Marker::decide: codepoint " + std::to_string(ecn) + " > 3");
  Decision d;
  switch (m_config.mode) {
    case MarkerConfig::Mode::off:
      break;
    case MarkerConfig::Mode::threshold:
      d.would_mark = q > m_config.k;
      break;
    case MarkerConfig::Mode::wred:
      if (q > m_wred.kmax) {
        d.would_mark = true;
      } else if (q > m_wred.kmin) {
        d.drew = true;
        d.rand32 = rand32;
        d.would_mark = m_wred.fires(q, d.rand32);
      }
      break;
    case MarkerConfig::Mode::hysteresis:
      if (q > m_config.k_high) m_hyst_on = true;
      else if (q < m_config.k_low) m_hyst_on = false;
      d.would_mark = m_hyst_on;
      break;
  }
  d.ect = ecn == codepoint::kEct0 || ecn == codepoint::kEct1;
  d.mark = d.would_mark && d.ect;
  d.ecn_out = d.mark ? codepoint::kCe : ecn;

  count(m_ctr, d.would_mark, d.drew, ecn);
  return d;
}

}  // namespace rocesim::ecn

#include "sched/shaper.h"

#include <algorithm>
#include <stdexcept>

namespace rocesim::sched {

TokenBucket::TokenBucket(const ShaperConfig& c)
    : m_rate(c.rate_bps), m_cap(c.enabled() ? uint64_t(c.burst_bytes) * kUnitsPerByte : 0), m_units(m_cap) {}

uint64_t TokenBucket::units_at(uint64_t t_ps) const {
  if (!enabled() || t_ps <= m_last_ps) return m_units;
  const uint64_t dt = t_ps - m_last_ps;
  const uint64_t missing = m_cap - m_units;
  // dt * rate only when it cannot overflow: then it is <= missing.
  if (dt > missing / m_rate) return m_cap;
  return m_units + dt * m_rate;
}

uint64_t TokenBucket::ready_ps(uint32_t bytes, uint64_t t_ps) const {
  if (!enabled()) return t_ps;
  const uint64_t want = need(bytes);
  if (want > m_cap) return kNever;
  const uint64_t have = units_at(t_ps);
  if (have >= want) return t_ps;
  // Below the cap the bucket gains exactly m_rate units per ps.
  return t_ps + (want - have + m_rate - 1) / m_rate;
}

void TokenBucket::take(uint32_t bytes, uint64_t t_ps) {
  if (!enabled()) return;
  const uint64_t have = units_at(t_ps);
  const uint64_t want = need(bytes);
  if (have < want) throw std::logic_error("TokenBucket::take: frame does not conform");
  m_units = have - want;
  m_last_ps = std::max(m_last_ps, t_ps);
}

}  // namespace rocesim::sched

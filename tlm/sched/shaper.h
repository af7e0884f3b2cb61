// Token bucket for the egress shapers, in exact integer arithmetic.
//
// Tokens are held in units of 1/(8e12) byte: a rate of R bit/s adds exactly R
// units per picosecond (1 byte = 8 bits = 8e12 bit*ps/s), so accrual never
// rounds and the time a bucket needs to reach b bytes is exactly
// ceil((b * 8e12 - units) / R) ps. With burst <= kMaxBurstBytes (1 MiB) and
// R <= kMaxRateBps the values stay below 2^63.
//
// Rule: a frame of b bytes conforms at t when the bucket holds >= b bytes at
// t; sending takes b bytes. The bucket starts full and never exceeds burst.
#pragma once

#include <cstdint>

#include "sched/config.h"

namespace rocesim::sched {

class TokenBucket {
 public:
  static constexpr uint64_t kUnitsPerByte = 8'000'000'000'000ull;
  static constexpr uint64_t kNever = UINT64_MAX;

  TokenBucket() = default;  // disabled: always conforms
  // Full at t = 0. The configuration must be valid (validate()).
  explicit TokenBucket(const ShaperConfig& c);

  bool enabled() const { return m_rate != 0; }
  // Tokens at t (t >= the last take), in units and in whole bytes (floor).
  uint64_t units_at(uint64_t t_ps) const;
  uint64_t bytes_at(uint64_t t_ps) const { return units_at(t_ps) / kUnitsPerByte; }
  bool conforms(uint32_t bytes, uint64_t t_ps) const { return !enabled() || units_at(t_ps) >= need(bytes); }
  // Earliest time >= t_ps at which conforms(bytes) holds, if nothing is taken
  // before; kNever if bytes exceed the burst.
  uint64_t ready_ps(uint32_t bytes, uint64_t t_ps) const;
  // Take `bytes` at t_ps; the caller checked conforms(bytes, t_ps).
  void take(uint32_t bytes, uint64_t t_ps);

 private:
  static uint64_t need(uint32_t bytes) { return uint64_t(bytes) * kUnitsPerByte; }
  uint64_t m_rate = 0;     // bit/s = units/ps
  uint64_t m_cap = 0;      // burst in units
  uint64_t m_units = 0;    // at m_last_ps
  uint64_t m_last_ps = 0;
};

}  // namespace rocesim::sched

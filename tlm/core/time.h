// Time helpers: the model keeps time as integer picoseconds (SystemC's default
// resolution is 1 ps), so serialization and cable delays are exact.
#pragma once

#include <cstdint>

#include <systemc>

namespace rocesim::core {

inline constexpr uint64_t kPsPerNs = 1000;
inline constexpr uint64_t kPsPerSec = 1000000000000ull;

inline sc_core::sc_time ps(uint64_t v) { return sc_core::sc_time::from_value(v); }
inline uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }
inline uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// Time to send `bytes` at `bps`, in picoseconds, rounded up to a whole ps.
// Exact for every Ethernet rate whose bit time is a whole number of ps
// (10M..400G, 25G = 40 ps/bit, 100G = 10 ps/bit, 400G = 2.5 ps/bit at byte granularity: 20 ps/byte).
inline uint64_t serialization_ps(uint64_t bytes, uint64_t bps) {
  // bytes * 8 * 1e12 / bps without overflow for bytes < 2^31 and bps >= 1:
  // split 8e12 so the product fits in 128 bits.
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8u * kPsPerSec;
  return static_cast<uint64_t>((num + bps - 1) / bps);
}

// The core clock: a period, never a toggling signal (no process wakes every cycle).
struct Clock {
  uint64_t period_ps = 1000;  // 1 GHz default
  uint64_t cycles(uint64_t n) const { return n * period_ps; }
  // The first clock edge at or after t.
  uint64_t align_up(uint64_t t) const { return (t + period_ps - 1) / period_ps * period_ps; }
};

}  // namespace rocesim::core

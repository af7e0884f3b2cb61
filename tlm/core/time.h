// Time helpers: the model keeps time as integer picoseconds (SystemC's default
// resolution is 1 ps), so serialization and cable delays are exact.
#pragma once

#include <cstdint>

#include <systemc>

#include "core/calendar.h"

namespace rocesim::core {

inline constexpr uint64_t kPsPerNs = 1000;
inline constexpr uint64_t kPsPerSec = 1000000000000ull;

// SystemC's from_value() is out of line (it fixes the time resolution on
// first use); the per-frame paths build one to three delays per hop, so
// below 2^52 ps (75 minutes) the delay is the one-picosecond time scaled,
// which is exact there: sc_time's scaling truncates v + 0.5, and a double
// holds that exactly only below 2^52.
inline sc_core::sc_time ps(uint64_t v) {
  if (v == 0) return sc_core::SC_ZERO_TIME;
  if (v >= (uint64_t(1) << 52)) return sc_core::sc_time::from_value(v);
  static const sc_core::sc_time one = sc_core::sc_time::from_value(1);
  return one * static_cast<double>(v);
}
inline uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }
// now_ps(): the model's time, core/calendar.h.

// Time to send `bytes` at `bps`, in picoseconds, rounded up to a whole ps.
// Exact for every rate whose byte time is a whole number of ps (all Ethernet
// rates 10 Mbps .. 400 Gbps: 25G = 320 ps/byte, 100G = 80, 400G = 20).
inline uint64_t serialization_ps(uint64_t bytes, uint64_t bps) {
  // bytes * 8 * 1e12 / bps without overflow for bytes < 2^31 and bps >= 1:
  // split 8e12 so the product fits in 128 bits.
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8u * kPsPerSec;
  return static_cast<uint64_t>((num + bps - 1) / bps);
}

// Serialization at one line rate, with the per-byte time precomputed when it
// is a whole number of ps (every standard Ethernet rate): a multiply instead
// of a 128-bit division on the per-frame path.
class ByteTime {
 public:
  explicit ByteTime(uint64_t bps = 100000000000ull)
      : m_bps(bps), m_ps_per_byte(8 * kPsPerSec % bps == 0 ? 8 * kPsPerSec / bps : 0) {}
  uint64_t ps(uint64_t bytes) const { return m_ps_per_byte ? bytes * m_ps_per_byte : serialization_ps(bytes, m_bps); }
  uint64_t bps() const { return m_bps; }

 private:
  uint64_t m_bps, m_ps_per_byte;
};

// The core clock: a period, never a toggling signal (no process wakes every cycle).
struct Clock {
  uint64_t period_ps = 1000;  // 1 GHz default
  uint64_t cycles(uint64_t n) const { return n * period_ps; }
  // The first clock edge at or after t.
  uint64_t align_up(uint64_t t) const { return (t + period_ps - 1) / period_ps * period_ps; }
};

}  // namespace rocesim::core

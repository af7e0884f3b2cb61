// Deterministic random streams. Each component draws from its own stream,
// derived from the run seed and its hierarchical name, so adding a component
// or reordering construction never changes another component's draws.
#pragma once

#include <cstdint>
#include <string_view>

namespace rocesim::core {

// 64-bit FNV-1a of a string (stable across platforms and runs).
uint64_t fnv1a64(std::string_view s);
uint64_t splitmix64(uint64_t& state);

// xoshiro256** (Blackman & Vigna, 2018): fast, 256-bit state, good statistical quality.
class Rng {
 public:
  Rng() : Rng(0, "") {}
  Rng(uint64_t seed, std::string_view name);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), unbiased (Lemire's method); n > 0.
  uint64_t below(uint64_t n);
  // Exponential with the given mean (for Poisson arrivals).
  double exponential(double mean);
  bool bernoulli(double p) { return uniform() < p; }

 private:
  uint64_t m_s[4];
};

}  // namespace rocesim::core

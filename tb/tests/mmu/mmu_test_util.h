// Small config builders shared by the MMU tests.
#pragma once

#include <cstdint>

#include "mmu/config.h"
#include "mmu/mmu.h"

namespace rocesim::mmu::test {

inline constexpr uint32_t kIngressPool = 0;
inline constexpr uint32_t kEgressPool = 1;

inline Threshold dyn(int n) { return Threshold{ThresholdMode::dynamic_th, n, 0}; }
inline Threshold stat(uint32_t cells) { return Threshold{ThresholdMode::static_th, 0, cells}; }

// Pool 0: ingress, pool 1: egress. Every PG and queue: no reserve, lossy,
// threshold taken from the pool (ingress static at the pool size, i.e. never
// binding before the pool; egress dynamic alpha 1) unless changed.
inline Config base_config(size_t ports, uint32_t total, uint32_t ingress_pool, uint32_t egress_pool) {
  Config c;
  c.cell_bytes = 256;
  c.total_cells = total;
  c.pools.push_back(PoolConfig{"ingress_pool", PoolType::ingress, ingress_pool, ThresholdMode::static_th});
  c.pools.push_back(PoolConfig{"egress_pool", PoolType::egress, egress_pool, ThresholdMode::dynamic_th});
  c.ports.resize(ports);
  for (PortConfig& p : c.ports) {
    for (PgProfile& g : p.pgs) {
      g.pool = kIngressPool;
      g.threshold = stat(ingress_pool);
    }
    for (QueueProfile& q : p.queues) {
      q.pool = kEgressPool;
      q.threshold = dyn(0);
    }
  }
  return c;
}

inline AdmitOp op(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t cells,
                  bool lossless = false) {
  AdmitOp o;
  o.in_port = in_port;
  o.pg = pg;
  o.out_port = out_port;
  o.queue = queue;
  o.cells = cells;
  o.lossless = lossless;
  return o;
}

// Deterministic 64-bit generator for the tests (splitmix64).
struct TestRng {
  uint64_t s;
  explicit TestRng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

}  // namespace rocesim::mmu::test

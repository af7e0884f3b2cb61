// Longest-prefix-match table for a switch's forwarding lookup (runs per packet).
//
// One open-addressing hash table per distinct prefix length present, all in
// one flat slot array; a lookup probes the lengths longest first and returns
// the first hit, then the /0 default if any. Linear probing at load <= 1/2
// keeps probe chains short; lookup() touches no heap allocation and no
// pointer-chasing beyond the slot array.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "topology/topology.h"

namespace rocesim::topology {

class RouteTable {
 public:
  RouteTable() = default;
  // Throws std::invalid_argument on prefix_len > 32, on a prefix with bits set
  // below its length, on group == kNoRoute, or on the same prefix listed twice
  // with different groups (an identical repeat is accepted).
  explicit RouteTable(const std::vector<Route>& routes);

  // Group index of the longest matching prefix, or kNoRoute.
  uint32_t lookup(uint32_t dst_ip) const {
    for (uint32_t i = 0; i < m_nlevels; ++i) {
      const Level& lv = m_levels[i];
      // Keyed by the prefix value itself so /8 and /32 keys hash alike.
      const uint32_t key = dst_ip >> lv.shift;
      uint32_t h = (key * kHashMul) >> lv.hash_shift;
      for (;;) {
        const Slot& s = m_slots[lv.offset + h];
        if (s.group == kNoRoute) break;
        if (s.key == key) return s.group;
        h = (h + 1) & lv.mask;
      }
    }
    return m_default;
  }

  size_t size() const { return m_size; }          // distinct prefixes
  uint32_t levels() const { return m_nlevels + (m_default != kNoRoute ? 1 : 0); }  // distinct lengths

 private:
  static constexpr uint32_t kHashMul = 0x9E3779B1u;  // odd, golden-ratio multiplicative hash
  struct Slot {
    uint32_t key = 0;
    uint32_t group = kNoRoute;  // kNoRoute marks an empty slot
  };
  struct Level {
    uint32_t shift = 0;       // 32 - prefix_len (prefix_len >= 1 here)
    uint32_t hash_shift = 0;  // 32 - log2(capacity)
    uint32_t mask = 0;        // capacity - 1
    uint32_t offset = 0;      // first slot in m_slots
  };

  std::vector<Slot> m_slots;
  std::array<Level, 32> m_levels{};  // longest first
  uint32_t m_nlevels = 0;
  uint32_t m_default = kNoRoute;     // the /0 route
  size_t m_size = 0;
};

}  // namespace rocesim::topology

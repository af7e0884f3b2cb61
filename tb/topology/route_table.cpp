#include "topology/route_table.h"

#include <algorithm>
#include <stdexcept>

namespace rocesim::topology {

namespace {

std::string route_text(const Route& r) {
  return ip_to_string(r.prefix) + "/" + std::to_string(r.prefix_len);
}

}  // namespace

RouteTable::RouteTable(const std::vector<Route>& routes) {
  std::array<uint32_t, 33> count{};
  for (const Route& r : routes) {
    if (r.prefix_len > 32) throw std::invalid_argument("route table: prefix length " + std::to_string(r.prefix_len) + " > 32");
    const uint32_t host_mask = r.prefix_len == 0 ? 0xffffffffu : (r.prefix_len == 32 ? 0u : 0xffffffffu >> r.prefix_len);
    if (r.prefix & host_mask)
      throw std::invalid_argument("route table: " + route_text(r) + " has bits set below its prefix length");
    if (r.group == kNoRoute) throw std::invalid_argument("route table: " + route_text(r) + " has no group");
    ++count[r.prefix_len];
  }

  // Lay out one table per length present, longest first.
  std::array<int, 33> level_of;
  level_of.fill(-1);
  uint32_t offset = 0;
  for (uint32_t len = 32; len >= 1; --len) {
    if (count[len] == 0) continue;
    uint32_t bits = 1;
    while ((1u << bits) < 2 * count[len]) ++bits;  // load factor <= 1/2
    Level& lv = m_levels[m_nlevels];
    lv.shift = 32 - len;
    lv.hash_shift = 32 - bits;
    lv.mask = (1u << bits) - 1;
    lv.offset = offset;
    offset += 1u << bits;
    level_of[len] = static_cast<int>(m_nlevels++);
  }
  m_slots.assign(offset, Slot{});

  for (const Route& r : routes) {
    if (r.prefix_len == 0) {
      if (m_default != kNoRoute && m_default != r.group)
        throw std::invalid_argument("route table: " + route_text(r) + " listed twice with different groups");
      if (m_default == kNoRoute) ++m_size;
      m_default = r.group;
      continue;
    }
    const Level& lv = m_levels[level_of[r.prefix_len]];
    const uint32_t key = r.prefix >> lv.shift;
    uint32_t h = (key * kHashMul) >> lv.hash_shift;
    for (;;) {
      Slot& s = m_slots[lv.offset + h];
      if (s.group == kNoRoute) {
        s.key = key;
        s.group = r.group;
        ++m_size;
        break;
      }
      if (s.key == key) {
        if (s.group != r.group)
          throw std::invalid_argument("route table: " + route_text(r) + " listed twice with different groups");
        break;
      }
      h = (h + 1) & lv.mask;
    }
  }
}

}  // namespace rocesim::topology

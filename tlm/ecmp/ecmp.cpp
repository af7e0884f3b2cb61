#include "ecmp/ecmp.h"

#include <algorithm>

namespace rocesim::ecmp {

namespace {

// Byte tables of the three CRCs, built at compile time from the polynomial.
// Reflected CRCs shift right with the reflected polynomial; CCITT-FALSE
// shifts left with the polynomial as written.
constexpr std::array<uint16_t, 256> reflected16(uint16_t rpoly) {
  std::array<uint16_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint16_t r = static_cast<uint16_t>(i);
    for (int b = 0; b < 8; ++b) r = static_cast<uint16_t>(r & 1 ? (r >> 1) ^ rpoly : r >> 1);
    t[i] = r;
  }
  return t;
}
constexpr std::array<uint16_t, 256> normal16(uint16_t poly) {
  std::array<uint16_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint16_t r = static_cast<uint16_t>(i << 8);
    for (int b = 0; b < 8; ++b) r = static_cast<uint16_t>(r & 0x8000 ? (r << 1) ^ poly : r << 1);
    t[i] = r;
  }
  return t;
}
constexpr std::array<uint32_t, 256> reflected32(uint32_t rpoly) {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t r = i;
    for (int b = 0; b < 8; ++b) r = r & 1 ? (r >> 1) ^ rpoly : r >> 1;
    t[i] = r;
  }
  return t;
}
constexpr std::array<uint8_t, 256> reversed_bytes() {
  std::array<uint8_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t r = 0;
    for (int b = 0; b < 8; ++b) r |= ((i >> b) & 1u) << (7 - b);
    t[i] = static_cast<uint8_t>(r);
  }
  return t;
}
constexpr std::array<uint8_t, 256> kRev = reversed_bytes();
// The model's init (unreflected, as the catalogue states it) as the
// register of the reflected (shift-right) algorithm.
uint16_t reflect16(uint16_t v) { return static_cast<uint16_t>(kRev[v & 0xFF] << 8 | kRev[v >> 8]); }
uint32_t reflect32(uint32_t v) {
  return uint32_t(kRev[v & 0xFF]) << 24 | uint32_t(kRev[(v >> 8) & 0xFF]) << 16 | uint32_t(kRev[(v >> 16) & 0xFF]) << 8 |
         kRev[v >> 24];
}
constexpr std::array<uint16_t, 256> kArc = reflected16(0xA001);        // 0x8005 reflected
constexpr std::array<uint16_t, 256> kCcitt = normal16(0x1021);
constexpr std::array<uint32_t, 256> kCrc32 = reflected32(0xEDB88320u);  // 0x04C11DB7 reflected

}  // namespace

const std::vector<std::string>& function_names() {
  static const std::vector<std::string> v{"murmur3", "crc16_arc", "crc16_ccitt", "crc32_hi", "crc32_lo", "xor16"};
  return v;
}
const std::vector<std::string>& selection_names() {
  static const std::vector<std::string> v{"modulo", "table"};
  return v;
}
const std::vector<std::string>& field_names() {
  static const std::vector<std::string> v{"src_ip", "dst_ip", "proto", "sport", "dport", "dest_qp", "in_port"};
  return v;
}
const char* function_name(Function f) { return function_names()[static_cast<size_t>(f)].c_str(); }
const char* selection_name(Selection s) { return selection_names()[static_cast<size_t>(s)].c_str(); }

std::vector<std::string> Config::validate() const {
  std::vector<std::string> e;
  if (static_cast<size_t>(function) >= function_names().size()) e.push_back("unknown hash function");
  if (fields == 0) e.push_back("no key fields selected: every packet would hash alike");
  if (fields & ~field::all) e.push_back("unknown key field bits");
  if (static_cast<size_t>(selection) >= selection_names().size()) e.push_back("unknown member selection");
  if (table_bits < 1 || table_bits > kMaxTableBits)
    e.push_back("table_bits " + std::to_string(table_bits) + " is outside 1 .. " + std::to_string(kMaxTableBits));
  for (const std::string& m : dlb.validate()) e.push_back("load balancing: " + m);
  return e;
}

uint16_t crc16_arc(const uint8_t* data, size_t len, uint16_t init) {
  uint16_t c = reflect16(init);
  for (size_t i = 0; i < len; ++i) c = static_cast<uint16_t>((c >> 8) ^ kArc[(c ^ data[i]) & 0xFF]);
  return c;
}

uint16_t crc16_ccitt_false(const uint8_t* data, size_t len, uint16_t init) {
  uint16_t c = init;
  for (size_t i = 0; i < len; ++i) c = static_cast<uint16_t>((c << 8) ^ kCcitt[((c >> 8) ^ data[i]) & 0xFF]);
  return c;
}

uint32_t crc32_iso_hdlc(const uint8_t* data, size_t len, uint32_t init) {
  uint32_t c = reflect32(init);
  for (size_t i = 0; i < len; ++i) c = (c >> 8) ^ kCrc32[(c ^ data[i]) & 0xFF];
  return c ^ 0xFFFFFFFFu;
}

uint16_t xor16_fold(const uint8_t* data, size_t len, uint16_t init) {
  uint16_t x = init;
  size_t i = 0;
  for (; i + 1 < len; i += 2) x = static_cast<uint16_t>(x ^ (data[i] << 8 | data[i + 1]));
  if (i < len) x = static_cast<uint16_t>(x ^ (data[i] << 8));
  return x;
}

uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

size_t key_words(const Key& k, uint32_t f, bool symmetric, std::array<uint32_t, kMaxKeyWords>& w) {
  uint32_t a = k.src_ip, b = k.dst_ip;
  uint16_t sp = k.sport, dp = k.dport;
  if (symmetric) {
    if (a > b) std::swap(a, b);
    if (sp > dp) std::swap(sp, dp);
  }
  size_t n = 0;
  if (f & field::src_ip) w[n++] = a;
  if (f & field::dst_ip) w[n++] = b;
  if (f & (field::proto | field::sport))
    w[n++] = (f & field::proto ? uint32_t(k.proto) << 16 : 0u) | (f & field::sport ? sp : 0u);
  if (f & field::dport) w[n++] = dp;
  if (f & field::dest_qp) w[n++] = k.dest_qp & 0xFFFFFF;
  if (f & field::in_port) w[n++] = k.in_port;
  return n;
}

uint32_t hash(const Config& c, const Key& k) {
  std::array<uint32_t, kMaxKeyWords> w;
  const size_t n = key_words(k, c.fields, c.symmetric, w);
  if (c.function == Function::murmur3) {
    uint32_t h = c.seed;
    for (size_t i = 0; i < n; ++i) h = fmix32(h ^ w[i]);
    return h;
  }
  std::array<uint8_t, kMaxKeyWords * 4> bytes;
  for (size_t i = 0; i < n; ++i) {
    bytes[4 * i] = static_cast<uint8_t>(w[i] >> 24);
    bytes[4 * i + 1] = static_cast<uint8_t>(w[i] >> 16);
    bytes[4 * i + 2] = static_cast<uint8_t>(w[i] >> 8);
    bytes[4 * i + 3] = static_cast<uint8_t>(w[i]);
  }
  const size_t len = 4 * n;
  switch (c.function) {
    case Function::crc16_arc: return crc16_arc(bytes.data(), len, static_cast<uint16_t>(0x0000 ^ seed16(c.seed)));
    case Function::crc16_ccitt:
      return crc16_ccitt_false(bytes.data(), len, static_cast<uint16_t>(0xFFFF ^ seed16(c.seed)));
    case Function::crc32_hi: return crc32_iso_hdlc(bytes.data(), len, 0xFFFFFFFFu ^ c.seed) >> 16;
    case Function::crc32_lo: return crc32_iso_hdlc(bytes.data(), len, 0xFFFFFFFFu ^ c.seed) & 0xFFFF;
    case Function::xor16: return xor16_fold(bytes.data(), len, seed16(c.seed));
    case Function::murmur3: break;
  }
  return 0;
}

// ---------------------------------------------------------------------------

BucketTable::BucketTable(uint32_t members, uint32_t bits)
    : m_owner(size_t(1) << bits), m_home(size_t(1) << bits), m_count(members, 0), m_up(members, 1),
      m_members_up(members) {
  for (uint32_t b = 0; b < m_owner.size(); ++b) {
    m_owner[b] = m_home[b] = members ? static_cast<uint16_t>(b % members) : kNone;
    if (members) ++m_count[m_owner[b]];
  }
}

void BucketTable::move(uint32_t bucket, uint16_t to) {
  const uint16_t from = m_owner[bucket];
  if (from != kNone) --m_count[from];
  if (to != kNone) ++m_count[to];
  m_owner[bucket] = to;
}

uint32_t BucketTable::down(uint32_t m) {
  if (!m_up[m]) return 0;
  m_up[m] = 0;
  --m_members_up;
  uint32_t moved = 0;
  for (uint32_t b = 0; b < m_owner.size(); ++b) {
    if (m_owner[b] != m) continue;
    uint16_t best = kNone;
    for (uint32_t s = 0; s < m_count.size(); ++s)
      if (m_up[s] && (best == kNone || m_count[s] < m_count[best])) best = static_cast<uint16_t>(s);
    move(b, best);
    ++moved;
  }
  return moved;
}

uint32_t BucketTable::up(uint32_t m) {
  if (m_up[m]) return 0;
  m_up[m] = 1;
  ++m_members_up;
  const uint32_t n = static_cast<uint32_t>(m_count.size());
  if (m_members_up == 1) {  // the only one: every bucket (they all held kNone)
    for (uint32_t b = 0; b < m_owner.size(); ++b) move(b, static_cast<uint16_t>(m));
    return buckets();
  }
  // How many each donor gives: one at a time from the one with the most.
  const uint32_t target = buckets() / m_members_up;
  std::vector<uint32_t> left(m_count), give(n, 0);
  for (uint32_t k = 0; k < target; ++k) {
    uint32_t d = n;
    for (uint32_t s = 0; s < n; ++s)
      if (s != m && m_up[s] && (d == n || left[s] > left[d])) d = s;
    --left[d];
    ++give[d];
  }
  // Which buckets: a donor's buckets whose home is m first (lowest first),
  // then its highest-numbered ones.
  uint32_t moved = 0;
  for (uint32_t d = 0; d < n; ++d) {
    for (uint32_t b = 0; b < m_owner.size() && give[d]; ++b)
      if (m_owner[b] == d && m_home[b] == m) move(b, static_cast<uint16_t>(m)), --give[d], ++moved;
    for (uint32_t b = static_cast<uint32_t>(m_owner.size()); b-- > 0 && give[d];)
      if (m_owner[b] == d) move(b, static_cast<uint16_t>(m)), --give[d], ++moved;
  }
  return moved;
}

// ---------------------------------------------------------------------------

Unit::Unit(const Config& c, const std::vector<std::vector<uint16_t>>& groups)
    : m_cfg(c), m_mask((1u << c.table_bits) - 1), m_groups(groups.size()) {
  for (size_t g = 0; g < groups.size(); ++g) {
    Group& G = m_groups[g];
    G.ports = groups[g];
    for (uint32_t i = 0; i < G.ports.size(); ++i) G.up.push_back(static_cast<uint16_t>(i));
    if (c.selection == Selection::table && G.ports.size() > 1)
      G.table.emplace_back(static_cast<uint32_t>(G.ports.size()), c.table_bits);
  }
}

uint32_t Unit::member(uint32_t g, uint32_t h) const {
  const Group& G = m_groups[g];
  if (G.up.empty()) return kNone;
  if (!G.table.empty()) {
    const uint16_t m = G.table[0].at(h & m_mask);
    return m == BucketTable::kNone ? kNone : m;
  }
  return G.up[h % G.up.size()];
}

bool Unit::member_up(uint32_t g, uint32_t m) const {
  const std::vector<uint16_t>& u = m_groups[g].up;
  return std::binary_search(u.begin(), u.end(), static_cast<uint16_t>(m));
}

uint32_t Unit::set_member_up(uint32_t g, uint32_t m, bool up) {
  Group& G = m_groups[g];
  if (member_up(g, m) == up) return 0;
  const auto at = std::lower_bound(G.up.begin(), G.up.end(), static_cast<uint16_t>(m));
  if (up) {
    G.up.insert(at, static_cast<uint16_t>(m));
  } else {
    G.up.erase(at);
  }
  if (G.table.empty()) return 1;
  return up ? G.table[0].up(m) : G.table[0].down(m);
}

}  // namespace rocesim::ecmp

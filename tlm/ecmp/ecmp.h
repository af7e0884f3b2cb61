// The ECMP hash unit: which member of a next-hop group a packet takes. Plain
// C++17, no SystemC, no time, no randomness: a pure function of the packet's
// key, the unit's configuration and the members' up/down state, so tests and
// the fabric's ideal-FCT path (tb/sim/fabric.cpp) ask it the same question the
// switch does. docs/ecmp.md is the user's description.
//
// Key (what the switch hashes): the selected fields of the parsed headers,
// laid out as a sequence of 32-bit words, each field in its own word and in
// this order, a word left out when none of its fields is selected:
//   w0 source IPv4              (Field::src_ip)
//   w1 destination IPv4         (Field::dst_ip)
//   w2 proto << 16 | UDP sport  (Field::proto, Field::sport; an unselected
//                                part is zero)
//   w3 UDP dport                (Field::dport)
//   w4 BTH destination QP       (Field::dest_qp, 24 bits)
//   w5 ingress port             (Field::in_port)
// The byte form of the key (what the CRC and XOR functions read) is the words
// in network order (big-endian), so the addresses are the bytes of the IPv4
// header. Symmetric: before the layout, the addresses become (min, max) and
// the ports (min, max), so (a, b) and (b, a) hash alike (the QP and the
// ingress port are not paired and stay as they are).
//
// Functions (each bit-exact to its catalogue definition, Greg Cook's CRC
// RevEng catalogue, reveng.sourceforge.io/crc-catalogue; check = the function
// of the ASCII "123456789"):
//   crc16_arc     CRC-16/ARC: poly 0x8005, init 0x0000, refin, refout, xorout 0,  check 0xBB3D
//   crc16_ccitt   CRC-16/IBM-3740 (alias CCITT-FALSE): poly 0x1021, init 0xFFFF,
//                 no reflection, xorout 0, check 0x29B1
//   crc32_hi/lo   the upper / lower 16 bits of CRC-32/ISO-HDLC (Ethernet):
//                 poly 0x04C11DB7, init 0xFFFFFFFF, refin, refout,
//                 xorout 0xFFFFFFFF, check 0xCBF43926
//   xor16         XOR of the key's big-endian 16-bit words (a trailing odd
//                 byte as the high byte of a last word)
//   murmur3       h = seed, then h = fmix32(h ^ w) for each key word: the
//                 MurmurHash3 32-bit finalizer (Appleby) chained over the
//                 words. Not an ASIC function: the model's hash before this
//                 unit existed, kept as the default so that outputs stay as
//                 they were; 32 bits out, the others 16.
// All are table-driven (one 256-entry table each, built at compile time);
// no allocation per call.
//
// Seed (per switch), mixed in as switch ASICs do, as the initial register:
//   CRCs: init = catalogue init XOR the seed (CRC-32: all 32 bits; CRC-16:
//   seed16 = (seed >> 16) ^ (seed & 0xFFFF)); xor16: the fold starts from
//   seed16; murmur3: h starts from the seed. Seed 0 is the catalogue function.
//   CRCs and xor16 are affine over GF(2): for a fixed key layout a seed only
//   XORs a constant into the hash. It changes which member a flow takes, but
//   two keys that collide (same bucket or same residue mod 2^k) collide under
//   every seed; decorrelating the tiers of a fabric with them takes different
//   functions (or murmur3, whose seed goes through the non-linear mix).
//
// Member selection, over the members that are up:
//   modulo  member = up[h mod U] (U members up, in group order); a member
//           going down or up rehashes about all flows.
//   table   an indirection table of 2^table_bits buckets, bucket = the low
//           table_bits of h, holding a member each: filled round-robin
//           (bucket b -> member b mod N, its "home"), and rebuilt with minimal
//           disruption (BucketTable below): only buckets that must change do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecmp/dlb.h"

namespace rocesim::ecmp {

enum class Function : uint8_t { murmur3, crc16_arc, crc16_ccitt, crc32_hi, crc32_lo, xor16 };
enum class Selection : uint8_t { modulo, table };

// Key fields (bits of Config::fields).
namespace field {
inline constexpr uint32_t src_ip = 1u << 0;
inline constexpr uint32_t dst_ip = 1u << 1;
inline constexpr uint32_t proto = 1u << 2;
inline constexpr uint32_t sport = 1u << 3;
inline constexpr uint32_t dport = 1u << 4;
inline constexpr uint32_t dest_qp = 1u << 5;
inline constexpr uint32_t in_port = 1u << 6;
inline constexpr uint32_t five_tuple = src_ip | dst_ip | proto | sport | dport;
inline constexpr uint32_t all = five_tuple | dest_qp | in_port;
}  // namespace field

// Names as the config spells them, in order: function_names()[int(f)].
const std::vector<std::string>& function_names();
const std::vector<std::string>& selection_names();
// Field names in bit order: field_names()[i] is bit i.
const std::vector<std::string>& field_names();
const char* function_name(Function f);
const char* selection_name(Selection s);

inline constexpr uint32_t kMaxTableBits = 16;  // the 16-bit functions give 16 bits
inline constexpr uint32_t kMaxMembers = 0xFFFE;

struct Config {
  Function function = Function::murmur3;
  uint32_t fields = field::five_tuple;
  uint32_t seed = 0;
  bool symmetric = false;
  Selection selection = Selection::modulo;
  uint32_t table_bits = 8;    // table: 2^table_bits buckets (1 .. kMaxTableBits)
  uint32_t hash_cycles = 0;   // ingress pipeline cycles the hash takes (the switch's)
  DlbConfig dlb;              // dynamic load balancing or spraying over a group's members (dlb.h)
  // Empty when usable; otherwise one message per problem.
  std::vector<std::string> validate() const;
};

// The header fields a key is made from (host order).
struct Key {
  uint32_t src_ip = 0, dst_ip = 0;
  uint8_t proto = 0;
  uint16_t sport = 0, dport = 0;
  uint32_t dest_qp = 0;       // 24 bits
  uint32_t in_port = 0;
};

inline constexpr size_t kMaxKeyWords = 6;
// The key's words (layout above); returns how many.
size_t key_words(const Key& k, uint32_t fields, bool symmetric, std::array<uint32_t, kMaxKeyWords>& w);

// The catalogue functions over bytes, with the register's initial value
// (the catalogue's by default) as the Rocksoft model states it: unreflected,
// also for the reflected CRCs (whose shift-right register starts from its
// bit reversal).
uint16_t crc16_arc(const uint8_t* data, size_t len, uint16_t init = 0x0000);
uint16_t crc16_ccitt_false(const uint8_t* data, size_t len, uint16_t init = 0xFFFF);
uint32_t crc32_iso_hdlc(const uint8_t* data, size_t len, uint32_t init = 0xFFFFFFFF);
uint16_t xor16_fold(const uint8_t* data, size_t len, uint16_t init = 0);
// MurmurHash3's fmix32.
uint32_t fmix32(uint32_t h);
// seed16 of a 32-bit seed (above).
constexpr uint16_t seed16(uint32_t seed) { return static_cast<uint16_t>((seed >> 16) ^ (seed & 0xFFFF)); }

// The hash of a key under c (function, fields, symmetric, seed): 16 bits for
// the CRC and XOR functions, 32 for murmur3.
uint32_t hash(const Config& c, const Key& k);

// Bucket indirection table of one group: 2^bits buckets over `members`
// members, all up at first. Invariant after every operation: the up members'
// bucket counts differ by at most one, and no bucket holds a down member
// (all buckets hold kNone when none is up).
//   down(m): only m's buckets change; each goes (in bucket order) to the up
//     member with the fewest buckets (the lowest index on a tie), so they
//     spread evenly over the survivors.
//   up(m): m takes floor(B / U) buckets (U: members up, m included), the
//     fewest that give it a fair share, one at a time from the member with
//     the most buckets (the lowest index on a tie), taking first buckets
//     whose home is m: after down(m) then up(m) with B a multiple of N the
//     table is exactly as it was. Nothing else moves.
// Both return the number of buckets that changed member (0 if m was already
// in that state).
class BucketTable {
 public:
  static constexpr uint16_t kNone = 0xFFFF;
  BucketTable(uint32_t members, uint32_t bits);
  uint32_t buckets() const { return static_cast<uint32_t>(m_owner.size()); }
  uint32_t members() const { return static_cast<uint32_t>(m_count.size()); }
  uint16_t at(uint32_t bucket) const { return m_owner[bucket]; }
  uint32_t count(uint32_t m) const { return m_count[m]; }
  bool is_up(uint32_t m) const { return m_up[m] != 0; }
  uint32_t members_up() const { return m_members_up; }
  uint32_t down(uint32_t m);
  uint32_t up(uint32_t m);

 private:
  void move(uint32_t bucket, uint16_t to);
  std::vector<uint16_t> m_owner, m_home;
  std::vector<uint32_t> m_count;
  std::vector<uint8_t> m_up;
  uint32_t m_members_up = 0;
};

// The unit of one switch: its configuration and next-hop groups (egress ports).
class Unit {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  Unit(const Config& c, const std::vector<std::vector<uint16_t>>& groups);
  const Config& config() const { return m_cfg; }
  uint32_t hash(const Key& k) const { return ecmp::hash(m_cfg, k); }
  // Index of the member of group g that hash h selects, or kNone when none is up.
  uint32_t member(uint32_t g, uint32_t h) const;
  // The egress port group g sends key k to, or kNone when no member is up. A
  // group of one member is not hashed.
  uint32_t pick(uint32_t g, const Key& k) const {
    const uint32_t m = pick_member(g, k);
    return m == kNone ? kNone : m_groups[g].ports[m];
  }
  // The same choice as the member's index in ports(g), or kNone.
  uint32_t pick_member(uint32_t g, const Key& k) const {
    const Group& G = m_groups[g];
    if (G.ports.size() == 1) return G.up.empty() ? kNone : 0;
    return member(g, hash(k));
  }
  // Takes member m of group g down or up (a link failure or repair seen by
  // the control plane): modulo rehashes over the members up, the table
  // rebuilds as BucketTable says. Returns the buckets moved (table) or 1 if
  // the state changed (modulo), 0 if it was already so.
  uint32_t set_member_up(uint32_t g, uint32_t m, bool up);
  bool member_up(uint32_t g, uint32_t m) const;
  size_t groups() const { return m_groups.size(); }
  const std::vector<uint16_t>& ports(uint32_t g) const { return m_groups[g].ports; }
  // The group's bucket table, or nullptr (selection modulo, or one member).
  const BucketTable* table(uint32_t g) const { return m_groups[g].table.empty() ? nullptr : &m_groups[g].table[0]; }

 private:
  struct Group {
    std::vector<uint16_t> ports;
    std::vector<uint16_t> up;         // indices of the members up, ascending
    std::vector<BucketTable> table;   // one with selection table and > 1 member
  };
  Config m_cfg;
  uint32_t m_mask = 0;
  std::vector<Group> m_groups;
};

}  // namespace rocesim::ecmp

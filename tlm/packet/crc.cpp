// CRC-32 and checksums for the packet layer.
//
// Representation: the reflected CRC-32 register (IEEE 802.3, polynomial
// 0x04C11DB7, reflected 0xEDB88320). Bit 31 of a register value holds the
// coefficient of x^0 and bit 0 the coefficient of x^31, so shifting right
// multiplies by x. Feeding one zero bit to the raw register is r -> r*x mod P,
// hence n zero bytes multiply the register by x^(8n) mod P. That is how
// crc32_zeros() extends a CRC over a payload held only as a length.
#include "packet/crc.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <array>
#include <cstring>

namespace rocesim::packet {
namespace {

constexpr uint32_t kPoly = 0xEDB88320u;  // IEEE 802.3 CRC-32, bit-reflected

// Slicing-by-8 tables: T[0] is the classic byte table; T[k][b] is the
// register contribution of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r >> 1) ^ ((r & 1u) ? kPoly : 0u);
    t[0][b] = r;
  }
  for (size_t k = 1; k < 8; ++k)
    for (size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  return t;
}
constexpr Tables kT = make_tables();

// a*b mod P in the reflected representation (bit 31 = x^0): for each x^k term
// of a, add b*x^k. Used at compile time to square the x^(2^k) constants.
constexpr uint32_t mulmod(uint32_t a, uint32_t b) {
  uint32_t prod = 0;
  for (int k = 0; k < 32; ++k) {
    prod ^= b & (0u - ((a >> (31 - k)) & 1u));
    b = (b >> 1) ^ (kPoly & (0u - (b & 1u)));
  }
  return prod;
}

// A constant c stored as 8 nibble tables: t[j][v] = (v placed at register
// nibble j) * c mod P. Multiplying a register by c is then 8 lookups.
struct NibTab {
  uint32_t t[8][16];
};

constexpr NibTab make_nibtab(uint32_t c) {
  NibTab nt{};
  uint32_t pw[32] = {};  // pw[k] = c * x^k; register bit 31-k holds the coefficient of x^k
  for (int k = 0; k < 32; ++k) {
    pw[k] = c;
    c = (c >> 1) ^ (kPoly & (0u - (c & 1u)));
  }
  for (int j = 0; j < 8; ++j)
    for (uint32_t v = 1; v < 16; ++v) {
      const uint32_t low = v & (0u - v);  // lowest set bit t of v: register bit 4j+t
      const int t = low == 1 ? 0 : low == 2 ? 1 : low == 4 ? 2 : 3;
      nt.t[j][v] = nt.t[j][v & (v - 1)] ^ pw[31 - 4 * j - t];
    }
  return nt;
}

inline uint32_t nibmul(const NibTab& m, uint32_t reg) {
  const auto& t = m.t;
  return t[0][reg & 15] ^ t[1][reg >> 4 & 15] ^ t[2][reg >> 8 & 15] ^ t[3][reg >> 12 & 15] ^
         t[4][reg >> 16 & 15] ^ t[5][reg >> 20 & 15] ^ t[6][reg >> 24 & 15] ^ t[7][reg >> 28];
}

// kPow8[i] multiplies by x^(8 * 2^i) mod P, i.e. shifts in 2^i zero bytes.
// 64 entries cover any 64-bit byte count (32 KiB of tables; lengths below
// 64 KiB touch only i < 16).
using PowTabs = std::array<NibTab, 64>;
constexpr PowTabs make_pow8() {
  PowTabs p{};
  uint32_t c = 0x00800000u;  // x^8
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = make_nibtab(c);
    c = mulmod(c, c);
  }
  return p;
}
constexpr PowTabs kPow8 = make_pow8();

// reg * x^(8n) mod P by square-and-multiply over the bits of n: popcount(n) table multiplies.
uint32_t shift_zeros(uint32_t reg, uint64_t n) {
  for (size_t i = 0; n != 0; ++i, n >>= 1)
    if (n & 1u) reg = nibmul(kPow8[i], reg);
  return reg;
}

// Per-length cache of x^(8n) mod P as a NibTab, so a repeated length costs
// one multiply (8 lookups). Frames repeat a few payload lengths (MTU-sized
// segments); one-off lengths (last segments) would only evict those, so an
// entry is built when a slot sees the same length twice in a row.
// thread_local: sweeps may run several simulations on threads of one process.
struct ZeroCache {
  static constexpr size_t kSlots = 32;
  struct Slot {
    uint64_t n;          // length of the built table
    uint64_t candidate;  // last missed length at this slot
    bool valid;
    NibTab tab;
  } s[kSlots];
};
thread_local ZeroCache t_cache;

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
// Carry-less multiplication folding (Gopal et al., "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009), in the
// bit-reflected domain of the IEEE polynomial. Constants from that paper:
// k3 = x^(128+32) mod P, k4 = x^(128-32) mod P, k5 = x^64 mod P (reflected,
// shifted left by one), P' = P reflected, mu = floor(x^64 / P) reflected.
// Folds 16 bytes at a time; the caller handles the tail with the tables.
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_fold_clmul(uint32_t reg, const uint8_t* data,
                                                                          size_t blocks) {
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
  const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly_mu = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data)), _mm_cvtsi32_si128(int(reg)));
  for (size_t i = 1; i < blocks; ++i) {
    // x * x^128 mod P, folded onto the next block.
    const __m128i lo = _mm_clmulepi64_si128(x, k3k4, 0x00);
    const __m128i hi = _mm_clmulepi64_si128(x, k3k4, 0x11);
    x = _mm_xor_si128(_mm_xor_si128(lo, hi), _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)));
  }
  // 128 -> 64 bits.
  __m128i t = _mm_clmulepi64_si128(x, k3k4, 0x10);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), t);
  // 64 -> 32 bits (+32 bits to reduce).
  t = _mm_srli_si128(x, 4);
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), k5, 0x00), t);
  // Barrett reduction to the 32-bit remainder.
  t = _mm_and_si128(x, low32);
  t = _mm_clmulepi64_si128(t, poly_mu, 0x10);
  t = _mm_and_si128(t, low32);
  t = _mm_clmulepi64_si128(t, poly_mu, 0x00);
  x = _mm_xor_si128(x, t);
  return static_cast<uint32_t>(_mm_extract_epi32(x, 1));
}

static const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif

uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t len) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (len >= 32 && kHaveClmul) {
    const size_t blocks = len / 16;
    reg = crc32_fold_clmul(reg, data, blocks);
    data += blocks * 16;
    len -= blocks * 16;
  }
#endif
  while (len >= 8) {
    const uint32_t lo = load_le32(data) ^ reg;
    const uint32_t hi = load_le32(data + 4);
    reg = kT[7][lo & 0xff] ^ kT[6][(lo >> 8) & 0xff] ^ kT[5][(lo >> 16) & 0xff] ^ kT[4][lo >> 24] ^
          kT[3][hi & 0xff] ^ kT[2][(hi >> 8) & 0xff] ^ kT[1][(hi >> 16) & 0xff] ^ kT[0][hi >> 24];
    data += 8;
    len -= 8;
  }
  while (len--) reg = (reg >> 8) ^ kT[0][(reg ^ *data++) & 0xff];
  return reg;
}

uint32_t crc32_zeros(uint32_t reg, uint64_t n) {
  // Short runs: the table loop (4 lookups per 8 zero bytes) beats a multiply.
  if (n < 32) {
    for (; n >= 8; n -= 8)
      reg = kT[7][reg & 0xff] ^ kT[6][(reg >> 8) & 0xff] ^ kT[5][(reg >> 16) & 0xff] ^ kT[4][reg >> 24];
    while (n--) reg = (reg >> 8) ^ kT[0][reg & 0xff];
    return reg;
  }
  // Fibonacci hashing spreads nearby lengths over the slots.
  ZeroCache::Slot& s = t_cache.s[(n * 0x9E3779B97F4A7C15ull) >> 59];
  if (s.valid && s.n == n) return nibmul(s.tab, reg);
  if (s.candidate != n) {
    s.candidate = n;
    return shift_zeros(reg, n);
  }
  s.tab = make_nibtab(shift_zeros(0x80000000u, n));  // x^0 * x^(8n)
  s.n = n;
  s.valid = true;
  return nibmul(s.tab, reg);
}

uint32_t crc32(const uint8_t* data, size_t len) { return ~crc32_update(~0u, data, len); }

// RFC 791 / RFC 1071: ones'-complement sum of 16-bit big-endian words,
// summed two at a time as 32-bit big-endian words: 2^16 = 1 modulo 2^16 - 1,
// so the folded sum is the same (RFC 1071 section 2, "Parallel summation").
// A 20-byte header is five loads.
uint16_t ipv4_checksum(const uint8_t* hdr, size_t len) {
  uint64_t sum = 0;
  size_t i = 0;
  for (; i + 4 <= len; i += 4) {
    uint32_t w;
    std::memcpy(&w, hdr + i, 4);
    sum += __builtin_bswap32(w);
  }
  for (; i + 1 < len; i += 2) sum += uint32_t(hdr[i]) << 8 | hdr[i + 1];
  if (i < len) sum += uint32_t(hdr[i]) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// RoCEv2 ICRC (IBTA Annex A17 with Vol 1 ch 7.8.1 masking; Linux drivers/infiniband/sw/rxe/rxe_icrc.c):
// CRC-32 over 8 bytes of 0xFF (the masked LRH of native IB), then the IP
// header with TOS, TTL and checksum set to ones (fields routers change), the
// UDP header with checksum 0xFFFF, the BTH with its byte 4 (FECN/BECN/resv)
// set to ones, then the remaining headers and the payload.
uint32_t roce_icrc(const uint8_t* ip, size_t ip_hdr_bytes, uint64_t payload_zeros) {
  // Register after ~0 and 8 bytes of 0xFF: the constant start of every ICRC.
  static constexpr uint32_t kSeed = [] {
    uint32_t r = ~0u;
    for (int i = 0; i < 8; ++i) r = (r >> 8) ^ kT[0][(r ^ 0xffu) & 0xff];
    return r;
  }();

  const size_t ihl = ip_hdr_bytes ? size_t(ip[0] & 0x0f) * 4 : 20;
  const size_t full = ihl + 8 + 12;  // IP + UDP + BTH
  uint8_t buf[60 + 8 + 12];
  size_t masked = full;
  if (ip_hdr_bytes >= full) {
    std::memcpy(buf, ip, full);
    buf[1] = 0xff;                          // TOS (DSCP/ECN)
    buf[8] = 0xff;                          // TTL
    buf[10] = buf[11] = 0xff;               // header checksum
    buf[ihl + 6] = buf[ihl + 7] = 0xff;     // UDP checksum
    buf[ihl + 8 + 4] = 0xff;                // BTH FECN/BECN/resv6
  } else {
    // Fewer bytes than the masked headers (not a valid RoCEv2 frame): mask what is there.
    masked = ip_hdr_bytes;
    std::memcpy(buf, ip, masked);
    for (size_t off : {size_t(1), size_t(8), size_t(10), size_t(11), ihl + 6, ihl + 7, ihl + 12})
      if (off < masked) buf[off] = 0xff;
  }

  uint32_t reg = crc32_update(kSeed, buf, masked);
  reg = crc32_update(reg, ip + masked, ip_hdr_bytes - masked);
  reg = crc32_zeros(reg, payload_zeros);
  return ~reg;
}

}  // namespace rocesim::packet

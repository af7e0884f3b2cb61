// Internal to the packet layer: big-endian field access and the IBTA
// transport-header layout per opcode, shared by the builders and the parser.
#pragma once

#include <cstddef>
#include <cstdint>

#include "packet/packet.h"

namespace rocesim::packet::wire {

inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }
inline uint32_t get32(const uint8_t* p) { return uint32_t(p[0]) << 24 | get24(p + 1); }
inline uint64_t get48(const uint8_t* p) { return uint64_t(get16(p)) << 32 | get32(p + 2); }
inline uint64_t get64(const uint8_t* p) { return uint64_t(get32(p)) << 32 | get32(p + 4); }
inline uint32_t get_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
inline void put24(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 16), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 24), put24(p + 1, v); }
inline void put48(uint8_t* p, uint64_t v) { put16(p, uint16_t(v >> 32)), put32(p + 2, uint32_t(v)); }
inline void put64(uint8_t* p, uint64_t v) { put32(p, uint32_t(v >> 32)), put32(p + 4, uint32_t(v)); }
inline void put_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v >> 16), p[3] = uint8_t(v >> 24);
}

// Header sizes (IBTA Vol 1 ch 9.2-9.5; Ethernet IEEE 802.3 / 802.1Q; RFC 791; RFC 768).
inline constexpr size_t kEthHdr = 14, kVlanTag = 4, kIpv4Hdr = 20, kUdpHdr = 8, kBth = 12;
inline constexpr size_t kReth = 16, kAeth = 4, kDeth = 8, kImmDt = 4, kIeth = 4;
inline constexpr size_t kAtomicEth = 28, kAtomicAckEth = 8;
inline constexpr size_t kCnpReserved = 16;  // RoCEv2 CNP: 16 reserved bytes after the BTH (IBTA Annex A17)
inline constexpr size_t kIcrc = 4;
inline constexpr size_t kMad = 256;         // IBTA Vol 1 ch 13.4: MADs are 256 bytes
inline constexpr size_t kMadHdr = 24;       // common MAD header (IBTA Vol 1 13.4)
inline constexpr size_t kMinFrameNoFcs = 60;
inline constexpr uint8_t kNone = 0xff;

// Extended transport headers that follow the BTH for one opcode, in the
// IBTA order (Vol 1 9.2, Table 35/38: BTH, DETH, RETH, AtomicETH, AETH,
// AtomicAckETH, ImmDt, IETH). Offsets are from the end of the BTH.
struct OpLayout {
  bool valid = false;
  uint8_t ext_len = 0;
  uint8_t reth = kNone, aeth = kNone, deth = kNone;
};

constexpr OpLayout op_layout(uint8_t opcode) {
  OpLayout L;
  L.valid = true;
  switch (opcode) {
    // RC and UC (0x20 + same code) SEND/WRITE without extra headers; RC READ RESPONSE MIDDLE.
    case 0x00: case 0x01: case 0x02: case 0x04: case 0x07: case 0x08: case 0x0e:
    case 0x20: case 0x21: case 0x22: case 0x24: case 0x27: case 0x28:
      break;
    // ... with Immediate: ImmDt; SEND with Invalidate: IETH (same size).
    case 0x03: case 0x05: case 0x09: case 0x16: case 0x17:
    case 0x23: case 0x25: case 0x29:
      L.ext_len = kImmDt;
      break;
    case 0x06: case 0x0a: case 0x0c: case 0x26: case 0x2a:  // WRITE FIRST/ONLY, READ REQUEST: RETH
      L.ext_len = kReth, L.reth = 0;
      break;
    case 0x0b: case 0x2b:  // WRITE ONLY with Immediate: RETH + ImmDt
      L.ext_len = kReth + kImmDt, L.reth = 0;
      break;
    case 0x0d: case 0x0f: case 0x10: case 0x11:  // READ RESPONSE FIRST/LAST/ONLY, ACKNOWLEDGE: AETH
      L.ext_len = kAeth, L.aeth = 0;
      break;
    case 0x12:  // ATOMIC ACKNOWLEDGE: AETH + AtomicAckETH
      L.ext_len = kAeth + kAtomicAckEth, L.aeth = 0;
      break;
    case 0x13: case 0x14:  // CmpSwap, FetchAdd: AtomicETH
      L.ext_len = kAtomicEth;
      break;
    case 0x64:  // UD SEND ONLY: DETH
      L.ext_len = kDeth, L.deth = 0;
      break;
    case 0x65:  // UD SEND ONLY with Immediate: DETH + ImmDt
      L.ext_len = kDeth + kImmDt, L.deth = 0;
      break;
    case 0x81:  // RoCEv2 CNP
      L.ext_len = kCnpReserved;
      break;
    default:
      L.valid = false;
  }
  return L;
}

// Fill the CM fields of m from a 256 B CM MAD (common MAD header first):
// attribute id, TID, comm ids, and for REQ/REP the QPN and starting PSN.
void read_cm_mad(const uint8_t* mad, Meta& m);

}  // namespace rocesim::packet::wire

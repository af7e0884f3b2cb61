// Helpers shared by the packet tests: independent reference implementations
// (bitwise CRC, ICRC over a fully materialized buffer) and frame fixtures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "packet/build.h"
#include "packet/packet.h"

namespace rocesim::packet::test {

// The ConnectX-4 Lx CNP from scapy's test/contrib/roce.uts (REFERENCE.md),
// Ethernet header to ICRC, no FCS.
inline constexpr const char* kCnpVector =
    "e41d2dab2bc27cfe90643b32 0800 45c2003c718c4000401191610a0011010a001201"
    "000012b700280000 8100ffff4000011800000000 00000000000000000000000000000000 82fd002a";

inline std::vector<uint8_t> hex(const std::string& s) {
  std::vector<uint8_t> out;
  int hi = -1;
  for (char c : s) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else continue;
    if (hi < 0) hi = v;
    else out.push_back(uint8_t(hi << 4 | v)), hi = -1;
  }
  return out;
}

// Plain bitwise CRC-32 (reflected 0xEDB88320), no tables: the reference.
inline uint32_t ref_crc_raw(uint32_t reg, const uint8_t* d, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    reg ^= d[i];
    for (int b = 0; b < 8; ++b) reg = (reg & 1) ? (reg >> 1) ^ 0xEDB88320u : reg >> 1;
  }
  return reg;
}
inline uint32_t ref_crc32(const std::vector<uint8_t>& v) { return ~ref_crc_raw(~0u, v.data(), v.size()); }

// ICRC over a materialized IPv4 datagram [ip, ip + len) whose last 4 bytes
// are the ICRC itself: copy, mask the variant fields, prepend 8 x 0xFF.
inline uint32_t ref_icrc(const uint8_t* ip, size_t len_with_icrc) {
  std::vector<uint8_t> buf(8, 0xff);
  buf.insert(buf.end(), ip, ip + len_with_icrc - 4);
  const size_t ihl = size_t(ip[0] & 0xf) * 4;
  uint8_t* q = buf.data() + 8;
  q[1] = 0xff;                          // TOS
  q[8] = 0xff;                          // TTL
  q[10] = q[11] = 0xff;                 // IP checksum
  q[ihl + 6] = q[ihl + 7] = 0xff;       // UDP checksum
  q[ihl + 8 + 4] = 0xff;                // BTH FECN/BECN/resv6
  return ~ref_crc_raw(~0u, buf.data(), buf.size());
}

// The frame bytes without FCS, assembled here independently of serialize().
inline std::vector<uint8_t> materialize(const Packet& p) {
  std::vector<uint8_t> v(p.hdr, p.hdr + p.hdr_len);
  v.resize(v.size() + p.payload_len, 0);
  v.insert(v.end(), p.trailer, p.trailer + p.trailer_len);
  v.resize(v.size() + p.pad_len, 0);
  return v;
}

inline EthSpec eth_spec(bool vlan = false, uint8_t pcp = 3, uint16_t vid = 100) {
  EthSpec e;
  e.dst = 0x021122334455ull;
  e.src = 0x02aabbccddeeull;
  e.vlan = vlan;
  e.pcp = pcp;
  e.vid = vid;
  return e;
}

inline Ipv4Spec ip_spec() {
  Ipv4Spec ip;
  ip.src = 0x0a000101;  // 10.0.1.1
  ip.dst = 0x0a000202;  // 10.0.2.2
  ip.dscp = 26;
  ip.ecn = 0b10;
  ip.ttl = 63;
  ip.id = 0x1234;
  return ip;
}

// Extended-header bytes each opcode carries after the BTH (IBTA Vol 1 9.2),
// written out here independently of the library's table.
struct OpCase {
  uint8_t opcode;
  size_t ext;
  bool reth, aeth;
};
inline const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> v = {
      {0x00, 0, false, false},  {0x01, 0, false, false},  {0x02, 0, false, false},  {0x03, 4, false, false},
      {0x04, 0, false, false},  {0x05, 4, false, false},  {0x06, 16, true, false},  {0x07, 0, false, false},
      {0x08, 0, false, false},  {0x09, 4, false, false},  {0x0a, 16, true, false},  {0x0b, 20, true, false},
      {0x0c, 16, true, false},  {0x0d, 4, false, true},   {0x0e, 0, false, false},  {0x0f, 4, false, true},
      {0x10, 4, false, true},   {0x11, 4, false, true},   {0x12, 12, false, true},  {0x13, 28, false, false},
      {0x14, 28, false, false}, {0x16, 4, false, false},  {0x17, 4, false, false},  {0x20, 0, false, false},
      {0x24, 0, false, false},  {0x26, 16, true, false},  {0x2a, 16, true, false},  {0x2b, 20, true, false},
      {0x64, 8, false, false},  {0x65, 12, false, false}, {0x81, 16, false, false},
  };
  return v;
}

}  // namespace rocesim::packet::test

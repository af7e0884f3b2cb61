// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) with fast extension by
// runs of zero bytes, so payload held as a length costs O(1) amortized.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rocesim::packet {

// Raw register update: no pre/post inversion. crc32(data) = ~crc32_update(~0u, data).
uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t len);
// Raw register after feeding n zero bytes.
uint32_t crc32_zeros(uint32_t reg, uint64_t n);
// Standard CRC-32 (as zlib crc32(0, data, len)).
uint32_t crc32(const uint8_t* data, size_t len);

// IPv4 header checksum over len bytes (the checksum field included as it is);
// returns the 16-bit ones'-complement sum complemented. A valid header gives 0.
uint16_t ipv4_checksum(const uint8_t* hdr, size_t len);

// RoCEv2 ICRC of a frame's IPv4 packet: ip points at the IPv4 header,
// ip_hdr_bytes real bytes follow it (IP, UDP, BTH, ext headers), then
// payload_zeros zero bytes of payload. Returns the ICRC value; it goes on the
// wire least-significant byte first.
uint32_t roce_icrc(const uint8_t* ip, size_t ip_hdr_bytes, uint64_t payload_zeros);

}  // namespace rocesim::packet

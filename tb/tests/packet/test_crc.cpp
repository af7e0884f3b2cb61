// CRC-32, zero-run extension, IPv4 checksum and RoCEv2 ICRC against
// independent references and published vectors.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "packet/crc.h"
#include "test_util.h"

namespace rocesim::packet {
namespace {

using test::hex;
using test::ref_crc_raw;

using test::kCnpVector;

TEST(Crc32, PublishedCheckValues) {
  const char* s = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);  // the CRC-32 "check" value
  const char* fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(fox), std::strlen(fox)), 0x414FA339u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
}

TEST(Crc32, SlicingMatchesBitwiseForAllLengthsAndAlignments) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(300);
  for (auto& b : buf) b = uint8_t(rng());
  for (size_t off = 0; off < 8; ++off)
    for (size_t len = 0; len + off <= 140; ++len) {
      const uint32_t reg = rng();
      ASSERT_EQ(crc32_update(reg, buf.data() + off, len), ref_crc_raw(reg, buf.data() + off, len))
          << "off " << off << " len " << len;
    }
}

TEST(Crc32, ZerosMatchesByteLoop) {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> ns = {0, 1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 1024, 4095, 4096, 4097, 9000};
  for (int i = 0; i < 40; ++i) ns.push_back(rng() % 20000);
  const std::vector<uint8_t> zeros(20000, 0);
  for (uint64_t n : ns) {
    for (uint32_t reg : {0xffffffffu, 0x12345678u, 0x80000000u, 0x00000001u, uint32_t(rng())}) {
      const uint32_t want = ref_crc_raw(reg, zeros.data(), n);
      ASSERT_EQ(crc32_zeros(reg, n), want) << "n " << n << " reg " << reg;
      ASSERT_EQ(crc32_zeros(reg, n), want) << "cached, n " << n;  // second call hits the cache
    }
  }
}

TEST(Crc32, ZerosSurvivesCacheEvictions) {
  // Many distinct lengths map onto the same slots; results must not mix up.
  const std::vector<uint8_t> zeros(5000, 0);
  for (int round = 0; round < 2; ++round)
    for (uint64_t n = 32; n < 5000; n += 37) ASSERT_EQ(crc32_zeros(0xdeadbeef, n), ref_crc_raw(0xdeadbeef, zeros.data(), n));
}

TEST(Crc32, ZerosComposesForHugeLengths) {
  // x^(8a) * x^(8b) = x^(8(a+b)): checks the high bits of the exponent table.
  const uint64_t a = (uint64_t(1) << 40) + 12345, b = (uint64_t(1) << 61) + 999;
  const uint32_t reg = 0xa5a5a5a5u;
  EXPECT_EQ(crc32_zeros(crc32_zeros(reg, a), b), crc32_zeros(reg, a + b));
  EXPECT_EQ(crc32_zeros(crc32_zeros(reg, 1000000), 24), crc32_zeros(reg, 1000024));
  // A nonzero register never becomes zero by shifting in zeros (x is invertible mod P).
  EXPECT_NE(crc32_zeros(reg, ~uint64_t(0)), 0u);
}

TEST(Crc32, MegabyteOfZerosMatchesTableLoop) {
  const std::vector<uint8_t> zeros(1 << 20, 0);
  EXPECT_EQ(crc32_zeros(~0u, zeros.size()), crc32_update(~0u, zeros.data(), zeros.size()));
}

TEST(Ipv4Checksum, Rfc1071Example) {
  // 45 00 00 73 00 00 40 00 40 11 [b8 61] c0 a8 00 01 c0 a8 00 c7
  auto h = hex("450000730000400040110000c0a80001c0a800c7");
  EXPECT_EQ(ipv4_checksum(h.data(), h.size()), 0xb861);
  h[10] = 0xb8, h[11] = 0x61;
  EXPECT_EQ(ipv4_checksum(h.data(), h.size()), 0);
}

TEST(Ipv4Checksum, EveryLengthMatchesTheWordByWordDefinition) {
  // RFC 1071 as written: the one's complement of the one's complement sum
  // of the 16-bit big-endian words, an odd last byte padded with a zero.
  // Lengths 0..64 cover every tail (0..3 bytes after the 4-byte steps) and
  // bytes of all ones (the sums that carry most).
  auto reference = [](const uint8_t* b, size_t n) {
    uint32_t s = 0;
    for (size_t i = 0; i < n; i += 2) {
      s += uint32_t(b[i]) << 8 | (i + 1 < n ? b[i + 1] : 0);
      s = (s & 0xffff) + (s >> 16);
    }
    return static_cast<uint16_t>(~s);
  };
  std::vector<uint8_t> ones(64, 0xff), mixed(64);
  for (size_t i = 0; i < mixed.size(); ++i) mixed[i] = uint8_t(i * 73 + 41);
  for (size_t n = 0; n <= 64; ++n) {
    EXPECT_EQ(ipv4_checksum(ones.data(), n), reference(ones.data(), n)) << n;
    EXPECT_EQ(ipv4_checksum(mixed.data(), n), reference(mixed.data(), n)) << n;
  }
}

TEST(Icrc, ConnectX4CnpVector) {
  const auto f = hex(kCnpVector);
  ASSERT_EQ(f.size(), 74u);
  const uint8_t* ip = f.data() + 14;
  EXPECT_EQ(ipv4_checksum(ip, 20), 0) << "vector's IPv4 header checksum must verify";
  const uint32_t icrc = roce_icrc(ip, 60 - 4, 0);
  uint8_t wire[4];
  for (int i = 0; i < 4; ++i) wire[i] = uint8_t(icrc >> (8 * i));  // little-endian on the wire
  EXPECT_EQ(wire[0], 0x82);
  EXPECT_EQ(wire[1], 0xfd);
  EXPECT_EQ(wire[2], 0x00);
  EXPECT_EQ(wire[3], 0x2a);
  EXPECT_EQ(icrc, test::ref_icrc(ip, 60));
  // The 16 reserved bytes as "payload zeros" give the same result.
  EXPECT_EQ(roce_icrc(ip, 60 - 4 - 16, 16), icrc);
}

TEST(Icrc, PayloadZerosEqualMaterializedZeros) {
  auto f = hex(kCnpVector);
  std::vector<uint8_t> ip(f.begin() + 14, f.begin() + 14 + 40);  // IP+UDP+BTH
  for (uint64_t n : {0ull, 3ull, 40ull, 1024ull, 4096ull}) {
    std::vector<uint8_t> full = ip;
    full.resize(ip.size() + n + 4, 0);
    EXPECT_EQ(roce_icrc(ip.data(), ip.size(), n), test::ref_icrc(full.data(), full.size())) << n;
  }
}

}  // namespace
}  // namespace rocesim::packet

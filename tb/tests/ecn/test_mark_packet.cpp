// The marking decision applied to real RoCEv2 frames: a marked frame is CE,
// its IPv4 checksum, ICRC and FCS all verify (RFC 3168 section 5 rewrites
// TOS; the ICRC masks TOS); an unmarked frame is byte-identical.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "ecn/apply.h"
#include "ecn/marker.h"
#include "packet/build.h"
#include "packet/parse.h"

namespace rocesim::ecn {
namespace {

using packet::DropReason;
using packet::Packet;

// RFC 1071 over the IPv4 header: a valid header sums to 0xffff.
uint16_t ones_sum(const uint8_t* h, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i + 1 < n; i += 2) s += uint32_t(h[i] << 8 | h[i + 1]);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(s);
}

std::vector<uint8_t> wire(const Packet& p) {
  std::vector<uint8_t> v(p.frame_len_no_fcs());
  v.resize(p.serialize(v.data(), v.size()));
  for (int i = 0; i < 4; ++i) v.push_back(uint8_t(p.fcs >> (8 * i)));
  return v;
}

void build(Packet& p, uint8_t ecn, bool vlan, uint32_t payload) {
  packet::EthSpec eth;
  eth.dst = 0x021122334455ull;
  eth.src = 0x02aabbccddeeull;
  eth.vlan = vlan;
  eth.pcp = 3;
  eth.vid = 10;
  packet::Ipv4Spec ip;
  ip.src = 0x0a000101;
  ip.dst = 0x0a000202;
  ip.dscp = 26;
  ip.ecn = ecn;
  ip.ttl = 63;
  ip.id = 0x4321;
  packet::BthSpec bth;
  bth.opcode = packet::op::kWriteMiddle;
  bth.dest_qp = 0x123456;
  bth.psn = 0xabcdef;
  packet::build_roce(p, eth, ip, 49152, bth, nullptr, nullptr, payload);
}

MarkerConfig threshold(uint64_t k) {
  MarkerConfig c;
  c.mode = MarkerConfig::Mode::threshold;
  c.k = k;
  return c;
}

TEST(MarkPacket, MarkedFrameIsCeAndStillVerifies) {
  for (bool vlan : {false, true})
    for (uint8_t ect : {codepoint::kEct0, codepoint::kEct1})
      for (uint32_t payload : {0u, 1024u, 4096u}) {
        Packet p;
        build(p, ect, vlan, payload);
        ASSERT_EQ(packet::parse(p), DropReason::none);
        const size_t l3 = vlan ? 18 : 14;
        const std::vector<uint8_t> before = wire(p);
        const uint8_t icrc[4] = {p.trailer[0], p.trailer[1], p.trailer[2], p.trailer[3]};

        Marker m(threshold(100000), core::Rng(1, "q"));
        const Decision d = mark_packet(m, p, 100001);
        ASSERT_TRUE(d.mark);

        EXPECT_EQ(p.hdr[l3 + 1], uint8_t(26 << 2 | codepoint::kCe)) << "DSCP kept, ECN = CE";
        EXPECT_EQ(ones_sum(p.hdr + l3, 20), 0xffff) << "IPv4 checksum verifies";
        EXPECT_EQ(0, std::memcmp(icrc, p.trailer, 4)) << "ICRC unchanged (masks TOS)";
        // Only TOS (byte 1), the IPv4 checksum (10, 11) and the FCS differ.
        const std::vector<uint8_t> after = wire(p);
        ASSERT_EQ(after.size(), before.size());
        for (size_t i = 0; i < after.size(); ++i) {
          const bool may = i == l3 + 1 || i == l3 + 10 || i == l3 + 11 || i + 4 >= after.size();
          if (!may) {
            ASSERT_EQ(after[i], before[i]) << "byte " << i;
          }
        }

        packet::ParseOptions opt;
        opt.check_fcs = true;
        opt.check_icrc = true;
        ASSERT_EQ(packet::parse(p, opt), DropReason::none) << "vlan " << vlan << " payload " << payload;
        EXPECT_EQ(p.meta.ecn, 3);
        EXPECT_EQ(p.meta.dscp, 26);
        EXPECT_EQ(p.meta.psn, 0xabcdefu);
      }
}

TEST(MarkPacket, UnmarkedFramesAreByteIdentical) {
  struct Case {
    uint8_t ecn;
    uint64_t q;
    bool would_mark;
  };
  // not-ECT over K (fires, not marked), CE over K (stays CE), ECT(0) at K.
  for (const Case c : {Case{codepoint::kNotEct, 200000, true}, Case{codepoint::kCe, 200000, true},
                       Case{codepoint::kEct0, 100000, false}}) {
    Packet p;
    build(p, c.ecn, true, 1024);
    ASSERT_EQ(packet::parse(p), DropReason::none);
    const std::vector<uint8_t> before = wire(p);
    Marker m(threshold(100000), core::Rng(1, "q"));
    const Decision d = mark_packet(m, p, c.q);
    EXPECT_FALSE(d.mark);
    EXPECT_EQ(d.would_mark, c.would_mark);
    EXPECT_EQ(wire(p), before) << "ecn " << int(c.ecn);
    ASSERT_EQ(packet::parse(p), DropReason::none);
    EXPECT_EQ(p.meta.ecn, c.ecn);
    EXPECT_EQ(m.counters().would_mark, c.would_mark ? 1u : 0u);
  }
}

// A WRED queue over many frames: exactly the frames the decisions marked are
// CE after parsing, and every frame still verifies.
TEST(MarkPacket, WredStreamOfFrames) {
  MarkerConfig c;
  c.mode = MarkerConfig::Mode::wred;
  c.kmin = 100000;
  c.kmax = 400000;
  c.pmax = 0.2;
  Marker m(c, core::Rng(3, "sw0.eth1.q3"));
  core::Rng qs(4, "trace");
  uint64_t ce = 0;
  for (int i = 0; i < 2000; ++i) {
    Packet p;
    const uint8_t ecn = uint8_t(qs.below(4));
    build(p, ecn, i & 1, uint32_t(qs.below(4097)));
    const Decision d = mark_packet(m, p, qs.below(500000));
    ASSERT_EQ(packet::parse(p), DropReason::none) << i;
    ASSERT_EQ(p.meta.ecn, d.ecn_out) << i;
    ASSERT_EQ(p.meta.ecn, d.mark ? codepoint::kCe : ecn) << i;
    ce += d.mark;
  }
  EXPECT_EQ(m.counters().marked, ce);
  EXPECT_GT(ce, 100u);
}

}  // namespace
}  // namespace rocesim::ecn

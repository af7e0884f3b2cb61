// Builders: exact bytes (against a captured CNP), ICRC/FCS against independent
// references, padding, and round trips through the parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "packet/build.h"
#include "packet/crc.h"
#include "packet/parse.h"
#include "test_util.h"

namespace rocesim::packet {
namespace {

using test::hex;
using test::materialize;

using test::kCnpVector;

std::vector<uint8_t> serialized(const Packet& p) {
  std::vector<uint8_t> v(p.frame_len_no_fcs() + 16, 0xee);
  const size_t n = p.serialize(v.data(), v.size());
  EXPECT_EQ(n, p.frame_len_no_fcs());
  v.resize(n);
  return v;
}

void build_cnp_vector(Packet& p) {
  EthSpec e;
  e.dst = 0xe41d2dab2bc2ull;
  e.src = 0x7cfe90643b32ull;
  Ipv4Spec ip;
  ip.src = 0x0a001101;
  ip.dst = 0x0a001201;
  ip.dscp = 48;
  ip.ecn = 2;
  ip.ttl = 64;
  ip.id = 0x718c;
  ip.dont_fragment = true;
  // The vector's UDP header is 0000 12b7: source port 0, destination 4791.
  build_cnp(p, e, ip, 0x0000, 0x000118);
}

TEST(Cnp, ParseCapturedVector) {
  const auto f = hex(kCnpVector);
  Meta m;
  ASSERT_EQ(parse_bytes(f.data(), f.size(), m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::cnp);
  EXPECT_EQ(m.opcode, 0x81);
  EXPECT_EQ(m.pkey, 0xffff);
  EXPECT_TRUE(m.becn);
  EXPECT_FALSE(m.fecn);
  EXPECT_EQ(m.dest_qp, 0x000118u);
  EXPECT_EQ(m.psn, 0u);
  EXPECT_EQ(m.dscp, 48);
  EXPECT_EQ(m.ecn, 2);
  EXPECT_EQ(m.src_ip, 0x0a001101u);  // 10.0.17.1
  EXPECT_EQ(m.dst_ip, 0x0a001201u);  // 10.0.18.1
  EXPECT_EQ(m.dst_mac, 0xe41d2dab2bc2ull);
  EXPECT_EQ(m.src_mac, 0x7cfe90643b32ull);
  EXPECT_EQ(m.sport, 0);
  EXPECT_EQ(m.dport, 4791);
  EXPECT_EQ(m.ip_total_len, 60);
  EXPECT_EQ(m.ttl, 64);
  EXPECT_EQ(m.l3_offset, 14);
  EXPECT_EQ(m.l4_offset, 34);
  EXPECT_EQ(m.bth_offset, 42);
  EXPECT_EQ(m.l4_payload_len, 0u);
}

TEST(Cnp, BuilderReproducesCapturedVector) {
  Packet p;
  build_cnp_vector(p);
  const auto want = hex(kCnpVector);
  EXPECT_EQ(serialized(p), want);
  EXPECT_EQ(p.frame_len(), 78u);
  EXPECT_EQ(p.pad_len, 0);
  EXPECT_EQ(p.trailer_len, 4);
  EXPECT_EQ(p.fcs, test::ref_crc32(want));
  Meta m;
  ASSERT_EQ(parse_bytes(want.data(), want.size(), m), DropReason::none);
  EXPECT_EQ(p.meta, m) << "builder meta must equal parser meta";
}

TEST(Icrc, WriteFirstMatchesReferenceOverMaterializedFrame) {
  for (uint32_t payload : {0u, 1u, 256u, 1024u, 4096u}) {
    Packet p;
    BthSpec b;
    b.opcode = op::kWriteFirst;
    b.dest_qp = 0xabcdef;
    b.psn = 0x123456;
    b.pad_count = ib_pad_count(payload);
    RethSpec r{0x1122334455667788ull, 0xcafef00d, 1u << 20};
    build_roce(p, test::eth_spec(true, 3, 7), test::ip_spec(), 0xc000, b, &r, nullptr, payload);
    const auto f = materialize(p);
    const size_t l3 = 18;
    ASSERT_EQ(f.size(), l3 + p.meta.ip_total_len + p.pad_len);
    const uint32_t want = test::ref_icrc(f.data() + l3, p.meta.ip_total_len);
    const uint8_t* icrc = f.data() + l3 + p.meta.ip_total_len - 4;
    EXPECT_EQ(uint32_t(icrc[0] | icrc[1] << 8 | icrc[2] << 16 | uint32_t(icrc[3]) << 24), want) << payload;
    EXPECT_EQ(p.fcs, test::ref_crc32(f)) << payload;
  }
}

TEST(Fcs, SerializeBytesGiveStoredFcs) {
  std::vector<Packet> ps(6);
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(ps[0], test::eth_spec(), test::ip_spec(), 1, b, nullptr, nullptr, 0);
  build_roce(ps[1], test::eth_spec(true), test::ip_spec(), 2, b, nullptr, nullptr, 4096);
  build_cnp(ps[2], test::eth_spec(true, 6), test::ip_spec(), 3, 77);
  CmSpec c;
  build_cm(ps[3], test::eth_spec(), test::ip_spec(), 4, c);
  const uint16_t t[8] = {1, 2, 3, 4, 5, 6, 7, 0xffff};
  build_pfc(ps[4], 0x02aabbccddeeull, 0x00ff, t);
  b.opcode = op::kAck;
  AethSpec a{0x60, 99};
  build_roce(ps[5], test::eth_spec(), test::ip_spec(), 5, b, nullptr, &a, 0);
  for (const Packet& p : ps) {
    const auto bytes = serialized(p);
    EXPECT_EQ(bytes, materialize(p));
    EXPECT_EQ(crc32(bytes.data(), bytes.size()), p.fcs);
    EXPECT_EQ(compute_fcs(p), p.fcs);
    EXPECT_EQ(test::ref_crc32(bytes), p.fcs);
  }
}

TEST(Fcs, SerializeRefusesSmallBuffer) {
  Packet p;
  build_cnp_vector(p);
  std::vector<uint8_t> out(p.frame_len_no_fcs() - 1, 0xee);
  EXPECT_EQ(p.serialize(out.data(), out.size()), 0u);
  EXPECT_EQ(out[0], 0xee);
}

TEST(Padding, PfcIsExactly64Bytes) {
  Packet p;
  const uint16_t t[8] = {};
  build_pfc(p, 0x020000000001ull, 0x0008, t);
  EXPECT_EQ(p.hdr_len, 34);
  EXPECT_EQ(p.pad_len, 26);
  EXPECT_EQ(p.frame_len(), 64u);
  EXPECT_EQ(p.wire_bytes(), 84u);
  const auto f = serialized(p);
  ASSERT_EQ(f.size(), 60u);
  for (size_t i = 34; i < 60; ++i) EXPECT_EQ(f[i], 0) << i;
}

TEST(Padding, SendOnlyWithoutPayloadIsPaddedAfterIcrc) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 0);
  // 14 + 20 + 8 + 12 + ICRC 4 = 58 -> 2 pad bytes -> 64 with FCS.
  EXPECT_EQ(p.hdr_len, 54);
  EXPECT_EQ(p.trailer_len, 4);
  EXPECT_EQ(p.pad_len, 2);
  EXPECT_EQ(p.frame_len(), 64u);
  EXPECT_EQ(p.meta.ip_total_len, 44);
  const auto f = serialized(p);
  EXPECT_EQ(f[58], 0);
  EXPECT_EQ(f[59], 0);
  EXPECT_EQ(f[54], p.trailer[0]);  // ICRC precedes the pad
  ASSERT_EQ(parse(p), DropReason::none);
  Meta m;
  EXPECT_EQ(parse_bytes(f.data(), f.size(), m), DropReason::none) << "padding to 60 B is legal";
  EXPECT_EQ(parse_bytes(f.data(), 58, m), DropReason::none) << "unpadded, as a host capture shows it";
  // VLAN adds 4 bytes: 62 B body, no pad.
  build_roce(p, test::eth_spec(true), test::ip_spec(), 9, b, nullptr, nullptr, 0);
  EXPECT_EQ(p.pad_len, 0);
  EXPECT_EQ(p.frame_len(), 66u);
}

TEST(Vlan, PcpAndVidRoundTrip) {
  for (uint8_t pcp = 0; pcp < 8; ++pcp) {
    Packet p;
    BthSpec b;
    b.opcode = op::kWriteOnly;
    RethSpec r{};
    const uint16_t vid = uint16_t(1 + pcp * 511);
    build_roce(p, test::eth_spec(true, pcp, vid), test::ip_spec(), 9, b, &r, nullptr, 100);
    EXPECT_EQ(p.hdr[12], 0x81);
    EXPECT_EQ(p.hdr[13], 0x00);
    EXPECT_EQ(p.hdr[14] >> 5, pcp) << "PCP is the top 3 bits of the TCI";
    EXPECT_EQ((p.hdr[14] & 0x0f) << 8 | p.hdr[15], vid);
    ASSERT_EQ(parse(p), DropReason::none);
    EXPECT_TRUE(p.meta.has_vlan);
    EXPECT_EQ(p.meta.pcp, pcp);
    EXPECT_EQ(p.meta.vid, vid);
    EXPECT_EQ(p.meta.ethertype, kEtherTypeIpv4);
    EXPECT_EQ(p.meta.l3_offset, 18);
  }
}

TEST(Ipv4, HeaderFieldsAsBuilt) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(), test::ip_spec(), 0xbeef, b, nullptr, nullptr, 1000);
  const uint8_t* q = p.hdr + 14;
  EXPECT_EQ(q[0], 0x45);
  EXPECT_EQ(q[1], 26 << 2 | 2);                      // DSCP 26, ECT(0)
  EXPECT_EQ(q[2] << 8 | q[3], 20 + 8 + 12 + 1000 + 4);  // through the ICRC
  EXPECT_EQ(q[4] << 8 | q[5], 0x1234);
  EXPECT_EQ(q[6], 0x40);  // DF
  EXPECT_EQ(q[8], 63);
  EXPECT_EQ(q[9], 17);
  EXPECT_EQ(ipv4_checksum(q, 20), 0);
  const uint8_t* u = q + 20;
  EXPECT_EQ(u[0] << 8 | u[1], 0xbeef);
  EXPECT_EQ(u[2] << 8 | u[3], 4791);
  EXPECT_EQ(u[4] << 8 | u[5], 8 + 12 + 1000 + 4);
  EXPECT_EQ(u[6] << 8 | u[7], 0);
}

TEST(Bth, FlagsAndFieldsRoundTrip) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendLast;
  b.se = true;
  b.mig = true;
  b.ackreq = true;
  b.fecn = true;
  b.becn = false;
  b.pad_count = 3;
  b.pkey = 0x8001;
  b.dest_qp = 0xfedcba;
  b.psn = 0xffffff;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 61);
  const uint8_t* t = p.hdr + 42;
  EXPECT_EQ(t[0], op::kSendLast);
  EXPECT_EQ(t[1], 0x80 | 0x40 | 3 << 4);  // SE M PadCnt TVer=0
  EXPECT_EQ(t[2] << 8 | t[3], 0x8001);
  EXPECT_EQ(t[4], 0x80);  // FECN
  EXPECT_EQ(t[5] << 16 | t[6] << 8 | t[7], 0xfedcba);
  EXPECT_EQ(t[8], 0x80);  // AckReq
  EXPECT_EQ(t[9] << 16 | t[10] << 8 | t[11], 0xffffff);
  EXPECT_EQ(p.payload_len, 64u) << "payload plus PadCnt bytes";
  const Meta built = p.meta;
  ASSERT_EQ(parse(p), DropReason::none);
  EXPECT_EQ(p.meta, built);
  EXPECT_EQ(p.meta.l4_payload_len, 61u);
  EXPECT_EQ(p.meta.pad_count, 3);
  EXPECT_TRUE(p.meta.se && p.meta.mig && p.meta.ackreq && p.meta.fecn && !p.meta.becn);
}

TEST(Opcodes, EveryClassRoundTripsThroughParse) {
  for (const auto& c : test::op_cases()) {
    SCOPED_TRACE(testing::Message() << "opcode 0x" << std::hex << int(c.opcode));
    Packet p;
    BthSpec b;
    b.opcode = c.opcode;
    b.dest_qp = 0x000100 + c.opcode;
    b.psn = 0x00a000 + c.opcode;
    RethSpec r{0x0000700000001000ull + c.opcode, 0x1000u + c.opcode, 4096u + c.opcode};
    AethSpec a{uint8_t(0x1f), 0x00beefu + c.opcode};
    const uint32_t payload = c.opcode == op::kCnp ? 0 : 256;
    build_roce(p, test::eth_spec(true), test::ip_spec(), 9, b, &r, &a, payload);
    EXPECT_EQ(p.hdr_len, 18 + 20 + 8 + 12 + c.ext);
    const Meta built = p.meta;
    ASSERT_EQ(parse(p), DropReason::none);
    EXPECT_EQ(p.meta, built);
    EXPECT_EQ(p.meta.kind, c.opcode == op::kCnp ? FrameKind::cnp : FrameKind::roce);
    EXPECT_EQ(p.meta.opcode, c.opcode);
    EXPECT_EQ(p.meta.dest_qp, b.dest_qp);
    EXPECT_EQ(p.meta.psn, b.psn);
    EXPECT_EQ(p.meta.l4_payload_len, payload);
    EXPECT_EQ(p.meta.has_reth, c.reth);
    EXPECT_EQ(p.meta.has_aeth, c.aeth);
    if (c.reth) {
      EXPECT_EQ(p.meta.reth.va, r.va);
      EXPECT_EQ(p.meta.reth.rkey, r.rkey);
      EXPECT_EQ(p.meta.reth.dma_len, r.dma_len);
      const uint8_t* x = p.hdr + 58;  // RETH follows the BTH directly
      EXPECT_EQ(x[7], uint8_t(r.va));
      EXPECT_EQ(x[15], uint8_t(r.dma_len));
    }
    if (c.aeth) {
      EXPECT_EQ(p.meta.aeth_syndrome, 0x1f);
      EXPECT_EQ(p.meta.aeth_msn, a.msn);
      EXPECT_EQ(p.hdr[58], 0x1f);
    }
    // Raw bytes parse the same way as the Packet.
    const auto f = materialize(p);
    Meta m;
    ASSERT_EQ(parse_bytes(f.data(), f.size(), m), DropReason::none);
    EXPECT_EQ(m, p.meta);
  }
}

TEST(Cm, ReqRepRtuAndOthersRoundTrip) {
  struct Case {
    uint16_t attr;
    bool has_remote, has_qpn;
  };
  const Case cases[] = {{cm::kReq, false, true}, {cm::kRep, true, true}, {cm::kRtu, true, false},
                        {cm::kRej, true, false}, {cm::kDreq, true, false}, {cm::kDrep, true, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attr);
    CmSpec s;
    s.attr_id = c.attr;
    s.tid = 0x0102030405060708ull + c.attr;
    s.local_comm_id = 0x11223344u + c.attr;
    s.remote_comm_id = 0x55667788u;
    s.local_qpn = 0x00abcd12;
    s.starting_psn = 0x00654321;
    s.flow_label = 0xabcde;
    Packet p;
    build_cm(p, test::eth_spec(true, 6), test::ip_spec(), 0x1234, s);
    EXPECT_EQ(p.hdr_len, 18 + 20 + 8 + 12 + 8 + 256);
    EXPECT_EQ(p.payload_len, 0u);
    EXPECT_EQ(p.meta.ip_total_len, 20 + 8 + 12 + 8 + 256 + 4);
    const uint8_t* bth = p.hdr + 46;
    EXPECT_EQ(bth[0], 0x64);
    EXPECT_EQ(bth[5] << 16 | bth[6] << 8 | bth[7], 1);
    const uint8_t* deth = bth + 12;
    EXPECT_EQ(uint32_t(deth[0]) << 24 | deth[1] << 16 | deth[2] << 8 | deth[3], 0x80010000u);
    EXPECT_EQ(deth[7], 1);  // source QP 1
    const uint8_t* mad = deth + 8;
    EXPECT_EQ(mad[0], 1);
    EXPECT_EQ(mad[1], 0x07);
    EXPECT_EQ(mad[2], 2);
    EXPECT_EQ(mad[3], 0x03);
    EXPECT_EQ(mad[16] << 8 | mad[17], c.attr);
    const uint8_t* d = mad + 24;
    // IBTA Vol 1 ch 12.6 offsets, checked on the raw bytes.
    EXPECT_EQ(uint32_t(d[0]) << 24 | d[1] << 16 | d[2] << 8 | d[3], s.local_comm_id);
    if (c.attr == cm::kReq) {
      EXPECT_EQ(d[32] << 16 | d[33] << 8 | d[34], 0xabcd12);
      EXPECT_EQ(d[44] << 16 | d[45] << 8 | d[46], 0x654321);
      EXPECT_EQ(d[48] << 8 | d[49], 0xffff);
      // Primary Flow Label: bits 0-19 (most significant first) of the word @88.
      EXPECT_EQ(uint32_t(d[88]) << 12 | d[89] << 4 | d[90] >> 4, 0xabcdeu);
      EXPECT_EQ(d[90] & 0x0f, 0);
      EXPECT_EQ(d[91], 0);
    }
    if (c.attr == cm::kRep) {
      EXPECT_EQ(d[12] << 16 | d[13] << 8 | d[14], 0xabcd12);
      EXPECT_EQ(d[20] << 16 | d[21] << 8 | d[22], 0x654321);
    }
    const Meta built = p.meta;
    ASSERT_EQ(parse(p), DropReason::none);
    EXPECT_EQ(p.meta, built);
    EXPECT_EQ(p.meta.kind, FrameKind::cm);
    EXPECT_EQ(p.meta.cm.attr_id, c.attr);
    EXPECT_EQ(p.meta.cm.tid, s.tid);
    EXPECT_EQ(p.meta.cm.local_comm_id, s.local_comm_id);
    EXPECT_EQ(p.meta.cm.remote_comm_id, c.has_remote ? s.remote_comm_id : 0u);
    EXPECT_EQ(p.meta.cm.local_qpn, c.has_qpn ? s.local_qpn : 0u);
    EXPECT_EQ(p.meta.cm.starting_psn, c.has_qpn ? s.starting_psn : 0u);
    EXPECT_EQ(p.meta.l4_payload_len, 256u);
    EXPECT_EQ(p.meta.dest_qp, 1u);
    EXPECT_EQ(p.meta.pcp, 6);
    const auto f = materialize(p);
    Meta m;
    ASSERT_EQ(parse_bytes(f.data(), f.size(), m), DropReason::none);
    EXPECT_EQ(m, p.meta);
  }
}

TEST(Cm, UdToQp1WithZeroPayloadIsPlainRoce) {
  // The payload is held as zeros, so its "MAD" has class 0: not CM.
  Packet p;
  BthSpec b;
  b.opcode = op::kUdSendOnly;
  b.dest_qp = 1;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 256);
  EXPECT_EQ(p.meta.kind, FrameKind::roce);
  ASSERT_EQ(parse(p), DropReason::none);
  EXPECT_EQ(p.meta.kind, FrameKind::roce);
}

TEST(Pfc, ClassEnableAndTimersRoundTrip) {
  const uint16_t t[8] = {0, 0xffff, 2, 3, 0x1234, 5, 6, 7};
  Packet p;
  build_pfc(p, 0x0000c0ffee01ull, 0x00b6, t);
  const auto f = serialized(p);
  const auto head = hex("0180c2000001 0000c0ffee01 8808 0101 00b6 0000ffff000200031234000500060007");
  ASSERT_EQ(head.size(), 34u);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), f.begin()));
  const Meta built = p.meta;
  ASSERT_EQ(parse(p), DropReason::none);
  EXPECT_EQ(p.meta, built);
  EXPECT_EQ(p.meta.kind, FrameKind::pfc);
  EXPECT_EQ(p.meta.pfc.class_enable, 0x00b6);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(p.meta.pfc.timers[i], t[i]) << i;
  EXPECT_EQ(p.meta.dst_mac, 0x0180c2000001ull);
  Meta m;
  ASSERT_EQ(parse_bytes(f.data(), f.size(), m), DropReason::none);
  EXPECT_EQ(m, p.meta);
}

TEST(Ecn, SetCeKeepsIcrcAndChecksumAndUpdatesFcs) {
  for (bool vlan : {false, true})
    for (uint32_t payload : {0u, 1000u, 4096u}) {
      Packet p;
      BthSpec b;
      b.opcode = op::kWriteMiddle;
      build_roce(p, test::eth_spec(vlan), test::ip_spec(), 9, b, nullptr, nullptr, payload);
      const size_t l3 = vlan ? 18 : 14;
      const uint32_t old_fcs = p.fcs;
      const uint8_t icrc[4] = {p.trailer[0], p.trailer[1], p.trailer[2], p.trailer[3]};
      set_ecn(p, 0b11);
      EXPECT_EQ(p.hdr[l3 + 1], 26 << 2 | 3) << "DSCP kept, ECN = CE";
      EXPECT_EQ(ipv4_checksum(p.hdr + l3, 20), 0);
      EXPECT_NE(p.fcs, old_fcs);
      const auto f = materialize(p);
      EXPECT_EQ(p.fcs, test::ref_crc32(f));
      EXPECT_EQ(0, std::memcmp(icrc, p.trailer, 4)) << "ICRC masks TOS";
      EXPECT_EQ(p.meta.ecn, 3);
      ASSERT_EQ(parse(p), DropReason::none) << "FCS, IP checksum and ICRC all verify";
      EXPECT_EQ(p.meta.ecn, 3);
      EXPECT_EQ(p.meta.dscp, 26);
    }
}

TEST(Ecn, IncrementalChecksumKeepsABadChecksumBad) {
  Packet p;
  BthSpec b;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 100);
  p.hdr[14 + 11] ^= 0x01;  // break the IP checksum
  p.fcs = compute_fcs(p);
  set_ecn(p, 0b11);
  EXPECT_NE(ipv4_checksum(p.hdr + 14, 20), 0);
  EXPECT_EQ(p.fcs, compute_fcs(p));
  EXPECT_EQ(parse(p), DropReason::bad_ip_checksum);
}

TEST(Finalize, RecomputesAfterHeaderEdit) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 512);
  p.hdr[14 + 8] = 7;         // TTL: IP checksum changes, ICRC does not
  p.hdr[42 + 11] ^= 0x55;    // PSN: ICRC changes
  EXPECT_NE(parse(p, {false, false}), DropReason::none);
  finalize(p);
  ASSERT_EQ(parse(p), DropReason::none);
  EXPECT_EQ(p.meta.ttl, 7);
  const auto f = materialize(p);
  EXPECT_EQ(test::ref_icrc(f.data() + 14, p.meta.ip_total_len),
            uint32_t(p.trailer[0] | p.trailer[1] << 8 | p.trailer[2] << 16 | uint32_t(p.trailer[3]) << 24));
}

// The RETH, CM and PFC fields share their bytes in Meta (a frame has at most
// one of them): a cleared Meta reads zero in every one, and equality sees a
// change to any one field of any of them.
TEST(MetaShared, ClearedAndComparedFieldByField) {
  const Meta z{};
  EXPECT_EQ(z.reth.va, 0u);
  EXPECT_EQ(z.cm.attr_id, 0u);
  EXPECT_EQ(z.cm.starting_psn, 0u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(z.pfc.timers[i], 0u) << i;
  std::vector<std::function<void(Meta&)>> changes = {
      [](Meta& m) { m.reth.va = 1ull << 63; },       [](Meta& m) { m.reth.rkey = 1; },
      [](Meta& m) { m.reth.dma_len = 0x80000000u; }, [](Meta& m) { m.cm.tid = 2; },
      [](Meta& m) { m.cm.local_comm_id = 3; },       [](Meta& m) { m.cm.remote_comm_id = 4; },
      [](Meta& m) { m.cm.local_qpn = 5; },           [](Meta& m) { m.cm.starting_psn = 6; },
      [](Meta& m) { m.cm.attr_id = cm::kRtu; }, [](Meta& m) { m.pfc.class_enable = 0x80; },
  };
  for (int i = 0; i < 8; ++i) changes.push_back([i](Meta& m) { m.pfc.timers[i] = 0xffff; });
  for (size_t k = 0; k < changes.size(); ++k) {
    Meta m{};
    changes[k](m);
    EXPECT_FALSE(m == z) << "change " << k;
    Meta c = m;  // a copy carries the shared bytes
    EXPECT_TRUE(c == m) << "change " << k;
  }
}

}  // namespace
}  // namespace rocesim::packet

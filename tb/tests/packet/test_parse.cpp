// Parser: drop reasons for malformed frames, and no reads past the bytes given.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
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

// Rewrite the IPv4 checksum of a raw frame at l3 after an edit.
void fix_ip_checksum(std::vector<uint8_t>& f, size_t l3) {
  const size_t ihl = size_t(f[l3] & 0xf) * 4;
  f[l3 + 10] = f[l3 + 11] = 0;
  const uint16_t c = ipv4_checksum(f.data() + l3, ihl);
  f[l3 + 10] = uint8_t(c >> 8), f[l3 + 11] = uint8_t(c);
}
// Rewrite the ICRC (last 4 bytes of the IP datagram) of a raw frame.
void fix_icrc(std::vector<uint8_t>& f, size_t l3) {
  const size_t total = size_t(f[l3 + 2]) << 8 | f[l3 + 3];
  const uint32_t c = test::ref_icrc(f.data() + l3, total);
  for (int i = 0; i < 4; ++i) f[l3 + total - 4 + i] = uint8_t(c >> (8 * i));
}

DropReason parse_vec(const std::vector<uint8_t>& f, Meta& m, bool icrc = true) {
  return parse_bytes(f.data(), f.size(), m, icrc);
}

struct Sample {
  std::string name;
  Packet p;
  size_t l3;         // IPv4 offset (0 for PFC)
  size_t min_valid;  // shortest prefix parse_bytes may accept
};

std::vector<Sample> samples() {
  std::vector<Sample> v;
  auto add = [&](std::string n, size_t l3, auto&& build) {
    Sample s;
    s.name = std::move(n);
    s.l3 = l3;
    build(s.p);
    s.min_valid = l3 ? l3 + s.p.meta.ip_total_len : 34;
    v.push_back(std::move(s));
  };
  add("write_first_vlan", 18, [](Packet& p) {
    BthSpec b;
    b.opcode = op::kWriteFirst;
    RethSpec r{1, 2, 3};
    build_roce(p, test::eth_spec(true), test::ip_spec(), 9, b, &r, nullptr, 64);
  });
  add("ack", 14, [](Packet& p) {
    BthSpec b;
    b.opcode = op::kAck;
    AethSpec a{0, 5};
    build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, &a, 0);
  });
  add("send_only_padded", 14, [](Packet& p) {
    BthSpec b;
    b.opcode = op::kSendOnly;
    build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 0);
  });
  add("cnp", 14, [](Packet& p) { build_cnp(p, test::eth_spec(), test::ip_spec(), 9, 0x42); });
  add("cm_req", 18, [](Packet& p) {
    CmSpec c;
    c.local_qpn = 0x123;
    build_cm(p, test::eth_spec(true), test::ip_spec(), 9, c);
  });
  add("pfc", 0, [](Packet& p) {
    const uint16_t t[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    build_pfc(p, 0x020000000002ull, 0xff, t);
  });
  return v;
}

TEST(Truncation, EveryPrefixOfRawBytesFailsWithoutOverread) {
  for (const Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    const auto full = materialize(s.p);
    Meta m;
    ASSERT_EQ(parse_vec(full, m), DropReason::none);
    for (size_t k = 0; k < full.size(); ++k) {
      // Exactly sized heap copy: ASan/valgrind flag any read past k.
      std::unique_ptr<uint8_t[]> buf(new uint8_t[k ? k : 1]);
      std::memcpy(buf.get(), full.data(), k);
      for (bool icrc : {true, false}) {
        const DropReason r = parse_bytes(k ? buf.get() : nullptr, k, m, icrc);
        if (k < s.min_valid) {
          EXPECT_NE(r, DropReason::none) << "prefix " << k;
        } else {
          EXPECT_EQ(r, DropReason::none) << "prefix " << k << " only lacks padding";
        }
        if (k < 14 || (s.l3 && k < s.l3 + 20)) {
          EXPECT_EQ(r, DropReason::truncated) << "prefix " << k;
        }
      }
    }
  }
}

TEST(Truncation, ParseReadsNothingPastHdrLen) {
  for (const Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    for (size_t h = 0; h < s.p.hdr_len; ++h) {
      // keep_len: the cut header bytes become payload zeros, so the IP total
      // length still matches and the header-fit checks are what must fail.
      for (bool keep_len : {false, true}) {
        Packet a = s.p, b = s.p;
        for (Packet* p : {&a, &b}) {
          p->hdr_len = uint16_t(h);
          if (keep_len) {
            p->payload_len += uint32_t(s.p.hdr_len - h);
          } else {
            p->payload_len = 0;
            p->trailer_len = 0;
          }
          const uint64_t body = uint64_t(h) + p->payload_len + p->trailer_len;
          p->pad_len = uint8_t(body < 60 ? 60 - body : 0);  // not a runt, so the headers get parsed
          p->fcs = compute_fcs(*p);
        }
        // The same prefix with different bytes after hdr_len must parse identically.
        std::memset(a.hdr + h, 0x00, a.hdr_capacity() - h);
        std::memset(b.hdr + h, 0xa5, b.hdr_capacity() - h);
        const DropReason ra = parse(a), rb = parse(b);
        EXPECT_NE(ra, DropReason::none) << "hdr prefix " << h << " keep_len " << keep_len;
        EXPECT_EQ(ra, rb) << "hdr prefix " << h;
        EXPECT_EQ(a.meta, b.meta) << "hdr prefix " << h;
        if (keep_len && s.l3 && h >= s.l3 + 20 && h < s.p.meta.bth_offset + 12u) {
          EXPECT_EQ(ra, DropReason::truncated) << "UDP/BTH cut at " << h;
        }
      }
    }
  }
}

TEST(Corruption, IpChecksum) {
  Packet p;
  BthSpec b;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 300);
  p.hdr[14 + 10] ^= 0x40;
  p.fcs = compute_fcs(p);
  EXPECT_EQ(parse(p), DropReason::bad_ip_checksum);
  Meta m;
  EXPECT_EQ(parse_vec(materialize(p), m), DropReason::bad_ip_checksum);
}

TEST(Corruption, Fcs) {
  Packet p;
  build_cnp(p, test::eth_spec(), test::ip_spec(), 9, 7);
  p.fcs ^= 0x00010000;
  EXPECT_EQ(parse(p), DropReason::bad_fcs);
  EXPECT_EQ(parse(p, {false, true}), DropReason::none) << "FCS check off";
  p.fcs ^= 0x00010000;
  p.hdr[3] ^= 1;  // any byte: destination MAC
  EXPECT_EQ(parse(p), DropReason::bad_fcs);
}

TEST(Corruption, Icrc) {
  Packet p;
  BthSpec b;
  b.opcode = op::kReadRespOnly;
  AethSpec a{0, 1};
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, &a, 2048);
  p.trailer[2] ^= 0x10;
  p.fcs = compute_fcs(p);
  EXPECT_EQ(parse(p), DropReason::bad_icrc);
  EXPECT_EQ(parse(p, {true, false}), DropReason::none) << "ICRC check off";
  Meta m;
  EXPECT_EQ(parse_vec(materialize(p), m), DropReason::bad_icrc);
  EXPECT_EQ(parse_vec(materialize(p), m, false), DropReason::none);

  // A covered field (DestQP) changed: ICRC fails even with the FCS fixed.
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, &a, 2048);
  p.hdr[42 + 7] ^= 1;
  p.fcs = compute_fcs(p);
  EXPECT_EQ(parse(p), DropReason::bad_icrc);
}

TEST(Corruption, IcrcIgnoresMaskedFields) {
  // TTL, TOS and BTH FECN/BECN are masked (rewritten by routers/switches).
  auto f = hex(kCnpVector);
  f[14 + 8] = 3;     // TTL
  f[14 + 1] = 0x03;  // TOS
  f[42 + 4] = 0x80;  // FECN instead of BECN
  fix_ip_checksum(f, 14);
  Meta m;
  EXPECT_EQ(parse_vec(f, m), DropReason::none);
  EXPECT_TRUE(m.fecn);
  EXPECT_FALSE(m.becn);
  f[14 + 4] ^= 1;  // IP identification is not masked
  fix_ip_checksum(f, 14);
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_icrc);
}

TEST(Corruption, MacControlNonPfcOpcode) {
  Packet p;
  const uint16_t t[8] = {};
  build_pfc(p, 0x020000000001ull, 1, t);
  p.hdr[14] = 0x00, p.hdr[15] = 0x01;  // 802.3x PAUSE opcode
  p.fcs = compute_fcs(p);
  EXPECT_EQ(parse(p), DropReason::bad_mac_control);
  Meta m;
  EXPECT_EQ(parse_vec(materialize(p), m), DropReason::bad_mac_control);
}

TEST(Classify, NonIpv4EtherTypesAreUnknown) {
  auto f = hex(kCnpVector);
  Meta m;
  for (uint16_t et : {0x86dd, 0x0806, 0x88cc}) {
    f[12] = uint8_t(et >> 8), f[13] = uint8_t(et);
    EXPECT_EQ(parse_vec(f, m), DropReason::none);
    EXPECT_EQ(m.kind, FrameKind::unknown);
    EXPECT_EQ(m.ethertype, et);
  }
}

TEST(Classify, Ipv4NotRoce) {
  Meta m;
  auto tcp = hex(kCnpVector);
  tcp[14 + 9] = 6;
  fix_ip_checksum(tcp, 14);
  EXPECT_EQ(parse_vec(tcp, m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::ipv4_other);
  EXPECT_EQ(m.proto, 6);

  auto udp = hex(kCnpVector);
  udp[14 + 20 + 3] = 0xb6;  // dport 4790
  EXPECT_EQ(parse_vec(udp, m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::ipv4_other);
  EXPECT_EQ(m.dport, 4790);

  // Extra bytes after a non-RoCE datagram are allowed (trailers, padding).
  udp.resize(udp.size() + 10, 0);
  EXPECT_EQ(parse_vec(udp, m), DropReason::none);

  auto frag = hex(kCnpVector);
  frag[14 + 6] = 0x20;  // MF
  fix_ip_checksum(frag, 14);
  EXPECT_EQ(parse_vec(frag, m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::ipv4_other);
  frag[14 + 6] = 0x00, frag[14 + 7] = 0x10;  // fragment offset 16
  fix_ip_checksum(frag, 14);
  EXPECT_EQ(parse_vec(frag, m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::ipv4_other);
  EXPECT_EQ(m.l4_offset, 0);
}

TEST(Classify, IpOptionsShiftUdpAndAreCoveredByIcrc) {
  auto f = hex(kCnpVector);
  f.insert(f.begin() + 34, {0x01, 0x01, 0x01, 0x01});  // 4 NOP options
  f[14] = 0x46;                                         // IHL 6
  f[14 + 3] = 64;                                       // total length 64
  fix_ip_checksum(f, 14);
  fix_icrc(f, 14);
  Meta m;
  ASSERT_EQ(parse_vec(f, m), DropReason::none);
  EXPECT_EQ(m.kind, FrameKind::cnp);
  EXPECT_EQ(m.l4_offset, 38);
  EXPECT_EQ(m.bth_offset, 46);
  EXPECT_EQ(m.dest_qp, 0x118u);
}

TEST(IpHeader, BadVersionIhlAndLengths) {
  Meta m;
  auto f = hex(kCnpVector);
  f[14] = 0x65;  // version 6
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);
  f[14] = 0x44;  // IHL 4
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);

  f = hex(kCnpVector);
  f[14 + 3] = 61;  // total length past the frame
  fix_ip_checksum(f, 14);
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);
  f[14 + 3] = 19;  // shorter than the header
  fix_ip_checksum(f, 14);
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);

  f = hex(kCnpVector);
  f.push_back(0);  // RoCE: 75 B frame but the datagram ends at 74 (not padding: > 60 B)
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);

  f = hex(kCnpVector);
  f[34 + 5] = 0x27;  // UDP length 39 instead of 40
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_ip_header);
}

TEST(IpHeader, PacketTotalLengthMustMatchBytesPresent) {
  Packet p;
  BthSpec b;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 100);
  p.payload_len += 4;  // frame carries 4 more bytes than the IP datagram
  finalize(p);
  EXPECT_EQ(parse(p), DropReason::bad_ip_header);
}

TEST(Bth, BadTransportVersionAndOpcodes) {
  Meta m;
  auto f = hex(kCnpVector);
  f[42 + 1] = 0x01;  // TVer 1
  EXPECT_EQ(parse_vec(f, m), DropReason::bad_bth);
  for (uint8_t opc : {0x15, 0x1f, 0x40, 0x80, 0xff}) {
    f = hex(kCnpVector);
    f[42] = opc;
    EXPECT_EQ(parse_vec(f, m), DropReason::bad_bth) << int(opc);
  }
  // PadCnt larger than the payload.
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 2);
  p.hdr[43] = 3 << 4;
  finalize(p);
  EXPECT_EQ(parse(p), DropReason::bad_bth);
}

TEST(Runt, PacketShorterThan64BytesIsTruncated) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, nullptr, nullptr, 0);
  p.pad_len = 0;  // 58 B + FCS = 62 B
  p.fcs = compute_fcs(p);
  EXPECT_EQ(p.frame_len(), 62u);
  EXPECT_EQ(parse(p), DropReason::truncated);
}

TEST(Names, DropReasonsAreSnakeCaseEnumerators) {
  const char* want[] = {"none",      "truncated",    "bad_fcs",           "bad_ip_header", "bad_ip_checksum",
                        "bad_icrc",  "bad_bth",      "bad_mac_control",   "ingress_limit", "egress_limit",
                        "pool_full", "headroom_overflow", "no_route",      "link_loss",     "pfc_watchdog", "nic_buffer",
                        "link_down"};
  static_assert(sizeof want / sizeof want[0] == size_t(DropReason::count_));
  for (size_t i = 0; i < size_t(DropReason::count_); ++i)
    EXPECT_STREQ(drop_reason_name(DropReason(i)), want[i]);
  EXPECT_STREQ(frame_kind_name(FrameKind::ipv4_other), "ipv4_other");
  EXPECT_STREQ(frame_kind_name(FrameKind::cnp), "cnp");
}

}  // namespace
}  // namespace rocesim::packet

namespace rocesim::packet {
namespace {

// A parse from scratch of p's bytes (nothing carried), as a reference.
DropReason fresh(const Packet& p, const ParseOptions& o, Meta* meta = nullptr) {
  Packet q = p;
  q.parsed_checks = 0;
  const DropReason r = parse(q, o);
  if (meta) *meta = q.meta;
  return r;
}

// Every change the carried-parse tests make to a frame, each given to `fn`
// with its name: every bit of every header byte alone (the FCS left as it
// was: bad_fcs) and with the FCS rewritten (the header checks then decide),
// every FCS bit, every trailer byte with its FCS, 4 more payload bytes and
// one header byte less.
template <typename Fn>
void for_each_change(const Packet& base, Fn&& fn) {
  for (size_t i = 0; i < base.hdr_len; ++i)
    for (int bit = 0; bit < 8; ++bit) {
      Packet c = base;
      c.hdr[i] ^= uint8_t(1u << bit);
      fn(c, "hdr[" + std::to_string(i) + "] bit " + std::to_string(bit));
      c.fcs = compute_fcs(c);
      fn(c, "hdr[" + std::to_string(i) + "] bit " + std::to_string(bit) + " with its FCS");
    }
  for (int bit = 0; bit < 32; ++bit) {
    Packet c = base;
    c.fcs ^= 1u << bit;
    fn(c, "fcs bit " + std::to_string(bit));
  }
  for (size_t i = 0; i < 4; ++i) {
    Packet c = base;
    c.trailer[i] ^= 0x01;
    c.fcs = compute_fcs(c);
    fn(c, "trailer[" + std::to_string(i) + "]");
  }
  {
    Packet c = base;
    c.payload_len += 4;
    c.fcs = compute_fcs(c);
    fn(c, "payload_len + 4");
  }
  {
    Packet c = base;
    if (c.hdr_len > 0) --c.hdr_len;
    c.fcs = compute_fcs(c);
    fn(c, "hdr_len - 1");
  }
}

// A frame that still carries what was recorded for other bytes (a parse, or
// its builder's sums) gets the verdict and meta of a parse from scratch.
void expect_fresh_verdict(const Packet& changed, const ParseOptions& o, const std::string& what) {
  Packet p = changed;
  ASSERT_NE(p.parsed_checks, 0) << what;
  Meta want;
  const DropReason r = fresh(p, o, &want);
  EXPECT_EQ(parse(p, o), r) << what;
  if (r == DropReason::none) {
    EXPECT_EQ(p.meta, want) << what;
  }
}

// The parse carried from hop to hop: the next MAC's parse of unchanged bytes
// keeps the meta and makes only the checks still missing; after any change
// to a byte, the FCS, the trailer or a length it gives exactly what a parse
// from scratch gives.
TEST(CarriedParse, UnchangedBytesKeepMetaAndAddOnlyMissingChecks) {
  for (Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    Packet p = s.p;
    const ParseOptions sw{true, false}, nic{true, true};
    ASSERT_EQ(parse(p, sw), DropReason::none);
    const Meta after_switch = p.meta;
    ASSERT_EQ(parse(p, sw), DropReason::none);
    EXPECT_EQ(p.meta, after_switch);
    ASSERT_EQ(parse(p, nic), DropReason::none);
    Meta want;
    ASSERT_EQ(fresh(p, nic, &want), DropReason::none);
    EXPECT_EQ(p.meta, want);
  }
}

TEST(CarriedParse, AChecksMissingFromTheCarriedParseStillFail) {
  // A bad ICRC passes a switch (no ICRC check) and fails at the NIC.
  Packet p;
  BthSpec b;
  b.opcode = op::kWriteOnly;
  RethSpec r{1, 2, 3};
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, &r, nullptr, 1024);
  p.trailer[1] ^= 0x40;
  p.fcs = compute_fcs(p);
  EXPECT_EQ(parse(p, {true, false}), DropReason::none);
  EXPECT_EQ(parse(p, {true, true}), DropReason::bad_icrc);
  EXPECT_EQ(parse(p, {true, true}), DropReason::bad_icrc) << "a failure is not carried";
  // A bad FCS passes a MAC that does not check it and fails at one that does.
  build_cnp(p, test::eth_spec(), test::ip_spec(), 9, 7);
  p.fcs ^= 0x8000;
  EXPECT_EQ(parse(p, {false, false}), DropReason::none);
  EXPECT_EQ(parse(p, {true, false}), DropReason::bad_fcs);
}

TEST(CarriedParse, EveryChangeAfterAParseGivesTheVerdictOfAFreshParse) {
  const ParseOptions o{true, true};
  int changes = 0;
  for (Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    Packet base = s.p;
    ASSERT_EQ(parse(base, o), DropReason::none);
    for_each_change(base, [&](const Packet& c, const std::string& what) {
      expect_fresh_verdict(c, o, what);  // c still carries the parse of base's bytes
      ++changes;
    });
  }
  EXPECT_GT(changes, 6 * 2 * 8 * 50);
}

// A builder's frame carries the FCS and ICRC it computed over its bytes
// (finalize -> mark_sums_computed): the first parse of those very bytes
// does not compute them again, and any change made after the build gives
// exactly the verdict and meta of a parse from scratch.
TEST(CarriedParse, ChangesAfterTheBuildGiveTheVerdictOfAFreshParse) {
  const ParseOptions o{true, true};
  int changes = 0;
  for (Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    const Packet& built = s.p;  // carries its builder's sums, not parsed
    expect_fresh_verdict(built, o, "unchanged");
    for_each_change(built, [&](const Packet& c, const std::string& what) {
      expect_fresh_verdict(c, o, what);
      ++changes;
    });
  }
  EXPECT_GT(changes, 6 * 2 * 8 * 50);
}

TEST(CarriedParse, TheBuildersSumsAreTakenAsComputed) {
  // The builder's mark is what saves the first hop the two CRCs: a frame
  // marked as having its sums computed over its present bytes is taken at
  // its word, and unmarked (or changed) the same bytes are checked.
  Packet p;
  BthSpec b;
  b.opcode = op::kWriteOnly;
  RethSpec r{1, 2, 3};
  build_roce(p, test::eth_spec(), test::ip_spec(), 9, b, &r, nullptr, 1024);
  EXPECT_EQ(fresh(p, {true, true}), DropReason::none);
  Packet bad_fcs = p;
  bad_fcs.fcs ^= 1;
  mark_sums_computed(bad_fcs, true);
  EXPECT_EQ(parse(bad_fcs, {true, true}), DropReason::none) << "the mark was not taken";
  EXPECT_EQ(fresh(bad_fcs, {true, true}), DropReason::bad_fcs);
  Packet bad_icrc = p;
  bad_icrc.trailer[0] ^= 1;
  bad_icrc.fcs = compute_fcs(bad_icrc);
  mark_sums_computed(bad_icrc, false);  // the FCS only: the ICRC is still checked
  EXPECT_EQ(parse(bad_icrc, {true, true}), DropReason::bad_icrc);
  mark_sums_computed(bad_icrc, true);
  EXPECT_EQ(parse(bad_icrc, {true, true}), DropReason::none);
  // A change after the mark: everything checked again.
  mark_sums_computed(bad_fcs, true);
  bad_fcs.hdr[20] ^= 0x04;
  EXPECT_EQ(parse(bad_fcs, {true, true}), DropReason::bad_fcs);
}

TEST(CarriedParse, TheDigestSeesEveryBitOfTheFrame) {
  Packet p;
  BthSpec b;
  b.opcode = op::kSendOnly;
  build_roce(p, test::eth_spec(true), test::ip_spec(), 9, b, nullptr, nullptr, 100);
  const uint64_t d = frame_digest(p);
  for (size_t i = 0; i < p.hdr_len; ++i)
    for (int bit = 0; bit < 8; ++bit) {
      Packet c = p;
      c.hdr[i] ^= uint8_t(1u << bit);
      EXPECT_NE(frame_digest(c), d) << i << ":" << bit;
    }
  Packet c = p;
  c.hdr[p.hdr_len] ^= 1;  // past hdr_len: not part of the frame
  EXPECT_EQ(frame_digest(c), d);
  c = p;
  c.pad_len = 1;
  EXPECT_NE(frame_digest(c), d);
  c = p;
  c.trailer_len = 0;
  EXPECT_NE(frame_digest(c), d);
}

}  // namespace
}  // namespace rocesim::packet

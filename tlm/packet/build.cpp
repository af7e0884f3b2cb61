// Frame builders. They write into Packet storage only (no allocation) and fill
// p.meta directly, field for field as parse() would (a unit test checks that).
#include "packet/build.h"

#include <cassert>
#include <cstring>

#include "packet/crc.h"
#include "packet/parse.h"
#include "packet/wire.h"

namespace rocesim::packet {
namespace {

using namespace wire;

constexpr Mac kMacMask = 0xffffffffffffull;
constexpr Mac kPfcDstMac = 0x0180c2000001ull;     // IEEE 802.1Qbb / 802.3 Annex 31B MAC control DA
constexpr uint32_t kGsiQkey = 0x80010000u;        // IBTA Vol 1 ch 13 (GSI): well-known Q_Key of QP1
constexpr uint8_t kMgmtClassCm = 0x07;            // IBTA Vol 1 ch 13.4: CM management class
constexpr uint8_t kCmClassVersion = 2;            // IBTA Vol 1 ch 12.6 (Linux IB_CM_CLASS_VERSION)
constexpr uint8_t kMadMethodSend = 0x03;          // IBTA Vol 1 ch 13.4: Send method

// Ethernet II (IEEE 802.3) with an optional 802.1Q tag: TPID 0x8100 and a TCI
// of PCP(3) | DEI(1) | VID(12). Returns the offset after the EtherType.
size_t put_eth(uint8_t* h, Meta& m, const EthSpec& e, uint16_t ethertype) {
  put48(h, e.dst);
  put48(h + 6, e.src);
  size_t o = 12;
  m.dst_mac = e.dst & kMacMask;
  m.src_mac = e.src & kMacMask;
  if (e.vlan) {
    put16(h + 12, kEtherTypeVlan);
    put16(h + 14, uint16_t((e.pcp & 7u) << 13 | (e.vid & 0xfffu)));
    o = 16;
    m.has_vlan = true;
    m.pcp = e.pcp & 7u;
    m.vid = e.vid & 0xfffu;
  }
  put16(h + o, ethertype);
  m.ethertype = ethertype;
  return o + 2;
}

// Ethernet / IPv4 / UDP / BTH, then ext_len + extra_hdr zeroed header bytes,
// then zero_payload bytes held as a length. Returns the offset of the
// extended transport headers.
size_t begin_roce(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t sport, const BthSpec& bth,
                  size_t ext_len, size_t extra_hdr, uint32_t zero_payload) {
  const uint64_t id = p.id;  // the creator's (link::Ledger::create): a new frame, the same packet
  p.reset();
  p.id = id;
  Meta& m = p.meta;
  p.reserve_hdr(kEthHdr + (eth.vlan ? kVlanTag : 0) + kIpv4Hdr + kUdpHdr + kBth + ext_len + extra_hdr);
  uint8_t* h = p.hdr;
  const size_t l3 = put_eth(h, m, eth, kEtherTypeIpv4);
  const size_t l4 = l3 + kIpv4Hdr, b = l4 + kUdpHdr, x = b + kBth, end = x + ext_len + extra_hdr;
  assert(end <= p.hdr_capacity());
  const uint32_t udp_len = uint32_t(kUdpHdr + kBth + ext_len + extra_hdr + kIcrc) + zero_payload;
  const uint32_t total = uint32_t(kIpv4Hdr) + udp_len;
  assert(total <= 0xffff && "IPv4 total length is 16 bits");

  // IPv4 (RFC 791): version 4, IHL 5; TOS = DSCP << 2 | ECN (RFC 2474, RFC 3168);
  // total length covers through the ICRC; checksum filled by finalize().
  uint8_t* q = h + l3;
  q[0] = 0x45;
  q[1] = uint8_t((ip.dscp & 0x3fu) << 2 | (ip.ecn & 3u));
  put16(q + 2, uint16_t(total));
  put16(q + 4, ip.id);
  put16(q + 6, ip.dont_fragment ? 0x4000 : 0);
  q[8] = ip.ttl;
  q[9] = 17;
  put16(q + 10, 0);
  put32(q + 12, ip.src);
  put32(q + 16, ip.dst);

  // UDP (RFC 768) to 4791; RoCEv2 sends checksum 0 (IBTA Annex A17; Linux rxe does too).
  put16(h + l4, sport);
  put16(h + l4 + 2, kRoceUdpPort);
  put16(h + l4 + 4, uint16_t(udp_len));
  put16(h + l4 + 6, 0);

  // BTH (IBTA Vol 1 ch 9.2): opcode | SE M PadCnt(2) TVer(4)=0 | P_Key |
  // FECN BECN resv6 | DestQP(24) | AckReq resv7 | PSN(24).
  uint8_t* t = h + b;
  t[0] = bth.opcode;
  t[1] = uint8_t(bth.se << 7 | bth.mig << 6 | (bth.pad_count & 3u) << 4);
  put16(t + 2, bth.pkey);
  t[4] = uint8_t(bth.fecn << 7 | bth.becn << 6);
  put24(t + 5, bth.dest_qp);
  t[8] = uint8_t(bth.ackreq << 7);
  put24(t + 9, bth.psn);
  std::memset(h + x, 0, ext_len + extra_hdr);

  p.hdr_len = uint16_t(end);
  p.payload_len = zero_payload;

  m.kind = bth.opcode == op::kCnp ? FrameKind::cnp : FrameKind::roce;
  m.src_ip = ip.src;
  m.dst_ip = ip.dst;
  m.dscp = ip.dscp & 0x3fu;
  m.ecn = ip.ecn & 3u;
  m.ttl = ip.ttl;
  m.proto = 17;
  m.ip_total_len = uint16_t(total);
  m.sport = sport;
  m.dport = kRoceUdpPort;
  m.opcode = bth.opcode;
  m.se = bth.se, m.mig = bth.mig, m.ackreq = bth.ackreq, m.fecn = bth.fecn, m.becn = bth.becn;
  m.pad_count = bth.pad_count & 3u;
  m.pkey = bth.pkey;
  m.dest_qp = bth.dest_qp & 0xffffffu;
  m.psn = bth.psn & 0xffffffu;
  m.l3_offset = uint16_t(l3);
  m.l4_offset = uint16_t(l4);
  m.bth_offset = uint16_t(b);
  return x;
}

// Offset of the IPv4 header in p.hdr, or 0 if the frame is not IPv4.
size_t ipv4_offset(const Packet& p) {
  if (p.hdr_len < kEthHdr) return 0;
  size_t o = 12;
  uint16_t et = get16(p.hdr + o);
  if (et == kEtherTypeVlan) {
    if (p.hdr_len < kEthHdr + kVlanTag) return 0;
    o += kVlanTag;
    et = get16(p.hdr + o);
  }
  if (et != kEtherTypeIpv4 || p.hdr_len < o + 2 + kIpv4Hdr) return 0;
  return o + 2;
}

}  // namespace

void build_roce(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, const BthSpec& bth,
                const RethSpec* reth, const AethSpec* aeth, uint32_t payload_len) {
  const OpLayout L = op_layout(bth.opcode);
  const size_t x = begin_roce(p, eth, ip, udp_sport, bth, L.ext_len, 0, payload_len + (bth.pad_count & 3u));
  Meta& m = p.meta;
  if (L.reth != kNone) {
    // RETH (IBTA Vol 1 ch 9.3.3): VA(64) | R_Key(32) | DMA length(32).
    m.has_reth = true;
    if (reth) {
      uint8_t* r = p.hdr + x + L.reth;
      put64(r, reth->va);
      put32(r + 8, reth->rkey);
      put32(r + 12, reth->dma_len);
      m.reth.va = reth->va, m.reth.rkey = reth->rkey, m.reth.dma_len = reth->dma_len;
    }
  }
  if (L.aeth != kNone) {
    // AETH (IBTA Vol 1 ch 9.3.5): Syndrome(8) | MSN(24).
    m.has_aeth = true;
    if (aeth) {
      uint8_t* a = p.hdr + x + L.aeth;
      a[0] = aeth->syndrome;
      put24(a + 1, aeth->msn);
      m.aeth_syndrome = aeth->syndrome, m.aeth_msn = aeth->msn & 0xffffffu;
    }
  }
  m.l4_payload_len = payload_len;
  finalize(p);
}

// RoCEv2 CNP (IBTA Annex A17, CNP format): BTH opcode 0x81, BECN set, PSN 0,
// P_Key 0xFFFF, then 16 reserved zero bytes; IP total length 60.
void build_cnp(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, uint32_t dest_qp) {
  BthSpec b;
  b.opcode = op::kCnp;
  b.becn = true;
  b.pkey = 0xffff;
  b.dest_qp = dest_qp;
  b.psn = 0;
  begin_roce(p, eth, ip, udp_sport, b, kCnpReserved, 0, 0);
  p.meta.l4_payload_len = 0;
  finalize(p);
}

// CM MAD to QP1 over UD SEND ONLY (IBTA Vol 1 ch 12.6 and 13.4). Attribute
// offsets below are from the start of the CM data (after the 24 B MAD header),
// as in IBTA Vol 1 ch 12.6 tables (Linux include/rdma/ibta_vol1_c12.h agrees).
void build_cm(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, const CmSpec& cm) {
  BthSpec b;
  b.opcode = op::kUdSendOnly;
  b.pkey = 0xffff;
  b.dest_qp = 1;
  const size_t x = begin_roce(p, eth, ip, udp_sport, b, kDeth, kMad, 0);
  uint8_t* h = p.hdr;

  // DETH (IBTA Vol 1 ch 9.3.2): Q_Key(32) | resv8 | SrcQP(24).
  put32(h + x, kGsiQkey);
  put24(h + x + 5, cm.src_qp);

  // Common MAD header (IBTA Vol 1 ch 13.4): BaseVersion, MgmtClass,
  // ClassVersion, Method, Status(16), ClassSpecific(16), TID(64),
  // AttributeID(16), resv16, AttributeModifier(32).
  uint8_t* mad = h + x + kDeth;
  mad[0] = 1;
  mad[1] = kMgmtClassCm;
  mad[2] = kCmClassVersion;
  mad[3] = kMadMethodSend;
  put64(mad + 8, cm.tid);
  put16(mad + 16, cm.attr_id);

  uint8_t* d = mad + kMadHdr;
  put32(d + 0, cm.local_comm_id);
  switch (cm.attr_id) {
    case cm::kReq:
      // REQ: LocalCommID@0, ServiceID@8, LocalCA GUID@16, LocalQKey@28,
      // LocalQPN(24)@32, StartingPSN(24)@44, P_Key@48, primary path LIDs@52/54
      // (0xFFFF permissive on RoCE), primary local/remote GIDs@56/72, primary flow label@88.
      put24(d + 32, cm.local_qpn);
      put24(d + 44, cm.starting_psn);
      put16(d + 48, 0xffff);
      put16(d + 52, 0xffff);
      put16(d + 54, 0xffff);
      // RoCEv2 over IPv4 uses IPv4-mapped GIDs ::ffff:a.b.c.d (RFC 4291 2.5.5.2).
      put16(d + 56 + 10, 0xffff);
      put32(d + 56 + 12, ip.src);
      put16(d + 72 + 10, 0xffff);
      put32(d + 72 + 12, ip.dst);
      // Primary Flow Label: the upper 20 bits of the word @88 (then 6
      // reserved bits and PacketRate, left 0). Annex A17 derives a RoCEv2
      // connection's UDP source port from it, so both ends use one port.
      put32(d + 88, (cm.flow_label & 0xfffffu) << 12);
      break;
    case cm::kRep:
      // REP: LocalCommID@0, RemoteCommID@4, LocalQKey@8, LocalQPN(24)@12, StartingPSN(24)@20.
      put32(d + 4, cm.remote_comm_id);
      put24(d + 12, cm.local_qpn);
      put24(d + 20, cm.starting_psn);
      break;
    default:
      // REJ, RTU, DREQ, DREP (and MRA, LAP, APR): LocalCommID@0, RemoteCommID@4.
      put32(d + 4, cm.remote_comm_id);
      break;
  }
  read_cm_mad(mad, p.meta);
  p.meta.kind = FrameKind::cm;
  p.meta.l4_payload_len = uint32_t(kMad);
  finalize(p);
}

// IEEE 802.1Qbb PFC: MAC control frame (EtherType 0x8808, IEEE 802.3 Annex 31B)
// with opcode 0x0101, class-enable vector (bit N = priority N) and 8 timers in
// quanta of 512 bit times; zero padded to the 64 B minimum by finalize().
void build_pfc(Packet& p, Mac src, uint16_t class_enable, const uint16_t timers[8]) {
  const uint64_t id = p.id;  // as begin_roce
  p.reset();
  p.id = id;
  Meta& m = p.meta;
  uint8_t* h = p.hdr;
  // MAC control frames are never VLAN tagged: fixed offsets.
  constexpr size_t o = kEthHdr;
  put48(h, kPfcDstMac);
  put48(h + 6, src);
  put16(h + 12, kEtherTypeMacControl);
  m.dst_mac = kPfcDstMac;
  m.src_mac = src & kMacMask;
  m.ethertype = kEtherTypeMacControl;
  put16(h + o, kPfcOpcode);
  put16(h + o + 2, class_enable);
  for (int i = 0; i < 8; ++i) {
    const uint16_t t = timers ? timers[i] : 0;
    put16(h + o + 4 + 2 * i, t);
    m.pfc.timers[i] = t;
  }
  p.hdr_len = uint16_t(o + 20);
  m.kind = FrameKind::pfc;
  m.pfc.class_enable = class_enable;
  finalize(p);
}

void build_ethernet(Packet& p, Mac dst, Mac src, uint16_t ethertype, const uint8_t* payload, size_t len) {
  const uint64_t id = p.id;  // as begin_roce
  p.reset();
  p.id = id;
  p.reserve_hdr(kEthHdr + len);
  Meta& m = p.meta;
  uint8_t* h = p.hdr;
  put48(h, dst);
  put48(h + 6, src);
  put16(h + 12, ethertype);
  std::memcpy(h + kEthHdr, payload, len);
  m.dst_mac = dst & kMacMask;
  m.src_mac = src & kMacMask;
  m.ethertype = ethertype;
  m.kind = FrameKind::unknown;
  p.hdr_len = uint16_t(kEthHdr + len);
  finalize(p);
}

void finalize(Packet& p) {
  uint8_t* h = p.hdr;
  bool icrc = false;
  if (const size_t l3 = ipv4_offset(p)) {
    const size_t ihl = size_t(h[l3] & 0x0f) * 4;
    if (ihl >= kIpv4Hdr && l3 + ihl <= p.hdr_len) {
      put16(h + l3 + 10, 0);
      put16(h + l3 + 10, ipv4_checksum(h + l3, ihl));
      const size_t l4 = l3 + ihl;
      const bool first_fragment = (get16(h + l3 + 6) & 0x1fff) == 0;
      if (h[l3 + 9] == 17 && first_fragment && l4 + kUdpHdr + kBth <= p.hdr_len &&
          get16(h + l4 + 2) == kRoceUdpPort) {
        put_le32(p.trailer, roce_icrc(h + l3, p.hdr_len - l3, p.payload_len));
        p.trailer_len = uint8_t(kIcrc);
        icrc = true;
      }
    }
  }
  // IEEE 802.3: 64 B minimum frame including FCS; pad goes after the ICRC.
  const uint64_t body = uint64_t(p.hdr_len) + p.payload_len + p.trailer_len;
  p.pad_len = body < kMinFrameNoFcs ? uint8_t(kMinFrameNoFcs - body) : 0;
  p.fcs = compute_fcs(p);
  mark_sums_computed(p, icrc);
}

void set_ecn(Packet& p, uint8_t ecn) {
  const size_t l3 = ipv4_offset(p);
  if (!l3) return;
  uint8_t* q = p.hdr + l3;
  const uint8_t tos = q[1];
  const uint8_t new_tos = uint8_t((tos & 0xfc) | (ecn & 3u));  // RFC 3168: ECN is the low 2 bits of TOS
  p.meta.ecn = ecn & 3u;
  if (tos == new_tos) return;

  // RFC 1624 eqn. 3 incremental update, HC' = ~(~HC + ~m + m'): a bad
  // checksum stays bad, as it would through a switch that patches it.
  const uint16_t hc = get16(q + 10);
  const uint16_t m_old = uint16_t(q[0] << 8 | tos), m_new = uint16_t(q[0] << 8 | new_tos);
  uint32_t sum = uint32_t(uint16_t(~hc)) + uint16_t(~m_old) + m_new;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  const uint16_t new_hc = uint16_t(~sum);
  q[1] = new_tos;
  put16(q + 10, new_hc);

  // CRC is linear: FCS(new) = FCS(old) ^ CRCraw(0, old ^ new). The difference
  // is nonzero only in bytes l3+1 .. l3+11, followed by zeros to the frame end.
  uint8_t diff[11] = {};
  diff[0] = uint8_t(tos ^ new_tos);
  diff[9] = uint8_t((hc ^ new_hc) >> 8);
  diff[10] = uint8_t(hc ^ new_hc);
  const uint64_t tail = uint64_t(p.frame_len_no_fcs()) - (l3 + 12);
  p.fcs ^= crc32_zeros(crc32_update(0, diff, sizeof diff), tail);
}

}  // namespace rocesim::packet

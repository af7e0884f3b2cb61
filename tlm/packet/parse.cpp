// Parser: frame bytes -> Meta. Every read is bounds-checked against the real
// bytes it was given (hdr_len for a Packet, len for raw bytes); a header that
// does not fit gives DropReason::truncated.
#include "packet/parse.h"

#include "packet/crc.h"
#include "packet/wire.h"

namespace rocesim::packet {

namespace wire {

void read_cm_mad(const uint8_t* mad, Meta& m) {
  // Attribute ids beyond those in packet.h, same comm-id layout (IBTA Vol 1 ch 12.6).
  constexpr uint16_t kMra = 0x0011, kLap = 0x0019, kApr = 0x001a;
  m.cm.tid = get64(mad + 8);
  m.cm.attr_id = get16(mad + 16);
  const uint8_t* d = mad + kMadHdr;
  switch (m.cm.attr_id) {
    case cm::kReq:  // LocalCommID@0, LocalQPN(24)@32, StartingPSN(24)@44
      m.cm.local_comm_id = get32(d);
      m.cm.local_qpn = get24(d + 32);
      m.cm.starting_psn = get24(d + 44);
      break;
    case cm::kRep:  // LocalCommID@0, RemoteCommID@4, LocalQPN(24)@12, StartingPSN(24)@20
      m.cm.local_comm_id = get32(d);
      m.cm.remote_comm_id = get32(d + 4);
      m.cm.local_qpn = get24(d + 12);
      m.cm.starting_psn = get24(d + 20);
      break;
    case cm::kRej: case cm::kRtu: case cm::kDreq: case cm::kDrep: case kMra: case kLap: case kApr:
      m.cm.local_comm_id = get32(d);
      m.cm.remote_comm_id = get32(d + 4);
      break;
    default:
      break;
  }
}

}  // namespace wire

namespace {

using namespace wire;

struct Frame {
  const uint8_t* b;   // real bytes, from the destination MAC
  size_t real;        // how many of them may be read
  uint64_t present;   // frame bytes before the FCS (for a Packet: without its known padding)
  bool pad_known;     // Packet: present excludes padding; raw bytes: padding unknown
};

bool has_icrc(FrameKind k) { return k == FrameKind::roce || k == FrameKind::cnp || k == FrameKind::cm; }

DropReason parse_frame(const Frame& f, Meta& m) {
  const uint8_t* b = f.b;
  // Ethernet II (IEEE 802.3) and one optional 802.1Q tag.
  if (f.real < kEthHdr) return DropReason::truncated;
  m.dst_mac = get48(b);
  m.src_mac = get48(b + 6);
  size_t o = 12;
  uint16_t et = get16(b + o);
  if (et == kEtherTypeVlan) {
    if (f.real < kEthHdr + kVlanTag) return DropReason::truncated;
    const uint16_t tci = get16(b + 14);
    m.has_vlan = true;
    m.pcp = uint8_t(tci >> 13);
    m.vid = tci & 0xfffu;
    o += kVlanTag;
    et = get16(b + o);
  }
  o += 2;
  m.ethertype = et;

  if (et == kEtherTypeMacControl) {
    // IEEE 802.1Qbb: opcode 0x0101, class-enable vector, 8 timers. Other MAC
    // control opcodes (e.g. 802.3x PAUSE 0x0001) are not accepted.
    if (f.real < o + 2) return DropReason::truncated;
    if (get16(b + o) != kPfcOpcode) return DropReason::bad_mac_control;
    if (f.real < o + 20) return DropReason::truncated;
    m.pfc.class_enable = get16(b + o + 2);
    for (int i = 0; i < 8; ++i) m.pfc.timers[i] = get16(b + o + 4 + 2 * i);
    m.kind = FrameKind::pfc;
    return DropReason::none;
  }
  if (et != kEtherTypeIpv4) return DropReason::none;  // forwarded as "other"

  // IPv4 (RFC 791).
  const size_t l3 = o;
  if (f.real < l3 + kIpv4Hdr) return DropReason::truncated;
  const uint8_t* q = b + l3;
  const size_t ihl = size_t(q[0] & 0x0f) * 4;
  if ((q[0] >> 4) != 4 || ihl < kIpv4Hdr) return DropReason::bad_ip_header;
  if (f.real < l3 + ihl) return DropReason::truncated;
  const uint16_t total = get16(q + 2);
  m.dscp = q[1] >> 2;
  m.ecn = q[1] & 3u;  // RFC 3168
  m.ttl = q[8];
  m.proto = q[9];
  m.ip_total_len = total;
  m.src_ip = get32(q + 12);
  m.dst_ip = get32(q + 16);
  m.l3_offset = uint16_t(l3);
  if (ipv4_checksum(q, ihl) != 0) return DropReason::bad_ip_checksum;
  if (total < ihl || f.present < l3 + total) return DropReason::bad_ip_header;
  m.kind = FrameKind::ipv4_other;
  const uint16_t frag = get16(q + 6);
  // Only an unfragmented datagram can be RoCEv2 (it is sent with DF); a
  // non-first fragment has no UDP header at all.
  if (m.proto != 17 || (frag & 0x1fff) != 0) return DropReason::none;

  // UDP (RFC 768).
  const size_t l4 = l3 + ihl;
  if (total < ihl + kUdpHdr) return DropReason::bad_ip_header;
  if (f.real < l4 + kUdpHdr) return DropReason::truncated;
  m.sport = get16(b + l4);
  m.dport = get16(b + l4 + 2);
  m.l4_offset = uint16_t(l4);
  if (m.dport != kRoceUdpPort || (frag & 0x2000) != 0) return DropReason::none;

  // RoCEv2 (IBTA Annex A17): the IP datagram ends with the ICRC, so its
  // length must match the bytes present exactly. Raw bytes may carry
  // Ethernet padding only when the frame is at the 60 B minimum.
  const uint64_t ip_end = l3 + total;
  const bool exact = f.pad_known ? ip_end == f.present
                                 : ip_end == f.present || f.present <= kMinFrameNoFcs;
  if (!exact || get16(b + l4 + 4) != total - ihl) return DropReason::bad_ip_header;
  const size_t bth = l4 + kUdpHdr;
  if (total < ihl + kUdpHdr + kBth + kIcrc) return DropReason::bad_ip_header;
  if (f.real < bth + kBth) return DropReason::truncated;

  // BTH (IBTA Vol 1 ch 9.2).
  const uint8_t* t = b + bth;
  m.opcode = t[0];
  m.se = t[1] & 0x80;
  m.mig = t[1] & 0x40;
  m.pad_count = (t[1] >> 4) & 3u;
  m.pkey = get16(t + 2);
  m.fecn = t[4] & 0x80;
  m.becn = t[4] & 0x40;
  m.dest_qp = get24(t + 5);
  m.ackreq = t[8] & 0x80;
  m.psn = get24(t + 9);
  m.bth_offset = uint16_t(bth);
  const OpLayout L = op_layout(m.opcode);
  if ((t[1] & 0x0f) != 0 || !L.valid) return DropReason::bad_bth;  // TVer must be 0

  const size_t ext = bth + kBth, hdr_end = ext + L.ext_len;
  if (ip_end < hdr_end + kIcrc) return DropReason::bad_ip_header;
  if (f.real < hdr_end) return DropReason::truncated;
  if (L.reth != kNone) {  // RETH (IBTA Vol 1 ch 9.3.3)
    const uint8_t* r = b + ext + L.reth;
    m.has_reth = true;
    m.reth.va = get64(r);
    m.reth.rkey = get32(r + 8);
    m.reth.dma_len = get32(r + 12);
  }
  if (L.aeth != kNone) {  // AETH (IBTA Vol 1 ch 9.3.5)
    const uint8_t* a = b + ext + L.aeth;
    m.has_aeth = true;
    m.aeth_syndrome = a[0];
    m.aeth_msn = get24(a + 1);
  }
  const uint64_t rest = ip_end - kIcrc - hdr_end;  // payload incl. BTH pad bytes
  if (m.pad_count > rest) return DropReason::bad_bth;
  m.l4_payload_len = uint32_t(rest - m.pad_count);
  m.kind = m.opcode == op::kCnp ? FrameKind::cnp : FrameKind::roce;

  // A MAD to QP1 over UD SEND ONLY whose class is CM (IBTA Vol 1 ch 12.6 / 13.4).
  // In a Packet the bytes past hdr_len are zero payload, so a MAD there has
  // class 0 and the frame stays plain RoCE.
  if (m.opcode == op::kUdSendOnly && m.dest_qp == 1 && rest >= kMadHdr && f.real >= hdr_end + kMadHdr &&
      b[hdr_end + 1] == 0x07) {
    if (rest < kMad || f.real < hdr_end + kMad) return DropReason::truncated;
    read_cm_mad(b + hdr_end, m);
    m.kind = FrameKind::cm;
  }
  return DropReason::none;
}

}  // namespace

namespace {

constexpr uint8_t kParsed = 1, kFcsChecked = 2, kIcrcChecked = 4;

// The ICRC check of a parsed RoCEv2 frame (m filled by parse_frame).
DropReason check_icrc(const Packet& p, const Meta& m) {
  // The ICRC is the last 4 bytes of the IP datagram, normally the trailer.
  // Bytes past hdr_len are payload zeros, then the trailer.
  const uint64_t icrc_pos = uint64_t(m.l3_offset) + m.ip_total_len - kIcrc;
  auto byte_at = [&](uint64_t i) -> uint32_t {
    if (i < p.hdr_len) return p.hdr[i];
    i -= p.hdr_len;
    if (i < p.payload_len) return 0;
    i -= p.payload_len;
    return i < p.trailer_len ? p.trailer[i] : 0;
  };
  const uint32_t stored = byte_at(icrc_pos) | byte_at(icrc_pos + 1) << 8 | byte_at(icrc_pos + 2) << 16 |
                          byte_at(icrc_pos + 3) << 24;
  const size_t covered_real = size_t((icrc_pos < p.hdr_len ? icrc_pos : p.hdr_len) - m.l3_offset);
  const uint64_t covered_zeros = icrc_pos > p.hdr_len ? icrc_pos - p.hdr_len : 0;
  if (roce_icrc(p.hdr + m.l3_offset, covered_real, covered_zeros) != stored) return DropReason::bad_icrc;
  return DropReason::none;
}

// `known`: the sums (kFcsChecked, kIcrcChecked) already computed over these bytes.
DropReason parse_full(Packet& p, const ParseOptions& opt, uint8_t known) {
  Meta& m = p.meta;
  m = Meta{};
  // Bookkeeping that cannot describe a frame (hdr overruns its storage, or a
  // trailer longer than the ICRC) is treated as a broken frame.
  if (p.hdr_len > p.hdr_capacity() || p.trailer_len > 4) return DropReason::truncated;
  if (p.frame_len() < kMinFrameBytes) return DropReason::truncated;  // IEEE 802.3 runt
  if (opt.check_fcs && !(known & kFcsChecked) && compute_fcs(p) != p.fcs) return DropReason::bad_fcs;

  const uint64_t present = uint64_t(p.hdr_len) + p.payload_len + p.trailer_len;
  const DropReason r = parse_frame(Frame{p.hdr, p.hdr_len, present, true}, m);
  if (r != DropReason::none || !opt.check_icrc || !has_icrc(m.kind) || (known & kIcrcChecked)) return r;
  return check_icrc(p, m);
}

}  // namespace

DropReason parse(Packet& p, const ParseOptions& opt) {
  const uint8_t want = uint8_t(kParsed | (opt.check_fcs ? kFcsChecked : 0) | (opt.check_icrc ? kIcrcChecked : 0));
  const uint64_t digest = frame_digest(p);
  const uint8_t have = p.parsed_checks;
  if ((have & kParsed) && p.parsed_digest == digest) {
    // The same bytes as the carried parse: only the checks it did not make.
    const uint8_t missing = uint8_t(want & ~have);
    if ((missing & kFcsChecked) && compute_fcs(p) != p.fcs) {
      p.parsed_checks = 0;
      return DropReason::bad_fcs;
    }
    if ((missing & kIcrcChecked) && has_icrc(p.meta.kind)) {
      const DropReason r = check_icrc(p, p.meta);
      if (r != DropReason::none) {
        p.parsed_checks = 0;
        return r;
      }
    }
    p.parsed_checks = uint8_t(have | want);
    return DropReason::none;
  }
  // Sums computed over these very bytes (mark_sums_computed) are not
  // computed again; the headers are parsed and every other check made.
  const uint8_t known = p.parsed_digest == digest ? uint8_t(have & (kFcsChecked | kIcrcChecked)) : 0;
  const DropReason r = parse_full(p, opt, known);
  p.parsed_checks = r == DropReason::none ? uint8_t(want | known) : 0;
  p.parsed_digest = digest;
  return r;
}

void mark_sums_computed(Packet& p, bool icrc) {
  p.parsed_checks = uint8_t(kFcsChecked | (icrc ? kIcrcChecked : 0));  // not kParsed: meta is the builder's
  p.parsed_digest = frame_digest(p);
}

DropReason parse_bytes(const uint8_t* bytes, size_t len, Meta& meta, bool check_icrc) {
  meta = Meta{};
  if (!bytes) return DropReason::truncated;
  const DropReason r = parse_frame(Frame{bytes, len, len, false}, meta);
  if (r != DropReason::none || !check_icrc || !has_icrc(meta.kind)) return r;
  const uint8_t* ip = bytes + meta.l3_offset;
  const size_t covered = size_t(meta.ip_total_len) - kIcrc;
  if (roce_icrc(ip, covered, 0) != get_le32(ip + covered)) return DropReason::bad_icrc;
  return DropReason::none;
}

}  // namespace rocesim::packet

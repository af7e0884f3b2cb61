#include "packet/packet.h"

#include <cstring>

#include "packet/crc.h"

namespace rocesim::packet {

const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::none: return "none";
    case DropReason::truncated: return "truncated";
    case DropReason::bad_fcs: return "bad_fcs";
    case DropReason::bad_ip_header: return "bad_ip_header";
    case DropReason::bad_ip_checksum: return "bad_ip_checksum";
    case DropReason::bad_icrc: return "bad_icrc";
    case DropReason::bad_bth: return "bad_bth";
    case DropReason::bad_mac_control: return "bad_mac_control";
    case DropReason::ingress_limit: return "ingress_limit";
    case DropReason::egress_limit: return "egress_limit";
    case DropReason::pool_full: return "pool_full";
    case DropReason::headroom_overflow: return "headroom_overflow";
    case DropReason::no_route: return "no_route";
    case DropReason::link_loss: return "link_loss";
    case DropReason::pfc_watchdog: return "pfc_watchdog";
    case DropReason::nic_buffer: return "nic_buffer";
    case DropReason::link_down: return "link_down";
    case DropReason::count_: break;
  }
  return "invalid";
}

const char* frame_kind_name(FrameKind k) {
  switch (k) {
    case FrameKind::unknown: return "unknown";
    case FrameKind::roce: return "roce";
    case FrameKind::cnp: return "cnp";
    case FrameKind::cm: return "cm";
    case FrameKind::pfc: return "pfc";
    case FrameKind::ipv4_other: return "ipv4_other";
  }
  return "invalid";
}

bool operator==(const Meta& a, const Meta& b) {
  for (int i = 0; i < 4; ++i)
    if (a.ext_words[i] != b.ext_words[i]) return false;  // RETH, CM or PFC fields
  return a.kind == b.kind && a.dst_mac == b.dst_mac && a.src_mac == b.src_mac && a.has_vlan == b.has_vlan &&
         a.pcp == b.pcp && a.vid == b.vid && a.ethertype == b.ethertype && a.src_ip == b.src_ip &&
         a.dst_ip == b.dst_ip && a.dscp == b.dscp && a.ecn == b.ecn && a.ttl == b.ttl && a.proto == b.proto &&
         a.ip_total_len == b.ip_total_len && a.sport == b.sport && a.dport == b.dport && a.opcode == b.opcode &&
         a.se == b.se && a.mig == b.mig && a.ackreq == b.ackreq && a.fecn == b.fecn && a.becn == b.becn &&
         a.pad_count == b.pad_count && a.pkey == b.pkey && a.dest_qp == b.dest_qp && a.psn == b.psn &&
         a.has_aeth == b.has_aeth && a.aeth_syndrome == b.aeth_syndrome && a.aeth_msn == b.aeth_msn &&
         a.has_reth == b.has_reth && a.l3_offset == b.l3_offset && a.l4_offset == b.l4_offset &&
         a.bth_offset == b.bth_offset && a.l4_payload_len == b.l4_payload_len;
}

size_t Packet::serialize(uint8_t* out, size_t cap) const {
  const size_t n = frame_len_no_fcs();
  if (cap < n) return 0;
  uint8_t* o = out;
  std::memcpy(o, hdr, hdr_len), o += hdr_len;
  std::memset(o, 0, payload_len), o += payload_len;
  std::memcpy(o, trailer, trailer_len), o += trailer_len;
  std::memset(o, 0, pad_len);
  return n;
}

Packet::Packet(const Packet& o) : hdr(m_inline) { *this = o; }

Packet& Packet::operator=(const Packet& o) {
  if (this == &o) return *this;
  uint8_t* const mine = o.hdr_capacity() > kInlineHdr ? (reserve_hdr(o.hdr_capacity()), hdr) : hdr;
  // Every field but the header storage, then the header bytes (all of the
  // source's storage: a test may look past hdr_len).
  hdr_len = o.hdr_len;
  payload_len = o.payload_len;
  std::memcpy(trailer, o.trailer, sizeof trailer);
  trailer_len = o.trailer_len;
  pad_len = o.pad_len;
  fcs = o.fcs;
  meta = o.meta;
  parsed_checks = o.parsed_checks;
  parsed_digest = o.parsed_digest;
  id = o.id;
  flow_id = o.flow_id;
  created_ps = o.created_ps;
  ingress_port = o.ingress_port;
  rx_first_bit_ps = o.rx_first_bit_ps;
  prio = o.prio;
  path_dir = o.path_dir;
  hops = o.hops;
  traced = o.traced;
  eligible_ps = o.eligible_ps;
  lb_block = o.lb_block;
  lb_entry = o.lb_entry;
  queue_cell = 0;  // a copy is in no switch's queue
  queue_next = nullptr;
  std::memcpy(mine, o.hdr, o.hdr_capacity());
  return *this;
}

void Packet::grow_hdr() {
  if (!m_big) m_big = std::make_unique<uint8_t[]>(kMaxHdr);
  std::memcpy(m_big.get(), m_inline, kInlineHdr);
  hdr = m_big.get();
}

// Only bookkeeping and meta: hdr[] is never read beyond hdr_len, so clearing
// its bytes on every acquire would be wasted work.
void Packet::reset() {
  hdr_len = 0;
  payload_len = 0;
  std::memset(trailer, 0, sizeof trailer);
  trailer_len = 0;
  pad_len = 0;
  fcs = 0;
  meta = Meta{};
  parsed_checks = 0;
  parsed_digest = 0;
  id = 0;
  flow_id = 0;
  created_ps = 0;
  ingress_port = 0;
  prio = 0;
  path_dir = 0;
  hops = 0;
  traced = 0;
  eligible_ps = 0;
  lb_block = lb_entry = kNoLb;
  queue_cell = 0;
  queue_next = nullptr;
}

const char* path_dir_name(PathDir d) {
  switch (d) {
    case PathDir::fwd: return "fwd";
    case PathDir::rev: return "rev";
    case PathDir::cm_fwd: return "cm_fwd";
    case PathDir::cm_rev: return "cm_rev";
    default: return "none";
  }
}

uint32_t compute_fcs(const Packet& p) {
  uint32_t reg = crc32_update(~0u, p.hdr, p.hdr_len);
  reg = crc32_zeros(reg, p.payload_len);
  reg = crc32_update(reg, p.trailer, p.trailer_len < 4 ? p.trailer_len : 4);
  reg = crc32_zeros(reg, p.pad_len);
  return ~reg;
}

namespace {
// (h ^ w) is a bijection of h for a fixed w and of w for a fixed h; so are
// the multiplication by an odd constant (mod 2^64) and the rotation, which
// brings the product's well-mixed high bits down to where the next word's
// low bits meet them. Four instructions a word.
inline uint64_t mix_word(uint64_t h, uint64_t w) {
  const uint64_t x = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return x >> 29 | x << 35;
}
inline uint64_t load8(const uint8_t* b) {
  uint64_t w;
  std::memcpy(&w, b, 8);
  return w;
}
}  // namespace

uint64_t frame_digest(const Packet& p) {
  uint64_t h = mix_word(0x243f6a8885a308d3ull, uint64_t(p.hdr_len) | uint64_t(p.payload_len) << 16 |
                                                  uint64_t(p.trailer_len) << 48 | uint64_t(p.pad_len) << 56);
  const uint8_t* b = p.hdr;
  size_t n = p.hdr_len <= p.hdr_capacity() ? p.hdr_len : p.hdr_capacity();
  // Two words a step (a RoCEv2 header is 58..82 bytes: four or five steps).
  for (; n >= 16; n -= 16, b += 16) h = mix_word(mix_word(h, load8(b)), load8(b + 8));
  if (n >= 8) {
    h = mix_word(h, load8(b));
    n -= 8;
    b += 8;
  }
  // The last 0..7 bytes: one 8-byte load, the bytes beyond them masked off
  // (the storage's capacity is a multiple of 8, so the load stays inside it),
  // the same word a copy of n bytes into a zeroed word gives.
  static_assert(Packet::kInlineHdr % 8 == 0 && Packet::kMaxHdr % 8 == 0, "8-byte tail load");
  const uint64_t last = n ? load8(b) & (~0ull >> (64 - 8 * n)) : 0;
  h = mix_word(h, last);
  uint32_t tr;
  std::memcpy(&tr, p.trailer, 4);
  return mix_word(h, uint64_t(tr) | uint64_t(p.fcs) << 32);
}

PacketPool::PacketPool(size_t chunk) : m_chunk(chunk ? chunk : 1) {}

PacketPool::~PacketPool() {
  for (Packet* c : m_chunks) delete[] c;
}

Packet* PacketPool::acquire() {
  if (m_free.empty()) {
    Packet* c = new Packet[m_chunk];
    m_chunks.push_back(c);
    m_capacity += m_chunk;
    // Reserve for every packet ever owned so release() never reallocates.
    m_free.reserve(m_capacity);
    for (size_t i = m_chunk; i-- > 0;) m_free.push_back(&c[i]);
  }
  Packet* p = m_free.back();
  m_free.pop_back();
  p->reset();
  ++m_in_use;
  return p;
}

void PacketPool::release(Packet* p) {
  if (!p) return;
  m_free.push_back(p);
  --m_in_use;
}

}  // namespace rocesim::packet

// rocesim packet layer: frames with real header bytes.
//
// A frame on the wire is laid out as
//   hdr[0 .. hdr_len)      real header bytes, from the destination MAC onwards
//   payload_len zero bytes  (payload held as a length; its bytes are zeros)
//   trailer[0 .. trailer_len)  ICRC for RoCEv2 frames (4 bytes, little-endian)
//   pad_len zero bytes      Ethernet padding up to the 64 B minimum
//   FCS (4 bytes, little-endian as on the wire)
// so frame_len() counts every byte a MAC serializes except preamble+SFD and IFG.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rocesim::packet {

inline constexpr uint16_t kRoceUdpPort = 4791;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;
inline constexpr uint16_t kPfcOpcode = 0x0101;
inline constexpr uint32_t kMinFrameBytes = 64;     // including FCS
inline constexpr uint32_t kFcsBytes = 4;
inline constexpr uint32_t kPreambleSfdBytes = 8;
inline constexpr uint32_t kIfgBytes = 12;

// IBTA opcodes used by the model (RC unless noted).
namespace op {
inline constexpr uint8_t kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02, kSendOnly = 0x04;
inline constexpr uint8_t kWriteFirst = 0x06, kWriteMiddle = 0x07, kWriteLast = 0x08, kWriteOnly = 0x0a;
inline constexpr uint8_t kReadRequest = 0x0c;
inline constexpr uint8_t kReadRespFirst = 0x0d, kReadRespMiddle = 0x0e, kReadRespLast = 0x0f, kReadRespOnly = 0x10;
inline constexpr uint8_t kAck = 0x11;
inline constexpr uint8_t kUdSendOnly = 0x64;  // UD SEND_ONLY: carries MADs to QP1
inline constexpr uint8_t kCnp = 0x81;
}  // namespace op

// CM MAD attribute ids (Linux ib_cm.h).
namespace cm {
inline constexpr uint16_t kReq = 0x0010, kRej = 0x0012, kRep = 0x0013, kRtu = 0x0014, kDreq = 0x0015, kDrep = 0x0016;
}

using Mac = uint64_t;  // low 48 bits, most significant byte first on the wire

enum class FrameKind : uint8_t {
  unknown = 0,   // parsed as Ethernet but not a kind the model understands (still forwarded as "other")
  roce,          // RoCEv2 data/ack (BTH over UDP 4791), not CNP nor CM
  cnp,           // RoCEv2 CNP (opcode 0x81)
  cm,            // CM MAD to QP1 (UD SEND_ONLY, DestQP 1)
  pfc,           // 802.1Qbb PFC frame
  ipv4_other,    // IPv4 that is not RoCEv2
};

// Why a frame is dropped by the parser / MAC. Later blocks add their reasons
// (ingress_limit, egress_limit, pool_full, headroom_overflow, no_route) to the
// same enum so every drop in the model has one reason type.
enum class DropReason : uint8_t {
  none = 0,
  truncated,          // a header runs past the bytes present, or frame shorter than 64 B
  bad_fcs,            // FCS does not match
  bad_ip_header,      // version != 4, IHL < 5, total length inconsistent with the frame
  bad_ip_checksum,    // IPv4 header checksum does not verify
  bad_icrc,           // RoCEv2 ICRC does not verify
  bad_bth,            // unknown / unsupported opcode, bad transport version
  bad_mac_control,    // EtherType 0x8808 with an opcode other than PFC
  ingress_limit,
  egress_limit,
  pool_full,
  headroom_overflow,
  no_route,
  link_loss,          // dropped by a configured loss on a link
  pfc_watchdog,       // dropped by a PFC watchdog's drop action on a stormed queue
  nic_buffer,         // a NIC's receive buffer was full
  link_down,          // on a cable while it was down (a scheduled link failure)
  count_              // number of reasons; keep last
};
const char* drop_reason_name(DropReason r);  // snake_case name used in outputs
const char* frame_kind_name(FrameKind k);    // snake_case enumerator name

// Metadata the pipeline uses, filled by parse(). The fields a switch reads
// of every frame (forwarding, the ECMP key, QoS, ECN) come first, in the
// packet's second cache line (Packet below); the rest by size, for padding.
struct Meta {
  FrameKind kind = FrameKind::unknown;
  bool has_vlan = false;
  uint8_t pcp = 0;
  // IPv4
  uint8_t dscp = 0, ecn = 0, ttl = 0, proto = 0;
  // BTH
  uint8_t opcode = 0;
  uint16_t ethertype = 0;      // after the VLAN tag if any
  // UDP
  uint16_t sport = 0, dport = 0;
  uint16_t vid = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint32_t dest_qp = 0, psn = 0;
  bool se = false, mig = false, ackreq = false, fecn = false, becn = false;
  uint8_t pad_count = 0;
  uint16_t pkey = 0;
  uint16_t ip_total_len = 0;
  // offsets into hdr[] (0 when absent)
  uint16_t l3_offset = 0, l4_offset = 0, bth_offset = 0;
  uint32_t l4_payload_len = 0;  // RoCE: bytes of payload after the transport headers (excl. ICRC)
                                // and excl. the BTH PadCnt bytes; CM: the 256 B MAD; CNP: 0
  // AETH (valid when has_aeth)
  bool has_aeth = false;
  uint8_t aeth_syndrome = 0;
  bool has_reth = false;
  Mac dst_mac = 0, src_mac = 0;
  uint32_t aeth_msn = 0;
  // The fields of one kind of frame only, sharing their bytes (a frame has
  // at most one of them): the RETH of a RoCEv2 frame (valid when has_reth),
  // a CM MAD's (kind == cm), a PFC frame's (kind == pfc). All zero until a
  // builder or the parser writes one (Meta{} clears all 32 bytes), so
  // operator== compares the bytes.
  struct Reth {
    uint64_t va;
    uint32_t rkey, dma_len;
  };
  struct Cm {
    uint64_t tid;
    uint32_t local_comm_id, remote_comm_id, local_qpn, starting_psn;
    uint16_t attr_id;
  };
  struct Pfc {
    uint16_t class_enable;
    uint16_t timers[8];
  };
  union {
    uint64_t ext_words[4] = {0, 0, 0, 0};
    Reth reth;
    Cm cm;
    Pfc pfc;
  };
};
static_assert(sizeof(Meta::Cm) <= sizeof(Meta::ext_words) && sizeof(Meta::Pfc) <= sizeof(Meta::ext_words) &&
                  sizeof(Meta::Reth) <= sizeof(Meta::ext_words),
              "the kind-specific fields fit the shared words");
// Field-by-field equality, the shared RETH/CM/PFC bytes compared as words
// (tests compare builder meta with parser meta).
bool operator==(const Meta& a, const Meta& b);
inline bool operator!=(const Meta& a, const Meta& b) { return !(a == b); }

// The way a frame travels along its flow (Packet::path_dir).
enum class PathDir : uint8_t {
  none = 0,  // not a flow's frame
  fwd,       // data, requester -> responder
  rev,       // ACK/NAK and CNP, responder -> requester
  cm_fwd,    // CM REQ and RTU (the requester's MADs)
  cm_rev,    // CM REP (the responder's)
  count_
};
const char* path_dir_name(PathDir d);

// Laid out by what a hop touches (a large run is memory-bound: its packets
// in flight do not fit the caches): the sizes, the carried parse and the
// switch's bookkeeping in the first 64-byte line, the meta fields a switch
// reads in the second, the inline header bytes (two lines for a RoCEv2
// header) after the meta; what only the endpoints read last.
struct alignas(64) Packet {
  static constexpr size_t kMaxHdr = 384;     // Eth+VLAN+IPv4+UDP+BTH+DETH+256 B MAD fits
  static constexpr size_t kInlineHdr = 96;   // every frame but a CM MAD (RoCEv2 data: 58..82 B)

  // The header bytes: kInlineHdr of them inside the packet, or kMaxHdr in a
  // block of its own once reserve_hdr() asked for more than kInlineHdr (a
  // packet keeps that block through reset() and the pool: no allocation per
  // frame in steady state). Sized so (96 inline bytes hold every RoCEv2,
  // CNP and PFC header), and with the RETH, CM and PFC fields sharing their
  // bytes in Meta, a packet in flight costs 320 B (the packets in flight
  // are most of a large run's memory: S2 holds 147 000 at its peak).
  uint8_t* hdr;
  uint32_t payload_len = 0;
  uint16_t hdr_len = 0;
  uint8_t trailer_len = 0;  // 4 when an ICRC is present
  uint8_t pad_len = 0;
  uint8_t trailer[4] = {0, 0, 0, 0};
  uint32_t fcs = 0;         // CRC-32 value as the IEEE 802.3 FCS; written LSB first on the wire

  // The parse carried with the frame (packet/parse.h): a digest of every
  // byte and length of the frame it parsed, and the checks a successful
  // parse() made (parsed_checks below). 0: none carried.
  uint64_t parsed_digest = 0;

  // Simulation bookkeeping (not on the wire).
  uint64_t rx_first_bit_ps = 0;  // set by the receiving MAC: first bit of the preamble arrived
  uint64_t eligible_ps = 0; // set by a switch while the frame is queued: when its egress may send it
  uint64_t flow_id = 0;     // the flow the frame belongs to (its data, ACKs, CNPs, CM MADs), when path_dir says so
  uint32_t ingress_port = 0;
  uint32_t lb_block = kNoLb, lb_entry = kNoLb;  // a switch's load-balancing decision while queued (ecmp/dlb.h)
  static constexpr uint32_t kNoLb = 0xFFFFFFFFu;
  // While a switch holds the frame in an egress queue: its head cell (what
  // the queue manager's dequeue returns for it) and the next frame of the
  // same queue. The switch's queues are lists through their frames, so a
  // queued frame costs no per-cell memory (a copy is in no queue).
  uint32_t queue_cell = 0;
  uint8_t parsed_checks = 0;
  uint8_t prio = 0;         // priority/traffic class chosen by the pipeline
  // Path recording (tb/sim/paths.h): which way the frame travels along its
  // flow (PathDir; none for frames of no flow: PFC, storms), and the switches
  // it has passed so far (each admission counts one).
  uint8_t path_dir = 0;
  uint8_t hops = 0;
  uint8_t traced = 0;       // stats.packet_trace chose it (tb/sim/packet_trace.h): every hop reports it
  Packet* queue_next = nullptr;

  Meta meta;                // filled by parse(); builders also fill it

 private:
  uint8_t m_inline[kInlineHdr];

 public:
  uint64_t id = 0;          // unique per run, assigned by the creator
  uint64_t created_ps = 0;  // time the sender created the frame

  // Bytes a MAC serializes for this frame, including FCS, excluding preamble/SFD/IFG.
  uint32_t frame_len() const { return hdr_len + payload_len + trailer_len + pad_len + kFcsBytes; }
  // Bytes of the frame without the FCS (what a pcap record holds).
  uint32_t frame_len_no_fcs() const { return frame_len() - kFcsBytes; }
  // Bytes on the wire including preamble+SFD and inter-frame gap.
  uint32_t wire_bytes() const { return frame_len() + kPreambleSfdBytes + kIfgBytes; }

  // Copy the frame's bytes (without FCS) into out; returns the byte count.
  // Payload and pad bytes are written as zeros. out must hold frame_len_no_fcs() bytes.
  size_t serialize(uint8_t* out, size_t cap) const;

  void reset();  // back to an empty frame; keeps the storage

  Packet() : hdr(m_inline) {}
  Packet(const Packet& o);
  Packet& operator=(const Packet& o);
  ~Packet() = default;

  // hdr holds at least n bytes (n <= kMaxHdr), keeping its first hdr_len;
  // writers of headers longer than kInlineHdr call it first.
  void reserve_hdr(size_t n) {
    if (n > kInlineHdr && hdr == m_inline) grow_hdr();
  }
  size_t hdr_capacity() const { return hdr == m_inline ? kInlineHdr : kMaxHdr; }

 private:
  void grow_hdr();
  std::unique_ptr<uint8_t[]> m_big;  // kMaxHdr bytes once grown
};

static_assert(sizeof(Packet) <= 320, "a packet in flight is five cache lines (see the layout above)");

// IEEE 802.3 FCS (CRC-32) over the frame's bytes: hdr, zero payload, trailer, zero pad.
uint32_t compute_fcs(const Packet& p);

// A 64-bit digest of the frame as it is on the wire: hdr[0, hdr_len), the
// payload, trailer and pad lengths, the trailer and the FCS. Each 8-byte word
// passes through a bijective mix (xor, multiply by an odd constant, rotate),
// so a change confined to one word, in particular any changed byte or bit,
// always changes the digest; wider changes go unnoticed with a probability of
// about 2^-64.
uint64_t frame_digest(const Packet& p);

// Object pool of packets: no heap allocation per packet once warm.
class PacketPool {
 public:
  explicit PacketPool(size_t chunk = 1024);
  ~PacketPool();
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  Packet* acquire();            // reset packet; grows by one chunk when empty
  void release(Packet* p);      // returns to the free list
  size_t in_use() const { return m_in_use; }
  size_t capacity() const { return m_capacity; }
  size_t chunks_allocated() const { return m_chunks.size(); }

 private:
  size_t m_chunk;
  std::vector<Packet*> m_chunks;  // arrays of m_chunk packets
  std::vector<Packet*> m_free;
  size_t m_in_use = 0;
  size_t m_capacity = 0;
};

}  // namespace rocesim::packet

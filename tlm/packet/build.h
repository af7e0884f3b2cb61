// Frame builders: write real header bytes, compute IPv4 checksum, ICRC and FCS.
#pragma once

#include <cstdint>

#include "packet/packet.h"

namespace rocesim::packet {

struct EthSpec {
  Mac dst = 0, src = 0;
  bool vlan = false;   // add an 802.1Q tag
  uint8_t pcp = 0;     // priority code point in the tag
  uint16_t vid = 0;
};

struct Ipv4Spec {
  uint32_t src = 0, dst = 0;
  uint8_t dscp = 0;
  uint8_t ecn = 0b10;  // ECT(0) by default for RoCEv2
  uint8_t ttl = 64;
  uint16_t id = 0;
  bool dont_fragment = true;
};

struct BthSpec {
  uint8_t opcode = op::kWriteOnly;
  bool se = false, mig = false, ackreq = false, fecn = false, becn = false;
  uint8_t pad_count = 0;
  uint16_t pkey = 0xffff;
  uint32_t dest_qp = 0;  // 24 bits
  uint32_t psn = 0;      // 24 bits
};

struct RethSpec { uint64_t va = 0; uint32_t rkey = 0; uint32_t dma_len = 0; };
struct AethSpec { uint8_t syndrome = 0; uint32_t msn = 0; };

struct CmSpec {
  uint16_t attr_id = cm::kReq;
  uint64_t tid = 0;                 // MAD transaction id
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint32_t local_qpn = 0;           // REQ/REP: the sender's QP number (24 bits)
  uint32_t starting_psn = 0;        // REQ/REP: starting PSN (24 bits)
  uint32_t src_qp = 1;              // DETH source QP (1 for GSI)
  uint32_t flow_label = 0;          // REQ: Primary Flow Label (20 bits), the connection's GRH flow label
};

// IBTA Vol 1 9.2.1 (BTH PadCnt): pad bytes that bring a payload to a multiple of 4.
inline uint8_t ib_pad_count(uint32_t payload_len) { return uint8_t((4 - (payload_len & 3)) & 3); }

// Every builder resets p (keeping p.id, the creator's: link::Ledger::create
// numbers every frame of a run), writes the headers, fills p.meta as parse()
// would, and finalizes (IPv4 checksum, ICRC, padding, FCS).
// udp_sport: UDP source port (entropy for ECMP).
// build_roce: the opcode decides which extended headers are written (RETH for
// WRITE FIRST/ONLY and READ REQUEST, AETH for ACK and READ RESPONSE
// FIRST/LAST/ONLY, zeros for others such as ImmDt/DETH); reth/aeth may be null
// (fields zero) and are ignored when the opcode carries no such header. An
// opcode parse() rejects (bad_bth) is built with no extended header.
// payload_len is the message payload; bth.pad_count zero bytes follow it
// (p.payload_len = payload_len + pad_count; meta.l4_payload_len = payload_len).
void build_roce(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, const BthSpec& bth,
                const RethSpec* reth, const AethSpec* aeth, uint32_t payload_len);
void build_cnp(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, uint32_t dest_qp);
void build_cm(Packet& p, const EthSpec& eth, const Ipv4Spec& ip, uint16_t udp_sport, const CmSpec& cm);
// 802.1Qbb PFC: DA 01:80:C2:00:00:01, EtherType 0x8808, opcode 0x0101,
// class-enable vector and 8 timers in quanta; padded to 64 B. No VLAN tag.
void build_pfc(Packet& p, Mac src, uint16_t class_enable, const uint16_t timers[8]);

// An untagged Ethernet II frame: DA, SA, EtherType and len payload bytes
// (len <= Packet::kMaxHdr - 14), padded to 64 B with its FCS. meta as
// parse() gives an EtherType it does not know: kind unknown.
void build_ethernet(Packet& p, Mac dst, Mac src, uint16_t ethertype, const uint8_t* payload, size_t len);
// Recompute IPv4 checksum (if IPv4), ICRC (if RoCEv2) and FCS after header bytes changed.
void finalize(Packet& p);
// Rewrite the IPv4 ECN field in place (e.g. to CE), updating the IPv4 checksum and FCS.
// The ICRC masks TOS, so it stays valid.
void set_ecn(Packet& p, uint8_t ecn);

}  // namespace rocesim::packet

// Parser: bytes -> Meta. Never reads past the bytes it is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "packet/packet.h"

namespace rocesim::packet {

struct ParseOptions {
  bool check_fcs = true;    // verify p.fcs against the frame's bytes
  bool check_icrc = true;   // verify the RoCEv2 ICRC
};

// Parse p's bytes into p.meta. Returns DropReason::none on success.
// Order: runt (< 64 B) -> truncated, FCS, Ethernet/VLAN, IPv4, UDP, BTH and
// extended headers, CM MAD, ICRC. All headers must lie in hdr[0, hdr_len);
// a RoCEv2 datagram must end exactly at hdr_len + payload_len + trailer_len.
// An IP total length that disagrees with the frame gives bad_ip_header.
// meta holds whatever was parsed before a failure.
//
// Carried parse: a successful parse records its checks and the frame's
// digest (frame_digest) in the packet. A later parse() of the same bytes (the
// next hop's MAC) finds the digest unchanged and makes only the checks not
// yet made (e.g. the ICRC at the NIC after switches that skip it), keeping
// meta; any change to the frame's bytes since (an ECN mark, a rewritten
// header, a corrupted byte) gives another digest and a full parse with every
// check. The verdict is the one a full parse would give.
DropReason parse(Packet& p, const ParseOptions& opt = {});

// The frame's FCS, and its ICRC when `icrc`, were just computed over its
// bytes as they are now (packet::finalize): a parse() of these same bytes
// (the digest unchanged) takes them as checked and does not compute them
// again; it still parses every header and makes every other check. Bytes
// changed since (an ECN mark, a corrupted byte, a rewritten header or FCS)
// give another digest, and the parse checks everything.
void mark_sums_computed(Packet& p, bool icrc);

// Parse a raw frame without FCS (as in a pcap record): bytes [0, len).
// Does not check an FCS nor the 60 B minimum (host captures show frames
// unpadded); bytes after a RoCEv2 datagram are accepted only as padding of a
// 60 B frame. Fills meta; returns the reason on failure.
DropReason parse_bytes(const uint8_t* bytes, size_t len, Meta& meta, bool check_icrc = true);

}  // namespace rocesim::packet

// libFuzzer target: the frame parser (tlm/packet/parse.cpp), bytes from the wire.
//
// Input layout (so that mutations reach past the FCS check):
//   [0]    flags: bit 0 = take the FCS from bytes [4, 8) (else compute it, so
//          the frame passes the FCS check); bits 1-3 = trailer_len (0..7: more
//          than 4 is broken bookkeeping that parse() must refuse)
//   [1, 3) payload_len, little-endian (zero bytes after the header)
//   [3]    pad_len
//   [4, 8) FCS, little-endian (used with flag bit 0)
//   [8, 8 + min(trailer_len, 4))  trailer bytes (the ICRC)
//   rest   header bytes from the destination MAC, at most Packet::kMaxHdr
// The same rest is also given to parse_bytes() as a raw frame (a pcap record).
// Both parsers run with every check on (FCS, ICRC); a second parse() with the
// ICRC check off reaches the CM MAD reader past a mutated ICRC.
//
// Contract (parse.h): any bytes give a DropReason, never a read past the
// bytes given (ASan), UB (UBSan) or a crash. A frame the parser accepts must
// have its header offsets inside the bytes it was given.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "packet/packet.h"
#include "packet/parse.h"

namespace {

using namespace rocesim::packet;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_frame: %s\n", what);
  std::abort();
}

// Offsets of an accepted frame lie within the `real` bytes that were parsed.
void check_meta(const Meta& m, size_t real) {
  if (m.l3_offset > real || m.l4_offset > real || m.bth_offset > real) finding("offset past the parsed bytes");
  const bool ib = m.kind == FrameKind::roce || m.kind == FrameKind::cnp || m.kind == FrameKind::cm;
  if (ib && (m.bth_offset == 0 || m.bth_offset + 12u > real)) finding("BTH outside the parsed bytes");
  if (m.pad_count > 3) finding("pad count above 3");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  const uint8_t flags = data[0];
  const uint8_t trailer_len = (flags >> 1) & 7u;
  const size_t trailer_bytes = trailer_len < 4 ? trailer_len : 4;
  if (size < 8 + trailer_bytes) return 0;
  const uint8_t* rest = data + 8 + trailer_bytes;
  const size_t rest_len = size - 8 - trailer_bytes;

  // Raw bytes (a capture record), every check on.
  Meta raw;
  if (parse_bytes(rest, rest_len, raw, true) == DropReason::none) check_meta(raw, rest_len);
  if (parse_bytes(rest, rest_len, raw, false) == DropReason::none) check_meta(raw, rest_len);

  if (rest_len > Packet::kMaxHdr) return 0;  // a Packet holds at most kMaxHdr header bytes
  static Packet p;  // reset per input; its header storage grows once to kMaxHdr
  p.reset();
  p.reserve_hdr(rest_len);
  std::memcpy(p.hdr, rest, rest_len);
  p.hdr_len = static_cast<uint16_t>(rest_len);
  p.payload_len = uint32_t(data[1]) | uint32_t(data[2]) << 8;
  p.pad_len = data[3];
  p.trailer_len = trailer_len;
  std::memcpy(p.trailer, data + 8, trailer_bytes);
  if (flags & 1u) {
    p.fcs = uint32_t(data[4]) | uint32_t(data[5]) << 8 | uint32_t(data[6]) << 16 | uint32_t(data[7]) << 24;
  } else if (trailer_len <= 4) {
    p.fcs = compute_fcs(p);
  }
  ParseOptions all;  // FCS and ICRC checks on
  if (parse(p, all) == DropReason::none) check_meta(p.meta, p.hdr_len);
  ParseOptions no_icrc;
  no_icrc.check_icrc = false;
  if (parse(p, no_icrc) == DropReason::none) check_meta(p.meta, p.hdr_len);
  return 0;
}

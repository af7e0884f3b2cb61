// Writes the seed corpus of fuzz_frame (tb/fuzz/corpus/frame/) from the
// packet builders: one file per frame kind, in fuzz_frame's input layout
// (see fuzz_frame.cpp). usage: fuzz_gen_frames OUT_DIR
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "packet/build.h"
#include "packet/packet.h"

using namespace rocesim::packet;

namespace {

void put(const std::string& path, const std::vector<uint8_t>& v) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(v.data(), 1, v.size(), f) != v.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
}

// The Packet as held in the model: header bytes, payload as a length, trailer.
std::vector<uint8_t> as_packet(const Packet& p, bool given_fcs) {
  std::vector<uint8_t> v{uint8_t((given_fcs ? 1 : 0) | p.trailer_len << 1), uint8_t(p.payload_len),
                         uint8_t(p.payload_len >> 8), p.pad_len, uint8_t(p.fcs), uint8_t(p.fcs >> 8),
                         uint8_t(p.fcs >> 16), uint8_t(p.fcs >> 24)};
  v.insert(v.end(), p.trailer, p.trailer + p.trailer_len);
  v.insert(v.end(), p.hdr, p.hdr + p.hdr_len);
  return v;
}

// The whole frame as bytes (a capture record): everything in the header part.
std::vector<uint8_t> as_bytes(const Packet& p) {
  std::vector<uint8_t> v(8, 0);
  std::vector<uint8_t> b(p.frame_len_no_fcs());
  b.resize(p.serialize(b.data(), b.size()));
  v.insert(v.end(), b.begin(), b.end());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  EthSpec eth{0x020000000002ull, 0x020000000001ull, false, 0, 0};
  EthSpec vlan = eth;
  vlan.vlan = true;
  vlan.pcp = 3;
  Ipv4Spec ip;
  ip.src = 0x0a000001;
  ip.dst = 0x0a000002;
  ip.dscp = 26;
  Packet p;

  BthSpec bth;
  bth.dest_qp = 0x12;
  bth.psn = 7;
  RethSpec reth{0x1000, 0x42, 64};
  build_roce(p, vlan, ip, 49152, bth, &reth, nullptr, 64);
  put(dir + "/write_only_vlan", as_packet(p, true));
  put(dir + "/write_only_vlan_bytes", as_bytes(p));

  bth.opcode = op::kAck;
  AethSpec aeth{0, 5};
  build_roce(p, eth, ip, 49153, bth, nullptr, &aeth, 0);
  put(dir + "/ack", as_packet(p, false));
  put(dir + "/ack_bytes", as_bytes(p));

  bth.opcode = op::kSendOnly;
  bth.pad_count = ib_pad_count(13);
  build_roce(p, eth, ip, 49154, bth, nullptr, nullptr, 13);
  put(dir + "/send_only_pad", as_packet(p, false));

  bth.opcode = op::kReadRespOnly;
  bth.pad_count = 0;
  build_roce(p, vlan, ip, 49155, bth, nullptr, &aeth, 256);
  put(dir + "/read_resp_only", as_packet(p, false));

  build_cnp(p, eth, ip, 49156, 0x12);
  put(dir + "/cnp_bytes", as_bytes(p));

  CmSpec cm;
  cm.tid = 9;
  cm.local_comm_id = 1;
  cm.local_qpn = 0x12;
  cm.starting_psn = 100;
  build_cm(p, eth, ip, 49157, cm);
  put(dir + "/cm_req", as_packet(p, false));
  put(dir + "/cm_req_bytes", as_bytes(p));

  const uint16_t timers[8] = {0, 0, 0, 0xffff, 0, 0, 0, 0};
  build_pfc(p, 0x020000000001ull, 1u << 3, timers);
  put(dir + "/pfc_bytes", as_bytes(p));
  return 0;
}

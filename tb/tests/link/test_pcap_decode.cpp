// Captures of every frame kind the packet layer builds, read back by tshark:
// RoCEv2 data/ACK/CNP/CM decode as InfiniBand over UDP 4791, PFC as MAC
// control with its class-enable vector and timers, and the file opens without
// warnings.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "link/pcap.h"
#include "packet/build.h"
#include "frames.h"

using namespace rocesim;

namespace {

std::string run(const std::string& cmd, int& rc) {
  const std::string out = "test_pcap_decode.out";
  rc = std::system((cmd + " >" + out + " 2>test_pcap_decode.err").c_str());
  std::ifstream f(out);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string read_err() {
  std::ifstream f("test_pcap_decode.err");
  std::string line, out;
  while (std::getline(f, line))
    if (!line.empty() && line.find("Running as user \"root\"") == std::string::npos) out += line + "\n";
  return out;
}

}  // namespace

TEST(PcapDecode, TsharkDecodesEveryFrameKind) {
  packet::PacketPool pool;
  const packet::EthSpec eth = testkit::test_eth(true, 3);
  const packet::Ipv4Spec ip = testkit::test_ip();

  link::PcapWriter w("test_pcap_decode.pcap");
  ASSERT_TRUE(w.open());
  packet::Packet* p = pool.acquire();

  packet::BthSpec bth;
  bth.opcode = packet::op::kWriteFirst;
  bth.dest_qp = 0x123;
  bth.psn = 77;
  packet::RethSpec reth{0x1000, 0x42, 4096};
  packet::build_roce(*p, eth, ip, 0xc001, bth, &reth, nullptr, 1024);
  w.write(1000, *p);

  packet::BthSpec ack;
  ack.opcode = packet::op::kAck;
  ack.dest_qp = 0x124;
  ack.psn = 77;
  packet::AethSpec aeth{0x60, 5};  // NAK: PSN sequence error
  packet::build_roce(*p, eth, ip, 0xc001, ack, nullptr, &aeth, 0);
  w.write(2000, *p);

  packet::build_cnp(*p, eth, ip, 0xc001, 0x123);
  w.write(3000, *p);

  packet::CmSpec cm;
  cm.attr_id = packet::cm::kReq;
  cm.local_comm_id = 0xabcd;
  cm.local_qpn = 0x123;
  cm.starting_psn = 77;
  packet::build_cm(*p, eth, ip, 0xc001, cm);
  w.write(4000, *p);

  const uint16_t timers[8] = {0, 0, 0, 0xffff, 0x80, 0, 0, 0};
  packet::build_pfc(*p, 0x020000000001ull, (1u << 3) | (1u << 4), timers);
  w.write(5000, *p);
  pool.release(p);
  ASSERT_TRUE(w.close());

  int rc = 0;
  const std::string out =
      run("tshark -n -r test_pcap_decode.pcap -T fields -E separator=, -E occurrence=f -e frame.protocols"
          " -e infiniband.bth.opcode -e infiniband.aeth.syndrome -e infiniband.cm.req.localqpn"
          " -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e macc.cbfc.pause_time.c4",
          rc);
  ASSERT_EQ(rc, 0) << read_err();
  EXPECT_EQ(read_err(), "");
  std::istringstream in(out);
  std::string line[5];
  for (auto& l : line) std::getline(in, l);
  EXPECT_EQ(line[0], "eth:ethertype:vlan:ethertype:ip:udp:infiniband:data,6,,,,,,");
  EXPECT_EQ(line[1].substr(0, line[1].find(',')), "eth:ethertype:vlan:ethertype:ip:udp:infiniband");
  EXPECT_NE(line[1].find(",17,96,"), std::string::npos) << line[1];  // ACK opcode 0x11, syndrome 0x60
  EXPECT_NE(line[2].find(",129,"), std::string::npos) << line[2];    // CNP opcode 0x81
  EXPECT_NE(line[3].find(",100,,0x000123,"), std::string::npos) << line[3];  // UD SEND_ONLY, CM REQ local QPN
  EXPECT_EQ(line[4], "eth:ethertype:macc,,,,0x0101,0x0018,65535,128");
  std::remove("test_pcap_decode.pcap");
  std::remove("test_pcap_decode.out");
  std::remove("test_pcap_decode.err");
}

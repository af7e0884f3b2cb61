// Captures of the two-host scenario, read back by tshark (Wireshark's CLI):
// the files open without warnings, every data frame decodes as RoCE
// (InfiniBand BTH over UDP 4791) and PSNs increase by one per QP.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

// tshark warns about running as root; that says nothing about the file.
std::string without_root_warning(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("Running as user \"root\"") != std::string::npos) continue;
    if (line.empty()) continue;
    out += line + "\n";
  }
  return out;
}

void check_capture(const std::string& pcap, size_t expect_frames) {
  ASSERT_TRUE(exists(pcap)) << pcap;
  const Result r = sh("tshark -n -r " + pcap +
                      " -T fields -E separator=, -e frame.protocols -e infiniband.bth.opcode -e infiniband.bth.destqp"
                      " -e infiniband.bth.psn -e frame.len");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(without_root_warning(r.err), "") << "tshark warnings for " << pcap;
  std::istringstream in(r.out);
  std::string line;
  std::map<uint64_t, int64_t> last_psn;
  size_t frames = 0;
  while (std::getline(in, line)) {
    ++frames;
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    ASSERT_EQ(f.size(), 5u) << line;
    EXPECT_NE(f[0].find("eth:ethertype:vlan:ethertype:ip:udp:infiniband"), std::string::npos)
        << "frame " << frames << " not decoded as RoCE: " << f[0];
    ASSERT_FALSE(f[1].empty()) << "no BTH opcode in frame " << frames;
    const uint64_t qp = std::stoull(f[2]);
    const int64_t psn = std::stoll(f[3]);
    auto it = last_psn.find(qp);
    if (it != last_psn.end()) {
      EXPECT_EQ(psn, it->second + 1) << "QP " << qp << " frame " << frames;
    }
    last_psn[qp] = psn;
  }
  EXPECT_EQ(frames, expect_frames);
  EXPECT_EQ(last_psn.size(), 1u) << "one QP per direction in the two-host scenario";
}

}  // namespace

TEST(Tshark, DefaultScenarioCaptureDecodesAsRoceWithIncreasingPsn) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/two_hosts.yaml --out " + dir +
                           " --pcap h1:0 --pcap h0:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  // h1 receives h0's 16 x 64 KiB at MTU 1024 (1024 frames) and sends 64 x 4 KiB (256 frames).
  check_capture(dir + "/pcap/h1-p0-rx.pcap", 1024);
  check_capture(dir + "/pcap/h1-p0-tx.pcap", 256);
  check_capture(dir + "/pcap/h0-p0-tx.pcap", 1024);
  check_capture(dir + "/pcap/h0-p0-rx.pcap", 256);
  EXPECT_FALSE(exists(dir + "/pcap/h1-p0-rx.pcap.partial"));
}

TEST(Tshark, FullLengthFramesAndOpcodesAsBuilt) {
  const std::string dir = temp_dir();
  ASSERT_EQ(rocesim("run " + src_dir() + "/configs/scenarios/two_hosts.yaml --out " + dir + " --pcap h1:0 --quiet").rc, 0);
  const Result r = sh("tshark -n -r " + dir +
                      "/pcap/h1-p0-rx.pcap -c 3 -T fields -E separator=, -e infiniband.bth.opcode -e frame.len"
                      " -e frame.cap_len -e ip.dsfield.dscp -e vlan.priority -e infiniband.reth.dmalen");
  ASSERT_EQ(r.rc, 0) << r.err;
  // 64 KiB message at MTU 1024: WRITE_FIRST (6) with RETH, then WRITE_MIDDLE (7).
  // First frame without FCS: 14 + 4 + 20 + 8 + 12 + 16 + 1024 + 4 = 1102 B.
  EXPECT_EQ(r.out, "6,1102,1102,26,3,65536\n7,1086,1086,26,3,\n7,1086,1086,26,3,\n");
}

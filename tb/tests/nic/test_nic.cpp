// The RC transport end to end through the rocesim binary: connection setup
// on the wire, loss recovery by go-back-N, CNP pacing at the receiver.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "../sim/cli_util.h"

using namespace clitest;

namespace {

double json_num(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9.e+]+)"))) return -1;
  return std::stod(m[1]);
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}

}  // namespace

TEST(RcTransport, ConnectionSetupPrecedesDataOnTheWire) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/default.yaml --out " + dir +
                           " --set hosts.transport=rc --pcap h0:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  // h0 sends REQ for its flow, receives h1's REQ and answers REP, then RTU on REP, then data.
  const Result tx = sh("tshark -n -r " + dir + "/pcap/h0-p0-tx.pcap -c 4 -T fields -E separator=, "
                       "-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.mad.attributeid");
  ASSERT_EQ(tx.rc, 0) << tx.err;
  const auto rows = csv_rows(tx.out);
  ASSERT_EQ(rows.size(), 4u) << tx.out;
  EXPECT_EQ(rows[0][0], "100") << "UD SEND_ONLY";
  EXPECT_EQ(rows[0][1], "0x000001") << "to QP1 (GSI)";
  EXPECT_EQ(rows[0][2], "0x0010") << "CM REQ first";
  // Before the first data packet of h0's flow, h0 has sent an RTU.
  std::string attrs;
  for (const auto& f : rows) attrs += (f.size() > 2 ? f[2] : std::string("-")) + " ";
  EXPECT_NE(attrs.find("0x0014"), std::string::npos) << attrs;
  const std::string s = slurp(dir + "/summary.json");
  EXPECT_EQ(json_num(s, "completed"), 2);
  EXPECT_EQ(json_num(s, "retransmitted_packets"), 0);
}

TEST(RcTransport, LinkLossIsRecoveredByGoBackNAndEveryFlowCompletes) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/default.yaml --out " + dir +
                           " --set hosts.transport=rc --set links.loss=0.02 --set hosts.rto=50us"
                           " --set sim.duration=20ms --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/summary.json");
  EXPECT_EQ(json_num(s, "completed"), 2) << "every flow completes despite 2 % loss";
  EXPECT_GT(json_num(s, "link_loss"), 0);
  EXPECT_GT(json_num(s, "retransmitted_packets"), 0);
  EXPECT_GT(json_num(s, "naks_received"), 0) << "gaps are NAKed and go back N";
  EXPECT_EQ(json_num(s, "payload_bytes_delivered"), 16.0 * 65536 + 64.0 * 4096) << "exactly the data, once";
  const auto rows = csv_rows(slurp(dir + "/flows.csv"));
  ASSERT_EQ(rows.size(), 3u);
  const auto& hdr = rows[0];
  size_t col = 0;
  while (col < hdr.size() && hdr[col] != "retransmitted") ++col;
  ASSERT_LT(col, hdr.size());
  EXPECT_GT(std::stoull(rows[1][col]) + std::stoull(rows[2][col]), 0u);
}

TEST(RcTransport, CnpsOnOneQpAreNoCloserThanTheMinimumInterval) {
  // The PFC incast with ECN marking: the receiver h16 sends CNPs to each
  // sender's QP; on the wire, two CNPs to the same QP are >= 4 us apart.
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast.yaml --out " + dir +
                           " --set hosts.transport=rc --pcap h16:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const Result tx = sh("tshark -n -r " + dir + "/pcap/h16-p0-tx.pcap -Y 'infiniband.bth.opcode == 0x81' -T fields"
                       " -E separator=, -e frame.time_epoch -e infiniband.bth.destqp -e vlan.priority -e ip.dsfield.dscp -e ip.dst");
  ASSERT_EQ(tx.rc, 0) << tx.err;
  std::map<std::string, double> last;
  int cnps = 0;
  double min_gap = 1e9;
  for (const auto& f : csv_rows(tx.out)) {
    ASSERT_EQ(f.size(), 5u);
    EXPECT_EQ(f[2], "6") << "CNP on priority 6";
    EXPECT_EQ(f[3], "48") << "CNP DSCP 48";
    const double t = std::stod(f[0]);
    const std::string qp = f[4] + "/" + f[1];  // a QP is (sender address, QP number)
    auto it = last.find(qp);
    if (it != last.end()) min_gap = std::min(min_gap, t - it->second);
    last[qp] = t;
    ++cnps;
  }
  EXPECT_GT(cnps, 100);
  EXPECT_EQ(last.size(), 16u) << "every sender's QP got CNPs";
  EXPECT_GE(min_gap, 4e-6 - 1e-9);
  EXPECT_LT(min_gap, 4.5e-6) << "and as soon as allowed while marks keep coming";
}

TEST(Dcqcn, IncastOnTheLeafSpineIsLosslessWithFewerPausesThanWithoutCc) {
  auto run = [](const std::string& cc) {
    const std::string dir = temp_dir();
    const Result r = rocesim("run " + src_dir() + "/configs/scenarios/incast_dcqcn.yaml --out " + dir +
                             " --set hosts.cc=" + cc + " --quiet");
    EXPECT_EQ(r.rc, 0) << r.err;
    return slurp(dir + "/summary.json");
  };
  const std::string with = run("dcqcn"), without = run("none");
  for (const std::string* s : {&with, &without}) {
    EXPECT_EQ(json_num(*s, "dropped"), 0);
    EXPECT_EQ(json_num(*s, "completed"), 16);
  }
  EXPECT_GT(json_num(with, "cnps_received"), 0);
  const double p_with = json_num(with, "pause_frames_tx"), p_without = json_num(without, "pause_frames_tx");
  EXPECT_GT(p_without, 0);
  EXPECT_LT(p_with, p_without) << "DCQCN slows the senders before PFC has to";
}

TEST(Workload, WebSearchAtHalfLoadOnTheLeafSpineReportsSlowdowns) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/websearch_leafspine.yaml --out " + dir + " --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/summary.json");
  EXPECT_GE(json_num(s, "sim_time_ns"), 10e6) << "at least 10 ms simulated";
  const double flows = json_num(s, "flows");
  // 256 hosts x 25 Gbps x 50 % over 10 ms / (8 x 1 711 250 B mean) = 2338 flows expected.
  EXPECT_GT(flows, 2100);
  EXPECT_LT(flows, 2600);
  EXPECT_GT(json_num(s, "completed"), 0.9 * flows);
  const double p50 = json_num(s, "slowdown_p50"), p95 = json_num(s, "slowdown_p95"), p99 = json_num(s, "slowdown_p99");
  EXPECT_GE(p50, 1.0);
  EXPECT_LE(p50, p95);
  EXPECT_LE(p95, p99);
  EXPECT_EQ(json_num(s, "dropped"), 0);
  const auto rows = csv_rows(slurp(dir + "/flows.csv"));
  EXPECT_EQ(rows.size(), static_cast<size_t>(flows) + 1) << "one row per flow";
}

TEST(NicPort, QpsShareThePortByteFairly) {
  // Two QPs from h0 to h1 at line rate: one with 64 B messages, one with 4 KiB
  // messages. Deficit round robin gives them equal payload bytes, not equal packets.
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml",
             "name: fair\nsim: {duration: 200us, stop_when_done: false}\nhosts: {mtu: 4096}\n"
             "flows:\n  - {src: h0, dst: h1, size: 64B, messages: 10000000}\n"
             "  - {src: h0, dst: h1, size: 4KiB, messages: 1000000}\n");
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = csv_rows(slurp(dir + "/out/flows.csv"));
  ASSERT_EQ(rows.size(), 3u);
  size_t col = 0;
  while (rows[0][col] != "bytes_received") ++col;
  const double a = std::stod(rows[1][col]), b = std::stod(rows[2][col]);
  EXPECT_GT(a, 5e5);
  EXPECT_NEAR(a / b, 1.0, 0.02) << a << " vs " << b << " payload bytes";
}

TEST(NicPort, AFullReceiveBufferPausesTheSwitchInsteadOfDropping) {
  // h1 drains its 256 KiB receive buffer at 40 Gbps while 100 Gbps arrive:
  // it sends XOFF at 3/4 full and XON at 1/4, and nothing is lost. Without
  // PFC from the NIC, the buffer overflows.
  const std::string base = "run " + src_dir() + "/configs/scenarios/default.yaml --set hosts.transport=rc"
                           " --set 'hosts.rx_buffer={size: 256KiB, drain_rate: 40Gbps}' --quiet --out ";
  const std::string a = temp_dir(), b = temp_dir();
  ASSERT_EQ(rocesim(base + a).rc, 0);
  const std::string s = slurp(a + "/summary.json");
  EXPECT_GT(json_num(s, "pause_frames_tx"), 0);
  EXPECT_EQ(json_num(s, "rx_buffer_drops"), 0);
  EXPECT_LE(json_num(s, "rx_buffer_peak_bytes"), 262144);
  EXPECT_GT(json_num(s, "rx_buffer_peak_bytes"), 196608) << "it reached XOFF";
  EXPECT_EQ(json_num(s, "completed"), 2);
  ASSERT_EQ(rocesim(base + b + " --set hosts.rx_buffer.pfc=false --set sim.duration=2ms --set hosts.rto=50us").rc, 0);
  const std::string t = slurp(b + "/summary.json");
  EXPECT_GT(json_num(t, "nic_buffer"), 0) << "without pauses the buffer overflows";
  EXPECT_EQ(json_num(t, "rx_buffer_drops"), json_num(t, "nic_buffer"));
  // Go-back-N at line rate into a 40 Gbps drain keeps overflowing it: the
  // losses are retransmitted over and over (the reason lossless fabrics pause).
  EXPECT_GT(json_num(t, "retransmitted_packets"), json_num(t, "nic_buffer") / 2);
}

TEST(Workload, RingAllReduceStepsWaitForTheirData) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/allreduce_ring.yaml --out " + dir + " --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = csv_rows(slurp(dir + "/flows.csv"));
  const size_t N = 8, steps = 2 * (N - 1);
  ASSERT_EQ(rows.size(), N * steps + 1);
  const auto& h = rows[0];
  auto col = [&](const char* name) {
    size_t c = 0;
    while (c < h.size() && h[c] != name) ++c;
    return c;
  };
  const size_t cstart = col("start_ns"), cfinish = col("finish_ns"), csize = col("size_bytes"), ctag = col("tag");
  for (size_t k = 0; k < steps; ++k) {
    for (size_t rank = 0; rank < N; ++rank) {
      const auto& f = rows[1 + k * N + rank];
      EXPECT_EQ(f[ctag], "allreduce");
      EXPECT_EQ(std::stoull(f[csize]), (64ull << 20) / N);
      ASSERT_FALSE(f[cfinish].empty()) << "step " << k << " rank " << rank << " completed";
      if (k == 0) continue;
      // Rank r forwards in step k what it received from rank r-1 in step k-1.
      const auto& prev = rows[1 + (k - 1) * N + (rank + N - 1) % N];
      EXPECT_GE(std::stod(f[cstart]), std::stod(prev[cfinish])) << "step " << k << " rank " << rank;
    }
  }
  EXPECT_NE(slurp(dir + "/flow_series.csv").rfind("time_ns,flow,src,dst,bytes_received,throughput_bps\n", 0),
            std::string::npos);
  // The resolved config keeps the generator entry, so it regenerates the same flows.
  ASSERT_EQ(rocesim("run " + dir + "/config.resolved.yaml --out " + dir + "/again --quiet").rc, 0);
  EXPECT_EQ(slurp(dir + "/again/flows.csv"), slurp(dir + "/flows.csv"));
}

TEST(RcTransport, SendMessagesUseSendOpcodesAndTheFlowFileReplaysTheRun) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/default.yaml --out " + dir +
                           " --set hosts.transport=rc --set flows[0].op=send --pcap h1:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  // h0 -> h1 is 16 SENDs of 64 KiB at MTU 1024: SEND_FIRST (0), 62 x SEND_MIDDLE (1), SEND_LAST (2) each.
  const Result t = sh("tshark -n -r " + dir + "/pcap/h1-p0-rx.pcap -Y 'infiniband.bth.opcode <= 4' -T fields"
                      " -e infiniband.bth.opcode");
  ASSERT_EQ(t.rc, 0) << t.err;
  std::map<std::string, int> ops;
  std::istringstream in(t.out);
  std::string line;
  while (std::getline(in, line)) ++ops[line];
  EXPECT_EQ(ops["0"], 16);
  EXPECT_EQ(ops["1"], 16 * 62);
  EXPECT_EQ(ops["2"], 16);
  EXPECT_EQ(json_num(slurp(dir + "/summary.json"), "completed"), 2);
  // flows.hpcc.txt: one line per flow with all its bytes; replayed as a flow file it carries the same bytes.
  const std::string hpcc = slurp(dir + "/flows.hpcc.txt");
  EXPECT_EQ(hpcc, "2\n0 1 3 100 1048576 0.000001000\n1 0 3 100 262144 0.000002000\n");
  write_file(dir + "/replay.yaml", "name: replay\nsim: {duration: 5ms}\ntraffic:\n  - {kind: flow_file, file: flows.hpcc.txt}\n");
  const Result rr = rocesim("run " + dir + "/replay.yaml --out " + dir + "/replay --quiet");
  ASSERT_EQ(rr.rc, 0) << rr.err;
  const std::string s = slurp(dir + "/replay/summary.json");
  EXPECT_EQ(json_num(s, "total"), 2);
  EXPECT_EQ(json_num(s, "payload_bytes_delivered"), 16.0 * 65536 + 64.0 * 4096);
}

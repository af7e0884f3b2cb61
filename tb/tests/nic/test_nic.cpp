// The RC transport end to end through the rocesim binary: connection setup
// on the wire, loss recovery by go-back-N, CNP pacing at the receiver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  // One RC flow h0 -> h1 starting at 1 us on the direct 100 Gbps link (2 m).
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml",
             "name: cm\nlinks: {rate: 100Gbps, cable_m: 2}\nhosts: {transport: rc, mtu: 1024}\n"
             "flows:\n  - {src: h0, dst: h1, size: 8KiB, start: 1us}\n");
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --pcap h0:0 --pcap h1:0 --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto frames = [&](const std::string& cap) {
    const Result t = sh("tshark -n -r " + dir + "/out/pcap/" + cap + " -T fields -E separator=, -e frame.time_epoch"
                        " -e frame.len -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn"
                        " -e infiniband.mad.attributeid");
    EXPECT_EQ(t.rc, 0) << t.err;
    return csv_rows(t.out);
  };
  const auto h0 = frames("h0-p0-tx.pcap"), h1 = frames("h1-p0-tx.pcap");
  ASSERT_GE(h0.size(), 3u);
  ASSERT_GE(h1.size(), 1u);
  for (const auto* row : {&h0[0], &h0[1], &h0[2], &h1[0]}) ASSERT_GE(row->size(), 5u);
  auto ns = [](const std::string& epoch) { return static_cast<uint64_t>(std::llround(std::stod(epoch) * 1e9)); };
  // A CM MAD on the wire (IBTA vol. 1 ch. 12/13): UD SEND_ONLY (opcode 100) to
  // QP1 with DETH, a 256 B MAD: 14 + 4 (802.1Q) + 20 + 8 + 12 (BTH) + 8 (DETH)
  // + 256 + 4 (ICRC) + 4 (FCS) = 330 B; the capture holds it without the FCS.
  const uint64_t mad_frame = 14 + 4 + 20 + 8 + 12 + 8 + 256 + 4 + 4;
  // The order on the wire: h0 REQ, h1 REP, h0 RTU, then h0's first data packet
  // (RDMA WRITE_FIRST, opcode 6, PSN 0), nothing in between on h0.
  EXPECT_EQ(h0[0][2], "100");
  EXPECT_EQ(h0[0][3], "0x000001") << "to QP1 (GSI)";
  EXPECT_EQ(h0[0][5], "0x0010") << "CM REQ first";
  ASSERT_GE(h1[0].size(), 6u);
  EXPECT_EQ(h1[0][5], "0x0013") << "h1 answers REP";
  ASSERT_GE(h0[1].size(), 6u);
  EXPECT_EQ(h0[1][5], "0x0014") << "h0 sends RTU on the REP";
  EXPECT_EQ(h0[2][2], "6") << "the next frame h0 sends is data: RDMA WRITE_FIRST";
  EXPECT_EQ(h0[2][4], "0") << "PSN 0";
  for (const auto* row : {&h0[0], &h0[1], &h1[0]}) EXPECT_EQ(std::stoull((*row)[1]), mad_frame - 4);
  // Timing (docs/fidelity.md: CM frames go first; each side answers the
  // moment the frame's last bit is in): 80 ps per byte, 10 ns of cable, the
  // last bit (8 + frame) bytes after the first, back to back = (frame + 20) B.
  // Captures keep whole nanoseconds (truncated).
  const uint64_t cable = 10000;
  const uint64_t req = 1000000;                               // flow start
  const uint64_t rep = req + cable + (8 + mad_frame) * 80;    // REQ's last bit at h1
  const uint64_t rtu = rep + cable + (8 + mad_frame) * 80;    // REP's last bit at h0
  const uint64_t data = rtu + (mad_frame + 20) * 80;          // right after the RTU
  EXPECT_EQ(ns(h0[0][0]), req / 1000);
  EXPECT_EQ(ns(h1[0][0]), rep / 1000);
  EXPECT_EQ(ns(h0[1][0]), rtu / 1000);
  EXPECT_EQ(ns(h0[2][0]), data / 1000);
  const std::string s = slurp(dir + "/out/summary.json");
  EXPECT_EQ(json_num(s, "completed"), 1);
  EXPECT_EQ(json_num(s, "retransmitted_packets"), 0);
}

TEST(RcTransport, LinkLossIsRecoveredByGoBackNAndEveryFlowCompletes) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/two_hosts.yaml --out " + dir +
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
  const std::string base = "run " + src_dir() + "/configs/scenarios/two_hosts.yaml --set hosts.transport=rc"
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
  // Go-back-N at line rate into a 40 Gbps drain keeps overflowing it: the
  // losses are retransmitted over and over (the reason lossless fabrics pause).
  EXPECT_GT(json_num(t, "retransmitted_packets"), json_num(t, "nic_buffer") / 2);
}

TEST(NicPort, WithoutPfcAFullReceiveBufferDropsExactlyWhatItCannotHold) {
  // Open loop, so no retransmission muddles the count: h0 sends N = 2000
  // frames back to back at 100 Gbps into h1's 256 KiB buffer drained at
  // 40 Gbps, without PFC.
  const std::string dir = temp_dir();
  write_file(dir + "/s.yaml",
             "name: rxbuf\nlinks: {rate: 100Gbps, cable_m: 2}\nhosts: {mtu: 1024, "
             "rx_buffer: {size: 256KiB, drain_rate: 40Gbps, pfc: false}}\n"
             "flows:\n  - {src: h0, dst: h1, size: 2000KiB}\n");
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  // Frames: WRITE_FIRST 14+4+20+8+12+16+1024+4+4 = 1106 B, then 1999 of 1090 B.
  // Arrivals (last bit, when the NIC takes the frame) are a = (1090 + 20) * 80
  // ps apart (the first frame's extra 16 B shift its own last bit as much as
  // the next first bit). The buffer drains one frame at a time, frame bytes at
  // 40 Gbps: d0 = 1106 * 200 ps, then d = 1090 * 200 ps each, without pause
  // (arrivals outpace it). A frame is taken iff the bytes held + its own fit
  // in S = 262144 B: at most C = floor(S / 1090) = 240 frames of 1090 B.
  const int64_t N = 2000, a = 1110 * 80, d0 = 1106 * 200, d = 1090 * 200, C = 262144 / 1090;
  // Drained by the k-th arrival: D(k) = #{j >= 1 : d0 + (j-1) d <= k a}.
  auto drained = [&](int64_t k) { return k * a < d0 ? int64_t(0) : (k * a - d0) / d + 1; };
  // Until the buffer is full every frame is taken: full after arrival k when
  // k + 1 - D(k) = C. From then on, one drain at most between arrivals (d > a)
  // keeps it at C - 1 or C before each arrival and at C after, so the frames
  // taken by the last arrival are C + D(N-1).
  int64_t full = -1;
  for (int64_t k = 0; k < N && full < 0; ++k)
    if (k + 1 - drained(k) == C) full = k;
  ASSERT_GE(full, 0);
  ASSERT_LT(full, N - 1) << "the buffer fills before the burst ends";
  ASSERT_NE(((N - 1) * a - d0) % d, 0) << "no drain ends at the same picosecond as the last arrival";
  const int64_t taken = C + drained(N - 1);
  const std::string s = slurp(dir + "/out/summary.json");
  EXPECT_EQ(json_num(s, "nic_buffer"), double(N - taken)) << "drops: " << N << " - (" << C << " + " << drained(N - 1) << ")";
  EXPECT_EQ(json_num(s, "rx_buffer_drops"), double(N - taken));
  EXPECT_EQ(json_num(s, "rx_buffer_peak_bytes"), double(C * 1090));
  EXPECT_EQ(json_num(s, "pause_frames_tx"), 0);
  const auto rows = csv_rows(slurp(dir + "/out/flows.csv"));
  ASSERT_EQ(rows.size(), 2u);
  size_t col = 0;
  while (col < rows[0].size() && rows[0][col] != "packets_received") ++col;
  ASSERT_LT(col, rows[0].size());
  EXPECT_EQ(std::stoll(rows[1][col]), taken) << "every frame taken is drained and processed";
}

TEST(Fct, SlowdownPercentilesAreTheNearestRanksOfProcessorSharedFlows) {
  // A known distribution of FCTs: n = 20 open-loop flows from h0 to h1, all
  // starting at 0, flow i (i = 1..20) with p_i = 50 i packets of 1024 B. The
  // NIC serves its QPs round robin, one MTU packet per turn (a one-MTU DRR
  // quantum), so it is processor sharing at packet grain: flow i ends in round
  // p_i, after every smaller flow has finished and the n - i + 1 others still
  // running have sent p_i - 1 packets each, at one of positions 1 .. n-i+1 of
  // that round. So the frames sent up to flow i's last are in [L_i, U_i]:
  //   U_i = sum_{j<i} p_j + (n-i+1) p_i,   L_i = U_i - (n-i+1) + 1,
  // and slowdown_i = FCT_i / ideal_i ~ 20.5 - i/2.
  const int n = 20;
  const std::string dir = temp_dir();
  std::string yaml = "name: ps\nsim: {duration: 5ms}\nlinks: {rate: 100Gbps, cable_m: 2}\nhosts: {mtu: 1024}\nflows:\n";
  for (int i = 1; i <= n; ++i) yaml += "  - {src: h0, dst: h1, size: " + std::to_string(50 * i) + "KiB, start: 0us}\n";
  write_file(dir + "/s.yaml", yaml);
  const Result r = rocesim("run " + dir + "/s.yaml --out " + dir + "/out --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  // Wire bytes: 1110 per frame (1090 B + preamble and IFG), and each flow's
  // first frame (WRITE_FIRST, in round 1, before any flow ends) 16 B more
  // (RETH). FCT = (wire bytes up to the last frame - its IFG) * 80 ps + 10 ns
  // of cable; ideal = the flow's own (p_i frames, one RETH) the same way.
  std::vector<double> lo, hi;
  uint64_t before = 0;
  for (int i = 1; i <= n; ++i) {
    const uint64_t p = 50ull * i, others = n - i + 1;
    const uint64_t U = before + others * p, L = U - others + 1;
    auto fct = [&](uint64_t frames) { return double((frames * 1110 + 16ull * n - 12) * 80 + 10000); };
    const double ideal = double((p * 1110 + 16 - 12) * 80 + 10000);
    lo.push_back(fct(L) / ideal);
    hi.push_back(fct(U) / ideal);
    before += p;
  }
  // Each flow's own slowdown (flows.csv, 6 decimals) is in its interval.
  const auto rows = csv_rows(slurp(dir + "/out/flows.csv"));
  ASSERT_EQ(rows.size(), size_t(n) + 1);
  size_t col = 0;
  while (col < rows[0].size() && rows[0][col] != "slowdown") ++col;
  ASSERT_LT(col, rows[0].size());
  for (int i = 1; i <= n; ++i) {
    const double sd = std::stod(rows[i][col]);
    EXPECT_GE(sd, lo[i - 1] - 1e-6) << "flow " << i;
    EXPECT_LE(sd, hi[i - 1] + 1e-6) << "flow " << i;
  }
  // Nearest rank (docs/outputs.md): the p-quantile of N values is the
  // ceil(p N)-th smallest; the k-th smallest of values each in [lo_i, hi_i]
  // lies between the k-th smallest lo and the k-th smallest hi.
  std::sort(lo.begin(), lo.end());
  std::sort(hi.begin(), hi.end());
  const std::string s = slurp(dir + "/out/summary.json");
  for (const auto& [key, q] : std::vector<std::pair<std::string, double>>{
           {"slowdown_p50", 0.50}, {"slowdown_p95", 0.95}, {"slowdown_p99", 0.99}}) {
    const size_t k = static_cast<size_t>(std::ceil(q * n));  // 10, 19, 20
    const double v = json_num(s, key);                        // %.6g: 6 significant digits
    EXPECT_GE(v, lo[k - 1] * (1 - 1e-5)) << key;
    EXPECT_LE(v, hi[k - 1] * (1 + 1e-5)) << key;
  }
  // p50 is flow 11's, about 20.5 - 11/2 = 15 (its round position moves it by
  // at most 10 / 550 = 0.02); p99 is the smallest flow's, in [19.6, 20] by
  // its position in its last round.
  EXPECT_NEAR(json_num(s, "slowdown_p50"), 15.0, 0.05);
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
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/two_hosts.yaml --out " + dir +
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

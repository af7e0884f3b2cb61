// A configured PFC refresh period must be shorter than the pause time
// (802.1Qbb: pause_quanta x 512 bit times at the port's speed) at every port
// that sends XOFF, or the pause expires before it is refreshed. The binding
// port is the fastest (its pause is the shortest). Rejected at load: exit 2,
// one line naming FILE:LINE:COL of pfc.refresh and both values, no outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

constexpr uint64_t kGbps = 1000000000ull;

// 802.1Qbb pause time in ps, rounded up (a refresh of whole ps is shorter than
// the true pause exactly when it is shorter than this).
uint64_t pause_ps(uint64_t quanta, uint64_t rate_bps) {
  const unsigned __int128 num = static_cast<unsigned __int128>(quanta) * 512 * 1000000000000ull;
  return static_cast<uint64_t>((num + rate_bps - 1) / rate_bps);
}

// Two leaves of one host each under one spine: hosts at 25 Gbps, leaf-spine
// links at 100 Gbps. Line 9 holds `refresh: ` (value at column 12).
std::string leaf_spine(uint64_t quanta, const std::string& refresh) {
  return "name: t\n"
         "sim: {duration: 20us}\n"
         "topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 1, host_rate: 25Gbps,"
         " fabric_rate: 100Gbps}\n"
         "flows:\n"
         "  - {src: h0, dst: h1, size: 8KiB}\n"
         "pfc:\n"
         "  headroom: auto\n"
         "  pause_quanta: " + std::to_string(quanta) + "\n"
         "  refresh: " + refresh + "\n";
}

// Two hosts on one 100 Gbps cable, no switch: only a NIC's receive buffer sends XOFF.
std::string direct(const std::string& rx_buffer, uint64_t quanta, const std::string& refresh) {
  return "name: t\n"
         "sim: {duration: 20us}\n"
         "topology: {kind: direct}\n"
         "links: {rate: 100Gbps}\n"
         "hosts:\n"
         "  rx_buffer: " + rx_buffer + "\n"
         "flows:\n"
         "  - {src: h0, dst: h1, size: 8KiB}\n"
         "pfc:\n"
         "  pause_quanta: " + std::to_string(quanta) + "\n"
         "  refresh: " + refresh + "\n";
}

std::string ps_text(uint64_t ps) { return std::to_string(ps) + "ps"; }

struct Outcome {
  Result r;
  std::string cfg, out;
};

Outcome run(const std::string& yaml, const std::string& extra = "") {
  Outcome x;
  const std::string dir = temp_dir();
  x.cfg = dir + "/scenario.yaml";
  x.out = dir + "/out";
  write_file(x.cfg, yaml);
  x.r = rocesim("run " + x.cfg + " --out " + x.out + " --quiet " + extra);
  return x;
}

void expect_rejected(const Outcome& x, int line, const std::string& refresh_text, uint64_t pause) {
  EXPECT_EQ(x.r.rc, 2) << x.r.err;
  const std::string where = x.cfg + ":" + std::to_string(line) + ":12: key 'pfc.refresh': ";
  EXPECT_NE(x.r.err.find(where), std::string::npos) << x.r.err << "\nexpected: " << where;
  EXPECT_NE(x.r.err.find("refresh period " + refresh_text), std::string::npos) << x.r.err;
  // The pause time as the message prints it: whole ns here (asserted), so "<n>ns".
  EXPECT_EQ(pause % 1000, 0u);
  EXPECT_NE(x.r.err.find("pause time " + std::to_string(pause / 1000) + "ns"), std::string::npos) << x.r.err;
  EXPECT_EQ(std::count(x.r.err.begin(), x.r.err.end(), '\n'), 1) << "one line: " << x.r.err;
  EXPECT_FALSE(exists(x.out)) << "no output directory on bad input";
}

}  // namespace

// pause_quanta 300: 1536 ns at 100 Gbps, 6144 ns at 25 Gbps. A 3 us refresh is
// shorter than the hosts' pause but not the leaf-spine ports': rejected.
TEST(PfcRefreshConfig, LongerThanThePauseAtTheFastestPortIsRejected) {
  const uint64_t fast = pause_ps(300, 100 * kGbps), slow = pause_ps(300, 25 * kGbps);
  ASSERT_LT(3000000u, slow);
  ASSERT_GT(3000000u, fast);
  expect_rejected(run(leaf_spine(300, "3us")), 9, "3us", fast);
}

TEST(PfcRefreshConfig, EqualToThePauseIsRejectedAndOnePicosecondShorterIsAccepted) {
  const uint64_t fast = pause_ps(300, 100 * kGbps);
  expect_rejected(run(leaf_spine(300, ps_text(fast))), 9, std::to_string(fast / 1000) + "ns", fast);
  const Outcome ok = run(leaf_spine(300, ps_text(fast - 1)));
  EXPECT_EQ(ok.r.rc, 0) << ok.r.err;
  EXPECT_TRUE(exists(ok.out + "/summary.json"));
}

// Without switches the refresh applies to the NICs' ports when they send PFC
// from a receive buffer; with the buffer's PFC off no port sends XOFF.
TEST(PfcRefreshConfig, AppliesToNicPortsThatSendPfc) {
  const uint64_t p = pause_ps(1000, 100 * kGbps);  // 5120 ns
  expect_rejected(run(direct("{size: 256KiB, drain_rate: 40Gbps}", 1000, "6us")), 11, "6us", p);
  const Outcome off = run(direct("{size: 256KiB, drain_rate: 40Gbps, pfc: false}", 1000, "6us"));
  EXPECT_EQ(off.r.rc, 0) << off.r.err;
  const Outcome shorter = run(direct("{size: 256KiB, drain_rate: 40Gbps}", 1000, ps_text(p - 1)));
  EXPECT_EQ(shorter.r.rc, 0) << shorter.r.err;
}

// The repro, through --set: the message names the --set argument.
TEST(PfcRefreshConfig, SetOnTheCommandLineIsRejectedAtLoad) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast.yaml --out " + dir +
                           "/out --set pfc.pause_quanta=300 --set pfc.refresh=3us");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--set pfc.refresh=3us: key 'pfc.refresh': refresh period 3us is not shorter than the pause time " +
                       std::to_string(pause_ps(300, 100 * kGbps) / 1000) + "ns"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(dir + "/out"));
}

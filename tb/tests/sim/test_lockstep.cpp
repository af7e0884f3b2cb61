// switch.queue_impl: lockstep and rtl (issue 11 item 3). In lockstep every
// queue-manager operation of a run goes to the C++ model and to the
// Verilated RTL, and the two are compared after each; in rtl the RTL decides
// alone. Shipped scenarios with PFC (pfc_incast), ECN (ecn_incast, WRED) and
// dynamic-threshold drops (pfc_incast without PFC) run with zero mismatches
// and give the same outputs as the model alone, in both modes; the cycle
// agreement in summary.json follows the RTL's and the TLM model's timing
// tables; a switch larger than the RTL's build is refused at load.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

namespace {

uint64_t json_u64(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([0-9]+)"))) return UINT64_MAX;
  return std::stoull(m[1]);
}

int64_t json_i64(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return INT64_MIN;
  return std::stoll(m[1]);
}

// summary.json without what differs between two runs of the same scenario by
// design: the wall-clock fields and the queue-implementation block.
std::string summary_without_wall(const std::string& json) {
  std::istringstream in(json);
  std::string out, line;
  while (std::getline(in, line))
    if (line.find("wall") == std::string::npos && line.find("\"rtl\":") == std::string::npos &&
        line.find("\"lockstep\":") == std::string::npos)
      out += line + "\n";
  return out;
}

bool has_rtl() {
  const Result r = rocesim("validate " + src_dir() + "/configs/scenarios/pfc_incast.yaml --queue-impl lockstep --quiet");
  return r.err.find("this build has none") == std::string::npos;
}

struct Case {
  const char* name;
  const char* scenario;
  const char* extra;
};

class LockstepScenario : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(LockstepScenario, AgreesWithTheRtlOnEveryOperation) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const Case& c = GetParam();
  const std::string dir = temp_dir();
  const std::string base = "run " + src_dir() + "/configs/scenarios/" + c.scenario + ".yaml " + c.extra + " --quiet";
  const Result tlm = rocesim(base + " --out " + dir + "/tlm");
  ASSERT_EQ(tlm.rc, 0) << tlm.err;
  const Result ls = rocesim(base + " --out " + dir + "/ls --queue-impl lockstep");
  ASSERT_EQ(ls.rc, 0) << ls.err;
  const std::string sum = slurp(dir + "/ls/summary.json");
  EXPECT_GE(json_u64(sum, "operations"), 5000u) << sum;
  EXPECT_EQ(json_u64(sum, "mismatches"), 0u) << sum;
  // The model decides in both runs and the RTL agrees: the same outputs.
  for (const char* f : {"flows.csv", "queues.csv", "pfc.csv"})
    EXPECT_TRUE(slurp(dir + "/tlm/" + f) == slurp(dir + "/ls/" + f)) << f;
  // What each case exercises, from the run's own counters.
  const std::string t = slurp(dir + "/tlm/summary.json");
  const std::string what = c.name;
  const char* counter = what == "pfc" ? "pause_frames_tx" : what == "ecn" ? "marked" : "dropped";
  EXPECT_GT(json_u64(t, counter), 0u) << counter << "\n" << t;
  std::system(("rm -rf " + dir).c_str());
}

// rtl: the RTL makes every decision and the C++ model is not used; the
// counters are booked from the RTL's results. Since the RTL decides as the
// model does, every output is the same as the model's run, byte for byte,
// the summary's switch counters (drops by reason, peaks, ECN marks) included.
TEST_P(LockstepScenario, RtlAloneGivesTheSameOutputs) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const Case& c = GetParam();
  const std::string dir = temp_dir();
  const std::string base = "run " + src_dir() + "/configs/scenarios/" + c.scenario + ".yaml " + c.extra + " --quiet";
  const Result tlm = rocesim(base + " --out " + dir + "/tlm --pcap sw0:0");
  ASSERT_EQ(tlm.rc, 0) << tlm.err;
  const Result rt = rocesim(base + " --out " + dir + "/rtl --pcap sw0:0 --queue-impl rtl");
  ASSERT_EQ(rt.rc, 0) << rt.err;
  for (const char* f : {"flows.csv", "queues.csv", "pfc.csv", "cc.csv", "pcap/sw0-p0-rx.pcap", "pcap/sw0-p0-tx.pcap"}) {
    if (std::string(f) == "cc.csv" && !exists(dir + "/tlm/" + f)) continue;  // DCQCN scenarios only
    EXPECT_TRUE(exists(dir + "/rtl/" + f)) << f;
    EXPECT_TRUE(slurp(dir + "/tlm/" + f) == slurp(dir + "/rtl/" + f)) << f;
  }
  const std::string st = slurp(dir + "/tlm/summary.json"), sr = slurp(dir + "/rtl/summary.json");
  EXPECT_EQ(summary_without_wall(st), summary_without_wall(sr));
  // The RTL ran: it took operations, and at least one clock edge per operation.
  const uint64_t ops = json_u64(sr, "operations"), cycles = json_u64(sr, "cycles");
  EXPECT_GE(ops, 5000u) << sr;
  EXPECT_GE(cycles, ops) << sr;
  std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(Shipped, LockstepScenario,
                         ::testing::Values(Case{"pfc", "pfc_incast", ""}, Case{"ecn", "ecn_incast", ""},
                                           Case{"dt_drops", "pfc_incast", "--set pfc.enabled=false"}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(Lockstep, ASwitchLargerThanTheRtlIsRefusedAtLoad) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const std::string dir = temp_dir();
  write_file(dir + "/big.yaml", "topology: {kind: single_switch, hosts: 40}\nflows: [{src: h0, dst: h1, size: 1KiB}]\n");
  for (const std::string mode : {"lockstep", "rtl"}) {
    const Result r = rocesim("run " + dir + "/big.yaml --out " + dir + "/o --queue-impl " + mode);
    EXPECT_EQ(r.rc, 2) << mode;
    EXPECT_NE(r.err.find("key 'switch.queue_impl'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(mode + ": switch"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("40 ports"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/o")) << "refused before anything is built";
  }
  std::system(("rm -rf " + dir).c_str());
}

// Cycle agreement: each operation's decision cycles in the RTL (docs/rtl.md,
// "Timing": enqueue 1 + cells when admitted and 1 when dropped, dequeue
// 1 + cells, PFC tick 1) against the cycles the TLM model charges for it
// (docs/queue-manager.md: enqueue switch.pipeline.mmu, dequeue
// ceil(cells / switch.buffer.read_cells_per_cycle), tick 0). The expected
// distribution is computed here from the run's operation record (its cells
// and verdicts) with those two tables, and compared with summary.json's
// nearest-rank p50, p99, min and max.
TEST(Lockstep, CycleAgreementFollowsTheTwoTimingTables) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  const std::string dir = temp_dir();
  const uint32_t mmu_cycles = 5, read_per_cycle = 3;
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast.yaml --quiet --queue-impl lockstep" +
                           " --set switch.pipeline.mmu=" + std::to_string(mmu_cycles) +
                           " --set switch.buffer.read_cells_per_cycle=" + std::to_string(read_per_cycle) +
                           " --set pfc.enabled=false --set sim.duration=2ms --out " + dir + "/o --record-ops " + dir +
                           "/ops.txt");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream in(dir + "/ops.txt");
  std::vector<int64_t> d;
  size_t drops = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.empty()) continue;
    if (t[0] == "E") {  // E T SW IN PG OUT Q CELLS BYTES LOSSLESS ECN_FRAME ECN RAND32 : VERDICT ...
      ASSERT_GT(t.size(), 14u) << line;
      const int64_t cells = std::stoll(t[7]);
      const bool admitted = t[14] == "admit";
      drops += !admitted;
      d.push_back((admitted ? 1 + cells : 1) - int64_t(mmu_cycles));
    } else if (t[0] == "D") {  // D T SW PORT Q ECN_FRAME ECN RAND32 DISCARD : HEAD CELLS ...
      ASSERT_GT(t.size(), 11u) << line;
      const int64_t cells = std::stoll(t[11]);
      d.push_back(1 + cells - (cells + read_per_cycle - 1) / read_per_cycle);
    } else if (t[0] == "T") {
      d.push_back(1);
    }
  }
  ASSERT_GE(d.size(), 5000u);
  EXPECT_GT(drops, 0u) << "the lossy incast drops (the 1-cycle verdicts are in the distribution)";
  std::sort(d.begin(), d.end());
  auto rank = [&](uint64_t num, uint64_t den) { return d[(d.size() * num + den - 1) / den - 1]; };
  const std::string sum = slurp(dir + "/o/summary.json");
  EXPECT_EQ(json_u64(sum, "operations"), d.size()) << sum;
  EXPECT_EQ(json_i64(sum, "cycle_diff_p50"), rank(1, 2)) << sum;
  EXPECT_EQ(json_i64(sum, "cycle_diff_p99"), rank(99, 100)) << sum;
  EXPECT_EQ(json_i64(sum, "cycle_diff_min"), d.front()) << sum;
  EXPECT_EQ(json_i64(sum, "cycle_diff_max"), d.back()) << sum;
  EXPECT_NE(d.front(), d.back()) << "a distribution, not one value";
  std::system(("rm -rf " + dir).c_str());
}

namespace {
// The times of the VCD's timestamps (#T lines), and the rising edges of the
// first 1-bit $var called `name`.
struct Vcd {
  std::vector<uint64_t> stamps, rises;
};
Vcd read_vcd(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  Vcd v;
  std::string line, id;
  uint64_t t = 0;
  while (std::getline(in, line)) {
    if (id.empty() && line.find("$var") != std::string::npos && line.find(" " + name + " ") != std::string::npos) {
      const size_t a = line.find(" 1 ") + 3;
      id = line.substr(a, line.find(' ', a) - a);
    } else if (!line.empty() && line[0] == '#') {
      t = std::stoull(line.substr(1));
      v.stamps.push_back(t);
    } else if (!id.empty() && line == "1" + id) {
      v.rises.push_back(t);
    }
  }
  return v;
}
}  // namespace

// A fault injected on purpose (ROCESIM_RTL_FAULT=dt_shift: every alpha of
// the RTL doubled) in a whole run: lockstep stops with exit 1 naming the
// switch, the time, the field with its expected and actual values and the
// operation, and writes the waveform window around it (docs/queue-manager.md):
// OUT/lockstep_mismatch/ with the TLM-level trace and the RTL's, each with
// its .gtkw, both inside [T - 2 us, T + 200 ns], the RTL's clocked at the
// mismatching operation's time.
TEST(Lockstep, AnInjectedFaultIsReportedWithItsWaveformWindow) {
  if (!has_rtl()) GTEST_SKIP() << "built without Verilator";
  if (std::system("command -v fst2vcd >/dev/null 2>&1") != 0) GTEST_SKIP() << "fst2vcd not installed";
  const std::string dir = temp_dir();
  setenv("ROCESIM_RTL_FAULT", "dt_shift", 1);
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast.yaml --quiet --queue-impl lockstep --out " +
                           dir + "/o");
  unsetenv("ROCESIM_RTL_FAULT");
  ASSERT_EQ(r.rc, 1) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("lockstep mismatch on sw0 at ([0-9]+)\\.([0-9]{3}) ns: ([a-z. ]+): "
                                                     "expected ([0-9]+), got ([0-9]+)")))
      << r.err;
  const uint64_t t_ps = std::stoull(m[1]) * 1000 + std::stoull(m[2]);
  EXPECT_NE(m[4], m[5]);
  EXPECT_NE(r.err.find("first: "), std::string::npos) << r.err;
  const std::string w = dir + "/o/lockstep_mismatch/";
  for (const char* f : {"wave.fst", "wave.gtkw", "wave.rtl.sw0.fst", "wave.rtl.sw0.gtkw"})
    ASSERT_TRUE(exists(w + f)) << f << "\n" << r.err;
  const uint64_t from = t_ps > 2000000 ? t_ps - 2000000 : 0, to = t_ps + 200000;
  for (const char* f : {"wave", "wave.rtl.sw0"}) {
    ASSERT_EQ(std::system(("fst2vcd -f " + w + f + ".fst -o " + w + f + ".vcd >/dev/null 2>&1").c_str()), 0) << f;
  }
  const Vcd tlm = read_vcd(w + "wave.vcd", "clk"), rtl = read_vcd(w + "wave.rtl.sw0.vcd", "clk");
  ASSERT_FALSE(tlm.stamps.empty());
  ASSERT_FALSE(rtl.rises.empty());
  for (const Vcd* v : {&tlm, &rtl}) {
    EXPECT_GE(v->stamps.front(), from);
    EXPECT_LE(v->stamps.back(), to);
  }
  // The mismatching operation was issued at T: the RTL's clock runs then (its
  // first edge at T, or one period after the previous operation's last).
  const uint64_t period = 1000;  // switch.clock_period's default (docs/config.md)
  EXPECT_TRUE(std::any_of(rtl.rises.begin(), rtl.rises.end(),
                          [&](uint64_t t) { return t >= t_ps && t < t_ps + 40 * period; }))
      << "no RTL clock edge in [T, T + 40 cycles)";
  // Every signal the RTL's save file lists is in its trace (the model's top scope, "qm").
  const std::string g = slurp(w + "wave.rtl.sw0.gtkw"), vcd = slurp(w + "wave.rtl.sw0.vcd");
  const std::string top = vcd.substr(0, vcd.find("$scope module qm $end", vcd.find("$scope module qm $end") + 1));
  size_t listed = 0;
  std::istringstream gl(g);
  for (std::string line; std::getline(gl, line);) {
    if (line.rfind("qm.", 0) != 0) continue;
    ++listed;
    EXPECT_TRUE(std::regex_search(top, std::regex("\\$var wire [0-9]+ \\S+ " + line.substr(3) + "( |$)")))
        << line << " is not a top-level signal of the RTL trace";
  }
  EXPECT_GE(listed, 40u) << g;
  EXPECT_TRUE(exists(dir + "/o/lockstep_mismatch.log")) << "the rerun's own report";
  std::system(("rm -rf " + dir).c_str());
}

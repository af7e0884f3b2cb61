// rocesim run --trace: the waveforms of pfc_incast read back with fst2vcd
// (GTKWave's own FST reader) agree with queues.csv and pfc.csv, other
// outputs of the same run, as docs/outputs.md defines them; the window and
// the selection keep what they say; VCD holds the same changes; bad values
// exit 2 with one line; tracing leaves every other output byte-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "../wave/vcd_read.h"
#include "cli_util.h"

namespace {

using clitest::Result;

const std::string kIncast = "configs/scenarios/pfc_incast.yaml";

std::vector<std::vector<std::string>> csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}


size_t col(const std::vector<std::string>& head, const std::string& name) {
  for (size_t i = 0; i < head.size(); ++i)
    if (head[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

struct TracedRun {
  std::string dir;
  Result r;
  wavetest::Vcd vcd;
};

// The OUT placeholder: the run's --out directory.
std::string with_out(const std::string& args, const std::string& out) {
  std::string s = args;
  for (size_t p; (p = s.find("OUT")) != std::string::npos;) s.replace(p, 3, out);
  return s;
}

TracedRun run_out(const std::string& args, const std::string& trace = "wave.fst") {
  TracedRun x;
  x.dir = clitest::temp_dir();
  const std::string out = x.dir + "/out";
  x.r = clitest::rocesim("run " + clitest::src_dir() + "/" + kIncast + " --out " + out + " --quiet " +
                         with_out(args, out));
  const std::string t = out + "/" + trace;
  if (trace.size() > 4 && trace.compare(trace.size() - 4, 4, ".vcd") == 0) {
    x.vcd = wavetest::parse_vcd(clitest::slurp(t));
  } else if (clitest::exists(t)) {
    const Result c = clitest::sh("fst2vcd " + t);
    EXPECT_EQ(c.rc, 0) << c.err;
    x.vcd = wavetest::parse_vcd(c.out);
  }
  return x;
}

class WaveIncast : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    full = new TracedRun(run_out("--trace OUT/wave.fst"));
  }
  static void TearDownTestSuite() {
    std::system(("rm -rf " + full->dir).c_str());
    delete full;
  }
  static TracedRun* full;
};
TracedRun* WaveIncast::full = nullptr;

}  // namespace

TEST_F(WaveIncast, WritesFstAndGtkw) {
  ASSERT_EQ(full->r.rc, 0) << full->r.err;
  EXPECT_EQ(full->r.err, "") << "no warning (no change behind the written time)";
  ASSERT_TRUE(full->vcd.error.empty()) << full->vcd.error;
  EXPECT_EQ(full->vcd.timescale, "1ps");
  // The .gtkw beside it names only signals the trace has (GTKWave shows vectors with their range).
  const std::string gtkw = clitest::slurp(full->dir + "/out/wave.gtkw");
  ASSERT_FALSE(gtkw.empty());
  std::istringstream in(gtkw);
  size_t shown = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '@' || line[0] == '-' || line[0] == '[' || line[0] == '*') continue;
    const std::string name = line.substr(0, line.find('['));
    EXPECT_TRUE(full->vcd.has(name)) << line;
    ++shown;
  }
  EXPECT_GT(shown, 16u) << "at least every sender's PG";
  EXPECT_NE(gtkw.find("sw0.p16.q3.depth_bytes[31:0]"), std::string::npos);
  EXPECT_NE(gtkw.find("-sw0.p16.q3"), std::string::npos) << "a group per queue";
}

// queues.csv samples each queue's instantaneous depth at its row's time
// (docs/outputs.md). The sample runs at that picosecond among the model's
// other processes, so it sees the traced value either before or after the
// changes at exactly that time; both are the trace's values at that time.
TEST_F(WaveIncast, DepthAgreesWithQueuesCsv) {
  ASSERT_TRUE(full->vcd.error.empty());
  const auto rows = csv(clitest::slurp(full->dir + "/out/queues.csv"));
  ASSERT_GT(rows.size(), 10u);
  const auto& h = rows[0];
  const size_t ct = col(h, "time_ns"), cn = col(h, "node"), cp = col(h, "port"), cq = col(h, "queue"),
               cb = col(h, "depth_bytes"), cc = col(h, "depth_cells"), cu = col(h, "buffer_used_cells");
  size_t checked = 0, nonzero = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const uint64_t t = clitest::ns_text_ps(r[ct]);
    const std::string q = r[cn] + ".p" + r[cp] + ".q" + r[cq] + ".";
    for (auto [sig, c] : {std::pair{q + "depth_bytes", cb}, std::pair{q + "depth_cells", cc},
                          std::pair{r[cn] + ".mmu.buffer_cells", cu}}) {
      uint64_t before = 0, after = 0;
      ASSERT_TRUE(full->vcd.at(sig, t, after)) << sig;
      full->vcd.before(sig, t, before);
      const uint64_t want = std::stoull(r[c]);
      EXPECT_TRUE(want == before || want == after) << sig << " at " << t << " ps: queues.csv " << want
                                                   << ", trace " << before << " / " << after;
      ++checked;
      nonzero += want != 0;
    }
  }
  EXPECT_GT(nonzero, 30u) << "the incast queue builds";
  EXPECT_GT(checked, 90u);
}

// Every XOFF/XON in pfc.csv (of the traced nodes) is an edge of its (port,
// PG)'s xoff signal at its exact time, and every pause_start/pause_end an
// edge of the port's paused signal; and the trace has no other edges.
// Priority p is PG p by the default QoS maps (docs/config.md: PCP -> TC and
// TC -> PG are identities). Returns the (XOFF, pause_start) counts checked.
static std::pair<size_t, size_t> expect_pause_edges(const wavetest::Vcd& vcd, const std::string& pfc_csv,
                                                    const std::set<std::string>& nodes) {
  const auto rows = csv(pfc_csv);
  const auto& h = rows[0];
  const size_t ct = col(h, "time_ns"), cn = col(h, "node"), cp = col(h, "port"), cr = col(h, "priority"),
               ce = col(h, "event");
  // Expected edges per signal: time -> new value.
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> want;
  size_t xoff = 0, pauses = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (!nodes.empty() && !nodes.count(r[cn])) continue;
    const std::string& e = r[ce];
    const uint64_t t = clitest::ns_text_ps(r[ct]);
    const std::string port = r[cn] + ".p" + r[cp] + ".";
    if (e == "xoff" || e == "xon") {
      want[port + "pg" + r[cr] + ".xoff"].emplace_back(t, e == "xoff");
      xoff += e == "xoff";
    } else if (e == "pause_start" || e == "pause_end") {
      want[port + "paused" + r[cr]].emplace_back(t, e == "pause_start");
      pauses += e == "pause_start";
    }
  }
  for (const auto& [sig, edges] : want) {
    EXPECT_TRUE(vcd.has(sig)) << sig;
    std::vector<std::pair<uint64_t, uint64_t>> got;
    for (const auto& c : vcd.of(sig))
      if (!(c.first == vcd.times.front() && c.second == 0)) got.push_back(c);  // less the initial 0
    std::vector<std::pair<uint64_t, uint64_t>> w = edges;
    std::stable_sort(w.begin(), w.end(), [](auto& a, auto& b) { return a.first < b.first; });
    EXPECT_EQ(got, w) << sig;
  }
  // No edge elsewhere: every xoff and paused signal that changed is in pfc.csv.
  for (const auto& [name, id] : vcd.id_of) {
    const bool pause_sig = name.find(".xoff") != std::string::npos || name.find(".paused") != std::string::npos;
    if (pause_sig && vcd.of(name).size() > 1) {
      EXPECT_TRUE(want.count(name)) << name;
    }
  }
  return {xoff, pauses};
}

TEST_F(WaveIncast, PauseEdgesAreThePfcCsvEvents) {
  ASSERT_TRUE(full->vcd.error.empty());
  const auto [xoff, pauses] = expect_pause_edges(full->vcd, clitest::slurp(full->dir + "/out/pfc.csv"), {});
  EXPECT_GT(xoff, 16u);
  EXPECT_GT(pauses, 16u);
}

// Switches hand received frames up early (link/mac.h): a pause frame's
// transitions are learnt before they happen, and traced at their own time.
// pfc_incast_leafspine pauses switch ports (leaf uplinks, spine ports).
TEST(WaveLeafSpine, EarlyHandOffPausesAtTheirTime) {
  const std::string d = clitest::temp_dir();
  const Result r = clitest::rocesim("run " + clitest::src_dir() + "/configs/scenarios/pfc_incast_leafspine.yaml --out " +
                                    d + "/out --quiet --trace " + d + "/out/w.fst --trace-select spine2,leaf1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const Result c = clitest::sh("fst2vcd " + d + "/out/w.fst");
  ASSERT_EQ(c.rc, 0) << c.err;
  const wavetest::Vcd vcd = wavetest::parse_vcd(c.out);
  ASSERT_TRUE(vcd.error.empty()) << vcd.error;
  const auto [xoff, pauses] = expect_pause_edges(vcd, clitest::slurp(d + "/out/pfc.csv"), {"spine2", "leaf1"});
  EXPECT_GT(xoff, 10u);
  EXPECT_GT(pauses, 100u);
  std::system(("rm -rf " + d).c_str());
}

// --trace-from/--trace-to: the window's file starts at `from` with every
// value the full trace has then, holds the full trace's changes inside, none after `to`.
TEST_F(WaveIncast, WindowKeepsOnlyThatWindow) {
  const uint64_t from = 100000000, to = 200000000;  // 100 us, 200 us
  TracedRun w = run_out("--trace OUT/wave.fst --trace-from 100us --trace-to 200us");
  ASSERT_EQ(w.r.rc, 0) << w.r.err;
  ASSERT_TRUE(w.vcd.error.empty()) << w.vcd.error;
  ASSERT_FALSE(w.vcd.times.empty());
  EXPECT_EQ(w.vcd.times.front(), from);
  EXPECT_EQ(w.vcd.times.back(), to);
  size_t changes = 0;
  for (const auto& [name, id] : full->vcd.id_of) {
    ASSERT_TRUE(w.vcd.has(name)) << name;
    std::vector<std::pair<uint64_t, uint64_t>> expect;
    uint64_t v0 = 0;
    full->vcd.at(name, from, v0);
    expect.emplace_back(from, v0);
    for (const auto& c : full->vcd.of(name))
      if (c.first > from && c.first <= to) expect.push_back(c);
    EXPECT_EQ(w.vcd.of(name), expect) << name;
    changes += expect.size() - 1;
  }
  EXPECT_GT(changes, 1000u);
  std::system(("rm -rf " + w.dir).c_str());
}

// FILE.vcd: rocesim's own VCD writer holds the same changes as the FST.
TEST_F(WaveIncast, VcdHasTheSameChanges) {
  TracedRun v = run_out("--trace OUT/wave.vcd", "wave.vcd");
  ASSERT_EQ(v.r.rc, 0) << v.r.err;
  ASSERT_TRUE(v.vcd.error.empty()) << v.vcd.error;
  ASSERT_EQ(v.vcd.id_of.size(), full->vcd.id_of.size());
  for (const auto& [name, id] : full->vcd.id_of) EXPECT_EQ(v.vcd.of(name), full->vcd.of(name)) << name;
  EXPECT_TRUE(clitest::exists(v.dir + "/out/wave.gtkw"));
  std::system(("rm -rf " + v.dir).c_str());
}

// --trace-select: only those ports (with the switch's buffer signals) and hosts.
TEST_F(WaveIncast, SelectKeepsThoseNodesAndPorts) {
  TracedRun s = run_out("--trace OUT/wave.fst --trace-select sw0:16,h0 --trace-select h3");
  ASSERT_EQ(s.r.rc, 0) << s.r.err;
  ASSERT_TRUE(s.vcd.error.empty()) << s.vcd.error;
  std::set<std::string> scopes;
  for (const auto& [name, id] : s.vcd.id_of) {
    const size_t a = name.find('.'), b = name.find('.', a + 1);
    scopes.insert(name.substr(0, b));
    EXPECT_EQ(s.vcd.of(name), full->vcd.of(name)) << name << ": the same values as the full trace";
  }
  EXPECT_EQ(scopes, (std::set<std::string>{"sw0.mmu", "sw0.p16", "h0.p0", "h3.p0"}));
  std::system(("rm -rf " + s.dir).c_str());
}

// Tracing changes nothing else: every other output is byte-identical
// (summary.json but its wall-clock fields).
TEST_F(WaveIncast, OtherOutputsIdentical) {
  TracedRun plain = run_out("");
  ASSERT_EQ(plain.r.rc, 0) << plain.r.err;
  for (const char* f : {"flows.csv", "pfc.csv", "queues.csv", "flows.hpcc.txt", "config.resolved.yaml"})
    EXPECT_EQ(clitest::slurp(plain.dir + "/out/" + f), clitest::slurp(full->dir + "/out/" + f)) << f;
  // Wall-clock figures differ run to run; "events" counts the calendar's
  // firings, a cost figure: with waveforms on, every MAC wakes at each frame
  // end to record the busy signal's fall (docs/design.md, "The event path").
  auto strip_wall = [](const std::string& s) {
    std::string o;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
      if (l.find("wall") == std::string::npos && l.find("\"events\":") == std::string::npos) o += l + "\n";
    return o;
  };
  EXPECT_EQ(strip_wall(clitest::slurp(plain.dir + "/out/summary.json")),
            strip_wall(clitest::slurp(full->dir + "/out/summary.json")));
  std::system(("rm -rf " + plain.dir).c_str());
}

// Bad values: one line naming the option, exit 2, nothing written.
TEST(WaveCli, BadValuesExit2) {
  const std::string cfg = clitest::src_dir() + "/" + kIncast;
  const std::string d = clitest::temp_dir();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--trace " + d + "/w.txt", "--trace"},
      {"--trace", "--trace"},
      {"--trace " + d + "/w.fst --trace-from 20us --trace-to 10us", "--trace-from 20us must be before --trace-to 10us"},
      {"--trace " + d + "/w.fst --trace-from 10us --trace-to 10us", "must be before"},
      {"--trace " + d + "/w.fst --trace-from 10", "--trace-from 10"},
      {"--trace " + d + "/w.fst --trace-to 1.5ps", "--trace-to 1.5ps"},
      {"--trace " + d + "/w.fst --trace-from 6ms", "--trace-from 6ms"},
      {"--trace-from 10us", "--trace-from needs --trace"},
      {"--trace-select sw0", "--trace-select needs --trace"},
      {"--trace " + d + "/w.fst --trace-select nosuch", "no node 'nosuch'"},
      {"--trace " + d + "/w.fst --trace-select sw0:99", "sw0:99"},
      {"--trace " + d + "/w.fst --trace-select h0:x", "PORT must be"},
      {"--trace " + d + "/w.fst --trace-select sw0,,h0", "expected NODE"},
  };
  for (const auto& [args, msg] : cases) {
    const Result r = clitest::rocesim("run " + cfg + " --out " + d + "/out " + args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(msg), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_FALSE(clitest::exists(d + "/out")) << args;
    EXPECT_FALSE(clitest::exists(d + "/w.fst")) << args;
  }
  std::system(("rm -rf " + d).c_str());
}

// hosts.cc: dcqcn: each flow's traced rate changes exactly at its cc.csv
// rows (the reaction point's rate after each event; several at one time: the
// last one; a row that leaves the rate unchanged: no edge).
TEST(WaveDcqcn, RateIsTheCcCsvRate) {
  const std::string d = clitest::temp_dir();
  const Result r = clitest::rocesim("run " + clitest::src_dir() + "/configs/scenarios/incast_dcqcn.yaml --out " + d +
                                    "/out --quiet --trace " + d + "/out/w.vcd");
  ASSERT_EQ(r.rc, 0) << r.err;
  const wavetest::Vcd vcd = wavetest::parse_vcd(clitest::slurp(d + "/out/w.vcd"));
  ASSERT_TRUE(vcd.error.empty()) << vcd.error;
  const auto rows = csv(clitest::slurp(d + "/out/cc.csv"));
  const size_t ct = col(rows[0], "time_ns"), cf = col(rows[0], "flow"), cr = col(rows[0], "rate_bps");
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> by_flow;
  for (size_t i = 1; i < rows.size(); ++i)
    by_flow[rows[i][cf]].emplace_back(clitest::ns_text_ps(rows[i][ct]), std::stoull(rows[i][cr]));
  size_t flows = 0, edges = 0;
  for (const auto& [name, id] : vcd.id_of) {
    const size_t f = name.find(".flow"), e = name.rfind(".rate_bps");
    if (f == std::string::npos || e == std::string::npos) continue;
    const auto& got = vcd.of(name);
    ASSERT_FALSE(got.empty()) << name;
    std::vector<std::pair<uint64_t, uint64_t>> ev = by_flow[name.substr(f + 5, e - f - 5)];
    std::stable_sort(ev.begin(), ev.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::pair<uint64_t, uint64_t>> want{got.front()};  // the flow's rate at the start
    for (size_t k = 0; k < ev.size(); ++k) {
      if (k + 1 < ev.size() && ev[k + 1].first == ev[k].first) continue;  // a later row at the same time
      if (ev[k].second != want.back().second) want.push_back(ev[k]);
    }
    EXPECT_EQ(got, want) << name;
    ++flows;
    edges += want.size() - 1;
  }
  EXPECT_EQ(flows, 16u) << "every sender's flow";
  EXPECT_GT(edges, 100u);
  std::system(("rm -rf " + d).c_str());
}

// --record-ops and qm_replay (issue 11 item 3): the operation stream of a run
// replayed on the queue manager alone reproduces every decision; a changed
// result is caught at its line and field; a malformed file is refused with
// FILE:LINE:COL; recording does not change the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

std::string replay_bin() {
  const std::string b = bin();
  const size_t slash = b.rfind('/');
  return (slash == std::string::npos ? std::string(".") : b.substr(0, slash)) + "/qm_replay";
}

Result replay(const std::string& file) { return sh(replay_bin() + " " + file); }

struct Counts {
  size_t enq = 0, enq_admit = 0, deq = 0, tick = 0, xoff = 0;
};
Counts count(const std::string& ops) {
  Counts c;
  std::istringstream in(ops);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("E ", 0) == 0) {
      ++c.enq;
      c.enq_admit += line.find(" : admit ") != std::string::npos;
    }
    c.deq += line.rfind("D ", 0) == 0;
    c.tick += line.rfind("T ", 0) == 0;
    c.xoff += line.find(" xoff ") != std::string::npos;
  }
  return c;
}

// Replaces the first occurrence of `what` on an op line starting with `kind`; returns its 1-based line.
size_t replace_first(std::string& text, const std::string& kind, const std::string& what, const std::string& with) {
  size_t pos = 0, line = 1;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const std::string l = text.substr(pos, end - pos);
    const size_t at = l.find(what);
    if (l.rfind(kind, 0) == 0 && at != std::string::npos) {
      text.replace(pos + at, what.size(), with);
      return line;
    }
    pos = end + 1;
    ++line;
  }
  return 0;
}

struct Recorded {
  std::string dir, ops;
};

// pfc_incast_leafspine: 20 switches, XOFF/XON on every tier, refresh ticks.
const Recorded& recorded() {
  static const Recorded r = [] {
    Recorded x;
    x.dir = temp_dir();
    const Result run = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast_leafspine.yaml --out " + x.dir +
                               "/run --quiet --record-ops " + x.dir + "/ops.txt");
    EXPECT_EQ(run.rc, 0) << run.err;
    x.ops = slurp(x.dir + "/ops.txt");
    return x;
  }();
  return r;
}

}  // namespace

TEST(RecordOps, ReplayReproducesEveryDecisionOfTheRun) {
  const Recorded& r = recorded();
  ASSERT_FALSE(r.ops.empty());
  EXPECT_FALSE(exists(r.dir + "/ops.txt.partial"));
  const Counts c = count(r.ops);
  EXPECT_GE(c.enq + c.deq + c.tick, 5000u);
  // Every flow completes and the fabric drains: each admitted packet is
  // dequeued exactly once (nothing is flushed in this scenario).
  EXPECT_EQ(c.deq, c.enq_admit);
  EXPECT_GT(c.xoff, 0u) << "the scenario pauses: XOFF decisions are in the record";
  EXPECT_GT(c.tick, 0u) << "and refresh ticks";
  const Result rp = replay(r.dir + "/ops.txt");
  EXPECT_EQ(rp.rc, 0) << rp.err;
  EXPECT_NE(rp.out.find(std::to_string(c.enq + c.deq + c.tick) + " operations on 20 switches"), std::string::npos)
      << rp.out;
  EXPECT_NE(rp.out.find("every decision agrees"), std::string::npos) << rp.out;
}

TEST(RecordOps, AChangedResultIsReportedAtItsLineAndField) {
  const Recorded& r = recorded();
  struct Case {
    std::string kind, what, with, field;
  };
  for (const Case& k : {Case{"E ", " : admit ", " : pool_full ", "verdict: expected pool_full, got admit"},
                        Case{"E ", " xoff ", " none ", "pfc: expected none, got xoff"},
                        Case{"T ", " : none", " : xon", "pfc: expected xon, got none"}}) {
    std::string text = r.ops;
    const size_t line = replace_first(text, k.kind, k.what, k.with);
    ASSERT_GT(line, 0u) << k.what;
    const std::string f = r.dir + "/changed.txt";
    write_file(f, text);
    const Result rp = replay(f);
    EXPECT_EQ(rp.rc, 1) << k.field << "\n" << rp.out << rp.err;
    EXPECT_NE(rp.err.find(f + ":" + std::to_string(line) + ": "), std::string::npos) << rp.err;
    EXPECT_NE(rp.err.find(k.field), std::string::npos) << rp.err;
  }
}

TEST(RecordOps, AMalformedFileIsRefusedWithFileLineAndColumn) {
  const Recorded& r = recorded();
  const std::string f = r.dir + "/bad.txt";
  // The first operation line loses its last field.
  std::string text = r.ops;
  const size_t at = text.find("\nE ");
  ASSERT_NE(at, std::string::npos);
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at) + 1, '\n')) + 1;
  const size_t end = text.find('\n', at + 1);
  text.erase(text.rfind(' ', end), end - text.rfind(' ', end));
  write_file(f, text);
  Result rp = replay(f);
  EXPECT_EQ(rp.rc, 2);
  EXPECT_NE(rp.err.find(f + ":" + std::to_string(line) + ":"), std::string::npos) << rp.err;
  EXPECT_NE(rp.err.find("expected 32 fields, got 31"), std::string::npos) << rp.err;
  write_file(f, "not an operation record\n");
  rp = replay(f);
  EXPECT_EQ(rp.rc, 2);
  EXPECT_NE(rp.err.find(f + ":1:1: not a rocesim queue-manager operation record"), std::string::npos) << rp.err;
  rp = replay(r.dir + "/nosuch.txt");
  EXPECT_EQ(rp.rc, 2);
  EXPECT_NE(rp.err.find("cannot open file"), std::string::npos) << rp.err;
}

TEST(RecordOps, RecordingDoesNotChangeTheRun) {
  const Recorded& r = recorded();
  const Result plain = rocesim("run " + src_dir() + "/configs/scenarios/pfc_incast_leafspine.yaml --out " + r.dir +
                               "/plain --quiet");
  ASSERT_EQ(plain.rc, 0) << plain.err;
  for (const char* f : {"flows.csv", "queues.csv", "pfc.csv"})
    EXPECT_TRUE(slurp(r.dir + "/plain/" + f) == slurp(r.dir + "/run/" + f)) << f;
}

// A run small enough for the RTL's build parameters (rtl/CMakeLists.txt: 8
// ports, 4096 cells): 3-to-1 incast of 4 MiB each with PFC and WRED in
// cells. qm_replay --impl rtl drives the Verilated queue manager with the
// recorded operations and every decision agrees with what the C++ model
// decided in the run.
TEST(RecordOps, TheRtlReplaysTheRunsDecisions) {
  const std::string dir = temp_dir();
  write_file(dir + "/small.yaml",
             "name: rtl_sized_incast\n"
             "topology: {kind: single_switch, hosts: 4, host_rate: 100Gbps}\n"
             "hosts: {mtu: 4096}\n"
             "switch:\n"
             "  buffer: {size: 1MiB, cell: 256B}\n"
             "  mmu:\n"
             "    pools: {ingress_lossless: 448KiB, ingress_lossy: 128KiB, egress_lossless: 768KiB, egress_lossy: "
             "256KiB}\n"
             "    shared_headroom: 160KiB\n"
             "  ecn: {mode: wred, unit: cells, kmin: 40, kmax: 400, pmax: 0.5}\n"
             "flows:\n"
             "  - {src: h0, dst: h3, size: 4MiB}\n"
             "  - {src: h1, dst: h3, size: 4MiB}\n"
             "  - {src: h2, dst: h3, size: 4MiB}\n");
  const Result run = rocesim("run " + dir + "/small.yaml --out " + dir + "/run --quiet --record-ops " + dir + "/s.ops");
  ASSERT_EQ(run.rc, 0) << run.err;
  const Counts c = count(slurp(dir + "/s.ops"));
  EXPECT_GE(c.enq + c.deq, 5000u);
  EXPECT_GT(c.xoff, 0u);
  const Result rp = sh(replay_bin() + " --impl rtl " + dir + "/s.ops");
  if (rp.err.find("this build has no RTL model") != std::string::npos) GTEST_SKIP() << "built without Verilator";
  EXPECT_EQ(rp.rc, 0) << rp.out << rp.err;
  EXPECT_NE(rp.out.find("(rtl): " + std::to_string(c.enq + c.deq + c.tick) + " operations on 1 switches"),
            std::string::npos)
      << rp.out;
  EXPECT_NE(rp.out.find("every decision agrees"), std::string::npos) << rp.out;
  // The 20-switch leaf-spine record replays on the RTL too (its switches fit
  // the default build: 32 ports, 65 536 cells), with every decision agreeing.
  const Recorded& big = recorded();
  const Counts bc = count(big.ops);
  const Result ls = sh(replay_bin() + " --impl rtl " + big.dir + "/ops.txt");
  EXPECT_EQ(ls.rc, 0) << ls.out << ls.err;
  EXPECT_NE(ls.out.find("(rtl): " + std::to_string(bc.enq + bc.deq + bc.tick) + " operations on 20 switches"),
            std::string::npos)
      << ls.out;
  // A switch larger than the RTL was built for is refused, not mis-simulated:
  // the small record with its switch declared as 40 ports.
  std::string text = slurp(dir + "/s.ops");
  const size_t at = text.find("\nswitch 0 sw0 4 ");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "\nswitch 0 sw0 40 ");
  write_file(dir + "/big.ops", text);
  const Result too_big = sh(replay_bin() + " --impl rtl " + dir + "/big.ops");
  EXPECT_EQ(too_big.rc, 2) << too_big.out;
  EXPECT_NE(too_big.err.find("rtl cannot hold the configuration"), std::string::npos) << too_big.err;
}

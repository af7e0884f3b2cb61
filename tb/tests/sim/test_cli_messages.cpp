// Issue 10, "Messages", "An unclosed quote swallows the file" and
// "Undocumented limits", as a user meets them: each case exits 2 before
// simulating with one line naming FILE:LINE:COL (or the --set argument) and
// the key, writes no output directory; or, for the accepted forms, is valid.
#include <gtest/gtest.h>

#include <string>

#include "cli_util.h"

using namespace clitest;

namespace {

struct Bad {
  Result r;
  std::string out;  // the --out it was given
};

// `run FILE --out D` of `yaml` (plus extra arguments).
Bad run_bad(const std::string& yaml, const std::string& extra = "") {
  const std::string dir = temp_dir();
  const std::string cfg = dir + "/m.yaml", out = dir + "/out";
  write_file(cfg, yaml);
  Bad b{rocesim("run " + cfg + " --out " + out + " " + extra), out};
  // The file's path in messages is as given; tests match on "m.yaml:L:C".
  return b;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_refused(const Bad& b, const std::string& part) {
  EXPECT_EQ(b.r.rc, 2) << b.r.err;
  EXPECT_EQ(lines(b.r.err), 1) << b.r.err;
  EXPECT_NE(b.r.err.find(part), std::string::npos) << b.r.err;
  EXPECT_FALSE(exists(b.out)) << "output directory written for a refused run";
}

Result validate(const std::string& yaml, const std::string& extra = "") {
  const std::string dir = temp_dir();
  write_file(dir + "/m.yaml", yaml);
  return rocesim("validate " + dir + "/m.yaml -q " + extra);
}

const char* kFlow = "flows:\n  - {src: h0, dst: h1, size: 4KiB}\n";

}  // namespace

TEST(CliMessages, UnclosedQuoteRefused) {
  expect_refused(run_bad(std::string("name: \"incast\ntopology:\n  kind: single_switch\n  hosts: 4\n") + kFlow),
                 "m.yaml:1:7: key 'name': double-quoted string is never closed");
  // Closed by a later quote: the parser fails at line 5; the message points at line 1.
  expect_refused(run_bad("name: 'incast\ntopology:\n  kind: single_switch\nflows:\n  - {src: h0, dst: h1, size: "
                         "4KiB, op: 'write'}\n"),
                 "m.yaml:1:7: single-quoted string runs past its line over 'topology:'");
}

TEST(CliMessages, MisspeltKeyInFlowNamed) {
  expect_refused(run_bad("flows:\n  - {src: h0, dst: h1, sz: 4KiB}\n"),
                 "m.yaml:2:24: key 'flows[0].sz': unknown key (did you mean 'size'?");
}

// The range messages name 1TiB and 1h: both are accepted units, and the
// bound itself is in range.
TEST(CliMessages, RangeUnitsAccepted) {
  expect_refused(run_bad("flows:\n  - {src: h0, dst: h1, size: 2TiB}\n"), "key 'flows[0].size': must be at most 1TiB (got 2TiB)");
  expect_refused(run_bad(std::string("sim:\n  duration: 2h\n") + kFlow), "m.yaml:2:13: key 'sim.duration': must be at most 1h");
  const Result tib = validate("flows:\n  - {src: h0, dst: h1, size: 1TiB}\n");
  EXPECT_EQ(tib.rc, 0) << tib.err;
  const Result hour = validate(std::string("sim:\n  duration: 1h\n") + kFlow);
  EXPECT_EQ(hour.rc, 0) << hour.err;
}

TEST(CliMessages, UnknownCdfListsBuiltins) {
  expect_refused(run_bad("topology: {kind: single_switch, hosts: 4}\ntraffic:\n  - {kind: cdf, cdf: nosuchcdf}\n"),
                 "key 'traffic[0].cdf': 'nosuchcdf' is not a built-in CDF (websearch, fb_hadoop)");
}

TEST(CliMessages, NumbersAsWritten) {
  expect_refused(run_bad(kFlow, "--set links.cable_m=100001"),
                 "--set links.cable_m=100001: key 'links.cable_m': must be at most 100000 (got 100001)");
}

// One line and a pointer to the help; the help text only with --help.
TEST(CliMessages, ArgumentErrorsOneLine) {
  const std::string dir = temp_dir();
  write_file(dir + "/m.yaml", kFlow);
  for (const auto& [args, part] : std::vector<std::pair<std::string, std::string>>{
           {"", "rocesim: missing command (see 'rocesim --help')"},
           {"frobnicate", "unknown command 'frobnicate' (see 'rocesim --help')"},
           {"run " + dir + "/m.yaml", "missing --out DIR (see 'rocesim run --help')"},
           {"validate " + dir + "/m.yaml --bogus", "unknown option '--bogus' (see 'rocesim validate --help')"},
           {"run " + dir + "/m.yaml --out " + dir + "/o --seed x", "--seed needs a non-negative integer"}}) {
    const Result r = rocesim(args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(part), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("usage:"), std::string::npos) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  EXPECT_FALSE(exists(dir + "/o"));
  const Result help = rocesim("run --help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("usage: rocesim run"), std::string::npos);
}

// Decision (docs/config.md): an empty file (or comments only) is refused;
// a config with nothing to simulate runs, with a warning.
TEST(CliMessages, EmptyConfigRefusedNoTrafficWarned) {
  expect_refused(run_bad(""), "m.yaml: the configuration is empty");
  expect_refused(run_bad("# nothing here\n\n"), "m.yaml: the configuration is empty");
  const Bad idle = run_bad("name: idle\n");
  EXPECT_EQ(idle.r.rc, 0) << idle.r.err;
  EXPECT_NE(idle.r.err.find("warning: "), std::string::npos) << idle.r.err;
  EXPECT_NE(idle.r.err.find("no flows and no traffic"), std::string::npos) << idle.r.err;
  const Result quiet = validate(kFlow);
  EXPECT_EQ(quiet.rc, 0);
  EXPECT_EQ(quiet.err.find("warning"), std::string::npos) << quiet.err;
}

// The limits docs/config.md lists, each refused at its bound + 1 with the bound.
TEST(CliMessages, DocumentedLimitsEnforced) {
  struct Limit {
    std::string set, part;
  };
  for (const Limit& l : std::vector<Limit>{
           {"switch.buffer.size=5GiB", "key 'switch.buffer.size': must be at most 4GiB"},
           {"switch.buffer.size=128B", "key 'switch.buffer.size': must be at least 256B"},
           {"topology.kind=leaf_spine --set topology.leaves=4097", "key 'topology.leaves': must be at most 4096"},
           {"topology.kind=leaf_spine --set topology.spines=4097", "key 'topology.spines': must be at most 4096"},
           {"topology.kind=leaf_spine --set topology.links_per_leaf_spine=65",
            "key 'topology.links_per_leaf_spine': must be at most 64"},
           {"topology.kind=ring --set topology.switches=2", "key 'topology.switches': must be at least 3"},
           {"pfc.headroom_cell_occupancy=0.05", "key 'pfc.headroom_cell_occupancy': must be at least 0.1"},
           {"'traffic=[{kind: incast, receiver: h0, senders: [h1], count: 1000001}]'",
            "key 'traffic[0].count': must be at most 1000000"},
           // 100 Gbps x 1 s / (8 x 64 B) = 1.95e8 expected flows > 10^7.
           {"'traffic=[{kind: background, load: 1, duration: 1s, size: 64B}]'",
            "above the limit of 10000000 flows per generator"},
       }) {
    const Bad b = run_bad(kFlow, "--set " + l.set);
    SCOPED_TRACE(l.set);
    expect_refused(b, l.part);
  }
  // A ring takes cable_m (documented): accepted.
  const Result ring = validate(kFlow, "--set topology.kind=ring --set topology.cable_m=3");
  EXPECT_EQ(ring.rc, 0) << ring.err;
}

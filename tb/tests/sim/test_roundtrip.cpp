// Config round trip (issue 10 item 4): config.resolved.yaml is accepted back
// and gives the same run; names YAML treats specially are quoted; files are
// written as absolute paths; one key per value; docs/config.md's key
// reference is the one the key tables generate.
#include <gtest/gtest.h>

#include <dirent.h>

#include <climits>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <set>

#include "cli_util.h"
#include "core/config.h"
#include "sim/scenario.h"

using namespace rocesim;
using namespace clitest;

namespace {

// The resolved text without its two header comments (which name the file it came from).
std::string body(const std::string& resolved) { return resolved.substr(resolved.find("\nname:") + 1); }

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> v;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') v.push_back(e->d_name);
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

// Every regular file under dir (relative names), recursively.
void files_under(const std::string& dir, const std::string& rel, std::vector<std::string>& out) {
  for (const std::string& n : dir_entries(dir + "/" + rel)) {
    const std::string r = rel.empty() ? n : rel + "/" + n;
    struct stat st{};
    stat((dir + "/" + r).c_str(), &st);
    if (S_ISDIR(st.st_mode)) files_under(dir, r, out);
    else out.push_back(r);
  }
}

// Removes the summary.json members that name the config file or measure the host.
std::string strip_run_fields(const std::string& json) {
  std::istringstream in(strip_wall(json));
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("\"config_file\"") == std::string::npos) out += line + "\n";
  return out;
}

const std::vector<std::string> kScenarios{
    "allreduce_ring",  "analytics_lossy_spine", "analytics_mlag", "dcqcn_two_flows", "default",         "ecmp_collision",       "ecmp_polarization", "ecn_incast",
    "ecn_k_sweep",     "hpcc_two_tier",
    "incast_dcqcn",    "leafspine_permutation", "pfc_deadlock", "pfc_incast",        "pfc_incast_leafspine",
    "pfc_storm",       "single_switch_incast",  "two_hosts",    "websearch_leafspine"};

sim::Scenario load(const std::string& text, const std::string& name) {
  return sim::read_scenario(*core::Config::load_string(text, name));
}

}  // namespace

TEST(RoundTrip, EveryShippedScenarioIsListed) {
  std::vector<std::string> files;
  for (const std::string& f : dir_entries(src_dir() + "/configs/scenarios"))
    if (f.size() > 5 && f.substr(f.size() - 5) == ".yaml") files.push_back(f.substr(0, f.size() - 5));
  EXPECT_EQ(files, kScenarios) << "add new scenarios to kScenarios so their round trip is tested";
}

class ShippedRoundTrip : public ::testing::TestWithParam<std::string> {};

// Run the scenario (shortened to 100 us simulated so that each case stays
// within a few seconds), then run its config.resolved.yaml into another
// directory: every output must be byte-identical, except summary.json's
// wall-clock members and config_file, and the resolved config's header
// comment naming its source. The resolved config of the second run is the
// first one's (a fixed point).
TEST_P(ShippedRoundTrip, ResolvedConfigGivesByteIdenticalOutputs) {
  const std::string dir = temp_dir();
  const std::string a = dir + "/a", b = dir + "/b";
  const Result r1 = clitest::rocesim("run " + src_dir() + "/configs/scenarios/" + GetParam() + ".yaml --out " + a +
                            " --set sim.duration=100us");
  ASSERT_EQ(r1.rc, 0) << r1.err;
  // Run it from another working directory: relative paths must not matter.
  char abs_bin[4096];
  ASSERT_NE(realpath(bin().c_str(), abs_bin), nullptr) << bin();
  const Result r2 = sh(std::string("cd / && ") + abs_bin + " run " + a + "/config.resolved.yaml --out " + b);
  ASSERT_EQ(r2.rc, 0) << r2.err;
  std::vector<std::string> fa, fb;
  files_under(a, "", fa);
  files_under(b, "", fb);
  EXPECT_EQ(fa, fb);
  EXPECT_NE(std::find(fa.begin(), fa.end(), "flows.csv"), fa.end());
  for (const std::string& f : fa) {
    const std::string x = slurp(a + "/" + f), y = slurp(b + "/" + f);
    if (f == "summary.json") {
      EXPECT_EQ(strip_run_fields(x), strip_run_fields(y)) << f;
    } else if (f == "config.resolved.yaml") {
      EXPECT_EQ(body(x), body(y)) << f;
    } else {
      EXPECT_TRUE(x == y) << GetParam() << ": " << f << " differs";
    }
  }
  std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ShippedRoundTrip, ::testing::ValuesIn(kScenarios),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Every fuzz seed that validates (tb/fuzz/corpus/config: a YAML document, then
// NUL-separated --set arguments, read as fuzz_config reads it) has a resolved
// config that reads back to the same resolved config.
TEST(RoundTrip, FuzzCorpusResolvedConfigIsAFixedPoint) {
  const std::string corpus = src_dir() + "/tb/fuzz/corpus/config";
  const std::string name = src_dir() + "/configs/scenarios/fuzz.yaml";
  size_t valid = 0, entries = 0;
  for (const std::string& f : dir_entries(corpus)) {
    ++entries;
    const std::string data = slurp(corpus + "/" + f);
    const size_t nul = data.find('\0');
    std::string first;
    try {
      auto cfg = core::Config::load_string(data.substr(0, nul), name);
      for (size_t p = nul; p != std::string::npos && p < data.size();) {
        const size_t q = data.find('\0', p + 1);
        cfg->apply_set(data.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1));
        p = q;
      }
      first = sim::emit_resolved(sim::read_scenario(*cfg));
    } catch (const core::ConfigError&) {
      continue;  // not valid: nothing to round-trip
    }
    ++valid;
    // Read back from another folder: the resolved config names files absolutely.
    std::string second;
    try {
      second = sim::emit_resolved(load(first, "/tmp/elsewhere/config.resolved.yaml"));
    } catch (const core::ConfigError& e) {
      ADD_FAILURE() << f << ": resolved config rejected: " << e.what();
      continue;
    }
    EXPECT_EQ(body(second), body(first)) << f;
  }
  EXPECT_GE(entries, 10u);
  EXPECT_GE(valid, entries / 2) << "most seeds are valid scenarios";
}

// Names YAML reads as something else when plain: a mapping ("a: b"), a
// comment ("#tag"), null ("null", "~"), an alias ("*ref"), an anchor, a tag,
// a directive, flow collections, quotes, surrounding spaces, a newline. Each
// is written in the test as a YAML single-quoted (or double-quoted) literal,
// so the expected string is the literal's own text.
TEST(RoundTrip, NamesThatNeedQuotingReadBackUnchanged) {
  const std::vector<std::pair<std::string, std::string>> names{
      {"'a: b'", "a: b"}, {"'#tag'", "#tag"}, {"'null'", "null"}, {"'*ref'", "*ref"}, {"'~'", "~"},
      {"'&anchor'", "&anchor"}, {"'!tag'", "!tag"}, {"'%dir'", "%dir"}, {"'[x'", "[x"}, {"'{y'", "{y"},
      {"'''q'", "'q"}, {"'\"d'", "\"d"}, {"' lead'", " lead"}, {"'trail '", "trail "}, {"\"x\\ny\"", "x\ny"},
      {"'- item'", "- item"}, {"'a #b'", "a #b"}, {"'@at'", "@at"}, {"'`bq'", "`bq"}, {"''", ""}};
  for (const auto& [literal, want] : names) {
    const sim::Scenario a = load("name: " + literal + "\n", "n.yaml");
    ASSERT_EQ(a.name, want) << literal;
    const std::string text = sim::emit_resolved(a);
    sim::Scenario b;
    try {
      b = load(text, "resolved.yaml");
    } catch (const core::ConfigError& e) {
      FAIL() << literal << ": " << e.what();
    }
    EXPECT_EQ(b.name, want) << literal;
  }
}

// A CDF file and a flow file named relative to the scenario are written as
// absolute paths: the resolved config, read from another folder, gives the
// same flows (src, dst, size, start of each).
TEST(RoundTrip, FilePathsAreRebased) {
  const std::string dir = temp_dir();
  std::system(("mkdir -p " + dir + "/in " + dir + "/out").c_str());
  // HPCC flow file: count, then src dst pg dport size start_s.
  write_file(dir + "/in/flows.txt", "2\n0 1 3 100 4096 0.000001\n1 0 3 100 8192 0.000002\n");
  // CDF: bytes percent lines.
  write_file(dir + "/in/sizes.cdf", "1000 0\n2000 50\n4000 100\n");
  const std::string scen =
      "topology: {kind: single_switch, hosts: 4}\n"
      "traffic:\n"
      "  - {kind: flow_file, file: flows.txt}\n"
      "  - {kind: cdf, cdf: sizes.cdf, load: 0.2, duration: 20us}\n";
  const sim::Scenario a = load(scen, dir + "/in/s.yaml");
  ASSERT_GT(a.flows.size(), 2u);
  const std::string text = sim::emit_resolved(a);
  EXPECT_NE(text.find(dir + "/in/flows.txt"), std::string::npos) << text;
  EXPECT_NE(text.find(dir + "/in/sizes.cdf"), std::string::npos) << text;
  const sim::Scenario b = load(text, dir + "/out/config.resolved.yaml");
  ASSERT_EQ(b.flows.size(), a.flows.size());
  for (size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(b.flows[i].src_index, a.flows[i].src_index);
    EXPECT_EQ(b.flows[i].dst_index, a.flows[i].dst_index);
    EXPECT_EQ(b.flows[i].message_bytes, a.flows[i].message_bytes);
    EXPECT_EQ(b.flows[i].start_ps, a.flows[i].start_ps);
  }
  // The flow file's first flow, from its own line: h0 -> h1, 4096 B at 1 us.
  EXPECT_EQ(a.flows[0].message_bytes, 4096u);
  EXPECT_EQ(a.flows[0].start_ps, 1000000u);
  std::system(("rm -rf " + dir).c_str());
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// One key for the NP's CNP spacing: hosts.min_time_between_cnps. The old
// hosts.dcqcn.min_time_between_cnps is an alias: alone it sets the value,
// with the same value it is accepted, with another it is refused at its key.
// With DCQCN and neither key, the preset's: paper 50 us (Zhu et al. 2015),
// NVIDIA 4 us (ConnectX min_time_between_cnps).
TEST(RoundTrip, CnpSpacingHasOneKey) {
  const std::string rc = "hosts: {transport: rc, cc: dcqcn, ";
  EXPECT_EQ(load(rc + "}\n", "x.yaml").hosts.min_time_between_cnps_ps, 50000000u);
  EXPECT_EQ(load(rc + "dcqcn: {preset: nvidia}}\n", "x.yaml").hosts.min_time_between_cnps_ps, 4000000u);
  const sim::Scenario alias = load(rc + "dcqcn: {min_time_between_cnps: 7us}}\n", "x.yaml");
  EXPECT_EQ(alias.hosts.min_time_between_cnps_ps, 7000000u);
  const std::string text = sim::emit_resolved(alias);
  EXPECT_EQ(count(text, "min_time_between_cnps"), 1u) << text;
  EXPECT_EQ(load(text, "r.yaml").hosts.min_time_between_cnps_ps, 7000000u);
  EXPECT_EQ(load(rc + "min_time_between_cnps: 9us, dcqcn: {min_time_between_cnps: 9us}}\n", "x.yaml")
                .hosts.min_time_between_cnps_ps,
            9000000u);
  try {
    load(rc + "min_time_between_cnps: 9us, dcqcn: {min_time_between_cnps: 8us}}\n", "x.yaml");
    FAIL() << "two values for one key accepted";
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "hosts.dcqcn.min_time_between_cnps") << e.what();
    EXPECT_NE(std::string(e.what()).find("x.yaml:1:"), std::string::npos) << e.what();
  }
}

// RC with a window smaller than the ACK interval stalls for an rto whenever
// the window fills (the responder ACKs every ack_every-th packet): refused,
// naming the key given (max_outstanding, else ack_every) and its place.
TEST(RoundTrip, AnRcWindowBelowTheAckIntervalIsRefused) {
  const auto refused = [](const std::string& text, const std::string& key) {
    try {
      load(text, "w.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const core::ConfigError& e) {
      EXPECT_EQ(e.key_path(), key) << e.what();
      EXPECT_NE(std::string(e.what()).find("w.yaml:1:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("ack_every"), std::string::npos) << e.what();
    }
  };
  refused("hosts: {transport: rc, max_outstanding: 8}\n", "hosts.max_outstanding");   // ack_every 16 by default
  refused("hosts: {transport: rc, ack_every: 2048}\n", "hosts.ack_every");            // max_outstanding 1024
  EXPECT_EQ(load("hosts: {transport: rc, max_outstanding: 8, ack_every: 8}\n", "w.yaml").hosts.max_outstanding, 8u);
  EXPECT_EQ(load("hosts: {transport: open_loop, max_outstanding: 8}\n", "w.yaml").hosts.max_outstanding, 8u);
}

// docs/config.md carries, for each table-driven section, exactly the table
// the key tables generate, between <!-- keys:SECTION --> and <!-- /keys -->.
TEST(RoundTrip, DocsKeyReferenceIsGeneratedFromTheTables) {
  const std::string doc = slurp(src_dir() + "/docs/config.md");
  ASSERT_FALSE(doc.empty());
  for (const std::string& sec : sim::key_reference_sections()) {
    const std::string open = "<!-- keys:" + sec + " -->\n", close = "<!-- /keys -->";
    const size_t a = doc.find(open);
    ASSERT_NE(a, std::string::npos) << "docs/config.md has no " << open;
    const size_t b = doc.find(close, a);
    ASSERT_NE(b, std::string::npos) << sec;
    EXPECT_EQ(doc.substr(a + open.size(), b - a - open.size()), sim::key_reference(sec))
        << "regenerate with: rocesim keys " << sec;
  }
}

// Config: typed reading, error locations and messages, --set overrides.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>

#include "config_error.h"
#include "core/config.h"

namespace rc = rocesim::core;

namespace {

std::unique_ptr<rc::Config> load(const std::string& text) { return rc::Config::load_string(text, "test.yaml"); }

using testkit::error_of;
using testkit::contains;

constexpr uint64_t kGbps = 1000000000ull;

}  // namespace

// ------------------------------------------------------------------ errors

TEST(ConfigError, WhatFormat) {
  const rc::ConfigError e("f.yaml:3:9", "a.b", "bad\nthing");
  EXPECT_STREQ(e.what(), "f.yaml:3:9: key 'a.b': bad\\nthing");
  EXPECT_EQ(e.where(), "f.yaml:3:9");
  EXPECT_EQ(e.key_path(), "a.b");
  EXPECT_EQ(e.reason(), "bad\nthing");
  EXPECT_STREQ(rc::ConfigError("f.yaml", "", "cannot open file: x").what(), "f.yaml: cannot open file: x");
}

TEST(Config, WrongTypeLocation) {
  auto cfg = load("link:\n  name: x\n  rate: abc\n");
  const auto e = error_of([&] { cfg->root().map("link").rate("rate", kGbps); });
  EXPECT_EQ(e.where(), "test.yaml:3:9");
  EXPECT_EQ(e.key_path(), "link.rate");
  EXPECT_TRUE(contains(e.reason(), "expected a rate such as 100Gbps, got 'abc'")) << e.reason();
  EXPECT_EQ(std::string(e.what()).rfind("test.yaml:3:9: key 'link.rate': expected a rate such as 100Gbps", 0), 0u)
      << e.what();
}

TEST(Config, BadUnitMessage) {
  auto cfg = load("link:\n  rate: 100gbps\n");
  const auto e = error_of([&] { cfg->root().map("link").rate("rate"); });
  EXPECT_EQ(e.where(), "test.yaml:2:9");
  EXPECT_TRUE(contains(e.reason(), "did you mean 'Gbps'")) << e.reason();
  EXPECT_TRUE(contains(e.reason(), "bps, Kbps, Mbps, Gbps, Tbps")) << e.reason();
}

TEST(Config, MappingWhereScalarExpectedAndViceVersa) {
  auto cfg = load("link:\n  rate:\n    x: 1\n  mtu: [1, 2]\nhosts: 5\n");
  const auto link = cfg->root().map("link");
  auto e = error_of([&] { link.rate("rate"); });
  EXPECT_EQ(e.where(), "test.yaml:3:5");
  EXPECT_EQ(e.reason(), "expected a rate such as 100Gbps, got a mapping");
  e = error_of([&] { link.integer("mtu", 1500); });
  EXPECT_EQ(e.where(), "test.yaml:4:8");
  EXPECT_EQ(e.reason(), "expected an integer, got a sequence");
  e = error_of([&] { cfg->root().map("hosts"); });
  EXPECT_EQ(e.where(), "test.yaml:5:8");
  EXPECT_EQ(e.key_path(), "hosts");
  EXPECT_EQ(e.reason(), "expected a mapping, got '5'");
  e = error_of([&] { cfg->root().seq("hosts"); });
  EXPECT_EQ(e.reason(), "expected a sequence, got '5'");
}

TEST(Config, EmptyValueIsReportedAtItsKey) {
  auto cfg = load("link:\n  rate:\n  mtu: 9000\n");
  const auto e = error_of([&] { cfg->root().map("link").rate("rate", kGbps); });
  EXPECT_EQ(e.where(), "test.yaml:2:3");  // yaml-cpp would point at the next line
  EXPECT_EQ(e.reason(), "expected a rate such as 100Gbps, got an empty value");
}

TEST(Config, UnknownKeyWithSuggestion) {
  auto cfg = load("link:\n  rate: 100Gbps\n  mut: 9000\n  zzzzzz: 1\n");
  const auto link = cfg->root().map("link");
  EXPECT_EQ(link.rate("rate"), 100 * kGbps);
  EXPECT_EQ(link.integer("mtu", 1500), 1500);  // absent, but now a known name
  auto e = error_of([&] { link.finish(); });
  EXPECT_EQ(e.where(), "test.yaml:3:3");  // the key, first unknown in document order
  EXPECT_EQ(e.key_path(), "link.mut");
  EXPECT_EQ(e.reason(), "unknown key (did you mean 'mtu'?)");
  EXPECT_STREQ(e.what(), "test.yaml:3:3: key 'link.mut': unknown key (did you mean 'mtu'?)");
}

TEST(Config, SuggestionCountsSwapsAndPrefersFirstQueried) {
  auto cfg = load("buffre_szie: 1KiB\nmtx: 1\n");
  const auto root = cfg->root();
  root.size("buffer_size", 0);
  root.integer("mtu", 0);
  root.integer("mtv", 0);
  // Two adjacent swaps: distance 2 (plain Levenshtein would say 4).
  auto e = error_of([&] { root.finish(); });
  EXPECT_EQ(e.reason(), "unknown key (did you mean 'buffer_size'?)");
  root.size("buffre_szie", 0);
  e = error_of([&] { root.finish(); });
  EXPECT_EQ(e.reason(), "unknown key (did you mean 'mtu'?)");  // tie with 'mtv': first asked for wins
}

TEST(Config, UnknownKeyWithoutSuggestion) {
  auto cfg = load("link:\n  rate: 100Gbps\n  zzzzzz: 1\n");
  const auto link = cfg->root().map("link");
  link.rate("rate");
  const auto e = error_of([&] { link.finish(); });
  EXPECT_EQ(e.where(), "test.yaml:3:3");
  EXPECT_EQ(e.reason(), "unknown key");
}

TEST(Config, FinishPassesWhenAllRead) {
  auto cfg = load("link:\n  rate: 100Gbps\nname: x\n");
  const auto root = cfg->root();
  root.map("link").rate("rate");
  EXPECT_THROW(root.finish(), rc::ConfigError);  // "name" not read yet
  EXPECT_EQ(root.str("name"), "x");
  EXPECT_NO_THROW(root.finish());
  EXPECT_NO_THROW(root.map("link").finish());
}

TEST(Config, HasDoesNotConsume) {
  auto cfg = load("a: 1\n");
  EXPECT_TRUE(cfg->root().has("a"));
  EXPECT_FALSE(cfg->root().has("b"));
  EXPECT_THROW(cfg->root().finish(), rc::ConfigError);
}

TEST(Config, MissingRequiredKey) {
  auto cfg = load("top: 1\nlink:\n  mtu: 1500\n");
  const auto e = error_of([&] { cfg->root().map("link").rate("rate"); });
  EXPECT_EQ(e.where(), "test.yaml:3:3");  // the mapping the key is missing from
  EXPECT_EQ(e.key_path(), "link.rate");
  EXPECT_EQ(e.reason(), "missing required key");
  // Inside an absent mapping: located at the nearest present ancestor.
  const auto e2 = error_of([&] { cfg->root().map("pfc").map("xoff").time("delay"); });
  EXPECT_EQ(e2.key_path(), "pfc.xoff.delay");
  EXPECT_EQ(e2.where(), "test.yaml:1:1");
  EXPECT_EQ(e2.reason(), "missing required key");
  EXPECT_THROW(cfg->root().child("nope"), rc::ConfigError);
  EXPECT_THROW(cfg->root().str("nope"), rc::ConfigError);
  EXPECT_THROW(cfg->root().integer("nope"), rc::ConfigError);
}

TEST(Config, RangeErrorsUseUnits) {
  auto cfg = load("link:\n  rate: 800Gbps\n  buf: 512B\n  delay: 3ms\n  n: 0\n  x: 2.5\n");
  const auto link = cfg->root().map("link");
  auto e = error_of([&] { link.rate("rate", kGbps, kGbps, 400 * kGbps); });
  EXPECT_EQ(e.where(), "test.yaml:2:9");
  EXPECT_EQ(e.reason(), "must be at most 400Gbps (got 800Gbps)");
  e = error_of([&] { link.size("buf", 4096, 1024); });
  EXPECT_EQ(e.reason(), "must be at least 1KiB (got 512B)");
  e = error_of([&] { link.time("delay", 0, 0, 1000000000); });
  EXPECT_EQ(e.reason(), "must be at most 1ms (got 3ms)");
  e = error_of([&] { link.integer("n", 1, 1, 16); });
  EXPECT_EQ(e.reason(), "must be at least 1 (got 0)");
  e = error_of([&] { link.real("x", 0.5, 0.0, 1.0); });
  EXPECT_EQ(e.reason(), "must be at most 1 (got 2.5)");
  // Defaults are returned as given for absent keys.
  EXPECT_EQ(link.rate("other", 25 * kGbps), 25 * kGbps);
  EXPECT_EQ(link.size("other2", 4096), 4096u);
}

TEST(Config, IntegersBooleansRealsChoices) {
  auto cfg = load(
      "a: 42\nb: -7\nc: 1.5\nd: abc\ne: true\nf: yes\ng: 0.25\nh: fast\ni: slwo\nj: 99999999999999999999\n"
      "k: nan\nl: false\n");
  const auto r = cfg->root();
  EXPECT_EQ(r.integer("a"), 42);
  EXPECT_EQ(r.integer("b", 0), -7);
  EXPECT_EQ(error_of([&] { r.integer("c"); }).reason(), "expected an integer, got '1.5'");
  EXPECT_EQ(error_of([&] { r.integer("d", 0); }).reason(), "expected an integer, got 'abc'");
  EXPECT_TRUE(contains(error_of([&] { r.integer("j"); }).reason(), "out of range"));
  EXPECT_TRUE(r.boolean("e", false));
  EXPECT_FALSE(r.boolean("l", true));
  EXPECT_EQ(error_of([&] { r.boolean("f", false); }).reason(), "expected true or false, got 'yes'");
  EXPECT_DOUBLE_EQ(r.real("g", 0, 0, 1), 0.25);
  EXPECT_DOUBLE_EQ(r.real("a", 0, 0, 100), 42.0);
  EXPECT_EQ(error_of([&] { r.real("k", 0, 0, 1); }).reason(), "expected a number, got 'nan'");
  EXPECT_EQ(r.choice("h", "slow", {"slow", "fast"}), "fast");
  EXPECT_EQ(r.choice("missing", "slow", {"slow", "fast"}), "slow");
  EXPECT_EQ(error_of([&] { r.choice("i", "slow", {"slow", "fast"}); }).reason(),
            "expected one of 'slow', 'fast', got 'slwo' (did you mean 'slow'?)");
}

TEST(Config, SequencesAndKeys) {
  auto cfg = load(
      "hosts:\n  - rate: 100Gbps\n  - rate: 50Gbps\n  - rate: fast\nports: [1, x]\n"
      "nodes:\n  zeta: {}\n  alpha: {}\n  mid: {}\nempty:\n");
  const auto root = cfg->root();
  const auto hosts = root.seq("hosts");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[1].path(), "hosts[1]");
  EXPECT_EQ(hosts[1].rate("rate"), 50 * kGbps);
  const auto e = error_of([&] { hosts[2].rate("rate"); });
  EXPECT_EQ(e.key_path(), "hosts[2].rate");
  EXPECT_EQ(e.where(), "test.yaml:4:11");
  const auto ports = root.seq("ports");
  EXPECT_EQ(ports[0].as_integer(), 1);
  const auto pe = error_of([&] { ports[1].as_integer(); });
  EXPECT_EQ(pe.key_path(), "ports[1]");
  EXPECT_EQ(pe.where(), "test.yaml:5:12");
  EXPECT_EQ(ports[1].as_str(), "x");
  EXPECT_FALSE(ports[1].has("x"));  // a scalar has no keys; not an error
  EXPECT_FALSE(ports[1].is_map());
  EXPECT_EQ(error_of([&] { ports[1].integer("x", 0); }).reason(), "expected a mapping, got 'x'");
  EXPECT_EQ(root.map("nodes").keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_TRUE(root.map("empty").is_map());
  EXPECT_TRUE(root.map("empty").keys().empty());
  EXPECT_TRUE(root.seq("absent").empty());
  EXPECT_TRUE(root.seq("empty").empty());
}

// ------------------------------------------------------------------ loading

TEST(Config, SyntaxErrorLocation) {
  auto e = error_of([] { rc::Config::load_string("a: 1\nb: [1,\nc: 2\n", "bad.yaml"); });
  EXPECT_EQ(e.where(), "bad.yaml:4:1");
  EXPECT_EQ(e.key_path(), "");
  EXPECT_TRUE(contains(e.reason(), "YAML syntax error")) << e.reason();
  EXPECT_STREQ(e.what(), ("bad.yaml:4:1: " + e.reason()).c_str());
  e = error_of([] { rc::Config::load_string("a: 1\n  b: 2\n", "bad.yaml"); });
  EXPECT_EQ(e.where(), "bad.yaml:2:4");
}

TEST(Config, MissingFile) {
  const std::string path = "/nonexistent-rocesim-dir/cfg.yaml";
  const auto e = error_of([&] { rc::Config::load_file(path); });
  EXPECT_EQ(e.where(), path);
  EXPECT_EQ(e.reason(), "cannot open file: No such file or directory");
  EXPECT_EQ(std::string(e.what()), path + ": cannot open file: No such file or directory");
  EXPECT_EQ(error_of([] { rc::Config::load_file("/"); }).reason(), "cannot read file: Is a directory");
}

TEST(Config, LoadFileReportsItsPath) {
  char name[] = "/tmp/rocesim_cfg_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << "link:\n  rate: 40Gbps\n  mtu: big\n";
  auto cfg = rc::Config::load_file(name);
  std::remove(name);
  EXPECT_EQ(cfg->file(), name);
  EXPECT_EQ(cfg->root().map("link").rate("rate"), 40 * kGbps);
  EXPECT_EQ(error_of([&] { cfg->root().map("link").integer("mtu", 0); }).where(), std::string(name) + ":3:8");
}

TEST(Config, RootMustBeMapping) {
  const auto e = error_of([] { load("- 1\n- 2\n"); });
  EXPECT_TRUE(contains(e.reason(), "top level must be a mapping")) << e.reason();
  EXPECT_NO_THROW(load(""));  // empty document: all defaults
  EXPECT_NO_THROW(load("# only a comment\n")->root().finish());
  // A second document would otherwise be silently ignored.
  EXPECT_EQ(error_of([] { load("a: 1\n---\nb: 2\n"); }).reason(), "only one YAML document is allowed");
}

TEST(Config, DuplicateKeyRejected) {
  const auto e = error_of([] { load("a: 1\nb: 2\na: 3\n"); });
  EXPECT_EQ(e.where(), "test.yaml:3:1");
  EXPECT_EQ(e.key_path(), "a");
  EXPECT_EQ(e.reason(), "duplicate key (first defined at test.yaml:1:1)");
}

TEST(Config, RecursiveAliasRejected) {
  EXPECT_THROW(load("a: &x [*x]\n"), rc::ConfigError);
}

TEST(Config, MultilineValueKeepsWhatOnOneLine) {
  auto cfg = load("n: |\n  12\n  34\n");
  const auto e = error_of([&] { cfg->root().integer("n", 0); });
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
}

// ------------------------------------------------------------------ --set

TEST(ConfigSet, OverridesFileValueAndErrorsNameTheArgument) {
  auto cfg = load("link:\n  rate: 100Gbps\n  mtu: 1500\n");
  cfg->apply_set("link.rate=25Gbps");
  EXPECT_EQ(cfg->root().map("link").rate("rate"), 25 * kGbps);
  EXPECT_EQ(cfg->root().map("link").keys(), (std::vector<std::string>{"rate", "mtu"}));  // order kept

  cfg->apply_set("link.rate=800Gbps");
  auto e = error_of([&] { cfg->root().map("link").rate("rate", kGbps, 0, 400 * kGbps); });
  EXPECT_EQ(e.where(), "--set link.rate=800Gbps");
  EXPECT_EQ(e.key_path(), "link.rate");
  EXPECT_STREQ(e.what(), "--set link.rate=800Gbps: key 'link.rate': must be at most 400Gbps (got 800Gbps)");

  cfg->apply_set("link.rate=abc");
  e = error_of([&] { cfg->root().map("link").rate("rate"); });
  EXPECT_EQ(e.where(), "--set link.rate=abc");
  // An untouched sibling still reports its file location.
  cfg = load("link:\n  rate: 100Gbps\n  mtu: x\n");
  cfg->apply_set("link.rate=1Gbps");
  EXPECT_EQ(error_of([&] { cfg->root().map("link").integer("mtu", 0); }).where(), "test.yaml:3:8");
}

TEST(ConfigSet, ReplacedSubtreeForgetsFileOrigins) {
  auto cfg = load("link:\n  rate: 100Gbps\n  mtu: 1500\n");
  cfg->apply_set("link={rate: 2Gbps}");
  const auto link = cfg->root().map("link");
  EXPECT_EQ(link.rate("rate"), 2 * kGbps);
  EXPECT_EQ(link.integer("mtu", 9000), 9000);  // gone with the old mapping
  const auto e = error_of([&] { link.integer("mtu"); });
  EXPECT_EQ(e.where(), "--set link={rate: 2Gbps}");  // not the old file line
}

TEST(ConfigSet, CreatesNestedKeys) {
  auto cfg = load("link:\n  rate: 100Gbps\n");
  cfg->apply_set("pfc.xoff.threshold=64KiB");
  const auto root = cfg->root();
  const auto xoff = root.map("pfc").map("xoff");
  EXPECT_EQ(xoff.size("threshold"), 65536u);
  EXPECT_EQ(xoff.path(), "pfc.xoff");
  // A required key missing from a --set-created map is located at the --set.
  const auto e = error_of([&] { xoff.time("delay"); });
  EXPECT_EQ(e.where(), "--set pfc.xoff.threshold=64KiB");
  EXPECT_EQ(e.key_path(), "pfc.xoff.delay");
  root.map("link").rate("rate");
  EXPECT_NO_THROW(xoff.finish());
  EXPECT_NO_THROW(root.map("pfc").finish());
  EXPECT_NO_THROW(root.finish());
}

TEST(ConfigSet, UnknownKeyFromSet) {
  auto cfg = load("link:\n  rate: 100Gbps\n");
  cfg->apply_set("link.raet=5Gbps");
  const auto link = cfg->root().map("link");
  link.rate("rate");
  const auto e = error_of([&] { link.finish(); });
  EXPECT_EQ(e.where(), "--set link.raet=5Gbps");
  EXPECT_EQ(e.reason(), "unknown key (did you mean 'rate'?)");
}

TEST(ConfigSet, IntoSequenceElement) {
  auto cfg = load("hosts:\n  - name: a\n    rate: 100Gbps\n  - name: b\n    rate: 100Gbps\n");
  cfg->apply_set("hosts[1].rate=25Gbps");
  const auto hosts = cfg->root().seq("hosts");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].rate("rate"), 100 * kGbps);
  EXPECT_EQ(hosts[1].rate("rate"), 25 * kGbps);
  EXPECT_EQ(hosts[1].str("name"), "b");
  cfg->apply_set("hosts[1].rate=fast");
  const auto e = error_of([&] { cfg->root().seq("hosts")[1].rate("rate"); });
  EXPECT_EQ(e.where(), "--set hosts[1].rate=fast");
  EXPECT_EQ(e.key_path(), "hosts[1].rate");
  cfg->apply_set("hosts[0]={name: z, rate: 1Gbps}");
  EXPECT_EQ(cfg->root().seq("hosts")[0].str("name"), "z");
  EXPECT_EQ(cfg->root().seq("hosts")[1].str("name"), "b");
  EXPECT_EQ(error_of([&] { cfg->root().seq("hosts")[0].time("t"); }).where(), "--set hosts[0]={name: z, rate: 1Gbps}");
}

TEST(ConfigSet, ValuesAreYaml) {
  auto cfg = load("a: 1\n");
  cfg->apply_set("x=[1,2]");
  cfg->apply_set("flag=true");
  cfg->apply_set("m={k: v}");
  const auto root = cfg->root();
  ASSERT_EQ(root.seq("x").size(), 2u);
  EXPECT_EQ(root.seq("x")[1].as_integer(), 2);
  EXPECT_TRUE(root.boolean("flag", false));
  EXPECT_EQ(root.map("m").str("k"), "v");
  cfg->apply_set("a=");  // empty YAML value
  const auto e = error_of([&] { cfg->root().integer("a"); });
  EXPECT_EQ(e.where(), "--set a=");
  EXPECT_EQ(e.reason(), "expected an integer, got an empty value");
}

TEST(ConfigSet, DoesNotChangeAliasedSiblings) {
  auto cfg = load("base: &d {rate: 1Gbps}\nh0: *d\nh1: *d\n");
  cfg->apply_set("h0.rate=2Gbps");
  EXPECT_EQ(cfg->root().map("h0").rate("rate"), 2 * kGbps);
  EXPECT_EQ(cfg->root().map("h1").rate("rate"), kGbps);
  EXPECT_EQ(cfg->root().map("base").rate("rate"), kGbps);
}

TEST(ConfigSet, BadSyntax) {
  auto cfg = load("link:\n  rate: 100Gbps\nhosts:\n  - rate: 1Gbps\n");
  struct Case {
    const char* arg;
    const char* reason_part;
  };
  const Case cases[] = {
      {"link.rate", "expected KEY=VALUE"},
      {"=5", "empty key segment"},
      {"a..b=1", "empty key segment"},
      {"a.=1", "empty key segment"},
      {".a=1", "empty key segment"},
      {"hosts[x].rate=1", "bad sequence index"},
      {"hosts[1.rate=1", "missing ']'"},
      {"hosts[5].rate=1Gbps", "index 5 is out of range"},
      {"link[0]=1", "not a sequence"},
      {"link.rate.x=1", "cannot set key 'x' inside 'link.rate'"},
      {"hosts.rate=1", "use an index such as hosts[0]"},
      {"link.rate=[1,", "invalid YAML value"},
      {"m={a: 1, a: 2}", "duplicate key"},
  };
  for (const Case& c : cases) {
    const auto e = error_of([&] { cfg->apply_set(c.arg); });
    EXPECT_EQ(e.where(), std::string("--set ") + c.arg);
    EXPECT_TRUE(contains(e.reason(), c.reason_part)) << c.arg << " -> " << e.what();
  }
  // Failed --set leaves the configuration untouched.
  EXPECT_EQ(cfg->root().map("link").rate("rate"), 100 * kGbps);
  EXPECT_FALSE(cfg->root().has("m"));
  EXPECT_EQ(cfg->root().seq("hosts").size(), 1u);
}

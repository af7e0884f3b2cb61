// Issue 10, "Messages" and "An unclosed quote swallows the file", at the
// Config API level: each message names the right key at the right place and
// every unit or number it prints is one the reader accepts back.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "config_error.h"
#include "core/config.h"
#include "core/units.h"

namespace rc = rocesim::core;

namespace {

std::unique_ptr<rc::Config> load(const std::string& text) { return rc::Config::load_string(text, "m.yaml"); }

using testkit::error_of;
using testkit::contains;

// Reads a flow the way scenario.cpp does: src, dst, then the required size.
void read_flow(const rc::CfgNode& f) {
  f.str("src");
  f.str("dst");
  f.size("size");
  f.integer("messages", 1, 1, 100000000);
  f.finish();
}

}  // namespace

// A misspelt required key is reported as the unknown key, at its own
// position, with the suggestion; not as "missing required key 'size'".
TEST(Messages, MisspeltRequiredKeyInFlow) {
  auto cfg = load("flows:\n  - {src: h0, dst: h1, sz: 4KiB}\n");
  const rc::ConfigError e = error_of([&] { read_flow(cfg->root().seq("flows")[0]); });
  EXPECT_EQ(e.key_path(), "flows[0].sz");
  EXPECT_EQ(e.where(), "m.yaml:2:24");  // 'sz' is the 24th character of line 2
  EXPECT_TRUE(contains(e.reason(), "unknown key")) << e.what();
  EXPECT_TRUE(contains(e.reason(), "did you mean 'size'?")) << e.what();
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
}

// Block style, the misspelling read through child() and integer() too.
TEST(Messages, MisspeltRequiredKeyOtherGetters) {
  auto cfg = load("a:\n  valeu: 3\nb:\n  chlid: {x: 1}\n");
  const rc::ConfigError e = error_of([&] { cfg->root().map("a").integer("value"); });
  EXPECT_EQ(e.key_path(), "a.valeu");
  EXPECT_EQ(e.where(), "m.yaml:2:3");
  const rc::ConfigError c = error_of([&] { cfg->root().map("b").child("child"); });
  EXPECT_EQ(c.key_path(), "b.chlid");
  EXPECT_TRUE(contains(c.reason(), "did you mean 'child'?"));
}

// A valid key not yet read ("dst" when "src" is missing, distance 2) must not
// be called a misspelling; nor a key the reader already asked for.
TEST(Messages, MissingKeyNotConfusedWithValidKey) {
  auto cfg = load("flows:\n  - {dst: h1, size: 4KiB}\n");
  const rc::ConfigError e = error_of([&] { read_flow(cfg->root().seq("flows")[0]); });
  EXPECT_EQ(e.key_path(), "flows[0].src");
  EXPECT_EQ(e.reason(), "missing required key");
  // Nothing close at all: still the plain message, at the mapping.
  auto cfg2 = load("flows:\n  - {src: h0, dst: h1, bytes: 4KiB}\n");
  const rc::ConfigError m = error_of([&] { read_flow(cfg2->root().seq("flows")[0]); });
  EXPECT_EQ(m.key_path(), "flows[0].size");
  EXPECT_EQ(m.reason(), "missing required key");
}

// Every unit a range message names is accepted: the bound, pasted back,
// is in range. 1 TiB = 2^40 B, 1 h = 3600 s = 3.6e15 ps (definitions).
TEST(Messages, RangeMessageUnitsAreAccepted) {
  const uint64_t tib = 1ull << 40, hour = 3600ull * 1000000000000ull;
  auto cfg = load("s: 2TiB\nt: 2h\n");
  const rc::ConfigError s = error_of([&] { cfg->root().size("s", 1, 1, tib); });
  EXPECT_EQ(s.reason(), "must be at most 1TiB (got 2TiB)");
  const rc::ConfigError t = error_of([&] { cfg->root().time("t", 1, 1, hour); });
  EXPECT_EQ(t.reason(), "must be at most 1h (got 2h)");
  auto ok = load("s: 1TiB\nt: 1h\nu: 1TB\nv: 0.5h\n");
  EXPECT_EQ(ok->root().size("s", 1, 1, tib), tib);
  EXPECT_EQ(ok->root().time("t", 1, 1, hour), hour);
  EXPECT_EQ(ok->root().size("u", 1), 1000000000000ull);  // 10^12
  EXPECT_EQ(ok->root().time("v", 1), hour / 2);
  // And the formatter's text for any bound parses back (round trip of units).
  for (uint64_t v : {tib, 3 * tib, uint64_t{5000000000000ull}, uint64_t{1}}) {
    uint64_t back = 0;
    std::string err;
    ASSERT_TRUE(rc::parse_size(rc::format_size(v), back, err)) << err;
    EXPECT_EQ(back, v);
  }
  for (uint64_t v : {hour, 7 * hour, hour + 1, uint64_t{60000000000000ull}}) {
    uint64_t back = 0;
    std::string err;
    ASSERT_TRUE(rc::parse_time(rc::format_time(v), back, err)) << err;
    EXPECT_EQ(back, v);
  }
}

// Numbers as written: the bound in plain decimals, the value as the user typed it.
TEST(Messages, RealBoundsPrintedAsWritten) {
  auto cfg = load("cable_m: 100001\nloss: 1.50\nocc: 0.05\n");
  EXPECT_EQ(error_of([&] { cfg->root().real("cable_m", 2, 0, 100000); }).reason(),
            "must be at most 100000 (got 100001)");
  EXPECT_EQ(error_of([&] { cfg->root().real("loss", 0, 0, 1); }).reason(), "must be at most 1 (got 1.50)");
  EXPECT_EQ(error_of([&] { cfg->root().real("occ", 1, 0.1, 10); }).reason(), "must be at least 0.1 (got 0.05)");
}

// yaml-cpp ends an unclosed quoted scalar at the end of the file: the rest of
// the file became the name and the defaults ran.
TEST(Messages, UnclosedQuoteAtEndOfFile) {
  const std::string doc =
      "name: \"incast\n"
      "topology:\n"
      "  kind: single_switch\n"
      "flows:\n"
      "  - {src: h0, dst: h1, size: 4KiB}\n";
  const rc::ConfigError e = error_of([&] { load(doc); });
  EXPECT_EQ(e.where(), "m.yaml:1:7");  // the opening quote
  EXPECT_EQ(e.key_path(), "name");
  EXPECT_TRUE(contains(e.reason(), "never closed")) << e.what();
  const rc::ConfigError s = error_of([&] { load("a: 1\nb: 'x\nc: 2\n"); });
  EXPECT_EQ(s.where(), "m.yaml:2:4");
  EXPECT_EQ(s.key_path(), "b");
}

// Closed by a later quote: the parser either takes the lines in between as
// the string or fails far away; both point at the opening quote.
TEST(Messages, QuoteRunningOverKeys) {
  const rc::ConfigError e = error_of([&] { load("name: \"incast\ntopology:\n  kind: ring\nother: \"x\"\n"); });
  EXPECT_EQ(e.where(), "m.yaml:1:7");
  EXPECT_TRUE(contains(e.reason(), "runs past its line over 'topology:'")) << e.what();
  const rc::ConfigError f =
      error_of([&] { load("name: \"incast\ntopology:\n  kind: ring\nflows:\n  - {src: h0, op: \"write\"}\n"); });
  EXPECT_EQ(f.where(), "m.yaml:1:7") << f.what();
  EXPECT_TRUE(contains(f.reason(), "missing closing \"")) << f.what();
}

// Legitimate quoting still loads: a multi-line string without key lines,
// quotes with escapes, ': ' inside a closed quote, and a comment with a quote.
TEST(Messages, ValidQuotesStillLoad) {
  auto cfg = load(
      "a: \"a long\n  name\"\n"
      "b: 'it''s: fine'\n"
      "c: \"say \\\"hi\\\": x\"\n"
      "d: x  # don't\n"
      "e: [\"p: q\", 'r']\n");
  const rc::CfgNode r = cfg->root();
  EXPECT_EQ(r.str("a"), "a long name");
  EXPECT_EQ(r.str("b"), "it's: fine");
  EXPECT_EQ(r.str("c"), "say \"hi\": x");
  EXPECT_EQ(r.str("d"), "x");
}

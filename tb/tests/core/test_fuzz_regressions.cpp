// Inputs found by fuzzing (tb/fuzz, docs/fuzzing.md), minimized, each with
// the clean error it must now give: core::ConfigError with FILE:LINE:COL
// (the CLI prints it and exits 2).
#include <gtest/gtest.h>

#include <string>
#include <unistd.h>

#include "core/config.h"

namespace rc = rocesim::core;

namespace {

// A regression here would hang (the finding was an endless loop): fail
// after 10 s instead of waiting for ctest's timeout.
class FuzzRegression : public ::testing::Test {
 protected:
  void SetUp() override { alarm(10); }
  void TearDown() override { alarm(0); }
};

// Loads text and returns the ConfigError it must throw.
rc::ConfigError load_error(const std::string& text) {
  try {
    rc::Config::load_string(text, "fuzz.yaml");
  } catch (const rc::ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for '" << text << "'";
  return rc::ConfigError("", "", "");
}

}  // namespace

// fuzz_config, timeout: a ',' where a document's node should start made
// yaml-cpp 0.7's LoadAll() return empty documents at the same position for
// ever (memory growing). The fuzzer's input was ",opology:" (plus --set
// arguments); "," alone is the minimized form. YAML 1.2 (7.4) allows ',' only
// between entries of a flow collection, so each is a syntax error at the ','.
TEST_F(FuzzRegression, CommaOutsideFlowCollectionIsASyntaxError) {
  struct Case {
    const char* text;
    const char* where;  // the ',' (1-based line:col)
  };
  const Case cases[] = {
      {",", "fuzz.yaml:1:1"},
      {",opology:\n", "fuzz.yaml:1:1"},
      {"a: 1\n---\n,\n", "fuzz.yaml:3:1"},  // after a complete first document
  };
  for (const Case& c : cases) {
    const rc::ConfigError e = load_error(c.text);
    EXPECT_EQ(e.where(), c.where) << c.text;
    EXPECT_EQ(e.key_path(), "") << c.text;
    EXPECT_EQ(e.reason(), "YAML syntax error: unexpected ','") << c.text;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
}

// The walk that detects it leaves well-formed streams alone: one document
// (or none) loads, a second complete one is still refused as before.
TEST_F(FuzzRegression, DocumentWalkKeepsValidStreams) {
  EXPECT_NO_THROW(rc::Config::load_string("", "fuzz.yaml"));
  EXPECT_NO_THROW(rc::Config::load_string("---\n...\n", "fuzz.yaml"));
  EXPECT_NO_THROW(rc::Config::load_string("a: [1, 2]\nb: {c: 3, d: 4}\n", "fuzz.yaml"));
  const rc::ConfigError e = load_error("a: 1\n---\nb: 2\n");
  EXPECT_EQ(e.reason(), "only one YAML document is allowed");
  EXPECT_EQ(e.where(), "fuzz.yaml:3:1");
}

// HPCC flow files: exact round trip, decimal seconds to ps, and error locations.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unistd.h>

#include "../core/config_error.h"
#include "core/config.h"
#include "traffic/traffic.h"

namespace rc = rocesim::core;
namespace rt = rocesim::traffic;

namespace {

using testkit::error_of;

std::string temp_path(const std::string& leaf) {
  return ::testing::TempDir() + "rocesim_traffic_" + std::to_string(::getpid()) + "_" + leaf;
}

rt::Flow flow(uint32_t s, uint32_t d, uint64_t size, uint64_t start, uint8_t pcp = 3) {
  rt::Flow f;
  f.src = s;
  f.dst = d;
  f.size_bytes = size;
  f.start_ps = start;
  f.pcp = pcp;
  f.tag = "replay";
  return f;
}

uint64_t start_of(const std::string& start_s) {
  return rt::parse_flow_file("1\n0 1 3 100 1000 " + start_s + "\n", "f", "k", 2).at(0).start_ps;
}

}  // namespace

TEST(FlowFile, RoundTripIsExact) {
  const std::vector<rt::Flow> flows = {
      flow(0, 1, 1000, 0),
      flow(1, 0, 1, 1234000),                   // 0.000001234 s
      flow(2, 15, 1ull << 40, 1, 0),            // 1 ps
      flow(15, 2, 65536, 999999999999, 7),      // 0.999999999999 s
      flow(3, 4, 30000000, 2000000000000),      // 2 s
      flow(4, 3, 12345, 123456789012345, 5),    // 123.456789012345 s
      flow(5, 6, 77, 18446744073709551615ull),  // the largest time
  };
  const std::string path = temp_path("flows.txt");
  rt::write_flow_file(path, flows);
  const std::vector<rt::Flow> back = rt::read_flow_file(path, "traffic[0].file", 16, "replay");
  std::remove(path.c_str());
  ASSERT_EQ(back.size(), flows.size());
  for (size_t i = 0; i < flows.size(); ++i) EXPECT_EQ(back[i], flows[i]) << i;
}

TEST(FlowFile, WritesHpccLines) {
  std::ostringstream os;
  rt::write_flows(os, {flow(0, 1, 1000, 1234000), flow(3, 2, 5, 2000000000000, 5), flow(1, 2, 9, 1)});
  EXPECT_EQ(os.str(),
            "3\n"
            "0 1 3 100 1000 0.000001234\n"
            "3 2 5 100 5 2.000000000\n"
            "1 2 3 100 9 0.000000000001\n");
  EXPECT_EQ(rt::format_seconds(0), "0.000000000");
  EXPECT_EQ(rt::format_seconds(1500000), "0.000001500");  // 1.5 us: 9 decimals like HPCC
  EXPECT_EQ(rt::format_seconds(1500), "0.0000000015");
}

TEST(FlowFile, DecimalSecondsToPicosecondsExactly) {
  EXPECT_EQ(start_of("0.000001234"), 1234000u);
  EXPECT_EQ(start_of("4.35"), 4350000000000u);  // a double product truncates to 4349999999999
  EXPECT_EQ(start_of("2.000000001"), 2000000001000u);
  EXPECT_EQ(start_of("0.1"), 100000000000u);
  EXPECT_EQ(start_of("1e-6"), 1000000u);
  EXPECT_EQ(start_of("1.5E-3"), 1500000000u);
  EXPECT_EQ(start_of("3"), 3000000000000u);
  EXPECT_EQ(start_of(".25"), 250000000000u);
  EXPECT_EQ(start_of("0.0000000000015"), 2u);  // 1.5 ps: half up
  EXPECT_EQ(start_of("0.0000000000014999"), 1u);
  EXPECT_EQ(start_of("0.00000000000049"), 0u);
  EXPECT_EQ(start_of("0e5"), 0u);
  EXPECT_EQ(start_of("18446744.073709551615"), 18446744073709551615ull);
}

TEST(FlowFile, ReadsHpccGeneratorOutput) {
  // As HPCC's traffic_gen writes it: the count line may carry a trailing space.
  // dport is kept (HPCC's scripts tell flow classes by it: 100, 200).
  const auto flows = rt::parse_flow_file("2 \n5 9 3 100 20000 2.000012345\n9 5 3 200 350 2.000500000\n", "f",
                                         "k", 10, "ws", 24);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0], (rt::Flow{5, 9, 20000, 2000012345000ull, 3, 24, "ws", {}, 100}));
  EXPECT_EQ(flows[1], (rt::Flow{9, 5, 350, 2000500000000ull, 3, 24, "ws", {}, 200}));
}

TEST(FlowFile, ErrorsHaveExactLocationAndReason) {
  struct Case {
    const char* text;
    const char* where;
    const char* reason;
  };
  const Case cases[] = {
      {"1\n16 0 3 100 1000 0.1\n", "f.txt:2:1", "src: host 16 out of range (16 hosts)"},
      {"1\n0 1 3 100 1000 -0.5\n", "f.txt:2:16", "start_s: negative time: '-0.5'"},
      {"1\n0 1 3 100 1000\n", "f.txt:2:15", "missing field 'start_s' (line format: src dst pg dport size start_s)"},
      {"1\n0 1\n", "f.txt:2:4", "missing field 'pg' (line format: src dst pg dport size start_s)"},
      {"1\n0 1 3 100 1000 0 9\n", "f.txt:2:18", "extra field '9' (line format: src dst pg dport size start_s)"},
      {"1\n0 x 3 100 1000 0\n", "f.txt:2:3", "dst: not a number: 'x'"},
      {"1\n2 2 3 100 1000 0\n", "f.txt:2:3", "dst: same host as src (2)"},
      {"1\n0 1 9 100 1000 0\n", "f.txt:2:5", "pg: priority must be 0..7, got 9"},
      {"1\n0 1 3 70000 1000 0\n", "f.txt:2:7", "dport: port must be 0..65535, got 70000"},
      {"1\n0 1 3 100 0 0\n", "f.txt:2:11", "size: must be at least 1 byte"},
      {"1\n0 1 3 100 1.5 0\n", "f.txt:2:11", "size: not an integer: '1.5'"},
      {"1\n0 1 3 100 10 0.1s\n", "f.txt:2:14", "start_s: not a number: '0.1s'"},
      {"1\n0 1 3 100 10 18446745\n", "f.txt:2:14", "start_s: too large: '18446745' (at most 18446744.073709551615 s)"},
      {"# flows\n3\n0 1 3 100 1000 0\n", "f.txt:2:1", "declares 3 flows but the file has 1"},
      {"1\n0 1 3 100 1000 0\n\n1 0 3 100 1000 0\n", "f.txt:4:1", "more flow lines than the 1 declared on line 1"},
      {"x\n", "f.txt:1:1", "flow count: not a number: 'x'"},
      {"2 5\n", "f.txt:1:3", "extra field '5' (the first line is the number of flows)"},
      {"\n\n", "f.txt:1:1", "empty file: expected the number of flows on the first line"},
  };
  for (const Case& c : cases) {
    const rc::ConfigError e = error_of([&] { rt::parse_flow_file(c.text, "f.txt", "traffic[3].file", 16); });
    EXPECT_EQ(e.where(), c.where) << c.text;
    EXPECT_EQ(e.reason(), c.reason) << c.text;
    EXPECT_EQ(e.key_path(), "traffic[3].file");
  }
}

TEST(FlowFile, FromDiskAndMissingFile) {
  const std::string path = temp_path("bad_flows.txt");
  {
    std::ofstream(path) << "2\n0 1 3 100 1000 0.000001\n1 0 3 100 1000 -1\n";
  }
  const rc::ConfigError e = error_of([&] { rt::read_flow_file(path, "traffic[4].file", 4); });
  EXPECT_EQ(std::string(e.what()), path + ":3:16: key 'traffic[4].file': start_s: negative time: '-1'");
  std::remove(path.c_str());

  const std::string missing = temp_path("no_such_flows.txt");
  const rc::ConfigError m = error_of([&] { rt::read_flow_file(missing, "traffic[5].file", 4); });
  EXPECT_EQ(m.where(), missing);
  EXPECT_EQ(m.reason(), "cannot open file: No such file or directory");
  EXPECT_THROW(rt::write_flow_file(missing + "/x/y", {}), std::runtime_error);
}

// libFuzzer target: HPCC flow files (tb/traffic/flow_file.cpp, parse_flow_file).
//
// The input is the file's text; the host count is 16 (as in the shipped
// single-switch topology). Contract (traffic.h): a bad file throws
// core::ConfigError naming FILE:LINE:COL. An accepted file must pass
// check_flows() for those hosts and survive write then read unchanged (the
// round trip traffic.h promises for flows without `after`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "core/config.h"
#include "traffic/traffic.h"

namespace {

constexpr uint32_t kHosts = 16;

[[noreturn]] void finding(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_flow_file: %s %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocesim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<traffic::Flow> flows;
  try {
    flows = traffic::parse_flow_file(text, "fuzz.txt", "traffic[0].file", kHosts);
  } catch (const core::ConfigError&) {
    return 0;  // the clean error
  }
  try {
    traffic::check_flows(flows, kHosts);
  } catch (const std::invalid_argument& e) {
    finding("accepted flows fail check_flows:", e.what());
  }
  std::ostringstream out;
  traffic::write_flows(out, flows);
  std::vector<traffic::Flow> back;
  try {
    back = traffic::parse_flow_file(out.str(), "written.txt", "traffic[0].file", kHosts);
  } catch (const core::ConfigError& e) {
    finding("written file not read back:", e.what());
  }
  if (back != flows) finding("write then read changed the flows");
  return 0;
}

// libFuzzer target: CDF files (tb/traffic/cdf.cpp, parse_cdf).
//
// The input is the file's text. Contract (traffic.h): a bad file throws
// core::ConfigError naming FILE:LINE:COL; anything else escaping, a crash,
// UB or a leak is a finding. An accepted CDF must keep the invariants the
// generators rely on: the mean and every quantile lie within [x_0, x_last]
// and quantiles never decrease in u; samples lie in [1, max(1, ceil(x_last))].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/config.h"
#include "core/rng.h"
#include "traffic/traffic.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_cdf: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocesim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  traffic::Cdf cdf;
  try {
    cdf = traffic::parse_cdf(text, "fuzz.cdf", "traffic[0].cdf");
  } catch (const core::ConfigError&) {
    return 0;  // the clean error
  }
  if (cdf.empty()) finding("accepted a CDF with no points");
  const double lo = cdf.points().front().bytes, hi = cdf.points().back().bytes;
  const double mean = cdf.mean();
  // The mean is a convex combination of the points (plus rounding).
  if (!std::isfinite(mean) || mean < lo * (1 - 1e-12) || mean > hi * (1 + 1e-12)) finding("mean outside [x_0, x_last]");
  double prev = lo;
  for (int i = 0; i <= 64; ++i) {
    const double u = i < 64 ? i / 64.0 : std::nextafter(1.0, 0.0);
    const double q = cdf.quantile(u);
    if (!(q >= lo && q <= hi)) finding("quantile outside [x_0, x_last]");
    if (q < prev) finding("quantile decreasing in u");
    prev = q;
  }
  core::Rng rng(1, "fuzz");
  for (int i = 0; i < 16; ++i) {
    const uint64_t s = cdf.sample(rng);
    // sample() is ceil(quantile) and at least 1 byte (traffic.h).
    if (s < 1 || static_cast<double>(s) > std::max(1.0, std::ceil(hi))) finding("sample outside [1, max(1, ceil(x_last))]");
  }
  return 0;
}

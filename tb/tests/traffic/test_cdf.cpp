// Flow-size CDFs: means, inverse-transform sampling, CDF files and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "../core/config_error.h"
#include "core/config.h"
#include "traffic/traffic.h"

namespace rc = rocesim::core;
namespace rt = rocesim::traffic;

namespace {

// The points as REFERENCE.md lists them, typed again here so the tests do not
// read them back from the code under test.
const std::vector<std::pair<double, double>> kWebSearch = {
    {0, 0},        {10000, 15},   {20000, 20},   {30000, 30},    {50000, 40},     {80000, 53},
    {200000, 60},  {1000000, 70}, {2000000, 80}, {5000000, 90},  {10000000, 97},  {30000000, 100}};
const std::vector<std::pair<double, double>> kFbHadoop = {
    {0, 0},       {100, 1},     {200, 2},      {300, 5},       {350, 15},      {400, 20},     {500, 30},
    {600, 40},    {700, 50},    {1000, 60},    {2000, 67},     {7000, 70},     {30000, 72},   {50000, 82},
    {80000, 87},  {120000, 90}, {300000, 95},  {1000000, 97.5}, {2000000, 99}, {10000000, 100}};

// Mean of a non-negative variable as the integral of its survival function,
// 1 - F(x), which is linear on each segment: a different route from the
// midpoint-times-mass sum in Cdf::mean().
double mean_by_survival(const std::vector<std::pair<double, double>>& pts) {
  double s = pts[0].first;  // 1 - F = 1 below the first point
  for (size_t i = 1; i < pts.size(); ++i) {
    const double s0 = 1 - pts[i - 1].second / 100, s1 = 1 - pts[i].second / 100;
    s += (pts[i].first - pts[i - 1].first) * (s0 + s1) / 2;
  }
  return s;
}

using testkit::error_of;

rc::ConfigError cdf_error(const std::string& text) {
  return error_of([&] { rt::parse_cdf(text, "w.cdf", "traffic[2].cdf"); });
}

std::string temp_path(const std::string& leaf) {
  return ::testing::TempDir() + "rocesim_traffic_" + std::to_string(::getpid()) + "_" + leaf;
}

// Fraction of samples <= x at every point and segment midpoint, within 3 standard errors.
void expect_reproduces(const rt::Cdf& cdf, const std::vector<std::pair<double, double>>& pts, uint64_t seed) {
  constexpr int kN = 100000;
  rc::Rng rng(seed, "cdf_test");
  std::vector<uint64_t> s(kN);
  for (auto& v : s) v = cdf.sample(rng);
  std::sort(s.begin(), s.end());
  auto frac_at_most = [&](double x) {
    return double(std::upper_bound(s.begin(), s.end(), uint64_t(x)) - s.begin()) / kN;
  };
  auto check = [&](double x, double p) {
    if (p <= 0 || p >= 1) return;
    const double se = std::sqrt(p * (1 - p) / kN);
    EXPECT_NEAR(frac_at_most(x), p, 3 * se) << cdf.name() << " at " << x << " bytes";
  };
  for (size_t i = 0; i < pts.size(); ++i) {
    check(pts[i].first, pts[i].second / 100);
    // Linear interpolation: half the segment's mass lies below its midpoint.
    if (i > 0) check((pts[i - 1].first + pts[i].first) / 2, (pts[i - 1].second + pts[i].second) / 200);
  }
  EXPECT_GE(s.front(), 1u);
  EXPECT_LE(s.back(), uint64_t(pts.back().first));
  // Sample mean within 3 standard errors of the CDF's mean.
  double sum = 0, sum2 = 0;
  for (uint64_t v : s) {
    sum += double(v);
    sum2 += double(v) * double(v);
  }
  const double m = sum / kN, var = sum2 / kN - m * m;
  EXPECT_NEAR(m, cdf.mean(), 3 * std::sqrt(var / kN)) << cdf.name();
}

}  // namespace

TEST(Cdf, WebSearchMeanMatchesIntegral) {
  EXPECT_NEAR(rt::Cdf::websearch().mean(), mean_by_survival(kWebSearch), 1e-6);
  EXPECT_DOUBLE_EQ(rt::Cdf::websearch().mean(), 1711250.0);  // by hand: sum of midpoint * mass
}

TEST(Cdf, FbHadoopMeanMatchesIntegral) {
  EXPECT_NEAR(rt::Cdf::fb_hadoop().mean(), mean_by_survival(kFbHadoop), 1e-6);
  EXPECT_DOUBLE_EQ(rt::Cdf::fb_hadoop().mean(), 120420.75);
}

TEST(Cdf, BuiltinsHaveTheReferencePoints) {
  auto same = [](const rt::Cdf& c, const std::vector<std::pair<double, double>>& pts) {
    ASSERT_EQ(c.points().size(), pts.size());
    for (size_t i = 0; i < pts.size(); ++i) {
      EXPECT_EQ(c.points()[i].bytes, pts[i].first) << i;
      EXPECT_EQ(c.points()[i].percent, pts[i].second) << i;
    }
  };
  same(rt::Cdf::websearch(), kWebSearch);
  same(rt::Cdf::fb_hadoop(), kFbHadoop);
  ASSERT_TRUE(rt::Cdf::builtin("websearch"));
  EXPECT_EQ(rt::Cdf::builtin("websearch")->name(), "websearch");
  EXPECT_EQ(rt::Cdf::builtin("fb_hadoop")->name(), "fb_hadoop");
  EXPECT_FALSE(rt::Cdf::builtin("WebSearch"));
}

TEST(Cdf, QuantileInterpolatesLinearly) {
  const rt::Cdf& w = rt::Cdf::websearch();
  EXPECT_EQ(w.quantile(0), 0);
  EXPECT_DOUBLE_EQ(w.quantile(0.075), 5000);     // halfway through 0..15 %
  EXPECT_DOUBLE_EQ(w.quantile(0.15), 10000);     // a point: start of the next segment
  EXPECT_DOUBLE_EQ(w.quantile(0.175), 15000);
  EXPECT_DOUBLE_EQ(w.quantile(0.985), 20000000);  // halfway through 97..100 %
  EXPECT_LT(w.quantile(std::nextafter(1.0, 0.0)), 30000000.0 + 1e-6);
}

TEST(Cdf, SamplesReproduceWebSearch) { expect_reproduces(rt::Cdf::websearch(), kWebSearch, 7); }
TEST(Cdf, SamplesReproduceFbHadoop) { expect_reproduces(rt::Cdf::fb_hadoop(), kFbHadoop, 8); }

TEST(Cdf, SizesRoundUpToWholeBytes) {
  // Uniform on (0, 10] bytes: ceil gives 1..10 with 10 % each, so P(size <= x) = F(x) at every integer x.
  const rt::Cdf tiny = rt::Cdf::from_points({{0, 0}, {10, 100}}, "tiny");
  rc::Rng rng(4, "tiny");
  constexpr int kN = 100000;
  std::vector<int> count(11, 0);
  for (int i = 0; i < kN; ++i) {
    const uint64_t s = tiny.sample(rng);
    ASSERT_GE(s, 1u);
    ASSERT_LE(s, 10u);
    ++count[s];
  }
  for (int v = 1; v <= 10; ++v) EXPECT_NEAR(count[v] / double(kN), 0.1, 3 * std::sqrt(0.09 / kN)) << v;
}

TEST(Cdf, FirstPointAboveZeroIsAnAtom) {
  const rt::Cdf fixed = rt::Cdf::from_points({{1000, 100}}, "fixed");
  rc::Rng rng(1, "atom");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(fixed.sample(rng), 1000u);
  EXPECT_EQ(fixed.mean(), 1000);
  // Half the mass at 100 B, half uniform on 100..200: mean 0.5*100 + 0.5*150.
  const rt::Cdf half = rt::Cdf::from_points({{100, 50}, {200, 100}}, "half");
  EXPECT_DOUBLE_EQ(half.mean(), 125);
  int at100 = 0;
  for (int i = 0; i < 10000; ++i) at100 += half.sample(rng) == 100;
  EXPECT_NEAR(at100 / 10000.0, 0.5, 3 * std::sqrt(0.25 / 10000));
}

TEST(Cdf, FromPointsRejectsBadPoints) {
  EXPECT_THROW(rt::Cdf::from_points({}, "x"), std::invalid_argument);
  EXPECT_THROW(rt::Cdf::from_points({{0, 0}, {10, 90}}, "x"), std::invalid_argument);
  EXPECT_THROW(rt::Cdf::from_points({{0, 0}, {0, 100}}, "x"), std::invalid_argument);
  EXPECT_THROW(rt::Cdf::from_points({{0, 50}, {10, 40}, {20, 100}}, "x"), std::invalid_argument);
  try {
    rt::Cdf::from_points({{0, 0}, {10, 50}, {5, 100}}, "mine");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cdf mine: point 2: bytes not increasing: 5 after 10");
  }
}

TEST(CdfFile, ReadsHpccFormatWithCommentsTabsAndCrlf) {
  const std::string text =
      "# WebSearch (DCTCP)\r\n0 0\r\n10000\t15\n20000 20   # inline\n\n30000 30\n50000 40\n80000 53\n"
      "200000 60\n1e6 70\n2000000 80\n5000000 90\n10000000 97\n30000000.0 100\n";
  const rt::Cdf c = rt::parse_cdf(text, "ws.txt", "k");
  ASSERT_EQ(c.points().size(), kWebSearch.size());
  for (size_t i = 0; i < kWebSearch.size(); ++i) {
    EXPECT_EQ(c.points()[i].bytes, kWebSearch[i].first);
    EXPECT_EQ(c.points()[i].percent, kWebSearch[i].second);
  }
  EXPECT_EQ(c.name(), "ws.txt");
  EXPECT_DOUBLE_EQ(c.mean(), 1711250.0);
}

TEST(CdfFile, ErrorsHaveExactLocationAndReason) {
  struct Case {
    const char* text;
    const char* where;
    const char* reason;
  };
  const Case cases[] = {
      {"0 0\n10000 abc\n", "w.cdf:2:7", "cumulative percent: not a number: 'abc'"},
      {"0 0\n10000 15\n# c\n  5000 20\n", "w.cdf:4:3", "bytes not increasing: 5000 after 10000"},
      {"0 0\n10000 15\n10000 20\n", "w.cdf:3:1", "bytes not increasing: 10000 after 10000"},
      {"0 0\n100 50\n200 40\n", "w.cdf:3:5", "cumulative percent decreasing: 40 after 50"},
      {"0 0\n100 50\n200 97.5\n", "w.cdf:3:5", "last point's cumulative percent is 97.5, must be 100"},
      {"0 0\n100\n", "w.cdf:2:4", "missing field 'cumulative_percent' (line format: bytes cumulative_percent)"},
      {"0 0 7\n", "w.cdf:1:5", "extra field '7' (line format: bytes cumulative_percent)"},
      {"0 0\n100 101\n", "w.cdf:2:5", "cumulative percent must be within 0..100, got 101"},
      {"-5 0\n", "w.cdf:1:1", "bytes: negative: '-5'"},
      {"0 0\n1e 100\n", "w.cdf:2:1", "bytes: not a number: '1e'"},
      {"0 0\n1e17 100\n", "w.cdf:2:1", "bytes: above 2^53: 100000000000000000"},
      {"# only a comment\n\n", "w.cdf:1:1", "no points: expected lines 'bytes cumulative_percent'"},
  };
  for (const Case& c : cases) {
    const rc::ConfigError e = cdf_error(c.text);
    EXPECT_EQ(e.where(), c.where) << c.text;
    EXPECT_EQ(e.reason(), c.reason) << c.text;
    EXPECT_EQ(e.key_path(), "traffic[2].cdf");
  }
}

TEST(CdfFile, FromDiskAndMissingFile) {
  const std::string path = temp_path("bad.cdf");
  {
    std::ofstream(path) << "0 0\n100 50\n200 x\n";
  }
  const rc::ConfigError e = error_of([&] { rt::read_cdf_file(path, "traffic[0].cdf"); });
  EXPECT_EQ(e.where(), path + ":3:5");
  EXPECT_EQ(std::string(e.what()), path + ":3:5: key 'traffic[0].cdf': cumulative percent: not a number: 'x'");
  {
    std::ofstream(path) << "0 0\n100 50\n200 100\n";
  }
  EXPECT_DOUBLE_EQ(rt::read_cdf_file(path, "k").mean(), 50 * 50 / 100.0 + 150 * 50 / 100.0);
  std::remove(path.c_str());

  const std::string missing = temp_path("no_such.cdf");
  const rc::ConfigError m = error_of([&] { rt::read_cdf_file(missing, "traffic[1].cdf"); });
  EXPECT_EQ(m.where(), missing);
  EXPECT_EQ(m.key_path(), "traffic[1].cdf");
  EXPECT_EQ(m.reason(), "cannot open file: No such file or directory");
}

// Unit parsing and formatting: exact values, error messages, round trips.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/units.h"

namespace rc = rocesim::core;

namespace {

using ParseFn = bool (*)(std::string_view, uint64_t&, std::string&);

struct Valid {
  const char* text;
  uint64_t value;
};

struct Invalid {
  const char* text;
  const char* message_part;  // must appear in the error
};

void expect_valid(ParseFn parse, const std::vector<Valid>& cases) {
  for (const Valid& c : cases) {
    uint64_t v = 12345;
    std::string err;
    EXPECT_TRUE(parse(c.text, v, err)) << c.text << ": " << err;
    EXPECT_EQ(v, c.value) << c.text;
  }
}

void expect_invalid(ParseFn parse, const std::vector<Invalid>& cases, const std::string& units) {
  for (const Invalid& c : cases) {
    uint64_t v = 0;
    std::string err;
    EXPECT_FALSE(parse(c.text, v, err)) << "accepted '" << c.text << "' as " << v;
    EXPECT_NE(err.find(c.message_part), std::string::npos) << c.text << " -> " << err;
    EXPECT_NE(err.find("accepted units: " + units), std::string::npos) << c.text << " -> " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

}  // namespace

TEST(Units, RateValid) {
  expect_valid(rc::parse_rate, {
                                   {"100Gbps", 100000000000ull},
                                   {"2.5Gbps", 2500000000ull},
                                   {"100 Gbps", 100000000000ull},
                                   {"1bps", 1},
                                   {"7Kbps", 7000},
                                   {"25Mbps", 25000000},
                                   {"1.6Tbps", 1600000000000ull},
                                   {"0.001Kbps", 1},
                                   {"1.50Gbps", 1500000000ull},
                                   {"0100Mbps", 100000000},
                                   {"0", 0},
                                   {"0Gbps", 0},
                                   {"18446744073709551615bps", UINT64_MAX},
                                   {"18446744.073709551615Tbps", UINT64_MAX},
                               });
}

TEST(Units, RateInvalid) {
  expect_invalid(rc::parse_rate,
                 {
                     {"abc", "expected a rate such as 100Gbps, got 'abc'"},
                     {"", "expected a rate such as 100Gbps, got ''"},
                     {"Gbps", "expected a rate such as 100Gbps"},
                     {"100", "missing unit in '100'"},
                     {"100 ", "missing unit"},
                     {"0 ", "missing unit"},
                     {"100gbps", "unknown unit 'gbps' in '100gbps' (did you mean 'Gbps'?)"},
                     {"100Gb/s", "(did you mean 'Gbps'?)"},
                     {"100GBps", "did you mean 'Gbps'"},
                     {"100furlongs", "unknown unit 'furlongs'"},
                     {"-1Gbps", "negative rate '-1Gbps'"},
                     {"+1Gbps", "expected a rate"},
                     {"0.5bps", "0.5bps is not a whole number of bits/s"},
                     {"1.0000000001Gbps", "is not a whole number of bits/s"},
                     {"18446744073709551616bps", "is too large"},
                     {"18446745Tbps", "is too large"},
                     {"99999999999999999999999Gbps", "is too large"},
                     {"100  Gbps", "expected a rate"},
                     {"1e9bps", "expected a rate"},
                     {".5Gbps", "expected a rate"},
                     {"5.Gbps", "expected a rate"},
                     {"1,000Gbps", "expected a rate"},
                     {" 100Gbps", "expected a rate"},
                 },
                 "bps, Kbps, Mbps, Gbps, Tbps");
}

TEST(Units, SizeValid) {
  expect_valid(rc::parse_size, {
                                   {"16MiB", 16777216},
                                   {"1KB", 1000},
                                   {"1KiB", 1024},
                                   {"1.5KiB", 1536},
                                   {"0.5KB", 500},
                                   {"2GiB", 2147483648ull},
                                   {"3GB", 3000000000ull},
                                   {"2TB", 2000000000000ull},               // 2 x 10^12
                                   {"1TiB", 1099511627776ull},              // 2^40
                                   {"16777215TiB", 18446742974197923840ull},  // (2^24 - 1) x 2^40
                                   {"9000B", 9000},
                                   {"0.25MiB", 262144},
                                   {"0", 0},
                                   {"4 KiB", 4096},
                               });
}

TEST(Units, SizeInvalid) {
  expect_invalid(rc::parse_size,
                 {
                     {"0.5B", "0.5B is not a whole number of bytes"},
                     {"1.0001KiB", "not a whole number of bytes"},
                     {"1kb", "(did you mean 'KB'?)"},
                     {"1mib", "(did you mean 'MiB'?)"},
                     {"4K", "(did you mean 'KiB'?)"},
                     {"1PB", "unknown unit 'PB'"},
                     {"1tib", "(did you mean 'TiB'?)"},
                     {"64", "missing unit"},
                     {"big", "expected a size such as 16MiB, got 'big'"},
                     {"17179869184GiB", "is too large"},
                 },
                 "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
}

TEST(Units, TimeValid) {
  expect_valid(rc::parse_time, {
                                   {"2us", 2000000},
                                   {"0.5us", 500000},
                                   {"5ns", 5000},
                                   {"1ps", 1},
                                   {"1ms", 1000000000},
                                   {"1s", 1000000000000ull},
                                   {"0.001ns", 1},
                                   {"1.5ns", 1500},
                                   {"18446744s", 18446744000000000000ull},
                                   {"1h", 3600000000000000ull},   // 3600 s x 10^12 ps
                                   {"0.5h", 1800000000000000ull},
                                   {"0", 0},
                                   {"0.0", 0},
                               });
}

TEST(Units, TimeInvalid) {
  expect_invalid(rc::parse_time,
                 {
                     {"1.5ps", "1.5ps is not a whole number of picoseconds"},
                     {"0.0001ns", "not a whole number of picoseconds"},
                     {"10\xc2\xb5s", "(did you mean 'us'?)"},
                     {"3sec", "(did you mean 's'?)"},
                     {"2hours", "(did you mean 'h'?)"},
                     {"5124.1h", "is too large"},  // 5124.1 x 3.6e15 > 2^64 - 1
                     {"2US", "(did you mean 'us'?)"},
                     {"18446745s", "is too large"},
                     {"-5ns", "negative time"},
                     {"10", "missing unit in '10'"},
                     {"soon", "expected a time such as 2us, got 'soon'"},
                 },
                 "ps, ns, us, ms, s, h");
}

TEST(Units, FormatCanonical) {
  EXPECT_EQ(rc::format_rate(100000000000ull), "100Gbps");
  EXPECT_EQ(rc::format_rate(2500000000ull), "2500Mbps");
  EXPECT_EQ(rc::format_rate(1600000000000ull), "1600Gbps");
  EXPECT_EQ(rc::format_rate(2000000000000ull), "2Tbps");
  EXPECT_EQ(rc::format_rate(999), "999bps");
  EXPECT_EQ(rc::format_rate(0), "0bps");
  EXPECT_EQ(rc::format_size(1536), "1536B");
  EXPECT_EQ(rc::format_size(1024), "1KiB");
  EXPECT_EQ(rc::format_size(1000), "1KB");
  EXPECT_EQ(rc::format_size(1024000), "1000KiB");  // binary preferred when exact
  EXPECT_EQ(rc::format_size(16777216), "16MiB");
  EXPECT_EQ(rc::format_size(3ull << 30), "3GiB");
  EXPECT_EQ(rc::format_size(5000000000ull), "5GB");
  EXPECT_EQ(rc::format_size(1024000000000ull), "1000000000KiB");  // not "1024GB"
  EXPECT_EQ(rc::format_size(0), "0B");
  EXPECT_EQ(rc::format_time(5000), "5ns");
  EXPECT_EQ(rc::format_time(2000000), "2us");
  EXPECT_EQ(rc::format_time(1500), "1500ps");
  EXPECT_EQ(rc::format_time(3000000000000ull), "3s");
  EXPECT_EQ(rc::format_time(0), "0ps");
  EXPECT_EQ(rc::format_rate(UINT64_MAX), "18446744073709551615bps");
}

TEST(Units, RoundTripRandom) {
  std::mt19937_64 rng(20240611);
  const uint64_t mults[] = {1, 1000, 1000000, 1000000000ull, 1000000000000ull, 1024, 1ull << 20, 1ull << 30};
  for (int i = 0; i < 20000; ++i) {
    uint64_t v;
    switch (i % 3) {
      case 0: v = rng(); break;                                   // any 64-bit value
      case 1: v = rng() >> (rng() % 64); break;                    // any magnitude
      default: v = (rng() % 100000) * mults[rng() % 8]; break;     // round numbers: exercise every unit
    }
    uint64_t back = 0;
    std::string err;
    const std::string r = rc::format_rate(v);
    ASSERT_TRUE(rc::parse_rate(r, back, err)) << r << ": " << err;
    ASSERT_EQ(back, v) << r;
    const std::string s = rc::format_size(v);
    ASSERT_TRUE(rc::parse_size(s, back, err)) << s << ": " << err;
    ASSERT_EQ(back, v) << s;
    const std::string t = rc::format_time(v);
    ASSERT_TRUE(rc::parse_time(t, back, err)) << t << ": " << err;
    ASSERT_EQ(back, v) << t;
  }
}

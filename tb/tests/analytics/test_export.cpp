// The flow records written as JSON lines and as an IPFIX file, read back by
// independent parsers: Python's json module for the JSON lines, tshark's
// IPFIX dissector (Wireshark "cflow") for the IPFIX file. tshark must decode
// every message without a malformed-packet or expert warning, and every
// value it shows must equal the JSON line of the same record.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../sim/cli_util.h"
#include "analytics/analyzer.h"
#include "analytics/export.h"
#include "frames.h"
#include "ipfix_check.h"

namespace rocesim::analytics {
namespace {

using namespace test;
using clitest::Result;
using clitest::sh;
namespace pk = rocesim::packet;

constexpr uint64_t kUs = 1'000'000, kNs = 1'000;

// One analyzer's traffic: n flows with requests, ACKs, NAKs on several ports,
// long enough for active exports, then idle aging and a final flush.
void drive(Analyzer& a, uint32_t first, uint32_t n, uint64_t end) {
  uint64_t t = 0;
  auto at = [&](uint64_t when) {
    for (uint64_t g = (t / a.config().scan_interval_ps + 1) * a.config().scan_interval_ps; g <= when;
         g += a.config().scan_interval_ps)
      a.advance(g);
    t = when;
  };
  auto frame = [&](const pk::Packet& p, uint32_t port, uint64_t when) {
    at(when);
    a.on_frame(p, port, when);
  };
  for (uint32_t i = 0; i < n; ++i) {
    const Conn c = conn(first + i);
    frame(cm(c, pk::cm::kReq), 1 + i % 3, 200 * kNs * i);
    frame(cm(c, pk::cm::kRep), 4, 200 * kNs * i + 50 * kNs);
    if (i != 1) frame(cm(c, pk::cm::kRtu), 1 + i % 3, 200 * kNs * i + 100 * kNs);  // one RTU not seen
  }
  uint32_t psn[16] = {};
  for (uint64_t step = 0; step < 120; ++step) {
    const uint64_t base = 5 * kUs + step * kUs;
    for (uint32_t i = 0; i < n; ++i) {
      if (i == n - 1 && step >= 40) continue;  // the last flow goes idle early
      const Conn c = conn(first + i);
      const uint64_t t0 = base + i * 50 * kNs;
      const uint32_t len = 1024 + 4 * i + (step % 3);  // odd lengths: BTH pad bytes
      frame(data(c, kC2s, pk::op::kWriteOnly, psn[i], true, len), 1 + i % 3, t0);
      if (i % 2 == 0 && step % 17 == 3) {  // lost: NAK for the next PSN, then go back
        frame(ack(c, kC2s, psn[i], 0x60), 4 + (step % 2), t0 + 20 * kNs);
        frame(data(c, kC2s, pk::op::kWriteOnly, psn[i], true, len), 1 + i % 3, t0 + 30 * kNs);
      }
      frame(ack(c, kC2s, psn[i]), 4, t0 + (300 + 17 * i + step % 5) * kNs + 123);
      if (i == 2) frame(data(c, kS2c, pk::op::kSendOnly, step, true, 77), 4, t0 + 40 * kNs);
      if (i == 2) frame(ack(c, kS2c, uint32_t(step)), 2, t0 + 45 * kNs);
      ++psn[i];
    }
  }
  at(end);
  a.flush(end);
}

TEST(AnalyticsExport, TsharkDecodesEveryIpfixRecordAsTheJsonLines) {
  if (sh("command -v tshark").rc != 0)
    GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh installs it): IPFIX decode not checked";
  const std::string dir = clitest::temp_dir();
  const std::string jpath = dir + "/flow_records.jsonl", ipath = dir + "/flow_records.ipfix";
  std::FILE* jf = std::fopen(jpath.c_str(), "w");
  std::FILE* xf = std::fopen(ipath.c_str(), "wb");
  ASSERT_TRUE(jf && xf);
  uint64_t messages = 0;
  {
    JsonlWriter jw(jf);
    IpfixWriter xw(xf, 1200);  // small messages: several per domain
    Config cfg;
    cfg.timestamp_resolution_ps = 1;
    cfg.scan_interval_ps = 1 * kUs;
    cfg.inactive_timeout_ps = 20 * kUs;
    cfg.active_timeout_ps = 40 * kUs;
    cfg.large_flow_bytes = 64 * 1024;
    cfg.throughput_interval_ps = 5 * kUs;
    cfg.domain_id = 3;
    Analyzer a3(cfg);
    cfg.domain_id = 4;
    Analyzer a4(cfg);
    for (Analyzer* a : {&a3, &a4}) a->add_sink(&jw), a->add_sink(&xw);
    drive(a3, 0, 6, 150 * kUs);
    drive(a4, 20, 3, 150 * kUs);
    xw.flush();
    messages = xw.messages();
    EXPECT_GT(a3.stats().aged_active, 0u);
    EXPECT_GT(a3.stats().aged_idle, 0u);
  }
  std::fclose(jf);
  std::fclose(xf);
  EXPECT_GT(messages, 4u);

  const test::IpfixChecked n = test::expect_ipfix_equals_jsonl(jpath, ipath);
  ASSERT_GT(n.records, 10u);
  // The traffic exercised the fields compared (so equal zeros prove little).
  EXPECT_GT(n.naks, 3u);
  EXPECT_GT(n.rtt, 10u);
  EXPECT_GT(n.throughput, 3u);
  if (!HasFailure()) std::system(("rm -rf " + dir).c_str());
  else std::fprintf(stderr, "files kept in %s\n", dir.c_str());
}

// The file's structure, by RFC 7011 field arithmetic: message headers
// (version 10, lengths that tile the file, per-domain sequence numbers that
// count the data records before), the template once per domain first.
TEST(AnalyticsExport, IpfixFileIsASequenceOfMessages) {
  const std::string dir = clitest::temp_dir();
  const std::string ipath = dir + "/r.ipfix";
  std::FILE* xf = std::fopen(ipath.c_str(), "wb");
  ASSERT_TRUE(xf);
  const uint32_t n = 7;
  {
    IpfixWriter xw(xf, 800);
    FlowRecord r;
    for (uint32_t i = 0; i < n; ++i) {
      r.domain_id = 9;
      r.client_qp = i;
      xw.write(r);
    }
  }
  std::fclose(xf);
  const std::string b = clitest::slurp(ipath);
  auto u16 = [&](size_t o) { return uint32_t(uint8_t(b[o])) << 8 | uint8_t(b[o + 1]); };
  auto u32 = [&](size_t o) { return u16(o) << 16 | u16(o + 2); };
  size_t o = 0, msgs = 0;
  uint32_t records = 0;
  while (o < b.size()) {
    ASSERT_LE(o + 16, b.size());
    EXPECT_EQ(u16(o), 10u);             // version
    const uint32_t len = u16(o + 2);
    EXPECT_LE(len, 800u);
    EXPECT_EQ(u32(o + 8), records);     // sequence: data records before this message
    EXPECT_EQ(u32(o + 12), 9u);         // observation domain
    size_t s = o + 16;
    while (s < o + len) {
      const uint32_t id = u16(s), slen = u16(s + 2);
      if (id == 2) {
        EXPECT_EQ(msgs, 0u) << "template only in the domain's first message";
      }
      if (id == kIpfixTemplateId) {
        EXPECT_EQ((slen - 4) % IpfixWriter::record_bytes(), 0u);
        records += uint32_t((slen - 4) / IpfixWriter::record_bytes());
      }
      s += slen;
    }
    EXPECT_EQ(s, o + len);
    o += len;
    ++msgs;
  }
  EXPECT_EQ(o, b.size());
  EXPECT_EQ(records, n);
  EXPECT_GT(msgs, 1u);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace rocesim::analytics

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

namespace rocesim::analytics {
namespace {

using namespace test;
using clitest::Result;
using clitest::sh;
namespace pk = rocesim::packet;

constexpr uint64_t kUs = 1'000'000, kNs = 1'000;

using Fields = std::map<std::string, std::string>;

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

// Python's json module flattens each line to key=value pairs (nested keys
// joined by '.', lists as comma-separated values, null as "null").
std::vector<Fields> read_jsonl(const std::string& path) {
  const Result r = sh(
      "/usr/bin/python3 -c '\n"
      "import json, sys\n"
      "def flat(p, v, out):\n"
      "    if isinstance(v, dict):\n"
      "        for k, x in v.items(): flat(p + k + \".\" if isinstance(x, dict) else p + k, x, out)\n"
      "    elif isinstance(v, list): out.append(p + \"=\" + \",\".join(str(x) for x in v))\n"
      "    elif v is None: out.append(p + \"=null\")\n"
      "    elif isinstance(v, bool): out.append(p + \"=\" + (\"true\" if v else \"false\"))\n"
      "    else: out.append(p + \"=\" + str(v))\n"
      "for line in open(sys.argv[1]):\n"
      "    out = []\n"
      "    flat(\"\", json.loads(line), out)\n"
      "    print(\" \".join(out))\n"
      "' " +
      path);
  EXPECT_EQ(r.rc, 0) << r.err;
  std::vector<Fields> recs;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    Fields f;
    std::istringstream ls(line);
    std::string kv;
    while (ls >> kv) {
      const size_t eq = kv.find('=');
      f[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    recs.push_back(f);
  }
  return recs;
}

uint64_t hex_value(const std::string& bytes) {  // "00 00 01 2a" -> 0x12a
  uint64_t v = 0;
  std::istringstream in(bytes);
  std::string b;
  while (in >> b) v = v << 8 | std::stoul(b, nullptr, 16);
  return v;
}

// tshark shows dateTimeNanoseconds as a UTC date; with epoch 0 and times
// under a minute it reads "Jan  1, 1970 00:00:SS.nnnnnnnnn UTC".
uint64_t shown_ns(const std::string& s) {
  std::smatch m;
  if (!std::regex_search(s, m, std::regex("Jan  1, 1970 00:00:([0-9]{2})\\.([0-9]{9}) UTC"))) return UINT64_MAX;
  return std::stoull(m[1]) * 1'000'000'000ull + std::stoull(m[2]);
}

struct IpfixFlow {
  uint32_t domain = 0;
  Fields f;  // tshark label (with " [Reverse]" or "E<id>" for enterprise fields) -> shown value
};

// Flow blocks of `tshark -V`: "Observation Domain Id: N" per message, then
// per "Flow N" its field lines "Label: value".
std::vector<IpfixFlow> read_tshark(const std::string& text) {
  std::vector<IpfixFlow> flows;
  std::istringstream in(text);
  std::string line;
  uint32_t domain = 0;
  bool in_flow = false;
  const std::regex ent("^\\s+Enterprise Private entry: \\(.*\\) Type ([0-9]+): Value \\(hex bytes\\): (.*)$");
  const std::regex field("^\\s+([A-Za-z][A-Za-z ]*): (.*)$");
  const std::regex rev("^(.*) \\(Reverse Type [0-9]+ [A-Z_]+\\)$");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, std::regex("^    Observation Domain Id: ([0-9]+)"))) {
      domain = uint32_t(std::stoul(m[1]));
      in_flow = false;
      continue;
    }
    if (std::regex_search(line, std::regex("^        Flow [0-9]+$"))) {
      flows.push_back(IpfixFlow{domain, {}});
      in_flow = true;
      continue;
    }
    if (!in_flow || line.rfind("            ", 0) != 0) {
      if (line.rfind("            ", 0) != 0) in_flow = false;
      continue;
    }
    if (std::regex_match(line, m, ent)) {
      flows.back().f["E" + m[1].str()] = m[2];
    } else if (std::regex_match(line, m, field)) {
      std::string key = m[1], value = m[2];
      std::smatch r;
      if (std::regex_match(value, r, rev)) key += " [Reverse]", value = r[1];
      flows.back().f[key] = value;
    }
  }
  return flows;
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

  const std::vector<Fields> json = read_jsonl(jpath);
  ASSERT_GT(json.size(), 10u);
  const Result t = sh("tshark -n -r " + ipath + " -V");
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_EQ(t.out.find("Malformed"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("Expert Info"), std::string::npos) << t.out;
  const std::vector<IpfixFlow> ipfix = read_tshark(t.out);
  ASSERT_EQ(ipfix.size(), json.size()) << t.out.substr(0, 6000);

  // Records of one domain keep their order in both files.
  std::map<uint32_t, std::vector<const Fields*>> jd;
  std::map<uint32_t, std::vector<const IpfixFlow*>> xd;
  for (const Fields& f : json) jd[uint32_t(std::stoul(f.at("domain")))].push_back(&f);
  for (const IpfixFlow& x : ipfix) xd[x.domain].push_back(&x);
  ASSERT_EQ(jd.size(), 2u);
  ASSERT_EQ(xd.size(), 2u);
  const std::map<std::string, std::string> reason = {{"idle", "1"}, {"active", "2"}, {"end_detected", "3"},
                                                     {"forced", "4"}};
  size_t checked_naks = 0, checked_rtt = 0, checked_tp = 0;
  for (const auto& [domain, js] : jd) {
    const auto& xs = xd[domain];
    ASSERT_EQ(xs.size(), js.size()) << "domain " << domain;
    for (size_t i = 0; i < js.size(); ++i) {
      const Fields& j = *js[i];
      const Fields& x = xs[i]->f;
      SCOPED_TRACE("domain " + std::to_string(domain) + " record " + std::to_string(i));
      auto ent = [&](uint16_t id) -> uint64_t {
        const auto it = x.find("E" + std::to_string(id));
        EXPECT_NE(it, x.end()) << "enterprise field " << id;
        return it == x.end() ? UINT64_MAX : hex_value(it->second);
      };
      auto num = [&](const std::string& k) { return std::stoull(j.at(k)); };
      EXPECT_EQ(x.at("SrcAddr"), j.at("client_ip"));
      EXPECT_EQ(x.at("DstAddr"), j.at("server_ip"));
      EXPECT_EQ(ent(ipfix_ie::kClientQp), num("client_qp"));
      EXPECT_EQ(ent(ipfix_ie::kServerQp), num("server_qp"));
      // The NTP fraction (RFC 7011 6.1.10) is written rounded up, so tshark's
      // conversion back to ns (rounding down) shows the ns exactly.
      EXPECT_EQ(shown_ns(x.at("StartTime")), num("start_ns")) << x.at("StartTime");
      EXPECT_EQ(shown_ns(x.at("EndTime")), num("end_ns")) << x.at("EndTime");
      EXPECT_EQ(ent(ipfix_ie::kEstablished), j.at("established") == "true" ? 1u : 0u);
      const std::string why = x.at("Flow End Reason");
      EXPECT_NE(why.find("(" + reason.at(j.at("reason")) + ")"), std::string::npos) << why;
      EXPECT_EQ(x.at("Packets"), j.at("c2s.packets"));
      EXPECT_EQ(x.at("Packets [Reverse]"), j.at("s2c.packets"));
      EXPECT_EQ(x.at("Octets"), j.at("c2s.octets"));
      EXPECT_EQ(x.at("Octets [Reverse]"), j.at("s2c.octets"));
      for (int d = 0; d < 2; ++d) {
        const std::string p = d == 0 ? "c2s." : "s2c.";
        const std::string port = j.at(p + "ingress_port");
        const std::string shown = x.at(d == 0 ? "InputInt" : "InputInt [Reverse]");
        EXPECT_EQ(shown, port == "null" ? std::to_string(kNoPort) : port);
        EXPECT_EQ(ent(ipfix_ie::kNaks[d]), num(p + "naks"));
        EXPECT_EQ(ent(ipfix_ie::kOtherNaks[d]), num(p + "other_naks"));
        EXPECT_EQ(ent(ipfix_ie::kRttSamples[d]), num(p + "rtt_samples"));
        const std::string rtt = j.at(p + "rtt_avg_ns");
        EXPECT_EQ(ent(ipfix_ie::kRttAvgNs[d]), rtt == "null" ? 0 : std::stoull(rtt));
        const std::string tp = j.at(p + "throughput_bps"), tpm = j.at(p + "throughput_max_bps");
        EXPECT_EQ(ent(ipfix_ie::kThroughputBps[d]), tp == "null" ? 0 : std::stoull(tp));
        EXPECT_EQ(ent(ipfix_ie::kThroughputMaxBps[d]), tpm == "null" ? 0 : std::stoull(tpm));
        EXPECT_EQ(ent(ipfix_ie::kRetxPackets[d]), num(p + "retx_packets"));
        EXPECT_EQ(ent(ipfix_ie::kPortChanges[d]), num(p + "port_changes"));
        std::vector<uint64_t> loss;
        std::istringstream ls(j.at(p + "loss_ns"));
        for (std::string v; std::getline(ls, v, ',');) loss.push_back(std::stoull(v));
        for (size_t k = 0; k < kMaxLossTimes; ++k)
          EXPECT_EQ(ent(uint16_t(ipfix_ie::kLossTimeFirst[d] + k)), k < loss.size() ? loss[k] : 0) << p << k;
        checked_naks += num(p + "naks") > 0;
        checked_rtt += rtt != "null";
        checked_tp += tp != "null";
      }
    }
  }
  // The traffic exercised the fields compared (so equal zeros prove little).
  EXPECT_GT(checked_naks, 3u);
  EXPECT_GT(checked_rtt, 10u);
  EXPECT_GT(checked_tp, 3u);
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

// Checks an IPFIX file against the JSON lines of the same records with two
// independent parsers: Python's json module for the JSON lines, tshark's
// IPFIX dissector (Wireshark "cflow") for the IPFIX file. tshark must decode
// every message without a malformed-packet or expert warning, and every
// value it shows must equal the JSON line of the same record (records of
// one observation domain in the same order in both files). Used by the
// block's test (test_export.cpp) and by the run's (tb/tests/sim).
// Needs tshark (callers skip without it) and /usr/bin/python3.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../sim/cli_util.h"
#include "analytics/analyzer.h"
#include "analytics/export.h"

namespace rocesim::analytics::test {

using Fields = std::map<std::string, std::string>;

// Python's json module flattens each line to key=value pairs (nested keys
// joined by '.', lists as comma-separated values, null as "null").
std::vector<Fields> read_jsonl(const std::string& path) {
  const clitest::Result r = clitest::sh(
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

// What the comparison covered: records, and directions with NAKs, an RTT, a throughput.
struct IpfixChecked {
  size_t records = 0, naks = 0, rtt = 0, throughput = 0;
};

// Compares every record of ipath (IPFIX) with jpath (JSON lines), with
// EXPECTs naming the domain and record.
inline IpfixChecked expect_ipfix_equals_jsonl(const std::string& jpath, const std::string& ipath) {
  IpfixChecked n;
  const std::vector<Fields> json = read_jsonl(jpath);
  const clitest::Result t = clitest::sh("tshark -n -r " + ipath + " -V");
  EXPECT_EQ(t.rc, 0) << t.err;
  if (t.rc != 0) return n;
  EXPECT_EQ(t.out.find("Malformed"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("Expert Info"), std::string::npos) << t.out;
  const std::vector<IpfixFlow> ipfix = read_tshark(t.out);
  n.records = json.size();
  EXPECT_EQ(ipfix.size(), json.size()) << t.out.substr(0, 6000);
  if (ipfix.size() != json.size()) return n;

  // Records of one domain keep their order in both files.
  std::map<uint32_t, std::vector<const Fields*>> jd;
  std::map<uint32_t, std::vector<const IpfixFlow*>> xd;
  for (const Fields& f : json) jd[uint32_t(std::stoul(f.at("domain")))].push_back(&f);
  for (const IpfixFlow& x : ipfix) xd[x.domain].push_back(&x);
  EXPECT_EQ(xd.size(), jd.size());
  const std::map<std::string, std::string> reason = {{"idle", "1"}, {"active", "2"}, {"end_detected", "3"},
                                                     {"forced", "4"}};
    for (const auto& [domain, js] : jd) {
    const auto& xs = xd[domain];
    EXPECT_EQ(xs.size(), js.size()) << "domain " << domain;
    if (xs.size() != js.size()) continue;
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
        n.naks += num(p + "naks") > 0;
        n.rtt += rtt != "null";
        n.throughput += tp != "null";
      }
    }
  }
  return n;
}

}  // namespace rocesim::analytics::test

// The collector (tb/collector) on records that real analyzers (one per
// switch of a leaf-spine) wrote as JSON lines for frames the test walks
// along paths it chooses: the joined loss, where the NAKs were seen, RTT and
// the rebuilt paths must be what the test constructed.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "../sim/cli_util.h"
#include "analytics/analyzer.h"
#include "analytics/export.h"
#include "collector/collector.h"
#include "frames.h"
#include "topology/builders.h"

namespace rocesim::collector {
namespace {

using namespace analytics;
using namespace analytics::test;
namespace pk = rocesim::packet;
namespace tp = rocesim::topology;

constexpr uint64_t kUs = 1'000'000;
constexpr uint64_t kHop = 1 * kUs;  // each hop of the walk takes 1 us

struct Fabric {
  tp::Topology topo;
  std::map<uint32_t, std::unique_ptr<Analyzer>> sw;  // by node index (the domain)
  uint64_t t = 0;
  std::FILE* file;
  JsonlWriter json;  // every switch's records into one file, as in a run

  explicit Fabric(const std::string& path) : file(std::fopen(path.c_str(), "w")), json(file) {
    tp::LeafSpineParams p;
    p.leaves = 2, p.spines = 2, p.hosts_per_leaf = 2;
    topo = tp::leaf_spine(p);
    for (uint32_t n : topo.switches) {
      Config c;
      c.domain_id = n;
      c.timestamp_resolution_ps = 1;
      c.scan_interval_ps = 1 * kUs;
      c.inactive_timeout_ps = 1000 * kUs;
      c.active_timeout_ps = 40 * kUs;  // several records per flow and switch
      sw[n] = std::make_unique<Analyzer>(c);
      sw[n]->add_sink(&json);
    }
  }
  void close() {
    for (auto& [n, a] : sw) a->flush(t);
    std::fclose(file);
  }
  uint32_t node(const char* name) const { return topo.find(name); }
  // The port of switch s whose link leads to node prev, from the link list.
  uint32_t port_towards(uint32_t s, uint32_t prev) const {
    for (const tp::LinkSpec& l : topo.links) {
      if (l.a.node == s && l.b.node == prev) return l.a.port;
      if (l.b.node == s && l.a.node == prev) return l.b.port;
    }
    ADD_FAILURE() << "no link " << s << " - " << prev;
    return 0;
  }
  // Walks p along path (host, switches..., host) from time t, one hop per
  // kHop; the switches after index `lost_after` (0: the first switch) do
  // not see it. Returns the time it reaches the last host.
  uint64_t walk(const pk::Packet& p, const std::vector<const char*>& path, int lost_after = 1 << 30) {
    for (size_t k = 1; k + 1 < path.size(); ++k) {
      t += kHop;
      if (int(k) - 1 > lost_after) continue;
      const uint32_t s = node(path[k]);
      sw.at(s)->on_frame(p, port_towards(s, node(path[k - 1])), t);
    }
    t += kHop;
    return t;
  }
};

Conn host_conn(uint32_t client_h, uint32_t server_h, uint32_t id) {
  Conn c;
  c.id = id;
  c.client_ip = tp::host_ip_of(client_h);
  c.server_ip = tp::host_ip_of(server_h);
  c.client_qp = 0x100 + id;
  c.server_qp = 0x200 + id;
  return c;
}

TEST(Collector, JoinsSwitchesRecordsIntoLossRttAndPaths) {
  const std::string dir = clitest::temp_dir(), path = dir + "/flow_records.jsonl";
  Fabric f(path);
  ASSERT_TRUE(f.file);
  // Flow A: h0 - h2 over spine1, flow B: h1 - h3 over spine0, each the same
  // path both ways (the article: paths must be symmetric outside M-LAG).
  // Flow C: h0 - h3 out over spine0 and back over spine1.
  const Conn a = host_conn(0, 2, 1), b = host_conn(1, 3, 2), c = host_conn(0, 3, 3);
  const std::vector<const char*> a_fwd = {"h0", "leaf0", "spine1", "leaf1", "h2"};
  const std::vector<const char*> a_rev = {"h2", "leaf1", "spine1", "leaf0", "h0"};
  const std::vector<const char*> b_fwd = {"h1", "leaf0", "spine0", "leaf1", "h3"};
  const std::vector<const char*> b_rev = {"h3", "leaf1", "spine0", "leaf0", "h1"};
  const std::vector<const char*> c_fwd = {"h0", "leaf0", "spine0", "leaf1", "h3"};
  const std::vector<const char*> c_rev = {"h3", "leaf1", "spine1", "leaf0", "h0"};
  for (const auto& [k, fwd, rev] : {std::tuple{a, a_fwd, a_rev}, std::tuple{b, b_fwd, b_rev}, std::tuple{c, c_fwd, c_rev}}) {
    f.walk(cm(k, pk::cm::kReq), fwd);
    f.walk(cm(k, pk::cm::kRep), rev);
    f.walk(cm(k, pk::cm::kRtu), fwd);
  }
  // Flow A: 30 client requests, each ACKed; NAKs after requests 5, 12 and 20,
  // the last one lost after the first switch it crosses (leaf1); and 30
  // server requests (SEND), ACKed by the client.
  uint64_t a_c2s_frames = 0, a_s2c_frames = 0;
  for (uint32_t i = 0; i < 30; ++i) {
    f.walk(data(a, kC2s, pk::op::kWriteOnly, i, true, 2048), a_fwd), ++a_c2s_frames;
    f.walk(ack(a, kC2s, i), a_rev), ++a_s2c_frames;
    if (i == 5 || i == 12 || i == 20) f.walk(ack(a, kC2s, i + 1, 0x60), a_rev, i == 20 ? 0 : 1 << 30), ++a_s2c_frames;
    f.walk(data(a, kS2c, pk::op::kSendOnly, i, true, 256), a_rev), ++a_s2c_frames;
    f.walk(ack(a, kS2c, i), a_fwd), ++a_c2s_frames;
  }
  for (uint32_t i = 0; i < 10; ++i) {
    f.walk(data(b, kC2s, pk::op::kWriteOnly, i, true, 512), b_fwd);
    f.walk(ack(b, kC2s, i), b_rev);
    f.walk(data(c, kC2s, pk::op::kWriteOnly, i, true, 512), c_fwd);
    f.walk(ack(c, kC2s, i), c_rev);
  }
  f.close();
  // Flow C: each spine saw half of its setup, so neither tracks it.
  EXPECT_EQ(f.sw.at(f.node("spine0"))->stats().rep_without_req, 0u);
  EXPECT_EQ(f.sw.at(f.node("spine1"))->stats().rep_without_req, 1u);  // C's REP
  EXPECT_EQ(f.sw.at(f.node("spine0"))->stats().rtu_without_rep, 1u);  // C's RTU
  EXPECT_EQ(f.sw.at(f.node("spine0"))->stats().untracked_packets, 10u);  // C's data
  EXPECT_EQ(f.sw.at(f.node("spine1"))->stats().untracked_packets, 10u);  // C's ACKs
  std::vector<FlowRecord> recs;
  std::ifstream in(path);
  ASSERT_EQ(read_records(in, path, recs), "");
  ASSERT_GT(recs.size(), 8u);  // active exports: more than one record per flow and switch

  const std::vector<FlowReport> flows = join(recs, &f.topo);
  ASSERT_EQ(flows.size(), 3u);
  std::map<uint32_t, const FlowReport*> by_qp;
  for (const FlowReport& r : flows) by_qp[r.client_qp] = &r;
  ASSERT_EQ(by_qp.size(), 3u);
  const FlowReport& ra = *by_qp[a.client_qp];
  const FlowReport& rb = *by_qp[b.client_qp];
  const FlowReport& rc = *by_qp[c.client_qp];
  auto names = [&](const std::vector<uint32_t>& p) {
    std::vector<std::string> v;
    for (uint32_t n : p) v.push_back(f.topo.nodes[n].name);
    return v;
  };
  auto expect_path = [&](const DirReport& d, const std::vector<const char*>& want) {
    EXPECT_EQ(names(d.path), std::vector<std::string>(want.begin(), want.end()));
    EXPECT_TRUE(d.path_complete);
  };
  EXPECT_EQ(ra.server_ip, a.server_ip);
  EXPECT_EQ(ra.switches, 3u);
  EXPECT_TRUE(ra.established);
  expect_path(ra.dir[kC2s], a_fwd);
  expect_path(ra.dir[kS2c], a_rev);
  expect_path(rb.dir[kC2s], b_fwd);
  expect_path(rb.dir[kS2c], b_rev);
  EXPECT_EQ(rb.switches, 3u);
  // C: the leaves only; the chain from h0 stops at leaf0 (leaf1's ingress faces a spine).
  EXPECT_EQ(rc.switches, 2u);
  EXPECT_EQ(names(rc.dir[kC2s].path), (std::vector<std::string>{"h0", "leaf0"}));
  EXPECT_FALSE(rc.dir[kC2s].path_complete);
  // Loss of A's client data: 3 NAKs, the last seen by leaf1 only.
  EXPECT_EQ(ra.dir[kC2s].naks, 3u);
  const std::vector<std::pair<uint32_t, uint64_t>> where = {
      {f.node("leaf1"), 3}, {f.node("spine1"), 2}, {f.node("leaf0"), 2}};
  EXPECT_EQ(ra.dir[kC2s].nak_switches, where);
  EXPECT_EQ(ra.dir[kS2c].naks, 0u);
  EXPECT_EQ(rb.dir[kC2s].naks, 0u);
  // Frames per direction: the first switch of each direction saw them all.
  EXPECT_EQ(ra.dir[kC2s].packets, a_c2s_frames);
  EXPECT_EQ(ra.dir[kS2c].packets, a_s2c_frames);
  // RTT at the first switch of each direction: walk() has the request there
  // at t0 + 1 hop and at the other host at t0 + 4; the ACK, sent then, is
  // back at that switch 3 hops later: 6 hops.
  EXPECT_TRUE(ra.dir[kC2s].rtt_valid);
  EXPECT_EQ(ra.dir[kC2s].rtt_switch, f.node("leaf0"));
  EXPECT_EQ(ra.dir[kC2s].rtt_avg_ns, 6 * kHop / 1000);
  EXPECT_EQ(ra.dir[kS2c].rtt_switch, f.node("leaf1"));
  EXPECT_EQ(ra.dir[kS2c].rtt_avg_ns, 6 * kHop / 1000);

  // The CSV: the header's columns and flow A's row.
  std::ostringstream csv;
  write_csv(csv, flows, &f.topo);
  std::istringstream lines(csv.str());
  std::string header, row, cell;
  std::getline(lines, header);
  std::vector<std::string> cols, cells;
  for (std::istringstream h(header); std::getline(h, cell, ',');) cols.push_back(cell);
  for (std::string l; std::getline(lines, l);)
    if (l.find("," + std::to_string(a.client_qp) + ",") != std::string::npos) row = l;
  for (std::istringstream r(row); std::getline(r, cell, ',');) cells.push_back(cell);
  if (!row.empty() && row.back() == ',') cells.push_back("");
  ASSERT_EQ(cells.size(), cols.size()) << header << "\n" << row;
  std::map<std::string, std::string> at;
  for (size_t i = 0; i < cols.size(); ++i) at[cols[i]] = cells[i];
  EXPECT_EQ(at["server_ip"], "10.0.0.3");  // h2
  EXPECT_EQ(at["client_ip"], "10.0.0.1");  // h0
  EXPECT_EQ(at["c2s_naks"], "3");
  EXPECT_EQ(at["c2s_nak_switches"], "leaf1:3;spine1:2;leaf0:2");
  EXPECT_EQ(at["c2s_rtt_avg_ns"], std::to_string(6 * kHop / 1000));
  EXPECT_EQ(at["c2s_rtt_switch"], "leaf0");
  EXPECT_EQ(at["c2s_path"], "h0>leaf0>spine1>leaf1>h2");
  EXPECT_EQ(at["s2c_path"], "h2>leaf1>spine1>leaf0>h0");
  EXPECT_EQ(at["s2c_nak_switches"], "");

  // Without leaf0's records flow B's client path cannot start: incomplete.
  std::vector<FlowRecord> partial;
  for (const FlowRecord& r : recs)
    if (r.domain_id != f.node("leaf0")) partial.push_back(r);
  const std::vector<FlowReport> p2 = join(partial, &f.topo);
  for (const FlowReport& r : p2)
    if (r.client_qp == b.client_qp) {
      EXPECT_FALSE(r.dir[kC2s].path_complete);
      EXPECT_EQ(names(r.dir[kC2s].path), std::vector<std::string>{"h1"});
    }
  std::system(("rm -rf " + dir).c_str());
}

TEST(Collector, BadLineIsReportedWithItsLineNumberAndKey) {
  FlowRecord r;
  r.server_ip = 0x0a000003;
  char buf[2048];
  const std::string good(buf, JsonlWriter::format(r, buf, sizeof buf));
  std::vector<FlowRecord> out;
  std::istringstream in(good + "\n\n" + good + "\n");
  EXPECT_EQ(read_records(in, "f.jsonl", out), "");
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].server_ip, 0x0a000003u);

  std::string no_qp = good;
  no_qp.replace(no_qp.find("\"client_qp\""), 11, "\"client_qx\"");
  std::istringstream in2(good + "\n" + no_qp + "\n");
  out.clear();
  EXPECT_EQ(read_records(in2, "f.jsonl", out), "f.jsonl:2: missing key \"client_qp\"");
  EXPECT_EQ(out.size(), 1u);

  std::istringstream in3("{\"domain\": 1,\n");
  out.clear();
  EXPECT_EQ(read_records(in3, "g.jsonl", out).rfind("g.jsonl:1: not JSON", 0), 0u);

  std::string bad_ip = good;
  bad_ip.replace(bad_ip.find("10.0.0.3"), 8, "10.0.0.300");
  std::istringstream in4(bad_ip);
  out.clear();
  EXPECT_EQ(read_records(in4, "h.jsonl", out), "h.jsonl:1: key \"server_ip\": not a dotted IPv4 address");
}

}  // namespace
}  // namespace rocesim::collector

// The rocesim command line as users and CI call it: outputs, determinism,
// exit codes and bad-input messages.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "cli_util.h"

using namespace clitest;

namespace {

std::string two_hosts_cfg() { return src_dir() + "/configs/scenarios/two_hosts.yaml"; }

// A minimal valid scenario with one line to vary; returns its path.
std::string write_cfg(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/scenario.yaml";
  write_file(path, body);
  return path;
}

const char* kValid =
    "name: t\n"
    "sim:\n"
    "  duration: 100us\n"
    "links:\n"
    "  rate: 100Gbps\n"
    "flows:\n"
    "  - src: h0\n"
    "    dst: h1\n"
    "    size: 8KiB\n";

uint64_t json_u64(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": ([0-9]+)");
  if (!std::regex_search(json, m, re)) return UINT64_MAX;
  return std::stoull(m[1]);
}

}  // namespace

TEST(Cli, HelpAndUsageExitCodes) {
  EXPECT_EQ(rocesim("--help").rc, 0);
  const Result r = rocesim("run --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--pcap NODE:PORT"), std::string::npos);
  EXPECT_EQ(rocesim("validate --help").rc, 0);
  EXPECT_EQ(rocesim("").rc, 2);
  EXPECT_EQ(rocesim("frobnicate x.yaml").rc, 2);
  EXPECT_EQ(rocesim("run " + two_hosts_cfg()).rc, 2) << "--out is required";
  EXPECT_EQ(rocesim("run " + two_hosts_cfg() + " --out /tmp/x --seed -1").rc, 2);
}

TEST(Cli, DefaultScenarioWritesOutputsAndConserves) {
  const std::string dir = temp_dir() + "/out";
  const Result r = rocesim("run " + two_hosts_cfg() + " --out " + dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(dir + "/summary.json"), std::string::npos) << "prints where the outputs are";
  const std::string s = slurp(dir + "/summary.json");
  EXPECT_EQ(json_u64(s, "schema_version"), 1u);
  EXPECT_EQ(json_u64(s, "seed"), 1u);
  const uint64_t sent = json_u64(s, "sent"), delivered = json_u64(s, "delivered"), dropped = json_u64(s, "dropped"),
                 in_flight = json_u64(s, "in_flight_at_end");
  // 16 x 64 KiB at MTU 1024 = 1024 packets; 64 x 4 KiB = 256 packets.
  EXPECT_EQ(sent, 1024u + 256u);
  EXPECT_EQ(sent, delivered + dropped + in_flight);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(json_u64(s, "link_hops"), sent);
  EXPECT_NE(s.find("\"sim_time_ns\": "), std::string::npos);
  EXPECT_NE(s.find("\"wall_time_s\": "), std::string::npos);
  EXPECT_GT(json_u64(s, "events"), 0u);
  EXPECT_TRUE(exists(dir + "/config.resolved.yaml"));
  const std::string flows = slurp(dir + "/flows.csv");
  EXPECT_EQ(flows.rfind("flow_id,src,dst,", 0), 0u);
  EXPECT_EQ(std::count(flows.begin(), flows.end(), '\n'), 3);
  EXPECT_FALSE(exists(dir + "/summary.json.partial"));
}

TEST(Cli, IsolatedLineRateFlowFinishesExactlyAtItsIdealTime) {
  // One 1 MiB message at line rate on an idle link: FCT must equal the sum of
  // wire times (less the last IFG) plus the cable, to the picosecond.
  const std::string dir = temp_dir();
  write_cfg(dir,
            "name: t\nlinks:\n  rate: 100Gbps\n  cable_m: 3\nhosts:\n  mtu: 4096\n  vlan: false\n"
            "flows:\n  - src: h0\n    dst: h1\n    size: 1MiB\n    start: 0us\n");
  const Result r = rocesim("run " + dir + "/scenario.yaml --out " + dir + "/out");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string flows = slurp(dir + "/out/flows.csv");
  // 256 packets of 4096 B: first WRITE_FIRST has RETH (16 B).
  // frame = 14 + 20 + 8 + 12 + 4096 + 4 + 4 = 4158 B; first +16 = 4174 B.
  const uint64_t wire = 255ull * (4158 + 20) + (4174 + 20);
  const uint64_t ideal_ps = (wire - 12) * 80 + 15000;
  char expect[64];
  std::snprintf(expect, sizeof expect, ",%llu.%03llu,%llu.%03llu,1.000000,",
                static_cast<unsigned long long>(ideal_ps / 1000), static_cast<unsigned long long>(ideal_ps % 1000),
                static_cast<unsigned long long>(ideal_ps / 1000), static_cast<unsigned long long>(ideal_ps % 1000));
  EXPECT_NE(flows.find(expect), std::string::npos) << flows << "\nexpected fct,ideal " << expect;
}

TEST(Cli, OddSizedMessagesArePaddedAndDeliveredExactly) {
  // 1001-byte messages: the last segment carries 3 pad bytes (BTH PadCnt),
  // which the receiver must not count as payload; ICRC and FCS still verify.
  const std::string dir = temp_dir();
  write_cfg(dir, "name: odd\nflows:\n  - {src: h0, dst: h1, size: 1001B, messages: 5}\n"
                 "  - {src: h1, dst: h0, size: 3075B, messages: 2}\n");
  const Result r = rocesim("run " + dir + "/scenario.yaml --out " + dir + "/out");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/out/summary.json");
  EXPECT_EQ(json_u64(s, "payload_bytes_delivered"), 5u * 1001 + 2u * 3075);
  EXPECT_EQ(json_u64(s, "completed"), 2u);
  EXPECT_EQ(json_u64(s, "dropped"), 0u);
}

TEST(Cli, SameSeedGivesIdenticalOutputs) {
  const std::string dir = temp_dir();
  const std::string a = dir + "/a", b = dir + "/b", c = dir + "/c";
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + a + " --pcap h1:0 --quiet").rc, 0);
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + b + " --pcap h1:0 --quiet").rc, 0);
  const std::string sa = slurp(a + "/summary.json"), sb = slurp(b + "/summary.json");
  ASSERT_FALSE(sa.empty());
  EXPECT_NE(sa, strip_wall(sa)) << "wall-clock fields exist and are stripped";
  EXPECT_EQ(strip_wall(sa), strip_wall(sb));
  EXPECT_EQ(slurp(a + "/flows.csv"), slurp(b + "/flows.csv"));
  EXPECT_EQ(slurp(a + "/config.resolved.yaml"), slurp(b + "/config.resolved.yaml"));
  EXPECT_EQ(slurp(a + "/pcap/h1-p0-rx.pcap"), slurp(b + "/pcap/h1-p0-rx.pcap"));
  // A lossy link makes the seed matter: different seeds, different drops
  // (each run into a fresh directory: --out refuses a used one).
  const std::string la = dir + "/la", lb = dir + "/lb";
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + la + " --set links.loss=0.05 --seed 3 --quiet").rc, 0);
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + lb + " --set links.loss=0.05 --seed 3 --quiet").rc, 0);
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + c + " --set links.loss=0.05 --seed 4 --quiet").rc, 0);
  EXPECT_EQ(strip_wall(slurp(la + "/summary.json")), strip_wall(slurp(lb + "/summary.json")));
  EXPECT_NE(strip_wall(slurp(la + "/summary.json")), strip_wall(slurp(c + "/summary.json")));
  EXPECT_GT(json_u64(slurp(la + "/summary.json"), "link_loss"), 0u);
}

TEST(Cli, ResolvedConfigReproducesTheRun) {
  const std::string dir = temp_dir();
  ASSERT_EQ(rocesim("run " + two_hosts_cfg() + " --out " + dir + "/a --set links.rate=400Gbps --seed 9 --quiet").rc, 0);
  const std::string resolved = slurp(dir + "/a/config.resolved.yaml");
  EXPECT_NE(resolved.find("rate: 400Gbps"), std::string::npos);
  EXPECT_NE(resolved.find("seed: 9"), std::string::npos);
  ASSERT_EQ(rocesim("run " + dir + "/a/config.resolved.yaml --out " + dir + "/b --quiet").rc, 0);
  EXPECT_EQ(slurp(dir + "/a/flows.csv"), slurp(dir + "/b/flows.csv"));
  auto without_source = [](std::string t) {
    const size_t at = t.find("# Generated from ");
    return at == std::string::npos ? t : t.erase(at, t.find('\n', at) - at);
  };
  EXPECT_EQ(without_source(slurp(dir + "/a/config.resolved.yaml")), without_source(slurp(dir + "/b/config.resolved.yaml")))
      << "the resolved config is a fixed point";
}

// Each bad input: exit 2, one clear message with FILE:LINE:COL (or the --set
// argument) and the key path, and no output directory.
struct BadCase {
  const char* name;
  std::string yaml;       // scenario text ("" = use kValid)
  std::string extra;      // extra CLI arguments
  std::string expect;     // substring of stderr; "@" is replaced by the config path
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithLocationAndWritesNothing) {
  const BadCase& c = GetParam();
  const std::string dir = temp_dir();
  const std::string cfg = write_cfg(dir, c.yaml.empty() ? kValid : c.yaml);
  const std::string out = dir + "/out";
  const Result r = rocesim("run " + cfg + " --out " + out + " " + c.extra);
  EXPECT_EQ(r.rc, 2) << r.err;
  std::string expect = c.expect;
  if (const size_t at = expect.find('@'); at != std::string::npos) expect.replace(at, 1, cfg);
  EXPECT_NE(r.err.find(expect), std::string::npos) << "stderr: " << r.err << "\nexpected: " << expect;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  EXPECT_FALSE(exists(out)) << "no output directory on bad input";
  // validate reports the same error.
  if (c.extra.find("--pcap") == std::string::npos) {
    const Result v = rocesim("validate " + cfg + " " + c.extra);
    EXPECT_EQ(v.rc, 2);
    EXPECT_NE(v.err.find(expect), std::string::npos) << v.err;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInput,
    ::testing::Values(
        BadCase{"unknown_key", "name: t\nlinks:\n  rate: 100Gbps\n  rat: 25Gbps\n", "", "@:4:3: key 'links.rat': unknown key"},
        BadCase{"wrong_type", "name: t\nsim:\n  duration: [1, 2]\n", "", "@:3:13: key 'sim.duration'"},
        BadCase{"bad_unit", "name: t\nlinks:\n  rate: 100Gbs\n", "", "@:3:9: key 'links.rate'"},
        BadCase{"bad_size_unit", std::string(kValid) + "    messages: 2\n", "--set flows[0].size=8kb",
                "--set flows[0].size=8kb: key 'flows[0].size'"},
        BadCase{"out_of_range", "name: t\nhosts:\n  pcp: 9\n", "", "@:3:8: key 'hosts.pcp'"},
        BadCase{"bad_mtu", "name: t\nhosts:\n  mtu: 1500\n", "", "@:3:8: key 'hosts.mtu'"},
        BadCase{"unknown_host", "name: t\nflows:\n  - src: h0\n    dst: h7\n    size: 1KiB\n", "",
                "@:4:10: key 'flows[0].dst'"},
        BadCase{"set_bad_unit", "", "--set links.rate=fast", "--set links.rate=fast: key 'links.rate'"},
        BadCase{"set_unknown_key", "", "--set links.speed=25Gbps", "--set links.speed=25Gbps: key 'links.speed': unknown key"},
        BadCase{"set_syntax", "", "--set links.rate", "--set links.rate"},
        BadCase{"yaml_syntax", "name: t\nlinks: [\n", "", "@:3:1"},
        BadCase{"pcap_unknown_node", "", "--pcap h9:0", "--pcap h9:0: no node 'h9'"},
        BadCase{"pcap_syntax", "", "--pcap h0", "--pcap h0: expected NODE:PORT"},
        BadCase{"topology_kind", "name: t\ntopology: {kind: torus}\n", "", "@:2:18: key 'topology.kind'"},
        BadCase{"topology_file", "name: t\ntopology: {file: nope.yaml}\n", "",
                "@:2:18: key 'topology.file': 'nope.yaml': cannot open file"},
        BadCase{"topology_key_of_other_kind", "name: t\ntopology: {kind: single_switch, leaves: 3}\n", "",
                "@:2:33: key 'topology.leaves': unknown key"},
        BadCase{"fat_tree_odd_k", "name: t\ntopology: {kind: fat_tree, k: 3}\n", "", "@:2:31: key 'topology.k'"},
        BadCase{"buffer_too_small",
                "name: t\ntopology: {kind: single_switch, hosts: 64}\nswitch:\n  mmu: {shared_headroom: 0B}\n", "",
                "@:4:3: key 'switch': invalid buffer configuration for a 64-port switch: reserved cells"},
        BadCase{"pool_without_cells", "name: t\ntopology: {kind: single_switch}\nswitch:\n  mmu:\n    pools: {ingress_lossy: 0B}\n",
                "", "@:4:3: key 'switch': profile 'pg_lossy' maps its PGs or queues to pool 'ingress_lossy', which has no cells"},
        BadCase{"pg_on_egress_pool",
                "name: t\ntopology: {kind: single_switch}\nswitch:\n  mmu:\n    pg_lossy: {pool: egress_lossy}\n", "",
                "key 'switch': invalid buffer configuration for a 16-port switch: "},
        BadCase{"storm_unknown_host", "name: t\npfc:\n  storm: {host: h9}\n", "",
                "@:3:17: key 'pfc.storm.host': no host 'h9': the topology has h0..h1"},
        BadCase{"dynamic_th_range", "name: t\nswitch:\n  mmu:\n    queue_lossy: {dynamic_th: 8}\n", "",
                "@:4:31: key 'switch.mmu.queue_lossy.dynamic_th'"},
        BadCase{"pcap_switch_port", "name: t\ntopology: {kind: single_switch, hosts: 4}\n", "--pcap sw0:4",
                "--pcap sw0:4: node 'sw0' has 4 ports (0..3)"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Cli, MissingConfigFileIsBadInput) {
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + dir + "/nope.yaml --out " + dir + "/out");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(dir + "/nope.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir + "/out"));
}

TEST(Cli, ValidatePrintsTheEffectiveConfig) {
  const Result r = rocesim("validate " + two_hosts_cfg() + " --set hosts.mtu=4096");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("mtu: 4096"), std::string::npos);
  EXPECT_NE(r.out.find("rate: 100Gbps"), std::string::npos);
  // A flow faster than its link is refused with the bound in the link's units.
  const Result slow = rocesim("validate " + two_hosts_cfg() + " --set links.rate=25Gbps");
  EXPECT_EQ(slow.rc, 2);
  EXPECT_NE(slow.err.find("key 'flows[0].rate'"), std::string::npos) << slow.err;
  EXPECT_NE(slow.err.find("25Gbps"), std::string::npos) << slow.err;
}

TEST(Fabric, LeafSpineDefaultPermutationAtHalfLoadHasNoDrops) {
  // The seed's fabric: 16 leaves x 16 hosts at 25 Gbps, 4 spines at 100 Gbps;
  // every host writes 640 KiB to another at 12.5 Gbps over lossy queues.
  const std::string dir = temp_dir();
  const Result r = rocesim("run " + src_dir() + "/configs/scenarios/leafspine_permutation.yaml --out " + dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string s = slurp(dir + "/summary.json");
  EXPECT_NE(s.find("\"topology\": {\"kind\": \"leaf_spine\", \"hosts\": 256, \"switches\": 20, \"links\": 320}"),
            std::string::npos);
  EXPECT_EQ(json_u64(s, "total"), 256u);
  EXPECT_EQ(json_u64(s, "completed"), 256u);
  EXPECT_EQ(json_u64(s, "dropped"), 0u);
  EXPECT_EQ(json_u64(s, "in_flight_at_end"), 0u);
  EXPECT_NE(s.find("\"conservation_ok\": true"), std::string::npos);
  // 256 flows x 640 packets (10 x 64 KiB at MTU 1024).
  EXPECT_EQ(json_u64(s, "sent"), 256u * 640);
  // Link hops, exactly: every packet crosses one cable per hop of its path,
  // host -> leaf -> host (2) within a leaf, host -> leaf -> spine -> leaf ->
  // host (4) across leaves (h<i> sits on leaf i / 16). Open-loop hosts send
  // no ACKs, CNPs or CM frames, lossy queues send no pause frames (checked),
  // and no packet is dropped, so data packets are the only frames on the wire.
  EXPECT_NE(s.find("\"pfc\": {\"pause_frames_tx\": 0,"), std::string::npos) << "no pause frame anywhere";
  std::istringstream fl(slurp(dir + "/flows.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(fl, line));
  ASSERT_EQ(line.rfind("flow_id,src,dst,", 0), 0u);
  uint64_t hops = 0, cross = 0, rows = 0;
  while (std::getline(fl, line)) {
    unsigned id = 0, src = 0, dst = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%u,h%u,h%u,", &id, &src, &dst), 3) << line;
    const bool across = src / 16 != dst / 16;
    cross += across;
    hops += 640ull * (across ? 4 : 2);
    ++rows;
  }
  EXPECT_EQ(rows, 256u);
  EXPECT_GT(cross, 0u) << "the permutation crosses leaves";
  EXPECT_EQ(json_u64(s, "link_hops"), hops) << cross << " cross-leaf flows";
  const std::string q = slurp(dir + "/queues.csv");
  EXPECT_EQ(q.rfind("time_ns,node,port,queue,depth_packets,", 0), 0u);
  EXPECT_NE(q.find(",spine"), std::string::npos) << "spine queues are sampled";
}

TEST(Fabric, SwitchPortCaptureDecodesAndTimesAreConsistent) {
  const std::string dir = temp_dir();
  write_cfg(dir, "name: cap\ntopology: {kind: single_switch, hosts: 2, host_rate: 100Gbps, cable_m: 2}\n"
                 "flows:\n  - {src: h0, dst: h1, size: 8KiB}\n");
  const Result r = rocesim("run " + dir + "/scenario.yaml --out " + dir + "/out --pcap sw0:1 --pcap h1:0");
  ASSERT_EQ(r.rc, 0) << r.err;
  // What sw0 port 1 sends is what h1 receives, 10 ns (2 m) later, frame for frame.
  const Result tx = sh("tshark -n -r " + dir + "/out/pcap/sw0-p1-tx.pcap -T fields -e frame.time_epoch -e infiniband.bth.psn");
  const Result rx = sh("tshark -n -r " + dir + "/out/pcap/h1-p0-rx.pcap -T fields -e frame.time_epoch -e infiniband.bth.psn");
  ASSERT_EQ(tx.rc, 0);
  ASSERT_EQ(rx.rc, 0);
  std::istringstream a(tx.out), b(rx.out);
  std::string la, lb;
  int n = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    double ta = 0, tb = 0;
    long pa = 0, pb = 0;
    ASSERT_EQ(std::sscanf(la.c_str(), "%lf %ld", &ta, &pa), 2) << la;
    ASSERT_EQ(std::sscanf(lb.c_str(), "%lf %ld", &tb, &pb), 2) << lb;
    EXPECT_EQ(pa, pb);
    EXPECT_NEAR((tb - ta) * 1e9, 10.0, 0.5) << "frame " << n;
    ++n;
  }
  EXPECT_EQ(n, 8) << "8 KiB at MTU 1024";
}

// Every scenario shipped in configs/scenarios runs to completion, conserves
// packets, and validates; an example that rots fails here.
TEST(Configs, EveryShippedScenarioRuns) {
  const Result ls = sh("ls " + src_dir() + "/configs/scenarios/*.yaml");
  ASSERT_EQ(ls.rc, 0);
  std::istringstream in(ls.out);
  std::string path;
  int n = 0;
  while (std::getline(in, path)) {
    ++n;
    EXPECT_EQ(rocesim("validate " + path + " --quiet").rc, 0) << path;
    const std::string dir = temp_dir();
    const Result r = rocesim("run " + path + " --out " + dir + " --quiet");
    EXPECT_EQ(r.rc, 0) << path << ": " << r.err;
    EXPECT_NE(slurp(dir + "/summary.json").find("\"conservation_ok\": true"), std::string::npos) << path;
  }
  EXPECT_GE(n, 3);
}

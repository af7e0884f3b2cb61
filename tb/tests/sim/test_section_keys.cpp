// Key tables of `switch:`, `flows[]`, `topology:` and the top level (issue 10
// item 4): every key read from the YAML as written, written back into the
// resolved config, and read again to the same values (a fixed point); keys of
// nested maps and of the other form of an entry refused at their own key.
// Expected values are the literals of the YAML in each test, or derived from
// them by the rule docs/config.md states (noted where used).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "cli_util.h"
#include "core/config.h"
#include "sim/scenario.h"

using namespace rocesim;
using namespace clitest;

namespace {

sim::Scenario load(const std::string& text, const std::string& name = "k.yaml") {
  return sim::read_scenario(*core::Config::load_string(text, name));
}

// The resolved text without its header comments (which name the source file).
std::string body(const std::string& resolved) { return resolved.substr(resolved.find("\nname:") + 1); }

// Loads `text`, expects a ConfigError at `key` whose message contains `what`.
void expect_error(const std::string& text, const std::string& key, const std::string& what) {
  try {
    load(text);
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.key_path(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("k.yaml:"), std::string::npos) << e.what();
  }
}

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

// Every `switch:` key away from its default (docs/config.md lists the defaults).
const char* kSwitch = R"(topology: {kind: single_switch, hosts: 4, host_rate: 100Gbps}
switch:
  clock_period: 1250ps
  pipeline: {parser: 1, lookup: 2, mmu: 3, egress: 5}
  cut_through: true
  buffer: {size: 8MiB, cell: 512B, write_cells_per_cycle: 8, read_cells_per_cycle: 12}
  mmu:
    pools: {ingress_lossless: 3MiB, ingress_lossy: 2MiB, egress_lossless: 6MiB, egress_lossy: 1MiB}
    shared_headroom: 0B
    lossless_pgs: [3]
    pg_lossless: {reserved: 2KiB, dynamic_th: 1, headroom: 100KB}
    pg_lossy: {dynamic_th: -2}
    queue_lossless: {reserved: 1KiB, dynamic_th: 5}
    queue_lossy: {pool: egress_lossy, static_th: 512KiB}
  qos:
    trust: pcp
    dscp_to_tc: {10: 2, 26: 3}
    pcp_to_tc: [0, 1, 2, 3, 4, 5, 7, 6]
    tc_to_queue: [0, 0, 1, 3, 4, 5, 6, 7]
    tc_to_pg: [0, 1, 2, 3, 3, 5, 6, 7]
  ecmp:
    function: crc32_lo
    fields: [dst_ip, sport, dest_qp, in_port]
    seed: 77
    symmetric: true
    selection: table
    table_bits: 12
    hash_cycles: 3
    tiers: {sw: {function: xor16, table_bits: 4}}
    switches: {sw0: {seed: 5}}
  scheduler:
    quantum: 2KiB
    queues: {3: {weight: 4, shaper: {rate: 40Gbps, burst: 32KiB}}, 6: {mode: dwrr, weight: 2}}
    shaper: {rate: 90Gbps, burst: 64KiB}
  ecn:
    mode: threshold
    point: dequeue
    unit: cells
    k: 100
    lossless_only: false
    queues: {3: {mode: wred, kmin: 50, kmax: 300, pmax: 0.5}, 1: {unit: bytes, k: 64KiB}}
)";

void expect_switch_as_written(const sim::SwitchSpec& s) {
  EXPECT_EQ(s.clock_period_ps, 1250u);
  EXPECT_EQ(s.cycles.parser, 1u);
  EXPECT_EQ(s.cycles.lookup, 2u);
  EXPECT_EQ(s.cycles.mmu, 3u);
  EXPECT_EQ(s.cycles.egress, 5u);
  EXPECT_TRUE(s.cut_through);
  EXPECT_EQ(s.buffer_bytes, 8 * MiB);
  EXPECT_EQ(s.cell_bytes, 512u);
  EXPECT_EQ(s.write_cells_per_cycle, 8u);
  EXPECT_EQ(s.read_cells_per_cycle, 12u);
  EXPECT_EQ(s.ingress_lossless_pool, 3 * MiB);
  EXPECT_EQ(s.ingress_lossy_pool, 2 * MiB);
  EXPECT_EQ(s.egress_lossless_pool, 6 * MiB);
  EXPECT_EQ(s.egress_lossy_pool, 1 * MiB);
  EXPECT_EQ(s.shared_headroom_bytes, 0u);
  EXPECT_EQ(s.lossless_pgs, std::vector<uint32_t>{3});
  EXPECT_EQ(s.pg_lossless.reserved_bytes, 2 * KiB);
  EXPECT_TRUE(s.pg_lossless.dynamic);
  EXPECT_EQ(s.pg_lossless.dynamic_th, 1);
  EXPECT_EQ(s.pg_lossless.headroom_bytes, 100000u);
  EXPECT_EQ(s.pg_lossy.dynamic_th, -2);
  EXPECT_EQ(s.queue_lossless.reserved_bytes, 1 * KiB);
  EXPECT_EQ(s.queue_lossless.dynamic_th, 5);
  EXPECT_EQ(s.queue_lossy.pool, "egress_lossy");
  EXPECT_FALSE(s.queue_lossy.dynamic);
  EXPECT_EQ(s.queue_lossy.static_bytes, 512 * KiB);
  EXPECT_FALSE(s.qos.trust_dscp);
  // A given dscp_to_tc replaces the default map: 24 and 48 are back to TC 0.
  for (int d = 0; d < 64; ++d) EXPECT_EQ(s.qos.dscp_to_tc[d], d == 10 ? 2 : d == 26 ? 3 : 0) << "DSCP " << d;
  const std::array<uint8_t, 8> pcp{0, 1, 2, 3, 4, 5, 7, 6}, tq{0, 0, 1, 3, 4, 5, 6, 7}, tpg{0, 1, 2, 3, 3, 5, 6, 7};
  EXPECT_EQ(s.qos.pcp_to_tc, pcp);
  EXPECT_EQ(s.qos.tc_to_queue, tq);
  EXPECT_EQ(s.qos.tc_to_pg, tpg);
  EXPECT_EQ(s.ecmp.c.function, ecmp::Function::crc32_lo);
  EXPECT_EQ(s.ecmp.c.fields, ecmp::field::dst_ip | ecmp::field::sport | ecmp::field::dest_qp | ecmp::field::in_port);
  EXPECT_EQ(s.ecmp.c.seed, 77u);
  EXPECT_TRUE(s.ecmp.c.symmetric);
  EXPECT_EQ(s.ecmp.c.selection, ecmp::Selection::table);
  EXPECT_EQ(s.ecmp.c.table_bits, 12u);
  EXPECT_EQ(s.ecmp.c.hash_cycles, 3u);
  // sw0 (role sw): the section, then the tier's two keys, then its own seed.
  topology::Node sw0;
  sw0.name = "sw0";
  sw0.role = "sw";
  sw0.kind = topology::Node::sw;
  const ecmp::Config c = sim::switch_ecmp(s.ecmp, sw0, 1);
  EXPECT_EQ(c.function, ecmp::Function::xor16);
  EXPECT_EQ(c.table_bits, 4u);
  EXPECT_EQ(c.seed, 5u);
  EXPECT_EQ(c.fields, s.ecmp.c.fields);
  EXPECT_TRUE(c.symmetric);
  EXPECT_EQ(c.selection, ecmp::Selection::table);
  EXPECT_EQ(c.hash_cycles, 3u);
  // Another switch of the tier: the tier's keys and the section's seed.
  topology::Node sw9 = sw0;
  sw9.name = "sw9";
  const ecmp::Config c9 = sim::switch_ecmp(s.ecmp, sw9, 1);
  EXPECT_EQ(c9.function, ecmp::Function::xor16);
  EXPECT_EQ(c9.seed, 77u);
  EXPECT_EQ(s.sched_quantum_bytes, 2 * KiB);
  for (int q = 0; q < 8; ++q) {
    // Not given: 6 and 7 strict, the others DWRR weight 1; 6 is given as dwrr 2.
    const sim::SwitchSpec::QueueSched& qs = s.sched_queues[q];
    EXPECT_EQ(qs.strict, q == 7) << q;
    EXPECT_EQ(qs.weight, q == 3 ? 4u : q == 6 ? 2u : 1u) << q;
    EXPECT_EQ(qs.shaper.rate_bps, q == 3 ? 40000000000ull : 0u) << q;
    if (q == 3) {
      EXPECT_EQ(qs.shaper.burst_bytes, 32 * KiB);
    }
  }
  EXPECT_EQ(s.port_shaper.rate_bps, 90000000000ull);
  EXPECT_EQ(s.port_shaper.burst_bytes, 64 * KiB);
  using M = ecn::MarkerConfig;
  EXPECT_EQ(s.ecn.mode, M::Mode::threshold);
  EXPECT_EQ(s.ecn.point, M::Point::dequeue);
  EXPECT_EQ(s.ecn.unit, M::Unit::cells);
  EXPECT_EQ(s.ecn.k, 100u);
  // Not given in cells: the byte defaults (docs: kmin 100 KB) rounded up to cells.
  EXPECT_EQ(s.ecn.kmin, (100000u + 511) / 512);
  EXPECT_FALSE(s.ecn_lossless_only);
  for (int q = 0; q < 8; ++q) EXPECT_EQ(s.ecn_override[q], q == 1 || q == 3) << q;
  // Queue 3 inherits the section (cells, k 100) and sets WRED in cells.
  EXPECT_EQ(s.ecn_queue[3].mode, M::Mode::wred);
  EXPECT_EQ(s.ecn_queue[3].unit, M::Unit::cells);
  EXPECT_EQ(s.ecn_queue[3].k, 100u);
  EXPECT_EQ(s.ecn_queue[3].kmin, 50u);
  EXPECT_EQ(s.ecn_queue[3].kmax, 300u);
  EXPECT_DOUBLE_EQ(s.ecn_queue[3].pmax, 0.5);
  // Queue 1 goes back to bytes: the inherited cells become bytes (x 512),
  // then its own k.
  EXPECT_EQ(s.ecn_queue[1].unit, M::Unit::bytes);
  EXPECT_EQ(s.ecn_queue[1].mode, M::Mode::threshold);
  EXPECT_EQ(s.ecn_queue[1].k, 64 * KiB);
  EXPECT_EQ(s.ecn_queue[1].kmin, (100000u + 511) / 512 * 512);
}

}  // namespace

TEST(SwitchKeys, EveryKeyReadsAsWrittenAndBackFromTheResolvedConfig) {
  const sim::Scenario a = load(kSwitch);
  {
    SCOPED_TRACE("as written");
    expect_switch_as_written(a.sw);
  }
  const std::string text = sim::emit_resolved(a);
  sim::Scenario b;
  try {
    b = load(text, "resolved.yaml");
  } catch (const core::ConfigError& e) {
    FAIL() << e.what() << "\n" << text;
  }
  {
    SCOPED_TRACE("from the resolved config");
    expect_switch_as_written(b.sw);
  }
  EXPECT_EQ(body(sim::emit_resolved(b)), body(text));
}

TEST(SwitchKeys, DefaultsReadBackTheSame) {
  const sim::Scenario a = load("topology: {kind: single_switch, hosts: 2}\n");
  const std::string text = sim::emit_resolved(a);
  const sim::Scenario b = load(text, "resolved.yaml");
  EXPECT_EQ(body(sim::emit_resolved(b)), body(text));
  // The defaults docs/config.md states, through the resolved text.
  EXPECT_EQ(b.sw.buffer_bytes, 16 * MiB);
  EXPECT_EQ(b.sw.cell_bytes, 256u);
  EXPECT_EQ(b.sw.lossless_pgs, (std::vector<uint32_t>{3, 4}));
  EXPECT_TRUE(b.sw.sched_queues[6].strict && b.sw.sched_queues[7].strict && !b.sw.sched_queues[5].strict);
  EXPECT_EQ(b.sw.qos.dscp_to_tc[26], 3);
  EXPECT_EQ(b.sw.qos.dscp_to_tc[48], 6);
  EXPECT_EQ(b.sw.port_shaper.rate_bps, 0u);
}

TEST(SwitchKeys, NestedKeysAreCheckedAtTheirOwnPath) {
  const std::string t = "topology: {kind: single_switch, hosts: 2}\nswitch:\n";
  expect_error(t + "  buffer: {cells: 512B}\n", "switch.buffer.cells", "did you mean 'cell'");
  expect_error(t + "  mmu: {pg_lossy: {dynamic_th: 1, static_th: 1MiB}}\n", "switch.mmu.pg_lossy.static_th",
               "either dynamic_th or static_th");
  expect_error(t + "  mmu: {pg_lossy: {headroom: 1KiB}}\n", "switch.mmu.pg_lossy.headroom", "unknown key");
  expect_error(t + "  mmu: {pg_lossless: {dynamic_th: 8}}\n", "switch.mmu.pg_lossless.dynamic_th", "at most 7");
  expect_error(t + "  buffer: {cell: 1KiB, size: 512B}\n", "switch.buffer.size", "at least 1KiB");
  expect_error(t + "  scheduler: {queues: {8: {weight: 2}}}\n", "switch.scheduler.queues.8", "queue keys are 0..7");
  expect_error(t + "  scheduler: {queues: {2: {shaper: {rate: 1Gbps, depth: 1KiB}}}}\n",
               "switch.scheduler.queues.2.shaper.depth", "unknown key");
  expect_error(t + "  ecn: {queues: {3: {kmn: 5}}}\n", "switch.ecn.queues.3.kmn", "unknown key");
  expect_error(t + "  qos: {tc_to_queue: [0, 1]}\n", "switch.qos.tc_to_queue", "list of 8");
  expect_error(t + "  qos: {dscp_to_tc: {64: 1}}\n", "switch.qos.dscp_to_tc.64", "0..63");
  expect_error(t + "  ecmp: {function: crc8}\n", "switch.ecmp.function", "crc16_arc");
  expect_error(t + "  ecmp: {fields: []}\n", "switch.ecmp.fields", "at least one field");
  expect_error(t + "  ecmp: {fields: [src_ip, vlan]}\n", "switch.ecmp.fields[1]", "unknown field 'vlan'");
  expect_error(t + "  ecmp: {table_bits: 17}\n", "switch.ecmp.table_bits", "at most 16");
  expect_error(t + "  ecmp: {tiers: {spines: {seed: 1}}}\n", "switch.ecmp.tiers.spines", "unknown tier");
  expect_error(t + "  ecmp: {tiers: {spine: {seed: 1}}}\n", "switch.ecmp.tiers.spine", "no switch of this topology");
  expect_error(t + "  ecmp: {switches: {sw1: {seed: 1}}}\n", "switch.ecmp.switches.sw1", "no switch named 'sw1'");
  expect_error(t + "  ecmp: {switches: {h0: {seed: 1}}}\n", "switch.ecmp.switches.h0", "no switch named 'h0'");
  expect_error(t + "  ecmp: {switches: {sw0: {sed: 1}}}\n", "switch.ecmp.switches.sw0.sed", "did you mean 'seed'");
  expect_error(t + "  ecmp: {seed: 3}\n  hash_seed: 4\n", "switch.hash_seed", "deprecated alias of switch.ecmp.seed");
}

TEST(SwitchKeys, HashSeedIsAnAliasOfEcmpSeed) {
  const std::string t = "topology: {kind: single_switch, hosts: 2}\nswitch:\n";
  EXPECT_EQ(load(t + "  hash_seed: 9\n").sw.ecmp.c.seed, 9u);
  EXPECT_EQ(load(t + "  hash_seed: 9\n  ecmp: {seed: 9}\n").sw.ecmp.c.seed, 9u);
  // Never written: the resolved config carries ecmp.seed only.
  const std::string text = sim::emit_resolved(load(t + "  hash_seed: 9\n"));
  EXPECT_EQ(text.find("hash_seed"), std::string::npos);
  EXPECT_NE(text.find("    seed: 9\n"), std::string::npos) << text;
}

// flows[]: a pattern entry and a single flow with every key given.
TEST(FlowKeys, PatternAndSingleFlowReadBackTheSame) {
  const std::string text =
      "topology: {kind: single_switch, hosts: 4, host_rate: 100Gbps}\n"
      "hosts: {pcp: 5, dscp: 12}\n"
      "flows:\n"
      "  - {pattern: permutation, load: 0.35, size: 1MiB, messages: 3, start: 2us}\n"
      "  - {src: h1, dst: h2, size: 4KiB, messages: 7, rate: 10Gbps, pcp: 4, dscp: 10, start: 5ns, op: send}\n"
      "  - {src: h3, dst: h0, size: 100B}\n";
  const sim::Scenario a = load(text);
  const std::string resolved = sim::emit_resolved(a);
  const sim::Scenario b = load(resolved, "resolved.yaml");
  EXPECT_EQ(body(sim::emit_resolved(b)), body(resolved));
  for (const sim::Scenario* s : {&a, &b}) {
    SCOPED_TRACE(s == &a ? "as written" : "from the resolved config");
    ASSERT_EQ(s->flows.size(), 4u + 2u);
    // The permutation: every host sends once and receives once, never to itself,
    // at 0.35 x 100 Gbps, with the hosts' pcp and dscp.
    std::set<uint32_t> srcs, dsts;
    for (size_t i = 0; i < 4; ++i) {
      const sim::FlowSpec& f = s->flows[i];
      EXPECT_NE(f.src_index, f.dst_index);
      srcs.insert(f.src_index);
      dsts.insert(f.dst_index);
      EXPECT_EQ(f.rate_bps, 35000000000ull);
      EXPECT_EQ(f.message_bytes, 1 * MiB);
      EXPECT_EQ(f.messages, 3u);
      EXPECT_EQ(f.start_ps, 2000000u);
      EXPECT_EQ(f.pcp, 5u);
      EXPECT_EQ(f.dscp, 12u);
    }
    EXPECT_EQ(srcs.size(), 4u);
    EXPECT_EQ(dsts.size(), 4u);
    const sim::FlowSpec& g = s->flows[4];
    EXPECT_EQ(g.src_index, 1u);
    EXPECT_EQ(g.dst_index, 2u);
    EXPECT_EQ(g.message_bytes, 4 * KiB);
    EXPECT_EQ(g.messages, 7u);
    EXPECT_EQ(g.rate_bps, 10000000000ull);
    EXPECT_EQ(g.pcp, 4u);
    EXPECT_EQ(g.dscp, 10u);
    EXPECT_EQ(g.start_ps, 5000u);
    EXPECT_TRUE(g.send);
    // Only required keys: the line rate, the hosts' pcp/dscp, one WRITE at 0.
    const sim::FlowSpec& h = s->flows[5];
    EXPECT_EQ(h.src_index, 3u);
    EXPECT_EQ(h.dst_index, 0u);
    EXPECT_EQ(h.message_bytes, 100u);
    EXPECT_EQ(h.messages, 1u);
    EXPECT_EQ(h.rate_bps, 100000000000ull);
    EXPECT_EQ(h.pcp, 5u);
    EXPECT_EQ(h.dscp, 12u);
    EXPECT_EQ(h.start_ps, 0u);
    EXPECT_FALSE(h.send);
  }
  // The same permutation both times: it is drawn from the seed, not the text.
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.flows[i].dst_index, b.flows[i].dst_index);
}

TEST(FlowKeys, KeysOfTheOtherFormAreRefused) {
  const std::string t = "topology: {kind: single_switch, hosts: 4}\nflows:\n";
  expect_error(t + "  - {pattern: permutation, src: h0, size: 1KiB}\n", "flows[0].src", "unknown key");
  expect_error(t + "  - {pattern: permutation, size: 1KiB, pcp: 2}\n", "flows[0].pcp", "unknown key");
  expect_error(t + "  - {src: h0, dst: h1, size: 1KiB, load: 0.5}\n", "flows[0].load", "unknown key");
  expect_error(t + "  - {src: h0, dst: h0, size: 1KiB}\n", "flows[0].dst", "must differ");
  expect_error(t + "  - {src: h0, dst: h1}\n", "flows[0].size", "missing required key");
  expect_error(t + "  - {src: h0, dst: h9, size: 1KiB}\n", "flows[0].dst", "h0..h3");
  // The range message quotes the value as written and its bound in accepted units.
  expect_error(t + "  - {src: h0, dst: h1, size: 2TiB}\n", "flows[0].size", "1TiB");
  expect_error(t + "  - {src: h0, dst: h1, size: 2TiB}\n", "flows[0].size", "2TiB");
  expect_error(t + "  - {pattern: ring, size: 1KiB}\n", "flows[0].pattern", "permutation");
}

// topology.file: the parameters come from the file, inline keys override
// them, and the resolved config spells them out with no `file` key, so it
// reads the same topology from anywhere.
TEST(TopologyKeys, FileParametersAreSpelledOut) {
  const std::string dir = temp_dir();
  std::system(("mkdir -p " + dir + "/in").c_str());
  write_file(dir + "/in/t.yaml", "kind: leaf_spine\nleaves: 3\nspines: 2\nhosts_per_leaf: 5\n");
  const sim::Scenario a = load("topology: {file: t.yaml, hosts_per_leaf: 2}\n", dir + "/in/s.yaml");
  EXPECT_EQ(a.topology.kind, "leaf_spine");
  EXPECT_EQ(a.num_hosts(), 3u * 2u);  // leaves x the inline hosts_per_leaf
  const std::string text = sim::emit_resolved(a);
  const std::string topo = text.substr(text.find("\ntopology:"), text.find("\nlinks:") - text.find("\ntopology:"));
  EXPECT_EQ(topo.find("file:"), std::string::npos) << topo;
  EXPECT_NE(topo.find("kind: leaf_spine"), std::string::npos) << topo;
  const sim::Scenario b = load(text, "/nonexistent/elsewhere/config.resolved.yaml");
  EXPECT_EQ(b.topology.kind, "leaf_spine");
  EXPECT_EQ(b.topology.leaf_spine.leaves, 3u);
  EXPECT_EQ(b.topology.leaf_spine.spines, 2u);
  EXPECT_EQ(b.num_hosts(), 6u);
  // A file that cannot be read is reported at the key that names it.
  expect_error("topology: {file: " + dir + "/in/nosuch.yaml}\n", "topology.file", "nosuch.yaml");
  std::system(("rm -rf " + dir).c_str());
}

TEST(TopLevelKeys, NameAndSeedReadBack) {
  const sim::Scenario a = load("name: 'my run: 2'\nseed: 9007199254740993\n");
  EXPECT_EQ(a.name, "my run: 2");
  EXPECT_EQ(a.seed, 9007199254740993ull);  // 2^53 + 1: kept as an integer, not a double
  const sim::Scenario b = load(sim::emit_resolved(a), "resolved.yaml");
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.seed, a.seed);
  EXPECT_EQ(load("{}\n").name, "unnamed");
  expect_error("seed: -1\n", "seed", "at least 0");
}

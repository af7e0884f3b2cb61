// The scenario: one typed tree read once from YAML (plus --set overrides),
// validated at load. Blocks receive plain structs from it, never YAML.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "sim/config_util.h"
#include "link/link.h"
#include "nic/cc/dcqcn_config.h"
#include "sim/switch_config.h"
#include "sim/traffic_config.h"
#include "topology/builders.h"
#include "topology/topology.h"

namespace rocesim::sim {

struct SimSection {
  uint64_t duration_ps = 1000000000;  // 1 ms
  bool stop_when_done = true;         // end as soon as every flow has completed
  // A run that ends with frames in flight and no delivery for this long is
  // reported as deadlocked (summary.json pfc.deadlock).
  uint64_t deadlock_after_ps = 500000000;  // 500 us
  // Budgets checked before the model is built (tb/sim/budget.h); 0 = no limit.
  uint64_t max_memory_bytes = 20ull << 30;  // estimated peak resident memory
  uint64_t max_output_bytes = 4ull << 30;   // estimated bytes written into --out
};

struct TopologySection {
  // "direct": h0 and h1 on one cable (links.rate, links.cable_m);
  // "single_switch", "leaf_spine", "fat_tree", "ring": built by tb/topology;
  // "hpcc": read from the HPCC topology file `file` (topology/hpcc.h).
  std::string kind = "direct";
  std::string file;                   // topology file the parameters came from ("" = inline only), or the HPCC file
  topology::SingleParams single;
  topology::LeafSpineParams leaf_spine;
  topology::FatTreeParams fat_tree;
  topology::RingParams ring;
};

// A scheduled link failure (links.failures[]): the cable with one end at
// `link` ("NODE:PORT", resolved to node and port against the topology) is down
// over [down, up); the switches at its ends drop the port from their ECMP
// groups `detection` after each change.
struct LinkFailure {
  std::string link;
  uint32_t node = 0, port = 0;
  uint64_t down_ps = 0;
  uint64_t up_ps = UINT64_MAX;        // UINT64_MAX: down for good
  uint64_t detection_ps = 10000000;   // 10 us
};

// A lossy cable (links.lossy[]): the cable with one end at `link`
// ("NODE:PORT", resolved against the topology) loses each frame, in each
// direction, with probability `loss` (in place of links.loss).
struct LossyLink {
  std::string link;
  uint32_t node = 0, port = 0;
  double loss = 0.0;
};

struct LinksSection {
  link::LinkConfig link;              // rate and cable: direct topology; delay_per_m and loss: every link
  bool check_fcs = true;
  bool check_icrc = true;
  std::vector<LinkFailure> failures;
  std::vector<LossyLink> lossy;
};

struct HostsSection {
  uint32_t mtu = 1024;                // RoCE path MTU (IBTA: 256..4096)
  bool vlan = true;                   // 802.1Q tag carrying the priority in PCP
  uint32_t pcp = 3;                   // RoCE on priority 3 (seed 000)
  uint32_t dscp = 26;
  uint32_t ecn = 2;                   // 2 = ECT(0), 1 = ECT(1), 0 = not-ECT
  bool rc = false;                    // transport: rc or open_loop
  bool cm = true;
  uint32_t ack_every = 16;
  uint32_t max_outstanding = 1024;
  uint64_t rto_ps = 4194304000;       // IBTA local ACK timeout 10: 4.096 us x 2^10
  uint64_t min_time_between_cnps_ps = 4000000;
  bool dcqcn = false;                 // cc: dcqcn | none
  std::string dcqcn_preset = "paper"; // paper | nvidia
  cc::DcqcnConfig dcqcn_cfg;          // preset + overrides (line rate set per host)
  bool cc_log = true;                 // write cc.csv when DCQCN runs
  uint64_t rx_buffer_bytes = 0;       // NIC receive buffer (0 = none)
  uint64_t rx_drain_bps = 0;
  bool rx_pfc = true;
  uint64_t rx_xoff_bytes = 0, rx_xon_bytes = 0;
};

// stats.packet_trace: which data packets packet_trace.csv follows hop by hop
// (sim/packet_trace.h): every one of the listed flows and of the flows with
// the listed tags, and of the others each with probability `sample`.
struct PacketTraceSpec {
  std::vector<uint64_t> flows;
  std::vector<std::string> tags;
  double sample = 0;
  bool any() const { return !flows.empty() || !tags.empty() || sample > 0; }
  // Every packet of this flow is traced (by its id or its tag).
  bool names(uint64_t flow_id, const std::string& tag) const {
    return std::find(flows.begin(), flows.end(), flow_id) != flows.end() ||
           std::find(tags.begin(), tags.end(), tag) != tags.end();
  }
};

struct StatsSection {
  uint64_t interval_ps = 10000000;    // queues.csv sampling interval (10 us); 0 = no time series
  bool flow_series = false;           // also flow_series.csv: per-flow throughput each interval
  bool paths = true;                  // paths.csv, ecmp_members.csv, flows.csv's path columns (sim/paths.h)
  PacketTraceSpec packet_trace;       // packet_trace.csv (none by default)
};

// The most one flow may carry (size x messages): 2^50 B (1 PiB), above what
// the fastest link (1600 Gbps) sends in the longest run (1 h, 720 TB), and far
// enough below 2^64 that totals over all flows cannot wrap.
inline constexpr uint64_t kMaxFlowBytes = 1ull << 50;

struct FlowSpec {
  std::string src, dst;               // host names h<i>
  uint32_t src_index = 0, dst_index = 0;
  uint64_t message_bytes = 0;         // size of one RDMA WRITE message
  uint32_t messages = 1;
  uint64_t rate_bps = 0;              // open-loop pacing rate
  uint64_t start_ps = 0;
  uint32_t pcp = 3, dscp = 26;        // priority and DSCP (default: hosts.pcp, hosts.dscp)
  uint32_t dport = 100;               // HPCC flow file's dport (fct.txt, flows.hpcc.txt); 100 as HPCC's generator
  std::vector<uint32_t> after;        // flows (indices) that must complete before this one starts
  std::string tag;                    // generator, for reports
  bool send = false;                  // op: send (else write)
  uint64_t total_bytes() const { return message_bytes * messages; }  // <= kMaxFlowBytes (read_scenario checks)
};

// One entry of `flows:` as written: a single flow, or a pattern that expands
// into flows (kept for the resolved config, which shows the entry, not the expansion).
struct FlowEntry {
  std::string pattern;                // "" (one flow) or "permutation"
  FlowSpec flow;                      // single flow; for a pattern: size, messages, start
  double load = 0;                    // pattern: fraction of each sender's link rate
  bool explicit_rate = false;
};

struct Scenario {
  std::string file;                   // the YAML it came from
  std::string name = "unnamed";
  uint64_t seed = 1;
  SimSection sim;
  TopologySection topology;
  LinksSection links;
  HostsSection hosts;
  SwitchSpec sw;
  PfcSpec pfc;
  StatsSection stats;
  std::vector<FlowEntry> flow_entries;
  std::vector<TrafficEntry> traffic_entries;
  std::vector<FlowSpec> flows;        // expanded, in order
  topology::Topology topo;            // built (empty for direct)
  uint32_t num_hosts() const;
  uint64_t host_rate(uint32_t h) const;  // line rate of h<i>'s port
  uint32_t max_frame_bytes() const { return hosts.mtu + 82; }  // Eth+802.1Q+IPv4+UDP+BTH+RETH+ICRC+FCS
  // Speed and cable delay of every port of switch node n.
  std::vector<PortPhys> switch_ports(uint32_t n) const;
};

// Reads and validates the scenario; throws core::ConfigError on bad input.
Scenario read_scenario(const core::Config& cfg);
// The effective configuration, every default spelled out, as YAML text that
// read_scenario() accepts and that gives the same Scenario.
std::string emit_resolved(const Scenario& s);
// The key reference of one table-driven section (key_reference_sections():
// "sim", "topology.<kind>", "links", "hosts", "stats") as the Markdown table
// docs/config.md carries between <!-- keys:SECTION --> markers, generated
// from the same key tables that read and emit the section.
std::vector<std::string> key_reference_sections();
std::string key_reference(const std::string& section);


}  // namespace rocesim::sim

// Reading the `switch:` section of a scenario into the chip's plain config
// structs (sw::SwitchConfig, buffer::BufferConfig, mmu::Config).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analytics/analyzer.h"
#include "core/config.h"
#include "ecmp/ecmp.h"
#include "ecn/config.h"
#include "switch/switch.h"
#include "topology/topology.h"

namespace rocesim::sim {

// One buffer profile in SONiC terms, with sizes in bytes.
struct ProfileSpec {
  std::string pool;             // one of the four service pools
  uint64_t reserved_bytes = 0;  // SONiC `size`
  bool dynamic = true;          // dynamic_th (alpha = 2^n) or static_th
  int dynamic_th = 0;
  uint64_t static_bytes = 0;
  uint64_t headroom_bytes = 0;  // SONiC `xoff` (lossless PG profiles only)
};

// `switch.ecmp`: the hash unit (tlm/ecmp), with overrides per tier (a switch
// role: leaf, spine, tor, agg, core, sw) and per switch (by name). A switch
// takes the section's keys, then its tier's given keys, then its own.
struct EcmpOverride {
  std::string name;        // the role or the switch
  ecmp::Config c;          // the keys given here (the others: unused)
  uint32_t given = 0;      // bit i: the i-th key of the unit's key table was given
};
struct EcmpSpec {
  ecmp::Config c;          // seed 0: derived per switch from its name and the run seed
  std::vector<EcmpOverride> tiers, switches;
};

// `switch.analytics`: the RoCEv2 flow analytics (tlm/analytics, issue 14,
// docs/analytics.md), the same on every switch: the block's parameters,
// the rules of performance mode, the ingress ports analysed and the time
// analytics starts.
struct AnalyticsSpec {
  bool enabled = false;
  analytics::Config c;                 // domain_id and ports: per switch (the fabric's)
  std::vector<analytics::Rule> rules;  // performance mode only
  std::vector<uint32_t> ports;         // ingress ports analysed; empty: all
  uint64_t enable_at_ps = 0;           // before it the switches mirror nothing
};

struct SwitchSpec {
  uint64_t clock_period_ps = 1000;
  sw::PipelineCycles cycles;
  bool cut_through = false;
  uint64_t buffer_bytes = 16ull << 20;
  uint32_t cell_bytes = 256;
  uint32_t write_cells_per_cycle = 16;
  uint32_t read_cells_per_cycle = 16;
  // Shared sizes of the four service pools (SONiC ingress/egress lossless/lossy pools).
  uint64_t ingress_lossless_pool = 7ull << 20;
  uint64_t ingress_lossy_pool = 6ull << 20;
  uint64_t egress_lossless_pool = 14ull << 20;
  uint64_t egress_lossy_pool = 12ull << 20;
  uint64_t shared_headroom_bytes = 1600000;  // 0: per-PG reserved headroom
  std::vector<uint32_t> lossless_pgs{3, 4};
  ProfileSpec pg_lossless{"ingress_lossless", 4608, true, 0, 0, 160000};
  ProfileSpec pg_lossy{"ingress_lossy", 0, true, 3, 0, 0};
  ProfileSpec queue_lossless{"egress_lossless", 0, true, 7, 0, 0};
  ProfileSpec queue_lossy{"egress_lossy", 1536, true, 3, 0, 0};
  sw::QosConfig qos = default_qos();
  // ECN (switch.ecn): the default marker, on the queues that carry lossless
  // traffic (ecn_lossless_only) or on all, then per-queue overrides.
  ecn::MarkerConfig ecn = default_ecn();
  bool ecn_lossless_only = true;
  std::array<bool, 8> ecn_override{};
  std::array<ecn::MarkerConfig, 8> ecn_queue{};
  // Scheduler (switch.scheduler): per queue strict or DWRR with a weight, and
  // optional shapers. Default: queues 6 and 7 strict (CNP on 6), 0..5 DWRR
  // with equal weights (RoCE data on 3, the rest on 0).
  // A token bucket; a rate of 0 is no shaper (the burst is then unused).
  struct Shaper {
    uint64_t rate_bps = 0;
    uint64_t burst_bytes = 16384;
  };
  struct QueueSched {
    bool strict = false;
    uint32_t weight = 1;
    Shaper shaper;
  };
  std::array<QueueSched, 8> sched_queues = default_sched();
  uint64_t sched_quantum_bytes = 0;   // quantum of weight 1; 0 = the largest frame
  Shaper port_shaper;
  EcmpSpec ecmp;
  AnalyticsSpec analytics;
  std::string queue_impl = "tlm";  // tlm | rtl | lockstep (the C++ queue manager, the RTL, or both compared)

  static sw::QosConfig default_qos();
  static ecn::MarkerConfig default_ecn();
  static std::array<QueueSched, 8> default_sched() {
    std::array<QueueSched, 8> a{};
    a[6].strict = a[7].strict = true;
    return a;
  }
};

// Reads and validates `switch:` (absent keys keep their defaults).
SwitchSpec read_switch(const core::CfgNode& n);
// The `pfc:` section: PFC in switches and NICs.
struct PfcSpec {
  bool enabled = true;
  bool xoff_dynamic = true;           // XOFF at the MMU's dynamic threshold...
  uint64_t xoff_bytes = 0;            // ...or at this static shared use
  enum class Xon { offset, absolute, ratio } xon_rule = Xon::offset;
  uint64_t xon_offset_bytes = 4096;   // XON when shared use < XOFF threshold - offset
  uint64_t xon_bytes = 0;             // XON when shared use <= xon
  double xon_ratio = 0.5;             // XON when shared use <= ratio * XOFF threshold
  uint32_t pause_quanta = 65535;
  uint64_t refresh_ps = 0;            // 0: half the pause time at each port's speed
  uint64_t response_ps = 500000;      // MAC response delay to a received pause (0.5 us)
  enum class Headroom { profile, automatic, fixed } headroom = Headroom::profile;
  uint64_t headroom_bytes = 0;        // fixed
  uint64_t mac_phy_delay_bytes = 1024;
  double cell_occupancy = 1.0;
  bool watchdog = false;
  uint64_t wd_detection_ps = 200000000, wd_restoration_ps = 200000000, wd_poll_ps = 50000000;
  bool wd_drop = true;
  // A NIC that keeps pausing its switch port (a PFC storm).
  bool storm = false;
  std::string storm_host;
  uint32_t storm_host_index = 0;
  uint64_t storm_start_ps = 0;
  uint32_t storm_priority = 3;
};

// Speed and cable delay of one switch port (for the headroom calculation).
struct PortPhys {
  uint64_t rate_bps = 0;
  uint64_t cable_ps = 0;
};

PfcSpec read_pfc(const core::CfgNode& n, uint32_t hosts);
// Throws core::ConfigError at n's `refresh` key (n: the `pfc:` section) when a
// configured refresh period is not shorter than the pause time, pause_quanta
// x 512 bit times (802.1Qbb), at every port speed in `rates` (the ports that
// send XOFF: switch ports, and NIC ports with PFC from a receive buffer). The
// binding speed is the fastest, where the pause is shortest; the pause time is
// rounded up to a whole ps, so refresh_ps < it exactly when refresh < the true
// pause. No check with refresh auto or PFC disabled.
void check_pfc_refresh(const core::CfgNode& n, const PfcSpec& p, const std::vector<uint64_t>& rates);
std::string emit_pfc(const PfcSpec& p);
// The `pfc:` key reference (docs/config.md), from the table that reads and emits it.
std::string pfc_key_reference();

// The chip config for a switch with the given ports (groups, checks and MACs
// are the caller's). max_frame_bytes: the largest frame (for headroom: auto).
// Does not validate: see check_switch_config().
sw::SwitchConfig make_switch_config(const SwitchSpec& s, const PfcSpec& pfc, const std::vector<PortPhys>& ports,
                                    uint32_t max_frame_bytes);
// Throws core::ConfigError at `where` when the buffer configuration of this
// switch is invalid (mmu::validate()).
void check_switch_config(const SwitchSpec& s, const PfcSpec& pfc, const std::vector<PortPhys>& ports,
                         uint32_t max_frame_bytes, const core::CfgNode& where);
// The hash unit's configuration of switch `node`: the section's, its tier's
// and its own overrides; a seed of 0 becomes fnv1a64(name) ^ run_seed (low 32
// bits), so switches hash differently unless seeds are given.
ecmp::Config switch_ecmp(const EcmpSpec& e, const topology::Node& node, uint64_t run_seed);
// Throws core::ConfigError at `ecmp` (the `switch.ecmp` section) when a tier
// override names a role no switch of t has, or a switch override a node that
// is not a switch of t.
void check_ecmp_names(const core::CfgNode& ecmp, const EcmpSpec& e, const topology::Topology& t);
// Throws core::ConfigError at `analytics` (the `switch.analytics` section)
// when analytics is on in a topology without switches, or a listed port is
// not a port of any switch of t.
void check_analytics(const core::CfgNode& analytics, const AnalyticsSpec& a, const topology::Topology& t, bool direct);
// The analyzer configuration of switch `node` (index `domain` in the
// topology: its observation domain) with `ports` ports.
analytics::Config switch_analytics(const AnalyticsSpec& a, uint32_t domain, uint32_t ports);
// YAML text of the section, every default spelled out (indented by two spaces under `switch:`).
std::string emit_switch(const SwitchSpec& s);
// The `switch:` key reference (docs/config.md), from the tables that read and emit it.
std::string switch_key_reference();

}  // namespace rocesim::sim

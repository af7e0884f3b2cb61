// Reading the `switch:` section of a scenario into the chip's plain config
// structs (sw::SwitchConfig, buffer::BufferConfig, mmu::Config).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "switch/switch.h"

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
  uint32_t hash_seed = 0;  // 0: derived from the switch name and the run seed

  static sw::QosConfig default_qos();
};

// Reads and validates `switch:` (absent keys keep their defaults).
SwitchSpec read_switch(const core::CfgNode& n);
// The chip config for a switch with the given port rates (groups and checks
// are the caller's). Does not validate: see check_switch_config().
sw::SwitchConfig make_switch_config(const SwitchSpec& s, const std::vector<uint64_t>& port_rates);
// Throws core::ConfigError at `where` when the buffer configuration of a
// switch with `ports` ports is invalid (mmu::validate()).
void check_switch_config(const SwitchSpec& s, uint32_t ports, const core::CfgNode& where);
// YAML text of the section, every default spelled out (indented by two spaces under `switch:`).
std::string emit_switch(const SwitchSpec& s);

}  // namespace rocesim::sim

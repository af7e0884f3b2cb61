// MMU buffer configuration: service pools, per-(port, PG) ingress profiles,
// per-(port, queue) egress profiles, headroom. Plain structs (no YAML): the
// scenario reader fills them and calls validate() before building an Mmu.
//
// Vocabulary follows SONiC (BUFFER_POOL / BUFFER_PROFILE: pool, size,
// dynamic_th, static_th, xoff) and SAI saibuffer.h (SAI_BUFFER_POOL_ATTR_TYPE,
// _SIZE, _THRESHOLD_MODE, _XOFF_SIZE; SAI_BUFFER_PROFILE_ATTR_RESERVED_BUFFER_SIZE,
// _SHARED_DYNAMIC_TH, _SHARED_STATIC_TH, _XOFF_TH, and _THRESHOLD_MODE, which
// overrides the pool's mode). Every quantity is in cells: the hardware
// counts cells, and integer cells keep the model bit-exact with the RTL.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::mmu {

inline constexpr unsigned kPgsPerPort = 8;     // ingress priority groups per port
inline constexpr unsigned kQueuesPerPort = 8;  // egress queues per port
// SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH is an int8 n with alpha = 2^n.
// We take n literally in [-7, 7] (alpha 1/128 .. 128). Mellanox SAI maps
// n <= -8 to alpha 0 and n >= 7 to "unlimited"; use a static threshold for those.
inline constexpr int kMinDynamicTh = -7;
inline constexpr int kMaxDynamicTh = 7;

// Cells a packet of `bytes` occupies: ceil(bytes / cell_bytes). cell_bytes > 0.
constexpr uint64_t cells_for_bytes(uint64_t bytes, uint32_t cell_bytes) {
  return (bytes + cell_bytes - 1) / cell_bytes;
}

// SAI_BUFFER_POOL_ATTR_TYPE. PG profiles must use an ingress pool, queue
// profiles an egress pool.
enum class PoolType : uint8_t { ingress, egress };

// SAI_BUFFER_POOL_THRESHOLD_MODE_{DYNAMIC,STATIC}. `from_pool` is only valid
// in a profile: it takes the pool's mode (SAI: the profile's THRESHOLD_MODE
// attribute absent).
enum class ThresholdMode : uint8_t { from_pool, dynamic_th, static_th };

struct PoolConfig {
  std::string name;  // for messages, e.g. "ingress_lossless_pool"
  PoolType type = PoolType::ingress;
  uint32_t size_cells = 0;  // shared part of the pool (reserves and headroom are outside it)
  ThresholdMode mode = ThresholdMode::dynamic_th;  // dynamic_th or static_th
};

// Shared-use limit of one PG or queue.
struct Threshold {
  ThresholdMode mode = ThresholdMode::from_pool;
  int dynamic_th = 0;         // n, alpha = 2^n; used when the resolved mode is dynamic_th
  uint32_t static_cells = 0;  // used when the resolved mode is static_th
};

// One (port, PG): SONiC BUFFER_PG -> BUFFER_PROFILE.
struct PgProfile {
  uint32_t pool = 0;            // index into Config::pools; must be an ingress pool
  uint32_t reserved_cells = 0;  // guaranteed minimum (SAI RESERVED_BUFFER_SIZE, without headroom)
  Threshold threshold;          // limit on shared use beyond the reserve
  // Per-PG headroom (SONiC `xoff`). With Config::shared_headroom_cells == 0
  // it is reserved for this PG; otherwise it is this PG's limit inside the
  // shared headroom pool and reserves nothing. Lossless PGs only.
  uint32_t headroom_cells = 0;
  bool lossless = false;  // PFC-enabled PG: overflow goes to headroom, never dropped by thresholds
};

// One (port, queue): SONiC BUFFER_QUEUE -> BUFFER_PROFILE.
struct QueueProfile {
  uint32_t pool = 0;  // index into Config::pools; must be an egress pool
  uint32_t reserved_cells = 0;
  Threshold threshold;
};

struct PortConfig {
  std::array<PgProfile, kPgsPerPort> pgs{};
  std::array<QueueProfile, kQueuesPerPort> queues{};
};

// The port's lossless PGs as a mask (bit pg), for the per-packet paths.
inline uint8_t lossless_pg_mask(const PortConfig& p) {
  uint8_t m = 0;
  for (size_t g = 0; g < p.pgs.size(); ++g)
    if (p.pgs[g].lossless) m |= static_cast<uint8_t>(1u << g);
  return m;
}

struct Config {
  uint32_t cell_bytes = 256;
  uint32_t total_cells = 0;  // the packet buffer
  std::vector<PoolConfig> pools;
  // Shared headroom pool (SONiC BUFFER_POOL.xoff, SAI_BUFFER_POOL_ATTR_XOFF_SIZE),
  // cells; 0 = every lossless PG has its own reserved headroom.
  uint32_t shared_headroom_cells = 0;
  std::vector<PortConfig> ports;
};

// Every problem found, one line each, naming the port/PG/queue/pool and the
// numbers; empty when the configuration is usable. Callers print them and
// exit 2. Checked: sizes non-zero where needed; pool indices exist and have
// the right type; modes and dynamic_th in range; a lossless PG has headroom,
// a lossy PG has none; reserves plus headroom fit the buffer; the ingress
// view (ingress pools + ingress reserves + headroom) fits the buffer, which
// is what guarantees that admitted cells never exceed it.
std::vector<std::string> validate(const Config& config);

// Reserved totals in cells, as validate() counts them (for reports).
struct ReservedTotals {
  uint64_t ingress = 0;   // sum of PG reserves
  uint64_t egress = 0;    // sum of queue reserves
  uint64_t headroom = 0;  // sum of lossless PG headroom, or the shared headroom pool
};
ReservedTotals reserved_totals(const Config& config);

const char* pool_type_name(PoolType t);        // "ingress" | "egress"
const char* threshold_mode_name(ThresholdMode m);  // "from_pool" | "dynamic_th" | "static_th"

}  // namespace rocesim::mmu

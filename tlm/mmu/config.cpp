#include "mmu/config.h"

#include <sstream>

namespace rocesim::mmu {

const char* pool_type_name(PoolType t) { return t == PoolType::ingress ? "ingress" : "egress"; }

const char* threshold_mode_name(ThresholdMode m) {
  switch (m) {
    case ThresholdMode::from_pool: return "from_pool";
    case ThresholdMode::dynamic_th: return "dynamic_th";
    case ThresholdMode::static_th: return "static_th";
  }
  return "?";
}

ReservedTotals reserved_totals(const Config& c) {
  ReservedTotals t;
  for (const PortConfig& p : c.ports) {
    for (const PgProfile& g : p.pgs) {
      t.ingress += g.reserved_cells;
      if (g.lossless && c.shared_headroom_cells == 0) t.headroom += g.headroom_cells;
    }
    for (const QueueProfile& q : p.queues) t.egress += q.reserved_cells;
  }
  if (c.shared_headroom_cells > 0) t.headroom = c.shared_headroom_cells;
  return t;
}

namespace {

// Checks a profile's pool reference and threshold. `who` is e.g. "PG 3 of port 2".
void check_profile(const Config& c, const std::string& who, uint32_t pool, PoolType want,
                   const Threshold& th, std::vector<std::string>& errs) {
  const size_t npools = c.pools.size();
  if (pool >= npools) {
    std::ostringstream m;
    m << who << " maps to pool " << pool << ", which does not exist (";
    if (npools == 0) {
      m << "no pools are configured)";
    } else {
      m << npools << " pool" << (npools == 1 ? "" : "s") << ": 0.." << npools - 1 << ")";
    }
    errs.push_back(m.str());
    return;
  }
  const PoolConfig& pc = c.pools[pool];
  if (pc.type != want) {
    std::ostringstream m;
    m << who << " maps to pool " << pool << " ('" << pc.name << "'), an " << pool_type_name(pc.type)
      << " pool; " << (want == PoolType::ingress ? "a PG needs an ingress pool" : "a queue needs an egress pool");
    errs.push_back(m.str());
  }
  ThresholdMode mode = th.mode == ThresholdMode::from_pool ? pc.mode : th.mode;
  if (mode == ThresholdMode::dynamic_th && (th.dynamic_th < kMinDynamicTh || th.dynamic_th > kMaxDynamicTh)) {
    std::ostringstream m;
    m << who << ": dynamic_th " << th.dynamic_th << " is outside [" << kMinDynamicTh << ", " << kMaxDynamicTh
      << "] (alpha = 2^dynamic_th)";
    errs.push_back(m.str());
  }
}

}  // namespace

std::vector<std::string> validate(const Config& c) {
  std::vector<std::string> errs;
  auto add = [&](const std::ostringstream& m) { errs.push_back(m.str()); };

  if (c.cell_bytes == 0) errs.push_back("cell_bytes is 0: a cell must hold at least one byte");
  if (c.total_cells == 0) errs.push_back("total_cells is 0: the buffer has no cells");
  if (c.pools.empty()) errs.push_back("no service pools are configured (need at least one ingress and one egress pool)");
  // Charge records keep the pool index in 8 bits.
  if (c.pools.size() > 256) {
    std::ostringstream m;
    m << c.pools.size() << " pools are configured; at most 256 are supported";
    add(m);
  }
  // Operations carry ports in 16 bits.
  if (c.ports.empty()) errs.push_back("no ports are configured");
  if (c.ports.size() > 65536) {
    std::ostringstream m;
    m << c.ports.size() << " ports are configured; at most 65536 are supported";
    add(m);
  }

  for (size_t i = 0; i < c.pools.size(); ++i) {
    const PoolConfig& p = c.pools[i];
    if (p.mode == ThresholdMode::from_pool) {
      std::ostringstream m;
      m << "pool " << i << " ('" << p.name << "') has threshold mode from_pool; a pool needs dynamic_th or static_th";
      add(m);
    }
    if (p.size_cells > c.total_cells) {
      std::ostringstream m;
      m << "pool " << i << " ('" << p.name << "') has " << p.size_cells << " cells, more than the buffer's "
        << c.total_cells << " cells";
      add(m);
    }
  }

  for (size_t port = 0; port < c.ports.size(); ++port) {
    const PortConfig& pc = c.ports[port];
    for (unsigned g = 0; g < kPgsPerPort; ++g) {
      const PgProfile& pg = pc.pgs[g];
      const std::string who = "PG " + std::to_string(g) + " of port " + std::to_string(port);
      check_profile(c, who, pg.pool, PoolType::ingress, pg.threshold, errs);
      if (pg.lossless && pg.headroom_cells == 0) {
        errs.push_back(who + " is lossless but has no headroom (headroom_cells 0): its overflow would be dropped");
      }
      if (!pg.lossless && pg.headroom_cells > 0) {
        std::ostringstream m;
        m << who << " is lossy but has headroom " << pg.headroom_cells
          << " cells; only lossless PGs use headroom (set it to 0 or make the PG lossless)";
        add(m);
      }
    }
    for (unsigned q = 0; q < kQueuesPerPort; ++q) {
      const QueueProfile& qp = pc.queues[q];
      const std::string who = "queue " + std::to_string(q) + " of port " + std::to_string(port);
      check_profile(c, who, qp.pool, PoolType::egress, qp.threshold, errs);
    }
  }

  const ReservedTotals r = reserved_totals(c);
  const uint64_t reserved = r.ingress + r.egress + r.headroom;
  if (reserved > c.total_cells) {
    std::ostringstream m;
    m << "reserved cells (ingress " << r.ingress << " + egress " << r.egress << ") plus headroom " << r.headroom
      << (c.shared_headroom_cells > 0 ? " (shared headroom pool)" : "") << " exceed the buffer's " << c.total_cells
      << " cells";
    add(m);
  }
  // Every admitted cell is charged exactly once on the ingress side (PG
  // reserve, ingress pool, or headroom), so when this sum fits, the cells in
  // use can never exceed the buffer and admit() needs no separate check.
  uint64_t ingress_pools = 0;
  size_t n_ingress = 0;
  for (const PoolConfig& p : c.pools) {
    if (p.type == PoolType::ingress) {
      ingress_pools += p.size_cells;
      ++n_ingress;
    }
  }
  if (!c.pools.empty() && n_ingress == 0) errs.push_back("no ingress pool is configured");
  if (!c.pools.empty() && n_ingress == c.pools.size()) errs.push_back("no egress pool is configured");
  const uint64_t ingress_view = ingress_pools + r.ingress + r.headroom;
  if (ingress_view > c.total_cells) {
    std::ostringstream m;
    m << "ingress pools (" << ingress_pools << " cells in " << n_ingress << " pool" << (n_ingress == 1 ? "" : "s")
      << ") plus ingress reserved " << r.ingress << " plus headroom " << r.headroom << " = " << ingress_view
      << " cells exceed the buffer's " << c.total_cells << " cells";
    add(m);
  }
  return errs;
}

}  // namespace rocesim::mmu

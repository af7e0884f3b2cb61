#include "mmu/mmu.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace rocesim::mmu {

namespace {
// Which PG, queue and pools an operation's cells belong to (admit and release alike).
template <typename Op>
void set_route(Charge& ch, const Op& op, uint8_t in_pool, uint8_t eg_pool) {
  ch.in_port = op.in_port;
  ch.pg = op.pg;
  ch.out_port = op.out_port;
  ch.queue = op.queue;
  ch.in_pool = in_pool;
  ch.eg_pool = eg_pool;
}
}  // namespace


const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::admit: return "admit";
    case Verdict::drop_ingress_limit: return "ingress_limit";
    case Verdict::drop_egress_limit: return "egress_limit";
    case Verdict::drop_pool_full: return "pool_full";
    case Verdict::drop_headroom_overflow: return "headroom_overflow";
    case Verdict::count_: break;
  }
  return "?";
}

uint64_t DropCounters::total_packets() const {
  uint64_t n = 0;
  for (uint64_t p : packets) n += p;
  return n;
}

namespace {

template <class Profile>
auto resolve_limit(const Config& c, const Profile& p) {
  struct R {
    uint32_t reserve, static_cells;
    uint8_t pool;
    bool dynamic;
    int8_t shift;
  };
  const PoolConfig& pc = c.pools[p.pool];
  const ThresholdMode mode = p.threshold.mode == ThresholdMode::from_pool ? pc.mode : p.threshold.mode;
  return R{p.reserved_cells, p.threshold.static_cells, static_cast<uint8_t>(p.pool),
           mode == ThresholdMode::dynamic_th, static_cast<int8_t>(p.threshold.dynamic_th)};
}

inline void raise_peak(uint32_t& peak, uint32_t v) {
  if (v > peak) peak = v;
}

}  // namespace

Mmu::Mmu(const Config& config) : m_config(config) {
  const std::vector<std::string> errs = validate(config);
  if (!errs.empty()) {
    std::string msg;
    for (const std::string& e : errs) msg += (msg.empty() ? "" : "\n") + e;
    throw std::invalid_argument(msg);
  }
  const size_t nports = config.ports.size();
  m_pg.resize(nports * kPgsPerPort);
  m_q.resize(nports * kQueuesPerPort);
  for (size_t port = 0; port < nports; ++port) {
    for (unsigned g = 0; g < kPgsPerPort; ++g) {
      const PgProfile& p = config.ports[port].pgs[g];
      const auto r = resolve_limit(config, p);
      PgRec& pp = m_pg[port * kPgsPerPort + g];
      pp.lim = Limit{r.reserve, r.static_cells, r.pool, r.dynamic, r.shift};
      pp.headroom_limit = p.headroom_cells;
      pp.lossless = p.lossless;
    }
    for (unsigned q = 0; q < kQueuesPerPort; ++q) {
      const auto r = resolve_limit(config, config.ports[port].queues[q]);
      m_q[port * kQueuesPerPort + q].lim = Limit{r.reserve, r.static_cells, r.pool, r.dynamic, r.shift};
    }
  }
  m_pools.resize(config.pools.size());
  for (size_t i = 0; i < m_pools.size(); ++i) m_pools[i].size = config.pools[i].size_cells;
  m_shared_hdrm = config.shared_headroom_cells > 0;
  m_hdrm_size = config.shared_headroom_cells;
}

uint64_t Mmu::threshold(const Limit& l) const {
  if (!l.dynamic) return l.static_cells;
  const PoolState& p = m_pools[l.pool];
  const uint64_t free_cells = p.used < p.size ? p.size - p.used : 0;
  // alpha * free with alpha = 2^n, exactly as the RTL does it: a shift.
  return l.shift >= 0 ? free_cells << l.shift : free_cells >> -l.shift;
}

Verdict Mmu::shared_check(const Limit& l, uint32_t shared, uint32_t part, Verdict limit) const {
  const PoolState& p = m_pools[l.pool];
  if (uint64_t(p.used) + part > p.size) return Verdict::drop_pool_full;
  if (l.dynamic) {
    // Choudhury & Hahne: admit while the queue is below its threshold at arrival.
    return shared < threshold(l) ? Verdict::admit : limit;
  }
  // Static: the shared use never exceeds the configured value.
  return uint64_t(shared) + part <= l.static_cells ? Verdict::admit : limit;
}

void Mmu::fail_indices(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t cells,
                       const char* what) const {
  std::ostringstream m;
  m << "mmu: malformed " << what << " (in_port " << in_port << ", pg " << unsigned(pg) << ", out_port "
    << out_port << ", queue " << unsigned(queue) << ", cells " << cells << "; " << m_config.ports.size()
    << " ports)";
  throw std::invalid_argument(m.str());
}

PgState Mmu::make_pg_state(size_t gi) const {
  const PgRec& a = m_pg[gi];
  return PgState{a.reserved, a.shared, a.headroom, threshold(a.lim)};
}

QueueState Mmu::make_q_state(size_t qi) const {
  const QRec& a = m_q[qi];
  return QueueState{a.reserved, a.shared, threshold(a.lim)};
}

PgCounters Mmu::pg_counters(uint16_t port, uint8_t pg) const {
  const size_t gi = pg_index(port, pg);
  const PgRec& a = m_pg.at(gi);
  PgCounters c;
  c.admitted_packets = a.admitted_packets;
  c.admitted_cells = a.admitted_cells;
  c.released_packets = a.released_packets;
  c.released_cells = a.released_cells;
  c.headroom_packets = a.headroom_packets;
  c.headroom_cells = a.headroom_cells;
  c.peak_cells = a.peak_cells;
  c.peak_shared = a.peak_shared;
  c.peak_headroom = a.peak_headroom;
  if (!m_pg_drops.empty()) c.dropped = m_pg_drops[gi];
  return c;
}

QueueCounters Mmu::queue_counters(uint16_t port, uint8_t queue) const {
  const size_t qi = q_index(port, queue);
  const QRec& a = m_q.at(qi);
  QueueCounters c;
  c.admitted_packets = a.admitted_packets;
  c.admitted_cells = a.admitted_cells;
  c.released_packets = a.released_packets;
  c.released_cells = a.released_cells;
  c.peak_cells = a.peak_cells;
  c.peak_shared = a.peak_shared;
  if (!m_q_drops.empty()) c.dropped = m_q_drops[qi];
  return c;
}

PgState Mmu::pg_state(uint16_t port, uint8_t pg) const { return make_pg_state(pg_index(port, pg)); }

QueueState Mmu::queue_state(uint16_t port, uint8_t queue) const { return make_q_state(q_index(port, queue)); }

AdmitResult Mmu::admit(const AdmitOp& op) {
  check_indices(op.in_port, op.pg, op.out_port, op.queue, op.cells, "admit");
  const size_t gi = pg_index(op.in_port, op.pg);
  const size_t qi = q_index(op.out_port, op.queue);
  const PgRec& ga = m_pg[gi];
  const QRec& qa = m_q[qi];
  const Limit& ql = qa.lim;
  const uint32_t c = op.cells;

  const bool lossless = op.lossless && ga.lossless;

  // Ingress: reserve first (the invariant keeps reserved <= reserve).
  Verdict v = Verdict::admit;
  const uint32_t in_r = std::min(c, ga.lim.reserve - ga.reserved);
  const uint32_t in_rest = c - in_r;
  uint32_t in_s = 0, hr = 0;
  if (in_rest > 0) {
    const Verdict sv = shared_check(ga.lim, ga.shared, in_rest, Verdict::drop_ingress_limit);
    if (sv == Verdict::admit) {
      in_s = in_rest;
    } else if (lossless) {
      const bool fits_pg = uint64_t(ga.headroom) + in_rest <= ga.headroom_limit;
      const bool fits_pool = !m_shared_hdrm || uint64_t(m_hdrm_used) + in_rest <= m_hdrm_size;
      if (fits_pg && fits_pool) {
        hr = in_rest;
      } else {
        v = Verdict::drop_headroom_overflow;
      }
    } else {
      v = sv;
    }
  }

  // Egress: reserve first; lossless packets are only accounted.
  uint32_t eg_r = 0, eg_s = 0;
  if (v == Verdict::admit) {
    eg_r = std::min(c, ql.reserve - qa.reserved);
    eg_s = c - eg_r;
    if (eg_s > 0 && !lossless) v = shared_check(ql, qa.shared, eg_s, Verdict::drop_egress_limit);
  }

  Charge ch;
  set_route(ch, op, ga.lim.pool, ql.pool);
  if (v == Verdict::admit) {
    ch.in_reserved = in_r;
    ch.in_shared = in_s;
    ch.headroom = hr;
    ch.eg_reserved = eg_r;
    ch.eg_shared = eg_s;
  }
  return commit(gi, qi, c, lossless, v, ch);
}

AdmitResult Mmu::book(const AdmitOp& op, Verdict v, const Charge& charge) {
  check_indices(op.in_port, op.pg, op.out_port, op.queue, op.cells, "book");
  if (static_cast<size_t>(v) >= kVerdicts) throw std::invalid_argument("mmu: book: no such verdict");
  const size_t gi = pg_index(op.in_port, op.pg);
  const size_t qi = q_index(op.out_port, op.queue);
  const bool lossless = op.lossless && m_pg[gi].lossless;
  if (v == Verdict::admit &&
      (charge.cells() != op.cells || uint64_t(charge.eg_reserved) + charge.eg_shared != op.cells)) {
    std::ostringstream m;
    m << "mmu: book of " << op.cells << " cells with a charge of " << charge.cells() << " ingress and "
      << uint64_t(charge.eg_reserved) + charge.eg_shared << " egress cells";
    throw std::invalid_argument(m.str());
  }
  // The decision's buckets (none on a drop), routed by the op and this MMU's pools.
  Charge ch = v == Verdict::admit ? charge : Charge{};
  set_route(ch, op, m_pg[gi].lim.pool, m_q[qi].lim.pool);
  return commit(gi, qi, op.cells, lossless, v, ch);
}

AdmitResult Mmu::commit(size_t gi, size_t qi, uint32_t c, bool lossless, Verdict v, const Charge& ch) {
  PgRec& ga = m_pg[gi];
  QRec& qa = m_q[qi];
  AdmitResult res;
  res.lossless = lossless;
  res.charge = ch;
  const uint32_t in_r = ch.in_reserved, in_s = ch.in_shared, hr = ch.headroom;
  const uint32_t eg_r = ch.eg_reserved, eg_s = ch.eg_shared;
  if (v != Verdict::admit) {
    const size_t k = static_cast<size_t>(v);
    res.verdict = v;
    if (m_pg_drops.empty()) {  // the first drop: the drop counters now exist
      m_pg_drops.resize(m_pg.size());
      m_q_drops.resize(m_q.size());
    }
    DropCounters& gc = m_pg_drops[gi];
    DropCounters& qc = m_q_drops[qi];
    ++gc.packets[k];
    gc.cells[k] += c;
    ++qc.packets[k];
    qc.cells[k] += c;
    ++m_drops.packets[k];
    m_drops.cells[k] += c;
    res.pg = make_pg_state(gi);
    res.queue = make_q_state(qi);
    return res;
  }

  // Commit.
  ga.reserved += in_r;
  ga.shared += in_s;
  ga.headroom += hr;
  qa.reserved += eg_r;
  qa.shared += eg_s;
  PoolState& ip = m_pools[ga.lim.pool];
  ip.used += in_s;
  raise_peak(ip.peak, ip.used);
  PoolState& ep = m_pools[qa.lim.pool];
  ep.used += eg_s;
  raise_peak(ep.peak, ep.used);
  if (m_shared_hdrm && hr > 0) {
    m_hdrm_used += hr;
    raise_peak(m_hdrm_peak, m_hdrm_used);
  }
  m_total_used += c;
  raise_peak(m_total_peak, m_total_used);
  ++m_admitted_packets;

  ++ga.admitted_packets;
  ga.admitted_cells += c;
  raise_peak(ga.peak_cells, ga.reserved + ga.shared + ga.headroom);
  raise_peak(ga.peak_shared, ga.shared);
  if (hr > 0) {
    ++ga.headroom_packets;
    ga.headroom_cells += hr;
    raise_peak(ga.peak_headroom, ga.headroom);
  }
  ++qa.admitted_packets;
  qa.admitted_cells += c;
  raise_peak(qa.peak_cells, qa.reserved + qa.shared);
  raise_peak(qa.peak_shared, qa.shared);

  res.in_headroom = hr > 0;
  res.pg = make_pg_state(gi);
  res.queue = make_q_state(qi);
  return res;
}

ReleaseResult Mmu::release(const ReleaseOp& op) {
  check_indices(op.in_port, op.pg, op.out_port, op.queue, op.cells, "release");
  const size_t gi = pg_index(op.in_port, op.pg);
  const size_t qi = q_index(op.out_port, op.queue);
  PgRec& ga = m_pg[gi];
  QRec& qa = m_q[qi];
  const uint32_t c = op.cells;
  const uint32_t pg_total = ga.reserved + ga.shared + ga.headroom;
  const uint32_t q_total = qa.reserved + qa.shared;
  if (c > pg_total || c > q_total) {
    std::ostringstream m;
    m << "mmu: release of " << c << " cells from PG " << unsigned(op.pg) << " of port " << op.in_port << " (holding "
      << pg_total << ") and queue " << unsigned(op.queue) << " of port " << op.out_port << " (holding " << q_total
      << "): more than was admitted";
    throw std::invalid_argument(m.str());
  }
  // Reverse of the fill order: headroom, shared, reserve; queue shared, reserve.
  const uint32_t hr = std::min(c, ga.headroom);
  const uint32_t in_s = std::min(c - hr, ga.shared);
  const uint32_t in_r = c - hr - in_s;
  const uint32_t eg_s = std::min(c, qa.shared);
  const uint32_t eg_r = c - eg_s;
  ga.headroom -= hr;
  ga.shared -= in_s;
  ga.reserved -= in_r;
  qa.shared -= eg_s;
  qa.reserved -= eg_r;
  m_pools[ga.lim.pool].used -= in_s;
  m_pools[qa.lim.pool].used -= eg_s;
  if (m_shared_hdrm) m_hdrm_used -= hr;
  m_total_used -= c;
  ++m_released_packets;

  ++ga.released_packets;
  ga.released_cells += c;
  ++qa.released_packets;
  qa.released_cells += c;

  ReleaseResult res;
  Charge& ch = res.returned;
  set_route(ch, op, ga.lim.pool, qa.lim.pool);
  ch.in_reserved = in_r;
  ch.in_shared = in_s;
  ch.headroom = hr;
  ch.eg_reserved = eg_r;
  ch.eg_shared = eg_s;
  res.pg = make_pg_state(gi);
  res.queue = make_q_state(qi);
  return res;
}

void Mmu::reset_peaks() {
  for (PgRec& a : m_pg) {
    a.peak_cells = a.reserved + a.shared + a.headroom;
    a.peak_shared = a.shared;
    a.peak_headroom = a.headroom;
  }
  for (QRec& a : m_q) {
    a.peak_cells = a.reserved + a.shared;
    a.peak_shared = a.shared;
  }
  for (PoolState& p : m_pools) p.peak = p.used;
  m_hdrm_peak = m_hdrm_used;
  m_total_peak = m_total_used;
}

}  // namespace rocesim::mmu

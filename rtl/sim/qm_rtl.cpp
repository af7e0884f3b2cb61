#include "qm_rtl.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>
#if ROCESIM_QM_RTL_COVERAGE
#include <atomic>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>
#endif

#include "Vqm.h"
#include "verilated.h"
#if ROCESIM_QM_RTL_TRACE
#include "verilated_fst_c.h"
#endif
#if ROCESIM_QM_RTL_COVERAGE
#include "verilated_cov.h"
#endif

namespace rocesim::rtl {

namespace {

// qm_pkg.sv: encodings and the CSR map.
constexpr unsigned kOpEnqueue = 0, kOpDequeue = 1, kOpPfcTick = 2;
constexpr uint32_t kRegionGlobal = 0, kRegionPool = 1, kRegionEcn = 2, kRegionPg = 3, kRegionQueue = 4;
constexpr uint32_t kGCtrl = 0, kGTotalCells = 1, kGPorts = 2, kGSharedHdrm = 3, kGPfcCtrl = 4, kGPfcXoff = 5,
                   kGPfcXonOffset = 6, kGPfcXonCells = 7, kGPfcXonRatio = 8;
constexpr uint32_t kEMode = 0, kEK = 1, kEKmin = 2, kEKmax = 3, kEP32Lo = 4, kEP32Hi = 5, kEKHigh = 6, kEKLow = 7;
constexpr uint32_t kLFlags = 0, kLReserve = 1, kLStatic = 2, kLHeadroom = 3;
// qm.sv's NOCELL: all ones in the CW = clog2(CELLS) + 1 bit cell pointer.
constexpr uint32_t no_cell_rtl() {
  unsigned aw = 0;
  while ((uint64_t(1) << aw) < QmRtl::kCells) ++aw;
  return uint32_t((uint64_t(1) << (aw + 1)) - 1);
}
constexpr uint32_t kNoCellRtl = no_cell_rtl();

constexpr uint32_t addr(uint32_t region, uint32_t index, uint32_t sub, uint32_t field) {
  return region << 20 | index << 8 | sub << 5 | field;
}

uint32_t cell_out(uint32_t c) { return c == kNoCellRtl ? qm::kNoCell : c; }

// A value the RTL stores in `bits` bits, or std::invalid_argument naming it.
uint32_t fit(uint64_t v, unsigned bits, const std::string& what) {
  if (bits < 64 && v >> bits) {
    std::ostringstream m;
    m << "rtl qm: " << what << " = " << v << " does not fit the RTL's " << bits << "-bit field";
    throw std::invalid_argument(m.str());
  }
  return static_cast<uint32_t>(v);
}

std::string where(const char* kind, size_t port, unsigned idx, const char* field) {
  std::ostringstream m;
  m << "port " << port << " " << kind << " " << idx << " " << field;
  return m.str();
}

// The result-port fields an enqueue and a dequeue result share: the charge
// (ports, PG, queue, pools, the five buckets), the PG after, PFC and ECN.
template <class R>
void read_common(const Vqm& t, R& r) {
  r.charge = {static_cast<uint16_t>(t.res_in_port),
              static_cast<uint8_t>(t.res_pg),
              static_cast<uint16_t>(t.res_out_port),
              static_cast<uint8_t>(t.res_queue),
              static_cast<uint8_t>(t.res_in_pool),
              static_cast<uint8_t>(t.res_eg_pool),
              t.res_in_reserved,
              t.res_in_shared,
              t.res_headroom,
              t.res_eg_reserved,
              t.res_eg_shared};
  r.pg = {t.res_pg_reserved, t.res_pg_shared, t.res_pg_headroom, t.res_pg_threshold};
  r.pfc = static_cast<qm::PfcAction>(t.res_pfc);
  r.ecn = {bool(t.res_ecn_decided), bool(t.res_ecn_fired), bool(t.res_ecn_mark), bool(t.res_ecn_drew)};
}

}  // namespace

QmRtl::QmRtl(const qm::Config& cfg) : QmRtl(cfg, true) {}

void QmRtl::check(const qm::Config& cfg) { QmRtl probe(cfg, false); }

QmRtl::QmRtl(const qm::Config& cfg, bool build) : m_cfg(cfg), m_ctx(std::make_unique<VerilatedContext>()) {
  // The same refusals as the C++ model, then the RTL's own limits.
  const std::vector<std::string> errs = mmu::validate(cfg.mmu);
  if (!errs.empty()) {
    std::string msg;
    for (const std::string& e : errs) msg += (msg.empty() ? "" : "\n") + e;
    throw std::invalid_argument(msg);
  }
  for (const ecn::MarkerConfig& mc : cfg.ecn) {
    const std::vector<std::string> e = mc.validate();
    if (!e.empty()) {
      std::string all = "ECN marker configuration:";
      for (const std::string& s : e) all += "\n" + s;
      throw std::invalid_argument(all);
    }
  }
  const mmu::Config& mc = cfg.mmu;
  fit(mc.ports.size(), 32, "ports");
  if (mc.ports.size() > kPorts) fit(mc.ports.size(), 0, "ports (at most " + std::to_string(kPorts) + ")");
  if (mc.total_cells > kCells) fit(mc.total_cells, 0, "total_cells (at most " + std::to_string(kCells) + ")");
  if (mc.pools.size() > kPools) fit(mc.pools.size(), 0, "pools (at most " + std::to_string(kPools) + ")");
  fit(mc.total_cells, kCntW, "total_cells");
  fit(uint64_t(mc.total_cells) * mc.cell_bytes, kByteW, "total_cells * cell_bytes");

  // check(): every refusal below comes from fit() on a value the CSRs would
  // get; without a model the CSR writes are skipped, so none is clocked.
  if (build) {
    m_ctx->traceEverOn(ROCESIM_QM_RTL_TRACE != 0);
    m_top = std::make_unique<Vqm>(m_ctx.get(), "qm");
    m_top->clk = 0;
    m_top->rst = 1;
    m_top->csr_valid = 0;
    m_top->op_valid = 0;
    m_top->eval();
    tick();
    tick();
    m_top->rst = 0;
  }

  csr(addr(kRegionGlobal, 0, 0, kGTotalCells), mc.total_cells);
  csr(addr(kRegionGlobal, 0, 0, kGPorts), static_cast<uint32_t>(mc.ports.size()));
  csr(addr(kRegionGlobal, 0, 0, kGSharedHdrm), fit(mc.shared_headroom_cells, kCntW, "shared_headroom_cells"));
  const pfc::GeneratorConfig& g = cfg.pfc;
  csr(addr(kRegionGlobal, 0, 0, kGPfcCtrl), uint32_t(cfg.pfc_enabled) | uint32_t(g.dynamic_xoff) << 1 |
                                                 uint32_t(g.xon_rule) << 2 | uint32_t(cfg.pfc_pgs) << 8);
  csr(addr(kRegionGlobal, 0, 0, kGPfcXoff), fit(g.xoff_cells, kPfcW, "pfc xoff_cells"));
  csr(addr(kRegionGlobal, 0, 0, kGPfcXonOffset), fit(g.xon_offset_cells, kPfcW, "pfc xon_offset_cells"));
  csr(addr(kRegionGlobal, 0, 0, kGPfcXonCells), fit(g.xon_cells, kPfcW, "pfc xon_cells"));
  if (g.xon_ratio_q16 > pfc::kXonRatioOne) fit(g.xon_ratio_q16, 16, "pfc xon_ratio_q16 (at most 2^16)");
  csr(addr(kRegionGlobal, 0, 0, kGPfcXonRatio), g.xon_ratio_q16);
  for (size_t i = 0; i < mc.pools.size(); ++i) {
    csr(addr(kRegionPool, uint32_t(i), 0, 0), fit(mc.pools[i].size_cells, kCntW, "pool " + mc.pools[i].name + " size"));
  }
  for (unsigned q = 0; q < qm::kQueues; ++q) {
    const ecn::MarkerConfig& e = cfg.ecn[q];
    const std::string n = "ecn queue " + std::to_string(q) + " ";
    csr(addr(kRegionEcn, 0, q, kEMode), uint32_t(e.mode) | uint32_t(e.point) << 2 | uint32_t(e.unit) << 3);
    csr(addr(kRegionEcn, 0, q, kEK), fit(e.k, kEcnW, n + "k"));
    csr(addr(kRegionEcn, 0, q, kEKmin), fit(e.kmin, kEcnW, n + "kmin"));
    csr(addr(kRegionEcn, 0, q, kEKmax), fit(e.kmax, kEcnW, n + "kmax"));
    const uint64_t p32 = e.mode == ecn::MarkerConfig::Mode::wred ? ecn::pmax_fixed(e.pmax) : 0;
    csr(addr(kRegionEcn, 0, q, kEP32Lo), static_cast<uint32_t>(p32));
    csr(addr(kRegionEcn, 0, q, kEP32Hi), static_cast<uint32_t>(p32 >> 32));
    csr(addr(kRegionEcn, 0, q, kEKHigh), fit(e.k_high, kEcnW, n + "k_high"));
    csr(addr(kRegionEcn, 0, q, kEKLow), fit(e.k_low, kEcnW, n + "k_low"));
  }
  // Threshold modes resolved here (from_pool takes the pool's mode): a
  // configuration-time choice, as the headroom sizes are.
  auto flags = [&](const auto& prof, bool lossless) {
    const mmu::ThresholdMode m =
        prof.threshold.mode == mmu::ThresholdMode::from_pool ? mc.pools[prof.pool].mode : prof.threshold.mode;
    return uint32_t(lossless) | uint32_t(m == mmu::ThresholdMode::dynamic_th) << 1 |
           (uint32_t(prof.threshold.dynamic_th) & 0xfu) << 4 | prof.pool << 8;
  };
  for (size_t p = 0; p < mc.ports.size(); ++p) {
    const uint32_t port = static_cast<uint32_t>(p);
    for (unsigned i = 0; i < 8; ++i) {
      const mmu::PgProfile& pg = mc.ports[p].pgs[i];
      csr(addr(kRegionPg, port, i, kLFlags), flags(pg, pg.lossless));
      csr(addr(kRegionPg, port, i, kLReserve), fit(pg.reserved_cells, kCntW, where("pg", p, i, "reserved_cells")));
      csr(addr(kRegionPg, port, i, kLStatic),
          fit(pg.threshold.static_cells, kCntW, where("pg", p, i, "static_cells")));
      csr(addr(kRegionPg, port, i, kLHeadroom), fit(pg.headroom_cells, kCntW, where("pg", p, i, "headroom_cells")));
      const mmu::QueueProfile& qp = mc.ports[p].queues[i];
      csr(addr(kRegionQueue, port, i, kLFlags), flags(qp, false));
      csr(addr(kRegionQueue, port, i, kLReserve),
          fit(qp.reserved_cells, kCntW, where("queue", p, i, "reserved_cells")));
      csr(addr(kRegionQueue, port, i, kLStatic),
          fit(qp.threshold.static_cells, kCntW, where("queue", p, i, "static_cells")));
    }
  }
  // Build the free list and clear the state; the RTL is busy meanwhile.
  csr(addr(kRegionGlobal, 0, 0, kGCtrl), 1);
  if (!m_top) return;
  while (m_top->busy) tick();
}

void write_coverage(VerilatedContext& ctx) {
#if ROCESIM_QM_RTL_COVERAGE
  static std::atomic<unsigned> seq{0};
  const char* env = std::getenv("ROCESIM_RTL_COVERAGE_DIR");
  const std::filesystem::path dir = env && *env ? env : ROCESIM_QM_RTL_COVERAGE_DIR;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path file =
      dir / ("qm-" + std::to_string(::getpid()) + "-" + std::to_string(seq++) + ".dat");
  ctx.coveragep()->write(file.c_str());  // Verilator stops the program if it cannot write
#else
  (void)ctx;
#endif
}

QmRtl::~QmRtl() {
  if (m_top) {
    m_top->final();
    write_coverage(*m_ctx);  // the coverage build only
  }
#if ROCESIM_QM_RTL_TRACE
  if (m_fst) m_fst->close();
#endif
}

void QmRtl::set_clock(uint64_t period_ps, std::function<uint64_t()> now_ps) {
  if (period_ps < 2) throw std::invalid_argument("rtl qm: the clock period must be at least 2 ps");
  m_period_ps = period_ps;
  m_now = std::move(now_ps);
}

uint64_t QmRtl::edge_time(bool rising) {
  if (!m_period_ps) return m_cycles * 2 + (rising ? 0 : 1);
  if (!rising) return m_rise_ps + m_period_ps / 2;
  uint64_t t = m_clocked ? m_rise_ps + m_period_ps : 0;  // one period after the last rising edge
  if (m_op_start) {
    m_op_start = false;
    t = std::max(t, m_now());
  }
  m_clocked = true;
  return m_rise_ps = t;
}

void QmRtl::open_fst(const std::string& path) {
#if ROCESIM_QM_RTL_TRACE
  m_fst = std::make_unique<VerilatedFstC>();
  m_top->trace(m_fst.get(), 99);
  m_fst->open(path.c_str());
#else
  throw std::runtime_error("rtl qm: built without trace support (ROCESIM_RTL_TRACE); cannot write " + path);
#endif
}

void QmRtl::trace(const std::string& fst_path) {
  stop_trace();
  open_fst(fst_path);
#if ROCESIM_QM_RTL_TRACE
  m_fst->dump(m_period_ps ? m_rise_ps : m_cycles * 2);
#endif
}

void QmRtl::trace(const std::string& fst_path, uint64_t from_ps, uint64_t to_ps) {
#if ROCESIM_QM_RTL_TRACE
  stop_trace();
  m_win_path = fst_path;
  m_win_from = from_ps;
  m_win_to = to_ps;
#else
  (void)from_ps;
  (void)to_ps;
  throw std::runtime_error("rtl qm: built without trace support (ROCESIM_RTL_TRACE); cannot write " + fst_path);
#endif
}

void QmRtl::stop_trace() {
#if ROCESIM_QM_RTL_TRACE
  if (m_fst) m_fst->close();
  m_fst.reset();
#endif
  m_win_path.clear();
}

void QmRtl::emit(uint64_t t) {
#if ROCESIM_QM_RTL_TRACE
  if (!m_win_path.empty() && !m_fst && t >= m_win_from && t <= m_win_to) open_fst(m_win_path);
  if (!m_fst) return;
  if (!m_win_path.empty() && t > m_win_to) return stop_trace();
  m_fst->dump(t);
#else
  (void)t;
#endif
}

void QmRtl::tick() {
  m_top->clk = 1;
  m_top->eval();
  ++m_cycles;
  emit(edge_time(true));
  m_top->clk = 0;
  m_top->eval();
  emit(edge_time(false));
}

void QmRtl::csr(uint32_t a, uint32_t data) {
  if (!m_top) return;  // check()
  m_top->csr_valid = 1;
  m_top->csr_addr = a;
  m_top->csr_data = data;
  tick();
  m_top->csr_valid = 0;
}

void QmRtl::start_op(unsigned kind) {
  m_op_start = true;
  m_top->op_kind = kind;
  m_top->op_valid = 1;
  m_top->eval();
  while (!m_top->op_ready) {
    tick();
    m_top->eval();
  }
  tick();  // accepted at this edge
  m_top->op_valid = 0;
  for (unsigned guard = 0; !m_top->res_valid; ++guard) {
    if (guard > 4 * kCells + 16) throw std::runtime_error("rtl qm: no result (the engine hangs)");
    tick();
  }
  m_last_cycles = m_top->res_cycles;
}

namespace {
void check_ports(uint16_t a, uint16_t b, unsigned idx_a, unsigned idx_b, const char* what) {
  if (a >= QmRtl::kPorts || b >= QmRtl::kPorts || idx_a >= 8 || idx_b >= 8) {
    std::ostringstream m;
    m << "rtl qm: malformed " << what << " (ports " << a << ", " << b << "; index " << idx_a << ", " << idx_b << ")";
    throw std::invalid_argument(m.str());
  }
}
}  // namespace

qm::EnqueueResult QmRtl::enqueue(const qm::EnqueueOp& op) {
  check_ports(op.in_port, op.out_port, op.pg, op.queue, "enqueue");
  if (op.ecn > 3) throw std::invalid_argument("rtl qm: enqueue codepoint " + std::to_string(op.ecn) + " > 3");
  Vqm& t = *m_top;
  t.op_in_port = op.in_port;
  t.op_pg = op.pg;
  t.op_out_port = op.out_port;
  t.op_queue = op.queue;
  t.op_cells = fit(op.cells, kCntW, "enqueue cells");
  t.op_bytes = fit(op.bytes, kByteW, "enqueue bytes");
  t.op_lossless = op.lossless;
  t.op_ecn_frame = op.ecn_frame;
  t.op_ecn = op.ecn;
  t.op_rand32 = op.rand32;
  t.op_discard = 0;
  start_op(kOpEnqueue);
  if (t.res_error) {
    std::ostringstream m;
    m << "rtl qm: malformed enqueue (in_port " << op.in_port << ", pg " << unsigned(op.pg) << ", out_port "
      << op.out_port << ", queue " << unsigned(op.queue) << ", cells " << op.cells << ")";
    throw std::invalid_argument(m.str());
  }
  qm::EnqueueResult r;
  r.verdict = static_cast<mmu::Verdict>(t.res_verdict);
  r.lossless = t.res_lossless;
  r.in_headroom = t.res_in_headroom;
  r.head_cell = cell_out(t.res_head_cell);
  read_common(t, r);
  return r;
}

qm::DequeueResult QmRtl::dequeue(const qm::DequeueOp& op) {
  check_ports(op.port, op.port, op.queue, op.queue, "dequeue");
  if (op.ecn > 3) throw std::invalid_argument("rtl qm: dequeue codepoint " + std::to_string(op.ecn) + " > 3");
  Vqm& t = *m_top;
  t.op_out_port = op.port;
  t.op_queue = op.queue;
  t.op_ecn_frame = op.ecn_frame;
  t.op_ecn = op.ecn;
  t.op_rand32 = op.rand32;
  t.op_discard = op.discard;
  start_op(kOpDequeue);
  if (t.res_error) {
    std::ostringstream m;
    m << "rtl qm: dequeue from port " << op.port << " queue " << unsigned(op.queue);
    if (op.port >= m_cfg.mmu.ports.size()) throw std::invalid_argument(m.str() + ": no such port");
    throw std::logic_error(m.str() + ": the queue is empty");
  }
  qm::DequeueResult r;
  r.head_cell = cell_out(t.res_head_cell);
  r.cells = t.res_cells;
  r.bytes = t.res_bytes;
  read_common(t, r);
  return r;
}

qm::PfcAction QmRtl::pfc_tick(uint16_t port, uint8_t pg) {
  check_ports(port, port, pg, pg, "pfc_tick");
  m_top->op_in_port = port;
  m_top->op_pg = pg;
  start_op(kOpPfcTick);
  if (m_top->res_error) {
    throw std::invalid_argument("rtl qm: pfc_tick on port " + std::to_string(port) + ": no such port");
  }
  return static_cast<qm::PfcAction>(m_top->res_pfc);
}

void QmRtl::select(uint16_t port, uint8_t idx) const {
  if (port >= kPorts || idx >= 8) {
    throw std::invalid_argument("rtl qm: read of port " + std::to_string(port) + " index " + std::to_string(idx));
  }
  m_top->rd_qidx = uint32_t(port) * 8 + idx;
  m_top->eval();
}

uint32_t QmRtl::head_cell(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return cell_out(m_top->rd_q_head);
}
uint32_t QmRtl::queue_tail(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return cell_out(m_top->rd_q_tail);
}
uint32_t QmRtl::queue_packets(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return m_top->rd_q_packets;
}
uint64_t QmRtl::queue_bytes(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return m_top->rd_q_bytes;
}
bool QmRtl::ecn_hysteresis(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return m_top->rd_q_hyst;
}
uint32_t QmRtl::next_cell(uint32_t cell) const {
  if (cell >= kCells) throw std::invalid_argument("rtl qm: next_cell of cell " + std::to_string(cell));
  m_top->rd_cell = cell;
  m_top->eval();
  return cell_out(m_top->rd_next_cell);
}
uint32_t QmRtl::free_cells() const { return m_top->rd_free_count; }
uint32_t QmRtl::free_head() const { return cell_out(m_top->rd_free_head); }
uint32_t QmRtl::headroom_pool_used() const { return m_top->rd_hdrm_used; }
uint32_t QmRtl::pool_used(uint8_t pool) const {
  if (pool >= kPools) throw std::invalid_argument("rtl qm: pool " + std::to_string(pool));
  m_top->rd_pool = pool;
  m_top->eval();
  return m_top->rd_pool_used;
}
bool QmRtl::xoff(uint16_t port, uint8_t pg) const {
  select(port, pg);
  return m_top->rd_pg_xoff;
}
mmu::PgState QmRtl::pg_state(uint16_t port, uint8_t pg) const {
  select(port, pg);
  return {m_top->rd_pg_reserved, m_top->rd_pg_shared, m_top->rd_pg_headroom, m_top->rd_pg_threshold};
}
mmu::QueueState QmRtl::queue_state(uint16_t port, uint8_t queue) const {
  select(port, queue);
  return {m_top->rd_q_reserved, m_top->rd_q_shared, m_top->rd_q_threshold};
}
uint32_t QmRtl::cells_for(uint64_t bytes) const {
  return static_cast<uint32_t>(mmu::cells_for_bytes(bytes, m_cfg.mmu.cell_bytes));
}

}  // namespace rocesim::rtl

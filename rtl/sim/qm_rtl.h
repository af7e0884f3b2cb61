// The queue manager RTL (rtl/qm/qm.sv) behind qm::QueueManagerIf: a driver
// of its Verilated model (--cc) that writes the configuration through the
// CSR port, issues one operation on the valid/ready port, clocks until the
// result and reads the state through the read port. No SystemC.
//
// The C++ model (qm::QueueManager) and this class implement the same
// interface, so a test or a lockstep scoreboard drives both with the same
// operations and compares results and reads field by field.
//
// The RTL is built with fixed parameters (rtl/CMakeLists.txt,
// ROCESIM_RTL_QM_PARAMS): at most kPorts ports, kCells cells, kPools pools,
// cell quantities below 2^kCntW, byte counts below 2^kByteW, ECN thresholds
// below 2^kEcnW and PFC thresholds below 2^kPfcW. A configuration outside
// them is refused (std::invalid_argument naming the value and the limit), as
// is one that mmu::validate or a marker's validate refuses.
//
// Errors mirror the C++ model: a malformed operation (port, PG or queue out
// of range, zero cells) throws std::invalid_argument, a dequeue from an empty
// queue std::logic_error; in both cases nothing changed (the RTL reports
// res_error and changes no state).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "qm/queue_manager.h"

class Vqm;
class VerilatedContext;
class VerilatedFstC;

namespace rocesim::rtl {

class QmRtl final : public qm::QueueManagerIf {
 public:
  static constexpr uint32_t kPorts = ROCESIM_QM_RTL_PORTS;
  static constexpr uint32_t kCells = ROCESIM_QM_RTL_CELLS;
  static constexpr uint32_t kPools = ROCESIM_QM_RTL_POOLS;
  static constexpr unsigned kCntW = ROCESIM_QM_RTL_CNT_W;
  static constexpr unsigned kByteW = ROCESIM_QM_RTL_BYTE_W;
  static constexpr unsigned kEcnW = ROCESIM_QM_RTL_ECN_W;
  static constexpr unsigned kPfcW = ROCESIM_QM_RTL_PFC_W;

  explicit QmRtl(const qm::Config& cfg);
  // Whether cfg fits the RTL as built: the constructor's refusals, without
  // building the model (no clock: about 1/10^4 of a construction's cost).
  static void check(const qm::Config& cfg);
  ~QmRtl() override;
  QmRtl(const QmRtl&) = delete;
  QmRtl& operator=(const QmRtl&) = delete;

  qm::EnqueueResult enqueue(const qm::EnqueueOp& op) override;
  qm::DequeueResult dequeue(const qm::DequeueOp& op) override;
  qm::PfcAction pfc_tick(uint16_t port, uint8_t pg) override;

  uint32_t head_cell(uint16_t port, uint8_t queue) const override;
  uint32_t queue_packets(uint16_t port, uint8_t queue) const override;
  uint64_t queue_bytes(uint16_t port, uint8_t queue) const override;
  uint32_t next_cell(uint32_t cell) const override;
  uint32_t free_cells() const override;
  bool xoff(uint16_t port, uint8_t pg) const override;
  mmu::PgState pg_state(uint16_t port, uint8_t pg) const override;
  mmu::QueueState queue_state(uint16_t port, uint8_t queue) const override;
  uint32_t cells_for(uint64_t bytes) const override;

  // RTL-only reads.
  uint32_t queue_tail(uint16_t port, uint8_t queue) const;  // kNoCell when empty
  bool ecn_hysteresis(uint16_t port, uint8_t queue) const;  // the marker's hysteresis flag
  uint32_t free_head() const;                               // kNoCell when the list is empty
  uint32_t pool_used(uint8_t pool) const;
  uint32_t headroom_pool_used() const;

  // Timing: the last operation's res_cycles (edges from acceptance to its
  // result; qm.sv states them per operation) and the clock edges since
  // construction (configuration and the free-list build included).
  uint32_t last_cycles() const { return m_last_cycles; }
  uint64_t cycles() const { return m_cycles; }

  // Waveform time (1 ps units). By default clock edge k is dumped at times
  // 2k (rising) and 2k + 1 (falling). With a clock, the first rising edge of
  // an operation issued at simulated time t (ps, from now_ps) is at t, or one
  // period after the previous rising edge when that is later (operations
  // closer together than their cycles); each later edge one period on, each
  // falling edge half a period after its rising one. So the RTL's waveform
  // lines up with the TLM model's (--trace) and time never goes backwards.
  // The model's clock runs only while an operation is in flight: idle
  // stretches cost nothing.
  void set_clock(uint64_t period_ps, std::function<uint64_t()> now_ps);

  // FST waveform of every signal from now on (the model must be built with
  // trace support: ROCESIM_RTL_TRACE; otherwise std::runtime_error), until
  // stop_trace() or destruction.
  void trace(const std::string& fst_path);
  // The same for the edges in [from_ps, to_ps] only (times as set_clock
  // gives them): the file is opened at the first edge at or after from_ps
  // (a full dump of every signal there) and closed after the last edge at or
  // before to_ps; no edge in the window, no file.
  void trace(const std::string& fst_path, uint64_t from_ps, uint64_t to_ps);
  void stop_trace();
  bool tracing() const { return m_fst != nullptr; }

 private:
  QmRtl(const qm::Config& cfg, bool build);  // build false: check() only
  void tick();  // one clock edge (low, high)
  uint64_t edge_time(bool rising);  // the dump time of the next half cycle
  void emit(uint64_t t);            // dumps at t (opening or closing a windowed trace)
  void open_fst(const std::string& path);
  void csr(uint32_t addr, uint32_t data);
  void start_op(unsigned kind);  // drives op_valid until accepted, then clocks until res_valid
  void select(uint16_t port, uint8_t idx) const;

  qm::Config m_cfg;
  std::unique_ptr<VerilatedContext> m_ctx;
  std::unique_ptr<Vqm> m_top;
  std::unique_ptr<VerilatedFstC> m_fst;
  uint64_t m_cycles = 0;
  uint32_t m_last_cycles = 0;
  uint64_t m_period_ps = 0;         // 0: no clock (edge k at times 2k and 2k + 1)
  std::function<uint64_t()> m_now;
  uint64_t m_rise_ps = 0;           // the last rising edge's time (with a clock)
  bool m_clocked = false;           // a rising edge has been timed
  bool m_op_start = false;          // the next edge starts an operation (aligns to now)
  std::string m_win_path;           // a windowed trace not opened yet (empty: none)
  uint64_t m_win_from = 0, m_win_to = UINT64_MAX;
};

// The coverage build (rocesim_qm_rtl_cov in rtl/CMakeLists.txt; docs/rtl.md,
// "Coverage"): writes the line and toggle counters of the models in `ctx` to
// a file of their own (pid, sequence number) in $ROCESIM_RTL_COVERAGE_DIR, by
// default the build tree's rtl-coverage/raw. The counters live in the model,
// so this must run before it is destroyed: QmRtl's destructor calls it, and
// so must a test that drives a Verilated model of its own. In the normal
// build it does nothing.
void write_coverage(VerilatedContext& ctx);

}  // namespace rocesim::rtl

// DCQCN reaction point (RP): the per-QP rate controller at the sender, as a
// deterministic state machine over three inputs, on_cnp(), on_bytes_sent()
// and advance(). No SystemC: time is integer picoseconds passed in by the
// caller, which asks next_event_ps() when to wake up next and calls
// advance(t) then (or later; advance processes every timer event up to t in
// time order, each at its exact time). All inputs must come with
// non-decreasing times; an earlier time is taken as the latest time seen.
//
// Sources: D. Zhu et al., "Congestion Control for Large-Scale RDMA
// Deployments", SIGCOMM 2015 (the RP algorithm, built on QCN, IEEE
// 802.1Qau); NVIDIA's DCQCN parameter documentation (DOCA "DCQCN CC
// Parameters", MLNX_OFED ecn/roce_rp sysfs and mlxconfig ROCE CC fields) for
// the ConnectX parameters; /work/shared/design/REFERENCE.md "DCQCN". Other
// models consulted where the paper leaves details open (noted below):
// Google's isekai (rdma_roce_cc_dcqcn), htsim (dcqcn.cpp) and HPCC's ns-3
// (rdma-hw.cc). No code is taken from them.
//
// State: RC (current rate, the pacing rate), RT (target rate), alpha, the
// stage counters i (timer events since the last decrease) and j (byte-
// counter events since the last decrease), the byte accumulator, and three
// deadlines (pending decrease, alpha timer, increase timer).
//
// Idle (before the first CNP, and after a release):
//   RC = initial rate (line rate unless configured; line rate after a
//   release), RT = line rate, alpha = initial_alpha. No timer runs
//   (next_event_ps() == kNever) and sent bytes are not counted: the flow
//   runs at RC until a CNP arrives. Timers start at the first CNP, as in the
//   paper and the ns-3 model.
//
// CNP arrival at time t (on_cnp): first advance(t). Then the CNP is
//   processed at t if the RP is idle, or if no decrease happened in
//   (t - P, t] where P = rate_reduce_monitor_period (P = 0: always); else,
//   if no decrease is pending, a decrease is scheduled at last_decrease + P
//   and this CNP waits for it; if one is already pending the CNP is merged
//   into it (counters().cnps_coalesced). So there is at most one decrease
//   per P (NVIDIA: "the minimum time between 2 consecutive rate reductions";
//   the firmware reduces at the start of the next period, here the first CNP
//   after a quiet period acts at once).
//
// Processing a CNP (a decrease) at time t, with alpha, RC, RT before it:
//   first CNP of an idle RP with rate_on_first_cnp R1 > 0:
//                 RC = RT = R1; alpha = initial_alpha (not updated); go to (5).
//   (1) clamp:   RT = RC  if clamp_target, or j > 0, or
//                          (clamp_target_after_timer_increase and i > 0);
//                otherwise RT is unchanged. (Paper: always. NVIDIA: only
//                when the rate was increased since the last decrease; on
//                the first CNP i = j = 0, so RT stays at line rate.)
//   (2) cut:     RC = max(min_rate, floor(RC * max(1 - alpha*gain, min_dec)))
//                gain = decrease_gain (1/2: the paper's RC*(1 - alpha/2)),
//                min_dec = min_dec_factor (NVIDIA rpg_min_dec_fac: one
//                decrease cuts at most to min_dec*RC). The product is taken
//                in IEEE double and floored to whole bit/s.
//   (3) alpha:   alpha = (1 - g)*alpha + g   (after the cut, which used the
//                old alpha: the first CNP with alpha = 1 halves RC).
//   (4) reset:   i = j = 0, byte accumulator = 0.
//   (5) timers:  alpha timer due at t + K, increase timer due at t + T
//                (restarted, not just started), last_decrease = t.
//
// Alpha timer expiry at t (K after the last decrease or the last expiry, so
//   no CNP was processed in the period): alpha = (1 - g)*alpha; next at t+K.
//   Without CNPs, n expiries give alpha_n = alpha_0 * (1-g)^n (computed by
//   n multiplications).
//
// Rate-increase events: the timer (every T while active: i += 1) and the
//   byte counter (bytes passed to on_bytes_sent while active accumulate;
//   each time the accumulator reaches B it drops by B and j += 1; several
//   events may come from one call, all at its time). With i, j counting the
//   current event, F = fast_recovery_stages:
//     max(i, j) <= F : fast recovery   RT unchanged
//     min(i, j) >  F : hyper increase  RT += R_HAI
//                                      (hyper_scaled_by_stage: R_HAI*(min(i,j)-F))
//     otherwise      : additive        RT += R_AI
//   then RT = min(RT, line_rate) and RC = ceil((RT + RC) / 2) (RC <= RT
//   always holds, so RC never passes RT and reaches it exactly).
//   Consequences: after a decrease to R0 with target RT and only timer
//   events, event k = 1..F gives R_k = RT - floor((RT - R0) / 2^k) (exactly
//   the paper's R_T - (R_T - R_0)/2^k when 2^F divides RT - R0); events
//   F+1, F+2, ... are additive (j = 0 stays <= F), each raising RT by R_AI;
//   once both counters exceed F every event is hyper, raising RT by R_HAI.
//   (The paper's prose: fast recovery for F rounds, additive increase once
//   the timer or the byte counter passes F, hyper increase once both do.
//   The DCQCN paper does not fix whether hyper steps grow with the stage;
//   NVIDIA and HPCC's ns-3 add R_HAI per event, the QCN standard
//   R_HAI*(stage - F); both are available.)
//   Release (release_at_line_rate): when an increase makes RC = line rate
//   and no decrease is pending, the RP goes idle (ConnectX frees the rate
//   limiter; the next CNP is a first CNP with alpha = initial_alpha).
//
// Bounds: min_rate <= RC <= RT <= line_rate at all times (validate() makes
//   min_rate <= initial rate <= line rate).
//
// Same-time order: the inputs of a call are handled after every timer event
//   due at or before its time; among timer events due at the same time, the
//   pending decrease comes first (it restarts the other two timers, which
//   then do not fire at that time), then the alpha timer, then the increase
//   timer.
//
// Presets (DcqcnConfig::paper / ::nvidia; rates in bit/s, times in us):
//   parameter              paper (Zhu et al. 2015)    nvidia (ConnectX firmware)
//   g                      1/256                      5/1024   (dce_tcp_g 1019: alpha' = alpha*1019/1024 [+ 5/1024])
//   initial_alpha          1                          1023/1024 (initial_alpha_value 1023)
//   alpha period K         55                         1        (dce_tcp_rtt 1)
//   increase timer T       55                         300      (rpg_time_reset 300)
//   byte counter B         10 MB (10^7 bytes)         32767*64 = 2,097,088 bytes
//                                                              (rpg_byte_reset 32767, read in 64-byte units as
//                                                              isekai does; taken literally as bytes it would be 32767)
//   F                      5                          1        (rpg_threshold 1)
//   R_AI                   40 Mb/s                    5 Mb/s   (rpg_ai_rate 5)
//   R_HAI                  200 Mb/s                   50 Mb/s  (rpg_hai_rate 50)
//   hyper step             R_HAI per event            R_HAI per event
//   min rate               100 Mb/s (HPCC ns-3;       1 Mb/s   (rpg_min_rate 1)
//                          the paper gives none)
//   decrease gain          1/2                        1/2      (rpg_gd 11: alpha/2^(11-10))
//   min_dec_factor         0 (none)                   0.5      (rpg_min_dec_fac 50 %)
//   monitor period P       0 (every CNP)              4        (rate_reduce_monitor_period 4)
//   clamp_target           true                       false    (clamp_tgt_rate 0)
//   clamp after timer inc  (moot)                     true     (clamp_tgt_rate_after_time_inc 1)
//   rate_on_first_cnp      off                        off      (rate_to_set_on_first_cnp 0)
//   release at line rate   no                         yes
//   min_time_between_cnps  50                         4        (min_time_between_cnps 4)
//   CNP priority / DSCP    6 / 48                     6 / 48   (cnp_802p_prio 6, cnp_dscp 48)
// The NVIDIA values are the firmware defaults as listed by mlxconfig on
// ConnectX-4 Lx/5 (RPG_*, DCE_TCP_*, RATE_REDUCE_MONITOR_PERIOD,
// INITIAL_ALPHA_VALUE, MIN_TIME_BETWEEN_CNPS, CNP_*). REFERENCE.md lists
// R_AI, R_HAI, min rate, min_dec_fac, g, initial alpha, the monitor period,
// the timer and the CNP spacing; F, B, K and the clamp flags come from the
// same firmware listing. Known simplifications against the hardware: alpha
// and rates are not quantized (the NIC keeps alpha in 10-bit fixed point and
// rates in its rate-limiter granularity), and the alpha timer restarts at
// each decrease instead of running on a free grid.
//
// Observability: counters(), the current rate/target/alpha, an optional
// observer callback (a plain function pointer and context, called on every
// change) and an optional ring of the last N changes (capacity fixed at
// construction). No heap allocation after construction.
//
// Cost: O(1) per input and per timer event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nic/cc/dcqcn_config.h"

namespace rocesim::cc {

enum class RpEvent : uint8_t {
  first_cnp,          // an idle RP processed a CNP: timers start
  decrease,           // a later CNP processed: RT clamp, RC cut, alpha up
  alpha_decay,        // alpha timer without a CNP
  fast_recovery,      // increase event, max(i, j) <= F
  additive_increase,  // increase event, otherwise
  hyper_increase,     // increase event, min(i, j) > F
  release,            // RC reached line rate: idle again
};
const char* rp_event_name(RpEvent e);  // "first_cnp", "decrease", ...

enum class RpTrigger : uint8_t { cnp, alpha_timer, increase_timer, byte_counter };
const char* rp_trigger_name(RpTrigger t);  // "cnp", "alpha_timer", ...

// One change of the RP, with the state after it.
struct RpSample {
  uint64_t time_ps = 0;
  uint64_t rate_bps = 0;    // RC
  uint64_t target_bps = 0;  // RT
  double alpha = 0;
  RpEvent event = RpEvent::first_cnp;
  RpTrigger trigger = RpTrigger::cnp;
};

// Called after every change; ctx is the pointer given to set_observer().
using RpObserver = void (*)(void* ctx, const RpSample& s);

struct RpCounters {
  uint64_t cnps = 0;            // on_cnp() calls
  uint64_t cnps_coalesced = 0;  // CNPs merged into an already pending decrease
  uint64_t cnps_deferred = 0;   // CNPs that scheduled a decrease at the end of the monitor period
  uint64_t decreases = 0;       // CNPs processed (first_cnp + decrease events)
  uint64_t first_cnps = 0;      // of which by an idle RP
  uint64_t alpha_decays = 0;
  uint64_t timer_events = 0;    // increase events by kind of trigger
  uint64_t byte_events = 0;
  uint64_t fast_recovery = 0;   // increase events by stage
  uint64_t additive = 0;
  uint64_t hyper = 0;
  uint64_t releases = 0;
  uint64_t increase_events() const { return fast_recovery + additive + hyper; }
};

class DcqcnRp {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  // cfg must be valid (cfg.validate() empty). log_capacity: size of the ring
  // of the last changes (0 = no log).
  explicit DcqcnRp(const DcqcnConfig& cfg, size_t log_capacity = 0);

  // A CNP for this QP arrived at now_ps.
  void on_cnp(uint64_t now_ps);
  // The QP sent `bytes` (wire bytes of data packets, as the NIC chooses to
  // count them) at now_ps; drives the byte counter while active.
  void on_bytes_sent(uint64_t bytes, uint64_t now_ps);
  // Earliest pending timer event (decrease, alpha, increase), or kNever.
  uint64_t next_event_ps() const;
  // Process every timer event due at or before now_ps, in time order.
  void advance(uint64_t now_ps);

  uint64_t rate_bps() const { return rc_; }    // RC: the pacing rate
  uint64_t target_bps() const { return rt_; }  // RT
  double alpha() const { return alpha_; }
  bool active() const { return active_; }      // a CNP was processed and the RP was not released since
  bool decrease_pending() const { return cut_due_ != kNever; }
  uint64_t timer_stage() const { return i_; }  // i: timer increase events since the last decrease
  uint64_t byte_stage() const { return j_; }   // j: byte-counter increase events since the last decrease
  uint64_t byte_accumulator() const { return bytes_; }
  uint64_t last_decrease_ps() const { return last_cut_; }  // kNever before the first
  const RpCounters& counters() const { return counters_; }
  const DcqcnConfig& config() const { return cfg_; }

  // Observer (nullptr to remove). Called synchronously on every change.
  void set_observer(RpObserver fn, void* ctx) {
    observer_ = fn;
    observer_ctx_ = ctx;
  }

  // The ring of the last log_capacity changes, oldest first.
  size_t log_size() const { return log_count_; }
  const RpSample& log_at(size_t k) const;  // k < log_size()
  uint64_t log_overwritten() const { return log_overwritten_; }
  void clear_log();

  // Back to the constructed state (idle, counters and log cleared).
  void reset();

 private:
  void process_until(uint64_t t);  // timer events with due time <= t
  void cut(uint64_t t);            // process a CNP at t
  void alpha_expiry(uint64_t t);
  void increase(uint64_t t, RpTrigger trig);
  void go_idle();
  void emit(uint64_t t, RpEvent e, RpTrigger trig);
  uint64_t clock(uint64_t now_ps);  // max(now_ps, latest time seen)

  DcqcnConfig cfg_;
  uint64_t rc_ = 0, rt_ = 0;
  double alpha_ = 0;
  bool active_ = false;
  uint64_t i_ = 0, j_ = 0, bytes_ = 0;
  uint64_t cut_due_ = kNever, alpha_due_ = kNever, inc_due_ = kNever;
  uint64_t last_cut_ = kNever;
  uint64_t now_ = 0;
  RpCounters counters_;

  RpObserver observer_ = nullptr;
  void* observer_ctx_ = nullptr;
  std::vector<RpSample> log_;
  size_t log_head_ = 0, log_count_ = 0;  // next slot to write; number of valid entries
  uint64_t log_overwritten_ = 0;
};

}  // namespace rocesim::cc

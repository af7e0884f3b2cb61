// DCQCN parameters (reaction point and notification point), with the two
// presets the scenarios name: `paper` (Zhu et al., "Congestion Control for
// Large-Scale RDMA Deployments", SIGCOMM 2015) and `nvidia` (ConnectX-4 and
// later firmware defaults). Plain struct, no YAML: the scenario reader fills
// it (usually starting from a preset) and calls validate() before building
// DcqcnRp / DcqcnNp objects. The formulas that use each field, and the preset
// table with sources, are in nic/cc/dcqcn_rp.h.
//
// Units: rates in bit/s, times in integer picoseconds, sizes in bytes,
// fractions as doubles in [0, 1].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::cc {

inline constexpr uint64_t kPsPerUs = 1000000;
inline constexpr uint64_t kMbps = 1000000;  // bit/s in one Mb/s

struct DcqcnConfig {
  // ---- rates (bit/s) ----
  uint64_t line_rate_bps = 0;     // port speed; the ceiling of RC and RT (NVIDIA rpg_max_rate 0 = line rate)
  uint64_t initial_rate_bps = 0;  // RC before the first CNP; 0 = line rate
  uint64_t min_rate_bps = 0;      // floor of RC and RT (NVIDIA rpg_min_rate)
  // On the first CNP of an idle RP, set RC = RT = this instead of the
  // alpha-based cut (NVIDIA rate_to_set_on_first_cnp; 0 = off, the first CNP
  // is an ordinary decrease).
  uint64_t rate_on_first_cnp_bps = 0;

  // ---- alpha (congestion estimate) ----
  // Paper's g: alpha <- (1-g)*alpha + g on a CNP, alpha <- (1-g)*alpha per
  // alpha period without one. NVIDIA's dce_tcp_g is the weight of the OLD
  // value in 1/1024 units, so g = (1024 - dce_tcp_g)/1024 (see g_from_dce_tcp_g).
  double g = 0;
  double initial_alpha = 1.0;    // alpha used by the first CNP (NVIDIA initial_alpha_value/1024)
  uint64_t alpha_period_ps = 0;  // K, the alpha timer (NVIDIA dce_tcp_rtt)

  // ---- rate decrease ----
  // A decrease multiplies RC by max(1 - alpha*decrease_gain, min_dec_factor).
  // decrease_gain = 1/2 is the paper's RC*(1 - alpha/2); NVIDIA rpg_gd = 11
  // gives 2^(10-11) = 1/2, rpg_gd = 10 gives 1.
  double decrease_gain = 0.5;
  // Floor of the factor of one decrease: RC_new >= RC * min_dec_factor
  // (NVIDIA rpg_min_dec_fac / 100, "the maximal ratio of rate decrease in a
  // single event"; 0 = no floor).
  double min_dec_factor = 0;
  // At most one decrease per this period (NVIDIA rate_reduce_monitor_period);
  // CNPs that arrive sooner are merged into one decrease at the period's end.
  // 0 = every CNP decreases at once (the paper).
  uint64_t rate_reduce_monitor_period_ps = 0;
  // Target clamp on a decrease: RT = RC (before the cut) when clamp_target,
  // or when a byte-counter increase happened since the previous decrease, or
  // when clamp_target_after_timer_increase and a timer increase happened
  // since the previous decrease. Otherwise RT keeps its value.
  // Paper: clamp_target = true (RT = RC on every CNP). NVIDIA: clamp_tgt_rate
  // = 0, clamp_tgt_rate_after_time_inc = 1.
  bool clamp_target = true;
  bool clamp_target_after_timer_increase = true;

  // ---- rate increase ----
  uint64_t increase_timer_ps = 0;   // T, time between timer increase events (0 = no timer; NVIDIA rpg_time_reset)
  uint64_t byte_counter_bytes = 0;  // B, bytes sent between byte-counter events (0 = off; NVIDIA rpg_byte_reset)
  uint32_t fast_recovery_stages = 5;  // F (NVIDIA rpg_threshold)
  uint64_t ai_rate_bps = 0;           // R_AI, RT step in additive increase (NVIDIA rpg_ai_rate)
  uint64_t hai_rate_bps = 0;          // R_HAI, RT step in hyper increase (NVIDIA rpg_hai_rate)
  // false: RT += R_HAI per hyper event (NVIDIA, HPCC's ns-3).
  // true:  RT += R_HAI * (min(i, j) - F), the QCN (802.1Qau) form.
  bool hyper_scaled_by_stage = false;
  // When an increase brings RC to line rate, free the rate limiter: timers
  // stop and the next CNP is a first CNP again (alpha = initial_alpha). This
  // is the ConnectX behaviour (a limiter is allocated on the first CNP and
  // released at the maximum rate); the paper / ns-3 keep running.
  bool release_at_line_rate = false;

  // ---- notification point ----
  uint64_t min_time_between_cnps_ps = 0;  // per QP (NVIDIA min_time_between_cnps; paper 50 us)
  uint8_t cnp_priority = 6;               // 802.1p PCP of CNP frames (NVIDIA cnp_802p_prio)
  uint8_t cnp_dscp = 48;                  // DSCP of CNP frames (NVIDIA cnp_dscp)

  // RC before the first CNP (initial_rate_bps, or line rate when 0).
  uint64_t start_rate_bps() const { return initial_rate_bps ? initial_rate_bps : line_rate_bps; }

  // Zhu et al. 2015 parameters; see the preset table in nic/cc/dcqcn_rp.h.
  static DcqcnConfig paper(uint64_t line_rate_bps);
  // ConnectX firmware defaults; see the preset table in nic/cc/dcqcn_rp.h.
  static DcqcnConfig nvidia(uint64_t line_rate_bps);

  // One message per problem; empty when valid.
  std::vector<std::string> validate() const;
};

// NVIDIA's 10-bit dce_tcp_g (weight of the old alpha) as the paper's g.
constexpr double g_from_dce_tcp_g(uint32_t dce_tcp_g) { return double(1024 - dce_tcp_g) / 1024.0; }

}  // namespace rocesim::cc

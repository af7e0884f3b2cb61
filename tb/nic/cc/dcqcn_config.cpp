#include "nic/cc/dcqcn_config.h"

#include <sstream>

namespace rocesim::cc {

DcqcnConfig DcqcnConfig::paper(uint64_t line_rate_bps) {
  DcqcnConfig c;
  c.line_rate_bps = line_rate_bps;
  c.initial_rate_bps = 0;           // start at line rate
  c.min_rate_bps = 100 * kMbps;     // not in the paper; HPCC's ns-3 MinRate default
  c.rate_on_first_cnp_bps = 0;
  c.g = 1.0 / 256;
  c.initial_alpha = 1.0;
  c.alpha_period_ps = 55 * kPsPerUs;
  c.decrease_gain = 0.5;
  c.min_dec_factor = 0;
  c.rate_reduce_monitor_period_ps = 0;  // every CNP cuts
  c.clamp_target = true;
  c.clamp_target_after_timer_increase = true;
  c.increase_timer_ps = 55 * kPsPerUs;
  c.byte_counter_bytes = 10 * 1000 * 1000;  // 10 MB
  c.fast_recovery_stages = 5;
  c.ai_rate_bps = 40 * kMbps;
  c.hai_rate_bps = 200 * kMbps;
  c.hyper_scaled_by_stage = false;
  c.release_at_line_rate = false;
  c.min_time_between_cnps_ps = 50 * kPsPerUs;
  c.cnp_priority = 6;
  c.cnp_dscp = 48;
  return c;
}

DcqcnConfig DcqcnConfig::nvidia(uint64_t line_rate_bps) {
  DcqcnConfig c;
  c.line_rate_bps = line_rate_bps;          // rpg_max_rate 0 = line rate
  c.initial_rate_bps = 0;
  c.min_rate_bps = 1 * kMbps;               // rpg_min_rate 1
  c.rate_on_first_cnp_bps = 0;              // rate_to_set_on_first_cnp 0
  c.g = g_from_dce_tcp_g(1019);             // dce_tcp_g 1019 -> g = 5/1024
  c.initial_alpha = 1023.0 / 1024;          // initial_alpha_value 1023
  c.alpha_period_ps = 1 * kPsPerUs;         // dce_tcp_rtt 1
  c.decrease_gain = 0.5;                    // rpg_gd 11
  c.min_dec_factor = 0.5;                   // rpg_min_dec_fac 50
  c.rate_reduce_monitor_period_ps = 4 * kPsPerUs;  // rate_reduce_monitor_period 4
  c.clamp_target = false;                   // clamp_tgt_rate 0
  c.clamp_target_after_timer_increase = true;  // clamp_tgt_rate_after_time_inc 1
  c.increase_timer_ps = 300 * kPsPerUs;     // rpg_time_reset 300
  c.byte_counter_bytes = 32767ull * 64;     // rpg_byte_reset 32767, 64-byte units
  c.fast_recovery_stages = 1;               // rpg_threshold 1
  c.ai_rate_bps = 5 * kMbps;                // rpg_ai_rate 5
  c.hai_rate_bps = 50 * kMbps;              // rpg_hai_rate 50
  c.hyper_scaled_by_stage = false;
  c.release_at_line_rate = true;
  c.min_time_between_cnps_ps = 4 * kPsPerUs;  // min_time_between_cnps 4
  c.cnp_priority = 6;                       // cnp_802p_prio 6
  c.cnp_dscp = 48;                          // cnp_dscp 48
  return c;
}

namespace {
// True when x is in [lo, hi] (false for NaN).
bool in_closed(double x, double lo, double hi) { return x >= lo && x <= hi; }
}  // namespace

std::vector<std::string> DcqcnConfig::validate() const {
  std::vector<std::string> errs;
  auto add = [&](const std::ostringstream& m) { errs.push_back(m.str()); };
  // Rates are multiplied by doubles; below 2^50 bit/s every rate and every
  // product is within far less than 1 bit/s of exact.
  constexpr uint64_t kMaxRate = uint64_t(1) << 50;

  if (line_rate_bps == 0) errs.push_back("line_rate_bps is 0: the port needs a rate");
  if (line_rate_bps > kMaxRate) {
    std::ostringstream m;
    m << "line_rate_bps " << line_rate_bps << " exceeds 2^50 bit/s (a unit mistake?)";
    add(m);
  }
  if (initial_rate_bps > line_rate_bps) {
    std::ostringstream m;
    m << "initial_rate_bps " << initial_rate_bps << " exceeds line_rate_bps " << line_rate_bps;
    add(m);
  }
  if (min_rate_bps == 0) errs.push_back("min_rate_bps is 0: a throttled flow would stop; use at least 1 bit/s");
  if (line_rate_bps && min_rate_bps > start_rate_bps()) {
    std::ostringstream m;
    m << "min_rate_bps " << min_rate_bps << " exceeds the starting rate " << start_rate_bps();
    add(m);
  }
  if (rate_on_first_cnp_bps && (rate_on_first_cnp_bps < min_rate_bps || rate_on_first_cnp_bps > line_rate_bps)) {
    std::ostringstream m;
    m << "rate_on_first_cnp_bps " << rate_on_first_cnp_bps << " is outside [min_rate_bps " << min_rate_bps
      << ", line_rate_bps " << line_rate_bps << "] (0 turns it off)";
    add(m);
  }
  if (!(g > 0 && g <= 1)) {
    std::ostringstream m;
    m << "g " << g << " is outside (0, 1] (paper 1/256; NVIDIA dce_tcp_g 1019 is g = 5/1024)";
    add(m);
  }
  if (!in_closed(initial_alpha, 0, 1)) {
    std::ostringstream m;
    m << "initial_alpha " << initial_alpha << " is outside [0, 1]";
    add(m);
  }
  if (alpha_period_ps == 0) errs.push_back("alpha_period_ps is 0: the alpha timer needs a period");
  if (!(decrease_gain > 0 && decrease_gain <= 1)) {
    std::ostringstream m;
    m << "decrease_gain " << decrease_gain << " is outside (0, 1] (0.5 is the paper's alpha/2)";
    add(m);
  }
  if (!(min_dec_factor >= 0 && min_dec_factor < 1)) {
    std::ostringstream m;
    m << "min_dec_factor " << min_dec_factor << " is outside [0, 1) (NVIDIA rpg_min_dec_fac 50 % is 0.5)";
    add(m);
  }
  if (increase_timer_ps == 0 && byte_counter_bytes == 0)
    errs.push_back("increase_timer_ps and byte_counter_bytes are both 0: a throttled flow would never recover");
  if (ai_rate_bps > line_rate_bps) {
    std::ostringstream m;
    m << "ai_rate_bps " << ai_rate_bps << " exceeds line_rate_bps " << line_rate_bps << " (a unit mistake?)";
    add(m);
  }
  if (hai_rate_bps > line_rate_bps) {
    std::ostringstream m;
    m << "hai_rate_bps " << hai_rate_bps << " exceeds line_rate_bps " << line_rate_bps << " (a unit mistake?)";
    add(m);
  }
  if (cnp_priority > 7) {
    std::ostringstream m;
    m << "cnp_priority " << unsigned(cnp_priority) << " is not an 802.1p priority (0..7)";
    add(m);
  }
  if (cnp_dscp > 63) {
    std::ostringstream m;
    m << "cnp_dscp " << unsigned(cnp_dscp) << " is not a DSCP (0..63)";
    add(m);
  }
  return errs;
}

}  // namespace rocesim::cc

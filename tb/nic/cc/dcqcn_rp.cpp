#include "nic/cc/dcqcn_rp.h"

#include <algorithm>
#include <cmath>

namespace rocesim::cc {

namespace {

uint64_t sat_add(uint64_t a, uint64_t b) { return b > DcqcnRp::kNever - a ? DcqcnRp::kNever : a + b; }

// a + step, but at most cap (a <= cap).
uint64_t add_capped(uint64_t a, uint64_t step, uint64_t cap) { return step >= cap - a ? cap : a + step; }

}  // namespace

const char* rp_event_name(RpEvent e) {
  switch (e) {
    case RpEvent::first_cnp: return "first_cnp";
    case RpEvent::decrease: return "decrease";
    case RpEvent::alpha_decay: return "alpha_decay";
    case RpEvent::fast_recovery: return "fast_recovery";
    case RpEvent::additive_increase: return "additive_increase";
    case RpEvent::hyper_increase: return "hyper_increase";
    case RpEvent::release: return "release";
  }
  return "?";
}

const char* rp_trigger_name(RpTrigger t) {
  switch (t) {
    case RpTrigger::cnp: return "cnp";
    case RpTrigger::alpha_timer: return "alpha_timer";
    case RpTrigger::increase_timer: return "increase_timer";
    case RpTrigger::byte_counter: return "byte_counter";
  }
  return "?";
}

DcqcnRp::DcqcnRp(const DcqcnConfig& cfg, size_t log_capacity) : cfg_(cfg), log_(log_capacity) { reset(); }

void DcqcnRp::reset() {
  rc_ = cfg_.start_rate_bps();
  rt_ = cfg_.line_rate_bps;
  alpha_ = cfg_.initial_alpha;
  active_ = false;
  i_ = j_ = bytes_ = 0;
  cut_due_ = alpha_due_ = inc_due_ = kNever;
  last_cut_ = kNever;
  now_ = 0;
  counters_ = RpCounters{};
  clear_log();
}

uint64_t DcqcnRp::clock(uint64_t now_ps) {
  if (now_ps > now_) now_ = now_ps;
  return now_;
}

uint64_t DcqcnRp::next_event_ps() const { return std::min(cut_due_, std::min(alpha_due_, inc_due_)); }

void DcqcnRp::advance(uint64_t now_ps) { process_until(clock(now_ps)); }

void DcqcnRp::process_until(uint64_t t) {
  for (;;) {
    const uint64_t due = next_event_ps();
    if (due > t) return;  // also ends the loop when nothing is pending (kNever)
    if (cut_due_ == due) {
      cut_due_ = kNever;
      cut(due);
    } else if (alpha_due_ == due) {
      alpha_expiry(due);
    } else {
      inc_due_ = sat_add(due, cfg_.increase_timer_ps);
      ++i_;
      ++counters_.timer_events;
      increase(due, RpTrigger::increase_timer);
    }
  }
}

void DcqcnRp::on_cnp(uint64_t now_ps) {
  const uint64_t t = clock(now_ps);
  process_until(t);
  ++counters_.cnps;
  if (!active_) {
    cut(t);
    return;
  }
  if (cut_due_ != kNever) {
    ++counters_.cnps_coalesced;
    return;
  }
  const uint64_t p = cfg_.rate_reduce_monitor_period_ps;
  const uint64_t allowed = sat_add(last_cut_, p);
  if (p == 0 || t >= allowed) {
    cut(t);
  } else {
    cut_due_ = allowed;
    ++counters_.cnps_deferred;
  }
}

void DcqcnRp::cut(uint64_t t) {
  const bool first = !active_;
  active_ = true;
  ++counters_.decreases;
  if (first) ++counters_.first_cnps;

  if (first && cfg_.rate_on_first_cnp_bps) {
    rc_ = rt_ = std::clamp(cfg_.rate_on_first_cnp_bps, cfg_.min_rate_bps, cfg_.line_rate_bps);
    alpha_ = cfg_.initial_alpha;
  } else {
    const bool clamp = cfg_.clamp_target || j_ > 0 || (cfg_.clamp_target_after_timer_increase && i_ > 0);
    if (clamp) rt_ = rc_;
    double f = 1.0 - alpha_ * cfg_.decrease_gain;
    if (f < cfg_.min_dec_factor) f = cfg_.min_dec_factor;
    if (f < 0) f = 0;
    const uint64_t cut_rc = static_cast<uint64_t>(std::floor(static_cast<double>(rc_) * f));
    rc_ = std::max(cfg_.min_rate_bps, std::min(cut_rc, rc_));
    alpha_ = std::min(1.0, (1.0 - cfg_.g) * alpha_ + cfg_.g);
  }

  i_ = j_ = bytes_ = 0;
  // A zero period (rejected by validate()) disables that timer rather than
  // firing forever at the same instant.
  alpha_due_ = cfg_.alpha_period_ps ? sat_add(t, cfg_.alpha_period_ps) : kNever;
  inc_due_ = cfg_.increase_timer_ps ? sat_add(t, cfg_.increase_timer_ps) : kNever;
  last_cut_ = t;
  emit(t, first ? RpEvent::first_cnp : RpEvent::decrease, RpTrigger::cnp);
}

void DcqcnRp::alpha_expiry(uint64_t t) {
  alpha_ = (1.0 - cfg_.g) * alpha_;
  alpha_due_ = sat_add(t, cfg_.alpha_period_ps);
  ++counters_.alpha_decays;
  emit(t, RpEvent::alpha_decay, RpTrigger::alpha_timer);
}

void DcqcnRp::increase(uint64_t t, RpTrigger trig) {
  const uint64_t f = cfg_.fast_recovery_stages;
  const uint64_t hi = std::max(i_, j_), lo = std::min(i_, j_);
  const uint64_t line = cfg_.line_rate_bps;
  RpEvent kind;
  if (hi <= f) {
    kind = RpEvent::fast_recovery;
    ++counters_.fast_recovery;
  } else if (lo > f) {
    kind = RpEvent::hyper_increase;
    ++counters_.hyper;
    uint64_t step = cfg_.hai_rate_bps;
    if (cfg_.hyper_scaled_by_stage) {
      const uint64_t n = lo - f;  // >= 1
      step = (step != 0 && n > line / step) ? line : step * n;
    }
    rt_ = add_capped(rt_, step, line);
  } else {
    kind = RpEvent::additive_increase;
    ++counters_.additive;
    rt_ = add_capped(rt_, cfg_.ai_rate_bps, line);
  }
  // RC <= RT: the rounded-up midpoint moves RC toward RT and reaches it.
  rc_ = (rc_ + rt_ + 1) / 2;
  emit(t, kind, trig);
  if (cfg_.release_at_line_rate && rc_ >= line && cut_due_ == kNever) {
    go_idle();
    emit(t, RpEvent::release, trig);
  }
}

void DcqcnRp::on_bytes_sent(uint64_t bytes, uint64_t now_ps) {
  const uint64_t t = clock(now_ps);
  process_until(t);
  const uint64_t b = cfg_.byte_counter_bytes;
  if (!active_ || b == 0) return;
  uint64_t room = b - bytes_;  // > 0: bytes_ < b between calls
  while (active_ && bytes >= room) {
    bytes -= room;
    bytes_ = 0;
    room = b;
    ++j_;
    ++counters_.byte_events;
    increase(t, RpTrigger::byte_counter);
  }
  if (active_) bytes_ += bytes;
}

void DcqcnRp::go_idle() {
  active_ = false;
  rc_ = rt_ = cfg_.line_rate_bps;
  alpha_ = cfg_.initial_alpha;
  i_ = j_ = bytes_ = 0;
  cut_due_ = alpha_due_ = inc_due_ = kNever;
  ++counters_.releases;
}

void DcqcnRp::emit(uint64_t t, RpEvent e, RpTrigger trig) {
  RpSample s;
  s.time_ps = t;
  s.rate_bps = rc_;
  s.target_bps = rt_;
  s.alpha = alpha_;
  s.event = e;
  s.trigger = trig;
  if (observer_) observer_(observer_ctx_, s);
  if (!log_.empty()) {
    log_[log_head_] = s;
    log_head_ = (log_head_ + 1) % log_.size();
    if (log_count_ < log_.size()) {
      ++log_count_;
    } else {
      ++log_overwritten_;
    }
  }
}

const RpSample& DcqcnRp::log_at(size_t k) const {
  const size_t cap = log_.size();
  return log_[(log_head_ + cap - log_count_ + k) % cap];
}

void DcqcnRp::clear_log() {
  log_head_ = 0;
  log_count_ = 0;
  log_overwritten_ = 0;
}

}  // namespace rocesim::cc

#include "core/calendar.h"

#include <stdexcept>
#include <string>

namespace rocesim::core {

using namespace sc_core;

Calendar::Calendar() {
  m_heap.reserve(1024);
  // A spawned method (not an SC_METHOD of a module), so the calendar can be
  // created during elaboration or, in a unit test, after the simulation started.
  sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(&m_ev);
  o.dont_initialize();
  sc_spawn([this] { run(); }, "rocesim_calendar", &o);
}

void Timer::after(uint64_t d_ps) { at(now_ps() + d_ps); }

// A binary heap. An entry that moves down (the firing timer re-armed later,
// or the last entry moved into a removed one's place) is usually later than
// most, so it goes deep: sift_down walks the hole to a leaf along the earlier
// child (one comparison per level instead of two), then moves the entry up
// from there (bottom-up heapsort's trick).
void Calendar::sift_up(uint32_t i) {
  const Entry e = m_heap[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!e.before(m_heap[parent])) break;
    place(i, m_heap[parent]);
    i = parent;
  }
  place(i, e);
}

void Calendar::sift_down(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(m_heap.size());
  const Entry e = m_heap[i];
  const uint32_t top = i;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && m_heap[c + 1].before(m_heap[c])) ++c;
    place(i, m_heap[c]);
    i = c;
  }
  while (i > top) {
    const uint32_t parent = (i - 1) / 2;
    if (!e.before(m_heap[parent])) break;
    place(i, m_heap[parent]);
    i = parent;
  }
  place(i, e);
}

void Calendar::schedule(Timer& t, uint64_t at) {
  const uint64_t now = now_ps();
  if (at < now)
    throw std::logic_error("core::Calendar: a timer armed in the past (" + std::to_string(at) + " ps < now " +
                           std::to_string(now) + " ps)");
  if (t.m_idx != Timer::kIdle) {
    // Armed: earlier than where it is, so it moves up; or the entry firing
    // now, re-armed from its own callback, so it moves down from the top
    // (one sift instead of a removal and an insertion).
    Entry& e = m_heap[t.m_idx];
    const bool later = at > e.at || (at == e.at && t.m_at == kFiring);
    e.at = at;
    e.seq = m_seq++;
    t.m_at = at;
    if (later) sift_down(t.m_idx);
    else sift_up(t.m_idx);
  } else {
    t.m_at = at;
    m_heap.push_back(Entry{at, m_seq++, &t});
    t.m_idx = static_cast<uint32_t>(m_heap.size() - 1);
    sift_up(t.m_idx);
  }
  if (!detail::g_in_calendar && at < m_kernel_at) wake_kernel(at);
}

void Calendar::remove(Timer& t) {
  const uint32_t i = t.m_idx;
  t.m_idx = Timer::kIdle;
  const Entry last = m_heap.back();
  m_heap.pop_back();
  if (i == m_heap.size()) return;  // it was the last one
  const bool up = i > 0 && last.before(m_heap[(i - 1) / 2]);
  place(i, last);
  if (up) sift_up(i);
  else sift_down(i);
  // A kernel wake left pending for an earlier entry finds nothing due and re-arms itself.
}

void Calendar::wake_kernel(uint64_t at) {
  m_kernel_at = at;
  m_ev.notify(kernel_delay(at));
}

void Calendar::run() {
  ++m_wakes;
  const uint64_t t_kernel = sc_time_stamp().value();
  m_kernel_at = UINT64_MAX;
  // Entries before `limit` run now: those due at this time, and with a
  // run-ahead window every one before the kernel's next other activity.
  uint64_t limit = t_kernel + 1;
  if (m_until > limit) {
    const uint64_t gap = sc_time_to_pending_activity().value();
    if (gap > 0) limit = gap >= m_until - t_kernel ? m_until : t_kernel + gap;
  }
  sc_simcontext* const sim = sc_get_curr_simcontext();
  detail::g_in_calendar = true;
  while (!m_heap.empty() && m_heap.front().at < limit) {
    // The entry stays at the top while its callback runs (nothing scheduled
    // meanwhile can precede it); kFiring tells at() that it is no longer armed.
    Timer* t = m_heap.front().t;
    detail::g_now_ps = m_heap.front().at;
    t->m_at = kFiring;
    ++m_fired;
    t->m_fn(t->m_obj);
    if (t->m_at == kFiring && t->m_idx != Timer::kIdle) remove(*t);  // not re-armed
    if (sim->sim_status() != SC_SIM_OK) break;  // sc_stop() (or an error): nothing after it runs
  }
  detail::g_in_calendar = false;
  if (!m_heap.empty()) wake_kernel(m_heap.front().at);
}

}  // namespace rocesim::core

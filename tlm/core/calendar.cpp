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

// ---- the wheel ----------------------------------------------------------

// Into its slot's list, after every entry that precedes it. A new entry
// usually has the latest order number, so the walk from the tail stops at once.
void Calendar::wheel_insert(Timer& t) {
  const uint32_t s = static_cast<uint32_t>(t.m_at >> kSlotBits) & (kSlots - 1);
  t.m_idx = Timer::kWheel;
  ++m_wheel_count;
  Timer* p = m_tail[s];
  if (!p) {
    t.m_prev = t.m_next = nullptr;
    m_head[s] = m_tail[s] = &t;
    m_bits[s / 64] |= 1ull << (s % 64);
    m_summary |= 1ull << (s / 64);
    return;
  }
  while (p && before(t, *p)) p = p->m_prev;
  t.m_prev = p;
  if (p) {
    t.m_next = p->m_next;
    p->m_next = &t;
  } else {
    t.m_next = m_head[s];
    m_head[s] = &t;
  }
  if (t.m_next) t.m_next->m_prev = &t;
  else m_tail[s] = &t;
}

void Calendar::wheel_unlink(Timer& t) {
  const uint32_t s = static_cast<uint32_t>(t.m_at >> kSlotBits) & (kSlots - 1);
  --m_wheel_count;
  if (t.m_prev) t.m_prev->m_next = t.m_next;
  else m_head[s] = t.m_next;
  if (t.m_next) t.m_next->m_prev = t.m_prev;
  else m_tail[s] = t.m_prev;
  if (!m_head[s]) {
    m_bits[s / 64] &= ~(1ull << (s % 64));
    if (!m_bits[s / 64]) m_summary &= ~(1ull << (s / 64));
  }
  t.m_idx = Timer::kIdle;
}

// The first non-empty slot at or after m_base's, in circular order: every
// entry lies within kSlots slots from m_base, so that is time order.
Timer* Calendar::wheel_first() const {
  if (!m_summary) return nullptr;
  const uint32_t i = static_cast<uint32_t>(m_base) & (kSlots - 1);
  const uint32_t w = i / 64;
  uint64_t bits = m_bits[w] & (~0ull << (i % 64));
  if (bits) return m_head[w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits))];
  const uint64_t later = w + 1 < 64 ? m_summary & (~0ull << (w + 1)) : 0;
  const uint32_t w2 = static_cast<uint32_t>(__builtin_ctzll(later ? later : m_summary));
  return m_head[w2 * 64 + static_cast<uint32_t>(__builtin_ctzll(m_bits[w2]))];
}

Timer* Calendar::first() const {
  Timer* w = wheel_first();
  if (m_heap.empty()) return w;
  const Entry& h = m_heap.front();
  return !w || before(h, *w) ? h.t : w;
}

// ---- the heap (entries beyond the wheel) ---------------------------------

// An entry that moves down (the last entry moved into a removed one's place)
// is usually later than most, so sift_down walks the hole to a leaf along the
// earlier child (one comparison per level instead of two), then moves the
// entry up from there (bottom-up heapsort's trick).
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

void Calendar::heap_push(Timer& t) {
  m_heap.push_back(Entry{t.m_at, t.m_seq, &t});
  t.m_idx = static_cast<uint32_t>(m_heap.size() - 1);
  sift_up(t.m_idx);
}

void Calendar::heap_remove(uint32_t i) {
  m_heap[i].t->m_idx = Timer::kIdle;
  const Entry last = m_heap.back();
  m_heap.pop_back();
  if (i == m_heap.size()) return;  // it was the last one
  const bool up = i > 0 && last.before(m_heap[(i - 1) / 2]);
  place(i, last);
  if (up) sift_up(i);
  else sift_down(i);
}

// ---- the calendar ---------------------------------------------------------

void Calendar::fail_past(uint64_t at, uint64_t now) {
  throw std::logic_error("core::Calendar: a timer armed in the past (" + std::to_string(at) + " ps < now " +
                         std::to_string(now) + " ps)");
}

void Calendar::schedule(Timer& t, uint64_t at, uint64_t seq) {
  const uint64_t now = now_ps();
  if (at < now) fail_past(at, now);
  if (t.m_idx != Timer::kIdle) remove(t);  // armed later: it moves earlier
  // With nothing on the wheel its window restarts at now (a test may have
  // advanced the kernel far past the last entry).
  if (m_wheel_count == 0) m_base = now >> kSlotBits;
  t.m_at = at;
  t.m_seq = seq;
  if ((at >> kSlotBits) - m_base < kSlots) wheel_insert(t);
  else heap_push(t);
  if (!detail::g_in_calendar && at < m_kernel_at) wake_kernel(at);
}

void Calendar::remove(Timer& t) {
  if (t.m_idx == Timer::kWheel) wheel_unlink(t);
  else heap_remove(t.m_idx);
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
  for (;;) {
    Timer* t = first();
    if (!t || t->m_at >= limit) break;
    // Off the calendar before its callback runs (nothing scheduled meanwhile
    // can precede it), so the callback may arm it again.
    detail::g_now_ps = t->m_at;
    detail::g_now_seq = t->m_seq;
    m_base = t->m_at >> kSlotBits;
    remove(*t);
    ++m_fired;
    t->m_fn(t->m_obj);
    if (sim->sim_status() != SC_SIM_OK) break;  // sc_stop() (or an error): nothing after it runs
  }
  detail::g_in_calendar = false;
  if (Timer* t = first()) wake_kernel(t->m_at);
}

}  // namespace rocesim::core

// The model's event calendar (docs/design.md, "The event path").
//
// Every timed wake-up of the model's blocks (a MAC's frame end, a switch's
// admission and egress wakes, PFC refreshes, the NIC's timers, the
// statistics sampler) is a core::Timer on one calendar, ordered by (time,
// order of scheduling), each calling its block's member function directly.
// The calendar is a timing wheel of kSlots slots of 2^kSlotBits ps (about
// 4.2 us ahead, where nearly every wake-up of a fabric falls: frame ends,
// pipeline cycles, cable delays), each slot an intrusive list kept in (time,
// order) order, with a two-level bit map of the non-empty slots; later
// entries (retransmission timers, pause expiries, the sampler) wait in a
// binary heap. The earliest entry is the earlier of the wheel's first and
// the heap's top. The calendar is one SystemC method
// process on one sc_event; it notifies the kernel only for its earliest
// entry, so SystemC time stays the time and other SystemC models co-simulate
// unchanged.
//
// Run-ahead: when the kernel is woken for the calendar at time T, the
// calendar runs its entries due at T, and, within the window set by
// set_run_ahead(until), also every later entry before the kernel's next
// pending activity (sc_time_to_pending_activity) and before `until`. Nothing
// else in the simulation can act in that interval, so the entries run in the
// same order and at the same (model) times as if the kernel had been woken
// for each: core::now_ps() returns the running entry's time. Without a window
// (the default, and in unit tests driving sc_start themselves) only the
// entries due at T run, one kernel wake per distinct time.
//
// Rules for the blocks: schedule through Timer (never an sc_event of their
// own), read time with core::now_ps() (never sc_time_stamp()). A block that
// must notify a SystemC event from a timer callback passes the delay from
// core::now_ps(); see Calendar::kernel_delay().
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

namespace rocesim::core {

namespace detail {
// The running entry's time while the calendar runs; otherwise the last time it ran.
inline uint64_t g_now_ps = 0;
inline uint64_t g_now_seq = 0;  // and its order number
inline bool g_in_calendar = false;
}  // namespace detail

class Calendar;

// One wake-up source of a block: armed at one time at most (arming it again
// earlier moves it; later, while armed, is ignored: an sc_event's notify rule).
class Timer {
 public:
  Timer() = default;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() { cancel(); }

  // The callback: obj->*M() when the timer fires.
  template <auto M, class T>
  void bind(T* obj) {
    m_obj = obj;
    m_fn = [](void* o) { (static_cast<T*>(o)->*M)(); };
  }
  // Fire at t_ps (absolute, at or after now), unless already armed at or before it.
  inline void at(uint64_t t_ps);
  // The same, ordered among entries of the same time as if it had been armed
  // when `seq` was taken (Calendar::take_seq()): a block that arms a timer
  // only when it turns out to be needed keeps the order it would have had.
  inline void at_as_of(uint64_t t_ps, uint64_t seq);
  void after(uint64_t d_ps);
  inline void cancel();
  bool armed() const;
  uint64_t when() const { return m_at; }  // valid while armed

 private:
  friend class Calendar;
  static constexpr uint32_t kIdle = 0xffffffffu;
  static constexpr uint32_t kWheel = 0xfffffffeu;
  void* m_obj = nullptr;
  void (*m_fn)(void*) = nullptr;
  uint64_t m_at = 0;
  uint64_t m_seq = 0;
  Timer* m_next = nullptr;  // in its wheel slot, in (time, order) order
  Timer* m_prev = nullptr;
  uint32_t m_idx = kIdle;  // kIdle, kWheel, or its position in the heap
};

class Calendar {
 public:
  // The simulation's calendar (created on first use; lives as long as the process).
  static Calendar& get() {
    static Calendar* c = new Calendar;
    return *c;
  }

  // Run ahead of the kernel up to (not including) until_ps; 0: never.
  void set_run_ahead(uint64_t until_ps) { m_until = until_ps; }
  // Timer callbacks run so far (every firing, whichever process woke the kernel).
  uint64_t fired() const { return m_fired; }
  // Kernel wakes of the calendar's process.
  uint64_t kernel_wakes() const { return m_wakes; }
  size_t armed() const { return m_wheel_count + m_heap.size(); }
  // An order number for Timer::at_as_of.
  uint64_t take_seq() { return m_seq++; }
  // The delay to give sc_event::notify (relative to sc_time_stamp()) for an
  // action at model time t_ps, from anywhere, including a run-ahead callback.
  static sc_core::sc_time kernel_delay(uint64_t t_ps) {
    return sc_core::sc_time::from_value(t_ps - sc_core::sc_time_stamp().value());
  }

 private:
  friend class Timer;
  static constexpr unsigned kSlotBits = 10;  // 1.024 ns per slot
  static constexpr unsigned kSlots = 4096;   // 4.19 us ahead
  static constexpr unsigned kWords = kSlots / 64;
  static_assert(kWords <= 64, "one summary word");
  struct Entry {
    uint64_t at;
    uint64_t seq;  // order of scheduling: FIFO among equal times
    Timer* t;
    bool before(const Entry& o) const { return at != o.at ? at < o.at : seq < o.seq; }
  };
  static bool before(const Timer& a, const Timer& b) {
    return a.m_at != b.m_at ? a.m_at < b.m_at : a.m_seq < b.m_seq;
  }
  // A heap entry against a timer: the entry's time and order, no load through its timer.
  static bool before(const Entry& a, const Timer& b) { return a.at != b.m_at ? a.at < b.m_at : a.seq < b.m_seq; }
  Calendar();
  void schedule(Timer& t, uint64_t at, uint64_t seq);
  [[noreturn, gnu::cold, gnu::noinline]] static void fail_past(uint64_t at, uint64_t now);
  void remove(Timer& t);
  void wheel_insert(Timer& t);
  void wheel_unlink(Timer& t);
  Timer* wheel_first() const;  // null when the wheel is empty
  Timer* first() const;        // the earliest entry, null when none
  void heap_push(Timer& t);
  void heap_remove(uint32_t i);
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, const Entry& e) {
    m_heap[i] = e;
    e.t->m_idx = i;
  }
  void wake_kernel(uint64_t at);
  void run();  // the method process

  // The wheel holds entries whose slot number (at >> kSlotBits) lies in
  // [m_base, m_base + kSlots); m_base never passes the earliest entry.
  uint64_t m_base = 0;
  Timer* m_head[kSlots] = {};
  Timer* m_tail[kSlots] = {};
  uint64_t m_bits[kWords] = {};  // slot non-empty
  uint64_t m_summary = 0;        // word non-zero
  size_t m_wheel_count = 0;
  std::vector<Entry> m_heap;     // entries beyond the wheel, a binary heap
  uint64_t m_seq = 0;
  uint64_t m_until = 0;
  uint64_t m_kernel_at = UINT64_MAX;  // when the kernel event is pending (UINT64_MAX: not)
  uint64_t m_fired = 0, m_wakes = 0;
  sc_core::sc_event m_ev;
};

// Model time in ps: the running calendar entry's time, else the kernel's time
// (or the calendar's last entry, when it ran ahead before an sc_stop).
inline uint64_t now_ps() {
  if (detail::g_in_calendar) return detail::g_now_ps;
  const uint64_t k = sc_core::sc_time_stamp().value();
  return k > detail::g_now_ps ? k : detail::g_now_ps;
}

// Whether an entry at (at_ps, seq) would have run by now: the calendar has run
// an entry after it, or the kernel's time is past it. For a wake-up a block
// left unarmed because it had nothing to do (Timer::at_as_of).
inline bool passed(uint64_t at_ps, uint64_t seq) {
  if (detail::g_now_ps != at_ps) return detail::g_now_ps > at_ps || sc_core::sc_time_stamp().value() > at_ps;
  return detail::g_now_seq > seq || (!detail::g_in_calendar && sc_core::sc_time_stamp().value() > at_ps);
}

inline void Timer::at(uint64_t t_ps) {
  if (m_idx != kIdle && m_at <= t_ps) return;
  Calendar& c = Calendar::get();
  c.schedule(*this, t_ps, c.take_seq());
}
inline void Timer::at_as_of(uint64_t t_ps, uint64_t seq) {
  if (m_idx != kIdle && (m_at < t_ps || (m_at == t_ps && m_seq <= seq))) return;
  Calendar::get().schedule(*this, t_ps, seq);
}
inline bool Timer::armed() const { return m_idx != kIdle; }
inline void Timer::cancel() {
  if (m_idx != kIdle) Calendar::get().remove(*this);
}

}  // namespace rocesim::core

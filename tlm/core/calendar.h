// The model's event calendar (docs/design.md, "The event path").
//
// Every timed wake-up of the model's blocks (a MAC's frame end, a switch's
// admission and egress wakes, PFC refreshes, the NIC's timers, the
// statistics sampler) is a core::Timer on one calendar: a binary heap of
// intrusive entries ordered by (time, order of scheduling), each calling its
// block's member function directly. The calendar is one SystemC method
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
  void after(uint64_t d_ps);
  inline void cancel();
  bool armed() const;
  uint64_t when() const { return m_at; }  // valid while armed

 private:
  friend class Calendar;
  static constexpr uint32_t kIdle = 0xffffffffu;
  static constexpr uint64_t kFiring = UINT64_MAX;  // m_at while its own callback runs
  void* m_obj = nullptr;
  void (*m_fn)(void*) = nullptr;
  uint64_t m_at = 0;
  uint32_t m_idx = kIdle;  // position in the calendar's heap
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
  size_t armed() const { return m_heap.size(); }
  // The delay to give sc_event::notify (relative to sc_time_stamp()) for an
  // action at model time t_ps, from anywhere, including a run-ahead callback.
  static sc_core::sc_time kernel_delay(uint64_t t_ps) {
    return sc_core::sc_time::from_value(t_ps - sc_core::sc_time_stamp().value());
  }

 private:
  friend class Timer;
  static constexpr uint64_t kFiring = Timer::kFiring;
  struct Entry {
    uint64_t at;
    uint64_t seq;  // order of scheduling: FIFO among equal times
    Timer* t;
    bool before(const Entry& o) const { return at != o.at ? at < o.at : seq < o.seq; }
  };
  Calendar();
  void schedule(Timer& t, uint64_t at);
  void remove(Timer& t);
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, const Entry& e) {
    m_heap[i] = e;
    e.t->m_idx = i;
  }
  void wake_kernel(uint64_t at);
  void run();  // the method process

  std::vector<Entry> m_heap;
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

inline void Timer::at(uint64_t t_ps) {
  if (m_idx != kIdle && m_at <= t_ps) return;
  Calendar::get().schedule(*this, t_ps);
}
inline bool Timer::armed() const { return m_idx != kIdle && m_at != kFiring; }
inline void Timer::cancel() {
  if (m_idx != kIdle) Calendar::get().remove(*this);
}

}  // namespace rocesim::core

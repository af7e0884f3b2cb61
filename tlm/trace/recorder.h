// TLM-level waveforms: the recorder the modules report value changes to.
//
// A signal is an unsigned integer of 1..64 bits in a scope path (switch,
// port, queue; host, flow), declared before the run. The modules call
// set() or add() at the points where a value changes, with the exact
// simulated time of the change, through a pointer that is null when tracing
// is off: no sc_signal, no kernel event, no process.
//
// Time order. A change's time is not always "now" (sc_time_stamp()): a MAC
// with early hand-off learns of a received pause frame when it enters the
// cable, and its pause receiver then records the transitions up to the
// frame's last bit, ahead of now. No hook ever records a time behind now:
// every change is reported at its own time or, through an early hand-off,
// before it (docs/waveforms.md lists the hooks). A writer needs
// non-decreasing time, so the recorder keeps the changes in a buffer and
// emits them sorted at flush points: when the buffer holds kFlushRecords
// changes, everything with a time before now (as the clock given at
// construction says) is sorted and emitted, since a later change can only
// carry a time at or after now; close() emits the rest. A change that still
// arrives behind the emitted time is a hook's bug: it is counted (late()),
// written at the emitted time, and rocesim reports it.
//
// Per signal and time, the last change wins (a queue that takes a packet and
// gives one at the same picosecond shows the net value), and a value equal
// to the one written is not written again: the file holds real changes only.
//
// The window [from, to]: changes before `from` only set the values written
// at `from` (every signal's value then), changes after `to` are dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rocesim::trace {

using Signal = uint32_t;

struct SignalInfo {
  std::vector<std::string> scope;  // e.g. {"sw0", "p3", "q3"}
  std::string name;                // e.g. "depth_bytes"
  uint32_t bits = 1;               // 1..64
  bool analog = false;             // a level (depth, use, rate): shown as an analog step in GTKWave
};

// What a writer (FST, VCD) implements. begin() once with every signal, then
// time() before the values of each time, in non-decreasing time order.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void begin(const std::vector<SignalInfo>& signals) = 0;
  virtual void time(uint64_t t_ps) = 0;
  virtual void value(Signal s, uint64_t v) = 0;
};

class Recorder {
 public:
  static constexpr size_t kFlushRecords = size_t(1) << 16;
  // now: the simulation's current time in ps. [from_ps, to_ps]: the window written.
  Recorder(std::function<uint64_t()> now, uint64_t from_ps = 0, uint64_t to_ps = UINT64_MAX);

  // Declares a signal (initial value 0); only before the first change.
  Signal add_signal(SignalInfo info);
  const std::vector<SignalInfo>& signals() const { return m_info; }

  // Signal s holds v from t_ps on.
  void set(Signal s, uint64_t t_ps, uint64_t v) { push(Rec{t_ps, s, false, v}); }
  // A counter: signal s grows by d at t_ps.
  void add(Signal s, uint64_t t_ps, uint64_t d = 1) { push(Rec{t_ps, s, true, d}); }

  // Starts writing to `sink` (begin() is called with every signal).
  void open(Sink* sink);
  // Emits everything; the file then extends to end_ps (if inside the window).
  void close(uint64_t end_ps);

  // Changes written, and changes that arrived behind the written time.
  uint64_t written() const { return m_written; }
  uint64_t late() const { return m_late; }
  // Whether signal s was written with a value other than 0 (inside the window).
  bool changed(Signal s) const { return m_changed[s]; }

 private:
  struct Rec {
    uint64_t t;
    Signal s;
    bool add;
    uint64_t v;
  };
  void push(const Rec& r) {
    m_buf.push_back(r);
    if (m_buf.size() >= kFlushRecords) flush(m_now());
  }
  // Emits the buffered changes with a time before `limit`, in time order.
  void flush(uint64_t limit);
  void emit_initial();

  std::function<uint64_t()> m_now;
  uint64_t m_from, m_to;
  Sink* m_sink = nullptr;
  std::vector<SignalInfo> m_info;
  std::vector<Rec> m_buf;
  std::vector<uint64_t> m_cur;        // value as of the emitted time
  std::vector<uint64_t> m_out;        // value last written
  std::vector<uint32_t> m_touched_at; // per signal: the group (time) that last touched it
  std::vector<Signal> m_touched;
  std::vector<bool> m_changed;
  uint32_t m_group = 0;
  uint64_t m_emitted_t = 0;  // time of the last change applied
  bool m_initial_done = false;
  uint64_t m_last_time_written = 0;
  bool m_any_time = false;
  uint64_t m_written = 0, m_late = 0;
};

}  // namespace rocesim::trace

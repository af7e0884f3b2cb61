// core::Calendar and core::Timer: order, the sc_event notify rule, re-arming
// from a callback, cancellation, sc_stop, and run-ahead that stays exact when
// another SystemC process is scheduled in between.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <systemc>

#include "core/calendar.h"
#include "core/time.h"

namespace {

using rocesim::core::Calendar;
using rocesim::core::Timer;
using rocesim::core::now_ps;

// Records (id, time) of each firing.
struct Log {
  std::vector<std::pair<int, uint64_t>> fired;
};

struct Probe {
  int id = 0;
  Log* log = nullptr;
  Timer t;
  std::vector<uint64_t> rearm;  // times to re-arm at, one per firing
  void fire() {
    log->fired.emplace_back(id, now_ps());
    if (!rearm.empty()) {
      const uint64_t next = rearm.front();
      rearm.erase(rearm.begin());
      t.at(next);
    }
  }
  Probe(int i, Log* l) : id(i), log(l) { t.bind<&Probe::fire>(this); }
};

TEST(Calendar, FiresInTimeOrderAndFifoAmongEqualTimes) {
  Log log;
  std::vector<std::unique_ptr<Probe>> p;
  for (int i = 0; i < 6; ++i) p.push_back(std::make_unique<Probe>(i, &log));
  // Scheduled out of order; 1, 3 and 4 share a time and must fire in the order armed: 3, 1, 4.
  p[0]->t.at(5000);
  p[3]->t.at(2000);
  p[1]->t.at(2000);
  p[4]->t.at(2000);
  p[2]->t.at(1000);
  p[5]->t.at(9000);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  const std::vector<std::pair<int, uint64_t>> want{{2, 1000}, {3, 2000}, {1, 2000}, {4, 2000}, {0, 5000}, {5, 9000}};
  EXPECT_EQ(log.fired, want);
}

TEST(Calendar, ArmingLaterWhileArmedIsIgnoredAndEarlierMovesIt) {
  Log log;
  Probe a(0, &log), b(1, &log);
  a.t.at(3000);
  a.t.at(4000);  // later: ignored (sc_event::notify's rule)
  EXPECT_EQ(a.t.when(), 3000u);
  b.t.at(5000);
  b.t.at(1000);  // earlier: moved
  EXPECT_TRUE(a.t.armed());
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  const std::vector<std::pair<int, uint64_t>> want{{1, 1000}, {0, 3000}};
  EXPECT_EQ(log.fired, want);
  EXPECT_FALSE(a.t.armed());
}

TEST(Calendar, ACallbackReArmsItsOwnTimerAndOthersKeepTheirOrder) {
  Log log;
  Probe a(0, &log), b(1, &log), c(2, &log);
  a.rearm = {1000, 2500, 2500};  // the same time again: after b, which was armed at 2500 before
  a.t.at(1000);
  b.t.at(2500);
  c.t.at(2000);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  // a at 1000 re-arms for 1000 (same time: fires again at once), then 2500, then 2500 again.
  const std::vector<std::pair<int, uint64_t>> want{{0, 1000}, {0, 1000}, {2, 2000}, {1, 2500}, {0, 2500}, {0, 2500}};
  EXPECT_EQ(log.fired, want);
}

TEST(Calendar, CancelledAndDestroyedTimersNeverFire) {
  Log log;
  Probe a(0, &log), b(1, &log);
  a.t.at(1000);
  b.t.at(2000);
  {
    Probe gone(2, &log);
    gone.t.at(1500);
  }  // destroyed while armed: it leaves the calendar
  a.t.cancel();
  EXPECT_FALSE(a.t.armed());
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  const std::vector<std::pair<int, uint64_t>> want{{1, 2000}};
  EXPECT_EQ(log.fired, want);
}

TEST(Calendar, ArmingInThePastIsALogicError) {
  Log log;
  Probe a(0, &log);
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_NS));
  EXPECT_THROW(a.t.at(4999), std::logic_error);
  EXPECT_NO_THROW(a.t.at(5000));
}

// A random stream of arm, re-arm and cancel, against a reference model that
// sorts by (time, order of the last effective arm).
TEST(Calendar, RandomStreamMatchesASortedReference) {
  constexpr int kTimers = 300;
  Log log;
  std::vector<std::unique_ptr<Probe>> p;
  for (int i = 0; i < kTimers; ++i) p.push_back(std::make_unique<Probe>(i, &log));
  std::mt19937_64 rng(12345);
  struct Ref {
    bool armed = false;
    uint64_t at = 0, seq = 0;
  };
  std::vector<Ref> ref(kTimers);
  uint64_t seq = 0;
  for (int k = 0; k < 5000; ++k) {
    const int i = static_cast<int>(rng() % kTimers);
    if (rng() % 5 == 0) {
      p[i]->t.cancel();
      ref[i].armed = false;
      continue;
    }
    const uint64_t t = 1 + rng() % 200;  // many equal times
    p[i]->t.at(t);
    if (!ref[i].armed || t < ref[i].at) ref[i] = Ref{true, t, seq++};
  }
  std::vector<std::tuple<uint64_t, uint64_t, int>> order;
  for (int i = 0; i < kTimers; ++i)
    if (ref[i].armed) order.emplace_back(ref[i].at, ref[i].seq, i);
  std::sort(order.begin(), order.end());
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  ASSERT_EQ(log.fired.size(), order.size());
  for (size_t j = 0; j < order.size(); ++j) {
    EXPECT_EQ(log.fired[j].first, std::get<2>(order[j])) << j;
    EXPECT_EQ(log.fired[j].second, std::get<0>(order[j])) << j;
  }
}

// Run-ahead: a chain of timers every 100 ps, and a plain SystemC method woken
// at 5 ns by its own event. With a window the calendar runs the whole chain
// in a few kernel wakes, yet the method sees exactly the firings before 5 ns,
// and each callback reads its own time.
struct Chain {
  Timer t;
  uint64_t period = 100, end = 10000;
  std::vector<uint64_t> times;
  void fire() {
    times.push_back(now_ps());
    if (now_ps() + period <= end) t.at(now_ps() + period);
  }
  Chain() { t.bind<&Chain::fire>(this); }
};

struct Observer : sc_core::sc_module {
  Chain* chain;
  sc_core::sc_event ev;
  size_t seen = 0;
  uint64_t seen_at = 0;
  SC_HAS_PROCESS(Observer);
  Observer(sc_core::sc_module_name n, Chain* c) : sc_module(n), chain(c) {
    SC_METHOD(look);
    sensitive << ev;
    dont_initialize();
  }
  void look() {
    seen = chain->times.size();
    seen_at = now_ps();
  }
};

void run_chain(bool window, Chain& chain, Observer& obs) {
  chain.t.at(100);
  obs.ev.notify(sc_core::sc_time(5050, sc_core::SC_PS));  // between two chain entries
  if (window) Calendar::get().set_run_ahead(20000);
  sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_NS));
  Calendar::get().set_run_ahead(0);
}

void expect_chain(const Chain& chain, const Observer& obs) {
  ASSERT_EQ(chain.times.size(), 100u);  // 100, 200, ..., 10000
  for (size_t i = 0; i < chain.times.size(); ++i) EXPECT_EQ(chain.times[i], 100 * (i + 1));
  // At 5050 ps the firings at 100 .. 5000 ps have run, and none after.
  EXPECT_EQ(obs.seen, 50u);
  EXPECT_EQ(obs.seen_at, 5050u);
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 20000u);
  EXPECT_EQ(now_ps(), 20000u);
}

TEST(Calendar, RunAheadIsExactAroundAnotherProcessAndSavesKernelWakes) {
  Chain chain;
  Observer obs("obs", &chain);
  run_chain(true, chain, obs);
  expect_chain(chain, obs);
  // Kernel wakes: one at 100 ps (runs up to the observer at 5050), one at 5100 (runs to the end).
  EXPECT_EQ(Calendar::get().kernel_wakes(), 2u);
  EXPECT_EQ(Calendar::get().fired(), 100u);
}

TEST(Calendar, WithoutAWindowEachDistinctTimeIsAKernelWake) {
  Chain chain;
  Observer obs("obs", &chain);
  run_chain(false, chain, obs);
  expect_chain(chain, obs);
  EXPECT_EQ(Calendar::get().kernel_wakes(), 100u);
}

// sc_stop() from a callback: nothing due after it runs, and model time is the stop's.
struct Stopper {
  Timer t;
  void fire() { sc_core::sc_stop(); }
  Stopper() { t.bind<&Stopper::fire>(this); }
};

TEST(Calendar, StopFromACallbackEndsTheRunAtItsTime) {
  Log log;
  Probe before(0, &log), same(1, &log), after(2, &log);
  Stopper s;
  before.t.at(1000);
  s.t.at(3000);
  same.t.at(3000);  // armed after the stopper at the same time: does not run
  after.t.at(4000);
  Calendar::get().set_run_ahead(1000000);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  Calendar::get().set_run_ahead(0);
  const std::vector<std::pair<int, uint64_t>> want{{0, 1000}};
  EXPECT_EQ(log.fired, want);
  EXPECT_EQ(now_ps(), 3000u);
}

}  // namespace

// A self-driving stream over every range the calendar treats differently:
// the same slot, neighbouring slots, across the wheel's end (a few us ahead),
// and far beyond it (ms), with callbacks that re-arm themselves, arm others
// earlier or later, arm "as of" an order number taken earlier, and cancel.
// The reference is a sorted set of (time, order, id) with the same rules
// (arming later while armed is ignored; earlier moves it), driven by the same
// random stream, so the first divergence in order or time fails the test.
namespace self_driving {

constexpr int kTimers = 64;

uint64_t delay(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return 0;
    case 1: return rng() % 1024;                  // this or the next slot
    case 2: return rng() % 20000;                 // a few slots
    case 3: return 4000000 + rng() % 400000;      // around the wheel's end (4.19 us)
    case 4: return rng() % 5000000;               // anywhere on the wheel
    default: return 1000000 + rng() % 200000000;  // far beyond it
  }
}

// What both the calendar's callbacks and the reference do on a firing.
// An order number taken in one firing is used by a later one (as a MAC takes
// it when a frame starts and arms its end only if a frame waits).
struct Saved {
  bool has = false;
  uint64_t seq = 0;
};
template <class Arm, class ArmAsOf, class Cancel, class TakeSeq>
void react(std::mt19937_64& rng, uint64_t now, Saved& saved, Arm arm, ArmAsOf arm_as_of, Cancel cancel,
           TakeSeq take_seq) {
  const int ops = 1 + static_cast<int>(rng() % 3);
  for (int k = 0; k < ops; ++k) {
    const int i = static_cast<int>(rng() % kTimers);
    const unsigned what = static_cast<unsigned>(rng() % 8);
    if (what == 0) {
      cancel(i);
    } else if (what == 1) {
      saved = Saved{true, take_seq()};
    } else if (what == 2 && saved.has) {
      arm_as_of(i, now + 1 + delay(rng), saved.seq);
      saved.has = false;
    } else {
      arm(i, now + delay(rng));
    }
  }
}

struct Driver;
struct Node {
  int id = 0;
  Driver* d = nullptr;
  Timer t;
  void fire();
  Node() { t.bind<&Node::fire>(this); }
};
struct Driver {
  std::mt19937_64 rng{777};
  std::vector<Node> nodes = std::vector<Node>(kTimers);
  std::vector<std::pair<int, uint64_t>> fired;
  Saved saved;
  size_t limit = 20000;
  void on_fire(int id) {
    if (fired.size() >= limit) return;  // the reference stops here too
    const uint64_t now = now_ps();
    fired.emplace_back(id, now);
    if (fired.size() >= limit) return;
    react(
        rng, now, saved, [&](int i, uint64_t t) { nodes[i].t.at(t); },
        [&](int i, uint64_t t, uint64_t s) { nodes[i].t.at_as_of(t, s); }, [&](int i) { nodes[i].t.cancel(); },
        [] { return Calendar::get().take_seq(); });
  }
};
void Node::fire() { d->on_fire(id); }

struct Reference {
  struct State {
    bool armed = false;
    uint64_t at = 0, seq = 0;
  };
  std::mt19937_64 rng{777};
  std::vector<State> st = std::vector<State>(kTimers);
  std::set<std::tuple<uint64_t, uint64_t, int>> q;
  uint64_t seq = 0;
  Saved saved;
  std::vector<std::pair<int, uint64_t>> fired;
  void arm(int i, uint64_t t, uint64_t s) {
    State& x = st[i];
    if (x.armed && (x.at < t || (x.at == t && x.seq <= s))) return;
    if (x.armed) q.erase({x.at, x.seq, i});
    x = State{true, t, s};
    q.insert({t, s, i});
  }
  void cancel(int i) {
    if (st[i].armed) q.erase({st[i].at, st[i].seq, i});
    st[i].armed = false;
  }
  void run(size_t limit, uint64_t until) {
    while (!q.empty() && fired.size() < limit) {
      const auto [t, s, i] = *q.begin();
      if (t >= until) break;
      q.erase(q.begin());
      st[i].armed = false;
      fired.emplace_back(i, t);
      if (fired.size() >= limit) break;
      react(
          rng, t, saved, [&](int j, uint64_t at) { arm(j, at, seq++); }, [&](int j, uint64_t at, uint64_t sq) { arm(j, at, sq); },
          [&](int j) { cancel(j); }, [&] { return seq++; });
    }
  }
};

}  // namespace self_driving

TEST(Calendar, SelfDrivingStreamAcrossTheWheelAndBeyondMatchesASortedReference) {
  using namespace self_driving;
  Driver d;
  Reference ref;
  for (int i = 0; i < kTimers; ++i) {
    d.nodes[i].id = i;
    d.nodes[i].d = &d;
  }
  // Seed both with the same first arms (order numbers 0..kTimers-1 in both).
  for (int i = 0; i < kTimers; ++i) {
    const uint64_t t = 1 + d.rng() % 3000000;
    ref.rng();  // keep the streams aligned
    d.nodes[i].t.at(t);
    ref.arm(i, t, ref.seq++);
  }
  const uint64_t until = 20000000000ull;  // 20 ms
  Calendar::get().set_run_ahead(until);
  sc_core::sc_start(sc_core::sc_time::from_value(until));
  Calendar::get().set_run_ahead(0);
  ref.run(d.limit, until);
  ASSERT_GT(d.fired.size(), 1000u);
  ASSERT_EQ(d.fired.size(), ref.fired.size());
  for (size_t j = 0; j < d.fired.size(); ++j) {
    ASSERT_EQ(d.fired[j], ref.fired[j]) << "firing " << j;
  }
  // The stream did use the far range: some firing came more than the wheel's span after the previous.
  uint64_t max_gap = 0;
  for (size_t j = 1; j < d.fired.size(); ++j) max_gap = std::max(max_gap, d.fired[j].second - d.fired[j - 1].second);
  EXPECT_GT(max_gap, 4194304u);
}

// core::ps builds a delay without SystemC's out-of-line from_value() below
// 2^52 ps. Expected: the value itself (the resolution is 1 ps), at the edges
// of the fast path (0, 1, 2^52 +- 1, 2^53 +- 1, 2^64 - 1) and at odd
// values whose low bits a double holding them imprecisely would round away.
TEST(CoreTime, PsIsExactAcrossTheFastPathAndBeyondIt) {
  using rocesim::core::ps;
  std::vector<uint64_t> vs = {0,
                              1,
                              2,
                              999,
                              1000,
                              80,
                              (uint64_t(1) << 52) - 1,
                              uint64_t(1) << 52,
                              (uint64_t(1) << 52) + 1,
                              (uint64_t(1) << 53) - 1,
                              uint64_t(1) << 53,
                              (uint64_t(1) << 53) + 1,
                              (uint64_t(1) << 60) + 12345,
                              ~uint64_t(0)};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) vs.push_back(rng() >> (rng() % 64));
  for (uint64_t v : vs) {
    EXPECT_EQ(ps(v).value(), v) << v;
    EXPECT_EQ(ps(v), sc_core::sc_time::from_value(v)) << v;
  }
}

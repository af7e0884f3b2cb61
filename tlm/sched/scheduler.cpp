#include "sched/scheduler.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <stdexcept>
#include <string>

namespace rocesim::sched {

namespace {

// The queues whose head is not empty (bit q: head_bytes[q] != 0), and in
// `over` those whose head exceeds `max_bytes`: on x86-64 with SSE2 (its
// baseline) both from two 128-bit compares per half instead of a loop over
// the eight queues, the same masks either way.
inline uint8_t head_masks(const Heads& head_bytes, uint32_t max_bytes, uint8_t& over) {
  static_assert(kQueues == 8, "two vectors of four 32-bit heads");
#if defined(__SSE2__)
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(head_bytes.data()));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(head_bytes.data() + 4));
  const __m128i zero = _mm_setzero_si128();
  // Unsigned a > b as signed (a ^ 2^31) > (b ^ 2^31).
  const __m128i bias = _mm_set1_epi32(static_cast<int>(0x80000000u));
  const __m128i lim = _mm_xor_si128(_mm_set1_epi32(static_cast<int>(max_bytes)), bias);
  const int empty = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, zero))) |
                    _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, zero))) << 4;
  over = static_cast<uint8_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(_mm_xor_si128(lo, bias), lim))) |
                              _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(_mm_xor_si128(hi, bias), lim)))
                                  << 4);
  return static_cast<uint8_t>(~empty);
#else
  uint8_t backlogged = 0;
  over = 0;
  for (size_t q = 0; q < kQueues; ++q) {
    over |= static_cast<uint8_t>((head_bytes[q] > max_bytes) << q);
    backlogged |= static_cast<uint8_t>((head_bytes[q] != 0) << q);
  }
  return backlogged;
#endif
}

constexpr bool has(uint8_t mask, size_t q) { return (mask >> q) & 1u; }
constexpr uint8_t bit(size_t q) { return static_cast<uint8_t>(1u << q); }

}  // namespace

Scheduler::Scheduler(const PortConfig& config) : m_cfg(config) {
  const std::vector<std::string> errors = validate(config);
  if (!errors.empty()) {
    std::string msg;
    for (const std::string& e : errors) msg += e + "\n";
    throw std::invalid_argument(msg);
  }
  for (size_t q = 0; q < kQueues; ++q) {
    const QueueConfig& qc = config.queues[q];
    if (qc.mode == Mode::strict)
      m_strict |= bit(q);
    else
      m_quantum[q] = qc.quantum_bytes;
    m_qshaper[q] = TokenBucket(qc.shaper);
    if (m_qshaper[q].enabled()) m_shaped |= bit(q);
  }
  m_pshaper = TokenBucket(config.shaper);
  m_port_shaped = m_pshaper.enabled();
  m_max_frame = config.max_frame_bytes;
}

size_t Scheduler::check_q(int q) {
  if (q < 0 || q >= static_cast<int>(kQueues)) throw std::invalid_argument("sched: queue " + std::to_string(q) + " out of range");
  return static_cast<size_t>(q);
}

void Scheduler::fail_inputs(const Heads& head_bytes, uint64_t now_ps, const char* what) const {
  if (now_ps < m_last_ps)
    throw std::invalid_argument(std::string("sched::") + what + ": time " + std::to_string(now_ps) +
                                " ps is before the last call's " + std::to_string(m_last_ps) + " ps");
  for (size_t q = 0; q < kQueues; ++q)
    if (head_bytes[q] > m_cfg.max_frame_bytes)
      throw std::invalid_argument(std::string("sched::") + what + ": queue " + std::to_string(q) + " head of " +
                                  std::to_string(head_bytes[q]) + " bytes exceeds max_frame_bytes " +
                                  std::to_string(m_cfg.max_frame_bytes));
  throw std::logic_error("sched::fail_inputs without a bad input");
}

uint8_t Scheduler::eligible_mask(uint8_t backlogged, const Heads& head_bytes, uint8_t paused_mask,
                                 uint64_t t_ps) const {
  uint8_t m = backlogged & static_cast<uint8_t>(~paused_mask);
  for (uint8_t s = m & m_shaped; s; s &= static_cast<uint8_t>(s - 1)) {
    const size_t q = static_cast<size_t>(__builtin_ctz(s));
    if (!m_qshaper[q].conforms(head_bytes[q], t_ps)) m &= static_cast<uint8_t>(~bit(q));
  }
  return m;
}

void Scheduler::drop_empty(Dwrr& d, uint8_t backlogged) const {
  // An empty queue banks no credit (DRR: deficit reset when the queue empties).
  // Only queues in d.credit can hold a deficit.
  for (uint8_t x = d.credit & static_cast<uint8_t>(~backlogged); x; x &= static_cast<uint8_t>(x - 1))
    d.deficit[static_cast<size_t>(__builtin_ctz(x))] = 0;
  d.credit &= backlogged;
  if ((d.member & ~backlogged) == 0) return;  // common case: no member emptied
  DwrrList& l = d.list;
  uint8_t k = 0;
  for (uint8_t i = 0; i < l.size; ++i) {
    const uint8_t x = l.order[i];
    if (has(backlogged, x))
      l.order[k++] = x;
    else if (i == 0)
      l.turn_open = false;  // its turn ends with it
  }
  l.size = k;
  d.member &= backlogged;
}

int Scheduler::choose(Dwrr& d, uint8_t eligible, uint8_t backlogged, const Heads& head_bytes, Opened* opened) const {
  drop_empty(d, backlogged);
  // Paused or shaper-blocked DWRR queues leave the list keeping their deficit;
  // newly eligible ones join at the tail (in index order). See scheduler.h.
  const uint8_t dw = eligible & static_cast<uint8_t>(~m_strict);
  DwrrList& l = d.list;
  if (d.member != dw) {
    if (d.member & ~dw) {
      uint8_t k = 0;
      for (uint8_t i = 0; i < l.size; ++i) {
        const uint8_t x = l.order[i];
        if (has(dw, x))
          l.order[k++] = x;
        else if (i == 0)
          l.turn_open = false;
      }
      l.size = k;
      d.member &= dw;
    }
    for (uint8_t q = 0; q < kQueues; ++q)
      if (has(dw, q) && !has(d.member, q)) l.order[l.size++] = q;
    d.member = dw;
  }

  // Strict priority: the highest eligible strict queue. DWRR state stays as it is.
  const uint8_t st = eligible & m_strict;
  if (st) return 31 - __builtin_clz(st);

  if (l.size == 0) return -1;
  // DRR (Shreedhar & Varghese 1995). Terminates: every turn adds a quantum > 0;
  // with quantum >= max_frame_bytes (validate()) within size + 1 turns.
  for (;;) {
    const uint8_t x = l.order[0];
    if (!l.turn_open) {
      d.deficit[x] += m_quantum[x];
      d.credit |= bit(x);
      l.turn_open = true;
      if (opened) ++(*opened)[x];
    }
    if (head_bytes[x] <= d.deficit[x]) return x;
    // Head larger than what is left: the turn ends, the deficit is kept, the
    // queue goes to the tail.
    for (uint8_t i = 1; i < l.size; ++i) l.order[i - 1] = l.order[i];
    l.order[l.size - 1] = x;
    l.turn_open = false;
  }
}

uint8_t Scheduler::checked_backlog(const Heads& head_bytes, uint64_t now_ps, const char* what) const {
  uint8_t over;
  const uint8_t backlogged = head_masks(head_bytes, m_max_frame, over);
  if (over || now_ps < m_last_ps) fail_inputs(head_bytes, now_ps, what);
  return backlogged;
}

int Scheduler::pick(const Heads& head_bytes, uint8_t paused_mask, uint64_t now_ps) {
  const uint8_t backlogged = checked_backlog(head_bytes, now_ps, "pick");
  m_last_ps = now_ps;
  m_pending = -1;
  const uint8_t eligible = eligible_mask(backlogged, head_bytes, paused_mask, now_ps);

  int c;
  if (!m_port_shaped) {
    // Without a port shaper, choose() returns a queue whenever one is
    // eligible (a strict one, or the DWRR list is not empty), so the state
    // is changed in place: a pick returning -1 is exactly the case with no
    // eligible queue, handled below as in the general path.
    if (eligible == 0) {
      drop_empty(m_dwrr, backlogged);
      ++m_port.idle_picks;
      return -1;
    }
    Opened opened{};
    c = choose(m_dwrr, eligible, backlogged, head_bytes, &opened);
    for (uint8_t x = m_dwrr.member; x; x &= static_cast<uint8_t>(x - 1))
      m_ctr[static_cast<size_t>(__builtin_ctz(x))].turns += opened[static_cast<size_t>(__builtin_ctz(x))];
  } else {
    // Choose on a copy and commit only if a queue is returned: a pick that
    // returns -1 leaves the state as it was (apart from empty queues), which
    // keeps next_eligible_ps() exact however often the caller polls.
    Dwrr d = m_dwrr;
    Opened opened{};
    c = choose(d, eligible, backlogged, head_bytes, &opened);
    if (c >= 0 && !m_pshaper.conforms(head_bytes[static_cast<size_t>(c)], now_ps)) {
      ++m_port.port_shaper_blocked;
      c = -1;
    }
    if (c < 0) {
      drop_empty(m_dwrr, backlogged);
      ++m_port.idle_picks;
      return -1;
    }
    m_dwrr = d;
    for (size_t q = 0; q < kQueues; ++q) m_ctr[q].turns += opened[q];
  }
  const size_t qi = static_cast<size_t>(c);
  ++m_ctr[qi].picks;
  ++m_port.picks;
  m_pending = c;
  m_pending_bytes = head_bytes[qi];
  return c;
}

void Scheduler::sent(int q, uint32_t bytes, uint64_t now_ps) {
  const size_t qi = check_q(q);
  if (now_ps < m_last_ps)
    throw std::invalid_argument("sched::sent: time " + std::to_string(now_ps) + " ps is before the last call's " +
                                std::to_string(m_last_ps) + " ps");
  if (q != m_pending || bytes != m_pending_bytes)
    throw std::invalid_argument("sched::sent: queue " + std::to_string(q) + ", " + std::to_string(bytes) +
                                " bytes is not the last pick (queue " + std::to_string(m_pending) + ", " +
                                std::to_string(m_pending_bytes) + " bytes)");
  m_last_ps = now_ps;
  // The pick checked head <= deficit, so this cannot underflow.
  if (!has(m_strict, qi)) m_dwrr.deficit[qi] -= bytes;
  if (has(m_shaped, qi)) m_qshaper[qi].take(bytes, now_ps);
  if (m_port_shaped) m_pshaper.take(bytes, now_ps);
  ++m_ctr[qi].frames;
  m_ctr[qi].bytes += bytes;
  ++m_port.frames;
  m_port.bytes += bytes;
  m_pending = -1;
}

uint64_t Scheduler::next_eligible_ps(const Heads& head_bytes, uint8_t paused_mask, uint64_t now_ps) const {
  const uint8_t backlogged = checked_backlog(head_bytes, now_ps, "next_eligible_ps");
  const uint8_t cand = backlogged & static_cast<uint8_t>(~paused_mask);
  if (cand == 0) return kNever;

  // The eligible set only grows with time (buckets fill), at the times its
  // queue shapers allow each head. Between two such times the choice is
  // fixed and only the port bucket decides; so walk the times in order.
  std::array<uint64_t, kQueues> ready{};
  std::array<uint64_t, kQueues> times{};
  size_t n = 0;
  for (size_t q = 0; q < kQueues; ++q) {
    if (!has(cand, q)) continue;
    ready[q] = m_qshaper[q].ready_ps(head_bytes[q], now_ps);  // finite: head <= max_frame <= burst
    times[n++] = ready[q];
  }
  // Sort and deduplicate (at most 8; insertion sort, which also avoids GCC 12's
  // false -Warray-bounds on std::sort over a std::array prefix).
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = times[i];
    size_t j = m;
    while (j > 0 && times[j - 1] > v) --j;
    if (j > 0 && times[j - 1] == v) continue;
    for (size_t k = m; k > j; --k) times[k] = times[k - 1];
    times[j] = v;
    ++m;
  }
  n = m;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t t = times[i];
    uint8_t elig = 0;
    for (size_t q = 0; q < kQueues; ++q)
      if (has(cand, q) && ready[q] <= t) elig |= bit(q);
    Dwrr d = m_dwrr;
    const int c = choose(d, elig, backlogged, head_bytes, nullptr);  // >= 0: elig is not empty
    const uint64_t at = m_pshaper.ready_ps(head_bytes[static_cast<size_t>(c)], t);
    if (i + 1 < n && at >= times[i + 1]) continue;  // the eligible set (and maybe the choice) changes first
    return at;
  }
  return kNever;  // not reached
}

}  // namespace rocesim::sched

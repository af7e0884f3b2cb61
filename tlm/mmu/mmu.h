// The MMU: buffer admission for a shared-buffer switch, as a deterministic
// state machine over two operations, admit() and release(). No SystemC, no
// time, no randomness, integer cells only: the Verilated RTL of the same
// logic is driven with the same operation stream and compared decision by
// decision (and counter by counter), so everything here is defined exactly.
//
// Accounting (SAI saibuffer.h, SONiC buffer docs)
//   A packet of c cells is charged twice, as two views of the same cells:
//   - ingress, on its (in_port, PG): PG reserve first, then the PG's share of
//     its ingress service pool, or (lossless only) headroom;
//   - egress, on its (out_port, queue): queue reserve first, then the queue's
//     share of its egress service pool.
//   A pool's `used` is the shared cells charged to it; reserves and headroom
//   are outside the pools. validate() makes the ingress view fit the buffer,
//   so the cells in use (total_used()) can never exceed total_cells.
//
// Shared limit of one PG or queue, checked against its shared use s
//   (not its total: the reserve is guaranteed and not part of the contest):
//   - dynamic (Choudhury & Hahne, "Dynamic queue length thresholds for
//     shared-memory packet switches", IEEE/ACM ToN 6(2), 1998):
//       T = alpha * (pool_size - pool_used), alpha = 2^n, n in [-7, 7]
//       (SAI SHARED_DYNAMIC_TH), computed with shifts: X << n or X >> -n, so
//       for n < 0 the threshold is floor(X / 2^-n). pool_size - pool_used
//       saturates at 0.
//     The packet is admitted to shared when s < T *before* it is enqueued
//     (the paper's rule: a queue below its threshold at arrival may take the
//     packet even if that carries it past T). The RTL compares a counter with
//     a threshold, no adder on the packet size. Consequence: a queue can
//     overshoot T by at most one packet minus one cell; N saturated queues
//     each settle at alpha*B/(1+N*alpha) within one cell (the floor) plus one
//     packet, which tb/tests/mmu checks for n in {-2,0,2} x N in {1,2,4}
//     with 1- and 4-cell packets.
//     Caveat for system-level tests: with packets of c cells the discrete
//     steady state is not unique. A queue's own release raises its threshold
//     by alpha*c, so a spread of up to about c*(1+alpha) cells between queues
//     sustains itself. Arrivals interleaved fairly across the queues (as in
//     the unit test) stay within the bound above; an order that always
//     offers one queue's packets first lets that queue settle higher (24
//     cells off for alpha 4, N 4, c 4 in our experiments).
//   - static (SAI SHARED_STATIC_TH): admitted when s + shared_part <= S, so
//     the shared use never exceeds S: "a static threshold caps the queue".
//   The shared part must also fit the pool: pool_used + part <= pool_size,
//   else the reason is pool_full (checked before the threshold, since it is
//   the more basic cause).
//   Only the part of the packet beyond the remaining reserve is shared; a
//   packet that fits in the reserve passes without any shared check.
//
// Lossy packets (op.lossless false, or the PG is not lossless)
//   Dropped when ingress or egress admission fails; nothing is charged.
//   Order: ingress (pool_full, then ingress_limit), then egress (pool_full,
//   then egress_limit); the first failure is the reason.
//
// Lossless packets (op.lossless and the PG's profile is lossless)
//   Never dropped by shared thresholds or full pools. The part beyond the PG
//   reserve goes to shared if it passes the PG's ingress check, otherwise all
//   of that part goes to headroom (no split shared/headroom within a packet)
//   and in_headroom is set. Headroom: the PG's own headroom_cells, or, with a
//   shared headroom pool, the pool with headroom_cells as the PG's limit in
//   it (SONiC shared headroom pool; SAI XOFF_SIZE / XOFF_TH). A lossless drop
//   happens only when that does not fit: drop_headroom_overflow.
//   Egress: accounting only, no drop (commercial ASICs disable egress drop
//   on lossless queues so that PFC, not a drop, answers congestion). The
//   egress pool's `used` may then exceed its size; lossy queues in that pool
//   see zero free cells until it falls back.
//   A packet whose op.lossless is set but whose PG is lossy is handled as
//   lossy: a PG without headroom cannot absorb PFC's in-flight data.
//
// Release (dequeue/transmit): counter order, not per-packet exactness
//   release() returns c cells to the PG and the queue in the reverse order of
//   filling: PG headroom first, then PG shared, then PG reserve; queue shared
//   first, then queue reserve. Hence the invariants
//     reserved == min(total, reserve); shared > 0 or headroom > 0 only when
//     the reserve is full,
//   which keep "shared use" meaning "use beyond the reserve" for DT and for
//   the PFC generator, and free the headroom (the space that absorbs data in
//   flight after XOFF) as early as possible. This is how counter-based MMUs
//   account (the HPCC ns-3 SwitchMmu releases headroom first, then shared);
//   the RTL needs no per-packet split. The AdmitResult still records what
//   admit() charged (Charge) and release() reports what it returned. Once
//   the buffer is empty, charges and returns agree bucket by bucket over all
//   packets, so every counter is back at zero; a single release need not
//   mirror its own packet's admit (a packet charged to shared may return
//   headroom cells that a later packet took).
//
// State for the PFC generator (issue 4): AdmitResult/ReleaseResult carry the
//   PG's state after the operation (reserved, shared, headroom, current
//   threshold), and pg_state() reads it at any time, since a dynamic
//   threshold moves when other PGs in the pool change. The switch evaluates
//   a PG's XOFF/XON on its own admits and releases and on its refresh tick
//   (pg_state() then), not on other PGs' operations: pfc.h states why.
//
// Counters: per PG and queue, admitted/released packets and cells, drops by
//   reason (a drop is counted on both the PG and the queue it was headed
//   for; totals by reason once), peaks; per pool used/peak; shared headroom
//   pool used/peak; total used/peak. Callers sample current values for time
//   averages; reset_peaks() starts a new peak interval.
//
// Cost: O(1) per operation, flat arrays sized at construction, no heap
//   allocation after it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "mmu/config.h"

namespace rocesim::mmu {

enum class Verdict : uint8_t {
  admit = 0,
  drop_ingress_limit,      // lossy: PG shared use at its threshold
  drop_egress_limit,       // lossy: queue shared use at its threshold
  drop_pool_full,          // lossy: the ingress or egress pool has no room for the shared part
  drop_headroom_overflow,  // lossless: headroom (per PG or shared pool) exhausted
  count_                   // keep last
};
inline constexpr size_t kVerdicts = static_cast<size_t>(Verdict::count_);
// Reason names as the packet layer's DropReason spells them: "admit",
// "ingress_limit", "egress_limit", "pool_full", "headroom_overflow".
const char* verdict_name(Verdict v);

// One packet arriving at the MMU.
struct AdmitOp {
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint16_t out_port = 0;
  uint8_t queue = 0;
  uint32_t cells = 0;     // >= 1; see cells_for_bytes()
  bool lossless = false;  // the packet's priority is PFC-enabled
};

// Where a packet's cells were charged (admit) or returned from (release).
struct Charge {
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint16_t out_port = 0;
  uint8_t queue = 0;
  uint8_t in_pool = 0;  // ingress pool of the PG
  uint8_t eg_pool = 0;  // egress pool of the queue
  uint32_t in_reserved = 0, in_shared = 0, headroom = 0;
  uint32_t eg_reserved = 0, eg_shared = 0;
  uint32_t cells() const { return in_reserved + in_shared + headroom; }
};

// A (port, PG) now. threshold: the current limit on `shared` (dynamic: alpha
// times the pool's free cells; static: the static value).
struct PgState {
  uint32_t reserved = 0, shared = 0, headroom = 0;
  uint64_t threshold = 0;
  uint32_t total() const { return reserved + shared + headroom; }
};

struct QueueState {
  uint32_t reserved = 0, shared = 0;
  uint64_t threshold = 0;
  uint32_t total() const { return reserved + shared; }
};

struct AdmitResult {
  Verdict verdict = Verdict::admit;
  bool lossless = false;     // handled as lossless (op.lossless and a lossless PG)
  bool in_headroom = false;  // admitted and charged (partly) to headroom
  Charge charge;             // what was charged; zero counts on a drop
  PgState pg;                // the PG after the operation
  QueueState queue;          // the queue after the operation
  bool admitted() const { return verdict == Verdict::admit; }
};

// A packet leaving the buffer (dequeued for transmission, or discarded after
// admission). Identifies the PG and queue it was admitted to, and its size.
struct ReleaseOp {
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint16_t out_port = 0;
  uint8_t queue = 0;
  uint32_t cells = 0;
  static ReleaseOp of(const Charge& c) { return {c.in_port, c.pg, c.out_port, c.queue, c.cells()}; }
};

struct ReleaseResult {
  Charge returned;  // buckets the cells came back from (headroom, shared, reserve order)
  PgState pg;       // the PG after the release (for the XON decision)
  QueueState queue;
};

struct DropCounters {
  std::array<uint64_t, kVerdicts> packets{};  // indexed by Verdict; [admit] stays 0
  std::array<uint64_t, kVerdicts> cells{};
  uint64_t total_packets() const;
};

struct PgCounters {
  uint64_t admitted_packets = 0, admitted_cells = 0;
  uint64_t released_packets = 0, released_cells = 0;
  uint64_t headroom_packets = 0, headroom_cells = 0;  // admitted with in_headroom, and their headroom cells
  uint32_t peak_cells = 0;     // peak of total (reserved + shared + headroom)
  uint32_t peak_shared = 0;
  uint32_t peak_headroom = 0;
  DropCounters dropped;
};

struct QueueCounters {
  uint64_t admitted_packets = 0, admitted_cells = 0;
  uint64_t released_packets = 0, released_cells = 0;
  uint32_t peak_cells = 0;
  uint32_t peak_shared = 0;
  DropCounters dropped;
};

struct PoolState {
  uint32_t size = 0;  // configured shared size
  uint32_t used = 0;  // shared cells charged to it (egress: may exceed size, lossless only)
  uint32_t peak = 0;
};

class Mmu {
 public:
  // Throws std::invalid_argument with validate()'s messages, one per line,
  // if the configuration is not valid.
  explicit Mmu(const Config& config);

  // The operation interface (mirrored by the RTL). Both throw
  // std::invalid_argument on a malformed operation (index out of range,
  // zero cells, releasing more than the PG or queue holds): a caller bug.
  AdmitResult admit(const AdmitOp& op);
  ReleaseResult release(const ReleaseOp& op);
  // Books a decision made elsewhere (the RTL queue manager in rtl mode,
  // tlm/qm/counting.h): the accounting and counters admit() gives for that
  // verdict and charge, with no decision of its own (no limit is checked).
  // On admit, the charge's ingress buckets (reserved + shared + headroom) and
  // its egress buckets (reserved + shared) must each hold op.cells
  // (std::invalid_argument otherwise); on a drop its counts are ignored.
  AdmitResult book(const AdmitOp& op, Verdict v, const Charge& charge);

  // Current state (O(1), for the PFC generator, ECN and time-averaging).
  PgState pg_state(uint16_t port, uint8_t pg) const;
  QueueState queue_state(uint16_t port, uint8_t queue) const;
  // The cells a queue holds (queue_state(port, queue).total() without its threshold).
  uint32_t queue_cells(uint16_t port, uint8_t queue) const {
    const QRec& a = m_q[q_index(port, queue)];
    return a.reserved + a.shared;
  }
  const PoolState& pool(size_t i) const { return m_pools[i]; }
  uint32_t headroom_pool_used() const { return m_hdrm_used; }  // shared headroom pool (0 if none)
  uint32_t headroom_pool_peak() const { return m_hdrm_peak; }
  uint32_t total_used() const { return m_total_used; }  // cells in the buffer
  uint32_t total_peak() const { return m_total_peak; }

  // Cumulative counters (a copy: they are kept with the PG's and queue's
  // accounting, the drop counters apart).
  PgCounters pg_counters(uint16_t port, uint8_t pg) const;
  QueueCounters queue_counters(uint16_t port, uint8_t queue) const;
  const DropCounters& drops() const { return m_drops; }  // all drops, once each
  uint64_t admitted_packets() const { return m_admitted_packets; }
  uint64_t released_packets() const { return m_released_packets; }

  // Start a new peak interval: every peak becomes the current value.
  void reset_peaks();

  const Config& config() const { return m_config; }
  size_t ports() const { return m_config.ports.size(); }
  size_t pools() const { return m_pools.size(); }
  uint32_t cells_for(uint64_t bytes) const {
    return static_cast<uint32_t>(cells_for_bytes(bytes, m_config.cell_bytes));
  }

 private:
  // Resolved limit of one PG or queue.
  struct Limit {
    uint32_t reserve = 0;
    uint32_t static_cells = 0;
    uint8_t pool = 0;
    bool dynamic = false;
    int8_t shift = 0;  // n of alpha = 2^n
  };
  // Everything an operation reads and writes of one PG, and of one queue, in
  // one record each (a PG's in two cache lines, a queue's in one), not in
  // separate tables for the parameters, the accounting and the counters: in a
  // large fabric every switch's state is cold when its next packet comes, so
  // each line an admission or a release touches is a miss. The drop counters,
  // touched only on a drop, are apart (and exist only after the first).
  struct alignas(32) PgRec {
    uint32_t reserved = 0, shared = 0, headroom = 0;  // the accounting
    Limit lim;
    uint32_t headroom_limit = 0;  // per-PG headroom, or the PG's limit in the shared headroom pool
    bool lossless = false;
    uint32_t peak_cells = 0, peak_shared = 0;
    uint64_t admitted_packets = 0, admitted_cells = 0;
    uint32_t peak_headroom = 0;
    uint64_t released_packets = 0, released_cells = 0;
    uint64_t headroom_packets = 0, headroom_cells = 0;
  };
  struct alignas(64) QRec {
    uint32_t reserved = 0, shared = 0;  // the accounting
    Limit lim;
    uint32_t peak_cells = 0, peak_shared = 0;
    uint64_t admitted_packets = 0, admitted_cells = 0;
    uint64_t released_packets = 0, released_cells = 0;
  };
  static_assert(sizeof(PgRec) == 96 && sizeof(QRec) == 64, "a PG's record in 96 bytes, a queue's in one line");

  size_t pg_index(uint16_t port, uint8_t pg) const { return size_t(port) * kPgsPerPort + pg; }
  size_t q_index(uint16_t port, uint8_t q) const { return size_t(port) * kQueuesPerPort + q; }
  uint64_t threshold(const Limit& l) const;
  // admit()'s and book()'s second half, for PG gi and queue qi: counts the
  // drop of c cells, or charges ch (routed; its buckets zero on a drop).
  AdmitResult commit(size_t gi, size_t qi, uint32_t c, bool lossless, Verdict v, const Charge& ch);
  // admit, pool_full or the given limit verdict, for `part` shared cells on top of `shared`.
  Verdict shared_check(const Limit& l, uint32_t shared, uint32_t part, Verdict limit) const;
  // Throws std::invalid_argument on an index out of range or zero cells (the
  // test inline, the message out of line: this runs on every operation).
  void check_indices(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t cells,
                     const char* what) const {
    const size_t n = m_config.ports.size();
    if (in_port >= n || out_port >= n || pg >= kPgsPerPort || queue >= kQueuesPerPort || cells == 0)
      fail_indices(in_port, pg, out_port, queue, cells, what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_indices(uint16_t in_port, uint8_t pg, uint16_t out_port,
                                                           uint8_t queue, uint32_t cells, const char* what) const;
  PgState make_pg_state(size_t gi) const;
  QueueState make_q_state(size_t qi) const;

  Config m_config;
  std::vector<PgRec> m_pg;               // port * 8 + pg
  std::vector<QRec> m_q;                 // port * 8 + queue
  std::vector<DropCounters> m_pg_drops;  // as m_pg, empty until the first drop
  std::vector<DropCounters> m_q_drops;   // as m_q, likewise
  std::vector<PoolState> m_pools;
  bool m_shared_hdrm = false;
  uint32_t m_hdrm_size = 0, m_hdrm_used = 0, m_hdrm_peak = 0;
  uint32_t m_total_used = 0, m_total_peak = 0;
  uint64_t m_admitted_packets = 0, m_released_packets = 0;
  DropCounters m_drops;
};

}  // namespace rocesim::mmu

// The queue manager: the switch chip's buffer, admission, PFC-state and ECN
// decisions as one block with one narrow operation interface.
//
// What a switch ASIC's queue manager holds, and this block holds:
//   - the free-cell list and the next-cell pointer memory (one pointer per
//     cell): a packet of c cells is a chain of c cells taken off the free
//     list; the packet buffer memory (buffer::PacketBuffer, the TLM-2.0
//     target that holds the bytes) follows the chain through next_cell();
//   - per egress (port, queue) a linked list of packets: a descriptor per
//     packet (its head cell, cells, bytes and where it was charged, and the
//     next packet of its queue), from a pool of descriptors;
//   - the MMU accounting (mmu::Mmu: reserves, shared pools with dynamic or
//     static thresholds, headroom, drop reasons; mmu.h states every rule);
//   - the XOFF/XON state of every (ingress port, PG) with hysteresis
//     (pfc::Generator; pfc.h states when it is evaluated);
//   - the ECN decision of every egress queue (ecn::Marker; marker.h states
//     the rules), with the WRED random word an input of the operation, so a
//     second implementation (the RTL) given the same operations makes the
//     same decisions with no random source of its own.
//
// No SystemC, no time, integers only (the one real, WRED's Pmax, is fixed to
// 2^-32 at construction). Three operations change state; everything else is a
// read. Each is defined exactly below, as the RTL must mirror it.
//
// enqueue(op): a packet of op.cells cells for (op.out_port, op.queue) from
//   (op.in_port, op.pg).
//   1. Admission: mmu::Mmu::admit with (in_port, pg, out_port, queue, cells,
//      lossless). On a drop: verdict != admit, nothing else changes (no
//      cells taken, no PFC evaluation, no ECN decision), head_cell = kNoCell.
//   2. Cells: op.cells cells off the free list, in list order (LIFO: the
//      most recently freed cell first; at reset the list is 0, 1, 2, ...,
//      total - 1); the chain's first is head_cell. The MMU's ingress view
//      fits the buffer (mmu::validate), so an admitted packet always finds
//      its cells.
//   3. PFC: when the packet was handled as lossless (result.lossless) and
//      PFC is enabled with priorities on that PG, the PG's generator is
//      evaluated with the PG's state after the admit and in_headroom:
//      result.pfc = xoff on a transition to XOFF, xon on one to XON, else none.
//   4. ECN: when op.ecn_frame (an IPv4 data frame) and the queue's marker is
//      not off and its point is enqueue, the marker decides on the queue as
//      the packet finds it, before its own cells or bytes are counted: in
//      cells the MMU's egress counter of the queue before the admit, in bytes
//      the queue's byte counter before op.bytes is added. rand32 is used iff
//      the decision is in the WRED ramp (result.ecn.drew).
//   5. The packet joins the tail of its queue's list; the queue's byte
//      counter grows by op.bytes.
// dequeue(op): the head packet of (op.port, op.queue), which must not be
//   empty (a caller bug otherwise, std::logic_error).
//   1. The packet leaves the list; the byte counter falls by its bytes.
//   2. Release: mmu::Mmu::release of the packet's charge (headroom, shared,
//      reserve order: mmu.h).
//   3. PFC: when the packet's PG is lossless (its MMU profile), the PG's
//      generator is evaluated with the PG's state after the release
//      (in_headroom false): result.pfc.
//   4. Its cells go back to the free list (head first: the chain is pushed
//      whole, so the head is the next cell handed out).
//   5. ECN: unless op.discard, when op.ecn_frame and the marker's point is
//      dequeue, the marker decides on the queue it leaves behind (after 1
//      and 2). op.discard (a packet thrown away, e.g. the PFC watchdog
//      flushing a stormed queue) makes no ECN decision.
//   The result carries the packet's head cell, cells, bytes and charge, so
//   the caller can read its bytes before it reuses the cells: the cells are
//   free once dequeue returns, and the next enqueue may take them.
// pfc_tick(port, pg): the PG's refresh tick while it is XOFF (pfc.h): its
//   generator evaluated on its state now (in_headroom false). Returns xon
//   when it resumes (the caller sends XON instead of the refresh), else none.
//   A PG that is not XOFF returns none and changes nothing.
//
// Cost: O(1) per operation plus one step per cell of the packet (the free
// list is walked as hardware walks it, one cell per step); no allocation
// except when the descriptor pool grows past its peak.
//
// Memory: proportional to the cells a run uses, not to total_cells. The free
// list is held as the cells freed so far (a LIFO of whole chains, linked
// through the next-cell memory) in front of the never-used cells
// [fresh, total), which are implicitly 0, 1, 2, ... in order: taking a cell
// pops the freed cells first, else takes fresh++. That is exactly the list
// above (the freed cells always lead to the first never-used one), so
// next_cell() of a never-used cell c answers c + 1 (kNoCell for the last),
// as the initialised list would, and the RTL's free list agrees in lockstep.
// fresh is the peak number of cells ever in use at once (a cell is taken
// fresh only when every cell below it is in use), and the one per-cell array,
// the next-cell pointers (4 bytes a cell), is written only below it: its
// pages start as untouched zero pages (core::ZeroArray). Descriptors are per
// packet held, from a pool that grows to the most packets held at once. So
// construction is O(ports), and memory O(peak cells in use) at 4 bytes a cell
// plus O(peak packets held).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/zero_array.h"
#include "ecn/marker.h"
#include "mmu/mmu.h"
#include "pfc/pfc.h"

namespace rocesim::qm {

inline constexpr uint32_t kNoCell = 0xffffffffu;
inline constexpr int kQueues = 8;  // per port (= PGs per port)

enum class PfcAction : uint8_t { none = 0, xoff, xon };
const char* pfc_action_name(PfcAction a);  // "none" | "xoff" | "xon"

struct Config {
  mmu::Config mmu;                            // the buffer's cells and every port's profiles
  std::array<ecn::MarkerConfig, kQueues> ecn{};  // marker of each queue index (every port alike)
  bool pfc_enabled = false;
  uint8_t pfc_pgs = 0;                        // bit g: PG g carries PFC priorities (has a generator)
  pfc::GeneratorConfig pfc;                   // thresholds in cells
};

struct EnqueueOp {
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint16_t out_port = 0;
  uint8_t queue = 0;
  uint32_t cells = 0;     // >= 1
  uint32_t bytes = 0;     // frame bytes (the queue's byte counter; ECN in bytes)
  bool lossless = false;  // the packet's priority is PFC-enabled (mmu::AdmitOp::lossless)
  bool ecn_frame = false; // the frame goes to the ECN marker (IPv4 data)
  uint8_t ecn = 0;        // its ECN codepoint (0..3)
  uint32_t rand32 = 0;    // the queue's next WRED word; consumed iff the result's ecn.drew
  // What the MMU is asked (step 1 below).
  mmu::AdmitOp admit_op() const { return mmu::AdmitOp{in_port, pg, out_port, queue, cells, lossless}; }
};

// The ECN part of a result. decided: the marker ran (ecn_frame, mode not
// off, this point); the rest as ecn::Decision.
struct EcnResult {
  bool decided = false;
  bool fired = false;  // the rule fired (would_mark), whatever the codepoint
  bool mark = false;   // ECT(0)/ECT(1) -> CE
  bool drew = false;   // rand32 was consumed
};

struct EnqueueResult {
  mmu::Verdict verdict = mmu::Verdict::admit;
  bool lossless = false;     // handled as lossless (mmu::AdmitResult::lossless)
  bool in_headroom = false;
  uint32_t head_cell = kNoCell;
  mmu::Charge charge;
  mmu::PgState pg;           // the PG after the operation
  PfcAction pfc = PfcAction::none;
  EcnResult ecn;
  bool admitted() const { return verdict == mmu::Verdict::admit; }
};

struct DequeueOp {
  uint16_t port = 0;
  uint8_t queue = 0;
  bool ecn_frame = false;  // the head packet goes to the ECN marker
  uint8_t ecn = 0;         // its ECN codepoint
  uint32_t rand32 = 0;
  bool discard = false;    // thrown away, not sent: no ECN decision
};

struct DequeueResult {
  uint32_t head_cell = kNoCell;
  uint32_t cells = 0;
  uint32_t bytes = 0;
  mmu::Charge charge;        // where it was charged (ports, PG, queue) and the buckets its cells came back from
  mmu::PgState pg;           // its PG after the release
  PfcAction pfc = PfcAction::none;
  EcnResult ecn;
};

// The operation interface the switch makes every buffer, admission, PFC-state
// and ECN decision through, and the read-only state it needs. Implementations:
// QueueManager (the C++ model, below); the Verilated RTL and a lockstep pair
// implement the same interface.
class QueueManagerIf {
 public:
  virtual ~QueueManagerIf() = default;
  virtual EnqueueResult enqueue(const EnqueueOp& op) = 0;
  virtual DequeueResult dequeue(const DequeueOp& op) = 0;
  virtual PfcAction pfc_tick(uint16_t port, uint8_t pg) = 0;

  // Reads (no state change).
  virtual uint32_t head_cell(uint16_t port, uint8_t queue) const = 0;  // kNoCell when empty
  virtual uint32_t queue_packets(uint16_t port, uint8_t queue) const = 0;
  virtual uint64_t queue_bytes(uint16_t port, uint8_t queue) const = 0;
  virtual uint32_t next_cell(uint32_t cell) const = 0;  // the chain (kNoCell after a packet's last cell)
  virtual uint32_t free_cells() const = 0;
  virtual bool xoff(uint16_t port, uint8_t pg) const = 0;
  virtual mmu::PgState pg_state(uint16_t port, uint8_t pg) const = 0;
  virtual mmu::QueueState queue_state(uint16_t port, uint8_t queue) const = 0;
  virtual uint32_t cells_for(uint64_t bytes) const = 0;
};

// A queue manager in front of another (recording, lockstep): the reads are
// the inner one's; subclasses define the three operations.
class ForwardingQueueManager : public QueueManagerIf {
 public:
  explicit ForwardingQueueManager(QueueManagerIf& inner) : m_inner(inner) {}
  uint32_t head_cell(uint16_t port, uint8_t queue) const override { return m_inner.head_cell(port, queue); }
  uint32_t queue_packets(uint16_t port, uint8_t queue) const override { return m_inner.queue_packets(port, queue); }
  uint64_t queue_bytes(uint16_t port, uint8_t queue) const override { return m_inner.queue_bytes(port, queue); }
  uint32_t next_cell(uint32_t cell) const override { return m_inner.next_cell(cell); }
  uint32_t free_cells() const override { return m_inner.free_cells(); }
  bool xoff(uint16_t port, uint8_t pg) const override { return m_inner.xoff(port, pg); }
  mmu::PgState pg_state(uint16_t port, uint8_t pg) const override { return m_inner.pg_state(port, pg); }
  mmu::QueueState queue_state(uint16_t port, uint8_t queue) const override { return m_inner.queue_state(port, queue); }
  uint32_t cells_for(uint64_t bytes) const override { return m_inner.cells_for(bytes); }

 protected:
  QueueManagerIf& m_inner;
};

// The C++ model.
class QueueManager final : public QueueManagerIf {
 public:
  // Throws std::invalid_argument when the MMU or a marker configuration is invalid.
  explicit QueueManager(const Config& cfg);

  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;

  uint32_t head_cell(uint16_t port, uint8_t queue) const override { return m_q[qi(port, queue)].head; }
  uint32_t queue_packets(uint16_t port, uint8_t queue) const override { return m_q[qi(port, queue)].packets; }
  uint64_t queue_bytes(uint16_t port, uint8_t queue) const override { return m_q[qi(port, queue)].bytes; }
  uint32_t next_cell(uint32_t cell) const override {
    return cell < m_fresh ? m_next[cell] : cell + 1 < m_total ? cell + 1 : kNoCell;
  }
  uint32_t free_cells() const override { return m_free_count; }
  bool xoff(uint16_t port, uint8_t pg) const override { return m_gen[qi(port, pg)].xoff(); }
  mmu::PgState pg_state(uint16_t port, uint8_t pg) const override { return m_mmu.pg_state(port, pg); }
  mmu::QueueState queue_state(uint16_t port, uint8_t queue) const override { return m_mmu.queue_state(port, queue); }
  uint32_t cells_for(uint64_t bytes) const override { return m_mmu.cells_for(bytes); }

  // The model's counters and components, for statistics and checks.
  const mmu::Mmu& mmu() const { return m_mmu; }
  // A queue whose marker is off has no marker (and counts nothing: zeros).
  const ecn::Counters& ecn_counters(uint16_t port, uint8_t queue) const {
    static const ecn::Counters kNone{};
    const int8_t m = m_marker_of[queue];
    return m < 0 ? kNone : m_markers[size_t(port) * m_markers_per_port + size_t(m)].counters();
  }
  // Cells reachable on the free list from its head, at most total + 1 (more
  // means a cycle): O(free cells), for invariant checks.
  uint32_t free_list_length() const;
  uint32_t total_cells() const { return m_total; }
  // Cells ever handed out: the peak of cells in use at once (above). The
  // per-cell state below it is the only per-cell state written.
  uint32_t cells_touched() const { return m_fresh; }
  const Config& config() const { return m_cfg; }
  size_t ports() const { return m_mmu.ports(); }
  // Test-only: takes n cells off the free list without the MMU knowing, to
  // corrupt the accounting on purpose (tests of --check-invariants).
  void take_cells_unaccounted_for_test(uint32_t n);

 private:
  static constexpr uint32_t kNoDesc = 0xffffffffu;
  struct Desc {              // per queued packet (24 bytes), in a pool: O(packets held), not O(cells)
    uint32_t next;           // the next packet of its queue, or kNoDesc
    uint32_t head;           // its head cell
    uint32_t tail;           // its last cell: the release links it to the free list without a walk
    uint32_t cells;
    uint32_t bytes;
    uint16_t in_port;
    uint8_t pg;
  };
  struct Queue {
    uint32_t head = kNoCell;  // the head packet's head cell (kNoCell when empty)
    uint32_t head_desc = kNoDesc, tail_desc = kNoDesc;
    uint32_t packets = 0;
    uint64_t bytes = 0;
  };
  size_t qi(uint16_t port, uint8_t q) const { return size_t(port) * kQueues + q; }
  // Takes n >= 1 cells (n <= m_free_count) off the free list, in list
  // order, linked as a chain ending in kNoCell; returns its head (the
  // caller counts them in m_free_count); *last is its last cell.
  uint32_t take_cells(uint32_t n, uint32_t* last);
  PfcAction pfc_eval(uint16_t port, uint8_t pg, const mmu::PgState& st, bool in_headroom);
  EcnResult ecn_decide(uint16_t port, uint8_t queue, uint64_t len, uint8_t ecn, uint32_t rand32);

  Config m_cfg;
  mmu::Mmu m_mmu;
  uint32_t m_total = 0;            // cells in the buffer
  core::ZeroArray<uint32_t> m_next;  // next-cell pointers (chains and freed cells), valid below m_fresh
  uint32_t m_fresh = 0;            // cells [m_fresh, m_total) never handed out
  uint32_t m_free_head = kNoCell;  // the free list's first cell (m_fresh when no cell was freed)
  uint32_t m_free_count = 0;
  // The freed part of the free list as the chains it was freed in (runs), a
  // stack whose top is the list's first run: the same list as the one through
  // m_next (each run's tail links to the next run's head, the bottom one's to
  // m_fresh), so taking n cells skips whole runs in O(1) each and walks links
  // only to split the last run it takes from, not cell by cell through the
  // whole packet. At most kMaxRuns are kept (a ring): a push onto a full stack
  // first merges its two bottom runs (adjacent in the list, so one run), so
  // the memory is fixed and only the runs taken last ever need a longer walk.
  struct Run {
    uint32_t head, tail, len;
  };
  static constexpr uint32_t kMaxRuns = 64;  // a power of two
  std::array<Run, kMaxRuns> m_runs{};
  uint32_t m_run_bottom = 0, m_run_count = 0;
  Run& top_run() { return m_runs[(m_run_bottom + m_run_count - 1) & (kMaxRuns - 1)]; }
  void push_run(const Run& r);
  std::vector<Desc> m_desc;        // the descriptor pool: grows only to the most packets held at once
  std::vector<uint32_t> m_desc_free;  // free descriptors (LIFO)
  std::vector<Queue> m_q;         // port * 8 + queue
  std::vector<pfc::Generator> m_gen;  // port * 8 + pg
  std::vector<uint8_t> m_lossless_pgs;  // per port: bit pg set when that PG is lossless (mmu config)
  // Markers only for the queue indices whose marker is not off:
  // m_markers[port * m_markers_per_port + m_marker_of[queue]].
  std::array<int8_t, kQueues> m_marker_of{};
  uint32_t m_markers_per_port = 0;
  std::vector<ecn::Marker> m_markers;
};

}  // namespace rocesim::qm

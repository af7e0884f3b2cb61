// The operation record: every queue-manager operation of a run, with its
// time and its result, as a text file (`rocesim run --record-ops FILE`), and
// its reader. qm_replay (tb/replay) drives a queue manager from it without
// SystemC and checks every decision, so an RTL engineer can reproduce a
// scenario's decisions on the model alone (and, with the RTL behind the same
// interface, on the RTL).
//
// Format (version 1), one record per line, fields separated by one space;
// lines starting with '#' are comments. First a configuration block per
// switch, then the operations in the order they happened:
//   rocesim-qm-ops 1
//   switch IDX NAME PORTS CELLS CELL_BYTES SHARED_HEADROOM_CELLS
//   pool IDX ingress|egress SIZE_CELLS dynamic_th|static_th
//   pg PORT PG POOL RESERVED from_pool|dynamic_th|static_th DYN_TH STATIC_CELLS HEADROOM LOSSLESS
//   queue PORT Q POOL RESERVED MODE DYN_TH STATIC_CELLS
//   ecn Q MODE POINT UNIT K KMIN KMAX PMAX K_HIGH K_LOW        (PMAX as %.17g)
//   pfc ENABLED PGS_MASK DYNAMIC_XOFF XOFF_CELLS offset|absolute|ratio XON_OFFSET XON_CELLS XON_RATIO_Q16
//   E T_PS SW IN PG OUT Q CELLS BYTES LOSSLESS ECN_FRAME ECN RAND32 : VERDICT LOSSLESS IN_HEADROOM HEAD
//       IN_RES IN_SH HDRM EG_RES EG_SH PG_RES PG_SH PG_HDRM PG_THR PFC DECIDED FIRED MARK DREW
//   D T_PS SW PORT Q ECN_FRAME ECN RAND32 DISCARD : HEAD CELLS BYTES IN_PORT PG IN_RES IN_SH HDRM EG_RES
//       EG_SH PG_RES PG_SH PG_HDRM PG_THR PFC DECIDED FIRED MARK DREW
//   T T_PS SW PORT PG : PFC
// (E and D are each one line.) Booleans are 0/1; VERDICT is mmu::verdict_name
// (admit, ingress_limit, egress_limit, pool_full, headroom_overflow); PFC is
// none/xoff/xon; HEAD is the cell index or -1. The fields before ':' are the
// operation, those after it the result.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "qm/queue_manager.h"

namespace rocesim::qm {

enum class OpKind : uint8_t { enqueue, dequeue, tick };

struct OpRecord {
  OpKind kind = OpKind::enqueue;
  uint64_t t_ps = 0;
  uint32_t sw = 0;
  EnqueueOp enq;
  EnqueueResult enq_r;
  DequeueOp deq;
  DequeueResult deq_r;
  uint16_t tick_port = 0;
  uint8_t tick_pg = 0;
  PfcAction tick_r = PfcAction::none;
};

// One line per record (with its newline).
std::string config_text(uint32_t sw, const std::string& name, const Config& c);
std::string op_text(const OpRecord& r);
// Whether the results of two records of the same operation are equal; when
// not, `diff` names the first field that differs, with both values.
bool same_result(const OpRecord& expected, const OpRecord& actual, std::string& diff);

// The file, read whole. Throws std::runtime_error "FILE:LINE:COL: what" on a
// malformed line.
struct OpsFile {
  struct Switch {
    std::string name;
    Config config;
  };
  std::vector<Switch> switches;
  std::vector<OpRecord> ops;
  std::vector<size_t> op_lines;  // the line of each op (1-based)
};
OpsFile read_ops_file(const std::string& path);
OpsFile parse_ops(const std::string& text, const std::string& name);

// A queue manager that forwards every operation to `inner` and appends the
// operation and its result to `out` (a FILE the caller owns), timed by now().
class RecordingQueueManager final : public ForwardingQueueManager {
 public:
  RecordingQueueManager(QueueManagerIf& inner, std::FILE* out, uint32_t sw, std::function<uint64_t()> now)
      : ForwardingQueueManager(inner), m_out(out), m_sw(sw), m_now(std::move(now)) {}
  EnqueueResult enqueue(const EnqueueOp& op) override;
  DequeueResult dequeue(const DequeueOp& op) override;
  PfcAction pfc_tick(uint16_t port, uint8_t pg) override;
  uint64_t recorded() const { return m_count; }

 private:
  OpRecord begin(OpKind kind) const;  // kind, time and switch of a new record
  void put(const OpRecord& r);
  std::FILE* m_out;
  uint32_t m_sw;
  std::function<uint64_t()> m_now;
  uint64_t m_count = 0;
};

}  // namespace rocesim::qm

// The switch chip: N ports with per-port speed, an ingress pipeline timed in
// core-clock cycles, a shared-buffer MMU, the packet buffer memory, egress
// queues and a scheduler feeding each egress MAC.
//
// Path of a packet (store-and-forward):
//   ingress MAC (last bit in at t_in)
//   -> parser, forwarding lookup, ECMP hash (the group member: tlm/ecmp), MMU
//      admission: at align_up(t_in) + (parser + lookup + hash + mmu) cycles
//      the MMU admits or drops it (with its reason)
//   -> packet buffer write: header bytes into the packet's cells over the
//      buffer's TLM socket; done after ceil(cells / write_cells_per_cycle)
//      cycles, later when other ports' writes contend for the same cycles
//   -> egress queue (port, queue): eligible after egress + read cycles more
//   -> scheduler (sched::Scheduler: strict priority, then DWRR, optional
//      shapers; PFC-paused queues skipped) when the port is free
//   -> buffer read (header bytes back out of the cells): the egress prefetches,
//      so the read is issued `read` cycles before the last clock edge at or
//      before the frame boundary and a backlogged port sends back to back,
//      (F + 20) * 8 / rate apart; when the read bandwidth cannot keep up
//      (other ports' reads, or too few cells per cycle for the line rate) the
//      frame starts at the clock edge that ends its read
//   -> egress MAC serializes.
// So on an idle switch the first bit leaves at
//   align_up(t_in) + (parser + lookup + hash + mmu + ceil(c/W) + egress + ceil(c/R)) * period
// (hash: ecmp.hash_cycles).
// Cut-through (option): when the header has arrived, the egress port is idle
// with an empty queue and no slower than the ingress, the same pipeline starts
// from the header's arrival instead of the last bit; otherwise the packet
// falls back to store-and-forward.
//
// Every buffer, admission, PFC-state and ECN decision is an operation of the
// queue manager (tlm/qm: enqueue at admission, dequeue when the scheduler
// picks a queue or the watchdog flushes one, pfc_tick at a refresh), through
// qm::QueueManagerIf; the switch keeps the timing, the statistics and the
// frames themselves (per queue a list through its frames, Packet::queue_next,
// in the queue manager's order: the dequeue's head cell is checked against it).
//
// No process wakes per cycle. Four methods run the chip, each on its own
// event: on_admit (admissions in time order, a heap of ready times),
// on_egress_wake (ports whose head becomes eligible or whose read ends),
// on_refresh (XOFF refreshes, and the XON check of an XOFF PG at its tick)
// and on_watchdog (the PFC watchdog's poll, only when enabled).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "analytics/analyzer.h"
#include "buffer/buffer.h"
#include "core/ring.h"
#include "core/time.h"
#include "ecmp/ecmp.h"
#include "link/ledger.h"
#include "link/mac.h"
#include "ecn/marker.h"
#include "mmu/mmu.h"
#include "pfc/pfc.h"
#include "qm/counting.h"
#include "qm/lockstep.h"
#include "qm/ops_file.h"
#include "qm/queue_manager.h"
#include "sched/scheduler.h"

namespace rocesim::sw {

inline constexpr uint32_t kNoRoute = 0xffffffffu;

// Longest-prefix-match lookup: destination IPv4 -> next-hop group, or kNoRoute.
class RouteLookup {
 public:
  virtual ~RouteLookup() = default;
  virtual uint32_t lookup(uint32_t dst_ip) const = 0;
};

struct PipelineCycles {
  uint32_t parser = 4;
  uint32_t lookup = 6;
  uint32_t mmu = 4;
  uint32_t egress = 6;  // queueing and scheduling after the buffer write
};

// DSCP or PCP -> traffic class -> queue and PG (SONiC DSCP_TO_TC_MAP,
// TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP).
struct QosConfig {
  bool trust_dscp = true;  // false: trust the 802.1Q PCP (untagged frames use TC 0)
  std::array<uint8_t, 64> dscp_to_tc{};
  std::array<uint8_t, 8> pcp_to_tc{0, 1, 2, 3, 4, 5, 6, 7};
  std::array<uint8_t, 8> tc_to_queue{0, 1, 2, 3, 4, 5, 6, 7};
  std::array<uint8_t, 8> tc_to_pg{0, 1, 2, 3, 4, 5, 6, 7};
};

// PFC of the chip: XOFF/XON generation per lossless (ingress port, PG), pause
// frames, and the watchdog on egress queues (SONiC PFC watchdog).
struct PfcConfig {
  bool enabled = true;
  uint8_t priorities = 0x18;            // PFC-enabled priorities (bit p), default 3 and 4
  pfc::GeneratorConfig gen;             // thresholds in cells
  uint16_t pause_quanta = 0xffff;       // timer in XOFF frames
  uint64_t refresh_ps = 0;              // XOFF refresh period; 0 = half the pause time at the port's speed
  uint64_t response_ps = 0;             // MAC response delay to received pauses
  bool watchdog = false;
  uint64_t wd_detection_ps = 200000000;     // paused with packets and nothing sent for this long: stormed
  uint64_t wd_restoration_ps = 200000000;   // not paused for this long: restored
  uint64_t wd_poll_ps = 50000000;
  bool wd_drop = true;                  // action: drop (else forward: ignore the pause)
};

struct PfcPortStats {
  uint64_t xoff[8] = {};                // XOFF transitions sent, per priority
  uint64_t xon[8] = {};
  uint64_t refreshes = 0;               // XOFF frames re-sent while a PG stayed paused
  uint64_t storms = 0;                  // watchdog detections on this port's queues
};

struct SwitchConfig {
  uint64_t clock_period_ps = 1000;
  PipelineCycles cycles;
  bool cut_through = false;
  std::vector<uint64_t> port_rates;     // one per port
  buffer::BufferConfig buffer;          // clock_period_ps is taken from above
  mmu::Config mmu;                      // ports sized to port_rates
  QosConfig qos;
  packet::ParseOptions checks;
  std::vector<std::vector<uint16_t>> groups;  // next-hop groups: egress ports
  ecmp::Config ecmp;                    // the hash unit picking a group's member (its seed: the caller's)
  PfcConfig pfc;
  std::vector<uint64_t> port_macs;      // source MAC of each port's pause frames
  // ECN marker of each egress queue (index = queue); the point (enqueue or
  // dequeue) and unit (bytes or cells) are per queue too.
  std::array<ecn::MarkerConfig, 8> ecn{};
  sched::PortConfig sched = sched::PortConfig::strict_priority();  // every egress port
  uint64_t seed = 1;                    // run seed: each marker's WRED stream derives from it
};

// Waveform signals of one switch (docs/waveforms.md), link::kNoTrace where a
// port is not traced: per egress (port, queue) at port * 8 + queue the depth
// in bytes and cells, ECN marks and drops (counters); per ingress (port, PG)
// at port * 8 + pg its use in cells and its XOFF state; per pool its shared
// use, the shared headroom pool's use and the buffer's cells in use; all
// drops of the switch (a counter). Each port's MAC has its own (link::MacTrace).
struct SwitchTrace {
  trace::Recorder* rec = nullptr;
  std::vector<trace::Signal> q_bytes, q_cells, q_ecn, q_drops;
  std::vector<trace::Signal> pg_cells, pg_xoff;
  std::vector<trace::Signal> pool;
  trace::Signal headroom_pool = link::kNoTrace, buffer_cells = link::kNoTrace, drops = link::kNoTrace;
};

// Per egress (port, queue) statistics. Aligned to the cache line: an
// enqueue or dequeue updates all of it, two lines (not three when a record
// straddles them).
struct alignas(64) QueueStats {
  uint64_t enq_packets = 0, enq_bytes = 0;
  uint64_t deq_packets = 0, deq_bytes = 0;
  uint32_t depth_packets = 0;
  uint64_t depth_bytes = 0;
  uint32_t depth_cells = 0;
  uint64_t peak_bytes = 0;
  uint32_t peak_cells = 0;
  // Time integrals of depth (for averages): sum of depth * dt, and the last
  // change. Exact integers (cell-ps, byte-ps): a long double held them exactly
  // too while below 2^64, at several times the cost per update.
  unsigned __int128 area_cells = 0, area_bytes = 0;
  uint64_t last_change_ps = 0;
};

// Per ingress (port, PG) statistics (cells are the MMU's view), one cache line.
struct alignas(64) PgStats {
  uint64_t in_packets = 0, in_bytes = 0;
  uint32_t peak_cells = 0;
  unsigned __int128 area_cells = 0;  // sum of cells * dt (cell-ps), exact
  uint64_t last_change_ps = 0;
  uint32_t cells = 0;
};
static_assert(sizeof(QueueStats) == 128 && sizeof(PgStats) == 64, "queue statistics in two lines, a PG's in one");

// Path recording and packet traces (tb/sim/paths.h, tb/sim/packet_trace.h):
// a switch reports every frame of a flow (Packet::path_dir not none) it
// admits to an egress queue, with the forwarding decision it took and what
// the frame found; for a frame marked Packet::traced also when its first
// bit leaves.
struct Hop {
  uint32_t in_port = 0, out_port = 0;
  uint32_t group = 0, member = 0;  // member: index into the group's ports
  uint8_t queue = 0;
  uint8_t index = 0;               // switches the frame passed before this one
  uint8_t ecn_in = 0;              // its ECN codepoint as it arrived
  uint64_t arrival_ps = 0;         // its last bit in (the admission is now)
  uint64_t eligible_ps = 0;        // written and read: it may leave from then
  uint64_t depth_bytes = 0;        // the egress queue it found, before its own enqueue
  uint32_t depth_cells = 0;
};
class HopObserver {
 public:
  virtual ~HopObserver() = default;
  virtual void on_hop(uint32_t sw, packet::Packet& p, const Hop& h) = 0;
  // A traced frame's first bit leaves on `port` now.
  virtual void on_depart(uint32_t /*sw*/, const packet::Packet& /*p*/, uint32_t /*port*/) {}
};

// Frames and frame bytes (with FCS) a group member was given: admitted to a
// queue of its port.
struct MemberCount {
  uint64_t packets = 0, bytes = 0;
};

class Switch : public sc_core::sc_module, public link::TxReady, public analytics::PeerLink {
 public:
  tlm_utils::simple_initiator_socket<Switch> buf_isck;  // to the packet buffer memory
  buffer::PacketBuffer buffer;
  std::vector<std::unique_ptr<link::Mac>> ports;
  sc_core::sc_vector<link::pkt_target_socket> rx_in;      // from ports[i].rx_out (early hand-off)
  sc_core::sc_vector<link::pkt_initiator_socket> tx_out;  // to ports[i].tx_in

  SC_HAS_PROCESS(Switch);
  // The queue manager configuration of a switch with this chip configuration.
  static qm::Config queue_manager_config(const SwitchConfig& cfg);
  // Throws std::invalid_argument when the MMU configuration is invalid.
  Switch(sc_core::sc_module_name name, const SwitchConfig& cfg, const RouteLookup& routes, link::Ledger& ledger);
  ~Switch() override;

  // Egress: port `port` is idle; the scheduler sends it a frame if one is eligible.
  void on_tx_ready(uint32_t port) override;
  // A port whose queues are empty and whose buffer read is not staged has
  // nothing to offer when its frame ends (an enqueue kicks it).
  bool tx_pending(uint32_t port) override { return m_port[port].nonempty != 0 || m_port[port].staged; }

  const SwitchConfig& config() const { return m_cfg; }
  // The hash unit (its configuration, groups and members up): which member a key takes.
  const ecmp::Unit& ecmp() const { return m_ecmp; }
  // Dynamic load balancing counters summed over the switch's groups (zero when off).
  ecmp::FlowletGroup::Stats dlb_stats() const;
  // A port's link failed (up = false) or came back, as the control plane
  // learns it, at t_ps (now or later; the caller adds its detection delay):
  // every ECMP group with the port as a member drops it or takes it back
  // (the hash unit rehashes over the members up, a bucket table moves only
  // that member's buckets, load balancing leaves it at once). Frames already
  // queued on the port still go out onto its cable.
  void set_port_up_at(uint32_t port, uint64_t t_ps, bool up);
  uint64_t member_changes() const { return m_member_changes; }
  // The queue manager every buffer, admission, PFC-state and ECN decision
  // goes through (tlm/qm), and the C++ model's counters.
  const qm::QueueManagerIf& queue_manager() const { return *m_qm; }
  const qm::QueueManager& qm_model() const { return m_qm_model; }
  // Test-only: the model, to corrupt its state on purpose (invariant tests).
  qm::QueueManager& qm_model_for_test() { return m_qm_model; }
  // The MMU's accounting and counters: the C++ model's, or in rtl mode the
  // ones booked from the RTL's results.
  const mmu::Mmu& mmu() const { return m_counting ? m_counting->mmu() : m_qm_model.mmu(); }
  // --record-ops: every queue-manager operation and its result from now on,
  // appended to `out` as switch `index` (qm/ops_file.h).
  void record_ops(std::FILE* out, uint32_t index);
  // switch.queue_impl: lockstep: every operation also goes to `dut` (the
  // RTL), compared with the model after each (qm/lockstep.h). Before run().
  void enable_lockstep(std::unique_ptr<qm::QueueManagerIf> dut);
  const qm::LockstepQueueManager* lockstep() const { return m_lockstep.get(); }
  qm::LockstepQueueManager& lockstep_for_setup() { return *m_lockstep; }  // after enable_lockstep, before run()
  // switch.queue_impl: rtl: `rtl` (the Verilated RTL) makes every decision
  // and holds the state; the counters are booked from its results
  // (qm/counting.h) and the C++ model is not used. Before run().
  void enable_rtl(std::unique_ptr<qm::QueueManagerIf> rtl);
  const qm::CountingQueueManager* rtl_counts() const { return m_counting.get(); }
  size_t num_ports() const { return ports.size(); }
  const QueueStats& queue_stats(uint32_t port, uint32_t q) const { return m_qstats[port * 8 + q]; }
  // Statistics with the time integrals brought up to now.
  QueueStats queue_stats_now(uint32_t port, uint32_t q) const;
  PgStats pg_stats_now(uint32_t port, uint32_t pg) const;
  uint64_t dropped(packet::DropReason r) const { return m_drops[static_cast<size_t>(r)]; }
  uint64_t cut_through_packets() const { return m_cut_through; }
  // Frames inside the switch: waiting for admission, queued, or staged for a port.
  size_t frames_held() const;
  // Traffic class of a parsed frame (the QoS map).
  uint8_t traffic_class(const packet::Meta& m) const;
  const PfcPortStats& pfc_stats(uint32_t port) const { return m_pfc_stats[port]; }
  const ecn::Counters& ecn_counters(uint32_t port, uint32_t q) const {
    return m_counting ? m_counting->ecn_counters(static_cast<uint16_t>(port), static_cast<uint8_t>(q))
                      : m_qm_model.ecn_counters(static_cast<uint16_t>(port), static_cast<uint8_t>(q));
  }
  const sched::Scheduler& scheduler(uint32_t port) const { return m_sched[port]; }
  uint64_t watchdog_events() const { return m_wd_events; }
  void set_event_log(std::vector<pfc::Event>* log);
  // Path recording: every admitted frame of a flow goes to `o` as switch
  // `index` (null: off, the default). Before run().
  void set_hop_observer(HopObserver* o, uint32_t index) {
    m_hops = o;
    m_hop_index = index;
  }
  // The PFC priorities egress queue q carries (bit p): a pause of any of
  // them stops it.
  uint8_t queue_priorities(uint32_t q) const { return m_queue_prios[q & 7]; }
  // What member m of group g (SwitchConfig::groups) was given.
  const MemberCount& member_count(uint32_t g, uint32_t m) const { return m_members[m_member_base[g] + m]; }
  // Waveforms (null: off, the default; then each hook costs one branch).
  // Before run(); the MACs' signals are set on ports[i] (set_trace).
  void set_trace(const SwitchTrace* t) { m_trace = t; }
  // Flow analytics (issue 14, docs/analytics.md): every frame reaching
  // admission goes to a's matching stage with its ingress port and the
  // admission time; the frames it selects are mirrored to its analyzer.
  // Null: off (one branch). Set at any time (analytics starting mid-run).
  void set_analytics(analytics::Analyzer* a) { m_analytics = a; }
  // M-LAG member (docs/analytics.md "M-LAG"): the analyzer's synchronization
  // messages go out on peer_port as Ethernet frames of EtherType
  // analytics::kEtherTypeSync to peer_mac, sent as the MAC's control frames
  // (ahead of queued data, not paused); such frames arriving on peer_port go
  // to the analyzer at admission (consumed: delivered), not to forwarding.
  void set_mlag_peer(uint32_t peer_port, packet::Mac peer_mac);
  void send_sync(const uint8_t* payload, size_t len) override;
  struct SyncStats {
    uint64_t tx_frames = 0, tx_bytes = 0, rx_frames = 0, rx_bytes = 0;  // bytes: frames incl. FCS, as MacStats
  };
  const SyncStats& sync_stats() const { return m_sync; }

 private:
  // A frame between its arrival and its admission. Frames due at the same
  // clock edge are admitted in the order of the pipeline's ingress arbiter
  // (on_admit): round-robin over the ports from the one after the port
  // served first at the previous edge, then in arrival order.
  // A frame in the ingress pipeline, due for admission at ready_ps (24 bytes:
  // the heap's entries are read on every admission). order is the arrival
  // order number shifted left once, its low bit set for a cut-through
  // admission (the header in, the last bit still to come): ties at one
  // ready time keep the arrival order.
  struct Pending {
    uint64_t ready_ps;
    uint64_t order;
    packet::Packet* p;
    bool cut_through() const { return order & 1; }
    bool operator>(const Pending& o) const { return ready_ps != o.ready_ps ? ready_ps > o.ready_ps : order > o.order; }
  };
  static_assert(sizeof(Pending) == 24, "a pending admission in 24 bytes");
  // The frame's last bit at its ingress port (its first bit, set by the MAC, and its length).
  uint64_t last_bit_ps(const packet::Packet& p) const;
  // The ingress pipeline's cycles from the clock edge a frame is in
  // (header or last bit) to its admission: parser, lookup, hash, MMU.
  uint64_t pipeline_ps() const {
    return cycles(m_cfg.cycles.parser + m_cfg.cycles.lookup + m_cfg.ecmp.hash_cycles + m_cfg.cycles.mmu);
  }
  // The frames of one egress queue, first to last, linked through
  // Packet::queue_next, each with its head cell (Packet::queue_cell) and the
  // time it may leave (Packet::eligible_ps). The queue manager holds the
  // same packets in the same order as cell chains; a frame costs no
  // per-cell memory here (an array per cell would be resident for every
  // cell the buffer ever used).
  struct QueueList {
    packet::Packet* head = nullptr;
    packet::Packet* tail = nullptr;
  };
  // Ingress: the interface behind rx_in[port]. The pipeline acts a fixed
  // number of cycles after arrival, so its MACs hand frames over early (the
  // annotated delay is the arrival) and it schedules itself: one event per
  // frame instead of two.
  struct PortIf : link::PacketTargetBase, link::PacketInitiatorBase {
    Switch* sw = nullptr;
    uint32_t port = 0;
    void b_transport(packet::Packet& p, sc_core::sc_time& delay) override { sw->on_rx(port, p, delay); }
  };
  // What a traversal reads and writes of its ports, one line per port (in a
  // large fabric a switch's state is cold when its next frame comes: every
  // line touched is a miss), instead of a table each.
  struct alignas(64) PortState {
    // The frame read out of the buffer for this port, ready to start at
    // staged_ready_ps (null: none).
    packet::Packet* staged = nullptr;
    uint64_t staged_ready_ps = 0;
    uint64_t wake_at = UINT64_MAX;  // earliest pending egress wake, or UINT64_MAX
    core::ByteTime byte_time;
    link::pkt_fw_if* tx_if = nullptr;  // tx_out's bound interface (end of elaboration)
    link::Mac* mac = nullptr;          // ports[port]
    uint8_t nonempty = 0;              // bit q set while queue q holds packets
    uint8_t lossless_pgs = 0;          // as ingress: bit pg set when that PG is lossless (mmu config)
    bool dlb = false;                  // a member of a load-balanced group (m_port_dlb not empty)
  };
  // The cell chains of the queue manager, for the packet buffer memory.
  struct Links : buffer::CellLinks {
    const qm::QueueManagerIf* qm = nullptr;
    uint32_t next_cell(uint32_t c) const override { return qm->next_cell(c); }
  };

  void on_rx(uint32_t port, packet::Packet& p, const sc_core::sc_time& delay);
  void on_admit();
  void on_egress_wake();
  void admit(const Pending& e);
  packet::Packet* pull(uint32_t port);
  void schedule_ingress(uint64_t ready_ps, packet::Packet* p, bool cut_through);
  void schedule_wake(uint32_t port, uint64_t t_ps);
  // qi: the egress queue the frame was for (a traced drop), if known.
  void drop(packet::Packet* p, packet::DropReason why, uint32_t qi = UINT32_MAX);
  // Waveforms: queue qi and the PG of charge c after an enqueue or a
  // dequeue at now, with the ECN mark it made (switch.cpp). Out of line and
  // cold: the hot path keeps one branch.
  [[gnu::cold, gnu::noinline]] void trace_op(uint32_t qi, bool marked, const mmu::Charge& c);
  // A dequeue whose head cell is not the queue's first frame's (dequeue()):
  // throws, naming both cells. Cold, as the message is built only then.
  [[noreturn, gnu::cold, gnu::noinline]] void fail_queue_order(uint32_t qi, uint32_t dequeued_cell) const;
  // PFC: the queue manager's XOFF/XON transition of (port, pg), if any.
  void pfc_action(uint32_t port, uint8_t pg, qm::PfcAction a);
  void send_pause(uint32_t port, uint8_t pg, bool xoff, bool refresh = false);
  void on_refresh();
  void on_watchdog();
  uint8_t paused_queues(uint32_t port);
  uint8_t queues_of(uint8_t prios) const;  // the queues carrying these priorities
  void flush_queue(uint32_t qi, packet::DropReason why);
  // The head packet of queue qi out of the queue manager (sent, or discarded).
  qm::DequeueResult dequeue(uint32_t qi, packet::Packet& p, bool discard);
  // The queue's next WRED word, and the ECN result applied to the frame.
  void ecn_apply(uint32_t qi, packet::Packet& p, const qm::EcnResult& e);
  static bool ecn_frame(const packet::Packet& p);
  void touch_queue(QueueStats& s);
  void touch_pg(PgStats& s);
  uint64_t cycles(uint64_t n) const { return n * m_cfg.clock_period_ps; }
  uint64_t align(uint64_t t) const { return (t + m_cfg.clock_period_ps - 1) / m_cfg.clock_period_ps * m_cfg.clock_period_ps; }

  SwitchConfig m_cfg;
  const RouteLookup& m_routes;
  link::Ledger& m_ledger;
  ecmp::Unit m_ecmp;
  // Dynamic load balancing (ecmp.dlb; empty when off): a block per group of
  // more than one member (m_dlb_of: group -> block, kNoDlb for none), and per
  // port the (block, member) pairs it is, fed with the port's sent bytes and
  // queued bytes (m_port_bytes, kept only for such ports).
  static constexpr uint32_t kNoDlb = 0xFFFFFFFFu;
  struct DlbMember {
    uint32_t block, member;
  };
  std::vector<ecmp::FlowletGroup> m_dlb;
  std::vector<uint32_t> m_dlb_of;
  std::vector<std::vector<DlbMember>> m_port_dlb;
  std::vector<uint64_t> m_port_bytes;
  // Link state changes due (time, port, up), a min-heap, and per port the
  // (group, member) pairs it is in every group.
  struct PortChange {
    uint64_t t_ps;
    uint32_t port;
    bool up;
    bool operator>(const PortChange& o) const { return t_ps > o.t_ps; }
  };
  std::vector<PortChange> m_port_changes;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_port_members;
  core::Timer m_port_ev;
  uint64_t m_member_changes = 0;
  void on_port_change();
  void dlb_release(const packet::Packet& p);        // its packet left the queue (sent or dropped)
  void dlb_queue_changed(uint32_t port);             // the port's queued bytes changed
  qm::QueueManager m_qm_model;
  qm::QueueManagerIf* m_qm = &m_qm_model;
  std::unique_ptr<qm::RecordingQueueManager> m_recorder;
  std::unique_ptr<qm::QueueManagerIf> m_dut;
  std::unique_ptr<qm::LockstepQueueManager> m_lockstep;
  std::unique_ptr<qm::CountingQueueManager> m_counting;
  Links m_links;
  std::vector<std::unique_ptr<PortIf>> m_port_if;
  std::vector<QueueList> m_qlist;            // per queue (port * 8 + queue)
  std::vector<core::Rng> m_wred_rng;         // per queue (port * 8 + queue): its WRED stream; empty when no queue marks
  std::vector<uint32_t> m_wred_word;         // the stream's next word
  std::vector<PortState> m_port;             // per port
  // The bound interfaces of buf_isck and (in PortState::tx_if) tx_out[i],
  // cached at the end of elaboration (what buf_isck-> and tx_out[i]-> return),
  // so a frame does not read the socket objects (a large run is memory-bound).
  tlm::tlm_fw_transport_if<>* m_buf_if = nullptr;
  void end_of_elaboration() override;
  link::pkt_fw_if* tx_if(uint32_t port) {
    link::pkt_fw_if* f = m_port[port].tx_if;
    return f ? f : tx_out[port].operator->();
  }
  tlm::tlm_fw_transport_if<>* buf_if() { return m_buf_if ? m_buf_if : buf_isck.operator->(); }
  std::vector<QueueStats> m_qstats;
  std::vector<PgStats> m_pgstats;
  std::vector<Pending> m_pending;            // min-heap on ready time
  std::vector<Pending> m_edge;               // the frames due at one clock edge, in arbiter order
  uint32_t m_rr = 0;                         // the ingress arbiter's next port
  std::vector<std::pair<uint64_t, uint32_t>> m_wakes;  // min-heap (time, port)
  uint64_t m_seq = 0;
  uint64_t m_cut_through = 0;
  core::Timer m_admit_ev, m_wake_ev;  // the earliest pending admission / egress wake
  std::array<uint64_t, static_cast<size_t>(packet::DropReason::count_)> m_drops{};
  // PFC
  std::array<uint8_t, 8> m_pg_prios{};              // PFC priorities of each PG
  std::array<uint8_t, 8> m_prio_queue{};            // queue carrying each priority
  std::array<uint8_t, 8> m_queue_prios{};           // PFC priorities each queue carries
  std::vector<uint64_t> m_refresh_ps;               // per port
  std::vector<std::pair<uint64_t, uint32_t>> m_refresh;  // min-heap (time, port * 8 + pg)
  core::Timer m_refresh_ev;
  std::vector<PfcPortStats> m_pfc_stats;
  std::vector<pfc::Event>* m_log = nullptr;
  const SwitchTrace* m_trace = nullptr;
  HopObserver* m_hops = nullptr;
  uint32_t m_hop_index = 0;
  std::vector<MemberCount> m_members;        // per group member, at m_member_base[group] + member
  std::vector<uint32_t> m_member_base;
  analytics::Analyzer* m_analytics = nullptr;
  uint32_t m_sync_port = UINT32_MAX;  // M-LAG peer-link port, or none
  packet::Mac m_sync_dst = 0;
  SyncStats m_sync;
  // Watchdog, per egress queue (port * 8 + q).
  struct Wd {
    uint64_t stuck_since = UINT64_MAX;   // paused with packets and no dequeue since
    uint64_t free_since = UINT64_MAX;    // stormed and not paused since
    uint64_t deq_at_check = 0;
    bool stormed = false;
  };
  std::vector<Wd> m_wd;  // per queue; empty when the watchdog is off
  std::vector<sched::Scheduler> m_sched;     // per port
  core::Timer m_wd_ev;
  uint64_t m_wd_events = 0;
  tlm::tlm_generic_payload m_gp;
  buffer::CellCount m_cc;
};

}  // namespace rocesim::sw

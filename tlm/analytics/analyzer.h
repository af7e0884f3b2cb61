// RoCEv2 flow analytics of one switch (the second seed article, issue 14), as
// a pure block: no SystemC. The caller (the switch: sw::Switch::set_analytics,
// on_parsed() at admission; tb/sim/analytics_run.h in a run) hands it frames
// with their ingress port and the simulated time in ps; the block keeps a
// flow table and emits flow records to sinks (export.h: JSON lines, IPFIX).
//
// Two stages, as in the article:
//   TDE (matching, on the switch ingress): selects(meta, port) says whether a
//     frame is mirrored. A frame is RoCEv2 when it is IPv4/UDP to 4791 with a
//     BTH opcode of a class the analyzer knows (opcode_class()): CM (UD SEND
//     ONLY to QP1 carrying a CM MAD: REQ, REP, RTU, ...), RC SEND, WRITE,
//     READ REQUEST / RESPONSE, ACK (AETH: ACK or NAK). CNP, UC, UD (not CM)
//     and atomics are not selected. Ports are enabled one by one (all by
//     default).
//     - Mode::loss: every RoCEv2 frame on an enabled port; add_rule() refuses.
//     - Mode::performance: a frame is selected when a user rule, or the
//       return-direction rule installed with it, matches. A rule is (source
//       prefix S, destination prefix D, optional QP q), q being the Dest QP
//       of the traffic S -> D (the server QP when S holds clients).
//         forward  (src in S, dst in D): data/ACK need Dest QP == q; CM MADs
//                  match by addresses (REQ/RTU carry no QP of D's side).
//         return   (src in D, dst in S): data/ACK match by addresses (their
//                  Dest QP is S's QP, unknown when the rule is installed); a
//                  CM REP must carry LocalQPN == q; other CM by addresses.
//       So a setup to another QP is not mirrored and makes no flow; the return
//       packets of such connections between the same prefixes are mirrored
//       and counted as untracked.
//   TAP (analysis, on_mirrored()): every mirrored frame costs one token of
//     the processing capacity (capacity_pps, bucket of capacity_burst
//     packets, refilled on the simulated clock); without a token it is
//     dropped and counted. Then the frame is parsed (packet/parse.h, the
//     model's own parser): a frame that does not parse, is not IPv4, not
//     RoCEv2, or has an opcode class the analyzer does not handle is counted
//     and discarded.
//
// Flow table. A flow is created only from CM connection setup: a REQ (client
// -> server, LocalQPN = client QP) is kept in a pending table keyed by
// (client IP, server IP, client's LocalCommID); the REP (server -> client,
// RemoteCommID = the client's comm id, LocalQPN = server QP) that answers it
// creates the flow with the article's table 2 key (server IP, client IP,
// client QP, server QP); the RTU (client -> server) marks it established and
// ends the pending entry. The table has table_capacity entries in a flat
// array; both directions of a flow are found through one open-addressing
// index keyed by (receiver IP, sender IP, Dest QP), which is what a data or
// ACK packet carries: client -> server packets carry the server QP, server ->
// client packets the client QP. A REP that finds the table full is counted as
// not tracked; a RoCEv2 data/ACK packet whose flow is not in the table (setup
// not seen, e.g. made before analytics was enabled, or not tracked) is
// counted as untracked and ignored. A REP whose key is already in the table
// for another connection (a QP reused) ends the old flow first (exported with
// reason end_detected); a REP for the same connection is a duplicate.
//
// Per flow and direction d (c2s: client -> server, s2c: the reverse):
//   packets, octets      frames travelling in d (data, ACK/NAK), octets as the
//                        IPv4 total length (IPFIX octetDeltaCount's meaning);
//                        CM MADs are not counted in flows.
//   data_packets, payload_bytes   SEND/WRITE/READ RESPONSE (and READ REQUEST
//                        packets, no payload) travelling in d; retx_packets:
//                        those with a PSN not after the highest seen (a
//                        retransmission after go-back-N).
//   ingress_port         the port of the last frame travelling in d;
//                        port_changes counts changes (a path change).
//   naks, loss_ns        NAKs (AETH NAK, PSN sequence error) for the data of
//                        d, i.e. seen travelling against d; the times of the
//                        first kMaxLossTimes of them per export interval.
//                        other_naks: RNR NAKs and other NAK codes.
//   rtt                  a request of d (RC packet ending a message: SEND/
//                        WRITE LAST/ONLY, READ REQUEST; or any with AckReq)
//                        waits, up to kPendingRequests at a time in PSN
//                        order, for the first ACK against d that covers its
//                        PSN: ACK PSN p covers PSNs <= p, a NAK PSN sequence
//                        error p covers PSNs < p, READ RESPONSE FIRST/ONLY/
//                        LAST p covers PSNs <= p (24-bit serial order). Each
//                        covered request gives a sample t(ACK) - t(request);
//                        rtt_avg is the mean of the last kRttWindow samples
//                        (a sliding average), in ns (rounded down). A
//                        retransmitted packet (PSN not after the highest
//                        seen in d: the sender went back) clears the waiting
//                        requests and is no request itself (Karn's rule: an
//                        ACK may answer either transmission), as the NIC,
//                        which samples first transmissions only.
//   throughput           payload bytes of d counted in intervals of
//                        throughput_interval_ps aligned to multiples of it;
//                        throughput_bps is the rate of the last complete
//                        interval, throughput_max_bps the highest in the
//                        export interval. Reported only for a direction whose
//                        payload since the flow's creation reached
//                        large_flow_bytes ("large": the article's small flows
//                        get no throughput).
//
// Aging, by a sweep every scan_interval_ps at multiples of it (advance(),
// called by on_frame()/on_mirrored() and by the owner's timer): at a sweep at
// time s, a flow with last packet + inactive_timeout <= s is exported (reason
// idle) and deleted, freeing its entry; otherwise a flow whose next active
// deadline (creation + k * active_timeout) is <= s is exported (reason
// active) and its interval state restarts: deltas, NAK counters and loss
// times reset; the RTT window is cleared if it got no sample in the interval,
// the throughput if its direction carried no payload in it. Pending REQs older
// than inactive_timeout are dropped at a sweep. Sweeps missed because no
// frame arrived are run once, at the last multiple before now (one active
// export covers the skipped periods). flush() exports every flow (reason
// forced) and empties the table (end of run).
//
// Export: every record takes a token of the export rate limit (export_rps,
// bucket of export_burst records); without one it is dropped and counted.
// Records carry domain_id (the IPFIX observation domain: one per switch).
//
// Time: the rate limiters use the time given; every timestamp kept (packets,
// losses, RTT, aging) is first quantized down to timestamp_resolution_ps.
//
// M-LAG (the seed article's figure 3; set_peer()): the two members of a pair
// synchronize over their peer link, so that each holds the bidirectional
// entry of a flow whose two directions cross different members, and no loss
// is counted twice. Messages (send_sync / on_sync, the payload of an Ethernet
// frame of EtherType kEtherTypeSync, layout in docs/analytics.md "M-LAG"):
//   rep    a CM REP seen on a member that holds no REQ for it is forwarded
//          (the original frame). The peer, which holds the REQ, creates the
//          flow and answers with a setup.
//   setup  the member that creates a flow (REQ and REP, or REQ and a
//          forwarded REP) sends its key and start; the peer creates the same
//          entry. After an RTU the same member sends it again, established.
//   ack    every ACK/NAK a member sees is forwarded (the original frame, its
//          ingress port and time, and whether the sender took its loss and
//          RTT). Loss (naks, loss_ns) and RTT of a direction are taken by a
//          member that has carried data of that direction (data_seen): the
//          one that sees the ACK if it has, else the peer from the forwarded
//          copy, at the ACK's original time. So each NAK is counted once per
//          pair (unless both members carried data of one direction: a path
//          change; then by the first).
// Frames arriving on the peer-link port are not analysed (counted as
// peer_link_frames): the peer analysed them first. Synchronization messages
// are not mirrored traffic: they take no token of capacity_pps.
//
// Cost: O(1) per frame (two hash probes, bounded lists); a sweep is
// O(table_capacity + pending_capacity). All storage is allocated in the
// constructor: no heap allocation per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "packet/packet.h"

namespace rocesim::analytics {

inline constexpr size_t kMaxLossTimes = 4;     // loss timestamps kept per direction and export interval
inline constexpr size_t kRttWindow = 8;        // samples in the sliding RTT average
inline constexpr size_t kPendingRequests = 4;  // requests per direction waiting for their ACK
inline constexpr size_t kMaxSinks = 4;
inline constexpr uint32_t kNoPort = UINT32_MAX;

// M-LAG synchronization frames: IEEE Std 802 Local Experimental EtherType 1.
inline constexpr uint16_t kEtherTypeSync = 0x88B5;
inline constexpr uint8_t kSyncVersion = 1;
inline constexpr size_t kSyncHeader = 16;  // version, kind, flags, 0, port (4), time in ps (8)
inline constexpr size_t kSyncSetupBody = 16;  // server IP, client IP, client QP, server QP (4 each); the header's time is the start
enum class SyncKind : uint8_t { rep = 1, setup = 2, ack = 3 };
inline constexpr uint8_t kSyncCounted = 1;      // ack: the sender took its loss and RTT
inline constexpr uint8_t kSyncEstablished = 2;  // setup: the RTU was seen
// Largest message: the header and an original frame (without FCS).
inline constexpr size_t kMaxSyncPayload = kSyncHeader + packet::Packet::kMaxHdr + 4;

// Where an M-LAG member's analyzer sends its synchronization messages: the
// switch, which frames them and sends them on the peer link.
class PeerLink {
 public:
  virtual ~PeerLink() = default;
  virtual void send_sync(const uint8_t* payload, size_t len) = 0;
};

enum class Mode : uint8_t { loss, performance };

// BTH opcode classes the analyzer handles (IBTA Vol 1 ch 9.2, RC opcodes).
enum class OpClass : uint8_t { other, send, write, read_request, read_response, ack };
OpClass opcode_class(uint8_t opcode);

struct Rule {
  uint32_t src_ip = 0;
  uint8_t src_len = 0;  // prefix length 0..32
  uint32_t dst_ip = 0;
  uint8_t dst_len = 0;
  bool has_qp = false;
  uint32_t qp = 0;      // Dest QP of traffic src -> dst (24 bits)
};

struct Config {
  uint32_t domain_id = 0;               // IPFIX observation domain (the switch)
  Mode mode = Mode::loss;
  uint32_t ports = 64;                  // ingress ports 0 .. ports-1, all enabled at start
  uint32_t max_rules = 64;              // performance mode: user rules
  uint32_t table_capacity = 1024;       // flows
  uint32_t pending_capacity = 256;      // CM REQs waiting for their REP/RTU
  uint64_t timestamp_resolution_ps = 1000;
  uint64_t capacity_pps = 0;            // analyzer processing capacity, packets/s; 0: unlimited
  uint32_t capacity_burst = 64;         // packets
  uint64_t active_timeout_ps = 1'000'000'000;   // 1 ms
  uint64_t inactive_timeout_ps = 100'000'000;   // 100 us
  uint64_t scan_interval_ps = 10'000'000;       // 10 us
  uint64_t export_rps = 0;              // exported records/s; 0: unlimited
  uint32_t export_burst = 64;           // records
  uint64_t large_flow_bytes = 1 << 20;  // payload per direction before throughput is reported
  uint64_t throughput_interval_ps = 10'000'000;  // 10 us
};
// nullptr when cfg is usable, else what is wrong (names the field).
const char* check_config(const Config& cfg);

enum class ExportReason : uint8_t { idle, active, end_detected, forced };
const char* export_reason_name(ExportReason r);  // "idle", "active", "end_detected", "forced"

// One direction of an exported record. Counts are deltas since the flow's
// previous export; times are simulated ns.
struct DirRecord {
  uint64_t packets = 0, octets = 0;
  uint64_t data_packets = 0, payload_bytes = 0, retx_packets = 0;
  uint32_t naks = 0, other_naks = 0;
  uint32_t loss_count = 0;              // entries used in loss_ns (min(naks, kMaxLossTimes))
  uint64_t loss_ns[kMaxLossTimes] = {};
  uint32_t rtt_samples = 0;             // samples taken in this export interval
  bool rtt_valid = false;               // the window holds samples
  uint64_t rtt_avg_ns = 0;
  bool large = false;
  bool throughput_valid = false;        // large and not cleared
  uint64_t throughput_bps = 0, throughput_max_bps = 0;
  uint32_t ingress_port = kNoPort;      // kNoPort: no frame seen in this direction yet
  uint32_t port_changes = 0;
};

enum Dir : uint8_t { kC2s = 0, kS2c = 1 };

struct FlowRecord {
  uint32_t domain_id = 0;
  uint32_t server_ip = 0, client_ip = 0, client_qp = 0, server_qp = 0;
  uint64_t start_ns = 0;                // flow created (the REP)
  uint64_t end_ns = 0;                  // last frame of the flow
  uint64_t export_ns = 0;               // sweep (or flush) time
  ExportReason reason = ExportReason::active;
  bool established = false;             // RTU seen
  DirRecord dir[2];                     // [kC2s], [kS2c]
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void write(const FlowRecord& r) = 0;
};

struct Stats {
  uint64_t frames = 0;                  // on_frame() calls
  uint64_t not_selected = 0;            // on_frame(): port disabled, not RoCEv2, or no rule matched
  uint64_t mirrored = 0;                // reached the TAP (on_mirrored())
  uint64_t capacity_dropped = 0;        // beyond capacity_pps
  uint64_t bad_frames = 0;              // the parser rejected it
  uint64_t non_ipv4 = 0;
  uint64_t non_roce = 0;                // IPv4 but not UDP 4791
  uint64_t unsupported_opcode = 0;      // RoCEv2 of a class not analysed (CNP, UC, UD, atomics)
  uint64_t cm_packets = 0;
  uint64_t cm_other = 0;                // CM MADs other than REQ/REP/RTU
  uint64_t pending_full = 0;            // REQ not kept: pending table full
  uint64_t pending_expired = 0;
  uint64_t rep_without_req = 0;         // REP whose REQ was not seen
  uint64_t rtu_without_rep = 0;
  uint64_t flows_created = 0;
  uint64_t setups_not_tracked = 0;      // REP found the table full
  uint64_t setups_duplicate = 0;
  uint64_t flows_replaced = 0;          // a REP reused a key: the old flow ended
  uint64_t tracked_packets = 0;
  uint64_t untracked_packets = 0;       // data/ACK of no flow in the table
  uint64_t aged_idle = 0, aged_active = 0;
  uint64_t records = 0;                 // records generated
  uint64_t records_exported = 0;
  uint64_t records_dropped = 0;         // beyond export_rps
  // M-LAG (set_peer()).
  uint64_t peer_link_frames = 0;        // frames arriving on the peer-link port: not analysed
  uint64_t sync_rep_sent = 0, sync_setup_sent = 0, sync_ack_sent = 0;
  uint64_t sync_received = 0;           // messages from the peer
  uint64_t sync_bad = 0;                // not understood (version, kind, length, or its frame did not parse)
  uint64_t sync_rep_unmatched = 0;      // a forwarded REP whose REQ this member has not seen either
  uint64_t sync_flows_created = 0;      // entries created from the peer's setup
  uint64_t sync_acks_used = 0;          // forwarded ACK/NAKs this member took loss/RTT from
  uint64_t sync_untracked = 0;          // a forwarded ACK of no flow in the table
  uint64_t sync_not_sent = 0;           // nothing to forward: the frame's bytes were not given
};

// Token bucket on the simulated clock: rate tokens/s, depth burst tokens,
// full at time 0. Exact integer arithmetic (credit in token * 10^12).
class TokenBucket {
 public:
  void configure(uint64_t rate_per_s, uint64_t burst);  // rate 0: unlimited
  bool take(uint64_t now_ps);                            // one token, if there is one

 private:
  uint64_t m_rate = 0, m_cap = 0, m_credit = 0, m_last = 0;
};

class Analyzer {
 public:
  explicit Analyzer(const Config& cfg);  // throws std::invalid_argument if check_config() fails
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Performance mode only; nullptr on success, else why not (loss mode, too
  // many rules, a prefix length > 32).
  const char* add_rule(const Rule& r);
  void enable_port(uint32_t port, bool on);
  void add_sink(RecordSink* s);  // up to kMaxSinks; records go to every sink

  // TDE: is this parsed frame, arriving on port, mirrored to the analyzer?
  bool selects(const packet::Meta& m, uint32_t port) const;

  // The switch path: parse p's bytes (FCS and ICRC not checked: the switch
  // did), mirror it if selects(), then analyse it. Ages first (advance()).
  void on_frame(const packet::Packet& p, uint32_t port, uint64_t now_ps);
  // The same for a frame the switch has parsed already (its ingress parser's
  // meta, packet/parse.h): no copy and no second parse (the switch's path).
  // frame: its bytes, for an M-LAG member to forward (null: not forwarded, counted).
  void on_parsed(const packet::Meta& m, uint32_t port, uint64_t now_ps, const packet::Packet* frame = nullptr);
  // The TAP path: a frame mirrored by other means (its bytes as a Packet, or
  // raw bytes without FCS as a capture holds them). Ages first.
  void on_mirrored(const packet::Packet& p, uint32_t port, uint64_t now_ps);
  void on_mirrored_bytes(const uint8_t* bytes, size_t len, uint32_t port, uint64_t now_ps);

  // M-LAG member: the peer link is on peer_port, messages go to link.
  void set_peer(uint32_t peer_port, PeerLink* link);
  uint32_t peer_port() const { return m_peer_port; }
  // A synchronization message from the peer (a kEtherTypeSync frame's
  // payload), arriving at now_ps. Ages first.
  void on_sync(const uint8_t* payload, size_t len, uint64_t now_ps);

  // Run the aging sweep(s) due by now_ps.
  void advance(uint64_t now_ps);
  // Export every flow (reason forced) and empty the table and pending list.
  void flush(uint64_t now_ps);

  const Stats& stats() const { return m_stats; }
  const Config& config() const { return m_cfg; }
  size_t flows() const { return m_flows_used; }
  size_t pending() const { return m_pending_used; }

 private:
  struct DirState {
    uint64_t packets = 0, octets = 0, data_packets = 0, payload_bytes = 0, retx_packets = 0;
    uint64_t total_payload = 0;          // since creation (the large-flow test)
    bool have_psn = false;
    uint32_t max_psn = 0;
    uint32_t naks = 0, other_naks = 0, loss_count = 0;
    uint64_t loss_ps[kMaxLossTimes] = {};
    // requests waiting for their ACK, oldest first (ring)
    uint32_t req_psn[kPendingRequests] = {};
    uint64_t req_ps[kPendingRequests] = {};
    uint8_t req_head = 0, req_n = 0;
    uint64_t rtt_ps[kRttWindow] = {};
    uint8_t rtt_n = 0, rtt_pos = 0;
    uint32_t rtt_interval_samples = 0;
    uint64_t tp_idx = 0, tp_bytes = 0;   // current throughput interval and its bytes
    bool tp_valid = false;
    uint64_t tp_last_bps = 0, tp_max_bps = 0;
    uint64_t interval_payload = 0;       // payload in this export interval
    uint32_t port = kNoPort, port_changes = 0;
    bool data_seen = false;              // this analyzer saw data of this direction (M-LAG: who takes its loss/RTT)
  };
  struct Flow {
    bool used = false;
    bool established = false;
    uint32_t server_ip = 0, client_ip = 0, client_qp = 0, server_qp = 0;
    uint64_t start_ps = 0, last_ps = 0, next_active_ps = 0;
    int32_t pending = -1;  // the pending entry waiting for this flow's RTU
    DirState d[2];
  };
  struct Key3 {  // what a packet carries: (receiver IP, sender IP, Dest QP)
    uint32_t rx_ip = 0, tx_ip = 0, qp = 0;
    bool operator==(const Key3& o) const { return rx_ip == o.rx_ip && tx_ip == o.tx_ip && qp == o.qp; }
  };
  // Fixed-size open-addressing map Key3 -> uint32_t: linear probing, deletion
  // by backward shift (no tombstones). Holds at most half its slots.
  class Index {
   public:
    void init(size_t max_entries);
    const uint32_t* find(const Key3& k) const;
    void insert(const Key3& k, uint32_t v);  // k absent, size below max_entries
    void erase(const Key3& k);

   private:
    struct Slot { Key3 key; uint32_t val = 0; bool used = false; };
    size_t home(const Key3& k) const;
    std::vector<Slot> m_slots;
    size_t m_mask = 0;
  };
  struct Pending {
    bool used = false;
    uint32_t client_ip = 0, server_ip = 0, comm_id = 0, client_qp = 0;
    uint64_t t_ps = 0;
    int64_t flow = -1;  // created by the REP, waiting for the RTU
  };

  void tap(const packet::Meta& m, uint32_t port, uint64_t now_ps, bool parsed_ok);
  void analyse(const packet::Meta& m, uint32_t port, uint64_t t);
  void on_cm(const packet::Meta& m, uint64_t t, bool from_peer);
  // The loss and RTT an ACK/NAK gives the direction it acknowledges.
  void ack_effects(DirState& back, const packet::Meta& m, uint64_t t);
  // The flow with exactly this key, or -1.
  int64_t find_flow(uint32_t server, uint32_t client, uint32_t cqp, uint32_t sqp) const;
  // A new flow at t, ending flows whose keys it reuses; -1 (counted) when the table is full.
  int64_t create_flow(uint32_t server, uint32_t client, uint32_t cqp, uint32_t sqp, uint64_t t);
  // M-LAG: the current frame (with its header) to the peer; a flow's setup.
  void forward(SyncKind kind, uint8_t flags, uint32_t port, uint64_t t);
  void send_setup(const Flow& f);
  void sync_header(SyncKind kind, uint8_t flags, uint32_t port, uint64_t t);
  void sweep(uint64_t s);
  void emit(uint32_t fi, ExportReason why, uint64_t t);
  void remove_flow(uint32_t fi);
  void restart_interval(Flow& f);
  void free_pending(uint32_t pi);
  static void roll_throughput(DirState& d, uint64_t t, uint64_t interval_ps);
  static void take_rtt(DirState& d, uint32_t covered_psn, bool inclusive, uint64_t t);
  uint64_t quantize(uint64_t t) const { return t - t % m_cfg.timestamp_resolution_ps; }

  Config m_cfg;
  Stats m_stats;
  std::vector<Rule> m_rules;
  std::vector<uint8_t> m_port_on;
  RecordSink* m_sinks[kMaxSinks] = {};
  size_t m_nsinks = 0;
  TokenBucket m_capacity, m_export;

  std::vector<Flow> m_flows;
  std::vector<uint32_t> m_free;  // free flow entries (a stack)
  size_t m_flows_used = 0;
  Index m_index;                 // 2 keys per flow: value = flow * 2 + direction of travel
  std::vector<Pending> m_pending;
  Index m_pending_index;         // Key3{client IP, server IP, comm id} -> pending slot
  std::vector<uint32_t> m_pending_free;
  size_t m_pending_used = 0;
  uint64_t m_next_sweep = 0;
  // M-LAG.
  uint32_t m_peer_port = kNoPort;
  PeerLink* m_peer = nullptr;
  const packet::Packet* m_cur_pkt = nullptr;  // the frame being analysed (its bytes), if given
  const uint8_t* m_cur_bytes = nullptr;
  size_t m_cur_len = 0;
  uint8_t m_sync[kMaxSyncPayload] = {};
  packet::Meta m_sync_meta;
  packet::Packet m_scratch;      // frames are parsed here
  packet::Meta m_meta;
  FlowRecord m_rec;
};

}  // namespace rocesim::analytics

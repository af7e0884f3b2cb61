// RoCEv2 flow analytics: matching, flow table, per-direction metrics, aging.
// Semantics in analyzer.h.
#include "analytics/analyzer.h"

#include <cstring>
#include <stdexcept>

#include "packet/parse.h"
#include "packet/wire.h"

namespace rocesim::analytics {

namespace pk = rocesim::packet;

namespace {

constexpr uint64_t kPsPerS = 1'000'000'000'000ull;
constexpr uint32_t kPsnMask = 0xffffff;
constexpr uint64_t kMaxRate = 1'000'000'000'000ull;  // per s: keeps the token arithmetic in 64 bits
constexpr uint64_t kMaxBurst = 1'000'000;

// 24-bit serial order (IBTA PSNs): a is after b when a - b mod 2^24 is in (0, 2^23).
bool psn_after(uint32_t a, uint32_t b) {
  const uint32_t d = (a - b) & kPsnMask;
  return d != 0 && d < 0x800000u;
}

bool in_prefix(uint32_t ip, uint32_t net, uint8_t len) {
  const uint32_t mask = len == 0 ? 0 : ~0u << (32 - len);
  return (ip & mask) == (net & mask);
}

// RC opcodes that end a message (IBTA Vol 1 ch 9.2 table 38: SEND/WRITE LAST
// and ONLY, with Immediate or Invalidate).
bool ends_message(uint8_t op) {
  switch (op) {
    case 0x02: case 0x03: case 0x04: case 0x05: case 0x08: case 0x09: case 0x0a: case 0x0b: case 0x16: case 0x17:
      return true;
    default:
      return false;
  }
}

}  // namespace

OpClass opcode_class(uint8_t op) {
  switch (op) {
    case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x16: case 0x17:
      return OpClass::send;
    case 0x06: case 0x07: case 0x08: case 0x09: case 0x0a: case 0x0b:
      return OpClass::write;
    case 0x0c:
      return OpClass::read_request;
    case 0x0d: case 0x0e: case 0x0f: case 0x10:
      return OpClass::read_response;
    case 0x11:
      return OpClass::ack;
    default:
      return OpClass::other;
  }
}

const char* check_config(const Config& c) {
  if (c.ports == 0) return "ports must be at least 1";
  if (c.table_capacity == 0 || c.table_capacity > (1u << 24)) return "table_capacity must be in 1 .. 2^24";
  if (c.pending_capacity == 0 || c.pending_capacity > (1u << 24)) return "pending_capacity must be in 1 .. 2^24";
  if (c.timestamp_resolution_ps == 0) return "timestamp_resolution_ps must be positive";
  if (c.active_timeout_ps == 0) return "active_timeout_ps must be positive";
  if (c.inactive_timeout_ps == 0) return "inactive_timeout_ps must be positive";
  if (c.scan_interval_ps == 0) return "scan_interval_ps must be positive";
  if (c.throughput_interval_ps == 0) return "throughput_interval_ps must be positive";
  if (c.capacity_pps > kMaxRate) return "capacity_pps must be at most 10^12";
  if (c.capacity_pps && (c.capacity_burst == 0 || c.capacity_burst > kMaxBurst))
    return "capacity_burst must be in 1 .. 10^6";
  if (c.export_rps > kMaxRate) return "export_rps must be at most 10^12";
  if (c.export_rps && (c.export_burst == 0 || c.export_burst > kMaxBurst)) return "export_burst must be in 1 .. 10^6";
  return nullptr;
}

const char* export_reason_name(ExportReason r) {
  switch (r) {
    case ExportReason::idle: return "idle";
    case ExportReason::active: return "active";
    case ExportReason::end_detected: return "end_detected";
    case ExportReason::forced: return "forced";
  }
  return "?";
}

// ---------------------------------------------------------------- TokenBucket

void TokenBucket::configure(uint64_t rate_per_s, uint64_t burst) {
  m_rate = rate_per_s;
  m_cap = burst * kPsPerS;
  m_credit = m_cap;
  m_last = 0;
}

bool TokenBucket::take(uint64_t now_ps) {
  if (m_rate == 0) return true;
  if (now_ps > m_last) {
    const uint64_t dt = now_ps - m_last, room = m_cap - m_credit;
    // dt * rate <= room unless dt > room / rate: no overflow (check_config bounds both).
    if (dt > room / m_rate) m_credit = m_cap;
    else m_credit += dt * m_rate;
    m_last = now_ps;
  }
  if (m_credit < kPsPerS) return false;
  m_credit -= kPsPerS;
  return true;
}

// ---------------------------------------------------------------- Index

void Analyzer::Index::init(size_t max_entries) {
  size_t n = 8;
  while (n < 2 * max_entries) n <<= 1;
  m_slots.assign(n, Slot{});
  m_mask = n - 1;
}

size_t Analyzer::Index::home(const Key3& k) const {
  uint64_t h = (uint64_t(k.rx_ip) << 32 | k.tx_ip) * 0x9E3779B97F4A7C15ull;
  h ^= uint64_t(k.qp) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return size_t(h) & m_mask;
}

const uint32_t* Analyzer::Index::find(const Key3& k) const {
  for (size_t i = home(k);; i = (i + 1) & m_mask) {
    const Slot& s = m_slots[i];
    if (!s.used) return nullptr;
    if (s.key == k) return &s.val;
  }
}

void Analyzer::Index::insert(const Key3& k, uint32_t v) {
  size_t i = home(k);
  while (m_slots[i].used) i = (i + 1) & m_mask;
  m_slots[i].key = k;
  m_slots[i].val = v;
  m_slots[i].used = true;
}

void Analyzer::Index::erase(const Key3& k) {
  size_t i = home(k);
  for (;; i = (i + 1) & m_mask) {
    if (!m_slots[i].used) return;
    if (m_slots[i].key == k) break;
  }
  // Backward shift (Knuth 6.4 algorithm R): move up each later entry of the
  // run whose home is not cyclically in (i, j], so no probe chain breaks.
  for (size_t j = i;;) {
    j = (j + 1) & m_mask;
    if (!m_slots[j].used) break;
    const size_t h = home(m_slots[j].key);
    const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (!stays) {
      m_slots[i] = m_slots[j];
      i = j;
    }
  }
  m_slots[i].used = false;
}

// ---------------------------------------------------------------- Analyzer

Analyzer::Analyzer(const Config& cfg) : m_cfg(cfg) {
  if (const char* e = check_config(cfg)) throw std::invalid_argument(std::string("analytics: ") + e);
  m_port_on.assign(cfg.ports, 1);
  m_rules.reserve(cfg.max_rules);
  m_capacity.configure(cfg.capacity_pps, cfg.capacity_burst);
  m_export.configure(cfg.export_rps, cfg.export_burst);
  m_flows.assign(cfg.table_capacity, Flow{});
  m_free.reserve(cfg.table_capacity);
  for (uint32_t i = cfg.table_capacity; i-- > 0;) m_free.push_back(i);  // entry 0 is used first
  m_index.init(2 * size_t(cfg.table_capacity));
  m_pending.assign(cfg.pending_capacity, Pending{});
  m_pending_free.reserve(cfg.pending_capacity);
  for (uint32_t i = cfg.pending_capacity; i-- > 0;) m_pending_free.push_back(i);
  m_pending_index.init(cfg.pending_capacity);
  m_next_sweep = cfg.scan_interval_ps;
}

const char* Analyzer::add_rule(const Rule& r) {
  if (m_cfg.mode == Mode::loss) return "loss visibility installs its own rules: user rules are not allowed";
  if (r.src_len > 32 || r.dst_len > 32) return "a prefix length is above 32";
  if (r.has_qp && r.qp > kPsnMask) return "a QP number is 24 bits";
  if (m_rules.size() >= m_cfg.max_rules) return "too many rules (max_rules)";
  m_rules.push_back(r);
  return nullptr;
}

void Analyzer::enable_port(uint32_t port, bool on) {
  if (port < m_port_on.size()) m_port_on[port] = on;
}

void Analyzer::add_sink(RecordSink* s) {
  if (s && m_nsinks < kMaxSinks) m_sinks[m_nsinks++] = s;
}

bool Analyzer::selects(const pk::Meta& m, uint32_t port) const {
  if (port >= m_port_on.size() || !m_port_on[port] || port == m_peer_port) return false;
  const bool cm = m.kind == pk::FrameKind::cm;
  if (!cm && !(m.kind == pk::FrameKind::roce && opcode_class(m.opcode) != OpClass::other)) return false;
  if (m_cfg.mode == Mode::loss) return true;
  for (const Rule& r : m_rules) {
    if (in_prefix(m.src_ip, r.src_ip, r.src_len) && in_prefix(m.dst_ip, r.dst_ip, r.dst_len) &&
        (!r.has_qp || cm || m.dest_qp == r.qp))
      return true;
    // The return-direction rule installed with r.
    if (in_prefix(m.src_ip, r.dst_ip, r.dst_len) && in_prefix(m.dst_ip, r.src_ip, r.src_len) &&
        (!r.has_qp || !cm || m.cm.attr_id != pk::cm::kRep || m.cm.local_qpn == r.qp))
      return true;
  }
  return false;
}

void Analyzer::on_frame(const pk::Packet& p, uint32_t port, uint64_t now_ps) {
  advance(now_ps);
  ++m_stats.frames;
  if (port == m_peer_port) ++m_stats.peer_link_frames;
  m_scratch = p;
  pk::ParseOptions opt;
  opt.check_fcs = opt.check_icrc = false;
  if (pk::parse(m_scratch, opt) != pk::DropReason::none || !selects(m_scratch.meta, port)) {
    ++m_stats.not_selected;
    return;
  }
  m_cur_pkt = &m_scratch, m_cur_bytes = nullptr;
  tap(m_scratch.meta, port, now_ps, true);
}

void Analyzer::on_parsed(const pk::Meta& m, uint32_t port, uint64_t now_ps, const pk::Packet* frame) {
  advance(now_ps);
  ++m_stats.frames;
  if (port == m_peer_port) ++m_stats.peer_link_frames;
  if (!selects(m, port)) {
    ++m_stats.not_selected;
    return;
  }
  m_cur_pkt = frame, m_cur_bytes = nullptr;
  tap(m, port, now_ps, true);
}

void Analyzer::on_mirrored(const pk::Packet& p, uint32_t port, uint64_t now_ps) {
  advance(now_ps);
  m_scratch = p;
  pk::ParseOptions opt;
  opt.check_fcs = opt.check_icrc = false;
  const bool ok = pk::parse(m_scratch, opt) == pk::DropReason::none;
  m_cur_pkt = &m_scratch, m_cur_bytes = nullptr;
  tap(m_scratch.meta, port, now_ps, ok);
}

void Analyzer::on_mirrored_bytes(const uint8_t* bytes, size_t len, uint32_t port, uint64_t now_ps) {
  advance(now_ps);
  const bool ok = pk::parse_bytes(bytes, len, m_meta, false) == pk::DropReason::none;
  m_cur_pkt = nullptr, m_cur_bytes = bytes, m_cur_len = len;
  tap(m_meta, port, now_ps, ok);
}

void Analyzer::tap(const pk::Meta& m, uint32_t port, uint64_t now_ps, bool parsed_ok) {
  ++m_stats.mirrored;
  if (port == m_peer_port) {  // mirrored by other means from the peer link: the peer analysed it
    ++m_stats.peer_link_frames;
    return;
  }
  if (!m_capacity.take(now_ps)) {
    ++m_stats.capacity_dropped;
    return;
  }
  if (!parsed_ok) {
    ++m_stats.bad_frames;
    return;
  }
  if (m.ethertype != pk::kEtherTypeIpv4) {
    ++m_stats.non_ipv4;
    return;
  }
  const uint64_t t = quantize(now_ps);
  if (m.kind == pk::FrameKind::cm) {
    ++m_stats.cm_packets;
    on_cm(m, t, false);
    return;
  }
  if (m.kind == pk::FrameKind::ipv4_other) {
    ++m_stats.non_roce;
    return;
  }
  if (m.kind != pk::FrameKind::roce || opcode_class(m.opcode) == OpClass::other) {
    ++m_stats.unsupported_opcode;
    return;
  }
  analyse(m, port, t);
}

void Analyzer::on_cm(const pk::Meta& m, uint64_t t, bool from_peer) {
  switch (m.cm.attr_id) {
    case pk::cm::kReq: {
      const Key3 k{m.src_ip, m.dst_ip, m.cm.local_comm_id};  // client, server, client's comm id
      if (const uint32_t* pi = m_pending_index.find(k)) {  // a repeated REQ
        Pending& pe = m_pending[*pi];
        if (pe.flow < 0) pe.client_qp = m.cm.local_qpn, pe.t_ps = t;
        return;
      }
      if (m_pending_free.empty()) {
        ++m_stats.pending_full;
        return;
      }
      const uint32_t pi = m_pending_free.back();
      m_pending_free.pop_back();
      m_pending[pi] = Pending{true, m.src_ip, m.dst_ip, m.cm.local_comm_id, m.cm.local_qpn, t, -1};
      m_pending_index.insert(k, pi);
      ++m_pending_used;
      return;
    }
    case pk::cm::kRep: {
      const Key3 pk_key{m.dst_ip, m.src_ip, m.cm.remote_comm_id};
      const uint32_t* pip = m_pending_index.find(pk_key);
      if (!pip) {
        // M-LAG: the REQ may have crossed the other member; a REP from the
        // peer that finds none here has no REQ in the pair.
        if (from_peer) ++m_stats.sync_rep_unmatched;
        else if (m_peer) forward(SyncKind::rep, 0, kNoPort, t);
        else ++m_stats.rep_without_req;
        return;
      }
      const uint32_t pi = *pip;
      Pending& pe = m_pending[pi];
      const uint32_t server = m.src_ip, client = m.dst_ip, cqp = pe.client_qp, sqp = m.cm.local_qpn;
      if (find_flow(server, client, cqp, sqp) >= 0) {
        ++m_stats.setups_duplicate;
        return;
      }
      const int64_t made = create_flow(server, client, cqp, sqp, t);
      if (made < 0) {
        m_pending_index.erase(pk_key);
        pe.used = false;
        m_pending_free.push_back(pi);
        --m_pending_used;
        return;
      }
      const uint32_t fi = uint32_t(made);
      Flow& f = m_flows[fi];
      if (pe.flow >= 0) m_flows[size_t(pe.flow)].pending = -1;  // a second REP to this REQ: the RTU goes to the new flow
      pe.flow = int64_t(fi);
      pe.t_ps = t;
      f.pending = int32_t(pi);
      if (m_peer) send_setup(f);
      return;
    }
    case pk::cm::kRtu: {
      const Key3 k{m.src_ip, m.dst_ip, m.cm.local_comm_id};
      const uint32_t* pip = m_pending_index.find(k);
      if (!pip || m_pending[*pip].flow < 0) {
        ++m_stats.rtu_without_rep;
        return;
      }
      const uint32_t pi = *pip;
      Pending& pe = m_pending[pi];
      Flow& f = m_flows[size_t(pe.flow)];
      f.established = true;
      f.last_ps = t;
      free_pending(pi);
      if (m_peer) send_setup(f);  // established, for the peer's entry
      return;
    }
    default:
      ++m_stats.cm_other;  // REJ, DREQ, DREP, MRA, LAP, APR: flows end by aging
      return;
  }
}

int64_t Analyzer::find_flow(uint32_t server, uint32_t client, uint32_t cqp, uint32_t sqp) const {
  const uint32_t* v = m_index.find(Key3{server, client, sqp});
  if (!v) return -1;
  const Flow& f = m_flows[*v >> 1];
  const bool same = f.server_ip == server && f.client_ip == client && f.client_qp == cqp && f.server_qp == sqp;
  return same ? int64_t(*v >> 1) : -1;
}

int64_t Analyzer::create_flow(uint32_t server, uint32_t client, uint32_t cqp, uint32_t sqp, uint64_t t) {
  const Key3 k_c2s{server, client, sqp}, k_s2c{client, server, cqp};
  for (const Key3& k : {k_c2s, k_s2c}) {
    if (const uint32_t* v = m_index.find(k)) {  // the key is reused: that connection ended
      const uint32_t fi = *v >> 1;
      ++m_stats.flows_replaced;
      emit(fi, ExportReason::end_detected, t);
      remove_flow(fi);
    }
  }
  if (m_free.empty()) {
    ++m_stats.setups_not_tracked;
    return -1;
  }
  const uint32_t fi = m_free.back();
  m_free.pop_back();
  ++m_flows_used;
  Flow& f = m_flows[fi];
  f = Flow{};
  f.used = true;
  f.server_ip = server, f.client_ip = client, f.client_qp = cqp, f.server_qp = sqp;
  f.start_ps = f.last_ps = t;
  f.next_active_ps = t + m_cfg.active_timeout_ps;
  for (DirState& d : f.d) d.tp_idx = t / m_cfg.throughput_interval_ps;
  m_index.insert(k_c2s, fi * 2 + kC2s);
  m_index.insert(k_s2c, fi * 2 + kS2c);
  ++m_stats.flows_created;
  return int64_t(fi);
}

// ---------------------------------------------------------------- M-LAG

// Big-endian fields, as every header the model writes.
using pk::wire::get32;
using pk::wire::get64;
using pk::wire::put32;
using pk::wire::put64;

void Analyzer::set_peer(uint32_t peer_port, PeerLink* link) {
  m_peer_port = link ? peer_port : kNoPort;
  m_peer = link;
}

void Analyzer::sync_header(SyncKind kind, uint8_t flags, uint32_t port, uint64_t t) {
  m_sync[0] = kSyncVersion;
  m_sync[1] = uint8_t(kind);
  m_sync[2] = flags;
  m_sync[3] = 0;
  put32(m_sync + 4, port);
  put64(m_sync + 8, t);
}

void Analyzer::forward(SyncKind kind, uint8_t flags, uint32_t port, uint64_t t) {
  size_t n = 0;
  if (m_cur_pkt && m_cur_pkt->frame_len_no_fcs() <= kMaxSyncPayload - kSyncHeader) {
    n = m_cur_pkt->serialize(m_sync + kSyncHeader, kMaxSyncPayload - kSyncHeader);
  } else if (m_cur_bytes && m_cur_len <= kMaxSyncPayload - kSyncHeader) {
    std::memcpy(m_sync + kSyncHeader, m_cur_bytes, m_cur_len);
    n = m_cur_len;
  }
  if (n == 0) {
    ++m_stats.sync_not_sent;
    return;
  }
  sync_header(kind, flags, port, t);
  ++(kind == SyncKind::rep ? m_stats.sync_rep_sent : m_stats.sync_ack_sent);
  m_peer->send_sync(m_sync, kSyncHeader + n);
}

void Analyzer::send_setup(const Flow& f) {
  sync_header(SyncKind::setup, f.established ? kSyncEstablished : 0, kNoPort, f.start_ps);
  uint8_t* b = m_sync + kSyncHeader;
  put32(b, f.server_ip);
  put32(b + 4, f.client_ip);
  put32(b + 8, f.client_qp);
  put32(b + 12, f.server_qp);
  ++m_stats.sync_setup_sent;
  m_peer->send_sync(m_sync, kSyncHeader + kSyncSetupBody);
}

void Analyzer::on_sync(const uint8_t* b, size_t len, uint64_t now_ps) {
  advance(now_ps);
  ++m_stats.sync_received;
  if (len < kSyncHeader || b[0] != kSyncVersion) {
    ++m_stats.sync_bad;
    return;
  }
  const uint8_t kind = b[1], flags = b[2];
  const uint64_t t = quantize(get64(b + 8));  // the original frame's time at the peer
  const uint8_t* body = b + kSyncHeader;
  const size_t n = len - kSyncHeader;
  if (kind == uint8_t(SyncKind::setup)) {
    if (n < kSyncSetupBody) {
      ++m_stats.sync_bad;
      return;
    }
    const uint32_t server = get32(body), client = get32(body + 4), cqp = get32(body + 8), sqp = get32(body + 12);
    int64_t fi = find_flow(server, client, cqp, sqp);
    if (fi < 0) {
      fi = create_flow(server, client, cqp, sqp, t);  // the header's time: the flow's start at the peer
      if (fi < 0) return;  // table full: counted (setups_not_tracked)
      ++m_stats.sync_flows_created;
    }
    if (flags & kSyncEstablished) m_flows[size_t(fi)].established = true;
    return;
  }
  if ((kind != uint8_t(SyncKind::rep) && kind != uint8_t(SyncKind::ack)) ||
      pk::parse_bytes(body, n, m_sync_meta, false) != pk::DropReason::none) {
    ++m_stats.sync_bad;
    return;
  }
  const pk::Meta& m = m_sync_meta;
  if (kind == uint8_t(SyncKind::rep)) {
    if (m.kind != pk::FrameKind::cm || m.cm.attr_id != pk::cm::kRep) {
      ++m_stats.sync_bad;
      return;
    }
    on_cm(m, t, true);
    return;
  }
  if (m.kind != pk::FrameKind::roce || opcode_class(m.opcode) != OpClass::ack) {
    ++m_stats.sync_bad;
    return;
  }
  const uint32_t* v = m_index.find(Key3{m.dst_ip, m.src_ip, m.dest_qp});
  if (!v) {
    ++m_stats.sync_untracked;
    return;
  }
  Flow& f = m_flows[*v >> 1];
  DirState& back = f.d[(*v & 1u) ^ 1u];
  if (t > f.last_ps) f.last_ps = t;
  if ((flags & kSyncCounted) || !back.data_seen) return;  // taken by the peer, or not this member's data
  ++m_stats.sync_acks_used;
  ack_effects(back, m, t);
}

void Analyzer::take_rtt(DirState& d, uint32_t covered, bool inclusive, uint64_t t) {
  while (d.req_n > 0) {
    const uint32_t q = d.req_psn[d.req_head];
    if (inclusive ? psn_after(q, covered) : !psn_after(covered, q)) break;
    d.rtt_ps[d.rtt_pos] = t - d.req_ps[d.req_head];
    d.rtt_pos = uint8_t((d.rtt_pos + 1) % kRttWindow);
    if (d.rtt_n < kRttWindow) ++d.rtt_n;
    ++d.rtt_interval_samples;
    d.req_head = uint8_t((d.req_head + 1) % kPendingRequests);
    --d.req_n;
  }
}

void Analyzer::roll_throughput(DirState& d, uint64_t t, uint64_t interval_ps) {
  const uint64_t idx = t / interval_ps;
  if (idx <= d.tp_idx) return;
  // bits/s of the closed interval: bytes * 8 * 10^12 / interval_ps.
  const uint64_t rate = uint64_t((unsigned __int128)d.tp_bytes * 8 * kPsPerS / interval_ps);
  if (rate > d.tp_max_bps) d.tp_max_bps = rate;
  d.tp_last_bps = idx == d.tp_idx + 1 ? rate : 0;  // later intervals, if any, were empty
  d.tp_valid = true;
  d.tp_idx = idx;
  d.tp_bytes = 0;
}

void Analyzer::analyse(const pk::Meta& m, uint32_t port, uint64_t t) {
  const uint32_t* v = m_index.find(Key3{m.dst_ip, m.src_ip, m.dest_qp});
  if (!v) {
    ++m_stats.untracked_packets;
    return;
  }
  ++m_stats.tracked_packets;
  Flow& f = m_flows[*v >> 1];
  const unsigned dir = *v & 1u;
  DirState& d = f.d[dir];
  DirState& back = f.d[dir ^ 1u];  // the direction this frame acknowledges
  f.last_ps = t;
  ++d.packets;
  d.octets += m.ip_total_len;
  if (d.port != kNoPort && d.port != port) ++d.port_changes;
  d.port = port;

  const OpClass cls = opcode_class(m.opcode);
  if (cls == OpClass::ack) {
    // M-LAG: loss and RTT are the data carrier's; the peer gets every ACK.
    const bool mine = !m_peer || back.data_seen;
    if (mine) ack_effects(back, m, t);
    if (m_peer) forward(SyncKind::ack, mine ? kSyncCounted : 0, port, t);
    return;
  }

  d.data_seen = true;
  ++d.data_packets;
  d.payload_bytes += m.l4_payload_len;
  d.total_payload += m.l4_payload_len;
  d.interval_payload += m.l4_payload_len;
  roll_throughput(d, t, m_cfg.throughput_interval_ps);
  d.tp_bytes += m.l4_payload_len;
  const bool retx = d.have_psn && !psn_after(m.psn, d.max_psn);
  if (retx) {
    ++d.retx_packets;
    // Karn's rule: the sender went back, so an ACK of a request still
    // waiting may answer either transmission; drop them, and take no
    // request from a retransmitted packet (the NIC samples first
    // transmissions only).
    d.req_n = 0;
  } else {
    d.max_psn = m.psn;
    d.have_psn = true;
  }
  if (cls == OpClass::read_response) {
    // FIRST/ONLY/LAST carry an AETH that acknowledges the requests up to it.
    if (m.has_aeth && ((m.aeth_syndrome >> 5) & 3u) == 0) take_rtt(back, m.psn, true, t);
    return;
  }
  if (retx || !(m.ackreq || cls == OpClass::read_request || ends_message(m.opcode))) return;
  if (d.req_n < kPendingRequests) {
    const size_t i = (d.req_head + d.req_n) % kPendingRequests;
    d.req_psn[i] = m.psn;
    d.req_ps[i] = t;
    ++d.req_n;
  }
}

void Analyzer::ack_effects(DirState& back, const pk::Meta& m, uint64_t t) {
  const uint8_t s = m.aeth_syndrome;
  switch ((s >> 5) & 3u) {  // IBTA Vol 1 9.3.5 table 45: 00 ACK, 01 RNR NAK, 11 NAK
    case 0:
      take_rtt(back, m.psn, true, t);
      break;
    case 3:
      if ((s & 0x1f) == 0) {  // PSN sequence error: packets were lost
        ++back.naks;
        if (back.loss_count < kMaxLossTimes) back.loss_ps[back.loss_count++] = t;
        take_rtt(back, m.psn, false, t);
      } else {
        ++back.other_naks;
      }
      break;
    default:
      ++back.other_naks;
      break;
  }
}

void Analyzer::advance(uint64_t now_ps) {
  if (now_ps < m_next_sweep) return;
  const uint64_t s = now_ps - now_ps % m_cfg.scan_interval_ps;
  sweep(s);
  m_next_sweep = s + m_cfg.scan_interval_ps;
}

void Analyzer::sweep(uint64_t s) {
  if (m_pending_used) {
    for (uint32_t i = 0; i < m_pending.size(); ++i) {
      const Pending& pe = m_pending[i];
      if (!pe.used || pe.t_ps + m_cfg.inactive_timeout_ps > s) continue;
      free_pending(i);
      ++m_stats.pending_expired;
    }
  }
  if (!m_flows_used) return;
  for (uint32_t fi = 0; fi < m_flows.size(); ++fi) {
    Flow& f = m_flows[fi];
    if (!f.used) continue;
    if (f.last_ps + m_cfg.inactive_timeout_ps <= s) {
      ++m_stats.aged_idle;
      emit(fi, ExportReason::idle, s);
      remove_flow(fi);
    } else if (f.next_active_ps <= s) {
      ++m_stats.aged_active;
      emit(fi, ExportReason::active, s);
      restart_interval(f);
      while (f.next_active_ps <= s) f.next_active_ps += m_cfg.active_timeout_ps;
    }
  }
}

void Analyzer::emit(uint32_t fi, ExportReason why, uint64_t t) {
  Flow& f = m_flows[fi];
  FlowRecord& r = m_rec;
  r.domain_id = m_cfg.domain_id;
  r.server_ip = f.server_ip, r.client_ip = f.client_ip, r.client_qp = f.client_qp, r.server_qp = f.server_qp;
  r.start_ns = f.start_ps / 1000;
  r.end_ns = f.last_ps / 1000;
  r.export_ns = quantize(t) / 1000;
  r.reason = why;
  r.established = f.established;
  for (int i = 0; i < 2; ++i) {
    DirState& d = f.d[i];
    DirRecord& o = r.dir[i];
    roll_throughput(d, quantize(t), m_cfg.throughput_interval_ps);
    o.packets = d.packets, o.octets = d.octets;
    o.data_packets = d.data_packets, o.payload_bytes = d.payload_bytes, o.retx_packets = d.retx_packets;
    o.naks = d.naks, o.other_naks = d.other_naks;
    o.loss_count = d.loss_count;
    for (size_t k = 0; k < kMaxLossTimes; ++k) o.loss_ns[k] = k < d.loss_count ? d.loss_ps[k] / 1000 : 0;
    o.rtt_samples = d.rtt_interval_samples;
    o.rtt_valid = d.rtt_interval_samples > 0;  // a window with no new sample is cleared (reported absent)
    uint64_t sum = 0;
    for (size_t k = 0; k < d.rtt_n; ++k) sum += d.rtt_ps[k];
    o.rtt_avg_ns = o.rtt_valid ? sum / d.rtt_n / 1000 : 0;
    o.large = d.total_payload >= m_cfg.large_flow_bytes;
    o.throughput_valid = o.large && d.tp_valid && d.interval_payload > 0;
    o.throughput_bps = o.throughput_valid ? d.tp_last_bps : 0;
    o.throughput_max_bps = o.throughput_valid ? d.tp_max_bps : 0;
    o.ingress_port = d.port;
    o.port_changes = d.port_changes;
  }
  ++m_stats.records;
  if (!m_export.take(t)) {
    ++m_stats.records_dropped;
    return;
  }
  ++m_stats.records_exported;
  for (size_t i = 0; i < m_nsinks; ++i) m_sinks[i]->write(r);
}

void Analyzer::restart_interval(Flow& f) {
  for (DirState& d : f.d) {
    d.packets = d.octets = d.data_packets = d.payload_bytes = d.retx_packets = 0;
    d.naks = d.other_naks = d.loss_count = 0;
    if (d.rtt_interval_samples == 0) d.rtt_n = d.rtt_pos = 0;
    d.rtt_interval_samples = 0;
    if (d.interval_payload == 0) d.tp_valid = false, d.tp_last_bps = 0;
    d.tp_max_bps = 0;
    d.interval_payload = 0;
    d.port_changes = 0;
  }
}

void Analyzer::remove_flow(uint32_t fi) {
  Flow& f = m_flows[fi];
  m_index.erase(Key3{f.server_ip, f.client_ip, f.server_qp});
  m_index.erase(Key3{f.client_ip, f.server_ip, f.client_qp});
  f.used = false;
  m_free.push_back(fi);
  --m_flows_used;
  // A pending entry waiting for this flow's RTU must not point at a reused entry.
  if (f.pending >= 0) m_pending[size_t(f.pending)].flow = -2;
}

void Analyzer::flush(uint64_t now_ps) {
  advance(now_ps);
  for (uint32_t fi = 0; fi < m_flows.size(); ++fi) {
    if (!m_flows[fi].used) continue;
    emit(fi, ExportReason::forced, now_ps);
    remove_flow(fi);
  }
  for (uint32_t i = 0; i < m_pending.size(); ++i)
    if (m_pending[i].used) free_pending(i);
}

void Analyzer::free_pending(uint32_t pi) {
  Pending& pe = m_pending[pi];
  m_pending_index.erase(Key3{pe.client_ip, pe.server_ip, pe.comm_id});
  if (pe.flow >= 0) m_flows[size_t(pe.flow)].pending = -1;
  pe.used = false;
  m_pending_free.push_back(pi);
  --m_pending_used;
}

}  // namespace rocesim::analytics

// Ingress and admission: a frame from its ingress MAC through the parser,
// the forwarding lookup and the queue manager's enqueue (admission, cells,
// PFC state, ECN at enqueue) to the buffer write and its egress queue.
#include <algorithm>
#include <functional>
#include <stdexcept>

#include "packet/build.h"
#include "packet/wire.h"
#include "switch/switch.h"

namespace rocesim::sw {

using namespace sc_core;
namespace pk = rocesim::packet;

namespace {

pk::DropReason drop_reason(mmu::Verdict v) {
  switch (v) {
    case mmu::Verdict::drop_ingress_limit: return pk::DropReason::ingress_limit;
    case mmu::Verdict::drop_egress_limit: return pk::DropReason::egress_limit;
    case mmu::Verdict::drop_pool_full: return pk::DropReason::pool_full;
    case mmu::Verdict::drop_headroom_overflow: return pk::DropReason::headroom_overflow;
    default: return pk::DropReason::none;
  }
}

// What the hash unit reads of a parsed frame (fields a frame lacks are 0).
ecmp::Key ecmp_key(const pk::Meta& m, uint32_t in_port) {
  ecmp::Key k;
  k.src_ip = m.src_ip;
  k.dst_ip = m.dst_ip;
  k.proto = m.proto;
  k.sport = m.sport;
  k.dport = m.dport;
  k.dest_qp = m.dest_qp;
  k.in_port = in_port;
  return k;
}

}  // namespace

uint8_t Switch::traffic_class(const pk::Meta& m) const {
  const bool ip = m.kind == pk::FrameKind::roce || m.kind == pk::FrameKind::cnp || m.kind == pk::FrameKind::cm ||
                  m.kind == pk::FrameKind::ipv4_other;
  if (m_cfg.qos.trust_dscp && ip) return m_cfg.qos.dscp_to_tc[m.dscp & 63];
  return m.has_vlan ? m_cfg.qos.pcp_to_tc[m.pcp & 7] : 0;
}

uint64_t Switch::last_bit_ps(const pk::Packet& p) const {
  return p.rx_first_bit_ps + m_port[p.ingress_port].byte_time.ps(pk::kPreambleSfdBytes + p.frame_len());
}

void Switch::on_rx(uint32_t port, pk::Packet& pkt, const sc_time& delay) {
  pk::Packet* p = &pkt;
  const uint64_t now = core::now_ps() + core::to_ps(delay);  // when the last bit (or the header) is in
  const uint64_t last = last_bit_ps(*p);
  // Cut-through: now is when the header is in. Store-and-forward: the last bit.
  const bool cut_through = m_cfg.cut_through && now < last;
  schedule_ingress(align(cut_through ? now : last) + pipeline_ps(), p, cut_through);
  (void)port;  // = p->ingress_port: the MAC of this port set it (Mac::accept)
}

void Switch::schedule_ingress(uint64_t ready_ps, pk::Packet* p, bool cut_through) {
  const Pending e{ready_ps, m_seq++ << 1 | uint64_t(cut_through), p};
  const bool earliest = m_pending.empty() || e.ready_ps < m_pending.front().ready_ps;
  m_pending.push_back(e);
  std::push_heap(m_pending.begin(), m_pending.end(), std::greater<Pending>());
  if (earliest) m_admit_ev.at(e.ready_ps);
}

void Switch::on_admit() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  if (!m_pending.empty() && m_pending.front().ready_ps <= now) {
    std::pop_heap(m_pending.begin(), m_pending.end(), std::greater<Pending>());
    const Pending first = m_pending.back();
    m_pending.pop_back();
    const uint32_t n = static_cast<uint32_t>(ports.size());
    if (m_pending.empty() || m_pending.front().ready_ps > now) {
      // The usual case: one frame at this clock edge, first in the arbiter's order.
      m_rr = (first.p->ingress_port + 1) % n;
      admit(first);
    } else {
      m_edge.clear();
      m_edge.push_back(first);
      while (!m_pending.empty() && m_pending.front().ready_ps <= now) {
        std::pop_heap(m_pending.begin(), m_pending.end(), std::greater<Pending>());
        m_edge.push_back(m_pending.back());
        m_pending.pop_back();
      }
      // The ingress arbiter: frames of one edge in round-robin port order from
      // m_rr, which then moves past the port served first. Every port with
      // traffic is first equally often, whatever order the frames arrived in
      // (docs/fidelity.md).
      const uint32_t rr = m_rr;
      std::sort(m_edge.begin(), m_edge.end(), [n, rr](const Pending& a, const Pending& b) {
        const uint32_t ra = (a.p->ingress_port + n - rr) % n, rb = (b.p->ingress_port + n - rr) % n;
        return ra != rb ? ra < rb : a.order < b.order;
      });
      m_rr = (m_edge.front().p->ingress_port + 1) % n;
      for (const Pending& e : m_edge) admit(e);
    }
  }
  if (!m_pending.empty()) m_admit_ev.at(m_pending.front().ready_ps);
}

void Switch::set_mlag_peer(uint32_t peer_port, pk::Mac peer_mac) {
  m_sync_port = peer_port;
  m_sync_dst = peer_mac;
}

void Switch::send_sync(const uint8_t* payload, size_t len) {
  pk::Packet* p = m_ledger.create();
  pk::build_ethernet(*p, m_sync_dst, m_cfg.port_macs[m_sync_port], analytics::kEtherTypeSync, payload, len);
  p->created_ps = core::now_ps();
  ++m_sync.tx_frames;
  m_sync.tx_bytes += p->frame_len();
  ports[m_sync_port]->send_control(p, false);
}

void Switch::admit(const Pending& e) {
  pk::Packet* p = e.p;
  const pk::Meta& m = p->meta;
  const uint32_t in = p->ingress_port;
  const uint64_t now = core::now_ps();
  if (in == m_sync_port && m.ethertype == analytics::kEtherTypeSync && !m.has_vlan) {
    // M-LAG: the peer's analyzer synchronizing; for this one, not for forwarding.
    ++m_sync.rx_frames;
    m_sync.rx_bytes += p->frame_len();
    if (m_analytics) m_analytics->on_sync(p->hdr + pk::wire::kEthHdr, p->hdr_len - pk::wire::kEthHdr, now);
    m_ledger.deliver(p);
    return;
  }
  if (m_analytics) m_analytics->on_parsed(m, in, now, p);  // the TDE: selects, then mirrors (issue 14)

  const bool ipv4 = m.kind != pk::FrameKind::unknown && m.kind != pk::FrameKind::pfc;
  const uint32_t g = ipv4 ? m_routes.lookup(m.dst_ip) : kNoRoute;
  if (g == kNoRoute || g >= m_cfg.groups.size() || m_cfg.groups[g].empty()) {
    drop(p, pk::DropReason::no_route);
    return;
  }
  uint32_t out, member;
  const uint32_t lb = m_dlb.empty() ? kNoDlb : m_dlb_of[g];
  if (lb == kNoDlb) {
    member = m_ecmp.pick_member(g, ecmp_key(m, in));
    out = member == ecmp::Unit::kNone ? ecmp::Unit::kNone : m_ecmp.ports(g)[member];
    p->lb_block = pk::Packet::kNoLb;  // not a decision of this switch (a previous one's may be on it)
  } else {
    // Dynamic load balancing: the hashed member is the block's fallback and
    // tie-breaker; the packet counts as queued on the member chosen until it
    // leaves that queue (dlb_release), whichever way it leaves.
    const uint32_t h = m_ecmp.hash(ecmp_key(m, in));
    const uint32_t hashed = m_ecmp.member(g, h);
    const ecmp::FlowletGroup::Decision d =
        hashed == ecmp::Unit::kNone ? ecmp::FlowletGroup::Decision{} : m_dlb[lb].choose(h, hashed, now);
    member = d.member;
    out = d.member == ecmp::FlowletGroup::kNone ? ecmp::Unit::kNone : m_ecmp.ports(g)[d.member];
    p->lb_block = d.entry == ecmp::FlowletGroup::kNone ? pk::Packet::kNoLb : lb;
    p->lb_entry = d.entry;
  }
  if (out == ecmp::Unit::kNone) {  // every member of the group down
    drop(p, pk::DropReason::no_route);
    return;
  }
  const uint8_t tc = traffic_class(m);
  const uint8_t q = m_cfg.qos.tc_to_queue[tc] & 7;
  const uint8_t pg = m_cfg.qos.tc_to_pg[tc] & 7;
  const uint32_t qi = out * 8 + q;

  const bool cut_through = e.cut_through();
  if (cut_through) {
    // Cut through only into an idle egress with nothing queued ahead, at the
    // same or a lower speed (a faster egress would underrun).
    const bool idle = !m_port[out].mac->tx_busy() && !m_port[out].staged && !m_qlist[qi].head;
    if (!idle || m_cfg.port_rates[out] > m_cfg.port_rates[in]) {
      dlb_release(*p);  // admitted again, store-and-forward: it decides again then
      schedule_ingress(align(last_bit_ps(*p)) + pipeline_ps(), p, false);
      return;
    }
  }

  // A stormed queue drops what arrives for it (only the watchdog storms a queue).
  if (m_cfg.pfc.watchdog && m_cfg.pfc.wd_drop && m_wd[qi].stormed) {
    dlb_release(*p);
    drop(p, pk::DropReason::pfc_watchdog, qi);
    return;
  }
  const uint32_t bytes = p->frame_len();
  const uint32_t cells = m_qm->cells_for(bytes);
  const uint8_t ecn_in = m.ecn;  // before a mark at enqueue (packet traces)
  qm::EnqueueOp op;
  op.in_port = static_cast<uint16_t>(in);
  op.pg = pg;
  op.out_port = static_cast<uint16_t>(out);
  op.queue = q;
  op.cells = cells;
  op.bytes = bytes;
  op.lossless = (m_port[in].lossless_pgs >> pg) & 1;
  op.ecn_frame = ecn_frame(*p);
  op.ecn = m.ecn;
  op.rand32 = m_wred_word[qi];
  const qm::EnqueueResult r = m_qm->enqueue(op);
  PgStats& ps = m_pgstats[in * 8 + pg];
  ++ps.in_packets;
  ps.in_bytes += bytes;
  if (!r.admitted()) {
    dlb_release(*p);
    drop(p, drop_reason(r.verdict), qi);
    return;
  }
  const uint32_t head = r.head_cell;
  touch_pg(ps);
  ps.cells = r.pg.total();
  ps.peak_cells = std::max(ps.peak_cells, ps.cells);
  pfc_action(in, pg, r.pfc);
  ecn_apply(qi, *p, r.ecn);
  // Write the header bytes into the cells; the whole packet's cells cost bandwidth.
  m_gp.set_command(tlm::TLM_WRITE_COMMAND);
  m_gp.set_address(static_cast<uint64_t>(head) * m_cfg.buffer.cell_bytes);
  m_gp.set_data_ptr(p->hdr);
  m_gp.set_data_length(p->hdr_len);
  m_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  m_cc.cells = cut_through ? 1 : cells;  // cut-through forwards once the first cell is written
  m_cc.lead_ps = 0;
  // The packet object keeps its header, unchanged, until the dequeue reads it
  // back (a dequeue-time ECN mark comes after that read): the memory may hold
  // a reference instead of a copy (buffer.h, "Held by reference").
  m_cc.by_reference = true;
  sc_time d = SC_ZERO_TIME;
  buf_if()->b_transport(m_gp, d);
  if (!m_gp.is_response_ok()) SC_REPORT_ERROR("rocesim/switch", "packet buffer write failed");
  if (cut_through) {
    // The rest of the packet's cells still use write bandwidth as they arrive.
    if (cells > 1) buffer.reserve_write(now + core::to_ps(d), cells - 1);
    ++m_cut_through;
  }
  const uint32_t rcells = cut_through ? 1 : cells;
  const uint32_t read_cycles = (rcells + m_cfg.buffer.read_cells_per_cycle - 1) / m_cfg.buffer.read_cells_per_cycle;
  const uint64_t eligible = now + core::to_ps(d) + cycles(m_cfg.cycles.egress + read_cycles);

  QueueStats& qs = m_qstats[qi];
  touch_queue(qs);
  ++qs.enq_packets;
  qs.enq_bytes += bytes;
  ++qs.depth_packets;
  PortState& os = m_port[out];
  os.nonempty |= static_cast<uint8_t>(1u << q);
  if (os.dlb) {  // a load-balanced member: its queued bytes are a load input
    m_port_bytes[out] += bytes;
    dlb_queue_changed(out);
  }
  qs.depth_bytes += bytes;
  qs.depth_cells += cells;
  qs.peak_bytes = std::max(qs.peak_bytes, qs.depth_bytes);
  qs.peak_cells = std::max(qs.peak_cells, qs.depth_cells);
  p->eligible_ps = eligible;
  p->queue_cell = head;
  p->queue_next = nullptr;
  QueueList& ql = m_qlist[qi];
  (ql.tail ? ql.tail->queue_next : ql.head) = p;
  ql.tail = p;
  MemberCount& mc = m_members[m_member_base[g] + member];
  ++mc.packets;
  mc.bytes += bytes;
  if (m_hops && p->path_dir) {
    Hop h;
    h.in_port = in;
    h.out_port = out;
    h.group = g;
    h.member = member;
    h.queue = q;
    h.index = p->hops;
    h.ecn_in = ecn_in;
    h.arrival_ps = last_bit_ps(*p);
    h.eligible_ps = eligible;
    h.depth_bytes = qs.depth_bytes - bytes;
    h.depth_cells = qs.depth_cells - cells;
    m_hops->on_hop(m_hop_index, *p, h);
  }
  ++p->hops;
  if (m_trace) trace_op(qi, r.ecn.mark, r.charge);
  schedule_wake(out, eligible);
}

void Switch::dlb_release(const pk::Packet& p) {
  if (p.lb_block != pk::Packet::kNoLb) m_dlb[p.lb_block].dequeued(p.lb_entry);
}

void Switch::dlb_queue_changed(uint32_t port) {
  for (const DlbMember& d : m_port_dlb[port]) m_dlb[d.block].set_queue_bytes(d.member, m_port_bytes[port]);
}

ecmp::FlowletGroup::Stats Switch::dlb_stats() const {
  ecmp::FlowletGroup::Stats t;
  for (const ecmp::FlowletGroup& g : m_dlb) {
    t.new_flowlets += g.stats().new_flowlets;
    t.moves += g.stats().moves;
    t.held_queued += g.stats().held_queued;
    t.avoided_hot += g.stats().avoided_hot;
  }
  return t;
}

bool Switch::ecn_frame(const pk::Packet& p) {
  return p.meta.kind == pk::FrameKind::roce || p.meta.kind == pk::FrameKind::ipv4_other;  // IPv4 data only
}

void Switch::ecn_apply(uint32_t qi, pk::Packet& p, const qm::EcnResult& e) {
  if (e.drew) {
    // Only a marking queue draws (the streams are kept only when one marks).
    if (qi >= m_wred_rng.size()) throw std::logic_error("switch: a WRED draw on a queue with no ECN marking");
    m_wred_word[qi] = static_cast<uint32_t>(m_wred_rng[qi].next_u64() >> 32);
  }
  if (e.mark) pk::set_ecn(p, ecn::codepoint::kCe);
}

}  // namespace rocesim::sw

#include "sim/packet_trace.h"

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "core/rng.h"
#include "core/time.h"
#include "ecn/marker.h"
#include "sim/outputs.h"

namespace rocesim::sim {

namespace pk = rocesim::packet;

namespace {

const char* kHeader =
    "packet_id,flow_id,psn,hop,node,in_port,out_port,queue,frame_bytes,created_ns,arrival_ns,admit_ns,eligible_ns,"
    "departure_ns,queue_bytes,queue_cells,ingress_ns,pause_ns,queueing_ns,serialization_ns,ecn_in,ecn_out,"
    "one_way_ns\n";

}  // namespace

PacketTracer::PacketTracer(const Scenario& s, std::vector<sw::Switch*> switches, sw::HopObserver* next)
    : m_s(s), m_switches(std::move(switches)), m_next(next), m_flow_all(s.flows.size(), 0) {
  const PacketTraceSpec& t = s.stats.packet_trace;
  for (size_t f = 0; f < s.flows.size(); ++f) m_flow_all[f] = t.names(f, s.flows[f].tag);
  // A packet of another flow is traced when its draw (uniform on 2^64) is
  // below sample x 2^64; sample 1 traces all.
  m_sample_threshold = t.sample >= 1.0 ? UINT64_MAX : static_cast<uint64_t>(std::ldexp(t.sample, 64));
  m_pending.reserve(1024);
}

PacketTracer::~PacketTracer() {
  if (m_file) std::fclose(m_file);
}

bool PacketTracer::open(const std::string& path, std::string& why) {
  m_path = path;
  if (!open_stream(m_file, path, why)) return false;
  row(kHeader);
  return true;
}

void PacketTracer::close(std::vector<OutputFailure>& failed) {
  if (m_file && std::fflush(m_file) != 0 && !m_err) m_err = errno;
  close_stream(m_file, m_path, m_err, failed);
}

void PacketTracer::row(const std::string& line) {
  if (!m_file) return;
  if (std::fwrite(line.data(), 1, line.size(), m_file) != line.size() && !m_err) m_err = errno ? errno : EIO;
}

bool PacketTracer::selected(const pk::Packet& p) const {
  if (p.path_dir != static_cast<uint8_t>(pk::PathDir::fwd) || p.flow_id >= m_flow_all.size()) return false;
  if (m_flow_all[p.flow_id]) return true;
  if (!m_sample_threshold) return false;
  uint64_t st = m_s.seed ^ (p.id * 0x9E3779B97F4A7C15ull) ^ 0x7061636b65747472ull;  // "packettr"
  const uint64_t draw = core::splitmix64(st);
  return m_sample_threshold == UINT64_MAX || draw < m_sample_threshold;
}

uint64_t PacketTracer::paused_ps(sw::Switch& s, uint32_t port, uint8_t queue) const {
  // The time the egress has been paused for a priority of the queue (with
  // the default one priority per queue, exactly its paused time).
  const uint8_t prios = s.queue_priorities(queue);
  uint64_t t = 0;
  for (int p = 0; p < 8; ++p)
    if (prios >> p & 1) t = std::max<uint64_t>(t, s.ports[port]->pause_stats(p).paused_ps);
  return t;
}

void PacketTracer::on_hop(uint32_t sw, pk::Packet& p, const sw::Hop& h) {
  if (m_next) m_next->on_hop(sw, p, h);
  if (!p.traced) {
    if (h.index != 0 || !selected(p)) return;
    p.traced = 1;
  }
  Pending& e = m_pending[p.id];
  e.sw = sw;
  e.hop = h;
  e.admit_ps = core::now_ps();
  e.paused_at_admit_ps = paused_ps(*m_switches[sw], h.out_port, h.queue);
}

void PacketTracer::on_depart(uint32_t sw, const pk::Packet& p, uint32_t port) {
  const auto it = m_pending.find(p.id);
  if (it == m_pending.end() || it->second.sw != sw) return;
  const Pending e = it->second;
  m_pending.erase(it);
  sw::Switch& S = *m_switches[sw];
  const uint64_t now = core::now_ps();
  const uint64_t pause = paused_ps(S, port, e.hop.queue) - e.paused_at_admit_ps;
  const uint64_t ser = core::serialization_ps(pk::kPreambleSfdBytes + p.frame_len(), S.config().port_rates[port]);
  const sw::Hop& h = e.hop;
  std::string& r = m_line;
  r.clear();
  const auto u = [&r](uint64_t v) { append_uint(r, v), r += ','; };
  const auto ns = [&r](uint64_t v) { append_ns(r, v), r += ','; };
  u(p.id);
  u(p.flow_id);
  u(p.meta.psn);
  u(h.index);
  r += S.basename();
  r += ',';
  u(h.in_port);
  u(port);
  u(h.queue);
  u(p.frame_len());
  ns(p.created_ps);
  ns(h.arrival_ps);
  ns(e.admit_ps);
  ns(h.eligible_ps);
  ns(now);
  u(h.depth_bytes);
  u(h.depth_cells);
  ns(e.admit_ps - h.arrival_ps);
  ns(pause);
  ns(now - e.admit_ps - pause);
  ns(ser);
  u(h.ecn_in);
  u(p.meta.ecn);
  r += '\n';  // no one-way delay at a switch
  row(r);
  ++m_rows;
}

void PacketTracer::on_receive(const std::string& name, const pk::Packet& p) {
  const uint64_t now = core::now_ps();
  std::string& r = m_line;
  r.clear();
  const auto u = [&r](uint64_t v) { append_uint(r, v), r += ','; };
  u(p.id);
  u(p.flow_id);
  u(p.meta.psn);
  u(p.hops);
  r += name;
  r += ",0,,,";  // in_port 0, no egress, no queue
  u(p.frame_len());
  append_ns(r, p.created_ps);
  r += ',';
  append_ns(r, now);
  r += ",,,,,,,,,,,";  // admit_ns .. ecn_in: not at a receiver
  u(p.meta.ecn);
  append_ns(r, now - p.created_ps);
  r += '\n';
  row(r);
  ++m_rows;
}

}  // namespace rocesim::sim

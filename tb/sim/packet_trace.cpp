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
  for (uint64_t f : t.flows)
    if (f < m_flow_all.size()) m_flow_all[f] = 1;
  for (size_t f = 0; f < s.flows.size(); ++f)
    if (std::find(t.tags.begin(), t.tags.end(), s.flows[f].tag) != t.tags.end()) m_flow_all[f] = 1;
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
  std::string r;
  r.reserve(256);
  r += std::to_string(p.id) + ',' + std::to_string(p.flow_id) + ',' + std::to_string(p.meta.psn) + ',' +
       std::to_string(h.index) + ',' + S.basename() + ',' + std::to_string(h.in_port) + ',' + std::to_string(port) +
       ',' + std::to_string(h.queue) + ',' + std::to_string(p.frame_len()) + ',' + ps_to_ns_text(p.created_ps) + ',' +
       ps_to_ns_text(h.arrival_ps) + ',' + ps_to_ns_text(e.admit_ps) + ',' + ps_to_ns_text(h.eligible_ps) + ',' +
       ps_to_ns_text(now) + ',' + std::to_string(h.depth_bytes) + ',' + std::to_string(h.depth_cells) + ',' +
       ps_to_ns_text(e.admit_ps - h.arrival_ps) + ',' + ps_to_ns_text(pause) + ',' +
       ps_to_ns_text(now - e.admit_ps - pause) + ',' + ps_to_ns_text(ser) + ',' + std::to_string(h.ecn_in) + ',' +
       std::to_string(p.meta.ecn) + ",\n";
  row(r);
  ++m_rows;
}

void PacketTracer::on_receive(const std::string& name, const pk::Packet& p) {
  const uint64_t now = core::now_ps();
  std::string r;
  r += std::to_string(p.id) + ',' + std::to_string(p.flow_id) + ',' + std::to_string(p.meta.psn) + ',' +
       std::to_string(p.hops) + ',' + name + ",0,,," + std::to_string(p.frame_len()) + ',' +
       ps_to_ns_text(p.created_ps) + ',' + ps_to_ns_text(now) + ",,,,,,,,,,," + std::to_string(p.meta.ecn) + ',' +
       ps_to_ns_text(now - p.created_ps) + '\n';
  row(r);
  ++m_rows;
}

}  // namespace rocesim::sim

// The fabric at run time: running it in slices, flow dependencies, the
// lookups of nodes and ports. Building it: fabric_build.cpp; its outputs:
// fabric_outputs.cpp and sim/sampler.h.
#include "sim/fabric.h"

#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/time.h"
#include "sim/analytics_run.h"
#include "sim/outputs.h"
#include "sim/packet_trace.h"
#include "sim/paths.h"
#include "sim/sampler.h"

namespace rocesim::sim {

using namespace sc_core;

bool parse_pcap_request(const std::string& arg, PcapRequest& out, std::string& why) {
  const size_t colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size()) {
    why = "expected NODE:PORT, e.g. h0:0";
    return false;
  }
  out.arg = arg;
  out.node = arg.substr(0, colon);
  const std::string port = arg.substr(colon + 1);
  uint64_t v = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || v > 100000) {
      why = "PORT must be a port number, got '" + port + "'";
      return false;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out.port = static_cast<uint32_t>(v);
  return true;
}

Fabric::~Fabric() = default;

uint64_t Fabric::rtl_cycles() const {
  uint64_t n = 0;
#if ROCESIM_HAVE_RTL
  for (const rtl::QmRtl* r : m_rtl) n += r->cycles();
#endif
  return n;
}

uint64_t Fabric::ideal_fct_ps(const host::FlowRecord& r) const {
  // Every frame's wire time at the bottleneck, less the last frame's IFG (the
  // flow ends with its last bit), plus the unloaded path: exact for an isolated
  // flow on the direct topology.
  const uint64_t bytes = r.wire_bytes_sent > packet::kIfgBytes ? r.wire_bytes_sent - packet::kIfgBytes : 0;
  // RC with connection setup: the CM REQ/REP round trip comes first.
  const uint64_t setup = m_s.hosts.rc && m_s.hosts.cm ? 2 * m_flow_base_ps[r.id] : 0;
  return setup + core::serialization_ps(bytes, m_flow_bottleneck[r.id]) + m_flow_base_ps[r.id];
}

link::Mac* Fabric::find_mac(const std::string& node, uint32_t port, std::string& why) const {
  for (const auto& h : m_hosts) {
    if (node != h->basename()) continue;
    if (port >= h->num_ports()) {
      why = h->num_ports() == 1 ? "node '" + node + "' has 1 port (port 0)" : "node '" + node + "' has 2 ports (0..1)";
      return nullptr;
    }
    return &h->port_mac(port);
  }
  for (const auto& s : m_switches) {
    if (node != s->basename()) continue;
    if (port >= s->num_ports()) {
      why = "node '" + node + "' has " + std::to_string(s->num_ports()) + " ports (0.." +
            std::to_string(s->num_ports() - 1) + ")";
      return nullptr;
    }
    return s->ports[port].get();
  }
  std::string names;
  size_t shown = 0;
  for (const auto& h : m_hosts) {
    if (shown++ < 4) names += (names.empty() ? "" : ", ") + std::string(h->basename());
  }
  for (const auto& s : m_switches) {
    if (shown++ < 8) names += (names.empty() ? "" : ", ") + std::string(s->basename());
  }
  if (shown > 8) names += ", ...";
  why = "no node '" + node + "' in this topology (nodes: " + names + ")";
  return nullptr;
}

std::string Fabric::check_pcap(const PcapRequest& r) const {
  std::string why;
  find_mac(r.node, r.port, why);
  return why;
}

void Fabric::on_flow_done(host::FlowRecord& f) {
  for (uint32_t d : m_dependents[f.id])
    if (--m_waiting[d] == 0) m_hosts[m_flows[d].src]->release_flow(&m_flows[d]);
  if (--m_flows_left == 0 && m_s.sim.stop_when_done) sc_stop();
}

void Fabric::note_first_xoff() const {
  // Rows of equal time keep their log order (as pfc.csv lists them): the first wins.
  for (const pfc::Event& e : m_events)
    if (e.t_ps < m_first_xoff.t_ps && std::strcmp(e.what, "xoff") == 0) {
      m_first_xoff.t_ps = e.t_ps;
      m_first_xoff.node = e.node;
      m_first_xoff.port = e.port;
      m_first_xoff.prio = e.prio;
    }
}

const Fabric::FirstXoff& Fabric::first_xoff() const {
  note_first_xoff();  // the rows not yet flushed
  return m_first_xoff;
}

size_t Fabric::frames_held() const {
  size_t n = 0;
  for (const auto& h : m_hosts) n += h->frames_held();
  for (const auto& s : m_switches) n += s->frames_held();
  return n;
}

void Fabric::check_invariants(bool on) {
  if (on) m_inv = std::make_unique<InvariantChecker>(*this);
  else m_inv.reset();
}

RunResult Fabric::run(const RunControl& ctl) {
  RunResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t end_ps = m_s.sim.duration_ps;
  if (end_ps == 0 || (m_flows_left == 0 && m_s.sim.stop_when_done)) {
    sc_start(SC_ZERO_TIME);
  } else {
    // Slices of simulated time, sized to take about 10 ms of wall time each:
    // a signal or the wall-clock limit is honoured within a slice, at a cost of
    // one kernel entry per slice (no process polls). sc_start(t) leaves the
    // processes due at exactly t runnable for the next call, so the events and
    // their order are those of one sc_start(duration).
    uint64_t slice_ps = std::min<uint64_t>(end_ps, 1000000);  // 1 us to begin with
    core::Calendar& calendar = core::Calendar::get();
    double last_progress_s = -1e9;
    for (;;) {
      const uint64_t now = core::now_ps();
      if (now >= end_ps || sc_get_status() == SC_STOPPED) break;  // the end, or sc_stop (stop_when_done)
      if (ctl.signal && *ctl.signal) {
        r.stop_signal = *ctl.signal;
        break;
      }
      const auto ts = std::chrono::steady_clock::now();
      if (ctl.max_wall_s > 0 && std::chrono::duration<double>(ts - t0).count() >= ctl.max_wall_s) {
        r.wall_limit = true;
        break;
      }
      const uint64_t step = std::min(slice_ps, end_ps - now);
      // Checked runs also stop at each multiple of kInvariantSlicePs, where they are checked.
      const uint64_t d = m_inv ? std::min(step, kInvariantSlicePs - now % kInvariantSlicePs) : step;
      // The calendar runs ahead of the kernel within the slice (core/calendar.h).
      calendar.set_run_ahead(now + d);
      sc_start(core::ps(d));
      note_first_xoff();
      if (m_pfc_stream) m_pfc_stream->flush(m_events, core::now_ps());  // every row before now is in
      if (m_cc_stream) m_cc_stream->flush(m_cc, core::now_ps());
      if (m_inv && core::now_ps() % kInvariantSlicePs == 0 && !m_inv->check(false)) break;
      const auto te = std::chrono::steady_clock::now();
      const double w = std::chrono::duration<double>(te - ts).count();
      if (ctl.progress) {
        // The slice boundary is the only place the wall clock is read: the
        // display costs nothing between slices (about 10 ms of wall each).
        const double total = std::chrono::duration<double>(te - t0).count();
        if (total >= ctl.progress_after_s && total - last_progress_s >= ctl.progress_every_s) {
          last_progress_s = total;
          Progress p;
          p.sim_ps = core::now_ps();
          p.end_ps = end_ps;
          p.flows = m_flows.size();
          p.flows_done = m_flows.size() - m_flows_left;
          p.events = m_ledger.events();
          p.wall_s = total;
          ctl.progress(p);
        }
      }
      if (w < 0.005 && slice_ps < end_ps) slice_ps *= 2;
      else if (w > 0.02 && slice_ps > 1000) slice_ps /= 2;
    }
  }
  core::Calendar::get().set_run_ahead(0);  // later sc_start calls (tests) step without it
  if (m_inv) m_inv->check(true);  // always at the end (a no-op after a violation)
  const auto t1 = std::chrono::steady_clock::now();
  r.wall_time_s = std::chrono::duration<double>(t1 - t0).count();
  r.sim_time_ps = core::now_ps();
  r.events = m_ledger.events();
  r.link_hops = m_ledger.link_hops();
  r.sent = m_ledger.sent();
  r.delivered = m_ledger.delivered();
  r.dropped = m_ledger.dropped();
  r.in_flight = frames_held();
  r.pool_in_use = m_ledger.alive();
  r.conserved = r.sent == r.delivered + r.dropped + r.in_flight && r.pool_in_use == r.in_flight;
  r.all_flows_done = m_flows_left == 0;
  r.last_delivery_ps = m_ledger.last_delivery_ps();
  r.deadlock = r.in_flight > 0 && r.sim_time_ps - r.last_delivery_ps >= m_s.sim.deadlock_after_ps;
  return r;
}

}  // namespace rocesim::sim

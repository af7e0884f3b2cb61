#include "sim/fabric.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/time.h"

namespace rocesim::sim {

using namespace sc_core;

uint32_t host_ip(uint32_t index) { return 0x0A000000u + index + 1; }
packet::Mac host_mac(uint32_t index) { return 0x020000000000ull | (static_cast<uint64_t>(index) & 0xffffffull); }

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

Fabric::Fabric(sc_module_name name, const Scenario& s) : sc_module(name), m_s(s), m_pool(1024), m_ledger(m_pool) {
  host::HostConfig hc;
  hc.mtu = s.hosts.mtu;
  hc.vlan = s.hosts.vlan;
  hc.pcp = static_cast<uint8_t>(s.hosts.pcp);
  hc.dscp = static_cast<uint8_t>(s.hosts.dscp);
  hc.ecn = static_cast<uint8_t>(s.hosts.ecn);
  hc.port.rate_bps = s.links.link.rate_bps;
  hc.port.checks.check_fcs = s.links.check_fcs;
  hc.port.checks.check_icrc = s.links.check_icrc;
  for (uint32_t i = 0; i < s.topology.hosts; ++i) {
    hc.index = i;
    hc.ip = host_ip(i);
    hc.mac = host_mac(i);
    m_hosts.push_back(std::make_unique<host::Host>(("h" + std::to_string(i)).c_str(), hc, m_ledger));
    m_hosts.back()->set_listener(this);
  }
  // "direct": h0 <-> h1 on one cable.
  m_links.push_back(std::make_unique<link::Link>("link_h0_h1", s.links.link, m_ledger, s.seed));
  link::connect(m_hosts[0]->mac, *m_links[0], m_hosts[1]->mac);

  // Flow records live in a vector sized once, so hosts may keep pointers.
  m_flows.resize(s.flows.size());
  std::vector<uint32_t> next_qp(m_hosts.size(), host::kFirstQp);
  for (size_t i = 0; i < s.flows.size(); ++i) {
    const FlowSpec& fs = s.flows[i];
    host::FlowRecord& r = m_flows[i];
    r.id = static_cast<uint32_t>(i);
    r.src = fs.src_index;
    r.dst = fs.dst_index;
    r.message_bytes = fs.message_bytes;
    r.messages = fs.messages;
    r.rate_bps = fs.rate_bps;
    r.start_ps = fs.start_ps;
    r.src_qp = next_qp[r.src]++;
    r.dst_qp = next_qp[r.dst]++;
  }
  for (host::FlowRecord& r : m_flows) {
    m_hosts[r.src]->add_send_flow(&r, host_ip(r.dst), host_mac(r.dst));
    m_hosts[r.dst]->add_recv_flow(&r);
  }
  m_flows_left = m_flows.size();
}

Fabric::~Fabric() = default;

std::vector<std::string> Fabric::node_names() const {
  std::vector<std::string> n;
  for (const auto& h : m_hosts) n.push_back(h->basename());
  return n;
}

link::Mac* Fabric::find_mac(const std::string& node, uint32_t port) const {
  for (const auto& h : m_hosts)
    if (node == h->basename()) return port == 0 ? &h->mac : nullptr;
  return nullptr;
}

std::string Fabric::check_pcap(const PcapRequest& r) const {
  for (const auto& h : m_hosts) {
    if (r.node == h->basename()) {
      if (r.port != 0) return "node '" + r.node + "' has 1 port (port 0)";
      return "";
    }
  }
  std::string names;
  for (const auto& n : node_names()) names += (names.empty() ? "" : ", ") + n;
  return "no node '" + r.node + "' in this topology (nodes: " + names + ")";
}

bool Fabric::open_pcaps(const std::vector<PcapRequest>& reqs, const std::string& dir, std::string& why) {
  for (const PcapRequest& r : reqs) {
    link::Mac* mac = find_mac(r.node, r.port);
    const std::string base = dir + "/" + r.node + "-p" + std::to_string(r.port);
    auto rx = std::make_unique<link::PcapWriter>(base + "-rx.pcap");
    auto tx = std::make_unique<link::PcapWriter>(base + "-tx.pcap");
    if (!rx->open() || !tx->open()) {
      why = "cannot write " + base + "-*.pcap: " + std::strerror(errno);
      return false;
    }
    mac->set_pcap(rx.get(), tx.get());
    m_pcaps.push_back(std::move(rx));
    m_pcaps.push_back(std::move(tx));
  }
  return true;
}

bool Fabric::close_pcaps() {
  bool ok = true;
  for (auto& p : m_pcaps) ok = p->close() && ok;
  return ok;
}

void Fabric::on_flow_done(host::FlowRecord&) {
  if (--m_flows_left == 0 && m_s.sim.stop_when_done) sc_stop();
}

size_t Fabric::frames_held() const {
  size_t n = 0;
  for (const auto& h : m_hosts) n += h->mac.frames_held();
  return n;
}

RunResult Fabric::run() {
  RunResult r;
  const auto t0 = std::chrono::steady_clock::now();
  if (m_flows_left == 0 && m_s.sim.stop_when_done) {
    sc_start(SC_ZERO_TIME);
  } else {
    sc_start(core::ps(m_s.sim.duration_ps));
  }
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
  return r;
}

}  // namespace rocesim::sim

#include "wave/tracer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/time.h"
#include "sim/outputs.h"

namespace rocesim::wave {

namespace {

using trace::Signal;
using trace::SignalInfo;

// Node names and port counts of the scenario's topology.
bool node_port_count(const sim::Scenario& s, const std::string& node, uint32_t& ports) {
  if (s.topology.kind == "direct") {
    ports = 1;
    return node == "h0" || node == "h1";
  }
  const uint32_t n = s.topo.find(node);
  if (n == topology::kNoNode) return false;
  ports = s.topo.nodes[n].ports;
  return true;
}

std::string some_nodes(const sim::Scenario& s) {
  if (s.topology.kind == "direct") return "h0, h1";
  const topology::Topology& T = s.topo;
  std::string names;
  size_t shown = 0;
  for (size_t i = 0; i < T.switches.size() && shown < 4; ++i, ++shown)
    names += (shown ? ", " : "") + T.nodes[T.switches[i]].name;
  for (size_t i = 0; i < T.hosts.size() && shown < 8; ++i, ++shown) names += (shown ? ", " : "") + T.nodes[T.hosts[i]].name;
  if (T.hosts.size() + T.switches.size() > shown) names += ", ...";
  return names;
}

bool parse_port(const std::string& t, uint32_t& v) {
  if (t.empty() || t.size() > 6) return false;
  v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  return true;
}

// A signal's name as GTKWave shows it: vectors carry their range, as
// Verilator declares them ("depth_bytes [31:0]" shows as depth_bytes[31:0]).
std::string var_name(const std::string& name, uint32_t bits) {
  return bits == 1 ? name : name + " [" + std::to_string(bits - 1) + ":0]";
}

}  // namespace

bool resolve_trace_select(const sim::Scenario& s, const std::vector<std::string>& args, Selection& out,
                          std::string& why) {
  out.nodes.clear();
  for (const std::string& arg : args) {
    size_t start = 0;
    for (;;) {
      const size_t comma = arg.find(',', start);
      const std::string item = arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const size_t colon = item.rfind(':');
      const std::string node = colon == std::string::npos ? item : item.substr(0, colon);
      const std::string port = colon == std::string::npos ? "*" : item.substr(colon + 1);
      uint32_t ports = 0, p = 0;
      if (node.empty()) {
        why = "--trace-select " + arg + ": expected NODE, NODE:PORT or NODE:*, comma-separated, e.g. sw0:16,h0";
        return false;
      }
      if (!node_port_count(s, node, ports)) {
        why = "--trace-select " + arg + ": no node '" + node + "' in this topology (nodes: " + some_nodes(s) + ")";
        return false;
      }
      std::set<uint32_t>& sel = out.nodes[node];
      if (port == "*") {
        for (uint32_t k = 0; k < ports; ++k) sel.insert(k);
      } else if (!parse_port(port, p)) {
        why = "--trace-select " + arg + ": PORT must be a port number or *, got '" + port + "'";
        return false;
      } else if (p >= ports) {
        why = "--trace-select " + arg + ": node '" + node + "' has " +
              (ports == 1 ? std::string("1 port (port 0)")
                          : std::to_string(ports) + " ports (0.." + std::to_string(ports - 1) + ")");
        return false;
      } else {
        sel.insert(p);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return true;
}

std::string gtkw_path(const std::string& trace_path) {
  const size_t dot = trace_path.rfind('.');
  const size_t slash = trace_path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return trace_path + ".gtkw";
  return trace_path.substr(0, dot) + ".gtkw";
}

Tracer::Tracer(sim::Fabric& f, const Selection& sel, uint64_t from_ps, uint64_t to_ps)
    : m_fabric(f), m_rec([] { return core::now_ps(); }, from_ps, to_ps), m_from(from_ps), m_to(to_ps) {
  auto ports_of = [&](const std::string& node, uint32_t n) {
    std::set<uint32_t> all;
    if (sel.all()) {
      for (uint32_t p = 0; p < n; ++p) all.insert(p);
      return all;
    }
    auto it = sel.nodes.find(node);
    return it == sel.nodes.end() ? all : it->second;
  };
  auto sig = [&](std::vector<std::string> scope, const std::string& name, uint32_t bits, bool analog = false) {
    return m_rec.add_signal(SignalInfo{std::move(scope), var_name(name, bits), bits, analog});
  };
  // A MAC's signals, in its port's scope.
  auto mac_signals = [&](link::Mac& mac, const std::vector<std::string>& scope) {
    auto t = std::make_unique<link::MacTrace>();
    t->rec = &m_rec;
    t->busy = sig(scope, "busy", 1);
    for (int p = 0; p < 8; ++p) t->paused[p] = sig(scope, "paused" + std::to_string(p), 1);
    mac.set_trace(t.get());
    m_mac.push_back(std::move(t));
  };

  for (const auto& swp : f.switches()) {
    sw::Switch& s = *swp;
    const std::string name = s.basename();
    const std::set<uint32_t> ports = ports_of(name, static_cast<uint32_t>(s.num_ports()));
    if (ports.empty()) continue;
    auto t = std::make_unique<sw::SwitchTrace>();
    t->rec = &m_rec;
    const size_t n = s.num_ports() * 8;
    for (auto* v : {&t->q_bytes, &t->q_cells, &t->q_ecn, &t->q_drops, &t->pg_cells, &t->pg_xoff})
      v->assign(n, link::kNoTrace);
    const std::vector<std::string> mmu{name, "mmu"};
    for (size_t k = 0; k < s.mmu().pools(); ++k) t->pool.push_back(sig(mmu, "pool" + std::to_string(k) + "_cells", 32, true));
    t->headroom_pool = sig(mmu, "headroom_pool_cells", 32, true);
    t->buffer_cells = sig(mmu, "buffer_cells", 32, true);
    t->drops = sig(mmu, "drops", 64);
    for (uint32_t p : ports) {
      const std::string ps = "p" + std::to_string(p);
      mac_signals(*s.ports[p], {name, ps});
      for (uint32_t q = 0; q < 8; ++q) {
        const std::vector<std::string> sc{name, ps, "q" + std::to_string(q)};
        t->q_bytes[p * 8 + q] = sig(sc, "depth_bytes", 32, true);
        t->q_cells[p * 8 + q] = sig(sc, "depth_cells", 32, true);
        t->q_ecn[p * 8 + q] = sig(sc, "ecn_marks", 64);
        t->q_drops[p * 8 + q] = sig(sc, "drops", 64);
      }
      for (uint32_t g = 0; g < 8; ++g) {
        const std::vector<std::string> sc{name, ps, "pg" + std::to_string(g)};
        t->pg_cells[p * 8 + g] = sig(sc, "cells", 32, true);
        t->pg_xoff[p * 8 + g] = sig(sc, "xoff", 1);
      }
    }
    s.set_trace(t.get());
    m_sw.push_back(std::move(t));
  }
  const auto& flows = f.flows();
  const bool dcqcn = f.scenario().hosts.rc && f.scenario().hosts.dcqcn;
  for (const auto& hp : f.hosts()) {
    host::Host& h = *hp;
    const std::string name = h.basename();
    if (ports_of(name, 1).empty()) continue;
    m_host_names.insert(name);
    for (uint32_t p = 0; p < h.num_ports(); ++p) mac_signals(h.port_mac(p), {name, "p" + std::to_string(p)});
    if (!dcqcn) continue;
    auto t = std::make_unique<host::HostTrace>();
    t->rec = &m_rec;
    t->flow_rate.assign(flows.size(), link::kNoTrace);
    for (const host::FlowRecord& r : flows)
      if (r.src == h.config().index) t->flow_rate[r.id] = sig({name, "flow" + std::to_string(r.id)}, "rate_bps", 64, true);
    h.set_trace(t.get());
    m_host.push_back(std::move(t));
  }
}

Tracer::~Tracer() {
  // The modules outlive the tracer only in error paths: leave them no dangling observer.
  for (const auto& s : m_fabric.switches()) {
    s->set_trace(nullptr);
    for (auto& p : s->ports) p->set_trace(nullptr);
  }
  for (const auto& h : m_fabric.hosts()) {
    h->set_trace(nullptr);
    for (uint32_t p = 0; p < h->num_ports(); ++p) h->port_mac(p).set_trace(nullptr);
  }
}

bool Tracer::open(const std::string& path, Format fmt, std::string& why) {
  m_path = path;
  const sim::Scenario& s = m_fabric.scenario();
  m_file = open_wave(path, fmt, "rocesim TLM waveforms: scenario " + s.name + ", seed " + std::to_string(s.seed), why);
  if (!m_file) return false;
  m_rec.open(m_file.get());
  return true;
}

bool Tracer::close(uint64_t end_ps, std::string& file, std::string& why) {
  if (!m_file) return true;
  m_rec.close(end_ps);
  m_end = std::min(end_ps, m_to);
  const bool ok = m_file->close(why);
  m_file.reset();
  if (!ok) {
    file = m_path;
    return false;
  }
  file = gtkw_path(m_path);
  return sim::write_file_atomic(file, gtkw_text(), why);
}

std::string Tracer::gtkw_text() const {
  // GTKWave trace flags (gtkwave analyzer.h, TraceEntFlagBits).
  constexpr unsigned kDec = 0x4, kBin = 0x8, kRjustify = 0x20, kBlank = 0x200, kCollapsed = 0x1000;
  constexpr unsigned kAnalogStep = 0x8000, kBlankStretch = 0x20000, kClosed = 0x400000, kGrpBegin = 0x800000,
                     kGrpEnd = 0x1000000;
  const std::vector<SignalInfo>& sigs = m_rec.signals();
  // The scope tree of the signals that changed, in declaration order.
  struct Node {
    std::string name;
    std::vector<std::unique_ptr<Node>> kids;
    std::vector<Signal> sigs;
  };
  Node root;
  for (Signal s = 0; s < sigs.size(); ++s) {
    if (!m_rec.changed(s)) continue;
    Node* n = &root;
    std::string path;
    for (const std::string& part : sigs[s].scope) {
      path += (path.empty() ? "" : ".") + part;
      if (n->kids.empty() || n->kids.back()->name != path) {
        n->kids.push_back(std::make_unique<Node>());
        n->kids.back()->name = path;
      }
      n = n->kids.back().get();
    }
    n->sigs.push_back(s);
  }
  char flags[16];
  auto flag = [&](unsigned f) {
    std::snprintf(flags, sizeof flags, "@%x\n", f);
    return std::string(flags);
  };
  std::string o;
  o += "[*] rocesim TLM waveforms (docs/waveforms.md): gtkwave " + m_path + " " + gtkw_path(m_path) + "\n";
  o += "[timestart] " + std::to_string(m_from) + "\n";
  if (m_end > m_from) {
    // Zoomed to show the whole window: GTKWave's zoom z is 2^-z time units
    // per pixel, and the wave pane of this layout is about 1000 pixels wide.
    char z[64];
    std::snprintf(z, sizeof z, "*%.6f %llu", -std::log2(static_cast<double>(m_end - m_from) / 1000.0),
                  static_cast<unsigned long long>(m_from));
    o += z;
    for (int i = 0; i < 26; ++i) o += " -1";  // no named markers
    o += "\n";
  }
  o += "[size] 1600 1000\n[sst_width] 240\n[signals_width] 340\n[sst_expanded] 1\n";
  std::function<void(const Node&, int)> emit = [&](const Node& n, int depth) {
    // Switch groups open, host groups closed (many hosts, and the switch is what one debugs).
    const bool host = depth == 0 && m_host_names.count(n.name);
    const unsigned closed = host ? kClosed : 0;
    o += flag(kGrpBegin | kBlank | closed) + "-" + n.name + "\n";
    for (Signal s : n.sigs) {
      const SignalInfo& si = sigs[s];
      std::string full;
      for (const std::string& part : si.scope) full += part + ".";
      std::string shown = si.name;
      shown.erase(std::remove(shown.begin(), shown.end(), ' '), shown.end());
      if (si.analog) {
        o += flag(kAnalogStep | kDec | kRjustify) + full + shown + "\n";
        o += flag(kBlankStretch) + "-\n-\n";  // three rows high
      } else {
        o += flag((si.bits == 1 ? kBin : kDec) | kRjustify) + full + shown + "\n";
      }
    }
    for (const auto& k : n.kids) emit(*k, depth + 1);
    o += flag(kGrpEnd | kBlank | (closed ? kClosed | kCollapsed : 0)) + "-" + n.name + "\n";
  };
  for (const auto& k : root.kids) emit(*k, 0);
  return o;
}

}  // namespace rocesim::wave

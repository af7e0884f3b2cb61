#include "qm/ops_file.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rocesim::qm {

namespace {

std::string u(uint64_t v) { return std::to_string(v); }
std::string cell(uint32_t c) { return c == kNoCell ? std::string("-1") : u(c); }
std::string b(bool v) { return v ? "1" : "0"; }

std::string ecn_fields(const EcnResult& e) {
  return b(e.decided) + " " + b(e.fired) + " " + b(e.mark) + " " + b(e.drew);
}
std::string pg_fields(const mmu::PgState& p) {
  return u(p.reserved) + " " + u(p.shared) + " " + u(p.headroom) + " " + u(p.threshold);
}
std::string charge_fields(const mmu::Charge& c) {
  return u(c.in_reserved) + " " + u(c.in_shared) + " " + u(c.headroom) + " " + u(c.eg_reserved) + " " + u(c.eg_shared);
}

const char* rule_name(pfc::GeneratorConfig::XonRule r) {
  return r == pfc::GeneratorConfig::XonRule::absolute ? "absolute"
         : r == pfc::GeneratorConfig::XonRule::ratio  ? "ratio"
                                                      : "offset";
}

// One line split into fields, each with its column, for FILE:LINE:COL errors.
class Fields {
 public:
  Fields(const std::string& line, const std::string& file, size_t lineno) : m_file(file), m_line(lineno) {
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i >= line.size()) break;
      const size_t j = line.find(' ', i);
      m_f.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
      m_col.push_back(i + 1);
      i = j == std::string::npos ? line.size() : j;
    }
  }
  size_t size() const { return m_f.size(); }
  const std::string& str(size_t i) const {
    need(i);
    return m_f[i];
  }
  [[noreturn]] void fail(size_t i, const std::string& what) const {
    const size_t col = i < m_col.size() ? m_col[i] : (m_col.empty() ? 1 : m_col.back() + m_f.back().size());
    throw std::runtime_error(m_file + ":" + u(m_line) + ":" + u(col) + ": " + what);
  }
  uint64_t num(size_t i, uint64_t max = UINT64_MAX) const {
    const std::string& s = str(i);
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) fail(i, "expected a number, got '" + s + "'");
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno || v > max) fail(i, "number out of range: " + s);
    return v;
  }
  int64_t snum(size_t i, int64_t min, int64_t max) const {
    const std::string& s = str(i);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || errno || v < min || v > max) fail(i, "expected an integer " + std::to_string(min) + ".." +
                                                                       std::to_string(max) + ", got '" + s + "'");
    return v;
  }
  bool flag(size_t i) const { return num(i, 1) == 1; }
  uint32_t head(size_t i) const { return str(i) == "-1" ? kNoCell : static_cast<uint32_t>(num(i, UINT32_MAX - 1)); }
  double real(size_t i) const {
    const std::string& s = str(i);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end) fail(i, "expected a number, got '" + s + "'");
    return v;
  }
  size_t word(size_t i, const std::vector<std::string>& words) const {
    for (size_t k = 0; k < words.size(); ++k)
      if (str(i) == words[k]) return k;
    std::string list;
    for (const std::string& w : words) list += (list.empty() ? "" : ", ") + w;
    fail(i, "expected one of " + list + ", got '" + str(i) + "'");
  }
  void expect_count(size_t n) const {
    if (m_f.size() != n) fail(std::min(m_f.size(), n), "expected " + u(n) + " fields, got " + u(m_f.size()));
  }

 private:
  void need(size_t i) const {
    if (i >= m_f.size()) fail(i, "missing field " + u(i + 1));
  }
  std::string m_file;
  size_t m_line;
  std::vector<std::string> m_f;
  std::vector<size_t> m_col;
};

const std::vector<std::string> kVerdicts{"admit", "ingress_limit", "egress_limit", "pool_full", "headroom_overflow"};
const std::vector<std::string> kPfc{"none", "xoff", "xon"};
const std::vector<std::string> kModes{"from_pool", "dynamic_th", "static_th"};

EcnResult read_ecn(const Fields& f, size_t i) { return EcnResult{f.flag(i), f.flag(i + 1), f.flag(i + 2), f.flag(i + 3)}; }
mmu::PgState read_pg(const Fields& f, size_t i) {
  mmu::PgState p;
  p.reserved = static_cast<uint32_t>(f.num(i, UINT32_MAX));
  p.shared = static_cast<uint32_t>(f.num(i + 1, UINT32_MAX));
  p.headroom = static_cast<uint32_t>(f.num(i + 2, UINT32_MAX));
  p.threshold = f.num(i + 3);
  return p;
}
void read_charge(const Fields& f, size_t i, mmu::Charge& c) {
  c.in_reserved = static_cast<uint32_t>(f.num(i, UINT32_MAX));
  c.in_shared = static_cast<uint32_t>(f.num(i + 1, UINT32_MAX));
  c.headroom = static_cast<uint32_t>(f.num(i + 2, UINT32_MAX));
  c.eg_reserved = static_cast<uint32_t>(f.num(i + 3, UINT32_MAX));
  c.eg_shared = static_cast<uint32_t>(f.num(i + 4, UINT32_MAX));
}

}  // namespace

std::string config_text(uint32_t sw, const std::string& name, const Config& c) {
  std::ostringstream o;
  const mmu::Config& m = c.mmu;
  o << "switch " << sw << " " << name << " " << m.ports.size() << " " << m.total_cells << " " << m.cell_bytes << " "
    << m.shared_headroom_cells << "\n";
  for (size_t i = 0; i < m.pools.size(); ++i)
    o << "pool " << i << " " << mmu::pool_type_name(m.pools[i].type) << " " << m.pools[i].size_cells << " "
      << mmu::threshold_mode_name(m.pools[i].mode) << "\n";
  for (size_t p = 0; p < m.ports.size(); ++p) {
    for (size_t g = 0; g < mmu::kPgsPerPort; ++g) {
      const mmu::PgProfile& x = m.ports[p].pgs[g];
      o << "pg " << p << " " << g << " " << x.pool << " " << x.reserved_cells << " "
        << mmu::threshold_mode_name(x.threshold.mode) << " " << x.threshold.dynamic_th << " " << x.threshold.static_cells
        << " " << x.headroom_cells << " " << b(x.lossless) << "\n";
    }
    for (size_t q = 0; q < mmu::kQueuesPerPort; ++q) {
      const mmu::QueueProfile& x = m.ports[p].queues[q];
      o << "queue " << p << " " << q << " " << x.pool << " " << x.reserved_cells << " "
        << mmu::threshold_mode_name(x.threshold.mode) << " " << x.threshold.dynamic_th << " "
        << x.threshold.static_cells << "\n";
    }
  }
  for (int q = 0; q < kQueues; ++q) {
    const ecn::MarkerConfig& e = c.ecn[q];
    char pmax[40];
    std::snprintf(pmax, sizeof pmax, "%.17g", e.pmax);
    o << "ecn " << q << " " << ecn::mode_name(e.mode) << " " << ecn::point_name(e.point) << " " << ecn::unit_name(e.unit)
      << " " << e.k << " " << e.kmin << " " << e.kmax << " " << pmax << " " << e.k_high << " " << e.k_low << "\n";
  }
  o << "pfc " << b(c.pfc_enabled) << " " << unsigned(c.pfc_pgs) << " " << b(c.pfc.dynamic_xoff) << " "
    << c.pfc.xoff_cells << " " << rule_name(c.pfc.xon_rule) << " " << c.pfc.xon_offset_cells << " " << c.pfc.xon_cells
    << " " << c.pfc.xon_ratio_q16 << "\n";
  return o.str();
}

std::string op_text(const OpRecord& r) {
  std::string o;
  if (r.kind == OpKind::enqueue) {
    const EnqueueOp& e = r.enq;
    const EnqueueResult& x = r.enq_r;
    o = "E " + u(r.t_ps) + " " + u(r.sw) + " " + u(e.in_port) + " " + u(e.pg) + " " + u(e.out_port) + " " + u(e.queue) +
        " " + u(e.cells) + " " + u(e.bytes) + " " + b(e.lossless) + " " + b(e.ecn_frame) + " " + u(e.ecn) + " " +
        u(e.rand32) + " : " + mmu::verdict_name(x.verdict) + " " + b(x.lossless) + " " + b(x.in_headroom) + " " +
        cell(x.head_cell) + " " + charge_fields(x.charge) + " " + pg_fields(x.pg) + " " + pfc_action_name(x.pfc) + " " +
        ecn_fields(x.ecn);
  } else if (r.kind == OpKind::dequeue) {
    const DequeueOp& d = r.deq;
    const DequeueResult& x = r.deq_r;
    o = "D " + u(r.t_ps) + " " + u(r.sw) + " " + u(d.port) + " " + u(d.queue) + " " + b(d.ecn_frame) + " " + u(d.ecn) +
        " " + u(d.rand32) + " " + b(d.discard) + " : " + cell(x.head_cell) + " " + u(x.cells) + " " + u(x.bytes) + " " +
        u(x.charge.in_port) + " " + u(x.charge.pg) + " " + charge_fields(x.charge) + " " + pg_fields(x.pg) + " " +
        pfc_action_name(x.pfc) + " " + ecn_fields(x.ecn);
  } else {
    o = "T " + u(r.t_ps) + " " + u(r.sw) + " " + u(r.tick_port) + " " + u(r.tick_pg) + " : " + pfc_action_name(r.tick_r);
  }
  return o + "\n";
}

bool same_result(const OpRecord& e, const OpRecord& a, std::string& diff) {
  // Compare the result halves of the two lines field by field.
  auto fields = [](const OpRecord& r) {
    const std::string t = op_text(r);
    std::vector<std::string> v;
    std::istringstream in(t.substr(t.find(" : ") + 3));
    for (std::string w; in >> w;) v.push_back(w);
    return v;
  };
  static const std::vector<std::string> kE{"verdict", "lossless", "in_headroom", "head", "in_reserved", "in_shared",
                                           "headroom", "eg_reserved", "eg_shared", "pg.reserved", "pg.shared",
                                           "pg.headroom", "pg.threshold", "pfc", "ecn.decided", "ecn.fired",
                                           "ecn.mark", "ecn.drew"};
  static const std::vector<std::string> kD{"head", "cells", "bytes", "in_port", "pg", "in_reserved", "in_shared",
                                           "headroom", "eg_reserved", "eg_shared", "pg.reserved", "pg.shared",
                                           "pg.headroom", "pg.threshold", "pfc", "ecn.decided", "ecn.fired",
                                           "ecn.mark", "ecn.drew"};
  static const std::vector<std::string> kT{"pfc"};
  const std::vector<std::string>& names = e.kind == OpKind::enqueue ? kE : e.kind == OpKind::dequeue ? kD : kT;
  const std::vector<std::string> x = fields(e), y = fields(a);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    if (x[i] != y[i]) {
      diff = (i < names.size() ? names[i] : "field " + u(i)) + ": expected " + x[i] + ", got " + y[i];
      return false;
    }
  return true;
}

OpsFile parse_ops(const std::string& text, const std::string& name) {
  OpsFile f;
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  bool header = false;
  Config* cfg = nullptr;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const Fields x(line, name, lineno);
    const std::string& k = x.str(0);
    if (!header) {
      if (k != "rocesim-qm-ops") x.fail(0, "not a rocesim queue-manager operation record (no 'rocesim-qm-ops 1' line)");
      if (x.num(1) != 1) x.fail(1, "unsupported version " + x.str(1) + " (this reader reads version 1)");
      header = true;
      continue;
    }
    if (k == "switch") {
      x.expect_count(7);
      if (x.num(1) != f.switches.size()) x.fail(1, "switch indices must count up from 0");
      f.switches.push_back({x.str(2), Config{}});
      cfg = &f.switches.back().config;
      cfg->mmu.ports.resize(x.num(3, 1u << 16));
      cfg->mmu.total_cells = static_cast<uint32_t>(x.num(4, 1u << 26));  // a 4 GiB buffer of 64 B cells
      cfg->mmu.cell_bytes = static_cast<uint32_t>(x.num(5, UINT32_MAX));
      cfg->mmu.shared_headroom_cells = static_cast<uint32_t>(x.num(6, UINT32_MAX));
      continue;
    }
    if (k == "E" || k == "D" || k == "T") {
      OpRecord r;
      r.t_ps = x.num(1);
      r.sw = static_cast<uint32_t>(x.num(2, UINT32_MAX));
      if (r.sw >= f.switches.size()) x.fail(2, "no switch " + x.str(2) + " configured before this operation");
      const size_t ports = f.switches[r.sw].config.mmu.ports.size();
      auto port = [&](size_t i) {
        const uint64_t p = x.num(i, UINT16_MAX);
        if (p >= ports) x.fail(i, "port " + x.str(i) + " out of range (the switch has " + u(ports) + ")");
        return static_cast<uint16_t>(p);
      };
      auto small = [&](size_t i) { return static_cast<uint8_t>(x.num(i, 7)); };
      auto colon = [&](size_t i) {
        if (x.str(i) != ":") x.fail(i, "expected ':' between the operation and its result");
      };
      if (k == "E") {
        x.expect_count(32);
        r.kind = OpKind::enqueue;
        EnqueueOp& e = r.enq;
        e.in_port = port(3);
        e.pg = small(4);
        e.out_port = port(5);
        e.queue = small(6);
        e.cells = static_cast<uint32_t>(x.num(7, UINT32_MAX));
        if (e.cells == 0) x.fail(7, "a packet has at least one cell");
        e.bytes = static_cast<uint32_t>(x.num(8, UINT32_MAX));
        e.lossless = x.flag(9);
        e.ecn_frame = x.flag(10);
        e.ecn = static_cast<uint8_t>(x.num(11, 3));
        e.rand32 = static_cast<uint32_t>(x.num(12, UINT32_MAX));
        colon(13);
        EnqueueResult& y = r.enq_r;
        y.verdict = static_cast<mmu::Verdict>(x.word(14, kVerdicts));
        y.lossless = x.flag(15);
        y.in_headroom = x.flag(16);
        y.head_cell = x.head(17);
        read_charge(x, 18, y.charge);
        y.pg = read_pg(x, 23);
        y.pfc = static_cast<PfcAction>(x.word(27, kPfc));
        y.ecn = read_ecn(x, 28);
      } else if (k == "D") {
        x.expect_count(29);
        r.kind = OpKind::dequeue;
        DequeueOp& d = r.deq;
        d.port = port(3);
        d.queue = small(4);
        d.ecn_frame = x.flag(5);
        d.ecn = static_cast<uint8_t>(x.num(6, 3));
        d.rand32 = static_cast<uint32_t>(x.num(7, UINT32_MAX));
        d.discard = x.flag(8);
        colon(9);
        DequeueResult& y = r.deq_r;
        y.head_cell = x.head(10);
        y.cells = static_cast<uint32_t>(x.num(11, UINT32_MAX));
        y.bytes = static_cast<uint32_t>(x.num(12, UINT32_MAX));
        y.charge.in_port = static_cast<uint16_t>(x.num(13, UINT16_MAX));
        y.charge.pg = small(14);
        read_charge(x, 15, y.charge);
        y.pg = read_pg(x, 20);
        y.pfc = static_cast<PfcAction>(x.word(24, kPfc));
        y.ecn = read_ecn(x, 25);
      } else {
        x.expect_count(7);
        r.kind = OpKind::tick;
        r.tick_port = port(3);
        r.tick_pg = small(4);
        colon(5);
        r.tick_r = static_cast<PfcAction>(x.word(6, kPfc));
      }
      f.ops.push_back(r);
      f.op_lines.push_back(lineno);
      continue;
    }
    if (!cfg) x.fail(0, "'" + k + "' before any 'switch' line");
    mmu::Config& m = cfg->mmu;
    if (k == "pool") {
      x.expect_count(5);
      if (x.num(1) != m.pools.size()) x.fail(1, "pool indices must count up from 0");
      mmu::PoolConfig pc;
      pc.name = "pool" + x.str(1);
      pc.type = x.word(2, {"ingress", "egress"}) == 0 ? mmu::PoolType::ingress : mmu::PoolType::egress;
      pc.size_cells = static_cast<uint32_t>(x.num(3, UINT32_MAX));
      pc.mode = static_cast<mmu::ThresholdMode>(x.word(4, kModes));
      m.pools.push_back(pc);
    } else if (k == "pg" || k == "queue") {
      x.expect_count(k == "pg" ? 10 : 8);
      const uint64_t p = x.num(1, UINT16_MAX);
      if (p >= m.ports.size()) x.fail(1, "port " + x.str(1) + " out of range");
      const size_t i = x.num(2, 7);
      mmu::Threshold t;
      t.mode = static_cast<mmu::ThresholdMode>(x.word(5, kModes));
      t.dynamic_th = static_cast<int>(x.snum(6, -128, 127));
      t.static_cells = static_cast<uint32_t>(x.num(7, UINT32_MAX));
      if (k == "pg") {
        mmu::PgProfile& g = m.ports[p].pgs[i];
        g.pool = static_cast<uint32_t>(x.num(3, UINT32_MAX));
        g.reserved_cells = static_cast<uint32_t>(x.num(4, UINT32_MAX));
        g.threshold = t;
        g.headroom_cells = static_cast<uint32_t>(x.num(8, UINT32_MAX));
        g.lossless = x.flag(9);
      } else {
        mmu::QueueProfile& q = m.ports[p].queues[i];
        q.pool = static_cast<uint32_t>(x.num(3, UINT32_MAX));
        q.reserved_cells = static_cast<uint32_t>(x.num(4, UINT32_MAX));
        q.threshold = t;
      }
    } else if (k == "ecn") {
      x.expect_count(11);
      ecn::MarkerConfig& e = cfg->ecn[x.num(1, 7)];
      using M = ecn::MarkerConfig;
      e.mode = static_cast<M::Mode>(x.word(2, {"off", "threshold", "wred", "hysteresis"}));
      e.point = x.word(3, {"enqueue", "dequeue"}) == 0 ? M::Point::enqueue : M::Point::dequeue;
      e.unit = x.word(4, {"bytes", "cells"}) == 0 ? M::Unit::bytes : M::Unit::cells;
      e.k = x.num(5);
      e.kmin = x.num(6);
      e.kmax = x.num(7);
      e.pmax = x.real(8);
      e.k_high = x.num(9);
      e.k_low = x.num(10);
    } else if (k == "pfc") {
      x.expect_count(9);
      cfg->pfc_enabled = x.flag(1);
      cfg->pfc_pgs = static_cast<uint8_t>(x.num(2, 255));
      cfg->pfc.dynamic_xoff = x.flag(3);
      cfg->pfc.xoff_cells = x.num(4);
      cfg->pfc.xon_rule = static_cast<pfc::GeneratorConfig::XonRule>(x.word(5, {"offset", "absolute", "ratio"}));
      cfg->pfc.xon_offset_cells = x.num(6);
      cfg->pfc.xon_cells = x.num(7);
      cfg->pfc.xon_ratio_q16 = static_cast<uint32_t>(x.num(8, pfc::kXonRatioOne));
    } else {
      x.fail(0, "unknown record '" + k + "'");
    }
  }
  if (!header) throw std::runtime_error(name + ": empty: not a rocesim queue-manager operation record");
  return f;
}

OpsFile read_ops_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return parse_ops(s.str(), path);
}

void RecordingQueueManager::put(const OpRecord& r) {
  const std::string t = op_text(r);
  std::fwrite(t.data(), 1, t.size(), m_out);
  ++m_count;
}

OpRecord RecordingQueueManager::begin(OpKind kind) const {
  OpRecord r;
  r.kind = kind;
  r.t_ps = m_now();
  r.sw = m_sw;
  return r;
}

EnqueueResult RecordingQueueManager::enqueue(const EnqueueOp& op) {
  OpRecord r = begin(OpKind::enqueue);
  r.enq = op;
  r.enq_r = m_inner.enqueue(op);
  put(r);
  return r.enq_r;
}

DequeueResult RecordingQueueManager::dequeue(const DequeueOp& op) {
  OpRecord r = begin(OpKind::dequeue);
  r.deq = op;
  r.deq_r = m_inner.dequeue(op);
  put(r);
  return r.deq_r;
}

PfcAction RecordingQueueManager::pfc_tick(uint16_t port, uint8_t pg) {
  OpRecord r = begin(OpKind::tick);
  r.tick_port = port;
  r.tick_pg = pg;
  r.tick_r = m_inner.pfc_tick(port, pg);
  put(r);
  return r.tick_r;
}

}  // namespace rocesim::qm

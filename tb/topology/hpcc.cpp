// HPCC topology files (hpcc.h): FILE:LINE:COL errors, exact rates and delays.
#include "topology/hpcc.h"

#include <stdexcept>
#include <vector>

#include "core/config.h"
#include "traffic/text_input.h"

namespace rocesim::topology {

namespace {

using traffic::detail::Field;
using traffic::detail::Line;
using traffic::detail::where;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "DIGITS[.DIGITS]" followed by a unit from `units`; value = number x mult of
// the unit, which must come out whole. "" on success, else the reason.
struct Unit {
  const char* name;
  uint64_t mult;
};
std::string parse_scaled(std::string_view t, const Unit* units, size_t nunits, const char* what, const char* example,
                         uint64_t& out) {
  size_t i = 0;
  unsigned __int128 mant = 0;
  uint64_t pow10 = 1;  // 10^(digits after the point)
  bool any = false;
  // The mantissa times a unit (<= 1e12) stays within 128 bits.
  constexpr unsigned __int128 kCap = static_cast<unsigned __int128>(UINT64_MAX) * 1000000ull;
  for (; i < t.size() && is_digit(t[i]); ++i, any = true) {
    mant = mant * 10 + static_cast<unsigned>(t[i] - '0');
    if (mant > kCap) return std::string("too large");
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    for (; i < t.size() && is_digit(t[i]); ++i, any = true) {
      if (pow10 > UINT64_MAX / 10 || mant > kCap / 10) return "too many decimals in '" + std::string(t) + "'";
      mant = mant * 10 + static_cast<unsigned>(t[i] - '0');
      pow10 *= 10;
    }
  }
  if (!any) {
    if (!t.empty() && t[0] == '-') return std::string("must not be negative");
    return "expected a " + std::string(what) + " like " + example + ", got '" + std::string(t) + "'";
  }
  const std::string_view unit = t.substr(i);
  std::string names;
  for (size_t u = 0; u < nunits; ++u) {
    if (unit == units[u].name) {
      const unsigned __int128 v = mant * units[u].mult;
      if (v % pow10 != 0)
        return "'" + std::string(t) + "' is not a whole number of " + units[0].name;  // units[0]: the base unit
      if (v / pow10 > UINT64_MAX) return std::string("too large");
      out = static_cast<uint64_t>(v / pow10);
      return {};
    }
    names += (u ? ", " : "") + std::string(units[u].name);
  }
  if (unit.empty()) return "missing unit in '" + std::string(t) + "' (one of " + names + ")";
  return "unknown unit '" + std::string(unit) + "' (one of " + names + ")";
}

struct LinkLine {
  uint32_t src = 0, dst = 0;
  uint32_t line = 0;
};

}  // namespace

std::string parse_hpcc_rate(std::string_view t, uint64_t& bps) {
  // ns-3 DataRate's decimal (SI) units; the byte forms count 8 bits.
  static const Unit kUnits[] = {{"bps", 1},
                                {"b/s", 1},
                                {"kbps", 1000},
                                {"Kbps", 1000},
                                {"kb/s", 1000},
                                {"Kb/s", 1000},
                                {"Mbps", 1000000},
                                {"Mb/s", 1000000},
                                {"Gbps", 1000000000},
                                {"Gb/s", 1000000000},
                                {"Tbps", 1000000000000ull},
                                {"Tb/s", 1000000000000ull},
                                {"Bps", 8},
                                {"B/s", 8},
                                {"KBps", 8000},
                                {"kBps", 8000},
                                {"KB/s", 8000},
                                {"kB/s", 8000},
                                {"MBps", 8000000},
                                {"MB/s", 8000000},
                                {"GBps", 8000000000ull},
                                {"GB/s", 8000000000ull}};
  return parse_scaled(t, kUnits, sizeof kUnits / sizeof kUnits[0], "rate", "100Gbps", bps);
}

std::string parse_hpcc_delay(std::string_view t, uint64_t& ps) {
  static const Unit kUnits[] = {
      {"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"ms", 1000000000}, {"s", 1000000000000ull}};
  return parse_scaled(t, kUnits, sizeof kUnits / sizeof kUnits[0], "delay", "0.001ms", ps);
}

Topology parse_hpcc_topology(std::string_view text, const std::string& name, const std::string& key_path,
                             RouteStyle style) {
  namespace d = traffic::detail;
  auto fail = [&](uint32_t line, uint32_t col, const std::string& why) -> void {
    throw core::ConfigError(where(name, line, col), key_path, why);
  };
  const std::vector<Line> lines = d::split_lines(text);
  if (lines.empty()) fail(1, 1, "empty file: expected the node, switch and link counts on the first line");
  const Line& head = lines[0];
  static const char* const kHead[] = {"node count", "switch count", "link count"};
  if (head.fields.size() < 3)
    fail(head.number, head.end_col,
         std::string("missing the ") + kHead[head.fields.size()] + " (line 1: nodes switches links)");
  if (head.fields.size() > 3)
    fail(head.number, head.fields[3].col,
         "extra field '" + std::string(head.fields[3].text) + "' (line 1: nodes switches links)");
  uint64_t cnt[3];
  for (int i = 0; i < 3; ++i)
    if (std::string e = d::parse_u64(head.fields[i].text, cnt[i]); !e.empty())
      fail(head.number, head.fields[i].col, std::string(kHead[i]) + ": " + e);
  if (cnt[0] == 0) fail(head.number, head.fields[0].col, "node count: must be at least 1");
  if (cnt[0] > kMaxHpccNodes)
    fail(head.number, head.fields[0].col,
         "node count " + std::to_string(cnt[0]) + ": must be <= " + std::to_string(kMaxHpccNodes) +
             " (HPCC's host address 11.X.Y.1 holds a 16-bit node id)");
  if (cnt[1] > cnt[0])
    fail(head.number, head.fields[1].col,
         "switch count " + std::to_string(cnt[1]) + " exceeds the node count " + std::to_string(cnt[0]));
  const uint32_t nn = static_cast<uint32_t>(cnt[0]), ns = static_cast<uint32_t>(cnt[1]);
  const uint64_t nl = cnt[2];

  // Switch ids: whole lines after line 1 until S ids are read.
  std::vector<uint8_t> is_switch(nn, 0);
  std::vector<Field> switch_at(nn, Field{{}, 0});
  std::vector<uint32_t> switch_line(nn, 0);
  size_t li = 1;
  uint32_t got = 0;
  while (got < ns) {
    if (li >= lines.size())
      fail(head.number, head.fields[1].col,
           "declares " + std::to_string(ns) + " switches but the file lists " + std::to_string(got));
    const Line& l = lines[li++];
    for (const Field& f : l.fields) {
      if (got == ns)
        fail(l.number, f.col,
             "extra field '" + std::string(f.text) + "' after the " + std::to_string(ns) +
                 " switch ids (each link takes a line of its own)");
      uint64_t id = 0;
      if (std::string e = d::parse_u64(f.text, id); !e.empty()) fail(l.number, f.col, "switch id: " + e);
      if (id >= nn)
        fail(l.number, f.col, "switch id " + std::to_string(id) + " out of range (" + std::to_string(nn) + " nodes)");
      if (is_switch[id])
        fail(l.number, f.col,
             "switch " + std::to_string(id) + " listed twice (also at column " +
                 std::to_string(switch_at[id].col) + " of line " + std::to_string(switch_line[id]) + ")");
      is_switch[id] = 1;
      switch_at[id] = f;
      switch_line[id] = l.number;
      ++got;
    }
  }

  // Nodes: hosts first in id order (topology.h), then switches in id order.
  Topology t;
  t.kind = "hpcc";
  std::vector<uint32_t> node_of(nn);  // file id -> node index
  const uint32_t nhosts = nn - ns;
  {
    uint32_t h = 0, s = nhosts;
    for (uint32_t id = 0; id < nn; ++id) node_of[id] = is_switch[id] ? s++ : h++;
  }
  t.nodes.resize(nn);
  t.file_ids.resize(nn);
  for (uint32_t id = 0; id < nn; ++id) {
    Node& n = t.nodes[node_of[id]];
    t.file_ids[node_of[id]] = id;
    if (is_switch[id]) {
      n.kind = Node::sw;
      n.name = "sw" + std::to_string(id);
      n.role = "sw";
      n.index = id;
    } else {
      n.kind = Node::host;
      n.index = node_of[id];
      n.name = "h" + std::to_string(n.index);
      n.role = "host";
      n.ip = host_ip_of(n.index);
    }
  }

  static const char* const kLink[] = {"src", "dst", "rate", "delay", "error_rate"};
  constexpr const char* kLinkFormat = " (link line: src dst rate delay error_rate)";
  std::vector<uint32_t> host_link_line(nn, 0);  // line of a host's link, 0 = none yet
  for (; li < lines.size(); ++li) {
    const Line& l = lines[li];
    if (t.links.size() == nl)
      fail(l.number, l.fields[0].col,
           "more link lines than the " + std::to_string(nl) + " declared on line " + std::to_string(head.number));
    if (l.fields.size() < 5)
      fail(l.number, l.end_col, std::string("missing field '") + kLink[l.fields.size()] + "'" + kLinkFormat);
    if (l.fields.size() > 5)
      fail(l.number, l.fields[5].col, "extra field '" + std::string(l.fields[5].text) + "'" + kLinkFormat);
    auto field_fail = [&](size_t i, const std::string& why) {
      fail(l.number, l.fields[i].col, std::string(kLink[i]) + ": " + why);
    };
    uint64_t end[2];
    for (size_t i = 0; i < 2; ++i) {
      if (std::string e = d::parse_u64(l.fields[i].text, end[i]); !e.empty()) field_fail(i, e);
      if (end[i] >= nn)
        field_fail(i, "node " + std::to_string(end[i]) + " out of range (" + std::to_string(nn) + " nodes)");
    }
    if (end[0] == end[1]) field_fail(1, "same node as src (" + std::to_string(end[0]) + ")");
    LinkSpec ls;
    if (std::string e = parse_hpcc_rate(l.fields[2].text, ls.rate_bps); !e.empty()) field_fail(2, e);
    if (ls.rate_bps < kMinHpccRate || ls.rate_bps > kMaxHpccRate)
      field_fail(2, "'" + std::string(l.fields[2].text) + "' is outside 1Mbps .. 1600Gbps (rocesim's link rates)");
    if (std::string e = parse_hpcc_delay(l.fields[3].text, ls.delay_ps); !e.empty()) field_fail(3, e);
    if (ls.delay_ps > kMaxHpccDelay) field_fail(3, "'" + std::string(l.fields[3].text) + "' is more than 1s");
    double err = 0;
    if (std::string e = d::parse_nonneg_real(l.fields[4].text, err); !e.empty()) field_fail(4, e);
    if (err > 1.0) field_fail(4, "must be in 0..1 (a probability), got " + std::string(l.fields[4].text));
    if (err > 0) ls.loss = err;
    PortRef* ends[2] = {&ls.a, &ls.b};
    for (size_t i = 0; i < 2; ++i) {
      const uint32_t id = static_cast<uint32_t>(end[i]);
      Node& n = t.nodes[node_of[id]];
      if (n.kind == Node::host) {
        if (host_link_line[id])
          field_fail(i, "host " + std::to_string(id) + " (" + n.name + ") already has a link on line " +
                            std::to_string(host_link_line[id]) +
                            ": rocesim's hosts have one port (list it among the switches if it forwards)");
        host_link_line[id] = l.number;
      }
      if (n.ports == kMaxPortsPerNode)
        field_fail(i, "node " + std::to_string(id) + " has more than " + std::to_string(kMaxPortsPerNode) + " links");
      *ends[i] = PortRef{node_of[id], n.ports++};
    }
    t.links.push_back(ls);
  }
  if (t.links.size() != nl)
    fail(head.number, head.fields[2].col,
         "declares " + std::to_string(nl) + " links but the file has " + std::to_string(t.links.size()));
  for (uint32_t id = 0; id < nn; ++id) {
    if (t.nodes[node_of[id]].ports != 0) continue;
    if (is_switch[id]) fail(switch_line[id], switch_at[id].col, "switch " + std::to_string(id) + " has no link");
    fail(head.number, head.fields[0].col, "host " + std::to_string(id) + " has no link");
  }
  try {
    finalize(t, style);
  } catch (const std::invalid_argument& e) {
    // Limits of the model (hosts, ports, route table size): the file as a whole.
    fail(head.number, 1, e.what());
  }
  return t;
}

Topology read_hpcc_topology(const std::string& path, const std::string& key_path, RouteStyle style) {
  return parse_hpcc_topology(traffic::detail::read_whole_file(path, key_path), path, key_path, style);
}

}  // namespace rocesim::topology

#include "sim/outputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/time.h"
#include "sim/analytics_run.h"
#include "sim/digest.h"
#include "sim/paths.h"
#include "topology/hpcc.h"

namespace rocesim::sim {

bool write_file_atomic(const std::string& path, const std::string& content) {
  std::string why;
  return write_file_atomic(path, content, why);
}

bool write_file_atomic(const std::string& path, const std::string& content, std::string& why) {
  const std::string tmp = path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  errno = 0;
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() && std::fflush(f) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (ok) return true;
  std::remove(tmp.c_str());
  why = err ? std::strerror(err) : "write error";
  errno = err;
  return false;
}

namespace {

bool is_dir(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string real_path(const std::string& p) {
  char* r = realpath(p.c_str(), nullptr);
  if (!r) return "";
  std::string s = r;
  std::free(r);
  return s;
}

// True when the directory holds anything besides . and ..
bool has_entries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  bool any = false;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      any = true;
      break;
    }
  }
  closedir(d);
  return any;
}

// Why --force must not empty dir (real path), or "".
std::string dangerous_target(const std::string& real) {
  if (real == "/") return "it is the root directory";
  const char* home = std::getenv("HOME");
  if (home && *home && real == real_path(home)) return "it is the home directory";
  const std::string cwd = real_path(".");
  if (!cwd.empty() && (cwd == real || (cwd.rfind(real + "/", 0) == 0)))
    return "it is the working directory or one of its parents";
  if (is_dir(real + "/.git") || access((real + "/.git").c_str(), F_OK) == 0)
    return "it holds .git (a source tree)";
  return "";
}

// Deletes everything inside the directory open as fd, depth first, by
// descriptor: a symbolic link is unlinked, never followed; a subdirectory on
// another file system (a mount point) is refused rather than entered.
bool remove_contents(int fd, dev_t dev, const std::string& shown, std::string& why) {
  DIR* d = fdopendir(fd);
  if (!d) {
    why = shown + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  bool ok = true;
  while (dirent* e = readdir(d)) {
    const char* n = e->d_name;
    if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) continue;
    struct stat st{};
    if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      why = shown + "/" + n + ": " + std::strerror(errno);
      ok = false;
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != dev) {
        why = shown + "/" + n + ": a mount point; not removed";
        ok = false;
        break;
      }
      const int sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 || !remove_contents(sub, dev, shown + "/" + n, why)) {
        if (sub < 0) why = shown + "/" + n + ": " + std::strerror(errno);
        ok = false;
        break;
      }
      if (unlinkat(fd, n, AT_REMOVEDIR) != 0) {
        why = shown + "/" + n + ": " + std::strerror(errno);
        ok = false;
        break;
      }
    } else if (unlinkat(fd, n, 0) != 0) {
      why = shown + "/" + n + ": " + std::strerror(errno);
      ok = false;
      break;
    }
  }
  closedir(d);  // closes fd
  return ok;
}

bool make_dirs(const std::string& path, std::string& why) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST) {
      why = "cannot create directory " + cur + ": " + std::strerror(errno);
      return false;
    }
    if (!is_dir(cur)) {
      why = cur + " is not a directory";
      return false;
    }
  }
  return true;
}

}  // namespace

bool check_out_dir(const std::string& dir, bool force, std::string& why) {
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;  // created by prepare_out_dir (the parent is checked there)
    why = std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = "exists and is not a directory";
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    why = std::string("not writable: ") + std::strerror(errno);
    return false;
  }
  if (!has_entries(dir)) return true;
  if (!force) {
    why = "exists and is not empty (a run writes into a fresh directory; --force empties it first)";
    return false;
  }
  const std::string real = real_path(dir);
  const std::string danger = real.empty() ? std::string("cannot resolve its path") : dangerous_target(real);
  if (!danger.empty()) {
    why = "--force refuses to empty it: " + danger;
    return false;
  }
  return true;
}

bool prepare_out_dir(const std::string& dir, bool force, std::string& why) {
  if (!check_out_dir(dir, force, why)) return false;
  if (is_dir(dir) && has_entries(dir)) {
    // check_out_dir allowed it: force, and not a dangerous target.
    struct stat st{};
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
      why = std::string("cannot open: ") + std::strerror(errno);
      if (fd >= 0) close(fd);
      return false;
    }
    if (!remove_contents(fd, st.st_dev, dir, why)) {
      why = "--force could not empty it: " + why;
      return false;
    }
  } else if (!make_dirs(dir, why)) {
    return false;
  }
  // Prove it writable (permissions, a read-only mount, a full disk): write one
  // byte to a probe file and remove it.
  const std::string probe = dir + "/.rocesim-probe";
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  bool ok = f && std::fputc('\n', f) != EOF && std::fflush(f) == 0;
  const int err = errno;
  if (f) ok = std::fclose(f) == 0 && ok;
  std::remove(probe.c_str());
  if (!ok) {
    why = std::string("not writable: ") + std::strerror(err);
    return false;
  }
  return true;
}

void append_row(std::string& out, const pfc::Event& e) {
  char line[160];
  std::snprintf(line, sizeof line, "%" PRIu64 ".%03" PRIu64 ",%s,%u,%u,%s\n", e.t_ps / 1000, e.t_ps % 1000, e.node,
                e.port, unsigned(e.prio), e.what);
  out += line;
}

void append_row(std::string& out, const host::CcSample& e) {
  char line[200];
  std::snprintf(line, sizeof line, "%" PRIu64 ".%03" PRIu64 ",%u,%s,%s,%" PRIu64 ",%" PRIu64 ",%.9f\n",
                e.s.time_ps / 1000, e.s.time_ps % 1000, e.flow, cc::rp_event_name(e.s.event),
                cc::rp_trigger_name(e.s.trigger), e.s.rate_bps, e.s.target_bps, e.s.alpha);
  out += line;
}

EventCsvStream::~EventCsvStream() {
  // Not closed (an early exit): the .partial stays behind as an incomplete file.
  if (m_f) std::fclose(m_f);
}

bool EventCsvStream::open(const std::string& path, const char* header, std::string& why) {
  m_path = path;
  m_f = std::fopen((path + ".partial").c_str(), "w");
  if (!m_f) {
    why = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  m_buf = header;
  write_buffer();
  return true;
}

void EventCsvStream::write_buffer() {
  errno = 0;
  if (std::fwrite(m_buf.data(), 1, m_buf.size(), m_f) != m_buf.size() && !m_errno) m_errno = errno ? errno : EIO;
}

void EventCsvStream::finish(std::vector<OutputFailure>& failed) {
  if (!m_f) return;
  if (m_late)
    std::fprintf(stderr, "rocesim: warning: %s: %" PRIu64 " rows arrived behind the written time and were written late\n",
                 m_path.c_str(), m_late);
  const std::string tmp = m_path + ".partial";
  errno = 0;
  bool ok = std::ferror(m_f) == 0 && !m_errno;
  int err = m_errno;
  if (std::fclose(m_f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  m_f = nullptr;
  if (ok && std::rename(tmp.c_str(), m_path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (ok) return;
  std::remove(tmp.c_str());
  failed.push_back({m_path, err ? std::strerror(err) : "write error"});
}

std::string ps_to_ns_text(uint64_t ps) {
  char b[40];
  std::snprintf(b, sizeof b, "%" PRIu64 ".%03" PRIu64, ps / 1000, ps % 1000);
  return b;
}

void append_uint(std::string& o, uint64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  o.append(b, r.ptr);
}

void append_ns(std::string& o, uint64_t ps) {
  append_uint(o, ps / 1000);
  const unsigned f = static_cast<unsigned>(ps % 1000);
  const char d[4] = {'.', static_cast<char>('0' + f / 100), static_cast<char>('0' + f / 10 % 10),
                     static_cast<char>('0' + f % 10)};
  o.append(d, 4);
}

namespace {

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// {"egress_limit": 3} with the non-zero MMU drop reasons.
std::string drops_json(const mmu::DropCounters& d) {
  std::string o = "{";
  for (size_t v = 1; v < mmu::kVerdicts; ++v) {
    if (!d.packets[v]) continue;
    o += (o.size() > 1 ? ", \"" : "\"") + std::string(mmu::verdict_name(static_cast<mmu::Verdict>(v))) +
         "\": " + std::to_string(d.packets[v]);
  }
  return o + "}";
}

void port_json(std::ostringstream& o, bool& first, const std::string& node, const link::Mac& mac, uint64_t sim_ps) {
  const link::MacStats& st = mac.stats();
  // A frame still on the wire at the end has committed wire time past the end: cap at 1.
  double util = sim_ps ? static_cast<double>(st.tx_busy_ps) / static_cast<double>(sim_ps) : 0.0;
  if (util > 1.0) util = 1.0;
  o << (first ? "\n" : ",\n") << "    {\"node\": " << json_str(node) << ", \"port\": " << mac.port()
    << ", \"rate_bps\": " << mac.rate_bps() << ", \"tx_frames\": " << st.tx_frames << ", \"tx_bytes\": " << st.tx_bytes
    << ", \"rx_frames\": " << st.rx_frames << ", \"rx_bytes\": " << st.rx_bytes << ", \"rx_dropped\": " << st.rx_dropped
    << ", \"tx_busy_fraction\": " << num(util) << "}";
  first = false;
}

}  // namespace

std::string json_quote(const std::string& s) { return json_str(s); }
std::string json_num(double v) { return num(v); }

// summary.json `analytics` (switch.analytics on): every counter of each
// switch's analyzer (analytics::Stats, docs/analytics.md) and their totals.
std::string analytics_json(const FabricAnalytics& an) {
  using St = analytics::Stats;
  static const std::pair<const char*, uint64_t St::*> kCounters[] = {
      {"frames", &St::frames},
      {"not_selected", &St::not_selected},
      {"mirrored", &St::mirrored},
      {"capacity_dropped", &St::capacity_dropped},
      {"bad_frames", &St::bad_frames},
      {"non_ipv4", &St::non_ipv4},
      {"non_roce", &St::non_roce},
      {"unsupported_opcode", &St::unsupported_opcode},
      {"cm_packets", &St::cm_packets},
      {"cm_other", &St::cm_other},
      {"pending_full", &St::pending_full},
      {"pending_expired", &St::pending_expired},
      {"rep_without_req", &St::rep_without_req},
      {"rtu_without_rep", &St::rtu_without_rep},
      {"flows_created", &St::flows_created},
      {"setups_not_tracked", &St::setups_not_tracked},
      {"setups_duplicate", &St::setups_duplicate},
      {"flows_replaced", &St::flows_replaced},
      {"tracked_packets", &St::tracked_packets},
      {"untracked_packets", &St::untracked_packets},
      {"aged_idle", &St::aged_idle},
      {"aged_active", &St::aged_active},
      {"records", &St::records},
      {"records_exported", &St::records_exported},
      {"records_dropped", &St::records_dropped},
      {"peer_link_frames", &St::peer_link_frames},
      {"sync_rep_sent", &St::sync_rep_sent},
      {"sync_setup_sent", &St::sync_setup_sent},
      {"sync_ack_sent", &St::sync_ack_sent},
      {"sync_received", &St::sync_received},
      {"sync_bad", &St::sync_bad},
      {"sync_rep_unmatched", &St::sync_rep_unmatched},
      {"sync_flows_created", &St::sync_flows_created},
      {"sync_acks_used", &St::sync_acks_used},
      {"sync_untracked", &St::sync_untracked},
      {"sync_not_sent", &St::sync_not_sent},
  };
  // The synchronization frames each switch sent and received on its peer link (M-LAG).
  using Sy = sw::Switch::SyncStats;
  static const std::pair<const char*, uint64_t Sy::*> kSync[] = {
      {"sync_frames_sent", &Sy::tx_frames},
      {"sync_bytes_sent", &Sy::tx_bytes},
      {"sync_frames_received", &Sy::rx_frames},
      {"sync_bytes_received", &Sy::rx_bytes},
  };
  Sy sync_total;
  std::ostringstream o;
  St total;
  o << "  \"analytics\": {\"mode\": \""
    << (an.size() && an.analyzer(0).config().mode == analytics::Mode::performance ? "performance" : "loss")
    << "\", \"started\": " << (an.started() ? "true" : "false") << ", \"switches\": [";
  for (size_t i = 0; i < an.size(); ++i) {
    const St& st = an.analyzer(i).stats();
    o << (i ? ",\n" : "\n") << "    {\"name\": " << json_quote(an.name(i)) << ", \"domain\": " << an.node(i);
    for (const auto& [name, m] : kCounters) {
      o << ", \"" << name << "\": " << st.*m;
      total.*m += st.*m;
    }
    const Sy& sy = an.switch_at(i).sync_stats();
    for (const auto& [name, m] : kSync) {
      o << ", \"" << name << "\": " << sy.*m;
      sync_total.*m += sy.*m;
    }
    o << "}";
  }
  o << (an.size() ? "\n  ], " : "], ") << "\"total\": {";
  bool first = true;
  for (const auto& [name, m] : kCounters) {
    o << (first ? "" : ", ") << "\"" << name << "\": " << total.*m;
    first = false;
  }
  for (const auto& [name, m] : kSync) o << ", \"" << name << "\": " << sync_total.*m;
  o << "}},\n";
  return o.str();
}

std::string summary_json(Fabric& f, const RunResult& r, const RunStatus& st) {
  const Scenario& s = f.scenario();
  const link::Ledger& L = f.ledger();
  std::ostringstream o;
  o << "{\n";
  o << "  \"schema_version\": " << kSummarySchemaVersion << ",\n";
  o << "  \"tool\": \"rocesim " << ROCESIM_VERSION << "\",\n";
  o << "  \"scenario\": " << json_str(s.name) << ",\n";
  o << "  \"config_file\": " << json_str(s.file) << ",\n";
  o << "  \"seed\": " << s.seed << ",\n";
  // How the run ended: false with the reason when it was stopped early or an output is missing.
  o << "  \"complete\": " << (st.complete() ? "true" : "false") << ",\n";
  o << "  \"reason\": "
    << (st.complete() ? std::string("null")
                      : json_str(!st.reason.empty() ? st.reason : std::string("outputs missing")))
    << ",\n";
  o << "  \"outputs_missing\": [";
  for (size_t i = 0; i < st.missing.size(); ++i)
    o << (i ? ", " : "") << "{\"file\": " << json_str(st.missing[i].file) << ", \"error\": "
      << json_str(st.missing[i].error) << "}";
  o << "],\n";
  o << "  \"topology\": {\"kind\": " << json_str(s.topology.kind) << ", \"hosts\": " << f.hosts().size()
    << ", \"switches\": " << f.switches().size() << ", \"links\": " << f.links().size() << "},\n";
  o << "  \"sim_time_ns\": " << ps_to_ns_text(r.sim_time_ps) << ",\n";
  o << "  \"wall_time_s\": " << num(r.wall_time_s) << ",\n";
  o << "  \"events\": " << r.events << ",\n";
  o << "  \"link_hops\": " << r.link_hops << ",\n";
  if (s.sw.queue_impl == "lockstep") {
    uint64_t ops = 0, bad = 0;
    std::string first = "null";
    for (const auto& sw : f.switches()) {
      const qm::LockstepQueueManager* l = sw->lockstep();
      if (!l) continue;
      ops += l->operations();
      if (l->mismatches() && !bad)
        first = json_str(std::string(sw->basename()) + " at " + ps_to_ns_text(l->first_mismatch().t_ps) + " ns: " +
                         l->first_mismatch().what + ": " + l->first_mismatch().op);
      bad += l->mismatches();
    }
    // Cycle agreement over every switch's operations together (nearest rank).
    std::map<int64_t, uint64_t> diffs;
    for (const auto& sw : f.switches())
      if (const qm::LockstepQueueManager* l = sw->lockstep())
        for (const auto& [v, k] : l->cycle_histogram()) diffs[v] += k;
    const qm::CycleDiffs cd = qm::cycle_diffs(diffs);
    o << "  \"lockstep\": {\"operations\": " << ops << ", \"mismatches\": " << bad << ", \"first_mismatch\": " << first
      << ", \"rtl_cycles\": " << f.rtl_cycles() << ", \"cycle_diff_p50\": " << cd.p50 << ", \"cycle_diff_p99\": " << cd.p99
      << ", \"cycle_diff_min\": " << cd.min << ", \"cycle_diff_max\": " << cd.max << "},\n";
  } else if (s.sw.queue_impl == "rtl") {
    uint64_t ops = 0;
    for (const auto& sw : f.switches())
      if (const qm::CountingQueueManager* c = sw->rtl_counts()) ops += c->operations();
    o << "  \"rtl\": {\"operations\": " << ops << ", \"cycles\": " << f.rtl_cycles() << "},\n";
  }
  o << "  \"link_hops_per_wall_s\": " << num(r.wall_time_s > 0 ? static_cast<double>(r.link_hops) / r.wall_time_s : 0)
    << ",\n";
  o << "  \"packets\": {\"sent\": " << r.sent << ", \"delivered\": " << r.delivered << ", \"dropped\": " << r.dropped
    << ", \"in_flight_at_end\": " << r.in_flight << "},\n";
  o << "  \"conservation_ok\": " << (r.conserved ? "true" : "false") << ",\n";
  o << "  \"drops_by_reason\": {";
  bool first = true;
  for (size_t i = 1; i < static_cast<size_t>(packet::DropReason::count_); ++i) {
    const auto why = static_cast<packet::DropReason>(i);
    o << (first ? "" : ", ") << json_str(packet::drop_reason_name(why)) << ": " << L.dropped(why);
    first = false;
  }
  o << "},\n";
  uint64_t completed = 0, bytes = 0, psn_errors = 0;
  for (const auto& fr : f.flows()) {
    completed += fr.done();
    bytes += fr.bytes_received;
    psn_errors += fr.psn_errors;
  }
  o << "  \"flows\": {\"total\": " << f.flows().size() << ", \"completed\": " << completed
    << ", \"payload_bytes_delivered\": " << bytes << ", \"psn_errors\": " << psn_errors << "},\n";
  // FCT slowdown percentiles, overall and per flow-size bucket (nearest rank).
  {
    struct Bucket {
      uint64_t max_bytes;
      std::vector<double> v;
    };
    std::vector<Bucket> buckets{{10000, {}}, {100000, {}}, {1000000, {}}, {10000000, {}}, {UINT64_MAX, {}}};
    std::vector<double> all;
    for (const auto& fr : f.flows()) {
      if (!fr.done()) continue;
      const uint64_t ideal = f.ideal_fct_ps(fr);
      double slow = ideal ? static_cast<double>(fr.finish_ps - fr.start_ps) / static_cast<double>(ideal) : 1.0;
      if (slow < 1.0) slow = 1.0;
      all.push_back(slow);
      for (Bucket& b : buckets)
        if (fr.total_bytes() < b.max_bytes) {
          b.v.push_back(slow);
          break;
        }
    }
    auto pct = [](std::vector<double>& v, double p) {
      if (v.empty()) return std::string("null");
      std::sort(v.begin(), v.end());
      const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
      return num(v[rank ? rank - 1 : 0]);
    };
    o << "  \"fct\": {\"flows\": " << f.flows().size() << ", \"completed\": " << all.size()
      << ", \"slowdown_p50\": " << pct(all, 0.50) << ", \"slowdown_p95\": " << pct(all, 0.95)
      << ", \"slowdown_p99\": " << pct(all, 0.99) << ",\n    \"by_size\": [";
    for (size_t i = 0; i < buckets.size(); ++i) {
      Bucket& b = buckets[i];
      o << (i ? ", " : "") << "{\"max_bytes\": "
        << (b.max_bytes == UINT64_MAX ? std::string("null") : std::to_string(b.max_bytes))
        << ", \"flows\": " << b.v.size() << ", \"slowdown_p50\": " << pct(b.v, 0.50)
        << ", \"slowdown_p95\": " << pct(b.v, 0.95) << ", \"slowdown_p99\": " << pct(b.v, 0.99) << "}";
    }
    o << "]},\n";
    uint64_t rtx = 0, cs = 0, cr = 0, to = 0, nk = 0;
    for (const auto& fr : f.flows()) {
      rtx += fr.retransmitted;
      cs += fr.cnps_sent;
      cr += fr.cnps_received;
      to += fr.timeouts;
      nk += fr.naks_received;
    }
    uint64_t rx_peak = 0, rx_drops = 0;
    for (const auto& h : f.hosts()) {
      rx_peak = std::max(rx_peak, h->rx_buffer_peak());
      rx_drops += h->rx_buffer_drops();
    }
    o << "  \"nic\": {\"transport\": \"" << (s.hosts.rc ? "rc" : "open_loop") << "\", \"rx_buffer_peak_bytes\": " << rx_peak
      << ", \"rx_buffer_drops\": " << rx_drops << ", \"retransmitted_packets\": " << rtx
      << ", \"timeouts\": " << to << ", \"naks_received\": " << nk << ", \"cnps_sent\": " << cs
      << ", \"cnps_received\": " << cr << "},\n";
  }
  o << "  \"ports\": [";
  first = true;
  for (const auto& h : f.hosts())
    for (uint32_t p = 0; p < h->num_ports(); ++p) port_json(o, first, h->basename(), h->port_mac(p), r.sim_time_ps);
  for (const auto& sw : f.switches())
    for (const auto& p : sw->ports) port_json(o, first, sw->basename(), *p, r.sim_time_ps);
  o << "\n  ],\n";
  o << "  \"links\": [";
  first = true;
  for (const auto& l : f.links()) {
    o << (first ? "\n" : ",\n") << "    {\"name\": " << json_str(l->basename())
      << ", \"delay_ns\": " << ps_to_ns_text(l->config().delay_ps()) << ", \"frames_ab\": " << l->frames(0)
      << ", \"frames_ba\": " << l->frames(1) << ", \"lost\": " << (l->lost(0) + l->lost(1)) << "}";
    first = false;
  }
  o << "\n  ],\n";
  // Buffer: the largest peak of any switch.
  uint64_t peak_cells = 0, peak_bytes = 0;
  for (const auto& sw : f.switches()) {
    const uint64_t c = sw->mmu().total_peak();
    if (c > peak_cells) {
      peak_cells = c;
      peak_bytes = c * sw->config().buffer.cell_bytes;
    }
  }
  // PFC: every MAC (hosts and switch ports) and every switch's generator.
  uint64_t ptx = 0, prx = 0, xoff = 0, xon = 0, refresh = 0, paused_ps = 0, longest_ps = 0;
  std::ostringstream ports;
  bool pfirst = true;
  auto mac_pfc = [&](const std::string& node, link::Mac& mac, const sw::PfcPortStats* gen) {
    const link::MacStats& st = mac.stats();
    ptx += st.pause_tx;
    prx += st.pause_rx;
    std::string prios;
    for (int p = 0; p < 8; ++p) {
      const pfc::PauseReceiver::PrioStats ps = mac.pause_stats(p);
      paused_ps += ps.paused_ps;
      longest_ps = std::max(longest_ps, ps.longest_ps);
      if (!ps.frames) continue;
      prios += (prios.empty() ? "" : ", ") + std::string("{\"priority\": ") + std::to_string(p) +
               ", \"pause_frames_rx\": " + std::to_string(ps.frames) + ", \"pauses\": " + std::to_string(ps.pauses) +
               ", \"paused_ns\": " + ps_to_ns_text(ps.paused_ps) + ", \"longest_ns\": " + ps_to_ns_text(ps.longest_ps) + "}";
    }
    if (!st.pause_tx && !st.pause_rx) return;
    const double per_s = r.sim_time_ps ? static_cast<double>(st.pause_tx) * 1e12 / static_cast<double>(r.sim_time_ps) : 0;
    ports << (pfirst ? "\n" : ",\n") << "      {\"node\": " << json_str(node) << ", \"port\": " << mac.port()
          << ", \"pause_frames_tx\": " << st.pause_tx << ", \"pause_frames_rx\": " << st.pause_rx
          << ", \"pause_frames_tx_per_s\": " << num(per_s) << ", \"rx_priorities\": [" << prios << "]";
    if (gen) {
      // The switch's XOFF/XON transitions on this (ingress) port, per priority.
      std::string x;
      for (int p = 0; p < 8; ++p) {
        if (!gen->xoff[p] && !gen->xon[p]) continue;
        x += (x.empty() ? "" : ", ") + std::string("{\"priority\": ") + std::to_string(p) +
             ", \"xoff\": " + std::to_string(gen->xoff[p]) + ", \"xon\": " + std::to_string(gen->xon[p]) + "}";
      }
      ports << ", \"tx_transitions\": [" << x << "], \"refreshes\": " << gen->refreshes;
    }
    ports << "}";
    pfirst = false;
  };
  for (const auto& h : f.hosts())
    for (uint32_t p = 0; p < h->num_ports(); ++p) mac_pfc(h->basename(), h->port_mac(p), nullptr);
  uint64_t wd = 0;
  for (const auto& sw : f.switches()) {
    wd += sw->watchdog_events();
    for (uint32_t p = 0; p < sw->num_ports(); ++p) {
      mac_pfc(sw->basename(), *sw->ports[p], &sw->pfc_stats(p));
      const sw::PfcPortStats& ps = sw->pfc_stats(p);
      for (int k = 0; k < 8; ++k) {
        xoff += ps.xoff[k];
        xon += ps.xon[k];
      }
      refresh += ps.refreshes;
    }
  }
  o << "  \"pfc\": {\"pause_frames_tx\": " << ptx << ", \"pause_frames_rx\": " << prx << ", \"xoff_events\": " << xoff
    << ", \"xon_events\": " << xon << ", \"refreshes\": " << refresh << ", \"paused_ns_total\": " << ps_to_ns_text(paused_ps)
    << ", \"longest_pause_ns\": " << ps_to_ns_text(longest_ps) << ", \"watchdog_events\": " << wd
    << ", \"deadlock\": " << (r.deadlock ? "true" : "false") << ", \"last_delivery_ns\": " << ps_to_ns_text(r.last_delivery_ps)
    << ",\n    \"ports\": [" << ports.str() << (pfirst ? "]}" : "\n    ]}") << ",\n";
  uint64_t eseen = 0, emarked = 0, ewould = 0;
  for (const auto& sw : f.switches())
    for (uint32_t p = 0; p < sw->num_ports(); ++p)
      for (uint32_t q = 0; q < 8; ++q) {
        const ecn::Counters& ec = sw->ecn_counters(p, q);
        eseen += ec.seen;
        emarked += ec.marked;
        ewould += ec.would_mark;
      }
  o << "  \"ecn\": {\"seen\": " << eseen << ", \"marked\": " << emarked << ", \"would_mark\": " << ewould << "},\n";
  o << "  \"buffer\": {\"peak_cells\": " << peak_cells << ", \"peak_bytes\": " << peak_bytes << "},\n";
  if (const FabricAnalytics* an = f.analytics()) o << analytics_json(*an);
  // The figures of the end-of-run table (sim/digest.h).
  o << digest_json(digest(f, r));
  if (f.paths()) o << ecmp_summary_json(f);
  o << "  \"switches\": [";
  first = true;
  const long double sim = r.sim_time_ps ? static_cast<long double>(r.sim_time_ps) : 1.0L;
  for (const auto& sw : f.switches()) {
    const mmu::Mmu& m = sw->mmu();
    o << (first ? "\n" : ",\n") << "    {\"name\": " << json_str(sw->basename()) << ", \"ports\": " << sw->num_ports()
      << ", \"buffer_cells\": " << sw->config().buffer.total_cells << ", \"cell_bytes\": "
      << sw->config().buffer.cell_bytes << ", \"peak_cells\": " << m.total_peak() << ", \"used_cells_at_end\": "
      << m.total_used() << ", \"cut_through_packets\": " << sw->cut_through_packets();
    if (sw->config().ecmp.dlb.mode != ecmp::DlbMode::off) {
      const ecmp::FlowletGroup::Stats d = sw->dlb_stats();
      o << ", \"load_balancing\": {\"new_flowlets\": " << d.new_flowlets << ", \"moves\": " << d.moves
        << ", \"held_queued\": " << d.held_queued << ", \"avoided_hot\": " << d.avoided_hot << "}";
    }
    o
      << ", \"buffer_write_wait_ns\": " << ps_to_ns_text(sw->buffer.stats().write_wait_ps)
      << ", \"buffer_read_wait_ns\": " << ps_to_ns_text(sw->buffer.stats().read_wait_ps) << ",\n      \"pools\": [";
    for (size_t i = 0; i < m.pools(); ++i)
      o << (i ? ", " : "") << "{\"name\": " << json_str(m.config().pools[i].name) << ", \"size_cells\": "
        << m.pool(i).size << ", \"peak_cells\": " << m.pool(i).peak << "}";
    o << "],\n      \"shared_headroom_peak_cells\": " << m.headroom_pool_peak() << ",\n      \"queues\": [";
    bool qfirst = true;
    for (uint32_t p = 0; p < sw->num_ports(); ++p) {
      for (uint32_t q = 0; q < 8; ++q) {
        const sw::QueueStats qs = sw->queue_stats_now(p, q);
        const mmu::QueueCounters& qc = m.queue_counters(static_cast<uint16_t>(p), static_cast<uint8_t>(q));
        if (qs.enq_packets == 0 && qc.dropped.total_packets() == 0) continue;
        o << (qfirst ? "\n" : ",\n") << "        {\"port\": " << p << ", \"queue\": " << q
          << ", \"enq_packets\": " << qs.enq_packets << ", \"enq_bytes\": " << qs.enq_bytes
          << ", \"deq_packets\": " << qs.deq_packets << ", \"deq_bytes\": " << qs.deq_bytes
          << ", \"dropped_packets\": " << qc.dropped.total_packets() << ", \"drops_by_reason\": " << drops_json(qc.dropped)
          << ", \"peak_bytes\": " << qs.peak_bytes
          << ", \"peak_cells\": " << qs.peak_cells << ", \"avg_bytes\": " << num(static_cast<double>(qs.area_bytes / sim))
          << ", \"avg_cells\": " << num(static_cast<double>(qs.area_cells / sim));
        const ecn::Counters& ec = sw->ecn_counters(p, q);
        if (ec.seen)
          o << ", \"ecn_seen\": " << ec.seen << ", \"ecn_marked\": " << ec.marked << ", \"ecn_would_mark\": " << ec.would_mark;
        o << "}";
        qfirst = false;
      }
    }
    o << (qfirst ? "]" : "\n      ]") << ",\n      \"pgs\": [";
    bool gfirst = true;
    for (uint32_t p = 0; p < sw->num_ports(); ++p) {
      for (uint32_t g = 0; g < 8; ++g) {
        const sw::PgStats ps = sw->pg_stats_now(p, g);
        if (ps.in_packets == 0) continue;
        const mmu::PgCounters& pc = m.pg_counters(static_cast<uint16_t>(p), static_cast<uint8_t>(g));
        o << (gfirst ? "\n" : ",\n") << "        {\"port\": " << p << ", \"pg\": " << g
          << ", \"in_packets\": " << ps.in_packets << ", \"in_bytes\": " << ps.in_bytes
          << ", \"out_packets\": " << pc.released_packets << ", \"out_cells\": " << pc.released_cells
          << ", \"dropped_packets\": " << pc.dropped.total_packets()
          << ", \"drops_by_reason\": " << drops_json(pc.dropped) << ", \"headroom_packets\": "
          << pc.headroom_packets << ", \"peak_cells\": " << ps.peak_cells
          << ", \"avg_cells\": " << num(static_cast<double>(ps.area_cells / sim)) << "}";
        gfirst = false;
      }
    }
    o << (gfirst ? "]" : "\n      ]") << "}";
    first = false;
  }
  o << (first ? "]\n" : "\n  ]\n");
  o << "}\n";
  return o.str();
}

std::string flows_csv(const Fabric& f) {
  std::ostringstream o;
  o << "flow_id,src,dst,src_qp,dst_qp,size_bytes,messages,rate_bps,start_ns,first_tx_ns,first_rx_ns,finish_ns,fct_ns,"
       "ideal_fct_ns,slowdown,packets_sent,packets_received,bytes_received,psn_errors,completed,retransmitted,timeouts,"
       "naks_received,cnps_sent,cnps_received,tag,cm_retries,setup_done_ns,path,rev_path,path_changes";
  // switch.analytics: the NIC-side figures the analytics is checked against.
  const bool an = f.scenario().sw.analytics.enabled;
  o << (an ? ",naks_sent,rtt_samples,rtt_avg_ns\n" : "\n");
  for (const auto& r : f.flows()) {
    const uint64_t ideal = f.ideal_fct_ps(r);
    o << r.id << ",h" << r.src << ",h" << r.dst << "," << r.src_qp << "," << r.dst_qp << "," << r.total_bytes() << ","
      << r.messages << "," << r.rate_bps << "," << ps_to_ns_text(r.start_ps) << ","
      << (r.first_tx_ps == UINT64_MAX ? "" : ps_to_ns_text(r.first_tx_ps)) << ","
      << (r.first_rx_ps == UINT64_MAX ? "" : ps_to_ns_text(r.first_rx_ps)) << ",";
    if (r.done()) {
      const uint64_t fct = r.finish_ps - r.start_ps;
      double slow = ideal ? static_cast<double>(fct) / static_cast<double>(ideal) : 1.0;
      if (slow < 1.0) slow = 1.0;
      char b[32];
      std::snprintf(b, sizeof b, "%.6f", slow);
      o << ps_to_ns_text(r.finish_ps) << "," << ps_to_ns_text(fct) << "," << ps_to_ns_text(ideal) << "," << b;
    } else {
      o << ",," << ps_to_ns_text(ideal) << ",";
    }
    o << "," << r.packets_sent << "," << r.packets_received << "," << r.bytes_received << "," << r.psn_errors << ","
      << (r.done() ? 1 : 0) << "," << r.retransmitted << "," << r.timeouts << "," << r.naks_received << ","
      << r.cnps_sent << "," << r.cnps_received << "," << f.scenario().flows[r.id].tag << "," << r.cm_retries << ","
      << (r.setup_done_ps == UINT64_MAX ? "" : ps_to_ns_text(r.setup_done_ps)) << ",";
    if (const PathRecorder* pr = f.paths())
      o << pr->current_path(r.id, packet::PathDir::fwd) << "," << pr->current_path(r.id, packet::PathDir::rev) << ","
        << pr->changes(r.id, packet::PathDir::fwd) + pr->changes(r.id, packet::PathDir::rev);
    else
      o << ",,";
    if (an)
      o << "," << r.naks_sent << "," << r.rtt_samples << ","
        << (r.rtt_samples ? ps_to_ns_text(r.rtt_sum_ps / r.rtt_samples) : "");
    o << "\n";
  }
  return o.str();
}

std::string fct_txt(const Fabric& f) {
  // HPCC's fct.txt (simulation/scratch/third.cc, qp_finish):
  // "%08x %08x %u %u %lu %lu %lu %lu" = sip dip sport dport size start_ns fct_ns standalone_fct_ns.
  const Scenario& s = f.scenario();
  const std::vector<host::FlowRecord>& flows = f.flows();
  // HPCC's node id of h<i>: the topology file's (kind hpcc), else i (as flows.hpcc.txt writes them).
  auto id_of = [&](uint32_t h) { return s.topo.file_ids.empty() ? h : s.topo.file_ids[s.topo.hosts[h]]; };
  // sport: HPCC gives a source's flows ports 10000, 10001, ... as they start
  // (third.cc: portNumder[src]++, flows in file order, which is start order).
  std::vector<uint32_t> by_start(flows.size());
  for (uint32_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](uint32_t a, uint32_t b) { return s.flows[a].start_ps < s.flows[b].start_ps; });
  std::vector<uint32_t> sport(flows.size());
  std::vector<uint32_t> next_port(f.hosts().size(), 10000);
  for (uint32_t i : by_start) sport[i] = next_port[flows[i].src]++;
  // Completion order, as HPCC appends a line when a QP completes (ties: flow id).
  std::vector<uint32_t> done;
  for (const host::FlowRecord& r : flows)
    if (r.done()) done.push_back(r.id);
  std::stable_sort(done.begin(), done.end(),
                   [&](uint32_t a, uint32_t b) { return flows[a].finish_ps < flows[b].finish_ps; });
  auto ns = [](uint64_t ps) { return static_cast<unsigned long long>((ps + 500) / 1000); };  // nearest ns
  std::string o;
  char line[160];
  for (uint32_t i : done) {
    const host::FlowRecord& r = flows[i];
    std::snprintf(line, sizeof line, "%08x %08x %u %u %llu %llu %llu %llu\n", topology::hpcc_ip_of(id_of(r.src)),
                  topology::hpcc_ip_of(id_of(r.dst)), sport[i], s.flows[i].dport,
                  static_cast<unsigned long long>(r.total_bytes()), ns(r.start_ps), ns(r.finish_ps - r.start_ps),
                  ns(f.ideal_fct_ps(r)));
    o += line;
  }
  return o;
}

}  // namespace rocesim::sim

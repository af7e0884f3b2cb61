// Run outputs: summary.json, flows.csv, config.resolved.yaml, and the event
// logs pfc.csv and cc.csv. Each file is written to NAME.partial and renamed,
// so a file with its final name is complete.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/fabric.h"

namespace rocesim::sim {

inline constexpr int kSummarySchemaVersion = 1;

// Writes content to path atomically (tmp + rename). False with errno on failure;
// the .partial is then removed (on a full disk it would hold space and look like output).
bool write_file_atomic(const std::string& path, const std::string& content);
// The same, with the reason ("No space left on device") in why.
bool write_file_atomic(const std::string& path, const std::string& content, std::string& why);

// The output directory of `rocesim run`. A run writes into a fresh directory,
// so files of two runs never mix.
//
// check_out_dir: before building the model, creates nothing. False with the
// reason when DIR exists but is not a directory, is not empty and !force, is a
// target --force refuses to empty (/, $HOME, the working directory or one of
// its ancestors, a directory holding .git: a source tree), or is not writable.
bool check_out_dir(const std::string& dir, bool force, std::string& why);
// prepare_out_dir: just before simulating. Creates DIR and its parents, or with
// force deletes everything inside it (symbolic links are removed, never
// followed; nothing outside DIR is touched); then proves DIR writable by
// writing and removing a probe file (this catches a full disk too).
bool prepare_out_dir(const std::string& dir, bool force, std::string& why);

// How a run ended, for summary.json's "complete", "reason" and "outputs_missing".
struct RunStatus {
  std::string reason;                    // empty: ran to its end ("interrupted by SIGINT", "wall-clock limit ...")
  std::vector<OutputFailure> missing;    // outputs that could not be written
  bool complete() const { return reason.empty() && missing.empty(); }
};

std::string summary_json(Fabric& f, const RunResult& r, const RunStatus& st = {});
std::string flows_csv(const Fabric& f);
// fct.txt in HPCC's format (docs/outputs.md): one line per completed flow, in
// completion order: "sip dip sport dport size start_ns fct_ns standalone_fct_ns",
// addresses as HPCC assigns them (topology/hpcc.h, hpcc_ip_of), times rounded to the ns.
std::string fct_txt(const Fabric& f);

// A JSON string literal (quoted, escaped), and a JSON number as summary.json
// writes them (%.6g).
std::string json_quote(const std::string& s);
std::string json_num(double v);

// "1234.560" for 1234560 ps: exact, fixed 3 decimals, no locale.
std::string ps_to_ns_text(uint64_t ps);
// The same text, and an integer's decimal digits, appended to o: for CSVs of
// many rows (paths.csv, packet_trace.csv), without a stream or printf.
void append_ns(std::string& o, uint64_t ps);
void append_uint(std::string& o, uint64_t v);

// pfc.csv and cc.csv: event logs. Their producers (switches, MACs, hosts)
// append rows to a vector as events happen; the files list the rows in time
// order, rows of equal time in the order they were logged.
inline constexpr const char* kPfcCsvHeader = "time_ns,node,port,priority,event\n";
inline constexpr const char* kCcCsvHeader = "time_ns,flow,event,trigger,rate_bps,target_bps,alpha\n";
// One row (with its newline) appended to out.
void append_row(std::string& out, const pfc::Event& e);
void append_row(std::string& out, const host::CcSample& e);
inline uint64_t row_time(const pfc::Event& e) { return e.t_ps; }
inline uint64_t row_time(const host::CcSample& e) { return e.s.time_ps; }

// A whole log as its file's content: header, then the rows in time order.
template <class E>
std::string event_csv(const std::vector<E>& log, const char* header) {
  std::vector<E> ev = log;
  std::stable_sort(ev.begin(), ev.end(), [](const E& a, const E& b) { return row_time(a) < row_time(b); });
  std::string o = header;
  for (const E& e : ev) append_row(o, e);
  return o;
}

// An event log streamed to its file during the run (`rocesim run`), so that
// memory holds one slice of simulated time of rows, not the whole run.
// After each slice (sc_start stopped at T) flush(log, T) writes the rows
// before T in time order and drops them from the log; close() writes the
// rest. Every producer logs an event during its time step or earlier (a MAC
// may log a pause transition ahead of its time; those wait in the log), so
// the file has the bytes event_csv() would give. A row that arrives behind
// a flushed horizon (a producer's bug) is written late and counted (late()),
// and close() warns about it on stderr.
class EventCsvStream {
 public:
  EventCsvStream() = default;
  EventCsvStream(const EventCsvStream&) = delete;
  EventCsvStream& operator=(const EventCsvStream&) = delete;
  ~EventCsvStream();

  // Opens PATH.partial and writes the header; false with why on failure.
  bool open(const std::string& path, const char* header, std::string& why);
  bool is_open() const { return m_f != nullptr; }
  // Rows of log with time < horizon_ps go to the file and leave the log; the
  // later ones stay, in their order. No allocation once the buffers have
  // grown to a slice's rows.
  template <class E>
  void flush(std::vector<E>& log, uint64_t horizon_ps);
  // Writes every row left, closes and renames PATH.partial to PATH; on a
  // write error removes the .partial and lists PATH in failed.
  template <class E>
  void close(std::vector<E>& log, std::vector<OutputFailure>& failed) {
    flush(log, UINT64_MAX);
    finish(failed);
  }
  uint64_t late() const { return m_late; }

 private:
  void write_buffer();
  void finish(std::vector<OutputFailure>& failed);

  std::FILE* m_f = nullptr;
  std::string m_path;
  uint64_t m_horizon_ps = 0;   // every row before it is written
  uint64_t m_late = 0;
  int m_errno = 0;             // first write error
  std::string m_buf;
  std::vector<std::pair<uint64_t, size_t>> m_order;  // (time, position in the log) of the rows due
};

template <class E>
void EventCsvStream::flush(std::vector<E>& log, uint64_t horizon_ps) {
  if (!m_f) return;
  m_order.clear();
  for (size_t i = 0; i < log.size(); ++i)
    if (row_time(log[i]) < horizon_ps) m_order.emplace_back(row_time(log[i]), i);
  if (m_order.empty()) return;
  // By time, then by position: the stable order of event_csv().
  std::sort(m_order.begin(), m_order.end());
  m_buf.clear();
  for (const auto& [t, i] : m_order) {
    if (t < m_horizon_ps) ++m_late;
    append_row(m_buf, log[i]);
  }
  write_buffer();
  if (horizon_ps > m_horizon_ps) m_horizon_ps = horizon_ps;
  size_t kept = 0;
  for (size_t i = 0; i < log.size(); ++i)
    if (row_time(log[i]) >= horizon_ps) log[kept++] = log[i];
  log.erase(log.begin() + static_cast<std::ptrdiff_t>(kept), log.end());
}

}  // namespace rocesim::sim

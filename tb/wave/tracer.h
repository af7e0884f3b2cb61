// rocesim run --trace FILE.fst|.vcd: the TLM-level waveforms of a fabric
// (docs/waveforms.md). Declares the signals of every traced switch port and
// queue and every traced host, gives the modules their observers (the hooks
// in link::Mac, sw::Switch and host::Host), writes the trace through a
// trace::Recorder, and beside it a GTKWave save file grouping the signals
// per switch, port and queue (and per host).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/fabric.h"
#include "sim/scenario.h"
#include "trace/recorder.h"
#include "wave/wave_file.h"

namespace rocesim::wave {

// What --trace-select asks for: per node name, its traced ports (all of
// them when the set is empty). Empty map: every switch and host.
struct Selection {
  std::map<std::string, std::set<uint32_t>> nodes;
  bool all() const { return nodes.empty(); }
};

// Parses and checks the --trace-select arguments (each ITEM[,ITEM...], ITEM
// = NODE, NODE:PORT or NODE:*) against the scenario's topology; false with
// the reason ("--trace-select ARG: ...") otherwise.
bool resolve_trace_select(const sim::Scenario& s, const std::vector<std::string>& args, Selection& out,
                          std::string& why);

// The GTKWave save file's name for a trace: FILE.fst -> FILE.gtkw.
std::string gtkw_path(const std::string& trace_path);

class Tracer {
 public:
  // Declares the signals and sets the observers; [from_ps, to_ps] is the window written.
  Tracer(sim::Fabric& f, const Selection& sel, uint64_t from_ps, uint64_t to_ps);
  ~Tracer();
  // Opens the trace (FILE.partial); false with a reason.
  bool open(const std::string& path, Format fmt, std::string& why);
  // Writes what is left up to end_ps, renames the trace and writes FILE.gtkw;
  // false with the file that failed and why.
  bool close(uint64_t end_ps, std::string& file, std::string& why);

  const trace::Recorder& recorder() const { return m_rec; }
  size_t signals() const { return m_rec.signals().size(); }
  // The GTKWave save file's text (the signals that changed, grouped).
  std::string gtkw_text() const;

 private:
  sim::Fabric& m_fabric;
  trace::Recorder m_rec;
  std::string m_path;
  std::unique_ptr<WaveFile> m_file;
  uint64_t m_from, m_to, m_end = 0;  // the window, and where the written trace ends
  std::vector<std::unique_ptr<link::MacTrace>> m_mac;
  std::vector<std::unique_ptr<sw::SwitchTrace>> m_sw;
  std::vector<std::unique_ptr<host::HostTrace>> m_host;
  std::set<std::string> m_host_names;  // traced hosts (their .gtkw groups start closed)
};

}  // namespace rocesim::wave

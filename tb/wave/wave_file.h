// Waveform files for the TLM-level trace (trace::Recorder's sink): FST
// through the writer GTKWave and Verilator ship (fstapi), or VCD (IEEE 1364
// text) when the name ends in .vcd. Timescale 1 ps. Scopes nest as the
// signals' scope paths; each signal is a wire of its width. The file is
// written as NAME.partial and renamed to NAME by close(), so an interrupted
// run never leaves a trace that looks complete.
#pragma once

#include <memory>
#include <string>

#include "trace/recorder.h"

namespace rocesim::wave {

enum class Format { fst, vcd };

// The format a trace file name asks for; false when it ends in neither .fst nor .vcd.
bool format_of(const std::string& path, Format& f);

class WaveFile : public trace::Sink {
 public:
  // Flushes, closes and renames NAME.partial to NAME; false with a reason.
  virtual bool close(std::string& why) = 0;
  const std::string& path() const { return m_path; }

 protected:
  std::string m_path;
};

// Opens NAME.partial for writing; null with a reason on failure.
std::unique_ptr<WaveFile> open_wave(const std::string& path, Format f, const std::string& comment, std::string& why);

}  // namespace rocesim::wave

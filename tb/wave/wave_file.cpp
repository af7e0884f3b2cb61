#include "wave/wave_file.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#if ROCESIM_HAVE_FST
#include "fstapi.h"
#endif

namespace rocesim::wave {

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

bool finish(const std::string& path, std::string& why) {
  if (std::rename((path + ".partial").c_str(), path.c_str()) != 0) {
    why = "cannot rename " + path + ".partial: " + std::strerror(errno);
    std::remove((path + ".partial").c_str());
    return false;
  }
  return true;
}

// Calls enter/leave so that scopes nest as the signals' scope paths (the
// signals come grouped by scope, as the tracer declares them).
template <typename Enter, typename Leave, typename Var>
void walk_scopes(const std::vector<trace::SignalInfo>& sigs, Enter enter, Leave leave, Var var) {
  std::vector<std::string> open;
  for (size_t i = 0; i < sigs.size(); ++i) {
    const std::vector<std::string>& sc = sigs[i].scope;
    size_t common = 0;
    while (common < open.size() && common < sc.size() && open[common] == sc[common]) ++common;
    while (open.size() > common) {
      leave();
      open.pop_back();
    }
    for (size_t k = common; k < sc.size(); ++k) {
      enter(sc[k]);
      open.push_back(sc[k]);
    }
    var(static_cast<trace::Signal>(i), sigs[i]);
  }
  while (!open.empty()) {
    leave();
    open.pop_back();
  }
}

#if ROCESIM_HAVE_FST
class FstFile final : public WaveFile {
 public:
  FstFile(const std::string& path, void* ctx) : m_ctx(ctx) { m_path = path; }
  ~FstFile() override {
    if (m_ctx) {
      fstWriterClose(m_ctx);
      std::remove((m_path + ".partial").c_str());
    }
  }
  void begin(const std::vector<trace::SignalInfo>& sigs) override {
    m_bits.clear();
    m_handle.clear();
    walk_scopes(
        sigs, [&](const std::string& s) { fstWriterSetScope(m_ctx, FST_ST_VCD_MODULE, s.c_str(), nullptr); },
        [&] { fstWriterSetUpscope(m_ctx); },
        [&](trace::Signal, const trace::SignalInfo& si) {
          m_handle.push_back(fstWriterCreateVar(m_ctx, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, si.bits, si.name.c_str(), 0));
          m_bits.push_back(si.bits);
        });
  }
  void time(uint64_t t_ps) override { fstWriterEmitTimeChange(m_ctx, t_ps); }
  void value(trace::Signal s, uint64_t v) override { fstWriterEmitValueChange64(m_ctx, m_handle[s], m_bits[s], v); }
  bool close(std::string& why) override {
    const bool seek_failed = fstWriterGetFseekFailed(m_ctx);
    fstWriterClose(m_ctx);
    m_ctx = nullptr;
    if (seek_failed) {
      why = "cannot write " + m_path + ".partial (seek failed)";
      std::remove((m_path + ".partial").c_str());
      return false;
    }
    return finish(m_path, why);
  }

 private:
  void* m_ctx;
  std::vector<fstHandle> m_handle;
  std::vector<uint32_t> m_bits;
};

#endif

// VCD identifiers: printable ASCII 33..126, base 94.
std::string vcd_id(uint32_t i) {
  std::string s;
  do {
    s += static_cast<char>(33 + i % 94);
    i /= 94;
  } while (i);
  return s;
}

class VcdFile final : public WaveFile {
 public:
  VcdFile(const std::string& path, std::FILE* f, std::string comment) : m_f(f), m_comment(std::move(comment)) {
    m_path = path;
    m_iobuf.resize(1 << 16);
    std::setvbuf(m_f, m_iobuf.data(), _IOFBF, m_iobuf.size());
  }
  ~VcdFile() override {
    if (m_f) {
      std::fclose(m_f);
      std::remove((m_path + ".partial").c_str());
    }
  }
  void begin(const std::vector<trace::SignalInfo>& sigs) override {
    std::fprintf(m_f, "$comment %s $end\n$timescale 1ps $end\n", m_comment.c_str());
    walk_scopes(
        sigs, [&](const std::string& s) { std::fprintf(m_f, "$scope module %s $end\n", s.c_str()); },
        [&] { std::fputs("$upscope $end\n", m_f); },
        [&](trace::Signal s, const trace::SignalInfo& si) {
          m_id.push_back(vcd_id(s));
          m_bits.push_back(si.bits);
          std::fprintf(m_f, "$var wire %u %s %s $end\n", si.bits, m_id.back().c_str(), si.name.c_str());
        });
    std::fputs("$enddefinitions $end\n", m_f);
  }
  void time(uint64_t t_ps) override {
    if (m_timed && t_ps == m_t) return;
    m_timed = true;
    m_t = t_ps;
    std::fprintf(m_f, "#%" PRIu64 "\n", t_ps);
  }
  void value(trace::Signal s, uint64_t v) override {
    if (m_bits[s] == 1) {
      std::fprintf(m_f, "%c%s\n", v & 1 ? '1' : '0', m_id[s].c_str());
      return;
    }
    char b[80];
    int n = 0;
    int top = 63;  // leading zeros dropped (VCD extends with 0)
    while (top > 0 && !(v >> top & 1)) --top;
    b[n++] = 'b';
    for (int k = top; k >= 0; --k) b[n++] = (v >> k & 1) ? '1' : '0';
    b[n] = 0;
    std::fprintf(m_f, "%s %s\n", b, m_id[s].c_str());
  }
  bool close(std::string& why) override {
    bool ok = std::ferror(m_f) == 0;
    if (std::fclose(m_f) != 0) ok = false;
    m_f = nullptr;
    if (!ok) {
      why = "cannot write " + m_path + ".partial: " + std::strerror(errno ? errno : EIO);
      std::remove((m_path + ".partial").c_str());
      return false;
    }
    return finish(m_path, why);
  }

 private:
  std::FILE* m_f;
  std::string m_comment;
  std::vector<char> m_iobuf;
  std::vector<std::string> m_id;
  std::vector<uint32_t> m_bits;
  bool m_timed = false;
  uint64_t m_t = 0;
};

}  // namespace

bool format_of(const std::string& path, Format& f) {
  if (ends_with(path, ".fst")) {
    f = Format::fst;
    return true;
  }
  if (ends_with(path, ".vcd")) {
    f = Format::vcd;
    return true;
  }
  return false;
}

std::unique_ptr<WaveFile> open_wave(const std::string& path, Format f, const std::string& comment, std::string& why) {
  const std::string tmp = path + ".partial";
  if (f == Format::vcd) {
    std::FILE* fp = std::fopen(tmp.c_str(), "w");
    if (!fp) {
      why = "cannot write " + tmp + ": " + std::strerror(errno);
      return nullptr;
    }
    return std::make_unique<VcdFile>(path, fp, comment);
  }
#if !ROCESIM_HAVE_FST
  (void)comment;
  why = "cannot write " + path + ": this build has no FST writer (Verilator's include/gtkwave was not found); use .vcd";
  return nullptr;
#else
  // fstapi creates the file itself (and NAME.hier beside it while writing).
  errno = 0;
  void* ctx = fstWriterCreate(tmp.c_str(), 1);
  if (!ctx) {
    why = "cannot write " + tmp + ": " + std::strerror(errno ? errno : EIO);
    return nullptr;
  }
  fstWriterSetTimescale(ctx, -12);  // 1 ps
  fstWriterSetPackType(ctx, FST_WR_PT_LZ4);
  fstWriterSetComment(ctx, comment.c_str());
  fstWriterSetVersion(ctx, "rocesim");
  return std::make_unique<FstFile>(path, ctx);
#endif
}

}  // namespace rocesim::wave

#include "trace/recorder.h"

#include <algorithm>
#include <stdexcept>

namespace rocesim::trace {

Recorder::Recorder(std::function<uint64_t()> now, uint64_t from_ps, uint64_t to_ps)
    : m_now(std::move(now)), m_from(from_ps), m_to(to_ps) {
  m_buf.reserve(kFlushRecords);
}

Signal Recorder::add_signal(SignalInfo info) {
  if (m_sink) throw std::logic_error("trace::Recorder: a signal declared after open()");
  if (info.bits < 1 || info.bits > 64) throw std::invalid_argument("trace::Recorder: a signal needs 1..64 bits");
  m_info.push_back(std::move(info));
  m_cur.push_back(0);
  m_out.push_back(0);
  m_touched_at.push_back(0);
  m_changed.push_back(false);
  return static_cast<Signal>(m_info.size() - 1);
}

void Recorder::open(Sink* sink) {
  m_sink = sink;
  m_sink->begin(m_info);
}

void Recorder::emit_initial() {
  // Every signal's value at the window's start (a change at exactly `from`
  // included): the first time of the file.
  m_initial_done = true;
  m_sink->time(m_from);
  m_last_time_written = m_from;
  m_any_time = true;
  for (Signal s = 0; s < m_cur.size(); ++s) {
    m_sink->value(s, m_cur[s]);
    m_out[s] = m_cur[s];
    if (m_cur[s]) m_changed[s] = true;
  }
  m_written += m_cur.size();
}

void Recorder::flush(uint64_t limit) {
  if (!m_sink) return;
  std::stable_sort(m_buf.begin(), m_buf.end(), [](const Rec& a, const Rec& b) { return a.t < b.t; });
  size_t i = 0;
  const size_t n = m_buf.size();
  while (i < n && m_buf[i].t < limit) {
    uint64_t t = m_buf[i].t;
    size_t j = i;
    while (j < n && m_buf[j].t == t) ++j;  // [i, j): one time
    if (t < m_emitted_t) {  // behind what is written: a hook's bug (see the header)
      m_late += j - i;
      t = m_emitted_t;
    }
    if (t > m_to) {  // past the window: nothing more to write
      i = n;
      break;
    }
    if (!m_initial_done && t > m_from) emit_initial();
    ++m_group;
    m_touched.clear();
    for (size_t k = i; k < j; ++k) {
      const Rec& r = m_buf[k];
      m_cur[r.s] = r.add ? m_cur[r.s] + r.v : r.v;
      if (m_touched_at[r.s] != m_group) {
        m_touched_at[r.s] = m_group;
        m_touched.push_back(r.s);
      }
    }
    m_emitted_t = t;
    i = j;
    if (t < m_from) continue;
    if (!m_initial_done) {  // t == from
      emit_initial();
      continue;
    }
    bool timed = false;
    for (Signal s : m_touched) {
      if (m_cur[s] == m_out[s]) continue;
      if (!timed) {
        m_sink->time(t);
        m_last_time_written = t;
        timed = true;
      }
      m_sink->value(s, m_cur[s]);
      m_out[s] = m_cur[s];
      m_changed[s] = true;
      ++m_written;
    }
  }
  m_buf.erase(m_buf.begin(), m_buf.begin() + static_cast<std::ptrdiff_t>(i));
}

void Recorder::close(uint64_t end_ps) {
  if (!m_sink) return;
  flush(UINT64_MAX);
  const uint64_t end = std::min(end_ps, m_to);
  if (!m_initial_done && m_from <= end) emit_initial();
  if (m_any_time && end > m_last_time_written) {
    m_sink->time(end);
    m_last_time_written = end;
  }
  m_sink = nullptr;
}

}  // namespace rocesim::trace

#include "buffer/buffer.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace rocesim::buffer {

using namespace sc_core;

PacketBuffer::PacketBuffer(sc_module_name name, const BufferConfig& cfg)
    : sc_module(name),
      tsck("tsck"),
      m_cfg(cfg),
      m_mem(static_cast<uint8_t*>(std::calloc(static_cast<size_t>(cfg.total_cells) * cfg.cell_bytes, 1))) {
  tsck.register_b_transport(this, &PacketBuffer::b_transport);
  tsck.register_transport_dbg(this, &PacketBuffer::transport_dbg);
  if (!m_mem && cfg.total_cells) throw std::bad_alloc();
}

uint64_t PacketBuffer::reserve(Calendar& c, uint32_t per_cycle, uint64_t t_ps, uint32_t cells, uint64_t& wait_ps) {
  const uint64_t period = m_cfg.clock_period_ps;
  // Cycle n covers [n*period, (n+1)*period). Service starts in the first cycle
  // that begins at or after t, or where earlier requests left off.
  const uint64_t first = (t_ps + period - 1) / period;
  if (first > c.cycle) {
    c.cycle = first;
    c.used = 0;
  }
  // Fill the current cycle's spare capacity, then whole cycles.
  const uint64_t total = static_cast<uint64_t>(c.used) + cells;
  c.cycle += (total - 1) / per_cycle;
  c.used = static_cast<uint32_t>((total - 1) % per_cycle + 1);
  const uint64_t done = (c.cycle + 1) * period;  // end of the cycle holding the last cell
  const uint64_t uncontended = (first + (cells + per_cycle - 1) / per_cycle) * period;
  if (done > uncontended) wait_ps += done - uncontended;
  return done;
}

void PacketBuffer::copy_chain(uint32_t head, uint8_t* data, uint32_t len, bool write) {
  uint32_t cell = head, off = 0;
  while (off < len && cell != kNoCell) {
    const uint32_t n = std::min(m_cfg.cell_bytes, len - off);
    uint8_t* mem = m_mem.get() + static_cast<size_t>(cell) * m_cfg.cell_bytes;
    if (write) {
      std::memcpy(mem, data + off, n);
    } else {
      std::memcpy(data + off, mem, n);
    }
    off += n;
    if (off < len) {
      if (!m_links) throw std::logic_error("buffer::PacketBuffer: a transaction beyond one cell without cell links");
      cell = m_links->next_cell(cell);
    }
  }
}

void PacketBuffer::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
  const uint64_t addr = gp.get_address();
  const uint32_t len = gp.get_data_length();
  if (addr % m_cfg.cell_bytes != 0 || addr / m_cfg.cell_bytes >= m_cfg.total_cells) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  CellCount* cc = nullptr;
  gp.get_extension(cc);
  const uint32_t cells = cc ? cc->cells : std::max<uint32_t>(1, (len + m_cfg.cell_bytes - 1) / m_cfg.cell_bytes);
  const uint32_t head = static_cast<uint32_t>(addr / m_cfg.cell_bytes);
  const uint64_t lead = cc ? cc->lead_ps : 0;
  const uint64_t now = core::now_ps();
  const uint64_t t = now + core::to_ps(delay) - std::min(lead, now + core::to_ps(delay));
  uint64_t done;
  if (gp.is_write()) {
    copy_chain(head, gp.get_data_ptr(), len, true);
    done = reserve_write(t, cells);
    m_stats.write_cells += cells;
  } else if (gp.is_read()) {
    copy_chain(head, gp.get_data_ptr(), len, false);
    done = reserve_read(t, cells);
    m_stats.read_cells += cells;
  } else {
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  delay = core::ps(done > now ? done - now : 0);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int PacketBuffer::transport_dbg(tlm::tlm_generic_payload& gp) {
  const uint64_t addr = gp.get_address();
  if (addr % m_cfg.cell_bytes != 0 || addr / m_cfg.cell_bytes >= m_cfg.total_cells) return 0;
  copy_chain(static_cast<uint32_t>(addr / m_cfg.cell_bytes), gp.get_data_ptr(), gp.get_data_length(), gp.is_write());
  return gp.get_data_length();
}

}  // namespace rocesim::buffer

#include "buffer/buffer.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace rocesim::buffer {

using namespace sc_core;

PacketBuffer::PacketBuffer(sc_module_name name, const BufferConfig& cfg)
    : sc_module(name),
      tsck("tsck"),
      m_cfg(cfg),
      m_block(cfg.total_cells) {
  tsck.bind(static_cast<tlm::tlm_fw_transport_if<>&>(*this));
  m_pool[kSmall].bytes = std::min(cfg.cell_bytes, kSmallBlockBytes);
  m_pool[kFull].bytes = cfg.cell_bytes;
}

uint32_t PacketBuffer::Pool::take() {
  if (free.empty()) {
    const uint32_t first = static_cast<uint32_t>(allocated());
    chunks.push_back(std::make_unique<uint8_t[]>(size_t(kChunkBlocks) * bytes));
    // Room for every block on the free list, so a release never allocates.
    if (free.capacity() < allocated()) free.reserve(std::max(allocated(), 2 * free.capacity()));
    for (uint32_t i = kChunkBlocks; i-- > 0;) free.push_back(first + i);  // lowest first out
  }
  const uint32_t b = free.back();
  free.pop_back();
  return b;
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

void PacketBuffer::copy_chain(uint32_t head, uint8_t* data, uint32_t len, Access how) {
  uint32_t cell = head, off = 0;
  while (off < len && cell != kNoCell) {
    const uint32_t n = std::min(m_cfg.cell_bytes, len - off);
    uint32_t& slot = m_block[cell];
    if (how == Access::write) {
      const bool ref = slot & kRefBit;
      const uint32_t ref_len = ref ? ref_of(slot).len : 0;
      // A shorter write over bytes held by reference keeps the rest of them, as
      // a memory does: the block then takes a copy of them first.
      const uint32_t kept = ref && ref_len > n ? ref_len : 0;
      const bool full_needed = std::max(n, kept) > m_pool[kSmall].bytes;
      if (slot == 0 || ref || (full_needed && !(slot & kFullBit))) {
        // A new block: its bytes this write leaves unwritten read as zero,
        // whatever the block held before. A write starts at the cell's first
        // byte, so one too long for a small block overwrites all it held.
        if (slot == 0) {
          ++m_cells_held;
        } else if (!ref) {
          m_pool[kSmall].give(slot - 1);
        }
        Pool& to = m_pool[full_needed ? kFull : kSmall];
        const uint32_t b = to.take();
        if (kept) std::memcpy(to.at(b), ref_of(slot).data, kept);
        if (ref) drop_ref(slot);
        std::memset(to.at(b) + std::max(n, kept), 0, to.bytes - std::max(n, kept));
        slot = (full_needed ? kFullBit : 0) | (b + 1);
      }
      Pool& pl = m_pool[slot & kFullBit ? kFull : kSmall];
      std::memcpy(pl.at((slot & ~kFullBit) - 1), data + off, n);
    } else if (slot == 0) {
      std::memset(data + off, 0, n);
    } else if (slot & kRefBit) {
      // Bytes held by reference: already in place when read into their own storage.
      const Ref& r = ref_of(slot);
      const uint32_t have = std::min(n, r.len);
      if (r.data != data + off) std::memmove(data + off, r.data, have);
      if (have < n) std::memset(data + off + have, 0, n - have);
      if (how == Access::read) {
        drop_ref(slot);
        slot = 0;
        --m_cells_held;
      }
    } else {
      Pool& pl = m_pool[slot & kFullBit ? kFull : kSmall];
      const uint32_t b = (slot & ~kFullBit) - 1;
      const uint32_t have = std::min(n, pl.bytes);
      std::memcpy(data + off, pl.at(b), have);
      if (have < n) std::memset(data + off + have, 0, n - have);  // beyond a small block: never written
      if (how == Access::read) {
        pl.give(b);
        slot = 0;
        --m_cells_held;
      }
    }
    off += n;
    if (off < len) {
      if (!m_links) throw std::logic_error("buffer::PacketBuffer: a transaction beyond one cell without cell links");
      cell = m_links->next_cell(cell);
    }
  }
}

void PacketBuffer::hold_reference(uint32_t cell, const uint8_t* data, uint32_t len) {
  uint32_t i;
  if (!m_refs_free.empty()) {
    i = m_refs_free.back();
    m_refs_free.pop_back();
  } else {
    // A new peak of references held: the table grows (and its free list's
    // room with it, so a release never allocates).
    i = static_cast<uint32_t>(m_refs.size());
    m_refs.emplace_back();
    if (m_refs_free.capacity() < m_refs.capacity()) m_refs_free.reserve(m_refs.capacity());
  }
  m_refs[i] = Ref{data, len};
  ++m_cells_held;
  m_block[cell] = kRefBit | (i + 1);
}
void PacketBuffer::detach(uint32_t cell) {
  if (cell >= m_cfg.total_cells) throw std::out_of_range("buffer::PacketBuffer::detach: no cell " + std::to_string(cell));
  uint32_t& slot = m_block[cell];
  if (!(slot & kRefBit)) return;
  const Ref r = ref_of(slot);
  drop_ref(slot);
  const uint32_t len = r.len;
  const bool full = len > m_pool[kSmall].bytes;
  Pool& to = m_pool[full ? kFull : kSmall];
  const uint32_t b = to.take();
  std::memcpy(to.at(b), r.data, len);
  std::memset(to.at(b) + len, 0, to.bytes - len);
  slot = (full ? kFullBit : 0) | (b + 1);
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
    // By reference only into a cell holding nothing (the switch's head cells
    // come off the free list, read empty): a write over held bytes keeps
    // those it does not cover, so it is a copy.
    if (cc && cc->by_reference && len <= m_cfg.cell_bytes && m_block[head] == 0) {
      hold_reference(head, gp.get_data_ptr(), len);
    } else {
      copy_chain(head, gp.get_data_ptr(), len, Access::write);
    }
    done = reserve_write(t, cells);
    m_stats.write_cells += cells;
  } else if (gp.is_read()) {
    copy_chain(head, gp.get_data_ptr(), len, Access::read);
    done = reserve_read(t, cells);
    m_stats.read_cells += cells;
  } else {
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  delay = core::ps(done > now ? done - now : 0);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum PacketBuffer::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                 sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR("rocesim/buffer", "nb_transport_fw: only BEGIN_REQ (completed at once) is accepted");
    return tlm::TLM_COMPLETED;
  }
  b_transport(gp, delay);
  return tlm::TLM_COMPLETED;
}

bool PacketBuffer::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.allow_none();
  return false;
}

unsigned int PacketBuffer::transport_dbg(tlm::tlm_generic_payload& gp) {
  const uint64_t addr = gp.get_address();
  if (addr % m_cfg.cell_bytes != 0 || addr / m_cfg.cell_bytes >= m_cfg.total_cells) return 0;
  copy_chain(static_cast<uint32_t>(addr / m_cfg.cell_bytes), gp.get_data_ptr(), gp.get_data_length(),
             gp.is_write() ? Access::write : Access::read_keep);
  return gp.get_data_length();
}

}  // namespace rocesim::buffer

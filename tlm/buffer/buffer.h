// Packet buffer memory: the switch's shared cell SRAM as a memory-mapped
// TLM-2.0 target (generic payload, base protocol).
//
// The memory holds total_cells cells of cell_bytes each; cell c lives at
// address c * cell_bytes. A packet occupies ceil(frame bytes / cell_bytes)
// cells linked into a chain through the queue manager's next-cell pointer
// memory (tlm/qm: the free list and the chains are its state, as in a
// linked-list queue manager); the memory follows a chain through CellLinks.
//
// Writes and reads go through `tsck` as generic-payload transactions whose
// address is the packet's head cell and whose data are the packet's real
// header bytes (the payload is held as a length, so it moves no bytes).
//
// Storage: bytes are kept only for cells that hold them. A cell written gets
// a block from a pool (the bytes not written read as zero): a small block of
// kSmallBlockBytes when the write fills no more of the cell (a header: a
// RoCEv2 frame's is 54..78 bytes), else one of cell_bytes (a cell whose
// small block a later, longer write outgrows gets a full one); a
// read transaction (b_transport) hands the bytes out and releases the
// blocks of the cells it read: the packet's cells were freed by the queue
// manager's dequeue before this read, and nothing reads a freed cell's bytes
// again, so a cell read through b_transport holds nothing (reads as zeros)
// until it is written again. The debug transport reads without releasing. A
// cell never written, or released, reads as zeros. So the memory costs one
// block per packet held (its head cell, when its header fits a cell) plus 4
// bytes per cell up to the highest cell used (the block index, in zero
// pages touched only where written), not total_cells * cell_bytes. The
// CellCount extension tells the target how many cells the transaction
// covers: every one of them costs bandwidth. The memory writes
// write_cells_per_cycle and reads read_cells_per_cycle cells per core-clock
// cycle; a transaction is served in arrival order in the first cycles with
// free capacity, and its annotated delay is the time until its last cell is
// done. So a burst from many ports contends for bandwidth, and no process
// wakes per cycle (the calendar is two counters per direction).
//
// Held by reference: a write whose CellCount says by_reference, whose bytes
// fit its head cell, and whose head cell holds nothing, promises that the initiator's bytes stay where
// they are, unchanged, until it reads the cell back (the switch's packet
// object holds its header while the packet is queued). The memory then keeps
// a pointer to them instead of a copy, and a read into that same storage
// moves no bytes; a read into other storage, or a debug read, copies them
// out as from a block. What a transaction returns is the same either way;
// the reference saves two copies and a block per packet on every hop, and
// costs 16 bytes (pointer and length, in a table reused as cells empty) per
// cell that holds one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/time.h"
#include "core/zero_array.h"

namespace rocesim::buffer {

struct BufferConfig {
  uint32_t cell_bytes = 256;
  uint32_t total_cells = 65536;          // 16 MiB of 256 B cells
  uint32_t write_cells_per_cycle = 8;
  uint32_t read_cells_per_cycle = 8;
  uint64_t clock_period_ps = 1000;       // the switch core clock
};

// Generic-payload extension: cells covered by a packet transaction, and how
// far ahead of now the initiator issued it (an egress scheduler reads the
// next packet's cells ahead of the port's frame boundary: lead_ps).
// by_reference (writes only): the initiator's data stay valid and unchanged
// until it reads this address back, so the memory may keep a reference to
// them (see above); honoured when the bytes fit one cell that holds nothing.
struct CellCount : tlm::tlm_extension<CellCount> {
  uint32_t cells = 1;
  uint64_t lead_ps = 0;
  bool by_reference = false;
  tlm::tlm_extension_base* clone() const override { return new CellCount(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    cells = static_cast<const CellCount&>(e).cells;
    lead_ps = static_cast<const CellCount&>(e).lead_ps;
    by_reference = static_cast<const CellCount&>(e).by_reference;
  }
};

struct BufferStats {
  uint64_t write_cells = 0, read_cells = 0;
  uint64_t write_wait_ps = 0, read_wait_ps = 0;  // time transactions waited for bandwidth
};

inline constexpr uint32_t kNoCell = 0xffffffffu;

// The next-cell pointer memory the data path follows (the queue manager's).
class CellLinks {
 public:
  virtual ~CellLinks() = default;
  virtual uint32_t next_cell(uint32_t cell) const = 0;  // kNoCell after a chain's last cell
};

// The memory implements the base protocol's forward interface itself and
// binds its socket to it, so an initiator's b_transport is one virtual call
// (a simple_target_socket would add a dispatch through a member pointer on
// every transaction; two per switch hop).
class PacketBuffer : public sc_core::sc_module, public tlm::tlm_fw_transport_if<> {
 public:
  tlm::tlm_target_socket<32> tsck;

  PacketBuffer(sc_core::sc_module_name name, const BufferConfig& cfg);

  uint32_t cells_for(uint32_t bytes) const { return (bytes + m_cfg.cell_bytes - 1) / m_cfg.cell_bytes; }
  // The chains a transaction's bytes follow beyond its first cell (must be
  // set before a transaction longer than one cell).
  void set_links(const CellLinks* links) { m_links = links; }

  // A by-reference cell's bytes, copied into a block of the memory's own (no
  // bandwidth: a bookkeeping step, not a transaction). The initiator calls it
  // before it reuses their storage without having read the cell back (the
  // switch's PFC watchdog discards queued packets unread), so the cell goes on
  // reading what was written. A cell not held by reference is left as it is.
  void detach(uint32_t cell);

  const BufferConfig& config() const { return m_cfg; }
  const BufferStats& stats() const { return m_stats; }
  // Bytes of a small block (cell_bytes when that is no larger).
  static constexpr uint32_t kSmallBlockBytes = 128;
  // Cells holding bytes now (a copy or a reference), and blocks allocated (held + free in the pools):
  // small ones, full (cell_bytes) ones.
  size_t cells_held() const { return m_cells_held; }
  size_t small_blocks_allocated() const { return m_pool[kSmall].allocated(); }
  size_t full_blocks_allocated() const { return m_pool[kFull].allocated(); }
  size_t blocks_allocated() const { return small_blocks_allocated() + full_blocks_allocated(); }

  // Bandwidth calendar: the time (ps) at which `cells` cells requested at t_ps are done.
  uint64_t reserve_write(uint64_t t_ps, uint32_t cells) { return reserve(m_wr, m_cfg.write_cells_per_cycle, t_ps, cells, m_stats.write_wait_ps); }
  uint64_t reserve_read(uint64_t t_ps, uint32_t cells) { return reserve(m_rd, m_cfg.read_cells_per_cycle, t_ps, cells, m_stats.read_wait_ps); }

 private:
  struct Calendar {
    uint64_t cycle = 0;      // the cycle being filled
    uint32_t used = 0;       // cells already served in that cycle
  };
  uint64_t reserve(Calendar& c, uint32_t per_cycle, uint64_t t_ps, uint32_t cells, uint64_t& wait_ps);
  // tlm_fw_transport_if. nb_transport_fw completes a BEGIN_REQ at once
  // (TLM_COMPLETED, the base protocol's early completion) as b_transport;
  // no DMI is granted (the bytes are not one array).
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override;
  enum class Access { write, read, read_keep };
  // Copies len bytes between data and the chain starting at head; a read
  // (not read_keep) releases the cells' blocks.
  void copy_chain(uint32_t head, uint8_t* data, uint32_t len, Access how);
  // A by-reference write of len <= cell_bytes bytes into cell `cell`.
  void hold_reference(uint32_t cell, const uint8_t* data, uint32_t len);

  // Blocks of one size, in chunks that never move; grown a chunk at a time,
  // only when more blocks are held at once than ever before.
  struct Pool {
    static constexpr uint32_t kChunkBlocks = 64;
    uint32_t bytes = 0;
    std::vector<std::unique_ptr<uint8_t[]>> chunks;
    std::vector<uint32_t> free;
    uint8_t* at(uint32_t b) { return chunks[b / kChunkBlocks].get() + size_t(b % kChunkBlocks) * bytes; }
    uint32_t take();
    void give(uint32_t b) { free.push_back(b); }  // never allocates: free has room for every block
    size_t allocated() const { return chunks.size() * kChunkBlocks; }
  };
  static constexpr uint32_t kSmall = 0, kFull = 1;
  // m_block[cell]: 0 = holds nothing; kRefBit | 1 + an index into m_refs: a
  // reference; else kFullBit for a full block, | 1 + its index in its pool.
  static constexpr uint32_t kFullBit = 0x80000000u;
  static constexpr uint32_t kRefBit = 0x40000000u;

  BufferConfig m_cfg;
  core::ZeroArray<uint32_t> m_block;
  // Bytes held by reference, one entry per cell holding them (not per cell of
  // the memory), reused through m_refs_free (room for all: a release never allocates).
  struct Ref {
    const uint8_t* data = nullptr;
    uint32_t len = 0;
  };
  std::vector<Ref> m_refs;
  std::vector<uint32_t> m_refs_free;
  const Ref& ref_of(uint32_t slot) const { return m_refs[(slot & ~kRefBit) - 1]; }
  void drop_ref(uint32_t slot) { m_refs_free.push_back((slot & ~kRefBit) - 1); }
  Pool m_pool[2];
  size_t m_cells_held = 0;
  const CellLinks* m_links = nullptr;
  Calendar m_wr, m_rd;
  BufferStats m_stats;
};

}  // namespace rocesim::buffer

// The packet buffer memory (tlm/buffer) as buffer.h states it: bytes written
// to a chain come back out of it; bytes never written, or released by a read
// transaction, read as zero; the debug transport reads without releasing;
// and the memory held is one block per cell holding bytes, not
// total_cells * cell_bytes. Expected bytes are the ones each test wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "buffer/buffer.h"
#include "../core/resident.h"

using namespace rocesim;
using testkit::resident_bytes;

namespace {

// Chains of a fixed stride: cell c is followed by c + stride.
struct StrideLinks : buffer::CellLinks {
  uint32_t stride = 1;
  uint32_t next_cell(uint32_t c) const override { return c + stride; }
};

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> isck;
  explicit Initiator(sc_core::sc_module_name n) : sc_module(n), isck("isck") {}
};

// A buffer and an initiator bound to it (names unique per test).
struct Rig {
  buffer::PacketBuffer buf;
  Initiator ini;
  StrideLinks links;
  Rig(const std::string& name, uint32_t total_cells, uint32_t cell_bytes = 256)
      : buf((name + "_buf").c_str(), config(total_cells, cell_bytes)), ini((name + "_ini").c_str()) {
    ini.isck.bind(buf.tsck);
    buf.set_links(&links);
  }
  static buffer::BufferConfig config(uint32_t total, uint32_t cell_bytes) {
    buffer::BufferConfig c;
    c.total_cells = total;
    c.cell_bytes = cell_bytes;
    return c;
  }
  // A write or read of `data` at `cell`, as the switch issues them (CellCount: `cells`).
  tlm::tlm_response_status transport(tlm::tlm_command cmd, uint32_t cell, std::vector<uint8_t>& data, uint32_t cells,
                                     bool by_reference = false) {
    tlm::tlm_generic_payload gp;
    buffer::CellCount cc;
    cc.cells = cells;
    cc.by_reference = by_reference;
    gp.set_extension(&cc);
    gp.set_command(cmd);
    gp.set_address(static_cast<uint64_t>(cell) * buf.config().cell_bytes);
    gp.set_data_ptr(data.data());
    gp.set_data_length(static_cast<unsigned>(data.size()));
    gp.set_streaming_width(static_cast<unsigned>(data.size()));
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ini.isck->b_transport(gp, d);
    gp.clear_extension(&cc);
    return gp.get_response_status();
  }
  std::vector<uint8_t> read(uint32_t cell, uint32_t len, uint32_t cells = 1) {
    std::vector<uint8_t> v(len, 0x5A);  // filled, so zeros must come from the memory
    EXPECT_EQ(transport(tlm::TLM_READ_COMMAND, cell, v, cells), tlm::TLM_OK_RESPONSE);
    return v;
  }
  void write(uint32_t cell, std::vector<uint8_t> v, uint32_t cells = 1) {
    EXPECT_EQ(transport(tlm::TLM_WRITE_COMMAND, cell, v, cells), tlm::TLM_OK_RESPONSE);
  }
  std::vector<uint8_t> debug_read(uint32_t cell, uint32_t len) {
    std::vector<uint8_t> v(len, 0x5A);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(static_cast<uint64_t>(cell) * buf.config().cell_bytes);
    gp.set_data_ptr(v.data());
    gp.set_data_length(len);
    EXPECT_EQ(ini.isck->transport_dbg(gp), len);
    return v;
  }
};

std::vector<uint8_t> pattern(uint32_t len, uint8_t seed) {
  std::vector<uint8_t> v(len);
  for (uint32_t i = 0; i < len; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}


}  // namespace

// A packet's header bytes go into its head cell and come back out; the read
// releases them (the cell then reads as zeros), the debug read does not.
TEST(PacketBuffer, BytesRoundTripAndAReadReleasesThem) {
  Rig r("roundtrip", 1024);
  const std::vector<uint8_t> hdr = pattern(74, 3);
  r.write(5, hdr, 17);
  EXPECT_EQ(r.buf.cells_held(), 1u);
  EXPECT_EQ(r.debug_read(5, 74), hdr);
  EXPECT_EQ(r.buf.cells_held(), 1u);
  EXPECT_EQ(r.read(5, 74, 17), hdr);
  EXPECT_EQ(r.buf.cells_held(), 0u);
  EXPECT_EQ(r.debug_read(5, 74), std::vector<uint8_t>(74, 0));
  // A cell never written reads as zeros too.
  EXPECT_EQ(r.read(900, 40), std::vector<uint8_t>(40, 0));
}

// A cell's bytes not covered by its write read as zero, also when its block
// held another cell's bytes before.
TEST(PacketBuffer, UnwrittenBytesReadAsZero) {
  Rig r("zeros", 64);
  r.write(0, std::vector<uint8_t>(256, 0xAA));
  r.read(0, 256);  // releases cell 0's block: the next write reuses it
  const std::vector<uint8_t> small = pattern(10, 9);
  r.write(1, small);
  std::vector<uint8_t> want(256, 0);
  std::copy(small.begin(), small.end(), want.begin());
  EXPECT_EQ(r.debug_read(1, 256), want);
}

// A transaction longer than a cell follows the chain (here c -> c + 3), and
// each cell on it holds its part.
TEST(PacketBuffer, TransactionsFollowTheChain) {
  Rig r("chain", 64);
  r.links.stride = 3;
  const std::vector<uint8_t> bytes = pattern(600, 1);  // 256 + 256 + 88: cells 0, 3, 6
  r.write(0, bytes, 3);
  EXPECT_EQ(r.buf.cells_held(), 3u);
  // Cell 3 holds bytes 256 .. 511 (a debug read of it alone, no chain beyond 256 B).
  EXPECT_EQ(r.debug_read(3, 256), std::vector<uint8_t>(bytes.begin() + 256, bytes.begin() + 512));
  EXPECT_EQ(r.read(0, 600, 3), bytes);
  EXPECT_EQ(r.buf.cells_held(), 0u);
}

// Memory follows the cells holding bytes, not the cells addressed: 20 000
// packets, one held at a time, each at a head cell 16 cells (4 KiB of
// 256 B cells) past the last, then 1 000 held at once. A flat memory would
// make a page resident for every one of them: 20 000 * 4 KiB = 80 MB.
TEST(PacketBuffer, MemoryFollowsCellsHeldNotCellsAddressed) {
  constexpr uint32_t kCells = 1u << 24;  // 4 GiB of cells
  const long before = resident_bytes();
  ASSERT_GT(before, 0);
  Rig r("sparse", kCells);
  for (uint32_t i = 0; i < 20000; ++i) {
    const std::vector<uint8_t> hdr = pattern(74, static_cast<uint8_t>(i));
    r.write(i * 16, hdr, 17);
    ASSERT_EQ(r.read(i * 16, 74, 17), hdr) << i;
  }
  const size_t one_at_a_time = r.buf.blocks_allocated();
  EXPECT_GE(one_at_a_time, 1u);
  EXPECT_LE(one_at_a_time, 256u);  // one block in use at a time: the pool's first chunk serves them all
  for (uint32_t i = 0; i < 1000; ++i) r.write(i * 16, pattern(74, 1), 17);
  EXPECT_EQ(r.buf.cells_held(), 1000u);
  EXPECT_GE(r.buf.blocks_allocated(), 1000u);
  EXPECT_LE(r.buf.blocks_allocated(), 1000u + 256u);
  // 1 000 blocks of 256 B plus the 4-byte block index of the cells up to
  // 320 000 (1.3 MB of index pages): far below 80 MB.
  EXPECT_LT(resident_bytes() - before, 8l << 20);
}

// A header-sized write takes a small block; a longer one into the same cell
// (held, not read) moves it to a full block, and what that write leaves
// unwritten reads as zero. 128 B is the small block (buffer.h).
TEST(PacketBuffer, SmallBlocksForHeadersFullBlocksBeyond) {
  Rig r("classes", 64);
  r.write(4, pattern(74, 2));
  EXPECT_GT(r.buf.small_blocks_allocated(), 0u);
  EXPECT_EQ(r.buf.full_blocks_allocated(), 0u);
  const std::vector<uint8_t> longer = pattern(200, 5);
  r.write(4, longer);
  EXPECT_GT(r.buf.full_blocks_allocated(), 0u);
  EXPECT_EQ(r.buf.cells_held(), 1u);
  std::vector<uint8_t> want(256, 0);
  std::copy(longer.begin(), longer.end(), want.begin());
  EXPECT_EQ(r.debug_read(4, 256), want);
  // A short write into a cell with a full block keeps the rest of it, as a memory does.
  const std::vector<uint8_t> shorter = pattern(20, 8);
  r.write(4, shorter);
  std::copy(shorter.begin(), shorter.end(), want.begin());
  EXPECT_EQ(r.read(4, 256), want);
  EXPECT_EQ(r.buf.cells_held(), 0u);
}

// Held by reference (buffer.h): a by-reference write into an empty cell keeps
// a pointer, not a copy (no block is taken), and every read returns what was
// written: into the lent storage itself (the switch's case), into other
// storage, and through the debug transport. The read releases the cell.
TEST(PacketBuffer, ByReferenceWritesReadBackAsCopiesDoWithoutABlock) {
  Rig r("byref", 64);
  std::vector<uint8_t> lent = pattern(74, 4);
  const std::vector<uint8_t> want = lent;
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 3, lent, 17, true), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(r.buf.cells_held(), 1u);
  EXPECT_EQ(r.buf.blocks_allocated(), 0u);  // a copy would have taken a small block
  EXPECT_EQ(r.debug_read(3, 74), want);
  // Longer than the write: the rest of the cell reads as zero, as for a copy.
  std::vector<uint8_t> want_long(100, 0);
  std::copy(want.begin(), want.end(), want_long.begin());
  EXPECT_EQ(r.debug_read(3, 100), want_long);
  // A read into the lent storage itself leaves the bytes as they are.
  ASSERT_EQ(r.transport(tlm::TLM_READ_COMMAND, 3, lent, 17), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(lent, want);
  EXPECT_EQ(r.buf.cells_held(), 0u);
  EXPECT_EQ(r.debug_read(3, 74), std::vector<uint8_t>(74, 0));
  // Into other storage: the bytes are copied out (that storage held 0x5A).
  std::vector<uint8_t> lent2 = pattern(60, 9);
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 3, lent2, 1, true), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(r.read(3, 60), pattern(60, 9));
  EXPECT_EQ(r.buf.blocks_allocated(), 0u);
}

// Where a reference would change what the memory returns, the write is a
// copy: bytes longer than a cell, or a cell already holding bytes (a shorter
// write keeps the rest of them). A copy write over a by-reference cell keeps
// the referenced bytes it does not cover, and detach() makes the memory's
// own copy so that the lent storage can change underneath.
TEST(PacketBuffer, ByReferenceFallsBackToCopiesWhereAMemoryWouldDiffer) {
  Rig r("byref_copy", 64);
  // Longer than a cell: copied into the chain (cells 0 and 1).
  std::vector<uint8_t> big = pattern(300, 2);
  const std::vector<uint8_t> big_want = big;
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 0, big, 2, true), tlm::TLM_OK_RESPONSE);
  std::fill(big.begin(), big.end(), 0);  // the initiator reuses its storage: a copy does not care
  EXPECT_EQ(r.read(0, 300, 2), big_want);

  // Over a cell holding a copy: the write keeps the bytes beyond its own.
  r.write(5, pattern(90, 1));
  std::vector<uint8_t> shorter = pattern(30, 7);
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 5, shorter, 1, true), tlm::TLM_OK_RESPONSE);
  std::vector<uint8_t> want = pattern(90, 1);
  std::copy(shorter.begin(), shorter.end(), want.begin());
  std::fill(shorter.begin(), shorter.end(), 0);
  EXPECT_EQ(r.read(5, 90), want);

  // A copy write over a by-reference cell keeps the referenced bytes beyond it.
  std::vector<uint8_t> lent = pattern(100, 3);
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 7, lent, 1, true), tlm::TLM_OK_RESPONSE);
  const std::vector<uint8_t> over = pattern(40, 11);
  r.write(7, over);
  std::vector<uint8_t> want7 = pattern(100, 3);
  std::copy(over.begin(), over.end(), want7.begin());
  std::fill(lent.begin(), lent.end(), 0);  // no longer referenced
  EXPECT_EQ(r.read(7, 100), want7);

  // detach(): the lent storage changes afterwards, the cell does not.
  std::vector<uint8_t> lent2 = pattern(200, 6);
  ASSERT_EQ(r.transport(tlm::TLM_WRITE_COMMAND, 9, lent2, 1, true), tlm::TLM_OK_RESPONSE);
  r.buf.detach(9);
  std::fill(lent2.begin(), lent2.end(), 0xEE);
  EXPECT_EQ(r.read(9, 200), pattern(200, 6));
  EXPECT_EQ(r.buf.cells_held(), 0u);
  EXPECT_THROW(r.buf.detach(64), std::out_of_range);
}

// The base protocol's other calls: nb_transport_fw completes a BEGIN_REQ at
// once (TLM_COMPLETED, IEEE 1666-2011 15.2: early completion) with the
// effect and delay b_transport gives; the memory grants no DMI.
TEST(PacketBuffer, NbTransportCompletesAtOnceAndNoDmiIsGranted) {
  Rig r("nb", 64);
  std::vector<uint8_t> hdr = pattern(60, 11);
  tlm::tlm_generic_payload gp;
  buffer::CellCount cc;
  cc.cells = 17;
  gp.set_extension(&cc);
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(3u * r.buf.config().cell_bytes);
  gp.set_data_ptr(hdr.data());
  gp.set_data_length(static_cast<unsigned>(hdr.size()));
  gp.set_streaming_width(static_cast<unsigned>(hdr.size()));
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  tlm::tlm_phase ph = tlm::BEGIN_REQ;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  EXPECT_EQ(r.ini.isck->nb_transport_fw(gp, ph, d), tlm::TLM_COMPLETED);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
  // 17 cells at 8 cells per 1 ns cycle from t = 0: the third cycle ends at 3 ns.
  const buffer::BufferConfig& c = r.buf.config();
  const uint64_t cycles = (17 + c.write_cells_per_cycle - 1) / c.write_cells_per_cycle;
  EXPECT_EQ(d.value(), cycles * c.clock_period_ps);
  gp.clear_extension(&cc);
  EXPECT_EQ(r.read(3, 60), hdr);

  tlm::tlm_dmi dmi;
  EXPECT_FALSE(r.ini.isck->get_direct_mem_ptr(gp, dmi));
  EXPECT_EQ(dmi.get_granted_access(), tlm::tlm_dmi::DMI_ACCESS_NONE);
}

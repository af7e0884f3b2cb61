// The packet buffer memory (tlm/buffer) as buffer.h states it: bytes written
// to a chain come back out of it; bytes never written, or released by a read
// transaction, read as zero; the debug transport reads without releasing;
// and the memory held is one block per cell holding bytes, not
// total_cells * cell_bytes. Expected bytes are the ones each test wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
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
  tlm::tlm_response_status transport(tlm::tlm_command cmd, uint32_t cell, std::vector<uint8_t>& data, uint32_t cells) {
    tlm::tlm_generic_payload gp;
    buffer::CellCount cc;
    cc.cells = cells;
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

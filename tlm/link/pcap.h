// Nanosecond pcap writer (magic 0xa1b23c4d, LINKTYPE_ETHERNET).
// Records hold the frame without FCS (as a capturing NIC delivers it) and are
// time-stamped at the first bit of the frame on the wire, truncated to the ns.
// A snap length truncates each record to its first `snaplen` bytes (the
// record's original length stays the frame's, as tcpdump -s writes it);
// kSnapHeaders keeps each frame's headers only (hdr_len bytes: Ethernet up to
// and including the last transport header, no payload, no ICRC).
// Memory per writer: a 64 KiB stdio buffer plus one frame.
// The file is written as NAME.partial and renamed to NAME by close(), so an
// interrupted run never leaves a capture that looks complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "packet/packet.h"

namespace rocesim::link {

// What sees every frame a MAC sends or receives, stamped with the exact
// picosecond of its first bit on the wire: a capture file, or a probe (a
// test's, a tracer's). A MAC calls it with no tap set at the cost of one
// null check.
class FrameTap {
 public:
  virtual ~FrameTap() = default;
  virtual void write(uint64_t ts_ps, const packet::Packet& p) = 0;
};

class PcapWriter : public FrameTap {
 public:
  static constexpr uint32_t kSnapFull = 65535;   // the whole frame (pcap's customary maximum)
  static constexpr uint32_t kSnapHeaders = 0;    // headers only
  // snaplen: kSnapHeaders, or 1..kSnapFull bytes per record.
  explicit PcapWriter(std::string path, uint32_t snaplen = kSnapFull);
  ~PcapWriter() override;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Opens NAME.partial and writes the global header; false (with errno set) on failure.
  bool open();
  void write(uint64_t ts_ps, const packet::Packet& p) override;
  // Flushes, closes and renames to the final name. Returns false on an I/O error.
  bool close();

  const std::string& path() const { return m_path; }
  uint64_t records() const { return m_records; }
  uint32_t snaplen() const { return m_snaplen; }

 private:
  std::string m_path;
  std::FILE* m_file = nullptr;
  uint32_t m_snaplen = kSnapFull;
  std::vector<uint8_t> m_scratch;  // one frame, reused (grows to the largest frame seen)
  std::vector<char> m_iobuf;
  uint64_t m_records = 0;
  bool m_error = false;
};

}  // namespace rocesim::link

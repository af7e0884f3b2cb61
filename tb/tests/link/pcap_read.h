// The tests' own reader of the capture files rocesim writes: the libpcap
// file format with nanosecond timestamps (global header magic 0xa1b23c4d,
// little-endian), read independently of tlm/link/pcap.cpp. One reader for
// every test that looks at a capture; callers filter the records.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace testkit {

struct PcapRecord {
  uint64_t ns = 0;        // ts_sec * 10^9 + ts_nsec
  uint32_t incl_len = 0;  // bytes kept in the file
  uint32_t orig_len = 0;  // bytes of the frame on the wire
  std::string data;       // incl_len bytes
};

struct PcapFile {
  bool opened = false;
  uint32_t magic = 0, snaplen = 0, linktype = 0;
  std::vector<PcapRecord> records;
  size_t file_bytes = 0;
  size_t parsed_bytes = 0;  // up to the end of the last whole record (== file_bytes when none is cut)
};

inline uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(s[at + static_cast<size_t>(i)]);
  return v;
}

// Reads the whole file: the global header (24 bytes), then records of a
// 16-byte header and incl_len bytes, while a whole record remains.
inline PcapFile read_pcap(const std::string& path) {
  PcapFile f;
  std::ifstream in(path, std::ios::binary);
  if (!in) return f;
  const std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  f.opened = true;
  f.file_bytes = t.size();
  if (t.size() < 24) return f;
  f.magic = le32(t, 0);
  f.snaplen = le32(t, 16);
  f.linktype = le32(t, 20);
  size_t at = 24;
  while (at + 16 <= t.size()) {
    PcapRecord r;
    r.ns = static_cast<uint64_t>(le32(t, at)) * 1000000000ull + le32(t, at + 4);
    r.incl_len = le32(t, at + 8);
    r.orig_len = le32(t, at + 12);
    if (at + 16 + r.incl_len > t.size()) break;
    r.data = t.substr(at + 16, r.incl_len);
    f.records.push_back(std::move(r));
    at += 16 + f.records.back().incl_len;
  }
  f.parsed_bytes = at;
  return f;
}

}  // namespace testkit

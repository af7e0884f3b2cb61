#include "link/pcap.h"

#include <algorithm>
#include <cstring>

namespace rocesim::link {

namespace {
void put32(uint8_t* b, uint32_t v) { std::memcpy(b, &v, 4); }  // host order, as the magic tells readers
void put16(uint8_t* b, uint16_t v) { std::memcpy(b, &v, 2); }
}  // namespace

// 64 KiB of stdio buffer: a few hundred frames per write(2), and 1 280
// writers (every port of a 640-port fabric, both directions) in 90 MB.
PcapWriter::PcapWriter(std::string path, uint32_t snaplen)
    : m_path(std::move(path)), m_snaplen(std::min(snaplen, kSnapFull)), m_scratch(2048), m_iobuf(64 << 10) {}

PcapWriter::~PcapWriter() {
  if (m_file) std::fclose(m_file);  // left as .partial: the run did not finish
}

bool PcapWriter::open() {
  m_file = std::fopen((m_path + ".partial").c_str(), "wb");
  if (!m_file) return false;
  std::setvbuf(m_file, m_iobuf.data(), _IOFBF, m_iobuf.size());
  uint8_t gh[24];
  put32(gh + 0, 0xa1b23c4d);  // nanosecond-resolution pcap
  put16(gh + 4, 2);
  put16(gh + 6, 4);
  put32(gh + 8, 0);   // thiszone
  put32(gh + 12, 0);  // sigfigs
  // Headers only: no record is longer than the largest header the model builds.
  put32(gh + 16, m_snaplen == kSnapHeaders ? static_cast<uint32_t>(packet::Packet::kMaxHdr) : m_snaplen);
  put32(gh + 20, 1);  // LINKTYPE_ETHERNET
  if (std::fwrite(gh, sizeof gh, 1, m_file) != 1) m_error = true;
  return !m_error;
}

void PcapWriter::write(uint64_t ts_ps, const packet::Packet& p) {
  if (!m_file) return;
  const uint32_t orig = p.frame_len_no_fcs();
  if (m_scratch.size() < orig) m_scratch.resize(orig);
  size_t incl = p.serialize(m_scratch.data(), m_scratch.size());
  incl = std::min<size_t>(incl, m_snaplen == kSnapHeaders ? p.hdr_len : m_snaplen);
  const uint64_t ns = ts_ps / 1000;
  uint8_t rh[16];
  put32(rh + 0, static_cast<uint32_t>(ns / 1000000000ull));
  put32(rh + 4, static_cast<uint32_t>(ns % 1000000000ull));
  put32(rh + 8, static_cast<uint32_t>(incl));
  put32(rh + 12, orig);
  if (std::fwrite(rh, sizeof rh, 1, m_file) != 1 || std::fwrite(m_scratch.data(), 1, incl, m_file) != incl)
    m_error = true;
  ++m_records;
}

bool PcapWriter::close() {
  if (!m_file) return !m_error;
  if (std::fclose(m_file) != 0) m_error = true;
  m_file = nullptr;
  if (!m_error && std::rename((m_path + ".partial").c_str(), m_path.c_str()) != 0) m_error = true;
  return !m_error;
}

}  // namespace rocesim::link

// Flow record writers: JSON lines and IPFIX (RFC 7011 / RFC 5655). See export.h.
#include "analytics/export.h"

#include <cassert>
#include <cinttypes>
#include <cstring>

namespace rocesim::analytics {

namespace {

constexpr uint64_t kNsPerS = 1'000'000'000ull;
constexpr uint64_t kNtpUnixOffsetS = 2'208'988'800ull;  // 1900-01-01 to 1970-01-01 (RFC 5905)
constexpr size_t kMsgHdr = 16, kSetHdr = 4;

// Field specifiers of template 256, in record order (RFC 7011 3.2).
struct Field {
  uint16_t id;
  uint16_t len;
  uint32_t pen;  // 0: IANA
};
constexpr Field kFields[] = {
    {8, 4, 0},    {12, 4, 0},   {156, 8, 0},  {157, 8, 0},  {136, 1, 0},
    {2, 8, 0},    {1, 8, 0},    {10, 4, 0},
    {2, 8, kReversePen}, {1, 8, kReversePen}, {10, 4, kReversePen},
    {ipfix_ie::kClientQp, 4, kIpfixPen}, {ipfix_ie::kServerQp, 4, kIpfixPen},
    {ipfix_ie::kNaks[0], 4, kIpfixPen}, {ipfix_ie::kNaks[1], 4, kIpfixPen},
    {ipfix_ie::kOtherNaks[0], 4, kIpfixPen}, {ipfix_ie::kOtherNaks[1], 4, kIpfixPen},
    {ipfix_ie::kRttAvgNs[0], 8, kIpfixPen}, {ipfix_ie::kRttAvgNs[1], 8, kIpfixPen},
    {ipfix_ie::kRttSamples[0], 4, kIpfixPen}, {ipfix_ie::kRttSamples[1], 4, kIpfixPen},
    {ipfix_ie::kThroughputBps[0], 8, kIpfixPen}, {ipfix_ie::kThroughputBps[1], 8, kIpfixPen},
    {ipfix_ie::kThroughputMaxBps[0], 8, kIpfixPen}, {ipfix_ie::kThroughputMaxBps[1], 8, kIpfixPen},
    {ipfix_ie::kRetxPackets[0], 8, kIpfixPen}, {ipfix_ie::kRetxPackets[1], 8, kIpfixPen},
    {ipfix_ie::kPortChanges[0], 4, kIpfixPen}, {ipfix_ie::kPortChanges[1], 4, kIpfixPen},
    {ipfix_ie::kEstablished, 1, kIpfixPen},
    {ipfix_ie::kLossTimeFirst[0] + 0, 8, kIpfixPen}, {ipfix_ie::kLossTimeFirst[0] + 1, 8, kIpfixPen},
    {ipfix_ie::kLossTimeFirst[0] + 2, 8, kIpfixPen}, {ipfix_ie::kLossTimeFirst[0] + 3, 8, kIpfixPen},
    {ipfix_ie::kLossTimeFirst[1] + 0, 8, kIpfixPen}, {ipfix_ie::kLossTimeFirst[1] + 1, 8, kIpfixPen},
    {ipfix_ie::kLossTimeFirst[1] + 2, 8, kIpfixPen}, {ipfix_ie::kLossTimeFirst[1] + 3, 8, kIpfixPen},
};
static_assert(kMaxLossTimes == 4, "the template lists kMaxLossTimes loss-time fields per direction");
constexpr size_t kFieldCount = sizeof kFields / sizeof kFields[0];

constexpr size_t record_len() {
  size_t n = 0;
  for (const Field& f : kFields) n += f.len;
  return n;
}
constexpr size_t template_set_len() {
  size_t n = kSetHdr + 4;  // set header, template record header
  for (const Field& f : kFields) n += f.pen ? 8 : 4;
  return n;
}

struct Out {
  uint8_t* p;
  void u8(uint8_t v) { *p++ = v; }
  void u16(uint16_t v) { u8(uint8_t(v >> 8)), u8(uint8_t(v)); }
  void u32(uint32_t v) { u16(uint16_t(v >> 16)), u16(uint16_t(v)); }
  void u64(uint64_t v) { u32(uint32_t(v >> 32)), u32(uint32_t(v)); }
};

// dateTimeNanoseconds (RFC 7011 6.1.10): NTP seconds since 1900, fraction of
// 2^-32 s. The fraction is rounded up: ns * 2^32 / 10^9 is then exact to
// within 0.24 ns above, so a reader converting back and rounding down (as
// Wireshark does) gets the ns written.
uint64_t ntp_time(uint64_t epoch_unix_s, uint64_t ns) {
  const uint64_t s = epoch_unix_s + ns / kNsPerS + kNtpUnixOffsetS;
  const uint64_t frac = (((ns % kNsPerS) << 32) + kNsPerS - 1) / kNsPerS;
  return s << 32 | frac;
}

void put_ip(char*& o, char* end, uint32_t ip) {
  const int n = std::snprintf(o, size_t(end - o), "\"%u.%u.%u.%u\"", ip >> 24, (ip >> 16) & 255u, (ip >> 8) & 255u,
                              ip & 255u);
  o += n > 0 && o + n < end ? n : 0;
}

}  // namespace

uint8_t ipfix_end_reason(ExportReason r) {
  switch (r) {  // IANA "flowEndReason" values
    case ExportReason::idle: return 1;          // idle timeout
    case ExportReason::active: return 2;        // active timeout
    case ExportReason::end_detected: return 3;  // end of flow detected
    case ExportReason::forced: return 4;        // forced end
  }
  return 0;
}

// ---------------------------------------------------------------- JSON lines

size_t JsonlWriter::format(const FlowRecord& r, char* buf, size_t cap) {
  char* o = buf;
  char* const end = buf + cap;
  auto add = [&](const char* fmt, auto... v) {
    if (o >= end) return;
    const int n = std::snprintf(o, size_t(end - o), fmt, v...);
    if (n > 0) o = o + n < end ? o + n : end - 1;
  };
  add("{\"domain\":%u,\"server_ip\":", r.domain_id);
  put_ip(o, end, r.server_ip);
  add("%s", ",\"client_ip\":");
  put_ip(o, end, r.client_ip);
  add(",\"client_qp\":%u,\"server_qp\":%u,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"export_ns\":%" PRIu64
      ",\"reason\":\"%s\",\"established\":%s",
      r.client_qp, r.server_qp, r.start_ns, r.end_ns, r.export_ns, export_reason_name(r.reason),
      r.established ? "true" : "false");
  static const char* const kDirName[2] = {"c2s", "s2c"};
  for (int i = 0; i < 2; ++i) {
    const DirRecord& d = r.dir[i];
    add(",\"%s\":{\"packets\":%" PRIu64 ",\"octets\":%" PRIu64 ",\"data_packets\":%" PRIu64
        ",\"payload_bytes\":%" PRIu64 ",\"retx_packets\":%" PRIu64 ",\"naks\":%u,\"other_naks\":%u,\"loss_ns\":[",
        kDirName[i], d.packets, d.octets, d.data_packets, d.payload_bytes, d.retx_packets, d.naks, d.other_naks);
    for (uint32_t k = 0; k < d.loss_count; ++k) add(k ? ",%" PRIu64 : "%" PRIu64, d.loss_ns[k]);
    add("%s", "]");
    if (d.rtt_valid) add(",\"rtt_avg_ns\":%" PRIu64, d.rtt_avg_ns);
    else add("%s", ",\"rtt_avg_ns\":null");
    add(",\"rtt_samples\":%u,\"large\":%s", d.rtt_samples, d.large ? "true" : "false");
    if (d.throughput_valid)
      add(",\"throughput_bps\":%" PRIu64 ",\"throughput_max_bps\":%" PRIu64, d.throughput_bps, d.throughput_max_bps);
    else add("%s", ",\"throughput_bps\":null,\"throughput_max_bps\":null");
    if (d.ingress_port != kNoPort) add(",\"ingress_port\":%u", d.ingress_port);
    else add("%s", ",\"ingress_port\":null");
    add(",\"port_changes\":%u}", d.port_changes);
  }
  add("%s", "}");
  return size_t(o - buf);
}

void JsonlWriter::write(const FlowRecord& r) {
  char buf[2048];
  const size_t n = format(r, buf, sizeof buf);
  std::fwrite(buf, 1, n, m_out);
  std::fputc('\n', m_out);
}

// ---------------------------------------------------------------- IPFIX

size_t IpfixWriter::record_bytes() { return record_len(); }

IpfixWriter::IpfixWriter(std::FILE* out, uint32_t max_message_bytes, uint64_t epoch_unix_s)
    : m_out(out), m_max(max_message_bytes), m_epoch(epoch_unix_s) {
  // A message must hold the template set and one record; the length field is 16 bits.
  const size_t min = kMsgHdr + template_set_len() + kSetHdr + record_len();
  if (m_max < min) m_max = uint32_t(min);
  if (m_max > 65535) m_max = 65535;
}

IpfixWriter::~IpfixWriter() { flush(); }

IpfixWriter::Domain& IpfixWriter::domain(uint32_t id) {
  for (Domain& d : m_domains)
    if (d.id == id) return d;
  m_domains.emplace_back();
  Domain& d = m_domains.back();
  d.id = id;
  d.buf.reserve(m_max);
  return d;
}

void IpfixWriter::begin(Domain& d) {
  d.buf.assign(kMsgHdr, 0);  // header filled by emit()
  if (!d.template_sent) {
    const size_t n = template_set_len();
    const size_t at = d.buf.size();
    d.buf.resize(at + n);
    Out o{d.buf.data() + at};
    o.u16(2);  // set id 2: template set
    o.u16(uint16_t(n));
    o.u16(kIpfixTemplateId);
    o.u16(uint16_t(kFieldCount));
    for (const Field& f : kFields) {
      o.u16(uint16_t(f.pen ? 0x8000u | f.id : f.id));  // enterprise bit (RFC 7011 3.2)
      o.u16(f.len);
      if (f.pen) o.u32(f.pen);
    }
    d.template_sent = true;
  }
  const size_t at = d.buf.size();
  d.buf.resize(at + kSetHdr);  // data set header, length filled by emit()
  Out o{d.buf.data() + at};
  o.u16(kIpfixTemplateId);
  d.records = 0;
}

void IpfixWriter::write(const FlowRecord& r) {
  Domain& d = domain(r.domain_id);
  if (d.buf.empty()) begin(d);
  if (d.buf.size() + record_len() > m_max) {
    emit(d);
    begin(d);
  }
  const size_t at = d.buf.size();
  d.buf.resize(at + record_len());
  Out o{d.buf.data() + at};
  o.u32(r.client_ip);
  o.u32(r.server_ip);
  o.u64(ntp_time(m_epoch, r.start_ns));
  o.u64(ntp_time(m_epoch, r.end_ns));
  o.u8(ipfix_end_reason(r.reason));
  for (int i = 0; i < 2; ++i) {
    o.u64(r.dir[i].packets);
    o.u64(r.dir[i].octets);
    o.u32(r.dir[i].ingress_port);  // kNoPort (0xffffffff): none seen
  }
  o.u32(r.client_qp);
  o.u32(r.server_qp);
  for (int i = 0; i < 2; ++i) o.u32(r.dir[i].naks);
  for (int i = 0; i < 2; ++i) o.u32(r.dir[i].other_naks);
  for (int i = 0; i < 2; ++i) o.u64(r.dir[i].rtt_valid ? r.dir[i].rtt_avg_ns : 0);
  for (int i = 0; i < 2; ++i) o.u32(r.dir[i].rtt_samples);
  for (int i = 0; i < 2; ++i) o.u64(r.dir[i].throughput_valid ? r.dir[i].throughput_bps : 0);
  for (int i = 0; i < 2; ++i) o.u64(r.dir[i].throughput_valid ? r.dir[i].throughput_max_bps : 0);
  for (int i = 0; i < 2; ++i) o.u64(r.dir[i].retx_packets);
  for (int i = 0; i < 2; ++i) o.u32(r.dir[i].port_changes);
  o.u8(r.established ? 1 : 0);
  for (int i = 0; i < 2; ++i)
    for (size_t k = 0; k < kMaxLossTimes; ++k) o.u64(k < r.dir[i].loss_count ? r.dir[i].loss_ns[k] : 0);
  assert(o.p == d.buf.data() + d.buf.size());
  ++d.records;
  d.last_ns = r.export_ns;
}

void IpfixWriter::emit(Domain& d) {
  if (d.buf.empty() || d.records == 0) return;
  uint8_t* b = d.buf.data();
  Out h{b};
  h.u16(10);  // IPFIX version (RFC 7011 3.1)
  h.u16(uint16_t(d.buf.size()));
  h.u32(uint32_t(m_epoch + d.last_ns / kNsPerS));
  h.u32(d.sequence);
  h.u32(d.id);
  // The data set is the last set of the message.
  const size_t data_at = d.buf.size() - d.records * record_len() - kSetHdr;
  Out s{b + data_at + 2};
  s.u16(uint16_t(d.buf.size() - data_at));
  std::fwrite(b, 1, d.buf.size(), m_out);
  d.sequence += d.records;
  d.buf.clear();
  d.records = 0;
  ++m_messages;
}

void IpfixWriter::flush() {
  for (Domain& d : m_domains) emit(d);
  std::fflush(m_out);
}

}  // namespace rocesim::analytics

// Flow record writers (analyzer.h's RecordSink): JSON lines and IPFIX.
// Every field is described in docs/analytics.md.
//
// JsonlWriter: one JSON object per line per record, keys in a fixed order.
//
// IpfixWriter: IPFIX (RFC 7011) messages written back to back, which is an
// IPFIX file (RFC 5655 section 5: a serialized stream of messages; tshark -r
// opens it). Each record's domain_id is its observation domain (one per
// switch). A domain's first message carries the template set (template 256)
// before its data set, so the file is readable from the start; afterwards a
// message carries one data set of up to as many records as fit in
// max_message_bytes. The header's sequence number is the number of data
// records of that domain in earlier messages (RFC 7011 3.1); its export time
// is epoch_unix_s plus the simulated time of the message's last record, in
// seconds. Times in the records are dateTimeNanoseconds (RFC 7011 6.1.10: NTP
// format, seconds since 1900 and a 2^-32 s fraction) of epoch_unix_s + the
// simulated time.
//
// The template (field order as written):
//   standard IANA IEs       sourceIPv4Address(8) = client IP,
//                           destinationIPv4Address(12) = server IP,
//                           flowStartNanoseconds(156), flowEndNanoseconds(157),
//                           flowEndReason(136), packetDeltaCount(2),
//                           octetDeltaCount(1), ingressInterface(10) of c2s
//   reverse IEs (RFC 5103, PEN 29305): packetDeltaCount, octetDeltaCount,
//                           ingressInterface of s2c (the biflow's reverse:
//                           the client initiated the connection)
//   enterprise IEs, PEN 32473 (RFC 5612: the IANA PEN for documentation; a
//                           deployment would use its own), numbered in
//                           ipfix_ie below.
// Records are buffered per domain; flush() writes the pending messages (the
// destructor does too). Writing never allocates after a domain's first record.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "analytics/analyzer.h"

namespace rocesim::analytics {

inline constexpr uint32_t kIpfixPen = 32473;         // RFC 5612: example PEN for documentation
inline constexpr uint32_t kReversePen = 29305;       // RFC 5103: reverse information elements
inline constexpr uint16_t kIpfixTemplateId = 256;

// Enterprise-specific information element ids (PEN kIpfixPen). c2s/s2c as
// in analyzer.h. Loss times are slots 1..kMaxLossTimes (0: unused).
namespace ipfix_ie {
inline constexpr uint16_t kClientQp = 1, kServerQp = 2;              // unsigned32
inline constexpr uint16_t kNaks[2] = {3, 4};                         // unsigned32
inline constexpr uint16_t kOtherNaks[2] = {5, 6};                    // unsigned32
inline constexpr uint16_t kRttAvgNs[2] = {7, 8};                     // unsigned64, 0: no sample
inline constexpr uint16_t kRttSamples[2] = {9, 10};                  // unsigned32
inline constexpr uint16_t kThroughputBps[2] = {11, 12};              // unsigned64, 0: none
inline constexpr uint16_t kThroughputMaxBps[2] = {13, 14};           // unsigned64
inline constexpr uint16_t kRetxPackets[2] = {15, 16};                // unsigned64
inline constexpr uint16_t kPortChanges[2] = {17, 18};                // unsigned32
inline constexpr uint16_t kEstablished = 19;                         // unsigned8: 1 RTU seen
inline constexpr uint16_t kLossTimeFirst[2] = {20, 20 + kMaxLossTimes};  // unsigned64 ns, kMaxLossTimes each
}  // namespace ipfix_ie

// flowEndReason (IANA IPFIX registry, IE 136) for an export reason.
uint8_t ipfix_end_reason(ExportReason r);

class JsonlWriter : public RecordSink {
 public:
  explicit JsonlWriter(std::FILE* out) : m_out(out) {}
  void write(const FlowRecord& r) override;
  // The line for r (no newline) into buf; returns its length (truncated to cap-1).
  static size_t format(const FlowRecord& r, char* buf, size_t cap);

 private:
  std::FILE* m_out;
};

class IpfixWriter : public RecordSink {
 public:
  explicit IpfixWriter(std::FILE* out, uint32_t max_message_bytes = 1400, uint64_t epoch_unix_s = 0);
  ~IpfixWriter() override;
  IpfixWriter(const IpfixWriter&) = delete;
  IpfixWriter& operator=(const IpfixWriter&) = delete;

  void write(const FlowRecord& r) override;
  void flush();
  uint64_t messages() const { return m_messages; }
  static size_t record_bytes();  // bytes of one data record

 private:
  struct Domain {
    uint32_t id = 0;
    uint32_t sequence = 0;        // data records in earlier messages
    bool template_sent = false;
    std::vector<uint8_t> buf;     // the message being filled
    uint32_t records = 0;         // in buf
    uint64_t last_ns = 0;
  };
  Domain& domain(uint32_t id);
  void begin(Domain& d);
  void emit(Domain& d);

  std::FILE* m_out;
  uint32_t m_max;
  uint64_t m_epoch;
  std::vector<Domain> m_domains;
  uint64_t m_messages = 0;
};

}  // namespace rocesim::analytics

// Frames for the analytics tests, built with the model's own builders
// (tlm/packet/build.h) the way the NIC (tb/host/host.cpp) builds them: CM
// REQ/REP/RTU to QP1 with the client's comm id 2*id+1 and the server's
// 2*id+2, LocalQPN = the sender's QP; data to the peer's QP; ACK/NAK with an
// AETH to the requester's QP. And a sink that keeps the records.
#pragma once

#include <cstdint>
#include <vector>

#include "analytics/analyzer.h"
#include "packet/build.h"
#include "packet/packet.h"

namespace rocesim::analytics::test {

namespace pk = rocesim::packet;

struct Conn {
  uint32_t id = 0;
  uint32_t client_ip = 0, server_ip = 0;
  uint32_t client_qp = 0, server_qp = 0;
};

// Connection n between client 10.0.0.(1+n%200) and server 10.1.0.(1+n%200), QPs 0x100+n / 0x200+n.
inline Conn conn(uint32_t n) {
  Conn c;
  c.id = n;
  c.client_ip = 0x0a000001u + n % 200;
  c.server_ip = 0x0a010001u + n % 200;
  c.client_qp = 0x100 + n;
  c.server_qp = 0x200 + n;
  return c;
}

inline pk::EthSpec eth() {
  pk::EthSpec e;
  e.dst = 0x020000000002ull;
  e.src = 0x020000000001ull;
  return e;
}

inline pk::Ipv4Spec ip(uint32_t src, uint32_t dst) {
  pk::Ipv4Spec i;
  i.src = src;
  i.dst = dst;
  return i;
}

// CM MAD: attr REQ/RTU from the client, REP from the server.
inline pk::Packet cm(const Conn& c, uint16_t attr) {
  const bool from_client = attr != pk::cm::kRep;
  pk::CmSpec s;
  s.attr_id = attr;
  s.tid = 0x524f4345ull << 16 | c.id;
  s.local_comm_id = from_client ? 2 * c.id + 1 : 2 * c.id + 2;
  s.remote_comm_id = attr == pk::cm::kReq ? 0 : (from_client ? 2 * c.id + 2 : 2 * c.id + 1);
  s.local_qpn = from_client ? c.client_qp : c.server_qp;
  pk::Packet p;
  pk::build_cm(p, eth(), from_client ? ip(c.client_ip, c.server_ip) : ip(c.server_ip, c.client_ip),
               uint16_t(0xC000 | (c.id & 0x3fff)), s);
  return p;
}

// A data packet of direction d (kC2s: client -> server, to the server QP).
inline pk::Packet data(const Conn& c, Dir d, uint8_t opcode, uint32_t psn, bool ackreq, uint32_t payload) {
  pk::BthSpec b;
  b.opcode = opcode;
  b.ackreq = ackreq;
  b.pad_count = pk::ib_pad_count(payload);
  b.dest_qp = d == kC2s ? c.server_qp : c.client_qp;
  b.psn = psn;
  pk::RethSpec reth;
  reth.dma_len = payload;
  pk::Packet p;
  pk::build_roce(p, eth(), d == kC2s ? ip(c.client_ip, c.server_ip) : ip(c.server_ip, c.client_ip), 0xC100, b, &reth,
                 nullptr, payload);
  return p;
}

// An ACK (syndrome 0x1f) or NAK (0x60: PSN sequence error) for the data of
// direction d: it travels the other way, to the requester's QP.
inline pk::Packet ack(const Conn& c, Dir d, uint32_t psn, uint8_t syndrome = 0x1f) {
  pk::BthSpec b;
  b.opcode = pk::op::kAck;
  b.dest_qp = d == kC2s ? c.client_qp : c.server_qp;
  b.psn = psn;
  pk::AethSpec a;
  a.syndrome = syndrome;
  pk::Packet p;
  pk::build_roce(p, eth(), d == kC2s ? ip(c.server_ip, c.client_ip) : ip(c.client_ip, c.server_ip), 0xC100, b,
                 nullptr, &a, 0);
  return p;
}

struct Collect : RecordSink {
  std::vector<FlowRecord> records;
  void write(const FlowRecord& r) override { records.push_back(r); }
};

}  // namespace rocesim::analytics::test

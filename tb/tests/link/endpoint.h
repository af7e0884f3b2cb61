// A minimal node for link tests and benchmarks: it sends the frames a
// generator gives it and records (or just releases) the frames it receives,
// through a MAC's tx_in / rx_out sockets.
#pragma once

#include <functional>
#include <vector>

#include <systemc>

#include "core/time.h"
#include "link/ledger.h"
#include "link/mac.h"
#include "frames.h"

namespace rocesim::testkit {

class Endpoint : public sc_core::sc_module,
                 public link::TxReady,
                 public link::PacketTargetBase,
                 public link::PacketInitiatorBase {
 public:
  link::pkt_initiator_socket out{"out"};
  link::pkt_target_socket in{"in"};

  // next(): the next frame to send, or nullptr.
  std::function<packet::Packet*()> next;
  bool record = true;
  uint64_t received = 0;
  std::vector<uint64_t> first_bit, last_bit;  // per received frame (when recording)

  Endpoint(sc_core::sc_module_name name, link::Mac& mac, link::Ledger& ledger) : sc_module(name), m_ledger(ledger) {
    out.bind(static_cast<link::pkt_bw_if&>(*this));
    in.bind(static_cast<link::pkt_fw_if&>(*this));
    out.bind(mac.tx_in);
    mac.rx_out.bind(in);
    mac.set_ready(this);
  }

  void on_tx_ready(uint32_t) override {
    packet::Packet* p = next ? next() : nullptr;
    if (!p) return;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    out->b_transport(*p, zero);
  }

  void b_transport(packet::Packet& p, sc_core::sc_time&) override {
    ++received;
    if (record) {
      first_bit.push_back(p.rx_first_bit_ps);
      last_bit.push_back(core::now_ps());
    }
    m_ledger.deliver(&p);
  }

 private:
  link::Ledger& m_ledger;
};

// A RoCEv2 frame to QP 0x101 with `payload` bytes, from the ledger's pool.
inline packet::Packet* roce_frame(link::Ledger& ledger, uint32_t payload, uint32_t psn,
                                  uint8_t opcode = packet::op::kWriteMiddle, bool vlan = false, uint8_t pcp = 0) {
  packet::Packet* p = ledger.create();
  packet::BthSpec bth;
  bth.opcode = opcode;
  bth.dest_qp = 0x101;
  bth.psn = psn & 0xffffff;
  packet::build_roce(*p, test_eth(vlan, pcp), test_ip(), 0xc000, bth, nullptr, nullptr, payload);
  return p;
}

}  // namespace rocesim::testkit

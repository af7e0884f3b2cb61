// Per-packet, per-hop traces (stats.packet_trace; docs/outputs.md,
// packet_trace.csv; docs/user-guide.md, "Why did p99 rise").
//
// The data packets the spec selects (every packet of the listed flows and
// tags; of the other flows each packet with probability `sample`, drawn from
// the run seed and the packet's id, so the same run traces the same packets)
// are marked at their first switch (Packet::traced). Each switch then
// reports the packet's admission and, when its first bit leaves, its
// departure; the receiving NIC reports its arrival. For every hop a row:
//
//   arrival      its last bit in at the switch's ingress MAC
//   admit        the ingress pipeline's admission (next clock edge + parser,
//                lookup, hash and MMU cycles): ingress_ns = admit - arrival
//   eligible     its buffer write, egress cycles and read done
//   departure    its first bit out on the egress: departure - admit =
//                queueing_ns + pause_ns, where pause_ns is the time within
//                [admit, departure] the egress was paused for the queue's
//                priority and queueing_ns the rest (the buffer write and
//                read, and the wait behind other frames)
//   serialization  (8 + frame bytes) x 8 / the egress rate: its last bit
//                leaves at departure + serialization_ns
// and at the receiver one row with the one-way delay (last bit in at the NIC
// - the frame's creation, which is its first bit out of the sender: a NIC
// builds a frame when its port takes it). So, per packet,
//   one_way = sum over hops of (ingress + queueing + pause + serialization)
//             + the sender's serialization + every cable's propagation
// exactly (tb/tests/sim/test_packet_trace.cpp).
//
// Rows are streamed to DIR/packet_trace.csv.partial in the order the events
// happen and renamed at the end, like pfc.csv.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/host.h"
#include "sim/output_file.h"
#include "sim/scenario.h"
#include "switch/switch.h"

namespace rocesim::sim {

class PacketTracer : public sw::HopObserver {
 public:
  // switches: by switch index, as the hop observers report them; next: the
  // observer the hops also go to (path recording), or null.
  PacketTracer(const Scenario& s, std::vector<sw::Switch*> switches, sw::HopObserver* next);
  ~PacketTracer() override;

  bool open(const std::string& path, std::string& why);
  void close(std::vector<OutputFailure>& failed);

  void on_hop(uint32_t sw, packet::Packet& p, const sw::Hop& h) override;
  void on_depart(uint32_t sw, const packet::Packet& p, uint32_t port) override;
  // A traced packet's last bit reached its receiver (host `name`) now.
  void on_receive(const std::string& name, const packet::Packet& p);

  uint64_t rows() const { return m_rows; }

 private:
  bool selected(const packet::Packet& p) const;
  uint64_t paused_ps(sw::Switch& s, uint32_t port, uint8_t queue) const;
  void row(const std::string& line);

  struct Pending {
    uint32_t sw = 0;
    sw::Hop hop;
    uint64_t admit_ps = 0;
    uint64_t paused_at_admit_ps = 0;
  };
  const Scenario& m_s;
  std::vector<sw::Switch*> m_switches;
  sw::HopObserver* m_next;
  std::vector<uint8_t> m_flow_all;   // per flow: every packet traced
  uint64_t m_sample_threshold = 0;   // of the others: traced when the packet's draw is below it
  std::unordered_map<uint64_t, Pending> m_pending;  // by packet id: admitted, not yet left
  std::FILE* m_file = nullptr;
  std::string m_path;
  std::string m_line;  // the row being built (its storage reused)
  int m_err = 0;
  uint64_t m_rows = 0;
};

}  // namespace rocesim::sim

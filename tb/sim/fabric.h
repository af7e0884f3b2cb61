// Builds the model described by a Scenario and runs it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "host/host.h"
#include "link/ledger.h"
#include "link/link.h"
#include "link/pcap.h"
#include "packet/packet.h"
#include "sim/scenario.h"

namespace rocesim::sim {

// A capture request: --pcap NODE:PORT.
struct PcapRequest {
  std::string arg;   // as given, for messages
  std::string node;
  uint32_t port = 0;
};

// Parses "NODE:PORT"; false with a reason on bad syntax.
bool parse_pcap_request(const std::string& arg, PcapRequest& out, std::string& why);

struct RunResult {
  uint64_t sim_time_ps = 0;
  double wall_time_s = 0;
  uint64_t events = 0;
  uint64_t link_hops = 0;
  uint64_t sent = 0, delivered = 0, dropped = 0, in_flight = 0;
  uint64_t pool_in_use = 0;
  bool conserved = false;        // sent == delivered + dropped + in_flight and pool agrees
  bool all_flows_done = false;
};

class Fabric : public sc_core::sc_module, public host::FlowListener {
 public:
  Fabric(sc_core::sc_module_name name, const Scenario& s);
  ~Fabric() override;

  // Node names in creation order and their port counts (for --pcap checks).
  std::vector<std::string> node_names() const;
  // Empty if ok, else the reason (unknown node / port).
  std::string check_pcap(const PcapRequest& r) const;
  // Opens DIR/pcap/NODE-pPORT-{rx,tx}.pcap(.partial); returns false with a reason on I/O failure.
  bool open_pcaps(const std::vector<PcapRequest>& reqs, const std::string& dir, std::string& why);
  bool close_pcaps();

  RunResult run();

  const Scenario& scenario() const { return m_s; }
  const std::vector<host::FlowRecord>& flows() const { return m_flows; }
  const link::Ledger& ledger() const { return m_ledger; }
  const std::vector<std::unique_ptr<host::Host>>& hosts() const { return m_hosts; }
  const std::vector<std::unique_ptr<link::Link>>& links() const { return m_links; }

  void on_flow_done(host::FlowRecord& f) override;

 private:
  link::Mac* find_mac(const std::string& node, uint32_t port) const;
  size_t frames_held() const;

  Scenario m_s;
  packet::PacketPool m_pool;
  link::Ledger m_ledger;
  std::vector<std::unique_ptr<host::Host>> m_hosts;
  std::vector<std::unique_ptr<link::Link>> m_links;
  std::vector<host::FlowRecord> m_flows;
  std::vector<std::unique_ptr<link::PcapWriter>> m_pcaps;
  size_t m_flows_left = 0;
};

// Host addressing: h<i> has IPv4 10.0.0.0 + i + 1 and MAC 02:00:00:00:i>>8:i&255 (locally administered).
uint32_t host_ip(uint32_t index);
packet::Mac host_mac(uint32_t index);

}  // namespace rocesim::sim

// --pcap requests resolved against the scenario's topology before the model is
// built: NODE:PORT, or NODE:* for every port of a node; each port at most once.
#pragma once

#include <string>
#include <vector>

#include "sim/budget.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

namespace rocesim::sim {

// Expands and checks the --pcap arguments in order; appends one request per
// port (NODE:* in port order) to `out` and its line rate to `specs`. False
// with the reason ("--pcap ARG: ...") on bad syntax, an unknown node or port,
// or a port asked for twice.
bool resolve_pcaps(const Scenario& s, const std::vector<std::string>& args, uint32_t snaplen,
                   std::vector<PcapRequest>& out, std::vector<CaptureSpec>& specs, std::string& why);

// "--pcap-snaplen" values: "headers" (kSnapHeaders) or 1..65535 bytes. False on anything else.
bool parse_snaplen(const std::string& text, uint32_t& snaplen);

}  // namespace rocesim::sim

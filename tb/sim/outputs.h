// Run outputs: summary.json, flows.csv, config.resolved.yaml. Each file is
// written to NAME.partial and renamed, so a file with its final name is complete.
#pragma once

#include <string>

#include "sim/fabric.h"

namespace rocesim::sim {

inline constexpr int kSummarySchemaVersion = 1;

// Writes content to path atomically (tmp + rename). False with errno on failure.
bool write_file_atomic(const std::string& path, const std::string& content);

std::string summary_json(Fabric& f, const RunResult& r);
std::string flows_csv(const Fabric& f);

// "1234.560" for 1234560 ps: exact, fixed 3 decimals, no locale.
std::string ps_to_ns_text(uint64_t ps);

}  // namespace rocesim::sim

// Run outputs: summary.json, flows.csv, config.resolved.yaml. Each file is
// written to NAME.partial and renamed, so a file with its final name is complete.
#pragma once

#include <string>
#include <vector>

#include "sim/fabric.h"

namespace rocesim::sim {

inline constexpr int kSummarySchemaVersion = 1;

// Writes content to path atomically (tmp + rename). False with errno on failure;
// the .partial is then removed (on a full disk it would hold space and look like output).
bool write_file_atomic(const std::string& path, const std::string& content);
// The same, with the reason ("No space left on device") in why.
bool write_file_atomic(const std::string& path, const std::string& content, std::string& why);

// The output directory of `rocesim run`. A run writes into a fresh directory,
// so files of two runs never mix.
//
// check_out_dir: before building the model, creates nothing. False with the
// reason when DIR exists but is not a directory, is not empty and !force, is a
// target --force refuses to empty (/, $HOME, the working directory or one of
// its ancestors, a directory holding .git: a source tree), or is not writable.
bool check_out_dir(const std::string& dir, bool force, std::string& why);
// prepare_out_dir: just before simulating. Creates DIR and its parents, or with
// force deletes everything inside it (symbolic links are removed, never
// followed; nothing outside DIR is touched); then proves DIR writable by
// writing and removing a probe file (this catches a full disk too).
bool prepare_out_dir(const std::string& dir, bool force, std::string& why);

// How a run ended, for summary.json's "complete", "reason" and "outputs_missing".
struct RunStatus {
  std::string reason;                    // empty: ran to its end ("interrupted by SIGINT", "wall-clock limit ...")
  std::vector<OutputFailure> missing;    // outputs that could not be written
  bool complete() const { return reason.empty() && missing.empty(); }
};

std::string summary_json(Fabric& f, const RunResult& r, const RunStatus& st = {});
std::string flows_csv(const Fabric& f);

// "1234.560" for 1234560 ps: exact, fixed 3 decimals, no locale.
std::string ps_to_ns_text(uint64_t ps);

}  // namespace rocesim::sim

// Outputs that are never mixed or lost, and safe interruption (issue 10, items
// 1 and 2), through the rocesim binary as users and nightly suites run it:
// a fresh output directory (--force to reuse one), writability checked before
// simulating, every output attempted and what is missing recorded, SIGINT /
// SIGTERM / --max-wall ending with the outputs gathered so far.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <regex>
#include <thread>
#include <vector>

#include "../link/pcap_read.h"
#include "cli_util.h"

using namespace clitest;

namespace {

using Clock = std::chrono::steady_clock;

// Absolute paths: some tests run rocesim from another working directory.
std::string absolute(const std::string& p) {
  char* r = realpath(p.c_str(), nullptr);
  std::string s = r ? r : p;
  std::free(r);
  return s;
}
std::string src() { return absolute(src_dir()); }
std::string rocesim_bin() { return absolute(bin()); }

std::string scenario(const std::string& name) { return src() + "/configs/scenarios/" + name + ".yaml"; }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Every file under dir (relative paths), recursively.
void list_files(const std::string& dir, const std::string& rel, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st{};
    const std::string p = dir + "/" + n;
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) list_files(p, rel + n + "/", out);
    else out.push_back(rel + n);
  }
  closedir(d);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> v;
  list_files(dir, "", v);
  return v;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A well-formed CSV as our outputs write it (no quoting): a header, every line
// ended by '\n' (an interrupted write would leave a last line without one),
// every row with the header's number of fields. Returns the data rows.
size_t expect_well_formed_csv(const std::string& path) {
  const std::string t = slurp(path);
  EXPECT_FALSE(t.empty()) << path;
  if (t.empty()) return 0;
  EXPECT_EQ(t.back(), '\n') << path << ": the last line is cut short";
  EXPECT_EQ(t.find('"'), std::string::npos) << path << ": field counts assume no quoting";
  std::istringstream in(t);
  std::string line;
  std::getline(in, line);
  const auto fields = [](const std::string& l) { return std::count(l.begin(), l.end(), ',') + 1; };
  const long header = fields(line);
  size_t rows = 0, bad = 0;
  while (std::getline(in, line)) {
    ++rows;
    if (fields(line) != header) ++bad;
  }
  EXPECT_EQ(bad, 0u) << path << ": rows whose field count differs from the header's " << header;
  return rows;
}

// A well-formed pcap (the libpcap file format): the 24-byte global header with
// the nanosecond magic, then whole records (16-byte header + incl_len bytes)
// up to exactly the end of the file. Returns the records.
size_t expect_well_formed_pcap(const std::string& path) {
  const testkit::PcapFile f = testkit::read_pcap(path);
  EXPECT_GE(f.file_bytes, 24u) << path;
  if (f.file_bytes < 24) return 0;
  EXPECT_EQ(f.magic, 0xa1b23c4du) << path;
  for (size_t n = 0; n < f.records.size(); ++n) EXPECT_LE(f.records[n].incl_len, f.snaplen) << path << " record " << n;
  EXPECT_EQ(f.parsed_bytes, f.file_bytes) << path << ": a record is cut short";
  return f.records.size();
}

// Every output in dir is final (no .partial left) and well formed.
void expect_outputs_well_formed(const std::string& dir) {
  for (const std::string& f : files_in(dir)) {
    EXPECT_FALSE(ends_with(f, ".partial")) << dir << "/" << f;
    if (ends_with(f, ".csv")) expect_well_formed_csv(dir + "/" + f);
    if (ends_with(f, ".pcap")) expect_well_formed_pcap(dir + "/" + f);
  }
}

std::string json_field(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": (\"[^\"]*\"|[^,\\n]+)");
  return std::regex_search(json, m, re) ? std::string(m[1]) : std::string();
}

// A rocesim run in the background, its pid the binary's own (exec), so the
// test's signals reach it and not a shell.
struct Proc {
  pid_t pid = -1;
  std::string dir;  // holds stdout / stderr
  int status = 0;
  Proc(const std::string& args) : dir(temp_dir()) {
    const std::string cmd = "exec " + rocesim_bin() + " " + args + " >" + dir + "/stdout 2>" + dir + "/stderr </dev/null";
    pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // Waits up to limit_s for pred; false on timeout or if the process ended.
  bool wait_for(const std::function<bool()>& pred, double limit_s) {
    const auto t0 = Clock::now();
    while (seconds_since(t0) < limit_s) {
      if (pred()) return true;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  int wait() {
    if (pid > 0) waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  std::string err() const { return slurp(dir + "/stderr"); }
  ~Proc() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
};

off_t file_size(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 ? st.st_size : -1;
}

// The WebSearch leaf-spine (15 ms simulated, several seconds of wall time)
// with every streamed output: queues.csv, flow_series.csv, cc.csv, a capture.
const std::string kLongRun = "--pcap h1:0 --set stats.flow_series=true --set hosts.cc_log=true --quiet";

// Starts the long run into out and waits until it is simulating: queues.csv
// holds its first samples (written at stats.interval = 100 us simulated).
std::unique_ptr<Proc> start_long_run(const std::string& out, const std::string& extra = "") {
  auto p = std::make_unique<Proc>("run " + scenario("websearch_leafspine") + " --out " + out + " " + kLongRun + " " +
                                  extra);
  const bool started = p->wait_for([&] { return file_size(out + "/queues.csv.partial") > 4096; }, 30);
  EXPECT_TRUE(started) << "the run did not start simulating: " << p->err();
  return p;
}

// After a stop: summary.json says incomplete with the reason, the simulated
// time is short of the 15 ms configured, every output is final and well formed.
void expect_stopped_run(const std::string& out, const std::string& reason) {
  const std::string s = slurp(out + "/summary.json");
  ASSERT_FALSE(s.empty()) << "summary.json is written on a stop";
  EXPECT_EQ(json_field(s, "complete"), "false");
  EXPECT_EQ(json_field(s, "reason").rfind("\"" + reason, 0), 0u) << json_field(s, "reason");
  const double sim_ns = std::stod(json_field(s, "sim_time_ns"));
  EXPECT_GT(sim_ns, 100e3) << "it had simulated past the first sample";
  EXPECT_LT(sim_ns, 15e6) << "stopped before sim.duration";
  EXPECT_EQ(json_field(s, "conservation_ok"), "true") << "a stop between slices leaves no event half done";
  for (const char* f : {"queues.csv", "flow_series.csv", "cc.csv", "flows.csv", "pfc.csv", "config.resolved.yaml",
                        "flows.hpcc.txt", "fct.txt", "pcap/h1-p0-rx.pcap", "pcap/h1-p0-tx.pcap"})
    EXPECT_TRUE(exists(out + "/" + f)) << f;
  expect_outputs_well_formed(out);
  // flows.csv lists every configured flow, finished or not.
  const std::string flows_total = json_field(s, "total");
  EXPECT_EQ(std::to_string(expect_well_formed_csv(out + "/flows.csv")), flows_total);
  EXPECT_GT(expect_well_formed_csv(out + "/queues.csv"), 0u);
}

// A tmpfs of the given size at dir, unmounted at scope end; empty when it
// cannot be mounted (not root, no CAP_SYS_ADMIN), and the test is skipped.
struct Tmpfs {
  std::string dir;
  explicit Tmpfs(const std::string& d, const std::string& opts) {
    mkdir(d.c_str(), 0777);
    if (mount("tmpfs", d.c_str(), "tmpfs", 0, opts.c_str()) == 0) dir = d;
  }
  ~Tmpfs() {
    if (!dir.empty()) umount2(dir.c_str(), MNT_DETACH);
  }
};

}  // namespace

// The repro: a duplicate capture used to simulate fully and then lose
// the outputs. It is refused up front: exit 2, one line, no output directory.
TEST(OutputsRobust, DuplicateCaptureIsRefusedBeforeSimulating) {
  const std::string out = temp_dir() + "/D";
  const Result r = rocesim("run " + scenario("pfc_incast") + " --out " + out + " --pcap sw0:16 --pcap sw0:16");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--pcap sw0:16"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("already captured"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(exists(out));
}

// The repro: a second run into the same --out left the first run's
// cc.csv, queues.csv and pcap/ beside the new summary.json.
TEST(OutputsRobust, ReusingAnOutputDirectoryIsRefusedUnlessForced) {
  const std::string base = temp_dir(), out = base + "/D";
  const std::string cfg = scenario("dcqcn_two_flows");
  ASSERT_EQ(rocesim("run " + cfg + " --out " + out + " --pcap h1:0 --quiet").rc, 0);
  ASSERT_TRUE(exists(out + "/cc.csv"));
  ASSERT_TRUE(exists(out + "/pcap/h1-p0-rx.pcap"));
  const std::string first = slurp(out + "/summary.json");

  // Refused (exit 2, one line naming --out), and the first run is untouched.
  const Result again = rocesim("run " + cfg + " --out " + out + " --set hosts.cc_log=false --quiet");
  EXPECT_EQ(again.rc, 2) << again.err;
  EXPECT_NE(again.err.find("--out " + out + ": exists and is not empty"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << "names the way out: " << again.err;
  EXPECT_EQ(std::count(again.err.begin(), again.err.end(), '\n'), 1) << again.err;
  EXPECT_EQ(slurp(out + "/summary.json"), first);

  // --force empties it first: only the second run's files remain. A symbolic
  // link inside is removed, not followed: what it points to survives.
  const std::string outside = base + "/outside";
  mkdir(outside.c_str(), 0777);
  write_file(outside + "/keep.txt", "keep");
  ASSERT_EQ(symlink(outside.c_str(), (out + "/link").c_str()), 0);
  write_file(base + "/sibling.txt", "sibling");
  const Result forced = rocesim("run " + cfg + " --out " + out + " --set hosts.cc_log=false --force --quiet");
  ASSERT_EQ(forced.rc, 0) << forced.err;
  std::vector<std::string> got = files_in(out);
  std::sort(got.begin(), got.end());
  const std::vector<std::string> want{"classes.csv",    "config.resolved.yaml", "ecmp_members.csv", "fct.txt",
                                      "flows.csv",      "flows.hpcc.txt",       "paths.csv",        "pfc.csv",
                                      "ports.csv",      "queues.csv",           "summary.json"};
  EXPECT_EQ(got, want) << "no cc.csv, pcap/ or link from the first run";
  EXPECT_EQ(json_field(slurp(out + "/summary.json"), "complete"), "true");
  EXPECT_EQ(slurp(outside + "/keep.txt"), "keep");
  EXPECT_EQ(slurp(base + "/sibling.txt"), "sibling");
  std::system(("rm -rf " + base).c_str());
}

// --force refuses targets whose emptying would be a disaster: the working
// directory (or a parent of it: / always is) and a source tree (.git).
TEST(OutputsRobust, ForceRefusesTheWorkingDirectoryAndASourceTree) {
  const std::string base = temp_dir();
  const std::string repo = base + "/repo";
  mkdir(repo.c_str(), 0777);
  mkdir((repo + "/.git").c_str(), 0777);
  write_file(repo + "/main.cpp", "int main() {}\n");
  Result r = rocesim("run " + scenario("two_hosts") + " --out " + repo + " --force --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find(".git"), std::string::npos) << r.err;
  EXPECT_TRUE(exists(repo + "/main.cpp"));

  const std::string cwd = base + "/cwd";
  mkdir(cwd.c_str(), 0777);
  write_file(cwd + "/notes.txt", "mine");
  r = sh("cd " + cwd + " && " + rocesim_bin() + " run " + scenario("two_hosts") + " --out . --force --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("working directory"), std::string::npos) << r.err;
  r = sh("cd " + cwd + " && " + rocesim_bin() + " run " + scenario("two_hosts") + " --out .. --force --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(exists(cwd + "/notes.txt"));
  EXPECT_TRUE(exists(repo + "/main.cpp"));
  std::system(("rm -rf " + base).c_str());
}

// The repro: an existing but unwritable --out exited 1, for WebSearch
// only after 6.5 s of simulation. Now exit 2 before the model is built, and a
// full disk is found by the probe before simulating.
TEST(OutputsRobust, UnwritableOrFullOutputFailsBeforeSimulatingWithExitTwo) {
  const std::string base = temp_dir();
  std::unique_ptr<Tmpfs> ro;
  std::string dir = base + "/ro";
  if (geteuid() == 0) {
    ro = std::make_unique<Tmpfs>(dir, "size=64k");
    if (ro->dir.empty()) GTEST_SKIP() << "cannot mount a tmpfs";
    ASSERT_EQ(mount("tmpfs", dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=64k"), 0) << std::strerror(errno);
  } else {
    mkdir(dir.c_str(), 0555);
  }
  const std::string ws = scenario("websearch_leafspine");
  auto t0 = Clock::now();
  Result r = rocesim("run " + ws + " --out " + dir + " --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--out " + dir + ": not writable"), std::string::npos) << r.err;
  EXPECT_LT(seconds_since(t0), 3.0 * kWallScale) << "refused before simulating (the run takes several seconds)";
  r = rocesim("run " + ws + " --out " + dir + "/sub --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("cannot create directory " + dir + "/sub"), std::string::npos) << r.err;
  ro.reset();

  if (geteuid() != 0) return;
  // A full disk: a 16 KiB tmpfs filled by another file; creating the directory
  // works, writing does not.
  Tmpfs full(base + "/full", "size=16k");
  ASSERT_FALSE(full.dir.empty());
  write_file(full.dir + "/filler", std::string(64 * 1024, 'x'));
  t0 = Clock::now();
  r = rocesim("run " + ws + " --out " + full.dir + "/run --quiet");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("not writable: No space left on device"), std::string::npos) << r.err;
  EXPECT_LT(seconds_since(t0), 3.0 * kWallScale) << "refused before simulating";
}

// The repro: on a full disk one failed output used to skip the
// renames of the others and leave 0-byte .partial files. Now every output is
// attempted, a failed one's .partial removed (which frees its space for the
// rest), and summary.json lists what is missing (exit 1).
TEST(OutputsRobust, FullDiskWritesEveryOtherOutputAndListsTheMissingOnes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  // h0 sends 512 KiB at MTU 4096: its transmit capture (about 530 KB) fills
  // a 64 KiB disk while streaming. queues.csv (a few rows, still in its stdio
  // buffer) and the files written at the end (about 20 KB) fit once the
  // capture's .partial is gone: queues.csv is renamed after the capture
  // failed, the order in which it used to be lost.
  const std::string base = temp_dir();
  const std::string cfg = base + "/full_disk.yaml";
  write_file(cfg, "name: full_disk\n"
                  "sim: {duration: 1ms}\n"
                  "topology: {file: " + src() + "/configs/topologies/single_switch.yaml, hosts: 3}\n"
                  "hosts: {mtu: 4096}\n"
                  "stats: {interval: 50us}\n"
                  "flows:\n"
                  "  - {src: h0, dst: h2, size: 512KiB}\n"
                  "  - {src: h1, dst: h2, size: 64KiB}\n");
  Tmpfs disk(base + "/disk", "size=64k");
  if (disk.dir.empty()) GTEST_SKIP() << "cannot mount a tmpfs";
  const std::string out = disk.dir + "/run";
  const Result r = rocesim("run " + cfg + " --out " + out + " --pcap h0:0 --quiet");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("writing outputs in " + out + " failed: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pcap/h0-p0-tx.pcap ("), std::string::npos) << r.err;
  const std::string s = slurp(out + "/summary.json");
  ASSERT_FALSE(s.empty()) << "summary.json was written";
  EXPECT_EQ(json_field(s, "complete"), "false");
  EXPECT_EQ(json_field(s, "reason"), "\"outputs missing\"");
  EXPECT_NE(s.find("\"outputs_missing\": [{\"file\": \"pcap/"), std::string::npos) << s.substr(0, 600);
  EXPECT_NE(s.find("{\"file\": \"pcap/h0-p0-tx.pcap\", \"error\": "), std::string::npos) << s.substr(0, 600);
  EXPECT_FALSE(exists(out + "/pcap/h0-p0-tx.pcap"));
  for (const char* f : {"queues.csv", "flows.csv", "pfc.csv", "config.resolved.yaml", "flows.hpcc.txt"})
    EXPECT_TRUE(exists(out + "/" + f)) << f;
  EXPECT_EQ(expect_well_formed_csv(out + "/flows.csv"), 2u);
  expect_outputs_well_formed(out);
}

// When summary.json itself cannot be written, the failure record FAILED.txt
// says why the run is incomplete and names every missing output. (Here two
// outputs are made unwritable during the run: a directory sits where each
// one's .partial goes.) The other outputs are all written.
TEST(OutputsRobust, WithoutASummaryAFailureRecordSaysWhatIsMissing) {
  const std::string out = temp_dir() + "/run";
  auto p = start_long_run(out, "--max-wall 1s");
  ASSERT_EQ(mkdir((out + "/flows.csv.partial").c_str(), 0777), 0);
  ASSERT_EQ(mkdir((out + "/summary.json.partial").c_str(), 0777), 0);
  const int st = p->wait();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 1) << "an output failure outranks the wall-clock stop: " << p->err();
  EXPECT_NE(p->err().find("flows.csv (Is a directory)"), std::string::npos) << p->err();
  EXPECT_NE(p->err().find("summary.json (Is a directory)"), std::string::npos) << p->err();
  EXPECT_FALSE(exists(out + "/summary.json"));
  const std::string rec = slurp(out + "/FAILED.txt");
  EXPECT_EQ(rec,
            "rocesim run did not complete: wall-clock limit (--max-wall 1s)\n"
            "missing flows.csv: Is a directory\n"
            "missing summary.json: Is a directory\n");
  for (const char* f : {"queues.csv", "flow_series.csv", "cc.csv", "pfc.csv", "config.resolved.yaml",
                        "flows.hpcc.txt", "pcap/h1-p0-rx.pcap", "pcap/h1-p0-tx.pcap"})
    EXPECT_TRUE(exists(out + "/" + f)) << f;
  expect_outputs_well_formed(out);
}

// The repro: SIGINT ended the run at once with only a .partial
// fragment. Now it stops at the next slice and writes what it has.
TEST(OutputsRobust, SigintStopsTheRunAndWritesTheOutputsSoFar) {
  const std::string out = temp_dir() + "/run";
  auto p = start_long_run(out);
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(p->pid, SIGINT), 0);
  const int st = p->wait();
  EXPECT_LT(seconds_since(t0), 5.0 * kWallScale) << "stops at the next slice, not at the end (15 ms simulated)";
  ASSERT_TRUE(WIFEXITED(st)) << "signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  EXPECT_EQ(WEXITSTATUS(st), 130) << p->err();  // 128 + SIGINT, the shell's convention
  EXPECT_NE(p->err().find("interrupted by SIGINT"), std::string::npos) << p->err();
  expect_stopped_run(out, "interrupted by SIGINT");
}

TEST(OutputsRobust, SigtermStopsTheRunLikewiseWithExit143) {
  const std::string out = temp_dir() + "/run";
  auto p = start_long_run(out);
  ASSERT_EQ(kill(p->pid, SIGTERM), 0);
  const int st = p->wait();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 143) << p->err();  // 128 + SIGTERM
  expect_stopped_run(out, "interrupted by SIGTERM");
}

// A second signal ends the process at once (default action). SIGINT and
// SIGTERM back to back: two different signals are both delivered (two equal
// ones pending at once would merge into one).
TEST(OutputsRobust, ASecondSignalEndsAtOnce) {
  const std::string out = temp_dir() + "/run";
  auto p = start_long_run(out);
  ASSERT_EQ(kill(p->pid, SIGINT), 0);
  ASSERT_EQ(kill(p->pid, SIGTERM), 0);
  const int st = p->wait();
  ASSERT_TRUE(WIFSIGNALED(st)) << "exit " << WEXITSTATUS(st);
  EXPECT_EQ(WTERMSIG(st), SIGTERM);
  EXPECT_FALSE(exists(out + "/summary.json")) << "ended before writing";
}

TEST(OutputsRobust, MaxWallStopsTheRunWithExit124) {
  const std::string out = temp_dir() + "/run";
  const auto t0 = Clock::now();
  Proc p("run " + scenario("websearch_leafspine") + " --out " + out + " " + kLongRun + " --max-wall 1s");
  const int st = p.wait();
  const double wall = seconds_since(t0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 124) << p.err();  // as timeout(1)
  EXPECT_NE(p.err().find("wall-clock limit (--max-wall 1s)"), std::string::npos) << p.err();
  // 1 s of simulation plus building the model and writing the outputs.
  EXPECT_LT(wall, 6.0 * kWallScale);
  const double sim_wall = std::stod(json_field(slurp(out + "/summary.json"), "wall_time_s"));
  EXPECT_GE(sim_wall, 1.0) << "the simulation ran until the limit";
  EXPECT_LT(sim_wall, 1.5) << "and stopped at the next slice";
  expect_stopped_run(out, "wall-clock limit");
}

TEST(OutputsRobust, MaxWallNeedsAPositiveDuration) {
  for (const char* bad : {"0", "-1s", "1x", "s", "1..5s"}) {
    const Result r = rocesim("run " + scenario("two_hosts") + " --out " + temp_dir() + "/o --max-wall " + bad);
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_EQ(r.err.rfind("rocesim: --max-wall needs a positive duration", 0), 0u) << r.err;
  }
}

// A run that ends normally says so.
TEST(OutputsRobust, ACompleteRunSaysCompleteWithNoReason) {
  const std::string out = temp_dir() + "/run";
  ASSERT_EQ(rocesim("run " + scenario("two_hosts") + " --out " + out + " --max-wall 1h --quiet").rc, 0);
  const std::string s = slurp(out + "/summary.json");
  EXPECT_EQ(json_field(s, "complete"), "true");
  EXPECT_EQ(json_field(s, "reason"), "null");
  EXPECT_NE(s.find("\"outputs_missing\": []"), std::string::npos);
  expect_outputs_well_formed(out);
}

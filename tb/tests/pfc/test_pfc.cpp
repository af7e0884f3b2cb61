// PFC end to end through the rocesim binary: lossless incast, too little
// headroom, PFC off, hysteresis, deadlock with and without the watchdog, a
// storm, and pause frames in a capture.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "../sim/cli_util.h"

using namespace clitest;

namespace {

std::string scenario(const std::string& name) { return src_dir() + "/configs/scenarios/" + name + ".yaml"; }

// A number after "key": in a JSON text (the first occurrence after `from`).
double json_num(const std::string& json, const std::string& key, size_t from = 0) {
  std::smatch m;
  const std::regex re("\"" + key + "\": (-?[0-9.e+]+)");
  std::string tail = json.substr(from);
  if (!std::regex_search(tail, m, re)) return -1;
  return std::stod(m[1]);
}
bool json_true(const std::string& json, const std::string& key) {
  return json.find("\"" + key + "\": true") != std::string::npos;
}

struct Out {
  std::string summary, pfc_csv, dir;
};
Out run(const std::string& args) {
  Out o;
  o.dir = temp_dir();
  const Result r = rocesim("run " + args + " --out " + o.dir + " --quiet");
  EXPECT_EQ(r.rc, 0) << r.err;
  o.summary = slurp(o.dir + "/summary.json");
  o.pfc_csv = slurp(o.dir + "/pfc.csv");
  return o;
}

// tx_busy_fraction of (node, port) in summary.json's ports list.
double busy(const std::string& s, const std::string& node, int port) {
  const std::string key = "{\"node\": \"" + node + "\", \"port\": " + std::to_string(port) + ",";
  const size_t at = s.find(key);
  return at == std::string::npos ? -1 : json_num(s, "tx_busy_fraction", at);
}

}  // namespace

TEST(PfcIncast, SixteenToOneWithAutoHeadroomIsLosslessAndKeepsTheBottleneckBusy) {
  const Out o = run(scenario("pfc_incast"));
  EXPECT_EQ(json_num(o.summary, "dropped"), 0);
  EXPECT_EQ(json_num(o.summary, "completed"), 16);
  EXPECT_EQ(json_num(o.summary, "in_flight_at_end"), 0);
  // The run ends when the last flow completes: the receiver's port was busy
  // at least 95 % of the time the senders had data.
  EXPECT_GE(busy(o.summary, "sw0", 16), 0.95);
  EXPECT_GT(json_num(o.summary, "pause_frames_tx"), 0);
  EXPECT_GT(json_num(o.summary, "xoff_events"), 0);
  // pfc.csv: XOFF from the switch on the senders' ports, pauses at the senders.
  EXPECT_EQ(o.pfc_csv.rfind("time_ns,node,port,priority,event\n", 0), 0u);
  EXPECT_NE(o.pfc_csv.find(",sw0,0,3,xoff\n"), std::string::npos);
  EXPECT_NE(o.pfc_csv.find(",sw0,0,3,xon\n"), std::string::npos);
  EXPECT_NE(o.pfc_csv.find(",h0,0,3,pause_start\n"), std::string::npos);
  EXPECT_NE(o.pfc_csv.find(",h0,0,3,pause_end\n"), std::string::npos);
  // The computed headroom is in the resolved config.
  const std::string resolved = slurp(o.dir + "/config.resolved.yaml");
  EXPECT_NE(resolved.find("headroom: auto computed per lossless PG"), std::string::npos);
  EXPECT_NE(resolved.find("100Gbps port, 10ns cable: "), std::string::npos);
}

TEST(PfcIncast, HeadroomBelowTheComputedValueOverflowsWithCountedDrops) {
  const Out o = run(scenario("pfc_incast") + " --set pfc.headroom=4KiB");
  const double hr = json_num(o.summary, "headroom_overflow");
  EXPECT_GT(hr, 0);
  EXPECT_EQ(json_num(o.summary, "dropped"), hr) << "every drop is a headroom overflow";
  EXPECT_NE(o.summary.find("\"conservation_ok\": true"), std::string::npos);
}

TEST(PfcIncast, WithoutPfcTheIncastDropsWithItsReason) {
  const Out o = run(scenario("pfc_incast") + " --set pfc.enabled=false");
  EXPECT_EQ(json_num(o.summary, "pause_frames_tx"), 0);
  const double dropped = json_num(o.summary, "dropped");
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(json_num(o.summary, "ingress_limit") + json_num(o.summary, "egress_limit") +
                json_num(o.summary, "pool_full"),
            dropped);
}

TEST(PfcHysteresis, TransitionsPerMillisecondFallAsTheThresholdGapWidens) {
  // Two line-rate senders into one port for 2 ms of steady overload, XOFF at a
  // static 200 KiB of shared use, XON at 200 KiB minus the offset.
  std::string yaml =
      "name: hyst\nsim: {duration: 2ms, stop_when_done: false}\n"
      "topology: {kind: single_switch, hosts: 3, host_rate: 100Gbps}\nhosts: {mtu: 4096}\n"
      "pfc: {headroom: auto, xoff: 200KiB}\nstats: {interval: 0}\n"
      "flows:\n  - {src: h0, dst: h2, size: 64MiB}\n  - {src: h1, dst: h2, size: 64MiB}\n";
  const std::string dir = temp_dir();
  write_file(dir + "/h.yaml", yaml);
  double last = 1e18;
  for (const char* offset : {"8KiB", "32KiB", "128KiB"}) {
    const Out o = run(dir + "/h.yaml --set pfc.xon_offset=" + offset);
    const double per_ms = (json_num(o.summary, "xoff_events") + json_num(o.summary, "xon_events")) / 2.0;
    EXPECT_EQ(json_num(o.summary, "dropped"), 0) << offset;
    EXPECT_GT(per_ms, 0) << offset;
    EXPECT_LT(per_ms, last) << "xon_offset " << offset;
    last = per_ms;
  }
}

TEST(PfcDeadlock, RingStallsWithoutTheWatchdogAndDrainsWithIt) {
  const Out stuck = run(scenario("pfc_deadlock"));
  EXPECT_TRUE(json_true(stuck.summary, "deadlock"));
  EXPECT_GT(json_num(stuck.summary, "in_flight_at_end"), 0);
  EXPECT_EQ(json_num(stuck.summary, "watchdog_events"), 0);
  EXPECT_NE(stuck.summary.find("\"conservation_ok\": true"), std::string::npos);

  const Out freed = run(scenario("pfc_deadlock") + " --set pfc.watchdog.enabled=true");
  EXPECT_FALSE(json_true(freed.summary, "deadlock"));
  // RC: the run stops when the last flow completes, so the final ACKs may
  // still be on the wire; every flow completing is the drained fabric.
  EXPECT_EQ(json_num(freed.summary, "completed"), 4) << "the four ring flows complete";
  EXPECT_EQ(json_num(stuck.summary, "completed"), 0) << "nothing completes in the deadlock";
  EXPECT_GT(json_num(freed.summary, "watchdog_events"), 0);
  EXPECT_GT(json_num(freed.summary, "pfc_watchdog"), 0) << "the drop action dropped the stormed queues";
  EXPECT_GT(json_num(freed.summary, "delivered"), json_num(stuck.summary, "delivered"));
  EXPECT_NE(freed.pfc_csv.find("storm_detected"), std::string::npos);
  EXPECT_NE(freed.pfc_csv.find("storm_restored"), std::string::npos);
}

TEST(PfcStorm, WatchdogDetectsTheStormAndOtherTrafficFlows) {
  const Out o = run(scenario("pfc_storm"));
  EXPECT_GE(json_num(o.summary, "watchdog_events"), 1);
  // The stormed queue is sw0's port to h3, priority 3.
  EXPECT_NE(o.pfc_csv.find(",sw0,3,3,storm_detected\n"), std::string::npos) << o.pfc_csv.substr(0, 400);
  EXPECT_GT(json_num(o.summary, "pfc_watchdog"), 0);
  // h3 keeps sending pauses: its port stays paused, and the flow to it never completes.
  EXPECT_GT(json_num(o.summary, "pause_frames_tx"), 5);
  EXPECT_EQ(json_num(o.summary, "completed"), 1) << "h1 -> h2 completes, h0 -> h3 cannot";
  const std::string flows = slurp(o.dir + "/flows.csv");
  EXPECT_NE(flows.find("\n1,h1,h2,"), std::string::npos);
  EXPECT_EQ(json_num(o.summary, "in_flight_at_end"), 0);
}

TEST(PfcCapture, TsharkDecodesPauseFramesWithClassEnableVectorAndTimers) {
  const Out o = run(scenario("pfc_incast") + " --pcap sw0:0");
  const Result r = sh("tshark -n -r " + o.dir + "/pcap/sw0-p0-tx.pcap -Y macc -T fields -E separator=,"
                      " -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e frame.len");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  int xoff = 0, xon = 0;
  while (std::getline(in, line)) {
    if (line == "0x0101,0x0008,65535,60") ++xoff;
    else if (line == "0x0101,0x0008,0,60") ++xon;
    else ADD_FAILURE() << "unexpected pause frame: " << line;
  }
  EXPECT_GT(xoff, 0);
  EXPECT_GT(xon, 0);
  // XOFF and XON alternate one for one on this port, as pfc.csv says.
  EXPECT_NEAR(xoff, xon, 1);
}

"""The end-of-run table: every printed figure against summary.json, and the
summary.json members behind it against other outputs (flows.csv, pfc.csv,
ports.csv, and summary.json's older members), which the table code does not
write. Bugs that fail it: a figure printed from the wrong member or in the
wrong unit, a class or size bucket mixed up, a percentile off by one rank,
the first XOFF taken after pfc.csv streamed it out of memory, a tier's
pauses counted twice, hottest ports not the ones ports.csv shows."""
import collections
import json
import math
import os
import re

from clitest import SRC, check, finish, rocesim, rows, summary, tempdir

d = tempdir()
out = os.path.join(d, "out")
cfg = os.path.join(SRC, "configs/scenarios/default.yaml")
# The default scenario's first millisecond: its first incast round (PFC from
# leaf0, ECN marks), long flows and background, all three classes.
rc, table, err = rocesim("run", cfg, "--out", out, "--set", "sim.duration=1ms")
check(rc == 0, "run exit 0 (%d): %s" % (rc, err))
s = summary(out)
lines = table.splitlines()


def value(label):
    for ln in lines:
        if ln.startswith("  " + label + " "):
            return ln[2 + len(label):].strip()
    check(False, "table has a '%s' line:\n%s" % (label, table))
    return ""


def close(a, b, tol):
    return abs(a - b) <= tol


# user-facing
m = re.match(r"([0-9.]+) Gbps", value("throughput"))
# printed with 3 decimals; summary.json has 6 significant digits
check(m and close(float(m.group(1)), s["throughput_bps"] / 1e9, 0.0005 + 5e-6 * s["throughput_bps"] / 1e9),
      "throughput %s vs %g" % (value("throughput"), s["throughput_bps"]))
# throughput_bps: every flow's payload received x 8 / sim time (summary's older members)
check(close(s["throughput_bps"], s["flows"]["payload_bytes_delivered"] * 8e9 / float(s["sim_time_ns"]),
            1e-5 * s["throughput_bps"]), "throughput_bps = payload x 8 / sim time")
m = re.match(r"(\d+) / (\d+)", value("flows completed"))
check(m and int(m.group(1)) == s["flows"]["completed"] and int(m.group(2)) == s["flows"]["total"], "flows completed")
lossless = int(value("lossless drops").split()[0])
check(lossless == s["lossless_drops"] == s["drops_by_reason"]["headroom_overflow"] + s["drops_by_reason"]["pfc_watchdog"],
      "lossless drops")

# FCT rows, against summary.json classes[] and against flows.csv (nearest rank).
fl = rows(os.path.join(out, "flows.csv"))
bounds = [10000, 100000, 1000000, 10000000, None]


def nearest(v, p):
    v = sorted(v)
    r = math.ceil(p * len(v))
    return v[max(r, 1) - 1]


csv_fct = collections.defaultdict(list)
for r in fl:
    if r["completed"] != "1":
        continue
    c = r["tag"] or "flows"
    size = int(r["size_bytes"])
    b = next(i for i, x in enumerate(bounds) if x is None or size < x)
    csv_fct[(c, "all")].append(float(r["fct_ns"]))
    csv_fct[(c, b)].append(float(r["fct_ns"]))
labels = ["<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB"]
fct_rows = 0
start = next(i for i, ln in enumerate(lines) if ln.startswith("  FCT (us)"))
for ln in lines[start + 1:]:
    if not ln.startswith("                      "):
        break
    c, size, n, p50, p99 = ln.split()
    fct_rows += 1
    cls = next(x for x in s["classes"] if x["class"] == c)
    if size == "all":
        key, js = (c, "all"), cls
        check(int(n) == cls["completed"], "%s all: flows %s == completed %d" % (c, n, cls["completed"]))
    else:
        b = labels.index(size)
        key, js = (c, b), cls["by_size"][b]
        check(int(n) == js["flows"], "%s %s: flows" % (c, size))
    check(close(float(p50), float(js["fct_p50_ns"]) / 1000, 0.0005) and close(float(p99), float(js["fct_p99_ns"]) / 1000, 0.0005),
          "%s %s: printed p50/p99 %s %s vs summary.json %s %s" % (c, size, p50, p99, js["fct_p50_ns"], js["fct_p99_ns"]))
    v = csv_fct[key]
    check(len(v) == int(n), "%s %s: %d completed flows in flows.csv, table %s" % (c, size, len(v), n))
    check(close(nearest(v, 0.5), float(js["fct_p50_ns"]), 0.0011) and close(nearest(v, 0.99), float(js["fct_p99_ns"]), 0.0011),
          "%s %s: flows.csv nearest-rank p50/p99 %s %s vs %s %s" % (c, size, nearest(v, 0.5), nearest(v, 0.99),
                                                                   js["fct_p50_ns"], js["fct_p99_ns"]))
check(len(csv_fct) == fct_rows, "one table row per (class, bucket) with completed flows: %d vs %d" % (fct_rows, len(csv_fct)))
check({c["class"] for c in s["classes"]} == {"long", "incast", "background"}, "three classes")
check(sum(c["completed"] for c in s["classes"]) == s["flows"]["completed"], "classes add up to flows.completed")

# internal
tiers = dict(re.findall(r"(\w+) tx (\d+) rx (\d+)", value("pause frames")) and
             [(t, (int(a), int(b))) for t, a, b in re.findall(r"(\w+) tx (\d+) rx (\d+)", value("pause frames"))])
check(tiers == {t["tier"]: (t["pause_frames_tx"], t["pause_frames_rx"]) for t in s["pfc_by_tier"]}, "pause frames per tier")
check(sum(a for a, _ in tiers.values()) == s["pfc"]["pause_frames_tx"] > 0, "tiers add up to pfc.pause_frames_tx (> 0)")
check(sum(b for _, b in tiers.values()) == s["pfc"]["pause_frames_rx"], "tiers add up to pfc.pause_frames_rx")
m = re.match(r"(\S+) port (\d+) priority (\d+) at ([0-9.]+) ns", value("first XOFF"))
fx = s["first_xoff"]
check(m and (m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)) == (fx["node"], fx["port"], fx["priority"],
                                                                          "%.3f" % float(fx["time_ns"])),
      "first XOFF %s vs %s" % (value("first XOFF"), fx))
first = next(r for r in rows(os.path.join(out, "pfc.csv")) if r["event"] == "xoff")
check((first["node"], int(first["port"]), int(first["priority"]), first["time_ns"]) ==
      (fx["node"], fx["port"], fx["priority"], "%.3f" % float(fx["time_ns"])), "first_xoff is pfc.csv's first xoff row")
m = re.match(r"([0-9.]+) \((\d+) of (\d+)", value("ECN mark ratio"))
check(m and int(m.group(2)) == s["ecn"]["marked"] > 0 and int(m.group(3)) == s["ecn"]["seen"], "ECN counts")
check(m and close(float(m.group(1)), s["ecn"]["marked"] / s["ecn"]["seen"], 5e-7), "ECN mark ratio = marked / seen")
m = re.match(r"(\S+) port (\d+) queue (\d+): (\d+) B", value("peak queue"))
pq = max(((q["peak_bytes"], sw["name"], q["port"], q["queue"]) for sw in s["switches"] for q in sw["queues"]),
         key=lambda t: t[0])
check(m and (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))) == (pq[1], pq[2], pq[3], pq[0]),
      "peak queue %s vs switches[].queues[] %s" % (value("peak queue"), pq))
m = re.match(r"(\S+): (\d+) B \((\d+) cells\)", value("peak buffer"))
check(m and int(m.group(2)) == s["buffer"]["peak_bytes"] and int(m.group(3)) == s["buffer"]["peak_cells"] and
      m.group(1) == s["peak_buffer"]["node"], "peak buffer")
drops = value("drops by reason")
want = {k: v for k, v in s["drops_by_reason"].items() if v}
check((drops == "none") == (not want), "drops by reason: %s vs %s" % (drops, want))
if want:
    check(dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", drops)) == want, "drops by reason")
# hottest links: the three highest peak utilizations in ports.csv.
peak = collections.defaultdict(float)
for r in rows(os.path.join(out, "ports.csv")):
    k = "%s:%s" % (r["node"], r["port"])
    peak[k] = max(peak[k], float(r["utilization"]))
hot = re.findall(r"(\S+:\d+) ([0-9.]+)", value("hottest links"))
check(len(hot) == 3, "three hottest links")
top = sorted(peak.values(), reverse=True)[:3]
for (k, u), t, js in zip(hot, top, s["hottest_ports"]):
    check(close(float(u), peak[k], 0.0005) and close(peak[k], t, 1e-9), "%s %s is among ports.csv's top peaks %s" % (k, u, top))
    check(k == "%s:%d" % (js["node"], js["port"]), "hottest_ports order")
m = re.search(r"^outputs: (.*)$", table, re.M)
listed = m.group(1).split(", ") if m else []
check(len(listed) >= 8 and all(f.startswith(out + "/") and os.path.exists(f) for f in listed),
      "listed outputs exist: %s" % listed)

# --json: summary.json itself on stdout; --quiet: nothing.
out2 = os.path.join(d, "j")
rc, so, err = rocesim("run", os.path.join(SRC, "configs/scenarios/two_hosts.yaml"), "--out", out2, "--json")
check(rc == 0 and so == open(os.path.join(out2, "summary.json")).read(), "--json prints summary.json")
json.loads(so)
rc, so, err = rocesim("run", os.path.join(SRC, "configs/scenarios/two_hosts.yaml"), "--out", out2 + "q", "--quiet")
check(rc == 0 and so == "" and err == "", "--quiet prints nothing")
finish([d])

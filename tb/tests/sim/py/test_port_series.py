"""ports.csv and classes.csv integrate to the whole run (docs/outputs.md).

The per-port series is summed per port and compared with summary.json's
ports[] (tx_busy_fraction, tx_bytes, rx_bytes), the per-class series with
flows.csv's bytes_received summed by tag: two files the series code does not
write. Bugs that fail it: a missed last (partial) interval, a port's
previous sample kept under another port's slot (sums mix), a delta not
advanced (double counting), a class taken from the wrong flow, rows dropped
for a port whose wire time is still being carried."""
import collections
import os

from clitest import check, finish, rocesim, rows, summary, tempdir

d = tempdir()
# A single switch: an incast on h0 (classes "incast") and background noise
# (class "background") and an explicit flow (class "flows"). The interval
# (7 us) does not divide the run's end, which stop_when_done puts at the
# last completion: the last rows cover a partial interval.
cfg = os.path.join(d, "s.yaml")
with open(cfg, "w") as f:
    f.write("""name: series
sim: {duration: 2ms, stop_when_done: true}
topology: {kind: single_switch, hosts: 8, host_rate: 25Gbps}
hosts: {mtu: 4096, transport: rc, cc: dcqcn}
stats: {interval: 7us}
traffic:
  - {kind: incast, receiver: h0, senders: h1-h5, size: 200KiB, count: 2, interval: 150us}
  - {kind: background, load: 0.1, start: 0us, duration: 300us, size: 16KiB}
flows:
  - {src: h6, dst: h7, size: 1MiB, start: 3us}
""")
out = os.path.join(d, "out")
rc, so, se = rocesim("run", cfg, "--out", out, "--quiet")
check(rc == 0, "run exit 0 (%d): %s" % (rc, se))
s = summary(out)
sim_ns = float(s["sim_time_ns"])
interval_ns = 7000.0

busy = collections.defaultdict(float)
txb = collections.defaultdict(int)
rxb = collections.defaultdict(int)
last_t = collections.defaultdict(float)
pr = rows(os.path.join(out, "ports.csv"))
check(len(pr) > 0, "ports.csv has rows")
for r in pr:
    k = (r["node"], int(r["port"]))
    t, iv = float(r["time_ns"]), float(r["interval_ns"])
    u = float(r["utilization"])
    check(0.0 <= u <= 1.0, "utilization within [0, 1]: %s" % r)
    # Every interval is stats.interval long, except the last one of the run.
    check(abs(iv - interval_ns) < 1e-9 or abs(t - sim_ns) < 1e-9, "interval_ns is the interval: %s" % r)
    check(t > last_t[k], "rows of a port in time order: %s" % r)
    last_t[k] = t
    busy[k] += float(r["tx_busy_ns"])
    txb[k] += int(r["tx_bytes"])
    rxb[k] += int(r["rx_bytes"])

seen = 0
for p in s["ports"]:
    k = (p["node"], p["port"])
    if p["tx_frames"] == 0 and p["rx_frames"] == 0:
        check(k not in busy, "an idle port has no rows: %s" % (k,))
        continue
    seen += 1
    # tx_busy_fraction = wire time / sim_time, capped at 1, printed with 6 significant digits.
    frac = min(1.0, busy[k] / sim_ns)
    check(abs(frac - p["tx_busy_fraction"]) <= 1e-5 * max(frac, 1e-3),
          "%s: ports.csv integrates to tx_busy_fraction %g, got %g" % (k, p["tx_busy_fraction"], frac))
    check(txb[k] == p["tx_bytes"], "%s: tx_bytes %d vs summary %d" % (k, txb[k], p["tx_bytes"]))
    check(rxb[k] == p["rx_bytes"], "%s: rx_bytes %d vs summary %d" % (k, rxb[k], p["rx_bytes"]))
check(seen >= 9, "hosts and switch ports were busy (%d)" % seen)

# classes.csv against flows.csv.
want = collections.defaultdict(int)
for r in rows(os.path.join(out, "flows.csv")):
    want[r["tag"] or "flows"] += int(r["bytes_received"])
got = collections.defaultdict(int)
done = {}
for r in rows(os.path.join(out, "classes.csv")):
    got[r["class"]] += int(r["bytes_received"])
    done[r["class"]] = int(r["flows_completed"])
    iv = float(r["interval_ns"])
    if iv > 0:
        # throughput_bps = bytes x 8 / interval, rounded to whole bit/s
        check(abs(float(r["throughput_bps"]) - int(r["bytes_received"]) * 8e9 / iv) <= 0.5 + 1e-9 * float(r["throughput_bps"]),
              "throughput_bps = bytes x 8 / interval: %s" % r)
check(set(want) == {"incast", "background", "flows"}, "three classes in flows.csv: %s" % sorted(want))
check(dict(got) == dict(want), "classes.csv sums %s == flows.csv %s" % (dict(got), dict(want)))
fdone = collections.Counter((r["tag"] or "flows") for r in rows(os.path.join(out, "flows.csv")) if r["completed"] == "1")
check(done == dict(fdone), "flows_completed at the end %s == flows.csv %s" % (done, dict(fdone)))
finish([d])

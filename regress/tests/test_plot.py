#!/usr/bin/python3
"""regress/plot on a pfc_incast run (and a DCQCN incast for the rate plot) writes the per-run PNGs, and every
plotted series equals the run's CSV data, read here with the csv module."""
import csv
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

sys.path.insert(0, os.path.join(C.ROOT, "regress"))
from regresslib import plots  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rows(d, name):
    with open(os.path.join(d, name), newline="") as f:
        return list(csv.DictReader(f))


def lines(fig, panel=0):
    """{label: (x, y)} of the lines of one panel of a figure."""
    ax = fig.axes[panel]
    return {ln.get_label(): (list(map(float, ln.get_xdata())), list(map(float, ln.get_ydata())))
            for ln in ax.get_lines()}


def steps(evts, end):
    """Step series as the plot's docstring defines it: 0 from time 0, each event's value from its time, held to
    the end of the run."""
    xs, ys = [0.0], [0.0]
    for t, v in evts:
        xs.append(t)
        ys.append(v)
    return xs + [max(end, xs[-1])], ys + [ys[-1]]


class Plot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.mkdtemp(prefix="regress-plot-")
        cls.pfc = os.path.join(cls.tmp, "pfc_incast")
        cls.dcqcn = os.path.join(cls.tmp, "incast_dcqcn")
        for d, scen, sets in ((cls.pfc, "pfc_incast", ["stats.flow_series=true"]),
                              (cls.dcqcn, "incast_dcqcn", ["sim.duration=300us"])):
            cmd = [C.BIN, "run", os.path.join(C.SCENARIOS, scen + ".yaml"), "--out", d, "--quiet"]
            for s in sets:
                cmd += ["--set", s]
            subprocess.run(cmd, check=True)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.tmp])

    def test_cli_writes_the_pngs(self):
        r = subprocess.run(["/usr/bin/python3", os.path.join(C.ROOT, "regress", "plot"), self.pfc],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        # pfc_incast has switch queues, PFC, ECN marking (its queue has a marker) and completed flows, and
        # flow_series was asked for; it runs no DCQCN (no cc.csv), which the tool says.
        for name in ("queue_depth.png", "ecn_mark_ratio.png", "pfc.png", "flow_throughput.png",
                     "fct_slowdown.png"):
            with open(os.path.join(self.pfc, "plots", name), "rb") as f:
                self.assertEqual(f.read(8), PNG_MAGIC, name)
            self.assertGreater(os.path.getsize(os.path.join(self.pfc, "plots", name)), 10_000, name)
        self.assertFalse(os.path.exists(os.path.join(self.pfc, "plots", "dcqcn_rate.png")))
        self.assertIn("no dcqcn_rate.png", r.stdout)
        r = subprocess.run(["/usr/bin/python3", os.path.join(C.ROOT, "regress", "plot"), self.tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a rocesim run directory", r.stderr)

    def test_series_equal_csv(self):
        figs, _ = plots.figures(self.pfc)
        d = self.pfc
        import json
        with open(os.path.join(d, "summary.json")) as f:
            summ = json.load(f)
        end_us = summ["sim_time_ns"] / 1000
        q = rows(d, "queues.csv")
        # Queue depth: KiB against us, per queue; the deepest queue of the run is among the lines.
        got = lines(figs["queue_depth.png"])
        self.assertTrue(got)
        for label, (x, y) in got.items():
            mine = [r for r in q if "%s:%s q%s" % (r["node"], r["port"], r["queue"]) == label]
            self.assertEqual(x, [float(r["time_ns"]) / 1000 for r in mine], label)
            self.assertEqual(y, [int(r["depth_bytes"]) / 1024 for r in mine], label)
        deepest = max(q, key=lambda r: int(r["depth_bytes"]))
        self.assertIn("%s:%s q%s" % (deepest["node"], deepest["port"], deepest["queue"]), got)
        # ECN mark ratio per queue.
        got = lines(figs["ecn_mark_ratio.png"])
        self.assertTrue(got)
        for label, (x, y) in got.items():
            mine = [r for r in q if "%s:%s q%s" % (r["node"], r["port"], r["queue"]) == label
                    and r["ecn_mark_ratio"] != ""]
            self.assertEqual(y, [float(r["ecn_mark_ratio"]) for r in mine], label)
            self.assertEqual(x, [float(r["time_ns"]) / 1000 for r in mine], label)
        # PFC: XOFF state (xoff = 1, xon = 0) and the transmitters' paused state, steps over the run.
        ev = rows(d, "pfc.csv")
        # The pause rate (panel 0): per switch ingress port, its xoff rows in each of 50 equal intervals of the
        # run (the last one closed at the end), divided by the interval in ms; the port with most XOFFs shown.
        got = lines(figs["pfc.png"], 0)
        w_ns = summ["sim_time_ns"] / 50
        self.assertEqual(len(got), min(6, len({(r["node"], r["port"]) for r in ev if r["event"] == "xoff"})))
        for label, (x, y) in got.items():
            ts = [float(r["time_ns"]) for r in ev if r["event"] == "xoff" and "%s:%s" % (r["node"], r["port"]) == label]
            want = [sum(1 for t in ts if i * w_ns <= t < (i + 1) * w_ns or (i == 49 and t >= 50 * w_ns))
                    / (w_ns / 1e6) for i in range(50)]
            self.assertEqual(y, want, label)
            self.assertEqual(x, [i * w_ns / 1000 for i in range(50)], label)
            self.assertAlmostEqual(sum(v * w_ns / 1e6 for v in y), len(ts), places=6)   # every XOFF counted once
        busiest = max({(r["node"], r["port"]) for r in ev if r["event"] == "xoff"},
                      key=lambda k: sum(1 for r in ev if r["event"] == "xoff" and (r["node"], r["port"]) == k))
        self.assertIn("%s:%s" % busiest, got)
        for panel, (on, off) in enumerate((("xoff", "xon"), ("pause_start", "pause_end")), start=1):
            got = lines(figs["pfc.png"], panel)
            self.assertTrue(got, panel)
            for label, (x, y) in got.items():
                mine = [(float(r["time_ns"]) / 1000, 1.0 if r["event"] == on else 0.0) for r in ev
                        if "%s:%s prio %s" % (r["node"], r["port"], r["priority"]) == label and r["event"] in (on, off)]
                self.assertEqual((x, y), steps(mine, end_us), label)
        # Per-flow throughput from flow_series.csv, Gbps.
        fs = rows(d, "flow_series.csv")
        for label, (x, y) in lines(figs["flow_throughput.png"]).items():
            mine = [r for r in fs if "flow %s" % r["flow"] == label]
            self.assertEqual(x, [float(r["time_ns"]) / 1000 for r in mine], label)
            self.assertEqual(y, [int(r["throughput_bps"]) / 1e9 for r in mine], label)
        # FCT slowdown CDF per size bucket; the bucket edges are read from summary.json's fct.by_size, and each
        # bucket's count equals its `flows` there (completed flows).
        edges = [b["max_bytes"] for b in summ["fct"]["by_size"]]
        got = lines(figs["fct_slowdown.png"])
        flows = [f for f in rows(d, "flows.csv") if f["completed"] == "1"]
        n_lines = 0
        for i, b in enumerate(summ["fct"]["by_size"]):
            lo = edges[i - 1] if i else 0
            mine = sorted(float(f["slowdown"]) for f in flows
                          if int(f["size_bytes"]) >= lo and (b["max_bytes"] is None or int(f["size_bytes"]) < b["max_bytes"]))
            label = [k for k in got if k.endswith("(%d flows)" % len(mine))] if mine else []
            self.assertEqual(len(mine), b["flows"])
            if mine:
                n_lines += 1
                x, y = got[label[0]]
                self.assertEqual(x, mine)
                self.assertEqual(y, [(k + 1) / len(mine) for k in range(len(mine))])
        self.assertEqual(n_lines, len(got))

    def test_knee_rule(self):
        # y = min(x, 3) on x = 0..6 rises then saturates: scaled to [0, 1], the chord is y = x / 2 and the
        # point farthest from it is the corner at x = 3 (distance 1 - 1/2), the knee by the rule's definition.
        xs = list(range(7))
        self.assertEqual(plots.knee(xs, [min(x, 3) for x in xs]), 3)
        # Unevenly spaced x: the corner of y = min(x, 64) on 32..256 is at 64 (index 1).
        ks = [32, 64, 96, 128, 160, 192, 224, 256]
        self.assertEqual(plots.knee(ks, [min(k, 64) for k in ks]), 1)
        self.assertIsNone(plots.knee(xs, [5] * 7))          # flat: no knee
        self.assertIsNone(plots.knee([1, 2], [1, 2]))       # two points: no interior point
        # Swept values as numbers in base units.
        self.assertEqual([plots.quantity(v) for v in ("32KiB", "10KB", "25Gbps", "2us", "7", "x")],
                         [32768, 10000, 25e9, 2e-6, 7, None])

    def test_sweep_plot_series_equal_runs(self):
        # Each panel's median line is the median over seeds of the values given for each point.
        per = {"m": [[1, 2, 3], [4, 6], [7, 8, 9, 10]]}
        fig, knees = plots.sweep("s", "k", ["1KiB", "2KiB", "4KiB"], per)
        got = {ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata())) for ln in fig.axes[0].get_lines()}
        self.assertEqual(got["median"], ([1024.0, 2048.0, 4096.0], [2.0, 5.0, 8.5]))
        self.assertIn("m", knees)

    def test_dcqcn_series_equal_cc_csv(self):
        figs, _ = plots.figures(self.dcqcn)
        import json
        with open(os.path.join(self.dcqcn, "summary.json")) as f:
            end_us = json.load(f)["sim_time_ns"] / 1000
        cc = rows(self.dcqcn, "cc.csv")
        fl = {f["flow_id"]: f for f in rows(self.dcqcn, "flows.csv")}
        got = lines(figs["dcqcn_rate.png"])
        self.assertTrue(got)
        for label, (x, y) in got.items():
            k = label.split()[1]
            mine = [r for r in cc if r["flow"] == k]
            # The configured rate from the flow's start, then the rate after each reaction-point event.
            wx = [float(fl[k]["start_ns"]) / 1000] + [float(r["time_ns"]) / 1000 for r in mine]
            wy = [int(fl[k]["rate_bps"]) / 1e9] + [int(r["rate_bps"]) / 1e9 for r in mine]
            self.assertEqual(x, wx + [max(end_us, wx[-1])], label)
            self.assertEqual(y, wy + [wy[-1]], label)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""Aggregation per grid point: results.csv's median, p90, min and max over seeds equal those computed here from
every run's own summary.json and flows.csv; the flows.csv-derived metrics agree with summary.json's independent
per-bucket figures and with the formulas of docs/regress.md recomputed here."""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

SEEDS = [1, 2, 3, 4, 5]
KS = ["64KiB", "192KiB"]
METRICS = ["ecn.marked", "fct.slowdown_p99", "fct.by_size[0].slowdown_p99", "pfc.pause_frames_tx",
           "csv.goodput_gbps", "csv.flows.lt10KB", "csv.slowdown_p99.lt10KB", "csv.fct_us_p99.lt10KB",
           "csv.completed_fraction", "csv.tag_fct_us_p95.incast", "csv.tag_fct_us_p50.incast"]
# Checked against regress/sweeps/ecn_sweep.sh, an independent implementation of the same definitions.
EXTRA = ["csv.bulk_goodput_gbps", "derived.ecn_mark_ratio"]


def nearest_rank(v, p):
    v = sorted(v)
    return v[math.ceil(p * len(v)) - 1]


def from_run(d):
    """Every metric of METRICS for one run directory, computed here."""
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(d, "flows.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    small = [r for r in rows if int(r["size_bytes"]) < 10_000]          # summary's first bucket: < 10 KB
    small_done = [r for r in small if r["completed"] == "1"]
    # Goodput: payload received x 8 over the span from the first start to the last finish (or the end of the
    # run for an unfinished flow); bits per ns = Gbps.
    t0 = min(float(r["start_ns"]) for r in rows)
    t1 = max(float(r["finish_ns"] or s["sim_time_ns"]) for r in rows)
    return {
        "ecn.marked": s["ecn"]["marked"],
        "fct.slowdown_p99": s["fct"]["slowdown_p99"],
        "fct.by_size[0].slowdown_p99": s["fct"]["by_size"][0]["slowdown_p99"],
        "pfc.pause_frames_tx": s["pfc"]["pause_frames_tx"],
        "csv.goodput_gbps": sum(int(r["bytes_received"]) for r in rows) * 8 / (t1 - t0),
        "csv.flows.lt10KB": len(small),
        "csv.slowdown_p99.lt10KB": nearest_rank([float(r["slowdown"]) for r in small_done], 0.99),
        "csv.fct_us_p99.lt10KB": nearest_rank([float(r["fct_ns"]) / 1000 for r in small_done], 0.99),
        "csv.completed_fraction": sum(r["completed"] == "1" for r in rows) / len(rows),
        # The incast generator's completed flows (flows.csv tag), p95 and median FCT in us.
        "csv.tag_fct_us_p95.incast": nearest_rank([float(r["fct_ns"]) / 1000 for r in rows
                                                   if r["tag"] == "incast" and r["completed"] == "1"], 0.95),
        "csv.tag_fct_us_p50.incast": nearest_rank([float(r["fct_ns"]) / 1000 for r in rows
                                                   if r["tag"] == "incast" and r["completed"] == "1"], 0.50),
        "small_done": len(small_done),
    }, s


class Aggregate(unittest.TestCase):
    def test_results_equal_statistics_of_the_runs(self):
        d = C.tmpdir(self)
        suite = C.write(os.path.join(d, "agg.yaml"), """
            name: agg
            defaults: {seeds: %s, timeout: 60s}
            scenarios:
              - config: %s/ecn_k_sweep.yaml
                set: {switch.ecn.mode: threshold}
                grid: {switch.ecn.k: %s}
                metrics: %s
            """ % (SEEDS, C.SCENARIOS, KS, json.dumps(METRICS + EXTRA)))
        out = os.path.join(d, "out")
        r = C.regress(suite, out, "--jobs", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "results.csv"), newline="") as f:
            results = {(x["switch.ecn.k"], x["metric"]): x for x in csv.DictReader(f)}
        varied = set()
        for k in KS:
            per_seed = []
            for seed in SEEDS:
                mine, summ = from_run(os.path.join(out, "runs", "ecn_k_sweep", "k=" + k, "s%d" % seed, "out"))
                self.assertEqual(summ["seed"], seed)
                self.assertEqual(summ["complete"], True)
                # Two outputs of the same run agree: flows.csv's completed small flows and their p99 slowdown
                # equal summary.json's first FCT bucket (whose `flows` counts the completed ones; summary.json
                # has 6 significant digits).
                self.assertEqual(mine["small_done"], summ["fct"]["by_size"][0]["flows"])
                self.assertTrue(math.isclose(mine["csv.slowdown_p99.lt10KB"],
                                             summ["fct"]["by_size"][0]["slowdown_p99"], rel_tol=1e-5))
                per_seed.append(mine)
            for m in METRICS:
                v = [x[m] for x in per_seed]
                if len(set(v)) > 1:
                    varied.add(m)
                row = results[(k, m)]
                self.assertEqual(int(row["n"]), len(SEEDS), m)
                want = {"median": statistics.median(v), "p90": nearest_rank(v, 0.9), "min": min(v), "max": max(v)}
                for stat, w in want.items():
                    self.assertTrue(math.isclose(float(row[stat]), w, rel_tol=1e-6, abs_tol=1e-9),
                                    "%s %s %s: results.csv %s, computed %s" % (k, m, stat, row[stat], w))
        # The seeds matter in this scenario (jittered rounds): the statistics were not all over equal values.
        self.assertIn("ecn.marked", varied)
        # runs.csv has one row per run, results.md one table row per grid point.
        with open(os.path.join(out, "runs.csv"), newline="") as f:
            runs = list(csv.DictReader(f))
        self.assertEqual(len(runs), len(SEEDS) * len(KS))
        # The bulk goodput and the mark ratio equal those of regress/sweeps/ecn_sweep.sh (its own code, same
        # definitions: throughput_gbps with 4 decimals, mark_ratio with 6) on the same runs, seeds 1 and 2.
        sweep = os.path.join(d, "sweep")
        subprocess.run(["bash", os.path.join(C.ROOT, "regress", "sweeps", "ecn_sweep.sh"), sweep], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, ROCESIM=C.BIN, SEEDS="2", KS=" ".join(k[:-3] for k in KS)))
        with open(os.path.join(sweep, "ecn_sweep_runs.csv"), newline="") as f:
            theirs = list(csv.DictReader(f))
        self.assertEqual(len(theirs), 2 * len(KS))
        for t in theirs:
            mine = [r for r in runs if r["switch.ecn.k"] == "%dKiB" % (int(t["k_bytes"]) // 1024)
                    and r["seed"] == t["seed"]]
            self.assertEqual(len(mine), 1)
            self.assertAlmostEqual(float(mine[0]["csv.bulk_goodput_gbps"]), float(t["throughput_gbps"]), places=4)
            self.assertAlmostEqual(float(mine[0]["derived.ecn_mark_ratio"]), float(t["mark_ratio"]), places=6)
        with open(os.path.join(out, "results.md")) as f:
            md = f.read()
        for k in KS:
            self.assertIn("| switch.ecn.k=%s | %d |" % (k, len(SEEDS)), md)

    def test_sweep_script_with_flows_after_the_end(self):
        """regress/sweeps/ecn_sweep.sh on a run cut to 1.5 ms: the incast's third and fourth rounds (from 2.1 and
        3.1 ms) start after the end and count nothing. Before the fix their intervals [start, end] ran
        backwards and shrank the union, so the throughput came out too high."""
        d = C.tmpdir(self)
        sweep = os.path.join(d, "sweep")
        subprocess.run(["bash", os.path.join(C.ROOT, "regress", "sweeps", "ecn_sweep.sh"), sweep,
                        "--set", "sim.duration=1500us"], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, ROCESIM=C.BIN, SEEDS="1", KS="64"))
        with open(os.path.join(sweep, "ecn_sweep_runs.csv"), newline="") as f:
            (row,) = list(csv.DictReader(f))
        run = os.path.join(sweep, "k65536", "s1")
        with open(os.path.join(run, "summary.json")) as f:
            end = json.load(f)["sim_time_ns"]
        with open(os.path.join(run, "flows.csv"), newline="") as f:
            bulk = [r for r in csv.DictReader(f) if int(r["size_bytes"]) >= 10_000]
        late = [r for r in bulk if float(r["start_ns"]) >= end]
        self.assertEqual(len(late), 16)   # rounds 3 and 4 of the 8-sender incast: configured, never started
        # Time with at least one bulk flow active, summed over the elementary intervals between all the flows'
        # start and end times (a different method from the script's interval union): each active flow covers
        # [start, finish or end).
        spans = [(float(r["start_ns"]), float(r["finish_ns"]) if r["finish_ns"] else end) for r in bulk
                 if float(r["start_ns"]) < end]
        marks = sorted({t for s in spans for t in s})
        active = sum(b - a for a, b in zip(marks, marks[1:])
                     if any(s <= a and b <= e for s, e in spans))
        want = sum(int(r["bytes_received"]) for r in bulk) * 8 / active
        self.assertAlmostEqual(float(row["throughput_gbps"]), want, places=3)


if __name__ == "__main__":
    unittest.main()

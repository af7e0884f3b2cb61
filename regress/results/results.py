#!/usr/bin/python3
"""Regenerates the tables of docs/results.md from runs of the shipped scenarios.

    /usr/bin/python3 regress/results/results.py [--bin build/bin/rocesim] [--out out/results]

Runs the DCQCN two-flow scenario with both presets (and the 1 % Pmax
variant), the leaf-spine incast with and without DCQCN, and WebSearch on the
leaf-spine, then prints the Markdown tables that docs/results.md quotes. Every
figure is read from the run's own outputs (summary.json, flows.csv, cc.csv,
queues.csv); the definitions are given next to each table.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(binary, scenario, out, sets=()):
    cmd = [binary, "run", os.path.join(ROOT, scenario), "--out", out, "--force"]  # reruns replace
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("results: %s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, r.stdout))
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rate_at(cc_rows, flow, t_ns, line_bps):
    """The reaction point's rate at t: its last cc.csv sample at or before t
    (a flow runs at line rate until its first CNP)."""
    rate = line_bps
    for r in cc_rows:
        if int(r["flow"]) == flow and float(r["time_ns"]) <= t_ns:
            rate = int(r["rate_bps"])
    return rate


def gbps(b):
    return "%.1f" % (b / 1e9)


def dcqcn_table(binary, out):
    times_ms = [10, 20, 30, 40, 50, 55, 59]
    lines = ["| preset | " + " | ".join("%d ms" % t for t in times_ms) +
             " | CNPs | first CNP | peak queue after 30 ms |",
             "|---|" + "---|" * len(times_ms) + "---|---|---|"]
    variants = [("`paper` (Zhu et al.)", "paper", []),
                ("`nvidia` (ConnectX defaults)", "nvidia", []),
                ("`paper`, Pmax 1 %", "paper1pct",
                 ["switch.ecn.kmin=5KB", "switch.ecn.kmax=200KB", "switch.ecn.pmax=0.01"])]
    for label, tag, extra in variants:
        preset = "nvidia" if tag == "nvidia" else "paper"
        d = os.path.join(out, "dcqcn_" + tag)
        s = run(binary, "configs/scenarios/dcqcn_two_flows.yaml", d, ["hosts.dcqcn.preset=" + preset] + extra)
        cc_rows = read_csv(os.path.join(d, "cc.csv"))
        cells = []
        for t in times_ms:
            cells.append("%s / %s" % (gbps(rate_at(cc_rows, 0, t * 1e6, 100e9)), gbps(rate_at(cc_rows, 1, t * 1e6, 100e9))))
        first = min((float(r["time_ns"]) for r in cc_rows), default=None)
        # The bottleneck is sw0's port towards h2 (port 2), RoCE queue 3.
        q = [int(r["depth_bytes"]) for r in read_csv(os.path.join(d, "queues.csv"))
             if r["node"] == "sw0" and r["port"] == "2" and r["queue"] == "3" and float(r["time_ns"]) >= 30e6]
        lines.append("| %s | %s | %d | %s | %s |" % (
            label, " | ".join(cells), s["nic"]["cnps_received"],
            "%.3f ms" % (first / 1e6) if first is not None else "none",
            "%.0f KB" % (max(q) / 1e3) if q else "n/a"))
    # The lone flow: the same scenario stopped before the second flow starts.
    d = os.path.join(out, "dcqcn_lone")
    s = run(binary, "configs/scenarios/dcqcn_two_flows.yaml", d, ["sim.duration=4900us"])
    lone = "Flow 0 alone (the same run stopped at 4.9 ms, before flow 1 starts): %d ECN marks, %d CNPs." % (
        s["ecn"]["marked"], s["nic"]["cnps_received"])
    return "\n".join(lines) + "\n\n" + lone


def incast_table(binary, out):
    lines = ["| cc | pause frames | drops | last flow done | slowdown p50 | slowdown p99 |", "|---|---|---|---|---|---|"]
    for label, cc in [("`dcqcn` (paper)", "dcqcn"), ("`none` (PFC only)", "none")]:
        d = os.path.join(out, "incast_" + cc)
        s = run(binary, "configs/scenarios/incast_dcqcn.yaml", d, ["hosts.cc=" + cc])
        fin = [float(r["finish_ns"]) for r in read_csv(os.path.join(d, "flows.csv")) if r["finish_ns"]]
        lines.append("| %s | %d | %d | %s | %s | %s |" % (
            label, s["pfc"]["pause_frames_tx"], s["packets"]["dropped"],
            "%.2f ms" % (max(fin) / 1e6) if fin else "none",
            fmt(s["fct"]["slowdown_p50"]), fmt(s["fct"]["slowdown_p99"])))
    return "\n".join(lines)


def fmt(x):
    return "n/a" if x is None else "%.2f" % x


def websearch(binary, out):
    d = os.path.join(out, "websearch")
    s = run(binary, "configs/scenarios/websearch_leafspine.yaml", d)
    return ("%d flows, %d completed (the rest still running at the end), slowdown p50 %s, p95 %s, p99 %s; "
            "%d drops, %d pause frames; %.2f M link hops." % (
                s["flows"]["total"], s["flows"]["completed"], fmt(s["fct"]["slowdown_p50"]),
                fmt(s["fct"]["slowdown_p95"]), fmt(s["fct"]["slowdown_p99"]), s["packets"]["dropped"],
                s["pfc"]["pause_frames_tx"], s["link_hops"] / 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin", "rocesim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "results"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print("## DCQCN two flows\n")
    print(dcqcn_table(a.bin, a.out))
    print("\n## Incast with DCQCN and PFC\n")
    print(incast_table(a.bin, a.out))
    print("\n## WebSearch\n")
    print(websearch(a.bin, a.out))


if __name__ == "__main__":
    main()

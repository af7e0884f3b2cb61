#!/usr/bin/python3
"""The same incast with each queue manager: tlm (the C++ model), rtl (the
Verilated RTL alone) and lockstep (both, compared after every operation).

Runs configs/scenarios/pfc_incast.yaml (or the scenario given) REPEAT times
per mode, the modes alternating so that machine noise falls on all three
alike, and prints per mode the median wall time of the simulation, the
queue-manager operations and RTL clock edges (from summary.json), and the
ratio to tlm. Figures are quoted in docs/performance.md.

  regress/perf/qm_impl.py [--build DIR] [--repeat N] [--scenario FILE] [--set K=V ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MODES = ("tlm", "rtl", "lockstep")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scenario", default="configs/scenarios/pfc_incast.yaml")
    ap.add_argument("--set", action="append", default=[], help="passed to rocesim run --set")
    a = ap.parse_args()
    rocesim = os.path.join(a.build, "bin", "rocesim")
    if a.repeat < 1:
        sys.exit("qm_impl: --repeat must be at least 1")
    wall = {m: [] for m in MODES}
    info = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.repeat):
            for m in MODES:
                out = os.path.join(tmp, f"{m}{i}")
                cmd = [rocesim, "run", a.scenario, "--out", out, "--quiet", "--queue-impl", m]
                for kv in a.set:
                    cmd += ["--set", kv]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"qm_impl: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
                s = json.load(open(os.path.join(out, "summary.json")))
                wall[m].append(s["wall_time_s"])
                blk = s.get("lockstep") or s.get("rtl") or {}
                info[m] = (s["link_hops"], blk.get("operations"), blk.get("rtl_cycles", blk.get("cycles")), blk)
    base = statistics.median(wall["tlm"])
    print(f"== {a.scenario}: median of {a.repeat} runs per mode (wall time of the simulation, summary.json)")
    print(f"{'mode':9} {'wall s':>8} {'x tlm':>6} {'link hops':>10} {'qm ops':>9} {'RTL edges':>11}")
    for m in MODES:
        w = statistics.median(wall[m])
        hops, ops, cyc, _ = info[m]
        print(f"{m:9} {w:8.3f} {w / base:6.2f} {hops:10} {ops if ops is not None else '-':>9} "
              f"{cyc if cyc is not None else '-':>11}")
    ls = info["lockstep"][3]
    print(f"lockstep: {ls.get('mismatches')} mismatches; cycle difference RTL - TLM: p50 {ls.get('cycle_diff_p50')}, "
          f"p99 {ls.get('cycle_diff_p99')}, min {ls.get('cycle_diff_min')}, max {ls.get('cycle_diff_max')}")


if __name__ == "__main__":
    main()

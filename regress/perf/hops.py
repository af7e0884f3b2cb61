#!/usr/bin/python3
"""Cost per link hop of the performance scenarios (issue 12).

For each scenario: link hops, events (timer firings), events per hop, the
simulated time, wall time of the simulation (summary.json's wall_time_s: run(), elaboration and
outputs excluded), link hops per wall-second, and the peak RSS of the whole
process. With --callgrind, also the instructions per link hop of the
simulation phase (the inclusive cost of sc_core::sc_start under
valgrind --tool=callgrind): deterministic, so stable to the instruction on a
noisy machine, unlike wall time. --repeat N runs each scenario N times and
prints the median wall time.

  regress/perf/hops.py [--build DIR] [--repeat N] [--callgrind] [SCENARIO.yaml ...]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

DEFAULT = [
    "regress/perf/fat_tree_k8_incast.yaml",
    "regress/perf/fat_tree_k12_permutation.yaml",
    "regress/perf/switch_permutation.yaml",
    "configs/scenarios/websearch_leafspine.yaml",
]


# Runs rocesim from a fresh Python child, which reports the peak RSS of its own
# only child: RUSAGE_CHILDREN of this process would be the largest run so far.
_RSS_CHILD = ("import resource, subprocess, sys\n"
              "rc = subprocess.run(sys.argv[1:]).returncode\n"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
              "sys.exit(rc)\n")


def run_once(rocesim, cfg, out):
    p = subprocess.run([sys.executable, "-c", _RSS_CHILD, rocesim, "run", cfg, "--out", out, "--quiet", "--force"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"hops.py: {cfg}: rocesim exited {p.returncode}\n{p.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s, int(p.stdout.split()[-1]) / 1024.0


def callgrind_per_hop(rocesim, cfg, out, hops):
    cg = os.path.join(out, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg, rocesim, "run", cfg,
                    "--out", os.path.join(out, "cg"), "--quiet", "--force"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", cg], check=True, capture_output=True,
                         text=True).stdout
    for line in ann.splitlines():
        if "sc_core::sc_start(" in line:
            instr = int(re.match(r"\s*([\d,]+)", line).group(1).replace(",", ""))
            return instr, instr / hops
    sys.exit("hops.py: sc_core::sc_start not found in the callgrind profile")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--callgrind", action="store_true", help="also instructions per link hop (slow: valgrind)")
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    rocesim = os.path.join(a.build, "bin", "rocesim")
    if a.callgrind and not shutil.which("valgrind"):
        sys.exit("hops.py: --callgrind needs valgrind (apt-get install valgrind)")
    print(f"{'scenario':<48} {'link hops':>10} {'events':>10} {'ev/hop':>6} {'wall s':>7} "
          f"{'hops/s':>8} {'RSS MiB':>8} {'sim ms':>8}" + (f" {'instr/hop':>10}" if a.callgrind else ""))
    for cfg in a.scenarios:
        work = tempfile.mkdtemp(prefix="rocesim-hops-")
        try:
            walls, rss = [], 0.0
            for _ in range(a.repeat):
                s, r = run_once(rocesim, cfg, os.path.join(work, "out"))
                walls.append(s["wall_time_s"])
                rss = r
            hops, events = s["link_hops"], s["events"]
            wall = statistics.median(walls)
            line = (f"{cfg:<48} {hops:>10} {events:>10} {events / hops:>6.2f} {wall:>7.3f} "
                    f"{hops / wall / 1e6:>7.2f}M {rss:>8.1f} {s['sim_time_ns'] / 1e6:>8.3f}")
            if a.callgrind:
                _, per_hop = callgrind_per_hop(rocesim, cfg, work, hops)
                line += f" {per_hop:>10.0f}"
            print(line, flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""run.peak_rss_mib, the peak RSS regress/suites/perf.yaml reports: a fake rocesim that touches a known amount
of memory is measured at that amount plus the size of a Python process, not at the runner's size; a suite
that does not report it runs rocesim directly. And perf.yaml runs every regress/perf/*.yaml scenario."""
import csv
import glob
import os
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

# The fake: `run` fills MiB mebibytes with non-zero bytes (so every page is resident), sleeps a little and
# writes a complete summary.json.
FAKE = r'''#!/usr/bin/python3
import json, os, sys, time
args = sys.argv[1:]
if args[0] == "validate":
    sys.exit(0)
out = args[args.index("--out") + 1]
mib = int(args[args.index("--seed") + 1]) * 64
block = b"\x01" * (mib << 20)
time.sleep(0.1)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"complete": True, "reason": None, "sim_time_ns": 1.0, "touched": len(block)}, f)
'''


class PeakRss(unittest.TestCase):
    def test_peak_rss_of_a_known_allocation(self):
        d = C.tmpdir(self)
        fake = os.path.join(d, "fake-rocesim")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)
        suite = C.write(os.path.join(d, "rss.yaml"), """
            name: rss
            defaults: {seeds: [1, 3], timeout: 60s}
            scenarios:
              - config: %s/two_hosts.yaml
                metrics: [run.peak_rss_mib, touched]
              - config: %s/two_hosts.yaml
                name: plain
                metrics: [touched]
            """ % (C.SCENARIOS, C.SCENARIOS))
        out = os.path.join(d, "out")
        r = C.regress(suite, out, "--jobs", "2", binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "runs.csv"), newline="") as f:
            runs = {(x["scenario"], x["seed"]): x for x in csv.DictReader(f)}
        for seed in (1, 3):
            mib = 64 * seed
            peak = float(runs[("two_hosts", str(seed))]["run.peak_rss_mib"])
            # The block itself, plus a Python interpreter (about 10 MiB; 40 allowed), and not the runner.
            self.assertGreaterEqual(peak, mib)
            self.assertLess(peak, mib + 40)
            self.assertEqual(runs[("plain", str(seed))]["run.peak_rss_mib"], "")
            self.assertFalse(os.path.exists(os.path.join(out, "runs", "plain", "base", "s%d" % seed, "rss.json")))

    def test_perf_suite_runs_every_perf_scenario(self):
        path = os.path.join(C.ROOT, "regress", "suites", "perf.yaml")
        with open(path) as f:
            doc = yaml.safe_load(f)
        used = {os.path.realpath(os.path.join(os.path.dirname(path), e["config"])) for e in doc["scenarios"]}
        for p in glob.glob(os.path.join(C.ROOT, "regress", "perf", "*.yaml")):
            self.assertIn(os.path.realpath(p), used)
        self.assertIn("run.peak_rss_mib", doc["defaults"]["metrics"])
        self.assertIn("link_hops_per_wall_s", doc["defaults"]["metrics"])


class SameOutputs(unittest.TestCase):
    """regress/perf/same_outputs.sh, the before/after check of a speed change: one binary against itself is
    SAME (its runs differ only in the wall-clock fields it ignores), a binary whose runs compute something else
    is DIFF with status 1, and a usage error is status 2."""

    SCRIPT = os.path.join(C.ROOT, "regress", "perf", "same_outputs.sh")
    SCENARIO = os.path.join(C.SCENARIOS, "pfc_incast.yaml")

    def run_script(self, *args):
        return subprocess.run(["bash", self.SCRIPT, *args], capture_output=True, text=True, cwd=C.ROOT)

    def test_a_binary_against_itself_is_the_same(self):
        r = self.run_script(C.BIN, C.BIN, self.SCENARIO)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.split(), ["SAME", "pfc_incast"])

    def test_a_change_of_behaviour_is_a_diff(self):
        d = C.tmpdir(self)
        other = C.write(os.path.join(d, "shorter"), """
            #!/bin/bash
            # The real binary, with the run cut short: different outputs.
            exec "%s" "$@" --set sim.duration=200us
            """ % C.BIN)
        os.chmod(other, 0o755)
        r = self.run_script(C.BIN, other, self.SCENARIO)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertTrue(r.stdout.startswith("DIFF pfc_incast"), r.stdout)
        self.assertIn("summary.json", r.stdout)

    def test_usage_errors(self):
        self.assertEqual(self.run_script(C.BIN).returncode, 2)
        self.assertEqual(self.run_script(C.BIN, "/nonexistent/rocesim").returncode, 2)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""Criteria and baselines: a criterion broken on purpose shows as a JUnit failure and a non-zero exit status;
--update-baselines writes the medians and a baseline moved outside its tolerance fails the grid point."""
import csv
import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def nearest_rank(values, p):
    """Nearest-rank percentile (docs/outputs.md: summary.json's percentiles), computed here independently."""
    v = sorted(values)
    return v[math.ceil(p * len(v)) - 1]


class Criteria(unittest.TestCase):
    def suite(self, d, criteria, baseline=""):
        return C.write(os.path.join(d, "crit.yaml"), """
            name: crit
            %s
            defaults: {seeds: [1, 2], timeout: 60s}
            scenarios:
              - config: %s/two_hosts.yaml
                criteria: %s
                %s
            """ % ("baselines: base.json" if baseline else "", C.SCENARIOS, criteria, baseline))

    def test_broken_criterion_fails_in_junit_and_exit_status(self):
        d = C.tmpdir(self)
        # flows.csv's slowdown is FCT / ideal FCT floored at 1 (docs/outputs.md), so fct.slowdown_p99 < 1
        # cannot hold for any run: the criterion is broken on purpose. slowdown >= 1 holds for every run, and
        # both of the default scenario's flows complete (nothing else shares their links).
        suite = self.suite(d, '["fct.slowdown_p99 < 1", "fct.slowdown_p99 >= 1", "flows.completed == 2",'
                              ' "max(csv.completed_fraction) == 1"]')
        out = os.path.join(d, "out")
        r = C.regress(suite, out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("fct.slowdown_p99 < 1", r.stderr)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        for seed in (1, 2):
            kind, tc = cases["two_hosts [base] seed=%d" % seed]
            self.assertEqual(kind, "failure")
            f = tc.find("failure")
            self.assertEqual(f.get("message"), "1 of 3 checks failed: fct.slowdown_p99 < 1")
            # The value reported is the run's p99 slowdown, recomputed here from its flows.csv.
            with open(os.path.join(out, "runs", "two_hosts", "base", "s%d" % seed, "out", "flows.csv")) as fh:
                slow = [float(x["slowdown"]) for x in csv.DictReader(fh) if x["completed"] == "1"]
            self.assertIn("FAILED fct.slowdown_p99 < 1: got %g" % nearest_rank(slow, 0.99), f.text)
            self.assertNotIn("slowdown_p99 >= 1", f.text)   # passing checks are not listed as failures
        kind, _ = cases["two_hosts [base] over seeds 1, 2"]
        self.assertEqual(kind, "pass")
        # Mending the criterion makes the suite pass with exit status 0, on the same (resumed) runs.
        suite = self.suite(d, '["fct.slowdown_p99 >= 1", "flows.completed == 2"]')
        r = C.regress(suite, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({k: v[0] for k, v in C.junit_cases(os.path.join(out, "junit.xml")).items()},
                         {"two_hosts [base] seed=1": "pass", "two_hosts [base] seed=2": "pass"})

    def test_baselines(self):
        d = C.tmpdir(self)
        suite = self.suite(d, '["flows.completed == 2"]',
                           "baseline: {flows.payload_bytes_delivered: {abs: 0}, csv.goodput_gbps: {rel: 0.01}}")
        out = os.path.join(d, "out")
        # No baseline file yet: the grid point fails and says how to make one.
        r = C.regress(suite, out)
        self.assertEqual(r.returncode, 1, r.stderr)
        kind, tc = C.junit_cases(os.path.join(out, "junit.xml"))["two_hosts [base] over seeds 1, 2"]
        self.assertEqual(kind, "failure")
        self.assertIn("--update-baselines", tc.find("failure").text)
        r = C.regress(suite, out, "--update-baselines")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "base.json")) as f:
            base = json.load(f)["points"]["two_hosts/base"]
        # The payload delivered is every byte of both flows: 16 x 64 KiB + 64 x 4 KiB (configs/scenarios/
        # two_hosts.yaml), whatever the seed.
        self.assertEqual(base["flows.payload_bytes_delivered"], 16 * 65536 + 64 * 4096)
        self.assertIn("csv.goodput_gbps", base)
        r = C.regress(suite, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        # A baseline 2 % above the measured goodput is outside the 1 % tolerance: the point fails, and the
        # failure names the metric; 0.5 % is inside.
        for factor, expect in ((1.02, 1), (1.005, 0)):
            doc = {"points": {"two_hosts/base": dict(base, **{"csv.goodput_gbps": base["csv.goodput_gbps"] * factor})}}
            with open(os.path.join(d, "base.json"), "w") as f:
                json.dump(doc, f)
            r = C.regress(suite, out)
            self.assertEqual(r.returncode, expect, r.stderr)
            kind, tc = C.junit_cases(os.path.join(out, "junit.xml"))["two_hosts [base] over seeds 1, 2"]
            self.assertEqual(kind, "failure" if expect else "pass")
            if expect:
                self.assertIn("median(csv.goodput_gbps)", tc.find("failure").get("message"))
                self.assertNotIn("payload_bytes", tc.find("failure").get("message"))

    def test_smoke_suite_catches_a_broken_mechanism(self):
        """regress/suites/smoke.yaml itself (as regress_smoke runs it in `make test`) with a rocesim whose PFC
        is broken in the pfc_incast scenario only: a fake that adds --set pfc.enabled=false to those runs. The
        scenario's lossless criteria must fail in JUnit and in the exit status, and nothing else may."""
        d = C.tmpdir(self)
        fake = C.wrapper(d, """
            case "$*" in */runs/pfc_incast/*) exec %s "$@" --set pfc.enabled=false;; esac
            """ % C.BIN)
        out = os.path.join(d, "out")
        r = C.regress(os.path.join(C.ROOT, "regress", "suites", "smoke.yaml"), out, "--jobs", "2", binary=fake)
        self.assertEqual(r.returncode, 1, r.stderr)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        broken = {n for n in cases if n.startswith("pfc_incast [")}
        self.assertEqual(len([n for n in broken if "seed=" in n]), 3)   # smoke.yaml: 3 seeds by default
        for n in broken:
            kind, tc = cases[n]
            self.assertEqual(kind, "failure", n)
            if "seed=" in n:
                # Without PFC the 16-to-1 incast overflows the port (it drops) and no pause is sent.
                self.assertIn("packets.dropped == 0", tc.find("failure").get("message"))
                self.assertIn("pfc.pause_frames_tx > 0", tc.find("failure").get("message"))
        self.assertEqual({n: cases[n][0] for n in cases if n not in broken},
                         {n: "pass" for n in cases if n not in broken})


if __name__ == "__main__":
    unittest.main()

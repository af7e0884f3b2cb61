#!/usr/bin/python3
"""A run that crashes and one that hangs past its timeout are reported as errors with their logs, while the
other runs of the suite finish and pass (issue 15: "survives a run that crashes, hangs past its time limit or
fails")."""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def gone(pid, wait_s=5.0):
    """True once pid has exited (absent, or a zombie its new parent has not reaped yet), within wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


class Crash(unittest.TestCase):
    def test_crash_and_hang_are_errors_and_the_rest_finish(self):
        d = C.tmpdir(self)
        # Seed 2 prints a marker and kills itself with SIGSEGV (as a crashing simulator would die); seed 3
        # prints a marker and sleeps far past the suite's 3 s timeout; seeds 1 and 4 run the real rocesim.
        fake = C.wrapper(d, """
            if [ "$SEED" = 2 ]; then echo "fake-crash-marker before the crash" >&2; kill -SEGV $$; fi
            if [ "$SEED" = 3 ]; then echo "fake-hang-marker before the hang"; sleep 600 & echo $! > %s/sleep.pid; wait; fi
            """ % d)
        suite = C.write(os.path.join(d, "crash.yaml"), """
            name: crash
            defaults: {seeds: [1, 2, 3, 4], timeout: 3s}
            scenarios:
              - config: %s/two_hosts.yaml
                criteria: [flows.completed >= 1]
            """ % C.SCENARIOS)
        out = os.path.join(d, "out")
        r = C.regress(suite, out, "--jobs", "2", binary=fake, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        name = "two_hosts [base] seed=%d"
        self.assertEqual(sorted(cases), sorted(name % s for s in (1, 2, 3, 4)))
        kind, tc = cases[name % 2]
        self.assertEqual(kind, "error")
        err = tc.find("error")
        self.assertIn("SIGSEGV", err.get("message"))
        self.assertIn("fake-crash-marker before the crash", err.text)  # the log tail
        kind, tc = cases[name % 3]
        self.assertEqual(kind, "error")
        err = tc.find("error")
        self.assertIn("hung", err.get("message"))
        self.assertIn("3s timeout", err.get("message"))
        self.assertIn("fake-hang-marker before the hang", err.text)
        self.assertNotIn("SIGSEGV", err.get("message"))
        # The others ran to completion: their own summary.json says so (not the runner's word) and they pass.
        for s in (1, 4):
            self.assertEqual(cases[name % s][0], "pass")
            with open(os.path.join(out, "runs", "two_hosts", "base", "s%d" % s, "out", "summary.json")) as f:
                self.assertIs(json.load(f)["complete"], True)
        # The hung run was killed, not waited for: the suite took far less than its 600 s sleep.
        with open(os.path.join(out, "runs", "two_hosts", "base", "s3", "run.json")) as f:
            rec = json.load(f)
        self.assertTrue(rec["timed_out"])
        self.assertLess(rec["wall_s"], 3 + 10 + 5)   # timeout + the SIGTERM grace + slack
        # The report puts the errors first: both error headings come before the results section.
        with open(os.path.join(out, "report.html")) as f:
            html = f.read()
        self.assertLess(html.index("seed=2"), html.index("<h2>Results</h2>"))
        self.assertLess(html.index("seed=3"), html.index("<h2>Results</h2>"))
        # Nothing of the hang survives: its child (the sleep) was killed with the run's session.
        with open(os.path.join(d, "sleep.pid")) as f:
            pid = int(f.read())
        self.assertTrue(gone(pid), "the hung run's child %d is still running" % pid)

    def test_sweep_whose_runs_all_crash_is_reported(self):
        """Every run of a one-key sweep crashes: the runner still writes its report (errors, no sweep plot, no
        knee) and exits 1, instead of stopping on the empty plot."""
        d = C.tmpdir(self)
        fake = C.wrapper(d, 'if [ -n "$SEED" ]; then echo "fake-crash" >&2; kill -SEGV $$; fi')
        suite = C.write(os.path.join(d, "allcrash.yaml"), """
            name: allcrash
            defaults: {seeds: [1, 2], timeout: 30s}
            scenarios:
              - config: %s/two_hosts.yaml
                grid: {links.cable_m: [2, 20, 200]}
            """ % C.SCENARIOS)
        out = os.path.join(d, "out")
        r = C.regress(suite, out, "--jobs", "2", binary=fake, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        runs = {n: k for n, (k, _) in cases.items() if "seed=" in n}
        self.assertEqual(runs, {"two_hosts [links.cable_m=%s] seed=%d" % (m, s): "error"
                                for m in (2, 20, 200) for s in (1, 2)})
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        self.assertFalse(os.path.exists(os.path.join(out, "plots", "two_hosts.png")))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""An interrupted suite resumes and redoes only the runs that did not finish (a run is finished when its
summary.json says "complete": true), also a run whose summary.json says it did not complete."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

SEEDS = list(range(1, 7))


def seeds_run(d):
    """The seeds of every `rocesim run` the fake binary saw, in order (its invocation log)."""
    out = []
    with open(os.path.join(d, "invocations")) as f:
        for line in f:
            a = line.split()
            out.append(int(a[a.index("--seed") + 1]))
    return out


def complete_seeds(out):
    """Seeds whose own summary.json says complete, read from the run directories (not the runner's records)."""
    done = []
    for s in SEEDS:
        try:
            with open(os.path.join(out, "runs", "two_hosts", "base", "s%d" % s, "out", "summary.json")) as f:
                if json.load(f)["complete"] is True:
                    done.append(s)
        except OSError:
            pass
    return done


class Resume(unittest.TestCase):
    def test_interrupted_suite_resumes_only_unfinished_runs(self):
        d = C.tmpdir(self)
        # Each run takes at least 0.7 s, so that the suite is still running when it is interrupted.
        fake = C.wrapper(d, "sleep 0.7")
        suite = C.write(os.path.join(d, "resume.yaml"), """
            name: resume
            defaults: {seeds: %s, timeout: 60s}
            scenarios:
              - config: %s/two_hosts.yaml
                criteria: [flows.completed >= 1]
            """ % (SEEDS, C.SCENARIOS))
        out = os.path.join(d, "out")
        p = subprocess.Popen(["/usr/bin/python3", C.RUN, suite, "--out", out, "--jobs", "1", "--quiet",
                              "--bin", fake], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        # Two runs complete and the next one started (with --jobs 1, so the completed ones have exited: the
        # interrupt then lands on a run in progress, not on one that is writing its last outputs).
        while not (len(complete_seeds(out)) >= 2 and os.path.exists(os.path.join(d, "invocations"))
                   and len(seeds_run(d)) > len(complete_seeds(out))) and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)        # 128 + SIGINT, as rocesim and shells report it
        self.assertIn("resume", err)
        self.assertFalse(os.path.exists(os.path.join(out, "junit.xml")))  # no verdict on a partial suite
        first = seeds_run(d)
        done = complete_seeds(out)
        self.assertGreaterEqual(len(done), 2)
        self.assertLess(len(done), len(SEEDS))           # the interrupt came before the end
        # Resume: exactly the runs that had not completed are run, each once; the finished ones are not.
        r = C.regress(suite, out, "--jobs", "2", binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        second = seeds_run(d)[len(first):]
        self.assertEqual(sorted(second), sorted(set(SEEDS) - set(done)))
        self.assertEqual(complete_seeds(out), SEEDS)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        self.assertEqual([cases["two_hosts [base] seed=%d" % s][0] for s in SEEDS], ["pass"] * len(SEEDS))
        # A finished suite resumed again runs nothing.
        r = C.regress(suite, out, binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(seeds_run(d)), len(first) + len(second))
        # A run whose summary.json says it did not complete (as an interrupted rocesim writes it) is redone,
        # and only it.
        path = os.path.join(out, "runs", "two_hosts", "base", "s4", "out", "summary.json")
        with open(path) as f:
            doc = json.load(f)
        doc["complete"], doc["reason"] = False, "interrupted by SIGTERM"
        with open(path, "w") as f:
            json.dump(doc, f)
        before = len(seeds_run(d))
        r = C.regress(suite, out, binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(seeds_run(d)[before:], [4])
        # A changed suite (another --set) is not the same run: everything of it runs again.
        with open(suite) as f:
            text = f.read()
        C.write(suite, text.replace("criteria:", "set: {links.cable_m: 3}\n    criteria:"))
        before = len(seeds_run(d))
        r = C.regress(suite, out, "--jobs", "2", binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(seeds_run(d)[before:]), SEEDS)

    def test_killed_rerun_does_not_reuse_an_old_summary(self):
        """A run redone (here: another binary) that is killed before its rocesim writes anything must not
        count as finished on resume because of the summary.json its earlier attempt left."""
        d = C.tmpdir(self)
        suite = C.write(os.path.join(d, "stale.yaml"), """
            name: stale
            defaults: {seeds: [1, 2], timeout: 60s}
            scenarios:
              - config: %s/two_hosts.yaml
            """ % C.SCENARIOS)
        out = os.path.join(d, "out")
        r = C.regress(suite, out, "--bin", C.BIN)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(complete_seeds(out), [1, 2])
        # Another binary: every run is redone. Seed 2's attempt is killed (SIGKILL, no handler) before the real
        # rocesim starts, as long as the flag file exists.
        flag = os.path.join(d, "kill-seed-2")
        C.write(flag, "")
        fake = C.wrapper(d, 'if [ "$SEED" = 2 ] && [ -e %s ]; then kill -KILL $$; fi' % flag)
        r = C.regress(suite, out, binary=fake)
        self.assertEqual(r.returncode, 1, r.stderr)
        cases = C.junit_cases(os.path.join(out, "junit.xml"))
        self.assertEqual(cases["two_hosts [base] seed=2"][0], "error")
        self.assertIn("SIGKILL", cases["two_hosts [base] seed=2"][1].find("error").get("message"))
        # Resumed with the same binary: seed 2 runs again (only it), and now passes.
        os.remove(flag)
        before = len(seeds_run(d))
        r = C.regress(suite, out, binary=fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(seeds_run(d)[before:], [2])


if __name__ == "__main__":
    unittest.main()

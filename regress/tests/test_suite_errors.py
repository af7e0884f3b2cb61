#!/usr/bin/python3
"""A bad suite file or option gets one clear message naming FILE:LINE:COL and the key (or the option), exit
status 2, and nothing is written (the --out directory is not even created)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def position(text, needle):
    """1-based line and column of the first occurrence of needle in text, found here by searching the text."""
    i = text.index(needle)
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1


GOOD = """\
name: bad
defaults:
  seeds: 2
  timeout: 30s
scenarios:
  - config: %s/two_hosts.yaml
    set: {sim.duration: 1ms}
    grid:
      links.cable_m: [2, 20]
    criteria: ["flows.completed == 2"]
""" % C.SCENARIOS

# (what is changed: old -> new, the text the error points at, the key named, a word of the reason)
CASES = [
    ("    criteria:", "    critera:", "critera", "scenarios[0].critera", "did you mean 'criteria'"),
    ('"flows.completed == 2"', '"flows.completed = 2"', '"flows.completed = 2"', "scenarios[0].criteria[0]",
     "METRIC OP VALUE"),
    ("  seeds: 2", "  seeds: [1, x]", "[1, x]", "defaults.seeds", "list of seeds"),
    ("  timeout: 30s", "  timeout: soon", "soon", "defaults.timeout", "duration"),
    ("/two_hosts.yaml", "/nonexistent.yaml", C.SCENARIOS + "/nonexistent.yaml", "scenarios[0].config",
     "no such file"),
    ("links.cable_m: [2, 20]", "links.cable_m: []", "[]", "scenarios[0].grid.links.cable_m", "non-empty"),
    ("name: bad", "nam: bad", "nam", "nam", "did you mean 'name'"),
    # A bad --set key is refused by rocesim validate; the message points at the scenario's grid and quotes
    # rocesim's own reason.
    ("links.cable_m: [2, 20]", "links.cable_mm: [2, 20]", "links.cable_mm", "scenarios[0].grid.links.cable_mm",
     "unknown key"),
    ("{sim.duration: 1ms}", "{sim.duration: 1ms, sim: [}", None, None, "not valid YAML"),
    # An unknown metric: of flows.csv (csv.*, a fixed list) and of summary.json (a path its summary lacks,
    # found by a 1 ns run of the scenario; in criteria, in metrics: and in the defaults).
    ('"flows.completed == 2"', '"csv.goodput_gbs > 0"', '"csv.goodput_gbs > 0"', "scenarios[0].criteria[0]",
     "unknown metric 'csv.goodput_gbs'"),
    ('"flows.completed == 2"', '"flows.complete == 2"', '"flows.complete == 2"', "scenarios[0].criteria[0]",
     "unknown metric 'flows.complete'"),
    ('    criteria: ["flows', '    metrics: [pfc.pause_frame_tx]\n    criteria: ["flows', "pfc.pause_frame_tx",
     "scenarios[0].metrics[0]", "summary.json has no 'pause_frame_tx'"),
    ("  timeout: 30s", "  timeout: 30s\n  metrics: ['fct.by_size[0].slowdown_p98']", "'fct.by_size[0].slowdown_p98'",
     "defaults.metrics[0]", "unknown metric 'fct.by_size[0].slowdown_p98'"),
    # lockstep.* exists only with --queue-impl lockstep: without it the path is unknown.
    ('"flows.completed == 2"', '"lockstep.mismatches == 0"', '"lockstep.mismatches == 0"',
     "scenarios[0].criteria[0]", "summary.json has no 'lockstep'"),
]

# Tuning rounds (rounds:): the same rules, on a suite of two rounds.
ROUNDS = """\
name: badrounds
defaults: {seeds: 1, timeout: 30s}
rounds:
  - config: %s/two_hosts.yaml
    name: one
    grid: {links.cable_m: [2, 20]}
    pick: {require: ["max(packets.dropped) == 0"], rank: ["max median(flows.completed) within 2%%"]}
  - config: %s/two_hosts.yaml
    name: two
    grid: {sim.duration: [1ms, 2ms]}
    pick: {rank: ["min median(fct.slowdown_p99)"]}
""" % (C.SCENARIOS, C.SCENARIOS)

ROUND_CASES = [
    ('"max median(flows.completed) within 2%"', '"max flows.completed"', '"max flows.completed"',
     "rounds[0].pick.rank[0]", "max|min STAT(METRIC)"),
    ('require: ["max(packets.dropped) == 0"]', 'require: ["packets.dropped == 0"]', '"packets.dropped == 0"',
     "rounds[0].pick.require[0]", "over the seeds"),
    ("    pick: {rank: [\"min", "    pik: {rank: [\"min", "pik", "rounds[1].pik", "did you mean 'pick'"),
    ("grid: {sim.duration: [1ms, 2ms]}", "grid: {links.cable_m: [1, 2]}", "links.cable_m: [1, 2]",
     "rounds[1].grid.links.cable_m", "already fixed by round 'one'"),
    ("rounds:", "scenarios: []\nrounds:", "rounds:", "rounds", "not both"),
]


class SuiteErrors(unittest.TestCase):
    def test_good_suite_runs(self):
        d = C.tmpdir(self)
        path = C.write(os.path.join(d, "s.yaml"), GOOD)
        r = C.regress(path, os.path.join(d, "out"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_metrics_of_the_scenario_are_accepted(self):
        """The unknown-metric check refuses nothing a run has: lockstep.* with --queue-impl lockstep, an index
        into a list past what a 1 ns run holds (cannot be judged), a derived ratio, a flows.csv metric."""
        d = C.tmpdir(self)
        text = GOOD.replace('    criteria: ["flows.completed == 2"]',
                            '    args: [--queue-impl, lockstep]\n'
                            '    metrics: ["switches[0].queues[7].peak_bytes", derived.ecn_mark_ratio,'
                            ' csv.flows.lt10KB, "fct.by_size[4].slowdown_p99"]\n'
                            '    criteria: ["lockstep.mismatches == 0", "flows.completed == 2"]')
        self.assertNotEqual(text, GOOD)
        path = C.write(os.path.join(d, "s.yaml"), text.replace("links.cable_m: [2, 20]", "links.cable_m: [2]"))
        r = C.regress(path, os.path.join(d, "out"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def check_bad(self, good, cases):
        """Each case edits the good suite once; the runner must exit 2 with one line naming FILE:LINE:COL and
        the key (or FILE: when at is None) and the reason, and write nothing."""
        for old, new, at, key, why in cases:
            with self.subTest(new=new):
                d = C.tmpdir(self)
                self.assertIn(old, good)
                text = good.replace(old, new, 1)
                path = C.write(os.path.join(d, "s.yaml"), text)
                out = os.path.join(d, "out")
                r = C.regress(path, out)
                self.assertEqual(r.returncode, 2, r.stderr)
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                msg = lines[0]
                if at is None:
                    self.assertTrue(msg.startswith("regress: %s:" % path), msg)
                else:
                    line, col = position(text, at)
                    self.assertTrue(msg.startswith("regress: %s:%d:%d: key '%s'" % (path, line, col, key)), msg)
                self.assertIn(why, msg)
                self.assertFalse(os.path.exists(out))

    def test_bad_suites(self):
        self.check_bad(GOOD, CASES)

    def test_bad_rounds(self):
        self.assertTrue(all(at is not None for _, _, at, _, _ in ROUND_CASES))  # each names its position
        self.check_bad(ROUNDS, ROUND_CASES)

    def test_bad_options(self):
        d = C.tmpdir(self)
        path = C.write(os.path.join(d, "s.yaml"), GOOD)
        out = os.path.join(d, "out")
        for args, word in ((["--jobs", "0"], "--jobs"), (["--bogus"], "--bogus"),
                           (["--bin", "/nonexistent/rocesim"], "--bin"),
                           (["--update-baselines"], "baselines"), (["--seeds", "0"], "--seeds")):
            r = C.regress(path, out, *args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(word, r.stderr)
            self.assertFalse(os.path.exists(out))
        r = C.regress(os.path.join(d, "missing.yaml"), out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.yaml", r.stderr)


if __name__ == "__main__":
    unittest.main()

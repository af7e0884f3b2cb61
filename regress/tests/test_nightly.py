#!/usr/bin/python3
"""regress/suites/nightly.yaml covers every shipped scenario: each configs/scenarios/*.yaml is the config of at
least one of its entries, each entry checks something of its own beyond the defaults, and the suite runs 10
seeds per scenario (the seed article's minimum). The suite is read here with PyYAML alone, not with the
runner's loader, and the scenario list comes from the directory."""
import glob
import os
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

SUITE = os.path.join(C.ROOT, "regress", "suites", "nightly.yaml")


class Nightly(unittest.TestCase):
    def test_every_scenario_is_in_the_nightly_suite(self):
        with open(SUITE) as f:
            doc = yaml.safe_load(f)
        here = os.path.dirname(SUITE)
        used = {os.path.realpath(os.path.join(here, e["config"])) for e in doc["scenarios"]}
        shipped = {os.path.realpath(p) for p in glob.glob(os.path.join(C.SCENARIOS, "*.yaml"))}
        self.assertTrue(shipped)
        missing = sorted(os.path.basename(p) for p in shipped - used)
        self.assertEqual(missing, [], "configs/scenarios files not in regress/suites/nightly.yaml")
        for e in doc["scenarios"]:
            with self.subTest(entry=e.get("name", e["config"])):
                self.assertTrue(e.get("criteria"), "no criteria of its own")
                self.assertGreaterEqual(e.get("seeds", doc["defaults"]["seeds"]), 10)


if __name__ == "__main__":
    unittest.main()

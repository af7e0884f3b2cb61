"""rocesim validate takes --seed and --pcap and checks them as run does;
run --help names the scenario folder and the docs. Bugs that fail it:
validate refusing --seed (the old behaviour), accepting it but not applying
it (the resolved seed, and the generated traffic the seed draws, would be
the config's), or not checking a capture against the topology."""
import os
import re

from clitest import SRC, check, finish, rocesim, tempdir

two = os.path.join(SRC, "configs/scenarios/two_hosts.yaml")
web = os.path.join(SRC, "configs/scenarios/websearch_leafspine.yaml")

rc, so, se = rocesim("validate", two, "--seed", "5")
check(rc == 0 and re.search(r"^seed: 5$", so, re.M), "validate --seed 5 resolves seed 5: %s" % se)
# The seed draws generated traffic: validate with --seed resolves what run with that seed runs.
d = tempdir()
rc, so7, se = rocesim("validate", web, "--seed", "7")
rc2, _, _ = rocesim("run", web, "--seed", "7", "--out", os.path.join(d, "o"), "--set", "sim.duration=1ns", "--quiet")
resolved = open(os.path.join(d, "o", "config.resolved.yaml")).read()
body = lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("#"))
check(rc == 0 and rc2 == 0 and body(so7).replace("duration: 15ms", "duration: 1ns") == body(resolved),
      "validate --seed 7 prints the config run --seed 7 resolves")
rc, so1, _ = rocesim("validate", web, "--seed", "1")
check(rc == 0 and so1 != so7, "another seed, another resolved config (the CDF flows differ)")

for bad in ["x", "-1", "99999999999999999999"]:
    rc, so, se = rocesim("validate", two, "--seed", bad)
    check(rc == 2 and so == "" and "--seed" in se and len(se.strip().splitlines()) == 1,
          "validate --seed %s: one line naming --seed, exit 2: %r" % (bad, se))

rc, so, se = rocesim("validate", two, "--pcap", "h1:0")
check(rc == 0 and "captures 2 directions" in so, "a valid capture is counted in the estimate")
for bad, why in [("h7:0", "no node 'h7'"), ("h1:3", "has 1 port"), ("h1", "expected NODE:PORT")]:
    rc, so, se = rocesim("validate", two, "--pcap", bad)
    check(rc == 2 and so == "" and ("--pcap " + bad) in se and why in se, "validate --pcap %s refused: %r" % (bad, se))

rc, so, se = rocesim("run", "--help")
check(rc == 0 and "configs/scenarios/" in so and "docs/user-guide.md" in so and "docs/outputs.md" in so
      and "docs/config.md" in so, "run --help names the scenario folder and the docs")
for f in ["docs/user-guide.md", "docs/outputs.md", "docs/config.md", "configs/scenarios/default.yaml"]:
    check(os.path.exists(os.path.join(SRC, f)), "%s named in run --help exists" % f)
finish([d])

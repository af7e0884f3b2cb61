"""Shared helpers of the regress/run tests (run by ctest: regress/CMakeLists.txt)."""
import os
import subprocess
import tempfile
import textwrap
import xml.etree.ElementTree as ET

ROOT = os.environ.get("ROCESIM_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ROCESIM_BIN") or os.path.join(ROOT, "build", "bin", "rocesim")
RUN = os.path.join(ROOT, "regress", "run")
SCENARIOS = os.path.join(ROOT, "configs", "scenarios")


def tmpdir(test):
    d = tempfile.mkdtemp(prefix="regress-test-")
    test.addCleanup(subprocess.run, ["rm", "-rf", d])
    return d


def write(path, text):
    with open(path, "w") as f:
        f.write(textwrap.dedent(text).lstrip("\n"))
    return path


def wrapper(directory, body):
    """A fake rocesim: a bash script that runs BODY (with $SEED set to the run's --seed, empty for validate)
    and then the real binary with the same arguments. Each `run` invocation of a suite's run appends its
    arguments to DIRECTORY/invocations (not the runner's 1 ns runs that check the metric names before the suite,
    regress/run probe_metrics, whose --out is a temporary regress-probe-* directory)."""
    path = os.path.join(directory, "fake-rocesim")
    write(path, """
        #!/bin/bash
        SEED=""
        prev=""
        for a in "$@"; do [ "$prev" = "--seed" ] && SEED=$a; prev=$a; done
        case "$*" in run\ *) case "$*" in */regress-probe-*) ;; *) echo "$*" >> %s/invocations;; esac;; esac
        %s
        exec %s "$@"
        """ % (directory, textwrap.indent(textwrap.dedent(body), "        ").strip(), BIN))
    os.chmod(path, 0o755)
    return path


def regress(suite, out, *args, binary=None, timeout=600):
    cmd = ["/usr/bin/python3", RUN, suite, "--out", out, "--quiet"] + list(args)
    if binary:
        cmd += ["--bin", binary]
    env = dict(os.environ, ROCESIM_BIN=BIN)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)


def junit_cases(path):
    """{testcase name: (outcome, element)} with outcome 'pass', 'failure' or 'error', from an independent parse
    of the XML."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        kind = "pass"
        for k in ("failure", "error"):
            if tc.find(k) is not None:
                kind = k
        out[tc.get("name")] = (kind, tc)
    return out

"""Helpers for the Python tests of the rocesim command line (run by ctest,
which sets ROCESIM_BIN and ROCESIM_SRC)."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("ROCESIM_BIN", "build/bin/rocesim")
SRC = os.environ.get("ROCESIM_SRC", ".")


def rocesim(*args, timeout=300):
    """Runs the binary; returns (rc, stdout, stderr)."""
    p = subprocess.run([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def tempdir():
    d = tempfile.mkdtemp(prefix="rocesim-pytest-")
    return d


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def finish(dirs=()):
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")

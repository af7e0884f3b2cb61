"""Runs of a suite: expansion, execution in parallel, records and resume (docs/regress.md, "Runs").

Each run has its own directory OUT/runs/SCENARIO/POINT/sSEED/ holding
  out/       the rocesim run's --out directory
  run.log    its stdout and stderr
  run.json   the runner's record: command, exit status or signal, timeout, wall time
A run is finished when out/summary.json says "complete": true and run.json
records the same command line and the same binary (size and modification
time: a rebuilt rocesim reruns everything); resuming a suite skips finished runs and
reruns every other one (after a crash, a hang, an interrupt, or a changed
suite).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

from . import metrics as M

# The peak RSS of a run (run.peak_rss_mib), measured as regress/perf/hops.py does: a fresh, small Python
# process runs rocesim as its only child and reports the child's ru_maxrss. Not from the runner itself: a
# child's ru_maxrss counts what it held before its exec, a copy of its parent (with vfork the parent's whole
# address space; with fork its anonymous pages), and the runner grows as it reads the runs' outputs (29 MB
# after fat_tree_k12's summary.json: link_stream.yaml came out at 30 MB instead of 11.3). The helper forks
# (not vfork: a private CPython 3.11+ flag) with about 4 MB of its own; it writes
#   {"peak_rss_kib": child's ru_maxrss, "rss_floor_kib": its own RssAnon at the fork}
# to the file named by its first argument, forwards nothing (the run's process group gets the runner's
# signals) and ends as its child did (same exit status, or the same signal).
RSS_HELPER = r"""
import json, os, signal, subprocess, sys
subprocess._USE_VFORK = False
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, lambda *_: None)    # the child got it too (one process group); reset at its exec
floor = None
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("RssAnon:"):
            floor = int(line.split()[1])
try:
    p = subprocess.Popen(sys.argv[2:])
except OSError as e:
    sys.stderr.write("regress: could not start %s: %s\n" % (sys.argv[2], e))
    sys.exit(127)
_, status, ru = os.wait4(p.pid, 0)
with open(sys.argv[1] + ".partial", "w") as f:
    json.dump({"peak_rss_kib": ru.ru_maxrss, "rss_floor_kib": floor}, f)
os.replace(sys.argv[1] + ".partial", sys.argv[1])
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
sys.exit(os.waitstatus_to_exitcode(status))
"""

# How long a run that hung past its timeout gets between SIGTERM (rocesim
# then writes what it has, docs/user-guide.md) and SIGKILL.
KILL_GRACE_S = 10.0
LOG_TAIL_LINES = 40


class Run:
    def __init__(self, scenario, point, seed, out_root, binary):
        self.scenario = scenario
        self.label, self.point_dir, self.pairs = point
        self.seed = seed
        self.dir = os.path.join(out_root, "runs", scenario.name, self.point_dir, "s%d" % seed)
        self.out = os.path.join(self.dir, "out")
        self.log = os.path.join(self.dir, "run.log")
        self.record_path = os.path.join(self.dir, "run.json")
        self.rss_path = os.path.join(self.dir, "rss.json")
        # Through RSS_HELPER only when the scenario reports the peak RSS (it costs a Python start per run).
        self.measure_rss = any(m == "run.peak_rss_mib" for m in
                               list(scenario.metrics) + [c.metric for c in scenario.criteria] + list(scenario.baseline))
        self.cmd = [binary, "run", scenario.config, "--out", self.out, "--force", "--quiet", "--seed", str(seed)]
        for k, v in list(scenario.sets.items()) + list(scenario.chosen) + list(self.pairs):
            self.cmd += ["--set", "%s=%s" % (k, v)]
        self.cmd += scenario.args
        # Filled by load_result():
        self.record = None
        self.summary = None
        self.csv_metrics = {}
        self.status = None       # "pass", "fail" or "error"
        self.reason = None       # why an error
        self.checks = []         # [(criterion text, passed, actual)]
        self.reused = False

    @property
    def name(self):
        return "%s [%s] seed=%d" % (self.scenario.name, self.label, self.seed)

    def finished(self):
        """True when a previous invocation completed this very run (its summary.json says so)."""
        rec = _read_json(self.record_path)
        summ = _read_json(os.path.join(self.out, "summary.json"))
        # The record must also say that the process exited with status 0 and was not killed for its timeout:
        # a run that rocesim completed but that then died (killed by the runner's SIGTERM as it exited, say)
        # would otherwise be kept as an error for ever instead of being run again.
        return bool(rec and rec.get("cmd") == self.cmd and rec.get("binary") == binary_id(self.cmd[0])
                    and rec.get("exit") == 0 and not rec.get("timed_out")
                    and summ and summ.get("complete") is True)

    def log_tail(self):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-LOG_TAIL_LINES:])
        except OSError as e:
            return "(no log: %s)\n" % e

    def load_result(self):
        """Reads the run's record and outputs and classifies it; then checks the per-run criteria."""
        self.record = _read_json(self.record_path) or {}
        self.summary = _read_json(os.path.join(self.out, "summary.json"))
        rec = self.record
        if rec.get("timed_out"):
            self.reason = "hung: killed after the %gs timeout" % self.scenario.timeout_s
        elif rec.get("signal"):
            self.reason = "crashed: killed by %s" % _signame(rec["signal"])
        elif rec.get("exit") is None:
            self.reason = "did not run: %s" % rec.get("spawn_error", "no record")
        elif rec["exit"] != 0:
            self.reason = "rocesim exited with status %d" % rec["exit"]
        elif self.summary is None:
            self.reason = "no readable summary.json"
        elif self.summary.get("complete") is not True:
            self.reason = "summary.json says not complete: %s" % self.summary.get("reason")
        if self.summary is not None:
            flows = os.path.join(self.out, "flows.csv")
            if os.path.isfile(flows):
                try:
                    self.csv_metrics = M.derived(flows, self.summary.get("sim_time_ns", 0))
                except (OSError, ValueError, KeyError) as e:
                    self.reason = self.reason or "unreadable flows.csv: %s" % e
        if self.reason:
            self.status = "error"
            return
        self.checks = []
        for c in self.scenario.criteria:
            if c.stat is None:
                actual = self.value(c.metric)
                self.checks.append((c.text, c.holds(actual), actual))
        self.status = "fail" if any(not ok for _, ok, _ in self.checks) else "pass"

    def value(self, path):
        if self.status == "error":
            return None
        if path in M.RUN_METRICS:
            return self.run_metric(path)
        return M.metric(self.summary, self.csv_metrics, path)

    def run_metric(self, path):
        """run.* metrics, from the runner's record (docs/regress.md, "Metrics")."""
        rec = self.record or {}
        if path == "run.wall_s":
            return rec.get("wall_s")
        peak, floor = rec.get("peak_rss_kib"), rec.get("rss_floor_kib")
        if peak is None or (floor is not None and peak <= floor):
            return None   # not above what the helper's copy held before the exec: unknown
        return peak / 1024.0


def binary_id(path):
    """Size and modification time of the binary: a rebuilt rocesim makes every run of it a new run."""
    try:
        st = os.stat(path)
        return [st.st_size, st.st_mtime_ns]
    except OSError:
        return None


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _signame(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


def _write_json(path, doc):
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


class Executor:
    """Runs Runs on `jobs` worker threads, each one rocesim process at a time in its own session."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._live = {}   # pid -> Popen

    def interrupt(self):
        """Stops starting runs and asks every live one to stop (SIGTERM: rocesim writes what it has)."""
        self.stop.set()
        with self._lock:
            for p in self._live.values():
                _killpg(p, signal.SIGTERM)

    def execute(self, run):
        """Runs one rocesim and writes its record; returns False if it was not started (interrupted)."""
        if self.stop.is_set():
            return False
        os.makedirs(run.dir, exist_ok=True)
        # A record or a summary.json of an earlier attempt is not this attempt's: a run killed before its rocesim
        # emptied --out (a crash, SIGINT, SIGKILL after the grace) must not leave an old "complete": true behind.
        for stale in (run.record_path, os.path.join(run.out, "summary.json")):
            if os.path.exists(stale):
                os.remove(stale)
        rec = {"cmd": run.cmd, "binary": binary_id(run.cmd[0]), "exit": None, "signal": None, "timed_out": False,
               "timeout_s": run.scenario.timeout_s, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        t0 = time.monotonic()
        with open(run.log, "wb") as log:
            cmd = run.cmd
            if run.measure_rss:
                if os.path.exists(run.rss_path):
                    os.remove(run.rss_path)
                cmd = [sys.executable, "-c", RSS_HELPER, run.rss_path] + run.cmd
            try:
                p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
            except OSError as e:
                rec["spawn_error"] = str(e)
                log.write(("regress: could not start %s: %s\n" % (run.cmd[0], e)).encode())
                p = None
            if p is not None:
                with self._lock:
                    self._live[p.pid] = p
                if self.stop.is_set():
                    _killpg(p, signal.SIGTERM)
                try:
                    p.wait(timeout=run.scenario.timeout_s)
                except subprocess.TimeoutExpired:
                    rec["timed_out"] = True
                    _killpg(p, signal.SIGTERM)
                    try:
                        p.wait(timeout=KILL_GRACE_S)
                    except subprocess.TimeoutExpired:
                        _killpg(p, signal.SIGKILL)
                        p.wait()
                if run.measure_rss:
                    rec.update(_read_json(run.rss_path) or {})
                with self._lock:
                    del self._live[p.pid]
                if p.returncode < 0:
                    rec["signal"] = -p.returncode
                else:
                    rec["exit"] = p.returncode
                if rec["timed_out"]:
                    log.write(("\nregress: killed after the %gs timeout\n" % run.scenario.timeout_s).encode())
        rec["wall_s"] = round(time.monotonic() - t0, 3)
        rec["interrupted"] = self.stop.is_set()
        _write_json(run.record_path, rec)
        return True


def _killpg(p, sig):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass

"""The Slurm backend of regress/run (--backend slurm; docs/regress.md, "Slurm"): the runs to do go to Slurm as one
job array, one array task per run, each task running that one run exactly as the local backend does
(runner.Executor.execute: the same command, run.log, run.json, timeout and process-group kill) into the same
run directory, which must therefore be on a directory every node sees (the suite's --out, and the runner, the
rocesim binary and the configs alike). The runner waits for the records and then aggregates the run
directories as it does after a local run: the same files, so the same tables.

Files, in OUT/slurm/: array-K.json (the K-th submission's runs: what each task needs), array-K.sh (the batch
script: `regress/run --slurm-task array-K.json $SLURM_ARRAY_TASK_ID`), array-K-TASK.out (Slurm's output of a
task, for a task that died before it could write its run's log).
"""
import json
import math
import os
import shlex
import subprocess
import sys
import time

from . import runner as X

POLL_S = 0.5


class SlurmError(Exception):
    """sbatch or squeue failed: the message says which and why."""


def _tool(args):
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise SlurmError("%s: %s (is Slurm's client installed? scripts/install-deps.sh slurm)" % (args[0], e.strerror))
    if p.returncode != 0:
        raise SlurmError("%s exited %d: %s" % (" ".join(args[:2]), p.returncode,
                                               (p.stderr.strip().splitlines() or ["no message"])[-1]))
    return p.stdout


def submit(runs, out, jobs, name, extra_args, stop, on_record):
    """Runs `runs` (runner.Run, none finished) as one array job; calls on_record(run) as each one's run.json
    appears. Returns False when stop was set (the job is cancelled: scancel, whose SIGTERM each task passes to
    its rocesim, which then writes what it has; those runs are not complete and are rerun on resume)."""
    sdir = os.path.join(out, "slurm")
    os.makedirs(sdir, exist_ok=True)
    k = 0
    while os.path.exists(os.path.join(sdir, "array-%d.json" % k)):
        k += 1
    tasks = os.path.join(sdir, "array-%d.json" % k)
    doc = [{"dir": r.dir, "out": r.out, "cmd": r.cmd, "log": r.log, "record": r.record_path,
            "timeout_s": r.scenario.timeout_s, "measure_rss": r.measure_rss, "rss": r.rss_path} for r in runs]
    for r in runs:   # a record from before is not this submission's
        os.makedirs(r.dir, exist_ok=True)
        if os.path.exists(r.record_path):
            os.remove(r.record_path)
    with open(tasks + ".partial", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tasks + ".partial", tasks)
    script = os.path.join(sdir, "array-%d.sh" % k)
    runner = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n# regress/run --backend slurm: one task per run of %s (docs/regress.md)\n"
                "exec %s %s --slurm-task %s \"$SLURM_ARRAY_TASK_ID\"\n"
                % (tasks, shlex.quote(sys.executable), shlex.quote(runner), shlex.quote(tasks)))
    # The task's time limit: the run's timeout, the SIGTERM grace and a minute for the task itself.
    minutes = max(1, math.ceil((max(r.scenario.timeout_s for r in runs) + X.KILL_GRACE_S + 60) / 60))
    cmd = ["sbatch", "--parsable", "--array=0-%d%%%d" % (len(runs) - 1, jobs), "--job-name=regress-" + name,
           "--output=" + os.path.join(sdir, "array-%d-%%a.out" % k), "--time=%d" % minutes,
           "--chdir=" + out] + list(extra_args) + [script]
    job = _tool(cmd).strip().split(";")[0]
    if not job.isdigit():
        raise SlurmError("sbatch printed %r, not a job id" % job)
    pending = list(runs)
    gone_since = None
    while pending:
        if stop.is_set():
            subprocess.run(["scancel", job], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # Wait (bounded) until no task of it is left, so that none still writes into OUT once the runner
            # has said it stopped (a resume right after would otherwise race a dying task's record).
            deadline = time.monotonic() + X.KILL_GRACE_S + 20
            while time.monotonic() < deadline:
                try:
                    if not _tool(["squeue", "-h", "-j", job, "-o", "%i"]).strip():
                        break
                except SlurmError:   # the job is gone from slurmctld's memory: squeue refuses its id
                    break
                time.sleep(POLL_S)
            return False
        still = []
        for r in pending:
            if os.path.exists(r.record_path):
                on_record(r)
            else:
                still.append(r)
        pending = still
        if not pending:
            break
        # No task of the job left in the queue, and still no record after a few polls (a shared file system
        # may show a file late): the task died before it could write one (node failure, scancel, a task
        # script that could not start). Those runs are errors, with Slurm's output as their log.
        if not _tool(["squeue", "-h", "-j", job, "-o", "%i"]).strip():
            gone_since = gone_since or time.monotonic()
            if time.monotonic() - gone_since > 5:
                for r in pending:
                    i = runs.index(r)
                    slurm_out = os.path.join(sdir, "array-%d-%d.out" % (k, i))
                    _no_record(r, job, i, slurm_out)
                    on_record(r)
                return True
        time.sleep(POLL_S)
    return True


def _no_record(run, job, task, slurm_out):
    """run.json and run.log for a run whose Slurm task ended without writing them."""
    try:
        with open(slurm_out, errors="replace") as f:
            text = f.read()
    except OSError:
        text = "(no Slurm output %s)\n" % slurm_out
    with open(run.log, "a") as f:
        f.write("regress: Slurm task %s_%d ended without a record of its run; its output (%s):\n%s"
                % (job, task, slurm_out, text))
    X._write_json(run.record_path, {"cmd": run.cmd, "binary": X.binary_id(run.cmd[0]), "exit": None, "signal": None,
                                    "timed_out": False, "spawn_error": "Slurm task %s_%d ended without a record"
                                    % (job, task)})


class _Task:
    """What Executor.execute needs of a run, from the tasks file."""

    def __init__(self, t):
        self.dir, self.out, self.cmd, self.log, self.record_path = t["dir"], t["out"], t["cmd"], t["log"], t["record"]
        self.measure_rss, self.rss_path = t["measure_rss"], t["rss"]

        class _Scenario:
            timeout_s = t["timeout_s"]
        self.scenario = _Scenario()


def task_main(tasks_file, index):
    """One array task (`regress/run --slurm-task FILE INDEX`): runs that run as the local backend does."""
    import signal
    with open(tasks_file) as f:
        t = json.load(f)[int(index)]
    ex = X.Executor(1)
    # Slurm's scancel and time limit send SIGTERM: pass it on (rocesim then writes what it has).
    signal.signal(signal.SIGTERM, lambda *_: ex.interrupt())
    signal.signal(signal.SIGINT, lambda *_: ex.interrupt())
    ex.execute(_Task(t))
    return 0

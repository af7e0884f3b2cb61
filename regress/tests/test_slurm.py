#!/usr/bin/python3
"""regress/run --backend slurm on a real single-node Slurm that this test brings up and tears down (munged,
slurmctld and slurmd as root, from a slurm.conf in a temporary directory, on free ports): a small suite gives
the same aggregated table as the local backend (results.csv byte for byte; runs.csv but for the wall times and
the directories), every run was an array task of one job, and a second invocation resumes with nothing to run.

Needs root and Debian's slurmctld, slurmd, slurm-client and munge (scripts/install-deps.sh slurm). Without
them it exits 77, which ctest reports as skipped (SKIP_RETURN_CODE, regress/CMakeLists.txt), with the reason
on stderr: never a silent pass. Label slurm (and long, so that `make test` does not run it): ctest -L slurm."""
import csv
import glob
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

SKIP = 77
DAEMONS = ("munged", "slurmctld", "slurmd")
TOOLS = DAEMONS + ("sbatch", "squeue", "scancel", "sinfo")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """munged, slurmctld and slurmd of one node, everything in directory d; stop() ends them by their pids."""

    def __init__(self, d):
        self.d = d
        self.pids = {}
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(d, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def path(self, *p):
        return os.path.join(self.d, *p)

    def start(self):
        for sub in ("state", "spool", "log"):
            os.makedirs(self.path(sub))
        os.chmod(self.d, 0o755)   # munged wants its socket's directory reachable
        with open(self.path("munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge.key"), 0o600)
        sock = self.path("munge.sock")
        subprocess.run(["munged", "--force", "--socket=" + sock, "--key-file=" + self.path("munge.key"),
                        "--log-file=" + self.path("log", "munged.log"), "--pid-file=" + self.path("munged.pid"),
                        "--seed-file=" + self.path("munged.seed")], check=True)
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=regresstest", "SlurmctldHost=" + self.host,
                "AuthType=auth/munge", "AuthInfo=socket=" + sock, "CredType=cred/munge",
                "SlurmUser=root", "SlurmdUser=root",
                "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
                "StateSaveLocation=" + self.path("state"), "SlurmdSpoolDir=" + self.path("spool"),
                "SlurmctldPidFile=" + self.path("slurmctld.pid"), "SlurmdPidFile=" + self.path("slurmd.pid"),
                "SlurmctldLogFile=" + self.path("log", "slurmctld.log"),
                "SlurmdLogFile=" + self.path("log", "slurmd.log"),
                # No cgroups, accounting or MPI: a plain process per task.
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SwitchType=switch/none",
                "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
                "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
                "ReturnToService=2",
                "NodeName=%s CPUs=%d State=UNKNOWN" % (self.host, os.cpu_count() or 1),
                "PartitionName=regresstest Nodes=%s Default=YES MaxTime=INFINITE State=UP" % self.host, ""]))
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([daemon], check=True, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%t"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=self.env)
            if p.returncode == 0 and p.stdout.strip() in ("idle", "mix", "alloc"):
                return
            time.sleep(0.5)
        raise RuntimeError("the node did not come up: %s\n%s" % (p.stdout + p.stderr, self.logs()))

    def logs(self):
        out = ""
        for f in sorted(glob.glob(self.path("log", "*.log"))):
            with open(f, errors="replace") as fh:
                out += "== %s\n%s" % (f, "".join(fh.readlines()[-20:]))
        return out

    def stop(self):
        subprocess.run(["scancel", "--full", "--user=root"], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for name in ("slurmd", "slurmctld", "munged"):
            try:
                with open(self.path(name + ".pid")) as f:
                    pid = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                continue
            for _ in range(100):   # up to 10 s for it to go
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)


def table(path, drop=("wall_s", "dir")):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


class Slurm(unittest.TestCase):
    def test_slurm_backend_gives_the_local_table(self):
        d = C.tmpdir(self)
        os.chmod(d, 0o755)
        cluster = LocalSlurm(os.path.join(d, "slurm"))
        os.makedirs(cluster.d)
        self.addCleanup(cluster.stop)
        cluster.start()
        suite = C.write(os.path.join(d, "tiny.yaml"), """
            name: tiny
            defaults: {seeds: 2, timeout: 60s, args: [--check-invariants]}
            scenarios:
              - config: %s/two_hosts.yaml
                criteria: [flows.completed == 2]
              - config: %s/pfc_incast.yaml
                set: {sim.duration: 200us}
                grid: {pfc.xon_ratio: [0.5, 0.75]}
                metrics: [pfc.pause_frames_tx, packets.dropped, ecn.marked, csv.goodput_gbps]
            """ % (C.SCENARIOS, C.SCENARIOS))
        env = dict(cluster.env, ROCESIM_BIN=C.BIN)
        runs = 2 + 2 * 2
        outs = {}
        for backend in ("local", "slurm"):
            out = os.path.join(d, backend)
            r = subprocess.run(["/usr/bin/python3", C.RUN, suite, "--out", out, "--jobs", "2", "--backend", backend,
                                "--bin", C.BIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr + cluster.logs())
            self.assertIn("%d to run" % runs, r.stderr)
            outs[backend] = out
        with open(os.path.join(outs["local"], "results.csv"), "rb") as f:
            local = f.read()
        with open(os.path.join(outs["slurm"], "results.csv"), "rb") as f:
            self.assertEqual(f.read(), local)
        self.assertEqual(table(os.path.join(outs["slurm"], "runs.csv")), table(os.path.join(outs["local"], "runs.csv")))
        # Every run was a task of one array job: Slurm's own output file per task, and the tasks file lists them.
        sdir = os.path.join(outs["slurm"], "slurm")
        self.assertEqual(len(glob.glob(os.path.join(sdir, "array-0-*.out"))), runs)
        self.assertFalse(os.path.exists(os.path.join(outs["local"], "slurm")))
        # Resumed through Slurm: nothing to run, and no second job.
        r = subprocess.run(["/usr/bin/python3", C.RUN, suite, "--out", outs["slurm"], "--jobs", "2", "--backend",
                            "slurm", "--bin", C.BIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("%d finished before, 0 to run" % runs, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(sdir, "array-1.json")))
        self.interrupt_cancels_the_job(d, cluster)

    def interrupt_cancels_the_job(self, d, cluster):
        """SIGINT to the runner during a Slurm suite: the job is cancelled (its pending tasks never run), the
        interrupted run does not count as finished, and a resume runs exactly the runs that did not finish."""
        seeds = [1, 2, 3, 4]
        # Each run sleeps 3 s before the real rocesim, and --jobs 1 lets one array task run at a time.
        fake = C.wrapper(d, "sleep 3")
        suite = C.write(os.path.join(d, "cancel.yaml"), """
            name: cancel
            defaults: {seeds: %s, timeout: 60s}
            scenarios:
              - config: %s/two_hosts.yaml
            """ % (seeds, C.SCENARIOS))
        out = os.path.join(d, "cancel")
        env = dict(cluster.env, ROCESIM_BIN=C.BIN)
        cmd = ["/usr/bin/python3", C.RUN, suite, "--out", out, "--jobs", "1", "--backend", "slurm", "--quiet",
               "--bin", fake]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        invocations = os.path.join(d, "invocations")
        deadline = time.monotonic() + 60
        while not os.path.exists(invocations) and time.monotonic() < deadline:   # the first task has started
            time.sleep(0.1)
        self.assertTrue(os.path.exists(invocations), "no task started within 60 s\n" + cluster.logs())
        p.send_signal(2)   # SIGINT
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, err)
        # The job is gone from the queue when the runner has returned, and nothing more started.
        q = subprocess.run(["squeue", "-h", "-o", "%i %j"], stdout=subprocess.PIPE, text=True, env=cluster.env)
        self.assertNotIn("regress-cancel", q.stdout)
        time.sleep(2)
        with open(invocations) as f:
            started = [int(line.split()[line.split().index("--seed") + 1]) for line in f]
        self.assertEqual(len(started), 1, started)   # the pending tasks were cancelled, not run
        self.assertFalse(os.path.exists(os.path.join(out, "junit.xml")))
        # Resume through Slurm: every run of the suite runs now (the interrupted one did not finish), once.
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(invocations) as f:
            again = [int(line.split()[line.split().index("--seed") + 1]) for line in f][len(started):]
        self.assertEqual(sorted(again), seeds)


def main():
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        sys.stderr.write("test_slurm: SKIPPED: %s not installed (scripts/install-deps.sh slurm installs Debian's "
                         "slurmctld, slurmd, slurm-client and munge)\n" % ", ".join(missing))
        return SKIP
    if os.geteuid() != 0:
        sys.stderr.write("test_slurm: SKIPPED: starting munged, slurmctld and slurmd needs root\n")
        return SKIP
    prog = unittest.main(exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

"""The progress line: on a pseudo-terminal a run longer than 2 s shows it
(carriage return, simulated time and share, flows done, events/s, ETA) on
stderr and clears it at the end; with stderr a pipe it never appears, nor
with --quiet on a terminal. Bugs that fail it: the line printed
unconditionally (into logs and pipes), never printed (the wall-clock check
never reached), or left on the terminal."""
import os
import pty
import re
import subprocess

from clitest import BIN, SRC, check, finish, tempdir

d = tempdir()
cfg = os.path.join(SRC, "configs/scenarios/websearch_leafspine.yaml")
# A run much longer than the 2 s threshold, cut by --max-wall at 3.5 s (exit 124).
args = [BIN, "run", cfg, "--set", "traffic[0].duration=100ms", "--set", "sim.duration=100ms", "--max-wall", "3.5s"]
LINE = re.compile(r"\rrocesim: [0-9.]+ of 100\.000 ms simulated \(\d+ %\), \d+/\d+ flows done, [0-9.]+ M events/s, ETA ")


def on_pty(extra, out):
    master, slave = pty.openpty()
    p = subprocess.Popen(args + ["--out", out] + extra, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        err += chunk
    p.wait(timeout=60)
    os.close(master)
    p.stdout.close()
    return p.returncode, err.decode(errors="replace")


rc, err = on_pty([], os.path.join(d, "tty"))
check(rc == 124, "stopped by --max-wall (124), got %d: %s" % (rc, err))
check(LINE.search(err) is not None, "the progress line on a terminal:\n%r" % err[:500])
# Cleared before the closing message: carriage return and erase-line after the last update.
last = err.rfind("ETA ")
check(last >= 0 and "\r\x1b[K" in err[last:], "the line is cleared at the end: %r" % err[last:last + 80])

rc, err = on_pty(["--quiet"], os.path.join(d, "quiet"))
check(rc == 124 and "simulated (" not in err, "no progress with --quiet: %r" % err[:300])

p = subprocess.run(args + ["--out", os.path.join(d, "pipe")], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True, timeout=60)
check(p.returncode == 124, "pipe run stopped by --max-wall")
check("simulated (" not in p.stderr and "\r" not in p.stderr, "never in a pipe: %r" % p.stderr[:300])
finish([d])

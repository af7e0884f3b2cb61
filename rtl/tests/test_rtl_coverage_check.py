#!/usr/bin/python3
"""The checks of rtl/coverage/rtl_coverage.py (ctest rtl_coverage_check, label
unit) on coverage files written here by hand in Verilator's format
(SystemC::Coverage-3: `C '<key>' <count>`, key fields NAME\\002VALUE separated
by \\001), for a small source file written here too: the figures it reports
are counted here from the points, and each check must fail on the input it is
for (an uncovered line not in the docs, a stale docs entry, a moved line, a
floor above the figure) and bad usage must exit 2 writing nothing."""

import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "coverage", "rtl_coverage.py")

SOURCE = """module m (input logic clk, input logic [1:0] a, output logic y);
  always_ff @(posedge clk)
    if (a == 2'd0) y <= 1'b0;
    else if (a == 2'd1) y <= 1'b1;
    else y <= y;
endmodule
"""


def point(src, page, line, comment, count, lines=""):
    key = f"\001f\002{src}\001l\002{line}\001n\0023\001page\002{page}/m\001o\002{comment}"
    if lines:
        key += f"\001S\002{lines}"
    return f"C '{key}\001h\002m' {count}\n"


def write_dat(path, src, else_count):
    """Line points: the if (line 3) covered, the else-if (line 4) covered, the
    last else (line 5) with else_count; toggle points: a[0], a[1] covered,
    y not."""
    with open(path, "w") as f:
        f.write("# SystemC::Coverage-3\n")
        f.write(point(src, "v_branch", 3, "if", 7, "3"))
        f.write(point(src, "v_branch", 4, "if", 5, "4"))
        f.write(point(src, "v_branch", 5, "else", else_count, "5"))
        f.write(point(src, "v_toggle", 1, "a[0]", 9))
        f.write(point(src, "v_toggle", 1, "a[1]", 2))
        f.write(point(src, "v_toggle", 1, "y", 0))


def write_docs(path, rows):
    with open(path, "w") as f:
        f.write("# Coverage\n\n| Where | Source | Why |\n|---|---|---|\n")
        for r in rows:
            f.write(r + "\n")


def run(*argv):
    r = subprocess.run([sys.executable, SCRIPT] + list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return r.returncode, r.stdout, r.stderr


failures = []


def expect(cond, what, detail=""):
    if not cond:
        failures.append(f"{what}\n{detail}")


with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "m.sv")
    with open(src, "w") as f:
        f.write(SOURCE)
    dat = os.path.join(d, "cov.dat")
    docs = os.path.join(d, "rtl.md")
    listed = "| `m.sv:5` | `else y <= y;` | a hold |"

    # 2 of 3 line points, 2 of 3 toggle points covered; the uncovered line listed.
    write_dat(dat, src, 0)
    write_docs(docs, [listed])
    rc, out, err = run("report", "--docs", docs, "--min-line", "66", "--min-toggle", "66", dat)
    expect(rc == 0, "documented uncovered line, floors met: exit 0", out + err)
    expect("2/3   66.67 %" in out, "line and toggle figures 2/3 = 66.67 %", out)
    expect("m.sv:5 (else)" in out, "the uncovered line is listed", out)

    # a floor above the figure fails, for each kind
    rc, out, err = run("report", "--docs", docs, "--min-line", "67", dat)
    expect(rc == 1 and "line coverage 66.67 %" in err, "line floor 67 > 66.67: exit 1", err)
    rc, out, err = run("report", "--docs", docs, "--min-toggle", "70", dat)
    expect(rc == 1 and "toggle coverage 66.67 %" in err, "toggle floor 70 > 66.67: exit 1", err)

    # an uncovered line the docs do not list
    write_docs(docs, [])
    rc, out, err = run("report", "--docs", docs, dat)
    expect(rc == 1 and "uncovered m.sv:5 (else) `else y <= y;` is not listed" in err,
           "undocumented uncovered line: exit 1 naming it", err)

    # the docs list it with another line's text (the source moved)
    write_docs(docs, ["| `m.sv:5` | `else if (a == 2'd1) y <= 1'b1;` | stale |"])
    rc, out, err = run("report", "--docs", docs, dat)
    expect(rc == 1 and "but the line is `else y <= y;`" in err, "docs text differs from the line: exit 1", err)

    # covered now, still listed: stale entry
    write_dat(dat, src, 3)
    write_docs(docs, [listed])
    rc, out, err = run("report", "--docs", docs, dat)
    expect(rc == 1 and "lists m.sv:5 as uncovered, but it is covered" in err, "stale docs entry: exit 1", err)
    write_docs(docs, [])
    rc, out, err = run("report", "--docs", docs, "--min-line", "100", dat)
    expect(rc == 0 and "3/3  100.00 %" in out, "all lines covered, nothing listed: exit 0", out + err)

    # two files merged: counts of the same point add up (0 + 3 covers line 5)
    dat0 = os.path.join(d, "zero.dat")
    write_dat(dat0, src, 0)
    rc, out, err = run("report", "--docs", docs, "--min-line", "100", dat0, dat)
    expect(rc == 0, "merged: the else covered by the second file", out + err)

    # bad usage: exit 2, a message naming the option or file, nothing written
    outdir = os.path.join(d, "out")
    os.mkdir(outdir)
    for argv, needle in ((["--min-line", "150", dat], "--min-line"),
                         ([os.path.join(d, "missing.dat")], "missing.dat"),
                         (["--docs-typo", docs, dat], "--docs")):
        full = ["report", "--out", outdir] + (["--docs", docs] if argv[0] != "--docs-typo" else []) + argv
        rc, out, err = run(*full)
        expect(rc == 2 and needle in err, f"bad usage {argv}: exit 2 naming {needle}", err)
    expect(os.listdir(outdir) == [], "bad usage wrote nothing", str(os.listdir(outdir)))
    rc, out, err = run("run", "--docs", docs, "--out", os.path.join(d, "run-out"), os.path.join(d, "nope"))
    expect(rc == 2 and "not an executable" in err and not os.path.exists(os.path.join(d, "run-out")),
           "run with a missing test executable: exit 2, no output directory", err)

for f in failures:
    print("FAIL:", f)
print(f"{'FAILED' if failures else 'passed'}: rtl_coverage.py checks")
sys.exit(1 if failures else 0)

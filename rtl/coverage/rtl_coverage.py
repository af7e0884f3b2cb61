#!/usr/bin/python3
"""Line and toggle coverage of the queue manager RTL (docs/rtl.md, "Coverage").

  rtl_coverage.py run [options] TEST_EXE...
      runs each test executable of the coverage build (rtl/tests, *_cov),
      which writes one coverage file per model into OUT/raw/NAME; merges them
      per executable (OUT/NAME.dat) and in all (OUT/rtl_qm.dat) with
      verilator_coverage --write; annotates the sources (OUT/annotated,
      verilator_coverage --annotate --annotate-min 1); then reports and checks
      as `report` does.
  rtl_coverage.py report [options] FILE.dat...
      the summary (line and toggle points per file, each FILE and all merged)
      and the checks, on existing coverage files.

Points: Verilator's line coverage (pages v_line: a block or case item;
v_branch: an if or else arm) and toggle coverage (v_toggle: one bit of a
signal seen going both 0->1 and 1->0). A point counts as covered when its
count is at least 1 (--annotate-min 1).

Checks (exit 1 when one fails):
  - line coverage of rtl/qm in all at least --min-line percent, toggle
    coverage at least --min-toggle percent;
  - the uncovered line points are exactly those listed in the table of
    --docs (rows `| `FILE.sv:LINE` | `source text` | reason |`), each with the
    text of that source line, so a listed line that is now covered, or whose
    line moved, fails as well as an uncovered line that is not listed;
  - the point counts of the parser here equal verilator_coverage's total
    (run: the "Total coverage (covered/points)" line of --annotate).
Bad usage: a message naming the option or file, exit 2, nothing written.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

LINE_PAGES = ("v_line", "v_branch")
TOGGLE_PAGES = ("v_toggle",)

Point = collections.namedtuple("Point", "key page file line column lines comment count")


class UsageError(Exception):
    pass


def parse_dat(path):
    """The points of a Verilator coverage file (SystemC::Coverage-3 format:
    lines `C '<key>' <count>`, the key \\001-separated fields NAME\\002VALUE)."""
    points = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = re.fullmatch(r"C '(.*)' (\d+)", line)
            if not m:
                raise UsageError(f"{path}:{n}: not a coverage point line")
            fields = {}
            for kv in m.group(1).split("\001"):
                if kv:
                    k, _, v = kv.partition("\002")
                    fields[k] = v
            if "page" not in fields or "f" not in fields or "l" not in fields:
                raise UsageError(f"{path}:{n}: point without page, f or l")
            points.append(Point(m.group(1), fields["page"].split("/")[0], fields["f"], int(fields["l"]),
                                int(fields.get("n", 0)), fields.get("S", ""), fields.get("o", ""),
                                int(m.group(2))))
    return points


def kind(point):
    if point.page in LINE_PAGES:
        return "line"
    if point.page in TOGGLE_PAGES:
        return "toggle"
    return "other"


def tally(points):
    """{(file basename, kind): [covered, total]} plus ("all", kind)."""
    t = collections.defaultdict(lambda: [0, 0])
    for p in points:
        for key in ((os.path.basename(p.file), kind(p)), ("all", kind(p))):
            t[key][0] += p.count >= 1
            t[key][1] += 1
    return t


def vc_entries(points):
    """(covered, total) as verilator_coverage 5.006 --annotate counts them for
    its "Total coverage" line: one entry per source line and column, a
    point's own line and the lines of its S ranges (a statement's lines),
    covered when any of its points has count >= 1."""
    ok = {}
    for p in points:
        lines = {p.line}
        for part in filter(None, p.lines.split(",")):
            a, _, b = part.partition("-")
            lines.update(range(int(a), int(b or a) + 1))
        for n in lines:
            key = (p.file, n, p.column)
            ok[key] = ok.get(key, False) or p.count >= 1
    return sum(ok.values()), len(ok)


def pct(c, n):
    return 100.0 * c / n if n else 100.0


def summary(labels, tallies):
    """The table: one row per file and kind, one column per coverage file."""
    files = sorted({f for t in tallies for (f, _) in t if f != "all"}) + ["all"]
    head = f"{'file':<18} {'kind':<7}" + "".join(f" {lab:>24}" for lab in labels)
    rows = [head, "-" * len(head)]
    for f in files:
        for k in ("line", "toggle"):
            cells = []
            for t in tallies:
                c, n = t.get((f, k), (0, 0))
                cells.append(f" {f'{c}/{n}':>14} {pct(c, n):7.2f} %" if n else f" {'-':>24}")
            rows.append(f"{f:<18} {k:<7}" + "".join(cells))
    return "\n".join(rows)


def documented(docs):
    """{(file, line): source text} from the docs' uncovered-lines table."""
    if not os.path.isfile(docs):
        raise UsageError(f"--docs: no such file: {docs}")
    out = {}
    with open(docs, encoding="utf-8") as f:
        for n, row in enumerate(f, 1):
            m = re.match(r"\|\s*`([\w.]+\.sv):(\d+)`\s*\|\s*`(.*?)`\s*\|", row)
            if m:
                key = (m.group(1), int(m.group(2)))
                if key in out:
                    raise UsageError(f"{docs}:{n}: {key[0]}:{key[1]} listed twice")
                out[key] = m.group(3)
    return out


def norm(text):
    return " ".join(text.split())


def check(points, docs, min_line, min_toggle):
    """The failed checks, as messages (none: all pass)."""
    fails = []
    t = tally(points)
    for k, floor in (("line", min_line), ("toggle", min_toggle)):
        c, n = t.get(("all", k), (0, 0))
        if pct(c, n) < floor:
            fails.append(f"{k} coverage {pct(c, n):.2f} % ({c}/{n}) is below the floor {floor} %")
    uncovered = collections.defaultdict(set)  # (basename, line) -> comments
    paths = {}
    for p in points:
        if kind(p) == "line" and p.count < 1:
            key = (os.path.basename(p.file), p.line)
            uncovered[key].add(p.comment or "block")
            paths[key] = p.file
    listed = documented(docs)
    for key in sorted(uncovered):
        src = source_line(paths[key], key[1])
        if key not in listed:
            fails.append(f"uncovered {key[0]}:{key[1]} ({', '.join(sorted(uncovered[key]))}) "
                         f"`{src}` is not listed in {docs}")
        elif src is not None and norm(listed[key]) != norm(src):
            fails.append(f"{docs} lists {key[0]}:{key[1]} as `{listed[key]}` but the line is `{src}`")
    for key in sorted(set(listed) - set(uncovered)):
        fails.append(f"{docs} lists {key[0]}:{key[1]} as uncovered, but it is covered (or has no point)")
    return fails, sorted(uncovered.items())


def source_line(path, n):
    try:
        with open(path, encoding="utf-8") as f:
            for i, text in enumerate(f, 1):
                if i == n:
                    return text.strip()
    except OSError:
        return None
    return None


def report(args, dats, annotated=None, vc_total=None):
    labels, tallies, everything = [], [], collections.OrderedDict()
    for d in dats:
        pts = parse_dat(d)
        labels.append(os.path.splitext(os.path.basename(d))[0])
        tallies.append(tally(pts))
        for p in pts:  # merged as verilator_coverage merges: counts of a point summed
            prev = everything.get(p.key)
            everything[p.key] = p if prev is None else prev._replace(count=prev.count + p.count)
    merged = list(everything.values())
    if len(dats) > 1:
        labels.append("all")
        tallies.append(tally(merged))
    fails, uncovered = check(merged, args.docs, args.min_line, args.min_toggle)
    if vc_total is not None and vc_entries(merged) != vc_total:
        c, n = vc_entries(merged)
        fails.append(f"this parser counts {c}/{n} annotated entries covered, verilator_coverage "
                     f"{vc_total[0]}/{vc_total[1]}: the two read the coverage file differently")
    text = ["RTL coverage (points covered / points; --annotate-min 1)", summary(labels, tallies), ""]
    text.append(f"uncovered line points: {len(uncovered)} lines (each listed in {args.docs})")
    for (f, n), comments in uncovered:
        text.append(f"  {f}:{n} ({', '.join(sorted(comments))})")
    if annotated:
        text.append(f"annotated sources: {annotated} (lines marked %000000 are uncovered)")
    text.append(f"floors: line {args.min_line} %, toggle {args.min_toggle} %")
    print("\n".join(text))
    if args.out:
        with open(os.path.join(args.out, "summary.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(text) + "\n")
    for m in fails:
        print(f"rtl_coverage: FAIL: {m}", file=sys.stderr)
    return 1 if fails else 0


def run_vc(vc, argv):
    r = subprocess.run([vc] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout)
        raise RuntimeError(f"{vc} {' '.join(argv)} failed (exit {r.returncode})")
    return r.stdout


def cmd_run(args):
    for exe in args.tests:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise UsageError(f"TEST_EXE: not an executable: {exe}")
    if shutil.which(args.verilator_coverage) is None:
        raise UsageError(f"--verilator-coverage: not found: {args.verilator_coverage}")
    if not os.path.isfile(args.docs):
        raise UsageError(f"--docs: no such file: {args.docs}")
    out = args.out
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "raw")
    shutil.rmtree(raw, ignore_errors=True)
    os.makedirs(raw)
    dats = []
    for exe in args.tests:
        name = os.path.basename(exe)
        d = os.path.join(raw, name)
        os.makedirs(d)
        env = dict(os.environ, ROCESIM_RTL_COVERAGE_DIR=d)
        print(f"rtl_coverage: running {exe}", flush=True)
        r = subprocess.run([exe, "--gtest_brief=1"], env=env)
        if r.returncode != 0:
            print(f"rtl_coverage: FAIL: {exe} failed (exit {r.returncode})", file=sys.stderr)
            return 1
        parts = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".dat"))
        if not parts:
            print(f"rtl_coverage: FAIL: {exe} wrote no coverage (not a coverage build?)", file=sys.stderr)
            return 1
        dat = os.path.join(out, name + ".dat")
        run_vc(args.verilator_coverage, ["--write", dat] + parts)
        dats.append(dat)
    shutil.rmtree(raw)
    merged = os.path.join(out, "rtl_qm.dat")
    run_vc(args.verilator_coverage, ["--write", merged] + dats)
    annotated = os.path.join(out, "annotated")
    shutil.rmtree(annotated, ignore_errors=True)
    text = run_vc(args.verilator_coverage, ["--annotate", annotated, "--annotate-min", "1", merged])
    # Verilator 5.006's summary line; other versions count differently (no cross-check then)
    m = re.search(r"Total coverage \((\d+)/(\d+)\)", text)
    if not m:
        print("rtl_coverage: note: no 'Total coverage (n/m)' line from verilator_coverage: not cross-checked")
    rank = run_vc(args.verilator_coverage, ["--rank"] + dats)
    with open(os.path.join(out, "rank.txt"), "w", encoding="utf-8") as f:
        f.write(rank)
    return report(args, dats, annotated, (int(m.group(1)), int(m.group(2))) if m else None)


def cmd_report(args):
    for d in args.dats:
        if not os.path.isfile(d):
            raise UsageError(f"FILE.dat: no such file: {d}")
    if not os.path.isfile(args.docs):
        raise UsageError(f"--docs: no such file: {args.docs}")
    return report(args, args.dats)


def main(argv):
    ap = argparse.ArgumentParser(prog="rtl_coverage.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "report"):
        p = sub.add_parser(name)
        p.add_argument("--docs", required=True, help="docs/rtl.md: the table of uncovered lines")
        p.add_argument("--min-line", type=float, default=0.0, help="line coverage floor, percent")
        p.add_argument("--min-toggle", type=float, default=0.0, help="toggle coverage floor, percent")
        p.add_argument("--out", help="directory for the merged files, annotated sources and summary.txt",
                       required=name == "run")
        if name == "run":
            p.add_argument("--verilator-coverage", default="verilator_coverage")
            p.add_argument("tests", nargs="+", metavar="TEST_EXE")
        else:
            p.add_argument("dats", nargs="+", metavar="FILE.dat")
    args = ap.parse_args(argv)
    for opt in ("min_line", "min_toggle"):
        v = getattr(args, opt)
        if not 0.0 <= v <= 100.0:
            ap.error(f"--{opt.replace('_', '-')}: {v} is not a percentage in [0, 100]")
    if args.out and args.cmd == "report" and not os.path.isdir(args.out):
        ap.error(f"--out: no such directory: {args.out}")
    try:
        if args.cmd == "run":
            return cmd_run(args)
        return cmd_report(args)
    except UsageError as e:
        print(f"rtl_coverage: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

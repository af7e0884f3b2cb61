"""Aggregation per grid point, point-level criteria, baselines and the outputs of a suite
(docs/regress.md, "Outputs"): runs.csv, results.csv, results.md, junit.xml, report.html."""
import csv
import html
import json
import os
import time
import xml.etree.ElementTree as ET

from . import metrics as M

# Reported when a scenario names no metrics of its own.
DEFAULT_METRICS = ("flows.completed", "packets.dropped", "fct.slowdown_p99", "pfc.pause_frames_tx", "ecn.marked",
                   "csv.goodput_gbps")


class Point:
    """One grid point of one scenario: its runs over the seeds and what is checked on them together."""

    def __init__(self, scenario, label, pairs, runs):
        self.scenario, self.label, self.pairs, self.runs = scenario, label, pairs, runs
        self.stats = {}      # metric -> stats dict or None
        self.checks = []     # [(text, passed, actual)]: STAT(METRIC) criteria and baselines
        self.key = "%s/%s" % (scenario.name, label)

    def metrics(self):
        """The metrics reported for this point: the scenario's (or the defaults), then those its criteria and
        baseline name."""
        out = list(self.scenario.metrics or DEFAULT_METRICS)
        for m in [c.metric for c in self.scenario.criteria] + list(self.scenario.baseline):
            if m not in out:
                out.append(m)
        return out

    @property
    def has_point_case(self):
        return any(c.stat for c in self.scenario.criteria) or bool(self.scenario.baseline)

    @property
    def status(self):
        return "fail" if any(not ok for _, ok, _ in self.checks) else "pass"


def group(runs):
    """Runs grouped into Points, in suite order."""
    points, order = {}, []
    for r in runs:
        k = (r.scenario.name, r.label)
        if k not in points:
            points[k] = Point(r.scenario, r.label, r.pairs, [])
            order.append(k)
        points[k].runs.append(r)
    return [points[k] for k in order]


def aggregate(points):
    for p in points:
        for m in p.metrics():
            p.stats[m] = M.stats([r.value(m) for r in p.runs])


def check_points(points, baselines):
    """STAT(METRIC) criteria over each point's seeds, and each baselined metric's median against the
    baseline file (|median - baseline| <= max(abs, rel x |baseline|))."""
    for p in points:
        p.checks = []
        errors = [r for r in p.runs if r.status == "error"]
        for c in p.scenario.criteria:
            if c.stat is None:
                continue
            s = p.stats.get(c.metric)
            if errors:
                p.checks.append((c.text, False, "%d of %d runs failed to run" % (len(errors), len(p.runs))))
                continue
            actual = None if s is None else s[c.stat]
            p.checks.append((c.text, c.holds(actual), actual))
        base = baselines.get(p.key, {})
        for m, tol in p.scenario.baseline.items():
            s = p.stats.get(m)
            cur = None if s is None else s["median"]
            ref = base.get(m)
            text = "median(%s) within max(%g, %g x |baseline|) of baseline" % (m, tol["abs"], tol["rel"])
            if errors:
                p.checks.append((text, False, "%d of %d runs failed to run" % (len(errors), len(p.runs))))
            elif ref is None:
                p.checks.append((text, False, "no baseline for %s (run with --update-baselines)" % p.key))
            elif cur is None:
                p.checks.append((text, False, "metric absent"))
            else:
                ok = abs(cur - ref) <= max(tol["abs"], tol["rel"] * abs(ref))
                p.checks.append((text, ok, "got %s, baseline %s" % (_num(cur), _num(ref))))


def load_baselines(path):
    if path is None or not os.path.isfile(path):
        return {}
    with open(path) as f:
        doc = json.load(f)
    return doc.get("points", {})


def update_baselines(path, suite_name, points, old):
    """Rewrites the baseline file with each point's medians; a point with a failed run keeps its old values.
    Returns the keys of the points kept."""
    kept, new = [], {}
    for p in points:
        if not p.scenario.baseline:
            continue
        if any(r.status == "error" for r in p.runs):
            kept.append(p.key)
            if p.key in old:
                new[p.key] = old[p.key]
            continue
        # 10 significant digits: the file stays readable and diffs stay small.
        new[p.key] = {m: float("%.10g" % p.stats[m]["median"]) for m in p.scenario.baseline if p.stats.get(m)}
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump({"suite": suite_name, "note": "medians over seeds per grid point; regress/run --update-baselines",
                   "points": new}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return kept


def _short(v):
    """A number for the Markdown and HTML tables: 6 significant digits."""
    return _num(float("%.6g" % v)) if isinstance(v, float) else _num(v)


def _num(v):
    """A number for the CSV files and messages: integers as such, else 10 significant digits."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return "%.10g" % v if isinstance(v, float) else str(v)


def _grid_keys(points):
    keys = []
    for p in points:
        for k, _ in p.pairs:
            if k not in keys:
                keys.append(k)
    return keys


def write_runs_csv(path, runs, points):
    ms = []
    for p in points:
        for m in p.metrics():
            if m not in ms:
                ms.append(m)
    gk = _grid_keys(points)
    with open(path + ".partial", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "point"] + gk + ["seed", "status", "reason", "wall_s", "dir"] + ms)
        for r in runs:
            pv = dict(r.pairs)
            w.writerow([r.scenario.name, r.label] + [pv.get(k, "") for k in gk] +
                       [r.seed, r.status, r.reason or "", r.record.get("wall_s", ""), os.path.relpath(r.dir,
                        os.path.dirname(path))] + [_num(r.value(m)) for m in ms])
    os.replace(path + ".partial", path)


def write_results(csv_path, md_path, suite, points, knees=None, extra_md=()):
    gk = _grid_keys(points)
    with open(csv_path + ".partial", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "point"] + gk + ["metric", "n", "median", "p90", "min", "max"])
        for p in points:
            pv = dict(p.pairs)
            for m in p.metrics():
                s = p.stats.get(m)
                w.writerow([p.scenario.name, p.label] + [pv.get(k, "") for k in gk] + [m] +
                           ([s["n"]] + [_num(s[x]) for x in M.STATS_ORDER] if s else [0, "", "", "", ""]))
    os.replace(csv_path + ".partial", csv_path)
    lines = ["# Suite %s" % suite.name, "",
             "Per grid point over seeds: median, p90 (nearest rank), min and max; n = runs with the metric.", ""]
    lines += list(extra_md)
    for sc in suite.scenarios:
        mine = [p for p in points if p.scenario is sc]
        if not mine:
            continue
        ms = mine[0].metrics()
        lines += ["## %s" % sc.name, "", "`%s`, seeds %s" % (sc.config_given, _seeds(sc.seeds)), "",
                  "| point | runs | " + " | ".join("`%s` median [p90] (min..max)" % m for m in ms) + " |",
                  "|---|---|" + "---|" * len(ms)]
        for p in mine:
            bad = sum(r.status != "pass" for r in p.runs)
            cells = []
            for m in ms:
                s = p.stats.get(m)
                cells.append("" if not s else "%s [%s] (%s..%s)" % tuple(_short(s[x]) for x in M.STATS_ORDER))
            lines.append("| %s | %d%s | %s |" % (p.label, len(p.runs), " (%d not passed)" % bad if bad else "",
                                                 " | ".join(cells)))
        lines.append("")
        if knees and sc.name in knees:
            lines += ["Knee of each median against `%s` (docs/regress.md): %s." % (sc.grid[0][0], ", ".join(
                "`%s` %s" % (m, v if v is not None else "none") for m, v in knees[sc.name].items())), ""]
    with open(md_path + ".partial", "w") as f:
        f.write("\n".join(lines))
    os.replace(md_path + ".partial", md_path)


def _seeds(seeds):
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))) and len(seeds) > 2:
        return "%d..%d" % (seeds[0], seeds[-1])
    return ", ".join(map(str, seeds))


def _check_lines(checks, failing_only):
    return "".join("%s %s: %s\n" % ("FAILED" if not ok else "ok", t, a if isinstance(a, str) else
                   "metric absent" if a is None else "got " + _num(a))
                   for t, ok, a in checks if not (failing_only and ok))


def cases(suite, points):
    """Every JUnit testcase as (scenario, name, status, message, text, time_s, run dir or None)."""
    out = []
    for p in points:
        for r in p.runs:
            if r.status == "error":
                out.append((p.scenario.name, r.name, "error", r.reason,
                            "%s\nlog tail (%s):\n%s" % (r.reason, r.log, r.log_tail()), r.record.get("wall_s", 0), r))
            elif r.status == "fail":
                bad = [c for c in r.checks if not c[1]]
                out.append((p.scenario.name, r.name, "fail", "%d of %d checks failed: %s" %
                            (len(bad), len(r.checks), "; ".join(c[0] for c in bad)),
                            _check_lines(r.checks, True) + "\nlog tail (%s):\n%s" % (r.log, r.log_tail()),
                            r.record.get("wall_s", 0), r))
            else:
                out.append((p.scenario.name, r.name, "pass", None, _check_lines(r.checks, False),
                            r.record.get("wall_s", 0), r))
        if p.has_point_case:
            name = "%s [%s] over seeds %s" % (p.scenario.name, p.label, _seeds(p.scenario.seeds))
            bad = [c for c in p.checks if not c[1]]
            if bad:
                out.append((p.scenario.name, name, "fail", "%d of %d checks failed: %s" %
                            (len(bad), len(p.checks), "; ".join(c[0] for c in bad)), _check_lines(p.checks, False),
                            0, None))
            else:
                out.append((p.scenario.name, name, "pass", None, _check_lines(p.checks, False), 0, None))
    return out


def write_junit(path, suite, points, extra=()):
    """JUnit XML in the Ant/Jenkins format (schema: regress/junit.xsd): one testsuite per scenario, one testcase
    per run (scenario, grid point, seed) and one per grid point with checks over its seeds; extra: more
    testcases in the form of cases() (a tuning round's pick)."""
    cs = cases(suite, points) + list(extra)
    root = ET.Element("testsuites", name=suite.name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for sc in suite.scenarios:
        mine = [c for c in cs if c[0] == sc.name]
        if not mine:
            continue
        n_fail = sum(c[2] == "fail" for c in mine)
        n_err = sum(c[2] == "error" for c in mine)
        t = sum(float(c[5] or 0) for c in mine)
        ts = ET.SubElement(root, "testsuite", name="%s.%s" % (suite.name, sc.name), tests=str(len(mine)),
                           failures=str(n_fail), errors=str(n_err), skipped="0", time="%.3f" % t, timestamp=stamp,
                           hostname=os.uname().nodename)
        props = ET.SubElement(ts, "properties")
        ET.SubElement(props, "property", name="config", value=sc.config)
        ET.SubElement(props, "property", name="seeds", value=" ".join(map(str, sc.seeds)))
        for _, name, status, message, text, wall, r in mine:
            tc = ET.SubElement(ts, "testcase", name=name, classname="%s.%s" % (suite.name, sc.name),
                               time="%.3f" % float(wall or 0))
            if status == "error":
                ET.SubElement(tc, "error", message=message, type="run").text = _xml_safe(text)
            elif status == "fail":
                ET.SubElement(tc, "failure", message=message, type="criteria").text = _xml_safe(text)
            out = ("run directory: %s\n" % r.dir if r else "") + (text if status == "pass" else "")
            if out:
                ET.SubElement(tc, "system-out").text = _xml_safe(out)
        totals["tests"] += len(mine)
        totals["failures"] += n_fail
        totals["errors"] += n_err
        totals["time"] += t
    for k in ("tests", "failures", "errors"):
        root.set(k, str(totals[k]))
    root.set("time", "%.3f" % totals["time"])
    ET.indent(root)
    ET.ElementTree(root).write(path + ".partial", encoding="UTF-8", xml_declaration=True)
    os.replace(path + ".partial", path)
    return cs


def _xml_safe(s):
    """Drops the characters XML 1.0 cannot carry (a crashed run's log may hold any byte)."""
    return "".join(ch for ch in s if ch in "\t\n\r" or (" " <= ch <= "\ud7ff") or ("\ue000" <= ch <= "\ufffd")
                   or ch >= "\U00010000")


def write_html(path, suite, points, cs, images=(), knees=None, extra_md=()):
    """report.html: totals, then failures and errors (checks and log tail), then the results per scenario and the
    plots (PNG files relative to the report)."""
    e = html.escape
    bad = [c for c in cs if c[2] != "pass"]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>" % e(suite.name),
             "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
             "td,th{border:1px solid #bbb;padding:2px 6px;font-size:90%}pre{background:#f4f4f4;padding:4px;"
             "overflow-x:auto}.fail{color:#b00}.pass{color:#070}</style></head><body>",
             "<h1>Suite %s</h1>" % e(suite.name),
             "<p>%d testcases: %d passed, %d failed, %d errors.</p>" % (
                 len(cs), sum(c[2] == "pass" for c in cs), sum(c[2] == "fail" for c in cs),
                 sum(c[2] == "error" for c in cs))]
    parts.append("<h2 id='failures'>Failures and errors (%d)</h2>" % len(bad))
    if not bad:
        parts.append("<p class='pass'>None.</p>")
    for _, name, status, message, text, _, r in bad:
        parts.append("<h3 class='fail'>%s: %s</h3><p>%s</p>%s<pre>%s</pre>" % (
            e(status.upper()), e(name), e(message or ""),
            "<p>run directory: <code>%s</code></p>" % e(os.path.relpath(r.dir, os.path.dirname(path))) if r else "",
            e(text)))
    if extra_md:
        parts.append("<h2>Tuning</h2><pre>%s</pre>" % e("\n".join(extra_md)))
    for img in images:
        parts.append("<h2>%s</h2><img src='%s' style='max-width:100%%'>" % (e(os.path.basename(img)),
                                                                          e(os.path.relpath(img, os.path.dirname(path)))))
    parts.append("<h2>Results</h2>")
    for sc in suite.scenarios:
        mine = [p for p in points if p.scenario is sc]
        if not mine:
            continue
        ms = mine[0].metrics()
        parts.append("<h3>%s</h3><table><tr><th>point</th><th>runs</th>%s</tr>" % (
            e(sc.name), "".join("<th>%s<br>median [p90] (min..max)</th>" % e(m) for m in ms)))
        for p in mine:
            st = "fail" if p.status == "fail" or any(r.status != "pass" for r in p.runs) else "pass"
            cells = "".join("<td>%s</td>" % ("" if not p.stats.get(m) else e("%s [%s] (%s..%s)" % tuple(
                _short(p.stats[m][x]) for x in M.STATS_ORDER))) for m in ms)
            parts.append("<tr><td class='%s'>%s</td><td>%d</td>%s</tr>" % (st, e(p.label), len(p.runs), cells))
        parts.append("</table>")
        if knees and sc.name in knees:
            parts.append("<p>Knee of each median against <code>%s</code>: %s.</p>" % (e(sc.grid[0][0]), ", ".join(
                "<code>%s</code> %s" % (e(m), e(v if v is not None else "none")) for m, v in knees[sc.name].items())))
    parts.append("</body></html>\n")
    with open(path + ".partial", "w") as f:
        f.write("\n".join(parts))
    os.replace(path + ".partial", path)

"""Tuning rounds (docs/regress.md, "Tuning rounds"): a suite of `rounds:` runs them in order; each round sweeps
its grid with the earlier rounds' choices fixed (--set), and picks one grid point by its `pick:`:

  1. candidates: the points whose runs all ran (no error) and that meet every `require` criterion
     (STAT(METRIC) OP VALUE over the seeds);
  2. for each rank key `max|min STAT(METRIC) within N%` in turn: the best value among the candidates that have
     the metric, and the candidates within N % of it (|v - best| <= N/100 x |best|; only the best without
     `within`) stay;
  3. the first remaining point in grid order is the choice.

No candidate (every point fails a requirement, or no point has a ranked metric): the round has no choice and
the later rounds do not run.
"""
import json
import os

from . import metrics as M


class Choice:
    """A round's result: the chosen Point (or None), why not, and per point the table of the pick."""

    def __init__(self, scenario):
        self.scenario = scenario
        self.point = None
        self.why_none = None
        self.rows = []   # [(point, feasible, reason or None, {rank text: value or None}, kept_until)]

    @property
    def pairs(self):
        return [] if self.point is None else list(self.point.pairs)


def _stat(point, stat, metric):
    s = point.stats.get(metric)
    if s is None:
        s = M.stats([r.value(metric) for r in point.runs])
        point.stats[metric] = s
    return None if s is None else s[stat]


def pick(scenario, points):
    """The Choice of one round over its Points (aggregated)."""
    ch = Choice(scenario)
    pk = scenario.pick
    feasible = []
    info = {}
    for p in points:
        values = {k.text: _stat(p, k.stat, k.metric) for k in pk.rank}
        errors = [r for r in p.runs if r.status == "error"]
        why = None
        if errors:
            why = "%d of %d runs failed to run" % (len(errors), len(p.runs))
        else:
            for c in pk.require:
                v = _stat(p, c.stat, c.metric)
                if not c.holds(v):
                    why = "%s: %s" % (c.text, "metric absent" if v is None else "got %s" % _num(v))
                    break
        info[p.key] = [p, why is None, why, values, 0]
        if why is None:
            feasible.append(p)
    cands = feasible
    if not cands:
        ch.why_none = "no grid point meets the requirements (%s)" % " and ".join(c.text for c in pk.require)
    for i, k in enumerate(pk.rank):
        if not cands:
            break
        have = [p for p in cands if info[p.key][3][k.text] is not None]
        if not have:
            ch.why_none = "no candidate has %s" % k.metric
            cands = []
            break
        vals = [info[p.key][3][k.text] for p in have]
        best = max(vals) if k.goal == "max" else min(vals)
        cands = [p for p in have if abs(info[p.key][3][k.text] - best) <= k.within * abs(best)]
        for p in cands:
            info[p.key][4] = i + 1
    if cands:
        ch.point = cands[0]
    ch.rows = [tuple(info[p.key]) for p in points]
    return ch


def _num(v):
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


def write_choices(path, suite, choices):
    """choices.json: per round, in order, its grid keys, the values fixed from earlier rounds, the pick rule, the
    choice (or why none) and per grid point whether it was a candidate and its ranked statistics."""
    doc = {"suite": suite.name, "rounds": []}
    for ch in choices:
        sc = ch.scenario
        doc["rounds"].append({
            "round": sc.name,
            "grid": [k for k, _ in sc.grid],
            "fixed_from_earlier_rounds": dict(sc.chosen),
            "pick": sc.pick.text(),
            "chosen": None if ch.point is None else {"point": ch.point.label, "values": dict(ch.point.pairs)},
            "why_none": ch.why_none,
            "points": [{"point": p.label, "candidate": ok, "excluded": why, "ranked": values,
                        "kept_by_rank_keys": kept} for p, ok, why, values, kept in ch.rows],
        })
    with open(path + ".partial", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(path + ".partial", path)


def markdown(suite, choices, not_run):
    """The results.md section: the chosen values, then each round's table of the pick."""
    lines = ["## Tuning: the chosen values", "",
             "Rounds in order, each with the earlier rounds' choices fixed (docs/regress.md, \"Tuning rounds\").", "",
             "| round | swept | pick | chosen |", "|---|---|---|---|"]
    for ch in choices:
        sc = ch.scenario
        lines.append("| %s | %s | %s | %s |" % (sc.name, ", ".join("`%s`" % k for k, _ in sc.grid), sc.pick.text(),
                                                "none: " + ch.why_none if ch.point is None else
                                                ", ".join("`%s=%s`" % kv for kv in ch.point.pairs)))
    for sc in not_run:
        lines.append("| %s | %s | %s | not run: an earlier round chose nothing |" % (
            sc.name, ", ".join("`%s`" % k for k, _ in sc.grid), sc.pick.text()))
    lines.append("")
    for ch in choices:
        sc = ch.scenario
        ranks = [k.text for k in sc.pick.rank]
        lines += ["### Round %s" % sc.name, "",
                  "Fixed from earlier rounds: %s." % (", ".join("`%s=%s`" % kv for kv in sc.chosen) or "nothing"), "",
                  "| point | candidate | " + " | ".join("`%s`" % t for t in ranks) + " |",
                  "|---|---|" + "---|" * len(ranks)]
        for p, ok, why, values, kept in ch.rows:
            mark = " **(chosen)**" if ch.point is p else ""
            lines.append("| %s%s | %s | %s |" % (p.label, mark, "yes" if ok else "no: " + why,
                                                 " | ".join("" if values[t] is None else _num(values[t])
                                                            for t in ranks)))
        lines.append("")
    return lines

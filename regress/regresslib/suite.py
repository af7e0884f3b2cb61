"""Suite files (docs/regress.md, "Suite file"): loading, validation and expansion into runs.

A suite is read with PyYAML's composer, so that every key keeps its position:
every error names FILE:LINE:COL (1-based, as rocesim's own messages) and the
dotted key, and is raised as SuiteError before anything runs or is written.
"""
import difflib
import itertools
import math
import os
import re

import yaml

from . import metrics as M


class SuiteError(Exception):
    """Bad suite file: one line FILE:LINE:COL: key 'PATH': reason (exit status 2)."""

    def __init__(self, file, mark, key, reason):
        where = file if mark is None else "%s:%d:%d" % (file, mark.line + 1, mark.column + 1)
        super().__init__("%s: key '%s': %s" % (where, key, reason) if key else "%s: %s" % (where, reason))


# A metric is a dotted path into summary.json, list elements indexed:
# fct.by_size[0].slowdown_p99. Paths under csv. are derived from flows.csv
# (metrics.py).
METRIC_RE = r"[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*"
STATS = ("median", "p90", "min", "max")
# A criterion: METRIC OP VALUE (checked on every run) or STAT(METRIC) OP VALUE
# (checked per grid point on the statistic over its seeds).
CRITERION_RE = re.compile(r"^\s*(?:(%s)\(\s*(%s)\s*\)|(%s))\s*(==|!=|<=|>=|<|>)\s*(\S+)\s*$"
                          % ("|".join(STATS), METRIC_RE, METRIC_RE))
OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<=": lambda a, b: a <= b,
       ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}


class Criterion:
    def __init__(self, text, stat, metric, op, value):
        self.text, self.stat, self.metric, self.op, self.value = text, stat, metric, op, value

    def holds(self, actual):
        """True when the check passes. Booleans compare only with booleans, numbers with numbers."""
        if actual is None:
            return False
        if isinstance(self.value, bool) or isinstance(actual, bool):
            if not (isinstance(self.value, bool) and isinstance(actual, bool)) or self.op not in ("==", "!="):
                return False
        return OPS[self.op](actual, self.value)


def parse_criterion(text):
    """Criterion from its text, or None if it does not parse."""
    m = CRITERION_RE.match(text)
    if not m:
        return None
    stat, smetric, metric, op, raw = m.groups()
    low = raw.lower()
    if low in ("true", "false"):
        if op not in ("==", "!="):
            return None
        value = low == "true"
    else:
        try:
            value = float(raw)
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
    return Criterion(text.strip(), stat, smetric or metric, op, value)


def parse_duration_s(text):
    """Seconds from '500ms', '90s', '10m', '2h' or a bare number of seconds (as rocesim --max-wall)."""
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*(ms|s|m|h)?\s*$", str(text))
    if not m:
        return None
    v = float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
    return v if v > 0 else None


def yaml_text(value):
    """A YAML value as the text of one --set argument (flow style for maps and lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) or value is None:
        return "null" if value is None else repr(value)
    if isinstance(value, str):
        # Plain when it reads back as the same string, quoted otherwise.
        try:
            plain = yaml.safe_load(value) if value.strip() == value and value else None
        except yaml.YAMLError:
            plain = None
        return value if plain == value else yaml.safe_dump(value, default_style='"', width=math.inf).strip()
    return yaml.safe_dump(value, default_flow_style=True, width=math.inf).strip()


# One ranking key of a round's pick: (max|min) STAT(METRIC) [within N%].
RANK_RE = re.compile(r"^\s*(max|min)\s+(%s)\(\s*(%s)\s*\)\s*(?:within\s+([0-9]+(?:\.[0-9]*)?)\s*%%)?\s*$"
                     % ("|".join(STATS), METRIC_RE))


class Rank:
    """(max|min) STAT(METRIC) within N%: keep the candidates whose statistic is within N % of the best one's
    (|v - best| <= N/100 x |best|; exactly the best without 'within')."""

    def __init__(self, text, goal, stat, metric, within):
        self.text, self.goal, self.stat, self.metric, self.within = text, goal, stat, metric, within


class Pick:
    """How a round chooses its grid point (docs/regress.md, "Tuning rounds"): the points whose runs all ran and
    that meet every `require` criterion (STAT(METRIC) OP VALUE over the seeds), then each rank key in turn; the
    first remaining point in grid order."""

    def __init__(self):
        self.require = []   # [Criterion], each with a stat
        self.rank = []      # [Rank]

    def text(self):
        parts = []
        if self.require:
            parts.append("subject to " + " and ".join(c.text for c in self.require))
        parts += [r.text for r in self.rank]
        return "; ".join(parts)


class Scenario:
    """One scenario of a suite, defaults merged in (docs/regress.md)."""

    def __init__(self):
        self.name = self.config = None
        self.seeds = [1]
        self.timeout_s = 600.0
        self.sets = {}            # key -> YAML text
        self.grid = []            # [(key, [YAML text, ...])]
        self.args = []
        self.criteria = []        # [Criterion]
        self.metrics = []
        self.baseline = {}        # metric -> {"rel": x, "abs": y}
        self.mark = None          # position of the scenario in the suite file
        self.grid_mark = None
        self.key_marks = {}       # --set key -> (position, suite key) of its set: or grid: entry
        self.pick = None          # a tuning round's Pick, else None
        self.chosen = []          # a tuning round: the earlier rounds' choices, [(key, YAML text)], set by the runner
        self.metric_marks = {}    # metric -> (position, suite key) where the scenario (or its defaults) names it

    def points(self):
        """Grid points in order: [(label, dirname, [(key, value), ...])]; one point 'base' without a grid."""
        if not self.grid:
            return [("base", "base", [])]
        keys = [k for k, _ in self.grid]
        out, used = [], set()
        for combo in itertools.product(*[vs for _, vs in self.grid]):
            pairs = list(zip(keys, combo))
            label = ",".join("%s=%s" % kv for kv in pairs)
            d = re.sub(r"[^A-Za-z0-9._=+-]", "_", ",".join("%s=%s" % (k.split(".")[-1], v) for k, v in pairs))
            d = d[:120]
            base, i = d, 1
            while d in used:  # two labels that sanitise alike
                i += 1
                d = "%s.%d" % (base, i)
            used.add(d)
            out.append((label, d, pairs))
        return out


class Suite:
    def __init__(self, path):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.scenarios = []
        self.baselines_file = None   # absolute path or None
        self.baselines_mark = None
        self.rounds = False          # True: the scenarios are tuning rounds, run in order (rounds:)


SCENARIO_KEYS = ("seeds", "timeout", "set", "grid", "args", "criteria", "metrics", "baseline")
TOP_KEYS = ("name", "defaults", "baselines", "scenarios", "rounds")


class _Reader:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.loader = yaml.SafeLoader(f.read())
        try:
            self.root = self.loader.get_single_node()
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise SuiteError(path, mark, None, "not valid YAML: %s" % getattr(e, "problem", e))
        self.metric_marks = {}   # metric -> (position, suite key) of its first mention in what is being read

    def err(self, node, key, reason):
        return SuiteError(self.path, None if node is None else node.start_mark, key, reason)

    def value(self, node):
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node, key, allowed):
        if not isinstance(node, yaml.MappingNode):
            raise self.err(node, key, "expected a map")
        out = {}
        for knode, vnode in node.value:
            k = knode.value if isinstance(knode, yaml.ScalarNode) else None
            path = "%s.%s" % (key, k) if key else k
            if k is None:
                raise self.err(knode, key, "keys must be plain names")
            if allowed is not None and k not in allowed:
                close = difflib.get_close_matches(k, allowed, 1)
                hint = " (did you mean '%s'?)" % close[0] if close else " (keys: %s)" % ", ".join(allowed)
                raise self.err(knode, path, "unknown key" + hint)
            if k in out:
                raise self.err(knode, path, "given twice")
            out[k] = (knode, vnode)
        return out

    def string(self, node, key):
        v = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(v, str) or not v:
            raise self.err(node, key, "expected a non-empty string")
        return v

    def seq(self, node, key):
        if not isinstance(node, yaml.SequenceNode):
            raise self.err(node, key, "expected a list")
        return node.value


def _check_metric(r, node, key, text):
    if isinstance(text, str):   # where it is first named: regress/run checks summary.json paths after loading
        r.metric_marks.setdefault(text, (node.start_mark, key))
    if not isinstance(text, str) or not re.fullmatch(METRIC_RE, text):
        raise r.err(node, key, "expected a metric path such as fct.slowdown_p99 or fct.by_size[0].slowdown_p99, "
                    "got %r" % (text,))
    for prefix, known in (("csv.", M.CSV_METRICS), ("derived.", list(M.RATIOS)), ("run.", list(M.RUN_METRICS))):
        if text.startswith(prefix) and text not in known and not re.fullmatch(M.TAG_METRIC_RE, text):
            close = difflib.get_close_matches(text, known, 1)
            raise r.err(node, key, "unknown metric '%s'%s" % (text, " (did you mean '%s'?)" % close[0] if close
                                                               else " (%s)" % ", ".join(known)))


def _scenario_keys(r, fields, key, sc, suite):
    """Applies the scenario keys in fields (a mapping() result) onto sc."""
    for k, (knode, v) in fields.items():
        path = "%s.%s" % (key, k)
        if k == "seeds":
            val = r.value(v) if isinstance(v, yaml.ScalarNode) else None
            if isinstance(val, int) and not isinstance(val, bool):
                if val < 1:
                    raise r.err(v, path, "a count of seeds must be at least 1")
                sc.seeds = list(range(1, val + 1))
            else:
                items = [r.value(x) if isinstance(x, yaml.ScalarNode) else None for x in r.seq(v, path)]
                if not items or any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for x in items):
                    raise r.err(v, path, "expected a count (N: seeds 1..N) or a non-empty list of seeds >= 0")
                if len(set(items)) != len(items):
                    raise r.err(v, path, "a seed is listed twice")
                sc.seeds = items
        elif k == "timeout":
            t = parse_duration_s(r.value(v)) if isinstance(v, yaml.ScalarNode) else None
            if t is None:
                raise r.err(v, path, "expected a wall-clock duration such as 90s, 10m or 500ms, greater than 0")
            sc.timeout_s = t
        elif k == "set":
            for sk, (skn, svn) in r.mapping(v, path, None).items():
                sc.sets[sk] = yaml_text(r.value(svn))
                sc.key_marks[sk] = (skn.start_mark, "%s.%s" % (path, sk))
        elif k == "grid":
            sc.grid, sc.grid_mark = [], v.start_mark
            for gk, (gkn, gvn) in r.mapping(v, path, None).items():
                vals = [yaml_text(r.value(x)) for x in r.seq(gvn, "%s.%s" % (path, gk))]
                if not vals:
                    raise r.err(gvn, "%s.%s" % (path, gk), "expected a non-empty list of values")
                if len(set(vals)) != len(vals):
                    raise r.err(gvn, "%s.%s" % (path, gk), "a value is listed twice")
                sc.grid.append((gk, vals))
                sc.key_marks[gk] = (gkn.start_mark, "%s.%s" % (path, gk))
        elif k == "args":
            for i, x in enumerate(r.seq(v, path)):
                a = r.value(x) if isinstance(x, yaml.ScalarNode) else None
                if not isinstance(a, str) or (i == 0 and not a.startswith("--")):
                    raise r.err(x, "%s[%d]" % (path, i), "expected rocesim run options and their values, "
                                "such as [--check-invariants, --queue-impl, lockstep]")
                if a.split("=")[0] in ("--out", "--seed", "--set", "--force", "--quiet"):
                    raise r.err(x, "%s[%d]" % (path, i), "%s is set by the runner (use seeds: or set:)" % a)
                sc.args.append(a)
        elif k == "criteria":
            for i, x in enumerate(r.seq(v, path)):
                t = r.value(x) if isinstance(x, yaml.ScalarNode) else None
                c = parse_criterion(t) if isinstance(t, str) else None
                if c is None:
                    raise r.err(x, "%s[%d]" % (path, i),
                                "expected 'METRIC OP VALUE' or 'STAT(METRIC) OP VALUE' (OP: == != <= >= < >, "
                                "VALUE a number or true/false, STAT: %s), got %r" % (", ".join(STATS), t))
                _check_metric(r, x, "%s[%d]" % (path, i), c.metric)
                sc.criteria.append(c)
        elif k == "metrics":
            for i, x in enumerate(r.seq(v, path)):
                t = r.value(x) if isinstance(x, yaml.ScalarNode) else None
                _check_metric(r, x, "%s[%d]" % (path, i), t)
                if t not in sc.metrics:
                    sc.metrics.append(t)
        elif k == "baseline":
            if suite.baselines_file is None:
                raise r.err(knode, path, "needs a top-level 'baselines: FILE' to compare with")
            for mk, (mkn, mvn) in r.mapping(v, path, None).items():
                _check_metric(r, mkn, "%s.%s" % (path, mk), mk)
                tol = {"rel": 0.0, "abs": 0.0}
                for tk, (tkn, tvn) in r.mapping(mvn, "%s.%s" % (path, mk), ("rel", "abs")).items():
                    tv = r.value(tvn) if isinstance(tvn, yaml.ScalarNode) else None
                    if not isinstance(tv, (int, float)) or isinstance(tv, bool) or tv < 0:
                        raise r.err(tvn, "%s.%s.%s" % (path, mk, tk), "expected a number >= 0")
                    tol[tk] = float(tv)
                sc.baseline[mk] = tol


def _pick(r, node, key):
    """A round's pick: {require: [STAT(METRIC) OP VALUE, ...], rank: ["max|min STAT(METRIC) [within N%]", ...]}."""
    fields = r.mapping(node, key, ("require", "rank"))
    pk = Pick()
    if "require" in fields:
        for i, x in enumerate(r.seq(fields["require"][1], key + ".require")):
            t = r.value(x) if isinstance(x, yaml.ScalarNode) else None
            c = parse_criterion(t) if isinstance(t, str) else None
            if c is None or c.stat is None:
                raise r.err(x, "%s.require[%d]" % (key, i), "expected 'STAT(METRIC) OP VALUE' over the seeds "
                            "(STAT: %s), e.g. 'max(packets.dropped) == 0', got %r" % (", ".join(STATS), t))
            _check_metric(r, x, "%s.require[%d]" % (key, i), c.metric)
            pk.require.append(c)
    if "rank" not in fields:
        raise r.err(node, key + ".rank", "missing (at least one 'max|min STAT(METRIC) [within N%]')")
    items = r.seq(fields["rank"][1], key + ".rank")
    if not items:
        raise r.err(fields["rank"][1], key + ".rank", "expected at least one 'max|min STAT(METRIC) [within N%]'")
    for i, x in enumerate(items):
        t = r.value(x) if isinstance(x, yaml.ScalarNode) else None
        m = RANK_RE.match(t) if isinstance(t, str) else None
        if m is None:
            raise r.err(x, "%s.rank[%d]" % (key, i), "expected 'max|min STAT(METRIC) [within N%%]' (STAT: %s), "
                        "e.g. 'max median(csv.tag_gbps.incast) within 2%%', got %r" % (", ".join(STATS), t))
        _check_metric(r, x, "%s.rank[%d]" % (key, i), m.group(3))
        pk.rank.append(Rank(t.strip(), m.group(1), m.group(2), m.group(3),
                            float(m.group(4)) / 100 if m.group(4) else 0.0))
    return pk


def load(path):
    """Suite from a file; raises SuiteError on any problem, OSError if unreadable."""
    r = _Reader(path)
    suite = Suite(path)
    if r.root is None:
        raise SuiteError(path, None, None, "empty suite file")
    top = r.mapping(r.root, "", TOP_KEYS)
    if "scenarios" in top and "rounds" in top:
        raise r.err(top["rounds"][0], "rounds", "a suite has either scenarios: or rounds:, not both")
    if "rounds" in top:
        suite.rounds = True
    elif "scenarios" not in top:
        raise r.err(r.root, "scenarios", "missing (a suite needs at least one scenario, or tuning rounds:)")
    list_key = "rounds" if suite.rounds else "scenarios"
    if "name" in top:
        suite.name = r.string(top["name"][1], "name")
        if not re.fullmatch(r"[A-Za-z0-9._-]+", suite.name):
            raise r.err(top["name"][1], "name", "letters, digits, '.', '_' and '-' only")
    if "baselines" in top:
        suite.baselines_file = os.path.join(suite.dir, r.string(top["baselines"][1], "baselines"))
        suite.baselines_mark = top["baselines"][1].start_mark
    defaults = Scenario()
    dfields = r.mapping(top["defaults"][1], "defaults", SCENARIO_KEYS) if "defaults" in top else {}
    if "grid" in dfields:
        raise r.err(dfields["grid"][0], "defaults.grid", "a grid belongs to a scenario")
    _scenario_keys(r, dfields, "defaults", defaults, suite)
    defaults.metric_marks, r.metric_marks = r.metric_marks, {}
    names = set()
    items = r.seq(top[list_key][1], list_key)
    if not items:
        raise r.err(top[list_key][1], list_key, "expected at least one %s" % list_key[:-1])
    swept = {}   # a round's grid key -> the round that chose it
    for i, node in enumerate(items):
        key = "%s[%d]" % (list_key, i)
        fields = r.mapping(node, key, ("name", "config") + SCENARIO_KEYS + (("pick",) if suite.rounds else ()))
        if "config" not in fields:
            raise r.err(node, key + ".config", "missing (the rocesim scenario file, relative to the suite file)")
        own = Scenario()
        own.seeds, own.timeout_s = list(defaults.seeds), defaults.timeout_s
        own.sets = dict(defaults.sets)
        own.key_marks = dict(defaults.key_marks)
        own.args = list(defaults.args)
        own.criteria = list(defaults.criteria)
        own.metrics = list(defaults.metrics)
        own.baseline = dict(defaults.baseline)
        own.mark = node.start_mark
        cnode = fields["config"][1]
        own.config_given = r.string(cnode, key + ".config")
        own.config = os.path.normpath(os.path.join(suite.dir, own.config_given))
        if not os.path.isfile(own.config):
            raise r.err(cnode, key + ".config", "no such file: %s" % own.config)
        if "name" in fields:
            own.name = r.string(fields["name"][1], key + ".name")
            nnode = fields["name"][1]
        else:
            own.name, nnode = os.path.splitext(os.path.basename(own.config))[0], cnode
        if not re.fullmatch(r"[A-Za-z0-9._-]+", own.name):
            raise r.err(nnode, key + ".name", "letters, digits, '.', '_' and '-' only (it names a directory)")
        if own.name in names:
            raise r.err(nnode, key + ".name", "scenario '%s' is named twice (give one a name:)" % own.name)
        names.add(own.name)
        # Lists concatenate with the defaults', maps merge key by key; seeds and timeout replace.
        _scenario_keys(r, {k: v for k, v in fields.items() if k not in ("name", "config", "pick")}, key, own, suite)
        for gk, _ in own.grid:
            if gk in own.sets:
                raise r.err(fields["grid"][1], key + ".grid." + gk, "also given in set: (a key is either fixed or swept)")
        if suite.rounds:
            # What this round fixes for the later ones: its own set: (not the defaults') and its choice.
            own.own_sets = [(k, v) for k, v in own.sets.items() if defaults.sets.get(k) != v]
            if "pick" not in fields:
                raise r.err(node, key + ".pick", "missing (how the round chooses its grid point)")
            if "grid" not in fields:
                raise r.err(node, key + ".grid", "missing (the parameters the round sweeps)")
            own.pick = _pick(r, fields["pick"][1], key + ".pick")
            for sk in own.sets:
                if sk in swept:
                    raise SuiteError(r.path, own.key_marks[sk][0], own.key_marks[sk][1], "fixed by round '%s': a later round "
                                "takes that round's value (remove it here)" % swept[sk])
            for gk, _ in own.grid:
                if gk in swept:
                    raise SuiteError(r.path, own.key_marks[gk][0], own.key_marks[gk][1], "already fixed by round '%s' (each "
                                "round tunes its own parameters)" % swept[gk])
            for gk in [k for k, _ in own.grid] + [k for k, _ in own.own_sets]:
                swept[gk] = own.name
        own.metric_marks = dict(defaults.metric_marks, **r.metric_marks)
        r.metric_marks = {}
        suite.scenarios.append(own)
    return suite

"""Metrics of one run and their statistics over seeds (docs/regress.md, "Metrics").

A metric is a dotted path into summary.json (fct.slowdown_p99,
fct.by_size[0].slowdown_p99, pfc.pause_frames_tx) or, under csv., a value
derived from the run's flows.csv (derived()).
"""
import csv
import math
import re
import statistics

# Flow-size buckets of the csv.* FCT metrics: the bucket edges of
# summary.json's fct.by_size (docs/outputs.md: 10 KB, 100 KB, 1 MB, 10 MB,
# then larger; a flow goes in the first bucket whose bound exceeds its size).
BUCKETS = (("lt10KB", 10_000), ("lt100KB", 100_000), ("lt1MB", 1_000_000), ("lt10MB", 10_000_000),
           ("ge10MB", None))

# Every csv.* metric derived() can give (docs/regress.md, "Metrics").
CSV_METRICS = (["csv.goodput_gbps", "csv.bulk_goodput_gbps", "csv.completed_fraction", "csv.flow_gbps_mean",
                "csv.flow_gbps_p10"] +
               ["csv.%s.%s" % (m, b) for m in ("fct_us_p50", "fct_us_p99", "slowdown_p50", "slowdown_p99", "flows")
                for b, _ in BUCKETS])

# Per generator (flows.csv's tag: long, incast, background, websearch, ...): csv.tag_gbps.TAG and
# csv.tag_slowdown_p99.TAG, csv.tag_fct_us_p50.TAG, csv.tag_fct_us_p95.TAG (derived()); any tag name is
# accepted (a tag the run does not have is absent).
TAG_METRIC_RE = r"csv\.(?:tag_gbps|tag_slowdown_p99|tag_fct_us_p50|tag_fct_us_p95|tag_completed_fraction)\.[A-Za-z0-9_]+"

# Measured by the runner, not the run (runner.Run.run_metric): the peak resident set of the rocesim process
# (wait4's ru_maxrss) in MiB, and the run's wall time in seconds.
RUN_METRICS = ("run.peak_rss_mib", "run.wall_s")

# The statistics over seeds, in the order of the result tables.
STATS_ORDER = ("median", "p90", "min", "max")


def lookup(doc, path):
    """The value at a dotted path (a.b[2].c) in a parsed JSON document, or None when absent."""
    cur = doc
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)", part)
        if not m or not isinstance(cur, dict) or m.group(1) not in cur:
            return None
        cur = cur[m.group(1)]
        for idx in re.findall(r"\[(\d+)\]", m.group(2)):
            if not isinstance(cur, list) or int(idx) >= len(cur):
                return None
            cur = cur[int(idx)]
    return cur


def unknown_part(doc, path):
    """For a summary.json path, the first component that a summary of this scenario (doc, e.g. of a 1 ns run)
    does not have, or None when the path exists or cannot be judged: past an index into a list that is
    shorter here (per-queue and per-port lists hold only what saw traffic), or past a value that is null."""
    cur = doc
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)", part)
        if cur is None:
            return None
        if not m or not isinstance(cur, dict) or m.group(1) not in cur:
            return part
        cur = cur[m.group(1)]
        for idx in re.findall(r"\[(\d+)\]", m.group(2)):
            if not isinstance(cur, list):
                return part
            if int(idx) >= len(cur):
                return None
            cur = cur[int(idx)]
    return None


def summary_paths(path):
    """The summary.json paths a metric reads: none for csv.* and run.* (flows.csv, the runner), both operands
    of a derived.* ratio, else the path itself."""
    if path.startswith("csv.") or path in RUN_METRICS:
        return []
    return list(RATIOS.get(path, [path]))


def nearest_rank(values, p):
    """The p-quantile (0 < p <= 1) by nearest rank: the ceil(p * n)-th smallest (as summary.json's percentiles)."""
    v = sorted(values)
    return v[max(0, math.ceil(p * len(v)) - 1)] if v else None


def _bucket(size):
    for name, bound in BUCKETS:
        if bound is None or size < bound:
            return name
    raise AssertionError("unreachable")


def active_goodput(rows, end):
    """Payload received x 8 / the time at least one of the flows is active (the union of their [start, finish]
    intervals, finish = the end of the run if unfinished; a flow configured to start at or after the end was
    never active), Gbps (bits per ns); None when they were never active."""
    spans = sorted((float(r["start_ns"]), float(r["finish_ns"]) if r["finish_ns"] else end)
                   for r in rows if float(r["start_ns"]) < end)
    active, lo, hi = 0.0, None, None
    for a, b in spans:
        if hi is None or a > hi:
            active += 0.0 if hi is None else hi - lo
            lo, hi = a, b
        else:
            hi = max(hi, b)
    active += 0.0 if hi is None else hi - lo
    return sum(int(r["bytes_received"]) for r in rows) * 8 / active if active > 0 else None


def derived(flows_csv, sim_time_ns):
    """csv.* metrics of a run from its flows.csv (columns: docs/outputs.md):

    csv.goodput_gbps          payload bytes received x 8 / the span from the earliest flow start to the
                              latest finish (the end of the run for a flow that did not finish), Gbps
    csv.completed_fraction    completed flows / flows
    csv.flow_gbps_mean        mean over completed flows of size x 8 / FCT (per-flow throughput), Gbps
    csv.flow_gbps_p10         its 10th percentile (nearest rank): the slow flows
    csv.bulk_goodput_gbps     the flows of 10 KB or more (all but the first bucket): their payload received x 8
                              / the time at least one of them is active (the union of their [start, finish]
                              intervals, finish = the end of the run if unfinished; a flow that starts after
                              the end counts nothing), Gbps: the goodput while
                              there is bulk data to send (regress/sweeps/ecn_sweep.sh's throughput)
    csv.tag_gbps.TAG          the flows of generator TAG (flows.csv's tag column): their payload received x 8 /
                              the union of their active intervals, as csv.bulk_goodput_gbps, Gbps
    csv.tag_slowdown_p99.TAG  their p99 FCT slowdown (nearest rank over the completed ones)
    csv.tag_fct_us_p50.TAG, csv.tag_fct_us_p95.TAG  their median and p95 FCT, us (nearest rank, completed)
    csv.tag_completed_fraction.TAG  their completed flows / their flows
    csv.fct_us_p50.B, csv.fct_us_p99.B, csv.slowdown_p50.B, csv.slowdown_p99.B, csv.flows.B
                              per flow-size bucket B (BUCKETS): FCT percentiles in us and slowdown
                              percentiles (nearest rank over the bucket's completed flows; absent when
                              none completed), and the bucket's flow count
    """
    with open(flows_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    if not rows:
        return out
    done = [r for r in rows if r["completed"] == "1"]
    start = min(float(r["start_ns"]) for r in rows)
    end = max(float(r["finish_ns"]) if r["finish_ns"] else float(sim_time_ns) for r in rows)
    received = sum(int(r["bytes_received"]) for r in rows)
    out["csv.goodput_gbps"] = received * 8 / (end - start) if end > start else None
    out["csv.completed_fraction"] = len(done) / len(rows)
    bulk = [r for r in rows if int(r["size_bytes"]) >= BUCKETS[0][1]]
    g = active_goodput(bulk, float(sim_time_ns))
    if g is not None:
        out["csv.bulk_goodput_gbps"] = g
    for tag in sorted({r.get("tag", "") for r in rows} - {""}):
        mine = [r for r in rows if r.get("tag") == tag]
        g = active_goodput(mine, float(sim_time_ns))
        if g is not None:
            out["csv.tag_gbps." + tag] = g
        slow = [float(r["slowdown"]) for r in mine if r["completed"] == "1"]
        if slow:
            out["csv.tag_slowdown_p99." + tag] = nearest_rank(slow, 0.99)
            fct = [float(r["fct_ns"]) / 1000 for r in mine if r["completed"] == "1"]
            out["csv.tag_fct_us_p50." + tag] = nearest_rank(fct, 0.50)
            out["csv.tag_fct_us_p95." + tag] = nearest_rank(fct, 0.95)
        out["csv.tag_completed_fraction." + tag] = len(slow) / len(mine)
    rates = [int(r["size_bytes"]) * 8 / float(r["fct_ns"]) for r in done if float(r["fct_ns"]) > 0]
    if rates:
        out["csv.flow_gbps_mean"] = sum(rates) / len(rates)
        out["csv.flow_gbps_p10"] = nearest_rank(rates, 0.10)
    for name, _ in BUCKETS:
        mine = [r for r in rows if _bucket(int(r["size_bytes"])) == name]
        out["csv.flows." + name] = len(mine)
        fin = [r for r in mine if r["completed"] == "1"]
        if fin:
            fct = [float(r["fct_ns"]) / 1000 for r in fin]
            slow = [float(r["slowdown"]) for r in fin]
            out["csv.fct_us_p50." + name] = nearest_rank(fct, 0.50)
            out["csv.fct_us_p99." + name] = nearest_rank(fct, 0.99)
            out["csv.slowdown_p50." + name] = nearest_rank(slow, 0.50)
            out["csv.slowdown_p99." + name] = nearest_rank(slow, 0.99)
    return out


# Ratios of two summary.json members (None when the denominator is 0 or either is absent).
RATIOS = {"derived.ecn_mark_ratio": ("ecn.marked", "ecn.seen")}


def _ratio(summary, path):
    num, den = (lookup(summary, p) for p in RATIOS[path])
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (num, den))
    return num / den if ok and den else None


def metric(summary, csv_metrics, path):
    """One metric of a run: csv.* from the derived values, derived.* from RATIOS, anything else from
    summary.json; None when absent. Booleans stay booleans (criteria compare them with true/false)."""
    if path.startswith("csv."):
        return csv_metrics.get(path)
    if path in RATIOS:
        return _ratio(summary, path)
    v = lookup(summary, path)
    return v if isinstance(v, (int, float)) else None


def stats(values):
    """median, p90 (nearest rank), min and max of the numeric values (booleans count 0/1), or None if none."""
    v = [float(x) for x in values if x is not None]
    if not v:
        return None
    return {"n": len(v), "median": statistics.median(v), "p90": nearest_rank(v, 0.90), "min": min(v), "max": max(v)}

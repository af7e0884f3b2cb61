"""Per-run plots of a rocesim run directory (regress/plot, docs/regress.md "Plots of one run").

figures(run_dir) builds the matplotlib figures from the run's CSV files (columns: docs/outputs.md); each
plotted line carries a label naming what it shows, so that a test can compare its data with the CSV.
"""
import csv
import json
import os
import re
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import metrics as M  # noqa: E402

TOP = 6   # lines per panel: the most congested queues, the busiest ports and flows


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _steps(events, end, initial=0.0):
    """x and y of a step function (drawn steps-post) from (time, value) events: initial from 0, then each
    event's value from its time, the last held to end."""
    xs, ys = [0.0], [initial]
    for t, v in events:
        xs.append(t)
        ys.append(v)
    xs.append(max(end, xs[-1]))
    ys.append(ys[-1])
    return xs, ys


def queue_depth(queues):
    """The TOP queues by peak depth: depth in KiB (depth_bytes / 1024) against time in us."""
    series = {}
    for r in queues:
        k = "%s:%s q%s" % (r["node"], r["port"], r["queue"])
        series.setdefault(k, ([], []))
        series[k][0].append(float(r["time_ns"]) / 1000)
        series[k][1].append(int(r["depth_bytes"]) / 1024)
    top = sorted(series, key=lambda k: (-max(series[k][1]), k))[:TOP]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for k in top:
        ax.plot(*series[k], label=k)
    ax.set(xlabel="time (us)", ylabel="queue depth (KiB)", title="Egress queue depth, %d most congested" % len(top))
    ax.legend(fontsize="small")
    return fig


def ecn_ratio(queues):
    """ECN mark ratio (marked / seen per sample interval) of the TOP queues by marks, against time in us."""
    series, marked = {}, {}
    for r in queues:
        k = "%s:%s q%s" % (r["node"], r["port"], r["queue"])
        if r["ecn_mark_ratio"] == "":
            continue
        series.setdefault(k, ([], []))
        series[k][0].append(float(r["time_ns"]) / 1000)
        series[k][1].append(float(r["ecn_mark_ratio"]))
        marked[k] = max(marked.get(k, 0), int(r["ecn_marked"] or 0))
    top = sorted((k for k in series if marked[k] > 0), key=lambda k: (-marked[k], k))[:TOP]
    if not top:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for k in top:
        ax.plot(*series[k], label=k, marker=".", linestyle="-")
    ax.set(xlabel="time (us)", ylabel="marked / seen", ylim=(-0.02, 1.02), title="ECN mark ratio")
    ax.legend(fontsize="small")
    return fig


RATE_BINS = 50   # bins of the pause-rate panel of pfc.png


def pfc(events, end_ns):
    """Three panels from pfc.csv: the pause rate (below), then step functions of the XOFF state a switch sent
    per (ingress port, priority) (1 from an xoff row to the next xon row) and the paused state of each
    transmitter per (port, priority) (1 from pause_start to pause_end); TOP of each by number of events.
    Time in us."""
    panels = (("xoff", "xon", "XOFF sent (switch ingress, per priority)"),
              ("pause_start", "pause_end", "Transmitter paused (per priority)"))
    by = [{}, {}]
    for r in events:
        for i, (on, off, _) in enumerate(panels):
            if r["event"] in (on, off):
                k = "%s:%s prio %s" % (r["node"], r["port"], r["priority"])
                by[i].setdefault(k, []).append((float(r["time_ns"]) / 1000, 1.0 if r["event"] == on else 0.0))
    if not by[0] and not by[1]:
        return None
    fig, axes = plt.subplots(3, 1, figsize=(9, 8.5), sharex=True)
    # The pause rate: XOFF transitions a switch sent per ms on each ingress port (all priorities), in
    # RATE_BINS equal bins over the run, plotted at each bin's start; the TOP ports by XOFF count.
    ax = axes[0]
    width_ns = max(end_ns, 1.0) / RATE_BINS
    counts = {}
    for r in events:
        if r["event"] == "xoff":
            c = counts.setdefault("%s:%s" % (r["node"], r["port"]), [0] * RATE_BINS)
            c[min(int(float(r["time_ns"]) // width_ns), RATE_BINS - 1)] += 1
    top = sorted(counts, key=lambda k: (-sum(counts[k]), k))[:TOP]
    for k in top:
        ax.plot([i * width_ns / 1000 for i in range(RATE_BINS)], [n / (width_ns / 1e6) for n in counts[k]],
                drawstyle="steps-post", label=k)
    ax.set(ylabel="XOFF per ms", title="Pause rate: XOFF sent per switch ingress port" +
           (", %d busiest" % len(top) if top else ": none"))
    if top:
        ax.legend(fontsize="x-small", loc="upper right")
    for ax, series, (_, _, title) in zip(axes[1:], by, panels):
        top = sorted(series, key=lambda k: (-len(series[k]), k))[:TOP]
        for j, k in enumerate(top):
            xs, ys = _steps(series[k], end_ns / 1000)
            # Offset each line a little so that simultaneous transitions stay visible; the data stay 0/1.
            line, = ax.plot(xs, ys, drawstyle="steps-post", label=k)
            line.set_transform(matplotlib.transforms.offset_copy(ax.transData, fig=fig, y=-1.5 * j,
                                                                  units="points"))
        ax.set(ylabel="state (1 = on)", ylim=(-0.1, 1.1), title=title + (", %d busiest" % len(top) if top else
                                                                         ": none"))
        if top:
            ax.legend(fontsize="x-small", loc="upper right")
    axes[-1].set_xlabel("time (us)")
    return fig


def flow_throughput(series_rows):
    """Per-flow receive throughput (flow_series.csv throughput_bps, in Gbps) of the TOP flows by bytes."""
    series, total = {}, {}
    for r in series_rows:
        k = "flow %s" % r["flow"]
        series.setdefault(k, ([], []))
        series[k][0].append(float(r["time_ns"]) / 1000)
        series[k][1].append(int(r["throughput_bps"]) / 1e9)
        total[k] = total.get(k, 0) + int(r["bytes_received"])
    top = sorted(series, key=lambda k: (-total[k], int(k.split()[1])))[:TOP]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for k in top:
        ax.plot(*series[k], label=k)
    ax.set(xlabel="time (us)", ylabel="throughput (Gbps)", title="Per-flow throughput, %d largest" % len(top))
    ax.legend(fontsize="small")
    return fig


def dcqcn(cc_rows, flows, end_ns):
    """DCQCN reaction-point rate (cc.csv rate_bps, in Gbps) per flow as a step function: the flow's
    configured rate (flows.csv rate_bps) from its start, then each event's rate; TOP flows by events."""
    ev = {}
    for r in cc_rows:
        ev.setdefault(int(r["flow"]), []).append((float(r["time_ns"]) / 1000, int(r["rate_bps"]) / 1e9))
    start = {int(f["flow_id"]): (float(f["start_ns"]) / 1000, int(f["rate_bps"]) / 1e9) for f in flows}
    top = sorted(ev, key=lambda k: (-len(ev[k]), k))[:TOP]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for k in top:
        t0, r0 = start[k]
        xs, ys = [t0] + [t for t, _ in ev[k]], [r0] + [v for _, v in ev[k]]
        xs.append(max(end_ns / 1000, xs[-1]))
        ys.append(ys[-1])
        ax.plot(xs, ys, drawstyle="steps-post", label="flow %d" % k)
    ax.set(xlabel="time (us)", ylabel="rate (Gbps)", title="DCQCN rate, %d flows with the most events" % len(top))
    ax.legend(fontsize="small")
    return fig


def fct_slowdown(flows):
    """CDF of the FCT slowdown of completed flows per size bucket (metrics.BUCKETS): x the sorted slowdowns,
    y = i / n for the i-th of n."""
    by = {}
    for f in flows:
        if f["completed"] == "1":
            by.setdefault(M._bucket(int(f["size_bytes"])), []).append(float(f["slowdown"]))
    if not by:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, _ in M.BUCKETS:
        if name in by:
            v = sorted(by[name])
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], drawstyle="steps-post",
                    label="%s (%d flows)" % (name, len(v)))
    ax.set(xscale="log", xlabel="FCT slowdown (FCT / ideal)", ylabel="fraction of flows",
           title="FCT slowdown by flow size")
    ax.legend(fontsize="small")
    return fig


def figures(run_dir):
    """{file name: figure} for every plot the run has data for, and [(file name, why not)] for the others."""
    figs, skipped = {}, []
    p = lambda n: os.path.join(run_dir, n)  # noqa: E731
    with open(p("summary.json")) as f:
        end_ns = float(json.load(f)["sim_time_ns"])
    flows = _rows(p("flows.csv"))
    if os.path.isfile(p("queues.csv")):
        q = _rows(p("queues.csv"))
        if q:
            figs["queue_depth.png"] = queue_depth(q)
            fig = ecn_ratio(q)
            if fig:
                figs["ecn_mark_ratio.png"] = fig
            else:
                skipped.append(("ecn_mark_ratio.png", "no queue marked a packet"))
        else:
            skipped += [("queue_depth.png", "queues.csv is empty"), ("ecn_mark_ratio.png", "queues.csv is empty")]
    else:
        skipped += [("queue_depth.png", "no queues.csv"), ("ecn_mark_ratio.png", "no queues.csv")]
    fig = pfc(_rows(p("pfc.csv")), end_ns) if os.path.isfile(p("pfc.csv")) else None
    if fig:
        figs["pfc.png"] = fig
    else:
        skipped.append(("pfc.png", "no PFC event"))
    if os.path.isfile(p("flow_series.csv")) and _rows(p("flow_series.csv")):
        figs["flow_throughput.png"] = flow_throughput(_rows(p("flow_series.csv")))
    else:
        skipped.append(("flow_throughput.png", "no flow_series.csv (run with --set stats.flow_series=true)"))
    if os.path.isfile(p("cc.csv")) and _rows(p("cc.csv")):
        figs["dcqcn_rate.png"] = dcqcn(_rows(p("cc.csv")), flows, end_ns)
    else:
        skipped.append(("dcqcn_rate.png", "no cc.csv (DCQCN did not run)"))
    fig = fct_slowdown(flows)
    if fig:
        figs["fct_slowdown.png"] = fig
    else:
        skipped.append(("fct_slowdown.png", "no flow completed"))
    for fig in figs.values():
        fig.tight_layout()
    return figs, skipped


# Sweeps (docs/regress.md, "Sweeps and the knee"): a scenario whose grid has one key.

_UNITS = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3,
          "bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12,
          "ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}


def quantity(text):
    """A swept value as a number in base units (bytes, bps, seconds, or plain), or None if it is not one."""
    m = re.fullmatch(r"\s*(-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2) not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS[m.group(2)]


def knee(xs, ys):
    """Index of the knee of the curve (xs, ys), or None: with x and y scaled to [0, 1] between the first and
    the last point, the interior point farthest from the straight line joining them (the chord); None with
    fewer than 3 points or a flat curve (equal first and last y)."""
    if len(xs) < 3 or ys[0] == ys[-1] or xs[0] == xs[-1]:
        return None
    nx = [(x - xs[0]) / (xs[-1] - xs[0]) for x in xs]
    ny = [(y - ys[0]) / (ys[-1] - ys[0]) for y in ys]
    best = max(range(1, len(xs) - 1), key=lambda i: (abs(ny[i] - nx[i]), -i))
    return best


def sweep(name, key, values, per_metric, chosen=None, with_knee=True):
    """One panel per metric against the swept key: the median over seeds (line), the p10..p90 band (nearest
    rank) and the knee of the median (a red ring). per_metric: {metric: [[run values of point i], ...]} in the
    order of values; chosen: the index of a tuning round's choice (a green star); with_knee False: no knee
    (points of a grid of several keys, whose order is not a scale). Returns (figure, {metric: index of the knee
    or None}); the figure is None when no metric has a value."""
    xs = [quantity(v) for v in values]
    if any(x is None for x in xs):
        xs = list(range(len(values)))   # not numbers: the points in grid order
    ms = [m for m in per_metric if any(per_metric[m])]
    if not ms:   # no run of the sweep gave a value (every run failed): nothing to plot, no knee
        return None, {m: None for m in per_metric}
    cols = 2 if len(ms) > 1 else 1
    rows_ = (len(ms) + cols - 1) // cols
    fig, axes = plt.subplots(rows_, cols, figsize=(6 * cols, 3.4 * rows_), squeeze=False)
    knees = {}
    for ax, m in zip([a for r in axes for a in r], ms):
        pts = [(x, v) for x, v in zip(xs, per_metric[m]) if v]
        px = [x for x, _ in pts]
        med = [statistics.median(v) for _, v in pts]
        lo = [M.nearest_rank(v, 0.10) for _, v in pts]
        hi = [M.nearest_rank(v, 0.90) for _, v in pts]
        ax.fill_between(px, lo, hi, alpha=0.25, label="p10..p90")
        ax.plot(px, med, marker="o", label="median")
        k = knee(px, med) if with_knee else None
        knees[m] = None if k is None else xs.index(px[k])
        if k is not None:
            ax.plot([px[k]], [med[k]], "o", markersize=13, markerfacecolor="none", markeredgecolor="red",
                    label="knee: %s" % values[xs.index(px[k])])
        if chosen is not None and per_metric[m][chosen]:
            ax.plot([xs[chosen]], [statistics.median(per_metric[m][chosen])], "*", markersize=14, color="green",
                    label="chosen: %s" % values[chosen])
        # Rotated labels end at their tick (ha="right", anchored there): centred ones read as the neighbour's.
        ax.set_xticks(xs, values, rotation=30, ha="right", rotation_mode="anchor", fontsize="small")
        ax.set(xlabel=key, title=m)
        ax.legend(fontsize="x-small")
    for ax in [a for r in axes for a in r][len(ms):]:
        ax.set_visible(False)
    fig.suptitle("%s: sweep of %s" % (name, key))
    fig.tight_layout()
    return fig, knees

#!/usr/bin/env python3
"""Plots of clustersim results (PNG, with the CSV behind each).

The simulator writes the data; this draws it with matplotlib (Debian: python3-matplotlib).
`clustersim run ... --out DIR --plot` and `clustersim compare ... --plot DIR` run it with an
interpreter that has matplotlib; it also runs on its own:

  plot.py breakdown RESULTS.json|BREAKDOWN.csv... -o breakdown.png
      Step-time breakdown per design and job: stacked bars of compute, TP, CP, EP, PP, DP,
      pipeline bubble, optimizer time and compute slowed by overlapped communication (the
      critical pipeline stage's), with the step time.
      Inputs: result documents (`clustersim run --out DIR` writes DIR/results.json; the design
      is the scenario's name) or a CSV with columns design,job,step_time_s,compute_s,tp_s,
      cp_s,ep_s,pp_s,dp_s,bubble_s,optimizer_s[,contention_s]. Writes that CSV beside the PNG.
  plot.py run DIR [--nodes-per-rack N]
      Every plot of a `clustersim run --out DIR` folder: DIR/breakdown.png (with the jobs'
      steps), DIR/timeline.png and DIR/gpu_health.png (with failures), as below.
  plot.py compare COMPARE.csv [--breakdown BREAKDOWN.csv] -o compare.png
      Designs side by side, one bar chart per figure (fabric capex, power, bisection, step
      time, MFU, ETTR, time to train, cost, ...), the best of each highlighted.
      Input: `clustersim compare A.yaml B.yaml ... --format csv`. With --breakdown, also the
      designs' step-time breakdown, into breakdown.png beside compare.png.
  plot.py timeline FAILURES.csv [--results RESULTS.json] -o timeline.png
      The failure timeline of a run (replication 0): each failure by cause, each job's
      interruptions and the time it was down, retired nodes, and the cumulative counts.
      Input: DIR/failures.csv of `clustersim run --out DIR` (time_s,time_d,kind,cause,job,node,gpu,element).
  plot.py heatmap GPU_FAILURES.csv [--results RESULTS.json] [--nodes-per-rack N] -o health.png
      GPU health heat map, one pixel per GPU: failures per GPU over the run (replication 0).
      The GPUs of a node are a row segment, a rack's nodes are stacked in node order, racks
      are separated by a gap and laid out left to right, top to bottom. Racks: --nodes-per-rack,
      else cost.nodes_per_rack of RESULTS.json (default: results.json beside the CSV), else
      none are drawn. Input: DIR/gpu_failures.csv (gpu,node,local,failures).
  plot.py collective COLLECTIVE.csv... -o collective.png
      nccl-tests-style curves: bus bandwidth (GB/s) and time against the message size, both
      on log axes, one series per CSV (named by its file, or by its op, GPUs and model when
      there is one); each point marked by the algorithm that ran (auto's choice per size).
      Input: `clustersim collective ... --format csv` (op,algo,model,gpus,size_bytes,time_s,
      algbw_GBps,busbw_GBps,...); `clustersim collective ... --plot DIR` writes both.
  plot.py sweep SWEEP.csv -o sweep.png
      A sweep's figures against its first parameter: one panel per figure that varies (step
      time, MFU, time to train, total cost, cost per million tokens, ETTR, goodput, capex, IT
      power), one line per combination of the other parameters (at most 8; past that, points
      only). The parameters are the columns between 'point' and 'status'; error rows are left
      out (counted in the title). Input: `clustersim sweep --out DIR` (DIR/sweep.csv);
      `clustersim sweep ... --out DIR --plot` draws DIR/sweep.png.
  plot.py validation VALIDATION.json [--cases CASES.yaml] [--fail-above PERCENT] -o validation.png
      The simulator against published measurements: each case's error (predicted / published
      - 1) as a bar, one panel per kind of case: training throughput (the 10% target shaded,
      the median marked; cases whose job does not fit in HBM flagged), failure counts (each
      with its Poisson band, 2 sqrt(published)), collective bus bandwidth (cases fitted on the
      same measurement, in sample, hatched, their median without them); --fail-above draws
      validate's gate and whether it passed. Input: `clustersim validate --format json`;
      `clustersim validate --plot DIR` writes both.
  plot.py pareto TABLE.csv --x COLUMN --y COLUMN [--label COLUMN]... [--label-format TEXT]
                 [--x-mark VALUE] [--y-mark VALUE] [--excluded COLUMN] -o pareto.png
      Every row as a point (x against y) and the Pareto front: the rows no other row beats on
      both (lower is better on each axis unless --x-better/--y-better higher). Any CSV with a
      header row and named numeric columns: `clustersim sweep` (sweep.csv), `clustersim plan`,
      your own. Rows with a non-numeric x or y, or a 'status' column other than 'ok', are
      skipped. Defaults: --x time_to_train_s --y total_cost_usd. --x-mark and --y-mark draw a
      line at that x or y (plan's deadline, its budget); --excluded COLUMN draws the rows where
      it is 'false' hollow and on no front (plan's designs over its capex budget);
      --label-format labels the front's points from their columns ('{nodes} nodes, {topology}'). Writes the front beside the PNG (NAME_front.csv);
      `clustersim plan ... --plot DIR` draws DIR/pareto.png from its plan.csv.

Exit status 2, with a message, on bad input (a missing file or column) or when matplotlib is
missing.
"""
import argparse
import csv
import json
import math
import os
import sys

COMPONENTS = [  # key in the result document, label, colour
    ("compute_s", "compute", "#4C72B0"),
    ("tp_s", "tensor-parallel comm.", "#DD8452"),
    ("cp_s", "context-parallel comm.", "#937860"),
    ("ep_s", "expert-parallel comm.", "#DA8BC3"),
    ("pp_s", "pipeline comm.", "#8172B3"),
    ("dp_s", "data-parallel comm.", "#C44E52"),
    ("bubble_s", "pipeline bubble", "#BBBBBB"),
    ("optimizer_s", "optimizer", "#55A868"),
    ("contention_s", "compute slowed by overlapped comm.", "#8DA0CB"),
]

UNIT_SUFFIXES = [  # column-name suffix, unit shown
    ("_usd", "USD"), ("_w", "W"), ("_bps", "B/s"), ("_bytes", "B"), ("_kwh", "kWh"), ("_s", "s"),
]


class InputError(Exception):
    pass


def plt_module():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        raise InputError("matplotlib is not installed for this interpreter "
                         "(Debian: apt-get install python3-matplotlib)")


def read_csv(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except (csv.Error, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a CSV table: {e}")
    # A row with more or fewer fields than the header (a JSON file, a cut line) is not a table:
    # DictReader files the extra fields under None and the missing ones as None.
    for i, r in enumerate(rows):
        if None in r or None in r.values():
            fields = len(reader.fieldnames or [])
            raise InputError(f"{path}: row {i + 2} does not have the header's {fields} fields: not a CSV table "
                             f"(plot the .csv a command wrote, e.g. plan.csv)")
    return rows


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except ValueError as e:
        raise InputError(f"{path}: not JSON: {e}")


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def write_csv(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)


def si(v, unit, digits=3):
    """Three significant digits (or `digits`) with an SI prefix: 1.17 MUSD, 3.38 s, 50.5%."""
    if unit == "fraction":
        return f"{100 * v:.1f}%"
    if unit == "count":
        return f"{v:,.0f}"
    if unit == "s" and abs(v) >= 86400:
        return f"{v / 86400:.{digits}g} d"
    if unit == "s" and abs(v) >= 3600:
        return f"{v / 3600:.{digits}g} h"
    # Below 1, a prefix only for seconds (ms, µs): "73.4 mUSD" beside "3.33 MUSD" read as
    # millions; 0.0734 USD does not.
    small = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n")) if unit == "s" else ()
    # Money takes the prefixes the tables print (sim/units.cpp): billions are BUSD, not GUSD.
    large = ((1e9, "B"), (1e6, "M"), (1e3, "k"), (1, "")) if unit.endswith("USD") else \
        ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""))
    if unit.endswith("USD") and abs(v) / 1e9 >= 10 ** digits - 0.5:
        return f"{v / 1e9:.0f} BUSD"  # whole billions past the largest prefix, as the tables
    for scale, prefix in large + small:
        if abs(v) >= scale * (1 - 1e-9):  # a tick at 1e-9 computed as 9.999e-10 read "1e-09 s"
            return f"{v / scale:.{digits}g} {prefix}{unit}"
    return f"{v:.{digits}g} {unit}"


def save(fig, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    except BaseException:
        # Nothing half-written: the temporary file goes with the failure.
        if os.path.isfile(tmp):
            os.remove(tmp)
        raise


def sibling(path, suffix):
    stem, _ = os.path.splitext(path)
    return stem + suffix


# --- breakdown -------------------------------------------------------------------------

def breakdown_rows(inputs):
    rows = []  # design, job, step_time_s, components...
    for path in inputs:
        if path.endswith(".csv"):
            for r in read_csv(path):
                # contention_s is newer than the other columns: a CSV without it reads as 0.
                missing = [k for k in ["design", "job", "step_time_s"] + [c[0] for c in COMPONENTS]
                           if k not in r and k != "contention_s"]
                if missing:
                    raise InputError(f"{path}: no column {', '.join(missing)} (see plot.py --help)")
                rows.append([r["design"], r["job"], number(r["step_time_s"])] + [number(r.get(c[0])) or 0.0
                                                                                 for c in COMPONENTS])
            continue
        doc = read_json(path)
        design = (doc.get("scenario") or {}).get("name") or os.path.splitext(os.path.basename(
            doc.get("scenario_file") or path))[0]
        for job in doc.get("jobs") or []:
            b = job.get("breakdown")
            if not b:
                continue
            rows.append([design, job.get("name", "?"), job.get("step_time_s")] + [b.get(c[0], 0.0) for c in COMPONENTS])
    return rows


def cmd_breakdown(args):
    rows = breakdown_rows(args.inputs)
    if not rows:
        raise InputError("no job steps in " + ", ".join(args.inputs) + ": the scenarios have no workload jobs")
    plt = plt_module()
    step_max = max(max(r[2] or 0.0, sum(r[3:])) for r in rows)
    scale, unit = (1e-3, "ms") if step_max < 1.0 else (1.0, "s")
    used = [i for i in range(len(COMPONENTS)) if any(r[3 + i] > 0 for r in rows)]
    designs = {r[0] for r in rows}
    labels = [f"{r[0]} / {r[1]}" if len(designs) > 1 and len({x[1] for x in rows}) > 1 else
              (r[0] if len(designs) > 1 else r[1]) for r in rows]
    height = 1.9 + 0.5 * len(rows)
    fig, ax = plt.subplots(figsize=(9, height))
    ys = list(range(len(rows)))[::-1]
    for i in used:
        key, name, colour = COMPONENTS[i]
        left = [sum(r[3 + j] for j in used if j < i) / scale for r in rows]
        ax.barh(ys, [r[3 + i] / scale for r in rows], left=left, color=colour, label=name, height=0.6,
                edgecolor="white", linewidth=0.5)
    for y, r in zip(ys, rows):
        if r[2] is not None:
            ax.plot([r[2] / scale] * 2, [y - 0.38, y + 0.38], color="black", lw=1.5)
            ax.text(max(r[2], sum(r[3:])) / scale, y, f"  step {si(r[2], 's')}", va="center", fontsize=8)
    ax.plot([], [], color="black", lw=1.5, label="step time")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=9)
    ax.set_xlabel(f"time per training step ({unit})")
    ax.set_xlim(0, step_max / scale * 1.22)
    ax.grid(True, axis="x", alpha=0.3)
    title = "Step-time breakdown" + (f" of {rows[0][0]}" if len(designs) == 1 else " per design")
    ax.set_title(f"{title}: the critical pipeline stage's time by activity", fontsize=10)
    handles, names = ax.get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=min(5, len(handles)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.55 / height, 1, 1))
    save(fig, args.output)
    plt.close(fig)
    if not all(p.endswith(".csv") for p in args.inputs):
        write_csv(sibling(args.output, ".csv"), ["design", "job", "step_time_s"] + [c[0] for c in COMPONENTS], rows)


# --- compare ---------------------------------------------------------------------------

COMPARE_NAMES = {  # compare's keys (tools/clustersim/compare.cpp) as people read them
    "gpus": "GPUs", "mfu": "MFU", "ettr": "ETTR", "tokens_per_s": "throughput", "it_power_w": "peak IT power",
    "usd_per_gpu_hour": "cost per GPU-hour", "usd_per_million_tokens": "cost per million trained tokens",
    "capex_usd": "capex", "total_cost_usd": "total cost of the run", "bisection_bandwidth_Bps": "bisection bandwidth",
    "memory_per_gpu_bytes": "memory per GPU",
    # As the table says them (they read "step time min", "lost gpu hours").
    "step_time_min_s": "step time, fastest ECMP seed", "step_time_max_s": "step time, slowest ECMP seed",
    "lost_gpu_hours": "lost GPU-hours", "checkpoint_gpu_hours": "GPU-hours blocked writing checkpoints",
}


def metric_name(key, unit):
    if key in COMPARE_NAMES:
        return COMPARE_NAMES[key]
    for suffix, _ in UNIT_SUFFIXES:
        if key.lower().endswith(suffix) and not key.lower().endswith("_per_s"):  # a rate keeps its "per s"
            key = key[: -len(suffix)]
            break
    return key.replace("_", " ")


def compare_panels(rows, designs):
    """The rows of a compare CSV drawn as panels, and their error bars: {metric: (kind,
    below, above)}, per design the length below and above its bar (None: none). A figure's
    95% half-widths over replications follow it as KEY_ci95 (kind "ci95"). With --ecmp-seeds
    the step time is the median draw's and its fastest and slowest draws follow as
    step_time_min_s and step_time_max_s: a range bar on the step time's panel (kind
    "range"), not panels of their own."""
    by_name = {r["metric"]: r for r in rows}
    bars = {}
    for r in rows:
        if r["metric"].endswith("_ci95") and r["metric"][: -len("_ci95")] in by_name:
            half = [number(r[d]) for d in designs]
            bars[r["metric"][: -len("_ci95")]] = ("ci95", half, list(half))
    hidden = {"gpus", "ecmp_seed"}  # a seed is no figure to draw
    if {"step_time_s", "step_time_min_s", "step_time_max_s"} <= set(by_name):
        hidden |= {"step_time_min_s", "step_time_max_s"}
        below, above = [], []
        for d in designs:
            v, lo, hi = (number(by_name[k][d]) for k in ("step_time_s", "step_time_min_s", "step_time_max_s"))
            below.append(None if v is None or lo is None else max(0.0, v - lo))
            above.append(None if v is None or hi is None else max(0.0, hi - v))
        bars["step_time_s"] = ("range", below, above)
    panels = [r for r in rows if r["metric"] not in hidden and not r["metric"].endswith("_ci95")
              and any(number(r[d]) is not None for d in designs)]
    return panels, bars


def cmd_compare(args):
    rows = read_csv(args.input)
    if not rows or not {"metric", "unit", "better", "best"} <= set(rows[0]):
        raise InputError(f"{args.input}: expected the CSV of `clustersim compare --format csv` "
                         "(metric,unit,better,<designs>...,best)")
    with open(args.input, newline="") as f:
        header = next(csv.reader(f))
    designs = header[3:-1]
    panels, bars = compare_panels(rows, designs)
    if not panels:
        raise InputError(f"{args.input}: no figures to plot")
    plt = plt_module()
    cols = 3
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 0.6 + (0.75 + 0.32 * len(designs)) * nrows),
                             squeeze=False)
    for ax, r in zip(axes.flat, panels):
        best = set(filter(None, r["best"].split(";")))
        vals = [number(r[d]) for d in designs]
        ys = list(range(len(designs)))[::-1]
        colours = ["#55A868" if d in best else "#8DA0CB" for d in designs]
        kind, below, above = bars.get(r["metric"], (None, [None] * len(designs), [None] * len(designs)))
        spread = kind == "range"
        ax.barh(ys, [v or 0.0 for v in vals], color=colours, height=0.65,
                xerr=[[h or 0.0 for h in below], [h or 0.0 for h in above]]
                if any(h is not None for h in above) else None,
                error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#444444"})
        top = max(((v or 0.0) + (h or 0.0) for v, h in zip(vals, above)), default=0.0)
        for y, v, lo_h, hi_h, d in zip(ys, vals, below, above, designs):
            # None: the design has no such figure (a torus hashes no route: no ECMP seed).
            text = "-" if v is None else si(v, r["unit"])
            if v is not None and hi_h is not None:
                if spread:
                    text += f" ({si(v - lo_h, r['unit'])} to {si(v + hi_h, r['unit'])})"
                else:
                    text += f" ± {si(hi_h, r['unit'])}"
            if d in best and (v or 0.0) == 0.0:
                text += " (best)"  # a bar of no length shows no colour
            ax.text((v or 0.0) + (hi_h or 0.0) + 0.02 * (top or 1.0), y, text, va="center", fontsize=7.5)
        ax.set_xlim(0, (top or 1.0) * 1.45)
        ax.set_yticks(ys)
        ax.set_yticklabels(designs, fontsize=8)
        ax.set_xticks([])
        better = {"lower": " (lower is better)", "higher": " (higher is better)"}.get(r["better"], "")
        # Seconds are drawn as seconds, hours or days, each bar with its unit: a title "(s)" read
        # wrong over "71.7 d".
        unit = {"fraction": "%", "count": "", "s": ""}.get(r["unit"], r["unit"])
        name = metric_name(r["metric"], r["unit"]) + (" (median ECMP seed)" if spread else "")
        ax.set_title(f"{name}{f' ({unit})' if unit else ''}{better}", fontsize=8.5)
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    # A long list of designs (a sweep block's points: "scheduler.spare_nodes=0, ...") wraps, and
    # the panels start below it (it ran off the figure's edge, over the first row's titles).
    import textwrap
    kinds = {kind for kind, _, _ in bars.values()}
    said = (["bars: 95% intervals over replications"] if "ci95" in kinds else []) + \
        (["step time's bars: its fastest to slowest ECMP seed"] if "range" in kinds else [])
    title = textwrap.wrap(f"Designs compared: {', '.join(designs)} (green: the best of each figure"
                          f"{''.join('; ' + b for b in said)})", width=120)
    fig.suptitle("\n".join(title), fontsize=10)
    title_h = 0.1 + 0.2 * len(title)  # inches, added to the figure rather than taken from the panels
    fig.set_figheight(fig.get_figheight() + title_h)
    fig.tight_layout(rect=(0, 0, 1, 1 - title_h / fig.get_figheight()))
    save(fig, args.output)
    plt.close(fig)
    if args.breakdown:
        cmd_breakdown(argparse.Namespace(inputs=[args.breakdown],
                                         output=os.path.join(os.path.dirname(args.output) or ".", "breakdown.png")))


# --- timeline --------------------------------------------------------------------------

def natural_key(text):
    """Sorts names with numbers in them by the numbers' values: hp-2 before hp-10."""
    import re
    return [(0, int(part), "") if part.isdecimal() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def cmd_timeline(args):
    rows = read_csv(args.input)
    need = {"time_s", "kind", "cause", "job", "node", "gpu"}
    if rows and not need <= set(rows[0]):
        raise InputError(f"{args.input}: expected the columns {','.join(sorted(need))} "
                         "(clustersim run --out DIR writes DIR/failures.csv)")
    plt = plt_module()
    day = 86400.0
    events = [(float(r["time_s"]) / day, r) for r in rows if number(r["time_s"]) is not None]
    failures = [(t, r) for t, r in events if r["kind"] == "failure"]
    horizon = max([t for t, _ in events] + [1e-9])
    if args.results or os.path.exists(os.path.join(os.path.dirname(args.input) or ".", "results.json")):
        doc = read_json(args.results or os.path.join(os.path.dirname(args.input) or ".", "results.json"))
        horizon = max(horizon, (doc.get("scenario", {}).get("simulation", {}).get("horizon_s") or 0) / day)
    causes = sorted({r["cause"] for _, r in failures}, key=lambda c: -sum(1 for _, r in failures if r["cause"] == c))
    jobs = sorted({r["job"] for _, r in events if r["job"] and r["kind"] in ("interruption", "restart", "start")},
                  key=natural_key)  # hp-2 before hp-10
    lanes = [f"job {j}" for j in jobs] + (["node retired"] if any(r["kind"] == "retired" for _, r in events) else []) \
        + causes
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 2.2 + 0.28 * len(lanes) + 2.2), sharex=True,
                                      gridspec_kw={"height_ratios": [max(2.0, 0.28 * len(lanes)), 2.0]})
    y_of = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    cmap = plt.get_cmap("tab20")
    # A failure interrupted a job when an interruption of the same cause has its time.
    interrupting = {(r["time_s"], r["cause"]) for _, r in events if r["kind"] == "interruption"}
    for i, c in enumerate(causes):
        pts = [(t, r) for t, r in failures if r["cause"] == c]
        hit = [t for t, r in pts if (r["time_s"], c) in interrupting]
        idle = [t for t, r in pts if (r["time_s"], c) not in interrupting]
        top.plot(hit, [y_of[c]] * len(hit), "o", ms=3.5, color=cmap(i % 20), label=None)
        top.plot(idle, [y_of[c]] * len(idle), "o", ms=3.5, mfc="none", color=cmap(i % 20))
    for j in jobs:
        y = y_of[f"job {j}"]
        down, spans, ticks, finished = None, [], [], []
        for t, r in events:
            if r["job"] != j:
                continue
            if r["kind"] == "interruption":
                down = t if down is None else down
                ticks.append(t)
            elif r["kind"] == "restart" and down is not None:
                spans.append((down, t - down))
                down = None
            elif r["kind"] == "finished":
                finished.append(t)
        if down is not None:
            spans.append((down, horizon - down))
        top.vlines(ticks, y - 0.35, y + 0.35, color="#C44E52", lw=0.8)
        top.broken_barh(spans, (y - 0.3, 0.6), color="#C44E52", alpha=0.35, lw=0)
        if finished:
            top.plot(finished, [y] * len(finished), marker="|", ms=14, ls="none", color="black")
    retired = [t for t, r in events if r["kind"] == "retired"]
    if retired:
        top.plot(retired, [y_of["node retired"]] * len(retired), "x", ms=5, color="black")
    top.set_yticks(list(y_of.values()))
    top.set_yticklabels(list(y_of.keys()), fontsize=8)
    top.set_ylim(-0.7, len(lanes) - 0.3)
    top.grid(True, axis="x", alpha=0.3)
    top.plot([], [], "o", ms=4, color="0.3", label="failure that interrupted a job")
    top.plot([], [], "o", ms=4, mfc="none", color="0.3", label="failure that interrupted no running job")
    top.fill_between([], [], [], color="#C44E52", alpha=0.35, label="job interrupted until restart")
    top.legend(loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False,
               borderaxespad=-2.2)
    n_int = sum(1 for _, r in events if r["kind"] == "interruption")
    top.set_title(f"Failure timeline (replication 0): {len(failures)} failures, {n_int} job interruptions "
                  f"over {horizon:.3g} days\n\n", fontsize=10)
    for kind, colour, label in (("failure", "#4C72B0", "failures"), ("interruption", "#C44E52", "interruptions")):
        ts = [t for t, r in events if r["kind"] == kind]
        bottom.step([0.0] + ts + [horizon], [0] + list(range(1, len(ts) + 1)) + [len(ts)], where="post",
                    color=colour, label=label)
    bottom.set_ylabel("cumulative count")
    bottom.set_xlabel("simulated time (days)")
    bottom.set_xlim(0, horizon)
    bottom.set_ylim(bottom=0)
    bottom.grid(True, alpha=0.3)
    bottom.legend(loc="upper left", fontsize=8, frameon=False)
    fig.tight_layout()
    save(fig, args.output)
    plt.close(fig)


# --- heat map --------------------------------------------------------------------------

def heatmap_grid(cells, nodes, per_node, per_rack, gaps, aspect=1.6):
    """The heat map's pixels: one per GPU, NaN for the gaps. cells: (node, local GPU, value).
    A rack is a block of per_rack rows (its nodes, in order) x per_node columns (a node's GPUs),
    followed by a one-pixel gap when `gaps`; blocks go left to right, then top to bottom, about
    `aspect` times wider than tall. Returns (grid, racks, racks across)."""
    import numpy as np
    racks = math.ceil(nodes / per_rack)
    bw, bh = per_node + (1 if gaps else 0), per_rack + (1 if gaps else 0)
    across = max(1, min(racks, round(math.sqrt(racks * bh / bw * aspect))))
    down = math.ceil(racks / across)
    grid = np.full((down * bh, across * bw), np.nan)
    for node, local, value in cells:
        rack, slot = divmod(node, per_rack)
        by, bx = divmod(rack, across)
        grid[by * bh + slot, bx * bw + local] = value
    if gaps:  # no trailing gap after the last row and column of racks
        grid = grid[:-1, :-1]
    return grid, racks, across


def cmd_heatmap(args):
    rows = read_csv(args.input)
    if rows and not {"gpu", "node", "local", "failures"} <= set(rows[0]):
        raise InputError(f"{args.input}: expected the columns gpu,node,local,failures "
                         "(clustersim run --out DIR writes DIR/gpu_failures.csv)")
    if not rows:
        raise InputError(f"{args.input}: no GPUs")
    results = args.results or os.path.join(os.path.dirname(args.input) or ".", "results.json")
    doc = read_json(results) if (args.results or os.path.exists(results)) else {}
    per_rack = args.nodes_per_rack or (doc.get("cost") or {}).get("nodes_per_rack")
    cluster_nodes = (doc.get("inventory") or {}).get("nodes")
    nodes = max(int(r["node"]) for r in rows) + 1
    per_node = max(int(r["local"]) for r in rows) + 1
    racks_known = bool(per_rack)
    if not racks_known:
        # No racks: nodes stacked in columns of about sqrt(nodes) rows, without gaps.
        per_rack = max(1, round(math.sqrt(nodes * per_node / 1.6)))
    per_rack = int(per_rack)
    import numpy as np
    plt = plt_module()
    from matplotlib.colors import BoundaryNorm, ListedColormap
    grid, racks, _ = heatmap_grid([(int(r["node"]), int(r["local"]), float(r["failures"])) for r in rows], nodes,
                                  per_node, per_rack, racks_known and per_rack < nodes)
    counts = grid[~np.isnan(grid)]
    top = int(max(1, counts.max()))
    levels = list(range(0, top + 2))
    base = plt.get_cmap("YlOrRd")
    colours = ["#E6E6E6"] + [base(0.35 + 0.65 * i / max(1, top - 1)) for i in range(top)]
    cmap = ListedColormap(colours)
    cmap.set_bad("white")
    norm = BoundaryNorm([l - 0.5 for l in levels], cmap.N)
    k = max(1, min(12, 1500 // grid.shape[1], 1100 // grid.shape[0]))  # screen pixels per GPU
    fig_w = grid.shape[1] * k / 110 + 2.2
    fig_h = grid.shape[0] * k / 110 + 1.6
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, interpolation="nearest", aspect="equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    failed = int((counts > 0).sum())
    layout = (f"{racks:,} racks of {per_rack} nodes: a rack's nodes top to bottom, racks left to right, then down"
              if racks_known else f"racks unknown: nodes top to bottom in columns of {per_rack}")
    spares = (f" (nodes from {cluster_nodes:,} on, the last {nodes - cluster_nodes}, are spares and replacements)"
              if cluster_nodes and cluster_nodes < nodes else "")
    ax.set_title(f"GPU health: failures per GPU over the run (replication 0), one pixel per GPU\n"
                 f"{len(rows):,} GPUs = {nodes:,} nodes × {per_node}, a node's GPUs in one row segment\n"
                 f"{layout}{spares}\n"
                 f"{failed:,} GPUs failed at least once; {int(counts.sum()):,} failures attributed to a GPU",
                 fontsize=8.5)
    ticks = levels[:-1] if top <= 10 else [0, 1] + list(range(2, top + 1, max(1, top // 8)))
    cb = fig.colorbar(im, ax=ax, fraction=0.025, pad=0.015, shrink=0.6, ticks=ticks)
    cb.set_label("failures of the GPU", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    fig.tight_layout()
    save(fig, args.output)
    plt.close(fig)


# --- pareto ----------------------------------------------------------------------------

def column_unit(column):
    # A rate: "goodput_tokens_per_s" is in tokens/s (its "_s" is not seconds).
    if column.lower().endswith("_per_s"):
        words = column[: -len("_per_s")].split("_")
        return f"{words[-1]}/s" if words[-1] else "1/s"
    for suffix, unit in UNIT_SUFFIXES:
        if column.lower().endswith(suffix):
            return unit
    return None


def axis_label(column):
    unit = column_unit(column)
    return f"{column} ({unit})" if unit else column


def pareto_front(points, x_lower, y_lower):
    """Indices of the points no other point beats or equals on both axes and beats on one."""
    sx = 1 if x_lower else -1
    sy = 1 if y_lower else -1
    order = sorted(range(len(points)), key=lambda i: (sx * points[i][0], sy * points[i][1]))
    front, best_y = [], math.inf
    for i in order:
        y = sy * points[i][1]
        # Equal on both axes to the last point kept: not beaten, so on the front too.
        if y < best_y or (front and points[i] == points[front[-1]]):
            front.append(i)
            best_y = min(best_y, y)
    return front


def front_labels(points, texts, most=4):
    """The labels of the front's points, one per distinct point, in order: [(point, [text,
    ...])], with the texts of the points tied there (past `most` of them, the first most - 1
    and "+N more")."""
    groups = {}
    for p, t in zip(points, texts):
        groups.setdefault(tuple(p), []).append(t)
    return [(p, ts if len(ts) <= most else ts[: most - 1] + [f"+{len(ts) - most + 1} more"])
            for p, ts in groups.items()]


def cmd_pareto(args):
    rows = read_csv(args.input)
    if not rows:
        raise InputError(f"{args.input}: no rows")
    for col in [args.x, args.y] + (args.label or []):
        if col not in rows[0]:
            raise InputError(f"{args.input}: no column '{col}'; the columns are {', '.join(rows[0].keys())}")
    kept = [r for r in rows if number(r[args.x]) is not None and number(r[args.y]) is not None
            and r.get("status", "ok") == "ok"]
    if not kept:
        raise InputError(f"{args.input}: no row has numbers in both '{args.x}' and '{args.y}'")
    raw = [(number(r[args.x]), number(r[args.y])) for r in kept]
    # --excluded COLUMN: rows where it is "false" are no candidates (plan's designs over its
    # capex budget): drawn hollow, and on no front.
    if args.excluded and args.excluded not in rows[0]:
        raise InputError(f"{args.input}: no column '{args.excluded}'; the columns are {', '.join(rows[0].keys())}")
    out = [bool(args.excluded) and r[args.excluded] == "false" for r in kept]
    # plan.csv marks its own front (within --capex-budget, exact ties kept): on the plan's axes
    # that is the front to draw; computed here from all the points, it put on the front designs
    # the budget excluded.
    plans_front = ({"pareto", "within_budget", "meets_deadline"} <= set(rows[0])
                   and all(r["pareto"] in ("true", "false") for r in kept)
                   and {args.x, args.y} == {"time_to_train_s", "total_cost_usd"}
                   and args.x_better == "lower" and args.y_better == "lower")
    if plans_front:
        front = sorted((i for i, r in enumerate(kept) if r["pareto"] == "true"), key=lambda i: (raw[i][0], raw[i][1]))
    else:
        inside = [i for i in range(len(raw)) if not out[i]]
        front = [inside[j] for j in pareto_front([raw[i] for i in inside], args.x_better == "lower",
                                                 args.y_better == "lower")]
    # Seconds spanning days are drawn in days (ticks at whole days, not at 2e6 s), spanning
    # hours in hours (the ticks read "5.56 h" every 20,000 s under a label in seconds).
    def time_scale(i, c):
        if column_unit(c) != "s":
            return 1.0
        top = max(abs(p[i]) for p in raw)
        return 86400.0 if top > 2 * 86400 else 3600.0 if top > 2 * 3600 else 1.0
    scales = [time_scale(i, c) for i, c in enumerate((args.x, args.y))]
    pts = [(x / scales[0], y / scales[1]) for x, y in raw]
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(8.5, 6))
    ins = [p for p, o in zip(pts, out) if not o]
    ax.plot([p[0] for p in ins], [p[1] for p in ins], "o", ms=5, color="#8DA0CB", alpha=0.8,
            label=f"{'the' if len(ins) == len(pts) else 'the other'} {len(ins)} design{'s' if len(ins) != 1 else ''}")
    if any(out):
        ax.plot([p[0] for p, o in zip(pts, out) if o], [p[1] for p, o in zip(pts, out) if o], "o", ms=5,
                markerfacecolor="none", color="#999999",
                label=f"{sum(out)} {args.excluded_label or 'excluded (' + args.excluded + ' false)'}")
    fx = [pts[i][0] for i in front]
    fy = [pts[i][1] for i in front]
    ax.plot(fx, fy, "-o", ms=6, color="#C44E52",
            label=f"the plan's Pareto front ({len(front)}; its pareto column)" if plans_front
            else f"Pareto front ({len(front)})")
    if args.label or args.label_format:
        def cell(v):  # "32" as 32, "4.5e6" as 4500000.0: a format may ask {total_cost_usd:.3g}
            for kind in (int, float):
                try:
                    return kind(v)
                except ValueError:
                    pass
            return v

        def text(r):
            if args.label_format:
                try:
                    return args.label_format.format(**{k: cell(v) for k, v in r.items()})
                except (KeyError, IndexError, ValueError, AttributeError, TypeError) as e:
                    raise InputError(f"--label-format '{args.label_format}': {e!r} (the columns are "
                                     f"{', '.join(r.keys())})")
            return " ".join(r[c] for c in args.label)
        # Designs tied on both axes (the plan keeps exact ties on its front) share one point:
        # one label listing them, not labels printed over one another.
        for at, texts in front_labels([pts[i] for i in front], [text(kept[i]) for i in front]):
            ax.annotate("\n".join(texts), at, textcoords="offset points", xytext=(6, 4), fontsize=7.5, va="bottom")
    for axis, vals, forced in (("x", [p[0] for p in pts], args.logx), ("y", [p[1] for p in pts], args.logy)):
        positive = [v for v in vals if v > 0]
        if forced or (len(positive) == len(vals) and max(positive) / min(positive) > 100):
            (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    from matplotlib.ticker import FuncFormatter
    labels = []
    for column, axis, scale in ((args.x, ax.xaxis, scales[0]), (args.y, ax.yaxis, scales[1])):
        unit = column_unit(column)
        if scale != 1.0:
            # "time_to_train (days)": the column's "_s" said seconds beside "(days)".
            name = column[: -len("_s")] if column.endswith("_s") else column
            labels.append(f"{name} ({'days' if scale == 86400.0 else 'hours'})")
        elif unit:  # ticks in the column's unit with a prefix: 45 MUSD, 41.25 MUSD (not 41.2)
            axis.set_major_formatter(FuncFormatter(lambda v, _pos, u=unit: si(v, u, digits=4) if v else "0"))
            labels.append(axis_label(column))
        else:
            labels.append(column)
    if args.x_mark is not None:
        # A bound on x (the plan's deadline): a dashed line, in the axis' unit.
        ax.axvline(args.x_mark / scales[0], color="#555555", ls="--", lw=1,
                   label=args.x_mark_label or f"{args.x} = {si(args.x_mark, column_unit(args.x) or '')}")
    if args.y_mark is not None:
        ax.axhline(args.y_mark / scales[1], color="#555555", ls=":", lw=1,
                   label=args.y_mark_label or f"{args.y} = {si(args.y_mark, column_unit(args.y) or '')}")
    ax.set_xlabel(labels[0] + f" — {args.x_better} is better")
    ax.set_ylabel(labels[1] + f" — {args.y_better} is better")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8, frameon=False)
    rule = ("the plan's front: among the designs within its capex budget, when one was given, none better on both"
            if plans_front else "a design is on the front when no other is better on both")
    import textwrap
    subtitle = textwrap.wrap(f"({os.path.basename(args.input)}; {rule})", width=95)  # it ran off the edge
    ax.set_title("\n".join([f"Pareto front of {args.y} against {args.x}"] + subtitle), fontsize=10)
    fig.tight_layout()
    save(fig, args.output)
    plt.close(fig)
    header = list(rows[0].keys())
    write_csv(sibling(args.output, "_front.csv"), header, [[kept[i][h] for h in header] for i in front])


# --- collective --------------------------------------------------------------------------

ALGO_MARKERS = {"ring": "o", "tree": "^", "hierarchical": "s", "halving_doubling": "D", "direct": "v",
                "nvls": "*", "sharp": "P"}


def size_text(b):
    """Bytes in binary units, as --sizes takes them: 1 KiB, 64 MiB, 8 GiB."""
    for scale, unit in ((2 ** 50, "PiB"), (2 ** 40, "TiB"), (2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB")):
        if b >= scale:
            return f"{b / scale:.4g} {unit}"
    return f"{b:.0f} B"


def cmd_collective(args):
    need = ("op", "algo", "model", "gpus", "size_bytes", "time_s", "busbw_GBps")
    runs = []  # (file, what it ran, rows sorted by size)
    instant = 0  # rows under a nanosecond, left out
    for path in args.inputs:
        rows = read_csv(path)
        if not rows:
            raise InputError(f"{path}: no rows")
        missing = [c for c in need if c not in rows[0]]
        if missing:
            raise InputError(f"{path}: no column {', '.join(repr(c) for c in missing)}: expected the CSV of "
                             f"`clustersim collective ... --format csv`")
        kept = []
        for r in rows:
            size, t = number(r["size_bytes"]), number(r["time_s"])
            if size is None or t is None or size <= 0 or t <= 0:
                instant += 1  # a collective under a nanosecond has no time to draw, nor a bandwidth
                continue
            kept.append((size, t, number(r["busbw_GBps"]), r["algo"]))
        if not kept:
            raise InputError(f"{path}: no row with a size and a time above 0")
        kept.sort()
        first = rows[0]
        runs.append((path, f"{first['op']} on {first['gpus']} GPUs, {first['model']}", kept))
    # Each series by what it ran; where two ran the same, by their files (by their folders
    # when the files share a name, as DIR/collective.csv do).
    described = [r[1] for r in runs]
    stems = [os.path.splitext(os.path.basename(r[0]))[0] for r in runs]
    folders = [os.path.basename(os.path.dirname(os.path.abspath(r[0]))) for r in runs]
    names = described if len(set(described)) == len(runs) else \
        stems if len(set(stems)) == len(runs) else folders
    series = [(name, r[2]) for name, r in zip(names, runs)]  # (label, rows)
    plt = plt_module()
    from matplotlib.ticker import FuncFormatter
    fig, (bw, tm) = plt.subplots(1, 2, figsize=(12, 5))
    algos_seen = []
    for i, (label, kept) in enumerate(series):
        colour = f"C{i}"
        sizes = [k[0] for k in kept]
        bw.plot(sizes, [k[2] if k[2] is not None else float("nan") for k in kept], "-", color=colour, lw=1.2,
                label=label)
        tm.plot(sizes, [k[1] for k in kept], "-", color=colour, lw=1.2, label=label)
        for algo in dict.fromkeys(k[3] for k in kept):
            pts = [k for k in kept if k[3] == algo]
            marker = ALGO_MARKERS.get(algo, "o")
            bw.plot([k[0] for k in pts], [k[2] if k[2] is not None else float("nan") for k in pts], marker,
                    color=colour, ms=5, ls="none")
            tm.plot([k[0] for k in pts], [k[1] for k in pts], marker, color=colour, ms=5, ls="none")
            if algo not in algos_seen:
                algos_seen.append(algo)
    for ax in (bw, tm):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_text(v)))
        ax.set_xlabel("size (nccl-tests' size column)")
        ax.grid(True, alpha=0.3, which="both")
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_ha("right")
    bw.set_ylabel("bus bandwidth (GB/s), nccl-tests' busbw")
    bw.set_title("bus bandwidth", fontsize=10)
    tm.set_yscale("log")
    from matplotlib.ticker import NullFormatter
    tm.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: si(v, "s") if v > 0 else "0"))
    # Over a decade or more the prefixed majors say it ("4x10^-9" between them read badly);
    # under one there may be no major tick in range at all: the minor ones are labelled.
    times = [k[1] for _, kept in series for k in kept]
    tm.yaxis.set_minor_formatter(NullFormatter() if max(times) / min(times) >= 10 else
                                 FuncFormatter(lambda v, _pos: si(v, "s") if v > 0 else "0"))
    tm.set_ylabel("time per collective")
    tm.set_title("time", fontsize=10)
    # The markers say which algorithm ran at each size (one legend for both panels).
    handles = [plt.Line2D([], [], color="#555555", marker=ALGO_MARKERS.get(a, "o"), ls="none", label=a)
               for a in algos_seen]
    bw.legend(handles=bw.get_legend_handles_labels()[0] + handles, fontsize=8, frameon=False)
    title = "clustersim collective: " + (series[0][0] if len(series) == 1 else f"{len(series)} series")
    if instant:
        title += f" ({instant} size{'s' if instant != 1 else ''} under 1 ns, with no time or bandwidth, not drawn)"
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save(fig, args.output)
    plt.close(fig)


# --- sweep -------------------------------------------------------------------------------

SWEEP_FIGURES = ["step_time_s", "mfu", "time_to_train_s", "total_cost_usd", "usd_per_million_tokens", "ettr",
                 "goodput_tokens_per_s", "capex_usd", "it_power_w"]


def cmd_sweep(args):
    rows = read_csv(args.input)
    if not rows:
        raise InputError(f"{args.input}: no rows")
    header = list(rows[0].keys())
    if "point" not in header or "status" not in header or header.index("status") < header.index("point"):
        raise InputError(f"{args.input}: expected the sweep.csv of `clustersim sweep --out DIR` (columns point, "
                         f"the parameters, status, ...)")
    # A grid without parameters of its own (its points differ in the seed alone, say): the
    # points in order.
    params = header[header.index("point") + 1:header.index("status")] or ["point"]
    ok = [r for r in rows if r["status"] == "ok"]
    errors = len(rows) - len(ok)
    if not ok:
        raise InputError(f"{args.input}: every point is an error row: nothing to plot")
    # The figures that vary; the constant ones are said in the title. When none varies (a
    # parameter that changes nothing computed), the ones present, flat.
    present = {f: [v for v in (number(r[f]) for r in ok) if v is not None] for f in SWEEP_FIGURES if f in header}
    figures = [f for f, vals in present.items() if vals and max(vals) != min(vals)]
    constant = [f for f, vals in present.items() if vals and f not in figures]
    if not figures:
        figures, constant = constant, []
    if not figures:
        raise InputError(f"{args.input}: no figure has a number at any point: nothing to plot")
    x_param, others = params[0], params[1:]
    xs_numeric = all(number(r[x_param]) is not None for r in ok)
    categories = []
    if not xs_numeric:
        for r in ok:
            if r[x_param] not in categories:
                categories.append(r[x_param])
    def x_of(r):
        return number(r[x_param]) if xs_numeric else categories.index(r[x_param])
    groups = {}
    for r in ok:
        key = ", ".join(f"{p}={r[p]}" for p in others)
        groups.setdefault(key, []).append(r)
    lines = len(groups) <= 8
    plt = plt_module()
    from matplotlib.ticker import FuncFormatter
    cols = 2 if len(figures) > 1 else 1
    nrows = (len(figures) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 3.3 * nrows + 0.8), squeeze=False)
    positive = xs_numeric and all(x_of(r) > 0 for r in ok)
    log_x = positive and max(x_of(r) for r in ok) / min(x_of(r) for r in ok) >= 8
    def unit_of(f):
        return "fraction" if f in ("mfu", "ettr") else "USD" if f == "usd_per_million_tokens" else column_unit(f)
    # Past 8 combinations of the other parameters, no lines: the points coloured by the second
    # parameter's value (up to 10 of them), else one colour.
    second = others[0] if others else None
    second_values = list(dict.fromkeys(r[second] for r in ok)) if second else []
    coloured = not lines and 1 < len(second_values) <= 10
    for i, f in enumerate(figures):
        ax = axes[i // cols][i % cols]
        unit = unit_of(f)
        # Seconds spanning days in days, hours in hours (ticks at round values of those).
        vals = present[f]
        scale = 86400.0 if unit == "s" and max(vals) > 2 * 86400 else \
            3600.0 if unit == "s" and max(vals) > 2 * 3600 else 1.0
        for j, (key, members) in enumerate(groups.items()):
            # On a categorical axis the series sit side by side around each category (lines
            # between categories would read as a trend; equal values hid one another).
            shift = 0.0 if xs_numeric or len(groups) == 1 else 0.5 * (j / (len(groups) - 1) - 0.5)
            pts = sorted((x_of(r) + shift, number(r[f]) / scale) for r in members if number(r[f]) is not None)
            if not pts:
                continue
            if coloured:
                colour = f"C{second_values.index(members[0][second]) % 10}"
            else:
                colour = f"C{j % 10}" if lines else "#4C72B0"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o" if lines and xs_numeric else "o", ms=4, lw=1.2,
                    color=colour, alpha=1.0 if lines else 0.6,
                    label=(key or None) if lines and i == 0 else None)
        if scale != 1.0:
            name = f[: -len("_s")] if f.endswith("_s") else f
            ax.set_title(f"{name} ({'days' if scale == 86400.0 else 'hours'})", fontsize=9)
        else:
            if unit:
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos, u=unit: si(v, u, digits=4) if v else "0"))
            name = f[: -len("_s")] if unit == "s" and f.endswith("_s") else f  # "step_time (s)", not "step_time_s (s)"
            ax.set_title(name if unit in ("", None, "fraction") else f"{name} ({unit})", fontsize=9)
        if log_x:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        if not xs_numeric:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories, rotation=20, ha="right", fontsize=8)
        ax.set_xlabel(x_param, fontsize=8)
        ax.grid(True, alpha=0.3, which="both")
    for k in range(len(figures), nrows * cols):
        axes[k // cols][k % cols].axis("off")
    legend = lines and len(groups) > 1
    if legend:
        fig.legend(loc="lower center", ncol=min(4, len(groups)), fontsize=8, frameon=False)
    elif coloured:
        handles = [plt.Line2D([], [], color=f"C{k % 10}", marker="o", ls="none", label=f"{second}={v}")
                   for k, v in enumerate(second_values)]
        fig.legend(handles=handles, loc="lower center", ncol=min(5, len(handles)), fontsize=8, frameon=False)
    title = f"clustersim sweep: {len(ok)} point{'s' if len(ok) != 1 else ''} against {x_param}"
    if others and not lines:
        title += f" ({len(groups)} combinations of {', '.join(others)}: points only" + \
            (f", coloured by {second})" if coloured else ")")
    if errors:
        title += f"; {errors} error row{'s' if errors != 1 else ''} left out"
    if constant:
        import textwrap
        said = ", ".join(f"{f} {si(present[f][0], unit_of(f) or '', digits=4).strip()}" for f in constant)
        title += "\n" + "\n".join(textwrap.wrap(f"the same at every point: {said}", width=110))
    fig.suptitle(title, fontsize=10)
    rows_of_legend = 1 + (len(groups) - 1) // 4 if legend else 1 if coloured else 0
    bottom = min(0.2, 0.035 * rows_of_legend / max(1, nrows) * 2) if rows_of_legend else 0
    fig.tight_layout(rect=(0, bottom, 1, 1))
    save(fig, args.output)
    plt.close(fig)


# --- validation --------------------------------------------------------------------------

def cmd_validation(args):
    doc = read_json(args.input)
    if not isinstance(doc, dict) or "cases" not in doc:
        raise InputError(f"{args.input}: no 'cases': expected the JSON of `clustersim validate --format json`")
    cases = doc.get("cases") or []
    training = [c for c in cases if c.get("within_poisson_band") is None]
    failures = [c for c in cases if c.get("within_poisson_band") is not None]
    collectives = (doc.get("collectives") or {}).get("cases") or []
    panels = [p for p in (("training throughput", training), ("failure counts", failures),
                          ("collective bus bandwidth", collectives)) if p[1]]
    if not panels:
        raise InputError(f"{args.input}: no case to plot")
    plt = plt_module()
    heights = [max(1.6, 0.32 * len(rows) + 0.9) for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, sum(heights) + 0.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (title, rows) in zip(axes[:, 0], panels):
        names, errors, colours, hatches, xerr = [], [], [], [], []
        for c in rows:
            err = 100.0 * float(c["error"])
            name = c["name"]
            if title == "training throughput":
                if c.get("fits_in_hbm") is False:
                    name += "  (> HBM)"
                colours.append("#55A868" if abs(err) <= 10.0 else "#DD8452")
                hatches.append("")
                xerr.append(0.0)
            elif title == "failure counts":
                band = 100.0 * 2.0 * math.sqrt(float(c["published"])) / float(c["published"])
                colours.append("#55A868" if c["within_poisson_band"] else "#DD8452")
                hatches.append("")
                xerr.append(band)
            else:
                if c.get("in_sample"):
                    name += "  (in sample)"
                colours.append("#BBBBBB" if c.get("in_sample") else "#4C72B0")
                hatches.append("//" if c.get("in_sample") else "")
                xerr.append(0.0)
            names.append(name)
            errors.append(err)
        y = list(range(len(rows)))[::-1]
        if title == "training throughput":
            ax.axvspan(-10, 10, color="#55A868", alpha=0.08, label="within the 10% target")
            median = doc.get("median_abs_error")
            if args.fail_above is not None:
                failed = median is not None and 100.0 * median > args.fail_above
                for sign in (1, -1):
                    ax.axvline(sign * args.fail_above, color="#C44E52" if failed else "#555555", ls="--", lw=1,
                               label=(f"--fail-above {args.fail_above:g}%: " + ("failed" if failed else "passed"))
                               if sign == 1 else None)
        else:
            median = (doc.get("collectives") or {}).get("median_abs_error") if title.startswith("collective") else None
        if median is not None:
            ax.axvline(100.0 * median, color="#C44E52", ls=":", lw=1,
                       label=f"median absolute error {100.0 * median:.1f}%" +
                             (" (in-sample cases left out)" if title.startswith("collective") else ""))
            ax.axvline(-100.0 * median, color="#C44E52", ls=":", lw=1)
        if title == "failure counts":
            # Each count's Poisson band, behind its bar: a bar inside it is within 2 sqrt(published).
            for i, (yi, band) in enumerate(zip(y, xerr)):
                ax.barh(yi, 2 * band, left=-band, color="#999999", alpha=0.18, height=0.9,
                        label="Poisson band, 2 sqrt(published)" if i == 0 else None)
        for yi, e, colour, hatch in zip(y, errors, colours, hatches):
            ax.barh(yi, e, color=colour, hatch=hatch, edgecolor="#555555" if hatch else colour, height=0.6)
        for yi, e in zip(y, errors):
            ax.annotate(f"{e:+.1f}%", (e, yi), textcoords="offset points", xytext=(4 if e >= 0 else -4, 0),
                        ha="left" if e >= 0 else "right", va="center", fontsize=7.5)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.axvline(0, color="#333333", lw=0.8)
        lo = min([e for e in errors] + [-b for b in xerr] + [-12.0])
        hi = max([e for e in errors] + [b for b in xerr] + [12.0])
        pad = 0.18 * (hi - lo)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_xlabel("error: predicted / published - 1 (%)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="x", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, framealpha=0.85, loc="best")  # a short panel's bars fill its corners
    fig.suptitle("clustersim validate: the simulator against published measurements "
                 f"(sources in {args.cases or 'the cases file'})", fontsize=10)
    fig.tight_layout()
    save(fig, args.output)
    plt.close(fig)


def cmd_run(args):
    """Every plot of a `clustersim run --out DIR` folder, in one interpreter start."""
    d = args.dir
    results = os.path.join(d, "results.json")
    if not os.path.exists(results):
        raise InputError(f"{d}: no results.json (clustersim run --out {d} writes it)")
    drawn = 0
    if any(j.get("breakdown") for j in read_json(results).get("jobs") or []):
        cmd_breakdown(argparse.Namespace(inputs=[results], output=os.path.join(d, "breakdown.png")))
        drawn += 1
    if os.path.exists(os.path.join(d, "failures.csv")):
        cmd_timeline(argparse.Namespace(input=os.path.join(d, "failures.csv"), results=results,
                                        output=os.path.join(d, "timeline.png")))
        drawn += 1
    if os.path.exists(os.path.join(d, "gpu_failures.csv")):
        cmd_heatmap(argparse.Namespace(input=os.path.join(d, "gpu_failures.csv"), results=results,
                                       nodes_per_rack=args.nodes_per_rack, output=os.path.join(d, "gpu_health.png")))
        drawn += 1
    if not drawn:
        raise InputError(f"{d}: nothing to plot (no job steps, no failure files)")


def rack_size(text):
    """--nodes-per-rack: a whole number of nodes, 1 or more (0 was taken as not given)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of nodes, got '{text}'")
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {n}")
    return n


def main(argv):
    p = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n")[0],
                                epilog=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="every plot of a clustersim run --out DIR folder")
    r.add_argument("dir", metavar="DIR")
    r.add_argument("--nodes-per-rack", type=rack_size, metavar="N", help="for the heat map (default: from results.json)")
    r.set_defaults(run=cmd_run, output=None)
    b = sub.add_parser("breakdown", help="step-time breakdown per design")
    b.add_argument("inputs", nargs="+", metavar="RESULTS.json|BREAKDOWN.csv")
    b.add_argument("-o", "--output", required=True, metavar="PNG")
    b.set_defaults(run=cmd_breakdown)
    c = sub.add_parser("compare", help="designs side by side (clustersim compare --format csv)")
    c.add_argument("input", metavar="COMPARE.csv")
    c.add_argument("--breakdown", metavar="BREAKDOWN.csv",
                   help="also draw the designs' step-time breakdown, into breakdown.png beside the PNG")
    c.add_argument("-o", "--output", required=True, metavar="PNG")
    c.set_defaults(run=cmd_compare)
    t = sub.add_parser("timeline", help="the failure timeline of a run (failures.csv)")
    t.add_argument("input", metavar="FAILURES.csv")
    t.add_argument("--results", metavar="RESULTS.json", help="the run's results (horizon); default: beside the CSV")
    t.add_argument("-o", "--output", required=True, metavar="PNG")
    t.set_defaults(run=cmd_timeline)
    h = sub.add_parser("heatmap", help="GPU health heat map, one pixel per GPU (gpu_failures.csv)")
    h.add_argument("input", metavar="GPU_FAILURES.csv")
    h.add_argument("--results", metavar="RESULTS.json", help="the run's results (racks); default: beside the CSV")
    h.add_argument("--nodes-per-rack", type=rack_size, metavar="N", help="nodes per rack (default: from the results)")
    h.add_argument("-o", "--output", required=True, metavar="PNG")
    h.set_defaults(run=cmd_heatmap)
    # The plots of one input file (or several) and one PNG: (name, run, input, help, description).
    for name, run, metavar, short, long in (
            ("sweep", cmd_sweep, "SWEEP.csv", "a sweep's figures against its first parameter (sweep.csv)",
             "A sweep's figures (step time, MFU, time to train, costs, ETTR, ...) against its first parameter, a "
             "line per combination of the others. Input: the sweep.csv of clustersim sweep --out DIR."),
            ("validation", cmd_validation, "VALIDATION.json",
             "errors against published measurements (clustersim validate --format json)",
             "Each case's error (predicted / published - 1) as a bar, one panel per kind of case: training "
             "throughput, failure counts (with their Poisson bands), collective bus bandwidth. Input: clustersim "
             "validate --format json."),
            ("collective", cmd_collective, "COLLECTIVE.csv",
             "bus bandwidth and time against size (clustersim collective --format csv)",
             "nccl-tests-style curves: bus bandwidth and time against the size, on log axes, one series per CSV "
             "(clustersim collective --format csv), each point marked by the algorithm that ran.")):
        one = sub.add_parser(name, help=short, description=long)
        if name == "collective":
            one.add_argument("inputs", nargs="+", metavar=metavar)
        else:
            one.add_argument("input", metavar=metavar)
        if name == "validation":
            one.add_argument("--cases", metavar="CASES.yaml",
                             help="the cases file, named in the title (where the sources are)")
            one.add_argument("--fail-above", type=float, metavar="PERCENT",
                             help="validate's gate: drawn on the training panel, with whether the median passed")
        one.add_argument("-o", "--output", required=True, metavar="PNG")
        one.set_defaults(run=run)
    q = sub.add_parser("pareto", help="Pareto front of two columns of any CSV (time against cost)",
                       formatter_class=argparse.RawDescriptionHelpFormatter, description="""\
Every row of TABLE.csv as a point (x against y) and the Pareto front: the rows that no
other row beats on both axes (lower is better on each unless --x-better/--y-better higher).

TABLE.csv: any CSV with a header row naming its columns, e.g. the plan.csv of
`clustersim plan --out DIR`, the sweep.csv of `clustersim sweep --out DIR`, or your own:

    design,nodes,topology,time_to_train_s,total_cost_usd
    a,1024,fat_tree,7776000,41000000
    b,2048,rail_clos,3990000,42800000

Rows whose x or y is not a number, or whose 'status' column (if any) is not 'ok', are
skipped. A column name ending in _s, _usd, _w, _bytes or _bps gives its unit; seconds over
two days are drawn in days. Writes the PNG and, beside it, NAME_front.csv: the front's rows,
all columns, in x order.""")
    q.add_argument("input", metavar="TABLE.csv")
    q.add_argument("--x", default="time_to_train_s", metavar="COLUMN", help="x column (default: time_to_train_s)")
    q.add_argument("--y", default="total_cost_usd", metavar="COLUMN", help="y column (default: total_cost_usd)")
    q.add_argument("--x-better", choices=["lower", "higher"], default="lower")
    q.add_argument("--y-better", choices=["lower", "higher"], default="lower")
    q.add_argument("--label", action="append", metavar="COLUMN", help="label the front's points (repeatable)")
    q.add_argument("--x-mark", type=float, metavar="VALUE", help="a dashed vertical line at this x (a deadline)")
    q.add_argument("--x-mark-label", metavar="TEXT", help="its legend entry (default: the column and value)")
    q.add_argument("--y-mark", type=float, metavar="VALUE", help="a dotted horizontal line at this y (a budget)")
    q.add_argument("--y-mark-label", metavar="TEXT", help="its legend entry (default: the column and value)")
    q.add_argument("--excluded", metavar="COLUMN",
                   help="rows where this column is 'false' are no candidates: drawn hollow, on no front")
    q.add_argument("--excluded-label", metavar="TEXT", help="their legend entry")
    q.add_argument("--label-format", metavar="TEXT",
                   help="the front's labels as a Python format of the row's columns, e.g. '{nodes} nodes, {topology}'")
    q.add_argument("--logx", action="store_true", help="log x axis (default: when x spans over 100x)")
    q.add_argument("--logy", action="store_true", help="log y axis (default: when y spans over 100x)")
    q.add_argument("-o", "--output", required=True, metavar="PNG")
    q.set_defaults(run=cmd_pareto)
    args = p.parse_args(argv)
    try:
        args.run(args)
    except InputError as e:
        print(f"plot.py {args.command}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a folder without write permission: said, not a traceback
        where = f" '{e.filename}'" if getattr(e, "filename", None) else ""
        print(f"plot.py {args.command}: cannot write{where}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

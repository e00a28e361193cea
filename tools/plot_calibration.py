#!/usr/bin/env python3
"""Plots a calibration fit: measured vs fitted, one PNG per group of points.

Usage: plot_calibration.py POINTS.csv CURVES.csv OUT_DIR

`clustersim calibrate ... --plot DIR` writes DIR/points.csv and DIR/curves.csv and runs this
script with an interpreter that has matplotlib (Debian: python3-matplotlib).

points.csv  group,label,bytes,measured_s,predicted_s,fitted,bus_factor  (one row per point)
curves.csv  group,bytes,predicted_s,regime  (each collective series' fitted model, dense in size)

Each PNG has the quantity people read (bus bandwidth for collectives, achieved bandwidth for
memory, TFLOP/s for GEMMs and fused attention, the latter against the key/value length)
measured vs fitted on top, and the relative error of the fit
below, with the +-5% band. Sizes span decades: their axes are logarithmic.
"""
import csv
import math
import os
import re
import sys
from collections import defaultdict


def human_bytes(x, _pos=None):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if x >= scale:
            v = x / scale
            return f"{v:.0f}{unit}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}{unit}"
    return f"{x:.0f}B"


def size_axis(ax, xs):
    """Log2 axis with one labelled tick every few doublings (B, KiB, MiB, GiB)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter
    ax.set_xscale("log", base=2)
    lo, hi = math.floor(math.log2(min(xs))), math.ceil(math.log2(max(xs)))
    step = max(1, math.ceil((hi - lo) / 12))
    ax.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in range(lo, hi + 1, step)]))
    ax.xaxis.set_major_formatter(FuncFormatter(human_bytes))
    ax.xaxis.set_minor_formatter(NullFormatter())


def error_panel(ax, xs, errs, xlabel):
    ax.axhspan(-5, 5, color="0.92", zorder=0)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.plot(xs, errs, "o", ms=4, color="C3")
    lim = max(6.0, 1.15 * max(abs(e) for e in errs))
    ax.set_ylim(-lim, lim)
    # On time, as the fit report's errors: above 0 the model is slower than measured, so the
    # rate it predicts (the panel above) is below the measured one (it read as the reverse).
    ax.set_ylabel("fit error (%) on time\npredicted/measured time − 1\n(> 0: model slower; shaded ±5%)", fontsize=9)
    ax.set_xlabel(xlabel)
    ax.grid(True, which="major", alpha=0.3)


def worst_text(errs):
    s = sorted(abs(e) for e in errs)
    med = s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])
    return f"{len(errs)} points: median |error| {med:.1f}%, worst {s[-1]:.1f}%"


def nccl_bus_factor(op, n):
    """nccl-tests' busbw / algbw (its doc/PERFORMANCE.md) for `op` on n ranks."""
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def plot_collective(plt, group, rows, curve, network=False):
    op, shape = group.split("/")[1:3]
    nodes, per = shape.split("x")
    # The network model's rows carry no bus factor: nccl-tests' for the op and rank count.
    f = nccl_bus_factor(op, int(nodes) * int(per)) if network else float(rows[0]["bus_factor"])
    xs = [float(r["bytes"]) for r in rows]
    busbw = [f * x / float(r["measured_s"]) / 1e9 for x, r in zip(xs, rows)]
    errs = [100 * (float(r["predicted_s"]) / float(r["measured_s"]) - 1) for r in rows]
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(8, 8.5), sharex=True,
                                              gridspec_kw={"height_ratios": [3, 2, 1.3]})
    top.plot(xs, busbw, "o", ms=5, mfc="none", color="C0", label="measured (out-of-place and in-place)")
    middle.plot(xs, [1e6 * float(r["measured_s"]) for r in rows], "o", ms=5, mfc="none", color="C0",
                label="measured")
    if network:  # the model's time at each measured size (it has no regimes to draw)
        px = sorted(set(xs))
        pred = {float(r["bytes"]): float(r["predicted_s"]) for r in rows}
        top.plot(px, [f * x / pred[x] / 1e9 for x in px], "-", color="C1", lw=1.6, label="network model")
        middle.plot(px, [1e6 * pred[x] for x in px], "-", color="C1", lw=1.6, label="network model")
    if curve:
        cx = [float(c["bytes"]) for c in curve]
        cy = [f * x / float(c["predicted_s"]) / 1e9 for x, c in zip(cx, curve)]
        top.plot(cx, cy, "-", color="C1", lw=1.6, label="fitted model (size regimes)")
        middle.plot(cx, [1e6 * float(c["predicted_s"]) for c in curve], "-", color="C1", lw=1.6,
                    label="fitted model")
        starts = [float(c["bytes"]) for a, c in zip(curve, curve[1:]) if c["regime"] != a["regime"]]
        for i, s in enumerate(starts):
            top.axvline(s, color="0.6", ls=":", lw=1, label="regime boundary" if i == 0 else None)
            middle.axvline(s, color="0.6", ls=":", lw=1)
    middle.set_yscale("log")
    middle.set_ylabel("time per call (µs, log scale)")
    middle.grid(True, which="major", alpha=0.3)
    middle.legend(loc="upper left", fontsize=8, frameon=False)
    top.set_ylabel("bus bandwidth (GB/s)")
    top.set_ylim(bottom=0)
    top.grid(True, which="major", alpha=0.3)
    top.legend(loc="upper left", fontsize=8, frameon=False)
    what = "the network model (what simulations run)" if network else "fitted"
    top.set_title(f"{op} on {nodes} node{'s' if nodes != '1' else ''} × {per} GPUs: measured vs {what}\n"
                  f"{worst_text(errs)}", fontsize=10)
    size_axis(bottom, xs)
    error_panel(bottom, xs, errs, "message size (bytes, log scale)")
    return fig


def plot_memory(plt, group, rows):
    xs = [float(r["bytes"]) for r in rows]
    meas = [x / float(r["measured_s"]) / 1e9 for x, r in zip(xs, rows)]
    pred = [x / float(r["predicted_s"]) / 1e9 for x, r in zip(xs, rows)]
    errs = [100 * (float(r["predicted_s"]) / float(r["measured_s"]) - 1) for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    top.plot(xs, meas, "o", ms=5, mfc="none", color="C0", label="measured")
    fitted = rows[0]["fitted"] == "1"
    top.plot(xs, pred, "-", color="C1", lw=1.6, label="fitted model" if fitted else "model (not fitted to these)")
    top.set_ylabel("bandwidth (GB/s, bytes moved / time)")
    top.set_ylim(bottom=0)
    top.grid(True, which="major", alpha=0.3)
    top.legend(loc="upper left", fontsize=8, frameon=False)
    top.set_title(f"{group}: measured vs {'fitted' if fitted else 'predicted (cross-check, not fitted)'}\n"
                  f"{worst_text(errs)}", fontsize=10)
    size_axis(bottom, xs)
    error_panel(bottom, xs, errs, "bytes moved (log scale)")
    return fig


def gemm_flops(label):
    dims = [int(v) for v in label.split("x")]
    batch, m, n, k = ([1] + dims) if len(dims) == 3 else dims
    return 2.0 * batch * m * n * k


def plot_gemm(plt, group, rows):
    xs = [gemm_flops(r["label"]) for r in rows]
    meas = [x / float(r["measured_s"]) / 1e12 for x, r in zip(xs, rows)]
    pred = [x / float(r["predicted_s"]) / 1e12 for x, r in zip(xs, rows)]
    errs = [100 * (float(r["predicted_s"]) / float(r["measured_s"]) - 1) for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    top.plot(xs, meas, "o", ms=5, mfc="none", color="C0", label="measured")
    top.plot(xs, pred, "x", ms=5, color="C1", label="fitted model (same shape)")
    top.set_xscale("log")
    top.set_ylabel("achieved TFLOP/s")
    top.set_ylim(bottom=0)
    top.grid(True, which="major", alpha=0.3)
    top.legend(loc="upper left", fontsize=8, frameon=False)
    top.set_title(f"GEMM {group.split('/', 1)[1]}: measured vs fitted, {len(rows)} shapes\n{worst_text(errs)}",
                  fontsize=10)
    error_panel(bottom, xs, errs, "FLOPs per GEMM (2·batch·m·n·k, log scale)")
    return fig


def plot_attention(plt, group, rows):
    """Achieved TFLOP/s against the key/value length, causal and not apart (the sequence term)."""
    backward = group.endswith("/backward")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    all_x, all_err = [], []
    for causal, color in ((False, "C0"), (True, "C2")):
        sel = sorted((r for r in rows if r["label"].endswith(" causal") == causal),
                     key=lambda r: int(r["label"].split()[0].split("x")[2]))
        if not sel:
            continue
        xs, meas, pred = [], [], []
        for r in sel:
            bh, q, kv, h = (int(v) for v in r["label"].split()[0].split("x"))
            flops = 4.0 * bh * q * kv * h * (0.5 if causal else 1.0) * (2.5 if backward else 1.0)
            xs.append(kv)
            meas.append(flops / float(r["measured_s"]) / 1e12)
            pred.append(flops / float(r["predicted_s"]) / 1e12)
            all_x.append(kv)
            all_err.append(100 * (float(r["predicted_s"]) / float(r["measured_s"]) - 1))
        name = "causal" if causal else "not causal"
        top.plot(xs, meas, "o", ms=5, mfc="none", color=color, label=f"measured, {name}")
        top.plot(xs, pred, "x-", ms=5, lw=0.8, color=color, label=f"fitted model, {name}")
    size_axis(top, all_x)
    top.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _p: f"{x / 1024:.0f}K" if x >= 1024 else f"{x:.0f}"))
    top.set_ylabel("achieved TFLOP/s (model FLOPs of the pass)")
    top.set_ylim(bottom=0)
    top.grid(True, which="major", alpha=0.3)
    top.legend(loc="lower right", fontsize=8, frameon=False)
    top.set_title(f"fused attention {group.split('/', 1)[1]}: measured vs fitted, {len(rows)} calls\n"
                  f"{worst_text(all_err)}", fontsize=10)
    error_panel(bottom, all_x, all_err, "key/value length (tokens, log scale)")
    return fig


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_calibration.py: matplotlib is not installed for this interpreter "
              "(Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 2
    points_csv, curves_csv, out_dir = sys.argv[1:]
    groups, curves = defaultdict(list), defaultdict(list)
    with open(points_csv, newline="") as f:
        for row in csv.DictReader(f):
            groups[row["group"]].append(row)
    with open(curves_csv, newline="") as f:
        for row in csv.DictReader(f):
            curves[row["group"]].append(row)
    os.makedirs(out_dir, exist_ok=True)
    for group, rows in groups.items():
        if group.startswith("collective/"):
            rows.sort(key=lambda r: float(r["bytes"]))
            fig = plot_collective(plt, group, rows, curves.get(group, []))
        elif group.startswith("network/"):
            rows.sort(key=lambda r: float(r["bytes"]))
            fig = plot_collective(plt, group, rows, [], network=True)
        elif group.startswith("memory/"):
            rows.sort(key=lambda r: float(r["bytes"]))
            fig = plot_memory(plt, group, rows)
        elif group.startswith("gemm/"):
            fig = plot_gemm(plt, group, rows)
        elif group.startswith("attention/"):
            fig = plot_attention(plt, group, rows)
        else:
            continue
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", group) + ".png"), dpi=110)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plots a calibration fit: measured vs fitted, one PNG per group of points.

Usage: plot_calibration.py POINTS.csv OUT_DIR   (points.csv as `clustersim calibrate --plot` writes it)
Exit status 3, with a message, when matplotlib is not installed.
"""
import csv
import os
import re
import sys
from collections import defaultdict


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_calibration.py: matplotlib is not installed (Debian: apt-get install python3-matplotlib); "
              "skipping the plots", file=sys.stderr)
        return 3
    groups = defaultdict(list)
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            groups[row["group"]].append(row)
    os.makedirs(sys.argv[2], exist_ok=True)
    for group, rows in groups.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        sized = all(float(r["bytes"]) > 0 for r in rows)
        if sized:
            rows.sort(key=lambda r: float(r["bytes"]))
            x = [float(r["bytes"]) for r in rows]
            ax.set_xscale("log", base=2)
            ax.set_xlabel("bytes")
        else:
            x = list(range(len(rows)))
            ax.set_xlabel("point (see the fit report)")
        ax.plot(x, [float(r["measured_s"]) for r in rows], "o", label="measured")
        ax.plot(x, [float(r["predicted_s"]) for r in rows], "-" if sized else "x", label="fitted model")
        ax.set_yscale("log")
        ax.set_ylabel("seconds")
        ax.set_title(group)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(sys.argv[2], re.sub(r"[^A-Za-z0-9_.-]", "_", group) + ".png"), dpi=110)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())

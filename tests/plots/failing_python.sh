#!/bin/sh
# A Python for the plot tests whose plots fail: it answers clustersim's interpreter lookup
# (which imports matplotlib) as the real one does, and exits 3 when asked to run tools/plot.py.
# CLUSTERSIM_REAL_PYTHON: the real interpreter (default python3).
for a in "$@"; do
  case "$a" in
    *plot.py) echo "plot.py: failing on purpose (a test)" >&2; exit 3 ;;
  esac
done
exec "${CLUSTERSIM_REAL_PYTHON:-python3}" "$@"

#!/usr/bin/python3
"""The tbqlevels tracer from gst-launch-1.0 (GST_TRACERS with file= and
period=) writes the CSV file that docs/tracer.md describes, and
tools/plot-levels draws it; plot-levels computes each curve as a
percentage of its limit and refuses files it cannot read.  Prints TAP."""
import csv
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

from taplib import SOURCE_ROOT, Tap

PLOT = os.path.join(SOURCE_ROOT, "tools", "plot-levels")
COLUMNS = ["ts", "element", "kind", "queue", "current-level-buffers",
           "current-level-bytes", "current-level-time", "max-size-buffers",
           "max-size-bytes", "max-size-time", "source-blocks-in-use",
           "source-blocks", "sink-bytes-in-use", "sink-max-bytes",
           "spill-level-bytes"]
# A backlog: the source runs ahead of the clock-synced sink behind tbqueue.
PIPELINE = ("audiotestsrc num-buffers=100 samplesperbuffer=441 ! tee name=t "
            "t. ! queue name=fast ! fakesink "
            "t. ! tbqueue name=slow transfer=copy ! fakesink sync=true")

loader = importlib.machinery.SourceFileLoader("plot_levels", PLOT)
spec = importlib.util.spec_from_loader("plot_levels", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)


def record(tap, tmp):
    """Run PIPELINE with the tracer; the CSV rows, or None."""
    path = os.path.join(tmp, "levels.csv")
    env = dict(os.environ, GST_TRACERS=f"tbqlevels(file={path},period=5)")
    r = subprocess.run(["gst-launch-1.0", "-q"] + PIPELINE.split(), env=env,
                       capture_output=True, text=True, timeout=300)
    if not tap.check(r.returncode == 0, "gst-launch-1.0 runs with the tracer",
                     r.stdout + r.stderr):
        return None, path
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        tap.check(reader.fieldnames == COLUMNS, "the CSV header is as documented",
                  f"{reader.fieldnames}")
        return list(reader), path


def check_csv(tap, rows):
    by = {}
    for row in rows:
        by.setdefault(row["element"], []).append(row)
    tap.check(sorted(by) == ["fast", "slow"],
              "one series per queue-like element, nothing else",
              f"elements: {sorted(by)}")
    tap.check({r["kind"] for r in by.get("fast", [])} == {"queue"}
              and {r["kind"] for r in by.get("slow", [])} == {"tbqueue"},
              "each series has its element's kind")
    tap.check(all(r["source-blocks"] and r["sink-max-bytes"]
                  for r in by.get("slow", []))
              and not any(r["source-blocks"] for r in by.get("fast", [])),
              "pool columns are filled for tbqueue only")
    over = [r for r in rows if int(r["max-size-buffers"])
            and int(r["current-level-buffers"]) > int(r["max-size-buffers"])]
    tap.check(not over, "no level above its limit", f"{over[:3]}")
    ts = [int(r["ts"]) for r in by.get("slow", [])]
    tap.check(len(ts) >= 2 and ts[-1] > ts[0], "samples span the run")
    last = by.get("slow", [{}])[-1]
    tap.check(last.get("current-level-buffers") == "0",
              "the last sample (stopped) is empty", f"{last}")


def check_plot(tap, path, tmp):
    for ext in ("png", "svg"):
        out = os.path.join(tmp, f"levels.{ext}")
        r = subprocess.run([PLOT, path, "-o", out], capture_output=True,
                           text=True, timeout=120)
        tap.check(r.returncode == 0 and "2 panels" in r.stdout,
                  f"plot-levels draws one panel per queue ({ext})",
                  r.stdout + r.stderr)
        head = open(out, "rb").read(64) if os.path.exists(out) else b""
        magic = b"\x89PNG" if ext == "png" else b"<?xml"
        tap.check(head.startswith(magic), f"the {ext} file is a {ext} image")


def check_series(tap):
    rows = [{"ts": 1e9, "current-level-buffers": 50, "max-size-buffers": 200,
             "current-level-bytes": 1000, "max-size-bytes": 0,
             "current-level-time": 0, "max-size-time": 10},
            {"ts": 2e9, "current-level-buffers": 100, "max-size-buffers": 200,
             "current-level-bytes": 4000, "max-size-bytes": 0,
             "current-level-time": 5, "max-size-time": 10}]
    curves = {title.split(":")[0]: (dashed, pts)
              for title, _, dashed, pts in plot.series_of(rows)}
    tap.check(sorted(curves) == ["buffers", "bytes", "time"],
              "a queue has buffers, bytes and time curves, no pools",
              f"{sorted(curves)}")
    tap.check(curves["buffers"] == (False, [(1.0, 25.0), (2.0, 50.0)]),
              "a level is drawn as a percentage of its limit",
              f"{curves['buffers']}")
    tap.check(curves["bytes"] == (True, [(1.0, 25.0), (2.0, 100.0)]),
              "a level without a limit is dashed, as a percentage of its peak",
              f"{curves['bytes']}")
    for r, spilled in zip(rows, (0, 0)):
        r.update({"sink-bytes-in-use": 1 << 20, "sink-max-bytes": 4 << 20,
                  "spill-level-bytes": spilled})
    titles = [t.split(":")[0] for t, _, _, _ in plot.series_of(rows)]
    tap.check("spill file" not in titles,
              "a tbqueue that never spilled has no spill curve", f"{titles}")
    rows[1]["spill-level-bytes"] = 8 << 20
    curves = {title.split(":")[0]: (dashed, pts)
              for title, _, dashed, pts in plot.series_of(rows)}
    tap.check(curves.get("spill file") == (True, [(1.0, 0.0), (2.0, 100.0)]),
              "a tbqueue that spilled has its spill-level-bytes curve, as a "
              "percentage of its peak", f"{curves.get('spill file')}")


def check_errors(tap, tmp):
    bad = os.path.join(tmp, "bad.csv")
    with open(bad, "w") as f:
        f.write("a,b\n1,2\n")
    empty = os.path.join(tmp, "empty.csv")
    with open(empty, "w") as f:
        f.write(",".join(COLUMNS) + "\n")
    for name, path, message in (
            ("a missing file", os.path.join(tmp, "none.csv"), "cannot read"),
            ("a file that is not a tbqlevels CSV", bad, "not a tbqlevels CSV"),
            ("a CSV file without samples", empty, "no samples")):
        r = subprocess.run([PLOT, path, "-o", os.path.join(tmp, "x.png")],
                           capture_output=True, text=True, timeout=60)
        tap.check(r.returncode == 1 and message in r.stderr,
                  f"plot-levels refuses {name} with a message", r.stderr)


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        rows, path = record(tap, tmp)
        if rows is not None:
            check_csv(tap, rows)
            check_plot(tap, path, tmp)
        check_series(tap)
        check_errors(tap, tmp)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())

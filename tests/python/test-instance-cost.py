#!/usr/bin/python3
"""tools/instance-cost (the figures of docs/element.md, "What one instance
costs") runs and reports what the element promises: N instances in the
default copy group have one copy thread for all of them next to their
src pad tasks (1 + 1/N threads per instance, as queue's 1), and keep the
group's sink-min-bytes (256 KiB by default) resident once, since the
group's first member pre-faults it for all.  Prints TAP."""
import os
import re
import subprocess
import sys

from taplib import BUILD_ROOT, SOURCE_ROOT, Tap

TOOL = os.path.join(SOURCE_ROOT, "tools", "instance-cost")
ROW = re.compile(r"^(PAUSED|PLAYING)\s+(none|queue|tbqueue)\s+(\d+)\s+(\d+)\s+"
                 r"(\d+) \|\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)$", re.M)


N = 4


def main():
    tap = Tap()
    # The tool's own registry in the build tree (it sees the system's
    # plugins: appsrc), not the element tests' one.
    env = {k: v for k, v in os.environ.items() if k != "GST_REGISTRY"}
    r = subprocess.run([TOOL, "--build", BUILD_ROOT, "-n", str(N), "--runs",
                        "1"],
                       env=env, capture_output=True, text=True, timeout=250)
    tap.check(r.returncode == 0, "tools/instance-cost runs", r.stderr)
    rows = {(m.group(1), m.group(2)): [float(x) for x in m.groups()[5:]]
            for m in ROW.finditer(r.stdout)}
    tap.check(len(rows) == 6, "a row per state and element", r.stdout)
    for state in ("PAUSED", "PLAYING"):
        q = rows.get((state, "queue"))
        t = rows.get((state, "tbqueue"))
        if not tap.check(q and t, f"{state}: queue and tbqueue rows",
                         r.stdout):
            continue
        tap.check(q[2] == 1.0, f"{state}: queue has one thread per instance",
                  f"{q[2]}")
        tap.check(t[2] == 1.0 + 1.0 / N,
                  f"{state}: {N} tbqueue have one copy thread for all",
                  f"{t[2]} threads per instance")
        tap.check(t[0] * N >= 256, f"{state}: the group keeps sink-min-bytes "
                  "(256 KiB) resident, once", f"{t[0] * N} KiB")
    sys.exit(tap.done())


main()

#!/usr/bin/env python3
"""Every gst-launch-1.0 line in the Recipes section of docs/element.md runs
to the end: exit status 0, no ERROR message, and each file it writes
(filesink location=) is there and not empty.  The lines run as written, in
a temporary directory, with the plugin from the build (GST_PLUGIN_PATH).
Prints TAP.  usage: check-recipes.py DOC_PATH
"""
import os
import re
import shlex
import subprocess
import sys

from taplib import Tap  # tests/python
import tempfile

doc = open(sys.argv[1], encoding="utf-8").read()
section = doc.split("\n## Recipes\n", 1)[-1].split("\n## ", 1)[0]
# (recipe title, line) for each line, titled by the ### heading above it
lines = []
for part in section.split("\n### ")[1:]:
    title = part.splitlines()[0]
    lines += [(title, m.group(1)) for m in
              re.finditer(r"^(gst-launch-1\.0 .*)$", part, re.M)]
tap = Tap()
check = tap.check

check(len(lines) >= 5, "the Recipes section has its five pipelines",
      f"found {len(lines)}")
for title, line in lines:
    args = shlex.split(line)
    with tempfile.TemporaryDirectory(prefix="tbq-recipe-") as tmp:
        try:
            r = subprocess.run(args, cwd=tmp, capture_output=True, text=True,
                               timeout=240)
        except subprocess.TimeoutExpired:
            check(False, f"runs: {title}", "no EOS within 240 s")
            continue
        out = r.stdout + r.stderr
        check(r.returncode == 0 and "ERROR" not in out, f"runs: {title}",
              f"exit status {r.returncode}\n{line}\n{out[-2000:]}")
        for name in re.findall(r"filesink location=(\S+)", line):
            path = os.path.join(tmp, name)
            check(os.path.exists(path) and os.path.getsize(path) > 0,
                  f"writes {name}: {title}")

sys.exit(tap.done())

#!/usr/bin/env python3
"""Every gst-launch-1.0 line in the Recipes section of docs/element.md runs
to the end: exit status 0, no ERROR message, and each file it writes
(filesink location=) is there and not empty.  The lines run as written, in
a temporary directory, with the plugin from the build (GST_PLUGIN_PATH),
but for a hardware source: a line written for a real camera (v4l2src and
its properties) runs with a live test source of the same caps in its
place (STAND_INS), which delivers at the nominal rate as the camera does
and ends the run with num-buffers.  A receiver (a line whose source is
tcpserversrc, bound to 127.0.0.1) runs in the background while the line
after it, its sender, runs; it must end by itself (the sender's end
closes the connection: EOS) with exit status 0.  Prints TAP.
usage: check-recipes.py DOC_PATH
"""
import os
import re
import shlex
import subprocess
import sys

from taplib import Tap  # tests/python
import tempfile

# A hardware source and what stands in for it: the source's own
# properties (device=, io-mode=) go with it; the caps that follow it on the
# line still apply.
STAND_INS = {"v4l2src": ["videotestsrc", "is-live=true", "num-buffers=90"]}


def stand_in(args):
    out, i = [], 0
    while i < len(args):
        if args[i] in STAND_INS:
            out += STAND_INS[args[i]]
            i += 1
            while i < len(args) and args[i] != "!" and "=" in args[i]:
                i += 1
            continue
        out.append(args[i])
        i += 1
    return out


doc = open(sys.argv[1], encoding="utf-8").read()
section = doc.split("\n## Recipes\n", 1)[-1].split("\n## ", 1)[0]
# (recipe title, line) for each line, titled by the ### heading above it
lines = []
for part in section.split("\n### ")[1:]:
    title = part.splitlines()[0]
    lines += [(title, m.group(1)) for m in
              re.finditer(r"^ *(gst-launch-1\.0 .* ! .*)$", part, re.M)]
tap = Tap()
check = tap.check

check(len(lines) >= 9, "the Recipes section has its nine pipelines",
      f"found {len(lines)}")
def start_receiver(args, tmp):
    """Start a receiver line; return it once it listens (prerolling), or
    None with a failed check."""
    p = subprocess.Popen(args, cwd=tmp, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    seen = []
    for out in p.stdout:
        seen.append(out)
        if "PREROLLING" in out:
            return p, seen
    p.wait()
    check(False, f"receiver listens: {shlex.join(args)}", "".join(seen))
    return None, seen


def end_receiver(p, seen, title):
    try:
        rest, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, _ = p.communicate()
        check(False, f"the receiver ends with its sender: {title}",
              "no EOS within 60 s after the sender's end")
        return
    out = "".join(seen) + rest
    check(p.returncode == 0 and "ERROR" not in out,
          f"the receiver ends with its sender: {title}",
          f"exit status {p.returncode}\n{out[-2000:]}")


receiver = None
for title, line in lines:
    args = stand_in(shlex.split(line))
    if "tcpserversrc" in args[1:2]:
        check("host=127.0.0.1" in args, f"the receiver binds 127.0.0.1: {title}")
        receiver = start_receiver(args, tempfile.gettempdir())
        continue
    with tempfile.TemporaryDirectory(prefix="tbq-recipe-") as tmp:
        try:
            r = subprocess.run(args, cwd=tmp, capture_output=True, text=True,
                               timeout=240)
        except subprocess.TimeoutExpired:
            check(False, f"runs: {title}", "no EOS within 240 s")
            r = None
        if r is not None:
            out = r.stdout + r.stderr
            check(r.returncode == 0 and "ERROR" not in out, f"runs: {title}",
                  f"exit status {r.returncode}\n{shlex.join(args)}\n"
                  f"{out[-2000:]}")
            for name in re.findall(r"filesink location=(\S+)", line):
                path = os.path.join(tmp, name)
                check(os.path.exists(path) and os.path.getsize(path) > 0,
                      f"writes {name}: {title}")
    if receiver is not None:
        p, seen = receiver
        receiver = None
        if p is not None:
            end_receiver(p, seen, title)

sys.exit(tap.done())

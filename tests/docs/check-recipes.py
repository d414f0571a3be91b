#!/usr/bin/env python3
"""Every recipe in the Recipes section of a document (docs/element.md,
docs/parallel.md) runs to the end: exit status 0, no ERROR message, and
each file it writes (filesink location=, or the first file of a
multifilesink location=...%05d...) is there and not empty.  A recipe is a
### heading and the commands under it: each gst-launch-1.0 line, and each
Python script given on a `python3 - <<'EOF'` block (run by the system
Python, which has PyGObject: its output must show no Traceback, CRITICAL
or ERROR either).  The commands of one recipe run in order, as written, in
one temporary directory (a recipe may make the files its next command
reads), with the plugin from the build (GST_PLUGIN_PATH), but for a
hardware source: a line written for a real camera (v4l2src and its
properties) runs with a live test source of the same caps in its place
(STAND_INS), which delivers at the nominal rate as the camera does and
ends the run with num-buffers.  A receiver (a line whose source is
tcpserversrc, bound to 127.0.0.1) runs in the background while the line
after it, its sender, runs; it must end by itself (the sender's end
closes the connection: EOS) with exit status 0.  Prints TAP.
usage: check-recipes.py DOC_PATH COMMANDS
(COMMANDS: how many commands the section has, at least.)  The environment
variable TBQ_RECIPE_PYTHON names the Python that runs the scripts
(default: python3 on PATH).
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
expected = int(sys.argv[2])
section = doc.split("\n## Recipes\n", 1)[-1].split("\n## ", 1)[0]
LAUNCH = re.compile(r"^ *(gst-launch-1\.0 .* ! .*)$", re.M)
HEREDOC = re.compile(r"^python3 - <<'(\w+)'\n.*?\n\1$", re.M | re.S)
# recipes: (title, [("launch", line) | ("python", script), ...]), in order
recipes = []
for part in section.split("\n### ")[1:]:
    title = part.splitlines()[0]
    scripts = [(m.start(), m.end(), ("python", m.group(0)))
               for m in HEREDOC.finditer(part)]
    lines = [(m.start(), m.end(), ("launch", m.group(1)))
             for m in LAUNCH.finditer(part)
             if not any(a <= m.start() < b for a, b, _ in scripts)]
    recipes.append((title, [c for _, _, c in sorted(scripts + lines)]))
tap = Tap()
check = tap.check

n_commands = sum(len(c) for _, c in recipes)
check(n_commands >= expected,
      f"the Recipes section has its {expected} commands",
      f"found {n_commands}")


def python_env(tmp):
    """The environment of a Python recipe: `python3` is the Python that
    has PyGObject (TBQ_RECIPE_PYTHON)."""
    env = dict(os.environ)
    python = os.environ.get("TBQ_RECIPE_PYTHON")
    if python:
        bindir = os.path.join(tmp, ".python")
        os.mkdir(bindir)
        os.symlink(python, os.path.join(bindir, "python3"))
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def written_files(line):
    """The files a line writes: filesink's, and multifilesink's first."""
    names = re.findall(r"(?<!multi)filesink location=([^\s\"')]+)", line)
    for pattern in re.findall(r"multifilesink location=([^\s\"')]+)", line):
        try:
            names.append(pattern % 0)
        except (TypeError, ValueError):
            names.append(pattern)
    return names


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
for title, commands in recipes:
    with tempfile.TemporaryDirectory(prefix="tbq-recipe-") as tmp:
        for kind, command in commands:
            if kind == "python":
                try:
                    r = subprocess.run(["bash", "-c", command], cwd=tmp,
                                       env=python_env(tmp),
                                       capture_output=True, text=True,
                                       timeout=240)
                except subprocess.TimeoutExpired:
                    check(False, f"runs: {title}", "no end within 240 s")
                    continue
                out = r.stdout + r.stderr
                check(r.returncode == 0 and not any(
                    w in out for w in ("ERROR", "CRITICAL", "Traceback")),
                    f"runs: {title}",
                    f"exit status {r.returncode}\n{out[-2000:]}")
                for name in written_files(command):
                    path = os.path.join(tmp, name)
                    check(os.path.exists(path) and os.path.getsize(path) > 0,
                          f"writes {name}: {title}")
                continue
            line = command
            args = stand_in(shlex.split(line))
            if "tcpserversrc" in args[1:2]:
                check("host=127.0.0.1" in args,
                      f"the receiver binds 127.0.0.1: {title}")
                receiver = start_receiver(args, tempfile.gettempdir())
                continue
            try:
                r = subprocess.run(args, cwd=tmp, capture_output=True,
                                   text=True, timeout=240)
            except subprocess.TimeoutExpired:
                check(False, f"runs: {title}", "no EOS within 240 s")
                r = None
            if r is not None:
                out = r.stdout + r.stderr
                check(r.returncode == 0 and "ERROR" not in out,
                      f"runs: {title}",
                      f"exit status {r.returncode}\n{shlex.join(args)}\n"
                      f"{out[-2000:]}")
                for name in written_files(line):
                    path = os.path.join(tmp, name)
                    check(os.path.exists(path) and os.path.getsize(path) > 0,
                          f"writes {name}: {title}")
            if receiver is not None:
                p, seen = receiver
                receiver = None
                if p is not None:
                    end_receiver(p, seen, title)

sys.exit(tap.done())

#!/usr/bin/python3
"""`meson devenv -C BUILDDIR` lets GStreamer tools find this build's
plugin (the tbqueue element and the tbqlevels tracer) with no
GST_PLUGIN_PATH of the user's, as the README says.  Prints TAP.

usage: test-devenv.py MESON BUILDDIR
"""
import os
import subprocess
import sys
import tempfile

from taplib import Tap


def inspect(cmd, feature, registry=None):
    """gst-inspect-1.0 `feature`, without the caller's GStreamer paths."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GST_PLUGIN_PATH", "GST_PLUGIN_SYSTEM_PATH",
                                "GST_REGISTRY"))}
    if registry:
        env["GST_REGISTRY"] = registry
    return subprocess.run(cmd + ["gst-inspect-1.0", feature], env=env,
                          capture_output=True, text=True, timeout=300)


def main():
    meson, builddir = sys.argv[1], os.path.realpath(sys.argv[2])
    plugin = os.path.join(builddir, "gst", "libgsttbqueue.so")
    devenv = [meson, "devenv", "-C", builddir]
    tap = Tap()

    r = inspect(devenv, "tbqueue")
    tap.check(r.returncode == 0 and "Factory Details" in r.stdout,
              "meson devenv: gst-inspect-1.0 finds tbqueue", r.stdout + r.stderr)
    tap.check(f"Filename                 {plugin}" in r.stdout,
              "meson devenv: tbqueue comes from the build tree",
              r.stdout + r.stderr)
    r = inspect(devenv, "tbqlevels")
    tap.check(r.returncode == 0 and "GstTbqLevelsTracer" in r.stdout
              and plugin in r.stdout,
              "meson devenv: the tbqlevels tracer comes from the build tree",
              r.stdout + r.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        r = inspect([], "tbqueue", os.path.join(tmp, "registry.bin"))
    tap.check(plugin not in r.stdout,
              "without devenv the build tree's plugin is not found",
              r.stdout)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())

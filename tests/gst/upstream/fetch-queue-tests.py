#!/usr/bin/env python3
"""Take GStreamer's own queue tests from the source package Debian ships.

usage: fetch-queue-tests.py WORKDIR GST_VERSION OUT_QUEUE_C OUT_QUEUE_ERROR_C

Downloads (once per build directory, into WORKDIR) the gstreamer1.0 source
package of the installed libgstreamer1.0-0 with `apt-get source
--download-only`, which needs a deb-src entry (`tools/bootstrap test` adds
one), and extracts from its upstream tarball

  tests/check/elements/queue.c     -> OUT_QUEUE_C, adapted (see below)
  tests/check/pipelines/queue-error.c -> OUT_QUEUE_ERROR_C, unchanged

Nothing of GStreamer's source is kept in the repository.  The one textual
change to queue.c: each buffer-identity assert `fail_unless (buffer ==
bufferN);` becomes `TBQ_UPSTREAM_SAME_BUFFER (buffer, bufferN);`
(upstream-shim.h), which is the same assert when tbqueue passes buffers by
reference and, when it may copy them (transfer=copy, auto), prints the
difference instead: a copy is by definition another buffer.  Every other
line is GStreamer's.  The script fails if the asserts it expects are not
there, or if Debian's patches touch either file.
"""
import glob
import os
import re
import subprocess
import sys
import tarfile

IDENTITY = re.compile(r"fail_unless \(buffer == (buffer\d)\);")
# test_non_leaky_overrun, test_leaky_upstream, test_leaky_downstream: two
# each; test_newsegment (compiled out upstream): one.  A different count
# means the upstream file changed: look again.
EXPECTED_IDENTITY_ASSERTS = 7
FILES = ("tests/check/elements/queue.c", "tests/check/pipelines/queue-error.c")


def die(msg):
    print(f"fetch-queue-tests: {msg}", file=sys.stderr)
    sys.exit(1)


def installed_source_version():
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${source:Version}", "libgstreamer1.0-0"],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        die(f"cannot ask dpkg which GStreamer is installed: {e}")
    return out


def download(workdir, debver, upstream):
    orig = os.path.join(workdir, f"gstreamer1.0_{upstream}.orig.tar.xz")
    if os.path.exists(orig):
        return orig
    os.makedirs(workdir, exist_ok=True)
    # The installed version first; else whatever apt has for the same
    # upstream release (Debian revisions do not touch these tests: checked
    # below).
    for spec in (f"gstreamer1.0={debver}", "gstreamer1.0"):
        r = subprocess.run(["apt-get", "source", "--download-only", spec],
                           cwd=workdir, capture_output=True, text=True)
        if r.returncode == 0 and os.path.exists(orig):
            return orig
    die(f"`apt-get source --download-only gstreamer1.0={debver}` failed "
        f"(no deb-src entry? run tools/bootstrap test):\n{r.stderr.strip()}")


def check_debian_patches(workdir):
    for deb in glob.glob(os.path.join(workdir, "gstreamer1.0_*.debian.tar.*")):
        with tarfile.open(deb) as t:
            for m in t.getmembers():
                if not m.isfile() or "/patches/" not in "/" + m.name:
                    continue
                text = t.extractfile(m).read().decode("utf-8", "replace")
                for f in FILES:
                    if f in text:
                        die(f"Debian patch {m.name} touches {f}: apply it")


def main(argv):
    workdir, gst_version, out_queue, out_error = argv
    debver = installed_source_version()
    upstream = re.sub(r"^\d+:", "", debver).rsplit("-", 1)[0]
    upstream = upstream.split("+")[0]
    if upstream != gst_version:
        die(f"libgstreamer1.0-0 is {debver}, pkg-config says {gst_version}")
    orig = download(workdir, debver, upstream)
    check_debian_patches(workdir)
    with tarfile.open(orig) as t:
        src = {f: t.extractfile(f"gstreamer-{upstream}/{f}").read().decode()
               for f in FILES}
    origin = f"/* From {os.path.basename(orig)}: {{}} (generated) */\n"
    queue_c, n = IDENTITY.subn(r"TBQ_UPSTREAM_SAME_BUFFER (buffer, \1);",
                               src[FILES[0]])
    if n != EXPECTED_IDENTITY_ASSERTS:
        die(f"{FILES[0]}: {n} buffer-identity asserts, expected "
            f"{EXPECTED_IDENTITY_ASSERTS}: the file changed, review the "
            "adaptation")
    with open(out_queue, "w", encoding="utf-8") as f:
        f.write(origin.format(FILES[0]) + queue_c)
    with open(out_error, "w", encoding="utf-8") as f:
        f.write(origin.format(FILES[1]) + src[FILES[1]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

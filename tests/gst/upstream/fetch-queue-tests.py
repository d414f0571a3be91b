#!/usr/bin/env python3
"""Take GStreamer's own queue tests from the source package Debian ships.

usage: fetch-queue-tests.py GST_SOURCE WORKDIR GST_VERSION OUT_QUEUE_C
                            OUT_QUEUE_ERROR_C OUT_QUEUE2_C OUT_PIPELINE_C

Takes, with GST_SOURCE (tools/gst-source: the download of the gstreamer1.0
source package of the installed version into WORKDIR, and its checks),

  tests/check/elements/queue.c     -> OUT_QUEUE_C, adapted (see below)
  tests/check/pipelines/queue-error.c -> OUT_QUEUE_ERROR_C, unchanged
  tests/check/elements/queue2.c    -> OUT_QUEUE2_C, unchanged
  tests/check/gst/gstpipeline.c    -> OUT_PIPELINE_C, unchanged (its
                                      processing-deadline test puts a
                                      queue in a live pipeline)

Nothing of GStreamer's source is kept in the repository.  The one textual
change to queue.c: each buffer-identity assert `fail_unless (buffer ==
bufferN);` becomes `TBQ_UPSTREAM_SAME_BUFFER (buffer, bufferN);`
(upstream-shim.h), which is the same assert when tbqueue passes buffers by
reference and, when it may copy them (transfer=copy, auto), prints the
difference instead: a copy is by definition another buffer.  Every other
line is GStreamer's.  The script fails if the asserts it expects are not
there.
"""
import os
import re
import subprocess
import sys

IDENTITY = re.compile(r"fail_unless \(buffer == (buffer\d)\);")
# test_non_leaky_overrun, test_leaky_upstream, test_leaky_downstream: two
# each; test_newsegment (compiled out upstream): one.  A different count
# means the upstream file changed: look again.
EXPECTED_IDENTITY_ASSERTS = 7
QUEUE_C = "tests/check/elements/queue.c"
QUEUE_ERROR_C = "tests/check/pipelines/queue-error.c"
QUEUE2_C = "tests/check/elements/queue2.c"
PIPELINE_C = "tests/check/gst/gstpipeline.c"


def copy_unchanged(origin, out):
    """OUT.orig, as taken, becomes OUT with a line naming its origin."""
    with open(out + ".orig", encoding="utf-8") as f:
        text = f.read()
    with open(out, "w", encoding="utf-8") as f:
        f.write(origin + text)
    os.unlink(out + ".orig")


def main(argv):
    (gst_source, workdir, gst_version, out_queue, out_error, out_queue2,
     out_pipeline) = argv
    raw_queue = out_queue + ".orig"
    r = subprocess.run([sys.executable, gst_source, workdir, gst_version,
                        f"{QUEUE_C}={raw_queue}",
                        f"{QUEUE_ERROR_C}={out_error}.orig",
                        f"{QUEUE2_C}={out_queue2}.orig",
                        f"{PIPELINE_C}={out_pipeline}.orig"])
    if r.returncode != 0:
        return r.returncode
    origin = "/* From GStreamer {} {}: {} (generated) */\n"
    with open(raw_queue, encoding="utf-8") as f:
        queue_c, n = IDENTITY.subn(r"TBQ_UPSTREAM_SAME_BUFFER (buffer, \1);",
                                   f.read())
    if n != EXPECTED_IDENTITY_ASSERTS:
        print(f"fetch-queue-tests: {QUEUE_C}: {n} buffer-identity asserts, "
              f"expected {EXPECTED_IDENTITY_ASSERTS}: the file changed, "
              "review the adaptation", file=sys.stderr)
        return 1
    with open(out_queue, "w", encoding="utf-8") as f:
        f.write(origin.format(gst_version, "source package", QUEUE_C)
                + queue_c)
    os.unlink(raw_queue)
    for member, out in ((QUEUE_ERROR_C, out_error), (QUEUE2_C, out_queue2),
                        (PIPELINE_C, out_pipeline)):
        copy_unchanged(origin.format(gst_version, "source package", member),
                       out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

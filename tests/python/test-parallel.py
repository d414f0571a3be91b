#!/usr/bin/python3
"""tbqparallel from Python, as an application uses it: made by
Gst.parse_launch and by Gst.ElementFactory with its properties set, its
workers run a description (identity with a sleep, so that they overlap),
the frames come out every one in order (videotestsrc numbers them in
their offsets), the properties it forwards reach its split, and a worker
description that does not parse, or a worker without a src pad, fails the
state change with an error that says so (and nothing crashes: NULL again
works).  Nothing here depends on timing.  Prints TAP."""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

from taplib import Tap  # noqa: E402

FRAMES = 120
CAPS = "video/x-raw,format=GRAY8,width=64,height=48,framerate=30/1"


def run(pipeline, sink, at_eos=None):
    """Play to EOS (then call at_eos(), still playing); the offsets of
    the frames that reached `sink` (an appsink), and the error message,
    if any."""
    offsets = []
    sink.connect("new-sample", lambda s: (
        offsets.append(s.emit("pull-sample").get_buffer().offset),
        Gst.FlowReturn.OK)[1])
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if at_eos is not None and msg is not None \
            and msg.type == Gst.MessageType.EOS:
        at_eos()
    pipeline.set_state(Gst.State.NULL)
    if msg is None:
        return offsets, "no EOS within 60 s"
    if msg.type == Gst.MessageType.ERROR:
        return offsets, msg.parse_error()[0].message
    return offsets, None


def appsink():
    sink = Gst.ElementFactory.make("appsink")
    sink.set_property("emit-signals", True)
    sink.set_property("sync", False)
    return sink


def check_stream(tap, offsets, err, name):
    tap.check(err is None, f"{name}: the stream plays to EOS", err)
    tap.check(offsets == list(range(FRAMES)),
              f"{name}: every frame comes out, in order",
              f"{len(offsets)} frames: {offsets[:20]}...")


def from_description(tap):
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={FRAMES} ! {CAPS} ! tbqparallel name=par "
        "workers=3 worker=\"identity sleep-time=2000\" max-in-flight=4 "
        "max-size-buffers=10 max-size-time=50000000 ! appsink name=out "
        "emit-signals=true sync=false")
    par = pipeline.get_by_name("par")
    split = par.get_by_name("split")
    tap.check(par.get_property("workers") == 3
              and par.get_property("worker") == "identity sleep-time=2000",
              "a description: workers and worker as set",
              f"{par.get_property('workers')}, {par.get_property('worker')!r}")
    tap.check(split.get_property("max-in-flight") == 4
              and split.get_property("max-size-buffers") == 10
              and split.get_property("max-size-time") == 50000000,
              "a description: max-in-flight and the limits reach the split",
              f"{split.get_property('max-in-flight')}, "
              f"{split.get_property('max-size-buffers')}, "
              f"{split.get_property('max-size-time')}")
    stats = []
    offsets, err = run(pipeline, pipeline.get_by_name("out"), lambda:
                       stats.append(par.get_by_name("join")
                                    .get_property("stats")))
    check_stream(tap, offsets, err, "a description")
    # The workers were made at NULL to READY: one identity per worker.
    identities = [e for e in par.iterate_recurse()
                  if e.get_factory().get_name() == "identity"]
    tap.check(len(identities) == 3, "a description: three workers",
              f"{len(identities)} identity elements")
    stats = stats[0]
    tap.check(stats.get_value("gaps") == 0 and stats.get_value("late") == 0
              and stats.get_value("order") == "sequence",
              "a description: the join followed its split, nothing lost",
              stats.to_string())


def from_properties(tap):
    pipeline = Gst.Pipeline()
    src = Gst.ElementFactory.make("videotestsrc")
    src.set_property("num-buffers", FRAMES)
    caps = Gst.ElementFactory.make("capsfilter")
    caps.set_property("caps", Gst.Caps.from_string(CAPS))
    par = Gst.ElementFactory.make("tbqparallel")
    tap.check(par.get_property("workers") == 0
              and par.get_property("worker") == "identity"
              and par.get_property("max-in-flight") == 0,
              "properties: the defaults (0: one worker per CPU, identity, "
              "a window of twice the workers)",
              f"{par.get_property('workers')}, "
              f"{par.get_property('worker')!r}, "
              f"{par.get_property('max-in-flight')}")
    par.set_property("workers", 2)
    par.set_property("worker", "identity sleep-time=1000 ! identity")
    par.set_property("max-in-flight", 3)
    par.set_property("max-size-buffers", 5)
    sink = appsink()
    for e in (src, caps, par, sink):
        pipeline.add(e)
    src.link(caps)
    caps.link(par)
    par.link(sink)
    tap.check(par.get_by_name("split").get_property("max-in-flight") == 3
              and par.get_by_name("split").get_property("max-size-buffers")
              == 5, "properties: forwarded to the split as they are set")
    offsets, err = run(pipeline, sink)
    check_stream(tap, offsets, err, "properties")
    identities = [e for e in par.iterate_recurse()
                  if e.get_factory().get_name() == "identity"]
    tap.check(len(identities) == 4, "properties: two workers of two "
              "elements each", f"{len(identities)} identity elements")


def bad_worker(tap, worker, says, name):
    pipeline = Gst.Pipeline()
    par = Gst.ElementFactory.make("tbqparallel")
    par.set_property("workers", 2)
    par.set_property("worker", worker)
    pipeline.add(par)
    ret = pipeline.set_state(Gst.State.PLAYING)
    tap.check(ret == Gst.StateChangeReturn.FAILURE,
              f"{name}: the state change fails", str(ret))
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    text = msg.parse_error()[0].message if msg else ""
    tap.check(says in text and worker in text,
              f"{name}: the error quotes the worker and says why",
              repr(text))
    tap.check(pipeline.set_state(Gst.State.NULL)
              == Gst.StateChangeReturn.SUCCESS, f"{name}: NULL again")


def main():
    Gst.init(None)
    tap = Tap()
    if not tap.check(Gst.ElementFactory.find("tbqparallel") is not None,
                     "tbqparallel is found",
                     f"GST_PLUGIN_PATH: {os.environ.get('GST_PLUGIN_PATH')}"):
        return tap.done()
    tap.run("tbqparallel from a description", from_description, tap)
    tap.run("tbqparallel from properties", from_properties, tap)
    tap.run("a worker that does not parse", bad_worker, tap,
            "identity ! ! identity", "Cannot make the worker",
            "a description that does not parse")
    tap.run("a worker without a src pad", bad_worker, tap, "fakesink",
            "one unlinked src pad", "a worker without a src pad")
    return tap.done()


sys.exit(main())

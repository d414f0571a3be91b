#!/usr/bin/python3
"""tbqueue from a Python (PyGObject) application.

What an application does with tbqueue, in three short demos:

1. A producer and a slow consumer: appsrc ! tbqueue ! appsink.  The
   element's properties are set by name (enums by their nick:
   transfer="copy", leaky="upstream"), its four signals (underrun, running,
   overrun, pushing) are connected, and its `stats` property is read as a
   Gst.Structure.
2. An existing text pipeline whose `queue` elements become `tbqueue`
   (use_tbqueue), built with Gst.parse_launch.
3. Both pipelines run, and their output is compared.

Run it with the system Python (Debian: python3-gi, python3-gst-1.0,
gir1.2-gst-plugins-base-1.0), from a build tree:

    GST_PLUGIN_PATH=$PWD/build/gst /usr/bin/python3 \\
        examples/python/tbqueue-example.py

or through meson devenv:

    meson devenv -C build --workdir . /usr/bin/python3 \\
        examples/python/tbqueue-example.py

The functions below are also what tests/python/test-example.py checks.
"""
import re
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
# GstApp: the methods of appsrc and appsink (try_pull_sample, is_eos).
from gi.repository import Gst, GstApp  # noqa: E402,F401

# How long any wait may take before we give up (a hang, never a speed).
TIMEOUT = 20

SIGNALS = ("underrun", "running", "overrun", "pushing")


class QueueSignals:
    """Counts the four queue signals of an element.  They are emitted from
    the element's streaming threads: keep the handlers short."""

    def __init__(self, element):
        self.lock = threading.Lock()
        self.counts = dict.fromkeys(SIGNALS, 0)
        self.events = {name: threading.Event() for name in SIGNALS}
        for name in SIGNALS:
            element.connect(name, self._on_signal, name)

    def _on_signal(self, element, name):
        with self.lock:
            self.counts[name] += 1
        self.events[name].set()

    def wait(self, name):
        """Wait until `name` has been emitted at least once."""
        if not self.events[name].wait(TIMEOUT):
            raise TimeoutError(f"no {name} signal within {TIMEOUT} s")

    def snapshot(self):
        with self.lock:
            return dict(self.counts)


def read_stats(element):
    """The element's `stats` property (a Gst.Structure) as a dict."""
    stats = element.get_property("stats")
    return {stats.nth_field_name(i): stats.get_value(stats.nth_field_name(i))
            for i in range(stats.n_fields())}


# A queue element in a gst-launch description: at the start, after a link
# "!" or a bin's "(", followed by a property, a link or the end.  queue2,
# multiqueue and names such as name=queue0 are left alone.
QUEUE_ELEMENT = re.compile(r"(^|!|\()(\s*)queue(?=\s|!|\)|$)")


def use_tbqueue(description):
    """The same pipeline with every queue element replaced by tbqueue
    (which takes queue's properties)."""
    return QUEUE_ELEMENT.sub(r"\1\2tbqueue", description)


def sensor_buffer(index, size):
    """A buffer of `size` bytes, every byte `index % 256`, 10 ms long."""
    buf = Gst.Buffer.new_allocate(None, size, None)
    buf.fill(0, bytes([index % 256]) * size)
    buf.pts = index * 10 * Gst.MSECOND
    buf.duration = 10 * Gst.MSECOND
    return buf


def wait_event(pad, event_type):
    """A threading.Event set when an event of `event_type` passes `pad`
    (before the element handles it: everything before it has been)."""
    seen = threading.Event()

    def probe(pad, info):
        if info.get_event().type == event_type:
            seen.set()
        return Gst.PadProbeReturn.OK

    pad.add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, probe)
    return seen


def pull_all(appsink):
    """Every buffer appsink delivers until EOS, as (pts, bytes)."""
    out = []
    while True:
        sample = appsink.try_pull_sample(TIMEOUT * Gst.SECOND)
        if sample is None:
            if appsink.is_eos():
                return out
            raise TimeoutError("appsink: no buffer and no EOS")
        buf = sample.get_buffer()
        out.append((buf.pts, buf.extract_dup(0, buf.get_size())))


def slow_consumer(pushed=50, limit=5, size=100):
    """appsrc pushes `pushed` buffers while nobody pulls from appsink, into
    a tbqueue that holds at most `limit` buffers and leaks new ones when
    full; then the consumer pulls everything to EOS.  Returns what was
    seen: signal counts, stats when all was pushed and after EOS, and the
    delivered buffers."""
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time caps=application/x-sensor "
        "! tbqueue name=queue ! appsink name=sink sync=false max-buffers=1")
    src = pipeline.get_by_name("src")
    queue = pipeline.get_by_name("queue")
    sink = pipeline.get_by_name("sink")
    # Properties by name; enums take their nick.
    queue.set_property("transfer", "copy")
    queue.set_property("leaky", "upstream")
    queue.set_property("max-size-buffers", limit)
    signals = QueueSignals(queue)
    all_in = wait_event(queue.get_static_pad("sink"), Gst.EventType.EOS)

    pipeline.set_state(Gst.State.PLAYING)
    try:
        signals.wait("underrun")    # started empty: waits for data
        src.emit("push-buffer", sensor_buffer(0, size))
        signals.wait("pushing")     # data again
        for i in range(1, pushed):
            src.emit("push-buffer", sensor_buffer(i, size))
        src.emit("end-of-stream")
        signals.wait("overrun")     # nobody pulls: it fills up
        if not all_in.wait(TIMEOUT):
            raise TimeoutError("EOS did not reach tbqueue")
        backlog = read_stats(queue)
        delivered = pull_all(sink)
        drained = read_stats(queue)
    finally:
        pipeline.set_state(Gst.State.NULL)
    return {"signals": signals.snapshot(), "backlog": backlog,
            "drained": drained, "delivered": delivered, "pushed": pushed,
            "limit": limit, "size": size}


def run_launch(description, sinks):
    """Run a text pipeline to EOS; returns, per appsink name, the buffers
    it received as (pts, dts, duration, offset, flags, bytes), and the
    factory names of the pipeline's elements."""
    pipeline = Gst.parse_launch(description)
    received = {name: [] for name in sinks}

    def on_sample(appsink, name):
        buf = appsink.pull_sample().get_buffer()
        received[name].append((buf.pts, buf.dts, buf.duration, buf.offset,
                               int(buf.get_flags()),
                               buf.extract_dup(0, buf.get_size())))
        return Gst.FlowReturn.OK

    for name in sinks:
        appsink = pipeline.get_by_name(name)
        appsink.set_property("emit-signals", True)
        appsink.connect("new-sample", on_sample, name)
    factories = [e.get_factory().get_name() for e in pipeline.iterate_recurse()]
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    try:
        msg = bus.timed_pop_filtered(TIMEOUT * Gst.SECOND,
                                     Gst.MessageType.EOS | Gst.MessageType.ERROR)
        if msg is None or msg.type != Gst.MessageType.EOS:
            raise RuntimeError(f"{description}: "
                               f"{msg.parse_error() if msg else 'no EOS'}")
    finally:
        pipeline.set_state(Gst.State.NULL)
    return received, factories


# Small audio buffers (copied by tbqueue) and video frames (referenced),
# through two queues behind a tee.
DEMO_PIPELINE = (
    "audiotestsrc num-buffers=60 samplesperbuffer=64 "
    "! audio/x-raw,format=S16LE,rate=8000,channels=1 ! tee name=t "
    "t. ! queue ! appsink name=small sync=false "
    "t. ! queue max-size-buffers=4 ! audioconvert "
    "! audio/x-raw,format=F32LE ! appsink name=converted sync=false")
DEMO_SINKS = ("small", "converted")


def main():
    Gst.init(None)
    if Gst.ElementFactory.find("tbqueue") is None:
        print("tbqueue not found: set GST_PLUGIN_PATH to the build's gst/ "
              "directory, or use meson devenv", file=sys.stderr)
        return 1

    r = slow_consumer()
    print("1. producer and slow consumer")
    print(f"   signals: {r['signals']}")
    b = r["backlog"]
    print(f"   all pushed: {b['current-level-buffers']} buffers queued "
          f"(peak {b['peak-level-buffers']}), {b['dropped-upstream']} "
          f"leaked upstream, {b['buffers-copied']} copied")
    print(f"   delivered {len(r['delivered'])} of {r['pushed']} buffers")

    print("2. queue -> tbqueue in a text pipeline")
    swapped = use_tbqueue(DEMO_PIPELINE)
    print(f"   {swapped}")
    out_queue, _ = run_launch(DEMO_PIPELINE, DEMO_SINKS)
    out_tbqueue, factories = run_launch(swapped, DEMO_SINKS)
    print(f"   elements: {', '.join(sorted(set(factories)))}")
    same = out_queue == out_tbqueue
    print(f"3. same output as with queue: {'yes' if same else 'NO'} "
          f"({', '.join(f'{n}: {len(out_queue[n])} buffers' for n in DEMO_SINKS)})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""examples/python/tbqueue-example.py does what it says: the signals fire,
the stats add up with what flowed, and a pipeline whose queue elements
became tbqueue gives the same output.  Prints TAP."""
import importlib.util
import os
import subprocess
import sys

from taplib import SOURCE_ROOT, Tap

EXAMPLE = os.path.join(SOURCE_ROOT, "examples", "python", "tbqueue-example.py")

spec = importlib.util.spec_from_file_location("tbqueue_example", EXAMPLE)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
Gst = example.Gst

# Stats fields the example and the tbqlevels tracer read.
STATS_FIELDS = [
    "current-level-buffers", "current-level-bytes", "current-level-time",
    "peak-level-buffers", "peak-level-bytes", "peak-level-time",
    "records-in", "records-out", "buffers-copied", "buffers-referenced",
    "copy-fallbacks", "dropped-upstream", "dropped-downstream", "overruns",
    "underruns", "source-blocks", "source-blocks-in-use", "sink-blocks",
    "sink-blocks-in-use", "sink-block-size", "sink-bytes-in-use",
]


def check_slow_consumer(tap):
    r = tap.run("the slow-consumer scenario runs", example.slow_consumer)
    if r is None:
        return
    sig, backlog, drained = r["signals"], r["backlog"], r["drained"]
    delivered, pushed, limit = r["delivered"], r["pushed"], r["limit"]

    for name in example.SIGNALS:
        tap.check(sig[name] >= 1, f"signal {name} fired", f"counts: {sig}")
    tap.check(sig["overrun"] == drained["overruns"],
              "one overrun signal per overrun counted in stats",
              f"signals {sig['overrun']}, stats {drained['overruns']}")
    tap.check(sig["underrun"] == drained["underruns"],
              "one underrun signal per underrun counted in stats",
              f"signals {sig['underrun']}, stats {drained['underruns']}")

    missing = [f for f in STATS_FIELDS if f not in backlog]
    tap.check(not missing, "stats has the documented fields", f"missing {missing}")
    tap.check(all(isinstance(v, int) for v in backlog.values()),
              "every stats field is a number")

    tap.check(len(delivered) + drained["dropped-upstream"] == pushed,
              "every buffer was delivered or counted as leaked upstream",
              f"{len(delivered)} delivered + {drained['dropped-upstream']} "
              f"leaked != {pushed} pushed")
    tap.check(drained["dropped-downstream"] == 0, "nothing leaked downstream")
    tap.check(len(delivered) >= limit,
              "at least a full queue was delivered",
              f"{len(delivered)} < {limit}")
    expect = [(i * 10 * Gst.MSECOND, bytes([i]) * r["size"]) for i in range(pushed)]
    tap.check(delivered[0] == expect[0] and all(d in expect for d in delivered)
              and delivered == sorted(delivered),
              "delivered buffers are pushed ones, intact and in order")

    tap.check(backlog["peak-level-buffers"] == limit,
              "the queue filled up to max-size-buffers and no further",
              f"peak {backlog['peak-level-buffers']}, limit {limit}")
    tap.check(backlog["current-level-bytes"]
              == backlog["current-level-buffers"] * r["size"],
              "current-level-bytes is the bytes of the queued buffers")
    tap.check(drained["buffers-copied"] == len(delivered)
              and drained["buffers-referenced"] == 0
              and drained["copy-fallbacks"] == 0,
              "transfer=copy copied every buffer that was queued",
              f"{drained['buffers-copied']} copied, "
              f"{drained['buffers-referenced']} referenced, "
              f"{len(delivered)} delivered")
    tap.check(all(drained[f] == 0 for f in ("current-level-buffers",
                                             "current-level-bytes",
                                             "current-level-time")),
              "the drained queue is empty")
    tap.check(drained["records-in"] == drained["records-out"],
              "every record written was read",
              f"{drained['records-in']} in, {drained['records-out']} out")


def check_use_tbqueue(tap):
    cases = {
        "queue": "tbqueue",
        "a ! queue ! b": "a ! tbqueue ! b",
        "a !queue max-size-buffers=2! b": "a !tbqueue max-size-buffers=2! b",
        "t. ! queue leaky=downstream ! b": "t. ! tbqueue leaky=downstream ! b",
        "bin. ( queue ! b )": "bin. ( tbqueue ! b )",
        "a ! queue2 ! multiqueue ! b": "a ! queue2 ! multiqueue ! b",
        "a ! queue name=queue ! b": "a ! tbqueue name=queue ! b",
        "a ! tbqueue ! b": "a ! tbqueue ! b",
    }
    for before, after in cases.items():
        got = example.use_tbqueue(before)
        tap.check(got == after, f"use_tbqueue: {before!r}",
                  f"got {got!r}, expected {after!r}")


def check_swapped_pipeline(tap):
    swapped = example.use_tbqueue(example.DEMO_PIPELINE)
    ran = tap.run("both pipelines run to EOS", lambda: (
        example.run_launch(example.DEMO_PIPELINE, example.DEMO_SINKS),
        example.run_launch(swapped, example.DEMO_SINKS)))
    if ran is None:
        return
    (out_queue, factories_queue), (out_tbqueue, factories) = ran
    tap.check(factories.count("tbqueue") == 2 and "queue" not in factories,
              "the swapped pipeline has two tbqueues and no queue",
              f"elements: {factories}")
    tap.check(factories_queue.count("queue") == 2,
              "the original pipeline has two queues")
    for name in example.DEMO_SINKS:
        tap.check(len(out_queue[name]) == 60,
                  f"{name}: the queue pipeline delivered every buffer",
                  f"{len(out_queue[name])} buffers")
        tap.check(out_tbqueue[name] == out_queue[name],
                  f"{name}: tbqueue's output equals queue's "
                  "(timestamps, offsets, flags and bytes)")


def check_main(tap):
    r = subprocess.run([sys.executable, EXAMPLE], capture_output=True,
                       text=True, timeout=300)
    tap.check(r.returncode == 0, "the example runs as documented",
              r.stdout + r.stderr)
    tap.check("same output as with queue: yes" in r.stdout,
              "the example reports the same output with tbqueue", r.stdout)


def main():
    Gst.init(None)
    tap = Tap()
    if not tap.check(Gst.ElementFactory.find("tbqueue") is not None,
                     "tbqueue is found", "GST_PLUGIN_PATH: "
                     f"{os.environ.get('GST_PLUGIN_PATH')}"):
        return tap.done()
    check_slow_consumer(tap)
    check_use_tbqueue(tap)
    check_swapped_pipeline(tap)
    check_main(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())

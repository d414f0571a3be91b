#!/usr/bin/env python3
"""Spilling to disk, measured: tbqueue's spill next to the disk's own
bandwidth (dd, same file system, same 1 MiB writes, no sync, as the spill)
and next to queue2's file mode, on one workload.

The workload: FRAMES frames of 1200 KiB (640x480 RGBx from videotestsrc,
is-live=false), pushed into the queue while downstream is blocked (a
blocking pad probe on the sink's pad), then downstream is released and
drains everything.  Per run and contender:

  (a first, untimed round hashes what arrives, a moving ball; the timed
  ones do not, and push black frames: a producer faster than the disk)
  push     wall time of the pushing phase (the upstream thread pushes every
           frame; the queue holds the backlog, on disk past its memory);
           per frame: the pushing thread's time per buffer
  drain    wall time from the release to EOS (everything read back)
  arrives  frames and bytes that reached the sink, and whether their
           bytes and timestamps are those of `queue` (a hash)
  rss      the process's peak resident memory (VmHWM) over the run

Contenders (each in a process of its own, taking turns, --runs times):
  queue           max-size-*=0, everything in memory (the reference)
  tbqueue-mem     no spill, sink-max-bytes large enough for all of it
  tbqueue-spill   temp-template in --dir, sink-max-bytes 16 MiB
  queue2-file     queue2 temp-template in --dir, use-buffering=false
and, for the disk itself, dd writing and reading back the same bytes.

Medians over the runs; ratios are within one run.  Not a test: it asserts
nothing.  usage:
  python3 tests/bench/spill-bench.py [--runs 5] [--frames 600] [--dir D]
    (GST_PLUGIN_PATH must reach the build's gst/)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import gi, hashlib, json, sys, time
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
frames, qdesc, verify = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
p = Gst.parse_launch(
    f"videotestsrc num-buffers={frames} is-live=false "
    f"pattern={'ball' if verify else 'black'} ! "
    "video/x-raw,format=RGBx,width=640,height=480,framerate=30/1 ! "
    f"{qdesc} name=q ! fakesink name=s sync=false signal-handoffs=true")
src = p.get_by_name("q").get_static_pad("sink")
sinkpad = p.get_by_name("s").get_static_pad("sink")
h = hashlib.sha256()
st = {"n": 0, "bytes": 0, "pushed": 0}
def handoff(sink, buf, pad):
    if verify:
        ok, m = buf.map(Gst.MapFlags.READ)
        h.update(m.data); buf.unmap(m)
        h.update(str(buf.pts).encode())
    st["n"] += 1; st["bytes"] += buf.get_size()
p.get_by_name("s").connect("handoff", handoff)
def counted(pad, info):
    st["pushed"] += 1
    return Gst.PadProbeReturn.OK
src.add_probe(Gst.PadProbeType.BUFFER, counted)
# Buffers only: the allocation query and the events pass (a serialized
# query behind a blocked event would hold up the source itself).
blocked = sinkpad.add_probe(Gst.PadProbeType.BLOCK | Gst.PadProbeType.BUFFER,
                            lambda pad, info: Gst.PadProbeReturn.OK)
p.set_state(Gst.State.PLAYING)
t0 = time.monotonic()
while st["pushed"] < frames:
    if time.monotonic() - t0 > 300:
        print(json.dumps({"error": "the pushes never ended"}))
        sys.exit(1)
    time.sleep(0.001)
t1 = time.monotonic()
stats = None
q = p.get_by_name("q")
if q.find_property("stats") is not None:
    s = q.get_property("stats")
    stats = {f: s.get_uint64(f)[1] for f in
             ("spill-bytes-written", "spill-bytes-read", "sink-bytes-peak")}
    stats["read-at-release"] = stats.pop("spill-bytes-read")
sinkpad.remove_probe(blocked)
bus = p.get_bus()
msg = bus.timed_pop_filtered(600 * Gst.SECOND,
                             Gst.MessageType.EOS | Gst.MessageType.ERROR)
t2 = time.monotonic()
ok = msg is not None and msg.type == Gst.MessageType.EOS
if q.find_property("stats") is not None:
    s = q.get_property("stats")
    stats["spill-bytes-read"] = s.get_uint64("spill-bytes-read")[1]
    stats["spill-bytes-written-end"] = s.get_uint64("spill-bytes-written")[1]
p.set_state(Gst.State.NULL)
hwm = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        hwm = int(line.split()[1]) * 1024
print(json.dumps({"push": t1 - t0, "drain": t2 - t1, "ok": ok, "n": st["n"],
                  "bytes": st["bytes"], "hash": h.hexdigest()[:16],
                  "rss": hwm, "stats": stats}))
'''


def contender_desc(name, d, frames):
    none = "max-size-buffers=0 max-size-bytes=0 max-size-time=0"
    if name == "queue":
        return f"queue {none}"
    if name == "tbqueue-mem":
        return (f"tbqueue {none} transfer=copy "
                f"sink-max-bytes={frames * 1300000 + (64 << 20)}")
    if name == "tbqueue-spill":
        return (f"tbqueue {none} temp-template={d}/tbq-XXXXXX "
                f"sink-max-bytes={16 << 20}")
    if name == "queue2-file":
        return (f"queue2 {none} use-buffering=false "
                f"temp-template={d}/q2-XXXXXX")
    raise ValueError(name)


def run_child(frames, desc, verify=False):
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(frames), desc,
                              "1" if verify else "0"],
                             capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"error": out.stderr[-500:]}
    return json.loads(lines[-1])


def dd(d, mib):
    path = os.path.join(d, "dd-test")
    t0 = time.monotonic()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M",
                    f"count={mib}"], capture_output=True, check=True)
    t1 = time.monotonic()
    subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=1M"],
                   capture_output=True, check=True)
    t2 = time.monotonic()
    os.unlink(path)
    return {"write": mib / (t1 - t0), "read": mib / (t2 - t1)}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    names = ["queue", "tbqueue-mem", "tbqueue-spill", "queue2-file"]
    res = {n: [] for n in names}
    disk = []
    frame = 640 * 480 * 4
    mib = a.frames * frame / 1048576.0
    hashes = {}
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        # One untimed round that hashes every frame's bytes and timestamp.
        for n in names:
            v = run_child(a.frames, contender_desc(n, d, a.frames), True)
            hashes[n] = (v.get("hash"), v.get("n"))
        for r in range(a.runs):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                res[n].append(run_child(a.frames,
                                        contender_desc(n, d, a.frames)))
            disk.append(dd(d, int(mib)))
    ref = hashes["queue"]
    print(f"# {a.frames} frames of {frame} bytes ({mib:.0f} MiB), "
          f"{a.runs} runs, dir {a.dir}; medians (min-max)")
    print()
    print("| contender | frames out | same as queue | push per frame |"
          " push ÷ queue | push ÷ tbqueue-mem | drain MiB/s | peak RSS MiB |"
          " spilled MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in names:
        rs = [x for x in res[n] if "push" in x]
        if not rs:
            print(f"| {n} | error: {res[n][0].get('error', '')[:80]} |")
            continue
        per = [x["push"] / a.frames * 1e6 for x in rs]
        ratio = [x["push"] / q["push"] for x, q in zip(res[n], res["queue"])
                 if "push" in x and "push" in q]
        mem = [x["push"] / m["push"] for x, m in
               zip(res[n], res["tbqueue-mem"]) if "push" in x and "push" in m]
        drain = [x["bytes"] / 1048576.0 / x["drain"] for x in rs]
        same = "yes" if hashes[n] == ref else f"no ({hashes[n][1]} frames)"
        spilled = [(x["stats"] or {}).get("spill-bytes-written-end", 0)
                   / 1048576.0 for x in rs]
        print(f"| {n} | {med([x['n'] for x in rs]):.0f} | {same} "
              f"| {med(per):.0f} us | {med(ratio):.2f}x "
              f"({min(ratio):.2f}-{max(ratio):.2f}) | {med(mem):.2f}x "
              f"({min(mem):.2f}-{max(mem):.2f}) | {med(drain):.0f} | "
              f"{med([x['rss'] / 1048576.0 for x in rs]):.0f} | "
              f"{med(spilled):.0f} |")
    print()
    sp = [x for x in res["tbqueue-spill"] if "push" in x]
    wr = [(x["stats"]["spill-bytes-written"] / 1048576.0) / x["push"]
          for x in sp]
    # Read back: what was read from the file after downstream was released.
    rd = [((x["stats"]["spill-bytes-read"] - x["stats"]["read-at-release"])
           / 1048576.0) / x["drain"] for x in sp]
    wr_ratio = [w / dk["write"] for w, dk in zip(wr, disk)]
    rd_ratio = [r / dk["read"] for r, dk in zip(rd, disk)]
    print("| | tbqueue spill MiB/s | dd MiB/s (bs=1M, same dir) | ratio |")
    print("|---|---|---|---|")
    print(f"| write | {med(wr):.0f} | {med([x['write'] for x in disk]):.0f} |"
          f" {med(wr_ratio):.2f}x ({min(wr_ratio):.2f}-{max(wr_ratio):.2f}) |")
    print(f"| read back | {med(rd):.0f} | {med([x['read'] for x in disk]):.0f}"
          f" | {med(rd_ratio):.2f}x ({min(rd_ratio):.2f}-{max(rd_ratio):.2f})"
          " |")


if __name__ == "__main__":
    main()

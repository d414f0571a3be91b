#!/usr/bin/python3
"""Playback with buffering: an application that pauses while tbqueue says
BUFFERING below 100 % and plays again at 100 %, as playbin's applications
and gst-launch-1.0 do.

The source here is a throttled local one: an appsrc fed by a thread in
bursts, with stalls between them.  A network source (souphttpsrc, an RTSP
or HLS client) behaves the same way to the queue: data comes as fast as
the queue takes it, then stops.  The pipeline:

    appsrc (bursts of 1 s of 50 fps, 4 KiB frames, stalls between them)
      ! tbqueue use-buffering=true max-size-time=0.5 s
      ! fakesink sync=true (it takes the frames in real time)

A burst fills the queue (100 %: its upstream waits for room), and plays
on; the stall after it lasts until the queue ran dry and the player
paused to buffer.

What the application does (BufferingPlayer.on_message) is all a player
needs:
  * BUFFERING below 100 %: PAUSED (once), while the queue fills;
  * BUFFERING at 100 %: PLAYING again;
  * EOS or ERROR: the end.

Run it with the system Python (Debian: python3-gi, python3-gst-1.0,
gir1.2-gst-plugins-base-1.0), from a build tree:

    GST_PLUGIN_PATH=$PWD/build/gst /usr/bin/python3 \\
        examples/python/tbqueue-buffering.py

tests/python/test-buffering.py runs play() and checks what it returns.
"""
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstApp  # noqa: E402,F401

# How long any wait may take before we give up (a hang, never a speed).
TIMEOUT = 60
FPS = 50
FRAME = 4096


class BufferingPlayer:
    """The bus handler of a player that buffers."""

    def __init__(self, pipeline):
        self.pipeline = pipeline
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.target = Gst.State.PLAYING    # what the user asked for
        self.buffering = False
        self.messages = []                 # every percentage, in order
        self.actions = []                  # "pause" and "play", in order
        self.done = None                   # "eos" or the error's text

    def on_message(self, msg):
        t = msg.type
        if t == Gst.MessageType.BUFFERING:
            percent = msg.parse_buffering()
            with self.lock:
                self.messages.append(percent)
                if percent < 100 and not self.buffering:
                    self.buffering = True
                    self.actions.append("pause")
                    self.pipeline.set_state(Gst.State.PAUSED)
                elif percent == 100 and self.buffering:
                    self.buffering = False
                    self.actions.append("play")
                    self.pipeline.set_state(self.target)
                self.cond.notify_all()
        elif t == Gst.MessageType.EOS:
            with self.lock:
                self.done = "eos"
                self.cond.notify_all()
        elif t == Gst.MessageType.ERROR:
            err, _ = msg.parse_error()
            with self.lock:
                self.done = err.message
                self.cond.notify_all()

    def wait(self, predicate):
        """Wait (a hang check, not a speed) until predicate() holds."""
        with self.lock:
            return self.cond.wait_for(predicate, TIMEOUT)


def play(bursts=3, frames_per_burst=FPS):
    """Play `bursts` bursts of frames, stalling between them until the
    player has paused to buffer (the queue ran dry).  Returns what the
    player saw, and the frames the sink received."""
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time is-live=false block=true "
        f"caps=application/x-frames ! tbqueue name=q use-buffering=true "
        "max-size-buffers=0 max-size-bytes=0 max-size-time=500000000 ! "
        "fakesink name=sink sync=true signal-handoffs=true")
    src = pipeline.get_by_name("src")
    sink = pipeline.get_by_name("sink")
    received = []
    sink.connect("handoff", lambda s, buf, pad: received.append(buf.offset))

    player = BufferingPlayer(pipeline)
    bus = pipeline.get_bus()

    def feed():
        n = 0
        for b in range(bursts):
            if b > 0:
                # Stall until the player paused again: the sink took
                # everything while playing, and the queue ran dry.
                pauses = b + 1
                if not player.wait(lambda: len(player.actions) >= 2 * b
                                   and player.actions.count("pause")
                                   >= pauses or player.done):
                    break
            for _ in range(frames_per_burst):
                buf = Gst.Buffer.new_allocate(None, FRAME, None)
                buf.pts = n * Gst.SECOND // FPS
                buf.duration = Gst.SECOND // FPS
                buf.offset = n
                if src.emit("push-buffer", buf) != Gst.FlowReturn.OK:
                    return
                n += 1
        src.emit("end-of-stream")

    # Start paused, as a player does: it plays once buffering says 100 %.
    pipeline.set_state(Gst.State.PAUSED)
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    # The application's thread handles the bus (a main loop's bus watch
    # does the same): never the streaming threads that post.
    deadline = GLib.get_monotonic_time() + TIMEOUT * 1000000
    while player.done is None and GLib.get_monotonic_time() < deadline:
        msg = bus.timed_pop(100 * Gst.MSECOND)
        if msg is not None:
            player.on_message(msg)
    ok = player.done is not None
    pipeline.set_state(Gst.State.NULL)
    feeder.join(TIMEOUT)
    return {"ok": ok, "done": player.done, "messages": player.messages,
            "actions": player.actions, "received": received,
            "sent": bursts * frames_per_burst}


def main():
    Gst.init(sys.argv)
    r = play()
    print(f"ended with {r['done']}; {len(r['received'])} of {r['sent']} "
          "frames played")
    print("buffering messages:", r["messages"])
    print("player:", " ".join(r["actions"]))
    return 0 if r["done"] == "eos" and len(r["received"]) == r["sent"] else 1


if __name__ == "__main__":
    GLib.set_prgname("tbqueue-buffering")
    sys.exit(main())

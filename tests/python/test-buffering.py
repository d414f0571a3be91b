#!/usr/bin/python3
"""examples/python/tbqueue-buffering.py, a player that pauses while
tbqueue buffers below 100 % and plays at 100 %, plays a throttled source
(bursts with stalls between them, each stall lasting until the queue has
run dry) to the end: every frame in order, a pause and a play per burst,
and one buffering episode per burst, from below the low watermark to
100 %, with no message between episodes (no 0/100 ping-pong, also not at
the stream's start, where the allocation query comes).  Nothing here depends on
timing: the source stalls until the player has paused.  Prints TAP."""
import importlib.util
import os
import sys

from taplib import SOURCE_ROOT, Tap

EXAMPLE = os.path.join(SOURCE_ROOT, "examples", "python",
                       "tbqueue-buffering.py")

spec = importlib.util.spec_from_file_location("tbqueue_buffering", EXAMPLE)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
Gst = example.Gst
Gst.init(None)

tap = Tap()
BURSTS = 3
r = tap.run("the player runs", example.play, BURSTS)
if r is not None:
    tap.check(r["done"] == "eos", "the stream plays to EOS",
              f"ended with {r['done']!r}")
    tap.check(r["received"] == list(range(r["sent"])),
              "every frame arrives, in order",
              f"{len(r['received'])} of {r['sent']}: {r['received'][:10]}...")
    tap.check(r["actions"] == ["pause", "play"] * BURSTS,
              "the player pauses and plays once per burst",
              f"actions: {r['actions']}")
    # Episodes: from a message below 100 to the 100 that ends it.
    episodes, current = [], []
    for p in r["messages"]:
        current.append(p)
        if p == 100:
            episodes.append(current)
            current = []
    tap.check(len(episodes) == BURSTS and not current,
              "one buffering episode per burst, each ending at 100 %",
              f"messages: {r['messages']}")
    tap.check(all(e[0] <= 1 for e in episodes),
              "each episode starts below the low watermark (1 %)",
              f"episodes start at {[e[0] for e in episodes]}")
    # (Within an episode the level may fall a little: the sink plays on
    # until the player's pause, which follows the message, takes effect.)
    tap.check(all(p < 100 for e in episodes for p in e[:-1]),
              "no 100 % inside an episode: it ends there",
              f"messages: {r['messages']}")
sys.exit(tap.done())

#!/usr/bin/env python3
"""Self-tests of the soak harness: every kind of fault, injected between the
element and the verifier, must fail the run with the check that names it,
and the same run without a fault must pass.

usage: soak-selftest.py path/to/soak   (TAP on stdout)
"""
import subprocess
import sys

# A short, fixed run against queue: no flushes or state changes, so that
# the faulted buffer is never legitimately flushed away (and no parallel
# chapters: queue alone).
BASE = ["--element", "queue", "--seed", "7", "--buffers", "30000",
        "--disable", "flush-inline,flush-thread,state,eos,parallel"]
NO_LEAK = BASE + ["--leaky", "no"]

# (name, extra arguments, the check that must fail)
CASES = [
    ("a corrupted payload byte", NO_LEAK + ["--inject", "corrupt"], "corrupt"),
    ("a changed timestamp", NO_LEAK + ["--inject", "timestamp"], "corrupt"),
    ("a missing buffer", NO_LEAK + ["--inject", "drop"], "loss"),
    ("a reordered buffer", NO_LEAK + ["--inject", "reorder"], "loss"),
    ("a duplicated buffer", NO_LEAK + ["--inject", "duplicate"], "order"),
    ("a missing serialized event", NO_LEAK + ["--inject", "event",
                                              "--inject-at", "5"], "loss"),
    ("a DISCONT flag with nothing dropped", NO_LEAK + ["--inject", "discont"],
     "discont"),
    ("no DISCONT flag after a drop",
     BASE + ["--leaky", "upstream", "--inject", "nodiscont",
             "--inject-at", "1"], "discont"),
    ("a buffer reference never released", NO_LEAK + ["--inject", "leak"],
     "leak"),
    ("a blocked src pad task",
     NO_LEAK + ["--inject", "hang", "--watchdog", "3"], "watchdog"),
]
# The soaked tbqueue with two more in its copy group (soak-peers.c).
PEERS = ["--element", "tbqueue", "--seed", "7", "--duration", "3",
         "--group-peers", "2", "--inject-at", "2000"]
CASES += [
    ("a corrupted byte in a group peer's stream",
     PEERS + ["--inject", "peer-corrupt"], "peer"),
    ("a buffer missing from a group peer's stream",
     PEERS + ["--inject", "peer-drop"], "peer"),
]
# Parallel chapters (soak-parallel.c): a fault of the workers' makes every
# chapter parallel; the same run without one passes (half of them are).
PARALLEL = ["--element", "tbqueue", "--seed", "7", "--buffers", "30000",
            "--leaky", "no", "--enable", "parallel",
            "--disable", "flush-inline,flush-thread,state,eos"]
WORKER = PARALLEL + ["--inject-at", "100"]
CASES += [
    ("a worker's drop logged for a buffer it passed on",
     WORKER + ["--inject", "worker-phantom"], "worker"),
    ("a worker that sends two outputs in the wrong order",
     WORKER + ["--inject", "worker-reorder"], "loss"),
    ("a worker's drop logged as no input of its own",
     WORKER + ["--inject", "worker-miscount"], "gaps"),
]
PASSING = [
    ("the same run without a fault passes", NO_LEAK),
    ("a leaky run without a fault passes",
     BASE + ["--leaky", "upstream,downstream"]),
    ("a run with group peers without a fault passes", PEERS[:-2]),
    ("a run with parallel chapters without a fault passes", PARALLEL),
]


def run(soak, args):
    p = subprocess.run([soak] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def main():
    soak = sys.argv[1]
    n = 0
    failed = 0
    print("1..%d" % (len(CASES) + len(PASSING)))
    for name, args in PASSING:
        n += 1
        rc, out = run(soak, args)
        ok = rc == 0 and "\nok 1 " in "\n" + out
        if not ok:
            failed += 1
            sys.stdout.write("".join("# " + l + "\n"
                                     for l in out.splitlines()[-15:]))
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    for name, args, check in CASES:
        n += 1
        rc, out = run(soak, args)
        ok = rc != 0 and ("# FAIL [%s]" % check) in out
        if not ok:
            failed += 1
            sys.stdout.write("".join("# " + l + "\n"
                                     for l in out.splitlines()[-15:]))
        print("%s %d - %s fails the check '%s'" % (
            "ok" if ok else "not ok", n, name, check))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

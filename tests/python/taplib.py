"""TAP for the Python tests: one check per behaviour, named for it.

    tap = Tap()
    tap.check(x == 1, "x is one", f"x is {x}")
    tap.run("a scenario that must not raise", some_function)
    sys.exit(tap.done())

A check that raises is a failure, never a skip.  Paths: SOURCE_ROOT and
BUILD_ROOT come from the environment meson test sets.
"""
import os
import sys
import traceback

SOURCE_ROOT = os.environ.get("TBQ_SOURCE_ROOT",
                             os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_ROOT = os.environ.get("TBQ_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))


class Tap:
    def __init__(self):
        self.results = []

    def check(self, ok, name, why=""):
        self.results.append((bool(ok), name, why))
        return ok

    def run(self, name, func, *args):
        """func(*args), recorded as a failure (with its traceback) if it
        raises; returns its result or None."""
        try:
            return func(*args)
        except Exception:  # noqa: BLE001 - any exception fails the check
            self.check(False, name, traceback.format_exc())
            return None

    def done(self):
        print(f"1..{len(self.results)}")
        failed = 0
        for i, (ok, name, why) in enumerate(self.results, 1):
            print(f"{'ok' if ok else 'not ok'} {i} - {name}")
            if not ok:
                failed += 1
                for line in str(why).splitlines():
                    print(f"# {line}")
        sys.stdout.flush()
        return 1 if failed else 0

#!/usr/bin/python3
"""tbqueue's leaky property takes what queue's takes: the same values,
nicks and names, read from both enum classes through the registry, the
same default, and every spelling (nick, name, number) selects the same
value through the APIs applications use.  Its GType is GstTbQueueLeaky,
as docs/element.md says.  Prints TAP."""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

from taplib import Tap  # noqa: E402


def enum_values(pspec):
    """{value: (nick, name)} of an enum property."""
    return {int(v): (e.value_nick, e.value_name)
            for v, e in pspec.enum_class.__enum_values__.items()}


def leaky_after(element, spelling, how, before):
    """The leaky value an element has after it was `before` (a number) and
    was then set to `spelling`."""
    if how == "parse_launch":
        element = Gst.parse_launch(f"{element.get_factory().get_name()} "
                                   f"leaky={before} leaky=\"{spelling}\"")
    else:
        element.set_property("leaky", before)
        if how == "gst_util_set_object_arg":
            Gst.util_set_object_arg(element, "leaky", spelling)
        else:
            element.set_property("leaky", spelling)
    return int(element.get_property("leaky"))


def main():
    Gst.init(None)
    tap = Tap()
    queue = Gst.ElementFactory.make("queue")
    tbqueue = Gst.ElementFactory.make("tbqueue")
    if not tap.check(tbqueue is not None, "tbqueue is found",
                     f"GST_PLUGIN_PATH: {os.environ.get('GST_PLUGIN_PATH')}"):
        return tap.done()
    qspec = queue.find_property("leaky")
    tspec = tbqueue.find_property("leaky")
    qvalues, tvalues = enum_values(qspec), enum_values(tspec)

    tap.check(tspec.value_type.name == "GstTbQueueLeaky",
              "the GType of tbqueue's leaky is GstTbQueueLeaky",
              f"it is {tspec.value_type.name}")
    tap.check(qspec.value_type.name == "GstQueueLeaky",
              "queue's is GstQueueLeaky (what we compare with)")
    tap.check(len(qvalues) == 3 and tvalues == qvalues,
              "same values, nicks and names as queue's",
              f"queue {qvalues}\ntbqueue {tvalues}")
    tap.check(int(tspec.default_value) == int(qspec.default_value),
              "same default as queue's")

    for value, (nick, name) in sorted(qvalues.items()):
        before = (value + 1) % len(qvalues)     # so that setting changes it
        for spelling in (nick, name, str(value)):
            for how in ("gst_util_set_object_arg", "parse_launch"):
                got = (leaky_after(queue, spelling, how, before),
                       leaky_after(tbqueue, spelling, how, before))
                tap.check(got == (value, value),
                          f"leaky={spelling!r} through {how} selects {value}",
                          f"queue, tbqueue: {got}")
        got = (leaky_after(queue, nick, "set_property", before),
               leaky_after(tbqueue, nick, "set_property", before))
        tap.check(got == (value, value),
                  f"set_property('leaky', {nick!r}) selects {value}",
                  f"queue, tbqueue: {got}")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The plugin's sources carry GStreamer's documentation comments.

In every gst/*.c file: each property installed with
g_object_class_install_property(), and each entry of a property table (an
array of a type whose name ends in Property, whose entries start with the
name and the nick: `{"name", "nick",`), is preceded by a gtk-doc block
`/** Type:property-name:` with a `Since:` line; each signal created with
g_signal_new() by a block `/** Type::signal-name:` with `Since:`; each enum
registered with g_enum_register_static() is marked with
gst_type_mark_as_plugin_api() and documented by a block `/** EnumName:` with
`Since:` (in a header or a .c file of gst/).  A block belongs to the call
right after it (nothing but blank lines and plain comments between).
Prints TAP.  usage: check-doc-comments.py GST_SOURCE_DIR
"""
import glob
import os
import re
import sys

from taplib import Tap  # tests/python

src_dir = sys.argv[1]
sources = {p: open(p, encoding="utf-8").read()
           for p in sorted(glob.glob(os.path.join(src_dir, "*.[ch]")))}
tap = Tap()
check = tap.check

DOC_BLOCK = re.compile(r"/\*\*\n(.*?)\*/", re.S)
PROPERTY = re.compile(
    r"g_object_class_install_property\s*\([^,]+,\s*\w+,\s*"
    r"g_param_spec_\w+\s*\(\s*\"([a-z0-9-]+)\"")
# A property table, and its entries: each starts with its name and nick.
TABLE = re.compile(r"^static const \w*Property \w+\[\] = \{\n(.*?)^\};", re.S | re.M)
ENTRY = re.compile(r"^\s*\{\"([a-z0-9-]+)\",\s*\"", re.M)
SIGNAL = re.compile(r"g_signal_new\s*\(\s*\"([a-z0-9-]+)\"")
ENUM = re.compile(r"g_enum_register_static\s*\(\s*\"(\w+)\"")
# Between a doc block and its call: blank lines and /* plain comments */.
GAP = re.compile(r"\s*(/\*(?!\*)[^*]*\*+(?:[^/*][^*]*\*+)*/\s*)*")



def block_before(text, pos):
    """The doc block that ends right before pos (its text), or None."""
    best = None
    for m in DOC_BLOCK.finditer(text, 0, pos):
        best = m
    if best is None:
        return None
    gap = text[best.end():pos]
    # The call may start after its assignment: `signals[X] =\n      `.
    gap = re.sub(r"\w+(\[\w+\])?\s*=\s*$", "", gap)
    if GAP.fullmatch(gap) is None:
        return None
    return best.group(1)


def check_block(body, title, what):
    if body is None:
        check(False, f"{what} is documented",
              f"no /** {title}: block right before it")
        return
    first = re.sub(r"^\s*\*\s?", "", body.splitlines()[0]).strip()
    check(first.endswith(title + ":"), f"{what} is documented",
          f"the block before it is titled {first!r}, expected '...{title}:'")
    check(re.search(r"^\s*\* Since: \d+\.\d+", body, re.M) is not None,
          f"{what} says Since:", f"no 'Since: X.Y' line in its block")


enums_documented = set()
for path, text in sources.items():
    for m in DOC_BLOCK.finditer(text):
        t = re.match(r"\s*\*\s*(Gst\w+):\s*$", m.group(1).splitlines()[0])
        if t and re.search(r"^\s*\* Since:", m.group(1), re.M):
            enums_documented.add(t.group(1))

for path, text in sources.items():
    base = os.path.basename(path)
    if not path.endswith(".c"):
        continue
    for m in PROPERTY.finditer(text):
        check_block(block_before(text, m.start()), ":" + m.group(1),
                    f"{base}: property {m.group(1)}")
    for t in TABLE.finditer(text):
        for m in ENTRY.finditer(text, t.start(1), t.end(1)):
            check_block(block_before(text, m.start()), ":" + m.group(1),
                        f"{base}: property {m.group(1)}")
    for m in SIGNAL.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        check_block(block_before(text, start), "::" + m.group(1),
                    f"{base}: signal {m.group(1)}")
    for m in ENUM.finditer(text):
        name = m.group(1)
        check(name in enums_documented, f"{base}: enum {name} is documented",
              f"no /** {name}: block with Since: in gst/")
        getter = None
        for g in re.finditer(r"\n(\w+_get_type) \(void\)\n\{(.*?)\n\}\n",
                             text, re.S):
            if '"%s"' % name in g.group(2):
                getter = g
        macro = None
        if getter:
            for t in sources.values():
                d = re.search(r"#define (\w+)\s+\(%s \(\)\)" % getter.group(1),
                              t)
                if d:
                    macro = d.group(1)
        marked = macro is not None and any(
            re.search(r"gst_type_mark_as_plugin_api \(%s," % macro, t)
            for t in sources.values())
        check(marked, f"{base}: enum {name} is marked as plugin API",
              "no gst_type_mark_as_plugin_api () for its GType")

sys.exit(tap.done())

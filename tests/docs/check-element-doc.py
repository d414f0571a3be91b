#!/usr/bin/env python3
"""docs/element.md matches what `gst-inspect-1.0 tbqueue` says.

Every property (except GstObject's name and parent) has a row in a table of
docs/element.md with the same default, every documented property exists,
every signal is documented, and every field of the stats structure is listed.
The plugin reports the project's version, and the element its documentation
(doc-uri metadata: docs/element.md, the build tree's copy next to the
plugin or the installed one, a file that exists).  Every property's blurb
is one line of at most 100 characters, as GStreamer's own elements' are:
the details are in the gtk-doc blocks and in docs/element.md.  Prints TAP.
usage: check-element-doc.py DOC_PATH VERSION
"""
import os
import re
import subprocess
import sys
import urllib.parse

from taplib import Tap  # tests/python

doc_path, version = sys.argv[1:3]
doc = open(doc_path, encoding="utf-8").read()
out = subprocess.run(["gst-inspect-1.0", "tbqueue"], capture_output=True,
                     text=True, env=os.environ).stdout

tap = Tap()
check = tap.check

check("Factory Details" in out, "gst-inspect-1.0 finds tbqueue",
      "is GST_PLUGIN_PATH set to the build's gst/?")
m = re.search(r"^  Version\s+(\S+)$", out, re.M)
check(m is not None and m.group(1) == version,
      f"the plugin reports version {version}",
      f"gst-inspect-1.0 says {m.group(1) if m else None!r}")

# The element's doc-uri: gst-inspect-1.0 prints the metadata key as
# "Doc-uri" (GStreamer's own modules, which have none, get a
# "Documentation" line pointing at gstreamer.freedesktop.org instead).
details = out.split("Factory Details:", 1)[-1].split("Plugin Details:", 1)[0]
m = re.search(r"^  (?:Doc-uri|Documentation)\s+(\S+)$", details, re.M)
check(m is not None, "gst-inspect-1.0 shows the element's documentation",
      "no Doc-uri line in Factory Details (gst_element_class_add_metadata "
      "with GST_ELEMENT_METADATA_DOC_URI)")
if m is not None:
    # From the build tree (as here: GST_PLUGIN_PATH), the build tree's
    # copy of element.md; installed, the installed one.  Either way a file
    # that exists, with this element.md's text.
    uri = m.group(1)
    path = urllib.parse.unquote(uri[len("file://"):])
    check(uri.startswith("file:///") and path.endswith("/element.md"),
          "the documentation is element.md", f"doc-uri is {uri!r}")
    check(os.path.isfile(path)
          and open(path, encoding="utf-8").read() == doc,
          "the doc-uri's file exists and is docs/element.md",
          f"doc-uri is {uri!r}")

# --- properties from gst-inspect ---
MAX_BLURB = 100
props = {}
section = out.split("Element Properties:", 1)[-1].split("Element Signals:", 1)[0]
current = None
lines = section.splitlines()
for i, line in enumerate(lines):
    m = re.match(r"^  ([a-z][a-z0-9-]*)\s*: (.*)$", line)
    if m:
        current = m.group(1)
        props[current] = {"default": None, "stats": []}
        blurb = m.group(2)
        # One line: the next one is the flags.
        one_line = i + 1 < len(lines) and lines[i + 1].lstrip().startswith(
            "flags:")
        check(len(blurb) <= MAX_BLURB and one_line,
              f"property {current} has a one-line blurb of at most "
              f"{MAX_BLURB} characters",
              f"{len(blurb)} characters{'' if one_line else ', more lines'}:"
              f" {blurb!r}")
        continue
    if current is None:
        continue
    m = re.search(r"Default: (.*)$", line)
    if m:
        d = m.group(1).strip()
        em = re.match(r'-?\d+, "([^"]*)"', d)
        props[current]["default"] = em.group(1) if em else d.strip('"')
    m = re.match(r"^\s{30,}([a-z][a-z0-9-]*): \S", line)
    if m and current == "stats":
        props[current]["stats"].append(m.group(1))

ignored = {"name", "parent"}
rows = {}
props_doc = doc.split("## Properties", 1)[-1].split("### stats", 1)[0]
for m in re.finditer(r"^\| `([a-z][a-z0-9-]*)` \|([^|]*)\|([^|]*)\|", props_doc,
                     re.M):
    rows.setdefault(m.group(1), (m.group(2).strip(), m.group(3).strip()))

for name, info in sorted(props.items()):
    if name in ignored:
        continue
    row = rows.get(name)
    check(row is not None, f"property {name} is documented",
          "no table row starting with | `%s` |" % name)
    if row is None or info["default"] is None:
        continue
    documented = row[1]
    check(documented == info["default"], f"property {name} default matches",
          f"doc says {documented!r}, gst-inspect says {info['default']!r}")

for name in sorted(rows):
    if name in props or name in ignored:
        continue
    check(False, f"documented property {name} exists", "not in gst-inspect")

stats_doc = doc.split("### stats", 1)[-1].split("\n## ", 1)[0]
for field in props.get("stats", {}).get("stats", []):
    check(f"`{field}`" in stats_doc, f"stats field {field} is documented")

# --- signals ---
signals = re.findall(r'^\s+"([a-z-]+)" :', out.split("Element Signals:", 1)[-1], re.M)
check(len(signals) == 4, "four signals", f"found {signals}")
for s in signals:
    check(re.search(r"^\| `%s` \|" % re.escape(s), doc, re.M) is not None,
          f"signal {s} is documented")

sys.exit(tap.done())

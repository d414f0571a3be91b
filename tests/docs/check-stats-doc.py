#!/usr/bin/env python3
"""docs/element.md's stats table is the element's: one table, one truth.

The fields of tbqueue's `stats` structure are listed once, in the table of
gst/gsttbqueue-stats.c (name, type, meaning).  docs/element.md's table under
"### stats" is generated from it, between the stats-table markers:

    check-stats-doc.py --write DOC_PATH STATS_SOURCE

rewrites it.  As a test (prints TAP):

    check-stats-doc.py DOC_PATH STATS_SOURCE HELPER

where HELPER (tests/docs/stats-fields.c, built) prints the fields of a real
tbqueue's `stats`, read at run time.  It fails when a field of that
structure has no row in the stats section of DOC_PATH, when a row documents
a field the structure does not have or gives it another type, when the
structure's fields are not the table's (in its order), and when the table
in DOC_PATH is not what --write would write (with the difference and the
command that fixes it).
"""
import difflib
import re
import subprocess
import sys

BEGIN = ("<!-- stats-table: generated from gst/gsttbqueue-stats.c by "
         "tests/docs/check-stats-doc.py --write docs/element.md "
         "gst/gsttbqueue-stats.c; edit the table there -->")
END = "<!-- end stats-table -->"
# The table's entry macros and the type each one gives its field.
MACROS = {"FIELD_U64": "guint64"}

C_STRING = r'"(?:[^"\\]|\\.)*"'
ENTRY = re.compile(r"\b(%s)\s*\(\s*(%s)\s*,\s*([A-Za-z_][\w.]*)\s*,\s*"
                   r"((?:%s\s*)+)\)" % ("|".join(MACROS), C_STRING, C_STRING),
                   re.S)


def c_literal(text):
    """The value of adjacent C string literals."""
    out = []
    for lit in re.findall(C_STRING, text):
        out.append(re.sub(r"\\(.)", r"\1", lit[1:-1]))
    return "".join(out)


def table_fields(source_path):
    """[(name, type, meaning)] from the fields[] table of the C source."""
    src = open(source_path, encoding="utf-8").read()
    m = re.search(r"static const Field fields\[\] = \{(.*?)\n\};", src, re.S)
    if m is None:
        raise SystemExit(f"{source_path}: no `static const Field fields[]` "
                         "table")
    return [(c_literal(e.group(2)), MACROS[e.group(1)],
             " ".join(c_literal(e.group(4)).split()))
            for e in ENTRY.finditer(m.group(1))]


def markdown_table(fields):
    lines = [BEGIN, "| field | type | meaning |", "|---|---|---|"]
    for name, gtype, meaning in fields:
        cell = meaning.replace("|", r"\|")
        lines.append(f"| `{name}` | {gtype} | {cell} |")
    lines.append(END)
    return "\n".join(lines)


def stats_section(doc):
    """The text of the "### stats" section of the element's documentation."""
    if "\n### stats\n" not in doc:
        return None
    rest = doc.split("\n### stats\n", 1)[1]
    return re.split(r"\n##+ ", rest, maxsplit=1)[0]


def generated_table(section):
    if section is None or BEGIN not in section or END not in section:
        return None
    return BEGIN + section.split(BEGIN, 1)[1].split(END, 1)[0] + END


def documented_rows(section):
    """{field: type cell} for every field named in the first cell of a row
    of the stats section (a cell may name several)."""
    rows = {}
    for m in re.finditer(r"^\|([^|\n]*)\|([^|\n]*)\|", section or "", re.M):
        names = re.findall(r"`([a-z][a-z0-9-]*)`", m.group(1))
        for name in names:
            rows.setdefault(name, m.group(2).strip())
    return rows


def write(doc_path, source_path):
    doc = open(doc_path, encoding="utf-8").read()
    table = markdown_table(table_fields(source_path))
    old = generated_table(stats_section(doc))
    if old is None:
        raise SystemExit(f"{doc_path}: no stats-table markers under "
                         "'### stats'; put these two lines where the table "
                         f"goes:\n{BEGIN}\n{END}")
    open(doc_path, "w", encoding="utf-8").write(doc.replace(old, table, 1))


def check(doc_path, source_path, helper):
    from taplib import Tap  # tests/python

    tap = Tap()
    doc = open(doc_path, encoding="utf-8").read()
    fields = tap.run("the table of gst/gsttbqueue-stats.c parses",
                     table_fields, source_path) or []
    tap.check(len(fields) > 0, "the stats table has fields",
              f"no FIELD_U64 (...) entry found in {source_path}")

    r = subprocess.run([helper], capture_output=True, text=True)
    tap.check(r.returncode == 0, "a real tbqueue's stats are read",
              f"{helper} exited with {r.returncode}: {r.stderr.strip()}")
    runtime = []
    for line in r.stdout.splitlines():
        if line and not line.startswith("#"):
            name, gtype = line.split()
            runtime.append((name, gtype))
    tap.check(len(runtime) > 0, "the stats structure has fields",
              r.stdout + r.stderr)

    section = stats_section(doc)
    tap.check(section is not None, "docs/element.md has a '### stats' "
              "section")
    rows = documented_rows(section)
    names = {name for name, _ in runtime}
    for name, gtype in runtime:
        if tap.check(name in rows, f"stats field {name} is documented",
                     f"no row of the stats table names `{name}`; run\n"
                     f"  {sys.argv[0]} --write {doc_path} {source_path}"):
            tap.check(rows[name] == gtype, f"stats field {name} is "
                      f"documented as {gtype}",
                      f"the row says {rows[name]!r}")
    for name in sorted(rows):
        tap.check(name in names, f"documented stats field {name} exists",
                  f"the stats structure of a real tbqueue has no `{name}`")

    table_names = [f[0] for f in fields]
    runtime_names = [n for n, _ in runtime]
    tap.check(table_names == runtime_names,
              "the stats structure has the table's fields, in its order",
              f"table: {table_names}\nstructure: {runtime_names}")
    want = markdown_table(fields)
    have = generated_table(section)
    diff = "\n".join(difflib.unified_diff(
        (have or "").splitlines(), want.splitlines(), "docs/element.md",
        "from gst/gsttbqueue-stats.c", lineterm=""))
    tap.check(have == want, "docs/element.md's stats table is generated "
              "from gst/gsttbqueue-stats.c",
              f"{diff}\nrun: {sys.argv[0]} --write {doc_path} {source_path}")
    return tap.done()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4:
        sys.exit(check(*sys.argv[1:4]))
    else:
        sys.exit(__doc__)

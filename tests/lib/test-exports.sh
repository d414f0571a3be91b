#!/bin/sh
# libtbq exports exactly the functions that tbq.h declares, and tbq.h
# declares every one of them with TBQ_API (what it lacks stays hidden).
#
# Copyright (C) 2026 The tbqueue authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   test-exports.sh LIBTBQ.so TBQ.H
set -u
lib=$1
header=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..2"

# Functions the shared library exports (defined, in the text section).
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort > "$tmp/exported"
# Functions tbq.h declares: every prototype of a tbq_ function that is not
# a static inline definition (GNU style puts a definition's name first on
# its line; a prototype starts with its type).
grep -E '^[A-Za-z_].*[ *](tbq_[a-z0-9_]+) \(' "$header" \
  | grep -vE '^(static|typedef|tbq_)' > "$tmp/prototypes"
sed -E 's/.*[ *](tbq_[a-z0-9_]+) \(.*/\1/' "$tmp/prototypes" | sort > "$tmp/declared"

if [ -s "$tmp/exported" ] && cmp -s "$tmp/exported" "$tmp/declared"; then
  echo "ok 1 - the library exports what tbq.h declares ($(wc -l < "$tmp/declared") functions)"
else
  echo "# exported but not declared:"
  comm -23 "$tmp/exported" "$tmp/declared" | sed 's/^/#   /'
  echo "# declared but not exported:"
  comm -13 "$tmp/exported" "$tmp/declared" | sed 's/^/#   /'
  echo "not ok 1 - the library exports what tbq.h declares"
fi

if grep -vq '^TBQ_API ' "$tmp/prototypes"; then
  echo "# declared without TBQ_API:"
  grep -v '^TBQ_API ' "$tmp/prototypes" | sed 's/^/#   /'
  echo "not ok 2 - every declaration carries TBQ_API"
else
  echo "ok 2 - every declaration carries TBQ_API"
fi

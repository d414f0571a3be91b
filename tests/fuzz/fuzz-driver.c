/* Runs a fuzz target without libFuzzer: every file of the given corpus
 * directories, then deterministic mutations of them.  The normal and
 * sanitizer builds use it as a regression test; libFuzzer builds
 * (-Dfuzz=enabled with clang) use libFuzzer's own main instead.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * usage: fuzz-target [--mutations N] DIR...   (TAP on stdout)
 */
#include "fuzz-input.h"

#include <glib.h>
#include <string.h>

static guint64 rng = 0x5EED;

static guint64
next (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Flip, overwrite, insert or cut a few bytes. */
static GByteArray *
mutate (const GByteArray * seed)
{
  GByteArray *m = g_byte_array_sized_new (seed->len + 16);
  guint i, n = 1 + next () % 8;

  g_byte_array_append (m, seed->data, seed->len);
  for (i = 0; i < n; i++) {
    guint8 b = (guint8) next ();
    guint pos = m->len ? (guint) (next () % m->len) : 0;

    switch (next () % 4) {
      case 0:
        if (m->len)
          m->data[pos] ^= (guint8) (1u << (b % 8));
        break;
      case 1:
        if (m->len)
          m->data[pos] = b;
        break;
      case 2:
        g_byte_array_append (m, &b, 1);
        memmove (m->data + pos + 1, m->data + pos, m->len - pos - 1);
        m->data[pos] = b;
        break;
      default:
        if (m->len)
          g_byte_array_set_size (m, pos);
        break;
    }
  }
  return m;
}

static void
load_dir (const gchar * dir, GPtrArray * seeds)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL), *data;
    gsize len;

    if (g_file_get_contents (path, &data, &len, NULL))
      g_ptr_array_add (seeds, g_byte_array_new_take ((guint8 *) data, len));
    g_free (path);
  }
  if (d != NULL)
    g_dir_close (d);
}

int
main (int argc, char **argv)
{
  GPtrArray *seeds = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_byte_array_unref);
  guint mutations = 2000, i;
  int a;

  for (a = 1; a < argc; a++) {
    if (g_str_equal (argv[a], "--mutations") && a + 1 < argc)
      mutations = (guint) atoi (argv[++a]);
    else
      load_dir (argv[a], seeds);
  }
  printf ("1..1\n");
  if (seeds->len == 0) {
    printf ("not ok 1 - no corpus found\n");
    return 1;
  }
  for (i = 0; i < seeds->len; i++) {
    GByteArray *s = g_ptr_array_index (seeds, i);

    LLVMFuzzerTestOneInput (s->data, s->len);
  }
  for (i = 0; i < mutations; i++) {
    GByteArray *m = mutate (g_ptr_array_index (seeds, next () % seeds->len));

    LLVMFuzzerTestOneInput (m->data, m->len);
    g_byte_array_unref (m);
  }
  printf ("ok 1 - %u corpus inputs and %u mutations\n", seeds->len,
      mutations);
  g_ptr_array_unref (seeds);
  return 0;
}

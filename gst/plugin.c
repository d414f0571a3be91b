/* The tbqueue plugin.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>

#include "gsttbqjoin.h"
#include "gsttbqparallel.h"
#include "gsttbqsplit.h"
#include "gsttbqueue.h"

gboolean gst_tbq_levels_tracer_register (GstPlugin * plugin);

static gboolean
plugin_init (GstPlugin * plugin)
{
  const gchar *file = gst_plugin_get_filename (plugin);

  /* A plugin with element.md next to it is the build tree's (gst/
   * meson.build copies it there): its Doc-uri names that copy. */
  if (file != NULL) {
    gchar *dir = g_path_get_dirname (file);
    gchar *doc = g_build_filename (dir, "element.md", NULL);

    if (g_file_test (doc, G_FILE_TEST_IS_REGULAR))
      gst_tbqueue_set_doc_file (doc);
    g_free (doc);
    g_free (dir);
  }
  return GST_ELEMENT_REGISTER (tbqueue, plugin)
      && GST_ELEMENT_REGISTER (tbqsplit, plugin)
      && GST_ELEMENT_REGISTER (tbqjoin, plugin)
      && GST_ELEMENT_REGISTER (tbqparallel, plugin)
      && gst_tbq_levels_tracer_register (plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, tbqueue,
    "Two-layer queue: a small hot source pool for the pushing thread, a "
    "large pool for the backlog", plugin_init, PACKAGE_VERSION, "LGPL",
    "tbqueue", "https://github.com/tbqueue/tbqueue")

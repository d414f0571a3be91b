/* The tbqueue plugin.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>

#include "gsttbqueue.h"

gboolean gst_tbq_levels_tracer_register (GstPlugin * plugin);

static gboolean
plugin_init (GstPlugin * plugin)
{
  return GST_ELEMENT_REGISTER (tbqueue, plugin)
      && gst_tbq_levels_tracer_register (plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, tbqueue,
    "Two-layer queue: a small hot source pool for the pushing thread, a "
    "large pool for the backlog", plugin_init, PACKAGE_VERSION, "LGPL",
    "tbqueue", "https://github.com/tbqueue/tbqueue")

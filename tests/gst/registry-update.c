/* Build the GStreamer registry the element tests use, at build time.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Scanning plugins leaves one-time allocations behind that LeakSanitizer
 * would report in whichever test scans first; a registry that is already up
 * to date makes the tests load it instead.  Built with the tests' own
 * sanitizer options, so it can load a sanitizer build of the plugin.
 * Exits non-zero if the tbqueue element is not found.
 */
#include <gst/gst.h>

int
main (int argc, char **argv)
{
  GstElementFactory *f;

  gst_init (&argc, &argv);
  f = gst_element_factory_find ("tbqueue");
  if (f == NULL) {
    g_printerr ("tbqueue not found in %s\n", g_getenv ("GST_PLUGIN_PATH"));
    return 1;
  }
  gst_object_unref (f);
  return 0;
}

/* Build the GStreamer registry the element tests use, at build time.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Scanning plugins leaves one-time allocations behind that LeakSanitizer
 * would report in whichever test scans first; a registry that is already up
 * to date makes the tests load it instead.  Built with the tests' own
 * sanitizer options, so it can load a sanitizer build of the plugin.
 *
 * usage: registry-update PLUGIN...
 * Exits non-zero if the tbqueue element is not found, or if the registry
 * holds a plugin that is neither ours nor one of the PLUGINs named (the
 * isolation of the tests from the machine's other plugins failed).
 */
#include <gst/gst.h>

static gboolean
plugin_expected (const gchar * name, int argc, char **argv)
{
  int i;

  /* GStreamer's own static plugin (bins, pipelines) and ours. */
  if (g_str_equal (name, "staticelements") || g_str_equal (name, "tbqueue"))
    return TRUE;
  for (i = 1; i < argc; i++)
    if (g_str_equal (name, argv[i]))
      return TRUE;
  return FALSE;
}

int
main (int argc, char **argv)
{
  GstElementFactory *f;
  GList *plugins, *l;
  int ret = 0;

  gst_init (NULL, NULL);
  f = gst_element_factory_find ("tbqueue");
  if (f == NULL) {
    g_printerr ("tbqueue not found in %s\n", g_getenv ("GST_PLUGIN_PATH"));
    return 1;
  }
  gst_object_unref (f);

  plugins = gst_registry_get_plugin_list (gst_registry_get ());
  for (l = plugins; l != NULL; l = l->next) {
    const gchar *name = gst_plugin_get_name (l->data);

    if (!plugin_expected (name, argc, argv)) {
      g_printerr ("registry-update: plugin %s (%s) is visible to the tests\n",
          name, gst_plugin_get_filename (l->data));
      ret = 1;
    }
  }
  gst_plugin_list_free (plugins);
  return ret;
}

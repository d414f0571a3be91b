/* tbqueue-demo: run GStreamer pipelines that use tbqueue to EOS and print
 * what each tbqueue element did.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * usage: tbqueue-demo "PIPELINE" ["PIPELINE" ...]
 * Exits non-zero if a pipeline fails to reach EOS.
 */
#include <gst/gst.h>

static gboolean
print_field (GQuark field, const GValue * value,
    G_GNUC_UNUSED gpointer user_data)
{
  gchar *s = gst_value_serialize (value);

  g_print ("      %-22s %s\n", g_quark_to_string (field), s);
  g_free (s);
  return TRUE;
}

static void
print_stats (GstElement * pipeline)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  GValue item = G_VALUE_INIT;

  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&item);
    GstElementFactory *f = gst_element_get_factory (e);

    if (f && g_str_equal (GST_OBJECT_NAME (f), "tbqueue")) {
      GstStructure *st = NULL;

      g_object_get (e, "stats", &st, NULL);
      g_print ("    %s:\n", GST_OBJECT_NAME (e));
      gst_structure_foreach (st, print_field, NULL);
      gst_structure_free (st);
    }
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
}

static gboolean
run (const gchar * description)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (description, &err);
  GstBus *bus;
  GstMessage *msg;
  gboolean ok = FALSE;
  gint64 start, end;

  g_print ("pipeline: %s\n", description);
  if (pipeline == NULL) {
    g_printerr ("  cannot build it: %s\n", err->message);
    g_clear_error (&err);
    return FALSE;
  }
  bus = gst_element_get_bus (pipeline);
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  end = g_get_monotonic_time ();
  if (msg == NULL) {
    g_printerr ("  no EOS within 60 s\n");
  } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &err, &dbg);
    g_printerr ("  error: %s (%s)\n", err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
  } else {
    ok = TRUE;
    g_print ("  reached EOS in %.3f s\n", (end - start) / 1e6);
    print_stats (pipeline);
  }
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return ok;
}

int
main (int argc, char **argv)
{
  GstElementFactory *factory;
  gboolean ok = TRUE;
  int i;

  if (argc < 2) {
    g_printerr ("usage: %s \"PIPELINE\" [\"PIPELINE\" ...]\n", argv[0]);
    return 2;
  }
  gst_init (&argc, &argv);
  factory = gst_element_factory_find ("tbqueue");
  if (factory == NULL) {
    g_printerr ("the tbqueue element is not found: set GST_PLUGIN_PATH to "
        "the build's gst/ directory or install the plugin\n");
    return 1;
  }
  gst_object_unref (factory);
  for (i = 1; i < argc; i++)
    ok &= run (argv[i]);
  return ok ? 0 : 1;
}

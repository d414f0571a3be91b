/* Print the fields of a real tbqueue's `stats` structure, one per line:
 * name and type, in the structure's order.  The structure is read in
 * NULL and in PAUSED (pools allocated), which must give the same fields.
 * For tests/docs/check-stats-doc.py; exit status 2 when there is no
 * tbqueue (GST_PLUGIN_PATH), 3 when the two readings differ.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>

static GstStructure *
stats_of (GstElement * e)
{
  GstStructure *s = NULL;

  g_object_get (e, "stats", &s, NULL);
  return s;
}

static gboolean
same_fields (const GstStructure * a, const GstStructure * b)
{
  gint i;

  if (gst_structure_n_fields (a) != gst_structure_n_fields (b))
    return FALSE;
  for (i = 0; i < gst_structure_n_fields (a); i++)
    if (g_strcmp0 (gst_structure_nth_field_name (a, i),
            gst_structure_nth_field_name (b, i)) != 0)
      return FALSE;
  return TRUE;
}

int
main (int argc, char **argv)
{
  GstElement *e;
  GstStructure *idle, *running;
  gint i, status = 0;

  gst_init (&argc, &argv);
  e = gst_element_factory_make ("tbqueue", NULL);
  if (e == NULL) {
    g_printerr ("no tbqueue element: is GST_PLUGIN_PATH set to the build's "
        "gst/?\n");
    return 2;
  }
  idle = stats_of (e);
  if (gst_element_set_state (e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE) {
    g_printerr ("tbqueue does not go to PAUSED\n");
    return 2;
  }
  running = stats_of (e);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
  if (idle == NULL || running == NULL || !same_fields (idle, running)) {
    g_printerr ("the stats fields in NULL and in PAUSED differ\n");
    status = 3;
  }
  if (idle != NULL) {
    g_print ("# %s\n", gst_structure_get_name (idle));
    for (i = 0; i < gst_structure_n_fields (idle); i++) {
      const gchar *name = gst_structure_nth_field_name (idle, i);

      g_print ("%s %s\n", name,
          g_type_name (gst_structure_get_field_type (idle, name)));
    }
    gst_structure_free (idle);
  }
  if (running != NULL)
    gst_structure_free (running);
  gst_deinit ();
  return status;
}

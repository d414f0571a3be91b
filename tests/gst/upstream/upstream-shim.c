/* GStreamer's own queue tests, run against tbqueue: "queue" is a tbqueue.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See upstream-shim.h for what changes and why.
 */
#include <gst/check/gstcheck.h>

#include "upstream-shim.h"

static const gchar *transfer;

gboolean
tbq_upstream_may_copy (void)
{
  return g_strcmp0 (transfer, "reference") != 0;
}

void
tbq_upstream_identity_differs (gconstpointer received, gconstpointer pushed,
    const gchar * what, const gchar * file, int line)
{
  fail_unless (received != NULL, "%s:%d: nothing received", file, line);
  g_print ("%s:%d: identity differs (transfer=%s delivers a copy): %s\n",
      file, line, transfer, what);
}

/* A queue made by the tests is a tbqueue with the wanted transfer mode. */
static void
shim_constructed (GObject * object)
{
  GObjectClass *parent = g_type_class_peek_parent (G_OBJECT_GET_CLASS
      (object));

  if (parent->constructed)
    parent->constructed (object);
  gst_util_set_object_arg (object, "transfer", transfer);
}

static void
shim_class_init (gpointer klass, gpointer data)
{
  G_OBJECT_CLASS (klass)->constructed = shim_constructed;
}

static GType
register_shim_type (void)
{
  GstElementFactory *f = gst_element_factory_find ("tbqueue");
  GstPluginFeature *loaded;
  GTypeInfo info = { 0, };
  GTypeQuery q;
  GType parent;

  /* Before any test runs: g_error, not fail_unless, reports a failure. */
  if (f == NULL)
    g_error ("tbqueue not found (GST_PLUGIN_PATH=%s)",
        g_getenv ("GST_PLUGIN_PATH"));
  loaded = gst_plugin_feature_load (GST_PLUGIN_FEATURE (f));
  if (loaded == NULL)
    g_error ("tbqueue could not be loaded");
  parent = gst_element_factory_get_element_type (GST_ELEMENT_FACTORY
      (loaded));
  gst_object_unref (loaded);
  gst_object_unref (f);

  g_type_query (parent, &q);
  info.class_size = q.class_size;
  info.instance_size = q.instance_size;
  info.class_init = shim_class_init;
  return g_type_register_static (parent, "TbqUpstreamQueue", &info, 0);
}

void
tbq_upstream_check_init (int *argc, char **argv[])
{
  const gchar *factory = g_getenv ("TBQ_UPSTREAM_FACTORY");
  GstPlugin *core;
  GType type;

  /* The real one: the parentheses keep the macro from expanding. */
  (gst_check_init) (argc, argv);
  transfer = g_getenv ("TBQ_UPSTREAM_TRANSFER");
  if (transfer == NULL)
    transfer = "auto";
  /* "queue", or "queue2" for queue2's tests. */
  if (factory == NULL)
    factory = "queue";
  /* Load the real queue's plugin first: loading it later would register
   * the name again and take it back. */
  core = gst_plugin_load_by_name ("coreelements");
  if (core == NULL)
    g_error ("coreelements not found");
  gst_object_unref (core);
  type = register_shim_type ();
  if (!gst_element_register (NULL, factory, GST_RANK_NONE, type))
    g_error ("could not register tbqueue as \"%s\"", factory);
  g_print ("GStreamer's %s tests: \"%s\" is tbqueue transfer=%s\n",
      factory, factory, transfer);
}

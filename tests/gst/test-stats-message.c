/* tbqueue's "tbqueue-levels" element message, every levels-interval ns,
 * and gst_tbqueue_stats_post(), which posts one at once.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The plugin is compiled into this test and registered statically, so
 * that the test can call the element's own functions; it sees no other
 * copy of the plugin (tests/gst/meson.build).  Downstream is held on
 * STREAM_START: the element's streaming threads are all blocked or idle,
 * so every message that comes is the clock's doing.  The test waits for
 * messages, never for a time.
 */
#include "tbq-check.h"
/* The element's headers name their own default debug category. */
#undef GST_CAT_DEFAULT
#include "gsttbqueue-stats.h"

GST_PLUGIN_STATIC_DECLARE (tbqueue);

static guint64
interval_of (TbqLink * l)
{
  guint64 ns;

  g_object_get (l->element, "levels-interval", &ns, NULL);
  return ns;
}

static GstBus *
link_bus (TbqLink * l)
{
  GstBus *bus = gst_bus_new ();

  gst_element_set_bus (l->element, bus);
  return bus;
}

static void
bus_free (TbqLink * l, GstBus * bus)
{
  gst_element_set_bus (l->element, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

/* The structure of the next levels message (a copy), from `element`. */
static GstStructure *
wait_levels (GstBus * bus, GstElement * element)
{
  for (;;) {
    GstMessage *m = tbq_bus_wait (bus, GST_MESSAGE_ELEMENT);
    GstStructure *s;

    fail_unless (m != NULL, "no %s message", GST_TBQUEUE_LEVELS_MESSAGE_NAME);
    if (!gst_structure_has_name (gst_message_get_structure (m),
            GST_TBQUEUE_LEVELS_MESSAGE_NAME)) {
      gst_message_unref (m);
      continue;
    }
    fail_unless (GST_MESSAGE_SRC (m) == GST_OBJECT_CAST (element));
    s = gst_structure_copy (gst_message_get_structure (m));
    gst_message_unref (m);
    return s;
  }
}

static guint64
field (const GstStructure * s, const gchar * name)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, name, &v), "no field %s", name);
  return v;
}

/* The message has the fields of `stats`, in its order. */
static void
check_same_fields_as_stats (const GstStructure * s, GstElement * element)
{
  GstStructure *stats = NULL;
  gint i;

  g_object_get (element, "stats", &stats, NULL);
  fail_unless_equals_int (gst_structure_n_fields (s),
      gst_structure_n_fields (stats));
  for (i = 0; i < gst_structure_n_fields (s); i++) {
    fail_unless_equals_string (gst_structure_nth_field_name (s, i),
        gst_structure_nth_field_name (stats, i));
    fail_unless (G_VALUE_HOLDS_UINT64 (gst_structure_get_value (s,
                gst_structure_nth_field_name (s, i))));
  }
  gst_structure_free (stats);
}

static gboolean
posting (GstElement * element)
{
  GstTbQueue *tbq = GST_TBQUEUE (element);
  gboolean scheduled;

  GST_OBJECT_LOCK (tbq);
  scheduled = tbq->levels_clock_id != NULL;
  GST_OBJECT_UNLOCK (tbq);
  return scheduled;
}

static TbqLink *
unbounded_link (void)
{
  return tbq_link_new ("tbqueue", "transfer", 1, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
}

/* 0, the default: nothing is scheduled and nothing is posted. */
GST_START_TEST (test_no_levels_message_by_default)
{
  TbqLink *l = unbounded_link ();
  GstBus *bus = link_bus (l);
  GstMessage *m;
  guint k;

  fail_unless_equals_uint64 (interval_of (l), 0);
  tbq_link_start_held (l);
  for (k = 0; k < 3; k++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, k, k)),
        GST_FLOW_OK);
  fail_if (posting (l->element));
  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) != NULL) {
    fail_if (gst_structure_has_name (gst_message_get_structure (m),
            GST_TBQUEUE_LEVELS_MESSAGE_NAME));
    gst_message_unref (m);
  }
  tbq_link_release (l);
  bus_free (l, bus);
  tbq_link_free (l);
}

GST_END_TEST;

/* gst_tbqueue_stats_post() posts one message at once, with the stats. */
GST_START_TEST (test_stats_post_posts_the_stats_now)
{
  TbqLink *l = unbounded_link ();
  GstBus *bus = link_bus (l);
  GstMessage *m;
  guint k;

  tbq_link_start_held (l);
  for (k = 0; k < 4; k++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100000, k, k)),
        GST_FLOW_OK);
  gst_tbqueue_stats_post (GST_TBQUEUE (l->element));
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (m != NULL);
  fail_unless (gst_structure_has_name (gst_message_get_structure (m),
          GST_TBQUEUE_LEVELS_MESSAGE_NAME));
  check_same_fields_as_stats (gst_message_get_structure (m), l->element);
  fail_unless_equals_uint64 (field (gst_message_get_structure (m),
          "current-level-buffers"), 4);
  fail_unless (field (gst_message_get_structure (m), "sink-bytes-in-use")
      >= 4 * 100000);
  gst_message_unref (m);
  tbq_link_release (l);
  bus_free (l, bus);
  tbq_link_free (l);
}

GST_END_TEST;

/* With an interval the clock posts the levels while the element runs,
 * also while every one of its threads is blocked; the interval applies at
 * once; the state change to READY stops it. */
GST_START_TEST (test_levels_message_comes_at_its_interval_while_running)
{
  TbqLink *l = unbounded_link ();
  GstBus *bus = link_bus (l);
  GstStructure *s;
  guint k, seen;

  /* Stored in READY, applied from READY to PAUSED. */
  g_object_set (l->element, "levels-interval", 5 * GST_MSECOND, NULL);
  fail_unless_equals_uint64 (interval_of (l), 5 * GST_MSECOND);
  fail_if (posting (l->element));
  tbq_link_start_held (l);
  fail_unless (posting (l->element));
  for (k = 0; k < 6; k++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100000, k, k)),
        GST_FLOW_OK);
  /* Messages taken during the pushes show fewer buffers, or a buffer
   * counted in whose frame is not written yet (a buffer is counted in
   * first): wait for the six frames, queued and in the sink pool. */
  for (seen = 0;; seen++) {
    fail_unless (seen < 100000, "no message shows the 6 frames queued");
    s = wait_levels (bus, l->element);
    if (field (s, "current-level-buffers") == 6
        && field (s, "sink-bytes-in-use") >= 600000)
      break;
    gst_structure_free (s);
  }
  check_same_fields_as_stats (s, l->element);
  fail_unless_equals_uint64 (field (s, "current-level-bytes"), 600000);
  fail_unless (field (s, "peak-level-buffers") >= 6);
  gst_structure_free (s);
  /* And the next ones, with nothing else happening. */
  for (k = 0; k < 3; k++) {
    s = wait_levels (bus, l->element);
    fail_unless_equals_uint64 (field (s, "current-level-buffers"), 6);
    fail_unless_equals_uint64 (field (s, "peak-level-buffers"), 6);
    fail_unless (field (s, "sink-bytes-in-use") >= 600000);
    gst_structure_free (s);
  }

  /* Off at once; a value below a millisecond is refused (the value in
   * use is kept); on again. */
  g_object_set (l->element, "levels-interval", (guint64) 0, NULL);
  fail_if (posting (l->element));
  g_object_set (l->element, "levels-interval", (guint64) 1, NULL);
  fail_unless_equals_uint64 (interval_of (l), 0);
  fail_if (posting (l->element));
  g_object_set (l->element, "levels-interval",
      GST_TBQUEUE_LEVELS_MIN_INTERVAL, NULL);
  fail_unless (posting (l->element));
  gst_structure_free (wait_levels (bus, l->element));

  tbq_link_release (l);
  tbq_link_wait_buffers (l, 6);
  tbq_link_set_state (l, GST_STATE_READY);
  fail_if (posting (l->element));
  /* The interval is kept for the next run. */
  fail_unless_equals_uint64 (interval_of (l), GST_TBQUEUE_LEVELS_MIN_INTERVAL);
  bus_free (l, bus);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_stats_message_suite (void)
{
  Suite *s = suite_create ("tbqueue-stats-message");
  TCase *tc = tbq_tcase (s, "general");
  GstElementFactory *factory;

  /* This build's element, compiled in (its factory "tbqueue"). */
  GST_PLUGIN_STATIC_REGISTER (tbqueue);
  factory = gst_element_factory_find ("tbqueue");
  if (factory == NULL
      || gst_element_factory_get_element_type (factory) != GST_TYPE_TBQUEUE)
    g_error ("the tbqueue factory is not the element compiled in");
  gst_object_unref (factory);
  tcase_add_test (tc, test_no_levels_message_by_default);
  tcase_add_test (tc, test_stats_post_posts_the_stats_now);
  tcase_add_test (tc, test_levels_message_comes_at_its_interval_while_running);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_stats_message);

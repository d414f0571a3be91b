/* tbqueue properties: queue's, with the same specs, and tbqueue's own.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

/* Flags that say what a property is, not how its strings are stored. */
#define MEANINGFUL_FLAGS (G_PARAM_READWRITE | G_PARAM_CONSTRUCT \
    | G_PARAM_CONSTRUCT_ONLY | G_PARAM_DEPRECATED | GST_PARAM_CONTROLLABLE \
    | GST_PARAM_MUTABLE_READY | GST_PARAM_MUTABLE_PAUSED \
    | GST_PARAM_MUTABLE_PLAYING)

static void
assert_same_enum (GType a, GType b, const gchar * name)
{
  GEnumClass *ca = g_type_class_ref (a), *cb = g_type_class_ref (b);
  guint i;

  fail_unless_equals_int (ca->n_values, cb->n_values);
  for (i = 0; i < ca->n_values; i++) {
    GEnumValue *vb = g_enum_get_value (cb, ca->values[i].value);

    fail_unless (vb != NULL, "%s: no value %d", name, ca->values[i].value);
    fail_unless_equals_string (vb->value_nick, ca->values[i].value_nick);
    fail_unless_equals_string (vb->value_name, ca->values[i].value_name);
  }
  g_type_class_unref (ca);
  g_type_class_unref (cb);
}

static void
assert_same_range (GParamSpec * a, GParamSpec * b)
{
  if (G_IS_PARAM_SPEC_UINT (a)) {
    fail_unless_equals_uint64 (G_PARAM_SPEC_UINT (a)->minimum,
        G_PARAM_SPEC_UINT (b)->minimum);
    fail_unless_equals_uint64 (G_PARAM_SPEC_UINT (a)->maximum,
        G_PARAM_SPEC_UINT (b)->maximum);
  } else if (G_IS_PARAM_SPEC_UINT64 (a)) {
    fail_unless_equals_uint64 (G_PARAM_SPEC_UINT64 (a)->minimum,
        G_PARAM_SPEC_UINT64 (b)->minimum);
    fail_unless_equals_uint64 (G_PARAM_SPEC_UINT64 (a)->maximum,
        G_PARAM_SPEC_UINT64 (b)->maximum);
  } else if (G_IS_PARAM_SPEC_INT (a)) {
    fail_unless_equals_int (G_PARAM_SPEC_INT (a)->minimum,
        G_PARAM_SPEC_INT (b)->minimum);
    fail_unless_equals_int (G_PARAM_SPEC_INT (a)->maximum,
        G_PARAM_SPEC_INT (b)->maximum);
  } else if (G_IS_PARAM_SPEC_INT64 (a)) {
    fail_unless_equals_int64 (G_PARAM_SPEC_INT64 (a)->minimum,
        G_PARAM_SPEC_INT64 (b)->minimum);
    fail_unless_equals_int64 (G_PARAM_SPEC_INT64 (a)->maximum,
        G_PARAM_SPEC_INT64 (b)->maximum);
  }
}

static gint
enum_default (GParamSpec * p)
{
  return G_PARAM_SPEC_ENUM (p)->default_value;
}

GST_START_TEST (test_every_queue_property_exists_with_the_same_spec)
{
  GstElement *queue = gst_element_factory_make ("queue", NULL);
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GParamSpec **specs;
  guint i, n;

  fail_unless (queue != NULL && tbq != NULL);
  specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (queue), &n);
  fail_unless (n >= 14, "queue has %u properties", n);
  for (i = 0; i < n; i++) {
    GParamSpec *q = specs[i];
    GParamSpec *t = g_object_class_find_property (G_OBJECT_GET_CLASS (tbq),
        q->name);

    fail_unless (t != NULL, "tbqueue has no property %s", q->name);
    fail_unless (G_PARAM_SPEC_TYPE (q) == G_PARAM_SPEC_TYPE (t),
        "%s: %s, not %s", q->name, G_PARAM_SPEC_TYPE_NAME (t),
        G_PARAM_SPEC_TYPE_NAME (q));
    fail_unless_equals_int (q->flags & MEANINGFUL_FLAGS,
        t->flags & MEANINGFUL_FLAGS);
    if (G_IS_PARAM_SPEC_ENUM (q)) {
      /* GstQueueLeaky is private to queue: same values, same nicks. */
      assert_same_enum (q->value_type, t->value_type, q->name);
      fail_unless_equals_int (enum_default (q), enum_default (t));
    } else {
      fail_unless (q->value_type == t->value_type, "%s: value type",
          q->name);
      if (strcmp (q->name, "name") != 0)
        fail_unless_equals_int (g_param_values_cmp (q,
                g_param_spec_get_default_value (q),
                g_param_spec_get_default_value (t)), 0);
      assert_same_range (q, t);
    }
  }
  g_free (specs);
  gst_object_unref (queue);
  gst_object_unref (tbq);
}

GST_END_TEST;

GST_START_TEST (test_queue_defaults_are_200_buffers_10_MB_1_s)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);

  fail_unless_equals_int (tbq_get_uint (tbq, "max-size-buffers"), 200);
  fail_unless_equals_int (tbq_get_uint (tbq, "max-size-bytes"),
      10 * 1024 * 1024);
  fail_unless_equals_uint64 (tbq_get_uint64 (tbq, "max-size-time"),
      GST_SECOND);
  fail_unless_equals_int (tbq_get_uint (tbq, "min-threshold-buffers"), 0);
  fail_unless_equals_int (tbq_get_uint (tbq, "min-threshold-bytes"), 0);
  fail_unless_equals_uint64 (tbq_get_uint64 (tbq, "min-threshold-time"), 0);
  fail_unless_equals_int (tbq_get_uint (tbq, "current-level-buffers"), 0);
  fail_unless_equals_int (tbq_get_uint (tbq, "current-level-bytes"), 0);
  fail_unless_equals_uint64 (tbq_get_uint64 (tbq, "current-level-time"), 0);
  gst_object_unref (tbq);
}

GST_END_TEST;

typedef struct
{
  const gchar *name;
  GType pspec_type;
  GParamFlags mutable_in;
} OwnProperty;

static const OwnProperty own_properties[] = {
  {"transfer", 0, GST_PARAM_MUTABLE_PLAYING},
  {"copy-threshold", 0, GST_PARAM_MUTABLE_PLAYING},
  {"source-block-size", 0, GST_PARAM_MUTABLE_READY},
  {"source-blocks", 0, GST_PARAM_MUTABLE_READY},
  {"sink-block-size", 0, GST_PARAM_MUTABLE_READY},
  {"sink-min-bytes", 0, GST_PARAM_MUTABLE_READY},
  {"sink-max-bytes", 0, GST_PARAM_MUTABLE_READY},
  {"idle-blocks", 0, GST_PARAM_MUTABLE_READY},
  {"publish-batch", 0, GST_PARAM_MUTABLE_READY},
  {"max-coalesce-latency", 0, GST_PARAM_MUTABLE_READY},
  {"copy-task-cpus", 0, GST_PARAM_MUTABLE_PLAYING},
  {"copy-task-policy", 0, GST_PARAM_MUTABLE_PLAYING},
  {"copy-task-priority", 0, GST_PARAM_MUTABLE_PLAYING},
  {"copy-task-nice", 0, GST_PARAM_MUTABLE_PLAYING},
  {"src-task-cpus", 0, GST_PARAM_MUTABLE_PLAYING},
  {"src-task-policy", 0, GST_PARAM_MUTABLE_PLAYING},
  {"src-task-priority", 0, GST_PARAM_MUTABLE_PLAYING},
  {"src-task-nice", 0, GST_PARAM_MUTABLE_PLAYING},
};

static GType
own_property_type (const gchar * name)
{
  if (strcmp (name, "transfer") == 0 || g_str_has_suffix (name, "-policy"))
    return G_TYPE_PARAM_ENUM;
  if (g_str_has_suffix (name, "-cpus"))
    return G_TYPE_PARAM_STRING;
  if (g_str_has_suffix (name, "-priority") || g_str_has_suffix (name, "-nice"))
    return G_TYPE_PARAM_INT;
  if (strcmp (name, "sink-min-bytes") == 0
      || strcmp (name, "sink-max-bytes") == 0
      || strcmp (name, "max-coalesce-latency") == 0)
    return G_TYPE_PARAM_UINT64;
  return G_TYPE_PARAM_UINT;
}

GST_START_TEST (test_own_properties_are_writable_with_defaults_in_range)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (tbq);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (own_properties); i++) {
    const OwnProperty *o = &own_properties[i];
    GParamSpec *p = g_object_class_find_property (klass, o->name);
    GValue v = G_VALUE_INIT;

    fail_unless (p != NULL, "no property %s", o->name);
    fail_unless (G_PARAM_SPEC_TYPE (p) == own_property_type (o->name),
        "%s is a %s", o->name, G_PARAM_SPEC_TYPE_NAME (p));
    fail_unless ((p->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE,
        "%s is not read-write", o->name);
    fail_unless ((p->flags & (GST_PARAM_MUTABLE_READY |
                GST_PARAM_MUTABLE_PAUSED | GST_PARAM_MUTABLE_PLAYING))
        == o->mutable_in, "%s: wrong mutability", o->name);
    /* The default validates against the range, and is what we read. */
    g_value_init (&v, p->value_type);
    g_object_get_property (G_OBJECT (tbq), o->name, &v);
    fail_unless_equals_int (g_param_values_cmp (p, &v,
            g_param_spec_get_default_value (p)), 0);
    fail_if (g_param_value_validate (p, &v), "%s: default out of range",
        o->name);
    g_value_unset (&v);
  }
  gst_object_unref (tbq);
}

GST_END_TEST;

GST_START_TEST (test_transfer_is_auto_copy_or_reference_default_auto)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (tbq),
      "transfer");
  GEnumClass *klass = g_type_class_ref (p->value_type);
  const gchar *nicks[] = { "auto", "copy", "reference" };
  guint i;

  fail_unless_equals_int (klass->n_values, 3);
  for (i = 0; i < 3; i++)
    fail_unless (g_enum_get_value_by_nick (klass, nicks[i]) != NULL,
        "no transfer mode %s", nicks[i]);
  fail_unless_equals_string (g_enum_get_value (klass,
          enum_default (p))->value_nick, "auto");
  /* Settable by nick, as from gst-launch. */
  gst_util_set_object_arg (G_OBJECT (tbq), "transfer", "reference");
  g_object_get (tbq, "transfer", &i, NULL);
  fail_unless_equals_string (g_enum_get_value (klass, i)->value_nick,
      "reference");
  g_type_class_unref (klass);
  gst_object_unref (tbq);
}

GST_END_TEST;

GST_START_TEST (test_source_pool_is_16_KiB_by_default)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);

  fail_unless_equals_int (tbq_get_uint (tbq, "source-block-size") *
      tbq_get_uint (tbq, "source-blocks"), 16 * 1024);
  fail_unless (tbq_get_uint (tbq, "sink-block-size") >=
      tbq_get_uint (tbq, "source-block-size"));
  fail_unless (tbq_get_uint64 (tbq, "sink-min-bytes") <=
      tbq_get_uint64 (tbq, "sink-max-bytes"));
  gst_object_unref (tbq);
}

GST_END_TEST;

static const gchar *stats_fields[] = {
  "current-level-buffers", "current-level-bytes", "current-level-time",
  "peak-level-buffers", "peak-level-bytes", "peak-level-time",
  "records-in", "records-out", "buffers-copied", "buffers-referenced",
  "copy-fallbacks", "dropped-upstream", "dropped-downstream", "overruns",
  "underruns", "level-waits", "copier-waits", "pressure-waits",
  "source-block-size", "source-blocks", "sink-block-size",
  "sink-blocks",
};

GST_START_TEST (test_stats_is_a_read_only_structure)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (tbq),
      "stats");
  GstStructure *s = NULL;
  guint i;

  fail_unless (p != NULL);
  fail_unless (p->value_type == GST_TYPE_STRUCTURE);
  fail_unless (p->flags & G_PARAM_READABLE);
  fail_if (p->flags & G_PARAM_WRITABLE);

  /* Readable in any state, also before the pools exist. */
  g_object_get (tbq, "stats", &s, NULL);
  fail_unless (s != NULL);
  for (i = 0; i < G_N_ELEMENTS (stats_fields); i++) {
    guint64 v = G_MAXUINT64;

    fail_unless (gst_structure_get_uint64 (s, stats_fields[i], &v),
        "no guint64 field %s", stats_fields[i]);
    if (g_str_has_prefix (stats_fields[i], "current-")
        || g_str_has_prefix (stats_fields[i], "records-"))
      fail_unless_equals_uint64 (v, 0);
  }
  gst_structure_free (s);
  gst_object_unref (tbq);
}

GST_END_TEST;

/* A warning on the bus (RESOURCE SETTINGS) that names `property`. */
static void
expect_settings_warning (GstBus * bus, const gchar * property)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  GError *err = NULL;

  fail_unless (msg != NULL, "no warning on the bus for %s", property);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (err->domain == GST_RESOURCE_ERROR);
  fail_unless_equals_int (err->code, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless (strstr (err->message, property) != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
}

GST_START_TEST (test_geometry_change_in_playing_is_refused_with_a_warning)
{
  TbqLink *l = tbq_link_new ("tbqueue", "transfer", 1 /* copy */ , NULL);
  GstBus *bus = gst_bus_new ();
  guint i, before = tbq_get_uint (l->element, "source-block-size");

  gst_element_set_bus (l->element, bus);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, 0, 0)),
      GST_FLOW_OK);
  /* Posted synchronously, before g_object_set() returns; nothing on
   * stderr. */
  g_object_set (l->element, "source-block-size", 8192, NULL);
  expect_settings_warning (bus, "source-block-size");
  g_object_set (l->element, "sink-max-bytes", (guint64) 1 << 20, NULL);
  expect_settings_warning (bus, "sink-max-bytes");
  fail_unless_equals_int (tbq_get_uint (l->element, "source-block-size"),
      before);
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element, "sink-max-bytes"),
      (guint64) 256 * 1024 * 1024);
  for (i = 1; i < 10; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, i, i)),
        GST_FLOW_OK);
  tbq_link_wait_buffers (l, 10);
  for (i = 0; i < 10; i++) {
    GstBuffer *b = tbq_link_buffer (l, i);

    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i);
    fail_unless (tbq_buffer_has_pattern (b, 100, i));
  }
  /* Back in READY the new geometry is accepted, without a warning. */
  tbq_link_set_state (l, GST_STATE_READY);
  g_object_set (l->element, "source-block-size", 8192, NULL);
  fail_unless_equals_int (tbq_get_uint (l->element, "source-block-size"),
      8192);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  gst_element_set_bus (l->element, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- values that cannot work are refused as they are set ---- */

/* `property` set to `value`, in its own type. */
static void
set_number (GstElement * e, const gchar * property, gint64 value)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      property);

  fail_unless (p != NULL, "no property %s", property);
  if (p->value_type == G_TYPE_UINT64)
    g_object_set (e, property, (guint64) value, NULL);
  else if (p->value_type == G_TYPE_UINT)
    g_object_set (e, property, (guint) value, NULL);
  else
    g_object_set (e, property, (gint) value, NULL);
}

/* The value of `property` now. */
static GValue *
value_of (GstElement * e, const gchar * property)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      property);
  GValue *v = g_new0 (GValue, 1);

  g_value_init (v, p->value_type);
  g_object_get_property (G_OBJECT (e), property, v);
  return v;
}

static void
assert_unchanged (GstElement * e, const gchar * property, GValue * before)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      property);
  GValue *now = value_of (e, property);

  fail_unless (g_param_values_cmp (p, before, now) == 0, "%s changed",
      property);
  g_value_unset (now);
  g_free (now);
  g_value_unset (before);
  g_free (before);
}

/* A value the range of its param spec cannot express: the element refuses
 * it as it is set, with a warning message on the bus that names the
 * property, keeps the value in use, and starts with it. */
static void
assert_refused_by_the_element (const gchar * property, gint64 value)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();
  GValue *before = value_of (e, property);

  gst_element_set_bus (e, bus);
  set_number (e, property, value);
  expect_settings_warning (bus, property);
  assert_unchanged (e, property, before);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus (e, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

static gboolean
count_warning (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  (*(guint *) user_data)++;
  /* Expected: not passed on to gst-check's handler, which would fail. */
  return TRUE;
}

/* A value out of its param spec's range: GObject refuses it before the
 * element sees it, with GLib's warning naming the property, and the value
 * in use stays. */
static void
assert_refused_by_the_range (const gchar * property, gint64 value)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  gchar *names = g_strdup_printf ("property '%s'", property);
  gchar *pattern = g_regex_escape_string (names, -1);
  GValue *before = value_of (e, property);
  GstCheckLogFilter *filter;
  guint warnings = 0;

  filter = gst_check_add_log_filter ("GLib-GObject", G_LOG_LEVEL_WARNING,
      g_regex_new (pattern, 0, 0, NULL), count_warning, &warnings, NULL);
  set_number (e, property, value);
  gst_check_remove_log_filter (filter);
  fail_unless_equals_int (warnings, 1);
  assert_unchanged (e, property, before);
  g_free (pattern);
  g_free (names);
  gst_object_unref (e);
}

GST_START_TEST (test_sink_max_bytes_of_0_is_refused)
{
  /* At least two of the smallest sink blocks (128 bytes). */
  assert_refused_by_the_range ("sink-max-bytes", 0);
}

GST_END_TEST;

GST_START_TEST (test_sink_max_bytes_below_two_blocks_of_128_is_refused)
{
  assert_refused_by_the_range ("sink-max-bytes", 255);
}

GST_END_TEST;

GST_START_TEST (test_a_source_block_size_no_multiple_of_64_is_refused)
{
  assert_refused_by_the_element ("source-block-size", 4000);
}

GST_END_TEST;

GST_START_TEST (test_a_sink_block_size_no_multiple_of_64_is_refused)
{
  assert_refused_by_the_element ("sink-block-size", 65536 + 32);
}

GST_END_TEST;

GST_START_TEST (test_max_coalesce_latency_below_a_microsecond_is_refused)
{
  /* Not a geometry: refused as it is set, no longer at PAUSED. */
  assert_refused_by_the_element ("max-coalesce-latency", 500);
}

GST_END_TEST;

GST_START_TEST (test_a_negative_priority_is_refused)
{
  /* Nice values have properties of their own now. */
  assert_refused_by_the_range ("copy-task-priority", -5);
}

GST_END_TEST;

GST_START_TEST (test_a_priority_above_99_is_refused)
{
  assert_refused_by_the_range ("src-task-priority", 100);
}

GST_END_TEST;

GST_START_TEST (test_a_nice_value_above_19_is_refused)
{
  assert_refused_by_the_range ("copy-task-nice", 20);
}

GST_END_TEST;

/* -1, the usual "none", and anything above G_MAXINT64: a first tick
 * computed as now + interval would wrap into the past and come for ever. */
GST_START_TEST (test_a_levels_interval_beyond_g_maxint64_is_refused)
{
  assert_refused_by_the_range ("levels-interval", -1);
  assert_refused_by_the_range ("levels-interval", G_MININT64);
}

GST_END_TEST;

GST_START_TEST (test_a_refused_value_in_playing_keeps_the_value_too)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  GstBus *bus = gst_bus_new ();

  gst_element_set_bus (l->element, bus);
  tbq_link_start (l);
  g_object_set (l->element, "max-coalesce-latency", (guint64) 10, NULL);
  expect_settings_warning (bus, "max-coalesce-latency");
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "max-coalesce-latency"), 500 * GST_USECOND);
  gst_element_set_bus (l->element, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  tbq_link_free (l);
}

GST_END_TEST;

/* As on a gst-launch-1.0 line: set before the element has a bus, the
 * refusal is said again when the tasks start, once. */
GST_START_TEST (test_a_value_refused_before_there_is_a_bus_is_said_at_start)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();

  g_object_set (e, "source-block-size", 1000, NULL);
  fail_unless_equals_int (tbq_get_uint (e, "source-block-size"), 4096);
  gst_element_set_bus (e, bus);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  expect_settings_warning (bus, "source-block-size");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus (e, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
tbqueue_properties_suite (void)
{
  Suite *s = suite_create ("tbqueue-properties");
  TCase *tc = tbq_tcase (s, "properties");

  tcase_add_test (tc, test_every_queue_property_exists_with_the_same_spec);
  tcase_add_test (tc, test_queue_defaults_are_200_buffers_10_MB_1_s);
  tcase_add_test (tc, test_own_properties_are_writable_with_defaults_in_range);
  tcase_add_test (tc, test_transfer_is_auto_copy_or_reference_default_auto);
  tcase_add_test (tc, test_source_pool_is_16_KiB_by_default);
  tcase_add_test (tc, test_stats_is_a_read_only_structure);
  tcase_add_test (tc,
      test_geometry_change_in_playing_is_refused_with_a_warning);
  tcase_add_test (tc, test_sink_max_bytes_of_0_is_refused);
  tcase_add_test (tc, test_sink_max_bytes_below_two_blocks_of_128_is_refused);
  tcase_add_test (tc, test_a_source_block_size_no_multiple_of_64_is_refused);
  tcase_add_test (tc, test_a_sink_block_size_no_multiple_of_64_is_refused);
  tcase_add_test (tc,
      test_max_coalesce_latency_below_a_microsecond_is_refused);
  tcase_add_test (tc, test_a_negative_priority_is_refused);
  tcase_add_test (tc, test_a_priority_above_99_is_refused);
  tcase_add_test (tc, test_a_nice_value_above_19_is_refused);
  tcase_add_test (tc, test_a_levels_interval_beyond_g_maxint64_is_refused);
  tcase_add_test (tc, test_a_refused_value_in_playing_keeps_the_value_too);
  tcase_add_test (tc,
      test_a_value_refused_before_there_is_a_bus_is_said_at_start);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_properties);

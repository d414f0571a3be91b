/* Helpers of the tbqlevels tracer tests: GStreamer started with the
 * tracer, pipelines fed from the test thread, a gate that holds
 * downstream, and the tracer's CSV file read back.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "levels-check.h"

/* ---- GStreamer with the tracer ---- */

static gchar *tmp_dir;
GPtrArray *records;             /* "tbqlevels, ..." tracer record lines */
static GPtrArray *warnings;     /* g_warning messages */
static GMutex log_lock;

static void
capture_records (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  const gchar *text = gst_debug_message_get (message);

  if (level != GST_LEVEL_TRACE || !g_str_has_prefix (text, "tbqlevels, "))
    return;
  g_mutex_lock (&log_lock);
  g_ptr_array_add (records, g_strdup (text));
  g_mutex_unlock (&log_lock);
}

static void
capture_warnings (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  g_mutex_lock (&log_lock);
  g_ptr_array_add (warnings, g_strdup (message));
  g_mutex_unlock (&log_lock);
}

/* Start GStreamer with GST_TRACERS="tbqlevels(params)"; %s in `params`
 * becomes the path of a CSV file of this test, returned. */
gchar *
start (const gchar * params)
{
  gchar *csv, *p, *tracers;

  tmp_dir = g_dir_make_tmp ("tbqlevels-XXXXXX", NULL);
  CHECK (tmp_dir != NULL);
  csv = g_build_filename (tmp_dir, "levels.csv", NULL);
  p = g_strdup_printf (params, csv);
  tracers = g_strdup_printf ("tbqlevels(%s)", p);
  g_setenv ("GST_TRACERS", tracers, TRUE);
  g_free (tracers);
  g_free (p);

  records = g_ptr_array_new_with_free_func (g_free);
  warnings = g_ptr_array_new_with_free_func (g_free);
  g_log_set_default_handler (capture_warnings, NULL);
  gst_init (NULL, NULL);
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (capture_records, NULL, NULL);
  gst_debug_set_threshold_for_name ("GST_TRACER", GST_LEVEL_TRACE);
  return csv;
}

/* Shut GStreamer down (the tracer closes its file) and clean up. */
void
stop (gchar * csv)
{
  gst_debug_remove_log_function (capture_records);
  gst_deinit ();
  g_unlink (csv);
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  g_free (csv);
  g_ptr_array_unref (records);
  g_ptr_array_unref (warnings);
}

gboolean
warned_about (const gchar * text)
{
  guint i;

  for (i = 0; i < warnings->len; i++)
    if (strstr (g_ptr_array_index (warnings, i), text) != NULL)
      return TRUE;
  return FALSE;
}

/* ---- feeding a pipeline from the test thread ---- */

/* A source pad of ours linked to `sinkpad`, with its stream started. */
GstPad *
feed_new (GstPad * sinkpad, const gchar * stream_id)
{
  GstPad *pad = gst_pad_new (stream_id, GST_PAD_SRC);
  GstSegment segment;

  CHECK (gst_pad_link (pad, sinkpad) == GST_PAD_LINK_OK);
  gst_pad_set_active (pad, TRUE);
  CHECK (gst_pad_push_event (pad, gst_event_new_stream_start (stream_id)));
  CHECK (gst_pad_push_event (pad,
          gst_event_new_caps (gst_caps_new_empty_simple ("test/x-levels"))));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  CHECK (gst_pad_push_event (pad, gst_event_new_segment (&segment)));
  return pad;
}

void
feed_buffers (GstPad * pad, guint from, guint n)
{
  guint i;

  for (i = from; i < from + n; i++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, BUFFER_SIZE, NULL);

    gst_buffer_memset (b, 0, (guint8) i, BUFFER_SIZE);
    GST_BUFFER_PTS (b) = i * 10 * GST_MSECOND;
    GST_BUFFER_DURATION (b) = 10 * GST_MSECOND;
    CHECK_EQ (gst_pad_push (pad, b), GST_FLOW_OK);
  }
}

static void
feed_free (GstPad * pad)
{
  gst_pad_set_active (pad, FALSE);
  gst_object_unref (pad);
}

/* ---- a gate that holds downstream ---- */

static struct
{
  GMutex lock;
  GCond cond;
  guint entered;                /* buffers that reached the gate */
  gboolean open;
} gate;

static GstPadProbeReturn
gate_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  g_mutex_lock (&gate.lock);
  gate.entered++;
  g_cond_broadcast (&gate.cond);
  while (!gate.open)
    g_cond_wait (&gate.cond, &gate.lock);
  g_mutex_unlock (&gate.lock);
  return GST_PAD_PROBE_OK;
}

/* Hold buffers before the sink pad of the element named `name`. */
void
gate_hold (GstElement * pipeline, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);
  GstPad *pad = gst_element_get_static_pad (e, "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, gate_probe, NULL, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
}

void
gate_wait_entered (guint n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_SECONDS * G_TIME_SPAN_SECOND;

  g_mutex_lock (&gate.lock);
  while (gate.entered < n)
    CHECK (g_cond_wait_until (&gate.cond, &gate.lock, deadline)
        || gate.entered >= n);
  g_mutex_unlock (&gate.lock);
}

void
gate_open (void)
{
  g_mutex_lock (&gate.lock);
  gate.open = TRUE;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
}

/* ---- running a pipeline ---- */

void
play (GstElement * pipeline)
{
  CHECK (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
}

void
feed_backlog (GstPad * feed, guint gates, guint more)
{
  feed_buffers (feed, 0, 1);
  gate_wait_entered (gates);
  feed_buffers (feed, 1, more);
}

static void
wait_eos (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m = gst_bus_timed_pop_filtered (bus,
      WAIT_SECONDS * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  CHECK (m != NULL);
  CHECK (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
  gst_message_unref (m);
  gst_object_unref (bus);
}

void
finish (GstElement * pipeline, GstPad * feed, ...)
{
  GPtrArray *feeds = g_ptr_array_new ();
  va_list args;
  guint i;

  va_start (args, feed);
  for (; feed != NULL; feed = va_arg (args, GstPad *))
    g_ptr_array_add (feeds, feed);
  va_end (args);
  gate_open ();
  for (i = 0; i < feeds->len; i++)
    CHECK (gst_pad_push_event (g_ptr_array_index (feeds, i),
            gst_event_new_eos ()));
  wait_eos (pipeline);
  for (i = 0; i < feeds->len; i++)
    feed_free (g_ptr_array_index (feeds, i));
  g_ptr_array_unref (feeds);
}

/* Objects not finalized yet, of the pipeline pipeline_free() released. */
static struct
{
  GMutex lock;
  GCond cond;
  guint alive;
} finalized;

static void
forget (gpointer data, GObject * where_the_object_was)
{
  g_mutex_lock (&finalized.lock);
  finalized.alive--;
  g_cond_broadcast (&finalized.cond);
  g_mutex_unlock (&finalized.lock);
}

static void
watch (gpointer object)
{
  g_mutex_lock (&finalized.lock);
  finalized.alive++;
  g_mutex_unlock (&finalized.lock);
  g_object_weak_ref (object, forget, NULL);
}

/* NULL state and unref: every element must be finalized (the tracer keeps
 * no reference).  GStreamer may drop its last reference a little later in
 * another thread (the bin's asynchronous state handling): wait for it. */
void
pipeline_free (GstElement * pipeline)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  GValue v = G_VALUE_INIT;
  gint64 deadline;

  CHECK (gst_element_set_state (pipeline, GST_STATE_NULL)
      == GST_STATE_CHANGE_SUCCESS);
  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    watch (g_value_get_object (&v));
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  watch (pipeline);
  gst_object_unref (pipeline);

  deadline = g_get_monotonic_time () + WAIT_SECONDS * G_TIME_SPAN_SECOND;
  g_mutex_lock (&finalized.lock);
  while (finalized.alive > 0
      && g_cond_wait_until (&finalized.cond, &finalized.lock, deadline));
  CHECK_EQ (finalized.alive, 0);
  g_mutex_unlock (&finalized.lock);
}

/* ---- reading the CSV file ---- */

Csv *
csv_read (const gchar * path)
{
  Csv *csv = g_new0 (Csv, 1);
  gchar *text = NULL, **lines, **l;

  CHECK (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  CHECK (lines[0] != NULL);
  csv->header = g_strsplit (lines[0], ",", -1);
  csv->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  csv->lines = g_ptr_array_new_with_free_func (g_free);
  for (l = lines + 1; *l != NULL; l++) {
    if (**l == '\0')
      continue;
    g_ptr_array_add (csv->rows, g_strsplit (*l, ",", -1));
    g_ptr_array_add (csv->lines, g_strdup (*l));
    CHECK_EQ (g_strv_length (g_ptr_array_index (csv->rows,
                csv->rows->len - 1)), g_strv_length (csv->header));
  }
  g_strfreev (lines);
  g_free (text);
  return csv;
}

void
csv_free (Csv * csv)
{
  g_strfreev (csv->header);
  g_ptr_array_unref (csv->rows);
  g_ptr_array_unref (csv->lines);
  g_free (csv);
}

const gchar *
cell (Csv * csv, guint row, const gchar * column)
{
  gchar **r = g_ptr_array_index (csv->rows, row);
  guint i;

  for (i = 0; csv->header[i] != NULL; i++)
    if (strcmp (csv->header[i], column) == 0)
      return r[i];
  fprintf (stdout, "# no column %s\n", column);
  CHECK (FALSE);
  return NULL;
}

guint64
value (Csv * csv, guint row, const gchar * column)
{
  const gchar *c = cell (csv, row, column);

  CHECK (*c != '\0');
  return g_ascii_strtoull (c, NULL, 10);
}

static gboolean
row_is (Csv * csv, guint row, const gchar * element, const gchar * queue)
{
  return strcmp (cell (csv, row, "element"), element) == 0
      && (queue == NULL || strcmp (cell (csv, row, "queue"), queue) == 0);
}

/* Rows of `element` (of its single queue `queue`, if not NULL). */
guint
count_rows (Csv * csv, const gchar * element, const gchar * queue)
{
  guint i, n = 0;

  for (i = 0; i < csv->rows->len; i++)
    n += row_is (csv, i, element, queue);
  return n;
}

guint64
max_of (Csv * csv, const gchar * element, const gchar * queue,
    const gchar * column)
{
  guint64 m = 0;
  guint i;

  for (i = 0; i < csv->rows->len; i++)
    if (row_is (csv, i, element, queue))
      m = MAX (m, value (csv, i, column));
  return m;
}

guint
last_row (Csv * csv, const gchar * element, const gchar * queue)
{
  guint i, last = G_MAXUINT;

  for (i = 0; i < csv->rows->len; i++)
    if (row_is (csv, i, element, queue))
      last = i;
  CHECK (last != G_MAXUINT);
  return last;
}

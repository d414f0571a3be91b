/* tbqueue waits that end: every wait of the upstream thread ends when
 * what it waits for has changed, whoever changed it.  Each case is a
 * pipeline or a push sequence that once left a thread asleep for ever;
 * queue runs them all.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

static const gchar *factories[] = { "queue", "tbqueue" };

/* ---- a SEGMENT's position past max-size-time ---- */

/* STREAM_START is held downstream and CAPS queued behind it, so the
 * SEGMENT that follows is applied to the sink side only: its position
 * (3 s) puts the time level past max-size-time (1 s, the default) with no
 * buffer queued, and the next buffer waits for room.  When downstream
 * takes STREAM_START, CAPS and the SEGMENT, the src side's running time
 * moves to 3 s too: the level is 0, and the waiting buffer goes in. */
GST_START_TEST (test_a_segment_past_max_size_time_does_not_hold_upstream)
{
  TbqLink *l = tbq_link_new (factories[__i__], NULL, NULL);
  GstCaps *caps = gst_caps_new_empty_simple ("x-tbq/test");
  GstSegment segment;
  TbqPush *push[3];
  guint i;

  tbq_link_start_held_no_segment (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_caps (caps)));
  gst_caps_unref (caps);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.position = 3 * GST_SECOND;
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  /* One thread pushes them in order: the first waits for room. */
  push[0] = tbq_push_async (l, GST_MINI_OBJECT_CAST (tbq_buffer_new (8, 0,
              3 * GST_SECOND)));
  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push[0]), GST_FLOW_OK);
  for (i = 1; i < 3; i++) {
    push[i] = tbq_push_async (l, GST_MINI_OBJECT_CAST (tbq_buffer_new (8, i,
                3 * GST_SECOND + i * GST_MSECOND)));
    fail_unless_equals_int (tbq_push_join (push[i]), GST_FLOW_OK);
  }
  tbq_link_wait_buffers (l, 3);
  for (i = 0; i < 3; i++)
    fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, i), 8, i));
  tbq_link_free (l);
}

GST_END_TEST;

/* The same with a GAP whose end is past max-size-time. */
GST_START_TEST (test_a_gap_past_max_size_time_does_not_hold_upstream)
{
  TbqLink *l = tbq_link_new (factories[__i__], NULL, NULL);
  GstSegment segment;
  TbqPush *push;

  tbq_link_start_held_no_segment (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless (tbq_link_push_event (l, gst_event_new_gap (0,
              5 * GST_SECOND)));
  push = tbq_push_async (l, GST_MINI_OBJECT_CAST (tbq_buffer_new (8, 7,
              5 * GST_SECOND)));
  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 0), 8, 7));
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- leaky frames at the sink pool's limit ---- */

/* Frames copied into a 1 MiB sink pool, downstream slower than upstream:
 * the sink pool is full most of the time and downstream gives a frame's
 * memory back at any moment, also between a refused write and the look
 * at the pool that follows it.  Every push returns and EOS comes, with
 * leaky=upstream and leaky=downstream alike; the frames that come out
 * come in order. */
static const gchar *leaky_modes[] = { "upstream", "downstream" };

static guint last_offset, n_out;
static gboolean in_order;

static GstPadProbeReturn
order_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);

  if (GST_BUFFER_OFFSET (b) < last_offset && last_offset != G_MAXUINT)
    in_order = FALSE;
  last_offset = GST_BUFFER_OFFSET (b);
  n_out++;
  return GST_PAD_PROBE_OK;
}

static void
run_pipeline_to_eos (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS: the pipeline hangs");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_object_unref (bus);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
}

GST_START_TEST (test_leaky_frames_at_the_sink_pool_limit_never_stop)
{
  guint frames = tbq_scaled (3000, 300);
  gchar *desc = g_strdup_printf ("fakesrc sizetype=fixed sizemax=50000 "
      "filltype=nothing num-buffers=%u ! tbqueue name=q leaky=%s "
      "transfer=copy sink-max-bytes=1048576 max-size-buffers=0 "
      "max-size-bytes=0 max-size-time=0 ! identity sleep-time=200 ! "
      "fakesink name=sink sync=false", frames, leaky_modes[__i__]);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *q, *sink;
  GstPad *pad;

  fail_unless (pipeline != NULL);
  q = gst_bin_get_by_name (GST_BIN (pipeline), "q");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  last_offset = G_MAXUINT;
  n_out = 0;
  in_order = TRUE;
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, order_probe, NULL, NULL);
  run_pipeline_to_eos (pipeline);
  fail_unless (in_order, "frames came out of order");
  /* Nothing vanished: what did not come out was counted as dropped. */
  fail_unless_equals_uint64 (tbq_stat (q, "dropped-upstream")
      + tbq_stat (q, "dropped-downstream") + n_out, frames);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (q);
  gst_object_unref (pipeline);
  g_free (desc);
}

GST_END_TEST;

/* ---- a buffer list larger than the sink pool ---- */

/* A list of copied frames that together hold more than sink-max-bytes,
 * with leaky=no: the src task gathers the list while its rest is still
 * being written, and the members it holds must not keep the room the
 * rest needs.  The list arrives whole, in order. */
GST_START_TEST (test_a_list_of_frames_larger_than_the_sink_pool_arrives)
{
  TbqLink *l = tbq_link_new ("tbqueue", "transfer", 1, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "sink-max-bytes",
      (guint64) 4 << 20, NULL);
  GstBufferList *list = gst_buffer_list_new ();
  guint i, n = 8;
  gsize size = 1 << 20;

  for (i = 0; i < n; i++)
    gst_buffer_list_add (list, tbq_buffer_new (size, i, i * GST_MSECOND));
  tbq_link_start (l);
  fail_unless_equals_int (tbq_push_join (tbq_push_async (l,
              GST_MINI_OBJECT_CAST (list))), GST_FLOW_OK);
  tbq_link_wait_buffers (l, n);
  for (i = 0; i < n; i++)
    fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, i), size, i));
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- downstream keeping some small buffers ---- */

/* Downstream keeps one buffer in fifty for good (an application holding
 * samples, an element keeping headers): small copied buffers live in sink
 * blocks, and each one kept would keep its block from the pool.  The
 * stream runs to EOS, as with queue, however many it keeps. */
static GPtrArray *kept;

static GstPadProbeReturn
keep_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  static guint n;

  if (n++ % 50 == 0)
    g_ptr_array_add (kept, gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (info)));
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_downstream_keeping_small_buffers_pins_no_pool)
{
  /* A 256 KiB sink pool: 4 blocks of about 650 such buffers each, every
   * block with a kept one long before the end. */
  guint n = tbq_scaled (50000, 8000);
  gchar *desc = g_strdup_printf ("fakesrc sizetype=fixed sizemax=100 "
      "filltype=nothing num-buffers=%u ! %s sink-max-bytes=262144 ! "
      "fakesink name=sink sync=false", n, factories[__i__]);
  GstElement *pipeline = gst_parse_launch (desc, NULL), *sink;
  GstPad *pad;

  if (__i__ == 0) {
    /* queue has no sink-max-bytes */
    g_free (desc);
    gst_object_unref (pipeline);
    desc = g_strdup_printf ("fakesrc sizetype=fixed sizemax=100 "
        "filltype=nothing num-buffers=%u ! queue ! fakesink name=sink "
        "sync=false", n);
    pipeline = gst_parse_launch (desc, NULL);
  }
  fail_unless (pipeline != NULL);
  kept = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, keep_probe, NULL, NULL);
  run_pipeline_to_eos (pipeline);
  fail_unless (kept->len >= n / 50);
  g_ptr_array_unref (kept);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
}

GST_END_TEST;

static Suite *
tbqueue_waits_suite (void)
{
  Suite *s = suite_create ("tbqueue-waits");
  TCase *tc = tbq_tcase (s, "waits");

  tcase_add_loop_test (tc,
      test_a_segment_past_max_size_time_does_not_hold_upstream, 0,
      G_N_ELEMENTS (factories));
  tcase_add_loop_test (tc,
      test_a_gap_past_max_size_time_does_not_hold_upstream, 0,
      G_N_ELEMENTS (factories));
  tcase_add_loop_test (tc,
      test_leaky_frames_at_the_sink_pool_limit_never_stop, 0,
      G_N_ELEMENTS (leaky_modes));
  tcase_add_test (tc, test_a_list_of_frames_larger_than_the_sink_pool_arrives);
  tcase_add_loop_test (tc, test_downstream_keeping_small_buffers_pins_no_pool,
      0, G_N_ELEMENTS (factories));
  return s;
}

TBQ_CHECK_MAIN (tbqueue_waits);

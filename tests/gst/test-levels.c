/* tbqueue levels and thresholds, compared with queue in the same scenarios.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * current-level-* count everything between the two pads.  Downstream is
 * held on STREAM_START, so every later item stays queued and each reading
 * is exact.  Every scenario runs on queue and on tbqueue in each transfer
 * mode, and must give the same readings.
 */
#include "tbq-check.h"

typedef struct
{
  const gchar *factory;
  const gchar *transfer;        /* NULL for queue */
} Variant;

static const Variant variants[] = {
  {"queue", NULL},
  {"tbqueue", "auto"},
  {"tbqueue", "copy"},
  {"tbqueue", "reference"},
};

/* No limit gets in the way unless a test sets one. */
static TbqLink *
variant_link (const Variant * v)
{
  TbqLink *l = tbq_link_new (v->factory, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  if (v->transfer)
    gst_util_set_object_arg (G_OBJECT (l->element), "transfer", v->transfer);
  return l;
}

#define MS GST_MSECOND
#define NONE GST_CLOCK_TIME_NONE

typedef struct
{
  guint n;                      /* buffers pushed in this step (>1: a list) */
  GstClockTime pts[4];
  GstClockTime duration[4];
  GstClockTime level;           /* current-level-time after the step */
  guint level_buffers;
} Step;

static void
run_steps (const Variant * v, const Step * steps, guint n_steps)
{
  TbqLink *l = variant_link (v);
  guint i, j;

  tbq_link_start_held (l);
  for (i = 0; i < n_steps; i++) {
    const Step *s = &steps[i];
    GstBufferList *list = s->n > 1 ? gst_buffer_list_new () : NULL;

    for (j = 0; j < s->n; j++) {
      GstBuffer *b = tbq_buffer_new (4, i, s->pts[j]);

      GST_BUFFER_DURATION (b) = s->duration[j];
      if (list) {
        gst_buffer_list_add (list, b);
      } else {
        fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
      }
    }
    if (list) {
      fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
    }
    fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
            "current-level-time"), s->level);
    fail_unless_equals_int (tbq_get_uint (l->element,
            "current-level-buffers"), s->level_buffers);
  }
  tbq_link_free (l);
}

/* queue's test_time_level: the level is the running time between the last
 * buffer in and the last buffer out; a buffer without duration ends where
 * it starts. */
static const Step time_steps[] = {
  {1, {1000 * MS}, {NONE}, 1000 * MS, 1},
  {1, {2000 * MS}, {NONE}, 2000 * MS, 2},
  {1, {3000 * MS}, {1000 * MS}, 4000 * MS, 3},
  {1, {5000 * MS}, {1000 * MS}, 6000 * MS, 4},
  {1, {5000 * MS}, {1000 * MS}, 6000 * MS, 5},
  {1, {7000 * MS}, {NONE}, 7000 * MS, 6},
};

GST_START_TEST (test_time_level_follows_timestamps_and_durations)
{
  run_steps (&variants[__i__], time_steps, G_N_ELEMENTS (time_steps));
}

GST_END_TEST;

/* queue's test_time_level_buffer_list: a list counts every member. */
static const Step list_steps[] = {
  {1, {1000 * MS}, {NONE}, 1000 * MS, 1},
  {2, {1500 * MS, 2000 * MS}, {NONE, NONE}, 2000 * MS, 3},
  {2, {3000 * MS, 3500 * MS}, {500 * MS, 500 * MS}, 4000 * MS, 5},
  {1, {5000 * MS}, {1000 * MS}, 6000 * MS, 6},
  {4, {5000 * MS, 5250 * MS, 5500 * MS, 5750 * MS},
      {250 * MS, 250 * MS, 250 * MS, 250 * MS}, 6000 * MS, 10},
  {1, {7000 * MS}, {NONE}, 7000 * MS, 11},
};

GST_START_TEST (test_time_level_counts_buffer_lists)
{
  run_steps (&variants[__i__], list_steps, G_N_ELEMENTS (list_steps));
}

GST_END_TEST;

/* Buffers without timestamps continue where the previous one ended. */
static const Step untimed_steps[] = {
  {1, {0}, {1000 * MS}, 1000 * MS, 1},
  {1, {NONE}, {1000 * MS}, 2000 * MS, 2},
  {1, {NONE}, {NONE}, 2000 * MS, 3},
};

GST_START_TEST (test_time_level_continues_through_untimed_buffers)
{
  run_steps (&variants[__i__], untimed_steps, G_N_ELEMENTS (untimed_steps));
}

GST_END_TEST;

/* queue's test_time_level_task_not_started: SEGMENT events alone move the
 * level (running time of the segment base). */
GST_START_TEST (test_time_level_follows_segments_before_any_buffer)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstSegment segment;

  tbq_link_start_held_no_segment (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.start = 1 * GST_SECOND;
  segment.stop = 5 * GST_SECOND;
  segment.time = 0;
  segment.position = 1 * GST_SECOND;
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 0);

  segment.base = 4 * GST_SECOND;
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 4 * GST_SECOND);
  tbq_link_free (l);
}

GST_END_TEST;

/* Running time, not stream time: a rate 2.0 segment halves the level. */
GST_START_TEST (test_time_level_is_running_time)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstSegment segment;
  guint i;

  tbq_link_start_held_no_segment (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.rate = 2.0;
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  for (i = 0; i < 4; i++) {
    GstBuffer *b = tbq_buffer_new (4, i, i * GST_SECOND);

    GST_BUFFER_DURATION (b) = GST_SECOND;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 2 * GST_SECOND);
  tbq_link_free (l);
}

GST_END_TEST;

/* A BYTES segment is taken as an open TIME segment from 0, as queue. */
GST_START_TEST (test_time_level_with_a_bytes_segment)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstSegment segment;
  GstBuffer *b;

  tbq_link_start_held_no_segment (l);
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  b = tbq_buffer_new (4, 0, 3 * GST_SECOND);
  GST_BUFFER_DURATION (b) = GST_SECOND;
  fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 4 * GST_SECOND);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_levels_count_buffers_and_bytes_but_not_events)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstBufferList *list = gst_buffer_list_new ();
  GstStructure *s = gst_structure_new_empty ("tbq-test");

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (10, 0, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (20, 0, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, s)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (30, 0, 0)),
      GST_FLOW_OK);
  gst_buffer_list_add (list, tbq_buffer_new (5, 0, 0));
  gst_buffer_list_add (list, tbq_buffer_new (5, 0, 0));
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      5);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      70);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_levels_return_to_zero_when_drained)
{
  TbqLink *l = variant_link (&variants[__i__]);
  guint i;

  tbq_link_start_held (l);
  for (i = 0; i < 5; i++) {
    GstBuffer *b = tbq_buffer_new (100, i, i * GST_SECOND);

    GST_BUFFER_DURATION (b) = GST_SECOND;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      500);
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 5 * GST_SECOND);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 5);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      0);
  fail_unless_equals_uint64 (tbq_get_uint64 (l->element,
          "current-level-time"), 0);
  tbq_link_free (l);
}

GST_END_TEST;

/* A buffer list that the upstream thread writes only part of (the flow
 * stops while it waits for room in the middle: downstream returns
 * NOT_LINKED) counts only what was written: once downstream is linked
 * again and the written part delivered, the levels are back to zero, with
 * no flush in between.  tbqueue only (queue takes a list whole or not at
 * all): copies in a sink pool of two blocks, downstream holding the first
 * buffer, so the list has to wait in its middle. */
GST_START_TEST (test_a_list_stopped_part_way_counts_only_what_was_written)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "transfer", 1,
      "sink-block-size", 4096, "sink-min-bytes", (guint64) 0,
      "sink-max-bytes", (guint64) 8192, NULL);   /* transfer=copy */
  GstBufferList *list = gst_buffer_list_new ();
  TbqPush *push;
  guint i, written;

  l->keep_copies = TRUE;
  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1000, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  for (i = 1; i <= 40; i++)
    gst_buffer_list_add (list, tbq_buffer_new (1000, i, i * GST_MSECOND));
  push = tbq_push_async (l, GST_MINI_OBJECT (list));
  /* In the middle of the list, waiting for a free source block. */
  tbq_wait_stat (l->element, "pressure-waits", 1);
  pthread_mutex_lock (&l->lock);
  l->chain_return = GST_FLOW_NOT_LINKED;
  pthread_mutex_unlock (&l->lock);
  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_NOT_LINKED);
  /* The first buffer is out; the list counts what was written of it. */
  written = tbq_get_uint (l->element, "current-level-buffers");
  fail_unless (written > 0 && written < 40, "%u written", written);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      written * 1000);

  /* Linked again: what was written goes downstream, a list cut short. */
  tbq_link_clear (l);
  pthread_mutex_lock (&l->lock);
  l->chain_return = GST_FLOW_OK;
  pthread_mutex_unlock (&l->lock);
  fail_unless (gst_pad_push_event (l->sinkpad, gst_event_new_reconfigure ()));
  tbq_link_wait_buffers (l, written);
  tbq_link_wait_level_buffers (l, 0);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      0);
  for (i = 0; i < written; i++)
    fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, i), 1000,
            i + 1));
  tbq_link_free (l);
}

GST_END_TEST;

/* For each buffer that reaches downstream: how many pushes upstream had
 * started by then. */
typedef struct
{
  gint started;
  gint seen_at[8];
  gint n_seen;
} PushOrder;

static GstPadProbeReturn
record_push_order (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  PushOrder *o = data;
  gint i = g_atomic_int_add (&o->n_seen, 1);

  if (i < (gint) G_N_ELEMENTS (o->seen_at))
    g_atomic_int_set (&o->seen_at[i], g_atomic_int_get (&o->started));
  return GST_PAD_PROBE_OK;
}

static void
push_counted (TbqLink * l, PushOrder * o, guint8 seed)
{
  g_atomic_int_inc (&o->started);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, seed, 0)),
      GST_FLOW_OK);
}

GST_START_TEST (test_min_threshold_buffers_holds_data_until_reached)
{
  TbqLink *l = variant_link (&variants[__i__]);
  PushOrder o = { 0, };

  g_object_set (l->element, "min-threshold-buffers", 3, NULL);
  tbq_link_start (l);
  tbq_link_wait_items (l, 2);   /* STREAM_START, SEGMENT */
  gst_pad_add_probe (l->sinkpad, GST_PAD_PROBE_TYPE_BUFFER, record_push_order,
      &o, NULL);
  push_counted (l, &o, 0);
  push_counted (l, &o, 1);
  /* Below the threshold nothing is pushed: no buffer can be downstream
   * before the third push started (checked where each one arrives, so a
   * buffer let out too early fails whenever it arrives). */
  fail_unless_equals_int (tbq_link_n_buffers (l), 0);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);
  /* At the threshold the oldest goes, then the queue waits again: the
   * second buffer only follows the fourth push. */
  push_counted (l, &o, 2);
  tbq_link_wait_buffers (l, 1);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 0), 4, 0));
  fail_unless_equals_int (g_atomic_int_get (&o.seen_at[0]), 3);
  fail_unless_equals_int (tbq_link_n_buffers (l), 1);
  push_counted (l, &o, 3);
  tbq_link_wait_buffers (l, 2);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 1), 4, 1));
  fail_unless_equals_int (g_atomic_int_get (&o.seen_at[1]), 4);
  fail_unless_equals_int (tbq_link_n_buffers (l), 2);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_eos_lets_data_below_min_threshold_out)
{
  TbqLink *l = variant_link (&variants[__i__]);

  g_object_set (l->element, "min-threshold-buffers", 10, NULL);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 0, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  fail_unless_equals_int (tbq_link_n_buffers (l), 2);
  tbq_link_free (l);
}

GST_END_TEST;

/* A SEGMENT whose position is ahead of the data goes downstream, then
 * the data behind it: the running time at the src moves back.  Whatever
 * the upstream thread saw of the src side before, the limit binds as
 * with queue: with downstream holding one buffer, the next goes in, and
 * every later one is dropped at max-size-time (leaky=upstream). */
GST_START_TEST (test_max_size_time_binds_after_the_src_time_moved_back)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstSegment segment;
  guint i;

  g_object_set (l->element, "max-size-time", (guint64) 10 * MS, "leaky", 1,
      NULL);
  tbq_link_start (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.position = 10 * GST_SECOND;
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  /* Both SEGMENTs gone: the src side's running time is 10 s. */
  tbq_link_wait_items (l, 3);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 40 * MS)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  for (i = 2; i < 14; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, i,
                i * 40 * MS)), GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      1);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 11);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 3);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 2), 4, 2));
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_levels_suite (void)
{
  Suite *s = suite_create ("tbqueue-levels");
  TCase *tc = tbq_tcase (s, "levels");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_time_level_follows_timestamps_and_durations, 0,
      n);
  tcase_add_loop_test (tc, test_time_level_counts_buffer_lists, 0, n);
  tcase_add_loop_test (tc, test_time_level_continues_through_untimed_buffers,
      0, n);
  tcase_add_loop_test (tc, test_time_level_follows_segments_before_any_buffer,
      0, n);
  tcase_add_loop_test (tc, test_time_level_is_running_time, 0, n);
  tcase_add_loop_test (tc, test_time_level_with_a_bytes_segment, 0, n);
  tcase_add_loop_test (tc, test_levels_count_buffers_and_bytes_but_not_events,
      0, n);
  tcase_add_loop_test (tc, test_levels_return_to_zero_when_drained, 0, n);
  tcase_add_test (tc, test_a_list_stopped_part_way_counts_only_what_was_written);
  tcase_add_loop_test (tc, test_min_threshold_buffers_holds_data_until_reached,
      0, n);
  tcase_add_loop_test (tc, test_eos_lets_data_below_min_threshold_out, 0, n);
  tcase_add_loop_test (tc,
      test_max_size_time_binds_after_the_src_time_moved_back, 0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_levels);

/* tbqueue state changes: any order, repeated, with a backlog, with
 * upstream blocked; a large backlog goes quickly and leaks nothing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
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

static TbqLink *
variant_link (const Variant * v, guint max_buffers)
{
  TbqLink *l = tbq_link_new (v->factory, "max-size-buffers", max_buffers,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  if (v->transfer)
    gst_util_set_object_arg (G_OBJECT (l->element), "transfer", v->transfer);
  return l;
}

static GstState
current_state (TbqLink * l)
{
  GstState state;

  fail_unless_equals_int (gst_element_get_state (l->element, &state, NULL, 0),
      GST_STATE_CHANGE_SUCCESS);
  return state;
}

/* Up and down, single steps and jumps; data flows in PAUSED and PLAYING. */
static const GstState state_walk[] = {
  GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_PLAYING, GST_STATE_PAUSED,
  GST_STATE_READY, GST_STATE_NULL, GST_STATE_PLAYING, GST_STATE_NULL,
  GST_STATE_PAUSED, GST_STATE_NULL, GST_STATE_PLAYING, GST_STATE_READY,
  GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_PLAYING, GST_STATE_READY,
  GST_STATE_PAUSED, GST_STATE_PAUSED, GST_STATE_NULL, GST_STATE_NULL,
  GST_STATE_READY, GST_STATE_READY, GST_STATE_PLAYING, GST_STATE_NULL,
};

GST_START_TEST (test_every_state_change_in_any_order)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  guint i, sent = 0;

  for (i = 0; i < G_N_ELEMENTS (state_walk); i++) {
    GstState from = current_state (l), to = state_walk[i];

    tbq_link_set_state (l, to);
    fail_unless_equals_int (current_state (l), to);
    if (to < GST_STATE_PAUSED)
      continue;
    if (from < GST_STATE_PAUSED)
      tbq_link_push_initial_events (l, GST_FORMAT_TIME);
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, i, i)),
        GST_FLOW_OK);
    tbq_link_wait_buffers (l, ++sent);
    fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, sent - 1), 16,
            i));
  }
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_repeated_start_and_stop_while_streaming)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  guint round, rounds = tbq_scaled (100, 10);

  for (round = 0; round < rounds; round++) {
    guint i;

    tbq_link_start (l);
    for (i = 0; i < 20; i++)
      fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, i, i)),
          GST_FLOW_OK);
    tbq_link_wait_buffers (l, 1);
    /* Stop with whatever is still queued. */
    tbq_link_set_state (l, round % 2 ? GST_STATE_NULL : GST_STATE_READY);
    fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
        0);
    tbq_link_clear (l);
  }
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_going_to_ready_releases_the_backlog)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBuffer *b[10];
  GstEvent *e;
  guint i;

  tbq_link_start_held (l);
  for (i = 0; i < 10; i++) {
    b[i] = gst_buffer_ref (tbq_buffer_new (16, i, i));
    fail_unless_equals_int (tbq_link_push (l, b[i]), GST_FLOW_OK);
  }
  e = gst_event_ref (gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
          gst_structure_new_empty ("tbq")));
  fail_unless (tbq_link_push_event (l, e));

  /* Downstream stops first, as in a pipeline. */
  tbq_link_stop_downstream (l);
  tbq_link_set_state (l, GST_STATE_READY);
  for (i = 0; i < 10; i++) {
    ASSERT_BUFFER_REFCOUNT (b[i], "released buffer", 1);
    gst_buffer_unref (b[i]);
  }
  ASSERT_MINI_OBJECT_REFCOUNT (e, "released event", 1);
  gst_event_unref (e);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);

  /* And it starts again from scratch. */
  tbq_link_restart_downstream (l);
  tbq_link_release (l);
  tbq_link_clear (l);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, 99, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 0), 16, 99));
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_stopping_unblocks_upstream_waiting_for_room)
{
  TbqLink *l = variant_link (&variants[__i__], 2);
  TbqPush *push;
  GstFlowReturn ret;

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, 0, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, 1, 0)),
      GST_FLOW_OK);
  push = tbq_push_async (l, GST_MINI_OBJECT (tbq_buffer_new (16, 2, 0)));
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  tbq_link_stop_downstream (l);
  tbq_link_set_state (l, __i__ % 2 ? GST_STATE_NULL : GST_STATE_READY);
  /* The waiting push returns: FLUSHING, or OK when the src task took a
   * buffer out (into the stopped downstream) before it saw the stop, as
   * queue may. */
  ret = tbq_push_join (push);
  fail_unless (ret == GST_FLOW_FLUSHING || ret == GST_FLOW_OK, "got %s",
      gst_flow_get_name (ret));
  tbq_link_free (l);
}

GST_END_TEST;

/* PLAYING to NULL with a large backlog completes (a hang check: the test
 * case's timeout, never a wall-clock limit of its own, which a loaded
 * machine would break) and releases all of it (the fixture's leak check
 * runs after). */
GST_START_TEST (test_playing_to_null_with_a_100000_buffer_backlog)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  guint i, n = tbq_scaled (100000, 10000);

  tbq_link_start_held (l);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, i, i)),
        GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      n);
  tbq_link_stop_downstream (l);
  tbq_link_set_state (l, GST_STATE_NULL);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);
  tbq_link_free (l);
}

GST_END_TEST;

/* A FLUSH_STOP racing the state change must not restart the copy task
 * that the deactivation is joining. */
static gpointer
push_flush_stop (gpointer data)
{
  TbqLink *l = data;

  tbq_link_push_event (l, gst_event_new_flush_stop (TRUE));
  return NULL;
}

/* queue's test_state_change_when_flushing. */
static gpointer
drain_query_thread (gpointer data)
{
  TbqLink *l = data;
  GstQuery *q = gst_query_new_drain ();
  gboolean res = gst_pad_peer_query (l->srcpad, q);

  gst_query_unref (q);
  return GINT_TO_POINTER (res);
}

/* A serialized query waits for its answer in the upstream thread, which
 * holds the sink pad's stream lock; stopping the element takes that lock.
 * Stopped at any moment of the query's way (in the source pool, the sink
 * pool, downstream), the element releases the waiter and the state change
 * returns.  Each round stops at another moment; a hang fails the test at
 * its timeout. */
GST_START_TEST (test_stopping_while_a_serialized_query_waits_never_hangs)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  guint round, rounds = tbq_scaled (300, 30);

  for (round = 0; round < rounds; round++) {
    GThread *t;
    guint i;

    tbq_link_start (l);
    for (i = 0; i < round % 4; i++)
      fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, i, i)),
          GST_FLOW_OK);
    t = g_thread_new ("query", drain_query_thread, l);
    if (round % 3 == 1)
      g_thread_yield ();
    tbq_link_set_state (l, round % 2 ? GST_STATE_NULL : GST_STATE_READY);
    /* Answered, or refused by the stop: either way it returns. */
    g_thread_join (t);
    fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
        0);
    tbq_link_clear (l);
  }
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_state_change_while_flushing)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GThread *thread;

  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  thread = g_thread_new ("flush-stop", push_flush_stop, l);
  tbq_link_set_state (l, GST_STATE_READY);
  g_thread_join (thread);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_state_suite (void)
{
  Suite *s = suite_create ("tbqueue-state");
  TCase *tc = tbq_tcase (s, "state");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_every_state_change_in_any_order, 0, n);
  tcase_add_loop_test (tc, test_repeated_start_and_stop_while_streaming, 0, n);
  tcase_add_loop_test (tc, test_going_to_ready_releases_the_backlog, 0, n);
  tcase_add_loop_test (tc, test_stopping_unblocks_upstream_waiting_for_room, 0,
      n);
  tcase_add_loop_test (tc, test_playing_to_null_with_a_100000_buffer_backlog,
      0, n);
  tcase_add_loop_test (tc, test_state_change_while_flushing, 0, n);
  tcase_add_loop_test (tc,
      test_stopping_while_a_serialized_query_waits_never_hangs, 0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_state);

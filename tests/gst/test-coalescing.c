/* tbqueue wake coalescing: while buffers come densely the src task naps
 * (max-coalesce-latency) and the pushing thread makes no system call;
 * events, queries, EOS and flushes are never delayed by a nap.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * No timing: the bound is 60 s, far longer than any test waits, so a nap
 * ends early only when something asks for delivery, and the stats say so
 * (src-naps counts naps begun, src-naps-woken those ended before their
 * deadline, upstream-wakeups the system calls the pushing thread made).
 * Buffers at any pace far below 30 s apart are "dense" for such a bound:
 * the src task naps after a few, on any machine.  A nap that nothing ended
 * would hold what is queued for 60 s, three times longer than any wait of
 * the harness (TBQ_WAIT_SECONDS): an item delivered at all was delivered
 * because its nap ended.  How many naps ended early is at least what the
 * test did to end them: the copy task publishing records it moved ends a
 * nap too (the last buffer start_napping pushes may be caught by the nap,
 * and a busy machine may run the copy task late), so the counts are lower
 * bounds, never exact.
 */
#include "tbq-check.h"

#define LONG_BOUND (60 * GST_SECOND)

static guint64
stat_of (TbqLink * l, const gchar * field)
{
  GstStructure *s;
  guint64 v = 0;

  g_object_get (l->element, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, field, &v), "no stat %s", field);
  gst_structure_free (s);
  return v;
}

/* Poll until `field` reaches `n` or `buffers` buffers are downstream;
 * TRUE for the stat.  A hang check, not a timing: fails after
 * TBQ_WAIT_SECONDS. */
static gboolean
wait_stat_or_buffers (TbqLink * l, const gchar * field, guint64 n,
    guint buffers)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  for (;;) {
    if (stat_of (l, field) >= n)
      return TRUE;
    pthread_mutex_lock (&l->lock);
    if (l->n_buffers >= buffers) {
      pthread_mutex_unlock (&l->lock);
      return FALSE;
    }
    pthread_mutex_unlock (&l->lock);
    fail_unless (g_get_monotonic_time () < end, "waited for %s", field);
    g_usleep (1000);
  }
}

/* A started tbqueue with a long bound whose src task is napping: buffers
 * pushed one at a time, each taken downstream before the next, until the
 * src task naps (the last one may be caught by the nap).  Returns how many
 * were pushed. */
static guint
start_napping (TbqLink * l)
{
  guint pushed = 0;

  tbq_link_start (l);
  while (!wait_stat_or_buffers (l, "src-naps", 1, pushed)) {
    fail_unless (pushed < 1000, "the src task never napped");
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, pushed,
                pushed * GST_MSECOND)), GST_FLOW_OK);
    pushed++;
  }
  return pushed;
}

static TbqLink *
long_bound_link (void)
{
  return tbq_link_new ("tbqueue", "max-coalesce-latency", LONG_BOUND, NULL);
}

GST_START_TEST (test_buffers_pushed_during_a_nap_make_no_wake_up)
{
  TbqLink *l = long_bound_link ();
  guint pushed = start_napping (l);
  guint64 wakeups = stat_of (l, "upstream-wakeups");
  guint i;

  for (i = 0; i < 20; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, pushed + i,
                GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
  /* The pushing thread made no system call for them. */
  fail_unless_equals_uint64 (stat_of (l, "upstream-wakeups"), wakeups);
  /* An event ends the nap: everything before it arrives with it. */
  fail_unless (tbq_link_push_event (l, gst_event_new_custom
          (GST_EVENT_CUSTOM_DOWNSTREAM, gst_structure_new_empty ("tbq"))));
  tbq_link_wait_event (l, GST_EVENT_CUSTOM_DOWNSTREAM);
  tbq_link_wait_buffers (l, pushed + 20);
  fail_unless (stat_of (l, "src-naps-woken") >= 1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_events_queries_and_eos_end_a_nap_at_once)
{
  TbqLink *l = long_bound_link ();
  GstQuery *query;
  guint64 naps;

  start_napping (l);
  /* A serialized event. */
  naps = stat_of (l, "src-naps");
  fail_unless (tbq_link_push_event (l, gst_event_new_custom
          (GST_EVENT_CUSTOM_DOWNSTREAM, gst_structure_new_empty ("tbq"))));
  tbq_link_wait_event (l, GST_EVENT_CUSTOM_DOWNSTREAM);
  fail_unless (stat_of (l, "src-naps-woken") >= 1);
  /* The next nap, and a serialized query: answered, not 60 s later. */
  wait_stat_or_buffers (l, "src-naps", naps + 1, G_MAXUINT);
  naps = stat_of (l, "src-naps");
  query = gst_query_new_drain ();
  fail_unless (gst_pad_peer_query (l->srcpad, query));
  gst_query_unref (query);
  fail_unless (stat_of (l, "src-naps-woken") >= 2);
  /* The next nap, and EOS. */
  wait_stat_or_buffers (l, "src-naps", naps + 1, G_MAXUINT);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  fail_unless (stat_of (l, "src-naps-woken") >= 3);
  tbq_link_free (l);
}

GST_END_TEST;

/* A referenced buffer of a buffer pool goes back to the pool only once
 * pushed: it ends a nap at once (its owner may be waiting for it). */
GST_START_TEST (test_a_referenced_pool_buffer_ends_a_nap)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-coalesce-latency", LONG_BOUND,
      "transfer", 2 /* reference */ , NULL);
  GstBufferPool *pool = tbq_pool_new (1024, 1);
  GstBuffer *buffer = NULL;
  guint pushed;

  pushed = start_napping (l);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buffer,
          NULL), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, buffer), GST_FLOW_OK);
  /* Delivered, not 60 s later: the nap ended on it. */
  tbq_link_wait_buffers (l, pushed + 1);
  fail_unless (stat_of (l, "src-naps-woken") >= 1);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

GST_START_TEST (test_a_flush_ends_a_nap)
{
  TbqLink *l = long_bound_link ();
  guint before;

  start_napping (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  /* The src task stopped: its nap ended (on the flush at the latest). */
  fail_unless (stat_of (l, "src-naps-woken") >= 1);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  tbq_link_push_initial_events (l, GST_FORMAT_TIME);
  pthread_mutex_lock (&l->lock);
  before = l->n_buffers;
  pthread_mutex_unlock (&l->lock);
  /* Flowing again, a buffer passes. */
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, 7,
              GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, before + 1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_zero_wakes_the_src_task_per_buffer)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-coalesce-latency",
      (guint64) 0, NULL);
  guint i;

  tbq_link_start (l);
  for (i = 0; i < 50; i++) {
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, i,
                GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
    tbq_link_wait_buffers (l, i + 1);
  }
  fail_unless_equals_uint64 (stat_of (l, "src-naps"), 0);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_a_bound_below_a_microsecond_is_refused_when_set)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  gst_element_set_bus (tbq, bus);
  /* Refused as it is set, with a warning that names it: the bound in use
   * stays, and the element starts with it. */
  g_object_set (tbq, "max-coalesce-latency", (guint64) 999, NULL);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "max-coalesce-latency") != NULL,
      "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless_equals_uint64 (tbq_get_uint64 (tbq, "max-coalesce-latency"),
      500 * GST_USECOND);
  fail_unless_equals_int (gst_element_set_state (tbq, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  gst_element_set_state (tbq, GST_STATE_NULL);
  gst_element_set_bus (tbq, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (tbq);
}

GST_END_TEST;

static Suite *
coalesce_suite (void)
{
  Suite *s = suite_create ("tbqueue-coalesce");
  TCase *tc = tbq_tcase (s, "coalesce");

  tcase_add_test (tc, test_buffers_pushed_during_a_nap_make_no_wake_up);
  tcase_add_test (tc, test_events_queries_and_eos_end_a_nap_at_once);
  tcase_add_test (tc, test_a_flush_ends_a_nap);
  tcase_add_test (tc, test_a_referenced_pool_buffer_ends_a_nap);
  tcase_add_test (tc, test_zero_wakes_the_src_task_per_buffer);
  tcase_add_test (tc, test_a_bound_below_a_microsecond_is_refused_when_set);
  return s;
}

TBQ_CHECK_MAIN (coalesce);

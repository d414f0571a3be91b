/* tbqueue flushing: FLUSH_START interrupts every wait and releases every
 * queued object; data flows again after FLUSH_STOP.  As queue.
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
  {"tbqueue", "reference"},
  {"tbqueue", "copy"},
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

static void
flush (TbqLink * l)
{
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
}

/* After a flush the stream needs a new segment; then a buffer must flow. */
static void
assert_flows_again (TbqLink * l, guint8 seed)
{
  GstSegment segment;
  guint before = tbq_link_n_buffers (l);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, seed, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, before + 1);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, before), 8, seed));
}

GST_START_TEST (test_flush_start_unblocks_upstream_waiting_for_room)
{
  TbqLink *l = variant_link (&variants[__i__], 2);
  GstBuffer *b[3];
  TbqPush *push;
  GstFlowReturn ret;
  guint i;

  tbq_link_start_held (l);
  for (i = 0; i < 3; i++)
    b[i] = gst_buffer_ref (tbq_buffer_new (8, i, 0));
  fail_unless_equals_int (tbq_link_push (l, b[0]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[1]), GST_FLOW_OK);
  push = tbq_push_async (l, GST_MINI_OBJECT (b[2]));
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);

  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  /* The waiting push returns.  FLUSHING, or OK when the src task took a
   * buffer between forwarding FLUSH_START and marking itself flushing (queue
   * has the same window); what was taken in is flushed all the same. */
  ret = tbq_push_join (push);
  fail_unless (ret == GST_FLOW_FLUSHING || ret == GST_FLOW_OK, "got %s",
      gst_flow_get_name (ret));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  for (i = 0; i < 3; i++) {
    ASSERT_BUFFER_REFCOUNT (b[i], "flushed buffer", 1);
    gst_buffer_unref (b[i]);
  }
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);
  tbq_link_release (l);
  assert_flows_again (l, 42);
  /* Nothing queued before the flush ever came out. */
  fail_unless_equals_int (tbq_link_n_buffers (l), 1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_flush_start_unblocks_downstream_waiting_in_chain)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBuffer *b1 = gst_buffer_ref (tbq_buffer_new (8, 1, 0));

  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  fail_unless_equals_int (tbq_link_push (l, b1), GST_FLOW_OK);

  /* FLUSH_START goes downstream first: the chain function lets go, the
   * src task stops, the backlog is released. */
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  ASSERT_BUFFER_REFCOUNT (b1, "flushed buffer", 1);
  gst_buffer_unref (b1);
  tbq_link_release (l);
  assert_flows_again (l, 7);
  fail_unless_equals_int (tbq_link_n_buffers (l), 1);
  tbq_link_free (l);
}

GST_END_TEST;

/* A blocking probe on the src pad, as an application would add. */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t probe_cond = PTHREAD_COND_INITIALIZER;
static guint probe_blocked;

static GstPadProbeReturn
blocking_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  pthread_mutex_lock (&probe_lock);
  probe_blocked++;
  pthread_cond_broadcast (&probe_cond);
  pthread_mutex_unlock (&probe_lock);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_flush_start_unblocks_a_blocking_pad_probe)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  gulong probe;
  struct timespec ts;

  probe_blocked = 0;
  probe = gst_pad_add_probe (l->esrc, GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM,
      blocking_probe, NULL, NULL);
  tbq_link_set_state (l, GST_STATE_PLAYING);
  tbq_link_push_initial_events (l, GST_FORMAT_TIME);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, 0, 0)),
      GST_FLOW_OK);
  /* The deadline is only a hang check: CLOCK_REALTIME will do. */
  clock_gettime (CLOCK_REALTIME, &ts);
  ts.tv_sec += TBQ_WAIT_SECONDS;
  pthread_mutex_lock (&probe_lock);
  while (probe_blocked == 0)
    if (pthread_cond_timedwait (&probe_cond, &probe_lock, &ts) != 0)
      fail_unless (probe_blocked > 0, "the probe never blocked");
  pthread_mutex_unlock (&probe_lock);

  flush (l);
  gst_pad_remove_probe (l->esrc, probe);
  assert_flows_again (l, 3);
  fail_unless_equals_int (tbq_link_n_buffers (l), 1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_flush_releases_every_queued_buffer_list_and_event)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBuffer *b[20];
  GstEvent *e[3];
  GstBufferList *list = gst_buffer_list_new ();
  guint i;

  tbq_link_start_held (l);
  for (i = 0; i < 20; i++) {
    b[i] = gst_buffer_ref (tbq_buffer_new (8 + i, i, i));
    fail_unless_equals_int (tbq_link_push (l, b[i]), GST_FLOW_OK);
    if (i % 7 == 0) {
      e[i / 7] = gst_event_ref (gst_event_new_custom
          (GST_EVENT_CUSTOM_DOWNSTREAM, gst_structure_new_empty ("tbq")));
      fail_unless (tbq_link_push_event (l, e[i / 7]));
    }
  }
  gst_buffer_list_add (list, tbq_buffer_new (4, 0, 0));
  gst_buffer_list_add (list, tbq_buffer_new (4, 1, 0));
  gst_buffer_list_ref (list);
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      22);

  flush (l);
  for (i = 0; i < 20; i++) {
    ASSERT_BUFFER_REFCOUNT (b[i], "flushed buffer", 1);
    gst_buffer_unref (b[i]);
  }
  for (i = 0; i < 3; i++) {
    ASSERT_MINI_OBJECT_REFCOUNT (e[i], "flushed event", 1);
    gst_event_unref (e[i]);
  }
  ASSERT_MINI_OBJECT_REFCOUNT (list, "flushed list", 1);
  gst_buffer_list_unref (list);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-bytes"),
      0);
  tbq_link_release (l);
  assert_flows_again (l, 9);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_flush_keeps_queued_sticky_events_except_segment)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstTagList *tags = gst_tag_list_new (GST_TAG_TITLE, "tbq", NULL);
  GstEvent *tag, *seg;
  guint i, tag_at = 0, buffer_at = 0;

  tbq_link_start_held (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_tag (tags)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, 0, 0)),
      GST_FLOW_OK);
  flush (l);

  /* As queue: the queued TAG is stored on the src pad, the SEGMENT not. */
  tag = gst_pad_get_sticky_event (l->esrc, GST_EVENT_TAG, 0);
  fail_unless (tag != NULL, "the queued tag event was lost");
  gst_event_unref (tag);
  seg = gst_pad_get_sticky_event (l->esrc, GST_EVENT_SEGMENT, 0);
  fail_unless (seg == NULL);

  /* And it reaches downstream ahead of the next buffer. */
  tbq_link_release (l);
  assert_flows_again (l, 5);
  pthread_mutex_lock (&l->lock);
  for (i = 0; i < l->items->len; i++) {
    GstMiniObject *o = g_ptr_array_index (l->items, i);

    if (GST_IS_EVENT (o) && GST_EVENT_TYPE (o) == GST_EVENT_TAG)
      tag_at = i;
    if (GST_IS_BUFFER (o))
      buffer_at = i;
  }
  pthread_mutex_unlock (&l->lock);
  fail_unless (tag_at > 0 && tag_at < buffer_at);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_flush_start_makes_a_waiting_serialized_query_fail)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstQuery *query;
  TbqQueryThread *t;

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, 0, 0)),
      GST_FLOW_OK);
  query = gst_query_new_drain ();
  t = tbq_query_async (l, query);

  /* Whether the query is already queued or not, a flush makes it fail. */
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_if (tbq_query_join (t));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_int (l->queries_seen, 0);
  gst_query_unref (query);
  tbq_link_release (l);
  assert_flows_again (l, 1);
  tbq_link_free (l);
}

GST_END_TEST;

/* FLUSH_START reaches downstream (the pads flushing) before the element
 * stops its src task.  What the src task pushes meanwhile is refused by
 * the flushing pads, but GstPad lets a serialized query through: it must
 * not be pushed after an event the flush took, or downstream answers it
 * past an event it never saw (the soak's "[loss] event N ... query N+1
 * came next", seed 78215334 chapter 14).  Our sink pad's FLUSH_START lets
 * the held src task go, and gives it time to push what it has. */
typedef struct
{
  TbqLink *link;
  GstPadEventFunction chain_up;
} FlushRace;

static FlushRace flush_race;

static gboolean
flush_race_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TbqLink *l = flush_race.link;

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START) {
    gint64 end = g_get_monotonic_time () + 300 * G_TIME_SPAN_MILLISECOND;

    tbq_link_release (l);
    for (;;) {
      guint seen;

      pthread_mutex_lock (&l->lock);
      seen = l->queries_seen;
      pthread_mutex_unlock (&l->lock);
      if (seen > 0 || g_get_monotonic_time () >= end)
        break;
      g_usleep (5 * G_TIME_SPAN_MILLISECOND);
    }
  }
  return flush_race.chain_up (pad, parent, event);
}

static GstEvent *
custom_event (guint n)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
      gst_structure_new ("tbq-race", "n", G_TYPE_UINT, n, NULL));
}

GST_START_TEST (test_flush_start_pushes_no_query_past_a_flushed_event)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstQuery *query;
  TbqQueryThread *t;
  guint64 records = 0;

  flush_race.link = l;
  flush_race.chain_up = GST_PAD_EVENTFUNC (l->sinkpad);
  gst_pad_set_event_function (l->sinkpad, flush_race_event);
  tbq_link_start (l);
  tbq_link_hold (l);
  /* The src task is held downstream in the first event; the second event
   * and a drain query wait behind it. */
  fail_unless (tbq_link_push_event (l, custom_event (0)));
  tbq_link_wait_holding (l);
  fail_unless (tbq_link_push_event (l, custom_event (1)));
  if (tbq_link_is_tbqueue (l))
    records = tbq_stat (l->element, "records-in");
  query = gst_query_new_drain ();
  t = tbq_query_async (l, query);
  if (tbq_link_is_tbqueue (l))
    tbq_wait_stat (l->element, "records-in", records + 1);
  else
    g_usleep (100 * G_TIME_SPAN_MILLISECOND);

  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  tbq_query_join (t);
  /* Either the query was answered after the event before it, or neither
   * went downstream: never the query without the event. */
  fail_unless (l->queries_seen == 0
      || tbq_link_count_events (l, GST_EVENT_CUSTOM_DOWNSTREAM) == 2,
      "the drain query went downstream, the event before it did not");
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  gst_query_unref (query);
  assert_flows_again (l, 3);
  tbq_link_free (l);
}

GST_END_TEST;

typedef struct
{
  TbqLink *link;
  guint n;
} Pusher;

static gpointer
push_segments_and_buffers (gpointer data)
{
  Pusher *p = data;
  GstSegment segment;
  guint i;

  gst_segment_init (&segment, GST_FORMAT_TIME);
  for (i = 0; i < p->n; i++) {
    GstFlowReturn ret;

    /* As a source does: data under the stream lock, each buffer after its
     * own segment as the flush may have cleared it. */
    GST_PAD_STREAM_LOCK (p->link->srcpad);
    tbq_link_push_event (p->link, gst_event_new_segment (&segment));
    ret = tbq_link_push (p->link, tbq_buffer_new (16, i, i));
    GST_PAD_STREAM_UNLOCK (p->link->srcpad);
    fail_unless (ret == GST_FLOW_OK || ret == GST_FLOW_FLUSHING,
        "push returned %s", gst_flow_get_name (ret));
  }
  return NULL;
}

GST_START_TEST (test_repeated_flushes_during_streaming)
{
  TbqLink *l = variant_link (&variants[__i__], 50);
  Pusher p = { l, tbq_scaled (4000, 200) };
  GThread *thread;
  guint i, flushes = tbq_scaled (200, 20);

  l->keep_copies = TRUE;
  tbq_link_start (l);
  thread = g_thread_new ("pusher", push_segments_and_buffers, &p);
  for (i = 0; i < flushes; i++) {
    /* As a source's seek: FLUSH_START, then FLUSH_STOP under the lock. */
    fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
    GST_PAD_STREAM_LOCK (l->srcpad);
    fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
    GST_PAD_STREAM_UNLOCK (l->srcpad);
  }
  g_thread_join (thread);
  flush (l);
  tbq_link_clear (l);
  assert_flows_again (l, 77);
  tbq_link_free (l);
}

GST_END_TEST;

/* queue's test_queries_while_flushing: allocation queries from one thread,
 * FLUSH_START from another; the querying thread must come back. */
static gpointer
allocation_queries (gpointer data)
{
  TbqLink *l = data;
  guint i;

  for (i = 0; i < 100; i++) {
    GstCaps *caps = gst_caps_new_any ();
    GstQuery *query = gst_query_new_allocation (caps, FALSE);
    gboolean ok = gst_pad_peer_query (l->srcpad, query);

    gst_query_unref (query);
    gst_caps_unref (caps);
    if (!ok)
      break;
  }
  return NULL;
}

GST_START_TEST (test_queries_while_flushing_come_back)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  guint i, rounds = tbq_scaled (100, 10);

  for (i = 0; i < rounds; i++) {
    GThread *thread;

    tbq_link_set_state (l, GST_STATE_PLAYING);
    thread = g_thread_new ("queries", allocation_queries, l);
    fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
    g_thread_join (thread);
    fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
    tbq_link_set_state (l, GST_STATE_NULL);
  }
  tbq_link_free (l);
}

GST_END_TEST;

/* The explicit leak check: flushes and state changes with buffers, lists,
 * events and queries queued leave no GstBuffer, GstEvent or GstQuery
 * behind. */
GST_START_TEST (test_flushes_and_state_changes_leak_no_buffer_event_or_query)
{
  TbqLink *l;
  guint round;

  fail_unless (tbq_leaks_tracer_active (), "run with GST_TRACERS=leaks");
  l = variant_link (&variants[__i__], 0);
  for (round = 0; round < 3; round++) {
    GstBufferList *list = gst_buffer_list_new ();
    guint i;

    tbq_link_start_held (l);
    for (i = 0; i < 30; i++)
      fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (i, i, i)),
          GST_FLOW_OK);
    gst_buffer_list_add (list, tbq_buffer_new (3, 0, 0));
    fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
    fail_unless (tbq_link_push_event (l,
            gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                gst_structure_new_empty ("tbq"))));
    if (round == 0) {
      flush (l);
      tbq_link_release (l);
      assert_flows_again (l, 1);
    } else {
      tbq_link_stop_downstream (l);
      tbq_link_set_state (l, round == 1 ? GST_STATE_READY : GST_STATE_NULL);
      tbq_link_restart_downstream (l);
    }
    tbq_link_release (l);
    tbq_link_set_state (l, GST_STATE_NULL);
    tbq_link_clear (l);
  }
  tbq_link_free (l);
  fail_unless_equals_int (tbq_leaks_count ("GstBuffer,GstEvent,GstQuery,"
          "GstMemory"), 0);
}

GST_END_TEST;

/* FLUSH_START gives every queued buffer back at once, as queue does when
 * its task pauses for the flush: a source whose bounded pool is empty may
 * wait for a buffer before it sends FLUSH_STOP.  With publish-batch the
 * writer holds the records back while downstream is busy: they are in
 * the source layer, out of the src task's reach, when FLUSH_START comes. */
#define FLUSH_POOL_BUFFERS 8

GST_START_TEST (test_flush_start_gives_pool_buffers_back_before_flush_stop)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBufferPool *pool = tbq_pool_new (1024, FLUSH_POOL_BUFFERS);
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b[FLUSH_POOL_BUFFERS];
  guint i;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  if (variants[__i__].transfer != NULL)
    g_object_set (l->element, "publish-batch", 64, NULL);
  tbq_link_start_held (l);
  tbq_link_wait_holding (l);
  for (i = 0; i < FLUSH_POOL_BUFFERS; i++) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b[i],
            &params), GST_FLOW_OK);
    fail_unless_equals_int (tbq_link_push (l, b[i]), GST_FLOW_OK);
  }
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  /* Before FLUSH_STOP: the pool has every buffer back. */
  for (i = 0; i < FLUSH_POOL_BUFFERS; i++)
    fail_unless (gst_buffer_pool_acquire_buffer (pool, &b[i], &params)
        == GST_FLOW_OK, "pool buffer %u not given back", i);
  for (i = 0; i < FLUSH_POOL_BUFFERS; i++)
    gst_buffer_unref (b[i]);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  tbq_link_release (l);
  assert_flows_again (l, 9);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

static Suite *
tbqueue_flushing_suite (void)
{
  Suite *s = suite_create ("tbqueue-flushing");
  TCase *tc = tbq_tcase (s, "flushing");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_flush_start_unblocks_upstream_waiting_for_room,
      0, n);
  tcase_add_loop_test (tc,
      test_flush_start_unblocks_downstream_waiting_in_chain, 0, n);
  tcase_add_loop_test (tc, test_flush_start_unblocks_a_blocking_pad_probe, 0,
      n);
  tcase_add_loop_test (tc,
      test_flush_releases_every_queued_buffer_list_and_event, 0, n);
  tcase_add_loop_test (tc, test_flush_keeps_queued_sticky_events_except_segment,
      0, n);
  tcase_add_loop_test (tc,
      test_flush_start_makes_a_waiting_serialized_query_fail, 0, n);
  /* queue has that race (it sets srcresult after forwarding FLUSH_START):
   * tbqueue's variants only. */
  tcase_add_loop_test (tc,
      test_flush_start_pushes_no_query_past_a_flushed_event, 1, n);
  tcase_add_loop_test (tc, test_repeated_flushes_during_streaming, 0, n);
  tcase_add_loop_test (tc, test_queries_while_flushing_come_back, 0, n);
  tcase_add_loop_test (tc,
      test_flush_start_gives_pool_buffers_back_before_flush_stop, 0, n);
  tcase_add_loop_test (tc,
      test_flushes_and_state_changes_leak_no_buffer_event_or_query, 0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_flushing);

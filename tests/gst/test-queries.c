/* tbqueue queries: serialized ones travel with the data and wait for their
 * answer, the others are answered at once; caps, accept-caps, allocation
 * proxied; scheduling, latency and position as queue answers them.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#include <gst/base/gstbasesink.h>

typedef struct
{
  const gchar *factory;
  const gchar *transfer;        /* NULL for queue */
} Variant;

static const Variant variants[] = {
  {"queue", NULL},
  {"tbqueue", "copy"},
  {"tbqueue", "reference"},
};

static TbqLink *
variant_link (const Variant * v)
{
  TbqLink *l = tbq_link_new (v->factory, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  if (v->transfer)
    gst_util_set_object_arg (G_OBJECT (l->element), "transfer", v->transfer);
  return l;
}

typedef struct
{
  TbqLink *link;
  GstQuery *query;
  gboolean result;
  gboolean done;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  gboolean arrived;             /* the query reached the element */
} QueryThread;

/* On the element's sink pad: the query has arrived (it is queued next). */
static GstPadProbeReturn
query_arrived (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  QueryThread *q = data;

  pthread_mutex_lock (&q->lock);
  q->arrived = TRUE;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  return GST_PAD_PROBE_REMOVE;
}

static gpointer
query_thread (gpointer data)
{
  QueryThread *q = data;
  gboolean res = gst_pad_peer_query (q->link->srcpad, q->query);

  pthread_mutex_lock (&q->lock);
  q->result = res;
  q->done = TRUE;
  pthread_cond_broadcast (&q->cond);
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

static gboolean
query_done (QueryThread * q)
{
  gboolean done;

  pthread_mutex_lock (&q->lock);
  done = q->done;
  pthread_mutex_unlock (&q->lock);
  return done;
}

/* A serialized query sent behind 5 queued buffers: it must wait until they
 * went downstream, then come back with downstream's answer. */
static GstQuery *
query_behind_data (const Variant * v, GstQuery * query, gboolean * result)
{
  TbqLink *l = variant_link (v);
  QueryThread q = { l, query, FALSE, FALSE,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, FALSE
  };
  GThread *thread;
  GstPad *esink;
  guint i, at = 0;

  tbq_link_start_held (l);
  for (i = 0; i < 5; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, i, i)),
        GST_FLOW_OK);
  esink = gst_element_get_static_pad (l->element, "sink");
  gst_pad_add_probe (esink, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, query_arrived,
      &q, NULL);
  gst_object_unref (esink);
  thread = g_thread_new ("query", query_thread, &q);
  /* Sent behind the data (not after the release). */
  pthread_mutex_lock (&q.lock);
  while (!q.arrived)
    pthread_cond_wait (&q.cond, &q.lock);
  pthread_mutex_unlock (&q.lock);
  /* Downstream is held: the query cannot have an answer yet.  Where it
   * arrives downstream, after the data, is checked below whenever it
   * overtakes it. */
  fail_if (query_done (&q), "the query overtook the queued data");

  tbq_link_release (l);
  g_thread_join (thread);
  fail_unless (query_done (&q));
  /* Downstream saw the five buffers, then the query. */
  pthread_mutex_lock (&l->lock);
  for (i = 0; i < l->items->len; i++)
    if (GST_IS_QUERY (g_ptr_array_index (l->items, i)))
      at = i;
  pthread_mutex_unlock (&l->lock);
  fail_unless_equals_int (l->queries_seen, 1);
  fail_unless_equals_int (l->n_buffers, 5);
  /* STREAM_START, SEGMENT, the five buffers, then the query. */
  fail_unless_equals_int (at, 7);
  for (i = 2; i < at; i++)
    fail_unless (GST_IS_BUFFER (g_ptr_array_index (l->items, i)));
  *result = q.result;
  tbq_link_free (l);
  return query;
}

GST_START_TEST (test_drain_query_waits_for_the_queued_data)
{
  gboolean res;
  GstQuery *q = query_behind_data (&variants[__i__], gst_query_new_drain (),
      &res);

  fail_unless (res);
  gst_query_unref (q);
}

GST_END_TEST;

GST_START_TEST (test_allocation_query_is_proxied_after_the_queued_data)
{
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-raw");
  gboolean res;
  GstQuery *q = query_behind_data (&variants[__i__],
      gst_query_new_allocation (caps, TRUE), &res);

  fail_unless (res);
  /* Downstream's answer reaches upstream. */
  fail_unless (gst_query_find_allocation_meta (q,
          GST_PARENT_BUFFER_META_API_TYPE, NULL));
  gst_query_unref (q);
  gst_caps_unref (caps);
}

GST_END_TEST;

GST_START_TEST (test_custom_serialized_query_is_answered_after_the_data)
{
  gboolean res, answered = FALSE;
  guint before = 0;
  GstQuery *q = query_behind_data (&variants[__i__],
      gst_query_new_custom (TBQ_QUERY_SERIALIZED,
          gst_structure_new_empty ("tbq-test")), &res);
  const GstStructure *s = gst_query_get_structure (q);

  fail_unless (GST_QUERY_IS_SERIALIZED (q));
  fail_unless (res);
  fail_unless (gst_structure_get_boolean (s, "answered", &answered)
      && answered);
  fail_unless (gst_structure_get_uint (s, "buffers-before", &before));
  fail_unless_equals_int (before, 5);
  gst_query_unref (q);
}

GST_END_TEST;

GST_START_TEST (test_serialized_query_with_min_threshold_does_not_wait_forever)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstQuery *q;

  /* queue's test_serialized_query_with_threshold */
  g_object_set (l->element, "min-threshold-buffers", 10, NULL);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_new ()), GST_FLOW_OK);
  q = gst_query_new_drain ();
  fail_unless (gst_pad_peer_query (l->srcpad, q));
  gst_query_unref (q);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_non_serialized_queries_are_answered_at_once)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstCaps *caps;
  gboolean ok;

  l->accept_caps = gst_caps_new_empty_simple ("audio/x-raw");
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (8, 0, 0)),
      GST_FLOW_OK);
  /* Downstream is held with data queued: these come back all the same. */
  caps = gst_pad_peer_query_caps (l->srcpad, NULL);
  fail_unless (gst_caps_is_equal (caps, l->accept_caps));
  gst_caps_unref (caps);
  ok = gst_pad_peer_query_accept_caps (l->srcpad, l->accept_caps);
  fail_unless (ok);
  fail_unless_equals_int (l->queries_seen, 0);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_caps_query_is_proxied)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstCaps *filter = gst_caps_from_string ("audio/x-raw; video/x-raw");
  GstCaps *caps;

  l->accept_caps = gst_caps_from_string ("audio/x-raw, rate=(int)8000");
  caps = gst_pad_peer_query_caps (l->srcpad, filter);
  fail_unless (gst_caps_is_equal (caps, l->accept_caps), "got %"
      GST_PTR_FORMAT, caps);
  gst_caps_unref (caps);
  gst_caps_unref (filter);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_accept_caps_query_is_proxied)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstCaps *audio = gst_caps_from_string ("audio/x-raw, rate=(int)8000");
  GstCaps *video = gst_caps_from_string ("video/x-raw");

  l->accept_caps = gst_caps_from_string ("audio/x-raw");
  fail_unless (gst_pad_peer_query_accept_caps (l->srcpad, audio));
  fail_if (gst_pad_peer_query_accept_caps (l->srcpad, video));
  gst_caps_unref (audio);
  gst_caps_unref (video);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_scheduling_query_on_src_reports_push_mode)
{
  TbqLink *l = variant_link (&variants[__i__]);
  GstQuery *q = gst_query_new_scheduling ();

  fail_unless (gst_pad_query (l->esrc, q));
  fail_unless (gst_query_has_scheduling_mode (q, GST_PAD_MODE_PUSH));
  fail_if (gst_query_has_scheduling_mode (q, GST_PAD_MODE_PULL));
  gst_query_unref (q);
  tbq_link_free (l);
}

GST_END_TEST;

typedef struct
{
  gboolean live;
  GstClockTime min, max;
} Latency;

/* Leave max-coalesce-latency at its default. */
#define DEFAULT_BOUND (-1)

/* The answer behind an upstream that answers `live`; tbqueue's with
 * max-coalesce-latency `coalesce` (queue has none). */
static Latency
latency_behind (const gchar * factory, gboolean live, gint leaky,
    guint64 max_time, guint64 min_threshold, GstClockTime upstream_max,
    gint64 coalesce)
{
  TbqLink *l = tbq_link_new (factory, "leaky", leaky, "max-size-time",
      max_time, "min-threshold-time", min_threshold, NULL);
  GstQuery *q = gst_query_new_latency ();
  Latency r;

  if (g_str_equal (factory, "tbqueue") && coalesce != DEFAULT_BOUND)
    g_object_set (l->element, "max-coalesce-latency", (guint64) coalesce,
        NULL);

  l->latency_live = live;
  l->latency_min = 10 * GST_MSECOND;
  l->latency_max = upstream_max;
  tbq_link_set_state (l, GST_STATE_PLAYING);
  fail_unless (gst_pad_query (l->esrc, q));
  gst_query_parse_latency (q, &r.live, &r.min, &r.max);
  gst_query_unref (q);
  tbq_link_free (l);
  return r;
}

static Latency
latency_with (const gchar * factory, gint leaky, guint64 max_time,
    guint64 min_threshold, GstClockTime upstream_max, gint64 coalesce)
{
  return latency_behind (factory, TRUE, leaky, max_time, min_threshold,
      upstream_max, coalesce);
}

static Latency
latency_of (const gchar * factory, gint leaky, guint64 max_time,
    guint64 min_threshold, GstClockTime upstream_max)
{
  return latency_with (factory, leaky, max_time, min_threshold,
      upstream_max, 0);
}

/* Without wake coalescing, tbqueue answers exactly as queue. */
GST_START_TEST (test_latency_query_adds_thresholds_as_queue_does)
{
  const guint64 max_times[] = { 0, 2 * GST_SECOND, 20 * GST_MSECOND };
  const guint64 min_thresholds[] = { 0, 30 * GST_MSECOND };
  const GstClockTime upstream_maxes[] = { 50 * GST_MSECOND,
    GST_CLOCK_TIME_NONE
  };
  gint leaky;
  guint a, b, c;
  Latency plain;

  for (leaky = 0; leaky <= 2; leaky++)
    for (a = 0; a < G_N_ELEMENTS (max_times); a++)
      for (b = 0; b < G_N_ELEMENTS (min_thresholds); b++)
        for (c = 0; c < G_N_ELEMENTS (upstream_maxes); c++) {
          Latency q = latency_of ("queue", leaky, max_times[a],
              min_thresholds[b], upstream_maxes[c]);
          Latency t = latency_of ("tbqueue", leaky, max_times[a],
              min_thresholds[b], upstream_maxes[c]);

          fail_unless_equals_int (t.live, q.live);
          fail_unless_equals_uint64 (t.min, q.min);
          fail_unless_equals_uint64 (t.max, q.max);
        }
  /* The plain case in numbers: min + min-threshold-time, max +
   * max-size-time. */
  plain = latency_of ("tbqueue", 0, GST_SECOND, 30 * GST_MSECOND,
      50 * GST_MSECOND);
  fail_unless (plain.live);
  fail_unless_equals_uint64 (plain.min, 40 * GST_MSECOND);
  fail_unless_equals_uint64 (plain.max, 1050 * GST_MSECOND);
}

GST_END_TEST;

/* At the defaults (max-coalesce-latency not set) the answer is queue's,
 * behind a live upstream and behind one that is not, in every leaky mode
 * and limit: queue and tbqueue side by side. */
GST_START_TEST (test_latency_query_at_the_defaults_answers_as_queue)
{
  const guint64 max_times[] = { 0, GST_SECOND, 20 * GST_MSECOND };
  const guint64 min_thresholds[] = { 0, 30 * GST_MSECOND };
  const GstClockTime upstream_maxes[] = { 50 * GST_MSECOND,
    GST_CLOCK_TIME_NONE
  };
  gint live, leaky;
  guint a, b, c;

  for (live = 0; live <= 1; live++)
    for (leaky = 0; leaky <= 2; leaky++)
      for (a = 0; a < G_N_ELEMENTS (max_times); a++)
        for (b = 0; b < G_N_ELEMENTS (min_thresholds); b++)
          for (c = 0; c < G_N_ELEMENTS (upstream_maxes); c++) {
            Latency q = latency_behind ("queue", live, leaky, max_times[a],
                min_thresholds[b], upstream_maxes[c], DEFAULT_BOUND);
            Latency t = latency_behind ("tbqueue", live, leaky,
                max_times[a], min_thresholds[b], upstream_maxes[c],
                DEFAULT_BOUND);

            fail_unless_equals_int (t.live, q.live);
            fail_unless_equals_uint64 (t.min, q.min);
            fail_unless_equals_uint64 (t.max, q.max);
          }
}

GST_END_TEST;

/* A nap may hold a buffer for up to max-coalesce-latency: the answer says
 * so, on top of what queue adds, in every leaky mode and limit. */
GST_START_TEST (test_latency_query_adds_the_coalescing_bound)
{
  const guint64 max_times[] = { 0, 2 * GST_SECOND };
  const guint64 bounds[] = { 500 * GST_USECOND, 300 * GST_MSECOND,
    60 * GST_SECOND
  };
  const GstClockTime upstream_maxes[] = { 50 * GST_MSECOND,
    GST_CLOCK_TIME_NONE
  };
  gint leaky;
  guint a, b, c;

  for (leaky = 0; leaky <= 2; leaky++)
    for (a = 0; a < G_N_ELEMENTS (max_times); a++)
      for (b = 0; b < G_N_ELEMENTS (bounds); b++)
        for (c = 0; c < G_N_ELEMENTS (upstream_maxes); c++) {
          Latency q = latency_of ("queue", leaky, max_times[a],
              30 * GST_MSECOND, upstream_maxes[c]);
          Latency t = latency_with ("tbqueue", leaky, max_times[a],
              30 * GST_MSECOND, upstream_maxes[c], bounds[b]);

          fail_unless_equals_int (t.live, q.live);
          fail_unless_equals_uint64 (t.min, q.min + bounds[b]);
          if (q.max == GST_CLOCK_TIME_NONE) {
            fail_unless_equals_uint64 (t.max, GST_CLOCK_TIME_NONE);
          } else {
            fail_unless_equals_uint64 (t.max, q.max + bounds[b]);
          }
          fail_unless (t.max >= t.min);
        }
}

GST_END_TEST;

#define BURST 50

/* A started tbqueue behind a live upstream, whose latency was asked for
 * as a pipeline asks on its way to PLAYING (a sink queries through the
 * src pad), before any data. */
static TbqLink *live_link (const gchar * first_property, ...)
    G_GNUC_NULL_TERMINATED;

static TbqLink *
live_link (const gchar * first_property, ...)
{
  TbqLink *l = tbq_link_new ("tbqueue", NULL, NULL);
  GstQuery *q = gst_query_new_latency ();
  va_list args;

  va_start (args, first_property);
  if (first_property != NULL)
    g_object_set_valist (G_OBJECT (l->element), first_property, args);
  va_end (args);
  l->latency_live = TRUE;
  tbq_link_start (l);
  fail_unless (gst_pad_query (l->esrc, q));
  gst_query_unref (q);
  return l;
}

/* Bursts of BURST buffers pushed densely, each burst downstream before the
 * next: `rounds` of them, or fewer once the src task napped
 * (`until_nap`).  The naps of the src task then. */
static guint64
naps_after_bursts (TbqLink * l, guint rounds, gboolean until_nap)
{
  guint i, j, pushed = 0;

  for (i = 0; i < rounds; i++) {
    if (until_nap && tbq_stat (l->element, "src-naps") > 0)
      break;
    for (j = 0; j < BURST; j++, pushed++)
      fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, j,
                  pushed * GST_USECOND)), GST_FLOW_OK);
    tbq_link_wait_buffers (l, pushed);
  }
  return tbq_stat (l->element, "src-naps");
}

/* At the defaults a live stream is never napped on, however densely its
 * buffers come: queue's latency answer leaves no room for a nap, so no
 * buffer waits for one (and none is late for it). */
GST_START_TEST (test_a_live_stream_at_the_defaults_is_never_napped)
{
  TbqLink *l = live_link (NULL, NULL);

  fail_unless_equals_uint64 (naps_after_bursts (l, 200, FALSE), 0);
  tbq_link_free (l);
}

GST_END_TEST;

/* The same bound set explicitly: a live stream is napped on (the latency
 * answer includes the bound: test_latency_query_adds_the_coalescing_bound). */
GST_START_TEST (test_a_live_stream_naps_with_the_bound_set)
{
  TbqLink *l = live_link ("max-coalesce-latency", 500 * GST_USECOND, NULL);

  fail_unless (naps_after_bursts (l, 2000, TRUE) > 0,
      "the src task never napped");
  tbq_link_free (l);
}

GST_END_TEST;

#define LIVE_BUFFERS 15

static GstPadProbeReturn
count_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  (*(guint *) user_data)++;
  return GST_PAD_PROBE_OK;
}

/* A live source (its latency: one frame, 100 ms) into a sync sink through
 * a tbqueue that may nap for 300 ms: the latency the sink is given covers
 * the source's frame, the naps and the sink's processing deadline, so a
 * buffer held back for a nap is still on time.  (Whether each buffer then
 * reaches the sink before its render time also depends on how soon this
 * machine runs each thread: not asserted here.  That the bound holds is
 * libtbq's test-publish; that the defaults never nap, the test above.) */
GST_START_TEST (test_a_live_stream_with_a_large_coalescing_bound_covers_it)
{
  GstElement *pipeline = gst_parse_launch ("videotestsrc is-live=true "
      "num-buffers=15 ! video/x-raw,width=16,height=16,framerate=10/1 ! "
      "tbqueue max-coalesce-latency=300000000 ! fakesink name=sink "
      "sync=true", NULL);
  GstElement *sink;
  GstBus *bus;
  GstMessage *msg;
  GstClockTime latency;
  guint buffers = 0;
  GstPad *pad;

  fail_unless (pipeline != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_probe, &buffers,
      NULL);
  gst_object_unref (pad);
  bus = gst_element_get_bus (pipeline);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  latency = gst_base_sink_get_latency (GST_BASE_SINK (sink));
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  /* The source's frame, the sink's processing deadline and the bound. */
  fail_unless (latency >= 400 * GST_MSECOND
      + gst_base_sink_get_processing_deadline (GST_BASE_SINK (sink)),
      "latency %" GST_TIME_FORMAT, GST_TIME_ARGS (latency));
  /* Every buffer went through to the sink. */
  fail_unless_equals_int (buffers, LIVE_BUFFERS);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

static gint64
position_of (const Variant * v, GstFormat format, gint64 upstream)
{
  TbqLink *l = variant_link (v);
  gint64 pos = -1;
  guint i;

  l->position = upstream;
  tbq_link_start_held (l);
  for (i = 0; i < 3; i++) {
    GstBuffer *b = tbq_buffer_new (100, i, i * GST_SECOND);

    GST_BUFFER_DURATION (b) = GST_SECOND;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  /* 300 bytes and 3 s are queued. */
  fail_unless (gst_pad_query_position (l->esrc, format, &pos));
  tbq_link_free (l);
  return pos;
}

GST_START_TEST (test_position_query_is_adjusted_by_the_level)
{
  const Variant *v = &variants[__i__];

  fail_unless_equals_int64 (position_of (v, GST_FORMAT_TIME,
          10 * GST_SECOND), 7 * GST_SECOND);
  fail_unless_equals_int64 (position_of (v, GST_FORMAT_BYTES, 1000), 700);
  /* Clamped at 0. */
  fail_unless_equals_int64 (position_of (v, GST_FORMAT_TIME, GST_SECOND), 0);
  fail_unless_equals_int64 (position_of (v, GST_FORMAT_BYTES, 100), 0);
}

GST_END_TEST;

static Suite *
tbqueue_queries_suite (void)
{
  Suite *s = suite_create ("tbqueue-queries");
  TCase *tc = tbq_tcase (s, "queries");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_drain_query_waits_for_the_queued_data, 0, n);
  tcase_add_loop_test (tc,
      test_allocation_query_is_proxied_after_the_queued_data, 0, n);
  tcase_add_loop_test (tc,
      test_custom_serialized_query_is_answered_after_the_data, 0, n);
  tcase_add_loop_test (tc,
      test_serialized_query_with_min_threshold_does_not_wait_forever, 0, n);
  tcase_add_loop_test (tc, test_non_serialized_queries_are_answered_at_once,
      0, n);
  tcase_add_loop_test (tc, test_caps_query_is_proxied, 0, n);
  tcase_add_loop_test (tc, test_accept_caps_query_is_proxied, 0, n);
  tcase_add_loop_test (tc, test_scheduling_query_on_src_reports_push_mode, 0,
      n);
  tcase_add_test (tc, test_latency_query_adds_thresholds_as_queue_does);
  tcase_add_test (tc, test_latency_query_at_the_defaults_answers_as_queue);
  tcase_add_test (tc, test_latency_query_adds_the_coalescing_bound);
  tcase_add_test (tc,
      test_a_live_stream_with_a_large_coalescing_bound_covers_it);
  tcase_add_test (tc, test_a_live_stream_at_the_defaults_is_never_napped);
  tcase_add_test (tc, test_a_live_stream_naps_with_the_bound_set);
  tcase_add_loop_test (tc, test_position_query_is_adjusted_by_the_level, 0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_queries);

/* tbqueue events and flow returns: serialized events in order with the
 * data, EOS, flush-on-eos, out-of-band events at once, sticky events while
 * not linked, downstream flow returns travelling upstream.  As queue.
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

static GstEvent *
custom_event (GstEventType type, guint n)
{
  return gst_event_new_custom (type, gst_structure_new ("tbq", "n",
          G_TYPE_UINT, n, NULL));
}

/* "B<seed>" for a buffer, "E<n>" for a custom event, else the event name. */
static gchar *
describe_items (TbqLink * l)
{
  GString *s = g_string_new (NULL);
  guint i;

  pthread_mutex_lock (&l->lock);
  for (i = 0; i < l->items->len; i++) {
    GstMiniObject *o = g_ptr_array_index (l->items, i);

    if (GST_IS_BUFFER (o)) {
      GstMapInfo map;

      fail_unless (gst_buffer_map (GST_BUFFER (o), &map, GST_MAP_READ));
      g_string_append_printf (s, "B%u ", map.data[0]);
      gst_buffer_unmap (GST_BUFFER (o), &map);
    } else if (GST_IS_EVENT (o)) {
      const GstStructure *st = gst_event_get_structure (GST_EVENT (o));
      guint n;

      if (st && gst_structure_has_name (st, "tbq")
          && gst_structure_get_uint (st, "n", &n))
        g_string_append_printf (s, "E%u ", n);
      else
        g_string_append_printf (s, "%s ", GST_EVENT_TYPE_NAME (o));
    }
  }
  pthread_mutex_unlock (&l->lock);
  return g_string_free (s, FALSE);
}

GST_START_TEST (test_serialized_events_stay_in_order_with_buffers)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstTagList *tags = gst_tag_list_new (GST_TAG_TITLE, "tbq", NULL);
  gchar *got;

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l,
          custom_event (GST_EVENT_CUSTOM_DOWNSTREAM, 1)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 2, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_tag (tags)));
  fail_unless (tbq_link_push_event (l,
          custom_event (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, 2)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 3, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_gap (0, GST_SECOND)));
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_release (l);
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = describe_items (l);
  fail_unless_equals_string (got, "stream-start segment B1 E1 B2 tag E2 B3 "
      "gap eos ");
  g_free (got);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_eos_is_queued_after_the_data_and_refuses_more)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  gchar *got;

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 2, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  /* After EOS, data is refused, by the pad and by the element alike. */
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 3, 0)),
      GST_FLOW_EOS);
  tbq_link_release (l);
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = describe_items (l);
  fail_unless_equals_string (got, "stream-start segment B1 B2 eos ");
  g_free (got);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_flush_on_eos_discards_the_queue_and_passes_eos)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBuffer *b2 = gst_buffer_ref (tbq_buffer_new (4, 2, 0));
  gchar *got;

  g_object_set (l->element, "flush-on-eos", TRUE, NULL);
  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  fail_unless_equals_int (tbq_link_push (l, b2), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 3, 0)),
      GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  /* The queued buffers are gone as soon as EOS is in. */
  ASSERT_BUFFER_REFCOUNT (b2, "discarded buffer", 1);
  gst_buffer_unref (b2);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      0);
  tbq_link_release (l);
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = describe_items (l);
  fail_unless_equals_string (got, "stream-start segment B1 eos ");
  g_free (got);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_out_of_band_events_go_downstream_at_once)
{
  TbqLink *l = variant_link (&variants[__i__], 0);

  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 2, 0)),
      GST_FLOW_OK);
  /* Downstream is held with data queued: the OOB event overtakes it. */
  fail_unless (tbq_link_push_event (l,
          custom_event (GST_EVENT_CUSTOM_DOWNSTREAM_OOB, 7)));
  fail_unless_equals_int (tbq_link_count_events (l,
          GST_EVENT_CUSTOM_DOWNSTREAM_OOB), 1);
  fail_unless_equals_int (tbq_link_n_buffers (l), 0);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_upstream_events_go_upstream_at_once)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstEvent *seek = gst_event_new_seek (1.0, GST_FORMAT_TIME,
      GST_SEEK_FLAG_FLUSH, GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_NONE, -1);

  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 1, 0)),
      GST_FLOW_OK);
  fail_unless (gst_pad_send_event (l->esrc, seek));
  fail_unless (gst_pad_send_event (l->esrc,
          custom_event (GST_EVENT_CUSTOM_UPSTREAM, 3)));
  fail_unless_equals_int (l->upstream_events->len, 2);
  fail_unless_equals_int (GST_EVENT_TYPE (g_ptr_array_index
          (l->upstream_events, 0)), GST_EVENT_SEEK);
  tbq_link_free (l);
}

GST_END_TEST;

/* queue's test_initial_events_nodelay */
GST_START_TEST (test_initial_events_are_not_delayed)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstCaps *caps = gst_caps_new_empty_simple ("foo/x-bar");
  GstSegment segment;
  gchar *got;

  tbq_link_set_state (l, GST_STATE_PLAYING);
  fail_unless (tbq_link_push_event (l, gst_event_new_stream_start ("tbq")));
  fail_unless (tbq_link_push_event (l, gst_event_new_caps (caps)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  gst_caps_unref (caps);
  tbq_link_wait_items (l, 3);
  got = describe_items (l);
  fail_unless_equals_string (got, "stream-start caps segment ");
  g_free (got);
  tbq_link_free (l);
}

GST_END_TEST;

/* queue's test_sticky_not_linked: with nothing linked downstream, buffers
 * come back NOT_LINKED, and a new sticky event is still accepted. */
GST_START_TEST (test_sticky_events_are_accepted_while_not_linked)
{
  TbqLink *l = variant_link (&variants[__i__], 1);
  GstSegment segment;
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  gst_pad_unlink (l->esrc, l->sinkpad);
  tbq_link_start (l);
  for (i = 0; i < 10000 && ret == GST_FLOW_OK; i++)
    ret = tbq_link_push (l, gst_buffer_new ());
  fail_unless_equals_int (ret, GST_FLOW_NOT_LINKED);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_new ()),
      GST_FLOW_NOT_LINKED);

  /* Linking again sends RECONFIGURE, which restarts the src task. */
  fail_unless (gst_pad_link (l->esrc, l->sinkpad) == GST_PAD_LINK_OK);
  fail_unless (gst_pad_send_event (l->esrc, gst_event_new_reconfigure ()));
  ret = GST_FLOW_NOT_LINKED;
  for (i = 0; i < 10000 && ret != GST_FLOW_OK; i++)
    ret = tbq_link_push (l, tbq_buffer_new (4, 42, 0));
  fail_unless_equals_int (ret, GST_FLOW_OK);
  /* Buffers queued before (empty ones) may come first; ours comes last. */
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  fail_unless (tbq_buffer_has_pattern (tbq_link_last_buffer (l), 4, 42));
  tbq_link_free (l);
}

GST_END_TEST;

/* Push until the downstream flow return travels back (bounded). */
static GstFlowReturn
flow_seen_upstream (const Variant * v, GstFlowReturn downstream)
{
  TbqLink *l = variant_link (v, 5);
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  l->chain_return = downstream;
  tbq_link_start (l);
  for (i = 0; i < 10000 && ret == GST_FLOW_OK; i++)
    ret = tbq_link_push (l, tbq_buffer_new (4, 0, 0));
  tbq_link_free (l);
  return ret;
}

GST_START_TEST (test_downstream_flow_returns_travel_upstream)
{
  const GstFlowReturn flows[] = { GST_FLOW_NOT_LINKED, GST_FLOW_FLUSHING,
    GST_FLOW_EOS, GST_FLOW_ERROR, GST_FLOW_NOT_NEGOTIATED
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (flows); i++) {
    GstFlowReturn q = flow_seen_upstream (&variants[0], flows[i]);
    GstFlowReturn t = flow_seen_upstream (&variants[__i__], flows[i]);

    fail_unless_equals_int (q, flows[i]);
    fail_unless (t == q, "downstream %s: %s returned %s, queue %s",
        gst_flow_get_name (flows[i]), variants[__i__].factory,
        gst_flow_get_name (t), gst_flow_get_name (q));
  }
}

GST_END_TEST;

GST_START_TEST (test_after_downstream_eos_data_is_refused_until_a_segment)
{
  TbqLink *l = variant_link (&variants[__i__], 5);
  GstSegment segment;
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  l->chain_return = GST_FLOW_EOS;
  tbq_link_start (l);
  for (i = 0; i < 10000 && ret == GST_FLOW_OK; i++)
    ret = tbq_link_push (l, tbq_buffer_new (4, 0, 0));
  fail_unless_equals_int (ret, GST_FLOW_EOS);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 0, 0)),
      GST_FLOW_EOS);

  /* A new segment makes the queue accept data again. */
  pthread_mutex_lock (&l->lock);
  l->chain_return = GST_FLOW_OK;
  pthread_mutex_unlock (&l->lock);
  tbq_link_clear (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (4, 9, 0)),
      GST_FLOW_OK);
  /* (A buffer refused before may still have reached downstream first.) */
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  fail_unless (tbq_buffer_has_pattern (tbq_link_last_buffer (l), 4, 9));
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_eos_after_a_flow_error_posts_an_error)
{
  TbqLink *l = variant_link (&variants[__i__], 5);
  GstBus *bus = gst_bus_new ();
  GstFlowReturn ret = GST_FLOW_OK;
  GstMessage *msg;
  guint i;

  gst_element_set_bus (l->element, bus);
  l->chain_return = GST_FLOW_NOT_NEGOTIATED;
  tbq_link_start (l);
  for (i = 0; i < 10000 && ret == GST_FLOW_OK; i++)
    ret = tbq_link_push (l, tbq_buffer_new (4, 0, 0));
  fail_unless_equals_int (ret, GST_FLOW_NOT_NEGOTIATED);
  /* Upstream will not report it: the queue posts the error at EOS. */
  fail_if (tbq_link_push_event (l, gst_event_new_eos ()));
  msg = tbq_bus_wait (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error message");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (l->element));
  gst_message_unref (msg);
  gst_element_set_bus (l->element, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  tbq_link_free (l);
}

GST_END_TEST;

/* flush-on-eos with a backlog that downstream starts taking as EOS comes
 * in: what comes out is a prefix of what went in, in order, with no gap,
 * then EOS (as queue: what was queued when EOS came is gone, whoever takes
 * it meanwhile).  Last variant: the backlog is spilled to a file through a
 * small sink pool.  The order of the src task's pushes and the EOS is the
 * schedule's: the promise holds for every order, and several rounds try
 * several. */
static void
check_flush_on_eos_prefix (const Variant * v, gboolean spill, guint n)
{
  TbqLink *l = variant_link (v, 0);
  guint i, got;

  g_object_set (l->element, "flush-on-eos", TRUE, NULL);
  if (spill)
    g_object_set (l->element, "sink-block-size", 16384,
        "sink-max-bytes", (guint64) 16 * 16384,
        "temp-template", "/tmp/tbq-events-XXXXXX", NULL);
  tbq_link_start_held (l);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1024, i,
                i * GST_MSECOND)), GST_FLOW_OK);
  tbq_link_release (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = tbq_link_n_buffers (l);
  for (i = 0; i < got; i++) {
    GstBuffer *b = tbq_link_buffer (l, i);

    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * GST_MSECOND);
    fail_unless (tbq_buffer_has_pattern (b, 1024, i));
  }
  tbq_link_free (l);
}

GST_START_TEST (test_flush_on_eos_with_a_backlog_delivers_a_prefix)
{
  guint round, rounds = tbq_scaled (12, 3);
  gboolean spill = __i__ == G_N_ELEMENTS (variants);
  const Variant *v = &variants[spill ? 1 : __i__];

  for (round = 0; round < rounds; round++)
    check_flush_on_eos_prefix (v, spill, spill ? 2000 : 400);
}

GST_END_TEST;

/* A buffer list of one buffer comes out as a list, as with queue. */
GST_START_TEST (test_a_list_of_one_stays_a_list)
{
  TbqLink *l = variant_link (&variants[__i__], 0);
  GstBufferList *list = gst_buffer_list_new ();
  GstMiniObject *o;

  gst_buffer_list_add (list, tbq_buffer_new (16, 3, 0));
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, 4, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 2);
  pthread_mutex_lock (&l->lock);
  /* stream-start, segment, the list, the buffer */
  fail_unless_equals_int (l->items->len, 4);
  o = g_ptr_array_index (l->items, 2);
  fail_unless (GST_IS_BUFFER_LIST (o), "a list of one came out as %s",
      GST_MINI_OBJECT_TYPE (o) == GST_TYPE_BUFFER ? "a buffer" : "another item");
  fail_unless_equals_int (gst_buffer_list_length (GST_BUFFER_LIST (o)), 1);
  fail_unless (tbq_buffer_has_pattern (gst_buffer_list_get (GST_BUFFER_LIST
              (o), 0), 16, 3));
  fail_unless (GST_IS_BUFFER (g_ptr_array_index (l->items, 3)));
  pthread_mutex_unlock (&l->lock);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_events_suite (void)
{
  Suite *s = suite_create ("tbqueue-events");
  TCase *tc = tbq_tcase (s, "events");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_serialized_events_stay_in_order_with_buffers,
      0, n);
  tcase_add_loop_test (tc, test_eos_is_queued_after_the_data_and_refuses_more,
      0, n);
  tcase_add_loop_test (tc, test_flush_on_eos_discards_the_queue_and_passes_eos,
      0, n);
  tcase_add_loop_test (tc, test_out_of_band_events_go_downstream_at_once, 0,
      n);
  tcase_add_loop_test (tc, test_upstream_events_go_upstream_at_once, 0, n);
  tcase_add_loop_test (tc, test_initial_events_are_not_delayed, 0, n);
  tcase_add_loop_test (tc, test_sticky_events_are_accepted_while_not_linked,
      0, n);
  tcase_add_loop_test (tc, test_downstream_flow_returns_travel_upstream, 1,
      n);
  tcase_add_loop_test (tc,
      test_after_downstream_eos_data_is_refused_until_a_segment, 0, n);
  tcase_add_loop_test (tc, test_eos_after_a_flow_error_posts_an_error, 0, n);
  tcase_add_loop_test (tc, test_flush_on_eos_with_a_backlog_delivers_a_prefix,
      0, n + 1);
  tcase_add_loop_test (tc, test_a_list_of_one_stays_a_list, 0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_events);

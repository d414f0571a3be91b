/* tbqueue limits and leaky modes, as queue: which buffers go, which stay.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every scenario runs on queue, on tbqueue with transfer=reference (buffer
 * identity and refcounts are checked) and on tbqueue with transfer=copy
 * (buffers are recognised by their timestamps and bytes).
 */
#include "tbq-check.h"

#define LEAK_NO 0
#define LEAK_UPSTREAM 1
#define LEAK_DOWNSTREAM 2
#define TRANSFER_COPY 1
#define TRANSFER_REFERENCE 2

typedef struct
{
  const gchar *factory;
  gint transfer;                /* -1: queue, which has no such property */
} Variant;

static const Variant variants[] = {
  {"queue", -1},
  {"tbqueue", TRANSFER_REFERENCE},
  {"tbqueue", TRANSFER_COPY},
};

static TbqLink *
variant_link (const Variant * v, gint leaky, guint max_buffers)
{
  /* Only the buffer limit, unless a test says otherwise. */
  TbqLink *l = tbq_link_new (v->factory, "leaky", leaky, "max-size-buffers",
      max_buffers, "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  if (v->transfer >= 0)
    g_object_set (l->element, "transfer", v->transfer, NULL);
  return l;
}

static gboolean
keeps_identity (const Variant * v)
{
  return v->transfer != TRANSFER_COPY;
}

static void
make_buffers (GstBuffer ** b, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    b[i] = tbq_buffer_new (4, i, i * GST_SECOND);
}

/* Downstream buffer `index` is the one made as b[`made`]. */
static void
assert_received (TbqLink * l, const Variant * v, guint index, GstBuffer * b,
    guint made, gboolean discont)
{
  GstBuffer *got = tbq_link_buffer (l, index);

  fail_unless_equals_uint64 (GST_BUFFER_PTS (got), made * GST_SECOND);
  fail_unless (tbq_buffer_has_pattern (got, 4, made));
  if (keeps_identity (v))
    fail_unless (got == b, "%s: buffer %u is not the one pushed", v->factory,
        index);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (got,
          GST_BUFFER_FLAG_DISCONT), discont);
}

static void
check_leaky_upstream (const Variant * v)
{
  TbqLink *l = variant_link (v, LEAK_UPSTREAM, 2);
  GstBuffer *b[6];

  make_buffers (b, 6);
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, b[0]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[1]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 0);

  /* Full: the incoming buffers are dropped, and nothing else. */
  gst_buffer_ref (b[2]);
  gst_buffer_ref (b[3]);
  fail_unless_equals_int (tbq_link_push (l, b[2]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[3]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 2);
  ASSERT_BUFFER_REFCOUNT (b[2], "dropped buffer", 1);
  ASSERT_BUFFER_REFCOUNT (b[3], "dropped buffer", 1);
  gst_buffer_unref (b[2]);
  gst_buffer_unref (b[3]);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);

  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  /* The first buffer after the drop is marked DISCONT, only that one. */
  fail_unless_equals_int (tbq_link_push (l, b[4]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[5]), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 4);
  assert_received (l, v, 0, b[0], 0, FALSE);
  assert_received (l, v, 1, b[1], 1, FALSE);
  assert_received (l, v, 2, b[4], 4, TRUE);
  assert_received (l, v, 3, b[5], 5, FALSE);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 2);
  tbq_link_free (l);
}

GST_START_TEST (test_leaky_upstream_drops_the_incoming_buffer)
{
  check_leaky_upstream (&variants[__i__]);
}

GST_END_TEST;

static void
check_leaky_downstream (const Variant * v)
{
  TbqLink *l = variant_link (v, LEAK_DOWNSTREAM, 2);
  GstBuffer *b[5];

  make_buffers (b, 5);
  tbq_link_start_held (l);
  gst_buffer_ref (b[0]);
  gst_buffer_ref (b[1]);
  fail_unless_equals_int (tbq_link_push (l, b[0]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[1]), GST_FLOW_OK);

  /* Full: the oldest buffers make room for the new ones. */
  fail_unless_equals_int (tbq_link_push (l, b[2]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[3]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 2);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);
  ASSERT_BUFFER_REFCOUNT (b[0], "dropped buffer", 1);
  ASSERT_BUFFER_REFCOUNT (b[1], "dropped buffer", 1);
  gst_buffer_unref (b[0]);
  gst_buffer_unref (b[1]);

  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  fail_unless_equals_int (tbq_link_push (l, b[4]), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 3);
  /* The next buffer pushed after the drop carries DISCONT. */
  assert_received (l, v, 0, b[2], 2, TRUE);
  assert_received (l, v, 1, b[3], 3, FALSE);
  assert_received (l, v, 2, b[4], 4, FALSE);
  tbq_link_free (l);
}

GST_START_TEST (test_leaky_downstream_drops_the_oldest_buffers)
{
  check_leaky_downstream (&variants[__i__]);
}

GST_END_TEST;

static void
check_not_leaky (const Variant * v)
{
  TbqLink *l = variant_link (v, LEAK_NO, 2);
  GstBuffer *b[3];
  TbqPush *push;

  make_buffers (b, 3);
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, b[0]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[1]), GST_FLOW_OK);

  push = tbq_push_async (l, GST_MINI_OBJECT (b[2]));
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  /* The pushing thread waits for room, nothing is dropped.  tbqueue counts
   * the wait: the pushing thread is in it before the check. */
  if (tbq_link_is_tbqueue (l))
    tbq_wait_stat (l->element, "level-waits", 1);
  fail_if (tbq_push_is_done (push), "the push did not wait for room");
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);

  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 3);
  assert_received (l, v, 0, b[0], 0, FALSE);
  assert_received (l, v, 1, b[1], 1, FALSE);
  assert_received (l, v, 2, b[2], 2, FALSE);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 1);
  tbq_link_free (l);
}

GST_START_TEST (test_not_leaky_blocks_upstream_until_there_is_room)
{
  check_not_leaky (&variants[__i__]);
}

GST_END_TEST;

static void
check_raising_limit (const Variant * v)
{
  TbqLink *l = variant_link (v, LEAK_NO, 2);
  GstBuffer *b[3];
  TbqPush *push;

  make_buffers (b, 3);
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, b[0]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, b[1]), GST_FLOW_OK);
  push = tbq_push_async (l, GST_MINI_OBJECT (b[2]));
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);

  /* Downstream is still held: only the new limit can let it in. */
  g_object_set (l->element, "max-size-buffers", 3, NULL);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      3);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 3);
  tbq_link_free (l);
}

GST_START_TEST (test_raising_max_size_buffers_lets_a_waiting_upstream_in)
{
  check_raising_limit (&variants[__i__]);
}

GST_END_TEST;

/* With leaky=downstream, lowering max-size-buffers in PLAYING leaks down to
 * the new limit at once, as queue does: the level is below the limit when
 * g_object_set() returns, including records still in the source layer. */
static void
check_lowering_limit (const Variant * v)
{
  TbqLink *l = variant_link (v, LEAK_DOWNSTREAM, 5);
  GstBuffer *b[5];
  guint i;

  make_buffers (b, 5);
  tbq_link_start_held (l);
  for (i = 0; i < 5; i++)
    fail_unless_equals_int (tbq_link_push (l, b[i]), GST_FLOW_OK);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      5);

  /* The queue leaks at once until it is no longer full (level < limit). */
  g_object_set (l->element, "max-size-buffers", 2, NULL);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      1);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 1);
  assert_received (l, v, 0, b[4], 4, TRUE);
  tbq_link_free (l);
}

GST_START_TEST (test_lowering_max_size_buffers_leaks_downstream_at_once)
{
  check_lowering_limit (&variants[__i__]);
}

GST_END_TEST;

/* Each limit alone makes the queue full. */
static void
check_limit (const Variant * v, const gchar * property, guint64 value,
    gboolean with_duration)
{
  TbqLink *l = variant_link (v, LEAK_UPSTREAM, 0);
  guint i;

  if (strcmp (property, "max-size-time") == 0)
    g_object_set (l->element, property, value, NULL);
  else
    g_object_set (l->element, property, (guint) value, NULL);
  tbq_link_start_held (l);
  for (i = 0; i < 4; i++) {
    GstBuffer *b = tbq_buffer_new (4, i, i * GST_SECOND);

    if (with_duration)
      GST_BUFFER_DURATION (b) = GST_SECOND;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  /* Two fit; the third and fourth are dropped. */
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 2);
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      2);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  tbq_link_free (l);
}

GST_START_TEST (test_max_size_bytes_alone_makes_the_queue_full)
{
  check_limit (&variants[__i__], "max-size-bytes", 8, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_max_size_time_alone_makes_the_queue_full)
{
  check_limit (&variants[__i__], "max-size-time", 2 * GST_SECOND, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_max_size_buffers_alone_makes_the_queue_full)
{
  check_limit (&variants[__i__], "max-size-buffers", 2, FALSE);
}

GST_END_TEST;

static Suite *
tbqueue_leaky_suite (void)
{
  Suite *s = suite_create ("tbqueue-leaky");
  TCase *tc = tbq_tcase (s, "leaky");
  gint n = G_N_ELEMENTS (variants);

  tcase_add_loop_test (tc, test_leaky_upstream_drops_the_incoming_buffer, 0,
      n);
  tcase_add_loop_test (tc, test_leaky_downstream_drops_the_oldest_buffers, 0,
      n);
  tcase_add_loop_test (tc, test_not_leaky_blocks_upstream_until_there_is_room,
      0, n);
  tcase_add_loop_test (tc,
      test_raising_max_size_buffers_lets_a_waiting_upstream_in, 0, n);
  tcase_add_loop_test (tc,
      test_lowering_max_size_buffers_leaks_downstream_at_once, 0, n);
  tcase_add_loop_test (tc, test_max_size_bytes_alone_makes_the_queue_full, 0,
      n);
  tcase_add_loop_test (tc, test_max_size_time_alone_makes_the_queue_full, 0,
      n);
  tcase_add_loop_test (tc, test_max_size_buffers_alone_makes_the_queue_full,
      0, n);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_leaky);

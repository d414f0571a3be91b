/* The copy rule of transfer=auto (gsttbqueue-sink.c): the element holds
 * at most half of an upstream pool's buffers (max-buffers / 2, rounded
 * down), counting the one downstream has inside the src task's push; a
 * pool buffer that would be one more is copied and goes back at once.
 *
 *  - downstream blocked: a pool of N buffers always has at least
 *    N - N / 2 free buffers after each push, and the element holds
 *    exactly min (pushed, N / 2) of them;
 *  - downstream keeping up: no pool buffer is copied;
 *  - the members of a buffer list count one by one;
 *  - an unbounded pool is never copied from; the buffers of every pool
 *    count together (a new pool never makes the count forget one);
 *  - behind a source that is not live nothing is copied: its owner waits
 *    for its pool, as behind queue.
 *
 * The tests' upstream is live (a camera) unless they say otherwise.
 *
 * Every assertion follows from the order of events the test makes (a
 * push returns, downstream holds a buffer, a count reaches a value), not
 * from how the threads happen to run: it runs under ThreadSanitizer too.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#define SINK_MEMORY "TbqSinkMemory"
/* Larger than copy-threshold (512): only the pool rule copies it. */
#define FRAME 65536

static const guint pool_sizes[] = { 1, 2, 3, 4, 5, 8 };

static GstBuffer *
take (GstBufferPool * pool, guint64 k)
{
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b = NULL;
  GstMapInfo map;
  gsize i;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, &params),
      GST_FLOW_OK);
  fail_unless (gst_buffer_map (b, &map, GST_MAP_WRITE));
  /* tbq_buffer_has_pattern's pattern. */
  for (i = 0; i < map.size; i++)
    map.data[i] = (guint8) (k * 7 + 3 + i);
  gst_buffer_unmap (b, &map);
  GST_BUFFER_OFFSET (b) = k;
  GST_BUFFER_PTS (b) = k * GST_MSECOND;
  return b;
}

static void
check (GstBuffer * b, guint64 k)
{
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (b), k);
  fail_unless (tbq_buffer_has_pattern (b, FRAME, (guint8) (k * 7 + 3)),
      "buffer %" G_GUINT64_FORMAT " differs", k);
}

/* How many buffers the pool can give at once, without waiting (each
 * taken one goes back before this returns). */
static guint
count_free (GstBufferPool * pool, guint n)
{
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *taken[16];
  guint i, got = 0;

  g_assert (n <= G_N_ELEMENTS (taken));
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  for (i = 0; i < n; i++) {
    if (gst_buffer_pool_acquire_buffer (pool, &taken[got], &params)
        != GST_FLOW_OK)
      break;
    got++;
  }
  for (i = 0; i < got; i++)
    gst_buffer_unref (taken[i]);
  return got;
}

/* Until the element holds exactly `n` of the pool's buffers. */
static void
wait_held (GstElement * element, guint64 n)
{
  gint64 end = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;

  while (tbq_stat (element, "pool-buffers-held") != n) {
    fail_unless (g_get_monotonic_time () < end, "timed out waiting for "
        "pool-buffers-held to be %" G_GUINT64_FORMAT " (it is %"
        G_GUINT64_FORMAT ")", n, tbq_stat (element, "pool-buffers-held"));
    g_usleep (1000);
  }
}

/* Behind a live source (a camera): its latency query answer says so. */
static TbqLink *
link_new (void)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  l->latency_live = TRUE;
  return l;
}

/* Downstream blocked, two ways: __i__ even, held on STREAM_START (nothing
 * in a push); odd, holding the first buffer inside the push.  3 N buffers
 * from a pool of N: after each push the pool has at least N - N / 2 free
 * buffers, and the element holds exactly min (pushed, N / 2).  The first
 * N / 2 are referenced, the rest copied.  Once downstream goes on every
 * buffer comes out, in order, and every pool buffer goes back. */
GST_START_TEST (test_a_blocked_downstream_never_takes_more_than_half_the_pool)
{
  guint n = pool_sizes[__i__ / 2];
  gboolean in_push = __i__ % 2;
  guint cap = n / 2, total = 3 * n, k;
  GstBufferPool *pool = tbq_pool_new (FRAME, n);
  TbqLink *l = link_new ();

  if (in_push) {
    tbq_link_start (l);
    tbq_link_hold (l);
  } else {
    tbq_link_start_held (l);
  }
  for (k = 0; k < total; k++) {
    guint64 held = MIN (k + 1, cap);

    fail_unless_equals_int (tbq_link_push (l, take (pool, k)), GST_FLOW_OK);
    if (in_push && k == 0)
      tbq_link_wait_holding (l);
    /* Nothing the test does not wait for: the src task only ever takes
     * the first buffer (it is blocked inside its push then). */
    fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"),
        held);
    fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"),
        cap);
    fail_unless (count_free (pool, n) >= n - cap, "pool of %u: %u free after "
        "%u pushes, the rule promises %u", n, count_free (pool, n), k + 1,
        n - cap);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), cap);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"),
      total - cap);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, total);
  for (k = 0; k < total; k++) {
    GstBuffer *b = tbq_link_buffer (l, k);

    check (b, k);
    fail_unless_equals_int (gst_memory_is_type (gst_buffer_peek_memory (b,
                0), SINK_MEMORY), k >= cap);
  }
  wait_held (l->element, 0);
  tbq_link_clear (l);
  fail_unless_equals_int (count_free (pool, n), n);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* Downstream keeping up: each buffer has been pushed, and the push has
 * returned, before the next one comes in.  None is copied, whatever the
 * pool's size (at least 2: a pool of one buffer has no half to give). */
GST_START_TEST (test_a_consumer_keeping_up_gets_every_pool_buffer_by_reference)
{
  guint n = pool_sizes[1 + __i__];
  guint total = 4 * n, k;
  GstBufferPool *pool = tbq_pool_new (FRAME, n);
  TbqLink *l = link_new ();

  tbq_link_start (l);
  for (k = 0; k < total; k++) {
    GstBuffer *b = take (pool, k);

    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
    tbq_link_wait_buffers (l, 1);
    /* The push that delivered it has returned. */
    wait_held (l->element, 0);
    fail_unless (tbq_link_buffer (l, 0) == b);
    check (b, k);
    tbq_link_clear (l);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
      total);
  fail_unless_equals_int (count_free (pool, n), n);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* A buffer list of 6 buffers of a pool of 4, downstream blocked: its first
 * two members are referenced, the other four copied; the list comes out
 * whole and in order. */
GST_START_TEST (test_the_members_of_a_list_count_one_by_one)
{
  GstBufferPool *pool = tbq_pool_new (FRAME, 4);
  TbqLink *l = link_new ();
  GstBufferList *list = gst_buffer_list_new ();
  guint k;

  tbq_link_start_held (l);
  /* Members 0 to 3: the pool's 4 buffers; 4 and 5: plain buffers. */
  for (k = 0; k < 4; k++)
    gst_buffer_list_add (list, take (pool, k));
  for (k = 4; k < 6; k++) {
    GstBuffer *b = tbq_buffer_new (FRAME, (guint8) (k * 7 + 3), k);

    GST_BUFFER_OFFSET (b) = k;
    gst_buffer_list_add (list, b);
  }
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 2);
  /* Two of the list's pool buffers went back: the pool has two free. */
  fail_unless_equals_int (count_free (pool, 4), 2);
  /* Members 0 and 1 referenced, 2 and 3 copied (the rule), 4 and 5
   * referenced (no pool, above copy-threshold). */
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 2);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 4);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 6);
  for (k = 0; k < 6; k++)
    check (tbq_link_buffer (l, k), k);
  wait_held (l->element, 0);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* An unbounded pool (max-buffers 0) never starves: with downstream
 * blocked all its buffers are referenced, and the limit says so. */
GST_START_TEST (test_an_unbounded_pool_is_never_copied_from)
{
  GstBufferPool *pool = tbq_pool_new (FRAME, 0);
  TbqLink *l = link_new ();
  guint k;

  tbq_link_start_held (l);
  for (k = 0; k < 20; k++)
    fail_unless_equals_int (tbq_link_push (l, take (pool, k)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 20);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"),
      G_MAXUINT64);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 20);
  for (k = 0; k < 20; k++)
    check (tbq_link_buffer (l, k), k);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* Behind a source that is not live (a file source, a decoder: the latency
 * query upstream says not live), holding a pool's buffers is backpressure:
 * downstream blocked, every buffer of a pool of 4 is referenced and the
 * pool runs out, as behind queue. */
GST_START_TEST (test_a_source_that_is_not_live_waits_for_its_pool)
{
  GstBufferPool *pool = tbq_pool_new (FRAME, 4);
  TbqLink *l = link_new ();
  guint k;

  l->latency_live = FALSE;
  tbq_link_start_held (l);
  for (k = 0; k < 4; k++)
    fail_unless_equals_int (tbq_link_push (l, take (pool, k)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 4);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"),
      G_MAXUINT64);
  fail_unless_equals_int (count_free (pool, 4), 0);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 4);
  for (k = 0; k < 4; k++)
    check (tbq_link_buffer (l, k), k);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* Buffers of every pool count together, against the limit of the pool
 * of the last pool buffer: a second pool never makes the count forget
 * the first pool's buffers still held, so neither pool gets fewer free
 * buffers than the rule promises.  A flush forgets the count. */
GST_START_TEST (test_the_buffers_of_every_pool_count_together)
{
  GstBufferPool *a = tbq_pool_new (FRAME, 4), *b = tbq_pool_new (FRAME, 6);
  TbqLink *l = link_new ();
  guint k;

  tbq_link_start_held (l);
  for (k = 0; k < 3; k++)
    fail_unless_equals_int (tbq_link_push (l, take (a, k)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 2);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 1);
  /* b's limit is 3: one more of b's is referenced, the other four copied. */
  for (k = 3; k < 8; k++)
    fail_unless_equals_int (tbq_link_push (l, take (b, k)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 5);
  fail_unless_equals_int (count_free (a, 4), 2);
  fail_unless_equals_int (count_free (b, 6), 5);
  /* a again (two sources through a funnel): still 3 held, a's limit 2. */
  fail_unless_equals_int (tbq_link_push (l, take (a, 8)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 6);
  fail_unless_equals_int (count_free (a, 4), 2);
  /* A flush drops what is queued and forgets the count. */
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"), 0);
  tbq_link_release (l);
  tbq_link_clear (l);
  fail_unless_equals_int (count_free (a, 4), 4);
  fail_unless_equals_int (count_free (b, 6), 6);
  tbq_link_free (l);
  tbq_pool_free (a);
  tbq_pool_free (b);
}

GST_END_TEST;

/* A buffer of the first pool downstream holds inside the push while a
 * second pool's buffers come in still counts: pool b (4 buffers, limit 2)
 * gets one reference beside it, then copies. */
GST_START_TEST (test_a_buffer_in_the_push_counts_across_a_new_pool)
{
  GstBufferPool *a = tbq_pool_new (FRAME, 4), *b = tbq_pool_new (FRAME, 4);
  TbqLink *l = link_new ();
  guint k;

  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, take (a, 0)), GST_FLOW_OK);
  tbq_link_wait_holding (l);
  for (k = 1; k < 5; k++)
    fail_unless_equals_int (tbq_link_push (l, take (b, k)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 2);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 2);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 3);
  fail_unless_equals_int (count_free (b, 4), 3);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 5);
  for (k = 0; k < 5; k++)
    check (tbq_link_buffer (l, k), k);
  wait_held (l->element, 0);
  tbq_link_free (l);
  tbq_pool_free (a);
  tbq_pool_free (b);
}

GST_END_TEST;

/* leaky=downstream leaks the oldest buffer; the next one pushed is marked
 * DISCONT, and a buffer someone else holds too (a tee upstream) is made
 * writable by a copy, which has no pool: the buffer it replaces still
 * counts out.  Once everything is pushed nothing is held. */
GST_START_TEST (test_a_discont_copy_after_a_leak_leaves_nothing_held)
{
  GstBufferPool *pool = tbq_pool_new (FRAME, 8);
  TbqLink *l = link_new ();
  GstBuffer *mine[3];
  guint k;

  g_object_set (l->element, "max-size-buffers", 2, NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "leaky", "downstream");
  tbq_link_start_held (l);
  for (k = 0; k < 3; k++) {
    mine[k] = take (pool, k);
    fail_unless_equals_int (tbq_link_push (l, gst_buffer_ref (mine[k])),
        GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-downstream"), 1);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"), 2);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  fail_unless (GST_BUFFER_FLAG_IS_SET (tbq_link_buffer (l, 0),
          GST_BUFFER_FLAG_DISCONT));
  check (tbq_link_buffer (l, 0), 1);
  check (tbq_link_buffer (l, 1), 2);
  wait_held (l->element, 0);
  for (k = 0; k < 3; k++)
    gst_buffer_unref (mine[k]);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

static Suite *
tbqueue_copy_rule_suite (void)
{
  Suite *s = suite_create ("tbqueue-copy-rule");
  TCase *tc = tbq_tcase (s, "copy-rule");

  tcase_add_loop_test (tc,
      test_a_blocked_downstream_never_takes_more_than_half_the_pool, 0,
      2 * G_N_ELEMENTS (pool_sizes));
  tcase_add_loop_test (tc,
      test_a_consumer_keeping_up_gets_every_pool_buffer_by_reference, 0,
      G_N_ELEMENTS (pool_sizes) - 1);
  tcase_add_test (tc, test_the_members_of_a_list_count_one_by_one);
  tcase_add_test (tc, test_an_unbounded_pool_is_never_copied_from);
  tcase_add_test (tc, test_the_buffers_of_every_pool_count_together);
  tcase_add_test (tc, test_a_discont_copy_after_a_leak_leaves_nothing_held);
  tcase_add_test (tc, test_a_buffer_in_the_push_counts_across_a_new_pool);
  tcase_add_test (tc, test_a_source_that_is_not_live_waits_for_its_pool);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_copy_rule);

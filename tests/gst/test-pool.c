/* tbqueue pool geometry: impossible values are refused with a clear error
 * when the pools are made (values wrong only together; a value wrong
 * alone is refused as it is set, test-properties.c), a full sink pool is
 * an overrun like any other; stats add up.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

typedef struct
{
  const gchar *what;
  const gchar *property;
  guint64 value;
  const gchar *mentions;        /* the error message says this */
  const gchar *also;            /* another property to set, or NULL */
  guint64 also_value;
} Refusal;

static const Refusal refusals[] = {
  {"sink-min-bytes above sink-max-bytes", "sink-min-bytes",
      (guint64) 512 * 1024 * 1024, "sink-min-bytes"},
  {"sink block smaller than the source block", "sink-block-size", 2048,
      "block"},
  {"sink pool below two sink blocks", "sink-max-bytes", 65536 + 100,
      "sink-max-bytes"},
  /* Rounded up to whole blocks, this used to overflow to one block. */
  {"sink-min-bytes beyond any memory", "sink-min-bytes", G_MAXUINT64,
      "sink-min-bytes", "sink-max-bytes", G_MAXUINT64},
};

static void
set_geometry (GstElement * e, const gchar * property, guint64 value)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      property);

  if (p->value_type == G_TYPE_UINT64)
    g_object_set (e, property, value, NULL);
  else
    g_object_set (e, property, (guint) value, NULL);
}

GST_START_TEST (test_impossible_geometry_is_refused_with_a_clear_error)
{
  const Refusal *r = &refusals[__i__];
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;

  gst_element_set_bus (e, bus);
  set_geometry (e, r->property, r->value);
  if (r->also != NULL)
    set_geometry (e, r->also, r->also_value);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s: no error message", r->what);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (err->domain == GST_RESOURCE_ERROR, "%s: %s", r->what,
      err->message);
  fail_unless (strstr (err->message, r->mentions) != NULL,
      "%s: the message does not say '%s': %s", r->what, r->mentions,
      err->message);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);

  /* Nothing broke: corrected, it starts. */
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  {
    GstElement *fresh = gst_element_factory_make ("tbqueue", NULL);
    GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        r->property);
    GValue v = G_VALUE_INIT;

    g_value_init (&v, p->value_type);
    g_object_get_property (G_OBJECT (fresh), r->property, &v);
    g_object_set_property (G_OBJECT (e), r->property, &v);
    g_value_unset (&v);
    if (r->also != NULL) {
      p = g_object_class_find_property (G_OBJECT_GET_CLASS (e), r->also);
      g_value_init (&v, p->value_type);
      g_object_get_property (G_OBJECT (fresh), r->also, &v);
      g_object_set_property (G_OBJECT (e), r->also, &v);
      g_value_unset (&v);
    }
    gst_object_unref (fresh);
  }
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus (e, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* A small sink pool, no max-size-* limit: the pool itself fills up.
 * Sink blocks of 4 KiB, at most 2; copied buffers of SMALL_POOL_BUFFER
 * bytes, which travel inline in the blocks (a record above a quarter of a
 * source block would take an extent of its own).  Downstream keeps only
 * deep copies, so delivered buffers give their block back. */
#define SMALL_POOL_BUFFER 900

static GstBuffer *
small_buffer (guint seed, GstClockTime pts)
{
  return tbq_buffer_new (SMALL_POOL_BUFFER, (guint8) seed, pts);
}

static TbqLink *
small_pool_link (gint leaky)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "leaky", leaky,
      "transfer", 1 /* copy */ , "sink-block-size", 4096,
      "sink-min-bytes", (guint64) 0, "sink-max-bytes", (guint64) 8192, NULL);

  l->keep_copies = TRUE;
  return l;
}

/* The schedule the test controls: the upstream thread pushes only once the
 * source pool has a free block, or the sink pool is full (then no source
 * block can be freed until downstream lets go).  A push then never finds a
 * source pool that is full only because the copy task has not run yet; the
 * only pool-full a push can meet is the sink pool's. */
static void
wait_for_source_room_or_full_sink (TbqLink * l, guint64 sink_blocks)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

  while (tbq_stat (l->element, "source-blocks-in-use")
      >= tbq_stat (l->element, "source-blocks")
      && tbq_stat (l->element, "sink-blocks-in-use") < sink_blocks) {
    fail_unless (g_get_monotonic_time () < end, "the copy task never ran");
    g_usleep (1000);
  }
}

/* Push until an overrun (bounded), return how many pushes it took. */
static guint
push_until_overrun (TbqLink * l, guint max)
{
  guint i;

  for (i = 0; i < max && tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) == 0;
      i++) {
    wait_for_source_room_or_full_sink (l, 2);
    fail_unless_equals_int (tbq_link_push (l, small_buffer (i,
                i * GST_MSECOND)), GST_FLOW_OK);
  }
  fail_unless (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) > 0,
      "no overrun after %u buffers", max);
  return i;
}

static guint8
first_byte (GstBuffer * b)
{
  guint8 v;

  fail_unless_equals_int (gst_buffer_extract (b, 0, &v, 1), 1);
  return v;
}

GST_START_TEST (test_full_sink_pool_blocks_upstream_when_not_leaky)
{
  TbqLink *l = small_pool_link (0);
  TbqPush *push;
  guint i, n;

  tbq_link_start_held (l);
  /* The first overrun blocks the pushing thread: push from another one. */
  for (n = 0; n < 200; n++) {
    gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

    wait_for_source_room_or_full_sink (l, 2);
    push = tbq_push_async (l, GST_MINI_OBJECT (small_buffer (n,
                n * GST_MSECOND)));
    /* Poll (with a deadline): either the push returns or it overruns. */
    while (!tbq_push_is_done (push)
        && tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) == 0) {
      fail_unless (g_get_monotonic_time () < end, "push %u hangs", n);
      g_usleep (1000);
    }
    if (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) > 0)
      break;
    fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  }
  fail_unless (n < 200, "the sink pool never filled up");
  /* It waits for room rather than dropping anything: in libtbq's wait for
   * a free source block (counted before it waits), until the release. */
  tbq_wait_stat (l->element, "pressure-waits", 1);
  fail_if (tbq_push_is_done (push), "the push did not wait for room");
  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  /* Nothing was lost, in order. */
  tbq_link_wait_buffers (l, n + 1);
  for (i = 0; i <= n; i++)
    fail_unless_equals_int (first_byte (tbq_link_buffer (l, i)), (guint8) i);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-downstream"), 0);
  tbq_link_free (l);
}

GST_END_TEST;

/* What each push did, seen from the overrun signal, which the pushing
 * thread emits synchronously for the buffer that found the pool full. */
typedef struct
{
  guint pushing;                /* index of the push in progress */
  guint overruns;
  gboolean overrun[64];         /* push i emitted overrun (was dropped) */
  guint64 blocks_in_use[64];    /* sink blocks in use at that moment */
} PushLog;

static void
log_overrun (TbqLink * l, gpointer data)
{
  PushLog *log = data;

  log->overruns++;
  log->overrun[log->pushing] = TRUE;
  log->blocks_in_use[log->pushing] = tbq_stat (l->element,
      "sink-blocks-in-use");
}

GST_START_TEST (test_full_sink_pool_drops_new_buffers_when_leaky_upstream)
{
  TbqLink *l = small_pool_link (1);
  /* Far more than the two sink blocks and the source pool hold. */
  const guint pushed = 60;
  PushLog log = { 0, };
  guint i, got = 0, dropped = 0;

  G_STATIC_ASSERT (60 < G_N_ELEMENTS (log.overrun));
  l->overrun_func = log_overrun;
  l->overrun_data = &log;
  tbq_link_start_held (l);
  for (i = 0; i < pushed; i++) {
    wait_for_source_room_or_full_sink (l, 2);
    log.pushing = i;
    fail_unless_equals_int (tbq_link_push (l, small_buffer (i,
                i * GST_MSECOND)), GST_FLOW_OK);
  }
  /* Leaky upstream: a buffer that finds the pool full is the one dropped,
   * and only while the sink pool is really full (both of its blocks in
   * use: downstream holds the first buffer, nothing can be freed). */
  for (i = 0; i < pushed; i++) {
    if (!log.overrun[i])
      continue;
    dropped++;
    fail_unless_equals_uint64 (log.blocks_in_use[i], 2);
  }
  fail_unless (dropped > 0, "the sink pool never filled up");
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream"),
      dropped);
  fail_unless_equals_uint64 (tbq_stat (l->element, "overruns"), dropped);

  /* Every buffer is delivered or counted as dropped: exactly the ones not
   * dropped, in order, DISCONT on each first buffer after a gap. */
  tbq_link_release (l);
  tbq_link_wait_buffers (l, pushed - dropped);
  for (i = 0; i < pushed; i++) {
    GstBuffer *b;

    if (log.overrun[i])
      continue;
    b = tbq_link_buffer (l, got++);
    fail_unless_equals_int (first_byte (b), (guint8) i);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DISCONT), i > 0 && log.overrun[i - 1]);
  }

  /* Drained: the next buffer finds room; DISCONT if the last was dropped. */
  log.pushing = pushed;
  fail_unless_equals_int (tbq_link_push (l, small_buffer (pushed,
              0)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, got + 1);
  fail_unless_equals_int (log.overruns, dropped);
  fail_unless_equals_int (first_byte (tbq_link_buffer (l, got)),
      (guint8) pushed);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (tbq_link_buffer (l, got),
          GST_BUFFER_FLAG_DISCONT), log.overrun[pushed - 1]);
  fail_unless_equals_int (tbq_link_n_buffers (l), got + 1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_full_sink_pool_drops_old_buffers_when_leaky_downstream)
{
  TbqLink *l = small_pool_link (2);
  guint i, n, pushed, got, dropped, dropped_new, last = 0;

  tbq_link_start_held (l);
  n = push_until_overrun (l, 200);
  pushed = n + 20;
  for (i = n; i < pushed; i++)
    fail_unless_equals_int (tbq_link_push (l, small_buffer (i,
                i * GST_MSECOND)), GST_FLOW_OK);
  dropped = tbq_stat (l->element, "dropped-downstream");
  fail_unless (dropped > 0);
  /* A new buffer is dropped only when leaking every queued one freed no
   * memory (what is left is in the block downstream holds); counted. */
  dropped_new = tbq_stat (l->element, "dropped-upstream");
  fail_unless (dropped_new < dropped);
  tbq_link_release (l);
  got = pushed - dropped - dropped_new;
  tbq_link_wait_buffers (l, got);
  /* Old ones go first: the first buffer does not arrive, the delivered
   * ones are in order and the first of them says DISCONT. */
  fail_unless (first_byte (tbq_link_buffer (l, 0)) != 0);
  fail_unless (GST_BUFFER_FLAG_IS_SET (tbq_link_buffer (l, 0),
          GST_BUFFER_FLAG_DISCONT));
  for (i = 0; i < got; i++) {
    guint v = first_byte (tbq_link_buffer (l, i));

    fail_unless (i == 0 || v > last, "buffer %u out of order", v);
    last = v;
  }
  if (dropped_new == 0)
    fail_unless_equals_int (last, (guint8) (pushed - 1));
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_stats_add_up_to_what_was_pushed)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 10,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "leaky", 1, NULL);
  guint i;

  tbq_link_start_held (l);
  /* 6 small plain buffers (copied), 4 of memory that cannot be mapped
   * (referenced), 3 more that find the queue full (dropped). */
  for (i = 0; i < 13; i++) {
    GstBuffer *b = tbq_buffer_new (100, i, i * GST_MSECOND);

    if (i >= 6 && i < 10)
      GST_MINI_OBJECT_FLAG_SET (gst_buffer_peek_memory (b, 0),
          GST_MEMORY_FLAG_NOT_MAPPABLE);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 6);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 4);
  fail_unless_equals_uint64 (tbq_stat (l->element,
          "referenced-special-memory"), 4);
  fail_unless_equals_uint64 (tbq_stat (l->element, "copy-fallbacks"), 4);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "overruns"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "current-level-buffers"),
      10);
  fail_unless_equals_uint64 (tbq_stat (l->element, "current-level-bytes"),
      1000);
  fail_unless_equals_uint64 (tbq_stat (l->element, "peak-level-buffers"), 10);
  fail_unless_equals_uint64 (tbq_stat (l->element, "source-block-size"),
      tbq_get_uint (l->element, "source-block-size"));
  fail_unless_equals_uint64 (tbq_stat (l->element, "sink-block-size"),
      tbq_get_uint (l->element, "sink-block-size"));
  fail_unless (tbq_stat (l->element, "source-blocks") ==
      tbq_get_uint (l->element, "source-blocks"));

  tbq_link_release (l);
  tbq_link_wait_buffers (l, 10);
  /* Everything written was read: the segment event and ten buffers. */
  fail_unless_equals_uint64 (tbq_stat (l->element, "current-level-buffers"),
      0);
  fail_unless (tbq_stat (l->element, "records-in") >= 11);
  fail_unless_equals_uint64 (tbq_stat (l->element, "records-out"),
      tbq_stat (l->element, "records-in"));
  fail_unless_equals_uint64 (tbq_stat (l->element, "peak-level-buffers"), 10);
  /* Drained, the src task finds the queue empty (counted before the
   * signal). */
  tbq_link_wait_signal (l, TBQ_SIGNAL_UNDERRUN, 1);
  fail_unless (tbq_stat (l->element, "underruns") >= 1);
  tbq_link_free (l);
}

GST_END_TEST;

/* Wait until the copy task has finished a pass that moved something since
 * the pass count was `passes0`.  With two source blocks sealed (half the
 * pool) it is woken and moves them; a sealed block it moved earlier was
 * moved in a pass of its own.  Polls the stats with a hang check: the copy
 * task says nothing else when it is done. */
static void
wait_copy_pass (TbqLink * l, guint64 passes0)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

  while (tbq_stat (l->element, "copier-passes") == passes0) {
    fail_unless (g_get_monotonic_time () < end, "the copy task never ran");
    g_usleep (1000);
  }
}

/* The copy task has done what it promises once woken: fewer than half the
 * source pool is sealed and waiting (it is woken when half is; a block
 * sealed just after a pass, while fewer than half are, waits for the next
 * wake-up: nothing asks for it while downstream is busy).  Only the block
 * being filled and such a block are in use (a pass counted since
 * `passes0` alone may have moved only the first of the sealed blocks). */
static void
wait_sealed_blocks_moved (TbqLink * l, guint64 passes0)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;
  guint64 half = MAX (tbq_stat (l->element, "source-blocks") / 2, 1);

  wait_copy_pass (l, passes0);
  while (tbq_stat (l->element, "source-blocks-in-use") - 1 >= half) {
    fail_unless (g_get_monotonic_time () < end, "sealed blocks never moved");
    g_usleep (1000);
  }
}

/* Push copied 32-byte buffers numbered from *i until `blocks` more source
 * blocks were handed off, then `extra` more; wait until the copy task has
 * moved the sealed blocks it promises to.  Returns the bytes it moved
 * meanwhile, in *sealed how many sealed blocks it could have moved (those
 * waiting at the start and those sealed since), and in *waited whether the
 * upstream thread found the source pool full (when the copy task ran
 * late): it then asks for the block being filled too. */
static guint64
fill_source_blocks (TbqLink * l, guint * i, guint blocks, guint extra,
    guint64 * sealed, gboolean * waited)
{
  guint64 full0 = tbq_stat (l->element, "source-pool-full");
  guint64 copied0 = tbq_stat (l->element, "copier-bytes-moved");
  guint64 handoffs0 = tbq_stat (l->element, "handoffs");
  guint64 passes0 = tbq_stat (l->element, "copier-passes");
  guint64 waiting0 = tbq_stat (l->element, "source-blocks-in-use") - 1;
  guint n;

  while (tbq_stat (l->element, "handoffs") - handoffs0 < blocks) {
    fail_unless (*i < 10000);
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, *i,
                *i * GST_MSECOND)), GST_FLOW_OK);
    (*i)++;
  }
  for (n = *i + extra; *i < n; (*i)++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, *i,
                *i * GST_MSECOND)), GST_FLOW_OK);
  wait_sealed_blocks_moved (l, passes0);
  *waited = tbq_stat (l->element, "source-pool-full") != full0;
  *sealed = waiting0 + tbq_stat (l->element, "handoffs") - handoffs0;
  return tbq_stat (l->element, "copier-bytes-moved") - copied0;
}

GST_START_TEST (test_copy_task_moves_whole_source_blocks_while_downstream_is_busy)
{
  /* No level limits: every buffer is queued while downstream holds. */
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "transfer", 1,
      NULL);
  /* A source block's payload: its size less libtbq's 64-byte header. */
  guint64 payload = tbq_get_uint (l->element, "source-block-size") - 64;
  guint64 copied, before, sealed;
  gboolean waited;
  gint64 end;
  guint i = 0;

  tbq_link_start_held (l);
  /* Downstream is busy (its chain holds the first buffer): nobody waits
   * for data, so only the copy task moves what the upstream thread writes. */
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, i++, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  /* Two blocks sealed wake the copy task.  Its first pass also answers
   * any request for everything queued still pending from the start (the
   * events, the first buffer). */
  fill_source_blocks (l, &i, 2, 20, &sealed, &waited);
  /* From here nothing asks for the block being filled: the copy task
   * moves the blocks sealed next (and one left sealed before, if any),
   * and nothing of the block the upstream thread is filling (following
   * it through that block would share every cache line the thread
   * writes). */
  copied = fill_source_blocks (l, &i, 2, 20, &sealed, &waited);
  fail_unless (waited || copied <= sealed * payload, "%" G_GUINT64_FORMAT
      " bytes copied from %" G_GUINT64_FORMAT " sealed blocks of %"
      G_GUINT64_FORMAT, copied, sealed, payload);

  /* A serialized event asks for everything before it. */
  before = tbq_stat (l->element, "copier-bytes-moved");
  fail_unless (tbq_link_push_event (l,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
              gst_structure_new_empty ("tbq-test"))));
  /* The block being filled holds at least the 20 buffers pushed after the
   * last hand-off: the request moves them (they were not moved before). */
  end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;
  while (tbq_stat (l->element, "copier-bytes-moved") - before < 20 * 32) {
    fail_unless (g_get_monotonic_time () < end,
        "the event did not move the rest");
    g_usleep (1000);
  }
  tbq_link_release (l);
  tbq_link_wait_buffers (l, i);
  for (copied = 0; copied < i; copied++)
    fail_unless_equals_int (first_byte (tbq_link_buffer (l, copied)),
        (guint8) copied);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_pool_suite (void)
{
  Suite *s = suite_create ("tbqueue-pool");
  TCase *tc = tbq_tcase (s, "pool");

  tcase_add_loop_test (tc,
      test_impossible_geometry_is_refused_with_a_clear_error, 0,
      G_N_ELEMENTS (refusals));
  tcase_add_test (tc, test_full_sink_pool_blocks_upstream_when_not_leaky);
  tcase_add_test (tc,
      test_copy_task_moves_whole_source_blocks_while_downstream_is_busy);
  tcase_add_test (tc,
      test_full_sink_pool_drops_new_buffers_when_leaky_upstream);
  tcase_add_test (tc,
      test_full_sink_pool_drops_old_buffers_when_leaky_downstream);
  tcase_add_test (tc, test_stats_add_up_to_what_was_pushed);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_pool);

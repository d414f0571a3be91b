/* tbqueue at its limits: it drops exactly what queue drops, and nothing
 * below the limits; a full source pool is no reason to drop or signal; no
 * leaky mode waits for downstream; held-back records never stall.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The side-by-side scenarios run the same pushes into queue and into
 * tbqueue (each transfer mode) with downstream blocked on a buffer, and
 * require the same overrun signals, the same buffers delivered, the same
 * DISCONT flags.  The copy task can be held back (a STREAM_STATUS ENTER
 * sync handler blocks its thread), so that the source pool really is full
 * while the levels are low.
 */
#include "tbq-check.h"

#define LEAK_NO 0
#define LEAK_UPSTREAM 1
#define LEAK_DOWNSTREAM 2
#define TRANSFER_COPY 1
#define STEP (10 * GST_MSECOND)
/* The longest max-coalesce-latency: no test waits that long. */
#define NAP_BOUND ((guint64) 60 * GST_SECOND)

static const gchar *leaky_names[] = { "no", "upstream", "downstream" };

/* ---- side by side with queue ---- */

typedef struct
{
  const gchar *property;
  guint64 value;
} Limit;

/* Each alone is reached by the third buffer of 100 bytes and 10 ms. */
static const Limit limits[] = {
  {"max-size-buffers", 3},
  {"max-size-bytes", 300},
  {"max-size-time", 3 * STEP},
};

/* The window: single buffers, buffer lists (one item to queue, whole or
 * not at all) and a serialized event (leaked like any item).  Numbers are
 * buffer seeds; 0 ends a list, -1 is the event. */
static const gint window[] = {
  1, 2, 3, 100, 4, 5, 6, 0, 7, 200, 8, 9, 0, -1, 10, 11, 300, 12, 0, 13, 14,
};

static TbqLink *
limit_link (const gchar * factory, gint transfer, gint leaky,
    const Limit * limit)
{
  TbqLink *l = tbq_link_new (factory, "leaky", leaky, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  if (strcmp (limit->property, "max-size-time") == 0)
    g_object_set (l->element, limit->property, limit->value, NULL);
  else
    g_object_set (l->element, limit->property, (guint) limit->value, NULL);
  if (transfer >= 0)
    g_object_set (l->element, "transfer", transfer, NULL);
  return l;
}

static GstBuffer *
seeded (guint seed)
{
  GstBuffer *b = tbq_buffer_new (100, (guint8) seed, seed * STEP);

  GST_BUFFER_DURATION (b) = STEP;
  return b;
}

/* Push the window item at *i (a list takes several entries).  Returns the
 * overrun signals emitted so far. */
static guint
push_window_item (TbqLink * l, guint * i)
{
  gint v = window[*i];

  if (v == -1) {
    fail_unless (tbq_link_push_event (l,
            gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                gst_structure_new ("tbq", "n", G_TYPE_UINT, 1, NULL))));
  } else if (v >= 100) {
    GstBufferList *list = gst_buffer_list_new ();

    gst_buffer_list_add (list, seeded (v / 100 + 20));
    while (window[++*i] != 0)
      gst_buffer_list_add (list, seeded (window[*i]));
    fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  } else {
    fail_unless_equals_int (tbq_link_push (l, seeded (v)), GST_FLOW_OK);
  }
  (*i)++;
  return tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN);
}

/* What downstream got, as text: buffer seeds ('d' after a DISCONT one),
 * lists in brackets, the window's event as E. */
static void
describe (GString * s, GstMiniObject * o)
{
  if (GST_IS_BUFFER (o)) {
    GstBuffer *b = GST_BUFFER (o);
    guint8 seed;

    fail_unless_equals_int (gst_buffer_extract (b, 0, &seed, 1), 1);
    g_string_append_printf (s, "%u%s ", seed,
        GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DISCONT) ? "d" : "");
  } else if (GST_IS_BUFFER_LIST (o)) {
    GstBufferList *bl = GST_BUFFER_LIST (o);
    guint k;

    g_string_append (s, "[ ");
    for (k = 0; k < gst_buffer_list_length (bl); k++)
      describe (s, GST_MINI_OBJECT (gst_buffer_list_get (bl, k)));
    g_string_append (s, "] ");
  } else if (GST_IS_EVENT (o)
      && GST_EVENT_TYPE (o) == GST_EVENT_CUSTOM_DOWNSTREAM) {
    g_string_append (s, "E ");
  }
}

/* Downstream blocked on buffer 0 (`on_event`: on STREAM_START, buffer 0
 * then queued like the others): push the window (leaky modes), or up to
 * the limit and one more that must wait (leaky=no); then release and
 * drain.  The outcome as text: overruns after each push, what arrived.
 * Held on STREAM_START, tbqueue's src task has taken nothing: what it
 * holds is in its source layer, and leaky=downstream leaks from there. */
static gchar *
run_window (const gchar * factory, gint transfer, gint leaky,
    const Limit * limit, gboolean on_event)
{
  TbqLink *l = limit_link (factory, transfer, leaky, limit);
  GString *s = g_string_new (NULL);
  guint i = 0, k;

  if (on_event) {
    tbq_link_start_held (l);
    fail_unless_equals_int (tbq_link_push (l, seeded (0)), GST_FLOW_OK);
  } else {
    tbq_link_start (l);
    tbq_link_hold (l);
    fail_unless_equals_int (tbq_link_push (l, seeded (0)), GST_FLOW_OK);
    tbq_link_wait_holding (l);
  }
  if (leaky != LEAK_NO) {
    while (i < G_N_ELEMENTS (window))
      g_string_append_printf (s, "%u ", push_window_item (l, &i));
  } else {
    TbqPush *push;

    /* Three buffers fill the queue; the fourth waits for room. */
    for (k = 1; k <= (on_event ? 2 : 3); k++)
      fail_unless_equals_int (tbq_link_push (l, seeded (k)), GST_FLOW_OK);
    g_string_append_printf (s, "%u ", tbq_link_signal_count (l,
            TBQ_SIGNAL_OVERRUN));
    push = tbq_push_async (l, GST_MINI_OBJECT (seeded (4)));
    tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
    g_string_append_printf (s, "| level %u |",
        tbq_get_uint (l->element, "current-level-buffers"));
    tbq_link_release (l);
    fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  }
  if (leaky != LEAK_NO)
    g_string_append_printf (s, "| level %u |",
        tbq_get_uint (l->element, "current-level-buffers"));
  tbq_link_release (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  pthread_mutex_lock (&l->lock);
  for (k = 0; k < l->items->len; k++)
    describe (s, g_ptr_array_index (l->items, k));
  pthread_mutex_unlock (&l->lock);
  g_string_append_printf (s, "| overruns %u",
      tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN));
  tbq_link_free (l);
  return g_string_free (s, FALSE);
}

static void
check_side_by_side (gint leaky, const Limit * limit, gboolean on_event)
{
  gchar *want = run_window ("queue", -1, leaky, limit, on_event);
  gint transfer;

  GST_INFO ("leaky=%s %s: queue: %s", leaky_names[leaky], limit->property,
      want);
  for (transfer = 0; transfer <= 2; transfer++) {
    gchar *got = run_window ("tbqueue", transfer, leaky, limit, on_event);

    fail_unless (strcmp (got, want) == 0,
        "leaky=%s, %s, transfer %d, held on %s:\n  tbqueue: %s\n"
        "  queue:   %s", leaky_names[leaky], limit->property, transfer,
        on_event ? "an event" : "a buffer", got, want);
    g_free (got);
  }
  g_free (want);
}

/* __i__: leaky mode x limit. */
GST_START_TEST (test_drops_exactly_what_queue_drops_with_downstream_blocked)
{
  check_side_by_side (__i__ / G_N_ELEMENTS (limits),
      &limits[__i__ % G_N_ELEMENTS (limits)], FALSE);
}

GST_END_TEST;

GST_START_TEST (test_drops_what_queue_drops_with_all_in_the_source_layer)
{
  check_side_by_side (__i__ / G_N_ELEMENTS (limits),
      &limits[__i__ % G_N_ELEMENTS (limits)], TRUE);
}

GST_END_TEST;

/* ---- the copy task held back ---- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean closed;              /* the copy task waits at its start */
  gboolean waiting;
} CopierGate;

/* The copy task's thread posts STREAM_STATUS ENTER before it runs: keep
 * it there while the gate is closed.  Every message is dropped (a sync
 * handler that drops a message unrefs it). */
static GstBusSyncReply
gate_sync (GstBus * bus, GstMessage * msg, gpointer data)
{
  CopierGate *g = data;
  GstStreamStatusType type;
  GstElement *owner;
  const GValue *v;
  gboolean copier = FALSE;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_STREAM_STATUS) {
    gst_message_parse_stream_status (msg, &type, &owner);
    v = gst_message_get_stream_status_object (msg);
    copier = type == GST_STREAM_STATUS_TYPE_ENTER && v != NULL
        && G_VALUE_HOLDS (v, GST_TYPE_TASK)
        && g_str_has_suffix (GST_OBJECT_NAME (g_value_get_object (v)),
        ":copier");
  }
  gst_message_unref (msg);
  if (!copier)
    return GST_BUS_DROP;
  g_mutex_lock (&g->lock);
  g->waiting = TRUE;
  g_cond_broadcast (&g->cond);
  while (g->closed)
    g_cond_wait (&g->cond, &g->lock);
  g->waiting = FALSE;
  g_cond_broadcast (&g->cond);
  g_mutex_unlock (&g->lock);
  return GST_BUS_DROP;
}

static GstBus *
gate_install (TbqLink * l, CopierGate * g)
{
  GstBus *bus = gst_bus_new ();

  g_mutex_init (&g->lock);
  g_cond_init (&g->cond);
  g->closed = TRUE;
  g->waiting = FALSE;
  gst_bus_set_sync_handler (bus, gate_sync, g, NULL);
  gst_element_set_bus (l->element, bus);
  return bus;
}

static void
gate_wait_closed (CopierGate * g)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

  g_mutex_lock (&g->lock);
  while (!g->waiting)
    fail_unless (g_cond_wait_until (&g->cond, &g->lock, end),
        "the copy task never started");
  g_mutex_unlock (&g->lock);
}

static void
gate_open (CopierGate * g)
{
  g_mutex_lock (&g->lock);
  g->closed = FALSE;
  g_cond_broadcast (&g->cond);
  g_mutex_unlock (&g->lock);
}

/* Open, and out of the copy task's thread: the bus goes before the
 * element. */
static void
gate_remove (TbqLink * l, GstBus * bus, CopierGate * g)
{
  g_mutex_lock (&g->lock);
  while (g->waiting)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
  gst_element_set_bus (l->element, NULL);
  gst_object_unref (bus);
  g_mutex_clear (&g->lock);
  g_cond_clear (&g->cond);
}

/* Pushes `n` buffers from a thread of its own. */
typedef struct
{
  TbqLink *l;
  guint n, size;
  GstFlowReturn ret;
} Pusher;

static gpointer
pusher_main (gpointer data)
{
  Pusher *p = data;
  guint i;

  p->ret = GST_FLOW_OK;
  for (i = 0; i < p->n && p->ret == GST_FLOW_OK; i++) {
    GstBuffer *b = tbq_buffer_new (p->size, (guint8) i, i * GST_USECOND);

    /* The sequence number, for the order check. */
    GST_BUFFER_OFFSET (b) = i;
    p->ret = tbq_link_push (p->l, b);
  }
  return NULL;
}

/* Delivered in order, none marked DISCONT. */
static void
expect_all_in_order (TbqLink * l, guint n)
{
  guint i;

  tbq_link_wait_buffers (l, n);
  fail_unless_equals_int (tbq_link_n_buffers (l), n);
  for (i = 0; i < n; i++) {
    GstBuffer *b = tbq_link_buffer (l, i);

    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (b), i);
    fail_if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DISCONT));
  }
}

static void
drain (TbqLink * l)
{
  GstQuery *query = gst_query_new_drain ();

  fail_unless (gst_pad_peer_query (l->srcpad, query));
  gst_query_unref (query);
}

/* __i__: leaky mode; `napping`: downstream takes buffers but the src task
 * naps (the longest max-coalesce-latency), so that it does not move
 * records itself; else downstream is blocked and only the upstream thread
 * can move records. */
static void
check_copy_task_held (gint leaky, gboolean napping)
{
  /* Far more than the source pool (4 blocks of 4 KiB) holds; far below
   * every limit. */
  Pusher p = { NULL, 600, 64, GST_FLOW_OK };
  TbqLink *l = tbq_link_new ("tbqueue", "leaky", leaky, "max-size-buffers",
      10000, "max-size-bytes", 0, "max-size-time", (guint64) 0, "transfer",
      TRANSFER_COPY, "max-coalesce-latency", napping ? NAP_BOUND : 0, NULL);
  CopierGate gate;
  GstBus *bus = gate_install (l, &gate);
  GThread *thread;

  p.l = l;
  if (!napping) {
    /* Downstream blocked too: nobody but the upstream thread can move
     * records meanwhile. */
    tbq_link_start_held (l);
  } else {
    /* The src task naps within a few buffers; then only the copy task
     * would move records. */
    tbq_link_set_state (l, GST_STATE_PLAYING);
    tbq_link_push_initial_events (l, GST_FORMAT_TIME);
  }
  gate_wait_closed (&gate);
  thread = g_thread_new ("pusher", pusher_main, &p);
  /* The writer really found its source pool full. */
  tbq_wait_stat (l->element, "source-pool-full", 1);
  gate_open (&gate);
  g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_OK);
  tbq_link_release (l);
  if (napping)
    /* The last buffers would wait for the nap's deadline: a drain query,
     * like any serialized query, ends the nap. */
    drain (l);
  expect_all_in_order (l, p.n);
  /* Not full: no signal, nothing dropped. */
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "overruns"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-downstream"), 0);
  gate_remove (l, bus, &gate);
  tbq_link_free (l);
}

GST_START_TEST (test_a_full_source_pool_below_the_limits_drops_nothing)
{
  check_copy_task_held (__i__, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_a_full_source_pool_drops_nothing_while_the_src_task_naps)
{
  check_copy_task_held (__i__, TRUE);
}

GST_END_TEST;

/* ---- a full sink pool, held downstream ---- */

static guint8
first_byte (GstBuffer * b)
{
  guint8 v;

  fail_unless_equals_int (gst_buffer_extract (b, 0, &v, 1), 1);
  return v;
}

/* Two sink blocks of 4 KiB; downstream holds the first (copied) buffer,
 * whose memory keeps the first sink block: nothing can free the pool
 * until downstream lets go.  A leaky mode never waits for that: every
 * push returns at once (else this test hangs), the writer never waits for
 * a free source block (pressure-waits), and every buffer is delivered or
 * counted as dropped, DISCONT after each gap. */
GST_START_TEST (test_a_leaky_mode_never_waits_for_a_sink_pool_held_downstream)
{
  gint leaky = __i__ ? LEAK_DOWNSTREAM : LEAK_UPSTREAM;
  const guint pushed = 60;
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "leaky", leaky,
      "transfer", TRANSFER_COPY, "sink-block-size", 4096, "sink-min-bytes",
      (guint64) 0, "sink-max-bytes", (guint64) 8192, NULL);
  guint i, got, dropped, last = 0;

  /* Delivered buffers give their sink block back (the link keeps copies),
   * except the one held. */
  l->keep_copies = TRUE;
  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1000, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  for (i = 1; i < pushed; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1000, i,
                i * GST_MSECOND)), GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "pressure-waits"), 0);
  dropped = tbq_stat (l->element, "dropped-upstream")
      + tbq_stat (l->element, "dropped-downstream");
  fail_unless (dropped > 0, "the sink pool never filled up");
  fail_unless (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) > 0);

  tbq_link_release (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = tbq_link_n_buffers (l);
  fail_unless_equals_int (got + dropped, pushed);
  for (i = 0; i < got; i++) {
    GstBuffer *b = tbq_link_buffer (l, i);
    guint8 v = first_byte (b);

    fail_unless (i == 0 || v > last, "buffer %u out of order", v);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DISCONT), i > 0 && v != last + 1);
    last = v;
  }
  tbq_link_free (l);
}

GST_END_TEST;

/* leaky=no with the sink pool held downstream waits, and a flush or a
 * state change ends that wait at once.  Downstream holds the first
 * (copied) buffer; a thread pushes far more than the two sink blocks and
 * the source pool hold.  Once both pools are full nothing can move until
 * downstream lets go: the pusher waits for good. */
static GThread *
wait_at_a_full_sink_pool (TbqLink * l, Pusher * p)
{
  GThread *thread;
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

  tbq_link_start (l);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1000, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  p->l = l;
  p->n = 60;
  p->size = 1000;
  thread = g_thread_new ("pusher", pusher_main, p);
  while (tbq_stat (l->element, "sink-blocks-in-use") < 2
      || tbq_stat (l->element, "source-blocks-in-use")
      < tbq_stat (l->element, "source-blocks")
      || tbq_stat (l->element, "pressure-waits") == 0) {
    fail_unless (g_get_monotonic_time () < end, "the pools never filled up");
    g_usleep (1000);
  }
  return thread;
}

static TbqLink *
small_sink_pool_link (void)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "transfer",
      TRANSFER_COPY, "sink-block-size", 4096, "sink-min-bytes", (guint64) 0,
      "sink-max-bytes", (guint64) 8192, NULL);

  l->keep_copies = TRUE;
  return l;
}

GST_START_TEST (test_a_flush_ends_a_wait_at_a_full_sink_pool)
{
  TbqLink *l = small_sink_pool_link ();
  Pusher p;
  GThread *thread = wait_at_a_full_sink_pool (l, &p);

  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  tbq_link_free (l);
}

GST_END_TEST;

static gpointer
to_ready (gpointer data)
{
  return GINT_TO_POINTER (gst_element_set_state (data, GST_STATE_READY));
}

GST_START_TEST (test_a_state_change_ends_a_wait_at_a_full_sink_pool)
{
  TbqLink *l = small_sink_pool_link ();
  Pusher p;
  GThread *thread = wait_at_a_full_sink_pool (l, &p), *change;

  /* Downstream still holds its buffer: only the state change can end the
   * wait.  (The state change itself then waits for the src task, which
   * is in downstream's hands.) */
  change = g_thread_new ("to-ready", to_ready, l->element);
  g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  tbq_link_release (l);
  fail_unless_equals_int (GPOINTER_TO_INT (g_thread_join (change)),
      GST_STATE_CHANGE_SUCCESS);
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- records held back: publish-batch, wake coalescing ---- */

/* With publish-batch the writer holds buffers back while downstream is
 * busy; a buffer is never held while downstream waits for data. */
GST_START_TEST (test_publish_batch_never_holds_a_buffer_from_an_idle_downstream)
{
  guint batch = __i__ ? 8 : 0;
  TbqLink *l = tbq_link_new ("tbqueue", "publish-batch", batch, NULL);
  guint i;

  tbq_link_start (l);
  for (i = 0; i < 3; i++) {
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (16, i, i)),
        GST_FLOW_OK);
    tbq_link_wait_buffers (l, i + 1);
  }
  tbq_link_free (l);
}

GST_END_TEST;

/* At a limit the upstream thread waits for the src task, which can only
 * take what was published. */
GST_START_TEST (test_publish_batch_at_a_limit_does_not_deadlock)
{
  guint batch = __i__ ? 5 : 0;
  TbqLink *l = tbq_link_new ("tbqueue", "publish-batch", batch,
      "max-size-buffers", 3, NULL);
  guint i;

  tbq_link_start (l);
  for (i = 0; i < 500; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, i, i)),
        GST_FLOW_OK);
  tbq_link_wait_buffers (l, 500);
  tbq_link_free (l);
}

GST_END_TEST;

/* A wait at a limit ends a nap of the src task at once: with the longest
 * max-coalesce-latency, every stall would otherwise last a minute. */
GST_START_TEST (test_a_wait_at_a_limit_does_not_wait_for_the_coalescing_bound)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-coalesce-latency", NAP_BOUND,
      "max-size-buffers", 3, NULL);
  guint i;

  tbq_link_start (l);
  for (i = 0; i < 300; i++)
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, i, i)),
        GST_FLOW_OK);
  /* The last ones are delivered by the drain query. */
  drain (l);
  tbq_link_wait_buffers (l, 300);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_max_coalesce_latency_accepts_what_libtbq_accepts)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GParamSpecUInt64 *p = G_PARAM_SPEC_UINT64 (g_object_class_find_property
      (G_OBJECT_GET_CLASS (e), "max-coalesce-latency"));

  fail_unless_equals_uint64 (p->minimum, 0);
  fail_unless_equals_uint64 (p->maximum, 60 * GST_SECOND);
  gst_object_unref (e);
}

GST_END_TEST;

/* The reported case: a live-rate stream whose buffers last longer than
 * max-size-time, with publish-batch. */
GST_START_TEST (test_publish_batch_pipeline_reaches_eos)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=5 ! "
      "video/x-raw,framerate=1/2,width=16,height=16 ! "
      "tbqueue publish-batch=2 ! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;

  fail_unless (pipe != NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

static Suite *
tbqueue_limits_suite (void)
{
  Suite *s = suite_create ("tbqueue-limits");
  TCase *tc = tbq_tcase (s, "limits");

  tcase_add_loop_test (tc,
      test_drops_exactly_what_queue_drops_with_downstream_blocked, 0,
      3 * G_N_ELEMENTS (limits));
  tcase_add_loop_test (tc,
      test_drops_what_queue_drops_with_all_in_the_source_layer, 0,
      3 * G_N_ELEMENTS (limits));
  tcase_add_loop_test (tc,
      test_a_full_source_pool_below_the_limits_drops_nothing, 0, 3);
  tcase_add_loop_test (tc,
      test_a_full_source_pool_drops_nothing_while_the_src_task_naps, 0, 3);
  tcase_add_loop_test (tc,
      test_a_leaky_mode_never_waits_for_a_sink_pool_held_downstream, 0, 2);
  tcase_add_test (tc, test_a_flush_ends_a_wait_at_a_full_sink_pool);
  tcase_add_test (tc, test_a_state_change_ends_a_wait_at_a_full_sink_pool);
  tcase_add_loop_test (tc,
      test_publish_batch_never_holds_a_buffer_from_an_idle_downstream, 0, 2);
  tcase_add_loop_test (tc, test_publish_batch_at_a_limit_does_not_deadlock,
      0, 2);
  tcase_add_test (tc,
      test_a_wait_at_a_limit_does_not_wait_for_the_coalescing_bound);
  tcase_add_test (tc, test_max_coalesce_latency_accepts_what_libtbq_accepts);
  tcase_add_test (tc, test_publish_batch_pipeline_reaches_eos);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_limits);

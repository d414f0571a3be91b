/* tbqueue buffering: use-buffering, the watermarks, BUFFERING messages and
 * the BUFFERING query, as queue2's.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Downstream is a gate: our chain takes a buffer only on credit, so the
 * level is set exactly.  The first buffer stays inside the gate (the src
 * task is then blocked in its push, out of the level); after that every
 * buffer pushed adds one to the level, and gate_take (n) takes n off it,
 * returning once the src task, having taken the next one, is inside the
 * gate again.  The element posts a message before the push that follows
 * the level change (src side) or before the chain function returns (sink
 * side), so after each step every message it caused is on the bus: the
 * messages are checked exactly, with no timing.
 */
#include "tbq-check.h"

/* ---- the gate ---- */

typedef struct
{
  GMutex lock;
  GCond cond;
  guint credits;
  guint entered;
  gboolean open;
} Gate;

static Gate gate;

static GstFlowReturn
gate_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  g_mutex_lock (&gate.lock);
  gate.entered++;
  g_cond_broadcast (&gate.cond);
  while (!gate.open && gate.credits == 0)
    g_cond_wait (&gate.cond, &gate.lock);
  if (!gate.open)
    gate.credits--;
  g_mutex_unlock (&gate.lock);
  gst_buffer_unref (buffer);
  return GST_FLOW_OK;
}

/* Wait until `n` buffers in all have entered the gate. */
static void
gate_wait_entered (guint n)
{
  gint64 end = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&gate.lock);
  while (gate.entered < n)
    fail_unless (g_cond_wait_until (&gate.cond, &gate.lock, end),
        "%u buffers reached downstream, waited for %u", gate.entered, n);
  g_mutex_unlock (&gate.lock);
}

/* Take `n` buffers off the level (the queue holds at least n). */
static void
gate_take (guint n)
{
  guint target;

  g_mutex_lock (&gate.lock);
  gate.credits += n;
  target = gate.entered + n;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
  gate_wait_entered (target);
}

static void
gate_open (void)
{
  g_mutex_lock (&gate.lock);
  gate.open = TRUE;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
}

/* ---- messages ---- */

/* The percentages posted since the last call, in order. */
static GArray *
posted (GstBus * bus)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (gint));
  GstMessage *m;

  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_BUFFERING)) != NULL) {
    gint percent;

    gst_message_parse_buffering (m, &percent);
    g_array_append_val (a, percent);
    gst_message_unref (m);
  }
  return a;
}

static gchar *
describe (GArray * a)
{
  GString *s = g_string_new ("[");
  guint i;

  for (i = 0; i < a->len; i++)
    g_string_append_printf (s, "%s%d", i ? ", " : "", g_array_index (a,
            gint, i));
  g_string_append (s, "]");
  return g_string_free (s, FALSE);
}

#define fail_unless_equals_int_with_message(a, b, text) \
  fail_unless ((a) == (b), "%d messages, expected %d: %s", (int) (a), \
      (int) (b), text)

/* The messages since the last look are exactly `n` percentages. */
static void
expect (GstBus * bus, guint n, const gint * want)
{
  GArray *a = posted (bus);
  gchar *got = describe (a);
  guint i;

  fail_unless_equals_int_with_message (a->len, n, got);
  for (i = 0; i < n; i++)
    fail_unless (g_array_index (a, gint, i) == want[i],
        "message %u is %d%%, expected %d%% (posted: %s)", i,
        g_array_index (a, gint, i), want[i], got);
  g_free (got);
  g_array_unref (a);
}

static void
expect_none (GstBus * bus)
{
  expect (bus, 0, NULL);
}

/* ---- the element ---- */

typedef struct
{
  TbqLink *link;
  GstBus *bus;
  guint pushed;
} Buffering;

/* `link`, a tbqueue with use-buffering, started behind the gate, with its
 * first buffer (of `first_size` bytes) inside the gate and the messages
 * so far taken. */
static Buffering
buffering_start (TbqLink * link, gsize first_size)
{
  Buffering b = { link, NULL, 0 };

  memset (&gate, 0, sizeof gate);
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  b.bus = gst_bus_new ();
  gst_element_set_bus (b.link->element, b.bus);
  gst_pad_set_chain_function (b.link->sinkpad, gate_chain);
  tbq_link_start (b.link);
  /* Starting, empty: buffering, 0 %. */
  {
    const gint zero[] = { 0 };
    expect (b.bus, 1, zero);
  }
  fail_unless_equals_int (tbq_link_push (b.link, tbq_buffer_new (first_size,
              0, 0)), GST_FLOW_OK);
  gate_wait_entered (1);
  /* That buffer may have been counted in before the src task took it. */
  g_array_unref (posted (b.bus));
  return b;
}

/* With max-size-buffers `max` (the other limits off) and the watermarks. */
static Buffering
buffering_new (guint max, gdouble low, gdouble high)
{
  return buffering_start (tbq_link_new ("tbqueue", "use-buffering", TRUE,
          "max-size-buffers", max, "max-size-bytes", 0, "max-size-time",
          (guint64) 0, "low-watermark", low, "high-watermark", high, NULL),
      8);
}

static void
push (Buffering * b, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    fail_unless_equals_int (tbq_link_push (b->link, tbq_buffer_new (8, 1,
                GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
  b->pushed += n;
}

static void
buffering_free (Buffering * b)
{
  gate_open ();
  tbq_link_set_state (b->link, GST_STATE_NULL);
  gst_element_set_bus (b->link->element, NULL);
  gst_object_unref (b->bus);
  tbq_link_free (b->link);
  g_mutex_clear (&gate.lock);
  g_cond_clear (&gate.cond);
}

/* ---- tests ---- */

/* Up to the high watermark (50 buffers of 100) a message per buffer; then
 * none while the level goes up and down above the low watermark (10
 * buffers), also right at either watermark; below the low one buffering
 * starts again, with one message. */
GST_START_TEST (test_messages_only_between_the_watermarks)
{
  Buffering b = buffering_new (100, 0.10, 0.50);
  gint want[50];
  guint i;

  for (i = 0; i < 50; i++)
    want[i] = 2 * (gint) (i + 1);
  push (&b, 50);
  expect (b.bus, 50, want);

  /* Around the high watermark: 49, 50, 49, 50...  Not buffering. */
  for (i = 0; i < 5; i++) {
    gate_take (1);
    push (&b, 1);
  }
  expect_none (b.bus);
  /* Down to the low watermark, and around it, not below. */
  gate_take (40);
  for (i = 0; i < 5; i++) {
    push (&b, 1);
    gate_take (1);
  }
  expect_none (b.bus);
  fail_unless_equals_int (tbq_get_uint (b.link->element,
          "current-level-buffers"), 10);

  /* Below it: buffering, 9 of 50. */
  gate_take (1);
  {
    const gint start[] = { 18 };
    expect (b.bus, 1, start);
  }
  /* While buffering every change is reported, up to 100 %. */
  push (&b, 41);
  for (i = 0; i < 41; i++)
    want[i] = 2 * (gint) (10 + i);
  expect (b.bus, 41, want);
  buffering_free (&b);
}

GST_END_TEST;

/* Shrinking a limit while buffering takes the level past the high
 * watermark at once (100 %); growing it again does not restart buffering
 * above the low watermark; and buffering that starts again ends when the
 * level reaches the high watermark of the new limit. */
GST_START_TEST (test_limits_changed_while_buffering_apply_at_once)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  GArray *a;

  push (&b, 20);
  a = posted (b.bus);
  fail_unless (a->len > 0 && g_array_index (a, gint, a->len - 1) == 20);
  g_array_unref (a);

  g_object_set (b.link->element, "max-size-buffers", 10, NULL);
  {
    const gint full[] = { 100 };
    expect (b.bus, 1, full);
  }
  g_object_set (b.link->element, "max-size-buffers", 1000, NULL);
  expect_none (b.bus);

  /* 20 of 1000, then 9 of 1000: below 1 %, buffering at 0 %. */
  gate_take (19);
  {
    const gint zero[] = { 0 };
    expect (b.bus, 1, zero);
  }
  /* 1 of 2 is 50 %; one more, 100 %: the pipeline resumes. */
  g_object_set (b.link->element, "max-size-buffers", 2, NULL);
  {
    const gint half[] = { 50 };
    expect (b.bus, 1, half);
  }
  push (&b, 1);
  {
    const gint full[] = { 100 };
    expect (b.bus, 1, full);
  }
  buffering_free (&b);
}

GST_END_TEST;

/* While buffering (an application that waits for 100 % keeps downstream
 * paused), upstream's ALLOCATION query behind data (here a buffer inside
 * the push and five queued) is refused at once, as queue2 refuses it: no
 * 100 % with nearly nothing buffered, no wait. */
GST_START_TEST (test_an_allocation_query_behind_data_while_buffering_is_refused)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  GstQuery *query;

  push (&b, 5);
  g_array_unref (posted (b.bus));
  query = gst_query_new_allocation (NULL, FALSE);
  fail_if (gst_pad_peer_query (b.link->srcpad, query));
  gst_query_unref (query);
  expect_none (b.bus);
  fail_unless_equals_int (b.link->queries_seen, 0);
  buffering_free (&b);
}

GST_END_TEST;

/* Any other serialized query behind data that downstream does not take (a
 * paused sink holding its preroll buffer) keeps upstream from sending
 * more: the queue is 100 %, so that an application that waits for 100 %
 * before it plays lets downstream go on, and the query is answered.
 * Waiting for anything else would wait forever. */
GST_START_TEST (test_a_serialized_query_while_buffering_never_deadlocks)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  GstQuery *query;
  TbqQueryThread *t;
  GstMessage *m;
  gint percent = -1;

  push (&b, 5);
  g_array_unref (posted (b.bus));
  query = gst_query_new_custom (TBQ_QUERY_SERIALIZED,
      gst_structure_new_empty ("tbq-test"));
  t = tbq_query_async (b.link, query);
  /* The application: it plays at 100 %. */
  while (percent < 100) {
    m = tbq_bus_wait (b.bus, GST_MESSAGE_BUFFERING);
    fail_unless (m != NULL, "no 100 %% message while the query waits");
    gst_message_parse_buffering (m, &percent);
    gst_message_unref (m);
  }
  gate_open ();
  fail_unless (tbq_query_join (t), "the query was not answered");
  fail_unless_equals_int (b.link->queries_seen, 1);
  gst_query_unref (query);
  buffering_free (&b);
}

GST_END_TEST;

/* A serialized query behind no data (downstream took the last buffer and
 * the push returned) is queued and answered while buffering, and posts
 * nothing: the level is still empty. */
GST_START_TEST (test_a_serialized_query_behind_no_data_posts_no_100_percent)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  GstQuery *query;

  /* The buffer inside the gate goes; an event after it shows that its
   * push returned. */
  gate_open ();
  fail_unless (tbq_link_push_event (b.link,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
              gst_structure_new_empty ("tbq-after"))));
  tbq_link_wait_event (b.link, GST_EVENT_CUSTOM_DOWNSTREAM);
  g_array_unref (posted (b.bus));
  query = gst_query_new_custom (TBQ_QUERY_SERIALIZED,
      gst_structure_new_empty ("tbq-test"));
  fail_unless (gst_pad_peer_query (b.link->srcpad, query));
  gst_query_unref (query);
  fail_unless_equals_int (b.link->queries_seen, 1);
  expect_none (b.bus);
  buffering_free (&b);
}

GST_END_TEST;

/* Once buffering ended, a serialized query behind data that downstream
 * does not take waits in its place.  The queue is full while it waits
 * (upstream can send nothing more), so buffering does not start behind
 * it, however low the level goes: an application that paused for
 * buffering then would wait for ever.  Once downstream goes on, the
 * query is answered. */
GST_START_TEST (test_a_serialized_query_after_buffering_waits_and_never_deadlocks)
{
  Buffering b = buffering_new (10, 0.5, 0.99);
  GstQuery *query;
  TbqQueryThread *t;

  push (&b, 10);
  {
    GArray *a = posted (b.bus);

    fail_unless (a->len > 0 && g_array_index (a, gint, a->len - 1) == 100);
    g_array_unref (a);
  }
  /* 8 of 10: above the low watermark, not buffering. */
  gate_take (2);
  expect_none (b.bus);
  query = gst_query_new_custom (TBQ_QUERY_SERIALIZED,
      gst_structure_new_empty ("tbq-test"));
  t = tbq_query_async (b.link, query);
  /* Waiting: the BUFFERING query says 100 %. */
  for (;;) {
    GstQuery *q = gst_query_new_buffering (GST_FORMAT_BYTES);
    gint percent = 0;

    fail_unless (gst_element_query (b.link->element, q));
    gst_query_parse_buffering_percent (q, NULL, &percent);
    gst_query_unref (q);
    if (percent == 100)
      break;
    g_usleep (1000);
  }
  /* 2 of 10, below the low watermark: nothing, the query is behind. */
  gate_take (6);
  expect_none (b.bus);
  fail_unless_equals_int (b.link->queries_seen, 0);
  gate_open ();
  fail_unless (tbq_query_join (t), "the query was not answered");
  fail_unless_equals_int (b.link->queries_seen, 1);
  gst_query_unref (query);
  buffering_free (&b);
}

GST_END_TEST;

/* ---- a player, against queue2 ---- */

/* A player on a network source: it pauses (here: holds downstream, at
 * the sink's pad) when a BUFFERING message says less than 100 % and it
 * is not buffering yet, and plays at 100 %.  Its decisions are taken in
 * the thread that posts (a sync handler), so that a drained queue's
 * message holds the buffer the src task pushes next: every step below is
 * a condition, not a schedule. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean buffering;           /* paused for buffering */
  guint cycles;                 /* pause/play cycles: 100 % while buffering */
  guint passed;                 /* buffers that went through to the sink */
  guint held;                   /* threads held at the sink's pad */
} Player;

static GstBusSyncReply
player_message (GstBus * bus, GstMessage * m, gpointer data)
{
  Player *p = data;
  gint percent;

  if (GST_MESSAGE_TYPE (m) != GST_MESSAGE_BUFFERING)
    return GST_BUS_PASS;
  gst_message_parse_buffering (m, &percent);
  g_mutex_lock (&p->lock);
  if (percent < 100 && !p->buffering) {
    p->buffering = TRUE;
  } else if (percent == 100 && p->buffering) {
    p->buffering = FALSE;
    p->cycles++;
  }
  g_cond_broadcast (&p->cond);
  g_mutex_unlock (&p->lock);
  /* Dropped: ours to unref. */
  gst_message_unref (m);
  return GST_BUS_DROP;
}

static GstPadProbeReturn
player_hold (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Player *p = data;

  g_mutex_lock (&p->lock);
  p->held++;
  g_cond_broadcast (&p->cond);
  while (p->buffering)
    g_cond_wait (&p->cond, &p->lock);
  p->held--;
  p->passed++;
  g_cond_broadcast (&p->cond);
  g_mutex_unlock (&p->lock);
  return GST_PAD_PROBE_OK;
}

/* Wait until `passed` buffers went through and the next one is held, the
 * player paused for buffering. */
static void
player_wait_drained (Player * p, guint passed)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  g_mutex_lock (&p->lock);
  while (!(p->passed == passed && p->held == 1 && p->buffering))
    fail_unless (g_cond_wait_until (&p->cond, &p->lock, end),
        "not drained: %u of %u buffers passed, %u held, buffering %d",
        p->passed, passed, p->held, p->buffering);
  g_mutex_unlock (&p->lock);
}

#define BURSTS 5
#define BURST 10

/* The pause/play cycles of a player behind `factory` (use-buffering, a
 * level of BURST buffers): appsrc sends bursts of BURST buffers, the
 * next one once the player drained the last and paused again, as a
 * throttled HTTP source does, and after three buffers of each burst it
 * renegotiates: upstream's ALLOCATION query, behind data. */
static guint
player_cycles (const gchar * factory)
{
  Player p = { 0 };
  GstElement *pipe, *src, *q, *sink;
  GstPad *pad;
  GstBus *bus;
  GstMessage *m;
  GstCaps *caps;
  guint i, k, pushed = 0;
  GstFlowReturn ret;

  g_mutex_init (&p.lock);
  g_cond_init (&p.cond);
  /* A player starts paused, waiting for its first 100 %. */
  p.buffering = TRUE;
  pipe = gst_pipeline_new (NULL);
  src = gst_element_factory_make ("appsrc", NULL);
  q = gst_element_factory_make (factory, NULL);
  sink = gst_element_factory_make ("fakesink", NULL);
  fail_unless (src != NULL && q != NULL && sink != NULL);
  caps = gst_caps_new_empty_simple ("application/x-tbq-test");
  g_object_set (src, "format", GST_FORMAT_TIME, "caps", caps, NULL);
  gst_caps_unref (caps);
  g_object_set (q, "use-buffering", TRUE, "use-rate-estimate", FALSE,
      "max-size-buffers", BURST, "max-size-bytes", 0, "max-size-time",
      (guint64) 0, NULL);
  g_object_set (sink, "sync", FALSE, NULL);
  gst_bin_add_many (GST_BIN (pipe), src, q, sink, NULL);
  fail_unless (gst_element_link_many (src, q, sink, NULL));
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, player_hold, &p, NULL);
  gst_object_unref (pad);
  bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, player_message, &p, NULL);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE);

  /* The first buffer goes into the sink's pad and is held there. */
  pad = gst_element_get_static_pad (src, "src");
  for (k = 0; k <= BURSTS * BURST; k++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);

    GST_BUFFER_PTS (buf) = k * 10 * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = 10 * GST_MSECOND;
    g_signal_emit_by_name (src, "push-buffer", buf, &ret);
    gst_buffer_unref (buf);
    fail_unless_equals_int (ret, GST_FLOW_OK);
    pushed++;
    i = (k + BURST - 1) % BURST;
    if (i == 3)
      gst_pad_mark_reconfigure (pad);
    if (i == BURST - 1)
      player_wait_drained (&p, pushed - 1);
  }
  gst_object_unref (pad);
  g_signal_emit_by_name (src, "end-of-stream", &ret);
  m = gst_bus_timed_pop_filtered (bus, TBQ_WAIT_SECONDS * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS,
      "%s: no EOS", factory);
  gst_message_unref (m);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_mutex_clear (&p.lock);
  g_cond_clear (&p.cond);
  return p.cycles;
}

/* A player behind tbqueue pauses and plays no more often than behind
 * queue2 on the same input: upstream's ALLOCATION query in a burst does
 * not make the queue 100 % with nearly nothing buffered. */
GST_START_TEST (test_a_player_cycles_no_more_than_behind_queue2)
{
  guint q2 = player_cycles ("queue2"), tbq = player_cycles ("tbqueue");

  g_printerr ("pause/play cycles: queue2 %u, tbqueue %u\n", q2, tbq);
  fail_unless (tbq > 0);
  fail_unless (tbq <= q2, "tbqueue: %u pause/play cycles, queue2: %u", tbq,
      q2);
}

GST_END_TEST;

/* Limits near the types' ends: the percentages are exact, with no
 * overflow (queue2 overflowed with large limits).  The time level is 2^62
 * ns of a max-size-time of 2^64 - 1: 25 % of the limits, 25 % with a high
 * watermark of 1.0. */
GST_START_TEST (test_percentages_with_very_large_limits)
{
  Buffering b = buffering_new (0, 0.01, 1.0);
  GstBuffer *buffer;
  GstQuery *query;
  gint percent;
  gboolean busy;

  g_object_set (b.link->element, "max-size-bytes", G_MAXUINT,
      "max-size-time", G_MAXUINT64, "use-rate-estimate", FALSE, NULL);
  g_array_unref (posted (b.bus));
  buffer = tbq_buffer_new (8, 2, (GstClockTime) 1 << 62);
  fail_unless_equals_int (tbq_link_push (b.link, buffer), GST_FLOW_OK);
  {
    const gint quarter[] = { 25 };
    expect (b.bus, 1, quarter);
  }
  query = gst_query_new_buffering (GST_FORMAT_TIME);
  fail_unless (gst_pad_query (b.link->esrc, query));
  gst_query_parse_buffering_percent (query, &busy, &percent);
  fail_unless_equals_int (percent, 25);
  fail_unless (busy);
  gst_query_unref (query);
  buffering_free (&b);
}

GST_END_TEST;

/* The BUFFERING query: answered with the percentage, mode stream and the
 * bytes held (in and out since the start); without use-buffering it goes
 * upstream, as on queue (our upstream pad does not answer it). */
GST_START_TEST (test_the_buffering_query)
{
  Buffering b = buffering_new (10, 0.01, 0.99);
  GstBufferingMode mode;
  GstQuery *query;
  GstFormat format;
  gint percent, avg_in, avg_out;
  gint64 left, start, stop, total;
  gboolean busy;

  push (&b, 4);
  query = gst_query_new_buffering (GST_FORMAT_BYTES);
  fail_unless (gst_pad_query (b.link->esrc, query));
  gst_query_parse_buffering_percent (query, &busy, &percent);
  fail_unless (busy);
  /* 4 of 10 over 0.99. */
  fail_unless_equals_int (percent, 40);
  gst_query_parse_buffering_stats (query, &mode, &avg_in, &avg_out, &left);
  fail_unless_equals_int (mode, GST_BUFFERING_STREAM);
  gst_query_parse_buffering_range (query, &format, &start, &stop, &total);
  fail_unless_equals_int (format, GST_FORMAT_BYTES);
  /* Five buffers of 8 bytes in, the first one out. */
  fail_unless_equals_int64 (start, 8);
  fail_unless_equals_int64 (stop, 40);
  fail_unless_equals_int (gst_query_get_n_buffering_ranges (query), 1);
  gst_query_unref (query);

  /* The element answers it too. */
  query = gst_query_new_buffering (GST_FORMAT_PERCENT);
  fail_unless (gst_element_query (b.link->element, query));
  gst_query_unref (query);

  g_object_set (b.link->element, "use-buffering", FALSE, NULL);
  query = gst_query_new_buffering (GST_FORMAT_BYTES);
  fail_if (gst_pad_query (b.link->esrc, query));
  gst_query_unref (query);
  buffering_free (&b);
}

GST_END_TEST;

/* EOS fills the queue: 100 %, whatever is queued. */
GST_START_TEST (test_eos_is_100_percent)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  const gint full[] = { 100 };

  push (&b, 3);
  g_array_unref (posted (b.bus));
  fail_unless (tbq_link_push_event (b.link, gst_event_new_eos ()));
  expect (b.bus, 1, full);
  buffering_free (&b);
}

GST_END_TEST;

/* Turning use-buffering off while buffering says 100 %: an application
 * waiting for it plays.  Nothing more is posted after. */
GST_START_TEST (test_use_buffering_off_while_buffering_posts_100_percent)
{
  Buffering b = buffering_new (100, 0.01, 0.99);
  const gint full[] = { 100 };

  push (&b, 3);
  g_array_unref (posted (b.bus));
  g_object_set (b.link->element, "use-buffering", FALSE, NULL);
  expect (b.bus, 1, full);
  push (&b, 3);
  gate_take (2);
  expect_none (b.bus);
  buffering_free (&b);
}

GST_END_TEST;

/* Frames in extents and a backlog that spills: the level is the whole
 * backlog's, memory and file together (max-size-bytes bounds both, as on
 * queue), and every frame comes back.  (Sink blocks of 16 KiB: while
 * spilling, a sink pool of 4 MiB copies frames of up to an eighth of it
 * less four blocks and 128 KiB, 320 KiB.) */
GST_START_TEST (test_the_level_counts_frames_and_the_spilled_backlog)
{
  const gsize frame = 256 * 1024;
  gchar *tmpl = g_build_filename (g_get_tmp_dir (), "tbq-buffering-XXXXXX",
      NULL);
  Buffering b = buffering_start (tbq_link_new ("tbqueue", "use-buffering",
          TRUE, "max-size-buffers", 0, "max-size-bytes", 12 * 1024 * 1024,
          "max-size-time", (guint64) 0, "transfer", 1, "temp-template", tmpl,
          "sink-max-bytes", (guint64) 4 * 1024 * 1024, "sink-block-size",
          16384, NULL), frame);
  GArray *a;
  guint i;
  /* 24 frames, 6 MiB: half of max-size-bytes, more than sink-max-bytes. */
  for (i = 0; i < 24; i++)
    fail_unless_equals_int (tbq_link_push (b.link, tbq_buffer_new (frame,
                (guint8) (i + 1), GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
  a = posted (b.bus);
  fail_unless (a->len > 0);
  /* 6 of 12 MiB over 0.99. */
  fail_unless_equals_int (g_array_index (a, gint, a->len - 1), 50);
  g_array_unref (a);
  /* Part of it is in the file (the spill thread writes it meanwhile). */
  tbq_wait_stat (b.link->element, "spill-bytes-written", 1);
  fail_unless_equals_int (tbq_get_uint (b.link->element,
          "current-level-bytes"), 24 * frame);
  gate_open ();
  gate_wait_entered (25);
  buffering_free (&b);
  g_free (tmpl);
}

GST_END_TEST;

/* Buffers dropped or leaked so far, at either end. */
static guint64
dropped (GstElement * element)
{
  return tbq_stat (element, "dropped-upstream")
      + tbq_stat (element, "dropped-downstream");
}

/* The sink pool binds first (sink-max-bytes is 64 KiB; max-size-time, 5 s,
 * is far off; the other limits are off): with `leaky` the element drops
 * or leaks once the sink pool is full, and buffering is 100 % when it
 * does, so that an application that waits for 100 % plays.  Before that
 * the percentage grows with the sink pool's fill.  Every buffer is copied
 * into the sink pool; the rate estimate is off, so that the time level,
 * under a fifth of max-size-time, is no help. */
static void
check_full_at_the_sink_pool_limit (gint leaky)
{
  const GstClockTime step = 4500 * GST_USECOND;
  Buffering b = buffering_start (tbq_link_new ("tbqueue", "use-buffering",
          TRUE, "leaky", leaky, "transfer", 1, "sink-min-bytes",
          (guint64) 32768, "sink-max-bytes", (guint64) 65536,
          "sink-block-size", 16384, "max-size-time", 5 * GST_SECOND,
          "max-size-bytes", 0, "max-size-buffers", 0, "use-rate-estimate",
          FALSE, NULL), 400);
  GstQuery *query;
  GArray *a;
  gboolean busy;
  gint percent;
  guint i;

  for (i = 1; dropped (b.link->element) == 0; i++) {
    fail_unless (i < 10000, "nothing dropped after %u buffers", i);
    fail_unless_equals_int (tbq_link_push (b.link, tbq_buffer_new (400,
                (guint8) i, i * step)), GST_FLOW_OK);
  }
  fail_unless (tbq_get_uint64 (b.link->element, "current-level-time")
      < GST_SECOND);
  a = posted (b.bus);
  fail_unless (a->len > 1);
  for (i = 1; i < a->len; i++)
    fail_unless (g_array_index (a, gint, i) > g_array_index (a, gint, i - 1));
  fail_unless_equals_int (g_array_index (a, gint, a->len - 1), 100);
  g_array_unref (a);
  /* Done buffering: the query says so too. */
  query = gst_query_new_buffering (GST_FORMAT_TIME);
  fail_unless (gst_pad_query (b.link->esrc, query));
  gst_query_parse_buffering_percent (query, &busy, &percent);
  fail_if (busy);
  fail_unless_equals_int (percent, 100);
  gst_query_unref (query);
  buffering_free (&b);
}

GST_START_TEST (test_leaky_upstream_is_full_at_the_sink_pool_limit)
{
  check_full_at_the_sink_pool_limit (1);
}

GST_END_TEST;

GST_START_TEST (test_leaky_downstream_is_full_at_the_sink_pool_limit)
{
  check_full_at_the_sink_pool_limit (2);
}

GST_END_TEST;

/* The properties: queue2's names, defaults, and the percent aliases of the
 * watermarks. */
GST_START_TEST (test_properties_as_queue2)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  gdouble low, high;
  gint low_percent, high_percent;
  gboolean use, rate, tags, query;
  gint64 avg_in;
  guint64 bitrate;

  g_object_get (e, "use-buffering", &use, "low-watermark", &low,
      "high-watermark", &high, "low-percent", &low_percent, "high-percent",
      &high_percent, "use-rate-estimate", &rate, "use-tags-bitrate", &tags,
      "use-bitrate-query", &query, "avg-in-rate", &avg_in, "bitrate",
      &bitrate, NULL);
  fail_if (use);
  fail_unless (low == 0.01 && high == 0.99);
  fail_unless_equals_int (low_percent, 1);
  fail_unless_equals_int (high_percent, 99);
  fail_unless (rate && !tags && query);
  fail_unless_equals_int64 (avg_in, 0);
  fail_unless_equals_uint64 (bitrate, 0);
  g_object_set (e, "low-percent", 5, "high-percent", 60, NULL);
  g_object_get (e, "low-watermark", &low, "high-watermark", &high, NULL);
  fail_unless (low == 0.05 && high == 0.60);
  g_object_set (e, "high-watermark", 0.005, NULL);
  g_object_get (e, "high-percent", &high_percent, NULL);
  fail_unless_equals_int (high_percent, 1);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
tbqueue_buffering_suite (void)
{
  Suite *s = suite_create ("tbqueue-buffering");
  TCase *tc = tbq_tcase (s, "buffering");

  tcase_add_test (tc, test_messages_only_between_the_watermarks);
  tcase_add_test (tc, test_limits_changed_while_buffering_apply_at_once);
  tcase_add_test (tc,
      test_an_allocation_query_behind_data_while_buffering_is_refused);
  tcase_add_test (tc, test_a_serialized_query_while_buffering_never_deadlocks);
  tcase_add_test (tc,
      test_a_serialized_query_behind_no_data_posts_no_100_percent);
  tcase_add_test (tc,
      test_a_serialized_query_after_buffering_waits_and_never_deadlocks);
  tcase_add_test (tc, test_a_player_cycles_no_more_than_behind_queue2);
  tcase_add_test (tc, test_percentages_with_very_large_limits);
  tcase_add_test (tc, test_the_buffering_query);
  tcase_add_test (tc, test_eos_is_100_percent);
  tcase_add_test (tc, test_use_buffering_off_while_buffering_posts_100_percent);
  tcase_add_test (tc, test_the_level_counts_frames_and_the_spilled_backlog);
  tcase_add_test (tc, test_leaky_upstream_is_full_at_the_sink_pool_limit);
  tcase_add_test (tc, test_leaky_downstream_is_full_at_the_sink_pool_limit);
  tcase_add_test (tc, test_properties_as_queue2);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_buffering);

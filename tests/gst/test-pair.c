/* tbqsplit and tbqjoin together (the plugin's elements): what comes out
 * of the pair is the stream that went in, whatever the branches do.
 * (The split alone: test-split.c; the join driven by the test's own
 * split: test-join.c.)
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rig: a pad of ours into a tbqsplit; each branch a gate (a test
 * element whose chain waits while it is closed), behind a queue on the
 * branches that must not be synchronous; a tbqjoin; its src pad into a
 * pad of ours that records the offsets of the buffers and where each
 * serialized query came among them.
 *
 * Every wait has a deadline (a hang fails the test, never passes it); no
 * test waits for a time to let something happen.
 */
#include "tbq-check.h"

#define MAX_BRANCHES 4

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Everything the rig's threads share: one lock, one condition. */
static pthread_mutex_t lock;
static pthread_cond_t cond;

/* ---- the gate ---- */

typedef struct
{
  GstElement parent;
  GstPad *sinkpad, *srcpad;
  gboolean closed;              /* lock: the chain waits */
  gboolean hold_events;         /* lock: serialized events wait too */
  gint64 holding;               /* lock: the offset it holds, or -1 */
} TestGate;

typedef struct
{
  GstElementClass parent_class;
} TestGateClass;

static GType test_gate_get_type (void);
G_DEFINE_TYPE (TestGate, test_gate, GST_TYPE_ELEMENT);
#define TEST_GATE(o) ((TestGate *) (o))

static GstFlowReturn
gate_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  TestGate *g = TEST_GATE (parent);

  pthread_mutex_lock (&lock);
  g->holding = (gint64) GST_BUFFER_OFFSET (buffer);
  pthread_cond_broadcast (&cond);
  while (g->closed)
    pthread_cond_wait (&cond, &lock);
  g->holding = -1;
  pthread_mutex_unlock (&lock);
  return gst_pad_push (g->srcpad, buffer);
}

static gboolean
gate_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TestGate *g = TEST_GATE (parent);

  if (GST_EVENT_IS_SERIALIZED (event)
      && GST_EVENT_TYPE (event) != GST_EVENT_FLUSH_STOP) {
    pthread_mutex_lock (&lock);
    while (g->closed && g->hold_events)
      pthread_cond_wait (&cond, &lock);
    pthread_mutex_unlock (&lock);
  }
  return gst_pad_event_default (pad, parent, event);
}

static void
gate_set (TestGate * g, gboolean closed)
{
  pthread_mutex_lock (&lock);
  g->closed = closed;
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
}

static void
test_gate_class_init (TestGateClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class, "Test gate",
      "Filter", "Holds buffers while closed", "The tbqueue authors");
}

static void
test_gate_init (TestGate * g)
{
  g->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (g->sinkpad, gate_chain);
  gst_pad_set_event_function (g->sinkpad, gate_event);
  GST_PAD_SET_PROXY_CAPS (g->sinkpad);
  gst_element_add_pad (GST_ELEMENT (g), g->sinkpad);
  g->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  GST_PAD_SET_PROXY_CAPS (g->srcpad);
  gst_element_add_pad (GST_ELEMENT (g), g->srcpad);
  g->holding = -1;
}

/* ---- the rig ---- */

typedef struct
{
  GstElement *pipeline, *split, *join;
  TestGate *gates[MAX_BRANCHES];
  guint n;
  GstPad *src, *sink;           /* ours */
  /* lock: what came out of the join. */
  GArray *offsets;              /* guint64 */
  GArray *disconts;             /* gboolean: each buffer's DISCONT flag */
  GArray *query_at;             /* guint: buffers before each query */
  GPtrArray *events;            /* the custom events (owned) */
} Rig;

static Rig rig;

static GstFlowReturn
rig_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  guint64 off = GST_BUFFER_OFFSET (buffer);
  gboolean discont = GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DISCONT);

  pthread_mutex_lock (&lock);
  g_array_append_val (rig.offsets, off);
  g_array_append_val (rig.disconts, discont);
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
  gst_buffer_unref (buffer);
  return GST_FLOW_OK;
}

static gboolean
rig_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM
      || GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    pthread_mutex_lock (&lock);
    g_ptr_array_add (rig.events, gst_event_ref (event));
    pthread_cond_broadcast (&cond);
    pthread_mutex_unlock (&lock);
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
rig_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_DRAIN) {
    pthread_mutex_lock (&lock);
    g_array_append_val (rig.query_at, rig.offsets->len);
    pthread_cond_broadcast (&cond);
    pthread_mutex_unlock (&lock);
    return TRUE;
  }
  return gst_pad_query_default (pad, parent, query);
}

/* Link a new branch of the split through `element` (its sink and src
 * pads) to a new sink pad of the join. */
static void
rig_link_branch (GstElement * first, GstElement * last)
{
  GstPad *split_pad = gst_element_request_pad_simple (rig.split, "src_%u");
  GstPad *join_pad = gst_element_request_pad_simple (rig.join, "sink_%u");
  GstPad *in = gst_element_get_static_pad (first, "sink");
  GstPad *out = gst_element_get_static_pad (last, "src");

  fail_unless_equals_int (gst_pad_link (split_pad, in), GST_PAD_LINK_OK);
  fail_unless_equals_int (gst_pad_link (out, join_pad), GST_PAD_LINK_OK);
  gst_object_unref (split_pad);
  gst_object_unref (join_pad);
  gst_object_unref (in);
  gst_object_unref (out);
}

/* A stream starts (the same STREAM_START each time, as a source that
 * starts over sends it). */
static void
rig_start_stream (void)
{
  GstSegment seg;
  GstCaps *caps;

  fail_unless (gst_pad_push_event (rig.src,
          gst_event_new_stream_start ("parallel")));
  caps = gst_caps_new_empty_simple ("test/parallel");
  fail_unless (gst_pad_push_event (rig.src, gst_event_new_caps (caps)));
  gst_caps_unref (caps);
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (rig.src, gst_event_new_segment (&seg)));
}

/* `n` branches, a gate on each; `queued` (a bit per branch): a queue
 * before the gate.  PLAYING, the stream started. */
static void
rig_start (guint n, guint queued)
{
  GstPad *pad;
  guint i;

  tbq_init_lock (&lock, &cond);
  memset (&rig, 0, sizeof rig);
  rig.offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  rig.disconts = g_array_new (FALSE, FALSE, sizeof (gboolean));
  rig.query_at = g_array_new (FALSE, FALSE, sizeof (guint));
  rig.events = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  rig.pipeline = gst_pipeline_new (NULL);
  rig.split = gst_element_factory_make ("tbqsplit", NULL);
  rig.join = gst_element_factory_make ("tbqjoin", NULL);
  fail_unless (rig.split != NULL && rig.join != NULL);
  gst_bin_add_many (GST_BIN (rig.pipeline), rig.split, rig.join, NULL);
  rig.n = n;
  for (i = 0; i < n; i++) {
    GstElement *gate = g_object_new (test_gate_get_type (), NULL);
    GstElement *first = gate;

    rig.gates[i] = TEST_GATE (gate);
    gst_bin_add (GST_BIN (rig.pipeline), gate);
    if (queued & (1u << i)) {
      first = gst_element_factory_make ("queue", NULL);
      gst_bin_add (GST_BIN (rig.pipeline), first);
      fail_unless (gst_element_link (first, gate));
    }
    rig_link_branch (first, gate);
  }
  rig.src = gst_pad_new ("src", GST_PAD_SRC);
  rig.sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_chain_function (rig.sink, rig_chain);
  gst_pad_set_query_function (rig.sink, rig_query);
  gst_pad_set_event_function (rig.sink, rig_event);
  pad = gst_element_get_static_pad (rig.split, "sink");
  fail_unless_equals_int (gst_pad_link (rig.src, pad), GST_PAD_LINK_OK);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (rig.join, "src");
  fail_unless_equals_int (gst_pad_link (pad, rig.sink), GST_PAD_LINK_OK);
  gst_object_unref (pad);
  gst_pad_set_active (rig.src, TRUE);
  gst_pad_set_active (rig.sink, TRUE);
  fail_if (gst_element_set_state (rig.pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE);
  rig_start_stream ();
}

static void
rig_stop (void)
{
  guint i;

  for (i = 0; i < rig.n; i++)
    gate_set (rig.gates[i], FALSE);
  gst_element_set_state (rig.pipeline, GST_STATE_NULL);
  gst_pad_set_active (rig.src, FALSE);
  gst_pad_set_active (rig.sink, FALSE);
  gst_object_unref (rig.src);
  gst_object_unref (rig.sink);
  gst_object_unref (rig.pipeline);
  g_array_unref (rig.offsets);
  g_array_unref (rig.disconts);
  g_array_unref (rig.query_at);
  g_ptr_array_unref (rig.events);
  pthread_mutex_destroy (&lock);
  pthread_cond_destroy (&cond);
}

static void
rig_push (guint64 offset)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16, NULL);

  gst_buffer_memset (buf, 0, (guint8) offset, 16);
  GST_BUFFER_OFFSET (buf) = offset;
  GST_BUFFER_PTS (buf) = offset * GST_MSECOND;
  fail_unless_equals_int (gst_pad_push (rig.src, buf), GST_FLOW_OK);
}

/* Wait (with a deadline) until `what_` holds, under the lock: woken by
 * the rig's threads, and every 10 ms for what nothing signals (the
 * join's stats). */
#define RIG_WAIT(what_) G_STMT_START {                                  \
  gint64 _end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC; \
  pthread_mutex_lock (&lock);                                           \
  while (!(what_)) {                                                    \
    fail_if (g_get_monotonic_time () > _end, "timed out: %s", #what_);  \
    tbq_timed_wait (&cond, &lock, g_get_monotonic_time () + 10000);     \
  }                                                                     \
  pthread_mutex_unlock (&lock);                                         \
} G_STMT_END

/* A field of the join's stats, guint or guint64 (lock held; released for
 * the read, which takes the join's lock). */
static guint64
join_stat (const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;
  guint u = 0;

  pthread_mutex_unlock (&lock);
  g_object_get (rig.join, "stats", &s, NULL);
  if (gst_structure_get_uint (s, field, &u))
    v = u;
  else
    gst_structure_get_uint64 (s, field, &v);
  gst_structure_free (s);
  pthread_mutex_lock (&lock);
  return v;
}

static gpointer
drain_thread (gpointer data)
{
  GstQuery *query = gst_query_new_drain ();
  gboolean res = gst_pad_peer_query (rig.src, query);

  gst_query_unref (query);
  return GINT_TO_POINTER (res);
}

/* ---- tests ---- */

/* The split asks a serialized query of every branch once each has pushed
 * what it took: an earlier input may still be inside a worker with a
 * thread of its own.  Here branch 1 (a queue, then a closed gate) holds
 * input A, every input before A is out, branch 0 has nothing: the copy
 * the split asks of branch 0 reaches the join first, and must wait there
 * for A. */
GST_START_TEST (test_a_serialized_query_comes_out_after_every_earlier_output)
{
  GThread *thread;
  guint64 a, i;

  rig_start (2, 1u << 1);
  gate_set (rig.gates[0], TRUE);
  gate_set (rig.gates[1], TRUE);
  /* One input at a time, until one is held behind branch 1's queue (a
   * branch held at its gate takes no more: the next goes to the other). */
  for (i = 0;; i++) {
    rig_push (i);
    RIG_WAIT (rig.gates[0]->holding == (gint64) i
        || rig.gates[1]->holding == (gint64) i);
    if (rig.gates[1]->holding == (gint64) i)
      break;
    fail_unless (i == 0, "branch 0 was held and took another input");
  }
  a = i;
  /* What branch 0 holds (an input before A) goes out. */
  gate_set (rig.gates[0], FALSE);
  RIG_WAIT (rig.offsets->len == a);
  thread = g_thread_new ("drain", drain_thread, NULL);
  /* The query came out (too early), or the join holds it. */
  RIG_WAIT (rig.query_at->len > 0 || join_stat ("queries-held") > 0);
  gate_set (rig.gates[1], FALSE);
  fail_unless (g_thread_join (thread) != NULL, "the drain query failed");
  pthread_mutex_lock (&lock);
  fail_unless_equals_int (rig.offsets->len, a + 1);
  for (i = 0; i < rig.query_at->len; i++)
    fail_unless (g_array_index (rig.query_at, guint, i) == a + 1,
        "copy %u of the query came out after %u buffers, before input %"
        G_GUINT64_FORMAT, (guint) i, g_array_index (rig.query_at, guint, i),
        a);
  fail_unless_equals_int (rig.query_at->len, 2);
  pthread_mutex_unlock (&lock);
  rig_stop ();
}

GST_END_TEST;

/* After a flush the split numbers again from 0 of a new epoch, and the
 * join's order follows when it looks at the pair: a branch's copy of a
 * serialized event that reaches the join before then is still known for
 * a copy of the split's (which goes out at its place), never sent as an
 * event of the worker's own.  (Rounds: whether the copy comes before the
 * order looked again is the threads'.) */
GST_START_TEST (test_an_event_after_a_flush_comes_out_once)
{
  guint rounds = tbq_scaled (1000, 200), round, i;

  rig_start (2, 0);
  for (round = 0; round < rounds; round++) {
    GstSegment seg;
    guint events;

    fail_unless (gst_pad_push_event (rig.src, gst_event_new_flush_start ()));
    fail_unless (gst_pad_push_event (rig.src,
            gst_event_new_flush_stop (TRUE)));
    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_pad_push_event (rig.src, gst_event_new_segment (&seg)));
    fail_unless (gst_pad_push_event (rig.src,
            gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                gst_structure_new ("tp-event", "round", G_TYPE_UINT, round,
                    NULL))));
    for (i = 0; i < 4; i++)
      rig_push (round * 4 + i);
    RIG_WAIT (rig.offsets->len == (round + 1) * 4);
    pthread_mutex_lock (&lock);
    events = rig.events->len;
    pthread_mutex_unlock (&lock);
    fail_unless_equals_int (events, round + 1);
  }
  rig_stop ();
}

GST_END_TEST;

/* A new stream after EOS (STREAM_START again, the same as before, as a
 * source that starts over sends it): its serialized events and its data
 * come out, after a STREAM_START (the join's src pad is at EOS until
 * one). */
GST_START_TEST (test_a_new_stream_after_eos_comes_out)
{
  guint i;

  rig_start (2, 0);
  for (i = 0; i < 4; i++)
    rig_push (i);
  fail_unless (gst_pad_push_event (rig.src, gst_event_new_eos ()));
  RIG_WAIT (rig.events->len == 1);
  rig_start_stream ();
  fail_unless (gst_pad_push_event (rig.src,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
              gst_structure_new_empty ("tp-event"))));
  for (i = 4; i < 8; i++)
    rig_push (i);
  RIG_WAIT (rig.offsets->len == 8);
  RIG_WAIT (rig.events->len == 2);
  pthread_mutex_lock (&lock);
  fail_unless_equals_int (GST_EVENT_TYPE (g_ptr_array_index (rig.events, 1)),
      GST_EVENT_CUSTOM_DOWNSTREAM);
  pthread_mutex_unlock (&lock);
  rig_stop ();
}

GST_END_TEST;

/* The buffers the split's branches pushed: all of them, and the `i`-th
 * branch's (lock held; released for the read). */
static guint64
split_pushed (guint i, guint64 * of_branch)
{
  GstStructure *s = NULL;
  const GValue *list;
  guint64 all = 0, v;
  guint k;

  pthread_mutex_unlock (&lock);
  g_object_get (rig.split, "branch-stats", &s, NULL);
  list = gst_structure_get_value (s, "branches");
  for (k = 0; k < gst_value_list_get_size (list); k++) {
    v = 0;
    gst_structure_get_uint64 (gst_value_get_structure
        (gst_value_list_get_value (list, k)), "buffers", &v);
    all += v;
    if (k == i)
      *of_branch = v;
  }
  gst_structure_free (s);
  pthread_mutex_lock (&lock);
  return all;
}

/* Whether every queue in a branch has pushed the stream's EOS and
 * stopped its task (lock held).  Before then a new stream's events and
 * buffers could go into a queue still holding the old EOS: queue takes
 * them, then pauses at that EOS and refuses everything after, which is
 * queue's way, not the pair's. */
static gboolean
rig_queues_at_eos (void)
{
  guint i;

  for (i = 0; i < rig.n; i++) {
    GstPad *peer = gst_pad_get_peer (rig.gates[i]->sinkpad);
    GstElement *before = peer ? gst_pad_get_parent_element (peer) : NULL;
    gboolean done = TRUE;

    if (before != NULL && before != rig.split) {
      GstPad *src = gst_element_get_static_pad (before, "src");

      done = GST_PAD_IS_EOS (src)
          && gst_pad_get_task_state (src) == GST_TASK_PAUSED;
      gst_object_unref (src);
    }
    if (before != NULL)
      gst_object_unref (before);
    if (peer != NULL)
      gst_object_unref (peer);
    if (!done)
      return FALSE;
  }
  return TRUE;
}

/* An EOS after EOS (no new stream between) is refused, as queue refuses
 * it, and nothing more comes out: the split forwards an EOS only when
 * downstream ended its branches, not after the EOS it pushed. */
GST_START_TEST (test_a_second_eos_does_not_come_out)
{
  guint i;

  rig_start (3, 0);
  for (i = 0; i < 6; i++)
    rig_push (i);
  fail_unless (gst_pad_push_event (rig.src, gst_event_new_eos ()));
  RIG_WAIT (rig.events->len == 1);
  RIG_WAIT (rig_queues_at_eos ());
  /* Every branch task has stopped after pushing the EOS (the second
   * EOS meets a split at EOS, not one still pushing the first). */
  for (i = 0; i < rig.n; i++) {
    GstPad *peer = gst_pad_get_peer (rig.gates[i]->sinkpad);

    RIG_WAIT (gst_pad_get_task_state (peer) != GST_TASK_STARTED);
    gst_object_unref (peer);
  }
  fail_if (gst_pad_push_event (rig.src, gst_event_new_eos ()));
  pthread_mutex_lock (&lock);
  fail_unless_equals_int (rig.events->len, 1);
  fail_unless_equals_int (rig.offsets->len, 6);
  pthread_mutex_unlock (&lock);
  rig_stop ();
}

GST_END_TEST;

/* After EOS the split numbers the next stream's items at once; a branch
 * whose worker is slow has not brought the join that stream's
 * STREAM_START yet, its pad still at EOS: the numbers it took are not
 * gaps (its outputs come, after its STREAM_START).  Here branch 1 (a
 * queue, then a gate that holds events too) takes the first input of the
 * new stream; the other branches, held until then, take the next. */
GST_START_TEST (test_a_new_stream_after_eos_loses_nothing)
{
  GThread *thread;
  guint64 before = 0, now = 0;
  guint i, n = 10;

  rig_start (3, 1u << 1);
  /* Room for every input of the new stream in the window. */
  g_object_set (rig.split, "max-in-flight", 2 * n, NULL);
  for (i = 0; i < 6; i++)
    rig_push (i);
  fail_unless (gst_pad_push_event (rig.src, gst_event_new_eos ()));
  RIG_WAIT (rig.events->len == 1);
  /* The join sends EOS once the numbers before it are resolved: branch
   * 1's queue may still hold it. */
  RIG_WAIT (rig_queues_at_eos ());
  pthread_mutex_lock (&lock);
  split_pushed (1, &before);
  for (i = 0; i < rig.n; i++) {
    rig.gates[i]->hold_events = TRUE;
    rig.gates[i]->closed = TRUE;
  }
  pthread_mutex_unlock (&lock);
  rig_start_stream ();
  /* Branches 0 and 2 are held pushing the new stream's events: branch 1
   * takes the first input, into its queue. */
  rig_push (6);
  RIG_WAIT ((split_pushed (1, &now), now == before + 1));
  gate_set (rig.gates[0], FALSE);
  gate_set (rig.gates[2], FALSE);
  for (i = 7; i < 6 + n; i++)
    rig_push (i);
  /* A drain: the join holds its copy until the first input is out, or
   * has made a gap of it. */
  thread = g_thread_new ("drain", drain_thread, NULL);
  RIG_WAIT (join_stat ("gaps") > 0 || join_stat ("queries-held") > 0);
  gate_set (rig.gates[1], FALSE);
  fail_unless (g_thread_join (thread) != NULL, "the drain query failed");
  pthread_mutex_lock (&lock);
  fail_unless_equals_int (join_stat ("gaps"), 0);
  fail_unless_equals_int (join_stat ("late"), 0);
  fail_unless_equals_int (rig.offsets->len, 6 + n);
  pthread_mutex_unlock (&lock);
  rig_stop ();
}

GST_END_TEST;

/* With leaky=downstream the split drops its oldest items, SEGMENTs too
 * (kept as the stream's state, owed to every branch), and marks the next
 * buffer DISCONT.  Whichever branch takes an item, its number and its
 * DISCONT are the queue's order: the join sends every buffer in the
 * order pushed, and the first after a drop with DISCONT. */
GST_START_TEST (test_leaks_keep_the_order_and_mark_the_next_buffer)
{
  guint n = tbq_scaled (20000, 2000), i, j;
  GstQuery *q;

  rig_start (4, 0);
  g_object_set (rig.split, "leaky", 2, "max-size-buffers", 3,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  for (i = 0; i < n; i++) {
    if (i % 2 == 0) {
      GstSegment seg;

      gst_segment_init (&seg, GST_FORMAT_TIME);
      fail_unless (gst_pad_push_event (rig.src,
              gst_event_new_segment (&seg)));
    }
    rig_push (i);
  }
  q = gst_query_new_drain ();
  fail_unless (gst_pad_peer_query (rig.src, q));
  gst_query_unref (q);
  pthread_mutex_lock (&lock);
  for (j = 0; j < rig.offsets->len; j++) {
    guint64 off = g_array_index (rig.offsets, guint64, j);
    guint64 prev = j > 0 ? g_array_index (rig.offsets, guint64, j - 1) : 0;

    fail_unless (j == 0 || off > prev, "buffer %" G_GUINT64_FORMAT
        " came after %" G_GUINT64_FORMAT, off, prev);
    fail_unless (!(off > prev + 1 && j > 0)
        || g_array_index (rig.disconts, gboolean, j),
        "buffer %" G_GUINT64_FORMAT " came after %" G_GUINT64_FORMAT
        " without DISCONT", off, prev);
  }
  pthread_mutex_unlock (&lock);
  rig_stop ();
}

GST_END_TEST;

static Suite *
tbqparallel_suite (void)
{
  Suite *s = suite_create ("tbqsplit-tbqjoin");
  TCase *tc = tbq_tcase (s, "pair");

  tcase_add_test (tc,
      test_a_serialized_query_comes_out_after_every_earlier_output);
  tcase_add_test (tc, test_an_event_after_a_flush_comes_out_once);
  tcase_add_test (tc, test_leaks_keep_the_order_and_mark_the_next_buffer);
  tcase_add_test (tc, test_a_new_stream_after_eos_comes_out);
  tcase_add_test (tc, test_a_new_stream_after_eos_loses_nothing);
  tcase_add_test (tc, test_a_second_eos_does_not_come_out);
  return s;
}

TBQ_CHECK_MAIN (tbqparallel);

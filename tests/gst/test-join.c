/* tbqjoin: the branches of a split joined back in the split's order, and
 * in arrival order as a funnel.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The plugin is compiled into this test (tests/gst/meson.build), so that
 * the test drives the join with a split of its own made with the pair's
 * API (gst/gsttbqpair.h), in one copy with the element's: the
 * thread-local "inside a split push" is the element's own.
 *
 * The test split: one pad of ours per branch, linked to a worker (the
 * test worker of tbq-workers.h, or a bin with a queue and the worker: not
 * synchronous), linked to a
 * request sink pad of the join; one thread per branch doing what tbqsplit
 * does: it takes the next input under the split's lock when the window
 * has room (work-claiming), gives it the next number
 * (gst_tbq_pair_assign), stamps it, pushes the events due on its branch
 * first, then the buffer inside gst_tbq_pair_push_begin/end, and a marker
 * when push_end did not call the join's done hook.  Every input names its
 * index (tbq_input_new()); downstream, the test sink of tbq-workers.h
 * checks every byte and the order.
 *
 * Every wait has a deadline (a hang fails the test, never passes it); no
 * test waits for a time to let something happen.
 */
#include "tbq-workers.h"
#undef GST_CAT_DEFAULT
#include "gsttbqpair.h"

GST_PLUGIN_STATIC_DECLARE (tbqueue);

#define MAX_BRANCHES 8

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* ---- the test split ---- */

typedef struct _Split Split;

/* An event the split hands to its branches before input `at`. */
typedef struct
{
  guint64 at;
  GstEvent *event;
  gboolean done;
} Scheduled;

/* An event due on one branch before its next input: a slot event (with
 * its number) or a sticky one (seq G_MAXUINT64). */
typedef struct
{
  guint64 seq;
  guint64 epoch;                /* the number's */
  GstEvent *event;
} Due;

typedef struct
{
  Split *split;
  guint id;
  GstPad *pad;                  /* ours: the branch's src pad */
  GstElement *worker;           /* what it pushes into */
  TbqTestWorker *w;
  GstPad *joinpad;              /* the join's sink pad it reaches */
  GThread *thread;
  GArray *due;                  /* Due, under the split's lock */
  GstFlowReturn flow;           /* the last push's, its thread's */
  guint quit_after;             /* takes this many inputs, then stops
                                 * (0: no limit) */
  TbqTestWorker *after;            /* takes work once this worker stalled */
  guint taken;
} Branch;

struct _Split
{
  GstTbqPair *pair;
  GstTbqPair *outer;            /* a pair this split is inside, or NULL */
  GstElement *pipeline;
  GstElement *join;
  guint n;
  Branch branches[MAX_BRANCHES];
  TbqTestSink *sink;
  GstBus *bus;

  pthread_mutex_t lock;
  pthread_cond_t cond;
  guint64 base;                 /* the first input's index */
  guint64 next;                 /* the next input to hand out */
  guint64 n_inputs;
  GPtrArray *schedule;          /* Scheduled * */
  guint max_in_flight;
  gboolean stop;
};

/* A push of number `seq` on `b` (a buffer, or an event when `event`),
 * as tbqsplit makes it: inside the pair's push, then a marker when the
 * join did not hear of its end from the pair. */
static GstFlowReturn
branch_push_numbered (Branch * b, guint64 epoch, guint64 seq,
    GstBuffer * buffer, GstEvent * event)
{
  GstTbqPair *pair = b->split->pair;
  GstTbqPairPush saved;
  GstFlowReturn ret;

  gst_tbq_pair_push_begin (pair, b->id, epoch, seq, &saved);
  if (buffer != NULL)
    ret = gst_pad_push (b->pad, buffer);
  else
    ret = gst_pad_push_event (b->pad, event) ? GST_FLOW_OK :
        GST_FLOW_FLUSHING;
  if (!gst_tbq_pair_push_end (pair, b->id, seq, ret, &saved)
      && ret == GST_FLOW_OK)
    gst_pad_push_event (b->pad, gst_tbq_pair_marker_new_in (pair, epoch, b->id,
            seq));
  return ret;
}

/* Push the events due on `b` (taken from it under the split's lock). */
static GstFlowReturn
branch_push_due (Branch * b, GArray * due)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  for (i = 0; i < due->len; i++) {
    Due *d = &g_array_index (due, Due, i);
    GstEvent *event = gst_event_ref (d->event);

    if (ret != GST_FLOW_OK)
      gst_event_unref (event);
    else if (d->seq == G_MAXUINT64)
      ret = gst_pad_push_event (b->pad, event) ? GST_FLOW_OK :
          GST_FLOW_FLUSHING;
    else
      ret = branch_push_numbered (b, d->epoch, d->seq, NULL, event);
    gst_event_unref (d->event);
  }
  g_array_set_size (due, 0);
  return ret;
}

/* Under the split's lock: hand `event` to every branch (a slot event
 * takes a number for all). */
static void
split_locked_schedule_event (Split * s, GstEvent * event)
{
  Due d = { G_MAXUINT64, 0, NULL };
  guint i;

  if (!GST_EVENT_IS_STICKY (event)) {
    d.seq = gst_tbq_pair_assign (s->pair, 0, event, &d.epoch);
    s->max_in_flight = MAX (s->max_in_flight,
        gst_tbq_pair_in_flight (s->pair));
  }
  for (i = 0; i < s->n; i++) {
    d.event = gst_event_ref (event);
    g_array_append_val (s->branches[i].due, d);
  }
}

static gpointer
branch_main (gpointer data)
{
  Branch *b = data;
  Split *s = b->split;
  GArray *due = g_array_new (FALSE, FALSE, sizeof (Due));

  if (b->after != NULL)
    tbq_worker_wait_stalled (b->after);
  for (;;) {
    GstBuffer *buffer;
    guint64 index, seq, epoch;
    GstFlowReturn ret;
    guint i;

    if (!gst_tbq_pair_wait_room (s->pair, gst_tbq_pair_wait_key (s->pair)))
      break;
    TBQ_LOCK (s);
    if (s->stop || (b->quit_after > 0 && b->taken >= b->quit_after)) {
      TBQ_UNLOCK (s);
      break;
    }
    /* One thread hands out numbers at a time: the split's lock. */
    if (!gst_tbq_pair_has_room (s->pair)) {
      TBQ_UNLOCK (s);
      continue;
    }
    for (i = 0; i < s->schedule->len; i++) {
      Scheduled *e = g_ptr_array_index (s->schedule, i);

      if (!e->done && e->at == s->next)
        break;
    }
    if (i < s->schedule->len) {
      Scheduled *e = g_ptr_array_index (s->schedule, i);

      e->done = TRUE;
      split_locked_schedule_event (s, e->event);
      TBQ_UNLOCK (s);
      continue;
    }
    if (s->next >= s->n_inputs) {
      TBQ_UNLOCK (s);
      break;
    }
    index = s->base + s->next++;
    seq = gst_tbq_pair_assign (s->pair, b->id, NULL, &epoch);
    s->max_in_flight = MAX (s->max_in_flight,
        gst_tbq_pair_in_flight (s->pair));
    b->taken++;
    g_array_append_vals (due, b->due->data, b->due->len);
    g_array_set_size (b->due, 0);
    TBQ_UNLOCK (s);

    ret = branch_push_due (b, due);
    buffer = tbq_input_new (index);
    gst_tbq_pair_stamp_buffer (s->pair, &buffer, epoch, seq);
    if (ret == GST_FLOW_OK)
      ret = branch_push_numbered (b, epoch, seq, buffer, NULL);
    else
      gst_buffer_unref (buffer);
    b->flow = ret;
    /* As tbqsplit: a branch that is flushing or not linked stops taking
     * work; an error is the split's flow (every wait for room ends). */
    if (ret == GST_FLOW_FLUSHING || ret == GST_FLOW_NOT_LINKED)
      break;
    if (ret != GST_FLOW_OK) {
      TBQ_LOCK (s);
      s->stop = TRUE;
      TBQ_UNLOCK (s);
      gst_tbq_pair_flush_start (s->pair);
      break;
    }
  }
  g_array_unref (due);
  return NULL;
}

static void
split_push_initial (Split * s, Branch * b)
{
  GstSegment segment;

  gst_segment_init (&segment, GST_FORMAT_TIME);
  /* Inside another pair's branch 0: its branch event came first. */
  if (s->outer != NULL)
    fail_unless (gst_pad_push_event (b->pad,
            gst_tbq_pair_branch_event_new (s->outer, 0)));
  fail_unless (gst_pad_push_event (b->pad,
          gst_event_new_stream_start ("tbqjoin-test")));
  fail_unless (gst_pad_push_event (b->pad,
          tbq_caps_event (gst_caps_new_empty_simple ("test/x-input"))));
  fail_unless (gst_pad_push_event (b->pad, gst_event_new_segment (&segment)));
  fail_unless (gst_pad_push_event (b->pad,
          gst_tbq_pair_branch_event_new (s->pair, b->id)));
}

/* A split of `n` branches with a window of `window` numbers, each
 * branch's worker as `cfg[i]` (or cfg[0] for all when `same`), into a
 * tbqjoin with `first_property`... set. */
static Split *
split_new (guint n, guint window, const TbqWorkerConfig * cfg, gboolean same,
    const gchar * first_property, ...)
{
  Split *s = g_new0 (Split, 1);
  va_list args;
  guint i;

  fail_unless (n <= MAX_BRANCHES);
  tbq_init_lock (&s->lock, &s->cond);
  s->n = n;
  s->pair = gst_tbq_pair_new (window, 1);
  s->schedule = g_ptr_array_new ();
  s->pipeline = gst_pipeline_new (NULL);
  s->bus = gst_element_get_bus (s->pipeline);
  s->join = gst_element_factory_make ("tbqjoin", NULL);
  fail_unless (s->join != NULL);
  if (first_property != NULL) {
    va_start (args, first_property);
    g_object_set_valist (G_OBJECT (s->join), first_property, args);
    va_end (args);
  }
  gst_bin_add (GST_BIN (s->pipeline), s->join);
  for (i = 0; i < n; i++) {
    Branch *b = &s->branches[i];
    GstPad *wsink, *wsrc;

    b->split = s;
    b->id = i;
    b->due = g_array_new (FALSE, FALSE, sizeof (Due));
    b->worker = tbq_worker_new (&cfg[same ? 0 : i], &b->w);
    gst_bin_add (GST_BIN (s->pipeline), b->worker);
    b->pad = gst_pad_new_from_static_template (&src_template, NULL);
    wsink = gst_element_get_static_pad (b->worker, "sink");
    fail_unless (gst_pad_link (b->pad, wsink) == GST_PAD_LINK_OK);
    gst_object_unref (wsink);
    b->joinpad = gst_element_request_pad_simple (s->join, "sink_%u");
    wsrc = gst_element_get_static_pad (b->worker, "src");
    fail_unless (gst_pad_link (wsrc, b->joinpad) == GST_PAD_LINK_OK);
    gst_object_unref (wsrc);
  }
  s->sink = tbq_test_sink_new_linked (s->join);
  return s;
}

/* PLAYING, the initial sticky events on every branch. */
static void
split_play (Split * s)
{
  guint i;

  fail_unless (gst_element_set_state (s->pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < s->n; i++) {
    gst_pad_set_active (s->branches[i].pad, TRUE);
    split_push_initial (s, &s->branches[i]);
  }
}

/* `n` inputs from index `base` on, then the branch threads. */
static void
split_run (Split * s, guint64 base, guint64 n)
{
  guint i;

  TBQ_LOCK (s);
  s->base = base;
  s->next = 0;
  s->n_inputs = n;
  s->stop = FALSE;
  TBQ_UNLOCK (s);
  for (i = 0; i < s->n; i++) {
    Branch *b = &s->branches[i];

    b->flow = GST_FLOW_OK;
    b->thread = g_thread_new ("branch", branch_main, b);
  }
}

static void
split_join_threads (Split * s)
{
  guint i;

  for (i = 0; i < s->n; i++) {
    Branch *b = &s->branches[i];

    if (b->thread != NULL)
      g_thread_join (b->thread);
    b->thread = NULL;
  }
}

/* The threads are done: the events still due, then EOS on every branch
 * whose pad is still linked. */
static void
split_finish (Split * s)
{
  guint i;

  split_join_threads (s);
  for (i = 0; i < s->n; i++) {
    Branch *b = &s->branches[i];
    GArray *due = g_array_new (FALSE, FALSE, sizeof (Due));

    TBQ_LOCK (s);
    g_array_append_vals (due, b->due->data, b->due->len);
    g_array_set_size (b->due, 0);
    TBQ_UNLOCK (s);
    if (b->joinpad != NULL) {
      branch_push_due (b, due);
      gst_pad_push_event (b->pad, gst_event_new_eos ());
    } else {
      branch_push_due (b, due);
    }
    g_array_unref (due);
  }
}

/* Schedule `event` before input `at` (before split_run). */
static void
split_schedule (Split * s, guint64 at, GstEvent * event)
{
  Scheduled *e = g_new0 (Scheduled, 1);

  e->at = at;
  e->event = event;
  g_ptr_array_add (s->schedule, e);
}

static void
split_free (Split * s)
{
  guint i;

  split_join_threads (s);
  fail_unless (gst_element_set_state (s->pipeline, GST_STATE_NULL)
      == GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < s->n; i++) {
    Branch *b = &s->branches[i];
    guint j;

    gst_pad_set_active (b->pad, FALSE);
    gst_object_unref (b->pad);
    if (b->joinpad != NULL) {
      gst_element_release_request_pad (s->join, b->joinpad);
      gst_object_unref (b->joinpad);
    }
    for (j = 0; j < b->due->len; j++)
      gst_event_unref (g_array_index (b->due, Due, j).event);
    g_array_unref (b->due);
  }
  tbq_test_sink_free (s->sink);
  for (i = 0; i < s->schedule->len; i++) {
    Scheduled *e = g_ptr_array_index (s->schedule, i);

    gst_event_unref (e->event);
    g_free (e);
  }
  g_ptr_array_unref (s->schedule);
  gst_bus_set_flushing (s->bus, TRUE);
  gst_object_unref (s->bus);
  gst_object_unref (s->pipeline);
  gst_tbq_pair_unref (s->pair);
  if (s->outer != NULL)
    gst_tbq_pair_unref (s->outer);
  pthread_mutex_destroy (&s->lock);
  pthread_cond_destroy (&s->cond);
  g_free (s);
}

static guint64
join_stat (Split * s, const gchar * field)
{
  return tbq_join_stat (s->join, field);
}

/* The branches' workers (borrowed). */
static GPtrArray *
split_workers (Split * s)
{
  GPtrArray *workers = g_ptr_array_new ();
  guint j;

  for (j = 0; j < s->n; j++)
    g_ptr_array_add (workers, s->branches[j].w);
  return workers;
}

/* Every input the workers made something of, all, in order, each byte as
 * made; `times` outputs per input. */
static void
check_in_order (Split * s, guint64 n, guint times)
{
  GPtrArray *workers = split_workers (s);

  tbq_test_sink_check_workers (s->sink, workers, n, times);
  g_ptr_array_unref (workers);
}

/* Play, stream `n` inputs through the branches to EOS, and check that
 * each came out `times` times in order (but those the workers lost). */
static void
split_stream (Split * s, guint64 n, guint times)
{
  split_play (s);
  split_run (s, 0, n);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  check_in_order (s, n, times);
}

/* A scenario of tbq-workers.h through `branches` branches in a window of
 * `window`, `cfg` their workers: `n` inputs to EOS, and what the join
 * promises for it.  The split, for the test's own checks. */
static Split *
split_scenario (TbqScenario scenario, guint branches, guint window,
    const TbqWorkerConfig * cfg, gboolean same, guint64 n)
{
  Split *s = split_new (branches, window, cfg, same, NULL);
  GPtrArray *workers;

  split_play (s);
  split_run (s, 0, n);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  workers = split_workers (s);
  tbq_scenario_check (scenario, s->sink, s->join, s->bus, workers, n);
  g_ptr_array_unref (workers);
  return s;
}

/* ---- sequence order ---- */

static void
run_order (guint branches)
{
  TbqWorkerConfig cfg = tbq_scenario_config (TBQ_SCENARIO_DELAYS);
  Split *s = split_scenario (TBQ_SCENARIO_DELAYS, branches, 2 * branches,
      &cfg, TRUE, tbq_scaled (10000, 500));

  fail_unless_equals_int (gst_tbq_pair_in_flight (s->pair), 0);
  fail_unless (s->max_in_flight <= 2 * branches);
  split_free (s);
}

GST_START_TEST (test_order_one_branch)
{
  run_order (1);
}

GST_END_TEST;

GST_START_TEST (test_order_two_branches)
{
  run_order (2);
}

GST_END_TEST;

GST_START_TEST (test_order_three_branches)
{
  run_order (3);
}

GST_END_TEST;

GST_START_TEST (test_order_eight_branches)
{
  run_order (8);
}

GST_END_TEST;

/* A worker that makes a serialized query after each output, inside the
 * split's push (synchronous): the join answers it once the output is out
 * (an output of a push wakes the join's src task only at the push's end,
 * or when something waits for it: here the query). */
GST_START_TEST (test_query_after_each_output_inside_the_push)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  guint64 n = tbq_scaled (2000, 200);
  Split *s = split_new (2, 4, &cfg, TRUE, NULL);
  guint j, answered = 0, taken = 0;

  for (j = 0; j < s->n; j++)
    g_object_set (s->branches[j].w, "query-after", TRUE, NULL);
  split_stream (s, n, 1);
  for (j = 0; j < s->n; j++) {
    TBQ_LOCK (s->branches[j].w);
    answered += s->branches[j].w->queries_answered;
    taken += s->branches[j].w->n_in;
    TBQ_UNLOCK (s->branches[j].w);
  }
  fail_unless_equals_int (taken, n);
  fail_unless_equals_int (answered, n);
  split_free (s);
}

GST_END_TEST;

/* A worker that drops (a third of its inputs): the numbers it dropped are
 * gaps, counted exactly; the rest comes out in order, without a stall. */
GST_START_TEST (test_drops_in_one_branch)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT,
    TBQ_WORKER_DEFAULT
  };

  cfg[0].delay_us = cfg[2].delay_us = 500;
  cfg[1] = tbq_scenario_config (TBQ_SCENARIO_DROPS);
  split_free (split_scenario (TBQ_SCENARIO_DROPS, 3, 6, cfg, FALSE,
          tbq_scaled (3000, 300)));
}

GST_END_TEST;

/* Two outputs of one input share its number: both go out at its place. */
GST_START_TEST (test_two_outputs_per_input)
{
  TbqWorkerConfig cfg = tbq_scenario_config (TBQ_SCENARIO_DUP);

  split_free (split_scenario (TBQ_SCENARIO_DUP, 3, 6, &cfg, TRUE,
          tbq_scaled (2000, 200)));
}

GST_END_TEST;

/* One output of two inputs: the earlier number is a gap. */
GST_START_TEST (test_merge_two_into_one)
{
  TbqWorkerConfig cfg = tbq_scenario_config (TBQ_SCENARIO_MERGE);

  split_free (split_scenario (TBQ_SCENARIO_MERGE, 3, 6, &cfg, TRUE,
          tbq_scaled (2000, 200)));
}

GST_END_TEST;

/* A synchronous worker that strips metas: the push it runs in gives the
 * number, exact; no warning. */
GST_START_TEST (test_strip_metas_synchronous)
{
  TbqWorkerConfig cfg = tbq_scenario_config (TBQ_SCENARIO_STRIP_SYNC);
  Split *s = split_scenario (TBQ_SCENARIO_STRIP_SYNC, 3, 6, &cfg, TRUE,
      tbq_scaled (2000, 200));
  guint i, took = 0;

  /* Every branch that took an input (work-claiming: on a loaded machine
   * a branch may take none). */
  for (i = 0; i < s->n; i++) {
    TbqTestWorker *w = s->branches[i].w;
    guint n_in;

    pthread_mutex_lock (&w->lock);
    n_in = w->n_in;
    pthread_mutex_unlock (&w->lock);
    if (n_in == 0)
      continue;
    took++;
    fail_unless (gst_tbq_pair_branch_is_sync (s->pair, i), "branch %u", i);
  }
  fail_unless (took > 0);
  split_free (s);
}

GST_END_TEST;

/* A worker with a thread of its own (a queue inside) that strips metas:
 * ordered by the split's record of what went to each branch, one output
 * per input; said once. */
GST_START_TEST (test_strip_metas_with_queue_inside)
{
  TbqWorkerConfig cfg = tbq_scenario_config (TBQ_SCENARIO_STRIP_QUEUE);
  Split *s = split_scenario (TBQ_SCENARIO_STRIP_QUEUE, 3, 6, &cfg, TRUE,
      tbq_scaled (2000, 200));
  guint i;

  for (i = 0; i < s->n; i++)
    fail_unless (!gst_tbq_pair_branch_is_sync (s->pair, i));
  split_free (s);
}

GST_END_TEST;

/* Workers with a queue inside that keep the metas: not synchronous
 * (markers), ordered by the metas. */
GST_START_TEST (test_queue_inside_keeps_order)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n = tbq_scaled (3000, 300);
  Split *s;

  cfg[0].queue_inside = cfg[1].queue_inside = TRUE;
  cfg[0].delay_us = cfg[1].delay_us = cfg[2].delay_us = 500;
  /* Branch 2 takes the first input before the others take any (the
   * branches behind a queue would take everything as fast as it comes):
   * its finding is made at least once. */
  cfg[2].stall_at = 0;
  s = split_new (3, 6, cfg, FALSE, NULL);
  s->branches[0].after = s->branches[1].after = s->branches[2].w;
  split_play (s);
  split_run (s, 0, n);
  tbq_worker_wait_stalled (s->branches[2].w);
  tbq_worker_unstall (s->branches[2].w);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  check_in_order (s, n, 1);
  fail_unless (!gst_tbq_pair_branch_is_sync (s->pair, 0));
  fail_unless (!gst_tbq_pair_branch_is_sync (s->pair, 1));
  fail_unless (gst_tbq_pair_branch_is_sync (s->pair, 2));
  fail_unless_equals_int (join_stat (s, "gaps"), 0);
  split_free (s);
}

GST_END_TEST;

/* ---- events ---- */

/* A serialized event the split hands to every branch takes a number: the
 * split's copy comes out once at its place, the branches' copies
 * (through synchronous workers and workers with a queue) never. */
GST_START_TEST (test_custom_event_at_its_place)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n = tbq_scaled (1000, 200), at = n / 2;
  Split *s;

  cfg[1].queue_inside = TRUE;
  cfg[0].delay_us = cfg[1].delay_us = cfg[2].delay_us = 500;
  s = split_new (3, 6, cfg, FALSE, NULL);
  split_schedule (s, at, gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
          gst_structure_new_empty ("tj-custom")));
  split_stream (s, n, 1);
  tbq_test_sink_check_event_once_at (s->sink, GST_EVENT_CUSTOM_DOWNSTREAM, "tj-custom", at);
  fail_unless_equals_int (gst_tbq_pair_in_flight (s->pair), 0);
  split_free (s);
}

GST_END_TEST;

/* Caps and a segment that change mid-stream: each change comes out once,
 * at its place, with the caps the workers made. */
GST_START_TEST (test_caps_and_segment_change)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n = tbq_scaled (1000, 200), caps_at = n / 3, seg_at = 2 * n / 3;
  GstSegment segment;
  guint i, caps_seen = 0;
  Split *s;

  for (i = 0; i < 3; i++) {
    cfg[i].mark_caps = TRUE;
    cfg[i].delay_us = 500;
  }
  cfg[2].queue_inside = TRUE;
  s = split_new (3, 6, cfg, FALSE, NULL);
  split_schedule (s, caps_at, tbq_caps_event (gst_caps_new_simple ("test/x-input",
          "changed", G_TYPE_BOOLEAN, TRUE, NULL)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.base = 5 * GST_SECOND;
  split_schedule (s, seg_at, gst_event_new_segment (&segment));
  split_stream (s, n, 1);
  TBQ_LOCK (s->sink);
  for (i = 0; i < s->sink->events->len; i++) {
    GstEvent *e = g_ptr_array_index (s->sink->events, i);
    guint at = g_array_index (s->sink->event_at, guint, i);
    gboolean mark = FALSE, changed = FALSE;
    GstCaps *caps;

    if (GST_EVENT_TYPE (e) != GST_EVENT_CAPS)
      continue;
    gst_event_parse_caps (e, &caps);
    fail_unless (gst_structure_get_boolean (gst_caps_get_structure (caps, 0),
            "worker", &mark) && mark, "the caps are not the worker's");
    gst_structure_get_boolean (gst_caps_get_structure (caps, 0), "changed",
        &changed);
    fail_unless_equals_int (at, changed ? caps_at : 0);
    caps_seen++;
  }
  fail_unless_equals_int (caps_seen, 2);
  fail_unless_equals_int (tbq_test_sink_locked_count (s->sink, GST_EVENT_SEGMENT), 2);
  for (i = 0; i < s->sink->events->len; i++) {
    GstEvent *e = g_ptr_array_index (s->sink->events, i);
    const GstSegment *seg;

    if (GST_EVENT_TYPE (e) != GST_EVENT_SEGMENT)
      continue;
    gst_event_parse_segment (e, &seg);
    fail_unless_equals_int (g_array_index (s->sink->event_at, guint, i),
        seg->base == 5 * GST_SECOND ? seg_at : 0);
  }
  TBQ_UNLOCK (s->sink);
  fail_unless_equals_int (tbq_test_sink_count (s->sink, GST_EVENT_STREAM_START), 1);
  split_free (s);
}

GST_END_TEST;

/* ---- flushing, release, errors, the window ---- */

/* A flush mid-stream (from the split: every branch flushes), then more
 * data: FLUSH_START and FLUSH_STOP once downstream, what came before the
 * flush in order up to it, everything after it in order from number 0 of
 * the new epoch. */
GST_START_TEST (test_flush_then_more_data)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n1 = tbq_scaled (2000, 200), n2 = tbq_scaled (1000, 100);
  guint64 base2 = 1000000;
  guint i, stop_at = 0, pos;
  GstSegment segment;
  Split *s;

  cfg[0].delay_us = cfg[1].delay_us = cfg[2].delay_us = 300;
  cfg[1].queue_inside = TRUE;
  s = split_new (3, 6, cfg, FALSE, NULL);
  split_play (s);
  split_run (s, 0, n1);
  tbq_test_sink_wait_buffers (s->sink, (guint) n1 / 4);
  /* As tbqsplit flushes: the pair first, then every branch. */
  gst_tbq_pair_flush_start (s->pair);
  for (i = 0; i < s->n; i++)
    gst_pad_push_event (s->branches[i].pad, gst_event_new_flush_start ());
  split_join_threads (s);
  gst_tbq_pair_flush_stop (s->pair);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  for (i = 0; i < s->n; i++) {
    GArray *due = s->branches[i].due;
    guint j;

    TBQ_LOCK (s);
    for (j = 0; j < due->len; j++)
      gst_event_unref (g_array_index (due, Due, j).event);
    g_array_set_size (due, 0);
    TBQ_UNLOCK (s);
    gst_pad_push_event (s->branches[i].pad, gst_event_new_flush_stop (TRUE));
    fail_unless (gst_pad_push_event (s->branches[i].pad,
            gst_event_new_segment (&segment)));
  }
  split_run (s, base2, n2);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);

  fail_unless_equals_int (tbq_test_sink_count (s->sink, GST_EVENT_FLUSH_START), 1);
  fail_unless_equals_int (tbq_test_sink_count (s->sink, GST_EVENT_FLUSH_STOP), 1);
  TBQ_LOCK (s->sink);
  for (i = 0; i < s->sink->events->len; i++)
    if (GST_EVENT_TYPE (g_ptr_array_index (s->sink->events, i))
        == GST_EVENT_FLUSH_STOP)
      stop_at = g_array_index (s->sink->event_at, guint, i);
  fail_unless_equals_int (s->sink->bad, 0);
  for (pos = 0; pos < stop_at; pos++)
    fail_unless (g_array_index (s->sink->indices, guint64, pos) == pos,
        "before the flush, position %u", pos);
  fail_unless_equals_int (s->sink->indices->len - stop_at, n2);
  for (pos = stop_at; pos < s->sink->indices->len; pos++)
    fail_unless (g_array_index (s->sink->indices, guint64, pos)
        == base2 + pos - stop_at, "after the flush, position %u", pos);
  TBQ_UNLOCK (s->sink);
  fail_unless_equals_int (tbq_test_sink_count (s->sink, GST_EVENT_EOS), 1);
  split_free (s);
}

GST_END_TEST;

/* Release a branch's pad while the others play (the branch stopped
 * taking work first): the order does not wait for it. */
GST_START_TEST (test_release_pad_while_playing)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  guint64 n = tbq_scaled (3000, 300);
  Branch *b;
  Split *s;

  cfg.delay_us = 300;
  s = split_new (3, 6, &cfg, TRUE, NULL);
  b = &s->branches[2];
  b->quit_after = (guint) n / 10;
  split_play (s);
  split_run (s, 0, n);
  /* Its thread ends after its share; then its pad goes. */
  g_thread_join (b->thread);
  b->thread = NULL;
  gst_element_release_request_pad (s->join, b->joinpad);
  gst_object_unref (b->joinpad);
  b->joinpad = NULL;
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  check_in_order (s, n, 1);
  fail_unless_equals_int (join_stat (s, "branches"), 2);
  fail_unless_equals_int (tbq_test_sink_count (s->sink, GST_EVENT_EOS), 1);
  split_free (s);
}

GST_END_TEST;

/* Release the pad of a branch whose worker still holds its inputs (a
 * queue inside, stalled): its numbers are gaps, nothing hangs. */
GST_START_TEST (test_release_pad_with_numbers_in_flight)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n = tbq_scaled (1000, 200);
  guint64 prev = 0;
  Branch *b;
  Split *s;
  guint i;

  /* Its third input stalls behind the queue; it takes no more. */
  cfg[2].queue_inside = TRUE;
  cfg[2].stall_at = 2;
  s = split_new (3, 6, cfg, FALSE, NULL);
  b = &s->branches[2];
  b->quit_after = 3;
  s->branches[0].after = s->branches[1].after = b->w;
  split_play (s);
  split_run (s, 0, n);
  /* The window fills behind the stalled worker's numbers. */
  tbq_worker_wait_stalled (b->w);
  gst_element_release_request_pad (s->join, b->joinpad);
  gst_object_unref (b->joinpad);
  b->joinpad = NULL;
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  tbq_worker_unstall (b->w);
  TBQ_LOCK (s->sink);
  fail_unless_equals_int (s->sink->bad, 0);
  for (i = 0; i < s->sink->indices->len; i++) {
    guint64 v = g_array_index (s->sink->indices, guint64, i);

    fail_unless (i == 0 || v > prev, "out of order at %u", i);
    prev = v;
  }
  fail_unless_equals_int (s->sink->indices->len, n - 1);
  TBQ_UNLOCK (s->sink);
  /* Only the stalled input's number: the two before it came out. */
  fail_unless_equals_int (join_stat (s, "gaps"), 1);
  split_free (s);
}

GST_END_TEST;

/* Wait until `window` numbers are in flight (polled: the pair has no
 * notification for the test). */
static void
wait_window_full (Split * s, guint window)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  while (gst_tbq_pair_in_flight (s->pair) < window) {
    fail_unless (g_get_monotonic_time () < end, "the window did not fill");
    g_usleep (1000);
  }
}

/* A downstream error goes upstream to every branch, also when every
 * branch waits for room in a full window (downstream held). */
GST_START_TEST (test_downstream_error_reaches_branches)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  guint64 n = tbq_scaled (5000, 500);
  guint i, errors = 0, window = 6;
  Split *s;

  s = split_new (3, window, &cfg, TRUE, NULL);
  TBQ_LOCK (s->sink);
  s->sink->hold = TRUE;
  s->sink->error_at = 1;
  TBQ_UNLOCK (s->sink);
  split_play (s);
  split_run (s, 0, n);
  tbq_test_sink_wait_holding (s->sink);
  wait_window_full (s, window);
  /* Downstream takes the held buffer and says ERROR. */
  tbq_test_sink_release (s->sink);
  split_join_threads (s);
  for (i = 0; i < s->n; i++) {
    Branch *b = &s->branches[i];
    GstFlowReturn ret;

    errors += b->flow == GST_FLOW_ERROR;
    /* Whatever it pushes now gets the error back. */
    ret = gst_pad_push (b->pad, tbq_input_new (0));
    fail_unless_equals_int (ret, GST_FLOW_ERROR);
  }
  fail_unless (errors > 0);
  split_free (s);
}

GST_END_TEST;

/* A stalled branch: the window bounds what is in flight (the others wait
 * for room), and everything goes on in order once it gets on. */
GST_START_TEST (test_window_bounds_a_stalled_branch)
{
  TbqWorkerConfig cfg[3] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint64 n = tbq_scaled (1000, 200);
  guint window = 5;
  Split *s;

  /* Branch 1 takes the first three inputs and stalls on the third. */
  cfg[1].stall_at = 2;
  s = split_new (3, window, cfg, FALSE, NULL);
  s->branches[0].after = s->branches[2].after = s->branches[1].w;
  split_play (s);
  split_run (s, 0, n);
  tbq_worker_wait_stalled (s->branches[1].w);
  /* The others fill the window and wait for room. */
  wait_window_full (s, window);
  TBQ_LOCK (s);
  fail_unless (s->max_in_flight <= window);
  TBQ_UNLOCK (s);
  fail_unless (s->branches[1].w->stalled);
  tbq_worker_unstall (s->branches[1].w);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  check_in_order (s, n, 1);
  fail_unless (s->max_in_flight <= window);
  fail_unless_equals_int (s->max_in_flight, window);
  split_free (s);
}

GST_END_TEST;

/* A split inside another pair's branch: the join binds to the deepest
 * pair its pads name (this split's), consumes its events and passes the
 * outer pair's branch event on, once. */
GST_START_TEST (test_nested_pair_binds_the_deepest)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  guint64 n = tbq_scaled (1000, 200);
  guint i, outer = 0, inner = 0;
  Split *s;

  cfg.delay_us = 300;
  s = split_new (3, 6, &cfg, TRUE, NULL);
  gst_tbq_pair_unref (s->pair);
  s->pair = gst_tbq_pair_new (6, 2);
  s->outer = gst_tbq_pair_new (4, 1);
  split_stream (s, n, 1);
  TBQ_LOCK (s->sink);
  for (i = 0; i < s->sink->events->len; i++) {
    GstTbqPair *pair = NULL;

    if (!gst_tbq_pair_parse_branch_event (g_ptr_array_index (s->sink->events,
                i), &pair, NULL, NULL))
      continue;
    outer += pair == s->outer;
    inner += pair == s->pair;
    gst_tbq_pair_unref (pair);
  }
  TBQ_UNLOCK (s->sink);
  fail_unless_equals_int (outer, 1);
  fail_unless_equals_int (inner, 0);
  split_free (s);
}

GST_END_TEST;

/* PAUSED to READY while downstream holds a full window (the split stops
 * its branches, downstream stops first): nothing hangs, nothing leaks. */
GST_START_TEST (test_stop_with_a_full_window)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  guint window = 6;
  Split *s;

  cfg.queue_inside = TRUE;
  s = split_new (3, window, &cfg, TRUE, NULL);
  TBQ_LOCK (s->sink);
  s->sink->hold = TRUE;
  TBQ_UNLOCK (s->sink);
  split_play (s);
  split_run (s, 0, 1000);
  tbq_test_sink_wait_holding (s->sink);
  wait_window_full (s, window);
  gst_tbq_pair_flush_start (s->pair);
  split_join_threads (s);
  gst_pad_set_active (s->sink->pad, FALSE);
  fail_unless (gst_element_set_state (s->pipeline, GST_STATE_READY)
      == GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (join_stat (s, "reorder-depth"), 0);
  split_free (s);
}

GST_END_TEST;

/* The split's marker query reaches a pad of a join that stopped (a
 * split's branch task runs until the split stops, and a bin stops the
 * join first): it binds nothing there, and no reference to the pair is
 * left behind (the pad took a second one, which a soak found as the
 * events in the pair's slots left alive). */
GST_START_TEST (test_a_marker_query_at_a_stopped_join_binds_nothing)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;
  Split *s = split_new (1, 4, &cfg, TRUE, NULL);
  GstQuery *query;
  gint refs;

  split_play (s);
  split_run (s, 0, 10);
  split_join_threads (s);
  tbq_test_sink_wait_buffers (s->sink, 10);
  fail_unless (gst_element_set_state (s->pipeline, GST_STATE_READY)
      == GST_STATE_CHANGE_SUCCESS);
  refs = gst_tbq_pair_refcount (s->pair);
  query = gst_tbq_pair_marker_query_new_in (s->pair,
      gst_tbq_pair_epoch (s->pair), 0, 9);
  gst_pad_query (s->branches[0].joinpad, query);
  fail_if (gst_tbq_pair_marker_query_answered (query));
  gst_query_unref (query);
  fail_unless_equals_int (gst_tbq_pair_refcount (s->pair), refs);
  split_free (s);
}

GST_END_TEST;

/* ---- arrival order ---- */

/* Producers of our own on the join's sink pads, no split. */
typedef struct
{
  GstPad *pad;
  guint64 base;
  guint n;
  GstFlowReturn ret;
  _Atomic guint ok;             /* read while it runs */
  GThread *thread;
} Producer;

static gpointer
producer_main (gpointer data)
{
  Producer *p = data;
  guint i;

  for (i = 0; i < p->n; i++) {
    p->ret = gst_pad_push (p->pad, tbq_input_new (p->base + i));
    if (p->ret != GST_FLOW_OK)
      break;
    p->ok++;
  }
  return NULL;
}

typedef struct
{
  GstElement *pipeline, *join;
  GstPad *pads[MAX_BRANCHES];
  GstPad *joinpads[MAX_BRANCHES];
  guint n;
  TbqTestSink *sink;
} Funnel;

static Funnel *
funnel_new (guint n, const gchar * first_property, ...)
{
  Funnel *f = g_new0 (Funnel, 1);
  va_list args;
  guint i;

  f->n = n;
  f->pipeline = gst_pipeline_new (NULL);
  f->join = gst_element_factory_make ("tbqjoin", NULL);
  va_start (args, first_property);
  g_object_set_valist (G_OBJECT (f->join), first_property, args);
  va_end (args);
  gst_bin_add (GST_BIN (f->pipeline), f->join);
  for (i = 0; i < n; i++) {
    f->pads[i] = gst_pad_new_from_static_template (&src_template, NULL);
    f->joinpads[i] = gst_element_request_pad_simple (f->join, "sink_%u");
    fail_unless (gst_pad_link (f->pads[i], f->joinpads[i]) == GST_PAD_LINK_OK);
  }
  f->sink = tbq_test_sink_new_linked (f->join);
  fail_unless (gst_element_set_state (f->pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < n; i++) {
    GstSegment segment;

    gst_segment_init (&segment, GST_FORMAT_TIME);
    gst_pad_set_active (f->pads[i], TRUE);
    fail_unless (gst_pad_push_event (f->pads[i],
            gst_event_new_stream_start ("tbqjoin-funnel")));
    fail_unless (gst_pad_push_event (f->pads[i],
            tbq_caps_event (gst_caps_new_empty_simple ("test/x-input"))));
    fail_unless (gst_pad_push_event (f->pads[i],
            gst_event_new_segment (&segment)));
  }
  return f;
}

static void
funnel_free (Funnel * f)
{
  guint i;

  fail_unless (gst_element_set_state (f->pipeline, GST_STATE_NULL)
      == GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < f->n; i++) {
    gst_pad_set_active (f->pads[i], FALSE);
    gst_object_unref (f->pads[i]);
    gst_element_release_request_pad (f->join, f->joinpads[i]);
    gst_object_unref (f->joinpads[i]);
  }
  tbq_test_sink_free (f->sink);
  gst_object_unref (f->pipeline);
  g_free (f);
}

/* Every buffer out, each producer's in its order; the sticky events the
 * producers share sent once. */
GST_START_TEST (test_arrival_every_buffer_in_branch_order)
{
  guint n = tbq_scaled (3000, 300), i, j;
  Producer p[3];
  guint64 next[3];
  Funnel *f = funnel_new (3, "order", 1, NULL);

  for (i = 0; i < 3; i++) {
    p[i].pad = f->pads[i];
    p[i].base = (guint64) i << 32;
    p[i].n = n;
    p[i].ok = 0;
    next[i] = p[i].base;
    p[i].thread = g_thread_new ("producer", producer_main, &p[i]);
  }
  for (i = 0; i < 3; i++) {
    g_thread_join (p[i].thread);
    fail_unless_equals_int (p[i].ret, GST_FLOW_OK);
    gst_pad_push_event (p[i].pad, gst_event_new_eos ());
  }
  tbq_test_sink_wait_eos (f->sink);
  TBQ_LOCK (f->sink);
  fail_unless_equals_int (f->sink->bad, 0);
  fail_unless_equals_int (f->sink->indices->len, 3 * n);
  for (j = 0; j < f->sink->indices->len; j++) {
    guint64 v = g_array_index (f->sink->indices, guint64, j);
    guint b = (guint) (v >> 32);

    fail_unless (b < 3);
    fail_unless (v == next[b], "producer %u out of its order", b);
    next[b]++;
  }
  fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_CAPS), 1);
  fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_STREAM_START),
      1);
  fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_SEGMENT), 1);
  fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_EOS), 1);
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* A producer whose caps differ gets them sent before its buffers, and
 * back again before the others'. */
GST_START_TEST (test_arrival_sticky_sent_where_they_differ)
{
  Funnel *f = funnel_new (2, "order", 1, NULL);
  guint i;

  fail_unless (gst_pad_push_event (f->pads[1],
          tbq_caps_event (gst_caps_new_empty_simple ("test/x-other"))));
  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (0)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 1);
  fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (1)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 2);
  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (2)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 3);
  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (3)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 4);
  TBQ_LOCK (f->sink);
  fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_CAPS), 3);
  for (i = 0; i < f->sink->events->len; i++) {
    GstEvent *e = g_ptr_array_index (f->sink->events, i);

    if (GST_EVENT_TYPE (e) == GST_EVENT_CAPS)
      fail_unless (g_array_index (f->sink->event_at, guint, i) <= 2);
  }
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* A sticky event after a producer's last buffer (tags found at the end)
 * goes out once, before EOS. */
GST_START_TEST (test_arrival_sticky_before_eos)
{
  Funnel *f = funnel_new (2, "order", 1, NULL);
  GstTagList *tags;

  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (0)),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (1)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 2);
  tags = gst_tag_list_new (GST_TAG_TITLE, "the end", NULL);
  gst_tag_list_set_scope (tags, GST_TAG_SCOPE_STREAM);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_tag (
              gst_tag_list_copy (tags))));
  fail_unless (gst_pad_push_event (f->pads[1], gst_event_new_tag (tags)));
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_eos ()));
  fail_unless (gst_pad_push_event (f->pads[1], gst_event_new_eos ()));
  tbq_test_sink_wait_eos (f->sink);
  tbq_test_sink_check_event_once_at (f->sink, GST_EVENT_TAG, NULL, 2);
  tbq_test_sink_check_event_once_at (f->sink, GST_EVENT_EOS, NULL, 2);
  funnel_free (f);
}

GST_END_TEST;

/* In arrival order the limits block a producer (downstream held), and a
 * flush ends the wait. */
GST_START_TEST (test_arrival_limits_block_and_flush_unblocks)
{
  Funnel *f = funnel_new (1, "order", 1, "max-size-buffers", 5,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  Producer p = { f->pads[0], 0, 100, GST_FLOW_OK, 0, NULL };
  guint64 level;

  TBQ_LOCK (f->sink);
  f->sink->hold = TRUE;
  TBQ_UNLOCK (f->sink);
  p.thread = g_thread_new ("producer", producer_main, &p);
  tbq_test_sink_wait_holding (f->sink);
  level = tbq_wait_property (f->join, "current-level-buffers", 5);
  /* Full: at the limit, not past it. */
  fail_unless_equals_int (level, 5);
  fail_unless (p.ok <= 7, "%u buffers taken past the limit", p.ok);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_flush_start ()));
  g_thread_join (p.thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  fail_unless (p.ok <= 7);
  tbq_test_sink_release (f->sink);
  fail_unless (gst_pad_push_event (f->pads[0],
          gst_event_new_flush_stop (TRUE)));
  funnel_free (f);
}

GST_END_TEST;

/* After a flush: a SEGMENT again on pad 0, then input `index` there, and
 * wait until `total` buffers came out. */
static void
funnel_go_on (Funnel * f, guint64 index, guint total)
{
  GstSegment segment;

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (f->pads[0],
          gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (index)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, total);
}

/* A flush that reaches the pads one after the other (a split sends it
 * down each branch in turn): what a pad took before its own FLUSH_START
 * goes with the flush, also when another pad's began it.  (Rounds: the
 * src task may read it before the flush ends, and drop it, or not.) */
GST_START_TEST (test_flush_drops_what_a_pad_took_before_its_flush_start)
{
  guint round, i;

  for (round = 0; round < 10; round++) {
    Funnel *f = funnel_new (2, "order", 1, NULL);
    GstEvent *start = gst_event_new_flush_start ();
    GstEvent *stop = gst_event_new_flush_stop (TRUE);

    /* Both pads' sticky events are the join's first. */
    for (i = 0; i < 2; i++)
      fail_unless_equals_int (gst_pad_push (f->pads[i], tbq_input_new (i)),
          GST_FLOW_OK);
    tbq_test_sink_wait_buffers (f->sink, 2);
    /* One flush (one seqnum), as a split sends it. */
    fail_unless (gst_pad_push_event (f->pads[0], gst_event_ref (start)));
    fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (7)),
        GST_FLOW_OK);
    fail_unless (gst_pad_push_event (f->pads[1], start));
    for (i = 0; i < 2; i++)
      fail_unless (gst_pad_push_event (f->pads[i], gst_event_ref (stop)));
    gst_event_unref (stop);
    funnel_go_on (f, 8, 3);
    pthread_mutex_lock (&f->sink->lock);
    fail_unless_equals_int (g_array_index (f->sink->indices, guint64, 2), 8);
    pthread_mutex_unlock (&f->sink->lock);
    funnel_free (f);
  }
}

GST_END_TEST;

/* The sticky events a pad took before a flush are its state after it
 * (only SEGMENT and EOS go, as on a pad), whether the src task had read
 * them when the flush came or not: data after the flush comes after
 * them.  (Rounds: the src task reads them at once, or not.) */
GST_START_TEST (test_sticky_events_outlive_a_flush)
{
  guint round;

  for (round = 0; round < 30; round++) {
    Funnel *f = funnel_new (1, "order", 1, NULL);

    fail_unless (gst_pad_push_event (f->pads[0],
            gst_event_new_flush_start ()));
    fail_unless (gst_pad_push_event (f->pads[0],
            gst_event_new_flush_stop (TRUE)));
    funnel_go_on (f, 8, 1);
    pthread_mutex_lock (&f->sink->lock);
    fail_unless_equals_int (tbq_test_sink_locked_count (f->sink,
            GST_EVENT_STREAM_START), 1);
    fail_unless_equals_int (tbq_test_sink_locked_count (f->sink, GST_EVENT_CAPS), 1);
    pthread_mutex_unlock (&f->sink->lock);
    funnel_free (f);
  }
}

GST_END_TEST;

/* A pad requested while the join plays works like the others; EOS waits
 * for it too. */
GST_START_TEST (test_arrival_pad_requested_while_playing)
{
  Funnel *f = funnel_new (1, "order", 1, NULL);
  GstPad *pad, *joinpad;
  GstSegment segment;

  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (0)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 1);
  joinpad = gst_element_request_pad_simple (f->join, "sink_%u");
  pad = gst_pad_new_from_static_template (&src_template, NULL);
  fail_unless (gst_pad_link (pad, joinpad) == GST_PAD_LINK_OK);
  gst_pad_set_active (pad, TRUE);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (pad,
          gst_event_new_stream_start ("tbqjoin-funnel")));
  fail_unless (gst_pad_push_event (pad,
          tbq_caps_event (gst_caps_new_empty_simple ("test/x-input"))));
  fail_unless (gst_pad_push_event (pad, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_pad_push (pad, tbq_input_new (1)), GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 2);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_eos ()));
  fail_unless (gst_pad_push_event (pad, gst_event_new_eos ()));
  tbq_test_sink_wait_eos (f->sink);
  fail_unless_equals_int (tbq_test_sink_count (f->sink, GST_EVENT_EOS), 1);
  fail_unless_equals_int (tbq_test_sink_count (f->sink, GST_EVENT_CAPS), 1);
  gst_pad_set_active (pad, FALSE);
  gst_object_unref (pad);
  gst_element_release_request_pad (f->join, joinpad);
  gst_object_unref (joinpad);
  funnel_free (f);
}

GST_END_TEST;

typedef struct
{
  GstPad *pad;
  GstQuery *query;
  gboolean res;
} QueryThread;

static gpointer
query_main (gpointer data)
{
  QueryThread *q = data;

  q->res = gst_pad_peer_query (q->pad, q->query);
  return NULL;
}

/* A serialized query waits until what its pad sent before it is out
 * (downstream held: a query sent on at once would be answered after the
 * first buffer). */
GST_START_TEST (test_serialized_query_waits_for_its_pad)
{
  Funnel *f = funnel_new (1, "order", 1, NULL);
  QueryThread q;
  GThread *thread;
  guint i;

  TBQ_LOCK (f->sink);
  f->sink->hold = TRUE;
  TBQ_UNLOCK (f->sink);
  for (i = 0; i < 3; i++)
    fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (i)),
        GST_FLOW_OK);
  tbq_test_sink_wait_holding (f->sink);
  q.pad = f->pads[0];
  q.query = gst_query_new_custom (TBQ_QUERY_SERIALIZED,
      gst_structure_new_empty ("tj-query"));
  thread = g_thread_new ("query", query_main, &q);
  tbq_test_sink_release (f->sink);
  g_thread_join (thread);
  fail_unless (q.res);
  TBQ_LOCK (f->sink);
  fail_unless_equals_int (f->sink->query_at, 3);
  TBQ_UNLOCK (f->sink);
  gst_query_unref (q.query);
  funnel_free (f);
}

GST_END_TEST;

/* ALLOCATION goes downstream at once, also while the order waits for a
 * stalled branch: a worker that waits for the answer never waits for
 * the order. */
GST_START_TEST (test_allocation_query_at_once)
{
  TbqWorkerConfig cfg[2] = { TBQ_WORKER_DEFAULT, TBQ_WORKER_DEFAULT };
  guint window = 6;
  GstQuery *allocation;
  GstCaps *caps;
  Split *s;

  /* Branch 1 takes the first input and stalls on it; branch 0 goes on. */
  cfg[1].stall_at = 0;
  s = split_new (2, window, cfg, FALSE, NULL);
  s->branches[0].after = s->branches[1].w;
  split_play (s);
  split_run (s, 0, 100);
  tbq_worker_wait_stalled (s->branches[1].w);
  wait_window_full (s, window);
  caps = gst_caps_new_empty_simple ("test/x-input");
  allocation = gst_query_new_allocation (caps, TRUE);
  gst_caps_unref (caps);
  fail_unless (gst_pad_peer_query (s->branches[0].pad, allocation));
  gst_query_unref (allocation);
  TBQ_LOCK (s->sink);
  fail_unless_equals_int (s->sink->allocation_queries, 1);
  TBQ_UNLOCK (s->sink);
  fail_unless (s->branches[1].w->stalled);
  tbq_worker_unstall (s->branches[1].w);
  split_finish (s);
  tbq_test_sink_wait_eos (s->sink);
  check_in_order (s, 100, 1);
  split_free (s);
}

GST_END_TEST;

/* PAUSED to READY ends a producer's wait at a limit. */
GST_START_TEST (test_arrival_stop_ends_a_wait)
{
  Funnel *f = funnel_new (1, "order", 1, "max-size-buffers", 3, NULL);
  Producer p = { f->pads[0], 0, 100, GST_FLOW_OK, 0, NULL };

  TBQ_LOCK (f->sink);
  f->sink->hold = TRUE;
  TBQ_UNLOCK (f->sink);
  p.thread = g_thread_new ("producer", producer_main, &p);
  tbq_test_sink_wait_holding (f->sink);
  tbq_wait_property (f->join, "current-level-buffers", 3);
  gst_pad_set_active (f->sink->pad, FALSE);
  fail_unless (gst_element_set_state (f->pipeline, GST_STATE_READY)
      == GST_STATE_CHANGE_SUCCESS);
  g_thread_join (p.thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  funnel_free (f);
}

GST_END_TEST;

/* The time limit alone binds before anything of a pad went out (a
 * consumer held from the start, as at preroll): the pad's level counts
 * from its first buffer in.  (It held nothing back before: every buffer
 * came in.) */
GST_START_TEST (test_arrival_time_limit_before_the_first_output)
{
  Funnel *f = funnel_new (1, "order", 1, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 5 * GST_MSECOND, NULL);
  Producer p = { f->pads[0], 0, 100, GST_FLOW_OK, 0, NULL };
  guint64 level = 0;

  TBQ_LOCK (f->sink);
  f->sink->hold = TRUE;
  TBQ_UNLOCK (f->sink);
  p.thread = g_thread_new ("producer", producer_main, &p);
  level = tbq_wait_property (f->join, "current-level-time", 5 * GST_MSECOND);
  /* 1 ms buffers: five make the limit (and one more may be on its way). */
  fail_unless (p.ok <= 6, "%u buffers taken at a limit of 5 ms", p.ok);
  fail_unless (level <= 6 * GST_MSECOND);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_flush_start ()));
  g_thread_join (p.thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  fail_unless (p.ok <= 6);
  tbq_test_sink_release (f->sink);
  fail_unless (gst_pad_push_event (f->pads[0],
          gst_event_new_flush_stop (TRUE)));
  funnel_free (f);
}

GST_END_TEST;

/* A flush of one producer's pad only: the other producer, which did not
 * flush and sends no SEGMENT again, keeps the SEGMENT it sent before
 * (still in the join when the flush dropped what it held), and its next
 * buffer goes out behind it: FLUSH_STOP took the SEGMENT off the src pad
 * and downstream.  (It went out with none.) */
GST_START_TEST (test_arrival_a_flush_of_one_pad_keeps_the_others_segment)
{
  Funnel *f = funnel_new (2, "order", 1, NULL);
  GstSegment segment;
  guint i, stop_at = G_MAXUINT, segment_at = G_MAXUINT, buffers_before = 0;

  tbq_test_sink_hold (f->sink);
  fail_unless_equals_int (gst_pad_push (f->pads[0], tbq_input_new (0)),
      GST_FLOW_OK);
  tbq_test_sink_wait_holding (f->sink);
  /* Pad 1: a SEGMENT of its own and a buffer, behind the held one. */
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.base = GST_SECOND;
  fail_unless (gst_pad_push_event (f->pads[1],
          gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (1)),
      GST_FLOW_OK);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_flush_start ()));
  fail_unless (gst_pad_push_event (f->pads[0],
          gst_event_new_flush_stop (TRUE)));
  tbq_test_sink_release (f->sink);
  /* Pad 1 goes on, no SEGMENT again (it did not flush). */
  fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (2)),
      GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 1);
  TBQ_LOCK (f->sink);
  for (i = 0; i < f->sink->events->len; i++) {
    GstEvent *e = g_ptr_array_index (f->sink->events, i);

    if (GST_EVENT_TYPE (e) == GST_EVENT_FLUSH_STOP) {
      stop_at = i;
      buffers_before = g_array_index (f->sink->event_at, guint, i);
      segment_at = G_MAXUINT;
    } else if (GST_EVENT_TYPE (e) == GST_EVENT_SEGMENT && stop_at != G_MAXUINT
        && segment_at == G_MAXUINT) {
      const GstSegment *seg;

      gst_event_parse_segment (e, &seg);
      fail_unless_equals_uint64 (seg->base, GST_SECOND);
      segment_at = g_array_index (f->sink->event_at, guint, i);
    }
  }
  fail_unless (stop_at != G_MAXUINT);
  fail_unless (segment_at != G_MAXUINT, "no SEGMENT after the flush");
  /* Before the first buffer after the flush: input 2. */
  fail_unless_equals_int (segment_at, buffers_before);
  fail_unless (f->sink->indices->len > buffers_before);
  fail_unless_equals_uint64 (g_array_index (f->sink->indices, guint64,
          buffers_before), 2);
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* In arrival order a producer flushes alone, also while another one's
 * flush goes on: pad 0 begins a flush; pad 1 flushes, sends a SEGMENT
 * (base 1 s) and input 10, flushes again (input 10 goes with that flush),
 * sends a SEGMENT (base 2 s) and input 11; then pad 0 ends its flush and
 * sends input 12.  What pad 1 sent after its last FLUSH_STOP is not lost
 * with the flush that was still going on: input 11 goes out after the
 * join's FLUSH_STOP, first, behind pad 1's last SEGMENT; input 10 never
 * goes out.  (11 was lost, and with a buffer of pad 1 after it, that
 * went out behind no SEGMENT.) */
GST_START_TEST (test_arrival_what_a_pad_sent_after_its_flush_outlives_another)
{
  Funnel *f = funnel_new (2, "order", 1, NULL);
  GstSegment segment;
  guint i, k, stops = 0;

  for (i = 0; i < 2; i++)
    fail_unless_equals_int (gst_pad_push (f->pads[i], tbq_input_new (i)),
        GST_FLOW_OK);
  tbq_test_sink_wait_buffers (f->sink, 2);
  fail_unless (gst_pad_push_event (f->pads[0], gst_event_new_flush_start ()));
  for (i = 1; i <= 2; i++) {
    /* (Sent on, downstream already flushing refuses it: FALSE.) */
    gst_pad_push_event (f->pads[1], gst_event_new_flush_start ());
    fail_unless (gst_pad_push_event (f->pads[1],
            gst_event_new_flush_stop (TRUE)));
    gst_segment_init (&segment, GST_FORMAT_TIME);
    segment.base = i * GST_SECOND;
    fail_unless (gst_pad_push_event (f->pads[1],
            gst_event_new_segment (&segment)));
    fail_unless_equals_int (gst_pad_push (f->pads[1], tbq_input_new (9 + i)),
        GST_FLOW_OK);
  }
  fail_unless (gst_pad_push_event (f->pads[0],
          gst_event_new_flush_stop (TRUE)));
  funnel_go_on (f, 12, 4);
  TBQ_LOCK (f->sink);
  /* One FLUSH_STOP, after the first two buffers. */
  for (i = 0; i < f->sink->events->len; i++)
    if (GST_EVENT_TYPE (g_ptr_array_index (f->sink->events, i))
        == GST_EVENT_FLUSH_STOP) {
      fail_unless_equals_int (g_array_index (f->sink->event_at, guint, i), 2);
      stops++;
    }
  fail_unless_equals_int (stops, 1);
  /* 11 and 12 after it (the producers' order between them is arrival's),
   * each behind its producer's SEGMENT sent after the FLUSH_STOP; never
   * 10. */
  fail_unless_equals_int (f->sink->indices->len, 4);
  for (k = 2; k < 4; k++) {
    guint64 index = g_array_index (f->sink->indices, guint64, k);
    const GstSegment *seg = NULL;
    gboolean after_stop = FALSE;

    fail_unless (index == 11 || index == 12, "input %" G_GUINT64_FORMAT,
        index);
    /* The SEGMENT in force: the last one before the buffer, after the
     * FLUSH_STOP. */
    for (i = 0; i < f->sink->events->len
        && g_array_index (f->sink->event_at, guint, i) <= k; i++) {
      GstEvent *e = g_ptr_array_index (f->sink->events, i);

      if (GST_EVENT_TYPE (e) == GST_EVENT_FLUSH_STOP) {
        after_stop = TRUE;
        seg = NULL;
      } else if (GST_EVENT_TYPE (e) == GST_EVENT_SEGMENT && after_stop) {
        gst_event_parse_segment (e, &seg);
      }
    }
    fail_unless (seg != NULL, "input %" G_GUINT64_FORMAT " behind no SEGMENT",
        index);
    fail_unless_equals_uint64 (seg->base, index == 11 ? 2 * GST_SECOND : 0);
  }
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* Eight producers at full rate at tight limits (4 buffers, and 3 ms per
 * pad: each waits for room now for one limit, now for the other, and
 * the join lets them go one at a time): nothing hangs, every buffer comes
 * out in its producer's order, and the level stays within the limit (plus
 * what producers that found room at the same moment add). */
GST_START_TEST (test_arrival_eight_producers_at_tight_limits)
{
  guint n = tbq_scaled (2000, 200), i, j, level, peak = 0, last = 0;
  gint64 end;
  Producer p[8];
  guint64 next[8];
  Funnel *f = funnel_new (8, "order", 1, "max-size-buffers", 4,
      "max-size-bytes", 0, "max-size-time", (guint64) 3 * GST_MSECOND,
      NULL);
  gboolean running = TRUE;

  for (i = 0; i < 8; i++) {
    p[i].pad = f->pads[i];
    p[i].base = (guint64) i << 32;
    p[i].n = n;
    p[i].ok = 0;
    p[i].ret = GST_FLOW_OK;
    next[i] = p[i].base;
    p[i].thread = g_thread_new ("producer", producer_main, &p[i]);
  }
  /* (Sampled until every producer is through; a deadline that moves
   * while they make progress: a producer stopped for TBQ_WAIT_SECONDS is
   * a hang.) */
  end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;
  while (running) {
    guint sum = 0;

    g_object_get (f->join, "current-level-buffers", &level, NULL);
    peak = MAX (peak, level);
    for (i = 0; i < 8; i++)
      sum += p[i].ok;
    running = sum < 8 * n;
    if (sum != last) {
      last = sum;
      end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;
    }
    fail_unless (g_get_monotonic_time () < end, "the producers stopped at "
        "%u of %u buffers", sum, 8 * n);
    g_usleep (200);
  }
  for (i = 0; i < 8; i++) {
    g_thread_join (p[i].thread);
    fail_unless_equals_int (p[i].ret, GST_FLOW_OK);
    gst_pad_push_event (p[i].pad, gst_event_new_eos ());
  }
  fail_unless (peak <= 4 + 8, "a level of %u at a limit of 4", peak);
  tbq_test_sink_wait_eos (f->sink);
  TBQ_LOCK (f->sink);
  fail_unless_equals_int (f->sink->bad, 0);
  fail_unless_equals_int (f->sink->indices->len, 8 * n);
  for (j = 0; j < f->sink->indices->len; j++) {
    guint64 v = g_array_index (f->sink->indices, guint64, j);
    guint b = (guint) (v >> 32);

    fail_unless (b < 8);
    fail_unless (v == next[b], "producer %u out of its order", b);
    next[b]++;
  }
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* Producers waiting at a limit go on when it is raised, downstream still
 * held; a limit lowered holds them again. */
GST_START_TEST (test_arrival_a_raised_limit_lets_waiting_producers_go)
{
  Funnel *f = funnel_new (4, "order", 1, "max-size-buffers", 2,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  Producer p[4];
  guint i, total = 0;

  TBQ_LOCK (f->sink);
  f->sink->hold = TRUE;
  TBQ_UNLOCK (f->sink);
  for (i = 0; i < 4; i++) {
    p[i].pad = f->pads[i];
    p[i].base = (guint64) i << 32;
    p[i].n = 50;
    p[i].ok = 0;
    p[i].ret = GST_FLOW_OK;
    p[i].thread = g_thread_new ("producer", producer_main, &p[i]);
  }
  tbq_test_sink_wait_holding (f->sink);
  fail_unless (tbq_wait_property (f->join, "current-level-buffers", 2)
      <= 2 + 4);
  g_object_set (f->join, "max-size-buffers", 40, NULL);
  fail_unless (tbq_wait_property (f->join, "current-level-buffers", 40)
      <= 40 + 4);
  g_object_set (f->join, "max-size-buffers", 20, NULL);
  tbq_test_sink_release (f->sink);
  for (i = 0; i < 4; i++) {
    g_thread_join (p[i].thread);
    fail_unless_equals_int (p[i].ret, GST_FLOW_OK);
    total += p[i].ok;
    gst_pad_push_event (p[i].pad, gst_event_new_eos ());
  }
  fail_unless_equals_int (total, 200);
  tbq_test_sink_wait_eos (f->sink);
  TBQ_LOCK (f->sink);
  fail_unless_equals_int (f->sink->bad, 0);
  fail_unless_equals_int (f->sink->indices->len, 200);
  TBQ_UNLOCK (f->sink);
  funnel_free (f);
}

GST_END_TEST;

/* A sink pad with no split upstream in sequence order warns once, at its
 * first data: one that only passes events (a branch released before it
 * asked for its join) has nothing to order, and says nothing. */
GST_START_TEST (test_no_split_warned_at_the_first_data)
{
  GstElement *p = gst_parse_launch ("tbqjoin name=j ! fakesink", NULL);
  GstElement *j = gst_bin_get_by_name (GST_BIN (p), "j");
  GstPad *sink = gst_element_request_pad_simple (j, "sink_%u");
  GstPad *src = gst_pad_new ("src", GST_PAD_SRC);
  GstBus *bus = gst_element_get_bus (p);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  GstMessage *m;
  GstSegment seg;

  fail_unless_equals_int (gst_pad_link (src, sink), GST_PAD_LINK_OK);
  gst_pad_set_active (src, TRUE);
  fail_if (gst_element_set_state (p, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_pad_push_event (src, gst_event_new_stream_start ("w")));
  fail_unless (gst_pad_push_event (src, gst_event_new_caps (caps)));
  gst_caps_unref (caps);
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (src, gst_event_new_segment (&seg)));
  fail_unless (gst_pad_push_event (src,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
              gst_structure_new_empty ("only-events"))));
  /* (The event was handled on this thread: a warning would be posted.) */
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (m == NULL, "warned with no data");
  fail_unless_equals_int (gst_pad_push (src, gst_buffer_new ()),
      GST_FLOW_OK);
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (m != NULL, "no warning at the first data");
  gst_message_unref (m);
  fail_unless (gst_element_set_state (p, GST_STATE_NULL)
      == GST_STATE_CHANGE_SUCCESS);
  gst_pad_set_active (src, FALSE);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_element_release_request_pad (j, sink);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (j);
  gst_object_unref (p);
}

GST_END_TEST;

/* ---- a stream played again ---- */

typedef struct
{
  guint buffers;
  GPtrArray *events;            /* GstEventType as pointers */
} ReplayCount;

static GstPadProbeReturn
replay_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  ReplayCount *c = data;

  /* The streaming thread only, and the test reads after EOS (the bus). */
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER)
    c->buffers++;
  else
    g_ptr_array_add (c->events, GINT_TO_POINTER (GST_EVENT_TYPE
            (GST_PAD_PROBE_INFO_EVENT (info))));
  return GST_PAD_PROBE_OK;
}

/* Played to EOS, to READY (or NULL), and played again: each run sends
 * the whole stream, STREAM_START first, one EOS last (the old stream's
 * EOS is forgotten before the src task starts: READY->PAUSED activates
 * the src pad before the sink pads).  Alone, and behind a split. */
GST_START_TEST (test_played_again_after_eos)
{
  const gchar *middles[] = { "tbqjoin", "tbqparallel workers=2" };
  GstState between[] = { GST_STATE_READY, GST_STATE_NULL };
  guint m, run, n = 20;

  for (m = 0; m < G_N_ELEMENTS (middles); m++) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u ! "
        "video/x-raw,width=16,height=16 ! %s ! fakesink name=out", n,
        middles[m]);
    GstElement *p = gst_parse_launch (desc, NULL);
    GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
    GstPad *pad = gst_element_get_static_pad (out, "sink");
    GstBus *bus = gst_element_get_bus (p);
    ReplayCount c = { 0, g_ptr_array_new () };

    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER
        | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, replay_probe, &c, NULL);
    for (run = 0; run < 16; run++) {
      GstMessage *msg;

      c.buffers = 0;
      g_ptr_array_set_size (c.events, 0);
      fail_if (gst_element_set_state (p, GST_STATE_PLAYING)
          == GST_STATE_CHANGE_FAILURE);
      msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
      fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
          "%s, run %u: no EOS", middles[m], run);
      gst_message_unref (msg);
      fail_unless_equals_int (c.buffers, n);
      fail_unless (c.events->len >= 2);
      fail_unless_equals_int (GPOINTER_TO_INT (g_ptr_array_index (c.events,
                  0)), GST_EVENT_STREAM_START);
      fail_unless_equals_int (GPOINTER_TO_INT (g_ptr_array_index (c.events,
                  c.events->len - 1)), GST_EVENT_EOS);
      fail_unless (gst_element_set_state (p, between[run % 2])
          == GST_STATE_CHANGE_SUCCESS);
      gst_bus_set_flushing (bus, TRUE);
      gst_bus_set_flushing (bus, FALSE);
    }
    fail_unless (gst_element_set_state (p, GST_STATE_NULL)
        == GST_STATE_CHANGE_SUCCESS);
    g_ptr_array_unref (c.events);
    gst_bus_set_flushing (bus, TRUE);
    gst_object_unref (bus);
    gst_object_unref (pad);
    gst_object_unref (out);
    gst_object_unref (p);
    g_free (desc);
  }
}

GST_END_TEST;

static Suite *
tbqjoin_suite (void)
{
  Suite *s = suite_create ("tbqjoin");
  TCase *order = tbq_tcase (s, "order");
  TCase *events = tbq_tcase (s, "events");
  TCase *flow = tbq_tcase (s, "flow");
  TCase *arrival = tbq_tcase (s, "arrival");

  GST_PLUGIN_STATIC_REGISTER (tbqueue);
  tbq_workers_register ();
  tcase_add_test (order, test_order_one_branch);
  tcase_add_test (order, test_order_two_branches);
  tcase_add_test (order, test_order_three_branches);
  tcase_add_test (order, test_order_eight_branches);
  tcase_add_test (order, test_query_after_each_output_inside_the_push);
  tcase_add_test (order, test_drops_in_one_branch);
  tcase_add_test (order, test_two_outputs_per_input);
  tcase_add_test (order, test_merge_two_into_one);
  tcase_add_test (order, test_strip_metas_synchronous);
  tcase_add_test (order, test_strip_metas_with_queue_inside);
  tcase_add_test (order, test_queue_inside_keeps_order);
  tcase_add_test (events, test_custom_event_at_its_place);
  tcase_add_test (events, test_caps_and_segment_change);
  tcase_add_test (flow, test_flush_then_more_data);
  tcase_add_test (flow, test_release_pad_while_playing);
  tcase_add_test (flow, test_release_pad_with_numbers_in_flight);
  tcase_add_test (flow, test_downstream_error_reaches_branches);
  tcase_add_test (flow, test_window_bounds_a_stalled_branch);
  tcase_add_test (flow, test_nested_pair_binds_the_deepest);
  tcase_add_test (flow, test_stop_with_a_full_window);
  tcase_add_test (flow, test_a_marker_query_at_a_stopped_join_binds_nothing);
  tcase_add_test (arrival, test_arrival_every_buffer_in_branch_order);
  tcase_add_test (arrival, test_arrival_sticky_sent_where_they_differ);
  tcase_add_test (arrival, test_arrival_sticky_before_eos);
  tcase_add_test (arrival, test_arrival_limits_block_and_flush_unblocks);
  tcase_add_test (arrival, test_arrival_pad_requested_while_playing);
  tcase_add_test (arrival,
      test_flush_drops_what_a_pad_took_before_its_flush_start);
  tcase_add_test (arrival, test_sticky_events_outlive_a_flush);
  tcase_add_test (arrival, test_serialized_query_waits_for_its_pad);
  tcase_add_test (flow, test_allocation_query_at_once);
  tcase_add_test (arrival, test_arrival_stop_ends_a_wait);
  tcase_add_test (arrival,
      test_arrival_what_a_pad_sent_after_its_flush_outlives_another);
  tcase_add_test (arrival, test_arrival_eight_producers_at_tight_limits);
  tcase_add_test (arrival, test_arrival_time_limit_before_the_first_output);
  tcase_add_test (arrival,
      test_arrival_a_flush_of_one_pad_keeps_the_others_segment);
  tcase_add_test (arrival,
      test_arrival_a_raised_limit_lets_waiting_producers_go);
  tcase_add_test (flow, test_played_again_after_eos);
  tcase_add_test (flow, test_no_split_warned_at_the_first_data);
  return s;
}

TBQ_CHECK_MAIN (tbqjoin);

/* The soak harness: parallel chapters, the element's traffic through a
 * tbqsplit, a worker per branch and a tbqjoin.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A parallel chapter (half of them with --enable parallel; its plan is
 * soak-chapter.c's) links the element's src pad to a bin of a tbqsplit,
 * N branches (1 to 8) and a tbqjoin, whose src pad feeds our sink pad:
 *
 *   element ──► [ tbqsplit ─┬─ src_0 ─► worker ─► sink_0 ─┬─ tbqjoin ] ──► sinkpad
 *                           └─ src_k ─► [queue ─►] worker [─► queue] ─┘
 *
 * The split has the chapter's own limits, leaky and transfer modes,
 * max-in-flight, spill and buffering; each branch's worker
 * (soak-worker.c) its own delays, drops, shape, stripped metas and maybe
 * a queue (then it is not synchronous).  The bin is made in READY at
 * the chapter's start and goes at the next; it changes state before the
 * element (a bin changes its sinks first), with the rest of the chain.
 * Everything the verifier checks holds through it (the join puts the
 * outputs back in the producer's order); what the workers did is in the
 * log (fates), and the barriers compare it with the join's stats: gaps
 * are exactly the inputs the workers dropped or merged away, no output
 * is late, and a drained chain holds nothing and has no number in
 * flight.
 *
 * Branches are requested and released while PLAYING (ctl_lock held: no
 * flush meanwhile; data keeps flowing).  A release: the split's pad
 * first (it pushes what it took, then goes), then a drain event sent
 * into the worker, which comes out behind whatever the worker (its
 * queue) still had (a worker at EOS refuses it: then its EOS does): then
 * the join's pad, then the worker.  A request:
 * the worker, linked to a new join pad, then a new split pad linked to
 * it (it takes work once linked).
 *
 * Threads: everything here runs on the producer thread (chapter starts,
 * state changes, ops) or the flusher's (the drop counters, ctl_lock
 * held), but soak_parallel_dump() (any thread, failing).  The probe on a
 * worker's output runs on its streaming thread (par.lock).
 */
#include "soak.h"

#include <string.h>

#define DRAIN_EVENT "soak-worker-drain"

typedef struct
{
  GstElement *worker;           /* the worker, or its bin with a queue */
  GstPad *in, *out;             /* the worker's sink and src pads */
  GstPad *split_pad, *join_pad; /* the request pads it is between */
  /* par.lock: what came out of the worker last: its drain event, EOS. */
  gboolean drained, eos;
} Branch;

static struct
{
  GstElement *bin, *split, *join;
  Branch *branches[SOAK_MAX_BRANCHES];
  guint n;
  guint64 workers;              /* made so far (their seeds) */
  GstState state;               /* the bin's */
  /* Branch's drained and eos. */
  GMutex lock;
  GCond cond;
} par;

/* ---- the elements ---- */

static GstElement *
make (const gchar * factory, const gchar * name)
{
  GstElement *e = gst_element_factory_make (factory, name);

  if (e == NULL)
    soak_fail ("harness", "no element '%s' (the parallel feature needs "
        "the plugin's tbqsplit and tbqjoin)", factory);
  return e;
}

static guint64
stat_of (GstElement * element, const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;

  if (element == NULL)
    return 0;
  g_object_get (element, "stats", &s, NULL);
  if (s != NULL)
    gst_structure_get_uint64 (s, field, &v);
  gst_structure_free (s);
  return v;
}

static void
apply_split_limits (const SoakParallelPlan * p)
{
  g_object_set (par.split, "max-size-buffers", p->max_buffers,
      "max-size-bytes", p->max_bytes, "max-size-time", p->max_time,
      "max-in-flight", p->max_in_flight, NULL);
}

/* The split's chapter configuration (NULL state). */
static void
apply_split (const SoakParallelPlan * p)
{
  GObject *o = G_OBJECT (par.split);

  g_object_set (o, "leaky", p->leaky, "transfer", p->transfer,
      "use-buffering", p->buffering, NULL);
  if (p->buffering)
    g_object_set (o, "low-watermark", p->low_watermark, "high-watermark",
        p->high_watermark, NULL);
  if (p->spill) {
    gchar *tmpl = g_build_filename (g_get_tmp_dir (), "tbq-soak-XXXXXX",
        NULL);

    /* 16 sink blocks of the default 64 KiB: backlogs go past it. */
    g_object_set (o, "temp-template", tmpl, "sink-max-bytes",
        (guint64) 16 * 65536, NULL);
    g_free (tmpl);
  }
  apply_split_limits (p);
}

/* What comes out of a worker: the drain event of a released branch
 * (behind everything its worker had; it goes no further), and EOS (a
 * worker at EOS refuses the drain event: everything it had is out once
 * its EOS is). */
static GstPadProbeReturn
out_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
  Branch *b = data;
  gboolean drain = GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM
      && gst_event_has_name (event, DRAIN_EVENT);

  g_mutex_lock (&par.lock);
  if (drain)
    b->drained = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    b->eos = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START
      || GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    b->eos = FALSE;
  g_cond_broadcast (&par.cond);
  g_mutex_unlock (&par.lock);
  return drain ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
}

static void
link_or_fail (GstPad * src, GstPad * sink)
{
  GstPadLinkReturn r = gst_pad_link (src, sink);

  if (r != GST_PAD_LINK_OK)
    soak_fail ("harness", "cannot link %s:%s to %s:%s (%s)",
        GST_DEBUG_PAD_NAME (src), GST_DEBUG_PAD_NAME (sink),
        gst_pad_link_get_name (r));
}

/* A worker for a new branch: the element, or a bin of it and a queue. */
static GstElement *
make_worker (const SoakWorkerConfig * cfg)
{
  GstElement *w = soak_worker_new (cfg, soak.seed ^ (++par.workers
          * G_GUINT64_CONSTANT (0xB5AD4ECEDA1CE2A9)));
  GstElement *bin, *queue;
  GstPad *pad;

  if (cfg->queue == 0)
    return w;
  bin = gst_bin_new (NULL);
  queue = make ("queue", NULL);
  gst_bin_add_many (GST_BIN (bin), queue, w, NULL);
  if (cfg->queue == 1 ? !gst_element_link (queue, w)
      : !gst_element_link (w, queue))
    soak_fail ("harness", "cannot link a worker and its queue");
  pad = gst_element_get_static_pad (cfg->queue == 1 ? queue : w, "sink");
  gst_element_add_pad (bin, gst_ghost_pad_new ("sink", pad));
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (cfg->queue == 1 ? w : queue, "src");
  gst_element_add_pad (bin, gst_ghost_pad_new ("src", pad));
  gst_object_unref (pad);
  return bin;
}

/* A branch more: its worker linked to a new join pad, then a new split
 * pad linked to the worker (while playing, the split's branch takes work
 * once linked). */
static void
add_branch (const SoakWorkerConfig * cfg)
{
  Branch *b = g_new0 (Branch, 1);

  par.branches[par.n++] = b;
  b->worker = gst_object_ref (make_worker (cfg));
  gst_bin_add (GST_BIN (par.bin), b->worker);
  if (par.state > GST_STATE_NULL
      && !gst_element_sync_state_with_parent (b->worker))
    soak_fail ("harness", "a new worker cannot take its bin's state");
  b->in = gst_element_get_static_pad (b->worker, "sink");
  b->out = gst_element_get_static_pad (b->worker, "src");
  gst_pad_add_probe (b->out, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM
      | GST_PAD_PROBE_TYPE_EVENT_FLUSH, out_probe, b, NULL);
  b->join_pad = gst_element_request_pad_simple (par.join, "sink_%u");
  b->split_pad = gst_element_request_pad_simple (par.split, "src_%u");
  if (b->join_pad == NULL || b->split_pad == NULL)
    soak_fail ("harness", "no request pad of the split or the join");
  link_or_fail (b->out, b->join_pad);
  link_or_fail (b->split_pad, b->in);
  if (G_UNLIKELY (soak.trace)) {
    gchar *d = soak_worker_describe (cfg);

    g_print ("# trace: branch %s:%s added: %s\n",
        GST_DEBUG_PAD_NAME (b->split_pad), d);
    g_free (d);
  }
}

static void
branch_free (Branch * b)
{
  gst_object_unref (b->in);
  gst_object_unref (b->out);
  gst_object_unref (b->split_pad);
  gst_object_unref (b->join_pad);
  gst_object_unref (b->worker);
  g_free (b);
}

/* Release branch `i` while playing, losing nothing (see the top). */
static void
remove_branch (guint i)
{
  Branch *b = par.branches[i];
  gboolean sent;

  if (G_UNLIKELY (soak.trace))
    g_print ("# trace: branch %s:%s released\n",
        GST_DEBUG_PAD_NAME (b->split_pad));
  gst_element_release_request_pad (par.split, b->split_pad);
  g_mutex_lock (&par.lock);
  b->drained = FALSE;
  g_mutex_unlock (&par.lock);
  /* Refused by a worker at EOS (a new stream's STREAM_START may not have
   * reached it yet): then its EOS comes out behind what it had. */
  sent = gst_pad_send_event (b->in, gst_event_new_custom
      (GST_EVENT_CUSTOM_DOWNSTREAM, gst_structure_new_empty (DRAIN_EVENT)));
  g_mutex_lock (&par.lock);
  while (sent ? !b->drained : !b->eos)
    g_cond_wait (&par.cond, &par.lock);
  g_mutex_unlock (&par.lock);
  gst_pad_unlink (b->out, b->join_pad);
  gst_element_release_request_pad (par.join, b->join_pad);
  gst_element_set_state (b->worker, GST_STATE_NULL);
  gst_bin_remove (GST_BIN (par.bin), b->worker);
  branch_free (b);
  par.branches[i] = par.branches[--par.n];
  par.branches[par.n] = NULL;
}

/* ---- the chapter's chain ---- */

void
soak_parallel_setup (const SoakChapter * ch)
{
  const SoakParallelPlan *p = &ch->par;
  GstPad *pad;
  guint i;

  g_mutex_lock (&soak.vlock);
  soak.parallel = p->on;
  g_mutex_unlock (&soak.vlock);
  if (!p->on) {
    link_or_fail (soak.esrc, soak.sinkpad);
    return;
  }
  par.bin = gst_object_ref_sink (gst_bin_new ("soak-parallel"));
  par.split = make ("tbqsplit", "split");
  par.join = make ("tbqjoin", "join");
  gst_bin_add_many (GST_BIN (par.bin), par.split, par.join, NULL);
  apply_split (p);
  soak_watch_element (par.split, NULL);
  pad = gst_element_get_static_pad (par.split, "sink");
  gst_element_add_pad (par.bin, gst_ghost_pad_new ("sink", pad));
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (par.join, "src");
  soak_watch_element (par.join, pad);
  gst_element_add_pad (par.bin, gst_ghost_pad_new ("src", pad));
  gst_object_unref (pad);
  gst_element_set_bus (par.bin, soak.bus);
  par.state = GST_STATE_NULL;
  for (i = 0; i < p->branches; i++)
    add_branch (&p->workers[i]);
  pad = gst_element_get_static_pad (par.bin, "sink");
  link_or_fail (soak.esrc, pad);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (par.bin, "src");
  link_or_fail (pad, soak.sinkpad);
  gst_object_unref (pad);
}

void
soak_parallel_teardown (void)
{
  GstPad *peer = gst_pad_get_peer (soak.esrc);
  guint i;

  if (peer != NULL) {
    gst_pad_unlink (soak.esrc, peer);
    gst_object_unref (peer);
  }
  if ((peer = gst_pad_get_peer (soak.sinkpad)) != NULL) {
    gst_pad_unlink (peer, soak.sinkpad);
    gst_object_unref (peer);
  }
  if (par.bin == NULL)
    return;
  gst_element_set_state (par.bin, GST_STATE_NULL);
  for (i = 0; i < par.n; i++)
    branch_free (par.branches[i]);
  memset (par.branches, 0, sizeof par.branches);
  par.n = 0;
  gst_element_set_bus (par.bin, NULL);
  g_mutex_lock (&soak.vlock);
  soak.parallel = FALSE;
  g_mutex_unlock (&soak.vlock);
  /* The split and the join go with their bin. */
  par.split = par.join = NULL;
  gst_clear_object (&par.bin);
}

gboolean
soak_parallel_active (void)
{
  return par.bin != NULL;
}

void
soak_parallel_set_state (GstState state)
{
  GstStateChangeReturn ret;

  if (par.bin == NULL)
    return;
  /* What the split spilled before its file goes. */
  if (state <= GST_STATE_READY && par.state > GST_STATE_READY)
    soak.spilled += stat_of (par.split, "spill-bytes-written");
  ret = gst_element_set_state (par.bin, state);
  if (ret != GST_STATE_CHANGE_SUCCESS)
    soak_fail ("state", "changing the split, workers and join to %s "
        "returned %s", gst_element_state_get_name (state),
        gst_element_state_change_return_get_name (ret));
  par.state = state;
}

/* ---- while playing ---- */

void
soak_parallel_op_branch (void)
{
  gboolean add;

  if (par.bin == NULL)
    return;
  soak.op = "branch request or release";
  add = par.n == 1 || (par.n < SOAK_MAX_BRANCHES
      && soak_rand (&soak.rng, 2) == 0);
  g_mutex_lock (&soak.ctl_lock);
  if (add) {
    SoakWorkerConfig cfg;

    soak_worker_plan (&cfg, &soak.rng);
    add_branch (&cfg);
  } else {
    remove_branch ((guint) soak_rand (&soak.rng, par.n));
  }
  g_mutex_unlock (&soak.ctl_lock);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
}

void
soak_parallel_op_limits (void)
{
  if (par.bin == NULL)
    return;
  soak_parallel_plan_limits (&soak.ch.par, &soak.rng);
  apply_split_limits (&soak.ch.par);
}

/* ---- checks ---- */

guint64
soak_parallel_dropped (void)
{
  return stat_of (par.split, "dropped-upstream")
      + stat_of (par.split, "dropped-downstream");
}

guint64
soak_parallel_join_gaps (void)
{
  return stat_of (par.join, "gaps");
}

void
soak_parallel_check_drained (void)
{
  guint sb, sbytes, jb, jbytes, inflight;
  guint64 stime, late;

  if (par.bin == NULL)
    return;
  g_object_get (par.split, "current-level-buffers", &sb,
      "current-level-bytes", &sbytes, "current-level-time", &stime,
      "current-in-flight", &inflight, NULL);
  g_object_get (par.join, "current-level-buffers", &jb,
      "current-level-bytes", &jbytes, NULL);
  late = stat_of (par.join, "late");
  if (sb != 0 || sbytes != 0 || stime != 0)
    soak_fail ("levels", "after a drain query was answered the split "
        "reports %u buffers, %u bytes, %" G_GUINT64_FORMAT " ns queued",
        sb, sbytes, stime);
  if (inflight != 0)
    soak_fail ("levels", "after a drain query was answered %u of the "
        "split's numbers are still in flight", inflight);
  if (jb != 0 || jbytes != 0)
    soak_fail ("levels", "after a drain query was answered the join "
        "reports %u buffers, %u bytes held", jb, jbytes);
  if (late != 0)
    soak_fail ("late", "the join dropped %" G_GUINT64_FORMAT " outputs as "
        "late, where no worker sends an output after its input's push",
        late);
}

/* The queue of a worker that has one (a bin), or NULL. */
static GstElement *
worker_queue (Branch * b)
{
  GstElement *found = NULL;
  GList *l;

  if (!GST_IS_BIN (b->worker))
    return NULL;
  GST_OBJECT_LOCK (b->worker);
  for (l = GST_BIN_CHILDREN (b->worker); l != NULL && found == NULL;
      l = l->next) {
    GstElementFactory *f = gst_element_get_factory (l->data);

    if (f != NULL && g_strcmp0 (GST_OBJECT_NAME (f), "queue") == 0)
      found = gst_object_ref (l->data);
  }
  GST_OBJECT_UNLOCK (b->worker);
  return found;
}

static void
wait_task_stops (GstPad * pad, guint32 epoch)
{
  while (gst_pad_get_task_state (pad) == GST_TASK_STARTED
      && atomic_load_explicit (&soak.epoch, memory_order_relaxed) == epoch)
    g_usleep (1000);
}

/* Every branch is done with the stream: the split's branch tasks, and
 * the queue of a worker that has one, stopped after pushing EOS.  A
 * queue that has sent EOS on but not stopped yet takes a new stream's
 * items, then stops at that EOS and refuses them (queue's way, as in a
 * pipeline of queue alone; docs/parallel.md). */
void
soak_parallel_wait_eos (guint32 epoch)
{
  guint i;

  for (i = 0; i < par.n; i++) {
    GstElement *queue = worker_queue (par.branches[i]);

    wait_task_stops (par.branches[i]->split_pad, epoch);
    if (queue != NULL) {
      GstPad *sink = gst_element_get_static_pad (queue, "sink");
      GstPad *src = gst_element_get_static_pad (queue, "src");

      /* (One that got no EOS has none to stop at.) */
      if (GST_PAD_IS_EOS (sink))
        wait_task_stops (src, epoch);
      gst_object_unref (sink);
      gst_object_unref (src);
      gst_object_unref (queue);
    }
  }
}

void
soak_parallel_dump (void)
{
  guint i;

  if (par.bin == NULL)
    return;
  /* No pad's lock: a failure may come from a thread that holds one (a
   * GStreamer warning). */
  g_print ("# parallel: %u branches\n", par.n);
  for (i = 0; i < par.n; i++)
    g_print ("# branch %s:%s -> %s:%s\n",
        GST_DEBUG_PAD_NAME (par.branches[i]->split_pad),
        GST_DEBUG_PAD_NAME (par.branches[i]->join_pad));
  soak_print_stats ("split", par.split);
  soak_print_stats ("join", par.join);
}

gint
soak_parallel_leaky (const SoakChapter * ch)
{
  /* A buffer may go missing where either leaks; downstream's rules (a
   * sticky event leaked and sent again) as soon as one does. */
  return MAX (ch->leaky, ch->par.on ? ch->par.leaky : 0);
}

/* The soak harness: the worker of a parallel chapter's branch.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An element with one sink and one src pad doing what real workers do
 * (docs/parallel.md, "What a worker must do"), as its branch's
 * SoakWorkerConfig says: it waits a random time per input (an encoder
 * taking its time), now and then a long stall; drops inputs (QoS, a
 * rate), a list whole; makes two outputs of a buffer (its bytes cut in
 * two, as a parser would: the second without DISCONT) or merges two
 * buffers into one (the second, carrying the first's sequence meta too,
 * as an aggregator copies its inputs' metas); strips the metas (new
 * buffers of the same memories, the harness's own meta put back).  The
 * queue that makes a branch not synchronous is soak-parallel.c's: a bin
 * of a queue and the worker.
 *
 * Whatever it does to an input other than passing it on, it writes into
 * the input's log entry (`fate`, soak.h) before its chain returns: the
 * join moves past an input's number only after that (the split's done
 * mark comes when the push returned, a marker comes behind it through
 * the worker, a later output of the branch comes after it), so the
 * verifier, which checks a gap when a later item arrives, reads the fate
 * of every item in it.  Items of a flushed epoch write nothing.
 *
 * Threads: the chain, serialized events and the merge's held metas are
 * the sink pad's streaming thread's (its stream lock); FLUSH_START and
 * state changes come from other threads and end a stall (the lock).
 *
 * Injected faults (soak-inject.c), on the --inject-at-th buffer any
 * worker takes:
 *   worker-phantom   passed on, but logged as dropped   -> "worker"
 *   worker-reorder   held, and sent after the worker's next output
 *                    (the join drops it as late)        -> "loss"
 *   worker-miscount  dropped, but logged as a list member (no gap of its
 *                    own)                               -> "gaps"
 */
#include "soak.h"

#include <string.h>

typedef struct
{
  GstElement parent;
  GstPad *sinkpad, *srcpad;
  SoakWorkerConfig cfg;

  /* The streaming thread's (the sink pad's stream lock). */
  guint64 rng;
  GstBuffer *held;              /* merge: the first input's metas (no
                                 * memory: a pool's frame goes back) */
  GstBuffer *stash;             /* fault worker-reorder */

  /* lock: a stall's wait ends when flushing. */
  GMutex lock;
  GCond cond;
  gboolean flushing;
} SoakWorker;

typedef struct
{
  GstElementClass parent_class;
} SoakWorkerClass;

static GType soak_worker_get_type (void);
G_DEFINE_TYPE (SoakWorker, soak_worker, GST_TYPE_ELEMENT);
#define SOAK_WORKER(o) ((SoakWorker *) (o))

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Buffers every worker took, for the injected faults. */
static _Atomic guint64 fault_inputs;

/* ---- the log ---- */

static void
set_fate (GstBuffer * buf, SoakFate fate)
{
  guint64 seq = GST_BUFFER_OFFSET (buf);

  /* An item of a flushed epoch: nobody looks at it any more. */
  if (seq < atomic_load_explicit (&soak.floor, memory_order_relaxed))
    return;
  atomic_store_explicit (&soak_log_get (seq)->fate, (guint8) fate,
      memory_order_release);
  if (G_UNLIKELY (soak.trace))
    g_print ("# trace: worker: %" G_GUINT64_FORMAT " fate %d\n", seq, fate);
}

static gboolean
list_set_fate (GstBuffer ** buf, guint idx, gpointer data)
{
  set_fate (*buf, idx == 0 ? SOAK_FATE_DROPPED : SOAK_FATE_DROPPED_MEMBER);
  return TRUE;
}

/* ---- waiting ---- */

/* Wait `us`, or until a flush or a state change ends it. */
static void
worker_wait (SoakWorker * w, guint64 us)
{
  gint64 until = g_get_monotonic_time () + (gint64) us;

  if (us == 0)
    return;
  g_mutex_lock (&w->lock);
  while (!w->flushing && g_cond_wait_until (&w->cond, &w->lock, until));
  g_mutex_unlock (&w->lock);
}

static void
worker_set_flushing (SoakWorker * w, gboolean flushing)
{
  g_mutex_lock (&w->lock);
  w->flushing = flushing;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

/* An input's delay, sometimes a long stall. */
static void
worker_delay (SoakWorker * w)
{
  const SoakWorkerConfig *c = &w->cfg;

  if (c->stall_permille > 0 && soak_rand (&w->rng, 1000) < c->stall_permille)
    worker_wait (w, soak_log_range (&w->rng, 1, c->stall_max_ms) * 1000);
  else if (c->delay_max_us > 0)
    worker_wait (w, soak_log_range (&w->rng, 1, c->delay_max_us + 1) - 1);
}

static gboolean
worker_drops (SoakWorker * w)
{
  return w->cfg.drop_permille > 0
      && soak_rand (&w->rng, 1000) < w->cfg.drop_permille;
}

/* ---- metas ---- */

/* The pair's sequence meta type, once the plugin registered it. */
static GType
seq_meta_api (void)
{
  static GType api;

  if (api == 0)
    api = g_type_from_name ("GstTbqSeqMetaAPI");
  return api;
}

/* Copy `src`'s sequence metas onto `dest` (writable). */
static void
copy_seq_metas (GstBuffer * dest, GstBuffer * src)
{
  GstMetaTransformCopy copy = { FALSE, 0, -1 };
  gpointer state = NULL;
  GstMeta *meta;

  if (seq_meta_api () == 0)
    return;
  while ((meta = gst_buffer_iterate_meta_filtered (src, &state,
              seq_meta_api ())) != NULL)
    meta->info->transform_func (dest, meta, src,
        g_quark_from_static_string ("gst-copy"), &copy);
}

/* A new buffer of `buf`'s memories and fields, without its metas but
 * the harness's own (taken). */
static GstBuffer *
strip (GstBuffer * buf)
{
  GstBuffer *out = gst_buffer_copy_region (buf, GST_BUFFER_COPY_FLAGS
      | GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_MEMORY, 0, -1);
  GstReferenceTimestampMeta *m =
      gst_buffer_get_reference_timestamp_meta (buf, soak.meta_caps);

  if (m != NULL)
    gst_buffer_add_reference_timestamp_meta (out, m->reference,
        m->timestamp, m->duration);
  gst_buffer_unref (buf);
  return out;
}

static gboolean
strip_member (GstBuffer ** buf, guint idx, gpointer data)
{
  *buf = strip (*buf);
  return TRUE;
}

/* Bytes [off, off + len) of `buf`, with all its fields and metas. */
static GstBuffer *
part (GstBuffer * buf, gsize off, gsize len)
{
  GstBuffer *p = gst_buffer_copy_region (buf, GST_BUFFER_COPY_ALL, off, len);

  /* A region's copy keeps only what fits it; the harness wants them all. */
  GST_BUFFER_PTS (p) = GST_BUFFER_PTS (buf);
  GST_BUFFER_DTS (p) = GST_BUFFER_DTS (buf);
  GST_BUFFER_DURATION (p) = GST_BUFFER_DURATION (buf);
  GST_BUFFER_OFFSET (p) = GST_BUFFER_OFFSET (buf);
  GST_BUFFER_OFFSET_END (p) = GST_BUFFER_OFFSET_END (buf);
  if (off > 0)
    GST_BUFFER_FLAG_UNSET (p, GST_BUFFER_FLAG_DISCONT);
  return p;
}

/* ---- faults ---- */

/* An injected fault took `buf` (its push result in *ret): TRUE. */
static gboolean
worker_fault (SoakWorker * w, GstBuffer * buf, GstFlowReturn * ret)
{
  const gchar *f = soak.inject;
  guint64 n;

  if (w->stash != NULL) {
    /* worker-reorder: the held one after this one. */
    GstBuffer *held = w->stash;

    w->stash = NULL;
    *ret = gst_pad_push (w->srcpad, buf);
    if (*ret == GST_FLOW_OK)
      *ret = gst_pad_push (w->srcpad, held);
    else
      gst_buffer_unref (held);
    return TRUE;
  }
  if (f == NULL || !g_str_has_prefix (f, "worker-"))
    return FALSE;
  n = atomic_fetch_add_explicit (&fault_inputs, 1, memory_order_relaxed) + 1;
  if (n != soak.inject_at)
    return FALSE;
  *ret = GST_FLOW_OK;
  if (g_str_equal (f, "worker-phantom")) {
    set_fate (buf, SOAK_FATE_DROPPED);
    *ret = gst_pad_push (w->srcpad, buf);
  } else if (g_str_equal (f, "worker-reorder")) {
    w->stash = buf;
  } else {
    set_fate (buf, SOAK_FATE_DROPPED_MEMBER);
    gst_buffer_unref (buf);
  }
  return TRUE;
}

/* ---- the pads ---- */

static GstFlowReturn
worker_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  SoakWorker *w = SOAK_WORKER (parent);
  GstFlowReturn ret;
  gsize size, cut;

  worker_delay (w);
  if (worker_fault (w, buf, &ret))
    return ret;
  if (worker_drops (w)) {
    set_fate (buf, SOAK_FATE_DROPPED);
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }
  if (w->cfg.shape == SOAK_SHAPE_MERGE) {
    if (w->held == NULL) {
      /* Its metas only: the buffer itself is merged away. */
      w->held = gst_buffer_new ();
      copy_seq_metas (w->held, buf);
      set_fate (buf, SOAK_FATE_MERGED);
      gst_buffer_unref (buf);
      return GST_FLOW_OK;
    }
    buf = gst_buffer_make_writable (buf);
    copy_seq_metas (buf, w->held);
    gst_clear_buffer (&w->held);
  }
  if (w->cfg.strip)
    buf = strip (buf);
  size = gst_buffer_get_size (buf);
  if (w->cfg.shape != SOAK_SHAPE_PARTS || size < 2)
    return gst_pad_push (w->srcpad, buf);
  cut = size / 2;
  set_fate (buf, SOAK_FATE_PARTS);
  ret = gst_pad_push (w->srcpad, part (buf, 0, cut));
  if (ret == GST_FLOW_OK)
    ret = gst_pad_push (w->srcpad, part (buf, cut, size - cut));
  gst_buffer_unref (buf);
  return ret;
}

/* A list: delayed, dropped or stripped whole; never cut or merged. */
static GstFlowReturn
worker_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  SoakWorker *w = SOAK_WORKER (parent);

  worker_delay (w);
  /* An empty list is no input of its own for the join: never dropped. */
  if (gst_buffer_list_length (list) > 0 && worker_drops (w)) {
    gst_buffer_list_foreach (list, list_set_fate, NULL);
    gst_buffer_list_unref (list);
    return GST_FLOW_OK;
  }
  if (w->cfg.strip) {
    list = gst_buffer_list_make_writable (list);
    gst_buffer_list_foreach (list, strip_member, NULL);
  }
  return gst_pad_push_list (w->srcpad, list);
}

static gboolean
worker_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  SoakWorker *w = SOAK_WORKER (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      worker_set_flushing (w, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      worker_set_flushing (w, FALSE);
      /* Under the stream lock: what it held is of the flushed epoch. */
      gst_clear_buffer (&w->held);
      gst_clear_buffer (&w->stash);
      break;
    case GST_EVENT_EOS:
      /* The first of a merge gets no second: it stays merged away. */
      gst_clear_buffer (&w->held);
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static GstStateChangeReturn
worker_change_state (GstElement * element, GstStateChange transition)
{
  SoakWorker *w = SOAK_WORKER (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    worker_set_flushing (w, TRUE);
  else if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    worker_set_flushing (w, FALSE);
  ret = GST_ELEMENT_CLASS (soak_worker_parent_class)->change_state (element,
      transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    /* The pads are inactive: no chain runs. */
    gst_clear_buffer (&w->held);
    gst_clear_buffer (&w->stash);
  }
  return ret;
}

/* ---- the object ---- */

static void
soak_worker_finalize (GObject * object)
{
  SoakWorker *w = SOAK_WORKER (object);

  gst_clear_buffer (&w->held);
  gst_clear_buffer (&w->stash);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  G_OBJECT_CLASS (soak_worker_parent_class)->finalize (object);
}

static void
soak_worker_class_init (SoakWorkerClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = soak_worker_finalize;
  element_class->change_state = worker_change_state;
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Soak worker",
      "Filter", "A parallel branch's worker: delays, drops, two outputs, "
      "merges, stripped metas", "The tbqueue authors");
}

static void
soak_worker_init (SoakWorker * w)
{
  w->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (w->sinkpad, worker_chain);
  gst_pad_set_chain_list_function (w->sinkpad, worker_chain_list);
  gst_pad_set_event_function (w->sinkpad, worker_event);
  GST_PAD_SET_PROXY_CAPS (w->sinkpad);
  GST_PAD_SET_PROXY_ALLOCATION (w->sinkpad);
  gst_element_add_pad (GST_ELEMENT (w), w->sinkpad);
  w->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  GST_PAD_SET_PROXY_CAPS (w->srcpad);
  gst_element_add_pad (GST_ELEMENT (w), w->srcpad);
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
}

GstElement *
soak_worker_new (const SoakWorkerConfig * cfg, guint64 seed)
{
  SoakWorker *w = g_object_new (soak_worker_get_type (), NULL);

  w->cfg = *cfg;
  w->rng = seed;
  return GST_ELEMENT (w);
}

gchar *
soak_worker_describe (const SoakWorkerConfig * cfg)
{
  static const gchar *shapes[] = { "pass", "parts", "merge" };
  static const gchar *queues[] = { "", " queue-before", " queue-after" };

  return g_strdup_printf ("%s delay<=%uus stalls %u/1000 up to %ums drops "
      "%u/1000%s%s", shapes[cfg->shape], cfg->delay_max_us,
      cfg->stall_permille, cfg->stall_max_ms, cfg->drop_permille,
      cfg->strip ? " strip" : "", queues[cfg->queue]);
}

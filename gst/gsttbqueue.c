/* tbqueue: a two-layer drop-in replacement for queue.  This file: the
 * element object, its signals, and its state changes (the two-layer
 * queue's life).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where the rest is: gsttbqueue-private.h (the instance, threads and
 * locks), gsttbqueue-properties.c (the property table: specs, where each
 * value lives, when a change applies), gsttbqueue-enums.c (the enums of
 * the properties), gsttbqueue-sink.c and gsttbqueue-src.c (the pads),
 * gsttbqueue-copytask.c (the copy task), gsttbqueue-levels.c and
 * gsttbqueue-leaks.c (levels, limits, leaky modes), gsttbqueue-stats.c
 * (the stats fields' table, the `stats` structure, the levels message),
 * gsttbqueue-dequeue.c (records back into items, flushing), gsttbqrecord.c
 * (the record format), gsttbqmemory.c (the sink-memory allocator).
 */

/**
 * SECTION:element-tbqueue
 * @title: tbqueue
 *
 * A drop-in replacement for #queue that keeps the pushing thread fast and
 * its caches hot.  Like queue, it decouples its sink and src pads with a
 * thread, queues buffers, events and serialized queries in order, and has
 * the same properties, signals, limits, leaky modes and flushing behaviour:
 * rename `queue` to `tbqueue` in a pipeline and everything keeps working.
 *
 * Inside, the queue has two layers.  The upstream streaming thread writes
 * each item as a record into a *small source pool* (16 KiB by default) whose
 * few blocks it reuses most-recently-returned first, so they stay in its
 * cache however large the backlog grows.  A copy task moves published
 * records, in batches, into a *large sink pool* that holds the backlog and
 * grows on demand up to #GstTbQueue:sink-max-bytes, giving idle blocks back
 * to the system when the backlog drains.  The src pad task reads the sink
 * pool and pushes downstream.  The pushing thread takes no lock for a
 * buffer, and makes a system call only when downstream is idle waiting for
 * data and buffers come sparsely: then it wakes the src pad task, which
 * moves the new records itself.  While buffers come densely the src pad task
 * naps instead, for at most #GstTbQueue:max-coalesce-latency, and the
 * pushing thread makes no system call at all; events, queries and flushes
 * end a nap at once.  In a live stream it naps only when that property is
 * set (the latency answer then includes it); at the default the latency
 * answer is queue's.
 *
 * Buffers travel by value or by reference (#GstTbQueue:transfer).  By value
 * ("copy"), the buffer's fields, metas, memory layout and bytes are written
 * once, by the pushing thread (a frame into memory of the sink pool of its
 * own, an extent), and the upstream buffer is released at once, back to
 * its pool while still hot; downstream receives a buffer whose memory lives
 * in the sink pool (no third copy), with every meta a deep copy keeps
 * (#GstVideoMeta with its strides, crop, timecode...) and as many memories
 * as it had.  Nothing is ever lost: a buffer with a meta that cannot be
 * copied, or in special memory (DMA-buf and other fd memory, memory that
 * cannot be mapped, memory the caps name, such as GL or VA memory), travels
 * by reference.  By reference, the very #GstBuffer travels, as with queue.
 * The default, "auto", copies a buffer when giving it back at once
 * matters: it is small (#GstTbQueue:copy-threshold), or it belongs to a
 * #GstBufferPool of a live source (a camera's capture queue, whose frames
 * a stalled consumer would otherwise hold) of which the element already
 * holds half (it never holds more than max-buffers / 2 of a live source's
 * bounded pool); the rest (a pool's buffers while downstream keeps up, a
 * source that is not live, which waits for its pool as behind queue, large
 * buffers nobody waits for) is referenced.  A frame larger than
 * the sink pool can hold
 * (#GstTbQueue:sink-max-bytes) is referenced, with a warning.
 *
 * Data is queued until one of #GstTbQueue:max-size-buffers,
 * #GstTbQueue:max-size-bytes or #GstTbQueue:max-size-time is reached (by
 * default 200 buffers, 10 MB or one second), counting everything between the
 * two pads: both layers and what the copy task holds.  A full sink pool is an
 * overrun too.  #GstTbQueue:leaky chooses between blocking the pushing thread
 * (the default), dropping new buffers, or dropping the oldest.  The
 * #GstTbQueue::underrun, #GstTbQueue::running, #GstTbQueue::overrun and
 * #GstTbQueue::pushing signals are emitted as queue emits them, from the
 * streaming threads.
 *
 * Both of tbqueue's threads can be placed on CPUs and given a scheduling
 * policy and priority with #GstTbQueue:copy-task-cpus,
 * #GstTbQueue:src-task-cpus and their -policy, -priority and -nice
 * siblings (from gst-launch-1.0 too), or by an application the GStreamer
 * way: both tasks post STREAM_STATUS messages (ENTER from their own
 * thread, after the properties' placement), and a sync bus handler may
 * set a #GstTaskPool of its own on CREATE.  What the system refuses is a warning on the bus.
 *
 * Prefer queue (or #GstTbQueue:max-coalesce-latency=0) when each single
 * buffer must arrive with the least possible delay while buffers come
 * densely, and when traffic is tiny.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! tbqueue ! videoconvert ! x264enc ! fakesink
 * ]| A camera into an encoder: the capture thread only writes records, the
 * encoder runs in the src pad task.
 * |[
 * gst-launch-1.0 videotestsrc is-live=true num-buffers=300 ! tbqueue \
 *     max-size-time=2000000000 leaky=downstream ! videoconvert ! jpegenc ! \
 *     fakesink
 * ]| A live stream that keeps at most two seconds and drops the oldest
 * frames when the encoder falls behind.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttbqueue-private.h"
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-group.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"
#include "gsttbqueue-placement.h"
#include "gsttbqueue-properties.h"
#include "gsttbqueue-sink.h"
#include "gsttbqueue-src.h"
#include "gsttbqueue-stats.h"
#include "gsttbqmemory.h"
#include "gsttbqrecord.h"

GST_DEBUG_CATEGORY (gst_tbqueue_debug);
GST_DEBUG_CATEGORY (gst_tbqueue_dataflow);

GstStaticPadTemplate gst_tbqueue_sink_template =
GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS_ANY);

static GstStaticPadTemplate srctemplate = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS_ANY);

guint gst_tbqueue_signals[LAST_SIGNAL] = { 0 };

/* GstElement's class. */
static GstElementClass *parent_class = NULL;
/* The Doc-uri when not the installed file's (plugin.c); set before the
 * class is made, never freed. */
static gchar *doc_uri;

void
gst_tbqueue_set_doc_file (const gchar * path)
{
  gchar *abs = g_canonicalize_filename (path, NULL);

  g_free (doc_uri);
  doc_uri = g_filename_to_uri (abs, NULL, NULL);
  g_free (abs);
}

const gchar *
gst_tbqueue_doc_uri (void)
{
  return doc_uri != NULL ? doc_uri : GST_TBQUEUE_DOC_URI;
}

static void gst_tbqueue_base_class_init (GstTbQueueClass * klass,
    gpointer data);
static void gst_tbqueue_base_init (GstTbQueue * tbq, GstTbQueueClass * klass);
static void gst_tbqueue_class_init (GstTbQueueClass * klass, gpointer data);
static void gst_tbqueue_init (GstTbQueue * tbq, GstTbQueueClass * klass);

/* The queue, abstract: tbqueue and tbqsplit derive from it. */
GType
gst_tbqueue_base_get_type (void)
{
  static GType type = 0;

  if (g_once_init_enter (&type)) {
    GType t = g_type_register_static_simple (GST_TYPE_ELEMENT,
        g_intern_static_string ("GstTbQueueBase"), sizeof (GstTbQueueClass),
        (GClassInitFunc) gst_tbqueue_base_class_init, sizeof (GstTbQueue),
        (GInstanceInitFunc) gst_tbqueue_base_init, G_TYPE_FLAG_ABSTRACT);

    GST_DEBUG_CATEGORY_INIT (gst_tbqueue_debug, "tbqueue", 0,
        "tbqueue element");
    GST_DEBUG_CATEGORY_INIT (gst_tbqueue_dataflow, "tbqueue_dataflow", 0,
        "dataflow inside the tbqueue element");
    g_once_init_leave (&type, t);
  }
  return type;
}

/* tbqueue: the queue with one src pad. */
GType
gst_tbqueue_get_type (void)
{
  static GType type = 0;

  if (g_once_init_enter (&type)) {
    GType t = g_type_register_static_simple (GST_TYPE_TBQUEUE_BASE,
        g_intern_static_string ("GstTbQueue"), sizeof (GstTbQueueClass),
        (GClassInitFunc) gst_tbqueue_class_init, sizeof (GstTbQueue),
        (GInstanceInitFunc) gst_tbqueue_init, 0);

    g_once_init_leave (&type, t);
  }
  return type;
}

GST_ELEMENT_REGISTER_DEFINE (tbqueue, "tbqueue", GST_RANK_NONE,
    GST_TYPE_TBQUEUE);

static void gst_tbqueue_finalize (GObject * object);
static void gst_tbqueue_close (GstTbQueue * tbq);
static void gst_tbqueue_dispatch_properties_changed (GObject * object,
    guint n_pspecs, GParamSpec ** pspecs);
static gboolean gst_tbqueue_element_query (GstElement * element,
    GstQuery * query);
static GstStateChangeReturn gst_tbqueue_change_state (GstElement * element,
    GstStateChange transition);
static gboolean gst_tbqueue_post_message (GstElement * element,
    GstMessage * message);

/* queue's signals, same names and signatures */
static void
install_signals (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue::underrun:
   * @tbqueue: the tbqueue instance
   *
   * The queue became empty: it holds less data than the min-threshold-*
   * properties require (by default: nothing).  Emitted from the src pad task.
   *
   * Since: 0.1
   */
  gst_tbqueue_signals[SIGNAL_UNDERRUN] =
      g_signal_new ("underrun", G_TYPE_FROM_CLASS (gobject_class), G_SIGNAL_RUN_FIRST,
      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * GstTbQueue::running:
   * @tbqueue: the tbqueue instance
   *
   * Enough data (min-threshold-*) is queued again, or the pushing thread may
   * go on after waiting for room.  Emitted from either streaming thread.
   *
   * Since: 0.1
   */
  gst_tbqueue_signals[SIGNAL_RUNNING] =
      g_signal_new ("running", G_TYPE_FROM_CLASS (gobject_class), G_SIGNAL_RUN_FIRST,
      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * GstTbQueue::overrun:
   * @tbqueue: the tbqueue instance
   *
   * The queue is full: a max-size-* limit is reached, or the sink pool is at
   * sink-max-bytes.  Emitted from the upstream streaming thread, before it
   * blocks or leaks.
   *
   * Since: 0.1
   */
  gst_tbqueue_signals[SIGNAL_OVERRUN] =
      g_signal_new ("overrun", G_TYPE_FROM_CLASS (gobject_class), G_SIGNAL_RUN_FIRST,
      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * GstTbQueue::pushing:
   * @tbqueue: the tbqueue instance
   *
   * The queue has enough data to start pushing again.  Emitted from the src
   * pad task.
   *
   * Since: 0.1
   */
  gst_tbqueue_signals[SIGNAL_PUSHING] =
      g_signal_new ("pushing", G_TYPE_FROM_CLASS (gobject_class), G_SIGNAL_RUN_FIRST,
      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
gst_tbqueue_base_class_init (GstTbQueueClass * klass, gpointer data)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  parent_class = g_type_class_peek_parent (klass);
  gobject_class->set_property = gst_tbqueue_set_property;
  gobject_class->get_property = gst_tbqueue_get_property;
  gobject_class->dispatch_properties_changed =
      gst_tbqueue_dispatch_properties_changed;
  gobject_class->finalize = gst_tbqueue_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_tbqueue_change_state);
  element_class->post_message = GST_DEBUG_FUNCPTR (gst_tbqueue_post_message);
  element_class->query = GST_DEBUG_FUNCPTR (gst_tbqueue_element_query);

  install_signals (gobject_class);
  gst_tbqueue_install_properties (gobject_class);

  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_LEAKY, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_TRANSFER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_SCHED_POLICY, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_BASE, 0);
  gst_tbq_memory_init_once ();
  gst_tbq_record_init_once ();
}

static void
gst_tbqueue_class_init (GstTbQueueClass * klass, gpointer data)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gst_element_class_set_static_metadata (element_class,
      "Two-layer queue", "Generic",
      "Queue with a small hot source pool and a large backlog pool",
      "The tbqueue authors");
  /* gst-inspect-1.0's Doc-uri line: the installed docs/element.md, or the
   * build tree's copy (gst_tbqueue_set_doc_file). */
  gst_element_class_add_metadata (element_class,
      GST_ELEMENT_METADATA_DOC_URI, gst_tbqueue_doc_uri ());
  gst_element_class_add_static_pad_template (element_class, &srctemplate);
  gst_element_class_add_static_pad_template (element_class,
      &gst_tbqueue_sink_template);
  gst_tbqueue_src_class_init (klass);
}

/* The sink pad, from the element's "sink" template (every element derived
 * from the queue has one). */
static void
gst_tbqueue_base_init (GstTbQueue * tbq, GstTbQueueClass * klass)
{
  tbq->sinkpad = gst_pad_new_from_template (gst_element_class_get_pad_template
      (GST_ELEMENT_CLASS (klass), "sink"), "sink");
  gst_tbqueue_sink_set_functions (tbq->sinkpad);
  GST_PAD_SET_PROXY_CAPS (tbq->sinkpad);
  gst_element_add_pad (GST_ELEMENT (tbq), tbq->sinkpad);

  gst_tbqueue_buffering_init (tbq);
  gst_tbqueue_properties_init (tbq);
  atomic_init (&tbq->srcresult, GST_FLOW_FLUSHING);

  pthread_mutex_init (&tbq->qlock, NULL);
  /* Monotonic: tbqsplit's waits on these have deadlines. */
  tbq_cond_init_monotonic (&tbq->item_del);
  pthread_cond_init (&tbq->query_handled, NULL);
  tbq_cond_init_monotonic (&tbq->sink_moved);
  gst_tbqueue_placement_init (tbq);
  gst_tbqueue_reset_levels (tbq);
}

static void
gst_tbqueue_init (GstTbQueue * tbq, GstTbQueueClass * klass)
{
  tbq->srcpad = gst_pad_new_from_static_template (&srctemplate, "src");
  gst_tbqueue_src_set_functions (tbq->srcpad);
  GST_PAD_SET_PROXY_CAPS (tbq->srcpad);
  gst_element_add_pad (GST_ELEMENT (tbq), tbq->srcpad);
}

static void
gst_tbqueue_finalize (GObject * object)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);

  gst_tbqueue_stats_stop_posting (tbq);
  gst_tbqueue_close (tbq);
  pthread_mutex_destroy (&tbq->qlock);
  pthread_cond_destroy (&tbq->item_del);
  pthread_cond_destroy (&tbq->query_handled);
  pthread_cond_destroy (&tbq->sink_moved);
  gst_tbqueue_placement_clear (tbq);
  gst_tbqueue_properties_clear (tbq);
  gst_tbqueue_buffering_clear (tbq);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- the two-layer queue's life ---- */

/* Blocks of `block` bytes to hold `bytes` (rounded up, or down), at most
 * what a size_t can count: no overflow. */
static gsize
blocks_for (guint64 bytes, guint64 block, gboolean round_up)
{
  guint64 n = bytes / block + (round_up && bytes % block != 0);

  return (gsize) MIN (n, (guint64) (G_MAXSIZE / block));
}

/* What libtbq cannot check under the properties' own names: values that
 * are only wrong together, which may be set in any order (a value wrong
 * alone is refused as it is set, gsttbqueue-properties.c). */
static gboolean
check_geometry (GstTbQueue * tbq, gchar * msg, gsize msg_size)
{
  guint64 sink_block = tbq->sink_block_size;

  if (tbq->sink_min_bytes > tbq->sink_max_bytes) {
    g_snprintf (msg, msg_size, "sink-min-bytes (%" G_GUINT64_FORMAT
        ") is larger than sink-max-bytes (%" G_GUINT64_FORMAT ")",
        tbq->sink_min_bytes, tbq->sink_max_bytes);
    return FALSE;
  }
  if (tbq->sink_max_bytes / sink_block < 2) {
    g_snprintf (msg, msg_size, "sink-max-bytes (%" G_GUINT64_FORMAT
        ") must hold at least two sink blocks of %" G_GUINT64_FORMAT
        " bytes", tbq->sink_max_bytes, sink_block);
    return FALSE;
  }
  return TRUE;
}

/* libtbq's configuration from the properties (object lock).  FALSE, with
 * the reason in `msg`, for an impossible geometry. */
static gboolean
locked_open_config (GstTbQueue * tbq, TbqConfig * cfg, gchar * msg,
    gsize msg_size)
{
  tbq_config_init (cfg);
  if (!check_geometry (tbq, msg, msg_size))
    return FALSE;
  cfg->source.block_size = tbq->source_block_size;
  cfg->source.min_blocks = tbq->source_blocks;
  cfg->source.max_blocks = tbq->source_blocks;
  cfg->source.max_idle_blocks = tbq->source_blocks;
  cfg->sink.block_size = tbq->sink_block_size;
  cfg->sink.min_blocks = blocks_for (tbq->sink_min_bytes,
      tbq->sink_block_size, TRUE);
  cfg->sink.max_blocks = blocks_for (tbq->sink_max_bytes,
      tbq->sink_block_size, FALSE);
  cfg->sink.max_idle_blocks = tbq->idle_blocks;
  if (tbq->publish_batch == 1) {
    cfg->publish = TBQ_PUBLISH_EVERY_RECORD;
  } else if (tbq->publish_batch == 0) {
    cfg->publish = TBQ_PUBLISH_AT_HANDOFF;
  } else {
    cfg->publish = TBQ_PUBLISH_EVERY_N;
    cfg->publish_every = tbq->publish_batch;
  }
  cfg->wake = TBQ_WAKE_ON_DEMAND;
  cfg->max_coalesce_ns = (int64_t) gst_tbqueue_locked_coalesce_bound (tbq);
  cfg->backpressure = TBQ_BACKPRESSURE_DROP;
  cfg->max_writers = 1;
  /* No spinning before a sleep.  With coalescing, a src task that waits
   * while buffers come densely naps, and one that waits while they come
   * sparsely would spin in vain; the copy task is woken per half source
   * pool.  Spinning only cost the CPU it ran on, the pushing thread's (the
   * woken task runs there): 2,300 instructions per buffer at 1 kHz, and a
   * worse latency tail (docs/benchmarks.md, "Latency"). */
  cfg->spin_iterations = 0;
  return TRUE;
}

/* What libtbq refused, with the properties it comes from. */
static void
name_geometry (GstTbQueue * tbq, const gchar * reason, gchar * msg,
    gsize msg_size)
{
  g_snprintf (msg, msg_size, "source-block-size=%u source-blocks=%u "
      "sink-block-size=%u sink-min-bytes=%" G_GUINT64_FORMAT
      " sink-max-bytes=%" G_GUINT64_FORMAT ": %s", tbq->source_block_size,
      tbq->source_blocks, tbq->sink_block_size, tbq->sink_min_bytes,
      tbq->sink_max_bytes, reason);
}

/* TbqSpillConfig.owned: what a record owns stays in memory. */
static uint32_t
spill_owned (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  return gst_tbq_record_owned_bytes (type, data, size);
}

/* TbqSpillConfig.on_error, on libtbq's spill thread: a write failed (the
 * queue fills up in memory, and is full when that is), or works again. */
static void
spill_error (int failed, const char *msg, void *user_data)
{
  GstTbQueue *tbq = user_data;

  if (failed)
    GST_ELEMENT_WARNING (tbq, RESOURCE, WRITE,
        ("Cannot write to the spill file: the backlog stays in memory, and "
            "the queue is full when the sink pool is"), ("%s", msg));
  else
    GST_ELEMENT_INFO (tbq, RESOURCE, WRITE, ("Spilling again"), ("%s",
            msg));
}

/* TbqSpillConfig.on_run, on libtbq's spill thread (no lock of the element
 * held, as for the messages of spill_error): a run of the spill began or
 * ended.  The log line and the "tbqueue-spill" element message. */
static void
spill_run (const TbqSpillRun * run, void *user_data)
{
  GstTbQueue *tbq = user_data;
  const gchar *reason;
  gchar *location;
  guint64 bytes;
  GstStructure *s;

  GST_OBJECT_LOCK (tbq);
  location = g_strdup (tbq->temp_location);
  GST_OBJECT_UNLOCK (tbq);
  if (run->active) {
    reason = run->reason == TBQ_SPILL_EXTENT ? "frame" : "sink-pool";
    bytes = run->budget_used;
    GST_INFO_OBJECT (tbq, "spilling to %s: the sink pool holds %"
        G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes (%s)", location,
        run->budget_used, run->budget_limit,
        run->reason == TBQ_SPILL_EXTENT ? "a frame found no room"
        : "three quarters full");
  } else {
    reason = run->reason == TBQ_SPILL_DISCARDED ? "flushed" : "read-back";
    bytes = run->bytes_written;
    GST_INFO_OBJECT (tbq, "the backlog is back in memory: %" G_GUINT64_FORMAT
        " bytes went through %s (%s)", run->bytes_written, location,
        run->reason == TBQ_SPILL_DISCARDED ? "flushed" : "read back");
  }
  s = gst_structure_new ("tbqueue-spill", "location", G_TYPE_STRING, location,
      "spilling", G_TYPE_BOOLEAN, run->active != 0, "reason", G_TYPE_STRING,
      reason, "bytes", G_TYPE_UINT64, bytes, NULL);
  gst_element_post_message (GST_ELEMENT_CAST (tbq),
      gst_message_new_element (GST_OBJECT_CAST (tbq), s));
  g_free (location);
}

/* Spill to a file made from the template, if one is set: FALSE, with the
 * error posted, when the file cannot be made.  temp-location names the
 * file from here on (a kept one until the next start). */
static gboolean
open_spill (GstTbQueue * tbq, TbqQueue * q)
{
  TbqSpillConfig sc;
  gchar *tmpl;
  char msg[512];
  TbqStatus st;

  tbq_spill_config_init (&sc);
  GST_OBJECT_LOCK (tbq);
  tmpl = g_strdup (tbq->temp_template);
  sc.remove = tbq->temp_remove;
  sc.max_bytes = tbq->spill_max_bytes;
  g_clear_pointer (&tbq->temp_location, g_free);
  tbq->temp_kept = FALSE;
  GST_OBJECT_UNLOCK (tbq);
  if (tmpl == NULL)
    return TRUE;
  sc.temp_template = tmpl;
  sc.owned = spill_owned;
  sc.on_error = spill_error;
  sc.error_data = tbq;
  sc.on_run = spill_run;
  sc.run_data = tbq;
  st = tbq_queue_enable_spill (q, &sc, msg, sizeof msg);
  if (st != TBQ_OK) {
    /* The reason in the headline: it names what to change (a sink pool
     * too small to spill, a directory that cannot be written). */
    GST_ELEMENT_ERROR (tbq, RESOURCE, OPEN_WRITE,
        ("Cannot spill to a file made from temp-template %s: %s", tmpl, msg),
        ("%s", msg));
    g_free (tmpl);
    return FALSE;
  }
  GST_OBJECT_LOCK (tbq);
  tbq->temp_location = g_strdup (tbq_queue_spill_path (q));
  tbq->temp_kept = !sc.remove;
  GST_OBJECT_UNLOCK (tbq);
  GST_DEBUG_OBJECT (tbq, "spilling to %s (%s)", tbq_queue_spill_path (q),
      sc.remove ? "removed" : "kept");
  g_free (tmpl);
  return TRUE;
}

/* READY->PAUSED: the two-layer queue, its writer and reader, and the copy
 * task (stopped until the src pad is activated). */
static gboolean
gst_tbqueue_open (GstTbQueue * tbq)
{
  TbqConfig cfg;
  TbqQueue *q = NULL;
  TbqWriter *writer = NULL;
  TbqReader *reader = NULL;
  GstTbQueueGroup *group;
  TbqStatus st = TBQ_INVALID_CONFIG;
  char reason[256], msg[512];

  /* From here on the geometry holds (set_geometry refuses changes). */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->geometry_in_use = TRUE;
  GST_OBJECT_LOCK (tbq);
  if (locked_open_config (tbq, &cfg, msg, sizeof msg)) {
    st = tbq_config_validate (&cfg, reason, sizeof reason);
    if (st != TBQ_OK)
      name_geometry (tbq, reason, msg, sizeof msg);
  }
  GST_OBJECT_UNLOCK (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (st != TBQ_OK)
    goto refused;
  group = gst_tbqueue_group_join (tbq, &cfg, &q, &st, msg, sizeof msg);
  if (group == NULL) {
    if (st == TBQ_INVALID_CONFIG)
      goto refused;
    goto no_memory;
  }
  if (!open_spill (tbq, q)) {
    gst_tbqueue_group_leave (tbq, group, q);
    goto failed;
  }
  if (tbq_writer_new (q, &writer) != TBQ_OK
      || tbq_reader_new (q, &reader) != TBQ_OK) {
    gst_tbqueue_group_leave (tbq, group, q);
    g_strlcpy (msg, "cannot allocate the source pool", sizeof msg);
    goto no_memory;
  }
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->q = q;
  tbq->writer = writer;
  /* Atomic (relaxed; qlock orders it for everyone else): the copy
   * group's thread reads it outside qlock (gsttbqueue-group.c). */
  __atomic_store_n (&tbq->reader, reader, __ATOMIC_RELAXED);
  tbq->limits.max_inline = tbq_queue_max_inline_size (q);
  tbq->limits.max_small = gst_tbq_record_max_small (tbq->limits.max_inline);
  tbq->limits.max_record = MAX (tbq_queue_max_extent_size (q),
      tbq_queue_max_record_size (q));
  tbq->special_caps = FALSE;
  tbq->warned_too_large = FALSE;
  tbq->batching = cfg.publish != TBQ_PUBLISH_EVERY_RECORD;
  tbq->spilling = tbq_queue_spill_path (q) != NULL;
  tbq->spill_read_failed = FALSE;
  gst_tbqueue_reset_levels (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_DEBUG_OBJECT (tbq, "opened: source %u x %u B, sink %" G_GSIZE_FORMAT
      "..%" G_GSIZE_FORMAT " x %u B", (guint) cfg.source.max_blocks,
      (guint) cfg.source.block_size, cfg.sink.min_blocks, cfg.sink.max_blocks,
      (guint) cfg.sink.block_size);
  return TRUE;

refused:
  GST_ELEMENT_ERROR (tbq, RESOURCE, SETTINGS,
      ("Impossible pool geometry: %s", msg), (NULL));
  goto failed;
no_memory:
  GST_ELEMENT_ERROR (tbq, RESOURCE, NO_SPACE_LEFT,
      ("Cannot allocate the queue's pools: %s", msg), (NULL));
failed:
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->geometry_in_use = FALSE;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return FALSE;
}

/* PAUSED->READY (the pads are inactive) and finalize. */
static void
gst_tbqueue_close (GstTbQueue * tbq)
{
  TbqQueue *q;
  GstTbQueueGroup *group;

  gst_tbqueue_copy_task_stop (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  /* A leak from a property change may still wait for the copy task: the
   * stop interrupted the queue, and it leaves its wait at once. */
  gst_tbqueue_locked_wait_reader_idle (tbq);
  q = tbq->q;
  group = tbq->group;
  tbq->q = NULL;
  tbq->writer = NULL;
  __atomic_store_n (&tbq->reader, NULL, __ATOMIC_RELAXED);
  if (tbq->partial != NULL)
    gst_buffer_list_unref (tbq->partial);
  tbq->partial = NULL;
  tbq->geometry_in_use = FALSE;
  tbq->spilling = FALSE;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_OBJECT_LOCK (tbq);
  g_clear_pointer (&tbq->spill_read_error, g_free);
  GST_OBJECT_UNLOCK (tbq);
  /* Zero-copy buffers still downstream keep their sink blocks alive.  The
   * spill thread, which tells the end of a run it discards, is gone when
   * this returns. */
  if (q != NULL)
    gst_tbqueue_group_leave (tbq, group, q);
  /* A file kept (temp-remove=false) stays named until the next start: the
   * application may look for it once the pipeline is stopped. */
  GST_OBJECT_LOCK (tbq);
  if (!tbq->temp_kept)
    g_clear_pointer (&tbq->temp_location, g_free);
  GST_OBJECT_UNLOCK (tbq);
}

static GstStateChangeReturn
gst_tbqueue_change_state (GstElement * element, GstStateChange transition)
{
  GstTbQueue *tbq = GST_TBQUEUE (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && tbq->q == NULL
      && !gst_tbqueue_open (tbq))
    return GST_STATE_CHANGE_FAILURE;
  /* The tasks start in the parent's change (the pads' activation): what
   * of their placement cannot be applied is said now, to the bus the
   * element has by now (it may have had none when it was set). */
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    gst_tbqueue_placement_start (tbq);
    gst_tbqueue_properties_start (tbq);
    /* The levels message, if an interval is set (gsttbqueue-stats.c). */
    gst_tbqueue_stats_start_posting (tbq);
    /* Buffering starts over, from an empty queue (0 %, posted now that
     * the element has a bus), and downstream's bitrate is asked for at
     * the first push (gsttbqueue-buffering.c). */
    if (tbq->srcpad != NULL)
      gst_pad_mark_reconfigure (tbq->srcpad);
    gst_tbqueue_buffering_restart (tbq);
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE)) {
    gst_tbqueue_stats_stop_posting (tbq);
    gst_tbqueue_close (tbq);
    gst_tbqueue_placement_stop (tbq);
  }
  return ret;
}

/* A BUFFERING query to the element is the src pad's, as on queue2; any
 * other goes where GstElement sends it. */
static gboolean
gst_tbqueue_element_query (GstElement * element, GstQuery * query)
{
  GstTbQueue *tbq = GST_TBQUEUE (element);

  if (GST_QUERY_TYPE (query) == GST_QUERY_BUFFERING
      && gst_tbqueue_buffering_query (tbq, query))
    return TRUE;
  return GST_ELEMENT_CLASS (parent_class)->query (element, query);
}

/* The src pad's task announces itself (CREATE) before it starts: place it
 * as the copy task is placed.  The application sees the message after. */
static gboolean
gst_tbqueue_post_message (GstElement * element, GstMessage * message)
{
  GstTbQueue *tbq = GST_TBQUEUE (element);

  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_STREAM_STATUS
      && tbq->srcpad != NULL
      && GST_MESSAGE_SRC (message) == GST_OBJECT_CAST (tbq->srcpad)) {
    GstStreamStatusType type;
    GstElement *owner;
    const GValue *task;

    gst_message_parse_stream_status (message, &type, &owner);
    task = gst_message_get_stream_status_object (message);
    if (type == GST_STREAM_STATUS_TYPE_CREATE && task != NULL
        && G_VALUE_HOLDS (task, GST_TYPE_TASK))
      gst_tbqueue_placement_adopt_pad_task (tbq, tbq->srcpad,
          g_value_get_object (task));
  }
  return GST_ELEMENT_CLASS (parent_class)->post_message (element, message);
}

/* ---- properties (gsttbqueue-properties.c) ---- */

/* GObject calls this once every property of a g_object_set () (or
 * g_object_set_property (), or a g_object_freeze_notify () section) is
 * set, with their notifications: the properties' commit hooks run here,
 * so that the placement properties set in one call are applied together,
 * a policy with its priority as one pair, never the new policy with the
 * old priority. */
static void
gst_tbqueue_dispatch_properties_changed (GObject * object, guint n_pspecs,
    GParamSpec ** pspecs)
{
  gst_tbqueue_properties_commit (GST_TBQUEUE (object), n_pspecs, pspecs);
  G_OBJECT_CLASS (parent_class)->dispatch_properties_changed (object,
      n_pspecs, pspecs);
}

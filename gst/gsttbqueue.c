/* tbqueue: a two-layer drop-in replacement for queue.  This file: the
 * element object, its properties and stats, and its state changes (the
 * two-layer queue's life).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where the rest is: gsttbqueue-private.h (the instance, threads and
 * locks), gsttbqueue-sink.c and gsttbqueue-src.c (the pads),
 * gsttbqueue-copytask.c (the copy task), gsttbqueue-levels.c and
 * gsttbqueue-leaks.c (levels, limits, leaky modes), gsttbqueue-dequeue.c
 * (records back into items, flushing), gsttbqrecord.c (the record format),
 * gsttbqmemory.c (the sink-memory allocator).
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
 * end a nap at once.
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
 * #GstBufferPool (a camera's capture queue, whose frames a stalled consumer
 * would otherwise hold) and would wait in the queue; a pool's buffer that
 * finds the queue empty and the src pad task waiting for data is pushed at
 * once by reference, and large buffers nobody waits for are referenced.  A frame larger than the sink pool can hold
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
 * #GstTbQueue:src-task-cpus and their -policy and -priority siblings (from
 * gst-launch-1.0 too), or by an application the GStreamer way: both tasks
 * post STREAM_STATUS messages (ENTER from their own thread, after the
 * properties' placement), and a sync bus handler may set a #GstTaskPool
 * of its own on CREATE.  What the system refuses is a warning on the bus.
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
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"
#include "gsttbqueue-placement.h"
#include "gsttbqueue-sink.h"
#include "gsttbqueue-src.h"
#include "gsttbqmemory.h"
#include "gsttbqrecord.h"

GST_DEBUG_CATEGORY (gst_tbqueue_debug);
GST_DEBUG_CATEGORY (gst_tbqueue_dataflow);

static GstStaticPadTemplate sinktemplate = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS_ANY);

static GstStaticPadTemplate srctemplate = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS_ANY);

guint gst_tbqueue_signals[LAST_SIGNAL] = { 0 };

enum
{
  PROP_0,
  PROP_CUR_LEVEL_BUFFERS,
  PROP_CUR_LEVEL_BYTES,
  PROP_CUR_LEVEL_TIME,
  PROP_MAX_SIZE_BUFFERS,
  PROP_MAX_SIZE_BYTES,
  PROP_MAX_SIZE_TIME,
  PROP_MIN_THRESHOLD_BUFFERS,
  PROP_MIN_THRESHOLD_BYTES,
  PROP_MIN_THRESHOLD_TIME,
  PROP_LEAKY,
  PROP_SILENT,
  PROP_FLUSH_ON_EOS,
  PROP_TRANSFER,
  PROP_COPY_THRESHOLD,
  PROP_SOURCE_BLOCK_SIZE,
  PROP_SOURCE_BLOCKS,
  PROP_SINK_BLOCK_SIZE,
  PROP_SINK_MIN_BYTES,
  PROP_SINK_MAX_BYTES,
  PROP_IDLE_BLOCKS,
  PROP_PUBLISH_BATCH,
  PROP_MAX_COALESCE_LATENCY,
  PROP_STATS,
  PROP_COPY_TASK_CPUS,
  PROP_COPY_TASK_POLICY,
  PROP_COPY_TASK_PRIORITY,
  PROP_SRC_TASK_CPUS,
  PROP_SRC_TASK_POLICY,
  PROP_SRC_TASK_PRIORITY
};

/* queue's defaults */
#define DEFAULT_MAX_SIZE_BUFFERS  200
#define DEFAULT_MAX_SIZE_BYTES    (10 * 1024 * 1024)
#define DEFAULT_MAX_SIZE_TIME     GST_SECOND
/* tbqueue's own */
#define DEFAULT_TRANSFER          GST_TBQUEUE_TRANSFER_AUTO
#define DEFAULT_COPY_THRESHOLD    512
#define DEFAULT_SOURCE_BLOCK_SIZE 4096
#define DEFAULT_SOURCE_BLOCKS     4
#define DEFAULT_SINK_BLOCK_SIZE   65536
#define DEFAULT_SINK_MIN_BYTES    (256 * 1024)
#define DEFAULT_SINK_MAX_BYTES    (G_GUINT64_CONSTANT (256) * 1024 * 1024)
#define DEFAULT_IDLE_BLOCKS       16
#define DEFAULT_PUBLISH_BATCH     1
#define DEFAULT_MAX_COALESCE_LATENCY (500 * GST_USECOND)

/* The pool geometry properties, in PROP_* order: where each is kept (a
 * guint, or a guint64 for the 64-bit properties) and its default.  They
 * apply from the next READY->PAUSED (object lock). */
typedef struct
{
  gsize offset;
  gsize size;
  guint64 def;
} Geometry;

#define GEOMETRY(field, def) \
  { G_STRUCT_OFFSET (GstTbQueue, field), sizeof (((GstTbQueue *) 0)->field), def }

static const Geometry geometry[] = {
  GEOMETRY (source_block_size, DEFAULT_SOURCE_BLOCK_SIZE),
  GEOMETRY (source_blocks, DEFAULT_SOURCE_BLOCKS),
  GEOMETRY (sink_block_size, DEFAULT_SINK_BLOCK_SIZE),
  GEOMETRY (sink_min_bytes, DEFAULT_SINK_MIN_BYTES),
  GEOMETRY (sink_max_bytes, DEFAULT_SINK_MAX_BYTES),
  GEOMETRY (idle_blocks, DEFAULT_IDLE_BLOCKS),
  GEOMETRY (publish_batch, DEFAULT_PUBLISH_BATCH),
  GEOMETRY (max_coalesce_latency, DEFAULT_MAX_COALESCE_LATENCY),
};

G_STATIC_ASSERT (G_N_ELEMENTS (geometry) ==
    PROP_MAX_COALESCE_LATENCY - PROP_SOURCE_BLOCK_SIZE + 1);

#define gst_tbqueue_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstTbQueue, gst_tbqueue, GST_TYPE_ELEMENT,
    GST_DEBUG_CATEGORY_INIT (gst_tbqueue_debug, "tbqueue", 0,
        "tbqueue element");
    GST_DEBUG_CATEGORY_INIT (gst_tbqueue_dataflow, "tbqueue_dataflow", 0,
        "dataflow inside the tbqueue element"));
GST_ELEMENT_REGISTER_DEFINE (tbqueue, "tbqueue", GST_RANK_NONE,
    GST_TYPE_TBQUEUE);

static void gst_tbqueue_finalize (GObject * object);
static void gst_tbqueue_close (GstTbQueue * tbq);
static void gst_tbqueue_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_tbqueue_dispatch_properties_changed (GObject * object,
    guint n_pspecs, GParamSpec ** pspecs);
static void gst_tbqueue_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_tbqueue_change_state (GstElement * element,
    GstStateChange transition);
static gboolean gst_tbqueue_post_message (GstElement * element,
    GstMessage * message);

static void
geometry_store (GstTbQueue * tbq, const Geometry * g, guint64 v)
{
  gpointer p = G_STRUCT_MEMBER_P (tbq, g->offset);

  if (g->size == sizeof (guint64))
    *(guint64 *) p = v;
  else
    *(guint *) p = (guint) v;
}

static guint64
geometry_load (GstTbQueue * tbq, const Geometry * g)
{
  gconstpointer p = G_STRUCT_MEMBER_P (tbq, g->offset);

  if (g->size == sizeof (guint64))
    return *(const guint64 *) p;
  return *(const guint *) p;
}

GType
gst_tbqueue_leaky_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQUEUE_NO_LEAK, "Not Leaky", "no"},
    {GST_TBQUEUE_LEAK_UPSTREAM, "Leaky on upstream (new buffers)", "upstream"},
    {GST_TBQUEUE_LEAK_DOWNSTREAM, "Leaky on downstream (old buffers)",
        "downstream"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstTbQueueLeaky",
            values));
  return type;
}

GType
gst_tbqueue_transfer_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQUEUE_TRANSFER_AUTO,
          "Copy buffers of a buffer pool and small buffers, reference the rest",
        "auto"},
    {GST_TBQUEUE_TRANSFER_COPY,
        "Copy every buffer that can be copied without loss", "copy"},
    {GST_TBQUEUE_TRANSFER_REFERENCE,
        "Queue the buffers themselves, as queue does", "reference"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstTbQueueTransfer",
            values));
  return type;
}

GType
gst_tbqueue_sched_policy_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQUEUE_SCHED_INHERIT,
        "Leave the thread's policy and priority as they are", "inherit"},
    {GST_TBQUEUE_SCHED_OTHER, "SCHED_OTHER (priority: nice value)", "other"},
    {GST_TBQUEUE_SCHED_FIFO, "SCHED_FIFO (priority: 1 to 99)", "fifo"},
    {GST_TBQUEUE_SCHED_RR, "SCHED_RR (priority: 1 to 99)", "rr"},
    {GST_TBQUEUE_SCHED_BATCH, "SCHED_BATCH (priority: nice value)", "batch"},
    {GST_TBQUEUE_SCHED_IDLE, "SCHED_IDLE", "idle"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstTbQueueSchedPolicy", values));
  return type;
}

#define RW_PLAYING (G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING | \
    G_PARAM_STATIC_STRINGS)
#define RW_READY (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | \
    G_PARAM_STATIC_STRINGS)

/* The six placement properties' specs, as installed (class_init writes
 * them before any instance exists). */
static GParamSpec *placement_pspecs[3 * GST_TBQUEUE_N_TASKS];

static gboolean
is_placement_pspec (GParamSpec * pspec)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (placement_pspecs); i++)
    if (pspec == placement_pspecs[i])
      return TRUE;
  return FALSE;
}

/* Thread placement, for each task: where it runs and how it is
 * scheduled (gsttbqueue-placement.c). */
static void
install_placement_properties (GObjectClass * gobject_class)
{
  static const struct
  {
    guint cpus, policy, priority;
    const gchar *names[3];
    const gchar *what;
  } tasks[] = {
    {PROP_COPY_TASK_CPUS, PROP_COPY_TASK_POLICY, PROP_COPY_TASK_PRIORITY,
        {"copy-task-cpus", "copy-task-policy", "copy-task-priority"},
        "copy task"},
    {PROP_SRC_TASK_CPUS, PROP_SRC_TASK_POLICY, PROP_SRC_TASK_PRIORITY,
        {"src-task-cpus", "src-task-policy", "src-task-priority"},
        "src pad task"},
  };
  guint i;

  /**
   * GstTbQueue:copy-task-cpus:
   *
   * The CPUs the copy task's thread may run on, as a list such as "0-1,3".
   * Empty (the default) leaves the thread as GStreamer created it.  Applied
   * by the thread itself when the task starts, before its STREAM_STATUS
   * ENTER message, and at once when changed while it runs; set back to
   * empty (or %NULL) while it runs, the thread goes back to the CPUs it
   * had when the task started.  CPUs that are not online or not allowed to
   * the process are reported with a warning message on the bus; the CPUs
   * that exist are used.
   *
   * A malformed list (not CPU numbers from 0 to 1023 and ranges of them)
   * changes nothing: the property keeps, and reads back, the last valid
   * list.  Its warning message names it, and is posted when the tasks
   * start (the READY to PAUSED change; on a gst-launch-1.0 line the
   * element has no bus yet when its properties are set), at each start
   * until a valid list is set, and at once when it is set while they run.
   *
   * Since: 0.2
   */
  /**
   * GstTbQueue:copy-task-policy:
   *
   * The scheduling policy of the copy task's thread (Linux's SCHED_*):
   * inherit (the default) leaves it as it is; set back to inherit while the
   * task runs, the thread gets back the policy, priority and nice value it
   * had when the task started.  A policy the system refuses (a real-time
   * one without CAP_SYS_NICE or RLIMIT_RTPRIO) is reported with a warning
   * message on the bus as it refuses, and the thread runs on as it was.
   *
   * The policy and #GstTbQueue:copy-task-priority are applied as a pair:
   * set in one g_object_set() call, they are applied together, once both
   * are set.  While the task runs, a pair that does not go together (fifo
   * with priority 0, half-way from other 0 to fifo 20 set in two calls, in
   * either order) is a change half made, not an error: the thread is left
   * as it is and no message is posted (the debug log says so at INFO
   * level), until a later change makes the pair valid and it is applied.
   * A pair still not valid when the tasks start (the READY to PAUSED
   * change) is reported with a warning message then.
   *
   * Since: 0.2
   */
  /**
   * GstTbQueue:copy-task-priority:
   *
   * The priority that goes with #GstTbQueue:copy-task-policy: the real-time
   * priority (1 to 99) with fifo and rr, the nice value (-20 to 19) with
   * other and batch.  Applied with the policy, as a pair (see
   * #GstTbQueue:copy-task-policy).
   *
   * Since: 0.2
   */
  /**
   * GstTbQueue:src-task-cpus:
   *
   * The CPUs the src pad task's thread (the one that pushes downstream) may
   * run on, as #GstTbQueue:copy-task-cpus.
   *
   * Since: 0.2
   */
  /**
   * GstTbQueue:src-task-policy:
   *
   * The scheduling policy of the src pad task's thread, as
   * #GstTbQueue:copy-task-policy.
   *
   * Since: 0.2
   */
  /**
   * GstTbQueue:src-task-priority:
   *
   * The priority that goes with #GstTbQueue:src-task-policy, as
   * #GstTbQueue:copy-task-priority.
   *
   * Since: 0.2
   */
  for (i = 0; i < G_N_ELEMENTS (tasks); i++) {
    gchar *blurb;

    blurb = g_strdup_printf ("CPUs the %s's thread may run on, as "
        "\"0-1,3\" (empty = leave it as it is); applied when the task "
        "starts and at once while it runs", tasks[i].what);
    placement_pspecs[3 * i] = g_param_spec_string (tasks[i].names[0],
        "CPUs", blurb, "", G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING);
    g_free (blurb);
    blurb = g_strdup_printf ("Scheduling policy of the %s's thread "
        "(inherit = leave it as it is)", tasks[i].what);
    placement_pspecs[3 * i + 1] = g_param_spec_enum (tasks[i].names[1],
        "Scheduling policy", blurb, GST_TYPE_TBQUEUE_SCHED_POLICY,
        GST_TBQUEUE_SCHED_INHERIT,
        G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING);
    g_free (blurb);
    blurb = g_strdup_printf ("Priority of the %s's thread with its policy: "
        "1 to 99 with fifo and rr, a nice value (-20 to 19) with other and "
        "batch", tasks[i].what);
    placement_pspecs[3 * i + 2] = g_param_spec_int (tasks[i].names[2],
        "Scheduling priority", blurb, -20, 99, 0,
        G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING);
    g_free (blurb);
    g_object_class_install_property (gobject_class, tasks[i].cpus,
        placement_pspecs[3 * i]);
    g_object_class_install_property (gobject_class, tasks[i].policy,
        placement_pspecs[3 * i + 1]);
    g_object_class_install_property (gobject_class, tasks[i].priority,
        placement_pspecs[3 * i + 2]);
  }
}

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

/* queue's levels and limits: same names, types, ranges and defaults */
static void
install_level_properties (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue:current-level-bytes:
   *
   * Payload bytes queued: both layers and what the copy task holds.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CUR_LEVEL_BYTES,
      g_param_spec_uint ("current-level-bytes", "Current level (kB)",
          "Current amount of data in the queue (bytes)",
          0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbQueue:current-level-buffers:
   *
   * Buffers queued: both layers and what the copy task holds (a buffer
   * list counts its buffers).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CUR_LEVEL_BUFFERS,
      g_param_spec_uint ("current-level-buffers", "Current level (buffers)",
          "Current number of buffers in the queue",
          0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbQueue:current-level-time:
   *
   * Running time between the newest buffer in and the oldest buffer out
   * (ns), computed from the segments as queue computes it.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CUR_LEVEL_TIME,
      g_param_spec_uint64 ("current-level-time", "Current level (ns)",
          "Current amount of data in the queue (in ns)",
          0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbQueue:max-size-bytes:
   *
   * Most payload bytes queued (0 = no limit).  Counts the buffers'
   * bytes, not the pools' memory: #GstTbQueue:sink-max-bytes bounds that.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_BYTES,
      g_param_spec_uint ("max-size-bytes", "Max. size (kB)",
          "Max. amount of data in the queue (bytes, 0=disable)",
          0, G_MAXUINT, DEFAULT_MAX_SIZE_BYTES, RW_PLAYING));
  /**
   * GstTbQueue:max-size-buffers:
   *
   * Most buffers queued (0 = no limit).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_BUFFERS,
      g_param_spec_uint ("max-size-buffers", "Max. size (buffers)",
          "Max. number of buffers in the queue (0=disable)", 0, G_MAXUINT,
          DEFAULT_MAX_SIZE_BUFFERS, RW_PLAYING));
  /**
   * GstTbQueue:max-size-time:
   *
   * Most running time queued (ns, 0 = no limit).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_TIME,
      g_param_spec_uint64 ("max-size-time", "Max. size (ns)",
          "Max. amount of data in the queue (in ns, 0=disable)", 0,
          G_MAXUINT64, DEFAULT_MAX_SIZE_TIME, RW_PLAYING));
}

/* queue's thresholds, leaky mode, silent and flush-on-eos */
static void
install_behaviour_properties (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue:min-threshold-bytes:
   *
   * Bytes that must be queued before the src pad task pushes again after
   * an underrun (0 = off).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MIN_THRESHOLD_BYTES,
      g_param_spec_uint ("min-threshold-bytes", "Min. threshold (kB)",
          "Min. amount of data in the queue to allow reading (bytes, 0=disable)",
          0, G_MAXUINT, 0, RW_PLAYING));
  /**
   * GstTbQueue:min-threshold-buffers:
   *
   * Buffers that must be queued before the src pad task pushes again
   * after an underrun (0 = off).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MIN_THRESHOLD_BUFFERS,
      g_param_spec_uint ("min-threshold-buffers", "Min. threshold (buffers)",
          "Min. number of buffers in the queue to allow reading (0=disable)",
          0, G_MAXUINT, 0, RW_PLAYING));
  /**
   * GstTbQueue:min-threshold-time:
   *
   * Running time that must be queued before the src pad task pushes again
   * after an underrun (ns, 0 = off).  Added to the minimum latency, as
   * queue does.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MIN_THRESHOLD_TIME,
      g_param_spec_uint64 ("min-threshold-time", "Min. threshold (ns)",
          "Min. amount of data in the queue to allow reading (in ns, 0=disable)",
          0, G_MAXUINT64, 0, RW_PLAYING));
  /**
   * GstTbQueue:leaky:
   *
   * What happens when the queue is full: block the pushing thread
   * (#GST_TBQUEUE_NO_LEAK), drop the incoming buffer
   * (#GST_TBQUEUE_LEAK_UPSTREAM) or drop the oldest queued buffers
   * (#GST_TBQUEUE_LEAK_DOWNSTREAM).  Same values and nicks as queue's.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_LEAKY,
      g_param_spec_enum ("leaky", "Leaky",
          "Where the queue leaks, if at all",
          GST_TYPE_TBQUEUE_LEAKY, GST_TBQUEUE_NO_LEAK, RW_PLAYING));
  /**
   * GstTbQueue:silent:
   *
   * Don't emit the #GstTbQueue::underrun, #GstTbQueue::running,
   * #GstTbQueue::overrun and #GstTbQueue::pushing signals.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SILENT,
      g_param_spec_boolean ("silent", "Silent",
          "Don't emit queue signals", FALSE, RW_PLAYING));
  /**
   * GstTbQueue:flush-on-eos:
   *
   * Discard everything queued when EOS arrives and pass EOS on at once.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_FLUSH_ON_EOS,
      g_param_spec_boolean ("flush-on-eos", "Flush on EOS",
          "Discard all data in the queue when an EOS event is received", FALSE,
          RW_PLAYING));
}

/* tbqueue's own: how buffers travel */
static void
install_transfer_properties (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue:transfer:
   *
   * How buffers travel.  "auto" copies a buffer when giving it back at once
   * matters: it is at most #GstTbQueue:copy-threshold bytes, or it belongs
   * to a #GstBufferPool (`buffer->pool` set: a camera's capture queue, a
   * decoder's output pool), whatever its size, and would wait in the queue
   * (something is queued ahead of it, or the src pad task is busy pushing).
   * A pool's buffer that finds the queue empty and the src pad task
   * waiting for data is referenced and pushed at once, as queue pushes it:
   * with downstream blocked, at most one buffer of a pool is held.  Larger
   * buffers of no pool, which nobody waits for, are referenced.  "copy"
   * copies every buffer (pooled or not, whatever the queue holds),
   * "reference" none.  A copy keeps flags, timestamps, offsets, every meta
   * a deep copy keeps and the memory layout; a frame (above a quarter of a
   * source block) is copied once, into memory of its own taken from the
   * sink pool's budget.  In every mode a buffer that cannot be copied
   * without loss is referenced and counted (copy-fallbacks and a counter
   * of the reason in #GstTbQueue:stats): special memory (fd memory such
   * as DMA-buf, memory that cannot be mapped, caps of a memory type other
   * than system memory), a meta that cannot be copied, or a buffer larger
   * than #GstTbQueue:sink-max-bytes allows (with a warning).
   *
   * Since 0.2 "auto" copies buffers of a pool of any size that would wait,
   * and "copy" copies buffers of any size, with their metas and memory
   * layout.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TRANSFER,
      g_param_spec_enum ("transfer", "Transfer",
          "How buffers travel: auto copies buffers of a buffer pool (any "
          "size) that would wait in the queue and buffers of up to "
          "copy-threshold bytes, and references the rest; copy copies every buffer; reference queues the buffers "
          "themselves.  A copy keeps metas and memory layout; buffers that "
          "cannot be copied without loss (special memory, a meta that "
          "cannot be copied, larger than sink-max-bytes allows) are "
          "referenced in every mode",
          GST_TYPE_TBQUEUE_TRANSFER, DEFAULT_TRANSFER, RW_PLAYING));
  /**
   * GstTbQueue:copy-threshold:
   *
   * With #GstTbQueue:transfer "auto": the largest buffer always copied
   * (bytes).  A larger buffer is copied only when it belongs to a buffer
   * pool and would wait in the queue.  To copy every buffer, use
   * #GstTbQueue:transfer "copy".
   *
   * Since 0.2 it no longer limits buffers of a pool.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_COPY_THRESHOLD,
      g_param_spec_uint ("copy-threshold", "Copy threshold (bytes)",
          "transfer=auto: largest buffer always copied (bytes; a larger "
          "buffer of a buffer pool is copied when it would wait in the "
          "queue)", 0, G_MAXUINT, DEFAULT_COPY_THRESHOLD, RW_PLAYING));
}

/* tbqueue's own: the geometry of the source and sink pools */
static void
install_pool_properties (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue:source-block-size:
   *
   * Bytes per source pool block (a multiple of 64, at least 128).  A
   * copied buffer whose record is above a quarter of a block (about 1,000
   * bytes by default) is written into memory of its own from the sink pool
   * instead.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SOURCE_BLOCK_SIZE,
      g_param_spec_uint ("source-block-size", "Source block size (bytes)",
          "Size of each source pool block (bytes, multiple of 64, at least "
          "128; buffers above a quarter of it are copied into memory of "
          "their own, from the sink pool)",
          128, 1 << 30, DEFAULT_SOURCE_BLOCK_SIZE, RW_READY));
  /**
   * GstTbQueue:source-blocks:
   *
   * Number of source pool blocks, all allocated up front (at least 2).
   * Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SOURCE_BLOCKS,
      g_param_spec_uint ("source-blocks", "Source blocks",
          "Number of source pool blocks (pre-allocated, at least 2)",
          2, 1 << 20, DEFAULT_SOURCE_BLOCKS, RW_READY));
  /**
   * GstTbQueue:sink-block-size:
   *
   * Bytes per sink pool block (a multiple of 64, at least
   * #GstTbQueue:source-block-size).  Applies from the next READY to PAUSED
   * change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SINK_BLOCK_SIZE,
      g_param_spec_uint ("sink-block-size", "Sink block size (bytes)",
          "Size of each sink pool block (bytes, multiple of 64, at least "
          "source-block-size)",
          128, 1 << 30, DEFAULT_SINK_BLOCK_SIZE, RW_READY));
  /**
   * GstTbQueue:sink-min-bytes:
   *
   * Sink pool memory allocated and pre-faulted up front (bytes).  Applies
   * from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SINK_MIN_BYTES,
      g_param_spec_uint64 ("sink-min-bytes", "Sink pool minimum (bytes)",
          "Sink pool memory allocated and pre-faulted up front (bytes)",
          0, G_MAXUINT64, DEFAULT_SINK_MIN_BYTES, RW_READY));
  /**
   * GstTbQueue:sink-max-bytes:
   *
   * The most memory the sink pool may grow to, the memory of copied
   * frames included (bytes, at least two sink blocks).  Reaching it is an
   * overrun.  It bounds the queue's memory where #GstTbQueue:max-size-bytes
   * bounds the payload.  Applies from the next READY to PAUSED change.
   * With the default (256 MiB) frames of 600 KB up to 8 MiB and more are
   * copied; a buffer larger than this less two sink blocks cannot be
   * copied and is referenced, with one #GST_RESOURCE_ERROR_NO_SPACE_LEFT
   * warning per stream that names the value to raise it to.
   *
   * Since 0.2 it also holds copied frames.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SINK_MAX_BYTES,
      g_param_spec_uint64 ("sink-max-bytes", "Sink pool maximum (bytes)",
          "Most memory the sink pool may grow to, copied frames included "
          "(bytes, at least two sink blocks); reaching it is an overrun.  A "
          "buffer larger than this less two sink blocks cannot be copied: "
          "it is referenced, with a warning",
          0, G_MAXUINT64, DEFAULT_SINK_MAX_BYTES, RW_READY));
}

/* tbqueue's own: trimming, publishing, coalescing, statistics */
static void
install_pace_properties (GObjectClass * gobject_class)
{
  /**
   * GstTbQueue:idle-blocks:
   *
   * Idle sink blocks kept when the backlog drains; the rest is given back
   * to the system.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_IDLE_BLOCKS,
      g_param_spec_uint ("idle-blocks", "Idle blocks kept",
          "Idle sink blocks kept when the backlog drains; the rest is given "
          "back to the system (blocks)", 0, G_MAXUINT, DEFAULT_IDLE_BLOCKS,
          RW_READY));
  /**
   * GstTbQueue:publish-batch:
   *
   * Make queued buffers visible to the copy task every N buffers (1 =
   * every buffer, 0 = only when a source block is full) while downstream
   * is busy.  Events and queries always publish at once.  Applies from the
   * next READY to PAUSED change.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PUBLISH_BATCH,
      g_param_spec_uint ("publish-batch", "Publish batch (buffers)",
          "Make queued buffers visible to the copy task every N buffers "
          "(1 = every buffer; 0 = only when a source block is full).  Events "
          "and queries always publish; N > 1 holds up to N-1 buffers until "
          "more data or an event arrives", 0, G_MAXUINT,
          DEFAULT_PUBLISH_BATCH, RW_READY));
  /**
   * GstTbQueue:max-coalesce-latency:
   *
   * The most, in nanoseconds, that wake coalescing may add to a buffer's way
   * through the queue.  Each time the src pad task runs dry it decides how
   * it wants to be woken: while buffers arrive densely (at least two
   * expected within this bound) it naps until at most this long after it
   * last took buffers, and the pushing thread makes no system call for a
   * buffer meanwhile; while they arrive sparsely, or after an empty nap,
   * every buffer wakes it at once, as with #queue.  Events (EOS included),
   * serialized queries, flushes and a pushing thread that waits at a limit
   * end a nap at once.
   *
   * A larger bound batches more and costs less CPU at high rates; a smaller
   * one adds less latency.  0 wakes the src pad task for every buffer
   * whenever it waits (no coalescing); otherwise at least 1000 ns.  Replaces
   * the pickup-interval property of earlier versions (a copy task polling
   * at a fixed interval, which delayed sparse buffers too).  Applies from
   * the next READY to PAUSED change.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_MAX_COALESCE_LATENCY,
      g_param_spec_uint64 ("max-coalesce-latency",
          "Max. coalescing latency (ns)",
          "While buffers arrive densely (at least two within this time), the "
          "src task waits up to this long to take them together, so that the "
          "pushing thread makes no system call per buffer; sparse buffers, "
          "events and queries are passed on at once (ns, 0 = wake the src "
          "task per buffer; otherwise at least 1000)", 0,
          TBQ_COALESCE_MAX_NS, DEFAULT_MAX_COALESCE_LATENCY, RW_READY));
  /**
   * GstTbQueue:stats:
   *
   * A #GstStructure named "tbqueue-stats" of #guint64 fields: levels,
   * peaks, counters and pool sizes.  Among them buffers-copied,
   * buffers-referenced and copy-fallbacks (buffers the transfer mode would
   * copy that were referenced), with the reason in
   * referenced-special-memory, referenced-uncopyable-meta and
   * referenced-too-large.
   *
   * Since 0.2 it has the referenced-* fields.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Levels, peaks, counters and pool sizes (see the documentation)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void
gst_tbqueue_class_init (GstTbQueueClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_tbqueue_set_property;
  gobject_class->get_property = gst_tbqueue_get_property;
  gobject_class->dispatch_properties_changed =
      gst_tbqueue_dispatch_properties_changed;
  gobject_class->finalize = gst_tbqueue_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_tbqueue_change_state);
  element_class->post_message = GST_DEBUG_FUNCPTR (gst_tbqueue_post_message);

  install_signals (gobject_class);
  install_level_properties (gobject_class);
  install_behaviour_properties (gobject_class);
  install_transfer_properties (gobject_class);
  install_pool_properties (gobject_class);
  install_pace_properties (gobject_class);
  install_placement_properties (gobject_class);

  gst_element_class_set_static_metadata (element_class,
      "Two-layer queue", "Generic",
      "Queue with a small hot source pool and a large backlog pool",
      "The tbqueue authors");
  gst_element_class_add_static_pad_template (element_class, &srctemplate);
  gst_element_class_add_static_pad_template (element_class, &sinktemplate);

  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_LEAKY, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_TRANSFER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQUEUE_SCHED_POLICY, 0);
  gst_tbq_memory_init_once ();
  gst_tbq_record_init_once ();
}

static void
gst_tbqueue_init (GstTbQueue * tbq)
{
  guint i;

  tbq->sinkpad = gst_pad_new_from_static_template (&sinktemplate, "sink");
  gst_tbqueue_sink_set_functions (tbq->sinkpad);
  GST_PAD_SET_PROXY_CAPS (tbq->sinkpad);
  gst_element_add_pad (GST_ELEMENT (tbq), tbq->sinkpad);
  tbq->srcpad = gst_pad_new_from_static_template (&srctemplate, "src");
  gst_tbqueue_src_set_functions (tbq->srcpad);
  GST_PAD_SET_PROXY_CAPS (tbq->srcpad);
  gst_element_add_pad (GST_ELEMENT (tbq), tbq->srcpad);

  atomic_init (&tbq->max_buffers, DEFAULT_MAX_SIZE_BUFFERS);
  atomic_init (&tbq->max_bytes, DEFAULT_MAX_SIZE_BYTES);
  atomic_init (&tbq->max_time, DEFAULT_MAX_SIZE_TIME);
  atomic_init (&tbq->leaky, GST_TBQUEUE_NO_LEAK);
  atomic_init (&tbq->transfer, DEFAULT_TRANSFER);
  atomic_init (&tbq->copy_threshold, DEFAULT_COPY_THRESHOLD);
  atomic_init (&tbq->srcresult, GST_FLOW_FLUSHING);
  for (i = 0; i < G_N_ELEMENTS (geometry); i++)
    geometry_store (tbq, &geometry[i], geometry[i].def);

  pthread_mutex_init (&tbq->qlock, NULL);
  pthread_cond_init (&tbq->item_del, NULL);
  pthread_cond_init (&tbq->query_handled, NULL);
  pthread_cond_init (&tbq->sink_moved, NULL);
  g_rec_mutex_init (&tbq->copy_task_lock);
  gst_tbqueue_placement_init (tbq);
  gst_tbqueue_reset_levels (tbq);
}

static void
gst_tbqueue_finalize (GObject * object)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);

  gst_tbqueue_close (tbq);
  pthread_mutex_destroy (&tbq->qlock);
  pthread_cond_destroy (&tbq->item_del);
  pthread_cond_destroy (&tbq->query_handled);
  pthread_cond_destroy (&tbq->sink_moved);
  g_rec_mutex_clear (&tbq->copy_task_lock);
  gst_tbqueue_placement_clear (tbq);
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

/* The geometry properties libtbq cannot check under their own names. */
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
  if (tbq->max_coalesce_latency > 0
      && tbq->max_coalesce_latency < (guint64) TBQ_COALESCE_MIN_NS) {
    g_snprintf (msg, msg_size, "max-coalesce-latency (%" G_GUINT64_FORMAT
        " ns) must be 0 or at least %" G_GINT64_FORMAT " ns",
        tbq->max_coalesce_latency, (gint64) TBQ_COALESCE_MIN_NS);
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
  cfg->max_coalesce_ns = (int64_t) tbq->max_coalesce_latency;
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

/* READY->PAUSED: the two-layer queue, its writer and reader, and the copy
 * task (stopped until the src pad is activated). */
static gboolean
gst_tbqueue_open (GstTbQueue * tbq)
{
  TbqConfig cfg;
  TbqQueue *q = NULL;
  TbqWriter *writer = NULL;
  TbqReader *reader = NULL;
  GstTask *task;
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
  st = tbq_queue_new (&cfg, &q, msg, sizeof msg);
  if (st != TBQ_OK)
    goto no_memory;
  if (tbq_writer_new (q, &writer) != TBQ_OK
      || tbq_reader_new (q, &reader) != TBQ_OK) {
    tbq_queue_free (q, NULL, NULL);
    g_strlcpy (msg, "cannot allocate the source pool", sizeof msg);
    goto no_memory;
  }
  task = gst_tbqueue_copy_task_new (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->q = q;
  tbq->writer = writer;
  tbq->reader = reader;
  tbq->copy_task = task;
  tbq->limits.max_inline = tbq_queue_max_inline_size (q);
  tbq->limits.max_small = gst_tbq_record_max_small (tbq->limits.max_inline);
  tbq->limits.max_record = MAX (tbq_queue_max_extent_size (q),
      tbq_queue_max_record_size (q));
  tbq->special_caps = FALSE;
  tbq->warned_too_large = FALSE;
  tbq->batching = cfg.publish != TBQ_PUBLISH_EVERY_RECORD;
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
  GstTask *task;

  gst_tbqueue_copy_task_stop (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  /* A leak from a property change may still wait for the copy task: the
   * stop interrupted the queue, and it leaves its wait at once. */
  gst_tbqueue_locked_wait_reader_idle (tbq);
  q = tbq->q;
  task = tbq->copy_task;
  tbq->q = NULL;
  tbq->writer = NULL;
  tbq->reader = NULL;
  tbq->copy_task = NULL;
  if (tbq->partial != NULL)
    gst_buffer_list_unref (tbq->partial);
  tbq->partial = NULL;
  tbq->geometry_in_use = FALSE;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (task != NULL)
    gst_object_unref (task);
  /* Zero-copy buffers still downstream keep their sink blocks alive. */
  if (q != NULL)
    tbq_queue_free (q, gst_tbqueue_release_record, NULL);
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
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    gst_tbqueue_placement_start (tbq);

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE)) {
    gst_tbqueue_close (tbq);
    gst_tbqueue_placement_stop (tbq);
  }
  return ret;
}

/* The src pad's task announces itself (CREATE) before it starts: place it
 * as the copy task is placed.  The application sees the message after. */
static gboolean
gst_tbqueue_post_message (GstElement * element, GstMessage * message)
{
  GstTbQueue *tbq = GST_TBQUEUE (element);

  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_STREAM_STATUS
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

/* ---- properties ---- */

static GstStructure *
gst_tbqueue_stats (GstTbQueue * tbq)
{
  GstTbQueueCounters *c = &tbq->counters;
  TbqStats st;
  GstStructure *s;

  memset (&st, 0, sizeof st);
  /* qlock: close() clears tbq->q under it before freeing. */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (tbq->q != NULL)
    tbq_queue_get_stats (tbq->q, &st);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  s = gst_structure_new ("tbqueue-stats",
      "current-level-buffers", G_TYPE_UINT64, gst_tbqueue_level_buffers (tbq),
      "current-level-bytes", G_TYPE_UINT64, gst_tbqueue_level_bytes (tbq),
      "current-level-time", G_TYPE_UINT64, gst_tbqueue_level_time (tbq),
      "peak-level-buffers", G_TYPE_UINT64, TBQ_LOAD (c->peak_buffers),
      "peak-level-bytes", G_TYPE_UINT64, TBQ_LOAD (c->peak_bytes),
      "peak-level-time", G_TYPE_UINT64, TBQ_LOAD (c->peak_time),
      "records-in", G_TYPE_UINT64, st.records_in,
      "records-out", G_TYPE_UINT64, st.records_out,
      "buffers-copied", G_TYPE_UINT64, TBQ_LOAD (c->copied),
      "buffers-referenced", G_TYPE_UINT64, TBQ_LOAD (c->referenced),
      "copy-fallbacks", G_TYPE_UINT64, TBQ_LOAD (c->copy_fallbacks),
      "referenced-special-memory", G_TYPE_UINT64,
      TBQ_LOAD (c->referenced_special),
      "referenced-uncopyable-meta", G_TYPE_UINT64,
      TBQ_LOAD (c->referenced_meta),
      "referenced-too-large", G_TYPE_UINT64,
      TBQ_LOAD (c->referenced_too_large),
      "dropped-upstream", G_TYPE_UINT64, TBQ_LOAD (c->dropped_upstream),
      "dropped-downstream", G_TYPE_UINT64, TBQ_LOAD (c->dropped_downstream),
      "overruns", G_TYPE_UINT64, TBQ_LOAD (c->overruns),
      "underruns", G_TYPE_UINT64, TBQ_LOAD (c->underruns),
      "level-waits", G_TYPE_UINT64, TBQ_LOAD (c->level_waits),
      "copier-waits", G_TYPE_UINT64, TBQ_LOAD (c->copier_waits),
      "source-pool-full", G_TYPE_UINT64, st.records_dropped,
      "pressure-waits", G_TYPE_UINT64, st.pressure_waits,
      "sink-pressure-waits", G_TYPE_UINT64, st.sink_pressure_waits,
      "handoffs", G_TYPE_UINT64, st.handoffs,
      "copier-passes", G_TYPE_UINT64, st.copier_passes,
      "copier-wakeups", G_TYPE_UINT64, st.copier_wakeups,
      "copier-sleeps", G_TYPE_UINT64, st.copier_sleeps,
      "upstream-wakeups", G_TYPE_UINT64, st.writer_wakeups,
      "src-sleeps", G_TYPE_UINT64, st.reader_sleeps,
      "src-naps", G_TYPE_UINT64, st.reader_naps,
      "src-naps-woken", G_TYPE_UINT64, st.reader_naps_woken,
      "bytes-copied", G_TYPE_UINT64, st.bytes_copied,
      "records-discarded", G_TYPE_UINT64, st.records_discarded,
      "source-block-size", G_TYPE_UINT64, st.source.block_size,
      "source-blocks", G_TYPE_UINT64, st.source.blocks_total,
      "source-blocks-in-use", G_TYPE_UINT64, st.source.blocks_in_use,
      "source-blocks-peak", G_TYPE_UINT64, st.source.blocks_peak,
      "sink-block-size", G_TYPE_UINT64, st.sink.block_size,
      "sink-blocks", G_TYPE_UINT64, st.sink.blocks_total,
      "sink-blocks-in-use", G_TYPE_UINT64, st.sink.blocks_in_use,
      "sink-blocks-peak", G_TYPE_UINT64, st.sink.blocks_peak,
      "sink-blocks-idle", G_TYPE_UINT64, st.sink.blocks_idle,
      "sink-allocations", G_TYPE_UINT64, st.sink.allocations,
      "sink-releases", G_TYPE_UINT64, st.sink.releases, NULL);
  return s;
}

/* The geometry entry of a property, or NULL. */
static const Geometry *
geometry_of (guint prop_id)
{
  if (prop_id < PROP_SOURCE_BLOCK_SIZE || prop_id > PROP_MAX_COALESCE_LATENCY)
    return NULL;
  return &geometry[prop_id - PROP_SOURCE_BLOCK_SIZE];
}

/* A geometry property: stored for the next READY->PAUSED, or, while the
 * pools exist, refused with a warning on the bus (the value is kept). */
static void
set_geometry (GstTbQueue * tbq, const Geometry * g, const GValue * value,
    GParamSpec * pspec)
{
  gboolean in_use;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  in_use = tbq->geometry_in_use;
  if (!in_use) {
    GST_OBJECT_LOCK (tbq);
    geometry_store (tbq, g, G_VALUE_HOLDS_UINT64 (value) ?
        g_value_get_uint64 (value) : g_value_get_uint (value));
    GST_OBJECT_UNLOCK (tbq);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (in_use)
    GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS,
        ("%s can only be changed in the NULL or READY state: the value is "
            "kept", pspec->name), (NULL));
}

/* The placement properties: which task, and which of its three. */
static gboolean
placement_of (guint prop_id, GstTbQueueThread * which, guint * what)
{
  if (prop_id < PROP_COPY_TASK_CPUS || prop_id > PROP_SRC_TASK_PRIORITY)
    return FALSE;
  *which = prop_id < PROP_SRC_TASK_CPUS ? GST_TBQUEUE_COPY_TASK
      : GST_TBQUEUE_SRC_TASK;
  *what = (prop_id - PROP_COPY_TASK_CPUS) % 3;
  return TRUE;
}

/* Stored only: applied by gst_tbqueue_dispatch_properties_changed. */
static gboolean
set_placement (GstTbQueue * tbq, guint prop_id, const GValue * value)
{
  GstTbQueueThread which;
  guint what;

  if (!placement_of (prop_id, &which, &what))
    return FALSE;
  if (what == 0)
    gst_tbqueue_placement_set_cpus (tbq, which, g_value_get_string (value));
  else if (what == 1)
    gst_tbqueue_placement_set_policy (tbq, which, g_value_get_enum (value));
  else
    gst_tbqueue_placement_set_priority (tbq, which, g_value_get_int (value));
  return TRUE;
}

static gboolean
get_placement (GstTbQueue * tbq, guint prop_id, GValue * value)
{
  GstTbQueueThread which;
  GstTbQueueSchedPolicy policy;
  gint priority;
  guint what;

  if (!placement_of (prop_id, &which, &what))
    return FALSE;
  if (what == 0) {
    gchar *cpus = gst_tbqueue_placement_get_cpus (tbq, which);

    g_value_take_string (value, cpus != NULL ? cpus : g_strdup (""));
    return TRUE;
  }
  gst_tbqueue_placement_get_policy (tbq, which, &policy, &priority);
  if (what == 1)
    g_value_set_enum (value, policy);
  else
    g_value_set_int (value, priority);
  return TRUE;
}

static void
gst_tbqueue_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);

  const Geometry *g = geometry_of (prop_id);

  if (g != NULL) {
    set_geometry (tbq, g, value, pspec);
    return;
  }
  if (set_placement (tbq, prop_id, value))
    return;

  /* Limits affect both streaming threads. */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  switch (prop_id) {
    case PROP_MAX_SIZE_BYTES:
    case PROP_MAX_SIZE_BUFFERS:
    case PROP_MAX_SIZE_TIME:
      if (prop_id == PROP_MAX_SIZE_BYTES)
        TBQ_STORE (tbq->max_bytes, g_value_get_uint (value));
      else if (prop_id == PROP_MAX_SIZE_BUFFERS)
        TBQ_STORE (tbq->max_buffers, g_value_get_uint (value));
      else
        TBQ_STORE (tbq->max_time, g_value_get_uint64 (value));
      if (TBQ_LOAD (tbq->leaky) == GST_TBQUEUE_LEAK_DOWNSTREAM)
        gst_tbqueue_locked_leak_after_change (tbq);
      /* The pushing thread may have room now. */
      GST_TBQUEUE_BROADCAST (tbq, item_del);
      break;
    case PROP_MIN_THRESHOLD_BYTES:
      tbq->orig_min_bytes = g_value_get_uint (value);
      TBQ_STORE (tbq->min_bytes, tbq->orig_min_bytes);
      break;
    case PROP_MIN_THRESHOLD_BUFFERS:
      tbq->orig_min_buffers = g_value_get_uint (value);
      TBQ_STORE (tbq->min_buffers, tbq->orig_min_buffers);
      break;
    case PROP_MIN_THRESHOLD_TIME:
      tbq->orig_min_time = g_value_get_uint64 (value);
      TBQ_STORE (tbq->min_time, tbq->orig_min_time);
      break;
    case PROP_LEAKY:
      TBQ_STORE (tbq->leaky, g_value_get_enum (value));
      TBQ_STORE (tbq->leak_pending, FALSE);
      break;
    case PROP_SILENT:
      TBQ_STORE (tbq->silent, g_value_get_boolean (value));
      break;
    case PROP_FLUSH_ON_EOS:
      TBQ_STORE (tbq->flush_on_eos, g_value_get_boolean (value));
      break;
    case PROP_TRANSFER:
      TBQ_STORE (tbq->transfer, g_value_get_enum (value));
      break;
    case PROP_COPY_THRESHOLD:
      TBQ_STORE (tbq->copy_threshold, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  /* Thresholds and limits decide when the src task may push. */
  if (tbq->reader != NULL)
    tbq_reader_wake (tbq->reader);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
}

/* GObject calls this once every property of a g_object_set () (or
 * g_object_set_property (), or a g_object_freeze_notify () section) is
 * set, with their notifications: the placement properties are applied
 * here, together, so that a policy and a priority set in one call are
 * applied as one pair, never the new policy with the old priority. */
static void
gst_tbqueue_dispatch_properties_changed (GObject * object, guint n_pspecs,
    GParamSpec ** pspecs)
{
  guint i;

  for (i = 0; i < n_pspecs; i++)
    if (is_placement_pspec (pspecs[i])) {
      gst_tbqueue_placement_commit (GST_TBQUEUE (object));
      break;
    }
  G_OBJECT_CLASS (parent_class)->dispatch_properties_changed (object,
      n_pspecs, pspecs);
}

static void
get_geometry (GstTbQueue * tbq, const Geometry * g, GValue * value)
{
  guint64 v;

  GST_OBJECT_LOCK (tbq);
  v = geometry_load (tbq, g);
  GST_OBJECT_UNLOCK (tbq);
  if (G_VALUE_HOLDS_UINT64 (value))
    g_value_set_uint64 (value, v);
  else
    g_value_set_uint (value, (guint) v);
}

static void
gst_tbqueue_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);

  switch (prop_id) {
    case PROP_CUR_LEVEL_BYTES:
      g_value_set_uint (value, MIN (gst_tbqueue_level_bytes (tbq), G_MAXUINT));
      break;
    case PROP_CUR_LEVEL_BUFFERS:
      g_value_set_uint (value, MIN (gst_tbqueue_level_buffers (tbq),
              G_MAXUINT));
      break;
    case PROP_CUR_LEVEL_TIME:
      g_value_set_uint64 (value, gst_tbqueue_level_time (tbq));
      break;
    case PROP_MAX_SIZE_BYTES:
      g_value_set_uint (value, TBQ_LOAD (tbq->max_bytes));
      break;
    case PROP_MAX_SIZE_BUFFERS:
      g_value_set_uint (value, TBQ_LOAD (tbq->max_buffers));
      break;
    case PROP_MAX_SIZE_TIME:
      g_value_set_uint64 (value, TBQ_LOAD (tbq->max_time));
      break;
    case PROP_MIN_THRESHOLD_BYTES:
      g_value_set_uint (value, TBQ_LOAD (tbq->min_bytes));
      break;
    case PROP_MIN_THRESHOLD_BUFFERS:
      g_value_set_uint (value, TBQ_LOAD (tbq->min_buffers));
      break;
    case PROP_MIN_THRESHOLD_TIME:
      g_value_set_uint64 (value, TBQ_LOAD (tbq->min_time));
      break;
    case PROP_LEAKY:
      g_value_set_enum (value, TBQ_LOAD (tbq->leaky));
      break;
    case PROP_SILENT:
      g_value_set_boolean (value, TBQ_LOAD (tbq->silent));
      break;
    case PROP_FLUSH_ON_EOS:
      g_value_set_boolean (value, TBQ_LOAD (tbq->flush_on_eos));
      break;
    case PROP_TRANSFER:
      g_value_set_enum (value, TBQ_LOAD (tbq->transfer));
      break;
    case PROP_COPY_THRESHOLD:
      g_value_set_uint (value, TBQ_LOAD (tbq->copy_threshold));
      break;
    case PROP_STATS:
      g_value_take_boxed (value, gst_tbqueue_stats (tbq));
      break;
    default:
      if (geometry_of (prop_id) != NULL)
        get_geometry (tbq, geometry_of (prop_id), value);
      else if (!get_placement (tbq, prop_id, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

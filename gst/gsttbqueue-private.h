/* tbqueue internals: the element's type and instance, its threads and
 * locks, and the lock and wait macros every gsttbqueue-*.c file uses.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * THREADS
 *  - The upstream streaming thread (it holds the sink pad's stream lock)
 *    uses the libtbq writer; whoever holds that lock may (the src task
 *    does, below, PUBLISH-BATCH).  A plain buffer takes no lock:
 *    it checks the flow and the levels with relaxed loads, bumps the
 *    sink-side counters it owns and writes one record (gsttbqueue-sink.c).
 *  - The copy work: the task of the element's copy group, one GstTask per
 *    group that runs the libtbq copy group for every member
 *    (gsttbqueue-group.c); it takes no lock of any member element.  The
 *    element lets it serve its queue or not by the queue's interrupt
 *    (gsttbqueue-copytask.c).
 *  - The src pad task is the libtbq reader: it takes records under qlock
 *    and pushes them with qlock released (gsttbqueue-src.c).
 *  - Any application thread: properties, stats, and the signal handlers.
 *  - The system clock's thread: the levels message, when an interval is
 *    set (gsttbqueue-stats.c); it reads the stats as an application does.
 *  - Both tasks' threads may be placed on CPUs and given a scheduling
 *    policy (gsttbqueue-placement.c), when they start and while they run.
 *
 * LOCKS, outermost first
 *  - The sink pad's stream lock (GStreamer's): the writer.
 *  - groups_lock (gsttbqueue-group.c): the process's table of copy groups
 *    and their member lists; taken with no lock of this list held.
 *  - qlock: the flow, the src side (reader, src segment, queries), every
 *    slow path of the sink side, every start of the src task and every
 *    interrupt and resume of the two-layer queue (which is how the copy
 *    group's task serves it or not).  (Pausing or stopping the src task
 *    from another thread waits for its function to return: that goes
 *    through GstPad, which guards its task, with qlock released.)  Never
 *    held across gst_pad_push, a signal emission or a wait on libtbq;
 *    waits on it are the conditions below, with qlock released.
 *  - Inside qlock: the object locks of the pads, libtbq's own locks.
 *    None of them is held while taking qlock.
 *  - A flush waits, without qlock, until the group's thread makes no pass
 *    on the interrupted queue (gst_tbqueue_copy_task_wait_paused: libtbq's
 *    tbq_queue_wait_copier_idle).
 *  - placement_lock: innermost, taken alone by property changes (as they
 *    are stored, and as they are applied at the end of the g_object_set ()
 *    call), by each task thread when it starts and leaves, and by the state
 *    changes that start and stop the tasks (gsttbqueue-placement.c);
 *    nothing is posted or waited for while holding it.
 *
 * THE FLOW (srcresult, written under qlock, read anywhere)
 *  - Not GST_FLOW_OK: the two-layer queue is interrupted (every libtbq wait
 *    returns, the copy group passes it over), the src task pauses itself, and
 *    item_del and sink_moved are broadcast; query_handled is broadcast by
 *    gst_tbqueue_stop_streaming once both tasks have stopped (a query
 *    waiter released earlier could miss the answer the src task is still
 *    pushing).  GST_FLOW_OK again: the queue
 *    resumes (the group serves it again), when the src pad is active.  One
 *    function does both (gst_tbqueue_locked_set_flow), so that no start and
 *    no pause is ever lost (proof in gsttbqueue-copytask.c).
 *
 * CONDITIONS (all with qlock)
 *  - item_del: the level dropped; the upstream thread waits for room.
 *  - query_handled: downstream answered a serialized query (or gave up).
 *  - sink_moved: the thread sleeping on the reader woke up (below).
 *
 * WAITING FOR THE COPIER (gst_tbqueue_locked_wait_sink)
 *  Records counted in may still be in the source layer, not yet visible to
 *  the reader.  Whoever needs them (the src task, a leak, the upstream
 *  thread waiting for a free source block) takes the reader's wait key
 *  under qlock before it looks, and then waits with qlock released.  The
 *  wait is libtbq's split reader wait (tbq_reader_sleep), a reader call:
 *  one thread at a time makes it (reader_sleeping); any other waits on
 *  sink_moved, which the sleeper broadcasts when it wakes, for the same
 *  event seen later.  The sleep ends when the copier (or the sleeper
 *  itself, pulling records on demand) makes records visible, on a kick
 *  (tbq_reader_wake: a property change, the copy task after an allocation
 *  failure) and on every flow change.  Nobody waits for records the copier
 *  cannot move: before waiting, a thread other than the src task checks
 *  that the sink pool can take a block (else the wait could only end when
 *  downstream gives blocks back), and the upstream thread publishes what
 *  it wrote.  Flushing and closing wait until nobody sleeps on the reader
 *  (the flow change ends the sleep at once).
 *
 * LEAKS AND LISTS
 *  Only the thread holding qlock takes records.  A buffer list is one
 *  item: the src task gathers its members (the rest of a list may still
 *  be on its way: it waits as above) in `partial`, counted out only when
 *  the list is whole, so a list never arrives with a hole.  A leak that
 *  finds `partial` drops it whole (the oldest item), and the rest of a
 *  leaked list is dropped by whoever meets it (leaking_list).  queue leaks
 *  in one go under its lock; a leak here may have to wait for the copy
 *  task, qlock released: meanwhile (leak_pending) the src task leaks what
 *  it takes while the queue is filled, so the oldest items go, as with
 *  queue, and never a newer one in their place.
 *
 * PUBLISH-BATCH
 *  With publish-batch other than 1 the writer holds records back,
 *  unpublished, while downstream is busy.  None is held from a src task
 *  that waits for data: the upstream thread publishes at once when it
 *  writes a buffer while the src task waits empty (src_idle, a Dekker
 *  handshake: gst_tbqueue_locked_is_empty), and a src task that finds
 *  items counted in but nothing to wait for collects them itself, taking
 *  the sink pad's stream lock with a trylock (the upstream thread is then
 *  out of the element: it publishes before anything it waits for).
 *  Whatever waits at a limit publishes first.
 *
 * COUNTERS
 *  Each counter has one writer (a thread, or whoever holds qlock): it bumps
 *  it with TBQ_ADD, anyone reads it with TBQ_LOAD.  The in-counters are
 *  bumped before a record is published, so the src side never takes out
 *  more than the sink side put in.  The peaks are the exception: raised
 *  with a CAS by more than one thread (gst_tbqueue_note_peaks).
 */
#ifndef __GST_TBQUEUE_PRIVATE_H__
#define __GST_TBQUEUE_PRIVATE_H__

#include <pthread.h>
#include <stdatomic.h>

#include "gsttbqueue-enums.h"
#include "gsttbqplatform.h"
#include "gsttbqrecord.h"
#include "tbq.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_tbqueue_debug);
GST_DEBUG_CATEGORY_EXTERN (gst_tbqueue_dataflow);
#define GST_CAT_DEFAULT gst_tbqueue_debug
#define DATAFLOW gst_tbqueue_dataflow

enum
{
  SIGNAL_UNDERRUN,
  SIGNAL_RUNNING,
  SIGNAL_OVERRUN,
  SIGNAL_PUSHING,
  LAST_SIGNAL
};

extern guint gst_tbqueue_signals[LAST_SIGNAL];

/* queue2's buffering (gsttbqueue-buffering.c): the BUFFERING messages and
 * query.  Everything under `lock` but `on`; messages are posted one at a
 * time, in the order they are computed, under `post_lock` (recursive: a
 * bus sync handler may set a property that posts again), with no other
 * lock held. */
typedef struct
{
  _Atomic gboolean on;          /* use-buffering: written under `lock`,
                                 * read by the streaming threads (relaxed:
                                 * a change applies from their next item) */
  GMutex lock;
  GRecMutex post_lock;
  gboolean use_rate_estimate;
  gboolean use_tags_bitrate;
  gboolean use_bitrate_query;
  gint low, high;               /* watermarks, 0..GST_TBQUEUE_BUFFERING_MAX */
  gboolean is_buffering;
  gint percent;                 /* the one to post, -1 before any */
  gint posted;                  /* the last one posted, -1 none */
  GstBufferingMode mode;        /* with `percent`: the message's stats */
  gint avg_in, avg_out;
  gint64 left;
  gboolean eos;                 /* EOS is queued: full */
  guint stalled;                /* the upstream thread waits (for room or
                                 * for a serialized query's answer): full,
                                 * as nothing can come in */
  gboolean overrun;             /* the upstream thread found the queue full
                                 * (it drops, leaks or waits) and no data
                                 * went out since: full */
  gint sink_level;              /* the sink layer's fill against what
                                 * bounds it, 0..GST_TBQUEUE_BUFFERING_MAX,
                                 * as a streaming thread last sampled it */
  guint64 spill_max;            /* spill-max-bytes of the open queue */
  /* Rates, in bytes per second, as queue2 estimates them. */
  gint64 in_start, out_start;   /* monotonic us, 0: not started */
  gdouble in_last, out_last;    /* s since the start at the last update */
  guint64 bytes_in, bytes_out;  /* since then */
  gdouble in_rate, out_rate, in_period;
  guint64 rate_time;            /* the level as a duration, from a bitrate
                                 * or the input rate (ns) */
  guint downstream_bitrate;     /* bits/s, 0: unknown */
  guint sink_tags_bitrate, src_tags_bitrate;
} GstTbQueueBuffering;

/* Counters of the element's own, besides libtbq's. */
typedef struct
{
  /* The upstream thread's. */
  _Atomic guint64 copied;       /* buffers written by value */
  _Atomic guint64 copied_bytes; /* their payload bytes */
  _Atomic guint64 referenced;   /* buffers written by reference */
  _Atomic guint64 copy_fallbacks;       /* buffers transfer would copy that
                                         * had to be referenced: */
  _Atomic guint64 referenced_special;   /* special memory */
  _Atomic guint64 referenced_meta;      /* a meta that cannot be copied */
  _Atomic guint64 referenced_too_large; /* larger than the sink pool holds */
  _Atomic guint64 dropped_upstream;     /* buffers leaked on the upstream end */
  _Atomic guint64 overruns;
  _Atomic guint64 level_waits;  /* upstream waits for the level to drop */
  /* qlock's. */
  _Atomic guint64 dropped_downstream;   /* buffers leaked on the downstream end */
  _Atomic guint64 copier_waits; /* waits for the copy task (leaky modes,
                                 * lowered limits) */
  /* The src task's. */
  _Atomic guint64 underruns;
} GstTbQueueCounters;

/* The element's two threads (gsttbqueue-placement.c). */
typedef enum
{
  GST_TBQUEUE_COPY_TASK = 0,
  GST_TBQUEUE_SRC_TASK = 1,
  GST_TBQUEUE_N_TASKS = 2
} GstTbQueueThread;

/* Where one task's thread runs (gsttbqueue-placement.c).  Every field is
 * under the element's placement_lock: the properties write them from any
 * application thread, the task's own thread reads and writes them when it
 * enters and leaves, the state-change thread reads them when the tasks
 * start. */
typedef struct
{
  /* As the properties say. */
  gchar *cpus;                  /* the last well-formed CPU list ("0-1,3");
                                 * NULL: leave alone */
  GstTbqCpuSet cpu_set;         /* parsed from `cpus` */
  gchar *malformed;             /* a CPU list set since that does not parse
                                 * (NULL: none), warned about at each start
                                 * of the tasks until a valid one is set */
  GstTbQueueSchedPolicy policy; /* INHERIT: leave alone */
  gint priority;                /* real-time: fifo and rr; 0 = not set */
  gint nice;                    /* other and batch */
  /* Set since the last commit (the end of the g_object_set () call that
   * set them), which applies them to a running thread. */
  gboolean cpus_set;
  gboolean malformed_set;
  gboolean sched_set;
  /* The thread running the task now (0: none), and what it had before. */
  GstTbqThreadId tid;
  GstTbqCpuSet saved_cpu_set;   /* empty: could not be read */
  GstTbqSched saved_sched;
  gboolean changed_cpus;
  gboolean changed_sched;
} GstTbQueuePlacement;

/* The element's types.  GstTbQueueBase (abstract) is the queue: its
 * instance is the struct below, which only the element's own files see,
 * and its class has the src side's virtual functions; every file works
 * on it.  Two elements derive from it: tbqueue (GstTbQueue, its one src
 * pad: gsttbqueue-src.c) and tbqsplit (GstTbqSplit, a src pad per
 * branch: gsttbqsplit.c), which add their pads' templates.  GST_TBQUEUE()
 * casts either to the queue. */
typedef struct _GstTbQueue GstTbQueue;
typedef struct _GstTbQueueClass GstTbQueueClass;

GType gst_tbqueue_base_get_type (void);
GType gst_tbqueue_get_type (void);
#define GST_TYPE_TBQUEUE_BASE (gst_tbqueue_base_get_type ())
#define GST_TYPE_TBQUEUE (gst_tbqueue_get_type ())
#define GST_TBQUEUE(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), GST_TYPE_TBQUEUE_BASE, GstTbQueue))
#define GST_IS_TBQUEUE_BASE(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), GST_TYPE_TBQUEUE_BASE))
#define GST_TBQUEUE_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), GST_TYPE_TBQUEUE_BASE, GstTbQueueClass))

/* The src side, as the queue sees it: tbqueue's one src pad and task, or
 * tbqsplit's branches. */
struct _GstTbQueueClass
{
  GstElementClass parent_class;

  /* qlock, the flow OK: start the src task(s) of the active src pad(s).
   * FALSE if one cannot start. */
  gboolean (*locked_start_src) (GstTbQueue * tbq);
  /* No lock: pause the src task(s) and wait until none runs its
   * function. */
  void (*pause_src) (GstTbQueue * tbq);
  /* Whether the src side is active (its pads activated). */
  gboolean (*src_active) (GstTbQueue * tbq);
  /* No lock: push an event that does not travel through the queue
   * (FLUSH_START, FLUSH_STOP, a non-serialized event) downstream. */
  gboolean (*push_downstream) (GstTbQueue * tbq, GstEvent * event);
  /* qlock: a sticky event that leaves the queue without being pushed (a
   * leak, a flush, EOS from downstream) is still the src side's sticky
   * state, as with queue.  The reference stays the caller's. */
  void (*locked_store_sticky) (GstTbQueue * tbq, GstEvent * event);
  /* qlock, or NULL: the flow changed (gst_tbqueue_locked_set_flow); a
   * src side with waits of its own ends them when it is not OK. */
  void (*locked_flow_changed) (GstTbQueue * tbq, GstFlowReturn flow);
};

/* Every element derived from the queue has this sink pad template. */
extern GstStaticPadTemplate gst_tbqueue_sink_template;
/* The Doc-uri of the plugin's elements (gsttbqueue.c). */
const gchar *gst_tbqueue_doc_uri (void);

typedef struct _GstTbQueueGroup GstTbQueueGroup;

struct _GstTbQueue
{
  GstElement element;

  GstPad *sinkpad;
  GstPad *srcpad;               /* tbqueue's; NULL in a tbqsplit */

  /* Limits: written under qlock, read anywhere (relaxed). */
  _Atomic guint max_buffers;
  _Atomic guint max_bytes;
  _Atomic guint64 max_time;
  /* Bumped under qlock whenever the running time at the src moves back (a
   * SEGMENT whose position was ahead of the data, timestamps going back,
   * a flush): the sink side's cached view of the src side is then no
   * longer a bound of the level, and it reads the src side again.  Next
   * to the limits, which the upstream thread reads for every buffer: a
   * line the src side writes only then. */
  _Atomic guint srctime_backs;
  _Atomic guint min_buffers;    /* current thresholds (zeroed by EOS) */
  _Atomic guint min_bytes;
  _Atomic guint64 min_time;
  guint orig_min_buffers;       /* as set by the application */
  guint orig_min_bytes;
  guint64 orig_min_time;
  _Atomic gint leaky;
  _Atomic gboolean silent;
  _Atomic gboolean flush_on_eos;
  _Atomic gint transfer;
  _Atomic guint copy_threshold;

  /* Pool geometry: applies from the next READY->PAUSED (object lock). */
  guint source_block_size;
  guint source_blocks;
  guint sink_block_size;
  guint64 sink_min_bytes;
  guint64 sink_max_bytes;
  guint idle_blocks;
  guint publish_batch;
  guint64 max_coalesce_latency;
  gboolean coalesce_set;        /* max-coalesce-latency was set: the src
                                 * task naps in a live stream too, and the
                                 * latency answer includes the bound */
  gboolean upstream_live;       /* the last latency answer through the src
                                 * pad said live (object lock, as the two
                                 * above; the reader's bound follows them
                                 * under qlock: gsttbqueue-src.c) */
  /* Spill (object lock, as the geometry): the template (NULL: none), and
   * the file in use from open() to close(). */
  gchar *temp_template;
  gchar *copy_group;            /* "" or NULL: the default group */
  guint64 group_max_bytes;      /* 0: no cap */
  gboolean temp_remove;
  guint64 spill_max_bytes;
  gchar *temp_location;         /* the file, from open() to close(), and
                                 * after it until the next open() when
                                 * kept (temp_kept: temp-remove was off) */
  gboolean temp_kept;
  gchar *spill_read_error;      /* libtbq's report of a spill read failure
                                 * taken while looking for another (object
                                 * lock), for the src task's error */

  /* The two-layer queue, from READY->PAUSED to PAUSED->READY; set and
   * cleared under qlock. */
  TbqQueue *q;
  TbqWriter *writer;            /* the upstream thread's */
  TbqReader *reader;            /* under qlock; see WAITING FOR THE COPIER */
  GstTbqLimits limits;          /* what a copy record may be */
  gboolean batching;            /* publish-batch is not 1: the writer holds
                                 * records back until it publishes */
  gboolean spilling;            /* the queue spills: every buffer that can
                                 * be copied is (set at open, read by the
                                 * upstream thread) */
  gboolean spill_read_failed;   /* qlock: a reader call met a unit of the
                                 * spill file it cannot read back (nothing
                                 * after it will be visible); cleared when
                                 * a flush discards */
  _Atomic gboolean src_idle;    /* batching: the src task waits for data;
                                 * written under qlock, read by the
                                 * upstream thread: relaxed, ordered by the
                                 * seq_cst fences of the handshake
                                 * (gst_tbqueue_sink_publish_if_idle) */

  gboolean geometry_in_use;     /* qlock: from open() to close() */
  GPtrArray *refused;           /* object lock: why property values were
                                 * refused while the element had no bus
                                 * (a gst-launch-1.0 line), said again when
                                 * the tasks start; NULL: none */

  pthread_mutex_t qlock;        /* POSIX, so ThreadSanitizer sees it */
  pthread_cond_t item_del;
  pthread_cond_t query_handled;
  pthread_cond_t sink_moved;
  _Atomic gint srcresult;       /* GstFlowReturn; written under qlock */
  _Atomic gboolean eos;         /* EOS queued: refuse data */
  _Atomic gboolean unexpected;  /* downstream returned EOS */
  /* qlock: the flow is EOS because downstream returned it for data, not
   * after an EOS pushed (a tbqsplit whose branches all got EOS): the
   * next EOS goes on, so that the pipeline ends. */
  gboolean downstream_ended;
  gboolean waiting_del;         /* the upstream thread waits on item_del */
  /* Set once by a subclass before it plays (tbqsplit): the upstream
   * thread that waits at a limit resumes at the low mark
   * (gst_tbqueue_may_resume), or once it waited RESUME_LOW_TOP_UP_NS
   * below the limit; see wait_for_room() in gsttbqueue-leaks.c. */
  gboolean resume_low;
  /* qlock: the upstream thread waits below the limit, above the low
   * mark: only the low mark (or a flow change) wakes it. */
  gboolean waiting_low;
  gboolean reader_sleeping;     /* a thread is in tbq_reader_sleep() */

  /* Serialized queries, under qlock. */
  gboolean last_query;
  GstQuery *last_handled_query;
  guint32 query_seq;            /* serialized queries sent */
  guint32 abandoned_query_seq;  /* queries up to this one have no waiter */
  GstQuery *query_in_use;       /* downstream is answering it (src task) */
  _Atomic gboolean pushing_data;        /* the src task is inside the push
                                         * of a buffer or list: written by
                                         * it, read by the upstream thread
                                         * (relaxed: a hint for buffering) */

  /* Sink side, owned by the thread holding the sink pad's stream lock.
   * The counters only grow; levels are in - out. */
  GstSegment sink_segment;
  gboolean tail_needs_discont;
  _Atomic guint64 in_buffers;
  _Atomic guint64 in_bytes;
  _Atomic guint64 in_items;
  _Atomic gint64 sinktime;      /* running time at the sink, or GST_CLOCK_STIME_NONE */
  _Atomic gboolean tail_is_buffer;      /* last item queued is a buffer */
  gboolean special_caps;        /* the caps name memory other than system
                                 * memory: no buffer is copied */
  gboolean warned_too_large;    /* this stream had a buffer too large to
                                 * copy (warned once per stream) */
  /* The sink side's copy of the src side's counters, refreshed only now and
   * then so that a buffer reads no other core's cache lines.  It is never
   * ahead of the real counters: a level computed from it is never below the
   * real level (see gst_tbqueue_sink_is_filled). */
  guint64 seen_out_buffers;
  guint64 seen_out_bytes;
  gint64 seen_srctime;
  guint seen_srctime_backs;
  guint refresh_countdown;

  /* Src side, under qlock.  Counters written under qlock, read anywhere. */
  GstSegment src_segment;
  gboolean head_needs_discont;
  gboolean newseg_applied_to_src;
  guint64 eos_drain_until;      /* items up to this count are dropped (EOS) */
  guint64 flush_until;          /* items up to this count are flushed
                                 * (flush-on-eos, when they show up) */
  GstBufferList *partial;       /* a list the src task is gathering */
  gboolean leaking_list;        /* the rest of a leaked list is dropped */
  _Atomic gboolean leak_pending;        /* a leak is not finished: whoever
                                         * takes records leaks them while the
                                         * queue is filled.  Written under
                                         * qlock; the upstream thread's relaxed
                                         * read is a hint it checks again
                                         * under qlock */
  _Atomic guint64 out_buffers;
  _Atomic guint64 out_bytes;
  _Atomic guint64 out_items;
  _Atomic gint64 srctime;
  /* The highest levels, raised just before a level drops
   * (gst_tbqueue_note_peaks): by qlock holders, beside the counters they
   * write for every buffer out, and rarely by the upstream thread (its
   * running time stepping back).  A relaxed CAS: statistics. */
  _Atomic guint64 peak_buffers;
  _Atomic guint64 peak_bytes;
  _Atomic guint64 peak_time;
  /* How many pool buffers the element holds by reference, whatever their
   * pool (transfer=auto copies a pool's buffer that would take it past
   * pool_cap: gsttbqueue-sink.c, "the copy rule").  held_pool is the pool
   * of the last pool buffer that came in, whose limit pool_cap is; never
   * dereferenced but by the upstream thread while it holds one of its
   * buffers; written with pool_cap under qlock by the upstream thread
   * (which reads both unlocked), read by qlock holders.  pool_refs_in:
   * the upstream thread's, its pool buffers written by reference;
   * pool_refs_out: qlock's, pool buffers pushed (counted when the push
   * returns) or dropped.  Held = in - out: the reader's relaxed load of
   * pool_refs_out may be stale, which is lower and only costs a copy.
   * Both made equal by a flush (nothing held then). */
  GstBufferPool *held_pool;
  _Atomic gint64 pool_cap;      /* the upstream thread's: at most this many
                                 * held (G_MAXINT64: unbounded pool) */
  gboolean pool_config_stale;   /* caps changed, read the pool's config
                                 * again: under the sink pad's stream lock
                                 * (set by a CAPS event, read by the chain
                                 * functions) */
  _Atomic guint64 pool_refs_in;
  _Atomic guint64 pool_refs_out;

  /* The copy group serving `q` (gsttbqueue-group.c): set and cleared
   * under its groups_lock, with `q`; the state-change thread reads it. */
  GstTbQueueGroup *group;
  gpointer group_member;

  /* Thread placement of both tasks (gsttbqueue-placement.c).  Innermost
   * lock: nothing is taken, posted or waited for while holding it. */
  GMutex placement_lock;
  GstTbQueuePlacement placement[GST_TBQUEUE_N_TASKS];
  /* From READY_TO_PAUSED (the tasks start) to PAUSED_TO_READY: what
   * cannot be applied is warned about as it is set, not at the next
   * start.  Under placement_lock. */
  gboolean placement_started;

  /* The "tbqueue-levels" element message (gsttbqueue-stats.c), under the
   * object lock.  levels_interval is the hook for a property: ns between
   * two messages, 0 = none (the default); set it with
   * gst_tbqueue_stats_set_post_interval(), which applies it at once. */
  guint64 levels_interval;
  GstClockID levels_clock_id;   /* the periodic id while posting */
  gboolean levels_running;      /* READY_TO_PAUSED to PAUSED_TO_READY */

  GstTbQueueCounters counters;
  GstTbQueueBuffering buffering;
};

#define TBQ_LOAD(field) atomic_load_explicit (&(field), memory_order_relaxed)
#define TBQ_STORE(field, v) atomic_store_explicit (&(field), (v), memory_order_relaxed)
/* A counter's one writer bumps it: no read-modify-write needed. */
#define TBQ_ADD(field, n) TBQ_STORE (field, TBQ_LOAD (field) + (n))

#define GST_TBQUEUE_FLOW(q) ((GstFlowReturn) TBQ_LOAD ((q)->srcresult))

/* A copy record libtbq refused as too large for the sink pool now (a
 * capped copy group's share shrank as members joined): the buffer goes by
 * reference instead (gsttbqueue-sink.c).  Never returned upstream. */
#define GST_TBQUEUE_FLOW_TOO_LARGE GST_FLOW_CUSTOM_SUCCESS_1

/* The flow as the sink side sees it: EOS once EOS is queued or downstream
 * returned it.  Relaxed loads: the fast path takes no lock. */
static inline GstFlowReturn
gst_tbqueue_sink_flow (GstTbQueue * q)
{
  GstFlowReturn ret = GST_TBQUEUE_FLOW (q);

  if (G_UNLIKELY (ret != GST_FLOW_OK))
    return ret;
  if (G_UNLIKELY (TBQ_LOAD (q->eos) || TBQ_LOAD (q->unexpected)))
    return GST_FLOW_EOS;
  return GST_FLOW_OK;
}

/* ---- logging the levels (gstqueue's STATUS), see gsttbqueue-levels.c ---- */

void gst_tbqueue_log_status (GstTbQueue * q, GstPad * pad, const gchar * msg,
    const gchar * file, const gchar * function, gint line);

#ifndef GST_DISABLE_GST_DEBUG
#define STATUS(q, pad, msg) G_STMT_START {                              \
  if (G_UNLIKELY (gst_debug_category_get_threshold (DATAFLOW)           \
          >= GST_LEVEL_LOG))                                            \
    gst_tbqueue_log_status (q, pad, msg, __FILE__, GST_FUNCTION,        \
        __LINE__);                                                      \
} G_STMT_END
#else
#define STATUS(q, pad, msg) G_STMT_START { } G_STMT_END
#endif

/* ---- qlock and its conditions, in gstqueue.c's idiom ---- */

#define GST_TBQUEUE_MUTEX_LOCK(q) G_STMT_START {                        \
  pthread_mutex_lock (&(q)->qlock);                                     \
} G_STMT_END

/* Lock, and leave through `label` (qlock held) unless the flow is OK. */
#define GST_TBQUEUE_MUTEX_LOCK_CHECK(q, label) G_STMT_START {            \
  GST_TBQUEUE_MUTEX_LOCK (q);                                           \
  if (GST_TBQUEUE_FLOW (q) != GST_FLOW_OK)                              \
    goto label;                                                         \
} G_STMT_END

#define GST_TBQUEUE_MUTEX_UNLOCK(q) G_STMT_START {                      \
  pthread_mutex_unlock (&(q)->qlock);                                   \
} G_STMT_END

#define GST_TBQUEUE_WAIT(q, cond) pthread_cond_wait (&(q)->cond, &(q)->qlock)
#define GST_TBQUEUE_BROADCAST(q, cond) pthread_cond_broadcast (&(q)->cond)

/* Upstream thread: wait until the level dropped; leave through `label`
 * (qlock held) unless the flow is OK. */
#define GST_TBQUEUE_WAIT_DEL_CHECK(q, label) G_STMT_START {             \
  STATUS (q, (q)->sinkpad, "wait for DEL");                             \
  (q)->waiting_del = TRUE;                                              \
  GST_TBQUEUE_WAIT (q, item_del);                                       \
  (q)->waiting_del = FALSE;                                             \
  if (GST_TBQUEUE_FLOW (q) != GST_FLOW_OK) {                            \
    STATUS (q, (q)->sinkpad, "received DEL wakeup");                    \
    goto label;                                                         \
  }                                                                     \
  STATUS (q, (q)->sinkpad, "received DEL");                             \
} G_STMT_END

#define GST_TBQUEUE_SIGNAL_DEL(q) G_STMT_START {                        \
  if ((q)->waiting_del                                                  \
      && (!(q)->waiting_low || gst_tbqueue_may_resume (q))) {           \
    STATUS (q, (q)->srcpad, "signal DEL");                              \
    pthread_cond_signal (&(q)->item_del);                               \
  }                                                                     \
} G_STMT_END

/* qlock: wait, qlock released, until the copier made records visible
 * after `key` (tbq_reader_prepare_wait(), taken under qlock before the
 * caller looked), a kick or a flow change, or until the CLOCK_MONOTONIC
 * `deadline_ns` (< 0: none); see WAITING FOR THE COPIER.  TRUE when the
 * deadline came.  Spurious returns happen: the caller looks again. */
static inline gboolean
gst_tbqueue_locked_wait_sink_until (GstTbQueue * tbq, guint32 key,
    gint64 deadline_ns)
{
  gint64 left = -1;
  gboolean timeout;

  if (deadline_ns >= 0 && (left = deadline_ns - tbq_clock_ns ()) <= 0)
    return TRUE;
  if (tbq->reader_sleeping)
    /* (sink_moved is on the monotonic clock, tbq_clock_ns()'s.) */
    return tbq_cond_wait_until (&tbq->sink_moved, &tbq->qlock, deadline_ns);
  tbq->reader_sleeping = TRUE;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  timeout = tbq_reader_sleep (tbq->reader, key, left) == TBQ_TIMEOUT;
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->reader_sleeping = FALSE;
  GST_TBQUEUE_BROADCAST (tbq, sink_moved);
  return timeout;
}

/* The same with no deadline. */
static inline void
gst_tbqueue_locked_wait_sink (GstTbQueue * tbq, guint32 key)
{
  (void) gst_tbqueue_locked_wait_sink_until (tbq, key, -1);
}

/* qlock: whether the copy task has records of this element's writer to
 * move (published and not yet in the sink layer).  Only then does a wait
 * for it (gst_tbqueue_locked_wait_sink) end by itself: with none, the
 * copier publishes nothing and nobody would end the sleep.  A refused
 * write whose record the sink pool can take now (downstream gave memory
 * back since) is tried again instead; what is counted in but neither
 * visible nor moving (a list the upstream thread is still writing, a unit
 * of the spill file that cannot be read back) is out of reach.  An
 * interrupted queue moves nothing either.  A snapshot of the writer's
 * counters: records published after it belong to the upstream thread,
 * which publishes before it waits (and the reader's key, taken before the
 * look, ends a sleep on records the copier moves meanwhile). */
static inline gboolean
gst_tbqueue_locked_copier_has_work (GstTbQueue * tbq)
{
  return tbq_writer_wait_copied (tbq->writer, 0) == TBQ_TIMEOUT;
}

/* qlock, the flow not OK: wait until nobody sleeps on the reader. */
static inline void
gst_tbqueue_locked_wait_reader_idle (GstTbQueue * tbq)
{
  while (tbq->reader_sleeping)
    GST_TBQUEUE_WAIT (tbq, sink_moved);
}

/* Src task: wait for the copier (above); leave through `label` (qlock
 * held) unless the flow is OK. */
#define GST_TBQUEUE_WAIT_ADD_CHECK(q, key, label) G_STMT_START {        \
  STATUS (q, (q)->srcpad, "wait for ADD");                              \
  gst_tbqueue_locked_wait_sink (q, key);                                \
  if (GST_TBQUEUE_FLOW (q) != GST_FLOW_OK) {                            \
    STATUS (q, (q)->srcpad, "received ADD wakeup");                     \
    goto label;                                                         \
  }                                                                     \
  STATUS (q, (q)->srcpad, "received ADD");                              \
} G_STMT_END

G_END_DECLS
#endif /* __GST_TBQUEUE_PRIVATE_H__ */

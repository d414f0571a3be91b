/* Test elements for the parallel branches (tbqsplit, tbqjoin,
 * tbqparallel): a worker that behaves as real workers do, and a
 * downstream that checks every byte and the order.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by test-join.c (the join driven by a split of the test's own)
 * and test-parallel.c (the real tbqsplit, tbqjoin and tbqparallel).  Both
 * are GStreamer elements, registered by tbq_workers_register() as
 * "tbqtestworker" and "tbqtestsink", so that a gst-launch description
 * (tbqparallel's `worker`, gst_parse_launch) can name them.
 *
 * INPUTS.  tbq_input_new (i) is TBQ_INPUT_SIZE bytes naming `i` (its
 * first 8 bytes, the rest derived from it) with pts i ms: downstream
 * knows which input a buffer is, and that no byte of it changed.
 *
 * THE WORKER does what a branch's worker may do to its inputs, each a way
 * real workers behave: it takes its time (a random sleep), drops inputs
 * (QoS, a rate), makes two outputs of an input or one of two, makes new
 * buffers without the input's metas, marks its caps (an encoder changing
 * the media type), stalls until the test lets it go on, or fails.  It is
 * synchronous (its outputs are pushed in its chain function); wrapped
 * with a queue before it (TbqWorkerConfig.queue_inside) it is not.
 *
 * THE SINK records what reaches it: each buffer's input index (or, with
 * `digests`, a digest of its bytes, for buffers that are not inputs: a
 * decoder's frames), and each event with the number of buffers before
 * it.  It can hold its chain (downstream stalled), return an error, and
 * posts EOS on the bus of the pipeline it is in, as a sink does; an
 * upstream event sent to it (a seek sent to the pipeline) goes upstream.
 *
 * LOCKS.  Each element has a POSIX lock and condition (tbq-check.h's:
 * ThreadSanitizer sees them) guarding its fields below marked so; the
 * test reads them under TBQ_LOCK.  Every wait has a deadline: a hang
 * fails the test, never passes it.
 */
#ifndef __TBQ_WORKERS_H__
#define __TBQ_WORKERS_H__

#include "tbq-check.h"

G_BEGIN_DECLS

#define TBQ_LOCK(x) pthread_mutex_lock (&(x)->lock)
#define TBQ_UNLOCK(x) pthread_mutex_unlock (&(x)->lock)
#define TBQ_BROADCAST(x) pthread_cond_broadcast (&(x)->cond)

/* Register "tbqtestworker" and "tbqtestsink" (once; call it before the
 * tests run, so that the factories are not counted as leaks). */
void tbq_workers_register (void);

/* ---- inputs ---- */

#define TBQ_INPUT_SIZE 16

GstBuffer *tbq_input_new (guint64 index);
/* The index an input names: FALSE when a byte or the pts is not what
 * tbq_input_new() made. */
gboolean tbq_input_index (GstBuffer * buffer, guint64 * index);
/* A CAPS event of `caps` (ours goes: gst_event_new_caps() takes its own). */
GstEvent *tbq_caps_event (GstCaps * caps);

/* ---- the worker ---- */

typedef struct
{
  GstElement parent;
  GstPad *sinkpad, *srcpad;

  /* Set before it plays (properties of the same names with '-'): */
  guint delay_us;               /* sleeps a random 0..delay_us per input */
  guint drop_every;             /* drops every n-th input (0: none) */
  gboolean dup;                 /* two outputs per input */
  gboolean merge;               /* one output per two inputs */
  gboolean strip;               /* outputs without the input's metas */
  gboolean mark_caps;           /* caps with a "worker" field */
  gint stall_at;                /* waits at its n-th input (from 0) until
                                 * released (-1: never) */
  gint error_at;                /* fails at its n-th input: an error
                                 * message and GST_FLOW_ERROR (-1: never) */
  gboolean query_after;         /* after each output, a serialized query
                                 * downstream, which must be answered */

  pthread_mutex_t lock;
  pthread_cond_t cond;
  gboolean stalled;             /* lock: waiting at stall_at */
  gboolean has_stalled;         /* lock: came to stall_at (and may be
                                 * past it) */
  gboolean unstall;             /* lock */
  guint n_in;                   /* lock: inputs taken */
  guint queries_answered;       /* lock: query_after's */
  GArray *lost;                 /* lock: indices of inputs it made
                                 * nothing of (guint64) */
  GstBuffer *held;              /* merge: the first of two (its thread) */
} TbqTestWorker;

GType tbq_test_worker_get_type (void);
#define TBQ_TEST_WORKER(o) ((TbqTestWorker *) (o))

/* How a test sets up a branch's worker. */
typedef struct
{
  guint delay_us;
  guint drop_every;
  gboolean dup, merge, strip, mark_caps;
  gboolean queue_inside;        /* not synchronous: a queue before it */
  gint stall_at;
  gint error_at;
} TbqWorkerConfig;

#define TBQ_WORKER_DEFAULT { 0, 0, FALSE, FALSE, FALSE, FALSE, FALSE, -1, -1 }

/* A worker (or a bin with a queue and the worker, pads "sink" and "src")
 * for one branch; `*w` is the worker in it. */
GstElement *tbq_worker_new (const TbqWorkerConfig * cfg, TbqTestWorker ** w);
/* Let a stalled worker go on. */
void tbq_worker_unstall (TbqTestWorker * w);
/* Wait until the worker came to its stall (it may be past it by now:
 * the test may have let it go on). */
void tbq_worker_wait_stalled (TbqTestWorker * w);
/* Wait until the worker has taken `n` inputs. */
void tbq_worker_wait_inputs (TbqTestWorker * w, guint n);
/* How many inputs it made nothing of. */
guint tbq_worker_n_lost (TbqTestWorker * w);
/* Every tbqtestworker in `bin`, recursively (references). */
GPtrArray *tbq_workers_in (GstBin * bin);
/* A set of input indices (guint64 *, owned), and every input `w` made
 * nothing of added to it. */
GHashTable *tbq_lost_set_new (void);
void tbq_lost_set_add (GHashTable * set, TbqTestWorker * w);

/* ---- the sink ---- */

typedef struct
{
  GstElement parent;
  GstPad *pad;

  pthread_mutex_t lock;
  pthread_cond_t cond;
  /* Set before data comes: */
  gboolean digests;             /* record digests, not input indices */
  /* lock: */
  GArray *indices;              /* guint64: each buffer's input index (or
                                 * digest); G_MAXUINT64: not an input */
  GPtrArray *events;            /* GstEvent * */
  GArray *event_at;             /* guint: buffers before each event */
  guint bad;                    /* buffers that were not inputs */
  gboolean hold;                /* chain and serialized events wait */
  guint hold_after;             /* ... once this many buffers came (0:
                                 * no); tbq_test_sink_release() clears */
  guint holding;
  gboolean flushing;
  guint error_at;               /* return ERROR for this buffer (from 1;
                                 * 0: never) */
  gint64 progress;              /* monotonic us of the last item */
  guint allocation_queries;
  gint query_at;                /* buffers before the "tj-query" (-1) */
} TbqTestSink;

GType tbq_test_sink_get_type (void);
#define TBQ_TEST_SINK(o) ((TbqTestSink *) (o))

/* A sink outside any bin, its pad active and linked to `element`'s src
 * pad (the element's downstream in a test that drives the states
 * itself); tbq_test_sink_free() unlinks and frees it. */
TbqTestSink *tbq_test_sink_new_linked (GstElement * element);
void tbq_test_sink_free (TbqTestSink * s);

/* lock: the events of `type` received. */
guint tbq_test_sink_locked_count (TbqTestSink * s, GstEventType type);
guint tbq_test_sink_count (TbqTestSink * s, GstEventType type);
/* Hold downstream (chain and serialized events wait), and let it go. */
void tbq_test_sink_hold (TbqTestSink * s);
void tbq_test_sink_release (TbqTestSink * s);
/* Waits with a deadline that moves while items keep coming (a long run
 * under a sanitizer is not a hang; nothing for TBQ_WAIT_SECONDS is). */
void tbq_test_sink_wait_eos (TbqTestSink * s);
void tbq_test_sink_wait_buffers (TbqTestSink * s, guint n);
void tbq_test_sink_wait_holding (TbqTestSink * s);
void tbq_test_sink_wait_event (TbqTestSink * s, GstEventType type);

/* The same wait for any condition on the sink, `pred` evaluated with the
 * sink's lock held. */
#define TBQ_TEST_SINK_WAIT(s, pred, what) G_STMT_START {                 \
  TBQ_LOCK (s);                                                         \
  (s)->progress = g_get_monotonic_time ();                              \
  while (!(pred)) {                                                     \
    gint64 end_ = (s)->progress + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND; \
    if (!tbq_timed_wait (&(s)->cond, &(s)->lock, end_) && !(pred)       \
        && g_get_monotonic_time () >= (s)->progress                     \
        + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND)                        \
      fail ("timed out waiting for %s (%u buffers downstream)", what,   \
          (s)->indices->len);                                           \
  }                                                                     \
  TBQ_UNLOCK (s);                                                       \
} G_STMT_END

/* Every input from `base` to base + n - 1 (but those in `lost`, a set of
 * guint64 *, may be NULL) came out `times` times each, in order, and
 * nothing else; every byte as made. */
void tbq_test_sink_check_in_order (TbqTestSink * s, guint64 base, guint64 n,
    guint times, GHashTable * lost);
/* Each event of `type` (and of structure `name`, when not NULL) came out
 * once, with `at` buffers before it. */
void tbq_test_sink_check_event_once_at (TbqTestSink * s, GstEventType type,
    const gchar * name, guint at);

/* Every input from 0 to n - 1 (but those `workers`, TbqTestWorker *,
 * made nothing of) came out `times` times each, in order. */
void tbq_test_sink_check_workers (TbqTestSink * s, GPtrArray * workers,
    guint64 n, guint times);

/* A digest of a buffer's bytes (the sink's `digests` mode). */
guint64 tbq_buffer_digest (GstBuffer * buffer);

/* ---- the join's promises ---- */

/* A field of a tbqjoin's stats (guint64 or guint). */
guint64 tbq_join_stat (GstElement * join, const gchar * field);
/* Pop the bus's messages of `type` (WARNING or ERROR): how many say
 * `text` (NULL: any). */
guint tbq_bus_count (GstBus * bus, GstMessageType type, const gchar * text);

/* What the workers do, each a way real workers behave, and what the join
 * promises then: test-join (the join with a split of the test's own) and
 * test-parallel (the real split) run each with their split, and check it
 * with tbq_scenario_check(). */
typedef enum
{
  TBQ_SCENARIO_DELAYS,          /* random delays: every input once, in
                                 * order, nothing lost or late */
  TBQ_SCENARIO_DROPS,           /* some drop inputs: the rest in order, the
                                 * gaps counted exactly */
  TBQ_SCENARIO_DUP,             /* two outputs per input: both at its place */
  TBQ_SCENARIO_MERGE,           /* one output of two inputs: at the later
                                 * one's place, the earlier one a gap */
  TBQ_SCENARIO_STRIP_SYNC,      /* new buffers without metas, synchronous:
                                 * placed exactly, no warning */
  TBQ_SCENARIO_STRIP_QUEUE,     /* the same behind a queue: one output per
                                 * input in turn, said once */
} TbqScenario;

/* The workers of a scenario (every branch alike; DROPS: the one that
 * drops). */
TbqWorkerConfig tbq_scenario_config (TbqScenario scenario);
/* After `n` inputs (0 to n - 1) went through `workers` (TbqTestWorker *)
 * and `join` to `sink`, EOS included: what the join promises.  `bus`: the
 * join's pipeline's (its warnings are popped). */
void tbq_scenario_check (TbqScenario scenario, TbqTestSink * sink,
    GstElement * join, GstBus * bus, GPtrArray * workers, guint64 n);

G_END_DECLS
#endif /* __TBQ_WORKERS_H__ */

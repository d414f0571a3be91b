/* Shared helpers for the tbqueue element tests.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Most behaviours are specified as "what queue does": a TbqLink puts one
 * element (tbqueue or queue) between a test source pad and a test sink pad,
 * records everything that reaches the sink pad, the thread of every signal,
 * and lets a test block or fail downstream on demand.  Scenarios are written
 * once, taking the factory name, and run on both elements.
 *
 * A test that only pushes buffers into a playing element and pulls what
 * comes out uses GstHarness (test-transfer.c).  TbqLink stays for what
 * GstHarness (1.22) does not do and these tests need:
 *  - the test drives the state changes and the initial events itself
 *    (underrun on the way to PLAYING, held starts, restarts); a harness
 *    plays the element and pushes its own STREAM_START when it is created;
 *  - one ordered record of buffers, buffer lists (kept whole: the harness
 *    sink has no chain_list and splits them), events and serialized
 *    queries, where the harness keeps buffers and events in separate queues
 *    and does not keep queries: the order between them is what a queue
 *    must preserve;
 *  - holding downstream for serialized events and queries as well as
 *    buffers (the harness's blocking push mode holds buffers only), a flow
 *    return of the test's choosing, downstream stopping (pad deactivation);
 *  - upstream answers to LATENCY (live flag, min, max) and POSITION;
 *  - the element's signals and the thread each was emitted from;
 *  - the leaks-tracer checkpoints around every test (tbq_leaks_*), which
 *    gst-check has no equivalent for.
 */
#ifndef __TBQ_CHECK_H__
#define __TBQ_CHECK_H__

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <pthread.h>

G_BEGIN_DECLS

/* ---- test size and time ---- */

/* TBQ_TEST_SCALE (default 1.0; 0.1 under sanitizers) shrinks loops. */
gdouble tbq_test_scale (void);
/* n scaled, at least `min`. */
guint tbq_scaled (guint n, guint min);
/* How long any wait for an asynchronous event may take before the test
 * fails (a hang check, not a speed check). */
#define TBQ_WAIT_SECONDS 20

/* A POSIX lock and condition (ThreadSanitizer sees them, where GLib's
 * futex-based ones are invisible to it), the condition on the monotonic
 * clock. */
void tbq_init_lock (pthread_mutex_t * lock, pthread_cond_t * cond);
/* Wait on `cond` until `end` (g_get_monotonic_time () units); FALSE on
 * timeout. */
gboolean tbq_timed_wait (pthread_cond_t * cond, pthread_mutex_t * lock,
    gint64 end);

/* ---- main and fixtures ---- */

/* Every test runs with the leaks tracer; see tbq_leaks_*. */
int tbq_check_main (int *argc, char ***argv, Suite * (*suite_func) (void),
    const gchar * name, const gchar * file);
#define TBQ_CHECK_MAIN(name)                                          \
  int main (int argc, char **argv)                                    \
  {                                                                   \
    return tbq_check_main (&argc, &argv, name ## _suite, #name, __FILE__); \
  }

/* A TCase with the leak check fixture and a generous hang timeout. */
TCase *tbq_tcase (Suite * s, const gchar * name);

/* Leak check: objects created after tbq_leaks_begin() and still alive at
 * tbq_leaks_end() fail the test (objects flagged MAY_BE_LEAKED excepted).
 * Both run automatically around every test of a tbq_tcase(). */
gboolean tbq_leaks_tracer_active (void);
void tbq_leaks_begin (void);
/* Number of leaked objects whose type name starts with one of the
 * comma-separated prefixes (NULL: any type); they are listed on stdout. */
guint tbq_leaks_count (const gchar * type_prefixes);
void tbq_leaks_end (void);

/* ---- a linked element ---- */

typedef enum
{
  TBQ_SIGNAL_UNDERRUN,
  TBQ_SIGNAL_RUNNING,
  TBQ_SIGNAL_OVERRUN,
  TBQ_SIGNAL_PUSHING,
  TBQ_N_SIGNALS
} TbqSignal;

typedef struct _TbqLink TbqLink;

/* Called from the overrun signal (upstream thread, no element lock held). */
typedef void (*TbqOverrunFunc) (TbqLink * link, gpointer user_data);

struct _TbqLink
{
  GstElement *element;
  GstPad *srcpad;               /* ours: pushes into the element's sink pad */
  GstPad *sinkpad;              /* ours: receives from the element's src pad */
  GstPad *esrc;                 /* the element's src pad */

  pthread_mutex_t lock;
  pthread_cond_t cond;
  /* Everything that reached our sink pad, in order: GstBuffer,
   * GstBufferList, GstEvent (owned) and serialized GstQuery (a copy). */
  GPtrArray *items;
  guint n_buffers;              /* buffers received, counting list members */
  GThread *streaming_thread;    /* the thread that called our chain/event */
  /* Downstream behaviour */
  GstFlowReturn chain_return;
  /* Keep deep copies of what arrives, not the buffers themselves: buffers
   * from tbqueue's sink pool hold their block until released. */
  gboolean keep_copies;
  gboolean hold;                /* chain and serialized events wait */
  guint holding;                /* threads waiting because of hold */
  gboolean flushing;            /* between FLUSH_START and FLUSH_STOP */
  GstCaps *accept_caps;         /* caps/accept-caps answers (NULL: ANY) */
  GstClockTime latency_min, latency_max;
  gboolean latency_live;
  gint64 position;              /* answer to POSITION queries upstream */
  GPtrArray *upstream_events;   /* events that reached our src pad */
  guint queries_seen;           /* serialized queries answered downstream */

  /* Signals, and the thread of each emission */
  guint signals[TBQ_N_SIGNALS];
  GPtrArray *signal_threads[TBQ_N_SIGNALS];
  TbqOverrunFunc overrun_func;
  gpointer overrun_data;
};

/* Create `factory` ("tbqueue" or "queue"), link it between our pads and
 * set the given properties (NULL-terminated name/value pairs). */
TbqLink *tbq_link_new (const gchar * factory, const gchar * first_property,
    ...) G_GNUC_NULL_TERMINATED;
/* Set to `state` (must succeed synchronously) and, when going up to
 * PAUSED or above the first time, push STREAM_START and a TIME segment. */
void tbq_link_set_state (TbqLink * link, GstState state);
/* PLAYING, STREAM_START and a TIME segment, which (when linked) are
 * downstream on return. */
void tbq_link_start (TbqLink * link);
/* PLAYING with downstream held on STREAM_START, then a TIME segment: from
 * here on everything pushed stays queued until tbq_link_release(). */
void tbq_link_start_held (TbqLink * link);
/* The same without the segment: the test pushes its own. */
void tbq_link_start_held_no_segment (TbqLink * link);
gboolean tbq_link_is_tbqueue (TbqLink * link);
/* Push the initial events with a segment of this format. */
void tbq_link_push_initial_events (TbqLink * link, GstFormat format);
/* NULL state, unlink, release everything. */
void tbq_link_free (TbqLink * link);

GstFlowReturn tbq_link_push (TbqLink * link, GstBuffer * buffer);
GstFlowReturn tbq_link_push_list (TbqLink * link, GstBufferList * list);
gboolean tbq_link_push_event (TbqLink * link, GstEvent * event);
/* A buffer of `size` bytes, each byte (seed + i), with a pts. */
GstBuffer *tbq_buffer_new (gsize size, guint8 seed, GstClockTime pts);

/* An active buffer pool of exactly `n` buffers of `size` bytes (as a
 * camera's or a sensor's); tbq_pool_free() deactivates and unrefs it. */
GstBufferPool *tbq_pool_new (gsize size, guint n);
void tbq_pool_free (GstBufferPool * pool);

/* TRUE when `buffer` is exactly what tbq_buffer_new (size, seed, ...) made. */
gboolean tbq_buffer_has_pattern (GstBuffer * buffer, gsize size, guint8 seed);

/* Push from another thread; tbq_push_join() returns its flow. */
typedef struct _TbqPush TbqPush;
TbqPush *tbq_push_async (TbqLink * link, GstMiniObject * item);
gboolean tbq_push_is_done (TbqPush * push);
GThread *tbq_push_thread (TbqPush * push);
GstFlowReturn tbq_push_join (TbqPush * push);

/* Block downstream: the chain function and serialized events wait. */
void tbq_link_hold (TbqLink * link);
/* Wait until a thread waits in the held chain/event function. */
void tbq_link_wait_holding (TbqLink * link);
void tbq_link_release (TbqLink * link);
/* Downstream stops (as a downstream element does first in a pipeline):
 * our sink pad is deactivated and a held chain returns FLUSHING. */
void tbq_link_stop_downstream (TbqLink * link);
void tbq_link_restart_downstream (TbqLink * link);

/* Waits with a deadline; the test fails on timeout. */
void tbq_link_wait_buffers (TbqLink * link, guint n);
void tbq_link_wait_items (TbqLink * link, guint n);
void tbq_link_wait_event (TbqLink * link, GstEventType type);
void tbq_link_wait_signal (TbqLink * link, TbqSignal sig, guint count);
/* Wait until the src task is idle after data: every underrun but the last
 * was followed by pushing. */
void tbq_link_wait_idle (TbqLink * link);
/* Wait until current-level-buffers is `n` (the copy task may be moving). */
void tbq_link_wait_level_buffers (TbqLink * link, guint n);

guint tbq_link_signal_count (TbqLink * link, TbqSignal sig);
/* TRUE when every emission of `sig` came from `thread`. */
gboolean tbq_link_signal_all_from (TbqLink * link, TbqSignal sig,
    GThread * thread);
/* Received items of one kind, in order (borrowed). */
GstBuffer *tbq_link_buffer (TbqLink * link, guint index);
guint tbq_link_count_events (TbqLink * link, GstEventType type);
/* The last buffer received (borrowed). */
GstBuffer *tbq_link_last_buffer (TbqLink * link);
/* Drop everything received so far. */
void tbq_link_clear (TbqLink * link);
/* Received buffers (list members included), counting from 0. */
guint tbq_link_n_buffers (TbqLink * link);

guint tbq_get_uint (GstElement * element, const gchar * property);
guint64 tbq_get_uint64 (GstElement * element, const gchar * property);
/* A field of the stats structure (tbqueue only). */
guint64 tbq_stat (GstElement * element, const gchar * field);
/* Wait until a stats field reaches `value` (tbqueue only).  The stats have
 * no notification: this polls, and fails after TBQ_WAIT_SECONDS. */
void tbq_wait_stat (GstElement * element, const gchar * field,
    guint64 value);
/* Wait until an unsigned integer property (guint or guint64) is at least
 * `value`: its value then.  Polls (levels have no notification), and
 * fails after TBQ_WAIT_SECONDS. */
guint64 tbq_wait_property (GstElement * element, const gchar * property,
    guint64 value);

/* A query type of the tests' own, serialized and downstream, answered by a
 * TbqLink's sink pad when its structure is named "tbq-test". */
#define TBQ_QUERY_SERIALIZED GST_QUERY_MAKE_TYPE (200, \
    GST_QUERY_TYPE_DOWNSTREAM | GST_QUERY_TYPE_SERIALIZED)

/* A query sent through the element from a thread of its own, as an
 * upstream element sends it (a serialized one waits there for its
 * answer); `query` stays the caller's. */
typedef struct _TbqQueryThread TbqQueryThread;
TbqQueryThread *tbq_query_async (TbqLink * link, GstQuery * query);
/* Wait for it to return (a hang check) and free it: its result. */
gboolean tbq_query_join (TbqQueryThread * t);

/* Wait for a bus message of `types` with a deadline; NULL on timeout. */
GstMessage *tbq_bus_wait (GstBus * bus, GstMessageType types);

/* Remove a directory a test made, and the files in it. */
void tbq_remove_dir (const gchar * dir);

G_END_DECLS
#endif /* __TBQ_CHECK_H__ */

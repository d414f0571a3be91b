/* tbqjoin internals: the element's and its sink pads' instances, the
 * record format, the threads and locks every gsttbqjoin*.c file shares.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The files, from the top down (each calls only those below it):
 * gsttbqjoin.c (the object, pads' requests and releases, properties and
 * stats, the queue's life, the copy task), gsttbqjoin-sink.c (the sink
 * pads, numbers, the done hook), gsttbqjoin-src.c (the src task: reading
 * and the order), gsttbqjoin-pad.c (the sink pad type, what both sides do
 * to a pad, the wake-ups).
 *
 * THREADS
 *  - Each sink pad's streaming thread (a branch: a split's branch task, a
 *    worker's own thread, or in arrival order any producer) holds the
 *    pad's stream lock and writes records into the pad's own libtbq
 *    writer, which has a source pool of its own: no producer takes a lock
 *    another producer takes on the way of a buffer (gsttbqjoin-sink.c).
 *  - A split's branch thread calls the pair's done hook after its push
 *    returns: it takes the sink pad's stream lock, as the pad's streaming
 *    thread, and writes a "done" mark into the same writer.
 *  - The copy task, a GstTask "<element>:copier", loops tbq_copier_step():
 *    the sink pool takes what the writers published (gsttbqjoin.c).
 *  - The src pad task is the libtbq reader: it reads records in arrival
 *    order into one FIFO per sink pad and pushes them downstream in the
 *    split's order, or in arrival order (gsttbqjoin-src.c).
 *  - Application threads: properties, stats, request and release of
 *    pads, state changes.
 *
 * LOCKS, outermost first
 *  - A sink pad's stream lock: its writer and the `sink` part of the pad.
 *  - qlock (the element's, POSIX so that ThreadSanitizer sees it): the
 *    reader, the src side's state (FIFOs, the order, the pads' `src`
 *    part), the pads' flags that both sides read (eos, released, bound),
 *    the list of pads, the bound pair.  Never held across a push, a
 *    message post, a wait on libtbq or on a stream lock; the waits on it
 *    are its conditions, below.
 *  - Inside qlock: the pair's lock (gsttbqpair.c), object locks, libtbq's.
 *  - The src task's stream lock and the copy task's lock are GStreamer's:
 *    pausing or stopping a task waits for its function to return, with
 *    qlock released.
 *
 * CONDITIONS (with qlock)
 *  - item_del: a wait must end (flush, stop, a limit changed, the
 *    flow), or the join's EOS went out: a new stream waits on it.
 *  - A pad's `room`: its thread (arrival order) waits on it while the
 *    join is full, registered in `room_wait`; only that thread waits on
 *    it.  Whoever lets a pad go clears `room_wait` and signals that pad
 *    alone:
 *    - the src side, for each buffer out, once the level is down to the
 *      low mark (a quarter of each of the buffers and bytes limits; the
 *      time limit, a pad's own, as it is): one pad, the waiting pads in
 *      turn (`room_turn`), and the next only once the thread of the last
 *      one let go runs (`room_let_go`: the threads woken at once would all
 *      fill the join and wait again).  Where buffers leave 50 us apart or
 *      more (a slow consumer), one pad for each buffer out, as queue does,
 *      with no mark (`room_last_out`).  So at the limits a few threads are woken for
 *      three quarters of a turn of the queue, each pushes until the limit
 *      again, rather than every waiting thread woken by every buffer out
 *      and all of them then queueing on qlock behind the src task (a
 *      producer's push waits less often, and longer, than behind queue;
 *      docs/benchmarks.md, "Arrival order");
 *    - a pad that was let go but wrote nothing (it flushes, the flow
 *      stopped) lets the next pad with room under the limits go;
 *    - every wake-up that ends all waits (a flush, a stop, the flow, a
 *      limit changed: gst_tbq_join_locked_wake_room_all()), each pad.
 *    A waiting pad also looks at the limits itself after a few
 *    milliseconds (gsttbqjoin-sink.c, ROOM_LOOK_*): where the consumer
 *    stalls or drains slowly the level stays between the mark and the
 *    limit, and queue would fill up to the limit.
 *  - retired: records of a pad went out or were dropped, or the order
 *    moved on; a serialized query waits on it until everything its pad
 *    queued before it has, and, with a split's place, until the order
 *    has passed the place.
 *  - copier_cond: the copy task waits on it while the queue is
 *    interrupted (a state change on its way).
 *  The src task sleeps on the reader (tbq_reader_sleep, qlock released):
 *  woken by a record published, and by tbq_reader_wake(), which whoever
 *  changes what it decides on (a pad's EOS or release, a flush, a state
 *  change, a failed write) calls after the change, under or after qlock:
 *  the wait key is taken under qlock before the src task looks, so no
 *  wake-up is lost.
 *
 * INVARIANTS
 *  - A record is counted in its pad's `written` before it is published
 *    (and counted back, with a wake, if the write fails), and in `read`
 *    when the src task takes it: read == written under qlock means the
 *    src side has every record of the pad that can still come (with eos
 *    or released set, which are set after the pad's last write).
 *  - Every record carries the generation of flushes its pad was in
 *    (`gen`) when it was written: one of a pad that had not had its
 *    FLUSH_START (or the flush's end) yet is dropped when it is read;
 *    nothing of libtbq is discarded while producers may write.
 *  - Only the src task pushes buffers and serialized events downstream,
 *    so the src pad's sticky events are what it pushed.
 */
#ifndef __GST_TBQ_JOIN_PRIVATE_H__
#define __GST_TBQ_JOIN_PRIVATE_H__

#include <pthread.h>
#include <stdatomic.h>

#include "gsttbqpair.h"
#include "tbq.h"

G_BEGIN_DECLS

/**
 * GstTbqJoinOrder:
 * @GST_TBQ_JOIN_ORDER_SEQUENCE: the split's order: each output goes out
 *   at the place of the input it was made of
 * @GST_TBQ_JOIN_ORDER_ARRIVAL: as outputs come, a funnel (each branch's
 *   own order is kept)
 *
 * In which order a tbqjoin sends what its sink pads receive
 * (#GstTbqJoin:order).
 *
 * Since: 0.5
 */
typedef enum
{
  GST_TBQ_JOIN_ORDER_SEQUENCE = 0,
  GST_TBQ_JOIN_ORDER_ARRIVAL = 1
} GstTbqJoinOrder;

#define GST_TYPE_TBQ_JOIN_ORDER (gst_tbq_join_order_get_type ())
GType gst_tbq_join_order_get_type (void);

GST_DEBUG_CATEGORY_EXTERN (gst_tbq_join_debug);
#define GST_CAT_DEFAULT gst_tbq_join_debug

/* ---- records ---- */

enum
{
  JOIN_REC_BUFFER = 1,
  JOIN_REC_LIST = 2,
  JOIN_REC_EVENT = 3,
  JOIN_REC_DONE = 4,            /* the branch is done with `seq` */
};

/* No number: an event outside any push of the pad's pair, or a record of
 * a pad in arrival order. */
#define JOIN_NO_SEQ G_MAXUINT64

typedef struct _GstTbqJoinPad GstTbqJoinPad;

/* One record: a reference (the record owns it; NULL for a done mark),
 * the pad it came through, the number it belongs to and the pair's epoch
 * of that number, the running time its pad reached with it (a buffer's
 * end, -1: none), and its pad's generation of flushes it was written
 * in. */
typedef struct
{
  GstMiniObject *object;
  GstTbqJoinPad *pad;
  guint64 seq;
  guint64 epoch;
  gint64 rt;
  guint gen;
} JoinRecord;

/* A record the src task holds, in a pad's FIFO or the arrival queue. */
typedef struct
{
  guint16 type;                 /* JOIN_REC_* */
  GstMiniObject *object;
  GstTbqJoinPad *pad;
  guint64 seq;
  guint64 epoch;
  gint64 rt;
  guint gen;                    /* its pad's generation when written */
  gboolean eos;                 /* an EOS event (not counted as pending) */
  /* An event: whether it is a copy of a slot event, and its number
   * (looked up until the answer is sure, gsttbqjoin-src.c). */
  gboolean slot_checked;
  gboolean is_slot;
  guint64 slot;
} JoinItem;

/* ---- the sink pad ---- */

typedef enum
{
  JOIN_PAD_UNDECIDED = 0,       /* no data yet: its sticky events only */
  JOIN_PAD_SEQUENCE = 1,        /* bound to the join's pair */
  JOIN_PAD_ARRIVAL = 2,         /* as records come */
} JoinPadMode;

#define GST_TYPE_TBQ_JOIN_PAD (gst_tbq_join_pad_get_type ())
G_DECLARE_FINAL_TYPE (GstTbqJoinPad, gst_tbq_join_pad, GST, TBQ_JOIN_PAD,
    GstPad)

struct _GstTbqJoinPad
{
  GstPad pad;

  /* The sink side: its stream lock (the pad's streaming thread, or the
   * done hook). */
  TbqWriter *writer;            /* from activation to deactivation; set and
                                 * cleared under qlock too */
  GstSegment segment;           /* for the time level */
  GstTbqPair *cand_pair;        /* the deepest pair branch event so far */
  guint cand_branch;
  guint cand_depth;
  GstTbqPair *pair;             /* bound (mode SEQUENCE): the join's pair */
  guint64 num_epoch;            /* the epoch of the three below */
  gint64 last_seq;              /* the highest number written, -1 none */
  gint64 done_max;              /* the highest done mark written, -1 none */
  guint64 attrib_next;          /* stripped metas: the first number that
                                 * an output may still be given */
  gint sync_told;               /* what the pair was told: -1 nothing */
  /* Written by its thread, read anywhere (relaxed: counters; ordered
   * against the src side's decisions by qlock, see `eos`). */
  _Atomic guint64 written;      /* records written or being written */
  _Atomic guint64 buffers_in;
  _Atomic gint64 sinktime;      /* running time of its last buffer in, or -1 */
  /* The running time its first buffer in began at since its times were
   * last forgotten (a flush), or -1: where its time level starts while
   * nothing of it went out (srctime -1).  Set by its thread, forgotten
   * with srctime. */
  _Atomic gint64 firsttime;
  /* Set by the thread that deactivates the pad or gets FLUSH_START
   * (seq_cst: ordered against the generation, gsttbqjoin-sink.c). */
  _Atomic gboolean flushing;
  /* The generation of flushes the pad is in, which its records carry:
   * the join's made by the pad's last FLUSH_START, or the join's when a
   * flush it did not get ended.  Written under qlock (seq_cst, after `flushing`),
   * read by the pad's writes (gsttbqjoin-sink.c). */
  _Atomic guint gen;

  /* Both sides: qlock (mode, branch and pair also under the stream lock
   * for the sink side). */
  JoinPadMode mode;
  gboolean bound_by_query;      /* the split's bind query bound it to the
                                 * join's pair (its branch, before its
                                 * first item decides its mode) */
  guint query_branch;           /* that branch (bound_by_query) */
  guint branch;                 /* the pair's branch (SEQUENCE) */
  gboolean eos;                 /* EOS written, no flush or new stream since */
  guint64 eos_epoch, eos_upto;  /* the numbers its EOS ends: those of
                                 * eos_epoch below eos_upto (its split's
                                 * place, gsttbqpair.h); all when
                                 * eos_upto is G_MAXUINT64 */
  guint eos_count;              /* the join's eos_count when its EOS
                                 * was written */
  gboolean flush_started;       /* FLUSH_START came, FLUSH_STOP not yet */
  gboolean in_flush;            /* it got FLUSH_START in the join's flush
                                 * under way (its SEGMENT goes at the end;
                                 * the others' stays their state) */
  gboolean room_wait;           /* its thread waits on `room` (arrival
                                 * order, at the limits) */
  gboolean room_let_go;         /* let go, its thread not running yet */
  pthread_cond_t room;
  gboolean warn_no_pair;        /* in arrival order for want of a split:
                                 * warned at its first data */
  gboolean released;            /* released: its writer is closed */
  gint released_branch;         /* released before anything of its branch
                                 * came, bound by the split's bind query:
                                 * that branch (its numbers are gaps once
                                 * the src side is done with the pad),
                                 * else -1 */
  /* The split's marker query (gst_tbq_pair_marker_query_new_in): the
   * branch is done with every number up to probe_seq of probe_epoch,
   * once the src side read the pad's first probe_target records (those
   * written before it) in generation probe_gen. */
  gboolean probe_set;
  guint64 probe_target, probe_epoch, probe_seq;
  guint probe_gen;
  guint64 query_target;         /* a serialized query waits until `retired`
                                 * reaches it (0: none waits) */

  /* The src side: qlock. */
  guint64 read;                 /* records taken by the reader */
  guint64 retired;              /* of those, done with (out or dropped) */
  guint pending;                /* items queued (FIFO or arrival), EOS not
                                 * counted */
  GQueue fifo;                  /* JoinItem *: SEQUENCE, in arrival order */
  GPtrArray *sticky;            /* its sticky events as they came, in
                                 * sticky order */
  gboolean new_stream;          /* a STREAM_START came out of its FIFO
                                 * since the join's EOS went out */
  guint64 buffers_out;
  guint64 late;
  /* Written by the src task, read anywhere (relaxed: a level). */
  _Atomic gint64 srctime;       /* running time of its last buffer out, or -1 */
};

/* ---- the element ---- */

#define GST_TYPE_TBQ_JOIN (gst_tbq_join_get_type ())
G_DECLARE_FINAL_TYPE (GstTbqJoin, gst_tbq_join, GST, TBQ_JOIN, GstElement)

/* Sticky events a pad may have that the diff's cache keeps (a pad has
 * at most one of each type, and a few types; more: not cached). */
#define JOIN_CLEAN_MAX 8

/* Slot events pushed lately, to know their copies through the branches. */
#define JOIN_SLOT_RING 256

typedef struct
{
  guint64 epoch;
  guint64 seq;
  guint32 seqnum;
} JoinSlot;

struct _GstTbqJoin
{
  GstElement element;
  GstPad *srcpad;

  /* Properties.  `order` under the object lock, applies at open(); the
   * limits written under qlock, read anywhere (relaxed). */
  GstTbqJoinOrder order;
  _Atomic guint max_buffers;
  _Atomic guint max_bytes;
  _Atomic guint64 max_time;

  pthread_mutex_t qlock;
  pthread_cond_t item_del;
  pthread_cond_t retired;
  pthread_cond_t copier_cond;

  /* What the sink pads return upstream besides their own flushing:
   * downstream's flow (GstFlowReturn), FLUSHING while the src pad is
   * inactive.  Written under qlock, read anywhere (relaxed: a chain that
   * reads it stale writes one more record, which the src side drops or
   * pushes as it would have a moment earlier). */
  _Atomic gint srcresult;
  /* The generation of flushes: bumped under qlock by every FLUSH_START
   * (seq_cst: see gsttbqjoin-sink.c, "FLUSHING AND THE GENERATION"). */
  _Atomic guint gen;
  /* The src pad's sticky state: bumped after each event pushed there and
   * at each activation (gst_tbq_join_push_src_event; release, with the
   * acquire load of locked_sticky_diff: a diff that sees the new value
   * sees the pad's events after the push). */
  _Atomic guint src_gen;

  /* The two-layer queue, from open() to close() (qlock). */
  TbqQueue *q;
  TbqReader *reader;
  GstTask *copy_task;
  GRecMutex copy_lock;
  gboolean copy_stopping;       /* qlock: close() stops the copy task */

  /* qlock. */
  GPtrArray *pads;              /* GstTbqJoinPad * (a reference each): the
                                 * sink pads, and released ones until the
                                 * src side has all their records */
  GstTbqJoinOrder active_order; /* `order` as open() took it */
  guint room_turn;              /* the pad woken for room last (an index
                                 * of `pads`): the next look starts after */
  guint room_let_go;            /* pads with room_let_go set */
  gint64 room_last_out;         /* monotonic time (us) of the last buffer
                                 * out that found pads waiting for room */
  /* Pads with room_wait set: written under qlock, read by a sink thread
   * without it (relaxed: a hint; a pad that starts to wait after the hint
   * said none is full, and the src side wakes it). */
  _Atomic guint room_waiters;
  GstTbqPair *pair;             /* the pair this join is bound to, or NULL */
  guint64 pair_id;
  GPtrArray *by_branch;         /* the pair's branch -> its pad (borrowed) */
  GHashTable *released;         /* branches whose pad was released */
  gboolean flushing;            /* a flush runs: the src task is stopped */
  gboolean have_flush_seqnum;
  guint32 flush_seqnum;         /* of the last FLUSH_START sent downstream */
  gboolean warned_no_pair;
  gboolean warned_late;
  _Atomic gboolean warned_attrib;       /* stripped metas said (once) */
  gboolean warn_late_pending;   /* the src task posts it, qlock released */

  /* The src side (qlock; the src task, or anyone while it is stopped). */
  guint64 epoch;                /* the pair's epoch the order is in */
  guint64 next;                 /* the next number to send */
  gboolean next_had_output;     /* `next` got an output already */
  gboolean eos_sent;
  guint eos_count;              /* EOS sent downstream so far (item_del
                                 * is broadcast with each) */
  GstTbqJoinPad *last_out;      /* the pad whose item went out last (a
                                 * reference, or NULL): its sticky state
                                 * goes out before EOS */
  /* The sticky events for which the last sticky diff found nothing to
   * send (locked_sticky_diff): references (no other event takes their
   * addresses meanwhile), in the pad's order, `clean_len` of them (-1:
   * none known), at the src pad's state `clean_src_gen`.  The diff
   * depends on nothing else outside EOS (the join's pair aside: the cache
   * is forgotten when it binds one). */
  GstEvent *clean[JOIN_CLEAN_MAX];
  gint clean_len;
  guint clean_src_gen;
  GQueue arrival;               /* JoinItem *: records of arrival pads */
  guint held;                   /* items in the FIFOs */
  guint queries_held;           /* serialized queries waiting in the sink
                                 * pads' threads (the stats) */
  guint place_waits;            /* of those, waiting for the order to pass
                                 * their place (gsttbqpair.h) */
  JoinSlot slots[JOIN_SLOT_RING];
  guint n_slots;                /* slot events pushed (ring index) */

  /* Counters: written under qlock but where said, read anywhere (relaxed:
   * statistics and levels). */
  _Atomic guint64 in_buffers;   /* the sink threads' (atomic add) */
  _Atomic guint64 in_bytes;     /* the sink threads' (atomic add) */
  _Atomic guint64 out_buffers;  /* taken out: pushed or dropped */
  _Atomic guint64 out_bytes;
  _Atomic guint64 pushed_buffers;
  _Atomic guint64 events_out;
  _Atomic guint64 gaps;
  _Atomic guint64 late;
  _Atomic guint64 discarded;    /* buffers dropped by flushes */
  _Atomic guint64 held_peak;    /* the most items held for the order */
  guint64 released_in;          /* buffers in of released pads */
};

#define JOIN_LOAD(field) atomic_load_explicit (&(field), memory_order_relaxed)
#define JOIN_STORE(field, v) \
  atomic_store_explicit (&(field), (v), memory_order_relaxed)
/* A counter with one writer at a time (qlock, or its thread). */
#define JOIN_ADD(field, n) JOIN_STORE (field, JOIN_LOAD (field) + (n))

#define JOIN_LOCK(j) pthread_mutex_lock (&(j)->qlock)
#define JOIN_UNLOCK(j) pthread_mutex_unlock (&(j)->qlock)
#define JOIN_WAIT(j, cond) pthread_cond_wait (&(j)->cond, &(j)->qlock)
#define JOIN_BROADCAST(j, cond) pthread_cond_broadcast (&(j)->cond)

#define JOIN_FLOW(j) ((GstFlowReturn) JOIN_LOAD ((j)->srcresult))

/* ---- gsttbqjoin-pad.c ---- */

/* qlock: the pad's records were taken or dropped: `n` more retired (a
 * serialized query waiting for them is told). */
void gst_tbq_join_locked_retire (GstTbqJoin * join, GstTbqJoinPad * pad,
    guint64 n);
/* Release what a record holds (libtbq's discard callback too). */
void gst_tbq_join_release_record (uint16_t type, const void *data,
    uint32_t size, void *user_data);
/* The buffers and bytes of a buffer or list. */
void gst_tbq_join_object_size (GstMiniObject * object, guint * buffers,
    gsize * bytes);
/* Post a warning (no lock held: a bus handler may call back). */
static inline void
gst_tbq_join_warn (GstTbqJoin * join, const gchar * text)
{
  GST_ELEMENT_WARNING (join, STREAM, FAILED, ("%s", text), (NULL));
}

/* qlock: the src task looks again (its sleep on the reader ends, or the
 * next one does not begin): after a change of what it decides on. */
void gst_tbq_join_locked_kick (GstTbqJoin * join);
gboolean gst_tbq_join_locked_eos_after_flow (GstTbqJoin * join);
void gst_tbq_join_send_eos_after_flow (GstTbqJoin * join, GstEvent * event);
/* qlock: every wait looks again (the branches' at the limits, the
 * serialized queries', the src task's). */
void gst_tbq_join_locked_wake_all (GstTbqJoin * join);
/* Whether the join is full for `pad` in arrival order (queue's limits;
 * `low`: above the low mark of the buffers and bytes limits instead).  Relaxed loads: levels, checked again under qlock before a
 * wait. */
gboolean gst_tbq_join_is_full (GstTbqJoin * join, GstTbqJoinPad * pad,
    gboolean low);
/* A pad's time level (arrival order): the running time it reached in
 * less that of its last buffer out, or, while nothing of it went out,
 * less the start of its first buffer in; 0 when unknown.  Relaxed
 * loads. */
guint64 gst_tbq_join_pad_time_level (GstTbqJoinPad * pad);
/* A pad's srctime forgotten (a flush drops what it held): and where its
 * level starts. */
void gst_tbq_join_pad_forget_times (GstTbqJoinPad * pad, gboolean sink);
/* qlock: the next pad (in turn) that waits for room and is not full
 * (`low`: is at the low mark) goes on.  The waits: the top of this file. */
void gst_tbq_join_locked_wake_room (GstTbqJoin * join, gboolean low);
/* qlock: every pad that waits for room looks again. */
void gst_tbq_join_locked_wake_room_all (GstTbqJoin * join);

/* ---- gsttbqjoin-sink.c ---- */

void gst_tbq_join_sink_set_functions (GstPad * pad);
/* The pair's done hook (GstTbqPairDoneFunc). */
void gst_tbq_join_done (gpointer join, guint branch, guint64 epoch,
    guint64 seq);

/* ---- gsttbqjoin-src.c ---- */

void gst_tbq_join_src_set_functions (GstPad * pad);
/* qlock, the src task stopped: forget every item held and the order (a
 * flush, close()). */
void gst_tbq_join_locked_clear_src (GstTbqJoin * join);
/* qlock, the src task stopped, a flush begins or ends (the pads of the
 * flush `in_flush`): drop every item held and every record the reader
 * can take now but those a pad of the flush wrote after its own
 * FLUSH_STOP, and start the order again. */
void gst_tbq_join_locked_flush_drop (GstTbqJoin * join);
/* qlock: start the src task if it may run (active, not flushing, the flow
 * OK). */
void gst_tbq_join_locked_start_task (GstTbqJoin * join);
/* No lock held: stop the src task and wait until it has (it stays
 * stopped until gst_tbq_join_locked_start_task()). */
void gst_tbq_join_pause_task (GstTbqJoin * join);
/* Push `event` on the src pad, and note that its sticky state may have
 * changed (src_gen): every event the join sends out goes this way. */
gboolean gst_tbq_join_push_src_event (GstTbqJoin * join, GstEvent * event);
/* qlock: the sticky diff's cache is forgotten (a pair bound, the src side
 * cleared, finalize). */
void gst_tbq_join_locked_forget_clean (GstTbqJoin * join);
/* A pad's sticky events (the src side's copy): an event in its place. */
void gst_tbq_join_sticky_store (GPtrArray * sticky, GstEvent * event);
void gst_tbq_join_sticky_remove (GPtrArray * sticky, GstEventType type);

G_END_DECLS
#endif /* __GST_TBQ_JOIN_PRIVATE_H__ */

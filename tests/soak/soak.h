/* The soak harness: shared state and the contract between its parts.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One element (tbqueue or queue) sits between two pads of ours:
 *
 *   producer thread ──► srcpad ──► element ──► sinkpad (verifier)
 *   flusher thread ──(FLUSH_START/STOP)─┘        watchdog thread
 *
 * Every item the producer pushes (buffer, list member, serialized event,
 * serialized query, EOS) takes the next sequence number ("seq") and an
 * entry in a ring log (soak-log.c) saying what it was and what became of
 * its push.  A buffer carries its seq in its offset and, from 8 bytes on,
 * in its first payload word; the rest of its fields and payload are a
 * function of its entry (soak-data.c).  The verifier (soak-verify.c)
 * checks each delivered item against its entry and against every item
 * between it and the previous delivery: those must have a reason not to
 * arrive (refused, flushed, or dropped by a leaky element).
 *
 * Epochs: every flush or state change that loses data starts an epoch.
 * Epoch boundaries are made under our srcpad's stream lock, after the
 * element has stopped delivering the old epoch, so `floor` (the first seq
 * of the current epoch) separates items that may be lost to a flush from
 * items that must arrive.
 *
 * Parallel chapters (--enable parallel, soak-parallel.c): the element's
 * src pad feeds a tbqsplit, whose branches each run a test worker
 * (soak-worker.c) into a tbqjoin, whose src pad feeds our sink pad:
 *
 *   srcpad ──► element ──► tbqsplit ─┬─► worker ─┬─► tbqjoin ──► sinkpad
 *                                    └─► worker ─┘
 *
 * A worker that drops an input, merges it into a later one or makes two
 * outputs of it says so in the input's log entry (its `fate`) before its
 * push returns, so that the verifier knows what must not arrive, or
 * arrive twice, by the time the join has moved past it.
 *
 * Reproducibility: chapter K of seed S draws everything (configuration,
 * operations, sizes, fields) from its own generator, so `--seed S
 * --chapter K` replays it alone.  Thread interleavings are not
 * reproducible; no check depends on them.
 */
#ifndef SOAK_H
#define SOAK_H

#include <gst/gst.h>
#include <stdatomic.h>

G_BEGIN_DECLS

/* ThreadSanitizer builds: the verifier's reads of a payload memory happen
 * before the memory's free, through GStreamer's reference counts, which
 * ThreadSanitizer does not see (they are atomics in uninstrumented code).
 * The verifier releases the memory's base address once it has read it,
 * the free acquires it (soak-data.c). */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SOAK_TSAN_RELEASE(addr) __tsan_release ((void *) (addr))
#define SOAK_TSAN_ACQUIRE(addr) __tsan_acquire ((void *) (addr))
#else
#define SOAK_TSAN_RELEASE(addr) ((void) (addr))
#define SOAK_TSAN_ACQUIRE(addr) ((void) (addr))
#endif

/* ---- features (--enable / --disable) ---- */

typedef enum
{
  SOAK_F_LISTS = 1 << 0,        /* buffer lists */
  SOAK_F_EVENTS = 1 << 1,       /* custom serialized events */
  SOAK_F_QUERIES = 1 << 2,      /* serialized queries (drain barriers) */
  SOAK_F_FLUSH_INLINE = 1 << 3, /* FLUSH_START/STOP from the streaming thread */
  SOAK_F_FLUSH_THREAD = 1 << 4, /* FLUSH_START/STOP from another thread */
  SOAK_F_STATE = 1 << 5,        /* PLAYING/PAUSED/READY/NULL and back */
  SOAK_F_STALL = 1 << 6,        /* downstream stalls of random length */
  SOAK_F_GEOMETRY = 1 << 7,     /* random pool geometry (tbqueue) */
  SOAK_F_BATCH = 1 << 8,        /* publish-batch other than 1 (tbqueue) */
  SOAK_F_EOS = 1 << 9,          /* EOS, then a new stream */
  SOAK_F_PROBE = 1 << 10,       /* limit probes: exact drops at the limits */
  SOAK_F_LIMITS = 1 << 11,      /* max-size-* changed while streaming */
  SOAK_F_POOL = 1 << 12,        /* frames from a bounded GstBufferPool */
  SOAK_F_META = 1 << 13,        /* buffers with a meta */
  SOAK_F_MULTIMEM = 1 << 14,    /* buffers of several memories */
  SOAK_F_SPILL = 1 << 15,       /* the backlog spills to a file (tbqueue) */
  SOAK_F_BUFFERING = 1 << 16,   /* use-buffering, random watermarks (tbqueue) */
  SOAK_F_SEGMENT_JUMP = 1 << 17,        /* a SEGMENT whose position jumps
                                         * past max-size-time */
  SOAK_F_PARALLEL = 1 << 18,    /* half the chapters through a tbqsplit,
                                 * workers and a tbqjoin (soak-parallel.c) */
  SOAK_F_ALL = (1 << 19) - 1,
} SoakFeature;

/* Name of feature bit `bit` (an index), NULL past the last. */
const gchar *soak_feature_name (guint bit);
/* Parse "a,b,c" into feature bits; FALSE (and a message) on a bad name. */
gboolean soak_features_parse (const gchar * list, guint * bits);
gchar *soak_features_to_string (guint bits);

/* ---- the log ---- */

typedef enum
{
  SOAK_ITEM_BUFFER = 1,
  SOAK_ITEM_LIST_MEMBER,
  SOAK_ITEM_EVENT,
  SOAK_ITEM_QUERY,
  SOAK_ITEM_EOS,
  SOAK_ITEM_EMPTY_LIST,         /* an empty buffer list: never delivered */
} SoakItemKind;

/* What a worker did with an item (parallel chapters), written into its
 * entry by the worker before its push returns. */
typedef enum
{
  SOAK_FATE_NONE = 0,           /* passed on as it came (or never seen) */
  SOAK_FATE_DROPPED,            /* dropped: an input (a buffer, or the
                                 * first member of a list) that gets no
                                 * output: one gap in the join */
  SOAK_FATE_DROPPED_MEMBER,     /* a later member of a list dropped whole */
  SOAK_FATE_MERGED,             /* merged into the worker's next input's
                                 * output: one gap in the join */
  SOAK_FATE_PARTS,              /* two outputs: bytes [0, size / 2), then
                                 * [size / 2, size), the second without
                                 * DISCONT */
} SoakFate;

typedef enum
{
  SOAK_PENDING = 0,
  SOAK_ACCEPTED,                /* push returned OK (query: answered TRUE) */
  SOAK_REFUSED,                 /* push returned FLUSHING/EOS (query: FALSE) */
} SoakStatus;

/* How a buffer is built (soak-data.c). */
enum
{
  SOAK_LAYOUT_MULTIMEM = 1 << 0,        /* split over several memories */
  SOAK_LAYOUT_META = 1 << 1,    /* has a GstReferenceTimestampMeta */
  SOAK_LAYOUT_POOL = 1 << 2,    /* from the bounded frame pool */
  SOAK_LAYOUT_NO_OFFSET_END = 1 << 3,
};

typedef struct
{
  guint64 pts, dts, duration;   /* GST_CLOCK_TIME_NONE when unset */
  guint32 size;                 /* payload bytes */
  guint32 epoch;
  guint32 list_len;             /* list members: members in the list */
  guint32 list_index;           /* list members: position in the list */
  guint32 flags;                /* GstBufferFlags set by the producer */
  guint8 kind;                  /* SoakItemKind */
  guint8 layout;
  guint8 leaky;                 /* the element's leaky mode at push time */
  guint8 after_jump;            /* the first buffer after a segment jump
                                 * (unlogged: a leak of it marks this one
                                 * DISCONT, as queue does) */
  _Atomic guint8 status;        /* SoakStatus, written after the push */
  _Atomic guint8 fate;          /* SoakFate: a worker's (release store;
                                 * the verifier loads it with acquire) */
} SoakEntry;

/* ---- parallel chapters ---- */

#define SOAK_MAX_BRANCHES 8

/* One branch's worker (soak-worker.c), drawn per chapter. */
typedef enum
{
  SOAK_SHAPE_PASS = 0,          /* one output per input */
  SOAK_SHAPE_PARTS,             /* two outputs per input (buffers of 2
                                 * bytes or more) */
  SOAK_SHAPE_MERGE,             /* two buffer inputs, one output: the
                                 * first is merged away */
} SoakShape;

typedef struct
{
  guint delay_max_us;           /* each input waits 0..this (log-uniform;
                                 * 0: none) */
  guint stall_permille;         /* long stalls per 1000 inputs */
  guint stall_max_ms;
  guint drop_permille;          /* inputs dropped per 1000 */
  guint8 shape;                 /* SoakShape */
  gboolean strip;               /* outputs are new buffers without the
                                 * inputs' metas (the harness's own meta
                                 * put back) */
  guint8 queue;                 /* 0: none; a queue 1: before it, 2: after
                                 * it (not synchronous) */
} SoakWorkerConfig;

/* A chapter's split, join and workers. */
typedef struct
{
  gboolean on;
  guint branches;               /* 1 .. SOAK_MAX_BRANCHES at the start */
  gint leaky, transfer;
  guint max_buffers, max_bytes;
  guint64 max_time;
  gboolean spill;
  gboolean buffering;
  gdouble low_watermark, high_watermark;
  guint max_in_flight;          /* 0: twice the branches */
  guint w_branch;               /* branch requests and releases per 10000
                                 * ops */
  SoakWorkerConfig workers[SOAK_MAX_BRANCHES];
} SoakParallelPlan;

/* ---- a chapter's configuration ---- */

typedef struct
{
  guint index;
  gint leaky;                   /* 0 no, 1 upstream, 2 downstream */
  gint transfer;                /* tbqueue: 0 auto, 1 copy, 2 reference */
  guint max_buffers, max_bytes;
  guint64 max_time;
  /* tbqueue pool geometry */
  guint source_block_size, source_blocks, sink_block_size, idle_blocks;
  guint64 sink_min_bytes, sink_max_bytes;
  gboolean spill;               /* temp-template set (with the geometry) */
  gboolean buffering;           /* use-buffering, with these watermarks */
  gdouble low_watermark, high_watermark;
  guint publish_batch;
  /* traffic profile */
  guint64 buffers;              /* buffers to push in this chapter */
  guint64 ts_step;              /* ns between consecutive seqs' pts */
  guint frame_size;             /* bounded pool's frame size */
  guint w_list, w_event, w_query, w_eos, w_flush, w_state, w_probe, w_limits;
  guint w_segment_jump;
  guint big_permille;           /* buffers of 64 KiB .. 4 MiB, per 1000 */
  guint frame_permille;         /* frame-sized buffers, per 1000 */
  guint stall_permille;         /* downstream stalls per 1000 deliveries */
  guint stall_max_us;
  guint flush_period_ms;        /* flusher thread: mean time between flushes */
  SoakParallelPlan par;         /* --enable parallel */
} SoakChapter;

/* ---- the run ---- */

typedef struct
{
  /* configuration (soak-main.c) */
  gchar *element_name;
  gboolean is_tbqueue;
  guint64 seed;
  guint64 max_buffers;          /* stop after this many buffers (0: none) */
  gdouble duration;             /* stop after this many seconds (0: none) */
  gint only_chapter;            /* -1: all */
  guint from_chapter;           /* the first chapter when all run */
  guint features;
  guint leaky_mask, transfer_mask;      /* bits 1 << mode */
  guint watchdog_s;
  gchar *inject;                /* fault injection (self-tests) */
  guint inject_at;
  gboolean verbose;
  gboolean trace;               /* SOAK_TRACE: every delivery and operation */
  guint group_peers;            /* --group-peers */

  GstElement *element;
  GstPad *srcpad, *sinkpad;     /* ours */
  gboolean jump_pending;        /* producer: a segment jump since the last
                                 * buffer logged */
  GstPad *esink, *esrc;         /* the element's */
  GstBufferPool *frame_pool;
  GstCaps *meta_caps;

  /* The log: entries for seq in [resolved, next_seq) stay valid. */
  SoakEntry *ring;
  guint64 ring_mask;
  guint64 next_seq;             /* producer only */
  _Atomic guint64 published_seq;        /* entries below this are written */
  _Atomic guint64 floor;        /* first seq of the current epoch */
  _Atomic guint32 epoch;        /* changed under srcpad's stream lock */

  /* The chapter's flush_period_ms, for the flusher thread (which must not
   * read soak.ch while the producer plans the next chapter). */
  _Atomic guint flush_period_ms;

  /* Excludes the flusher thread during probes and state changes. */
  GMutex ctl_lock;

  /* Verifier state: vlock.  vcond: deliveries, holds, EOS. */
  GMutex vlock;
  GCond vcond;
  guint64 last_seq;             /* last delivered seq + 1 (0: none) */
  guint64 last_buf_seq;         /* last delivered buffer seq + 1 */
  guint64 last_unit;            /* delivery unit of the last item */
  guint64 unit;                 /* push/push_list calls seen */
  gboolean discont_required, discont_allowed;
  gboolean discont_excused;     /* an empty list may have taken it */
  gchar last_drop[96];          /* the last item found dropped */
  guint32 seg_epoch;            /* epoch of the last SEGMENT seen */
  /* A sticky event (STREAM_START, CAPS, SEGMENT) came since the last
   * buffer.  The producer does not log them, and a leaky=downstream
   * element may have leaked one from its queue: as queue does, it then
   * sends it ahead of the next buffer (sticky) and marks that buffer
   * DISCONT. */
  gboolean after_sticky;
  /* Parallel chapters: whether this one is (set at a chapter's start,
   * the element in READY); the second output of a buffer a worker made
   * two of is due next (its seq + 1; 0: none). */
  gboolean parallel;
  guint64 part_seq;
  gboolean sink_flushing;
  guint64 eos_seen;             /* seq + 1 of the last EOS delivered */
  guint64 hold_seq;             /* seq + 1 of the buffer to hold (probe) */
  gboolean holding, release;
  guint64 probe_lo, probe_hi;   /* probe window [lo, hi) */
  guint8 *probe_seen;
  gboolean producer_waits;
  guint64 stall_rng;
  guint stall_permille, stall_max_us;

  /* counters */
  _Atomic guint64 progress;     /* anything moved (watchdog) */
  _Atomic guint64 buffers_pushed, buffers_delivered, items_delivered;
  _Atomic guint64 drops_counted;        /* buffers missing in leaky epochs */
  _Atomic guint64 items_dropped;        /* any item missing in leaky epochs */
  _Atomic guint64 push_drops;   /* dropped buffers and first list members */
  _Atomic guint64 worker_gaps;  /* inputs found missing that a worker
                                 * dropped or merged away (the join's gaps) */
  _Atomic guint64 worker_drops; /* buffers found missing that a worker
                                 * dropped or merged away */
  _Atomic guint64 parts;        /* second outputs verified */
  _Atomic guint64 query_copies; /* a query again through another branch */
  _Atomic guint64 flushes, state_changes, probes, barriers, eoses;
  guint64 spilled;              /* ctl_lock: bytes tbqueue wrote to its spill
                                 * file, in the streams that ended */
  _Atomic guint64 overruns;     /* the element's overrun signal */
  _Atomic guint64 buffering_messages;   /* BUFFERING messages posted */
  GstBus *bus;                  /* the element's: messages are checked as
                                 * they are posted, then dropped */
  _Atomic guint64 mem_created, mem_freed;
  _Atomic guint64 bytes_delivered;

  /* producer / chapter */
  SoakChapter ch;
  guint64 rng;
  guint32 prod_epoch;           /* the epoch the producer sent a segment for */
  gboolean need_stream_start;
  guint64 sink_pos;             /* the element's sink position (probe model) */
  gint64 start_time;
  _Atomic gboolean stop;        /* threads: finish */
  const gchar *op;              /* what the producer does (watchdog) */
  _Atomic guint64 op_seq;

  /* barrier baseline (soak-producer.c) */
  guint32 barrier_epoch;
  guint64 barrier_drops, barrier_elem_drops, barrier_overruns;
  guint64 barrier_push_drops;
  guint64 barrier_gaps, barrier_join_gaps;
} Soak;

extern Soak soak;

/* ---- random numbers ---- */

static inline guint64
soak_splitmix (guint64 * x)
{
  guint64 z = (*x += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0). */
static inline guint64
soak_rand (guint64 * x, guint64 n)
{
  return soak_splitmix (x) % n;
}

/* Uniform in [lo, hi]. */
static inline guint64
soak_range (guint64 * x, guint64 lo, guint64 hi)
{
  return lo + soak_rand (x, hi - lo + 1);
}

/* Log-uniform in [lo, hi] (lo >= 1): small values as likely per octave. */
guint64 soak_log_range (guint64 * x, guint64 lo, guint64 hi);

/* ---- failure ---- */

/* Print "not ok", the reason, the run's state and the replay command, and
 * exit.  Any thread. */
void soak_fail (const gchar * check, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3) G_GNUC_NORETURN;
/* The command line that replays the current chapter. */
gchar *soak_replay_command (void);
gchar *soak_chapter_describe (const SoakChapter * ch);

/* ---- soak-log.c ---- */
void soak_log_init (guint bits);
/* A fresh entry for the next seq (waits while the ring is full). */
SoakEntry *soak_log_append (guint64 * seq);
static inline SoakEntry *
soak_log_get (guint64 seq)
{
  return &soak.ring[seq & soak.ring_mask];
}
/* Make the entries appended so far visible to the verifier. */
void soak_log_publish (void);
/* Start an epoch: srcpad's stream lock held, the element idle. */
void soak_log_new_epoch (void);

/* ---- soak-data.c ---- */
/* Fill in a buffer entry's fields for `seq` (size, flags, timestamps...). */
/* The payload of `seq` (the soaked stream's, a group peer's): its bytes
 * [off, off + len), and the offset of the first byte of src[0, len) that
 * differs from them, or -1. */
void soak_payload_fill (guint8 * dst, gsize off, gsize len, guint64 seq);
gssize soak_payload_compare (const guint8 * src, gsize off, gsize len,
    guint64 seq);
void soak_data_plan_buffer (SoakEntry * e, guint64 seq, guint64 * rng,
    guint32 max_size);
GstBuffer *soak_data_make_buffer (const SoakEntry * e, guint64 seq);
/* NULL when `buf` is exactly what entry `e` describes (DISCONT aside),
 * but for holding only the payload's bytes [off, off + len) (a part a
 * worker made: all of it, 0 and e->size), else what differs (free it). */
gchar *soak_data_check_part (GstBuffer * buf, const SoakEntry * e,
    guint64 seq, gsize off, gsize len);
/* Buffer flags the harness sets and checks (DISCONT included). */
#define SOAK_FLAGS_MASK (GST_BUFFER_FLAG_LIVE | GST_BUFFER_FLAG_DISCONT \
    | GST_BUFFER_FLAG_RESYNC | GST_BUFFER_FLAG_CORRUPTED \
    | GST_BUFFER_FLAG_MARKER | GST_BUFFER_FLAG_HEADER | GST_BUFFER_FLAG_GAP \
    | GST_BUFFER_FLAG_DROPPABLE | GST_BUFFER_FLAG_DELTA_UNIT \
    | GST_BUFFER_FLAG_NON_DROPPABLE)
/* The element's sink position after `e` (queue's rule). */
guint64 soak_data_position_after (guint64 pos, const SoakEntry * e);

/* ---- soak-verify.c ---- */
void soak_verify_setup (GstPad * sinkpad);
/* Probe hold: the next delivery of `seq` blocks until released. */
void soak_verify_hold (guint64 seq);
void soak_verify_wait_held (void);
void soak_verify_release (void);
void soak_verify_dump (void);

/* ---- soak-producer.c ---- */
gpointer soak_producer_main (gpointer data);
/* One chapter's configuration from its index (pure function of the seed). */
void soak_chapter_plan (SoakChapter * ch, guint index);
void soak_chapter_plan_limits (SoakChapter * ch, guint64 * rng);
void soak_element_apply (const SoakChapter * ch, gboolean geometry);
void soak_op_buffer (void);
void soak_op_list (void);
void soak_op_event (void);
void soak_events_check_gone (void);
void soak_refs_init (void);
void soak_refs_track (GstMiniObject * object);
void soak_refs_forget (GstMiniObject * object);
void soak_refs_print (GstMiniObject * object);
void soak_op_eos (void);
void soak_op_segment_jump (void);
/* Note `what` (taken) in the ring of the element's last src pad events,
 * printed with a GStreamer warning. */
void soak_event_ring_note (gchar * what);
/* A new epoch started (ctl_lock held): baseline for the drop counts. */
void soak_epoch_baseline (void);
/* Push a drain query; TRUE when it was answered downstream (then the
 * element's counts and levels are checked). */
gboolean soak_barrier (gboolean ctl_held);
void soak_push_segment (void);

/* ---- soak-probe.c ---- */
void soak_probe_run (void);

/* ---- soak-threads.c ---- */
gpointer soak_flusher_main (gpointer data);
/* --group-peers (soak-peers.c): N more tbqueues in the soaked element's
 * copy group, each checked on its own. */
void soak_peers_start (guint n);
void soak_peers_finish (guint64 * buffers, guint64 * cycles);
gpointer soak_watchdog_main (gpointer data);
/* FLUSH_START, FLUSH_STOP and a new epoch, from the calling thread
 * (ctl_lock held). */
void soak_flush (void);

/* ---- soak-inject.c ---- */
gboolean soak_inject_setup (GError ** error);
void soak_inject_finish (void);
/* A fault of the workers' (worker-*): every chapter is parallel. */
gboolean soak_inject_in_workers (void);

/* ---- soak-worker.c ---- */
/* A new worker element doing `cfg` (floating), its random draws (delays,
 * drops) from `seed`. */
GstElement *soak_worker_new (const SoakWorkerConfig * cfg, guint64 seed);
gchar *soak_worker_describe (const SoakWorkerConfig * cfg);

/* ---- soak-chapter.c: parallel chapters ---- */
/* The split's limits (a chapter's start, a limit change). */
void soak_parallel_plan_limits (SoakParallelPlan * par, guint64 * rng);
/* A branch's worker. */
void soak_worker_plan (SoakWorkerConfig * w, guint64 * rng);

/* ---- soak-parallel.c ---- */
/* The element is in READY or NULL: link its src pad to our sink pad, or
 * through the chapter's split, workers and join. */
void soak_parallel_setup (const SoakChapter * ch);
void soak_parallel_teardown (void);
/* Set the chain after the element to `state` (before the element: a bin
 * changes its sinks first), when there is one. */
void soak_parallel_set_state (GstState state);
/* Whether the current chapter runs through split and join. */
gboolean soak_parallel_active (void);
/* A branch requested or released while playing (ctl_lock held). */
void soak_parallel_op_branch (void);
/* New split limits and max-in-flight while playing. */
void soak_parallel_op_limits (void);
/* The split's drop counters (0 without a chain). */
guint64 soak_parallel_dropped (void);
/* The join's `gaps` (0 without a chain). */
guint64 soak_parallel_join_gaps (void);
/* After a drain query was answered, in the epoch it was pushed in: the
 * split and the join hold nothing, no number is in flight, no output came
 * late. */
void soak_parallel_check_drained (void);
/* After an EOS came out: wait until the split's branch tasks stopped. */
void soak_parallel_wait_eos (guint32 epoch);
/* Print the split's and the join's stats (a failure's report). */
void soak_parallel_dump (void);
/* The effective leaky mode of the chain (element and split). */
gint soak_parallel_leaky (const SoakChapter * ch);

/* ---- element helpers (soak-main.c) ---- */
/* Watch an element of the chain as the soaked one is: its overrun signal
 * counted, the events `src` (if not NULL) pushes kept in the ring. */
void soak_watch_element (GstElement * element, GstPad * src);
/* Print `element`'s stats, unless reading them blocks (a deadlock). */
void soak_print_stats (const gchar * what, GstElement * element);
gboolean soak_has_property (const gchar * name);
/* The element's `stats` field (0 for queue, which has none). */
guint64 soak_stat (const gchar * field);
guint64 soak_element_dropped (void);

G_END_DECLS
#endif

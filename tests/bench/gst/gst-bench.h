/* gst-bench: tbqueue against queue and queue2, element benchmarks.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the benchmarks share: the timer, the payload every buffer carries
 * and its check, the contenders (element + properties), the "link" (a
 * standalone src pad we push from, the element, a standalone sink pad whose
 * chain function verifies every buffer), statistics, and the parameter and
 * machine dump.
 */
#ifndef GST_BENCH_H
#define GST_BENCH_H

#include <gst/gst.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GB_HAVE_TSC 1
#endif

G_BEGIN_DECLS

#define GB_NOINLINE __attribute__((noinline))
#define GB_INLINE static inline __attribute__((always_inline))

/* ---- timer ---- */

extern double gb_ticks_per_ns;

/* Monotonic nanoseconds (clock_gettime). */
guint64 gb_now_ns (void);

/* Cheap timestamp: TSC ticks where there is one (calibrated against the
 * monotonic clock by gb_timer_init()), else nanoseconds. */
GB_INLINE guint64
gb_ticks (void)
{
#ifdef GB_HAVE_TSC
  guint64 t;

  _mm_lfence ();
  t = __rdtsc ();
  _mm_lfence ();
  return t;
#else
  return gb_now_ns ();
#endif
}

GB_INLINE double
gb_ticks_to_ns (guint64 ticks)
{
  return (double) ticks / gb_ticks_per_ns;
}

GB_INLINE guint64
gb_ns_to_ticks (double ns)
{
  return (guint64) (ns * gb_ticks_per_ns);
}

void gb_timer_init (void);
/* Median cost of an empty gb_ticks() pair (ns). */
double gb_timer_overhead_ns (void);

/* Spin until `until` (ticks) without touching memory. */
GB_INLINE void
gb_spin_until (guint64 until)
{
  while (gb_ticks () < until) {
#ifdef GB_HAVE_TSC
    _mm_pause ();
#endif
  }
}

/* Wait until the monotonic time `deadline_ns`: clock_nanosleep when
 * `sleep` (a real source waiting for its next period), else spin. */
void gb_pace_until (guint64 deadline_ns, gboolean sleep);
/* Timer slack of the calling thread down to 1 ns (precise sleeps). */
void gb_precise_sleeps (void);

/* ---- payload ----
 * Buffer `seq` carries 64-bit words w[0] = seq, w[1] = stamp ^ (seq * MIX)
 * (stamp 0 unless a latency benchmark puts its push time there) and
 * w[k] = seq * MIX + k * STEP for k >= 2, so every byte changes from one
 * buffer to the next.  GST_BUFFER_OFFSET is seq as well.  Sizes are
 * multiples of 8, at least 16. */
#define GB_MIX G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)
#define GB_STEP G_GUINT64_CONSTANT (0xD1B54A32D192ED03)

GB_INLINE void
gb_payload_fill (guint8 * p, gsize size, guint64 seq, guint64 stamp)
{
  guint64 *w = (guint64 *) p;
  guint64 b = seq * GB_MIX;
  gsize k, n = size / 8;

  w[0] = seq;
  w[1] = stamp ^ b;
  for (k = 2; k < n; k++)
    w[k] = b + k * GB_STEP;
}

/* TRUE when p holds buffer seq's payload; *stamp gets the stamp. */
GB_INLINE gboolean
gb_payload_check (const guint8 * p, gsize size, guint64 seq, guint64 * stamp)
{
  const guint64 *w = (const guint64 *) p;
  guint64 b = seq * GB_MIX, bad = 0;
  gsize k, n = size / 8;

  if (w[0] != seq)
    return FALSE;
  *stamp = w[1] ^ b;
  for (k = 2; k < n; k++)
    bad |= w[k] ^ (b + k * GB_STEP);
  return bad == 0;
}

/* ---- statistics ---- */

/* Nearest-rank percentile (p in [0, 100]) of v[0..n); sorts v. */
double gb_percentile (double *v, gsize n, double p);
/* p50, p99, p999 at once (sorts v); NAN for n == 0. */
void gb_percentiles (double *v, gsize n, double *p50, double *p99,
    double *p999);
double gb_median (double *v, gsize n);
double gb_mean (const double *v, gsize n);

/* ---- process ---- */

/* Resident set size now and its peak since the last gb_rss_reset_peak()
 * (bytes; /proc/self/status VmRSS and VmHWM). */
guint64 gb_rss_bytes (void);
guint64 gb_rss_peak_bytes (void);
/* Reset VmHWM to the current RSS (/proc/self/clear_refs); FALSE if the
 * kernel refuses. */
gboolean gb_rss_reset_peak (void);
/* User + system CPU seconds of the process (getrusage RUSAGE_SELF). */
double gb_cpu_seconds (void);
/* Of the calling thread (RUSAGE_THREAD). */
double gb_thread_cpu_seconds (void);
/* The process's context switches, voluntary and involuntary, all threads
 * (mostly wake-ups). */
guint64 gb_process_switches (void);
/* The calling thread's voluntary and involuntary context switches. */
void gb_thread_switches (guint64 * voluntary, guint64 * involuntary);
double gb_load_average (void);

/* ---- machine and parameter dump ---- */

typedef struct _GbCommon GbCommon;

/* Opens a JSON object and writes the members "tool", "benchmark" (the
 * output name), "command" (the command line), "started" and "machine" (CPU
 * model, cores, kernel, GStreamer, compiler, build type, git commit, plugin
 * file, timer); the caller adds its parameters and calls gb_meta_end(). */
void gb_meta_begin (FILE * f, const GbCommon * c);
void gb_json_string (FILE * f, const char *s);

/* ---- output ---- */

struct _GbCommon
{
  gboolean smoke;
  gboolean tap;
  gint runs;
  const gchar *out;             /* output directory (see gb_out_dir()) */
  const gchar *name;            /* output file stem: NAME-runs.csv, ... */
  const gchar *command;         /* the command line, for the meta file */
  const gchar *only;            /* comma-separated contender names or NULL */
  gboolean pin;                 /* pusher on CPU 0, element threads on CPU 1 */
};

/* --pin: set by gb_gst_init(); links then pin their element's threads. */
extern gboolean gb_pinned;

/* The output file DIR/NAME-suffix (NAME is c->name, "runs.csv" a suffix),
 * created, and DIR too.  DIR is --out, else $TBQ_BENCH_OUT, else the build
 * tree's bench-data/ (bench-smoke/ with --smoke). */
FILE *gb_out_open (const GbCommon * c, const char *suffix);
void gb_tap (const GbCommon * c, gboolean ok, const char *fmt, ...)
    G_GNUC_PRINTF (3, 4);
/* The number of TAP lines printed so far. */
gint gb_tap_count (void);
/* Print "not ok" (if TAP) and a message to stderr, then exit(1). */
void gb_fail (const GbCommon * c, const char *fmt, ...) G_GNUC_PRINTF (2, 3)
    G_GNUC_NORETURN;
void gb_die (const char *fmt, ...) G_GNUC_PRINTF (1, 2) G_GNUC_NORETURN;

/* ---- contenders ---- */

typedef struct
{
  const gchar *name;            /* as reported: "queue", "tbqueue-ref", ... */
  const gchar *factory;         /* element factory */
  const gchar *props;           /* "key=value ..." set on the element */
  const gchar *what;            /* one line for the report */
} GbContender;

/* Writes the member "contenders" (name and description of each), closes
 * the object gb_meta_begin() opened, and closes `f`. */
void gb_meta_end (FILE * f, const GbContender * const *cont, gint n);

/* Every contender known; gb_contender_find() by name. */
extern const GbContender gb_contenders[];
const GbContender *gb_contender_find (const gchar * name);
/* Selected from `names` (comma-separated), filtered by c->only. */
gint gb_contenders_select (const GbCommon * c, const gchar * names,
    const GbContender ** out, gint max);
/* The same, names looked up with `find` (a benchmark's own contenders
 * beside the table's). */
typedef const GbContender *(*GbContenderFind) (const gchar * name);
gint gb_contenders_select_with (const GbCommon * c, const gchar * names,
    GbContenderFind find, const GbContender ** out, gint max);

/* New element for `c`: its own props, then `limits` ("key=value ..."),
 * each limit only where the element has that property.  A contender with
 * no factory and non-empty props is a bin made of the gst-launch
 * description in props, its unlinked pads ghosted as "sink" and "src"
 * (its limits are the description's; `limits` is not used). */
GstElement *gb_contender_make (const GbContender * c, const gchar * limits);
/* Set "key=value key=value" on obj; missing properties are skipped when
 * `lenient`, fatal otherwise. */
void gb_set_props (GObject * obj, const gchar * props, gboolean lenient);

/* "buffers-copied"/"buffers-referenced" from tbqueue's stats (0 for others). */
void gb_tbqueue_transfer_counts (GstElement * e, guint64 * copied,
    guint64 * referenced);

/* For a tbqueue: 1 if a plain buffer of `size` bytes must be copied
 * (transfer=copy; auto with the size up to copy-threshold), 0 if it must
 * be referenced (transfer=reference; auto with a large buffer of no pool);
 * -1 when that is not certain (auto with a large buffer of a pool: copied
 * when it would wait in the queue; `pooled` -1: whether the buffer belongs
 * to a pool is not known) or for other elements. */
gint gb_tbqueue_expects_copy (GstElement * e, gsize size, gint pooled);

/* A few of tbqueue's stats counters as "name=value;..." (empty for other
 * elements); g_free. */
gchar *gb_tbqueue_stats_brief (GstElement * e);

/* ---- the threads an element starts ---- */

typedef struct _GbThreads GbThreads;

/* Give `elem` a bus whose sync handler notes every thread that enters a
 * task of it or of its children (STREAM_STATUS ENTER, posted from the
 * thread itself), with the factory of the element owning the task, and
 * with --pin (gb_pinned) puts it on CPU 1.  Before the element starts. */
GbThreads *gb_threads_watch (GstElement * elem);
/* CPU seconds the threads noted and still in their tasks spent since they
 * entered them, for the tasks of elements made by `factory` ("tbqjoin";
 * NULL: all of them). */
double gb_threads_cpu_seconds (GbThreads * w, const gchar * factory);
/* How many such threads are in their tasks now. */
gint gb_threads_count (GbThreads * w, const gchar * factory);
/* Takes the bus off `elem` (if not NULL), then frees `w`. */
void gb_threads_free (GbThreads * w, GstElement * elem);

/* Push stream-start, `caps` and a TIME segment on our src pad (active,
 * linked); FALSE if one is refused. */
gboolean gb_pad_start_stream (GstPad * src, const gchar * stream_id,
    GstCaps * caps);

/* ---- buffers ---- */

typedef enum
{
  GB_ALLOC_FRESH,               /* gst_buffer_new_allocate() per buffer */
  GB_ALLOC_POOL,                /* a GstBufferPool (unbounded) per link */
} GbAlloc;

const gchar *gb_alloc_name (GbAlloc a);

/* ---- link: our src pad -> element -> our sink pad ---- */

typedef struct _GbLink GbLink;

/* Called in the consumer (downstream) thread for every verified buffer,
 * before it is released. */
typedef void (*GbConsumeFunc) (GbLink * link, GstBuffer * buf, guint64 seq,
    guint64 stamp, gpointer user_data);

struct _GbLink
{
  const GbContender *contender;
  GstElement *elem;
  GbThreads *threads;           /* the element's threads (NULL: bare) */
  GstPad *src;                  /* ours, linked to elem's sink */
  GstPad *sink;                 /* ours, linked from elem's src */
  gsize size;                   /* payload bytes */
  GbAlloc alloc;
  GstBufferPool *pool;

  /* producer side (the pushing thread) */
  guint64 pushed;
  gboolean live;                /* our src pad answers LATENCY: live */

  /* consumer side */
  guint spin_loops;             /* work per buffer */
  GbConsumeFunc consume;
  gpointer consume_data;
  guint64 chain_entry;          /* gb_ticks() at chain entry, with consume */
  atomic_uint_fast64_t received;        /* buffers verified */
  atomic_int failed;
  gchar failure[256];
  guint64 expect;               /* next seq (consumer thread only) */
  guint64 spin_sink;

  /* stall gate */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  atomic_int stalled;
};

/* Push-to-chain latency of buffers first .. first + n - 1: set link->consume
 * to gb_record_latency and link->consume_data to a GbLatency whose lat_ns
 * holds n samples (ns, from the stamp the buffer was made with). */
typedef struct
{
  double *lat_ns;
  guint64 first;
  guint64 n;
} GbLatency;

void gb_record_latency (GbLink * link, GstBuffer * buf, guint64 seq,
    guint64 stamp, gpointer user_data);

/* A contender instance in PLAYING with stream-start, caps and segment sent. */
/* Make the link's upstream a live source (a camera): our src pad answers
 * latency queries with live = TRUE.  Before the first buffer. */
void gb_link_set_live (GbLink * link);
GbLink *gb_link_new (const GbContender * c, const gchar * limits, gsize size,
    GbAlloc alloc, guint spin_loops);
void gb_link_free (GbLink * link);

/* A new buffer `link->pushed` (fresh or from the pool), filled. */
GB_INLINE GstBuffer *
gb_link_make_buffer (GbLink * link, guint64 stamp)
{
  GstBuffer *buf = NULL;
  GstMapInfo map;

  if (link->alloc == GB_ALLOC_POOL) {
    if (gst_buffer_pool_acquire_buffer (link->pool, &buf, NULL) != GST_FLOW_OK)
      gb_die ("buffer pool: acquire failed");
  } else {
    buf = gst_buffer_new_allocate (NULL, link->size, NULL);
  }
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  gb_payload_fill (map.data, link->size, link->pushed, stamp);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_OFFSET (buf) = link->pushed;
  return buf;
}

/* A new buffer whose payload carries gb_ticks() taken as late as possible
 * (just before unmapping), for latency: the caller pushes it at once. */
GB_INLINE GstBuffer *
gb_link_make_stamped_buffer (GbLink * link)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, link->size, NULL);
  GstMapInfo map;
  guint64 stamp;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  gb_payload_fill (map.data, link->size, link->pushed, 0);
  stamp = gb_ticks ();
  ((guint64 *) map.data)[1] = stamp ^ (link->pushed * GB_MIX);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_OFFSET (buf) = link->pushed;
  return buf;
}

/* Push one buffer made by gb_link_make_buffer(); dies on a flow error. */
GB_INLINE void
gb_link_push (GbLink * link, GstBuffer * buf)
{
  GstFlowReturn ret = gst_pad_push (link->src, buf);

  if (G_UNLIKELY (ret != GST_FLOW_OK))
    gb_die ("%s: push returned %s", link->contender->name,
        gst_flow_get_name (ret));
  link->pushed++;
}

GB_INLINE guint64
gb_link_received (GbLink * link)
{
  return atomic_load_explicit (&link->received, memory_order_acquire);
}

/* Stall / release the consumer (its chain function waits). */
void gb_link_stall (GbLink * link, gboolean stalled);
/* Wait until every pushed buffer was verified; FALSE on timeout (ns) or a
 * verification failure (link->failure says what). */
gboolean gb_link_drain (GbLink * link, gint64 timeout_ns);
/* TRUE when the consumer has seen nothing wrong so far. */
gboolean gb_link_ok (GbLink * link);

/* The pushing thread's business: a 48 KiB table of 64-byte linked nodes; a
 * query updates 8 of them along their links from a random start. */
void gb_table_init (guint64 seed);
void gb_table_warm (guint queries);
guint64 gb_table_query (void);
/* ns per query of `groups` groups of `per_group` queries, into out[]. */
void gb_table_time_groups (double *out, guint groups, guint per_group);

/* ---- subcommands ---- */

int gb_throughput_main (GbCommon * c, int argc, char **argv);
int gb_upstream_main (GbCommon * c, int argc, char **argv);
int gb_callgrind_main (GbCommon * c, int argc, char **argv);
int gb_burst_main (GbCommon * c, int argc, char **argv);
int gb_latency_main (GbCommon * c, int argc, char **argv);
int gb_scenario_main (GbCommon * c, int argc, char **argv);
int gb_memory_main (GbCommon * c, int argc, char **argv);
int gb_camera_main (GbCommon * c, int argc, char **argv);
int gb_streams_main (GbCommon * c, int argc, char **argv);
int gb_parallel_main (GbCommon * c, int argc, char **argv);

/* Initialise GStreamer, load the tbqueue plugin from the build tree and
 * register the benchmark source element. */
void gb_gst_init (void);

/* Run `self` as a child process with argv, return its stdout (g_free). */
gchar *gb_run_child (const gchar * const *argv, gint * status);
/* The same, for a child that prints its results as lines "row,...": those
 * lines without the prefix (g_strfreev).  A child that failed adds one to
 * *failures and is named (`what`) on stderr; its rows are returned all the
 * same. */
gchar **gb_run_child_rows (const gchar * const *argv, const gchar * what,
    gint * failures);
extern const gchar *gb_self;

G_END_DECLS
#endif

/* gst-bench streams: many paced streams in one process, queue and tbqueue.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   `streams` links (default 16) live in one process, each our src pad !
 *   X ! our sink pad, each fed by its own pushing thread at `rate` buffers
 *   per second (default 1 kHz: a recorder of 16 sensors or cameras), the
 *   streams' periods staggered evenly (stream i starts i/streams of a
 *   period after stream 0), every thread sleeping until its next buffer
 *   (clock_nanosleep, as a real source waits).  Each stream pushes
 *   rate * duration buffers of `size` bytes (gst_buffer_new_allocate; the
 *   payload stamped for latency), our sink pads verify every buffer.  Per
 *   size: buffers pushed and delivered (in order, every byte checked),
 *   process CPU time (getrusage, all threads, from the first push until
 *   every stream's last buffer is verified) per buffer, the same less the
 *   pushing threads' own CPU time (others_cpu_us_per_buffer: the elements'
 *   threads and downstream's check, where a queue's work is), the process's
 *   context switches per buffer (voluntary + involuntary: mostly
 *   wake-ups), the threads the elements run (the process's threads while
 *   the streams run, less the main thread and the pushing threads),
 *   latency p50/p99 over every buffer of every stream (push to chain
 *   entry).
 *   Contenders: `bare` (no element: the consumer runs inside the push; the
 *   floor the harness costs), `queue`, `tbqueue` (every instance in the
 *   process's default copy group: one copy thread for all of them), and
 *   `tbqueue-own-groups` (each instance in a copy group of its own, as
 *   before copy groups: one copy thread per stream).  Each contender runs
 *   in a process of its own, sizes in the given order; processes alternate
 *   between contenders, the order rotating from run to run.
 *
 * WHAT IT DOES NOT MEAN: the pushing threads' own wake-ups (one per buffer)
 * are in every contender's figure, `bare`'s too; what an element adds is
 * its figure less `bare`'s.  Two cores serve 16 pushers and the elements'
 * threads: the figures say what the elements cost when they share the
 * machine, not what one stream costs alone.
 *
 * OPTIONS  --streams 16  --rate 1000  --sizes 32,1024  --duration-ms 3000
 *          --contenders bare,queue,tbqueue,tbqueue-own-groups
 */
#include "gst-bench.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define DRAIN_TIMEOUT_NS (120 * GST_SECOND)

/* Each instance in a copy group of its own: the element's limits string
 * gives "copy-group=streamN" (see child_main). */
static const GbContender own_groups = {
  "tbqueue-own-groups", "tbqueue", "transfer=auto",
  "tbqueue, transfer=auto, each instance in a copy group of its own "
      "(copy-group=streamN: one copy thread per stream)"
};

static const GbContender *
find_contender (const gchar * name)
{
  if (strcmp (name, own_groups.name) == 0)
    return &own_groups;
  return gb_contender_find (name);
}

static gint
process_threads (void)
{
  DIR *d = opendir ("/proc/self/task");
  struct dirent *e;
  gint n = 0;

  if (d == NULL)
    return -1;
  while ((e = readdir (d)))
    if (e->d_name[0] != '.')
      n++;
  closedir (d);
  return n;
}

typedef struct
{
  GbLink *link;
  guint64 n;                    /* buffers to push */
  guint64 start_ns;             /* the first push */
  guint64 period_ns;
  GbLatency lat;
  pthread_barrier_t *go;
  double cpu_s;                 /* the thread's own CPU time, at its end */
} Pusher;

static void *
pusher_main (void *data)
{
  Pusher *p = data;
  guint64 i;

  gb_precise_sleeps ();
  pthread_barrier_wait (p->go);
  for (i = 0; i < p->n; i++) {
    gb_pace_until (p->start_ns + i * p->period_ns, TRUE);
    gb_link_push (p->link, gb_link_make_stamped_buffer (p->link));
  }
  p->cpu_s = gb_thread_cpu_seconds ();
  return NULL;
}

/* One contender, every size; prints one "row,..." line per size. */
static int
child_main (GbCommon * c, const gchar * name, const gchar * sizes_s,
    guint streams, guint64 rate, guint duration_ms)
{
  const GbContender *cont = find_contender (name);
  gchar **sizes;
  gint si, failures = 0;

  if (cont == NULL)
    gb_die ("unknown contender %s", name);
  gb_gst_init ();
  gb_precise_sleeps ();
  sizes = g_strsplit (sizes_s, ",", -1);
  for (si = 0; sizes[si]; si++) {
    gsize size = (gsize) g_ascii_strtoull (sizes[si], NULL, 10);
    guint64 n = MAX (c->smoke ? 10 : 100, rate * duration_ms / 1000);
    guint64 period = 1000000000u / rate, total = n * streams, delivered = 0;
    Pusher *p = g_new0 (Pusher, streams);
    pthread_t *th = g_new0 (pthread_t, streams);
    pthread_barrier_t go;
    double cpu0, cpu1, *all = g_new0 (double, total), p50, p99, p999;
    guint64 sw0, sw1, t0, t_end, start;
    double pushers_s = 0;
    gint threads, busy;
    gboolean ok = TRUE;
    guint s;

    if (size < 16 || size % 8)
      gb_die ("streams: size %s: a multiple of 8, at least 16", sizes[si]);
    pthread_barrier_init (&go, NULL, streams + 1);
    for (s = 0; s < streams; s++) {
      gchar *limits = cont == &own_groups
          ? g_strdup_printf ("copy-group=stream%u", s) : g_strdup ("");

      p[s].link = gb_link_new (cont, limits, size, GB_ALLOC_FRESH, 0);
      p[s].n = n;
      p[s].period_ns = period;
      p[s].lat.lat_ns = g_new0 (double, n);
      p[s].lat.n = n;
      p[s].link->consume = gb_record_latency;
      p[s].link->consume_data = &p[s].lat;
      p[s].go = &go;
      g_free (limits);
    }
    /* Every link is in PLAYING and its threads have started. */
    g_usleep (100000);
    start = gb_now_ns () + 20 * GST_MSECOND;
    for (s = 0; s < streams; s++) {
      p[s].start_ns = start + s * period / streams;
      if (pthread_create (&th[s], NULL, pusher_main, &p[s]) != 0)
        gb_die ("streams: cannot start a pushing thread");
    }
    cpu0 = gb_cpu_seconds ();
    sw0 = gb_process_switches ();
    t0 = gb_now_ns ();
    pthread_barrier_wait (&go);
    /* Half way through: every thread the streams need is running. */
    g_usleep ((gulong) duration_ms * 500);
    busy = process_threads ();
    for (s = 0; s < streams; s++)
      pthread_join (th[s], NULL);
    for (s = 0; s < streams; s++) {
      if (!gb_link_drain (p[s].link, DRAIN_TIMEOUT_NS)) {
        ok = FALSE;
        fprintf (stderr, "streams %s %zu B stream %u: %s\n", name, size, s,
            p[s].link->failure);
      }
    }
    t_end = gb_now_ns ();
    cpu1 = gb_cpu_seconds ();
    sw1 = gb_process_switches ();
    /* The main thread and the pushing threads are not the elements'. */
    threads = busy < 0 ? -1 : busy - 1 - (gint) streams;
    for (s = 0; s < streams; s++) {
      delivered += gb_link_received (p[s].link);
      pushers_s += p[s].cpu_s;
      memcpy (all + s * n, p[s].lat.lat_ns, n * sizeof (double));
    }
    if (!ok)
      failures++;
    gb_percentiles (all, total, &p50, &p99, &p999);
    printf ("row,%zu,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT ",%.4f,%.4f,%.4f,%.3f,%.2f,%.2f,%d,%d\n", size,
        streams, rate, total, delivered, (t_end - t0) / 1e9,
        (cpu1 - cpu0) / (double) total * 1e6,
        (cpu1 - cpu0 - pushers_s) / (double) total * 1e6,
        (double) (sw1 - sw0) / (double) total, p50 / 1e3, p99 / 1e3,
        threads, ok);
    for (s = 0; s < streams; s++) {
      gb_link_free (p[s].link);
      g_free (p[s].lat.lat_ns);
    }
    pthread_barrier_destroy (&go);
    g_free (all);
    g_free (th);
    g_free (p);
  }
  g_strfreev (sizes);
  return failures ? 1 : 0;
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  guint64 size, rate, pushed, delivered;
  guint streams;
  double seconds, cpu_us, others_cpu_us, switches, p50, p99;
  gint threads;
  gboolean ok;
} Row;

int
gb_streams_main (GbCommon * c, int argc, char **argv)
{
  const gchar *sizes_s = "32,1024";
  const gchar *names = "bare,queue,tbqueue,tbqueue-own-groups";
  const gchar *child = NULL;
  guint duration_ms = 0, streams = 16;
  guint64 rate = 1000;
  const GbContender *cont[16];
  gint ncont, i, k, run, nrows = 0, failures = 0, maxrows;
  Row *rows;
  FILE *f;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes_s = argv[++i];
    else if (strcmp (argv[i], "--streams") == 0 && i + 1 < argc)
      streams = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--rate") == 0 && i + 1 < argc)
      rate = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--duration-ms") == 0 && i + 1 < argc)
      duration_ms = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else if (strcmp (argv[i], "--child") == 0 && i + 1 < argc)
      child = argv[++i];
    else
      gb_die ("streams: unknown option %s", argv[i]);
  }
  if (streams == 0 || streams > 1024 || rate == 0 || rate > 1000000)
    gb_die ("streams: --streams 1..1024, --rate 1..1000000");
  if (duration_ms == 0)
    duration_ms = c->smoke ? 30 : 3000;
  if (child)
    return child_main (c, child, sizes_s, streams, rate, duration_ms);

  gst_init (NULL, NULL);
  ncont = gb_contenders_select_with (c, names, find_contender, cont,
      G_N_ELEMENTS (cont));
  maxrows = c->runs * ncont * 16;
  rows = g_new0 (Row, maxrows);
  if ((f = gb_out_open (c, "meta.json"))) {
    gb_gst_init ();
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"streams\": %u, "
        "\"rate_hz_per_stream\": %" G_GUINT64_FORMAT ", \"sizes\": \"%s\", "
        "\"duration_ms\": %u, \"limits\": \"element defaults\", "
        "\"alloc\": \"fresh\", \"pacing\": \"clock_nanosleep, streams "
        "staggered by period / streams\", \"process_per_contender\": true},\n",
        c->runs, streams, rate, sizes_s, duration_ms);
    gb_meta_end (f, cont, ncont);
  }

  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      const GbContender *ck = cont[(k + run) % ncont];
      gchar *dur = g_strdup_printf ("%u", duration_ms);
      gchar *ns = g_strdup_printf ("%u", streams);
      gchar *rs = g_strdup_printf ("%" G_GUINT64_FORMAT, rate);
      const gchar *args[] = { gb_self, "streams", "--child", ck->name,
        "--sizes", sizes_s, "--streams", ns, "--rate", rs,
        "--duration-ms", dur, c->smoke ? "--smoke" : NULL, NULL
      };
      gchar *what = g_strdup_printf ("streams %s", ck->name);
      gchar **lines = gb_run_child_rows (args, what, &failures);
      guint li;

      for (li = 0; lines[li]; li++) {
        Row *r = &rows[nrows];
        gint okv = 0;

        if (sscanf (lines[li], "%" G_GUINT64_FORMAT ",%u,%"
                G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                ",%lf,%lf,%lf,%lf,%lf,%lf,%d,%d", &r->size, &r->streams,
                &r->rate, &r->pushed, &r->delivered, &r->seconds, &r->cpu_us,
                &r->others_cpu_us, &r->switches, &r->p50, &r->p99,
                &r->threads, &okv) != 13)
          continue;
        r->run = run;
        r->contender = ck;
        r->order = k;
        r->ok = okv && r->delivered == r->pushed;
        if (!r->ok)
          failures++;
        printf ("# run %d %-18s %5" G_GUINT64_FORMAT " B x %u streams at %"
            G_GUINT64_FORMAT " Hz: delivered %6.2f %%, CPU %6.2f us/buffer "
            "(not pushers %5.2f), %.2f switches/buffer, %d element threads, "
            "p50 %7.1f p99 %8.1f us\n", run, ck->name, r->size, r->streams,
            r->rate, 100.0 * r->delivered / r->pushed, r->cpu_us,
            r->others_cpu_us, r->switches, r->threads, r->p50, r->p99);
        if (nrows + 1 < maxrows)
          nrows++;
      }
      g_strfreev (lines);
      g_free (what);
      g_free (dur);
      g_free (ns);
      g_free (rs);
    }

  if ((f = gb_out_open (c, "runs.csv"))) {
    fprintf (f, "run,contender,order,size,streams,rate_hz,pushed,delivered,"
        "seconds,cpu_us_per_buffer,others_cpu_us_per_buffer,"
        "switches_per_buffer,element_threads,p50_us,p99_us,ok\n");
    for (i = 0; i < nrows; i++) {
      Row *r = &rows[i];

      fprintf (f, "%d,%s,%d,%" G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT
          ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.4f,%.4f,%.4f,%.3f,"
          "%d,%.2f,%.2f,%d\n", r->run, r->contender->name, r->order, r->size,
          r->streams, r->rate, r->pushed, r->delivered, r->seconds,
          r->cpu_us, r->others_cpu_us, r->switches, r->threads, r->p50,
          r->p99, r->ok);
    }
    fclose (f);
  }
  for (k = 0; k < ncont; k++) {
    gboolean ok = TRUE, seen = FALSE;

    for (i = 0; i < nrows; i++)
      if (rows[i].contender == cont[k]) {
        seen = TRUE;
        ok = ok && rows[i].ok;
      }
    gb_tap (c, ok && seen && failures == 0, "streams %s: every stream "
        "delivered every buffer, verified", cont[k]->name);
  }
  g_free (rows);
  return failures ? 1 : 0;
}

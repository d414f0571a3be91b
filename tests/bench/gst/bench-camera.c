/* gst-bench camera: frames a live source with a 4-buffer pool loses while
 * downstream stalls.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   A camera modelled on v4l2src's capture queue: a GstBufferPool of
 *   exactly 4 buffers (min-buffers = max-buffers = 4).  A capture thread
 *   ticks at the frame rate (clock_nanosleep to absolute deadlines); at
 *   each tick it takes a free buffer from the pool without waiting, as the
 *   driver captures into a buffer queued to it: if one is free the frame is
 *   written into it (every byte: the gst-bench payload, with PTS and
 *   duration) and handed to the streaming thread; if none is free (all 4
 *   are downstream, queued, or waiting to be pushed) the frame is lost and
 *   counted, as a camera loses it.  The streaming thread (the main thread)
 *   pushes the captured frames, in order, into X.  Downstream, our sink pad
 *   verifies every frame and, once a second of wall time, stalls for 300 ms
 *   holding the frame it was given (an encoder's hiccup).
 *   Frames: 614400 B (640x480 YUY2) and 4 MiB at 60 fps; sensor packets of
 *   2 KiB and 64 KiB at 1 kHz.
 *   The upstream pad answers latency queries live, as v4l2src does.
 *   Limits: max-size-buffers=0 max-size-bytes=0 for every queue, the
 *   default max-size-time (1 s) with the frames' timestamps: the queue's
 *   own levels never refuse a frame during a 300 ms stall, so what is lost
 *   is what the pool could not give.  tbqueue's pool properties keep their
 *   defaults.
 *   Reported per cell: ticks, frames captured (all delivered and verified),
 *   frames lost, lost %, the longest run of consecutive lost frames, the
 *   stalls that happened, tbqueue's copied/referenced counts, and what
 *   each gst_pad_push cost the streaming thread (wall time: p50, p99 and
 *   the longest, in us; a copy is paid there, inside the push).
 *   Contenders: queue, queue2, tbqueue (transfer=auto), tbqueue-copy,
 *   tbqueue-ref; one cell after the other, in an order that rotates from
 *   run to run, each with a new element and a new pool.
 *   Threads: the capture thread, the streaming thread, X's src task (which
 *   runs the verification and the stall) and, for tbqueue, its copy task.
 *
 * WHAT IT DOES NOT MEAN: a real driver captures without a CPU copy; here
 * the capture thread writes every byte (the same for every contender).
 * Downstream does no work besides verifying and stalling.
 *
 * OPTIONS  --sizes 614400@60,4194304@60,2048@1000,65536@1000 (bytes@fps)
 *          --duration-ms 6000  --stall-ms 300  --stall-every-ms 1000
 *          --pool 4  --contenders queue,queue2,tbqueue,tbqueue-copy,...
 */
#include "gst-bench.h"

#include <stdlib.h>
#include <string.h>

#define LIMITS "max-size-buffers=0 max-size-bytes=0"
#define DRAIN_TIMEOUT_NS (120 * GST_SECOND)

static gchar end_of_stream;     /* the capture thread's last item */

typedef struct
{
  GstBufferPool *pool;
  gsize size;
  guint64 t0, period, ticks;
  GAsyncQueue *ready;
  guint64 captured, lost, max_lost_run;
} Capture;

typedef struct
{
  guint64 next, every, stall;   /* ns */
  guint stalls;
} Stall;

typedef struct
{
  gint run;
  gsize size;
  guint fps;
  const GbContender *contender;
  gint order;
  guint64 ticks, captured, delivered, lost, max_lost_run;
  guint stalls;
  guint64 copied, referenced;
  double push_p50_us, push_p99_us, push_max_us;
  gchar *stats;
  double load1;
  gboolean ok;
  gchar failure[256];
} Cell;

typedef struct
{
  guint64 duration_ms, stall_ms, every_ms;
  guint pool;
} Params;

static gpointer
capture_thread (gpointer data)
{
  Capture *cap = data;
  GstBufferPoolAcquireParams params = { 0 };
  guint64 i, run = 0;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  for (i = 0; i < cap->ticks; i++) {
    GstBuffer *buf = NULL;
    GstMapInfo map;

    gb_pace_until (cap->t0 + i * cap->period, TRUE);
    if (gst_buffer_pool_acquire_buffer (cap->pool, &buf, &params)
        != GST_FLOW_OK) {
      cap->lost++;
      run++;
      cap->max_lost_run = MAX (cap->max_lost_run, run);
      continue;
    }
    run = 0;
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    gb_payload_fill (map.data, cap->size, cap->captured, 0);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_OFFSET (buf) = cap->captured++;
    GST_BUFFER_PTS (buf) = i * cap->period;
    GST_BUFFER_DURATION (buf) = cap->period;
    g_async_queue_push (cap->ready, buf);
  }
  g_async_queue_push (cap->ready, &end_of_stream);
  return NULL;
}

/* Downstream: once every `every` ns of wall time, hold the frame for
 * `stall` ns. */
static void
stall_consume (GbLink * l, GstBuffer * buf, guint64 seq, guint64 stamp,
    gpointer data)
{
  Stall *s = data;
  guint64 now = gb_now_ns ();

  if (now < s->next)
    return;
  g_usleep (s->stall / 1000);
  s->stalls++;
  while (s->next <= now)
    s->next += s->every;
}

static GstBufferPool *
camera_pool (gsize size, guint n)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);

  gst_buffer_pool_config_set_params (config, NULL, (guint) size, n, n);
  if (!gst_buffer_pool_set_config (pool, config)
      || !gst_buffer_pool_set_active (pool, TRUE))
    gb_die ("camera: cannot set up a pool of %u buffers", n);
  return pool;
}

/* Drain, then: every captured frame was delivered (and verified on its
 * way), every tick was either captured or lost. */
static void
check_counts (Cell * cell, GbLink * l)
{
  gboolean drained = gb_link_drain (l, DRAIN_TIMEOUT_NS);

  cell->delivered = gb_link_received (l);
  if (!drained)
    g_snprintf (cell->failure, sizeof cell->failure, "%s", l->failure);
  else if (cell->delivered != cell->captured)
    g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
        " frames delivered, %" G_GUINT64_FORMAT " captured", cell->delivered,
        cell->captured);
  else if (cell->captured + cell->lost != cell->ticks)
    g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
        " captured + %" G_GUINT64_FORMAT " lost != %" G_GUINT64_FORMAT
        " ticks", cell->captured, cell->lost, cell->ticks);
  else
    cell->ok = TRUE;
}

/* tbqueue moved every frame the way its transfer mode says (the frames
 * belong to the camera's pool: auto copies those past half of it, and
 * references the others), each counted once. */
static void
check_transfer (Cell * cell, GbLink * l)
{
  gint want = gb_tbqueue_expects_copy (l->elem, cell->size, 1);

  if (!cell->ok || (want < 0 && cell->copied + cell->referenced == 0))
    return;
  if ((want < 0 && cell->copied + cell->referenced != cell->captured)
      || (want >= 0
          && (want ? cell->copied : cell->referenced) != cell->captured)) {
    cell->ok = FALSE;
    g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
        " frames copied, %" G_GUINT64_FORMAT " referenced: not the transfer "
        "mode asked for", cell->copied, cell->referenced);
  }
}

static void
run_cell (Cell * cell, const Params * p)
{
  GbLink *l = gb_link_new (cell->contender, LIMITS, cell->size,
      GB_ALLOC_FRESH, 0);
  Capture cap = { 0 };
  Stall stall = { 0 };
  GThread *th;
  gpointer item;
  GArray *push_ns;

  /* A camera: live, as v4l2src says it is. */
  gb_link_set_live (l);

  cap.pool = camera_pool (cell->size, p->pool);
  cap.size = cell->size;
  cap.period = 1000000000u / cell->fps;
  cap.ticks = MAX (1, p->duration_ms * cell->fps / 1000);
  cap.ready = g_async_queue_new ();
  stall.every = p->every_ms * 1000000u;
  stall.stall = p->stall_ms * 1000000u;
  l->consume = stall_consume;
  l->consume_data = &stall;
  cell->load1 = gb_load_average ();

  cap.t0 = gb_now_ns () + 1000000u;
  stall.next = cap.t0 + stall.every;
  th = g_thread_new ("capture", capture_thread, &cap);
  push_ns = g_array_new (FALSE, FALSE, sizeof (double));
  while ((item = g_async_queue_pop (cap.ready)) != &end_of_stream) {
    guint64 t = gb_now_ns ();
    double d;

    gb_link_push (l, item);
    d = (double) (gb_now_ns () - t);
    g_array_append_val (push_ns, d);
  }
  g_thread_join (th);
  if (push_ns->len > 0) {
    double *v = (double *) push_ns->data, p999;

    /* One sort; the longest is then the last. */
    gb_percentiles (v, push_ns->len, &cell->push_p50_us, &cell->push_p99_us,
        &p999);
    cell->push_p50_us /= 1e3;
    cell->push_p99_us /= 1e3;
    cell->push_max_us = v[push_ns->len - 1] / 1e3;
  }
  g_array_unref (push_ns);

  cell->ticks = cap.ticks;
  cell->captured = cap.captured;
  cell->lost = cap.lost;
  cell->max_lost_run = cap.max_lost_run;
  gb_link_stall (l, FALSE);
  check_counts (cell, l);
  cell->stalls = stall.stalls;
  gb_tbqueue_transfer_counts (l->elem, &cell->copied, &cell->referenced);
  check_transfer (cell, l);
  cell->stats = gb_tbqueue_stats_brief (l->elem);
  gb_link_free (l);
  gst_buffer_pool_set_active (cap.pool, FALSE);
  gst_object_unref (cap.pool);
  g_async_queue_unref (cap.ready);
}

static void
write_runs (GbCommon * c, Cell * cells, gint n)
{
  FILE *f = gb_out_open (c, "runs.csv");
  gint i;

  fprintf (f, "run,size,fps,contender,order,ticks,captured,delivered,lost,"
      "lost_pct,max_lost_run,stalls,copied,referenced,push_p50_us,push_p99_us,"
      "push_max_us,load1,ok,tbqueue_stats\n");
  for (i = 0; i < n; i++) {
    Cell *x = &cells[i];

    fprintf (f, "%d,%" G_GSIZE_FORMAT ",%u,%s,%d,%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
        ",%.2f,%" G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT ",%.1f,%.1f,%.1f,%.2f,%d,%s\n", x->run, x->size,
        x->fps, x->contender->name, x->order, x->ticks, x->captured,
        x->delivered, x->lost, 100.0 * x->lost / x->ticks, x->max_lost_run,
        x->stalls, x->copied, x->referenced, x->push_p50_us, x->push_p99_us,
        x->push_max_us, x->load1, x->ok, x->stats ? x->stats : "");
  }
  fclose (f);
}

static void
write_meta (GbCommon * c, const Params * p, const gchar * sizes,
    const GbContender ** cont, gint ncont)
{
  FILE *f = gb_out_open (c, "meta.json");

  gb_meta_begin (f, c);
  fprintf (f, ",\n  \"params\": {\"sizes_at_fps\": \"%s\", \"duration_ms\": %"
      G_GUINT64_FORMAT ", \"stall_ms\": %" G_GUINT64_FORMAT
      ", \"stall_every_ms\": %" G_GUINT64_FORMAT ", \"pool_buffers\": %u, "
      "\"limits\": \"%s\"},\n", sizes, p->duration_ms, p->stall_ms,
      p->every_ms, p->pool, LIMITS);
  gb_meta_end (f, cont, ncont);
}

/* One TAP line per contender, over every size and run. */
static gint
report (GbCommon * c, Cell * cells, gint n, const GbContender ** cont,
    gint ncont)
{
  gint i, k, failures = 0;

  for (k = 0; k < ncont; k++) {
    gboolean ok = TRUE;
    const gchar *why = "";

    for (i = 0; i < n; i++)
      if (cells[i].contender == cont[k] && !cells[i].ok) {
        ok = FALSE;
        why = cells[i].failure;
        failures++;
      }
    gb_tap (c, ok, "%s %s: every captured frame delivered and verified, "
        "captured + lost = ticks%s%s", c->name, cont[k]->name,
        ok ? "" : ": ", why);
  }
  return failures;
}

static void
parse_options (int argc, char **argv, Params * p, const gchar ** sizes,
    const gchar ** names)
{
  gint i;

  for (i = 1; i < argc; i++) {
    const gchar *v = i + 1 < argc ? argv[i + 1] : NULL;

    if (v == NULL)
      gb_die ("camera: %s: missing value or unknown option", argv[i]);
    if (strcmp (argv[i], "--sizes") == 0)
      *sizes = v;
    else if (strcmp (argv[i], "--contenders") == 0)
      *names = v;
    else if (strcmp (argv[i], "--duration-ms") == 0)
      p->duration_ms = g_ascii_strtoull (v, NULL, 10);
    else if (strcmp (argv[i], "--stall-ms") == 0)
      p->stall_ms = g_ascii_strtoull (v, NULL, 10);
    else if (strcmp (argv[i], "--stall-every-ms") == 0)
      p->every_ms = g_ascii_strtoull (v, NULL, 10);
    else if (strcmp (argv[i], "--pool") == 0)
      p->pool = (guint) atoi (v);
    else
      gb_die ("camera: unknown option %s", argv[i]);
    i++;
  }
}

int
gb_camera_main (GbCommon * c, int argc, char **argv)
{
  const gchar *sizes_s = "614400@60,4194304@60,2048@1000,65536@1000";
  const gchar *names = "queue,queue2,tbqueue,tbqueue-copy,tbqueue-ref";
  Params p = { 0, 0, 0, 4 };
  const GbContender *cont[16];
  gint ncont, run, si, k, n = 0, failures, i;
  gchar **sizes;
  Cell *cells;

  parse_options (argc, argv, &p, &sizes_s, &names);
  if (p.duration_ms == 0)
    p.duration_ms = c->smoke ? 400 : 6000;
  if (p.stall_ms == 0)
    p.stall_ms = c->smoke ? 100 : 300;
  if (p.every_ms == 0)
    p.every_ms = c->smoke ? 200 : 1000;
  if (p.pool == 0 || p.stall_ms >= p.every_ms)
    gb_die ("camera: --pool at least 1, --stall-ms below --stall-every-ms");
  gb_gst_init ();
  gb_precise_sleeps ();
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  sizes = g_strsplit (sizes_s, ",", -1);
  cells = g_new0 (Cell, c->runs * g_strv_length (sizes) * ncont);
  write_meta (c, &p, sizes_s, cont, ncont);

  for (run = 0; run < c->runs; run++)
    for (si = 0; sizes[si]; si++) {
      gchar *at = strchr (sizes[si], '@');
      gsize size = g_ascii_strtoull (sizes[si], NULL, 10);
      guint fps = at ? (guint) atoi (at + 1) : 0;

      if (size < 16 || size % 8 || fps == 0)
        gb_die ("camera: --sizes BYTES@FPS, bytes a multiple of 8");
      for (k = 0; k < ncont; k++) {
        Cell *cell = &cells[n++];

        cell->run = run;
        cell->size = size;
        cell->fps = fps;
        cell->contender = cont[(k + run + si) % ncont];
        cell->order = k;
        run_cell (cell, &p);
        printf ("# run %d %8" G_GSIZE_FORMAT " B @ %4u fps %-14s lost %5"
            G_GUINT64_FORMAT " of %5" G_GUINT64_FORMAT " (%5.1f %%), longest "
            "run %" G_GUINT64_FORMAT ", %u stalls, push p50 %.1f p99 %.1f max "
            "%.1f us%s %s\n", run, size, fps,
            cell->contender->name, cell->lost, cell->ticks,
            100.0 * cell->lost / cell->ticks, cell->max_lost_run,
            cell->stalls, cell->push_p50_us, cell->push_p99_us,
            cell->push_max_us, cell->ok ? "" : "  FAILED: ", cell->ok ? "" :
            cell->failure);
      }
    }

  write_runs (c, cells, n);
  failures = report (c, cells, n, cont, ncont);
  for (i = 0; i < n; i++)
    g_free (cells[i].stats);
  g_strfreev (sizes);
  g_free (cells);
  return failures ? 1 : 0;
}

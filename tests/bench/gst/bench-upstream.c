/* gst-bench upstream: what one gst_pad_push costs the upstream thread.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   The main thread pushes `pushes` buffers of `size` bytes from a
 *   standalone src pad into X, whose src task pushes into our sink pad (it
 *   verifies every buffer and releases it).  Only gst_pad_push() is timed:
 *   TSC before and after each call, summed over groups of 1000 pushes; the
 *   statistic is the group average in ns per push, minus the measured cost
 *   of an empty timer pair; p50/p99/p999 over the groups of a run.  Making
 *   and filling the buffer (gst_buffer_new_allocate() or a GstBufferPool
 *   acquire) is outside the timed region.
 *   Modes:
 *     up       downstream keeps up as well as it can (its chain function
 *              only verifies); no limits (max-size-buffers/bytes/time=0,
 *              tbqueue sink-max-bytes=1 GiB), so a group never waits for
 *              room; the largest backlog seen is reported.
 *     stalled  downstream's chain function blocks from the first timed push
 *              to the last: the backlog grows by every buffer pushed.
 *   Contenders: bare (our src pad linked straight to our sink pad: the
 *   verification runs inside the push; scale only), queue, queue2, tbqueue
 *   (transfer=auto, i.e. copy at 32 B) and tbqueue-ref.  Each cell gets a
 *   new element, 20000 warm-up pushes (drained) before timing, and is
 *   drained and verified after.
 *
 * callgrind SUBCOMMAND: the same pushes through gb_cg_push(), a noinline
 *   function around gst_pad_push, for instruction counts (gst-callgrind.sh
 *   runs valgrind --toggle-collect=gb_cg_push and divides by the pushes).
 *
 * WHAT IT DOES NOT MEAN: the cost of the whole pipeline (see throughput) or
 * of the consumer threads; with `up`, downstream may still fall behind a
 * fast pusher (the backlog column says by how much).
 *
 * OPTIONS  --size 32  --pushes N  --modes up,stalled  --allocs fresh,pool
 *          --contenders bare,queue,queue2,tbqueue,tbqueue-ref
 */
#include "gst-bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIMITS "max-size-buffers=0 max-size-bytes=0 max-size-time=0 " \
  "sink-max-bytes=1073741824"
#define GROUP 1000
#define WARMUP 20000
#define DRAIN_TIMEOUT_NS (300 * GST_SECOND)

typedef struct
{
  gint run;
  const gchar *mode;
  GbAlloc alloc;
  const GbContender *contender;
  gint order;
  guint64 pushes;
  guint groups;
  double p50, p99, p999, mean;
  guint64 max_backlog;
  double wall_ns_per_push, cpu_ns_per_push;     /* pusher thread, timed part */
  guint64 vcsw, ivcsw;          /* pusher thread's context switches */
  guint64 copied, referenced;
  gchar *tbq_stats;
  double load1;
  gboolean ok;
  gchar failure[256];
} Cell;

static double timer_overhead;

static void
run_cell (Cell * cell, gsize size)
{
  GbLink *l = gb_link_new (cell->contender, LIMITS, size, cell->alloc, 0);
  gboolean stalled = strcmp (cell->mode, "stalled") == 0;
  double *g = g_new (double, cell->groups);
  guint64 i, j, v0, iv0, v1, iv1, t0all;
  double cpu0;

  cell->load1 = gb_load_average ();
  for (i = 0; i < WARMUP; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    goto failed;
  if (stalled)
    gb_link_stall (l, TRUE);
  gb_thread_switches (&v0, &iv0);
  cpu0 = gb_thread_cpu_seconds ();
  t0all = gb_now_ns ();
  for (i = 0; i < cell->groups; i++) {
    guint64 sum = 0, backlog;

    for (j = 0; j < GROUP; j++) {
      GstBuffer *buf = gb_link_make_buffer (l, 0);
      guint64 t0 = gb_ticks (), t1;

      gb_link_push (l, buf);
      t1 = gb_ticks ();
      sum += t1 - t0;
    }
    g[i] = gb_ticks_to_ns (sum) / GROUP - timer_overhead;
    backlog = l->pushed - gb_link_received (l);
    if (backlog > cell->max_backlog)
      cell->max_backlog = backlog;
  }
  cell->wall_ns_per_push = (double) (gb_now_ns () - t0all) / cell->pushes;
  cell->cpu_ns_per_push = (gb_thread_cpu_seconds () - cpu0) * 1e9
      / cell->pushes;
  gb_thread_switches (&v1, &iv1);
  cell->vcsw = v1 - v0;
  cell->ivcsw = iv1 - iv0;
  gb_link_stall (l, FALSE);
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    goto failed;
  cell->mean = gb_mean (g, cell->groups);
  gb_percentiles (g, cell->groups, &cell->p50, &cell->p99, &cell->p999);
  gb_tbqueue_transfer_counts (l->elem, &cell->copied, &cell->referenced);
  cell->tbq_stats = gb_tbqueue_stats_brief (l->elem);
  cell->ok = TRUE;
  gb_link_free (l);
  g_free (g);
  return;

failed:
  cell->ok = FALSE;
  g_snprintf (cell->failure, sizeof cell->failure, "%s", l->failure);
  gb_link_free (l);
  g_free (g);
}

int
gb_upstream_main (GbCommon * c, int argc, char **argv)
{
  const gchar *names = "bare,queue,queue2,tbqueue,tbqueue-ref";
  const gchar *modes_s = "up,stalled", *allocs_s = "fresh,pool";
  gsize size = 32;
  guint64 pushes = 0;
  const GbContender *cont[16];
  gint ncont, i, k, run, ncells = 0, failures = 0, mi, ai;
  gchar **modes, **allocs;
  Cell *cells;
  FILE *f;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      size = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--pushes") == 0 && i + 1 < argc)
      pushes = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--modes") == 0 && i + 1 < argc)
      modes_s = argv[++i];
    else if (strcmp (argv[i], "--allocs") == 0 && i + 1 < argc)
      allocs_s = argv[++i];
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else
      gb_die ("upstream: unknown option %s", argv[i]);
  }
  if (size < 16 || size % 8)
    gb_die ("--size: a multiple of 8, at least 16");
  if (pushes == 0)
    pushes = c->smoke ? 5000 : 300000;
  pushes = MAX (GROUP, pushes / GROUP * GROUP);
  gb_gst_init ();
  timer_overhead = gb_timer_overhead_ns ();
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  modes = g_strsplit (modes_s, ",", -1);
  allocs = g_strsplit (allocs_s, ",", -1);
  cells = g_new0 (Cell, c->runs * g_strv_length (modes)
      * g_strv_length (allocs) * ncont);

  if ((f = gb_out_open (c, "upstream-meta.json"))) {
    gb_meta_begin (f, "upstream");
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"size\": %" G_GSIZE_FORMAT
        ", \"pushes_per_cell\": %" G_GUINT64_FORMAT ", \"group\": %d, "
        "\"warmup_pushes\": %d, \"modes\": \"%s\", \"allocs\": \"%s\", "
        "\"limits\": \"%s\", \"timer_overhead_subtracted_ns\": %.2f},\n", c->runs, size, pushes, GROUP, WARMUP, modes_s,
        allocs_s, LIMITS, timer_overhead);
    gb_meta_end (f, cont, ncont);
  }

  for (run = 0; run < c->runs; run++)
    for (mi = 0; modes[mi]; mi++)
      for (ai = 0; allocs[ai]; ai++)
        for (k = 0; k < ncont; k++) {
          Cell *cell = &cells[ncells];
          const GbContender *ck = cont[(k + run + mi + ai) % ncont];

          /* Without a thread boundary a stalled consumer stalls the push. */
          if (strcmp (modes[mi], "stalled") == 0 && (ck->factory == NULL
                  || strcmp (ck->factory, "identity") == 0))
            continue;
          ncells++;
          cell->run = run;
          cell->mode = modes[mi];
          cell->alloc = strcmp (allocs[ai], "pool") == 0 ? GB_ALLOC_POOL :
              GB_ALLOC_FRESH;
          cell->contender = ck;
          cell->order = k;
          cell->pushes = pushes;
          cell->groups = (guint) (pushes / GROUP);
          run_cell (cell, size);
          if (!cell->ok) {
            failures++;
            fprintf (stderr, "upstream %s %s %s: %s\n", cell->mode,
                allocs[ai], cell->contender->name, cell->failure);
          }
          printf ("# run %d %-7s %-5s %-12s p50 %8.1f p99 %8.1f p999 %8.1f "
              "ns/push, max backlog %" G_GUINT64_FORMAT ", pusher %.0f ns "
              "wall %.0f ns CPU per push, %" G_GUINT64_FORMAT "+%"
              G_GUINT64_FORMAT " switches%s %s\n", run,
              cell->mode, allocs[ai], cell->contender->name, cell->p50,
              cell->p99, cell->p999, cell->max_backlog,
              cell->wall_ns_per_push, cell->cpu_ns_per_push, cell->vcsw,
              cell->ivcsw,
              cell->ok ? "" : "  FAILED",
              cell->tbq_stats ? cell->tbq_stats : "");
        }

  if ((f = gb_out_open (c, "upstream-runs.csv"))) {
    fprintf (f, "run,mode,alloc,size,contender,order,pushes,groups,"
        "p50_ns,p99_ns,p999_ns,mean_ns,max_backlog,pusher_wall_ns_per_push,"
        "pusher_cpu_ns_per_push,pusher_voluntary_switches,"
        "pusher_involuntary_switches,copied,referenced,load1,ok,"
        "tbqueue_stats\n");
    for (i = 0; i < ncells; i++) {
      Cell *x = &cells[i];

      fprintf (f, "%d,%s,%s,%" G_GSIZE_FORMAT ",%s,%d,%" G_GUINT64_FORMAT
          ",%u,%.2f,%.2f,%.2f,%.2f,%" G_GUINT64_FORMAT ",%.1f,%.1f,%"
          G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
          G_GUINT64_FORMAT ",%.2f,%d,%s\n", x->run, x->mode,
          gb_alloc_name (x->alloc), size, x->contender->name, x->order,
          x->pushes, x->groups, x->p50, x->p99, x->p999, x->mean,
          x->max_backlog, x->wall_ns_per_push, x->cpu_ns_per_push, x->vcsw,
          x->ivcsw, x->copied, x->referenced, x->load1, x->ok,
          x->tbq_stats ? x->tbq_stats : "");
      g_free (x->tbq_stats);
    }
    fclose (f);
  }
  for (mi = 0; modes[mi]; mi++)
    for (k = 0; k < ncont; k++) {
      gboolean ok = TRUE, seen = FALSE;
      const gchar *why = "";

      for (i = 0; i < ncells; i++)
        if (cells[i].contender == cont[k]
            && strcmp (cells[i].mode, modes[mi]) == 0) {
          seen = TRUE;
          if (!cells[i].ok) {
            ok = FALSE;
            why = cells[i].failure;
          }
        }
      if (seen)
        gb_tap (c, ok, "upstream %s %s: every buffer verified%s%s",
            modes[mi], cont[k]->name, ok ? "" : ": ", why);
    }
  g_strfreev (modes);
  g_strfreev (allocs);
  g_free (cells);
  return failures ? 1 : 0;
}

/* ---- callgrind ---- */

/* The measured call: its inclusive instruction count / pushes is the cost
 * of one push on the upstream thread. */
__attribute__((noinline, noclone))
     GstFlowReturn gb_cg_push (GstPad * pad, GstBuffer * buf)
{
  GstFlowReturn ret = gst_pad_push (pad, buf);

  __asm__ volatile ("":::"memory");
  return ret;
}

int
gb_callgrind_main (GbCommon * c, int argc, char **argv)
{
  const gchar *name = "queue", *mode = "up";
  GbAlloc alloc = GB_ALLOC_FRESH;
  gsize size = 32;
  guint64 pushes = 10000, i;
  const GbContender *cont;
  GbLink *l;

  for (i = 1; i < (guint64) argc; i++) {
    if (strcmp (argv[i], "--contender") == 0 && i + 1 < (guint64) argc)
      name = argv[++i];
    else if (strcmp (argv[i], "--mode") == 0 && i + 1 < (guint64) argc)
      mode = argv[++i];
    else if (strcmp (argv[i], "--alloc") == 0 && i + 1 < (guint64) argc)
      alloc = strcmp (argv[++i], "pool") == 0 ? GB_ALLOC_POOL : GB_ALLOC_FRESH;
    else if (strcmp (argv[i], "--size") == 0 && i + 1 < (guint64) argc)
      size = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--pushes") == 0 && i + 1 < (guint64) argc)
      pushes = g_ascii_strtoull (argv[++i], NULL, 10);
    else
      gb_die ("callgrind: unknown option %s", argv[i]);
  }
  cont = gb_contender_find (name);
  if (cont == NULL)
    gb_die ("unknown contender %s", name);
  gb_gst_init ();
  l = gb_link_new (cont, LIMITS, size, alloc, 0);
  for (i = 0; i < 2000; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    gb_fail (c, "callgrind %s: %s", name, l->failure);
  if (strcmp (mode, "stalled") == 0)
    gb_link_stall (l, TRUE);
  for (i = 0; i < pushes; i++) {
    GstBuffer *buf = gb_link_make_buffer (l, 0);

    if (gb_cg_push (l->src, buf) != GST_FLOW_OK)
      gb_fail (c, "callgrind %s: push failed", name);
    l->pushed++;
  }
  gb_link_stall (l, FALSE);
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    gb_fail (c, "callgrind %s: %s", name, l->failure);
  gb_link_free (l);
  printf ("callgrind contender=%s mode=%s alloc=%s size=%" G_GSIZE_FORMAT
      " pushes=%" G_GUINT64_FORMAT " function=gb_cg_push verified=ok\n", name,
      mode, gb_alloc_name (alloc), size, pushes);
  return 0;
}

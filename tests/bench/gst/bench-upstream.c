/* gst-bench upstream: what one gst_pad_push costs the upstream thread.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   The main thread pushes `pushes` buffers of `size` bytes from a
 *   standalone src pad into X, whose src task pushes into our sink pad (it
 *   verifies every buffer and releases it).  Only gst_pad_push() is timed:
 *   TSC before and after each call, summed over groups of `group` pushes;
 *   the statistic is the group average in ns per push, minus the measured
 *   cost of an empty timer pair; p50/p99/p999 over the groups of a run.
 *   Making and filling the buffer (gst_buffer_new_allocate() or a
 *   GstBufferPool acquire) is outside that timed region; make_push_ns is
 *   the mean of make + push, timed per buffer the same way (in copy mode
 *   tbqueue frees the buffer inside the push, which makes the next
 *   allocation cheaper: only make + push compares the whole cost a source
 *   pays per buffer).
 *   Rates: 0 pushes as fast as the thread can; a rate paces the pushes
 *   (each at its deadline: a spin below 100 us periods, clock_nanosleep
 *   above), so that downstream keeping up is not also racing the pusher.
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
 *   new element, `warmup` pushes (drained) before timing, and is drained
 *   and verified after.
 *   Threads: the pushing thread, X's src task (which also runs the
 *   verification) and, for tbqueue, its copy task; nothing is pinned
 *   unless --pin.
 *
 * callgrind SUBCOMMAND: the same pushes through gb_cg_push(), a noinline
 *   function around gst_pad_push, for instruction counts (gst-callgrind.sh
 *   runs valgrind --toggle-collect=gb_cg_push and divides by the pushes).
 *
 * WHAT IT DOES NOT MEAN: the cost of the whole pipeline (see throughput) or
 * of the consumer threads; with `up`, downstream may still fall behind a
 * fast pusher (the backlog column says by how much).
 *
 * OPTIONS  --sizes 32  --rates 0,100000  --pushes N  --group 1000
 *          --warmup 20000  --modes up,stalled  --allocs fresh,pool
 *          --contenders bare,queue,queue2,tbqueue,tbqueue-ref
 *   A rate applies to mode `up` only (stalled pushes are never paced).
 */
#include "gst-bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIMITS "max-size-buffers=0 max-size-bytes=0 max-size-time=0 " \
  "sink-max-bytes=1073741824"
#define DRAIN_TIMEOUT_NS (300 * GST_SECOND)

typedef struct
{
  gint run;
  guint64 rate;
  gsize size;
  const gchar *mode;
  GbAlloc alloc;
  const GbContender *contender;
  gint order;
  guint64 pushes, warmup;
  guint group, groups;
  double p50, p99, p999, mean, make_push;
  guint64 max_backlog;
  double cpu_ns_per_push;       /* pusher thread, timed part */
  guint64 vcsw, ivcsw;          /* pusher thread's context switches */
  guint64 copied, referenced;
  gchar *tbq_stats;
  double load1;
  gboolean ok;
  gchar failure[256];
} Cell;

static double timer_overhead;

/* The timed part: groups of pushes, paced when cell->rate is set. */
static void
timed_pushes (Cell * cell, GbLink * l, double *g)
{
  guint64 period = cell->rate ? 1000000000u / cell->rate : 0;
  gboolean sleep = period >= 100000;
  guint64 i, j, n = 0, t_start = gb_now_ns (), make_push = 0;

  for (i = 0; i < cell->groups; i++) {
    guint64 sum = 0, backlog;

    for (j = 0; j < cell->group; j++, n++) {
      guint64 t_make, t0, t1;
      GstBuffer *buf;

      if (period)
        gb_pace_until (t_start + n * period, sleep);
      t_make = gb_ticks ();
      buf = gb_link_make_buffer (l, 0);
      t0 = gb_ticks ();
      gb_link_push (l, buf);
      t1 = gb_ticks ();
      sum += t1 - t0;
      make_push += t1 - t_make;
    }
    g[i] = gb_ticks_to_ns (sum) / cell->group - timer_overhead;
    backlog = l->pushed - gb_link_received (l);
    if (backlog > cell->max_backlog)
      cell->max_backlog = backlog;
  }
  cell->make_push = gb_ticks_to_ns (make_push) / n - 2 * timer_overhead;
}

static void
run_cell (Cell * cell)
{
  GbLink *l = gb_link_new (cell->contender, LIMITS, cell->size, cell->alloc,
      0);
  gboolean stalled = strcmp (cell->mode, "stalled") == 0;
  double *g = g_new (double, cell->groups);
  guint64 i, v0, iv0, v1, iv1;
  double cpu0;
  gint want;

  cell->load1 = gb_load_average ();
  for (i = 0; i < cell->warmup; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    goto failed;
  if (stalled)
    gb_link_stall (l, TRUE);
  gb_thread_switches (&v0, &iv0);
  cpu0 = gb_thread_cpu_seconds ();
  timed_pushes (cell, l, g);
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
  want = gb_tbqueue_expects_copy (l->elem, cell->size,
      cell->alloc == GB_ALLOC_POOL);
  if (want >= 0 && (want ? cell->copied : cell->referenced) != l->pushed) {
    g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
        " copied, %" G_GUINT64_FORMAT " referenced: not the transfer mode "
        "asked for", cell->copied, cell->referenced);
    goto mismatch;
  }
  cell->ok = TRUE;
  gb_link_free (l);
  g_free (g);
  return;

failed:
  g_snprintf (cell->failure, sizeof cell->failure, "%s", l->failure);
mismatch:
  cell->ok = FALSE;
  gb_link_free (l);
  g_free (g);
}

typedef struct
{
  gchar **sizes, **rates, **modes, **allocs;
  guint64 pushes, warmup;
  guint group;
} Plan;

static void
write_meta (GbCommon * c, const Plan * p, const gchar * sizes_s,
    const gchar * rates_s, const gchar * modes_s, const gchar * allocs_s,
    const GbContender ** cont, gint ncont)
{
  FILE *f = gb_out_open (c, "meta.json");

  gb_meta_begin (f, c);
  fprintf (f, ",\n  \"params\": {\"sizes\": \"%s\", \"rates_hz\": \"%s\", "
      "\"pushes_per_cell\": %" G_GUINT64_FORMAT ", \"group\": %u, "
      "\"warmup_pushes\": %" G_GUINT64_FORMAT ", \"modes\": \"%s\", "
      "\"allocs\": \"%s\", \"limits\": \"%s\", "
      "\"timer_overhead_subtracted_ns\": %.2f},\n", sizes_s, rates_s,
      p->pushes, p->group, p->warmup, modes_s, allocs_s, LIMITS,
      timer_overhead);
  gb_meta_end (f, cont, ncont);
}

static void
write_runs (GbCommon * c, Cell * cells, gint ncells)
{
  FILE *f = gb_out_open (c, "runs.csv");
  gint i;

  fprintf (f, "run,rate_hz,mode,alloc,size,contender,order,pushes,groups,"
      "p50_ns,p99_ns,p999_ns,mean_ns,make_push_ns,max_backlog,"
      "pusher_cpu_ns_per_push,pusher_voluntary_switches,"
      "pusher_involuntary_switches,copied,referenced,load1,ok,"
      "tbqueue_stats\n");
  for (i = 0; i < ncells; i++) {
    Cell *x = &cells[i];

    fprintf (f, "%d,%" G_GUINT64_FORMAT ",%s,%s,%" G_GSIZE_FORMAT ",%s,%d,%"
        G_GUINT64_FORMAT ",%u,%.2f,%.2f,%.2f,%.2f,%.2f,%" G_GUINT64_FORMAT
        ",%.1f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
        ",%" G_GUINT64_FORMAT ",%.2f,%d,%s\n", x->run, x->rate, x->mode,
        gb_alloc_name (x->alloc), x->size, x->contender->name, x->order,
        x->pushes, x->groups, x->p50, x->p99, x->p999, x->mean, x->make_push,
        x->max_backlog, x->cpu_ns_per_push, x->vcsw, x->ivcsw, x->copied,
        x->referenced, x->load1, x->ok, x->tbq_stats ? x->tbq_stats : "");
  }
  fclose (f);
}

/* One TAP line per mode and contender, over every other parameter. */
static gint
report (GbCommon * c, const Plan * p, Cell * cells, gint ncells,
    const GbContender ** cont, gint ncont)
{
  gint mi, k, i, failures = 0;

  for (mi = 0; p->modes[mi]; mi++)
    for (k = 0; k < ncont; k++) {
      gboolean ok = TRUE, seen = FALSE;
      const gchar *why = "";

      for (i = 0; i < ncells; i++)
        if (cells[i].contender == cont[k]
            && strcmp (cells[i].mode, p->modes[mi]) == 0) {
          seen = TRUE;
          if (!cells[i].ok) {
            ok = FALSE;
            why = cells[i].failure;
            failures++;
          }
        }
      if (seen)
        gb_tap (c, ok, "%s %s %s: every buffer verified%s%s", c->name,
            p->modes[mi], cont[k]->name, ok ? "" : ": ", why);
    }
  return failures;
}

static void
print_cell (const Cell * x)
{
  printf ("# run %d %6" G_GUINT64_FORMAT " Hz %8" G_GSIZE_FORMAT " B %-7s "
      "%-5s %-12s p50 %9.1f p99 %9.1f ns/push, make+push %9.1f ns, max "
      "backlog %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
      " switches%s %s\n", x->run, x->rate, x->size, x->mode,
      gb_alloc_name (x->alloc), x->contender->name, x->p50, x->p99,
      x->make_push, x->max_backlog, x->vcsw, x->ivcsw,
      x->ok ? "" : "  FAILED", x->tbq_stats ? x->tbq_stats : "");
}

/* Every run visits every rate, size, mode and allocation; the contender
 * order rotates.  Returns the number of cells. */
static gint
run_all (GbCommon * c, const Plan * p, const GbContender ** cont, gint ncont,
    Cell * cells)
{
  gint run, ri, si, mi, ai, k, n = 0;

  for (run = 0; run < c->runs; run++)
    for (ri = 0; p->rates[ri]; ri++)
      for (si = 0; p->sizes[si]; si++)
        for (mi = 0; p->modes[mi]; mi++)
          for (ai = 0; p->allocs[ai]; ai++)
            for (k = 0; k < ncont; k++) {
              Cell *cell = &cells[n];
              const GbContender *ck =
                  cont[(k + run + ri + si + mi + ai) % ncont];
              gboolean stalled = strcmp (p->modes[mi], "stalled") == 0;
              guint64 rate = g_ascii_strtoull (p->rates[ri], NULL, 10);

              /* Without a thread boundary a stalled consumer stalls the
               * push; stalled pushes are not paced. */
              if (stalled && (rate || ck->factory == NULL
                      || strcmp (ck->factory, "identity") == 0))
                continue;
              n++;
              cell->run = run;
              cell->rate = rate;
              cell->size = g_ascii_strtoull (p->sizes[si], NULL, 10);
              cell->mode = p->modes[mi];
              cell->alloc = strcmp (p->allocs[ai], "pool") == 0 ?
                  GB_ALLOC_POOL : GB_ALLOC_FRESH;
              cell->contender = ck;
              cell->order = k;
              cell->pushes = p->pushes;
              cell->warmup = p->warmup;
              cell->group = p->group;
              cell->groups = (guint) (p->pushes / p->group);
              run_cell (cell);
              if (!cell->ok)
                fprintf (stderr, "%s %s %s %s: %s\n", c->name, cell->mode,
                    p->allocs[ai], ck->name, cell->failure);
              print_cell (cell);
            }
  return n;
}

int
gb_upstream_main (GbCommon * c, int argc, char **argv)
{
  const gchar *names = "bare,queue,queue2,tbqueue,tbqueue-ref";
  const gchar *modes_s = "up,stalled", *allocs_s = "fresh,pool";
  const gchar *sizes_s = "32", *rates_s = "0,100000";
  Plan p = { NULL, NULL, NULL, NULL, 0, 20000, 1000 };
  const GbContender *cont[16];
  gint ncont, i, ncells, failures;
  Cell *cells;

  for (i = 1; i < argc; i++) {
    if ((strcmp (argv[i], "--sizes") == 0 || strcmp (argv[i], "--size") == 0)
        && i + 1 < argc)
      sizes_s = argv[++i];
    else if (strcmp (argv[i], "--rates") == 0 && i + 1 < argc)
      rates_s = argv[++i];
    else if (strcmp (argv[i], "--pushes") == 0 && i + 1 < argc)
      p.pushes = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--group") == 0 && i + 1 < argc)
      p.group = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--warmup") == 0 && i + 1 < argc)
      p.warmup = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--modes") == 0 && i + 1 < argc)
      modes_s = argv[++i];
    else if (strcmp (argv[i], "--allocs") == 0 && i + 1 < argc)
      allocs_s = argv[++i];
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else
      gb_die ("upstream: unknown option %s", argv[i]);
  }
  if (p.group == 0)
    gb_die ("--group: at least 1");
  if (p.pushes == 0)
    p.pushes = c->smoke ? 5 * p.group : 300 * p.group;
  p.pushes = MAX (p.group, p.pushes / p.group * p.group);
  if (c->smoke)
    p.warmup = MIN (p.warmup, 1000);
  p.sizes = g_strsplit (sizes_s, ",", -1);
  for (i = 0; p.sizes[i]; i++) {
    guint64 sz = g_ascii_strtoull (p.sizes[i], NULL, 10);

    if (sz < 16 || sz % 8)
      gb_die ("--sizes: multiples of 8, at least 16");
  }
  gb_gst_init ();
  timer_overhead = gb_timer_overhead_ns ();
  gb_precise_sleeps ();
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  p.rates = g_strsplit (rates_s, ",", -1);
  p.modes = g_strsplit (modes_s, ",", -1);
  p.allocs = g_strsplit (allocs_s, ",", -1);
  cells = g_new0 (Cell, c->runs * g_strv_length (p.rates)
      * g_strv_length (p.sizes) * g_strv_length (p.modes)
      * g_strv_length (p.allocs) * ncont);

  write_meta (c, &p, sizes_s, rates_s, modes_s, allocs_s, cont, ncont);
  ncells = run_all (c, &p, cont, ncont, cells);
  write_runs (c, cells, ncells);
  failures = report (c, &p, cells, ncells, cont, ncont);
  for (i = 0; i < ncells; i++)
    g_free (cells[i].tbq_stats);
  g_strfreev (p.sizes);
  g_strfreev (p.rates);
  g_strfreev (p.modes);
  g_strfreev (p.allocs);
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

/* gst-bench latency: from gst_pad_push upstream to the downstream chain.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   The main thread pushes 32-byte buffers into X at a paced rate (100 Hz,
 *   1 kHz, 10 kHz, 100 kHz) or unpaced (as fast as it can).  Each buffer
 *   carries the TSC read just before it is pushed; our sink pad's chain
 *   function reads the TSC on entry and verifies the buffer: latency =
 *   chain entry - push.  Pacing as a source would: for periods of 100 us
 *   and more the pusher sleeps until the next deadline (clock_nanosleep,
 *   absolute, 1 ns timer slack); for shorter ones it spins.  A pusher that
 *   falls behind (blocked by a full queue) pushes the late buffers at once.
 *   X uses its default properties (queue: 200 buffers / 10 MB / 1 s;
 *   tbqueue: the same level limits) apart from the variants' own:
 *   tbqueue (its default max-coalesce-latency: woken per buffer while
 *   buffers are sparse, napping within the bound while they are dense)
 *   and tbqueue-nocoalesce (max-coalesce-latency=0: woken per buffer).
 *   Contenders take turns, in an order that rotates from run to run: one
 *   segment of `samples` buffers each (plus 2 %, at least 10, of warm-up
 *   buffers not counted), a new element per segment.
 *   Reported per run: p50/p99/p999/max of the per-buffer latencies, the
 *   rate achieved; latency-quantiles.csv has the distribution.
 *
 * WHAT IT DOES NOT MEAN: the consumer does nothing but verify; a slower
 * consumer makes unpaced latency a matter of queue depth.  Wake-up
 * latency on a shared 2-vCPU virtual machine dominates the paced rates.
 *
 * OPTIONS  --rates 100,1000,10000,100000,0  (0 = unpaced)
 *          --samples 100:500,1000:5000,10000:20000,100000:100000,0:200000
 *          --contenders queue,tbqueue,tbqueue-nocoalesce
 */
#include "gst-bench.h"

#include <stdlib.h>
#include <string.h>

#define PAYLOAD 32
#define DRAIN_TIMEOUT_NS (120 * GST_SECOND)

static const double quantiles[] = { 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9 };

static guint64
samples_for (const gchar * spec, guint64 rate, gboolean smoke)
{
  gchar **v = g_strsplit (spec, ",", -1);
  guint64 n = 0;
  guint i;

  for (i = 0; v[i]; i++) {
    gchar *colon = strchr (v[i], ':');

    if (colon && g_ascii_strtoull (v[i], NULL, 10) == rate)
      n = g_ascii_strtoull (colon + 1, NULL, 10);
  }
  g_strfreev (v);
  if (n == 0)
    n = rate == 0 ? 200000 : MAX (300, rate * 2);
  if (smoke)
    n = rate == 0 ? 2000 : MAX (5, MIN (n / 100, 1000));
  return n;
}

typedef struct
{
  gint run;
  guint64 rate;
  const GbContender *contender;
  gint order;
  guint64 samples;
  double achieved, p50, p99, p999, mean, max;
  double q[G_N_ELEMENTS (quantiles)];
  double load1;
  gchar *stats;
  gboolean ok;
  gchar failure[256];
} Cell;

static void
run_cell (Cell * cell)
{
  GbLink *l = gb_link_new (cell->contender, "", PAYLOAD, GB_ALLOC_FRESH, 0);
  guint64 warm = MAX (10, cell->samples / 50), total = warm + cell->samples;
  guint64 period = cell->rate ? 1000000000u / cell->rate : 0;
  gboolean sleep = period >= 100000;
  GbLatency lat = { g_new0 (double, cell->samples), warm, cell->samples };
  guint64 t0, t_end, i;
  gsize qi;

  l->consume = gb_record_latency;
  l->consume_data = &lat;
  cell->load1 = gb_load_average ();
  t0 = gb_now_ns ();
  for (i = 0; i < total; i++) {
    if (period)
      gb_pace_until (t0 + i * period, sleep);
    gb_link_push (l, gb_link_make_stamped_buffer (l));
  }
  t_end = gb_now_ns ();
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS)) {
    cell->ok = FALSE;
    g_snprintf (cell->failure, sizeof cell->failure, "%s", l->failure);
  } else {
    cell->ok = TRUE;
    cell->achieved = total > 1 ? (double) (total - 1) * 1e9 / (t_end - t0) : 0;
    cell->mean = gb_mean (lat.lat_ns, lat.n) / 1e3;
    for (qi = 0; qi < G_N_ELEMENTS (quantiles); qi++)
      cell->q[qi] = gb_percentile (lat.lat_ns, lat.n, quantiles[qi]) / 1e3;
    gb_percentiles (lat.lat_ns, lat.n, &cell->p50, &cell->p99, &cell->p999);
    cell->p50 /= 1e3;
    cell->p99 /= 1e3;
    cell->p999 /= 1e3;
    cell->max = lat.lat_ns[lat.n - 1] / 1e3;
  }
  cell->stats = gb_tbqueue_stats_brief (l->elem);
  gb_link_free (l);
  g_free (lat.lat_ns);
}

int
gb_latency_main (GbCommon * c, int argc, char **argv)
{
  const gchar *rates_s = "100,1000,10000,100000,0";
  const gchar *samples_s =
      "100:500,1000:5000,10000:20000,100000:100000,0:200000";
  const gchar *names = "queue,tbqueue,tbqueue-nocoalesce";
  const GbContender *cont[16];
  gint ncont, i, k, run, ri, ncells = 0, failures = 0;
  gchar **rates;
  Cell *cells;
  FILE *f;
  gsize qi;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--rates") == 0 && i + 1 < argc)
      rates_s = argv[++i];
    else if (strcmp (argv[i], "--samples") == 0 && i + 1 < argc)
      samples_s = argv[++i];
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else
      gb_die ("latency: unknown option %s", argv[i]);
  }
  gb_gst_init ();
  gb_precise_sleeps ();
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  rates = g_strsplit (rates_s, ",", -1);
  cells = g_new0 (Cell, c->runs * g_strv_length (rates) * ncont);

  if ((f = gb_out_open (c, "meta.json"))) {
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"rates_hz\": \"%s\", "
        "\"samples\": {", c->runs, rates_s);
    for (ri = 0; rates[ri]; ri++)
      fprintf (f, "%s\"%s\": %" G_GUINT64_FORMAT, ri ? ", " : "", rates[ri],
          samples_for (samples_s, g_ascii_strtoull (rates[ri], NULL, 10),
              c->smoke));
    fprintf (f, "}, \"payload_bytes\": %d, \"pacing\": \"clock_nanosleep "
        "(absolute, 1 ns slack) for periods >= 100 us, spin below\", "
        "\"limits\": \"element defaults\", \"alloc\": \"fresh\", "
        "\"pinned\": %s},\n", PAYLOAD,
        gb_pinned ? "true" : "false");
    gb_meta_end (f, cont, ncont);
  }

  for (run = 0; run < c->runs; run++)
    for (ri = 0; rates[ri]; ri++)
      for (k = 0; k < ncont; k++) {
        Cell *cell = &cells[ncells++];

        cell->run = run;
        cell->rate = g_ascii_strtoull (rates[ri], NULL, 10);
        cell->contender = cont[(k + run + ri) % ncont];
        cell->order = k;
        cell->samples = samples_for (samples_s, cell->rate, c->smoke);
        run_cell (cell);
        if (!cell->ok) {
          failures++;
          fprintf (stderr, "latency %s Hz %s: %s\n", rates[ri],
              cell->contender->name, cell->failure);
        }
        printf ("# run %d %7s Hz %-20s p50 %8.1f p99 %8.1f p999 %8.1f us, "
            "achieved %.0f Hz%s\n", run, cell->rate ? rates[ri] : "unpaced",
            cell->contender->name, cell->p50, cell->p99, cell->p999,
            cell->achieved, cell->ok ? "" : "  FAILED");
      }

  if ((f = gb_out_open (c, "runs.csv"))) {
    fprintf (f, "run,rate_hz,contender,order,samples,achieved_hz,p50_us,"
        "p99_us,p999_us,mean_us,max_us,load1,ok,tbqueue_stats\n");
    for (i = 0; i < ncells; i++) {
      Cell *x = &cells[i];

      fprintf (f, "%d,%" G_GUINT64_FORMAT ",%s,%d,%" G_GUINT64_FORMAT
          ",%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%d,%s\n", x->run, x->rate,
          x->contender->name, x->order, x->samples, x->achieved, x->p50,
          x->p99, x->p999, x->mean, x->max, x->load1, x->ok,
          x->stats ? x->stats : "");
    }
    fclose (f);
  }
  if ((f = gb_out_open (c, "quantiles.csv"))) {
    fprintf (f, "run,rate_hz,contender,quantile,latency_us\n");
    for (i = 0; i < ncells; i++)
      for (qi = 0; qi < G_N_ELEMENTS (quantiles); qi++)
        fprintf (f, "%d,%" G_GUINT64_FORMAT ",%s,%g,%.3f\n", cells[i].run,
            cells[i].rate, cells[i].contender->name, quantiles[qi],
            cells[i].q[qi]);
    fclose (f);
  }
  for (k = 0; k < ncont; k++) {
    gboolean ok = TRUE;
    const gchar *why = "";

    for (i = 0; i < ncells; i++)
      if (cells[i].contender == cont[k] && !cells[i].ok) {
        ok = FALSE;
        why = cells[i].failure;
      }
    gb_tap (c, ok, "latency %s: every buffer verified at every rate%s%s",
        cont[k]->name, ok ? "" : ": ", why);
  }
  for (i = 0; i < ncells; i++)
    g_free (cells[i].stats);
  g_strfreev (rates);
  g_free (cells);
  return failures ? 1 : 0;
}

/* gst-bench scenario: a fixed-rate load table, queue and tbqueue side by side.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   For each target rate (100 to 1,000,000 buffers/s) a new element with
 *   its default properties is fed 32-byte buffers (gst_buffer_new_allocate)
 *   by the main thread, paced as in the latency benchmark (sleeping for
 *   periods of 100 us and more, spinning below), for `duration` seconds
 *   (at least 300 buffers); our sink pad verifies every buffer and records
 *   its latency (push to chain entry).  Per rate: target, achieved rate
 *   (buffers / time from the first push to the last), delivered = buffers
 *   verified downstream in order / pushed (100 % unless something was
 *   lost), process CPU % (getrusage, all threads, from the first push until
 *   the last buffer is verified; 100 % = one CPU) and the same CPU time per
 *   buffer pushed (cpu_us_per_buffer), the pushing thread's own
 *   CPU %, the CPU time per buffer of every other thread
 *   (others_cpu_us_per_buffer: the queue's threads and downstream; the
 *   pusher's spinning at 100 kHz and more is left out), p50/p99 latency,
 *   peak RSS (VmHWM, reset through
 *   /proc/self/clear_refs before each rate) and its rise over the RSS at
 *   the start of the rate.
 *   Each contender runs in a process of its own (RSS and CPU are per
 *   process), rates in increasing order; processes alternate between
 *   contenders, the order rotating from run to run.
 *
 * WHAT IT DOES NOT MEAN: with spinning pacing (>= 100 kHz) the pusher uses
 * a whole CPU whatever the queue; the consumer only verifies.
 *
 * OPTIONS  --rates 100,1000,10000,100000,1000000  --duration-ms 2000
 *          --contenders queue,tbqueue,tbqueue-nocoalesce
 */
#include "gst-bench.h"

#include <stdlib.h>
#include <string.h>

#define PAYLOAD 32
#define DRAIN_TIMEOUT_NS (120 * GST_SECOND)

/* One contender, every rate; prints one "row,..." line per rate. */
static int
child_main (GbCommon * c, const gchar * name, const gchar * rates_s,
    guint duration_ms)
{
  const GbContender *cont = gb_contender_find (name);
  gchar **rates;
  gint ri, failures = 0;

  if (cont == NULL)
    gb_die ("unknown contender %s", name);
  gb_gst_init ();
  gb_precise_sleeps ();
  rates = g_strsplit (rates_s, ",", -1);
  for (ri = 0; rates[ri]; ri++) {
    guint64 rate = g_ascii_strtoull (rates[ri], NULL, 10);
    guint64 n = MAX (c->smoke ? 10 : 300, rate * duration_ms / 1000);
    guint64 period = 1000000000u / rate, i, t0, t_last, t_end;
    gboolean sleep = period >= 100000;
    GbLatency lat = { g_new0 (double, n), 0, n };
    GbLink *l = gb_link_new (cont, "", PAYLOAD, GB_ALLOC_FRESH, 0);
    double cpu0, pcpu0, cpu1, pcpu1, p50, p99, p999;
    guint64 rss0, peak;
    gboolean ok;

    l->consume = gb_record_latency;
    l->consume_data = &lat;
    gb_rss_reset_peak ();
    rss0 = gb_rss_bytes ();
    cpu0 = gb_cpu_seconds ();
    pcpu0 = gb_thread_cpu_seconds ();
    t0 = gb_now_ns ();
    for (i = 0; i < n; i++) {
      gb_pace_until (t0 + i * period, sleep);
      gb_link_push (l, gb_link_make_stamped_buffer (l));
    }
    t_last = gb_now_ns ();
    pcpu1 = gb_thread_cpu_seconds ();
    ok = gb_link_drain (l, DRAIN_TIMEOUT_NS);
    t_end = gb_now_ns ();
    cpu1 = gb_cpu_seconds ();
    peak = gb_rss_peak_bytes ();
    if (!ok) {
      failures++;
      fprintf (stderr, "scenario %s %s Hz: %s\n", name, rates[ri], l->failure);
    }
    gb_percentiles (lat.lat_ns, n, &p50, &p99, &p999);
    printf ("row,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT ",%.1f,%.4f,%.1f,%.4f,%.1f,%.3f,%.3f,%.3f,%"
        G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%.4f\n", rate, n,
        ok ? gb_link_received (l) : 0,
        (double) (n - 1) * 1e9 / (double) (t_last - t0),
        (t_end - t0) / 1e9, (cpu1 - cpu0) / ((t_end - t0) / 1e9) * 100,
        (cpu1 - cpu0) / (double) n * 1e6,
        (pcpu1 - pcpu0) / ((t_last - t0) / 1e9) * 100, p50 / 1e3,
        p99 / 1e3, p999 / 1e3, rss0, peak, ok,
        ((cpu1 - cpu0) - (pcpu1 - pcpu0)) / (double) n * 1e6);
    gb_link_free (l);
    g_free (lat.lat_ns);
  }
  g_strfreev (rates);
  return failures ? 1 : 0;
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  guint64 rate, pushed, delivered;
  double achieved, seconds, cpu_pct, cpu_us, pusher_cpu_pct, p50, p99, p999;
  double others_cpu_us;         /* CPU per buffer of every thread but the
                                 * pushing one */
  guint64 rss0, peak;
  gboolean ok;
} Row;

int
gb_scenario_main (GbCommon * c, int argc, char **argv)
{
  const gchar *rates_s = "100,1000,10000,100000,1000000";
  const gchar *names = "queue,tbqueue,tbqueue-nocoalesce";
  const gchar *child = NULL;
  guint duration_ms = 0;
  const GbContender *cont[16];
  gint ncont, i, k, run, nrows = 0, failures = 0;
  Row *rows;
  FILE *f;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--rates") == 0 && i + 1 < argc)
      rates_s = argv[++i];
    else if (strcmp (argv[i], "--duration-ms") == 0 && i + 1 < argc)
      duration_ms = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else if (strcmp (argv[i], "--child") == 0 && i + 1 < argc)
      child = argv[++i];
    else
      gb_die ("scenario: unknown option %s", argv[i]);
  }
  if (duration_ms == 0)
    duration_ms = c->smoke ? 20 : 2000;
  if (child)
    return child_main (c, child, rates_s, duration_ms);


  gst_init (NULL, NULL);
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  rows = g_new0 (Row, c->runs * ncont * 16);
  if ((f = gb_out_open (c, "meta.json"))) {
    gb_gst_init ();
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"rates_hz\": \"%s\", "
        "\"duration_ms\": %u, \"min_buffers\": 300, \"payload_bytes\": %d, "
        "\"limits\": \"element defaults\", \"alloc\": \"fresh\", "
        "\"pacing\": \"clock_nanosleep for periods >= 100 us, spin below\", "
        "\"process_per_contender\": true},\n", c->runs,
        rates_s, duration_ms, PAYLOAD);
    gb_meta_end (f, cont, ncont);
  }

  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      const GbContender *ck = cont[(k + run) % ncont];
      gchar *dur = g_strdup_printf ("%u", duration_ms);
      const gchar *args[] = { gb_self, "scenario", "--child", ck->name,
        "--rates", rates_s, "--duration-ms", dur,
        c->smoke ? "--smoke" : NULL, NULL
      };
      gchar *what = g_strdup_printf ("scenario %s", ck->name);
      gchar **lines = gb_run_child_rows (args, what, &failures);
      guint li;

      for (li = 0; lines[li]; li++) {
        Row *r = &rows[nrows];
        gint okv = 0;

        if (sscanf (lines[li], "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                ",%" G_GUINT64_FORMAT ",%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%"
                G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%lf", &r->rate,
                &r->pushed, &r->delivered, &r->achieved, &r->seconds,
                &r->cpu_pct, &r->cpu_us, &r->pusher_cpu_pct, &r->p50,
                &r->p99, &r->p999, &r->rss0, &r->peak, &okv,
                &r->others_cpu_us) != 15)
          continue;
        r->run = run;
        r->contender = ck;
        r->order = k;
        r->ok = okv && r->delivered == r->pushed;
        if (!r->ok)
          failures++;
        printf ("# run %d %-8s %8" G_GUINT64_FORMAT " Hz: achieved %9.0f, "
            "delivered %6.2f %%, CPU %5.1f %% (pusher %5.1f %%), p50 %8.1f "
            "p99 %8.1f us, peak RSS %.1f MB (+%.1f)\n", run, ck->name,
            r->rate, r->achieved, 100.0 * r->delivered / r->pushed,
            r->cpu_pct, r->pusher_cpu_pct, r->p50, r->p99, r->peak / 1e6,
            ((double) r->peak - (double) r->rss0) / 1e6);
        if (nrows + 1 < c->runs * ncont * 16)
          nrows++;
      }
      g_strfreev (lines);
      g_free (what);
      g_free (dur);
    }

  if ((f = gb_out_open (c, "runs.csv"))) {
    fprintf (f, "run,contender,order,target_hz,pushed,delivered,achieved_hz,"
        "delivered_pct,seconds,cpu_pct,cpu_us_per_buffer,pusher_cpu_pct,"
        "p50_us,p99_us,p999_us,rss_start_bytes,peak_rss_bytes,ok,"
        "others_cpu_us_per_buffer\n");
    for (i = 0; i < nrows; i++) {
      Row *r = &rows[i];

      fprintf (f, "%d,%s,%d,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
          G_GUINT64_FORMAT ",%.1f,%.3f,%.4f,%.1f,%.4f,%.1f,%.3f,%.3f,%.3f,%"
          G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%.4f\n", r->run,
          r->contender->name, r->order, r->rate, r->pushed, r->delivered,
          r->achieved, 100.0 * r->delivered / r->pushed, r->seconds,
          r->cpu_pct, r->cpu_us, r->pusher_cpu_pct, r->p50, r->p99, r->p999,
          r->rss0, r->peak, r->ok, r->others_cpu_us);
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
    gb_tap (c, ok && seen && failures == 0, "scenario %s: every rate ran, "
        "every buffer verified", cont[k]->name);
  }
  g_free (rows);
  return failures ? 1 : 0;
}

/* gst-bench memory: RSS per queued buffer, and RSS after the backlog drains.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   Each contender in a process of its own: a new element with no level
 *   limits (max-size-buffers/bytes/time=0; tbqueue sink-max-bytes=1 GiB,
 *   its default 16 idle blocks), 1000 warm-up buffers pushed and drained,
 *   then downstream stalls (our sink pad's chain function blocks) and the
 *   main thread pushes 1,000,000 freshly allocated 32-byte buffers.
 *     bytes per queued buffer = (RSS with the backlog - RSS before) / N
 *   Then downstream is released; the backlog drains (every buffer
 *   verified) and the process idles for 3 s.  A sampler thread reads RSS
 *   (/proc/self/statm) every 10 ms from before the pushes to the end, for
 *   the RSS-over-time plot (memory-rss.csv, the first run only): whether
 *   the memory of a drained backlog goes
 *   back to the system (tbqueue gives sink blocks beyond `idle-blocks`
 *   back; queue's buffers go back to malloc).
 *   Processes alternate between contenders, in an order that rotates from
 *   run to run.
 *
 * WHAT IT DOES NOT MEAN: RSS counts pages touched, whoever allocated them;
 * other allocators or buffer pools upstream change the picture.
 *
 * OPTIONS  --buffers 1000000  --idle-ms 3000
 *          --contenders queue,queue2,tbqueue,tbqueue-ref
 */
#include "gst-bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAYLOAD 32
#define LIMITS "max-size-buffers=0 max-size-bytes=0 max-size-time=0 " \
  "sink-max-bytes=1073741824"
#define SAMPLE_MS 10
#define DRAIN_TIMEOUT_NS (300 * GST_SECOND)

typedef struct
{
  guint64 t0;
  atomic_int stop;
  guint n, cap;
  guint64 *t_ms, *rss;
  atomic_int phase;             /* 0 before, 1 pushing, 2 backlog, 3 drain, 4 idle */
  guint8 *phases;
} Sampler;

static guint64
statm_rss (void)
{
  static long page;
  FILE *f = fopen ("/proc/self/statm", "r");
  unsigned long size = 0, res = 0;

  if (page == 0)
    page = sysconf (_SC_PAGESIZE);
  if (f) {
    if (fscanf (f, "%lu %lu", &size, &res) != 2)
      res = 0;
    fclose (f);
  }
  return (guint64) (res * (unsigned long) page);
}

static gpointer
sampler_thread (gpointer data)
{
  Sampler *s = data;

  while (!atomic_load (&s->stop) && s->n < s->cap) {
    s->t_ms[s->n] = (gb_now_ns () - s->t0) / 1000000u;
    s->rss[s->n] = statm_rss ();
    s->phases[s->n] = (guint8) atomic_load (&s->phase);
    s->n++;
    g_usleep (SAMPLE_MS * 1000);
  }
  return NULL;
}

static int
child_main (GbCommon * c, const gchar * name, guint64 buffers, guint idle_ms)
{
  const GbContender *cont = gb_contender_find (name);
  Sampler s = { 0 };
  GThread *th;
  GbLink *l;
  guint64 i, rss0, rss_backlog, rss_drained, rss_final, t_push0, t_push1,
      t_drain1;
  guint k;
  gchar *st;

  if (cont == NULL)
    gb_die ("unknown contender %s", name);
  gb_gst_init ();
  l = gb_link_new (cont, LIMITS, PAYLOAD, GB_ALLOC_FRESH, 0);
  for (i = 0; i < 1000; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    gb_fail (c, "memory %s: %s", name, l->failure);
  s.cap = 100000;
  s.t_ms = g_new0 (guint64, s.cap);
  s.rss = g_new0 (guint64, s.cap);
  s.phases = g_new0 (guint8, s.cap);
  s.t0 = gb_now_ns ();
  g_usleep (50 * 1000);
  rss0 = statm_rss ();
  th = g_thread_new ("rss-sampler", sampler_thread, &s);
  g_usleep (100 * 1000);

  gb_link_stall (l, TRUE);
  atomic_store (&s.phase, 1);
  t_push0 = gb_now_ns ();
  for (i = 0; i < buffers; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  t_push1 = gb_now_ns ();
  atomic_store (&s.phase, 2);
  /* Let a copy task move what it still holds. */
  g_usleep (200 * 1000);
  rss_backlog = statm_rss ();
  st = gb_tbqueue_stats_brief (l->elem);
  atomic_store (&s.phase, 3);
  gb_link_stall (l, FALSE);
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    gb_fail (c, "memory %s: %s", name, l->failure);
  t_drain1 = gb_now_ns ();
  rss_drained = statm_rss ();
  atomic_store (&s.phase, 4);
  g_usleep ((gulong) idle_ms * 1000);
  rss_final = statm_rss ();
  atomic_store (&s.stop, 1);
  g_thread_join (th);

  printf ("result,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
      G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
      ",%.4f,%.4f,%s\n", buffers, rss0, rss_backlog, rss_drained, rss_final,
      (t_push1 - t_push0) / 1e9, (t_drain1 - t_push1) / 1e9, st);
  for (k = 0; k < s.n; k++)
    printf ("sample,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%u\n",
        s.t_ms[k], s.rss[k], s.phases[k]);
  g_free (st);
  gb_link_free (l);
  g_free (s.t_ms);
  g_free (s.rss);
  g_free (s.phases);
  return 0;
}

int
gb_memory_main (GbCommon * c, int argc, char **argv)
{
  const gchar *names = "queue,queue2,tbqueue,tbqueue-ref";
  const gchar *child = NULL;
  guint64 buffers = 0;
  guint idle_ms = 0;
  const GbContender *cont[16];
  gint ncont, i, k, run, failures = 0;
  FILE *f, *fr = NULL, *fs = NULL;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--buffers") == 0 && i + 1 < argc)
      buffers = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--idle-ms") == 0 && i + 1 < argc)
      idle_ms = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else if (strcmp (argv[i], "--child") == 0 && i + 1 < argc)
      child = argv[++i];
    else
      gb_die ("memory: unknown option %s", argv[i]);
  }
  if (buffers == 0)
    buffers = c->smoke ? 20000 : 1000000;
  if (idle_ms == 0)
    idle_ms = c->smoke ? 100 : 3000;
  if (child)
    return child_main (c, child, buffers, idle_ms);

  gst_init (NULL, NULL);
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  if ((f = gb_out_open (c, "meta.json"))) {
    gb_gst_init ();
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"buffers\": %"
        G_GUINT64_FORMAT ", \"payload_bytes\": %d, \"limits\": \"%s\", "
        "\"alloc\": \"fresh\", \"idle_ms\": %u, \"sample_ms\": %d, "
        "\"process_per_contender\": true},\n", c->runs,
        buffers, PAYLOAD, LIMITS, idle_ms, SAMPLE_MS);
    gb_meta_end (f, cont, ncont);
  }
  if ((fr = gb_out_open (c, "runs.csv")))
    fprintf (fr, "run,contender,order,buffers,rss_before,rss_backlog,"
        "rss_drained,rss_after_idle,bytes_per_buffer,push_s,drain_s,"
        "tbqueue_stats\n");
  if ((fs = gb_out_open (c, "rss.csv")))
    fprintf (fs, "run,contender,t_ms,rss_bytes,phase\n");

  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      const GbContender *ck = cont[(k + run) % ncont];
      gchar *nb = g_strdup_printf ("%" G_GUINT64_FORMAT, buffers);
      gchar *im = g_strdup_printf ("%u", idle_ms);
      const gchar *args[] = { gb_self, "memory", "--child", ck->name,
        "--buffers", nb, "--idle-ms", im, NULL
      };
      gint status;
      gchar *out = gb_run_child (args, &status), **lines;
      gboolean ok = g_spawn_check_wait_status (status, NULL), got = FALSE;
      guint li;

      lines = g_strsplit (out, "\n", -1);
      for (li = 0; lines[li]; li++) {
        gchar **v = g_strsplit (lines[li], ",", -1);

        if (g_strcmp0 (v[0], "result") == 0 && g_strv_length (v) >= 8) {
          guint64 n = g_ascii_strtoull (v[1], NULL, 10);
          guint64 r0 = g_ascii_strtoull (v[2], NULL, 10);
          guint64 rb = g_ascii_strtoull (v[3], NULL, 10);
          guint64 rd = g_ascii_strtoull (v[4], NULL, 10);
          guint64 rf = g_ascii_strtoull (v[5], NULL, 10);
          double bpb = ((double) rb - (double) r0) / (double) n;

          got = TRUE;
          printf ("# run %d %-12s %.1f bytes per queued buffer; RSS before "
              "%.1f MB, backlog %.1f MB, drained %.1f MB, after %s ms idle "
              "%.1f MB %s\n", run, ck->name, bpb, r0 / 1e6, rb / 1e6,
              rd / 1e6, im, rf / 1e6, v[8] ? v[8] : "");
          if (fr)
            fprintf (fr, "%d,%s,%d,%s,%s,%s,%s,%s,%.2f,%s,%s,%s\n", run,
                ck->name, k, v[1], v[2], v[3], v[4], v[5], bpb, v[6], v[7],
                v[8] ? v[8] : "");
        } else if (g_strcmp0 (v[0], "sample") == 0 && g_strv_length (v) >= 4
            && fs && run == 0) {
          fprintf (fs, "%d,%s,%s,%s,%s\n", run, ck->name, v[1], v[2], v[3]);
        }
        g_strfreev (v);
      }
      if (!ok || !got)
        failures++;
      gb_tap (c, ok && got, "memory %s: backlog of %s buffers queued, "
          "drained and verified", ck->name, nb);
      g_strfreev (lines);
      g_free (out);
      g_free (nb);
      g_free (im);
    }
  if (fr)
    fclose (fr);
  if (fs)
    fclose (fs);
  return failures ? 1 : 0;
}

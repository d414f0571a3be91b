/* gst-bench burst: the pushing thread's own work right after a burst.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED (the seed's hot-path-after-burst experiment through
 * GStreamer pads)
 *   The main thread owns a 48 KiB table of 64-byte nodes linked in one
 *   random cycle; a query starts at a random node and updates 8 nodes along
 *   the links (gb_table_query()).  Every contender X (each its own element
 *   and pads, all in PLAYING for the whole size) is fed from a standalone
 *   src pad; downstream, our sink pad's chain function verifies every
 *   buffer (sequence number, offset, all 32 bytes) and spins 64 rounds of
 *   a multiply-add per buffer, so a backlog builds during a burst.  X is
 *   identity (no thread boundary: the consumer's work runs in the pushing
 *   thread; the method's sanity check), queue, queue2, tbqueue (copy at
 *   32 B) or tbqueue-ref, with no limits (max-size-*=0; tbqueue
 *   sink-max-bytes=1 GiB).
 *   A window, for one contender:
 *     post     warm the table (touch every node, then 512 queries), push a
 *              burst of B bytes of 32-byte buffers (alloc or pool acquire,
 *              fill, gst_pad_push; its duration D is recorded), then time 64
 *              queries in 4 groups of 16;
 *     control  right after: warm, spin for D (pause loop, no memory
 *              touched), time 64 queries in 4 groups of 16: what the
 *              machine alone does to the table in that time, while the
 *              consumer threads still work off the backlog;
 *     drain    wait (untimed) until every buffer was verified downstream.
 *   Every round of windows starts with a baseline (warm, then 4 groups of
 *   16 queries at once) and then runs every contender's window in an order
 *   that rotates from round to round.  Buffers are made fresh
 *   (gst_buffer_new_allocate) or taken from a GstBufferPool of the link
 *   (unbounded, as a source's pool grows when a queue holds its buffers).
 *   Reported per run: p50/p99/p999 of the group averages (ns/query) for
 *   post, control and baseline; post/baseline; post/control ("excess": the
 *   queue's own effect beyond what the same wall time does); push cost
 *   during the burst; the backlog left when the burst ends.
 *
 * WHAT IT DOES NOT MEAN: the absolute ns/query depends on this machine's
 * caches and on whatever else runs (see the control); it is not a latency
 * of the queue itself.  The consumer is slower than the pusher on purpose.
 *
 * OPTIONS
 *   --sizes 16K,64K,256K,1M,2M,4M,8M,16M   burst sizes (K, M suffixes)
 *   --windows 16K:300,64K:200,...          windows per size and run
 *   --allocs fresh,pool  --contenders identity,queue,...  --spin 64
 */
#include "gst-bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIMITS "max-size-buffers=0 max-size-bytes=0 max-size-time=0 " \
  "sink-max-bytes=1073741824"
#define PAYLOAD 32
#define GROUPS 4
#define PER_GROUP 16
#define WARM_QUERIES 512
#define WARMUP_PUSHES 5000
#define DRAIN_TIMEOUT_NS (600 * GST_SECOND)
#define MAX_CONT 16

typedef struct
{
  double post[GROUPS], ctrl[GROUPS];
  guint64 burst_ticks;
  guint64 backlog;
} Window;

typedef struct
{
  double g[GROUPS];
} Groups;

typedef struct
{
  const GbContender *contender;
  GbLink *link;
  Window *w;                    /* [windows] */
  gint *order;                  /* [windows] position in its round */
} Slot;

static guint64
parse_size (const gchar * s)
{
  gchar *end;
  guint64 v = g_ascii_strtoull (s, &end, 10);

  if (*end == 'K' || *end == 'k')
    v *= 1024;
  else if (*end == 'M' || *end == 'm')
    v *= 1024 * 1024;
  return v;
}

static guint
windows_for (const gchar * spec, guint64 size, gboolean smoke)
{
  gchar **v;
  guint i, n = 0;

  if (smoke)
    return 3;
  v = g_strsplit (spec, ",", -1);
  for (i = 0; v[i]; i++) {
    gchar *colon = strchr (v[i], ':');

    if (colon) {
      *colon = '\0';
      if (parse_size (v[i]) == size)
        n = (guint) atoi (colon + 1);
    }
  }
  g_strfreev (v);
  if (n == 0)
    n = size <= 65536 ? 300 : size <= 1048576 ? 40 : 8;
  return n;
}

static double
window_mean (const double *g)
{
  return gb_mean (g, GROUPS);
}

int
gb_burst_main (GbCommon * c, int argc, char **argv)
{
  const gchar *sizes_s = "16K,64K,256K,1M,2M,4M,8M,16M";
  const gchar *windows_s =
      "16K:300,64K:200,256K:120,1M:30,2M:16,4M:10,8M:6,16M:4";
  const gchar *allocs_s = "fresh,pool";
  const gchar *names = "identity,queue,queue2,tbqueue,tbqueue-ref";
  guint spin = 64;
  const GbContender *cont[MAX_CONT];
  gint ncont, i, k, run, si, ai, failures = 0;
  gchar **sizes, **allocs;
  FILE *fw = NULL, *fr = NULL, *f;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes_s = argv[++i];
    else if (strcmp (argv[i], "--windows") == 0 && i + 1 < argc)
      windows_s = argv[++i];
    else if (strcmp (argv[i], "--allocs") == 0 && i + 1 < argc)
      allocs_s = argv[++i];
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else if (strcmp (argv[i], "--spin") == 0 && i + 1 < argc)
      spin = (guint) atoi (argv[++i]);
    else
      gb_die ("burst: unknown option %s", argv[i]);
  }
  if (c->smoke && strcmp (sizes_s, "16K,64K,256K,1M,2M,4M,8M,16M") == 0)
    sizes_s = "16K,64K";
  gb_gst_init ();
  gb_table_init (42);
  ncont = gb_contenders_select (c, names, cont, MAX_CONT);
  sizes = g_strsplit (sizes_s, ",", -1);
  allocs = g_strsplit (allocs_s, ",", -1);

  if ((f = gb_out_open (c, "meta.json"))) {
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"sizes\": \"%s\", "
        "\"windows\": {", c->runs, sizes_s);
    for (si = 0; sizes[si]; si++)
      fprintf (f, "%s\"%s\": %u", si ? ", " : "", sizes[si],
          windows_for (windows_s, parse_size (sizes[si]), c->smoke));
    fprintf (f, "}, \"payload_bytes\": %d, \"table_bytes\": 49152, "
        "\"node_bytes\": 64, \"nodes_per_query\": 8, \"warm_queries\": %d, "
        "\"groups\": %d, \"queries_per_group\": %d, \"consumer_spin_loops\": "
        "%u, \"allocs\": \"%s\", \"limits\": \"%s\", \"warmup_pushes\": %d, "
        "\"table_seed\": 42, \"pinned\": %s},\n",
        PAYLOAD, WARM_QUERIES, GROUPS, PER_GROUP, spin, allocs_s, LIMITS,
        WARMUP_PUSHES, gb_pinned ? "true" : "false");
    gb_meta_end (f, cont, ncont);
  }
  if ((fw = gb_out_open (c, "windows.csv")))
    fprintf (fw, "run,burst_bytes,alloc,window,contender,order,pushes,"
        "burst_us,ns_per_push,backlog,post1,post2,post3,post4,ctrl1,ctrl2,"
        "ctrl3,ctrl4,base1,base2,base3,base4\n");
  if ((fr = gb_out_open (c, "runs.csv")))
    fprintf (fr, "run,burst_bytes,alloc,contender,windows,post_p50,post_p99,"
        "post_p999,ctrl_p50,ctrl_p99,ctrl_p999,base_p50,base_p99,base_p999,"
        "ratio_to_baseline,excess,excess_paired_median,first_group_post_p50,"
        "first_group_ctrl_p50,ns_per_push_p50,burst_ms_p50,backlog_p50,"
        "copied,referenced,load1,tbqueue_stats\n");

  for (run = 0; run < c->runs; run++) {
    for (si = 0; sizes[si]; si++) {
      guint64 bytes = parse_size (sizes[si]);
      guint64 pushes = bytes / PAYLOAD;
      guint nw = windows_for (windows_s, bytes, c->smoke);

      for (ai = 0; allocs[ai]; ai++) {
        GbAlloc alloc = strcmp (allocs[ai], "pool") == 0 ? GB_ALLOC_POOL :
            GB_ALLOC_FRESH;
        Slot slot[MAX_CONT];
        Groups *base = g_new0 (Groups, nw);
        double load1 = gb_load_average ();
        guint w;
        guint64 p;

        for (k = 0; k < ncont; k++) {
          slot[k].contender = cont[k];
          slot[k].link = gb_link_new (cont[k], LIMITS, PAYLOAD, alloc, spin);
          slot[k].w = g_new0 (Window, nw);
          slot[k].order = g_new0 (gint, nw);
          for (p = 0; p < WARMUP_PUSHES; p++)
            gb_link_push (slot[k].link, gb_link_make_buffer (slot[k].link, 0));
          if (!gb_link_drain (slot[k].link, DRAIN_TIMEOUT_NS))
            gb_fail (c, "burst %s: %s", cont[k]->name, slot[k].link->failure);
        }

        for (w = 0; w < nw; w++) {
          gb_table_warm (WARM_QUERIES);
          gb_table_time_groups (base[w].g, GROUPS, PER_GROUP);
          for (k = 0; k < ncont; k++) {
            gint idx = (k + w + run) % ncont;
            Slot *s = &slot[idx];
            GbLink *l = s->link;
            Window *win = &s->w[w];
            guint64 t0, t1;

            s->order[w] = k;
            gb_table_warm (WARM_QUERIES);
            t0 = gb_ticks ();
            for (p = 0; p < pushes; p++)
              gb_link_push (l, gb_link_make_buffer (l, 0));
            t1 = gb_ticks ();
            gb_table_time_groups (win->post, GROUPS, PER_GROUP);
            win->burst_ticks = t1 - t0;
            win->backlog = l->pushed - gb_link_received (l);

            gb_table_warm (WARM_QUERIES);
            gb_spin_until (gb_ticks () + win->burst_ticks);
            gb_table_time_groups (win->ctrl, GROUPS, PER_GROUP);

            if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
              gb_fail (c, "burst %s %s %s: %s", sizes[si], allocs[ai],
                  s->contender->name, l->failure);
          }
        }

        /* Per-run statistics, then the raw windows. */
        for (k = 0; k < ncont; k++) {
          Slot *s = &slot[k];
          double *post = g_new (double, nw * GROUPS);
          double *ctrl = g_new (double, nw * GROUPS);
          double *bas = g_new (double, nw * GROUPS);
          double *pair = g_new (double, nw), *npp = g_new (double, nw);
          double *ms = g_new (double, nw), *bl = g_new (double, nw);
          double *fp = g_new (double, nw), *fc = g_new (double, nw);
          double pp50, pp99, pp999, cp50, cp99, cp999, bp50, bp99, bp999;
          guint64 copied, referenced;
          gint want_copy;
          gchar *st;
          guint g;

          for (w = 0; w < nw; w++) {
            for (g = 0; g < GROUPS; g++) {
              post[w * GROUPS + g] = s->w[w].post[g];
              ctrl[w * GROUPS + g] = s->w[w].ctrl[g];
              bas[w * GROUPS + g] = base[w].g[g];
            }
            pair[w] = window_mean (s->w[w].post) / window_mean (s->w[w].ctrl);
            npp[w] = gb_ticks_to_ns (s->w[w].burst_ticks) / pushes;
            ms[w] = gb_ticks_to_ns (s->w[w].burst_ticks) / 1e6;
            bl[w] = (double) s->w[w].backlog;
            fp[w] = s->w[w].post[0];
            fc[w] = s->w[w].ctrl[0];
            if (fw) {
              fprintf (fw, "%d,%" G_GUINT64_FORMAT ",%s,%u,%s,%d,%"
                  G_GUINT64_FORMAT ",%.1f,%.2f,%" G_GUINT64_FORMAT, run,
                  bytes, allocs[ai], w, s->contender->name, s->order[w],
                  pushes, gb_ticks_to_ns (s->w[w].burst_ticks) / 1e3, npp[w],
                  s->w[w].backlog);
              for (g = 0; g < GROUPS; g++)
                fprintf (fw, ",%.2f", s->w[w].post[g]);
              for (g = 0; g < GROUPS; g++)
                fprintf (fw, ",%.2f", s->w[w].ctrl[g]);
              for (g = 0; g < GROUPS; g++)
                fprintf (fw, ",%.2f", base[w].g[g]);
              fprintf (fw, "\n");
            }
          }
          gb_percentiles (post, nw * GROUPS, &pp50, &pp99, &pp999);
          gb_percentiles (ctrl, nw * GROUPS, &cp50, &cp99, &cp999);
          gb_percentiles (bas, nw * GROUPS, &bp50, &bp99, &bp999);
          gb_tbqueue_transfer_counts (s->link->elem, &copied, &referenced);
          want_copy = gb_tbqueue_expects_copy (s->link->elem, PAYLOAD,
              s->link->alloc == GB_ALLOC_POOL);
          if (want_copy >= 0 && (want_copy ? copied : referenced)
              != s->link->pushed)
            gb_fail (c, "burst %s: %" G_GUINT64_FORMAT " copied, %"
                G_GUINT64_FORMAT " referenced of %" G_GUINT64_FORMAT
                ": not the transfer mode asked for", s->contender->name,
                copied, referenced, s->link->pushed);
          st = gb_tbqueue_stats_brief (s->link->elem);
          if (fr) {
            fprintf (fr, "%d,%" G_GUINT64_FORMAT ",%s,%s,%u", run, bytes,
                allocs[ai], s->contender->name, nw);
            fprintf (fr, ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f",
                pp50, pp99, pp999, cp50, cp99, cp999, bp50, bp99, bp999);
            fprintf (fr, ",%.4f,%.4f,%.4f,%.3f,%.3f,%.2f,%.3f,%.0f,%"
                G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.2f,%s\n",
                pp50 / bp50, pp50 / cp50, gb_median (pair, nw),
                gb_median (fp, nw), gb_median (fc, nw), gb_median (npp, nw),
                gb_median (ms, nw), gb_median (bl, nw), copied, referenced,
                load1, st);
          }
          printf ("# run %d %5s %-5s %-12s post %6.1f ctrl %6.1f base %6.1f "
              "ns/query  x%.2f base  x%.2f ctrl  push %.0f ns  backlog %.0f"
              "\n", run, sizes[si], allocs[ai], s->contender->name, pp50,
              cp50, bp50, pp50 / bp50, pp50 / cp50, gb_median (npp, nw),
              gb_median (bl, nw));
          g_free (st);
          g_free (post);
          g_free (ctrl);
          g_free (bas);
          g_free (pair);
          g_free (npp);
          g_free (ms);
          g_free (bl);
          g_free (fp);
          g_free (fc);
        }
        for (k = 0; k < ncont; k++) {
          if (!gb_link_ok (slot[k].link))
            failures++;
          gb_tap (c, gb_link_ok (slot[k].link), "burst %s %s %s: %"
              G_GUINT64_FORMAT " buffers verified", sizes[si], allocs[ai],
              slot[k].contender->name, slot[k].link->pushed);
          gb_link_free (slot[k].link);
          g_free (slot[k].w);
          g_free (slot[k].order);
        }
        g_free (base);
      }
    }
  }
  if (fw)
    fclose (fw);
  if (fr)
    fclose (fr);
  g_strfreev (sizes);
  g_strfreev (allocs);
  return failures ? 1 : 0;
}

/* gst-bench: the tbqueue element against queue and queue2.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * USAGE
 *   gst-bench BENCHMARK [--smoke] [--runs N] [--out DIR] [--only a,b]
 *             [--tap] [benchmark options]
 *   gst-bench list                  contenders and what each one is
 *
 * BENCHMARKS (each file's header comment says what it measures)
 *   throughput   fakesrc / a source element ! X ! fakesink     bench-throughput.c
 *   upstream     ns per gst_pad_push on the upstream thread     bench-upstream.c
 *   callgrind    N pushes through one noinline function         bench-upstream.c
 *                (instructions per push: gst-callgrind.sh)
 *   burst        the pushing thread's own work after a burst    bench-burst.c
 *   latency      push to downstream chain, paced rates          bench-latency.c
 *   scenario     fixed-rate load table (CPU, RSS, latency)      bench-scenario.c
 *   memory       RSS per queued buffer, RSS after the drain     bench-memory.c
 *   camera       frames lost by a 4-buffer-pool live source     bench-camera.c
 *                when downstream stalls
 *   streams      16 streams at 1 kHz in one process: CPU and      bench-streams.c
 *                wake-ups per buffer, threads
 *   parallel     tbqsplit/tbqjoin/tbqparallel: jpegenc on 2      bench-parallel.c
 *                branches, identity branches (CPU, reorder
 *                cost), arrival order, a stalled worker
 *
 * COMMON OPTIONS
 *   --smoke      tiny sizes, seconds: checks that it runs and verifies
 *   --runs N     repetitions (each run interleaves every contender, in an
 *                order that rotates from run to run) [smoke 1, full 3]
 *   --out DIR    where NAME-runs.csv (every run), NAME-meta.json (machine,
 *                command line, parameters) and any raw files go [the
 *                environment variable TBQ_BENCH_OUT, else BUILD/bench-data,
 *                with --smoke BUILD/bench-smoke]
 *   --name NAME  the file stem NAME [the benchmark's name]: a variant run
 *                (other sizes, --pin, other contenders) keeps its own files
 *   --only a,b   restrict to these contenders
 *
 * A contender is a name from `gst-bench list`, or NAME:key=value+key=value
 * for that contender with more properties (experiments), e.g.
 * --contenders queue,tbqueue:source-block-size=16384
 *   --tap        TAP lines ("ok - ..." / "not ok - ...") [on with --smoke]
 *   --pin        the pushing thread on CPU 0, every thread the element starts
 *                (src pad task, tbqueue's copy task) on CPU 1, set from a
 *                sync bus handler at STREAM_STATUS ENTER as an application
 *                would (benchmarks that push from the main thread)
 *
 * Every buffer is verified downstream (size, GST_BUFFER_OFFSET = its
 * sequence number, and every payload byte, which also depends on it); a
 * verification failure prints "not ok" and exits with status 1.
 *
 * The tbqueue plugin is loaded from this build tree (GB_PLUGIN, or the
 * GB_PLUGIN environment variable); queue, queue2, identity, fakesrc and
 * fakesink come from the installed GStreamer.
 */
#include "gst-bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GB_PLUGIN
#define GB_PLUGIN ""
#endif

gboolean gb_pinned = FALSE;
static gboolean want_pin = FALSE;

void
gb_gst_init (void)
{
  const gchar *path = g_getenv ("GB_PLUGIN");
  GError *err = NULL;
  GstPlugin *plugin;

  gst_init (NULL, NULL);
  if (path == NULL || *path == '\0')
    path = GB_PLUGIN;
  plugin = gst_plugin_load_file (path, &err);
  if (plugin == NULL)
    gb_die ("cannot load the tbqueue plugin %s: %s", path,
        err ? err->message : "?");
  gst_object_unref (plugin);
  if (gst_element_factory_find ("tbqueue") == NULL)
    gb_die ("%s has no tbqueue element", path);
  gb_timer_init ();
  if (want_pin) {
    cpu_set_t set;

    CPU_ZERO (&set);
    CPU_SET (0, &set);
    if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) < 2)
      gb_die ("--pin needs two CPUs");
    CPU_ZERO (&set);
    CPU_SET (0, &set);
    if (pthread_setaffinity_np (pthread_self (), sizeof set, &set) != 0)
      gb_die ("--pin: cannot pin the pushing thread");
    gb_pinned = TRUE;
  }
}

static const struct
{
  const gchar *name;
  int (*main) (GbCommon * c, int argc, char **argv);
} commands[] = {
  {"throughput", gb_throughput_main},
  {"upstream", gb_upstream_main},
  {"callgrind", gb_callgrind_main},
  {"burst", gb_burst_main},
  {"latency", gb_latency_main},
  {"scenario", gb_scenario_main},
  {"memory", gb_memory_main},
  {"camera", gb_camera_main},
  {"streams", gb_streams_main},
  {"parallel", gb_parallel_main},
};

static void
usage (FILE * f)
{
  fprintf (f, "usage: gst-bench BENCHMARK [--smoke] [--runs N] [--out DIR] "
      "[--only a,b] [--tap] [options]\n"
      "BENCHMARK: throughput upstream callgrind burst latency scenario "
      "memory camera streams parallel list\n"
      "See the comment at the top of tests/bench/gst/gst-bench.c.\n");
}

static int
list_main (void)
{
  const GbContender *c;

  for (c = gb_contenders; c->name; c++)
    printf ("%-20s %s %s\n    %s\n", c->name, c->factory ? c->factory : "-",
        c->props, c->what);
  return 0;
}

int
main (int argc, char **argv)
{
  GbCommon c = { 0 };
  gchar **rest;
  gint nrest = 0, i;
  const gchar *cmd;
  gchar *self;

  if (argc < 2) {
    usage (stderr);
    return 2;
  }
  self = g_file_read_link ("/proc/self/exe", NULL);
  gb_self = self ? self : argv[0];
  cmd = argv[1];
  rest = g_new0 (gchar *, argc + 1);
  rest[nrest++] = argv[0];
  for (i = 2; i < argc; i++) {
    if (strcmp (argv[i], "--smoke") == 0) {
      c.smoke = TRUE;
      c.tap = TRUE;
    } else if (strcmp (argv[i], "--tap") == 0) {
      c.tap = TRUE;
    } else if (strcmp (argv[i], "--runs") == 0 && i + 1 < argc) {
      c.runs = atoi (argv[++i]);
    } else if (strcmp (argv[i], "--out") == 0 && i + 1 < argc) {
      c.out = argv[++i];
    } else if (strcmp (argv[i], "--name") == 0 && i + 1 < argc) {
      c.name = argv[++i];
    } else if (strcmp (argv[i], "--only") == 0 && i + 1 < argc) {
      c.only = argv[++i];
    } else if (strcmp (argv[i], "--pin") == 0) {
      c.pin = TRUE;
    } else if (strcmp (argv[i], "--help") == 0) {
      usage (stdout);
      return 0;
    } else {
      rest[nrest++] = argv[i];
    }
  }
  want_pin = c.pin;
  if (c.name == NULL)
    c.name = cmd;
  /* Kept for the life of the process. */
  c.command = g_strjoinv (" ", argv);
  if (c.runs <= 0)
    c.runs = c.smoke ? 1 : 3;
  setvbuf (stdout, NULL, _IOLBF, 0);

  if (strcmp (cmd, "list") == 0)
    return list_main ();
  for (i = 0; i < (gint) G_N_ELEMENTS (commands); i++)
    if (strcmp (cmd, commands[i].name) == 0) {
      gint ret = commands[i].main (&c, nrest, rest);

      if (c.tap)
        printf ("1..%d\n", gb_tap_count ());
      return ret;
    }
  usage (stderr);
  return 2;
}

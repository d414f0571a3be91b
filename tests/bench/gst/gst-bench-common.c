/* gst-bench: timer, statistics, machine dump, contenders, links, table.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gst-bench.h"

#include <errno.h>
#include <sched.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef GB_SOURCE_ROOT
#define GB_SOURCE_ROOT "."
#endif
#ifndef GB_PLUGIN
#define GB_PLUGIN ""
#endif
#ifndef GB_BUILD_ROOT
#define GB_BUILD_ROOT "."
#endif
#ifndef GB_BUILDTYPE
#define GB_BUILDTYPE "unknown"
#endif

double gb_ticks_per_ns = 1.0;
const gchar *gb_self = "gst-bench";

/* ---- errors and output ---- */

void
gb_die (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fprintf (stderr, "gst-bench: ");
  vfprintf (stderr, fmt, ap);
  fprintf (stderr, "\n");
  va_end (ap);
  fflush (stdout);
  exit (2);
}

static gint tap_lines;

gint
gb_tap_count (void)
{
  return tap_lines;
}

void
gb_tap (const GbCommon * c, gboolean ok, const char *fmt, ...)
{
  va_list ap;

  if (!c->tap)
    return;
  tap_lines++;
  printf ("%s - ", ok ? "ok" : "not ok");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
}

void
gb_fail (const GbCommon * c, const char *fmt, ...)
{
  va_list ap;
  gchar *msg;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (c->tap)
    printf ("not ok - %s\n", msg);
  fprintf (stderr, "gst-bench: FAILED: %s\n", msg);
  fflush (stdout);
  g_free (msg);
  exit (1);
}

static const gchar *
out_dir (const GbCommon * c)
{
  const gchar *env = g_getenv ("TBQ_BENCH_OUT");

  if (c->out)
    return c->out;
  if (env && *env)
    return env;
  return c->smoke ? GB_BUILD_ROOT "/bench-smoke" : GB_BUILD_ROOT "/bench-data";
}

FILE *
gb_out_open (const GbCommon * c, const char *suffix)
{
  const gchar *dir = out_dir (c);
  gchar *file = g_strdup_printf ("%s-%s", c->name, suffix);
  gchar *path;
  FILE *f;

  if (g_mkdir_with_parents (dir, 0755) != 0)
    gb_die ("cannot create %s: %s", dir, strerror (errno));
  path = g_build_filename (dir, file, NULL);
  f = fopen (path, "w");
  if (f == NULL)
    gb_die ("cannot write %s: %s", path, strerror (errno));
  g_free (path);
  g_free (file);
  return f;
}

/* ---- timer ---- */

guint64
gb_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000u + (guint64) ts.tv_nsec;
}

void
gb_timer_init (void)
{
#ifdef GB_HAVE_TSC
  guint64 n0, n1, k0, k1;

  n0 = gb_now_ns ();
  k0 = gb_ticks ();
  do {
    n1 = gb_now_ns ();
  } while (n1 - n0 < 50 * 1000 * 1000);
  k1 = gb_ticks ();
  gb_ticks_per_ns = (double) (k1 - k0) / (double) (n1 - n0);
  if (!(gb_ticks_per_ns > 0.1 && gb_ticks_per_ns < 100))
    gb_die ("TSC calibration failed (%f ticks/ns)", gb_ticks_per_ns);
#else
  gb_ticks_per_ns = 1.0;
#endif
}

double
gb_timer_overhead_ns (void)
{
  double v[1001];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (v); i++) {
    guint64 a = gb_ticks ();
    guint64 b = gb_ticks ();

    v[i] = gb_ticks_to_ns (b - a);
  }
  return gb_median (v, G_N_ELEMENTS (v));
}

void
gb_pace_until (guint64 deadline_ns, gboolean sleep)
{
  if (sleep) {
    struct timespec ts;

    ts.tv_sec = (time_t) (deadline_ns / 1000000000u);
    ts.tv_nsec = (long) (deadline_ns % 1000000000u);
    while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
        == EINTR);
    return;
  }
  while (gb_now_ns () < deadline_ns) {
#ifdef GB_HAVE_TSC
    _mm_pause ();
#endif
  }
}

void
gb_precise_sleeps (void)
{
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

/* ---- statistics ---- */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
sorted_rank (const double *v, gsize n, double p)
{
  gsize idx;

  if (n == 0)
    return NAN;
  idx = (gsize) ceil (p / 100.0 * (double) n);
  if (idx > 0)
    idx--;
  if (idx >= n)
    idx = n - 1;
  return v[idx];
}

double
gb_percentile (double *v, gsize n, double p)
{
  qsort (v, n, sizeof *v, cmp_double);
  return sorted_rank (v, n, p);
}

void
gb_percentiles (double *v, gsize n, double *p50, double *p99, double *p999)
{
  qsort (v, n, sizeof *v, cmp_double);
  *p50 = sorted_rank (v, n, 50);
  *p99 = sorted_rank (v, n, 99);
  *p999 = sorted_rank (v, n, 99.9);
}

double
gb_median (double *v, gsize n)
{
  return gb_percentile (v, n, 50);
}

double
gb_mean (const double *v, gsize n)
{
  double s = 0;
  gsize i;

  if (n == 0)
    return NAN;
  for (i = 0; i < n; i++)
    s += v[i];
  return s / (double) n;
}

/* ---- process ---- */

static guint64
status_kb (const char *key)
{
  FILE *f = fopen ("/proc/self/status", "r");
  char line[256];
  size_t len = strlen (key);
  guint64 v = 0;

  if (f == NULL)
    return 0;
  while (fgets (line, sizeof line, f))
    if (strncmp (line, key, len) == 0 && line[len] == ':') {
      v = g_ascii_strtoull (line + len + 1, NULL, 10);
      break;
    }
  fclose (f);
  return v;
}

guint64
gb_rss_bytes (void)
{
  return status_kb ("VmRSS") * 1024;
}

guint64
gb_rss_peak_bytes (void)
{
  return status_kb ("VmHWM") * 1024;
}

gboolean
gb_rss_reset_peak (void)
{
  FILE *f = fopen ("/proc/self/clear_refs", "w");
  gboolean ok;

  if (f == NULL)
    return FALSE;
  ok = fputs ("5", f) >= 0;
  ok = (fclose (f) == 0) && ok;
  return ok;
}

static double
tv_seconds (const struct timeval *t)
{
  return (double) t->tv_sec + (double) t->tv_usec / 1e6;
}

double
gb_cpu_seconds (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return tv_seconds (&ru.ru_utime) + tv_seconds (&ru.ru_stime);
}

double
gb_thread_cpu_seconds (void)
{
  struct rusage ru;

  getrusage (RUSAGE_THREAD, &ru);
  return tv_seconds (&ru.ru_utime) + tv_seconds (&ru.ru_stime);
}

guint64
gb_process_switches (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (guint64) ru.ru_nvcsw + (guint64) ru.ru_nivcsw;
}

void
gb_thread_switches (guint64 * voluntary, guint64 * involuntary)
{
  struct rusage ru;

  getrusage (RUSAGE_THREAD, &ru);
  *voluntary = (guint64) ru.ru_nvcsw;
  *involuntary = (guint64) ru.ru_nivcsw;
}

double
gb_load_average (void)
{
  double l[1];

  return getloadavg (l, 1) == 1 ? l[0] : NAN;
}

/* ---- machine dump ---- */

void
gb_json_string (FILE * f, const char *s)
{
  fputc ('"', f);
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf (f, "\\%c", *s);
    else if ((unsigned char) *s < 0x20)
      fprintf (f, "\\u%04x", (unsigned char) *s);
    else
      fputc (*s, f);
  }
  fputc ('"', f);
}

void
gb_record_latency (GbLink * l, GstBuffer * buf, guint64 seq, guint64 stamp,
    gpointer data)
{
  GbLatency *lat = data;

  if (seq >= lat->first && seq - lat->first < lat->n)
    lat->lat_ns[seq - lat->first] = gb_ticks_to_ns (l->chain_entry - stamp);
}

void
gb_meta_end (FILE * f, const GbContender * const *cont, gint n)
{
  gint k;

  fprintf (f, "  \"contenders\": [");
  for (k = 0; k < n; k++) {
    fprintf (f, "%s\n    {\"name\": \"%s\", \"what\": ", k ? "," : "",
        cont[k]->name);
    gb_json_string (f, cont[k]->what);
    fprintf (f, "}");
  }
  fprintf (f, "\n  ]\n}\n");
  fclose (f);
}

static gchar *
first_line (const char *cmd)
{
  gchar *out = NULL;
  gchar *argv[] = { (gchar *) "/bin/sh", (gchar *) "-c", (gchar *) cmd, NULL };
  gchar *nl;

  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
          NULL, &out, NULL, NULL, NULL) || out == NULL)
    return g_strdup ("");
  nl = strchr (out, '\n');
  if (nl)
    *nl = '\0';
  return out;
}

static gchar *
cpu_model (void)
{
  gchar *text = NULL, **lines, *model = NULL;
  guint i;

  if (!g_file_get_contents ("/proc/cpuinfo", &text, NULL, NULL))
    return g_strdup ("unknown");
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] && !model; i++)
    if (g_str_has_prefix (lines[i], "model name")) {
      const gchar *colon = strchr (lines[i], ':');

      if (colon)
        model = g_strstrip (g_strdup (colon + 1));
    }
  g_strfreev (lines);
  g_free (text);
  return model ? model : g_strdup ("unknown");
}

void
gb_meta_begin (FILE * f, const GbCommon * c)
{
  struct utsname u;
  gchar *commit, *dirty, *cpu, *started;
  const gchar *env_commit = g_getenv ("GB_GIT_COMMIT");
  GDateTime *now = g_date_time_new_now_local ();
  GstPluginFeature *feat;
  const gchar *plugin_file = "";
  GstPlugin *plugin = NULL;

  if (env_commit) {
    commit = g_strdup (env_commit);
    dirty = g_strdup (g_getenv ("GB_GIT_DIRTY") ? g_getenv ("GB_GIT_DIRTY") :
        "");
  } else {
    commit = first_line ("git -C '" GB_SOURCE_ROOT "' rev-parse HEAD");
    dirty = first_line ("git -C '" GB_SOURCE_ROOT "' status --porcelain "
        "--untracked-files=no -- gst lib tests/bench/gst | tr '\\n' ' '");
  }
  cpu = cpu_model ();
  started = g_date_time_format (now, "%Y-%m-%dT%H:%M:%S%z");
  feat = gst_registry_lookup_feature (gst_registry_get (), "tbqueue");
  if (feat) {
    plugin = gst_plugin_feature_get_plugin (feat);
    if (plugin)
      plugin_file = gst_plugin_get_filename (plugin);
  }

  fprintf (f, "{\n  \"tool\": \"gst-bench\",\n  \"benchmark\": ");
  gb_json_string (f, c->name);
  fprintf (f, ",\n  \"command\": ");
  gb_json_string (f, c->command);
  fprintf (f, ",\n  \"runs\": %d,\n  \"smoke\": %s", c->runs,
      c->smoke ? "true" : "false");
  fprintf (f, ",\n  \"started\": ");
  gb_json_string (f, started);
  fprintf (f, ",\n  \"machine\": {\n    \"cpu_model\": ");
  gb_json_string (f, cpu);
  fprintf (f, ",\n    \"cpus_online\": %ld,\n", sysconf (_SC_NPROCESSORS_ONLN));
  {
    cpu_set_t set;

    CPU_ZERO (&set);
    fprintf (f, "    \"cpus_allowed\": %d,\n    \"pinned\": %s,\n",
        sched_getaffinity (0, sizeof set, &set) == 0 ? CPU_COUNT (&set) : -1,
        gb_pinned ? "true" : "false");
  }
  fprintf (f, "    \"kernel\": ");
  if (uname (&u) == 0) {
    gchar *k = g_strdup_printf ("%s %s %s", u.sysname, u.release, u.machine);

    gb_json_string (f, k);
    g_free (k);
  } else {
    gb_json_string (f, "unknown");
  }
  fprintf (f, ",\n    \"gstreamer\": ");
  {
    gchar *v = gst_version_string ();

    gb_json_string (f, v);
    g_free (v);
  }
  fprintf (f, ",\n    \"compiler\": ");
  gb_json_string (f, "gcc " __VERSION__);
  fprintf (f, ",\n    \"buildtype\": ");
  gb_json_string (f, GB_BUILDTYPE);
  fprintf (f, ",\n    \"git_commit\": ");
  gb_json_string (f, commit);
  fprintf (f, ",\n    \"git_dirty\": ");
  gb_json_string (f, dirty);
  fprintf (f, ",\n    \"tbqueue_plugin\": ");
  gb_json_string (f, plugin_file);
  fprintf (f, ",\n    \"timer\": \"%s\",\n    \"tsc_ticks_per_ns\": %.6f,\n"
      "    \"timer_pair_overhead_ns\": %.2f,\n"
      "    \"load_average_1min_start\": %.2f\n  }",
#ifdef GB_HAVE_TSC
      "rdtsc (lfence) calibrated against CLOCK_MONOTONIC",
#else
      "CLOCK_MONOTONIC",
#endif
      gb_ticks_per_ns, gb_timer_overhead_ns (), gb_load_average ());
  if (plugin)
    gst_object_unref (plugin);
  if (feat)
    gst_object_unref (feat);
  g_free (commit);
  g_free (dirty);
  g_free (cpu);
  g_free (started);
  g_date_time_unref (now);
}

/* ---- contenders ---- */

const GbContender gb_contenders[] = {
  {"bare", NULL, "",
      "no element: our src pad linked straight to our sink pad (the consumer "
        "runs inside gst_pad_push)"},
  {"identity", "identity", "silent=true",
      "identity: no thread boundary (the consumer runs in the pushing thread)"},
  {"queue", "queue", "",
      "queue (GStreamer 1.22, defaults apart from the stated limits)"},
  {"queue2", "queue2", "use-buffering=false",
      "queue2, in memory (use-buffering=false, no temp file)"},
  {"tbqueue", "tbqueue", "transfer=auto",
      "tbqueue, transfer=auto (copies buffers of a buffer pool and buffers "
        "up to copy-threshold, 512 bytes by default)"},
  {"tbqueue-copy", "tbqueue", "transfer=copy",
      "tbqueue, transfer=copy (copies every buffer)"},
  {"tbqueue-ref", "tbqueue", "transfer=reference",
      "tbqueue, transfer=reference (queues the GstBuffers themselves)"},
  {"tbqueue-nocoalesce", "tbqueue", "max-coalesce-latency=0",
      "tbqueue, max-coalesce-latency=0 (the src task is woken per buffer "
        "whenever it waits, as before coalescing)"},
  {NULL, NULL, NULL, NULL},
};

const GbContender *
gb_contender_find (const gchar * name)
{
  const GbContender *c;
  const gchar *colon = strchr (name, ':');
  gchar *base;

  for (c = gb_contenders; c->name; c++)
    if (strcmp (c->name, name) == 0)
      return c;
  if (colon == NULL)
    return NULL;
  /* "NAME:key=value+key=value": NAME with more properties (experiments). */
  base = g_strndup (name, colon - name);
  for (c = gb_contenders; c->name; c++)
    if (strcmp (c->name, base) == 0 && c->factory) {
      GbContender *x = g_new0 (GbContender, 1);
      gchar *extra = g_strdelimit (g_strdup (colon + 1), "+", ' ');

      x->name = g_strdup (name);
      x->factory = c->factory;
      x->props = g_strconcat (c->props, " ", extra, NULL);
      x->what = g_strconcat (c->what, ", with ", extra, NULL);
      g_free (extra);
      g_free (base);
      /* Kept for the life of the process, like the static table. */
      return x;
    }
  g_free (base);
  return NULL;
}

gint
gb_contenders_select (const GbCommon * c, const gchar * names,
    const GbContender ** out, gint max)
{
  return gb_contenders_select_with (c, names, gb_contender_find, out, max);
}

gint
gb_contenders_select_with (const GbCommon * c, const gchar * names,
    GbContenderFind find, const GbContender ** out, gint max)
{
  gchar **v = g_strsplit (names, ",", -1), **only = NULL;
  gint i, n = 0;

  if (c->only)
    only = g_strsplit (c->only, ",", -1);
  for (i = 0; v[i] && n < max; i++) {
    const GbContender *k = find (v[i]);

    if (k == NULL)
      gb_die ("unknown contender '%s'", v[i]);
    if (only && !g_strv_contains ((const gchar * const *) only, v[i]))
      continue;
    out[n++] = k;
  }
  g_strfreev (v);
  g_strfreev (only);
  return n;
}

void
gb_set_props (GObject * obj, const gchar * props, gboolean lenient)
{
  gchar **kv;
  guint i;

  if (props == NULL || *props == '\0')
    return;
  kv = g_strsplit_set (props, " ", -1);
  for (i = 0; kv[i]; i++) {
    gchar *eq;

    if (*kv[i] == '\0')
      continue;
    eq = strchr (kv[i], '=');
    if (eq == NULL)
      gb_die ("bad property '%s'", kv[i]);
    *eq = '\0';
    if (g_object_class_find_property (G_OBJECT_GET_CLASS (obj), kv[i]) == NULL) {
      if (lenient)
        continue;
      gb_die ("%s has no property '%s'", G_OBJECT_TYPE_NAME (obj), kv[i]);
    }
    gst_util_set_object_arg (obj, kv[i], eq + 1);
  }
  g_strfreev (kv);
}

GstElement *
gb_contender_make (const GbContender * c, const gchar * limits)
{
  GstElement *e;

  if (c->factory == NULL && c->props != NULL && *c->props != '\0') {
    GError *err = NULL;

    /* A bin of a gst-launch description, its unlinked pads ghosted
     * ("sink", "src"); the limits are the description's own. */
    e = gst_parse_bin_from_description (c->props, TRUE, &err);
    if (e == NULL)
      gb_die ("%s: cannot make '%s': %s", c->name, c->props,
          err ? err->message : "?");
    return e;
  }
  if (c->factory == NULL)
    return NULL;
  e = gst_element_factory_make (c->factory, NULL);
  if (e == NULL)
    gb_die ("no element '%s'", c->factory);
  gb_set_props (G_OBJECT (e), c->props, FALSE);
  gb_set_props (G_OBJECT (e), limits, TRUE);
  return e;
}

void
gb_tbqueue_transfer_counts (GstElement * e, guint64 * copied,
    guint64 * referenced)
{
  GstStructure *s = NULL;

  *copied = *referenced = 0;
  if (e == NULL || g_object_class_find_property (G_OBJECT_GET_CLASS (e),
          "stats") == NULL)
    return;
  g_object_get (e, "stats", &s, NULL);
  if (s) {
    gst_structure_get_uint64 (s, "buffers-copied", copied);
    gst_structure_get_uint64 (s, "buffers-referenced", referenced);
    gst_structure_free (s);
  }
}

gint
gb_tbqueue_expects_copy (GstElement * e, gsize size, gint pooled)
{
  guint threshold = 0;
  gint transfer = 0;

  if (e == NULL || g_object_class_find_property (G_OBJECT_GET_CLASS (e),
          "transfer") == NULL)
    return -1;
  g_object_get (e, "transfer", &transfer, "copy-threshold", &threshold, NULL);
  /* transfer: 0 auto, 1 copy, 2 reference.  The benchmarks' buffers are
   * plain system memory without metas, and no larger than the sink pool
   * holds: copy copies them all, auto the small ones, and those of a pool
   * that would wait in the queue (how many depends on how the threads
   * run: -1). */
  if (transfer == 2)
    return 0;
  if (transfer == 1 || size <= threshold)
    return 1;
  return pooled == 0 ? 0 : -1;
}

gchar *
gb_tbqueue_stats_brief (GstElement * e)
{
  static const gchar *fields[] = { "source-pool-full", "pressure-waits",
    "sink-pressure-waits", "handoffs", "copier-passes", "copier-wakeups",
    "underruns", "level-waits", "sink-allocations", "sink-releases",
    "sink-blocks-peak", "upstream-wakeups", "src-sleeps", "src-naps",
    "src-naps-woken", NULL
  };
  GstStructure *s = NULL;
  GString *out = g_string_new ("");
  guint i;

  if (e == NULL || g_object_class_find_property (G_OBJECT_GET_CLASS (e),
          "stats") == NULL)
    return g_string_free (out, FALSE);
  g_object_get (e, "stats", &s, NULL);
  for (i = 0; s && fields[i]; i++) {
    guint64 v = 0;

    if (gst_structure_get_uint64 (s, fields[i], &v))
      g_string_append_printf (out, "%s%s=%" G_GUINT64_FORMAT,
          out->len ? ";" : "", fields[i], v);
  }
  if (s)
    gst_structure_free (s);
  return g_string_free (out, FALSE);
}

const gchar *
gb_alloc_name (GbAlloc a)
{
  return a == GB_ALLOC_POOL ? "pool" : "fresh";
}

/* ---- link ---- */

static void
link_set_failure (GbLink * l, const gchar * fmt, ...)
{
  va_list ap;

  if (atomic_load (&l->failed))
    return;
  va_start (ap, fmt);
  g_vsnprintf (l->failure, sizeof l->failure, fmt, ap);
  va_end (ap);
  atomic_store (&l->failed, 1);
}

GB_INLINE guint64
spin_work (guint64 x, guint loops)
{
  guint i;

  for (i = 0; i < loops; i++)
    x = x * G_GUINT64_CONSTANT (6364136223846793005)
        + G_GUINT64_CONSTANT (1442695040888963407);
  return x;
}

static GstFlowReturn
link_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GbLink *l = gst_pad_get_element_private (pad);
  GstMapInfo map;
  guint64 seq = l->expect, stamp = 0;

  if (l->consume)
    l->chain_entry = gb_ticks ();
  if (G_UNLIKELY (atomic_load_explicit (&l->stalled, memory_order_relaxed))) {
    pthread_mutex_lock (&l->lock);
    while (atomic_load_explicit (&l->stalled, memory_order_relaxed))
      pthread_cond_wait (&l->cond, &l->lock);
    pthread_mutex_unlock (&l->lock);
  }
  if (G_UNLIKELY (!gst_buffer_map (buf, &map, GST_MAP_READ))) {
    link_set_failure (l, "buffer %" G_GUINT64_FORMAT ": cannot map", seq);
    goto out;
  }
  if (G_UNLIKELY (map.size != l->size)) {
    link_set_failure (l, "buffer %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT
        " bytes, expected %" G_GSIZE_FORMAT, seq, map.size, l->size);
  } else if (G_UNLIKELY (GST_BUFFER_OFFSET (buf) != seq
          || !gb_payload_check (map.data, map.size, seq, &stamp))) {
    link_set_failure (l, "buffer %" G_GUINT64_FORMAT ": got offset %"
        G_GUINT64_FORMAT ", payload of %" G_GUINT64_FORMAT
        " (FIFO position or content wrong)", seq, GST_BUFFER_OFFSET (buf),
        *(const guint64 *) map.data);
  }
  if (l->spin_loops)
    l->spin_sink = spin_work (l->spin_sink + seq, l->spin_loops);
  if (l->consume)
    l->consume (l, buf, seq, stamp, l->consume_data);
  gst_buffer_unmap (buf, &map);
out:
  gst_buffer_unref (buf);
  l->expect = seq + 1;
  atomic_store_explicit (&l->received, seq + 1, memory_order_release);
  return GST_FLOW_OK;
}

static gboolean
link_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  gst_event_unref (event);
  return TRUE;
}

/* ---- the threads an element starts ---- */

typedef struct
{
  const gchar *factory;         /* interned: the owner element's factory */
  clockid_t clock;              /* the thread's CPU-time clock */
  double base;                  /* its reading at ENTER (a thread of a
                                 * pool served other tasks before) */
  gpointer thread;              /* pthread_self() of the thread */
  gboolean alive;               /* entered and not left */
} GbThread;

struct _GbThreads
{
  GMutex lock;
  GArray *threads;              /* GbThread */
};

static const gchar *
owner_factory (GstElement * owner)
{
  GstElementFactory *f = owner ? gst_element_get_factory (owner) : NULL;

  return g_intern_string (f ? GST_OBJECT_NAME (f) : "?");
}

/* Every thread an element starts posts STREAM_STATUS ENTER from itself
 * (and LEAVE when its task ends): noted with its CPU-time clock, and with
 * --pin put on CPU 1. */
static GstBusSyncReply
threads_sync_handler (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  GbThreads *w = user_data;
  GstStreamStatusType type;
  GstElement *owner = NULL;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_STREAM_STATUS) {
    gpointer self = (gpointer) pthread_self ();
    guint i;

    gst_message_parse_stream_status (msg, &type, &owner);
    /* CREATE, START, ... come from other threads. */
    if (type != GST_STREAM_STATUS_TYPE_ENTER
        && type != GST_STREAM_STATUS_TYPE_LEAVE)
      goto out;
    g_mutex_lock (&w->lock);
    for (i = 0; i < w->threads->len; i++) {
      GbThread *t = &g_array_index (w->threads, GbThread, i);

      if (t->thread == self && t->alive)
        t->alive = FALSE;
    }
    if (type == GST_STREAM_STATUS_TYPE_ENTER) {
      GbThread t = { owner_factory (owner), 0, 0, self, TRUE };
      struct timespec ts;

      if (pthread_getcpuclockid (pthread_self (), &t.clock) == 0
          && clock_gettime (t.clock, &ts) == 0) {
        t.base = (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
        g_array_append_val (w->threads, t);
      }
    }
    g_mutex_unlock (&w->lock);
    if (type == GST_STREAM_STATUS_TYPE_ENTER && gb_pinned) {
      cpu_set_t set;

      CPU_ZERO (&set);
      CPU_SET (1, &set);
      pthread_setaffinity_np (pthread_self (), sizeof set, &set);
    }
  }
out:
  /* A sync handler that drops a message frees it (else every message,
   * and the element it names, would stay referenced). */
  gst_message_unref (msg);
  return GST_BUS_DROP;
}

GbThreads *
gb_threads_watch (GstElement * elem)
{
  GbThreads *w = g_new0 (GbThreads, 1);
  GstBus *bus = gst_bus_new ();

  g_mutex_init (&w->lock);
  w->threads = g_array_new (FALSE, FALSE, sizeof (GbThread));
  gst_bus_set_sync_handler (bus, threads_sync_handler, w, NULL);
  gst_element_set_bus (elem, bus);
  gst_object_unref (bus);
  return w;
}

/* The threads of `factory` (NULL: all) still in their tasks: how many,
 * and the CPU seconds they spent since they entered them. */
static gint
threads_sum (GbThreads * w, const gchar * factory, double *cpu_s)
{
  gint n = 0;
  guint i;

  *cpu_s = 0;
  g_mutex_lock (&w->lock);
  for (i = 0; i < w->threads->len; i++) {
    GbThread *t = &g_array_index (w->threads, GbThread, i);
    struct timespec ts;

    if (!t->alive || (factory != NULL && strcmp (t->factory, factory) != 0))
      continue;
    n++;
    if (clock_gettime (t->clock, &ts) == 0)
      *cpu_s += (double) ts.tv_sec + (double) ts.tv_nsec / 1e9 - t->base;
  }
  g_mutex_unlock (&w->lock);
  return n;
}

double
gb_threads_cpu_seconds (GbThreads * w, const gchar * factory)
{
  double s;

  threads_sum (w, factory, &s);
  return s;
}

gint
gb_threads_count (GbThreads * w, const gchar * factory)
{
  double s;

  return threads_sum (w, factory, &s);
}

void
gb_threads_free (GbThreads * w, GstElement * elem)
{
  /* The element's bus goes first: no handler runs on `w` afterwards. */
  if (elem)
    gst_element_set_bus (elem, NULL);
  g_array_unref (w->threads);
  g_mutex_clear (&w->lock);
  g_free (w);
}

gboolean
gb_pad_start_stream (GstPad * src, const gchar * stream_id, GstCaps * caps)
{
  GstSegment seg;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  return gst_pad_push_event (src, gst_event_new_stream_start (stream_id))
      && gst_pad_push_event (src, gst_event_new_caps (caps))
      && gst_pad_push_event (src, gst_event_new_segment (&seg));
}

static gboolean
link_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GbLink *l = gst_pad_get_element_private (pad);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && l->live) {
    gst_query_set_latency (query, TRUE, 0, GST_CLOCK_TIME_NONE);
    return TRUE;
  }
  return gst_pad_query_default (pad, parent, query);
}

void
gb_link_set_live (GbLink * l)
{
  l->live = TRUE;
}

GbLink *
gb_link_new (const GbContender * c, const gchar * limits, gsize size,
    GbAlloc alloc, guint spin_loops)
{
  GbLink *l = g_new0 (GbLink, 1);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-gst-bench");
  GstPad *esink, *esrc;

  l->contender = c;
  l->size = size;
  l->alloc = alloc;
  l->spin_loops = spin_loops;
  pthread_mutex_init (&l->lock, NULL);
  pthread_cond_init (&l->cond, NULL);
  l->src = gst_pad_new ("src", GST_PAD_SRC);
  l->sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_element_private (l->src, l);
  gst_pad_set_query_function (l->src, link_src_query);
  gst_pad_set_element_private (l->sink, l);
  gst_pad_set_chain_function (l->sink, link_chain);
  gst_pad_set_event_function (l->sink, link_sink_event);
  l->elem = gb_contender_make (c, limits);
  if (l->elem)
    l->threads = gb_threads_watch (l->elem);
  if (l->elem) {
    esink = gst_element_get_static_pad (l->elem, "sink");
    esrc = gst_element_get_static_pad (l->elem, "src");
    if (gst_pad_link (l->src, esink) != GST_PAD_LINK_OK
        || gst_pad_link (esrc, l->sink) != GST_PAD_LINK_OK)
      gb_die ("%s: cannot link", c->name);
    gst_object_unref (esink);
    gst_object_unref (esrc);
  } else if (gst_pad_link (l->src, l->sink) != GST_PAD_LINK_OK) {
    gb_die ("bare: cannot link");
  }
  gst_pad_set_active (l->sink, TRUE);
  if (l->elem && gst_element_set_state (l->elem, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE)
    gb_die ("%s: cannot go to PLAYING", c->name);
  gst_pad_set_active (l->src, TRUE);
  if (!gb_pad_start_stream (l->src, "gst-bench", caps))
    gb_die ("%s: event refused", c->name);

  if (alloc == GB_ALLOC_POOL) {
    GstStructure *config;

    l->pool = gst_buffer_pool_new ();
    config = gst_buffer_pool_get_config (l->pool);
    /* Unbounded: a queue holding buffers makes the pool grow. */
    gst_buffer_pool_config_set_params (config, caps, (guint) size, 0, 0);
    if (!gst_buffer_pool_set_config (l->pool, config)
        || !gst_buffer_pool_set_active (l->pool, TRUE))
      gb_die ("cannot set up a buffer pool");
  }
  gst_caps_unref (caps);
  return l;
}

void
gb_link_stall (GbLink * l, gboolean stalled)
{
  pthread_mutex_lock (&l->lock);
  atomic_store_explicit (&l->stalled, stalled, memory_order_relaxed);
  pthread_cond_broadcast (&l->cond);
  pthread_mutex_unlock (&l->lock);
}

gboolean
gb_link_ok (GbLink * l)
{
  return !atomic_load (&l->failed);
}

gboolean
gb_link_drain (GbLink * l, gint64 timeout_ns)
{
  guint64 deadline = gb_now_ns () + (guint64) timeout_ns;

  while (gb_link_received (l) < l->pushed) {
    if (atomic_load (&l->failed))
      return FALSE;
    if (gb_now_ns () > deadline) {
      link_set_failure (l, "drain timed out: %" G_GUINT64_FORMAT " of %"
          G_GUINT64_FORMAT " buffers arrived", gb_link_received (l), l->pushed);
      return FALSE;
    }
    g_usleep (50);
  }
  if (gb_link_received (l) != l->pushed) {
    link_set_failure (l, "%" G_GUINT64_FORMAT " buffers arrived, %"
        G_GUINT64_FORMAT " pushed", gb_link_received (l), l->pushed);
    return FALSE;
  }
  return !atomic_load (&l->failed);
}

void
gb_link_free (GbLink * l)
{
  gb_link_stall (l, FALSE);
  if (l->elem)
    gst_element_set_state (l->elem, GST_STATE_NULL);
  gst_pad_set_active (l->src, FALSE);
  gst_pad_set_active (l->sink, FALSE);
  if (l->elem) {
    GstPad *esink = gst_element_get_static_pad (l->elem, "sink");
    GstPad *esrc = gst_element_get_static_pad (l->elem, "src");

    gst_pad_unlink (l->src, esink);
    gst_pad_unlink (esrc, l->sink);
    gst_object_unref (esink);
    gst_object_unref (esrc);
    gb_threads_free (l->threads, l->elem);
    gst_object_unref (l->elem);
  } else {
    gst_pad_unlink (l->src, l->sink);
  }
  gst_object_unref (l->src);
  gst_object_unref (l->sink);
  if (l->pool) {
    gst_buffer_pool_set_active (l->pool, FALSE);
    gst_object_unref (l->pool);
  }
  pthread_mutex_destroy (&l->lock);
  pthread_cond_destroy (&l->cond);
  g_free (l);
}

/* ---- the pushing thread's table ---- */

#define TABLE_BYTES (48 * 1024)
#define NODE_BYTES 64
#define TABLE_NODES (TABLE_BYTES / NODE_BYTES)
#define QUERY_NODES 8

typedef struct
{
  guint32 next;
  guint32 hits;
  guint64 v[7];
} GbNode;

G_STATIC_ASSERT (sizeof (GbNode) == NODE_BYTES);

static GbNode table[TABLE_NODES] __attribute__((aligned (64)));
static guint64 rng_state;
static volatile guint64 table_sink;

GB_INLINE guint64
rng_next (void)
{
  guint64 x = rng_state;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * G_GUINT64_CONSTANT (2685821657736338717);
}

void
gb_table_init (guint64 seed)
{
  guint32 perm[TABLE_NODES];
  guint i;

  rng_state = seed ? seed : 42;
  for (i = 0; i < TABLE_NODES; i++)
    perm[i] = i;
  /* Sattolo: one cycle through every node, in random order. */
  for (i = TABLE_NODES - 1; i > 0; i--) {
    guint j = (guint) (rng_next () % i);
    guint32 t = perm[i];

    perm[i] = perm[j];
    perm[j] = t;
  }
  for (i = 0; i < TABLE_NODES; i++) {
    guint k;

    table[perm[i]].next = perm[(i + 1) % TABLE_NODES];
    table[i].hits = 0;
    for (k = 0; k < 7; k++)
      table[i].v[k] = rng_next ();
  }
}

GB_NOINLINE guint64
gb_table_query (void)
{
  guint32 i = (guint32) (((rng_next () >> 32) * TABLE_NODES) >> 32);
  guint64 acc = 0;
  guint k;

  for (k = 0; k < QUERY_NODES; k++) {
    GbNode *n = &table[i];

    n->v[k % 7] += acc | 1;
    n->hits++;
    acc += n->v[(k + 3) % 7];
    i = n->next;
  }
  return acc;
}

void
gb_table_warm (guint queries)
{
  guint64 acc = 0;
  guint i;

  for (i = 0; i < TABLE_NODES; i++)
    acc += table[i].v[i % 7]++;
  for (i = 0; i < queries; i++)
    acc ^= gb_table_query ();
  table_sink = acc;
}

void
gb_table_time_groups (double *out, guint groups, guint per_group)
{
  guint64 acc = 0;
  guint g, q;

  for (g = 0; g < groups; g++) {
    guint64 t0 = gb_ticks (), t1;

    for (q = 0; q < per_group; q++)
      acc ^= gb_table_query ();
    t1 = gb_ticks ();
    out[g] = gb_ticks_to_ns (t1 - t0) / per_group;
  }
  table_sink = acc;
}

/* ---- children ---- */

gchar *
gb_run_child (const gchar * const *argv, gint * status)
{
  gchar *out = NULL;
  GError *err = NULL;
  gint st = 0;

  if (!g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_CHILD_INHERITS_STDIN,
          NULL, NULL, &out, NULL, &st, &err))
    gb_die ("cannot run %s: %s", argv[0], err->message);
  *status = st;
  return out;
}

gchar **
gb_run_child_rows (const gchar * const *argv, const gchar * what,
    gint * failures)
{
  gint status;
  gchar *out = gb_run_child (argv, &status);
  gchar **lines = g_strsplit (out, "\n", -1);
  GPtrArray *rows = g_ptr_array_new ();
  guint li;

  if (!g_spawn_check_wait_status (status, NULL)) {
    (*failures)++;
    fprintf (stderr, "%s: child failed\n", what);
  }
  for (li = 0; lines[li]; li++)
    if (g_str_has_prefix (lines[li], "row,"))
      g_ptr_array_add (rows, g_strdup (lines[li] + 4));
  g_ptr_array_add (rows, NULL);
  g_strfreev (lines);
  g_free (out);
  return (gchar **) g_ptr_array_free (rows, FALSE);
}

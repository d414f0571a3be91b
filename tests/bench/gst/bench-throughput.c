/* gst-bench throughput: whole pipelines, buffers per second and CPU.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * WHAT IS MEASURED
 *   SOURCE ! X ! fakesink sync=false async=false enable-last-sample=false
 *   for X in identity (no thread boundary), queue, queue2 and tbqueue in
 *   each transfer mode, and SOURCE one of
 *     fakesrc   fakesrc sizetype=fixed filltype=pattern-span: GStreamer's own
 *               test source (it fills every byte, one at a time)
 *     src-fresh gbsrc, a GstPushSrc of ours pushing from its own streaming
 *               thread; gst_buffer_new_allocate() per buffer
 *     src-pool  gbsrc taking its buffers from a GstBufferPool (unbounded)
 *     src-pool4 gbsrc with a pool of at most 4 buffers, as a camera's
 *               capture queue: when all 4 are downstream it waits for one
 *   with buffers of 32 B, 1 KiB, 64 KiB and 1 MiB.  A probe on fakesink's
 *   sink pad verifies every buffer (GST_BUFFER_OFFSET and every byte: for
 *   fakesrc the continuous byte pattern, for gbsrc the benchmark payload)
 *   and takes the clock and getrusage() at the first and the last buffer:
 *   buffers/s = (N - 1) / time between them, CPU seconds per buffer =
 *   process CPU (all threads) between them / (N - 1).
 *
 * LIMITS (the same for every queue, so that none is compared on capacity):
 *   max-size-buffers=10000 max-size-bytes=64 MiB max-size-time=0; tbqueue
 *   also sink-max-bytes=1 GiB.  Every tbqueue has its default pool
 *   geometry: buffers of any size are copied (above a quarter of a source
 *   block into extents of the sink pool), and which ones are is the
 *   element's rule (`copied` column; checked where it is certain).
 *
 * WHAT IT DOES NOT MEAN: fakesrc and gbsrc cost time per buffer (fill,
 * allocation) and the probe verifies every byte; these are the same for all
 * contenders, identity shows the ceiling they leave.  Two vCPUs: a queue's
 * threads share them with the source's and the sink's.
 *
 * OPTIONS
 *   --sizes 32,1024,65536,1048576   --sources fakesrc,src-fresh,src-pool
 *   --contenders identity,queue,...  --buffers N (all sizes)
 *   --consumer verify (the default: every byte checked, which costs about
 *              what gbsrc's fill costs: a consumer about as fast as the
 *              source, that falls behind whenever it is descheduled) or
 *              read (every byte read, summed, and the buffer's number
 *              checked: a consumer that keeps up)
 */
#include "gst-bench.h"

#include <gst/base/gstpushsrc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIMITS "max-size-buffers=10000 max-size-bytes=67108864 max-size-time=0 " \
  "sink-max-bytes=1073741824"

/* ---- gbsrc: a push source of benchmark payloads ---- */

typedef struct
{
  GstPushSrc parent;
  guint size;
  gboolean use_pool;
  guint max_buffers;            /* of the pool; 0 = unbounded */
  guint64 seq;
  GstBufferPool *pool;
} GbSrc;

typedef struct
{
  GstPushSrcClass parent_class;
} GbSrcClass;

enum
{
  PROP_0,
  PROP_SIZE,
  PROP_USE_POOL,
  PROP_MAX_BUFFERS,
};

GType gb_src_get_type (void);
G_DEFINE_TYPE (GbSrc, gb_src, GST_TYPE_PUSH_SRC);

static GstStaticPadTemplate gb_src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
gb_src_set_property (GObject * obj, guint id, const GValue * v,
    GParamSpec * pspec)
{
  GbSrc *s = (GbSrc *) obj;

  switch (id) {
    case PROP_SIZE:
      s->size = g_value_get_uint (v);
      break;
    case PROP_USE_POOL:
      s->use_pool = g_value_get_boolean (v);
      break;
    case PROP_MAX_BUFFERS:
      s->max_buffers = g_value_get_uint (v);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (obj, id, pspec);
  }
}

static void
gb_src_get_property (GObject * obj, guint id, GValue * v, GParamSpec * pspec)
{
  GbSrc *s = (GbSrc *) obj;

  switch (id) {
    case PROP_SIZE:
      g_value_set_uint (v, s->size);
      break;
    case PROP_USE_POOL:
      g_value_set_boolean (v, s->use_pool);
      break;
    case PROP_MAX_BUFFERS:
      g_value_set_uint (v, s->max_buffers);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (obj, id, pspec);
  }
}

static gboolean
gb_src_start (GstBaseSrc * bs)
{
  GbSrc *s = (GbSrc *) bs;

  s->seq = 0;
  if (s->use_pool) {
    GstStructure *config;

    s->pool = gst_buffer_pool_new ();
    config = gst_buffer_pool_get_config (s->pool);
    gst_buffer_pool_config_set_params (config, NULL, s->size, 0,
        s->max_buffers);
    if (!gst_buffer_pool_set_config (s->pool, config)
        || !gst_buffer_pool_set_active (s->pool, TRUE))
      return FALSE;
  }
  return TRUE;
}

static gboolean
gb_src_stop (GstBaseSrc * bs)
{
  GbSrc *s = (GbSrc *) bs;

  if (s->pool) {
    gst_buffer_pool_set_active (s->pool, FALSE);
    gst_object_unref (s->pool);
    s->pool = NULL;
  }
  return TRUE;
}

static GstFlowReturn
gb_src_create (GstPushSrc * ps, GstBuffer ** out)
{
  GbSrc *s = (GbSrc *) ps;
  GstBuffer *buf;
  GstMapInfo map;

  if (s->pool) {
    GstFlowReturn ret = gst_buffer_pool_acquire_buffer (s->pool, &buf, NULL);

    if (ret != GST_FLOW_OK)
      return ret;
  } else {
    buf = gst_buffer_new_allocate (NULL, s->size, NULL);
  }
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  gb_payload_fill (map.data, s->size, s->seq, 0);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_OFFSET (buf) = s->seq++;
  *out = buf;
  return GST_FLOW_OK;
}

static void
gb_src_class_init (GbSrcClass * klass)
{
  GObjectClass *oc = G_OBJECT_CLASS (klass);
  GstElementClass *ec = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *bc = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pc = GST_PUSH_SRC_CLASS (klass);

  oc->set_property = gb_src_set_property;
  oc->get_property = gb_src_get_property;
  g_object_class_install_property (oc, PROP_SIZE,
      g_param_spec_uint ("size", "Size", "Payload bytes per buffer (multiple "
          "of 8, at least 16)", 16, G_MAXUINT, 32, G_PARAM_READWRITE));
  g_object_class_install_property (oc, PROP_USE_POOL,
      g_param_spec_boolean ("use-pool", "Use pool", "Take buffers from a "
          "GstBufferPool instead of allocating each", FALSE,
          G_PARAM_READWRITE));
  g_object_class_install_property (oc, PROP_MAX_BUFFERS,
      g_param_spec_uint ("max-buffers", "Max buffers", "Most buffers the "
          "pool holds (0 = unbounded)", 0, G_MAXUINT, 0, G_PARAM_READWRITE));
  gst_element_class_add_static_pad_template (ec, &gb_src_template);
  gst_element_class_set_static_metadata (ec, "Benchmark source", "Source",
      "Pushes numbered, verifiable payloads", "The tbqueue authors");
  bc->start = gb_src_start;
  bc->stop = gb_src_stop;
  pc->create = gb_src_create;
}

static void
gb_src_init (GbSrc * s)
{
  s->size = 32;
}

/* ---- one pipeline run ---- */

typedef struct
{
  gboolean fakesrc;
  gboolean read_only;           /* --consumer read */
  guint64 sum;
  gsize size;
  guint64 n;
  guint64 seen;
  gboolean failed;
  gchar failure[200];
  guint64 t_first, t_last;
  double cpu_first, cpu_last;
} Probe;

static GstPadProbeReturn
probe_cb (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Probe *p = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 seq = p->seen, stamp;
  GstMapInfo map;
  gboolean ok;

  if (seq == 0) {
    p->t_first = gb_now_ns ();
    p->cpu_first = gb_cpu_seconds ();
  }
  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    ok = FALSE;
  } else if (map.size != p->size) {
    ok = FALSE;
  } else if (p->read_only && !p->fakesrc) {
    guint64 first, sum = 0;
    gsize i;

    for (i = 0; i + 8 <= map.size; i += 8) {
      guint64 w;

      memcpy (&w, map.data + i, 8);
      sum += w;
    }
    p->sum += sum;
    memcpy (&first, map.data, 8);
    ok = GST_BUFFER_OFFSET (buf) == seq && first == seq;
  } else if (p->fakesrc) {
    /* pattern-span: byte k of the stream is k & 0xff. */
    guint8 base = (guint8) (seq * p->size), bad = 0;
    gsize i;

    for (i = 0; i < map.size; i++)
      bad |= map.data[i] ^ (guint8) (base + i);
    ok = bad == 0 && GST_BUFFER_OFFSET (buf) == seq * p->size;
  } else {
    ok = GST_BUFFER_OFFSET (buf) == seq
        && gb_payload_check (map.data, map.size, seq, &stamp);
  }
  if (map.memory)
    gst_buffer_unmap (buf, &map);
  if (!ok && !p->failed) {
    p->failed = TRUE;
    g_snprintf (p->failure, sizeof p->failure, "buffer %" G_GUINT64_FORMAT
        " (offset %" G_GUINT64_FORMAT ", %" G_GSIZE_FORMAT
        " bytes): FIFO position or content wrong", seq,
        GST_BUFFER_OFFSET (buf), gst_buffer_get_size (buf));
  }
  p->seen = seq + 1;
  if (p->seen == p->n) {
    p->t_last = gb_now_ns ();
    p->cpu_last = gb_cpu_seconds ();
  }
  return GST_PAD_PROBE_OK;
}

typedef struct
{
  gint run;
  const gchar *source;
  gsize size;
  const GbContender *contender;
  gint order;
  guint64 buffers;
  double seconds, bps, cpu_s, cpu_us_per_buffer, wall_total_s;
  guint64 copied, referenced;
  gchar *stats;
  double load1;
  gboolean ok;
  gchar failure[256];
} Cell;

/* Whether the source's buffers belong to a buffer pool: 1, 0, or -1 when
 * it is up to the source (fakesrc, through GstBaseSrc's allocation). */
static gint
source_pooled (const gchar * source)
{
  if (g_str_has_prefix (source, "src-pool"))
    return 1;
  return strcmp (source, "src-fresh") == 0 ? 0 : -1;
}

static gboolean consumer_read;

static void
run_cell (Cell * cell)
{
  GstElement *pipe = gst_pipeline_new (NULL), *src, *x, *sink;
  GstBus *bus;
  GstMessage *msg;
  GstPad *pad;
  Probe p = { 0 };
  guint64 t_play;
  gint want_copy;
  const GbContender *c = cell->contender;

  p.size = cell->size;
  p.n = cell->buffers;
  p.read_only = consumer_read;
  if (strcmp (cell->source, "fakesrc") == 0) {
    p.fakesrc = TRUE;
    src = gst_element_factory_make ("fakesrc", NULL);
    g_object_set (src, "num-buffers", (gint) cell->buffers, "sizemax",
        (gint) cell->size, "sizemin", (gint) cell->size, NULL);
    gst_util_set_object_arg (G_OBJECT (src), "sizetype", "fixed");
    gst_util_set_object_arg (G_OBJECT (src), "filltype", "pattern-span");
  } else {
    src = g_object_new (gb_src_get_type (), "num-buffers", (gint) cell->buffers,
        "size", (guint) cell->size, "use-pool",
        g_str_has_prefix (cell->source, "src-pool"), "max-buffers",
        strcmp (cell->source, "src-pool4") == 0 ? 4 : 0, NULL);
  }
  x = gb_contender_make (c, LIMITS);
  sink = gst_element_factory_make ("fakesink", NULL);
  g_object_set (sink, "sync", FALSE, "async", FALSE, "enable-last-sample",
      FALSE, NULL);
  gst_bin_add_many (GST_BIN (pipe), src, x, sink, NULL);
  if (!gst_element_link_many (src, x, sink, NULL))
    gb_die ("throughput: cannot link %s", c->name);
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe_cb, &p, NULL);
  gst_object_unref (pad);

  cell->load1 = gb_load_average ();
  bus = gst_element_get_bus (pipe);
  t_play = gb_now_ns ();
  if (gst_element_set_state (pipe, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE)
    gb_die ("throughput: %s: cannot go to PLAYING", c->name);
  msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  cell->wall_total_s = (gb_now_ns () - t_play) / 1e9;
  cell->ok = TRUE;
  if (msg == NULL || GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS) {
    GError *err = NULL;

    if (msg)
      gst_message_parse_error (msg, &err, NULL);
    cell->ok = FALSE;
    g_snprintf (cell->failure, sizeof cell->failure, "no EOS: %s",
        err ? err->message : "timeout");
    g_clear_error (&err);
  } else if (p.failed) {
    cell->ok = FALSE;
    g_snprintf (cell->failure, sizeof cell->failure, "%s", p.failure);
  } else if (p.seen != p.n) {
    cell->ok = FALSE;
    g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
        " buffers arrived, %" G_GUINT64_FORMAT " sent", p.seen, p.n);
  }
  if (msg)
    gst_message_unref (msg);
  gb_tbqueue_transfer_counts (x, &cell->copied, &cell->referenced);
  cell->stats = gb_tbqueue_stats_brief (x);
  want_copy = gb_tbqueue_expects_copy (x, cell->size,
      source_pooled (cell->source));
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);

  if (cell->ok && (want_copy >= 0 || cell->copied + cell->referenced > 0)) {
    guint64 want = want_copy ? cell->buffers : 0;

    if ((want_copy >= 0 && cell->copied != want)
        || cell->copied + cell->referenced != cell->buffers) {
      cell->ok = FALSE;
      g_snprintf (cell->failure, sizeof cell->failure, "%" G_GUINT64_FORMAT
          " buffers copied, %" G_GUINT64_FORMAT " referenced: not the "
          "transfer mode asked for", cell->copied, cell->referenced);
    }
  }
  if (cell->ok) {
    cell->seconds = (p.t_last - p.t_first) / 1e9;
    cell->bps = (double) (p.n - 1) / cell->seconds;
    cell->cpu_s = p.cpu_last - p.cpu_first;
    cell->cpu_us_per_buffer = cell->cpu_s / (double) (p.n - 1) * 1e6;
  }
}

static guint64
buffers_for (gsize size, gboolean smoke, guint64 force, gboolean fakesrc)
{
  if (force)
    return force;
  /* fakesrc writes every byte one at a time: fewer large buffers. */
  if (fakesrc && size > 4096)
    return smoke ? 10 : size <= 65536 ? 5000 : 300;
  if (size <= 64)
    return smoke ? 3000 : 500000;
  if (size <= 4096)
    return smoke ? 2000 : 300000;
  if (size <= 65536)
    return smoke ? 200 : 20000;
  if (size <= 1048576)
    return smoke ? 20 : 1500;
  return smoke ? 10 : 600;
}

int
gb_throughput_main (GbCommon * c, int argc, char **argv)
{
  const gchar *sizes_s = "32,1024,65536,1048576";
  const gchar *sources_s = "fakesrc,src-fresh,src-pool";
  const gchar *names = "identity,queue,queue2,tbqueue,tbqueue-copy,tbqueue-ref";
  guint64 force = 0;
  const GbContender *cont[16];
  gint ncont, i, run, ncells = 0, failures = 0;
  gchar **sizes, **sources;
  Cell *cells;
  FILE *f;
  gint si, so, k;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes_s = argv[++i];
    else if (strcmp (argv[i], "--sources") == 0 && i + 1 < argc)
      sources_s = argv[++i];
    else if (strcmp (argv[i], "--contenders") == 0 && i + 1 < argc)
      names = argv[++i];
    else if (strcmp (argv[i], "--buffers") == 0 && i + 1 < argc)
      force = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--consumer") == 0 && i + 1 < argc) {
      const gchar *v = argv[++i];

      if (strcmp (v, "read") != 0 && strcmp (v, "verify") != 0)
        gb_die ("throughput: --consumer verify or read");
      consumer_read = strcmp (v, "read") == 0;
    }
    else
      gb_die ("throughput: unknown option %s", argv[i]);
  }
  gb_gst_init ();
  if (!gst_element_register (NULL, "gbsrc", GST_RANK_NONE, gb_src_get_type ()))
    gb_die ("cannot register gbsrc");
  ncont = gb_contenders_select (c, names, cont, G_N_ELEMENTS (cont));
  sizes = g_strsplit (sizes_s, ",", -1);
  sources = g_strsplit (sources_s, ",", -1);
  cells = g_new0 (Cell, c->runs * g_strv_length (sizes)
      * g_strv_length (sources) * ncont);

  if ((f = gb_out_open (c, "meta.json"))) {
    gb_meta_begin (f, c);
    fprintf (f, ",\n  \"params\": {\"runs\": %d, \"sizes\": \"%s\", "
        "\"sources\": \"%s\", \"limits\": \"%s\", \"buffers\": {",
        c->runs, sizes_s, sources_s, LIMITS);
    for (si = 0; sizes[si]; si++)
      fprintf (f, "%s\"%s\": %" G_GUINT64_FORMAT, si ? ", " : "", sizes[si],
          buffers_for (g_ascii_strtoull (sizes[si], NULL, 10), c->smoke,
              force, FALSE));
    fprintf (f, "}, \"buffers_fakesrc\": {");
    for (si = 0; sizes[si]; si++)
      fprintf (f, "%s\"%s\": %" G_GUINT64_FORMAT, si ? ", " : "", sizes[si],
          buffers_for (g_ascii_strtoull (sizes[si], NULL, 10), c->smoke,
              force, TRUE));
    fprintf (f, "}, \"sink\": \"fakesink sync=false async=false "
        "enable-last-sample=false, buffer probe %s\"},\n", consumer_read
        ? "reading every byte and checking each buffer's number"
        : "verifying every byte");
    gb_meta_end (f, cont, ncont);
  }

  for (run = 0; run < c->runs; run++) {
    for (so = 0; sources[so]; so++) {
      for (si = 0; sizes[si]; si++) {
        gsize size = g_ascii_strtoull (sizes[si], NULL, 10);

        if (size < 16 || size % 8)
          gb_die ("sizes must be multiples of 8, at least 16");
        for (k = 0; k < ncont; k++) {
          /* Rotate who goes first from cell group to cell group. */
          gint idx = (k + run + si + so) % ncont;
          Cell *cell = &cells[ncells++];

          cell->run = run;
          cell->source = sources[so];
          cell->size = size;
          cell->contender = cont[idx];
          cell->order = k;
          cell->buffers = buffers_for (size, c->smoke, force,
              strcmp (sources[so], "fakesrc") == 0);
          run_cell (cell);
          if (!cell->ok) {
            failures++;
            fprintf (stderr, "throughput %s %" G_GSIZE_FORMAT " B %s: %s\n",
                cell->source, size, cell->contender->name, cell->failure);
          }
          printf ("# run %d %-9s %8" G_GSIZE_FORMAT " B %-13s %12.0f buf/s "
              "%8.3f us CPU/buf%s\n", run, cell->source, size,
              cell->contender->name, cell->bps, cell->cpu_us_per_buffer,
              cell->ok ? "" : "  FAILED");
        }
      }
    }
  }

  if ((f = gb_out_open (c, "runs.csv"))) {
    fprintf (f, "run,source,size,contender,order,buffers,seconds,"
        "buffers_per_s,cpu_s,cpu_us_per_buffer,wall_total_s,copied,"
        "referenced,load1,ok,tbqueue_stats\n");
    for (i = 0; i < ncells; i++) {
      Cell *x = &cells[i];

      fprintf (f, "%d,%s,%" G_GSIZE_FORMAT ",%s,%d,%" G_GUINT64_FORMAT
          ",%.6f,%.1f,%.6f,%.4f,%.4f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
          ",%.2f,%d,%s\n", x->run, x->source, x->size, x->contender->name,
          x->order, x->buffers, x->seconds, x->bps, x->cpu_s,
          x->cpu_us_per_buffer, x->wall_total_s, x->copied, x->referenced,
          x->load1, x->ok, x->stats ? x->stats : "");
    }
    fclose (f);
  }

  /* TAP: one line per source and contender, over every size and run. */
  for (so = 0; sources[so]; so++)
    for (k = 0; k < ncont; k++) {
      gboolean ok = TRUE;
      const gchar *why = "";

      for (i = 0; i < ncells; i++)
        if (cells[i].contender == cont[k]
            && strcmp (cells[i].source, sources[so]) == 0 && !cells[i].ok) {
          ok = FALSE;
          why = cells[i].failure;
        }
      gb_tap (c, ok, "throughput %s ! %s ! fakesink: every buffer verified%s%s",
          sources[so], cont[k]->name, ok ? "" : ": ", why);
    }
  for (i = 0; i < ncells; i++)
    g_free (cells[i].stats);
  g_strfreev (sizes);
  g_strfreev (sources);
  g_free (cells);
  return failures ? 1 : 0;
}

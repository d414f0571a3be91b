/* tbqlevels: a tracer that records the levels of every queue-like element
 * (queue, queue2, multiqueue, tbqueue and their subclasses) over time.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:tracer-tbqlevels
 * @title: tbqlevels
 *
 * Samples the levels of every `queue`, `queue2`, `multiqueue` and `tbqueue`
 * (and of every subclass of them) in the process: buffers, bytes and time
 * queued and the element's `max-size-*` limits; for tbqueue also its pools
 * (source blocks in use, sink pool bytes in use: its blocks and the memory
 * of copied frames, `sink-max-bytes`).  A
 * sample is taken when a buffer or buffer list enters or leaves the element,
 * at most once per `period` milliseconds per element, and at every state
 * change of the element.  Levels are read through the elements' own
 * properties (`current-level-*`, multiqueue's per-pad levels, tbqueue's
 * `stats`), so the tracer works on any element of these types.
 *
 * Each sample is logged in the `tbqlevels` debug category (DEBUG level), as
 * a `tbqlevels` tracer record (`GST_DEBUG=GST_TRACER:7`, readable as a
 * #GstStructure) and, with `file=`, as a CSV line, written through as it is
 * taken: a process that is killed (SIGTERM, SIGINT, even SIGKILL) keeps
 * every sample taken before.
 *
 * ## Parameters
 *
 * * `file`: path of a CSV file to write (default: none).
 * * `period`: milliseconds between two samples of one element (default 10;
 *   0 samples every buffer).
 *
 * ## Example
 * |[
 * GST_TRACERS="tbqlevels(file=/tmp/levels.csv,period=5)" \
 *   gst-launch-1.0 videotestsrc num-buffers=300 ! tbqueue ! fakesink sync=true
 * ]|
 *
 * Since: 0.2
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (gst_tbq_levels_debug);
#define GST_CAT_DEFAULT gst_tbq_levels_debug

#define GST_TYPE_TBQ_LEVELS_TRACER (gst_tbq_levels_tracer_get_type ())
G_DECLARE_FINAL_TYPE (GstTbqLevelsTracer, gst_tbq_levels_tracer, GST,
    TBQ_LEVELS_TRACER, GstTracer);

#define DEFAULT_PERIOD_MS 10

/* The CSV header; one column per field of the tracer record, same names. */
#define CSV_HEADER "ts,element,kind,queue," \
  "current-level-buffers,current-level-bytes,current-level-time," \
  "max-size-buffers,max-size-bytes,max-size-time," \
  "source-blocks-in-use,source-blocks,sink-bytes-in-use,sink-max-bytes," \
  "spill-level-bytes\n"

typedef enum
{
  KIND_TBQUEUE,
  KIND_QUEUE,
  KIND_QUEUE2,
  KIND_MULTIQUEUE,
  N_KINDS
} Kind;

/* Matched by GType, subclasses included; looked up by name so that the
 * plugins that hold them load only if a pipeline uses them. */
static const struct
{
  const gchar *type_name;
  const gchar *kind;
} kinds[N_KINDS] = {
  {"GstTbQueue", "tbqueue"},
  {"GstQueue", "queue"},
  {"GstQueue2", "queue2"},
  {"GstMultiQueue", "multiqueue"},
};

struct _GstTbqLevelsTracer
{
  GstTracer parent;

  GstClockTime period;
  GQuark quark;                 /* qdata key of this tracer's Tracked */
  GstTracerRecord *record;

  gchar *path;                  /* file= */
  FILE *file;                   /* set once at construction, NULL if none */
  GMutex lock;                  /* guards writes to file */
};

G_DEFINE_TYPE_WITH_CODE (GstTbqLevelsTracer, gst_tbq_levels_tracer,
    GST_TYPE_TRACER,
    GST_DEBUG_CATEGORY_INIT (gst_tbq_levels_debug, "tbqlevels", 0,
        "levels of queue, queue2, multiqueue and tbqueue elements"));

/* What the tracer keeps on a tracked element (its qdata). */
typedef struct
{
  Kind kind;
  /* Earliest timestamp of the next periodic sample.  Only this field is
   * shared between the element's streaming threads, and it publishes
   * nothing else: relaxed loads and compare-exchange suffice. */
  _Atomic guint64 next_ts;
} Tracked;

/* One sample of one queue (of a multiqueue: one of its single queues). */
typedef struct
{
  gint queue;                   /* multiqueue's single queue, or -1 */
  guint64 buffers, bytes, time;
  guint64 max_buffers, max_bytes, max_time;
  gboolean has_pools;           /* tbqueue: the pool fields are set */
  guint64 source_blocks_in_use, source_blocks;
  guint64 sink_bytes_in_use, sink_max_bytes;
  guint64 spill_level_bytes;    /* tbqueue: in its spill file, unread */
} Levels;

/* ---- reading levels through properties ---- */

/* A readable integer property of `obj` as guint64; 0 if there is none. */
static guint64
get_u64 (gpointer obj, const gchar * name)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (obj), name);
  GValue v = G_VALUE_INIT, u = G_VALUE_INIT;
  guint64 result = 0;

  if (pspec == NULL || !(pspec->flags & G_PARAM_READABLE))
    return 0;
  g_value_init (&v, pspec->value_type);
  g_value_init (&u, G_TYPE_UINT64);
  g_object_get_property (G_OBJECT (obj), name, &v);
  if (g_value_transform (&v, &u))
    result = g_value_get_uint64 (&u);
  g_value_unset (&u);
  g_value_unset (&v);
  return result;
}

static void
read_current (gpointer obj, Levels * l)
{
  l->buffers = get_u64 (obj, "current-level-buffers");
  l->bytes = get_u64 (obj, "current-level-bytes");
  l->time = get_u64 (obj, "current-level-time");
}

static void
read_limits (GstElement * element, Levels * l)
{
  l->max_buffers = get_u64 (element, "max-size-buffers");
  l->max_bytes = get_u64 (element, "max-size-bytes");
  l->max_time = get_u64 (element, "max-size-time");
}

/* tbqueue's pools, from its stats structure.  The sink pool's memory in
 * use is all that counts against sink-max-bytes: its blocks and the
 * memory of copied frames (stats' sink-bytes-in-use). */
static void
read_pools (GstElement * element, Levels * l)
{
  GstStructure *s = NULL;

  g_object_get (element, "stats", &s, NULL);
  if (s == NULL)
    return;
  l->has_pools =
      gst_structure_get_uint64 (s, "source-blocks-in-use",
      &l->source_blocks_in_use)
      && gst_structure_get_uint64 (s, "source-blocks", &l->source_blocks)
      && gst_structure_get_uint64 (s, "sink-bytes-in-use",
      &l->sink_bytes_in_use)
      && gst_structure_get_uint64 (s, "spill-level-bytes",
      &l->spill_level_bytes);
  gst_structure_free (s);
  l->sink_max_bytes = get_u64 (element, "sink-max-bytes");
}

/* "sink_3" -> 3: the single queue a multiqueue pad belongs to. */
static gint
pad_queue_index (GstPad * pad)
{
  gchar *name = gst_pad_get_name (pad);
  const gchar *us = strrchr (name, '_');
  gint index = -1;

  if (us != NULL && g_ascii_isdigit (us[1]))
    index = (gint) g_ascii_strtoll (us + 1, NULL, 10);
  g_free (name);
  return index;
}

/* ---- output ---- */

/* An element name as a CSV field: quoted if it holds a comma, a quote or a
 * line break (RFC 4180). */
static gchar *
csv_field (const gchar * name)
{
  GString *s;
  const gchar *c;

  if (strpbrk (name, ",\"\r\n") == NULL)
    return g_strdup (name);
  s = g_string_new ("\"");
  for (c = name; *c != '\0'; c++) {
    if (*c == '"')
      g_string_append_c (s, '"');
    g_string_append_c (s, *c);
  }
  g_string_append_c (s, '"');
  return g_string_free (s, FALSE);
}

static void
write_csv (GstTbqLevelsTracer * self, GstClockTime ts, const gchar * name,
    const gchar * kind, const Levels * l)
{
  gchar queue[16] = "", pools[128] = ",,,,";
  gchar *field;

  if (l->queue >= 0)
    g_snprintf (queue, sizeof queue, "%d", l->queue);
  if (l->has_pools)
    g_snprintf (pools, sizeof pools, "%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
        G_GUINT64_FORMAT, l->source_blocks_in_use, l->source_blocks,
        l->sink_bytes_in_use, l->sink_max_bytes, l->spill_level_bytes);

  if (self->file == NULL)
    return;
  field = csv_field (name);
  g_mutex_lock (&self->lock);
  fprintf (self->file, "%" G_GUINT64_FORMAT ",%s,%s,%s,%" G_GUINT64_FORMAT
      ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
      ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s\n", ts, field, kind,
      queue, l->buffers, l->bytes, l->time, l->max_buffers, l->max_bytes,
      l->max_time, pools);
  g_mutex_unlock (&self->lock);
  g_free (field);
}

static void
emit (GstTbqLevelsTracer * self, GstClockTime ts, GstElement * element,
    const gchar * kind, const Levels * l)
{
  gchar *name = gst_object_get_name (GST_OBJECT_CAST (element));
  gchar queue[24] = "";

  if (l->queue >= 0)
    g_snprintf (queue, sizeof queue, "queue %d: ", l->queue);
  GST_DEBUG_OBJECT (element, "%s%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
      " buffers, %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes, %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " ns", queue, l->buffers,
      l->max_buffers, l->bytes, l->max_bytes, l->time, l->max_time);
  if (l->has_pools)
    GST_DEBUG_OBJECT (element, "source pool %" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " blocks, sink pool %" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " bytes in use, spill file %" G_GUINT64_FORMAT
        " bytes", l->source_blocks_in_use, l->source_blocks,
        l->sink_bytes_in_use, l->sink_max_bytes, l->spill_level_bytes);

  gst_tracer_record_log (self->record, (guint64) ts, name, kind,
      l->queue >= 0, (guint) MAX (l->queue, 0), l->buffers, l->bytes, l->time,
      l->max_buffers, l->max_bytes, l->max_time,
      l->has_pools, l->source_blocks_in_use, l->has_pools, l->source_blocks,
      l->has_pools, l->sink_bytes_in_use, l->has_pools, l->sink_max_bytes,
      l->has_pools, l->spill_level_bytes);
  write_csv (self, ts, name, kind, l);
  g_free (name);
}

/* Sample every single queue of a multiqueue, from its sink pads' levels
 * (the element's own if its pads have none). */
static void
sample_multiqueue (GstTbqLevelsTracer * self, GstClockTime ts,
    GstElement * element, const Levels * limits)
{
  GList *pads = NULL, *p;

  GST_OBJECT_LOCK (element);
  for (p = element->sinkpads; p != NULL; p = p->next)
    pads = g_list_prepend (pads, gst_object_ref (p->data));
  GST_OBJECT_UNLOCK (element);

  for (p = g_list_last (pads); p != NULL; p = p->prev) {
    Levels l = *limits;
    gpointer source = p->data;

    if (g_object_class_find_property (G_OBJECT_GET_CLASS (source),
            "current-level-buffers") == NULL)
      source = element;
    l.queue = pad_queue_index (p->data);
    read_current (source, &l);
    emit (self, ts, element, kinds[KIND_MULTIQUEUE].kind, &l);
  }
  g_list_free_full (pads, gst_object_unref);
}

static void
sample (GstTbqLevelsTracer * self, GstClockTime ts, GstElement * element,
    Kind kind)
{
  Levels l;

  memset (&l, 0, sizeof l);
  l.queue = -1;
  read_limits (element, &l);
  if (kind == KIND_MULTIQUEUE) {
    sample_multiqueue (self, ts, element, &l);
    return;
  }
  read_current (element, &l);
  if (kind == KIND_TBQUEUE)
    read_pools (element, &l);
  emit (self, ts, element, kinds[kind].kind, &l);
}

/* ---- hooks ---- */

/* A periodic sample is due: only one of the threads that see it due takes
 * it (period 0: every call). */
static gboolean
claim_sample (GstTbqLevelsTracer * self, Tracked * t, GstClockTime ts)
{
  guint64 next = atomic_load_explicit (&t->next_ts, memory_order_relaxed);

  if (self->period == 0)
    return TRUE;
  if (ts < next)
    return FALSE;
  return atomic_compare_exchange_strong_explicit (&t->next_ts, &next,
      ts + self->period, memory_order_relaxed, memory_order_relaxed);
}

/* A buffer entered or left through `pad`: sample its element if tracked
 * and due. */
static void
on_pad_data (GstTbqLevelsTracer * self, GstClockTime ts, GstPad * pad)
{
  GstObject *parent = gst_object_get_parent (GST_OBJECT_CAST (pad));
  Tracked *t;

  if (parent == NULL)
    return;
  t = g_object_get_qdata (G_OBJECT (parent), self->quark);
  if (t != NULL && claim_sample (self, t, ts))
    sample (self, ts, GST_ELEMENT_CAST (parent), t->kind);
  gst_object_unref (parent);
}

static void
do_push_pre (GObject * self, GstClockTime ts, GstPad * pad, gpointer data)
{
  on_pad_data (GST_TBQ_LEVELS_TRACER (self), ts, pad);
}

static void
do_chain_post (GObject * self, GstClockTime ts, GstPad * pad, GstFlowReturn r)
{
  on_pad_data (GST_TBQ_LEVELS_TRACER (self), ts, pad);
}

static void
do_change_state_post (GObject * object, GstClockTime ts,
    GstElement * element, GstStateChange transition,
    GstStateChangeReturn result)
{
  GstTbqLevelsTracer *self = GST_TBQ_LEVELS_TRACER (object);
  Tracked *t = g_object_get_qdata (G_OBJECT (element), self->quark);

  if (t == NULL)
    return;
  sample (self, ts, element, t->kind);
}

/* Every new element: remember the queue-like ones. */
static void
do_element_new (GObject * object, GstClockTime ts, GstElement * element)
{
  GstTbqLevelsTracer *self = GST_TBQ_LEVELS_TRACER (object);
  Tracked *t;
  guint i;

  for (i = 0; i < N_KINDS; i++) {
    GType type = g_type_from_name (kinds[i].type_name);

    if (type != 0 && G_TYPE_CHECK_INSTANCE_TYPE (element, type))
      break;
  }
  if (i == N_KINDS)
    return;
  t = g_new0 (Tracked, 1);
  t->kind = (Kind) i;
  atomic_init (&t->next_ts, 0);
  g_object_set_qdata_full (G_OBJECT (element), self->quark, t, g_free);
  GST_DEBUG_OBJECT (element, "tracking the levels of this %s", kinds[i].kind);
}

/* ---- parameters and set-up ---- */

static gboolean
parse_period (GstTbqLevelsTracer * self, const GstStructure * s)
{
  const GValue *v = gst_structure_get_value (s, "period");
  gint64 ms = -1;

  if (G_VALUE_HOLDS_INT (v))
    ms = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    ms = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    ms = g_value_get_int64 (v);
  /* Bounded so that a timestamp plus the period cannot overflow. */
  if (ms < 0 || ms > G_MAXINT64 / GST_MSECOND)
    return FALSE;
  self->period = ms * GST_MSECOND;
  return TRUE;
}

static gboolean
parse_param (GQuark field, const GValue * value, gpointer user_data)
{
  const gchar *name = g_quark_to_string (field);

  if (strcmp (name, "file") != 0 && strcmp (name, "period") != 0)
    g_warning ("tbqlevels: unknown parameter '%s' ignored (known: file, "
        "period)", name);
  return TRUE;
}

static void
parse_params (GstTbqLevelsTracer * self)
{
  gchar *params = NULL, *text;
  GstStructure *s;

  g_object_get (self, "params", &params, NULL);
  if (params == NULL)
    return;
  text = g_strdup_printf ("tbqlevels,%s", params);
  s = gst_structure_from_string (text, NULL);
  g_free (text);
  if (s == NULL) {
    g_warning ("tbqlevels: cannot parse parameters '%s' (expected e.g. "
        "file=/tmp/levels.csv,period=10); using the defaults", params);
    g_free (params);
    return;
  }
  gst_structure_foreach (s, parse_param, self);
  if (gst_structure_has_field (s, "file")) {
    if (gst_structure_has_field_typed (s, "file", G_TYPE_STRING))
      self->path = g_strdup (gst_structure_get_string (s, "file"));
    else
      g_warning ("tbqlevels: file must be a path; writing no CSV file");
  }
  if (gst_structure_has_field (s, "period") && !parse_period (self, s))
    g_warning ("tbqlevels: period must be a whole number of milliseconds "
        ">= 0; using %d", DEFAULT_PERIOD_MS);
  gst_structure_free (s);
  g_free (params);
}

static void
open_csv (GstTbqLevelsTracer * self)
{
  if (self->path == NULL)
    return;
  self->file = fopen (self->path, "w");
  if (self->file == NULL) {
    g_warning ("tbqlevels: cannot write %s: %s; levels are only logged",
        self->path, g_strerror (errno));
    return;
  }
  /* Each sample is written through, a line at a time, so that a process
   * killed by a signal (SIGTERM, SIGINT, SIGKILL alike: none runs stdio's
   * exit flush) keeps every sample taken before it: the moments before a
   * stall are the ones that matter.  At most one write per element per
   * period (a write per buffer with period=0). */
  setvbuf (self->file, NULL, _IOLBF, 0);
  fputs (CSV_HEADER, self->file);
  GST_INFO_OBJECT (self, "writing levels to %s every %" GST_TIME_FORMAT,
      self->path, GST_TIME_ARGS (self->period));
}

/* A field of the tracer record: a value of `type` in `scope`. */
static GstStructure *
record_field (GType type, GstTracerValueScope scope, gboolean optional,
    const gchar * description)
{
  return gst_structure_new ("value", "type", G_TYPE_GTYPE, type,
      "related", GST_TYPE_TRACER_VALUE_SCOPE, scope,
      "flags", GST_TYPE_TRACER_VALUE_FLAGS,
      optional ? GST_TRACER_VALUE_FLAGS_OPTIONAL : GST_TRACER_VALUE_FLAGS_NONE,
      "description", G_TYPE_STRING, description, NULL);
}

/* Fields of the tracer record, in gst_tracer_record_log()'s argument order:
 * per element unless said otherwise; OPTIONAL ones are preceded by a
 * gboolean that says whether they are set. */
#define FIELD(type, desc) \
  GST_TYPE_STRUCTURE, record_field (type, GST_TRACER_VALUE_SCOPE_ELEMENT, \
      FALSE, desc)
#define OPTIONAL(type, desc) \
  GST_TYPE_STRUCTURE, record_field (type, GST_TRACER_VALUE_SCOPE_ELEMENT, \
      TRUE, desc)

static GstTracerRecord *
record_new (void)
{
  GstTracerRecord *r;

  r = gst_tracer_record_new ("tbqlevels.class",
      "ts", GST_TYPE_STRUCTURE, record_field (G_TYPE_UINT64,
          GST_TRACER_VALUE_SCOPE_PROCESS, FALSE,
          "time of the sample (ns since tracing started)"),
      "element", FIELD (G_TYPE_STRING, "element name"),
      "kind", FIELD (G_TYPE_STRING, "queue, queue2, multiqueue or tbqueue"),
      "queue", OPTIONAL (G_TYPE_UINT, "multiqueue: its single queue"),
      "current-level-buffers", FIELD (G_TYPE_UINT64, "buffers queued"),
      "current-level-bytes", FIELD (G_TYPE_UINT64, "bytes queued"),
      "current-level-time", FIELD (G_TYPE_UINT64, "time queued (ns)"),
      "max-size-buffers", FIELD (G_TYPE_UINT64, "buffer limit (0: none)"),
      "max-size-bytes", FIELD (G_TYPE_UINT64, "byte limit (0: none)"),
      "max-size-time", FIELD (G_TYPE_UINT64, "time limit (ns, 0: none)"),
      "source-blocks-in-use", OPTIONAL (G_TYPE_UINT64, "tbqueue"),
      "source-blocks", OPTIONAL (G_TYPE_UINT64, "tbqueue: source pool size"),
      "sink-bytes-in-use", OPTIONAL (G_TYPE_UINT64,
          "tbqueue: sink pool memory counted against sink-max-bytes "
          "(blocks and frames)"),
      "sink-max-bytes", OPTIONAL (G_TYPE_UINT64, "tbqueue"),
      "spill-level-bytes", OPTIONAL (G_TYPE_UINT64,
          "tbqueue: bytes in its spill file not read back yet"), NULL);
  /* One per tracer, alive as long as it: not a leak. */
  GST_OBJECT_FLAG_SET (r, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  return r;
}

static void
gst_tbq_levels_tracer_constructed (GObject * object)
{
  GstTbqLevelsTracer *self = GST_TBQ_LEVELS_TRACER (object);
  GstTracer *tracer = GST_TRACER (object);
  gchar *key;

  G_OBJECT_CLASS (gst_tbq_levels_tracer_parent_class)->constructed (object);
  parse_params (self);
  open_csv (self);

  key = g_strdup_printf ("tbqlevels-%p", (gpointer) self);
  self->quark = g_quark_from_string (key);
  g_free (key);

  gst_tracing_register_hook (tracer, "element-new",
      G_CALLBACK (do_element_new));
  gst_tracing_register_hook (tracer, "pad-push-pre", G_CALLBACK (do_push_pre));
  gst_tracing_register_hook (tracer, "pad-push-list-pre",
      G_CALLBACK (do_push_pre));
  gst_tracing_register_hook (tracer, "pad-chain-post",
      G_CALLBACK (do_chain_post));
  gst_tracing_register_hook (tracer, "pad-chain-list-post",
      G_CALLBACK (do_chain_post));
  gst_tracing_register_hook (tracer, "element-change-state-post",
      G_CALLBACK (do_change_state_post));
}

static void
gst_tbq_levels_tracer_finalize (GObject * object)
{
  GstTbqLevelsTracer *self = GST_TBQ_LEVELS_TRACER (object);

  if (self->file != NULL && fclose (self->file) != 0)
    g_warning ("tbqlevels: writing %s failed: %s", self->path,
        g_strerror (errno));
  g_free (self->path);
  gst_object_unref (self->record);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (gst_tbq_levels_tracer_parent_class)->finalize (object);
}

static void
gst_tbq_levels_tracer_class_init (GstTbqLevelsTracerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);

  gobject_class->constructed = gst_tbq_levels_tracer_constructed;
  gobject_class->finalize = gst_tbq_levels_tracer_finalize;
}

static void
gst_tbq_levels_tracer_init (GstTbqLevelsTracer * self)
{
  self->period = DEFAULT_PERIOD_MS * GST_MSECOND;
  g_mutex_init (&self->lock);
  self->record = record_new ();
}

gboolean
gst_tbq_levels_tracer_register (GstPlugin * plugin)
{
  return gst_tracer_register (plugin, "tbqlevels", GST_TYPE_TBQ_LEVELS_TRACER);
}

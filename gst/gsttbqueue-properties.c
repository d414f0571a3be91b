/* tbqueue properties: one table, one entry per property, that installs
 * them, sets them and reads them back.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An entry says what gst-inspect-1.0 shows (name, nick, a one-line blurb,
 * type, range, default, flags), where the value lives (a field of
 * GstTbQueue and how it is shared between threads), when a change applies
 * (in any state, or only in NULL and READY), and, for a property with
 * behaviour of its own, its hooks.  Adding a property is adding an entry
 * (with its gtk-doc block, which the documentation is generated from), its
 * field, and the code that uses the value.
 *
 * What the range of a param spec expresses, GObject enforces: a value out
 * of range is refused with GLib's warning naming the property, before the
 * element sees it.  A value the range cannot express (a block size that is
 * no multiple of 64, a coalescing bound between 1 and 999 ns) is refused
 * by the entry's refuse hook when it is set: a warning message on the bus
 * (RESOURCE SETTINGS) and in the debug log names the property, and the
 * value in use is kept.  Values that are only wrong together (sink-min-bytes
 * above sink-max-bytes, sink-max-bytes below two sink blocks) can be set in
 * any order, so they are checked when the pools are made, at the READY to
 * PAUSED change (gsttbqueue.c).  Threads and locks: gsttbqueue-private.h.
 */
#include "gsttbqueue-properties.h"
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-enums.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"
#include "gsttbqueue-group.h"
#include "gsttbqueue-placement.h"
#include "gsttbqueue-stats.h"

/* queue's defaults */
#define DEFAULT_MAX_SIZE_BUFFERS  200
#define DEFAULT_MAX_SIZE_BYTES    (10 * 1024 * 1024)
#define DEFAULT_MAX_SIZE_TIME     GST_SECOND
/* tbqueue's own */
#define DEFAULT_TRANSFER          GST_TBQUEUE_TRANSFER_AUTO
#define DEFAULT_COPY_THRESHOLD    512
#define DEFAULT_SOURCE_BLOCK_SIZE 4096
#define DEFAULT_SOURCE_BLOCKS     4
#define DEFAULT_SINK_BLOCK_SIZE   65536
#define DEFAULT_SINK_MIN_BYTES    (256 * 1024)
#define DEFAULT_SINK_MAX_BYTES    (G_GUINT64_CONSTANT (256) * 1024 * 1024)
#define DEFAULT_IDLE_BLOCKS       16
#define DEFAULT_PUBLISH_BATCH     1
#define DEFAULT_MAX_COALESCE_LATENCY (500 * GST_USECOND)

/* libtbq's blocks: a multiple of 64 bytes (tbq.h, TbqPoolConfig), from 128
 * bytes to 1 GiB. */
#define BLOCK_ALIGN 64
#define MIN_BLOCK_SIZE 128
#define MAX_BLOCK_SIZE (1 << 30)

typedef struct _Property Property;

/* Where a property's value lives. */
typedef enum
{
  /* Nowhere the table knows: its set and get hooks keep it. */
  STORE_HOOKS,
  /* An _Atomic field of its type, read anywhere with relaxed loads and
   * stored with qlock held: the streaming threads decide under qlock, and
   * the src task is kicked after a change (limits and thresholds decide
   * when it may push). */
  STORE_ATOMIC,
  /* A plain field of its type under the object lock: the pool geometry,
   * read when the pools are made. */
  STORE_OBJECT_LOCK
} Store;

/* When a change applies. */
typedef enum
{
  /* At once, in any state (GST_PARAM_MUTABLE_PLAYING). */
  APPLIES_ANY_STATE,
  /* From the next READY to PAUSED change (GST_PARAM_MUTABLE_READY):
   * refused, with a warning message on the bus, while the pools exist. */
  APPLIES_READY
} Applies;

typedef union
{
  gint64 i;                     /* int, enum, boolean */
  guint64 u;                    /* uint, uint64 */
  gdouble d;                    /* double */
  const gchar *s;               /* string */
} Value;

struct _Property
{
  const gchar *name;
  const gchar *nick;
  const gchar *blurb;           /* one line of at most 100 characters; the
                                 * details are in the gtk-doc block */
  GType type;                   /* G_TYPE_UINT, _UINT64, _INT, _BOOLEAN,
                                 * _ENUM, _STRING, _BOXED, or, behind
                                 * hooks only, _INT64 or _DOUBLE */
  GType (*value_type) (void);   /* an enum's or a boxed type's GType */
  Value min, max, def;
  GParamFlags flags;            /* G_PARAM_READABLE or G_PARAM_READWRITE */
  Applies applies;
  Store store;
  gsize offset;                 /* the field, in GstTbQueue */
  gsize size;                   /* its size, checked against the type */

  /* Hooks, all optional.  set and changed run with qlock held, but for a
   * property the hooks keep that applies in any state (the placement
   * properties, which take their own lock). */
  /* A value the range cannot express: TRUE, and why, to refuse it (no
   * lock: it looks at the value alone). */
  gboolean (*refuse) (const GValue * value, gchar * why, gsize why_size);
  /* Stores the value instead of the table. */
  void (*set) (GstTbQueue * tbq, const Property * p, const GValue * value);
  /* After the table stored the value. */
  void (*changed) (GstTbQueue * tbq);
  /* Reads the value instead of the table. */
  void (*get) (GstTbQueue * tbq, const Property * p, GValue * value);
  /* Once per g_object_set () call that set it (or any property with the
   * same hook), after every property of the call is stored. */
  void (*commit) (GstTbQueue * tbq);
  /* For the hooks of the placement properties: whose thread. */
  GstTbQueueThread task;
};

/* ---- the hooks ---- */

static void
get_level_buffers (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_uint (value, MIN (gst_tbqueue_level_buffers (tbq), G_MAXUINT));
}

static void
get_level_bytes (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_uint (value, MIN (gst_tbqueue_level_bytes (tbq), G_MAXUINT));
}

static void
get_level_time (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_uint64 (value, gst_tbqueue_level_time (tbq));
}

/* A max-size-* limit changed (qlock): leaky=downstream leaks down to it. */
static void
limit_changed (GstTbQueue * tbq)
{
  gst_tbqueue_locked_limit_changed (tbq);
  /* The pushing thread may have room now. */
  GST_TBQUEUE_BROADCAST (tbq, item_del);
}

/* The thresholds in use are zeroed by EOS and restored from the ones the
 * application set (gsttbqueue-levels.c). */
static void
min_buffers_changed (GstTbQueue * tbq)
{
  tbq->orig_min_buffers = TBQ_LOAD (tbq->min_buffers);
}

static void
min_bytes_changed (GstTbQueue * tbq)
{
  tbq->orig_min_bytes = TBQ_LOAD (tbq->min_bytes);
}

static void
min_time_changed (GstTbQueue * tbq)
{
  tbq->orig_min_time = TBQ_LOAD (tbq->min_time);
}

/* A leak left pending by the former mode is forgotten with it. */
static void
set_leaky (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_locked_set_leaky (tbq, g_value_get_enum (value));
}

/* libtbq refuses other block sizes when the pools are made. */
static gboolean
refuse_block_size (const GValue * value, gchar * why, gsize why_size)
{
  if (g_value_get_uint (value) % BLOCK_ALIGN == 0)
    return FALSE;
  g_snprintf (why, why_size, "a block size is a multiple of %d bytes",
      BLOCK_ALIGN);
  return TRUE;
}

/* A duration in ns that is 0 (`zero` says what that means) or at least
 * `min`: the range cannot say "0, or from min". */
static gboolean
refuse_below_unless_zero (const GValue * value, guint64 min,
    const gchar * zero, gchar * why, gsize why_size)
{
  guint64 ns = g_value_get_uint64 (value);

  if (ns == 0 || ns >= min)
    return FALSE;
  g_snprintf (why, why_size, "it is 0 (%s) or at least %" G_GUINT64_FORMAT
      " ns", zero, min);
  return TRUE;
}

/* A waiting src task naps at least this long, or not at all: libtbq
 * refuses a shorter bound when the pools are made. */
static gboolean
refuse_coalesce_latency (const GValue * value, gchar * why, gsize why_size)
{
  return refuse_below_unless_zero (value, (guint64) TBQ_COALESCE_MIN_NS,
      "no coalescing", why, why_size);
}

/* Set, whatever the value: the bound applies in a live stream too
 * (gsttbqueue-src.c, the latency query).  qlock held; the object lock
 * guards the flag, as the bound. */
static void
coalesce_latency_changed (GstTbQueue * tbq)
{
  GST_OBJECT_LOCK (tbq);
  tbq->coalesce_set = TRUE;
  GST_OBJECT_UNLOCK (tbq);
}

static void
get_stats (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_take_boxed (value, gst_tbqueue_stats (tbq));
}

/* The levels message (gsttbqueue-stats.c): 0, or at least a millisecond,
 * so that a slip of the unit cannot flood the bus. */
static gboolean
refuse_levels_interval (const GValue * value, gchar * why, gsize why_size)
{
  return refuse_below_unless_zero (value, GST_TBQUEUE_LEVELS_MIN_INTERVAL,
      "no messages", why, why_size);
}

static void
set_levels_interval (GstTbQueue * tbq, const Property * p,
    const GValue * value)
{
  gst_tbqueue_stats_set_post_interval (tbq, g_value_get_uint64 (value));
}

static void
get_levels_interval (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_uint64 (value, gst_tbqueue_stats_get_post_interval (tbq));
}

/* The placement setters only store; the commit hook applies what one
 * g_object_set () call set, together (a policy with its priority or nice
 * value as one pair), to the threads that run. */
static void
set_cpus (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_placement_set_cpus (tbq, p->task, g_value_get_string (value));
}

static void
get_cpus (GstTbQueue * tbq, const Property * p, GValue * value)
{
  gchar *cpus = gst_tbqueue_placement_get_cpus (tbq, p->task);

  g_value_take_string (value, cpus != NULL ? cpus : g_strdup (""));
}

static void
set_policy (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_placement_set_policy (tbq, p->task, g_value_get_enum (value));
}

static void
get_policy (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GstTbQueueSchedPolicy policy;
  gint priority, nice;

  gst_tbqueue_placement_get_sched (tbq, p->task, &policy, &priority, &nice);
  g_value_set_enum (value, policy);
}

static void
set_priority (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_placement_set_priority (tbq, p->task, g_value_get_int (value));
}

static void
get_priority (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GstTbQueueSchedPolicy policy;
  gint priority, nice;

  gst_tbqueue_placement_get_sched (tbq, p->task, &policy, &priority, &nice);
  g_value_set_int (value, priority);
}

static void
set_nice (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_placement_set_nice (tbq, p->task, g_value_get_int (value));
}

static void
get_nice (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GstTbQueueSchedPolicy policy;
  gint priority, nice;

  gst_tbqueue_placement_get_sched (tbq, p->task, &policy, &priority, &nice);
  g_value_set_int (value, nice);
}

static void
set_temp_template (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  GST_OBJECT_LOCK (tbq);
  g_free (tbq->temp_template);
  tbq->temp_template = g_value_dup_string (value);
  GST_OBJECT_UNLOCK (tbq);
}

static void
get_temp_template (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GST_OBJECT_LOCK (tbq);
  g_value_set_string (value, tbq->temp_template);
  GST_OBJECT_UNLOCK (tbq);
}

static void
get_temp_location (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GST_OBJECT_LOCK (tbq);
  g_value_set_string (value, tbq->temp_location);
  GST_OBJECT_UNLOCK (tbq);
}

static void
set_copy_group (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  GST_OBJECT_LOCK (tbq);
  g_free (tbq->copy_group);
  tbq->copy_group = g_value_dup_string (value);
  GST_OBJECT_UNLOCK (tbq);
}

static void
get_copy_group (GstTbQueue * tbq, const Property * p, GValue * value)
{
  GST_OBJECT_LOCK (tbq);
  g_value_set_string (value, tbq->copy_group != NULL ? tbq->copy_group : "");
  GST_OBJECT_UNLOCK (tbq);
}

/* The copy task's placement applies to its group's thread: say when
 * another member asks for another. */
static void
copy_placement_commit (GstTbQueue * tbq)
{
  gst_tbqueue_placement_commit (tbq);
  gst_tbqueue_group_check_placement (tbq);
}

/* A template that cannot name a file (mkstemp's rule). */
static gboolean
refuse_temp_template (const GValue * value, gchar * why, gsize why_size)
{
  const gchar *t = g_value_get_string (value);

  if (t == NULL || g_str_has_suffix (t, "XXXXXX"))
    return FALSE;
  g_snprintf (why, why_size, "a spill file template must end in XXXXXX");
  return TRUE;
}

/* queue2's buffering (gsttbqueue-buffering.c): each change is evaluated
 * at once, and what it changes is posted. */
static void
set_use_buffering (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_use (tbq, g_value_get_boolean (value));
}

static void
get_use_buffering (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_boolean (value, gst_tbqueue_buffering_get_use (tbq));
}

static void
set_low_watermark (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_watermark (tbq, FALSE, g_value_get_double (value));
}

static void
get_low_watermark (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_double (value, gst_tbqueue_buffering_get_watermark (tbq, FALSE));
}

static void
set_high_watermark (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_watermark (tbq, TRUE, g_value_get_double (value));
}

static void
get_high_watermark (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_double (value, gst_tbqueue_buffering_get_watermark (tbq, TRUE));
}

/* The deprecated percent aliases of the watermarks, as queue2's. */
static void
set_low_percent (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_watermark (tbq, FALSE,
      g_value_get_int (value) / 100.0);
}

static void
get_low_percent (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_int (value, (gint) (gst_tbqueue_buffering_get_watermark (tbq,
              FALSE) * 100 + 0.5));
}

static void
set_high_percent (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_watermark (tbq, TRUE,
      g_value_get_int (value) / 100.0);
}

static void
get_high_percent (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_int (value, (gint) (gst_tbqueue_buffering_get_watermark (tbq,
              TRUE) * 100 + 0.5));
}

static void
set_rate_estimate (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_flag (tbq, GST_TBQUEUE_BUFFERING_RATE_ESTIMATE,
      g_value_get_boolean (value));
}

static void
get_rate_estimate (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_boolean (value, gst_tbqueue_buffering_get_flag (tbq,
          GST_TBQUEUE_BUFFERING_RATE_ESTIMATE));
}

static void
set_tags_bitrate (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_flag (tbq, GST_TBQUEUE_BUFFERING_TAGS_BITRATE,
      g_value_get_boolean (value));
}

static void
get_tags_bitrate (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_boolean (value, gst_tbqueue_buffering_get_flag (tbq,
          GST_TBQUEUE_BUFFERING_TAGS_BITRATE));
}

static void
set_bitrate_query (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gst_tbqueue_buffering_set_flag (tbq, GST_TBQUEUE_BUFFERING_BITRATE_QUERY,
      g_value_get_boolean (value));
}

static void
get_bitrate_query (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_boolean (value, gst_tbqueue_buffering_get_flag (tbq,
          GST_TBQUEUE_BUFFERING_BITRATE_QUERY));
}

static void
get_avg_in_rate (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_int64 (value, gst_tbqueue_buffering_avg_in_rate (tbq));
}

static void
get_bitrate (GstTbQueue * tbq, const Property * p, GValue * value)
{
  g_value_set_uint64 (value, gst_tbqueue_buffering_bitrate (tbq));
}

/* ---- the table ---- */

/* Types, ranges and defaults. */
#define UINT(lo, hi, d) \
  .type = G_TYPE_UINT, .min.u = (lo), .max.u = (hi), .def.u = (d)
#define UINT64(lo, hi, d) \
  .type = G_TYPE_UINT64, .min.u = (lo), .max.u = (hi), .def.u = (d)
#define INT(lo, hi, d) \
  .type = G_TYPE_INT, .min.i = (lo), .max.i = (hi), .def.i = (d)
#define INT64(lo, hi, d) \
  .type = G_TYPE_INT64, .min.i = (lo), .max.i = (hi), .def.i = (d)
#define DOUBLE(lo, hi, dv) \
  .type = G_TYPE_DOUBLE, .min.d = (lo), .max.d = (hi), .def.d = (dv)
#define BOOLEAN(d) .type = G_TYPE_BOOLEAN, .def.i = (d)
#define ENUM(get_type, d) \
  .type = G_TYPE_ENUM, .value_type = get_type, .def.i = (d)
#define STRING(d) .type = G_TYPE_STRING, .def.s = (d)
#define STRUCTURE .type = G_TYPE_BOXED, .value_type = gst_structure_get_type

/* Flags and when a change applies. */
#define READ_ONLY .flags = G_PARAM_READABLE
#define ANY_STATE .flags = G_PARAM_READWRITE, .applies = APPLIES_ANY_STATE
/* Kept for queue2's applications; gst-inspect-1.0 says "deprecated". */
#define DEPRECATED_ANY_STATE .flags = G_PARAM_READWRITE | G_PARAM_DEPRECATED, \
  .applies = APPLIES_ANY_STATE
#define READY_ONLY .flags = G_PARAM_READWRITE, .applies = APPLIES_READY

/* Where the value lives. */
#define FIELD(field) .offset = G_STRUCT_OFFSET (GstTbQueue, field), \
  .size = sizeof (((GstTbQueue *) 0)->field)
#define ATOMIC(field) .store = STORE_ATOMIC, FIELD (field)
#define OBJECT_LOCK(field) .store = STORE_OBJECT_LOCK, FIELD (field)
#define HOOKS(setter, getter) \
  .store = STORE_HOOKS, .set = setter, .get = getter
#define PLACEMENT(t, setter, getter) \
  HOOKS (setter, getter), .task = t, \
  .commit = (t) == GST_TBQUEUE_COPY_TASK ? copy_placement_commit \
      : gst_tbqueue_placement_commit

/* Indexed by property id.  Entry 0 is id 0, which GObject reserves, as
 * the array of g_object_class_install_properties (). */
static const Property properties[] = {
  {NULL},

  /* queue's levels and limits: same names, types, ranges and defaults */

  /**
   * GstTbQueue:current-level-bytes:
   *
   * Payload bytes queued: both layers and what the copy task holds.
   *
   * Since: 0.1
   */
  {"current-level-bytes", "Current level (kB)",
        "Current amount of data in the queue (bytes)",
        UINT (0, G_MAXUINT, 0), READ_ONLY,
      HOOKS (NULL, get_level_bytes)},
  /**
   * GstTbQueue:current-level-buffers:
   *
   * Buffers queued: both layers and what the copy task holds (a buffer
   * list counts its buffers).
   *
   * Since: 0.1
   */
  {"current-level-buffers", "Current level (buffers)",
        "Current number of buffers in the queue",
        UINT (0, G_MAXUINT, 0), READ_ONLY,
      HOOKS (NULL, get_level_buffers)},
  /**
   * GstTbQueue:current-level-time:
   *
   * Running time between the newest buffer in and the oldest buffer out
   * (ns), computed from the segments as queue computes it.
   *
   * Since: 0.1
   */
  {"current-level-time", "Current level (ns)",
        "Current amount of data in the queue (in ns)",
        UINT64 (0, G_MAXUINT64, 0), READ_ONLY,
      HOOKS (NULL, get_level_time)},
  /**
   * GstTbQueue:max-size-bytes:
   *
   * Most payload bytes queued (0 = no limit).  Counts the buffers'
   * bytes, not the pools' memory: #GstTbQueue:sink-max-bytes bounds that.
   *
   * Since: 0.1
   */
  {"max-size-bytes", "Max. size (kB)",
        "Max. amount of data in the queue (bytes, 0=disable)",
        UINT (0, G_MAXUINT, DEFAULT_MAX_SIZE_BYTES), ANY_STATE,
      ATOMIC (max_bytes), .changed = limit_changed},
  /**
   * GstTbQueue:max-size-buffers:
   *
   * Most buffers queued (0 = no limit).
   *
   * Since: 0.1
   */
  {"max-size-buffers", "Max. size (buffers)",
        "Max. number of buffers in the queue (0=disable)",
        UINT (0, G_MAXUINT, DEFAULT_MAX_SIZE_BUFFERS), ANY_STATE,
      ATOMIC (max_buffers), .changed = limit_changed},
  /**
   * GstTbQueue:max-size-time:
   *
   * Most running time queued (ns, 0 = no limit).
   *
   * Since: 0.1
   */
  {"max-size-time", "Max. size (ns)",
        "Max. amount of data in the queue (in ns, 0=disable)",
        UINT64 (0, G_MAXUINT64, DEFAULT_MAX_SIZE_TIME), ANY_STATE,
      ATOMIC (max_time), .changed = limit_changed},

  /* queue's thresholds, leaky mode, silent and flush-on-eos */

  /**
   * GstTbQueue:min-threshold-bytes:
   *
   * Bytes that must be queued before the src pad task pushes again after
   * an underrun (0 = off).
   *
   * Since: 0.1
   */
  {"min-threshold-bytes", "Min. threshold (kB)",
        "Min. amount of data in the queue to allow reading (bytes, 0=disable)",
        UINT (0, G_MAXUINT, 0), ANY_STATE,
      ATOMIC (min_bytes), .changed = min_bytes_changed},
  /**
   * GstTbQueue:min-threshold-buffers:
   *
   * Buffers that must be queued before the src pad task pushes again
   * after an underrun (0 = off).
   *
   * Since: 0.1
   */
  {"min-threshold-buffers", "Min. threshold (buffers)",
        "Min. number of buffers in the queue to allow reading (0=disable)",
        UINT (0, G_MAXUINT, 0), ANY_STATE,
      ATOMIC (min_buffers), .changed = min_buffers_changed},
  /**
   * GstTbQueue:min-threshold-time:
   *
   * Running time that must be queued before the src pad task pushes again
   * after an underrun (ns, 0 = off).  Added to the minimum latency, as
   * queue does.
   *
   * Since: 0.1
   */
  {"min-threshold-time", "Min. threshold (ns)",
        "Min. amount of data in the queue to allow reading (in ns, 0=disable)",
        UINT64 (0, G_MAXUINT64, 0), ANY_STATE,
      ATOMIC (min_time), .changed = min_time_changed},
  /**
   * GstTbQueue:leaky:
   *
   * What happens when the queue is full: block the pushing thread
   * (#GST_TBQUEUE_NO_LEAK), drop the incoming buffer
   * (#GST_TBQUEUE_LEAK_UPSTREAM) or drop the oldest queued buffers
   * (#GST_TBQUEUE_LEAK_DOWNSTREAM).  Same values and nicks as queue's.
   *
   * Since: 0.1
   */
  {"leaky", "Leaky", "Where the queue leaks, if at all",
        ENUM (gst_tbqueue_leaky_get_type, GST_TBQUEUE_NO_LEAK), ANY_STATE,
      ATOMIC (leaky), .set = set_leaky},
  /**
   * GstTbQueue:silent:
   *
   * Don't emit the #GstTbQueue::underrun, #GstTbQueue::running,
   * #GstTbQueue::overrun and #GstTbQueue::pushing signals.
   *
   * Since: 0.1
   */
  {"silent", "Silent", "Don't emit queue signals",
      BOOLEAN (FALSE), ANY_STATE, ATOMIC (silent)},
  /**
   * GstTbQueue:flush-on-eos:
   *
   * Discard everything queued when EOS arrives and pass EOS on at once.
   *
   * Since: 0.1
   */
  {"flush-on-eos", "Flush on EOS",
        "Discard all data in the queue when an EOS event is received",
      BOOLEAN (FALSE), ANY_STATE, ATOMIC (flush_on_eos)},

  /* tbqueue's own: how buffers travel */

  /**
   * GstTbQueue:transfer:
   *
   * How buffers travel.  "auto" copies a buffer when giving it back at once
   * matters: it is at most #GstTbQueue:copy-threshold bytes, or it belongs
   * to a #GstBufferPool (`buffer->pool` set: a camera's capture queue, a
   * decoder's output pool), whatever its size, upstream is live (a camera,
   * a sensor: its latency query answer) and holding it would take the
   * element past half of that pool: the element holds at most
   * max-buffers / 2 (rounded down) of a live source's bounded pool,
   * counting the one downstream has inside the src pad task's push, so
   * the pool's owner always has the other half.  When downstream keeps up
   * no pool buffer is copied; the copy is paid behind a consumer that fell
   * behind.  The pool buffers of a source that is not live (it waits for
   * its pool, as behind queue: backpressure) and of an unbounded pool,
   * and larger buffers of no pool, which nobody waits for, are
   * referenced.  "copy"
   * copies every buffer (pooled or not, whatever the queue holds),
   * "reference" none.  A copy keeps flags, timestamps, offsets, every meta
   * a deep copy keeps and the memory layout; a frame (above a quarter of a
   * source block) is copied once, into memory of its own taken from the
   * sink pool's budget.  In every mode a buffer that cannot be copied
   * without loss is referenced and counted (copy-fallbacks and a counter
   * of the reason in #GstTbQueue:stats): special memory (fd memory such
   * as DMA-buf, memory that cannot be mapped, caps of a memory type other
   * than system memory), a meta that cannot be copied, or a buffer larger
   * than #GstTbQueue:sink-max-bytes allows (with a warning).
   *
   * Since 0.2 "auto" copies buffers of a pool of any size that would wait,
   * and "copy" copies buffers of any size, with their metas and memory
   * layout.  Since 0.3 "auto" copies a pool's buffer only behind a live
   * source, past half of its pool (pool-buffers-held and
   * pool-buffers-limit in #GstTbQueue:stats).
   *
   * Since: 0.1
   */
  {"transfer", "Transfer",
        "How buffers travel: copied (auto: small ones, a pool's past half "
        "of it) or by reference",
        ENUM (gst_tbqueue_transfer_get_type, DEFAULT_TRANSFER), ANY_STATE,
      ATOMIC (transfer)},
  /**
   * GstTbQueue:copy-threshold:
   *
   * With #GstTbQueue:transfer "auto": the largest buffer always copied
   * (bytes).  A larger buffer is copied only when it belongs to a buffer
   * pool of a live source of which the element already holds half.  To
   * copy every buffer, use
   * #GstTbQueue:transfer "copy".
   *
   * Since 0.2 it no longer limits buffers of a pool.
   *
   * Since: 0.1
   */
  {"copy-threshold", "Copy threshold (bytes)",
        "transfer=auto: largest buffer always copied (bytes)",
        UINT (0, G_MAXUINT, DEFAULT_COPY_THRESHOLD), ANY_STATE,
      ATOMIC (copy_threshold)},

  /* tbqueue's own: the geometry of the source and sink pools */

  /**
   * GstTbQueue:source-block-size:
   *
   * Bytes per source pool block: a multiple of 64, from 128 to 1 GiB.  A
   * size that is no multiple of 64 is refused when it is set, with a
   * warning message on the bus naming the property, and the size in use is
   * kept.  A copied buffer whose record is above a quarter of a block
   * (about 1,000 bytes by default) is written into memory of its own from
   * the sink pool instead.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  {"source-block-size", "Source block size (bytes)",
        "Size of each source pool block (bytes, a multiple of 64)",
        UINT (MIN_BLOCK_SIZE, MAX_BLOCK_SIZE, DEFAULT_SOURCE_BLOCK_SIZE),
        READY_ONLY, OBJECT_LOCK (source_block_size),
      .refuse = refuse_block_size},
  /**
   * GstTbQueue:source-blocks:
   *
   * Number of source pool blocks, all allocated up front (at least 2: one
   * being written, one being copied).  Applies from the next READY to
   * PAUSED change.
   *
   * Since: 0.1
   */
  {"source-blocks", "Source blocks",
        "Number of source pool blocks, all allocated up front",
        UINT (2, 1 << 20, DEFAULT_SOURCE_BLOCKS), READY_ONLY,
      OBJECT_LOCK (source_blocks)},
  /**
   * GstTbQueue:sink-block-size:
   *
   * Bytes per sink pool block: a multiple of 64, from 128 to 1 GiB, and at
   * least #GstTbQueue:source-block-size.  A size that is no multiple of 64
   * is refused when it is set, with a warning message on the bus naming the
   * property, and the size in use is kept; one smaller than the source
   * blocks makes the READY to PAUSED change fail with an error naming both.
   * Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  {"sink-block-size", "Sink block size (bytes)",
        "Size of each sink pool block (bytes, a multiple of 64, at least "
        "source-block-size)",
        UINT (MIN_BLOCK_SIZE, MAX_BLOCK_SIZE, DEFAULT_SINK_BLOCK_SIZE),
        READY_ONLY, OBJECT_LOCK (sink_block_size),
      .refuse = refuse_block_size},
  /**
   * GstTbQueue:sink-min-bytes:
   *
   * Sink pool memory allocated and pre-faulted up front (bytes, at most
   * #GstTbQueue:sink-max-bytes).  Applies from the next READY to PAUSED
   * change.
   *
   * Since: 0.1
   */
  {"sink-min-bytes", "Sink pool minimum (bytes)",
        "Sink pool memory allocated and pre-faulted up front (bytes)",
        UINT64 (0, G_MAXUINT64, DEFAULT_SINK_MIN_BYTES), READY_ONLY,
      OBJECT_LOCK (sink_min_bytes)},
  /**
   * GstTbQueue:sink-max-bytes:
   *
   * The most memory the sink pool may grow to, the memory of copied
   * frames included (bytes, at least two sink blocks).  Reaching it is an
   * overrun.  It bounds the queue's memory where #GstTbQueue:max-size-bytes
   * bounds the payload.  Applies from the next READY to PAUSED change.
   * With the default (256 MiB) frames of 600 KB up to 8 MiB and more are
   * copied; a buffer larger than this less two sink blocks cannot be
   * copied and is referenced, with one #GST_RESOURCE_ERROR_NO_SPACE_LEFT
   * warning per stream that names the value to raise it to.
   *
   * Its range starts at 256 bytes, two of the smallest sink blocks; a value
   * below two blocks of #GstTbQueue:sink-block-size (which may be set
   * after it) makes the READY to PAUSED change fail with an error naming
   * both.
   *
   * Since 0.2 it also holds copied frames, and is at least 256.
   *
   * Since: 0.1
   */
  {"sink-max-bytes", "Sink pool maximum (bytes)",
        "Most memory the sink pool may grow to, copied frames included "
        "(bytes, two sink blocks or more)",
        UINT64 (2 * MIN_BLOCK_SIZE, G_MAXUINT64, DEFAULT_SINK_MAX_BYTES),
      READY_ONLY, OBJECT_LOCK (sink_max_bytes)},

  /* spill: the backlog continues in a file (queue2's names) */

  /**
   * GstTbQueue:temp-template:
   *
   * Spill the backlog to a file made from this template, a path ending in
   * XXXXXX (as queue2's): when the sink pool is three quarters full
   * (#GstTbQueue:sink-max-bytes), what comes next goes to the file, and
   * comes back, in order, before what followed it.  Every buffer that can
   * be copied is then copied, whatever #GstTbQueue:transfer says; one that
   * cannot (special memory, metas that cannot be copied) and serialized
   * events and queries stay in memory, in their places.  NULL (the
   * default): no spill.  #GstTbQueue:max-size-buffers,
   * #GstTbQueue:max-size-bytes and #GstTbQueue:max-size-time still bound
   * the whole backlog, memory and file: set them to 0 (or high) to let it
   * grow on disk.  Applies from the next READY to PAUSED change; a
   * template whose file cannot be created makes it fail with an error.
   *
   * Since: 0.3
   */
  {"temp-template", "Spill file template",
        "Spill the backlog to a file made from this path ending in XXXXXX "
        "(NULL = no spill)",
        STRING (NULL), READY_ONLY,
        HOOKS (set_temp_template, get_temp_template),
      .refuse = refuse_temp_template},
  /**
   * GstTbQueue:temp-location:
   *
   * The spill file in use (made from #GstTbQueue:temp-template), from the
   * READY to PAUSED change to the PAUSED to READY change; NULL otherwise.
   * A file kept (#GstTbQueue:temp-remove is FALSE) stays named after the
   * PAUSED to READY change, also in NULL, until the next READY to PAUSED
   * change, so that an application can find it once the pipeline is
   * stopped.  The "tbqueue-spill" element message names it too.
   *
   * Since: 0.3
   */
  {"temp-location", "Spill file",
        "The spill file in use (NULL when not spilling)",
        STRING (NULL), READ_ONLY, HOOKS (NULL, get_temp_location)},
  /**
   * GstTbQueue:temp-remove:
   *
   * Remove the spill file as soon as it is open (the default): it has no
   * name while it is used, and nothing is left behind, even after a
   * crash.  FALSE keeps it, named #GstTbQueue:temp-location, after the
   * element is done with it.  The file is never synced to disk: a queue is
   * not a database; after a crash of the process or of the machine what
   * it held is lost.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.3
   */
  {"temp-remove", "Remove the spill file",
        "Remove the spill file as soon as it is open (nothing is left "
        "behind)",
        BOOLEAN (TRUE), READY_ONLY, OBJECT_LOCK (temp_remove)},
  /**
   * GstTbQueue:spill-max-bytes:
   *
   * The most the spill file may hold, not yet read back (bytes); 0 (the
   * default): no limit but the disk's.  At the limit, as when the disk is
   * full, the queue is full: #GstTbQueue:leaky applies.  A buffer larger
   * than the limit stays in memory.  Applies from the next READY to PAUSED
   * change.
   *
   * Since: 0.3
   */
  {"spill-max-bytes", "Spill file maximum (bytes)",
        "Most bytes the spill file holds unread (0 = no limit but the disk)",
        UINT64 (0, G_MAXUINT64, 0), READY_ONLY, OBJECT_LOCK (spill_max_bytes)},

  /* tbqueue's own: trimming, publishing, coalescing, statistics */

  /**
   * GstTbQueue:idle-blocks:
   *
   * Idle sink blocks kept when the backlog drains; the rest is given back
   * to the system.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.1
   */
  {"idle-blocks", "Idle blocks kept",
        "Idle sink blocks kept when the backlog drains; the rest goes back "
        "to the system",
        UINT (0, G_MAXUINT, DEFAULT_IDLE_BLOCKS), READY_ONLY,
      OBJECT_LOCK (idle_blocks)},
  /**
   * GstTbQueue:publish-batch:
   *
   * Make queued buffers visible to the copy task every N buffers (1 =
   * every buffer, 0 = only when a source block is full) while downstream
   * is busy.  Events and queries always publish at once; N > 1 holds up
   * to N-1 buffers until more data or an event arrives, never while the
   * src pad task waits for data, nor at a limit.  Applies from the next
   * READY to PAUSED change.
   *
   * Since: 0.1
   */
  {"publish-batch", "Publish batch (buffers)",
        "Make buffers visible to the copy task every N buffers (1 = each "
        "one, 0 = each full block)",
        UINT (0, G_MAXUINT, DEFAULT_PUBLISH_BATCH), READY_ONLY,
      OBJECT_LOCK (publish_batch)},
  /**
   * GstTbQueue:max-coalesce-latency:
   *
   * The most, in nanoseconds, that wake coalescing may add to a buffer's way
   * through the queue.  Each time the src pad task runs dry it decides how
   * it wants to be woken: while buffers arrive densely (at least two
   * expected within this bound) it naps until at most this long after it
   * last took buffers, and the pushing thread makes no system call for a
   * buffer meanwhile; while they arrive sparsely, or after an empty nap,
   * every buffer wakes it at once, as with #queue.  Events (EOS included),
   * serialized queries, flushes and a pushing thread that waits at a limit
   * end a nap at once.
   *
   * A larger bound batches more and costs less CPU at high rates; a smaller
   * one adds less latency.  0 wakes the src pad task for every buffer
   * whenever it waits (no coalescing); otherwise at least 1000 ns, up to
   * 60 s.  A value from 1 to 999 is refused when it is set, with a warning
   * message on the bus naming the property, and the bound in use is kept.
   * Left at its default, the src pad task never naps in a live stream (it
   * learns that the stream is live from the latency query a pipeline
   * makes on its way to PLAYING), and the latency query answers exactly
   * as #queue.  Set (to any value), it naps in a live stream too, and the
   * latency query adds this bound to the minimum latency (and to a known
   * maximum), so that a live pipeline's sinks wait for the longest nap and
   * coalescing never makes a buffer late; 0 answers exactly as #queue.
   * Replaces the pickup-interval property of earlier versions (a
   * copy task polling at a fixed interval, which delayed sparse buffers
   * too).  Applies from the next READY to PAUSED change.
   *
   * Since: 0.2
   */
  {"max-coalesce-latency", "Max. coalescing latency (ns)",
        "Longest the src task waits to take densely arriving buffers "
        "together (ns, 0 = never)",
        UINT64 (0, TBQ_COALESCE_MAX_NS, DEFAULT_MAX_COALESCE_LATENCY),
        READY_ONLY, OBJECT_LOCK (max_coalesce_latency),
        .refuse = refuse_coalesce_latency,
      .changed = coalesce_latency_changed},
  /**
   * GstTbQueue:stats:
   *
   * A #GstStructure named "tbqueue-stats" of #guint64 fields: levels,
   * peaks, counters and pool sizes.  Among them buffers-copied,
   * buffers-referenced and copy-fallbacks (buffers the transfer mode would
   * copy that were referenced), with the reason in
   * referenced-special-memory, referenced-uncopyable-meta and
   * referenced-too-large.
   *
   * Since 0.2 it has the referenced-* fields.
   *
   * Since: 0.1
   */
  {"stats", "Statistics",
        "Levels, peaks, counters and pool sizes (see the documentation)",
      STRUCTURE, READ_ONLY, HOOKS (NULL, get_stats)},
  /**
   * GstTbQueue:levels-interval:
   *
   * While the element is PAUSED or PLAYING, post an element message named
   * "tbqueue-levels" every this many nanoseconds, carrying the same fields
   * as #GstTbQueue:stats, so that an application learns about levels and
   * memory without polling the property.  0 (the default) posts none;
   * otherwise at least 1 ms (a smaller value is refused when it is set,
   * with a warning message naming the property) and at most G_MAXINT64
   * (about 292 years: a larger one, -1 included, is out of range).  Driven by the system
   * clock, off the streaming threads: a message is posted even while every
   * thread of the element is blocked.  Applies at once, in any state.
   *
   * Since: 0.2
   */
  {"levels-interval", "Levels message interval (ns)",
        "Post a tbqueue-levels element message with the stats this often "
        "(ns, 0 = never, else >= 1 ms)",
        UINT64 (0, G_MAXINT64, 0), ANY_STATE,
        HOOKS (set_levels_interval, get_levels_interval),
      .refuse = refuse_levels_interval},

  /* tbqueue's own: copy groups (gsttbqueue-group.c) */

  /**
   * GstTbQueue:copy-group:
   *
   * The copy group the element joins: every tbqueue of the process that
   * names the same group has its copy work done by one thread, the task
   * "NAME:copier" ("default:copier" for the default group), which serves
   * the members in turn, and shares that group's memory: the idle sink
   * blocks its first member pre-faulted (#GstTbQueue:sink-min-bytes), and
   * the cap #GstTbQueue:group-max-bytes.  Empty (the default): the
   * process's default group.  Each member keeps its own limits, order and
   * flow; a member whose downstream stalls is passed over until it takes
   * data again.  The copy task's placement (#GstTbQueue:copy-task-cpus
   * and the rest) applies to the group's thread; members that ask for
   * different ones are warned about.  Applies from the next READY to
   * PAUSED change.
   *
   * Since: 0.4
   */
  {"copy-group", "Copy group",
        "Copy group to join: one thread does the copy work of all its "
        "members (empty = the default group)",
        STRING (""), READY_ONLY, HOOKS (set_copy_group, get_copy_group)},
  /**
   * GstTbQueue:group-max-bytes:
   *
   * The most sink memory (bytes, copied frames included) all members of
   * the element's copy group (#GstTbQueue:copy-group) may hold together;
   * 0 (the default): no cap but each member's own
   * #GstTbQueue:sink-max-bytes.  At the cap a member is full as at its
   * own limit: #GstTbQueue:leaky applies.  The group keeps the cap of the
   * member that made it (its first); a later member asking for another is
   * warned about.  Applies from the next READY to PAUSED change.
   *
   * Since: 0.4
   */
  {"group-max-bytes", "Group memory cap (bytes)",
        "Most sink memory the members of the copy group hold together "
        "(0 = no cap)",
        UINT64 (0, G_MAXUINT64, 0), READY_ONLY,
      OBJECT_LOCK (group_max_bytes)},

  /* tbqueue's own: where both tasks' threads run (gsttbqueue-placement.c) */

  /**
   * GstTbQueue:copy-task-cpus:
   *
   * The CPUs the copy task's thread may run on, as a list such as "0-1,3".
   * Empty (the default) leaves the thread as GStreamer created it.  Applied
   * by the thread itself when the task starts, before its STREAM_STATUS
   * ENTER message, and at once when changed while it runs; set back to
   * empty (or %NULL) while it runs, the thread goes back to the CPUs it
   * had when the task started.  CPUs that are not online or not allowed to
   * the process are reported with a warning message on the bus; the CPUs
   * that exist are used.
   *
   * A malformed list (not CPU numbers from 0 to 1023 and ranges of them)
   * changes nothing: the property keeps, and reads back, the last valid
   * list.  Its warning message names it, and is posted when the tasks
   * start (the READY to PAUSED change; on a gst-launch-1.0 line the
   * element has no bus yet when its properties are set), at each start
   * until a valid list is set, and at once when it is set while they run.
   *
   * Since: 0.2
   */
  {"copy-task-cpus", "CPUs",
        "CPUs the copy task's thread may run on, as \"0-1,3\" (empty = "
        "leave it as it is)",
        STRING (""), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_COPY_TASK, set_cpus, get_cpus)},
  /**
   * GstTbQueue:copy-task-policy:
   *
   * The scheduling policy of the copy task's thread (Linux's SCHED_*):
   * inherit (the default) leaves it as it is; set back to inherit while the
   * task runs, the thread gets back the policy, priority and nice value it
   * had when the task started.  fifo and rr take the real-time priority
   * (#GstTbQueue:copy-task-priority, 1 to 99), other and batch the nice
   * value (#GstTbQueue:copy-task-nice), idle neither.  A policy the system
   * refuses (a real-time one without CAP_SYS_NICE or RLIMIT_RTPRIO) is
   * reported with a warning message on the bus as it refuses, and the
   * thread runs on as it was.
   *
   * The policy, #GstTbQueue:copy-task-priority and
   * #GstTbQueue:copy-task-nice are applied as a pair: set in one
   * g_object_set() call, they are applied together, once all are set.
   * While the task runs, a pair that does not go together (fifo with
   * priority 0, half-way from other to fifo 20 set in two calls, in
   * either order) is a change half made, not an error: the thread is left
   * as it is and no message is posted (the debug log says so at INFO
   * level), until a later change makes the pair valid and it is applied.
   * A pair still not valid when the tasks start (the READY to PAUSED
   * change) is reported with a warning message then.
   *
   * Since: 0.2
   */
  {"copy-task-policy", "Scheduling policy",
        "Scheduling policy of the copy task's thread (inherit = leave it as "
        "it is)",
        ENUM (gst_tbqueue_sched_policy_get_type, GST_TBQUEUE_SCHED_INHERIT),
        ANY_STATE,
      PLACEMENT (GST_TBQUEUE_COPY_TASK, set_policy, get_policy)},
  /**
   * GstTbQueue:copy-task-priority:
   *
   * The real-time priority of the copy task's thread, with
   * #GstTbQueue:copy-task-policy fifo or rr, which need one: 1 (lowest) to
   * 99.  0, the default, sets none; the other policies take none, and one
   * set with them is a pair that does not go together (see
   * #GstTbQueue:copy-task-policy).  Applied with the policy.
   *
   * Since 0.2.0 it is a real-time priority only: the nice value of the
   * policies other and batch is #GstTbQueue:copy-task-nice.
   *
   * Since: 0.2
   */
  {"copy-task-priority", "Real-time priority",
        "Real-time priority of the copy task's thread with policy fifo or "
        "rr (1 to 99; 0 = none)",
        INT (0, 99, 0), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_COPY_TASK, set_priority, get_priority)},
  /**
   * GstTbQueue:copy-task-nice:
   *
   * The nice value of the copy task's thread, with
   * #GstTbQueue:copy-task-policy other or batch: -20 (most CPU) to 19
   * (least).  The other policies ignore it.  Applied with the policy; a
   * value below the one the thread has needs CAP_SYS_NICE or RLIMIT_NICE,
   * else it is a warning message on the bus.
   *
   * Since: 0.2
   */
  {"copy-task-nice", "Nice value",
        "Nice value of the copy task's thread with policy other or batch",
        INT (-20, 19, 0), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_COPY_TASK, set_nice, get_nice)},
  /**
   * GstTbQueue:src-task-cpus:
   *
   * The CPUs the src pad task's thread (the one that pushes downstream) may
   * run on, as #GstTbQueue:copy-task-cpus.
   *
   * Since: 0.2
   */
  {"src-task-cpus", "CPUs",
        "CPUs the src pad task's thread may run on, as \"0-1,3\" (empty = "
        "leave it as it is)",
        STRING (""), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_SRC_TASK, set_cpus, get_cpus)},
  /**
   * GstTbQueue:src-task-policy:
   *
   * The scheduling policy of the src pad task's thread, as
   * #GstTbQueue:copy-task-policy, with #GstTbQueue:src-task-priority and
   * #GstTbQueue:src-task-nice.
   *
   * Since: 0.2
   */
  {"src-task-policy", "Scheduling policy",
        "Scheduling policy of the src pad task's thread (inherit = leave it "
        "as it is)",
        ENUM (gst_tbqueue_sched_policy_get_type, GST_TBQUEUE_SCHED_INHERIT),
        ANY_STATE,
      PLACEMENT (GST_TBQUEUE_SRC_TASK, set_policy, get_policy)},
  /**
   * GstTbQueue:src-task-priority:
   *
   * The real-time priority of the src pad task's thread with
   * #GstTbQueue:src-task-policy fifo or rr, as
   * #GstTbQueue:copy-task-priority.
   *
   * Since 0.2.0 it is a real-time priority only: the nice value of the
   * policies other and batch is #GstTbQueue:src-task-nice.
   *
   * Since: 0.2
   */
  {"src-task-priority", "Real-time priority",
        "Real-time priority of the src pad task's thread with policy fifo or "
        "rr (1 to 99; 0 = none)",
        INT (0, 99, 0), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_SRC_TASK, set_priority, get_priority)},
  /**
   * GstTbQueue:src-task-nice:
   *
   * The nice value of the src pad task's thread with
   * #GstTbQueue:src-task-policy other or batch, as
   * #GstTbQueue:copy-task-nice.
   *
   * Since: 0.2
   */
  {"src-task-nice", "Nice value",
        "Nice value of the src pad task's thread with policy other or batch",
        INT (-20, 19, 0), ANY_STATE,
      PLACEMENT (GST_TBQUEUE_SRC_TASK, set_nice, get_nice)},

  /* queue2's buffering: same names, types, ranges and defaults
   * (gsttbqueue-buffering.c) */

  /**
   * GstTbQueue:use-buffering:
   *
   * Post BUFFERING messages (mode stream) while the level is between the
   * watermarks: buffering starts when the level falls below
   * #GstTbQueue:low-watermark and ends at #GstTbQueue:high-watermark,
   * which is 100 %; a message is posted whenever the percentage changes
   * meanwhile.  The level is the fullest max-size-* limit over the whole
   * backlog (both layers and the spill file), and the level as a duration
   * (#GstTbQueue:use-rate-estimate).  It is 100 % at EOS, when downstream
   * is not linked, and while the upstream thread waits: for room, or for
   * the answer to a serialized query behind data that downstream has not
   * taken (nothing can come in then).  A BUFFERING query is answered
   * (otherwise it goes upstream, as on queue).  Turned off while
   * buffering, a 100 % message is posted.
   *
   * Since: 0.2
   */
  {"use-buffering", "Use buffering",
        "Post BUFFERING messages between the low and high watermarks",
        BOOLEAN (FALSE), ANY_STATE,
      HOOKS (set_use_buffering, get_use_buffering)},
  /**
   * GstTbQueue:use-tags-bitrate:
   *
   * Take the stream's bitrate from its tags (bitrate, nominal-bitrate) to
   * give the level as a duration for #GstTbQueue:use-buffering.  Unlike
   * queue2 it does not give buffers a duration: max-size-time keeps what
   * queue measures.
   *
   * Since: 0.2
   */
  {"use-tags-bitrate", "Use bitrate from tags",
        "Use the bitrate of upstream tags to give the buffering level as a duration",
        BOOLEAN (FALSE), ANY_STATE,
      HOOKS (set_tags_bitrate, get_tags_bitrate)},
  /**
   * GstTbQueue:use-rate-estimate:
   *
   * Count the level as a duration (bytes queued over the bitrate in use,
   * else over the measured input rate) against max-size-time, for
   * #GstTbQueue:use-buffering.
   *
   * Since: 0.2
   */
  {"use-rate-estimate", "Use rate estimate",
        "Estimate the stream's rate to give the buffering level as a duration",
        BOOLEAN (TRUE), ANY_STATE,
      HOOKS (set_rate_estimate, get_rate_estimate)},
  /**
   * GstTbQueue:low-percent:
   *
   * #GstTbQueue:low-watermark in percent.
   *
   * Deprecated: use #GstTbQueue:low-watermark.
   *
   * Since: 0.2
   */
  {"low-percent", "Low percent",
        "Low threshold for buffering to start (deprecated: low-watermark)",
        INT (0, 100, 1), DEPRECATED_ANY_STATE,
      HOOKS (set_low_percent, get_low_percent)},
  /**
   * GstTbQueue:high-percent:
   *
   * #GstTbQueue:high-watermark in percent.
   *
   * Deprecated: use #GstTbQueue:high-watermark.
   *
   * Since: 0.2
   */
  {"high-percent", "High percent",
        "High threshold for buffering to finish (deprecated: high-watermark)",
        INT (0, 100, 99), DEPRECATED_ANY_STATE,
      HOOKS (set_high_percent, get_high_percent)},
  /**
   * GstTbQueue:low-watermark:
   *
   * Buffering starts when the level falls below this fraction of the
   * limits (with #GstTbQueue:use-buffering).
   *
   * Since: 0.2
   */
  {"low-watermark", "Low watermark",
        "Low threshold for buffering to start (a fraction of the limits)",
        DOUBLE (0.0, 1.0, 0.01), ANY_STATE,
      HOOKS (set_low_watermark, get_low_watermark)},
  /**
   * GstTbQueue:high-watermark:
   *
   * Buffering ends when the level reaches this fraction of the limits,
   * which is 100 % (with #GstTbQueue:use-buffering).
   *
   * Since: 0.2
   */
  {"high-watermark", "High watermark",
        "High threshold for buffering to finish (a fraction of the limits)",
        DOUBLE (0.0, 1.0, 0.99), ANY_STATE,
      HOOKS (set_high_watermark, get_high_watermark)},
  /**
   * GstTbQueue:avg-in-rate:
   *
   * The input rate measured for #GstTbQueue:use-buffering (bytes/s), as
   * queue2 measures it; 0 before the first figure or without
   * use-buffering.
   *
   * Since: 0.2
   */
  {"avg-in-rate", "Input data rate (bytes/s)",
        "Average input data rate (bytes/s)",
        INT64 (0, G_MAXINT64, 0), READ_ONLY, HOOKS (NULL, get_avg_in_rate)},
  /**
   * GstTbQueue:use-bitrate-query:
   *
   * Ask downstream for its bitrate (a BITRATE query, when the src pad is
   * reconfigured) to give the level as a duration for
   * #GstTbQueue:use-buffering.
   *
   * Since: 0.2
   */
  {"use-bitrate-query", "Use bitrate from downstream query",
        "Use downstream's bitrate to give the buffering level as a duration",
        BOOLEAN (TRUE), ANY_STATE,
      HOOKS (set_bitrate_query, get_bitrate_query)},
  /**
   * GstTbQueue:bitrate:
   *
   * The bitrate in use for #GstTbQueue:use-buffering (bits/s): the tags',
   * with #GstTbQueue:use-tags-bitrate, else downstream's, with
   * #GstTbQueue:use-bitrate-query; 0 if none.
   *
   * Since: 0.2
   */
  {"bitrate", "Bitrate (bits/s)",
        "Conversion value between data size and time (bits/s)",
        UINT64 (0, G_MAXUINT64, 0), READ_ONLY, HOOKS (NULL, get_bitrate)},
};

/* The specs as installed, by property id (class_init writes them before
 * any instance exists). */
static GParamSpec *pspecs[G_N_ELEMENTS (properties)];

static const Property *
property_of (guint prop_id)
{
  if (prop_id == 0 || prop_id >= G_N_ELEMENTS (properties))
    return NULL;
  return &properties[prop_id];
}

static const Property *
property_of_pspec (GParamSpec * pspec)
{
  guint id;

  for (id = 1; id < G_N_ELEMENTS (pspecs); id++)
    if (pspecs[id] == pspec)
      return &properties[id];
  return NULL;
}

/* ---- installing ---- */

static GParamSpec *
param_spec_new (const Property * p)
{
  GParamFlags flags = p->flags | G_PARAM_STATIC_STRINGS;

  if (flags & G_PARAM_WRITABLE)
    flags |= p->applies == APPLIES_READY ? GST_PARAM_MUTABLE_READY :
        GST_PARAM_MUTABLE_PLAYING;
  switch (p->type) {
    case G_TYPE_UINT:
      return g_param_spec_uint (p->name, p->nick, p->blurb, (guint) p->min.u,
          (guint) p->max.u, (guint) p->def.u, flags);
    case G_TYPE_UINT64:
      return g_param_spec_uint64 (p->name, p->nick, p->blurb, p->min.u,
          p->max.u, p->def.u, flags);
    case G_TYPE_INT:
      return g_param_spec_int (p->name, p->nick, p->blurb, (gint) p->min.i,
          (gint) p->max.i, (gint) p->def.i, flags);
    case G_TYPE_INT64:
      return g_param_spec_int64 (p->name, p->nick, p->blurb, p->min.i,
          p->max.i, p->def.i, flags);
    case G_TYPE_DOUBLE:
      return g_param_spec_double (p->name, p->nick, p->blurb, p->min.d,
          p->max.d, p->def.d, flags);
    case G_TYPE_BOOLEAN:
      return g_param_spec_boolean (p->name, p->nick, p->blurb,
          (gboolean) p->def.i, flags);
    case G_TYPE_ENUM:
      return g_param_spec_enum (p->name, p->nick, p->blurb, p->value_type (),
          (gint) p->def.i, flags);
    case G_TYPE_STRING:
      return g_param_spec_string (p->name, p->nick, p->blurb, p->def.s, flags);
    case G_TYPE_BOXED:
      return g_param_spec_boxed (p->name, p->nick, p->blurb, p->value_type (),
          flags);
    default:
      g_assert_not_reached ();
  }
}

/* What a field of the entry's type measures: an entry that names a field
 * of another type is a bug the first instance would not survive. */
static gsize
field_size (const Property * p)
{
  gboolean atomic = p->store == STORE_ATOMIC;

  switch (p->type) {
    case G_TYPE_UINT:
      return atomic ? sizeof (_Atomic guint) : sizeof (guint);
    case G_TYPE_UINT64:
      return atomic ? sizeof (_Atomic guint64) : sizeof (guint64);
    case G_TYPE_INT:
    case G_TYPE_ENUM:
      return atomic ? sizeof (_Atomic gint) : sizeof (gint);
    case G_TYPE_BOOLEAN:
      return atomic ? sizeof (_Atomic gboolean) : sizeof (gboolean);
    default:
      return 0;
  }
}

void
gst_tbqueue_install_properties (GObjectClass * gobject_class)
{
  guint id;

  for (id = 1; id < G_N_ELEMENTS (properties); id++) {
    const Property *p = &properties[id];

    g_assert (p->store == STORE_HOOKS || (p->size == field_size (p)
            && p->size != 0));
    g_assert (p->store != STORE_HOOKS || (p->get != NULL
            && (p->set != NULL || !(p->flags & G_PARAM_WRITABLE))));
    pspecs[id] = param_spec_new (p);
  }
  g_object_class_install_properties (gobject_class, G_N_ELEMENTS (pspecs),
      pspecs);
}

/* ---- the fields ---- */

/* Under the lock the entry's store names, or before any other thread
 * sees the instance. */
static void
field_store (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gpointer f = G_STRUCT_MEMBER_P (tbq, p->offset);
  gboolean atomic = p->store == STORE_ATOMIC;

#define STORE_AS(ctype, v) G_STMT_START {                               \
  if (atomic)                                                           \
    TBQ_STORE (*(_Atomic ctype *) f, (v));                              \
  else                                                                  \
    *(ctype *) f = (v);                                                 \
} G_STMT_END

  switch (p->type) {
    case G_TYPE_UINT:
      STORE_AS (guint, g_value_get_uint (value));
      break;
    case G_TYPE_UINT64:
      STORE_AS (guint64, g_value_get_uint64 (value));
      break;
    case G_TYPE_INT:
      STORE_AS (gint, g_value_get_int (value));
      break;
    case G_TYPE_BOOLEAN:
      STORE_AS (gboolean, g_value_get_boolean (value));
      break;
    case G_TYPE_ENUM:
      STORE_AS (gint, g_value_get_enum (value));
      break;
    default:
      /* Strings and structures live behind hooks. */
      g_assert_not_reached ();
  }
#undef STORE_AS
}

static void
field_load (GstTbQueue * tbq, const Property * p, GValue * value)
{
  gpointer f = G_STRUCT_MEMBER_P (tbq, p->offset);
  gboolean atomic = p->store == STORE_ATOMIC;

#define LOAD_AS(ctype) \
  (atomic ? TBQ_LOAD (*(_Atomic ctype *) f) : *(ctype *) f)

  switch (p->type) {
    case G_TYPE_UINT:
      g_value_set_uint (value, LOAD_AS (guint));
      break;
    case G_TYPE_UINT64:
      g_value_set_uint64 (value, LOAD_AS (guint64));
      break;
    case G_TYPE_INT:
      g_value_set_int (value, LOAD_AS (gint));
      break;
    case G_TYPE_BOOLEAN:
      g_value_set_boolean (value, LOAD_AS (gboolean));
      break;
    case G_TYPE_ENUM:
      g_value_set_enum (value, LOAD_AS (gint));
      break;
    default:
      g_assert_not_reached ();
  }
#undef LOAD_AS
}

/* The fields only: no hook runs (the instance is not ready for them), so
 * what a changed hook derives from a default is the zeroed instance's
 * (orig_min_*: 0, as the thresholds' defaults). */
void
gst_tbqueue_properties_init (GstTbQueue * tbq)
{
  guint id;

  for (id = 1; id < G_N_ELEMENTS (properties); id++)
    if (properties[id].store != STORE_HOOKS)
      field_store (tbq, &properties[id],
          g_param_spec_get_default_value (pspecs[id]));
}

/* ---- setting ---- */

/* With the lock the store names held (qlock for an atomic field; the
 * object lock is taken here). */
static void
store (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  if (p->set != NULL) {
    p->set (tbq, p, value);
  } else if (p->store == STORE_OBJECT_LOCK) {
    GST_OBJECT_LOCK (tbq);
    field_store (tbq, p, value);
    GST_OBJECT_UNLOCK (tbq);
  } else {
    field_store (tbq, p, value);
  }
  if (p->changed != NULL)
    p->changed (tbq);
}

/* The current value, as text for a message. */
static gchar *
current_contents (GstTbQueue * tbq, guint prop_id)
{
  GValue v = G_VALUE_INIT;
  gchar *text;

  g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspecs[prop_id]));
  gst_tbqueue_get_property (G_OBJECT (tbq), prop_id, &v, pspecs[prop_id]);
  text = g_strdup_value_contents (&v);
  g_value_unset (&v);
  return text;
}

static void
post_refused (GstTbQueue * tbq, const gchar * text)
{
  GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS, ("%s", text), (NULL));
}

/* A value the range cannot express is refused as the pool geometry is
 * refused in PAUSED: a warning message naming the property, which the
 * debug log shows too.  Set before the element has a bus (gst-launch-1.0
 * sets a launch line's properties before it puts the element in the
 * pipeline), it is said again when the tasks start, where it is seen, as
 * a malformed CPU list is (gsttbqueue-placement.c). */
static void
refused (GstTbQueue * tbq, guint prop_id, const GValue * value,
    const gchar * why)
{
  gchar *asked = g_strdup_value_contents (value);
  gchar *kept = current_contents (tbq, prop_id);
  gchar *text = g_strdup_printf ("%s cannot be %s: %s; the value is kept "
      "(%s)", properties[prop_id].name, asked, why, kept);
  GstBus *bus = gst_element_get_bus (GST_ELEMENT (tbq));

  post_refused (tbq, text);
  if (bus == NULL) {
    GST_OBJECT_LOCK (tbq);
    if (tbq->refused == NULL)
      tbq->refused = g_ptr_array_new_with_free_func (g_free);
    g_ptr_array_add (tbq->refused, text);
    text = NULL;
    GST_OBJECT_UNLOCK (tbq);
  } else {
    gst_object_unref (bus);
  }
  g_free (text);
  g_free (asked);
  g_free (kept);
}

void
gst_tbqueue_properties_start (GstTbQueue * tbq)
{
  GPtrArray *refused;
  guint i;

  GST_OBJECT_LOCK (tbq);
  refused = tbq->refused;
  tbq->refused = NULL;
  GST_OBJECT_UNLOCK (tbq);
  if (refused == NULL)
    return;
  for (i = 0; i < refused->len; i++)
    post_refused (tbq, g_ptr_array_index (refused, i));
  g_ptr_array_unref (refused);
}

void
gst_tbqueue_properties_clear (GstTbQueue * tbq)
{
  g_clear_pointer (&tbq->refused, g_ptr_array_unref);
  g_clear_pointer (&tbq->temp_template, g_free);
  g_clear_pointer (&tbq->copy_group, g_free);
  g_clear_pointer (&tbq->temp_location, g_free);
}

/* Stored for the next READY to PAUSED change, or, while the pools exist,
 * refused with a warning on the bus (the value is kept). */
static void
set_when_ready (GstTbQueue * tbq, const Property * p, const GValue * value)
{
  gboolean in_use;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  in_use = tbq->geometry_in_use;
  if (!in_use)
    store (tbq, p, value);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (in_use)
    GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS,
        ("%s can only be changed in the NULL or READY state: the value is "
            "kept", p->name), (NULL));
}

void
gst_tbqueue_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);
  const Property *p = property_of (prop_id);
  gchar why[128];

  if (p == NULL)
    goto invalid_id;
  if (p->refuse != NULL && p->refuse (value, why, sizeof why))
    goto refuse;

  if (p->applies == APPLIES_READY) {
    set_when_ready (tbq, p, value);
  } else if (p->store == STORE_ATOMIC) {
    /* Limits and modes are read by both streaming threads, which decide
     * under qlock. */
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    store (tbq, p, value);
    /* Thresholds and limits decide when the src task may push. */
    if (tbq->reader != NULL)
      tbq_reader_wake (tbq->reader);
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    /* A limit changed: the buffering level too, evaluated at once. */
    gst_tbqueue_buffering_update (tbq);
  } else {
    store (tbq, p, value);
  }
  return;

invalid_id:
  G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  return;
refuse:
  refused (tbq, prop_id, value, why);
  return;
}

void
gst_tbqueue_properties_commit (GstTbQueue * tbq, guint n_pspecs,
    GParamSpec ** changed)
{
  void (*hooks[G_N_ELEMENTS (properties)]) (GstTbQueue *);
  guint i, k, n = 0;

  for (i = 0; i < n_pspecs; i++) {
    const Property *p = property_of_pspec (changed[i]);

    if (p == NULL || p->commit == NULL)
      continue;
    for (k = 0; k < n && hooks[k] != p->commit; k++);
    if (k == n)
      hooks[n++] = p->commit;
  }
  for (k = 0; k < n; k++)
    hooks[k] (tbq);
}

/* ---- reading ---- */

void
gst_tbqueue_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstTbQueue *tbq = GST_TBQUEUE (object);
  const Property *p = property_of (prop_id);

  if (p == NULL) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  } else if (p->get != NULL) {
    p->get (tbq, p, value);
  } else if (p->store == STORE_OBJECT_LOCK) {
    GST_OBJECT_LOCK (tbq);
    field_load (tbq, p, value);
    GST_OBJECT_UNLOCK (tbq);
  } else {
    field_load (tbq, p, value);
  }
}

/* tbqparallel: a bin of a tbqsplit, `workers` copies of a worker and a
 * tbqjoin: one stream processed on several threads, in its order.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bin is made at once with its split and join (its pads are theirs,
 * ghosted); the workers are made from the `worker` description when the
 * bin goes from NULL to READY, and made again there when `workers` or
 * `worker` changed.  The split's limits and max-in-flight are the bin's
 * properties, forwarded.
 */

/**
 * SECTION:element-tbqparallel
 * @title: tbqparallel
 *
 * Runs a per-buffer transform on several threads and keeps the stream's
 * order: `... ! tbqparallel workers=4 worker="jpegenc quality=85" ! ...`
 * is a #tbqsplit whose branches each run one copy of the worker, closed
 * by a #tbqjoin that puts their outputs back in order.  The worker is a
 * gst-launch description with one sink and one src pad left unlinked;
 * it should be a stateless per-buffer transform or an intra-only codec
 * (each input's outputs come out before it takes the next input).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=300 ! video/x-raw,width=1920,height=1080 ! \
 *     tbqparallel workers=2 worker="jpegenc quality=85" ! multifilesink location=f%05d.jpg
 * ]| Two JPEG encoders, the frames written in order.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttbqparallel.h"
#include "gsttbqsplit.h"
#include "gsttbqueue.h"

GST_DEBUG_CATEGORY_STATIC (parallel_debug);
#define GST_CAT_DEFAULT parallel_debug

#define GST_TYPE_TBQ_PARALLEL (gst_tbq_parallel_get_type ())
#define GST_TBQ_PARALLEL(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), GST_TYPE_TBQ_PARALLEL, GstTbqParallel))

typedef struct
{
  GstBin bin;

  GstElement *split;            /* constant */
  GstElement *join;             /* constant; NULL if tbqjoin is missing */
  GPtrArray *workers;           /* the worker bins now in the bin (the
                                 * state-change thread's) */
  /* Object lock: as set; applied at the next NULL to READY. */
  guint n_workers;              /* 0: the online CPUs, counted then */
  gchar *worker;
  gboolean stale;               /* changed since the workers were made */
} GstTbqParallel;

typedef struct
{
  GstBinClass parent_class;
} GstTbqParallelClass;

G_DEFINE_TYPE_WITH_CODE (GstTbqParallel, gst_tbq_parallel, GST_TYPE_BIN,
    GST_DEBUG_CATEGORY_INIT (parallel_debug, "tbqparallel", 0,
        "tbqparallel bin"));
GST_ELEMENT_REGISTER_DEFINE (tbqparallel, "tbqparallel", GST_RANK_NONE,
    GST_TYPE_TBQ_PARALLEL);

#define DEFAULT_WORKER "identity"

enum
{
  PROP_0,
  PROP_WORKERS,
  PROP_WORKER,
  /* Forwarded to the split, same names: */
  PROP_FIRST_FORWARDED,
};

/* The split's properties the bin has too, under the same names. */
static const gchar *const forwarded[] = {
  "max-in-flight", "max-size-buffers", "max-size-bytes", "max-size-time",
  "leaky", "transfer", "temp-template", "sink-max-bytes", "current-in-flight",
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Remove the workers (the bin is in NULL or READY: they are stopped). */
static void
remove_workers (GstTbqParallel * self)
{
  guint i;

  for (i = 0; i < self->workers->len; i++) {
    GstElement *w = g_ptr_array_index (self->workers, i);
    GstPad *sink = gst_element_get_static_pad (w, "sink");
    GstPad *src = gst_element_get_static_pad (w, "src");
    GstPad *up = sink ? gst_pad_get_peer (sink) : NULL;
    GstPad *down = src ? gst_pad_get_peer (src) : NULL;

    gst_element_set_state (w, GST_STATE_NULL);
    if (up != NULL) {
      gst_pad_unlink (up, sink);
      gst_element_release_request_pad (self->split, up);
      gst_object_unref (up);
    }
    if (down != NULL) {
      gst_pad_unlink (src, down);
      gst_element_release_request_pad (self->join, down);
      gst_object_unref (down);
    }
    gst_clear_object (&sink);
    gst_clear_object (&src);
    gst_bin_remove (GST_BIN (self), w);
  }
  g_ptr_array_set_size (self->workers, 0);
}

/* The first pad of an element inside worker `w` that is still unlinked
 * once its sink and src pads are ghosted (a reference), or NULL.  A
 * description ghosts the first unlinked pad of each direction: another
 * source's src pad (`identity fakesrc`) could take the place of the
 * worker's output, and the input would go nowhere. */
static GstPad *
find_extra_pad (GstElement * w)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (w));
  GValue v = G_VALUE_INIT;
  GstPad *found = NULL;
  gboolean done = FALSE;

  while (!done && found == NULL) {
    switch (gst_iterator_next (it, &v)) {
      case GST_ITERATOR_OK:{
        GstElement *e = g_value_get_object (&v);
        GList *l;

        GST_OBJECT_LOCK (e);
        for (l = e->pads; l != NULL && found == NULL; l = l->next)
          if (!gst_pad_is_linked (l->data))
            found = gst_object_ref (l->data);
        GST_OBJECT_UNLOCK (e);
        g_value_reset (&v);
        break;
      }
      case GST_ITERATOR_RESYNC:
        gst_iterator_resync (it);
        break;
      default:
        done = TRUE;
        break;
    }
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return found;
}

/* Link a worker between a new branch of the split and a new sink pad of
 * the join. */
static gboolean
link_worker (GstTbqParallel * self, GstElement * w, gchar * msg, gsize size)
{
  GstPad *sink = gst_element_get_static_pad (w, "sink");
  GstPad *src = gst_element_get_static_pad (w, "src");
  GstPad *up = NULL, *down = NULL, *extra;
  gboolean ok = FALSE;

  if (sink == NULL || src == NULL) {
    g_snprintf (msg, size, "the worker must have one unlinked sink pad and "
        "one unlinked src pad");
    goto out;
  }
  if ((extra = find_extra_pad (w)) != NULL) {
    g_snprintf (msg, size, "the worker must have one unlinked sink pad and "
        "one unlinked src pad, and %s:%s is unlinked too",
        GST_DEBUG_PAD_NAME (extra));
    gst_object_unref (extra);
    goto out;
  }
  up = gst_element_request_pad_simple (self->split, "src_%u");
  down = gst_element_request_pad_simple (self->join, "sink_%u");
  if (up == NULL || down == NULL) {
    g_snprintf (msg, size, "cannot get a branch of the split or the join");
    goto out;
  }
  if (GST_PAD_LINK_FAILED (gst_pad_link (up, sink))
      || GST_PAD_LINK_FAILED (gst_pad_link (src, down))) {
    g_snprintf (msg, size, "cannot link the worker");
    goto out;
  }
  ok = TRUE;
out:
  if (!ok && up != NULL)
    gst_element_release_request_pad (self->split, up);
  if (!ok && down != NULL)
    gst_element_release_request_pad (self->join, down);
  gst_clear_object (&up);
  gst_clear_object (&down);
  gst_clear_object (&sink);
  gst_clear_object (&src);
  return ok;
}

/* NULL to READY: the workers, made anew if the properties changed. */
static gboolean
make_workers (GstTbqParallel * self)
{
  gchar *desc;
  guint n, i;
  gchar msg[256] = "";

  GST_OBJECT_LOCK (self);
  if (!self->stale && self->workers->len > 0) {
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  desc = g_strdup (self->worker);
  n = self->n_workers > 0 ? self->n_workers : g_get_num_processors ();
  self->stale = FALSE;
  GST_OBJECT_UNLOCK (self);
  if (self->join == NULL) {
    GST_ELEMENT_ERROR (self, CORE, MISSING_PLUGIN,
        ("The tbqjoin element is missing"), (NULL));
    g_free (desc);
    return FALSE;
  }
  remove_workers (self);
  for (i = 0; i < n; i++) {
    GError *err = NULL;
    GstElement *w = gst_parse_bin_from_description (desc, TRUE, &err);

    if (w == NULL) {
      GST_ELEMENT_ERROR (self, CORE, FAILED,
          ("Cannot make the worker \"%s\": %s", desc,
              err ? err->message : "?"), (NULL));
      g_clear_error (&err);
      goto failed;
    }
    g_clear_error (&err);
    gst_bin_add (GST_BIN (self), w);
    g_ptr_array_add (self->workers, w);
    if (!link_worker (self, w, msg, sizeof msg)) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Cannot use the worker \"%s\": %s", desc, msg), (NULL));
      goto failed;
    }
  }
  GST_DEBUG_OBJECT (self, "%u workers of \"%s\"", n, desc);
  g_free (desc);
  return TRUE;

failed:
  remove_workers (self);
  g_free (desc);
  return FALSE;
}

static GstStateChangeReturn
parallel_change_state (GstElement * element, GstStateChange transition)
{
  GstTbqParallel *self = GST_TBQ_PARALLEL (element);

  if (transition == GST_STATE_CHANGE_NULL_TO_READY && !make_workers (self))
    return GST_STATE_CHANGE_FAILURE;
  return GST_ELEMENT_CLASS (gst_tbq_parallel_parent_class)->change_state
      (element, transition);
}

static void
parallel_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstTbqParallel *self = GST_TBQ_PARALLEL (object);

  switch (prop_id) {
    case PROP_WORKERS:
      GST_OBJECT_LOCK (self);
      self->n_workers = g_value_get_uint (value);
      self->stale = TRUE;
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_WORKER:
      GST_OBJECT_LOCK (self);
      g_free (self->worker);
      self->worker = g_value_dup_string (value);
      if (self->worker == NULL || self->worker[0] == '\0') {
        g_free (self->worker);
        self->worker = g_strdup (DEFAULT_WORKER);
      }
      self->stale = TRUE;
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      if (prop_id >= PROP_FIRST_FORWARDED
          && prop_id < PROP_FIRST_FORWARDED + G_N_ELEMENTS (forwarded)) {
        const gchar *name = forwarded[prop_id - PROP_FIRST_FORWARDED];

        /* The bin has no sink-min-bytes: a sink-max-bytes below the
         * split's minimum takes the minimum down with it, rather than
         * failing the start over a property the bin does not show. */
        if (g_str_equal (name, "sink-max-bytes")) {
          guint64 min = 0, max = g_value_get_uint64 (value);

          g_object_get (self->split, "sink-min-bytes", &min, NULL);
          if (min > max)
            g_object_set (self->split, "sink-min-bytes", max, NULL);
        }
        g_object_set_property (G_OBJECT (self->split), name, value);
        break;
      }
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
parallel_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstTbqParallel *self = GST_TBQ_PARALLEL (object);

  switch (prop_id) {
    case PROP_WORKERS:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->n_workers);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_WORKER:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->worker);
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      if (prop_id >= PROP_FIRST_FORWARDED
          && prop_id < PROP_FIRST_FORWARDED + G_N_ELEMENTS (forwarded)) {
        g_object_get_property (G_OBJECT (self->split),
            forwarded[prop_id - PROP_FIRST_FORWARDED], value);
        break;
      }
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
parallel_finalize (GObject * object)
{
  GstTbqParallel *self = GST_TBQ_PARALLEL (object);

  g_ptr_array_unref (self->workers);
  g_free (self->worker);
  G_OBJECT_CLASS (gst_tbq_parallel_parent_class)->finalize (object);
}

/* A copy of the split's spec of `name`, for the bin. */
static GParamSpec *
forwarded_spec (GObjectClass * split_class, const gchar * name)
{
  GParamSpec *src = g_object_class_find_property (split_class, name);
  GParamFlags flags = src->flags & (G_PARAM_READWRITE
      | GST_PARAM_MUTABLE_READY | GST_PARAM_MUTABLE_PAUSED
      | GST_PARAM_MUTABLE_PLAYING);
  const gchar *nick = g_param_spec_get_nick (src);
  const gchar *blurb = g_param_spec_get_blurb (src);
  const GValue *def = g_param_spec_get_default_value (src);

  flags |= G_PARAM_STATIC_STRINGS;
  if (G_IS_PARAM_SPEC_UINT (src)) {
    GParamSpecUInt *u = G_PARAM_SPEC_UINT (src);

    return g_param_spec_uint (name, nick, blurb, u->minimum, u->maximum,
        u->default_value, flags);
  }
  if (G_IS_PARAM_SPEC_UINT64 (src)) {
    GParamSpecUInt64 *u = G_PARAM_SPEC_UINT64 (src);

    return g_param_spec_uint64 (name, nick, blurb, u->minimum, u->maximum,
        u->default_value, flags);
  }
  if (G_IS_PARAM_SPEC_ENUM (src))
    return g_param_spec_enum (name, nick, blurb, src->value_type,
        g_value_get_enum (def), flags);
  return g_param_spec_string (name, nick, blurb, g_value_get_string (def),
      flags);
}

static void
gst_tbq_parallel_class_init (GstTbqParallelClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GObjectClass *split_class;
  GType split_type;
  guint i;

  gobject_class->set_property = parallel_set_property;
  gobject_class->get_property = parallel_get_property;
  gobject_class->finalize = parallel_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR (parallel_change_state);

  /**
   * GstTbqParallel:workers:
   *
   * How many copies of the worker run side by side.  0 (the default): as
   * many as the machine has online CPUs, counted when the workers are
   * made.  Applies at the next NULL to READY.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_WORKERS,
      g_param_spec_uint ("workers", "Workers",
          "Copies of the worker (0 = the number of online CPUs)", 0, 256, 0,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbqParallel:worker:
   *
   * The worker, as a gst-launch-1.0 description with one unlinked sink pad
   * and one unlinked src pad ("jpegenc quality=85", "videoconvert !
   * jpegenc").  Applies at the next NULL to READY.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_WORKER,
      g_param_spec_string ("worker", "Worker",
          "The worker, a gst-launch-1.0 description (one sink, one src pad)",
          DEFAULT_WORKER, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  split_type = gst_tbq_split_get_type ();
  split_class = g_type_class_ref (split_type);
  for (i = 0; split_class != NULL && i < G_N_ELEMENTS (forwarded); i++)
    g_object_class_install_property (gobject_class, PROP_FIRST_FORWARDED + i,
        forwarded_spec (split_class, forwarded[i]));
  if (split_class != NULL)
    g_type_class_unref (split_class);

  gst_element_class_set_static_metadata (element_class,
      "Parallel branches in order", "Generic/Bin",
      "Runs a worker on several threads and keeps the stream's order "
      "(tbqsplit, the workers, tbqjoin)", "The tbqueue authors");
  gst_element_class_add_metadata (element_class,
      GST_ELEMENT_METADATA_DOC_URI, gst_tbqueue_doc_uri ());
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
}

static void
gst_tbq_parallel_init (GstTbqParallel * self)
{
  GstPad *pad, *ghost;

  self->workers = g_ptr_array_new ();
  self->n_workers = 0;
  self->worker = g_strdup (DEFAULT_WORKER);
  self->stale = TRUE;
  self->split = gst_element_factory_make ("tbqsplit", "split");
  self->join = gst_element_factory_make ("tbqjoin", "join");
  gst_bin_add (GST_BIN (self), self->split);
  pad = gst_element_get_static_pad (self->split, "sink");
  ghost = gst_ghost_pad_new_from_template ("sink", pad,
      gst_static_pad_template_get (&sink_template));
  gst_element_add_pad (GST_ELEMENT (self), ghost);
  gst_object_unref (pad);
  if (self->join != NULL) {
    gst_bin_add (GST_BIN (self), self->join);
    pad = gst_element_get_static_pad (self->join, "src");
    ghost = gst_ghost_pad_new_from_template ("src", pad,
        gst_static_pad_template_get (&src_template));
    gst_element_add_pad (GST_ELEMENT (self), ghost);
    gst_object_unref (pad);
  }
}

/* Test elements for the parallel branches: the worker and the verifying
 * sink (what they do, and their locks: tbq-workers.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-workers.h"

#include <string.h>

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* ---- inputs ---- */

GstBuffer *
tbq_input_new (guint64 index)
{
  GstBuffer *buffer = gst_buffer_new_allocate (NULL, TBQ_INPUT_SIZE, NULL);
  guint8 data[TBQ_INPUT_SIZE];
  guint i;

  for (i = 0; i < 8; i++)
    data[i] = (guint8) (index >> (8 * i));
  for (i = 8; i < TBQ_INPUT_SIZE; i++)
    data[i] = (guint8) (index * 31 + i);
  gst_buffer_fill (buffer, 0, data, TBQ_INPUT_SIZE);
  GST_BUFFER_PTS (buffer) = index * GST_MSECOND;
  GST_BUFFER_DURATION (buffer) = GST_MSECOND;
  return buffer;
}

gboolean
tbq_input_index (GstBuffer * buffer, guint64 * index)
{
  guint8 data[TBQ_INPUT_SIZE];
  guint64 v = 0;
  guint i;

  if (gst_buffer_get_size (buffer) != TBQ_INPUT_SIZE
      || gst_buffer_extract (buffer, 0, data, TBQ_INPUT_SIZE)
      != TBQ_INPUT_SIZE)
    return FALSE;
  for (i = 0; i < 8; i++)
    v |= (guint64) data[i] << (8 * i);
  for (i = 8; i < TBQ_INPUT_SIZE; i++)
    if (data[i] != (guint8) (v * 31 + i))
      return FALSE;
  if (GST_BUFFER_PTS (buffer) != v * GST_MSECOND)
    return FALSE;
  *index = v;
  return TRUE;
}

GstEvent *
tbq_caps_event (GstCaps * caps)
{
  GstEvent *event = gst_event_new_caps (caps);

  gst_caps_unref (caps);
  return event;
}

guint64
tbq_buffer_digest (GstBuffer * buffer)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize len = sizeof digest;
  GstMapInfo map;
  guint64 v = 0;
  guint i;

  fail_unless (gst_buffer_map (buffer, &map, GST_MAP_READ));
  g_checksum_update (sum, map.data, (gssize) map.size);
  gst_buffer_unmap (buffer, &map);
  g_checksum_get_digest (sum, digest, &len);
  g_checksum_free (sum);
  for (i = 0; i < 8; i++)
    v |= (guint64) digest[i] << (8 * i);
  /* G_MAXUINT64 means "not an input" to the sink. */
  return v == G_MAXUINT64 ? v - 1 : v;
}

/* ---- the worker ---- */

typedef struct
{
  GstElementClass parent_class;
} TbqTestWorkerClass;

G_DEFINE_TYPE (TbqTestWorker, tbq_test_worker, GST_TYPE_ELEMENT);

enum
{
  PROP_0,
  PROP_DELAY_US,
  PROP_DROP_EVERY,
  PROP_DUP,
  PROP_MERGE,
  PROP_STRIP,
  PROP_MARK_CAPS,
  PROP_STALL_AT,
  PROP_ERROR_AT,
  PROP_QUERY_AFTER,
};

/* query_after: a serialized query downstream after an output, whose push
 * returned `ret`; it must be answered (a join answers it once the output
 * is out). */
static GstFlowReturn
worker_query_after (TbqTestWorker * w, GstFlowReturn ret)
{
  GstQuery *query;
  gboolean res;

  if (!w->query_after || ret != GST_FLOW_OK)
    return ret;
  query = gst_query_new_custom (TBQ_QUERY_SERIALIZED,
      gst_structure_new_empty ("tbq-worker-query"));
  res = gst_pad_peer_query (w->srcpad, query);
  gst_query_unref (query);
  if (!res)
    return GST_PAD_IS_FLUSHING (w->srcpad) ? GST_FLOW_FLUSHING : ret;
  TBQ_LOCK (w);
  w->queries_answered++;
  TBQ_UNLOCK (w);
  return ret;
}

static void
worker_lose (TbqTestWorker * w, guint64 index)
{
  TBQ_LOCK (w);
  g_array_append_val (w->lost, index);
  TBQ_UNLOCK (w);
}

static GstFlowReturn
worker_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  TbqTestWorker *w = TBQ_TEST_WORKER (parent);
  GstBuffer *out = buffer;
  GstFlowReturn ret;
  guint64 index;
  guint n;

  fail_unless (tbq_input_index (buffer, &index), "a worker got a bad input");
  TBQ_LOCK (w);
  n = w->n_in++;
  TBQ_BROADCAST (w);
  if (w->stall_at >= 0 && n == (guint) w->stall_at) {
    w->stalled = w->has_stalled = TRUE;
    TBQ_BROADCAST (w);
    while (!w->unstall)
      pthread_cond_wait (&w->cond, &w->lock);
    w->stalled = FALSE;
  }
  TBQ_UNLOCK (w);
  if (w->error_at >= 0 && n == (guint) w->error_at) {
    worker_lose (w, index);
    gst_buffer_unref (buffer);
    GST_ELEMENT_ERROR (w, STREAM, FAILED, ("The test worker fails"),
        ("at its input %u", n));
    return GST_FLOW_ERROR;
  }
  if (w->delay_us > 0)
    g_usleep (g_random_int_range (0, (gint32) w->delay_us + 1));
  if (w->drop_every > 0 && n % w->drop_every == w->drop_every - 1) {
    worker_lose (w, index);
    gst_buffer_unref (buffer);
    return GST_FLOW_OK;
  }
  if (w->merge) {
    guint64 first;

    if (w->held == NULL) {
      w->held = buffer;
      return GST_FLOW_OK;
    }
    fail_unless (tbq_input_index (w->held, &first));
    worker_lose (w, first);
    gst_clear_buffer (&w->held);
  }
  if (w->strip) {
    gpointer state = NULL;

    out = gst_buffer_copy_region (buffer, GST_BUFFER_COPY_FLAGS
        | GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_DEEP
        | GST_BUFFER_COPY_MEMORY, 0, -1);
    gst_buffer_unref (buffer);
    fail_unless (gst_buffer_iterate_meta (out, &state) == NULL);
  }
  if (w->dup && (ret = worker_query_after (w, gst_pad_push (w->srcpad,
                  gst_buffer_copy (out)))) != GST_FLOW_OK) {
    gst_buffer_unref (out);
    return ret;
  }
  return worker_query_after (w, gst_pad_push (w->srcpad, out));
}

/* A list: its buffers taken out of it first, one after the other, so
 * that each buffer's last reference goes on with it (not held by the list
 * until all are done, where ThreadSanitizer would not see the hand-over
 * of its memory through GStreamer's atomic reference counts). */
static gboolean
take_buffer (GstBuffer ** buffer, guint idx, gpointer user_data)
{
  g_ptr_array_add (user_data, *buffer);
  *buffer = NULL;
  return TRUE;
}

static GstFlowReturn
worker_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  GPtrArray *buffers = g_ptr_array_new ();
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  list = gst_buffer_list_make_writable (list);
  gst_buffer_list_foreach (list, take_buffer, buffers);
  gst_buffer_list_unref (list);
  for (i = 0; i < buffers->len; i++) {
    GstBuffer *buffer = g_ptr_array_index (buffers, i);

    if (ret == GST_FLOW_OK)
      ret = worker_chain (pad, parent, buffer);
    else
      gst_buffer_unref (buffer);
  }
  g_ptr_array_unref (buffers);
  return ret;
}

static gboolean
worker_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TbqTestWorker *w = TBQ_TEST_WORKER (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:
      if (w->mark_caps) {
        GstCaps *caps;

        gst_event_parse_caps (event, &caps);
        caps = gst_caps_copy (caps);
        gst_caps_set_simple (caps, "worker", G_TYPE_BOOLEAN, TRUE, NULL);
        gst_event_unref (event);
        event = tbq_caps_event (caps);
      }
      break;
    case GST_EVENT_EOS:
    case GST_EVENT_FLUSH_STOP:
      if (w->held != NULL) {
        guint64 first;

        fail_unless (tbq_input_index (w->held, &first));
        worker_lose (w, first);
        gst_clear_buffer (&w->held);
      }
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

void
tbq_worker_unstall (TbqTestWorker * w)
{
  TBQ_LOCK (w);
  w->unstall = TRUE;
  TBQ_BROADCAST (w);
  TBQ_UNLOCK (w);
}

void
tbq_worker_wait_stalled (TbqTestWorker * w)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  TBQ_LOCK (w);
  while (!w->has_stalled)
    fail_unless (tbq_timed_wait (&w->cond, &w->lock, end) || w->has_stalled,
        "the worker did not stall (%u inputs, stall at %d)", w->n_in,
        w->stall_at);
  TBQ_UNLOCK (w);
}

void
tbq_worker_wait_inputs (TbqTestWorker * w, guint n)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  TBQ_LOCK (w);
  while (w->n_in < n)
    fail_unless (tbq_timed_wait (&w->cond, &w->lock, end) || w->n_in >= n,
        "the worker took %u inputs, not %u", w->n_in, n);
  TBQ_UNLOCK (w);
}

guint
tbq_worker_n_lost (TbqTestWorker * w)
{
  guint n;

  TBQ_LOCK (w);
  n = w->lost->len;
  TBQ_UNLOCK (w);
  return n;
}

static void
add_workers (GstBin * bin, GPtrArray * out)
{
  GList *l;

  GST_OBJECT_LOCK (bin);
  for (l = bin->children; l != NULL; l = l->next) {
    if (G_TYPE_CHECK_INSTANCE_TYPE (l->data, tbq_test_worker_get_type ()))
      g_ptr_array_add (out, gst_object_ref (l->data));
    else if (GST_IS_BIN (l->data))
      add_workers (GST_BIN (l->data), out);
  }
  GST_OBJECT_UNLOCK (bin);
}

GPtrArray *
tbq_workers_in (GstBin * bin)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (gst_object_unref);

  add_workers (bin, out);
  return out;
}

GHashTable *
tbq_lost_set_new (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
}

void
tbq_lost_set_add (GHashTable * set, TbqTestWorker * w)
{
  guint i;

  TBQ_LOCK (w);
  for (i = 0; i < w->lost->len; i++)
    g_hash_table_add (set, g_memdup2 (&g_array_index (w->lost, guint64, i),
            sizeof (guint64)));
  TBQ_UNLOCK (w);
}

static void
worker_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  TbqTestWorker *w = TBQ_TEST_WORKER (object);

  switch (prop_id) {
    case PROP_DELAY_US:
      w->delay_us = g_value_get_uint (value);
      break;
    case PROP_DROP_EVERY:
      w->drop_every = g_value_get_uint (value);
      break;
    case PROP_DUP:
      w->dup = g_value_get_boolean (value);
      break;
    case PROP_MERGE:
      w->merge = g_value_get_boolean (value);
      break;
    case PROP_STRIP:
      w->strip = g_value_get_boolean (value);
      break;
    case PROP_MARK_CAPS:
      w->mark_caps = g_value_get_boolean (value);
      break;
    case PROP_STALL_AT:
      w->stall_at = g_value_get_int (value);
      break;
    case PROP_ERROR_AT:
      w->error_at = g_value_get_int (value);
      break;
    case PROP_QUERY_AFTER:
      w->query_after = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
worker_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  TbqTestWorker *w = TBQ_TEST_WORKER (object);

  switch (prop_id) {
    case PROP_DELAY_US:
      g_value_set_uint (value, w->delay_us);
      break;
    case PROP_DROP_EVERY:
      g_value_set_uint (value, w->drop_every);
      break;
    case PROP_DUP:
      g_value_set_boolean (value, w->dup);
      break;
    case PROP_MERGE:
      g_value_set_boolean (value, w->merge);
      break;
    case PROP_STRIP:
      g_value_set_boolean (value, w->strip);
      break;
    case PROP_MARK_CAPS:
      g_value_set_boolean (value, w->mark_caps);
      break;
    case PROP_STALL_AT:
      g_value_set_int (value, w->stall_at);
      break;
    case PROP_ERROR_AT:
      g_value_set_int (value, w->error_at);
      break;
    case PROP_QUERY_AFTER:
      g_value_set_boolean (value, w->query_after);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* A stall ends when the worker stops (PAUSED to READY), as a worker that
 * waits for something must stop waiting then: its pads could not be
 * deactivated while its chain waits. */
static GstStateChangeReturn
worker_change_state (GstElement * element, GstStateChange transition)
{
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    tbq_worker_unstall (TBQ_TEST_WORKER (element));
  return GST_ELEMENT_CLASS (tbq_test_worker_parent_class)->change_state
      (element, transition);
}

static void
tbq_test_worker_finalize (GObject * object)
{
  TbqTestWorker *w = TBQ_TEST_WORKER (object);

  gst_clear_buffer (&w->held);
  g_array_unref (w->lost);
  pthread_mutex_destroy (&w->lock);
  pthread_cond_destroy (&w->cond);
  G_OBJECT_CLASS (tbq_test_worker_parent_class)->finalize (object);
}

static void
tbq_test_worker_class_init (TbqTestWorkerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->finalize = tbq_test_worker_finalize;
  element_class->change_state = worker_change_state;
  gobject_class->set_property = worker_set_property;
  gobject_class->get_property = worker_get_property;
  g_object_class_install_property (gobject_class, PROP_DELAY_US,
      g_param_spec_uint ("delay-us", "Delay", "Random sleep per input, at "
          "most (us)", 0, G_MAXUINT, 0, rw));
  g_object_class_install_property (gobject_class, PROP_DROP_EVERY,
      g_param_spec_uint ("drop-every", "Drop every", "Drop every n-th input "
          "(0: none)", 0, G_MAXUINT, 0, rw));
  g_object_class_install_property (gobject_class, PROP_DUP,
      g_param_spec_boolean ("dup", "Dup", "Two outputs per input", FALSE, rw));
  g_object_class_install_property (gobject_class, PROP_MERGE,
      g_param_spec_boolean ("merge", "Merge", "One output per two inputs",
          FALSE, rw));
  g_object_class_install_property (gobject_class, PROP_STRIP,
      g_param_spec_boolean ("strip", "Strip", "Outputs without the input's "
          "metas", FALSE, rw));
  g_object_class_install_property (gobject_class, PROP_MARK_CAPS,
      g_param_spec_boolean ("mark-caps", "Mark caps", "Caps with a worker "
          "field", FALSE, rw));
  g_object_class_install_property (gobject_class, PROP_STALL_AT,
      g_param_spec_int ("stall-at", "Stall at", "Wait at this input until "
          "released (-1: never)", -1, G_MAXINT, -1, rw));
  g_object_class_install_property (gobject_class, PROP_ERROR_AT,
      g_param_spec_int ("error-at", "Error at", "Fail at this input "
          "(-1: never)", -1, G_MAXINT, -1, rw));
  g_object_class_install_property (gobject_class, PROP_QUERY_AFTER,
      g_param_spec_boolean ("query-after", "Query after", "A serialized "
          "query downstream after each output", FALSE, rw));
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class, "Test worker",
      "Filter", "What a branch's worker may do", "The tbqueue authors");
}

static void
tbq_test_worker_init (TbqTestWorker * w)
{
  w->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (w->sinkpad, worker_chain);
  gst_pad_set_chain_list_function (w->sinkpad, worker_chain_list);
  gst_pad_set_event_function (w->sinkpad, worker_event);
  GST_PAD_SET_PROXY_CAPS (w->sinkpad);
  GST_PAD_SET_PROXY_ALLOCATION (w->sinkpad);
  gst_element_add_pad (GST_ELEMENT (w), w->sinkpad);
  w->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  GST_PAD_SET_PROXY_CAPS (w->srcpad);
  gst_element_add_pad (GST_ELEMENT (w), w->srcpad);
  tbq_init_lock (&w->lock, &w->cond);
  w->lost = g_array_new (FALSE, FALSE, sizeof (guint64));
  w->stall_at = -1;
  w->error_at = -1;
}

GstElement *
tbq_worker_new (const TbqWorkerConfig * cfg, TbqTestWorker ** w)
{
  TbqTestWorker *worker = g_object_new (tbq_test_worker_get_type (), NULL);
  GstElement *bin, *queue;
  GstPad *pad;

  worker->delay_us = cfg->delay_us;
  worker->drop_every = cfg->drop_every;
  worker->dup = cfg->dup;
  worker->merge = cfg->merge;
  worker->strip = cfg->strip;
  worker->mark_caps = cfg->mark_caps;
  worker->stall_at = cfg->stall_at;
  worker->error_at = cfg->error_at;
  *w = worker;
  if (!cfg->queue_inside)
    return GST_ELEMENT (worker);
  bin = gst_bin_new (NULL);
  queue = gst_element_factory_make ("queue", NULL);
  fail_unless (queue != NULL);
  gst_bin_add_many (GST_BIN (bin), queue, GST_ELEMENT (worker), NULL);
  fail_unless (gst_element_link (queue, GST_ELEMENT (worker)));
  pad = gst_element_get_static_pad (queue, "sink");
  gst_element_add_pad (bin, gst_ghost_pad_new ("sink", pad));
  gst_object_unref (pad);
  gst_element_add_pad (bin, gst_ghost_pad_new ("src", worker->srcpad));
  return bin;
}

/* ---- the sink ---- */

typedef struct
{
  GstElementClass parent_class;
} TbqTestSinkClass;

G_DEFINE_TYPE (TbqTestSink, tbq_test_sink, GST_TYPE_ELEMENT);

static TbqTestSink *
sink_of (GstPad * pad)
{
  return TBQ_TEST_SINK (gst_pad_get_element_private (pad));
}

static gboolean
sink_locked_held (TbqTestSink * s)
{
  return s->hold || (s->hold_after > 0 && s->indices->len >= s->hold_after);
}

static gboolean
sink_locked_wait_hold (TbqTestSink * s)
{
  while (sink_locked_held (s) && !s->flushing) {
    s->holding++;
    TBQ_BROADCAST (s);
    pthread_cond_wait (&s->cond, &s->lock);
    s->holding--;
  }
  return !s->flushing;
}

static GstFlowReturn
sink_locked_take (TbqTestSink * s, GstBuffer * buffer)
{
  guint64 index;

  if (s->digests) {
    index = tbq_buffer_digest (buffer);
  } else if (!tbq_input_index (buffer, &index)) {
    s->bad++;
    index = G_MAXUINT64;
  }
  g_array_append_val (s->indices, index);
  s->progress = g_get_monotonic_time ();
  if (s->error_at != 0 && s->indices->len >= s->error_at)
    return GST_FLOW_ERROR;
  return GST_FLOW_OK;
}

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  TbqTestSink *s = sink_of (pad);
  GstFlowReturn ret;

  TBQ_LOCK (s);
  if (!sink_locked_wait_hold (s)) {
    TBQ_UNLOCK (s);
    gst_buffer_unref (buffer);
    return GST_FLOW_FLUSHING;
  }
  ret = sink_locked_take (s, buffer);
  TBQ_BROADCAST (s);
  TBQ_UNLOCK (s);
  gst_buffer_unref (buffer);
  return ret;
}

static GstFlowReturn
sink_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  TbqTestSink *s = sink_of (pad);
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;

  TBQ_LOCK (s);
  for (i = 0; i < gst_buffer_list_length (list) && ret == GST_FLOW_OK; i++)
    ret = sink_locked_take (s, gst_buffer_list_get (list, i));
  TBQ_BROADCAST (s);
  TBQ_UNLOCK (s);
  gst_buffer_list_unref (list);
  return ret;
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TbqTestSink *s = sink_of (pad);
  gboolean eos = GST_EVENT_TYPE (event) == GST_EVENT_EOS;
  guint at;

  TBQ_LOCK (s);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START)
    s->flushing = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    s->flushing = FALSE;
  if (GST_EVENT_IS_SERIALIZED (event)
      && GST_EVENT_TYPE (event) != GST_EVENT_FLUSH_STOP)
    sink_locked_wait_hold (s);
  at = s->indices->len;
  g_ptr_array_add (s->events, event);
  g_array_append_val (s->event_at, at);
  s->progress = g_get_monotonic_time ();
  TBQ_BROADCAST (s);
  TBQ_UNLOCK (s);
  /* As a sink: the pipeline's EOS waits for every sink's. */
  if (eos && GST_OBJECT_PARENT (s) != NULL)
    gst_element_post_message (GST_ELEMENT (s),
        gst_message_new_eos (GST_OBJECT (s)));
  return TRUE;
}

/* ALLOCATION is answered at once, whatever holds the chain; a
 * serialized "tj-query" notes how many buffers came before it; a
 * worker's "tbq-worker-query" is answered. */
static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  TbqTestSink *s = sink_of (pad);
  const GstStructure *st = gst_query_get_structure (query);

  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION) {
    TBQ_LOCK (s);
    s->allocation_queries++;
    TBQ_UNLOCK (s);
    return TRUE;
  }
  if (st != NULL && gst_structure_has_name (st, "tj-query")) {
    TBQ_LOCK (s);
    s->query_at = (gint) s->indices->len;
    TBQ_BROADCAST (s);
    TBQ_UNLOCK (s);
    return TRUE;
  }
  /* (A worker's query_after.) */
  if (st != NULL && gst_structure_has_name (st, "tbq-worker-query"))
    return TRUE;
  return gst_pad_query_default (pad, parent, query);
}

/* Downstream stops first, as in a pipeline: a held chain returns. */
static gboolean
sink_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  TbqTestSink *s = sink_of (pad);

  TBQ_LOCK (s);
  s->flushing = !active;
  TBQ_BROADCAST (s);
  TBQ_UNLOCK (s);
  return TRUE;
}

/* An event sent to the element (a seek sent to the pipeline goes to its
 * sinks): upstream from its pad, as a sink sends it. */
static gboolean
sink_send_event (GstElement * element, GstEvent * event)
{
  TbqTestSink *s = TBQ_TEST_SINK (element);

  if (!GST_EVENT_IS_UPSTREAM (event)) {
    gst_event_unref (event);
    return FALSE;
  }
  return gst_pad_push_event (s->pad, event);
}

static void
tbq_test_sink_finalize (GObject * object)
{
  TbqTestSink *s = TBQ_TEST_SINK (object);

  g_array_unref (s->indices);
  g_ptr_array_unref (s->events);
  g_array_unref (s->event_at);
  pthread_mutex_destroy (&s->lock);
  pthread_cond_destroy (&s->cond);
  G_OBJECT_CLASS (tbq_test_sink_parent_class)->finalize (object);
}

static void
tbq_test_sink_class_init (TbqTestSinkClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = tbq_test_sink_finalize;
  element_class->send_event = sink_send_event;
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class, "Test sink",
      "Sink", "Records and checks what reaches it", "The tbqueue authors");
}

static void
tbq_test_sink_init (TbqTestSink * s)
{
  tbq_init_lock (&s->lock, &s->cond);
  s->indices = g_array_new (FALSE, FALSE, sizeof (guint64));
  s->events = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  s->event_at = g_array_new (FALSE, FALSE, sizeof (guint));
  s->query_at = -1;
  s->flushing = TRUE;
  s->pad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_element_private (s->pad, s);
  gst_pad_set_chain_function (s->pad, sink_chain);
  gst_pad_set_chain_list_function (s->pad, sink_chain_list);
  gst_pad_set_event_function (s->pad, sink_event);
  gst_pad_set_query_function (s->pad, sink_query);
  gst_pad_set_activatemode_function (s->pad, sink_activate_mode);
  gst_element_add_pad (GST_ELEMENT (s), s->pad);
  GST_OBJECT_FLAG_SET (s, GST_ELEMENT_FLAG_SINK);
}

TbqTestSink *
tbq_test_sink_new_linked (GstElement * element)
{
  TbqTestSink *s = g_object_new (tbq_test_sink_get_type (), NULL);
  GstPad *src;

  gst_object_ref_sink (s);
  gst_pad_set_active (s->pad, TRUE);
  src = gst_element_get_static_pad (element, "src");
  /* The sink is in no bin: the hierarchy is not checked. */
  fail_unless (gst_pad_link_full (src, s->pad, GST_PAD_LINK_CHECK_CAPS)
      == GST_PAD_LINK_OK);
  gst_object_unref (src);
  return s;
}

void
tbq_test_sink_free (TbqTestSink * s)
{
  GstPad *peer = gst_pad_get_peer (s->pad);

  if (peer != NULL) {
    gst_pad_unlink (peer, s->pad);
    gst_object_unref (peer);
  }
  gst_pad_set_active (s->pad, FALSE);
  gst_object_unref (s);
}

guint
tbq_test_sink_locked_count (TbqTestSink * s, GstEventType type)
{
  guint i, n = 0;

  for (i = 0; i < s->events->len; i++)
    if (GST_EVENT_TYPE (g_ptr_array_index (s->events, i)) == type)
      n++;
  return n;
}

guint
tbq_test_sink_count (TbqTestSink * s, GstEventType type)
{
  guint n;

  TBQ_LOCK (s);
  n = tbq_test_sink_locked_count (s, type);
  TBQ_UNLOCK (s);
  return n;
}

void
tbq_test_sink_hold (TbqTestSink * s)
{
  TBQ_LOCK (s);
  s->hold = TRUE;
  TBQ_UNLOCK (s);
}

void
tbq_test_sink_release (TbqTestSink * s)
{
  TBQ_LOCK (s);
  s->hold = FALSE;
  s->hold_after = 0;
  TBQ_BROADCAST (s);
  TBQ_UNLOCK (s);
}

void
tbq_test_sink_wait_eos (TbqTestSink * s)
{
  TBQ_TEST_SINK_WAIT (s, tbq_test_sink_locked_count (s, GST_EVENT_EOS) > 0,
      "EOS");
}

void
tbq_test_sink_wait_event (TbqTestSink * s, GstEventType type)
{
  TBQ_TEST_SINK_WAIT (s, tbq_test_sink_locked_count (s, type) > 0,
      gst_event_type_get_name (type));
}

void
tbq_test_sink_wait_buffers (TbqTestSink * s, guint n)
{
  TBQ_TEST_SINK_WAIT (s, s->indices->len >= n, "buffers");
}

void
tbq_test_sink_wait_holding (TbqTestSink * s)
{
  TBQ_TEST_SINK_WAIT (s, s->holding > 0, "downstream to be held");
}

void
tbq_test_sink_check_in_order (TbqTestSink * s, guint64 base, guint64 n,
    guint times, GHashTable * lost)
{
  guint64 expect = base, i;
  guint k, pos = 0, n_lost = 0;

  TBQ_LOCK (s);
  fail_unless_equals_int (s->bad, 0);
  for (i = 0; i < n; i++, expect++) {
    if (lost != NULL && g_hash_table_contains (lost, &expect)) {
      n_lost++;
      continue;
    }
    for (k = 0; k < times; k++, pos++) {
      fail_unless (pos < s->indices->len, "input %" G_GUINT64_FORMAT
          " is missing downstream", expect);
      fail_unless (g_array_index (s->indices, guint64, pos) == expect,
          "position %u: input %" G_GUINT64_FORMAT ", expected %"
          G_GUINT64_FORMAT, pos, g_array_index (s->indices, guint64, pos),
          expect);
    }
  }
  fail_unless_equals_int (pos, s->indices->len);
  TBQ_UNLOCK (s);
  fail_unless_equals_int (pos, (n - n_lost) * times);
}

void
tbq_test_sink_check_event_once_at (TbqTestSink * s, GstEventType type,
    const gchar * name, guint at)
{
  guint i, seen = 0;

  TBQ_LOCK (s);
  for (i = 0; i < s->events->len; i++) {
    GstEvent *e = g_ptr_array_index (s->events, i);
    const GstStructure *st = gst_event_get_structure (e);

    if (GST_EVENT_TYPE (e) != type || (name != NULL && (st == NULL
                || !gst_structure_has_name (st, name))))
      continue;
    seen++;
    fail_unless_equals_int (g_array_index (s->event_at, guint, i), at);
  }
  TBQ_UNLOCK (s);
  fail_unless_equals_int (seen, 1);
}

void
tbq_test_sink_check_workers (TbqTestSink * s, GPtrArray * workers,
    guint64 n, guint times)
{
  GHashTable *lost = tbq_lost_set_new ();
  guint i;

  for (i = 0; i < workers->len; i++)
    tbq_lost_set_add (lost, g_ptr_array_index (workers, i));
  tbq_test_sink_check_in_order (s, 0, n, times, lost);
  g_hash_table_unref (lost);
}

/* ---- the join's promises ---- */

guint64
tbq_join_stat (GstElement * join, const gchar * field)
{
  GstStructure *st;
  guint64 v = 0;
  guint u;

  g_object_get (join, "stats", &st, NULL);
  fail_unless (st != NULL);
  if (!gst_structure_get_uint64 (st, field, &v)) {
    fail_unless (gst_structure_get_uint (st, field, &u), "no field %s",
        field);
    v = u;
  }
  gst_structure_free (st);
  return v;
}

guint
tbq_bus_count (GstBus * bus, GstMessageType type, const gchar * text)
{
  GstMessage *m;
  guint n = 0;

  while ((m = gst_bus_pop_filtered (bus, type)) != NULL) {
    GError *err = NULL;
    gchar *debug = NULL;

    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING)
      gst_message_parse_warning (m, &err, &debug);
    else
      gst_message_parse_error (m, &err, &debug);
    if (text == NULL || strstr (err->message, text) != NULL) {
      /* In the test's log: what a failed count was made of. */
      g_printerr ("%s from %s: %s (%s)\n", GST_MESSAGE_TYPE_NAME (m),
          GST_MESSAGE_SRC_NAME (m), err->message, debug ? debug : "");
      n++;
    }
    g_free (debug);
    g_error_free (err);
    gst_message_unref (m);
  }
  return n;
}

TbqWorkerConfig
tbq_scenario_config (TbqScenario scenario)
{
  TbqWorkerConfig cfg = TBQ_WORKER_DEFAULT;

  cfg.delay_us = 500;
  switch (scenario) {
    case TBQ_SCENARIO_DELAYS:
      cfg.delay_us = 2000;
      break;
    case TBQ_SCENARIO_DROPS:
      cfg.delay_us = 0;
      cfg.drop_every = 3;
      break;
    case TBQ_SCENARIO_DUP:
      cfg.dup = TRUE;
      break;
    case TBQ_SCENARIO_MERGE:
      cfg.merge = TRUE;
      break;
    case TBQ_SCENARIO_STRIP_SYNC:
      cfg.strip = TRUE;
      break;
    case TBQ_SCENARIO_STRIP_QUEUE:
      cfg.strip = TRUE;
      cfg.queue_inside = TRUE;
      break;
  }
  return cfg;
}

void
tbq_scenario_check (TbqScenario scenario, TbqTestSink * sink,
    GstElement * join, GstBus * bus, GPtrArray * workers, guint64 n)
{
  guint times = scenario == TBQ_SCENARIO_DUP ? 2 : 1;
  guint lost = 0, i;

  for (i = 0; i < workers->len; i++)
    lost += tbq_worker_n_lost (g_ptr_array_index (workers, i));
  tbq_test_sink_check_workers (sink, workers, n, times);
  fail_unless_equals_int (tbq_test_sink_count (sink, GST_EVENT_EOS), 1);
  fail_unless_equals_int (tbq_join_stat (join, "late"), 0);
  fail_unless_equals_int (tbq_join_stat (join, "gaps"), lost);
  fail_unless_equals_int (tbq_join_stat (join, "buffers-out"),
      (n - lost) * times);
  switch (scenario) {
    case TBQ_SCENARIO_DROPS:
      fail_unless (lost > 0, "no worker dropped");
      break;
    case TBQ_SCENARIO_MERGE:
      fail_unless (lost >= n / 2);
      break;
    case TBQ_SCENARIO_STRIP_SYNC:
      fail_unless_equals_int (tbq_bus_count (bus, GST_MESSAGE_WARNING,
              "strips"), 0);
      break;
    case TBQ_SCENARIO_STRIP_QUEUE:
      fail_unless_equals_int (tbq_bus_count (bus, GST_MESSAGE_WARNING,
              "strips"), 1);
      break;
    default:
      fail_unless_equals_int (lost, 0);
      break;
  }
}

/* ---- registration ---- */

/* Outside any test (check's messaging is not set up): g_assert. */
void
tbq_workers_register (void)
{
  gboolean ok;

  ok = gst_element_register (NULL, "tbqtestworker", GST_RANK_NONE,
      tbq_test_worker_get_type ());
  ok &= gst_element_register (NULL, "tbqtestsink", GST_RANK_NONE,
      tbq_test_sink_get_type ());
  g_assert (ok);
}

/* Shared helpers for the tbqueue element tests: fixtures with the leak
 * check, a linked element with a recording downstream (TbqLink), waits with
 * a hang check.  Why TbqLink and not GstHarness: see tbq-check.h.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tbq-check.h"

static GstStaticPadTemplate srctemplate = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate sinktemplate = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static const gchar *signal_names[TBQ_N_SIGNALS] = {
  "underrun", "running", "overrun", "pushing"
};

/* ---- size and time ---- */

gdouble
tbq_test_scale (void)
{
  const gchar *s = g_getenv ("TBQ_TEST_SCALE");
  gdouble scale = s ? g_ascii_strtod (s, NULL) : 1.0;

  return scale > 0.0 ? scale : 1.0;
}

guint
tbq_scaled (guint n, guint min)
{
  guint v = (guint) (n * tbq_test_scale ());

  return MAX (v, min);
}

/* The helpers lock with POSIX primitives: GLib's futex-based GMutex and
 * GCond are invisible to ThreadSanitizer. */
#define LOCK(x) pthread_mutex_lock (&(x)->lock)
#define UNLOCK(x) pthread_mutex_unlock (&(x)->lock)
#define BROADCAST(x) pthread_cond_broadcast (&(x)->cond)

void
tbq_init_lock (pthread_mutex_t * lock, pthread_cond_t * cond)
{
  pthread_condattr_t attr;

  pthread_mutex_init (lock, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (cond, &attr);
  pthread_condattr_destroy (&attr);
}

gboolean
tbq_timed_wait (pthread_cond_t * cond, pthread_mutex_t * lock, gint64 end)
{
  struct timespec ts;

  ts.tv_sec = end / G_USEC_PER_SEC;
  ts.tv_nsec = (end % G_USEC_PER_SEC) * 1000;
  return pthread_cond_timedwait (cond, lock, &ts) == 0;
}

static gint64
deadline (void)
{
  return g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;
}

/* ---- main and fixtures ---- */

int
tbq_check_main (int *argc, char ***argv, Suite * (*suite_func) (void),
    const gchar * name, const gchar * file)
{
  /* The leaks tracer watches every GStreamer object of every test, also
   * when a test binary is run by hand. */
  g_setenv ("GST_TRACERS", "leaks", FALSE);
  /* Scan plugins in this process: the system plugin scanner cannot load a
   * sanitizer-instrumented plugin. */
  g_setenv ("GST_REGISTRY_FORK", "no", FALSE);
  gst_check_init (argc, argv);
  return gst_check_run_suite (suite_func (), name, file);
}

TCase *
tbq_tcase (Suite * s, const gchar * name)
{
  TCase *tc = tcase_create (name);

  tcase_add_checked_fixture (tc, tbq_leaks_begin, tbq_leaks_end);
  /* A hang check: far above what any test needs, even under sanitizers. */
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  return tc;
}

static GstTracer *
find_leaks_tracer (void)
{
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  GstTracer *found = NULL;

  for (l = tracers; l != NULL; l = l->next) {
    if (found == NULL
        && g_strcmp0 (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer") == 0)
      found = gst_object_ref (l->data);
  }
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

gboolean
tbq_leaks_tracer_active (void)
{
  GstTracer *tracer = find_leaks_tracer ();

  if (tracer == NULL)
    return FALSE;
  gst_object_unref (tracer);
  return TRUE;
}

static gboolean leaks_tracking;

void
tbq_leaks_begin (void)
{
  GstTracer *tracer = find_leaks_tracer ();

  /* Every test runs with GST_TRACERS=leaks (tbq_check_main): a tracer that
   * is missing (its plugin, coretracers, not found) would turn every leak
   * check into one that cannot fail. */
  fail_unless (tracer != NULL, "the leaks tracer is not active (GST_TRACERS="
      "%s): is the coretracers plugin visible?", g_getenv ("GST_TRACERS"));
  g_signal_emit_by_name (tracer, "activity-start-tracking");
  leaks_tracking = TRUE;
  gst_object_unref (tracer);
}

static gboolean
object_may_be_leaked (gpointer obj, const gchar * type_name)
{
  GType type = g_type_from_name (type_name);

  if (type == 0)
    return FALSE;
  if (g_type_is_a (type, GST_TYPE_OBJECT))
    return GST_OBJECT_FLAG_IS_SET (obj, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  if (g_type_is_a (type, G_TYPE_OBJECT))
    return FALSE;
  return GST_MINI_OBJECT_FLAG_IS_SET (obj, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);
}

static gboolean
type_matches (const gchar * type_name, const gchar * prefixes)
{
  gchar **p, **list;
  gboolean match = FALSE;

  if (prefixes == NULL)
    return TRUE;
  list = g_strsplit (prefixes, ",", -1);
  for (p = list; *p != NULL; p++)
    if (g_str_has_prefix (type_name, *p))
      match = TRUE;
  g_strfreev (list);
  return match;
}

/* "address type-name" of a checkpoint entry (newly allocated). */
static gchar *
object_key (const GstStructure * o)
{
  return g_strdup_printf ("%s %s", gst_structure_get_string (o, "address"),
      gst_structure_get_string (o, "type-name"));
}

guint
tbq_leaks_count (const gchar * type_prefixes)
{
  GstTracer *tracer = find_leaks_tracer ();
  GstStructure *cp = NULL;
  const GValue *created, *removed;
  GHashTable *alive;
  guint i, n = 0;

  fail_unless (tracer != NULL, "the leaks tracer is not active");
  fail_unless (leaks_tracking, "leak tracking was not started");
  g_signal_emit_by_name (tracer, "activity-get-checkpoint", &cp);
  fail_unless (cp != NULL);

  /* "address type" -> (created - destroyed) since the last checkpoint.  By
   * address and type: an object freed in the test may leave its address to
   * another, of another type, that lives on (a pad template made by a
   * class_init after a memory was freed); the entry alive is that one, and
   * only its type says how to look at it. */
  alive = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  removed = gst_structure_get_value (cp, "objects-removed-list");
  for (i = 0; i < gst_value_list_get_size (removed); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (removed, i));
    gchar *key = object_key (o);
    gint c = GPOINTER_TO_INT (g_hash_table_lookup (alive, key));

    g_hash_table_insert (alive, key, GINT_TO_POINTER (c - 1));
  }
  created = gst_structure_get_value (cp, "objects-created-list");
  for (i = 0; i < gst_value_list_get_size (created); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (created, i));
    gchar *key = object_key (o);
    gint c = GPOINTER_TO_INT (g_hash_table_lookup (alive, key));

    g_hash_table_insert (alive, key, GINT_TO_POINTER (c + 1));
  }
  for (i = 0; i < gst_value_list_get_size (created); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (created, i));
    const gchar *addr = gst_structure_get_string (o, "address");
    const gchar *type = gst_structure_get_string (o, "type-name");
    gchar *key = object_key (o);
    gpointer obj = NULL;
    gint c = GPOINTER_TO_INT (g_hash_table_lookup (alive, key));

    if (c <= 0) {
      g_free (key);
      continue;
    }
    /* Count each live object once. */
    g_hash_table_insert (alive, key, GINT_TO_POINTER (0));
    if (sscanf (addr, "%p", &obj) != 1 || obj == NULL)
      continue;
    if (object_may_be_leaked (obj, type) || !type_matches (type, type_prefixes))
      continue;
    {
      gchar *desc = gst_info_strdup_printf ("%" GST_PTR_FORMAT, obj);

      g_print ("leaked: %s %s %s\n", type, addr, desc);
      g_free (desc);
    }
    n++;
  }
  g_hash_table_unref (alive);
  gst_structure_free (cp);
  gst_object_unref (tracer);
  return n;
}

void
tbq_leaks_end (void)
{
  GstTracer *tracer;
  guint n;

  if (!leaks_tracking)
    return;
  n = tbq_leaks_count (NULL);
  tracer = find_leaks_tracer ();
  g_signal_emit_by_name (tracer, "activity-stop-tracking");
  gst_object_unref (tracer);
  leaks_tracking = FALSE;
  fail_unless (n == 0, "%u GStreamer objects leaked (listed above)", n);
}

/* ---- a linked element ---- */

static void
on_signal (TbqLink * l, TbqSignal sig)
{
  LOCK (l);
  l->signals[sig]++;
  g_ptr_array_add (l->signal_threads[sig], g_thread_self ());
  BROADCAST (l);
  UNLOCK (l);
}

static void
on_underrun (GstElement * e, TbqLink * l)
{
  on_signal (l, TBQ_SIGNAL_UNDERRUN);
}

static void
on_running (GstElement * e, TbqLink * l)
{
  on_signal (l, TBQ_SIGNAL_RUNNING);
}

static void
on_pushing (GstElement * e, TbqLink * l)
{
  on_signal (l, TBQ_SIGNAL_PUSHING);
}

static void
on_overrun (GstElement * e, TbqLink * l)
{
  on_signal (l, TBQ_SIGNAL_OVERRUN);
  if (l->overrun_func)
    l->overrun_func (l, l->overrun_data);
}

static TbqLink *
link_of (GstPad * pad)
{
  return gst_pad_get_element_private (pad);
}

/* Wait while downstream is held; FALSE when a flush interrupted. */
static gboolean
locked_wait_hold (TbqLink * l)
{
  while (l->hold && !l->flushing) {
    l->holding++;
    BROADCAST (l);
    pthread_cond_wait (&l->cond, &l->lock);
    l->holding--;
  }
  return !l->flushing;
}

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  TbqLink *l = link_of (pad);
  GstFlowReturn ret;

  LOCK (l);
  l->streaming_thread = g_thread_self ();
  if (!locked_wait_hold (l)) {
    UNLOCK (l);
    gst_buffer_unref (buffer);
    return GST_FLOW_FLUSHING;
  }
  if (l->keep_copies) {
    GstBuffer *copy = gst_buffer_copy_deep (buffer);

    gst_buffer_unref (buffer);
    buffer = copy;
  }
  g_ptr_array_add (l->items, buffer);
  l->n_buffers++;
  ret = l->chain_return;
  BROADCAST (l);
  UNLOCK (l);
  return ret;
}

static GstFlowReturn
sink_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  TbqLink *l = link_of (pad);
  GstFlowReturn ret;

  LOCK (l);
  l->streaming_thread = g_thread_self ();
  if (!locked_wait_hold (l)) {
    UNLOCK (l);
    gst_buffer_list_unref (list);
    return GST_FLOW_FLUSHING;
  }
  if (l->keep_copies) {
    GstBufferList *copy = gst_buffer_list_copy_deep (list);

    gst_buffer_list_unref (list);
    list = copy;
  }
  g_ptr_array_add (l->items, list);
  l->n_buffers += gst_buffer_list_length (list);
  ret = l->chain_return;
  BROADCAST (l);
  UNLOCK (l);
  return ret;
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TbqLink *l = link_of (pad);

  LOCK (l);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START)
    l->flushing = TRUE;
  else if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    l->flushing = FALSE;
  if (GST_EVENT_IS_SERIALIZED (event)
      && GST_EVENT_TYPE (event) != GST_EVENT_FLUSH_STOP) {
    l->streaming_thread = g_thread_self ();
    locked_wait_hold (l);
  }
  g_ptr_array_add (l->items, event);
  BROADCAST (l);
  UNLOCK (l);
  return TRUE;
}

static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  TbqLink *l = link_of (pad);
  gboolean res = TRUE;

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *caps;

      gst_query_parse_caps (query, &filter);
      LOCK (l);
      caps = l->accept_caps ? gst_caps_ref (l->accept_caps) :
          gst_caps_new_any ();
      UNLOCK (l);
      if (filter) {
        GstCaps *tmp = gst_caps_intersect (caps, filter);

        gst_caps_unref (caps);
        caps = tmp;
      }
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      break;
    }
    case GST_QUERY_ACCEPT_CAPS:{
      GstCaps *caps;

      gst_query_parse_accept_caps (query, &caps);
      LOCK (l);
      gst_query_set_accept_caps_result (query, l->accept_caps == NULL
          || gst_caps_can_intersect (caps, l->accept_caps));
      UNLOCK (l);
      break;
    }
    case GST_QUERY_ALLOCATION:
      gst_query_add_allocation_meta (query, GST_PARENT_BUFFER_META_API_TYPE,
          NULL);
      break;
    case GST_QUERY_DRAIN:
      break;
    default:{
      /* A test's own query: answered with what downstream saw so far. */
      const GstStructure *q = gst_query_get_structure (query);

      if (q == NULL || !gst_structure_has_name (q, "tbq-test")) {
        res = FALSE;
        break;
      }
      LOCK (l);
      gst_structure_set (gst_query_writable_structure (query), "answered",
          G_TYPE_BOOLEAN, TRUE, "buffers-before", G_TYPE_UINT, l->n_buffers,
          NULL);
      UNLOCK (l);
      break;
    }
  }
  if (GST_QUERY_IS_SERIALIZED (query)) {
    LOCK (l);
    g_ptr_array_add (l->items, gst_query_copy (query));
    l->queries_seen++;
    BROADCAST (l);
    UNLOCK (l);
  }
  return res;
}

/* Deactivating our sink pad is downstream stopping: it lets go. */
static gboolean
sink_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  TbqLink *l = link_of (pad);

  LOCK (l);
  l->flushing = !active;
  BROADCAST (l);
  UNLOCK (l);
  return mode == GST_PAD_MODE_PUSH;
}

static gboolean
src_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  TbqLink *l = link_of (pad);

  LOCK (l);
  g_ptr_array_add (l->upstream_events, event);
  BROADCAST (l);
  UNLOCK (l);
  return TRUE;
}

static gboolean
src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  TbqLink *l = link_of (pad);
  gboolean res = FALSE;

  LOCK (l);
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_LATENCY:
      gst_query_set_latency (query, l->latency_live, l->latency_min,
          l->latency_max);
      res = TRUE;
      break;
    case GST_QUERY_POSITION:{
      GstFormat format;

      gst_query_parse_position (query, &format, NULL);
      if (format == GST_FORMAT_TIME || format == GST_FORMAT_BYTES) {
        gst_query_set_position (query, format, l->position);
        res = TRUE;
      }
      break;
    }
    default:
      break;
  }
  UNLOCK (l);
  return res;
}

TbqLink *
tbq_link_new (const gchar * factory, const gchar * first_property, ...)
{
  TbqLink *l = g_new0 (TbqLink, 1);
  GstPad *esink;
  va_list args;
  gint i;

  tbq_init_lock (&l->lock, &l->cond);
  l->items = g_ptr_array_new ();
  l->upstream_events = g_ptr_array_new ();
  l->chain_return = GST_FLOW_OK;
  l->latency_min = 0;
  l->latency_max = GST_CLOCK_TIME_NONE;
  for (i = 0; i < TBQ_N_SIGNALS; i++)
    l->signal_threads[i] = g_ptr_array_new ();

  l->element = gst_check_setup_element (factory);
  if (first_property) {
    va_start (args, first_property);
    g_object_set_valist (G_OBJECT (l->element), first_property, args);
    va_end (args);
  }
  g_signal_connect (l->element, "underrun", G_CALLBACK (on_underrun), l);
  g_signal_connect (l->element, "running", G_CALLBACK (on_running), l);
  g_signal_connect (l->element, "overrun", G_CALLBACK (on_overrun), l);
  g_signal_connect (l->element, "pushing", G_CALLBACK (on_pushing), l);

  l->srcpad = gst_pad_new_from_static_template (&srctemplate, "src");
  gst_pad_set_element_private (l->srcpad, l);
  gst_pad_set_event_function (l->srcpad, src_event);
  gst_pad_set_query_function (l->srcpad, src_query);
  esink = gst_element_get_static_pad (l->element, "sink");
  fail_unless (gst_pad_link (l->srcpad, esink) == GST_PAD_LINK_OK);
  gst_object_unref (esink);
  gst_pad_set_active (l->srcpad, TRUE);

  l->sinkpad = gst_pad_new_from_static_template (&sinktemplate, "sink");
  gst_pad_set_element_private (l->sinkpad, l);
  gst_pad_set_chain_function (l->sinkpad, sink_chain);
  gst_pad_set_chain_list_function (l->sinkpad, sink_chain_list);
  gst_pad_set_event_function (l->sinkpad, sink_event);
  gst_pad_set_query_function (l->sinkpad, sink_query);
  gst_pad_set_activatemode_function (l->sinkpad, sink_activate_mode);
  gst_pad_set_active (l->sinkpad, TRUE);
  l->esrc = gst_element_get_static_pad (l->element, "src");
  fail_unless (gst_pad_link (l->esrc, l->sinkpad) == GST_PAD_LINK_OK);
  return l;
}

void
tbq_link_set_state (TbqLink * l, GstState state)
{
  fail_unless_equals_int (gst_element_set_state (l->element, state),
      GST_STATE_CHANGE_SUCCESS);
}

void
tbq_link_push_initial_events (TbqLink * l, GstFormat format)
{
  GstSegment segment;

  gst_segment_init (&segment, format);
  fail_unless (gst_pad_push_event (l->srcpad,
          gst_event_new_stream_start ("tbq-test")));
  fail_unless (gst_pad_push_event (l->srcpad, gst_event_new_segment (&segment)));
}

void
tbq_link_start (TbqLink * l)
{
  guint before;

  LOCK (l);
  before = l->items->len;
  UNLOCK (l);
  tbq_link_set_state (l, GST_STATE_PLAYING);
  tbq_link_push_initial_events (l, GST_FORMAT_TIME);
  /* Linked: wait until both events are downstream, so that a test that
   * holds downstream next holds its first buffer, not an event. */
  if (gst_pad_is_linked (l->sinkpad))
    tbq_link_wait_items (l, before + 2);
}

void
tbq_link_start_held_no_segment (TbqLink * l)
{
  tbq_link_hold (l);
  tbq_link_set_state (l, GST_STATE_PLAYING);
  fail_unless (gst_pad_push_event (l->srcpad,
          gst_event_new_stream_start ("tbq-test")));
  tbq_link_wait_holding (l);
}

void
tbq_link_start_held (TbqLink * l)
{
  GstSegment segment;

  tbq_link_start_held_no_segment (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (l->srcpad, gst_event_new_segment (&segment)));
}

gboolean
tbq_link_is_tbqueue (TbqLink * l)
{
  return g_str_has_prefix (GST_OBJECT_NAME (gst_element_get_factory
          (l->element)), "tbqueue");
}

guint
tbq_link_n_buffers (TbqLink * l)
{
  guint n;

  LOCK (l);
  n = l->n_buffers;
  UNLOCK (l);
  return n;
}

static void
clear_items (GPtrArray * items)
{
  guint i;

  for (i = 0; i < items->len; i++)
    gst_mini_object_unref (g_ptr_array_index (items, i));
  g_ptr_array_set_size (items, 0);
}

void
tbq_link_clear (TbqLink * l)
{
  LOCK (l);
  clear_items (l->items);
  l->n_buffers = 0;
  UNLOCK (l);
}

void
tbq_link_free (TbqLink * l)
{
  gint i;

  /* Whatever a test left held must not block the state change. */
  tbq_link_release (l);
  tbq_link_set_state (l, GST_STATE_NULL);
  gst_pad_unlink (l->esrc, l->sinkpad);
  gst_object_unref (l->esrc);
  gst_pad_set_active (l->sinkpad, FALSE);
  gst_pad_set_active (l->srcpad, FALSE);
  gst_object_unref (l->sinkpad);
  gst_object_unref (l->srcpad);
  /* Checks that nothing else holds the element, then destroys it. */
  gst_check_teardown_element (l->element);

  clear_items (l->items);
  g_ptr_array_unref (l->items);
  clear_items (l->upstream_events);
  g_ptr_array_unref (l->upstream_events);
  for (i = 0; i < TBQ_N_SIGNALS; i++)
    g_ptr_array_unref (l->signal_threads[i]);
  if (l->accept_caps)
    gst_caps_unref (l->accept_caps);
  pthread_mutex_destroy (&l->lock);
  pthread_cond_destroy (&l->cond);
  g_free (l);
}

GstFlowReturn
tbq_link_push (TbqLink * l, GstBuffer * buffer)
{
  return gst_pad_push (l->srcpad, buffer);
}

GstFlowReturn
tbq_link_push_list (TbqLink * l, GstBufferList * list)
{
  return gst_pad_push_list (l->srcpad, list);
}

gboolean
tbq_link_push_event (TbqLink * l, GstEvent * event)
{
  return gst_pad_push_event (l->srcpad, event);
}

GstBuffer *
tbq_buffer_new (gsize size, guint8 seed, GstClockTime pts)
{
  GstBuffer *buffer = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  gsize i;

  fail_unless (gst_buffer_map (buffer, &map, GST_MAP_WRITE));
  for (i = 0; i < size; i++)
    map.data[i] = (guint8) (seed + i);
  gst_buffer_unmap (buffer, &map);
  GST_BUFFER_PTS (buffer) = pts;
  return buffer;
}

GstBufferPool *
tbq_pool_new (gsize size, guint n)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);

  gst_buffer_pool_config_set_params (config, NULL, (guint) size, n, n);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

void
tbq_pool_free (GstBufferPool * pool)
{
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
}

gboolean
tbq_buffer_has_pattern (GstBuffer * buffer, gsize size, guint8 seed)
{
  GstMapInfo map;
  gboolean same = TRUE;
  gsize i;

  if (gst_buffer_get_size (buffer) != size)
    return FALSE;
  if (!gst_buffer_map (buffer, &map, GST_MAP_READ))
    return FALSE;
  for (i = 0; i < size && same; i++)
    same = map.data[i] == (guint8) (seed + i);
  gst_buffer_unmap (buffer, &map);
  return same;
}

/* ---- pushing from another thread ---- */

struct _TbqPush
{
  TbqLink *link;
  GstMiniObject *item;
  GThread *thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  gboolean done;
  GstFlowReturn ret;
};

static gpointer
push_thread (gpointer data)
{
  TbqPush *p = data;
  GstFlowReturn ret;

  if (GST_IS_BUFFER (p->item))
    ret = gst_pad_push (p->link->srcpad, GST_BUFFER_CAST (p->item));
  else if (GST_IS_BUFFER_LIST (p->item))
    ret = gst_pad_push_list (p->link->srcpad, GST_BUFFER_LIST_CAST (p->item));
  else
    ret = gst_pad_push_event (p->link->srcpad, GST_EVENT_CAST (p->item)) ?
        GST_FLOW_OK : GST_FLOW_ERROR;
  LOCK (p);
  p->ret = ret;
  p->done = TRUE;
  BROADCAST (p);
  UNLOCK (p);
  return NULL;
}

TbqPush *
tbq_push_async (TbqLink * link, GstMiniObject * item)
{
  TbqPush *p = g_new0 (TbqPush, 1);

  p->link = link;
  p->item = item;
  tbq_init_lock (&p->lock, &p->cond);
  p->thread = g_thread_new ("tbq-test-push", push_thread, p);
  return p;
}

struct _TbqQueryThread
{
  TbqLink *link;
  GstQuery *query;
  gboolean result;
  GThread *thread;
};

static gpointer
query_thread (gpointer data)
{
  TbqQueryThread *t = data;

  t->result = gst_pad_peer_query (t->link->srcpad, t->query);
  return NULL;
}

TbqQueryThread *
tbq_query_async (TbqLink * link, GstQuery * query)
{
  TbqQueryThread *t = g_new0 (TbqQueryThread, 1);

  t->link = link;
  t->query = query;
  t->thread = g_thread_new ("tbq-test-query", query_thread, t);
  return t;
}

gboolean
tbq_query_join (TbqQueryThread * t)
{
  gboolean result;

  g_thread_join (t->thread);
  result = t->result;
  g_free (t);
  return result;
}

GThread *
tbq_push_thread (TbqPush * p)
{
  return p->thread;
}

gboolean
tbq_push_is_done (TbqPush * p)
{
  gboolean done;

  LOCK (p);
  done = p->done;
  UNLOCK (p);
  return done;
}

GstFlowReturn
tbq_push_join (TbqPush * p)
{
  GstFlowReturn ret;
  gint64 end = deadline ();

  LOCK (p);
  while (!p->done)
    fail_unless (tbq_timed_wait (&p->cond, &p->lock, end) || p->done,
        "pushing thread did not return");
  UNLOCK (p);
  g_thread_join (p->thread);
  ret = p->ret;
  pthread_mutex_destroy (&p->lock);
  pthread_cond_destroy (&p->cond);
  g_free (p);
  return ret;
}

/* ---- downstream control and waits ---- */

void
tbq_link_hold (TbqLink * l)
{
  LOCK (l);
  l->hold = TRUE;
  UNLOCK (l);
}

void
tbq_link_stop_downstream (TbqLink * l)
{
  fail_unless (gst_pad_set_active (l->sinkpad, FALSE));
}

void
tbq_link_restart_downstream (TbqLink * l)
{
  fail_unless (gst_pad_set_active (l->sinkpad, TRUE));
}

void
tbq_link_release (TbqLink * l)
{
  LOCK (l);
  l->hold = FALSE;
  BROADCAST (l);
  UNLOCK (l);
}

#define LOCKED_WAIT(lk, pred, what) G_STMT_START {                   \
  gint64 end_ = deadline ();                                           \
  while (!(pred)) {                                                    \
    if (!tbq_timed_wait (&(lk)->cond, &(lk)->lock, end_) && !(pred))       \
      fail ("timed out waiting for %s", what);                         \
  }                                                                    \
} G_STMT_END

void
tbq_link_wait_holding (TbqLink * l)
{
  LOCK (l);
  LOCKED_WAIT (l, l->holding > 0, "downstream to be held");
  UNLOCK (l);
}

void
tbq_link_wait_buffers (TbqLink * l, guint n)
{
  LOCK (l);
  LOCKED_WAIT (l, l->n_buffers >= n, "buffers downstream");
  UNLOCK (l);
}

void
tbq_link_wait_items (TbqLink * l, guint n)
{
  LOCK (l);
  LOCKED_WAIT (l, l->items->len >= n, "items downstream");
  UNLOCK (l);
}

static gboolean
locked_has_event (TbqLink * l, GstEventType type)
{
  guint i;

  for (i = 0; i < l->items->len; i++) {
    GstMiniObject *o = g_ptr_array_index (l->items, i);

    if (GST_IS_EVENT (o) && GST_EVENT_TYPE (o) == type)
      return TRUE;
  }
  return FALSE;
}

void
tbq_link_wait_event (TbqLink * l, GstEventType type)
{
  LOCK (l);
  LOCKED_WAIT (l, locked_has_event (l, type), gst_event_type_get_name (type));
  UNLOCK (l);
}

void
tbq_link_wait_signal (TbqLink * l, TbqSignal sig, guint count)
{
  LOCK (l);
  LOCKED_WAIT (l, l->signals[sig] >= count, signal_names[sig]);
  UNLOCK (l);
}

void
tbq_link_wait_idle (TbqLink * l)
{
  LOCK (l);
  LOCKED_WAIT (l, l->signals[TBQ_SIGNAL_UNDERRUN]
      == l->signals[TBQ_SIGNAL_PUSHING] + 1, "the src task to be idle");
  UNLOCK (l);
}

guint
tbq_link_signal_count (TbqLink * l, TbqSignal sig)
{
  guint n;

  LOCK (l);
  n = l->signals[sig];
  UNLOCK (l);
  return n;
}

gboolean
tbq_link_signal_all_from (TbqLink * l, TbqSignal sig, GThread * thread)
{
  gboolean all = TRUE;
  guint i;

  LOCK (l);
  for (i = 0; i < l->signal_threads[sig]->len; i++)
    if (g_ptr_array_index (l->signal_threads[sig], i) != thread)
      all = FALSE;
  UNLOCK (l);
  return all;
}

GstBuffer *
tbq_link_buffer (TbqLink * l, guint index)
{
  GstBuffer *found = NULL;
  guint i, n = 0;

  LOCK (l);
  for (i = 0; i < l->items->len && found == NULL; i++) {
    GstMiniObject *o = g_ptr_array_index (l->items, i);

    if (GST_IS_BUFFER (o)) {
      if (n++ == index)
        found = GST_BUFFER_CAST (o);
    } else if (GST_IS_BUFFER_LIST (o)) {
      guint len = gst_buffer_list_length (GST_BUFFER_LIST_CAST (o));

      if (index < n + len)
        found = gst_buffer_list_get (GST_BUFFER_LIST_CAST (o), index - n);
      n += len;
    }
  }
  UNLOCK (l);
  fail_unless (found != NULL, "no buffer %u downstream", index);
  return found;
}

GstBuffer *
tbq_link_last_buffer (TbqLink * l)
{
  guint n = tbq_link_n_buffers (l);

  fail_unless (n > 0, "no buffer downstream");
  return tbq_link_buffer (l, n - 1);
}

guint
tbq_link_count_events (TbqLink * l, GstEventType type)
{
  guint i, n = 0;

  LOCK (l);
  for (i = 0; i < l->items->len; i++) {
    GstMiniObject *o = g_ptr_array_index (l->items, i);

    if (GST_IS_EVENT (o) && GST_EVENT_TYPE (o) == type)
      n++;
  }
  UNLOCK (l);
  return n;
}

guint
tbq_get_uint (GstElement * element, const gchar * property)
{
  guint v;

  g_object_get (element, property, &v, NULL);
  return v;
}

guint64
tbq_get_uint64 (GstElement * element, const gchar * property)
{
  guint64 v;

  g_object_get (element, property, &v, NULL);
  return v;
}

guint64
tbq_stat (GstElement * element, const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;

  g_object_get (element, "stats", &s, NULL);
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_uint64 (s, field, &v),
      "no stats field %s", field);
  gst_structure_free (s);
  return v;
}

void
tbq_wait_stat (GstElement * element, const gchar * field, guint64 value)
{
  gint64 end = deadline ();

  while (tbq_stat (element, field) < value) {
    fail_unless (g_get_monotonic_time () < end, "timed out waiting for %s "
        "to reach %" G_GUINT64_FORMAT, field, value);
    g_usleep (1000);
  }
}

guint64
tbq_wait_property (GstElement * element, const gchar * property,
    guint64 value)
{
  gint64 end = deadline ();
  GValue v = G_VALUE_INIT;
  guint64 now;

  /* (A guint property transforms into it.) */
  g_value_init (&v, G_TYPE_UINT64);
  while ((g_object_get_property (G_OBJECT (element), property, &v),
          now = g_value_get_uint64 (&v)) < value) {
    fail_unless (g_get_monotonic_time () < end, "%s stayed at %"
        G_GUINT64_FORMAT ", below %" G_GUINT64_FORMAT, property, now, value);
    g_usleep (1000);
  }
  g_value_unset (&v);
  return now;
}

void
tbq_link_wait_level_buffers (TbqLink * l, guint n)
{
  gint64 end = deadline ();

  while (tbq_get_uint (l->element, "current-level-buffers") != n) {
    fail_unless (g_get_monotonic_time () < end, "timed out waiting for "
        "current-level-buffers to be %u", n);
    g_usleep (1000);
  }
}

GstMessage *
tbq_bus_wait (GstBus * bus, GstMessageType types)
{
  return gst_bus_timed_pop_filtered (bus, TBQ_WAIT_SECONDS * GST_SECOND,
      types);
}

void
tbq_remove_dir (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL) {
    gchar *path = g_build_filename (dir, name, NULL);

    g_unlink (path);
    g_free (path);
  }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
}

/* The soak harness: command line, set-up, the end-of-run leak check and
 * the report (TAP: one test, "ok" or "not ok" with the reason).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   soak --element tbqueue --duration 30
 *   soak --element queue --buffers 20000000 --seed 42
 *   soak --seed 42 --chapter 17 --features lists,stall   (replay one chapter)
 *   soak --element tbqueue --group-peers 3   (3 more tbqueues in its copy
 *                                             group: soak-peers.c)
 *   soak --enable parallel    (half the chapters through a tbqsplit,
 *                              workers and a tbqjoin: soak-parallel.c)
 */
#include "soak.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Soak soak;

static const gchar *feature_names[] = {
  "lists", "events", "queries", "flush-inline", "flush-thread", "state",
  "stall", "geometry", "batch", "eos", "probe", "limits", "pool", "meta",
  "multimem", "spill", "buffering", "segment-jump", "parallel", NULL
};

const gchar *
soak_feature_name (guint bit)
{
  return bit < G_N_ELEMENTS (feature_names) ? feature_names[bit] : NULL;
}

gboolean
soak_features_parse (const gchar * list, guint * bits)
{
  gchar **names = g_strsplit (list, ",", -1), **n;
  gboolean ok = TRUE;

  *bits = 0;
  for (n = names; *n != NULL; n++) {
    guint b;

    if (**n == '\0')
      continue;
    if (g_str_equal (*n, "all")) {
      *bits |= SOAK_F_ALL;
      continue;
    }
    for (b = 0; feature_names[b] != NULL; b++)
      if (g_str_equal (*n, feature_names[b]))
        break;
    if (feature_names[b] == NULL) {
      g_printerr ("unknown feature '%s'\n", *n);
      ok = FALSE;
    }
    *bits |= 1u << b;
  }
  g_strfreev (names);
  return ok;
}

gchar *
soak_features_to_string (guint bits)
{
  GString *s = g_string_new (NULL);
  guint b;

  for (b = 0; feature_names[b] != NULL; b++)
    if (bits & (1u << b))
      g_string_append_printf (s, "%s%s", s->len ? "," : "", feature_names[b]);
  return g_string_free (s, FALSE);
}

static gchar *
modes_to_string (guint mask, const gchar * a, const gchar * b,
    const gchar * c)
{
  const gchar *names[] = { a, b, c };
  GString *s = g_string_new (NULL);
  guint m;

  for (m = 0; m < 3; m++)
    if (mask & (1u << m))
      g_string_append_printf (s, "%s%s", s->len ? "," : "", names[m]);
  return g_string_free (s, FALSE);
}

static gboolean
modes_parse (const gchar * list, const gchar * a, const gchar * b,
    const gchar * c, guint * mask)
{
  const gchar *names[] = { a, b, c };
  gchar **v = g_strsplit (list, ",", -1), **n;
  gboolean ok = TRUE;
  guint m;

  *mask = 0;
  for (n = v; *n != NULL; n++) {
    for (m = 0; m < 3 && !g_str_equal (*n, names[m]); m++);
    if (m == 3)
      ok = FALSE;
    else
      *mask |= 1u << m;
  }
  g_strfreev (v);
  return ok && *mask != 0;
}

gchar *
soak_replay_command (void)
{
  gchar *f = soak_features_to_string (soak.features);
  gchar *l = modes_to_string (soak.leaky_mask, "no", "upstream",
      "downstream");
  gchar *t = modes_to_string (soak.transfer_mask, "auto", "copy",
      "reference");
  gchar *cmd = g_strdup_printf ("soak --element %s --seed %" G_GUINT64_FORMAT
      " --chapter %u --features %s --leaky %s --transfer %s --group-peers %u",
      soak.element_name, soak.seed, soak.ch.index, f, l, t, soak.group_peers);

  g_free (f);
  g_free (l);
  g_free (t);
  return cmd;
}

/* ---- the element ---- */

gboolean
soak_has_property (const gchar * name)
{
  return g_object_class_find_property (G_OBJECT_GET_CLASS (soak.element),
      name) != NULL;
}

guint64
soak_stat (const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;

  if (!soak.is_tbqueue)
    return 0;
  g_object_get (soak.element, "stats", &s, NULL);
  if (s != NULL)
    gst_structure_get_uint64 (s, field, &v);
  gst_structure_free (s);
  return v;
}

/* What the chain dropped by leaking: the element's counters, and a
 * parallel chapter's split's. */
guint64
soak_element_dropped (void)
{
  return soak_stat ("dropped-upstream") + soak_stat ("dropped-downstream")
      + soak_parallel_dropped ();
}

typedef struct
{
  GstElement *element;          /* a reference */
  gchar *_Atomic result;
} StatsRead;

static gpointer
stats_string (gpointer data)
{
  StatsRead *r = data;
  GstStructure *s = NULL;
  gchar *str;

  g_object_get (r->element, "stats", &s, NULL);
  str = s ? gst_structure_to_string (s) : g_strdup ("(none)");
  if (s)
    gst_structure_free (s);
  atomic_store (&r->result, str);
  return NULL;
}

static gpointer
levels_string (gpointer data)
{
  StatsRead *r = data;
  guint buffers = 0, bytes = 0;
  guint64 time = 0;

  g_object_get (r->element, "current-level-buffers", &buffers,
      "current-level-bytes", &bytes, "current-level-time", &time, NULL);
  atomic_store (&r->result, g_strdup_printf ("%u buffers, %u bytes, %"
          G_GUINT64_FORMAT " ns", buffers, bytes, time));
  return NULL;
}

/* `read` (stats_string or levels_string) on `element` in a thread of its
 * own, for 2 s at most: a failure may be reported from a thread that
 * holds the element's lock (a GStreamer warning logged inside it), and
 * the reading would wait for that lock for ever.  The thread is neither
 * joined nor freed: one stuck on the lock never returns (the process is
 * about to end). */
static const gchar *
read_in_thread (GstElement * element, GThreadFunc read)
{
  gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  StatsRead *r = g_new0 (StatsRead, 1);
  gchar *str = NULL;

  r->element = gst_object_ref (element);
  g_thread_unref (g_thread_new ("soak-read", read, r));
  while (g_get_monotonic_time () < until
      && (str = atomic_load (&r->result)) == NULL)
    g_usleep (10000);
  return str;
}

void
soak_print_stats (const gchar * what, GstElement * element)
{
  const gchar *str;

  if (element == NULL || !g_object_class_find_property (G_OBJECT_GET_CLASS
          (element), "stats"))
    return;
  str = read_in_thread (element, stats_string);
  g_print ("# %s stats: %s\n", what, str ? str : "(reading them blocked)");
}

static void
print_levels (void)
{
  const gchar *str;

  if (soak.element == NULL)
    return;
  str = read_in_thread (soak.element, levels_string);
  g_print ("# element levels: %s\n", str ? str : "(reading them blocked)");
}

static void event_ring_print (void);

void
soak_fail (const gchar * check, const gchar * format, ...)
{
  static GMutex lock;
  gchar *msg, *desc, *replay;
  va_list ap;

  /* The first failure reports; any other thread that fails waits. */
  g_mutex_lock (&lock);
  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  desc = soak_chapter_describe (&soak.ch);
  replay = soak_replay_command ();
  g_print ("# FAIL [%s]: %s\n", check, msg);
  g_print ("# chapter %u: %s\n", soak.ch.index, desc);
  g_print ("# producer: %s, next seq %" G_GUINT64_FORMAT ", epoch %u\n",
      soak.op ? soak.op : "?", soak.next_seq,
      atomic_load_explicit (&soak.epoch, memory_order_relaxed));
  soak_verify_dump ();
  event_ring_print ();
  print_levels ();
  soak_print_stats ("element", soak.element);
  soak_parallel_dump ();
  g_print ("# replay: %s\n", replay);
  g_print ("not ok 1 - %s soak, seed %" G_GUINT64_FORMAT ": [%s] %s\n",
      soak.element_name, soak.seed, check, msg);
  fflush (stdout);
  _exit (1);
}

/* ---- set-up and tear-down ---- */

static void
on_overrun (GstElement * element, gpointer data)
{
  atomic_fetch_add_explicit (&soak.overruns, 1, memory_order_relaxed);
}

/* Every message the element posts, in the thread that posts it: a
 * BUFFERING message must say 0 to 100 %; in a parallel chapter the join
 * warns only of what a worker is free to do (strip the numbers and
 * output from a thread of its own), the split never of a branch that
 * leads elsewhere (an error of either fails too). */
static GstBusSyncReply
on_message (GstBus * bus, GstMessage * msg, gpointer data)
{
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING
      || GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    const gchar *src = GST_MESSAGE_SRC_NAME (msg);
    GError *err = NULL;

    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING)
      gst_message_parse_warning (msg, &err, NULL);
    else
      gst_message_parse_error (msg, &err, NULL);
    if (src != NULL && ((g_str_equal (src, "join")
                && (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR
                    || strstr (err->message, "strips the buffers' sequence "
                        "metas") == NULL))
            || (g_str_equal (src, "split")
                && (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR
                    || strstr (err->message, "does not lead to the tbqjoin")
                    != NULL))))
      soak_fail ("parallel", "%s says: %s", src, err->message);
    g_error_free (err);
  }
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_BUFFERING) {
    gint percent;

    gst_message_parse_buffering (msg, &percent);
    if (percent < 0 || percent > 100)
      soak_fail ("buffering", "a BUFFERING message says %d %%", percent);
    atomic_fetch_add_explicit (&soak.buffering_messages, 1,
        memory_order_relaxed);
  }
  gst_message_unref (msg);
  return GST_BUS_DROP;
}

/* The last events the element's src pad pushed, and its activations, to
 * print with a GStreamer warning (sticky events out of order). */
#define EVENT_RING 32
static struct
{
  GMutex lock;
  gchar *what[EVENT_RING];
  guint next;
} event_ring;

void
soak_event_ring_note (gchar * what)
{
  g_mutex_lock (&event_ring.lock);
  g_free (event_ring.what[event_ring.next % EVENT_RING]);
  event_ring.what[event_ring.next++ % EVENT_RING] = what;
  g_mutex_unlock (&event_ring.lock);
}

static GstPadProbeReturn
event_ring_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstEvent *e = GST_PAD_PROBE_INFO_EVENT (info);

  const GstStructure *s = gst_event_get_structure (e);
  guint64 seq = G_MAXUINT64;

  if (s != NULL)
    gst_structure_get_uint64 (s, "seq", &seq);
  /* Not soak.op: the producer's, and this runs in any thread. */
  soak_event_ring_note (g_strdup_printf ("%s:%s %s%s (seqnum %u, seq %"
          G_GINT64_FORMAT ")", GST_DEBUG_PAD_NAME (pad),
          GST_EVENT_TYPE_NAME (e), GST_PAD_IS_FLUSHING (pad) ? " (flushing)"
          : "", gst_event_get_seqnum (e), (gint64) seq));
  return GST_PAD_PROBE_OK;
}

void
soak_watch_element (GstElement * element, GstPad * src)
{
  if (g_signal_lookup ("overrun", G_OBJECT_TYPE (element)) != 0)
    g_signal_connect (element, "overrun", G_CALLBACK (on_overrun), NULL);
  if (src != NULL)
    gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM
        | GST_PAD_PROBE_TYPE_EVENT_FLUSH, event_ring_probe, NULL, NULL);
}

static void
event_ring_print (void)
{
  guint i;

  g_mutex_lock (&event_ring.lock);
  for (i = 0; i < EVENT_RING; i++) {
    const gchar *w = event_ring.what[(event_ring.next + i) % EVENT_RING];

    if (w != NULL)
      g_print ("# src pad event: %s\n", w);
  }
  g_mutex_unlock (&event_ring.lock);
}

/* A warning or critical GStreamer logs while the soak runs is a failure:
 * sticky events out of order on a pad, data before a segment, a
 * refcount gone wrong. */
static void
on_gst_warning (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer data)
{
  soak_fail ("gst-warning", "%s: %s", domain, message);
}

static gboolean
setup_element (GError ** error)
{
  GstBufferPool *pool;
  GstStructure *config;

  g_log_set_handler ("GStreamer", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL,
      on_gst_warning, NULL);

  soak.element = gst_element_factory_make (soak.element_name, "soaked");
  if (soak.element == NULL) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "no element '%s'", soak.element_name);
    return FALSE;
  }
  soak.is_tbqueue = soak_has_property ("stats");
  soak.srcpad = gst_pad_new ("soak-src", GST_PAD_SRC);
  soak.sinkpad = gst_pad_new ("soak-sink", GST_PAD_SINK);
  soak_verify_setup (soak.sinkpad);
  soak.esink = gst_element_get_static_pad (soak.element, "sink");
  soak.esrc = gst_element_get_static_pad (soak.element, "src");
  soak_watch_element (soak.element, soak.esrc);
  /* Its src pad is linked at the first chapter's start (soak-parallel.c:
   * to our sink pad, or through a split and a join). */
  if (gst_pad_link (soak.srcpad, soak.esink) != GST_PAD_LINK_OK)
    return FALSE;
  gst_pad_set_active (soak.srcpad, TRUE);
  gst_pad_set_active (soak.sinkpad, TRUE);
  soak.bus = gst_bus_new ();
  gst_bus_set_sync_handler (soak.bus, on_message, NULL, NULL);
  gst_element_set_bus (soak.element, soak.bus);
  /* A camera's bounded pool: frames come back only when released. */
  pool = gst_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, NULL, 3110400, 2, 8);
  gst_buffer_pool_set_config (pool, config);
  gst_buffer_pool_set_active (pool, TRUE);
  soak.frame_pool = pool;
  soak.meta_caps = gst_caps_new_empty_simple ("timestamp/x-soak");
  return soak_inject_setup (error);
}

static void
teardown_element (void)
{
  soak_parallel_set_state (GST_STATE_NULL);
  gst_element_set_state (soak.element, GST_STATE_NULL);
  gst_pad_set_active (soak.srcpad, FALSE);
  gst_pad_set_active (soak.sinkpad, FALSE);
  gst_pad_unlink (soak.srcpad, soak.esink);
  soak_parallel_teardown ();
  gst_object_unref (soak.esink);
  gst_object_unref (soak.esrc);
  gst_element_set_bus (soak.element, NULL);
  gst_object_unref (soak.bus);
  soak.bus = NULL;
  gst_object_unref (soak.element);
  soak.element = NULL;
  gst_object_unref (soak.srcpad);
  gst_object_unref (soak.sinkpad);
  gst_buffer_pool_set_active (soak.frame_pool, FALSE);
  gst_object_unref (soak.frame_pool);
  gst_caps_unref (soak.meta_caps);
  soak_inject_finish ();
}

static GstTracer *
leaks_tracer (void)
{
  GList *l, *tracers = gst_tracing_get_active_tracers ();
  GstTracer *found = NULL;

  for (l = tracers; l != NULL; l = l->next)
    if (found == NULL && g_str_equal (G_OBJECT_TYPE_NAME (l->data),
            "GstLeaksTracer"))
      found = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

/* Every payload memory freed; no buffer, list, memory, event, query, pad
 * or element left alive (the leaks tracer; MAY_BE_LEAKED objects aside). */
static void
check_leaks (void)
{
  guint64 created = atomic_load (&soak.mem_created);
  guint64 freed = atomic_load (&soak.mem_freed);
  GstTracer *tracer = leaks_tracer ();
  GstStructure *info = NULL;
  const GValue *list;
  guint i, n = 0;

  if (created != freed)
    soak_fail ("leak", "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
        " payload memories pushed were never freed", created - freed,
        created);
  /* Task threads let go of their task objects asynchronously. */
  gst_task_cleanup_all ();
  if (tracer == NULL) {
    g_print ("# (leaks tracer not active: GstObject leak check skipped)\n");
    return;
  }
  g_signal_emit_by_name (tracer, "get-live-objects", &info);
  list = gst_structure_get_value (info, "live-objects-list");
  for (i = 0; i < gst_value_list_get_size (list); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (list, i));
    const GValue *obj = gst_structure_get_value (o, "object");
    const gchar *trace = gst_structure_get_string (o, "trace");
    gchar *s = gst_value_serialize (obj);

    /* An event says what it is (its serialization is empty). */
    if (G_VALUE_HOLDS (obj, GST_TYPE_EVENT)) {
      GstEvent *event = g_value_get_boxed (obj);

      g_free (s);
      s = event == NULL ? NULL : gst_info_strdup_printf ("%" GST_PTR_FORMAT,
          event);
    }
    g_print ("# alive: %s %s\n", G_VALUE_TYPE_NAME (obj), s ? s : "");
    /* With GST_TRACERS="leaks(stack-traces-flags=full)": where it was
     * made. */
    if (trace != NULL)
      g_print ("# made at:\n%s\n", trace);
    g_free (s);
    n++;
  }
  gst_structure_free (info);
  gst_object_unref (tracer);
  if (n > 0)
    soak_fail ("leak", "%u GStreamer objects still alive at the end "
        "(listed above)", n);
}

/* ---- command line ---- */

static gboolean
parse_args (int *argc, char ***argv, GError ** error)
{
  gchar *features = NULL, *enable = NULL, *disable = NULL;
  gchar *leaky = NULL, *transfer = NULL;
  gint64 seed = -1, buffers = 0;
  gint chapter = -1, from_chapter = 0, watchdog = 30, inject_at = 1000, group_peers = 0;
  gboolean ok = TRUE;
  GOptionEntry entries[] = {
    {"element", 'e', 0, G_OPTION_ARG_STRING, &soak.element_name,
        "Element to soak (default tbqueue)", "NAME"},
    {"seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Seed (default: random)",
        "N"},
    {"buffers", 'n', 0, G_OPTION_ARG_INT64, &buffers,
        "Stop after pushing this many buffers", "N"},
    {"duration", 'd', 0, G_OPTION_ARG_DOUBLE, &soak.duration,
        "Stop after this many seconds (default 30 without --buffers)", "S"},
    {"chapter", 'c', 0, G_OPTION_ARG_INT, &chapter,
        "Run only this chapter (replay)", "K"},
    {"from-chapter", 0, 0, G_OPTION_ARG_INT, &from_chapter,
        "Start at this chapter and go on (replay what a chapter leaves to "
          "the next)", "K"},
    {"features", 0, 0, G_OPTION_ARG_STRING, &features,
        "Exactly these features (default all)", "LIST"},
    {"enable", 0, 0, G_OPTION_ARG_STRING, &enable, "Add features", "LIST"},
    {"disable", 0, 0, G_OPTION_ARG_STRING, &disable, "Remove features",
        "LIST"},
    {"leaky", 0, 0, G_OPTION_ARG_STRING, &leaky,
        "Leaky modes to draw from (default no,upstream,downstream)", "LIST"},
    {"transfer", 0, 0, G_OPTION_ARG_STRING, &transfer,
        "Transfer modes to draw from (default auto,copy,reference)", "LIST"},
    {"watchdog", 'w', 0, G_OPTION_ARG_INT, &watchdog,
        "Fail when nothing moves for this many seconds (default 30)", "S"},
    {"inject", 0, 0, G_OPTION_ARG_STRING, &soak.inject,
        "Inject a fault (self-tests; see soak-inject.c)", "FAULT"},
    {"inject-at", 0, 0, G_OPTION_ARG_INT, &inject_at,
        "The fault hits the N-th buffer or event (default 1000)", "N"},
    {"group-peers", 0, 0, G_OPTION_ARG_INT, &group_peers,
        "Run N more tbqueues in the element's copy group (default 0)", "N"},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &soak.verbose,
        "Describe each chapter", NULL},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- soak a queue element");
  guint bits;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, argc, argv, error)) {
    g_option_context_free (ctx);
    return FALSE;
  }
  g_option_context_free (ctx);
  if (soak.element_name == NULL)
    soak.element_name = g_strdup ("tbqueue");
  soak.trace = g_getenv ("SOAK_TRACE") != NULL;
  soak.seed = seed >= 0 ? (guint64) seed : g_random_int () & 0x7fffffff;
  soak.max_buffers = (guint64) MAX (buffers, 0);
  if (soak.max_buffers == 0 && soak.duration <= 0)
    soak.duration = 30;
  soak.only_chapter = chapter;
  soak.from_chapter = (guint) MAX (from_chapter, 0);
  soak.watchdog_s = (guint) MAX (watchdog, 1);
  soak.inject_at = (guint) MAX (inject_at, 1);
  if (group_peers < 0 || group_peers > 64) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "--group-peers: 0 to 64");
    return FALSE;
  }
  soak.group_peers = (guint) group_peers;
  soak.features = SOAK_F_ALL;
  if (features != NULL)
    ok &= soak_features_parse (features, &soak.features);
  if (enable != NULL && (ok &= soak_features_parse (enable, &bits)))
    soak.features |= bits;
  if (disable != NULL && (ok &= soak_features_parse (disable, &bits)))
    soak.features &= ~bits;
  soak.leaky_mask = soak.transfer_mask = 7;
  if (leaky != NULL)
    ok &= modes_parse (leaky, "no", "upstream", "downstream",
        &soak.leaky_mask);
  if (transfer != NULL)
    ok &= modes_parse (transfer, "auto", "copy", "reference",
        &soak.transfer_mask);
  g_free (features);
  g_free (enable);
  g_free (disable);
  g_free (leaky);
  g_free (transfer);
  if (!ok)
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "bad feature or mode list");
  return ok;
}

static guint64 peer_buffers, peer_cycles;

static void
report (void)
{
  gdouble secs = (g_get_monotonic_time () - soak.start_time) / 1e6;
  gchar *f = soak_features_to_string (soak.features);

  g_print ("ok 1 - %s soak, seed %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT
      " buffers pushed, %" G_GUINT64_FORMAT " delivered (%.1f MiB verified)"
      ", %" G_GUINT64_FORMAT " dropped by leaking, %u epochs, %"
      G_GUINT64_FORMAT " flushes, %" G_GUINT64_FORMAT " state changes, %"
      G_GUINT64_FORMAT " limit probes, %" G_GUINT64_FORMAT " barriers, %"
      G_GUINT64_FORMAT " EOS, %.1f MiB spilled, %" G_GUINT64_FORMAT
      " buffering messages, %u chapters, %.1f s; features %s; %u group peers"
      " (%" G_GUINT64_FORMAT " buffers verified, %" G_GUINT64_FORMAT
      " left and joined); workers: %" G_GUINT64_FORMAT " buffers dropped "
      "or merged away (%" G_GUINT64_FORMAT " gaps), %" G_GUINT64_FORMAT
      " second outputs, %" G_GUINT64_FORMAT " query copies\n",
      soak.element_name, soak.seed, atomic_load (&soak.buffers_pushed),
      atomic_load (&soak.buffers_delivered),
      atomic_load (&soak.bytes_delivered) / 1048576.0,
      atomic_load (&soak.drops_counted), atomic_load (&soak.epoch),
      atomic_load (&soak.flushes), atomic_load (&soak.state_changes),
      atomic_load (&soak.probes), atomic_load (&soak.barriers),
      atomic_load (&soak.eoses), soak.spilled / 1048576.0,
      atomic_load (&soak.buffering_messages), soak.ch.index + 1
      - (soak.only_chapter >= 0 ? (guint) soak.only_chapter
          : soak.from_chapter), secs, f,
      soak.group_peers, peer_buffers, peer_cycles,
      atomic_load (&soak.worker_drops), atomic_load (&soak.worker_gaps),
      atomic_load (&soak.parts), atomic_load (&soak.query_copies));
  g_free (f);
}

int
main (int argc, char **argv)
{
  GThread *flusher, *watchdog;
  GError *error = NULL;
  gchar *f;

  /* Every GStreamer object is tracked for the leak check at the end. */
  g_setenv ("GST_TRACERS", "leaks", FALSE);
  g_setenv ("GST_REGISTRY_FORK", "no", FALSE);
  g_mutex_init (&soak.vlock);
  g_cond_init (&soak.vcond);
  g_mutex_init (&soak.ctl_lock);
  if (!parse_args (&argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  gst_init (&argc, &argv);
  soak_refs_init ();
  g_print ("1..1\n");
  if (!setup_element (&error)) {
    g_print ("not ok 1 - %s soak: %s\n", soak.element_name,
        error ? error->message : "cannot link the element");
    return 1;
  }
  f = soak_features_to_string (soak.features);
  g_print ("# %s soak, seed %" G_GUINT64_FORMAT ", features %s%s%s\n",
      soak.element_name, soak.seed, f, soak.inject ? ", fault " : "",
      soak.inject ? soak.inject : "");
  g_free (f);
  if (soak.group_peers > 0 && !soak.is_tbqueue) {
    g_print ("not ok 1 - %s soak: --group-peers needs tbqueue\n",
        soak.element_name);
    return 1;
  }
  soak_log_init (20);
  soak.stall_rng = soak.seed ^ 0x57A11;
  soak.start_time = g_get_monotonic_time ();
  watchdog = g_thread_new ("soak-watchdog", soak_watchdog_main, NULL);
  flusher = g_thread_new ("soak-flusher", soak_flusher_main, NULL);
  if (soak.group_peers > 0)
    soak_peers_start (soak.group_peers);
  soak_producer_main (NULL);
  atomic_store (&soak.stop, TRUE);
  g_thread_join (flusher);
  if (soak.group_peers > 0) {
    soak.op = "peers' EOS";
    soak_peers_finish (&peer_buffers, &peer_cycles);
  }
  soak.op = "teardown";
  teardown_element ();
  check_leaks ();
  g_thread_join (watchdog);
  report ();
  g_free (soak.ring);
  g_free (soak.element_name);
  g_free (soak.inject);
  return 0;
}

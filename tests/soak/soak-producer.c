/* The soak harness: the producer, our streaming thread.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs chapters one after the other.  Each starts a new epoch with the
 * chapter's configuration (a READY cycle when pool geometry or
 * publish-batch change, else a flush), then performs random operations
 * until the chapter's buffer count: single buffers most of the time,
 * buffer lists, serialized events, drain barriers (serialized queries,
 * after which the element's counters and levels are checked exactly),
 * EOS and a new stream, inline flushes, state changes, limit changes and
 * limit probes.  Every push happens under our srcpad's stream lock, as in a
 * real source's streaming thread; the flusher thread takes that lock for
 * FLUSH_STOP and the start of the next epoch.
 */
#include "soak.h"

#include <string.h>

#define STREAM_LOCK() GST_PAD_STREAM_LOCK (soak.srcpad)
#define STREAM_UNLOCK() GST_PAD_STREAM_UNLOCK (soak.srcpad)

/* Stream lock held: make sure the current epoch's segment went first. */
void
soak_push_segment (void)
{
  guint32 epoch = atomic_load_explicit (&soak.epoch, memory_order_relaxed);
  GstSegment segment;

  if (soak.prod_epoch == epoch && !soak.need_stream_start)
    return;
  if (soak.need_stream_start) {
    GstCaps *caps = gst_caps_new_empty_simple ("application/x-soak");

    gst_pad_push_event (soak.srcpad, gst_event_new_stream_start ("soak"));
    gst_pad_push_event (soak.srcpad, gst_event_new_caps (caps));
    gst_caps_unref (caps);
    soak.need_stream_start = FALSE;
  }
  gst_segment_init (&segment, GST_FORMAT_TIME);
  /* The segment names its epoch: buffers must come under their own. */
  segment.time = epoch;
  gst_pad_push_event (soak.srcpad, gst_event_new_segment (&segment));
  soak.prod_epoch = epoch;
}

/* A SEGMENT of the current epoch whose position is ahead of the data by
 * one to three times max-size-time (at least a second), as an RTP
 * receiver's can be: the time level jumps at the sink side while no
 * buffer is queued, and drops when the SEGMENT leaves.  Not logged: it
 * renames no epoch, and the verifier checks buffers against their
 * epoch's segment only. */
void
soak_op_segment_jump (void)
{
  guint64 max_time = MAX (soak.ch.max_time, GST_SECOND);
  GstSegment segment;

  soak.op = "segment jump";
  STREAM_LOCK ();
  soak_push_segment ();
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.time = atomic_load_explicit (&soak.epoch, memory_order_relaxed);
  segment.position = soak.next_seq * soak.ch.ts_step
      + max_time * (1 + soak_rand (&soak.rng, 3));
  gst_pad_push_event (soak.srcpad, gst_event_new_segment (&segment));
  soak.jump_pending = TRUE;
  STREAM_UNLOCK ();
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
}

/* After a push of the items [first, end): record the outcome. */
static void
record (guint64 first, guint64 end, GstFlowReturn ret, const gchar * what)
{
  guint64 s;

  if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS)
    soak_fail ("flow", "pushing %s %" G_GUINT64_FORMAT " returned %s", what,
        first, gst_flow_get_name (ret));
  for (s = first; s < end; s++)
    atomic_store_explicit (&soak_log_get (s)->status, ret == GST_FLOW_OK
        ? SOAK_ACCEPTED : SOAK_REFUSED, memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
}

/* A push was refused while flushing: wait until the flush ends its epoch
 * (the flusher needs the stream lock, which we do not hold here). */
static void
wait_epoch_after (guint32 epoch)
{
  g_mutex_lock (&soak.vlock);
  while (atomic_load_explicit (&soak.epoch, memory_order_relaxed) == epoch)
    g_cond_wait (&soak.vcond, &soak.vlock);
  g_mutex_unlock (&soak.vlock);
}

void
soak_op_buffer (void)
{
  GstFlowReturn ret;
  SoakEntry *e;
  guint64 seq;
  guint32 epoch;

  STREAM_LOCK ();
  soak_push_segment ();
  e = soak_log_append (&seq);
  e->kind = SOAK_ITEM_BUFFER;
  soak.jump_pending = FALSE;
  soak_data_plan_buffer (e, seq, &soak.rng, G_MAXUINT32);
  epoch = e->epoch;
  soak_log_publish ();
  ret = gst_pad_push (soak.srcpad, soak_data_make_buffer (e, seq));
  record (seq, seq + 1, ret, "buffer");
  STREAM_UNLOCK ();
  atomic_fetch_add_explicit (&soak.buffers_pushed, 1, memory_order_relaxed);
  if (ret == GST_FLOW_FLUSHING)
    wait_epoch_after (epoch);
}

void
soak_op_list (void)
{
  GstBufferList *list;
  GstFlowReturn ret;
  guint i, n = (guint) (soak_rand (&soak.rng, 20) == 0 ? 0
      : soak_log_range (&soak.rng, 1, 64));
  guint64 first = soak.next_seq, seq;
  guint32 epoch;

  STREAM_LOCK ();
  soak_push_segment ();
  list = gst_buffer_list_new_sized (n);
  epoch = atomic_load_explicit (&soak.epoch, memory_order_relaxed);
  if (n == 0)
    soak_log_append (&first)->kind = SOAK_ITEM_EMPTY_LIST;
  for (i = 0; i < n; i++) {
    SoakEntry *e = soak_log_append (&seq);

    if (i == 0)
      first = seq;
    e->kind = SOAK_ITEM_LIST_MEMBER;
    soak.jump_pending = FALSE;
    e->list_len = n;
    e->list_index = i;
    soak_data_plan_buffer (e, seq, &soak.rng, 256 * 1024);
    gst_buffer_list_add (list, soak_data_make_buffer (e, seq));
  }
  soak_log_publish ();
  ret = gst_pad_push_list (soak.srcpad, list);
  record (first, first + MAX (n, 1), ret, "buffer list");
  STREAM_UNLOCK ();
  atomic_fetch_add_explicit (&soak.buffers_pushed, n, memory_order_relaxed);
  if (ret == GST_FLOW_FLUSHING)
    wait_epoch_after (epoch);
}

/* The custom events we made that are still alive, by our sequence number:
 * every one of them is gone once the element and the chain after it are
 * at READY (soak_events_check_gone). */
static GMutex alive_lock;
static GHashTable *alive_events;

static void
event_gone (gpointer data, GstMiniObject * obj)
{
  g_mutex_lock (&alive_lock);
  g_hash_table_remove (alive_events, data);
  g_mutex_unlock (&alive_lock);
  soak_refs_forget (obj);
}

static void
track_event (GstEvent * event, guint64 seq)
{
  g_mutex_lock (&alive_lock);
  if (alive_events == NULL)
    alive_events = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_hash_table_insert (alive_events, GSIZE_TO_POINTER ((gsize) seq), event);
  g_mutex_unlock (&alive_lock);
  soak_refs_track (GST_MINI_OBJECT_CAST (event));
  gst_mini_object_weak_ref (GST_MINI_OBJECT_CAST (event), event_gone,
      GSIZE_TO_POINTER ((gsize) seq));
}

static gint
seq_cmp (gconstpointer a, gconstpointer b)
{
  gsize x = GPOINTER_TO_SIZE (a), y = GPOINTER_TO_SIZE (b);

  return x < y ? -1 : x > y;
}

/* ctl_lock held, everything at READY: no custom event of ours is left. */
void
soak_events_check_gone (void)
{
  GString *s;
  GList *keys, *l;
  guint n, i = 0;

  g_mutex_lock (&alive_lock);
  n = alive_events != NULL ? g_hash_table_size (alive_events) : 0;
  if (n == 0) {
    g_mutex_unlock (&alive_lock);
    return;
  }
  keys = g_list_sort (g_hash_table_get_keys (alive_events), seq_cmp);
  s = g_string_new (NULL);
  for (l = keys; l != NULL && i < 16; l = l->next, i++) {
    GstMiniObject *o = g_hash_table_lookup (alive_events, l->data);

    g_string_append_printf (s, " %" G_GSIZE_FORMAT " (%p, %d references)",
        GPOINTER_TO_SIZE (l->data), o, GST_MINI_OBJECT_REFCOUNT_VALUE (o));
    soak_refs_print (o);
  }
  g_mutex_unlock (&alive_lock);
  g_list_free (keys);
  soak_fail ("leak", "%u custom events of this chapter still alive with "
      "everything at READY (seq%s%s)", n, s->str, n > 16 ? " ..." : "");
}

void
soak_op_event (void)
{
  GstStructure *s;
  GstEvent *event;
  SoakEntry *e;
  guint64 seq;
  gboolean ok;

  STREAM_LOCK ();
  soak_push_segment ();
  e = soak_log_append (&seq);
  e->kind = SOAK_ITEM_EVENT;
  soak_log_publish ();
  s = gst_structure_new ("soak-event", "seq", G_TYPE_UINT64, seq, NULL);
  event = gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, s);
  track_event (event, seq);
  ok = gst_pad_push_event (soak.srcpad, event);
  record (seq, seq + 1, ok ? GST_FLOW_OK : GST_FLOW_FLUSHING, "event");
  STREAM_UNLOCK ();
}

/* The element's levels after a barrier: nothing is queued. */
static void
check_levels_empty (guint32 epoch)
{
  guint buffers, bytes;
  guint64 time;

  g_object_get (soak.element, "current-level-buffers", &buffers,
      "current-level-bytes", &bytes, "current-level-time", &time, NULL);
  if ((buffers != 0 || bytes != 0 || time != 0)
      && atomic_load_explicit (&soak.epoch, memory_order_relaxed) == epoch)
    soak_fail ("levels", "after a drain query was answered the element "
        "reports %u buffers, %u bytes, %" G_GUINT64_FORMAT " ns queued",
        buffers, bytes, time);
}

/* Drops the element counted against buffers found missing since the last
 * baseline (the start of the epoch or the last barrier). */
static void
barrier_check (guint32 epoch)
{
  guint64 mine, theirs, overruns, pushes, worker, gaps;

  /* A flush started since the answer: its epoch has a baseline of its own. */
  if (atomic_load_explicit (&soak.epoch, memory_order_relaxed) != epoch)
    return;
  mine = atomic_load_explicit (&soak.drops_counted, memory_order_relaxed);
  theirs = soak_element_dropped ();
  overruns = atomic_load_explicit (&soak.overruns, memory_order_relaxed);
  pushes = atomic_load_explicit (&soak.push_drops, memory_order_relaxed);
  worker = atomic_load_explicit (&soak.worker_gaps, memory_order_relaxed);
  gaps = soak_parallel_join_gaps ();
  check_levels_empty (epoch);
  if (soak.barrier_epoch == epoch) {
    if (soak.is_tbqueue && theirs - soak.barrier_elem_drops
        != mine - soak.barrier_drops)
      soak_fail ("count", "the element counted %" G_GUINT64_FORMAT
          " dropped buffers (stats dropped-upstream + dropped-downstream) "
          "where %" G_GUINT64_FORMAT " pushed buffers never arrived",
          theirs - soak.barrier_elem_drops, mine - soak.barrier_drops);
    if (soak_parallel_leaky (&soak.ch) == 1
        && pushes - soak.barrier_push_drops
        > overruns - soak.barrier_overruns)
      soak_fail ("count", "%" G_GUINT64_FORMAT " pushes dropped upstream "
          "with only %" G_GUINT64_FORMAT " overrun signals",
          pushes - soak.barrier_push_drops,
          overruns - soak.barrier_overruns);
    if (soak_parallel_active () && gaps - soak.barrier_join_gaps
        != worker - soak.barrier_gaps)
      soak_fail ("gaps", "the join counted %" G_GUINT64_FORMAT " gaps "
          "(stats gaps) where the workers dropped or merged away %"
          G_GUINT64_FORMAT " inputs", gaps - soak.barrier_join_gaps,
          worker - soak.barrier_gaps);
  }
  soak_parallel_check_drained ();
  soak.barrier_epoch = epoch;
  soak.barrier_drops = mine;
  soak.barrier_elem_drops = theirs;
  soak.barrier_overruns = overruns;
  soak.barrier_push_drops = pushes;
  soak.barrier_gaps = worker;
  soak.barrier_join_gaps = gaps;
}

/* A new epoch started (ctl_lock held, the element idle): whatever the
 * element counts from now on belongs to it. */
void
soak_epoch_baseline (void)
{
  soak.barrier_epoch = atomic_load_explicit (&soak.epoch,
      memory_order_relaxed);
  soak.barrier_drops = atomic_load_explicit (&soak.drops_counted,
      memory_order_relaxed);
  soak.barrier_elem_drops = soak_element_dropped ();
  soak.barrier_overruns = atomic_load_explicit (&soak.overruns,
      memory_order_relaxed);
  soak.barrier_push_drops = atomic_load_explicit (&soak.push_drops,
      memory_order_relaxed);
  soak.barrier_gaps = atomic_load_explicit (&soak.worker_gaps,
      memory_order_relaxed);
  soak.barrier_join_gaps = soak_parallel_join_gaps ();
}

gboolean
soak_barrier (gboolean ctl_held)
{
  GstQuery *q;
  SoakEntry *e;
  guint64 seq;
  guint32 epoch;
  gboolean res;

  STREAM_LOCK ();
  soak_push_segment ();
  e = soak_log_append (&seq);
  e->kind = SOAK_ITEM_QUERY;
  epoch = e->epoch;
  soak_log_publish ();
  q = gst_query_new_drain ();
  gst_structure_set (gst_query_writable_structure (q), "soak-seq",
      G_TYPE_UINT64, seq, NULL);
  res = gst_pad_peer_query (soak.srcpad, q);
  record (seq, seq + 1, res ? GST_FLOW_OK : GST_FLOW_FLUSHING, "query");
  STREAM_UNLOCK ();
  gst_query_unref (q);
  atomic_fetch_add_explicit (&soak.barriers, 1, memory_order_relaxed);
  if (res) {
    if (!ctl_held)
      g_mutex_lock (&soak.ctl_lock);
    barrier_check (epoch);
    if (!ctl_held)
      g_mutex_unlock (&soak.ctl_lock);
  }
  return res;
}

void
soak_op_eos (void)
{
  GstEvent *eos = gst_event_new_eos ();
  SoakEntry *e;
  guint64 seq;
  guint32 epoch;
  gboolean ok;

  STREAM_LOCK ();
  soak_push_segment ();
  e = soak_log_append (&seq);
  e->kind = SOAK_ITEM_EOS;
  epoch = e->epoch;
  soak_log_publish ();
  gst_event_set_seqnum (eos, (guint32) (seq + 1));
  ok = gst_pad_push_event (soak.srcpad, eos);
  record (seq, seq + 1, ok ? GST_FLOW_OK : GST_FLOW_FLUSHING, "EOS");
  STREAM_UNLOCK ();
  /* Everything before EOS arrives, then EOS (or a flush ends the epoch). */
  g_mutex_lock (&soak.vlock);
  while (ok && soak.eos_seen < seq + 1
      && atomic_load_explicit (&soak.epoch, memory_order_relaxed) == epoch)
    g_cond_wait (&soak.vcond, &soak.vlock);
  g_mutex_unlock (&soak.vlock);
  /* The element has EOS when its src pad task stops after pushing it; a
   * new stream before that races with it (queue then leaves the stream
   * stopped). */
  while (ok && gst_pad_get_task_state (soak.esrc) == GST_TASK_STARTED
      && atomic_load_explicit (&soak.epoch, memory_order_relaxed) == epoch)
    g_usleep (1000);
  if (ok)
    soak_parallel_wait_eos (epoch);
  atomic_fetch_add_explicit (&soak.eoses, 1, memory_order_relaxed);
  /* A new stream: the element takes data again. */
  STREAM_LOCK ();
  soak.need_stream_start = TRUE;
  soak_push_segment ();
  STREAM_UNLOCK ();
}

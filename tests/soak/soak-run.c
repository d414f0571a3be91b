/* The soak harness: the producer's main loop, state changes and chapter
 * starts (a parallel chapter's chain made anew: soak-parallel.c).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The operations themselves are in soak-producer.c.  State changes and
 * chapter starts hold ctl_lock, so that the flusher thread never flushes
 * an element that is changing state.
 */
#include "soak.h"


static void
set_state (GstState state)
{
  GstStateChangeReturn ret;

  /* What spilled before the file goes (its stats go with it).  The sink
   * pool never held more than sink-max-bytes (in use since READY to
   * PAUSED: it cannot change in PAUSED or PLAYING), spilling or not. */
  if (soak.is_tbqueue && state <= GST_STATE_READY) {
    GstStructure *st = NULL;
    guint64 n = 0, peak = 0, max = 0;

    g_object_get (soak.element, "stats", &st, NULL);
    if (st != NULL && gst_structure_get_uint64 (st, "spill-bytes-written",
            &n))
      soak.spilled += n;
    if (st != NULL && GST_STATE (soak.element) >= GST_STATE_PAUSED
        && gst_structure_get_uint64 (st, "sink-bytes-peak", &peak)) {
      g_object_get (soak.element, "sink-max-bytes", &max, NULL);
      if (peak > max)
        soak_fail ("sink-max-bytes", "sink-bytes-peak %" G_GUINT64_FORMAT
            " is above sink-max-bytes %" G_GUINT64_FORMAT, peak, max);
    }
    if (st != NULL)
      gst_structure_free (st);
  }
  /* A parallel chapter's split, workers and join first, as a bin changes
   * its sinks first. */
  soak_parallel_set_state (state);
  ret = gst_element_set_state (soak.element, state);
  soak_event_ring_note (g_strdup_printf ("state %s",
          gst_element_state_get_name (state)));

  if (ret != GST_STATE_CHANGE_SUCCESS)
    soak_fail ("state", "changing the element to %s returned %s",
        gst_element_state_get_name (state),
        gst_element_state_change_return_get_name (ret));
  atomic_fetch_add_explicit (&soak.state_changes, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
}

/* ctl_lock held: the element is idle; start the next epoch. */
static void
start_epoch (gboolean new_stream)
{
  GST_PAD_STREAM_LOCK (soak.srcpad);
  soak_log_new_epoch ();
  if (new_stream)
    soak.need_stream_start = TRUE;
  soak_epoch_baseline ();
  GST_PAD_STREAM_UNLOCK (soak.srcpad);
}

static void
op_state (void)
{
  guint64 r = soak_rand (&soak.rng, 4);

  soak.op = "state change";
  g_mutex_lock (&soak.ctl_lock);
  if (r < 2) {
    /* PAUSED and back: nothing is lost. */
    set_state (GST_STATE_PAUSED);
    set_state (GST_STATE_PLAYING);
  } else {
    set_state (r == 2 ? GST_STATE_READY : GST_STATE_NULL);
    set_state (GST_STATE_PLAYING);
    start_epoch (TRUE);
  }
  g_mutex_unlock (&soak.ctl_lock);
}

static void
op_limits (void)
{
  soak.op = "limit change";
  soak_chapter_plan_limits (&soak.ch, &soak.rng);
  g_object_set (soak.element, "max-size-buffers", soak.ch.max_buffers,
      "max-size-bytes", soak.ch.max_bytes, "max-size-time",
      soak.ch.max_time, NULL);
  soak_parallel_op_limits ();
}

static void
op_barrier (void)
{
  soak.op = "drain barrier";
  soak_barrier (FALSE);
}

static void
op_flush (void)
{
  soak.op = "inline flush";
  g_mutex_lock (&soak.ctl_lock);
  soak_flush ();
  g_mutex_unlock (&soak.ctl_lock);
}

static void
chapter_start (guint index, gboolean first)
{
  gboolean ready = first || (soak.features & (SOAK_F_STATE | SOAK_F_GEOMETRY
          | SOAK_F_BATCH | SOAK_F_PARALLEL));
  gchar *desc;

  soak.op = "chapter start";
  g_mutex_lock (&soak.ctl_lock);
  if (ready) {
    if (!first)
      set_state (GST_STATE_READY);
    /* The chain after the element goes with the chapter that made it: and
     * with it every event the chapter pushed. */
    soak_parallel_teardown ();
    soak_events_check_gone ();
  }
  soak_chapter_plan (&soak.ch, index);
  atomic_store_explicit (&soak.flush_period_ms, soak.ch.flush_period_ms,
      memory_order_relaxed);
  soak.rng = soak.seed ^ ((guint64) index << 32) ^ 0x50A4;
  if (ready) {
    /* The chain after the element: the chapter's own. */
    soak_element_apply (&soak.ch, TRUE);
    soak_parallel_setup (&soak.ch);
    set_state (GST_STATE_PLAYING);
  } else {
    soak_element_apply (&soak.ch, FALSE);
    soak_flush ();
  }
  if (ready)
    start_epoch (TRUE);
  g_mutex_lock (&soak.vlock);
  soak.stall_permille = soak.ch.stall_permille;
  soak.stall_max_us = soak.ch.stall_max_us;
  g_mutex_unlock (&soak.vlock);
  g_mutex_unlock (&soak.ctl_lock);
  if (soak.verbose) {
    desc = soak_chapter_describe (&soak.ch);
    g_print ("# chapter %u (seq %" G_GUINT64_FORMAT "): %s\n", index,
        soak.next_seq, desc);
    g_free (desc);
  }
}

static gboolean
run_done (void)
{
  guint64 pushed = atomic_load_explicit (&soak.buffers_pushed,
      memory_order_relaxed);

  if (soak.max_buffers > 0 && pushed >= soak.max_buffers)
    return TRUE;
  return soak.duration > 0 && (g_get_monotonic_time () - soak.start_time)
      >= (gint64) (soak.duration * G_USEC_PER_SEC);
}

/* One random operation, weights per 10000. */
static void
random_op (void)
{
  const SoakChapter *ch = &soak.ch;
  guint64 r = soak_rand (&soak.rng, 10000);

#define TAKE(w, fn) if (r < (w)) { fn (); return; } r -= (w)
  TAKE (ch->w_list, soak_op_list);
  TAKE (ch->w_event, soak_op_event);
  TAKE (ch->w_query, op_barrier);
  TAKE (ch->w_eos, soak_op_eos);
  TAKE (ch->w_flush, op_flush);
  TAKE (ch->w_state, op_state);
  TAKE (ch->w_probe, soak_probe_run);
  TAKE (ch->w_limits, op_limits);
  TAKE (ch->w_segment_jump, soak_op_segment_jump);
  TAKE (ch->par.w_branch, soak_parallel_op_branch);
#undef TAKE
  soak_op_buffer ();
}

gpointer
soak_producer_main (gpointer data)
{
  guint index = soak.only_chapter >= 0 ? (guint) soak.only_chapter
      : soak.from_chapter;
  gboolean first = TRUE;

  for (;;) {
    guint64 start = atomic_load_explicit (&soak.buffers_pushed,
        memory_order_relaxed);

    chapter_start (index, first);
    first = FALSE;
    while (!run_done () && atomic_load_explicit (&soak.buffers_pushed,
            memory_order_relaxed) - start < soak.ch.buffers) {
      guint64 seq = soak.next_seq;

      soak.op = "push";
      random_op ();
      if (G_UNLIKELY (soak.trace))
        g_print ("# trace: %s: seq %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
            "\n", soak.op, seq, soak.next_seq);
    }
    if (run_done () || soak.only_chapter >= 0)
      break;
    index++;
  }
  /* The end: everything queued arrives, and the counts add up. */
  soak.op = "final drain";
  while (!soak_barrier (FALSE));
  return NULL;
}

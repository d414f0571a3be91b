/* tbqueue levels: how much is queued, against the limits and thresholds;
 * the time levels from the segments; the level log.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the levels count: gsttbqueue-levels.h.  Threads and locks:
 * gsttbqueue-private.h.
 */
#include "gsttbqueue-levels.h"

/* Buffers between two refreshes of the sink side's view. */
#define SINK_REFRESH_INTERVAL 32

/* Upstream thread: re-read the src side's counters. */
void
gst_tbqueue_sink_refresh (GstTbQueue * tbq)
{
  /* The count first (acquire: pairs with gst_tbqueue_update_time_full's
   * release), then the time: a move back after it is seen at the next
   * buffer. */
  tbq->seen_srctime_backs = atomic_load_explicit (&tbq->srctime_backs,
      memory_order_acquire);
  tbq->seen_out_buffers = TBQ_LOAD (tbq->out_buffers);
  tbq->seen_out_bytes = TBQ_LOAD (tbq->out_bytes);
  tbq->seen_srctime = TBQ_LOAD (tbq->srctime);
  tbq->refresh_countdown = SINK_REFRESH_INTERVAL;
}

/* ---- peaks ---- */

/* The levels are about to drop: keep them where they are the highest yet.
 * Called just before every drop: a buffer counted out (a push, a leak, a
 * list made whole), the time at the src moving on or at the sink stepping
 * back, a flush.  Between two drops the levels only rise (buffers counted
 * in, the sink's time moving on), so the highest level ever is the level
 * just before some drop, or the current one: the peaks kept here with the
 * current levels (gst_tbqueue_stats) are exact, and the upstream thread
 * does nothing for them per buffer.  (A buffer whose write failed is
 * counted in and out again by the upstream thread without a note: it was
 * never queued.  A buffer list is counted in whole before it is written:
 * cut short, its unwritten members are counted out without a note, but a
 * drop noted by another thread while it was being written counted them.)
 * qlock holders, or the upstream thread. */
void
gst_tbqueue_note_peaks (GstTbQueue * tbq)
{
  gst_tbqueue_note_peak (&tbq->peak_buffers, gst_tbqueue_level_buffers (tbq));
  gst_tbqueue_note_peak (&tbq->peak_bytes, gst_tbqueue_level_bytes (tbq));
  gst_tbqueue_note_peak (&tbq->peak_time, gst_tbqueue_level_time (tbq));
}

/* ---- time levels (as queue: running time at the sink minus at the src) ---- */

static void
apply_segment (GstTbQueue * tbq, GstEvent * event, gboolean sink)
{
  GstSegment *segment = sink ? &tbq->sink_segment : &tbq->src_segment;

  gst_event_copy_segment (event, segment);
  if (segment->format != GST_FORMAT_TIME) {
    /* Not time: pretend an open time segment from 0, as queue does. */
    segment->format = GST_FORMAT_TIME;
    segment->start = 0;
    segment->stop = -1;
    segment->time = 0;
  }
  GST_DEBUG_OBJECT (tbq, "configured %s SEGMENT %" GST_SEGMENT_FORMAT,
      sink ? "sink" : "src", segment);
  gst_tbqueue_update_time (tbq, sink);
}

static void
apply_gap (GstTbQueue * tbq, GstEvent * event, gboolean sink)
{
  GstClockTime timestamp, duration;

  gst_event_parse_gap (event, &timestamp, &duration);
  if (GST_CLOCK_TIME_IS_VALID (timestamp)) {
    if (GST_CLOCK_TIME_IS_VALID (duration))
      timestamp += duration;
    (sink ? &tbq->sink_segment : &tbq->src_segment)->position = timestamp;
    gst_tbqueue_update_time (tbq, sink);
  }
}

/* Upstream thread, qlock: a serialized event or query is about to be
 * written. */
void
gst_tbqueue_locked_level_in_serialized (GstTbQueue * tbq, GstMiniObject * item)
{
  GstEvent *event = GST_IS_EVENT (item) ? GST_EVENT_CAST (item) : NULL;

  if (event != NULL && GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT) {
    apply_segment (tbq, event, TRUE);
    /* Running times may restart: look at the src side again. */
    tbq->refresh_countdown = 1;
    /* Nothing queued: the src side starts from this segment too. */
    if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items)) {
      apply_segment (tbq, event, FALSE);
      tbq->newseg_applied_to_src = TRUE;
    }
  } else if (event != NULL && GST_EVENT_TYPE (event) == GST_EVENT_GAP) {
    apply_gap (tbq, event, TRUE);
  }
  TBQ_ADD (tbq->in_items, 1);
  TBQ_STORE (tbq->tail_is_buffer, FALSE);
}

/* Upstream thread: the sink position moves past the first `n` buffers of
 * a buffer list.  `note`: the time level may drop here and the level before
 * was really queued (FALSE where a list cut short puts the position back:
 * the time its unwritten members added was never queued). */
void
gst_tbqueue_apply_buffer_list (GstTbQueue * tbq, GstBufferList * list, guint n,
    gboolean note)
{
  GstClockTime position = tbq->sink_segment.position;
  guint i;

  for (i = 0; i < n; i++) {
    GstBuffer *buffer = gst_buffer_list_get (list, i);
    GstClockTime btime = GST_BUFFER_DTS_OR_PTS (buffer);

    if (GST_CLOCK_TIME_IS_VALID (btime))
      position = btime;
    if (GST_BUFFER_DURATION_IS_VALID (buffer))
      position += GST_BUFFER_DURATION (buffer);
  }
  tbq->sink_segment.position = position;
  gst_tbqueue_update_time_full (tbq, TRUE, note);
}

/* qlock: a buffer (of `bytes`) or an event was taken out.  The upstream
 * thread may wait for the level to drop: every item out wakes it, as
 * queue signals after every dequeue.  A SEGMENT or GAP moves the src
 * side's running time, which may lower the time level by any amount
 * (a SEGMENT whose position is past max-size-time, queued behind the
 * CAPS, holds the writer at the limit with no buffer queued: only the
 * SEGMENT's leaving ends that wait); and whatever the item, the waiter
 * looks again and sleeps on if it is still full. */
void
gst_tbqueue_locked_level_out (GstTbQueue * tbq, GstMiniObject * item,
    gsize bytes)
{
  if (GST_IS_BUFFER (item)) {
    GstBuffer *buffer = GST_BUFFER_CAST (item);

    /* The levels drop: the one before is a candidate peak (noted once,
     * for the time too). */
    gst_tbqueue_note_peaks (tbq);
    TBQ_ADD (tbq->out_buffers, 1);
    TBQ_ADD (tbq->out_bytes, bytes);
    gst_tbqueue_advance_full (tbq, GST_BUFFER_DTS_OR_PTS (buffer),
        GST_BUFFER_DURATION (buffer), FALSE, FALSE);
    GST_TBQUEUE_SIGNAL_DEL (tbq);
  } else if (GST_IS_EVENT (item)) {
    GstEvent *event = GST_EVENT_CAST (item);

    if (GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT) {
      if (G_LIKELY (!tbq->newseg_applied_to_src))
        apply_segment (tbq, event, FALSE);
      else
        tbq->newseg_applied_to_src = FALSE;
    } else if (GST_EVENT_TYPE (event) == GST_EVENT_GAP) {
      apply_gap (tbq, event, FALSE);
    }
    GST_TBQUEUE_SIGNAL_DEL (tbq);
  }
}

/* Nothing queued, in both layers (no thread streaming, or qlock and the
 * writer's thread). */
void
gst_tbqueue_reset_levels (GstTbQueue * tbq)
{
  gst_tbqueue_note_peaks (tbq);
  TBQ_STORE (tbq->in_buffers, 0);
  TBQ_STORE (tbq->in_bytes, 0);
  TBQ_STORE (tbq->in_items, 0);
  TBQ_STORE (tbq->out_buffers, 0);
  TBQ_STORE (tbq->out_bytes, 0);
  TBQ_STORE (tbq->out_items, 0);
  /* Pool buffers: none held any more; the next one that comes in has its
   * pool's size read again. */
  tbq->held_pool = NULL;
  TBQ_STORE (tbq->pool_refs_out, TBQ_LOAD (tbq->pool_refs_in));
  TBQ_STORE (tbq->tail_is_buffer, FALSE);
  gst_segment_init (&tbq->sink_segment, GST_FORMAT_TIME);
  gst_segment_init (&tbq->src_segment, GST_FORMAT_TIME);
  gst_tbqueue_update_time_full (tbq, TRUE, FALSE);
  gst_tbqueue_update_time_full (tbq, FALSE, FALSE);
  tbq->head_needs_discont = tbq->tail_needs_discont = FALSE;
  tbq->eos_drain_until = tbq->flush_until = 0;
  tbq->seen_out_buffers = tbq->seen_out_bytes = 0;
  tbq->seen_srctime = GST_CLOCK_STIME_NONE;
  tbq->refresh_countdown = 1;
}

/* ---- thresholds ---- */

/* Src task, qlock: nothing to push, as queue decides it: nothing is
 * queued, or the newest item is a buffer and a min-threshold-* is not
 * reached (nor a limit).  Items on their way through the copy task count
 * as queued: waiting for them is not an underrun (gst_tbqueue_loop).
 * With `key`, takes the reader's wait key first (GST_TBQUEUE_WAIT_ADD_CHECK),
 * so that records published after the look end that wait. */
gboolean
gst_tbqueue_locked_is_empty (GstTbQueue * tbq, guint32 * key)
{
  guint min_buffers, min_bytes;
  guint64 min_time;

  if (key != NULL) {
    *key = tbq_reader_prepare_wait (tbq->reader);
    if (G_UNLIKELY (tbq->batching)) {
      TBQ_STORE (tbq->src_idle, TRUE);
      /* Seq_cst fence: src_idle stored before in_items is loaded (Dekker
       * with gst_tbqueue_sink_publish_if_idle): either the upstream thread
       * sees src_idle and publishes what it holds back (which ends the
       * wait), or this sees its item and does not wait. */
      atomic_thread_fence (memory_order_seq_cst);
    }
  }
  /* A list being gathered is still queued (counted out when whole). */
  if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
    return TRUE;
  /* Only a queue whose newest item is a buffer waits for the thresholds,
   * else a serialized query could wait forever. */
  if (!TBQ_LOAD (tbq->tail_is_buffer))
    return FALSE;
  min_buffers = TBQ_LOAD (tbq->min_buffers);
  min_bytes = TBQ_LOAD (tbq->min_bytes);
  min_time = TBQ_LOAD (tbq->min_time);
  return ((min_buffers > 0 && gst_tbqueue_level_buffers (tbq) < min_buffers)
      || (min_bytes > 0 && gst_tbqueue_level_bytes (tbq) < min_bytes)
      || (min_time > 0 && gst_tbqueue_level_time (tbq) < min_time))
      && !gst_tbqueue_is_filled (tbq);
}

/* qlock: the thresholds as the application set them (after a flush). */
void
gst_tbqueue_locked_restore_thresholds (GstTbQueue * tbq)
{
  TBQ_STORE (tbq->min_buffers, tbq->orig_min_buffers);
  TBQ_STORE (tbq->min_bytes, tbq->orig_min_bytes);
  TBQ_STORE (tbq->min_time, tbq->orig_min_time);
}

/* qlock: no threshold, so that the src side drains everything (EOS). */
void
gst_tbqueue_locked_clear_thresholds (GstTbQueue * tbq)
{
  TBQ_STORE (tbq->min_buffers, 0);
  TBQ_STORE (tbq->min_bytes, 0);
  TBQ_STORE (tbq->min_time, 0);
}

/* ---- the level log ---- */

/* One line with the levels against the thresholds and limits, and the pool
 * levels, as queue's STATUS, logged as from the caller's `file`,
 * `function` and `line` (use the STATUS macro).  qlock held. */
void
gst_tbqueue_log_status (GstTbQueue * tbq, GstPad * pad, const gchar * msg,
    const gchar * file, const gchar * function, gint line)
{
  TbqStats st;
  guint64 sink_max = 0;

  memset (&st, 0, sizeof st);
  if (tbq->q != NULL) {
    const TbqConfig *cfg = tbq_queue_get_config (tbq->q);

    tbq_queue_get_stats (tbq->q, &st);
    sink_max = (guint64) cfg->sink.max_blocks * cfg->sink.block_size;
  }
  /* The sink pool's budget: blocks and frames' extents alike. */
  gst_debug_log (DATAFLOW, GST_LEVEL_LOG, file, function, line,
      G_OBJECT (tbq), "(%s:%s) %s: %" G_GUINT64_FORMAT " of %u-%u buffers, %"
      G_GUINT64_FORMAT " of %u-%u bytes, %" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT " ns; source pool %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " blocks in use, sink pool %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes in use, spill file %"
      G_GUINT64_FORMAT " bytes",
      GST_DEBUG_PAD_NAME (pad), msg, gst_tbqueue_level_buffers (tbq),
      TBQ_LOAD (tbq->min_buffers), TBQ_LOAD (tbq->max_buffers),
      gst_tbqueue_level_bytes (tbq), TBQ_LOAD (tbq->min_bytes),
      TBQ_LOAD (tbq->max_bytes), gst_tbqueue_level_time (tbq),
      (guint64) TBQ_LOAD (tbq->min_time), (guint64) TBQ_LOAD (tbq->max_time),
      st.source.blocks_in_use, st.source.blocks_total,
      st.extents.budget_used, sink_max, st.spill.level_bytes);
}

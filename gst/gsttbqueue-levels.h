/* tbqueue levels: how much is queued, against the limits and thresholds.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The level is everything between the sink and src pads, in both layers
 * and in flight in the copy task: what the sink side counted in minus what
 * the src side counted out, and, for time, the running time at the sink
 * minus the running time at the src (as queue).  The inline functions are
 * the buffer's fast path.  Threads and locks: gsttbqueue-private.h.
 */
#ifndef __GST_TBQUEUE_LEVELS_H__
#define __GST_TBQUEUE_LEVELS_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* Any thread, no lock. */
static inline guint64
gst_tbqueue_level_buffers (GstTbQueue * tbq)
{
  guint64 out = TBQ_LOAD (tbq->out_buffers);
  guint64 in = TBQ_LOAD (tbq->in_buffers);

  return in > out ? in - out : 0;
}

static inline guint64
gst_tbqueue_level_bytes (GstTbQueue * tbq)
{
  guint64 out = TBQ_LOAD (tbq->out_bytes);
  guint64 in = TBQ_LOAD (tbq->in_bytes);

  return in > out ? in - out : 0;
}

/* Pool buffers the element holds by reference (the copy rule,
 * gsttbqueue-sink.c).  A stale pool_refs_out is lower: the count is then
 * higher, which only costs a copy. */
static inline guint64
gst_tbqueue_pool_buffers_held (GstTbQueue * tbq)
{
  guint64 out = TBQ_LOAD (tbq->pool_refs_out);
  guint64 in = TBQ_LOAD (tbq->pool_refs_in);

  return in > out ? in - out : 0;
}

static inline guint64
gst_tbqueue_level_time (GstTbQueue * tbq)
{
  gint64 src = TBQ_LOAD (tbq->srctime);
  gint64 sink = TBQ_LOAD (tbq->sinktime);

  if (GST_CLOCK_STIME_IS_VALID (src) && GST_CLOCK_STIME_IS_VALID (sink)
      && sink >= src)
    return (guint64) (sink - src);
  return 0;
}

/* A max-size-* limit is reached.  Any thread, no lock. */
static inline gboolean
gst_tbqueue_is_filled (GstTbQueue * tbq)
{
  guint max_buffers = TBQ_LOAD (tbq->max_buffers);
  guint max_bytes = TBQ_LOAD (tbq->max_bytes);
  guint64 max_time = TBQ_LOAD (tbq->max_time);

  return (max_buffers > 0 && gst_tbqueue_level_buffers (tbq) >= max_buffers)
      || (max_bytes > 0 && gst_tbqueue_level_bytes (tbq) >= max_bytes)
      || (max_time > 0 && gst_tbqueue_level_time (tbq) >= max_time);
}

/* Where the upstream thread that waits at a limit resumes: below every
 * limit, and, with resume_low, at or under the low mark of the buffers
 * and bytes limits (a quarter below the limit, at least one), or with
 * nothing queued.  qlock.  Without it a consumer that takes items one at
 * a time behind a faster producer wakes the producer for every item
 * (queue's way, and tbqueue's); with it, about twice per quarter of the
 * limit.  The time limit has no low mark (a level that stays put while
 * items leave must not hold upstream). */
static inline gboolean
gst_tbqueue_may_resume (GstTbQueue * tbq)
{
  guint max_buffers, max_bytes;

  if (gst_tbqueue_is_filled (tbq))
    return FALSE;
  if (!tbq->resume_low
      || TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
    return TRUE;
  max_buffers = TBQ_LOAD (tbq->max_buffers);
  max_bytes = TBQ_LOAD (tbq->max_bytes);
  return !(max_buffers > 0 && gst_tbqueue_level_buffers (tbq)
      > max_buffers - MAX (max_buffers / 4, 1))
      && !(max_bytes > 0 && gst_tbqueue_level_bytes (tbq)
      > max_bytes - MAX (max_bytes / 4, 1));
}

/* ---- peaks ---- */

/* Raise `peak` to `v`.  Relaxed CAS: a statistic that orders nothing; its
 * writers are qlock holders and, rarely, the upstream thread without
 * qlock (gst_tbqueue_update_time). */
static inline void
gst_tbqueue_note_peak (_Atomic guint64 * peak, guint64 v)
{
  guint64 old = atomic_load_explicit (peak, memory_order_relaxed);

  while (v > old && !atomic_compare_exchange_weak_explicit (peak, &old, v,
          memory_order_relaxed, memory_order_relaxed)) {
  }
}

void gst_tbqueue_note_peaks (GstTbQueue * tbq);

/* ---- the sink side's view ---- */

void gst_tbqueue_sink_refresh (GstTbQueue * tbq);

/* Upstream thread: gst_tbqueue_is_filled() without touching the src side's
 * cache lines while the cached view says there is room.  The src side only
 * ever adds to its counters, and moves its running time forward but when
 * it counts a move back (srctime_backs), so while that count is the one
 * seen the cached level is an upper bound of the real one: "not filled" is
 * exact.  An unknown cached src time forces a real check.  The buffer's
 * fast path: always inlined. */
G_ALWAYS_INLINE static inline gboolean
gst_tbqueue_sink_is_filled (GstTbQueue * tbq)
{
  guint max_buffers = TBQ_LOAD (tbq->max_buffers);
  guint max_bytes = TBQ_LOAD (tbq->max_bytes);
  guint64 max_time = TBQ_LOAD (tbq->max_time);
  guint64 in_buffers = TBQ_LOAD (tbq->in_buffers);
  guint64 in_bytes = TBQ_LOAD (tbq->in_bytes);
  gint64 sinktime = TBQ_LOAD (tbq->sinktime);

  if (G_LIKELY (--tbq->refresh_countdown != 0)
      && G_LIKELY (TBQ_LOAD (tbq->srctime_backs) == tbq->seen_srctime_backs)
      && !(max_buffers > 0 && in_buffers - tbq->seen_out_buffers >= max_buffers)
      && !(max_bytes > 0 && in_bytes - tbq->seen_out_bytes >= max_bytes)
      && !(max_time > 0 && (!GST_CLOCK_STIME_IS_VALID (tbq->seen_srctime)
              || (GST_CLOCK_STIME_IS_VALID (sinktime)
                  && sinktime - tbq->seen_srctime >= (gint64) max_time))))
    return FALSE;
  gst_tbqueue_sink_refresh (tbq);
  return gst_tbqueue_is_filled (tbq);
}

/* ---- time levels ---- */

/* The running time of `val` in a time segment (apply_segment makes every
 * segment one).  Forward at rate 1 and not before the segment's start, as
 * every buffer of a plain stream, it is what
 * gst_segment_to_running_time_full() gives, computed here without the call
 * (it is on the pushing thread's path for every buffer: a tenth of
 * tbqueue's own instructions per push with transfer=reference). */
static inline gint64
gst_tbqueue_running_time (GstSegment * segment, GstClockTime val)
{
  if (G_LIKELY (GST_CLOCK_TIME_IS_VALID (val) && segment->rate == 1.0
          && val >= segment->start + segment->offset))
    return (gint64) (val - (segment->start + segment->offset)
        + segment->base);
  if (GST_CLOCK_TIME_IS_VALID (val)) {
    gint sign = gst_segment_to_running_time_full (segment, GST_FORMAT_TIME,
        val, &val);

    if (sign > 0)
      return (gint64) val;
    if (sign < 0)
      return -(gint64) val;
  }
  return GST_CLOCK_STIME_NONE;
}

/* Recompute the running time at the sink (or src) from its segment.  With
 * `note`, a change that lowers the time level (the sink's time stepping
 * back, the src's moving on) keeps the peaks first: see
 * gst_tbqueue_note_peaks().  On the buffer's path the test is one compare
 * with this thread's own time. */
static inline void
gst_tbqueue_update_time_full (GstTbQueue * tbq, gboolean sink, gboolean note)
{
  if (sink) {
    gint64 t = gst_tbqueue_running_time (&tbq->sink_segment,
        tbq->sink_segment.position);

    if (G_UNLIKELY (note && t < TBQ_LOAD (tbq->sinktime)))
      gst_tbqueue_note_peaks (tbq);
    TBQ_STORE (tbq->sinktime, t);
  } else {
    gint64 t = gst_tbqueue_running_time (&tbq->src_segment,
        tbq->src_segment.position);

    gint64 old = TBQ_LOAD (tbq->srctime);

    if (note && t > old)
      gst_tbqueue_note_peaks (tbq);
    TBQ_STORE (tbq->srctime, t);
    /* Release, after the store: a sink side that sees the new count
     * (acquire, gst_tbqueue_sink_refresh) reads this time or a later one.
     * One writer at a time (qlock): no read-modify-write needed. */
    if (G_UNLIKELY (GST_CLOCK_STIME_IS_VALID (t) && t < old))
      atomic_store_explicit (&tbq->srctime_backs,
          TBQ_LOAD (tbq->srctime_backs) + 1, memory_order_release);
  }
}

static inline void
gst_tbqueue_update_time (GstTbQueue * tbq, gboolean sink)
{
  gst_tbqueue_update_time_full (tbq, sink, TRUE);
}

/* Move the sink (or src) position to the end of data at `timestamp`
 * lasting `duration` (a buffer's DTS or PTS and duration); either may be
 * unknown: no timestamp is continuous with what came before. */
static inline void
gst_tbqueue_advance_full (GstTbQueue * tbq, GstClockTime timestamp,
    GstClockTime duration, gboolean sink, gboolean note)
{
  GstSegment *segment = sink ? &tbq->sink_segment : &tbq->src_segment;

  if (timestamp == GST_CLOCK_TIME_NONE)
    timestamp = segment->position;
  if (duration != GST_CLOCK_TIME_NONE)
    timestamp += duration;
  segment->position = timestamp;
  gst_tbqueue_update_time_full (tbq, sink, note);
}

static inline void
gst_tbqueue_advance (GstTbQueue * tbq, GstClockTime timestamp,
    GstClockTime duration, gboolean sink)
{
  gst_tbqueue_advance_full (tbq, timestamp, duration, sink, TRUE);
}

/* ---- counting items in and out ---- */

/* Upstream thread: `n` buffers of `bytes` in all are about to be written. */
static inline void
gst_tbqueue_level_in_buffers (GstTbQueue * tbq, guint n, gsize bytes)
{
  TBQ_ADD (tbq->in_buffers, n);
  TBQ_ADD (tbq->in_bytes, bytes);
  TBQ_ADD (tbq->in_items, n);
  /* Stored only on change: the src task reads this line. */
  if (G_UNLIKELY (!TBQ_LOAD (tbq->tail_is_buffer)))
    TBQ_STORE (tbq->tail_is_buffer, TRUE);
}

/* Upstream thread, publish-batch other than 1, after writing a buffer:
 * the writer may hold it back; if the src task waits for data, publish.
 * See gst_tbqueue_locked_is_empty. */
static inline void
gst_tbqueue_sink_publish_if_idle (GstTbQueue * tbq)
{
  /* Seq_cst fence: in_items (bumped before the write) stored before
   * src_idle is loaded (Dekker with gst_tbqueue_locked_is_empty). */
  atomic_thread_fence (memory_order_seq_cst);
  if (TBQ_LOAD (tbq->src_idle))
    tbq_writer_flush (tbq->writer);
}

void gst_tbqueue_locked_level_out (GstTbQueue * tbq, GstMiniObject * item,
    gsize bytes);
void gst_tbqueue_locked_level_in_serialized (GstTbQueue * tbq,
    GstMiniObject * item);
void gst_tbqueue_apply_buffer_list (GstTbQueue * tbq, GstBufferList * list,
    guint n, gboolean note);
void gst_tbqueue_reset_levels (GstTbQueue * tbq);

/* ---- thresholds ---- */

gboolean gst_tbqueue_locked_is_empty (GstTbQueue * tbq, guint32 * key);
void gst_tbqueue_locked_restore_thresholds (GstTbQueue * tbq);
void gst_tbqueue_locked_clear_thresholds (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_LEVELS_H__ */

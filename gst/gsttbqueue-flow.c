/* tbqueue dataflow: the sink side (writer), the src pad task (reader),
 * events, queries, flushing and pad activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threads and locks:
 *  - The upstream streaming thread, holding the sink pad's stream lock, is
 *    the only user of the libtbq writer.  A plain buffer takes no lock: it
 *    checks the flow state and the levels with relaxed atomic loads, bumps
 *    the sink-side counters (it owns them) and writes one record.
 *  - The src pad task is the reader.  It takes records under qlock, so that
 *    leaky=downstream and flushes from other threads can take records too.
 *  - The copy task (a GstTask) runs the libtbq copier; it never takes qlock
 *    on its data path.
 *  - Whenever srcresult leaves GST_FLOW_OK the two-layer queue is
 *    interrupted (every libtbq wait returns) and the copy task pauses;
 *    setting it back to GST_FLOW_OK resumes both (set_flow).
 *  - Counters are accounted *before* a record is published, so the src side
 *    never takes out more than the sink side put in.
 */
#include "gsttbqueue-private.h"

#define DATAFLOW gst_tbqueue_dataflow

/* Longest wait, holding qlock, for the copy task to move what this thread
 * wrote; only on leaky=downstream and flush-on-eos slow paths. */
#define SYNC_TIMEOUT_NS (200 * GST_MSECOND)

typedef enum
{
  DEQUEUE_NOWAIT,               /* take what is visible */
  DEQUEUE_WAIT_SRC,             /* src task: may sleep for the rest of a list */
  DEQUEUE_WAIT_WRITER,          /* upstream thread: may wait for the copier */
} DequeueWait;

static void gst_tbqueue_loop (GstPad * pad);

/* ---- flow state ---- */

static void
locked_set_flow (GstTbQueue * tbq, GstFlowReturn ret)
{
  TBQ_STORE (tbq->srcresult, ret);
  if (tbq->q == NULL)
    return;
  if (ret != GST_FLOW_OK) {
    /* Unblock a writer, the copier and the reader wherever they wait. */
    tbq_queue_interrupt (tbq->q);
    QBROADCAST (tbq, item_del);
  } else {
    tbq_queue_resume (tbq->q);
    gst_tbqueue_copier_start (tbq);
  }
}

/* ---- time levels (as queue: running time at the sink minus at the src) ---- */

static inline gint64
segment_running_time (GstSegment * segment, GstClockTime val)
{
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

static inline void
update_time (GstTbQueue * tbq, gboolean sink)
{
  if (sink)
    TBQ_STORE (tbq->sinktime, segment_running_time (&tbq->sink_segment,
            tbq->sink_segment.position));
  else
    TBQ_STORE (tbq->srctime, segment_running_time (&tbq->src_segment,
            tbq->src_segment.position));
}

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
  update_time (tbq, sink);
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
    update_time (tbq, sink);
  }
}

static inline void
apply_buffer (GstTbQueue * tbq, GstBuffer * buffer, gboolean sink)
{
  GstSegment *segment = sink ? &tbq->sink_segment : &tbq->src_segment;
  GstClockTime timestamp = GST_BUFFER_DTS_OR_PTS (buffer);
  GstClockTime duration = GST_BUFFER_DURATION (buffer);

  /* No timestamp: continuous with the previous one. */
  if (timestamp == GST_CLOCK_TIME_NONE)
    timestamp = segment->position;
  if (duration != GST_CLOCK_TIME_NONE)
    timestamp += duration;
  segment->position = timestamp;
  update_time (tbq, sink);
}

void
gst_tbqueue_reset_levels (GstTbQueue * tbq)
{
  TBQ_STORE (tbq->in_buffers, 0);
  TBQ_STORE (tbq->in_bytes, 0);
  TBQ_STORE (tbq->in_items, 0);
  TBQ_STORE (tbq->out_buffers, 0);
  TBQ_STORE (tbq->out_bytes, 0);
  TBQ_STORE (tbq->out_items, 0);
  TBQ_STORE (tbq->tail_is_buffer, FALSE);
  gst_segment_init (&tbq->sink_segment, GST_FORMAT_TIME);
  gst_segment_init (&tbq->src_segment, GST_FORMAT_TIME);
  update_time (tbq, TRUE);
  update_time (tbq, FALSE);
  tbq->head_needs_discont = tbq->tail_needs_discont = FALSE;
  tbq->seen_out_buffers = tbq->seen_out_bytes = 0;
  tbq->seen_srctime = GST_CLOCK_STIME_NONE;
  tbq->refresh_countdown = 1;
}

/* ---- levels seen from the sink side ---- */

/* Buffers between two refreshes of the sink side's view (peaks are sampled
 * at this interval and at every limit check). */
#define SINK_REFRESH_INTERVAL 32

/* Upstream thread: re-read the src side's counters and sample the peaks. */
static void
sink_refresh (GstTbQueue * tbq)
{
  guint64 b, y, t;

  tbq->seen_out_buffers = TBQ_LOAD (tbq->out_buffers);
  tbq->seen_out_bytes = TBQ_LOAD (tbq->out_bytes);
  tbq->seen_srctime = TBQ_LOAD (tbq->srctime);
  tbq->refresh_countdown = SINK_REFRESH_INTERVAL;
  b = gst_tbqueue_level_buffers (tbq);
  y = gst_tbqueue_level_bytes (tbq);
  t = gst_tbqueue_level_time (tbq);
  /* Written by the upstream thread only. */
  if (b > TBQ_LOAD (tbq->counters.peak_buffers))
    TBQ_STORE (tbq->counters.peak_buffers, b);
  if (y > TBQ_LOAD (tbq->counters.peak_bytes))
    TBQ_STORE (tbq->counters.peak_bytes, y);
  if (t > TBQ_LOAD (tbq->counters.peak_time))
    TBQ_STORE (tbq->counters.peak_time, t);
}

/* Upstream thread: gst_tbqueue_is_filled() without touching the src side's
 * cache lines while the cached view says there is room.  The src side only
 * ever adds to its counters and moves its running time forward, so the
 * cached level is an upper bound of the real one: "not filled" is exact.
 * An unknown cached src time forces a real check. */
static inline gboolean
sink_is_filled (GstTbQueue * tbq)
{
  guint max_buffers = TBQ_LOAD (tbq->max_buffers);
  guint max_bytes = TBQ_LOAD (tbq->max_bytes);
  guint64 max_time = TBQ_LOAD (tbq->max_time);
  guint64 in_buffers = TBQ_LOAD (tbq->in_buffers);
  guint64 in_bytes = TBQ_LOAD (tbq->in_bytes);
  gint64 sinktime = TBQ_LOAD (tbq->sinktime);

  if (G_LIKELY (--tbq->refresh_countdown != 0)
      && !(max_buffers > 0 && in_buffers - tbq->seen_out_buffers >= max_buffers)
      && !(max_bytes > 0 && in_bytes - tbq->seen_out_bytes >= max_bytes)
      && !(max_time > 0 && (!GST_CLOCK_STIME_IS_VALID (tbq->seen_srctime)
              || (GST_CLOCK_STIME_IS_VALID (sinktime)
                  && sinktime - tbq->seen_srctime >= (gint64) max_time))))
    return FALSE;
  sink_refresh (tbq);
  return gst_tbqueue_is_filled (tbq);
}

/* ---- records to objects (src side, under qlock) ---- */

static inline guint32
record_list_flags (const TbqRecord * rec)
{
  if (rec->type == GST_TBQ_RECORD_BUFFER_COPY)
    return ((const GstTbqBufferHeader *) rec->data)->list;
  if (rec->type == GST_TBQ_RECORD_BUFFER_REF)
    return ((const GstTbqRefRecord *) rec->data)->list;
  return 0;
}

static inline gboolean
record_is_buffer (const TbqRecord * rec)
{
  return rec->type == GST_TBQ_RECORD_BUFFER_COPY
      || rec->type == GST_TBQ_RECORD_BUFFER_REF;
}

/* Take the next visible record and apply it to the src side: levels,
 * segment, time.  NULL when nothing is visible.  A query that its sender
 * gave up on comes back as NULL with *skipped set. */
static GstMiniObject *
locked_take (GstTbQueue * tbq, guint32 * list, gboolean * skipped)
{
  TbqRecord rec;
  GstTbqRefRecord ref;
  GstMiniObject *obj;

  *list = 0;
  if (tbq_reader_next (tbq->reader, &rec) != TBQ_OK)
    return NULL;
  TBQ_ADD (tbq->out_items, 1);

  switch (rec.type) {
    case GST_TBQ_RECORD_BUFFER_COPY:{
      GstBuffer *buffer = gst_tbqueue_buffer_decode (&rec, list);

      TBQ_ADD (tbq->out_buffers, 1);
      TBQ_ADD (tbq->out_bytes, rec.size - sizeof (GstTbqBufferHeader));
      apply_buffer (tbq, buffer, FALSE);
      obj = GST_MINI_OBJECT_CAST (buffer);
      break;
    }
    case GST_TBQ_RECORD_BUFFER_REF:
      memcpy (&ref, rec.data, sizeof ref);
      *list = ref.list;
      TBQ_ADD (tbq->out_buffers, 1);
      TBQ_ADD (tbq->out_bytes, ref.size);
      apply_buffer (tbq, GST_BUFFER_CAST (ref.object), FALSE);
      obj = ref.object;
      break;
    case GST_TBQ_RECORD_EVENT:{
      GstEvent *event;

      memcpy (&ref, rec.data, sizeof ref);
      event = GST_EVENT_CAST (ref.object);
      switch (GST_EVENT_TYPE (event)) {
        case GST_EVENT_SEGMENT:
          if (G_LIKELY (!tbq->newseg_applied_to_src))
            apply_segment (tbq, event, FALSE);
          else
            tbq->newseg_applied_to_src = FALSE;
          break;
        case GST_EVENT_GAP:
          apply_gap (tbq, event, FALSE);
          break;
        default:
          break;
      }
      obj = ref.object;
      break;
    }
    case GST_TBQ_RECORD_QUERY:
      memcpy (&ref, rec.data, sizeof ref);
      if (ref.size <= tbq->abandoned_query_seq) {
        GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "skipping abandoned query");
        *skipped = TRUE;
        return NULL;
      }
      obj = ref.object;
      break;
    default:
      g_critical ("%s: unknown record type %u", GST_OBJECT_NAME (tbq),
          rec.type);
      *skipped = TRUE;
      return NULL;
  }
  /* The upstream thread may wait for the level to drop. */
  if (tbq->waiting_del && (rec.type == GST_TBQ_RECORD_BUFFER_COPY
          || rec.type == GST_TBQ_RECORD_BUFFER_REF))
    QSIGNAL (tbq, item_del);
  return obj;
}

/* Wait for more records while gathering a buffer list.  FALSE: give up. */
static gboolean
locked_wait_more (GstTbQueue * tbq, DequeueWait wait)
{
  TbqRecord rec;

  switch (wait) {
    case DEQUEUE_WAIT_SRC:{
      guint32 key = tbq_reader_prepare_wait (tbq->reader);

      if (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK)
        return TRUE;
      QUNLOCK (tbq);
      tbq_reader_sleep (tbq->reader, key, -1);
      QLOCK (tbq);
      return GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK;
    }
    case DEQUEUE_WAIT_WRITER:
      return tbq_writer_sync (tbq->writer, SYNC_TIMEOUT_NS) == TBQ_OK
          && tbq_reader_peek (tbq->reader, &rec) == TBQ_OK;
    default:
      return FALSE;
  }
}

/* Dequeue one item: a buffer, a whole buffer list, an event or a query.
 * NULL when nothing is visible (or a gathered list was cut short and the
 * flow is no longer OK: the partial list is dropped). */
static GstMiniObject *
locked_dequeue (GstTbQueue * tbq, DequeueWait wait, gboolean * skipped)
{
  GstMiniObject *obj;
  GstBufferList *bl;
  guint32 list;

  *skipped = FALSE;
  obj = locked_take (tbq, &list, skipped);
  if (obj == NULL || !(list & GST_TBQ_LIST_FIRST) || (list & GST_TBQ_LIST_LAST))
    return obj;

  /* The rest of the list was written in the same session. */
  bl = gst_buffer_list_new ();
  gst_buffer_list_add (bl, GST_BUFFER_CAST (obj));
  for (;;) {
    TbqRecord rec;
    GstMiniObject *more;

    if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK) {
      if (!locked_wait_more (tbq, wait)) {
        if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK) {
          gst_buffer_list_unref (bl);
          return NULL;
        }
        break;
      }
      continue;
    }
    if (!record_is_buffer (&rec) || (record_list_flags (&rec) &
            GST_TBQ_LIST_FIRST))
      break;
    more = locked_take (tbq, &list, skipped);
    gst_buffer_list_add (bl, GST_BUFFER_CAST (more));
    if (list & GST_TBQ_LIST_LAST)
      break;
  }
  return GST_MINI_OBJECT_CAST (bl);
}

/* Drop a dequeued item: sticky events are kept on the src pad (unless they
 * are SEGMENT or EOS when flushing), a query is answered FALSE. */
static void
locked_drop_item (GstTbQueue * tbq, GstMiniObject * item, gboolean flushing)
{
  if (GST_IS_EVENT (item)) {
    GstEvent *event = GST_EVENT_CAST (item);

    if (GST_EVENT_IS_STICKY (event) && (!flushing
            || (GST_EVENT_TYPE (event) != GST_EVENT_SEGMENT
                && GST_EVENT_TYPE (event) != GST_EVENT_EOS)))
      gst_pad_store_sticky_event (tbq->srcpad, event);
    gst_event_unref (event);
  } else if (GST_IS_QUERY (item)) {
    tbq->last_query = FALSE;
    tbq->last_handled_query = GST_QUERY_CAST (item);
    QBROADCAST (tbq, query_handled);
  } else {
    gst_mini_object_unref (item);
  }
}

static guint
item_buffers (GstMiniObject * item)
{
  if (GST_IS_BUFFER (item))
    return 1;
  if (GST_IS_BUFFER_LIST (item))
    return gst_buffer_list_length (GST_BUFFER_LIST_CAST (item));
  return 0;
}

/* Drop every visible item (src side flush while the writer may run). */
static void
locked_drain_visible (GstTbQueue * tbq)
{
  GstMiniObject *item;
  gboolean skipped;

  while ((item = locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped)) || skipped) {
    if (item)
      locked_drop_item (tbq, item, TRUE);
  }
}

static void
locked_leak (GstTbQueue * tbq, DequeueWait wait)
{
  while (gst_tbqueue_is_filled (tbq)) {
    gboolean skipped;
    GstMiniObject *leak = locked_dequeue (tbq, wait, &skipped);

    if (leak == NULL) {
      if (skipped)
        continue;
      /* Nothing visible to leak: the rest is still in the source layer. */
      if (wait != DEQUEUE_WAIT_WRITER
          || tbq_writer_sync (tbq->writer, SYNC_TIMEOUT_NS) != TBQ_OK)
        break;
      continue;
    }
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
        "queue is full, leaking item %p on downstream end", leak);
    atomic_fetch_add_explicit (&tbq->counters.dropped_downstream,
        item_buffers (leak), memory_order_relaxed);
    locked_drop_item (tbq, leak, FALSE);
    /* The next buffer pushed needs a DISCONT flag. */
    tbq->head_needs_discont = TRUE;
  }
}

void
gst_tbqueue_locked_leak_downstream (GstTbQueue * tbq)
{
  if (tbq->reader != NULL)
    locked_leak (tbq, DEQUEUE_NOWAIT);
}

/* Leak the whole oldest sink block so the copier can move on (the pool is
 * physically full).  Upstream thread. */
static void
locked_leak_oldest_block (GstTbQueue * tbq)
{
  TbqRecord rec;
  TbqBlock *first;

  if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)
    return;
  first = rec.block;
  do {
    gboolean skipped;
    GstMiniObject *leak = locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped);

    if (leak != NULL) {
      atomic_fetch_add_explicit (&tbq->counters.dropped_downstream,
          item_buffers (leak), memory_order_relaxed);
      locked_drop_item (tbq, leak, FALSE);
      tbq->head_needs_discont = TRUE;
    }
  } while (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK && rec.block == first);
}

/* ---- sink side ---- */

/* Reserve a record; a full source pool is an overrun too. */
static TbqStatus
sink_reserve_full (GstTbQueue * tbq, guint16 type, guint32 size, void **data,
    gboolean is_buffer)
{
  gint leaky = is_buffer ? TBQ_LOAD (tbq->leaky) : GST_TBQUEUE_NO_LEAK;
  TbqStatus st;

  if (is_buffer) {
    TBQ_ADD (tbq->counters.overruns, 1);
    if (!TBQ_LOAD (tbq->silent))
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_OVERRUN], 0);
  }
  switch (leaky) {
    case GST_TBQUEUE_LEAK_UPSTREAM:
      return TBQ_DROPPED;
    case GST_TBQUEUE_LEAK_DOWNSTREAM:
      QLOCK (tbq);
      locked_leak_oldest_block (tbq);
      QUNLOCK (tbq);
      tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK,
          SYNC_TIMEOUT_NS);
      st = tbq_writer_reserve (tbq->writer, type, size, data);
      break;
    default:
      GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "source pool full, waiting");
      tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK, -1);
      st = tbq_writer_reserve (tbq->writer, type, size, data);
      if (st == TBQ_OK && is_buffer && !TBQ_LOAD (tbq->silent))
        g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_RUNNING], 0);
      break;
  }
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
  return st == TBQ_TIMEOUT ? TBQ_DROPPED : st;
}

static inline TbqStatus
sink_reserve (GstTbQueue * tbq, guint16 type, guint32 size, void **data,
    gboolean is_buffer)
{
  TbqStatus st = tbq_writer_reserve (tbq->writer, type, size, data);

  if (G_LIKELY (st == TBQ_OK))
    return st;
  if (st != TBQ_DROPPED)
    return st;
  return sink_reserve_full (tbq, type, size, data, is_buffer);
}

static inline GstFlowReturn
sink_check (GstTbQueue * tbq)
{
  GstFlowReturn ret = GST_TBQUEUE_FLOW (tbq);

  if (G_UNLIKELY (ret != GST_FLOW_OK))
    return ret;
  if (G_UNLIKELY (TBQ_LOAD (tbq->eos) || TBQ_LOAD (tbq->unexpected)))
    return GST_FLOW_EOS;
  return GST_FLOW_OK;
}

#define SINK_LEAK ((GstFlowReturn) 1)

/* The level is at a max-size-* limit: signal, then leak or wait as queue
 * does.  GST_FLOW_OK, SINK_LEAK (drop the incoming data), or a flow error. */
static GstFlowReturn
sink_make_room (GstTbQueue * tbq)
{
  while (gst_tbqueue_is_filled (tbq)) {
    GstFlowReturn ret;

    TBQ_ADD (tbq->counters.overruns, 1);
    if (!TBQ_LOAD (tbq->silent)) {
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_OVERRUN], 0);
      if ((ret = sink_check (tbq)) != GST_FLOW_OK)
        return ret;
      /* The signal may have changed the limits. */
      if (!gst_tbqueue_is_filled (tbq))
        break;
    }
    switch (TBQ_LOAD (tbq->leaky)) {
      case GST_TBQUEUE_LEAK_UPSTREAM:
        GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
            "queue is full, leaking buffer on upstream end");
        tbq->tail_needs_discont = TRUE;
        return SINK_LEAK;
      case GST_TBQUEUE_LEAK_DOWNSTREAM:
        QLOCK (tbq);
        locked_leak (tbq, DEQUEUE_WAIT_WRITER);
        ret = GST_TBQUEUE_FLOW (tbq);
        QUNLOCK (tbq);
        /* Whatever could not be leaked stays; never spin on it. */
        return ret;
      default:
        GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
            "queue is full, waiting for free space");
        TBQ_ADD (tbq->counters.level_waits, 1);
        QLOCK (tbq);
        tbq->waiting_del = TRUE;
        while (gst_tbqueue_is_filled (tbq)
            && GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
          QWAIT (tbq, item_del);
        tbq->waiting_del = FALSE;
        ret = GST_TBQUEUE_FLOW (tbq);
        QUNLOCK (tbq);
        if (ret != GST_FLOW_OK)
          return ret;
        if (!TBQ_LOAD (tbq->silent))
          g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_RUNNING], 0);
        return GST_FLOW_OK;
    }
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
sink_write_failed (GstTbQueue * tbq, TbqStatus st)
{
  GstFlowReturn ret = GST_TBQUEUE_FLOW (tbq);

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "write failed: %s",
      tbq_status_to_string (st));
  return ret != GST_FLOW_OK ? ret : GST_FLOW_FLUSHING;
}

/* Write one buffer (owned) as a copy or a reference record. */
static inline TbqStatus
sink_write_buffer (GstTbQueue * tbq, GstBuffer * buffer, gsize size,
    guint32 list, gboolean copy)
{
  void *rec;
  TbqStatus st;

  if (copy) {
    st = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_COPY,
        (guint32) (sizeof (GstTbqBufferHeader) + size), &rec, TRUE);
    if (G_UNLIKELY (st != TBQ_OK))
      return st;
    gst_tbqueue_buffer_encode (buffer, size, list, rec);
    tbq_writer_commit (tbq->writer);
    TBQ_ADD (tbq->counters.copied, 1);
    /* Back to upstream (its pool) while still hot. */
    gst_buffer_unref (buffer);
  } else {
    GstTbqRefRecord ref = { buffer, list, (guint32) MIN (size, G_MAXUINT32) };

    st = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_REF, sizeof ref, &rec, TRUE);
    if (G_UNLIKELY (st != TBQ_OK))
      return st;
    memcpy (rec, &ref, sizeof ref);
    tbq_writer_commit (tbq->writer);
    TBQ_ADD (tbq->counters.referenced, 1);
  }
  return TBQ_OK;
}

static inline gboolean
sink_decide_copy (GstTbQueue * tbq, GstBuffer * buffer, gsize size)
{
  GstTbQueueTransfer transfer = TBQ_LOAD (tbq->transfer);
  gboolean copy;

  if (transfer == GST_TBQUEUE_TRANSFER_REFERENCE)
    return FALSE;
  copy = gst_tbqueue_buffer_copyable (tbq, buffer, size, transfer);
  if (G_UNLIKELY (!copy && transfer == GST_TBQUEUE_TRANSFER_COPY))
    TBQ_ADD (tbq->counters.copy_fallbacks, 1);
  return copy;
}

static GstFlowReturn
sink_enqueue_buffer (GstTbQueue * tbq, GstBuffer * buffer)
{
  gsize size = gst_buffer_get_size (buffer);
  gboolean copy = sink_decide_copy (tbq, buffer, size);
  GstClockTime old_position = tbq->sink_segment.position;
  gboolean old_tail = TBQ_LOAD (tbq->tail_is_buffer);
  TbqStatus st;

  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received buffer %p of size %"
      G_GSIZE_FORMAT ", time %" GST_TIME_FORMAT ", %s", buffer, size,
      GST_TIME_ARGS (GST_BUFFER_DTS_OR_PTS (buffer)),
      copy ? "copy" : "reference");

  /* Account before publishing (see the file comment). */
  TBQ_ADD (tbq->in_buffers, 1);
  TBQ_ADD (tbq->in_bytes, size);
  TBQ_ADD (tbq->in_items, 1);
  /* Stored only on change: the src task reads this line. */
  if (G_UNLIKELY (!old_tail))
    TBQ_STORE (tbq->tail_is_buffer, TRUE);
  apply_buffer (tbq, buffer, TRUE);

  st = sink_write_buffer (tbq, buffer, size, 0, copy);
  if (G_LIKELY (st == TBQ_OK))
    return GST_FLOW_OK;

  /* Not queued: undo the accounting. */
  TBQ_ADD (tbq->in_buffers, -1);
  TBQ_ADD (tbq->in_bytes, -(guint64) size);
  TBQ_ADD (tbq->in_items, -1);
  if (!old_tail)
    TBQ_STORE (tbq->tail_is_buffer, FALSE);
  tbq->sink_segment.position = old_position;
  update_time (tbq, TRUE);
  gst_buffer_unref (buffer);
  if (st == TBQ_DROPPED) {
    /* leaky: the source pool stayed full. */
    TBQ_ADD (tbq->counters.dropped_upstream, 1);
    tbq->tail_needs_discont = TRUE;
    return GST_FLOW_OK;
  }
  return sink_write_failed (tbq, st);
}

GstFlowReturn
gst_tbqueue_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  GstFlowReturn ret;

  if (G_UNLIKELY ((ret = sink_check (tbq)) != GST_FLOW_OK))
    goto out_unref;
  if (G_UNLIKELY (sink_is_filled (tbq))) {
    ret = sink_make_room (tbq);
    if (ret == SINK_LEAK)
      goto out_leak;
    if (ret != GST_FLOW_OK)
      goto out_unref;
  }
  if (G_UNLIKELY (tbq->tail_needs_discont)) {
    buffer = gst_buffer_make_writable (buffer);
    GST_BUFFER_FLAG_SET (buffer, GST_BUFFER_FLAG_DISCONT);
    tbq->tail_needs_discont = FALSE;
  }
  return sink_enqueue_buffer (tbq, buffer);

out_leak:
  TBQ_ADD (tbq->counters.dropped_upstream, 1);
  gst_buffer_unref (buffer);
  return GST_FLOW_OK;
out_unref:
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "refusing buffer: %s",
      gst_flow_get_name (ret));
  gst_buffer_unref (buffer);
  return ret;
}

static gboolean
list_position (GstBuffer ** buffer, guint idx, gpointer user_data)
{
  GstClockTime *timestamp = user_data;
  GstClockTime btime = GST_BUFFER_DTS_OR_PTS (*buffer);

  if (GST_CLOCK_TIME_IS_VALID (btime))
    *timestamp = btime;
  if (GST_BUFFER_DURATION_IS_VALID (*buffer))
    *timestamp += GST_BUFFER_DURATION (*buffer);
  return TRUE;
}

GstFlowReturn
gst_tbqueue_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  GstFlowReturn ret;
  TbqSession s;
  guint i, n;
  gsize total;
  GstClockTime position;

  if ((ret = sink_check (tbq)) != GST_FLOW_OK)
    goto out_unref;
  if (sink_is_filled (tbq)) {
    ret = sink_make_room (tbq);
    if (ret == SINK_LEAK) {
      atomic_fetch_add_explicit (&tbq->counters.dropped_upstream,
          gst_buffer_list_length (list), memory_order_relaxed);
      gst_buffer_list_unref (list);
      return GST_FLOW_OK;
    }
    if (ret != GST_FLOW_OK)
      goto out_unref;
  }
  n = gst_buffer_list_length (list);
  if (n == 0) {
    gst_buffer_list_unref (list);
    return GST_FLOW_OK;
  }
  if (tbq->tail_needs_discont) {
    GstBuffer *first;

    list = gst_buffer_list_make_writable (list);
    first = gst_buffer_list_get_writable (list, 0);
    GST_BUFFER_FLAG_SET (first, GST_BUFFER_FLAG_DISCONT);
    tbq->tail_needs_discont = FALSE;
  }
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received buffer list %p with %u buffers",
      list, n);

  total = gst_buffer_list_calculate_size (list);
  TBQ_ADD (tbq->in_buffers, n);
  TBQ_ADD (tbq->in_bytes, total);
  TBQ_ADD (tbq->in_items, n);
  TBQ_STORE (tbq->tail_is_buffer, TRUE);
  position = tbq->sink_segment.position;
  gst_buffer_list_foreach (list, list_position, &position);
  tbq->sink_segment.position = position;
  update_time (tbq, TRUE);

  /* One writer session for the whole list: published once at its end.  A
   * full pool waits here whatever the leaky mode: a list is never cut. */
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK, -1);
  tbq_session_begin (tbq->writer, &s);
  for (i = 0; i < n; i++) {
    GstBuffer *buffer = gst_buffer_list_get (list, i);
    gsize size = gst_buffer_get_size (buffer);
    gboolean copy = sink_decide_copy (tbq, buffer, size);
    guint32 flags = (i == 0 ? GST_TBQ_LIST_FIRST : 0)
        | (i == n - 1 ? GST_TBQ_LIST_LAST : 0);
    guint32 rsize = copy ? (guint32) (sizeof (GstTbqBufferHeader) + size)
        : (guint32) sizeof (GstTbqRefRecord);
    void *rec;

    while ((rec = tbq_session_reserve (&s, copy ? GST_TBQ_RECORD_BUFFER_COPY :
                GST_TBQ_RECORD_BUFFER_REF, rsize)) == NULL) {
      TbqStatus st = tbq_session_next_block (&s);

      if (st != TBQ_OK) {
        tbq_session_end (&s);
        tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
        gst_buffer_list_unref (list);
        /* The records written so far go with the flush that follows. */
        return sink_write_failed (tbq, st);
      }
    }
    if (copy) {
      gst_tbqueue_buffer_encode (buffer, size, flags, rec);
      TBQ_ADD (tbq->counters.copied, 1);
    } else {
      GstTbqRefRecord ref = { gst_buffer_ref (buffer), flags,
        (guint32) MIN (size, G_MAXUINT32)
      };

      memcpy (rec, &ref, sizeof ref);
      TBQ_ADD (tbq->counters.referenced, 1);
    }
  }
  tbq_session_end (&s);
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
  gst_buffer_list_unref (list);
  return GST_FLOW_OK;

out_unref:
  gst_buffer_list_unref (list);
  return ret;
}

/* Write an event or query record (never leaked, waits for space). */
static TbqStatus
sink_write_ref (GstTbQueue * tbq, guint16 type, gpointer object, guint32 size)
{
  GstTbqRefRecord ref = { object, 0, size };
  void *rec;
  TbqStatus st = sink_reserve (tbq, type, sizeof ref, &rec, FALSE);

  if (st != TBQ_OK)
    return st;
  memcpy (rec, &ref, sizeof ref);
  tbq_writer_commit (tbq->writer);
  /* Publish now whatever the batching: an event ends a burst. */
  tbq_writer_flush (tbq->writer);
  return TBQ_OK;
}

/* flush-on-eos: drop everything queued so far, from the upstream thread. */
static void
locked_flush_from_upstream (GstTbQueue * tbq)
{
  for (;;) {
    locked_drain_visible (tbq);
    if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
      break;
    if (tbq_writer_sync (tbq->writer, SYNC_TIMEOUT_NS) != TBQ_OK)
      break;
  }
  TBQ_STORE (tbq->min_buffers, tbq->orig_min_buffers);
  TBQ_STORE (tbq->min_bytes, tbq->orig_min_bytes);
  TBQ_STORE (tbq->min_time, tbq->orig_min_time);
  tbq->head_needs_discont = tbq->tail_needs_discont = FALSE;
}

static GstFlowReturn
sink_enqueue_event (GstTbQueue * tbq, GstEvent * event)
{
  GstEventType type = GST_EVENT_TYPE (event);
  GstFlowReturn flow;
  TbqStatus st;

  QLOCK (tbq);
  /* STREAM_START and SEGMENT reset the EOS status of a pad. */
  if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_EOS
      && (type == GST_EVENT_STREAM_START || type == GST_EVENT_SEGMENT))
    locked_set_flow (tbq, GST_FLOW_OK);

  flow = GST_TBQUEUE_FLOW (tbq);
  if (flow != GST_FLOW_OK) {
    /* Sticky events are still queued; errors show up with the data. */
    if (!GST_EVENT_IS_STICKY (event)) {
      QUNLOCK (tbq);
      goto out_flow_error;
    } else if (type == GST_EVENT_EOS) {
      QUNLOCK (tbq);
      if (flow == GST_FLOW_NOT_LINKED || flow < GST_FLOW_EOS)
        GST_ELEMENT_FLOW_ERROR (tbq, flow);
      goto out_flow_error;
    }
  }

  if (TBQ_LOAD (tbq->eos)) {
    switch (type) {
      case GST_EVENT_STREAM_START:
      case GST_EVENT_SEGMENT:
        TBQ_STORE (tbq->eos, FALSE);
        TBQ_STORE (tbq->unexpected, FALSE);
        if (GST_PAD_MODE (tbq->srcpad) == GST_PAD_MODE_PUSH) {
          locked_set_flow (tbq, GST_FLOW_OK);
          gst_pad_start_task (tbq->srcpad, (GstTaskFunction) gst_tbqueue_loop,
              tbq->srcpad, NULL);
        }
        break;
      default:
        QUNLOCK (tbq);
        GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "refusing event, we are EOS");
        gst_event_unref (event);
        return GST_FLOW_EOS;
    }
  }

  switch (type) {
    case GST_EVENT_EOS:
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "got EOS from upstream");
      if (TBQ_LOAD (tbq->flush_on_eos)) {
        locked_flush_from_upstream (tbq);
      } else {
        /* Let the src side drain everything. */
        TBQ_STORE (tbq->min_buffers, 0);
        TBQ_STORE (tbq->min_bytes, 0);
        TBQ_STORE (tbq->min_time, 0);
      }
      TBQ_STORE (tbq->eos, TRUE);
      break;
    case GST_EVENT_SEGMENT:
      apply_segment (tbq, event, TRUE);
      /* Running times may restart: look at the src side again. */
      tbq->refresh_countdown = 1;
      /* Nothing queued: the src side starts from this segment too. */
      if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items)) {
        apply_segment (tbq, event, FALSE);
        tbq->newseg_applied_to_src = TRUE;
      }
      TBQ_STORE (tbq->unexpected, FALSE);
      break;
    case GST_EVENT_GAP:
      apply_gap (tbq, event, TRUE);
      break;
    default:
      break;
  }
  TBQ_ADD (tbq->in_items, 1);
  TBQ_STORE (tbq->tail_is_buffer, FALSE);
  QUNLOCK (tbq);

  st = sink_write_ref (tbq, GST_TBQ_RECORD_EVENT, event, 0);
  if (st != TBQ_OK) {
    TBQ_ADD (tbq->in_items, -1);
    gst_event_unref (event);
    return sink_write_failed (tbq, st);
  }
  return GST_FLOW_OK;

out_flow_error:
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq,
      "refusing event, we have a downstream flow error: %s",
      gst_flow_get_name (flow));
  gst_event_unref (event);
  return flow;
}

static void
locked_flush (GstTbQueue * tbq, gboolean full);

GstFlowReturn
gst_tbqueue_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  gboolean ret = TRUE;

  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received event '%s'",
      GST_EVENT_TYPE_NAME (event));

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      ret = gst_pad_push_event (tbq->srcpad, event);
      QLOCK (tbq);
      locked_set_flow (tbq, GST_FLOW_FLUSHING);
      QUNLOCK (tbq);
      gst_pad_pause_task (tbq->srcpad);
      gst_tbqueue_copier_pause (tbq);
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "loop and copier stopped");
      /* Only now, with the src task stopped, release a query waiter. */
      QLOCK (tbq);
      tbq->last_query = FALSE;
      QBROADCAST (tbq, query_handled);
      QUNLOCK (tbq);
      break;
    case GST_EVENT_FLUSH_STOP:
      ret = gst_pad_push_event (tbq->srcpad, event);
      /* Make sure nothing else touches the queue, even without FLUSH_START. */
      QLOCK (tbq);
      locked_set_flow (tbq, GST_FLOW_FLUSHING);
      QUNLOCK (tbq);
      gst_pad_pause_task (tbq->srcpad);
      gst_tbqueue_copier_pause (tbq);
      QLOCK (tbq);
      locked_flush (tbq, FALSE);
      TBQ_STORE (tbq->eos, FALSE);
      TBQ_STORE (tbq->unexpected, FALSE);
      locked_set_flow (tbq, GST_FLOW_OK);
      if (gst_pad_is_active (tbq->srcpad))
        gst_pad_start_task (tbq->srcpad, (GstTaskFunction) gst_tbqueue_loop,
            tbq->srcpad, NULL);
      else
        GST_INFO_OBJECT (tbq, "not restarting the src task: pad inactive");
      QUNLOCK (tbq);
      break;
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        return sink_enqueue_event (tbq, event);
      ret = gst_pad_push_event (tbq->srcpad, event);
      break;
  }
  if (!ret) {
    GST_ERROR_OBJECT (tbq, "failed to push event");
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

gboolean
gst_tbqueue_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  gboolean res;
  guint32 seq;
  TbqStatus st;

  if (!GST_QUERY_IS_SERIALIZED (query))
    return gst_pad_query_default (pad, parent, query);

  /* Serialized: it travels with the data and we wait for its answer. */
  QLOCK (tbq);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto out_flushing;
  seq = ++tbq->query_seq;
  TBQ_ADD (tbq->in_items, 1);
  TBQ_STORE (tbq->tail_is_buffer, FALSE);
  QUNLOCK (tbq);

  GST_LOG_OBJECT (tbq, "queuing query %p (%s)", query,
      GST_QUERY_TYPE_NAME (query));
  st = sink_write_ref (tbq, GST_TBQ_RECORD_QUERY, query, seq);
  QLOCK (tbq);
  if (st != TBQ_OK) {
    TBQ_ADD (tbq->in_items, -1);
    goto out_flushing;
  }
  while (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK
      && tbq->last_handled_query != query)
    QWAIT (tbq, query_handled);
  tbq->last_handled_query = NULL;
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK) {
    /* The record may still be queued: it must never be answered. */
    tbq->abandoned_query_seq = seq;
    goto out_flushing;
  }
  res = tbq->last_query;
  QUNLOCK (tbq);
  return res;

out_flushing:
  GST_DEBUG_OBJECT (tbq, "we are flushing");
  QUNLOCK (tbq);
  return FALSE;
}

/* ---- src side ---- */

static gboolean
locked_is_empty (GstTbQueue * tbq)
{
  TbqRecord rec;
  guint min_buffers, min_bytes;
  guint64 min_time;

  if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)
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

/* Sleep until the copier publishes (or a flush).  FALSE: flow not OK. */
static gboolean
locked_wait_add (GstTbQueue * tbq)
{
  guint32 key = tbq_reader_prepare_wait (tbq->reader);

  if (!locked_is_empty (tbq))
    return TRUE;
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "waiting for data");
  QUNLOCK (tbq);
  tbq_reader_sleep (tbq->reader, key, -1);
  QLOCK (tbq);
  return GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK;
}

static gboolean
mark_discont (GstBuffer ** buffer, guint i, gpointer user_data)
{
  *buffer = gst_buffer_make_writable (*buffer);
  GST_BUFFER_FLAG_SET (*buffer, GST_BUFFER_FLAG_DISCONT);
  return FALSE;
}

/* Dequeue one item and push it; qlock held, released around the push. */
static GstFlowReturn
locked_push_one (GstTbQueue * tbq)
{
  GstFlowReturn result = GST_FLOW_OK;
  GstMiniObject *data;
  gboolean skipped;

  data = locked_dequeue (tbq, DEQUEUE_WAIT_SRC, &skipped);
  if (data == NULL)
    return GST_TBQUEUE_FLOW (tbq);

next:
  if (GST_IS_BUFFER (data) || GST_IS_BUFFER_LIST (data)) {
    if (tbq->head_needs_discont) {
      if (GST_IS_BUFFER (data)) {
        GstBuffer *buffer = gst_buffer_make_writable (GST_BUFFER_CAST (data));

        GST_BUFFER_FLAG_SET (buffer, GST_BUFFER_FLAG_DISCONT);
        data = GST_MINI_OBJECT_CAST (buffer);
      } else {
        GstBufferList *bl =
            gst_buffer_list_make_writable (GST_BUFFER_LIST_CAST (data));

        gst_buffer_list_foreach (bl, mark_discont, NULL);
        data = GST_MINI_OBJECT_CAST (bl);
      }
      tbq->head_needs_discont = FALSE;
    }
    QUNLOCK (tbq);
    if (GST_IS_BUFFER (data))
      result = gst_pad_push (tbq->srcpad, GST_BUFFER_CAST (data));
    else
      result = gst_pad_push_list (tbq->srcpad, GST_BUFFER_LIST_CAST (data));
    QLOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return GST_TBQUEUE_FLOW (tbq);

    if (result == GST_FLOW_EOS) {
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "got EOS from downstream");
      /* Drop items until one we can push again (EOS, SEGMENT, STREAM_START);
       * with none, refuse more data with EOS until a SEGMENT. */
      while ((data = locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped))
          || skipped) {
        if (data == NULL)
          continue;
        if (GST_IS_EVENT (data)) {
          GstEventType type = GST_EVENT_TYPE (data);

          if (type == GST_EVENT_EOS || type == GST_EVENT_SEGMENT
              || type == GST_EVENT_STREAM_START) {
            GST_CAT_LOG_OBJECT (DATAFLOW, tbq,
                "pushing pushable event %s after EOS",
                GST_EVENT_TYPE_NAME (data));
            goto next;
          }
        }
        GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "dropping %" GST_PTR_FORMAT
            " after EOS", data);
        if (GST_IS_QUERY (data))
          locked_drop_item (tbq, data, FALSE);
        else
          gst_mini_object_unref (data);
      }
      TBQ_STORE (tbq->unexpected, TRUE);
      result = GST_FLOW_OK;
    }
  } else if (GST_IS_EVENT (data)) {
    GstEvent *event = GST_EVENT_CAST (data);
    GstEventType type = GST_EVENT_TYPE (event);

    QUNLOCK (tbq);
    gst_pad_push_event (tbq->srcpad, event);
    QLOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return GST_TBQUEUE_FLOW (tbq);
    if (type == GST_EVENT_EOS) {
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "pushed EOS event %p, return EOS",
          event);
      result = GST_FLOW_EOS;
    }
  } else if (GST_IS_QUERY (data)) {
    GstQuery *query = GST_QUERY_CAST (data);
    gboolean ret;

    QUNLOCK (tbq);
    ret = gst_pad_peer_query (tbq->srcpad, query);
    QLOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK) {
      tbq->last_query = FALSE;
      QBROADCAST (tbq, query_handled);
      return GST_TBQUEUE_FLOW (tbq);
    }
    tbq->last_query = ret;
    tbq->last_handled_query = query;
    QBROADCAST (tbq, query_handled);
    GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "did query %p, return %d", query, ret);
  }
  return result;
}

static void
gst_tbqueue_loop (GstPad * pad)
{
  GstTbQueue *tbq = (GstTbQueue *) GST_PAD_PARENT (pad);
  GstFlowReturn ret;
  gboolean eos;

  QLOCK (tbq);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto out_flushing;

  while (locked_is_empty (tbq)) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is empty");
    atomic_fetch_add_explicit (&tbq->counters.underruns, 1,
        memory_order_relaxed);
    if (!TBQ_LOAD (tbq->silent)) {
      QUNLOCK (tbq);
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_UNDERRUN], 0);
      QLOCK (tbq);
      if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
        goto out_flushing;
    }
    /* Re-check: the signal may have changed the thresholds. */
    while (locked_is_empty (tbq)) {
      if (!locked_wait_add (tbq))
        goto out_flushing;
    }
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is not empty");
    if (!TBQ_LOAD (tbq->silent)) {
      QUNLOCK (tbq);
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_RUNNING], 0);
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_PUSHING], 0);
      QLOCK (tbq);
      if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
        goto out_flushing;
    }
  }

  ret = locked_push_one (tbq);
  if (ret != GST_FLOW_OK) {
    if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
      locked_set_flow (tbq, ret);
    goto out_flushing;
  }
  QUNLOCK (tbq);
  return;

out_flushing:
  eos = TBQ_LOAD (tbq->eos);
  ret = GST_TBQUEUE_FLOW (tbq);
  gst_pad_pause_task (tbq->srcpad);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "pause task, reason: %s",
      gst_flow_get_name (ret));
  if (ret == GST_FLOW_FLUSHING) {
    locked_drain_visible (tbq);
  } else {
    QBROADCAST (tbq, item_del);
    tbq->last_query = FALSE;
    QBROADCAST (tbq, query_handled);
  }
  QUNLOCK (tbq);
  /* Tell the application we gave up, unless upstream will (EOS). */
  if (eos && (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)) {
    GST_ELEMENT_FLOW_ERROR (tbq, ret);
    gst_pad_push_event (tbq->srcpad, gst_event_new_eos ());
  }
}

gboolean
gst_tbqueue_src_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "got event %s",
      GST_EVENT_TYPE_NAME (event));
  if (GST_EVENT_TYPE (event) == GST_EVENT_RECONFIGURE) {
    QLOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_NOT_LINKED) {
      /* Downstream may be linked again: try pushing. */
      locked_set_flow (tbq, GST_FLOW_OK);
      gst_pad_start_task (pad, (GstTaskFunction) gst_tbqueue_loop, pad, NULL);
    }
    QUNLOCK (tbq);
    return gst_pad_push_event (tbq->sinkpad, event);
  }
  return gst_pad_event_default (pad, parent, event);
}

gboolean
gst_tbqueue_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  gboolean res;

  if (GST_QUERY_TYPE (query) == GST_QUERY_SCHEDULING) {
    gst_query_add_scheduling_mode (query, GST_PAD_MODE_PUSH);
    return TRUE;
  }
  res = gst_pad_query_default (pad, parent, query);
  if (!res)
    return FALSE;

  /* Adjust the peer's answer for what we hold. */
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_POSITION:{
      gint64 pos;
      GstFormat format;

      gst_query_parse_position (query, &format, &pos);
      switch (format) {
        case GST_FORMAT_BYTES:
          pos -= (gint64) gst_tbqueue_level_bytes (tbq);
          break;
        case GST_FORMAT_TIME:
          pos -= (gint64) gst_tbqueue_level_time (tbq);
          break;
        default:
          GST_DEBUG_OBJECT (tbq, "can't adjust a %s position",
              gst_format_get_name (format));
          return TRUE;
      }
      gst_query_set_position (query, format, MAX (pos, 0));
      break;
    }
    case GST_QUERY_LATENCY:{
      gboolean live;
      GstClockTime min, max;
      guint64 max_time = TBQ_LOAD (tbq->max_time);
      guint64 min_time = TBQ_LOAD (tbq->min_time);
      gint leaky = TBQ_LOAD (tbq->leaky);

      gst_query_parse_latency (query, &live, &min, &max);
      /* We can delay by up to our time limit (unknown without one). */
      if (max_time > 0 && max != GST_CLOCK_TIME_NONE
          && leaky == GST_TBQUEUE_NO_LEAK)
        max += max_time;
      else if (max_time > 0 && leaky != GST_TBQUEUE_NO_LEAK)
        max = MAX (max_time, max);
      else
        max = GST_CLOCK_TIME_NONE;
      if (min_time > 0)
        min += min_time;
      gst_query_set_latency (query, live, min, max);
      break;
    }
    default:
      break;
  }
  return TRUE;
}

/* ---- flushing and activation ---- */

typedef struct
{
  GstTbQueue *tbq;
  gboolean full;
} ReleaseCtx;

static void
release_record (uint16_t type, const void *data, uint32_t size,
    void *user_data)
{
  ReleaseCtx *ctx = user_data;
  GstTbqRefRecord ref;

  switch (type) {
    case GST_TBQ_RECORD_BUFFER_REF:
      memcpy (&ref, data, sizeof ref);
      gst_buffer_unref (GST_BUFFER_CAST (ref.object));
      break;
    case GST_TBQ_RECORD_EVENT:{
      GstEvent *event;

      memcpy (&ref, data, sizeof ref);
      event = GST_EVENT_CAST (ref.object);
      if (!ctx->full && GST_EVENT_IS_STICKY (event)
          && GST_EVENT_TYPE (event) != GST_EVENT_SEGMENT
          && GST_EVENT_TYPE (event) != GST_EVENT_EOS)
        gst_pad_store_sticky_event (ctx->tbq->srcpad, event);
      gst_event_unref (event);
      break;
    }
    default:
      /* Copy records own nothing; a query belongs to its waiting sender. */
      break;
  }
}

/* Everything queued goes: the writer, the copy task and the src task must
 * all be idle (sink stream lock held or on it, tasks paused). */
static void
locked_flush (GstTbQueue * tbq, gboolean full)
{
  ReleaseCtx ctx = { tbq, full };

  if (tbq->q != NULL)
    tbq_queue_discard (tbq->q, release_record, &ctx);
  tbq->last_query = FALSE;
  tbq->abandoned_query_seq = tbq->query_seq;
  QBROADCAST (tbq, query_handled);
  gst_tbqueue_reset_levels (tbq);
  TBQ_STORE (tbq->min_buffers, tbq->orig_min_buffers);
  TBQ_STORE (tbq->min_bytes, tbq->orig_min_bytes);
  TBQ_STORE (tbq->min_time, tbq->orig_min_time);
  QBROADCAST (tbq, item_del);
}

gboolean
gst_tbqueue_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    if (tbq->q == NULL)
      return FALSE;
    QLOCK (tbq);
    TBQ_STORE (tbq->eos, FALSE);
    TBQ_STORE (tbq->unexpected, FALSE);
    locked_set_flow (tbq, GST_FLOW_OK);
    QUNLOCK (tbq);
  } else {
    /* Unblock the chain function, wait for it to leave, then flush. */
    QLOCK (tbq);
    locked_set_flow (tbq, GST_FLOW_FLUSHING);
    QUNLOCK (tbq);
    GST_PAD_STREAM_LOCK (pad);
    gst_pad_pause_task (tbq->srcpad);
    gst_tbqueue_copier_pause (tbq);
    QLOCK (tbq);
    locked_flush (tbq, TRUE);
    QUNLOCK (tbq);
    GST_PAD_STREAM_UNLOCK (pad);
  }
  return TRUE;
}

gboolean
gst_tbqueue_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  gboolean result;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    if (tbq->q == NULL)
      return FALSE;
    QLOCK (tbq);
    TBQ_STORE (tbq->eos, FALSE);
    TBQ_STORE (tbq->unexpected, FALSE);
    locked_set_flow (tbq, GST_FLOW_OK);
    result = gst_pad_start_task (pad, (GstTaskFunction) gst_tbqueue_loop, pad,
        NULL);
    QUNLOCK (tbq);
  } else {
    QLOCK (tbq);
    locked_set_flow (tbq, GST_FLOW_FLUSHING);
    QUNLOCK (tbq);
    result = gst_pad_stop_task (pad);
    gst_tbqueue_copier_stop (tbq);
    /* The writer may still run: only what the reader sees goes now, the
     * rest with the sink pad's deactivation. */
    QLOCK (tbq);
    if (tbq->reader != NULL)
      locked_drain_visible (tbq);
    QUNLOCK (tbq);
  }
  return result;
}

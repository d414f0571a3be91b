/* tbqueue sink side: the chain functions (the libtbq writer), sink events
 * and queries, limits and leaking, sink pad activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 * Threads and locks: see gsttbqueue-items.c.
 */
#include "gsttbqueue-private.h"

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
      gst_tbqueue_locked_leak_oldest_block (tbq);
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
        gst_tbqueue_locked_leak (tbq, DEQUEUE_WAIT_WRITER);
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
    guint32 info = gst_tbqueue_buffer_info (buffer, list);

    st = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_COPY,
        (guint32) (gst_tbq_buffer_header_size (info) + size), &rec, TRUE);
    if (G_UNLIKELY (st != TBQ_OK))
      return st;
    gst_tbqueue_buffer_encode (buffer, size, info, rec);
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
    guint32 info = copy ? gst_tbqueue_buffer_info (buffer, flags) : 0;
    guint32 rsize = copy ? (guint32) (gst_tbq_buffer_header_size (info)
        + size) : (guint32) sizeof (GstTbqRefRecord);
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
      gst_tbqueue_buffer_encode (buffer, size, info, rec);
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
    gst_tbqueue_locked_drain_visible (tbq);
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
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);

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
          gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
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
      gst_tbqueue_apply_segment (tbq, event, TRUE);
      /* Running times may restart: look at the src side again. */
      tbq->refresh_countdown = 1;
      /* Nothing queued: the src side starts from this segment too. */
      if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items)) {
        gst_tbqueue_apply_segment (tbq, event, FALSE);
        tbq->newseg_applied_to_src = TRUE;
      }
      TBQ_STORE (tbq->unexpected, FALSE);
      break;
    case GST_EVENT_GAP:
      gst_tbqueue_apply_gap (tbq, event, TRUE);
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

void gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full);

/* FLUSHING (every wait returns), then wait until neither the src task nor
 * the copy task runs.  No qlock held. */
static void
stop_streaming (GstTbQueue * tbq)
{
  QLOCK (tbq);
  gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
  QUNLOCK (tbq);
  gst_pad_pause_task (tbq->srcpad);
  gst_tbqueue_copier_pause (tbq);
}

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
      stop_streaming (tbq);
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
      stop_streaming (tbq);
      QLOCK (tbq);
      gst_tbqueue_locked_flush (tbq, FALSE);
      TBQ_STORE (tbq->eos, FALSE);
      TBQ_STORE (tbq->unexpected, FALSE);
      gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
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
  /* Also while the src task has it downstream: a flush makes the flow not
   * OK before the src task stops, and a condition may wake spuriously. */
  while ((GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK
          && tbq->last_handled_query != query)
      || tbq->query_in_use == query)
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
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
    QUNLOCK (tbq);
  } else {
    /* Unblock the chain function, wait for it to leave, then flush. */
    stop_streaming (tbq);
    GST_PAD_STREAM_LOCK (pad);
    QLOCK (tbq);
    gst_tbqueue_locked_flush (tbq, TRUE);
    QUNLOCK (tbq);
    GST_PAD_STREAM_UNLOCK (pad);
  }
  return TRUE;
}

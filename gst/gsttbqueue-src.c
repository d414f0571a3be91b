/* tbqueue src side: the src pad task (the libtbq reader), src events and
 * queries, src pad activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 * Threads and locks: see gsttbqueue-items.c.
 */
#include "gsttbqueue-private.h"

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
/* After downstream returned EOS, items queued before it are dropped until
 * one we can push again (EOS, SEGMENT, STREAM_START).  Returns the item to
 * push, or NULL if it was dropped.  Some of those items may still be on
 * their way through the copy task when EOS comes back: every item counted in
 * before that moment (eos_drain_until) is treated the same when it shows up. */
static GstMiniObject *
locked_after_eos (GstTbQueue * tbq, GstMiniObject * data)
{
  if (GST_IS_EVENT (data)) {
    GstEventType type = GST_EVENT_TYPE (data);

    if (type == GST_EVENT_EOS || type == GST_EVENT_SEGMENT
        || type == GST_EVENT_STREAM_START) {
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "pushing pushable event %s after EOS",
          GST_EVENT_TYPE_NAME (data));
      tbq->eos_drain_until = 0;
      return data;
    }
  }
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "dropping %" GST_PTR_FORMAT
      " after EOS", data);
  if (GST_IS_QUERY (data))
    gst_tbqueue_locked_drop_item (tbq, data, FALSE);
  else
    gst_mini_object_unref (data);
  return NULL;
}

/* Dequeue one item and push it; qlock held, released around the push. */
static GstFlowReturn
locked_push_one (GstTbQueue * tbq)
{
  GstFlowReturn result = GST_FLOW_OK;
  GstMiniObject *data;
  gboolean skipped;

  data = gst_tbqueue_locked_dequeue (tbq, DEQUEUE_WAIT_SRC, &skipped);
  if (data == NULL)
    return GST_TBQUEUE_FLOW (tbq);
  if (G_UNLIKELY (tbq->eos_drain_until != 0)) {
    if (TBQ_LOAD (tbq->out_items) <= tbq->eos_drain_until) {
      data = locked_after_eos (tbq, data);
      if (data == NULL)
        return GST_FLOW_OK;
    } else {
      tbq->eos_drain_until = 0;
    }
  }

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
      /* Everything counted in so far is older than this EOS. */
      tbq->eos_drain_until = TBQ_LOAD (tbq->in_items);
      while ((data = gst_tbqueue_locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped))
          || skipped) {
        if (data != NULL && (data = locked_after_eos (tbq, data)) != NULL)
          goto next;
      }
      /* Refuse more data with EOS until a SEGMENT. */
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

    /* The sender must not take the query back while downstream has it,
     * whatever wakes it up (see gst_tbqueue_sink_query). */
    tbq->query_in_use = query;
    QUNLOCK (tbq);
    ret = gst_pad_peer_query (tbq->srcpad, query);
    QLOCK (tbq);
    tbq->query_in_use = NULL;
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

void
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
      gst_tbqueue_locked_set_flow (tbq, ret);
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
    gst_tbqueue_locked_drain_visible (tbq);
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
      gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
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
    gst_tbqueue_copier_activate (tbq);
    QLOCK (tbq);
    TBQ_STORE (tbq->eos, FALSE);
    TBQ_STORE (tbq->unexpected, FALSE);
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
    result = gst_pad_start_task (pad, (GstTaskFunction) gst_tbqueue_loop, pad,
        NULL);
    QUNLOCK (tbq);
  } else {
    QLOCK (tbq);
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
    QUNLOCK (tbq);
    result = gst_pad_stop_task (pad);
    gst_tbqueue_copier_stop (tbq);
    /* The writer may still run: only what the reader sees goes now, the
     * rest with the sink pad's deactivation. */
    QLOCK (tbq);
    if (tbq->reader != NULL)
      gst_tbqueue_locked_drain_visible (tbq);
    QUNLOCK (tbq);
  }
  return result;
}

/* tbqueue leaks: what the element does when it is full.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queue is full when a max-size-* limit is reached (the levels:
 * gsttbqueue-levels.c) or when the writer finds no free source block, the
 * sink pool being at sink-max-bytes.  Then, as queue: the overrun signal,
 * and leaky=upstream drops the incoming buffer, leaky=downstream drops the
 * oldest queued ones, leaky=no makes the upstream thread wait for room.
 * Threads and locks: gsttbqueue-private.h.
 */
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"

/* ---- leaking on the downstream end ---- */

static guint
item_buffers (GstMiniObject * item)
{
  if (GST_IS_BUFFER (item))
    return 1;
  if (GST_IS_BUFFER_LIST (item))
    return gst_buffer_list_length (GST_BUFFER_LIST_CAST (item));
  return 0;
}

/* Drop a dequeued item as a leak: counted, and the next buffer pushed is
 * marked DISCONT.  qlock, the reader lent. */
static void
locked_leak_item (GstTbQueue * tbq, GstMiniObject * item)
{
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
      "queue is full, leaking item %p on downstream end", item);
  TBQ_ADD (tbq->counters.dropped_downstream, item_buffers (item));
  gst_tbqueue_locked_drop_item (tbq, item, FALSE);
  tbq->head_needs_discont = TRUE;
}

/* Leak the oldest items until the queue is no longer full.  What is still
 * in the source layer is waited for (`wait`: the upstream thread or
 * another one), with qlock released; what is not even published
 * (publish-batch) stays.  qlock held. */
void
gst_tbqueue_locked_leak_downstream (GstTbQueue * tbq, DequeueWait wait)
{
  TbqRecord rec;

  if (tbq->reader == NULL)
    return;
  gst_tbqueue_locked_borrow_reader (tbq);
  while (gst_tbqueue_is_filled (tbq)) {
    gboolean skipped;
    GstMiniObject *item = gst_tbqueue_locked_dequeue (tbq, wait, &skipped);

    if (item != NULL) {
      locked_leak_item (tbq, item);
    } else if (!skipped && (!gst_tbqueue_locked_wait_copied (tbq, wait)
            || tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)) {
      break;
    }
  }
  STATUS (tbq, tbq->sinkpad, "after leaking");
  gst_tbqueue_locked_return_reader (tbq);
}

/* Leak the whole oldest sink block, so that the copy task can move on (the
 * sink pool is at its limit).  Upstream thread, qlock held. */
static void
locked_leak_oldest_block (GstTbQueue * tbq)
{
  TbqRecord rec;
  TbqBlock *first;

  gst_tbqueue_locked_borrow_reader (tbq);
  if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)
    goto done;
  first = rec.block;
  do {
    gboolean skipped;
    GstMiniObject *item =
        gst_tbqueue_locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped);

    if (item != NULL)
      locked_leak_item (tbq, item);
  } while (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK && rec.block == first);
done:
  gst_tbqueue_locked_return_reader (tbq);
}

/* ---- the upstream thread, full ---- */

static void
emit (GstTbQueue * tbq, guint signal)
{
  if (!TBQ_LOAD (tbq->silent))
    g_signal_emit (tbq, gst_tbqueue_signals[signal], 0);
}

/* leaky=no: wait until the level dropped below every limit. */
static GstFlowReturn
wait_for_room (GstTbQueue * tbq)
{
  GstFlowReturn ret;

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is full, waiting for free space");
  TBQ_ADD (tbq->counters.level_waits, 1);
  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  while (gst_tbqueue_is_filled (tbq))
    GST_TBQUEUE_WAIT_DEL_CHECK (tbq, out_flushing);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is not full");
  emit (tbq, SIGNAL_RUNNING);
  return GST_FLOW_OK;

out_flushing:
  ret = GST_TBQUEUE_FLOW (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "exit because task paused, reason: %s",
      gst_flow_get_name (ret));
  return ret;
}

/* Upstream thread, at a max-size-* limit: signal, then leak or wait as
 * queue does.  GST_FLOW_OK, GST_FLOW_CUSTOM_SUCCESS (drop the incoming
 * data), or the flow that stopped it. */
GstFlowReturn
gst_tbqueue_make_room (GstTbQueue * tbq)
{
  GstFlowReturn ret;

  while (gst_tbqueue_is_filled (tbq)) {
    TBQ_ADD (tbq->counters.overruns, 1);
    if (!TBQ_LOAD (tbq->silent)) {
      g_signal_emit (tbq, gst_tbqueue_signals[SIGNAL_OVERRUN], 0);
      if ((ret = gst_tbqueue_sink_flow (tbq)) != GST_FLOW_OK)
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
        return GST_FLOW_CUSTOM_SUCCESS;
      case GST_TBQUEUE_LEAK_DOWNSTREAM:
        GST_TBQUEUE_MUTEX_LOCK (tbq);
        gst_tbqueue_locked_leak_downstream (tbq, DEQUEUE_WAIT_WRITER);
        ret = GST_TBQUEUE_FLOW (tbq);
        GST_TBQUEUE_MUTEX_UNLOCK (tbq);
        /* Whatever could not be leaked stays; never spin on it. */
        return ret;
      default:
        return wait_for_room (tbq);
    }
  }
  return GST_FLOW_OK;
}

/* Upstream thread: the writer found no free source block (the copy task is
 * behind, or the sink pool is at sink-max-bytes): an overrun too for a
 * buffer.  Leak or wait as the leaky mode says; a non-buffer always waits.
 * TBQ_OK with the record reserved, TBQ_DROPPED, or why it failed. */
TbqStatus
gst_tbqueue_reserve_when_full (GstTbQueue * tbq, guint16 type, guint32 size,
    void **data, gboolean is_buffer)
{
  gint leaky = is_buffer ? TBQ_LOAD (tbq->leaky) : GST_TBQUEUE_NO_LEAK;
  TbqStatus st;

  if (is_buffer) {
    TBQ_ADD (tbq->counters.overruns, 1);
    emit (tbq, SIGNAL_OVERRUN);
  }
  switch (leaky) {
    case GST_TBQUEUE_LEAK_UPSTREAM:
      return TBQ_DROPPED;
    case GST_TBQUEUE_LEAK_DOWNSTREAM:
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      locked_leak_oldest_block (tbq);
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK,
          SYNC_TIMEOUT_NS);
      st = tbq_writer_reserve (tbq->writer, type, size, data);
      break;
    default:
      GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "source pool full, waiting");
      tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK, -1);
      st = tbq_writer_reserve (tbq->writer, type, size, data);
      if (st == TBQ_OK && is_buffer)
        emit (tbq, SIGNAL_RUNNING);
      break;
  }
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
  return st == TBQ_TIMEOUT ? TBQ_DROPPED : st;
}

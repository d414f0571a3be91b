/* tbqueue leaks: what the element does when it is full, and
 * leaky=downstream from the decision to what it drops.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queue is full when a max-size-* limit is reached (the levels:
 * gsttbqueue-levels.c), and when the sink pool is at sink-max-bytes (or
 * what an allocation failure left of it) while the source pool is full.
 * Then, as queue: the overrun signal, and leaky=upstream drops the
 * incoming buffer, leaky=downstream drops the oldest queued items,
 * leaky=no makes the upstream thread wait for room.
 *
 * A full source pool while the sink pool can take a block is not full:
 * the copy task is only behind.  The upstream thread waits for it (the
 * sink pool has room, so that wait never waits for downstream), without
 * a signal and without dropping anything.
 *
 * Records counted in but still in the source layer are part of the
 * queue: leaky=downstream drops them when they are the oldest, once they
 * are visible (the upstream thread publishes them and waits for the copy
 * task).  When the oldest cannot be reached because the sink pool is full
 * and held downstream, leaky=downstream drops the incoming buffer instead:
 * no leaky mode ever waits for downstream.
 *
 * What leaky=downstream drops is decided here too, as queue's
 * gst_queue_leak_downstream drops it: the oldest item, a buffer list
 * whole (the one the src task is gathering, or the rest of a leaked list
 * as it shows up, whoever takes it), each one counted in
 * dropped-downstream, and the next buffer pushed marked DISCONT.  It takes
 * records through gsttbqueue-dequeue.c's primitives (the oldest record,
 * the list being gathered) and releases them as that file releases any
 * dropped item.  It is started from four places: the upstream thread at a
 * limit or with a full sink pool, a property change that lowers a limit,
 * and the src task while a leak is pending (below).  Threads and locks:
 * gsttbqueue-private.h.
 */
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-levels.h"

static void
emit (GstTbQueue * tbq, guint signal)
{
  if (!TBQ_LOAD (tbq->silent))
    g_signal_emit (tbq, gst_tbqueue_signals[signal], 0);
}

/* Upstream thread, no lock held: the queue is full, and it drops, leaks
 * or waits for room below a limit.  Counted, and buffering is full until
 * data goes out: nothing more comes in meanwhile (gsttbqueue-buffering.c).
 * (Waiting for the sink pool, the upstream thread says whether it stalls
 * itself: not while the spill makes room.) */
static void
note_overrun (GstTbQueue * tbq)
{
  TBQ_ADD (tbq->counters.overruns, 1);
  gst_tbqueue_buffering_overrun (tbq);
}

/* Upstream thread, qlock: before waiting for the copy task, make
 * everything written visible to it (publish-batch), ask it to move the
 * block being filled too, and end a nap of the src task (coalescing). */
static void
locked_publish (GstTbQueue * tbq)
{
  tbq_writer_flush (tbq->writer);
}

/* Upstream thread, full: before a signal (whose handler may take its
 * time) or a wait, publish what publish-batch holds back, so that the src
 * task can take it meanwhile. */
static inline void
publish_held (GstTbQueue * tbq)
{
  if (G_UNLIKELY (tbq->batching))
    tbq_writer_flush (tbq->writer);
}

/* ---- what leaky=downstream drops (qlock) ---- */

/* A dequeued item goes as a leak: counted, and the next buffer pushed is
 * marked DISCONT. */
static void
locked_leak_item (GstTbQueue * tbq, GstMiniObject * item)
{
  guint buffers = 0;

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
      "queue is full, leaking item %p on downstream end", item);
  if (GST_IS_BUFFER (item))
    buffers = 1;
  else if (GST_IS_BUFFER_LIST (item))
    buffers = gst_buffer_list_length (GST_BUFFER_LIST_CAST (item));
  TBQ_ADD (tbq->counters.dropped_downstream, buffers);
  gst_tbqueue_locked_drop_item (tbq, item, FALSE);
  tbq->head_needs_discont = TRUE;
}

/* A record of the rest of a list whose beginning went (leaked, flushed,
 * or never written: a list cut by leaky=upstream) reached the head,
 * counted out: it goes too, whoever took it (a leak, or the src task's
 * dequeue: DEQUEUE_REST). */
void
gst_tbqueue_locked_leak_rest (GstTbQueue * tbq, const GstTbqItem * item)
{
  locked_leak_item (tbq, item->object);
  if (item->list & GST_TBQ_LIST_LAST)
    tbq->leaking_list = FALSE;
}

/* Leak the oldest item, or the next record of a leaked list.  FALSE when
 * nothing is visible. */
static gboolean
locked_leak_one (GstTbQueue * tbq)
{
  GstBufferList *partial;
  GstTbqItem item;

  /* The list the src task is gathering is the oldest item: it goes whole,
   * and its rest as it shows up. */
  if ((partial = gst_tbqueue_locked_remove_partial (tbq)) != NULL) {
    locked_leak_item (tbq, GST_MINI_OBJECT_CAST (partial));
    return TRUE;
  }
  if (!gst_tbqueue_locked_take_item (tbq, &item))
    return FALSE;
  if (item.object == NULL)
    return TRUE;
  if (GST_TBQ_LIST_IS_REST (item.list)) {
    gst_tbqueue_locked_leak_rest (tbq, &item);
    return TRUE;
  }
  /* A list is one item: its rest goes as it shows up. */
  tbq->leaking_list = (item.list & GST_TBQ_LIST_FIRST)
      && !(item.list & GST_TBQ_LIST_LAST);
  locked_leak_item (tbq, item.object);
  return TRUE;
}

/* Whether the next visible record is the rest of a leaked list. */
static gboolean
locked_rest_is_next (GstTbQueue * tbq)
{
  guint32 position;

  return tbq->leaking_list && gst_tbqueue_locked_peek_position (tbq,
      &position) && GST_TBQ_LIST_IS_REST (position);
}

/* As queue's gst_queue_leak_downstream, with what is visible: leak the
 * oldest items while the queue is filled (and the rest of a leaked list).
 * TRUE when it is no longer filled; FALSE when the items to leak are not
 * visible yet. */
static gboolean
locked_leak_visible (GstTbQueue * tbq)
{
  for (;;) {
    if (!gst_tbqueue_is_filled (tbq)) {
      while (locked_rest_is_next (tbq))
        locked_leak_one (tbq);
      return TRUE;
    }
    if (!locked_leak_one (tbq))
      return FALSE;
  }
}

/* Leak the oldest items until the sink pool can take a record of `size`
 * bytes: a block, or an extent for a frame (a sink block or an extent
 * goes back to the pool once the reader has moved past it and nothing
 * downstream holds memory in it).  FALSE when nothing visible is left and
 * it still cannot. */
static gboolean
locked_leak_for_sink (GstTbQueue * tbq, guint32 size)
{
  while (!tbq_queue_sink_can_take_record (tbq->q, size))
    if (!locked_leak_one (tbq))
      return FALSE;
  return TRUE;
}

/* ---- at a max-size-* limit ---- */

/* leaky=no: wait until the level dropped below every limit.  What was
 * written is published first: the src task cannot take what it cannot
 * see.
 *
 * With resume_low (tbqsplit), once below the limit it waits on for the
 * low mark (gst_tbqueue_may_resume), which only the items out that reach
 * it signal: one wake for the first item out and one at the low mark,
 * not one per item.  Behind a consumer that stopped short of the low
 * mark (a stalled branch), it goes on after RESUME_LOW_TOP_UP_NS below
 * the limit, so that the queue still fills up to its limit as queue's
 * does. */
#define RESUME_LOW_TOP_UP_NS (50 * GST_MSECOND)

static GstFlowReturn
wait_for_room (GstTbQueue * tbq)
{
  GstFlowReturn ret;
  gint64 top_up = -1;

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is full, waiting for free space");
  TBQ_ADD (tbq->counters.level_waits, 1);
  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  locked_publish (tbq);
  for (;;) {
    gboolean timeout;

    if (gst_tbqueue_is_filled (tbq)) {
      GST_TBQUEUE_WAIT_DEL_CHECK (tbq, out_flushing);
      continue;
    }
    if (gst_tbqueue_may_resume (tbq))
      break;
    /* Below the limit, above the low mark. */
    if (top_up < 0)
      top_up = tbq_clock_ns () + RESUME_LOW_TOP_UP_NS;
    STATUS (tbq, tbq->sinkpad, "wait for the low mark");
    tbq->waiting_del = tbq->waiting_low = TRUE;
    timeout = tbq_cond_wait_until (&tbq->item_del, &tbq->qlock, top_up);
    tbq->waiting_del = tbq->waiting_low = FALSE;
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      goto out_flushing;
    if (timeout && !gst_tbqueue_is_filled (tbq))
      break;
  }
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

/* qlock, the flow OK: leak the oldest items until the queue is no longer
 * filled, waiting for the copy task (qlock released) while they are on
 * their way.  `publish`: the caller is the upstream thread, which
 * publishes what it wrote.  GST_FLOW_OK when no longer filled;
 * GST_FLOW_CUSTOM_SUCCESS when the oldest items cannot be reached (behind
 * a full sink pool, or not published) or the flow stopped. */
static GstFlowReturn
locked_leak_until_not_filled (GstTbQueue * tbq, gboolean publish)
{
  for (;;) {
    guint32 key = tbq_reader_prepare_wait (tbq->reader);

    if (locked_leak_visible (tbq))
      return GST_FLOW_OK;
    /* Filled, and the oldest items are not visible yet. */
    if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
      return GST_FLOW_CUSTOM_SUCCESS;   /* nothing queued to leak */
    if (publish)
      locked_publish (tbq);
    if (!gst_tbqueue_locked_copier_has_work (tbq)) {
      /* Everything published is visible now; the rest was not published
       * (or is the list being written): out of reach. */
      return locked_leak_visible (tbq) ? GST_FLOW_OK :
          GST_FLOW_CUSTOM_SUCCESS;
    }
    if (!tbq_queue_sink_can_take (tbq->q))
      return GST_FLOW_CUSTOM_SUCCESS;
    TBQ_ADD (tbq->counters.copier_waits, 1);
    /* As queue leaks in one go: whoever takes records meanwhile (the src
     * task) leaks them too, while the queue is filled. */
    TBQ_STORE (tbq->leak_pending, TRUE);
    STATUS (tbq, tbq->sinkpad, "wait for the copy task");
    gst_tbqueue_locked_wait_sink (tbq, key);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return GST_FLOW_CUSTOM_SUCCESS;
  }
}

/* Upstream thread, leaky=downstream, at a limit: leak.  GST_FLOW_OK, or
 * GST_FLOW_CUSTOM_SUCCESS: the oldest are out of reach, the incoming data
 * goes instead; or the flow that stopped it. */
static GstFlowReturn
leak_downstream (GstTbQueue * tbq)
{
  GstFlowReturn ret;

  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  ret = locked_leak_until_not_filled (tbq, TRUE);
  TBQ_STORE (tbq->leak_pending, FALSE);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto out_flushing;
  STATUS (tbq, tbq->sinkpad, "after leaking");
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (ret == GST_FLOW_CUSTOM_SUCCESS) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "oldest items out of reach, "
        "leaking the incoming buffer instead");
    tbq->tail_needs_discont = TRUE;
  }
  return ret;

out_flushing:
  ret = GST_TBQUEUE_FLOW (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return ret;
}

/* Upstream thread: a limit lowered with leaky=downstream left items to
 * leak that were not published yet (gst_tbqueue_locked_limit_changed):
 * queue would have dropped them already, with no signal. */
static GstFlowReturn
leak_pending (GstTbQueue * tbq)
{
  GstFlowReturn ret;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK && TBQ_LOAD (tbq->leak_pending)
      && TBQ_LOAD (tbq->leaky) == GST_TBQUEUE_LEAK_DOWNSTREAM)
    locked_leak_until_not_filled (tbq, TRUE);
  TBQ_STORE (tbq->leak_pending, FALSE);
  ret = GST_TBQUEUE_FLOW (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return ret;
}

/* Upstream thread, at a max-size-* limit: signal, then leak or wait as
 * queue does.  GST_FLOW_OK, GST_FLOW_CUSTOM_SUCCESS (drop the incoming
 * data), or the flow that stopped it. */
GstFlowReturn
gst_tbqueue_make_room (GstTbQueue * tbq)
{
  GstFlowReturn ret;

  publish_held (tbq);
  if (G_UNLIKELY (TBQ_LOAD (tbq->leak_pending))
      && (ret = leak_pending (tbq)) != GST_FLOW_OK)
    return ret;
  while (gst_tbqueue_is_filled (tbq)) {
    note_overrun (tbq);
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
        if ((ret = leak_downstream (tbq)) != GST_FLOW_OK)
          return ret;
        break;
      default:
        if ((ret = wait_for_room (tbq)) != GST_FLOW_OK)
          return ret;
        break;
    }
  }
  return GST_FLOW_OK;
}

/* ---- after a property change, and in the src task ---- */

/* Application thread, qlock: a max-size-* limit changed.  Lowered with
 * leaky=downstream, leak down to it at once, as queue does, waiting for
 * the copy task (qlock released) for what it has still to move.  What
 * the upstream thread has not published yet is left to it or to the src
 * task (leak_pending), as is everything while the flow is not OK. */
void
gst_tbqueue_locked_limit_changed (GstTbQueue * tbq)
{
  gboolean pending = tbq->q != NULL;

  if (TBQ_LOAD (tbq->leaky) != GST_TBQUEUE_LEAK_DOWNSTREAM)
    return;
  if (pending && GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
    pending = locked_leak_until_not_filled (tbq, FALSE) != GST_FLOW_OK;
  TBQ_STORE (tbq->leak_pending, pending);
}

/* Application thread, qlock: the leaky property.  A leak left pending by
 * the former mode is forgotten: the new one decides at the next limit. */
void
gst_tbqueue_locked_set_leaky (GstTbQueue * tbq, GstTbQueueLeaky leaky)
{
  TBQ_STORE (tbq->leaky, leaky);
  TBQ_STORE (tbq->leak_pending, FALSE);
}

/* Src task, qlock: what a lowered limit left to leak, now visible. */
void
gst_tbqueue_locked_leak_pending (GstTbQueue * tbq)
{
  if (TBQ_LOAD (tbq->leaky) != GST_TBQUEUE_LEAK_DOWNSTREAM
      || locked_leak_visible (tbq))
    TBQ_STORE (tbq->leak_pending, FALSE);
}

/* ---- with a full source pool ---- */

/* Upstream thread, qlock: leak or drop a buffer (a record of `size`
 * bytes) that found the sink pool full (an overrun).  GST_FLOW_OK when the
 * sink pool can take it again (leaky=downstream made room),
 * GST_FLOW_CUSTOM_SUCCESS to drop the incoming data. */
static GstFlowReturn
locked_sink_overrun (GstTbQueue * tbq, gint leaky, guint32 size,
    gboolean * signalled)
{
  if (!*signalled) {
    *signalled = TRUE;
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    note_overrun (tbq);
    emit (tbq, SIGNAL_OVERRUN);
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return GST_TBQUEUE_FLOW (tbq);
  }
  if (leaky == GST_TBQUEUE_LEAK_DOWNSTREAM
      && locked_leak_for_sink (tbq, size))
    return GST_FLOW_OK;
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "sink pool full, leaking buffer on "
      "upstream end");
  tbq->tail_needs_discont = TRUE;
  return GST_FLOW_CUSTOM_SUCCESS;
}

/* The sink pool, full, makes room only as downstream takes data: not
 * while the spill writes the backlog to its file (the wait is then the
 * copy task's and the spill thread's, which free memory by themselves),
 * unless the file is full or writes fail.  Only then is the queue full:
 * an overrun, and buffering is 100 % while upstream waits. */
static gboolean
sink_full_for_downstream (GstTbQueue * tbq)
{
  TbqStats st;

  if (!tbq->spilling)
    return TRUE;
  tbq_queue_get_stats (tbq->q, &st);
  return st.spill.failing != 0;
}

/* How long a leaky write waits in libtbq for the room the sink pool says
 * it has (then everything is looked at again: a sink pool full by then is
 * an overrun, and no leaky mode waits for downstream). */
#define LEAKY_RETRY_NS (GST_MSECOND)

/* Upstream thread, qlock: `retry` again, waiting in libtbq (BLOCK
 * backpressure, qlock released) up to LEAKY_RETRY_NS for the room it
 * needs: libtbq's wait ends when memory comes back, which the reader's
 * wait key does not tell. */
static TbqStatus
locked_retry_waiting (GstTbQueue * tbq, GstTbqRetry retry, gpointer data)
{
  TbqStatus st;

  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK,
      LEAKY_RETRY_NS);
  st = retry (tbq, data);
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  return st == TBQ_TIMEOUT ? TBQ_DROPPED : st;
}

/* Upstream thread, leaky: `retry` (a write of a record of `size` bytes,
 * with DROP backpressure) found the source pool full, or (a frame) no
 * room for its extent.  Wait for the copy task while the sink pool can
 * take the record; else it is an overrun.  GST_FLOW_OK once `retry`
 * worked, GST_FLOW_CUSTOM_SUCCESS to drop the incoming data, or the
 * flow. */
static GstFlowReturn
wait_for_copier_leaky (GstTbQueue * tbq, gint leaky, guint32 size,
    GstTbqRetry retry, gpointer data)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean signalled = FALSE, waiting = FALSE;

  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  for (;;) {
    guint32 key = tbq_reader_prepare_wait (tbq->reader);
    TbqStatus st = waiting ? locked_retry_waiting (tbq, retry, data)
        : retry (tbq, data);

    waiting = FALSE;
    if (st == TBQ_OK)
      break;
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      goto out_flushing;
    if (st != TBQ_DROPPED) {
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      return gst_tbqueue_write_failed (tbq, st);
    }
    if (!tbq_queue_sink_can_take_record (tbq->q, size)) {
      if (!sink_full_for_downstream (tbq)) {
        /* Spilling, and the file has room: the spill thread gives memory
         * back by itself.  Not full: nothing is dropped below the
         * limits. */
        waiting = TRUE;
        continue;
      }
      if ((ret = locked_sink_overrun (tbq, leaky, size,
                  &signalled)) != GST_FLOW_OK)
        break;
      continue;
    }
    if (!gst_tbqueue_locked_copier_has_work (tbq)) {
      /* The sink pool refused the record and says it can take it now
       * (memory came back since, or the spill frees some): try again,
       * waiting for that room a moment. */
      waiting = TRUE;
      continue;
    }
    TBQ_ADD (tbq->counters.copier_waits, 1);
    STATUS (tbq, tbq->sinkpad, "wait for the copy task");
    gst_tbqueue_locked_wait_sink (tbq, key);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      goto out_flushing;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return ret;

out_flushing:
  ret = GST_TBQUEUE_FLOW (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return ret;
}

/* How often a writer waiting for a free source block looks whether the
 * sink pool has filled meanwhile (an overrun to signal). */
#define OVERRUN_CHECK_NS (10 * GST_MSECOND)

/* Upstream thread, leaky=no (or not a buffer): wait in libtbq for a free
 * source block, however long that takes (a flush or a state change
 * interrupts it).  When the sink pool is full that is an overrun. */
static GstFlowReturn
wait_for_copier (GstTbQueue * tbq, gboolean is_buffer, guint32 size,
    GstTbqRetry retry, gpointer data)
{
  gboolean overrun = FALSE, stalled = FALSE;
  TbqStatus st;

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "source pool full, waiting");
  for (;;) {
    /* The sink pool may fill while the copy task works (downstream
     * holding on): look again every OVERRUN_CHECK_NS until it is full for
     * downstream, which is an overrun, then wait for as long as it
     * takes.  Full while spilling with room is no overrun: the frames'
     * memory on its way to the file comes back without downstream. */
    if (!overrun && is_buffer
        && !tbq_queue_sink_can_take_record (tbq->q, size)
        && sink_full_for_downstream (tbq)) {
      overrun = TRUE;
      TBQ_ADD (tbq->counters.overruns, 1);
      emit (tbq, SIGNAL_OVERRUN);
      /* Below the max-size-* limits, but nothing comes in until
       * downstream takes data: buffering is full. */
      stalled = gst_tbqueue_buffering_on (tbq);
      if (stalled)
        gst_tbqueue_buffering_stall (tbq, TRUE);
    }
    tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_BLOCK,
        overrun || !is_buffer ? -1 : OVERRUN_CHECK_NS);
    st = retry (tbq, data);
    if (st != TBQ_TIMEOUT || overrun || !is_buffer)
      break;
  }
  tbq_writer_set_backpressure (tbq->writer, TBQ_BACKPRESSURE_DROP, 0);
  if (stalled)
    gst_tbqueue_buffering_stall (tbq, FALSE);
  if (st != TBQ_OK)
    return gst_tbqueue_write_failed (tbq, st);
  if (overrun)
    emit (tbq, SIGNAL_RUNNING);
  return GST_FLOW_OK;
}

/* Upstream thread: `retry` (a write of a record of `size` bytes, with
 * DROP backpressure) found no free source block, or (a frame) no room for
 * its extent.  Wait for it, or leak as the leaky mode says when the sink
 * pool cannot take the record.  GST_FLOW_OK once `retry` succeeded,
 * GST_FLOW_CUSTOM_SUCCESS when the incoming data is to be dropped, or the
 * flow that stopped it (GST_FLOW_ERROR when libtbq refused the write for
 * another reason). */
GstFlowReturn
gst_tbqueue_wait_for_source_block (GstTbQueue * tbq, gboolean is_buffer,
    guint32 size, GstTbqRetry retry, gpointer data)
{
  gint leaky = is_buffer ? TBQ_LOAD (tbq->leaky) : GST_TBQUEUE_NO_LEAK;

  publish_held (tbq);
  if (leaky == GST_TBQUEUE_NO_LEAK)
    return wait_for_copier (tbq, is_buffer, size, retry, data);
  return wait_for_copier_leaky (tbq, leaky, size, retry, data);
}

/* tbqueue src side: the src pad task (the libtbq reader), src events and
 * queries, src pad activation; starting and stopping the streaming.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An item's way out: the src task waits until something can be pushed
 * (the thresholds: gsttbqueue-levels.c), dequeues it (records back into
 * items: gsttbqueue-dequeue.c) and pushes it with qlock released.
 * Threads and locks: gsttbqueue-private.h.
 */
#include "gsttbqueue-src.h"
#include "gsttbqmemory.h"
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"

static void gst_tbqueue_loop (GstPad * pad);

/* ---- starting and stopping ---- */

/* qlock: a new stream, EOS forgotten (STREAM_START, SEGMENT, a flush). */
void
gst_tbqueue_locked_forget_eos (GstTbQueue * tbq)
{
  TBQ_STORE (tbq->eos, FALSE);
  TBQ_STORE (tbq->unexpected, FALSE);
}

gboolean
gst_tbqueue_locked_stream_after_eos (GstTbQueue * tbq)
{
  return TBQ_LOAD (tbq->in_items) != TBQ_LOAD (tbq->out_items);
}

/* qlock: EOS forgotten and the flow OK, which starts the copy task; and the
 * src task started when the src pad is active.  FALSE if it cannot start. */
gboolean
gst_tbqueue_locked_start_streaming (GstTbQueue * tbq)
{
  gst_tbqueue_locked_forget_eos (tbq);
  gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
  /* (A new stream: what downstream ended was the old one's.) */
  tbq->downstream_ended = FALSE;
  return GST_TBQUEUE_GET_CLASS (tbq)->locked_start_src (tbq);
}

/* Activation: as gst_tbqueue_locked_start_streaming(), once the two-layer
 * queue exists (READY->PAUSED).  No qlock held. */
gboolean
gst_tbqueue_start_streaming (GstTbQueue * tbq)
{
  gboolean res;

  if (tbq->q == NULL)
    return FALSE;
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  res = gst_tbqueue_locked_start_streaming (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return res;
}

/* FLUSHING (every wait returns), then wait until neither the src task nor
 * the copy task runs, then release a serialized query's waiter: its query
 * will not be answered now.  That waiter holds the sink pad's stream lock,
 * which a flush and the sink pad's deactivation take next, and only
 * query_handled wakes it; released before the src task stopped, it could
 * miss an answer being pushed.  No qlock held. */
void
gst_tbqueue_stop_streaming (GstTbQueue * tbq)
{
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_TBQUEUE_GET_CLASS (tbq)->pause_src (tbq);
  gst_tbqueue_copy_task_wait_paused (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->last_query = FALSE;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
}

/* ---- pushing ---- */

void
gst_tbqueue_emit (GstTbQueue * tbq, guint signal)
{
  if (!TBQ_LOAD (tbq->silent))
    g_signal_emit (tbq, gst_tbqueue_signals[signal], 0);
}

/* After downstream returned EOS, items queued before it are dropped until
 * one we can push again (EOS, SEGMENT, STREAM_START).  Returns the item to
 * push, or NULL if it was dropped.  Some of those items may still be on
 * their way through the copy task when EOS comes back: every item counted
 * in before that moment (eos_drain_until) is treated the same when it shows
 * up. */
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
  /* An event is only unreffed (not kept as sticky, as drop_item would). */
  if (GST_IS_EVENT (data))
    gst_event_unref (GST_EVENT_CAST (data));
  else
    gst_tbqueue_locked_drop_item (tbq, data, FALSE);
  return NULL;
}

/* Downstream returned EOS for a buffer: drop what is visible up to the next
 * pushable event (returned, to push), and refuse more data until a
 * SEGMENT. */
static GstMiniObject *
locked_drop_after_eos (GstTbQueue * tbq)
{
  GstTbqItem item;

  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "got EOS from downstream");
  /* Everything counted in so far is older than this EOS. */
  tbq->eos_drain_until = TBQ_LOAD (tbq->in_items);
  while (gst_tbqueue_locked_take_item (tbq, &item)) {
    GstMiniObject *data = item.object;

    if (data != NULL && (data = locked_after_eos (tbq, data)) != NULL)
      return data;
  }
  TBQ_STORE (tbq->unexpected, TRUE);
  return NULL;
}

static gboolean
mark_discont (GstBuffer ** buffer, guint i, gpointer user_data)
{
  *buffer = gst_buffer_make_writable (*buffer);
  GST_BUFFER_FLAG_SET (*buffer, GST_BUFFER_FLAG_DISCONT);
  return FALSE;
}

/* With use-buffering, qlock released, before an item taken out is pushed
 * (`bytes` of data): downstream's bitrate once the pad was reconfigured,
 * and the level, lower now. */
static void
src_buffering (GstTbQueue * tbq, gsize bytes)
{
  gst_tbqueue_buffering_check_bitrate (tbq);
  gst_tbqueue_buffering_out (tbq, bytes);
}

/* A small copied buffer lives in a sink block, with the other records of
 * that block, and keeps the whole block from the pool for as long as
 * downstream holds it (zero copy).  Downstream that keeps some (one in
 * many: a sample an application holds on to, headers an element keeps)
 * would pin the sink pool block by block, and with leaky=no upstream
 * would wait for ever.  With more than half the pool in use the small
 * ones go out with memory of their own, so that what downstream keeps
 * pins at most about half of it, and the rest goes round.  (A frame's
 * memory is an extent of its own: it pins nothing else.)
 *
 * What comes back from the spill file is read back into the room of the
 * sink pool that the copy task and the upstream thread leave free for it
 * (libtbq's read-back room, an eighth of sink-max-bytes), and downstream
 * that kept it (an encoder's look-ahead, a sample held on to) until it
 * gets more would keep that room, and the rest of the file, from coming
 * back: the src task would wait at the file for ever.  So it never stays
 * in that room once pushed: a frame's memory (of its own, zero copy)
 * leaves the sink pool's count, downstream's as a copy would be, and a
 * small buffer, which shares memory with the others of its part of the
 * file, goes out with memory of its own.  What was copied in before the
 * spill began (in memory) is downstream's to keep, as without spill: the
 * rest of the sink pool holds it. */
static GstBuffer *
src_unpin (GstTbQueue * tbq, GstBuffer * buffer, gboolean pressed)
{
  if (G_UNLIKELY (tbq->spilling) && gst_tbq_buffer_is_from_file (buffer))
    return gst_tbq_buffer_leave_budget (buffer) ? buffer
        : gst_tbq_buffer_unpin (buffer);
  if (pressed && gst_buffer_get_size (buffer) <= tbq->limits.max_inline)
    return gst_tbq_buffer_unpin (buffer);
  return buffer;
}

typedef struct
{
  GstTbQueue *tbq;
  gboolean pressed;
} SrcUnpin;

static gboolean
src_unpin_member (GstBuffer ** buffer, guint i, gpointer user_data)
{
  SrcUnpin *u = user_data;

  *buffer = src_unpin (u->tbq, *buffer, u->pressed);
  return TRUE;
}

/* qlock released: the item to push, out of the sink pool's read-back room
 * for what came back from the spill file, and with memory of its own for
 * its small buffers when the sink pool is more than half in use. */
static GstMiniObject *
src_unpin_if_pressed (GstTbQueue * tbq, GstMiniObject * data)
{
  SrcUnpin u = { tbq, tbq_queue_sink_half_used (tbq->q) };
  GstBufferList *bl;

  if (G_LIKELY (!u.pressed && !tbq->spilling))
    return data;
  if (GST_IS_BUFFER (data))
    return GST_MINI_OBJECT_CAST (src_unpin (tbq, GST_BUFFER_CAST (data),
            u.pressed));
  bl = gst_buffer_list_make_writable (GST_BUFFER_LIST_CAST (data));
  gst_buffer_list_foreach (bl, src_unpin_member, &u);
  return GST_MINI_OBJECT_CAST (bl);
}

static GstFlowReturn
push_data_on_pad (GstPad * pad, GstMiniObject * data, gpointer user_data)
{
  if (GST_IS_BUFFER (data))
    return gst_pad_push (pad, GST_BUFFER_CAST (data));
  return gst_pad_push_list (pad, GST_BUFFER_LIST_CAST (data));
}

/* Push a buffer or a buffer list on `pad` with `push` (`user_data` for
 * it), qlock released around the push: DISCONT after a leak, the pool
 * buffers held, buffering and the copies of small buffers while the sink
 * pool is pressed, as for every item taken out.  Returns the push's
 * result, or the flow when it is no longer OK. */
GstFlowReturn
gst_tbqueue_locked_push_data_on (GstTbQueue * tbq, GstPad * pad,
    GstMiniObject * data, GstTbqPushFunc push, gpointer user_data)
{
  GstFlowReturn result;
  /* Still held while downstream has them in the push (the copy rule);
   * counted first: the DISCONT flag may replace a shared buffer by a
   * copy, which has no pool. */
  guint pooled = gst_tbqueue_pool_buffers (data);

  if (G_UNLIKELY (tbq->head_needs_discont)) {
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
  TBQ_STORE (tbq->pushing_data, TRUE);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  data = src_unpin_if_pressed (tbq, data);
  if (G_UNLIKELY (gst_tbqueue_buffering_on (tbq)))
    src_buffering (tbq, GST_IS_BUFFER (data)
        ? gst_buffer_get_size (GST_BUFFER_CAST (data))
        : gst_buffer_list_calculate_size (GST_BUFFER_LIST_CAST (data)));
  result = push (pad, data, user_data);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  TBQ_STORE (tbq->pushing_data, FALSE);
  gst_tbqueue_locked_pool_release (tbq, pooled);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    return GST_TBQUEUE_FLOW (tbq);
  return result;
}

/* Push a buffer or a buffer list; qlock released around the push.  With
 * EOS from downstream, *next is the next item to push, if any. */
static GstFlowReturn
locked_push_data (GstTbQueue * tbq, GstMiniObject * data, GstMiniObject ** next)
{
  GstFlowReturn result = gst_tbqueue_locked_push_data_on (tbq, tbq->srcpad,
      data, push_data_on_pad, NULL);

  if (result == GST_FLOW_EOS && GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK) {
    *next = locked_drop_after_eos (tbq);
    return GST_FLOW_OK;
  }
  return result;
}

static GstFlowReturn
locked_push_event (GstTbQueue * tbq, GstEvent * event)
{
  GstEventType type = GST_EVENT_TYPE (event);

  /* A sticky event is the src pad's before qlock goes: a leak meanwhile
   * (the upstream thread, under qlock) stores the sticky events it drops
   * on the src pad, and would store a later one (CAPS) ahead of this one
   * (STREAM_START): sticky events out of order.  Not EOS: storing it
   * marks the pad EOS, and the push would then refuse it. */
  if (GST_EVENT_IS_STICKY (event) && type != GST_EVENT_EOS)
    gst_pad_store_sticky_event (tbq->srcpad, event);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (G_UNLIKELY (gst_tbqueue_buffering_on (tbq))) {
    if (type == GST_EVENT_TAG)
      gst_tbqueue_buffering_tags (tbq, event, FALSE);
    src_buffering (tbq, 0);
  }
  gst_pad_push_event (tbq->srcpad, event);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    return GST_TBQUEUE_FLOW (tbq);
  if (type == GST_EVENT_EOS) {
    /* A new stream came in while the EOS was on its way (its STREAM_START
     * restarted the streaming then): it is pushed in turn, as if the task
     * had stopped at the EOS and been started again. */
    if (gst_tbqueue_locked_stream_after_eos (tbq)) {
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "pushed EOS event %p, a new stream "
          "follows", event);
      return GST_FLOW_OK;
    }
    GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "pushed EOS event %p, return EOS",
        event);
    return GST_FLOW_EOS;
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
locked_push_query (GstTbQueue * tbq, GstQuery * query)
{
  gboolean ret;

  /* The sender must not take the query back while downstream has it,
   * whatever wakes it up (see gst_tbqueue_sink_query). */
  tbq->query_in_use = query;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (G_UNLIKELY (gst_tbqueue_buffering_on (tbq)))
    src_buffering (tbq, 0);
  ret = gst_pad_peer_query (tbq->srcpad, query);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->query_in_use = NULL;
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK) {
    tbq->last_query = FALSE;
    GST_TBQUEUE_BROADCAST (tbq, query_handled);
    return GST_TBQUEUE_FLOW (tbq);
  }
  tbq->last_query = ret;
  tbq->last_handled_query = query;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "did query %p, return %d", query, ret);
  return GST_FLOW_OK;
}

/* Push `data` (and what follows it after EOS from downstream); qlock
 * held, released around the push. */
static GstFlowReturn
locked_push_item (GstTbQueue * tbq, GstMiniObject * data)
{
  GstFlowReturn result = GST_FLOW_OK;

  if (G_UNLIKELY (tbq->eos_drain_until != 0)) {
    if (TBQ_LOAD (tbq->out_items) > tbq->eos_drain_until)
      tbq->eos_drain_until = 0;
    else if ((data = locked_after_eos (tbq, data)) == NULL)
      return GST_FLOW_OK;
  }
  while (data != NULL && result == GST_FLOW_OK) {
    GstMiniObject *next = NULL;

    if (GST_IS_BUFFER (data) || GST_IS_BUFFER_LIST (data))
      result = locked_push_data (tbq, data, &next);
    else if (GST_IS_EVENT (data))
      result = locked_push_event (tbq, GST_EVENT_CAST (data));
    else if (GST_IS_QUERY (data))
      result = locked_push_query (tbq, GST_QUERY_CAST (data));
    data = next;
  }
  return result;
}

/* Src task, qlock: wait until there is something to push, as queue:
 * underrun when empty, running and pushing when it is not any more.
 * FALSE: the flow is no longer OK. */
static gboolean
locked_wait_for_data (GstTbQueue * tbq)
{
  guint32 key;

  while (gst_tbqueue_locked_is_empty (tbq, NULL)) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is empty");
    TBQ_ADD (tbq->counters.underruns, 1);
    if (!TBQ_LOAD (tbq->silent)) {
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      gst_tbqueue_emit (tbq, SIGNAL_UNDERRUN);
      GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
    }
    /* Re-check: the signal may have changed the thresholds. */
    while (gst_tbqueue_locked_is_empty (tbq, &key)) {
      /* Everything spilled is out: the run ends now, with its message,
       * not when more data comes (only when empty, and only a look at the
       * reader's block unless it waits at a spill marker). */
      if (G_UNLIKELY (tbq->spilling) && !tbq->reader_sleeping)
        tbq_reader_note_idle (tbq->reader);
      GST_TBQUEUE_WAIT_ADD_CHECK (tbq, key, out_flushing);
    }
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "queue is not empty");
    if (!TBQ_LOAD (tbq->silent)) {
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      gst_tbqueue_emit (tbq, SIGNAL_RUNNING);
      gst_tbqueue_emit (tbq, SIGNAL_PUSHING);
      GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
    }
  }
  return TRUE;

out_flushing:
  return FALSE;
}

/* Src task, qlock: items are queued but none is visible: they are on
 * their way through the copy task, or (publish-batch other than 1) the
 * writer holds them unpublished.  Wait for the copy task; but when it has
 * moved everything published, collect what the writer holds: the writer
 * may be used by whoever holds the sink pad's stream lock, and when the
 * upstream thread is away it is free.  When it is not (the upstream
 * thread is in a sink pad function, which publishes before it waits for
 * anything), look again after letting it run.  No signal: the queue is
 * not empty. */
void
gst_tbqueue_locked_wait_for_records (GstTbQueue * tbq, guint32 key)
{
  STATUS (tbq, tbq->sinkpad, "wait for the copy task");
  if (G_LIKELY (!tbq->batching)) {
    gst_tbqueue_locked_wait_sink (tbq, key);
    return;
  }
  if (tbq_writer_wait_copied (tbq->writer, 0) != TBQ_OK) {
    /* The copy task is moving what was published.  It makes records
     * readable before it counts them moved: this task may have taken
     * them already, and a sleep on the sink would then see no further
     * move, while what the writer holds back waits for this task to
     * collect it (the upstream thread waiting for it downstream).  So
     * wait for the count (the copy task rings the writer's event right
     * after it), bounded, and look again. */
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    tbq_writer_wait_copied (tbq->writer, 10 * GST_MSECOND);
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    return;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (GST_PAD_STREAM_TRYLOCK (tbq->sinkpad)) {
    tbq_writer_flush (tbq->writer);
    GST_PAD_STREAM_UNLOCK (tbq->sinkpad);
  } else {
    g_thread_yield ();
  }
  GST_TBQUEUE_MUTEX_LOCK (tbq);
}

/* Src task, qlock: the next records are in a unit of the spill file that
 * cannot be read back whole and intact (damaged, truncated, an I/O
 * error): an error, with libtbq's reason (or the one taken earlier by a
 * look for an allocation failure), posted with qlock released; nothing
 * after it is pushed. */
GstFlowReturn
gst_tbqueue_locked_spill_failed (GstTbQueue * tbq)
{
  char msg[512] = "";
  gchar *kept;

  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_OBJECT_LOCK (tbq);
  kept = g_steal_pointer (&tbq->spill_read_error);
  GST_OBJECT_UNLOCK (tbq);
  if (tbq_queue_take_error (tbq->q, msg, sizeof msg) != TBQ_IO_ERROR)
    g_strlcpy (msg, kept != NULL ? kept : "the spill file cannot be read "
        "back", sizeof msg);
  g_free (kept);
  GST_ELEMENT_ERROR (tbq, RESOURCE, READ,
      ("Cannot read the queued data back from the spill file"), ("%s", msg));
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  return GST_FLOW_ERROR;
}

/* Src task, qlock: take the next item and push it, or wait for it.  What
 * a leak left to it is leaked (gsttbqueue-leaks.c). */
static GstFlowReturn
locked_push_one (GstTbQueue * tbq)
{
  GstTbqItem item;
  guint32 key;

  gst_tbqueue_locked_leak_if_pending (tbq);
  key = tbq_reader_prepare_wait (tbq->reader);
  switch (gst_tbqueue_locked_dequeue (tbq, &item)) {
    case DEQUEUE_ITEM:
      if (G_UNLIKELY (TBQ_LOAD (tbq->src_idle)))
        TBQ_STORE (tbq->src_idle, FALSE);
      return locked_push_item (tbq, item.object);
    case DEQUEUE_EMPTY:
      gst_tbqueue_locked_wait_for_records (tbq, key);
      return GST_TBQUEUE_FLOW (tbq);
    case DEQUEUE_SPILL_FAILED:
      return gst_tbqueue_locked_spill_failed (tbq);
    case DEQUEUE_REST:
      gst_tbqueue_locked_leak_rest (tbq, &item);
      return GST_FLOW_OK;
    case DEQUEUE_AGAIN:
      return GST_FLOW_OK;
    default:
      return GST_TBQUEUE_FLOW (tbq);
  }
}

static void
gst_tbqueue_loop (GstPad * pad)
{
  GstTbQueue *tbq = (GstTbQueue *) GST_PAD_PARENT (pad);
  GstFlowReturn ret;
  gboolean eos;

  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  if (!locked_wait_for_data (tbq))
    goto out_flushing;
  ret = locked_push_one (tbq);
  if (ret != GST_FLOW_OK) {
    if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
      gst_tbqueue_locked_set_flow (tbq, ret);
    goto out_flushing;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
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
    GST_TBQUEUE_BROADCAST (tbq, item_del);
    tbq->last_query = FALSE;
    GST_TBQUEUE_BROADCAST (tbq, query_handled);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  /* Not linked: buffering is full (nothing will drain it here). */
  if (ret == GST_FLOW_NOT_LINKED)
    gst_tbqueue_buffering_update (tbq);
  /* Tell the application we gave up, unless upstream will (EOS). */
  if (eos && (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)) {
    GST_ELEMENT_FLOW_ERROR (tbq, ret);
    gst_pad_push_event (tbq->srcpad, gst_event_new_eos ());
  }
}

/* ---- events and queries ---- */

static gboolean
gst_tbqueue_src_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "got event %s",
      GST_EVENT_TYPE_NAME (event));
  if (GST_EVENT_TYPE (event) == GST_EVENT_RECONFIGURE) {
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_NOT_LINKED) {
      /* Downstream may be linked again: try pushing. */
      gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
      gst_pad_start_task (pad, (GstTaskFunction) gst_tbqueue_loop, pad, NULL);
    }
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    return gst_pad_push_event (tbq->sinkpad, event);
  }
  return gst_pad_event_default (pad, parent, event);
}

/* The peer's answer to a position query, less what we hold. */
static void
adjust_position (GstTbQueue * tbq, GstQuery * query)
{
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
      return;
  }
  gst_query_set_position (query, format, MAX (pos, 0));
}

/* ---- wake coalescing and the latency ----
 *
 * A nap of the src task holds a buffer for up to the bound, which a live
 * pipeline's sinks must wait for: the latency answer includes the bound
 * exactly when the src task may nap in a live stream.  With
 * max-coalesce-latency set, it naps and the answer adds the bound.  Left
 * at its default, the answer is queue's, and the src task naps only in a
 * stream that is not live (where no sink waits for the latency): the
 * latency answer that passes through the src pad says which it is, and
 * comes before a live source produces (a pipeline asks on its way to
 * PLAYING). */

/* Object lock: the bound the src task naps with. */
guint64
gst_tbqueue_locked_coalesce_bound (GstTbQueue * tbq)
{
  return tbq->upstream_live && !tbq->coalesce_set ? 0
      : tbq->max_coalesce_latency;
}

/* Upstream's latency answer says whether the stream is live: the reader
 * naps, or stops napping, from its next wait on (a nap in progress ends:
 * it may be one a live stream must not have).  Under qlock, which the
 * src task takes before each wait: that wait sees the new bound. */
static void
learn_liveness (GstTbQueue * tbq, gboolean live)
{
  guint64 before, after;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  GST_OBJECT_LOCK (tbq);
  before = gst_tbqueue_locked_coalesce_bound (tbq);
  tbq->upstream_live = live;
  after = gst_tbqueue_locked_coalesce_bound (tbq);
  GST_OBJECT_UNLOCK (tbq);
  if (after != before && tbq->reader != NULL
      && tbq_reader_set_coalesce (tbq->reader, (int64_t) after) == TBQ_OK) {
    GST_DEBUG_OBJECT (tbq, "stream %slive: wake coalescing bound %"
        GST_TIME_FORMAT, live ? "" : "not ", GST_TIME_ARGS (after));
    tbq_reader_wake (tbq->reader);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
}

/* The peer's answer to a latency query, plus what we may add: queue's
 * thresholds, and, with max-coalesce-latency set, the coalescing bound
 * (to the minimum, and to a known maximum, which stays at least the
 * minimum).  At the default bound, or set to 0, it answers exactly as
 * queue does. */
static void
adjust_latency (GstTbQueue * tbq, GstQuery * query)
{
  gboolean live;
  GstClockTime min, max;
  guint64 max_time = TBQ_LOAD (tbq->max_time);
  guint64 min_time = TBQ_LOAD (tbq->min_time);
  gint leaky = TBQ_LOAD (tbq->leaky);
  guint64 coalesce;

  gst_query_parse_latency (query, &live, &min, &max);
  learn_liveness (tbq, live);
  /* Geometry: set in READY or below only, so this is the bound in force. */
  GST_OBJECT_LOCK (tbq);
  coalesce = tbq->coalesce_set ? tbq->max_coalesce_latency : 0;
  GST_OBJECT_UNLOCK (tbq);
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
  min += coalesce;
  if (max != GST_CLOCK_TIME_NONE)
    max += coalesce;
  GST_DEBUG_OBJECT (tbq, "latency: live %d, min %" GST_TIME_FORMAT ", max %"
      GST_TIME_FORMAT " (with %" GST_TIME_FORMAT " of coalescing)", live,
      GST_TIME_ARGS (min), GST_TIME_ARGS (max), GST_TIME_ARGS (coalesce));
  gst_query_set_latency (query, live, min, max);
}

gboolean
gst_tbqueue_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;

  if (GST_QUERY_TYPE (query) == GST_QUERY_SCHEDULING) {
    gst_query_add_scheduling_mode (query, GST_PAD_MODE_PUSH);
    return TRUE;
  }
  /* With use-buffering the element answers (gsttbqueue-buffering.c). */
  if (GST_QUERY_TYPE (query) == GST_QUERY_BUFFERING
      && gst_tbqueue_buffering_query (tbq, query))
    return TRUE;
  if (!gst_pad_query_default (pad, parent, query))
    return FALSE;
  if (GST_QUERY_TYPE (query) == GST_QUERY_POSITION)
    adjust_position (tbq, query);
  else if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    adjust_latency (tbq, query);
  return TRUE;
}

/* ---- activation ---- */

static gboolean
gst_tbqueue_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  gboolean result;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active)
    return gst_tbqueue_start_streaming (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  result = gst_pad_stop_task (pad);
  gst_tbqueue_copy_task_stop (tbq);
  /* The writer may still run: only what the reader sees goes now, the rest
   * with the sink pad's deactivation. */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (tbq->reader != NULL)
    gst_tbqueue_locked_drain_visible (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return result;
}

/* The src side's pad functions. */
void
gst_tbqueue_src_set_functions (GstPad * pad)
{
  gst_pad_set_event_function (pad, GST_DEBUG_FUNCPTR (gst_tbqueue_src_event));
  gst_pad_set_query_function (pad, GST_DEBUG_FUNCPTR (gst_tbqueue_src_query));
  gst_pad_set_activatemode_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbqueue_src_activate_mode));
}

/* ---- tbqueue's src side: its one src pad ---- */

static gboolean
src_locked_start (GstTbQueue * tbq)
{
  if (!gst_pad_is_active (tbq->srcpad)) {
    GST_INFO_OBJECT (tbq, "not starting the src task: pad inactive");
    return TRUE;
  }
  return gst_pad_start_task (tbq->srcpad, (GstTaskFunction) gst_tbqueue_loop,
      tbq->srcpad, NULL);
}

static void
src_pause (GstTbQueue * tbq)
{
  gst_pad_pause_task (tbq->srcpad);
}

static gboolean
src_active (GstTbQueue * tbq)
{
  return gst_pad_is_active (tbq->srcpad);
}

static gboolean
src_push_downstream (GstTbQueue * tbq, GstEvent * event)
{
  return gst_pad_push_event (tbq->srcpad, event);
}

static void
src_locked_store_sticky (GstTbQueue * tbq, GstEvent * event)
{
  gst_pad_store_sticky_event (tbq->srcpad, event);
}

void
gst_tbqueue_src_class_init (GstTbQueueClass * klass)
{
  klass->locked_start_src = src_locked_start;
  klass->pause_src = src_pause;
  klass->src_active = src_active;
  klass->push_downstream = src_push_downstream;
  klass->locked_store_sticky = src_locked_store_sticky;
}

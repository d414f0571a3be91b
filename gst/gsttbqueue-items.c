/* tbqueue items: the flow state, time levels, taking records out as
 * buffers, lists, events and queries, leaking and flushing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threads and locks (for the three gsttbqueue-*.c dataflow files):
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

/* ---- flow state ---- */

void
gst_tbqueue_locked_set_flow (GstTbQueue * tbq, GstFlowReturn ret)
{
  TBQ_STORE (tbq->srcresult, ret);
  if (tbq->q == NULL)
    return;
  if (ret != GST_FLOW_OK) {
    /* Unblock a writer, the copier and the reader wherever they wait. */
    tbq_queue_interrupt (tbq->q);
    QBROADCAST (tbq, item_del);
  } else {
    /* Resumes the queue too, unless the src pad is going away. */
    gst_tbqueue_copier_start (tbq);
  }
}

/* ---- time levels (as queue: running time at the sink minus at the src) ---- */

void
gst_tbqueue_apply_segment (GstTbQueue * tbq, GstEvent * event, gboolean sink)
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

void
gst_tbqueue_apply_gap (GstTbQueue * tbq, GstEvent * event, gboolean sink)
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
  tbq->eos_drain_until = 0;
  tbq->seen_out_buffers = tbq->seen_out_bytes = 0;
  tbq->seen_srctime = GST_CLOCK_STIME_NONE;
  tbq->refresh_countdown = 1;
}

/* ---- records to objects (src side, under qlock) ---- */

static inline guint32
record_list_flags (const TbqRecord * rec)
{
  if (rec->type == GST_TBQ_RECORD_BUFFER_COPY)
    return ((const GstTbqBufferHeader *) rec->data)->info & GST_TBQ_LIST_MASK;
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
      gsize size;
      GstBuffer *buffer = gst_tbqueue_buffer_decode (&rec, list, &size);

      TBQ_ADD (tbq->out_buffers, 1);
      TBQ_ADD (tbq->out_bytes, size);
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
            gst_tbqueue_apply_segment (tbq, event, FALSE);
          else
            tbq->newseg_applied_to_src = FALSE;
          break;
        case GST_EVENT_GAP:
          gst_tbqueue_apply_gap (tbq, event, FALSE);
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

/* Wait, holding qlock, until the copy task has moved what the writer has
 * published: the upstream thread publishes first (it is the writer), any
 * other thread waits for what is published.  FALSE on timeout/interrupt. */
static gboolean
locked_wait_copied (GstTbQueue * tbq, DequeueWait wait)
{
  switch (wait) {
    case DEQUEUE_WAIT_WRITER:
      return tbq_writer_sync (tbq->writer, SYNC_TIMEOUT_NS) == TBQ_OK;
    case DEQUEUE_WAIT_COPIER:
      return tbq_writer_wait_copied (tbq->writer, SYNC_TIMEOUT_NS) == TBQ_OK;
    default:
      return FALSE;
  }
}

/* Wait for more records while gathering a buffer list.  FALSE: give up. */
static gboolean
locked_wait_more (GstTbQueue * tbq, DequeueWait wait)
{
  TbqRecord rec;

  if (wait == DEQUEUE_WAIT_SRC) {
    guint32 key = tbq_reader_prepare_wait (tbq->reader);

    if (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK)
      return TRUE;
    QUNLOCK (tbq);
    tbq_reader_sleep (tbq->reader, key, -1);
    QLOCK (tbq);
    return GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK;
  }
  return locked_wait_copied (tbq, wait)
      && tbq_reader_peek (tbq->reader, &rec) == TBQ_OK;
}

/* Dequeue one item: a buffer, a whole buffer list, an event or a query.
 * NULL when nothing is visible (or a gathered list was cut short and the
 * flow is no longer OK: the partial list is dropped). */
GstMiniObject *
gst_tbqueue_locked_dequeue (GstTbQueue * tbq, DequeueWait wait,
    gboolean * skipped)
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
void
gst_tbqueue_locked_drop_item (GstTbQueue * tbq, GstMiniObject * item,
    gboolean flushing)
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
void
gst_tbqueue_locked_drain_visible (GstTbQueue * tbq)
{
  GstMiniObject *item;
  gboolean skipped;

  while ((item = gst_tbqueue_locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped))
      || skipped) {
    if (item)
      gst_tbqueue_locked_drop_item (tbq, item, TRUE);
  }
}

void
gst_tbqueue_locked_leak (GstTbQueue * tbq, DequeueWait wait)
{
  TbqRecord rec;

  while (gst_tbqueue_is_filled (tbq)) {
    gboolean skipped;
    GstMiniObject *leak = gst_tbqueue_locked_dequeue (tbq, wait, &skipped);

    if (leak == NULL) {
      if (skipped)
        continue;
      /* Nothing visible to leak: the rest is still in the source layer.
       * Once the copy task moved it, it is visible, or it is not published
       * yet (publish-batch) and cannot be leaked now. */
      if (!locked_wait_copied (tbq, wait)
          || tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)
        break;
      continue;
    }
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq,
        "queue is full, leaking item %p on downstream end", leak);
    atomic_fetch_add_explicit (&tbq->counters.dropped_downstream,
        item_buffers (leak), memory_order_relaxed);
    gst_tbqueue_locked_drop_item (tbq, leak, FALSE);
    /* The next buffer pushed needs a DISCONT flag. */
    tbq->head_needs_discont = TRUE;
  }
}

void
gst_tbqueue_locked_leak_downstream (GstTbQueue * tbq)
{
  if (tbq->reader != NULL)
    gst_tbqueue_locked_leak (tbq, DEQUEUE_WAIT_COPIER);
}

/* Leak the whole oldest sink block so the copier can move on (the pool is
 * physically full).  Upstream thread. */
void
gst_tbqueue_locked_leak_oldest_block (GstTbQueue * tbq)
{
  TbqRecord rec;
  TbqBlock *first;

  if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK)
    return;
  first = rec.block;
  do {
    gboolean skipped;
    GstMiniObject *leak =
        gst_tbqueue_locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped);

    if (leak != NULL) {
      atomic_fetch_add_explicit (&tbq->counters.dropped_downstream,
          item_buffers (leak), memory_order_relaxed);
      gst_tbqueue_locked_drop_item (tbq, leak, FALSE);
      tbq->head_needs_discont = TRUE;
    }
  } while (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK && rec.block == first);
}

/* ---- flushing and activation ---- */

typedef struct
{
  GstTbQueue *tbq;
  gboolean full;
} ReleaseCtx;

static void
release_record (uint16_t type, const void *data, uint32_t size, void *user_data)
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
void
gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full)
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

/* tbqueue dequeue: records back into buffers, buffer lists, events and
 * queries; dropping them; flushing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The src task dequeues items to push them; a leak or a flush dequeues them
 * to drop them, with the reader lent (threads and locks, and the lent
 * reader: gsttbqueue-private.h).  Every item taken out is counted out of
 * the levels here.
 */
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-levels.h"
#include "gsttbqrecord.h"

/* ---- the reader, lent ---- */

/* qlock: take the reader from the src task (and from any other borrower,
 * who gives it back soon: its waits are bounded, and interrupted by a
 * flow change). */
void
gst_tbqueue_locked_borrow_reader (GstTbQueue * tbq)
{
  while (tbq->reader_lent)
    GST_TBQUEUE_WAIT (tbq, reader_back);
  tbq->reader_lent = TRUE;
}

void
gst_tbqueue_locked_return_reader (GstTbQueue * tbq)
{
  tbq->reader_lent = FALSE;
  GST_TBQUEUE_BROADCAST (tbq, reader_back);
}

/* Src task, qlock: wait until nobody else has the reader.  FALSE: the
 * flow is no longer OK. */
gboolean
gst_tbqueue_locked_wait_reader (GstTbQueue * tbq)
{
  while (G_UNLIKELY (tbq->reader_lent)) {
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return FALSE;
    GST_TBQUEUE_WAIT (tbq, reader_back);
  }
  return TRUE;
}

/* With the reader lent: wait, qlock released, until the copy task has moved
 * what the writer published.  The upstream thread publishes first (it is
 * the writer); any other thread waits for what is published.  FALSE on
 * timeout or interrupt. */
gboolean
gst_tbqueue_locked_wait_copied (GstTbQueue * tbq, DequeueWait wait)
{
  TbqWriter *writer = tbq->writer;
  TbqStatus st;

  if (wait != DEQUEUE_WAIT_WRITER && wait != DEQUEUE_WAIT_COPIER)
    return FALSE;
  g_assert (tbq->reader_lent);
  STATUS (tbq, tbq->srcpad, "wait for the copy task");
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (wait == DEQUEUE_WAIT_WRITER)
    st = tbq_writer_sync (writer, SYNC_TIMEOUT_NS);
  else
    st = tbq_writer_wait_copied (writer, SYNC_TIMEOUT_NS);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  return st == TBQ_OK;
}

/* ---- records to items ---- */

/* Take the next visible record as an item and count it out of the levels.
 * NULL when nothing is visible; NULL with *skipped for a query whose
 * sender gave up. */
static GstMiniObject *
locked_take (GstTbQueue * tbq, guint32 * list, gboolean * skipped)
{
  TbqRecord rec;
  GstTbqItem item;

  *list = 0;
  if (tbq_reader_next (tbq->reader, &rec) != TBQ_OK)
    return NULL;
  TBQ_ADD (tbq->out_items, 1);
  if (G_UNLIKELY (!gst_tbq_record_read (&rec, &item)))
    goto unknown_record;
  if (item.type == GST_TBQ_RECORD_QUERY) {
    if (item.seq <= tbq->abandoned_query_seq)
      goto abandoned_query;
  } else {
    gst_tbqueue_locked_level_out (tbq, item.object, item.size);
  }
  *list = item.list;
  return item.object;

unknown_record:
  g_critical ("%s: unknown record type %u", GST_OBJECT_NAME (tbq), rec.type);
  *skipped = TRUE;
  return NULL;
abandoned_query:
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "skipping abandoned query");
  *skipped = TRUE;
  return NULL;
}

/* Wait for more records while gathering a buffer list.  FALSE: give up. */
static gboolean
locked_wait_more (GstTbQueue * tbq, DequeueWait wait)
{
  TbqRecord rec;
  guint32 key;

  switch (wait) {
    case DEQUEUE_NOWAIT:
      return FALSE;
    case DEQUEUE_WAIT_SRC:
      key = tbq_reader_prepare_wait (tbq->reader);
      if (tbq_reader_peek (tbq->reader, &rec) == TBQ_OK)
        return TRUE;
      GST_TBQUEUE_WAIT_ADD_CHECK (tbq, key, out_flushing);
      return gst_tbqueue_locked_wait_reader (tbq);
    default:
      return gst_tbqueue_locked_wait_copied (tbq, wait)
          && tbq_reader_peek (tbq->reader, &rec) == TBQ_OK;
  }

out_flushing:
  return FALSE;
}

/* The rest of a buffer list whose first buffer was taken: it was written
 * in one session, so its records follow.  NULL when the flow stopped while
 * waiting for them (the partial list is dropped). */
static GstMiniObject *
locked_take_list (GstTbQueue * tbq, GstBuffer * first, DequeueWait wait,
    gboolean * skipped)
{
  GstBufferList *bl = gst_buffer_list_new ();
  TbqRecord rec;
  guint32 list;

  gst_buffer_list_add (bl, first);
  for (;;) {
    if (tbq_reader_peek (tbq->reader, &rec) != TBQ_OK) {
      if (locked_wait_more (tbq, wait))
        continue;
      if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
        goto out_flushing;
      break;
    }
    if (!gst_tbq_record_is_buffer (&rec)
        || (gst_tbq_record_list_position (&rec) & GST_TBQ_LIST_FIRST))
      break;
    gst_buffer_list_add (bl, GST_BUFFER_CAST (locked_take (tbq, &list,
                skipped)));
    if (list & GST_TBQ_LIST_LAST)
      break;
  }
  return GST_MINI_OBJECT_CAST (bl);

out_flushing:
  gst_buffer_list_unref (bl);
  return NULL;
}

/* Dequeue one item: a buffer, a whole buffer list, an event or a query.
 * NULL when nothing is visible, or when a gathered list was cut short and
 * the flow is no longer OK (the partial list is dropped). */
GstMiniObject *
gst_tbqueue_locked_dequeue (GstTbQueue * tbq, DequeueWait wait,
    gboolean * skipped)
{
  GstMiniObject *obj;
  guint32 list;

  *skipped = FALSE;
  if (wait == DEQUEUE_WAIT_SRC && !gst_tbqueue_locked_wait_reader (tbq))
    return NULL;
  obj = locked_take (tbq, &list, skipped);
  if (obj == NULL || !(list & GST_TBQ_LIST_FIRST) || (list & GST_TBQ_LIST_LAST))
    return obj;
  return locked_take_list (tbq, GST_BUFFER_CAST (obj), wait, skipped);
}

/* ---- dropping items ---- */

/* A sticky event that is not pushed still becomes the src pad's sticky
 * state, as with queue; a flush forgets SEGMENT and EOS. */
static void
drop_event (GstTbQueue * tbq, GstEvent * event, gboolean flushing)
{
  GstEventType type = GST_EVENT_TYPE (event);

  if (GST_EVENT_IS_STICKY (event) && (!flushing
          || (type != GST_EVENT_SEGMENT && type != GST_EVENT_EOS)))
    gst_pad_store_sticky_event (tbq->srcpad, event);
  gst_event_unref (event);
}

/* Drop a dequeued item: events as drop_event(); a query is answered FALSE
 * (its sender waits for it); anything else is unreffed. */
void
gst_tbqueue_locked_drop_item (GstTbQueue * tbq, GstMiniObject * item,
    gboolean flushing)
{
  if (GST_IS_EVENT (item)) {
    drop_event (tbq, GST_EVENT_CAST (item), flushing);
  } else if (GST_IS_QUERY (item)) {
    tbq->last_query = FALSE;
    tbq->last_handled_query = GST_QUERY_CAST (item);
    GST_TBQUEUE_BROADCAST (tbq, query_handled);
  } else {
    gst_mini_object_unref (item);
  }
}

/* TbqReleaseFunc for tbq_queue_discard() and tbq_queue_free(): release
 * what a discarded record owns.  With the element as `user_data` (a flush)
 * events go as drop_event() drops them; with NULL (the pads are inactive)
 * everything is just unreffed. */
void
gst_tbqueue_release_record (uint16_t type, const void *data, uint32_t size,
    void *user_data)
{
  GstTbQueue *tbq = user_data;
  GstMiniObject *obj = gst_tbq_record_owned (type, data);

  if (obj == NULL)
    return;
  if (tbq != NULL && GST_IS_EVENT (obj))
    drop_event (tbq, GST_EVENT_CAST (obj), TRUE);
  else
    gst_mini_object_unref (obj);
}

/* ---- flushing ---- */

/* Drop every visible item; the reader is the caller's. */
static void
locked_drop_visible (GstTbQueue * tbq)
{
  GstMiniObject *item;
  gboolean skipped;

  while ((item = gst_tbqueue_locked_dequeue (tbq, DEQUEUE_NOWAIT, &skipped))
      || skipped) {
    if (item != NULL)
      gst_tbqueue_locked_drop_item (tbq, item, TRUE);
  }
}

/* Drop every visible item (the src side's flush, while the writer may
 * still run: the rest goes with the sink side's flush). */
void
gst_tbqueue_locked_drain_visible (GstTbQueue * tbq)
{
  gst_tbqueue_locked_borrow_reader (tbq);
  locked_drop_visible (tbq);
  gst_tbqueue_locked_return_reader (tbq);
}

/* Everything queued goes.  The writer, the copy task and the src task are
 * idle (the sink pad's stream lock is held or the pad inactive, both tasks
 * paused).  `full`: the pads are being deactivated, sticky events go too. */
void
gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full)
{
  /* A leak from a property change may still wait for the copy task (the
   * flow change interrupted it): discard once it gave the reader back. */
  gst_tbqueue_locked_borrow_reader (tbq);
  if (tbq->q != NULL)
    tbq_queue_discard (tbq->q, gst_tbqueue_release_record, full ? NULL : tbq);
  gst_tbqueue_locked_return_reader (tbq);
  tbq->last_query = FALSE;
  tbq->abandoned_query_seq = tbq->query_seq;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  gst_tbqueue_reset_levels (tbq);
  gst_tbqueue_locked_restore_thresholds (tbq);
  GST_TBQUEUE_BROADCAST (tbq, item_del);
}

/* flush-on-eos: drop everything queued so far, from the upstream thread.
 * What is still in the source layer is waited for with qlock released and
 * the reader lent, so the src task cannot push it meanwhile. */
void
gst_tbqueue_locked_flush_from_upstream (GstTbQueue * tbq)
{
  gst_tbqueue_locked_borrow_reader (tbq);
  for (;;) {
    locked_drop_visible (tbq);
    if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
      break;
    if (!gst_tbqueue_locked_wait_copied (tbq, DEQUEUE_WAIT_WRITER))
      break;
  }
  gst_tbqueue_locked_return_reader (tbq);
  gst_tbqueue_locked_restore_thresholds (tbq);
  tbq->head_needs_discont = tbq->tail_needs_discont = FALSE;
}

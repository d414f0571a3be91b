/* tbqueue dequeue: records back into buffers, buffer lists, events and
 * queries; counting them out; dropping them; flushing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whoever holds qlock takes records: the src task to push them, a leak or
 * a flush to drop them.  An item leaves the levels when it is taken, a
 * buffer list when it is whole (threads, locks, and lists:
 * gsttbqueue-private.h).  What leaky=downstream drops, and how it counts
 * it, is gsttbqueue-leaks.c's: this file only offers it the oldest record
 * and the list being gathered, and hands the src task's dequeue the rest
 * of a list whose beginning went (DEQUEUE_REST) for it to drop.
 */
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-levels.h"
#include "gsttbqmemory.h"
#include "gsttbqrecord.h"

/* ---- records to items ---- */

/* qlock: the item leaves the queue. */
static void
locked_count_out (GstTbQueue * tbq, const GstTbqItem * item)
{
  TBQ_ADD (tbq->out_items, 1);
  if (item->type != GST_TBQ_RECORD_QUERY)
    gst_tbqueue_locked_level_out (tbq, item->object, item->size);
}

/* qlock: what the reader said when it gave no record.  TBQ_IO_ERROR is
 * not "nothing yet": the next records are in a unit of the spill file
 * that cannot be read back, nothing after it will ever be visible, and
 * the src task posts the error (spill_read_failed, until a flush
 * discards).  Anything else: nothing is visible yet. */
static void
locked_note_no_record (GstTbQueue * tbq, TbqStatus st)
{
  if (G_UNLIKELY (st == TBQ_IO_ERROR))
    tbq->spill_read_failed = TRUE;
}

/* qlock: take the next visible record as an item, not counted out yet.
 * FALSE when nothing is visible (or, spill_read_failed, never will be).
 * A record that cannot be read (it cannot happen: the element writes
 * every record) and a query whose sender gave up are counted out and come
 * back with no object. */
static gboolean
locked_take_record (GstTbQueue * tbq, GstTbqItem * item)
{
  TbqRecord rec;
  TbqStatus st = tbq_reader_next (tbq->reader, &rec);

  if (st != TBQ_OK) {
    locked_note_no_record (tbq, st);
    return FALSE;
  }
  if (G_UNLIKELY (!gst_tbq_record_read (&rec, item)))
    goto malformed;
  if (item->type == GST_TBQ_RECORD_QUERY
      && item->seq <= tbq->abandoned_query_seq)
    goto abandoned_query;
  return TRUE;

malformed:
  g_critical ("%s: dropping a malformed record (type %u, %u bytes)",
      GST_OBJECT_NAME (tbq), rec.type, rec.size);
  TBQ_ADD (tbq->out_items, 1);
  item->object = NULL;
  return TRUE;
abandoned_query:
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "skipping abandoned query");
  TBQ_ADD (tbq->out_items, 1);
  item->object = NULL;
  return TRUE;
}

/* qlock: the list position of the next visible record (0 for anything
 * but a list member).  FALSE when nothing is visible (or, as for
 * locked_take_record(), never will be). */
gboolean
gst_tbqueue_locked_peek_position (GstTbQueue * tbq, guint32 * position)
{
  TbqRecord rec;
  TbqStatus st = tbq_reader_peek (tbq->reader, &rec);

  if (st != TBQ_OK) {
    locked_note_no_record (tbq, st);
    return FALSE;
  }
  *position = gst_tbq_record_list_position (&rec);
  return TRUE;
}

/* qlock: take and count out the next visible item, records of lists one
 * by one (for dropping).  FALSE when nothing is visible; TRUE with
 * item->object NULL for a record that was skipped. */
gboolean
gst_tbqueue_locked_take_item (GstTbQueue * tbq, GstTbqItem * item)
{
  if (!locked_take_record (tbq, item))
    return FALSE;
  if (item->object != NULL)
    locked_count_out (tbq, item);
  return TRUE;
}

/* ---- pool buffers held (the copy rule: gsttbqueue-sink.c) ---- */

/* How many pool buffers `data` holds (a buffer or a buffer list;
 * 0 for anything else): every one was counted in when it was written by
 * reference, and copies never belong to a pool.  Taken before anything
 * may replace a buffer (a DISCONT flag on a shared one makes a copy). */
guint
gst_tbqueue_pool_buffers (GstMiniObject * data)
{
  guint i, n, held = 0;

  if (GST_IS_BUFFER (data))
    return GST_BUFFER_CAST (data)->pool != NULL;
  if (!GST_IS_BUFFER_LIST (data))
    return 0;
  n = gst_buffer_list_length (GST_BUFFER_LIST_CAST (data));
  for (i = 0; i < n; i++)
    held += gst_buffer_list_get (GST_BUFFER_LIST_CAST (data), i)->pool != NULL;
  return held;
}

/* qlock: `n` pool buffers were pushed or dropped: the element no longer
 * holds them. */
void
gst_tbqueue_locked_pool_release (GstTbQueue * tbq, guint n)
{
  if (n > 0)
    TBQ_ADD (tbq->pool_refs_out, n);
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
    GST_TBQUEUE_GET_CLASS (tbq)->locked_store_sticky (tbq, event);
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
    gst_tbqueue_locked_pool_release (tbq,
        gst_tbqueue_pool_buffers (item));
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
  GstMiniObject *obj = gst_tbq_record_owned (type, data, size);

  if (obj == NULL)
    return;
  if (tbq != NULL && GST_IS_EVENT (obj))
    drop_event (tbq, GST_EVENT_CAST (obj), TRUE);
  else
    gst_mini_object_unref (obj);
}

/* ---- buffer lists ---- */

static gboolean
count_out_member (GstBuffer ** buffer, guint i, gpointer user_data)
{
  gst_tbqueue_locked_level_out (user_data, GST_MINI_OBJECT_CAST (*buffer),
      gst_buffer_get_size (*buffer));
  return TRUE;
}

/* qlock: the list being gathered leaves the queue; it is returned. */
static GstBufferList *
locked_take_partial (GstTbQueue * tbq)
{
  GstBufferList *bl = tbq->partial;

  tbq->partial = NULL;
  TBQ_ADD (tbq->out_items, gst_buffer_list_length (bl));
  gst_buffer_list_foreach (bl, count_out_member, tbq);
  return bl;
}

/* qlock: the list the src task is gathering, if any, leaves the queue
 * before it is whole (a leak or a flush drops it), counted out: returned,
 * NULL when there is none.  The rest of it is dropped as it shows up
 * (leaking_list, DEQUEUE_REST). */
GstBufferList *
gst_tbqueue_locked_remove_partial (GstTbQueue * tbq)
{
  if (tbq->partial == NULL)
    return NULL;
  tbq->leaking_list = TRUE;
  return locked_take_partial (tbq);
}

/* qlock: a flush drops the list being gathered, if any. */
static void
locked_flush_partial (GstTbQueue * tbq)
{
  GstBufferList *bl = gst_tbqueue_locked_remove_partial (tbq);

  if (bl != NULL)
    gst_tbqueue_locked_drop_item (tbq, GST_MINI_OBJECT_CAST (bl), TRUE);
}

/* qlock: the members gathered so far stop holding sink blocks: the copies
 * among them get memory of their own.  The rest of the list may need a
 * sink block, and those members might be what keeps the sink pool full
 * (the copy task then waits for the reader, which waits for the rest). */
static void
locked_unpin_partial (GstTbQueue * tbq)
{
  guint i, n = gst_buffer_list_length (tbq->partial);

  for (i = 0; i < n; i++) {
    GstBuffer *b = gst_buffer_list_get (tbq->partial, i);

    if (gst_tbq_buffer_is_pinned (b)) {
      GstBuffer *copy = gst_tbq_buffer_unpin (gst_buffer_ref (b));

      gst_buffer_list_remove (tbq->partial, i, 1);
      gst_buffer_list_insert (tbq->partial, i, copy);
    }
  }
}

/* qlock: nothing is queued but the list being gathered: its rest was
 * not written (the upstream thread stopped part-way and uncounted it). */
static gboolean
locked_partial_is_all (GstTbQueue * tbq)
{
  return TBQ_LOAD (tbq->in_items) - TBQ_LOAD (tbq->out_items)
      == gst_buffer_list_length (tbq->partial);
}

/* qlock: whether the sink pool can take the next member of the list
 * being gathered, judged by the largest one gathered so far (a list's
 * members are alike: frames, or packets).  A frame's record needs room
 * in the budget for its extent, which the members gathered may be
 * holding: one more sink block is not enough. */
static gboolean
locked_sink_can_take_rest (GstTbQueue * tbq)
{
  guint i, n = gst_buffer_list_length (tbq->partial);
  gsize largest = 0;

  for (i = 0; i < n; i++)
    largest = MAX (largest,
        gst_buffer_get_size (gst_buffer_list_get (tbq->partial, i)));
  return tbq_queue_sink_can_take_record (tbq->q, (guint32) MIN (largest,
          G_MAXUINT32));
}

/* Src task, qlock: gather the rest of the list begun in `partial`; its
 * records follow (one writer session), some maybe still on their way.
 * A list cut short when it was written ends at the next record that is
 * not its rest, or when nothing else is queued.  DEQUEUE_AGAIN when a leak
 * took the list meanwhile; DEQUEUE_SPILL_FAILED when its rest cannot be
 * read back (the members gathered stay in `partial`, queued, for the
 * flush or the state change that follows the error). */
static DequeueResult
locked_gather (GstTbQueue * tbq, GstMiniObject ** out)
{
  for (;;) {
    guint32 key = tbq_reader_prepare_wait (tbq->reader);
    guint32 position;
    GstTbqItem item;

    if (!gst_tbqueue_locked_peek_position (tbq, &position)) {
      if (G_UNLIKELY (tbq->spill_read_failed))
        return DEQUEUE_SPILL_FAILED;
      if (locked_partial_is_all (tbq))
        break;
      if (!locked_sink_can_take_rest (tbq))
        locked_unpin_partial (tbq);
      gst_tbqueue_locked_wait_sink (tbq, key);
      if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK) {
        /* Whatever is left of the list goes with the flush. */
        locked_flush_partial (tbq);
        return DEQUEUE_FLUSHING;
      }
      if (tbq->partial == NULL)
        return DEQUEUE_AGAIN;
      continue;
    }
    if (!GST_TBQ_LIST_IS_REST (position))
      break;
    /* Peeked: it is there. */
    if (G_UNLIKELY (!locked_take_record (tbq, &item) || item.object == NULL))
      continue;
    gst_buffer_list_add (tbq->partial, GST_BUFFER_CAST (item.object));
    if (item.list & GST_TBQ_LIST_LAST)
      break;
  }
  *out = GST_MINI_OBJECT_CAST (locked_take_partial (tbq));
  return DEQUEUE_ITEM;
}

/* ---- the src task's dequeue ---- */

/* Src task, qlock: dequeue one item to push: a buffer, a whole buffer
 * list, an event or a query, in item->object.  DEQUEUE_EMPTY when nothing
 * is visible (records on their way: wait for the copier),
 * DEQUEUE_SPILL_FAILED when the next records cannot be read back from the
 * spill file, DEQUEUE_AGAIN when a record was dropped or skipped,
 * DEQUEUE_REST when `item` is a
 * record of the rest of a list whose beginning went (leaked, flushed, or
 * never written: a list cut by leaky=upstream), counted out: the caller
 * drops it as a leak (gst_tbqueue_locked_leak_rest). */
DequeueResult
gst_tbqueue_locked_dequeue (GstTbQueue * tbq, GstTbqItem * item)
{
  if (!locked_take_record (tbq, item))
    return G_UNLIKELY (tbq->spill_read_failed) ? DEQUEUE_SPILL_FAILED
        : DEQUEUE_EMPTY;
  if (item->object == NULL)
    return DEQUEUE_AGAIN;
  if (G_UNLIKELY (tbq->flush_until != 0)) {
    /* Counted in before a flush-on-eos: flushed. */
    if (TBQ_LOAD (tbq->out_items) < tbq->flush_until) {
      locked_count_out (tbq, item);
      gst_tbqueue_locked_drop_item (tbq, item->object, TRUE);
      return DEQUEUE_AGAIN;
    }
    tbq->flush_until = 0;
  }
  if (G_UNLIKELY (GST_TBQ_LIST_IS_REST (item->list))) {
    locked_count_out (tbq, item);
    return DEQUEUE_REST;
  }
  tbq->leaking_list = FALSE;
  if (G_LIKELY (!(item->list & GST_TBQ_LIST_FIRST))) {
    locked_count_out (tbq, item);
    return DEQUEUE_ITEM;
  }
  tbq->partial = gst_buffer_list_new ();
  gst_buffer_list_add (tbq->partial, GST_BUFFER_CAST (item->object));
  if (item->list & GST_TBQ_LIST_LAST) {
    /* A list of one stays a list, as with queue. */
    item->object = GST_MINI_OBJECT_CAST (locked_take_partial (tbq));
    return DEQUEUE_ITEM;
  }
  return locked_gather (tbq, &item->object);
}

/* ---- flushing ---- */

/* Drop every visible item (flushing): the src side's flush, while the
 * writer may still run; the rest goes with the sink side's flush. */
void
gst_tbqueue_locked_drain_visible (GstTbQueue * tbq)
{
  GstTbqItem item;

  locked_flush_partial (tbq);
  while (gst_tbqueue_locked_take_item (tbq, &item))
    if (item.object != NULL)
      gst_tbqueue_locked_drop_item (tbq, item.object, TRUE);
}

/* Everything queued goes.  The writer, the copy task and the src task are
 * idle (the sink pad's stream lock is held or the pad inactive, both tasks
 * paused).  `full`: the pads are being deactivated, sticky events go too. */
void
gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full)
{
  /* A thread waiting for the copier (a property change) is on its way
   * out: the flow change ended its wait. */
  gst_tbqueue_locked_wait_reader_idle (tbq);
  if (tbq->partial != NULL)
    gst_buffer_list_unref (tbq->partial);
  tbq->partial = NULL;
  tbq->leaking_list = FALSE;
  TBQ_STORE (tbq->leak_pending, FALSE);
  if (tbq->q != NULL)
    tbq_queue_discard (tbq->q, gst_tbqueue_release_record, full ? NULL : tbq);
  /* The discard emptied the spill file: the reader reads again. */
  tbq->spill_read_failed = FALSE;
  tbq->last_query = FALSE;
  tbq->abandoned_query_seq = tbq->query_seq;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  gst_tbqueue_reset_levels (tbq);
  gst_tbqueue_locked_restore_thresholds (tbq);
  GST_TBQUEUE_BROADCAST (tbq, item_del);
}

/* flush-on-eos: drop everything queued so far, from the upstream thread.
 * Everything counted in up to here goes, whoever takes it: the src task
 * drops what it dequeues below flush_until, as it shows up (it runs while
 * this waits with qlock released, and would push what the copy task
 * moved meanwhile).  What is still in the source layer is published and
 * waited for; only when the copy task cannot move it (the sink pool full
 * and held downstream) or has nothing to move, or when it is behind a
 * unit of the spill file that cannot be read back (it never shows up: the
 * src task posts the error), is it left to the src task alone: EOS never
 * waits for downstream, nor for nothing. */
void
gst_tbqueue_locked_flush_from_upstream (GstTbQueue * tbq)
{
  tbq->flush_until = TBQ_LOAD (tbq->in_items);
  for (;;) {
    guint32 key = tbq_reader_prepare_wait (tbq->reader);
    gboolean moving;

    tbq_writer_flush (tbq->writer);
    /* Looked at before the drain: with nothing moving, everything
     * published is visible, and the drain takes it all. */
    moving = gst_tbqueue_locked_copier_has_work (tbq);
    gst_tbqueue_locked_drain_visible (tbq);
    tbq->leaking_list = FALSE;
    if (TBQ_LOAD (tbq->in_items) == TBQ_LOAD (tbq->out_items))
      break;
    if (!moving || tbq->spill_read_failed
        || !tbq_queue_sink_can_take (tbq->q))
      break;
    STATUS (tbq, tbq->sinkpad, "wait for the copy task");
    gst_tbqueue_locked_wait_sink (tbq, key);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      break;
  }
  gst_tbqueue_locked_restore_thresholds (tbq);
  tbq->head_needs_discont = tbq->tail_needs_discont = FALSE;
  GST_TBQUEUE_BROADCAST (tbq, item_del);
}

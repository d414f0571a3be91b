/* tbqueue sink side: the chain functions (the libtbq writer), sink events
 * and queries, sink pad activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A buffer's way: the flow and the levels are checked (the leaky modes
 * when full: gsttbqueue-leaks.c), it is counted in, and written as one
 * record (gsttbqrecord.c) into the source pool.  Threads and locks:
 * gsttbqueue-private.h.
 */
#include "gsttbqueue-sink.h"
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"
#include "gsttbqueue-src.h"
#include "gsttbqrecord.h"

/* ---- writing records ---- */

typedef struct
{
  guint16 type;
  guint32 size;
  void **data;
} ReserveArgs;

static TbqStatus
retry_reserve (GstTbQueue * tbq, gpointer data)
{
  ReserveArgs *a = data;

  return tbq_writer_reserve (tbq->writer, a->type, a->size, a->data);
}

static G_NO_INLINE GstFlowReturn
sink_reserve_slow (GstTbQueue * tbq, TbqStatus st, guint16 type,
    guint32 size, void **data, gboolean is_buffer)
{
  ReserveArgs a = { type, size, data };

  if (st != TBQ_DROPPED)
    return gst_tbqueue_write_failed (tbq, st);
  return gst_tbqueue_wait_for_source_block (tbq, is_buffer, size,
      retry_reserve, &a);
}

/* Reserve a record: GST_FLOW_OK, GST_FLOW_CUSTOM_SUCCESS when a leaky mode
 * drops it (the source pool full behind a full sink pool), or the flow
 * that stopped it. */
static inline GstFlowReturn
sink_reserve (GstTbQueue * tbq, guint16 type, guint32 size, void **data,
    gboolean is_buffer)
{
  TbqStatus st = tbq_writer_reserve (tbq->writer, type, size, data);

  if (G_LIKELY (st == TBQ_OK))
    return GST_FLOW_OK;
  return sink_reserve_slow (tbq, st, type, size, data, is_buffer);
}

/* ---- the copy decision ---- */

/* The copy rule (transfer=auto).  A buffer of a GstBufferPool goes back to
 * its pool only when its last reference does: while the element (or
 * downstream, inside the src task's push) holds it, the pool's owner
 * cannot have it.  A bounded pool of N buffers (its config's max-buffers)
 * that has them all out makes its owner wait for one.  A source that is
 * not live (a file source, a decoder) then just waits, as behind queue:
 * that is backpressure, and a copy would only let it run further ahead
 * into a queue that fills anyway, for the CPU of the copy.  A live source
 * (a camera, a capture card, a sensor: the latency query upstream says
 * live) loses what it captures meanwhile.  So behind a live source the
 * element holds at most N / 2 of a bounded pool's buffers, rounded down,
 * counting the one the src task is pushing: a pool buffer that would be
 * one more is copied and goes back at once, and its owner always has at
 * least the other half.  Behind a source that is not live, and for an
 * unbounded pool (max-buffers 0: it never runs out), pool buffers are
 * referenced.  When downstream keeps up the element holds one or two
 * buffers at a time and copies nothing; the copy is paid only behind a
 * consumer that fell behind, where it buys the owner its buffer.
 *
 * Counted over every pool: the count is of all the pool buffers the
 * element holds by reference, whatever their pool, and the limit is that
 * of the pool of the last pool buffer that came in (its config and
 * upstream's liveness are read when that pool changes, and again after
 * new caps).  A buffer of another pool, or of a pool that comes back
 * (two sources through a funnel), never makes the count forget one that
 * is still held: it can only count too many (a copy), never too few. */

/* Upstream thread, no lock held: whether upstream is live (its answer to
 * a latency query; no answer: not live, as queue assumes nothing). */
static gboolean
sink_upstream_is_live (GstTbQueue * tbq)
{
  GstQuery *query = gst_query_new_latency ();
  gboolean live = FALSE;

  if (gst_pad_peer_query (tbq->sinkpad, query))
    gst_query_parse_latency (query, &live, NULL, NULL);
  gst_query_unref (query);
  return live;
}

/* Upstream thread: how many buffers of `pool` the element may hold. */
static gint64
sink_pool_cap (GstTbQueue * tbq, GstBufferPool * pool)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);
  guint max_buffers = 0;

  if (config == NULL || !gst_buffer_pool_config_get_params (config, NULL,
          NULL, NULL, &max_buffers))
    max_buffers = 0;
  if (config != NULL)
    gst_structure_free (config);
  if (max_buffers == 0 || !sink_upstream_is_live (tbq))
    return G_MAXINT64;
  return max_buffers / 2;
}

/* Upstream thread: a buffer of `pool` came in, a pool other than the
 * last one (or caps changed): read how many buffers the element may hold
 * behind it.  Under qlock with the pool, so that the stats read a pool
 * with its own limit. */
static G_NO_INLINE void
sink_adopt_pool (GstTbQueue * tbq, GstBufferPool * pool)
{
  gint64 cap = sink_pool_cap (tbq, pool);

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->held_pool = pool;
  TBQ_STORE (tbq->pool_cap, cap);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  tbq->pool_config_stale = FALSE;
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "buffers of pool %" GST_PTR_FORMAT
      " come in: holding at most %" G_GINT64_FORMAT " of them", pool, cap);
}

/* Upstream thread: whether holding one more buffer of `pool` would take
 * the element past what the rule allows. */
static inline gboolean
sink_pool_would_starve (GstTbQueue * tbq, GstBufferPool * pool)
{
  if (G_UNLIKELY (pool != tbq->held_pool || tbq->pool_config_stale))
    sink_adopt_pool (tbq, pool);
  return (gint64) gst_tbqueue_pool_buffers_held (tbq) + 1
      > TBQ_LOAD (tbq->pool_cap);
}

/* Upstream thread: `buffer` is about to be written by reference; one more
 * held if it belongs to a pool (in every transfer mode, for the stats).
 * Before its record is published, so that the src side never counts it
 * out before it was counted in: it counts out every buffer with a pool
 * that leaves (gst_tbqueue_pool_buffers), and only referenced
 * buffers have one. */
static inline void
sink_count_ref (GstTbQueue * tbq, GstBuffer * buffer)
{
  if (buffer->pool != NULL)
    TBQ_ADD (tbq->pool_refs_in, 1);
}

/* Whether the transfer mode wants `buffer` copied: copy always; auto when
 * it is small, or when it belongs to a buffer pool that holding it would
 * starve (the copy rule, above); reference never. */
static inline gboolean
sink_wants_copy (GstTbQueue * tbq, GstBuffer * buffer, gsize size)
{
  GstTbQueueTransfer transfer = TBQ_LOAD (tbq->transfer);

  /* What is copied can go to the spill file; a reference stays in memory. */
  if (G_UNLIKELY (tbq->spilling))
    return TRUE;
  if (transfer == GST_TBQUEUE_TRANSFER_AUTO)
    return size <= TBQ_LOAD (tbq->copy_threshold) || (buffer->pool != NULL
        && sink_pool_would_starve (tbq, buffer->pool));
  return transfer == GST_TBQUEUE_TRANSFER_COPY;
}

/* Upstream thread: a buffer too large for the sink pool travels by
 * reference; say so once per stream. */
static void
sink_warn_too_large (GstTbQueue * tbq, gsize size)
{
  guint64 sink_max, need;

  if (tbq->warned_too_large)
    return;
  tbq->warned_too_large = TRUE;
  GST_OBJECT_LOCK (tbq);
  sink_max = tbq->sink_max_bytes;
  GST_OBJECT_UNLOCK (tbq);
  /* The sink-max-bytes that holds it: the buffer rounded up to a page and
   * two sink blocks; while spilling a frame may take an eighth of the
   * pool, less four sink blocks and 128 KiB (docs/element.md). */
  need = (guint64) size + 4096 + 2 * (guint64) tbq->sink_block_size;
  if (tbq->spilling)
    need = 8 * ((guint64) size + 4096 + 4 * (guint64) tbq->sink_block_size
        + 2 * 65536);
  GST_ELEMENT_WARNING (tbq, RESOURCE, NO_SPACE_LEFT,
      ("A buffer of %" G_GSIZE_FORMAT " bytes is larger than the sink pool "
          "can hold (sink-max-bytes %" G_GUINT64_FORMAT ": buffers of up to "
          "about %" G_GSIZE_FORMAT " bytes); such buffers are queued by "
          "reference, so their owner gets them back only once they are "
          "pushed.", size, sink_max, tbq->limits.max_record),
      ("Raise sink-max-bytes to at least %" G_GUINT64_FORMAT " bytes to "
          "copy them (%s); keep max-size-bytes at or above the frames that "
          "must queue.", need, tbq->spilling ? "while spilling a frame may "
          "take an eighth of the sink pool, less four sink blocks and "
          "128 KiB" : "the buffer, plus two sink blocks"));
}

/* Upstream thread: the transfer mode wanted a copy that would lose
 * something, or that the sink pool cannot hold: counted, referenced. */
static G_NO_INLINE void
sink_copy_refused (GstTbQueue * tbq, GstTbqCopyVerdict verdict, gsize size)
{
  TBQ_ADD (tbq->counters.copy_fallbacks, 1);
  switch (verdict) {
    case GST_TBQ_COPY_SPECIAL_MEMORY:
      TBQ_ADD (tbq->counters.referenced_special, 1);
      break;
    case GST_TBQ_COPY_META:
      TBQ_ADD (tbq->counters.referenced_meta, 1);
      break;
    default:
      TBQ_ADD (tbq->counters.referenced_too_large, 1);
      sink_warn_too_large (tbq, size);
      break;
  }
}

/* A copy record for `buffer`, if it can be copied without loss; else the
 * reason is counted.  `list`: its position in a buffer list
 * (GST_TBQ_LIST_*) or 0. */
static inline gboolean
sink_plan_copy (GstTbQueue * tbq, GstBuffer * buffer, gsize size,
    guint32 list, GstTbqBufferPlan * r)
{
  GstTbqCopyVerdict verdict;

  verdict = G_UNLIKELY (tbq->special_caps) ? GST_TBQ_COPY_SPECIAL_MEMORY :
      gst_tbq_record_plan_copy (buffer, size, list, &tbq->limits, r);
  if (G_LIKELY (verdict == GST_TBQ_COPY_OK))
    return TRUE;
  sink_copy_refused (tbq, verdict, size);
  return FALSE;
}

/* The record `buffer` becomes, in a buffer list. */
static inline void
sink_plan_record (GstTbQueue * tbq, GstBuffer * buffer, gsize size,
    guint32 list, GstTbqBufferPlan * r)
{
  if (sink_wants_copy (tbq, buffer, size)
      && sink_plan_copy (tbq, buffer, size, list, r))
    return;
  gst_tbq_record_plan_ref (size, list, r);
}

/* Fill a reserved record; a reference record takes `buffer`'s reference. */
static inline void
sink_fill_record (GstTbQueue * tbq, void *rec, GstTbqBufferPlan * r,
    GstBuffer * buffer)
{
  if (r->type == GST_TBQ_RECORD_BUFFER_COPY) {
    gst_tbq_record_write_copy (rec, r);
    TBQ_ADD (tbq->counters.copied, 1);
    TBQ_ADD (tbq->counters.copied_bytes, r->payload);
  } else {
    sink_count_ref (tbq, buffer);
    gst_tbq_record_write_buffer_ref (rec, buffer, r->info, r->payload);
    TBQ_ADD (tbq->counters.referenced, 1);
  }
}

static inline void
sink_log_buffer (GstTbQueue * tbq, GstBuffer * buffer, gsize size,
    const gchar * how)
{
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received buffer %p of size %"
      G_GSIZE_FORMAT ", time %" GST_TIME_FORMAT ", %s", buffer, size,
      GST_TIME_ARGS (GST_BUFFER_DTS_OR_PTS (buffer)), how);
}

/* Write one buffer (owned) by reference: the record takes it.  Part of
 * the reference fast path: always inlined. */
G_ALWAYS_INLINE static inline GstFlowReturn
sink_write_ref (GstTbQueue * tbq, GstBuffer * buffer, gsize size)
{
  GstFlowReturn ret;
  gboolean pooled = buffer->pool != NULL;
  void *rec;

  sink_log_buffer (tbq, buffer, size, "reference");
  ret = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_REF, sizeof (GstTbqBufferRef),
      &rec, TRUE);
  if (G_UNLIKELY (ret != GST_FLOW_OK))
    return ret;
  sink_count_ref (tbq, buffer);
  gst_tbq_record_write_buffer_ref (rec, buffer, 0, size);
  TBQ_ADD (tbq->counters.referenced, 1);
  tbq_writer_commit (tbq->writer);
  /* A pool's buffer goes back only once pushed: its owner may be waiting
   * for it, so it ends a nap of the src task (no coalescing for it).
   * Offered to the src task, which pulls it: the copy task is not woken
   * for a record the src task takes anyway (one thread hop per frame, as
   * with queue). */
  if (G_UNLIKELY (pooled))
    tbq_writer_offer (tbq->writer);
  return GST_FLOW_OK;
}

/* Write one buffer (owned) by value if it can be copied without loss; it
 * goes back to upstream (its pool) while still hot.  Out of line: the
 * plan is large, and a reference must not pay for its stack frame. */
static G_NO_INLINE GstFlowReturn
sink_write_copy (GstTbQueue * tbq, GstBuffer * buffer, gsize size)
{
  GstTbqBufferPlan r;
  GstFlowReturn ret;
  void *rec;

  if (G_UNLIKELY (!sink_plan_copy (tbq, buffer, size, 0, &r)))
    return sink_write_ref (tbq, buffer, size);
  sink_log_buffer (tbq, buffer, size, "copy");
  ret = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_COPY, r.size, &rec, TRUE);
  if (G_UNLIKELY (ret != GST_FLOW_OK)) {
    gst_tbq_record_plan_clear (&r);
    if (ret != GST_TBQUEUE_FLOW_TOO_LARGE)
      return ret;
    sink_copy_refused (tbq, GST_TBQ_COPY_TOO_LARGE, size);
    return sink_write_ref (tbq, buffer, size);
  }
  gst_tbq_record_write_copy (rec, &r);
  TBQ_ADD (tbq->counters.copied, 1);
  TBQ_ADD (tbq->counters.copied_bytes, size);
  tbq_writer_commit (tbq->writer);
  gst_buffer_unref (buffer);
  return GST_FLOW_OK;
}

/* Write a small plain buffer (owned, its memory mapped in `map`) by
 * value, as it is most of the time: no plan, no metas, inline. */
static inline GstFlowReturn
sink_write_small (GstTbQueue * tbq, GstBuffer * buffer, GstMapInfo * map)
{
  guint32 info = gst_tbq_record_small_info (buffer, 0);
  GstFlowReturn ret;
  void *rec;

  sink_log_buffer (tbq, buffer, map->size, "copy");
  ret = sink_reserve (tbq, GST_TBQ_RECORD_BUFFER_COPY,
      (guint32) gst_tbq_record_copy_size (info, map->size), &rec, TRUE);
  if (G_UNLIKELY (ret != GST_FLOW_OK)) {
    gst_memory_unmap (map->memory, map);
    return ret;
  }
  /* Counted before the write, which unmaps `map`. */
  TBQ_ADD (tbq->counters.copied_bytes, map->size);
  gst_tbq_record_write_small (rec, buffer, map, info);
  TBQ_ADD (tbq->counters.copied, 1);
  tbq_writer_commit (tbq->writer);
  gst_buffer_unref (buffer);
  return GST_FLOW_OK;
}

/* Write one buffer (owned) as its record.  One test up front sends a
 * small plain buffer the short way; frames, metas, several memories and
 * other memory take the plan. */
static inline GstFlowReturn
sink_write_buffer (GstTbQueue * tbq, GstBuffer * buffer, gsize size)
{
  GstMapInfo map;

  if (!sink_wants_copy (tbq, buffer, size))
    return sink_write_ref (tbq, buffer, size);
  if (G_LIKELY (!tbq->special_caps
          && gst_tbq_record_map_small (buffer, size, &tbq->limits, &map)))
    return sink_write_small (tbq, buffer, &map);
  return sink_write_copy (tbq, buffer, size);
}

static TbqStatus
retry_next_block (GstTbQueue * tbq, gpointer data)
{
  return tbq_session_next_block (data);
}

/* The current block of a list's session has no room for a record of
 * `size` bytes (or the sink pool none for its extent): continue in a new
 * one.  A full source pool is waited for, or (leaky, with the sink pool
 * unable to take the record) ends the list here:
 * GST_FLOW_CUSTOM_SUCCESS. */
static GstFlowReturn
sink_list_next_block (GstTbQueue * tbq, TbqSession * s, guint32 size)
{
  TbqStatus st = tbq_session_next_block (s);

  if (st == TBQ_OK)
    return GST_FLOW_OK;
  if (st != TBQ_DROPPED)
    return gst_tbqueue_write_failed (tbq, st);
  return gst_tbqueue_wait_for_source_block (tbq, TRUE, size,
      retry_next_block, s);
}

/* One writer session for a whole list: published once, at its end.  The
 * buffers written are returned in *written: fewer than `n` when the flow
 * stopped, or when a leaky mode cut the list (ret then
 * GST_FLOW_CUSTOM_SUCCESS: the src side delivers what was written). */
static GstFlowReturn
sink_write_list (GstTbQueue * tbq, GstBufferList * list, guint n,
    guint * written)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean pooled = FALSE;
  TbqSession s;
  guint i;

  tbq_session_begin (tbq->writer, &s);
  for (i = 0; i < n; i++) {
    GstBuffer *buffer = gst_buffer_list_get (list, i);
    guint32 position = GST_TBQ_LIST_MEMBER | (i == 0 ? GST_TBQ_LIST_FIRST : 0)
        | (i == n - 1 ? GST_TBQ_LIST_LAST : 0);
    GstTbqBufferPlan r;
    void *rec;

    sink_plan_record (tbq, buffer, gst_buffer_get_size (buffer), position, &r);
    while ((rec = tbq_session_reserve (&s, r.type, r.size)) == NULL
        && (ret = sink_list_next_block (tbq, &s, r.size)) == GST_FLOW_OK);
    if (G_UNLIKELY (ret == GST_TBQUEUE_FLOW_TOO_LARGE)) {
      /* Too large for the sink pool now: by reference. */
      gsize size = gst_buffer_get_size (buffer);

      gst_tbq_record_plan_clear (&r);
      sink_copy_refused (tbq, GST_TBQ_COPY_TOO_LARGE, size);
      gst_tbq_record_plan_ref (size, position, &r);
      ret = GST_FLOW_OK;
      while ((rec = tbq_session_reserve (&s, r.type, r.size)) == NULL
          && (ret = sink_list_next_block (tbq, &s, r.size)) == GST_FLOW_OK);
    }
    if (rec == NULL) {
      gst_tbq_record_plan_clear (&r);
      break;
    }
    if (r.type == GST_TBQ_RECORD_BUFFER_REF && buffer->pool != NULL)
      pooled = TRUE;
    sink_fill_record (tbq, rec, &r,
        r.type == GST_TBQ_RECORD_BUFFER_REF ? gst_buffer_ref (buffer) : buffer);
  }
  tbq_session_end (&s);
  /* A pool's buffers end a nap of the src task, as sink_write_ref's. */
  if (G_UNLIKELY (pooled))
    tbq_writer_offer (tbq->writer);
  *written = i;
  return ret;
}

/* Write an event or a query record: never leaked, it waits for room, and
 * it is published at once whatever the batching (an event ends a burst). */
static GstFlowReturn
sink_write_serialized (GstTbQueue * tbq, GstMiniObject * item, guint32 seq)
{
  gboolean is_event = GST_IS_EVENT (item);
  void *rec;
  GstFlowReturn ret = sink_reserve (tbq,
      is_event ? GST_TBQ_RECORD_EVENT : GST_TBQ_RECORD_QUERY,
      is_event ? sizeof (GstTbqEventRef) : sizeof (GstTbqQueryRef), &rec,
      FALSE);

  if (ret != GST_FLOW_OK)
    return ret;
  if (is_event)
    gst_tbq_record_write_event (rec, GST_EVENT_CAST (item));
  else
    gst_tbq_record_write_query (rec, GST_QUERY_CAST (item), seq);
  tbq_writer_commit (tbq->writer);
  tbq_writer_flush (tbq->writer);
  return GST_FLOW_OK;
}

/* ---- buffers and buffer lists ---- */

/* Whether the upstream thread may queue: the flow, then the limits.
 * GST_FLOW_CUSTOM_SUCCESS: leaky=upstream drops the incoming data.  Part
 * of the buffer's fast path: always inlined. */
G_ALWAYS_INLINE static inline GstFlowReturn
sink_admit (GstTbQueue * tbq)
{
  GstFlowReturn ret = gst_tbqueue_sink_flow (tbq);

  if (G_UNLIKELY (ret != GST_FLOW_OK))
    return ret;
  if (G_UNLIKELY (gst_tbqueue_sink_is_filled (tbq)))
    return gst_tbqueue_make_room (tbq);
  return GST_FLOW_OK;
}

/* `buffers` of incoming data were not queued (and are unreffed already):
 * leaked on the upstream end, or refused with `ret`. */
static GstFlowReturn
sink_not_queued (GstTbQueue * tbq, guint buffers, GstFlowReturn ret)
{
  if (ret == GST_FLOW_CUSTOM_SUCCESS) {
    TBQ_ADD (tbq->counters.dropped_upstream, buffers);
    return GST_FLOW_OK;
  }
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "refusing data: %s",
      gst_flow_get_name (ret));
  return ret;
}

/* qlock: an item counted in was not written after all.  A src task that
 * looked meanwhile (an item counted in and not visible: it waits for the
 * copier; a buffer at the tail below a min-threshold-*: it waits for
 * more) looks again: there may be nothing to wait for now, or an event
 * at the tail to push. */
static void
locked_uncounted (GstTbQueue * tbq)
{
  if (tbq->reader != NULL)
    tbq_reader_wake (tbq->reader);
  GST_TBQUEUE_BROADCAST (tbq, sink_moved);
}

/* The buffer's record could not be written (`ret`): undo its accounting. */
static GstFlowReturn
sink_buffer_not_written (GstTbQueue * tbq, GstBuffer * buffer, gsize size,
    GstFlowReturn ret, GstClockTime old_position, gboolean old_tail)
{
  TBQ_ADD (tbq->in_buffers, -1);
  TBQ_ADD (tbq->in_bytes, -(guint64) size);
  TBQ_ADD (tbq->in_items, -1);
  if (!old_tail)
    TBQ_STORE (tbq->tail_is_buffer, FALSE);
  tbq->sink_segment.position = old_position;
  /* No peak to note: it was never queued. */
  gst_tbqueue_update_time_full (tbq, TRUE, FALSE);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  locked_uncounted (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  gst_buffer_unref (buffer);
  return sink_not_queued (tbq, 1, ret);
}

static inline GstFlowReturn
sink_enqueue_buffer (GstTbQueue * tbq, GstBuffer * buffer)
{
  GstClockTime old_position = tbq->sink_segment.position;
  gboolean old_tail = TBQ_LOAD (tbq->tail_is_buffer);
  gsize size = gst_buffer_get_size (buffer);
  GstFlowReturn ret;

  /* Counted in before it is published (gsttbqueue-private.h). */
  gst_tbqueue_level_in_buffers (tbq, 1, size);
  gst_tbqueue_advance (tbq, GST_BUFFER_DTS_OR_PTS (buffer),
      GST_BUFFER_DURATION (buffer), TRUE);
  ret = sink_write_buffer (tbq, buffer, size);
  if (G_LIKELY (ret == GST_FLOW_OK)) {
    if (G_UNLIKELY (tbq->batching))
      gst_tbqueue_sink_publish_if_idle (tbq);
    if (G_UNLIKELY (gst_tbqueue_buffering_on (tbq)))
      gst_tbqueue_buffering_in (tbq, size);
    return GST_FLOW_OK;
  }
  return sink_buffer_not_written (tbq, buffer, size, ret, old_position,
      old_tail);
}

static GstFlowReturn
gst_tbqueue_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  GstFlowReturn ret = sink_admit (tbq);

  if (G_UNLIKELY (ret != GST_FLOW_OK))
    goto out_not_queued;
  if (G_UNLIKELY (tbq->tail_needs_discont)) {
    buffer = gst_buffer_make_writable (buffer);
    GST_BUFFER_FLAG_SET (buffer, GST_BUFFER_FLAG_DISCONT);
    tbq->tail_needs_discont = FALSE;
  }
  return sink_enqueue_buffer (tbq, buffer);

out_not_queued:
  gst_buffer_unref (buffer);
  return sink_not_queued (tbq, 1, ret);
}

/* Buffers [written, n) of a list were not written: undo their accounting
 * (the sink position goes back to the end of the written ones).  A src
 * task gathering the list learns under qlock that its rest will not come
 * (gsttbqueue-dequeue.c, locked_gather). */
static void
sink_list_not_written (GstTbQueue * tbq, GstBufferList * list, guint n,
    guint written, GstClockTime old_position, gboolean old_tail)
{
  guint64 bytes = 0;
  guint i;

  for (i = written; i < n; i++)
    bytes += gst_buffer_get_size (gst_buffer_list_get (list, i));
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  TBQ_ADD (tbq->in_buffers, -(guint64) (n - written));
  TBQ_ADD (tbq->in_bytes, -bytes);
  TBQ_ADD (tbq->in_items, -(guint64) (n - written));
  if (written == 0 && !old_tail)
    TBQ_STORE (tbq->tail_is_buffer, FALSE);
  tbq->sink_segment.position = old_position;
  /* No peak to note: what was not written was never queued. */
  gst_tbqueue_apply_buffer_list (tbq, list, written, FALSE);
  locked_uncounted (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
}

static GstFlowReturn
sink_enqueue_list (GstTbQueue * tbq, GstBufferList * list, guint n)
{
  GstClockTime old_position = tbq->sink_segment.position;
  gboolean old_tail = TBQ_LOAD (tbq->tail_is_buffer);
  gsize bytes = gst_buffer_list_calculate_size (list);
  GstFlowReturn ret;
  guint written;

  /* Counted in before it is published (gsttbqueue-private.h). */
  gst_tbqueue_level_in_buffers (tbq, n, bytes);
  gst_tbqueue_apply_buffer_list (tbq, list, n, TRUE);
  ret = sink_write_list (tbq, list, n, &written);
  if (G_UNLIKELY (gst_tbqueue_buffering_on (tbq)) && written > 0)
    gst_tbqueue_buffering_in (tbq, bytes);
  if (G_LIKELY (written == n))
    return GST_FLOW_OK;
  sink_list_not_written (tbq, list, n, written, old_position, old_tail);
  if (written == 0 && ret == GST_FLOW_CUSTOM_SUCCESS)
    return sink_not_queued (tbq, n, ret);
  if (ret == GST_FLOW_CUSTOM_SUCCESS) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "buffer list cut after %u of %u "
        "buffers", written, n);
    return sink_not_queued (tbq, n - written, ret);
  }
  return ret;
}

static GstFlowReturn
gst_tbqueue_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  guint n = gst_buffer_list_length (list);
  GstFlowReturn ret = sink_admit (tbq);

  if (ret != GST_FLOW_OK)
    goto out_not_queued;
  if (n == 0)
    goto out_empty;
  if (tbq->tail_needs_discont) {
    list = gst_buffer_list_make_writable (list);
    GST_BUFFER_FLAG_SET (gst_buffer_list_get_writable (list, 0),
        GST_BUFFER_FLAG_DISCONT);
    tbq->tail_needs_discont = FALSE;
  }
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received buffer list %p with %u buffers",
      list, n);
  ret = sink_enqueue_list (tbq, list, n);
  gst_buffer_list_unref (list);
  return ret;

out_empty:
  gst_buffer_list_unref (list);
  return GST_FLOW_OK;
out_not_queued:
  gst_buffer_list_unref (list);
  return sink_not_queued (tbq, n, ret);
}

/* ---- events ---- */

/* qlock: count in a serialized event about to be written.  FALSE when
 * the flow stopped meanwhile (flush-on-eos waits for the copy task). */
static gboolean
locked_queue_event (GstTbQueue * tbq, GstEvent * event)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "got EOS from upstream");
      if (TBQ_LOAD (tbq->flush_on_eos)) {
        gst_tbqueue_locked_flush_from_upstream (tbq);
        if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
          return FALSE;
      } else {
        /* Let the src side drain everything. */
        gst_tbqueue_locked_clear_thresholds (tbq);
      }
      TBQ_STORE (tbq->eos, TRUE);
      break;
    case GST_EVENT_SEGMENT:
      TBQ_STORE (tbq->unexpected, FALSE);
      break;
    case GST_EVENT_STREAM_START:
      tbq->warned_too_large = FALSE;
      break;
    case GST_EVENT_CAPS:{
      GstCaps *caps;

      gst_event_parse_caps (event, &caps);
      tbq->special_caps = gst_tbq_record_caps_special_memory (caps);
      /* New caps, maybe a pool configured anew: read its size again. */
      tbq->pool_config_stale = TRUE;
      break;
    }
    default:
      break;
  }
  gst_tbqueue_locked_level_in_serialized (tbq, GST_MINI_OBJECT_CAST (event));
  return TRUE;
}

static GstFlowReturn
sink_enqueue_event (GstTbQueue * tbq, GstEvent * event)
{
  GstEventType type = GST_EVENT_TYPE (event);
  gboolean after_eos = FALSE, restart = FALSE, forward_eos;
  GstFlowReturn flow;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  /* STREAM_START and SEGMENT reset the EOS status of a pad, and start
   * the src side again: it stopped at the EOS it pushed, or at the EOS
   * downstream returned (every branch of a tbqsplit). */
  if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_EOS
      && (type == GST_EVENT_STREAM_START || type == GST_EVENT_SEGMENT)) {
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
    restart = TRUE;
  }
  flow = GST_TBQUEUE_FLOW (tbq);
  /* Sticky events but EOS are still queued: errors show with the data. */
  if (flow != GST_FLOW_OK && (!GST_EVENT_IS_STICKY (event)
          || type == GST_EVENT_EOS))
    goto out_flow_error;
  if (TBQ_LOAD (tbq->eos)) {
    if (type != GST_EVENT_STREAM_START && type != GST_EVENT_SEGMENT)
      goto out_eos;
    restart = after_eos = TRUE;
  }
  if (restart) {
    if (GST_TBQUEUE_GET_CLASS (tbq)->src_active (tbq))
      gst_tbqueue_locked_start_streaming (tbq);
    else
      gst_tbqueue_locked_forget_eos (tbq);
  }
  if (!locked_queue_event (tbq, event)) {
    flow = GST_TBQUEUE_FLOW (tbq);
    goto out_flow_error;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);

  if (after_eos)
    gst_tbqueue_buffering_set_eos (tbq, FALSE);
  if (type == GST_EVENT_TAG)
    gst_tbqueue_buffering_tags (tbq, event, TRUE);
  flow = sink_write_serialized (tbq, GST_MINI_OBJECT_CAST (event), 0);
  if (G_UNLIKELY (flow != GST_FLOW_OK)) {
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    TBQ_ADD (tbq->in_items, -1);
    locked_uncounted (tbq);
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    gst_event_unref (event);
  } else if (type == GST_EVENT_EOS) {
    /* Full: nothing more comes (100 %). */
    gst_tbqueue_buffering_set_eos (tbq, TRUE);
  }
  return flow;

out_flow_error:
  /* Downstream returned EOS for data (every branch of a tbqsplit did,
   * and none pushed an EOS): the EOS goes on, once, as queue's goes on
   * after the data it drops, so that the pipeline ends (an identity
   * eos-after behind a tbqjoin). */
  forward_eos = type == GST_EVENT_EOS && flow == GST_FLOW_EOS
      && tbq->downstream_ended;
  if (forward_eos)
    tbq->downstream_ended = FALSE;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (type == GST_EVENT_EOS && (flow == GST_FLOW_NOT_LINKED
          || flow < GST_FLOW_EOS))
    GST_ELEMENT_FLOW_ERROR (tbq, flow);
  if (forward_eos) {
    GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "downstream is EOS: EOS goes on");
    GST_TBQUEUE_GET_CLASS (tbq)->push_downstream (tbq, event);
    return flow;
  }
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq,
      "refusing event, we have a downstream flow error: %s",
      gst_flow_get_name (flow));
  gst_event_unref (event);
  return flow;
out_eos:
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "refusing event, we are EOS");
  gst_event_unref (event);
  return GST_FLOW_EOS;
}

/* FLUSH_START, both tasks stopped: as queue drops everything queued when
 * its task pauses for a flush, what is still in the source layer goes now
 * too, not at FLUSH_STOP, when the upstream thread is out of the element
 * (inside it, it holds the sink pad's stream lock and owns the writer; it
 * leaves at once, every wait interrupted, and the rest goes at
 * FLUSH_STOP).  A source's pool buffers come back at once: a source that
 * waits for one before it sends FLUSH_STOP gets it. */
static void
sink_flush_if_idle (GstTbQueue * tbq, GstPad * pad)
{
  if (!GST_PAD_STREAM_TRYLOCK (pad))
    return;
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  gst_tbqueue_locked_flush (tbq, FALSE);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_PAD_STREAM_UNLOCK (pad);
}

static GstFlowReturn
gst_tbqueue_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  gboolean ret = TRUE;

  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "received event '%s'",
      GST_EVENT_TYPE_NAME (event));

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      /* FLUSHING before downstream flushes: the src task then pushes
       * nothing after an item the flushing pads refused (GstPad lets a
       * serialized query through, which downstream would answer past an
       * event it never saw). */
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      ret = GST_TBQUEUE_GET_CLASS (tbq)->push_downstream (tbq, event);
      /* Also releases a query waiter, once the src task has stopped. */
      gst_tbqueue_stop_streaming (tbq);
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "loop and copy task stopped");
      sink_flush_if_idle (tbq, pad);
      break;
    case GST_EVENT_FLUSH_STOP:
      ret = GST_TBQUEUE_GET_CLASS (tbq)->push_downstream (tbq, event);
      /* Make sure nothing else touches the queue, even without FLUSH_START. */
      gst_tbqueue_stop_streaming (tbq);
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      gst_tbqueue_locked_flush (tbq, FALSE);
      gst_tbqueue_locked_start_streaming (tbq);
      STATUS (tbq, pad, "after flush");
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      /* Empty again: buffering starts over. */
      gst_tbqueue_buffering_restart (tbq);
      break;
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        return sink_enqueue_event (tbq, event);
      ret = GST_TBQUEUE_GET_CLASS (tbq)->push_downstream (tbq, event);
      break;
  }
  if (!ret) {
    GST_ERROR_OBJECT (tbq, "failed to push event");
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* ---- queries ---- */

gboolean
gst_tbqueue_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;
  gboolean res = FALSE, stalled = FALSE;
  guint32 seq;
  GstFlowReturn st;

  if (!GST_QUERY_IS_SERIALIZED (query))
    return gst_pad_query_default (pad, parent, query);
  if (G_UNLIKELY (gst_tbqueue_buffering_refuses_query (tbq, query))) {
    GST_DEBUG_OBJECT (tbq, "refusing query %p (%s): buffering, behind data",
        query, GST_QUERY_TYPE_NAME (query));
    return FALSE;
  }

  /* Serialized: it travels with the data and we wait for its answer. */
  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  seq = ++tbq->query_seq;
  gst_tbqueue_locked_level_in_serialized (tbq, GST_MINI_OBJECT_CAST (query));
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);

  GST_LOG_OBJECT (tbq, "queuing query %p (%s)", query,
      GST_QUERY_TYPE_NAME (query));
  st = sink_write_serialized (tbq, GST_MINI_OBJECT_CAST (query), seq);
  /* Behind data that downstream has to take first (buffers queued, or
   * one inside the src task's push), nothing comes in until it does:
   * buffering is full, or an application that waits for 100 % before it
   * lets downstream take data waits forever (gsttbqueue-buffering.c).
   * Behind events only (a stream's start: its caps, then the allocation
   * query) it is answered as soon as they are pushed. */
  if (st == GST_FLOW_OK && gst_tbqueue_buffering_on (tbq)
      && (gst_tbqueue_level_buffers (tbq) > 0
          || TBQ_LOAD (tbq->pushing_data))) {
    stalled = TRUE;
    gst_tbqueue_buffering_stall (tbq, TRUE);
  }
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (st != GST_FLOW_OK) {
    TBQ_ADD (tbq->in_items, -1);
    locked_uncounted (tbq);
    goto out_flushing;
  }
  /* Also while the src task has it downstream: a flush makes the flow not
   * OK before the src task stops, and a condition may wake spuriously. */
  while ((GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK
          && tbq->last_handled_query != query)
      || tbq->query_in_use == query)
    GST_TBQUEUE_WAIT (tbq, query_handled);
  tbq->last_handled_query = NULL;
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto out_abandoned;
  res = tbq->last_query;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  goto out;

out_abandoned:
  /* The record may still be queued: it must never be answered. */
  tbq->abandoned_query_seq = seq;
out_flushing:
  GST_DEBUG_OBJECT (tbq, "we are flushing");
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
out:
  if (stalled)
    gst_tbqueue_buffering_stall (tbq, FALSE);
  return res;
}

/* ---- activation ---- */

static gboolean
gst_tbqueue_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbQueue *tbq = (GstTbQueue *) parent;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active)
    return gst_tbqueue_start_streaming (tbq);
  /* Unblock the chain function, wait for it to leave, then flush. */
  gst_tbqueue_stop_streaming (tbq);
  GST_PAD_STREAM_LOCK (pad);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  gst_tbqueue_locked_flush (tbq, TRUE);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  GST_PAD_STREAM_UNLOCK (pad);
  return TRUE;
}

/* The sink side's pad functions. */
void
gst_tbqueue_sink_set_functions (GstPad * pad)
{
  gst_pad_set_activatemode_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbqueue_sink_activate_mode));
  gst_pad_set_chain_function (pad, GST_DEBUG_FUNCPTR (gst_tbqueue_chain));
  gst_pad_set_chain_list_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbqueue_chain_list));
  gst_pad_set_event_full_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbqueue_sink_event));
  gst_pad_set_query_function (pad, GST_DEBUG_FUNCPTR (gst_tbqueue_sink_query));
}

/* tbqueue leaks: what the element does when it is full (overrun, the
 * leaky modes, waiting for room and for the copy task).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_LEAKS_H__
#define __GST_TBQUEUE_LEAKS_H__

#include "gsttbqueue-private.h"
#include "gsttbqrecord.h"

G_BEGIN_DECLS

/* A write into the source pool, tried again (upstream thread). */
typedef TbqStatus (*GstTbqRetry) (GstTbQueue * tbq, gpointer data);

/* The upstream thread, when full. */
GstFlowReturn gst_tbqueue_make_room (GstTbQueue * tbq);
GstFlowReturn gst_tbqueue_wait_for_source_block (GstTbQueue * tbq,
    gboolean is_buffer, guint32 size, GstTbqRetry retry, gpointer data);

/* Properties (qlock). */
void gst_tbqueue_locked_limit_changed (GstTbQueue * tbq);
void gst_tbqueue_locked_set_leaky (GstTbQueue * tbq, GstTbQueueLeaky leaky);

/* The src task (qlock): the rest of a leaked list it dequeued
 * (DEQUEUE_REST), and what a lowered limit left to leak. */
void gst_tbqueue_locked_leak_rest (GstTbQueue * tbq, const GstTbqItem * item);
void gst_tbqueue_locked_leak_pending (GstTbQueue * tbq);

/* Src task, qlock, before it takes a record: a leak that had to wait for
 * the copy task is finished by whoever takes records next.  Inline: one
 * relaxed load per item when nothing is pending. */
static inline void
gst_tbqueue_locked_leak_if_pending (GstTbQueue * tbq)
{
  if (G_UNLIKELY (TBQ_LOAD (tbq->leak_pending)))
    gst_tbqueue_locked_leak_pending (tbq);
}

G_END_DECLS
#endif /* __GST_TBQUEUE_LEAKS_H__ */

/* tbqueue dequeue: records back into buffers, buffer lists, events and
 * queries; counting them out; dropping them; flushing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_DEQUEUE_H__
#define __GST_TBQUEUE_DEQUEUE_H__

#include "gsttbqueue-private.h"
#include "gsttbqrecord.h"

G_BEGIN_DECLS

typedef enum
{
  DEQUEUE_ITEM,                 /* an item to push */
  DEQUEUE_AGAIN,                /* a record was dropped or skipped: look again */
  DEQUEUE_REST,                 /* the rest of a list whose beginning went:
                                 * a leak, for gsttbqueue-leaks.c */
  DEQUEUE_EMPTY,                /* nothing visible: wait for the copier */
  DEQUEUE_SPILL_FAILED,         /* the next records are in a unit of the
                                 * spill file that cannot be read back:
                                 * nothing more will be visible */
  DEQUEUE_FLUSHING,             /* the flow stopped while gathering a list */
} DequeueResult;

DequeueResult gst_tbqueue_locked_dequeue (GstTbQueue * tbq,
    GstTbqItem * item);

/* The primitives a leak takes records with (gsttbqueue-leaks.c). */
gboolean gst_tbqueue_locked_take_item (GstTbQueue * tbq, GstTbqItem * item);
gboolean gst_tbqueue_locked_peek_position (GstTbQueue * tbq,
    guint32 * position);
GstBufferList *gst_tbqueue_locked_remove_partial (GstTbQueue * tbq);
guint gst_tbqueue_pool_buffers (GstMiniObject * data);
void gst_tbqueue_locked_pool_release (GstTbQueue * tbq, guint n);
void gst_tbqueue_locked_drop_item (GstTbQueue * tbq, GstMiniObject * item,
    gboolean flushing);

void gst_tbqueue_locked_drain_visible (GstTbQueue * tbq);
void gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full);
void gst_tbqueue_locked_flush_from_upstream (GstTbQueue * tbq);
void gst_tbqueue_release_record (uint16_t type, const void *data,
    uint32_t size, void *user_data);

G_END_DECLS
#endif /* __GST_TBQUEUE_DEQUEUE_H__ */

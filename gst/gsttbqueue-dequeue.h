/* tbqueue dequeue: records back into buffers, buffer lists, events and
 * queries; dropping them; flushing.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_DEQUEUE_H__
#define __GST_TBQUEUE_DEQUEUE_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* How a dequeue may wait for the rest of a buffer list. */
typedef enum
{
  DEQUEUE_NOWAIT,               /* take what is visible */
  DEQUEUE_WAIT_SRC,             /* src task: may sleep for the copier */
  DEQUEUE_WAIT_WRITER,          /* upstream thread with the reader lent: may
                                 * publish and wait for the copy task */
  DEQUEUE_WAIT_COPIER,          /* another thread with the reader lent: may
                                 * wait for the copy task */
} DequeueWait;

void gst_tbqueue_locked_borrow_reader (GstTbQueue * tbq);
void gst_tbqueue_locked_return_reader (GstTbQueue * tbq);
gboolean gst_tbqueue_locked_wait_reader (GstTbQueue * tbq);
gboolean gst_tbqueue_locked_wait_copied (GstTbQueue * tbq, DequeueWait wait);

GstMiniObject *gst_tbqueue_locked_dequeue (GstTbQueue * tbq, DequeueWait wait,
    gboolean * skipped);
void gst_tbqueue_locked_drop_item (GstTbQueue * tbq, GstMiniObject * item,
    gboolean flushing);

void gst_tbqueue_locked_drain_visible (GstTbQueue * tbq);
void gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full);
void gst_tbqueue_locked_flush_from_upstream (GstTbQueue * tbq);
void gst_tbqueue_release_record (uint16_t type, const void *data,
    uint32_t size, void *user_data);

G_END_DECLS
#endif /* __GST_TBQUEUE_DEQUEUE_H__ */

/* tbqueue: a two-layer drop-in replacement for queue
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element's public type and enums.  Its insides: gsttbqueue-private.h.
 */
#ifndef __GST_TBQUEUE_H__
#define __GST_TBQUEUE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TBQUEUE (gst_tbqueue_get_type ())
G_DECLARE_FINAL_TYPE (GstTbQueue, gst_tbqueue, GST, TBQUEUE, GstElement)

#define GST_TYPE_TBQUEUE_LEAKY (gst_tbqueue_leaky_get_type ())
#define GST_TYPE_TBQUEUE_TRANSFER (gst_tbqueue_transfer_get_type ())
#define GST_TYPE_TBQUEUE_SCHED_POLICY (gst_tbqueue_sched_policy_get_type ())

GType gst_tbqueue_leaky_get_type (void);
GType gst_tbqueue_transfer_get_type (void);
GType gst_tbqueue_sched_policy_get_type (void);

/* Same values and nicks as queue's GstQueueLeaky. */
typedef enum
{
  GST_TBQUEUE_NO_LEAK = 0,
  GST_TBQUEUE_LEAK_UPSTREAM = 1,
  GST_TBQUEUE_LEAK_DOWNSTREAM = 2
} GstTbQueueLeaky;

typedef enum
{
  GST_TBQUEUE_TRANSFER_AUTO = 0,
  GST_TBQUEUE_TRANSFER_COPY = 1,
  GST_TBQUEUE_TRANSFER_REFERENCE = 2
} GstTbQueueTransfer;

/* A task thread's scheduling policy (Linux's SCHED_*); inherit leaves the
 * thread as it was created. */
typedef enum
{
  GST_TBQUEUE_SCHED_INHERIT = 0,
  GST_TBQUEUE_SCHED_OTHER = 1,
  GST_TBQUEUE_SCHED_FIFO = 2,
  GST_TBQUEUE_SCHED_RR = 3,
  GST_TBQUEUE_SCHED_BATCH = 4,
  GST_TBQUEUE_SCHED_IDLE = 5
} GstTbQueueSchedPolicy;

G_END_DECLS
#endif /* __GST_TBQUEUE_H__ */

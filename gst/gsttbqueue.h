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

/**
 * GstTbQueueLeaky:
 * @GST_TBQUEUE_NO_LEAK: Not Leaky: a full queue blocks the pushing thread
 * @GST_TBQUEUE_LEAK_UPSTREAM: Leaky on upstream: a full queue drops the
 *   incoming buffer
 * @GST_TBQUEUE_LEAK_DOWNSTREAM: Leaky on downstream: a full queue drops
 *   the oldest queued buffers
 *
 * What a full tbqueue does (#GstTbQueue:leaky).  The values, nicks ("no",
 * "upstream", "downstream") and names are queue's (GstQueueLeaky), so a
 * pipeline description or an application that sets queue's leaky property
 * by value or nick works unchanged; code that names the GType must name
 * this one.
 *
 * Since: 0.1
 */
typedef enum
{
  GST_TBQUEUE_NO_LEAK = 0,
  GST_TBQUEUE_LEAK_UPSTREAM = 1,
  GST_TBQUEUE_LEAK_DOWNSTREAM = 2
} GstTbQueueLeaky;

/**
 * GstTbQueueTransfer:
 * @GST_TBQUEUE_TRANSFER_AUTO: copy plain system-memory buffers without metas
 *   up to #GstTbQueue:copy-threshold bytes, reference the rest
 * @GST_TBQUEUE_TRANSFER_COPY: copy every buffer that can be copied without
 *   loss (plain system memory, no metas), reference the rest
 * @GST_TBQUEUE_TRANSFER_REFERENCE: queue the buffers themselves, as queue
 *   does
 *
 * How buffers travel through a tbqueue (#GstTbQueue:transfer).  A copied
 * buffer is released upstream before the chain function returns, and
 * downstream receives a buffer whose memory lives in the sink pool.
 *
 * Since: 0.1
 */
typedef enum
{
  GST_TBQUEUE_TRANSFER_AUTO = 0,
  GST_TBQUEUE_TRANSFER_COPY = 1,
  GST_TBQUEUE_TRANSFER_REFERENCE = 2
} GstTbQueueTransfer;

/**
 * GstTbQueueSchedPolicy:
 * @GST_TBQUEUE_SCHED_INHERIT: leave the thread's policy and priority as
 *   they are (as GStreamer or the application's task pool created it)
 * @GST_TBQUEUE_SCHED_OTHER: SCHED_OTHER, the normal time-sharing policy;
 *   the priority is a nice value (-20 to 19)
 * @GST_TBQUEUE_SCHED_FIFO: SCHED_FIFO, real-time first in first out; the
 *   priority is 1 to 99
 * @GST_TBQUEUE_SCHED_RR: SCHED_RR, real-time round robin; the priority is
 *   1 to 99
 * @GST_TBQUEUE_SCHED_BATCH: SCHED_BATCH, for CPU-bound work; the priority
 *   is a nice value
 * @GST_TBQUEUE_SCHED_IDLE: SCHED_IDLE, only when nothing else runs
 *
 * The scheduling policy of one of tbqueue's task threads
 * (#GstTbQueue:copy-task-policy, #GstTbQueue:src-task-policy).  A policy
 * the system refuses is a warning message on the bus, and the thread runs
 * on as it was.
 *
 * Since: 0.2
 */
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

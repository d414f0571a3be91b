/* tbqueue enums: the types of the leaky, transfer and *-task-policy
 * properties.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf: GStreamer only.  The values are what the properties store; the
 * GTypes (gsttbqueue-enums.c) are what gst-inspect-1.0, gst-launch-1.0 and
 * bindings read their names and nicks from.
 */
#ifndef __GST_TBQUEUE_ENUMS_H__
#define __GST_TBQUEUE_ENUMS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

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
 * @GST_TBQUEUE_TRANSFER_AUTO: copy buffers of up to
 *   #GstTbQueue:copy-threshold bytes, and buffers of a #GstBufferPool,
 *   whatever their size, that would wait in the queue; reference the rest
 * @GST_TBQUEUE_TRANSFER_COPY: copy every buffer, of a pool or not, whatever
 *   its size
 * @GST_TBQUEUE_TRANSFER_REFERENCE: queue the buffers themselves, as queue
 *   does
 *
 * How buffers travel through a tbqueue (#GstTbQueue:transfer).  A copy
 * keeps flags, timestamps, offsets, every meta a deep copy keeps and the
 * memory layout; the copied buffer is released upstream before the chain
 * function returns, and downstream receives a buffer whose memory lives
 * in the sink pool.  In every mode a buffer that cannot be copied without
 * loss (special memory, a meta that cannot be copied, a buffer larger
 * than #GstTbQueue:sink-max-bytes allows) is referenced.
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
 * @GST_TBQUEUE_SCHED_INHERIT: leave the thread's policy, priority and nice
 *   value as they are (as GStreamer or the application's task pool created
 *   it)
 * @GST_TBQUEUE_SCHED_OTHER: SCHED_OTHER, the normal time-sharing policy,
 *   with the nice value (#GstTbQueue:copy-task-nice, -20 to 19)
 * @GST_TBQUEUE_SCHED_FIFO: SCHED_FIFO, real-time first in first out, with
 *   the real-time priority (#GstTbQueue:copy-task-priority, 1 to 99)
 * @GST_TBQUEUE_SCHED_RR: SCHED_RR, real-time round robin, with the
 *   real-time priority (1 to 99)
 * @GST_TBQUEUE_SCHED_BATCH: SCHED_BATCH, for CPU-bound work, with the nice
 *   value
 * @GST_TBQUEUE_SCHED_IDLE: SCHED_IDLE, only when nothing else runs; no
 *   priority, no nice value
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
#endif /* __GST_TBQUEUE_ENUMS_H__ */

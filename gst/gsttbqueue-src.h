/* tbqueue src side: the src pad task (the libtbq reader), src events and
 * queries, src pad activation; starting and stopping the streaming.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_SRC_H__
#define __GST_TBQUEUE_SRC_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

gboolean gst_tbqueue_start_streaming (GstTbQueue * tbq);
gboolean gst_tbqueue_locked_start_streaming (GstTbQueue * tbq);
void gst_tbqueue_locked_forget_eos (GstTbQueue * tbq);
/* qlock: after an EOS was taken out and pushed, whether a new stream was
 * queued behind it (only STREAM_START or SEGMENT may follow an EOS in,
 * and they restart the streaming): the task then goes on. */
gboolean gst_tbqueue_locked_stream_after_eos (GstTbQueue * tbq);
void gst_tbqueue_stop_streaming (GstTbQueue * tbq);

void gst_tbqueue_src_set_functions (GstPad * pad);
/* tbqueue's class: its src side is its one src pad. */
void gst_tbqueue_src_class_init (GstTbQueueClass * klass);

guint64 gst_tbqueue_locked_coalesce_bound (GstTbQueue * tbq);

/* ---- for a src side of other pads (gsttbqsplit.c) ---- */

/* How a buffer or a list is pushed on `pad`: gst_pad_push(), or the
 * caller's wrapping of it. */
typedef GstFlowReturn (*GstTbqPushFunc) (GstPad * pad, GstMiniObject * data,
    gpointer user_data);
GstFlowReturn gst_tbqueue_locked_push_data_on (GstTbQueue * tbq,
    GstPad * pad, GstMiniObject * data, GstTbqPushFunc push,
    gpointer user_data);
/* qlock: items are counted in but none is visible: wait for the copy
 * task (or collect what the writer holds back), with qlock released. */
void gst_tbqueue_locked_wait_for_records (GstTbQueue * tbq, guint32 key);
/* qlock: the next records cannot be read back from the spill file: the
 * error, posted with qlock released; GST_FLOW_ERROR. */
GstFlowReturn gst_tbqueue_locked_spill_failed (GstTbQueue * tbq);
/* A src pad's queries: scheduling, buffering, and the peer's answer with
 * what the queue holds (position) or adds (latency). */
gboolean gst_tbqueue_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
/* Emit one of queue's signals, unless silent.  No lock held. */
void gst_tbqueue_emit (GstTbQueue * tbq, guint signal);

G_END_DECLS
#endif /* __GST_TBQUEUE_SRC_H__ */

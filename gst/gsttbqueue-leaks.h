/* tbqueue leaks: what the element does when it is full (overrun, the
 * leaky modes, waiting for room and for the copy task).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_LEAKS_H__
#define __GST_TBQUEUE_LEAKS_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* A write into the source pool, tried again (upstream thread). */
typedef TbqStatus (*GstTbqRetry) (GstTbQueue * tbq, gpointer data);

GstFlowReturn gst_tbqueue_make_room (GstTbQueue * tbq);
GstFlowReturn gst_tbqueue_wait_for_source_block (GstTbQueue * tbq,
    gboolean is_buffer, guint32 size, GstTbqRetry retry, gpointer data);
void gst_tbqueue_locked_leak_after_change (GstTbQueue * tbq);
void gst_tbqueue_locked_leak_pending (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_LEAKS_H__ */

/* tbqueue leaks: what the element does when it is full (overrun, the
 * leaky modes, waiting for room).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_LEAKS_H__
#define __GST_TBQUEUE_LEAKS_H__

#include "gsttbqueue-private.h"
#include "gsttbqueue-dequeue.h"

G_BEGIN_DECLS

GstFlowReturn gst_tbqueue_make_room (GstTbQueue * tbq);
TbqStatus gst_tbqueue_reserve_when_full (GstTbQueue * tbq, guint16 type,
    guint32 size, void **data, gboolean is_buffer);
void gst_tbqueue_locked_leak_downstream (GstTbQueue * tbq, DequeueWait wait);

G_END_DECLS
#endif /* __GST_TBQUEUE_LEAKS_H__ */

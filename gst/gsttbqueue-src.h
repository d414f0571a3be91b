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
void gst_tbqueue_stop_streaming (GstTbQueue * tbq);

void gst_tbqueue_src_set_functions (GstPad * pad);
/* tbqueue's class: its src side is its one src pad. */
void gst_tbqueue_src_class_init (GstTbQueueClass * klass);

guint64 gst_tbqueue_locked_coalesce_bound (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_SRC_H__ */

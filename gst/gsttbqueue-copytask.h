/* tbqueue copy task: the GstTask that runs the libtbq copier, the flow
 * that starts and pauses it, and how libtbq's errors reach the bus.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_COPYTASK_H__
#define __GST_TBQUEUE_COPYTASK_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

void gst_tbqueue_copy_task_stop (GstTbQueue * tbq);
void gst_tbqueue_copy_task_wait_paused (GstTbQueue * tbq);
void gst_tbqueue_locked_set_flow (GstTbQueue * tbq, GstFlowReturn flow);
gboolean gst_tbqueue_post_no_memory (GstTbQueue * tbq, gboolean fatal);
GstFlowReturn gst_tbqueue_write_failed (GstTbQueue * tbq, TbqStatus st);

G_END_DECLS
#endif /* __GST_TBQUEUE_COPYTASK_H__ */

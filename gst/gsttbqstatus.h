/* The STREAM_STATUS message of a task an element runs.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf: GStreamer only.  tbqueue's tasks and tbqjoin's copy task post
 * what GstPad posts for a pad's task: the type, the element that owns the
 * task, and the task itself (an application may give it a thread pool on
 * CREATE, or place its thread on ENTER).
 */
#ifndef __GST_TBQ_STATUS_H__
#define __GST_TBQ_STATUS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Post STREAM_STATUS `type` for `task` of `element`, from `src` (the
 * element, or the pad whose task it is). */
void gst_tbq_post_stream_status (GstElement * element, GstObject * src,
    GstTask * task, GstStreamStatusType type);

G_END_DECLS
#endif /* __GST_TBQ_STATUS_H__ */

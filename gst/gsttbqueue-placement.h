/* tbqueue thread placement: the CPU set, scheduling policy, real-time
 * priority and nice value of the copy task and of the src pad task.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_PLACEMENT_H__
#define __GST_TBQUEUE_PLACEMENT_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

void gst_tbqueue_placement_init (GstTbQueue * tbq);
void gst_tbqueue_placement_clear (GstTbQueue * tbq);

/* Properties (any thread).  A setter only stores the value (a malformed
 * CPU list is noted, the last valid one stays); commit applies what was
 * set to the task threads that run, once every property of one
 * g_object_set () call is stored, and posts what cannot be applied. */
void gst_tbqueue_placement_set_cpus (GstTbQueue * tbq,
    GstTbQueueThread which, const gchar * cpus);
gchar *gst_tbqueue_placement_get_cpus (GstTbQueue * tbq,
    GstTbQueueThread which);
void gst_tbqueue_placement_set_policy (GstTbQueue * tbq,
    GstTbQueueThread which, GstTbQueueSchedPolicy policy);
void gst_tbqueue_placement_set_priority (GstTbQueue * tbq,
    GstTbQueueThread which, gint priority);
void gst_tbqueue_placement_set_nice (GstTbQueue * tbq,
    GstTbQueueThread which, gint nice);
void gst_tbqueue_placement_get_sched (GstTbQueue * tbq,
    GstTbQueueThread which, GstTbQueueSchedPolicy * policy, gint * priority,
    gint * nice);
void gst_tbqueue_placement_commit (GstTbQueue * tbq);
/* NULL when task `which`'s placement is at its defaults, else what it
 * asks for as text (equal texts: equal placements).  Takes the
 * placement lock. */
gchar *gst_tbqueue_placement_describe (GstTbQueue * tbq,
    GstTbQueueThread which);

/* The state-change thread: the tasks are about to start (READY_TO_PAUSED:
 * what is set and cannot be applied is a warning now, and from now on as
 * it is set), or have stopped (PAUSED_TO_READY). */
void gst_tbqueue_placement_start (GstTbQueue * tbq);
void gst_tbqueue_placement_stop (GstTbQueue * tbq);

/* In the task's own thread, when it starts (its enter callback, before
 * STREAM_STATUS ENTER) and before it leaves (what it changed is put back:
 * the thread may go back to a pool). */
void gst_tbqueue_placement_enter (GstTbQueue * tbq, GstTbQueueThread which);
void gst_tbqueue_placement_leave (GstTbQueue * tbq, GstTbQueueThread which);

/* Post STREAM_STATUS `type` for `task` from `src` (the element or its src
 * pad), the element owning it. */
void gst_tbqueue_post_stream_status (GstTbQueue * tbq, GstObject * src,
    GstTask * task, GstStreamStatusType type);

/* The src pad's task, from its STREAM_STATUS CREATE: placed as the copy
 * task is, in its enter callback (which posts ENTER as GstPad does). */
void gst_tbqueue_placement_adopt_pad_task (GstTbQueue * tbq, GstPad * pad,
    GstTask * task);

G_END_DECLS
#endif /* __GST_TBQUEUE_PLACEMENT_H__ */

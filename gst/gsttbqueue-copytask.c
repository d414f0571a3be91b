/* tbqueue copy task: the flow that lets the copy group serve the
 * element's two-layer queue or not, and how libtbq's errors reach the bus.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The copy work moves records from the writer's small source pool into
 * the large sink pool.  It is done by the copy group's task
 * (gsttbqueue-group.c), which serves every member whose two-layer queue
 * is not interrupted; so the element drives it by the queue's interrupt
 * alone, under qlock, by the flow (threads and locks:
 * gsttbqueue-private.h):
 *
 *  - gst_tbqueue_locked_set_flow (not OK) interrupts the queue: a pass the
 *    group's thread is making on it ends, and no other starts;
 *  - gst_tbqueue_locked_set_flow (OK) resumes it, when the src pad is
 *    active: the group serves it again;
 *  - gst_tbqueue_copy_task_stop () interrupts it and waits until no pass
 *    runs on it (gst_tbqueue_copy_task_wait_paused () waits the same way
 *    after a flow change).
 *
 * No start or pause is lost: every interrupt and resume is made under
 * qlock, in the two functions above, so while qlock is free the queue is
 * served exactly when the flow is OK and the src pad is active.  The
 * flushing/state tests run this under ThreadSanitizer.
 */
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-placement.h"

/* Post libtbq's report of an allocation failure, if it has one it has not
 * given yet: a warning, or with `fatal` an error (streaming cannot go on).
 * TRUE when one was posted.  No qlock held (the bus may call back). */
gboolean
gst_tbqueue_post_no_memory (GstTbQueue * tbq, gboolean fatal)
{
  char msg[512];
  TbqStatus st;

  /* libtbq gives a spill read failure first: kept for the src task, which
   * posts it when it meets the damage in the data. */
  while ((st = tbq_queue_take_error (tbq->q, msg, sizeof msg))
      == TBQ_IO_ERROR) {
    GST_OBJECT_LOCK (tbq);
    g_free (tbq->spill_read_error);
    tbq->spill_read_error = g_strdup (msg);
    GST_OBJECT_UNLOCK (tbq);
  }
  if (st != TBQ_NO_MEMORY)
    return FALSE;
  if (fatal)
    GST_ELEMENT_ERROR (tbq, RESOURCE, NO_SPACE_LEFT,
        ("Cannot grow the queue's memory (%s)", msg), (NULL));
  else
    GST_ELEMENT_WARNING (tbq, RESOURCE, NO_SPACE_LEFT,
        ("Cannot grow the queue's memory (%s); the queue goes on with what "
            "it has", msg), (NULL));
  return TRUE;
}

/* Upstream thread: the flow for a write libtbq refused (`st`, not
 * TBQ_DROPPED).  Not a flow change (flushing or downstream's flow):
 * an error, posted with libtbq's reason. */
GstFlowReturn
gst_tbqueue_write_failed (GstTbQueue * tbq, TbqStatus st)
{
  GstFlowReturn ret = GST_TBQUEUE_FLOW (tbq);

  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "write failed: %s",
      tbq_status_to_string (st));
  if (ret != GST_FLOW_OK)
    return ret;
  if (st == TBQ_INTERRUPTED)
    return GST_FLOW_FLUSHING;   /* a flow change on its way */
  if (st == TBQ_TOO_LARGE)
    return GST_TBQUEUE_FLOW_TOO_LARGE;  /* the caller references it */
  if (st != TBQ_NO_MEMORY || !gst_tbqueue_post_no_memory (tbq, TRUE))
    GST_ELEMENT_ERROR (tbq, STREAM, FAILED,
        ("Cannot queue data: %s", tbq_status_to_string (st)), (NULL));
  return GST_FLOW_ERROR;
}

/* Wait until no pass of the group's thread runs on the queue (no qlock
 * held), after interrupting it if `interrupt`: an interrupted queue gets
 * no new pass before it is resumed.  `q` lives until close(), which comes
 * after this on the state-change thread, or is this thread. */
static void
copy_task_wait_out (GstTbQueue * tbq, gboolean interrupt)
{
  TbqQueue *q;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  q = tbq->q;
  if (q != NULL && interrupt)
    tbq_queue_interrupt (q);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (q != NULL)
    tbq_queue_wait_copier_idle (q);
}

/* Take the queue out of the group's service and wait until no pass runs
 * on it.  It stays out until the src pad is activated again. */
void
gst_tbqueue_copy_task_stop (GstTbQueue * tbq)
{
  copy_task_wait_out (tbq, TRUE);
}

/* After a flow change away from OK (which interrupted the queue), wait
 * until no pass runs on it: none starts before the flow is OK again. */
void
gst_tbqueue_copy_task_wait_paused (GstTbQueue * tbq)
{
  copy_task_wait_out (tbq, FALSE);
}

/* Set the flow, and with it the two-layer queue's interrupt and the copy
 * task's state (see the top of this file).  qlock held. */
void
gst_tbqueue_locked_set_flow (GstTbQueue * tbq, GstFlowReturn flow)
{
  GstTbQueueClass *klass = GST_TBQUEUE_GET_CLASS (tbq);

  TBQ_STORE (tbq->srcresult, flow);
  if (klass->locked_flow_changed != NULL)
    klass->locked_flow_changed (tbq, flow);
  if (tbq->q == NULL)
    return;
  if (flow != GST_FLOW_OK) {
    /* Unblock the writer, the copier and the reader wherever they wait;
     * the group passes the queue over. */
    tbq_queue_interrupt (tbq->q);
    GST_TBQUEUE_BROADCAST (tbq, item_del);
    GST_TBQUEUE_BROADCAST (tbq, sink_moved);
  } else if (GST_TBQUEUE_GET_CLASS (tbq)->src_active (tbq)) {
    tbq_queue_resume (tbq->q);
  }
}

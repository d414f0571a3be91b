/* tbqueue copy task: the GstTask that runs the libtbq copier, the flow
 * that starts and pauses it, and how libtbq's errors reach the bus.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The copy task moves records from the writer's small source pool into the
 * large sink pool: its function is one libtbq copier step, which sleeps
 * while there is nothing to move.  It is driven like the src pad task,
 * under qlock, by the flow alone (threads and locks:
 * gsttbqueue-private.h):
 *
 *  - gst_tbqueue_locked_set_flow (not OK) pauses the task, then interrupts
 *    the two-layer queue: a step that was sleeping returns INTERRUPTED and
 *    the task finds itself paused before it would run the function again.
 *  - gst_tbqueue_locked_set_flow (OK) resumes the queue, then starts the
 *    task, when the src pad is active.
 *  - gst_tbqueue_copy_task_stop () stops the task and interrupts the queue
 *    under qlock, then joins its thread without it.
 *
 * No start or pause is lost.  Every change of the task's state (start,
 * pause, stop) and of the queue's interrupt is made under qlock, in one of
 * the three functions above, and the task's function takes no lock of the
 * element, so these changes happen in one order, and the last one wins:
 *  - a pause is always paired with an interrupt, a start with a resume, in
 *    the same critical section; so while qlock is free, the task is started
 *    exactly when the flow is OK and the src pad is active, and then the
 *    queue is not interrupted;
 *  - a step that returns INTERRUPTED was interrupted after its task was
 *    paused or stopped (the interrupt is stored after the state change, and
 *    GstTask reads its state under its object lock before each call): the
 *    function is not called again until a start, and a start comes after a
 *    resume, so it never spins;
 *  - a start after a stop would spawn a new thread: stop comes only with
 *    the src pad's deactivation (the pad is already inactive then, so no
 *    start follows) and close(); pause is only applied to a started task,
 *    since pausing a stopped one spawns a thread too.
 * The flushing/state tests run this under ThreadSanitizer.
 */
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-placement.h"

static void
copy_task_func (gpointer data)
{
  GstTbQueue *tbq = data;
  /* TBQ_INTERRUPTED: the task is paused or stopped already (see above). */
  TbqStatus st = tbq_copier_step (tbq->q, -1);

  if (G_UNLIKELY (st == TBQ_NO_MEMORY)) {
    /* The sink pool could not grow: say so, once per failure.  It now
     * holds what it has (the next step waits for the reader to give a
     * block back, no retry loop); whoever waits for the copier looks at
     * the sink pool again and leaks or waits as the leaky mode says. */
    gst_tbqueue_post_no_memory (tbq, FALSE);
    tbq_reader_wake (tbq->reader);
  } else if (G_UNLIKELY (st == TBQ_BUSY)) {
    /* A waiting reader is moving records itself: one copier pass, which
     * never waits.  Let it finish rather than call again at once. */
    g_thread_yield ();
  }
}

/* Post libtbq's report of an allocation failure, if it has one it has not
 * given yet: a warning, or with `fatal` an error (streaming cannot go on).
 * TRUE when one was posted.  No qlock held (the bus may call back). */
gboolean
gst_tbqueue_post_no_memory (GstTbQueue * tbq, gboolean fatal)
{
  char msg[256];

  if (tbq_queue_take_error (tbq->q, msg, sizeof msg) != TBQ_NO_MEMORY)
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
  if (st != TBQ_NO_MEMORY || !gst_tbqueue_post_no_memory (tbq, TRUE))
    GST_ELEMENT_ERROR (tbq, STREAM, FAILED,
        ("Cannot queue data: %s", tbq_status_to_string (st)), (NULL));
  return GST_FLOW_ERROR;
}

static void
copy_task_stream_status (GstTbQueue * tbq, GstTask * task,
    GstStreamStatusType type)
{
  gst_tbqueue_post_stream_status (tbq, GST_OBJECT_CAST (tbq), task, type);
}

/* The thread is placed before ENTER is posted, so that an application's
 * sync handler sees it placed (and may change it). */
static void
copy_task_enter (GstTask * task, GThread * thread, gpointer user_data)
{
  gst_tbqueue_placement_enter (user_data, GST_TBQUEUE_COPY_TASK);
  copy_task_stream_status ((GstTbQueue *) user_data, task,
      GST_STREAM_STATUS_TYPE_ENTER);
}

static void
copy_task_leave (GstTask * task, GThread * thread, gpointer user_data)
{
  gst_tbqueue_placement_leave (user_data, GST_TBQUEUE_COPY_TASK);
  copy_task_stream_status ((GstTbQueue *) user_data, task,
      GST_STREAM_STATUS_TYPE_LEAVE);
}

/* A new, stopped copy task for the two-layer queue that open() is making
 * (it is published with the queue).  No lock held: posts a message. */
GstTask *
gst_tbqueue_copy_task_new (GstTbQueue * tbq)
{
  GstTask *task = gst_task_new (copy_task_func, tbq, NULL);
  gchar *name = g_strdup_printf ("%s:copier", GST_OBJECT_NAME (tbq));

  gst_object_set_name (GST_OBJECT_CAST (task), name);
  g_free (name);
  gst_task_set_lock (task, &tbq->copy_task_lock);
  gst_task_set_enter_callback (task, copy_task_enter, tbq, NULL);
  gst_task_set_leave_callback (task, copy_task_leave, tbq, NULL);
  copy_task_stream_status (tbq, task, GST_STREAM_STATUS_TYPE_CREATE);
  return task;
}

/* Stop the task and join its thread (no qlock held).  It stays stopped
 * until the src pad is activated again. */
void
gst_tbqueue_copy_task_stop (GstTbQueue * tbq)
{
  GstTask *task;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  task = tbq->copy_task;
  if (task != NULL) {
    gst_task_stop (task);
    /* Out of the step's wait, if it sleeps. */
    tbq_queue_interrupt (tbq->q);
    gst_object_ref (task);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (task != NULL) {
    gst_task_join (task);
    gst_object_unref (task);
  }
}

/* After a flow change away from OK, wait until the task's function has
 * returned (no qlock held): the task is paused or stopped, so it does not
 * run again before the flow is OK again. */
void
gst_tbqueue_copy_task_wait_paused (GstTbQueue * tbq)
{
  g_rec_mutex_lock (&tbq->copy_task_lock);
  g_rec_mutex_unlock (&tbq->copy_task_lock);
}

/* Set the flow, and with it the two-layer queue's interrupt and the copy
 * task's state (see the top of this file).  qlock held. */
void
gst_tbqueue_locked_set_flow (GstTbQueue * tbq, GstFlowReturn flow)
{
  TBQ_STORE (tbq->srcresult, flow);
  if (tbq->q == NULL)
    return;
  if (flow != GST_FLOW_OK) {
    if (gst_task_get_state (tbq->copy_task) == GST_TASK_STARTED)
      gst_task_pause (tbq->copy_task);
    /* Unblock the writer, the copier and the reader wherever they wait. */
    tbq_queue_interrupt (tbq->q);
    GST_TBQUEUE_BROADCAST (tbq, item_del);
    GST_TBQUEUE_BROADCAST (tbq, sink_moved);
  } else if (gst_pad_is_active (tbq->srcpad)) {
    tbq_queue_resume (tbq->q);
    gst_task_start (tbq->copy_task);
  }
}

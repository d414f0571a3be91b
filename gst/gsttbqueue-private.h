/* tbqueue internals shared by the element's source files.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_PRIVATE_H__
#define __GST_TBQUEUE_PRIVATE_H__

#include "gsttbqueue.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_tbqueue_debug);
GST_DEBUG_CATEGORY_EXTERN (gst_tbqueue_dataflow);
#define GST_CAT_DEFAULT gst_tbqueue_debug

enum
{
  SIGNAL_UNDERRUN,
  SIGNAL_RUNNING,
  SIGNAL_OVERRUN,
  SIGNAL_PUSHING,
  LAST_SIGNAL
};

extern guint gst_tbqueue_signals[LAST_SIGNAL];

#define TBQ_LOAD(field) atomic_load_explicit (&(field), memory_order_relaxed)
#define TBQ_STORE(field, v) atomic_store_explicit (&(field), (v), memory_order_relaxed)
/* Owner-only counter bump: no read-modify-write needed. */
#define TBQ_ADD(field, n) TBQ_STORE (field, TBQ_LOAD (field) + (n))

#define QLOCK(tbq) pthread_mutex_lock (&(tbq)->qlock)
#define QUNLOCK(tbq) pthread_mutex_unlock (&(tbq)->qlock)
#define QWAIT(tbq, cond) pthread_cond_wait (&(tbq)->cond, &(tbq)->qlock)
#define QSIGNAL(tbq, cond) pthread_cond_signal (&(tbq)->cond)
#define QBROADCAST(tbq, cond) pthread_cond_broadcast (&(tbq)->cond)

#define GST_TBQUEUE_FLOW(tbq) ((GstFlowReturn) TBQ_LOAD ((tbq)->srcresult))

/* Levels: everything between the sink and src pads, in both layers and in
 * flight in the copy task.  Read from any thread without a lock. */
static inline guint64
gst_tbqueue_level_buffers (GstTbQueue * tbq)
{
  guint64 out = TBQ_LOAD (tbq->out_buffers);
  guint64 in = TBQ_LOAD (tbq->in_buffers);

  return in > out ? in - out : 0;
}

static inline guint64
gst_tbqueue_level_bytes (GstTbQueue * tbq)
{
  guint64 out = TBQ_LOAD (tbq->out_bytes);
  guint64 in = TBQ_LOAD (tbq->in_bytes);

  return in > out ? in - out : 0;
}

static inline guint64
gst_tbqueue_level_time (GstTbQueue * tbq)
{
  gint64 src = TBQ_LOAD (tbq->srctime);
  gint64 sink = TBQ_LOAD (tbq->sinktime);

  if (GST_CLOCK_STIME_IS_VALID (src) && GST_CLOCK_STIME_IS_VALID (sink)
      && sink >= src)
    return (guint64) (sink - src);
  return 0;
}

static inline gboolean
gst_tbqueue_is_filled (GstTbQueue * tbq)
{
  guint max_buffers = TBQ_LOAD (tbq->max_buffers);
  guint max_bytes = TBQ_LOAD (tbq->max_bytes);
  guint64 max_time = TBQ_LOAD (tbq->max_time);

  return (max_buffers > 0 && gst_tbqueue_level_buffers (tbq) >= max_buffers)
      || (max_bytes > 0 && gst_tbqueue_level_bytes (tbq) >= max_bytes)
      || (max_time > 0 && gst_tbqueue_level_time (tbq) >= max_time);
}

/* Time levels, as queue: running time at the sink minus at the src. */

static inline gint64
segment_running_time (GstSegment * segment, GstClockTime val)
{
  if (GST_CLOCK_TIME_IS_VALID (val)) {
    gint sign = gst_segment_to_running_time_full (segment, GST_FORMAT_TIME,
        val, &val);

    if (sign > 0)
      return (gint64) val;
    if (sign < 0)
      return -(gint64) val;
  }
  return GST_CLOCK_STIME_NONE;
}

static inline void
update_time (GstTbQueue * tbq, gboolean sink)
{
  if (sink)
    TBQ_STORE (tbq->sinktime, segment_running_time (&tbq->sink_segment,
            tbq->sink_segment.position));
  else
    TBQ_STORE (tbq->srctime, segment_running_time (&tbq->src_segment,
            tbq->src_segment.position));
}

static inline void
apply_buffer (GstTbQueue * tbq, GstBuffer * buffer, gboolean sink)
{
  GstSegment *segment = sink ? &tbq->sink_segment : &tbq->src_segment;
  GstClockTime timestamp = GST_BUFFER_DTS_OR_PTS (buffer);
  GstClockTime duration = GST_BUFFER_DURATION (buffer);

  /* No timestamp: continuous with the previous one. */
  if (timestamp == GST_CLOCK_TIME_NONE)
    timestamp = segment->position;
  if (duration != GST_CLOCK_TIME_NONE)
    timestamp += duration;
  segment->position = timestamp;
  update_time (tbq, sink);
}

/* Longest wait, holding qlock, for the copy task to move what this thread
 * wrote; only on leaky=downstream and flush-on-eos slow paths. */
#define SYNC_TIMEOUT_NS (200 * GST_MSECOND)

#define DATAFLOW gst_tbqueue_dataflow

typedef enum
{
  DEQUEUE_NOWAIT,               /* take what is visible */
  DEQUEUE_WAIT_SRC,             /* src task: may sleep for the rest of a list */
  DEQUEUE_WAIT_WRITER,          /* upstream thread: may publish and wait for
                                 * the copier */
  DEQUEUE_WAIT_COPIER,          /* any other thread: may wait for the copier */
} DequeueWait;

/* gsttbqueue-items.c */
void gst_tbqueue_locked_set_flow (GstTbQueue * tbq, GstFlowReturn ret);
void gst_tbqueue_apply_segment (GstTbQueue * tbq, GstEvent * event,
    gboolean sink);
void gst_tbqueue_apply_gap (GstTbQueue * tbq, GstEvent * event, gboolean sink);
GstMiniObject *gst_tbqueue_locked_dequeue (GstTbQueue * tbq, DequeueWait wait,
    gboolean * skipped);
void gst_tbqueue_locked_drop_item (GstTbQueue * tbq, GstMiniObject * item,
    gboolean flushing);
void gst_tbqueue_locked_drain_visible (GstTbQueue * tbq);
void gst_tbqueue_locked_leak (GstTbQueue * tbq, DequeueWait wait);
void gst_tbqueue_locked_leak_oldest_block (GstTbQueue * tbq);
void gst_tbqueue_locked_flush (GstTbQueue * tbq, gboolean full);

/* gsttbqueue-src.c */
void gst_tbqueue_loop (GstPad * pad);

/* gsttbqueue-sink.c, gsttbqueue-src.c */
GstFlowReturn gst_tbqueue_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer);
GstFlowReturn gst_tbqueue_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list);
GstFlowReturn gst_tbqueue_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
gboolean gst_tbqueue_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
gboolean gst_tbqueue_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
gboolean gst_tbqueue_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
gboolean gst_tbqueue_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active);
gboolean gst_tbqueue_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active);
void gst_tbqueue_locked_leak_downstream (GstTbQueue * tbq);
void gst_tbqueue_reset_levels (GstTbQueue * tbq);

/* gsttbqueue-record.c */
void gst_tbqueue_record_init_once (void);
gboolean gst_tbqueue_buffer_copyable (GstTbQueue * tbq, GstBuffer * buffer,
    gsize size, GstTbQueueTransfer transfer);
/* The record's `info` for `buffer` (which fields it carries) and list
 * position; its header takes gst_tbq_buffer_header_size (info) bytes. */
guint32 gst_tbqueue_buffer_info (GstBuffer * buffer, guint32 list);
void gst_tbqueue_buffer_encode (GstBuffer * buffer, gsize size, guint32 info,
    void *record);
/* The buffer a copy record holds; *list: its list position, *size: its
 * payload bytes. */
GstBuffer *gst_tbqueue_buffer_decode (const TbqRecord * rec, guint32 * list,
    gsize * size);

/* gsttbqueue.c */
gboolean gst_tbqueue_open (GstTbQueue * tbq);
void gst_tbqueue_close (GstTbQueue * tbq);
void gst_tbqueue_copier_activate (GstTbQueue * tbq);
void gst_tbqueue_copier_start (GstTbQueue * tbq);
void gst_tbqueue_copier_pause (GstTbQueue * tbq);
void gst_tbqueue_copier_stop (GstTbQueue * tbq);

G_END_DECLS
#endif

/* tbqueue: a two-layer drop-in replacement for queue
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_H__
#define __GST_TBQUEUE_H__

#include <gst/gst.h>
#include <pthread.h>
#include <stdatomic.h>

#include "tbq.h"

G_BEGIN_DECLS

#define GST_TYPE_TBQUEUE (gst_tbqueue_get_type ())
G_DECLARE_FINAL_TYPE (GstTbQueue, gst_tbqueue, GST, TBQUEUE, GstElement)

#define GST_TYPE_TBQUEUE_LEAKY (gst_tbqueue_leaky_get_type ())
#define GST_TYPE_TBQUEUE_TRANSFER (gst_tbqueue_transfer_get_type ())

GType gst_tbqueue_leaky_get_type (void);
GType gst_tbqueue_transfer_get_type (void);

/* Same values and nicks as queue's GstQueueLeaky. */
typedef enum
{
  GST_TBQUEUE_NO_LEAK = 0,
  GST_TBQUEUE_LEAK_UPSTREAM = 1,
  GST_TBQUEUE_LEAK_DOWNSTREAM = 2
} GstTbQueueLeaky;

typedef enum
{
  GST_TBQUEUE_TRANSFER_AUTO = 0,
  GST_TBQUEUE_TRANSFER_COPY = 1,
  GST_TBQUEUE_TRANSFER_REFERENCE = 2
} GstTbQueueTransfer;

/* Counters of the element's own, besides libtbq's. */
typedef struct
{
  _Atomic guint64 copied;       /* buffers written by value */
  _Atomic guint64 referenced;   /* buffers written by reference */
  _Atomic guint64 copy_fallbacks;       /* transfer=copy buffers that had to be referenced */
  _Atomic guint64 dropped_upstream;     /* buffers leaked on the upstream end */
  _Atomic guint64 dropped_downstream;   /* buffers leaked on the downstream end */
  _Atomic guint64 overruns;
  _Atomic guint64 underruns;
  _Atomic guint64 level_waits;  /* upstream waits for the level to drop */
  _Atomic guint64 peak_buffers;
  _Atomic guint64 peak_bytes;
  _Atomic guint64 peak_time;
} GstTbQueueCounters;

struct _GstTbQueue
{
  GstElement element;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* Limits: written under qlock, read anywhere (relaxed). */
  _Atomic guint max_buffers;
  _Atomic guint max_bytes;
  _Atomic guint64 max_time;
  _Atomic guint min_buffers;    /* current thresholds (zeroed by EOS) */
  _Atomic guint min_bytes;
  _Atomic guint64 min_time;
  guint orig_min_buffers;       /* as set by the application */
  guint orig_min_bytes;
  guint64 orig_min_time;
  _Atomic gint leaky;
  _Atomic gboolean silent;
  _Atomic gboolean flush_on_eos;
  _Atomic gint transfer;
  _Atomic guint copy_threshold;

  /* Pool geometry: applies from the next READY->PAUSED (object lock). */
  guint source_block_size;
  guint source_blocks;
  guint sink_block_size;
  guint64 sink_min_bytes;
  guint64 sink_max_bytes;
  guint idle_blocks;
  guint publish_batch;
  guint64 pickup_interval;

  /* The two-layer queue, from READY->PAUSED to PAUSED->READY. */
  TbqQueue *q;
  TbqWriter *writer;            /* used under the sink pad's stream lock */
  TbqReader *reader;            /* used under qlock */
  guint max_copy;               /* largest payload a copy record carries */

  /* qlock guards the src side (reader, src segment, queries) and every
   * slow path of the sink side; the buffer fast path does not take it. */
  pthread_mutex_t qlock;        /* POSIX, so ThreadSanitizer sees it */
  pthread_cond_t item_del;      /* the level dropped (upstream waits) */
  pthread_cond_t query_handled;
  _Atomic gint srcresult;       /* GstFlowReturn; written under qlock */
  _Atomic gboolean eos;         /* EOS queued: refuse data */
  _Atomic gboolean unexpected;  /* downstream returned EOS */
  gboolean last_query;
  GstQuery *last_handled_query;
  guint32 query_seq;            /* serialized queries sent */
  guint32 abandoned_query_seq;  /* queries up to this one have no waiter */
  GstQuery *query_in_use;       /* downstream is answering it (src task) */
  gboolean waiting_del;         /* upstream waits on item_del */

  /* Sink side, owned by the thread holding the sink pad's stream lock.
   * The counters only grow; levels are in - out. */
  GstSegment sink_segment;
  gboolean tail_needs_discont;
  _Atomic guint64 in_buffers;
  _Atomic guint64 in_bytes;
  _Atomic guint64 in_items;
  _Atomic gint64 sinktime;      /* running time at the sink, or GST_CLOCK_STIME_NONE */
  _Atomic gboolean tail_is_buffer;      /* last item queued is a buffer */
  /* The sink side's copy of the src side's counters, refreshed only now and
   * then so that a buffer reads no other core's cache lines.  It is never
   * ahead of the real counters: a level computed from it is never below the
   * real level (see sink_is_filled). */
  guint64 seen_out_buffers;
  guint64 seen_out_bytes;
  gint64 seen_srctime;
  guint refresh_countdown;

  /* Src side, under qlock.  Counters written under qlock, read anywhere. */
  GstSegment src_segment;
  gboolean head_needs_discont;
  gboolean newseg_applied_to_src;
  guint64 eos_drain_until;      /* items up to this count are dropped (EOS) */
  _Atomic guint64 out_buffers;
  _Atomic guint64 out_bytes;
  _Atomic guint64 out_items;
  _Atomic gint64 srctime;

  /* The copy task. */
  GstTask *copier_task;
  GRecMutex copier_lock;
  pthread_cond_t copier_cond;   /* interrupted copy task waits here (qlock) */
  pthread_mutex_t copier_state; /* guards copier_active and task state calls */
  gboolean copier_active;       /* src pad active: the task may run */

  GstTbQueueCounters counters;
};

/* Record types in the two-layer queue. */
enum
{
  GST_TBQ_RECORD_BUFFER_COPY = 1,       /* GstTbqBufferHeader, fields, payload */
  GST_TBQ_RECORD_BUFFER_REF = 2,        /* GstTbqRefRecord: a GstBuffer */
  GST_TBQ_RECORD_EVENT = 3,     /* GstTbqRefRecord: a GstEvent */
  GST_TBQ_RECORD_QUERY = 4,     /* GstTbqRefRecord: a GstQuery */
};

/* Position of a buffer record in a buffer list. */
#define GST_TBQ_LIST_FIRST 1u
#define GST_TBQ_LIST_LAST 2u
#define GST_TBQ_LIST_MASK 3u

/* A copy record: this header, then the buffer's pts, dts, duration,
 * offset and offset-end as 64-bit words, in that order, each only when it
 * is set (not GST_CLOCK_TIME_NONE / GST_BUFFER_OFFSET_NONE; `info` says
 * which), then the payload.  A 32-byte buffer with only an offset takes
 * 48 bytes instead of 80: fewer source blocks to write and hand off. */
typedef struct
{
  guint32 flags;                /* GstBufferFlags */
  guint32 info;                 /* GST_TBQ_LIST_* | GST_TBQ_HAS_* */
} GstTbqBufferHeader;

#define GST_TBQ_HAS_PTS          (1u << 8)
#define GST_TBQ_HAS_DTS          (1u << 9)
#define GST_TBQ_HAS_DURATION     (1u << 10)
#define GST_TBQ_HAS_OFFSET       (1u << 11)
#define GST_TBQ_HAS_OFFSET_END   (1u << 12)
#define GST_TBQ_N_FIELDS         5
#define GST_TBQ_HAS_MASK         (((1u << GST_TBQ_N_FIELDS) - 1) << 8)
/* The largest header, every field set. */
#define GST_TBQ_BUFFER_HEADER_MAX \
  (sizeof (GstTbqBufferHeader) + GST_TBQ_N_FIELDS * 8)

/* Bytes before a copy record's payload. */
static inline gsize
gst_tbq_buffer_header_size (guint32 info)
{
  return sizeof (GstTbqBufferHeader)
      + 8 * (gsize) __builtin_popcount (info & GST_TBQ_HAS_MASK);
}

typedef struct
{
  gpointer object;              /* the reference the record owns */
  guint32 list;                 /* buffers: GST_TBQ_LIST_* or 0 */
  guint32 size;                 /* buffers: payload bytes at enqueue */
} GstTbqRefRecord;

G_END_DECLS
#endif /* __GST_TBQUEUE_H__ */

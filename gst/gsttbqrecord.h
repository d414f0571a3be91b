/* The tbqueue record format: how buffers, events and queries travel as
 * libtbq records from the element's sink pad to its src pad.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf: it knows GStreamer and libtbq's records, not the element.  It
 * owns every record layout; the element reserves `..._size` bytes, lets this
 * file fill them, and gets items back from gst_tbq_record_read().
 */
#ifndef __GST_TBQ_RECORD_H__
#define __GST_TBQ_RECORD_H__

#include <gst/gst.h>

#include "tbq.h"

G_BEGIN_DECLS

/* Record types (TbqRecord.type). */
enum
{
  GST_TBQ_RECORD_BUFFER_COPY = 1,       /* GstTbqCopyHeader, fields, payload */
  GST_TBQ_RECORD_BUFFER_REF = 2,        /* GstTbqBufferRef */
  GST_TBQ_RECORD_EVENT = 3,     /* GstTbqEventRef */
  GST_TBQ_RECORD_QUERY = 4,     /* GstTbqQueryRef */
};

/* Position of a buffer record in a buffer list: 0 for a buffer pushed on
 * its own; every member of a list has GST_TBQ_LIST_MEMBER, its first one
 * GST_TBQ_LIST_FIRST too and its last one GST_TBQ_LIST_LAST, so that a
 * member can never be taken for a buffer of its own (or the other way). */
#define GST_TBQ_LIST_FIRST 1u
#define GST_TBQ_LIST_LAST 2u
#define GST_TBQ_LIST_MEMBER 4u
#define GST_TBQ_LIST_MASK 7u

/* A member of a list that is not its first one. */
#define GST_TBQ_LIST_IS_REST(list) \
  (((list) & (GST_TBQ_LIST_MEMBER | GST_TBQ_LIST_FIRST)) == GST_TBQ_LIST_MEMBER)

/* A copy record: this header, then the buffer's pts, dts, duration,
 * offset and offset-end as 64-bit words, in that order, each only when it
 * is set (not GST_CLOCK_TIME_NONE / GST_BUFFER_OFFSET_NONE; `info` says
 * which), then the payload.  A 32-byte buffer with only an offset takes
 * 48 bytes instead of 80: fewer source blocks to write and hand off. */
typedef struct
{
  guint32 flags;                /* GstBufferFlags */
  guint32 info;                 /* GST_TBQ_LIST_* | GST_TBQ_HAS_* */
} GstTbqCopyHeader;

#define GST_TBQ_HAS_PTS          (1u << 8)
#define GST_TBQ_HAS_DTS          (1u << 9)
#define GST_TBQ_HAS_DURATION     (1u << 10)
#define GST_TBQ_HAS_OFFSET       (1u << 11)
#define GST_TBQ_HAS_OFFSET_END   (1u << 12)
#define GST_TBQ_N_FIELDS         5
#define GST_TBQ_HAS_MASK         (((1u << GST_TBQ_N_FIELDS) - 1) << 8)
/* The largest header, every field set. */
#define GST_TBQ_COPY_HEADER_MAX \
  (sizeof (GstTbqCopyHeader) + GST_TBQ_N_FIELDS * 8)

/* A buffer by reference: the record owns one reference to it. */
typedef struct
{
  GstBuffer *buffer;
  guint32 list;                 /* GST_TBQ_LIST_* */
  guint32 size;                 /* payload bytes at enqueue, or
                                 * GST_TBQ_SIZE_LARGE */
} GstTbqBufferRef;

/* A referenced buffer of 4 GiB or more: its size is read from the buffer,
 * which cannot change while the record holds it (resizing needs the only
 * reference). */
#define GST_TBQ_SIZE_LARGE G_MAXUINT32

/* A serialized event: the record owns one reference to it. */
typedef struct
{
  GstEvent *event;
} GstTbqEventRef;

/* A serialized query: it belongs to its sender, who waits for the answer;
 * `seq` tells the src side whether that sender still waits. */
typedef struct
{
  GstQuery *query;
  guint32 seq;
} GstTbqQueryRef;

/* An item taken out of a record by gst_tbq_record_read(). */
typedef struct
{
  guint16 type;                 /* GST_TBQ_RECORD_* */
  GstMiniObject *object;        /* the buffer or event (the caller's now), or
                                 * the query (its sender's) */
  guint32 list;                 /* buffers: GST_TBQ_LIST_* */
  gsize size;                   /* buffers: payload bytes */
  guint32 seq;                  /* queries: sequence number */
} GstTbqItem;

void gst_tbq_record_init_once (void);

/* Largest payload a copy record carries when records hold at most
 * `max_record` bytes (tbq_queue_max_record_size()). */
static inline gsize
gst_tbq_record_max_copy (gsize max_record)
{
  return max_record > GST_TBQ_COPY_HEADER_MAX ?
      max_record - GST_TBQ_COPY_HEADER_MAX : 0;
}

/* TRUE when `buffer` (of `size` payload bytes, at most `max_size`) can be
 * written by value without losing anything: no metas, and only plain
 * system memory (or tbqueue sink memory). */
gboolean gst_tbq_record_can_copy (GstBuffer * buffer, gsize size,
    gsize max_size);

/* A copy record's `info` for `buffer` (which fields it carries) and list
 * position. */
guint32 gst_tbq_record_copy_info (GstBuffer * buffer, guint32 list);

/* Bytes of a copy record with this `info` and payload. */
static inline gsize
gst_tbq_record_copy_size (guint32 info, gsize payload)
{
  return sizeof (GstTbqCopyHeader)
      + 8 * (gsize) __builtin_popcount (info & GST_TBQ_HAS_MASK) + payload;
}

void gst_tbq_record_write_copy (void *record, GstBuffer * buffer,
    gsize payload, guint32 info);

/* Takes the caller's reference to `buffer`. */
static inline void
gst_tbq_record_write_buffer_ref (void *record, GstBuffer * buffer,
    guint32 list, gsize payload)
{
  GstTbqBufferRef ref = { buffer, list,
    (guint32) MIN (payload, GST_TBQ_SIZE_LARGE)
  };

  memcpy (record, &ref, sizeof ref);
}

/* Takes the caller's reference to `event`. */
static inline void
gst_tbq_record_write_event (void *record, GstEvent * event)
{
  GstTbqEventRef ref = { event };

  memcpy (record, &ref, sizeof ref);
}

static inline void
gst_tbq_record_write_query (void *record, GstQuery * query, guint32 seq)
{
  GstTbqQueryRef ref = { query, seq };

  memcpy (record, &ref, sizeof ref);
}

static inline gboolean
gst_tbq_record_is_buffer (const TbqRecord * rec)
{
  return rec->type == GST_TBQ_RECORD_BUFFER_COPY
      || rec->type == GST_TBQ_RECORD_BUFFER_REF;
}

/* A buffer record's list position (GST_TBQ_LIST_*); 0 for other records. */
static inline guint32
gst_tbq_record_list_position (const TbqRecord * rec)
{
  GstTbqCopyHeader h;
  GstTbqBufferRef ref;

  if (rec->type == GST_TBQ_RECORD_BUFFER_COPY && rec->size >= sizeof h) {
    memcpy (&h, rec->data, sizeof h);
    return h.info & GST_TBQ_LIST_MASK;
  }
  if (rec->type == GST_TBQ_RECORD_BUFFER_REF && rec->size >= sizeof ref) {
    memcpy (&ref, rec->data, sizeof ref);
    return ref.list & GST_TBQ_LIST_MASK;
  }
  return 0;
}

/* The item a record holds: a copy record becomes a new buffer whose
 * memory lives in the record's sink block.  FALSE for an unknown type or a
 * record too short for its layout (nothing is read beyond rec->size). */
gboolean gst_tbq_record_read (const TbqRecord * rec, GstTbqItem * item);

/* What a discarded record of `size` bytes owns (a referenced buffer, an
 * event), for the caller to release; NULL for copies, queries and records
 * too short for their layout. */
GstMiniObject *gst_tbq_record_owned (guint16 type, const void *data,
    guint32 size);

G_END_DECLS
#endif /* __GST_TBQ_RECORD_H__ */

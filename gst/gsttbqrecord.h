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

/* A copy record, in this order (every part 8-byte aligned):
 *
 *   GstTbqCopyHeader   flags, info (which optional parts follow)
 *   pts, dts, duration, offset, offset-end
 *                      64-bit words, each only when set (not
 *                      GST_CLOCK_TIME_NONE / GST_BUFFER_OFFSET_NONE)
 *   shell              a GstBuffer * with the buffer's metas, owned by
 *                      the record (GST_TBQ_HAS_SHELL)
 *   layout             the size of each memory, guint32 each, when the
 *                      buffer has more than one (GST_TBQ_HAS_LAYOUT; the
 *                      count is in `info`)
 *   padding            up to a 64-byte offset (GST_TBQ_ALIGNED: a record
 *                      that travels in an extent, whose payload is then
 *                      64-byte aligned in memory)
 *   payload            the bytes of every memory, adjacent
 *
 * A 32-byte buffer with only an offset takes 48 bytes: fewer source blocks
 * to write and hand off.  A frame travels in an extent (libtbq decides by
 * its size), written once by the upstream thread. */
typedef struct
{
  guint32 flags;                /* GstBufferFlags */
  guint32 info;                 /* GST_TBQ_LIST_* | GST_TBQ_HAS_* | ... */
} GstTbqCopyHeader;

#define GST_TBQ_HAS_PTS          (1u << 8)
#define GST_TBQ_HAS_DTS          (1u << 9)
#define GST_TBQ_HAS_DURATION     (1u << 10)
#define GST_TBQ_HAS_OFFSET       (1u << 11)
#define GST_TBQ_HAS_OFFSET_END   (1u << 12)
#define GST_TBQ_N_FIELDS         5
#define GST_TBQ_HAS_MASK         (((1u << GST_TBQ_N_FIELDS) - 1) << 8)
#define GST_TBQ_HAS_SHELL        (1u << 13)
/* The 64-bit words after the header: the set fields and the shell. */
#define GST_TBQ_WORDS_MASK       (GST_TBQ_HAS_MASK | GST_TBQ_HAS_SHELL)
#define GST_TBQ_HAS_LAYOUT       (1u << 14)
#define GST_TBQ_ALIGNED          (1u << 15)
/* With GST_TBQ_HAS_LAYOUT: the number of memories (2 .. 16). */
#define GST_TBQ_N_MEMORIES_SHIFT 16
#define GST_TBQ_N_MEMORIES(info) (((info) >> GST_TBQ_N_MEMORIES_SHIFT) & 0x1f)
/* Alignment of the payload of a record that travels in an extent. */
#define GST_TBQ_PAYLOAD_ALIGN    64

/* Most memories a buffer has (GStreamer's own limit). */
#define GST_TBQ_MAX_MEMORIES     16

/* Bytes before the payload of a copy record with this `info`. */
static inline gsize
gst_tbq_record_copy_header (guint32 info)
{
  gsize n = sizeof (GstTbqCopyHeader)
      + 8 * (gsize) __builtin_popcount (info & GST_TBQ_WORDS_MASK);

  if (G_UNLIKELY (info & (GST_TBQ_HAS_LAYOUT | GST_TBQ_ALIGNED))) {
    if (info & GST_TBQ_HAS_LAYOUT)
      n += GST_ROUND_UP_8 (4 * (gsize) GST_TBQ_N_MEMORIES (info));
    if (info & GST_TBQ_ALIGNED)
      n = GST_ROUND_UP_N (n, GST_TBQ_PAYLOAD_ALIGN);
  }
  return n;
}

/* Bytes of a copy record with this `info` and payload. */
static inline gsize
gst_tbq_record_copy_size (guint32 info, gsize payload)
{
  return gst_tbq_record_copy_header (info) + payload;
}

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

/* What the codec needs to know of the two-layer queue. */
typedef struct
{
  gsize max_inline;             /* tbq_queue_max_inline_size(): larger
                                 * records travel in an extent */
  gsize max_record;             /* the largest record the queue takes:
                                 * tbq_queue_max_extent_size() or
                                 * tbq_queue_max_record_size() */
  gsize max_small;              /* gst_tbq_record_max_small (max_inline) */
} GstTbqLimits;

/* The largest header of a small copy record: every field set, no shell,
 * no layout. */
#define GST_TBQ_COPY_HEADER_MAX \
  (sizeof (GstTbqCopyHeader) + GST_TBQ_N_FIELDS * 8)

/* The largest payload of a small copy record: one that surely travels
 * inline when records up to `max_inline` bytes do. */
static inline gsize
gst_tbq_record_max_small (gsize max_inline)
{
  return max_inline > GST_TBQ_COPY_HEADER_MAX ?
      max_inline - GST_TBQ_COPY_HEADER_MAX : 0;
}

/* The small-buffer path, the common case, in one test: TRUE when `buffer`
 * (`size` payload bytes) has one memory of system memory, no metas, at
 * most limits->max_small bytes, and its memory is now mapped for reading
 * into `map`.  Such a buffer is written with gst_tbq_record_small_info()
 * and gst_tbq_record_write_small(), without a plan (gst_memory_unmap
 * (map->memory, map) when it is not written); any other goes through
 * gst_tbq_record_plan_copy(). */
gboolean gst_tbq_record_map_small (GstBuffer * buffer, gsize size,
    const GstTbqLimits * limits, GstMapInfo * map);

/* The copy record `info` of a small plain buffer at list position `list`
 * (its size: gst_tbq_record_copy_size (info, map->size)). */
guint32 gst_tbq_record_small_info (GstBuffer * buffer, guint32 list);

/* Write the copy record of a small plain buffer into `record` and unmap
 * its memory. */
void gst_tbq_record_write_small (void *record, GstBuffer * buffer,
    GstMapInfo * map, guint32 info);

/* Whether a buffer can be copied without losing anything, and why not. */
typedef enum
{
  GST_TBQ_COPY_OK = 0,
  GST_TBQ_COPY_SPECIAL_MEMORY,  /* a memory that is not plain mappable CPU
                                 * memory (fd/DMA-buf, NOT_MAPPABLE), or
                                 * one that cannot be mapped for reading */
  GST_TBQ_COPY_META,            /* a meta that cannot be copied */
  GST_TBQ_COPY_TOO_LARGE,       /* larger than limits->max_record */
} GstTbqCopyVerdict;

/* The record a buffer becomes, between gst_tbq_record_plan_*() and the
 * write (or gst_tbq_record_plan_clear() when it is not written). */
typedef struct
{
  guint16 type;                 /* GST_TBQ_RECORD_BUFFER_COPY or _REF */
  guint32 info;                 /* copy: GstTbqCopyHeader.info; ref: the
                                 * list position */
  guint32 size;                 /* bytes of the record */
  guint32 header;               /* copy: bytes before the payload */
  gsize payload;                /* bytes of the buffer */
  GstBuffer *buffer;            /* copy: the buffer (borrowed) */
  GstBuffer *shell;             /* copy: its metas (owned) */
  guint n_maps;                 /* copy: its memories, mapped for reading */
  GstMapInfo maps[GST_TBQ_MAX_MEMORIES];
} GstTbqBufferPlan;

/* A copy record for `buffer` (`size` payload bytes, `list` position):
 * GST_TBQ_COPY_OK with `plan` filled (memories mapped, metas copied into a
 * shell), or why it cannot be copied without loss (`plan` then holds
 * nothing).  Plain memory is system memory and any other memory that maps
 * on the CPU (tbqueue's own, a driver's mmap'ed buffers...); special memory
 * is fd memory (DMA-buf, memfd), memory flagged NOT_MAPPABLE and memory
 * that refuses a read mapping.  Metas are copied as a deep copy copies
 * them: each meta's transform function with a copy transform of the whole
 * buffer, metas tagged memory-reference skipped; one without a transform
 * function or whose transform fails refuses the copy. */
GstTbqCopyVerdict gst_tbq_record_plan_copy (GstBuffer * buffer, gsize size,
    guint32 list, const GstTbqLimits * limits, GstTbqBufferPlan * plan);

/* A reference record for `buffer`. */
static inline void
gst_tbq_record_plan_ref (gsize size, guint32 list, GstTbqBufferPlan * plan)
{
  plan->type = GST_TBQ_RECORD_BUFFER_REF;
  plan->info = list;
  plan->size = sizeof (GstTbqBufferRef);
  plan->payload = size;
  plan->shell = NULL;
  plan->n_maps = 0;
}

/* Release what a plan holds that was not written (the memories' maps, the
 * shell). */
void gst_tbq_record_plan_clear (GstTbqBufferPlan * plan);

/* Write a planned copy record into `record` (plan->size bytes): the shell
 * moves into the record, the memories are copied and unmapped. */
void gst_tbq_record_write_copy (void *record, GstTbqBufferPlan * plan);

/* TRUE when `caps` say that buffers live in memory other than system
 * memory (a memory:... caps feature other than memory:SystemMemory: GL,
 * VA, CUDA, NVMM, DMA-buf...): such buffers are never copied. */
gboolean gst_tbq_record_caps_special_memory (const GstCaps * caps);

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

/* The item a record holds: a copy record becomes a buffer (its shell, if
 * it has metas) whose memories live in the record's sink block or extent,
 * as many as the buffer had, adjacent.  FALSE for an unknown type or a
 * malformed record (nothing is read beyond rec->size). */
gboolean gst_tbq_record_read (const TbqRecord * rec, GstTbqItem * item);

/* What a discarded record of `size` bytes owns (a referenced buffer, an
 * event, a copy's shell), for the caller to release; NULL for queries,
 * copies without metas and records too short for their layout. */
GstMiniObject *gst_tbq_record_owned (guint16 type, const void *data,
    guint32 size);

/* How many leading bytes of a record's payload hold what it owns or
 * points to (a shell, a buffer, an event, a query): kept in memory while
 * the record is in a spill file (TbqSpillConfig.owned). */
guint32 gst_tbq_record_owned_bytes (guint16 type, const void *data,
    guint32 size);

G_END_DECLS
#endif /* __GST_TBQ_RECORD_H__ */

/* Memory that lives in a tbqueue sink block.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Downstream gets buffers whose bytes stay where libtbq put them (no third
 * copy): in a sink block, or in the extent of a large record.  Each memory
 * holds a reference to its block (or extent); it returns to the sink pool
 * when its last memory is freed.  A record's bytes belong to its memories
 * alone, so the usual GStreamer writability rules apply unchanged; copies
 * go to system memory.
 *
 * A buffer of several memories becomes several *parts* of one memory (their
 * GstMemory parent, the *whole*) covering the whole record: adjacent parts
 * of one parent are a span, so mapping the whole buffer shares the whole
 * instead of merging the parts into a copy, and each part stays writable in
 * place (the whole, locked by its parts, is never written).
 *
 * Shares (gst_memory_share, and so sub-buffers) follow one rule: a share of
 * a whole or of a part takes that very memory as its parent, so that the
 * exclusive lock gst_memory_init takes on the parent makes it shared: while
 * the share lives, the memory it shares is not writable, and a write in
 * place (gst_buffer_map_range with GST_MAP_WRITE, as gst_video_frame_map
 * does plane by plane) goes to a copy, as with system memory.  Only a share
 * of a share takes that share's parent: a share is read-only
 * (LOCK_READONLY), and its parent is the memory whose bytes both read,
 * which the new share then locks too.  System memory takes the parent of
 * any memory it shares that has one; that is right for it only because its
 * buffer memories have no parent.  A part has one and is writable: a share
 * that locked the whole instead would leave the part writable, and a write
 * to the part would change the share's bytes.  Each memory knows which of
 * the three it is (TbqMemKind), rather than guessing it from its flags.
 */
#include "gsttbqmemory.h"

/* What a memory is, which decides the parent of its shares. */
typedef enum
{
  TBQ_MEM_WHOLE,                /* a record's payload; no parent */
  TBQ_MEM_PART,                 /* part of a whole, which is its parent */
  TBQ_MEM_SHARE                 /* read-only share of a whole or a part */
} TbqMemKind;

typedef struct
{
  GstMemory mem;
  TbqBlock *block;
  guint8 *data;                 /* start of the record's payload */
  TbqMemKind kind;
} GstTbqMemory;

typedef struct
{
  GstAllocator parent;
} GstTbqAllocator;

typedef struct
{
  GstAllocatorClass parent_class;
} GstTbqAllocatorClass;

GType gst_tbq_allocator_get_type (void);
G_DEFINE_TYPE (GstTbqAllocator, gst_tbq_allocator, GST_TYPE_ALLOCATOR);

static GstAllocator *tbq_allocator;

static GstMemory *
tbq_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  /* Not a general-purpose allocator: memory is only made by the element. */
  return NULL;
}

static void
tbq_free (GstAllocator * allocator, GstMemory * mem)
{
  GstTbqMemory *tm = (GstTbqMemory *) mem;

  tbq_block_unref (tm->block);
  g_slice_free (GstTbqMemory, tm);
}

/* The alignment (a mask, as GstMemory.align) the bytes at `data` have, as
 * far as anyone may rely on: records are 8-byte aligned, the payload of a
 * large record 64-byte aligned. */
static inline gsize
data_align (const guint8 * data)
{
  return ((guintptr) data & 63) == 0 ? 63 : 7;
}

static GstTbqMemory *
tbq_memory_make (TbqMemKind kind, TbqBlock * block, guint8 * data,
    GstMemory * parent, gsize maxsize, gsize offset, gsize size,
    GstMemoryFlags flags)
{
  GstTbqMemory *tm = g_slice_new (GstTbqMemory);

  gst_memory_init (GST_MEMORY_CAST (tm), flags, tbq_allocator, parent,
      maxsize, data_align (data + offset), offset, size);
  tbq_block_ref (block);
  tm->block = block;
  tm->data = data;
  tm->kind = kind;
  return tm;
}

static gpointer
tbq_mem_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((GstTbqMemory *) mem)->data;
}

static void
tbq_mem_unmap (GstMemory * mem)
{
}

static GstMemory *
tbq_mem_share (GstMemory * mem, gssize offset, gssize size)
{
  GstTbqMemory *tm = (GstTbqMemory *) mem;
  /* The memory shared, locked by the share: see the comment at the top. */
  GstMemory *parent = tm->kind == TBQ_MEM_SHARE ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;
  /* Same bytes, same block: the share holds its own block reference. */
  return GST_MEMORY_CAST (tbq_memory_make (TBQ_MEM_SHARE, tm->block,
          tm->data, parent, mem->maxsize, mem->offset + offset, size,
          GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY));
}

static GstMemory *
tbq_mem_copy (GstMemory * mem, gssize offset, gssize size)
{
  GstTbqMemory *tm = (GstTbqMemory *) mem;
  GstMemory *copy;
  GstMapInfo info;

  if (size == -1)
    size = mem->size > (gsize) offset ? mem->size - offset : 0;
  copy = gst_allocator_alloc (NULL, size, NULL);
  if (copy == NULL || !gst_memory_map (copy, &info, GST_MAP_WRITE)) {
    if (copy)
      gst_memory_unref (copy);
    return NULL;
  }
  memcpy (info.data, tm->data + mem->offset + offset, size);
  gst_memory_unmap (copy, &info);
  return copy;
}

/* Called by gst_memory_is_span, once it has seen that both memories have
 * the same parent, not NULL: the whole of two parts, or the whole or part
 * two shares share.  Offsets of every memory of a record count from the
 * start of its payload; `offset` is mem1's from its parent's, where
 * gst_memory_share (parent, offset, ...) starts (a memory that starts
 * before its parent cannot be shared from it: no span). */
static gboolean
tbq_mem_is_span (GstMemory * mem1, GstMemory * mem2, gsize * offset)
{
  GstTbqMemory *a = (GstTbqMemory *) mem1, *b = (GstTbqMemory *) mem2;

  if (a->data != b->data || mem1->offset + mem1->size != mem2->offset
      || mem1->offset < mem1->parent->offset)
    return FALSE;
  if (offset)
    *offset = mem1->offset - mem1->parent->offset;
  return TRUE;
}

static void
gst_tbq_allocator_class_init (GstTbqAllocatorClass * klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  allocator_class->alloc = tbq_alloc;
  allocator_class->free = tbq_free;
}

static void
gst_tbq_allocator_init (GstTbqAllocator * allocator)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (allocator);

  alloc->mem_type = GST_TBQ_MEMORY_TYPE;
  alloc->mem_map = tbq_mem_map;
  alloc->mem_unmap = tbq_mem_unmap;
  alloc->mem_share = tbq_mem_share;
  alloc->mem_copy = tbq_mem_copy;
  alloc->mem_is_span = tbq_mem_is_span;
  GST_OBJECT_FLAG_SET (allocator, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

void
gst_tbq_memory_init_once (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    tbq_allocator = g_object_new (gst_tbq_allocator_get_type (), NULL);
    gst_object_ref_sink (tbq_allocator);
    /* Kept for the life of the process, like GStreamer's own allocators. */
    GST_OBJECT_FLAG_SET (tbq_allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    gst_allocator_register (GST_TBQ_MEMORY_TYPE,
        gst_object_ref (tbq_allocator));
    g_once_init_leave (&done, 1);
  }
}

GstMemory *
gst_tbq_memory_new (TbqBlock * block, gpointer data, gsize size)
{
  return GST_MEMORY_CAST (tbq_memory_make (TBQ_MEM_WHOLE, block, data, NULL,
          size, 0, size, 0));
}

GstMemory *
gst_tbq_memory_new_part (GstMemory * whole, gsize offset, gsize size)
{
  GstTbqMemory *tm = (GstTbqMemory *) whole;

  g_return_val_if_fail (tm->kind == TBQ_MEM_WHOLE, NULL);
  g_return_val_if_fail (offset + size <= whole->size, NULL);
  return GST_MEMORY_CAST (tbq_memory_make (TBQ_MEM_PART, tm->block, tm->data,
          whole, whole->maxsize, whole->offset + offset, size, 0));
}

gboolean
gst_tbq_memory_is_tbq (GstMemory * mem)
{
  return mem->allocator == tbq_allocator;
}

gboolean
gst_tbq_buffer_is_pinned (GstBuffer * buffer)
{
  return gst_buffer_n_memory (buffer) > 0
      && gst_tbq_memory_is_tbq (gst_buffer_peek_memory (buffer, 0));
}

gboolean
gst_tbq_buffer_is_from_file (GstBuffer * buffer)
{
  /* A copied buffer's memories are all of one record, in one block. */
  return gst_tbq_buffer_is_pinned (buffer)
      && tbq_block_from_file (((GstTbqMemory *)
              gst_buffer_peek_memory (buffer, 0))->block);
}

gboolean
gst_tbq_buffer_leave_budget (GstBuffer * buffer)
{
  return gst_tbq_buffer_is_pinned (buffer)
      && tbq_block_leave_budget (((GstTbqMemory *)
              gst_buffer_peek_memory (buffer, 0))->block);
}

GstBuffer *
gst_tbq_buffer_unpin (GstBuffer * buffer)
{
  GstBuffer *copy;

  if (!gst_tbq_buffer_is_pinned (buffer))
    return buffer;
  copy = gst_buffer_copy_deep (buffer);
  gst_buffer_unref (buffer);
  return copy;
}

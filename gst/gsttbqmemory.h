/* Memory that lives in a tbqueue sink block.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQ_MEMORY_H__
#define __GST_TBQ_MEMORY_H__

#include <gst/gst.h>

#include "tbq.h"

G_BEGIN_DECLS

#define GST_TBQ_MEMORY_TYPE "TbqSinkMemory"

void gst_tbq_memory_init_once (void);

/* Wrap `size` bytes at `data` inside sink block (or extent) `block`; the
 * memory holds a reference to the block (taken here) until it is freed. */
GstMemory *gst_tbq_memory_new (TbqBlock * block, gpointer data, gsize size);

/* A memory over `size` bytes from `offset` of `whole` (made by
 * gst_tbq_memory_new), which it keeps as its parent: adjacent parts of one
 * whole are a span (gst_memory_is_span), so that mapping them together
 * shares the whole instead of copying. */
GstMemory *gst_tbq_memory_new_part (GstMemory * whole, gsize offset,
    gsize size);

gboolean gst_tbq_memory_is_tbq (GstMemory * mem);

/* Whether `buffer`'s memory lives in the sink pool (made here). */
gboolean gst_tbq_buffer_is_pinned (GstBuffer * buffer);
/* Whether it lives there as a record read back from the spill file. */
gboolean gst_tbq_buffer_is_from_file (GstBuffer * buffer);
/* Take a frame read back from the spill file (in memory of its own) out
 * of the sink pool's count (tbq_block_leave_budget()): TRUE when it is
 * one. */
gboolean gst_tbq_buffer_leave_budget (GstBuffer * buffer);
/* `buffer` (taken) with memory of its own when it is pinned: a deep copy,
 * which frees what it held of the sink pool; else `buffer` itself. */
GstBuffer *gst_tbq_buffer_unpin (GstBuffer * buffer);

G_END_DECLS
#endif

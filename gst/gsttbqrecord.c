/* The tbqueue record format: buffers by value (plan, encode, decode), and
 * the items every record holds.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A copy record holds everything of a GstBuffer that queue would pass on:
 * the fields that are not pointers (timestamps, duration, offsets, flags),
 * its metas (copied into a metadata-only "shell" buffer that the record
 * owns and that becomes the buffer downstream), its memory layout (how many
 * memories, of which sizes) and its bytes.  A buffer is only written by
 * value when nothing would be lost: plain mappable memory, and metas that
 * can be copied; anything else travels by reference.  Layouts:
 * gsttbqrecord.h.
 */
#include "gsttbqrecord.h"
#include "gsttbqmemory.h"

#include <gst/allocators/gstfdmemory.h>

/* Buffer flags live above the mini-object flags. */
#define BUFFER_FLAGS_MASK (~(guint32) (GST_MINI_OBJECT_FLAG_LAST - 1))

/* GStreamer's system memory allocator: a pointer compare saves the string
 * compare of gst_memory_is_type() for the common case. */
static GstAllocator *sysmem_allocator;
static GQuark memory_reference_tag;

void
gst_tbq_record_init_once (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    sysmem_allocator = gst_allocator_find (GST_ALLOCATOR_SYSMEM);
    if (sysmem_allocator)
      GST_OBJECT_FLAG_SET (sysmem_allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    memory_reference_tag =
        g_quark_from_static_string (GST_META_TAG_MEMORY_REFERENCE_STR);
    g_once_init_leave (&done, 1);
  }
}

/* ---- what can be copied ---- */

/* Not plain mappable CPU memory: fd memory (DMA-buf, memfd: its fd is what
 * matters downstream) and memory that says it cannot be mapped.  Anything
 * else maps on the CPU (a refused read mapping is caught when mapping). */
static inline gboolean
memory_is_special (GstMemory * mem)
{
  if (GST_MEMORY_FLAG_IS_SET (mem, GST_MEMORY_FLAG_NOT_MAPPABLE))
    return TRUE;
  if (G_LIKELY (mem->allocator == sysmem_allocator))
    return FALSE;
  return mem->allocator != NULL && gst_is_fd_memory (mem);
}

gboolean
gst_tbq_record_caps_special_memory (const GstCaps * caps)
{
  guint i, j, n = caps ? gst_caps_get_size (caps) : 0;

  for (i = 0; i < n; i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (f == NULL || gst_caps_features_is_any (f))
      continue;
    for (j = 0; j < gst_caps_features_get_size (f); j++) {
      const gchar *name = gst_caps_features_get_nth (f, j);

      if (g_str_has_prefix (name, "memory:")
          && strcmp (name, GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) != 0)
        return TRUE;
    }
  }
  return FALSE;
}

/* Copy every meta of `buffer` (`size` bytes) into a new shell buffer, as
 * a deep copy of the whole buffer does; NULL when one cannot be copied. */
static GstBuffer *
copy_metas (GstBuffer * buffer, gsize size)
{
  GstBuffer *shell = gst_buffer_new ();
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta (buffer, &state)) != NULL) {
    const GstMetaInfo *info = meta->info;
    GstMetaTransformCopy copy = { FALSE, 0, size };

    /* It holds memory of another buffer: a copy needs it no more. */
    if (gst_meta_api_type_has_tag (info->api, memory_reference_tag))
      continue;
    if (info->transform_func == NULL
        || !info->transform_func (shell, meta, buffer,
            _gst_meta_transform_copy, &copy)) {
      GST_DEBUG ("meta %s of buffer %p cannot be copied",
          g_type_name (info->api), buffer);
      gst_buffer_unref (shell);
      return NULL;
    }
  }
  return shell;
}

/* Map the `n` memories in plan->maps[].memory for reading.  FALSE (and
 * nothing mapped) when one refuses. */
static inline gboolean
map_memories (guint n, GstTbqBufferPlan * plan)
{
  guint i;

  for (i = 0; i < n; i++) {
    if (!gst_memory_map (plan->maps[i].memory, &plan->maps[i], GST_MAP_READ)) {
      plan->n_maps = i;
      gst_tbq_record_plan_clear (plan);
      return FALSE;
    }
  }
  plan->n_maps = n;
  return TRUE;
}

/* `info` for the set fields of `buffer`, its list position, its shell and
 * its layout. */
static inline guint32
copy_info (GstBuffer * buffer, guint32 list, guint n_mem, gboolean metas)
{
  guint32 info = list & GST_TBQ_LIST_MASK;

  /* GST_CLOCK_TIME_NONE and GST_BUFFER_OFFSET_NONE are both all ones. */
  G_STATIC_ASSERT (GST_CLOCK_TIME_NONE == GST_BUFFER_OFFSET_NONE);
  info |= (GST_BUFFER_PTS (buffer) != GST_CLOCK_TIME_NONE) ? GST_TBQ_HAS_PTS
      : 0;
  info |= (GST_BUFFER_DTS (buffer) != GST_CLOCK_TIME_NONE) ? GST_TBQ_HAS_DTS
      : 0;
  info |= (GST_BUFFER_DURATION (buffer) != GST_CLOCK_TIME_NONE) ?
      GST_TBQ_HAS_DURATION : 0;
  info |= (GST_BUFFER_OFFSET (buffer) != GST_BUFFER_OFFSET_NONE) ?
      GST_TBQ_HAS_OFFSET : 0;
  info |= (GST_BUFFER_OFFSET_END (buffer) != GST_BUFFER_OFFSET_NONE) ?
      GST_TBQ_HAS_OFFSET_END : 0;
  if (G_UNLIKELY (metas))
    info |= GST_TBQ_HAS_SHELL;
  if (G_UNLIKELY (n_mem > 1))
    info |= GST_TBQ_HAS_LAYOUT | (n_mem << GST_TBQ_N_MEMORIES_SHIFT);
  return info;
}

/* ---- the small path ---- */

gboolean
gst_tbq_record_map_small (GstBuffer * buffer, gsize size,
    const GstTbqLimits * limits, GstMapInfo * map)
{
  gpointer state = NULL;
  GstMemory *mem;

  if (size > limits->max_small || gst_buffer_n_memory (buffer) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  if (mem->allocator != sysmem_allocator
      || GST_MEMORY_FLAG_IS_SET (mem, GST_MEMORY_FLAG_NOT_MAPPABLE)
      || gst_buffer_iterate_meta (buffer, &state) != NULL)
    return FALSE;
  return gst_memory_map (mem, map, GST_MAP_READ);
}

guint32
gst_tbq_record_small_info (GstBuffer * buffer, guint32 list)
{
  return copy_info (buffer, list, 1, FALSE);
}

GstTbqCopyVerdict
gst_tbq_record_plan_copy (GstBuffer * buffer, gsize size, guint32 list,
    const GstTbqLimits * limits, GstTbqBufferPlan * plan)
{
  guint i, n = gst_buffer_n_memory (buffer);
  gpointer state = NULL;
  gboolean metas;
  guint32 info;
  gsize header;

  plan->shell = NULL;
  plan->n_maps = 0;
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);

    if (G_UNLIKELY (memory_is_special (mem)))
      return GST_TBQ_COPY_SPECIAL_MEMORY;
    plan->maps[i].memory = mem;
  }
  metas = gst_buffer_iterate_meta (buffer, &state) != NULL;
  info = copy_info (buffer, list, n, metas);
  header = gst_tbq_record_copy_header (info);
  if (G_UNLIKELY (header + size > limits->max_inline)) {
    /* In an extent: the payload starts 64-byte aligned. */
    info |= GST_TBQ_ALIGNED;
    header = gst_tbq_record_copy_header (info);
  }
  if (G_UNLIKELY (size > limits->max_record
          || header + size > limits->max_record))
    return GST_TBQ_COPY_TOO_LARGE;
  if (G_UNLIKELY (metas) && (plan->shell = copy_metas (buffer, size)) == NULL)
    return GST_TBQ_COPY_META;
  if (G_UNLIKELY (!map_memories (n, plan)))
    return GST_TBQ_COPY_SPECIAL_MEMORY;
  plan->type = GST_TBQ_RECORD_BUFFER_COPY;
  plan->info = info;
  plan->header = (guint32) header;
  plan->size = (guint32) (header + size);
  plan->payload = size;
  plan->buffer = buffer;
  return GST_TBQ_COPY_OK;
}

void
gst_tbq_record_plan_clear (GstTbqBufferPlan * plan)
{
  guint i;

  for (i = 0; i < plan->n_maps; i++)
    gst_memory_unmap (plan->maps[i].memory, &plan->maps[i]);
  plan->n_maps = 0;
  if (plan->shell != NULL) {
    gst_buffer_unref (plan->shell);
    plan->shell = NULL;
  }
}

/* ---- encoding ---- */

/* Write a 64-bit field if `info` says it is set. */
#define WRITE_FIELD(p, info, has, v) G_STMT_START {                     \
  if ((info) & (has)) {                                                 \
    memcpy ((p), &(v), 8);                                              \
    (p) += 8;                                                           \
  }                                                                     \
} G_STMT_END

/* Write the header and the set fields of `buffer`'s copy record; returns
 * where the next part goes. */
static inline guint8 *
write_header (void *record, GstBuffer * buffer, guint32 info)
{
  guint8 *p = (guint8 *) record + sizeof (GstTbqCopyHeader);
  GstTbqCopyHeader h;

  h.flags = GST_BUFFER_FLAGS (buffer) & BUFFER_FLAGS_MASK;
  h.info = info;
  memcpy (record, &h, sizeof h);
  /* The set fields, in the order the decoder reads them. */
  WRITE_FIELD (p, info, GST_TBQ_HAS_PTS, GST_BUFFER_PTS (buffer));
  WRITE_FIELD (p, info, GST_TBQ_HAS_DTS, GST_BUFFER_DTS (buffer));
  WRITE_FIELD (p, info, GST_TBQ_HAS_DURATION, GST_BUFFER_DURATION (buffer));
  WRITE_FIELD (p, info, GST_TBQ_HAS_OFFSET, GST_BUFFER_OFFSET (buffer));
  WRITE_FIELD (p, info, GST_TBQ_HAS_OFFSET_END, GST_BUFFER_OFFSET_END (buffer));
  return p;
}

void
gst_tbq_record_write_small (void *record, GstBuffer * buffer,
    GstMapInfo * map, guint32 info)
{
  guint8 *p = write_header (record, buffer, info);

  memcpy (p, map->data, map->size);
  gst_memory_unmap (map->memory, map);
}

void
gst_tbq_record_write_copy (void *record, GstTbqBufferPlan * plan)
{
  guint8 *p = write_header (record, plan->buffer, plan->info);
  guint k, n = plan->n_maps;

  if (G_UNLIKELY (plan->info & (GST_TBQ_HAS_SHELL | GST_TBQ_HAS_LAYOUT))) {
    /* The record owns the shell now. */
    WRITE_FIELD (p, plan->info, GST_TBQ_HAS_SHELL, plan->shell);
    plan->shell = NULL;
    for (k = 0; k < n && (plan->info & GST_TBQ_HAS_LAYOUT); k++) {
      guint32 size = (guint32) plan->maps[k].size;

      memcpy (p + 4 * k, &size, 4);
    }
  }
  p = (guint8 *) record + plan->header;
  for (k = 0; k < n; k++) {
    memcpy (p, plan->maps[k].data, plan->maps[k].size);
    p += plan->maps[k].size;
    gst_memory_unmap (plan->maps[k].memory, &plan->maps[k]);
  }
  plan->n_maps = 0;
}

/* ---- decoding ---- */

/* The optional fields of a copy record, in record order; bit k of the
 * info word (from GST_TBQ_HAS_PTS up) says whether field k is there. */
#define N_FIELDS GST_TBQ_N_FIELDS

static inline void
buffer_fields (GstBuffer * buffer, guint64 * f[N_FIELDS])
{
  f[0] = &GST_BUFFER_PTS (buffer);
  f[1] = &GST_BUFFER_DTS (buffer);
  f[2] = &GST_BUFFER_DURATION (buffer);
  f[3] = &GST_BUFFER_OFFSET (buffer);
  f[4] = &GST_BUFFER_OFFSET_END (buffer);
}

/* Append the payload of a record as `n` memories (sizes at `layout`), or
 * one.  FALSE when the layout does not add up to the payload. */
static gboolean
append_memories (GstBuffer * buffer, const TbqRecord * rec, guint8 * p,
    gsize payload, guint n, const guint8 * layout)
{
  GstMemory *whole;
  gsize off = 0;
  guint i;

  if (n <= 1) {
    if (payload > 0)
      gst_buffer_append_memory (buffer, gst_tbq_memory_new (rec->block, p,
              payload));
    return TRUE;
  }
  for (i = 0; i < n; i++) {
    guint32 size;

    memcpy (&size, layout + 4 * i, 4);
    off += size;
  }
  if (off != payload)
    return FALSE;
  /* The memories are parts of one, so that mapping the whole buffer
   * shares that one instead of merging them into a copy. */
  whole = gst_tbq_memory_new (rec->block, p, payload);
  for (i = 0, off = 0; i < n; i++) {
    guint32 size;

    memcpy (&size, layout + 4 * i, 4);
    gst_buffer_append_memory (buffer, gst_tbq_memory_new_part (whole, off,
            size));
    off += size;
  }
  gst_memory_unref (whole);
  return TRUE;
}

/* A buffer with the fields, flags, metas and bytes of a copy record; its
 * memories hold a reference to the record's sink block or extent.  NULL
 * when the record does not hold what its header says. */
static GstBuffer *
read_copy (const TbqRecord * rec, guint32 * list, gsize * payload)
{
  const guint8 *p = (const guint8 *) rec->data + sizeof (GstTbqCopyHeader);
  GstBuffer *buffer = NULL;
  GstTbqCopyHeader h;
  guint64 *f[N_FIELDS], words[N_FIELDS];
  gsize header;
  guint k, n = 0;

  if (G_UNLIKELY (rec->size < sizeof h))
    return NULL;
  memcpy (&h, rec->data, sizeof h);
  header = gst_tbq_record_copy_header (h.info);
  if (G_UNLIKELY (rec->size < header))
    return NULL;
  *payload = rec->size - header;
  for (k = 0; k < N_FIELDS; k++)
    if (h.info & (GST_TBQ_HAS_PTS << k)) {
      memcpy (&words[k], p, 8);
      p += 8;
    }
  if (h.info & GST_TBQ_HAS_SHELL) {
    /* The metas' buffer becomes the buffer: the record gives it away. */
    memcpy (&buffer, p, sizeof buffer);
    p += 8;
  }
  if (buffer == NULL)
    buffer = gst_buffer_new ();
  if (G_UNLIKELY (h.info & GST_TBQ_HAS_LAYOUT))
    n = GST_TBQ_N_MEMORIES (h.info);
  /* The record gave its shell away: a failure from here frees it. */
  if (n == 1 || n > GST_TBQ_MAX_MEMORIES
      || !append_memories (buffer, rec, (guint8 *) rec->data + header,
          *payload, n, p)) {
    gst_buffer_unref (buffer);
    return NULL;
  }
  /* The shell's fields are all unset too: set those the record carries. */
  buffer_fields (buffer, f);
  for (k = 0; k < N_FIELDS; k++)
    if (h.info & (GST_TBQ_HAS_PTS << k))
      *f[k] = words[k];
  /* Exactly the flags the buffer had, TAG_MEMORY included. */
  GST_MINI_OBJECT_FLAGS (buffer) =
      (GST_MINI_OBJECT_FLAGS (buffer) & ~BUFFER_FLAGS_MASK) | h.flags;
  *list = h.info & GST_TBQ_LIST_MASK;
  return buffer;
}

gboolean
gst_tbq_record_read (const TbqRecord * rec, GstTbqItem * item)
{
  GstTbqBufferRef buffer;
  GstTbqEventRef event;
  GstTbqQueryRef query;

  item->type = rec->type;
  item->list = 0;
  item->size = 0;
  item->seq = 0;
  item->object = NULL;
  switch (rec->type) {
    case GST_TBQ_RECORD_BUFFER_COPY:
      item->object = GST_MINI_OBJECT_CAST (read_copy (rec, &item->list,
              &item->size));
      return item->object != NULL;
    case GST_TBQ_RECORD_BUFFER_REF:
      if (G_UNLIKELY (rec->size < sizeof buffer))
        return FALSE;
      memcpy (&buffer, rec->data, sizeof buffer);
      item->object = GST_MINI_OBJECT_CAST (buffer.buffer);
      item->list = buffer.list & GST_TBQ_LIST_MASK;
      item->size = G_LIKELY (buffer.size != GST_TBQ_SIZE_LARGE) ? buffer.size
          : gst_buffer_get_size (buffer.buffer);
      return TRUE;
    case GST_TBQ_RECORD_EVENT:
      if (G_UNLIKELY (rec->size < sizeof event))
        return FALSE;
      memcpy (&event, rec->data, sizeof event);
      item->object = GST_MINI_OBJECT_CAST (event.event);
      return TRUE;
    case GST_TBQ_RECORD_QUERY:
      if (G_UNLIKELY (rec->size < sizeof query))
        return FALSE;
      memcpy (&query, rec->data, sizeof query);
      item->object = GST_MINI_OBJECT_CAST (query.query);
      item->seq = query.seq;
      return TRUE;
    default:
      return FALSE;
  }
}

/* The shell a copy record owns, or NULL. */
static GstMiniObject *
copy_shell (const void *data, guint32 size)
{
  GstTbqCopyHeader h;
  GstBuffer *shell;

  if (G_UNLIKELY (size < sizeof h))
    return NULL;
  memcpy (&h, data, sizeof h);
  if (!(h.info & GST_TBQ_HAS_SHELL)
      || G_UNLIKELY (size < gst_tbq_record_copy_header (h.info)))
    return NULL;
  memcpy (&shell, (const guint8 *) data + sizeof h
      + 8 * __builtin_popcount (h.info & GST_TBQ_HAS_MASK), sizeof shell);
  return GST_MINI_OBJECT_CAST (shell);
}

guint32
gst_tbq_record_owned_bytes (guint16 type, const void *data, guint32 size)
{
  GstTbqCopyHeader h;

  switch (type) {
    case GST_TBQ_RECORD_BUFFER_COPY:
      if (G_UNLIKELY (size < sizeof h))
        return 0;
      memcpy (&h, data, sizeof h);
      if (!(h.info & GST_TBQ_HAS_SHELL))
        return 0;
      /* The whole header (the set fields, the shell, the layout): what
       * gst_tbq_record_owned() reads to find the shell. */
      return MIN (size, (guint32) gst_tbq_record_copy_header (h.info));
    case GST_TBQ_RECORD_BUFFER_REF:
    case GST_TBQ_RECORD_EVENT:
    case GST_TBQ_RECORD_QUERY:
      /* A pointer and a little more: all of it. */
      return size;
    default:
      return 0;
  }
}

GstMiniObject *
gst_tbq_record_owned (guint16 type, const void *data, guint32 size)
{
  GstTbqBufferRef buffer;
  GstTbqEventRef event;

  switch (type) {
    case GST_TBQ_RECORD_BUFFER_COPY:
      return copy_shell (data, size);
    case GST_TBQ_RECORD_BUFFER_REF:
      if (G_UNLIKELY (size < sizeof buffer))
        return NULL;
      memcpy (&buffer, data, sizeof buffer);
      return GST_MINI_OBJECT_CAST (buffer.buffer);
    case GST_TBQ_RECORD_EVENT:
      if (G_UNLIKELY (size < sizeof event))
        return NULL;
      memcpy (&event, data, sizeof event);
      return GST_MINI_OBJECT_CAST (event.event);
    default:
      /* A query belongs to its waiting sender. */
      return NULL;
  }
}

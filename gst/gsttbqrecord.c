/* The tbqueue record format: buffers by value (encode, decode), and the
 * items every record holds.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A copy record holds every field of a GstBuffer that is not a pointer
 * (timestamps, duration, offsets, flags) and its payload.  A buffer is only
 * written by value when nothing else would be lost: no metas, and every
 * memory plain system memory (or our own sink memory); anything else travels
 * by reference.  Layouts: gsttbqrecord.h.
 */
#include "gsttbqrecord.h"
#include "gsttbqmemory.h"

/* Buffer flags live above the mini-object flags. */
#define BUFFER_FLAGS_MASK (~(guint32) (GST_MINI_OBJECT_FLAG_LAST - 1))

/* GStreamer's system memory allocator: a pointer compare saves the string
 * compare of gst_memory_is_type() for the common case. */
static GstAllocator *sysmem_allocator;

void
gst_tbq_record_init_once (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    sysmem_allocator = gst_allocator_find (GST_ALLOCATOR_SYSMEM);
    if (sysmem_allocator)
      GST_OBJECT_FLAG_SET (sysmem_allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave (&done, 1);
  }
}

static inline gboolean
memory_is_plain (GstMemory * mem)
{
  if (GST_MEMORY_FLAG_IS_SET (mem, GST_MEMORY_FLAG_NOT_MAPPABLE))
    return FALSE;
  return mem->allocator == sysmem_allocator || mem->allocator == NULL
      || gst_memory_is_type (mem, GST_ALLOCATOR_SYSMEM)
      || gst_tbq_memory_is_tbq (mem);
}

gboolean
gst_tbq_record_can_copy (GstBuffer * buffer, gsize size, gsize max_size)
{
  gpointer state = NULL;
  guint i, n;

  if (size > max_size)
    return FALSE;
  /* Metas cannot be written into a block without losing them. */
  if (gst_buffer_iterate_meta (buffer, &state) != NULL)
    return FALSE;
  n = gst_buffer_n_memory (buffer);
  for (i = 0; i < n; i++)
    if (!memory_is_plain (gst_buffer_peek_memory (buffer, i)))
      return FALSE;
  return TRUE;
}

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

guint32
gst_tbq_record_copy_info (GstBuffer * buffer, guint32 list)
{
  guint32 info = list & GST_TBQ_LIST_MASK;
  guint64 *f[N_FIELDS];
  guint k;

  /* GST_CLOCK_TIME_NONE and GST_BUFFER_OFFSET_NONE are both all ones. */
  G_STATIC_ASSERT (GST_CLOCK_TIME_NONE == GST_BUFFER_OFFSET_NONE);
  buffer_fields (buffer, f);
  for (k = 0; k < N_FIELDS; k++)
    if (*f[k] != GST_BUFFER_OFFSET_NONE)
      info |= GST_TBQ_HAS_PTS << k;
  return info;
}

void
gst_tbq_record_write_copy (void *record, GstBuffer * buffer, gsize payload,
    guint32 info)
{
  GstTbqCopyHeader h;
  guint8 *p = (guint8 *) record + sizeof h;
  guint64 *f[N_FIELDS];
  guint k;

  h.flags = GST_BUFFER_FLAGS (buffer) & BUFFER_FLAGS_MASK;
  h.info = info;
  memcpy (record, &h, sizeof h);
  /* The set fields, in the order the decoder reads them. */
  buffer_fields (buffer, f);
  for (k = 0; k < N_FIELDS; k++)
    if (info & (GST_TBQ_HAS_PTS << k)) {
      memcpy (p, f[k], 8);
      p += 8;
    }
  if (payload == 0)
    return;
  if (G_LIKELY (gst_buffer_n_memory (buffer) == 1)) {
    /* One memory (the usual case): map it, cheaper than extract. */
    GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
    GstMapInfo map;

    if (gst_memory_map (mem, &map, GST_MAP_READ)) {
      memcpy (p, map.data, payload);
      gst_memory_unmap (mem, &map);
      return;
    }
  }
  gst_buffer_extract (buffer, 0, p, payload);
}

/* A new buffer with the fields, flags and bytes of a copy record; its
 * memory holds a reference to the record's sink block.  NULL when the
 * record is shorter than its header says. */
static GstBuffer *
read_copy (const TbqRecord * rec, guint32 * list, gsize * payload)
{
  GstTbqCopyHeader h;
  GstBuffer *buffer;
  const guint8 *p = (const guint8 *) rec->data + sizeof h;
  guint64 *f[N_FIELDS];
  guint k;

  if (G_UNLIKELY (rec->size < sizeof h))
    return NULL;
  memcpy (&h, rec->data, sizeof h);
  if (G_UNLIKELY (rec->size < gst_tbq_record_copy_size (h.info, 0)))
    return NULL;
  *payload = rec->size - gst_tbq_record_copy_size (h.info, 0);
  buffer = gst_buffer_new ();
  /* A new buffer's fields are all unset: set those the record carries. */
  buffer_fields (buffer, f);
  for (k = 0; k < N_FIELDS; k++)
    if (h.info & (GST_TBQ_HAS_PTS << k)) {
      memcpy (f[k], p, 8);
      p += 8;
    }
  if (*payload > 0)
    gst_buffer_append_memory (buffer, gst_tbq_memory_new (rec->block,
            (guint8 *) p, *payload));
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

GstMiniObject *
gst_tbq_record_owned (guint16 type, const void *data, guint32 size)
{
  GstTbqBufferRef buffer;
  GstTbqEventRef event;

  switch (type) {
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
      /* Copy records own nothing; a query belongs to its waiting sender. */
      return NULL;
  }
}

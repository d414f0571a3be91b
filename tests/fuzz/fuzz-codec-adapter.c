/* The fuzzers' adapter to the element's copy-record codec (see the
 * header): gst/gsttbqrecord.c.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-codec-adapter.h"

#include "gsttbqrecord.h"
#include "gsttbqmemory.h"

void
fuzz_codec_init (void)
{
  gst_tbq_memory_init_once ();
  gst_tbq_record_init_once ();
}

gsize
fuzz_codec_record_size (GstBuffer * buffer, gsize size, guint32 list,
    guint32 * info)
{
  *info = gst_tbq_record_copy_info (buffer, list);
  return gst_tbq_record_copy_size (*info, size);
}

void
fuzz_codec_encode (GstBuffer * buffer, gsize size, guint32 info, void *out)
{
  gst_tbq_record_write_copy (out, buffer, size, info);
}

GstBuffer *
fuzz_codec_decode (const TbqRecord * rec, guint32 * list, gsize * size)
{
  GstTbqItem item;

  if (!gst_tbq_record_read (rec, &item))
    return NULL;
  *list = item.list;
  *size = item.size;
  return GST_BUFFER_CAST (item.object);
}

guint32
fuzz_codec_flags_mask (void)
{
  return ~(guint32) (GST_MINI_OBJECT_FLAG_LAST - 1);
}

guint16
fuzz_codec_record_type (void)
{
  return GST_TBQ_RECORD_BUFFER_COPY;
}

gsize
fuzz_codec_max_payload (TbqQueue * q)
{
  return gst_tbq_record_max_copy (tbq_queue_max_record_size (q));
}

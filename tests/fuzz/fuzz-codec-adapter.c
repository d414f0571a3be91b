/* The fuzzers' adapter to the element's copy-record codec (see the
 * header): today gst_tbqueue_buffer_info/encode/decode.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-codec-adapter.h"

#include "gsttbqueue-private.h"
#include "gsttbqmemory.h"

void
fuzz_codec_init (void)
{
  gst_tbq_memory_init_once ();
  gst_tbqueue_record_init_once ();
}

gsize
fuzz_codec_record_size (GstBuffer * buffer, gsize size, guint32 list,
    guint32 * info)
{
  *info = gst_tbqueue_buffer_info (buffer, list);
  return gst_tbq_buffer_header_size (*info) + size;
}

void
fuzz_codec_encode (GstBuffer * buffer, gsize size, guint32 info, void *out)
{
  gst_tbqueue_buffer_encode (buffer, size, info, out);
}

GstBuffer *
fuzz_codec_decode (const TbqRecord * rec, guint32 * list, gsize * size)
{
  return gst_tbqueue_buffer_decode (rec, list, size);
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
  return tbq_queue_max_record_size (q) - GST_TBQ_BUFFER_HEADER_MAX;
}

/* The fuzzers' adapter to the element's copy-record codec (see the
 * header): gst/gsttbqrecord.c.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-codec-adapter.h"

#include "gsttbqrecord.h"
#include "gsttbqmemory.h"

struct FuzzCodecPlan
{
  GstTbqBufferPlan plan;
};

void
fuzz_codec_init (void)
{
  gst_tbq_memory_init_once ();
  gst_tbq_record_init_once ();
}

static void
limits_of (TbqQueue * q, GstTbqLimits * limits)
{
  limits->max_inline = tbq_queue_max_inline_size (q);
  limits->max_record = MAX (tbq_queue_max_extent_size (q),
      tbq_queue_max_record_size (q));
}

FuzzCodecPlan *
fuzz_codec_plan (TbqQueue * q, GstBuffer * buffer, gsize size, guint32 list,
    gsize * record_size)
{
  FuzzCodecPlan *p = g_new0 (FuzzCodecPlan, 1);
  GstTbqLimits limits;

  limits_of (q, &limits);
  if (gst_tbq_record_plan_copy (buffer, size, list, &limits, &p->plan)
      != GST_TBQ_COPY_OK) {
    g_free (p);
    return NULL;
  }
  *record_size = p->plan.size;
  return p;
}

void
fuzz_codec_encode (FuzzCodecPlan * plan, void *out)
{
  gst_tbq_record_write_copy (out, &plan->plan);
  g_free (plan);
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

GstMiniObject *
fuzz_codec_owned (const TbqRecord * rec)
{
  return gst_tbq_record_owned (rec->type, rec->data, rec->size);
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
  GstTbqLimits limits;
  guint32 info = GST_TBQ_WORDS_MASK | GST_TBQ_HAS_LAYOUT | GST_TBQ_ALIGNED
      | (GST_TBQ_MAX_MEMORIES << GST_TBQ_N_MEMORIES_SHIFT);
  gsize header = gst_tbq_record_copy_header (info);

  limits_of (q, &limits);
  return limits.max_record > header ? limits.max_record - header : 0;
}

gsize
fuzz_codec_extent_alignment (void)
{
  return GST_TBQ_PAYLOAD_ALIGN;
}

/* The tbqueue record format (gst/gsttbqrecord.c): records are read back
 * into what was written, and a record too short for its layout is refused
 * without reading beyond it.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The codec is compiled in (the plugin exports nothing else).  Records
 * come from a real libtbq queue: written into its source pool, moved by
 * its copier, read by its reader, so that a copied buffer's memory is a
 * sink block's.
 */
#include "tbq-check.h"

#include "gsttbqmemory.h"
#include "gsttbqrecord.h"

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
} Queue;

static void
queue_open (Queue * qu)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  fail_unless_equals_int (tbq_queue_new (&cfg, &qu->q, NULL, 0), TBQ_OK);
  fail_unless_equals_int (tbq_writer_new (qu->q, &qu->w), TBQ_OK);
  fail_unless_equals_int (tbq_reader_new (qu->q, &qu->r), TBQ_OK);
}

/* Write `size` bytes of `data` as a record of `type`, and read it back
 * (valid until the next read). */
static void
round_trip (Queue * qu, guint16 type, const void *data, guint32 size,
    TbqRecord * rec)
{
  fail_unless_equals_int (tbq_writer_write (qu->w, type, data, size), TBQ_OK);
  tbq_writer_flush (qu->w);
  fail_unless_equals_int (tbq_copier_step (qu->q, 0), TBQ_OK);
  fail_unless_equals_int (tbq_reader_next (qu->r, rec), TBQ_OK);
  fail_unless_equals_int (rec->size, size);
}

GST_START_TEST (test_a_copy_record_reads_back_the_buffer)
{
  Queue qu;
  GstBuffer *b = tbq_buffer_new (100, 7, 5 * GST_SECOND);
  guint32 info = gst_tbq_record_small_info (b, GST_TBQ_LIST_MEMBER);
  gsize size = gst_tbq_record_copy_size (info, 100);
  guint8 *bytes = g_malloc (size);
  GstTbqLimits limits;
  GstMapInfo map;
  TbqRecord rec;
  GstTbqItem item;

  queue_open (&qu);
  limits.max_inline = tbq_queue_max_inline_size (qu.q);
  limits.max_record = tbq_queue_max_extent_size (qu.q);
  limits.max_small = gst_tbq_record_max_small (limits.max_inline);
  fail_unless (gst_tbq_record_map_small (b, 100, &limits, &map));
  gst_tbq_record_write_small (bytes, b, &map, info);
  round_trip (&qu, GST_TBQ_RECORD_BUFFER_COPY, bytes, size, &rec);
  fail_unless (gst_tbq_record_read (&rec, &item));
  fail_unless_equals_int (item.list, GST_TBQ_LIST_MEMBER);
  fail_unless_equals_int (item.size, 100);
  fail_unless (tbq_buffer_has_pattern (GST_BUFFER (item.object), 100, 7));
  fail_unless_equals_uint64 (GST_BUFFER_PTS (item.object), 5 * GST_SECOND);
  gst_mini_object_unref (item.object);
  g_free (bytes);
  gst_buffer_unref (b);
  tbq_queue_free (qu.q, NULL, NULL);
}

GST_END_TEST;

/* Every record type, cut short: refused, nothing read beyond the record
 * (AddressSanitizer would see it: the bytes after a short record are the
 * end of the sink block's data only by chance, so each short record is
 * the last one of a fresh queue). */
GST_START_TEST (test_a_record_too_short_for_its_layout_is_refused)
{
  static const struct
  {
    guint16 type;
    guint32 min;                /* the smallest well-formed size */
  } types[] = {
    {GST_TBQ_RECORD_BUFFER_COPY, sizeof (GstTbqCopyHeader)},
    {GST_TBQ_RECORD_BUFFER_REF, sizeof (GstTbqBufferRef)},
    {GST_TBQ_RECORD_EVENT, sizeof (GstTbqEventRef)},
    {GST_TBQ_RECORD_QUERY, sizeof (GstTbqQueryRef)},
  };
  guint8 junk[64];
  guint t, size;

  memset (junk, 0xff, sizeof junk);
  for (t = 0; t < G_N_ELEMENTS (types); t++) {
    for (size = 0; size < types[t].min; size += 4) {
      Queue qu;
      TbqRecord rec;
      GstTbqItem item;

      queue_open (&qu);
      round_trip (&qu, types[t].type, junk, size, &rec);
      fail_if (gst_tbq_record_read (&rec, &item),
          "a record of type %u and %u bytes was read", types[t].type, size);
      fail_unless (item.object == NULL);
      fail_unless (gst_tbq_record_owned (types[t].type, rec.data, rec.size)
          == NULL);
      fail_unless_equals_int (gst_tbq_record_list_position (&rec), 0);
      tbq_queue_free (qu.q, NULL, NULL);
    }
  }
}

GST_END_TEST;

/* A copy record whose header announces more optional fields than it has
 * bytes for. */
GST_START_TEST (test_a_copy_record_shorter_than_its_fields_is_refused)
{
  GstTbqCopyHeader h = { 0, GST_TBQ_HAS_MASK };
  guint8 bytes[sizeof h + 8];
  Queue qu;
  TbqRecord rec;
  GstTbqItem item;

  memcpy (bytes, &h, sizeof h);
  memset (bytes + sizeof h, 0, 8);
  queue_open (&qu);
  round_trip (&qu, GST_TBQ_RECORD_BUFFER_COPY, bytes, sizeof bytes, &rec);
  fail_if (gst_tbq_record_read (&rec, &item));
  tbq_queue_free (qu.q, NULL, NULL);
}

GST_END_TEST;

static Suite *
tbqueue_record_suite (void)
{
  Suite *s = suite_create ("tbqueue-record");
  TCase *tc = tbq_tcase (s, "record");

  gst_tbq_memory_init_once ();
  gst_tbq_record_init_once ();
  tcase_add_test (tc, test_a_copy_record_reads_back_the_buffer);
  tcase_add_test (tc, test_a_record_too_short_for_its_layout_is_refused);
  tcase_add_test (tc, test_a_copy_record_shorter_than_its_fields_is_refused);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_record);

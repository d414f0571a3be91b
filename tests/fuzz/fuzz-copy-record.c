/* Fuzz target: the element's copy records, for any buffer upstream pushes.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The decoder only ever reads records the element's own encoder wrote (the
 * sink pool is the element's memory; nothing from outside is parsed), so
 * what untrusted input reaches is the encoder: any flags, timestamps,
 * offsets, list position, payload size and memory layout of a buffer.
 * The input describes such a buffer; it is encoded into a record through a
 * real libtbq writer, moved by the copier, read back by the reader and
 * decoded, and the decoded buffer must equal the original field by field
 * and byte by byte.
 *
 * Input: flags (4 bytes), which of pts/dts/duration/offset/offset-end are
 * set (1), their values (5 x 8), list position (1), memories (1), payload.
 */
#include "fuzz-codec-adapter.h"
#include "fuzz-input.h"

#include <string.h>

static TbqQueue *q;
static TbqWriter *w;
static TbqReader *r;

static void
setup (void)
{
  TbqConfig cfg;

  gst_init (NULL, NULL);
  fuzz_codec_init ();
  tbq_config_init (&cfg);
  cfg.source.block_size = 65536;
  cfg.source.min_blocks = cfg.source.max_blocks = 2;
  cfg.sink.block_size = 65536;
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = 8;
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  FUZZ_CHECK (tbq_queue_new (&cfg, &q, NULL, 0) == TBQ_OK, "queue");
  FUZZ_CHECK (tbq_writer_new (q, &w) == TBQ_OK, "writer");
  FUZZ_CHECK (tbq_reader_new (q, &r) == TBQ_OK, "reader");
}

static GstBuffer *
make_buffer (FuzzInput * in, guint64 f[5], guint32 * list)
{
  guint32 flags = (guint32) fuzz_take (in, 4) & fuzz_codec_flags_mask ();
  guint set = (guint) fuzz_take (in, 1), nmem, k;
  gsize len, cut = 0, max = fuzz_codec_max_payload (q);
  GstBuffer *buf = gst_buffer_new ();

  for (k = 0; k < 5; k++) {
    f[k] = fuzz_take (in, 8);
    if (!(set & (1u << k)))
      f[k] = GST_CLOCK_TIME_NONE;
  }
  *list = (guint32) fuzz_take (in, 1) & 7;
  nmem = 1 + (guint) fuzz_take (in, 1) % 4;
  len = MIN (in->n, max);
  for (k = 0; k < nmem; k++) {
    gsize end = k + 1 == nmem ? len : len * (k + 1) / nmem;

    if (end > cut) {
      guint8 *d = g_memdup2 (in->p + cut, end - cut);

      gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, d, end - cut,
              0, end - cut, d, g_free));
    }
    cut = end;
  }
  GST_BUFFER_PTS (buf) = f[0];
  GST_BUFFER_DTS (buf) = f[1];
  GST_BUFFER_DURATION (buf) = f[2];
  GST_BUFFER_OFFSET (buf) = f[3];
  GST_BUFFER_OFFSET_END (buf) = f[4];
  GST_MINI_OBJECT_FLAGS (buf) = (GST_MINI_OBJECT_FLAGS (buf)
      & ~fuzz_codec_flags_mask ()) | flags;
  return buf;
}

/* Through libtbq and back: the record as the src task reads it. */
static GstBuffer *
round_trip (GstBuffer * buf, gsize len, guint32 list, guint32 * list_out,
    gsize * len_out)
{
  guint32 info;
  gsize rsize = fuzz_codec_record_size (buf, len, list, &info);
  TbqRecord rec;
  void *p;
  int i;

  FUZZ_CHECK (tbq_writer_reserve (w, fuzz_codec_record_type (),
          (uint32_t) rsize, &p) == TBQ_OK, "reserve %zu", rsize);
  fuzz_codec_encode (buf, len, info, p);
  tbq_writer_commit (w);
  tbq_writer_flush (w);
  for (i = 0; tbq_reader_next (r, &rec) != TBQ_OK; i++) {
    FUZZ_CHECK (i < 4, "the record never reached the reader");
    tbq_copier_step (q, 0);
  }
  FUZZ_CHECK (rec.type == fuzz_codec_record_type () && rec.size == rsize,
      "record type %u size %u, wrote %zu", rec.type, rec.size, rsize);
  return fuzz_codec_decode (&rec, list_out, len_out);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  FuzzInput in = { data, size };
  guint64 f[5];
  guint32 list, list_out, mask = fuzz_codec_flags_mask ();
  GstBuffer *buf, *out;
  gsize len, len_out;
  guint8 *bytes;

  if (q == NULL)
    setup ();
  buf = make_buffer (&in, f, &list);
  len = gst_buffer_get_size (buf);
  out = round_trip (buf, len, list, &list_out, &len_out);
  FUZZ_CHECK (len_out == len && gst_buffer_get_size (out) == len,
      "payload %zu, decoded %zu", len, len_out);
  FUZZ_CHECK (list_out == list, "list position %u, decoded %u", list,
      list_out);
  FUZZ_CHECK (GST_BUFFER_PTS (out) == f[0] && GST_BUFFER_DTS (out) == f[1]
      && GST_BUFFER_DURATION (out) == f[2] && GST_BUFFER_OFFSET (out) == f[3]
      && GST_BUFFER_OFFSET_END (out) == f[4], "a timestamp or offset changed");
  FUZZ_CHECK ((GST_MINI_OBJECT_FLAGS (out) & mask)
      == (GST_MINI_OBJECT_FLAGS (buf) & mask), "flags 0x%x, decoded 0x%x",
      GST_MINI_OBJECT_FLAGS (buf) & mask, GST_MINI_OBJECT_FLAGS (out) & mask);
  bytes = g_malloc (len + 1);
  gst_buffer_extract (buf, 0, bytes, len);
  FUZZ_CHECK (gst_buffer_memcmp (out, 0, bytes, len) == 0, "payload differs");
  g_free (bytes);
  gst_buffer_unref (out);
  gst_buffer_unref (buf);
  return 0;
}

/* Fuzz target: the element's copy records, for any buffer upstream pushes.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The decoder only ever reads records the element's own encoder wrote (the
 * sink pool is the element's memory; nothing from outside is parsed), so
 * what untrusted input reaches is the encoder: any flags, timestamps,
 * offsets, list position, payload size, memory layout and metas of a
 * buffer.  The input describes such a buffer; it is encoded into a record
 * through a real libtbq writer (large payloads travel in an extent), moved
 * by the copier, read back by the reader and decoded, and the decoded
 * buffer must equal the original field by field, meta by meta, memory by
 * memory and byte by byte; or the record is discarded, and what it owns
 * released (no leak).  A buffer with a meta that cannot be copied must be
 * refused, and only such a one.
 *
 * Input: flags (4 bytes), which of pts/dts/duration/offset/offset-end are
 * set (1), their values (5 x 8), list position (1), memories (1), metas and
 * what to do (1: bit 0 a reference timestamp meta, bit 1 a custom meta,
 * bit 2 a parent buffer meta, bit 3 a meta that refuses copies, bit 4
 * discard instead of read), repeat (1: the payload is repeated 1 + r % 64
 * times, to reach extents), payload.
 */
#include "fuzz-codec-adapter.h"
#include "fuzz-input.h"

#include <string.h>

#define META_REFERENCE 1u
#define META_CUSTOM 2u
#define META_PARENT 4u
#define META_REFUSING 8u
#define DISCARD 16u

static TbqQueue *q;
static TbqWriter *w;
static TbqReader *r;
static GstCaps *ref_caps;

static gboolean
refuse_copy (GstBuffer * transbuf, GstCustomMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data, gpointer user_data)
{
  return FALSE;
}

static void
setup (void)
{
  TbqConfig cfg;
  static const gchar *no_tags[] = { NULL };

  gst_init (NULL, NULL);
  fuzz_codec_init ();
  tbq_config_init (&cfg);
  cfg.source.block_size = 65536;
  cfg.source.min_blocks = cfg.source.max_blocks = 2;
  cfg.sink.block_size = 65536;
  cfg.sink.min_blocks = 2;
  /* Room for two large records: the one the reader still holds, and the
   * next. */
  cfg.sink.max_blocks = 64;
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  FUZZ_CHECK (tbq_queue_new (&cfg, &q, NULL, 0) == TBQ_OK, "queue");
  FUZZ_CHECK (tbq_writer_new (q, &w) == TBQ_OK, "writer");
  FUZZ_CHECK (tbq_reader_new (q, &r) == TBQ_OK, "reader");
  ref_caps = gst_caps_new_empty_simple ("timestamp/x-fuzz");
  gst_meta_register_custom ("FuzzCustomMeta", no_tags, NULL, NULL, NULL);
  gst_meta_register_custom ("FuzzRefusingMeta", no_tags,
      refuse_copy, NULL, NULL);
}

/* The reference timestamp meta's time: any valid one. */
static inline GstClockTime
ref_time (guint64 v)
{
  return v == GST_CLOCK_TIME_NONE ? 0 : v;
}

static void
add_metas (GstBuffer * buf, guint metas, const guint64 f[5])
{
  if (metas & META_REFERENCE)
    gst_buffer_add_reference_timestamp_meta (buf, ref_caps, ref_time (f[0]),
        f[2]);
  if (metas & META_CUSTOM) {
    GstCustomMeta *m = gst_buffer_add_custom_meta (buf, "FuzzCustomMeta");

    gst_structure_set (gst_custom_meta_get_structure (m), "v",
        G_TYPE_UINT64, f[1], NULL);
  }
  if (metas & META_PARENT) {
    GstBuffer *parent = gst_buffer_new ();

    gst_buffer_add_parent_buffer_meta (buf, parent);
    gst_buffer_unref (parent);
  }
  if (metas & META_REFUSING)
    gst_buffer_add_custom_meta (buf, "FuzzRefusingMeta");
}

static GstBuffer *
make_buffer (FuzzInput * in, guint64 f[5], guint32 * list, guint * metas)
{
  guint32 flags = (guint32) fuzz_take (in, 4) & fuzz_codec_flags_mask ();
  guint set = (guint) fuzz_take (in, 1), nmem, k, repeat;
  /* A third of what the queue takes: the reader still holds the last
   * record's extent while the next one is written. */
  gsize len, cut = 0, max = fuzz_codec_max_payload (q) / 3;
  GstBuffer *buf = gst_buffer_new ();
  guint8 *bytes;

  for (k = 0; k < 5; k++) {
    f[k] = fuzz_take (in, 8);
    if (!(set & (1u << k)))
      f[k] = GST_CLOCK_TIME_NONE;
  }
  *list = (guint32) fuzz_take (in, 1) & 7;
  nmem = 1 + (guint) fuzz_take (in, 1) % 4;
  *metas = (guint) fuzz_take (in, 1);
  repeat = 1 + (guint) fuzz_take (in, 1) % 64;
  len = MIN (in->n * repeat, max);
  bytes = g_malloc (len + 1);
  for (k = 0; in->n > 0 && k * in->n < len; k++)
    memcpy (bytes + k * in->n, in->p, MIN (in->n, len - k * in->n));
  for (k = 0; k < nmem; k++) {
    gsize end = k + 1 == nmem ? len : len * (k + 1) / nmem;

    if (end > cut) {
      guint8 *d = g_memdup2 (bytes + cut, end - cut);

      gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, d, end - cut,
              0, end - cut, d, g_free));
    }
    cut = end;
  }
  g_free (bytes);
  GST_BUFFER_PTS (buf) = f[0];
  GST_BUFFER_DTS (buf) = f[1];
  GST_BUFFER_DURATION (buf) = f[2];
  GST_BUFFER_OFFSET (buf) = f[3];
  GST_BUFFER_OFFSET_END (buf) = f[4];
  add_metas (buf, *metas, f);
  GST_MINI_OBJECT_FLAGS (buf) = (GST_MINI_OBJECT_FLAGS (buf)
      & ~fuzz_codec_flags_mask ()) | flags;
  return buf;
}

static void
release (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  TbqRecord rec = { data, size, type, NULL };
  GstMiniObject *owned = fuzz_codec_owned (&rec);

  if (owned != NULL)
    gst_mini_object_unref (owned);
  (*(guint *) user_data)++;
}

/* Through libtbq and back: the record as the src task reads it, or NULL
 * when it was discarded instead. */
static GstBuffer *
round_trip (FuzzCodecPlan * plan, gsize rsize, gboolean discard,
    guint32 * list_out, gsize * len_out)
{
  TbqRecord rec;
  guint released = 0;
  void *p;
  int i;

  FUZZ_CHECK (tbq_writer_reserve (w, fuzz_codec_record_type (),
          (uint32_t) rsize, &p) == TBQ_OK, "reserve %zu", rsize);
  fuzz_codec_encode (plan, p);
  tbq_writer_commit (w);
  tbq_writer_flush (w);
  if (discard) {
    tbq_copier_step (q, 0);
    tbq_queue_discard (q, release, &released);
    FUZZ_CHECK (released == 1, "%u records discarded", released);
    return NULL;
  }
  for (i = 0; tbq_reader_next (r, &rec) != TBQ_OK; i++) {
    FUZZ_CHECK (i < 4, "the record never reached the reader");
    tbq_copier_step (q, 0);
  }
  FUZZ_CHECK (rec.type == fuzz_codec_record_type () && rec.size == rsize,
      "record type %u size %u, wrote %zu", rec.type, rec.size, rsize);
  return fuzz_codec_decode (&rec, list_out, len_out);
}

static void
check_metas (GstBuffer * out, guint metas, const guint64 f[5])
{
  GstReferenceTimestampMeta *ref =
      gst_buffer_get_reference_timestamp_meta (out, ref_caps);
  GstCustomMeta *custom = gst_buffer_get_custom_meta (out, "FuzzCustomMeta");
  guint64 v = 0;

  FUZZ_CHECK ((ref != NULL) == !!(metas & META_REFERENCE),
      "reference timestamp meta %s", ref ? "appeared" : "lost");
  FUZZ_CHECK (ref == NULL || (ref->timestamp == ref_time (f[0])
          && ref->duration == f[2]), "reference timestamp meta changed");
  FUZZ_CHECK ((custom != NULL) == !!(metas & META_CUSTOM),
      "custom meta %s", custom ? "appeared" : "lost");
  FUZZ_CHECK (custom == NULL
      || (gst_structure_get_uint64 (gst_custom_meta_get_structure (custom),
              "v", &v) && v == f[1]), "custom meta changed");
  /* A deep copy leaves out what holds another buffer's memory. */
  FUZZ_CHECK (gst_buffer_get_n_meta (out, GST_PARENT_BUFFER_META_API_TYPE)
      == 0, "parent buffer meta copied");
}

/* The same memories (sizes) as `buf`, one for a non-empty single one, and
 * a record in an extent has its payload aligned. */
static void
check_layout (GstBuffer * out, GstBuffer * buf, gsize len, gsize rsize)
{
  guint k, n = gst_buffer_n_memory (buf);
  GstMapInfo map;

  if (n <= 1) {
    FUZZ_CHECK (gst_buffer_n_memory (out) == (len > 0 ? 1u : 0u),
        "%u memories for %zu bytes", gst_buffer_n_memory (out), len);
  } else {
    FUZZ_CHECK (gst_buffer_n_memory (out) == n, "%u memories, pushed %u",
        gst_buffer_n_memory (out), n);
    for (k = 0; k < n; k++)
      FUZZ_CHECK (gst_buffer_peek_memory (out, k)->size
          == gst_buffer_peek_memory (buf, k)->size, "memory %u size", k);
  }
  if (len == 0 || rsize <= tbq_queue_max_inline_size (q))
    return;
  FUZZ_CHECK (gst_memory_map (gst_buffer_peek_memory (out, 0), &map,
          GST_MAP_READ), "map");
  FUZZ_CHECK ((guintptr) map.data % fuzz_codec_extent_alignment () == 0,
      "payload of a large record at %p", map.data);
  gst_memory_unmap (gst_buffer_peek_memory (out, 0), &map);
}

static void
check_buffer (GstBuffer * out, GstBuffer * buf, gsize len, gsize rsize,
    const guint64 f[5], guint metas)
{
  guint32 mask = fuzz_codec_flags_mask ();
  guint8 *bytes;

  FUZZ_CHECK (GST_BUFFER_PTS (out) == f[0] && GST_BUFFER_DTS (out) == f[1]
      && GST_BUFFER_DURATION (out) == f[2] && GST_BUFFER_OFFSET (out) == f[3]
      && GST_BUFFER_OFFSET_END (out) == f[4], "a timestamp or offset changed");
  FUZZ_CHECK ((GST_MINI_OBJECT_FLAGS (out) & mask)
      == (GST_MINI_OBJECT_FLAGS (buf) & mask), "flags 0x%x, decoded 0x%x",
      GST_MINI_OBJECT_FLAGS (buf) & mask, GST_MINI_OBJECT_FLAGS (out) & mask);
  check_metas (out, metas, f);
  check_layout (out, buf, len, rsize);
  bytes = g_malloc (len + 1);
  gst_buffer_extract (buf, 0, bytes, len);
  FUZZ_CHECK (gst_buffer_memcmp (out, 0, bytes, len) == 0, "payload differs");
  g_free (bytes);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  FuzzInput in = { data, size };
  guint64 f[5];
  guint32 list, list_out;
  guint metas;
  FuzzCodecPlan *plan;
  GstBuffer *buf, *out;
  gsize len, len_out, rsize = 0;

  if (q == NULL)
    setup ();
  buf = make_buffer (&in, f, &list, &metas);
  len = gst_buffer_get_size (buf);
  plan = fuzz_codec_plan (q, buf, len, list, &rsize);
  /* Wrapped system memory of a size the queue holds: refused only for a
   * meta that cannot be copied. */
  FUZZ_CHECK ((plan == NULL) == !!(metas & META_REFUSING),
      "copy %s", plan ? "accepted" : "refused");
  if (plan != NULL) {
    out = round_trip (plan, rsize, metas & DISCARD, &list_out, &len_out);
    if (out != NULL) {
      FUZZ_CHECK (len_out == len && gst_buffer_get_size (out) == len,
          "payload %zu, decoded %zu", len, len_out);
      FUZZ_CHECK (list_out == list, "list position %u, decoded %u", list,
          list_out);
      check_buffer (out, buf, len, rsize, f, metas);
      gst_buffer_unref (out);
    }
  }
  gst_buffer_unref (buf);
  return 0;
}

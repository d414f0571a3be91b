/* The soak harness: what a buffer of a given seq looks like.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The producer plans a buffer (size, flags, timestamps, how it is built)
 * into its log entry; its bytes are a function of its seq alone: the seq
 * itself as the first 64-bit little-endian word, then a hash of the seq and
 * the word's index, so that a flipped, shifted or foreign byte is found
 * wherever it is.  The verifier rebuilds the same from the entry.
 */
#include "soak.h"

#include <math.h>
#include <string.h>

/* Word `i` (i >= 1) of seq's payload. */
static inline guint64
payload_word (guint64 key, guint64 i)
{
  guint64 z = key ^ (i * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 32)) * G_GUINT64_CONSTANT (0xD6E8FEB86659FD93);
  z = (z ^ (z >> 32)) * G_GUINT64_CONSTANT (0xD6E8FEB86659FD93);
  return z ^ (z >> 32);
}

static inline guint64
payload_key (guint64 seq)
{
  return seq * G_GUINT64_CONSTANT (0xA0761D6478BD642F) ^ soak.seed;
}

/* Payload bytes [off, off + len) of `seq` into dst. */
void
soak_payload_fill (guint8 * dst, gsize off, gsize len, guint64 seq)
{
  guint64 key = payload_key (seq);

  while (len > 0) {
    guint64 i = off / 8, w = i == 0 ? GUINT64_TO_LE (seq)
        : GUINT64_TO_LE (payload_word (key, i));
    gsize in = off % 8, n = MIN (8 - in, len);

    if (in == 0 && n == 8) {
      memcpy (dst, &w, 8);
    } else {
      memcpy (dst, (guint8 *) & w + in, n);
    }
    dst += n;
    off += n;
    len -= n;
  }
}

/* Offset of the first byte of src[0, len) that differs from the payload at
 * `off`, or -1. */
gssize
soak_payload_compare (const guint8 * src, gsize off, gsize len, guint64 seq)
{
  guint8 tmp[4096];
  gsize done = 0;

  while (done < len) {
    gsize n = MIN (sizeof tmp, len - done), k;

    soak_payload_fill (tmp, off + done, n, seq);
    if (memcmp (tmp, src + done, n) != 0) {
      for (k = 0; tmp[k] == src[done + k]; k++);
      return (gssize) (off + done + k);
    }
    done += n;
  }
  return -1;
}

guint64
soak_log_range (guint64 * x, guint64 lo, guint64 hi)
{
  gdouble l = log ((gdouble) lo), h = log ((gdouble) hi + 1);
  gdouble u = (gdouble) (soak_splitmix (x) >> 11) / (gdouble) (1ull << 53);
  guint64 v = (guint64) exp (l + u * (h - l));

  return CLAMP (v, lo, hi);
}

static guint32
plan_size (guint64 * rng, guint32 max_size, guint8 * layout)
{
  const SoakChapter *ch = &soak.ch;
  guint64 r = soak_rand (rng, 1000), size;

  if (r < ch->frame_permille && ch->frame_size > 0) {
    size = ch->frame_size;
    if ((soak.features & SOAK_F_POOL) && soak.frame_pool != NULL)
      *layout |= SOAK_LAYOUT_POOL;
  } else if (r < ch->frame_permille + ch->big_permille) {
    size = soak_log_range (rng, 64 * 1024, 4 * 1024 * 1024);
  } else {
    r = soak_rand (rng, 100);
    if (r < 4)
      size = 0;
    else if (r < 70)
      size = soak_log_range (rng, 1, 64);
    else if (r < 95)
      size = soak_log_range (rng, 65, 4096);
    else
      size = soak_log_range (rng, 4097, 64 * 1024);
  }
  if (size > max_size) {
    size = max_size;
    *layout &= ~SOAK_LAYOUT_POOL;
  }
  if ((*layout & SOAK_LAYOUT_POOL) && size != ch->frame_size)
    *layout &= ~SOAK_LAYOUT_POOL;
  return (guint32) size;
}

static guint32
plan_flags (guint64 * rng)
{
  static const guint32 flags[] = {
    GST_BUFFER_FLAG_LIVE, GST_BUFFER_FLAG_DISCONT, GST_BUFFER_FLAG_RESYNC,
    GST_BUFFER_FLAG_CORRUPTED, GST_BUFFER_FLAG_MARKER, GST_BUFFER_FLAG_HEADER,
    GST_BUFFER_FLAG_GAP, GST_BUFFER_FLAG_DROPPABLE, GST_BUFFER_FLAG_DELTA_UNIT,
    GST_BUFFER_FLAG_NON_DROPPABLE,
  };
  guint32 f = 0;
  guint i;

  /* Most buffers have none, some have one or more. */
  if (soak_rand (rng, 4) != 0)
    return 0;
  for (i = 0; i < G_N_ELEMENTS (flags); i++)
    if (soak_rand (rng, 5) == 0)
      f |= flags[i];
  return f;
}

void
soak_data_plan_buffer (SoakEntry * e, guint64 seq, guint64 * rng,
    guint32 max_size)
{
  guint64 step = soak.ch.ts_step, r;

  e->layout = 0;
  e->size = plan_size (rng, max_size, &e->layout);
  e->flags = plan_flags (rng);
  r = soak_rand (rng, 100);
  e->pts = r < 5 ? GST_CLOCK_TIME_NONE : seq * step;
  r = soak_rand (rng, 100);
  if (r < 40 || e->pts == GST_CLOCK_TIME_NONE)
    e->dts = r < 20 ? GST_CLOCK_TIME_NONE : seq * step;
  else
    e->dts = e->pts >= step / 2 ? e->pts - step / 2 : e->pts;
  e->duration = soak_rand (rng, 100) < 85 ? step : GST_CLOCK_TIME_NONE;
  if (soak_rand (rng, 10) == 0)
    e->layout |= SOAK_LAYOUT_NO_OFFSET_END;
  if ((soak.features & SOAK_F_MULTIMEM) && e->size >= 2
      && !(e->layout & SOAK_LAYOUT_POOL) && soak_rand (rng, 20) == 0)
    e->layout |= SOAK_LAYOUT_MULTIMEM;
  if ((soak.features & SOAK_F_META) && soak_rand (rng, 50) == 0)
    e->layout |= SOAK_LAYOUT_META;
}

static void
memory_freed (gpointer data)
{
  atomic_fetch_add_explicit (&soak.mem_freed, 1, memory_order_relaxed);
  /* After every check of it (soak.h). */
  SOAK_TSAN_ACQUIRE (data);
  g_free (data);
}

/* A memory of `len` payload bytes from `off`, freed with a count. */
static GstMemory *
payload_memory (guint64 seq, gsize off, gsize len)
{
  guint8 *data = g_malloc (len);

  soak_payload_fill (data, off, len, seq);
  atomic_fetch_add_explicit (&soak.mem_created, 1, memory_order_relaxed);
  return gst_memory_new_wrapped (0, data, len, 0, len, data, memory_freed);
}

static GstBuffer *
pool_buffer (const SoakEntry * e, guint64 seq)
{
  GstBuffer *buf = NULL;
  GstMapInfo map;

  if (gst_buffer_pool_acquire_buffer (soak.frame_pool, &buf, NULL)
      != GST_FLOW_OK)
    soak_fail ("harness", "cannot acquire a buffer from the frame pool");
  gst_buffer_set_size (buf, e->size);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  soak_payload_fill (map.data, 0, e->size, seq);
  gst_buffer_unmap (buf, &map);
  return buf;
}

GstBuffer *
soak_data_make_buffer (const SoakEntry * e, guint64 seq)
{
  GstBuffer *buf;

  if (e->layout & SOAK_LAYOUT_POOL) {
    buf = pool_buffer (e, seq);
  } else {
    buf = gst_buffer_new ();
    if (e->layout & SOAK_LAYOUT_MULTIMEM) {
      /* Three memories (two when tiny), never an empty one. */
      gsize cut1 = MAX (e->size / 3, 1), cut2 = MAX (e->size / 3 * 2, cut1);

      gst_buffer_append_memory (buf, payload_memory (seq, 0, cut1));
      if (cut2 > cut1)
        gst_buffer_append_memory (buf, payload_memory (seq, cut1,
                cut2 - cut1));
      gst_buffer_append_memory (buf, payload_memory (seq, cut2,
              e->size - cut2));
    } else if (e->size > 0) {
      gst_buffer_append_memory (buf, payload_memory (seq, 0, e->size));
    }
  }
  GST_BUFFER_PTS (buf) = e->pts;
  GST_BUFFER_DTS (buf) = e->dts;
  GST_BUFFER_DURATION (buf) = e->duration;
  GST_BUFFER_OFFSET (buf) = seq;
  GST_BUFFER_OFFSET_END (buf) = (e->layout & SOAK_LAYOUT_NO_OFFSET_END)
      ? GST_BUFFER_OFFSET_NONE : seq + e->size;
  GST_BUFFER_FLAG_UNSET (buf, SOAK_FLAGS_MASK);
  GST_BUFFER_FLAG_SET (buf, e->flags);
  if (e->layout & SOAK_LAYOUT_META)
    gst_buffer_add_reference_timestamp_meta (buf, soak.meta_caps, seq,
        e->size);
  return buf;
}

/* The buffer's bytes are the payload's from `off`. */
static gchar *
check_payload (GstBuffer * buf, const SoakEntry * e, guint64 seq, gsize off)
{
  guint i, n = gst_buffer_n_memory (buf);

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    GstMapInfo map;
    gssize bad;

    if (!gst_memory_map (mem, &map, GST_MAP_READ))
      return g_strdup_printf ("memory %u of %u cannot be mapped", i, n);
    bad = soak_payload_compare (map.data, off, map.size, seq);
    off += map.size;
    /* The base of what the memory maps (ours: the g_malloc'ed block that
     * memory_freed() frees): read before its free (soak.h). */
    SOAK_TSAN_RELEASE (map.data - mem->offset);
    gst_memory_unmap (mem, &map);
    if (bad >= 0)
      return g_strdup_printf ("payload byte %" G_GSSIZE_FORMAT " of %u "
          "differs (memory %u of %u)", bad, e->size, i, n);
  }
  return NULL;
}

static gchar *
check_fields (GstBuffer * buf, const SoakEntry * e, guint64 seq, gsize len)
{
  guint64 end = (e->layout & SOAK_LAYOUT_NO_OFFSET_END)
      ? GST_BUFFER_OFFSET_NONE : seq + e->size;
  guint32 mask = SOAK_FLAGS_MASK & ~GST_BUFFER_FLAG_DISCONT;

  if (gst_buffer_get_size (buf) != len)
    return g_strdup_printf ("size %" G_GSIZE_FORMAT ", pushed %u%s",
        gst_buffer_get_size (buf), e->size, len != e->size ? " (a part of "
        "it due)" : "");
  if (GST_BUFFER_PTS (buf) != e->pts || GST_BUFFER_DTS (buf) != e->dts
      || GST_BUFFER_DURATION (buf) != e->duration)
    return g_strdup_printf ("pts/dts/duration %" GST_TIME_FORMAT "/%"
        GST_TIME_FORMAT "/%" GST_TIME_FORMAT ", pushed %" GST_TIME_FORMAT
        "/%" GST_TIME_FORMAT "/%" GST_TIME_FORMAT,
        GST_TIME_ARGS (GST_BUFFER_PTS (buf)),
        GST_TIME_ARGS (GST_BUFFER_DTS (buf)),
        GST_TIME_ARGS (GST_BUFFER_DURATION (buf)), GST_TIME_ARGS (e->pts),
        GST_TIME_ARGS (e->dts), GST_TIME_ARGS (e->duration));
  if (GST_BUFFER_OFFSET_END (buf) != end)
    return g_strdup_printf ("offset-end %" G_GUINT64_FORMAT ", pushed %"
        G_GUINT64_FORMAT, GST_BUFFER_OFFSET_END (buf), end);
  if ((GST_BUFFER_FLAGS (buf) & mask) != (e->flags & mask))
    return g_strdup_printf ("flags 0x%x, pushed 0x%x",
        GST_BUFFER_FLAGS (buf) & mask, e->flags & mask);
  return NULL;
}

gchar *
soak_data_check_part (GstBuffer * buf, const SoakEntry * e, guint64 seq,
    gsize off, gsize len)
{
  GstReferenceTimestampMeta *meta;
  gchar *err = check_fields (buf, e, seq, len);

  if (err != NULL)
    return err;
  meta = gst_buffer_get_reference_timestamp_meta (buf, soak.meta_caps);
  if ((e->layout & SOAK_LAYOUT_META) && (meta == NULL
          || meta->timestamp != seq || meta->duration != e->size))
    return g_strdup ("its reference timestamp meta is missing or changed");
  if (!(e->layout & SOAK_LAYOUT_META) && meta != NULL)
    return g_strdup ("it carries a meta that was not pushed");
  return check_payload (buf, e, seq, off);
}

guint64
soak_data_position_after (guint64 pos, const SoakEntry * e)
{
  guint64 ts = e->dts != GST_CLOCK_TIME_NONE ? e->dts : e->pts;

  if (ts == GST_CLOCK_TIME_NONE)
    ts = pos;
  if (e->duration != GST_CLOCK_TIME_NONE)
    ts += e->duration;
  return ts;
}

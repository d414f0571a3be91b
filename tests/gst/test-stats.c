/* tbqueue stats: the figures add up with what was pushed and what is held.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Downstream is held (on STREAM_START, or in its chain function), so that
 * everything pushed stays queued and each reading is exact; the tests wait
 * only for states the element promises (the buffers downstream, the copy
 * task having moved the sealed source blocks), never for a time.
 */
#include "tbq-check.h"

#define SINK_BLOCK 65536        /* sink-block-size, the default */
#define BLOCK_HEADER 64         /* libtbq's, at the start of each block */
#define SINK_MAX G_GUINT64_CONSTANT (268435456) /* sink-max-bytes, default */
#define FRAME_DURATION (GST_SECOND / 30)

/* ---- reading the stats ---- */

static guint64
field (const GstStructure * s, const gchar * name)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, name, &v), "no stats field %s",
      name);
  return v;
}

static GstStructure *
stats_of (TbqLink * l)
{
  GstStructure *s = NULL;

  g_object_get (l->element, "stats", &s, NULL);
  fail_unless (s != NULL);
  return s;
}

/* In one reading, every peak is at least its current level. */
static void
check_peaks_cover_the_levels (const GstStructure * s)
{
  static const gchar *levels[] = { "buffers", "bytes", "time" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (levels); i++) {
    gchar *cur = g_strdup_printf ("current-level-%s", levels[i]);
    gchar *peak = g_strdup_printf ("peak-level-%s", levels[i]);

    fail_unless (field (s, peak) >= field (s, cur), "%s %" G_GUINT64_FORMAT
        " below %s %" G_GUINT64_FORMAT, peak, field (s, peak), cur,
        field (s, cur));
    g_free (cur);
    g_free (peak);
  }
  fail_unless (field (s, "sink-bytes-peak") >= field (s, "sink-bytes-in-use"),
      "sink-bytes-peak %" G_GUINT64_FORMAT " below sink-bytes-in-use %"
      G_GUINT64_FORMAT, field (s, "sink-bytes-peak"),
      field (s, "sink-bytes-in-use"));
}

/* Wait until a stats field is at most `value`. */
static void
wait_stat_at_most (TbqLink * l, const gchar * name, guint64 value)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_USEC_PER_SEC;

  while (tbq_stat (l->element, name) > value) {
    fail_unless (g_get_monotonic_time () < end, "timed out waiting for %s "
        "to drop to %" G_GUINT64_FORMAT, name, value);
    g_usleep (1000);
  }
}

/* Buffer k of a stream of `size`-byte buffers: pts k/30 s, 1/30 s long. */
static GstBuffer *
frame_new (gsize size, guint k)
{
  GstBuffer *b = tbq_buffer_new (size, (guint8) k, k * FRAME_DURATION);

  GST_BUFFER_DURATION (b) = FRAME_DURATION;
  return b;
}

/* The bytes a copied buffer's record takes in a sink block, as
 * docs/element.md says: 8 for libtbq, 8 for the buffer's flags, 8 for each
 * timestamp, duration or offset that is set, the payload, rounded up to
 * 8. */
static gsize
inline_record_span (GstBuffer * b)
{
  gsize n = 8 + 8 + gst_buffer_get_size (b);

  n += GST_BUFFER_PTS_IS_VALID (b) ? 8 : 0;
  n += GST_BUFFER_DTS_IS_VALID (b) ? 8 : 0;
  n += GST_BUFFER_DURATION_IS_VALID (b) ? 8 : 0;
  n += GST_BUFFER_OFFSET_IS_VALID (b) ? 8 : 0;
  n += GST_BUFFER_OFFSET_END_IS_VALID (b) ? 8 : 0;
  return GST_ROUND_UP_8 (n);
}

/* ---- sink-bytes-in-use: the memory held ---- */

typedef struct
{
  gsize size;
  guint n;
  gboolean frame;               /* above a quarter of a source block: it
                                 * travels in an extent */
} Held;

/* Small buffers (2 MB), frames of 100 kB and of 4 MiB (64 MB each). */
static const Held held[] = {
  {100, 20000, FALSE},
  {100000, 640, TRUE},
  {4194304, 15, TRUE},
};

static TbqLink *
copy_link (void)
{
  return tbq_link_new ("tbqueue", "transfer", 1, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
}

/* With downstream held, the sink pool's memory in use is what the queued
 * buffers take: their payload, within 10 %, for frames; for small buffers
 * their records in whole sink blocks (within 10 %), which is more than the
 * payload (records carry their headers).  Every peak covers its level
 * while held and is the level held once everything went out. */
GST_START_TEST (test_sink_bytes_in_use_is_the_memory_the_queue_holds)
{
  const Held *h = &held[__i__];
  TbqLink *l = copy_link ();
  GstStructure *s;
  guint64 bytes = (guint64) h->n * h->size, sink, expected, held_sink;
  gsize span = 0;
  guint k;

  tbq_link_start_held (l);
  for (k = 0; k < h->n; k++) {
    GstBuffer *b = frame_new (h->size, k);

    span = inline_record_span (b);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  /* The copy task moves the source pool's sealed blocks once half of it
   * is sealed: what stays behind is at most the upstream thread's current
   * block and one sealed one. */
  wait_stat_at_most (l, "source-blocks-in-use", 2);

  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "current-level-buffers"), h->n);
  fail_unless_equals_uint64 (field (s, "current-level-bytes"), bytes);
  fail_unless_equals_uint64 (field (s, "current-level-time"),
      h->n * FRAME_DURATION);
  fail_unless_equals_uint64 (field (s, "buffers-copied"), h->n);
  fail_unless_equals_uint64 (field (s, "bytes-copied"), bytes);
  sink = field (s, "sink-bytes-in-use");
  GST_INFO ("%u buffers of %" G_GSIZE_FORMAT " bytes: sink-bytes-in-use %"
      G_GUINT64_FORMAT ", sink-blocks-in-use %" G_GUINT64_FORMAT, h->n,
      h->size, sink, field (s, "sink-blocks-in-use"));
  fail_unless (sink <= SINK_MAX);
  fail_unless (sink >= bytes, "sink-bytes-in-use %" G_GUINT64_FORMAT
      " below the %" G_GUINT64_FORMAT " bytes held", sink, bytes);
  if (h->frame) {
    expected = bytes;
  } else {
    guint64 per_block = (SINK_BLOCK - BLOCK_HEADER) / span;

    expected = (h->n + per_block - 1) / per_block * SINK_BLOCK;
  }
  fail_unless (sink <= expected + expected / 10 && sink >= expected
      - expected / 10, "sink-bytes-in-use %" G_GUINT64_FORMAT " is not "
      "within 10 %% of %" G_GUINT64_FORMAT, sink, expected);
  check_peaks_cover_the_levels (s);
  held_sink = sink;
  gst_structure_free (s);

  tbq_link_release (l);
  tbq_link_wait_buffers (l, h->n);
  tbq_link_wait_level_buffers (l, 0);
  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "peak-level-buffers"), h->n);
  fail_unless_equals_uint64 (field (s, "peak-level-bytes"), bytes);
  fail_unless_equals_uint64 (field (s, "peak-level-time"),
      h->n * FRAME_DURATION);
  fail_unless (field (s, "sink-bytes-peak") >= held_sink);
  check_peaks_cover_the_levels (s);
  gst_structure_free (s);
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- peaks on every path ---- */

typedef struct
{
  const gchar *transfer;
  gsize size;
  guint list;                   /* buffers per list, 0: single buffers */
} Path;

static const Path paths[] = {
  {"copy", 100, 0},             /* small copied buffers */
  {"copy", 100000, 0},          /* frames, in extents */
  {"copy", 100, 8},             /* buffer lists */
  {"copy", 100000, 3},          /* lists of frames */
  {"reference", 100000, 0},     /* referenced buffers */
  {"auto", 4000, 0},            /* auto: referenced (no pool) */
  {"auto", 100, 0},             /* auto: copied (small) */
};

/* Push `items` items (buffers or lists) from buffer number *k on; after
 * each, the peaks are at least, and here exactly, the levels (they only
 * rose since the last drop). */
static void
push_checking_peaks (TbqLink * l, const Path * p, guint items, guint * k,
    guint64 base)
{
  guint i, j;

  for (i = 0; i < items; i++) {
    GstStructure *s;

    if (p->list == 0) {
      fail_unless_equals_int (tbq_link_push (l, frame_new (p->size, (*k)++)),
          GST_FLOW_OK);
    } else {
      GstBufferList *list = gst_buffer_list_new ();

      for (j = 0; j < p->list; j++)
        gst_buffer_list_add (list, frame_new (p->size, (*k)++));
      fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
    }
    s = stats_of (l);
    check_peaks_cover_the_levels (s);
    if (field (s, "current-level-buffers") >= base)
      fail_unless_equals_uint64 (field (s, "peak-level-buffers"),
          field (s, "current-level-buffers"));
    gst_structure_free (s);
  }
}

/* The peaks follow the level as it rises, on every way a buffer can
 * travel, stay when it drains, and rise again above the old peak. */
GST_START_TEST (test_peaks_follow_the_level_on_every_path)
{
  const Path *p = &paths[__i__];
  guint per = p->list ? p->list : 1, items = 5, k = 0;
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  GstStructure *s;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", p->transfer);
  tbq_link_start_held (l);
  push_checking_peaks (l, p, items, &k, 0);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, k);
  tbq_link_wait_level_buffers (l, 0);
  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "peak-level-buffers"), items * per);
  fail_unless_equals_uint64 (field (s, "peak-level-bytes"),
      items * per * p->size);
  fail_unless_equals_uint64 (field (s, "peak-level-time"),
      items * per * FRAME_DURATION);
  gst_structure_free (s);

  /* Held again in the chain function: one buffer is downstream, then
   * twice as many as before queue. */
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, frame_new (p->size, k++)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  push_checking_peaks (l, p, 2 * items, &k, items * per);
  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "current-level-buffers"),
      2 * items * per);
  fail_unless_equals_uint64 (field (s, "peak-level-buffers"), 2 * items * per);
  gst_structure_free (s);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, k);
  tbq_link_wait_level_buffers (l, 0);
  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "peak-level-buffers"), 2 * items * per);
  fail_unless_equals_uint64 (field (s, "peak-level-bytes"),
      2 * items * per * p->size);
  gst_structure_free (s);
  tbq_link_free (l);
}

GST_END_TEST;

/* A flush empties the queue; the peak stays what it was before. */
GST_START_TEST (test_a_flush_keeps_the_peaks)
{
  TbqLink *l = copy_link ();
  GstStructure *s;
  guint k;

  tbq_link_start_held (l);
  for (k = 0; k < 7; k++)
    fail_unless_equals_int (tbq_link_push (l, frame_new (100, k)), GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  s = stats_of (l);
  fail_unless_equals_uint64 (field (s, "current-level-buffers"), 0);
  fail_unless_equals_uint64 (field (s, "peak-level-buffers"), 7);
  fail_unless_equals_uint64 (field (s, "peak-level-bytes"), 700);
  fail_unless_equals_uint64 (field (s, "peak-level-time"), 7 * FRAME_DURATION);
  gst_structure_free (s);
  tbq_link_release (l);
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- bytes-copied ---- */

typedef struct
{
  gsize size;
  guint n;
} Batch;

/* Small buffers, one a list, frames of 100 kB and 4 MiB: copied, each
 * byte counted once. */
static const Batch batches[] = {
  {100, 10}, {1000, 5}, {100000, 3}, {4194304, 2},
};

/* bytes-copied is the payload of every buffer copied, small or frame,
 * single or in a list; copier-bytes-moved is the copy task's own figure
 * (records, headers included); referenced buffers count in neither
 * bytes-copied nor buffers-copied. */
GST_START_TEST (test_bytes_copied_counts_the_payload_of_every_copied_buffer)
{
  TbqLink *l = copy_link ();
  GstBufferList *list;
  guint64 bytes = 0, buffers = 0;
  guint i, j, k = 0;

  tbq_link_start (l);
  for (i = 0; i < G_N_ELEMENTS (batches); i++) {
    for (j = 0; j < batches[i].n; j++) {
      fail_unless_equals_int (tbq_link_push (l, frame_new (batches[i].size,
                  k++)), GST_FLOW_OK);
      bytes += batches[i].size;
      buffers++;
    }
  }
  list = gst_buffer_list_new ();
  for (j = 0; j < 4; j++) {
    gsize size = j % 2 ? 100000 : 200;

    gst_buffer_list_add (list, frame_new (size, k++));
    bytes += size;
    buffers++;
  }
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  tbq_link_wait_buffers (l, (guint) buffers);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), buffers);
  fail_unless_equals_uint64 (tbq_stat (l->element, "bytes-copied"), bytes);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 0);
  fail_unless (tbq_stat (l->element, "copier-bytes-moved") > 0);
  tbq_link_free (l);

  /* auto: small buffers copied, larger ones (of no pool) referenced. */
  l = tbq_link_new ("tbqueue", NULL, NULL);
  tbq_link_start (l);
  for (k = 0; k < 6; k++)
    fail_unless_equals_int (tbq_link_push (l, frame_new (k % 2 ? 100000 :
                300, k)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 6);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 3);
  fail_unless_equals_uint64 (tbq_stat (l->element, "bytes-copied"), 900);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 3);
  tbq_link_free (l);
}

GST_END_TEST;

/* Lists cut short at a full sink pool (leaky=upstream): the time their
 * unwritten members would have added was never queued, so no peak counts
 * it.  Each buffer is one frame long: the time queued is never more than
 * the buffers queued times a frame (the levels only rise between drops,
 * and the peaks are the levels before drops). */
GST_START_TEST (test_a_list_cut_short_adds_no_peak_time)
{
  TbqLink *l = tbq_link_new ("tbqueue", "transfer", 1, "leaky", 1,
      "max-size-buffers", 0, "max-size-bytes", 0, "max-size-time",
      (guint64) 0, "sink-block-size", 4096, "sink-min-bytes", (guint64) 8192,
      "sink-max-bytes", (guint64) 16384, NULL);
  guint k = 0, i, j;

  tbq_link_start_held (l);
  for (i = 0; i < 20; i++) {
    GstBufferList *list = gst_buffer_list_new ();

    for (j = 0; j < 10; j++)
      gst_buffer_list_add (list, frame_new (1000, k++));
    fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  }
  /* Some were dropped: the sink pool holds far fewer than 200 frames. */
  fail_unless (tbq_stat (l->element, "dropped-upstream") > 0);
  fail_unless (tbq_stat (l->element, "peak-level-time") <=
      tbq_stat (l->element, "peak-level-buffers") * FRAME_DURATION,
      "peak-level-time %" GST_TIME_FORMAT " with at most %" G_GUINT64_FORMAT
      " frames queued", GST_TIME_ARGS (tbq_stat (l->element,
              "peak-level-time")), tbq_stat (l->element,
          "peak-level-buffers"));
  tbq_link_release (l);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_stats_suite (void)
{
  Suite *s = suite_create ("tbqueue-stats");
  TCase *tc = tbq_tcase (s, "general");

  tcase_add_loop_test (tc,
      test_sink_bytes_in_use_is_the_memory_the_queue_holds, 0,
      G_N_ELEMENTS (held));
  tcase_add_loop_test (tc, test_peaks_follow_the_level_on_every_path, 0,
      G_N_ELEMENTS (paths));
  tcase_add_test (tc, test_a_flush_keeps_the_peaks);
  tcase_add_test (tc, test_a_list_cut_short_adds_no_peak_time);
  tcase_add_test (tc,
      test_bytes_copied_counts_the_payload_of_every_copied_buffer);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_stats);

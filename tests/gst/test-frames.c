/* tbqueue with frames: a source's bounded buffer pool is never starved by
 * a blocked consumer, whatever the frame size (the element holds at most
 * half of it: the copy rule, gsttbqueue-sink.c); frames too large for the
 * sink pool are referenced, with one warning per stream.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#define SINK_MEMORY "TbqSinkMemory"
/* Frames each scenario pushes while downstream is blocked. */
#define N_FRAMES 50
/* A camera's capture queue: v4l2src's default. */
#define POOL_BUFFERS 4
/* What the copy rule lets the element hold of it. */
#define POOL_HELD (POOL_BUFFERS / 2)

/* 640x480 YUY2, 3840x2160 NV12 rounded up (4 MiB), sensor packets. */
static const gsize frame_sizes[] = { 614400, 4194304, 2048, 65536 };

static const gchar *elements[] = { "queue", "tbqueue" };

/* Frame k: its number in the first 8 bytes, then a byte that depends on k. */
static inline guint8
frame_byte (guint64 k)
{
  return (guint8) (k * 37 + 11);
}

static void
fill_frame (GstBuffer * b, guint64 k)
{
  GstMapInfo map;

  fail_unless (gst_buffer_map (b, &map, GST_MAP_WRITE));
  memset (map.data, frame_byte (k), map.size);
  memcpy (map.data, &k, sizeof k);
  gst_buffer_unmap (b, &map);
  GST_BUFFER_PTS (b) = k * GST_SECOND / 60;
  GST_BUFFER_DURATION (b) = GST_SECOND / 60;
  GST_BUFFER_OFFSET (b) = k;
}

/* Every byte of frame k; `ref` is a scratch area of the frame's size. */
static void
check_frame (GstBuffer * b, guint64 k, gsize size, guint8 * ref)
{
  GstMapInfo map;
  guint64 got;

  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (b), k);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (b), k * GST_SECOND / 60);
  fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, size);
  memcpy (&got, map.data, sizeof got);
  fail_unless_equals_uint64 (got, k);
  memset (ref, frame_byte (k), size);
  fail_unless (memcmp (map.data + 8, ref + 8, size - 8) == 0,
      "frame %" G_GUINT64_FORMAT " differs", k);
  gst_buffer_unmap (b, &map);
}

/* Downstream is blocked (not slow: it holds the stream until released)
 * and neither element has a level limit, so both could queue every frame.
 * A camera takes a buffer from its pool for every frame without waiting
 * (a frame without a free buffer is lost).  queue holds the pool's
 * buffers: the fifth take fails.  tbqueue (defaults otherwise) holds half
 * of them by reference and copies every later frame, which goes back
 * inside the push: every take succeeds.  Downstream is held on
 * STREAM_START with the segment queued: the element holds no frame in a
 * push. */
GST_START_TEST (test_a_camera_pool_is_never_starved_by_a_blocked_consumer)
{
  const gchar *factory = elements[__i__ % 2];
  gsize size = frame_sizes[__i__ / 2];
  gboolean tbqueue = strcmp (factory, "tbqueue") == 0;
  TbqLink *l = tbq_link_new (factory, "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  GstBufferPool *pool = tbq_pool_new (size, POOL_BUFFERS);
  GstBufferPoolAcquireParams params = { 0, };
  GstFlowReturn ret = GST_FLOW_OK;
  guint8 *ref = g_malloc (size);
  guint k, taken;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  /* A live source: a camera. */
  l->latency_live = TRUE;
  tbq_link_start_held (l);
  for (taken = 0; taken < N_FRAMES; taken++) {
    GstBuffer *b = NULL;

    ret = gst_buffer_pool_acquire_buffer (pool, &b, &params);
    if (ret != GST_FLOW_OK)
      break;
    fill_frame (b, taken);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  if (tbqueue) {
    fail_unless_equals_int (taken, N_FRAMES);
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"),
        N_FRAMES - POOL_HELD);
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
        POOL_HELD);
    fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-held"),
        POOL_HELD);
    fail_unless_equals_uint64 (tbq_stat (l->element, "pool-buffers-limit"),
        POOL_HELD);
  } else {
    fail_unless_equals_int (taken, POOL_BUFFERS);
    fail_unless_equals_int (ret, GST_FLOW_EOS);
  }
  tbq_link_release (l);
  tbq_link_wait_buffers (l, taken);
  for (k = 0; k < taken; k++) {
    GstBuffer *b = tbq_link_buffer (l, k);

    check_frame (b, k, size, ref);
    if (tbqueue)
      fail_unless_equals_int (gst_memory_is_type (gst_buffer_peek_memory (b,
                  0), SINK_MEMORY), k >= POOL_HELD);
  }
  tbq_link_free (l);
  tbq_pool_free (pool);
  g_free (ref);
}

GST_END_TEST;

/* Downstream blocks on a frame: the first frame is referenced (the src
 * task pushes it at once, and downstream holds it inside the push, which
 * still counts); the second is referenced too (half the pool); every
 * later one is copied.  The camera takes every frame. */
GST_START_TEST (test_a_blocked_consumer_holds_at_most_half_the_pool)
{
  gsize size = frame_sizes[__i__];
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);
  GstBufferPool *pool = tbq_pool_new (size, POOL_BUFFERS);
  GstBufferPoolAcquireParams params = { 0, };
  guint8 *ref = g_malloc (size);
  GstBuffer *first = NULL;
  guint k;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  /* A live source: a camera. */
  l->latency_live = TRUE;
  tbq_link_start (l);
  tbq_link_hold (l);
  /* The src task waits for data: it signalled its underrun. */
  tbq_link_wait_idle (l);
  for (k = 0; k < N_FRAMES; k++) {
    GstBuffer *b = NULL;

    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b,
            &params), GST_FLOW_OK);
    fill_frame (b, k);
    if (k == 0)
      first = b;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
    if (k == 0)
      tbq_link_wait_holding (l);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
      POOL_HELD);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"),
      N_FRAMES - POOL_HELD);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, N_FRAMES);
  fail_unless (tbq_link_buffer (l, 0) == first);
  for (k = 0; k < N_FRAMES; k++) {
    GstBuffer *b = tbq_link_buffer (l, k);

    check_frame (b, k, size, ref);
    fail_unless_equals_int (gst_memory_is_type (gst_buffer_peek_memory (b,
                0), SINK_MEMORY), k >= POOL_HELD);
  }
  tbq_link_free (l);
  tbq_pool_free (pool);
  g_free (ref);
}

GST_END_TEST;

/* ---- frames larger than the sink pool ---- */

/* sink-max-bytes of 1 MiB (16 sink blocks): no frame of 2 MiB fits. */
#define SMALL_SINK (1024 * 1024)
#define LARGE_FRAME (2 * 1024 * 1024)

static guint
count_warnings (GstBus * bus, const gchar * mentions)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gchar *debug = NULL;

    gst_message_parse_warning (msg, &err, &debug);
    fail_unless (strstr (err->message, "1048576") != NULL,
        "the warning does not name sink-max-bytes' value: %s", err->message);
    fail_unless (strstr (err->message, "2097152") != NULL,
        "the warning does not name the buffer's size: %s", err->message);
    fail_unless (strstr (debug, mentions) != NULL,
        "the warning does not name %s: %s", mentions, debug);
    g_error_free (err);
    g_free (debug);
    gst_message_unref (msg);
    n++;
  }
  return n;
}

/* A frame larger than the sink pool's whole budget cannot be copied: it
 * travels by reference (nothing lost, nothing dropped) and the element
 * says once per stream which property to raise.  transfer=copy (__i__ 0)
 * wants every frame copied; auto (1) the frames past half the pool (8
 * buffers: the fifth on).  A new stream starts before frame `restart`. */
GST_START_TEST (test_a_frame_too_large_to_copy_is_referenced_with_one_warning)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "sink-max-bytes",
      (guint64) SMALL_SINK, NULL);
  GstBufferPool *pool = tbq_pool_new (LARGE_FRAME, 8);
  GstBus *bus = gst_bus_new ();
  guint8 *ref = g_malloc (LARGE_FRAME);
  GstBuffer *pushed[8];
  guint restart = __i__ ? 6 : 3, refused = __i__ ? 4 : 8;
  guint k;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer",
      __i__ ? "auto" : "copy");
  gst_element_set_bus (l->element, bus);
  /* A live source: a camera. */
  l->latency_live = TRUE;
  tbq_link_start_held (l);
  for (k = 0; k < 8; k++) {
    GstBuffer *b = NULL;

    /* A new stream: it is warned about again. */
    if (k == restart)
      fail_unless (tbq_link_push_event (l,
              gst_event_new_stream_start ("tbq-test-2")));
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    fill_frame (b, k);
    pushed[k] = b;
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
    if (k == restart - 1)
      fail_unless_equals_int (count_warnings (bus, "sink-max-bytes"), 1);
  }
  fail_unless_equals_int (count_warnings (bus, "sink-max-bytes"), 1);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"), 8);
  fail_unless_equals_uint64 (tbq_stat (l->element, "referenced-too-large"),
      refused);
  fail_unless_equals_uint64 (tbq_stat (l->element, "copy-fallbacks"),
      refused);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 8);
  for (k = 0; k < 8; k++) {
    GstBuffer *b = tbq_link_buffer (l, k);

    fail_unless (b == pushed[k], "frame %u is not the buffer pushed", k);
    check_frame (b, k, LARGE_FRAME, ref);
  }
  /* Drop the messages (the element's stream-status ones too): they hold
   * the element. */
  gst_bus_set_flushing (bus, TRUE);
  tbq_link_free (l);
  tbq_pool_free (pool);
  gst_object_unref (bus);
  g_free (ref);
}

GST_END_TEST;

/* Frames of 1080p and 4K fit the default geometry: a backlog of them is
 * copied, up to max-size-bytes (10 MB) as queue queues them: as long as
 * the level is below it a frame is taken, then upstream waits.  The pool
 * has 2 buffers: the first frame is held by reference (half the pool),
 * the others copied. */
GST_START_TEST (test_frames_up_to_8_mib_are_copied_with_the_default_properties)
{
  const gsize sizes[] = { 3110400, 8294400, 8 * 1024 * 1024 };
  gsize size = sizes[__i__];
  guint n = (guint) ((10485760 + size - 1) / size), k;
  TbqLink *l = tbq_link_new ("tbqueue", NULL, NULL);
  GstBufferPool *pool = tbq_pool_new (size, 2);
  guint8 *ref = g_malloc (size);
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b;
  TbqPush *push = NULL;

  /* Copied, each frame is back in the pool when its push returns. */
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  /* A live source: a camera. */
  l->latency_live = TRUE;
  tbq_link_start_held (l);
  for (k = 0; k <= n; k++) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b,
            &params), GST_FLOW_OK);
    fill_frame (b, k);
    if (k < n) {
      fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
      continue;
    }
    /* The level is at max-size-bytes: this one waits for room. */
    push = tbq_push_async (l, GST_MINI_OBJECT_CAST (b));
    tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), n - 1);
  tbq_link_release (l);
  fail_unless_equals_int (tbq_push_join (push), GST_FLOW_OK);
  tbq_link_wait_buffers (l, n + 1);
  for (k = 0; k <= n; k++)
    check_frame (tbq_link_buffer (l, k), k, size, ref);
  /* The last one is written once the level dropped: copied if the first
   * was still held, referenced if it was pushed already (which one
   * depends on how the threads run). */
  fail_unless (tbq_stat (l->element, "buffers-copied") >= n - 1);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied")
      + tbq_stat (l->element, "buffers-referenced"), n + 1);
  fail_unless_equals_uint64 (tbq_stat (l->element, "copy-fallbacks"), 0);
  tbq_link_free (l);
  tbq_pool_free (pool);
  g_free (ref);
}

GST_END_TEST;

/* ---- frames that find the sink pool full ---- */

/* 16 MiB of sink pool, frames of 4 MiB, no level limit: with downstream
 * blocked the sink pool's budget is what fills.  __i__: leaky=upstream or
 * downstream.  A frame that finds no room is an overrun and leaks as at a
 * max-size-* limit (upstream: the new frame; downstream: the oldest queued
 * ones, or the new one when those are not within reach yet); no push
 * waits for downstream; what arrives is in order, every byte right, and
 * what did not is counted. */
GST_START_TEST (test_a_frame_that_finds_the_sink_pool_full_leaks)
{
  const gchar *leaky = __i__ ? "downstream" : "upstream";
  const gsize size = 4 * 1024 * 1024;
  const guint n = 12;
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "sink-max-bytes",
      (guint64) 16 * 1024 * 1024, NULL);
  GstBufferPool *pool = tbq_pool_new (size, POOL_BUFFERS);
  GstBufferPoolAcquireParams params = { 0, };
  guint8 *ref = g_malloc (size);
  guint64 dropped, last = 0;
  guint k, got;

  gst_util_set_object_arg (G_OBJECT (l->element), "leaky", leaky);
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  /* A live source: a camera. */
  l->latency_live = TRUE;
  tbq_link_start_held (l);
  for (k = 0; k < n; k++) {
    GstBuffer *b = NULL;

    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b,
            &params), GST_FLOW_OK);
    fill_frame (b, k);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  fail_unless (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN) > 0);
  fail_unless (tbq_stat (l->element, "dropped-upstream")
      + tbq_stat (l->element, "dropped-downstream") > 0);
  if (!__i__)
    fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-downstream"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "copy-fallbacks"), 0);
  tbq_link_release (l);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = tbq_link_n_buffers (l);
  dropped = tbq_stat (l->element, "dropped-upstream")
      + tbq_stat (l->element, "dropped-downstream");
  fail_unless_equals_uint64 (got + dropped, n);
  for (k = 0; k < got; k++) {
    GstBuffer *b = tbq_link_buffer (l, k);
    guint64 frame = GST_BUFFER_OFFSET (b);

    fail_unless (k == 0 || frame > last, "frame %" G_GUINT64_FORMAT
        " after %" G_GUINT64_FORMAT, frame, last);
    check_frame (b, frame, size, ref);
    last = frame;
  }
  tbq_link_free (l);
  tbq_pool_free (pool);
  g_free (ref);
}

GST_END_TEST;

static Suite *
tbqueue_frames_suite (void)
{
  Suite *s = suite_create ("tbqueue-frames");
  TCase *tc = tbq_tcase (s, "frames");

  tcase_add_loop_test (tc,
      test_a_camera_pool_is_never_starved_by_a_blocked_consumer, 0,
      2 * G_N_ELEMENTS (frame_sizes));
  tcase_add_loop_test (tc,
      test_a_blocked_consumer_holds_at_most_half_the_pool, 0,
      G_N_ELEMENTS (frame_sizes));
  tcase_add_loop_test (tc,
      test_a_frame_too_large_to_copy_is_referenced_with_one_warning, 0, 2);
  tcase_add_loop_test (tc,
      test_frames_up_to_8_mib_are_copied_with_the_default_properties, 0, 3);
  tcase_add_loop_test (tc, test_a_frame_that_finds_the_sink_pool_full_leaks,
      0, 2);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_frames);

/* What a copied buffer keeps: everything queue passes on (flags,
 * timestamps, offsets, every meta that can be copied, the memory layout,
 * the caps); and what is referenced instead: buffers with a meta that
 * cannot be copied, special memory.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#include <gst/allocators/gstfdmemory.h>
#include <gst/video/video.h>
#include <sys/mman.h>
#include <unistd.h>

#define SINK_MEMORY "TbqSinkMemory"

/* ---- videotestsrc through a pool of padded frames, as queue ---- */

#define WIDTH 320
#define HEIGHT 240
#define N_FRAMES 12

static GstCaps *ref_caps;

/* Downstream's answer to the allocation query: a video pool whose frames
 * have padded strides and a GstVideoMeta saying so. */
static GstPadProbeReturn
propose_padded_pool (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);
  GstVideoAlignment align;
  GstBufferPool *pool;
  GstStructure *config;
  GstVideoInfo vinfo;
  GstCaps *caps;
  guint i;

  if (GST_QUERY_TYPE (query) != GST_QUERY_ALLOCATION)
    return GST_PAD_PROBE_OK;
  gst_query_parse_allocation (query, &caps, NULL);
  fail_unless (caps != NULL && gst_video_info_from_caps (&vinfo, caps));
  gst_video_alignment_reset (&align);
  align.padding_right = 48;
  align.padding_bottom = 6;
  for (i = 0; i < GST_VIDEO_MAX_PLANES; i++)
    align.stride_align[i] = 31;
  pool = gst_video_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, vinfo.size, 2, 0);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
  gst_buffer_pool_config_set_video_alignment (config, &align);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  gst_query_add_allocation_pool (query, pool, vinfo.size, 2, 0);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  gst_object_unref (pool);
  GST_PAD_PROBE_INFO_DATA (info) = query;
  return GST_PAD_PROBE_HANDLED;
}

/* The source's metas and flags, on every frame it pushes. */
static GstPadProbeReturn
add_metas (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 k = GST_BUFFER_OFFSET (b);

  fail_unless (gst_buffer_is_writable (b) && b->pool != NULL,
      "videotestsrc's frame is not its own pool's");
  gst_buffer_add_video_time_code_meta_full (b, 30, 1, NULL,
      GST_VIDEO_TIME_CODE_FLAGS_NONE, 1, 2, 3, (guint) (k % 30), 0);
  gst_buffer_add_reference_timestamp_meta (b, ref_caps, k * 1000 + 7, 1000);
  gst_buffer_add_video_crop_meta (b)->x = (guint) k;
  if (k % 2)
    GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_MARKER);
  return GST_PAD_PROBE_OK;
}

/* Every visible byte of every plane, read through the frame's video meta
 * (its strides and offsets). */
static void
digest_planes (GString * s, GstBuffer * b, GstCaps * caps)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  GstVideoFrame frame;
  GstVideoInfo vinfo;
  guint p, row;

  fail_unless (gst_video_info_from_caps (&vinfo, caps));
  fail_unless (gst_video_frame_map (&frame, &vinfo, b, GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    const guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    guint w = GST_VIDEO_FRAME_COMP_WIDTH (&frame, p)
        * GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, p);

    for (row = 0; row < (guint) GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p); row++)
      g_checksum_update (sum, d + row * stride, w);
  }
  gst_video_frame_unmap (&frame);
  g_string_append_printf (s, " pixels=%s", g_checksum_get_string (sum));
  g_checksum_free (sum);
}

static void
describe_metas (GString * s, GstBuffer * b)
{
  GstVideoMeta *vm = gst_buffer_get_video_meta (b);
  GstVideoTimeCodeMeta *tc = gst_buffer_get_video_time_code_meta (b);
  GstReferenceTimestampMeta *rt =
      gst_buffer_get_reference_timestamp_meta (b, ref_caps);
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (b);
  guint i;

  fail_unless (vm != NULL && tc != NULL && rt != NULL && crop != NULL,
      "a meta is missing");
  fail_unless (vm->buffer == b, "the video meta belongs to another buffer");
  g_string_append_printf (s, " video=%d,%x,%ux%u,%u,%u", vm->id, vm->flags,
      vm->width, vm->height, vm->format, vm->n_planes);
  for (i = 0; i < vm->n_planes; i++)
    g_string_append_printf (s, ",%" G_GSIZE_FORMAT ":%d", vm->offset[i],
        vm->stride[i]);
  fail_unless (vm->stride[0] > WIDTH, "the frames are not padded");
  g_string_append_printf (s, " align=%u,%u", vm->alignment.padding_right,
      vm->alignment.stride_align[0]);
  {
    gchar *t = gst_video_time_code_to_string (&tc->tc);

    g_string_append_printf (s, " tc=%s", t);
    g_free (t);
  }
  g_string_append_printf (s, " ref=%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
      " crop=%u,%u,%u,%u n_meta=%u", rt->timestamp, rt->duration, crop->x,
      crop->y, crop->width, crop->height, gst_buffer_get_n_meta (b,
          GST_VIDEO_CROP_META_API_TYPE));
}

typedef struct
{
  GPtrArray *frames;            /* a description of each frame, in order */
  gchar *caps;                  /* the caps downstream saw */
  guint sink_memory;            /* frames whose memory is tbqueue's */
} Seen;

static GstPadProbeReturn
describe_frame (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Seen *seen = data;
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  GString *s = g_string_new (NULL);
  guint i;

  g_string_append_printf (s, "pts=%" G_GUINT64_FORMAT " dts=%" G_GUINT64_FORMAT
      " dur=%" G_GUINT64_FORMAT " off=%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
      " flags=%x mems=%u", GST_BUFFER_PTS (b), GST_BUFFER_DTS (b),
      GST_BUFFER_DURATION (b), GST_BUFFER_OFFSET (b), GST_BUFFER_OFFSET_END (b),
      GST_BUFFER_FLAGS (b) & ~GST_BUFFER_FLAG_TAG_MEMORY,
      gst_buffer_n_memory (b));
  for (i = 0; i < gst_buffer_n_memory (b); i++)
    g_string_append_printf (s, ",%" G_GSIZE_FORMAT,
        gst_buffer_peek_memory (b, i)->size);
  describe_metas (s, b);
  digest_planes (s, b, caps);
  if (gst_memory_is_type (gst_buffer_peek_memory (b, 0), SINK_MEMORY))
    seen->sink_memory++;
  g_ptr_array_add (seen->frames, g_string_free (s, FALSE));
  if (seen->caps == NULL)
    seen->caps = gst_caps_to_string (caps);
  gst_caps_unref (caps);
  return GST_PAD_PROBE_OK;
}

static void
run_videotestsrc (const gchar * queue, Seen * seen, guint64 * copied,
    guint64 * referenced)
{
  gchar *desc = g_strdup_printf ("videotestsrc name=src num-buffers=%d "
      "pattern=smpte ! video/x-raw,format=I420,width=%d,height=%d,"
      "framerate=30/1 ! %s name=q ! fakesink name=sink", N_FRAMES, WIDTH,
      HEIGHT, queue);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstElement *q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  GstPad *srcpad = gst_element_get_static_pad (src, "src");
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;

  seen->frames = g_ptr_array_new_with_free_func (g_free);
  seen->caps = NULL;
  seen->sink_memory = 0;
  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_BUFFER, add_metas, NULL, NULL);
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      propose_padded_pool, NULL, NULL);
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, describe_frame,
      seen, NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "%s: no EOS", desc);
  gst_message_unref (msg);
  *copied = strcmp (queue, "queue") == 0 ? 0 : tbq_stat (q, "buffers-copied");
  *referenced = strcmp (queue, "queue") == 0 ? 0 :
      tbq_stat (q, "buffers-referenced");
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (srcpad);
  gst_object_unref (sinkpad);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (q);
  gst_object_unref (pipe);
  g_free (desc);
}

static void
seen_clear (Seen * seen)
{
  g_ptr_array_unref (seen->frames);
  g_free (seen->caps);
}

/* Frames from videotestsrc's pool, carrying padded strides (GstVideoMeta),
 * a timecode, a reference timestamp and a crop meta: tbqueue copies them
 * (transfer=copy; auto those that would wait) and what arrives equals
 * queue's output field by field, meta by meta and pixel by pixel; the caps
 * are the same. */
GST_START_TEST (test_copied_frames_keep_metas_flags_and_timestamps_as_queue)
{
  const gchar *tbqueue = __i__ ? "tbqueue transfer=copy" : "tbqueue";
  Seen q, t;
  guint64 copied, referenced;
  guint i;

  ref_caps = gst_caps_new_empty_simple ("timestamp/x-tbq-test");
  run_videotestsrc ("queue", &q, &copied, &referenced);
  run_videotestsrc (tbqueue, &t, &copied, &referenced);
  fail_unless_equals_int (q.frames->len, N_FRAMES);
  fail_unless_equals_int (t.frames->len, q.frames->len);
  for (i = 0; i < q.frames->len; i++)
    fail_unless_equals_string (g_ptr_array_index (t.frames, i),
        g_ptr_array_index (q.frames, i));
  fail_unless_equals_string (t.caps, q.caps);
  /* transfer=copy copies every frame; auto those that would wait in the
   * queue (which depends on how the threads run): what arrives is the
   * same either way, and each frame is counted once. */
  if (__i__)
    fail_unless_equals_uint64 (copied, N_FRAMES);
  fail_unless_equals_uint64 (copied + referenced, N_FRAMES);
  fail_unless_equals_int (t.sink_memory, copied);
  fail_unless_equals_int (q.sink_memory, 0);
  seen_clear (&q);
  seen_clear (&t);
  gst_caps_unref (ref_caps);
}

GST_END_TEST;

/* ---- multi-memory buffers ---- */

/* An I420 frame as three memories (one per plane, as a multi-planar
 * capture gives it), with a GstVideoMeta pointing at each. */
static GstBuffer *
planar_frame (guint8 seed)
{
  GstVideoInfo vinfo;
  GstBuffer *b = gst_buffer_new ();
  gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, };
  gint strides[GST_VIDEO_MAX_PLANES] = { 0, };
  gsize off = 0;
  guint p;

  gst_video_info_set_format (&vinfo, GST_VIDEO_FORMAT_I420, 64, 48);
  for (p = 0; p < 3; p++) {
    gsize size = (gsize) GST_VIDEO_INFO_PLANE_STRIDE (&vinfo, p)
        * GST_VIDEO_INFO_COMP_HEIGHT (&vinfo, p);
    GstMemory *mem = gst_allocator_alloc (NULL, size, NULL);

    gst_buffer_append_memory (b, mem);
    gst_buffer_memset (b, off, (guint8) (seed + 40 * p), size);
    offsets[p] = off;
    strides[p] = GST_VIDEO_INFO_PLANE_STRIDE (&vinfo, p);
    off += size;
  }
  gst_buffer_add_video_meta_full (b, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_I420, 64, 48, 3, offsets, strides);
  GST_BUFFER_PTS (b) = seed * GST_MSECOND;
  return b;
}

static void
assert_same_planes (GstBuffer * got, GstBuffer * want)
{
  GstVideoMeta *gm = gst_buffer_get_video_meta (got);
  GstVideoMeta *wm = gst_buffer_get_video_meta (want);
  GstVideoFrame gf, wf;
  GstVideoInfo vinfo;
  guint p;

  fail_unless_equals_int (gst_buffer_n_memory (got),
      gst_buffer_n_memory (want));
  for (p = 0; p < gst_buffer_n_memory (want); p++)
    fail_unless_equals_uint64 (gst_buffer_peek_memory (got, p)->size,
        gst_buffer_peek_memory (want, p)->size);
  fail_unless (gm != NULL && gm->buffer == got);
  fail_unless_equals_int (gm->n_planes, wm->n_planes);
  gst_video_info_set_format (&vinfo, GST_VIDEO_FORMAT_I420, 64, 48);
  fail_unless (gst_video_frame_map (&gf, &vinfo, got, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&wf, &vinfo, want, GST_MAP_READ));
  for (p = 0; p < 3; p++) {
    GstMapInfo m;

    fail_unless_equals_uint64 (gm->offset[p], wm->offset[p]);
    fail_unless_equals_int (gm->stride[p], wm->stride[p]);
    fail_unless (memcmp (GST_VIDEO_FRAME_PLANE_DATA (&gf, p),
            GST_VIDEO_FRAME_PLANE_DATA (&wf, p),
            gst_buffer_peek_memory (want, p)->size) == 0, "plane %u", p);
    /* The meta still says where each plane's memory is. */
    fail_unless (gst_memory_map (gst_buffer_peek_memory (got, p), &m,
            GST_MAP_READ));
    fail_unless (m.data == GST_VIDEO_FRAME_PLANE_DATA (&gf, p));
    gst_memory_unmap (gst_buffer_peek_memory (got, p), &m);
  }
  gst_video_frame_unmap (&gf);
  gst_video_frame_unmap (&wf);
}

/* A buffer of three memories arrives as three memories of the same sizes,
 * with its video meta still right for each plane; tbqueue's are adjacent
 * parts of one record, so mapping the whole buffer gives one range where
 * the memories are, without merging them into a copy. */
GST_START_TEST (test_a_multi_memory_frame_keeps_its_memories)
{
  static const gchar *setups[] = { "queue", "tbqueue", "tbqueue" };
  TbqLink *l = tbq_link_new (setups[__i__], NULL, NULL);
  GstBuffer *want = planar_frame (9), *got;
  GstMapInfo whole, first;

  if (__i__ == 2)
    gst_util_set_object_arg (G_OBJECT (l->element), "transfer", "copy");
  else if (__i__ == 1)
    g_object_set (l->element, "copy-threshold", G_MAXUINT, NULL);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_ref (want)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  got = gst_buffer_ref (tbq_link_buffer (l, 0));
  tbq_link_clear (l);
  assert_same_planes (got, want);
  if (tbq_link_is_tbqueue (l)) {
    fail_if (got == want);
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 1);
    gst_buffer_ref (got);       /* not writable: mapping keeps 3 memories */
    fail_unless (gst_buffer_map (got, &whole, GST_MAP_READ));
    fail_unless (gst_memory_map (gst_buffer_peek_memory (got, 0), &first,
            GST_MAP_READ));
    fail_unless (whole.data == first.data, "the whole frame was copied");
    fail_unless_equals_uint64 (whole.size, gst_buffer_get_size (want));
    fail_unless (gst_buffer_memcmp (want, 0, whole.data, whole.size) == 0);
    gst_memory_unmap (gst_buffer_peek_memory (got, 0), &first);
    gst_buffer_unmap (got, &whole);
    fail_unless_equals_int (gst_buffer_n_memory (got), 3);
    gst_buffer_unref (got);
  } else {
    fail_unless (got == want);
  }
  gst_buffer_unref (got);
  gst_buffer_unref (want);
  tbq_link_free (l);
}

GST_END_TEST;

/* ---- what is referenced instead ---- */

static gboolean
refuse_copy (GstBuffer * dest, GstCustomMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data, gpointer user_data)
{
  return FALSE;
}

static GType
no_transform_api (void)
{
  static gsize type = 0;
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, gst_meta_api_type_register ("TbqTestNoCopyAPI",
            tags));
  return type;
}

static gboolean
meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  return TRUE;
}

/* A meta registered without a transform function. */
static const GstMetaInfo *
no_transform_meta (void)
{
  static gsize info = 0;

  if (g_once_init_enter (&info))
    g_once_init_leave (&info, (gsize) gst_meta_register (no_transform_api (),
            "TbqTestNoCopy", sizeof (GstMeta), meta_init, NULL, NULL));
  return (const GstMetaInfo *) info;
}

static const gchar *no_tags[] = { NULL };

/* Pushes `b` through tbqueue with `transfer`; TRUE when it arrived by
 * reference (the very buffer). */
static gboolean
was_referenced (const gchar * transfer, GstBuffer * b, const gchar * counter,
    guint64 count)
{
  TbqLink *l = tbq_link_new ("tbqueue", NULL, NULL);
  gboolean referenced;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", transfer);
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_ref (b)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  referenced = tbq_link_buffer (l, 0) == b;
  fail_unless_equals_uint64 (tbq_stat (l->element, counter), count);
  fail_unless_equals_uint64 (tbq_stat (l->element, "copy-fallbacks"), count);
  tbq_link_free (l);
  gst_buffer_unref (b);
  return referenced;
}

/* A meta that cannot be copied (no transform function, or a transform
 * that fails) would be lost in a copy: the buffer is referenced and
 * counted, whatever asked for the copy. */
GST_START_TEST (test_a_buffer_with_a_meta_that_cannot_be_copied_is_referenced)
{
  GstBuffer *b;

  gst_meta_register_custom ("TbqTestRefusingMeta", no_tags, refuse_copy,
      NULL, NULL);
  b = tbq_buffer_new (100, 0, 0);
  gst_buffer_add_custom_meta (b, "TbqTestRefusingMeta");
  fail_unless (was_referenced ("copy", b, "referenced-uncopyable-meta", 1));
  b = tbq_buffer_new (100, 0, 0);
  gst_buffer_add_meta (b, no_transform_meta (), NULL);
  fail_unless (was_referenced ("auto", b, "referenced-uncopyable-meta", 1));
  /* A meta that can be copied does not stop the copy. */
  b = tbq_buffer_new (100, 0, 0);
  gst_buffer_add_custom_meta (b, "TbqTestCopiedMeta");
  fail_if (was_referenced ("copy", b, "referenced-uncopyable-meta", 0));
}

GST_END_TEST;

/* A memfd wrapped by GStreamer's fd allocator: fd memory, as DMA-buf is. */
static GstBuffer *
fd_buffer (gsize size, GstAllocator ** allocator)
{
  gint fd = memfd_create ("tbq-test", MFD_CLOEXEC);
  GstBuffer *b = gst_buffer_new ();

  fail_unless (fd >= 0 && ftruncate (fd, size) == 0);
  *allocator = gst_fd_allocator_new ();
  gst_buffer_append_memory (b, gst_fd_allocator_alloc (*allocator, fd, size,
          GST_FD_MEMORY_FLAG_NONE));
  fail_unless (gst_is_fd_memory (gst_buffer_peek_memory (b, 0)));
  gst_buffer_memset (b, 0, 0x3c, size);
  return b;
}

/* fd memory (its fd is what downstream may want), memory flagged
 * NOT_MAPPABLE and memory the caps say is not system memory (GL, VA...)
 * are referenced in every mode, and counted. */
GST_START_TEST (test_special_memory_is_referenced_and_counted)
{
  GstAllocator *fd_allocator;
  GstBuffer *b = fd_buffer (65536, &fd_allocator);
  GstMemory *mem;

  fail_unless (was_referenced ("copy", b, "referenced-special-memory", 1));
  gst_object_unref (fd_allocator);
  /* auto would copy it: it is small. */
  b = fd_buffer (256, &fd_allocator);
  fail_unless (was_referenced ("auto", b, "referenced-special-memory", 1));
  gst_object_unref (fd_allocator);

  b = tbq_buffer_new (64, 0, 0);
  mem = gst_buffer_peek_memory (b, 0);
  GST_MINI_OBJECT_FLAG_SET (mem, GST_MEMORY_FLAG_NOT_MAPPABLE);
  fail_unless (was_referenced ("copy", b, "referenced-special-memory", 1));
}

GST_END_TEST;

GST_START_TEST (test_buffers_in_caps_of_other_memory_are_referenced)
{
  TbqLink *l = tbq_link_new ("tbqueue", NULL, NULL);
  GstCaps *gl = gst_caps_from_string
      ("video/x-raw(memory:GLMemory),format=RGBA,width=4,height=4");
  GstCaps *sys = gst_caps_from_string ("video/x-raw,format=RGBA,width=4,"
      "height=4");
  GstBuffer *b = tbq_buffer_new (64, 0, 0);
  GstSegment segment;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", "copy");
  tbq_link_set_state (l, GST_STATE_PLAYING);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_stream_start ("tbq")));
  fail_unless (tbq_link_push_event (l, gst_event_new_caps (gl)));
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_ref (b)), GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_caps (sys)));
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_ref (b)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 2);
  fail_unless (tbq_link_buffer (l, 0) == b, "a GLMemory buffer was copied");
  fail_if (tbq_link_buffer (l, 1) == b, "a system memory buffer was not "
      "copied");
  fail_unless_equals_uint64 (tbq_stat (l->element,
          "referenced-special-memory"), 1);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 1);
  tbq_link_free (l);
  gst_buffer_unref (b);
  gst_caps_unref (gl);
  gst_caps_unref (sys);
}

GST_END_TEST;

static Suite *
tbqueue_copy_suite (void)
{
  Suite *s = suite_create ("tbqueue-copy");
  TCase *tc = tbq_tcase (s, "copy");

  gst_meta_register_custom ("TbqTestCopiedMeta", no_tags, NULL, NULL, NULL);
  tcase_add_loop_test (tc,
      test_copied_frames_keep_metas_flags_and_timestamps_as_queue, 0, 2);
  tcase_add_loop_test (tc, test_a_multi_memory_frame_keeps_its_memories, 0, 3);
  tcase_add_test (tc,
      test_a_buffer_with_a_meta_that_cannot_be_copied_is_referenced);
  tcase_add_test (tc, test_special_memory_is_referenced_and_counted);
  tcase_add_test (tc, test_buffers_in_caps_of_other_memory_are_referenced);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_copy);

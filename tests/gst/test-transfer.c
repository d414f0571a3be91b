/* tbqueue transfer modes: what downstream receives, by value or by
 * reference, and when each mode is chosen.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#define SINK_MEMORY "TbqSinkMemory"

static TbqLink *
transfer_link (const gchar * transfer)
{
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, NULL);

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", transfer);
  return l;
}

static const gchar *transfers[] = { "auto", "copy", "reference" };

/* The same tbqueue in a GstHarness, for the tests that only push buffers
 * and look at what comes out: the harness links, activates and plays the
 * element (pushing its own STREAM_START), and its sink keeps what arrives
 * for gst_harness_pull().  Downstream answers allocation queries as a
 * TbqLink does. */
/* copy_threshold < 0: the element's default. */
static GstHarness *
transfer_harness (const gchar * transfer, gint64 copy_threshold)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstHarness *h;
  GstSegment segment;

  g_object_set (e, "max-size-buffers", 0, "max-size-bytes", 0,
      "max-size-time", (guint64) 0, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "transfer", transfer);
  if (copy_threshold >= 0)
    g_object_set (e, "copy-threshold", (guint) copy_threshold, NULL);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  gst_harness_add_propose_allocation_meta (h, GST_PARENT_BUFFER_META_API_TYPE,
      NULL);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  return h;
}

/* Every memory of `b` lives in tbqueue's sink pool (and it has one). */
static gboolean
is_sink_memory (GstBuffer * b)
{
  guint i, n = gst_buffer_n_memory (b);

  for (i = 0; i < n; i++)
    if (!gst_memory_is_type (gst_buffer_peek_memory (b, i), SINK_MEMORY))
      return FALSE;
  return n > 0;
}

/* Every field a copy record carries, and the bytes. */
static void
assert_same_buffer (GstBuffer * got, GstBuffer * want)
{
  GstMapInfo a, b;

  fail_unless_equals_uint64 (GST_BUFFER_PTS (got), GST_BUFFER_PTS (want));
  fail_unless_equals_uint64 (GST_BUFFER_DTS (got), GST_BUFFER_DTS (want));
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (got),
      GST_BUFFER_DURATION (want));
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (got), GST_BUFFER_OFFSET (want));
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (got),
      GST_BUFFER_OFFSET_END (want));
  fail_unless_equals_int (GST_BUFFER_FLAGS (got), GST_BUFFER_FLAGS (want));
  fail_unless_equals_int (gst_buffer_get_size (got),
      gst_buffer_get_size (want));
  fail_unless (gst_buffer_map (got, &a, GST_MAP_READ));
  fail_unless (gst_buffer_map (want, &b, GST_MAP_READ));
  fail_unless (a.size == 0 || memcmp (a.data, b.data, a.size) == 0);
  gst_buffer_unmap (got, &a);
  gst_buffer_unmap (want, &b);
}

static GstBuffer *
buffer_with_fields (gsize size, guint n)
{
  GstBuffer *b = tbq_buffer_new (size, n, n * GST_SECOND + 1);

  GST_BUFFER_DTS (b) = n * GST_SECOND;
  GST_BUFFER_DURATION (b) = GST_SECOND - 3;
  GST_BUFFER_OFFSET (b) = 1000 + n;
  GST_BUFFER_OFFSET_END (b) = 2000 + n;
  GST_BUFFER_FLAG_SET (b, (n % 2 ? GST_BUFFER_FLAG_DELTA_UNIT :
          GST_BUFFER_FLAG_HEADER) | GST_BUFFER_FLAG_MARKER
      | (n % 3 ? GST_BUFFER_FLAG_DISCONT : GST_BUFFER_FLAG_GAP));
  return b;
}

GST_START_TEST (test_buffer_list_arrives_as_a_list_of_the_same_buffers)
{
  TbqLink *l = transfer_link (transfers[__i__]);
  GstBufferList *list = gst_buffer_list_new (), *got;
  GstBuffer *want[5];
  guint i;

  tbq_link_start (l);
  for (i = 0; i < 5; i++) {
    want[i] = buffer_with_fields (10 + 100 * i, i);
    gst_buffer_list_add (list, gst_buffer_ref (want[i]));
  }
  fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 5);
  got = g_ptr_array_index (l->items, l->items->len - 1);
  fail_unless (GST_IS_BUFFER_LIST (got), "not a list downstream");
  fail_unless_equals_int (gst_buffer_list_length (got), 5);
  for (i = 0; i < 5; i++) {
    GstBuffer *b = gst_buffer_list_get (got, i);

    assert_same_buffer (b, want[i]);
    if (strcmp (transfers[__i__], "reference") == 0)
      fail_unless (b == want[i]);
    gst_buffer_unref (want[i]);
  }
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_reference_delivers_the_very_buffer)
{
  GstHarness *h = transfer_harness ("reference", -1);
  GstBuffer *b = buffer_with_fields (16, 1), *got;

  fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  got = gst_harness_pull (h);
  fail_unless (got == b);
  ASSERT_BUFFER_REFCOUNT (got, "delivered buffer", 1);
  fail_if (is_sink_memory (got));
  gst_buffer_unref (got);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_copy_keeps_every_field_and_byte)
{
  GstHarness *h = transfer_harness ("copy", -1);
  /* Inline in the source pool, and in extents (frames too). */
  const gsize sizes[] = { 0, 1, 7, 63, 64, 65, 100, 1000, 1500, 3000, 4097,
    65536, 614400, 4194304
  };
  GstBuffer *want[G_N_ELEMENTS (sizes)];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (sizes); i++) {
    want[i] = buffer_with_fields (sizes[i], i);
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (want[i])),
        GST_FLOW_OK);
  }
  for (i = 0; i < G_N_ELEMENTS (sizes); i++) {
    GstBuffer *got = gst_harness_pull (h);

    fail_unless (got != NULL);
    fail_if (got == want[i]);
    assert_same_buffer (got, want[i]);
    if (sizes[i] > 0)
      fail_unless (is_sink_memory (got), "buffer %u is not in the sink pool",
          i);
    gst_buffer_unref (got);
    gst_buffer_unref (want[i]);
  }
  fail_unless_equals_uint64 (tbq_stat (h->element, "buffers-copied"),
      G_N_ELEMENTS (sizes));
  gst_harness_teardown (h);
}

GST_END_TEST;

static void
buffer_gone (gpointer data, GstMiniObject * where_the_object_was)
{
  *(gboolean *) data = TRUE;
}

GST_START_TEST (test_copy_keeps_every_combination_of_set_and_unset_fields)
{
  GstHarness *h = transfer_harness ("copy", -1);
  GstBuffer *want[32];
  guint m;

  /* Bit k of m: field k is set (pts, dts, duration, offset, offset-end);
   * unset fields stay NONE, and the bytes follow whatever was written. */
  for (m = 0; m < 32; m++) {
    GstBuffer *b = buffer_with_fields ((m * 37) % 200, m);

    if (!(m & 1))
      GST_BUFFER_PTS (b) = GST_CLOCK_TIME_NONE;
    if (!(m & 2))
      GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    if (!(m & 4))
      GST_BUFFER_DURATION (b) = GST_CLOCK_TIME_NONE;
    if (!(m & 8))
      GST_BUFFER_OFFSET (b) = GST_BUFFER_OFFSET_NONE;
    if (!(m & 16))
      GST_BUFFER_OFFSET_END (b) = GST_BUFFER_OFFSET_NONE;
    want[m] = b;
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (b)),
        GST_FLOW_OK);
  }
  for (m = 0; m < 32; m++) {
    GstBuffer *got = gst_harness_pull (h);

    fail_unless (got != NULL);
    assert_same_buffer (got, want[m]);
    gst_buffer_unref (got);
    gst_buffer_unref (want[m]);
  }
  fail_unless_equals_uint64 (tbq_stat (h->element, "buffers-copied"), 32);
  fail_unless_equals_uint64 (tbq_stat (h->element, "current-level-bytes"), 0);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_copy_releases_the_upstream_buffer_in_the_chain_function)
{
  TbqLink *l = transfer_link ("copy");
  GstBuffer *b = tbq_buffer_new (64, 0, 0);
  gboolean gone = FALSE;

  tbq_link_start_held (l);
  gst_mini_object_weak_ref (GST_MINI_OBJECT (b), buffer_gone, &gone);
  fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  /* Downstream is held: only the chain function can have let it go. */
  fail_unless (gone, "the upstream buffer is still alive");
  fail_unless_equals_int (tbq_get_uint (l->element, "current-level-buffers"),
      1);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 1);
  fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, 0), 64, 0));
  tbq_link_free (l);
}

GST_END_TEST;

/* With a pool of two buffers, two pushed buffers are back in the pool when
 * the pushes return (copy), or still queued (reference). */
GST_START_TEST (test_copied_buffers_return_to_the_upstream_pool_at_once)
{
  gboolean copy = __i__ == 0;
  TbqLink *l = transfer_link (copy ? "copy" : "reference");
  GstBufferPool *pool = tbq_pool_new (128, 2);
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b;
  guint i;

  tbq_link_start_held (l);
  for (i = 0; i < 2; i++) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    gst_buffer_memset (b, 0, i, 128);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
  }
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  b = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, &params),
      copy ? GST_FLOW_OK : GST_FLOW_EOS);
  if (b)
    gst_buffer_unref (b);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 2);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

GST_START_TEST (test_copied_buffers_follow_copy_on_write)
{
  TbqLink *l = transfer_link ("copy");
  GstBuffer *b0, *b1, *shared, *copy;
  GstMapInfo map;

  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, 0, 0)),
      GST_FLOW_OK);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, 100, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 2);
  b0 = gst_buffer_ref (tbq_link_buffer (l, 0));
  b1 = gst_buffer_ref (tbq_link_buffer (l, 1));
  fail_unless (is_sink_memory (b0) && is_sink_memory (b1));
  tbq_link_clear (l);

  /* Shared: writing goes to a private copy of the bytes. */
  shared = gst_buffer_ref (b0);
  copy = gst_buffer_make_writable (shared);
  fail_if (copy == b0);
  fail_unless (gst_buffer_map (copy, &map, GST_MAP_WRITE));
  memset (map.data, 0xff, map.size);
  gst_buffer_unmap (copy, &map);
  fail_unless (tbq_buffer_has_pattern (b0, 100, 0));
  fail_unless (tbq_buffer_has_pattern (b1, 100, 100));
  gst_buffer_unref (copy);

  /* Sole owner: written in place, the neighbour record is untouched. */
  ASSERT_BUFFER_REFCOUNT (b0, "b0", 1);
  b0 = gst_buffer_make_writable (b0);
  fail_unless (gst_buffer_map (b0, &map, GST_MAP_WRITE));
  memset (map.data, 0xee, map.size);
  gst_buffer_unmap (b0, &map);
  fail_unless (gst_buffer_map (b0, &map, GST_MAP_READ));
  fail_unless (map.data[0] == 0xee && map.data[99] == 0xee);
  gst_buffer_unmap (b0, &map);
  fail_unless (tbq_buffer_has_pattern (b1, 100, 100));

  /* Sub-buffers share the bytes. */
  copy = gst_buffer_copy_region (b1, GST_BUFFER_COPY_ALL, 10, 20);
  fail_unless (tbq_buffer_has_pattern (copy, 20, 110));
  gst_buffer_unref (copy);
  copy = gst_buffer_copy_deep (b1);
  fail_unless (tbq_buffer_has_pattern (copy, 100, 100));
  gst_buffer_unref (copy);

  gst_buffer_unref (b0);
  gst_buffer_unref (b1);
  tbq_link_free (l);
}

GST_END_TEST;

GST_START_TEST (test_copied_buffers_stay_valid_after_the_element_is_gone)
{
  GstHarness *h = transfer_harness ("copy", -1);
  GstBuffer *kept[50];
  guint i;

  for (i = 0; i < 50; i++)
    fail_unless_equals_int (gst_harness_push (h, tbq_buffer_new (500, i, i)),
        GST_FLOW_OK);
  for (i = 0; i < 50; i++)
    fail_unless ((kept[i] = gst_harness_pull (h)) != NULL);
  gst_harness_teardown (h);
  /* The element and its pools are destroyed; the bytes must not be. */
  for (i = 0; i < 50; i++) {
    fail_unless (is_sink_memory (kept[i]));
    fail_unless (tbq_buffer_has_pattern (kept[i], 500, i));
    gst_buffer_unref (kept[i]);
  }
}

GST_END_TEST;

/* ---- transfer=auto ---- */

/* Pushes `b` through tbqueue; TRUE when it was copied. */
static gboolean
was_copied (const gchar * transfer, GstBuffer * b, guint copy_threshold,
    guint64 * fallbacks)
{
  GstHarness *h = transfer_harness (transfer, copy_threshold);
  GstBuffer *got, *want = gst_buffer_ref (b);
  gboolean copied;

  fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  got = gst_harness_pull (h);
  fail_unless (got != NULL);
  copied = got != want;
  /* Either way nothing is lost. */
  assert_same_buffer (got, want);
  fail_unless_equals_int (gst_buffer_get_n_meta (got,
          GST_REFERENCE_TIMESTAMP_META_API_TYPE),
      gst_buffer_get_n_meta (want, GST_REFERENCE_TIMESTAMP_META_API_TYPE));
  fail_unless_equals_int (is_sink_memory (got), copied
      && gst_buffer_get_size (want) > 0);
  fail_unless_equals_uint64 (tbq_stat (h->element, "buffers-copied"), copied);
  fail_unless_equals_uint64 (tbq_stat (h->element, "buffers-referenced"),
      !copied);
  if (fallbacks)
    *fallbacks = tbq_stat (h->element, "copy-fallbacks");
  gst_buffer_unref (got);
  gst_buffer_unref (want);
  gst_harness_teardown (h);
  return copied;
}

GST_START_TEST (test_auto_copies_small_plain_buffers)
{
  fail_unless (was_copied ("auto", tbq_buffer_new (100, 0, 0), 1024, NULL));
  fail_unless (was_copied ("auto", tbq_buffer_new (1024, 0, 0), 1024, NULL));
}

GST_END_TEST;

GST_START_TEST (test_auto_references_large_buffers_of_no_pool)
{
  guint64 fallbacks = G_MAXUINT64;

  fail_if (was_copied ("auto", tbq_buffer_new (1025, 0, 0), 1024, NULL));
  fail_if (was_copied ("auto", tbq_buffer_new (101, 0, 0), 100, NULL));
  fail_unless (was_copied ("auto", tbq_buffer_new (100, 0, 0), 100, NULL));
  /* Nobody waits for it: referencing it is the rule, not a fallback. */
  fail_if (was_copied ("auto", tbq_buffer_new (614400, 0, 0), 512, &fallbacks));
  fail_unless_equals_uint64 (fallbacks, 0);
}

GST_END_TEST;

static const gsize pooled_sizes[] = { 2048, 65536, 614400, 4194304 };

static GstBuffer *
pooled_buffer (GstBufferPool * pool, gsize size, guint8 byte)
{
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b = NULL;

  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, &params),
      GST_FLOW_OK);
  gst_buffer_memset (b, 0, byte, size);
  GST_BUFFER_PTS (b) = byte;
  return b;
}

/* A buffer of a live source's pool of one, downstream held on
 * STREAM_START: holding it would starve the pool (the copy rule holds at
 * most half of it: none), so it goes back to its pool inside the push,
 * whatever its size: its owner (a camera) would lose what it captures.
 * Behind a source that is not live (__i__ 4 to 7) the same buffer is
 * referenced: its owner waits for it, as behind queue. */
GST_START_TEST (test_auto_copies_a_live_pools_buffer_that_would_starve_it)
{
  gsize size = pooled_sizes[__i__ % 4];
  gboolean live = __i__ < 4;
  TbqLink *l = transfer_link ("auto");
  GstBufferPool *pool = tbq_pool_new (size, 1);
  GstBufferPoolAcquireParams params = { 0, };
  GstBuffer *b;

  l->latency_live = live;
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, pooled_buffer (pool, size, 7)),
      GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), live);
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
      !live);
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  if (live) {
    /* Back in the pool of one. */
    b = pooled_buffer (pool, size, 8);
    gst_buffer_unref (b);
  } else {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b,
            &params), GST_FLOW_EOS);
  }
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 1);
  fail_unless_equals_int (is_sink_memory (tbq_link_buffer (l, 0)), live);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (tbq_link_buffer (l, 0)), 7);
  fail_unless (gst_buffer_memcmp (tbq_link_buffer (l, 0), 0,
          memset (g_alloca (16), 7, 16), 16) == 0);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

/* A live source's pool buffer pushed into an empty queue whose src task
 * waits for data (so the element holds none of the pool: the last push
 * has returned) is within half the pool (3 buffers: 1): it is referenced,
 * and the same GstBuffer arrives downstream (which gives it back to the
 * pool when done with it).  Each buffer is pushed only when the src task
 * is idle again after the last. */
GST_START_TEST (test_auto_references_a_pooled_buffer_an_idle_queue_pushes)
{
  gsize size = pooled_sizes[__i__];
  TbqLink *l = transfer_link ("auto");
  GstBufferPool *pool = tbq_pool_new (size, 3);
  guint k;

  l->latency_live = TRUE;
  tbq_link_start (l);
  for (k = 0; k < 3; k++) {
    GstBuffer *b = pooled_buffer (pool, size, (guint8) k);

    /* The src task waits for data: it signalled its underrun. */
    tbq_link_wait_idle (l);
    fail_unless_equals_int (tbq_link_push (l, b), GST_FLOW_OK);
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
        k + 1);
    tbq_link_wait_buffers (l, k + 1);
    fail_unless (tbq_link_buffer (l, k) == b);
    fail_if (is_sink_memory (tbq_link_buffer (l, k)));
  }
  fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"), 0);
  tbq_link_free (l);
  tbq_pool_free (pool);
}

GST_END_TEST;

static GstBuffer *
buffer_with_meta (void)
{
  GstBuffer *b = tbq_buffer_new (16, 0, 0);
  GstCaps *caps = gst_caps_new_empty_simple ("timestamp/x-tbq-test");

  gst_buffer_add_reference_timestamp_meta (b, caps, GST_SECOND, 0);
  gst_caps_unref (caps);
  return b;
}

GST_START_TEST (test_copies_keep_metas_that_can_be_copied)
{
  fail_unless (was_copied ("auto", buffer_with_meta (), 1024, NULL));
  fail_unless (was_copied ("copy", buffer_with_meta (), 0, NULL));
}

GST_END_TEST;

GST_START_TEST (test_copy_copies_buffers_larger_than_a_source_block)
{
  /* 4096-byte source blocks: these travel in extents. */
  fail_unless (was_copied ("copy", tbq_buffer_new (5000, 0, 0), 0, NULL));
  fail_unless (was_copied ("auto", tbq_buffer_new (5000, 0, 0), G_MAXUINT,
          NULL));
}

GST_END_TEST;

/* Memory of an allocator of the test's own: not system memory. */
typedef struct
{
  GstMemory mem;
  guint8 *data;
} TestMemory;

typedef GstAllocator TestAllocator;
typedef GstAllocatorClass TestAllocatorClass;

GType test_allocator_get_type (void);
G_DEFINE_TYPE (TestAllocator, test_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *
test_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * p)
{
  TestMemory *m = g_new0 (TestMemory, 1);

  m->data = g_malloc (size);
  gst_memory_init (GST_MEMORY_CAST (m), 0, allocator, NULL, size, 0, 0, size);
  return GST_MEMORY_CAST (m);
}

static void
test_free (GstAllocator * allocator, GstMemory * mem)
{
  g_free (((TestMemory *) mem)->data);
  g_free (mem);
}

static gpointer
test_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((TestMemory *) mem)->data;
}

static void
test_unmap (GstMemory * mem)
{
}

static void
test_allocator_class_init (TestAllocatorClass * klass)
{
  klass->alloc = test_alloc;
  klass->free = test_free;
}

static void
test_allocator_init (TestAllocator * allocator)
{
  allocator->mem_type = "TbqTestMemory";
  allocator->mem_map = test_map;
  allocator->mem_unmap = test_unmap;
}

/* Other memory that maps on the CPU (a driver's mmap'ed buffers, shared
 * memory...) is copied like system memory. */
GST_START_TEST (test_other_mappable_memory_is_copied)
{
  GstAllocator *allocator = g_object_new (test_allocator_get_type (), NULL);
  GstBuffer *b;

  gst_object_ref_sink (allocator);
  b = gst_buffer_new_allocate (allocator, 64, NULL);
  gst_buffer_memset (b, 0, 0x5a, 64);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (b, 0),
          "TbqTestMemory"));
  fail_unless (was_copied ("auto", b, 1024, NULL));
  b = gst_buffer_new_allocate (allocator, 64, NULL);
  gst_buffer_memset (b, 0, 0x5b, 64);
  fail_unless (was_copied ("copy", b, 1024, NULL));
  gst_object_unref (allocator);
}

GST_END_TEST;

GST_START_TEST (test_copy_falls_back_to_reference_and_counts_it)
{
  guint64 fallbacks = G_MAXUINT64;
  GstBuffer *b = tbq_buffer_new (64, 0, 0);

  /* Memory that cannot be mapped cannot be copied. */
  GST_MINI_OBJECT_FLAG_SET (gst_buffer_peek_memory (b, 0),
      GST_MEMORY_FLAG_NOT_MAPPABLE);
  fail_if (was_copied ("copy", b, 1024, &fallbacks));
  fail_unless_equals_uint64 (fallbacks, 1);
  /* copy ignores copy-threshold */
  fail_unless (was_copied ("copy", tbq_buffer_new (3000, 0, 0), 10,
          &fallbacks));
  fail_unless_equals_uint64 (fallbacks, 0);
  /* auto choosing reference is not a fallback */
  fail_if (was_copied ("auto", tbq_buffer_new (3000, 0, 0), 10, &fallbacks));
  fail_unless_equals_uint64 (fallbacks, 0);
}

GST_END_TEST;

GST_START_TEST (test_copy_of_a_multi_memory_buffer_keeps_its_bytes)
{
  GstBuffer *b = tbq_buffer_new (30, 0, 0);
  GstBuffer *tail = tbq_buffer_new (30, 30, 0);

  b = gst_buffer_append (b, tail);
  fail_unless_equals_int (gst_buffer_n_memory (b), 2);
  fail_unless (was_copied ("copy", b, 1024, NULL));
}

GST_END_TEST;

static Suite *
tbqueue_transfer_suite (void)
{
  Suite *s = suite_create ("tbqueue-transfer");
  TCase *tc = tbq_tcase (s, "transfer");

  tcase_add_loop_test (tc,
      test_buffer_list_arrives_as_a_list_of_the_same_buffers, 0, 3);
  tcase_add_test (tc, test_reference_delivers_the_very_buffer);
  tcase_add_test (tc, test_copy_keeps_every_field_and_byte);
  tcase_add_test (tc,
      test_copy_keeps_every_combination_of_set_and_unset_fields);
  tcase_add_test (tc,
      test_copy_releases_the_upstream_buffer_in_the_chain_function);
  tcase_add_loop_test (tc,
      test_copied_buffers_return_to_the_upstream_pool_at_once, 0, 2);
  tcase_add_test (tc, test_copied_buffers_follow_copy_on_write);
  tcase_add_test (tc, test_copied_buffers_stay_valid_after_the_element_is_gone);
  tcase_add_test (tc, test_auto_copies_small_plain_buffers);
  tcase_add_test (tc, test_auto_references_large_buffers_of_no_pool);
  tcase_add_loop_test (tc,
      test_auto_copies_a_live_pools_buffer_that_would_starve_it, 0, 8);
  tcase_add_loop_test (tc,
      test_auto_references_a_pooled_buffer_an_idle_queue_pushes, 0, 4);
  tcase_add_test (tc, test_copies_keep_metas_that_can_be_copied);
  tcase_add_test (tc, test_copy_copies_buffers_larger_than_a_source_block);
  tcase_add_test (tc, test_other_mappable_memory_is_copied);
  tcase_add_test (tc, test_copy_falls_back_to_reference_and_counts_it);
  tcase_add_test (tc, test_copy_of_a_multi_memory_buffer_keeps_its_bytes);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_transfer);

/* Copy-on-write of what tbqueue delivers: whatever downstream keeps of a
 * buffer (a sub-buffer, a share of one of its memories, a writable copy,
 * a deep copy, another buffer holding one of its memories) keeps its bytes
 * when the buffer is written in place memory by memory, as
 * gst_video_frame_map maps a frame plane by plane; exactly as with queue.
 *
 * Every scenario runs on buffers of 1, 2 and 16 memories in every transfer
 * mode, on queue and on tbqueue, and records what a user sees (the bytes
 * kept, the original's bytes, the layouts, what each write found); the
 * two records must be the same, and the bytes kept must be the original
 * bytes.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#define SINK_MEMORY "TbqSinkMemory"

#define MAX_MEMORIES 16
/* Memory i of a buffer has MEMORY_SIZE (i) bytes: 16 of them are 1984
 * bytes, below MAX_BYTES and COPY_THRESHOLD. */
#define MEMORY_SIZE(i) (64 + 8 * (gsize) (i))
#define MAX_BYTES 4096
/* tbqueue's copy-threshold in auto: every buffer is small and copied. */
#define COPY_THRESHOLD 65536

/* Byte k of the buffer pushed. */
#define PATTERN(k) ((guint8) ((k) * 7 + 3))
/* What a write does to each byte of the original (and to a deep copy). */
#define WRITE_MASK 0xff
#define COPY_WRITE_MASK 0x0f

static const guint n_memories[] = { 1, 2, 16 };

static const gchar *transfers[] = { "auto", "copy", "reference" };

#define N_SETUPS (G_N_ELEMENTS (n_memories) * G_N_ELEMENTS (transfers))

/* What downstream does with the buffer it received. */
typedef enum
{
  /* gst_buffer_copy_region (COPY_MEMORY) of all but 10 bytes at each end,
   * then the original written memory by memory */
  SCENARIO_SUB_BUFFER,
  /* gst_memory_share of one memory, then the original written */
  SCENARIO_SHARE,
  /* a share of that share (the first one dropped), then the original
   * written */
  SCENARIO_SHARE_OF_A_SHARE,
  /* one memory also in another buffer, then the original written */
  SCENARIO_OTHER_BUFFER,
  /* gst_buffer_make_writable of a second reference, then the copy it
   * returns written memory by memory */
  SCENARIO_WRITABLE_COPY,
  /* gst_buffer_copy_deep, then the original and the copy written */
  SCENARIO_DEEP_COPY
} Scenario;

/* One write in place of one memory (gst_buffer_map_range idx, 1, WRITE). */
typedef struct
{
  gboolean writable;            /* the memory was writable before the map */
  gboolean mapped;              /* the WRITE map succeeded */
  gboolean in_place;            /* ... on that memory, not on a copy */
} CowWrite;

/* What a user sees of one scenario run on one element. */
typedef struct
{
  /* The buffer received, before the scenario. */
  gboolean received_writable;
  guint received_n_memory;
  gsize received_sizes[MAX_MEMORIES];
  /* The writes of the original, and of what was kept, memory by memory. */
  guint n_writes;
  CowWrite writes[MAX_MEMORIES];
  guint n_kept_writes;
  CowWrite kept_writes[MAX_MEMORIES];
  /* What the scenario kept (sub-buffer, share, copy), after the writes. */
  guint kept_n_memory;
  gsize kept_size;
  guint8 kept[MAX_BYTES];
  /* The original, after the writes. */
  guint n_memory;
  gsize sizes[MAX_MEMORIES];
  gsize size;
  guint8 bytes[MAX_BYTES];
} CowObs;

/* __i__ of every loop test: a number of memories and a transfer mode. */
typedef struct
{
  guint n_memory;
  const gchar *transfer;
} CowSetup;

static CowSetup
cow_setup (gint i)
{
  CowSetup setup;

  setup.n_memory = n_memories[i / G_N_ELEMENTS (transfers)];
  setup.transfer = transfers[i % G_N_ELEMENTS (transfers)];
  return setup;
}

static gsize
buffer_size (guint n)
{
  gsize size = 0;
  guint i;

  for (i = 0; i < n; i++)
    size += MEMORY_SIZE (i);
  return size;
}

/* Where memory idx starts in the buffer. */
static gsize
memory_start (guint idx)
{
  return buffer_size (idx);
}

/* A buffer of `n` system memories of MEMORY_SIZE (i) bytes; byte k of
 * the whole is PATTERN (k). */
static GstBuffer *
pattern_buffer (guint n)
{
  GstBuffer *b = gst_buffer_new ();
  gsize k = 0;
  guint i;

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_allocator_alloc (NULL, MEMORY_SIZE (i), NULL);
    GstMapInfo map;
    gsize j;

    fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
    for (j = 0; j < map.size; j++, k++)
      map.data[j] = PATTERN (k);
    gst_memory_unmap (mem, &map);
    gst_buffer_append_memory (b, mem);
  }
  GST_BUFFER_PTS (b) = 0;
  return b;
}

/* Push a pattern buffer of `n` memories through `factory` in `transfer`
 * mode (tbqueue; auto with every buffer under copy-threshold) and return
 * the buffer received, its only reference.  tbqueue's copies must really
 * be copies into its sink pool, and reference must give the very buffer. */
static GstBuffer *
receive (const gchar * factory, const CowSetup * setup)
{
  TbqLink *l = tbq_link_new (factory, NULL, NULL);
  GstBuffer *pushed = pattern_buffer (setup->n_memory), *b;
  gboolean reference = strcmp (setup->transfer, "reference") == 0;
  guint i;

  fail_unless (buffer_size (setup->n_memory) <= MAX_BYTES);
  if (tbq_link_is_tbqueue (l)) {
    gst_util_set_object_arg (G_OBJECT (l->element), "transfer",
        setup->transfer);
    if (strcmp (setup->transfer, "auto") == 0)
      g_object_set (l->element, "copy-threshold", COPY_THRESHOLD, NULL);
  }
  tbq_link_start (l);
  /* Given away: what arrives is downstream's alone. */
  fail_unless_equals_int (tbq_link_push (l, pushed), GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
  b = gst_buffer_ref (tbq_link_buffer (l, 0));
  tbq_link_clear (l);
  if (tbq_link_is_tbqueue (l)) {
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-copied"),
        reference ? 0 : 1);
    fail_unless_equals_uint64 (tbq_stat (l->element, "buffers-referenced"),
        reference ? 1 : 0);
    fail_unless_equals_int (b == pushed, reference);
    for (i = 0; i < gst_buffer_n_memory (b); i++)
      fail_unless_equals_int (gst_memory_is_type (gst_buffer_peek_memory (b,
                  i), SINK_MEMORY), !reference);
  } else {
    fail_unless (b == pushed);
  }
  tbq_link_free (l);
  return b;
}

/* Write memory idx of `b` in place, as gst_video_frame_map maps a plane:
 * every byte XOR `mask`. */
static void
write_memory (GstBuffer * b, guint idx, guint8 mask, CowWrite * w)
{
  /* Held (a reference does not change a memory's writability, its locks
   * do), so that no new memory can take its address. */
  GstMemory *before = gst_buffer_get_memory (b, idx);
  GstMapInfo map;
  gsize j;

  w->writable = gst_memory_is_writable (before);
  w->mapped = gst_buffer_map_range (b, idx, 1, &map, GST_MAP_WRITE);
  if (w->mapped) {
    w->in_place = map.memory == before;
    for (j = 0; j < map.size; j++)
      map.data[j] ^= mask;
    gst_buffer_unmap (b, &map);
  }
  gst_memory_unref (before);
}

static guint
write_each_memory (GstBuffer * b, guint8 mask, CowWrite * writes)
{
  guint i, n = gst_buffer_n_memory (b);

  fail_unless (n <= MAX_MEMORIES);
  for (i = 0; i < n; i++)
    write_memory (b, i, mask, &writes[i]);
  return n;
}

static void
record_layout (GstBuffer * b, guint * n_memory, gsize * sizes)
{
  guint i;

  *n_memory = gst_buffer_n_memory (b);
  fail_unless (*n_memory <= MAX_MEMORIES);
  for (i = 0; i < *n_memory; i++)
    sizes[i] = gst_buffer_peek_memory (b, i)->size;
}

static gsize
record_buffer_bytes (GstBuffer * b, guint8 * bytes)
{
  gsize size = gst_buffer_get_size (b);

  fail_unless (size <= MAX_BYTES);
  fail_unless_equals_uint64 (gst_buffer_extract (b, 0, bytes, size), size);
  return size;
}

static gsize
record_memory_bytes (GstMemory * mem, guint8 * bytes)
{
  GstMapInfo map;
  gsize size;

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  size = map.size;
  fail_unless (size <= MAX_BYTES);
  memcpy (bytes, map.data, size);
  gst_memory_unmap (mem, &map);
  return size;
}

/* Run `scenario` on what `factory` delivers. */
static CowObs *
observe (const gchar * factory, const CowSetup * setup, Scenario scenario)
{
  CowObs *obs = g_new0 (CowObs, 1);
  GstBuffer *b = receive (factory, setup), *kept = NULL;
  GstMemory *share = NULL, *first;
  guint idx = setup->n_memory / 2;

  obs->received_writable = gst_buffer_is_writable (b);
  record_layout (b, &obs->received_n_memory, obs->received_sizes);
  switch (scenario) {
    case SCENARIO_SUB_BUFFER:
      kept = gst_buffer_copy_region (b, GST_BUFFER_COPY_MEMORY, 10,
          gst_buffer_get_size (b) - 20);
      obs->n_writes = write_each_memory (b, WRITE_MASK, obs->writes);
      break;
    case SCENARIO_SHARE:
      share = gst_memory_share (gst_buffer_peek_memory (b, idx), 5, 50);
      obs->n_writes = write_each_memory (b, WRITE_MASK, obs->writes);
      break;
    case SCENARIO_SHARE_OF_A_SHARE:
      first = gst_memory_share (gst_buffer_peek_memory (b, idx), 5, 50);
      share = gst_memory_share (first, 10, 30);
      gst_memory_unref (first);
      obs->n_writes = write_each_memory (b, WRITE_MASK, obs->writes);
      break;
    case SCENARIO_OTHER_BUFFER:
      kept = gst_buffer_new ();
      gst_buffer_append_memory (kept, gst_buffer_get_memory (b, idx));
      obs->n_writes = write_each_memory (b, WRITE_MASK, obs->writes);
      break;
    case SCENARIO_WRITABLE_COPY:
      kept = gst_buffer_make_writable (gst_buffer_ref (b));
      fail_if (kept == b);
      obs->n_kept_writes = write_each_memory (kept, WRITE_MASK,
          obs->kept_writes);
      break;
    case SCENARIO_DEEP_COPY:
      kept = gst_buffer_copy_deep (b);
      obs->n_writes = write_each_memory (b, WRITE_MASK, obs->writes);
      obs->n_kept_writes = write_each_memory (kept, COPY_WRITE_MASK,
          obs->kept_writes);
      break;
  }
  if (share) {
    obs->kept_n_memory = 1;
    obs->kept_size = record_memory_bytes (share, obs->kept);
    gst_memory_unref (share);
  } else {
    obs->kept_n_memory = gst_buffer_n_memory (kept);
    obs->kept_size = record_buffer_bytes (kept, obs->kept);
    gst_buffer_unref (kept);
  }
  record_layout (b, &obs->n_memory, obs->sizes);
  obs->size = record_buffer_bytes (b, obs->bytes);
  gst_buffer_unref (b);
  return obs;
}

static void
assert_same_writes (const gchar * what, guint n, const CowWrite * got,
    const CowWrite * want)
{
  guint i;

  for (i = 0; i < n; i++) {
    fail_unless (got[i].writable == want[i].writable,
        "%s %u: %s in place with queue, %s with tbqueue", what, i,
        want[i].writable ? "writable" : "not writable",
        got[i].writable ? "writable" : "not writable");
    fail_unless (got[i].mapped == want[i].mapped,
        "%s %u: the write map %s with queue, not with tbqueue", what, i,
        want[i].mapped ? "succeeded" : "failed");
    fail_unless (got[i].in_place == want[i].in_place,
        "%s %u: written %s with queue, %s with tbqueue", what, i,
        want[i].in_place ? "in place" : "to a copy",
        got[i].in_place ? "in place" : "to a copy");
  }
}

/* Field by field: tbqueue's run (got) as queue's (want); the bytes first,
 * which are what a difference costs a user. */
static void
assert_same_observations (const CowObs * got, const CowObs * want)
{
  guint i;

  fail_unless_equals_uint64 (got->kept_size, want->kept_size);
  for (i = 0; i < want->kept_size; i++)
    fail_unless (got->kept[i] == want->kept[i], "byte %u of what was kept: "
        "0x%02x with tbqueue, 0x%02x with queue", i, got->kept[i],
        want->kept[i]);
  fail_unless_equals_uint64 (got->size, want->size);
  for (i = 0; i < want->size; i++)
    fail_unless (got->bytes[i] == want->bytes[i], "byte %u of the original: "
        "0x%02x with tbqueue, 0x%02x with queue", i, got->bytes[i],
        want->bytes[i]);
  fail_unless_equals_int (got->kept_n_memory, want->kept_n_memory);
  fail_unless_equals_int (got->n_memory, want->n_memory);
  for (i = 0; i < want->n_memory; i++)
    fail_unless_equals_uint64 (got->sizes[i], want->sizes[i]);
  fail_unless_equals_int (got->received_writable, want->received_writable);
  fail_unless_equals_int (got->received_n_memory, want->received_n_memory);
  for (i = 0; i < want->received_n_memory; i++)
    fail_unless_equals_uint64 (got->received_sizes[i], want->received_sizes[i]);
  fail_unless_equals_int (got->n_writes, want->n_writes);
  assert_same_writes ("original memory", want->n_writes, got->writes,
      want->writes);
  fail_unless_equals_int (got->n_kept_writes, want->n_kept_writes);
  assert_same_writes ("kept memory", want->n_kept_writes, got->kept_writes,
      want->kept_writes);
}

/* `size` bytes of `bytes` are the pattern from byte `start`, XOR `mask`. */
static void
assert_pattern (const gchar * what, const guint8 * bytes, gsize size,
    gsize start, guint8 mask)
{
  gsize k;

  for (k = 0; k < size; k++)
    fail_unless (bytes[k] == (guint8) (PATTERN (start + k) ^ mask),
        "byte %" G_GSIZE_FORMAT " of %s is 0x%02x, not 0x%02x", k, what,
        bytes[k], (guint8) (PATTERN (start + k) ^ mask));
}

/* Every one of `n` writes succeeded. */
static void
assert_writes_succeeded (guint n, const CowWrite * writes)
{
  guint i;

  for (i = 0; i < n; i++)
    fail_unless (writes[i].mapped, "memory %u could not be written", i);
}

/* The buffer received had the layout pushed, and was downstream's alone. */
static void
assert_received_layout (const CowObs * obs, guint n)
{
  guint i;

  fail_unless (obs->received_writable);
  fail_unless_equals_int (obs->received_n_memory, n);
  for (i = 0; i < n; i++)
    fail_unless_equals_uint64 (obs->received_sizes[i], MEMORY_SIZE (i));
}

/* Run `scenario` on queue and tbqueue: the same observations, and the
 * ones every scenario expects (the layout arrived, every write
 * succeeded).  tbqueue's are returned; queue's are checked first, so that
 * a test that does not hold for queue says so. */
static CowObs *
observe_both (gint i, Scenario scenario)
{
  CowSetup setup = cow_setup (i);
  CowObs *queue = observe ("queue", &setup, scenario);
  CowObs *tbq = observe ("tbqueue", &setup, scenario);

  assert_received_layout (queue, setup.n_memory);
  assert_same_observations (tbq, queue);
  assert_received_layout (tbq, setup.n_memory);
  assert_writes_succeeded (tbq->n_writes, tbq->writes);
  assert_writes_succeeded (tbq->n_kept_writes, tbq->kept_writes);
  g_free (queue);
  return tbq;
}

GST_START_TEST (test_a_sub_buffer_keeps_its_bytes_when_the_original_is_written)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_SUB_BUFFER);
  gsize size = buffer_size (setup.n_memory);

  fail_unless_equals_int (obs->n_writes, setup.n_memory);
  fail_unless_equals_uint64 (obs->kept_size, size - 20);
  assert_pattern ("the sub-buffer", obs->kept, obs->kept_size, 10, 0);
  fail_unless_equals_uint64 (obs->size, size);
  assert_pattern ("the original", obs->bytes, obs->size, 0, WRITE_MASK);
  g_free (obs);
}

GST_END_TEST;

GST_START_TEST
    (test_a_share_of_one_memory_keeps_its_bytes_when_the_original_is_written)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_SHARE);

  fail_unless_equals_uint64 (obs->kept_size, 50);
  assert_pattern ("the share", obs->kept, obs->kept_size,
      memory_start (setup.n_memory / 2) + 5, 0);
  assert_pattern ("the original", obs->bytes, obs->size, 0, WRITE_MASK);
  g_free (obs);
}

GST_END_TEST;

GST_START_TEST
    (test_a_share_of_a_share_keeps_its_bytes_when_the_original_is_written)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_SHARE_OF_A_SHARE);

  fail_unless_equals_uint64 (obs->kept_size, 30);
  assert_pattern ("the share of the share", obs->kept, obs->kept_size,
      memory_start (setup.n_memory / 2) + 15, 0);
  assert_pattern ("the original", obs->bytes, obs->size, 0, WRITE_MASK);
  g_free (obs);
}

GST_END_TEST;

GST_START_TEST
    (test_a_memory_in_two_buffers_keeps_its_bytes_when_one_is_written)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_OTHER_BUFFER);
  guint idx = setup.n_memory / 2;

  /* Held twice, the memory is written to a copy. */
  fail_if (obs->writes[idx].writable);
  fail_if (obs->writes[idx].in_place);
  fail_unless_equals_uint64 (obs->kept_size, MEMORY_SIZE (idx));
  assert_pattern ("the other buffer", obs->kept, obs->kept_size,
      memory_start (idx), 0);
  assert_pattern ("the original", obs->bytes, obs->size, 0, WRITE_MASK);
  g_free (obs);
}

GST_END_TEST;

GST_START_TEST (test_a_writable_copy_is_written_without_changing_the_original)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_WRITABLE_COPY);

  fail_unless_equals_int (obs->n_kept_writes, setup.n_memory);
  fail_unless_equals_uint64 (obs->kept_size, buffer_size (setup.n_memory));
  assert_pattern ("the writable copy", obs->kept, obs->kept_size, 0,
      WRITE_MASK);
  assert_pattern ("the original", obs->bytes, obs->size, 0, 0);
  g_free (obs);
}

GST_END_TEST;

GST_START_TEST (test_a_deep_copy_and_its_original_are_written_independently)
{
  CowSetup setup = cow_setup (__i__);
  CowObs *obs = observe_both (__i__, SCENARIO_DEEP_COPY);
  guint i;

  /* Nothing else holds the memories of either: both are written in
   * place. */
  for (i = 0; i < obs->n_writes; i++)
    fail_unless (obs->writes[i].in_place, "original memory %u", i);
  for (i = 0; i < obs->n_kept_writes; i++)
    fail_unless (obs->kept_writes[i].in_place, "copy's memory %u", i);
  fail_unless_equals_uint64 (obs->kept_size, buffer_size (setup.n_memory));
  assert_pattern ("the deep copy", obs->kept, obs->kept_size, 0,
      COPY_WRITE_MASK);
  assert_pattern ("the original", obs->bytes, obs->size, 0, WRITE_MASK);
  g_free (obs);
}

GST_END_TEST;

static Suite *
tbqueue_cow_suite (void)
{
  Suite *s = suite_create ("tbqueue-cow");
  TCase *tc = tbq_tcase (s, "cow");

  tcase_add_loop_test (tc,
      test_a_sub_buffer_keeps_its_bytes_when_the_original_is_written, 0,
      N_SETUPS);
  tcase_add_loop_test (tc,
      test_a_share_of_one_memory_keeps_its_bytes_when_the_original_is_written,
      0, N_SETUPS);
  tcase_add_loop_test (tc,
      test_a_share_of_a_share_keeps_its_bytes_when_the_original_is_written,
      0, N_SETUPS);
  tcase_add_loop_test (tc,
      test_a_memory_in_two_buffers_keeps_its_bytes_when_one_is_written,
      0, N_SETUPS);
  tcase_add_loop_test (tc,
      test_a_writable_copy_is_written_without_changing_the_original, 0,
      N_SETUPS);
  tcase_add_loop_test (tc,
      test_a_deep_copy_and_its_original_are_written_independently, 0, N_SETUPS);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_cow);

/* Configuration: defaults validate; every impossible geometry or unknown
 * setting is refused with TBQ_INVALID_CONFIG and a message naming it.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

/* Validation refuses `cfg` and the message mentions every word in `words`
 * (NULL-terminated); tbq_queue_new refuses it the same way. */
static void
expect_refused (const TbqConfig * cfg, const char *const *words)
{
  char msg[256];
  TbqQueue *q = (TbqQueue *) (uintptr_t) 1;
  size_t i;

  memset (msg, 0, sizeof msg);
  CHECK_STATUS (tbq_config_validate (cfg, msg, sizeof msg), TBQ_INVALID_CONFIG);
  printf ("# refused: %s\n", msg);
  for (i = 0; words[i] != NULL; i++) {
    if (strstr (msg, words[i]) == NULL) {
      printf ("# message lacks \"%s\"\n", words[i]);
      CHECK (0);
    }
  }
  memset (msg, 0, sizeof msg);
  CHECK_STATUS (tbq_queue_new (cfg, &q, msg, sizeof msg), TBQ_INVALID_CONFIG);
  CHECK (q == NULL);
  CHECK (msg[0] != '\0');
}

#define REFUSED(cfg, ...) do { \
    static const char *const words_[] = { __VA_ARGS__, NULL }; \
    expect_refused (cfg, words_); \
  } while (0)

static void
defaults_validate (void)
{
  TbqConfig cfg;
  char msg[64] = "stale";

  tbq_config_init (&cfg);
  CHECK_OK (tbq_config_validate (&cfg, msg, sizeof msg));
  CHECK (msg[0] == '\0');
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
defaults_match_the_documentation (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  CHECK_EQ (cfg.source.block_size * cfg.source.max_blocks, 16384);
  CHECK_EQ (cfg.sink.block_size, 65536);
  CHECK_EQ (cfg.sink.min_blocks, 4);
  CHECK_EQ (cfg.sink.max_blocks, 4096);
  CHECK_EQ (cfg.sink.max_idle_blocks, 16);
  CHECK_EQ (cfg.backpressure, TBQ_BACKPRESSURE_BLOCK);
  CHECK (cfg.block_timeout_ns < 0);
  CHECK_EQ (cfg.publish, TBQ_PUBLISH_EVERY_RECORD);
  CHECK_EQ (cfg.wake, TBQ_WAKE_IMMEDIATE);
  CHECK_EQ (cfg.max_coalesce_ns, 0);
  CHECK_EQ (cfg.max_writers, 64);
  CHECK_EQ (cfg.max_readers, 1);
  CHECK_EQ (cfg.reader_batch, 32);
}

static void
queue_new_accepts_defaults_and_keeps_the_config (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  const TbqConfig *got;

  tbq_config_init (&cfg);
  cfg.sink.max_blocks = 77;
  q = queue_new_or_fail (&cfg);
  got = tbq_queue_get_config (q);
  CHECK (got != &cfg);
  CHECK_EQ (got->sink.max_blocks, 77);
  CHECK_EQ (got->source.block_size, cfg.source.block_size);
  tbq_queue_free (q, NULL, NULL);
}

static void
max_record_size_is_a_source_block_minus_headers (void)
{
  TbqConfig cfg;
  TbqQueue *q;

  tbq_config_init (&cfg);
  q = queue_new_or_fail (&cfg);
  CHECK_EQ (tbq_queue_max_record_size (q), cfg.source.block_size
      - TBQ_BLOCK_HEADER_SIZE - TBQ_RECORD_HEADER_SIZE);
  tbq_queue_free (q, NULL, NULL);
}

static void
block_too_small_for_a_record_is_refused (void)
{
  TbqConfig cfg;

  /* 64 bytes is all block header: no room for a record header. */
  tbq_config_init (&cfg);
  cfg.source.block_size = TBQ_BLOCK_HEADER_SIZE;
  REFUSED (&cfg, "source block size", "at least");
  tbq_config_init (&cfg);
  cfg.sink.block_size = TBQ_BLOCK_HEADER_SIZE;
  REFUSED (&cfg, "sink block size", "at least");
}

static void
block_size_not_multiple_of_64_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.block_size = 4096 + 8;
  REFUSED (&cfg, "source block size", "multiple of 64");
  tbq_config_init (&cfg);
  cfg.sink.block_size = 65536 - 32;
  REFUSED (&cfg, "sink block size", "multiple of 64");
}

static void
block_size_over_1_GiB_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.sink.block_size = ((size_t) 1 << 30) + 64;
  cfg.sink.min_blocks = 0;
  cfg.sink.max_blocks = 2;
  REFUSED (&cfg, "sink block size", "at most");
  /* The limit itself is allowed (validation only: nothing is allocated). */
  cfg.sink.block_size = (size_t) 1 << 30;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
min_blocks_above_max_blocks_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 5;
  cfg.source.max_blocks = 4;
  REFUSED (&cfg, "source", "min_blocks", "max_blocks");
  tbq_config_init (&cfg);
  cfg.sink.min_blocks = 9;
  cfg.sink.max_blocks = 8;
  REFUSED (&cfg, "sink", "min_blocks", "max_blocks");
}

static void
max_blocks_below_two_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.min_blocks = 1;
  cfg.source.max_blocks = 1;
  REFUSED (&cfg, "source", "max_blocks", "at least 2");
  tbq_config_init (&cfg);
  cfg.sink.min_blocks = 1;
  cfg.sink.max_blocks = 1;
  REFUSED (&cfg, "sink", "max_blocks", "at least 2");
}

static void
zero_sizes_are_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.block_size = 0;
  REFUSED (&cfg, "source block size 0");
  tbq_config_init (&cfg);
  cfg.sink.block_size = 0;
  REFUSED (&cfg, "sink block size 0");
  tbq_config_init (&cfg);
  cfg.source.min_blocks = 0;
  cfg.source.max_blocks = 0;
  REFUSED (&cfg, "source", "max_blocks 0");
  tbq_config_init (&cfg);
  cfg.sink.min_blocks = 0;
  cfg.sink.max_blocks = 0;
  REFUSED (&cfg, "sink", "max_blocks 0");
}

static void
sink_block_smaller_than_source_block_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.source.block_size = 8192;
  cfg.sink.block_size = 4096;
  REFUSED (&cfg, "sink block size 4096", "source block size 8192");
  /* Equal sizes are fine: the largest record fits an empty sink block. */
  cfg.sink.block_size = 8192;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
pool_size_overflow_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.sink.max_blocks = SIZE_MAX / cfg.sink.block_size + 1;
  REFUSED (&cfg, "sink", "overflows");
  tbq_config_init (&cfg);
  cfg.source.min_blocks = 0;
  cfg.source.max_blocks = SIZE_MAX / cfg.source.block_size + 1;
  REFUSED (&cfg, "source", "overflows");
}

static void
unknown_enums_are_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.backpressure = (TbqBackpressure) 7;
  REFUSED (&cfg, "backpressure", "7");
  tbq_config_init (&cfg);
  cfg.backpressure = (TbqBackpressure) - 1;
  REFUSED (&cfg, "backpressure");
  tbq_config_init (&cfg);
  cfg.publish = (TbqPublishPolicy) 3;
  REFUSED (&cfg, "publish policy", "3");
  tbq_config_init (&cfg);
  cfg.wake = (TbqWakePolicy) 3;
  REFUSED (&cfg, "wake policy", "3");
}

static void
publish_every_zero_with_every_n_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.publish = TBQ_PUBLISH_EVERY_N;
  cfg.publish_every = 0;
  REFUSED (&cfg, "publish_every");
  /* Irrelevant with the other policies. */
  cfg.publish = TBQ_PUBLISH_EVERY_RECORD;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
the_removed_lazy_wake_policy_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  /* 1 was TBQ_WAKE_LAZY: its polling copier is replaced by coalescing. */
  cfg.wake = (TbqWakePolicy) 1;
  REFUSED (&cfg, "unknown wake policy 1");
}

static void
coalescing_bound_outside_its_range_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  /* Deadlines `now + bound` must not overflow, nor poll busily. */
  cfg.max_coalesce_ns = INT64_MAX;
  REFUSED (&cfg, "coalescing bound", "9223372036854775807");
  cfg.max_coalesce_ns = (int64_t) 1 << 62;
  REFUSED (&cfg, "coalescing bound");
  cfg.max_coalesce_ns = TBQ_COALESCE_MAX_NS + 1;
  REFUSED (&cfg, "coalescing bound");
  cfg.max_coalesce_ns = TBQ_COALESCE_MIN_NS - 1;
  REFUSED (&cfg, "coalescing bound");
  cfg.max_coalesce_ns = -5;
  REFUSED (&cfg, "coalescing bound", "-5");
  cfg.max_coalesce_ns = TBQ_COALESCE_MIN_NS;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
  cfg.max_coalesce_ns = TBQ_COALESCE_MAX_NS;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
  /* 0: woken per record. */
  cfg.max_coalesce_ns = 0;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
coalescing_bound_needs_on_demand_wake (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_IMMEDIATE;
  cfg.max_coalesce_ns = 1000000;
  REFUSED (&cfg, "on-demand wake");
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
preallocation_beyond_physical_memory_is_refused (void)
{
  TbqConfig cfg;
  uint64_t phys = (uint64_t) sysconf (_SC_PHYS_PAGES)
      * (uint64_t) sysconf (_SC_PAGESIZE);
  size_t half;

  /* 2^40 blocks of 128 bytes: 128 TiB to pre-fault. */
  tbq_config_init (&cfg);
  cfg.sink.block_size = 128;
  cfg.source.block_size = 128;
  cfg.sink.min_blocks = cfg.sink.max_blocks = (size_t) 1 << 40;
  REFUSED (&cfg, "physical memory", "sink");
  tbq_config_init (&cfg);
  cfg.source.min_blocks = cfg.source.max_blocks = (size_t) 1 << 40;
  REFUSED (&cfg, "physical memory", "source");
  /* Each pool alone fits, both together do not. */
  half = (size_t) (phys / 2 / 65536) + 1;
  tbq_config_init (&cfg);
  cfg.source.block_size = cfg.sink.block_size = 65536;
  cfg.sink.min_blocks = cfg.sink.max_blocks = half;
  cfg.source.min_blocks = cfg.source.max_blocks = half;
  REFUSED (&cfg, "physical memory");
  /* Growing to it on demand is fine: only pre-allocation must exist. */
  cfg.sink.min_blocks = 4;
  cfg.source.min_blocks = 4;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
max_writers_zero_is_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.max_writers = 0;
  REFUSED (&cfg, "max_writers 0");
}

static void
max_readers_and_reader_batch_out_of_range_are_refused (void)
{
  TbqConfig cfg;

  tbq_config_init (&cfg);
  cfg.max_readers = 0;
  REFUSED (&cfg, "max_readers 0", "1..1024");
  cfg.max_readers = TBQ_MAX_READERS + 1;
  REFUSED (&cfg, "max_readers 1025");
  cfg.max_readers = TBQ_MAX_READERS;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
  cfg.reader_batch = 0;
  REFUSED (&cfg, "reader_batch 0");
  cfg.reader_batch = TBQ_READER_BATCH_MAX + 1;
  REFUSED (&cfg, "reader_batch 65537", "1..65536");
  cfg.reader_batch = TBQ_READER_BATCH_MAX;
  CHECK_OK (tbq_config_validate (&cfg, NULL, 0));
}

static void
missing_config_is_refused (void)
{
  char msg[128] = "";
  TbqQueue *q;

  CHECK_STATUS (tbq_config_validate (NULL, msg, sizeof msg),
      TBQ_INVALID_CONFIG);
  CHECK (msg[0] != '\0');
  CHECK_STATUS (tbq_queue_new (NULL, &q, NULL, 0), TBQ_INVALID_CONFIG);
}

static void
refusal_message_is_truncated_to_the_buffer (void)
{
  TbqConfig cfg;
  char msg[8];

  tbq_config_init (&cfg);
  cfg.max_writers = 0;
  memset (msg, 'x', sizeof msg);
  CHECK_STATUS (tbq_config_validate (&cfg, msg, 5), TBQ_INVALID_CONFIG);
  CHECK_EQ (strlen (msg), 4);
  CHECK (msg[5] == 'x');
  /* No buffer at all is fine too. */
  CHECK_STATUS (tbq_config_validate (&cfg, NULL, 0), TBQ_INVALID_CONFIG);
}

static void
status_to_string_covers_every_status (void)
{
  const char *seen[TBQ_IO_ERROR + 1];
  int s, t;

  for (s = TBQ_OK; s <= TBQ_IO_ERROR; s++) {
    const char *str = tbq_status_to_string ((TbqStatus) s);

    CHECK (str != NULL);
    CHECK (str[0] != '\0');
    CHECK (strcmp (str, tbq_status_to_string ((TbqStatus) (TBQ_IO_ERROR + 1)))
        != 0);
    for (t = 0; t < s; t++)
      CHECK (strcmp (seen[t], str) != 0);
    seen[s] = str;
  }
  /* Out-of-range values still get a string. */
  CHECK (tbq_status_to_string ((TbqStatus) 1000) != NULL);
}

TAP_MAIN (TAP_TEST (defaults_validate),
    TAP_TEST (defaults_match_the_documentation),
    TAP_TEST (queue_new_accepts_defaults_and_keeps_the_config),
    TAP_TEST (max_record_size_is_a_source_block_minus_headers),
    TAP_TEST (block_too_small_for_a_record_is_refused),
    TAP_TEST (block_size_not_multiple_of_64_is_refused),
    TAP_TEST (block_size_over_1_GiB_is_refused),
    TAP_TEST (min_blocks_above_max_blocks_is_refused),
    TAP_TEST (max_blocks_below_two_is_refused),
    TAP_TEST (zero_sizes_are_refused),
    TAP_TEST (sink_block_smaller_than_source_block_is_refused),
    TAP_TEST (pool_size_overflow_is_refused),
    TAP_TEST (unknown_enums_are_refused),
    TAP_TEST (publish_every_zero_with_every_n_is_refused),
    TAP_TEST (the_removed_lazy_wake_policy_is_refused),
    TAP_TEST (coalescing_bound_outside_its_range_is_refused),
    TAP_TEST (coalescing_bound_needs_on_demand_wake),
    TAP_TEST (preallocation_beyond_physical_memory_is_refused),
    TAP_TEST (max_writers_zero_is_refused),
    TAP_TEST (max_readers_and_reader_batch_out_of_range_are_refused),
    TAP_TEST (missing_config_is_refused),
    TAP_TEST (refusal_message_is_truncated_to_the_buffer),
    TAP_TEST (status_to_string_covers_every_status))

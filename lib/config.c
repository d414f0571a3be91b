/* Configuration: the defaults, and validation that refuses what cannot be
 * met, with a message naming the setting.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"
#include "machine.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define TBQ_MAX_BLOCK_SIZE ((size_t) 1 << 30)
#define TBQ_MIN_BLOCK_SIZE ((size_t) 128)
#define TBQ_MAX_WRITERS 1024

void
tbq_config_init (TbqConfig * cfg)
{
  if (cfg == NULL)
    return;
  memset (cfg, 0, sizeof *cfg);
  cfg->source.block_size = 4096;
  cfg->source.min_blocks = 4;
  cfg->source.max_blocks = 4;
  cfg->source.max_idle_blocks = 4;
  cfg->sink.block_size = 65536;
  cfg->sink.min_blocks = 4;
  cfg->sink.max_blocks = 4096;
  cfg->sink.max_idle_blocks = 16;
  cfg->backpressure = TBQ_BACKPRESSURE_BLOCK;
  cfg->block_timeout_ns = -1;
  cfg->publish = TBQ_PUBLISH_EVERY_RECORD;
  cfg->publish_every = 64;
  cfg->wake = TBQ_WAKE_IMMEDIATE;
  cfg->max_coalesce_ns = 0;
  cfg->spin_iterations = 1000;
  cfg->max_writers = 64;
  cfg->max_readers = 1;
  cfg->reader_batch = 32;
}

TbqStatus
tbq_config_refuse (char *msg, size_t msg_size, const char *fmt, ...)
{
  if (msg != NULL && msg_size > 0) {
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, msg_size, fmt, ap);
    va_end (ap);
  }
  return TBQ_INVALID_CONFIG;
}

/* Bytes of physical memory, or 0 when the system does not say. */
static uint64_t
physical_memory (void)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long page = sysconf (_SC_PAGESIZE);

  if (pages <= 0 || page <= 0)
    return 0;
  if ((uint64_t) pages > UINT64_MAX / (uint64_t) page)
    return UINT64_MAX;
  return (uint64_t) pages * (uint64_t) page;
}

static TbqStatus
validate_pool (const char *name, const TbqPoolConfig * p, char *msg,
    size_t msg_size)
{
  if (p->block_size < TBQ_MIN_BLOCK_SIZE || p->block_size % TBQ_CACHELINE)
    return tbq_config_refuse (msg, msg_size,
        "%s block size %zu: must be a multiple of %d and at least %zu bytes",
        name, p->block_size, TBQ_CACHELINE, TBQ_MIN_BLOCK_SIZE);
  if (p->block_size > TBQ_MAX_BLOCK_SIZE)
    return tbq_config_refuse (msg, msg_size,
        "%s block size %zu: must be at most %zu bytes", name, p->block_size,
        TBQ_MAX_BLOCK_SIZE);
  if (p->max_blocks < 2)
    return tbq_config_refuse (msg, msg_size,
        "%s pool max_blocks %zu: must be at least 2 (one being written, one "
        "being consumed)", name, p->max_blocks);
  if (p->min_blocks > p->max_blocks)
    return tbq_config_refuse (msg, msg_size,
        "%s pool min_blocks %zu is larger than max_blocks %zu", name,
        p->min_blocks, p->max_blocks);
  if (p->max_blocks > SIZE_MAX / p->block_size)
    return tbq_config_refuse (msg, msg_size,
        "%s pool %zu blocks of %zu bytes overflows the address space", name,
        p->max_blocks, p->block_size);
  return TBQ_OK;
}

/* Pre-allocated (and pre-faulted) memory must exist: refuse up front what
 * would otherwise fail or thrash while faulting it in. */
static TbqStatus
validate_preallocation (const TbqConfig * cfg, char *msg, size_t msg_size)
{
  uint64_t phys = physical_memory ();
  /* No overflow: each pool's max_blocks x block_size fits a size_t. */
  uint64_t source = (uint64_t) cfg->source.min_blocks * cfg->source.block_size;
  uint64_t sink = (uint64_t) cfg->sink.min_blocks * cfg->sink.block_size;

  if (phys == 0 || (source <= phys && sink <= phys - source))
    return TBQ_OK;
  return tbq_config_refuse (msg, msg_size,
      "pre-allocated pools of %" PRIu64 " bytes (sink: %zu blocks of %zu "
      "bytes, source: %zu blocks of %zu bytes) exceed this machine's %"
      PRIu64 " bytes of physical memory", source > UINT64_MAX - sink
      ? UINT64_MAX : source + sink, cfg->sink.min_blocks,
      cfg->sink.block_size, cfg->source.min_blocks, cfg->source.block_size,
      phys);
}

static TbqStatus
validate_policies (const TbqConfig * cfg, char *msg, size_t msg_size)
{
  if ((unsigned) cfg->backpressure > TBQ_BACKPRESSURE_DROP)
    return tbq_config_refuse (msg, msg_size, "unknown backpressure mode %d",
        (int) cfg->backpressure);
  if ((unsigned) cfg->publish > TBQ_PUBLISH_AT_HANDOFF)
    return tbq_config_refuse (msg, msg_size, "unknown publish policy %d",
        (int) cfg->publish);
  if (cfg->publish == TBQ_PUBLISH_EVERY_N && cfg->publish_every == 0)
    return tbq_config_refuse (msg, msg_size,
        "publish_every must be at least 1");
  if (cfg->wake != TBQ_WAKE_IMMEDIATE && cfg->wake != TBQ_WAKE_ON_DEMAND)
    return tbq_config_refuse (msg, msg_size, "unknown wake policy %d",
        (int) cfg->wake);
  if (cfg->max_coalesce_ns != 0
      && (cfg->max_coalesce_ns < TBQ_COALESCE_MIN_NS
          || cfg->max_coalesce_ns > TBQ_COALESCE_MAX_NS))
    return tbq_config_refuse (msg, msg_size,
        "coalescing bound %" PRId64 " ns: must be 0 or %" PRId64 "..%"
        PRId64 " ns", cfg->max_coalesce_ns, (int64_t) TBQ_COALESCE_MIN_NS,
        (int64_t) TBQ_COALESCE_MAX_NS);
  if (cfg->max_coalesce_ns != 0 && cfg->wake != TBQ_WAKE_ON_DEMAND)
    return tbq_config_refuse (msg, msg_size,
        "a coalescing bound needs on-demand wake: with immediate wake the "
        "copier thread moves every record as it comes");
  if (cfg->max_writers == 0 || cfg->max_writers > TBQ_MAX_WRITERS)
    return tbq_config_refuse (msg, msg_size, "max_writers %u: must be 1..%d",
        cfg->max_writers, TBQ_MAX_WRITERS);
  if (cfg->max_readers == 0 || cfg->max_readers > TBQ_MAX_READERS)
    return tbq_config_refuse (msg, msg_size, "max_readers %u: must be 1..%u",
        cfg->max_readers, TBQ_MAX_READERS);
  if (cfg->reader_batch == 0 || cfg->reader_batch > TBQ_READER_BATCH_MAX)
    return tbq_config_refuse (msg, msg_size,
        "reader_batch %u: must be 1..%u records", cfg->reader_batch,
        TBQ_READER_BATCH_MAX);
  return TBQ_OK;
}

TbqStatus
tbq_config_validate (const TbqConfig * cfg, char *msg, size_t msg_size)
{
  TbqStatus st;

  if (cfg == NULL)
    return tbq_config_refuse (msg, msg_size, "no configuration given");
  if ((st = validate_pool ("source", &cfg->source, msg, msg_size)) != TBQ_OK
      || (st = validate_pool ("sink", &cfg->sink, msg, msg_size)) != TBQ_OK)
    return st;
  if (cfg->sink.block_size < cfg->source.block_size)
    return tbq_config_refuse (msg, msg_size,
        "sink block size %zu is smaller than source block size %zu: every "
        "record must fit one sink block", cfg->sink.block_size,
        cfg->source.block_size);
  if ((st = validate_preallocation (cfg, msg, msg_size)) != TBQ_OK
      || (st = validate_policies (cfg, msg, msg_size)) != TBQ_OK)
    return st;
  if (msg != NULL && msg_size > 0)
    msg[0] = '\0';
  return TBQ_OK;
}

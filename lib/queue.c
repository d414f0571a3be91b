/* The queue: configuration, lifecycle, interruption, discard and stats.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-private.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define TBQ_MAX_BLOCK_SIZE ((size_t) 1 << 30)
#define TBQ_MIN_BLOCK_SIZE ((size_t) 128)
#define TBQ_MAX_WRITERS 1024

const char *
tbq_status_to_string (TbqStatus status)
{
  switch (status) {
    case TBQ_OK:
      return "ok";
    case TBQ_NO_SPACE:
      return "no space left in the current block";
    case TBQ_DROPPED:
      return "dropped: no free source block";
    case TBQ_TIMEOUT:
      return "timed out";
    case TBQ_INTERRUPTED:
      return "interrupted";
    case TBQ_EMPTY:
      return "empty";
    case TBQ_TOO_LARGE:
      return "record larger than a source block can hold";
    case TBQ_INVALID_CONFIG:
      return "invalid configuration";
    case TBQ_INVALID_ARGUMENT:
      return "invalid argument";
    case TBQ_NO_MEMORY:
      return "out of memory";
    case TBQ_BUSY:
      return "busy";
    case TBQ_LIMIT:
      return "too many writers";
  }
  return "unknown status";
}

void
tbq_config_init (TbqConfig * cfg)
{
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
  cfg->pickup_interval_ns = 1000000;
  cfg->spin_iterations = 1000;
  cfg->max_writers = 64;
}

static TbqStatus
refuse (char *msg, size_t msg_size, const char *fmt, ...)
{
  if (msg != NULL && msg_size > 0) {
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, msg_size, fmt, ap);
    va_end (ap);
  }
  return TBQ_INVALID_CONFIG;
}

static TbqStatus
validate_pool (const char *name, const TbqPoolConfig * p, char *msg,
    size_t msg_size)
{
  if (p->block_size < TBQ_MIN_BLOCK_SIZE || p->block_size % TBQ_CACHELINE)
    return refuse (msg, msg_size,
        "%s block size %zu: must be a multiple of %d and at least %zu bytes",
        name, p->block_size, TBQ_CACHELINE, TBQ_MIN_BLOCK_SIZE);
  if (p->block_size > TBQ_MAX_BLOCK_SIZE)
    return refuse (msg, msg_size,
        "%s block size %zu: must be at most %zu bytes", name, p->block_size,
        TBQ_MAX_BLOCK_SIZE);
  if (p->max_blocks < 2)
    return refuse (msg, msg_size,
        "%s pool max_blocks %zu: must be at least 2 (one being written, one "
        "being consumed)", name, p->max_blocks);
  if (p->min_blocks > p->max_blocks)
    return refuse (msg, msg_size,
        "%s pool min_blocks %zu is larger than max_blocks %zu", name,
        p->min_blocks, p->max_blocks);
  if (p->max_blocks > SIZE_MAX / p->block_size)
    return refuse (msg, msg_size,
        "%s pool %zu blocks of %zu bytes overflows the address space", name,
        p->max_blocks, p->block_size);
  return TBQ_OK;
}

TbqStatus
tbq_config_validate (const TbqConfig * cfg, char *msg, size_t msg_size)
{
  TbqStatus st;

  if (cfg == NULL)
    return refuse (msg, msg_size, "no configuration given");
  if ((st = validate_pool ("source", &cfg->source, msg, msg_size)) != TBQ_OK)
    return st;
  if ((st = validate_pool ("sink", &cfg->sink, msg, msg_size)) != TBQ_OK)
    return st;
  if (cfg->sink.block_size < cfg->source.block_size)
    return refuse (msg, msg_size,
        "sink block size %zu is smaller than source block size %zu: every "
        "record must fit one sink block", cfg->sink.block_size,
        cfg->source.block_size);
  if ((unsigned) cfg->backpressure > TBQ_BACKPRESSURE_DROP)
    return refuse (msg, msg_size, "unknown backpressure mode %d",
        (int) cfg->backpressure);
  if ((unsigned) cfg->publish > TBQ_PUBLISH_AT_HANDOFF)
    return refuse (msg, msg_size, "unknown publish policy %d",
        (int) cfg->publish);
  if (cfg->publish == TBQ_PUBLISH_EVERY_N && cfg->publish_every == 0)
    return refuse (msg, msg_size, "publish_every must be at least 1");
  if ((unsigned) cfg->wake > TBQ_WAKE_ON_DEMAND)
    return refuse (msg, msg_size, "unknown wake policy %d", (int) cfg->wake);
  if (cfg->wake == TBQ_WAKE_LAZY && cfg->pickup_interval_ns <= 0)
    return refuse (msg, msg_size,
        "pickup interval %" PRId64 " ns: must be positive with lazy wake",
        cfg->pickup_interval_ns);
  if (cfg->max_writers == 0 || cfg->max_writers > TBQ_MAX_WRITERS)
    return refuse (msg, msg_size, "max_writers %u: must be 1..%d",
        cfg->max_writers, TBQ_MAX_WRITERS);
  if (msg != NULL && msg_size > 0)
    msg[0] = '\0';
  return TBQ_OK;
}

TbqStatus
tbq_queue_new (const TbqConfig * cfg, TbqQueue ** out, char *msg,
    size_t msg_size)
{
  TbqQueue *q;
  TbqStatus st;
  TbqBlock *b;

  if (out == NULL)
    return TBQ_INVALID_ARGUMENT;
  *out = NULL;
  st = tbq_config_validate (cfg, msg, msg_size);
  if (st != TBQ_OK)
    return st;
  q = aligned_alloc (TBQ_CACHELINE, (sizeof *q + TBQ_CACHELINE - 1)
      & ~(size_t) (TBQ_CACHELINE - 1));
  if (q == NULL)
    return TBQ_NO_MEMORY;
  memset (q, 0, sizeof *q);
  q->cfg = *cfg;
  q->writers = calloc (cfg->max_writers, sizeof *q->writers);
  if (q->writers == NULL) {
    free (q);
    return TBQ_NO_MEMORY;
  }
  q->sink_pool = tbq_pool_new_shared (&cfg->sink, &st);
  if (q->sink_pool == NULL) {
    free (q->writers);
    free (q);
    if (msg != NULL && msg_size > 0)
      snprintf (msg, msg_size, "cannot allocate the sink pool");
    return st;
  }
  b = tbq_pool_take (q->sink_pool);
  if (b == NULL) {
    tbq_pool_orphan (q->sink_pool);
    free (q->writers);
    free (q);
    return TBQ_NO_MEMORY;
  }
  /* The first sink block: one reference for the copier, one for the reader. */
  atomic_store_explicit (&b->refs, 2, memory_order_relaxed);
  q->sink_cur = b;
  q->spos = b->data;
  q->send = b->data + b->capacity;
  q->rd_blk = b;
  pthread_mutex_init (&q->lock, NULL);
  /* In the sink pool, which outlives the queue while zero-copy holders keep
   * blocks: their last unref may have to wake the copier to trim. */
  q->data_ev = &q->sink_pool->work_ev;
  tbq_event_init (&q->read_ev);
  q->asym = cfg->asym_barrier && tbq_membarrier_available ();
  *out = q;
  return TBQ_OK;
}

const TbqConfig *
tbq_queue_get_config (const TbqQueue * q)
{
  return &q->cfg;
}

uint32_t
tbq_queue_max_record_size (const TbqQueue * q)
{
  return (uint32_t) (q->cfg.source.block_size - TBQ_BLOCK_HEADER_SIZE
      - TBQ_RECORD_HEADER_SIZE);
}

TbqStatus
tbq_queue_start (TbqQueue * q)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  /* Claimed before the thread exists, so that tbq_copier_step() callers
   * are refused from now on. */
  if (atomic_exchange_explicit (&q->copier_thread_running, 1,
          memory_order_acq_rel))
    return TBQ_BUSY;
  atomic_store_explicit (&q->copier_stop, 0, memory_order_relaxed);
  if (pthread_create (&q->copier_thread, NULL, tbq_copier_thread_main,
          q) != 0) {
    atomic_store_explicit (&q->copier_thread_running, 0,
        memory_order_release);
    return TBQ_NO_MEMORY;
  }
  return TBQ_OK;
}

void
tbq_queue_stop (TbqQueue * q)
{
  if (q == NULL
      || !atomic_load_explicit (&q->copier_thread_running,
          memory_order_relaxed))
    return;
  atomic_store_explicit (&q->copier_stop, 1, memory_order_seq_cst);
  tbq_event_wake (q->data_ev);
  tbq_event_wake (&q->sink_pool->ev);
  pthread_join (q->copier_thread, NULL);
  /* The flag is for that thread only: left set, it would make every later
   * tbq_copier_step() see work (so never time out) and give up on sink
   * pressure at once. */
  atomic_store_explicit (&q->copier_stop, 0, memory_order_relaxed);
  atomic_store_explicit (&q->copier_thread_running, 0, memory_order_release);
}

static void
wake_everyone (TbqQueue * q)
{
  uint32_t i;

  tbq_event_wake (q->data_ev);
  tbq_event_wake (&q->read_ev);
  tbq_event_wake (&q->sink_pool->ev);
  pthread_mutex_lock (&q->lock);
  for (i = 0; i < q->cfg.max_writers; i++) {
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);

    if (w != NULL)
      tbq_event_wake (&w->pool.ev);
  }
  pthread_mutex_unlock (&q->lock);
}

void
tbq_queue_interrupt (TbqQueue * q)
{
  /* Seq_cst store before the wakes: a waiter either sees the flag when it
   * re-checks, or sleeps on a key the wake has already moved. */
  atomic_store_explicit (&q->interrupted, 1, memory_order_seq_cst);
  wake_everyone (q);
}

void
tbq_queue_resume (TbqQueue * q)
{
  atomic_store_explicit (&q->interrupted, 0, memory_order_seq_cst);
  wake_everyone (q);
}

int
tbq_queue_is_interrupted (const TbqQueue * q)
{
  return atomic_load_explicit (&((TbqQueue *) q)->interrupted,
      memory_order_acquire);
}

void
tbq_queue_discard (TbqQueue * q, TbqReleaseFunc release, void *user_data)
{
  uint64_t n = 0;
  uint32_t i;

  /* Oldest first: the sink layer holds older records than any source block. */
  tbq_reader_discard (q, release, user_data, &n);
  pthread_mutex_lock (&q->lock);
  for (i = 0; i < q->cfg.max_writers; i++) {
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);

    if (w == NULL)
      continue;
    tbq_writer_discard (w, release, user_data, &n);
    if (atomic_load_explicit (&w->closed, memory_order_acquire)) {
      atomic_store_explicit (&q->writers[i], NULL, memory_order_relaxed);
      tbq_writer_destroy (w);
    }
  }
  pthread_mutex_unlock (&q->lock);
  tbq_count (&q->records_discarded, n);
}

void
tbq_queue_free (TbqQueue * q, TbqReleaseFunc release, void *user_data)
{
  uint32_t i;

  if (q == NULL)
    return;
  tbq_queue_stop (q);
  if (q->reader != NULL)
    tbq_reader_free (q->reader);
  tbq_queue_discard (q, release, user_data);
  for (i = 0; i < q->cfg.max_writers; i++) {
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);

    if (w != NULL) {
      atomic_store_explicit (&q->writers[i], NULL, memory_order_relaxed);
      tbq_writer_destroy (w);
    }
  }
  /* The reader has caught up with the copier: drop both their references
   * to the last sink block; zero-copy holders keep theirs. */
  tbq_block_unref (q->sink_cur);
  tbq_block_unref (q->rd_blk);
  tbq_pool_orphan (q->sink_pool);
  tbq_event_clear (&q->read_ev);
  pthread_mutex_destroy (&q->lock);
  free (q->writers);
  free (q);
}

void
tbq_queue_get_stats (TbqQueue * q, TbqStats * st)
{
  uint32_t i;

  memset (st, 0, sizeof *st);
  pthread_mutex_lock (&q->lock);
  st->records_in = q->retired[0];
  st->bytes_in = q->retired[1];
  st->records_dropped = q->retired[2];
  st->handoffs = q->retired[3];
  st->pressure_waits = q->retired[4];
  st->source.block_size = q->cfg.source.block_size;
  st->source.allocations = q->retired_source.allocations;
  st->source.releases = q->retired_source.releases;
  for (i = 0; i < q->cfg.max_writers; i++) {
    TbqWriter *w = atomic_load_explicit (&q->writers[i], memory_order_acquire);
    TbqPoolStats ps;

    if (w == NULL)
      continue;
    st->writers++;
    st->records_in += atomic_load_explicit (&w->records_in,
        memory_order_relaxed);
    st->bytes_in += atomic_load_explicit (&w->bytes_in, memory_order_relaxed);
    st->records_dropped += atomic_load_explicit (&w->records_dropped,
        memory_order_relaxed);
    st->handoffs += atomic_load_explicit (&w->handoffs, memory_order_relaxed);
    st->pressure_waits += atomic_load_explicit (&w->pressure_waits,
        memory_order_relaxed);
    tbq_pool_stats (&w->pool, &ps);
    st->source.blocks_total += ps.blocks_total;
    st->source.blocks_in_use += ps.blocks_in_use;
    st->source.blocks_peak += ps.blocks_peak;
    st->source.blocks_idle += ps.blocks_idle;
    st->source.allocations += ps.allocations;
    st->source.releases += ps.releases;
  }
  pthread_mutex_unlock (&q->lock);
  st->records_out = atomic_load_explicit (&q->records_out,
      memory_order_relaxed);
  st->bytes_out = atomic_load_explicit (&q->bytes_out, memory_order_relaxed);
  st->records_discarded = atomic_load_explicit (&q->records_discarded,
      memory_order_relaxed);
  st->bytes_copied = atomic_load_explicit (&q->bytes_copied,
      memory_order_relaxed);
  st->copier_passes = atomic_load_explicit (&q->copier_passes,
      memory_order_relaxed);
  st->copier_wakeups = atomic_load_explicit (&q->copier_wakeups,
      memory_order_relaxed);
  st->sink_pressure_waits = atomic_load_explicit (&q->sink_pressure_waits,
      memory_order_relaxed);
  tbq_pool_stats (q->sink_pool, &st->sink);
}

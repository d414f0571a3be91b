/* The queue: the top.  Lifecycle, the entry points that take a queue
 * (writers and readers are opened here, the copier is run from here),
 * interruption, discard, statistics and error reports.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queue owns one of each part and hands every part pointers to what it
 * needs, never the queue itself:
 *
 *   writer ──► (registry, wake) ──► copier ──► reader ◄── pull ◄── readers
 *                                                                  ▲
 *                                                              consumer
 *
 * With several readers (max_readers above 1) its own reader is the hidden
 * cursor that the readers handed out claim from (readers.h).
 *
 * Memory protocol: block.h.
 */
#include "config.h"
#include "group.h"
#include "readers.h"

#include <stdio.h>

struct TbqQueue
{
  TbqConfig cfg;
  _Atomic int interrupted;      /* see tbq_queue_interrupt() */
  _Atomic int reader_open;      /* the reader is handed out */
  _Atomic uint64_t records_discarded;
  TbqRegistry registry;
  TbqPool *sink_pool;
  TbqExtents *extents;          /* large records' memory, from the sink budget */
  TbqWake wake;
  TbqSpill *spill;              /* NULL without spill */
  TbqGroup *group;              /* NULL, or the copy group serving it */
  TbqReaders *readers;          /* NULL with max_readers 1: `reader` is
                                 * handed out */
  TbqCopier copier;
  _Alignas (TBQ_CACHELINE) TbqReader reader;
};

static TbqStatus
no_memory (char *msg, size_t msg_size, const char *what)
{
  if (msg != NULL && msg_size > 0 && what != NULL)
    snprintf (msg, msg_size, "cannot allocate %s", what);
  return TBQ_NO_MEMORY;
}

/* The parts that need no allocation of their own beyond the sink pool. */
static TbqStatus
queue_assemble (TbqQueue * q, char *msg, size_t msg_size)
{
  TbqStatus st;
  TbqBlock *first;

  q->sink_pool = tbq_pool_new_shared (&q->cfg.sink,
      q->group != NULL ? tbq_group_share (q->group) : NULL, &st, msg,
      msg_size);
  if (q->sink_pool == NULL)
    return st;
  q->extents = tbq_extents_new (q->sink_pool, &q->cfg.sink);
  if (q->extents == NULL) {
    tbq_pool_orphan (q->sink_pool);
    return no_memory (msg, msg_size, "the extents");
  }
  /* The copier's doorbell is in the sink pool (pool.h, owner_ev). */
  tbq_wake_init (&q->wake, q->cfg.wake, &q->sink_pool->owner_ev);
  if (tbq_copier_init (&q->copier, &q->registry, &q->wake, q->sink_pool,
          q->extents, &q->interrupted, q->cfg.spin_iterations,
          &first) != TBQ_OK) {
    if (tbq_pool_take_error (q->sink_pool, "sink pool", msg,
            msg_size) == TBQ_OK && msg != NULL && msg_size > 0)
      snprintf (msg, msg_size, "the sink pool cannot give the copier its "
          "first block");
    tbq_wake_fini (&q->wake);
    tbq_extents_orphan (q->extents);
    tbq_pool_orphan (q->sink_pool);
    return TBQ_NO_MEMORY;
  }
  tbq_reader_init (&q->reader, first, &q->wake, &q->interrupted,
      q->cfg.spin_iterations, &q->copier, q->cfg.max_coalesce_ns);
  if (q->cfg.max_readers > 1) {
    q->readers = tbq_readers_new (&q->reader, q->cfg.max_readers,
        q->cfg.reader_batch);
    if (q->readers == NULL) {
      tbq_reader_fini (&q->reader);
      tbq_copier_fini (&q->copier);
      tbq_wake_fini (&q->wake);
      tbq_extents_orphan (q->extents);
      tbq_pool_orphan (q->sink_pool);
      return no_memory (msg, msg_size, "the readers");
    }
  }
  if (q->group != NULL) {
    q->copier.grouped = true;
    q->copier.group_serving = tbq_group_serving (q->group);
  }
  return TBQ_OK;
}

/* Undo queue_assemble() before anyone used the queue. */
static void
queue_disassemble (TbqQueue * q)
{
  if (q->readers != NULL)
    tbq_readers_free (q->readers);
  tbq_copier_fini (&q->copier);
  tbq_reader_fini (&q->reader);
  tbq_extents_orphan (q->extents);
  tbq_pool_orphan (q->sink_pool);
  tbq_wake_fini (&q->wake);
}

static TbqStatus
queue_new (const TbqConfig * cfg, TbqGroup * g, TbqQueue ** out, char *msg,
    size_t msg_size)
{
  TbqQueue *q;
  TbqStatus st;

  if (out == NULL)
    return TBQ_INVALID_ARGUMENT;
  *out = NULL;
  st = tbq_config_validate (cfg, msg, msg_size);
  if (st != TBQ_OK)
    return st;
  q = tbq_alloc_aligned (sizeof *q);
  if (q == NULL)
    return no_memory (msg, msg_size, "the queue");
  q->cfg = *cfg;
  q->group = g;
  /* A member starts interrupted: its group serves it once resumed. */
  atomic_init (&q->interrupted, g != NULL);
  if (tbq_registry_init (&q->registry, cfg->max_writers) != TBQ_OK) {
    free (q);
    return no_memory (msg, msg_size, "the writer registry");
  }
  st = queue_assemble (q, msg, msg_size);
  if (st != TBQ_OK) {
    tbq_registry_fini (&q->registry);
    free (q);
    return st;
  }
  *out = q;
  return TBQ_OK;
}

TbqStatus
tbq_queue_new (const TbqConfig * cfg, TbqQueue ** out, char *msg,
    size_t msg_size)
{
  return queue_new (cfg, NULL, out, msg, msg_size);
}

TbqStatus
tbq_queue_new_in_group (const TbqConfig * cfg, TbqGroup * g, TbqGroupFunc fn,
    void *data, TbqQueue ** out, char *msg, size_t msg_size)
{
  TbqStatus st;

  if (g == NULL)
    return TBQ_INVALID_ARGUMENT;
  st = queue_new (cfg, g, out, msg, msg_size);
  if (st != TBQ_OK)
    return st;
  st = tbq_group_add (g, &(*out)->copier, *out, fn, data);
  if (st != TBQ_OK) {
    queue_disassemble (*out);
    tbq_registry_fini (&(*out)->registry);
    free (*out);
    *out = NULL;
    return no_memory (msg, msg_size, "the copy group's member list");
  }
  return TBQ_OK;
}

void
tbq_queue_wait_copier_idle (TbqQueue * q)
{
  if (q != NULL)
    tbq_copier_wait_idle (&q->copier);
}

static TbqQueue *
queue_of_reader (TbqReader * r)
{
  return (TbqQueue *) (void *) ((char *) r - offsetof (TbqQueue, reader));
}

void
tbq_queue_free (TbqQueue * q, TbqReleaseFunc release, void *user_data)
{
  uint32_t i;

  if (q == NULL)
    return;
  /* Out of the group first: no copy thread serves it afterwards. */
  if (q->group != NULL)
    tbq_group_remove (q->group, &q->copier);
  tbq_copier_thread_stop (&q->copier);
  tbq_consumer_stop (&q->reader);
  /* Readers of several: nothing else opens or frees one now. */
  for (i = 0; q->readers != NULL && i < q->readers->max; i++)
    tbq_consumer_stop (tbq_readers_at (q->readers, i));
  tbq_queue_discard (q, release, user_data);
  /* The discard ended any run: the spill holds no block now. */
  tbq_spill_free (q->spill);
  q->spill = NULL;
  tbq_registry_lock (&q->registry);
  for (i = 0; i < tbq_registry_span (&q->registry); i++) {
    TbqWriter *w = tbq_registry_at (&q->registry, i);

    if (w != NULL)
      tbq_writer_retire_locked (w, &q->registry);
  }
  tbq_registry_unlock (&q->registry);
  /* The reader has caught up with the copier: drop both their references
   * to the last sink block, and the readers of several theirs; zero-copy
   * holders keep theirs. */
  queue_disassemble (q);
  tbq_registry_fini (&q->registry);
  free (q);
}

const TbqConfig *
tbq_queue_get_config (const TbqQueue * q)
{
  return q == NULL ? NULL : &q->cfg;
}

uint32_t
tbq_queue_max_record_size (const TbqQueue * q)
{
  if (q == NULL)
    return 0;
  return (uint32_t) (q->cfg.source.block_size - TBQ_BLOCK_HEADER_SIZE
      - TBQ_RECORD_HEADER_SIZE);
}

uint32_t
tbq_queue_max_inline_size (const TbqQueue * q)
{
  if (q == NULL)
    return 0;
  return tbq_writer_inline_max (q->cfg.source.block_size)
      - TBQ_RECORD_HEADER_SIZE;
}

uint32_t
tbq_queue_max_extent_size (const TbqQueue * q)
{
  uint32_t n;

  if (q == NULL)
    return 0;
  n = tbq_extents_max_payload (q->extents);
  if (q->spill != NULL) {
    /* A run has an eighth of the budget for what goes to the file: the
     * quarter above the spill mark less the read-back room (spill.h,
     * "The budget"), which also holds any unit read back: less the spill
     * chain's block, the block extents leave free, the records of the
     * unit it comes back in, and page rounding. */
    uint64_t eighth = q->sink_pool->bytes_max / 8;
    uint64_t room = 4 * (uint64_t) q->cfg.sink.block_size + 2 * 65536;
    uint64_t cap = eighth > room ? eighth - room : 0;

    if (cap < n)
      n = (uint32_t) cap;
  }
  return n;
}

TbqStatus
tbq_writer_new (TbqQueue * q, TbqWriter ** out)
{
  TbqWriter *w;
  TbqStatus st;

  if (q == NULL || out == NULL)
    return TBQ_INVALID_ARGUMENT;
  st = tbq_writer_open (&q->cfg, &q->wake, q->extents, &q->interrupted, &w);
  if (st != TBQ_OK)
    return st;
  st = tbq_registry_add (&q->registry, w, &w->slot);
  if (st != TBQ_OK) {
    tbq_writer_destroy (w, NULL);
    return st;
  }
  *out = w;
  return TBQ_OK;
}

TbqStatus
tbq_reader_new (TbqQueue * q, TbqReader ** out)
{
  if (q == NULL || out == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (q->readers != NULL)
    return tbq_readers_open (q->readers, out);
  /* Acq_rel: the previous holder's use of the reader happens before ours. */
  if (atomic_exchange_explicit (&q->reader_open, 1, memory_order_acq_rel))
    return TBQ_BUSY;
  *out = &q->reader;
  return TBQ_OK;
}

void
tbq_reader_free (TbqReader * r)
{
  if (r == NULL)
    return;
  tbq_consumer_stop (r);
  if (r->readers != NULL) {
    tbq_readers_close (r);
    return;
  }
  /* Release: pairs with tbq_reader_new(). */
  atomic_store_explicit (&queue_of_reader (r)->reader_open, 0,
      memory_order_release);
}

TbqStatus
tbq_copier_step (TbqQueue * q, int64_t timeout_ns)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  return tbq_copier_host_step (&q->copier, timeout_ns);
}

TbqStatus
tbq_copier_run (TbqQueue * q)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  return tbq_copier_host_run (&q->copier);
}

TbqStatus
tbq_queue_start (TbqQueue * q)
{
  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  return tbq_copier_thread_start (&q->copier);
}

void
tbq_queue_stop (TbqQueue * q)
{
  if (q != NULL)
    tbq_copier_thread_stop (&q->copier);
}

static void
wake_everyone (TbqQueue * q)
{
  uint32_t i;

  tbq_wake_everyone (&q->wake);
  if (q->readers != NULL)
    tbq_readers_wake (q->readers);
  tbq_copier_wake (&q->copier);
  tbq_registry_lock (&q->registry);
  for (i = 0; i < tbq_registry_span (&q->registry); i++) {
    TbqWriter *w = tbq_registry_at (&q->registry, i);

    if (w != NULL)
      tbq_writer_wake (w);
  }
  tbq_registry_unlock (&q->registry);
}

void
tbq_queue_interrupt (TbqQueue * q)
{
  if (q == NULL)
    return;
  /* Relaxed: the wakes below are unconditional, so a waiter either sees
   * the flag when it re-checks or sleeps on a key they already moved
   * (block.h, "Events"). */
  atomic_store_explicit (&q->interrupted, 1, memory_order_relaxed);
  wake_everyone (q);
}

void
tbq_queue_resume (TbqQueue * q)
{
  if (q == NULL)
    return;
  /* Release: what the caller did to the queue while it was interrupted
   * (a discard) happens before the pass a copy group's thread makes once
   * it sees the flag down (acquire in tbq_copier_group_pass()). */
  atomic_store_explicit (&q->interrupted, 0, memory_order_release);
  wake_everyone (q);
}

int
tbq_queue_is_interrupted (const TbqQueue * q)
{
  /* Relaxed: a snapshot of the flag; it orders nothing. */
  return q != NULL
      && atomic_load_explicit (&q->interrupted, memory_order_relaxed);
}

void
tbq_queue_discard (TbqQueue * q, TbqReleaseFunc release, void *user_data)
{
  uint64_t n = 0;
  uint32_t i;

  if (q == NULL)
    return;
  /* The copier is stopped: make what it copied last visible. */
  tbq_copier_publish_sink (&q->copier);
  /* Oldest first: the sink layer holds older records than any source block,
   * and readers' batches older ones than what the cursor has left. */
  if (q->readers != NULL)
    tbq_readers_discard (q->readers, release, user_data, &n);
  tbq_reader_discard (&q->reader, release, user_data, &n);
  tbq_reader_restart_waits (&q->reader);
  tbq_registry_lock (&q->registry);
  for (i = 0; i < tbq_registry_span (&q->registry); i++) {
    TbqWriter *w = tbq_registry_at (&q->registry, i);

    if (w == NULL)
      continue;
    tbq_writer_discard (w, release, user_data, &n);
    /* Relaxed: nothing else runs (see tbq_writer_discard()). */
    if (atomic_load_explicit (&w->closed, memory_order_relaxed))
      tbq_writer_retire_locked (w, &q->registry);
  }
  tbq_registry_unlock (&q->registry);
  tbq_count (&q->records_discarded, n);
}

/* Writers' counters, live and retired, into `st`. */
static void
writer_stats (TbqQueue * q, TbqStats * st)
{
  TbqWriterTotals t;
  uint32_t i;

  st->source.block_size = q->cfg.source.block_size;
  tbq_registry_lock (&q->registry);
  t = q->registry.retired;
  for (i = 0; i < tbq_registry_span (&q->registry); i++) {
    TbqWriter *w = tbq_registry_at (&q->registry, i);
    TbqWriterTotals wt;
    TbqPoolStats ps;

    if (w == NULL)
      continue;
    st->writers++;
    tbq_writer_totals (w, &wt);
    tbq_writer_totals_add (&t, &wt);
    tbq_pool_stats (&w->pool, &ps);
    tbq_pool_stats_add (&st->source, &ps);
  }
  tbq_registry_unlock (&q->registry);
  st->records_in = t.records_in;
  st->bytes_in = t.bytes_in;
  st->records_dropped = t.records_dropped;
  st->handoffs = t.handoffs;
  st->pressure_waits = t.pressure_waits;
  st->writer_wakeups = t.wakeups;
  st->writer_sleeps = t.sleeps;
  st->extents.pressure_waits = t.extent_waits;
  st->source.allocations = t.source_allocations;
  st->source.releases = t.source_releases;
  st->source.alloc_failures = t.source_alloc_failures;
}

void
tbq_queue_get_stats (TbqQueue * q, TbqStats * st)
{
  uint64_t pressure_waits;

  if (q == NULL || st == NULL)
    return;
  memset (st, 0, sizeof *st);
  writer_stats (q, st);
  pressure_waits = st->extents.pressure_waits;
  st->records_discarded = atomic_load_explicit (&q->records_discarded,
      memory_order_relaxed);
  st->reader_sleeps = tbq_event_sleeps (&q->wake.reader_ev);
  if (q->readers != NULL) {
    tbq_readers_stats (q->readers, st);
  } else {
    st->records_out = atomic_load_explicit (&q->reader.records_out,
        memory_order_relaxed);
    st->bytes_out = atomic_load_explicit (&q->reader.bytes_out,
        memory_order_relaxed);
    /* Relaxed: a snapshot of the flag. */
    st->readers = (uint32_t) atomic_load_explicit (&q->reader_open,
        memory_order_relaxed);
  }
  /* Acquire: pairs with the nap count in pull.c. */
  st->reader_naps = atomic_load_explicit (&q->reader.naps,
      memory_order_acquire);
  st->reader_naps_woken = atomic_load_explicit (&q->reader.naps_woken,
      memory_order_relaxed);
  tbq_copier_stats (&q->copier, st);
  tbq_extents_stats (q->extents, &st->extents);
  tbq_spill_stats (q->spill, &st->spill);
  st->extents.pressure_waits = pressure_waits;
}

int
tbq_queue_sink_can_take (const TbqQueue * q)
{
  return q != NULL && (tbq_pool_can_take (q->sink_pool)
      || tbq_spill_absorbs (q->spill));
}

int
tbq_queue_sink_half_used (const TbqQueue * q)
{
  uint64_t used;

  if (q == NULL)
    return 0;
  /* Relaxed: a hint, as the budget's own loads (pool.h). */
  used = atomic_load_explicit (&q->sink_pool->bytes_used,
      memory_order_relaxed);
  return used > tbq_pool_budget_limit (q->sink_pool) / 2;
}

int
tbq_queue_sink_can_take_record (const TbqQueue * q, uint32_t size)
{
  if (q == NULL)
    return 0;
  if (size <= tbq_queue_max_inline_size (q))
    return tbq_queue_sink_can_take (q);
  return tbq_extents_have_room (q->extents, size)
      || tbq_extents_held_back (q->extents, size)
      || tbq_spill_absorbs (q->spill);
}

TbqStatus
tbq_queue_take_error (TbqQueue * q, char *msg, size_t msg_size)
{
  TbqStatus st;
  uint32_t i;

  if (q == NULL)
    return TBQ_INVALID_ARGUMENT;
  st = tbq_spill_take_error (q->spill, msg, msg_size);
  if (st == TBQ_OK)
    st = tbq_pool_take_error (q->sink_pool, "sink pool", msg, msg_size);
  if (st == TBQ_OK)
    st = tbq_extents_take_error (q->extents, msg, msg_size);
  tbq_registry_lock (&q->registry);
  for (i = 0; i < tbq_registry_span (&q->registry) && st == TBQ_OK;
      i++) {
    TbqWriter *w = tbq_registry_at (&q->registry, i);
    char name[48];

    snprintf (name, sizeof name, "source pool of writer %u", i);
    if (w != NULL)
      st = tbq_pool_take_error (&w->pool, name, msg, msg_size);
  }
  tbq_registry_unlock (&q->registry);
  if (st == TBQ_OK && msg != NULL && msg_size > 0)
    msg[0] = '\0';
  return st;
}

void
tbq_spill_config_init (TbqSpillConfig * cfg)
{
  if (cfg == NULL)
    return;
  memset (cfg, 0, sizeof *cfg);
  cfg->remove = 1;
}

TbqStatus
tbq_queue_enable_spill (TbqQueue * q, const TbqSpillConfig * cfg, char *msg,
    size_t msg_size)
{
  TbqSpill *s;
  TbqStatus st;
  size_t len;

  if (q == NULL || cfg == NULL)
    return TBQ_INVALID_ARGUMENT;
  if (q->spill != NULL)
    return TBQ_BUSY;
  len = cfg->temp_template != NULL ? strlen (cfg->temp_template) : 0;
  if (len < 6 || strcmp (cfg->temp_template + len - 6, "XXXXXX") != 0)
    return tbq_config_refuse (msg, msg_size,
        "the spill file's template must end in XXXXXX");
  /* Units read back are extents: one sink block's records must fit one,
   * next to the blocks the spill mark leaves. */
  if (q->cfg.sink.max_blocks < 8)
    return tbq_config_refuse (msg, msg_size,
        "the sink pool must hold at least 8 sink blocks to spill");
  s = tbq_spill_new (cfg, q->sink_pool, q->extents, &q->wake, &st, msg,
      msg_size);
  if (s == NULL)
    return st;
  if (tbq_spill_start (s) != TBQ_OK) {
    tbq_spill_free (s);
    return no_memory (msg, msg_size, "the spill thread");
  }
  q->spill = s;
  q->copier.spill = s;
  q->reader.spill = s;
  return TBQ_OK;
}

const char *
tbq_queue_spill_path (const TbqQueue * q)
{
  return q == NULL ? NULL : tbq_spill_path (q->spill);
}

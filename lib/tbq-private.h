/* libtbq internals: blocks, pools, events and the queue/writer/reader state.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Ownership and ordering, in one place:
 *
 *  - A block chain links the blocks of one producer (a writer's source
 *    blocks, or the copier's sink blocks) through `next`.  The producer of a
 *    chain stores `published` (release) after writing complete records, and
 *    stores `next` (release) after the final `published` store: a non-NULL
 *    `next` *seals* the block.  The consumer loads `published` (acquire) and
 *    may read every byte below it; after loading a non-NULL `next` (acquire)
 *    it reloads `published` to get the final length.
 *    Invariant: consumer offset <= published <= capacity, and a block's bytes
 *    below `published` never change until the block is back in its pool.
 *
 *  - A pool's free list is a LIFO stack (Treiber) with many pushers and ONE
 *    popper (the writer for a source pool, the copier for the sink pool).
 *    With one popper there is no ABA: a node on the stack can only leave it
 *    through that popper, so `head->free_next` cannot change under it.
 *
 *  - Waiting uses an event count (TbqEvent): a waiter reads `seq`, registers
 *    in `waiters`, issues a full fence, re-checks its condition and sleeps on
 *    `seq`.  A notifier makes its condition true, issues a full fence and wakes
 *    only if `waiters` is non-zero.  For the per-record writer -> copier
 *    notification the fence is asymmetric: the copier (the rare side) issues
 *    membarrier(PRIVATE_EXPEDITED) and the writer only a compiler barrier.
 */
#ifndef TBQ_PRIVATE_H
#define TBQ_PRIVATE_H

#include "tbq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TBQ_CACHELINE 64

#if defined(__x86_64__) || defined(__i386__)
#define tbq_cpu_relax() __builtin_ia32_pause ()
#elif defined(__aarch64__)
#define tbq_cpu_relax() __asm__ __volatile__ ("yield" ::: "memory")
#else
#define tbq_cpu_relax() atomic_signal_fence (memory_order_seq_cst)
#endif

#define TBQ_LIKELY(x) __builtin_expect (!!(x), 1)
#define TBQ_UNLIKELY(x) __builtin_expect (!!(x), 0)

typedef struct TbqPool TbqPool;

struct TbqBlock
{
  _Atomic uint32_t published;   /* bytes of complete records visible to the consumer */
  _Atomic uint32_t refs;        /* sink blocks: copier + reader + zero-copy holders */
  _Atomic (TbqBlock *) next;    /* successor in the chain; non-NULL = sealed */
  TbqBlock *free_next;          /* free-list link (owned by whoever holds the block) */
  TbqPool *pool;
  uint32_t capacity;            /* data bytes */
  uint32_t mapped;              /* 1 = mmap'ed, 0 = aligned_alloc'ed */
  unsigned char pad_[TBQ_BLOCK_HEADER_SIZE - 2 * sizeof (uint32_t)
      - 3 * sizeof (void *) - 2 * sizeof (uint32_t)];
  unsigned char data[];
};

_Static_assert (sizeof (TbqBlock) == TBQ_BLOCK_HEADER_SIZE, "block header size");

/* ---- events (eventcount over a futex or a condvar) ---- */

typedef struct
{
  _Atomic uint32_t seq;         /* bumped by every wake-up */
  _Atomic uint32_t waiters;     /* threads between prepare and finish */
#ifndef TBQ_USE_FUTEX
  pthread_mutex_t mutex;
  pthread_cond_t cond;
#endif
} TbqEvent;

void tbq_event_init (TbqEvent * ev);
void tbq_event_clear (TbqEvent * ev);
/* Register as a waiter; returns the key to sleep on. `asym`: issue the
 * process-wide barrier instead of a local fence (see file comment). */
uint32_t tbq_event_prepare (TbqEvent * ev, bool asym);
/* Sleep while seq == key, up to the absolute CLOCK_MONOTONIC `deadline_ns`
 * (< 0: no limit), then unregister.  Spurious returns are allowed. */
void tbq_event_sleep (TbqEvent * ev, uint32_t key, int64_t deadline_ns);
/* Unregister without sleeping. */
void tbq_event_cancel (TbqEvent * ev);
/* Wake every waiter unconditionally. */
void tbq_event_wake (TbqEvent * ev);

/* Notifier side: the condition was made true by a preceding release store.
 * Full fence, then wake if anybody waits. */
static inline void
tbq_event_notify (TbqEvent * ev)
{
  /* Order the condition store before the `waiters` load (Dekker). */
  atomic_thread_fence (memory_order_seq_cst);
  if (atomic_load_explicit (&ev->waiters, memory_order_relaxed) != 0)
    tbq_event_wake (ev);
}

/* Same, when the waiter side uses the asymmetric barrier: the membarrier the
 * waiter issues orders our earlier store, so a compiler barrier suffices. */
static inline void
tbq_event_notify_light (TbqEvent * ev, bool asym)
{
  if (asym)
    atomic_signal_fence (memory_order_seq_cst);
  else
    atomic_thread_fence (memory_order_seq_cst);
  if (atomic_load_explicit (&ev->waiters, memory_order_relaxed) != 0)
    tbq_event_wake (ev);
}

/* True when the process-wide asymmetric barrier is available (registers
 * the process on first use). */
bool tbq_membarrier_available (void);
/* The process-wide barrier (a full fence where membarrier is missing). */
void tbq_asym_barrier (void);

int64_t tbq_now_ns (void);
/* Absolute deadline for a relative timeout (< 0 stays < 0 = none). */
int64_t tbq_deadline (int64_t timeout_ns);

/* ---- pools ---- */

struct TbqPool
{
  _Atomic (TbqBlock *) free_head;       /* LIFO stack, see file comment */
  _Atomic uint64_t idle;        /* blocks on the free list */
  _Atomic uint64_t total;       /* blocks allocated */
  _Atomic uint64_t peak;        /* highest total - idle seen by the popper */
  _Atomic uint64_t allocations;
  _Atomic uint64_t releases;
  TbqPoolConfig cfg;
  bool use_mmap;
  /* Shared (sink) pools only: blocks may outlive the queue in zero-copy
   * holders, so the pool is refcounted: one for the queue, one per block
   * allocated.  `ev` is notified when a block comes back. */
  bool shared;
  _Atomic int orphaned;
  _Atomic uint64_t refs;
  TbqEvent ev;
  /* Sink pool: the copier's idle wait (new records, or surplus idle blocks
   * to release). */
  TbqEvent work_ev;
};

TbqStatus tbq_pool_init (TbqPool * pool, const TbqPoolConfig * cfg);
/* Free every idle block; blocks still in use must have been returned first. */
void tbq_pool_clear (TbqPool * pool);
/* Embedded (source) pools: clear and tear down. */
void tbq_pool_fini (TbqPool * pool);
/* Popper only: a free block, else a new one while below max_blocks, else NULL. */
TbqBlock *tbq_pool_take (TbqPool * pool);
/* Any thread. */
void tbq_pool_put (TbqPool * pool, TbqBlock * b);
/* Hand a block back, or release it to the system when the pool already
 * keeps enough idle blocks (caller must be allowed to free). */
void tbq_pool_put_or_release (TbqPool * pool, TbqBlock * b);
/* Popper only: release idle blocks above max_idle_blocks (keeping min_blocks
 * allocated). Returns how many were released. */
size_t tbq_pool_trim (TbqPool * pool);
/* Anyone: whether tbq_pool_trim() would release something now. */
static inline bool
tbq_pool_trim_due (TbqPool * pool)
{
  return atomic_load_explicit (&pool->idle, memory_order_relaxed)
      > pool->cfg.max_idle_blocks
      && atomic_load_explicit (&pool->total, memory_order_relaxed)
      > pool->cfg.min_blocks;
}
/* Anyone may ask whether a take would succeed right now. */
static inline bool
tbq_pool_can_take (TbqPool * pool)
{
  return atomic_load_explicit (&pool->free_head, memory_order_acquire) != NULL
      || atomic_load_explicit (&pool->total, memory_order_relaxed) < pool->cfg.max_blocks;
}
void tbq_pool_stats (TbqPool * pool, TbqPoolStats * st);
/* The sink pool: heap-allocated and refcounted (see struct). */
TbqPool *tbq_pool_new_shared (const TbqPoolConfig * cfg, TbqStatus * st);
/* The queue lets go: idle blocks are released now, blocks still held are
 * released by their last tbq_block_unref(). */
void tbq_pool_orphan (TbqPool * pool);

/* ---- records ---- */

static inline const TbqRecordHeader *
tbq_record_at (const unsigned char *p)
{
  return (const TbqRecordHeader *) (const void *) p;
}

/* Call `release` for every record in [from, to) of `data`; returns the count. */
uint64_t tbq_records_release (const unsigned char *data, uint32_t from, uint32_t to,
    TbqReleaseFunc release, void *user_data);

/* ---- writer ---- */

struct TbqWriter
{
  /* Writer-owned, hot. */
  unsigned char *wpos;          /* next record header in `cur` */
  unsigned char *wend;          /* end of `cur`'s data area */
  TbqBlock *cur;
  unsigned char *reserved;      /* header of the reserved, uncommitted record */
  uint32_t pub_off;             /* last offset stored to cur->published */
  uint32_t unpublished;         /* records committed since the last publish */
  TbqPublishPolicy publish;
  uint32_t publish_every;
  TbqBackpressure backpressure;
  int64_t block_timeout_ns;
  bool wake_lazy;
  bool wake_on_demand;
  uint64_t handoff_wake;        /* sealed blocks that make a hand-off wake
                                 * the copier (lazy and on-demand wake) */
  bool asym;
  TbqQueue *q;
  uint32_t slot;

  /* Writer-owned counters, read by stats (relaxed). */
  _Atomic uint64_t records_in;
  _Atomic uint64_t bytes_in;
  _Atomic uint64_t records_dropped;
  _Atomic uint64_t pressure_waits;
  _Atomic uint64_t published_bytes;     /* block bytes published, all blocks */

  /* Writer-written at hand-offs only, read by the copier's has-work check:
   * on its own line, so a waiting copier does not pull the line the writer
   * writes on every record. */
  _Alignas (TBQ_CACHELINE) _Atomic uint64_t handoffs;

  /* Shared: the source pool (copier pushes, writer pops) and its event. */
  _Alignas (TBQ_CACHELINE) TbqPool pool;      /* pool.ev: copier -> writer,
                                                 * a block came back or data moved */
  _Atomic int closed;

  /* Copier-owned (whoever holds copier_busy: the copier, or a pulling
   * reader).  The atomics let the copier decide, without owning, whether
   * there is work. */
  _Alignas (TBQ_CACHELINE) TbqBlock *copy_blk;
  uint32_t copy_off;
  _Atomic uint64_t copied_bytes;        /* block bytes moved, all blocks */
  _Atomic uint64_t blocks_returned;     /* sealed source blocks given back */
};

/* ---- reader ---- */

struct TbqReader
{
  TbqQueue *q;
  pthread_t consumer;
  bool consumer_running;
  _Atomic int consumer_stop;
  TbqConsumeFunc consume;
  void *consume_data;
};

/* ---- queue ---- */

struct TbqQueue
{
  TbqConfig cfg;
  bool asym;                    /* membarrier available */
  _Atomic int interrupted;

  /* Writer registry: slots are written under `lock`, read by the copier
   * without it.  Freeing a closed writer and reading stats take `lock`. */
  pthread_mutex_t lock;
  _Atomic (TbqWriter *) *writers;
  _Atomic uint32_t lazy_writers;
  uint64_t retired[6];          /* counters of freed writers (under lock) */
  TbqPoolStats retired_source;

  TbqEvent *data_ev;            /* writers -> copier: records published;
                                 * the sink pool's work_ev */
  TbqEvent read_ev;             /* copier -> reader: records published */
  TbqPool *sink_pool;           /* its `ev`: sink block freed -> copier */

  /* Copier-owned. */
  _Alignas (TBQ_CACHELINE) TbqBlock *sink_cur;
  unsigned char *spos;
  unsigned char *send;
  uint32_t spub_off;
  _Atomic uint32_t sink_seq;    /* bumped after every sink publish */
  _Atomic uint64_t bytes_copied;
  _Atomic uint64_t copier_passes;
  _Atomic uint64_t copier_wakeups;
  _Atomic uint64_t sink_pressure_waits;
  _Atomic int copier_busy;      /* the copier's state is owned: by the copier
                                 * in a pass, or by a reader pulling; acquire
                                 * to take, release to give back */
  /* Pickup of the writers' current blocks (see copier.c): the last
   * pickup_req the copier acted on, and with lazy wake when the next
   * timed pickup is due.  Only the thread running copier steps touches
   * them (relaxed atomics: tbq_copier_step() may move between threads). */
  _Atomic uint32_t pickup_seen;
  int64_t next_pickup_ns;

  /* Bumped (release) by flush, sync and close: the copier must also move
   * the published part of the writers' current blocks. */
  _Alignas (TBQ_CACHELINE) _Atomic uint32_t pickup_req;

  /* Reader-owned. */
  _Alignas (TBQ_CACHELINE) TbqBlock *rd_blk;
  uint32_t rd_off;
  _Atomic uint64_t records_out;
  _Atomic uint64_t bytes_out;
  _Atomic uint64_t records_discarded;
  TbqReader *reader;
  _Atomic int reader_kick;      /* tbq_reader_wake() pending */
  _Atomic int reader_hungry;    /* the reader waits for records (on-demand wake) */
  _Atomic uint32_t pull_seq;    /* bumped by writers that publish while the
                                 * reader is hungry (on-demand wake) */

  _Alignas (TBQ_CACHELINE) pthread_t copier_thread;
  _Atomic int copier_thread_running;
  _Atomic int copier_stop;
};

/* Owner-only counter bump: a relaxed load and store, no read-modify-write. */
static inline void
tbq_count (_Atomic uint64_t * c, uint64_t n)
{
  atomic_store_explicit (c, atomic_load_explicit (c, memory_order_relaxed) + n,
      memory_order_relaxed);
}

/* Generic wait: spin `spins` rounds, then sleep on `ev` until `ready(arg)`,
 * the deadline, or an interrupt. */
typedef bool (*TbqReadyFunc) (void *arg);
TbqStatus tbq_wait (TbqQueue * q, TbqEvent * ev, bool asym, uint32_t spins,
    TbqReadyFunc ready, void *arg, int64_t deadline_ns);

void tbq_writer_destroy (TbqWriter * w);
void tbq_writer_discard (TbqWriter * w, TbqReleaseFunc release, void *user_data, uint64_t * count);
void tbq_reader_discard (TbqQueue * q, TbqReleaseFunc release, void *user_data, uint64_t * count);
void tbq_copier_publish_sink (TbqQueue * q);
/* A reader moves what writers published itself, if the copier is not in a
 * pass (on-demand wake: saves a thread hop).  True if records moved. */
bool tbq_copier_pull (TbqQueue * q);
/* Whether any writer has sealed blocks the copier has not handled, or is
 * closed; with `current`, also published records in a current block
 * (atomics only; any thread). */
bool tbq_copier_has_work (TbqQueue * q, bool current);
/* Ask the copier to move the published part of current blocks too. */
void tbq_copier_request_pickup (TbqQueue * q);
/* Body of the thread tbq_queue_start() creates. */
void *tbq_copier_thread_main (void *q);

#endif /* TBQ_PRIVATE_H */

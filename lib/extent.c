/* Extents: allocation, the idle cache, the budget they are charged to,
 * and the public block references (a record's block is a sink block or an
 * extent; this is the first room that knows both).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See extent.h for the concept and block.h ("Extents") for the protocol.
 * The idle cache is a LIFO list under a mutex: extents are taken by any
 * writer and returned by any thread (the reader, a zero-copy holder), and
 * each costs a copy of at least a few hundred bytes, against which an
 * uncontended lock is small.  No system call is made under the lock.
 */
#include "extent.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The largest extent: its data bytes must fit TbqBlock.capacity. */
#define EXTENT_BYTES_MAX ((uint64_t) 1 << 32)

static inline uint64_t
extent_size (const TbqBlock * e)
{
  return (uint64_t) e->capacity + TBQ_BLOCK_HEADER_SIZE;
}

/* Bytes of the extent for `payload` bytes: header and payload rounded to
 * a cache line, or to whole pages from a page on; UINT64_MAX when that
 * cannot exist. */
static uint64_t
extent_bytes (const TbqExtents * x, uint64_t payload)
{
  uint64_t n;

  if (payload > EXTENT_BYTES_MAX)
    return UINT64_MAX;
  n = (payload + TBQ_BLOCK_HEADER_SIZE + TBQ_CACHELINE - 1)
      & ~(uint64_t) (TBQ_CACHELINE - 1);
  if (n >= x->page)
    n = (n + x->page - 1) & ~(uint64_t) (x->page - 1);
  return n;
}

static void
extents_ref (TbqExtents * x)
{
  /* Relaxed: the caller holds a reference already. */
  atomic_fetch_add_explicit (&x->refs, 1, memory_order_relaxed);
}

static void
extents_unref (TbqExtents * x)
{
  /* Acq_rel: every use of the extents happens before their free. */
  if (atomic_fetch_sub_explicit (&x->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy (&x->lock);
  tbq_pool_unref (x->sink);
  free (x);
}

TbqExtents *
tbq_extents_new (TbqPool * sink, const TbqPoolConfig * cfg)
{
  TbqExtents *x = tbq_alloc_aligned (sizeof *x);
  long page = sysconf (_SC_PAGESIZE);
  uint64_t room = 2 * (uint64_t) cfg->block_size;

  if (x == NULL)
    return NULL;
  x->sink = sink;
  x->page = page > 0 ? (size_t) page : 4096;
  x->block_size = cfg->block_size;
  /* Room for the copier's current sink block and one more (pool.h). */
  x->max_bytes = sink->bytes_max > room ? sink->bytes_max - room : 0;
  if (x->max_bytes > EXTENT_BYTES_MAX)
    x->max_bytes = EXTENT_BYTES_MAX;
  x->keep_bytes = (uint64_t) cfg->max_idle_blocks * cfg->block_size;
  if (x->keep_bytes < sink->bytes_max / 4)
    x->keep_bytes = sink->bytes_max / 4;
  atomic_init (&x->refs, 1);
  pthread_mutex_init (&x->lock, NULL);
  tbq_pool_ref (sink);
  return x;
}

/* Give an extent's memory back to the system. */
static void
extent_free (TbqExtents * x, TbqBlock * e)
{
  if (e->mapped)
    munmap (e, extent_size (e));
  else
    free (e);
  atomic_fetch_add_explicit (&x->releases, 1, memory_order_relaxed);
  /* Memory came back: extents may be tried again. */
  tbq_pool_budget_lift (x->sink);
  extents_unref (x);
}

/* Bytes of extents in use: the budget less the sink blocks in use (a
 * snapshot of relaxed counters: a statistic). */
static uint64_t
bytes_in_use (TbqExtents * x)
{
  TbqPool *sink = x->sink;
  uint64_t used = atomic_load_explicit (&sink->bytes_used,
      memory_order_relaxed);
  uint64_t total = atomic_load_explicit (&sink->total, memory_order_relaxed);
  uint64_t idle = atomic_load_explicit (&sink->idle, memory_order_relaxed);
  uint64_t blocks = (idle < total ? total - idle : 0) * x->block_size;

  return used > blocks ? used - blocks : 0;
}

static void
extent_alloc_failed (TbqExtents * x, uint64_t bytes, int err)
{
  atomic_store_explicit (&x->fail_errno, err, memory_order_relaxed);
  atomic_store_explicit (&x->fail_bytes, bytes, memory_order_relaxed);
  atomic_store_explicit (&x->fail_held, bytes_in_use (x), memory_order_relaxed);
  /* Release: tbq_extents_take_error() that sees the count sees the
   * details. */
  atomic_fetch_add_explicit (&x->failures, 1, memory_order_release);
  tbq_pool_budget_failed (x->sink, x->block_size);
}

/* `bytes` (a page multiple) of fresh memory, faulted in: the writer
 * fills every byte at once, and faulting a range in one call costs about
 * half of faulting it page by page.  (Huge pages would cost less again on
 * median, but can stall the writer's thread for milliseconds while the
 * kernel compacts memory for them: docs/extents.md.)  NULL (errno set)
 * on failure. */
static void *
extent_map (size_t bytes)
{
  void *p = mmap (NULL, bytes, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

  return p == MAP_FAILED ? NULL : p;
}

/* A new extent of `bytes` (charged already), or NULL with errno set. */
static TbqBlock *
extent_alloc (TbqExtents * x, uint64_t bytes)
{
  TbqBlock *e;
  uint32_t mapped = bytes >= x->page;

  if (mapped) {
    e = extent_map ((size_t) bytes);
  } else {
    e = aligned_alloc (TBQ_CACHELINE, bytes);
  }
  if (e == NULL)
    return NULL;
  atomic_init (&e->published, 0);
  atomic_init (&e->next, NULL);
  atomic_init (&e->unbudgeted, 0);
  e->free_next = NULL;
  e->pool = x->sink;
  e->extents = x;
  e->capacity = (uint32_t) (bytes - TBQ_BLOCK_HEADER_SIZE);
  e->mapped = mapped;
  extents_ref (x);
  atomic_fetch_add_explicit (&x->allocations, 1, memory_order_relaxed);
  return e;
}

/* Under the lock: add to a counter that only lock holders write
 * (relaxed: read anywhere as a statistic or a hint). */
static inline void
count_locked (_Atomic uint64_t * c, uint64_t n)
{
  atomic_store_explicit (c, atomic_load_explicit (c, memory_order_relaxed)
      + n, memory_order_relaxed);
}

/* Under the lock: unlink the extent at *link from the idle cache. */
static TbqBlock *
cache_unlink (TbqExtents * x, TbqBlock ** link)
{
  TbqBlock *e = *link;

  *link = e->free_next;
  e->free_next = NULL;
  count_locked (&x->idle_count, (uint64_t) - 1);
  count_locked (&x->idle_bytes, -extent_size (e));
  count_locked (&x->cache_hits, 1);
  return e;
}

/* What a writer's charge for an extent leaves free without a spill's
 * hold: a sink block, and a spill's read-back room (pool.h). */
static inline uint64_t
extents_keep_unheld (TbqExtents * x)
{
  return x->block_size + tbq_pool_readback_room (x->sink);
}

/* What a writer's charge for an extent leaves free: a sink block, and a
 * spill's hold or its read-back room, whichever is more (extent.h).
 * Relaxed: the budget publishes nothing (pool.h). */
static inline uint64_t
extents_keep (TbqExtents * x)
{
  uint64_t hold = atomic_load_explicit (&x->hold, memory_order_relaxed);
  uint64_t room = tbq_pool_readback_room (x->sink);

  return x->block_size + (hold > room ? hold : room);
}

/* Whether only the spill's hold keeps `bytes` out now: what is left free
 * without it would take them. */
static bool
extents_hold_refuses (TbqExtents * x, uint64_t bytes)
{
  return !tbq_pool_has_room (x->sink, bytes, extents_keep (x))
      && tbq_pool_has_room (x->sink, bytes, extents_keep_unheld (x));
}

/* An extent of `bytes` was refused: if only the spill's hold refused it,
 * say so and wake the copier, which starts a run (spill.h). */
static void
extents_note_gated (TbqExtents * x, uint64_t bytes)
{
  if (atomic_load_explicit (&x->hold, memory_order_relaxed) == 0
      || atomic_load_explicit (&x->gated, memory_order_relaxed)
      || !extents_hold_refuses (x, bytes))
    return;
  atomic_store_explicit (&x->gated, 1, memory_order_relaxed);
  tbq_event_notify (&x->sink->owner_ev);
}

/* The hottest idle extent of exactly `bytes` (charged already), else the
 * hottest up to an eighth larger whose extra bytes the budget takes,
 * leaving `keep` free. */
static TbqBlock *
cache_take (TbqExtents * x, uint64_t bytes, uint64_t keep)
{
  TbqBlock **link, **close = NULL, *e = NULL;
  uint64_t used;

  pthread_mutex_lock (&x->lock);
  for (link = &x->idle; *link != NULL; link = &(*link)->free_next) {
    uint64_t have = extent_size (*link);

    if (have == bytes)
      break;
    if (close == NULL && have > bytes && have - bytes <= bytes / 8)
      close = link;
  }
  if (*link == NULL && close != NULL && tbq_pool_charge (x->sink,
          extent_size (*close) - bytes, keep, &used)) {
    /* The cached extent exists: its memory is in use now. */
    tbq_pool_note_budget_peak (x->sink, used);
    link = close;
  }
  if (*link != NULL)
    e = cache_unlink (x, link);
  pthread_mutex_unlock (&x->lock);
  return e;
}

/* A new highest use (relaxed: a statistic). */
static void
note_peak (TbqExtents * x)
{
  uint64_t now = bytes_in_use (x);
  uint64_t peak = atomic_load_explicit (&x->bytes_peak, memory_order_relaxed);

  while (now > peak && !atomic_compare_exchange_weak_explicit
      (&x->bytes_peak, &peak, now, memory_order_relaxed,
          memory_order_relaxed)) {
  }
}

/* In a capped copy group: whether an extent of `bytes` can ever fit the
 * member's share, next to the copier's sink block and one more and a
 * spill's read-back room (else a writer would wait for room that never
 * comes: too large, as beyond the own budget).  The share is of the
 * members now. */
static inline bool
extents_fit_share (TbqExtents * x, uint64_t bytes)
{
  uint64_t most, room;

  if (x->sink->share == NULL)
    return true;
  most = tbq_share_member_max (x->sink->share, x->sink->share_floor);
  /* Relaxed: as tbq_pool_readback_room(). */
  room = atomic_load_explicit (&x->sink->readback, memory_order_relaxed)
      ? most / 8 : 0;
  return most >= 2 * (uint64_t) x->block_size + room
      && bytes <= most - 2 * (uint64_t) x->block_size - room;
}

/* An extent for `payload` bytes charged leaving `keep` free; `share`:
 * too large for the member's share is TBQ_TOO_LARGE; `from_file`: what
 * the extent says of itself (TbqBlock.from_file). */
static TbqStatus
extent_take (TbqExtents * x, uint64_t payload, uint64_t keep, bool share,
    uint32_t from_file, TbqBlock ** out)
{
  uint64_t bytes = extent_bytes (x, payload);
  uint64_t used;
  TbqBlock *e;

  if (bytes > x->max_bytes || (share && !extents_fit_share (x, bytes)))
    return TBQ_TOO_LARGE;
  if (!tbq_pool_charge (x->sink, bytes, keep, &used)) {
    /* A writer's leaves room for one more sink block (pool.h), and what a
     * spill holds back or reads back into. */
    if (from_file == TBQ_FROM_FILE_NO)
      extents_note_gated (x, bytes);
    return TBQ_NO_SPACE;
  }
  e = cache_take (x, bytes, keep);
  if (e == NULL) {
    errno = 0;
    e = extent_alloc (x, bytes);
    if (e == NULL) {
      int err = errno != 0 ? errno : ENOMEM;

      /* Uncharged first: the budget then holds what is in use. */
      tbq_pool_uncharge (x->sink, bytes);
      extent_alloc_failed (x, bytes, err);
      return TBQ_NO_MEMORY;
    }
  }
  tbq_pool_note_budget_peak (x->sink, used);
  note_peak (x);
  /* Relaxed, as `refs`: the extent reaches others through the chain
   * protocol (a writer's) or the spill's lock (a unit's). */
  e->from_file = from_file;
  atomic_store_explicit (&e->unbudgeted, 0, memory_order_relaxed);
  atomic_store_explicit (&e->refs, 1, memory_order_relaxed);
  *out = e;
  return TBQ_OK;
}

TbqStatus
tbq_extent_take (TbqExtents * x, uint64_t payload, TbqBlock ** out)
{
  return extent_take (x, payload, extents_keep (x), true, TBQ_FROM_FILE_NO,
      out);
}

TbqStatus
tbq_extent_take_back (TbqExtents * x, uint64_t payload, uint64_t keep,
    uint32_t from_file, TbqBlock ** out)
{
  return extent_take (x, payload, keep, false, from_file, out);
}

uint64_t
tbq_extents_bytes (const TbqExtents * x, uint64_t payload)
{
  return extent_bytes (x, payload);
}

void
tbq_extents_leave_readback_room (TbqExtents * x)
{
  uint64_t max = x->sink->bytes_max, room = max / 8;
  uint64_t most = max > 2 * x->block_size + room
      ? max - 2 * x->block_size - room : 0;

  /* Relaxed: before the copier runs and anything is written; whoever
   * takes a block or an extent later was started after this. */
  atomic_store_explicit (&x->sink->readback, 1, memory_order_relaxed);
  if (x->max_bytes > most)
    x->max_bytes = most;
}

bool
tbq_extents_held_back (TbqExtents * x, uint64_t payload)
{
  return atomic_load_explicit (&x->hold, memory_order_relaxed) != 0
      && extents_hold_refuses (x, extent_bytes (x, payload));
}

void
tbq_extents_hold (TbqExtents * x, uint64_t bytes)
{
  /* Relaxed: the budget publishes nothing (pool.h); a release of the
   * hold is followed by the notify of the event writers wait on. */
  atomic_store_explicit (&x->hold, bytes, memory_order_relaxed);
  atomic_store_explicit (&x->gated, 0, memory_order_relaxed);
  if (bytes == 0)
    tbq_event_notify (&x->sink->ev);
}

bool
tbq_extent_suits (const TbqExtents * x, const TbqBlock * e, uint64_t payload)
{
  uint64_t bytes = extent_bytes (x, payload), have = extent_size (e);

  return have >= bytes && have - bytes <= bytes / 8;
}

bool
tbq_extents_have_room (TbqExtents * x, uint64_t payload)
{
  return tbq_pool_has_room (x->sink, extent_bytes (x, payload),
      extents_keep (x));
}

uint32_t
tbq_extents_max_payload (const TbqExtents * x)
{
  uint64_t n = x->max_bytes;

  /* The largest extent size not above max_bytes, less its header. */
  n = n >= x->page ? n & ~(uint64_t) (x->page - 1)
      : n & ~(uint64_t) (TBQ_CACHELINE - 1);
  if (n <= TBQ_BLOCK_HEADER_SIZE)
    return 0;
  n -= TBQ_BLOCK_HEADER_SIZE;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t) n;
}

bool
tbq_extents_can_hold (const TbqExtents * x, uint64_t payload)
{
  return extent_bytes (x, payload) <= x->max_bytes;
}

void
tbq_extent_unref (TbqBlock * e)
{
  TbqExtents *x = e->extents;
  uint64_t bytes = extent_size (e);
  bool charged;

  /* Acq_rel: every read of the extent's bytes happens before its reuse
   * or its free, and whoever took it out of the budget (holding a
   * reference) did so before. */
  if (atomic_fetch_sub_explicit (&e->refs, 1, memory_order_acq_rel) != 1)
    return;
  charged = !atomic_load_explicit (&e->unbudgeted, memory_order_relaxed);
  pthread_mutex_lock (&x->lock);
  if (x->orphaned) {
    pthread_mutex_unlock (&x->lock);
    /* The extent's own reference keeps `x` and the sink pool alive until
     * extent_free() drops it. */
    if (charged)
      tbq_pool_uncharge (x->sink, bytes);
    extent_free (x, e);
    return;
  }
  e->free_next = x->idle;
  x->idle = e;
  count_locked (&x->idle_count, 1);
  count_locked (&x->idle_bytes, bytes);
  /* Under the lock, which keeps the queue (and so `x` and the sink pool)
   * from going away: the orphaning queue takes it too.  The wakes are
   * system calls only when somebody waits. */
  if (charged)
    tbq_pool_uncharge (x->sink, bytes);
  /* Above what the cache keeps: the copier trims, as for sink blocks. */
  if (tbq_extents_trim_due (x))
    tbq_event_notify (&x->sink->owner_ev);
  pthread_mutex_unlock (&x->lock);
}

/* Under the lock: cut the idle list after what the cache keeps (the
 * hottest TBQ_EXTENTS_KEEP within keep_bytes); returns the cold rest. */
static TbqBlock *
cache_cut (TbqExtents * x)
{
  TbqBlock **link, *cut;
  uint64_t n = 0, bytes = 0;

  for (link = &x->idle; *link != NULL; link = &(*link)->free_next) {
    if (n == TBQ_EXTENTS_KEEP || bytes + extent_size (*link) > x->keep_bytes)
      break;
    n++;
    bytes += extent_size (*link);
  }
  cut = *link;
  *link = NULL;
  /* Relaxed: as in count_locked(). */
  atomic_store_explicit (&x->idle_count, n, memory_order_relaxed);
  atomic_store_explicit (&x->idle_bytes, bytes, memory_order_relaxed);
  return cut;
}

/* Free a list of extents linked by free_next. */
static size_t
free_list (TbqExtents * x, TbqBlock * e)
{
  size_t n = 0;

  while (e != NULL) {
    TbqBlock *next = e->free_next;

    extent_free (x, e);
    n++;
    e = next;
  }
  return n;
}

size_t
tbq_extents_trim (TbqExtents * x)
{
  TbqBlock *cut;

  pthread_mutex_lock (&x->lock);
  cut = cache_cut (x);
  pthread_mutex_unlock (&x->lock);
  return free_list (x, cut);
}

void
tbq_extents_orphan (TbqExtents * x)
{
  TbqBlock *idle;

  pthread_mutex_lock (&x->lock);
  x->orphaned = true;
  idle = x->idle;
  x->idle = NULL;
  atomic_store_explicit (&x->idle_count, 0, memory_order_relaxed);
  atomic_store_explicit (&x->idle_bytes, 0, memory_order_relaxed);
  pthread_mutex_unlock (&x->lock);
  free_list (x, idle);
  extents_unref (x);
}

void
tbq_extents_stats (TbqExtents * x, TbqExtentStats * st)
{
  uint64_t alive;

  st->idle = atomic_load_explicit (&x->idle_count, memory_order_relaxed);
  st->allocations = atomic_load_explicit (&x->allocations,
      memory_order_relaxed);
  st->releases = atomic_load_explicit (&x->releases, memory_order_relaxed);
  /* Relaxed snapshots, made consistent enough. */
  alive = st->allocations > st->releases ? st->allocations - st->releases : 0;
  st->in_use = alive > st->idle ? alive - st->idle : 0;
  st->bytes_in_use = bytes_in_use (x);
  st->bytes_peak = atomic_load_explicit (&x->bytes_peak, memory_order_relaxed);
  st->bytes_idle = atomic_load_explicit (&x->idle_bytes, memory_order_relaxed);
  st->cache_hits = atomic_load_explicit (&x->cache_hits, memory_order_relaxed);
  st->alloc_failures = atomic_load_explicit (&x->failures,
      memory_order_relaxed);
  st->budget_used = atomic_load_explicit (&x->sink->bytes_used,
      memory_order_relaxed);
  st->budget_limit = atomic_load_explicit (&x->sink->bytes_limit,
      memory_order_relaxed);
  st->budget_peak = atomic_load_explicit (&x->sink->bytes_peak,
      memory_order_relaxed);
  /* Relaxed snapshots: the peak is never shown below the use beside it. */
  if (st->budget_peak < st->budget_used)
    st->budget_peak = st->budget_used;
}

TbqStatus
tbq_extents_take_error (TbqExtents * x, char *msg, size_t msg_size)
{
  /* Acquire: pairs with extent_alloc_failed(): the details are its. */
  uint64_t failures = atomic_load_explicit (&x->failures,
      memory_order_acquire);
  uint64_t taken = atomic_load_explicit (&x->failures_taken,
      memory_order_relaxed);

  /* Relaxed CAS: only decides which caller reports this failure. */
  if (failures == taken || !atomic_compare_exchange_strong_explicit
      (&x->failures_taken, &taken, failures, memory_order_relaxed,
          memory_order_relaxed))
    return TBQ_OK;
  if (msg != NULL && msg_size > 0)
    snprintf (msg, msg_size, "sink pool: cannot allocate an extent of %"
        PRIu64 " bytes for a large record (extents in use hold %" PRIu64
        " bytes, the budget is %" PRIu64 " bytes): %s; it takes no more "
        "extents until memory comes back",
        atomic_load_explicit (&x->fail_bytes, memory_order_relaxed),
        atomic_load_explicit (&x->fail_held, memory_order_relaxed),
        x->sink->bytes_max,
        strerror (atomic_load_explicit (&x->fail_errno, memory_order_relaxed)));
  return TBQ_NO_MEMORY;
}

uint64_t
tbq_records_release (const unsigned char *data, uint32_t from, uint32_t to,
    TbqReleaseFunc release, void *user_data)
{
  uint64_t n = 0;

  while (from < to) {
    const TbqRecordHeader *h = tbq_record_at (data + from);

    if (tbq_record_is_indirect (h)) {
      TbqIndirect ind = tbq_record_indirect (h);

      if (release)
        release (h->type, ind.extent->data, (uint32_t) ind.size, user_data);
      tbq_extent_unref (ind.extent);
    } else if (release) {
      release (h->type, data + from + TBQ_RECORD_HEADER_SIZE, h->size,
          user_data);
    }
    from += (uint32_t) TBQ_RECORD_SPAN (h->size);
    n++;
  }
  return n;
}

int
tbq_block_from_file (const TbqBlock * b)
{
  /* Set before the block reached the caller (extent_take()). */
  return b != NULL && b->extents != NULL
      && b->from_file != TBQ_FROM_FILE_NO;
}

int
tbq_block_leave_budget (TbqBlock * b)
{
  if (b == NULL || b->extents == NULL
      || b->from_file != TBQ_FROM_FILE_PAYLOAD)
    return 0;
  /* Relaxed: once only, whoever asks first; the caller's reference,
   * dropped later (acq_rel), orders it before the last unref's look at
   * it.  The extent keeps its TbqExtents, and so the sink pool, alive. */
  if (!atomic_exchange_explicit (&b->unbudgeted, 1, memory_order_relaxed))
    tbq_pool_uncharge (b->extents->sink, extent_size (b));
  return 1;
}

void
tbq_block_ref (TbqBlock * b)
{
  if (b == NULL)
    return;
  /* Relaxed: the caller holds a reference already. */
  atomic_fetch_add_explicit (&b->refs, 1, memory_order_relaxed);
}

void
tbq_block_unref (TbqBlock * b)
{
  if (b == NULL)
    return;
  /* `extents` never changes while a reference is held. */
  if (b->extents != NULL) {
    tbq_extent_unref (b);
  } else if (TBQ_UNLIKELY (tbq_block_is_marker (b))) {
    /* Acq_rel: as for any block.  A marker is the reader's alone. */
    if (atomic_fetch_sub_explicit (&b->refs, 1, memory_order_acq_rel) == 1)
      free (b);
  } else {
    tbq_pool_block_unref (b);
  }
}

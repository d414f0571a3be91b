/* The spill: the sink layer's continuation in a file (spill.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The spill thread's loop, under `lock`: end the run when the reader
 * waits at its marker and has every unit written; read a unit ahead when
 * the reader will want it (up to SPILL_AHEAD_UNITS / _BYTES ahead, and
 * first when the reader waits); write a unit when the spill chain has
 * published records.  I/O runs with the lock released and `io_busy` set;
 * a discard sets `paused` and waits for `io_busy` to clear.  With nothing
 * to do it sleeps on `cond`, or, when the unit the reader waits for found
 * no room in the budget (`room_wait`), on the extents' event until it
 * fits (spill.h, "The budget").
 *
 * Invariants (lock held, between the loop's steps):
 *  - every charge of the spill's fits the budget: a unit read back takes
 *    its extents all or none (spill_read_payloads());
 *  - a unit written needs, read back, at most the read-back room it had
 *    when written (spill_pick());
 *  - `room_wait` stands for the unit at `read_seq` (below `write_seq`, so
 *    the run cannot end meanwhile); spill_decide() drops it once the
 *    reader no longer waits at the marker (`reader_at` NULL) or the unit
 *    fits, a discard drops it with the units;
 *  - `room_sleeping` only while the thread sleeps on the extents' event,
 *    which every spill_ring() then wakes.
 */
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef TBQ_HAVE_XXH_DISPATCH
/* XXH3_64bits_update() becomes the dispatching one (lib/meson.build). */
#include <xxh_x86dispatch.h>
#endif

#define SPILL_MAGIC 0x53514254u /* "TBQS" */
#define SPILL_VERSION 1u
/* A unit holds records up to this many bytes (one record may be larger). */
#define SPILL_UNIT_BYTES ((uint64_t) 1 << 20)
/* Large records per unit at most (two iovecs each). */
#define SPILL_UNIT_LARGE 256u
/* Read ahead of the reader at most this much. */
#define SPILL_AHEAD_UNITS 4u
#define SPILL_AHEAD_BYTES ((uint64_t) 4 << 20)
/* After a failed write, try again after this long (or on a reader's take). */
#define SPILL_RETRY_NS ((int64_t) 100000000)
/* Give consumed file space back in steps of this much, when the spill
 * thread has nothing else to do, or at once when this much more is
 * consumed and not given back yet: punching frees the file's page cache,
 * which costs about as much as reading it did, so it is done while the
 * thread would otherwise wait (a fifth of the read-back time, measured:
 * docs/benchmarks.md), and the file holds at most the lag beyond what is
 * unread. */
#define SPILL_PUNCH_STEP ((uint64_t) 4 << 20)
#define SPILL_PUNCH_LAG ((uint64_t) 32 << 20)
/* A run starts when the budget is this many quarters used. */
#define SPILL_MARK_QUARTERS 3u

/* A unit's header on disk (64 bytes, host byte order: the file never
 * outlives the process that wrote it). */
typedef struct
{
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint64_t seq;                 /* units written before this one */
  uint32_t records_len;         /* bytes of the records, as in the block */
  uint32_t n_records;
  uint64_t payload_len;         /* bytes of large payloads, each 8-aligned */
  uint64_t unit_len;            /* header + records + payloads */
  uint64_t checksum;            /* XXH3-64 of the unit, this field 0 */
  unsigned char pad[16];
} SpillUnitHeader;

_Static_assert (sizeof (SpillUnitHeader) == 64, "unit header size");

/* What a pinned record owns, kept in memory in file order. */
struct TbqPinned
{
  TbqPinned *next;
  uint16_t type;
  uint32_t size;
  unsigned char bytes[];
};

/* A marker's own fields, in its data[]. */
typedef struct
{
  uint64_t end_seq;             /* units of runs up to this one; under lock */
  uint32_t resume_off;          /* where the reader goes on in `next` */
} SpillMark;

struct TbqSpill
{
  TbqSpillConfig cfg;
  char *path;
  int fd;
  TbqPool *sink;
  TbqExtents *extents;
  TbqWake *wake;
  uint64_t hold;                /* what extents leave free outside a run */
  uint64_t ahead_max;           /* bytes read ahead at most (one unit at least) */

  /* Read without the lock (spill.h, "Locking"). */
  _Atomic int run_active;
  _Atomic int64_t retry_at;     /* a failed write: no new run before (ns) */

  pthread_mutex_t lock;
  pthread_cond_t cond;          /* the spill thread's doorbell */
  pthread_cond_t idle;          /* io_busy cleared */
  pthread_t thread;
  bool thread_started;
  bool stop;
  _Atomic int sleeping;         /* the spill thread waits on `cond` */
  bool paused;                  /* a discard runs */
  bool io_busy;

  /* The run (under lock). */
  TbqBlock *marker;             /* the active run's marker */
  TbqBlock *pos_blk;            /* the spill chain: the next bytes to write */
  uint32_t pos_off;
  TbqBlock *reader_at;          /* the marker the reader waits at, or NULL */

  /* The file (under lock; offsets in bytes). */
  uint64_t write_seq, read_seq, take_seq;
  uint64_t write_off, read_off, punched_off;
  TbqPinned *pinned_head, **pinned_tail;
  TbqBlock *ready_head, **ready_tail;   /* units read ahead, by free_next */
  uint32_t ready_units;
  uint64_t ready_bytes;
  /* The length of each unit read ahead (at most SPILL_AHEAD_UNITS), by
   * its sequence number: what its take gives back to ready_bytes. */
  uint64_t ready_len[SPILL_AHEAD_UNITS];
  bool write_failing, full, read_failed, read_error_taken;
  bool read_parked;             /* read-ahead waits for the reader */
  /* The unit the reader waits for did not fit the budget: the next read
   * waits until `room_need` bytes fit (the unit's extents), on the
   * extents' event (tbq_extents_event()), which every uncharge rings;
   * `room_sleeping` says the thread sleeps there, and whoever rings the
   * thread (spill_ring()) then sets `bell` (relaxed: the event's wake
   * orders it) and wakes that event too. */
  bool room_wait, room_sleeping;
  uint64_t room_need;
  _Atomic int bell;
  char read_error[320];

  /* Runs begun and ended, and how far the spill thread told them
   * (TbqSpillConfig.on_run); under lock. */
  uint64_t runs_begun, runs_ended, told_begun, told_ended;
  TbqSpillRun begun, ended;
  uint64_t run_written_from;    /* bytes_written when the run began */

  /* Statistics (relaxed; written under the lock). */
  _Atomic uint64_t bytes_written, bytes_read, units_written, units_read;
  _Atomic uint64_t records_on_disk, runs, write_errors, read_errors;
  _Atomic uint64_t checksum_errors, level;
};

/* ---- file and set-up ---------------------------------------------------- */

TbqSpill *
tbq_spill_new (const TbqSpillConfig * cfg, TbqPool * sink,
    TbqExtents * extents, TbqWake * wake, TbqStatus * st, char *msg,
    size_t msg_size)
{
  TbqSpill *s = tbq_alloc_aligned (sizeof *s);
  size_t len;

  *st = TBQ_NO_MEMORY;
  if (s == NULL)
    goto no_memory;
  len = strlen (cfg->temp_template);
  s->path = malloc (len + 1);
  if (s->path == NULL) {
    free (s);
    goto no_memory;
  }
  memcpy (s->path, cfg->temp_template, len + 1);
  s->cfg = *cfg;
  s->cfg.temp_template = s->path;
  s->fd = mkostemp (s->path, O_CLOEXEC);
  if (s->fd < 0) {
    int err = errno;

    if (msg != NULL && msg_size > 0)
      snprintf (msg, msg_size, "cannot create the spill file from the "
          "template %s: %s", cfg->temp_template, strerror (err));
    free (s->path);
    free (s);
    *st = TBQ_IO_ERROR;
    return NULL;
  }
  if (cfg->remove)
    unlink (s->path);
  s->sink = sink;
  s->extents = extents;
  s->wake = wake;
  s->pinned_tail = &s->pinned_head;
  s->ready_tail = &s->ready_head;
  s->hold = sink->bytes_max / 4;
  s->ahead_max = sink->bytes_max / 8;
  if (s->ahead_max > SPILL_AHEAD_BYTES)
    s->ahead_max = SPILL_AHEAD_BYTES;
  /* Units come back into the budget: the copier and the writers leave
   * them the read-back room (pool.h). */
  tbq_extents_leave_readback_room (extents);
  tbq_extents_hold (extents, s->hold);
  pthread_mutex_init (&s->lock, NULL);
  tbq_cond_init_monotonic (&s->cond);
  pthread_cond_init (&s->idle, NULL);
  return s;

no_memory:
  if (msg != NULL && msg_size > 0)
    snprintf (msg, msg_size, "cannot allocate the spill");
  return NULL;
}

const char *
tbq_spill_path (const TbqSpill * s)
{
  return s == NULL ? NULL : s->path;
}

/* Lock held: tell the spill thread to look again, wherever it sleeps (on
 * `cond`, or for room on the extents' event). */
static void
spill_ring (TbqSpill * s)
{
  pthread_cond_signal (&s->cond);
  if (s->room_sleeping) {
    /* Relaxed: the wake below bumps the event's sequence with release,
     * and the sleeper's acquire of it sees the bell (event.h). */
    atomic_store_explicit (&s->bell, 1, memory_order_relaxed);
    tbq_event_wake (tbq_extents_event (s->extents));
  }
}

/* ---- the copier's side -------------------------------------------------- */

bool
tbq_spill_wants_run (TbqSpill * s)
{
  uint64_t limit, used;

  /* Acquire: pairs with the spill thread's release when it ends a run, so
   * the copier that starts the next one sees that run's state settled
   * (it takes the lock to start it anyway). */
  if (atomic_load_explicit (&s->run_active, memory_order_acquire))
    return false;
  /* Relaxed: the budget counts memory (pool.h).  In a capped copy group
   * the mark is of the member's share, when that is less. */
  limit = tbq_pool_budget_limit (s->sink);
  used = atomic_load_explicit (&s->sink->bytes_used, memory_order_relaxed);
  if (used + s->sink->cfg.block_size <= limit / 4 * SPILL_MARK_QUARTERS
      && !atomic_load_explicit (&s->extents->gated, memory_order_relaxed))
    return false;
  return atomic_load_explicit (&s->retry_at, memory_order_relaxed)
      <= tbq_now_ns ();
}

TbqBlock *
tbq_spill_begin_run (TbqSpill * s, TbqBlock * first)
{
  TbqBlock *m = tbq_alloc_aligned (TBQ_BLOCK_HEADER_SIZE + sizeof (SpillMark));
  SpillMark *mk;

  if (m == NULL) {
    atomic_store_explicit (&s->retry_at, tbq_now_ns () + SPILL_RETRY_NS,
        memory_order_relaxed);
    return NULL;
  }
  /* A marker: no pool, no extents; one reference, the reader's.  Relaxed:
   * it is published by the copier's release store of the link to it. */
  atomic_store_explicit (&m->refs, 1, memory_order_relaxed);
  atomic_store_explicit (&m->published, 0, memory_order_relaxed);
  atomic_store_explicit (&m->next, NULL, memory_order_relaxed);
  m->capacity = (uint32_t) sizeof (SpillMark);
  mk = (SpillMark *) (void *) m->data;
  mk->end_seq = UINT64_MAX;
  mk->resume_off = 0;
  pthread_mutex_lock (&s->lock);
  s->marker = m;
  s->pos_blk = first;
  s->pos_off = 0;
  /* For the spill thread to tell (spill_tell()).  Relaxed: statistics. */
  s->runs_begun++;
  s->begun.active = 1;
  s->begun.reason = atomic_load_explicit (&s->extents->gated,
      memory_order_relaxed) ? TBQ_SPILL_EXTENT : TBQ_SPILL_BUDGET;
  s->begun.budget_used = atomic_load_explicit (&s->sink->bytes_used,
      memory_order_relaxed);
  s->begun.budget_limit = atomic_load_explicit (&s->sink->bytes_limit,
      memory_order_relaxed);
  s->begun.bytes_written = 0;
  s->run_written_from = atomic_load_explicit (&s->bytes_written,
      memory_order_relaxed);
  /* Relaxed: read by the copier only, which sets it. */
  atomic_store_explicit (&s->run_active, 1, memory_order_relaxed);
  tbq_count (&s->runs, 1);
  spill_ring (s);
  pthread_mutex_unlock (&s->lock);
  /* What comes now goes to the file: extents may use the whole budget. */
  tbq_extents_hold (s->extents, 0);
  return m;
}

void
tbq_spill_notify (TbqSpill * s)
{
  /* Relaxed load after a seq_cst fence: the copier's `published` store
   * before the look at the flag, Dekker with the spill thread, which sets
   * `sleeping` under the lock, fences and re-checks before it waits. */
  if (!atomic_load_explicit (&s->run_active, memory_order_relaxed))
    return;
  atomic_thread_fence (memory_order_seq_cst);
  if (!atomic_load_explicit (&s->sleeping, memory_order_relaxed))
    return;
  pthread_mutex_lock (&s->lock);
  spill_ring (s);
  pthread_mutex_unlock (&s->lock);
}

/* ---- writing ------------------------------------------------------------ */

static void
spill_free_pinned (TbqPinned * p)
{
  while (p != NULL) {
    TbqPinned *n = p->next;

    free (p);
    p = n;
  }
}

/* A record's payload (in the block, or in its extent). */
static const unsigned char *
record_payload (const TbqRecordHeader * h, uint64_t * size)
{
  if (tbq_record_is_indirect (h)) {
    TbqIndirect ind = tbq_record_indirect (h);

    *size = ind.size;
    return ind.extent->data;
  }
  *size = h->size;
  return (const unsigned char *) h + TBQ_RECORD_HEADER_SIZE;
}

/* What record `h` owns, copied (NULL: nothing, or no memory: *ok false). */
static TbqPinned *
spill_pin (TbqSpill * s, const TbqRecordHeader * h, bool *ok)
{
  uint64_t size;
  const unsigned char *data = record_payload (h, &size);
  uint32_t n;
  TbqPinned *p;

  if (s->cfg.owned == NULL)
    return NULL;
  n = s->cfg.owned (h->type, data, (uint32_t) size, s->cfg.owned_data);
  if (n == 0)
    return NULL;
  if (n > size)
    n = (uint32_t) size;
  p = malloc (sizeof *p + n);
  if (p == NULL) {
    *ok = false;
    return NULL;
  }
  p->next = NULL;
  p->type = h->type;
  p->size = n;
  memcpy (p->bytes, data, n);
  return p;
}

/* Write every byte of `iov` at `off`: 0, or the errno. */
static int
write_all (int fd, struct iovec *iov, int n, uint64_t off)
{
  while (n > 0) {
    ssize_t w = pwritev (fd, iov, n, (off_t) off);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (w == 0)
      return EIO;
    off += (uint64_t) w;
    while (n > 0 && (size_t) w >= iov->iov_len) {
      w -= (ssize_t) iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *) iov->iov_base + w;
      iov->iov_len -= (size_t) w;
    }
  }
  return 0;
}

static const unsigned char spill_zeros[8];

/* Report a change of the write state, outside the lock. */
static void
spill_report (TbqSpill * s, int failed, const char *msg)
{
  if (s->cfg.on_error != NULL)
    s->cfg.on_error (failed, msg, s->cfg.error_data);
}

/* The records of the next unit. */
typedef struct
{
  uint32_t to;                  /* past the last record taken */
  uint32_t n_records;
  uint64_t payload;             /* large payloads, each 8-aligned */
  int n_iov;                    /* iovecs used, the two of the header and
                                 * the records included */
} SpillPick;

/* The file's room for one more unit's records and payloads (lock held):
 * what keeps the unread bytes (write_off - read_off, the level) within
 * max_bytes, the unit's header counted.  UINT64_MAX: no limit. */
static uint64_t
spill_room (const TbqSpill * s)
{
  uint64_t level = s->write_off - s->read_off;

  if (s->cfg.max_bytes == 0)
    return UINT64_MAX;
  if (level + sizeof (SpillUnitHeader) >= s->cfg.max_bytes)
    return 0;
  return s->cfg.max_bytes - level - sizeof (SpillUnitHeader);
}

/* Which records of `blk` from `from` up to `pub` go in the next unit: up
 * to SPILL_UNIT_BYTES (one record may be larger), never more than `room`
 * bytes (records and padded payloads) in the file, and never more than
 * `mem_max` bytes of the budget once read back (the extent of the records
 * and one per large record, as tbq_extents_bytes() counts them).  Their
 * payloads' iovecs from iov[2] on.  None (pk->n_records 0) when the first
 * does not fit. */
static void
spill_pick (const TbqExtents * x, TbqBlock * blk, uint32_t from,
    uint32_t pub, uint64_t room, uint64_t mem_max, struct iovec *iov,
    SpillPick * pk)
{
  uint64_t bytes = 0, mem_large = 0;
  uint32_t n_large = 0;

  pk->to = from;
  pk->n_records = 0;
  pk->payload = 0;
  pk->n_iov = 2;
  while (pk->to < pub) {
    const TbqRecordHeader *h = tbq_record_at (blk->data + pk->to);
    uint64_t span = TBQ_RECORD_SPAN (h->size), size = 0, padded;

    if (tbq_record_is_indirect (h)) {
      if (n_large == SPILL_UNIT_LARGE)
        break;
      size = tbq_record_indirect (h).size;
    }
    padded = (size + 7) & ~(uint64_t) 7;
    if (pk->n_records > 0 && bytes + span + size > SPILL_UNIT_BYTES)
      break;
    if ((pk->to - from) + span + pk->payload + padded > room)
      break;
    /* The budget it takes read back: every extent of the unit at once
     * (the read takes the records' first, a large payload's then). */
    if (tbq_extents_bytes (x, (pk->to - from) + span) + mem_large
        + (size > 0 ? tbq_extents_bytes (x, size) : 0) > mem_max)
      break;
    bytes += span + size;
    pk->to += (uint32_t) span;
    pk->n_records++;
    if (size > 0) {
      const unsigned char *p = record_payload (h, &size);

      iov[pk->n_iov].iov_base = (void *) p;
      iov[pk->n_iov++].iov_len = size;
      if (padded != size) {
        iov[pk->n_iov].iov_base = (void *) spill_zeros;
        iov[pk->n_iov++].iov_len = padded - size;
      }
      pk->payload += padded;
      mem_large += tbq_extents_bytes (x, size);
      n_large++;
    }
  }
}

/* The header of the unit of `pk`'s records, from `from` in the spill
 * chain's block (lock held: the sequence number is the next one's). */
static void
spill_unit_header (const TbqSpill * s, const SpillPick * pk, uint32_t from,
    SpillUnitHeader * hdr)
{
  memset (hdr, 0, sizeof *hdr);
  hdr->magic = SPILL_MAGIC;
  hdr->version = SPILL_VERSION;
  hdr->header_size = sizeof *hdr;
  hdr->seq = s->write_seq;
  hdr->records_len = pk->to - from;
  hdr->n_records = pk->n_records;
  hdr->payload_len = pk->payload;
  hdr->unit_len = sizeof *hdr + hdr->records_len + pk->payload;
}

/* The XXH3-64 of `n` iovecs into hdr->checksum (its own field 0 while
 * summed): 0, or ENOMEM. */
static int
spill_checksum (struct iovec *iov, int n, SpillUnitHeader * hdr)
{
  XXH3_state_t *xs = XXH3_createState ();
  int i;

  if (xs == NULL)
    return ENOMEM;
  XXH3_64bits_reset (xs);
  for (i = 0; i < n; i++)
    XXH3_64bits_update (xs, iov[i].iov_base, iov[i].iov_len);
  hdr->checksum = XXH3_64bits_digest (xs);
  XXH3_freeState (xs);
  return 0;
}

/* What the records of `blk` in [from, to) own, copied in order into a
 * list (*pins; NULL when they own nothing): 0, or ENOMEM (nothing kept). */
static int
spill_pin_records (TbqSpill * s, TbqBlock * blk, uint32_t from, uint32_t to,
    TbqPinned ** pins, TbqPinned *** pin_tail)
{
  bool ok = true;

  *pins = NULL;
  *pin_tail = pins;
  for (uint32_t o = from; o < to && ok;) {
    const TbqRecordHeader *h = tbq_record_at (blk->data + o);
    TbqPinned *p = spill_pin (s, h, &ok);

    if (p != NULL) {
      **pin_tail = p;
      *pin_tail = &p->next;
    }
    o += (uint32_t) TBQ_RECORD_SPAN (h->size);
  }
  if (ok)
    return 0;
  spill_free_pinned (*pins);
  *pins = NULL;
  *pin_tail = pins;
  return ENOMEM;
}

/* The records of `blk` in [from, to) are in the file: the extents of the
 * large ones go (their memory back to the budget). */
static void
spill_drop_written (TbqBlock * blk, uint32_t from, uint32_t to)
{
  for (uint32_t o = from; o < to;) {
    const TbqRecordHeader *h = tbq_record_at (blk->data + o);

    if (tbq_record_is_indirect (h))
      tbq_extent_unref (tbq_record_indirect (h).extent);
    o += (uint32_t) TBQ_RECORD_SPAN (h->size);
  }
}

/* A write failed (lock held): the records stay in the spill chain, and
 * the first failure of a series is reported. */
static void
spill_write_failed (TbqSpill * s, const char *msg)
{
  bool first = !s->write_failing;

  s->write_failing = true;
  tbq_count (&s->write_errors, 1);
  /* Whoever waits because the spill would free room (a writer told so
   * by tbq_spill_absorbs()) looks again: it will not, for now. */
  tbq_wake_sink_published (s->wake);
  atomic_store_explicit (&s->retry_at, tbq_now_ns () + SPILL_RETRY_NS,
      memory_order_relaxed);
  if (first) {
    pthread_mutex_unlock (&s->lock);
    spill_report (s, 1, msg);
    pthread_mutex_lock (&s->lock);
  }
}

/* A unit was written (lock held): the spill chain's position moves past
 * its records (`to`), what they own joins the pinned list, and a failing
 * series ends. */
static void
spill_write_done (TbqSpill * s, const SpillUnitHeader * hdr, uint32_t to,
    TbqPinned * pins, TbqPinned ** pin_tail)
{
  char msg[400];

  *s->pinned_tail = pins;
  if (pins != NULL)
    s->pinned_tail = pin_tail;
  s->pos_off = to;
  s->write_off += hdr->unit_len;
  s->write_seq++;
  tbq_count (&s->bytes_written, hdr->unit_len);
  tbq_count (&s->units_written, 1);
  tbq_count (&s->records_on_disk, hdr->n_records);
  tbq_count (&s->level, hdr->unit_len);
  /* Memory came back: whoever waits for the sink layer to move looks
   * again (a writer told to wait because the spill absorbs, above). */
  tbq_wake_sink_published (s->wake);
  if (s->write_failing) {
    s->write_failing = false;
    atomic_store_explicit (&s->retry_at, 0, memory_order_relaxed);
    snprintf (msg, sizeof msg, "writing to the spill file %s again",
        s->path);
    pthread_mutex_unlock (&s->lock);
    spill_report (s, 0, msg);
    pthread_mutex_lock (&s->lock);
  }
}

/* Write one unit from the spill chain's published records at pos (lock
 * held on entry and exit; released during the I/O). */
static void
spill_write_unit (TbqSpill * s, uint32_t pub)
{
  TbqBlock *blk = s->pos_blk;
  uint32_t from = s->pos_off;
  uint64_t off = s->write_off;
  struct iovec iov[2 + 2 * SPILL_UNIT_LARGE];
  SpillPick pk;
  SpillUnitHeader hdr;
  TbqPinned *pins = NULL, **pin_tail = &pins;
  int err;
  char msg[400];

  spill_pick (s->extents, blk, from, pub, spill_room (s),
      tbq_pool_readback_room (s->sink), iov, &pk);
  if (pk.n_records == 0) {
    /* The next record would take the file past max_bytes: full, until
     * the reader takes units back (or the run ends).  Or it would not fit
     * the read-back room read back (a record larger than any the element
     * copies, or a copy group's share that shrank): it stays in memory,
     * and the reader reads it there once the run ends. */
    s->full = true;
    /* As for a failed write: waiters for room look again. */
    tbq_wake_sink_published (s->wake);
    return;
  }
  spill_unit_header (s, &pk, from, &hdr);
  s->io_busy = true;
  pthread_mutex_unlock (&s->lock);

  iov[0].iov_base = &hdr;
  iov[0].iov_len = sizeof hdr;
  iov[1].iov_base = blk->data + from;
  iov[1].iov_len = hdr.records_len;
  err = spill_checksum (iov, pk.n_iov, &hdr);
  /* What the records own stays in memory too. */
  if (err == 0)
    err = spill_pin_records (s, blk, from, pk.to, &pins, &pin_tail);
  if (err == 0)
    err = write_all (s->fd, iov, pk.n_iov, off);
  if (err != 0) {
    spill_free_pinned (pins);
    snprintf (msg, sizeof msg, "cannot write %" PRIu64 " bytes to the "
        "spill file %s at offset %" PRIu64 ": %s", hdr.unit_len, s->path,
        off, strerror (err));
  } else {
    spill_drop_written (blk, from, pk.to);
  }

  pthread_mutex_lock (&s->lock);
  s->io_busy = false;
  pthread_cond_broadcast (&s->idle);
  if (err != 0)
    spill_write_failed (s, msg);
  else
    spill_write_done (s, &hdr, pk.to, pins, pin_tail);
}

/* ---- reading ------------------------------------------------------------ */

static int
read_all (int fd, void *buf, size_t len, uint64_t off, size_t *got)
{
  *got = 0;
  while (*got < len) {
    ssize_t r = pread (fd, (char *) buf + *got, len - *got,
        (off_t) (off + *got));

    if (r < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (r == 0)
      return 0;                 /* short: the caller says "truncated" */
    *got += (size_t) r;
  }
  return 0;
}

typedef enum
{
  READ_OK,
  READ_NO_ROOM,                 /* no budget for it now: when the budget
                                 * has the room the read said it needs */
  READ_PARKED,                  /* not needed yet, and it would take room
                                 * below the spill mark: when the reader
                                 * comes to the marker */
  READ_FAILED,                  /* msg says why */
} ReadResult;

/* Give back what a unit being read took. */
static void
unit_drop (TbqBlock * unit, TbqBlock ** large, uint32_t n)
{
  uint32_t i;

  for (i = 0; i < n; i++)
    tbq_extent_unref (large[i]);
  if (unit != NULL)
    tbq_extent_unref (unit);
}

/* What a read leaves free of the budget.  Ahead of a reader still busy
 * in memory, the room below the spill mark and a block: what the reader
 * has to read first holds the rest, and the writer needs room for what
 * it spills.  For the unit the reader waits for, nothing: it may take
 * the last of the budget, whose read-back room (pool.h) the copier and
 * the writers leave free for it. */
static uint64_t
spill_read_keep (const TbqSpill * s, bool urgent)
{
  return urgent ? 0 : s->hold + s->sink->cfg.block_size;
}

/* An extent for a unit being read back (`from_file`: for its records,
 * or a large record's payload), within the budget. */
static TbqStatus
spill_extent (TbqSpill * s, uint64_t payload, bool urgent, uint32_t from_file,
    TbqBlock ** out)
{
  return tbq_extent_take_back (s->extents, payload,
      spill_read_keep (s, urgent), from_file, out);
}

/* Why unit reading failed, in `msg`: READ_FAILED. */
static ReadResult
read_io_error (const TbqSpill * s, uint64_t off, int err, char *msg,
    size_t msg_size)
{
  snprintf (msg, msg_size, "cannot read the spill file %s at offset %"
      PRIu64 ": %s", s->path, off, strerror (err));
  return READ_FAILED;
}

static ReadResult
read_truncated (const TbqSpill * s, uint64_t off, char *msg,
    size_t msg_size)
{
  snprintf (msg, msg_size, "the spill file %s is truncated: the unit at "
      "offset %" PRIu64 " is not whole", s->path, off);
  return READ_FAILED;
}

static ReadResult
read_damaged (const TbqSpill * s, uint64_t off, char *msg, size_t msg_size,
    bool *checksum)
{
  *checksum = true;
  snprintf (msg, msg_size, "the spill file %s has a damaged unit at offset "
      "%" PRIu64, s->path, off);
  return READ_FAILED;
}

/* Read `len` bytes at `at` of the unit at `off` into `buf`, whole. */
static ReadResult
read_exactly (const TbqSpill * s, void *buf, size_t len, uint64_t at,
    uint64_t off, char *msg, size_t msg_size)
{
  size_t got;
  int err = read_all (s->fd, buf, len, at, &got);

  if (err != 0)
    return read_io_error (s, off, err, msg, msg_size);
  if (got < len)
    return read_truncated (s, off, msg, msg_size);
  return READ_OK;
}

/* The header of unit number `seq` at `off`, whole and as written, and
 * within the `avail` bytes written from there. */
static ReadResult
spill_read_header (const TbqSpill * s, uint64_t seq, uint64_t off,
    uint64_t avail, SpillUnitHeader * hdr, char *msg, size_t msg_size,
    bool *checksum)
{
  ReadResult res = read_exactly (s, hdr, sizeof *hdr, off, off, msg,
      msg_size);

  if (res != READ_OK)
    return res;
  if (hdr->magic != SPILL_MAGIC || hdr->version != SPILL_VERSION
      || hdr->header_size != sizeof *hdr || hdr->seq != seq
      || hdr->records_len == 0 || hdr->records_len % TBQ_RECORD_ALIGN != 0
      || hdr->unit_len != sizeof *hdr + (uint64_t) hdr->records_len
      + hdr->payload_len || hdr->unit_len > avail) {
    *checksum = true;
    snprintf (msg, msg_size, "the spill file %s has a damaged unit header "
        "at offset %" PRIu64, s->path, off);
    return READ_FAILED;
  }
  return READ_OK;
}

/* The unit's records, read into an extent of their own (*unit); *need,
 * without room for that extent, its bytes. */
static ReadResult
spill_read_records (TbqSpill * s, uint64_t off, const SpillUnitHeader * hdr,
    bool urgent, TbqBlock ** unit, uint64_t * need, char *msg,
    size_t msg_size)
{
  TbqStatus st = spill_extent (s, hdr->records_len, urgent,
      TBQ_FROM_FILE_RECORDS, unit);
  ReadResult res;

  if (st == TBQ_NO_SPACE) {
    *need = tbq_extents_bytes (s->extents, hdr->records_len);
    return READ_NO_ROOM;
  }
  if (st != TBQ_OK) {
    snprintf (msg, msg_size, "cannot allocate %u bytes to read back the "
        "spill file %s at offset %" PRIu64 ": %s", hdr->records_len, s->path,
        off, tbq_status_to_string (st));
    return READ_FAILED;
  }
  res = read_exactly (s, (*unit)->data, hdr->records_len, off + sizeof *hdr,
      off, msg, msg_size);
  if (res != READ_OK) {
    tbq_extent_unref (*unit);
    *unit = NULL;
  }
  return res;
}

/* Start the unit's checksum: its header (with its own field 0, as when it
 * was summed) and its records. */
static void
spill_sum_records (XXH3_state_t * xs, SpillUnitHeader * hdr,
    const TbqBlock * unit)
{
  uint64_t sum = hdr->checksum;

  hdr->checksum = 0;
  XXH3_64bits_reset (xs);
  XXH3_64bits_update (xs, hdr, sizeof *hdr);
  XXH3_64bits_update (xs, unit->data, hdr->records_len);
  hdr->checksum = sum;
}

/* The payload of the large record at `o` in the unit, read into an
 * extent of its own (large[*n_large]), which the record points to from
 * now on (its reference passes); *payload, the padded payloads read so
 * far, moves past it. */
static ReadResult
spill_read_large (TbqSpill * s, uint64_t off, const SpillUnitHeader * hdr,
    TbqBlock * unit, uint32_t o, bool urgent, XXH3_state_t * xs,
    TbqBlock ** large, uint32_t * n_large, uint64_t * payload, char *msg,
    size_t msg_size, bool *checksum)
{
  const TbqRecordHeader *h = tbq_record_at (unit->data + o);
  TbqIndirect ind;
  uint64_t padded;
  TbqBlock *e;
  TbqStatus st;
  ReadResult res;

  if (h->size != sizeof ind || *n_large == SPILL_UNIT_LARGE)
    return read_damaged (s, off, msg, msg_size, checksum);
  ind = tbq_record_indirect (h);
  padded = (ind.size + 7) & ~(uint64_t) 7;
  if (ind.size == 0 || padded > hdr->payload_len - *payload)
    return read_damaged (s, off, msg, msg_size, checksum);
  st = spill_extent (s, ind.size, urgent, TBQ_FROM_FILE_PAYLOAD, &e);
  if (st == TBQ_NO_SPACE)
    return READ_NO_ROOM;
  if (st != TBQ_OK) {
    snprintf (msg, msg_size, "cannot allocate %" PRIu64 " bytes to read "
        "back the spill file %s at offset %" PRIu64 ": %s", ind.size,
        s->path, off, tbq_status_to_string (st));
    return READ_FAILED;
  }
  large[(*n_large)++] = e;
  res = read_exactly (s, e->data, ind.size, off + sizeof *hdr
      + hdr->records_len + *payload, off, msg, msg_size);
  if (res != READ_OK)
    return res;
  XXH3_64bits_update (xs, e->data, ind.size);
  if (padded != ind.size)
    XXH3_64bits_update (xs, spill_zeros, padded - ind.size);
  *payload += padded;
  tbq_record_put_indirect (unit->data + o, h->type, (uint32_t) ind.size, e);
  return READ_OK;
}

/* The budget bytes the large records of the unit take read back (their
 * extents), in *bytes: false when the records are not as written (the
 * read that follows says so: they are not waited for). */
static bool
spill_large_bytes (const TbqSpill * s, const SpillUnitHeader * hdr,
    const TbqBlock * unit, uint64_t * bytes)
{
  uint64_t payload = 0;
  uint32_t o = 0, n_large = 0;

  *bytes = 0;
  while (o < hdr->records_len) {
    const TbqRecordHeader *h = tbq_record_at (unit->data + o);
    uint64_t span, padded;
    TbqIndirect ind;

    if (hdr->records_len - o < TBQ_RECORD_HEADER_SIZE)
      return false;
    span = TBQ_RECORD_SPAN (h->size);
    if (span > hdr->records_len - o)
      return false;
    o += (uint32_t) span;
    if (!tbq_record_is_indirect (h))
      continue;
    if (h->size != sizeof ind || n_large++ == SPILL_UNIT_LARGE)
      return false;
    ind = tbq_record_indirect (h);
    padded = (ind.size + 7) & ~(uint64_t) 7;
    if (ind.size == 0 || padded > hdr->payload_len - payload)
      return false;
    payload += padded;
    /* No overflow: each is below 2^33 bytes (extent.c), 256 at most. */
    *bytes += tbq_extents_bytes (s->extents, ind.size);
  }
  return true;
}

/* The records: whole, as many as said, each large one's payload read
 * into an extent of its own (large[], *n_large of them).  They are taken
 * only when the budget has room for all of them (else *need, the bytes of
 * the whole unit read back): part of a unit, which the reader cannot
 * use, never holds room another read needs. */
static ReadResult
spill_read_payloads (TbqSpill * s, uint64_t off, const SpillUnitHeader * hdr,
    TbqBlock * unit, bool urgent, XXH3_state_t * xs, TbqBlock ** large,
    uint32_t * n_large, uint64_t * need, char *msg, size_t msg_size,
    bool *checksum)
{
  uint64_t payload = 0, bytes;
  uint32_t o, n;

  if (spill_large_bytes (s, hdr, unit, &bytes) && bytes > 0
      && !tbq_pool_has_room (s->sink, bytes, spill_read_keep (s, urgent))) {
    *need = tbq_extents_bytes (s->extents, hdr->records_len) + bytes;
    /* Only a damaged unit can need more than the whole budget (units
     * are cut to the read-back room): it is not waited for. */
    if (*need > s->sink->bytes_max)
      return read_damaged (s, off, msg, msg_size, checksum);
    return READ_NO_ROOM;
  }

  for (o = 0, n = 0; o < hdr->records_len; n++) {
    const TbqRecordHeader *h = tbq_record_at (unit->data + o);
    uint64_t span;

    if (hdr->records_len - o < TBQ_RECORD_HEADER_SIZE)
      return read_damaged (s, off, msg, msg_size, checksum);
    span = TBQ_RECORD_SPAN (h->size);
    if (span > hdr->records_len - o)
      return read_damaged (s, off, msg, msg_size, checksum);
    if (tbq_record_is_indirect (h)) {
      ReadResult res = spill_read_large (s, off, hdr, unit, o, urgent, xs,
          large, n_large, &payload, msg, msg_size, checksum);

      if (res == READ_NO_ROOM)
        *need = tbq_extents_bytes (s->extents, hdr->records_len) + bytes;
      if (res != READ_OK)
        return res;
    }
    o += (uint32_t) span;
  }
  if (n != hdr->n_records || payload != hdr->payload_len)
    return read_damaged (s, off, msg, msg_size, checksum);
  return READ_OK;
}

/* Read unit number `seq` at `off` into extents (no lock held); without
 * room in the budget, *need is what it takes (READ_NO_ROOM). */
static ReadResult
spill_read_at (TbqSpill * s, uint64_t seq, uint64_t off, uint64_t avail,
    bool urgent, TbqBlock ** out, SpillUnitHeader * hdr, uint64_t * need,
    char *msg, size_t msg_size, bool *checksum)
{
  TbqBlock *unit = NULL, *large[SPILL_UNIT_LARGE];
  uint32_t n_large = 0;
  XXH3_state_t *xs;
  ReadResult res;

  *checksum = false;
  res = spill_read_header (s, seq, off, avail, hdr, msg, msg_size, checksum);
  if (res != READ_OK)
    return res;
  /* Reading ahead of a reader still busy in memory takes only room below
   * the spill mark (spill_read_keep()). */
  if (!urgent && !tbq_pool_has_room (s->sink, hdr->unit_len,
          spill_read_keep (s, false)))
    return READ_PARKED;
  res = spill_read_records (s, off, hdr, urgent, &unit, need, msg, msg_size);
  if (res != READ_OK)
    return res;
  xs = XXH3_createState ();
  if (xs == NULL) {
    unit_drop (unit, large, n_large);
    snprintf (msg, msg_size, "cannot allocate a checksum state");
    return READ_FAILED;
  }
  spill_sum_records (xs, hdr, unit);
  res = spill_read_payloads (s, off, hdr, unit, urgent, xs, large, &n_large,
      need, msg, msg_size, checksum);
  if (res != READ_OK) {
    XXH3_freeState (xs);
    /* Large records read so far point to extents in `large`. */
    unit_drop (unit, large, n_large);
    return res;
  }
  if (XXH3_64bits_digest (xs) != hdr->checksum) {
    XXH3_freeState (xs);
    *checksum = true;
    /* The large records' extents are the records': drop them with the
     * unit's records. */
    tbq_records_release (unit->data, 0, hdr->records_len, NULL, NULL);
    tbq_extent_unref (unit);
    snprintf (msg, msg_size, "checksum mismatch in the spill file %s, in "
        "the unit at offset %" PRIu64, s->path, off);
    return READ_FAILED;
  }
  XXH3_freeState (xs);
  /* Relaxed: the unit reaches the reader under the lock. */
  atomic_store_explicit (&unit->published, hdr->records_len,
      memory_order_relaxed);
  *out = unit;
  return READ_OK;
}

/* Pinned records of a unit read back get what they own from memory
 * (lock held): false when memory and file disagree. */
static bool
spill_unpin (TbqSpill * s, TbqBlock * unit, uint32_t len)
{
  uint32_t o;

  if (s->cfg.owned == NULL)
    return true;
  for (o = 0; o < len;) {
    const TbqRecordHeader *h = tbq_record_at (unit->data + o);
    uint64_t size;
    unsigned char *data = (unsigned char *) record_payload (h, &size);
    uint32_t n = s->cfg.owned (h->type, data, (uint32_t) size,
        s->cfg.owned_data);

    if (n > size)
      n = (uint32_t) size;
    if (n != 0) {
      TbqPinned *p = s->pinned_head;

      if (p == NULL || p->type != h->type || p->size != n)
        return false;
      memcpy (data, p->bytes, n);
      s->pinned_head = p->next;
      if (s->pinned_head == NULL)
        s->pinned_tail = &s->pinned_head;
      free (p);
    }
    o += (uint32_t) TBQ_RECORD_SPAN (h->size);
  }
  return true;
}

/* Give consumed file space back (no lock: only the spill thread moves
 * `punched_off`, and a discard waits for it). */
static void
spill_punch (TbqSpill * s, uint64_t upto)
{
  uint64_t from = s->punched_off, to = upto & ~(SPILL_PUNCH_STEP - 1);

  if (to <= from)
    return;
#ifdef FALLOC_FL_PUNCH_HOLE
  /* Best effort: a file system without holes keeps the space until the
   * file is emptied. */
  (void) fallocate (s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
      (off_t) from, (off_t) (to - from));
#endif
  s->punched_off = to;
}

/* Read the next unit ahead (lock held on entry and exit). */
static void
spill_read_unit (TbqSpill * s)
{
  uint64_t seq = s->read_seq, off = s->read_off;
  uint64_t avail = s->write_off - off;
  bool urgent = s->reader_at != NULL;
  SpillUnitHeader hdr;
  TbqBlock *unit = NULL;
  ReadResult res;
  uint64_t need = 0;
  bool checksum;
  char msg[320];

  s->io_busy = true;
  pthread_mutex_unlock (&s->lock);
  res = spill_read_at (s, seq, off, avail, urgent, &unit, &hdr, &need, msg,
      sizeof msg, &checksum);
  if (res == READ_OK
      && off + hdr.unit_len - s->punched_off >= SPILL_PUNCH_LAG)
    spill_punch (s, off + hdr.unit_len);
  pthread_mutex_lock (&s->lock);
  s->io_busy = false;
  pthread_cond_broadcast (&s->idle);
  if (res == READ_OK && !spill_unpin (s, unit, hdr.records_len)) {
    tbq_records_release (unit->data, 0, hdr.records_len, NULL, NULL);
    tbq_extent_unref (unit);
    checksum = true;
    snprintf (msg, sizeof msg, "the spill file %s: the unit at offset %"
        PRIu64 " does not match what was written", s->path, off);
    res = READ_FAILED;
  }
  /* Ahead of the reader, no room is not needed yet. */
  if (res == READ_PARKED || (res == READ_NO_ROOM && !urgent)) {
    s->read_parked = true;
    return;
  }
  if (res == READ_NO_ROOM) {
    /* The reader waits for it: read it once `need` fits (spill_decide()),
     * which what the copier and the writers leave free makes sure of as
     * soon as the reader's own and its zero-copy holders' references to
     * units read before are gone (spill.h, "The budget"). */
    s->room_wait = true;
    s->room_need = need;
    return;
  }
  s->room_wait = false;
  if (res == READ_FAILED) {
    s->read_failed = true;
    s->read_error_taken = false;
    memcpy (s->read_error, msg, sizeof s->read_error);
    s->read_error[sizeof s->read_error - 1] = '\0';
    tbq_count (&s->read_errors, 1);
    if (checksum)
      tbq_count (&s->checksum_errors, 1);
    tbq_wake_sink_published (s->wake);
    return;
  }
  unit->free_next = NULL;
  *s->ready_tail = unit;
  s->ready_tail = &unit->free_next;
  s->ready_units++;
  s->ready_bytes += hdr.unit_len;
  s->ready_len[s->read_seq % SPILL_AHEAD_UNITS] = hdr.unit_len;
  s->read_seq++;
  s->read_off += hdr.unit_len;
  s->full = false;
  tbq_count (&s->bytes_read, hdr.unit_len);
  tbq_count (&s->units_read, 1);
  tbq_count (&s->records_on_disk, -(uint64_t) hdr.n_records);
  tbq_count (&s->level, -hdr.unit_len);
  tbq_wake_sink_published (s->wake);
}

/* ---- the run's end and the thread --------------------------------------- */

/* The file holds nothing unread and nothing is read ahead: start it over
 * (lock held, no I/O running). */
static void
spill_rewind (TbqSpill * s)
{
  if (s->write_off == 0)
    return;
  if (ftruncate (s->fd, 0) == 0) {
    s->write_off = s->read_off = s->punched_off = 0;
  }
}

/* End the active run where the spill chain stands (lock held). */
static void
spill_end_run (TbqSpill * s)
{
  TbqBlock *m = s->marker;
  SpillMark *mk = (SpillMark *) (void *) m->data;

  mk->end_seq = s->write_seq;
  mk->resume_off = s->pos_off;
  /* Release: the reader that loads the link (acquire, under the lock
   * anyway) reads the spill chain's bytes from resume_off on; the
   * block's reference passes to it. */
  atomic_store_explicit (&m->next, s->pos_blk, memory_order_release);
  s->marker = NULL;
  s->pos_blk = NULL;
  s->pos_off = 0;
  s->reader_at = NULL;
  s->full = false;
  s->runs_ended++;
  s->ended.active = 0;
  /* A discard pauses the spill thread; the thread itself ends a run only
   * when the reader took every unit of it. */
  s->ended.reason = s->paused ? TBQ_SPILL_DISCARDED : TBQ_SPILL_READ_BACK;
  s->ended.budget_used = s->ended.budget_limit = 0;
  s->ended.bytes_written = atomic_load_explicit (&s->bytes_written,
      memory_order_relaxed) - s->run_written_from;
  /* Release: pairs with tbq_spill_wants_run(). */
  atomic_store_explicit (&s->run_active, 0, memory_order_release);
  /* While writes fail the queue is as full as without spill. */
  tbq_extents_hold (s->extents, s->write_failing ? 0 : s->hold);
  if (s->read_off == s->write_off && s->ready_head == NULL)
    spill_rewind (s);
  tbq_wake_sink_published (s->wake);
}

typedef enum
{
  ACT_NONE,
  ACT_AGAIN,
  ACT_READ,
  ACT_WRITE,
  ACT_PUNCH,
} SpillAction;

/* What the spill thread does next (lock held); *until: when to look
 * again without being told (-1: only when told); *room: also when the
 * budget has the room the unit the reader waits for needs. */
static SpillAction
spill_decide (TbqSpill * s, uint32_t * pub, int64_t * until, bool *room)
{
  bool can_read, can_write = false;
  int64_t now = 0;

  *until = -1;
  *room = false;
  if (s->paused)
    return ACT_NONE;
  if (s->marker != NULL && s->reader_at == s->marker
      && s->take_seq == s->write_seq) {
    spill_end_run (s);
    return ACT_AGAIN;
  }
  if (s->write_failing)
    now = tbq_now_ns ();
  can_read = !s->read_failed && s->read_seq < s->write_seq
      && (!s->read_parked || s->reader_at != NULL)
      && s->ready_units < SPILL_AHEAD_UNITS
      && (s->ready_units == 0 || s->ready_bytes < s->ahead_max);
  if (can_read && s->room_wait) {
    /* The unit the reader waits for did not fit: again once it does (or
     * once the reader no longer waits for it).  Relaxed: the budget
     * counts bytes; its uncharges notify the event the thread sleeps on
     * for it (spill_wait()). */
    if (s->reader_at == NULL || tbq_pool_has_room (s->sink, s->room_need, 0)) {
      s->room_wait = false;
    } else {
      can_read = false;
      *room = true;
    }
  }
  if (s->marker != NULL) {
    TbqBlock *b = s->pos_blk;
    /* Acquire: pairs with the copier's release stores (block.h). */
    TbqBlock *next = atomic_load_explicit (&b->next, memory_order_acquire);
    uint32_t p = atomic_load_explicit (&b->published, next != NULL
        ? memory_order_relaxed : memory_order_acquire);

    if (s->pos_off >= p && next != NULL) {
      /* Written whole: the block goes back (its last unref). */
      s->pos_blk = next;
      s->pos_off = 0;
      tbq_block_unref (b);
      return ACT_AGAIN;
    }
    *pub = p;
    can_write = s->pos_off < p && !s->full
        && (!s->write_failing || now >= atomic_load_explicit (&s->retry_at,
                memory_order_relaxed));
    if (s->write_failing && !can_write)
      *until = atomic_load_explicit (&s->retry_at, memory_order_relaxed);
  }
  if (can_read && s->reader_at != NULL)
    return ACT_READ;
  if (can_write)
    return ACT_WRITE;
  if (can_read)
    return ACT_READ;
  /* Nothing else to do: give back what was read (SPILL_PUNCH_LAG). */
  if (s->punched_off + SPILL_PUNCH_STEP <= s->read_off)
    return ACT_PUNCH;
  return ACT_NONE;
}

/* Lock held: a run is active, its writes work, the file has room, and
 * the spill chain holds records not written yet (or a block written
 * whole and sealed, to drop).  Acquire: as the spill thread reads the
 * chain (block.h). */
static bool
spill_can_write_more (TbqSpill * s)
{
  TbqBlock *b = s->pos_blk;

  if (s->marker == NULL || s->write_failing || s->full)
    return false;
  return s->pos_off < atomic_load_explicit (&b->published,
      memory_order_acquire)
      || atomic_load_explicit (&b->next, memory_order_acquire) != NULL;
}

/* The spill thread's wait for room (spill_wait()): rung, or the unit the
 * reader waits for fits.  On the spill thread, which alone writes
 * `room_need`. */
static bool
spill_room_ready (void *arg)
{
  TbqSpill *s = arg;

  /* Relaxed: see spill_ring() and spill_decide(). */
  return atomic_load_explicit (&s->bell, memory_order_relaxed)
      || tbq_pool_has_room (s->sink, s->room_need, 0);
}

/* Lock held: sleep until rung (spill_ring()), or until `until` (>= 0);
 * with `room`, also until the unit the reader waits for fits, on the
 * extents' event: every uncharge of the budget (a reader's, a discard's,
 * a zero-copy holder's last unref, the spill thread's own writes) and
 * every lift of its limit notify it (pool.h), and a member leaving a
 * copy group wakes it (share.h).  The lock is released meanwhile. */
static void
spill_wait (TbqSpill * s, int64_t until, bool room)
{
  /* Relaxed store, then a seq_cst fence (tbq_spill_notify()). */
  atomic_store_explicit (&s->sleeping, 1, memory_order_relaxed);
  /* Seq_cst fence: `sleeping` before the copier's next `published` is
   * looked at (tbq_spill_notify()); the caller looked at it before, so
   * look once more. */
  atomic_thread_fence (memory_order_seq_cst);
  if (!s->paused && !s->stop && spill_can_write_more (s)) {
    atomic_store_explicit (&s->sleeping, 0, memory_order_relaxed);
    return;
  }
  if (room) {
    /* Under the lock, as every ring: a ring from here on sees
     * `room_sleeping` and wakes the event, and the wait's predicate sees
     * its bell (event.h: the wake's release, the sleeper's acquire). */
    atomic_store_explicit (&s->bell, 0, memory_order_relaxed);
    s->room_sleeping = true;
    pthread_mutex_unlock (&s->lock);
    (void) tbq_wait (tbq_extents_event (s->extents), NULL, 0,
        spill_room_ready, s, until);
    pthread_mutex_lock (&s->lock);
    s->room_sleeping = false;
  } else {
    /* `cond` waits on CLOCK_MONOTONIC, tbq_now_ns()'s clock. */
    (void) tbq_cond_wait_until (&s->cond, &s->lock, until);
  }
  atomic_store_explicit (&s->sleeping, 0, memory_order_relaxed);
}

/* Lock held, on the spill thread: tell the next begin or end of a run
 * not told yet (TbqSpillConfig.on_run) with the lock released; whether
 * there was one.  Begins and ends alternate: a run that came and went
 * meanwhile is told once, begun then ended. */
static bool
spill_tell (TbqSpill * s)
{
  TbqSpillRun run;

  if (s->told_ended < s->told_begun && s->runs_ended >= s->told_begun) {
    run = s->ended;
    s->told_ended = s->told_begun;
  } else if (s->told_ended == s->told_begun
      && s->told_begun < s->runs_begun) {
    run = s->begun;
    s->told_begun = s->runs_begun;
  } else {
    return false;
  }
  if (s->cfg.on_run == NULL)
    return true;
  pthread_mutex_unlock (&s->lock);
  s->cfg.on_run (&run, s->cfg.run_data);
  pthread_mutex_lock (&s->lock);
  return true;
}

static void *
spill_main (void *arg)
{
  TbqSpill *s = arg;

  pthread_mutex_lock (&s->lock);
  while (!s->stop) {
    uint32_t pub = 0;
    int64_t until;
    bool room;

    if (spill_tell (s))
      continue;
    switch (spill_decide (s, &pub, &until, &room)) {
      case ACT_AGAIN:
        break;
      case ACT_READ:
        spill_read_unit (s);
        break;
      case ACT_WRITE:
        spill_write_unit (s, pub);
        break;
      case ACT_PUNCH:{
        uint64_t upto = s->read_off;

        /* As a read: a discard waits for it. */
        s->io_busy = true;
        pthread_mutex_unlock (&s->lock);
        spill_punch (s, upto);
        pthread_mutex_lock (&s->lock);
        s->io_busy = false;
        pthread_cond_broadcast (&s->idle);
        break;
      }
      case ACT_NONE:
        spill_wait (s, until, room);
        break;
    }
  }
  /* Freeing the queue discarded what the file held: say so. */
  while (spill_tell (s)) {
  }
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

TbqStatus
tbq_spill_start (TbqSpill * s)
{
  if (pthread_create (&s->thread, NULL, spill_main, s) != 0)
    return TBQ_NO_MEMORY;
  s->thread_started = true;
  return TBQ_OK;
}

void
tbq_spill_free (TbqSpill * s)
{
  if (s == NULL)
    return;
  if (s->thread_started) {
    pthread_mutex_lock (&s->lock);
    s->stop = true;
    spill_ring (s);
    pthread_mutex_unlock (&s->lock);
    pthread_join (s->thread, NULL);
  }
  close (s->fd);
  spill_free_pinned (s->pinned_head);
  pthread_cond_destroy (&s->idle);
  pthread_cond_destroy (&s->cond);
  pthread_mutex_destroy (&s->lock);
  free (s->path);
  free (s);
}

bool
tbq_spill_absorbs (TbqSpill * s)
{
  bool yes;

  if (s == NULL || !atomic_load_explicit (&s->run_active,
          memory_order_relaxed))
    return false;
  /* Records to write: writing them frees their memory. */
  pthread_mutex_lock (&s->lock);
  yes = spill_can_write_more (s);
  pthread_mutex_unlock (&s->lock);
  return yes;
}

/* ---- the reader's side -------------------------------------------------- */

static bool
marker_done (TbqSpill * s, TbqBlock * m)
{
  const SpillMark *mk = (const SpillMark *) (const void *) m->data;

  /* Relaxed under the lock: the link was stored under it. */
  return atomic_load_explicit (&m->next, memory_order_acquire) != NULL
      && s->take_seq >= mk->end_seq;
}

TbqStatus
tbq_spill_take (TbqSpill * s, TbqBlock * m, TbqBlock ** unit,
    TbqBlock ** resume, uint32_t * resume_off)
{
  TbqStatus st = TBQ_EMPTY;

  pthread_mutex_lock (&s->lock);
  if (marker_done (s, m)) {
    *resume = atomic_load_explicit (&m->next, memory_order_relaxed);
    *resume_off = ((const SpillMark *) (const void *) m->data)->resume_off;
    if (s->reader_at == m)
      s->reader_at = NULL;
    st = TBQ_NO_SPACE;
  } else if (s->ready_head != NULL) {
    TbqBlock *u = s->ready_head;

    s->ready_head = u->free_next;
    if (s->ready_head == NULL)
      s->ready_tail = &s->ready_head;
    u->free_next = NULL;
    s->ready_units--;
    s->ready_bytes -= s->ready_len[s->take_seq % SPILL_AHEAD_UNITS];
    s->take_seq++;
    s->reader_at = NULL;
    s->read_parked = false;
    *unit = u;
    st = TBQ_OK;
    spill_ring (s);
  } else if (s->read_failed) {
    st = TBQ_IO_ERROR;
  } else {
    if (s->reader_at != m) {
      s->reader_at = m;
      spill_ring (s);
    }
  }
  pthread_mutex_unlock (&s->lock);
  return st;
}

bool
tbq_spill_ready (TbqSpill * s, TbqBlock * m)
{
  bool ready;

  pthread_mutex_lock (&s->lock);
  ready = marker_done (s, m) || s->ready_head != NULL || s->read_failed;
  if (!ready && s->reader_at != m) {
    s->reader_at = m;
    spill_ring (s);
  }
  pthread_mutex_unlock (&s->lock);
  return ready;
}

/* ---- discard, statistics, errors ---------------------------------------- */

uint64_t
tbq_spill_discard (TbqSpill * s, TbqReleaseFunc release, void *user_data)
{
  uint64_t n;
  TbqPinned *p;
  TbqBlock *u;

  pthread_mutex_lock (&s->lock);
  s->paused = true;
  while (s->io_busy)
    pthread_cond_wait (&s->idle, &s->lock);
  /* Oldest first: the units read ahead, then what the file holds. */
  n = 0;
  while ((u = s->ready_head) != NULL) {
    s->ready_head = u->free_next;
    n += tbq_records_release (u->data, 0,
        atomic_load_explicit (&u->published, memory_order_relaxed), release,
        user_data);
    tbq_extent_unref (u);
  }
  s->ready_tail = &s->ready_head;
  s->ready_units = 0;
  s->ready_bytes = 0;
  for (p = s->pinned_head; p != NULL; p = p->next) {
    if (release)
      release (p->type, p->bytes, p->size, user_data);
  }
  spill_free_pinned (s->pinned_head);
  s->pinned_head = NULL;
  s->pinned_tail = &s->pinned_head;
  n += atomic_load_explicit (&s->records_on_disk, memory_order_relaxed);
  atomic_store_explicit (&s->records_on_disk, 0, memory_order_relaxed);
  atomic_store_explicit (&s->level, 0, memory_order_relaxed);
  s->read_seq = s->take_seq = s->write_seq;
  s->read_off = s->write_off;
  s->read_failed = false;
  s->read_parked = false;
  s->room_wait = false;
  if (s->marker != NULL)
    spill_end_run (s);
  spill_rewind (s);
  s->paused = false;
  spill_ring (s);
  pthread_mutex_unlock (&s->lock);
  return n;
}

void
tbq_spill_stats (TbqSpill * s, TbqSpillStats * st)
{
  memset (st, 0, sizeof *st);
  if (s == NULL)
    return;
  st->bytes_written = atomic_load_explicit (&s->bytes_written,
      memory_order_relaxed);
  st->bytes_read = atomic_load_explicit (&s->bytes_read, memory_order_relaxed);
  st->level_bytes = atomic_load_explicit (&s->level, memory_order_relaxed);
  st->units_written = atomic_load_explicit (&s->units_written,
      memory_order_relaxed);
  st->units_read = atomic_load_explicit (&s->units_read, memory_order_relaxed);
  st->records_on_disk = atomic_load_explicit (&s->records_on_disk,
      memory_order_relaxed);
  st->runs = atomic_load_explicit (&s->runs, memory_order_relaxed);
  st->write_errors = atomic_load_explicit (&s->write_errors,
      memory_order_relaxed);
  st->read_errors = atomic_load_explicit (&s->read_errors,
      memory_order_relaxed);
  st->checksum_errors = atomic_load_explicit (&s->checksum_errors,
      memory_order_relaxed);
  st->active = (uint32_t) atomic_load_explicit (&s->run_active,
      memory_order_relaxed);
  pthread_mutex_lock (&s->lock);
  st->failing = s->write_failing || s->full;
  pthread_mutex_unlock (&s->lock);
}

TbqStatus
tbq_spill_take_error (TbqSpill * s, char *msg, size_t msg_size)
{
  TbqStatus st = TBQ_OK;

  if (s == NULL)
    return TBQ_OK;
  pthread_mutex_lock (&s->lock);
  if (s->read_failed && !s->read_error_taken) {
    s->read_error_taken = true;
    if (msg != NULL && msg_size > 0)
      snprintf (msg, msg_size, "%s", s->read_error);
    st = TBQ_IO_ERROR;
  }
  pthread_mutex_unlock (&s->lock);
  return st;
}

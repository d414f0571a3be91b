/* libtbq internals: the reader (the sink side).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reader takes sink blocks in FIFO order (block.h, "Chains") and
 * iterates their records.  It holds one reference to the sink block it is
 * in and drops it when it moves past a sealed, fully read block.  A large
 * record is an indirect record (block.h): the reader hands out its extent's
 * payload and holds the record's reference to the extent until its next
 * take.  Its
 * waits live a room above, in pull.c, because a waiting reader may move
 * records through the copier itself; the reader never calls the copier.
 */
#ifndef TBQ_READER_H
#define TBQ_READER_H

#include "coalesce.h"
#include "copier.h"
#include "spill.h"

struct TbqReader
{
  /* Reader-owned, hot. */
  TbqBlock *blk;                /* the sink block being read */
  uint32_t off;                 /* next record in `blk` */
  TbqBlock *extent;             /* the extent of the record taken last, or
                                 * NULL: the reader's reference */
  bool in_unit;                 /* at a spill marker, reading `unit` */
  bool io_failed;               /* the spill could not read back what is next */
  _Atomic uint64_t records_out; /* read by stats (relaxed) */
  _Atomic uint64_t bytes_out;
  TbqWake *wake;
  const _Atomic int *interrupted;
  uint32_t spins;               /* busy-wait rounds before sleeping */

  /* Spill (spill.h): set up once; the unit being read at a marker. */
  TbqSpill *spill;
  TbqBlock *unit;               /* the reader's reference, or NULL */
  uint32_t unit_off;
  struct
  {
    bool on;                    /* tbq_reader_discard() runs */
    TbqReleaseFunc release;
    void *data;
    uint64_t *count;
  } discard;

  /* For the rooms above; reader.c never touches them. */
  TbqCopier *copier;            /* pull.c: the copier a waiting reader pulls through */
  TbqCoalesce coalesce;         /* pull.c: how a waiting reader wants to be woken */
  _Atomic int64_t coalesce_bound;       /* pull.c: the bound asked for
                                         * (tbq_reader_set_coalesce), taken
                                         * up by the next wait's plan */
  uint32_t pull_seen;           /* pull.c: the pull requests answered so far */
  _Atomic uint64_t naps;        /* pull.c: waits that napped (statistics) */
  _Atomic uint64_t naps_woken;  /* pull.c: naps that ended before their deadline */
  struct
  {
    pthread_t thread;
    bool running;
    _Atomic int stop;
    TbqConsumeFunc fn;
    void *data;
  } consumer;                   /* consumer.c: the callback consumer thread */
};

/* Start reading at `first` (the copier's first sink block, whose reader
 * reference this reader now holds); waits coalesce within `coalesce_ns`
 * (0: woken per record). */
void tbq_reader_init (TbqReader * r, TbqBlock * first, TbqWake * wake,
    const _Atomic int *interrupted, uint32_t spins, TbqCopier * copier,
    int64_t coalesce_ns);
/* Drop the reader's reference to its sink block. */
void tbq_reader_fini (TbqReader * r);

/* Wait predicates (pull.c): a record is visible, or a kick is pending. */
bool tbq_reader_ready (TbqReader * r);
/* The sink sequence moved past `key`, or a kick is pending. */
bool tbq_reader_seq_moved (TbqReader * r, uint32_t key);

/* pull.c: forget what the waits learnt about the arrivals (a discard
 * restarts the stream: the next wait is woken per record).  Nothing else
 * uses the reader. */
void tbq_reader_restart_waits (TbqReader * r);

/* Take every record of the sink layer, calling `release` for each; the
 * copier is stopped and published what it copied. */
void tbq_reader_discard (TbqReader * r, TbqReleaseFunc release,
    void *user_data, uint64_t * count);

#endif /* TBQ_READER_H */

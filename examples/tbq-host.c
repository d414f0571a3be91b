/* tbq-host: libtbq inside a host framework's own threads and locks, the
 * way a media framework element uses it.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   1. stream: the host's copy task drives the copier step by step and
 *      reports allocation failures; the host's consumer takes records under
 *      the host's lock with the split wait, and keeps some zero-copy;
 *      the producer writes in sessions and builds records in place, and
 *      now and then a 600 KB video frame, which travels out of line (the
 *      producer fills it where the consumer reads it: one copy);
 *   2. flush: interrupt, join the tasks, discard what is queued (releasing
 *      what records own), resume;
 *   3. drain: the copier on a thread the host created (tbq_copier_run),
 *      the library's own copier thread, a writer closed.
 *
 * Every record is delivered in order or discarded; the exit status says
 * whether the counts add up.  usage: tbq-host [records-per-phase]
 */
#include <tbq.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum
{ FRAME = 1, EVENT = 2 };

/* One frame in LARGE_EVERY is a 640 x 480 YUY2 picture. */
#define LARGE_EVERY 256
#define LARGE_FRAME (640 * 480 * 2)

typedef struct
{
  TbqQueue *q;
  TbqReader *r;
  pthread_mutex_t lock;         /* the host's lock around reader calls */
  pthread_cond_t cond;
  uint64_t next;                /* sequence number expected next */
  uint64_t bad;
  TbqBlock *held;               /* a record kept zero-copy */
  uint64_t sink_full;           /* full source pool met with a full sink pool */
  pthread_t copy_task, consume_task;
} Host;

/* Every record starts with its sequence number; a large frame ends with
 * it too (one contiguous range, however large). */
static void
check_record (Host * h, const TbqRecord * rec)
{
  uint64_t seq, tail;

  if (rec->size < sizeof seq) {
    h->bad++;
    return;
  }
  memcpy (&seq, rec->data, sizeof seq);
  if (seq != h->next || (rec->type != FRAME && rec->type != EVENT))
    h->bad++;
  if (rec->size == LARGE_FRAME) {
    memcpy (&tail, (const unsigned char *) rec->data + rec->size
        - sizeof tail, sizeof tail);
    h->bad += tail != seq;
  }
  h->next = seq + 1;
}

static void *
copy_task (void *arg)
{
  Host *h = arg;
  TbqStatus st;
  char msg[256];

  /* A host task: one step per iteration, until flushed. */
  while ((st = tbq_copier_step (h->q, -1)) != TBQ_INTERRUPTED) {
    if (st == TBQ_NO_MEMORY && tbq_queue_take_error (h->q, msg,
            sizeof msg) == TBQ_NO_MEMORY)
      fprintf (stderr, "tbq-host: warning: %s\n", msg);
  }
  return NULL;
}

/* The host's consumer: reader calls under the host lock, which it never
 * holds while sleeping (the split wait). */
static void *
consume_task (void *arg)
{
  Host *h = arg;
  TbqRecord rec;

  pthread_mutex_lock (&h->lock);
  for (;;) {
    uint32_t key = tbq_reader_prepare_wait (h->r);

    if (tbq_reader_peek (h->r, &rec) == TBQ_OK) {
      tbq_reader_next (h->r, &rec);
      check_record (h, &rec);
      /* Zero-copy: keep the latest frame's bytes past the next call. */
      if (rec.type == FRAME) {
        tbq_block_ref (rec.block);
        tbq_block_unref (h->held);
        h->held = rec.block;
      }
      pthread_cond_broadcast (&h->cond);
      continue;
    }
    pthread_mutex_unlock (&h->lock);
    if (tbq_reader_sleep (h->r, key, -1) == TBQ_INTERRUPTED
        && tbq_queue_is_interrupted (h->q))
      return NULL;
    pthread_mutex_lock (&h->lock);
  }
}

static void
start_tasks (Host * h)
{
  pthread_create (&h->copy_task, NULL, copy_task, h);
  pthread_create (&h->consume_task, NULL, consume_task, h);
}

/* Records of 8..`max` bytes: frames in sessions, events built in place;
 * every LARGE_EVERY-th frame a picture of LARGE_FRAME bytes. */
static bool
produce (TbqWriter * w, uint64_t * seq, uint64_t n, uint32_t max)
{
  TbqSession s;
  uint64_t end = *seq + n;

  while (*seq < end) {
    uint32_t size = 8 + (uint32_t) (*seq * 2654435761u % (max - 8));
    void *p;

    if (*seq % 16 == 0) {       /* an event, reserved and committed */
      if (tbq_writer_reserve (w, EVENT, 8, &p) != TBQ_OK)
        return false;
      memcpy (p, seq, 8);
      tbq_writer_commit (w);
      (*seq)++;
      continue;
    }
    tbq_session_begin (w, &s);
    for (; *seq < end && *seq % 16 != 0; (*seq)++) {
      uint32_t n = *seq % LARGE_EVERY == 1 ? LARGE_FRAME : size;

      /* A large frame is reserved like any: the pointer is into its
       * extent, where the consumer will read it. */
      while ((p = tbq_session_reserve (&s, FRAME, n)) == NULL)
        if (tbq_session_next_block (&s) != TBQ_OK) {
          tbq_session_end (&s);
          return false;
        }
      memset (p, 0, n);
      memcpy (p, seq, 8);
      if (n == LARGE_FRAME)
        memcpy ((unsigned char *) p + n - 8, seq, 8);
    }
    tbq_session_end (&s);
  }
  return true;
}

static void
wait_delivered (Host * h, uint64_t upto)
{
  pthread_mutex_lock (&h->lock);
  while (h->next < upto)
    pthread_cond_wait (&h->cond, &h->lock);
  pthread_mutex_unlock (&h->lock);
}

static void
count_release (uint16_t type, const void *data, uint32_t size, void *user)
{
  (void) type;
  (void) data;
  (void) size;
  (*(uint64_t *) user)++;
}

/* Phase 2: the host flushes.  Records that were not delivered are handed
 * to the release callback, once each. */
static uint64_t
flush (Host * h)
{
  uint64_t discarded = 0;

  tbq_queue_interrupt (h->q);
  pthread_join (h->copy_task, NULL);
  pthread_join (h->consume_task, NULL);
  tbq_queue_discard (h->q, count_release, &discarded);
  tbq_queue_resume (h->q);
  return discarded;
}

static void *
run_copier (void *arg)
{
  tbq_copier_run (arg);
  return NULL;
}

/* Phase 3 consumer side: wait, then take everything there is. */
static void
drain (Host * h, uint64_t upto)
{
  TbqRecord rec;

  while (h->next < upto) {
    if (tbq_reader_next (h->r, &rec) == TBQ_OK)
      check_record (h, &rec);
    else if (tbq_reader_wait (h->r, 1000000000) != TBQ_OK)
      break;
  }
}

/* Phase 3: the copier runs on a thread the host created (its placement
 * and priority are the host's to choose); the writer sees backpressure as
 * DROP and falls back to waiting, as a leaky-aware host would. */
static bool
phase_own_copier_thread (Host * h, TbqWriter * w, uint64_t * seq, uint64_t n)
{
  pthread_t copier;
  uint64_t end = *seq + n;

  pthread_create (&copier, NULL, run_copier, h->q);
  tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_DROP, 0);
  for (; *seq < end; (*seq)++) {
    TbqStatus st = tbq_writer_write (w, EVENT, seq, sizeof *seq);

    if (st == TBQ_DROPPED) {
      /* The source pool is full.  While the sink pool can take a block the
       * copier is only behind, and the record will fit soon; a leaky host
       * would drop records only when the sink pool is full too.  This one
       * waits either way. */
      if (!tbq_queue_sink_can_take (h->q))
        h->sink_full++;
      tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK, -1);
      st = tbq_writer_write (w, EVENT, seq, sizeof *seq);
      tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_DROP, 0);
    }
    if (st != TBQ_OK)
      return false;
  }
  /* Any thread may wait for what a writer published to be moved. */
  if (tbq_writer_wait_copied (w, 10000000000) != TBQ_OK)
    return false;
  drain (h, end);
  tbq_queue_interrupt (h->q);
  pthread_join (copier, NULL);
  tbq_queue_resume (h->q);
  return h->next == end;
}

/* Phase 4: the library's own copier thread; a reservation given up; the
 * writer closed (the copier frees it once its records have moved). */
static bool
phase_library_thread (Host * h, TbqWriter * w, uint64_t * seq)
{
  void *p;
  uint64_t end = *seq + 3;

  tbq_queue_start (h->q);
  if (tbq_writer_reserve (w, EVENT, 8, &p) != TBQ_OK)
    return false;
  tbq_writer_cancel (w);
  for (; *seq < end; (*seq)++)
    tbq_writer_write (w, EVENT, seq, sizeof *seq);
  tbq_writer_flush (w);
  tbq_writer_close (w);
  drain (h, end);
  /* A wake that comes before the wait makes it return at once. */
  tbq_reader_wake (h->r);
  tbq_reader_wait (h->r, -1);
  tbq_queue_stop (h->q);
  return h->next == end;
}

static int
report (Host * h, uint64_t written, uint64_t discarded)
{
  TbqStats st;
  char msg[256];

  tbq_queue_get_stats (h->q, &st);
  printf ("written %" PRIu64 ", delivered %" PRIu64 " (%" PRIu64
      " out of order), discarded by the flush %" PRIu64 "\n", written,
      st.records_out, h->bad, discarded);
  printf ("copier passes %" PRIu64 ", sink pool peak %" PRIu64 " of %"
      PRIu64 " blocks, %" PRIu64 " allocation failures, %" PRIu64
      " writes met a full sink pool\n", st.copier_passes,
      st.sink.blocks_peak, st.sink.blocks_limit, st.sink.alloc_failures,
      h->sink_full);
  printf ("large records: %" PRIu64 " extents allocated, %" PRIu64
      " reused from the idle cache, peak %" PRIu64 " bytes in use\n",
      st.extents.allocations, st.extents.cache_hits, st.extents.bytes_peak);
  if (tbq_queue_take_error (h->q, msg, sizeof msg) != TBQ_OK)
    printf ("last error: %s\n", msg);
  return h->bad == 0 && st.records_out + discarded == written
      && st.records_in == written ? 0 : 1;
}

int
main (int argc, char **argv)
{
  uint64_t n = argc > 1 ? strtoull (argv[1], NULL, 10) : 100000;
  uint64_t seq = 0, discarded;
  Host h = { 0 };
  TbqConfig cfg;
  TbqWriter *w;
  char msg[256];
  TbqStatus st;
  int rc;

  tbq_config_init (&cfg);
  cfg.wake = TBQ_WAKE_ON_DEMAND;        /* as the element does by default */
  cfg.sink.min_blocks = 0;
  if ((st = tbq_config_validate (&cfg, msg, sizeof msg)) != TBQ_OK
      || (st = tbq_queue_new (&cfg, &h.q, msg, sizeof msg)) != TBQ_OK) {
    fprintf (stderr, "tbq-host: %s: %s\n", tbq_status_to_string (st), msg);
    return 1;
  }
  printf ("records of up to %" PRIu32 " bytes inline, up to %" PRIu32
      " out of line; sink blocks of %zu bytes\n",
      tbq_queue_max_inline_size (h.q), tbq_queue_max_extent_size (h.q),
      tbq_queue_get_config (h.q)->sink.block_size);
  if (tbq_writer_new (h.q, &w) != TBQ_OK
      || tbq_reader_new (h.q, &h.r) != TBQ_OK)
    return 1;
  pthread_mutex_init (&h.lock, NULL);
  pthread_cond_init (&h.cond, NULL);

  /* 1: stream. */
  start_tasks (&h);
  if (!produce (w, &seq, n, 512) || tbq_writer_sync (w, 10000000000) != TBQ_OK)
    return 1;
  wait_delivered (&h, seq);
  /* 2: publish at hand-off only, then flush what is still queued. */
  tbq_writer_set_publish (w, TBQ_PUBLISH_AT_HANDOFF, 0);
  if (!produce (w, &seq, n, 512))
    return 1;
  discarded = flush (&h);
  h.next += discarded;
  tbq_writer_set_publish (w, TBQ_PUBLISH_EVERY_RECORD, 0);
  /* 3 and 4: drain with the copier on other threads. */
  if (!phase_own_copier_thread (&h, w, &seq, n)
      || !phase_library_thread (&h, w, &seq))
    return 1;
  tbq_block_unref (h.held);
  rc = report (&h, seq, discarded);
  tbq_reader_free (h.r);
  tbq_queue_free (h.q, count_release, &discarded);
  pthread_mutex_destroy (&h.lock);
  pthread_cond_destroy (&h.cond);
  return rc;
}

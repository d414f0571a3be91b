/* Helpers shared by the libtbq unit tests.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Waits for asynchronous effects poll with a deadline (WAIT_UNTIL) and fail
 * on timeout; record payloads are derived from a sequence number so every
 * byte can be checked on the consumer side.
 */
#ifndef TBQ_LIB_TEST_H
#define TBQ_LIB_TEST_H

#include <tbq.h>
#include "tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MS_NS ((int64_t) 1000000)
#define SEC_NS ((int64_t) 1000000000)
/* How long a test waits for something that should happen "soon". */
#define EVENTUALLY_NS (10 * SEC_NS)
/* How long a test waits to be confident something does NOT happen. */
#define QUIET_NS (200 * MS_NS)

static inline int64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * SEC_NS + ts.tv_nsec;
}

static inline void
sleep_ns (int64_t ns)
{
  struct timespec ts = { (time_t) (ns / SEC_NS), (long) (ns % SEC_NS) };

  while (nanosleep (&ts, &ts) != 0) {
  }
}

/* TBQ_TEST_SCALE shrinks loops under slow (sanitizer) builds. */
static inline double
test_scale (void)
{
  const char *s = getenv ("TBQ_TEST_SCALE");
  double v = s ? atof (s) : 1.0;

  return v > 0 ? v : 1.0;
}

static inline uint64_t
scaled (uint64_t n)
{
  uint64_t v = (uint64_t) ((double) n * test_scale ());

  return v > 0 ? v : 1;
}

/* Poll `cond` until it holds; fail the test after EVENTUALLY_NS. */
#define WAIT_UNTIL(cond) do { \
    int64_t wu_deadline_ = now_ns () + EVENTUALLY_NS; \
    while (!(cond)) { \
      if (now_ns () > wu_deadline_) { \
        fprintf (stdout, "# %s:%d: timed out waiting for %s\n", \
            __FILE__, __LINE__, #cond); \
        fflush (stdout); \
        _exit (1); \
      } \
      sleep_ns (100000); \
    } \
  } while (0)

#define CHECK_STATUS(expr, want) do { \
    TbqStatus cs_got_ = (expr); \
    if (cs_got_ != (want)) { \
      fprintf (stdout, "# %s:%d: %s returned \"%s\", expected \"%s\"\n", \
          __FILE__, __LINE__, #expr, tbq_status_to_string (cs_got_), \
          tbq_status_to_string (want)); \
      fflush (stdout); \
      _exit (1); \
    } \
  } while (0)

#define CHECK_OK(expr) CHECK_STATUS (expr, TBQ_OK)

static inline TbqStats
stats_of (TbqQueue * q)
{
  TbqStats st;

  tbq_queue_get_stats (q, &st);
  return st;
}

/* A configuration small enough to reach every edge quickly: source and sink
 * blocks of `block` bytes; the caller adjusts counts. */
static inline void
small_config (TbqConfig * cfg, size_t block)
{
  tbq_config_init (cfg);
  cfg->source.block_size = block;
  cfg->source.min_blocks = 2;
  cfg->source.max_blocks = 2;
  cfg->source.max_idle_blocks = 2;
  cfg->sink.block_size = block;
  cfg->sink.min_blocks = 2;
  cfg->sink.max_blocks = 64;
  cfg->sink.max_idle_blocks = 64;
}

static inline TbqQueue *
queue_new_or_fail (const TbqConfig * cfg)
{
  TbqQueue *q = NULL;
  char msg[256] = "";
  TbqStatus st = tbq_queue_new (cfg, &q, msg, sizeof msg);

  if (st != TBQ_OK) {
    printf ("# tbq_queue_new: %s: %s\n", tbq_status_to_string (st), msg);
    fflush (stdout);
    _exit (1);
  }
  return q;
}

/* The usual parts of a test: a queue, one writer, the reader. */
typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
} Fixture;

/* A queue with one writer open and the reader. */
static inline TbqQueue *
open_queue (const TbqConfig * cfg, TbqWriter ** w, TbqReader ** r)
{
  TbqQueue *q = queue_new_or_fail (cfg);

  CHECK_OK (tbq_writer_new (q, w));
  CHECK_OK (tbq_reader_new (q, r));
  return q;
}

/* Take the next record, waiting up to `timeout_ns` for it. */
static inline TbqStatus
read_record (TbqReader * r, TbqRecord * rec, int64_t timeout_ns)
{
  int64_t deadline = now_ns () + timeout_ns;

  for (;;) {
    TbqStatus st = tbq_reader_next (r, rec);
    int64_t left;

    if (st != TBQ_EMPTY)
      return st;
    left = deadline - now_ns ();
    if (left <= 0)
      return TBQ_TIMEOUT;
    st = tbq_reader_wait (r, left);
    if (st == TBQ_INTERRUPTED)
      return st;
  }
}

/* ---- threads ---- */

/* Every sleep begun inside the library on `q`'s events: by writers (and
 * syncs), the copier and the reader.  A sleep is counted once the thread
 * is registered on its event, so a test that sees the count grow knows
 * that any wake it makes from now on reaches that thread: a test waits
 * for this instead of guessing from timing that a thread blocks. */
static inline uint64_t
sleeps_of (TbqQueue * q)
{
  TbqStats st;

  tbq_queue_get_stats (q, &st);
  return st.writer_sleeps + st.copier_sleeps + st.reader_sleeps;
}

/* A library call run on a thread of its own, for tests in which it must
 * block: `fn (arg)`'s status lands in `st` once it returns. */
typedef struct
{
  TbqStatus (*fn) (void *arg);
  void *arg;
  TbqStatus st;
  pthread_t th;
} BlockingCall;

static inline void *
blocking_call_main (void *arg)
{
  BlockingCall *c = arg;

  c->st = c->fn (c->arg);
  return NULL;
}

/* Start the call and return once it sleeps in a wait on `q`. */
static inline void
blocking_call_start (BlockingCall * c, TbqQueue * q, TbqStatus (*fn) (void *),
    void *arg)
{
  uint64_t sleeps = sleeps_of (q);

  c->fn = fn;
  c->arg = arg;
  c->st = TBQ_EMPTY;
  CHECK (pthread_create (&c->th, NULL, blocking_call_main, c) == 0);
  WAIT_UNTIL (sleeps_of (q) > sleeps);
}

/* Wait for the call to return; its status. */
static inline TbqStatus
blocking_call_join (BlockingCall * c)
{
  pthread_join (c->th, NULL);
  return c->st;
}

/* ---- several readers of one queue (TbqConfig.max_readers), each on a
 * thread of its own, until every record came: exactly once among them,
 * and to each reader in the queue's order ---- */

/* Check one record's bytes; its number, 0 .. total - 1 in the order the
 * records were written. */
typedef uint64_t (*RecordNumberFunc) (const TbqRecord * rec, void *data);

typedef struct Crew Crew;

typedef struct
{
  Crew *crew;
  TbqReader *r;
  uint64_t got;                 /* records it took */
  uint64_t next;                /* the least number it may take next */
  pthread_t th;
} CrewReader;

struct Crew
{
  uint64_t total;
  RecordNumberFunc number;
  void *data;
  _Atomic uint64_t delivered;
  _Atomic unsigned char *seen;  /* per record: times delivered */
  int n;
  CrewReader reader[16];
};

static inline void *
crew_reader_main (void *arg)
{
  CrewReader *cr = arg;
  Crew *c = cr->crew;
  int k;

  for (;;) {
    TbqRecord rec;
    TbqStatus st = tbq_reader_next (cr->r, &rec);

    if (st == TBQ_OK) {
      uint64_t i = c->number (&rec, c->data);

      CHECK (i < c->total);
      if (i < cr->next) {
        printf ("# a reader took record %" PRIu64 " after %" PRIu64 "\n", i,
            cr->next - 1);
        CHECK (0);
      }
      cr->next = i + 1;
      CHECK_EQ (atomic_fetch_add (&c->seen[i], 1), 0);
      cr->got++;
      /* The last record: nobody waits for more. */
      if (atomic_fetch_add (&c->delivered, 1) + 1 == c->total)
        for (k = 0; k < c->n; k++)
          tbq_reader_wake (c->reader[k].r);
      continue;
    }
    CHECK_STATUS (st, TBQ_EMPTY);
    if (atomic_load (&c->delivered) == c->total)
      break;
    if (tbq_reader_wait (cr->r, EVENTUALLY_NS) == TBQ_TIMEOUT
        && atomic_load (&c->delivered) < c->total) {
      printf ("# a reader had nothing for %d s: %" PRIu64 " of %" PRIu64
          " records came\n", (int) (EVENTUALLY_NS / SEC_NS),
          atomic_load (&c->delivered), c->total);
      CHECK (0);
    }
  }
  return NULL;
}

/* Run the `n` readers `r` (up to 16) on threads of their own until the
 * `total` records came among them. */
static inline void
crew_start (Crew * c, TbqReader ** r, int n, uint64_t total,
    RecordNumberFunc number, void *data)
{
  int k;

  memset (c, 0, sizeof *c);
  CHECK (n <= 16);
  c->total = total;
  c->number = number;
  c->data = data;
  c->n = n;
  c->seen = calloc (total, 1);
  for (k = 0; k < n; k++) {
    c->reader[k].crew = c;
    c->reader[k].r = r[k];
  }
  for (k = 0; k < n; k++)
    CHECK (pthread_create (&c->reader[k].th, NULL, crew_reader_main,
            &c->reader[k]) == 0);
}

/* Wait for the readers; every record came exactly once. */
static inline void
crew_join (Crew * c)
{
  uint64_t i, sum = 0;
  int k;

  for (k = 0; k < c->n; k++) {
    pthread_join (c->reader[k].th, NULL);
    printf ("# reader %d: %" PRIu64 " records\n", k, c->reader[k].got);
    sum += c->reader[k].got;
  }
  CHECK_EQ (sum, c->total);
  for (i = 0; i < c->total; i++)
    CHECK_EQ (atomic_load (&c->seen[i]), 1);
  free ((void *) c->seen);
}

/* ---- payloads derived from a sequence number ---- */

static inline uint64_t
mix64 (uint64_t x)
{
  /* splitmix64 finaliser: cheap and well spread. */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline void
fill_payload (void *buf, uint32_t size, uint64_t seq)
{
  unsigned char *p = buf;
  uint64_t s = mix64 (seq);
  uint32_t i = 0;

  for (; i + 8 <= size; i += 8) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    memcpy (p + i, &s, 8);
  }
  if (i < size) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    memcpy (p + i, &s, size - i);
  }
}

/* Index of the first wrong byte, or -1 when `data` is seq's payload. */
static inline int64_t
payload_mismatch (const void *data, uint32_t size, uint64_t seq)
{
  unsigned char want[64];
  const unsigned char *p = data;
  uint64_t s = mix64 (seq);
  uint32_t i = 0;

  /* Regenerate in 64-byte chunks with the same stream as fill_payload. */
  while (i < size) {
    uint32_t n = size - i < sizeof want ? size - i : (uint32_t) sizeof want;
    uint32_t j, k;

    for (j = 0; j < n; j += 8) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      memcpy (want + j, &s, n - j < 8 ? n - j : 8);
    }
    for (k = 0; k < n; k++)
      if (p[i + k] != want[k])
        return (int64_t) (i + k);
    i += n;
  }
  return -1;
}

/* Reserve, fill and commit `n` records of `size` bytes carrying payloads
 * first .. first + n - 1; returns the first one's payload. */
static inline void *
write_records (TbqWriter * w, uint16_t type, uint32_t size, uint64_t first,
    uint64_t n)
{
  void *p, *p0 = NULL;
  uint64_t k;

  for (k = 0; k < n; k++) {
    CHECK_OK (tbq_writer_reserve (w, type, size, &p));
    fill_payload (p, size, first + k);
    CHECK_OK (tbq_writer_commit (w));
    if (k == 0)
      p0 = p;
  }
  return p0;
}

/* Read `n` records of `size` bytes and check their payloads (first ..
 * first + n - 1), within EVENTUALLY_NS each; the first one to `out`. */
static inline void
read_records (TbqReader * r, uint32_t size, uint64_t first, uint64_t n,
    TbqRecord * out)
{
  uint64_t k;

  for (k = 0; k < n; k++) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    CHECK_EQ (rec.size, size);
    CHECK (payload_mismatch (rec.data, rec.size, first + k) < 0);
    if (out && k == 0)
      *out = rec;
  }
}

/* A record carrying a 64-bit sequence number (payload size 8). */
static inline TbqStatus
write_seq (TbqWriter * w, uint16_t type, uint64_t seq)
{
  return tbq_writer_write (w, type, &seq, sizeof seq);
}

static inline uint64_t
record_seq (const TbqRecord * rec)
{
  uint64_t v;

  CHECK_EQ (rec->size, sizeof v);
  memcpy (&v, rec->data, sizeof v);
  return v;
}

/* Read one seq record within EVENTUALLY_NS and check it is `want`. */
static inline void
expect_seq (TbqReader * r, uint64_t want)
{
  TbqRecord rec;

  CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
  CHECK_EQ (record_seq (&rec), want);
}

/* Nothing arrives within QUIET_NS. */
static inline void
expect_nothing (TbqReader * r)
{
  TbqRecord rec;

  CHECK_STATUS (read_record (r, &rec, QUIET_NS), TBQ_TIMEOUT);
}

/* Run the copier once in the caller's thread (no copier thread running). */
static inline void
copier_step_or_fail (TbqQueue * q)
{
  TbqStatus st = tbq_copier_step (q, 0);

  if (st != TBQ_OK && st != TBQ_TIMEOUT) {
    printf ("# tbq_copier_step: %s\n", tbq_status_to_string (st));
    fflush (stdout);
    _exit (1);
  }
}

/* With no copier thread, run the copier once here, then take the next
 * record and check it is `want`: what the copier can move is exactly what
 * the writer has published, whatever the schedule. */
static inline void
expect_published_seq (TbqQueue * q, TbqReader * r, uint64_t want)
{
  TbqRecord rec;

  copier_step_or_fail (q);
  CHECK_OK (tbq_reader_next (r, &rec));
  CHECK_EQ (record_seq (&rec), want);
}

/* With no copier thread: nothing is published.  Unlike expect_nothing(),
 * no window of time: a record published too early is always seen. */
static inline void
expect_nothing_published (TbqQueue * q, TbqReader * r)
{
  TbqRecord rec;

  copier_step_or_fail (q);
  CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_EMPTY);
}

#endif /* TBQ_LIB_TEST_H */

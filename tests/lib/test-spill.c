/* Spill: the sink layer continues in a file, and comes back in order.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test writes records that carry their sequence number and a byte
 * pattern derived from it, far more than the sink budget holds, with no
 * reader taking them: every write must return TBQ_OK (the backlog goes to
 * the file).  Then the reader checks every record, in order.  Failures of
 * the file (a full disk, an I/O error, a damaged or truncated file) are
 * made through tests/common/fail-io.c (pwritev() and pread() of the
 * executable's own) or by writing to the file, with `remove` off.
 * Waits are for states (statistics), with EVENTUALLY_NS as a hang check.
 */
#include "lib-test.h"
#include "../common/fail-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define BLOCK 4096
#define SINK_BLOCKS 16          /* a 64 KiB budget */
#define LARGE 3000              /* above the inline limit of 4 KiB blocks */
#define TYPE_PLAIN 1
#define TYPE_OWNS 7             /* its first 8 bytes "own" something */

/* ---- records ---- */

/* Record i: its size, and its bytes (the sequence number, then a pattern). */
static uint32_t
size_of (uint64_t i)
{
  if (i % 17 == 5)
    return LARGE + (uint32_t) (i % 64);
  return 8 + (uint32_t) (i * 7 % 200);
}

static uint16_t
type_of (uint64_t i)
{
  return i % 5 == 2 ? TYPE_OWNS : TYPE_PLAIN;
}

static void
fill (unsigned char *p, uint64_t i, uint32_t size)
{
  uint32_t k;

  memcpy (p, &i, sizeof i);
  for (k = sizeof i; k < size; k++)
    p[k] = (unsigned char) (i * 31 + k);
}

static bool
matches (const TbqRecord * rec, uint64_t i)
{
  unsigned char want[LARGE + 64];

  if (rec->size != size_of (i) || rec->type != type_of (i))
    return false;
  fill (want, i, rec->size);
  return memcmp (rec->data, want, rec->size) == 0;
}

static TbqStatus
write_one (TbqWriter * w, uint64_t i)
{
  unsigned char buf[LARGE + 64];
  uint32_t size = size_of (i);

  fill (buf, i, size);
  return tbq_writer_write (w, type_of (i), buf, size);
}

/* TYPE_OWNS records own their first 8 bytes (their sequence number). */
static uint32_t
owned (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  (void) data;
  (void) size;
  (void) user_data;
  return type == TYPE_OWNS ? 8 : 0;
}

typedef struct
{
  _Atomic int failed, resumed;
  char msg[512];
} Reports;

static void
on_error (int failed, const char *msg, void *user_data)
{
  Reports *r = user_data;

  if (failed) {
    snprintf (r->msg, sizeof r->msg, "%s", msg);
    atomic_fetch_add (&r->failed, 1);
  } else {
    atomic_fetch_add (&r->resumed, 1);
  }
}

static char spill_dir[256];

static const char *
dir (void)
{
  const char *t = getenv ("TMPDIR");

  snprintf (spill_dir, sizeof spill_dir, "%s/tbq-spill-test-XXXXXX",
      t != NULL ? t : "/tmp");
  return spill_dir;
}

static void
spill_config (TbqConfig * cfg)
{
  small_config (cfg, BLOCK);
  cfg->source.min_blocks = cfg->source.max_blocks = 4;
  cfg->sink.min_blocks = 2;
  cfg->sink.max_blocks = SINK_BLOCKS;
  cfg->sink.max_idle_blocks = 2;
  cfg->wake = TBQ_WAKE_ON_DEMAND;
}

/* Spill on, and the copier thread started. */
static void
spill_start (TbqQueue * q, int remove, uint64_t max_bytes, Reports * reports)
{
  TbqSpillConfig sc;
  char msg[256] = "";

  tbq_spill_config_init (&sc);
  sc.temp_template = dir ();
  sc.remove = remove;
  sc.max_bytes = max_bytes;
  sc.owned = owned;
  sc.on_error = reports != NULL ? on_error : NULL;
  sc.error_data = reports;
  if (tbq_queue_enable_spill (q, &sc, msg, sizeof msg) != TBQ_OK) {
    printf ("# enable spill: %s\n", msg);
    fflush (stdout);
    _exit (1);
  }
  CHECK_OK (tbq_queue_start (q));
}

static TbqQueue *
spill_queue (TbqWriter ** w, TbqReader ** r, int remove, uint64_t max_bytes,
    Reports * reports)
{
  TbqConfig cfg;
  TbqQueue *q;

  spill_config (&cfg);
  q = open_queue (&cfg, w, r);
  spill_start (q, remove, max_bytes, reports);
  return q;
}

/* A spilling queue with one writer and `n` readers of several. */
static TbqQueue *
spill_queue_readers (TbqWriter ** w, TbqReader ** r, int n)
{
  TbqConfig cfg;
  TbqQueue *q;
  int k;

  spill_config (&cfg);
  cfg.max_readers = (uint32_t) n;
  q = queue_new_or_fail (&cfg);
  CHECK_OK (tbq_writer_new (q, w));
  for (k = 0; k < n; k++)
    CHECK_OK (tbq_reader_new (q, &r[k]));
  spill_start (q, 1, 0, NULL);
  return q;
}

/* Write records [from, to), each accepted. */
static void
write_range (TbqWriter * w, uint64_t from, uint64_t to)
{
  uint64_t i;

  for (i = from; i < to; i++)
    CHECK_OK (write_one (w, i));
  tbq_writer_flush (w);
}

/* Take records [from, to) and check each. */
static void
read_range (TbqReader * r, uint64_t from, uint64_t to)
{
  uint64_t i;

  for (i = from; i < to; i++) {
    TbqRecord rec;
    TbqStatus st = read_record (r, &rec, EVENTUALLY_NS);

    if (st != TBQ_OK || !matches (&rec, i)) {
      printf ("# record %" PRIu64 ": %s, size %u\n", i,
          tbq_status_to_string (st), st == TBQ_OK ? rec.size : 0);
      fflush (stdout);
      _exit (1);
    }
  }
}

/* Payload bytes of records [0, n). */
static uint64_t
bytes_of (uint64_t n)
{
  uint64_t i, b = 0;

  for (i = 0; i < n; i++)
    b += size_of (i);
  return b;
}

/* How many records make `times` budgets of payload. */
static uint64_t
records_for (uint64_t times)
{
  uint64_t n = 0;

  while (bytes_of (n) < times * SINK_BLOCKS * BLOCK)
    n += 100;
  return n;
}

/* The `n` records came out, and the file holds nothing unread: every
 * byte written was read back, intact. */
static void
expect_all_read_back (TbqQueue * q, uint64_t n)
{
  TbqStats st = stats_of (q);

  CHECK_EQ (st.records_out, n);
  CHECK_EQ (st.spill.records_on_disk, 0);
  CHECK_EQ (st.spill.level_bytes, 0);
  CHECK_EQ (st.spill.bytes_read, st.spill.bytes_written);
  CHECK_EQ (st.spill.checksum_errors, 0);
}

/* ---- tests ---- */

static void
a_backlog_twenty_times_the_budget_spills_and_comes_back_in_order (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 1, 0, NULL);
  uint64_t n = records_for (20);
  TbqStats st;

  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  st = stats_of (q);
  CHECK (st.spill.units_written > 0);
  CHECK (st.spill.runs >= 1);
  CHECK (st.extents.budget_peak <= (uint64_t) SINK_BLOCKS * BLOCK);
  CHECK (tbq_queue_spill_path (q) != NULL);
  read_range (r, 0, n);
  expect_all_read_back (q, n);
  tbq_queue_free (q, NULL, NULL);
}

static void
reading_while_writing_keeps_one_order_across_memory_and_file (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 1, 0, NULL);
  uint64_t n = records_for (4), i;

  /* Rounds of a large write and a smaller read: the backlog grows past
   * the mark, runs begin and end, and the reader goes from memory to the
   * file and back. */
  for (i = 0; i < 6; i++) {
    write_range (w, i * n, (i + 1) * n);
    read_range (r, i * n / 2, (i + 1) * n / 2);
  }
  read_range (r, 3 * n, 6 * n);
  CHECK (stats_of (q).spill.units_written > 0);
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  uint64_t calls, sum;
} Released;

static void
release_owned (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  Released *rel = user_data;
  uint64_t i;

  if (type != TYPE_OWNS)
    return;
  CHECK (size >= 8);
  memcpy (&i, data, sizeof i);
  CHECK_EQ (type_of (i), TYPE_OWNS);
  rel->calls++;
  rel->sum += i;
}

static void
a_discard_releases_what_spilled_records_own_and_empties_the_file (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 0, 0, NULL);
  uint64_t n = records_for (10), i, owners = 0, sum = 0;
  Released rel = { 0, 0 };
  struct stat sb;
  TbqStats st;

  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  WAIT_UNTIL (stats_of (q).spill.units_written > 4);
  for (i = 0; i < n; i++) {
    if (type_of (i) == TYPE_OWNS) {
      owners++;
      sum += i;
    }
  }
  /* A discard runs with the copier stopped. */
  tbq_queue_stop (q);
  tbq_queue_discard (q, release_owned, &rel);
  CHECK_EQ (rel.calls, owners);
  CHECK_EQ (rel.sum, sum);
  st = stats_of (q);
  CHECK_EQ (st.records_discarded, n);
  CHECK_EQ (st.spill.level_bytes, 0);
  CHECK_EQ (st.spill.records_on_disk, 0);
  CHECK (stat (tbq_queue_spill_path (q), &sb) == 0);
  CHECK_EQ (sb.st_size, 0);
  /* The queue goes on, file and all. */
  CHECK_OK (tbq_queue_start (q));
  write_range (w, 0, n);
  read_range (r, 0, n);
  unlink (tbq_queue_spill_path (q));
  tbq_queue_free (q, NULL, NULL);
}

/* ---- several readers ---- */

/* A record's number, after checking its bytes (Crew, lib-test.h). */
static uint64_t
spilled_number (const TbqRecord * rec, void *data)
{
  uint64_t i;

  (void) data;
  CHECK (rec->size >= sizeof i);
  memcpy (&i, rec->data, sizeof i);
  if (!matches (rec, i)) {
    printf ("# record %" PRIu64 ": wrong bytes (size %u)\n", i, rec->size);
    CHECK (0);
  }
  return i;
}

/* Records [0, n), with no reader taking any: the backlog goes to the
 * file. */
static void
write_spilled (TbqQueue * q, TbqWriter * w, uint64_t n)
{
  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  CHECK (stats_of (q).spill.units_written > 0);
}

static void
several_readers_take_a_spilled_backlog_back_whole (void)
{
  TbqWriter *w;
  TbqReader *r[3];
  TbqQueue *q = spill_queue_readers (&w, r, 3);
  uint64_t n = records_for (20);
  Crew crew;

  write_spilled (q, w, n);
  /* Batches of units read back, of the blocks before and after the
   * run: every record once, each reader's in order. */
  crew_start (&crew, r, 3, n, spilled_number, NULL);
  crew_join (&crew);
  expect_all_read_back (q, n);
  tbq_queue_free (q, NULL, NULL);
}

static void
several_readers_reading_while_writing_across_memory_and_file (void)
{
  TbqWriter *w;
  TbqReader *r[3];
  TbqQueue *q = spill_queue_readers (&w, r, 3);
  uint64_t n = records_for (8);
  Crew crew;

  /* A backlog in the file first, then readers and the writer together:
   * runs end while readers wait at the marker, and begin again. */
  write_spilled (q, w, n);
  crew_start (&crew, r, 3, 3 * n, spilled_number, NULL);
  write_range (w, n, 3 * n);
  crew_join (&crew);
  tbq_queue_free (q, NULL, NULL);
}

typedef struct
{
  _Atomic unsigned char *delivered;
  unsigned char *released;
  uint64_t calls;
} OwnedLedger;

static void
release_owned_once (uint16_t type, const void *data, uint32_t size,
    void *user_data)
{
  OwnedLedger *l = user_data;
  uint64_t i;

  if (type != TYPE_OWNS)
    return;
  CHECK (size >= 8);
  memcpy (&i, data, sizeof i);
  CHECK_EQ (atomic_load (&l->delivered[i]), 0);
  CHECK_EQ (l->released[i], 0);
  l->released[i] = 1;
  l->calls++;
}

static void
take_some (TbqReader * r, uint64_t count, OwnedLedger * l)
{
  uint64_t k;

  for (k = 0; k < count; k++) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    atomic_store (&l->delivered[spilled_number (&rec, NULL)], 1);
  }
}

static void
a_discard_with_readers_holding_batches_of_the_file (void)
{
  TbqWriter *w;
  TbqReader *r[3];
  TbqQueue *q = spill_queue_readers (&w, r, 3);
  uint64_t n = records_for (10), i, taken;
  OwnedLedger l;
  TbqStats st;

  l.delivered = calloc (n, 1);
  l.released = calloc (n, 1);
  l.calls = 0;
  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  WAIT_UNTIL (stats_of (q).spill.units_written > 4);
  /* Memory holds less than a budget, so half the records reach into the
   * file: the other two readers claim batches of a unit read back. */
  take_some (r[0], n / 2, &l);
  take_some (r[1], 1, &l);
  take_some (r[2], 1, &l);
  taken = n / 2 + 2;
  tbq_queue_stop (q);
  tbq_queue_discard (q, release_owned_once, &l);
  st = stats_of (q);
  CHECK_EQ (st.records_discarded, n - taken);
  CHECK_EQ (st.spill.records_on_disk, 0);
  /* Every record that owns something: taken, or released, once. */
  for (i = 0; i < n; i++)
    if (type_of (i) == TYPE_OWNS)
      CHECK_EQ (atomic_load (&l.delivered[i]) + l.released[i], 1);
  /* The queue goes on, file and all. */
  CHECK_OK (tbq_queue_start (q));
  write_range (w, 0, n);
  read_range (r[1], 0, n);
  tbq_queue_free (q, NULL, NULL);
  free ((void *) l.delivered);
  free (l.released);
}

/* Wait until the file holds at least `units` units (none taken yet). */
static void
wait_for_units (TbqQueue * q, uint64_t units)
{
  WAIT_UNTIL (stats_of (q).spill.units_written >= units);
}

/* Read in order until something else than a record comes: its status.
 * Every record that came must be the next one. */
static TbqStatus
read_until_error (TbqReader * r, uint64_t n, uint64_t * got)
{
  TbqStatus st = TBQ_OK;

  for (*got = 0; *got < n; (*got)++) {
    TbqRecord rec;

    st = read_record (r, &rec, EVENTUALLY_NS);
    if (st != TBQ_OK)
      break;
    if (!matches (&rec, *got)) {
      printf ("# record %" PRIu64 " damaged\n", *got);
      fflush (stdout);
      _exit (1);
    }
  }
  return st;
}

/* Whether `msg` says what one of `says` (|-separated) says. */
static bool
says_one_of (const char *msg, const char *says)
{
  char buf[256], *tok, *save = NULL;

  snprintf (buf, sizeof buf, "%s", says);
  for (tok = strtok_r (buf, "|", &save); tok != NULL;
      tok = strtok_r (NULL, "|", &save))
    if (strstr (msg, tok) != NULL)
      return true;
  return false;
}

/* Write records [0, n) with nothing read, then `damage` the file (kept:
 * `remove` off) once it holds far more units than are read ahead (4):
 * its middle is still to be read. */
static void
write_and_damage (TbqQueue * q, TbqWriter * w, uint64_t n,
    void (*damage) (int fd, off_t size))
{
  struct stat sb;
  int fd;

  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  wait_for_units (q, 64);
  fd = open (tbq_queue_spill_path (q), O_RDWR);
  CHECK (fd >= 0);
  CHECK (fstat (fd, &sb) == 0);
  damage (fd, sb.st_size);
  close (fd);
}

static void
check_damage (void (*damage) (int fd, off_t size), const char *says)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 0, 0, NULL);
  uint64_t n = records_for (40), got;
  char msg[512];

  write_and_damage (q, w, n, damage);
  CHECK_STATUS (read_until_error (r, n, &got), TBQ_IO_ERROR);
  CHECK (got > 0 && got < n);
  /* It stays an error: nothing after the damage is delivered. */
  {
    TbqRecord rec;

    CHECK_STATUS (tbq_reader_next (r, &rec), TBQ_IO_ERROR);
  }
  CHECK_STATUS (tbq_queue_take_error (q, msg, sizeof msg), TBQ_IO_ERROR);
  CHECK (strstr (msg, tbq_queue_spill_path (q)) != NULL);
  CHECK (strstr (msg, "offset") != NULL);
  if (!says_one_of (msg, says)) {
    printf ("# message: %s\n", msg);
    fflush (stdout);
    _exit (1);
  }
  CHECK (stats_of (q).spill.read_errors == 1);
  unlink (tbq_queue_spill_path (q));
  tbq_queue_free (q, NULL, NULL);
}

static void
flip_middle (int fd, off_t size)
{
  unsigned char c;

  CHECK (pread (fd, &c, 1, size / 2) == 1);
  c ^= 0x5a;
  CHECK (pwrite (fd, &c, 1, size / 2) == 1);
}

static void
truncate_middle (int fd, off_t size)
{
  CHECK (ftruncate (fd, size / 2 + 3) == 0);
}

/* A unit's first record says it is larger than its unit (the record
 * header follows the unit's 64-byte header).  The ninth unit: the spill
 * thread reads up to four units ahead before the reader asks, so the
 * first ones may be in memory already when the damage comes (then every
 * record reads back, and the test saw none of it: seen under
 * ThreadSanitizer). */
static void
break_first_record (int fd, off_t size)
{
  uint32_t huge = 0xfffffff0u;
  uint64_t unit_len;
  off_t off = 0;
  int k;

  for (k = 0; k < 8; k++) {
    /* unit_len: 32 bytes into a unit's header (lib/spill.c). */
    CHECK (pread (fd, &unit_len, sizeof unit_len, off + 32)
        == sizeof unit_len);
    CHECK (unit_len >= 64);
    off += (off_t) unit_len;
    CHECK (off + 68 <= size);
  }
  CHECK (pwrite (fd, &huge, sizeof huge, off + 64) == sizeof huge);
}

static void
a_flipped_byte_is_an_io_error_and_no_damaged_record (void)
{
  check_damage (flip_middle, "checksum mismatch|damaged");
}

static void
a_record_larger_than_its_unit_is_an_io_error (void)
{
  /* Found out while its checksum state is in use: it is freed (ASan). */
  check_damage (break_first_record, "damaged");
}

static void
a_truncated_file_is_an_io_error_and_no_damaged_record (void)
{
  /* The spill thread may write on past the cut (the file is then
   * sparse, and the cut unit reads back as zeros): its header or its
   * checksum is wrong. */
  check_damage (truncate_middle, "truncated|checksum mismatch|damaged");
}

/* What a callback consumer was given, in order. */
typedef struct
{
  _Atomic uint64_t got;
  _Atomic int wrong;
} Consumed;

static void
consume_in_order (const TbqRecord * rec, void *user_data)
{
  Consumed *c = user_data;
  uint64_t i = atomic_load (&c->got);

  if (!matches (rec, i))
    atomic_store (&c->wrong, 1);
  atomic_store (&c->got, i + 1);
}

typedef struct
{
  TbqReader *r;
  _Atomic int returned;
} StopCall;

static void *
stop_consumer (void *arg)
{
  StopCall *c = arg;

  tbq_consumer_stop (c->r);
  atomic_store (&c->returned, 1);
  return NULL;
}

/* A callback consumer that meets a unit of the file it cannot read back
 * delivers every record before it, in order, and nothing after it (never
 * the record before again); tbq_consumer_stop() returns. */
static void
a_callback_consumer_stops_at_a_damaged_unit (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 0, 0, NULL);
  uint64_t n = records_for (40);
  Consumed c = { 0, 0 };
  StopCall stop = { r, 0 };
  char msg[512];
  pthread_t th;

  write_and_damage (q, w, n, truncate_middle);
  CHECK_OK (tbq_consumer_start (r, consume_in_order, &c));
  WAIT_UNTIL (stats_of (q).spill.read_errors == 1);
  CHECK (pthread_create (&th, NULL, stop_consumer, &stop) == 0);
  WAIT_UNTIL (atomic_load (&stop.returned));
  pthread_join (th, NULL);
  CHECK_EQ (atomic_load (&c.wrong), 0);
  CHECK (atomic_load (&c.got) > 0 && atomic_load (&c.got) < n);
  CHECK_STATUS (tbq_queue_take_error (q, msg, sizeof msg), TBQ_IO_ERROR);
  unlink (tbq_queue_spill_path (q));
  tbq_queue_free (q, NULL, NULL);
}

static void
a_read_error_is_an_io_error (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 1, 0, NULL);
  uint64_t n = records_for (10), got;
  char msg[512];

  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  wait_for_units (q, 8);
  fail_reads_with (EIO);
  CHECK_STATUS (read_until_error (r, n, &got), TBQ_IO_ERROR);
  fail_reads_with (0);
  CHECK_STATUS (tbq_queue_take_error (q, msg, sizeof msg), TBQ_IO_ERROR);
  CHECK (strstr (msg, strerror (EIO)) != NULL);
  /* A discard clears it: the queue is usable again. */
  tbq_queue_stop (q);
  tbq_queue_discard (q, NULL, NULL);
  CHECK_OK (tbq_queue_start (q));
  write_range (w, 0, 100);
  read_range (r, 0, 100);
  tbq_queue_free (q, NULL, NULL);
}

static void
a_read_error_stops_every_reader (void)
{
  TbqWriter *w;
  TbqReader *r[3];
  TbqQueue *q = spill_queue_readers (&w, r, 3);
  uint64_t n = records_for (10), got;
  TbqRecord rec;
  int k;

  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  wait_for_units (q, 8);
  fail_reads_with (EIO);
  CHECK_STATUS (read_until_error (r[0], n, &got), TBQ_IO_ERROR);
  fail_reads_with (0);
  /* Nothing after the error comes, to any reader; a wait says "look". */
  for (k = 0; k < 3; k++) {
    CHECK_STATUS (tbq_reader_next (r[k], &rec), TBQ_IO_ERROR);
    CHECK_STATUS (tbq_reader_peek (r[k], &rec), TBQ_IO_ERROR);
    CHECK_OK (tbq_reader_wait (r[k], EVENTUALLY_NS));
  }
  /* A discard clears it for every reader. */
  tbq_queue_stop (q);
  tbq_queue_discard (q, NULL, NULL);
  CHECK_OK (tbq_queue_start (q));
  write_range (w, 0, 100);
  read_range (r[2], 0, 100);
  tbq_queue_free (q, NULL, NULL);
}

/* Write records from `from` on until the queue is full, at most `n`; the
 * accepted ones are consecutive.  Returns how many were accepted.  Full
 * is what the library says it is: a write finds no room (it waits up to
 * FULL_WAIT_NS for it) while the spill cannot take more (its `failing`:
 * writes fail or the file is full).  A write that times out while the
 * spill still takes data met a copier or spill thread that was slow for
 * a moment, however long: it is tried again, for up to a minute. */
#define FULL_WAIT_NS (200 * MS_NS)
#define FULL_TRIES 300
static uint64_t
write_until_full (TbqQueue * q, TbqWriter * w, uint64_t from, uint64_t n)
{
  uint64_t i = from;
  int tries = 0;

  CHECK_OK (tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK,
          FULL_WAIT_NS));
  while (i < from + n) {
    TbqStatus s = write_one (w, i);

    if (s == TBQ_OK) {
      i++;
      continue;
    }
    CHECK_STATUS (s, TBQ_TIMEOUT);
    if (stats_of (q).spill.failing)
      break;
    CHECK (++tries < FULL_TRIES);
  }
  tbq_writer_flush (w);
  CHECK_OK (tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK, -1));
  return i - from;
}

/* Write records [from, to), which the queue has room for: each write
 * waits for it as long as a slow thread may take (a minute), and none is
 * refused. */
static void
write_room_for (TbqWriter * w, uint64_t from, uint64_t to)
{
  CHECK_OK (tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK,
          60 * 1000 * MS_NS));
  write_range (w, from, to);
  CHECK_OK (tbq_writer_set_backpressure (w, TBQ_BACKPRESSURE_BLOCK, -1));
}

static void
a_full_disk_keeps_every_record_and_spilling_resumes (void)
{
  TbqWriter *w;
  TbqReader *r;
  Reports rep = { 0, 0, "" };
  TbqQueue *q = spill_queue (&w, &r, 1, 0, &rep);
  uint64_t n = records_for (6), accepted;
  TbqStats st;

  fail_writes_with (ENOSPC);
  accepted = write_until_full (q, w, 0, n);
  /* The memory held what it could; the next record was refused, not
   * lost. */
  CHECK (accepted < n);
  WAIT_UNTIL (atomic_load (&rep.failed) == 1);
  CHECK (strstr (rep.msg, strerror (ENOSPC)) != NULL);
  CHECK (strstr (rep.msg, "spill file") != NULL);
  st = stats_of (q);
  CHECK (st.spill.write_errors >= 1);
  CHECK_EQ (st.spill.units_written, 0);
  CHECK_EQ (st.records_in, accepted);
  /* Space comes back: the spill writes again, and the rest is taken. */
  fail_writes_with (0);
  WAIT_UNTIL (atomic_load (&rep.resumed) == 1);
  write_room_for (w, accepted, n);
  CHECK (stats_of (q).spill.units_written > 0);
  read_range (r, 0, n);
  CHECK_EQ (atomic_load (&rep.failed), 1);
  tbq_queue_free (q, NULL, NULL);
}

static void
max_bytes_bounds_what_the_file_holds (void)
{
  TbqWriter *w;
  TbqReader *r;
  const uint64_t max = 64 * 1024;
  TbqQueue *q = spill_queue (&w, &r, 1, max, NULL);
  uint64_t n = records_for (20), accepted;
  TbqStats st;

  accepted = write_until_full (q, w, 0, n);
  CHECK (accepted < n);
  /* More than memory holds went in: the rest is in the file. */
  CHECK (bytes_of (accepted) > (uint64_t) SINK_BLOCKS * BLOCK);
  st = stats_of (q);
  CHECK (st.spill.units_written > 0);
  CHECK (st.spill.level_bytes <= max);
  CHECK (st.spill.failing == 1);
  read_range (r, 0, accepted);
  /* Read back, the queue takes as much again (less than the budget and
   * the file together). */
  write_room_for (w, accepted, accepted + 200);
  read_range (r, accepted, accepted + 200);
  tbq_queue_free (q, NULL, NULL);
}

/* The budget a queue's memory may take: the sink pool's blocks and
 * extents in use, whoever holds them (TbqExtentStats.budget_peak is the
 * highest it reached). */
#define BUDGET ((uint64_t) SINK_BLOCKS * BLOCK)

typedef struct
{
  TbqWriter *w;
  uint64_t from, to;
} RangeWriter;

/* Write records [from, to) on a thread of its own, each waiting for room
 * as long as it takes. */
static void *
range_writer_main (void *arg)
{
  RangeWriter *rw = arg;

  write_range (rw->w, rw->from, rw->to);
  return NULL;
}

/* The file full (max_bytes) and memory full of what cannot go to it, then
 * everything read back while a writer thread writes as much again, as
 * fast as there is room: the budget never goes past its end, whichever
 * way the threads go.  What the budget covers is every sink block in use
 * and every extent in use: those of the backlog in memory, of the spill
 * chain that waits for room in the file, and of the units read back (not
 * the idle blocks and extents kept for reuse).  The unit the reader waits
 * for is read back into the room the copier and the writers leave free
 * (an eighth), wherever they stand. */
static void
a_full_file_is_read_back_within_the_budget (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 1, 64 * 1024, NULL);
  RangeWriter rw;
  pthread_t th;
  TbqStats st;

  rw.w = w;
  rw.from = write_until_full (q, w, 0, records_for (20));
  rw.to = rw.from + records_for (20);
  st = stats_of (q);
  CHECK (st.spill.failing == 1);
  CHECK (st.spill.units_written > 0);
  CHECK (pthread_create (&th, NULL, range_writer_main, &rw) == 0);
  read_range (r, 0, rw.to);
  pthread_join (th, NULL);
  st = stats_of (q);
  CHECK (st.spill.bytes_read > 0);
  if (st.extents.budget_peak > BUDGET) {
    printf ("# budget peak %" PRIu64 " of %" PRIu64 "\n",
        st.extents.budget_peak, BUDGET);
    fflush (stdout);
    _exit (1);
  }
  tbq_queue_free (q, NULL, NULL);
}

/* A zero-copy reader that keeps every record it takes (a reference to
 * its block) while it reads the file back: what it kept from memory is
 * the budget's, a large record read back from the file it takes out of
 * the budget (tbq_block_leave_budget()), a small one read back it would
 * copy (it does not keep it).  The file still comes back whole within the
 * budget, into the room kept for it, and what the reader keeps of it
 * does not count. */
static void
records_kept_from_memory_leave_room_to_read_the_file_back (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 1, 0, NULL);
  uint64_t n = records_for (10), i, kept = 0, from_file = 0, out = 0;
  TbqBlock **held = calloc (n, sizeof *held);
  TbqStats st;

  CHECK (held != NULL);
  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  WAIT_UNTIL (stats_of (q).spill.units_written > 4);
  for (i = 0; i < n; i++) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    CHECK (matches (&rec, i));
    if (tbq_block_from_file (rec.block)) {
      from_file++;
      /* A large record's own extent leaves the budget; a unit's records,
       * which small records share, never do. */
      if (!tbq_block_leave_budget (rec.block)) {
        CHECK (rec.size <= tbq_queue_max_inline_size (q));
        continue;
      }
      CHECK (rec.size > tbq_queue_max_inline_size (q));
      out++;
    } else {
      CHECK_EQ (tbq_block_leave_budget (rec.block), 0);
    }
    tbq_block_ref (rec.block);
    held[kept++] = rec.block;
  }
  CHECK (from_file > out && out > 0);
  CHECK (kept > out);
  st = stats_of (q);
  CHECK_EQ (st.spill.bytes_read, st.spill.bytes_written);
  if (st.extents.budget_peak > BUDGET) {
    printf ("# budget peak %" PRIu64 " of %" PRIu64 "\n",
        st.extents.budget_peak, BUDGET);
    fflush (stdout);
    _exit (1);
  }
  for (i = 0; i < kept; i++)
    tbq_block_unref (held[i]);
  free (held);
  tbq_queue_free (q, NULL, NULL);
}

/* A real full disk: a small tmpfs of its own (a mount namespace of the
 * test's process: root only), nearly filled by another file.  The spill
 * fills the rest and gets ENOSPC: reported, the queue is full, nothing is
 * lost; the other file goes, space returns, spilling resumes and every
 * record comes back. */
static void
a_real_full_tmpfs_is_a_full_queue_and_spilling_resumes (void)
{
  char mnt[] = "/tmp/tbq-tmpfs-XXXXXX", filler[64], tmpl[64];
  TbqSpillConfig sc;
  TbqConfig cfg;
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q;
  Reports rep = { 0, 0, "" };
  /* Six budgets: more than memory and the file's first 64 KiB take, and
   * with room to spare in the file's 512 KiB once the filler goes (what
   * the file holds of them, their records, each unit's header and their
   * payloads, is about 390 KB; eight budgets took up to 520 KB, at its
   * edge, and some runs found it full again). */
  uint64_t n = records_for (6), accepted;
  char msg[256] = "", block[4096];
  int fd, i;

  if (geteuid () != 0)
    TAP_SKIP ("not root: no tmpfs of its own to fill");
  if (unshare (CLONE_NEWNS) != 0)
    TAP_SKIP ("unshare (CLONE_NEWNS): %s", strerror (errno));
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    TAP_SKIP ("making the mounts private: %s", strerror (errno));
  CHECK (mkdtemp (mnt) != NULL);
  if (mount ("tmpfs", mnt, "tmpfs", 0, "size=512k") != 0) {
    rmdir (mnt);
    TAP_SKIP ("mount -t tmpfs: %s", strerror (errno));
  }
  /* 448 KiB taken: 64 KiB left for the spill. */
  snprintf (filler, sizeof filler, "%s/filler", mnt);
  fd = open (filler, O_WRONLY | O_CREAT, 0600);
  CHECK (fd >= 0);
  memset (block, 0x55, sizeof block);
  for (i = 0; i < 112; i++)
    CHECK (write (fd, block, sizeof block) == (ssize_t) sizeof block);
  close (fd);

  small_config (&cfg, BLOCK);
  cfg.source.min_blocks = cfg.source.max_blocks = 4;
  cfg.sink.min_blocks = 2;
  cfg.sink.max_blocks = SINK_BLOCKS;
  cfg.sink.max_idle_blocks = 2;
  cfg.wake = TBQ_WAKE_ON_DEMAND;
  q = open_queue (&cfg, &w, &r);
  tbq_spill_config_init (&sc);
  snprintf (tmpl, sizeof tmpl, "%s/spill-XXXXXX", mnt);
  sc.temp_template = tmpl;
  sc.owned = owned;
  sc.on_error = on_error;
  sc.error_data = &rep;
  CHECK_OK (tbq_queue_enable_spill (q, &sc, msg, sizeof msg));
  CHECK_OK (tbq_queue_start (q));

  accepted = write_until_full (q, w, 0, n);
  CHECK (accepted < n);
  WAIT_UNTIL (atomic_load (&rep.failed) == 1);
  CHECK (strstr (rep.msg, strerror (ENOSPC)) != NULL);
  CHECK (stats_of (q).spill.units_written > 0);
  CHECK_EQ (stats_of (q).records_in, accepted);
  /* Space returns. */
  CHECK (unlink (filler) == 0);
  WAIT_UNTIL (atomic_load (&rep.resumed) == 1);
  write_room_for (w, accepted, n);
  read_range (r, 0, n);
  tbq_queue_free (q, NULL, NULL);
  umount2 (mnt, MNT_DETACH);
  rmdir (mnt);
}

/* Space read back is given back to the file system (holes punched) while
 * the spill thread has nothing else to do: a reader that has read most of
 * a long backlog, but not reached its end (the file cannot be emptied),
 * leaves a file whose allocated blocks are what is unread, not what was
 * ever written.  (Skipped where the file system has no holes.) */
static void
read_space_goes_back_while_the_file_is_in_use (void)
{
  TbqWriter *w;
  TbqReader *r;
  TbqQueue *q = spill_queue (&w, &r, 0, 0, NULL);
  uint64_t n = records_for (400), i;
  const char *path = tbq_queue_spill_path (q);
  int64_t deadline;
  struct stat sb;
  TbqStats st;
  uint64_t allocated = 0, bound = 0;

  CHECK (path != NULL);
  write_range (w, 0, n);
  CHECK_OK (tbq_writer_sync (w, EVENTUALLY_NS));
  /* The whole backlog is in the file before anything is read. */
  deadline = now_ns () + EVENTUALLY_NS;
  do {
    st = stats_of (q);
  } while (st.spill.bytes_written < bytes_of (n) - 2 * SINK_BLOCKS * BLOCK
      && now_ns () < deadline && usleep (1000) == 0);
  CHECK (st.spill.bytes_written > (uint64_t) 20 << 20);
  CHECK_EQ (stat (path, &sb), 0);
  CHECK ((uint64_t) sb.st_blocks * 512 >= st.spill.bytes_written / 2);
  /* Nine tenths read: the run goes on, the file holds the rest. */
  for (i = 0; i < n * 9 / 10; i++) {
    TbqRecord rec;

    CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    CHECK (matches (&rec, i));
  }
  /* Unread, in the file: its level; read ahead, up to four units; punched
   * in steps of 4 MiB, so up to one step more. */
  deadline = now_ns () + EVENTUALLY_NS;
  for (;;) {
    st = stats_of (q);
    CHECK_EQ (stat (path, &sb), 0);
    allocated = (uint64_t) sb.st_blocks * 512;
    bound = st.spill.level_bytes + ((uint64_t) 4 << 20) + (4 << 20) + 65536;
    if (allocated <= bound || now_ns () > deadline)
      break;
    usleep (1000);
  }
  if (allocated > bound) {
    /* No holes here (a file system without FALLOC_FL_PUNCH_HOLE)? */
    int fd = open (path, O_RDWR);
    int holes = fd >= 0 && fallocate (fd, FALLOC_FL_PUNCH_HOLE
        | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0;

    if (fd >= 0)
      close (fd);
    if (!holes) {
      tbq_queue_free (q, NULL, NULL);
      TAP_SKIP ("the file system of %s punches no holes\n", path);
    }
    printf ("# %s: %" PRIu64 " bytes allocated, %" PRIu64 " unread\n", path,
        allocated, st.spill.level_bytes);
    fflush (stdout);
  }
  CHECK (allocated <= bound);
  CHECK (st.spill.level_bytes > 0);
  read_range (r, n * 9 / 10, n);
  CHECK_EQ (unlink (path), 0);
  tbq_queue_free (q, NULL, NULL);
}

static void
a_template_without_xs_is_refused (void)
{
  TbqConfig cfg;
  TbqSpillConfig sc;
  TbqQueue *q;
  char msg[256];

  small_config (&cfg, BLOCK);
  q = queue_new_or_fail (&cfg);
  tbq_spill_config_init (&sc);
  CHECK_STATUS (tbq_queue_enable_spill (q, &sc, msg, sizeof msg),
      TBQ_INVALID_CONFIG);
  sc.temp_template = "/tmp/tbq-spill";
  CHECK_STATUS (tbq_queue_enable_spill (q, &sc, msg, sizeof msg),
      TBQ_INVALID_CONFIG);
  CHECK (strstr (msg, "XXXXXX") != NULL);
  sc.temp_template = "/nonexistent-dir/tbq-XXXXXX";
  CHECK_STATUS (tbq_queue_enable_spill (q, &sc, msg, sizeof msg),
      TBQ_IO_ERROR);
  CHECK (strstr (msg, "/nonexistent-dir/tbq-XXXXXX") != NULL);
  CHECK (tbq_queue_spill_path (q) == NULL);
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (a_backlog_twenty_times_the_budget_spills_and_comes_back_in_order),
    TAP_TEST (reading_while_writing_keeps_one_order_across_memory_and_file),
    TAP_TEST (a_discard_releases_what_spilled_records_own_and_empties_the_file),
    TAP_TEST (a_flipped_byte_is_an_io_error_and_no_damaged_record),
    TAP_TEST (a_record_larger_than_its_unit_is_an_io_error),
    TAP_TEST (a_truncated_file_is_an_io_error_and_no_damaged_record),
    TAP_TEST (a_callback_consumer_stops_at_a_damaged_unit),
    TAP_TEST (a_read_error_is_an_io_error),
    TAP_TEST (a_full_disk_keeps_every_record_and_spilling_resumes),
    TAP_TEST (max_bytes_bounds_what_the_file_holds),
    TAP_TEST (a_full_file_is_read_back_within_the_budget),
    TAP_TEST (records_kept_from_memory_leave_room_to_read_the_file_back),
    TAP_TEST (a_real_full_tmpfs_is_a_full_queue_and_spilling_resumes),
    TAP_TEST (read_space_goes_back_while_the_file_is_in_use),
    TAP_TEST (several_readers_take_a_spilled_backlog_back_whole),
    TAP_TEST (several_readers_reading_while_writing_across_memory_and_file),
    TAP_TEST (a_discard_with_readers_holding_batches_of_the_file),
    TAP_TEST (a_read_error_stops_every_reader),
    TAP_TEST (a_template_without_xs_is_refused))

/* Fuzz target: libtbq's records, as any caller of its API can make them.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libtbq interprets bytes in three places: the copier walks record
 * headers in source blocks to fit whole records into sink blocks, the
 * reader walks them in sink blocks (following indirect records to their
 * extents), and discard walks whatever is left (tbq_records_release).  Those headers are written by libtbq's writer
 * only, so what a caller controls is the sequence of calls and their
 * sizes and types.  The input is such a program, on a small geometry
 * (blocks of 128 B to 1 KiB, so every record size meets a block end), run
 * in one thread with the copier stepped by hand: every record written must
 * come out once, in order, with its type, size and bytes; one larger than
 * a block and than any extent must be refused with TBQ_TOO_LARGE; a
 * discard must release exactly the records not yet read.
 *
 * Input: geometry (4 bytes), then operations of 1 to 4 bytes each.
 */
#include "fuzz-input.h"

#include "tbq.h"

#include <string.h>

#define MAX_PENDING 4096
#define MAX_HELD 4

typedef struct
{
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  uint32_t max_record;
  uint32_t max_extent;          /* out of line, up to this */
  uint64_t next_id, read_id;    /* records [read_id, next_id) are queued */
  uint32_t size[MAX_PENDING];   /* by id % MAX_PENDING */
  uint16_t type[MAX_PENDING];
  TbqBlock *held[MAX_HELD];
  uint64_t released;
} Run;

/* A record's bytes: its id, then a pattern of the id and position. */
static void
fill (uint8_t * p, uint32_t size, uint64_t id)
{
  uint32_t i;

  for (i = 0; i < size; i++)
    p[i] = i < 8 ? (uint8_t) (id >> (8 * i)) : (uint8_t) (id * 31 + i * 7);
}

static void
check_record (Run * run, const TbqRecord * rec)
{
  uint64_t id = run->read_id++;
  uint32_t size = run->size[id % MAX_PENDING], i;
  const uint8_t *p = rec->data;

  FUZZ_CHECK (id < run->next_id, "a record came out that was never written");
  FUZZ_CHECK (rec->size == size && rec->type == run->type[id % MAX_PENDING],
      "record %llu: size %u type %u, written %u/%u", (unsigned long long) id,
      rec->size, rec->type, size, run->type[id % MAX_PENDING]);
  for (i = 0; i < size; i++)
    FUZZ_CHECK (p[i] == (i < 8 ? (uint8_t) (id >> (8 * i))
            : (uint8_t) (id * 31 + i * 7)), "record %llu: byte %u differs",
        (unsigned long long) id, i);
}

/* Read everything visible; keep a reference to a block now and then. */
static void
drain (Run * run, FuzzInput * in)
{
  TbqRecord rec;

  while (tbq_reader_next (run->r, &rec) == TBQ_OK) {
    check_record (run, &rec);
    if (in != NULL && in->n > 0 && in->p[0] % 13 == 0) {
      unsigned k = in->p[0] % MAX_HELD;

      if (run->held[k] != NULL)
        tbq_block_unref (run->held[k]);
      tbq_block_ref (rec.block);
      run->held[k] = rec.block;
    }
  }
}

/* Move what is published, with room for it in the sink pool. */
static void
step (Run * run, FuzzInput * in)
{
  drain (run, in);
  FUZZ_CHECK (tbq_copier_step (run->q, 0) != TBQ_BUSY, "copier busy");
  drain (run, in);
}

static int
room (Run * run)
{
  return run->next_id - run->read_id < MAX_PENDING;
}

static void
note (Run * run, uint16_t type, uint32_t size)
{
  run->size[run->next_id % MAX_PENDING] = size;
  run->type[run->next_id % MAX_PENDING] = type;
  run->next_id++;
}

/* Write one record with write() or reserve/commit; a refused write
 * (source pool full) is retried after the copier ran. */
static void
op_write (Run * run, FuzzInput * in, int reserve)
{
  uint16_t type = (uint16_t) fuzz_take (in, 1);
  uint32_t size = (uint32_t) fuzz_take (in, 2) % (run->max_record + 32);
  uint8_t buf[65536];
  TbqStatus st;
  void *p = NULL;
  int tries;

  if (!room (run))
    step (run, in);
  fill (buf, size < sizeof buf ? size : sizeof buf, run->next_id);
  for (tries = 0;; tries++) {
    st = reserve ? tbq_writer_reserve (run->w, type, size, &p)
        : tbq_writer_write (run->w, type, buf, size);
    if (st != TBQ_DROPPED || tries == 4)
      break;
    tbq_writer_flush (run->w);
    step (run, in);
  }
  if (size > run->max_record && size > run->max_extent) {
    FUZZ_CHECK (st == TBQ_TOO_LARGE, "a %u-byte record (largest %u, %u out "
        "of line) gave %s", size, run->max_record, run->max_extent,
        tbq_status_to_string (st));
    return;
  }
  FUZZ_CHECK (st == TBQ_OK, "writing %u bytes: %s", size,
      tbq_status_to_string (st));
  if (reserve == 2) {
    tbq_writer_cancel (run->w);
    return;
  }
  if (reserve) {
    memcpy (p, buf, size);
    tbq_writer_commit (run->w);
  }
  note (run, type, size);
}

/* A session of a few records (each fits a block: a larger one makes
 * tbq_session_next_block() return TBQ_OK forever, a known defect). */
static void
op_session (Run * run, FuzzInput * in)
{
  unsigned n = 1 + (unsigned) fuzz_take (in, 1) % 8, i, tries;
  TbqSession s;

  if (run->next_id - run->read_id + n >= MAX_PENDING)
    step (run, in);
  tbq_session_begin (run->w, &s);
  for (i = 0; i < n; i++) {
    uint16_t type = (uint16_t) fuzz_take (in, 1);
    uint32_t size = (uint32_t) fuzz_take (in, 2) % (run->max_record + 1);
    void *p;

    for (tries = 0; (p = tbq_session_reserve (&s, type, size)) == NULL;
        tries++) {
      FUZZ_CHECK (tries < 6, "a %u-byte record never fit a session block",
          size);
      if (tbq_session_next_block (&s) == TBQ_DROPPED)
        step (run, in);
    }
    fill (p, size, run->next_id);
    note (run, type, size);
  }
  tbq_session_end (&s);
}

static void
release_cb (uint16_t type, const void *data, uint32_t size, void *user_data)
{
  ((Run *) user_data)->released++;
}

/* Drop everything queued: exactly the records not read come back. */
static void
op_discard (Run * run)
{
  uint64_t pending = run->next_id - run->read_id;

  run->released = 0;
  tbq_queue_discard (run->q, release_cb, run);
  FUZZ_CHECK (run->released == pending, "discard released %llu of %llu "
      "queued records", (unsigned long long) run->released,
      (unsigned long long) pending);
  run->read_id = run->next_id;
}

static int
run_setup (Run * run, FuzzInput * in)
{
  unsigned g0 = (unsigned) fuzz_take (in, 1), g1 = (unsigned) fuzz_take (in,
      1), g2 = (unsigned) fuzz_take (in, 1), g3 = (unsigned) fuzz_take (in, 1);
  TbqConfig cfg;

  memset (run, 0, sizeof *run);
  tbq_config_init (&cfg);
  cfg.source.block_size = 128u << (g0 % 4);
  cfg.source.min_blocks = cfg.source.max_blocks = 2 + g1 % 3;
  cfg.sink.block_size = cfg.source.block_size << (g2 % 3);
  cfg.sink.min_blocks = 0;
  /* One thread steps the copier and reads: a step must never wait for the
   * reader.  Room for what a step moves (a source pool's worth), for the
   * held blocks, and for the extents of every indirect record a source
   * pool holds (plus held ones and the reader's), each up to a source
   * block and a header. */
  {
    size_t ind = cfg.source.max_blocks * (cfg.source.block_size - 64) / 24
        + 1 + MAX_HELD;
    size_t ext = ind * (cfg.source.block_size + 192);

    cfg.sink.max_blocks = 2 * cfg.source.max_blocks + MAX_HELD + 4
        + (ext + cfg.sink.block_size - 1) / cfg.sink.block_size;
  }
  cfg.sink.max_idle_blocks = g2 % 2;
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  cfg.publish = (TbqPublishPolicy) (g3 % 3);
  cfg.publish_every = 1 + (g3 >> 2) % 4;
  if (tbq_queue_new (&cfg, &run->q, NULL, 0) != TBQ_OK)
    return 0;
  FUZZ_CHECK (tbq_writer_new (run->q, &run->w) == TBQ_OK, "writer");
  FUZZ_CHECK (tbq_reader_new (run->q, &run->r) == TBQ_OK, "reader");
  run->max_record = tbq_queue_max_record_size (run->q);
  run->max_extent = tbq_queue_max_extent_size (run->q);
  return 1;
}

static void
run_finish (Run * run)
{
  int i;

  tbq_writer_flush (run->w);
  for (i = 0; i < 64 && run->read_id < run->next_id; i++)
    step (run, NULL);
  FUZZ_CHECK (run->read_id == run->next_id, "%llu records written never "
      "came out", (unsigned long long) (run->next_id - run->read_id));
  for (i = 0; i < MAX_HELD; i++)
    if (run->held[i] != NULL)
      tbq_block_unref (run->held[i]);
  run->released = 0;
  tbq_queue_free (run->q, release_cb, run);
  FUZZ_CHECK (run->released == 0, "freeing an empty queue released %llu "
      "records", (unsigned long long) run->released);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static Run run;
  FuzzInput in = { data, size };

  if (!run_setup (&run, &in))
    return 0;
  while (in.n > 0) {
    switch (fuzz_take (&in, 1) % 8) {
      case 0:
      case 1:
        op_write (&run, &in, 0);
        break;
      case 2:
        op_write (&run, &in, 1);
        break;
      case 3:
        op_write (&run, &in, 2);
        break;
      case 4:
        op_session (&run, &in);
        break;
      case 5:
        tbq_writer_flush (run.w);
        break;
      case 6:
        step (&run, &in);
        break;
      default:
        if (fuzz_take (&in, 1) % 4 == 0)
          op_discard (&run);
        else
          step (&run, &in);
        break;
    }
  }
  run_finish (&run);
  return 0;
}

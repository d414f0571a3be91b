/* tbq-demo: a producer thread sends sensor-style records through libtbq to a
 * callback consumer, which checks every record; then the queue's stats.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * usage: tbq-demo [records] [payload-bytes] [readers]
 *
 * Payloads above tbq_queue_max_inline_size() (1000 bytes) travel out of
 * line, each in an extent the writer fills once: try 600000 for a video
 * frame.  With several readers (TbqConfig.max_readers) each runs a
 * callback consumer that claims batches of records, whichever is free:
 * each sees its records in order, none sees another's.
 */
#include <tbq.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  uint64_t seq;
  uint64_t timestamp_ns;
  double value[2];
} Sample;

/* One reader's consumer: what it saw. */
typedef struct
{
  TbqReader *r;
  int alone;                    /* the only reader: it sees every record */
  uint64_t next;                /* the record it expects (alone), or the
                                 * least it may see next */
  uint64_t count;
  uint64_t bad;
  uint64_t bytes;
  uint64_t seq_sum;
} Check;

static void
consume (const TbqRecord * rec, void *user_data)
{
  Check *c = user_data;
  Sample s;

  if (rec->size < sizeof s) {
    c->bad++;
    return;
  }
  memcpy (&s, rec->data, sizeof s);
  if ((c->alone ? s.seq != c->next : s.seq < c->next)
      || s.value[0] != (double) s.seq)
    c->bad++;
  c->next = s.seq + 1;
  c->count++;
  c->bytes += rec->size;
  c->seq_sum += s.seq;
}

int
main (int argc, char **argv)
{
  uint64_t n = argc > 1 ? strtoull (argv[1], NULL, 10) : 1000000;
  uint32_t size = argc > 2 ? (uint32_t) strtoul (argv[2], NULL, 10) : 32;
  uint32_t readers = argc > 3 ? (uint32_t) strtoul (argv[3], NULL, 10) : 1;
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqStats st;
  Check *check;
  unsigned char *buf;
  char msg[256];
  TbqStatus status;
  uint64_t i, delivered = 0, bad = 0, bytes = 0, seq_sum = 0;
  uint32_t k;

  tbq_config_init (&cfg);
  cfg.max_readers = readers;
  status = tbq_queue_new (&cfg, &q, msg, sizeof msg);
  if (status != TBQ_OK) {
    fprintf (stderr, "tbq_queue_new: %s: %s\n", tbq_status_to_string (status),
        msg);
    return 1;
  }
  if (size < sizeof (Sample) || size > tbq_queue_max_extent_size (q)) {
    fprintf (stderr, "payload must be %zu..%" PRIu32 " bytes\n",
        sizeof (Sample), tbq_queue_max_extent_size (q));
    return 2;
  }
  buf = calloc (1, size);
  check = calloc (readers, sizeof *check);
  if (buf == NULL || check == NULL)
    return 1;
  tbq_writer_new (q, &w);
  tbq_queue_start (q);
  for (k = 0; k < readers; k++) {
    tbq_reader_new (q, &check[k].r);
    check[k].alone = readers == 1;
    tbq_consumer_start (check[k].r, consume, &check[k]);
  }

  for (i = 0; i < n; i++) {
    Sample s = { i, i * 1000, {(double) i, -(double) i} };

    memcpy (buf, &s, sizeof s);
    status = tbq_writer_write (w, 1, buf, size);
    if (status != TBQ_OK) {
      fprintf (stderr, "write %" PRIu64 ": %s\n", i,
          tbq_status_to_string (status));
      return 1;
    }
  }
  tbq_writer_flush (w);
  for (k = 0; k < readers; k++)
    tbq_consumer_stop (check[k].r);
  for (k = 0; k < readers; k++) {
    delivered += check[k].count;
    bad += check[k].bad;
    bytes += check[k].bytes;
    seq_sum += check[k].seq_sum;
  }
  tbq_queue_get_stats (q, &st);

  printf ("delivered %" PRIu64 " of %" PRIu64 " records (%" PRIu64
      " payload bytes), %" PRIu64 " out of order or corrupt\n",
      delivered, n, bytes, bad);
  for (k = 0; readers > 1 && k < readers; k++) {
    TbqReaderStats rs;

    tbq_reader_get_stats (check[k].r, &rs);
    printf ("reader %" PRIu32 ": %" PRIu64 " records in %" PRIu64
        " batches\n", k, rs.records_out, rs.batches);
  }
  printf ("stats: in %" PRIu64 " out %" PRIu64 " dropped %" PRIu64
      " hand-offs %" PRIu64 " copier passes %" PRIu64 " wake-ups %" PRIu64
      " pressure waits %" PRIu64 "\n", st.records_in, st.records_out,
      st.records_dropped, st.handoffs, st.copier_passes, st.copier_wakeups,
      st.pressure_waits);
  printf ("source pool: %" PRIu64 " x %" PRIu64 " B, peak in use %" PRIu64
      "; sink pool: %" PRIu64 " x %" PRIu64 " B, peak in use %" PRIu64 "\n",
      st.source.blocks_total, st.source.block_size, st.source.blocks_peak,
      st.sink.blocks_total, st.sink.block_size, st.sink.blocks_peak);
  if (st.extents.allocations > 0)
    printf ("extents (records above %" PRIu32 " bytes): %" PRIu64
        " allocated, %" PRIu64 " reused, peak %" PRIu64 " bytes in use\n",
        tbq_queue_max_inline_size (q), st.extents.allocations,
        st.extents.cache_hits, st.extents.bytes_peak);
  tbq_queue_free (q, NULL, NULL);
  free (buf);
  free (check);
  /* Every record once: as many as written, and their numbers' sum. */
  return delivered == n && bad == 0 && seq_sum == n * (n - 1) / 2 ? 0 : 1;
}

/* tbq-demo: a producer thread sends sensor-style records through libtbq to a
 * callback consumer, which checks every record; then the queue's stats.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * usage: tbq-demo [records] [payload-bytes]
 *
 * Payloads above tbq_queue_max_inline_size() (1000 bytes) travel out of
 * line, each in an extent the writer fills once: try 600000 for a video
 * frame.
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

typedef struct
{
  uint64_t expected;
  uint64_t bad;
  uint64_t bytes;
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
  if (s.seq != c->expected || s.value[0] != (double) s.seq)
    c->bad++;
  c->expected = s.seq + 1;
  c->bytes += rec->size;
}

int
main (int argc, char **argv)
{
  uint64_t n = argc > 1 ? strtoull (argv[1], NULL, 10) : 1000000;
  uint32_t size = argc > 2 ? (uint32_t) strtoul (argv[2], NULL, 10) : 32;
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqStats st;
  Check check = { 0, 0, 0 };
  unsigned char *buf;
  char msg[256];
  TbqStatus status;
  uint64_t i;

  tbq_config_init (&cfg);
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
  if (buf == NULL)
    return 1;
  tbq_writer_new (q, &w);
  tbq_reader_new (q, &r);
  tbq_queue_start (q);
  tbq_consumer_start (r, consume, &check);

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
  tbq_consumer_stop (r);
  tbq_queue_get_stats (q, &st);

  printf ("delivered %" PRIu64 " of %" PRIu64 " records (%" PRIu64
      " payload bytes), %" PRIu64 " out of order or corrupt\n",
      check.expected, n, check.bytes, check.bad);
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
  return check.expected == n && check.bad == 0 ? 0 : 1;
}

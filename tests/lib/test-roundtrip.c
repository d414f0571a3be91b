/* Records written by one writer come out of the reader in order, intact. */
#include <tbq.h>
#include "lib-test.h"

static void
records_roundtrip_in_order (void)
{
  TbqConfig cfg;
  TbqQueue *q;
  TbqWriter *w;
  TbqReader *r;
  TbqRecord rec;
  /* Each record a hand-off between the threads: a tenth of them under
   * the sanitizers (TBQ_TEST_SCALE), where a hand-off costs far more. */
  uint64_t i, n = (uint64_t) (100000 * test_scale ());

  tbq_config_init (&cfg);
  CHECK (tbq_queue_new (&cfg, &q, NULL, 0) == TBQ_OK);
  CHECK (tbq_writer_new (q, &w) == TBQ_OK);
  CHECK (tbq_reader_new (q, &r) == TBQ_OK);
  CHECK (tbq_queue_start (q) == TBQ_OK);
  for (i = 0; i < n; i++) {
    uint64_t got;

    CHECK (tbq_writer_write (w, 7, &i, sizeof i) == TBQ_OK);
    while (tbq_reader_next (r, &rec) != TBQ_OK)
      CHECK (tbq_reader_wait (r, 1000000000) != TBQ_INTERRUPTED);
    CHECK_EQ (rec.size, sizeof i);
    CHECK_EQ (rec.type, 7);
    memcpy (&got, rec.data, sizeof got);
    CHECK_EQ (got, i);
  }
  tbq_queue_free (q, NULL, NULL);
}

TAP_MAIN (TAP_TEST (records_roundtrip_in_order))

/* tbqueue when the sink pool cannot grow: a warning on the bus with what
 * was asked for and why it failed, no retry loop, and then a leak or a
 * wait as the leaky mode says; nothing is lost that is not counted.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Mappings of FAIL_SIZE bytes fail on demand (fail-mmap.h), for the
 * plugin's libtbq too.  The sink blocks are of that size, which nothing
 * else in the process maps.
 */
#include "tbq-check.h"

#include "fail-mmap.h"

#include <errno.h>
#include <string.h>

/* Sink blocks of 17 pages (page multiples are mmapped). */
#define FAIL_SIZE (17 * 4096)

/* Pushes `n` buffers of 1000 bytes, seeds 1..n, from a thread of its own. */
typedef struct
{
  TbqLink *l;
  guint n;
  GstFlowReturn ret;
} Pusher;

static gpointer
pusher_main (gpointer data)
{
  Pusher *p = data;
  guint i;

  p->ret = GST_FLOW_OK;
  for (i = 1; i <= p->n && p->ret == GST_FLOW_OK; i++)
    p->ret = tbq_link_push (p->l, tbq_buffer_new (1000, (guint8) i,
            i * GST_MSECOND));
  return NULL;
}

static void
expect_warning (GstBus * bus)
{
  GstMessage *msg = tbq_bus_wait (bus, GST_MESSAGE_WARNING);
  GError *err = NULL;
  gchar size[32];

  fail_unless (msg != NULL, "no warning on the bus");
  gst_message_parse_warning (msg, &err, NULL);
  GST_INFO ("warning: %s", err->message);
  fail_unless (err->domain == GST_RESOURCE_ERROR);
  fail_unless_equals_int (err->code, GST_RESOURCE_ERROR_NO_SPACE_LEFT);
  /* libtbq's report: which pool, what was asked for, why it failed. */
  g_snprintf (size, sizeof size, "%u bytes", FAIL_SIZE);
  fail_unless (strstr (err->message, "sink pool") != NULL, "%s", err->message);
  fail_unless (strstr (err->message, size) != NULL, "%s", err->message);
  fail_unless (strstr (err->message, g_strerror (ENOMEM)) != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
}

/* __i__: the leaky mode.  Downstream holds the first buffer; the sink pool
 * has its two pre-allocated blocks and cannot grow beyond them. */
GST_START_TEST (test_a_failed_sink_allocation_is_reported_then_leaks_or_waits)
{
  gint leaky = __i__;
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0, "leaky", leaky,
      "transfer", 1 /* copy */ , "source-block-size", 8192,
      "sink-block-size", FAIL_SIZE,
      "sink-min-bytes", (guint64) 2 * FAIL_SIZE, "sink-max-bytes",
      (guint64) 64 * FAIL_SIZE, NULL);
  GstBus *bus = gst_bus_new ();
  /* More than the two sink blocks (67 records each) and the source pool
   * (4 blocks of 8 records) hold; seeds stay below 256.  Source blocks of
   * 8 KiB keep 1000-byte records inline (in smaller ones they would travel
   * out of line, in extents, and never ask for a sink block). */
  Pusher p = { l, 200, GST_FLOW_OK };
  GThread *thread;
  guint64 dropped, failed0;
  guint i, got, last = 0;

  l->keep_copies = TRUE;
  gst_element_set_bus (l->element, bus);
  tbq_link_start (l);
  failed0 = failed_mappings ();
  fail_mappings_of (FAIL_SIZE);
  tbq_link_hold (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (1000, 0, 0)),
      GST_FLOW_OK);
  tbq_link_wait_holding (l);
  thread = g_thread_new ("pusher", pusher_main, &p);

  expect_warning (bus);
  /* The copy task waits for a block to come back; it does not try again
   * (a retry loop would fail one mapping after another). */
  tbq_wait_stat (l->element, "sink-pressure-waits", 1);
  fail_unless_equals_uint64 (failed_mappings () - failed0, 1);
  if (leaky == 0) {
    /* The upstream thread waits for room (an overrun: the sink pool is
     * as full as it can get). */
    tbq_wait_stat (l->element, "pressure-waits", 1);
    tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  } else {
    /* Leaky: no wait, the pushes go on, and some buffers go. */
    g_thread_join (thread);
    thread = NULL;
    fail_unless_equals_int (p.ret, GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (failed_mappings () - failed0, 1);
  fail_mappings_of (0);

  tbq_link_release (l);
  if (thread != NULL)
    g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_OK);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_wait_event (l, GST_EVENT_EOS);
  got = tbq_link_n_buffers (l);
  dropped = tbq_stat (l->element, "dropped-upstream")
      + tbq_stat (l->element, "dropped-downstream");
  fail_unless_equals_uint64 (got + dropped, p.n + 1);
  if (leaky == 0) {
    fail_unless_equals_uint64 (dropped, 0);
  } else {
    fail_unless (dropped > 0);
  }
  for (i = 0; i < got; i++) {
    GstBuffer *b = tbq_link_buffer (l, i);
    guint8 v;

    fail_unless_equals_int (gst_buffer_extract (b, 0, &v, 1), 1);
    fail_unless (i == 0 || v > last);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DISCONT), i > 0 && v != (guint8) (last + 1));
    last = v;
  }
  gst_element_set_bus (l->element, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  tbq_link_free (l);
}

GST_END_TEST;

static Suite *
tbqueue_no_memory_suite (void)
{
  Suite *s = suite_create ("tbqueue-no-memory");
  TCase *tc = tbq_tcase (s, "no-memory");

  tcase_add_loop_test (tc,
      test_a_failed_sink_allocation_is_reported_then_leaks_or_waits, 0, 3);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_no_memory);

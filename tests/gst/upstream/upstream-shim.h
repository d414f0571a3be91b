/* GStreamer's own queue tests, run against tbqueue: what swaps it in.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Force-included (-include) into GStreamer's tests/check/elements/queue.c,
 * tests/check/pipelines/queue-error.c and tests/check/elements/queue2.c,
 * fetched at build time (fetch-queue-tests.py).  Two things change,
 * nothing else:
 *
 * 1. GST_CHECK_MAIN's gst_check_init() becomes tbq_upstream_check_init(),
 *    which initialises gst-check as usual and then registers, under the
 *    factory name "queue" (TBQ_UPSTREAM_FACTORY: "queue2" for queue2's
 *    tests), a subclass of tbqueue whose `transfer` is taken from
 *    TBQ_UPSTREAM_TRANSFER (auto, copy or reference).  Every "queue" (or
 *    "queue2") the tests make, with gst_check_setup_element() or
 *    gst_parse_launch(), is then a tbqueue.
 * 2. Buffer-identity asserts (rewritten by the fetch script) go through
 *    TBQ_UPSTREAM_SAME_BUFFER: the same fail_unless (a == b) in reference
 *    mode; in copy and auto mode, where tbqueue may deliver a copy, a
 *    different buffer is printed ("identity differs") and the test goes
 *    on, so that every other assert still runs.  This is the only assert
 *    allowed to differ.
 */
#ifndef __TBQ_UPSTREAM_SHIM_H__
#define __TBQ_UPSTREAM_SHIM_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define gst_check_init(argc, argv) tbq_upstream_check_init (argc, argv)
void tbq_upstream_check_init (int *argc, char **argv[]);

/* TRUE when tbqueue may deliver a copy of a pushed buffer. */
gboolean tbq_upstream_may_copy (void);
void tbq_upstream_identity_differs (gconstpointer received,
    gconstpointer pushed, const gchar * what, const gchar * file, int line);

#define TBQ_UPSTREAM_SAME_BUFFER(received, pushed) G_STMT_START {       \
  if (!tbq_upstream_may_copy ())                                        \
    fail_unless ((received) == (pushed));                               \
  else if ((received) != (pushed))                                      \
    tbq_upstream_identity_differs (received, pushed,                    \
        #received " == " #pushed, __FILE__, __LINE__);                  \
} G_STMT_END

G_END_DECLS
#endif /* __TBQ_UPSTREAM_SHIM_H__ */

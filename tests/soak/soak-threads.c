/* The soak harness: the flusher thread and the watchdog.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The flusher sends FLUSH_START from its own thread while the producer
 * streams, as an application's seek does, then takes the producer's stream
 * lock for FLUSH_STOP and the next epoch.  The watchdog fails the run when
 * nothing at all moved (no push returned, nothing delivered, no flush) for
 * --watchdog seconds: a deadlock or a livelock, never a slow machine (no
 * single step of the harness takes more than a fraction of a second).
 */
#include "soak.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

void
soak_flush (void)
{
  gst_pad_push_event (soak.srcpad, gst_event_new_flush_start ());
  GST_PAD_STREAM_LOCK (soak.srcpad);
  gst_pad_push_event (soak.srcpad, gst_event_new_flush_stop (TRUE));
  /* Everything of the old epoch is gone: FLUSH_START stopped the
   * element's src pad task, FLUSH_STOP discarded what was queued. */
  soak_log_new_epoch ();
  /* Before the producer pushes into the new epoch. */
  soak_epoch_baseline ();
  GST_PAD_STREAM_UNLOCK (soak.srcpad);
  atomic_fetch_add_explicit (&soak.flushes, 1, memory_order_relaxed);
}

gpointer
soak_flusher_main (gpointer data)
{
  guint64 rng = soak.seed ^ G_GUINT64_CONSTANT (0xF1E5F1E5);

  while (!atomic_load_explicit (&soak.stop, memory_order_relaxed)) {
    guint period = MAX (atomic_load_explicit (&soak.flush_period_ms,
            memory_order_relaxed), 1);

    g_usleep (soak_log_range (&rng, 1, 2 * (guint64) period) * 1000);
    if (!(soak.features & SOAK_F_FLUSH_THREAD))
      continue;
    g_mutex_lock (&soak.ctl_lock);
    if (!atomic_load_explicit (&soak.stop, memory_order_relaxed))
      soak_flush ();
    g_mutex_unlock (&soak.ctl_lock);
  }
  return NULL;
}

/* Every thread's stack, from gdb if it is there. */
static void
dump_threads (void)
{
  gchar *cmd;

  if (!g_file_test ("/usr/bin/gdb", G_FILE_TEST_IS_EXECUTABLE)) {
    g_print ("# (no gdb for a thread dump)\n");
    return;
  }
  /* Let gdb attach to us whatever the ptrace scope. */
  prctl (PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  cmd = g_strdup_printf ("gdb -p %d -batch -nx -ex 'set pagination off' "
      "-ex 'thread apply all bt' 2>/dev/null | sed 's/^/# /'", getpid ());
  fflush (stdout);
  if (system (cmd) != 0)
    g_print ("# (gdb failed)\n");
  fflush (stdout);
  g_free (cmd);
}

gpointer
soak_watchdog_main (gpointer data)
{
  guint64 last = G_MAXUINT64;
  gint64 since = g_get_monotonic_time ();

  while (!atomic_load_explicit (&soak.stop, memory_order_relaxed)) {
    guint64 now = atomic_load_explicit (&soak.progress, memory_order_relaxed);

    g_usleep (G_USEC_PER_SEC / 4);
    if (now != last) {
      last = now;
      since = g_get_monotonic_time ();
      continue;
    }
    if (g_get_monotonic_time () - since
        < (gint64) soak.watchdog_s * G_USEC_PER_SEC)
      continue;
    g_print ("# watchdog: nothing moved for %u s; the producer is in: %s "
        "(seq %" G_GUINT64_FORMAT ")\n", soak.watchdog_s,
        soak.op ? soak.op : "?", atomic_load_explicit (&soak.op_seq,
            memory_order_relaxed));
    dump_threads ();
    soak_fail ("watchdog", "nothing moved for %u s (deadlock?)",
        soak.watchdog_s);
  }
  return NULL;
}

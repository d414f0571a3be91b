/* The soak harness: the ring log of everything pushed, and epochs.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Entry `seq` lives in ring[seq & mask].  The verifier needs the entries
 * from its last delivery (or the current epoch's floor, whichever is
 * later) up to the newest, so the producer waits while the ring holds that
 * many.  Entries are written by the producer before the item is pushed and
 * published with a release store of `published_seq`; the status is written
 * after the push returns (an atomic of its own).
 */
#include "soak.h"

void
soak_log_init (guint bits)
{
  soak.ring = g_new0 (SoakEntry, (gsize) 1 << bits);
  soak.ring_mask = ((guint64) 1 << bits) - 1;
}

/* The oldest seq the verifier may still look up.  vlock held. */
static guint64
log_needed (void)
{
  guint64 floor = atomic_load_explicit (&soak.floor, memory_order_relaxed);
  guint64 last = soak.last_seq > 0 ? soak.last_seq - 1 : 0;

  return MAX (floor, last);
}

SoakEntry *
soak_log_append (guint64 * seq)
{
  SoakEntry *e;

  /* Without vlock: a hint (the verifier stores it atomically, under
   * vlock); the wait below decides under the lock. */
  if (soak.next_seq - __atomic_load_n (&soak.last_seq, __ATOMIC_RELAXED)
      >= soak.ring_mask) {
    g_mutex_lock (&soak.vlock);
    while (soak.next_seq - log_needed () >= soak.ring_mask) {
      soak.producer_waits = TRUE;
      g_cond_wait (&soak.vcond, &soak.vlock);
    }
    soak.producer_waits = FALSE;
    g_mutex_unlock (&soak.vlock);
  }
  *seq = soak.next_seq++;
  e = soak_log_get (*seq);
  atomic_store_explicit (&e->status, SOAK_PENDING, memory_order_relaxed);
  atomic_store_explicit (&e->fate, SOAK_FATE_NONE, memory_order_relaxed);
  e->list_len = e->list_index = 0;
  e->layout = 0;
  e->after_jump = soak.jump_pending;
  e->flags = 0;
  e->size = 0;
  e->pts = e->dts = e->duration = GST_CLOCK_TIME_NONE;
  e->leaky = (guint8) soak_parallel_leaky (&soak.ch);
  e->epoch = atomic_load_explicit (&soak.epoch, memory_order_relaxed);
  return e;
}

void
soak_log_publish (void)
{
  /* Release: the entries' fields before the verifier may read them (it
   * loads published_seq with acquire). */
  atomic_store_explicit (&soak.published_seq, soak.next_seq,
      memory_order_release);
}

void
soak_log_new_epoch (void)
{
  g_mutex_lock (&soak.vlock);
  /* Relaxed: vlock orders these for the verifier. */
  atomic_store_explicit (&soak.floor, soak.next_seq, memory_order_relaxed);
  atomic_store_explicit (&soak.epoch, soak.epoch + 1, memory_order_relaxed);
  soak.discont_required = FALSE;
  soak.discont_allowed = TRUE;
  /* A second output of the old epoch never comes. */
  soak.part_seq = 0;
  g_cond_broadcast (&soak.vcond);
  g_mutex_unlock (&soak.vlock);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
}

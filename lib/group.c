/* Copy groups: one set of copy threads serving the copiers of many queues
 * (group.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A round visits every member once, starting one further each round, and
 * makes one copier pass on it (tbq_copier_group_pass()): a pass moves at
 * most what the member's small source pools hold, and never waits, so a
 * member with a deep backlog, or one whose sink pool is full because its
 * reader stalled, holds the others up by one pass at most.  A thread that
 * finds nothing to do sleeps on the share's doorbell, which every member's
 * writers, reader and sink pool ring (share.h).
 */
#include "config.h"
#include "group.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct
{
  TbqCopier *copier;
  TbqQueue *queue;
  TbqGroupFunc fn;
  void *data;
  /* Set under the group's leave_lock; read relaxed as hints. */
  _Atomic int entered;          /* TBQ_GROUP_ENTER said (or being said) */
  _Atomic int leaving;          /* tbq_group_remove() waits for LEAVE */
  _Atomic int left;             /* LEAVE said (or being said) */
} GroupMember;

struct TbqGroup
{
  TbqGroupConfig cfg;
  TbqShare *share;
  _Atomic int interrupted;      /* a host's steps (tbq_group_interrupt()) */
  _Atomic int serving;          /* threads or a host serve the members */
  _Atomic int stop;             /* the own threads: leave */
  _Atomic uint32_t next;        /* where the next round starts */
  _Atomic uint64_t rounds;
  _Atomic uint64_t wakeups;

  pthread_rwlock_t lock;        /* the member list (group.h) */
  GroupMember **members;
  uint32_t n_members;
  uint32_t cap_members;

  /* A leaving member's handshake with the thread that says LEAVE. */
  pthread_mutex_t leave_lock;
  pthread_cond_t leave_cond;

  pthread_t threads[TBQ_GROUP_MAX_THREADS];
  uint32_t n_threads;           /* running; changed by start and stop only */
  pthread_mutex_t threads_lock;
};

void
tbq_group_config_init (TbqGroupConfig * cfg)
{
  if (cfg == NULL)
    return;
  memset (cfg, 0, sizeof *cfg);
  cfg->threads = 1;
}

TbqStatus
tbq_group_new (const TbqGroupConfig * cfg, TbqGroup ** out, char *msg,
    size_t msg_size)
{
  pthread_rwlockattr_t attr;
  TbqGroup *g;

  if (cfg == NULL || out == NULL)
    return TBQ_INVALID_ARGUMENT;
  *out = NULL;
  if (cfg->threads < 1 || cfg->threads > TBQ_GROUP_MAX_THREADS)
    return tbq_config_refuse (msg, msg_size,
        "a copy group runs 1 to 64 threads");
  if (cfg->reserve_block_size != 0
      && cfg->reserve_block_size <= TBQ_BLOCK_HEADER_SIZE)
    return tbq_config_refuse (msg, msg_size,
        "the reserve's block size must be larger than a block header "
        "(64 bytes)");
  if (cfg->reserve_min_blocks > cfg->reserve_max_blocks)
    return tbq_config_refuse (msg, msg_size,
        "the reserve cannot fault in more blocks than it keeps");
  if (cfg->max_bytes != 0 && cfg->reserve_block_size != 0
      && (uint64_t) cfg->reserve_min_blocks * cfg->reserve_block_size
      > cfg->max_bytes)
    return tbq_config_refuse (msg, msg_size,
        "the reserve is larger than the group's cap");
  g = tbq_alloc_aligned (sizeof *g);
  if (g == NULL)
    goto no_memory;
  memset (g, 0, sizeof *g);
  g->cfg = *cfg;
  g->share = tbq_share_new (cfg->max_bytes, cfg->reserve_block_size,
      cfg->reserve_min_blocks, cfg->reserve_max_blocks);
  if (g->share == NULL) {
    free (g);
    goto no_memory;
  }
  atomic_init (&g->interrupted, 0);
  atomic_init (&g->serving, 0);
  atomic_init (&g->stop, 0);
  atomic_init (&g->next, 0);
  atomic_init (&g->rounds, 0);
  atomic_init (&g->wakeups, 0);
  /* Joins and leaves are rare: they must not wait behind a stream of
   * rounds. */
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr,
      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init (&g->lock, &attr);
  pthread_rwlockattr_destroy (&attr);
  pthread_mutex_init (&g->threads_lock, NULL);
  pthread_mutex_init (&g->leave_lock, NULL);
  tbq_cond_init_monotonic (&g->leave_cond);
  *out = g;
  return TBQ_OK;

no_memory:
  if (msg != NULL && msg_size > 0)
    snprintf (msg, msg_size, "cannot allocate the copy group's reserve "
        "(%zu blocks of %u bytes)", cfg->reserve_min_blocks,
        cfg->reserve_block_size);
  return TBQ_NO_MEMORY;
}

TbqStatus
tbq_group_free (TbqGroup * g)
{
  uint32_t n;

  if (g == NULL)
    return TBQ_OK;
  pthread_rwlock_rdlock (&g->lock);
  n = g->n_members;
  pthread_rwlock_unlock (&g->lock);
  if (n > 0)
    return TBQ_BUSY;
  tbq_group_stop (g);
  free (g->members);
  pthread_rwlock_destroy (&g->lock);
  pthread_mutex_destroy (&g->threads_lock);
  pthread_mutex_destroy (&g->leave_lock);
  pthread_cond_destroy (&g->leave_cond);
  /* The members' pools hold the share while zero-copy holders keep
   * their blocks. */
  tbq_share_unref (g->share);
  free (g);
  return TBQ_OK;
}

TbqShare *
tbq_group_share (TbqGroup * g)
{
  return g->share;
}

const _Atomic int *
tbq_group_serving (TbqGroup * g)
{
  return &g->serving;
}

TbqStatus
tbq_group_add (TbqGroup * g, TbqCopier * c, TbqQueue * q, TbqGroupFunc fn,
    void *data)
{
  GroupMember *m = malloc (sizeof *m);
  TbqStatus st = TBQ_OK;

  if (m == NULL)
    return TBQ_NO_MEMORY;
  m->copier = c;
  m->queue = q;
  m->fn = fn;
  m->data = data;
  atomic_init (&m->entered, 0);
  atomic_init (&m->leaving, 0);
  atomic_init (&m->left, 0);
  pthread_rwlock_wrlock (&g->lock);
  if (g->n_members == g->cap_members) {
    uint32_t cap = g->cap_members ? 2 * g->cap_members : 8;
    GroupMember **grown = realloc (g->members, cap * sizeof *grown);

    if (grown == NULL) {
      st = TBQ_NO_MEMORY;
    } else {
      g->members = grown;
      g->cap_members = cap;
    }
  }
  if (st == TBQ_OK)
    g->members[g->n_members++] = m;
  pthread_rwlock_unlock (&g->lock);
  if (st != TBQ_OK)
    free (m);
  else
    tbq_event_wake (&g->share->ev);
  return st;
}

static GroupMember *
group_find_locked (TbqGroup * g, TbqCopier * c)
{
  uint32_t i;

  for (i = 0; i < g->n_members; i++)
    if (g->members[i]->copier == c)
      return g->members[i];
  return NULL;
}

/* Say LEAVE for `m` (once), in whichever thread gets here first. */
static void
member_say_leave (TbqGroup * g, GroupMember * m)
{
  bool say;

  pthread_mutex_lock (&g->leave_lock);
  say = !atomic_load_explicit (&m->left, memory_order_relaxed);
  atomic_store_explicit (&m->left, 1, memory_order_relaxed);
  pthread_mutex_unlock (&g->leave_lock);
  if (say)
    m->fn (m->queue, TBQ_GROUP_LEAVE, m->data);
  pthread_mutex_lock (&g->leave_lock);
  pthread_cond_broadcast (&g->leave_cond);
  pthread_mutex_unlock (&g->leave_lock);
}

static inline bool
group_served (TbqGroup * g)
{
  /* Relaxed: a host's flag, re-read every 10 ms below. */
  return atomic_load_explicit (&g->serving, memory_order_relaxed)
      && !atomic_load_explicit (&g->interrupted, memory_order_relaxed);
}

/* A member that heard ENTER hears LEAVE before it goes: from the thread
 * serving the group (which looks at leaving members first), or, when
 * nobody serves the group, from the caller. */
static void
group_wait_leave (TbqGroup * g, TbqCopier * c)
{
  GroupMember *m;
  bool entered;

  pthread_rwlock_rdlock (&g->lock);
  m = group_find_locked (g, c);
  pthread_rwlock_unlock (&g->lock);
  if (m == NULL || m->fn == NULL)
    return;
  /* Under leave_lock: either ENTER was said (or is being said) and LEAVE
   * follows, or no ENTER comes any more (member_enter()). */
  pthread_mutex_lock (&g->leave_lock);
  atomic_store_explicit (&m->leaving, 1, memory_order_relaxed);
  entered = atomic_load_explicit (&m->entered, memory_order_relaxed);
  pthread_mutex_unlock (&g->leave_lock);
  if (!entered)
    return;
  tbq_event_wake (&g->share->ev);
  pthread_mutex_lock (&g->leave_lock);
  while (!atomic_load_explicit (&m->left, memory_order_relaxed)
      && group_served (g))
    (void) tbq_cond_wait_until (&g->leave_cond, &g->leave_lock,
        tbq_now_ns () + 10000000);
  pthread_mutex_unlock (&g->leave_lock);
  /* Nobody serves the group: say it here.  (Members cannot be removed
   * but by this function, so `m` is still listed.) */
  member_say_leave (g, m);
}

void
tbq_group_remove (TbqGroup * g, TbqCopier * c)
{
  GroupMember *gone = NULL;
  uint32_t i;

  group_wait_leave (g, c);
  /* Waits for the rounds in progress: none touches `c` after this. */
  pthread_rwlock_wrlock (&g->lock);
  for (i = 0; i < g->n_members; i++) {
    if (g->members[i]->copier == c) {
      gone = g->members[i];
      g->members[i] = g->members[--g->n_members];
      break;
    }
  }
  pthread_rwlock_unlock (&g->lock);
  free (gone);
}

/* Say ENTER for `m` once, unless it is leaving (group_wait_leave()). */
static void
member_enter (TbqGroup * g, GroupMember * m)
{
  bool say;

  /* Relaxed: a hint; decided under the lock. */
  if (m->fn == NULL || atomic_load_explicit (&m->entered,
          memory_order_relaxed))
    return;
  pthread_mutex_lock (&g->leave_lock);
  say = !atomic_load_explicit (&m->entered, memory_order_relaxed)
      && !atomic_load_explicit (&m->leaving, memory_order_relaxed);
  if (say)
    atomic_store_explicit (&m->entered, 1, memory_order_relaxed);
  pthread_mutex_unlock (&g->leave_lock);
  if (say)
    m->fn (m->queue, TBQ_GROUP_ENTER, m->data);
}

static inline bool
member_interrupted (GroupMember * m)
{
  /* Relaxed: raised before an unconditional wake (block.h, "Events"). */
  return atomic_load_explicit (m->copier->interrupted,
      memory_order_relaxed) != 0;
}

/* One pass on every member, in turn.  True when something moved. */
static bool
group_round (TbqGroup * g)
{
  bool any = false;
  uint32_t i, n, start;

  pthread_rwlock_rdlock (&g->lock);
  n = g->n_members;
  /* Relaxed: only spreads the starting point. */
  start = n > 0 ? atomic_fetch_add_explicit (&g->next, 1,
      memory_order_relaxed) % n : 0;
  for (i = 0; i < n; i++) {
    GroupMember *m = g->members[(start + i) % n];
    bool moved = false;
    TbqStatus st;

    /* Relaxed: a request; the handshake is under leave_lock. */
    if (atomic_load_explicit (&m->leaving, memory_order_relaxed)) {
      if (atomic_load_explicit (&m->entered, memory_order_relaxed)
          && !atomic_load_explicit (&m->left, memory_order_relaxed))
        member_say_leave (g, m);
      continue;
    }
    if (member_interrupted (m))
      continue;
    member_enter (g, m);
    st = tbq_copier_group_pass (m->copier, &moved);
    any = any || moved;
    if (st == TBQ_NO_MEMORY && m->fn != NULL)
      m->fn (m->queue, TBQ_GROUP_NO_MEMORY, m->data);
  }
  pthread_rwlock_unlock (&g->lock);
  if (any)
    tbq_count (&g->rounds, 1);
  return any;
}

static inline bool
group_stopping (TbqGroup * g)
{
  /* Relaxed: raised before an unconditional wake. */
  return atomic_load_explicit (&g->stop, memory_order_relaxed) != 0;
}

/* The wait's condition: some member has work (or is new), or the threads
 * are to stop. */
static bool
group_ready (void *arg)
{
  TbqGroup *g = arg;
  bool ready = group_stopping (g);
  uint32_t i;

  pthread_rwlock_rdlock (&g->lock);
  for (i = 0; i < g->n_members && !ready; i++) {
    GroupMember *m = g->members[i];

    /* Relaxed: hints; the round re-reads them. */
    ready = (atomic_load_explicit (&m->leaving, memory_order_relaxed)
        && atomic_load_explicit (&m->entered, memory_order_relaxed)
        && !atomic_load_explicit (&m->left, memory_order_relaxed))
        || (m->fn != NULL && !member_interrupted (m)
        && !atomic_load_explicit (&m->entered, memory_order_relaxed))
        || tbq_copier_group_ready (m->copier);
  }
  pthread_rwlock_unlock (&g->lock);
  return ready;
}

/* A round, and if nothing moved, a wait for work and a round after it. */
static TbqStatus
group_step (TbqGroup * g, const _Atomic int *interrupted, int64_t timeout_ns)
{
  TbqStatus st;

  if (group_round (g))
    return TBQ_OK;
  st = tbq_wait (&g->share->ev, interrupted, g->cfg.spin_iterations,
      group_ready, g, tbq_deadline (timeout_ns));
  if (st == TBQ_OK) {
    tbq_count (&g->wakeups, 1);
    group_round (g);
  }
  return st;
}

TbqStatus
tbq_group_step (TbqGroup * g, int64_t timeout_ns)
{
  uint32_t threads;

  if (g == NULL)
    return TBQ_INVALID_ARGUMENT;
  pthread_mutex_lock (&g->threads_lock);
  threads = g->n_threads;
  pthread_mutex_unlock (&g->threads_lock);
  if (threads > 0)
    return TBQ_BUSY;
  /* Relaxed: as the interrupt flag. */
  if (atomic_load_explicit (&g->interrupted, memory_order_relaxed))
    return TBQ_INTERRUPTED;
  atomic_store_explicit (&g->serving, 1, memory_order_relaxed);
  return group_step (g, &g->interrupted, timeout_ns);
}

void
tbq_group_interrupt (TbqGroup * g)
{
  if (g == NULL)
    return;
  /* Relaxed: raised before an unconditional wake (block.h, "Events"). */
  atomic_store_explicit (&g->interrupted, 1, memory_order_relaxed);
  atomic_store_explicit (&g->serving, 0, memory_order_relaxed);
  tbq_event_wake (&g->share->ev);
}

void
tbq_group_resume (TbqGroup * g)
{
  if (g == NULL)
    return;
  /* Relaxed: as tbq_group_interrupt(). */
  atomic_store_explicit (&g->interrupted, 0, memory_order_relaxed);
  tbq_event_wake (&g->share->ev);
}

static void *
group_thread_main (void *arg)
{
  TbqGroup *g = arg;

  while (!group_stopping (g))
    group_step (g, &g->stop, -1);
  return NULL;
}

TbqStatus
tbq_group_start (TbqGroup * g)
{
  TbqStatus st = TBQ_OK;

  if (g == NULL)
    return TBQ_INVALID_ARGUMENT;
  pthread_mutex_lock (&g->threads_lock);
  /* Relaxed: a host that stepped the group keeps it. */
  if (g->n_threads > 0 || atomic_load_explicit (&g->serving,
          memory_order_relaxed)) {
    pthread_mutex_unlock (&g->threads_lock);
    return TBQ_BUSY;
  }
  atomic_store_explicit (&g->stop, 0, memory_order_relaxed);
  atomic_store_explicit (&g->serving, 1, memory_order_relaxed);
  while (g->n_threads < g->cfg.threads) {
    if (pthread_create (&g->threads[g->n_threads], NULL, group_thread_main,
            g) != 0) {
      st = TBQ_NO_MEMORY;
      break;
    }
    g->n_threads++;
  }
  pthread_mutex_unlock (&g->threads_lock);
  if (st != TBQ_OK)
    tbq_group_stop (g);
  return st;
}

void
tbq_group_stop (TbqGroup * g)
{
  uint32_t i;

  if (g == NULL)
    return;
  pthread_mutex_lock (&g->threads_lock);
  if (g->n_threads > 0) {
    /* Relaxed: raised before an unconditional wake. */
    atomic_store_explicit (&g->stop, 1, memory_order_relaxed);
    tbq_event_wake (&g->share->ev);
    for (i = 0; i < g->n_threads; i++)
      pthread_join (g->threads[i], NULL);
    g->n_threads = 0;
    atomic_store_explicit (&g->stop, 0, memory_order_relaxed);
    atomic_store_explicit (&g->serving, 0, memory_order_relaxed);
  }
  pthread_mutex_unlock (&g->threads_lock);
}

void
tbq_group_get_stats (TbqGroup * g, TbqGroupStats * st)
{
  TbqShare *s;

  if (g == NULL || st == NULL)
    return;
  memset (st, 0, sizeof *st);
  s = g->share;
  pthread_rwlock_rdlock (&g->lock);
  st->members = g->n_members;
  pthread_rwlock_unlock (&g->lock);
  st->rounds = atomic_load_explicit (&g->rounds, memory_order_relaxed);
  st->wakeups = atomic_load_explicit (&g->wakeups, memory_order_relaxed);
  st->bytes_used = atomic_load_explicit (&s->bytes_used,
      memory_order_relaxed);
  st->bytes_peak = atomic_load_explicit (&s->bytes_peak,
      memory_order_relaxed);
  if (s->bytes_max != 0) {
    st->bytes_floors = atomic_load_explicit (&s->floors,
        memory_order_relaxed);
    st->bytes_cap = tbq_share_cap (s);
  }
  pthread_mutex_lock (&s->lock);
  st->reserve_idle = s->reserve_idle;
  pthread_mutex_unlock (&s->lock);
  st->reserve_takes = atomic_load_explicit (&s->reserve_takes,
      memory_order_relaxed);
  st->reserve_returns = atomic_load_explicit (&s->reserve_returns,
      memory_order_relaxed);
}

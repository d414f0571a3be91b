/* tbqueue platform: what placing a thread asks of the system (its id, its
 * CPUs, its scheduling), behind one small API.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Linux places a thread by its id, from any thread: sched_setaffinity,
 * sched_setscheduler and setpriority all take a thread id (setpriority's
 * PRIO_PROCESS means a thread there), which is what lets a property
 * changed while a task runs be applied from the thread that changes it
 * (gsttbqueue-placement.c).  POSIX has no such calls (there is no
 * pthread_setaffinity_np everywhere, and a nice value is the process's),
 * so every other system gets the portable fallback: nothing is placed, and the element
 * says so.  The choice is made at configure time (gst/meson.build:
 * GST_TBQ_PLATFORM_LINUX on Linux unless -Dplacement=disabled); the CPU
 * sets and lists are the same in both, so that the properties read back
 * alike everywhere.
 */
#include "gsttbqplatform.h"

#include <errno.h>
#include <string.h>

#if GST_TBQ_PLATFORM_LINUX
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

G_STATIC_ASSERT (GST_TBQ_CPU_SETSIZE == CPU_SETSIZE);
#endif

/* ---- CPU sets and lists (every platform) ---- */

void
gst_tbq_cpu_set_clear (GstTbqCpuSet * set)
{
  memset (set, 0, sizeof *set);
}

static inline void
cpu_set_add (GstTbqCpuSet * set, guint cpu)
{
  set->bits[cpu / 64] |= G_GUINT64_CONSTANT (1) << (cpu % 64);
}

static inline gboolean
cpu_set_has (const GstTbqCpuSet * set, guint cpu)
{
  return (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

gboolean
gst_tbq_cpu_set_is_empty (const GstTbqCpuSet * set)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (set->bits); i++)
    if (set->bits[i] != 0)
      return FALSE;
  return TRUE;
}

void
gst_tbq_cpu_set_missing (const GstTbqCpuSet * want, const GstTbqCpuSet * got,
    GstTbqCpuSet * missing)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (missing->bits); i++)
    missing->bits[i] = want->bits[i] & ~got->bits[i];
}

static gboolean
parse_cpu (const gchar ** p, guint * cpu)
{
  gchar *end;
  guint64 v;

  while (g_ascii_isspace (**p))
    (*p)++;
  if (!g_ascii_isdigit (**p))
    return FALSE;
  v = g_ascii_strtoull (*p, &end, 10);
  if (v >= GST_TBQ_CPU_SETSIZE)
    return FALSE;
  *cpu = (guint) v;
  *p = end;
  while (g_ascii_isspace (**p))
    (*p)++;
  return TRUE;
}

gboolean
gst_tbq_cpu_set_parse (const gchar * list, GstTbqCpuSet * set)
{
  const gchar *p = list;

  gst_tbq_cpu_set_clear (set);
  for (;;) {
    guint first, last, c;

    if (!parse_cpu (&p, &first))
      return FALSE;
    last = first;
    if (*p == '-') {
      p++;
      if (!parse_cpu (&p, &last) || last < first)
        return FALSE;
    }
    for (c = first; c <= last; c++)
      cpu_set_add (set, c);
    if (*p == '\0')
      return TRUE;
    if (*p++ != ',')
      return FALSE;
  }
}

gchar *
gst_tbq_cpu_set_format (const GstTbqCpuSet * set)
{
  GString *s = g_string_new (NULL);
  guint c = 0;

  while (c < GST_TBQ_CPU_SETSIZE) {
    guint last;

    if (!cpu_set_has (set, c)) {
      c++;
      continue;
    }
    for (last = c; last + 1 < GST_TBQ_CPU_SETSIZE
        && cpu_set_has (set, last + 1);)
      last++;
    g_string_append_printf (s, "%s%u", s->len ? "," : "", c);
    if (last > c)
      g_string_append_printf (s, "-%u", last);
    c = last + 1;
  }
  return g_string_free (s, FALSE);
}

#if GST_TBQ_PLATFORM_LINUX

/* ---- Linux: everything by thread id ---- */

gboolean
gst_tbq_platform_can_place (void)
{
  return TRUE;
}

GstTbqThreadId
gst_tbq_thread_self (void)
{
  return (GstTbqThreadId) syscall (SYS_gettid);
}

gboolean
gst_tbq_thread_get_cpus (GstTbqThreadId tid, GstTbqCpuSet * set)
{
  cpu_set_t cs;
  guint c;

  gst_tbq_cpu_set_clear (set);
  if (sched_getaffinity ((pid_t) tid, sizeof cs, &cs) != 0)
    return FALSE;
  for (c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET (c, &cs))
      cpu_set_add (set, c);
  return TRUE;
}

gboolean
gst_tbq_thread_set_cpus (GstTbqThreadId tid, const GstTbqCpuSet * set)
{
  cpu_set_t cs;
  guint c;

  CPU_ZERO (&cs);
  for (c = 0; c < CPU_SETSIZE; c++)
    if (cpu_set_has (set, c))
      CPU_SET (c, &cs);
  return sched_setaffinity ((pid_t) tid, sizeof cs, &cs) == 0;
}

static int
policy_to_linux (GstTbQueueSchedPolicy policy)
{
  switch (policy) {
    case GST_TBQUEUE_SCHED_FIFO:
      return SCHED_FIFO;
    case GST_TBQUEUE_SCHED_RR:
      return SCHED_RR;
    case GST_TBQUEUE_SCHED_BATCH:
      return SCHED_BATCH;
    case GST_TBQUEUE_SCHED_IDLE:
      return SCHED_IDLE;
    default:
      return SCHED_OTHER;
  }
}

void
gst_tbq_thread_save_sched (GstTbqThreadId tid, GstTbqSched * sched)
{
  struct sched_param sp;

  sched->policy = sched_getscheduler ((pid_t) tid);
  sched->priority = sched_getparam ((pid_t) tid, &sp) == 0 ?
      sp.sched_priority : 0;
  /* -1 is a nice value too: only errno tells a failure. */
  errno = 0;
  sched->nice = getpriority (PRIO_PROCESS, (id_t) tid);
  if (errno != 0)
    sched->nice = 0;
}

gboolean
gst_tbq_thread_restore_sched (GstTbqThreadId tid, const GstTbqSched * sched)
{
  struct sched_param sp = { 0 };

  /* Unreadable when saved: nothing to put back. */
  if (sched->policy < 0)
    return TRUE;
  sp.sched_priority = sched->priority;
  return sched_setscheduler ((pid_t) tid, sched->policy, &sp) == 0
      && setpriority (PRIO_PROCESS, (id_t) tid, sched->nice) == 0;
}

gboolean
gst_tbq_thread_set_policy (GstTbqThreadId tid, GstTbQueueSchedPolicy policy,
    gint rt_priority)
{
  struct sched_param sp = { 0 };

  sp.sched_priority = rt_priority;
  return sched_setscheduler ((pid_t) tid, policy_to_linux (policy), &sp) == 0;
}

gboolean
gst_tbq_thread_set_nice (GstTbqThreadId tid, gint nice)
{
  return setpriority (PRIO_PROCESS, (id_t) tid, nice) == 0;
}

#else /* !GST_TBQ_PLATFORM_LINUX */

/* ---- the portable fallback: nothing is placed ---- */

gboolean
gst_tbq_platform_can_place (void)
{
  return FALSE;
}

/* Only told apart and logged: the GThread is as good a name as any, and
 * never 0. */
GstTbqThreadId
gst_tbq_thread_self (void)
{
  return (GstTbqThreadId) (gintptr) g_thread_self ();
}

gboolean
gst_tbq_thread_get_cpus (GstTbqThreadId tid, GstTbqCpuSet * set)
{
  gst_tbq_cpu_set_clear (set);
  errno = ENOSYS;
  return FALSE;
}

gboolean
gst_tbq_thread_set_cpus (GstTbqThreadId tid, const GstTbqCpuSet * set)
{
  errno = ENOSYS;
  return FALSE;
}

void
gst_tbq_thread_save_sched (GstTbqThreadId tid, GstTbqSched * sched)
{
  sched->policy = -1;
  sched->priority = sched->nice = 0;
}

gboolean
gst_tbq_thread_restore_sched (GstTbqThreadId tid, const GstTbqSched * sched)
{
  return TRUE;
}

gboolean
gst_tbq_thread_set_policy (GstTbqThreadId tid, GstTbQueueSchedPolicy policy,
    gint rt_priority)
{
  errno = ENOSYS;
  return FALSE;
}

gboolean
gst_tbq_thread_set_nice (GstTbqThreadId tid, gint nice)
{
  errno = ENOSYS;
  return FALSE;
}

#endif /* GST_TBQ_PLATFORM_LINUX */

/* tbqueue platform: what placing a thread asks of the system (its id, its
 * CPUs, its scheduling), behind one small API.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQ_PLATFORM_H__
#define __GST_TBQ_PLATFORM_H__

#include <glib.h>

#include "gsttbqueue-enums.h"

G_BEGIN_DECLS

/* Whether this build can place threads (chosen at configure time, see
 * gsttbqplatform.c).  When it cannot, every function below that asks the
 * system fails with ENOSYS, and the element says so instead of calling
 * them. */
gboolean gst_tbq_platform_can_place (void);

/* A thread as the system names it; 0 is none. */
typedef gint64 GstTbqThreadId;

GstTbqThreadId gst_tbq_thread_self (void);

/* A set of CPUs, numbered from 0 to GST_TBQ_CPU_SETSIZE - 1 (Linux's
 * CPU_SETSIZE).  The same on every platform, so that CPU lists parse and
 * read back alike; only the functions below look inside. */
#define GST_TBQ_CPU_SETSIZE 1024

typedef struct
{
  guint64 bits[GST_TBQ_CPU_SETSIZE / 64];
} GstTbqCpuSet;

void gst_tbq_cpu_set_clear (GstTbqCpuSet * set);
gboolean gst_tbq_cpu_set_is_empty (const GstTbqCpuSet * set);
/* A CPU list as taskset and /sys/devices/system/cpu write it ("0-1,3"):
 * TRUE and the set for a well-formed, non-empty list. */
gboolean gst_tbq_cpu_set_parse (const gchar * list, GstTbqCpuSet * set);
gchar *gst_tbq_cpu_set_format (const GstTbqCpuSet * set);
/* The CPUs of `want` that are not in `got`. */
void gst_tbq_cpu_set_missing (const GstTbqCpuSet * want,
    const GstTbqCpuSet * got, GstTbqCpuSet * missing);

/* A thread's CPUs.  FALSE, with errno, when the system refuses. */
gboolean gst_tbq_thread_get_cpus (GstTbqThreadId tid, GstTbqCpuSet * set);
gboolean gst_tbq_thread_set_cpus (GstTbqThreadId tid,
    const GstTbqCpuSet * set);

/* A thread's scheduling as the system has it (opaque: saved and put
 * back whole). */
typedef struct
{
  gint policy;                  /* the system's; negative: unreadable */
  gint priority;
  gint nice;
} GstTbqSched;

/* Save: what cannot be read is saved as unreadable (put back as nothing
 * to put back). */
void gst_tbq_thread_save_sched (GstTbqThreadId tid, GstTbqSched * sched);
/* Restore: policy and priority, then the nice value.  FALSE, with errno,
 * when the system refuses. */
gboolean gst_tbq_thread_restore_sched (GstTbqThreadId tid,
    const GstTbqSched * sched);
/* Set a policy (not INHERIT) with its real-time priority (0 for a policy
 * that has none), or a nice value.  FALSE, with errno, when the system
 * refuses. */
gboolean gst_tbq_thread_set_policy (GstTbqThreadId tid,
    GstTbQueueSchedPolicy policy, gint rt_priority);
gboolean gst_tbq_thread_set_nice (GstTbqThreadId tid, gint nice);

G_END_DECLS
#endif /* __GST_TBQ_PLATFORM_H__ */

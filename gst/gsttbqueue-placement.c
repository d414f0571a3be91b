/* tbqueue thread placement: the CPU set, scheduling policy, real-time
 * priority and nice value of the copy task and of the src pad task.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each task's thread applies its placement itself when it starts, in the
 * task's enter callback, before STREAM_STATUS ENTER is posted: an
 * application's sync handler on ENTER sees it in place and may still
 * change it.  What a thread had before is kept and put back when the task
 * leaves the thread (GStreamer's task pool reuses threads), and when a
 * property goes back to its default while the task runs.
 *
 * A property changed while a task runs is applied to its thread from the
 * thread that changes it (Linux applies affinity, policy and nice value
 * to a thread id), once every property of the g_object_set () call is
 * stored: the setters only store, and the element's
 * dispatch_properties_changed, which GObject calls at the end of the call,
 * commits (the commit hook of the placement properties in
 * gsttbqueue-properties.c).  A policy and its real-time priority or nice
 * value set together are applied as one pair.  A policy and a priority
 * that do not go together (fifo with 0, other with 20) while the task
 * runs are a change half made, whose other
 * half comes in a later call, in either order: the thread is left as it
 * is and nothing is posted.  A pair still not valid when the tasks next
 * start is an error then.
 *
 * What cannot be applied becomes a GST_ELEMENT_WARNING on the bus naming
 * the task, the setting and the reason, and the task runs on where it
 * was:
 *  - what the system refuses (no CAP_SYS_NICE for a real-time policy or a
 *    lower nice value, a CPU that is not online or not allowed), as it
 *    refuses: in the task's thread as it enters, or in the thread that
 *    changes the property;
 *  - what the element cannot make sense of (a malformed CPU list, a
 *    priority that does not go with its policy), when the tasks start, in
 *    the state change that starts them (READY_TO_PAUSED), once per start:
 *    a property is usually set before the element has a bus (on a
 *    gst-launch-1.0 line, it is set before the element is put in the
 *    pipeline), where a warning would be lost.  A malformed CPU list set
 *    while the tasks run is a warning at once;
 *  - everything, where this build cannot place threads (the portable
 *    fallback of gsttbqplatform.c: not Linux, or -Dplacement=disabled): a
 *    property set to other than its default is "not supported on this
 *    platform", when the tasks start and at once while they run, and the
 *    threads are left as they are.  The system calls themselves are
 *    gsttbqplatform.c's.
 *
 * The src pad's task is GstPad's: its enter and leave callbacks are
 * replaced when the pad posts STREAM_STATUS CREATE (before the task
 * starts), by ones that place the thread and then post ENTER and LEAVE
 * exactly as GstPad does.
 */
#include "gsttbqueue-placement.h"
#include "gsttbqueue-enums.h"
#include "gsttbqstatus.h"

#include <errno.h>
#include <string.h>

static const gchar *const task_names[GST_TBQUEUE_N_TASKS] = {
  "copy task", "src task"
};

/* Warnings collected under placement_lock, posted after it: at most
 * three at a time for each task (its CPUs, malformed and refused, and its
 * scheduling). */
typedef struct
{
  gchar *text[3 * GST_TBQUEUE_N_TASKS];
  guint n;
} Warnings;

static void
warn (Warnings * w, gchar * text)
{
  if (w->n < G_N_ELEMENTS (w->text))
    w->text[w->n++] = text;
  else
    g_free (text);
}

static void
post_warnings (GstTbQueue * tbq, Warnings * w)
{
  guint i;

  for (i = 0; i < w->n; i++) {
    GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS, ("%s", w->text[i]), (NULL));
    g_free (w->text[i]);
  }
  w->n = 0;
}

void
gst_tbqueue_placement_init (GstTbQueue * tbq)
{
  guint i;

  g_mutex_init (&tbq->placement_lock);
  for (i = 0; i < GST_TBQUEUE_N_TASKS; i++) {
    memset (&tbq->placement[i], 0, sizeof tbq->placement[i]);
    tbq->placement[i].policy = GST_TBQUEUE_SCHED_INHERIT;
  }
  tbq->placement_started = FALSE;
}

void
gst_tbqueue_placement_clear (GstTbQueue * tbq)
{
  guint i;

  for (i = 0; i < GST_TBQUEUE_N_TASKS; i++) {
    g_free (tbq->placement[i].cpus);
    g_free (tbq->placement[i].malformed);
  }
  g_mutex_clear (&tbq->placement_lock);
}

/* ---- applying, to a thread id (this thread or another one) ---- */

static void
apply_cpus (GstTbQueuePlacement * pl, guint which, GstTbqThreadId tid,
    Warnings * w)
{
  GstTbqCpuSet got, missing;
  gchar *list;

  if (!gst_tbq_thread_set_cpus (tid, &pl->cpu_set)) {
    warn (w, g_strdup_printf ("Cannot run the %s on CPUs %s: %s (a CPU "
            "must be online and allowed to this process)", task_names[which],
            pl->cpus, g_strerror (errno)));
    return;
  }
  pl->changed_cpus = TRUE;
  if (!gst_tbq_thread_get_cpus (tid, &got))
    return;
  gst_tbq_cpu_set_missing (&pl->cpu_set, &got, &missing);
  if (gst_tbq_cpu_set_is_empty (&missing))
    return;
  list = gst_tbq_cpu_set_format (&missing);
  warn (w, g_strdup_printf ("CPUs %s asked for the %s are not online or not "
          "allowed to this process: it runs on the others of %s",
          list, task_names[which], pl->cpus));
  g_free (list);
}

/* Put back the CPUs thread `tid` had when the task entered it, if the
 * element changed them.  FALSE, with errno, when the system refuses. */
static gboolean
restore_cpus (GstTbQueuePlacement * pl, GstTbqThreadId tid)
{
  if (!pl->changed_cpus)
    return TRUE;
  /* An empty set: they could not be read at enter. */
  if (!gst_tbq_cpu_set_is_empty (&pl->saved_cpu_set)
      && !gst_tbq_thread_set_cpus (tid, &pl->saved_cpu_set))
    return FALSE;
  pl->changed_cpus = FALSE;
  return TRUE;
}

/* The CPU list set, or with none (the default) the CPUs the thread had. */
static void
apply_cpu_setting (GstTbQueuePlacement * pl, guint which, GstTbqThreadId tid,
    Warnings * w)
{
  if (pl->cpus != NULL)
    apply_cpus (pl, which, tid, w);
  else if (!restore_cpus (pl, tid))
    warn (w, g_strdup_printf ("Cannot put the %s back on the CPUs its thread "
            "had: %s", task_names[which], g_strerror (errno)));
}

static const gchar *
policy_nick (GstTbQueueSchedPolicy policy)
{
  GEnumValue *v = g_enum_get_value (g_type_class_peek
      (GST_TYPE_TBQUEUE_SCHED_POLICY), policy);

  return v != NULL ? v->value_nick : "?";
}

/* The real-time priority goes with fifo and rr, which need one (1..99);
 * other, batch and idle take none (0: not set): a priority with them is
 * taken for a mistake, not dropped in silence.  The nice value (other and
 * batch; ignored by the others) is always valid: its property's range is
 * the system's.  Inherit leaves the thread alone. */
static gboolean
priority_valid (GstTbQueueSchedPolicy policy, gint priority)
{
  if (policy == GST_TBQUEUE_SCHED_FIFO || policy == GST_TBQUEUE_SCHED_RR)
    return priority >= 1 && priority <= 99;
  if (policy == GST_TBQUEUE_SCHED_INHERIT)
    return TRUE;
  return priority == 0;
}

/* Put back the policy, priority and nice value thread `tid` had when the
 * task entered it, if the element changed them.  FALSE, with errno, when
 * the system refuses. */
static gboolean
restore_sched (GstTbQueuePlacement * pl, GstTbqThreadId tid)
{
  if (!pl->changed_sched)
    return TRUE;
  /* What could not be read at enter is not put back. */
  if (!gst_tbq_thread_restore_sched (tid, &pl->saved_sched))
    return FALSE;
  pl->changed_sched = FALSE;
  return TRUE;
}

/* Give thread `tid` the policy and priority set: with inherit (the
 * default), what the thread had.  A pair that does not go together is a
 * change half made: the thread is left as it is (the state change that
 * starts the tasks warns about a pair still invalid then). */
static void
apply_sched (GstTbQueue * tbq, guint which, GstTbqThreadId tid, Warnings * w)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  gboolean realtime = pl->policy == GST_TBQUEUE_SCHED_FIFO
      || pl->policy == GST_TBQUEUE_SCHED_RR;
  int err;

  if (pl->policy == GST_TBQUEUE_SCHED_INHERIT) {
    if (restore_sched (pl, tid))
      return;
    /* Read once: g_strerror () may change errno. */
    err = errno;
    warn (w, g_strdup_printf ("Cannot give the %s back the scheduling "
            "policy and nice value its thread had: %s%s", task_names[which],
            g_strerror (err), err == EPERM || err == EACCES ?
            " (a lower nice value, or leaving policy idle, needs "
            "CAP_SYS_NICE or RLIMIT_NICE)" : ""));
    return;
  }
  if (!priority_valid (pl->policy, pl->priority)) {
    GST_INFO_OBJECT (tbq, "%s: priority %d does not go with policy %s: "
        "not applied, the thread is left as it is until the pair is valid",
        task_names[which], pl->priority, policy_nick (pl->policy));
    return;
  }
  if (!gst_tbq_thread_set_policy (tid, pl->policy,
          realtime ? pl->priority : 0)) {
    err = errno;
    warn (w, g_strdup_printf ("Cannot give the %s scheduling policy %s%s: "
            "%s%s", task_names[which], policy_nick (pl->policy), realtime ?
            " with that priority" : "", g_strerror (err), err == EPERM ?
            " (real-time policies need CAP_SYS_NICE or an RLIMIT_RTPRIO "
            "of at least the priority)" : ""));
    return;
  }
  pl->changed_sched = TRUE;
  if (realtime || pl->policy == GST_TBQUEUE_SCHED_IDLE)
    return;
  if (!gst_tbq_thread_set_nice (tid, pl->nice)) {
    err = errno;
    warn (w, g_strdup_printf ("Cannot give the %s nice value %d: %s%s",
            task_names[which], pl->nice, g_strerror (err),
            err == EPERM || err == EACCES ? " (a lower nice value than "
            "the thread has needs CAP_SYS_NICE or RLIMIT_NICE)" : ""));
  }
}

static gchar *
malformed_text (GstTbQueuePlacement * pl, guint which)
{
  return g_strdup_printf ("\"%s\" is not a CPU list for the %s (CPU numbers "
      "from 0 to %d and ranges of them, as \"0-1,3\"): placement unchanged",
      pl->malformed, task_names[which], GST_TBQ_CPU_SETSIZE - 1);
}

static gchar *
pair_text (GstTbQueuePlacement * pl, guint which)
{
  return g_strdup_printf ("Priority %d is not valid for the %s with policy "
      "%s (a real-time priority, 1 to 99, goes with fifo and rr only; other "
      "and batch take a nice value, -task-nice, and priority 0): not "
      "applied", pl->priority, task_names[which], policy_nick (pl->policy));
}

/* ---- where threads cannot be placed (gsttbqplatform.c) ---- */

/* Whether a task's properties are all at their defaults: nothing asked of
 * the system. */
static gboolean
placement_is_default (const GstTbQueuePlacement * pl)
{
  return pl->cpus == NULL && pl->policy == GST_TBQUEUE_SCHED_INHERIT
      && pl->priority == 0 && pl->nice == 0;
}

gchar *
gst_tbqueue_placement_describe (GstTbQueue * tbq, GstTbQueueThread which)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  gchar *text = NULL;

  g_mutex_lock (&tbq->placement_lock);
  if (!placement_is_default (pl))
    text = g_strdup_printf ("(CPUs %s, policy %s, priority %d, nice %d)",
        pl->cpus ? pl->cpus : "as they are", policy_nick (pl->policy),
        pl->priority, pl->nice);
  g_mutex_unlock (&tbq->placement_lock);
  return text;
}

static gchar *
unsupported_text (guint which)
{
  return g_strdup_printf ("Thread placement is not supported on this "
      "platform: the %s's CPUs and scheduling properties are not applied, "
      "and it runs as the system schedules it", task_names[which]);
}

/* Commit, where threads cannot be placed: a property set to other than
 * its default while the tasks run is a warning at once (before, the start
 * warns), and nothing is applied. */
static void
warn_unsupported (GstTbQueue * tbq, guint which, Warnings * w)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];

  if ((pl->cpus_set || pl->sched_set) && tbq->placement_started
      && !placement_is_default (pl))
    warn (w, unsupported_text (which));
  pl->cpus_set = pl->sched_set = FALSE;
}

/* ---- properties ---- */

void
gst_tbqueue_placement_set_cpus (GstTbQueue * tbq, GstTbQueueThread which,
    const gchar * cpus)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  gboolean valid;
  GstTbqCpuSet set;

  if (cpus != NULL && *cpus == '\0')
    cpus = NULL;
  gst_tbq_cpu_set_clear (&set);
  valid = cpus == NULL || gst_tbq_cpu_set_parse (cpus, &set);
  g_mutex_lock (&tbq->placement_lock);
  g_free (pl->malformed);
  pl->malformed = NULL;
  if (valid) {
    g_free (pl->cpus);
    pl->cpus = g_strdup (cpus);
    pl->cpu_set = set;
    pl->cpus_set = TRUE;
  } else {
    /* The placement stays as it is; the value is kept for the warning. */
    pl->malformed = g_strdup (cpus);
    pl->malformed_set = TRUE;
  }
  g_mutex_unlock (&tbq->placement_lock);
}

/* The last well-formed list: what the thread is placed with. */
gchar *
gst_tbqueue_placement_get_cpus (GstTbQueue * tbq, GstTbQueueThread which)
{
  gchar *cpus;

  g_mutex_lock (&tbq->placement_lock);
  cpus = g_strdup (tbq->placement[which].cpus);
  g_mutex_unlock (&tbq->placement_lock);
  return cpus;
}

/* Policy, priority and nice value are stored one by one (each under the
 * lock, so that two threads setting one each lose neither) and applied
 * together, as one pair: the policy with what goes with it. */
void
gst_tbqueue_placement_set_policy (GstTbQueue * tbq, GstTbQueueThread which,
    GstTbQueueSchedPolicy policy)
{
  g_mutex_lock (&tbq->placement_lock);
  tbq->placement[which].policy = policy;
  tbq->placement[which].sched_set = TRUE;
  g_mutex_unlock (&tbq->placement_lock);
}

void
gst_tbqueue_placement_set_priority (GstTbQueue * tbq, GstTbQueueThread which,
    gint priority)
{
  g_mutex_lock (&tbq->placement_lock);
  tbq->placement[which].priority = priority;
  tbq->placement[which].sched_set = TRUE;
  g_mutex_unlock (&tbq->placement_lock);
}

void
gst_tbqueue_placement_set_nice (GstTbQueue * tbq, GstTbQueueThread which,
    gint nice)
{
  g_mutex_lock (&tbq->placement_lock);
  tbq->placement[which].nice = nice;
  tbq->placement[which].sched_set = TRUE;
  g_mutex_unlock (&tbq->placement_lock);
}

void
gst_tbqueue_placement_get_sched (GstTbQueue * tbq, GstTbQueueThread which,
    GstTbQueueSchedPolicy * policy, gint * priority, gint * nice)
{
  g_mutex_lock (&tbq->placement_lock);
  *policy = tbq->placement[which].policy;
  *priority = tbq->placement[which].priority;
  *nice = tbq->placement[which].nice;
  g_mutex_unlock (&tbq->placement_lock);
}

void
gst_tbqueue_placement_commit (GstTbQueue * tbq)
{
  Warnings w = { {NULL}, 0 };
  guint i;

  g_mutex_lock (&tbq->placement_lock);
  for (i = 0; i < GST_TBQUEUE_N_TASKS; i++) {
    GstTbQueuePlacement *pl = &tbq->placement[i];

    /* Before the tasks start, start () warns. */
    if (pl->malformed_set && pl->malformed != NULL && tbq->placement_started)
      warn (&w, malformed_text (pl, i));
    if (!gst_tbq_platform_can_place ())
      warn_unsupported (tbq, i, &w);
    /* A task without a thread applies it all as it enters one. */
    if (pl->tid != 0 && pl->cpus_set)
      apply_cpu_setting (pl, i, pl->tid, &w);
    if (pl->tid != 0 && pl->sched_set)
      apply_sched (tbq, i, pl->tid, &w);
    pl->cpus_set = pl->malformed_set = pl->sched_set = FALSE;
  }
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

/* ---- the state changes ---- */

void
gst_tbqueue_placement_start (GstTbQueue * tbq)
{
  Warnings w = { {NULL}, 0 };
  guint i;

  g_mutex_lock (&tbq->placement_lock);
  tbq->placement_started = TRUE;
  for (i = 0; i < GST_TBQUEUE_N_TASKS; i++) {
    GstTbQueuePlacement *pl = &tbq->placement[i];

    if (pl->malformed != NULL)
      warn (&w, malformed_text (pl, i));
    if (!gst_tbq_platform_can_place () && !placement_is_default (pl))
      warn (&w, unsupported_text (i));
    if (!priority_valid (pl->policy, pl->priority))
      warn (&w, pair_text (pl, i));
    /* Said: a commit still to come for it (notifications frozen across
     * the state change) has no more to say. */
    pl->malformed_set = FALSE;
  }
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_placement_stop (GstTbQueue * tbq)
{
  g_mutex_lock (&tbq->placement_lock);
  tbq->placement_started = FALSE;
  g_mutex_unlock (&tbq->placement_lock);
}

/* ---- the task threads ---- */

void
gst_tbqueue_placement_enter (GstTbQueue * tbq, GstTbQueueThread which)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };
  GstTbqThreadId tid = gst_tbq_thread_self ();

  g_mutex_lock (&tbq->placement_lock);
  pl->tid = tid;
  pl->changed_cpus = pl->changed_sched = FALSE;
  /* What to put back when the task leaves this thread, or when a property
   * goes back to its default. */
  if (!gst_tbq_thread_get_cpus (tid, &pl->saved_cpu_set))
    gst_tbq_cpu_set_clear (&pl->saved_cpu_set);
  gst_tbq_thread_save_sched (tid, &pl->saved_sched);
  /* The defaults have nothing to put back yet: the thread stays alone.
   * Where threads cannot be placed, it always does (said at the start and
   * as a property is set: warn_unsupported). */
  if (gst_tbq_platform_can_place ()) {
    apply_cpu_setting (pl, which, tid, &w);
    apply_sched (tbq, which, tid, &w);
  }
  GST_DEBUG_OBJECT (tbq, "%s in thread %d: CPUs %s, policy %s, priority %d, "
      "nice %d", task_names[which], (int) tid,
      pl->cpus ? pl->cpus : "as they were", policy_nick (pl->policy),
      pl->priority, pl->nice);
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_placement_leave (GstTbQueue * tbq, GstTbQueueThread which)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };
  gboolean changed;

  g_mutex_lock (&tbq->placement_lock);
  changed = pl->changed_cpus || pl->changed_sched;
  /* Its own CPUs: the thread had them a moment ago. */
  restore_cpus (pl, pl->tid);
  if (!restore_sched (pl, pl->tid))
    warn (&w, g_strdup_printf ("The %s's thread goes back to its pool "
            "without its former scheduling policy or nice value: %s",
            task_names[which], g_strerror (errno)));
  GST_DEBUG_OBJECT (tbq, "%s leaves thread %d%s", task_names[which],
      (int) pl->tid, changed ? ", placement put back" : "");
  pl->tid = 0;
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_post_stream_status (GstTbQueue * tbq, GstObject * src,
    GstTask * task, GstStreamStatusType type)
{
  gst_tbq_post_stream_status (GST_ELEMENT_CAST (tbq), src, task, type);
}

/* As GstPad's own enter and leave callbacks: STREAM_STATUS from the pad,
 * with the task, which is named "element:pad" on ENTER. */
static void
pad_task_status (GstTbQueue * tbq, GstTask * task, GstStreamStatusType type)
{
  GstPad *pad = tbq->srcpad;

  if (type == GST_STREAM_STATUS_TYPE_ENTER) {
    gchar *name = g_strdup_printf ("%s:%s", GST_DEBUG_PAD_NAME (pad));

    gst_object_set_name (GST_OBJECT_CAST (task), name);
    g_free (name);
  }
  gst_tbqueue_post_stream_status (tbq, GST_OBJECT_CAST (pad), task, type);
}

static void
src_task_enter (GstTask * task, GThread * thread, gpointer user_data)
{
  GstTbQueue *tbq = user_data;

  gst_tbqueue_placement_enter (tbq, GST_TBQUEUE_SRC_TASK);
  pad_task_status (tbq, task, GST_STREAM_STATUS_TYPE_ENTER);
}

static void
src_task_leave (GstTask * task, GThread * thread, gpointer user_data)
{
  GstTbQueue *tbq = user_data;

  gst_tbqueue_placement_leave (tbq, GST_TBQUEUE_SRC_TASK);
  pad_task_status (tbq, task, GST_STREAM_STATUS_TYPE_LEAVE);
}

void
gst_tbqueue_placement_adopt_pad_task (GstTbQueue * tbq, GstPad * pad,
    GstTask * task)
{
  /* The task exists and has not started: CREATE is posted before. */
  gst_task_set_enter_callback (task, src_task_enter, tbq, NULL);
  gst_task_set_leave_callback (task, src_task_leave, tbq, NULL);
}

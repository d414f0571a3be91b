/* tbqueue thread placement: the CPU set, scheduling policy and priority
 * of the copy task and of the src pad task.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each task's thread applies its placement itself when it starts, in the
 * task's enter callback, before STREAM_STATUS ENTER is posted: an
 * application's sync handler on ENTER sees it in place and may still
 * change it.  What a thread had before is kept and put back when the task
 * leaves the thread (GStreamer's task pool reuses threads).  A property
 * changed while a task runs is applied to its thread at once, from the
 * thread that changes it (Linux applies affinity, policy and nice value
 * to a thread id).  Whatever the system refuses (no CAP_SYS_NICE for a
 * real-time policy or a negative nice value, a CPU that is not online or
 * not allowed, a malformed CPU list) becomes a GST_ELEMENT_WARNING on the
 * bus naming the task, the setting and the system's reason; the task
 * runs on where it was.
 *
 * The src pad's task is GstPad's: its enter and leave callbacks are
 * replaced when the pad posts STREAM_STATUS CREATE (before the task
 * starts), by ones that place the thread and then post ENTER and LEAVE
 * exactly as GstPad does.
 */
#include "gsttbqueue-placement.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const gchar *const task_names[GST_TBQUEUE_N_TASKS] = {
  "copy task", "src task"
};

/* Warnings collected under placement_lock, posted after it. */
typedef struct
{
  gchar *text[3];
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
}

void
gst_tbqueue_placement_clear (GstTbQueue * tbq)
{
  guint i;

  for (i = 0; i < GST_TBQUEUE_N_TASKS; i++)
    g_free (tbq->placement[i].cpus);
  g_mutex_clear (&tbq->placement_lock);
}

/* ---- CPU lists ("0-1,3", as taskset and /sys/devices/system/cpu) ---- */

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
  if (v >= CPU_SETSIZE)
    return FALSE;
  *cpu = (guint) v;
  *p = end;
  while (g_ascii_isspace (**p))
    (*p)++;
  return TRUE;
}

/* TRUE and the set for a well-formed, non-empty list. */
static gboolean
parse_cpu_list (const gchar * s, cpu_set_t * set)
{
  const gchar *p = s;

  CPU_ZERO (set);
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
      CPU_SET (c, set);
    if (*p == '\0')
      return TRUE;
    if (*p++ != ',')
      return FALSE;
  }
}

static gchar *
format_cpu_list (const cpu_set_t * set)
{
  GString *s = g_string_new (NULL);
  guint c = 0;

  while (c < CPU_SETSIZE) {
    guint last;

    if (!CPU_ISSET (c, set)) {
      c++;
      continue;
    }
    for (last = c; last + 1 < CPU_SETSIZE && CPU_ISSET (last + 1, set);)
      last++;
    g_string_append_printf (s, "%s%u", s->len ? "," : "", c);
    if (last > c)
      g_string_append_printf (s, "-%u", last);
    c = last + 1;
  }
  return g_string_free (s, FALSE);
}

/* ---- applying, to a thread id (this thread or another one) ---- */

static void
apply_cpus (GstTbQueuePlacement * pl, guint which, pid_t tid, Warnings * w)
{
  cpu_set_t got, missing;
  gchar *list;

  if (sched_setaffinity (tid, sizeof pl->cpu_set, &pl->cpu_set) != 0) {
    warn (w, g_strdup_printf ("Cannot run the %s on CPUs %s: %s (a CPU "
            "must be online and allowed to this process)", task_names[which],
            pl->cpus, g_strerror (errno)));
    return;
  }
  pl->changed_cpus = TRUE;
  if (sched_getaffinity (tid, sizeof got, &got) != 0)
    return;
  CPU_XOR (&missing, &pl->cpu_set, &got);
  CPU_AND (&missing, &missing, &pl->cpu_set);
  if (CPU_COUNT (&missing) == 0)
    return;
  list = format_cpu_list (&missing);
  warn (w, g_strdup_printf ("CPUs %s asked for the %s are not online or not "
          "allowed to this process: it runs on the others of %s",
          list, task_names[which], pl->cpus));
  g_free (list);
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

static const gchar *
policy_nick (GstTbQueueSchedPolicy policy)
{
  GEnumValue *v = g_enum_get_value (g_type_class_peek
      (GST_TYPE_TBQUEUE_SCHED_POLICY), policy);

  return v != NULL ? v->value_nick : "?";
}

/* The priority means a real-time priority (fifo, rr: 1..99) or a nice
 * value (other, batch: -20..19); idle has none. */
static gboolean
priority_valid (GstTbQueueSchedPolicy policy, gint priority)
{
  if (policy == GST_TBQUEUE_SCHED_FIFO || policy == GST_TBQUEUE_SCHED_RR)
    return priority >= 1 && priority <= 99;
  if (policy == GST_TBQUEUE_SCHED_IDLE)
    return TRUE;
  return priority >= -20 && priority <= 19;
}

static void
apply_sched (GstTbQueuePlacement * pl, guint which, pid_t tid, Warnings * w)
{
  struct sched_param sp = { 0 };
  gboolean realtime = pl->policy == GST_TBQUEUE_SCHED_FIFO
      || pl->policy == GST_TBQUEUE_SCHED_RR;

  if (!priority_valid (pl->policy, pl->priority)) {
    warn (w, g_strdup_printf ("Priority %d is not valid for the %s with "
            "policy %s (fifo and rr: 1 to 99; other and batch: a nice value, "
            "-20 to 19)", pl->priority, task_names[which],
            policy_nick (pl->policy)));
    return;
  }
  if (realtime)
    sp.sched_priority = pl->priority;
  if (sched_setscheduler (tid, policy_to_linux (pl->policy), &sp) != 0) {
    warn (w, g_strdup_printf ("Cannot give the %s scheduling policy %s%s: "
            "%s%s", task_names[which], policy_nick (pl->policy), realtime ?
            " with that priority" : "", g_strerror (errno), errno == EPERM ?
            " (real-time policies need CAP_SYS_NICE or an RLIMIT_RTPRIO "
            "of at least the priority)" : ""));
    return;
  }
  pl->changed_sched = TRUE;
  if (realtime || pl->policy == GST_TBQUEUE_SCHED_IDLE)
    return;
  if (setpriority (PRIO_PROCESS, (id_t) tid, pl->priority) != 0)
    warn (w, g_strdup_printf ("Cannot give the %s nice value %d: %s%s",
            task_names[which], pl->priority, g_strerror (errno),
            errno == EPERM || errno == EACCES ? " (a lower nice value than "
            "the thread has needs CAP_SYS_NICE or RLIMIT_NICE)" : ""));
}

/* Apply what is set to thread `tid`; placement_lock held. */
static void
locked_apply (GstTbQueue * tbq, guint which, pid_t tid, Warnings * w)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];

  if (pl->cpus != NULL)
    apply_cpus (pl, which, tid, w);
  if (pl->policy != GST_TBQUEUE_SCHED_INHERIT)
    apply_sched (pl, which, tid, w);
}

/* ---- properties ---- */

void
gst_tbqueue_placement_set_cpus (GstTbQueue * tbq, GstTbQueueThread which,
    const gchar * cpus)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };
  cpu_set_t set;

  if (cpus != NULL && *cpus == '\0')
    cpus = NULL;
  if (cpus != NULL && !parse_cpu_list (cpus, &set)) {
    warn (&w, g_strdup_printf ("\"%s\" is not a CPU list for the %s (CPU "
            "numbers and ranges, as \"0-1,3\"): placement unchanged", cpus,
            task_names[which]));
    post_warnings (tbq, &w);
    return;
  }
  g_mutex_lock (&tbq->placement_lock);
  g_free (pl->cpus);
  pl->cpus = g_strdup (cpus);
  if (cpus != NULL) {
    pl->cpu_set = set;
    if (pl->tid != 0)
      apply_cpus (pl, which, pl->tid, &w);
  }
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

gchar *
gst_tbqueue_placement_get_cpus (GstTbQueue * tbq, GstTbQueueThread which)
{
  gchar *cpus;

  g_mutex_lock (&tbq->placement_lock);
  cpus = g_strdup (tbq->placement[which].cpus);
  g_mutex_unlock (&tbq->placement_lock);
  return cpus;
}

void
gst_tbqueue_placement_set_policy (GstTbQueue * tbq, GstTbQueueThread which,
    GstTbQueueSchedPolicy policy, gint priority)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };

  g_mutex_lock (&tbq->placement_lock);
  pl->policy = policy;
  pl->priority = priority;
  if (pl->tid != 0 && policy != GST_TBQUEUE_SCHED_INHERIT)
    apply_sched (pl, which, pl->tid, &w);
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_placement_get_policy (GstTbQueue * tbq, GstTbQueueThread which,
    GstTbQueueSchedPolicy * policy, gint * priority)
{
  g_mutex_lock (&tbq->placement_lock);
  *policy = tbq->placement[which].policy;
  *priority = tbq->placement[which].priority;
  g_mutex_unlock (&tbq->placement_lock);
}

/* ---- the task threads ---- */

void
gst_tbqueue_placement_enter (GstTbQueue * tbq, GstTbQueueThread which)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };
  pid_t tid = (pid_t) syscall (SYS_gettid);

  g_mutex_lock (&tbq->placement_lock);
  pl->tid = tid;
  pl->changed_cpus = pl->changed_sched = FALSE;
  /* What to put back when the task leaves this thread. */
  if (sched_getaffinity (0, sizeof pl->saved_cpu_set, &pl->saved_cpu_set))
    CPU_ZERO (&pl->saved_cpu_set);
  pl->saved_policy = sched_getscheduler (0);
  if (sched_getparam (0, &pl->saved_param) != 0)
    pl->saved_param.sched_priority = 0;
  errno = 0;
  pl->saved_nice = getpriority (PRIO_PROCESS, (id_t) tid);
  if (errno != 0)
    pl->saved_nice = 0;
  locked_apply (tbq, which, tid, &w);
  GST_DEBUG_OBJECT (tbq, "%s in thread %d: CPUs %s, policy %s, priority %d",
      task_names[which], (int) tid, pl->cpus ? pl->cpus : "as they were",
      policy_nick (pl->policy), pl->priority);
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_placement_leave (GstTbQueue * tbq, GstTbQueueThread which)
{
  GstTbQueuePlacement *pl = &tbq->placement[which];
  Warnings w = { {NULL}, 0 };

  g_mutex_lock (&tbq->placement_lock);
  if (pl->changed_cpus && CPU_COUNT (&pl->saved_cpu_set) > 0)
    sched_setaffinity (0, sizeof pl->saved_cpu_set, &pl->saved_cpu_set);
  if (pl->changed_sched && pl->saved_policy >= 0
      && (sched_setscheduler (0, pl->saved_policy, &pl->saved_param) != 0
          || setpriority (PRIO_PROCESS, (id_t) pl->tid,
              pl->saved_nice) != 0))
    warn (&w, g_strdup_printf ("The %s's thread goes back to its pool "
            "without its former scheduling policy or nice value: %s",
            task_names[which], g_strerror (errno)));
  GST_DEBUG_OBJECT (tbq, "%s leaves thread %d%s", task_names[which],
      (int) pl->tid, pl->changed_cpus || pl->changed_sched ?
      ", placement put back" : "");
  pl->tid = 0;
  g_mutex_unlock (&tbq->placement_lock);
  post_warnings (tbq, &w);
}

void
gst_tbqueue_post_stream_status (GstTbQueue * tbq, GstObject * src,
    GstTask * task, GstStreamStatusType type)
{
  GstMessage *message;
  GValue value = G_VALUE_INIT;

  message = gst_message_new_stream_status (src, type, GST_ELEMENT_CAST (tbq));
  g_value_init (&value, GST_TYPE_TASK);
  g_value_set_object (&value, task);
  gst_message_set_stream_status_object (message, &value);
  g_value_unset (&value);
  gst_element_post_message (GST_ELEMENT_CAST (tbq), message);
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

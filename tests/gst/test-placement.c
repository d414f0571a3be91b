/* tbqueue thread placement: the copy task and the src task run on the CPUs
 * and with the scheduling policy their properties name, from the moment
 * their threads start (an application's STREAM_STATUS ENTER handler sees
 * it) and at once when a property changes while they run; what the system
 * refuses is a warning on the bus; an application's own GstTaskPool runs
 * both tasks.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every placement is read back from inside the thread it is meant for: a
 * sync bus handler runs in the thread that posts ENTER, a pad probe on the
 * element's src pad in the src task; after ENTER, the copy task's thread
 * is read through its thread id.  A property set while the tasks run is
 * applied before g_object_set () returns, and a warning is posted from
 * there or from the state change that starts the tasks: the tests look
 * right after, they wait for nothing but the threads and buffers.  The
 * tests use what any user may do (batch, idle and a higher nice value need
 * no privilege) and, for the refusals, a CPU that does not exist and a
 * real-time policy without CAP_SYS_NICE (dropped by the test for its own
 * threads).  What needs privilege (SCHED_FIFO, a lower nice value, leaving
 * SCHED_IDLE) is tried first in a thread of its own, and a test does
 * without it when the process has none.
 */
#include "tbq-check.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum
{
  COPY,
  SRC,
  N_TASKS
};

/* What a thread found about itself. */
typedef struct
{
  gboolean seen;
  pid_t tid;
  cpu_set_t cpus;
  int policy;
  int rt_priority;              /* SCHED_FIFO and SCHED_RR: 1 to 99 */
  int nice;
} ThreadView;

typedef struct
{
  GMutex lock;
  GCond cond;
  ThreadView enter[N_TASKS];    /* at STREAM_STATUS ENTER */
  ThreadView probe;             /* the src task, pushing a buffer */
  GPtrArray *warnings;          /* texts of the warning messages */
  /* What an application does at ENTER, in the task's thread. */
  gboolean app_sets_cpus;
  cpu_set_t app_cpus;
  GstTaskPool *app_pool;        /* set on the tasks at CREATE */
} Seen;

/* Linux keeps all of it per thread id: any thread may read it. */
static void
view_thread (pid_t tid, ThreadView * v)
{
  struct sched_param sp;

  v->seen = TRUE;
  v->tid = tid;
  fail_unless (sched_getaffinity (tid, sizeof v->cpus, &v->cpus) == 0);
  v->policy = sched_getscheduler (tid);
  fail_unless (sched_getparam (tid, &sp) == 0);
  v->rt_priority = sp.sched_priority;
  errno = 0;
  v->nice = getpriority (PRIO_PROCESS, (id_t) tid);
  fail_unless_equals_int (errno, 0);
}

static void
view_self (ThreadView * v)
{
  view_thread ((pid_t) syscall (SYS_gettid), v);
}

static GstBusSyncReply
on_message (GstBus * bus, GstMessage * m, gpointer user_data)
{
  Seen *s = user_data;
  GstStreamStatusType type;
  GstElement *owner;
  GError *err;
  gchar *dbg;
  gint which;

  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING) {
    gst_message_parse_warning (m, &err, &dbg);
    g_mutex_lock (&s->lock);
    g_ptr_array_add (s->warnings, g_strdup (err->message));
    g_cond_broadcast (&s->cond);
    g_mutex_unlock (&s->lock);
    g_error_free (err);
    g_free (dbg);
  } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_STREAM_STATUS) {
    gst_message_parse_stream_status (m, &type, &owner);
    /* The copy task's messages come from the element, the src task's from
     * its pad. */
    which = GST_IS_PAD (GST_MESSAGE_SRC (m)) ? SRC : COPY;
    if (type == GST_STREAM_STATUS_TYPE_CREATE && s->app_pool != NULL)
      gst_task_set_pool (g_value_get_object
          (gst_message_get_stream_status_object (m)), s->app_pool);
    if (type == GST_STREAM_STATUS_TYPE_ENTER) {
      g_mutex_lock (&s->lock);
      view_self (&s->enter[which]);
      if (s->app_sets_cpus)
        fail_unless (sched_setaffinity (0, sizeof s->app_cpus,
                &s->app_cpus) == 0);
      g_cond_broadcast (&s->cond);
      g_mutex_unlock (&s->lock);
    }
  }
  /* A sync handler that drops a message frees it. */
  gst_message_unref (m);
  return GST_BUS_DROP;
}

static GstPadProbeReturn
on_src_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Seen *s = user_data;

  g_mutex_lock (&s->lock);
  view_self (&s->probe);
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

static void
seen_init (Seen * s, TbqLink * l)
{
  GstBus *bus = gst_bus_new ();

  memset (s, 0, sizeof *s);
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  s->warnings = g_ptr_array_new_with_free_func (g_free);
  gst_bus_set_sync_handler (bus, on_message, s, NULL);
  gst_element_set_bus (l->element, bus);
  gst_object_unref (bus);
  gst_pad_add_probe (l->esrc, GST_PAD_PROBE_TYPE_BUFFER, on_src_buffer, s,
      NULL);
}

/* Stop watching and free the link (its teardown posts nothing we need). */
static void
seen_free_link (Seen * s, TbqLink * l)
{
  gst_element_set_bus (l->element, NULL);
  tbq_link_free (l);
  g_ptr_array_unref (s->warnings);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->cond);
}

/* Both tasks entered their threads. */
static void
wait_entered (Seen * s)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  g_mutex_lock (&s->lock);
  while (!s->enter[COPY].seen || !s->enter[SRC].seen)
    fail_unless (g_cond_wait_until (&s->cond, &s->lock, end),
        "the tasks did not start");
  g_mutex_unlock (&s->lock);
}

/* A warning containing every one of the words has been posted. */
static void
wait_warning (Seen * s, const gchar * const *words)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  g_mutex_lock (&s->lock);
  for (;;) {
    guint i, k;

    for (i = 0; i < s->warnings->len; i++) {
      const gchar *t = g_ptr_array_index (s->warnings, i);

      for (k = 0; words[k] != NULL && strstr (t, words[k]) != NULL; k++);
      if (words[k] == NULL) {
        g_mutex_unlock (&s->lock);
        return;
      }
    }
    if (!g_cond_wait_until (&s->cond, &s->lock, end))
      break;
  }
  for (guint i = 0; i < s->warnings->len; i++)
    GST_ERROR ("warning: %s", (gchar *) g_ptr_array_index (s->warnings, i));
  g_mutex_unlock (&s->lock);
  fail ("no warning with \"%s\"", words[0]);
}

#define WAIT_WARNING(s, ...) do { \
    static const gchar *const words_[] = { __VA_ARGS__, NULL }; \
    wait_warning (s, words_); \
  } while (0)

/* The lowest and the highest CPU this process may use. */
static void
allowed_cpus (guint * lowest, guint * highest)
{
  cpu_set_t set;
  guint c;

  fail_unless (sched_getaffinity (0, sizeof set, &set) == 0);
  *lowest = CPU_SETSIZE;
  *highest = 0;
  for (c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET (c, &set)) {
      *lowest = MIN (*lowest, c);
      *highest = c;
    }
  fail_unless (*lowest < CPU_SETSIZE);
}

static gboolean
only_cpu (const cpu_set_t * set, guint cpu)
{
  return CPU_COUNT (set) == 1 && CPU_ISSET (cpu, set);
}

static void
push_one_buffer (TbqLink * l)
{
  tbq_link_start (l);
  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, 1, 0)),
      GST_FLOW_OK);
  tbq_link_wait_buffers (l, 1);
}

static gchar *
cpu_string (guint cpu)
{
  return g_strdup_printf ("%u", cpu);
}

/* The src task, seen from inside, now: it pushes one more buffer, and the
 * pad probe looks at its thread before the buffer reaches our sink pad. */
static ThreadView
src_task_view (Seen * s, TbqLink * l)
{
  guint n = tbq_link_n_buffers (l);
  ThreadView v;

  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, 1,
              (n + 1) * GST_MSECOND)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, n + 1);
  g_mutex_lock (&s->lock);
  v = s->probe;
  g_mutex_unlock (&s->lock);
  return v;
}

/* The copy task's thread, now (the one that entered). */
static ThreadView
copy_task_view (Seen * s)
{
  ThreadView v;

  view_thread (s->enter[COPY].tid, &v);
  return v;
}

/* Warnings posted so far whose text contains `word`. */
static guint
count_warnings (Seen * s, const gchar * word)
{
  guint i, n = 0;

  g_mutex_lock (&s->lock);
  for (i = 0; i < s->warnings->len; i++)
    n += strstr (g_ptr_array_index (s->warnings, i), word) != NULL;
  g_mutex_unlock (&s->lock);
  return n;
}

static void
assert_no_warning (Seen * s)
{
  gchar *first = NULL;

  g_mutex_lock (&s->lock);
  if (s->warnings->len > 0)
    first = g_strdup (g_ptr_array_index (s->warnings, 0));
  g_mutex_unlock (&s->lock);
  fail_unless (first == NULL, "unexpected warning: %s", first);
}

static void
set_policy (TbqLink * l, const gchar * property, const gchar * nick)
{
  gst_util_set_object_arg (G_OBJECT (l->element), property, nick);
}

/* The value of a policy's nick, for g_object_set (). */
static gint
policy_value (TbqLink * l, const gchar * nick)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS
      (l->element), "src-task-policy");
  GEnumValue *v = g_enum_get_value_by_nick (g_type_class_peek
      (p->value_type), nick);

  fail_unless (v != NULL);
  return v->value;
}

/* ---- what this process may do, tried in a thread that ends with it ---- */

static gpointer
try_fifo (gpointer data)
{
  struct sched_param sp = { 1 };

  return GINT_TO_POINTER (sched_setscheduler (0, SCHED_FIFO, &sp) == 0);
}

static gpointer
try_lower_nice (gpointer data)
{
  id_t tid = (id_t) syscall (SYS_gettid);
  int nice = getpriority (PRIO_PROCESS, tid);

  /* Up is allowed to anyone; back down is what needs the privilege. */
  return GINT_TO_POINTER (setpriority (PRIO_PROCESS, tid, nice + 1) == 0
      && setpriority (PRIO_PROCESS, tid, nice) == 0);
}

/* SCHED_FIFO: CAP_SYS_NICE or an RLIMIT_RTPRIO, and no container limit. */
static gboolean
may_use_fifo (void)
{
  return GPOINTER_TO_INT (g_thread_join (g_thread_new ("try-fifo", try_fifo,
              NULL)));
}

/* Putting back a lower nice value (and leaving SCHED_IDLE): CAP_SYS_NICE
 * or an RLIMIT_NICE. */
static gboolean
may_lower_nice (void)
{
  return GPOINTER_TO_INT (g_thread_join (g_thread_new ("try-nice",
              try_lower_nice, NULL)));
}

GST_START_TEST (test_each_task_thread_starts_where_its_properties_say)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  guint lo, hi;
  gchar *copy_cpus, *src_cpus;
  Seen s;

  allowed_cpus (&lo, &hi);
  copy_cpus = cpu_string (hi);
  src_cpus = cpu_string (lo);
  g_object_set (l->element, "copy-task-cpus", copy_cpus, "src-task-cpus",
      src_cpus, "copy-task-nice", 3, NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "copy-task-policy",
      "batch");
  gst_util_set_object_arg (G_OBJECT (l->element), "src-task-policy", "idle");
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  /* Placed before ENTER: the application's handler saw it. */
  fail_unless (only_cpu (&s.enter[COPY].cpus, hi));
  fail_unless_equals_int (s.enter[COPY].policy, SCHED_BATCH);
  fail_unless_equals_int (s.enter[COPY].nice, 3);
  fail_unless (only_cpu (&s.enter[SRC].cpus, lo));
  fail_unless_equals_int (s.enter[SRC].policy, SCHED_IDLE);
  /* And the src task pushes from there. */
  fail_unless (s.probe.seen);
  fail_unless_equals_int (s.probe.tid, s.enter[SRC].tid);
  fail_unless (only_cpu (&s.probe.cpus, lo));
  fail_unless_equals_int (s.probe.policy, SCHED_IDLE);
  fail_unless_equals_int (s.warnings->len, 0);
  seen_free_link (&s, l);
  g_free (copy_cpus);
  g_free (src_cpus);
}

GST_END_TEST;

GST_START_TEST (test_unset_properties_leave_the_threads_alone)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  cpu_set_t mine;
  Seen s;

  fail_unless (sched_getaffinity (0, sizeof mine, &mine) == 0);
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless (CPU_EQUAL (&s.enter[COPY].cpus, &mine));
  fail_unless (CPU_EQUAL (&s.enter[SRC].cpus, &mine));
  fail_unless_equals_int (s.enter[COPY].policy, sched_getscheduler (0));
  fail_unless_equals_int (s.enter[SRC].policy, sched_getscheduler (0));
  fail_unless_equals_int (s.warnings->len, 0);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_a_change_while_running_applies_at_once)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  guint lo, hi;
  gchar *cpus;
  cpu_set_t got;
  Seen s;

  allowed_cpus (&lo, &hi);
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  cpus = cpu_string (hi);
  g_object_set (l->element, "copy-task-cpus", cpus, "src-task-cpus", cpus,
      NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "src-task-policy", "batch");
  /* Read back from outside: the threads are the ones that entered. */
  fail_unless (sched_getaffinity (s.enter[COPY].tid, sizeof got, &got) == 0);
  fail_unless (only_cpu (&got, hi));
  fail_unless (sched_getaffinity (s.enter[SRC].tid, sizeof got, &got) == 0);
  fail_unless (only_cpu (&got, hi));
  fail_unless_equals_int (sched_getscheduler (s.enter[SRC].tid), SCHED_BATCH);
  fail_unless_equals_int (s.warnings->len, 0);
  seen_free_link (&s, l);
  g_free (cpus);
}

GST_END_TEST;

GST_START_TEST (test_cpus_back_to_empty_while_running_restore_the_threads)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  guint lo, hi;
  gchar *cpus;
  cpu_set_t mine;
  ThreadView v;
  Seen s;

  fail_unless (sched_getaffinity (0, sizeof mine, &mine) == 0);
  allowed_cpus (&lo, &hi);
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  cpus = cpu_string (hi);
  g_object_set (l->element, "copy-task-cpus", cpus, "src-task-cpus", cpus,
      NULL);
  v = copy_task_view (&s);
  fail_unless (only_cpu (&v.cpus, hi));
  v = src_task_view (&s, l);
  fail_unless (only_cpu (&v.cpus, hi));
  /* Empty and NULL are the default: the CPUs the thread had when the task
   * entered it, this process's. */
  g_object_set (l->element, "copy-task-cpus", NULL, "src-task-cpus", "", NULL);
  v = copy_task_view (&s);
  fail_unless (CPU_EQUAL (&v.cpus, &s.enter[COPY].cpus));
  fail_unless (CPU_EQUAL (&v.cpus, &mine));
  v = src_task_view (&s, l);
  fail_unless (CPU_EQUAL (&v.cpus, &s.enter[SRC].cpus));
  fail_unless (CPU_EQUAL (&v.cpus, &mine));
  assert_no_warning (&s);
  seen_free_link (&s, l);
  g_free (cpus);
}

GST_END_TEST;

/* The thread as it entered, policy, real-time priority and nice value. */
static void
assert_scheduled_as (const ThreadView * v, const ThreadView * entered)
{
  fail_unless_equals_int (v->policy, entered->policy);
  fail_unless_equals_int (v->rt_priority, entered->rt_priority);
  fail_unless_equals_int (v->nice, entered->nice);
}

GST_START_TEST (test_policy_back_to_inherit_while_running_restores_the_threads)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  /* Going back down from a nice value of 5 needs CAP_SYS_NICE; without
   * it, the test changes the policy only.  SCHED_FIFO (a real-time
   * priority to take back) too; without it, batch again. */
  gint nice = may_lower_nice ()? 5 : 0;
  gboolean fifo = may_use_fifo ();
  ThreadView v;
  Seen s;

  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  g_object_set (l->element, "src-task-nice", nice,
      fifo ? "copy-task-priority" : "copy-task-nice", fifo ? 20 : nice, NULL);
  set_policy (l, "src-task-policy", "batch");
  set_policy (l, "copy-task-policy", fifo ? "fifo" : "batch");
  v = src_task_view (&s, l);
  fail_unless_equals_int (v.policy, SCHED_BATCH);
  fail_unless_equals_int (v.nice, nice);
  v = copy_task_view (&s);
  fail_unless_equals_int (v.policy, fifo ? SCHED_FIFO : SCHED_BATCH);
  fail_unless_equals_int (fifo ? v.rt_priority : v.nice, fifo ? 20 : nice);
  set_policy (l, "src-task-policy", "inherit");
  set_policy (l, "copy-task-policy", "inherit");
  v = src_task_view (&s, l);
  assert_scheduled_as (&v, &s.enter[SRC]);
  v = copy_task_view (&s);
  assert_scheduled_as (&v, &s.enter[COPY]);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_an_application_handler_at_enter_has_the_last_word)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  guint lo, hi;
  gchar *cpus;
  Seen s;

  allowed_cpus (&lo, &hi);
  cpus = cpu_string (lo);
  g_object_set (l->element, "src-task-cpus", cpus, NULL);
  seen_init (&s, l);
  s.app_sets_cpus = TRUE;
  CPU_ZERO (&s.app_cpus);
  CPU_SET (hi, &s.app_cpus);
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless (only_cpu (&s.enter[SRC].cpus, lo));
  fail_unless (only_cpu (&s.probe.cpus, hi));
  seen_free_link (&s, l);
  g_free (cpus);
}

GST_END_TEST;

GST_START_TEST (test_a_cpu_that_does_not_exist_is_a_warning)
{
  TbqLink *l = tbq_link_new ("tbqueue", "copy-task-cpus", "1000", NULL);
  guint lo, hi;
  gchar *cpus;
  cpu_set_t mine;
  Seen s;

  fail_unless (sched_getaffinity (0, sizeof mine, &mine) == 0);
  allowed_cpus (&lo, &hi);
  cpus = g_strdup_printf ("%u,1001", lo);
  g_object_set (l->element, "src-task-cpus", cpus, NULL);
  seen_init (&s, l);
  push_one_buffer (l);
  WAIT_WARNING (&s, "copy task", "1000");
  WAIT_WARNING (&s, "src task", "1001", "not online");
  wait_entered (&s);
  /* Refused: where it was.  Partly refused: on the CPUs that exist. */
  fail_unless (CPU_EQUAL (&s.enter[COPY].cpus, &mine));
  fail_unless (only_cpu (&s.enter[SRC].cpus, lo));
  seen_free_link (&s, l);
  g_free (cpus);
}

GST_END_TEST;

GST_START_TEST (test_a_malformed_cpu_list_while_running_is_a_warning_at_once)
{
  TbqLink *l;
  guint lo, hi;
  gchar *first, *cpus;
  ThreadView v;
  Seen s;

  allowed_cpus (&lo, &hi);
  first = cpu_string (lo);
  l = tbq_link_new ("tbqueue", "src-task-cpus", first, NULL);
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  g_object_set (l->element, "src-task-cpus", "0-", NULL);
  fail_unless_equals_int (count_warnings (&s, "\"0-\""), 1);
  WAIT_WARNING (&s, "\"0-\"", "not a CPU list", "src task");
  g_object_set (l->element, "copy-task-cpus", "3-1", NULL);
  WAIT_WARNING (&s, "\"3-1\"", "copy task");
  /* Nothing changed: the property reads the last valid list, and the
   * thread is where that list put it. */
  g_object_get (l->element, "src-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, first);
  g_free (cpus);
  g_object_get (l->element, "copy-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, "");
  g_free (cpus);
  v = src_task_view (&s, l);
  fail_unless (only_cpu (&v.cpus, lo));
  seen_free_link (&s, l);
  g_free (first);
}

GST_END_TEST;

GST_START_TEST (test_a_malformed_cpu_list_is_a_warning_at_each_start)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  Seen s;

  seen_init (&s, l);
  /* Noted, for the tasks that are not running yet. */
  g_object_set (l->element, "copy-task-cpus", "abc", NULL);
  fail_unless_equals_int (count_warnings (&s, "\"abc\""), 0);
  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless_equals_int (count_warnings (&s, "\"abc\""), 1);
  WAIT_WARNING (&s, "\"abc\"", "not a CPU list", "copy task");
  tbq_link_set_state (l, GST_STATE_READY);
  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless_equals_int (count_warnings (&s, "\"abc\""), 2);
  seen_free_link (&s, l);
}

GST_END_TEST;

/* ---- on a launch line: the warnings come when the tasks start, to the
 * bus the element has by then ---- */

/* A warning message with every one of the words. */
static gboolean
warning_has (GstMessage * m, const gchar * const *words)
{
  gboolean all = TRUE;
  GError *err;
  gchar *dbg;
  guint k;

  gst_message_parse_warning (m, &err, &dbg);
  GST_INFO ("warning: %s", err->message);
  for (k = 0; words[k] != NULL; k++)
    all = all && strstr (err->message, words[k]) != NULL;
  g_error_free (err);
  g_free (dbg);
  return all;
}

/* `props` given to a tbqueue named q on a launch line. */
static GstElement *
launch_with (const gchar * props, GstElement ** q)
{
  gchar *desc = g_strdup_printf ("fakesrc num-buffers=10 ! tbqueue name=q "
      "%s ! fakesink", props);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);

  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  *q = gst_bin_get_by_name (GST_BIN (pipeline), "q");
  return pipeline;
}

/* Play to the end, as gst-launch-1.0 does, and see the warning on the
 * way, before or after EOS (a task's thread may enter late).  Not stopped
 * before EOS: tbqueue stopped while a serialized query (fakesrc's
 * ALLOCATION) is still in its source pool hangs, a bug of its own. */
static void
play_until_warning (GstElement * pipeline, const gchar * const *words)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  gboolean warned = FALSE, eos = FALSE;

  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  while (!warned || !eos) {
    GstMessage *m = tbq_bus_wait (bus, GST_MESSAGE_WARNING | GST_MESSAGE_EOS
        | GST_MESSAGE_ERROR);

    fail_unless (m != NULL, "no %s", warned ? "EOS" : words[0]);
    fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS)
      eos = TRUE;
    else
      warned = warned || warning_has (m, words);
    gst_message_unref (m);
  }
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
}

static const gchar *const malformed_lists[] = { "99999", "0-", "1,,2", "abc" };

GST_START_TEST (test_a_malformed_cpu_list_on_a_launch_line_is_a_warning)
{
  const gchar *list = malformed_lists[__i__];
  gchar *props = g_strdup_printf ("copy-task-cpus=%s", list);
  gchar *quoted = g_strdup_printf ("\"%s\"", list);
  const gchar *words[] = { quoted, "not a CPU list", "copy task", NULL };
  GstElement *q, *pipeline = launch_with (props, &q);
  gchar *cpus;

  /* The property keeps the last valid list (here the default). */
  g_object_get (q, "copy-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, "");
  g_free (cpus);
  play_until_warning (pipeline, words);
  gst_object_unref (q);
  gst_object_unref (pipeline);
  g_free (props);
  g_free (quoted);
}

GST_END_TEST;

/* What else the element cannot do, given on a launch line, and words of
 * its warning. */
static const struct
{
  const gchar *props;
  const gchar *words[4];
} launch_refusals[] = {
  /* Checked when the tasks start. */
  {"src-task-policy=fifo", {"Priority 0", "src task", "fifo"}},
  /* A real-time priority with a policy of nice values. */
  {"copy-task-policy=other copy-task-priority=50",
      {"Priority 50", "copy task", "other"}},
  /* Refused by the system when the task's thread enters. */
  {"copy-task-cpus=1000", {"copy task", "1000"}},
};

GST_START_TEST (test_other_placement_errors_on_a_launch_line_are_warnings)
{
  GstElement *q, *pipeline = launch_with (launch_refusals[__i__].props, &q);

  play_until_warning (pipeline, launch_refusals[__i__].words);
  gst_object_unref (q);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* This process's threads, from now on, without CAP_SYS_NICE and with no
 * real-time priority allowed by its limits (an unprivileged user's). */
static void
drop_realtime_permission (void)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];
  struct rlimit rl = { 0, 0 };

  fail_unless (syscall (SYS_capget, &hdr, data) == 0);
  data[CAP_TO_INDEX (CAP_SYS_NICE)].effective &= ~CAP_TO_MASK (CAP_SYS_NICE);
  data[CAP_TO_INDEX (CAP_SYS_NICE)].permitted &= ~CAP_TO_MASK (CAP_SYS_NICE);
  fail_unless (syscall (SYS_capset, &hdr, data) == 0);
  fail_unless (setrlimit (RLIMIT_RTPRIO, &rl) == 0);
}

GST_START_TEST (test_a_realtime_policy_without_permission_is_a_warning)
{
  TbqLink *l;
  Seen s;

  /* Before any thread of this test process exists: they inherit it. */
  drop_realtime_permission ();
  l = tbq_link_new ("tbqueue", "src-task-priority", 10, NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "src-task-policy", "fifo");
  seen_init (&s, l);
  push_one_buffer (l);
  WAIT_WARNING (&s, "src task", "fifo", "CAP_SYS_NICE");
  wait_entered (&s);
  fail_unless_equals_int (s.enter[SRC].policy, sched_getscheduler (0));
  /* While running too, as the property changes. */
  g_object_set (l->element, "copy-task-priority", 10, "copy-task-policy",
      policy_value (l, "rr"), NULL);
  fail_unless_equals_int (count_warnings (&s, "copy task"), 1);
  WAIT_WARNING (&s, "copy task", "rr", "CAP_SYS_NICE");
  fail_unless_equals_int (copy_task_view (&s).policy, sched_getscheduler (0));
  seen_free_link (&s, l);
}

GST_END_TEST;

/* ---- a policy and its priority ---- */

GST_START_TEST (test_a_pair_not_valid_at_start_is_a_warning)
{
  TbqLink *l = tbq_link_new ("tbqueue", "copy-task-priority", 0, NULL);
  Seen s;

  set_policy (l, "copy-task-policy", "rr");
  seen_init (&s, l);
  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless_equals_int (count_warnings (&s, "Priority 0"), 1);
  WAIT_WARNING (&s, "Priority 0", "copy task", "rr");
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless_equals_int (s.enter[COPY].policy, sched_getscheduler (0));
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_a_pair_left_invalid_is_a_warning_at_the_next_start)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  ThreadView v;
  Seen s;

  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  /* Half of a change (the priority would come next): the thread is left
   * as it is, and nothing is said yet. */
  set_policy (l, "src-task-policy", "fifo");
  v = src_task_view (&s, l);
  assert_scheduled_as (&v, &s.enter[SRC]);
  assert_no_warning (&s);
  /* The task starts again with it: now it is an error. */
  tbq_link_set_state (l, GST_STATE_READY);
  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless_equals_int (count_warnings (&s, "Priority 0"), 1);
  WAIT_WARNING (&s, "Priority 0", "src task", "fifo");
  seen_free_link (&s, l);
}

GST_END_TEST;

/* A change of policy and real-time priority while the src task runs
 * whose every pair half-way (the new policy with the old priority, the old
 * policy with the new priority) is not valid: from other 0 to fifo 20 (a
 * real-time priority does not go with other, 0 is none for fifo).  When
 * this process cannot get SCHED_FIFO (no CAP_SYS_NICE, no RLIMIT_RTPRIO, a
 * container's real-time limit), policies that need no privilege: from
 * inherit 50 to batch 0, where only the new policy with the old priority
 * is not valid.  The nice value is 10 all along: batch applies it. */
typedef struct
{
  const gchar *from_policy;
  gint from_priority;
  const gchar *to_policy;
  gint to_priority;
  int to_linux_policy;
} PairChange;

#define PAIR_NICE 10

static PairChange
pair_change (void)
{
  static const PairChange realtime = { "other", 0, "fifo", 20, SCHED_FIFO };
  static const PairChange unprivileged =
      { "inherit", 50, "batch", 0, SCHED_BATCH };

  return may_use_fifo ()? realtime : unprivileged;
}

/* The tasks run, the src task with the first pair. */
static TbqLink *
start_with_first_pair (Seen * s, const PairChange * c)
{
  TbqLink *l = tbq_link_new ("tbqueue", "src-task-priority",
      c->from_priority, "src-task-nice", PAIR_NICE, NULL);

  set_policy (l, "src-task-policy", c->from_policy);
  seen_init (s, l);
  push_one_buffer (l);
  wait_entered (s);
  return l;
}

/* The src task's thread is scheduled with the second pair. */
static void
assert_second_pair (Seen * s, TbqLink * l, const PairChange * c)
{
  ThreadView v = src_task_view (s, l);

  fail_unless_equals_int (v.policy, c->to_linux_policy);
  /* The real-time priority, or the nice value. */
  fail_unless_equals_int (c->to_linux_policy == SCHED_FIFO ? v.rt_priority :
      v.nice, c->to_linux_policy == SCHED_FIFO ? c->to_priority : PAIR_NICE);
}

GST_START_TEST (test_policy_then_priority_while_running_is_no_warning)
{
  PairChange c = pair_change ();
  Seen s;
  TbqLink *l = start_with_first_pair (&s, &c);

  set_policy (l, "src-task-policy", c.to_policy);
  g_object_set (l->element, "src-task-priority", c.to_priority, NULL);
  assert_second_pair (&s, l, &c);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_priority_then_policy_while_running_is_no_warning)
{
  PairChange c = pair_change ();
  Seen s;
  TbqLink *l = start_with_first_pair (&s, &c);

  g_object_set (l->element, "src-task-priority", c.to_priority, NULL);
  set_policy (l, "src-task-policy", c.to_policy);
  assert_second_pair (&s, l, &c);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_policy_and_priority_in_one_call_is_no_warning)
{
  PairChange c = pair_change ();
  Seen s;
  TbqLink *l = start_with_first_pair (&s, &c);

  g_object_set (l->element, "src-task-policy", policy_value (l, c.to_policy),
      "src-task-priority", c.to_priority, NULL);
  assert_second_pair (&s, l, &c);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_a_policy_and_priority_set_in_one_call_apply_as_one_pair)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  ThreadView v;
  Seen s;

  set_policy (l, "src-task-policy", "other");
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  /* Applied one after the other, the nice value would first be applied
   * with "other"; as a pair, idle has none: the nice value stays. */
  g_object_set (l->element, "src-task-nice", 10, "src-task-policy",
      policy_value (l, "idle"), NULL);
  v = src_task_view (&s, l);
  fail_unless_equals_int (v.policy, SCHED_IDLE);
  fail_unless_equals_int (v.nice, s.enter[SRC].nice);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

/* ---- the real-time priority and the nice value ---- */

/* Two properties for two units: the range of each is the system's. */
GST_START_TEST (test_priority_is_real_time_and_nice_is_a_nice_value)
{
  GstElement *tbq = gst_element_factory_make ("tbqueue", NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (tbq);
  const gchar *const tasks[] = { "copy-task", "src-task" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (tasks); i++) {
    gchar *priority = g_strdup_printf ("%s-priority", tasks[i]);
    gchar *nice = g_strdup_printf ("%s-nice", tasks[i]);
    GParamSpecInt *p = G_PARAM_SPEC_INT (g_object_class_find_property (klass,
            priority));
    GParamSpecInt *n = G_PARAM_SPEC_INT (g_object_class_find_property (klass,
            nice));

    /* 0: none set; fifo and rr need 1 to 99. */
    fail_unless_equals_int (p->minimum, 0);
    fail_unless_equals_int (p->maximum, 99);
    fail_unless_equals_int (p->default_value, 0);
    fail_unless_equals_int (n->minimum, -20);
    fail_unless_equals_int (n->maximum, 19);
    fail_unless_equals_int (n->default_value, 0);
    g_free (priority);
    g_free (nice);
  }
  gst_object_unref (tbq);
}

GST_END_TEST;

GST_START_TEST (test_the_nice_value_goes_with_other_and_batch_only)
{
  TbqLink *l = tbq_link_new ("tbqueue", "src-task-nice", 5,
      "copy-task-nice", 5, NULL);
  gint mine = getpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid));
  Seen s;

  set_policy (l, "src-task-policy", "other");
  set_policy (l, "copy-task-policy", "idle");
  seen_init (&s, l);
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless_equals_int (s.enter[SRC].policy, SCHED_OTHER);
  fail_unless_equals_int (s.enter[SRC].nice, 5);
  /* Idle takes none: the thread keeps the nice value it was created with,
   * this thread's. */
  fail_unless_equals_int (s.enter[COPY].policy, SCHED_IDLE);
  fail_unless_equals_int (s.enter[COPY].nice, mine);
  assert_no_warning (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_a_realtime_priority_goes_with_fifo_and_rr_only)
{
  TbqLink *l = tbq_link_new ("tbqueue", "copy-task-priority", 10, NULL);
  ThreadView v;
  Seen s;

  /* With batch, a policy of nice values, it is a pair that does not go
   * together: said as the tasks start, and the thread is left alone. */
  set_policy (l, "copy-task-policy", "batch");
  seen_init (&s, l);
  tbq_link_set_state (l, GST_STATE_PAUSED);
  fail_unless_equals_int (count_warnings (&s, "Priority 10"), 1);
  WAIT_WARNING (&s, "Priority 10", "copy task", "batch");
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless_equals_int (s.enter[COPY].policy, sched_getscheduler (0));
  /* With fifo (where this process may have it) the priority applies, and
   * the nice value set in the same call does not. */
  if (may_use_fifo ()) {
    g_object_set (l->element, "copy-task-policy", policy_value (l, "fifo"),
        "copy-task-nice", 7, NULL);
    v = copy_task_view (&s);
    fail_unless_equals_int (v.policy, SCHED_FIFO);
    fail_unless_equals_int (v.rt_priority, 10);
    fail_unless_equals_int (v.nice, s.enter[COPY].nice);
  }
  seen_free_link (&s, l);
}

GST_END_TEST;

/* ---- an application's own threads ---- */

typedef struct
{
  GstTaskPool parent;
  gint pushed;
} TestPool;

typedef GstTaskPoolClass TestPoolClass;

G_DEFINE_TYPE (TestPool, test_pool, GST_TYPE_TASK_POOL);

typedef struct
{
  GstTaskPoolFunction func;
  gpointer data;
} PoolJob;

static gpointer
pool_thread (gpointer data)
{
  PoolJob *job = data;

  job->func (job->data);
  g_free (job);
  return NULL;
}

static gpointer
test_pool_push (GstTaskPool * pool, GstTaskPoolFunction func,
    gpointer data, GError ** error)
{
  PoolJob *job = g_new (PoolJob, 1);

  job->func = func;
  job->data = data;
  g_atomic_int_inc (&((TestPool *) pool)->pushed);
  return g_thread_new ("test-pool", pool_thread, job);
}

static void
test_pool_join (GstTaskPool * pool, gpointer id)
{
  g_thread_join (id);
}

static void
test_pool_prepare (GstTaskPool * pool, GError ** error)
{
}

static void
test_pool_cleanup (GstTaskPool * pool)
{
}

static void
test_pool_class_init (TestPoolClass * klass)
{
  klass->prepare = test_pool_prepare;
  klass->cleanup = test_pool_cleanup;
  klass->push = test_pool_push;
  klass->join = test_pool_join;
}

static void
test_pool_init (TestPool * pool)
{
}

GST_START_TEST (test_an_application_task_pool_runs_both_tasks_placed)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  TestPool *pool = g_object_new (test_pool_get_type (), NULL);
  guint lo, hi;
  gchar *cpus;
  Seen s;

  allowed_cpus (&lo, &hi);
  cpus = cpu_string (hi);
  g_object_set (l->element, "copy-task-cpus", cpus, "src-task-cpus", cpus,
      NULL);
  seen_init (&s, l);
  s.app_pool = GST_TASK_POOL (pool);
  push_one_buffer (l);
  wait_entered (&s);
  fail_unless_equals_int (g_atomic_int_get (&pool->pushed), 2);
  fail_unless (only_cpu (&s.enter[COPY].cpus, hi));
  fail_unless (only_cpu (&s.enter[SRC].cpus, hi));
  seen_free_link (&s, l);
  gst_object_unref (pool);
  g_free (cpus);
}

GST_END_TEST;

static Suite *
placement_suite (void)
{
  Suite *s = suite_create ("tbqueue-placement");
  TCase *tc = tbq_tcase (s, "placement");

  tcase_add_test (tc, test_each_task_thread_starts_where_its_properties_say);
  tcase_add_test (tc, test_unset_properties_leave_the_threads_alone);
  tcase_add_test (tc, test_a_change_while_running_applies_at_once);
  tcase_add_test (tc,
      test_cpus_back_to_empty_while_running_restore_the_threads);
  tcase_add_test (tc,
      test_policy_back_to_inherit_while_running_restores_the_threads);
  tcase_add_test (tc, test_an_application_handler_at_enter_has_the_last_word);
  tcase_add_test (tc, test_a_cpu_that_does_not_exist_is_a_warning);
  tcase_add_test (tc,
      test_a_malformed_cpu_list_while_running_is_a_warning_at_once);
  tcase_add_test (tc, test_a_malformed_cpu_list_is_a_warning_at_each_start);
  tcase_add_loop_test (tc,
      test_a_malformed_cpu_list_on_a_launch_line_is_a_warning, 0,
      G_N_ELEMENTS (malformed_lists));
  tcase_add_loop_test (tc,
      test_other_placement_errors_on_a_launch_line_are_warnings, 0,
      G_N_ELEMENTS (launch_refusals));
  tcase_add_test (tc, test_a_realtime_policy_without_permission_is_a_warning);
  tcase_add_test (tc, test_a_pair_not_valid_at_start_is_a_warning);
  tcase_add_test (tc, test_a_pair_left_invalid_is_a_warning_at_the_next_start);
  tcase_add_test (tc, test_policy_then_priority_while_running_is_no_warning);
  tcase_add_test (tc, test_priority_then_policy_while_running_is_no_warning);
  tcase_add_test (tc, test_policy_and_priority_in_one_call_is_no_warning);
  tcase_add_test (tc,
      test_a_policy_and_priority_set_in_one_call_apply_as_one_pair);
  tcase_add_test (tc, test_priority_is_real_time_and_nice_is_a_nice_value);
  tcase_add_test (tc, test_the_nice_value_goes_with_other_and_batch_only);
  tcase_add_test (tc, test_a_realtime_priority_goes_with_fifo_and_rr_only);
  tcase_add_test (tc, test_an_application_task_pool_runs_both_tasks_placed);
  return s;
}

TBQ_CHECK_MAIN (placement);

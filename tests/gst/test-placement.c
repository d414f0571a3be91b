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
 * element's src pad in the src task.  The tests use what any user may do
 * (batch, idle and a higher nice value need no privilege) and, for the
 * refusals, a CPU that does not exist and a real-time policy without
 * CAP_SYS_NICE (dropped by the test for its own threads).
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

static void
view_self (ThreadView * v)
{
  v->seen = TRUE;
  v->tid = (pid_t) syscall (SYS_gettid);
  fail_unless (sched_getaffinity (0, sizeof v->cpus, &v->cpus) == 0);
  v->policy = sched_getscheduler (0);
  errno = 0;
  v->nice = getpriority (PRIO_PROCESS, (id_t) v->tid);
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
      src_cpus, "copy-task-priority", 3, NULL);
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

GST_START_TEST (test_a_malformed_cpu_list_is_a_warning_and_changes_nothing)
{
  TbqLink *l = tbq_link_new ("tbqueue", "src-task-cpus", "0", NULL);
  gchar *cpus;
  Seen s;

  seen_init (&s, l);
  g_object_set (l->element, "src-task-cpus", "0-", NULL);
  WAIT_WARNING (&s, "\"0-\"", "not a CPU list", "src task");
  g_object_set (l->element, "copy-task-cpus", "3-1", NULL);
  WAIT_WARNING (&s, "\"3-1\"", "copy task");
  g_object_get (l->element, "src-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, "0");
  g_free (cpus);
  g_object_get (l->element, "copy-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, "");
  g_free (cpus);
  seen_free_link (&s, l);
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
  /* A priority that does not go with the policy is refused too. */
  g_object_set (l->element, "copy-task-priority", 0, NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "copy-task-policy", "rr");
  WAIT_WARNING (&s, "Priority 0", "copy task", "rr");
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
  tcase_add_test (tc, test_an_application_handler_at_enter_has_the_last_word);
  tcase_add_test (tc, test_a_cpu_that_does_not_exist_is_a_warning);
  tcase_add_test (tc,
      test_a_malformed_cpu_list_is_a_warning_and_changes_nothing);
  tcase_add_test (tc, test_a_realtime_policy_without_permission_is_a_warning);
  tcase_add_test (tc, test_an_application_task_pool_runs_both_tasks_placed);
  return s;
}

TBQ_CHECK_MAIN (placement);

/* tbqueue thread placement where the system cannot place threads: the
 * portable fallback of gsttbqplatform.c (any system but Linux, or a build
 * configured with -Dplacement=disabled, as tools/test's build-condvar is).
 * A placement property set to other than its default is a warning "not
 * supported on this platform" on the bus (when the tasks start, and at
 * once when it is set while they run), it reads back as set, and the tasks
 * run as they are and move the data.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built only in such a build (tests/gst/meson.build): test-placement.c is
 * the Linux build's.  The test is portable; on Linux (where the fallback
 * is forced) it also reads the src task's thread from inside, to see that
 * nothing was applied to it.
 */
#include "tbq-check.h"

#include <string.h>

#ifdef __linux__
#include <sched.h>
#endif

#define UNSUPPORTED "not supported on this platform"

typedef struct
{
  GMutex lock;
  GPtrArray *warnings;          /* texts of the warning messages */
#ifdef __linux__
  gboolean probed;
  cpu_set_t src_cpus;           /* the src task's, as it pushes */
  int src_policy;
#endif
} Seen;

static GstBusSyncReply
on_message (GstBus * bus, GstMessage * m, gpointer user_data)
{
  Seen *s = user_data;
  GError *err;
  gchar *dbg;

  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING) {
    gst_message_parse_warning (m, &err, &dbg);
    g_mutex_lock (&s->lock);
    g_ptr_array_add (s->warnings, g_strdup (err->message));
    g_mutex_unlock (&s->lock);
    g_error_free (err);
    g_free (dbg);
  }
  gst_message_unref (m);
  return GST_BUS_DROP;
}

#ifdef __linux__
/* In the src task's thread: where it runs and how. */
static GstPadProbeReturn
on_src_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Seen *s = user_data;

  g_mutex_lock (&s->lock);
  fail_unless (sched_getaffinity (0, sizeof s->src_cpus, &s->src_cpus) == 0);
  s->src_policy = sched_getscheduler (0);
  s->probed = TRUE;
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}
#endif

/* Watch the element's warnings (and, on Linux, its src task's thread). */
static void
seen_init (Seen * s, TbqLink * l)
{
  GstBus *bus = gst_bus_new ();

  memset (s, 0, sizeof *s);
  g_mutex_init (&s->lock);
  s->warnings = g_ptr_array_new_with_free_func (g_free);
  gst_bus_set_sync_handler (bus, on_message, s, NULL);
  gst_element_set_bus (l->element, bus);
  gst_object_unref (bus);
#ifdef __linux__
  gst_pad_add_probe (l->esrc, GST_PAD_PROBE_TYPE_BUFFER, on_src_buffer, s,
      NULL);
#endif
}

static void
seen_free_link (Seen * s, TbqLink * l)
{
  gst_element_set_bus (l->element, NULL);
  tbq_link_free (l);
  g_ptr_array_unref (s->warnings);
  g_mutex_clear (&s->lock);
}

/* Warnings posted so far that contain both words (the second may be
 * NULL). */
static guint
count_warnings (Seen * s, const gchar * word, const gchar * word2)
{
  guint i, n = 0;

  g_mutex_lock (&s->lock);
  for (i = 0; i < s->warnings->len; i++) {
    const gchar *t = g_ptr_array_index (s->warnings, i);

    n += strstr (t, word) != NULL && (word2 == NULL
        || strstr (t, word2) != NULL);
  }
  g_mutex_unlock (&s->lock);
  return n;
}

/* Data goes through: one more buffer reaches our sink pad. */
static void
push_one (TbqLink * l)
{
  guint n = tbq_link_n_buffers (l);

  fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (32, 1,
              (n + 1) * GST_MSECOND)), GST_FLOW_OK);
  tbq_link_wait_buffers (l, n + 1);
}

/* On Linux: the src task's thread is as the process's threads are (the
 * ones GStreamer creates inherit this thread's CPUs and policy). */
static void
assert_src_task_untouched (Seen * s)
{
#ifdef __linux__
  cpu_set_t mine;

  fail_unless (sched_getaffinity (0, sizeof mine, &mine) == 0);
  g_mutex_lock (&s->lock);
  fail_unless (s->probed);
  fail_unless (CPU_EQUAL (&s->src_cpus, &mine),
      "the src task's CPUs were changed");
  fail_unless_equals_int (s->src_policy, sched_getscheduler (0));
  g_mutex_unlock (&s->lock);
#endif
}

GST_START_TEST (test_cpus_set_before_the_start_are_a_warning_at_the_start)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  gchar *cpus;
  Seen s;

  seen_init (&s, l);
  /* Noted, for tasks that do not run yet: said when they start. */
  g_object_set (l->element, "copy-task-cpus", "0", "src-task-cpus", "0",
      NULL);
  fail_unless_equals_int (count_warnings (&s, UNSUPPORTED, NULL), 0);
  tbq_link_start (l);
  fail_unless_equals_int (count_warnings (&s, UNSUPPORTED, "copy task"), 1);
  fail_unless_equals_int (count_warnings (&s, UNSUPPORTED, "src task"), 1);
  fail_unless_equals_int (s.warnings->len, 2);
  /* Kept as set, and the tasks run as they are. */
  g_object_get (l->element, "copy-task-cpus", &cpus, NULL);
  fail_unless_equals_string (cpus, "0");
  g_free (cpus);
  push_one (l);
  assert_src_task_untouched (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_a_policy_set_while_running_is_a_warning_at_once)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  Seen s;

  seen_init (&s, l);
  tbq_link_start (l);
  push_one (l);
  fail_unless_equals_int (s.warnings->len, 0);
  gst_util_set_object_arg (G_OBJECT (l->element), "src-task-policy", "batch");
  /* Posted before g_object_set () returned. */
  fail_unless_equals_int (count_warnings (&s, UNSUPPORTED, "src task"), 1);
  fail_unless_equals_int (s.warnings->len, 1);
  push_one (l);
  assert_src_task_untouched (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

GST_START_TEST (test_the_defaults_are_no_warning)
{
  TbqLink *l = tbq_link_new ("tbqueue", "silent", FALSE, NULL);
  Seen s;

  seen_init (&s, l);
  tbq_link_start (l);
  push_one (l);
  /* Set to what they are: nothing asked of the system. */
  g_object_set (l->element, "copy-task-cpus", "", NULL);
  gst_util_set_object_arg (G_OBJECT (l->element), "copy-task-policy",
      "inherit");
  push_one (l);
  fail_unless_equals_int (s.warnings->len, 0);
  assert_src_task_untouched (&s);
  seen_free_link (&s, l);
}

GST_END_TEST;

static Suite *
placement_fallback_suite (void)
{
  Suite *s = suite_create ("tbqueue-placement-fallback");
  TCase *tc = tbq_tcase (s, "placement-fallback");

  tcase_add_test (tc,
      test_cpus_set_before_the_start_are_a_warning_at_the_start);
  tcase_add_test (tc, test_a_policy_set_while_running_is_a_warning_at_once);
  tcase_add_test (tc, test_the_defaults_are_no_warning);
  return s;
}

TBQ_CHECK_MAIN (placement_fallback);

/* Copy groups: tbqueues that share one copy thread.  Eight streams, one
 * stalled for good: the others deliver everything; groups with their own
 * placements; streams joining and leaving while others run.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

#include <sched.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N_STREAMS 8

typedef struct
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  guint buffers[N_STREAMS];
  gboolean eos[N_STREAMS];
  gboolean stalled;             /* stream 0's downstream waits */
} Counts;

typedef struct
{
  Counts *c;
  guint i;
} Probe;

static GstPadProbeReturn
count_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Probe *p = data;
  Counts *c = p->c;

  gboolean buffer = (GST_PAD_PROBE_INFO_TYPE (info)
      & GST_PAD_PROBE_TYPE_BUFFER) != 0;

  /* Only buffers stall: the events before them go by, so that upstream's
   * serialized ALLOCATION query behind them is answered and data flows
   * into the queue. */
  pthread_mutex_lock (&c->lock);
  while (p->i == 0 && c->stalled && buffer)
    pthread_cond_wait (&c->cond, &c->lock);
  if (buffer)
    c->buffers[p->i]++;
  else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS)
    c->eos[p->i] = TRUE;
  pthread_cond_broadcast (&c->cond);
  pthread_mutex_unlock (&c->lock);
  return GST_PAD_PROBE_OK;
}

/* Wait on c->cond (its lock held) until `deadline` (g_get_monotonic_time
 * terms): FALSE once it has passed. */
static gboolean
counts_wait (Counts * c, gint64 deadline)
{
  struct timespec ts;

  if (g_get_monotonic_time () > deadline)
    return FALSE;
  clock_gettime (CLOCK_REALTIME, &ts);
  ts.tv_sec += 1;
  pthread_cond_timedwait (&c->cond, &c->lock, &ts);
  return TRUE;
}

static gboolean
others_done (Counts * c, guint n)
{
  guint i;

  for (i = 1; i < N_STREAMS; i++)
    if (!c->eos[i] || c->buffers[i] != n)
      return FALSE;
  return TRUE;
}

/* Eight fakesrc ! tbqueue `props` ! fakesink branches of `n` buffers of
 * `size` bytes and more (700 more each); the sink of the first stalls for
 * good.  The seven others reach EOS with
 * every buffer; then `check` looks at the stalled one (q0) while it is
 * stalled; let go, it delivers everything too. */
static void
run_with_one_stalled (guint n, guint size, const gchar * props,
    void (*check) (GstElement * q0))
{
  GString *desc = g_string_new (NULL);
  GstElement *pipeline, *q0;
  Counts c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
  Probe probes[N_STREAMS];
  GstBus *bus;
  GstMessage *msg;
  gint64 deadline = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  guint i;

  for (i = 0; i < N_STREAMS; i++)
    g_string_append_printf (desc, "fakesrc num-buffers=%u sizetype=fixed "
        "sizemax=%u filltype=nothing ! tbqueue name=q%u %s "
        "! fakesink name=s%u sync=false async=false ", n, size + 700 * i, i,
        props, i);
  pipeline = gst_parse_launch (desc->str, NULL);
  g_string_free (desc, TRUE);
  fail_unless (pipeline != NULL);
  c.stalled = TRUE;
  for (i = 0; i < N_STREAMS; i++) {
    gchar *name = g_strdup_printf ("s%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    GstPad *pad = gst_element_get_static_pad (sink, "sink");

    probes[i].c = &c;
    probes[i].i = i;
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
        GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, count_probe, &probes[i], NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
    g_free (name);
  }
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  pthread_mutex_lock (&c.lock);
  while (!others_done (&c, n))
    fail_unless (counts_wait (&c, deadline),
        "the other streams did not finish behind the stalled one");
  pthread_mutex_unlock (&c.lock);
  q0 = gst_bin_get_by_name (GST_BIN (pipeline), "q0");
  check (q0);
  gst_object_unref (q0);
  pthread_mutex_lock (&c.lock);
  c.stalled = FALSE;
  pthread_cond_broadcast (&c.cond);
  pthread_mutex_unlock (&c.lock);
  bus = gst_element_get_bus (pipeline);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (c.buffers[0], n);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

/* Its own limit, and no more: 50 buffers queued (one more may be in the
 * stalled push). */
static void
holds_its_own_limit (GstElement * q0)
{
  fail_unless (tbq_get_uint (q0, "current-level-buffers") <= 50);
}

/* In the default group, the stalled one holds no more than its own
 * limit. */
GST_START_TEST (test_a_stalled_stream_holds_up_no_other)
{
  run_with_one_stalled (tbq_scaled (3000, 200), 512, "max-size-buffers=50 "
      "max-size-bytes=0 max-size-time=0", holds_its_own_limit);
}

GST_END_TEST;

#define GROUP_CAP (4u << 20)
#define SINK_BLOCK 65536u

/* Its share of the cap: two sink blocks and an eighth of the rest, which
 * is an eighth of the cap; never more. */
static void
holds_its_share (GstElement * q0)
{
  guint64 peak;

  /* It holds something: its backlog is larger than two blocks. */
  tbq_wait_stat (q0, "sink-bytes-in-use", 2 * SINK_BLOCK);
  peak = tbq_stat (q0, "sink-bytes-peak");
  fail_unless (peak <= GROUP_CAP / N_STREAMS, "the stalled member held %"
      G_GUINT64_FORMAT " bytes, more than its share of %u", peak,
      GROUP_CAP / N_STREAMS);
}

/* In a group of 8 with a cap of 4 MiB and no limits of their own, the
 * stalled one holds at most its share of the cap, and the others go on. */
GST_START_TEST (test_a_stalled_member_holds_at_most_its_share_of_the_cap)
{
  gchar *props = g_strdup_printf ("copy-group=share transfer=copy "
      "max-size-buffers=0 "
      "max-size-bytes=0 max-size-time=0 group-max-bytes=%u", GROUP_CAP);

  /* The stalled one has more than its share to queue. */
  run_with_one_stalled (tbq_scaled (3000, 400), 8192, props,
      holds_its_share);
  g_free (props);
}

GST_END_TEST;

/* `members` fakesrc ! tbqueue ! fakesink branches in group `name` with a
 * cap of `cap` bytes, all to EOS: every sink renders every buffer.
 * Returns how many warnings said the cap is less than they need. */
static guint
run_capped (guint members, guint64 cap, const gchar * name)
{
  guint n = tbq_scaled (3000, 300), i, small = 0;
  GString *desc = g_string_new (NULL);
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;

  for (i = 0; i < members; i++)
    g_string_append_printf (desc, "fakesrc num-buffers=%u sizetype=fixed "
        "sizemax=300 filltype=nothing ! tbqueue copy-group=%s "
        "group-max-bytes=%" G_GUINT64_FORMAT " ! fakesink name=s%u "
        "sync=false ", n, name, cap, i);
  pipeline = gst_parse_launch (desc->str, NULL);
  g_string_free (desc, TRUE);
  fail_unless (pipeline != NULL);
  bus = gst_element_get_bus (pipeline);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  while ((msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
              GST_MESSAGE_WARNING)) != NULL
      && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    GError *err = NULL;

    gst_message_parse_warning (msg, &err, NULL);
    small += strstr (err->message, "need to make progress") != NULL;
    g_error_free (err);
    gst_message_unref (msg);
  }
  fail_unless (msg != NULL, "%u members at a cap of %" G_GUINT64_FORMAT
      " bytes did not reach EOS", members, cap);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  for (i = 0; i < members; i++) {
    gchar *sname = g_strdup_printf ("s%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), sname);
    GstStructure *st = NULL;
    guint64 rendered = 0;

    g_object_get (sink, "stats", &st, NULL);
    fail_unless (gst_structure_get_uint64 (st, "rendered", &rendered));
    fail_unless_equals_uint64 (rendered, n);
    gst_structure_free (st);
    gst_object_unref (sink);
    g_free (sname);
  }
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return small;
}

/* Four members at a cap of four sink blocks, less than the two each
 * needs: warned about, and everything is delivered. */
GST_START_TEST (test_four_members_at_a_cap_of_four_blocks_deliver_everything)
{
  fail_unless (run_capped (4, 4 * SINK_BLOCK, "four") >= 1);
}

GST_END_TEST;

/* 8 and 16 members at a cap of one sink block each. */
GST_START_TEST (test_many_members_at_a_block_each_deliver_everything)
{
  fail_unless (run_capped (8, 8 * SINK_BLOCK, "eight") >= 1);
  fail_unless (run_capped (16, 16 * SINK_BLOCK, "sixteen") >= 1);
}

GST_END_TEST;

/* ---- groups, their threads and placements ---- */

typedef struct
{
  pthread_mutex_t lock;
  pthread_cond_t entered;       /* signalled at every copier ENTER */
  GHashTable *enter_tid;        /* element name -> tid at its copier ENTER */
  GHashTable *enter_task;       /* element name -> task name */
  GPtrArray *warnings;
} Seen;

static GstBusSyncReply
seen_sync (GstBus * bus, GstMessage * m, gpointer data)
{
  Seen *s = data;

  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_STREAM_STATUS) {
    GstStreamStatusType type;
    GstElement *owner;
    const GValue *v;

    gst_message_parse_stream_status (m, &type, &owner);
    v = gst_message_get_stream_status_object (m);
    if (type == GST_STREAM_STATUS_TYPE_ENTER && v != NULL
        && G_VALUE_HOLDS (v, GST_TYPE_TASK)
        && g_str_has_suffix (GST_OBJECT_NAME (g_value_get_object (v)),
            ":copier")) {
      char thread_name[17] = "";

      prctl (PR_GET_NAME, thread_name, 0, 0, 0);
      pthread_mutex_lock (&s->lock);
      g_hash_table_insert (s->enter_tid, g_strdup (GST_OBJECT_NAME (owner)),
          GINT_TO_POINTER ((gint) syscall (SYS_gettid)));
      g_hash_table_insert (s->enter_task, g_strdup (GST_OBJECT_NAME (owner)),
          g_strdup (thread_name));
      pthread_cond_broadcast (&s->entered);
      pthread_mutex_unlock (&s->lock);
    }
  } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING) {
    GError *err = NULL;

    gst_message_parse_warning (m, &err, NULL);
    pthread_mutex_lock (&s->lock);
    g_ptr_array_add (s->warnings, g_strdup (err->message));
    pthread_mutex_unlock (&s->lock);
    g_error_free (err);
  }
  return GST_BUS_PASS;
}

static void
seen_init (Seen * s)
{
  pthread_mutex_init (&s->lock, NULL);
  pthread_cond_init (&s->entered, NULL);
  s->enter_tid = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  s->enter_task = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  s->warnings = g_ptr_array_new_with_free_func (g_free);
}

static void
seen_clear (Seen * s)
{
  g_hash_table_unref (s->enter_tid);
  g_hash_table_unref (s->enter_task);
  g_ptr_array_unref (s->warnings);
  pthread_cond_destroy (&s->entered);
  pthread_mutex_destroy (&s->lock);
}

static guint
count_warnings (Seen * s, const gchar * word)
{
  guint i, n = 0;

  pthread_mutex_lock (&s->lock);
  for (i = 0; i < s->warnings->len; i++)
    n += strstr (g_ptr_array_index (s->warnings, i), word) != NULL;
  pthread_mutex_unlock (&s->lock);
  return n;
}

/* The CPUs thread `tid` may run on, as a mask of the first 64. */
static guint64
cpus_of (gint tid)
{
  cpu_set_t set;
  guint64 mask = 0;
  gint i;

  CPU_ZERO (&set);
  fail_unless (sched_getaffinity (tid, sizeof set, &set) == 0);
  for (i = 0; i < 64; i++)
    if (CPU_ISSET (i, &set))
      mask |= G_GUINT64_CONSTANT (1) << i;
  return mask;
}

/* Runs `desc` (whose sources are live) to EOS.  The group's thread says
 * ENTER for a member when it first serves it, which may come after the
 * member's data has all gone by (its src task pulls records through the
 * copier itself): the pipeline waits in PAUSED, where the members are
 * active and live sources send nothing, until every one of the
 * NULL-terminated `members` has been entered. */
static GstElement *
run_to_eos (const gchar * desc, Seen * s, const gchar * member, ...)
{
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstBus *bus;
  GstMessage *msg;
  struct timespec deadline;
  va_list ap;
  const gchar *name;

  fail_unless (pipeline != NULL);
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, seen_sync, s, NULL);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PAUSED),
      GST_STATE_CHANGE_NO_PREROLL);
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 60;
  va_start (ap, member);
  pthread_mutex_lock (&s->lock);
  for (name = member; name != NULL; name = va_arg (ap, const gchar *)) {
    while (g_hash_table_lookup (s->enter_task, name) == NULL)
      if (pthread_cond_timedwait (&s->entered, &s->lock, &deadline) != 0)
        break;
    fail_unless (g_hash_table_lookup (s->enter_task, name) != NULL,
        "no copier ENTER for %s within 60 s of PAUSED", name);
  }
  pthread_mutex_unlock (&s->lock);
  va_end (ap);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_object_unref (bus);
  return pipeline;
}

static void
stop (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

/* Members of one group are served by one thread, named after the group;
 * two groups have two threads, each placed as its members ask, and no
 * warning is said. */
GST_START_TEST (test_groups_have_their_own_threads_and_placements)
{
  guint64 allowed = cpus_of (0), first, second;
  Seen s;
  GstElement *pipeline;
  gchar *desc;
  gint a1, a2, b1;

  /* Two CPUs the process may use (one, if it has one). */
  first = allowed & -allowed;
  second = (allowed & ~first) ? (allowed & ~first) & -(allowed & ~first)
      : first;
  seen_init (&s);
  desc = g_strdup_printf ("fakesrc is-live=true num-buffers=200 ! tbqueue "
      "name=a1 copy-group=cams copy-task-cpus=%d ! fakesink "
      "fakesrc is-live=true num-buffers=200 ! tbqueue name=a2 "
      "copy-group=cams copy-task-cpus=%d ! fakesink "
      "fakesrc is-live=true num-buffers=200 ! tbqueue name=b1 copy-group=mics "
      "copy-task-cpus=%d ! fakesink", g_bit_nth_lsf (first, -1),
      g_bit_nth_lsf (first, -1), g_bit_nth_lsf (second, -1));
  pipeline = run_to_eos (desc, &s, "a1", "a2", "b1", NULL);
  g_free (desc);
  pthread_mutex_lock (&s.lock);
  a1 = GPOINTER_TO_INT (g_hash_table_lookup (s.enter_tid, "a1"));
  a2 = GPOINTER_TO_INT (g_hash_table_lookup (s.enter_tid, "a2"));
  b1 = GPOINTER_TO_INT (g_hash_table_lookup (s.enter_tid, "b1"));
  fail_unless_equals_string (g_hash_table_lookup (s.enter_task, "a1"),
      "cams:copier");
  fail_unless_equals_string (g_hash_table_lookup (s.enter_task, "b1"),
      "mics:copier");
  pthread_mutex_unlock (&s.lock);
  fail_unless (a1 != 0 && b1 != 0);
  fail_unless_equals_int (a1, a2);
  fail_unless (a1 != b1, "two groups share a thread");
  /* The threads still serve their groups (PLAYING): placed as asked. */
  fail_unless (cpus_of (a1) == first);
  fail_unless (cpus_of (b1) == second);
  fail_unless_equals_int (count_warnings (&s, "placement"), 0);
  stop (pipeline);
  seen_clear (&s);
}

GST_END_TEST;

/* Two members of one group asking for different placements: a warning
 * says so, naming both. */
GST_START_TEST (test_members_asking_for_other_placements_are_warned_about)
{
  Seen s;
  GstElement *pipeline;

  seen_init (&s);
  pipeline = run_to_eos ("fakesrc is-live=true num-buffers=50 ! tbqueue "
      "name=x1 copy-group=odd copy-task-cpus=0 ! fakesink "
      "fakesrc is-live=true num-buffers=50 ! tbqueue name=x2 copy-group=odd "
      "copy-task-nice=5 ! fakesink", &s, "x1", "x2", NULL);
  fail_unless (count_warnings (&s, "different placements") >= 1);
  stop (pipeline);
  seen_clear (&s);
}

GST_END_TEST;

/* A member asking for another cap than its group's is warned about. */
GST_START_TEST (test_a_second_cap_is_warned_about)
{
  Seen s;
  GstElement *pipeline;

  seen_init (&s);
  pipeline = run_to_eos ("fakesrc is-live=true num-buffers=20 ! tbqueue "
      "copy-group=capped group-max-bytes=16777216 ! fakesink "
      "fakesrc is-live=true num-buffers=20 ! tbqueue copy-group=capped "
      "group-max-bytes=8388608 ! fakesink", &s, NULL);
  fail_unless_equals_int (count_warnings (&s, "keeps the cap"), 1);
  stop (pipeline);
  seen_clear (&s);
}

GST_END_TEST;

/* ---- joining and leaving ---- */

/* A stream alone in group "full" (so its share is the whole cap) whose
 * downstream stalls takes all of the cap.  A member that starts then fails
 * READY->PAUSED and says why; once the first is let go and has drained,
 * it starts and delivers everything. */
GST_START_TEST (test_a_member_starting_at_a_used_up_cap_says_why)
{
  const guint64 cap = 16 * SINK_BLOCK;
  gchar *desc = g_strdup_printf ("fakesrc num-buffers=2000 sizetype=fixed "
      "sizemax=1000 filltype=nothing ! tbqueue name=q0 copy-group=full transfer=copy "
      "group-max-bytes=%" G_GUINT64_FORMAT " max-size-buffers=0 "
      "max-size-bytes=0 max-size-time=0 ! fakesink name=s0 sync=false "
      "async=false", cap);
  GstElement *full = gst_parse_launch (desc, NULL), *late, *q0, *s0;
  Counts c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
  Probe p = { &c, 0 };
  GstBus *bus, *late_bus;
  GstMessage *msg;
  GError *err = NULL;
  GstPad *pad;

  g_free (desc);
  fail_unless (full != NULL);
  q0 = gst_bin_get_by_name (GST_BIN (full), "q0");
  s0 = gst_bin_get_by_name (GST_BIN (full), "s0");
  pad = gst_element_get_static_pad (s0, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, count_probe, &p, NULL);
  gst_object_unref (pad);
  c.stalled = TRUE;
  fail_if (gst_element_set_state (full, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  /* More than the cap less a member's floor (two sink blocks): the late
   * one's floor cannot fit. */
  tbq_wait_stat (q0, "sink-bytes-in-use", cap - 2 * SINK_BLOCK + 1);
  desc = g_strdup_printf ("fakesrc num-buffers=100 ! tbqueue copy-group=full "
      "group-max-bytes=%" G_GUINT64_FORMAT " ! fakesink sync=false", cap);
  late = gst_parse_launch (desc, NULL);
  g_free (desc);
  late_bus = gst_element_get_bus (late);
  fail_unless_equals_int (gst_element_set_state (late, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (late_bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "cap") != NULL
      && strstr (err->message, "taken by its other members") != NULL,
      "unclear reason: %s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (late, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  /* Let go: the first drains, and the late one runs. */
  pthread_mutex_lock (&c.lock);
  c.stalled = FALSE;
  pthread_cond_broadcast (&c.cond);
  pthread_mutex_unlock (&c.lock);
  bus = gst_element_get_bus (full);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (c.buffers[0], 2000);
  fail_if (gst_element_set_state (late, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (late_bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (late, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (full, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (late_bus);
  gst_object_unref (late);
  gst_object_unref (bus);
  gst_object_unref (q0);
  gst_object_unref (s0);
  gst_object_unref (full);
}

GST_END_TEST;

/* copy-group=default names the default group, as leaving it empty does:
 * one thread, "default:copier", serves both. */
GST_START_TEST (test_default_names_the_default_group)
{
  Seen s;
  GstElement *pipeline;
  gint d1, d2;

  seen_init (&s);
  pipeline = run_to_eos ("fakesrc is-live=true num-buffers=20 ! tbqueue "
      "name=d1 copy-group=default ! fakesink "
      "fakesrc is-live=true num-buffers=20 ! tbqueue name=d2 ! fakesink",
      &s, "d1", "d2", NULL);
  pthread_mutex_lock (&s.lock);
  d1 = GPOINTER_TO_INT (g_hash_table_lookup (s.enter_tid, "d1"));
  d2 = GPOINTER_TO_INT (g_hash_table_lookup (s.enter_tid, "d2"));
  fail_unless_equals_string (g_hash_table_lookup (s.enter_task, "d1"),
      "default:copier");
  fail_unless_equals_string (g_hash_table_lookup (s.enter_task, "d2"),
      "default:copier");
  pthread_mutex_unlock (&s.lock);
  fail_unless (d1 != 0);
  fail_unless_equals_int (d1, d2);
  stop (pipeline);
  seen_clear (&s);
}

GST_END_TEST;

/* One stream runs from start to end while others join its group and
 * leave it: by state changes, and by removal from the running pipeline.
 * The running one delivers every buffer; nothing hangs, nothing leaks
 * (tbq_tcase checks the leaks). */
GST_START_TEST (test_streams_join_and_leave_while_another_runs)
{
  guint n = tbq_scaled (20000, 2000), rounds = tbq_scaled (20, 4), r;
  gchar *desc = g_strdup_printf ("fakesrc num-buffers=%u sizetype=fixed "
      "sizemax=256 ! tbqueue ! fakesink name=main sync=false", n);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "main");
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  Counts c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
  Probe p = { &c, 1 };
  GstPad *pad = gst_element_get_static_pad (sink, "sink");

  g_free (desc);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, count_probe, &p, NULL);
  gst_object_unref (pad);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  for (r = 0; r < rounds; r++) {
    /* A pipeline of its own: up, data, EOS, down. */
    GstElement *other = gst_parse_launch ("fakesrc num-buffers=100 ! tbqueue "
        "! fakesink sync=false", NULL);
    GstBus *obus = gst_element_get_bus (other);
    GstElement *src, *q, *fsink;

    fail_if (gst_element_set_state (other, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
    msg = tbq_bus_wait (obus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
    gst_message_unref (msg);
    /* Half of them leave in the middle of PLAYING, with data queued. */
    fail_unless_equals_int (gst_element_set_state (other, r % 2 ?
            GST_STATE_NULL : GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (other, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (obus);
    gst_object_unref (other);
    /* A branch added to the running pipeline, then taken out. */
    src = gst_element_factory_make ("fakesrc", NULL);
    q = gst_element_factory_make ("tbqueue", NULL);
    fsink = gst_element_factory_make ("fakesink", NULL);
    g_object_set (src, "is-live", TRUE, NULL);
    g_object_set (fsink, "sync", FALSE, "async", FALSE, NULL);
    gst_bin_add_many (GST_BIN (pipeline), src, q, fsink, NULL);
    fail_unless (gst_element_link_many (src, q, fsink, NULL));
    fail_unless (gst_element_sync_state_with_parent (fsink));
    fail_unless (gst_element_sync_state_with_parent (q));
    fail_unless (gst_element_sync_state_with_parent (src));
    g_usleep (2000);
    gst_element_set_locked_state (src, TRUE);
    gst_element_set_locked_state (q, TRUE);
    gst_element_set_locked_state (fsink, TRUE);
    fail_unless_equals_int (gst_element_set_state (src, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (q, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (fsink, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_bin_remove_many (GST_BIN (pipeline), src, q, fsink, NULL);
  }
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (c.buffers[1], n);
  fail_unless (c.eos[1]);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* Frames that fit a capped group's cap but not a member's share of it
 * once other members joined: they go by reference (counted as too large
 * to copy), and the stream goes on, with no error. */
GST_START_TEST (test_frames_larger_than_the_share_go_by_reference)
{
  const gchar *idle_desc = "appsrc ! tbqueue copy-group=shared "
      "group-max-bytes=4194304 ! fakesink sync=false async=false";
  GstElement *idle[3], *main_pipe, *q;
  GstBus *bus;
  GstMessage *msg;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (idle); i++) {
    idle[i] = gst_parse_launch (idle_desc, NULL);
    fail_unless (idle[i] != NULL);
    fail_if (gst_element_set_state (idle[i], GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
  }
  main_pipe = gst_parse_launch ("fakesrc num-buffers=20 sizetype=fixed "
      "sizemax=2097152 filltype=nothing ! tbqueue name=q copy-group=shared "
      "group-max-bytes=4194304 transfer=copy ! fakesink sync=false", NULL);
  fail_unless (main_pipe != NULL);
  q = gst_bin_get_by_name (GST_BIN (main_pipe), "q");
  bus = gst_element_get_bus (main_pipe);
  fail_if (gst_element_set_state (main_pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;

    gst_message_parse_error (msg, &err, NULL);
    fail ("error: %s", err->message);
  }
  gst_message_unref (msg);
  fail_unless_equals_uint64 (tbq_stat (q, "referenced-too-large"), 20);
  fail_unless_equals_int (gst_element_set_state (main_pipe, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < G_N_ELEMENTS (idle); i++) {
    fail_unless_equals_int (gst_element_set_state (idle[i], GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (idle[i]);
  }
  gst_object_unref (bus);
  gst_object_unref (q);
  gst_object_unref (main_pipe);
}

GST_END_TEST;

static Suite *
tbqueue_groups_suite (void)
{
  Suite *s = suite_create ("tbqueue-groups");
  TCase *tc = tbq_tcase (s, "groups");

  tcase_add_test (tc, test_a_stalled_stream_holds_up_no_other);
  tcase_add_test (tc, test_a_stalled_member_holds_at_most_its_share_of_the_cap);
  tcase_add_test (tc, test_four_members_at_a_cap_of_four_blocks_deliver_everything);
  tcase_add_test (tc, test_many_members_at_a_block_each_deliver_everything);
  tcase_add_test (tc, test_a_member_starting_at_a_used_up_cap_says_why);
  tcase_add_test (tc, test_default_names_the_default_group);
  tcase_add_test (tc, test_frames_larger_than_the_share_go_by_reference);
  tcase_add_test (tc, test_groups_have_their_own_threads_and_placements);
  tcase_add_test (tc, test_members_asking_for_other_placements_are_warned_about);
  tcase_add_test (tc, test_a_second_cap_is_warned_about);
  tcase_add_test (tc, test_streams_join_and_leave_while_another_runs);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_groups);

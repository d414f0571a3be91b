/* tbqueue in real pipelines: the same buffers, bytes and timestamps reach
 * the sink as with queue, in every transfer mode; the copy task announces
 * itself with STREAM_STATUS messages.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"

static const gchar *queues[] = {
  "queue", "tbqueue", "tbqueue transfer=copy", "tbqueue transfer=reference",
};

/* A digest of every buffer that reaches a sink: fields and bytes. */
typedef struct
{
  pthread_mutex_t lock;
  GChecksum *sum;
  guint buffers;
} Digest;

static void
digest_buffer (Digest * d, GstBuffer * b)
{
  guint64 fields[5] = { GST_BUFFER_PTS (b), GST_BUFFER_DTS (b),
    GST_BUFFER_DURATION (b), GST_BUFFER_OFFSET (b), GST_BUFFER_FLAGS (b)
  };
  GstMapInfo map;

  fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
  pthread_mutex_lock (&d->lock);
  g_checksum_update (d->sum, (const guchar *) fields, sizeof fields);
  g_checksum_update (d->sum, map.data, map.size);
  d->buffers++;
  pthread_mutex_unlock (&d->lock);
  gst_buffer_unmap (b, &map);
}

static gboolean
digest_list_item (GstBuffer ** b, guint i, gpointer d)
{
  digest_buffer (d, *b);
  return TRUE;
}

static GstPadProbeReturn
digest_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER)
    digest_buffer (user_data, GST_PAD_PROBE_INFO_BUFFER (info));
  else if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER_LIST)
    gst_buffer_list_foreach (GST_PAD_PROBE_INFO_BUFFER_LIST (info),
        digest_list_item, user_data);
  return GST_PAD_PROBE_OK;
}

typedef struct
{
  gchar *digest;
  guint buffers;
} Result;

/* Run `description` (with one "%s" per queue) to EOS; digest what reaches
 * the sinks named sink0, sink1... */
static void
run_to_eos (const gchar * description, const gchar * queue, guint n_sinks,
    Result * results)
{
  gchar *desc = g_strdup_printf (description, queue, queue);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);
  Digest d[2];
  GstBus *bus;
  GstMessage *msg;
  guint i;

  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  for (i = 0; i < n_sinks; i++) {
    gchar *name = g_strdup_printf ("sink%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    GstPad *pad = gst_element_get_static_pad (sink, "sink");

    pthread_mutex_init (&d[i].lock, NULL);
    d[i].sum = g_checksum_new (G_CHECKSUM_SHA256);
    d[i].buffers = 0;
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
        GST_PAD_PROBE_TYPE_BUFFER_LIST, digest_probe, &d[i], NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
    g_free (name);
  }
  bus = gst_element_get_bus (pipeline);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s: no EOS", desc);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < n_sinks; i++) {
    pthread_mutex_lock (&d[i].lock);
    results[i].digest = g_strdup (g_checksum_get_string (d[i].sum));
    results[i].buffers = d[i].buffers;
    pthread_mutex_unlock (&d[i].lock);
    g_checksum_free (d[i].sum);
    pthread_mutex_destroy (&d[i].lock);
  }
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_free (desc);
}

/* The same pipeline with queue and with tbqueue: same count, same digest. */
static void
assert_same_as_queue (const gchar * description, const gchar * tbqueue,
    guint n_sinks, guint expected_buffers)
{
  Result q[2], t[2];
  guint i;

  run_to_eos (description, "queue", n_sinks, q);
  run_to_eos (description, tbqueue, n_sinks, t);
  for (i = 0; i < n_sinks; i++) {
    fail_unless_equals_int (q[i].buffers, expected_buffers);
    fail_unless_equals_int (t[i].buffers, q[i].buffers);
    fail_unless_equals_string (t[i].digest, q[i].digest);
    g_free (q[i].digest);
    g_free (t[i].digest);
  }
}

GST_START_TEST (test_fakesrc_pipeline_reaches_eos_with_every_buffer)
{
  Result r;
  guint n = tbq_scaled (2000, 200);
  gchar *desc = g_strdup_printf ("fakesrc num-buffers=%u sizetype=fixed "
      "sizemax=100 filltype=pattern-span datarate=1000000 ! %%s "
      "! fakesink name=sink0", n);

  run_to_eos (desc, queues[__i__], 1, &r);
  fail_unless_equals_int (r.buffers, n);
  g_free (r.digest);
  /* and the same bytes as through queue */
  assert_same_as_queue (desc, queues[__i__], 1, n);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_videotestsrc_pipeline_matches_queue)
{
  assert_same_as_queue ("videotestsrc num-buffers=60 pattern=ball "
      "! video/x-raw,format=I420,width=32,height=24,framerate=30/1 "
      "! %s ! fakesink name=sink0", queues[__i__], 1, 60);
}

GST_END_TEST;

GST_START_TEST (test_audiotestsrc_pipeline_matches_queue)
{
  assert_same_as_queue ("audiotestsrc num-buffers=100 samplesperbuffer=256 "
      "wave=sine ! audio/x-raw,format=S16LE,rate=8000,channels=1 "
      "! %s ! fakesink name=sink0", queues[__i__], 1, 100);
}

GST_END_TEST;

GST_START_TEST (test_tee_with_two_branches_matches_queue)
{
  assert_same_as_queue ("audiotestsrc num-buffers=100 samplesperbuffer=128 "
      "wave=sine ! audio/x-raw,format=S16LE,rate=8000,channels=1 "
      "! tee name=t  t. ! %s ! fakesink name=sink0  t. ! %s "
      "! fakesink name=sink1", queues[__i__], 2, 100);
}

GST_END_TEST;

/* ---- the copy task's STREAM_STATUS messages ---- */

typedef struct
{
  pthread_mutex_t lock;
  GstElement *element;
  GThread *app_thread;
  GstStreamStatusType types[16];
  GstTask *tasks[16];
  gboolean from_app_thread[16];
  guint n;
} Status;

static GstBusSyncReply
status_handler (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  Status *st = user_data;
  GstStreamStatusType type;
  GstElement *owner;
  const GValue *v;

  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_STREAM_STATUS)
    return GST_BUS_PASS;
  /* The src pad task posts from its pad; the copy task from the element. */
  if (GST_MESSAGE_SRC (msg) != GST_OBJECT (st->element))
    return GST_BUS_PASS;
  gst_message_parse_stream_status (msg, &type, &owner);
  fail_unless (owner == st->element);
  v = gst_message_get_stream_status_object (msg);
  fail_unless (v != NULL && G_VALUE_HOLDS (v, GST_TYPE_TASK),
      "the message carries no GstTask");
  pthread_mutex_lock (&st->lock);
  if (st->n < G_N_ELEMENTS (st->types)) {
    st->types[st->n] = type;
    st->tasks[st->n] = g_value_get_object (v);
    st->from_app_thread[st->n] = g_thread_self () == st->app_thread;
    st->n++;
  }
  pthread_mutex_unlock (&st->lock);
  if (type == GST_STREAM_STATUS_TYPE_ENTER) {
    /* Where an application would set the thread's priority: it runs in
     * the task's own thread, and the task is there to adjust. */
    fail_unless (gst_task_get_state (g_value_get_object (v)) ==
        GST_TASK_STARTED);
  }
  return GST_BUS_PASS;
}

GST_START_TEST (test_copy_task_posts_stream_status_with_its_task)
{
  GstElement *pipeline = gst_parse_launch ("fakesrc num-buffers=100 "
      "! tbqueue name=q ! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipeline);
  Status st = { PTHREAD_MUTEX_INITIALIZER, NULL, g_thread_self () };
  GstMessage *msg;
  gboolean created = FALSE, entered = FALSE, left = FALSE;
  guint i;

  st.element = gst_bin_get_by_name (GST_BIN (pipeline), "q");
  gst_bus_set_sync_handler (bus, status_handler, &st, NULL);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = tbq_bus_wait (bus, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);

  pthread_mutex_lock (&st.lock);
  fail_unless (st.n >= 3, "only %u STREAM_STATUS messages", st.n);
  for (i = 0; i < st.n; i++) {
    /* One task, from creation to the end. */
    fail_unless (st.tasks[i] == st.tasks[0]);
    switch (st.types[i]) {
      case GST_STREAM_STATUS_TYPE_CREATE:
        fail_unless (i == 0, "CREATE is not first");
        created = TRUE;
        break;
      case GST_STREAM_STATUS_TYPE_ENTER:
        fail_unless (created);
        fail_if (st.from_app_thread[i], "ENTER not from the task thread");
        entered = TRUE;
        break;
      case GST_STREAM_STATUS_TYPE_LEAVE:
        fail_unless (entered);
        fail_if (st.from_app_thread[i], "LEAVE not from the task thread");
        left = TRUE;
        break;
      default:
        break;
    }
  }
  pthread_mutex_unlock (&st.lock);
  fail_unless (created && entered && left);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (st.element);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

GST_END_TEST;

static Suite *
tbqueue_pipelines_suite (void)
{
  Suite *s = suite_create ("tbqueue-pipelines");
  TCase *tc = tbq_tcase (s, "pipelines");
  gint n = G_N_ELEMENTS (queues);

  tcase_add_loop_test (tc, test_fakesrc_pipeline_reaches_eos_with_every_buffer,
      1, n);
  tcase_add_loop_test (tc, test_videotestsrc_pipeline_matches_queue, 1, n);
  tcase_add_loop_test (tc, test_audiotestsrc_pipeline_matches_queue, 1, n);
  tcase_add_loop_test (tc, test_tee_with_two_branches_matches_queue, 1, n);
  tcase_add_test (tc, test_copy_task_posts_stream_status_with_its_task);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_pipelines);

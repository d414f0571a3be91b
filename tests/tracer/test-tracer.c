/* The tbqlevels tracer on real elements: what it writes to its CSV file
 * and logs as tracer records.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "levels-check.h"

#define LIMIT 5                 /* max-size-buffers of queue and tbqueue */
#define PUSHED 20

/* A tee into a queue and a tbqueue that leak upstream at LIMIT buffers and
 * a queue2 without limits, each held downstream: PUSHED buffers leave
 * LIMIT queued in queue and tbqueue and PUSHED - 1 in queue2 (one waits at
 * each gate).  Then everything drains to EOS. */
static void
run_tee_backlog (void)
{
  GstElement *pipeline, *tee;
  GstPad *teesink, *feed;

  pipeline = gst_parse_launch ("tee name=t "
      "t. ! queue name=q leaky=upstream max-size-buffers=5 ! fakesink name=s1 "
      "t. ! tbqueue name=tbq leaky=upstream max-size-buffers=5 transfer=copy "
      "! fakesink name=s2 "
      "t. ! queue2 name=q2 max-size-buffers=0 max-size-bytes=0 "
      "max-size-time=0 ! fakesink name=s3", NULL);
  CHECK (pipeline != NULL);
  gate_hold (pipeline, "s1");
  gate_hold (pipeline, "s2");
  gate_hold (pipeline, "s3");
  play (pipeline);
  tee = gst_bin_get_by_name (GST_BIN (pipeline), "t");
  teesink = gst_element_get_static_pad (tee, "sink");
  feed = feed_new (teesink, "backlog");

  feed_backlog (feed, 3, PUSHED - 1);
  finish (pipeline, feed, NULL);
  gst_object_unref (teesink);
  gst_object_unref (tee);
  pipeline_free (pipeline);
}

static void
tracer_records_the_backlog_of_queue_queue2_and_tbqueue (void)
{
  gchar *path = start ("file=%s,period=0");
  Csv *csv;

  run_tee_backlog ();
  csv = csv_read (path);

  CHECK_EQ (max_of (csv, "q", NULL, "current-level-buffers"), LIMIT);
  CHECK_EQ (max_of (csv, "q", NULL, "current-level-bytes"),
      LIMIT * BUFFER_SIZE);
  CHECK_EQ (max_of (csv, "tbq", NULL, "current-level-buffers"), LIMIT);
  CHECK_EQ (max_of (csv, "tbq", NULL, "current-level-bytes"),
      LIMIT * BUFFER_SIZE);
  CHECK_EQ (max_of (csv, "q2", NULL, "current-level-buffers"), PUSHED - 1);
  CHECK_EQ (max_of (csv, "q2", NULL, "current-level-bytes"),
      (PUSHED - 1) * BUFFER_SIZE);
  /* The limits, as the elements' properties say. */
  CHECK_EQ (max_of (csv, "q", NULL, "max-size-buffers"), LIMIT);
  CHECK_EQ (max_of (csv, "q", NULL, "max-size-bytes"), 10485760);
  CHECK_EQ (max_of (csv, "tbq", NULL, "max-size-time"), GST_SECOND);
  CHECK_EQ (max_of (csv, "q2", NULL, "max-size-bytes"), 0);
  /* The last sample of each (going to NULL) is empty. */
  CHECK_EQ (value (csv, last_row (csv, "q", NULL), "current-level-buffers"), 0);
  CHECK_EQ (value (csv, last_row (csv, "tbq", NULL), "current-level-bytes"), 0);
  CHECK_EQ (value (csv, last_row (csv, "q2", NULL), "current-level-time"), 0);
  csv_free (csv);
  stop (path);
}

static void
check_kind (Csv * csv, guint row, const gchar * element, const gchar * kind,
    gboolean pools)
{
  if (strcmp (cell (csv, row, "element"), element) != 0)
    return;
  CHECK (strcmp (cell (csv, row, "kind"), kind) == 0);
  CHECK (strcmp (cell (csv, row, "queue"), "") == 0);
  CHECK ((cell (csv, row, "source-blocks-in-use")[0] != '\0') == pools);
  CHECK ((cell (csv, row, "sink-max-bytes")[0] != '\0') == pools);
}

static void
tracer_writes_only_queue_like_elements (void)
{
  gchar *path = start ("file=%s,period=0");
  Csv *csv;
  guint i;

  run_tee_backlog ();
  csv = csv_read (path);
  CHECK (count_rows (csv, "q", NULL) > 0);
  CHECK (count_rows (csv, "tbq", NULL) > 0);
  CHECK (count_rows (csv, "q2", NULL) > 0);
  /* No tee, fakesink or pipeline. */
  CHECK_EQ (count_rows (csv, "q", NULL) + count_rows (csv, "tbq", NULL)
      + count_rows (csv, "q2", NULL), csv->rows->len);
  for (i = 0; i < csv->rows->len; i++) {
    check_kind (csv, i, "q", "queue", FALSE);
    check_kind (csv, i, "q2", "queue2", FALSE);
    check_kind (csv, i, "tbq", "tbqueue", TRUE);
  }
  csv_free (csv);
  stop (path);
}

static void
tracer_reports_the_pools_of_tbqueue (void)
{
  gchar *path = start ("file=%s,period=0");
  Csv *csv;
  gboolean seen_full = FALSE;
  guint i;

  run_tee_backlog ();
  csv = csv_read (path);
  for (i = 0; i < csv->rows->len; i++) {
    if (strcmp (cell (csv, i, "element"), "tbq") != 0)
      continue;
    CHECK (value (csv, i, "source-blocks-in-use")
        <= value (csv, i, "source-blocks"));
    CHECK (value (csv, i, "sink-bytes-in-use")
        <= value (csv, i, "sink-max-bytes"));
    /* Small buffers only: whole sink blocks (65536 bytes by default). */
    CHECK_EQ (value (csv, i, "sink-bytes-in-use") % 65536, 0);
    if (value (csv, i, "current-level-buffers") == LIMIT) {
      /* LIMIT records are queued: they are in one pool or the other. */
      CHECK (value (csv, i, "source-blocks-in-use")
          + value (csv, i, "sink-bytes-in-use") > 0);
      CHECK_EQ (value (csv, i, "source-blocks"), 4);
      CHECK_EQ (value (csv, i, "sink-max-bytes"), 268435456);
      seen_full = TRUE;
    }
  }
  CHECK (seen_full);
  csv_free (csv);
  stop (path);
}

#define FRAME_SIZE 100000
#define FRAMES 60

static void
feed_frames (GstPad * pad, guint from, guint n)
{
  guint i;

  for (i = from; i < from + n; i++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, FRAME_SIZE, NULL);

    gst_buffer_memset (b, 0, (guint8) i, FRAME_SIZE);
    GST_BUFFER_PTS (b) = i * 10 * GST_MSECOND;
    GST_BUFFER_DURATION (b) = 10 * GST_MSECOND;
    CHECK (gst_pad_push (pad, b) == GST_FLOW_OK);
  }
}

/* Copied frames travel in memory of their own from the sink pool, outside
 * its blocks: sink-bytes-in-use counts it (a block of their records
 * beside), as the element's stats say at the same moment.  One frame waits
 * at the gate, out of the levels but still in the sink pool. */
static void
tracer_reports_the_memory_of_held_frames (void)
{
  gchar *path = start ("file=%s,period=0");
  GstElement *pipeline = gst_parse_launch ("tbqueue name=tbq transfer=copy "
      "max-size-buffers=0 max-size-bytes=0 max-size-time=0 "
      "! fakesink name=s", NULL);
  GstElement *tbq = gst_bin_get_by_name (GST_BIN (pipeline), "tbq");
  GstPad *sinkpad = gst_element_get_static_pad (tbq, "sink"), *feed;
  GstStructure *stats = NULL;
  guint64 in_use = 0, bytes;
  Csv *csv;
  guint row;

  gate_hold (pipeline, "s");
  play (pipeline);
  feed = feed_new (sinkpad, "frames");
  feed_frames (feed, 0, 1);
  gate_wait_entered (1);
  feed_frames (feed, 1, FRAMES - 1);
  g_object_get (tbq, "stats", &stats, NULL);
  CHECK (gst_structure_get_uint64 (stats, "sink-bytes-in-use", &in_use));
  gst_structure_free (stats);

  /* The sample after the last frame went in (written through). */
  csv = csv_read (path);
  row = last_row (csv, "tbq", NULL);
  bytes = value (csv, row, "current-level-bytes");
  CHECK_EQ (value (csv, row, "current-level-buffers"), FRAMES - 1);
  CHECK_EQ (bytes, (FRAMES - 1) * FRAME_SIZE);
  CHECK_EQ (value (csv, row, "sink-bytes-in-use"), in_use);
  CHECK (in_use >= bytes);
  CHECK (in_use <= bytes + bytes / 10);
  CHECK (max_of (csv, "tbq", NULL, "sink-bytes-in-use")
      <= value (csv, row, "sink-max-bytes"));
  csv_free (csv);

  finish (pipeline, feed, NULL);
  gst_object_unref (sinkpad);
  gst_object_unref (tbq);
  pipeline_free (pipeline);
  stop (path);
}

/* A tracer record as the CSV line the tracer writes for the same sample. */
static gchar *
record_as_csv_line (const gchar * record)
{
  GstStructure *s = gst_structure_from_string (record, NULL);
  static const gchar *levels[] = { "current-level-buffers",
    "current-level-bytes", "current-level-time", "max-size-buffers",
    "max-size-bytes", "max-size-time", "source-blocks-in-use",
    "source-blocks", "sink-bytes-in-use", "sink-max-bytes",
    "spill-level-bytes"
  };
  GString *line = g_string_new (NULL);
  gboolean have = FALSE;
  guint64 v = 0;
  guint q = 0, i;

  CHECK (s != NULL && gst_structure_has_name (s, "tbqlevels"));
  CHECK (gst_structure_get_uint64 (s, "ts", &v));
  g_string_append_printf (line, "%" G_GUINT64_FORMAT ",%s,%s,", v,
      gst_structure_get_string (s, "element"),
      gst_structure_get_string (s, "kind"));
  CHECK (gst_structure_get_boolean (s, "have-queue", &have));
  CHECK (gst_structure_get_uint (s, "queue", &q));
  if (have)
    g_string_append_printf (line, "%u", q);
  for (i = 0; i < G_N_ELEMENTS (levels); i++) {
    gchar *flag = g_strconcat ("have-", levels[i], NULL);

    have = TRUE;
    if (gst_structure_has_field (s, flag))
      CHECK (gst_structure_get_boolean (s, flag, &have));
    CHECK (gst_structure_get_uint64 (s, levels[i], &v));
    g_string_append_c (line, ',');
    if (have)
      g_string_append_printf (line, "%" G_GUINT64_FORMAT, v);
    g_free (flag);
  }
  gst_structure_free (s);
  return g_string_free (line, FALSE);
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

static void
tracer_records_carry_the_same_samples_as_the_csv_file (void)
{
  gchar *path = start ("file=%s,period=0");
  GPtrArray *from_records = g_ptr_array_new_with_free_func (g_free);
  Csv *csv;
  guint i;

  run_tee_backlog ();
  csv = csv_read (path);
  for (i = 0; i < records->len; i++)
    g_ptr_array_add (from_records,
        record_as_csv_line (g_ptr_array_index (records, i)));
  CHECK_EQ (from_records->len, csv->lines->len);
  CHECK (from_records->len > 0);
  g_ptr_array_sort (from_records, compare_strings);
  g_ptr_array_sort (csv->lines, compare_strings);
  for (i = 0; i < csv->lines->len; i++) {
    const gchar *a = g_ptr_array_index (from_records, i);
    const gchar *b = g_ptr_array_index (csv->lines, i);

    if (strcmp (a, b) != 0)
      printf ("# record %s\n# csv    %s\n", a, b);
    CHECK (strcmp (a, b) == 0);
  }
  g_ptr_array_unref (from_records);
  csv_free (csv);
  stop (path);
}

/* feed -> multiqueue sink_0 -> fakesink s0, feed -> sink_1 -> s1 (held):
 * three buffers wait in single queue 1, none in single queue 0. */
static void
run_multiqueue_backlog (void)
{
  GstElement *pipeline = gst_pipeline_new (NULL);
  GstElement *mq = gst_element_factory_make ("multiqueue", "mq");
  GstElement *s0 = gst_element_factory_make ("fakesink", "s0");
  GstElement *s1 = gst_element_factory_make ("fakesink", "s1");
  GstPad *sink0, *sink1, *feed0, *feed1;

  g_object_set (mq, "max-size-buffers", 10, NULL);
  gst_bin_add_many (GST_BIN (pipeline), mq, s0, s1, NULL);
  sink0 = gst_element_request_pad_simple (mq, "sink_%u");
  sink1 = gst_element_request_pad_simple (mq, "sink_%u");
  CHECK (gst_element_link_pads (mq, "src_0", s0, "sink"));
  CHECK (gst_element_link_pads (mq, "src_1", s1, "sink"));
  gate_hold (pipeline, "s1");
  play (pipeline);
  feed0 = feed_new (sink0, "stream0");
  feed1 = feed_new (sink1, "stream1");

  feed_backlog (feed1, 1, 3);
  finish (pipeline, feed0, feed1, NULL);
  gst_object_unref (sink0);
  gst_object_unref (sink1);
  pipeline_free (pipeline);
}

static void
tracer_samples_each_single_queue_of_a_multiqueue (void)
{
  gchar *path = start ("file=%s,period=0");
  Csv *csv;
  guint i;

  run_multiqueue_backlog ();
  csv = csv_read (path);
  CHECK (count_rows (csv, "mq", "0") > 0);
  CHECK (count_rows (csv, "mq", "1") > 0);
  CHECK_EQ (count_rows (csv, "mq", NULL),
      count_rows (csv, "mq", "0") + count_rows (csv, "mq", "1"));
  CHECK_EQ (max_of (csv, "mq", "1", "current-level-buffers"), 3);
  CHECK_EQ (max_of (csv, "mq", "1", "current-level-bytes"), 3 * BUFFER_SIZE);
  CHECK_EQ (max_of (csv, "mq", "0", "current-level-buffers"), 0);
  CHECK_EQ (max_of (csv, "mq", "0", "max-size-buffers"), 10);
  for (i = 0; i < csv->rows->len; i++) {
    CHECK (strcmp (cell (csv, i, "kind"), "multiqueue") == 0);
    CHECK (strcmp (cell (csv, i, "sink-bytes-in-use"), "") == 0);
  }
  CHECK_EQ (value (csv, last_row (csv, "mq", "1"), "current-level-buffers"), 0);
  csv_free (csv);
  stop (path);
}

/* A class derived from queue's, as an application may define one. */
static GType
queue_subclass_get_type (void)
{
  GstElementFactory *f = gst_element_factory_find ("queue");
  GstPluginFeature *loaded;
  GType parent;
  GTypeQuery q;

  CHECK (f != NULL);
  loaded = gst_plugin_feature_load (GST_PLUGIN_FEATURE (f));
  parent = gst_element_factory_get_element_type (GST_ELEMENT_FACTORY (loaded));
  g_type_query (parent, &q);
  gst_object_unref (loaded);
  gst_object_unref (f);
  return g_type_register_static_simple (parent, "TestLevelsQueue",
      q.class_size, NULL, q.instance_size, NULL, 0);
}

static void
tracer_tracks_subclasses_of_queue (void)
{
  gchar *path = start ("file=%s,period=0");
  GstElement *pipeline = gst_pipeline_new (NULL);
  GstElement *sub = g_object_new (queue_subclass_get_type (), "name", "sub",
      NULL);
  GstElement *sink = gst_element_factory_make ("fakesink", "sink");
  GstPad *subsink, *feed;
  Csv *csv;

  gst_bin_add_many (GST_BIN (pipeline), sub, sink, NULL);
  CHECK (gst_element_link (sub, sink));
  gate_hold (pipeline, "sink");
  play (pipeline);
  subsink = gst_element_get_static_pad (sub, "sink");
  feed = feed_new (subsink, "sub");
  feed_backlog (feed, 1, 2);
  finish (pipeline, feed, NULL);
  gst_object_unref (subsink);
  pipeline_free (pipeline);

  csv = csv_read (path);
  CHECK (count_rows (csv, "sub", NULL) > 0);
  CHECK_EQ (count_rows (csv, "sub", NULL), csv->rows->len);
  CHECK (strcmp (cell (csv, 0, "kind"), "queue") == 0);
  CHECK_EQ (max_of (csv, "sub", NULL, "current-level-buffers"), 2);
  csv_free (csv);
  stop (path);
}

/* feed -> tbqueue -> fakesink, n buffers to EOS. */
static void
run_tbqueue (guint n)
{
  GstElement *pipeline = gst_parse_launch ("tbqueue name=tbq ! fakesink",
      NULL);
  GstElement *tbq = gst_bin_get_by_name (GST_BIN (pipeline), "tbq");
  GstPad *sinkpad = gst_element_get_static_pad (tbq, "sink"), *feed;

  play (pipeline);
  feed = feed_new (sinkpad, "tbq");
  feed_buffers (feed, 0, n);
  finish (pipeline, feed, NULL);
  gst_object_unref (sinkpad);
  gst_object_unref (tbq);
  pipeline_free (pipeline);
}

/* Samples of n buffers through a tbqueue, with these tracer parameters. */
static guint
tbqueue_samples (const gchar * params, guint n)
{
  gchar *path = start (params);
  Csv *csv;
  guint rows;

  run_tbqueue (n);
  csv = csv_read (path);
  rows = count_rows (csv, "tbq", NULL);
  csv_free (csv);
  stop (path);
  return rows;
}

static void
tracer_period_bounds_the_samples (void)
{
  /* 1000 s: one sample from the data hooks, the rest from state changes
   * (NULL->READY->PAUSED->PLAYING and back: six). */
  guint rows = tbqueue_samples ("file=%s,period=1000000", 50);

  CHECK (rows >= 6);
  CHECK (rows <= 7);
}

static void
tracer_samples_every_buffer_with_period_0 (void)
{
  /* Each buffer is sampled as it enters and as it leaves. */
  CHECK (tbqueue_samples ("file=%s,period=0", 50) >= 2 * 50);
}

/* A process killed by SIGTERM runs no exit handler and flushes no stdio
 * buffer: the CSV must hold every sample the tracer took before.  A child
 * runs a pipeline with the tracer, tells how many samples it recorded
 * (its tracer records: one per CSV row), and kills itself. */
static void
tracer_keeps_every_sample_taken_before_a_sigterm (void)
{
  int fds[2];
  pid_t pid;
  int status;
  guint taken = 0;
  gchar path[4096] = "";
  FILE *in;
  Csv *csv;
  gchar *dir;

  CHECK (pipe (fds) == 0);
  pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0) {
    gchar *csv_path = start ("file=%s,period=0");
    FILE *out = fdopen (fds[1], "w");

    close (fds[0]);
    run_tbqueue (200);
    fprintf (out, "%u %s\n", records->len, csv_path);
    fclose (out);
    raise (SIGTERM);
    _exit (3);                  /* not reached */
  }
  close (fds[1]);
  in = fdopen (fds[0], "r");
  CHECK (fscanf (in, "%u %4095s", &taken, path) == 2);
  fclose (in);
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFSIGNALED (status) && WTERMSIG (status) == SIGTERM);
  /* 200 buffers in and out, and the state changes. */
  CHECK (taken >= 2 * 200);
  csv = csv_read (path);
  CHECK_EQ (csv->rows->len, taken);
  CHECK_EQ (value (csv, last_row (csv, "tbq", NULL), "current-level-buffers"),
      0);
  csv_free (csv);
  dir = g_path_get_dirname (path);
  g_unlink (path);
  g_rmdir (dir);
  g_free (dir);
}

static void
tracer_warns_about_bad_parameters_and_keeps_working (void)
{
  gchar *path = start ("period=-3,colour=red,file=/nonexistent/levels.csv");

  CHECK (warned_about ("period"));
  CHECK (warned_about ("colour"));
  CHECK (warned_about ("/nonexistent/levels.csv"));
  run_tbqueue (5);
  /* No file, but the levels are logged. */
  CHECK (records->len > 0);
  stop (path);
}

static void
tracer_warns_about_unparsable_parameters (void)
{
  gchar *path = start ("file=\"%s");

  CHECK (warned_about ("cannot parse"));
  run_tbqueue (5);
  CHECK (records->len > 0);
  CHECK (!g_file_test (path, G_FILE_TEST_EXISTS));
  stop (path);
}

TAP_MAIN (TAP_TEST (tracer_records_the_backlog_of_queue_queue2_and_tbqueue),
    TAP_TEST (tracer_writes_only_queue_like_elements),
    TAP_TEST (tracer_reports_the_pools_of_tbqueue),
    TAP_TEST (tracer_reports_the_memory_of_held_frames),
    TAP_TEST (tracer_records_carry_the_same_samples_as_the_csv_file),
    TAP_TEST (tracer_samples_each_single_queue_of_a_multiqueue),
    TAP_TEST (tracer_tracks_subclasses_of_queue),
    TAP_TEST (tracer_period_bounds_the_samples),
    TAP_TEST (tracer_samples_every_buffer_with_period_0),
    TAP_TEST (tracer_keeps_every_sample_taken_before_a_sigterm),
    TAP_TEST (tracer_warns_about_bad_parameters_and_keeps_working),
    TAP_TEST (tracer_warns_about_unparsable_parameters))

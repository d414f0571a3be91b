/* Spill (temp-template): a backlog larger than the sink pool continues in
 * a file and comes back whole and in order; a damaged file, a full disk
 * and an I/O error are reported and never become wrong data; flushes,
 * state changes and EOS while spilling.
 *
 * Downstream is held (our sink pad waits) while the test pushes, so every
 * backlog is one the test made, not one a schedule made.  Stats are
 * waited for (polled, with a hang check), never timed.  The file's writes
 * fail on demand through this file's own pwritev() (exported: the
 * plugin's calls resolve to it).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq-check.h"
#include "../common/fail-io.h"

#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define SINK_MAX (4u << 20)
#define SINK_BLOCK 16384u
#define FRAME 100000u
/* What a backlog costs in memory besides the sink pool: events, the
 * shells of buffers with metas, what spilled records own (kept in
 * memory), GStreamer's own buffers in flight, the heap's slack. */
#define RSS_OVERHEAD (12u << 20)

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* ---- the items ---- */

/* Item k of the stream: a serialized event, a list of 3 buffers, a frame
 * or a small buffer. */
typedef enum
{
  ITEM_EVENT,
  ITEM_LIST,
  ITEM_FRAME,
  ITEM_SMALL,
} ItemKind;

static ItemKind
kind_of (guint k)
{
  if (k % 50 == 0)
    return ITEM_EVENT;
  if (k % 13 == 7)
    return ITEM_LIST;
  if (k % 9 == 4)
    return ITEM_FRAME;
  return ITEM_SMALL;
}

static gsize
size_of (guint k, guint member)
{
  switch (kind_of (k)) {
    case ITEM_FRAME:
      return FRAME + k % 1000;
    case ITEM_LIST:
      return 40 + member * 100 + k % 17;
    default:
      return 16 + k * 7 % 300;
  }
}

static GstCaps *
meta_caps (void)
{
  static GstCaps *caps;

  if (caps == NULL) {
    caps = gst_caps_new_empty_simple ("timestamp/x-tbq-test");
    GST_MINI_OBJECT_FLAG_SET (caps, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);
  }
  return caps;
}

/* Buffer `member` of item k: its bytes, timestamps, offsets, flags, and
 * for some a reference timestamp meta (a meta that is copied). */
static GstBuffer *
make_buffer (guint k, guint member)
{
  gsize size = size_of (k, member), i;
  GstBuffer *b = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  guint64 id = (guint64) k * 4 + member;

  fail_unless (gst_buffer_map (b, &map, GST_MAP_WRITE));
  for (i = 0; i < size; i++)
    map.data[i] = (guint8) (id * 31 + i);
  gst_buffer_unmap (b, &map);
  GST_BUFFER_PTS (b) = id * GST_MSECOND;
  GST_BUFFER_DTS (b) = id * GST_MSECOND + 1;
  GST_BUFFER_DURATION (b) = GST_MSECOND;
  GST_BUFFER_OFFSET (b) = id;
  GST_BUFFER_OFFSET_END (b) = id + 1;
  if (k % 3 == 0)
    GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_DELTA_UNIT);
  if (k % 5 == 1)
    gst_buffer_add_reference_timestamp_meta (b, meta_caps (), id * 1000,
        GST_CLOCK_TIME_NONE);
  return b;
}

static void
check_buffer (GstBuffer * b, guint k, guint member)
{
  gsize size = size_of (k, member), i;
  guint64 id = (guint64) k * 4 + member;
  GstReferenceTimestampMeta *m;
  GstMapInfo map;

  fail_unless_equals_uint64 (gst_buffer_get_size (b), size);
  fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
  for (i = 0; i < size; i++)
    if (map.data[i] != (guint8) (id * 31 + i))
      break;
  gst_buffer_unmap (b, &map);
  fail_unless (i == size, "item %u/%u: byte %" G_GSIZE_FORMAT " differs", k,
      member, i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (b), id * GST_MSECOND);
  fail_unless_equals_uint64 (GST_BUFFER_DTS (b), id * GST_MSECOND + 1);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (b), GST_MSECOND);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (b), id);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (b), id + 1);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
          GST_BUFFER_FLAG_DELTA_UNIT), k % 3 == 0);
  m = gst_buffer_get_reference_timestamp_meta (b, meta_caps ());
  fail_unless_equals_int (m != NULL, k % 5 == 1);
  if (m != NULL)
    fail_unless_equals_uint64 (m->timestamp, id * 1000);
}

/* Push item k: OK expected. */
static GstFlowReturn
push_item (TbqLink * l, guint k)
{
  GstBufferList *list;
  guint i;

  switch (kind_of (k)) {
    case ITEM_EVENT:
      fail_unless (tbq_link_push_event (l,
              gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
                  gst_structure_new ("tbq-spill", "k", G_TYPE_UINT, k,
                      NULL))));
      return GST_FLOW_OK;
    case ITEM_LIST:
      list = gst_buffer_list_new ();
      for (i = 0; i < 3; i++)
        gst_buffer_list_add (list, make_buffer (k, i));
      return tbq_link_push_list (l, list);
    default:
      return tbq_link_push (l, make_buffer (k, 0));
  }
}

static gsize
bytes_of_item (guint k)
{
  switch (kind_of (k)) {
    case ITEM_EVENT:
      return 0;
    case ITEM_LIST:
      return size_of (k, 0) + size_of (k, 1) + size_of (k, 2);
    default:
      return size_of (k, 0);
  }
}

/* Buffers of items [from, to) (a list's members one by one). */
static guint
buffers_of (guint from, guint to)
{
  guint k, n = 0;

  for (k = from; k < to; k++)
    n += kind_of (k) == ITEM_LIST ? 3 : kind_of (k) == ITEM_EVENT ? 0 : 1;
  return n;
}

/* The items that came out, from the first after `skip` received items,
 * are items [from, to) of the stream, whole and in order. */
static void
check_items (TbqLink * l, guint skip, guint from, guint to)
{
  guint i = skip, k;

  for (k = from; k < to; k++, i++) {
    gpointer item;

    fail_unless (i < l->items->len, "item %u missing", k);
    item = g_ptr_array_index (l->items, i);
    /* The stream's own events (sticky ones sent again after a flush,
     * FLUSH_STOP) are not items of the test's. */
    if (GST_IS_EVENT (item)
        && GST_EVENT_TYPE (item) != GST_EVENT_CUSTOM_DOWNSTREAM) {
      k--;
      continue;
    }
    switch (kind_of (k)) {
      case ITEM_EVENT:{
        const GstStructure *s;
        guint got = G_MAXUINT;

        fail_unless (GST_IS_EVENT (item), "item %u: not the event", k);
        s = gst_event_get_structure (GST_EVENT (item));
        fail_unless (s != NULL && gst_structure_has_name (s, "tbq-spill"));
        fail_unless (gst_structure_get_uint (s, "k", &got));
        fail_unless_equals_int (got, k);
        break;
      }
      case ITEM_LIST:{
        GstBufferList *list = item;
        guint m;

        fail_unless (GST_IS_BUFFER_LIST (item), "item %u: not the list", k);
        fail_unless_equals_int (gst_buffer_list_length (list), 3);
        for (m = 0; m < 3; m++)
          check_buffer (gst_buffer_list_get (list, m), k, m);
        break;
      }
      default:
        fail_unless (GST_IS_BUFFER (item), "item %u: not a buffer", k);
        check_buffer (item, k, 0);
        break;
    }
  }
}

/* ---- set-up ---- */

static gchar *
spill_dir_new (void)
{
  const gchar *tmp = g_getenv ("TMPDIR");
  gchar *tmpl = g_build_filename (tmp != NULL ? tmp : "/tmp",
      "tbq-spill-XXXXXX", NULL);

  fail_unless (g_mkdtemp (tmpl) != NULL);
  return tmpl;
}

/* Remove the directory and what the test left in it. */
static void
spill_dir_free (gchar * dir)
{
  tbq_remove_dir (dir);
  g_free (dir);
}

static guint
files_in (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  fail_unless (d != NULL);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

/* A tbqueue that spills into `dir` with a sink pool of `sink_max` bytes,
 * no level limit, and a bus. */
static TbqLink *
spill_link_sized (const gchar * dir, gboolean remove, guint64 sink_max,
    GstBus ** bus)
{
  gchar *tmpl = g_build_filename (dir, "spill-XXXXXX", NULL);
  TbqLink *l = tbq_link_new ("tbqueue", "max-size-buffers", 0,
      "max-size-bytes", 0, "max-size-time", (guint64) 0,
      "sink-max-bytes", sink_max, "sink-block-size", SINK_BLOCK,
      "temp-template", tmpl, "temp-remove", remove, NULL);

  g_free (tmpl);
  l->keep_copies = TRUE;
  *bus = gst_bus_new ();
  gst_element_set_bus (l->element, *bus);
  return l;
}

/* A tbqueue that spills into `dir`, no level limit, and a bus. */
static TbqLink *
spill_link (const gchar * dir, gboolean remove, GstBus ** bus)
{
  return spill_link_sized (dir, remove, SINK_MAX, bus);
}

/* The messages left on the bus hold the element: dropped first. */
static void
spill_link_free (TbqLink * l, GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  tbq_link_free (l);
  gst_object_unref (bus);
}

static guint64
rss_bytes (void)
{
  gchar *status = NULL, *line;
  guint64 kb = 0;

  fail_unless (g_file_get_contents ("/proc/self/status", &status, NULL,
          NULL));
  line = strstr (status, "VmRSS:");
  if (line != NULL)
    kb = g_ascii_strtoull (line + 6, NULL, 10);
  g_free (status);
  return kb * 1024;
}

/* Items pushed until `bytes` of payload went in. */
static guint
push_bytes (TbqLink * l, guint from, guint64 bytes, guint64 * rss_peak)
{
  guint64 pushed = 0;
  guint k = from;

  while (pushed < bytes) {
    fail_unless_equals_int (push_item (l, k), GST_FLOW_OK);
    pushed += bytes_of_item (k);
    k++;
    if (rss_peak != NULL && k % 64 == 0)
      *rss_peak = MAX (*rss_peak, rss_bytes ());
  }
  return k;
}

/* Received items before the stream: STREAM_START and SEGMENT. */
#define HEAD_ITEMS 2

/* ---- tests ---- */

/* Downstream blocked, twenty times sink-max-bytes of small buffers,
 * frames, lists, buffers with metas and serialized events: every push
 * returns OK, the memory stays within the sink pool and a fixed overhead,
 * and once downstream goes on, everything comes out, whole and in order. */
GST_START_TEST (test_a_backlog_on_disk_comes_back_whole_and_in_order)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint64 times = tbq_scaled (20, 3), rss0, rss_peak = 0, written;
  guint n;
  gchar *location = NULL;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  fail_unless (location != NULL && g_str_has_prefix (location, dir));
  /* Removed as soon as it is open. */
  fail_unless (!g_file_test (location, G_FILE_TEST_EXISTS));
  fail_unless_equals_int (files_in (dir), 0);
  rss0 = rss_bytes ();
  n = push_bytes (l, 0, times * SINK_MAX, &rss_peak);
  written = tbq_stat (l->element, "spill-bytes-written");
  fail_unless (written > (times - 2) * SINK_MAX, "only %" G_GUINT64_FORMAT
      " bytes spilled", written);
  fail_unless (tbq_stat (l->element, "sink-bytes-peak") <= SINK_MAX);
  g_printerr ("RSS rose by %" G_GUINT64_FORMAT " bytes for %" G_GUINT64_FORMAT
      " bytes queued (sink-max-bytes %u)\n", rss_peak - rss0,
      times * SINK_MAX, SINK_MAX);
  if (!UNDER_SANITIZER)
    fail_unless (rss_peak < rss0 + SINK_MAX + RSS_OVERHEAD, "RSS rose by %"
        G_GUINT64_FORMAT " bytes", rss_peak - rss0);
  tbq_link_release (l);
  tbq_wait_stat (l->element, "current-level-buffers", 0);
  tbq_link_wait_items (l, HEAD_ITEMS + n);
  check_items (l, HEAD_ITEMS, 0, n);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-level-bytes"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-bytes-read"),
      tbq_stat (l->element, "spill-bytes-written"));
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-errors"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "checksum-errors"), 0);
  spill_link_free (l, bus);
  g_free (location);
  fail_unless_equals_int (files_in (dir), 0);
  spill_dir_free (dir);
}

GST_END_TEST;

/* ---- spilling, told ---- */

/* The element's INFO lines (category tbqueue), as the log shows them. */
static GMutex info_lock;
static GPtrArray *info_lines;

static void
keep_info (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (level != GST_LEVEL_INFO
      || g_strcmp0 (gst_debug_category_get_name (category), "tbqueue") != 0)
    return;
  g_mutex_lock (&info_lock);
  g_ptr_array_add (info_lines, g_strdup (gst_debug_message_get (message)));
  g_mutex_unlock (&info_lock);
}

/* Whether an INFO line has both `a` and `b` in it. */
static gboolean
info_logged (const gchar * a, const gchar * b)
{
  gboolean found = FALSE;
  guint i;

  g_mutex_lock (&info_lock);
  for (i = 0; i < info_lines->len && !found; i++) {
    const gchar *l = g_ptr_array_index (info_lines, i);

    found = strstr (l, a) != NULL && strstr (l, b) != NULL;
  }
  g_mutex_unlock (&info_lock);
  return found;
}

/* The next "tbqueue-spill" message: its fields checked against `spilling`
 * and `location`; its reason and bytes returned. */
static gchar *
expect_spill_message (GstBus * bus, gboolean spilling,
    const gchar * location, guint64 * bytes)
{
  GstMessage *m;
  const GstStructure *s;
  gboolean on = !spilling;
  gchar *reason;

  for (;;) {
    m = tbq_bus_wait (bus, GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL, "no tbqueue-spill message (spilling %d)",
        spilling);
    s = gst_message_get_structure (m);
    if (gst_structure_has_name (s, "tbqueue-spill"))
      break;
    gst_message_unref (m);
  }
  fail_unless_equals_string (gst_structure_get_string (s, "location"),
      location);
  fail_unless (gst_structure_get_boolean (s, "spilling", &on));
  fail_unless_equals_int (on, spilling);
  fail_unless (gst_structure_get_uint64 (s, "bytes", bytes));
  reason = g_strdup (gst_structure_get_string (s, "reason"));
  fail_unless (reason != NULL);
  gst_message_unref (m);
  return reason;
}

/* When the backlog begins to go to the file, a "tbqueue-spill" message
 * (spilling, the file, the sink pool's bytes, why) and an INFO line
 * naming the file; when it is all read back and the queue goes on in
 * memory, another message (not spilling, the bytes that went through the
 * file, read-back) and INFO line.  The file is named in both, also with
 * temp-remove (the name it had). */
GST_START_TEST (test_spilling_is_told_when_it_starts_and_when_it_ends)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  gchar *location = NULL, *reason;
  guint64 bytes = 0;
  guint n;

  g_mutex_init (&info_lock);
  info_lines = g_ptr_array_new_with_free_func (g_free);
  gst_debug_set_threshold_for_name ("tbqueue", GST_LEVEL_INFO);
  gst_debug_add_log_function (keep_info, NULL, NULL);

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  fail_unless (location != NULL);
  n = push_bytes (l, 0, 3 * SINK_MAX, NULL);
  reason = expect_spill_message (bus, TRUE, location, &bytes);
  fail_unless (g_str_equal (reason, "sink-pool") || g_str_equal (reason,
          "frame"), "reason %s", reason);
  /* Three quarters of the sink pool, or a frame short of room near it. */
  fail_unless (bytes >= SINK_MAX / 2 && bytes <= SINK_MAX, "%"
      G_GUINT64_FORMAT " bytes", bytes);
  g_free (reason);
  fail_unless (info_logged ("spilling to", location));

  tbq_link_release (l);
  tbq_link_wait_items (l, HEAD_ITEMS + n);
  reason = expect_spill_message (bus, FALSE, location, &bytes);
  fail_unless_equals_string (reason, "read-back");
  g_free (reason);
  fail_unless (bytes > 0);
  fail_unless (bytes <= tbq_stat (l->element, "spill-bytes-written"));
  fail_unless (info_logged ("back in memory", location));
  check_items (l, HEAD_ITEMS, 0, n);

  gst_debug_remove_log_function (keep_info);
  gst_debug_unset_threshold_for_name ("tbqueue");
  spill_link_free (l, bus);
  g_ptr_array_unref (info_lines);
  g_mutex_clear (&info_lock);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* A run that a flush drops ends too: not spilling any more.  "flushed",
 * or "read-back" when the src task, stopping for the flush, had read the
 * file back to drop what it held (nothing of it is pushed either way). */
GST_START_TEST (test_a_flushed_spill_is_told_as_flushed)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  gchar *location = NULL, *reason;
  guint64 bytes;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  push_bytes (l, 0, 3 * SINK_MAX, NULL);
  g_free (expect_spill_message (bus, TRUE, location, &bytes));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  reason = expect_spill_message (bus, FALSE, location, &bytes);
  fail_unless (g_str_equal (reason, "flushed")
      || g_str_equal (reason, "read-back"), "reason %s", reason);
  g_free (reason);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-level-bytes"), 0);
  tbq_link_release (l);
  spill_link_free (l, bus);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* With temp-remove=false the file is kept: temp-location still names it
 * once the element is back in NULL, and until the next start, which
 * names the new one. */
GST_START_TEST (test_temp_location_names_a_kept_file_after_null)
{
  gchar *dir = spill_dir_new (), *first = NULL, *after = NULL, *second = NULL;
  GstBus *bus;
  TbqLink *l = spill_link (dir, FALSE, &bus);

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &first, NULL);
  fail_unless (first != NULL);
  push_bytes (l, 0, 3 * SINK_MAX, NULL);
  tbq_link_release (l);
  tbq_link_set_state (l, GST_STATE_NULL);
  g_object_get (l->element, "temp-location", &after, NULL);
  fail_unless_equals_string (after, first);
  fail_unless (g_file_test (after, G_FILE_TEST_IS_REGULAR));
  tbq_link_clear (l);
  tbq_link_set_state (l, GST_STATE_PLAYING);
  g_object_get (l->element, "temp-location", &second, NULL);
  fail_unless (second != NULL && g_strcmp0 (second, first) != 0);
  spill_link_free (l, bus);
  fail_unless_equals_int (files_in (dir), 2);
  g_free (first);
  g_free (after);
  g_free (second);
  spill_dir_free (dir);
}

GST_END_TEST;

/* The sink-max-bytes the too-large warning names for a frame of `size`
 * while spilling with `sink_max` (0: no warning). */
static guint64
advised_sink_max (const gchar * dir, guint64 sink_max, gsize size,
    guint64 * too_large)
{
  GstBus *bus;
  TbqLink *l = spill_link_sized (dir, TRUE, sink_max, &bus);
  GstMessage *m;
  guint64 need = 0;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", "copy");
  tbq_link_start_held (l);
  fail_unless_equals_int (tbq_link_push (l, gst_buffer_new_allocate (NULL,
              size, NULL)), GST_FLOW_OK);
  *too_large = tbq_stat (l->element, "referenced-too-large");
  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gchar *debug = NULL;
    const gchar *at;

    gst_message_parse_warning (m, &err, &debug);
    at = debug != NULL ? strstr (debug, "at least ") : NULL;
    if (at != NULL && strstr (debug, "sink-max-bytes") != NULL) {
      fail_unless (need == 0, "warned twice");
      need = g_ascii_strtoull (at + strlen ("at least "), NULL, 10);
      /* One number, the one to set. */
      fail_unless (strstr (debug, "times") == NULL, "%s", debug);
    }
    g_clear_error (&err);
    g_free (debug);
    gst_message_unref (m);
  }
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 1);
  spill_link_free (l, bus);
  return need;
}

/* A frame too large for a spilling sink pool is warned about with one
 * number: sink-max-bytes set to it copies the frame. */
GST_START_TEST (test_the_too_large_warning_names_the_sink_max_bytes_to_set)
{
  gchar *dir = spill_dir_new ();
  gsize size = 2u << 20;
  guint64 too_large, need = advised_sink_max (dir, SINK_MAX, size,
      &too_large);

  fail_unless_equals_uint64 (too_large, 1);
  fail_unless (need > size, "advised %" G_GUINT64_FORMAT, need);
  fail_unless_equals_uint64 (advised_sink_max (dir, need, size, &too_large),
      0);
  fail_unless_equals_uint64 (too_large, 0);
  spill_dir_free (dir);
}

GST_END_TEST;

/* An element error (RESOURCE READ) naming the spill file at `location`
 * and the offset comes, and one read error is counted. */
static void
expect_read_error (TbqLink * l, GstBus * bus, const gchar * location)
{
  GstMessage *msg = tbq_bus_wait (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "no error");
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_READ), "%s", err->message);
  fail_unless (strstr (debug, location) != NULL, "%s", debug);
  fail_unless (strstr (debug, "offset") != NULL, "%s", debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-errors"), 1);
}

/* With the backlog spilled and downstream held, `damage` the file (kept:
 * temp-remove=false), then let downstream go: an element error naming
 * the file and the offset; what came out before it is whole and in
 * order, and nothing damaged comes out. */
static void
check_damage (void (*damage) (int fd, off_t size))
{
  gchar *dir = spill_dir_new (), *location = NULL;
  GstBus *bus;
  TbqLink *l = spill_link (dir, FALSE, &bus);
  struct stat sb;
  guint n, got;
  int fd;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  n = push_bytes (l, 0, 12 * SINK_MAX, NULL);
  /* Far more is in the file than is read ahead (a few units): its middle
   * is still to be read. */
  while (tbq_stat (l->element, "spill-level-bytes") < 6 * SINK_MAX)
    g_usleep (1000);
  fd = open (location, O_RDWR);
  fail_unless (fd >= 0);
  fail_unless (fstat (fd, &sb) == 0);
  damage (fd, sb.st_size);
  close (fd);
  tbq_link_release (l);
  expect_read_error (l, bus, location);
  /* The src task stopped at the damage: what came out is a whole prefix. */
  got = l->items->len - HEAD_ITEMS;
  fail_unless (got > 0 && got < n, "%u of %u items came out", got, n);
  check_items (l, HEAD_ITEMS, 0, got);
  spill_link_free (l, bus);
  g_unlink (location);
  g_free (location);
  spill_dir_free (dir);
}

static void
flip_middle (int fd, off_t size)
{
  guchar c;

  fail_unless (pread (fd, &c, 1, size / 2) == 1);
  c ^= 0x5a;
  fail_unless (pwrite (fd, &c, 1, size / 2) == 1);
}

static void
truncate_middle (int fd, off_t size)
{
  fail_unless (ftruncate (fd, size / 2 + 5) == 0);
}

GST_START_TEST (test_a_flipped_byte_is_an_error_and_no_damaged_buffer)
{
  check_damage (flip_middle);
}

GST_END_TEST;

GST_START_TEST (test_a_truncated_file_is_an_error_and_no_damaged_buffer)
{
  check_damage (truncate_middle);
}

GST_END_TEST;

/* ---- buffer lists across units of the file ---- */

/* A stream of buffer lists of 2 to 7 buffers: the first one small, every
 * other one larger than a unit of the file holds (1 MiB), so that each of
 * those is a unit of its own, and a unit with a payload never begins a
 * list.  An eighth of a sink pool of 10 MiB, less four blocks and
 * 128 KiB, holds such a buffer: it is copied, and spilled. */
#define LIST_SINK_MAX (10u << 20)
#define LIST_BIG ((1u << 20) + 4096u)

static guint
list_length (guint k)
{
  return 2 + k % 6;
}

static gsize
list_member_size (guint k, guint m)
{
  return m == 0 ? 40 + k % 17 : LIST_BIG + k % 64;
}

static GstBuffer *
list_member (guint k, guint m)
{
  return tbq_buffer_new (list_member_size (k, m), (guint8) (k * 8 + m),
      ((guint64) k * 8 + m) * GST_MSECOND);
}

/* Lists pushed from 0 until `bytes` went in: how many. */
static guint
push_lists (TbqLink * l, guint64 bytes)
{
  guint64 pushed = 0;
  guint k, m;

  for (k = 0; pushed < bytes; k++) {
    GstBufferList *list = gst_buffer_list_new ();

    for (m = 0; m < list_length (k); m++) {
      gst_buffer_list_add (list, list_member (k, m));
      pushed += list_member_size (k, m);
    }
    fail_unless_equals_int (tbq_link_push_list (l, list), GST_FLOW_OK);
  }
  return k;
}

/* The items received after the stream's head are lists [0, n), whole. */
static void
check_lists (TbqLink * l, guint n)
{
  guint k, m;

  for (k = 0; k < n; k++) {
    GstBufferList *list;

    fail_unless (HEAD_ITEMS + k < l->items->len, "list %u missing", k);
    list = g_ptr_array_index (l->items, HEAD_ITEMS + k);
    fail_unless (GST_IS_BUFFER_LIST (list), "item %u: not a list", k);
    fail_unless_equals_int (gst_buffer_list_length (list), list_length (k));
    for (m = 0; m < list_length (k); m++) {
      GstBuffer *b = gst_buffer_list_get (list, m);

      fail_unless (tbq_buffer_has_pattern (b, list_member_size (k, m),
              (guint8) (k * 8 + m)), "list %u, buffer %u differs", k, m);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (b),
          ((guint64) k * 8 + m) * GST_MSECOND);
    }
  }
}

/* Wait until the spill file holds at least `bytes` unread. */
static void
wait_spill_level (TbqLink * l, guint64 bytes)
{
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  while (tbq_stat (l->element, "spill-level-bytes") < bytes) {
    fail_unless (g_get_monotonic_time () < end, "the file holds only %"
        G_GUINT64_FORMAT " bytes", tbq_stat (l->element,
            "spill-level-bytes"));
    g_usleep (1000);
  }
}

/* A unit's header in the spill file, as libtbq writes it (64 bytes, host
 * byte order; docs/libtbq.md, "Spill"). */
typedef struct
{
  guint32 magic;
  guint16 version, header_size;
  guint64 seq;
  guint32 records_len, n_records;
  guint64 payload_len, unit_len, checksum;
  guchar pad[16];
} UnitHeader;

#define UNIT_MAGIC 0x53514254u

/* Cut the file inside the payload of the first unit at or past its middle
 * that has one: a list's second buffer or a later one. */
static void
truncate_inside_a_list (int fd, off_t size)
{
  UnitHeader h;
  off_t off = 0;

  G_STATIC_ASSERT (sizeof (UnitHeader) == 64);
  for (;;) {
    fail_unless (pread (fd, &h, sizeof h, off) == sizeof h,
        "no unit with a payload past the middle of the file");
    fail_unless_equals_int (h.magic, UNIT_MAGIC);
    if (off >= size / 2 && h.payload_len > 0)
      break;
    off += h.unit_len;
  }
  fail_unless (ftruncate (fd, off + sizeof h + h.records_len + 8) == 0);
}

/* Spilled lists and downstream held: once the file holds far more than
 * is read ahead (a few units), cut it inside a list. */
static void
cut_inside_a_list (TbqLink * l, const gchar * location)
{
  struct stat sb;
  int fd;

  wait_spill_level (l, 2 * LIST_SINK_MAX);
  fd = open (location, O_RDWR);
  fail_unless (fd >= 0);
  fail_unless (fstat (fd, &sb) == 0);
  truncate_inside_a_list (fd, sb.st_size);
  close (fd);
}

/* Every item a list; the file cut inside a list, its first buffer before
 * the cut: the src task, gathering the list's rest, meets the damage.  An
 * element error, as for a buffer on its own; every list before it came
 * out whole, the cut one never does. */
GST_START_TEST (test_a_damaged_unit_inside_a_list_is_an_error)
{
  gchar *dir = spill_dir_new (), *location = NULL;
  GstBus *bus;
  TbqLink *l = spill_link_sized (dir, FALSE, LIST_SINK_MAX, &bus);
  guint n, got;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  n = push_lists (l, 4 * LIST_SINK_MAX);
  cut_inside_a_list (l, location);
  tbq_link_release (l);
  expect_read_error (l, bus, location);
  got = l->items->len - HEAD_ITEMS;
  fail_unless (got > 0 && got < n, "%u of %u lists came out", got, n);
  check_lists (l, got);
  spill_link_free (l, bus);
  g_unlink (location);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* After the error, a flush empties the file and the queue goes on: an
 * item not visible yet (publish-batch holds it back while downstream is
 * busy) is waited for, not taken for the damage met before the flush. */
GST_START_TEST (test_a_flush_after_a_read_error_and_the_queue_goes_on)
{
  gchar *dir = spill_dir_new (), *location = NULL;
  GstBus *bus;
  TbqLink *l = spill_link_sized (dir, FALSE, LIST_SINK_MAX, &bus);
  GstSegment segment;
  guint k;

  g_object_set (l->element, "publish-batch", 64, NULL);
  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  push_lists (l, 4 * LIST_SINK_MAX);
  cut_inside_a_list (l, location);
  tbq_link_release (l);
  expect_read_error (l, bus, location);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  tbq_link_clear (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  tbq_link_wait_event (l, GST_EVENT_SEGMENT);
  /* The first buffer held downstream; the next ones held back unpublished
   * until the src task, free again, finds them counted in. */
  tbq_link_hold (l);
  for (k = 0; k < 5; k++) {
    fail_unless_equals_int (tbq_link_push (l, tbq_buffer_new (100, k, k)),
        GST_FLOW_OK);
    if (k == 0)
      tbq_link_wait_holding (l);
  }
  tbq_link_release (l);
  tbq_link_wait_buffers (l, 5);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  for (k = 0; k < 5; k++)
    fail_unless (tbq_buffer_has_pattern (tbq_link_buffer (l, k), 100, k));
  spill_link_free (l, bus);
  g_unlink (location);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* flush-on-eos, the file cut and downstream held: EOS drops what is
 * queued up to the damage and returns, without waiting for what can never
 * be read back; the src task, let go, posts the error. */
GST_START_TEST (test_flush_on_eos_does_not_wait_behind_a_damaged_unit)
{
  gchar *dir = spill_dir_new (), *location = NULL;
  GstBus *bus;
  TbqLink *l = spill_link_sized (dir, FALSE, LIST_SINK_MAX, &bus);

  g_object_set (l->element, "flush-on-eos", TRUE, NULL);
  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  push_lists (l, 4 * LIST_SINK_MAX);
  cut_inside_a_list (l, location);
  fail_unless_equals_int (tbq_push_join (tbq_push_async (l,
              GST_MINI_OBJECT_CAST (gst_event_new_eos ()))), GST_FLOW_OK);
  tbq_link_release (l);
  expect_read_error (l, bus, location);
  spill_link_free (l, bus);
  g_unlink (location);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* A full disk: a warning naming the file and the error; the queue is
 * full (leaky=upstream drops the newest, counted, and every push returns
 * OK); once space comes back it spills again (leaky=no from then on: no
 * push is dropped), and everything that was not counted as dropped comes
 * out, in order. */
GST_START_TEST (test_a_full_disk_is_a_full_queue_and_spilling_resumes)
{
  gchar *dir = spill_dir_new (), *debug = NULL;
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  GstMessage *msg;
  GError *err = NULL;
  guint k, n1, n2, out, i;
  guint64 dropped;
  GstBuffer *prev = NULL;

  g_object_set (l->element, "leaky", 1 /* upstream */ , NULL);
  tbq_link_start_held (l);
  fail_writes_with (ENOSPC);
  for (k = 0; tbq_stat (l->element, "dropped-upstream") == 0; k++) {
    fail_unless (k < 4000, "nothing was dropped");
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  }
  n1 = k + 20;
  for (; k < n1; k++)
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  msg = tbq_bus_wait (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning");
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_WRITE), "%s", err->message);
  fail_unless (strstr (debug, g_strerror (ENOSPC)) != NULL, "%s", debug);
  fail_unless (strstr (debug, dir) != NULL, "%s", debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  fail_unless (tbq_stat (l->element, "spill-errors") >= 1);
  /* Space again. */
  fail_writes_with (0);
  msg = tbq_bus_wait (bus, GST_MESSAGE_INFO);
  fail_unless (msg != NULL, "spilling did not resume");
  gst_message_unref (msg);
  g_object_set (l->element, "leaky", 0, NULL);
  dropped = tbq_stat (l->element, "dropped-upstream");
  n2 = n1 + tbq_scaled (200, 60);
  for (; k < n2; k++)
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream"),
      dropped);
  fail_unless (tbq_stat (l->element, "spill-bytes-written") > 0);
  tbq_link_release (l);
  out = n2 - (guint) dropped;
  tbq_link_wait_items (l, HEAD_ITEMS + out);
  /* In order, each whole; the last ones (after the disk came back) all. */
  for (i = 0; i < out; i++) {
    GstBuffer *b = g_ptr_array_index (l->items, HEAD_ITEMS + i);
    guint kk = (guint) (GST_BUFFER_OFFSET (b) / 4);

    check_buffer (b, kk, 0);
    if (prev != NULL)
      fail_unless (GST_BUFFER_OFFSET (b) > GST_BUFFER_OFFSET (prev));
    if (i >= out - (n2 - n1))
      fail_unless_equals_int (kk, (n1 + i - (out - (n2 - n1))) * 9 + 4);
    prev = b;
  }
  tbq_wait_stat (l->element, "current-level-buffers", 0);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* spill-max-bytes bounds what the file holds unread, whatever a unit
 * would hold (up to 1 MiB): here below a frame, which then stays in
 * memory, while small buffers still spill.  The file full, the queue is
 * (leaky=upstream drops).  Small buffers come first, until some are in
 * the file: a spill that begins with a frame writes nothing (nothing
 * after the frame goes to the file before it), and whether the first
 * record past the spill mark is a frame or a small buffer is the
 * schedule's (a frame refused its memory starts the spill, the copy
 * task's blocks do too). */
#define SPILL_MAX 100000u
GST_START_TEST (test_spill_max_bytes_bounds_the_file)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint64 pushed = 0, level, peak = 0;
  guint k;

  g_object_set (l->element, "spill-max-bytes", (guint64) SPILL_MAX,
      "leaky", 1 /* upstream */ , NULL);
  tbq_link_start_held (l);
  /* Buffers only (an event waits for room, as a buffer with leaky=no);
   * no frame until the file holds small ones. */
  for (k = 0; tbq_stat (l->element, "spill-bytes-written") == 0; k++) {
    fail_unless (k < 1000000, "nothing spilled");
    if (kind_of (k) != ITEM_FRAME)
      fail_unless_equals_int (tbq_link_push (l, make_buffer (k, 0)),
          GST_FLOW_OK);
  }
  for (; pushed < 3 * SINK_MAX; k++) {
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k, 0)),
        GST_FLOW_OK);
    pushed += size_of (k, 0);
    level = tbq_stat (l->element, "spill-level-bytes");
    peak = MAX (peak, level);
  }
  fail_unless (peak <= SPILL_MAX, "the file held %" G_GUINT64_FORMAT
      " bytes", peak);
  fail_unless (tbq_stat (l->element, "spill-bytes-written") > 0);
  fail_unless (tbq_stat (l->element, "dropped-upstream") > 0);
  tbq_link_release (l);
  tbq_wait_stat (l->element, "current-level-buffers", 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-errors"), 0);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* Frames through a spilling queue, every max-size-* off: first with
 * downstream held (the backlog goes to the file), then taken while more
 * come (read back from the file while written, runs ending and starting
 * again).  The file always has room: the queue is never full, and
 * `overrun` never fires. */
GST_START_TEST (test_spilling_with_room_is_no_overrun)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint k, n = 6 * SINK_MAX / FRAME;

  tbq_link_start_held (l);
  for (k = 0; k < n; k++) {
    if (k == n / 2)
      tbq_link_release (l);
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  }
  tbq_link_wait_buffers (l, n);
  fail_unless (tbq_stat (l->element, "spill-bytes-written") > 0);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "overruns"), 0);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* The same in the leaky modes, downstream held all along: while the file
 * has room nothing is dropped (nothing is full below the limits), and
 * every buffer comes out once downstream lets go. */
GST_START_TEST (test_leaky_spilling_with_room_drops_nothing)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint k, n = 6 * SINK_MAX / FRAME;

  g_object_set (l->element, "leaky", __i__ == 0 ? 1 : 2, NULL);
  tbq_link_start_held (l);
  for (k = 0; k < n; k++)
    fail_unless_equals_int (tbq_link_push (l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  fail_unless_equals_uint64 (tbq_stat (l->element, "dropped-upstream")
      + tbq_stat (l->element, "dropped-downstream"), 0);
  fail_unless_equals_int (tbq_link_signal_count (l, TBQ_SIGNAL_OVERRUN), 0);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, n);
  for (k = 0; k < n; k++)
    check_buffer (tbq_link_buffer (l, k), k * 9 + 4, 0);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

typedef struct
{
  TbqLink *l;
  guint n;
} FramePusher;

/* Push frames [0, n): each OK. */
static gpointer
push_frames (gpointer data)
{
  FramePusher *p = data;
  guint k;

  for (k = 0; k < p->n; k++)
    fail_unless_equals_int (tbq_link_push (p->l, make_buffer (k * 9 + 4, 0)),
        GST_FLOW_OK);
  return NULL;
}

/* The file full (spill-max-bytes) and memory too, downstream held: the
 * queue is full, `overrun` fires and upstream waits (leaky=no); let go,
 * every frame comes out. */
GST_START_TEST (test_a_full_spill_file_is_an_overrun)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  FramePusher p = { l, 3 * SINK_MAX / FRAME };
  GThread *th;

  g_object_set (l->element, "spill-max-bytes", (guint64) SINK_MAX, NULL);
  tbq_link_start_held (l);
  th = g_thread_new ("tbq-test-frames", push_frames, &p);
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  fail_unless (tbq_stat (l->element, "spill-level-bytes") > 0);
  tbq_link_release (l);
  g_thread_join (th);
  tbq_link_wait_buffers (l, p.n);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* What sink-max-bytes bounds while spilling, and what the tests below
 * check through sink-bytes-peak: sink-bytes-in-use, all the sink pool
 * memory in use, whoever holds it.  That is the sink blocks in use (the
 * copy task's, those queued in memory, those on their way to the file,
 * those a copied buffer downstream still holds) and the memory of copied
 * frames (queued, on their way to the file, held downstream), and of what
 * comes back from the file (read ahead, or being taken by the src task).
 * Not in it: idle blocks and idle frame memory kept for reuse (bounded by
 * idle-blocks and by their own trim), and the memory of its own in which
 * what comes back from the file goes downstream. */
static void
check_sink_peak (TbqLink * l)
{
  guint64 peak = tbq_stat (l->element, "sink-bytes-peak");

  fail_unless (peak <= SINK_MAX, "sink-bytes-peak %" G_GUINT64_FORMAT
      " is above sink-max-bytes %u", peak, SINK_MAX);
}

/* The file full (spill-max-bytes) and the sink pool full of what cannot
 * go to it, downstream held: then downstream takes everything while more
 * frames come, as fast as there is room.  Every frame is copied
 * (transfer=copy).  Whichever way the threads go, the sink pool's memory
 * never passes sink-max-bytes, and every frame comes out whole and in
 * order. */
GST_START_TEST (test_sink_max_bytes_bounds_memory_while_the_file_is_read_back)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  FramePusher p = { l, 6 * SINK_MAX / FRAME };
  GThread *th;
  guint k;

  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", "copy");
  g_object_set (l->element, "spill-max-bytes", (guint64) SINK_MAX, NULL);
  tbq_link_start_held (l);
  th = g_thread_new ("tbq-test-frames", push_frames, &p);
  /* Full: the file and the sink pool. */
  tbq_link_wait_signal (l, TBQ_SIGNAL_OVERRUN, 1);
  fail_unless (tbq_stat (l->element, "spill-level-bytes") > 0);
  check_sink_peak (l);
  tbq_link_release (l);
  g_thread_join (th);
  tbq_link_wait_buffers (l, p.n);
  for (k = 0; k < p.n; k++)
    check_buffer (tbq_link_buffer (l, k), k * 9 + 4, 0);
  fail_unless (tbq_stat (l->element, "spill-bytes-read") > 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "referenced-too-large"),
      0);
  check_sink_peak (l);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* Downstream that keeps every buffer it gets (zero copy, as it came),
 * first held while a backlog goes to the file: what came back from the
 * file goes downstream in memory of its own, so that what downstream
 * keeps never keeps the rest of the file from coming back.  Everything
 * comes out, and the sink pool's memory never passes sink-max-bytes. */
GST_START_TEST (test_downstream_keeping_buffers_never_holds_up_the_file)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint n;

  l->keep_copies = FALSE;
  gst_util_set_object_arg (G_OBJECT (l->element), "transfer", "copy");
  tbq_link_start_held (l);
  n = push_bytes (l, 0, 4 * SINK_MAX, NULL);
  fail_unless (tbq_stat (l->element, "spill-bytes-written") > 0);
  tbq_link_release (l);
  tbq_link_wait_buffers (l, buffers_of (0, n));
  check_items (l, HEAD_ITEMS, 0, n);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-bytes-read"),
      tbq_stat (l->element, "spill-bytes-written"));
  check_sink_peak (l);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* Downstream held with a backlog in the file: a flush empties the file
 * (kept: temp-remove=false, so its size shows) and the queue goes on. */
GST_START_TEST (test_a_flush_empties_the_file_and_the_queue_goes_on)
{
  gchar *dir = spill_dir_new (), *location = NULL;
  GstBus *bus;
  TbqLink *l = spill_link (dir, FALSE, &bus);
  GstSegment segment;
  struct stat sb;
  guint n;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &location, NULL);
  push_bytes (l, 0, 4 * SINK_MAX, NULL);
  while (tbq_stat (l->element, "spill-level-bytes") == 0)
    g_usleep (1000);
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_start ()));
  fail_unless (tbq_link_push_event (l, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_uint64 (tbq_get_uint (l->element,
          "current-level-buffers"), 0);
  fail_unless_equals_uint64 (tbq_stat (l->element, "spill-level-bytes"), 0);
  fail_unless (stat (location, &sb) == 0);
  fail_unless_equals_uint64 (sb.st_size, 0);
  /* After the flush: the stream again, through memory and file. */
  tbq_link_release (l);
  tbq_link_clear (l);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (tbq_link_push_event (l, gst_event_new_segment (&segment)));
  tbq_link_wait_event (l, GST_EVENT_SEGMENT);
  tbq_link_hold (l);
  n = push_bytes (l, 0, 3 * SINK_MAX, NULL);
  tbq_link_release (l);
  /* The last item pushed is a buffer (push_bytes): once every buffer is
   * out, so is every item. */
  tbq_link_wait_buffers (l, buffers_of (0, n));
  check_items (l, 0, 0, n);
  spill_link_free (l, bus);
  g_unlink (location);
  g_free (location);
  spill_dir_free (dir);
}

GST_END_TEST;

/* EOS while the backlog is in the file: it comes after every item. */
GST_START_TEST (test_eos_comes_after_the_spilled_backlog)
{
  gchar *dir = spill_dir_new ();
  GstBus *bus;
  TbqLink *l = spill_link (dir, TRUE, &bus);
  guint n;

  tbq_link_start_held (l);
  n = push_bytes (l, 0, 3 * SINK_MAX, NULL);
  fail_unless (tbq_link_push_event (l, gst_event_new_eos ()));
  tbq_link_release (l);
  tbq_link_wait_event (l, GST_EVENT_EOS);
  fail_unless_equals_int (l->items->len, HEAD_ITEMS + n + 1);
  check_items (l, HEAD_ITEMS, 0, n);
  spill_link_free (l, bus);
  spill_dir_free (dir);
}

GST_END_TEST;

/* PAUSED to READY with a backlog in the file drops it and closes the file
 * (removed, or kept with temp-remove=false); READY to PAUSED opens a new
 * one. */
GST_START_TEST (test_a_state_change_drops_the_file)
{
  gboolean remove = __i__ == 0;
  gchar *dir = spill_dir_new (), *first = NULL, *second = NULL;
  GstBus *bus;
  TbqLink *l = spill_link (dir, remove, &bus);
  guint n;

  tbq_link_start_held (l);
  g_object_get (l->element, "temp-location", &first, NULL);
  push_bytes (l, 0, 3 * SINK_MAX, NULL);
  while (tbq_stat (l->element, "spill-level-bytes") == 0)
    g_usleep (1000);
  tbq_link_release (l);
  tbq_link_set_state (l, GST_STATE_READY);
  {
    gchar *kept = NULL;

    /* A kept file stays named until the next start. */
    g_object_get (l->element, "temp-location", &kept, NULL);
    if (remove)
      fail_unless (kept == NULL);
    else
      fail_unless_equals_string (kept, first);
    g_free (kept);
  }
  fail_unless_equals_int (files_in (dir), remove ? 0 : 1);
  tbq_link_clear (l);
  tbq_link_hold (l);
  tbq_link_set_state (l, GST_STATE_PLAYING);
  tbq_link_push_initial_events (l, GST_FORMAT_TIME);
  g_object_get (l->element, "temp-location", &second, NULL);
  fail_unless (second != NULL && g_strcmp0 (first, second) != 0);
  n = push_bytes (l, 0, 3 * SINK_MAX, NULL);
  tbq_link_release (l);
  tbq_link_wait_items (l, HEAD_ITEMS + n);
  check_items (l, HEAD_ITEMS, 0, n);
  spill_link_free (l, bus);
  fail_unless_equals_int (files_in (dir), remove ? 0 : 2);
  g_free (first);
  g_free (second);
  spill_dir_free (dir);
}

GST_END_TEST;

/* The child of the SIGKILL test: this executable again, run with
 * TBQ_SPILL_CHILD=PIPELINE, before gst-check's main: it plays the
 * pipeline until it is killed (an executable of the same build, so that a
 * sanitizer build loads its plugin). */
static void __attribute__ ((constructor))
spill_child (void)
{
  const gchar *desc = g_getenv ("TBQ_SPILL_CHILD");
  GstElement *pipeline;

  if (desc == NULL)
    return;
  gst_init (NULL, NULL);
  pipeline = gst_parse_launch (desc, NULL);
  if (pipeline == NULL
      || gst_element_set_state (pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE)
    _exit (3);
  for (;;)
    g_usleep (G_USEC_PER_SEC);
}

/* Whether process `pid` has a file of `dir` open with data in it (a
 * removed one too: /proc/PID/fd still reaches it). */
static gboolean
spills_into (GPid pid, const gchar * dir)
{
  gchar *fddir = g_strdup_printf ("/proc/%d/fd", pid);
  GDir *d = g_dir_open (fddir, 0, NULL);
  const gchar *name;
  gboolean spilling = FALSE;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL && !spilling) {
    gchar *link = g_build_filename (fddir, name, NULL);
    gchar *target = g_file_read_link (link, NULL);
    struct stat sb;

    if (target != NULL && g_str_has_prefix (target, dir)
        && stat (link, &sb) == 0 && sb.st_size > 0)
      spilling = TRUE;
    g_free (target);
    g_free (link);
  }
  if (d != NULL)
    g_dir_close (d);
  g_free (fddir);
  return spilling;
}

/* A process killed while it spills: with temp-remove (the default)
 * nothing is left behind; with temp-remove=false the file is.  (The
 * frames, 600 KiB, are copied and spilled within an eighth of the sink
 * pool, less four blocks and 128 KiB.) */
GST_START_TEST (test_sigkill_leaves_nothing_behind_with_temp_remove)
{
  gboolean remove = __i__ == 0;
  gchar *dir = spill_dir_new ();
  gchar *tmpl = g_build_filename (dir, "spill-XXXXXX", NULL);
  gchar *desc = g_strdup_printf ("videotestsrc is-live=false ! "
      "video/x-raw,width=320,height=240,framerate=5/1 ! tbqueue "
      "temp-template=%s temp-remove=%s sink-max-bytes=%u "
      "sink-block-size=%u max-size-buffers=0 max-size-bytes=0 "
      "max-size-time=0 ! fakesink sync=true", tmpl,
      remove ? "true" : "false", 2 * SINK_MAX, SINK_BLOCK);
  gchar *argv[] = { (gchar *) "/proc/self/exe", NULL };
  gchar **envp = g_environ_setenv (g_get_environ (), "TBQ_SPILL_CHILD", desc,
      TRUE);
  GError *err = NULL;
  GPid pid;
  gint status;
  gint64 end = g_get_monotonic_time () + TBQ_WAIT_SECONDS * G_TIME_SPAN_SECOND;

  /* Leak checks are this process's: the child is killed. */
  envp = g_environ_unsetenv (envp, "GST_TRACERS");
  fail_unless (g_spawn_async (NULL, argv, envp, G_SPAWN_DO_NOT_REAP_CHILD
          | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, &pid, &err), "%s",
      err ? err->message : "");
  while (!spills_into (pid, dir)) {
    fail_unless (waitpid (pid, &status, WNOHANG) == 0, "the child ended");
    fail_unless (g_get_monotonic_time () < end, "it never spilled");
    g_usleep (10000);
  }
  kill (pid, SIGKILL);
  fail_unless (waitpid (pid, &status, 0) == pid);
  fail_unless (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  g_spawn_close_pid (pid);
  fail_unless_equals_int (files_in (dir), remove ? 0 : 1);
  g_strfreev (envp);
  g_free (desc);
  g_free (tmpl);
  spill_dir_free (dir);
}

GST_END_TEST;

/* The properties: defaults, a template without XXXXXX refused (the value
 * in use kept), and a template whose file cannot be made fails the READY
 * to PAUSED change with an error naming it. */
GST_START_TEST (test_the_spill_properties)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();
  gchar *s = NULL;
  gboolean remove = FALSE;
  guint64 max = 1;
  GstMessage *msg;

  fail_unless (e != NULL);
  gst_element_set_bus (e, bus);
  g_object_get (e, "temp-template", &s, "temp-remove", &remove,
      "spill-max-bytes", &max, NULL);
  fail_unless (s == NULL);
  fail_unless (remove);
  fail_unless_equals_uint64 (max, 0);
  g_object_get (e, "temp-location", &s, NULL);
  fail_unless (s == NULL);
  g_object_set (e, "temp-template", "/tmp/tbq-spill", NULL);
  g_object_get (e, "temp-template", &s, NULL);
  fail_unless (s == NULL);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_unref (msg);
  g_object_set (e, "temp-template", "/nonexistent-dir-of-tbq/x-XXXXXX", NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  {
    GError *err = NULL;
    gchar *debug = NULL;

    gst_message_parse_error (msg, &err, &debug);
    fail_unless (strstr (err->message, "/nonexistent-dir-of-tbq/x-XXXXXX")
        != NULL, "%s", err->message);
    g_clear_error (&err);
    g_free (debug);
  }
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* A sink pool too small to spill: READY->PAUSED fails, and the error's
 * message says why (not only its debug text). */
GST_START_TEST (test_a_sink_pool_too_small_to_spill_says_why)
{
  GstElement *e = gst_element_factory_make ("tbqueue", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  gst_element_set_bus (e, bus);
  g_object_set (e, "temp-template", "/tmp/tbq-small-XXXXXX",
      "sink-block-size", 65536, "sink-min-bytes", (guint64) 0,
      "sink-max-bytes", (guint64) 4 * 65536, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "sink blocks") != NULL,
      "the message says no reason: %s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (e);
  gst_object_unref (bus);
}

GST_END_TEST;

static Suite *
tbqueue_spill_suite (void)
{
  Suite *s = suite_create ("tbqueue-spill");
  TCase *tc = tbq_tcase (s, "spill");

  tcase_add_test (tc, test_a_backlog_on_disk_comes_back_whole_and_in_order);
  tcase_add_test (tc, test_spilling_is_told_when_it_starts_and_when_it_ends);
  tcase_add_test (tc, test_a_flushed_spill_is_told_as_flushed);
  tcase_add_test (tc, test_temp_location_names_a_kept_file_after_null);
  tcase_add_test (tc,
      test_the_too_large_warning_names_the_sink_max_bytes_to_set);
  tcase_add_test (tc, test_a_flipped_byte_is_an_error_and_no_damaged_buffer);
  tcase_add_test (tc,
      test_a_truncated_file_is_an_error_and_no_damaged_buffer);
  tcase_add_test (tc, test_a_damaged_unit_inside_a_list_is_an_error);
  tcase_add_test (tc, test_flush_on_eos_does_not_wait_behind_a_damaged_unit);
  tcase_add_test (tc, test_a_flush_after_a_read_error_and_the_queue_goes_on);
  tcase_add_test (tc, test_a_full_disk_is_a_full_queue_and_spilling_resumes);
  tcase_add_test (tc, test_spill_max_bytes_bounds_the_file);
  tcase_add_test (tc, test_spilling_with_room_is_no_overrun);
  tcase_add_loop_test (tc, test_leaky_spilling_with_room_drops_nothing, 0, 2);
  tcase_add_test (tc, test_a_full_spill_file_is_an_overrun);
  tcase_add_test (tc,
      test_sink_max_bytes_bounds_memory_while_the_file_is_read_back);
  tcase_add_test (tc, test_downstream_keeping_buffers_never_holds_up_the_file);
  tcase_add_test (tc, test_a_flush_empties_the_file_and_the_queue_goes_on);
  tcase_add_test (tc, test_eos_comes_after_the_spilled_backlog);
  tcase_add_loop_test (tc, test_a_state_change_drops_the_file, 0, 2);
  tcase_add_loop_test (tc, test_sigkill_leaves_nothing_behind_with_temp_remove,
      0, 2);
  tcase_add_test (tc, test_the_spill_properties);
  tcase_add_test (tc, test_a_sink_pool_too_small_to_spill_says_why);
  return s;
}

TBQ_CHECK_MAIN (tbqueue_spill);

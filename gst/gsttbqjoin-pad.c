/* tbqjoin's sink pad (GstTbqJoinPad), and what both sides of the element
 * do to a pad's state: retiring its records, the sizes of what they
 * hold, releasing them; waking the waits.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bottom of the element (gsttbqjoin.c calls the sink side, which
 * calls the src side; both call this).  Threads and locks, and which of
 * a pad's fields each side owns: gsttbqjoin-private.h.
 */
#include "gsttbqjoin-private.h"

/* ---- the sink pad ---- */

G_DEFINE_TYPE (GstTbqJoinPad, gst_tbq_join_pad, GST_TYPE_PAD);

static void
gst_tbq_join_pad_finalize (GObject * object)
{
  GstTbqJoinPad *pad = GST_TBQ_JOIN_PAD (object);

  g_ptr_array_unref (pad->sticky);
  pthread_cond_destroy (&pad->room);
  if (pad->cand_pair != NULL)
    gst_tbq_pair_unref (pad->cand_pair);
  if (pad->pair != NULL)
    gst_tbq_pair_unref (pad->pair);
  G_OBJECT_CLASS (gst_tbq_join_pad_parent_class)->finalize (object);
}

static void
gst_tbq_join_pad_class_init (GstTbqJoinPadClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_tbq_join_pad_finalize;
}

static void
gst_tbq_join_pad_init (GstTbqJoinPad * pad)
{
  pad->sticky = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  g_queue_init (&pad->fifo);
  gst_segment_init (&pad->segment, GST_FORMAT_UNDEFINED);
  pad->last_seq = -1;
  pad->done_max = -1;
  pad->sync_told = -1;
  pad->released_branch = -1;
  atomic_init (&pad->sinktime, -1);
  atomic_init (&pad->srctime, -1);
  atomic_init (&pad->firsttime, -1);
  /* Its waits have deadlines (CLOCK_MONOTONIC: gsttbqjoin-sink.c). */
  tbq_cond_init_monotonic (&pad->room);
}

/* ---- what both sides do to a pad, and wake ---- */

void
gst_tbq_join_locked_retire (GstTbqJoin * join, GstTbqJoinPad * pad,
    guint64 n)
{
  pad->retired += n;
  if (pad->query_target != 0 && pad->retired >= pad->query_target)
    JOIN_BROADCAST (join, retired);
}

void
gst_tbq_join_release_record (uint16_t type, const void *data, uint32_t size,
    void *user_data)
{
  JoinRecord rec;

  if (size < sizeof rec)
    return;
  memcpy (&rec, data, sizeof rec);
  if (rec.object != NULL)
    gst_mini_object_unref (rec.object);
}

static gboolean
add_member_size (GstBuffer ** buffer, guint idx, gpointer user_data)
{
  gsize *bytes = user_data;

  *bytes += gst_buffer_get_size (*buffer);
  return TRUE;
}

void
gst_tbq_join_object_size (GstMiniObject * object, guint * buffers,
    gsize * bytes)
{
  *buffers = 0;
  *bytes = 0;
  if (object == NULL)
    return;
  if (GST_IS_BUFFER (object)) {
    *buffers = 1;
    *bytes = gst_buffer_get_size (GST_BUFFER_CAST (object));
  } else if (GST_IS_BUFFER_LIST (object)) {
    GstBufferList *list = GST_BUFFER_LIST_CAST (object);

    *buffers = gst_buffer_list_length (list);
    gst_buffer_list_foreach (list, add_member_size, bytes);
  }
}

void
gst_tbq_join_locked_kick (GstTbqJoin * join)
{
  if (join->reader != NULL)
    tbq_reader_wake (join->reader);
}

/* The level at which the join is full for a limit (0: none): the limit,
 * or (`low`) one above the low mark, a quarter of the limit and at least
 * one below it (a limit of 1 has the mark 0: full when not empty). */
static guint64
full_at (guint64 limit, gboolean low)
{
  if (limit == 0 || !low)
    return limit;
  return limit - MAX (limit * 3 / 4, 1) + 1;
}

gboolean
gst_tbq_join_is_full (GstTbqJoin * join, GstTbqJoinPad * pad, gboolean low)
{
  guint64 max_buffers = full_at (JOIN_LOAD (join->max_buffers), low);
  guint64 max_bytes = full_at (JOIN_LOAD (join->max_bytes), low);
  guint64 max_time = JOIN_LOAD (join->max_time);
  guint64 out = JOIN_LOAD (join->out_buffers);
  guint64 out_bytes = JOIN_LOAD (join->out_bytes);

  if (max_buffers > 0 && JOIN_LOAD (join->in_buffers) >= out + max_buffers)
    return TRUE;
  if (max_bytes > 0 && JOIN_LOAD (join->in_bytes) >= out_bytes + max_bytes)
    return TRUE;
  if (max_time > 0 && gst_tbq_join_pad_time_level (pad) >= max_time)
    return TRUE;
  return FALSE;
}

guint64
gst_tbq_join_pad_time_level (GstTbqJoinPad * pad)
{
  gint64 in_t = JOIN_LOAD (pad->sinktime), out_t = JOIN_LOAD (pad->srctime);

  if (out_t < 0)
    out_t = JOIN_LOAD (pad->firsttime);
  if (in_t < 0 || out_t < 0 || in_t <= out_t)
    return 0;
  return (guint64) (in_t - out_t);
}

void
gst_tbq_join_pad_forget_times (GstTbqJoinPad * pad, gboolean sink)
{
  if (sink)
    JOIN_STORE (pad->sinktime, -1);
  JOIN_STORE (pad->srctime, -1);
  JOIN_STORE (pad->firsttime, -1);
}

/* qlock: `pad` waits for room no more, and its thread goes on. */
static void
locked_let_go (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  pad->room_wait = FALSE;
  JOIN_STORE (join->room_waiters, JOIN_LOAD (join->room_waiters) - 1);
  if (!pad->room_let_go) {
    pad->room_let_go = TRUE;
    join->room_let_go++;
  }
  pthread_cond_signal (&pad->room);
}

/* Buffers out this far apart (microseconds) or more are far apart. */
#define ROOM_SPARSE_US 50

void
gst_tbq_join_locked_wake_room (GstTbqJoin * join, gboolean low)
{
  guint n = join->pads->len, i;

  if (JOIN_LOAD (join->room_waiters) == 0 || n == 0)
    return;
  if (low) {
    /* Buffers that leave far apart (a slow consumer): each lets a pad go
     * under the limits, as queue does, for a wake-up per buffer out is
     * then cheap; the mark saves the wake-ups of a fast one. */
    gint64 now = g_get_monotonic_time ();

    if (now - join->room_last_out >= ROOM_SPARSE_US)
      low = FALSE;
    join->room_last_out = now;
  }
  /* At the mark, one pad at a time: the next once the last one let go
   * runs (it may keep the level up alone). */
  if (low && join->room_let_go > 0)
    return;
  for (i = 1; i <= n; i++) {
    guint at = (join->room_turn + i) % n;
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, at);

    if (pad->room_wait && !gst_tbq_join_is_full (join, pad, low)) {
      join->room_turn = at;
      locked_let_go (join, pad);
      return;
    }
  }
}

void
gst_tbq_join_locked_wake_room_all (GstTbqJoin * join)
{
  guint i;

  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    if (pad->room_wait)
      locked_let_go (join, pad);
  }
}

void
gst_tbq_join_locked_wake_all (GstTbqJoin * join)
{
  gst_tbq_join_locked_wake_room_all (join);
  JOIN_BROADCAST (join, item_del);
  JOIN_BROADCAST (join, retired);
  gst_tbq_join_locked_kick (join);
}


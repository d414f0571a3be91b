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

void
gst_tbq_join_locked_wake_all (GstTbqJoin * join)
{
  JOIN_BROADCAST (join, item_del);
  JOIN_BROADCAST (join, retired);
  gst_tbq_join_locked_kick (join);
}


/* tbqjoin src side: the src pad task (the libtbq reader and the reorder),
 * the src pad's events, queries and activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threads and locks (gsttbqjoin-private.h): the src task decides under
 * qlock what to push next (a "unit": a pad's sticky events that differ
 * from the src pad's, then one buffer, list or event) and pushes it with
 * qlock released.  Everything below named locked_* runs under qlock, on
 * the src task, or on a thread that stopped it first (a flush, close()).
 *
 * THE ORDER.  The task reads every record there is into its pad's FIFO (a
 * pad bound to the join's pair) or the arrival queue (any other pad), and
 * drops those of an older generation (a flush).  The arrival queue goes
 * first, as it came.  Then, for the next number n, the pair says who has
 * it (gst_tbq_pair_owner_in, of the order's epoch):
 *  - a branch b: b's FIFO is taken from its head: sticky events become
 *    b's (sent before its next output where they differ from the src
 *    pad's), events go out at their place, outputs numbered n go out; n
 *    is resolved by anything of b numbered above n, a done mark for n or
 *    above, EOS, or b's pad gone or at EOS with nothing more to read.  An
 *    empty FIFO otherwise waits (for b's records, woken by them);
 *  - an event for every branch (a slot): the split's copy goes out, and
 *    the copies that come through the branches are dropped (known by
 *    their seqnum: the slots pushed lately and those waiting);
 *  - not handed out yet: wait (whatever the split hands out next reaches
 *    the join as a record: an output, a done mark, a marker, a copy);
 *  - another epoch: the order starts at 0 of the pair's epoch now.
 *  A resolved number frees its room in the split's window
 *  (gst_tbq_pair_resolve_in); one that got no output is a gap.  Before
 *  each step every FIFO's head gives up what does not wait for a turn:
 *  sticky events, done marks and slot copies of numbers already passed,
 *  late outputs (numbered below n: dropped, counted), items of an older
 *  epoch; and a pad that must get on (a serialized query waits on it, or
 *  it is at EOS or released) sends the events at its head.
 *  EOS goes out once every sink pad has EOS, the src side has all their
 *  records and every number handed out is resolved; before it, the
 *  sticky events that came after the last output (the state of the pad
 *  that went out last, where it differs from the src pad's).
 *
 * WAITS.  The task sleeps on the reader (tbq_reader_sleep) with the wait
 * key taken under qlock before it looked: a record published after that,
 * or a tbq_reader_wake() by whoever changed a pad's EOS, release, query
 * or flush state, ends the sleep.
 */
#include "gsttbqjoin-private.h"

typedef enum
{
  STEP_BLOCKED,                 /* nothing to do now: wait */
  STEP_PROGRESS,                /* the order moved: look again */
  STEP_OUTPUT,                  /* something to push */
} JoinStep;

/* What the head of a FIFO does. */
typedef enum
{
  HEAD_TAKEN,                   /* taken and done with: look at the next */
  HEAD_OUTPUT,                  /* taken: something to push */
  HEAD_RESOLVES,                /* the turn's number is resolved */
  HEAD_WAIT,                    /* waits for its turn */
} JoinHead;

/* A unit to push (decided under qlock, pushed without): a pad's sticky
 * events that differ from the src pad's and one item, or an event of
 * the join's own.  The pad's items are retired once the push returned:
 * a serialized query waiting for them must reach downstream after
 * them. */
typedef struct
{
  GQueue objects;
  GstTbqJoinPad *pad;           /* a reference, or NULL */
  guint retire;                 /* items of `pad` in the unit */
} JoinOut;

static void gst_tbq_join_loop (GstPad * pad);

/* ---- sticky events ---- */

/* GStreamer's sticky order. */
static guint
sticky_order (GstEventType type)
{
  if (type == GST_EVENT_INSTANT_RATE_CHANGE)
    return sticky_order (GST_EVENT_SEGMENT) + 1;
  return (guint) type;
}

/* Two sticky events of one kind that replace each other on a pad: the
 * same type, and the same name for custom ones. */
static gboolean
same_slot (GstEvent * a, GstEvent * b)
{
  const GstStructure *sa, *sb;

  if (GST_EVENT_TYPE (a) != GST_EVENT_TYPE (b))
    return FALSE;
  if (GST_EVENT_TYPE (a) != GST_EVENT_CUSTOM_DOWNSTREAM_STICKY)
    return TRUE;
  sa = gst_event_get_structure (a);
  sb = gst_event_get_structure (b);
  return sa != NULL && sb != NULL
      && gst_structure_get_name_id (sa) == gst_structure_get_name_id (sb);
}

void
gst_tbq_join_sticky_store (GPtrArray * sticky, GstEvent * event)
{
  guint i, order = sticky_order (GST_EVENT_TYPE (event));

  for (i = 0; i < sticky->len; i++) {
    GstEvent *e = g_ptr_array_index (sticky, i);

    if (same_slot (e, event)) {
      gst_event_unref (e);
      g_ptr_array_index (sticky, i) = event;
      return;
    }
    if (sticky_order (GST_EVENT_TYPE (e)) > order)
      break;
  }
  g_ptr_array_insert (sticky, i, event);
}

void
gst_tbq_join_sticky_remove (GPtrArray * sticky, GstEventType type)
{
  guint i;

  for (i = sticky->len; i > 0; i--)
    if (GST_EVENT_TYPE (g_ptr_array_index (sticky, i - 1)) == type)
      g_ptr_array_remove_index (sticky, i - 1);
}

static gboolean
field_equal (GQuark field, const GValue * va, gpointer user_data)
{
  const GValue *vb = gst_structure_id_get_value (user_data, field);

  if (vb == NULL || G_VALUE_TYPE (va) != G_VALUE_TYPE (vb))
    return FALSE;
  /* A value GStreamer cannot compare (a boxed pair in a branch event): the
   * same one, or not equal. */
  if (!gst_value_can_compare (va, vb))
    return g_value_peek_pointer (va) == g_value_peek_pointer (vb);
  return gst_value_compare (va, vb) == GST_VALUE_EQUAL;
}

/* gst_structure_is_equal(), without its warning for values that cannot
 * be compared. */
static gboolean
structures_equal (const GstStructure * a, const GstStructure * b)
{
  return gst_structure_get_name_id (a) == gst_structure_get_name_id (b)
      && gst_structure_n_fields (a) == gst_structure_n_fields (b)
      && gst_structure_foreach (a, field_equal, (gpointer) b);
}

static gboolean
events_equal (GstEvent * a, GstEvent * b)
{
  const GstStructure *sa, *sb;

  if (a == b)
    return TRUE;
  if (GST_EVENT_TYPE (a) != GST_EVENT_TYPE (b))
    return FALSE;
  switch (GST_EVENT_TYPE (a)) {
    case GST_EVENT_CAPS:{
      GstCaps *ca, *cb;

      gst_event_parse_caps (a, &ca);
      gst_event_parse_caps (b, &cb);
      return gst_caps_is_equal (ca, cb);
    }
    case GST_EVENT_SEGMENT:{
      const GstSegment *ga, *gb;

      gst_event_parse_segment (a, &ga);
      gst_event_parse_segment (b, &gb);
      return gst_segment_is_equal (ga, gb);
    }
    case GST_EVENT_TAG:{
      GstTagList *ta, *tb;

      gst_event_parse_tag (a, &ta);
      gst_event_parse_tag (b, &tb);
      return gst_tag_list_get_scope (ta) == gst_tag_list_get_scope (tb)
          && gst_tag_list_is_equal (ta, tb);
    }
    default:
      sa = gst_event_get_structure (a);
      sb = gst_event_get_structure (b);
      if (sa == NULL || sb == NULL)
        return sa == sb;
      return structures_equal (sa, sb);
  }
}

/* The src pad's sticky event of `event`'s kind, or NULL (a reference). */
static GstEvent *
src_sticky (GstPad * srcpad, GstEvent * event)
{
  GstEvent *e;
  guint i;

  for (i = 0; (e = gst_pad_get_sticky_event (srcpad, GST_EVENT_TYPE (event),
              i)) != NULL; i++) {
    if (same_slot (e, event))
      return e;
    gst_event_unref (e);
  }
  return NULL;
}

/* Whether `event` is the branch event of the join's pair: consumed here. */
static gboolean
locked_is_own_pair_event (GstTbqJoin * join, GstEvent * event)
{
  GstTbqPair *pair = NULL;
  gboolean own;

  if (join->pair == NULL
      || !gst_tbq_pair_parse_branch_event (event, &pair, NULL, NULL))
    return FALSE;
  own = pair == join->pair;
  gst_tbq_pair_unref (pair);
  return own;
}

/* A sticky event of `pad` came out of its FIFO: the pad's from now on. */
static void
locked_absorb (GstTbqJoin * join, GstTbqJoinPad * pad, GstEvent * event)
{
  if (locked_is_own_pair_event (join, event)) {
    gst_event_unref (event);
    return;
  }
  /* As a pad: a new stream's tags are its own. */
  if (GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START) {
    gst_tbq_join_sticky_remove (pad->sticky, GST_EVENT_TAG);
    pad->new_stream = TRUE;
  }
  gst_tbq_join_sticky_store (pad->sticky, event);
}

/* qlock: the diff's cache is forgotten (its references dropped). */
void
gst_tbq_join_locked_forget_clean (GstTbqJoin * join)
{
  gint i;

  for (i = 0; i < join->clean_len; i++)
    gst_event_unref (join->clean[i]);
  join->clean_len = -1;
}

/* qlock: whether the last diff found nothing to send for the same sticky
 * events of a pad (the very objects) and the same src pad state. */
static gboolean
locked_is_clean (GstTbqJoin * join, GstTbqJoinPad * pad, guint src_gen)
{
  gint i;

  if (join->clean_len != (gint) pad->sticky->len
      || join->clean_src_gen != src_gen)
    return FALSE;
  for (i = 0; i < join->clean_len; i++)
    if (join->clean[i] != g_ptr_array_index (pad->sticky, i))
      return FALSE;
  return TRUE;
}

/* qlock: the diff found nothing to send for `pad`'s sticky events at
 * `src_gen` (more than JOIN_CLEAN_MAX of them: not kept). */
static void
locked_remember_clean (GstTbqJoin * join, GstTbqJoinPad * pad,
    guint src_gen)
{
  guint i;

  gst_tbq_join_locked_forget_clean (join);
  if (pad->sticky->len > JOIN_CLEAN_MAX)
    return;
  for (i = 0; i < pad->sticky->len; i++)
    join->clean[i] = gst_event_ref (g_ptr_array_index (pad->sticky, i));
  join->clean_len = (gint) pad->sticky->len;
  join->clean_src_gen = src_gen;
}

/* Every event the join sends out goes this way (src_gen). */
gboolean
gst_tbq_join_push_src_event (GstTbqJoin * join, GstEvent * event)
{
  gboolean res = gst_pad_push_event (join->srcpad, event);

  /* Release: see src_gen. */
  atomic_fetch_add_explicit (&join->src_gen, 1, memory_order_release);
  return res;
}

/* Before an output or event of `pad`: its sticky events that differ from
 * the src pad's, in sticky order.  After the join's EOS the src pad
 * takes nothing before a STREAM_START: the next stream's goes, even the
 * same as the last (a source that starts over sends the same). */
static void
locked_sticky_diff (GstTbqJoin * join, GstTbqJoinPad * pad, JoinOut * out)
{
  gboolean at_eos = GST_PAD_IS_EOS (join->srcpad);
  /* Acquire, before the src pad's events are looked at: see src_gen. */
  guint src_gen = atomic_load_explicit (&join->src_gen,
      memory_order_acquire), queued = out->objects.length, i;

  /* A buffer after a buffer of the same state, the common case: the src
   * pad's events are not looked at (a lock and a reference each). */
  if (!at_eos && locked_is_clean (join, pad, src_gen))
    return;
  for (i = 0; i < pad->sticky->len; i++) {
    GstEvent *event = g_ptr_array_index (pad->sticky, i);
    GstEvent *cur;
    gboolean same;

    if (locked_is_own_pair_event (join, event))
      continue;
    cur = src_sticky (join->srcpad, event);
    same = cur != NULL && events_equal (cur, event)
        && !(at_eos && GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START);
    if (cur != NULL)
      gst_event_unref (cur);
    if (same)
      continue;
    JOIN_ADD (join->events_out, 1);
    g_queue_push_tail (&out->objects, gst_event_ref (event));
  }
  if (!at_eos && out->objects.length == queued)
    locked_remember_clean (join, pad, src_gen);
}

/* ---- taking items out ---- */

static void
item_free (JoinItem * item)
{
  if (item->object != NULL)
    gst_mini_object_unref (item->object);
  g_free (item);
}

/* Buffers leave the join (pushed, late or dropped): the level drops, and
 * at the low mark a branch waiting at a limit goes on (one per buffer
 * out: gsttbqjoin-private.h). */
static void
locked_count_out (GstTbqJoin * join, GstMiniObject * object)
{
  guint buffers;
  gsize bytes;

  gst_tbq_join_object_size (object, &buffers, &bytes);
  if (buffers == 0)
    return;
  JOIN_ADD (join->out_buffers, buffers);
  JOIN_ADD (join->out_bytes, bytes);
  gst_tbq_join_locked_wake_room (join, TRUE);
}

/* An item leaves the join's hold: its pad's count of queued items lower,
 * and retired now unless it goes out in `out` (then once pushed). */
static void
locked_item_out (GstTbqJoin * join, JoinItem * item, gboolean fifo,
    JoinOut * out)
{
  GstTbqJoinPad *pad = item->pad;

  if (!item->eos)
    pad->pending--;
  if (fifo)
    join->held--;
  if (out == NULL) {
    gst_tbq_join_locked_retire (join, pad, 1);
    return;
  }
  if (out->pad == NULL)
    out->pad = gst_object_ref (pad);
  g_assert (out->pad == pad);
  out->retire++;
}

/* An item is done with, nothing of it pushed. */
static void
locked_item_done (GstTbqJoin * join, JoinItem * item, gboolean fifo)
{
  locked_item_out (join, item, fifo, NULL);
}

/* Drop an item (late, a copy, a mark, EOS). */
static void
locked_drop (GstTbqJoin * join, JoinItem * item, gboolean fifo)
{
  if (item->object != NULL && !GST_IS_EVENT (item->object))
    locked_count_out (join, item->object);
  locked_item_done (join, item, fifo);
  item_free (item);
}

/* A sticky event of `pad` that a flush drops (`object`, taken when TRUE)
 * still becomes the pad's state, as a pad keeps its sticky events
 * through a flush (EOS aside, and the SEGMENT of a pad that flushed: its
 * upstream sends a new one; one that did not flush sends none again):
 * the data after the flush comes after them. */
static gboolean
locked_keep_sticky (GstTbqJoin * join, GstTbqJoinPad * pad,
    GstMiniObject * object)
{
  GstEventType type;

  if (object == NULL || !GST_IS_EVENT (object)
      || !GST_EVENT_IS_STICKY (GST_EVENT_CAST (object)))
    return FALSE;
  type = GST_EVENT_TYPE (object);
  if (type == GST_EVENT_EOS
      || (type == GST_EVENT_SEGMENT && (pad->in_flush || pad->flush_started)))
    return FALSE;
  locked_absorb (join, pad, GST_EVENT_CAST (object));
  return TRUE;
}

/* Drop an item a flush made void: its buffers count as discarded; a
 * sticky event is its pad's still. */
static void
locked_discard (GstTbqJoin * join, JoinItem * item, gboolean fifo)
{
  guint buffers;
  gsize bytes;

  gst_tbq_join_object_size (item->object, &buffers, &bytes);
  JOIN_ADD (join->discarded, buffers);
  if (locked_keep_sticky (join, item->pad, item->object))
    item->object = NULL;
  locked_drop (join, item, fifo);
}

/* An item of `pad` goes out: its sticky events first where they differ. */
static void
locked_emit (GstTbqJoin * join, JoinItem * item, gboolean fifo, JoinOut * out)
{
  GstTbqJoinPad *pad = item->pad;
  GstMiniObject *object = item->object;

  locked_sticky_diff (join, pad, out);
  if (join->last_out != pad)
    gst_object_replace ((GstObject **) & join->last_out, GST_OBJECT (pad));
  if (GST_IS_EVENT (object)) {
    JOIN_ADD (join->events_out, 1);
  } else {
    guint buffers;
    gsize bytes;

    gst_tbq_join_object_size (object, &buffers, &bytes);
    pad->buffers_out += buffers;
    JOIN_ADD (join->pushed_buffers, buffers);
    if (item->rt >= 0)
      JOIN_STORE (pad->srctime, item->rt);
    locked_count_out (join, object);
  }
  item->object = NULL;
  g_queue_push_tail (&out->objects, object);
  locked_item_out (join, item, fifo, out);
  item_free (item);
}

/* ---- reading ---- */

static void
locked_take (GstTbqJoin * join, guint16 type, const JoinRecord * rec)
{
  GstTbqJoinPad *pad = rec->pad;
  JoinItem *item;

  pad->read++;
  if (rec->gen != atomic_load_explicit (&pad->gen, memory_order_relaxed)) {
    /* Written before the pad's FLUSH_START, or during a flush it did not
     * get (gsttbqjoin-sink.c, "FLUSHING AND THE GENERATION"). */
    if (rec->object != NULL && !GST_IS_EVENT (rec->object)) {
      guint buffers;
      gsize bytes;

      gst_tbq_join_object_size (rec->object, &buffers, &bytes);
      JOIN_ADD (join->discarded, buffers);
      locked_count_out (join, rec->object);
    }
    if (!locked_keep_sticky (join, pad, rec->object) && rec->object != NULL)
      gst_mini_object_unref (rec->object);
    gst_tbq_join_locked_retire (join, pad, 1);
    return;
  }
  item = g_new (JoinItem, 1);
  item->type = type;
  item->object = rec->object;
  item->pad = pad;
  item->seq = rec->seq;
  item->epoch = rec->epoch;
  item->rt = rec->rt;
  item->gen = rec->gen;
  item->slot_checked = FALSE;
  item->is_slot = FALSE;
  item->slot = 0;
  item->eos = type == JOIN_REC_EVENT
      && GST_EVENT_TYPE (rec->object) == GST_EVENT_EOS;
  if (!item->eos)
    pad->pending++;
  if (pad->mode == JOIN_PAD_SEQUENCE) {
    guint64 peak = JOIN_LOAD (join->held_peak);

    g_queue_push_tail (&pad->fifo, item);
    join->held++;
    if (join->held > peak)
      JOIN_STORE (join->held_peak, join->held);
  } else if (item->eos) {
    /* Arrival order: the pad's EOS is its flag (set after this record),
     * nothing goes out for it but the join's own EOS. */
    locked_item_done (join, item, FALSE);
    item_free (item);
  } else {
    g_queue_push_tail (&join->arrival, item);
  }
}

static void
locked_read (GstTbqJoin * join)
{
  TbqRecord rec;
  JoinRecord r;

  while (tbq_reader_next (join->reader, &rec) == TBQ_OK) {
    if (rec.size < sizeof r)
      continue;
    memcpy (&r, rec.data, sizeof r);
    locked_take (join, rec.type, &r);
  }
}

/* ---- arrival order ---- */

/* One item of the arrival queue: TRUE when it put something in `out`. */
static gboolean
locked_arrival_item (GstTbqJoin * join, JoinItem * item, JoinOut * out)
{
  GstEvent *event;

  if (item->type == JOIN_REC_DONE) {
    locked_drop (join, item, FALSE);
    return FALSE;
  }
  if (item->type == JOIN_REC_EVENT
      && GST_EVENT_IS_STICKY (event = GST_EVENT_CAST (item->object))) {
    item->object = NULL;
    locked_absorb (join, item->pad, event);
    locked_item_done (join, item, FALSE);
    item_free (item);
    return FALSE;
  }
  locked_emit (join, item, FALSE, out);
  return TRUE;
}

/* ---- the order ---- */

/* Whether an event of a branch is a copy of a slot event (a number the
 * split gave to every branch). */
typedef enum
{
  SLOT_NONE,                    /* no: the worker's own */
  SLOT_COPY,                    /* yes, of the order's epoch, its number */
  SLOT_NOT_YET,                 /* not known yet: the order is behind the
                                 * pair's epoch (a flush restarted the
                                 * numbers and the order has not looked) */
  SLOT_STALE,                   /* yes, of an epoch the order is past */
} JoinSlotKind;

/* The slot of a branch's event: the split's mark on it (the same object
 * as the split's copy), else its seqnum among the slots pushed lately
 * and those waiting (a worker that made a new event). */
static JoinSlotKind
locked_find_slot (GstTbqJoin * join, GstEvent * event, guint64 * seq)
{
  guint32 seqnum = gst_event_get_seqnum (event);
  guint i, n = MIN (join->n_slots, JOIN_SLOT_RING);
  guint64 k, end, pair_id, epoch;

  if (gst_tbq_pair_parse_slot_event (join->pair, event, &pair_id, &epoch, seq)
      && pair_id == join->pair_id) {
    if (epoch == join->epoch)
      return SLOT_COPY;
    return epoch > join->epoch ? SLOT_NOT_YET : SLOT_STALE;
  }
  for (i = 0; i < n; i++) {
    JoinSlot *s = &join->slots[i];

    if (s->seqnum == seqnum && s->epoch == join->epoch) {
      *seq = s->seq;
      return SLOT_COPY;
    }
  }
  end = gst_tbq_pair_assigned (join->pair);
  for (k = join->next; k < end; k++) {
    GstEvent *e = NULL;
    gint owner = gst_tbq_pair_owner_in (join->pair, join->epoch, k, &e);
    gboolean match = e != NULL && gst_event_get_seqnum (e) == seqnum;

    if (e != NULL)
      gst_event_unref (e);
    if (owner == GST_TBQ_PAIR_EVERY_BRANCH && match) {
      *seq = k;
      return SLOT_COPY;
    }
    if (owner == GST_TBQ_PAIR_OTHER_EPOCH)
      return SLOT_NOT_YET;
  }
  return SLOT_NONE;
}

/* Whether `pad` must send the events at its head now rather than at its
 * turn: something waits for them. */
static gboolean
locked_must_get_on (GstTbqJoinPad * pad)
{
  return pad->query_target != 0 || pad->eos || pad->released;
}

/* Whether a FIFO item is a branch's copy of a slot event (the split's
 * goes out at its place), with the slot's number.  The split hands the
 * slot out before it pushes the copies; a sure answer is kept, not one
 * given while the order is behind the pair's epoch. */
static JoinSlotKind
locked_item_slot (GstTbqJoin * join, JoinItem * item, guint64 * seq)
{
  JoinSlotKind kind;

  if (item->slot_checked) {
    *seq = item->slot;
    return item->is_slot ? SLOT_COPY : SLOT_NONE;
  }
  kind = locked_find_slot (join, GST_EVENT_CAST (item->object), &item->slot);
  if (kind == SLOT_COPY || kind == SLOT_NONE) {
    item->slot_checked = TRUE;
    item->is_slot = kind == SLOT_COPY;
  }
  *seq = item->slot;
  return kind;
}

/* The head of `pad`'s FIFO, with `turn`: whether the order's next number
 * is its branch's.  Sticky events are never numbered (they are the pad's
 * state, taken at once); EOS stays at the head, and resolves the pad's
 * turns. */
static gboolean locked_eos_ends (GstTbqJoin * join, GstTbqJoinPad * pad,
    guint64 n);

static JoinHead
locked_head (GstTbqJoin * join, GstTbqJoinPad * pad, gboolean turn,
    JoinOut * out)
{
  JoinItem *item = g_queue_peek_head (&pad->fifo);
  guint64 n = join->next, m = item->seq;
  GstEvent *event = NULL;
  gboolean numbered = item->seq != JOIN_NO_SEQ;

  if (item->type == JOIN_REC_EVENT) {
    event = GST_EVENT_CAST (item->object);
    /* The split's EOS ends the numbers before its place only: the next
     * stream's first items may have theirs already, their outputs
     * behind the branch's new STREAM_START (an encoder holds that until
     * its first frame, so the split's push of it returns at once). */
    if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
      return turn && (!pad->eos || locked_eos_ends (join, pad, n))
          ? HEAD_RESOLVES : HEAD_WAIT;
    if (GST_EVENT_IS_STICKY (event)) {
      g_queue_pop_head (&pad->fifo);
      item->object = NULL;
      locked_absorb (join, pad, event);
      locked_item_done (join, item, TRUE);
      item_free (item);
      return HEAD_TAKEN;
    }
  }
  /* Of a flushed epoch, or of one the order has not seen yet. */
  if (numbered && item->epoch != join->epoch) {
    if (item->epoch > join->epoch)
      return HEAD_WAIT;
    g_queue_pop_head (&pad->fifo);
    locked_discard (join, item, TRUE);
    return HEAD_TAKEN;
  }

  if (event != NULL) {
    guint64 slot = 0;

    /* (The slot's number replaces the item's only for a copy: a worker's
     * own event keeps the number of the push it came in.) */
    switch (locked_item_slot (join, item, &slot)) {
      case SLOT_COPY:
        numbered = TRUE;
        m = slot;
        if (m >= n)
          break;
        /* The split's copy went out. */
        /* fall through */
      case SLOT_STALE:
        g_queue_pop_head (&pad->fifo);
        locked_drop (join, item, TRUE);
        return HEAD_TAKEN;
      case SLOT_NOT_YET:
        return turn ? HEAD_RESOLVES : HEAD_WAIT;
      case SLOT_NONE:
        break;
    }
    if (numbered && (m > n || (m == n && !turn)))
      return turn ? HEAD_RESOLVES : HEAD_WAIT;
    /* The worker's own event, at its place: at the pad's turn, or now
     * when something waits for it (or it is late). */
    if (!numbered && !turn && !locked_must_get_on (pad))
      return HEAD_WAIT;
    g_queue_pop_head (&pad->fifo);
    locked_emit (join, item, TRUE, out);
    return HEAD_OUTPUT;
  }

  if (m < n) {
    g_queue_pop_head (&pad->fifo);
    if (item->type != JOIN_REC_DONE) {
      /* Late: its number went out (as a gap) before it came. */
      guint buffers;
      gsize bytes;

      gst_tbq_join_object_size (item->object, &buffers, &bytes);
      pad->late += buffers;
      JOIN_ADD (join->late, buffers);
      GST_DEBUG_OBJECT (pad, "late: %" G_GUINT64_FORMAT " after %"
          G_GUINT64_FORMAT, m, n);
      if (!join->warned_late)
        join->warn_late_pending = TRUE;
      join->warned_late = TRUE;
    }
    locked_drop (join, item, TRUE);
    return HEAD_TAKEN;
  }
  if (!turn)
    return HEAD_WAIT;
  if (m > n)
    return HEAD_RESOLVES;       /* the branch is past n */
  g_queue_pop_head (&pad->fifo);
  if (item->type == JOIN_REC_DONE) {
    locked_drop (join, item, TRUE);
    return HEAD_RESOLVES;
  }
  join->next_had_output = TRUE;
  locked_emit (join, item, TRUE, out);
  return HEAD_OUTPUT;
}

/* Before each step: every FIFO's head gives up what does not wait for a
 * turn.  TRUE when it put something in `out`. */
static gboolean
locked_clean_heads (GstTbqJoin * join, JoinOut * out)
{
  guint i;

  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    while (!g_queue_is_empty (&pad->fifo)) {
      JoinHead head = locked_head (join, pad, FALSE, out);

      if (head == HEAD_OUTPUT)
        return TRUE;
      if (head != HEAD_TAKEN)
        break;
    }
  }
  return FALSE;
}

/* The order's next number is resolved. */
static void
locked_resolve (GstTbqJoin * join, gboolean branch_owned)
{
  if (branch_owned && !join->next_had_output) {
    JOIN_ADD (join->gaps, 1);
    GST_LOG_OBJECT (join, "gap: %" G_GUINT64_FORMAT, join->next);
  }
  gst_tbq_pair_resolve_in (join->pair, join->epoch, join->next + 1);
  join->next++;
  join->next_had_output = FALSE;
  /* A split's query may wait for the order to pass its place. */
  if (join->place_waits > 0)
    JOIN_BROADCAST (join, retired);
}

/* The pad has nothing more to give, ever (until a new stream). */
static gboolean
locked_pad_spent (GstTbqJoinPad * pad)
{
  return (pad->released || pad->eos) && pad->read == JOIN_LOAD (pad->written);
}

/* Whether the pad's EOS ends number `n` of the order's epoch: the split's
 * EOS ends those before its place (the split numbers the next stream's
 * items before their branch brings the join its STREAM_START). */
static gboolean
locked_eos_ends (GstTbqJoin * join, GstTbqJoinPad * pad, guint64 n)
{
  return pad->eos && (pad->eos_upto == G_MAXUINT64
      || pad->eos_epoch != join->epoch || n < pad->eos_upto);
}

/* The pad has nothing more to give for number `n` of its branch. */
static gboolean
locked_pad_spent_for (GstTbqJoin * join, GstTbqJoinPad * pad, guint64 n)
{
  return (pad->released || locked_eos_ends (join, pad, n))
      && pad->read == JOIN_LOAD (pad->written);
}

/* The split's marker query says the pad's branch is done with number `n`
 * (nothing of it is left to read before the query). */
static gboolean
locked_probe_ends (GstTbqJoin * join, GstTbqJoinPad * pad, guint64 n)
{
  return pad->probe_set && pad->probe_epoch == join->epoch
      && pad->probe_gen == atomic_load_explicit (&pad->gen,
          memory_order_relaxed)
      && pad->read >= pad->probe_target && n <= pad->probe_seq;
}

/* Number `join->next` belongs to `pad`'s branch. */
static JoinStep
locked_branch_step (GstTbqJoin * join, GstTbqJoinPad * pad, JoinOut * out)
{
  for (;;) {
    JoinHead head;

    if (g_queue_is_empty (&pad->fifo)) {
      if (locked_probe_ends (join, pad, join->next)) {
        locked_resolve (join, TRUE);
        return STEP_PROGRESS;
      }
      if (!locked_pad_spent_for (join, pad, join->next))
        return STEP_BLOCKED;
      locked_resolve (join, TRUE);
      return STEP_PROGRESS;
    }
    head = locked_head (join, pad, TRUE, out);
    switch (head) {
      case HEAD_TAKEN:
        continue;
      case HEAD_OUTPUT:
        return STEP_OUTPUT;
      case HEAD_RESOLVES:
        locked_resolve (join, TRUE);
        return STEP_PROGRESS;
      case HEAD_WAIT:
        return STEP_BLOCKED;
    }
  }
}

static void
locked_remember_slot (GstTbqJoin * join, GstEvent * event)
{
  JoinSlot *s = &join->slots[join->n_slots % JOIN_SLOT_RING];

  s->epoch = join->epoch;
  s->seq = join->next;
  s->seqnum = gst_event_get_seqnum (event);
  join->n_slots++;
}

/* A pad a STREAM_START came out of since the join's EOS: the next
 * stream's state, or NULL. */
static GstTbqJoinPad *
locked_pad_of_new_stream (GstTbqJoin * join)
{
  guint i;

  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    if (pad->new_stream && !pad->released)
      return pad;
  }
  return NULL;
}

static JoinStep
locked_order_step (GstTbqJoin * join, JoinOut * out)
{
  GstEvent *event = NULL;
  GstTbqJoinPad *pad = NULL;
  gint owner;

  owner = gst_tbq_pair_owner_in (join->pair, join->epoch, join->next,
      &event);
  switch (owner) {
    case GST_TBQ_PAIR_OTHER_EPOCH:
      /* A flush restarted the numbers. */
      join->epoch = gst_tbq_pair_epoch (join->pair);
      join->next = 0;
      join->next_had_output = FALSE;
      if (join->place_waits > 0)
        JOIN_BROADCAST (join, retired);
      GST_DEBUG_OBJECT (join, "the order starts at 0 of epoch %"
          G_GUINT64_FORMAT, join->epoch);
      return STEP_PROGRESS;
    case GST_TBQ_PAIR_RESOLVED:
      /* Behind the pair (a flush of the join alone restarted the order
       * at 0 of an epoch that went on): on to its first unresolved. */
      join->next = MAX (join->next + 1, gst_tbq_pair_resolved (join->pair));
      join->next_had_output = FALSE;
      if (join->place_waits > 0)
        JOIN_BROADCAST (join, retired);
      return STEP_PROGRESS;
    case GST_TBQ_PAIR_NOT_ASSIGNED:
      return STEP_BLOCKED;
    case GST_TBQ_PAIR_EVERY_BRANCH:
      if (GST_PAD_IS_EOS (join->srcpad)) {
        /* Between two streams downstream takes no event before the next
         * STREAM_START, which every branch brings before its copy of
         * this one: it goes first, as a pad that has it has it. */
        if ((pad = locked_pad_of_new_stream (join)) == NULL) {
          gst_event_unref (event);
          return STEP_BLOCKED;
        }
        locked_sticky_diff (join, pad, out);
      }
      locked_remember_slot (join, event);
      JOIN_ADD (join->events_out, 1);
      g_queue_push_tail (&out->objects, event);
      locked_resolve (join, FALSE);
      return STEP_OUTPUT;
    default:
      break;
  }
  if ((guint) owner < join->by_branch->len)
    pad = g_ptr_array_index (join->by_branch, owner);
  if (pad != NULL)
    return locked_branch_step (join, pad, out);
  if (!g_hash_table_contains (join->released, GINT_TO_POINTER (owner)))
    return STEP_BLOCKED;        /* its pad has sent nothing yet */
  /* Its pad is gone: whatever it had is a gap. */
  locked_resolve (join, TRUE);
  return STEP_PROGRESS;
}

/* ---- released pads and EOS ---- */

/* Released pads whose records the src side has all and sent: forgotten
 * (their branch's numbers are gaps from now on: TRUE when there is such
 * a branch, the order may go on).  A pad released before anything of its
 * branch came knows its branch from the split's bind query. */
static gboolean
locked_forget_released (GstTbqJoin * join)
{
  gboolean gaps = FALSE;
  guint i;

  for (i = join->pads->len; i > 0; i--) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i - 1);
    JoinItem *item;

    if (!pad->released || pad->pending > 0 || !locked_pad_spent (pad))
      continue;
    while ((item = g_queue_pop_head (&pad->fifo)) != NULL)
      locked_drop (join, item, TRUE);
    if (pad->mode == JOIN_PAD_SEQUENCE) {
      if (pad->branch < join->by_branch->len
          && g_ptr_array_index (join->by_branch, pad->branch) == pad)
        g_ptr_array_index (join->by_branch, pad->branch) = NULL;
      g_hash_table_add (join->released, GUINT_TO_POINTER (pad->branch));
      gaps = TRUE;
    } else if (pad->released_branch >= 0) {
      g_hash_table_add (join->released,
          GUINT_TO_POINTER ((guint) pad->released_branch));
      gaps = TRUE;
    }
    join->released_in += JOIN_LOAD (pad->buffers_in);
    GST_DEBUG_OBJECT (join, "%s:%s released and done with",
        GST_DEBUG_PAD_NAME (pad));
    g_ptr_array_remove_index (join->pads, i - 1);
  }
  return gaps;
}

/* Whether EOS goes out now. */
static gboolean
locked_all_eos (GstTbqJoin * join)
{
  guint64 upto = G_MAXUINT64;
  guint i, n = 0;

  if (join->eos_sent)
    return FALSE;
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    if (pad->released)
      continue;
    if (!pad->eos || pad->pending > 0 || !locked_pad_spent (pad))
      return FALSE;
    /* A branch of the split whose EOS went out already, with no new
     * stream yet on it: its split queued the next stream (STREAM_START
     * and EOS) to it, and gives the branch that when it takes work or at
     * that EOS; until then it is not at the next stream's EOS. */
    if (pad->mode == JOIN_PAD_SEQUENCE && pad->eos_count != join->eos_count)
      return FALSE;
    if (pad->eos_epoch == join->epoch)
      upto = MIN (upto, pad->eos_upto);
    n++;
  }
  if (n == 0)
    return FALSE;
  if (join->pair == NULL)
    return TRUE;
  /* Every number the EOS ends is resolved (the split's EOS has its
   * place), or every number handed out. */
  if (upto != G_MAXUINT64)
    return join->next >= upto;
  return gst_tbq_pair_owner_in (join->pair, join->epoch, join->next, NULL)
      == GST_TBQ_PAIR_NOT_ASSIGNED;
}

/* The pad whose sticky state goes out before EOS: the one whose item
 * went out last, or (released, or none went out) the first one there. */
static GstTbqJoinPad *
locked_eos_state_pad (GstTbqJoin * join)
{
  guint i;

  if (join->last_out != NULL && !join->last_out->released)
    return join->last_out;
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    if (!pad->released)
      return pad;
  }
  return NULL;
}

/* The join's EOS goes out now (whichever thread sends it): counted, and a
 * new stream waiting behind a pad's EOS goes on (sink side). */
static void
locked_eos_goes_out (GstTbqJoin * join)
{
  join->eos_sent = TRUE;
  join->eos_count++;
  JOIN_BROADCAST (join, item_del);
}

static void
locked_send_eos (GstTbqJoin * join, JoinOut * out)
{
  GstTbqJoinPad *state;
  GstEvent *eos = NULL;
  guint i;

  /* Sticky events that came after the last output (the tags a demuxer
   * finds at the end of a file, a last segment or caps) go out before
   * EOS, as a pad sends its sticky events before EOS: a pad's state
   * where it differs from the src pad's.  In sequence order every
   * branch has the stream's last state by its EOS (the split gives each
   * branch its sticky events before EOS); in arrival order, the state of
   * the stream that went out last. */
  state = locked_eos_state_pad (join);
  if (state != NULL)
    locked_sticky_diff (join, state, out);
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);
    JoinItem *item;

    while ((item = g_queue_pop_head (&pad->fifo)) != NULL) {
      /* Only EOS is left: the last one goes out (its seqnum). */
      if (GST_IS_EVENT (item->object)
          && GST_EVENT_TYPE (item->object) == GST_EVENT_EOS) {
        gst_clear_event (&eos);
        eos = GST_EVENT_CAST (gst_mini_object_ref (item->object));
      }
      locked_drop (join, item, TRUE);
    }
  }
  if (eos == NULL)
    eos = gst_event_new_eos ();
  locked_eos_goes_out (join);
  for (i = 0; i < join->pads->len; i++)
    ((GstTbqJoinPad *) g_ptr_array_index (join->pads, i))->new_stream = FALSE;
  JOIN_ADD (join->events_out, 1);
  GST_DEBUG_OBJECT (join, "every sink pad is at EOS: EOS");
  g_queue_push_tail (&out->objects, eos);
}

/* ---- the task ---- */

/* What to push next, into `out`: FALSE when nothing (wait). */
static gboolean
locked_collect (GstTbqJoin * join, JoinOut * out)
{
  JoinItem *item;

  locked_read (join);
  while ((item = g_queue_pop_head (&join->arrival)) != NULL)
    if (locked_arrival_item (join, item, out))
      return TRUE;
  /* A branch forgotten: its numbers are gaps now, the order may go on. */
  do {
    while (join->pair != NULL) {
      JoinStep step;

      if (locked_clean_heads (join, out))
        return TRUE;
      step = locked_order_step (join, out);
      if (step == STEP_OUTPUT)
        return TRUE;
      if (step == STEP_BLOCKED)
        break;
    }
  } while (locked_forget_released (join));
  if (locked_all_eos (join)) {
    locked_send_eos (join, out);
    return TRUE;
  }
  return FALSE;
}

/* The order starts again at number 0 of the pair's epoch, with nothing
 * sent yet. */
static void
locked_restart_order (GstTbqJoin * join)
{
  guint i;

  join->next = 0;
  join->next_had_output = FALSE;
  join->n_slots = 0;
  gst_clear_object (&join->last_out);
  gst_tbq_join_locked_forget_clean (join);
  if (join->pair != NULL)
    join->epoch = gst_tbq_pair_epoch (join->pair);
  for (i = 0; i < join->pads->len; i++)
    gst_tbq_join_pad_forget_times (g_ptr_array_index (join->pads, i), FALSE);
}

void
gst_tbq_join_locked_clear_src (GstTbqJoin * join)
{
  JoinItem *item;
  guint i;

  while ((item = g_queue_pop_head (&join->arrival)) != NULL)
    locked_discard (join, item, FALSE);
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    while ((item = g_queue_pop_head (&pad->fifo)) != NULL)
      locked_discard (join, item, TRUE);
  }
  locked_restart_order (join);
}

/* Whether an item stays through a flush: one its pad wrote after its own
 * FLUSH_STOP in this flush (a pad of the flush, and of the generation
 * that pad's last FLUSH_START made).  Anything else was written before
 * its pad's FLUSH_START, or by a pad that did not flush during the flush:
 * void. */
static gboolean
locked_survives_flush (JoinItem * item)
{
  return item->pad->in_flush && !item->pad->flush_started
      && item->gen == atomic_load_explicit (&item->pad->gen,
      memory_order_relaxed);
}

/* Items read while a flush goes on are of two kinds (gsttbqjoin-sink.c,
 * "FLUSHING AND THE GENERATION"): void ones, dropped here (their buffers
 * back to their pools, their sticky events their pads' state but for the
 * SEGMENT of a pad of the flush: locked_keep_sticky), and those a
 * producer wrote after its own FLUSH_STOP while another pad was still
 * flushing (in arrival order, a producer that flushed alone; its new
 * SEGMENT among them), which stay in their place and go out when the
 * task runs again.  Both ends of a flush come here: at its beginning
 * the task may have read for a moment (until its push found the src pad
 * flushing), and the first pad's FLUSH_START may have waited for the
 * task while other pads flushed and went on. */
/* Drop the items of `queue` (a pad's FIFO when `fifo`, else the arrival
 * queue) that do not survive the flush; the others stay, in order. */
static void
locked_drop_void (GstTbqJoin * join, GQueue * queue, gboolean fifo)
{
  GQueue keep = G_QUEUE_INIT;
  JoinItem *item;

  while ((item = g_queue_pop_head (queue)) != NULL) {
    if (locked_survives_flush (item))
      g_queue_push_tail (&keep, item);
    else
      locked_discard (join, item, fifo);
  }
  *queue = keep;
}

void
gst_tbq_join_locked_flush_drop (GstTbqJoin * join)
{
  guint i;

  if (join->reader != NULL)
    locked_read (join);
  locked_drop_void (join, &join->arrival, FALSE);
  for (i = 0; i < join->pads->len; i++)
    locked_drop_void (join,
        &((GstTbqJoinPad *) g_ptr_array_index (join->pads, i))->fifo, TRUE);
  locked_restart_order (join);
}

/* Push a unit (qlock released): the first flow that is not OK.  Its
 * pad's items are retired after (qlock taken again). */
static GstFlowReturn
push_out (GstTbqJoin * join, JoinOut * out)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstMiniObject *object;

  while ((object = g_queue_pop_head (&out->objects)) != NULL) {
    if (ret != GST_FLOW_OK) {
      gst_mini_object_unref (object);
      continue;
    }
    if (GST_IS_BUFFER (object)) {
      ret = gst_pad_push (join->srcpad, GST_BUFFER_CAST (object));
    } else if (GST_IS_BUFFER_LIST (object)) {
      ret = gst_pad_push_list (join->srcpad, GST_BUFFER_LIST_CAST (object));
    } else {
      GstEvent *event = GST_EVENT_CAST (object);

      GST_LOG_OBJECT (join, "pushing %" GST_PTR_FORMAT, event);
      if (!gst_tbq_join_push_src_event (join, event))
        GST_DEBUG_OBJECT (join, "an event was not taken downstream");
    }
  }
  if (out->pad != NULL) {
    JOIN_LOCK (join);
    gst_tbq_join_locked_retire (join, out->pad, out->retire);
    JOIN_UNLOCK (join);
    gst_object_unref (out->pad);
    out->pad = NULL;
    out->retire = 0;
  }
  return ret;
}

/* qlock: downstream returned `ret` (not OK): it goes upstream to every
 * branch, and the task pauses.  Once every sink pad has EOS (now or
 * later, gst_tbq_join_locked_eos_after_flow()), the EOS goes on, as
 * queue's does after the data it drops, after the flow error posted for
 * NOT_LINKED or an error (nobody upstream posts it once it sent EOS).  A
 * branch learns the flow when it pushes: every number handed out is
 * resolved and the pair's window opens, so that a branch that waits for
 * room pushes again (with a full window none would ever push, and the
 * split would wait for ever; a worker that queues returns OK for what it
 * then drops, and those numbers would never be resolved). */
static void
locked_push_failed (GstTbqJoin * join, GstFlowReturn ret)
{
  if (JOIN_FLOW (join) != GST_FLOW_OK || join->flushing)
    return;
  GST_DEBUG_OBJECT (join, "downstream returned %s", gst_flow_get_name (ret));
  JOIN_STORE (join->srcresult, ret);
  gst_tbq_join_locked_wake_room_all (join);
  JOIN_BROADCAST (join, item_del);
  JOIN_BROADCAST (join, retired);
  if (join->pair != NULL) {
    gst_tbq_pair_resolve_in (join->pair, join->epoch,
        gst_tbq_pair_assigned (join->pair));
    gst_tbq_pair_set_open (join->pair, TRUE);
  }
  if (gst_tbq_join_locked_eos_after_flow (join)) {
    JOIN_UNLOCK (join);
    gst_tbq_join_send_eos_after_flow (join, gst_event_new_eos ());
    JOIN_LOCK (join);
  }
}

/* JOIN_LOCK: whether the EOS goes downstream now, from the thread that
 * asks (queue's way after downstream's flow stopped its task: it drops
 * the data, and the EOS still goes on): downstream's EOS, NOT_LINKED or
 * error stopped the src task, every sink pad has EOS, and none went out
 * yet (exactly one thread gets TRUE). */
gboolean
gst_tbq_join_locked_eos_after_flow (GstTbqJoin * join)
{
  GstFlowReturn ret = JOIN_FLOW (join);
  guint i;

  if (ret == GST_FLOW_OK || ret == GST_FLOW_FLUSHING || join->flushing
      || join->eos_sent)
    return FALSE;
  for (i = 0; i < join->pads->len; i++)
    if (!((GstTbqJoinPad *) g_ptr_array_index (join->pads, i))->eos)
      return FALSE;
  locked_eos_goes_out (join);
  return TRUE;
}

/* No lock: send `event` (an EOS) on after downstream's flow stopped the src
 * task; NOT_LINKED and errors are posted first, as upstream, which got the
 * flow, posts nothing once it sent EOS. */
void
gst_tbq_join_send_eos_after_flow (GstTbqJoin * join, GstEvent * event)
{
  GstFlowReturn ret = JOIN_FLOW (join);

  GST_DEBUG_OBJECT (join, "every sink pad is EOS after downstream returned "
      "%s: EOS goes on", gst_flow_get_name (ret));
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)
    GST_ELEMENT_FLOW_ERROR (join, ret);
  gst_tbq_join_push_src_event (join, event);
}

static void
gst_tbq_join_loop (GstPad * srcpad)
{
  GstTbqJoin *join = GST_TBQ_JOIN (GST_PAD_PARENT (srcpad));
  JoinOut out = { G_QUEUE_INIT, NULL, 0 };
  gboolean collected, warn_late;
  TbqReader *reader;
  GstFlowReturn ret;
  guint32 key;

  JOIN_LOCK (join);
  if (join->flushing || JOIN_FLOW (join) != GST_FLOW_OK
      || join->reader == NULL)
    goto pause;
  key = tbq_reader_prepare_wait (join->reader);
  collected = locked_collect (join, &out);
  warn_late = join->warn_late_pending;
  join->warn_late_pending = FALSE;
  reader = join->reader;
  JOIN_UNLOCK (join);
  if (warn_late)
    gst_tbq_join_warn (join, "An output came after its place in the order "
        "and was dropped (a worker that sends an input's result after the "
        "split's marker or done mark for it): the stats count them as "
        "late");
  if (!collected) {
    GST_LOG_OBJECT (join, "waiting");
    tbq_reader_sleep (reader, key, -1);
    return;
  }
  ret = push_out (join, &out);
  if (ret == GST_FLOW_OK)
    return;
  JOIN_LOCK (join);
  locked_push_failed (join, ret);
  if (JOIN_FLOW (join) == GST_FLOW_OK && !join->flushing) {
    JOIN_UNLOCK (join);
    return;
  }
pause:
  GST_DEBUG_OBJECT (join, "pausing the src task: %s%s",
      gst_flow_get_name (JOIN_FLOW (join)), join->flushing ? " (flush)" : "");
  gst_pad_pause_task (srcpad);
  JOIN_UNLOCK (join);
}

void
gst_tbq_join_locked_start_task (GstTbqJoin * join)
{
  if (join->flushing || JOIN_FLOW (join) != GST_FLOW_OK || join->q == NULL)
    return;
  gst_pad_start_task (join->srcpad, (GstTaskFunction) gst_tbq_join_loop,
      join->srcpad, NULL);
}

void
gst_tbq_join_pause_task (GstTbqJoin * join)
{
  JOIN_LOCK (join);
  gst_tbq_join_locked_kick (join);
  JOIN_UNLOCK (join);
  gst_pad_pause_task (join->srcpad);
}

/* ---- the src pad ---- */

static gboolean
gst_tbq_join_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbqJoin *join = GST_TBQ_JOIN (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  JOIN_LOCK (join);
  /* A pad that is deactivated forgets its sticky events (GstPad, after
   * this function): the diff looks at them again from the next
   * activation (the src task starts below). */
  atomic_fetch_add_explicit (&join->src_gen, 1, memory_order_release);
  JOIN_STORE (join->srcresult, active ? GST_FLOW_OK : GST_FLOW_FLUSHING);
  if (active && join->pair != NULL)
    gst_tbq_pair_set_open (join->pair, FALSE);
  if (active) {
    gst_tbq_join_locked_start_task (join);
    JOIN_UNLOCK (join);
    return TRUE;
  }
  gst_tbq_join_locked_wake_all (join);
  JOIN_UNLOCK (join);
  return gst_pad_stop_task (pad);
}

/* Latency as funnel answers it (the default: every sink pad's upstream,
 * live if one is, the most of the minimums); in arrival order the limits
 * add as queue's do. */
static gboolean
gst_tbq_join_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbqJoin *join = GST_TBQ_JOIN (parent);
  gboolean res = gst_pad_query_default (pad, parent, query), live, arrival;
  GstClockTime min, max;
  guint64 limit;

  if (!res || GST_QUERY_TYPE (query) != GST_QUERY_LATENCY)
    return res;
  JOIN_LOCK (join);
  arrival = join->pair == NULL
      || join->active_order == GST_TBQ_JOIN_ORDER_ARRIVAL;
  JOIN_UNLOCK (join);
  if (!arrival)
    return res;
  gst_query_parse_latency (query, &live, &min, &max);
  limit = JOIN_LOAD (join->max_time);
  if (limit == 0)
    max = GST_CLOCK_TIME_NONE;
  else if (GST_CLOCK_TIME_IS_VALID (max))
    max += limit;
  gst_query_set_latency (query, live, min, max);
  return res;
}

void
gst_tbq_join_src_set_functions (GstPad * pad)
{
  gst_pad_set_activatemode_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbq_join_src_activate_mode));
  gst_pad_set_query_function (pad, GST_DEBUG_FUNCPTR (gst_tbq_join_src_query));
  /* Upstream events go to every sink pad (the default): the split sends
   * each seqnum upstream once.  CAPS as funnel answers: the caps set, or
   * the template's. */
  gst_pad_use_fixed_caps (pad);
}

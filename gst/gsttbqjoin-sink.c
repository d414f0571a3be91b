/* tbqjoin sink side: the sink pads' chain, event, query and activation
 * functions, how an output gets its number, and the pair's done hook.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threads and locks (gsttbqjoin-private.h): a pad's streaming thread holds
 * its stream lock and owns the pad's writer and the pad's sink-side
 * fields; the done hook takes the same stream lock on the split's branch
 * thread.  A buffer takes no lock another branch takes: it writes one
 * record into its pad's writer (qlock only in arrival order at a limit,
 * and once per pad when its binding is decided).
 *
 * BINDING.  A split asks each branch, before it pushes anything there,
 * which join closes it (the pair's bind query, gsttbqpair.h): the sink
 * pad the query comes in by, with no other split crossed on its way,
 * takes that (pair, branch) as its candidate and answers (with
 * `order=sequence`), before anything of that branch arrives; a query of
 * an outer pair goes on downstream.  Without one, a sink pad remembers
 * the deepest pair branch event it got
 * (gst_tbq_pair_parse_branch_event).  Its first item that is not a sticky
 * event (sticky events come before data) decides what it is, once, under
 * qlock: bound to the join's pair (SEQUENCE; the first pad to decide binds
 * the join to its pair: gst_tbq_pair_bind), or in arrival order (the join
 * asks for arrival order, the pad saw no pair, or another one).
 *
 * NUMBERS (pads bound to a pair; the pair's header has the reasoning):
 *  - inside the split's push of s on the pad's branch
 *    (gst_tbq_pair_current): s, whatever metas the worker kept, and the
 *    branch is synchronous; but an output whose meta names an earlier
 *    number m of this epoch (a worker with a delay, outputting the last
 *    input's result while it takes the next) makes the branch not
 *    synchronous and goes out as m while nothing of this branch has
 *    resolved m yet (no higher number, no done mark for m: the pad knows
 *    it from what it wrote), else as s (at s's place rather than dropped
 *    as late);
 *  - elsewhere: the GstTbqSeqMeta of the pair (not synchronous);
 *  - with neither (a worker with a thread of its own that strips metas):
 *    the next number the split gave this branch (gst_tbq_pair_owner) that
 *    no output took yet and that no done mark passed, one output per
 *    input, said once in a warning.
 *  Events get the number of the push they arrive in, or none.
 *
 * FLUSHING AND THE GENERATION.  A flush drops what each pad received
 * before its own FLUSH_START, without a discard (another branch may be
 * writing): every FLUSH_START bumps the join's generation (`gen`) and
 * gives the new one to its pad; a pad that gets none during a flush (from
 * the first pad's FLUSH_START to the last pad's FLUSH_STOP) takes the
 * join's when the flush ends.  Every record carries its pad's generation,
 * read before the pad's `flushing` is checked, and the src side drops a
 * record whose generation is not its pad's now.  FLUSH_START sets
 * `flushing` before the pad's `gen`, both seq_cst.  So a record written
 * past the check either saw `flushing` FALSE and the pad's old generation
 * (it came before the pad's FLUSH_START: dropped when read), or was
 * written after the pad's FLUSH_STOP, with the new one, and stays, even
 * when other pads are still flushing: a producer that flushed alone in
 * arrival order goes on with its new SEGMENT and data as soon as it
 * stopped flushing (its data goes out once the flush ends).  One
 * generation for the whole flush would not do: the split sends
 * FLUSH_START down one branch after the other, and one producer may
 * flush twice while another flushes once.
 */
#include "gsttbqjoin-private.h"

#include <errno.h>
#include <time.h>

/* ---- writing ---- */

static gboolean
pad_flushing (GstTbqJoinPad * pad)
{
  return atomic_load_explicit (&pad->flushing, memory_order_seq_cst);
}

/* The generation a record of `pad` about to be written carries: read
 * before the pad's flushing is checked (see the top of the file). */
static guint
pad_gen (GstTbqJoinPad * pad)
{
  return atomic_load_explicit (&pad->gen, memory_order_seq_cst);
}

/* What the pad returns now besides what a write says. */
static GstFlowReturn
sink_flow (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  if (pad_flushing (pad))
    return GST_FLOW_FLUSHING;
  return JOIN_FLOW (join);
}

/* Stream lock: write one record into the pad's writer.  The record takes
 * `object` only on GST_FLOW_OK.  `quiet`: inside the split's push of the
 * pad's branch, whose end comes next on this thread: the record is
 * published without waking the src task, and the push's end wakes it
 * (the done mark's record, or a kick: gst_tbq_pair_owe_wake), one
 * wake-up for both records. */
static GstFlowReturn
sink_write_full (GstTbqJoin * join, GstTbqJoinPad * pad, guint16 type,
    GstMiniObject * object, guint64 seq, guint64 epoch, gint64 rt, guint gen,
    gboolean quiet)
{
  JoinRecord rec = { object, pad, seq, epoch, rt, gen };
  GstFlowReturn ret;
  TbqStatus st;

  if (pad->writer == NULL)
    return GST_FLOW_FLUSHING;
  /* Counted before it is published (the src side never reads more than
   * `written`), counted back below if it is not. */
  JOIN_ADD (pad->written, 1);
  for (;;) {
    if (quiet) {
      tbq_writer_set_publish (pad->writer, TBQ_PUBLISH_AT_HANDOFF, 0);
      st = tbq_writer_write (pad->writer, type, &rec, sizeof rec);
      tbq_writer_set_publish (pad->writer, TBQ_PUBLISH_EVERY_RECORD, 0);
      if (st == TBQ_OK) {
        /* Owed before it is visible: the src task may take it at once,
         * and the push's end wakes it for nothing then. */
        gst_tbq_pair_owe_wake ();
        tbq_writer_publish (pad->writer);
      }
    } else {
      st = tbq_writer_write (pad->writer, type, &rec, sizeof rec);
    }
    if (st == TBQ_OK)
      return GST_FLOW_OK;
    ret = sink_flow (join, pad);
    /* A full source pool: the copy task gives blocks back as the src task
     * reads; the wait is short, and looks at the flow each time. */
    if (ret == GST_FLOW_OK && st == TBQ_TIMEOUT)
      continue;
    if (ret == GST_FLOW_OK) {
      if (st == TBQ_INTERRUPTED)
        ret = GST_FLOW_FLUSHING;        /* close() on its way */
      else {
        GST_ELEMENT_ERROR (join, RESOURCE, NO_SPACE_LEFT,
            ("Cannot queue data: %s", tbq_status_to_string (st)), (NULL));
        ret = GST_FLOW_ERROR;
      }
    }
    break;
  }
  JOIN_ADD (pad->written, -1);
  /* The src task may wait for the record it was told of. */
  JOIN_LOCK (join);
  gst_tbq_join_locked_kick (join);
  JOIN_UNLOCK (join);
  return ret;
}

static GstFlowReturn
sink_write (GstTbqJoin * join, GstTbqJoinPad * pad, guint16 type,
    GstMiniObject * object, guint64 seq, guint64 epoch, gint64 rt, guint gen)
{
  return sink_write_full (join, pad, type, object, seq, epoch, rt, gen,
      FALSE);
}

/* ---- binding ---- */

static void
sink_bind (GstTbqJoin * join, GstTbqJoinPad * pad, GstTbqPair * pair)
{
  GstTbqPair *old = pad->pair;

  pad->mode = JOIN_PAD_SEQUENCE;
  pad->branch = pad->cand_branch;
  pad->pair = gst_tbq_pair_ref (pair);
  /* (The pad's own pair again, after a stop: sink_decide.) */
  if (old != NULL)
    gst_tbq_pair_unref (old);
  if (join->by_branch->len <= pad->branch)
    g_ptr_array_set_size (join->by_branch, pad->branch + 1);
  g_ptr_array_index (join->by_branch, pad->branch) = pad;
  g_hash_table_remove (join->released, GUINT_TO_POINTER (pad->branch));
}

/* qlock: bind the join to `pair` (it has none): FALSE when another join
 * closes that pair's branches. */
static gboolean
locked_bind_pair (GstTbqJoin * join, GstTbqPair * pair)
{
  if (!gst_tbq_pair_bind (pair, join, gst_tbq_join_done))
    return FALSE;
  join->pair = gst_tbq_pair_ref (pair);
  /* (The pair's own branch events are left out of the diff.) */
  gst_tbq_join_locked_forget_clean (join);
  join->pair_id = gst_tbq_pair_id (join->pair);
  join->epoch = gst_tbq_pair_epoch (join->pair);
  join->next = 0;
  return TRUE;
}

/* Stream lock: the warning that a pad in sequence order saw no split, at
 * its first data (a pad that only ever passes events, a branch released
 * before it asked for its join, has nothing to order). */
static void
sink_warn_no_pair (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  gchar *warning = NULL;

  JOIN_LOCK (join);
  pad->warn_no_pair = FALSE;
  if (!join->warned_no_pair)
    warning = g_strdup_printf ("%s saw no tbqsplit upstream: what it "
        "receives goes out in arrival order", GST_PAD_NAME (pad));
  join->warned_no_pair = TRUE;
  JOIN_UNLOCK (join);
  if (warning != NULL) {
    gst_tbq_join_warn (join, warning);
    g_free (warning);
  }
}

/* Stream lock: decide, at the pad's first item that is not a sticky event
 * (`on_data`: data), how its records are ordered (see BINDING).  Not on
 * a flushing pad: nothing of it is kept, and a pad of a stopped join
 * keeps its pair until it is active again (a serialized query still
 * reaches it: the split's marker query, its branch task stopping after
 * the join; binding then would bind the stopped join to the pair and
 * take the pad's reference twice).  The pad decides at its next item. */
static void
sink_decide (GstTbqJoin * join, GstTbqJoinPad * pad, gboolean on_data)
{
  gchar *warning = NULL;
  GstTbqJoinPad *other;

  if (pad_flushing (pad))
    return;
  JOIN_LOCK (join);
  if (join->active_order == GST_TBQ_JOIN_ORDER_ARRIVAL) {
    pad->mode = JOIN_PAD_ARRIVAL;
  } else if (pad->cand_pair == NULL) {
    pad->mode = JOIN_PAD_ARRIVAL;
    pad->warn_no_pair = TRUE;
  } else if (join->pair == NULL && !locked_bind_pair (join, pad->cand_pair)) {
    pad->mode = JOIN_PAD_ARRIVAL;
    warning = g_strdup_printf ("%s: another tbqjoin closes the branches "
        "of its tbqsplit: what it receives goes out in arrival order",
        GST_PAD_NAME (pad));
  } else if (pad->cand_pair != join->pair) {
    pad->mode = JOIN_PAD_ARRIVAL;
    warning = g_strdup_printf ("%s comes from another tbqsplit than the "
        "other sink pads: what it receives goes out in arrival order",
        GST_PAD_NAME (pad));
  } else if (pad->cand_branch < join->by_branch->len
      && (other = g_ptr_array_index (join->by_branch, pad->cand_branch))
      != NULL && other != pad && !other->released) {
    pad->mode = JOIN_PAD_ARRIVAL;
    warning = g_strdup_printf ("%s and %s both come from branch %u of the "
        "tbqsplit: %s goes out in arrival order", GST_PAD_NAME (other),
        GST_PAD_NAME (pad), pad->cand_branch, GST_PAD_NAME (pad));
  } else {
    sink_bind (join, pad, join->pair);
  }
  JOIN_UNLOCK (join);
  GST_DEBUG_OBJECT (pad, "in %s order%s", pad->mode == JOIN_PAD_SEQUENCE
      ? "the split's" : "arrival", pad->mode == JOIN_PAD_SEQUENCE
      ? "" : " (no pair of this join)");
  if (warning != NULL) {
    gst_tbq_join_warn (join, warning);
    g_free (warning);
  }
  if (on_data && pad->warn_no_pair)
    sink_warn_no_pair (join, pad);
}

/* Stream lock: a pair's branch event came: the deepest so far is the
 * pad's candidate. */
static void
sink_note_branch_event (GstTbqJoinPad * pad, GstEvent * event)
{
  GstTbqPair *pair = NULL;
  guint branch, depth;

  if (!gst_tbq_pair_parse_branch_event (event, &pair, &branch, &depth))
    return;
  if (pad->cand_pair == NULL || depth > pad->cand_depth
      || pair == pad->cand_pair) {
    if (pad->cand_pair != NULL)
      gst_tbq_pair_unref (pad->cand_pair);
    pad->cand_pair = pair;
    pad->cand_branch = branch;
    pad->cand_depth = depth;
    return;
  }
  gst_tbq_pair_unref (pair);
}

/* Stream lock: the pair's bind query named this pad's (pair, branch):
 * the candidate, over any branch event (the query is the split's own
 * word).  Takes `pair`. */
static void
sink_note_bind_query (GstTbqJoinPad * pad, GstTbqPair * pair, guint branch)
{
  if (pad->cand_pair != NULL)
    gst_tbq_pair_unref (pad->cand_pair);
  pad->cand_pair = pair;
  pad->cand_branch = branch;
  pad->cand_depth = G_MAXUINT;
}

/* The pair's bind query (gsttbqpair.h): ours when no other split was
 * crossed on its way, else it goes on downstream. */
static gboolean
sink_bind_query (GstTbqJoin * join, GstTbqJoinPad * pad, GstQuery * query)
{
  GstTbqPair *pair = NULL;
  guint branch, crossed;
  gboolean res, sequence;

  gst_tbq_pair_parse_bind_query (query, &pair, &branch, &crossed);
  if (crossed > 0) {
    gst_tbq_pair_unref (pair);
    gst_tbq_pair_bind_query_cross (query, -1);
    res = gst_pad_peer_query (join->srcpad, query);
    gst_tbq_pair_bind_query_cross (query, 1);
    return res;
  }
  GST_OBJECT_LOCK (join);
  sequence = join->order == GST_TBQ_JOIN_ORDER_SEQUENCE;
  GST_OBJECT_UNLOCK (join);
  /* In arrival order nobody would resolve the split's numbers: no. */
  if (!sequence) {
    gst_tbq_pair_unref (pair);
    return FALSE;
  }
  /* A join resolves the numbers of one split: the first pair asked binds
   * it (once it is open; a pad decides it otherwise, sink_decide()).  The
   * branches of another split, or of a pair another join closes, are
   * told no: that split numbers nothing nobody resolves, and its
   * branches here go out in arrival order (another split), or take no
   * work (another join: tbqsplit.c). */
  JOIN_LOCK (join);
  res = join->q == NULL || (join->pair == NULL ? locked_bind_pair (join, pair)
      : join->pair == pair);
  JOIN_UNLOCK (join);
  if (!res) {
    GST_DEBUG_OBJECT (pad, "branch %u of tbqsplit pair %" G_GUINT64_FORMAT
        ": this join closes another pair, or another join that one",
        branch, gst_tbq_pair_id (pair));
    gst_tbq_pair_unref (pair);
    return FALSE;
  }
  /* Both under the stream lock: an activation between them (a state
   * change) would forget the candidate and leave the flag, and the
   * split's done hook would then decide the pad with no pair (arrival
   * order, and a warning at its first data). */
  GST_PAD_STREAM_LOCK (pad);
  sink_note_bind_query (pad, pair, branch);
  JOIN_LOCK (join);
  pad->bound_by_query = TRUE;
  pad->query_branch = branch;
  JOIN_UNLOCK (join);
  GST_PAD_STREAM_UNLOCK (pad);
  GST_DEBUG_OBJECT (pad, "branch %u of tbqsplit pair %" G_GUINT64_FORMAT,
      branch, gst_tbq_pair_id (pad->cand_pair));
  gst_tbq_pair_bind_query_set_bound (query);
  return TRUE;
}

/* ---- numbers ---- */

/* Stream lock: a number of `epoch` is about to be written: the pad's
 * record of what it wrote is of the newest epoch. */
static gboolean
sink_note_epoch (GstTbqJoinPad * pad, guint64 epoch)
{
  if (epoch < pad->num_epoch)
    return FALSE;
  if (epoch > pad->num_epoch) {
    pad->num_epoch = epoch;
    pad->last_seq = -1;
    pad->done_max = -1;
    pad->attrib_next = 0;
  }
  return TRUE;
}

static void
sink_tell_sync (GstTbqJoinPad * pad, gboolean sync)
{
  if (pad->sync_told == sync)
    return;
  pad->sync_told = sync;
  gst_tbq_pair_set_sync (pad->pair, pad->branch, sync);
}

typedef struct
{
  guint64 pair_id;
  GstTbqSeqMeta *best;
} MetaFind;

static gboolean
find_member_meta (GstBuffer ** buffer, guint idx, gpointer user_data)
{
  MetaFind *f = user_data;
  GstTbqSeqMeta *m = gst_tbq_seq_meta_find (*buffer, f->pair_id);

  if (m != NULL && (f->best == NULL || m->seq > f->best->seq))
    f->best = m;
  return TRUE;
}

/* The pair's meta with the highest number on a buffer or a list. */
static GstTbqSeqMeta *
object_meta (GstMiniObject * object, guint64 pair_id)
{
  MetaFind f = { pair_id, NULL };

  if (GST_IS_BUFFER (object))
    return gst_tbq_seq_meta_find (GST_BUFFER_CAST (object), pair_id);
  gst_buffer_list_foreach (GST_BUFFER_LIST_CAST (object), find_member_meta,
      &f);
  return f.best;
}

/* Stream lock: the split's record of this branch, for an output with no
 * number of its own: the first number given to the branch that no output
 * took and no done mark passed. */
static void
sink_attribute (GstTbqJoin * join, GstTbqJoinPad * pad, guint64 * seq,
    guint64 * epoch)
{
  guint64 e = gst_tbq_pair_epoch (pad->pair), k, end;

  /* Said once per join (relaxed: only one caller wins the exchange,
   * nothing is published with it). */
  if (!atomic_exchange_explicit (&join->warned_attrib, TRUE,
          memory_order_relaxed)) {
    gchar *text = g_strdup_printf ("The worker before %s strips the "
        "buffers' sequence metas and outputs from a thread of its own: its "
        "outputs take the numbers of its inputs in turn, one output per "
        "input", GST_PAD_NAME (pad));

    gst_tbq_join_warn (join, text);
    g_free (text);
  }
  sink_note_epoch (pad, e);
  *epoch = e;
  k = MAX (pad->attrib_next, gst_tbq_pair_resolved (pad->pair));
  end = gst_tbq_pair_assigned (pad->pair);
  for (; k < end; k++) {
    gint owner = gst_tbq_pair_owner_in (pad->pair, e, k, NULL);

    if (owner == GST_TBQ_PAIR_OTHER_EPOCH)
      break;
    if (owner == (gint) pad->branch) {
      *seq = k;
      pad->attrib_next = k + 1;
      return;
    }
  }
  /* More outputs than inputs: with the last one's. */
  *seq = pad->attrib_next > 0 ? pad->attrib_next - 1 : 0;
}

/* Stream lock: the number of an output of a pad bound to a pair (see
 * NUMBERS): TRUE when the branch is synchronous (inside the split's push
 * of the number). */
static gboolean
sink_number (GstTbqJoin * join, GstTbqJoinPad * pad, GstMiniObject * object,
    guint64 * seq, guint64 * epoch)
{
  const GstTbqPairPush *cur = gst_tbq_pair_current ();
  GstTbqSeqMeta *meta = object_meta (object, gst_tbq_pair_id (pad->pair));
  gboolean sync = FALSE;

  if (cur->pair == pad->pair && cur->branch == pad->branch) {
    *seq = cur->seq;
    *epoch = cur->epoch;
    if (meta != NULL && meta->epoch == cur->epoch && meta->seq < cur->seq) {
      sink_tell_sync (pad, FALSE);
      sink_note_epoch (pad, cur->epoch);
      if ((gint64) meta->seq >= pad->last_seq
          && (gint64) meta->seq > pad->done_max)
        *seq = meta->seq;
    } else {
      sink_tell_sync (pad, TRUE);
      sync = TRUE;
    }
  } else if (meta != NULL) {
    sink_tell_sync (pad, FALSE);
    *seq = meta->seq;
    *epoch = meta->epoch;
  } else {
    sink_tell_sync (pad, FALSE);
    sink_attribute (join, pad, seq, epoch);
  }
  if (sink_note_epoch (pad, *epoch) && (gint64) * seq > pad->last_seq)
    pad->last_seq = (gint64) * seq;
  return sync;
}

/* Stream lock: the branch is done with `seq` (a done hook or a marker). */
static GstFlowReturn
sink_done (GstTbqJoin * join, GstTbqJoinPad * pad, guint gen, guint64 epoch,
    guint64 seq)
{
  if (!sink_note_epoch (pad, epoch))
    return GST_FLOW_OK;         /* of a flushed epoch */
  if ((gint64) seq > pad->done_max)
    pad->done_max = (gint64) seq;
  if (seq + 1 > pad->attrib_next)
    pad->attrib_next = seq + 1;
  return sink_write (join, pad, JOIN_REC_DONE, NULL, seq, epoch, -1, gen);
}

/* qlock: the pad the split's bind query bound to `branch`, which got
 * nothing of it yet (undecided), or NULL. */
static GstTbqJoinPad *
locked_pad_bound_to (GstTbqJoin * join, guint branch)
{
  guint i;

  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);

    if (!pad->released && pad->mode == JOIN_PAD_UNDECIDED
        && pad->bound_by_query && pad->query_branch == branch)
      return pad;
  }
  return NULL;
}

void
gst_tbq_join_done (gpointer data, guint branch, guint64 epoch, guint64 seq)
{
  GstTbqJoin *join = data;
  GstTbqJoinPad *pad = NULL;
  guint64 written;
  guint gen;

  JOIN_LOCK (join);
  if (branch == GST_TBQ_PAIR_KICK) {
    /* A number for every branch: the src task looks again. */
    gst_tbq_join_locked_kick (join);
    JOIN_UNLOCK (join);
    return;
  }
  if (join->pair != NULL && branch < join->by_branch->len)
    pad = g_ptr_array_index (join->by_branch, branch);
  /* Nothing of the branch came yet: a push that failed before anything
   * reached its worker's end (a worker not playing yet, or not linked),
   * and the branch takes no more; its pad is still the one its bind
   * query named. */
  if (pad == NULL && join->pair != NULL)
    pad = locked_pad_bound_to (join, branch);
  if (pad != NULL)
    gst_object_ref (pad);
  else
    /* (What the push wrote may be owed a wake-up.) */
    gst_tbq_join_locked_kick (join);
  JOIN_UNLOCK (join);
  if (pad == NULL)
    return;
  /* The writer is the pad's: as its streaming thread. */
  GST_PAD_STREAM_LOCK (pad);
  written = JOIN_LOAD (pad->written);
  /* (Bound now, as its first item would bind it.) */
  if (pad->mode == JOIN_PAD_UNDECIDED)
    sink_decide (join, pad, FALSE);
  gen = pad_gen (pad);
  if (pad->mode == JOIN_PAD_SEQUENCE && sink_flow (join, pad) == GST_FLOW_OK)
    sink_done (join, pad, gen, epoch, seq);
  if (JOIN_LOAD (pad->written) == written) {
    /* No record woke the src task: a quiet output of the push may be
     * waiting for it (sink_write_full). */
    JOIN_LOCK (join);
    gst_tbq_join_locked_kick (join);
    JOIN_UNLOCK (join);
  }
  GST_PAD_STREAM_UNLOCK (pad);
  gst_object_unref (pad);
}

/* ---- arrival order: the limits ---- */

/* How long a pad waits for room before it looks at the limits itself:
 * the first time, and at most (doubled after each look that found the
 * join full).  The src side lets waiting pads go at the low mark
 * (gsttbqjoin-private.h); a consumer that stalls, or drains slower than
 * the waits, would leave the level between the mark and the limit, where
 * queue fills up to the limit: the look does that, a few milliseconds
 * late. */
#define ROOM_LOOK_FIRST_NS (5 * GST_MSECOND)
#define ROOM_LOOK_MAX_NS (100 * GST_MSECOND)

/* Stream lock, arrival order: wait while the join is full; ends when it
 * is not, or the pad flushes or the flow is not OK.  The protocol: the
 * top of gsttbqjoin-private.h (a pad's `room`). */
static GstFlowReturn
sink_wait_room (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  GstFlowReturn ret;
  gint64 look = ROOM_LOOK_FIRST_NS;

  if (!gst_tbq_join_is_full (join, pad, FALSE))
    return GST_FLOW_OK;
  JOIN_LOCK (join);
  while ((ret = sink_flow (join, pad)) == GST_FLOW_OK
      && gst_tbq_join_is_full (join, pad, FALSE)) {
    GST_LOG_OBJECT (pad, "full: waiting");
    pad->room_wait = TRUE;
    JOIN_STORE (join->room_waiters, JOIN_LOAD (join->room_waiters) + 1);
    if (tbq_cond_wait_until (&pad->room, &join->qlock,
            tbq_clock_ns () + look))
      look = MIN (look * 2, ROOM_LOOK_MAX_NS);
    if (pad->room_let_go) {
      /* Running: the src side may let the next pad go. */
      pad->room_let_go = FALSE;
      join->room_let_go--;
    }
    if (pad->room_wait) {
      /* Not let go (its own look, or a spurious wake-up). */
      pad->room_wait = FALSE;
      JOIN_STORE (join->room_waiters, JOIN_LOAD (join->room_waiters) - 1);
    }
  }
  JOIN_UNLOCK (join);
  return ret;
}

/* Stream lock, arrival order: `pad` wrote nothing, perhaps after it was
 * let go at the low mark: while others wait for room, the next of them
 * with room under the limits goes on in its place (gsttbqjoin-private.h). */
static void
sink_pass_room (GstTbqJoin * join)
{
  if (JOIN_LOAD (join->room_waiters) == 0)
    return;
  JOIN_LOCK (join);
  gst_tbq_join_locked_wake_room (join, FALSE);
  JOIN_UNLOCK (join);
}

/* Stream lock: the running time the pad reaches with a buffer or list
 * (its end; -1: none), for the time level. */
static gint64
sink_note_time (GstTbqJoinPad * pad, GstMiniObject * object)
{
  GstBuffer *buffer;
  GstClockTime ts;
  guint64 rt;

  if (pad->segment.format != GST_FORMAT_TIME)
    return -1;
  if (GST_IS_BUFFER (object))
    buffer = GST_BUFFER_CAST (object);
  else if (gst_buffer_list_length (GST_BUFFER_LIST_CAST (object)) > 0)
    buffer = gst_buffer_list_get (GST_BUFFER_LIST_CAST (object),
        gst_buffer_list_length (GST_BUFFER_LIST_CAST (object)) - 1);
  else
    return -1;
  ts = GST_BUFFER_DTS_OR_PTS (buffer);
  if (!GST_CLOCK_TIME_IS_VALID (ts))
    return -1;
  if (JOIN_LOAD (pad->firsttime) < 0) {
    /* Where its level starts (the list's first buffer: close enough). */
    rt = gst_segment_to_running_time (&pad->segment, GST_FORMAT_TIME, ts);
    if (GST_CLOCK_TIME_IS_VALID (rt))
      JOIN_STORE (pad->firsttime, (gint64) rt);
  }
  if (GST_BUFFER_DURATION_IS_VALID (buffer))
    ts += GST_BUFFER_DURATION (buffer);
  rt = gst_segment_to_running_time (&pad->segment, GST_FORMAT_TIME, ts);
  if (!GST_CLOCK_TIME_IS_VALID (rt))
    return -1;
  JOIN_STORE (pad->sinktime, (gint64) rt);
  return (gint64) rt;
}

/* ---- chain ---- */

static GstFlowReturn
sink_chain_object (GstTbqJoin * join, GstTbqJoinPad * pad, guint16 type,
    GstMiniObject * object)
{
  guint gen = pad_gen (pad);
  guint64 seq = JOIN_NO_SEQ, epoch = 0;
  gboolean sync = FALSE;
  GstFlowReturn ret;
  guint buffers;
  gsize bytes;
  gint64 rt;

  if ((ret = sink_flow (join, pad)) != GST_FLOW_OK)
    goto refused;
  if (pad->mode == JOIN_PAD_UNDECIDED)
    sink_decide (join, pad, TRUE);
  else if (G_UNLIKELY (pad->warn_no_pair))
    sink_warn_no_pair (join, pad);
  if (pad->mode == JOIN_PAD_UNDECIDED) {
    /* It flushes since sink_flow(). */
    ret = GST_FLOW_FLUSHING;
    goto refused;
  }
  if (pad->mode == JOIN_PAD_SEQUENCE)
    sync = sink_number (join, pad, object, &seq, &epoch);
  else if ((ret = sink_wait_room (join, pad)) != GST_FLOW_OK)
    goto refused;
  rt = sink_note_time (pad, object);
  gst_tbq_join_object_size (object, &buffers, &bytes);
  /* Counted in before it can be taken out (relaxed: a level; several
   * branches add, hence the atomic add). */
  atomic_fetch_add_explicit (&join->in_buffers, buffers,
      memory_order_relaxed);
  atomic_fetch_add_explicit (&join->in_bytes, bytes, memory_order_relaxed);
  /* Logged before the write: once written, the src task may push and free
   * it. */
  GST_LOG_OBJECT (pad, "queueing %" GST_PTR_FORMAT " as %" G_GINT64_FORMAT,
      object, seq == JOIN_NO_SEQ ? (gint64) - 1 : (gint64) seq);
  ret = sink_write_full (join, pad, type, object, seq, epoch, rt, gen, sync);
  if (ret != GST_FLOW_OK) {
    atomic_fetch_sub_explicit (&join->in_buffers, buffers,
        memory_order_relaxed);
    atomic_fetch_sub_explicit (&join->in_bytes, bytes, memory_order_relaxed);
    goto refused;
  }
  JOIN_ADD (pad->buffers_in, buffers);
  return GST_FLOW_OK;

refused:
  GST_LOG_OBJECT (pad, "refused %" GST_PTR_FORMAT ": %s", object,
      gst_flow_get_name (ret));
  gst_mini_object_unref (object);
  if (pad->mode != JOIN_PAD_SEQUENCE)
    sink_pass_room (join);
  return ret;
}

static GstFlowReturn
gst_tbq_join_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  return sink_chain_object (GST_TBQ_JOIN (parent), GST_TBQ_JOIN_PAD (pad),
      JOIN_REC_BUFFER, GST_MINI_OBJECT_CAST (buffer));
}

static GstFlowReturn
gst_tbq_join_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list)
{
  return sink_chain_object (GST_TBQ_JOIN (parent), GST_TBQ_JOIN_PAD (pad),
      JOIN_REC_LIST, GST_MINI_OBJECT_CAST (list));
}

/* ---- events ---- */

/* qlock: the pad's EOS is gone (a new stream or a flush). */
static void
locked_forget_eos (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  pad->eos = FALSE;
  join->eos_sent = FALSE;
}

/* qlock: whether a new stream (STREAM_START) on `pad` waits for the
 * join's EOS first.  A split's branch goes on with the next stream right
 * after its EOS, and the src side may not have taken that EOS yet: the
 * pad's EOS, forgotten now, would never end the stream, and the next
 * stream's items would come behind an EOS that never goes out.  So it
 * waits while the EOS its pad's EOS counts for is not sent, where that
 * EOS will go out: the pad's EOS is its split's (it has a place), and
 * every other pad is at EOS or is a branch of the same split (which
 * queued the EOS to each of them).  A flush, a stop or downstream's flow
 * ends the wait. */
static gboolean
locked_new_stream_waits (GstTbqJoin * join, GstTbqJoinPad * pad)
{
  guint i;

  if (pad->mode != JOIN_PAD_SEQUENCE || !pad->eos
      || pad->eos_upto == G_MAXUINT64 || join->eos_count != pad->eos_count)
    return FALSE;
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *o = g_ptr_array_index (join->pads, i);

    /* (A pad that got nothing but sticky events yet is the split's
     * branch when the split's bind query bound it: the join's pair.) */
    if (o != pad && !o->released && !o->eos
        && o->mode != JOIN_PAD_SEQUENCE
        && !(o->mode == JOIN_PAD_UNDECIDED && o->bound_by_query))
      return FALSE;
  }
  return TRUE;
}

/* Stream lock: EOS on `pad` after downstream's flow stopped the src task
 * (it is the pad's state still). */
static void
sink_eos_after_flow (GstTbqJoin * join, GstTbqJoinPad * pad,
    GstEvent * event)
{
  gboolean send;

  JOIN_LOCK (join);
  pad->eos = TRUE;
  send = gst_tbq_join_locked_eos_after_flow (join);
  JOIN_UNLOCK (join);
  if (send)
    gst_tbq_join_send_eos_after_flow (join, event);
  else
    gst_event_unref (event);
}

/* Stream lock: a serialized event into the pad's writer. */
static GstFlowReturn
sink_serialized_event (GstTbqJoin * join, GstTbqJoinPad * pad,
    GstEvent * event)
{
  guint gen = pad_gen (pad);
  GstEventType type = GST_EVENT_TYPE (event);
  guint64 seq = JOIN_NO_SEQ, epoch = 0, pair_id, mseq, mepoch;
  guint64 eos_epoch = 0, eos_upto = G_MAXUINT64;
  const GstTbqPairPush *cur;
  GstFlowReturn ret;
  guint mbranch;

  if ((ret = sink_flow (join, pad)) != GST_FLOW_OK) {
    if (type == GST_EVENT_EOS && ret != GST_FLOW_FLUSHING) {
      sink_eos_after_flow (join, pad, event);
      return ret;
    }
    if (ret != GST_FLOW_FLUSHING && GST_EVENT_IS_STICKY (event)) {
      /* As queue: a sticky event is the pad's state still (refused, the
       * pad would not store it, and the data after it would come before
       * any segment); the flow shows with the data. */
      sink_note_branch_event (pad, event);
      if (type == GST_EVENT_SEGMENT)
        gst_event_copy_segment (event, &pad->segment);
      gst_event_unref (event);
      return GST_FLOW_OK;
    }
    gst_event_unref (event);
    return ret;
  }
  sink_note_branch_event (pad, event);
  if (type == GST_EVENT_SEGMENT)
    gst_event_copy_segment (event, &pad->segment);
  if (pad->mode == JOIN_PAD_UNDECIDED && (!GST_EVENT_IS_STICKY (event)
          || type == GST_EVENT_EOS)) {
    sink_decide (join, pad, FALSE);
    if (pad->mode == JOIN_PAD_UNDECIDED) {
      /* It flushes since sink_flow(). */
      gst_event_unref (event);
      return GST_FLOW_FLUSHING;
    }
  }
  if (type == GST_EVENT_STREAM_START) {
    JOIN_LOCK (join);
    while (locked_new_stream_waits (join, pad)
        && (ret = sink_flow (join, pad)) == GST_FLOW_OK) {
      GST_LOG_OBJECT (pad, "a new stream: waiting for the join's EOS");
      /* (A quiet record of the push may wait for the src task to look:
       * sink_write_full.) */
      gst_tbq_join_locked_kick (join);
      JOIN_WAIT (join, item_del);
    }
    if (ret != GST_FLOW_OK) {
      JOIN_UNLOCK (join);
      gst_event_unref (event);
      return ret;
    }
    locked_forget_eos (join, pad);
    JOIN_UNLOCK (join);
  }

  if (pad->mode == JOIN_PAD_SEQUENCE) {
    /* The pair's marker: a done mark, never sent on. */
    if (gst_tbq_pair_parse_marker (event, &pair_id, &mepoch, &mbranch, &mseq)
        && pair_id == gst_tbq_pair_id (pad->pair)) {
      gst_event_unref (event);
      if (mbranch != pad->branch)
        return GST_FLOW_OK;
      return sink_done (join, pad, gen, mepoch, mseq);
    }
    cur = gst_tbq_pair_current ();
    if (cur->pair == pad->pair && cur->branch == pad->branch) {
      seq = cur->seq;
      epoch = cur->epoch;
    }
    /* The split's EOS ends the numbers before its place only. */
    if (type == GST_EVENT_EOS && (!gst_tbq_pair_get_place (pad->pair,
                GST_MINI_OBJECT_CAST (event), &pair_id, &eos_epoch,
                &eos_upto) || pair_id != gst_tbq_pair_id (pad->pair)))
      eos_upto = G_MAXUINT64;
  }

  GST_LOG_OBJECT (pad, "queueing %s event as %" G_GINT64_FORMAT,
      GST_EVENT_TYPE_NAME (event),
      seq == JOIN_NO_SEQ ? (gint64) - 1 : (gint64) seq);
  ret = sink_write (join, pad, JOIN_REC_EVENT, GST_MINI_OBJECT_CAST (event),
      seq, epoch, -1, gen);
  if (ret != GST_FLOW_OK) {
    gst_event_unref (event);
    return ret;
  }
  if (type == GST_EVENT_EOS) {
    gboolean send;

    /* After the record: the src side sends EOS once it has it, or, when
     * downstream's flow stopped it meanwhile, the last pad at EOS. */
    JOIN_LOCK (join);
    pad->eos = TRUE;
    pad->eos_epoch = eos_epoch;
    pad->eos_upto = eos_upto;
    pad->eos_count = join->eos_count;
    gst_tbq_join_locked_kick (join);
    send = gst_tbq_join_locked_eos_after_flow (join);
    JOIN_UNLOCK (join);
    if (send)
      gst_tbq_join_send_eos_after_flow (join, gst_event_new_eos ());
  }
  return GST_FLOW_OK;
}

/* FLUSH_START on a pad (any thread).  The first of a flush (no pad was
 * flushing) begins it: a new generation, the src task stopped, what it
 * holds dropped; FLUSH_START goes downstream once per seqnum. */
static gboolean
sink_flush_start (GstTbqJoin * join, GstTbqJoinPad * pad, GstEvent * event)
{
  guint32 seqnum = gst_event_get_seqnum (event);
  gboolean forward, begins, res = TRUE;
  guint i, flushing = 0;

  /* Before the generation (see the top of the file). */
  atomic_store_explicit (&pad->flushing, TRUE, memory_order_seq_cst);
  JOIN_LOCK (join);
  for (i = 0; i < join->pads->len; i++)
    flushing += ((GstTbqJoinPad *) g_ptr_array_index (join->pads,
            i))->flush_started;
  begins = flushing == 0;
  pad->flush_started = TRUE;
  pad->in_flush = TRUE;
  /* From here on the pad's records are of a new generation (after
   * `flushing`: see the top of the file). */
  atomic_store_explicit (&pad->gen, atomic_fetch_add_explicit (&join->gen,
          1, memory_order_seq_cst) + 1, memory_order_seq_cst);
  join->flushing = TRUE;
  forward = !join->have_flush_seqnum || join->flush_seqnum != seqnum;
  join->have_flush_seqnum = TRUE;
  join->flush_seqnum = seqnum;
  gst_tbq_join_locked_wake_all (join);
  JOIN_UNLOCK (join);

  GST_DEBUG_OBJECT (pad, "FLUSH_START%s%s", begins ? ", the flush begins" :
      "", forward ? ", sent on" : "");
  if (forward)
    res = gst_tbq_join_push_src_event (join, event);
  else
    gst_event_unref (event);
  if (begins) {
    /* Drop what it holds now (upstream's pool buffers come back before
     * FLUSH_STOP); a flush that ended meanwhile restarted the task. */
    gst_tbq_join_pause_task (join);
    JOIN_LOCK (join);
    if (join->flushing) {
      gst_tbq_join_locked_flush_drop (join);
    } else {
      gst_tbq_join_locked_start_task (join);
    }
    JOIN_UNLOCK (join);
  }
  return res;
}

/* qlock: whether a pad is still flushing. */
static gboolean
locked_any_flushing (GstTbqJoin * join)
{
  guint i;

  for (i = 0; i < join->pads->len; i++)
    if (((GstTbqJoinPad *) g_ptr_array_index (join->pads, i))->flush_started)
      return TRUE;
  return FALSE;
}

/* No lock: the last pad of a flush stopped flushing: FLUSH_STOP goes
 * downstream (`event`, or one made for a pad that went away), and the
 * order starts again at number 0 of the pair's epoch. */
static gboolean
sink_flush_end (GstTbqJoin * join, GstEvent * event)
{
  gboolean res;

  GST_DEBUG_OBJECT (join, "the flush ends");
  res = gst_tbq_join_push_src_event (join, event);
  gst_tbq_join_pause_task (join);
  JOIN_LOCK (join);
  if (join->flushing && !locked_any_flushing (join)) {
    guint i, gen = atomic_load_explicit (&join->gen, memory_order_seq_cst);

    /* A pad that got no FLUSH_START (not flushed by its upstream) is in
     * the join's generation from now on, newer than any it wrote in: what
     * it wrote during the flush is dropped with the rest.  What a pad
     * wrote after its own FLUSH_STOP stays, in the generation of that
     * pad's FLUSH_START (gst_tbq_join_locked_flush_drop). */
    for (i = 0; i < join->pads->len; i++) {
      GstTbqJoinPad *p = g_ptr_array_index (join->pads, i);

      if (!p->in_flush)
        atomic_store_explicit (&p->gen, gen, memory_order_seq_cst);
    }
    gst_tbq_join_locked_flush_drop (join);
    /* The sticky events of what the flush dropped stay their pads' state
     * (locked_keep_sticky), the SEGMENT of a pad that flushed aside: its
     * FLUSH_STOP took it (sink_flush_stop), and locked_keep_sticky
     * refused those of its records dropped since, so a SEGMENT it has now
     * came after its FLUSH_STOP, and stays (the src task may have taken
     * it while the flush went on: it ran until its push found the src
     * pad flushing).  A pad that did not flush keeps its SEGMENT, and
     * sends none again. */
    for (i = 0; i < join->pads->len; i++)
      ((GstTbqJoinPad *) g_ptr_array_index (join->pads, i))->in_flush = FALSE;
    if (JOIN_FLOW (join) != GST_FLOW_FLUSHING || gst_pad_is_active
        (join->srcpad))
      JOIN_STORE (join->srcresult, GST_FLOW_OK);
    join->flushing = FALSE;
    join->have_flush_seqnum = FALSE;
    join->eos_sent = FALSE;
    gst_tbq_join_locked_wake_room_all (join);
    JOIN_BROADCAST (join, item_del);
    gst_tbq_join_locked_start_task (join);
  }
  JOIN_UNLOCK (join);
  return res;
}

/* FLUSH_STOP on a pad (its stream lock). */
static gboolean
sink_flush_stop (GstTbqJoin * join, GstTbqJoinPad * pad, GstEvent * event)
{
  gboolean last, lone;

  JOIN_LOCK (join);
  lone = !pad->flush_started && !join->flushing;
  pad->flush_started = FALSE;
  locked_forget_eos (join, pad);
  /* As the pad's own: the segment goes (the src task is stopped). */
  gst_tbq_join_sticky_remove (pad->sticky, GST_EVENT_SEGMENT);
  atomic_store_explicit (&pad->flushing, FALSE, memory_order_seq_cst);
  last = join->flushing && !locked_any_flushing (join);
  JOIN_UNLOCK (join);
  gst_segment_init (&pad->segment, GST_FORMAT_UNDEFINED);
  gst_tbq_join_pad_forget_times (pad, TRUE);
  if (last)
    return sink_flush_end (join, event);
  /* A FLUSH_STOP without a flush (funnel sends each on). */
  if (lone)
    return gst_tbq_join_push_src_event (join, event);
  gst_event_unref (event);
  return TRUE;
}

static GstFlowReturn
gst_tbq_join_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbqJoin *join = GST_TBQ_JOIN (parent);
  GstTbqJoinPad *jpad = GST_TBQ_JOIN_PAD (pad);
  gboolean res;

  GST_LOG_OBJECT (pad, "event %" GST_PTR_FORMAT, event);
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      res = sink_flush_start (join, jpad, event);
      break;
    case GST_EVENT_FLUSH_STOP:
      res = sink_flush_stop (join, jpad, event);
      break;
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        return sink_serialized_event (join, jpad, event);
      res = gst_tbq_join_push_src_event (join, event);
      break;
  }
  return res ? GST_FLOW_OK : GST_FLOW_ERROR;
}

/* ---- queries ---- */

/* qlock: whether the order has not passed the place of a split's query
 * (every number below `seq` of `epoch` resolved) yet. */
static gboolean
locked_before_place (GstTbqJoin * join, guint64 epoch, guint64 seq)
{
  return join->epoch < epoch || (join->epoch == epoch && join->next < seq);
}

/* Stream lock: whether `query` is one the join's own split asked, and
 * its place (epoch, seq).  A pad that got nothing yet decides now, as at
 * its first item: the query may be ahead of any output of the pair. */
static gboolean
sink_query_place (GstTbqJoin * join, GstTbqJoinPad * pad, GstQuery * query,
    guint64 * epoch, guint64 * seq)
{
  guint64 pair_id;
  gboolean placed;

  /* Nothing of the split came through any pad yet (what it handed out
   * is in workers with a thread of their own): the query binds. */
  if (pad->mode == JOIN_PAD_UNDECIDED && pad->cand_pair != NULL
      && gst_tbq_pair_get_place (pad->cand_pair, GST_MINI_OBJECT_CAST (query),
          &pair_id, epoch, seq))
    sink_decide (join, pad, FALSE);
  JOIN_LOCK (join);
  placed = gst_tbq_pair_get_place (join->pair, GST_MINI_OBJECT_CAST (query),
      &pair_id, epoch, seq) && join->pair_id == pair_id;
  JOIN_UNLOCK (join);
  return placed;
}

/* qlock: the pad's branch is done with every number up to `seq` of
 * `epoch`, once the src side read what the pad wrote before now (in
 * generation `gen`, read before the pad's flushing). */
static void
locked_done_upto (GstTbqJoin * join, GstTbqJoinPad * pad, guint gen,
    guint64 epoch, guint64 seq)
{
  if (!pad->probe_set || pad->probe_gen != gen || pad->probe_epoch != epoch
      || seq > pad->probe_seq)
    pad->probe_seq = seq;
  pad->probe_set = TRUE;
  pad->probe_gen = gen;
  pad->probe_epoch = epoch;
  pad->probe_target = JOIN_LOAD (pad->written);
  gst_tbq_join_locked_kick (join);
}

/* Stream lock: a serialized query (not ALLOCATION): wait until everything
 * the pad queued before it is out or dropped, and, when the join's split
 * asked it of every branch, until everything before its place in the
 * order is out (the copy of another branch's pad must not go ahead of
 * it).  FALSE when the pad flushes or the flow stops meanwhile. */
static gboolean
sink_wait_retired (GstTbqJoin * join, GstTbqJoinPad * pad, GstQuery * query)
{
  guint gen = pad_gen (pad);
  guint64 target = JOIN_LOAD (pad->written), epoch = 0, seq = 0;
  gboolean placed = sink_query_place (join, pad, query, &epoch, &seq), ok;

  JOIN_LOCK (join);
  /* The split asks its query of a branch once the branch pushed all it
   * took: what the worker made of the numbers before its place came
   * before it, as after a marker.  A worker may hold the markers (an
   * encoder holds serialized events until its next frame, and none comes
   * while the split waits for this answer): the query says it instead. */
  if (placed && seq > 0 && pad->mode == JOIN_PAD_SEQUENCE
      && pad->pair == join->pair && !pad_flushing (pad))
    locked_done_upto (join, pad, gen, epoch, seq - 1);
  join->queries_held++;
  if (placed)
    join->place_waits++;
  while (sink_flow (join, pad) == GST_FLOW_OK && join->reader != NULL
      && (pad->retired < target
          || (placed && locked_before_place (join, epoch, seq)))) {
    pad->query_target = MAX (target, 1);
    /* The src task lets go of what it holds back for this pad, and looks
     * at the order again. */
    gst_tbq_join_locked_kick (join);
    JOIN_WAIT (join, retired);
  }
  pad->query_target = 0;
  join->queries_held--;
  if (placed)
    join->place_waits--;
  ok = sink_flow (join, pad) == GST_FLOW_OK && pad->retired >= target
      && !(placed && locked_before_place (join, epoch, seq));
  JOIN_UNLOCK (join);
  return ok;
}

/* The split's marker query on `pad` (its streaming thread): answered at
 * once, never waiting for the order (which waits for it); the src side
 * resolves the numbers once it read what the pad wrote before it.  FALSE
 * when it is not this pad's pair's (another pair's, nested: it goes on as
 * any serialized query). */
static gboolean
sink_marker_query (GstTbqJoin * join, GstTbqJoinPad * pad, GstQuery * query)
{
  guint64 pair_id, epoch, seq;
  guint branch, gen = pad_gen (pad);
  gboolean mine;

  if (!gst_tbq_pair_parse_marker_query (query, &pair_id, &epoch, &branch,
          &seq))
    return FALSE;
  /* Nothing of its branch came yet (its worker dropped it all): the
   * split's query binds, as its first item would. */
  if (pad->mode == JOIN_PAD_UNDECIDED && pad->cand_pair != NULL
      && pair_id == gst_tbq_pair_id (pad->cand_pair))
    sink_decide (join, pad, FALSE);
  JOIN_LOCK (join);
  mine = pad->mode == JOIN_PAD_SEQUENCE && pad->pair != NULL
      && pair_id == gst_tbq_pair_id (pad->pair);
  if (mine && branch == pad->branch && !pad_flushing (pad))
    locked_done_upto (join, pad, gen, epoch, seq);
  JOIN_UNLOCK (join);
  if (mine) {
    GST_LOG_OBJECT (pad, "marker query: done up to %" G_GUINT64_FORMAT, seq);
    gst_tbq_pair_marker_query_set_answered (query);
  }
  return mine;
}

static gboolean
gst_tbq_join_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbqJoin *join = GST_TBQ_JOIN (parent);

  /* Never queued: a worker waiting for an answer must not wait for the
   * order, which may wait for that worker. */
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    return gst_pad_peer_query (join->srcpad, query);
  if (gst_tbq_pair_parse_bind_query (query, NULL, NULL, NULL))
    return sink_bind_query (join, GST_TBQ_JOIN_PAD (pad), query);
  if (sink_marker_query (join, GST_TBQ_JOIN_PAD (pad), query))
    return TRUE;
  if (!GST_QUERY_IS_SERIALIZED (query))
    return gst_pad_query_default (pad, parent, query);
  if (!sink_wait_retired (join, GST_TBQ_JOIN_PAD (pad), query)) {
    GST_DEBUG_OBJECT (pad, "not answering %" GST_PTR_FORMAT ": flushing",
        query);
    return FALSE;
  }
  return gst_pad_peer_query (join->srcpad, query);
}

/* ---- activation ---- */

/* Stream lock: the sink side starts over. */
static void
sink_reset (GstTbqJoinPad * pad)
{
  gst_segment_init (&pad->segment, GST_FORMAT_UNDEFINED);
  if (pad->cand_pair != NULL)
    gst_tbq_pair_unref (pad->cand_pair);
  pad->cand_pair = NULL;
  pad->cand_depth = 0;
  if (pad->pair != NULL)
    gst_tbq_pair_unref (pad->pair);
  pad->pair = NULL;
  pad->num_epoch = 0;
  pad->last_seq = -1;
  pad->done_max = -1;
  pad->attrib_next = 0;
  pad->sync_told = -1;
  gst_tbq_join_pad_forget_times (pad, TRUE);
}

static gboolean
gst_tbq_join_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstTbqJoin *join = GST_TBQ_JOIN (parent);
  GstTbqJoinPad *jpad = GST_TBQ_JOIN_PAD (pad);
  TbqWriter *writer = NULL;
  gboolean ok = TRUE, end_flush = FALSE;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    GST_PAD_STREAM_LOCK (pad);
    sink_reset (jpad);
    JOIN_LOCK (join);
    if (jpad->mode == JOIN_PAD_SEQUENCE && join->by_branch->len > jpad->branch
        && g_ptr_array_index (join->by_branch, jpad->branch) == jpad)
      g_ptr_array_index (join->by_branch, jpad->branch) = NULL;
    jpad->mode = JOIN_PAD_UNDECIDED;
    jpad->bound_by_query = FALSE;
    jpad->warn_no_pair = FALSE;
    jpad->eos = FALSE;
    jpad->flush_started = FALSE;
    if (join->q != NULL && jpad->writer == NULL)
      ok = tbq_writer_new (join->q, &jpad->writer) == TBQ_OK;
    atomic_store_explicit (&jpad->flushing, !ok, memory_order_seq_cst);
    JOIN_UNLOCK (join);
    GST_PAD_STREAM_UNLOCK (pad);
    if (!ok)
      GST_ELEMENT_ERROR (join, RESOURCE, NO_SPACE_LEFT,
          ("Cannot open a writer for %s", GST_PAD_NAME (pad)), (NULL));
    return ok;
  }

  /* Every wait of its thread ends (a write in a full source pool within
   * the writer's timeout), then its writer closes. */
  atomic_store_explicit (&jpad->flushing, TRUE, memory_order_seq_cst);
  JOIN_LOCK (join);
  if (jpad->flush_started) {
    jpad->flush_started = FALSE;
    end_flush = join->flushing && !locked_any_flushing (join);
  }
  gst_tbq_join_locked_wake_all (join);
  JOIN_UNLOCK (join);
  GST_PAD_STREAM_LOCK (pad);
  JOIN_LOCK (join);
  writer = jpad->writer;
  jpad->writer = NULL;
  JOIN_UNLOCK (join);
  if (writer != NULL)
    tbq_writer_close (writer);
  GST_PAD_STREAM_UNLOCK (pad);
  /* The last flushing pad went away: the flush ends without it. */
  if (end_flush)
    sink_flush_end (join, gst_event_new_flush_stop (TRUE));
  return TRUE;
}

void
gst_tbq_join_sink_set_functions (GstPad * pad)
{
  gst_pad_set_activatemode_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbq_join_sink_activate_mode));
  gst_pad_set_chain_function (pad, GST_DEBUG_FUNCPTR (gst_tbq_join_chain));
  gst_pad_set_chain_list_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbq_join_chain_list));
  gst_pad_set_event_full_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbq_join_sink_event));
  gst_pad_set_query_function (pad,
      GST_DEBUG_FUNCPTR (gst_tbq_join_sink_query));
}

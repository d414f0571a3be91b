/* The pair: what a tbqsplit and the tbqjoin that closes its branches
 * share.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf: it knows GStreamer, not the elements.  The split hands out
 * sequence numbers, the join resolves them; this file is the contract
 * between the two, and docs/architecture.md ("Parallel branches") tells
 * the whole design.
 *
 * SEQUENCE NUMBERS.  Every item the split hands to a branch takes the
 * next sequence number of the stream: a buffer or a buffer list (to the
 * one branch that is free), and a serialized event that is not sticky
 * (to every branch: the slot then holds the split's own copy of the
 * event, which the join sends at its place; the copies that come through
 * the branches are dropped by the join).  Sticky events take no number:
 * the split stores them on every branch before that branch's next item,
 * and the join sends a branch's sticky events (as its worker made them)
 * before that branch's next output, when they differ from its src pad's.
 * Numbers start at 0 and start again at 0 after a flush (a new epoch).
 *
 * THE WINDOW.  At most `window` numbers are handed out and not yet
 * resolved by the join (oneTBB's tokens): once the window is full the
 * split waits for room, so a stalled worker stalls the stream and holds
 * nothing more, and the join never keeps more than the window's outputs
 * for reordering.  The join resolves a number when everything its branch
 * made of it is out (or, for an event slot, when the event is out); the
 * number's branch is FIFO, so it knows that from the branch alone:
 *  - a synchronous branch (its worker makes every output of an input
 *    while the split's push of that input runs, on the split's thread):
 *    when the push returns, the split calls the join's `done` hook
 *    (gst_tbq_pair_push_end), which the join turns into a mark in the
 *    branch's stream behind the outputs;
 *  - any other branch (a worker with a queue or a thread of its own, or
 *    one not known yet): the split pushes a marker event
 *    (gst_tbq_pair_marker_new_in) after the input, which comes out of the
 *    worker behind the input's outputs;
 *  - in both, an output of a later number from the same branch resolves
 *    every earlier number of that branch (a worker drops, merges or is
 *    late: nothing earlier will come, whatever the mark says).
 * The join decides whether a branch is synchronous
 * (gst_tbq_pair_set_sync) from what it sees: an output that arrives
 * inside the split's push on its branch (gst_tbq_pair_current) with the
 * number of that push.
 *
 * THE PLACE OF A QUERY OR AN EOS.  The split asks a serialized query of
 * every branch once each has pushed what it took (its barrier), and each
 * branch brings the join a copy; but an earlier input may still be
 * inside another branch's worker (a queue, a thread of its own).  So the
 * split marks the query with its place while it asks
 * (gst_tbq_pair_set_place: the epoch and the first number not handed
 * out), and the join holds each copy until its order has passed that
 * place: no copy goes downstream ahead of an output of an earlier input.
 * The numbers before it are resolved without the split (their done marks
 * and markers are already on their way), so the wait ends.  EOS too: a
 * branch's EOS ends only the numbers before its place; the split numbers
 * the next stream's items at once, and a branch whose worker has not
 * brought the join that stream's STREAM_START yet still owes their
 * outputs.
 *
 * HOW THE JOIN FINDS ITS SPLIT.  The split stores a custom sticky event on
 * each src pad before its first item (gst_tbq_pair_branch_event_new): it
 * names the pair, the branch and the pair's depth (the pairs the split is
 * itself inside, plus one).  Workers pass sticky events on.  A join binds
 * each sink pad to the deepest pair whose event reached it, consumes that
 * pair's events and passes the others on, so that nested pairs and
 * several pairs in one pipeline each find their own.  A buffer also
 * carries the pair's id and its number in a GstTbqSeqMeta (no tags, so
 * transforms copy it to their outputs), for outputs that arrive outside
 * the split's push.
 *
 * LOCKING.  Everything under the pair's lock, but the id (constant),
 * the depth (atomic) and the thread-local push.  The split calls the
 * join's `done` hook with no lock of the pair held; the join must not
 * call into the split from it.  gst_tbq_pair_unbind() waits for the hook
 * calls under way (counted under the pair's lock).  The split never
 * waits on the pair while holding its own queue lock.
 */
#ifndef __GST_TBQ_PAIR_H__
#define __GST_TBQ_PAIR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _GstTbqPair GstTbqPair;

/* The join's hook: the split's push of number `seq` (of `epoch`) on
 * `branch` returned, and the branch is synchronous: everything its worker
 * made of `seq` has reached the join.  Called on the split's branch
 * thread, after the push, with no lock held. */
typedef void (*GstTbqPairDoneFunc) (gpointer join, guint branch,
    guint64 epoch, guint64 seq);
/* The hook's `branch` for gst_tbq_pair_kick(): no number is done, the
 * join looks again at the next number to send. */
#define GST_TBQ_PAIR_KICK G_MAXUINT

/* What the thread is pushing for a split, set around the push
 * (gst_tbq_pair_push_begin); `pair` NULL: nothing. */
typedef struct
{
  GstTbqPair *pair;
  guint branch;
  guint64 epoch;
  guint64 seq;
  /* The join wrote an output of this push without waking its src task
   * (gst_tbq_pair_owe_wake): the push's end wakes it, with the done hook
   * (whose record wakes it), or else with a kick. */
  gboolean owes_wake;
} GstTbqPairPush;

/* A slot's owner when it is an event for every branch. */
#define GST_TBQ_PAIR_EVERY_BRANCH (-1)
/* gst_tbq_pair_owner(): the number was not handed out (yet). */
#define GST_TBQ_PAIR_NOT_ASSIGNED (-2)
/* gst_tbq_pair_owner(): the number is resolved already. */
#define GST_TBQ_PAIR_RESOLVED (-3)
/* gst_tbq_pair_owner_in(): the pair is in another epoch now. */
#define GST_TBQ_PAIR_OTHER_EPOCH (-4)

GType gst_tbq_pair_get_type (void);
#define GST_TYPE_TBQ_PAIR (gst_tbq_pair_get_type ())

/* ---- both sides ---- */

GstTbqPair *gst_tbq_pair_ref (GstTbqPair * pair);
void gst_tbq_pair_unref (GstTbqPair * pair);
/* The references held now (for tests: who keeps the pair alive). */
gint gst_tbq_pair_refcount (GstTbqPair * pair);
guint64 gst_tbq_pair_id (const GstTbqPair * pair);
guint gst_tbq_pair_depth (const GstTbqPair * pair);
/* The current epoch (bumped by every gst_tbq_pair_flush_stop()). */
guint64 gst_tbq_pair_epoch (GstTbqPair * pair);
/* Whether the join found the branch synchronous (see above). */
gboolean gst_tbq_pair_branch_is_sync (GstTbqPair * pair, guint branch);

/* ---- the split ---- */

/* A pair whose window holds `window` numbers (at least 1), `depth` pairs
 * deep (1: not inside another pair). */
GstTbqPair *gst_tbq_pair_new (guint window, guint depth);
/* The split found itself inside another pair (that pair's branch event
 * came through its sink pad): this pair is `depth` deep; the branch
 * events made from now on say so. */
void gst_tbq_pair_set_depth (GstTbqPair * pair, guint depth);
/* A new window size; it applies at once (a smaller one as numbers are
 * resolved: nothing handed out is taken back). */
void gst_tbq_pair_set_window (GstTbqPair * pair, guint window);
guint gst_tbq_pair_get_window (GstTbqPair * pair);
/* Numbers handed out and not resolved. */
guint gst_tbq_pair_in_flight (GstTbqPair * pair);
/* Whether a number can be handed out now (room in the window, and not
 * flushing). */
gboolean gst_tbq_pair_has_room (GstTbqPair * pair);
/* The key of a wait for room: taken (under the caller's lock) before the
 * caller looked, so that an interrupt between the look and the wait is
 * not missed. */
guint gst_tbq_pair_wait_key (GstTbqPair * pair);
/* As gst_tbq_pair_has_room() and gst_tbq_pair_wait_room(), for a number
 * to hand to `branch`: with the window exactly full, the branch that
 * owns the oldest unresolved number and none after it may take one more
 * (its marker may come out of its worker only with its next input: a
 * video encoder holds serialized events until its next frame). */
gboolean gst_tbq_pair_has_room_for (GstTbqPair * pair, guint branch);
/* The join's downstream ended (EOS, NOT_LINKED, an error), or it starts
 * again: while open, the window has room whatever is in flight, so that
 * every branch pushes until it learns the flow (a worker that queues
 * returns OK for what it then drops: its numbers are never resolved).
 * A flush closes it. */
void gst_tbq_pair_set_open (GstTbqPair * pair, gboolean open);
/* Waits until monotonic time `end_time` at most (-1: no end): FALSE then,
 * as on an interrupt or a flush. */
gboolean gst_tbq_pair_wait_room_for (GstTbqPair * pair, guint key,
    guint branch, gint64 end_time);
/* Wait until a number can be handed out, or until the pair flushes or
 * gst_tbq_pair_interrupt() was called since `key` was taken: FALSE then.
 * No lock of the caller's may be held (the join's progress may need
 * it). */
gboolean gst_tbq_pair_wait_room (GstTbqPair * pair, guint key);
/* End every gst_tbq_pair_wait_room() now (it returns FALSE), and the
 * ones whose key was taken before: the split's flow changed. */
void gst_tbq_pair_interrupt (GstTbqPair * pair);
/* Hand out the next number, to `branch`, or, with `event` (a serialized
 * event that is not sticky; the pair takes a reference), to every branch
 * (branch ignored): the event is marked with its slot (qdata: the pair,
 * the epoch and the number), so that the join knows every branch's copy
 * of it (the same object) however late it comes.  The caller made sure
 * there is room (one thread hands out numbers at a time: the split's
 * queue lock).  Returns the number, and its epoch in `epoch` (may be
 * NULL): what the push, the stamp and the marker of that number carry,
 * whatever epoch the pair is in by then (a flush meanwhile). */
guint64 gst_tbq_pair_assign (GstTbqPair * pair, guint branch,
    GstEvent * event, guint64 * epoch);
/* After a number handed out to every branch (an event): the bound join's
 * hook with GST_TBQ_PAIR_KICK, so that a join asleep at that number sends
 * the split's copy.  The copies through the branches would wake it too,
 * but a worker may hold them (an encoder holds serialized events until
 * its next frame), and with a window full of such numbers its next frame
 * never comes.  No lock held. */
void gst_tbq_pair_kick (GstTbqPair * pair);
/* Around the push of number `seq` on `branch` (any item: a buffer, a
 * list, an event): the thread-local "inside a split push" for the join.
 * push_end() puts back what `saved` holds and, when `seq` is a number of
 * this epoch, calls the join's done hook if the branch is synchronous, or
 * if the push returned anything but GST_FLOW_OK (`result`): the branch
 * gets no more numbers, and what it did not make by now it never will.
 * No lock held.  It returns whether it called the hook: when it did not
 * (and the push went through), the split pushes a marker
 * (gst_tbq_pair_marker_new_in) after the item.  Deciding from this answer,
 * not from a gst_tbq_pair_branch_is_sync() before or after, is what
 * gives every number exactly one of the two: the join may change its
 * finding at any time, and a number with neither would be resolved only
 * by the branch's next item, which a full window never sends. */
void gst_tbq_pair_push_begin (GstTbqPair * pair, guint branch,
    guint64 epoch, guint64 seq, GstTbqPairPush * saved);
gboolean gst_tbq_pair_push_end (GstTbqPair * pair, guint branch,
    guint64 seq, GstFlowReturn result, const GstTbqPairPush * saved);
/* A flush: every wait for room returns FALSE until flush_stop(), which
 * starts a new epoch with an empty window and number 0 (the events held
 * are dropped). */
void gst_tbq_pair_flush_start (GstTbqPair * pair);
void gst_tbq_pair_flush_stop (GstTbqPair * pair);

/* The question the split asks down a branch before the branch's first
 * number: "which join closes this branch?"  A custom query (not
 * serialized: it passes at once, through workers' default handling).  A
 * join that gets it with `crossed` 0 binds the sink pad it came in by to
 * (pair, branch) and answers it (gst_tbq_pair_bind_query_set_bound);
 * with `crossed` above 0 it belongs to a join further down: that join
 * lowers it by one and passes it on through its src pad.  A split that
 * gets one on its sink pad (it is inside another pair's branch) raises
 * it by one and passes it down one of its branches: so every join
 * answers its own split, brackets matched, however pairs nest. */
GstQuery *gst_tbq_pair_bind_query_new (GstTbqPair * pair, guint branch);
/* Whether the query was answered by a join. */
gboolean gst_tbq_pair_bind_query_bound (GstQuery * query);

/* Mark a query or an EOS with its place (see THE PLACE OF A QUERY OR AN
 * EOS): after every number handed out so far, of the current epoch.  The
 * split clears a query's when every branch answered. */
void gst_tbq_pair_set_place (GstTbqPair * pair, GstMiniObject * object);
void gst_tbq_pair_clear_place (GstTbqPair * pair, GstMiniObject * object);

/* The sticky event that names the pair and `branch`, for the split to
 * store on the branch's src pad. */
GstEvent *gst_tbq_pair_branch_event_new (GstTbqPair * pair, guint branch);
/* The marker for a branch that is not synchronous: pushed after number
 * `seq` of `epoch` (the epoch it was handed out in, gst_tbq_pair_assign)
 * on `branch`, it says that the worker is done with `seq`.  The join
 * drops one of an epoch a flush ended, or of a number it is past. */
GstEvent *gst_tbq_pair_marker_new_in (GstTbqPair * pair, guint64 epoch,
    guint branch, guint64 seq);
/* Stamp `buffer` (made writable if it must be: it may change) with the
 * pair's id, the epoch and `seq`. */
void gst_tbq_pair_stamp_buffer (GstTbqPair * pair, GstBuffer ** buffer,
    guint64 epoch, guint64 seq);
/* The same for every buffer of a list. */
void gst_tbq_pair_stamp_list (GstTbqPair * pair, GstBufferList ** list,
    guint64 epoch, guint64 seq);

/* ---- the join ---- */

/* Whether `event` is a pair's branch event; if so, and the out-pointers
 * are not NULL, the pair (a new reference), the branch and the depth. */
gboolean gst_tbq_pair_parse_branch_event (GstEvent * event,
    GstTbqPair ** pair, guint * branch, guint * depth);
/* Whether `event` is a marker; if so, its pair's id, epoch, branch and
 * number. */
gboolean gst_tbq_pair_parse_marker (GstEvent * event, guint64 * pair_id,
    guint64 * epoch, guint * branch, guint64 * seq);
/* The marker again as a serialized query (a DRAIN, so that every
 * element passes it on in order and drains before it): the split asks it
 * down a branch that waits for room, since a worker may hold the marker
 * event until its next input (a video encoder holds every serialized
 * event) or drop it (a valve).  The join of the pair answers it, and
 * marks it answered. */
GstQuery *gst_tbq_pair_marker_query_new_in (GstTbqPair * pair, guint64 epoch,
    guint branch, guint64 seq);
gboolean gst_tbq_pair_parse_marker_query (GstQuery * query,
    guint64 * pair_id, guint64 * epoch, guint * branch, guint64 * seq);
void gst_tbq_pair_marker_query_set_answered (GstQuery * query);
gboolean gst_tbq_pair_marker_query_answered (GstQuery * query);
/* Whether `query` is a split's bind query; if so, the pair (a new
 * reference, when `pair` is not NULL), the branch and how many splits it
 * crossed since its own. */
gboolean gst_tbq_pair_parse_bind_query (GstQuery * query, GstTbqPair ** pair,
    guint * branch, guint * crossed);
/* Raise (a split passing it down) or lower (a join passing it on)
 * `crossed` by `delta`. */
void gst_tbq_pair_bind_query_cross (GstQuery * query, gint delta);
/* The join answers: it bound the pad the query came in by. */
void gst_tbq_pair_bind_query_set_bound (GstQuery * query);
/* Whether `event` is a split's event for every branch (it carries its
 * slot: gst_tbq_pair_assign); if so, its pair's id, the epoch and the
 * number.  A worker that makes a new event keeps its seqnum, not this. */
gboolean gst_tbq_pair_parse_slot_event (GstTbqPair * pair, GstEvent * event,
    guint64 * pair_id, guint64 * epoch, guint64 * seq);
/* Whether a query or an EOS carries the place `pair` (NULL: none) gave
 * it; if so, the pair's id, and the epoch and number it comes before.
 * Each pair marks objects under names of its own: nested pairs mark the
 * same object without hiding each other's marks. */
gboolean gst_tbq_pair_get_place (GstTbqPair * pair, GstMiniObject * object,
    guint64 * pair_id, guint64 * epoch, guint64 * seq);
/* Whether `event` belongs to the pair machinery (a branch event or a
 * marker, of any pair). */
gboolean gst_tbq_pair_is_pair_event (GstEvent * event);
/* The join that resolves the pair's numbers: its done hook.  One join
 * per pair: FALSE if another join is bound. */
gboolean gst_tbq_pair_bind (GstTbqPair * pair, gpointer join,
    GstTbqPairDoneFunc done);
/* The join lets go: no done hook is called from here on, and when it
 * returns none is running any more (it waits for the calls under way, so
 * the join may be freed after it; the caller holds no lock that a done
 * hook takes).  Every branch is found not synchronous again: with no
 * join to call, the split sends markers. */
void gst_tbq_pair_unbind (GstTbqPair * pair, gpointer join);
/* What this thread is pushing for a split (pair NULL: nothing). */
const GstTbqPairPush *gst_tbq_pair_current (void);
/* The join, inside the push gst_tbq_pair_current() names, wrote an
 * output without waking its src task: gst_tbq_pair_push_end() calls the
 * done hook, or the hook with GST_TBQ_PAIR_KICK when it calls no done
 * (the join is then to wake its src task in either call). */
void gst_tbq_pair_owe_wake (void);
/* Who number `seq` went to: a branch, GST_TBQ_PAIR_EVERY_BRANCH with
 * *event (a new reference, when `event` is not NULL) the split's copy of
 * the event, GST_TBQ_PAIR_NOT_ASSIGNED or GST_TBQ_PAIR_RESOLVED.  Of the
 * current epoch. */
gint gst_tbq_pair_owner (GstTbqPair * pair, guint64 seq, GstEvent ** event);
/* The same, of `epoch`: GST_TBQ_PAIR_OTHER_EPOCH when the pair is in
 * another epoch (the answer of one look, where an epoch read before or
 * after gst_tbq_pair_owner() could belong to another). */
gint gst_tbq_pair_owner_in (GstTbqPair * pair, guint64 epoch, guint64 seq,
    GstEvent ** event);
/* The first number not handed out yet. */
guint64 gst_tbq_pair_assigned (GstTbqPair * pair);
/* Every number below `upto` is resolved: their room in the window is
 * free again (the split's waits for room end). */
void gst_tbq_pair_resolve (GstTbqPair * pair, guint64 upto);
/* The same for the numbers of `epoch` only: nothing when the pair is in
 * another epoch by now (a flush restarted the numbers at 0 since the join
 * looked; resolving the new epoch's numbers would free room for items the
 * join has not seen).  TRUE when `epoch` is the current one. */
gboolean gst_tbq_pair_resolve_in (GstTbqPair * pair, guint64 epoch,
    guint64 upto);
/* The first number not resolved. */
guint64 gst_tbq_pair_resolved (GstTbqPair * pair);
/* The join's finding: whether the split may trust the end of its push on
 * `branch` (done hook) instead of sending markers. */
void gst_tbq_pair_set_sync (GstTbqPair * pair, guint branch, gboolean sync);

/* ---- the sequence meta ---- */

typedef struct
{
  GstMeta meta;
  guint64 pair_id;
  guint64 epoch;
  guint64 seq;
} GstTbqSeqMeta;

GType gst_tbq_seq_meta_api_get_type (void);
#define GST_TBQ_SEQ_META_API_TYPE (gst_tbq_seq_meta_api_get_type ())
const GstMetaInfo *gst_tbq_seq_meta_get_info (void);

/* The meta of pair `pair_id` on `buffer` with the highest number (a
 * worker that merges inputs may leave several), or NULL. */
GstTbqSeqMeta *gst_tbq_seq_meta_find (GstBuffer * buffer, guint64 pair_id);

G_END_DECLS
#endif /* __GST_TBQ_PAIR_H__ */

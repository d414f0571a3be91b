/* tbqsplit: a tbqueue with one src task per branch; each item goes to the
 * branch that is free, with its sequence number for the join.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queue (sink side, limits, leaky modes, transfer modes, pools,
 * spill, buffering, copy groups) is tbqueue's, unchanged but for where
 * upstream at a limit goes on (resume_low: at the low mark): this file is
 * the src side, its branches.  The design: docs/architecture.md
 * ("Parallel branches"); the contract with the join: gsttbqpair.h.
 *
 * THREADS
 *  - One task per branch (its request pad's task).  Each takes items under
 *    qlock as tbqueue's src task does, and pushes them with qlock
 *    released: whichever branch is free takes the next item.
 *  - The upstream thread, the copy task and application threads as in
 *    tbqueue (gsttbqueue-private.h).
 *
 * LOCKS: qlock guards every field below marked so, and the branches'
 * list (changed by request and release, from an application thread).
 * Nothing is pushed, queried or waited for on the pair with qlock held.
 *
 * HOW A BRANCH'S TASK GOES ROUND (branch_step), qlock held:
 *  1. events the branch owes (its `pending` list: sticky events and
 *     serialized events every branch gets, queued by whichever branch
 *     took them out) are pushed first, in order;
 *  2. a branch that may not take work waits: its flow is not OK (not
 *     linked, EOS, flushing), a query's barrier holds the others, another
 *     branch is gathering a buffer list (its rest must not go elsewhere);
 *  3. it waits for data as tbqueue's src task does (the reader's sleep);
 *  0. before it pushes anything it asks whether a join closes it (the
 *     pair's bind query: the join's sink pad then knows its branch);
 *  4. with a join, it waits for room in the window;
 *  5. it takes the next item (after what a leak made it owe) and
 *     dispatches it: a buffer or list gets a number, and DISCONT after a
 *     leak, with qlock held since it was taken (the queue's order,
 *     whichever branch takes the next meanwhile), and is pushed on this
 *     branch before what it owes from then on; an event goes to every
 *     branch's `pending` (a serialized event that is not sticky takes a
 *     number for every branch); a serialized query waits until every
 *     other branch is idle, then asks every branch.
 *  Every step that released qlock returns to the top: the world may have
 *  changed.  What wakes a branch: the reader's sleep ends on records, a
 *  kick or a flow change; `sink_moved` when the sleeper wakes; and
 *  `branch_idle`, broadcast whenever a branch finishes a push, events are
 *  queued to the branches, the barrier ends or the flow changes.
 *
 * A branch that returns NOT_LINKED, EOS or FLUSHING (its pad released,
 * flushed alone, or its downstream stopping) stops taking work; the
 * others go on.  When none can take work any more, the element's flow is
 * FLUSHING if any ended with FLUSHING, else EOS if any ended with EOS,
 * else NOT_LINKED.  An error is the element's flow at once, as in
 * tbqueue.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttbqsplit.h"
#include "gsttbqpair.h"
#include "gsttbqueue-private.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-leaks.h"
#include "gsttbqueue-levels.h"
#include "gsttbqueue-sink.h"
#include "gsttbqueue-src.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

/* Upstream events remembered to send each seqnum upstream once. */
#define SENT_SEQNUMS 32

typedef enum
{
  JOIN_UNKNOWN,                 /* not asked yet */
  JOIN_FOUND,                   /* a join answered the bind query */
  JOIN_NONE,                    /* nobody did */
} JoinState;

/* How often a branch waiting for room sends its last marker again
 * (locked_may_probe()). */
#define PROBE_INTERVAL (100 * G_TIME_SPAN_MILLISECOND)

/* One branch: its src pad and what it owes (qlock, but `pad`, `index`). */
typedef struct
{
  GstPad *pad;
  guint index;                  /* the pad's number: the pair's branch */
  GQueue pending;               /* events to push before its next item */
  guint busy;                   /* taking or pushing an item: it may
                                 * release qlock meanwhile (nested) */
  GstFlowReturn flow;           /* OK, or why it takes no work */
  /* Its push returned FLUSHING while the split was not flushing: what is
   * downstream of it does not play yet (a worker requested while the
   * pipeline plays, and brought to its state after it is linked), or
   * flushes on its own.  It takes no work until that ends, and listens
   * meanwhile (the stream's events, its EOS, wait for it). */
  gboolean down_flushing;
  JoinState join;
  gboolean released;            /* release_pad() runs */
  gboolean warned_no_join;
  gboolean pushed_eos;          /* it pushed the stream's EOS */
  /* It pushed a SEGMENT and no data since: a branch that takes no work
   * (it leads to no join where the others do) then gets a GAP, so that a
   * sink there prerolls. */
  gboolean owes_gap;
  GstClockTime gap_at;
  /* The last number whose push returned OK, and its epoch: the branch's
   * task alone reads and writes them (a probe, locked_probe()). */
  gboolean pushed_numbered;
  /* The last number a marker followed (no done hook), and its epoch:
   * the join hears of it from that marker only, even once the branch is
   * found synchronous, and a worker may hold the marker (an encoder holds
   * serialized events until its next frame). */
  gboolean marker_set;
  guint64 marker_seq;
  guint64 marker_epoch;
  guint64 pushed_seq;
  guint64 pushed_epoch;
  /* Statistics: written by the branch's task, read anywhere (relaxed).
   * A list counts its buffers. */
  _Atomic guint64 buffers;
  _Atomic guint64 bytes;
} Branch;

#define GST_TYPE_TBQ_SPLIT (gst_tbq_split_get_type ())
#define GST_TBQ_SPLIT(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), GST_TYPE_TBQ_SPLIT, GstTbqSplit))

typedef struct
{
  GstTbQueue queue;

  GstTbqPair *pair;             /* constant */
  GPtrArray *branches;          /* qlock: Branch *, by request order */
  guint next_index;             /* qlock: the next pad's number */
  guint max_in_flight;          /* qlock: 0 = twice the branches */
  gboolean joined;              /* qlock: a join answered a branch */
  GPtrArray *sticky;            /* qlock: the stream's sticky events as
                                 * taken out so far, in sticky order: a
                                 * new branch owes them */
  Branch *barrier;              /* qlock: the branch answering a query */
  pthread_cond_t branch_idle;   /* qlock: see the top of the file */
  gboolean underrun;            /* qlock: underrun emitted, nothing since */
  /* Upstream events sent (object lock): seqnums, oldest overwritten. */
  guint32 sent[SENT_SEQNUMS];
  guint n_sent;
} GstTbqSplit;

typedef struct
{
  GstTbQueueClass parent_class;
} GstTbqSplitClass;

G_DEFINE_TYPE (GstTbqSplit, gst_tbq_split, GST_TYPE_TBQUEUE_BASE);
GST_ELEMENT_REGISTER_DEFINE (tbqsplit, "tbqsplit", GST_RANK_NONE,
    GST_TYPE_TBQ_SPLIT);

enum
{
  PROP_0,
  PROP_MAX_IN_FLIGHT,
  PROP_CURRENT_IN_FLIGHT,
  PROP_BRANCH_STATS,
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src_%u",
    GST_PAD_SRC, GST_PAD_REQUEST, GST_STATIC_CAPS_ANY);

static void split_loop (GstPad * pad);
static GstFlowReturn locked_take_and_dispatch (GstTbqSplit * split,
    Branch * b);

/* ---- branches ---- */

static inline Branch *
pad_branch (GstPad * pad)
{
  return gst_pad_get_element_private (pad);
}

/* qlock: the window: max-in-flight, or twice the branches. */
static void
locked_update_window (GstTbqSplit * split)
{
  guint n = split->max_in_flight;

  if (n == 0)
    n = 2 * MAX (split->branches->len, 1);
  gst_tbq_pair_set_window (split->pair, n);
}

/* qlock: every branch looks again (events queued to it, the barrier
 * ended, the flow changed): the one asleep on the reader is kicked, the
 * ones on the conditions are woken. */
static void
locked_wake_branches (GstTbqSplit * split)
{
  GstTbQueue *tbq = &split->queue;

  if (tbq->reader_sleeping && tbq->reader != NULL)
    tbq_reader_wake (tbq->reader);
  GST_TBQUEUE_BROADCAST (tbq, sink_moved);
  pthread_cond_broadcast (&split->branch_idle);
  /* And those waiting for room in the window: events they owe need none,
   * and a query's barrier waits until they pushed them (the number the
   * window waits on may be the asking branch's own, whose marker goes
   * again only once the others pushed theirs). */
  if (split->joined && split->pair != NULL)
    gst_tbq_pair_interrupt (split->pair);
}

/* Sticky events in GStreamer's order: by type, custom ones by name. */
static gint
sticky_slot (GstEvent * a, GstEvent * b)
{
  GstEventType ta = GST_EVENT_TYPE (a), tb = GST_EVENT_TYPE (b);

  if (ta != tb)
    return ta < tb ? -1 : 1;
  if (ta == GST_EVENT_CUSTOM_DOWNSTREAM_STICKY
      || ta == GST_EVENT_CUSTOM_BOTH) {
    const GstStructure *sa = gst_event_get_structure (a);
    const GstStructure *sb = gst_event_get_structure (b);

    return g_strcmp0 (sa ? gst_structure_get_name (sa) : NULL,
        sb ? gst_structure_get_name (sb) : NULL);
  }
  return 0;
}

/* qlock: a sticky event taken out: the stream's state a new branch owes
 * (EOS is not kept, as a pad does not push it to a new peer). */
static void
locked_note_sticky (GstTbqSplit * split, GstEvent * event)
{
  guint i;

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    return;
  for (i = 0; i < split->sticky->len; i++) {
    GstEvent *e = g_ptr_array_index (split->sticky, i);
    gint c = sticky_slot (event, e);

    if (c == 0) {
      gst_event_replace ((GstEvent **) & split->sticky->pdata[i], event);
      return;
    }
    if (c < 0)
      break;
  }
  g_ptr_array_insert (split->sticky, (gint) i, gst_event_ref (event));
}

/* qlock: a flush forgets the segment, as pads do. */
static void
locked_forget_segment (GstTbqSplit * split)
{
  guint i;

  for (i = 0; i < split->sticky->len; i++) {
    if (GST_EVENT_TYPE (g_ptr_array_index (split->sticky, i))
        == GST_EVENT_SEGMENT) {
      g_ptr_array_remove_index (split->sticky, i);
      return;
    }
  }
}

/* qlock: whether a branch gets the events taken out from now on: one that
 * may take work, or is only busy with its last push. */
static gboolean
branch_listens (Branch * b)
{
  return !b->released && (b->flow == GST_FLOW_OK || b->flow == GST_FLOW_EOS
      || b->down_flushing);
}

/* qlock: whether `b` owes the stream's EOS (queued to it, not pushed). */
static gboolean
owes_eos (Branch * b)
{
  GList *l;

  for (l = b->pending.head; l != NULL; l = l->next)
    if (GST_EVENT_TYPE (l->data) == GST_EVENT_EOS)
      return TRUE;
  return FALSE;
}

/* qlock: whether downstream ended `b` with EOS while the stream's EOS was
 * queued to it: its task goes on to push that EOS, and it ends after. */
static gboolean
ended_owing_eos (Branch * b)
{
  return b->flow == GST_FLOW_EOS && !b->pushed_eos && owes_eos (b);
}

/* qlock: `event` (a reference taken) goes to every branch that listens,
 * pushed before its next item.  A branch whose downstream ended it with
 * EOS while the others go on (its task stopped) gets the stream's EOS
 * still, as a tee's pad does: its task runs again to push what it owes,
 * so that a sink there, or the join's pad, ends. */
static void
locked_queue_to_branches (GstTbqSplit * split, GstEvent * event)
{
  guint i;

  for (i = 0; i < split->branches->len; i++) {
    Branch *b = g_ptr_array_index (split->branches, i);

    if (!branch_listens (b))
      continue;
    g_queue_push_tail (&b->pending, gst_event_ref (event));
    if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && b->flow == GST_FLOW_EOS
        && !b->pushed_eos && gst_pad_is_active (b->pad))
      gst_pad_start_task (b->pad, (GstTaskFunction) split_loop, b->pad,
          NULL);
  }
  locked_wake_branches (split);
}

/* qlock: what a new or re-linked branch owes: the stream's sticky state. */
static void
locked_owe_sticky (GstTbqSplit * split, Branch * b)
{
  guint i;

  g_queue_clear_full (&b->pending, (GDestroyNotify) gst_event_unref);
  for (i = 0; i < split->sticky->len; i++)
    g_queue_push_tail (&b->pending,
        gst_event_ref (g_ptr_array_index (split->sticky, i)));
}

/* qlock: the branch takes work again (the queue starts, or it is linked
 * again).  One that was not listening owes the stream's sticky state as
 * it is now: it missed what was taken out meanwhile. */
static void
locked_branch_resume (GstTbqSplit * split, Branch * b)
{
  if (!branch_listens (b))
    locked_owe_sticky (split, b);
  b->down_flushing = FALSE;
  b->flow = GST_FLOW_OK;
  b->join = JOIN_UNKNOWN;
  b->pushed_eos = FALSE;
}

/* ---- pushing ---- */

/* qlock: the branch is done with one thing it was busy with. */
static void
locked_branch_idle (GstTbqSplit * split, Branch * b)
{
  b->busy--;
  pthread_cond_broadcast (&split->branch_idle);
}

/* qlock: push the events the branch owes, in order.  After EOS the
 * branch is done: GST_FLOW_EOS. */
static GstFlowReturn
locked_push_pending (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstEvent *event;

  while ((event = g_queue_pop_head (&b->pending)) != NULL) {
    GstEventType type = GST_EVENT_TYPE (event);

    if (b->join == JOIN_UNKNOWN && !GST_EVENT_IS_STICKY (event)) {
      /* The branch has not asked for its join: it was not linked when
       * its step looked (a linked one asks first, locked_branch_step).
       * An unlinked pad drops the event; one linked since must not take
       * it to a join pad before the bind query (that pad would decide
       * arrival order on it, and send it out at once, ahead of its
       * place). */
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u, not linked when it "
          "looked: %" GST_PTR_FORMAT " dropped", b->index, event);
      gst_event_unref (event);
      continue;
    }
    if (type == GST_EVENT_SEGMENT) {
      const GstSegment *seg;

      gst_event_parse_segment (event, &seg);
      b->owes_gap = seg->format == GST_FORMAT_TIME;
      b->gap_at = seg->rate >= 0 ? seg->start : seg->stop;
    }
    b->busy++;
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    gst_pad_push_event (b->pad, event);
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    locked_branch_idle (split, b);
    if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
      return GST_TBQUEUE_FLOW (tbq);
    if (type == GST_EVENT_EOS) {
      /* A new stream came in while the EOS was on its way (its STREAM_START
       * restarted the branches then, locked_branch_resume()): the branch
       * goes on with it, as if it had stopped and been started again. */
      if (!g_queue_is_empty (&b->pending)
          || gst_tbqueue_locked_stream_after_eos (tbq)) {
        GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u pushed EOS, a new "
            "stream follows", b->index);
        continue;
      }
      GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u pushed EOS", b->index);
      b->pushed_eos = TRUE;
      return GST_FLOW_EOS;
    }
  }
  return GST_FLOW_OK;
}

typedef struct
{
  GstTbqSplit *split;
  Branch *b;
  gboolean numbered;
  guint64 epoch;                /* the number's (gst_tbq_pair_assign) */
  guint64 seq;
} BranchPush;

/* The push of a buffer or list on a branch, qlock released: stamped with
 * its number, inside the pair's "split push" for the join; a branch the
 * join did not find synchronous then gets the marker. */
static GstFlowReturn
branch_push (GstPad * pad, GstMiniObject * data, gpointer user_data)
{
  BranchPush *p = user_data;
  GstTbqPair *pair = p->split->pair;
  GstTbqPairPush saved;
  GstFlowReturn ret;
  gboolean marker;
  gsize bytes;
  /* A list counts its buffers (as the join counts them). */
  guint buffers = GST_IS_BUFFER (data) ? 1 :
      gst_buffer_list_length (GST_BUFFER_LIST_CAST (data));

  if (!p->numbered) {
    bytes = GST_IS_BUFFER (data) ? gst_buffer_get_size (GST_BUFFER_CAST (data))
        : gst_buffer_list_calculate_size (GST_BUFFER_LIST_CAST (data));
    ret = GST_IS_BUFFER (data) ? gst_pad_push (pad, GST_BUFFER_CAST (data))
        : gst_pad_push_list (pad, GST_BUFFER_LIST_CAST (data));
    goto counted;
  }
  if (GST_IS_BUFFER (data)) {
    GstBuffer *buffer = GST_BUFFER_CAST (data);

    gst_tbq_pair_stamp_buffer (pair, &buffer, p->epoch, p->seq);
    bytes = gst_buffer_get_size (buffer);
    gst_tbq_pair_push_begin (pair, p->b->index, p->epoch, p->seq,
        &saved);
    ret = gst_pad_push (pad, buffer);
  } else {
    GstBufferList *list = GST_BUFFER_LIST_CAST (data);

    gst_tbq_pair_stamp_list (pair, &list, p->epoch, p->seq);
    bytes = gst_buffer_list_calculate_size (list);
    gst_tbq_pair_push_begin (pair, p->b->index, p->epoch, p->seq,
        &saved);
    ret = gst_pad_push_list (pad, list);
  }
  /* The join hears that the branch is done with it: from the done hook,
   * or from the marker that follows it through the worker.  Exactly one
   * of them (the finding may change meanwhile). */
  if (ret == GST_FLOW_OK) {
    p->b->pushed_numbered = TRUE;
    p->b->pushed_seq = p->seq;
    p->b->pushed_epoch = p->epoch;
  }
  marker = !gst_tbq_pair_push_end (pair, p->b->index, p->seq, ret, &saved)
      && ret == GST_FLOW_OK;
  if (marker) {
    p->b->marker_set = TRUE;
    p->b->marker_seq = p->seq;
    p->b->marker_epoch = p->epoch;
    gst_pad_push_event (pad, gst_tbq_pair_marker_new_in (pair, p->epoch,
            p->b->index, p->seq));
  }
counted:
  if (ret == GST_FLOW_OK) {
    TBQ_ADD (p->b->buffers, buffers);
    TBQ_ADD (p->b->bytes, bytes);
  }
  return ret;
}

/* qlock: push a buffer or a list taken out on branch `b`; with a join,
 * with the next number.  Numbered (and marked DISCONT after a leak) with
 * qlock held since it was taken, so in the queue's order whichever
 * branch takes the next item meanwhile; what the branch owes now was
 * queued after it was taken, and goes after it. */
static GstFlowReturn
locked_push_data (GstTbqSplit * split, Branch * b, GstMiniObject * data)
{
  GstTbQueue *tbq = &split->queue;
  BranchPush p = { split, b, FALSE, 0, 0 };
  GstFlowReturn ret;

  if (split->joined && b->join == JOIN_FOUND) {
    p.numbered = TRUE;
    p.seq = gst_tbq_pair_assign (split->pair, b->index, NULL, &p.epoch);
  }
  b->busy++;
  b->owes_gap = FALSE;
  ret = gst_tbqueue_locked_push_data_on (tbq, b->pad, data, branch_push, &p);
  locked_branch_idle (split, b);
  return ret;
}

/* qlock: an event taken out goes to every branch, at its place in each:
 * sticky ones as the stream's state; a serialized one that is not sticky
 * takes a number for every branch (the join sends the pair's copy at its
 * place).  Then this branch pushes what it owes. */
static GstFlowReturn
locked_dispatch_event (GstTbqSplit * split, Branch * b, GstEvent * event)
{
  gboolean slot = FALSE;

  /* EOS ends the numbers handed out so far (gsttbqpair.h). */
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && split->joined)
    gst_tbq_pair_set_place (split->pair, GST_MINI_OBJECT_CAST (event));
  if (GST_EVENT_IS_STICKY (event))
    locked_note_sticky (split, event);
  else if (split->joined) {
    gst_tbq_pair_assign (split->pair, 0, event, NULL);
    slot = TRUE;
  }
  locked_queue_to_branches (split, event);
  gst_event_unref (event);
  if (slot) {
    /* The join may sleep at this number (gst_tbq_pair_kick()). */
    b->busy++;
    GST_TBQUEUE_MUTEX_UNLOCK (&split->queue);
    gst_tbq_pair_kick (split->pair);
    GST_TBQUEUE_MUTEX_LOCK (&split->queue);
    locked_branch_idle (split, b);
  }
  return locked_push_pending (split, b);
}

/* ---- serialized queries: every branch answers, in order ---- */

/* qlock: whether a branch other than `b` is still pushing, or owes
 * events it can push. */
static gboolean
locked_others_busy (GstTbqSplit * split, Branch * b)
{
  guint i;

  for (i = 0; i < split->branches->len; i++) {
    Branch *o = g_ptr_array_index (split->branches, i);

    if (o != b && (o->busy || (o->flow == GST_FLOW_OK && !o->released
                && !g_queue_is_empty (&o->pending))))
      return TRUE;
  }
  return FALSE;
}

/* Allocation, as tee aggregates it: the largest alignment, prefix,
 * padding, size and minimum of buffers, the metas every branch supports,
 * no pool (upstream allocates: a branch added later needs nothing). */
typedef struct
{
  GstAllocationParams params;
  guint size, min_buffers, n;
} AllocSum;

static gboolean
ask_allocation (GstPad * pad, GstQuery * query, AllocSum * sum)
{
  GstCaps *caps;
  GstQuery *q;
  guint i, n, size, min;

  gst_query_parse_allocation (query, &caps, NULL);
  q = gst_query_new_allocation (caps, FALSE);
  if (!gst_pad_peer_query (pad, q)) {
    gst_query_unref (q);
    return FALSE;
  }
  n = gst_query_get_n_allocation_params (q);
  for (i = 0; i < n; i++) {
    GstAllocationParams p;

    gst_query_parse_nth_allocation_param (q, i, NULL, &p);
    sum->params.align = MAX (sum->params.align, p.align);
    sum->params.prefix = MAX (sum->params.prefix, p.prefix);
    sum->params.padding = MAX (sum->params.padding, p.padding);
  }
  if (gst_query_get_n_allocation_pools (q) > 0) {
    gst_query_parse_nth_allocation_pool (q, 0, NULL, &size, &min, NULL);
    sum->size = MAX (sum->size, size);
    sum->min_buffers = MAX (sum->min_buffers, min);
  }
  /* The first branch's metas, then only those every branch has (with no
   * parameters, or the same). */
  n = gst_query_get_n_allocation_metas (q);
  if (sum->n == 0) {
    for (i = 0; i < n; i++) {
      const GstStructure *param;
      GType api = gst_query_parse_nth_allocation_meta (q, i, &param);

      gst_query_add_allocation_meta (query, api, param);
    }
  } else {
    i = 0;
    while (i < gst_query_get_n_allocation_metas (query)) {
      const GstStructure *mine, *theirs = NULL;
      GType api = gst_query_parse_nth_allocation_meta (query, i, &mine);
      guint j;

      if (gst_query_find_allocation_meta (q, api, &j)) {
        gst_query_parse_nth_allocation_meta (q, j, &theirs);
        if ((mine == NULL && theirs == NULL) || (mine != NULL
                && theirs != NULL && gst_structure_is_equal (mine, theirs))) {
          i++;
          continue;
        }
      }
      gst_query_remove_nth_allocation_meta (query, i);
    }
  }
  sum->n++;
  gst_query_unref (q);
  return TRUE;
}

/* No lock: ask every branch in `pads`; TRUE when every one answered. */
static gboolean
ask_branches (GPtrArray * pads, GstQuery * query)
{
  AllocSum sum = { {0,}, 0, 0, 0 };
  gboolean alloc = GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION;
  gboolean res = pads->len > 0;
  guint i;

  gst_allocation_params_init (&sum.params);
  for (i = 0; i < pads->len && res; i++) {
    GstPad *pad = g_ptr_array_index (pads, i);

    res = alloc ? ask_allocation (pad, query, &sum)
        : gst_pad_peer_query (pad, query);
  }
  if (alloc && res) {
    if (sum.params.align || sum.params.prefix || sum.params.padding)
      gst_query_add_allocation_param (query, NULL, &sum.params);
    /* One buffer more when several branches take them at once (tee). */
    if (sum.n > 1)
      sum.min_buffers++;
    if (sum.size > 0 || sum.min_buffers > 0)
      gst_query_add_allocation_pool (query, NULL, sum.size, sum.min_buffers,
          0);
  }
  return res;
}

/* qlock: a serialized query, taken out by branch `b`: it waits until
 * every other branch has pushed what it took and owed (the barrier keeps
 * them from taking more), then asks every branch that may take work,
 * marked with its place in the order for a join (gsttbqpair.h); its
 * sender gets the answer as from tbqueue's src task. */
static gboolean locked_may_probe (GstTbqSplit * split, Branch * b);
static void locked_probe (GstTbqSplit * split, Branch * b);

/* The asking branch's marker, sent again while it asks (a thread of its
 * own: the query may have to wait in the join for it). */
typedef struct
{
  GstPad *pad;
  GstQuery *query;
} OwnMarker;

static gpointer
own_marker_main (gpointer data)
{
  OwnMarker *m = data;

  gst_pad_peer_query (m->pad, m->query);
  gst_query_unref (m->query);
  gst_object_unref (m->pad);
  g_free (m);
  return NULL;
}

static GstFlowReturn
locked_answer_query (GstTbqSplit * split, Branch * b, GstQuery * query)
{
  GstTbQueue *tbq = &split->queue;
  GPtrArray *pads;
  GThread *own = NULL;
  GstFlowReturn ret;
  gboolean res, placed;
  guint i;

  split->barrier = b;
  locked_wake_branches (split);
  ret = locked_push_pending (split, b);
  while (ret == GST_FLOW_OK && GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK
      && locked_others_busy (split, b))
    pthread_cond_wait (&split->branch_idle, &tbq->qlock);
  if (ret == GST_FLOW_OK)
    ret = GST_TBQUEUE_FLOW (tbq);
  if (ret != GST_FLOW_OK && ret != GST_FLOW_EOS)
    goto abandoned;
  pads = g_ptr_array_new_with_free_func (gst_object_unref);
  for (i = 0; i < split->branches->len; i++) {
    Branch *o = g_ptr_array_index (split->branches, i);

    if (!o->released && (o->flow == GST_FLOW_OK || o == b)
        && gst_pad_is_linked (o->pad))
      g_ptr_array_add (pads, gst_object_ref (o->pad));
  }
  tbq->query_in_use = query;
  /* With a join: where the query belongs in the order, for the join to
   * hold each branch's copy until everything before it is out (an input
   * before it may still be inside another branch's worker). */
  placed = split->joined;
  if (placed)
    gst_tbq_pair_set_place (split->pair, GST_MINI_OBJECT_CAST (query));
  /* The join holds each branch's copy until every number before the
   * query's place is resolved, and the branches are asked in turn: the
   * marker of this branch's last number may be held by its worker (an
   * encoder holds serialized events until its next frame), and none
   * comes while it asks.  It goes again first, as the query the join
   * answers at once, from a thread of its own (it may wait behind this
   * branch's worker as the copies do).  The other branches send theirs
   * while they wait (locked_branch_step()). */
  if (placed && locked_may_probe (split, b)) {
    OwnMarker *m = g_new0 (OwnMarker, 1);

    m->pad = gst_object_ref (b->pad);
    m->query = gst_tbq_pair_marker_query_new_in (split->pair,
        b->pushed_epoch, b->index, b->pushed_seq);
    own = g_thread_new ("tbqsplit-marker", own_marker_main, m);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  res = ask_branches (pads, query);
  if (own != NULL)
    g_thread_join (own);
  g_ptr_array_unref (pads);
  if (placed)
    gst_tbq_pair_clear_place (split->pair, GST_MINI_OBJECT_CAST (query));
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  tbq->query_in_use = NULL;
  split->barrier = NULL;
  locked_wake_branches (split);
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto abandoned_locked;
  tbq->last_query = res;
  tbq->last_handled_query = query;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  return ret;

abandoned:
  split->barrier = NULL;
  locked_wake_branches (split);
abandoned_locked:
  tbq->last_query = FALSE;
  tbq->last_handled_query = query;
  GST_TBQUEUE_BROADCAST (tbq, query_handled);
  return ret != GST_FLOW_OK ? ret : GST_TBQUEUE_FLOW (tbq);
}

/* ---- the branch's task ---- */

/* qlock: whether a join closes branch `b`: the pair's bind query down the
 * branch, with qlock released.  The first branch that finds one makes
 * the split number its items and keep to the window. */
static void
locked_find_join (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstQuery *query = gst_tbq_pair_bind_query_new (split->pair, b->index);
  GstPad *pad = gst_object_ref (b->pad);
  gboolean found;

  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  found = gst_pad_peer_query (pad, query)
      && gst_tbq_pair_bind_query_bound (query);
  gst_query_unref (query);
  gst_object_unref (pad);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  /* The others may wait for every branch to know (branch_step). */
  pthread_cond_broadcast (&split->branch_idle);
  if (b->join != JOIN_UNKNOWN)
    return;
  b->join = found ? JOIN_FOUND : JOIN_NONE;
  GST_DEBUG_OBJECT (tbq, "branch %u: %s", b->index, found ? "a join closes it"
      : "no join");
  if (found && !split->joined) {
    split->joined = TRUE;
    locked_update_window (split);
  }
}

/* qlock: whether a branch that may take work has not asked for its join
 * yet. */
static gboolean
locked_discovery_pending (GstTbqSplit * split)
{
  guint i;

  for (i = 0; i < split->branches->len; i++) {
    Branch *o = g_ptr_array_index (split->branches, i);

    if (!o->released && o->flow == GST_FLOW_OK && o->join == JOIN_UNKNOWN
        && gst_pad_is_linked (o->pad))
      return TRUE;
  }
  return FALSE;
}

/* qlock: wait until there is something to take, as tbqueue's src task
 * does (underrun, running and pushing as queue emits them, once for all
 * branches), or until the branch has something else to do (events it
 * owes, a barrier, its flow).  FALSE when the element's flow is not OK. */
static gboolean
locked_wait_for_data (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  guint32 key;

  if (gst_tbqueue_locked_is_empty (tbq, NULL) && !split->underrun) {
    split->underrun = TRUE;
    TBQ_ADD (tbq->counters.underruns, 1);
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    gst_tbqueue_emit (tbq, SIGNAL_UNDERRUN);
    GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  }
  while (gst_tbqueue_locked_is_empty (tbq, &key)) {
    if (!g_queue_is_empty (&b->pending) || split->barrier != NULL
        || b->flow != GST_FLOW_OK)
      return TRUE;
    if (G_UNLIKELY (tbq->spilling) && !tbq->reader_sleeping)
      tbq_reader_note_idle (tbq->reader);
    if (split->joined && locked_may_probe (split, b)) {
      /* Its worker may hold the marker of its last number until its next
       * input (an encoder), and none may come until that number is
       * resolved: the split's input waits on it further up (a pair
       * around this one, whose marker waits in this split behind it).
       * It sends the marker again now and then, as it does waiting for
       * room. */
      if (gst_tbqueue_locked_wait_sink_until (tbq, key, tbq_clock_ns ()
              + PROBE_INTERVAL * 1000) && gst_tbqueue_locked_is_empty (tbq,
              NULL)
          && g_queue_is_empty (&b->pending) && split->barrier == NULL)
        locked_probe (split, b);
      if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
        goto out_flushing;
      continue;
    }
    GST_TBQUEUE_WAIT_ADD_CHECK (tbq, key, out_flushing);
  }
  if (split->underrun) {
    split->underrun = FALSE;
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    gst_tbqueue_emit (tbq, SIGNAL_RUNNING);
    gst_tbqueue_emit (tbq, SIGNAL_PUSHING);
    GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  }
  return TRUE;

out_flushing:
  return FALSE;
}

/* qlock: take the next item and dispatch it; busy all along (a list
 * being gathered, a push). */
static GstFlowReturn
locked_take_item (GstTbqSplit * split, Branch * b)
{
  GstFlowReturn ret;

  b->busy++;
  ret = locked_take_and_dispatch (split, b);
  locked_branch_idle (split, b);
  return ret;
}

static GstFlowReturn
locked_take_and_dispatch (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstTbqItem item;
  guint32 key;

  gst_tbqueue_locked_leak_if_pending (tbq);
  /* A leak may have left sticky events the branch owes: they come before
   * the next item (the step pushes them first). */
  if (!g_queue_is_empty (&b->pending))
    return GST_FLOW_OK;
  key = tbq_reader_prepare_wait (tbq->reader);
  switch (gst_tbqueue_locked_dequeue (tbq, &item)) {
    case DEQUEUE_ITEM:
      if (GST_IS_EVENT (item.object))
        return locked_dispatch_event (split, b, GST_EVENT_CAST (item.object));
      if (GST_IS_QUERY (item.object))
        return locked_answer_query (split, b, GST_QUERY_CAST (item.object));
      return locked_push_data (split, b, item.object);
    case DEQUEUE_EMPTY:
      gst_tbqueue_locked_wait_for_records (tbq, key);
      return GST_TBQUEUE_FLOW (tbq);
    case DEQUEUE_SPILL_FAILED:
      return gst_tbqueue_locked_spill_failed (tbq);
    case DEQUEUE_REST:
      gst_tbqueue_locked_leak_rest (tbq, &item);
      return GST_FLOW_OK;
    case DEQUEUE_AGAIN:
      return GST_FLOW_OK;
    default:
      return GST_TBQUEUE_FLOW (tbq);
  }
}

/* qlock: a round of a branch that leads to no join where the others lead
 * to one (a third branch to a plain sink, a branch to a second join): it
 * takes no work (the join waits for the numbers of what a branch takes),
 * but it gets the stream's events, EOS too, and a GAP after each SEGMENT,
 * so that a sink there prerolls and the pipeline ends. */
static GstFlowReturn
locked_off_join_step (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstEvent *gap;

  if (!b->warned_no_join) {
    b->warned_no_join = TRUE;
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    GST_ELEMENT_WARNING (tbq, STREAM, FAILED,
        ("Branch %u does not lead to the tbqjoin the other branches lead "
            "to: it gets no data, only the stream's events", b->index),
        (NULL));
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    return GST_TBQUEUE_FLOW (tbq);
  }
  if (b->owes_gap && GST_CLOCK_TIME_IS_VALID (b->gap_at)) {
    b->owes_gap = FALSE;
    gap = gst_event_new_gap (b->gap_at, GST_CLOCK_TIME_NONE);
    b->busy++;
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    gst_pad_push_event (b->pad, gap);
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    locked_branch_idle (split, b);
    return GST_TBQUEUE_FLOW (tbq);
  }
  /* Until it owes events (locked_queue_to_branches wakes it), the flow
   * changes, or it is linked elsewhere (a RECONFIGURE asks again). */
  pthread_cond_wait (&split->branch_idle, &tbq->qlock);
  return GST_TBQUEUE_FLOW (tbq);
}

/* qlock: whether branch `b`, waiting for room in the window, sends its
 * marker again: it is not synchronous with the join (which then hears of
 * its numbers from markers), and the last number it pushed is not
 * resolved.  A worker that dropped the marker (a valve dropping every
 * event that is not sticky) would else hold the window full for good,
 * even once it passes events again. */
static gboolean
locked_may_probe (GstTbqSplit * split, Branch * b)
{
  GstTbqPair *pair = split->pair;

  return b->pushed_numbered && g_queue_is_empty (&b->pending)
      && GST_TBQUEUE_FLOW (&split->queue) == GST_FLOW_OK
      && b->marker_set && b->marker_epoch == gst_tbq_pair_epoch (pair)
      && b->marker_seq >= gst_tbq_pair_resolved (pair)
      && b->pushed_epoch == gst_tbq_pair_epoch (pair)
      && b->pushed_seq >= gst_tbq_pair_resolved (pair);
}

/* qlock: the marker of the last number `b` pushed, again: as a
 * serialized query first (it passes a worker that holds or drops the
 * marker event: a video encoder, a valve), as the event when the join
 * did not answer it (an element on the way answered it, or refused it).
 * A marker sent twice is a done mark the join drops the second time; one
 * of a flushed epoch is dropped too.  The query returns once the worker
 * passed on everything before it (a worker with a queue: once that queue
 * drained), or refused it. */
static void
locked_probe (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstQuery *query;
  gboolean answered;

  if (!locked_may_probe (split, b))
    return;
  query = gst_tbq_pair_marker_query_new_in (split->pair, b->pushed_epoch,
      b->index, b->pushed_seq);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u: marker of %" G_GUINT64_FORMAT
      " again", b->index, b->pushed_seq);
  b->busy++;
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  answered = gst_pad_peer_query (b->pad, query)
      && gst_tbq_pair_marker_query_answered (query);
  gst_query_unref (query);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u: the join %s the marker query",
      b->index, answered ? "answered" : "did not answer");
  if (!answered)
    gst_pad_push_event (b->pad, gst_tbq_pair_marker_new_in (split->pair,
            b->pushed_epoch, b->index, b->pushed_seq));
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  locked_branch_idle (split, b);
}

/* qlock: waits on branch_idle until monotonic time `end` (microseconds):
 * TRUE when the time came. */
static gboolean
locked_wait_idle_until (GstTbqSplit * split, gint64 end)
{
  return tbq_cond_wait_until (&split->branch_idle, &split->queue.qlock,
      end * 1000);
}

/* qlock: branch `b` waits for what is downstream of it to stop flushing
 * (down_flushing), looking every PROBE_INTERVAL: it takes work again
 * then, what it owes first (GstPad sends its sticky events again). */
static GstFlowReturn
locked_wait_downstream (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;
  GstPad *pad = gst_object_ref (b->pad), *peer;
  gboolean flushing = FALSE;

  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if ((peer = gst_pad_get_peer (pad)) != NULL) {
    GST_OBJECT_LOCK (peer);
    flushing = GST_PAD_IS_FLUSHING (peer);
    GST_OBJECT_UNLOCK (peer);
    gst_object_unref (peer);
  }
  gst_object_unref (pad);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (!b->down_flushing || b->released)
    return GST_TBQUEUE_FLOW (tbq);
  if (!flushing) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "branch %u: downstream plays "
        "again", b->index);
    locked_branch_resume (split, b);
    return GST_TBQUEUE_FLOW (tbq);
  }
  locked_wait_idle_until (split, g_get_monotonic_time () + PROBE_INTERVAL);
  return GST_TBQUEUE_FLOW (tbq);
}

/* qlock: one round of branch `b`'s task (see the top of the file). */
static GstFlowReturn
locked_branch_step (GstTbqSplit * split, Branch * b)
{
  GstTbQueue *tbq = &split->queue;

  if (b->down_flushing)
    return locked_wait_downstream (split, b);

  /* Before anything goes down a branch, the join (if any) learns which
   * branch its sink pad is. */
  if (b->join == JOIN_UNKNOWN && b->flow == GST_FLOW_OK
      && gst_pad_is_linked (b->pad)) {
    locked_find_join (split, b);
    return GST_TBQUEUE_FLOW (tbq);
  }
  if (!g_queue_is_empty (&b->pending))
    return locked_push_pending (split, b);
  if (b->flow != GST_FLOW_OK)
    return b->flow;
  if (!gst_pad_is_linked (b->pad))
    return GST_FLOW_NOT_LINKED;
  if (split->barrier != NULL || tbq->partial != NULL) {
    /* A query waits for the others, or another branch gathers a list
     * (its rest must follow it).  A branch whose last marker may be held
     * by its worker sends it again meanwhile, as it does waiting for
     * room: the join holds the query's copies until it is resolved. */
    if (split->barrier != NULL && split->barrier != b
        && locked_may_probe (split, b)) {
      if (locked_wait_idle_until (split, g_get_monotonic_time ()
              + PROBE_INTERVAL) && split->barrier != NULL
          && locked_may_probe (split, b))
        locked_probe (split, b);
    } else {
      pthread_cond_wait (&split->branch_idle, &tbq->qlock);
    }
    return GST_TBQUEUE_FLOW (tbq);
  }
  if (split->joined && b->join == JOIN_NONE)
    return locked_off_join_step (split, b);
  if (!locked_wait_for_data (split, b))
    return GST_TBQUEUE_FLOW (tbq);
  /* The wait released qlock: another branch may have begun gathering a
   * list meanwhile (the records that woke this one may be its rest). */
  if (!g_queue_is_empty (&b->pending) || split->barrier != NULL
      || tbq->partial != NULL || b->flow != GST_FLOW_OK
      || b->join == JOIN_UNKNOWN)
    return GST_FLOW_OK;
  if (locked_discovery_pending (split)) {
    /* Whether a branch may take work depends on whether any branch leads
     * to a join: a branch that found none must not take an item the
     * others' join would wait for, nor lose it down a dead end. */
    pthread_cond_wait (&split->branch_idle, &tbq->qlock);
    return GST_TBQUEUE_FLOW (tbq);
  }
  if (split->joined && b->join != JOIN_FOUND)
    return GST_FLOW_OK;         /* (found none meanwhile: the next step) */
  /* Looked at again after the waits: a branch unlinked meanwhile takes
   * nothing (what it took would be lost). */
  if (!gst_pad_is_linked (b->pad))
    return GST_FLOW_NOT_LINKED;
  if (split->joined && !gst_tbq_pair_has_room_for (split->pair, b->index)) {
    guint key = gst_tbq_pair_wait_key (split->pair);

    if (!gst_tbq_pair_has_room_for (split->pair, b->index)) {
      /* A branch that may have to send its marker again wakes now and
       * then to do so (a liveness probe, not a decision: nothing is
       * taken for lost after any time). */
      gboolean probe = locked_may_probe (split, b);
      gboolean room;

      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      room = gst_tbq_pair_wait_room_for (split->pair, key, b->index,
          probe ? g_get_monotonic_time () + PROBE_INTERVAL : -1);
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      if (!room && probe
          && !gst_tbq_pair_has_room_for (split->pair, b->index))
        locked_probe (split, b);
    }
    return GST_TBQUEUE_FLOW (tbq);
  }
  return locked_take_item (split, b);
}

/* qlock: branch `b` stopped with `ret`; TRUE when that is its own end
 * (the others go on), FALSE when it is the element's (an error). */
static gboolean
locked_branch_ended (GstTbqSplit * split, Branch * b, GstFlowReturn ret)
{
  GstTbQueue *tbq = &split->queue;
  gboolean eos = FALSE, flushing = FALSE, pushed_eos = FALSE;
  guint i;

  if (ret != GST_FLOW_NOT_LINKED && ret != GST_FLOW_EOS
      && ret != GST_FLOW_FLUSHING)
    return FALSE;
  b->flow = ret;
  /* (The split's own flushing stops it in split_loop() before this.) */
  if (ret == GST_FLOW_FLUSHING && !b->released) {
    GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "branch %u: downstream flushes: "
        "it waits for it", b->index);
    b->down_flushing = TRUE;
    return TRUE;
  }
  GST_CAT_DEBUG_OBJECT (DATAFLOW, tbq, "branch %u stops: %s", b->index,
      gst_flow_get_name (ret));
  pthread_cond_broadcast (&split->branch_idle);
  for (i = 0; i < split->branches->len; i++) {
    Branch *o = g_ptr_array_index (split->branches, i);

    if (o->released)
      continue;
    /* (A branch off the join takes no work, locked_off_join_step(): it
     * goes on only to push the events it owes, EOS among them.) */
    if (o->flow == GST_FLOW_OK && (!(split->joined && o->join == JOIN_NONE)
            || !g_queue_is_empty (&o->pending) || o->busy))
      return TRUE;
    /* (One that downstream ended pushes the stream's EOS still,
     * locked_queue_to_branches(): it ends after that.  One whose
     * downstream flushes takes work again once it is done.) */
    if (ended_owing_eos (o) || o->down_flushing)
      return TRUE;
    eos |= o->flow == GST_FLOW_EOS;
    flushing |= o->flow == GST_FLOW_FLUSHING;
    pushed_eos |= o->pushed_eos;
  }
  /* No branch takes work any more: the element's flow says why, as
   * GstFlowCombiner would: FLUSHING first (downstream stops first in a
   * pipeline that stops: upstream must pause, not fail with NOT_LINKED),
   * then EOS, then NOT_LINKED. */
  gst_tbqueue_locked_set_flow (tbq, flushing ? GST_FLOW_FLUSHING : eos ?
      GST_FLOW_EOS : GST_FLOW_NOT_LINKED);
  /* Downstream ended the stream (no branch pushed the EOS itself): the
   * EOS upstream then sends goes to every branch (sink_enqueue_event). */
  tbq->downstream_ended = !flushing && eos && !pushed_eos;
  return TRUE;
}

static void
split_loop (GstPad * pad)
{
  GstTbQueue *tbq = GST_TBQUEUE (GST_PAD_PARENT (pad));
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  Branch *b = pad_branch (pad);
  GstFlowReturn ret;
  gboolean eos;

  GST_TBQUEUE_MUTEX_LOCK_CHECK (tbq, out_flushing);
  ret = locked_branch_step (split, b);
  if (ret == GST_FLOW_OK) {
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    return;
  }
  if (GST_TBQUEUE_FLOW (tbq) != GST_FLOW_OK)
    goto out_flushing;
  if (locked_branch_ended (split, b, ret)) {
    /* Ended by downstream while the stream's EOS was queued to it (it
     * came during the push): the task pushes that EOS first. */
    if (!ended_owing_eos (b) && !b->down_flushing)
      gst_pad_pause_task (pad);
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    return;
  }
  gst_tbqueue_locked_set_flow (tbq, ret);

out_flushing:
  eos = TBQ_LOAD (tbq->eos);
  ret = GST_TBQUEUE_FLOW (tbq);
  gst_pad_pause_task (pad);
  GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "branch %u: pause task, reason: %s",
      b->index, gst_flow_get_name (ret));
  if (ret == GST_FLOW_FLUSHING) {
    gst_tbqueue_locked_drain_visible (tbq);
  } else {
    GST_TBQUEUE_BROADCAST (tbq, item_del);
    tbq->last_query = FALSE;
    GST_TBQUEUE_BROADCAST (tbq, query_handled);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  /* Tell the application we gave up, unless upstream will (EOS). */
  if (eos && (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS)) {
    GST_ELEMENT_FLOW_ERROR (tbq, ret);
    gst_pad_push_event (pad, gst_event_new_eos ());
  }
}

/* ---- the queue's src side (GstTbQueueClass) ---- */

static gboolean
split_locked_start_src (GstTbQueue * tbq)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  gboolean ok = TRUE;
  guint i;

  split->joined = FALSE;
  split->underrun = FALSE;
  for (i = 0; i < split->branches->len; i++) {
    Branch *b = g_ptr_array_index (split->branches, i);

    if (b->released || !gst_pad_is_active (b->pad))
      continue;
    locked_branch_resume (split, b);
    ok &= gst_pad_start_task (b->pad, (GstTaskFunction) split_loop, b->pad,
        NULL);
  }
  return ok;
}

/* qlock: the pads of the branches (references). */
static GPtrArray *
locked_branch_pads (GstTbqSplit * split)
{
  GPtrArray *pads = g_ptr_array_new_with_free_func (gst_object_unref);
  guint i;

  for (i = 0; i < split->branches->len; i++)
    g_ptr_array_add (pads, gst_object_ref (((Branch *)
                g_ptr_array_index (split->branches, i))->pad));
  return pads;
}

static void
split_pause_src (GstTbQueue * tbq)
{
  GPtrArray *pads;
  guint i;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  pads = locked_branch_pads (GST_TBQ_SPLIT (tbq));
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  for (i = 0; i < pads->len; i++)
    gst_pad_pause_task (g_ptr_array_index (pads, i));
  g_ptr_array_unref (pads);
}

static gboolean
split_src_active (GstTbQueue * tbq)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  gboolean active = FALSE;
  guint i;

  /* qlock or not: an unlocked look may race a request, which activates
   * its pad itself. */
  for (i = 0; i < split->branches->len && !active; i++)
    active = gst_pad_is_active (((Branch *)
            g_ptr_array_index (split->branches, i))->pad);
  return active;
}

static gboolean
split_push_downstream (GstTbQueue * tbq, GstEvent * event)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  GPtrArray *pads;
  gboolean res = TRUE;
  guint i;

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START)
    gst_tbq_pair_flush_start (split->pair);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP) {
    guint j;

    locked_forget_segment (split);
    for (j = 0; j < split->branches->len; j++) {
      Branch *b = g_ptr_array_index (split->branches, j);

      /* What a branch owed before the flush: its sticky state now. */
      locked_owe_sticky (split, b);
    }
  }
  pads = locked_branch_pads (split);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  /* The new epoch before any FLUSH_STOP goes down: a join whose flush
   * ends (its last pad's FLUSH_STOP) restarts its order at the pair's
   * epoch, and in the old one it found the numbers handed to every
   * branch before the flush still held, and sent their events (a custom
   * event from before the flush came out after FLUSH_STOP: a soak). */
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    gst_tbq_pair_flush_stop (split->pair);
  for (i = 0; i < pads->len; i++)
    res &= gst_pad_push_event (g_ptr_array_index (pads, i),
        gst_event_ref (event));
  g_ptr_array_unref (pads);
  gst_event_unref (event);
  return res;
}

static void
split_locked_store_sticky (GstTbQueue * tbq, GstEvent * event)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);

  locked_note_sticky (split, event);
  locked_queue_to_branches (split, event);
}

static void
split_locked_flow_changed (GstTbQueue * tbq, GstFlowReturn flow)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);

  if (flow == GST_FLOW_OK)
    return;
  /* A branch waiting for room in the window looks at the flow again. */
  gst_tbq_pair_interrupt (split->pair);
  pthread_cond_broadcast (&split->branch_idle);
}

/* ---- the branches' pads ---- */

/* An upstream event goes upstream once, however many branches bring it
 * (a join sends each one up every branch). */
static gboolean
first_time_upstream (GstTbqSplit * split, GstEvent * event)
{
  guint32 seqnum = GST_EVENT_SEQNUM (event);
  guint i, n;

  GST_OBJECT_LOCK (split);
  n = MIN (split->n_sent, SENT_SEQNUMS);
  for (i = 0; i < n; i++) {
    if (split->sent[i] == seqnum) {
      GST_OBJECT_UNLOCK (split);
      return FALSE;
    }
  }
  split->sent[split->n_sent++ % SENT_SEQNUMS] = seqnum;
  GST_OBJECT_UNLOCK (split);
  return TRUE;
}

static gboolean
branch_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  Branch *b = pad_branch (pad);

  if (GST_EVENT_TYPE (event) == GST_EVENT_RECONFIGURE) {
    /* Linked again, maybe through other elements: look for the join
     * again, and take work again. */
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    if (b->join == JOIN_NONE) {
      b->join = JOIN_UNKNOWN;
      /* One off the join waits for events: it asks again. */
      pthread_cond_broadcast (&split->branch_idle);
    }
    if (b->flow == GST_FLOW_NOT_LINKED && !b->released) {
      locked_branch_resume (split, b);
      if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_NOT_LINKED)
        gst_tbqueue_locked_set_flow (tbq, GST_FLOW_OK);
      if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
        gst_pad_start_task (pad, (GstTaskFunction) split_loop, pad, NULL);
    }
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  }
  if (!first_time_upstream (split, event)) {
    GST_CAT_LOG_OBJECT (DATAFLOW, tbq, "%s (seqnum %u) already sent upstream",
        GST_EVENT_TYPE_NAME (event), GST_EVENT_SEQNUM (event));
    gst_event_unref (event);
    return TRUE;
  }
  return gst_pad_push_event (tbq->sinkpad, event);
}

static gboolean
branch_activate_mode (GstPad * pad, GstObject * parent, GstPadMode mode,
    gboolean active)
{
  GstTbQueue *tbq = GST_TBQUEUE (parent);
  GstTbqSplit *split = GST_TBQ_SPLIT (tbq);
  Branch *b = pad_branch (pad);
  gboolean released, res;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    if (tbq->q == NULL)
      return FALSE;
    GST_TBQUEUE_MUTEX_LOCK (tbq);
    /* A branch requested while the others run starts alone; else the
     * queue starts with every active branch. */
    if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK) {
      locked_branch_resume (split, b);
      res = gst_pad_start_task (pad, (GstTaskFunction) split_loop, pad, NULL);
    } else {
      res = gst_tbqueue_locked_start_streaming (tbq);
    }
    GST_TBQUEUE_MUTEX_UNLOCK (tbq);
    return res;
  }
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  released = b->released;
  if (released) {
    /* Only this branch goes: the others go on. */
    b->flow = GST_FLOW_FLUSHING;
    locked_wake_branches (split);
  } else {
    gst_tbqueue_locked_set_flow (tbq, GST_FLOW_FLUSHING);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  res = gst_pad_stop_task (pad);
  if (released)
    return res;
  gst_tbqueue_copy_task_stop (tbq);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (tbq->reader != NULL)
    gst_tbqueue_locked_drain_visible (tbq);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  return res;
}

/* qlock: where `b` is in the list (it is there). */
static guint
find_branch (GstTbqSplit * split, Branch * b)
{
  guint i;

  for (i = 0; i < split->branches->len; i++)
    if (g_ptr_array_index (split->branches, i) == b)
      break;
  return i;
}

static void
branch_free (gpointer data)
{
  Branch *b = data;

  g_queue_clear_full (&b->pending, (GDestroyNotify) gst_event_unref);
  g_free (b);
}

static GstPad *
split_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (element);
  GstTbQueue *tbq = &split->queue;
  Branch *b = g_new0 (Branch, 1);
  guint index;
  gchar *pad_name;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (name != NULL && sscanf (name, "src_%u", &index) == 1) {
    guint i;

    for (i = 0; i < split->branches->len; i++) {
      if (((Branch *) g_ptr_array_index (split->branches, i))->index == index) {
        GST_TBQUEUE_MUTEX_UNLOCK (tbq);
        g_free (b);
        GST_WARNING_OBJECT (split, "pad %s exists already", name);
        return NULL;
      }
    }
    split->next_index = MAX (split->next_index, index + 1);
  } else {
    index = split->next_index++;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);

  pad_name = g_strdup_printf ("src_%u", index);
  b->pad = gst_pad_new_from_template (templ, pad_name);
  g_free (pad_name);
  b->index = index;
  b->flow = GST_FLOW_FLUSHING;
  g_queue_init (&b->pending);
  gst_pad_set_element_private (b->pad, b);
  gst_pad_set_event_function (b->pad, GST_DEBUG_FUNCPTR (branch_event));
  gst_pad_set_query_function (b->pad,
      GST_DEBUG_FUNCPTR (gst_tbqueue_src_query));
  gst_pad_set_activatemode_function (b->pad,
      GST_DEBUG_FUNCPTR (branch_activate_mode));
  GST_PAD_SET_PROXY_CAPS (b->pad);

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  locked_owe_sticky (split, b);
  g_ptr_array_add (split->branches, b);
  locked_update_window (split);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);

  /* In PAUSED or PLAYING, adding it activates it: its task starts. */
  gst_element_add_pad (element, b->pad);
  return b->pad;
}

static void
split_release_pad (GstElement * element, GstPad * pad)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (element);
  GstTbQueue *tbq = &split->queue;
  Branch *b = pad_branch (pad);

  /* It takes nothing more, and what it took it pushes: then its task
   * leaves. */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  b->released = TRUE;
  b->flow = GST_FLOW_FLUSHING;
  locked_wake_branches (split);
  /* Its task may wait for room in the window (holding its pad's stream
   * lock, which the deactivation below takes): it looks again. */
  gst_tbq_pair_interrupt (split->pair);
  while (b->busy > 0)
    pthread_cond_wait (&split->branch_idle, &tbq->qlock);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  gst_pad_set_active (pad, FALSE);
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  g_ptr_array_steal_index (split->branches, find_branch (split, b));
  locked_update_window (split);
  locked_wake_branches (split);
  /* It was the last branch that could take work (or the last branch):
   * the others' end is the element's, NOT_LINKED with none left, as a
   * tee with no src pad says.  Its task may have stopped before its loop
   * said so (the deactivation above ends it between two steps): an
   * upstream thread that went on meanwhile would wait at a full queue
   * that nothing drains. */
  if (GST_TBQUEUE_FLOW (tbq) == GST_FLOW_OK)
    locked_branch_ended (split, b, GST_FLOW_FLUSHING);
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  gst_element_remove_pad (element, pad);
  branch_free (b);
}

/* ---- the sink pad: the bind query of an outer pair ---- */

static gboolean
split_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (parent);
  GstTbQueue *tbq = &split->queue;
  GstPad *down = NULL;
  gboolean res = FALSE;
  guint i;

  if (!gst_tbq_pair_parse_bind_query (query, NULL, NULL, NULL))
    return gst_tbqueue_sink_query (pad, parent, query);
  /* Another split's question on its way to its join, which is past this
   * split's own join: one branch leads there as well as any. */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  for (i = 0; i < split->branches->len && down == NULL; i++) {
    Branch *b = g_ptr_array_index (split->branches, i);

    if (!b->released && gst_pad_is_linked (b->pad))
      down = gst_object_ref (b->pad);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
  if (down == NULL)
    return FALSE;
  gst_tbq_pair_bind_query_cross (query, 1);
  res = gst_pad_peer_query (down, query);
  gst_tbq_pair_bind_query_cross (query, -1);
  gst_object_unref (down);
  return res;
}

/* ---- the object ---- */

/* The pads are inactive (their sticky events gone, as GStreamer's pads
 * forget them): so is the stream, the split's record of its sticky
 * events and what each branch owed of it. */
static void
forget_stream (GstTbqSplit * split)
{
  GstTbQueue *tbq = &split->queue;
  guint i;

  GST_TBQUEUE_MUTEX_LOCK (tbq);
  g_ptr_array_set_size (split->sticky, 0);
  for (i = 0; i < split->branches->len; i++) {
    Branch *b = g_ptr_array_index (split->branches, i);

    g_queue_clear_full (&b->pending, (GDestroyNotify) gst_event_unref);
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);
}

static GstStateChangeReturn
split_change_state (GstElement * element, GstStateChange transition)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (element);
  GstStateChangeReturn ret;

  /* A new stream starts at number 0 of a new epoch. */
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    gst_tbq_pair_flush_stop (split->pair);
  else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_tbq_pair_flush_start (split->pair);
  ret = GST_ELEMENT_CLASS (gst_tbq_split_parent_class)->change_state (element,
      transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    forget_stream (split);
    /* The branches are stopped: the events held for numbers the join did
     * not pass go now, not at the next start (the join, stopped first in
     * a bin, passes none of them any more; one still playing finds a new
     * epoch, as at the next start). */
    gst_tbq_pair_flush_stop (split->pair);
    gst_tbq_pair_flush_start (split->pair);
  }
  return ret;
}

static GstStructure *
branch_stats (Branch * b)
{
  return gst_structure_new ("branch", "pad", G_TYPE_STRING,
      GST_PAD_NAME (b->pad), "buffers", G_TYPE_UINT64, TBQ_LOAD (b->buffers),
      "bytes", G_TYPE_UINT64, TBQ_LOAD (b->bytes), NULL);
}

static void
split_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (object);
  GstTbQueue *tbq = &split->queue;

  switch (prop_id) {
    case PROP_MAX_IN_FLIGHT:
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      split->max_in_flight = g_value_get_uint (value);
      locked_update_window (split);
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      break;
    default:
      G_OBJECT_CLASS (gst_tbq_split_parent_class)->set_property (object,
          prop_id, value, pspec);
      break;
  }
}

static void
split_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (object);
  GstTbQueue *tbq = &split->queue;

  switch (prop_id) {
    case PROP_MAX_IN_FLIGHT:
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      g_value_set_uint (value, split->max_in_flight);
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      break;
    case PROP_CURRENT_IN_FLIGHT:
      g_value_set_uint (value, gst_tbq_pair_in_flight (split->pair));
      break;
    case PROP_BRANCH_STATS:{
      GValue list = G_VALUE_INIT;
      GstStructure *s;
      guint i;

      gst_value_list_init (&list, 0);
      GST_TBQUEUE_MUTEX_LOCK (tbq);
      for (i = 0; i < split->branches->len; i++) {
        GValue v = G_VALUE_INIT;

        g_value_init (&v, GST_TYPE_STRUCTURE);
        g_value_take_boxed (&v,
            branch_stats (g_ptr_array_index (split->branches, i)));
        gst_value_list_append_and_take_value (&list, &v);
      }
      GST_TBQUEUE_MUTEX_UNLOCK (tbq);
      s = gst_structure_new_empty ("tbqsplit-branches");
      gst_structure_take_value (s, "branches", &list);
      g_value_take_boxed (value, s);
      break;
    }
    default:
      G_OBJECT_CLASS (gst_tbq_split_parent_class)->get_property (object,
          prop_id, value, pspec);
      break;
  }
}

static void
split_finalize (GObject * object)
{
  GstTbqSplit *split = GST_TBQ_SPLIT (object);

  G_OBJECT_CLASS (gst_tbq_split_parent_class)->finalize (object);
  /* Pads are released by the element before finalize; what a branch that
   * was never released owes goes with it. */
  g_ptr_array_unref (split->branches);
  g_ptr_array_unref (split->sticky);
  pthread_cond_destroy (&split->branch_idle);
  gst_tbq_pair_unref (split->pair);
}

static void
gst_tbq_split_class_init (GstTbqSplitClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstTbQueueClass *queue_class = (GstTbQueueClass *) klass;

  gobject_class->set_property = split_set_property;
  gobject_class->get_property = split_get_property;
  gobject_class->finalize = split_finalize;

  /**
   * GstTbqSplit:max-in-flight:
   *
   * At most this many items are between the split and its tbqjoin
   * (numbered and handed to a branch, and not yet resolved by the join:
   * everything made of them out, or found a gap): the join's reorder
   * window.  A stalled branch stalls the stream once the window is full.
   * 0: twice the number of branches.  Applies only when a tbqjoin closes
   * the branches.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_MAX_IN_FLIGHT,
      g_param_spec_uint ("max-in-flight", "Max in flight",
          "Items between the split and its tbqjoin at most (0 = twice the "
          "branches)", 0, G_MAXINT, 0,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstTbqSplit:current-in-flight:
   *
   * Items between the split and its tbqjoin now (see
   * #GstTbqSplit:max-in-flight); 0 without a join.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_IN_FLIGHT,
      g_param_spec_uint ("current-in-flight", "Current in flight",
          "Items between the split and its tbqjoin now", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbqSplit:branch-stats:
   *
   * What each branch pushed: a structure "tbqsplit-branches" with a list
   * `branches` of one structure per branch, `pad` (its name), `buffers`
   * (the buffers of a list counted) and `bytes`.
   *
   * Since: 0.2
   */
  g_object_class_install_property (gobject_class, PROP_BRANCH_STATS,
      g_param_spec_boxed ("branch-stats", "Branch statistics",
          "Buffers and bytes each branch pushed (a list of structures)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  element_class->request_new_pad = GST_DEBUG_FUNCPTR (split_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR (split_release_pad);
  element_class->change_state = GST_DEBUG_FUNCPTR (split_change_state);
  gst_element_class_set_static_metadata (element_class,
      "Two-layer queue that splits", "Generic",
      "Queue whose items go to whichever branch is free, numbered for "
      "tbqjoin to put back in order", "The tbqueue authors");
  gst_element_class_add_metadata (element_class,
      GST_ELEMENT_METADATA_DOC_URI, gst_tbqueue_doc_uri ());
  gst_element_class_add_static_pad_template (element_class,
      &gst_tbqueue_sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  queue_class->locked_start_src = split_locked_start_src;
  queue_class->pause_src = split_pause_src;
  queue_class->src_active = split_src_active;
  queue_class->push_downstream = split_push_downstream;
  queue_class->locked_store_sticky = split_locked_store_sticky;
  queue_class->locked_flow_changed = split_locked_flow_changed;
}

static void
gst_tbq_split_init (GstTbqSplit * split)
{
  split->pair = gst_tbq_pair_new (2, 1);
  split->branches = g_ptr_array_new_with_free_func (branch_free);
  split->sticky = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_event_unref);
  /* (Monotonic: a branch waiting for downstream looks now and then.) */
  tbq_cond_init_monotonic (&split->branch_idle);
  gst_pad_set_query_function (split->queue.sinkpad,
      GST_DEBUG_FUNCPTR (split_sink_query));
  /* Its branches take items one at a time, usually behind a faster
   * upstream: upstream at a limit goes on at the low mark, not for each
   * item out (wait_for_room() in gsttbqueue-leaks.c). */
  split->queue.resume_low = TRUE;
}

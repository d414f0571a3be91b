/* The pair: what a tbqsplit and the tbqjoin that closes its branches
 * share (the contract is gsttbqpair.h's).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gsttbqpair.h"

#include <stdatomic.h>
#include <string.h>

#define BRANCH_EVENT_NAME "tbqsplit-branch"
#define MARKER_NAME "tbqsplit-marker"
#define BIND_QUERY_NAME "tbqsplit-bind"
/* The qdata of a query's or an EOS's place, and of a slot event's slot
 * (a Place). */

typedef struct
{
  guint64 pair_id;
  guint64 epoch;
  guint64 seq;
} Place;

/* Mark `object` with a Place under `quark`, one of the pair's own: an
 * object the split sends down every branch (an EOS, a query, an event
 * for every branch) meets another split in a branch (nested pairs), and
 * that split marks it too while this pair's join reads this pair's mark
 * in another branch.  Each pair marks under its own names, set once for
 * an object and never replaced while its join may read it, so no mark is
 * freed under a reader, and one pair's mark never hides another's. */
static void
set_place (GstMiniObject * object, GQuark quark, guint64 pair_id,
    guint64 epoch, guint64 seq)
{
  Place *place = g_new (Place, 1);

  place->pair_id = pair_id;
  place->epoch = epoch;
  place->seq = seq;
  gst_mini_object_set_qdata (object, quark, place, g_free);
}

static gboolean
get_place (GstMiniObject * object, GQuark quark, guint64 * pair_id,
    guint64 * epoch, guint64 * seq)
{
  const Place *place = gst_mini_object_get_qdata (object, quark);

  if (place == NULL)
    return FALSE;
  *pair_id = place->pair_id;
  *epoch = place->epoch;
  *seq = place->seq;
  return TRUE;
}

/* One number in the window. */
typedef struct
{
  gint owner;                   /* a branch, or GST_TBQ_PAIR_EVERY_BRANCH */
  GstEvent *event;              /* EVERY_BRANCH: the split's copy */
} Slot;

struct _GstTbqPair
{
  gint refcount;                /* atomic */
  guint64 id;                   /* constant */
  /* Constant: the names of the pair's marks on objects (set_place). */
  GQuark place_quark, slot_quark;
  gint depth;                   /* atomic: set by the split */

  GMutex lock;
  GCond room;                   /* the window has room, or it flushes */
  guint window;
  /* The join's downstream ended (EOS, not linked, an error): the window
   * no longer bounds anything (gst_tbq_pair_set_open()). */
  gboolean open;
  guint64 epoch;
  guint64 next_seq;             /* the next number to hand out */
  guint64 resolved;             /* every number below is resolved */
  Slot *slots;                  /* by number % capacity */
  guint capacity;               /* >= next_seq - resolved: grown on demand */
  gboolean flushing;
  guint interrupts;             /* gst_tbq_pair_interrupt() calls */
  gpointer join;                /* the bound join, or NULL */
  GstTbqPairDoneFunc done;
  guint done_calls;             /* done hook calls under way */
  GCond done_idle;              /* done_calls dropped to 0 */
  /* Threads waiting on `room` and on `done_idle`: a GCond's signal is a
   * system call whether or not anybody waits (GLib's), and a resolve or
   * a done call is one per buffer. */
  guint room_waiters;
  guint idle_waiters;

  /* Per branch (grown as branches are given numbers). */
  gboolean *sync;               /* the join found it synchronous */
  guint n_sync;
};

G_DEFINE_BOXED_TYPE (GstTbqPair, gst_tbq_pair, gst_tbq_pair_ref,
    gst_tbq_pair_unref);

static _Thread_local GstTbqPairPush current_push;

/* ---- both sides ---- */

GstTbqPair *
gst_tbq_pair_ref (GstTbqPair * pair)
{
  g_atomic_int_inc (&pair->refcount);
  return pair;
}

static void
locked_clear_slots (GstTbqPair * pair)
{
  guint64 s;

  for (s = pair->resolved; s < pair->next_seq; s++) {
    Slot *slot = &pair->slots[s % pair->capacity];

    gst_clear_event (&slot->event);
  }
}

void
gst_tbq_pair_unref (GstTbqPair * pair)
{
  if (!g_atomic_int_dec_and_test (&pair->refcount))
    return;
  locked_clear_slots (pair);
  g_free (pair->slots);
  g_free (pair->sync);
  g_mutex_clear (&pair->lock);
  g_cond_clear (&pair->room);
  g_cond_clear (&pair->done_idle);
  g_free (pair);
}

gint
gst_tbq_pair_refcount (GstTbqPair * pair)
{
  return g_atomic_int_get (&pair->refcount);
}

guint64
gst_tbq_pair_id (const GstTbqPair * pair)
{
  return pair->id;
}

guint
gst_tbq_pair_depth (const GstTbqPair * pair)
{
  return (guint) g_atomic_int_get (&pair->depth);
}

void
gst_tbq_pair_set_depth (GstTbqPair * pair, guint depth)
{
  g_atomic_int_set (&pair->depth, (gint) MAX (depth, 1));
}

guint64
gst_tbq_pair_epoch (GstTbqPair * pair)
{
  guint64 epoch;

  g_mutex_lock (&pair->lock);
  epoch = pair->epoch;
  g_mutex_unlock (&pair->lock);
  return epoch;
}

gboolean
gst_tbq_pair_branch_is_sync (GstTbqPair * pair, guint branch)
{
  gboolean sync = FALSE;

  g_mutex_lock (&pair->lock);
  if (branch < pair->n_sync)
    sync = pair->sync[branch];
  g_mutex_unlock (&pair->lock);
  return sync;
}

/* ---- the split ---- */

GstTbqPair *
gst_tbq_pair_new (guint window, guint depth)
{
  /* Relaxed: a unique id, nothing published with it. */
  static _Atomic guint64 last_id = 0;
  GstTbqPair *pair = g_new0 (GstTbqPair, 1);
  gchar *name;

  pair->refcount = 1;
  pair->id = atomic_fetch_add_explicit (&last_id, 1, memory_order_relaxed) + 1;
  /* A quark per pair: a few bytes for each split the process makes. */
  name = g_strdup_printf ("tbqsplit-place-%" G_GUINT64_FORMAT, pair->id);
  pair->place_quark = g_quark_from_string (name);
  g_free (name);
  name = g_strdup_printf ("tbqsplit-slot-%" G_GUINT64_FORMAT, pair->id);
  pair->slot_quark = g_quark_from_string (name);
  g_free (name);
  pair->depth = (gint) MAX (depth, 1);
  g_mutex_init (&pair->lock);
  g_cond_init (&pair->room);
  g_cond_init (&pair->done_idle);
  pair->window = MAX (window, 1);
  pair->capacity = pair->window;
  pair->slots = g_new0 (Slot, pair->capacity);
  return pair;
}

/* lock: the ring holds at least `need` numbers. */
static void
locked_grow (GstTbqPair * pair, guint need)
{
  Slot *slots;
  guint64 cap = pair->capacity;
  guint64 s;

  if (need <= cap)
    return;
  while (cap < need)
    cap *= 2;
  slots = g_new0 (Slot, (gsize) cap);
  for (s = pair->resolved; s < pair->next_seq; s++)
    slots[s % cap] = pair->slots[s % pair->capacity];
  g_free (pair->slots);
  pair->slots = slots;
  pair->capacity = cap;
}

void
gst_tbq_pair_set_window (GstTbqPair * pair, guint window)
{
  g_mutex_lock (&pair->lock);
  /* The ring grows as numbers are handed out (gst_tbq_pair_assign), never
   * to the window at once: a window of G_MAXINT is a window that never
   * fills, not 32 GiB of slots. */
  pair->window = MAX (window, 1);
  g_cond_broadcast (&pair->room);
  g_mutex_unlock (&pair->lock);
}

guint
gst_tbq_pair_get_window (GstTbqPair * pair)
{
  guint window;

  g_mutex_lock (&pair->lock);
  window = pair->window;
  g_mutex_unlock (&pair->lock);
  return window;
}

guint
gst_tbq_pair_in_flight (GstTbqPair * pair)
{
  guint n;

  g_mutex_lock (&pair->lock);
  n = (guint) (pair->next_seq - pair->resolved);
  g_mutex_unlock (&pair->lock);
  return n;
}

static gboolean
locked_has_room (GstTbqPair * pair)
{
  return !pair->flushing && (pair->open
      || pair->next_seq - pair->resolved < pair->window);
}

void
gst_tbq_pair_set_open (GstTbqPair * pair, gboolean open)
{
  g_mutex_lock (&pair->lock);
  pair->open = open;
  g_cond_broadcast (&pair->room);
  g_mutex_unlock (&pair->lock);
}

/* lock: wait on `room` (counted in room_waiters). */
static void
locked_wait_room (GstTbqPair * pair)
{
  pair->room_waiters++;
  g_cond_wait (&pair->room, &pair->lock);
  pair->room_waiters--;
}

/* lock: the same until monotonic time `end_time` (g_get_monotonic_time):
 * FALSE when the time came. */
static gboolean
locked_wait_room_until (GstTbqPair * pair, gint64 end_time)
{
  gboolean woken;

  pair->room_waiters++;
  woken = g_cond_wait_until (&pair->room, &pair->lock, end_time);
  pair->room_waiters--;
  return woken;
}

/* lock: room for `branch`: in the window, or, with the window exactly
 * full, one number more for the branch that owns the oldest unresolved
 * number and none after it.  A worker may hold a serialized event until
 * its next input (GstVideoEncoder does, for every serialized event): the
 * marker that resolves the branch's last number then comes out with the
 * next one, and a window full from that number on would wait for it for
 * ever.  One number past the window at a time: a stalled worker holds at
 * most window + 1. */
static gboolean
locked_has_room_for (GstTbqPair * pair, guint branch)
{
  guint64 s;

  if (pair->flushing)
    return FALSE;
  if (pair->open || pair->next_seq - pair->resolved < pair->window)
    return TRUE;
  if (pair->next_seq - pair->resolved != pair->window
      || pair->next_seq == pair->resolved
      || pair->slots[pair->resolved % pair->capacity].owner != (gint) branch)
    return FALSE;
  for (s = pair->resolved + 1; s < pair->next_seq; s++)
    if (pair->slots[s % pair->capacity].owner == (gint) branch)
      return FALSE;
  return TRUE;
}

gboolean
gst_tbq_pair_has_room_for (GstTbqPair * pair, guint branch)
{
  gboolean room;

  g_mutex_lock (&pair->lock);
  room = locked_has_room_for (pair, branch);
  g_mutex_unlock (&pair->lock);
  return room;
}

gboolean
gst_tbq_pair_wait_room_for (GstTbqPair * pair, guint key, guint branch,
    gint64 end_time)
{
  gboolean room;

  g_mutex_lock (&pair->lock);
  while (!pair->flushing && key == pair->interrupts
      && !locked_has_room_for (pair, branch)) {
    if (end_time < 0)
      locked_wait_room (pair);
    else if (!locked_wait_room_until (pair, end_time))
      break;
  }
  room = locked_has_room_for (pair, branch) && key == pair->interrupts;
  g_mutex_unlock (&pair->lock);
  return room;
}

gboolean
gst_tbq_pair_has_room (GstTbqPair * pair)
{
  gboolean room;

  g_mutex_lock (&pair->lock);
  room = locked_has_room (pair);
  g_mutex_unlock (&pair->lock);
  return room;
}

guint
gst_tbq_pair_wait_key (GstTbqPair * pair)
{
  guint key;

  g_mutex_lock (&pair->lock);
  key = pair->interrupts;
  g_mutex_unlock (&pair->lock);
  return key;
}

gboolean
gst_tbq_pair_wait_room (GstTbqPair * pair, guint key)
{
  gboolean room;

  g_mutex_lock (&pair->lock);
  while (!pair->flushing && key == pair->interrupts
      && !locked_has_room (pair))
    locked_wait_room (pair);
  room = locked_has_room (pair) && key == pair->interrupts;
  g_mutex_unlock (&pair->lock);
  return room;
}

void
gst_tbq_pair_interrupt (GstTbqPair * pair)
{
  g_mutex_lock (&pair->lock);
  pair->interrupts++;
  g_cond_broadcast (&pair->room);
  g_mutex_unlock (&pair->lock);
}

/* lock: the branch has a sync flag. */
static void
locked_ensure_branch (GstTbqPair * pair, guint branch)
{
  if (branch < pair->n_sync)
    return;
  pair->sync = g_renew (gboolean, pair->sync, branch + 1);
  memset (pair->sync + pair->n_sync, 0,
      (branch + 1 - pair->n_sync) * sizeof (gboolean));
  pair->n_sync = branch + 1;
}

guint64
gst_tbq_pair_assign (GstTbqPair * pair, guint branch, GstEvent * event,
    guint64 * epoch_out)
{
  guint64 seq, epoch;
  Slot *slot;

  g_mutex_lock (&pair->lock);
  seq = pair->next_seq;
  epoch = pair->epoch;
  locked_grow (pair, (guint) (seq - pair->resolved) + 1);
  slot = &pair->slots[seq % pair->capacity];
  if (event != NULL) {
    slot->owner = GST_TBQ_PAIR_EVERY_BRANCH;
    slot->event = gst_event_ref (event);
  } else {
    slot->owner = (gint) branch;
    slot->event = NULL;
    locked_ensure_branch (pair, branch);
  }
  pair->next_seq = seq + 1;
  g_mutex_unlock (&pair->lock);
  /* Before the split sends the copies (see gsttbqpair.h). */
  if (event != NULL)
    set_place (GST_MINI_OBJECT_CAST (event), pair->slot_quark, pair->id,
        epoch, seq);
  if (epoch_out != NULL)
    *epoch_out = epoch;
  return seq;
}

void
gst_tbq_pair_push_begin (GstTbqPair * pair, guint branch, guint64 epoch,
    guint64 seq, GstTbqPairPush * saved)
{
  *saved = current_push;
  current_push.pair = pair;
  current_push.branch = branch;
  current_push.seq = seq;
  current_push.epoch = epoch;
  current_push.owes_wake = FALSE;
}

void
gst_tbq_pair_owe_wake (void)
{
  current_push.owes_wake = TRUE;
}

/* The join's done hook, counted in done_calls by the caller under the
 * lock: called with no lock held, then uncounted (gst_tbq_pair_unbind()
 * waits for the count to drop to 0). */
static void
call_done (GstTbqPair * pair, GstTbqPairDoneFunc done, gpointer join,
    guint branch, guint64 epoch, guint64 seq)
{
  done (join, branch, epoch, seq);
  g_mutex_lock (&pair->lock);
  if (--pair->done_calls == 0 && pair->idle_waiters > 0)
    g_cond_broadcast (&pair->done_idle);
  g_mutex_unlock (&pair->lock);
}

gboolean
gst_tbq_pair_push_end (GstTbqPair * pair, guint branch, guint64 seq,
    GstFlowReturn result, const GstTbqPairPush * saved)
{
  guint64 epoch = current_push.epoch;
  gboolean owes_wake = current_push.owes_wake, called;
  GstTbqPairDoneFunc done;
  gpointer join;

  current_push = *saved;
  g_mutex_lock (&pair->lock);
  called = pair->join != NULL && epoch == pair->epoch && !pair->flushing
      && (result != GST_FLOW_OK
      || (branch < pair->n_sync && pair->sync[branch]));
  if (pair->join == NULL || !(called || owes_wake)) {
    g_mutex_unlock (&pair->lock);
    return FALSE;
  }
  done = pair->done;
  join = pair->join;
  /* Counted: gst_tbq_pair_unbind() waits for it, so `join` lives until
   * the call returns. */
  pair->done_calls++;
  g_mutex_unlock (&pair->lock);
  /* (Not done: only the wake-up the join owes, a kick.) */
  call_done (pair, done, join, called ? branch : GST_TBQ_PAIR_KICK, epoch,
      seq);
  return called;
}

void
gst_tbq_pair_kick (GstTbqPair * pair)
{
  GstTbqPairDoneFunc done = NULL;
  gpointer join = NULL;
  guint64 epoch = 0;

  g_mutex_lock (&pair->lock);
  if (pair->join != NULL && !pair->flushing) {
    done = pair->done;
    join = pair->join;
    epoch = pair->epoch;
    /* Counted, as a done call (gst_tbq_pair_unbind() waits for it). */
    pair->done_calls++;
  }
  g_mutex_unlock (&pair->lock);
  if (done != NULL)
    call_done (pair, done, join, GST_TBQ_PAIR_KICK, epoch, 0);
}

void
gst_tbq_pair_flush_start (GstTbqPair * pair)
{
  g_mutex_lock (&pair->lock);
  pair->flushing = TRUE;
  g_cond_broadcast (&pair->room);
  g_mutex_unlock (&pair->lock);
}

void
gst_tbq_pair_flush_stop (GstTbqPair * pair)
{
  g_mutex_lock (&pair->lock);
  locked_clear_slots (pair);
  pair->epoch++;
  pair->next_seq = 0;
  pair->resolved = 0;
  pair->flushing = FALSE;
  pair->open = FALSE;
  g_cond_broadcast (&pair->room);
  g_mutex_unlock (&pair->lock);
}

GstQuery *
gst_tbq_pair_bind_query_new (GstTbqPair * pair, guint branch)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM,
      gst_structure_new (BIND_QUERY_NAME, "pair", GST_TYPE_TBQ_PAIR, pair,
          "branch", G_TYPE_UINT, branch, "crossed", G_TYPE_UINT, 0,
          "bound", G_TYPE_BOOLEAN, FALSE, NULL));
}

gboolean
gst_tbq_pair_bind_query_bound (GstQuery * query)
{
  const GstStructure *s = gst_query_get_structure (query);
  gboolean bound = FALSE;

  return s != NULL && gst_structure_get_boolean (s, "bound", &bound) && bound;
}

/* Qdata, not a field of the object's structure: any serialized query
 * (DRAIN has a structure of GStreamer's) and EOS carry it, through queues
 * and workers unseen, as the same object. */
void
gst_tbq_pair_set_place (GstTbqPair * pair, GstMiniObject * object)
{
  guint64 epoch, seq;

  g_mutex_lock (&pair->lock);
  epoch = pair->epoch;
  seq = pair->next_seq;
  g_mutex_unlock (&pair->lock);
  set_place (object, pair->place_quark, pair->id, epoch, seq);
}

void
gst_tbq_pair_clear_place (GstTbqPair * pair, GstMiniObject * object)
{
  gst_mini_object_set_qdata (object, pair->place_quark, NULL, NULL);
}

GstEvent *
gst_tbq_pair_branch_event_new (GstTbqPair * pair, guint branch)
{
  GstStructure *s = gst_structure_new (BRANCH_EVENT_NAME,
      "pair", GST_TYPE_TBQ_PAIR, pair,
      "pair-id", G_TYPE_UINT64, pair->id,
      "branch", G_TYPE_UINT, branch,
      "depth", G_TYPE_UINT, gst_tbq_pair_depth (pair), NULL);
  gchar *name;

  /* Sticky custom events of one name replace each other on a pad: each
   * pair's has a name of its own, so that a nested split's event does
   * not replace its outer pair's. */
  name = g_strdup_printf (BRANCH_EVENT_NAME "-%" G_GUINT64_FORMAT, pair->id);
  gst_structure_set_name (s, name);
  g_free (name);
  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, s);
}

/* The marker's fields, the event's and the query's. */
static GstStructure *
marker_structure_new (GstTbqPair * pair, guint64 epoch, guint branch,
    guint64 seq)
{
  return gst_structure_new (MARKER_NAME, "pair-id", G_TYPE_UINT64, pair->id,
      "epoch", G_TYPE_UINT64, epoch, "branch", G_TYPE_UINT, branch,
      "seq", G_TYPE_UINT64, seq, NULL);
}

static gboolean
parse_marker_structure (const GstStructure * s, guint64 * pair_id,
    guint64 * epoch, guint * branch, guint64 * seq)
{
  guint64 id, e, n;
  guint b;

  if (s == NULL || !gst_structure_has_name (s, MARKER_NAME)
      || !gst_structure_get (s, "pair-id", G_TYPE_UINT64, &id,
          "epoch", G_TYPE_UINT64, &e, "branch", G_TYPE_UINT, &b,
          "seq", G_TYPE_UINT64, &n, NULL))
    return FALSE;
  if (pair_id != NULL)
    *pair_id = id;
  if (epoch != NULL)
    *epoch = e;
  if (branch != NULL)
    *branch = b;
  if (seq != NULL)
    *seq = n;
  return TRUE;
}

GstEvent *
gst_tbq_pair_marker_new_in (GstTbqPair * pair, guint64 epoch, guint branch,
    guint64 seq)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
      marker_structure_new (pair, epoch, branch, seq));
}

static void
add_seq_meta (GstBuffer * buffer, guint64 pair_id, guint64 epoch,
    guint64 seq)
{
  GstTbqSeqMeta *meta = (GstTbqSeqMeta *) gst_buffer_add_meta (buffer,
      gst_tbq_seq_meta_get_info (), NULL);

  meta->pair_id = pair_id;
  meta->epoch = epoch;
  meta->seq = seq;
}

void
gst_tbq_pair_stamp_buffer (GstTbqPair * pair, GstBuffer ** buffer,
    guint64 epoch, guint64 seq)
{
  *buffer = gst_buffer_make_writable (*buffer);
  add_seq_meta (*buffer, pair->id, epoch, seq);
}

typedef struct
{
  guint64 pair_id, epoch, seq;
} StampArg;

static gboolean
stamp_member (GstBuffer ** buffer, guint idx, gpointer user_data)
{
  StampArg *a = user_data;

  *buffer = gst_buffer_make_writable (*buffer);
  add_seq_meta (*buffer, a->pair_id, a->epoch, a->seq);
  return TRUE;
}

void
gst_tbq_pair_stamp_list (GstTbqPair * pair, GstBufferList ** list,
    guint64 epoch, guint64 seq)
{
  StampArg a = { pair->id, epoch, seq };

  *list = gst_buffer_list_make_writable (*list);
  gst_buffer_list_foreach (*list, stamp_member, &a);
}

/* ---- the join ---- */

gboolean
gst_tbq_pair_parse_branch_event (GstEvent * event, GstTbqPair ** pair,
    guint * branch, guint * depth)
{
  const GstStructure *s;
  GstTbqPair *p = NULL;
  guint b, d;

  if (GST_EVENT_TYPE (event) != GST_EVENT_CUSTOM_DOWNSTREAM_STICKY)
    return FALSE;
  s = gst_event_get_structure (event);
  if (s == NULL || !g_str_has_prefix (gst_structure_get_name (s),
          BRANCH_EVENT_NAME "-")
      || !gst_structure_get (s, "pair", GST_TYPE_TBQ_PAIR, &p,
          "branch", G_TYPE_UINT, &b, "depth", G_TYPE_UINT, &d, NULL))
    return FALSE;
  if (pair != NULL)
    *pair = p;
  else
    gst_tbq_pair_unref (p);
  if (branch != NULL)
    *branch = b;
  if (depth != NULL)
    *depth = d;
  return TRUE;
}

gboolean
gst_tbq_pair_parse_marker (GstEvent * event, guint64 * pair_id,
    guint64 * epoch, guint * branch, guint64 * seq)
{
  return GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM
      && parse_marker_structure (gst_event_get_structure (event), pair_id,
      epoch, branch, seq);
}

GstQuery *
gst_tbq_pair_marker_query_new_in (GstTbqPair * pair, guint64 epoch,
    guint branch, guint64 seq)
{
  GstStructure *s = marker_structure_new (pair, epoch, branch, seq);

  gst_structure_set (s, "answered", G_TYPE_BOOLEAN, FALSE, NULL);
  return gst_query_new_custom (GST_QUERY_DRAIN, s);
}

gboolean
gst_tbq_pair_parse_marker_query (GstQuery * query, guint64 * pair_id,
    guint64 * epoch, guint * branch, guint64 * seq)
{
  return GST_QUERY_TYPE (query) == GST_QUERY_DRAIN
      && parse_marker_structure (gst_query_get_structure (query), pair_id,
      epoch, branch, seq);
}

void
gst_tbq_pair_marker_query_set_answered (GstQuery * query)
{
  gst_structure_set (gst_query_writable_structure (query), "answered",
      G_TYPE_BOOLEAN, TRUE, NULL);
}

gboolean
gst_tbq_pair_marker_query_answered (GstQuery * query)
{
  const GstStructure *s = gst_query_get_structure (query);
  gboolean answered = FALSE;

  return s != NULL && gst_structure_get_boolean (s, "answered", &answered)
      && answered;
}

gboolean
gst_tbq_pair_parse_bind_query (GstQuery * query, GstTbqPair ** pair,
    guint * branch, guint * crossed)
{
  const GstStructure *s;
  GstTbqPair *p = NULL;
  guint b, c;

  if (GST_QUERY_TYPE (query) != GST_QUERY_CUSTOM)
    return FALSE;
  s = gst_query_get_structure (query);
  if (s == NULL || !gst_structure_has_name (s, BIND_QUERY_NAME)
      || !gst_structure_get (s, "pair", GST_TYPE_TBQ_PAIR, &p,
          "branch", G_TYPE_UINT, &b, "crossed", G_TYPE_UINT, &c, NULL))
    return FALSE;
  if (pair != NULL)
    *pair = p;
  else
    gst_tbq_pair_unref (p);
  if (branch != NULL)
    *branch = b;
  if (crossed != NULL)
    *crossed = c;
  return TRUE;
}

void
gst_tbq_pair_bind_query_cross (GstQuery * query, gint delta)
{
  GstStructure *s = gst_query_writable_structure (query);
  guint c = 0;

  gst_structure_get_uint (s, "crossed", &c);
  gst_structure_set (s, "crossed", G_TYPE_UINT, (guint) ((gint) c + delta),
      NULL);
}

void
gst_tbq_pair_bind_query_set_bound (GstQuery * query)
{
  gst_structure_set (gst_query_writable_structure (query), "bound",
      G_TYPE_BOOLEAN, TRUE, NULL);
}

gboolean
gst_tbq_pair_get_place (GstTbqPair * pair, GstMiniObject * object,
    guint64 * pair_id, guint64 * epoch, guint64 * seq)
{
  return pair != NULL && get_place (object, pair->place_quark, pair_id, epoch,
      seq);
}

gboolean
gst_tbq_pair_parse_slot_event (GstTbqPair * pair, GstEvent * event,
    guint64 * pair_id, guint64 * epoch, guint64 * seq)
{
  return pair != NULL && get_place (GST_MINI_OBJECT_CAST (event),
      pair->slot_quark, pair_id, epoch, seq);
}

gboolean
gst_tbq_pair_is_pair_event (GstEvent * event)
{
  return gst_tbq_pair_parse_branch_event (event, NULL, NULL, NULL)
      || gst_tbq_pair_parse_marker (event, NULL, NULL, NULL, NULL);
}

gboolean
gst_tbq_pair_bind (GstTbqPair * pair, gpointer join, GstTbqPairDoneFunc done)
{
  gboolean ok;

  g_mutex_lock (&pair->lock);
  ok = pair->join == NULL || pair->join == join;
  if (ok) {
    pair->join = join;
    pair->done = done;
  }
  g_mutex_unlock (&pair->lock);
  return ok;
}

void
gst_tbq_pair_unbind (GstTbqPair * pair, gpointer join)
{
  g_mutex_lock (&pair->lock);
  if (pair->join == join) {
    pair->join = NULL;
    pair->done = NULL;
    /* Its findings go with it: the split sends markers to the next. */
    if (pair->n_sync > 0)
      memset (pair->sync, 0, pair->n_sync * sizeof (gboolean));
    /* A call under way was counted when `join` was still bound. */
    while (pair->done_calls > 0) {
      pair->idle_waiters++;
      g_cond_wait (&pair->done_idle, &pair->lock);
      pair->idle_waiters--;
    }
  }
  g_mutex_unlock (&pair->lock);
}

const GstTbqPairPush *
gst_tbq_pair_current (void)
{
  return &current_push;
}

/* lock: who number `seq` of the current epoch went to. */
static gint
locked_owner (GstTbqPair * pair, guint64 seq, GstEvent ** event)
{
  Slot *slot;

  if (seq < pair->resolved)
    return GST_TBQ_PAIR_RESOLVED;
  if (seq >= pair->next_seq)
    return GST_TBQ_PAIR_NOT_ASSIGNED;
  slot = &pair->slots[seq % pair->capacity];
  if (event != NULL && slot->event != NULL)
    *event = gst_event_ref (slot->event);
  return slot->owner;
}

gint
gst_tbq_pair_owner (GstTbqPair * pair, guint64 seq, GstEvent ** event)
{
  gint owner;

  if (event != NULL)
    *event = NULL;
  g_mutex_lock (&pair->lock);
  owner = locked_owner (pair, seq, event);
  g_mutex_unlock (&pair->lock);
  return owner;
}

gint
gst_tbq_pair_owner_in (GstTbqPair * pair, guint64 epoch, guint64 seq,
    GstEvent ** event)
{
  gint owner = GST_TBQ_PAIR_OTHER_EPOCH;

  if (event != NULL)
    *event = NULL;
  g_mutex_lock (&pair->lock);
  if (epoch == pair->epoch)
    owner = locked_owner (pair, seq, event);
  g_mutex_unlock (&pair->lock);
  return owner;
}

guint64
gst_tbq_pair_assigned (GstTbqPair * pair)
{
  guint64 n;

  g_mutex_lock (&pair->lock);
  n = pair->next_seq;
  g_mutex_unlock (&pair->lock);
  return n;
}

/* lock: every number below `upto` (at most the next to hand out) is
 * resolved. */
static void
locked_resolve (GstTbqPair * pair, guint64 upto)
{
  gboolean was_full;

  if (upto > pair->next_seq)
    upto = pair->next_seq;
  if (pair->resolved >= upto)
    return;
  was_full = pair->next_seq - pair->resolved >= pair->window;
  while (pair->resolved < upto) {
    Slot *slot = &pair->slots[pair->resolved % pair->capacity];

    gst_clear_event (&slot->event);
    pair->resolved++;
  }
  /* A thread waits on `room` only after it found the window full (both
   * waits' conditions, under the lock), and every change of the window or
   * of `open` signals: so nobody waits for room unless the window was
   * full when this resolve began, and a resolve that did not start from
   * a full window wakes nobody.  (With the window exactly full, the one
   * branch the window lets take one more has room and does not wait;
   * its taking it makes the window fuller, not emptier.) */
  if (was_full && pair->room_waiters > 0)
    g_cond_broadcast (&pair->room);
}

void
gst_tbq_pair_resolve (GstTbqPair * pair, guint64 upto)
{
  g_mutex_lock (&pair->lock);
  locked_resolve (pair, upto);
  g_mutex_unlock (&pair->lock);
}

gboolean
gst_tbq_pair_resolve_in (GstTbqPair * pair, guint64 epoch, guint64 upto)
{
  gboolean current;

  g_mutex_lock (&pair->lock);
  current = epoch == pair->epoch;
  if (current)
    locked_resolve (pair, upto);
  g_mutex_unlock (&pair->lock);
  return current;
}

guint64
gst_tbq_pair_resolved (GstTbqPair * pair)
{
  guint64 n;

  g_mutex_lock (&pair->lock);
  n = pair->resolved;
  g_mutex_unlock (&pair->lock);
  return n;
}

void
gst_tbq_pair_set_sync (GstTbqPair * pair, guint branch, gboolean sync)
{
  g_mutex_lock (&pair->lock);
  locked_ensure_branch (pair, branch);
  pair->sync[branch] = sync;
  g_mutex_unlock (&pair->lock);
}

/* ---- the sequence meta ---- */

GType
gst_tbq_seq_meta_api_get_type (void)
{
  static GType type = 0;
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstTbqSeqMetaAPI", tags);

    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
seq_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstTbqSeqMeta *m = (GstTbqSeqMeta *) meta;

  m->pair_id = 0;
  m->epoch = 0;
  m->seq = 0;
  return TRUE;
}

/* Every transform keeps it: copies, and outputs made from an input. */
static gboolean
seq_meta_transform (GstBuffer * dest, GstMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data)
{
  GstTbqSeqMeta *m = (GstTbqSeqMeta *) meta;

  add_seq_meta (dest, m->pair_id, m->epoch, m->seq);
  return TRUE;
}

const GstMetaInfo *
gst_tbq_seq_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;

  if (g_once_init_enter ((GstMetaInfo **) & info)) {
    const GstMetaInfo *i = gst_meta_register (GST_TBQ_SEQ_META_API_TYPE,
        "GstTbqSeqMeta", sizeof (GstTbqSeqMeta), seq_meta_init, NULL,
        seq_meta_transform);

    g_once_init_leave ((GstMetaInfo **) & info, (GstMetaInfo *) i);
  }
  return info;
}

GstTbqSeqMeta *
gst_tbq_seq_meta_find (GstBuffer * buffer, guint64 pair_id)
{
  GstTbqSeqMeta *best = NULL;
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_TBQ_SEQ_META_API_TYPE)) != NULL) {
    GstTbqSeqMeta *m = (GstTbqSeqMeta *) meta;

    if (m->pair_id == pair_id && (best == NULL || m->seq > best->seq))
      best = m;
  }
  return best;
}

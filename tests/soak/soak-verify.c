/* The soak harness: the downstream side, which checks everything delivered.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For every item that reaches our sink pad (from the element's src pad
 * task) the verifier checks, under vlock:
 *  - it was pushed, in the current epoch (not stale after a flush), and
 *    comes after the previous delivery (FIFO: no reorder, no duplicate);
 *  - every item pushed between the previous delivery and this one has a
 *    reason to be missing: refused by the element (flushing, EOS), or
 *    dropped while the element was leaky (counted: buffers and items);
 *    anything else is a loss;
 *  - a buffer is what its entry says (soak-data.c), was delivered under
 *    its epoch's segment, and carries DISCONT exactly when it should: when
 *    it was pushed with it or a buffer before it was dropped; it may when
 *    anything was dropped or refused before it, or it starts an epoch,
 *    or (leaky=downstream) it follows a sticky event, which the element
 *    may have leaked and sent again, as queue does;
 *  - a pushed list arrives whole, or cut only where members are missing,
 *    never with a hole inside a delivered list; a buffer pushed alone
 *    never arrives inside a list, and no list mixes two pushed lists.
 * In a parallel chapter (soak-parallel.c) the items also passed a split,
 * workers and a join, and the same holds, with what the workers logged
 * (their fates, soak.h): an item a worker dropped or merged away may be
 * missing (counted: the join's gaps must agree) and may take a DISCONT
 * with it, but must never arrive; a buffer a worker made two outputs of
 * arrives as its two halves, one right after the other, the second
 * without DISCONT; a serialized query may come again right after itself
 * (the split asks it of every branch, the join passes each on).
 * Then it may stall (a blocked chain) for a random time, or hold a buffer
 * for a limit probe; FLUSH_START ends either, as it unblocks a real sink.
 */
#include "soak.h"

/* ---- the last deliveries (printed with a failure) ---- */

#define SEEN_RING 48
typedef struct
{
  guint64 seq, unit;
  guint8 kind;
  gboolean discont;
  const gchar *what;            /* a sticky event's name, or NULL */
} Seen;
static Seen seen[SEEN_RING];
static guint n_seen;

/* vlock held. */
static void
note_seen (guint64 seq, guint8 kind, guint64 unit, gboolean discont,
    const gchar * what)
{
  guint i = n_seen++ % SEEN_RING;

  seen[i].seq = seq;
  seen[i].kind = kind;
  seen[i].unit = unit;
  seen[i].discont = discont;
  seen[i].what = what;
}

/* ---- lookups and the gap ---- */

/* The entry of a delivered item; fails when it is unknown, stale or out
 * of order.  vlock held. */
static SoakEntry *
lookup (guint64 seq, const gchar * what)
{
  /* Acquire: pairs with soak_log_publish(). */
  guint64 pub = atomic_load_explicit (&soak.published_seq,
      memory_order_acquire);
  guint64 floor = atomic_load_explicit (&soak.floor, memory_order_relaxed);

  if (seq >= pub)
    soak_fail ("unknown", "%s with seq %" G_GUINT64_FORMAT " delivered, "
        "only %" G_GUINT64_FORMAT " items were pushed", what, seq, pub);
  if (seq < floor)
    soak_fail ("stale", "%s %" G_GUINT64_FORMAT " delivered after the "
        "flush or state change that ended its epoch (the current epoch "
        "starts at seq %" G_GUINT64_FORMAT ")", what, seq, floor);
  if (soak.last_seq > 0 && seq < soak.last_seq)
    soak_fail ("order", "%s %" G_GUINT64_FORMAT " delivered after item %"
        G_GUINT64_FORMAT " (reordered or duplicated)", what, seq,
        soak.last_seq - 1);
  return soak_log_get (seq);
}

static const gchar *
kind_name (guint8 kind)
{
  switch (kind) {
    case SOAK_ITEM_BUFFER:
      return "buffer";
    case SOAK_ITEM_LIST_MEMBER:
      return "list member";
    case SOAK_ITEM_EVENT:
      return "event";
    case SOAK_ITEM_QUERY:
      return "query";
    case SOAK_ITEM_EOS:
      return "EOS";
    case SOAK_ITEM_EMPTY_LIST:
      return "empty list";
    default:
      return "?";
  }
}

/* Items pushed before `seq` in this epoch and not delivered: each must
 * have been refused or dropped by a leaky element.  vlock held. */
static void
check_gap (guint64 seq)
{
  guint64 floor = atomic_load_explicit (&soak.floor, memory_order_relaxed);
  guint64 j = MAX (soak.last_seq, floor);

  for (; j < seq; j++) {
    SoakEntry *e = soak_log_get (j);
    guint8 st = atomic_load_explicit (&e->status, memory_order_relaxed);
    /* Acquire: pairs with the worker's store (soak-worker.c). */
    guint8 fate = atomic_load_explicit (&e->fate, memory_order_acquire);
    gboolean buffer = e->kind == SOAK_ITEM_BUFFER
        || e->kind == SOAK_ITEM_LIST_MEMBER;

    if (fate == SOAK_FATE_DROPPED || fate == SOAK_FATE_DROPPED_MEMBER
        || fate == SOAK_FATE_MERGED) {
      /* A worker's: the join made a gap of its input.  What it carried
       * (a DISCONT) went with it. */
      if (fate != SOAK_FATE_DROPPED_MEMBER)
        atomic_fetch_add_explicit (&soak.worker_gaps, 1,
            memory_order_relaxed);
      atomic_fetch_add_explicit (&soak.worker_drops, 1,
          memory_order_relaxed);
      soak.discont_excused = TRUE;
      g_snprintf (soak.last_drop, sizeof soak.last_drop, "%s %"
          G_GUINT64_FORMAT " (%s by its worker)", kind_name (e->kind), j,
          fate == SOAK_FATE_MERGED ? "merged away" : "dropped");
      continue;
    }

    if (e->kind == SOAK_ITEM_EMPTY_LIST) {
      /* queue spends a pending DISCONT on an empty list, which GstPad
       * then does not deliver, or leaks it and marks the next buffer:
       * either is tolerated, as nothing is lost. */
      soak.discont_excused = soak.discont_allowed = TRUE;
      continue;
    }
    if (st == SOAK_REFUSED && e->kind != SOAK_ITEM_QUERY) {
      soak.discont_allowed = TRUE;
      continue;
    }
    if (e->leaky == 0 || e->kind == SOAK_ITEM_EOS
        || (e->kind == SOAK_ITEM_QUERY && st == SOAK_ACCEPTED))
      soak_fail ("loss", "%s %" G_GUINT64_FORMAT " (epoch %u, leaky=%s) "
          "was %s but never delivered; %s %" G_GUINT64_FORMAT
          " came next", kind_name (e->kind), j, e->epoch,
          e->leaky == 0 ? "no" : e->leaky == 1 ? "upstream" : "downstream",
          st == SOAK_REFUSED ? "refused" : "accepted",
          kind_name (soak_log_get (seq)->kind), seq);
    atomic_fetch_add_explicit (&soak.items_dropped, 1, memory_order_relaxed);
    g_snprintf (soak.last_drop, sizeof soak.last_drop, "%s %" G_GUINT64_FORMAT
        " (list member %u of %u)", kind_name (e->kind), j, e->list_index,
        e->list_len);
    if (buffer) {
      atomic_fetch_add_explicit (&soak.drops_counted, 1,
          memory_order_relaxed);
      /* A list leaked upstream is one push, one overrun. */
      if (e->list_index == 0)
        atomic_fetch_add_explicit (&soak.push_drops, 1, memory_order_relaxed);
      soak.discont_required = TRUE;
    }
    soak.discont_allowed = TRUE;
  }
}

/* Bookkeeping after any delivered item.  vlock held. */
static void
delivered (guint64 seq, guint64 unit)
{
  if (G_UNLIKELY (soak.trace))
    g_print ("# trace: delivered %" G_GUINT64_FORMAT " (%s) unit %"
        G_GUINT64_FORMAT "\n", seq, kind_name (soak_log_get (seq)->kind),
        unit);
  /* Atomic: soak_log_append() reads it without vlock as a hint. */
  __atomic_store_n (&soak.last_seq, seq + 1, __ATOMIC_RELAXED);
  soak.last_unit = unit;
  if (seq >= soak.probe_lo && seq < soak.probe_hi)
    soak.probe_seen[seq - soak.probe_lo] = 1;
  atomic_fetch_add_explicit (&soak.items_delivered, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
  if (soak.producer_waits)
    g_cond_broadcast (&soak.vcond);
}

/* ---- buffers ---- */

static void
check_discont (GstBuffer * buf, const SoakEntry * e, guint64 seq)
{
  gboolean has = GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT);
  gboolean pushed = (e->flags & GST_BUFFER_FLAG_DISCONT) != 0;

  if ((pushed || (soak.discont_required && !soak.discont_excused)) && !has)
    soak_fail ("discont", "buffer %" G_GUINT64_FORMAT " (list member %u of "
        "%u) has no DISCONT flag although %s (the last: %s)", seq,
        e->list_index, e->list_len, pushed ? "it was pushed with one"
        : "buffers before it were dropped", soak.last_drop);
  if (has && !pushed && !soak.discont_allowed
      && !((soak.after_sticky || e->after_jump) && e->leaky == 2))
    soak_fail ("discont", "buffer %" G_GUINT64_FORMAT " (list member %u of "
        "%u) has a DISCONT flag but nothing before it was dropped", seq,
        e->list_index, e->list_len);
  soak.discont_required = soak.discont_allowed = FALSE;
  soak.discont_excused = soak.after_sticky = FALSE;
}

static void
check_list_rules (const SoakEntry * e, guint64 seq, guint64 unit,
    gboolean in_list, guint64 * unit_list)
{
  gboolean prev_adjacent = soak.last_seq == seq;       /* seq - 1 delivered */

  if (e->kind == SOAK_ITEM_BUFFER) {
    if (in_list)
      soak_fail ("list", "buffer %" G_GUINT64_FORMAT " was pushed alone but "
          "delivered inside a buffer list", seq);
    return;
  }
  if (in_list) {
    guint64 first = seq - e->list_index;

    if (*unit_list != G_MAXUINT64 && *unit_list != first)
      soak_fail ("list", "one delivered list holds members of the lists "
          "pushed at %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT,
          *unit_list, first);
    *unit_list = first;
    if (soak.last_unit == unit && !prev_adjacent)
      soak_fail ("list", "a delivered list has a hole: member %u (seq %"
          G_GUINT64_FORMAT ") follows seq %" G_GUINT64_FORMAT " in it",
          e->list_index, seq, soak.last_seq - 1);
  }
  if (e->list_index > 0 && prev_adjacent && soak.last_unit != unit)
    soak_fail ("list", "the list pushed at %" G_GUINT64_FORMAT " (%u "
        "buffers) was cut before member %u with nothing missing",
        seq - e->list_index, e->list_len, e->list_index);
}

/* Whatever comes next (`what`, with `seq`): no second output is due.
 * vlock held. */
static void
check_no_part_due (const gchar * what, guint64 seq)
{
  if (G_UNLIKELY (soak.part_seq != 0))
    soak_fail ("parts", "%s %" G_GUINT64_FORMAT " came where the second "
        "output of buffer %" G_GUINT64_FORMAT " was due (its worker made "
        "two of it)", what, seq, soak.part_seq - 1);
}

/* The second output of a buffer a worker made two of, when it is due:
 * TRUE when `buf` was it.  vlock held. */
static gboolean
verify_second_part (GstBuffer * buf)
{
  guint64 seq = GST_BUFFER_OFFSET (buf);
  SoakEntry *e;
  gchar *err;

  if (soak.part_seq == 0)
    return FALSE;
  if (seq + 1 != soak.part_seq)
    check_no_part_due ("buffer", seq);
  e = soak_log_get (seq);
  err = soak_data_check_part (buf, e, seq, e->size / 2, e->size - e->size / 2);
  if (err != NULL)
    soak_fail ("corrupt", "the second output of buffer %" G_GUINT64_FORMAT
        " (%u bytes, layout 0x%x) is not the second half of what was "
        "pushed: %s", seq, e->size, e->layout, err);
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT))
    soak_fail ("discont", "the second output of buffer %" G_GUINT64_FORMAT
        " has a DISCONT flag", seq);
  note_seen (seq, e->kind, soak.unit, FALSE, "second half");
  soak.part_seq = 0;
  atomic_fetch_add_explicit (&soak.parts, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.bytes_delivered, gst_buffer_get_size (buf),
      memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
  return TRUE;
}

/* vlock held. */
static void
verify_buffer (GstBuffer * buf, guint64 unit, gboolean in_list,
    guint64 * unit_list)
{
  guint64 seq = GST_BUFFER_OFFSET (buf);
  SoakEntry *e;
  gsize len;
  guint8 fate;
  gchar *err;

  check_no_part_due (in_list ? "list member" : "buffer", seq);
  e = lookup (seq, "buffer");
  if (e->kind != SOAK_ITEM_BUFFER && e->kind != SOAK_ITEM_LIST_MEMBER)
    soak_fail ("corrupt", "a buffer has offset %" G_GUINT64_FORMAT
        ", which was pushed as a %s", seq, kind_name (e->kind));
  if (e->epoch != soak.seg_epoch)
    soak_fail ("segment", "buffer %" G_GUINT64_FORMAT " of epoch %u "
        "delivered under the segment of epoch %u", seq, e->epoch,
        soak.seg_epoch);
  check_gap (seq);
  fate = atomic_load_explicit (&e->fate, memory_order_acquire);
  if (fate != SOAK_FATE_NONE && fate != SOAK_FATE_PARTS)
    soak_fail ("worker", "%s %" G_GUINT64_FORMAT " was delivered, but its "
        "worker %s it", kind_name (e->kind), seq, fate == SOAK_FATE_MERGED
        ? "merged away" : "dropped");
  /* Made two of: its first half now, the second next. */
  len = fate == SOAK_FATE_PARTS ? e->size / 2 : e->size;
  err = soak_data_check_part (buf, e, seq, 0, len);
  if (err != NULL)
    soak_fail ("corrupt", "%s %" G_GUINT64_FORMAT " (%u bytes, layout 0x%x%s"
        ") is not what was pushed: %s", kind_name (e->kind), seq, e->size,
        e->layout, fate == SOAK_FATE_PARTS ? ", its first half" : "", err);
  note_seen (seq, e->kind, unit, GST_BUFFER_FLAG_IS_SET (buf,
          GST_BUFFER_FLAG_DISCONT), fate == SOAK_FATE_PARTS ? "first half"
      : NULL);
  check_discont (buf, e, seq);
  check_list_rules (e, seq, unit, in_list, unit_list);
  delivered (seq, unit);
  if (fate == SOAK_FATE_PARTS)
    soak.part_seq = seq + 1;
  soak.last_buf_seq = seq + 1;
  atomic_fetch_add_explicit (&soak.buffers_delivered, 1,
      memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.bytes_delivered, len,
      memory_order_relaxed);
}

/* ---- stalls and holds ---- */

/* After a delivery, without vlock: hold for a probe, or stall. */
static void
maybe_stall (guint64 seq)
{
  gint64 until;

  g_mutex_lock (&soak.vlock);
  if (soak.hold_seq == seq + 1) {
    soak.holding = TRUE;
    g_cond_broadcast (&soak.vcond);
    while (!soak.release && !soak.sink_flushing)
      g_cond_wait (&soak.vcond, &soak.vlock);
    soak.holding = soak.release = FALSE;
    soak.hold_seq = 0;
  } else if ((soak.features & SOAK_F_STALL) && soak.stall_permille > 0
      && soak_rand (&soak.stall_rng, 1000) < soak.stall_permille) {
    until = g_get_monotonic_time () + (gint64) soak_log_range (&soak.stall_rng,
        1, MAX (soak.stall_max_us, 1));
    while (!soak.sink_flushing && g_cond_wait_until (&soak.vcond,
            &soak.vlock, until));
  }
  g_mutex_unlock (&soak.vlock);
}

void
soak_verify_hold (guint64 seq)
{
  g_mutex_lock (&soak.vlock);
  soak.hold_seq = seq + 1;
  soak.holding = soak.release = FALSE;
  g_mutex_unlock (&soak.vlock);
}

void
soak_verify_wait_held (void)
{
  g_mutex_lock (&soak.vlock);
  while (!soak.holding)
    g_cond_wait (&soak.vcond, &soak.vlock);
  g_mutex_unlock (&soak.vlock);
}

void
soak_verify_release (void)
{
  g_mutex_lock (&soak.vlock);
  soak.release = TRUE;
  g_cond_broadcast (&soak.vcond);
  g_mutex_unlock (&soak.vlock);
}

/* ---- pad functions ---- */

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  guint64 unit_list = G_MAXUINT64, seq = GST_BUFFER_OFFSET (buf);

  g_mutex_lock (&soak.vlock);
  if (!verify_second_part (buf))
    verify_buffer (buf, ++soak.unit, FALSE, &unit_list);
  g_mutex_unlock (&soak.vlock);
  gst_buffer_unref (buf);
  maybe_stall (seq);
  return GST_FLOW_OK;
}

static GstFlowReturn
sink_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  guint64 unit_list = G_MAXUINT64, seq = 0;
  guint i, n = gst_buffer_list_length (list);

  g_mutex_lock (&soak.vlock);
  soak.unit++;
  if (n == 0)
    soak.discont_excused = TRUE;
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_buffer_list_get (list, i);

    seq = GST_BUFFER_OFFSET (buf);
    verify_buffer (buf, soak.unit, TRUE, &unit_list);
  }
  g_mutex_unlock (&soak.vlock);
  gst_buffer_list_unref (list);
  if (n > 0)
    maybe_stall (seq);
  return GST_FLOW_OK;
}

/* A serialized event or query with its seq.  vlock held. */
static void
verify_other (guint64 seq, guint8 kind)
{
  SoakEntry *e;

  check_no_part_due (kind_name (kind), seq);
  /* The split asked every branch, the join passed each one on: the same
   * query again, with nothing between. */
  if (kind == SOAK_ITEM_QUERY && soak.parallel && soak.last_seq == seq + 1
      && soak_log_get (seq)->kind == SOAK_ITEM_QUERY) {
    atomic_fetch_add_explicit (&soak.query_copies, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&soak.progress, 1, memory_order_relaxed);
    return;
  }
  e = lookup (seq, kind_name (kind));
  note_seen (seq, kind, soak.unit + 1, FALSE, NULL);

  if (e->kind != kind)
    soak_fail ("corrupt", "%s %" G_GUINT64_FORMAT " delivered, but that seq "
        "was pushed as a %s", kind_name (kind), seq, kind_name (e->kind));
  check_gap (seq);
  delivered (seq, ++soak.unit);
}

static void
sink_event_flush (GstEvent * event)
{
  g_mutex_lock (&soak.vlock);
  soak.sink_flushing = GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START;
  g_cond_broadcast (&soak.vcond);
  g_mutex_unlock (&soak.vlock);
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  const GstStructure *s = gst_event_get_structure (event);
  guint64 seq;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
    case GST_EVENT_FLUSH_STOP:
      sink_event_flush (event);
      break;
    case GST_EVENT_SEGMENT:{
      const GstSegment *segment;

      gst_event_parse_segment (event, &segment);
      g_mutex_lock (&soak.vlock);
      soak.seg_epoch = (guint32) segment->time;
      soak.after_sticky = TRUE;
      note_seen (segment->time, 0, soak.unit, FALSE, "SEGMENT (its epoch)");
      g_mutex_unlock (&soak.vlock);
      break;
    }
    case GST_EVENT_STREAM_START:
    case GST_EVENT_CAPS:
      g_mutex_lock (&soak.vlock);
      soak.after_sticky = TRUE;
      note_seen (0, 0, soak.unit, FALSE, GST_EVENT_TYPE_NAME (event));
      g_mutex_unlock (&soak.vlock);
      break;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      if (s != NULL && gst_structure_get_uint64 (s, "seq", &seq)) {
        g_mutex_lock (&soak.vlock);
        verify_other (seq, SOAK_ITEM_EVENT);
        g_mutex_unlock (&soak.vlock);
      }
      break;
    case GST_EVENT_EOS:
      g_mutex_lock (&soak.vlock);
      seq = gst_event_get_seqnum (event) - 1;
      verify_other (seq, SOAK_ITEM_EOS);
      soak.eos_seen = seq + 1;
      g_cond_broadcast (&soak.vcond);
      g_mutex_unlock (&soak.vlock);
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  const GstStructure *s;
  guint64 seq;

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_DRAIN:
      s = gst_query_get_structure (query);
      /* queue forwards FLUSH_START before it stops its task, which may
       * then push an event that the flushing pads refuse and, GstPad
       * letting queries through, the query after it: a flush takes both
       * anyway.  Not verified for queue (tbqueue stops first: see
       * tests/gst/test-flushing.c). */
      if (!soak.is_tbqueue && GST_PAD_IS_FLUSHING (pad))
        return TRUE;
      if (s != NULL && gst_structure_get_uint64 (s, "soak-seq", &seq)) {
        g_mutex_lock (&soak.vlock);
        verify_other (seq, SOAK_ITEM_QUERY);
        g_mutex_unlock (&soak.vlock);
      }
      return TRUE;
    case GST_QUERY_ACCEPT_CAPS:
      gst_query_set_accept_caps_result (query, TRUE);
      return TRUE;
    case GST_QUERY_ALLOCATION:
      return FALSE;
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

void
soak_verify_setup (GstPad * sinkpad)
{
  gst_pad_set_chain_function (sinkpad, sink_chain);
  gst_pad_set_chain_list_function (sinkpad, sink_chain_list);
  gst_pad_set_event_function (sinkpad, sink_event);
  gst_pad_set_query_function (sinkpad, sink_query);
  soak.discont_allowed = TRUE;
}

void
soak_verify_dump (void)
{
  guint i;

  for (i = n_seen > SEEN_RING ? n_seen - SEEN_RING : 0; i < n_seen; i++) {
    const Seen *x = &seen[i % SEEN_RING];

    if (x->what != NULL && x->kind == 0)
      g_print ("# delivered: %s %" G_GUINT64_FORMAT "\n", x->what, x->seq);
    else
      g_print ("# delivered: %s %" G_GUINT64_FORMAT " unit %" G_GUINT64_FORMAT
          "%s%s%s (fate %u)\n", kind_name (x->kind), x->seq, x->unit,
          x->discont ? " DISCONT" : "", x->what ? ", " : "",
          x->what ? x->what : "", (guint) atomic_load_explicit
          (&soak_log_get (x->seq)->fate, memory_order_relaxed));
  }
  g_print ("# verifier: last delivered seq %" G_GINT64_FORMAT
      ", last buffer %" G_GINT64_FORMAT ", floor %" G_GUINT64_FORMAT
      ", segment epoch %u, holding %d (seq %" G_GINT64_FORMAT
      "), sink flushing %d, second output due of %" G_GINT64_FORMAT "\n",
      (gint64) soak.last_seq - 1, (gint64) soak.last_buf_seq - 1,
      atomic_load_explicit (&soak.floor, memory_order_relaxed),
      soak.seg_epoch, soak.holding, (gint64) soak.hold_seq - 1,
      soak.sink_flushing, (gint64) soak.part_seq - 1);
}

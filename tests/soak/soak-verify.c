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
 * Then it may stall (a blocked chain) for a random time, or hold a buffer
 * for a limit probe; FLUSH_START ends either, as it unblocks a real sink.
 */
#include "soak.h"

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
    gboolean buffer = e->kind == SOAK_ITEM_BUFFER
        || e->kind == SOAK_ITEM_LIST_MEMBER;

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

/* vlock held. */
static void
verify_buffer (GstBuffer * buf, guint64 unit, gboolean in_list,
    guint64 * unit_list)
{
  guint64 seq = GST_BUFFER_OFFSET (buf);
  SoakEntry *e = lookup (seq, "buffer");
  gchar *err;

  if (e->kind != SOAK_ITEM_BUFFER && e->kind != SOAK_ITEM_LIST_MEMBER)
    soak_fail ("corrupt", "a buffer has offset %" G_GUINT64_FORMAT
        ", which was pushed as a %s", seq, kind_name (e->kind));
  if (e->epoch != soak.seg_epoch)
    soak_fail ("segment", "buffer %" G_GUINT64_FORMAT " of epoch %u "
        "delivered under the segment of epoch %u", seq, e->epoch,
        soak.seg_epoch);
  check_gap (seq);
  err = soak_data_check_buffer (buf, e, seq);
  if (err != NULL)
    soak_fail ("corrupt", "%s %" G_GUINT64_FORMAT " (%u bytes, layout 0x%x) "
        "is not what was pushed: %s", kind_name (e->kind), seq, e->size,
        e->layout, err);
  check_discont (buf, e, seq);
  check_list_rules (e, seq, unit, in_list, unit_list);
  delivered (seq, unit);
  soak.last_buf_seq = seq + 1;
  atomic_fetch_add_explicit (&soak.buffers_delivered, 1,
      memory_order_relaxed);
  atomic_fetch_add_explicit (&soak.bytes_delivered, e->size,
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
  SoakEntry *e = lookup (seq, kind_name (kind));

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
      g_mutex_unlock (&soak.vlock);
      break;
    }
    case GST_EVENT_STREAM_START:
    case GST_EVENT_CAPS:
      g_mutex_lock (&soak.vlock);
      soak.after_sticky = TRUE;
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
  g_print ("# verifier: last delivered seq %" G_GINT64_FORMAT
      ", last buffer %" G_GINT64_FORMAT ", floor %" G_GUINT64_FORMAT
      ", segment epoch %u, holding %d (seq %" G_GINT64_FORMAT
      "), sink flushing %d\n", (gint64) soak.last_seq - 1,
      (gint64) soak.last_buf_seq - 1,
      atomic_load_explicit (&soak.floor, memory_order_relaxed),
      soak.seg_epoch, soak.holding, (gint64) soak.hold_seq - 1,
      soak.sink_flushing);
}

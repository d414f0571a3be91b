/* The soak harness: limit probes, where what the element drops is exact.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A probe drains the element (a barrier), pushes one buffer p and waits
 * until downstream holds it: the src pad task is then blocked in our chain
 * and the element holds nothing.  The producer pushes a window of buffers
 * while a model of queue's levels (buffers, bytes, and running time from
 * the sink position minus the src position, with queue's position rule)
 * says what queue does with each: enqueue, drop the new buffer
 * (leaky=upstream), or drop the oldest until not filled and enqueue
 * (leaky=downstream); with leaky=no the window stops at the limit.  Then:
 * the element's current-level-* equal the model's, the overrun signals and
 * (tbqueue) the dropped counters equal the model's, and after p is released
 * and the element drained, exactly the model's survivors arrive.
 *
 * For tbqueue the window stays within what the sink pool holds for sure
 * (records packed into sink blocks, plus the block p holds and the
 * copier's current one; records too large for a source block's inline
 * share charged as extents from the same byte budget, which keeps one sink
 * block free for them), so reaching sink-max-bytes, an overrun of its own,
 * never plays a part.  A source pool momentarily full is no reason to drop.
 */
#include "soak.h"

#include <string.h>

#define PROBE_MAX_ITEMS 4000

typedef struct
{
  guint max_buffers, max_bytes;
  guint64 max_time;
  guint64 *queued;              /* seqs, oldest first */
  guint head, tail;
  guint64 buffers, bytes, sink_pos, src_pos;
  guint64 overruns, drops;
  /* sink pool estimate (tbqueue) */
  guint64 block_fill, blocks, max_blocks, block_cap;
  guint64 extent_bytes;         /* charged to the budget by extents */
} Model;

static guint64
model_time (const Model * m)
{
  return m->sink_pos >= m->src_pos ? m->sink_pos - m->src_pos : 0;
}

static gboolean
model_filled (const Model * m)
{
  return (m->max_buffers > 0 && m->buffers >= m->max_buffers)
      || (m->max_bytes > 0 && m->bytes >= m->max_bytes)
      || (m->max_time > 0 && model_time (m) >= m->max_time);
}

static void
model_drop_oldest (Model * m)
{
  SoakEntry *e = soak_log_get (m->queued[m->head++]);

  m->buffers--;
  m->bytes -= e->size;
  m->src_pos = soak_data_position_after (m->src_pos, e);
  m->drops++;
}

/* Whether tbqueue copies `e` (no buffer pool here): copy always, auto up
 * to the copy threshold (512 bytes), reference never. */
static gboolean
record_copied (const SoakEntry * e)
{
  return soak.ch.transfer == 1 || (soak.ch.transfer == 0 && e->size <= 512);
}

/* Bytes a buffer's record takes in a sink block (an upper bound: the
 * record's fields, its memory layout and metas as a few words more). */
static guint64
record_span (const SoakEntry * e)
{
  guint64 payload = 16;         /* a reference record */

  if (record_copied (e))
    payload = 8 + 8 * 8 + e->size;
  return 8 + ((payload + 7) & ~(guint64) 7);
}

/* Budget bytes a copied record may take as an extent (an upper bound:
 * libtbq's extent header and rounding, and an idle extent up to an eighth
 * larger); 0 when it surely travels inline, within a quarter of a source
 * block. */
static guint64
record_extent (const SoakEntry * e)
{
  guint64 span = record_span (e), n;

  if (!record_copied (e) || span <= (soak.ch.source_block_size - 64) / 4)
    return 0;
  n = (span + 64 + 63) & ~(guint64) 63;
  if (n >= 4096)
    n = (n + 4095) & ~(guint64) 4095;
  return n + n / 8;
}

/* Whether `e` still fits the sink pool for sure (tbqueue). */
static gboolean
model_pool_fits (Model * m, const SoakEntry * e)
{
  guint64 span = record_span (e), extent = record_extent (e);
  guint64 blocks = m->blocks, fill = m->block_fill;

  if (!soak.is_tbqueue)
    return TRUE;
  if (fill + span > m->block_cap) {
    blocks++;
    fill = 0;
  }
  /* Whole blocks and extents within the budget, one block kept free. */
  if (blocks > m->max_blocks || (blocks + 1) * soak.ch.sink_block_size
      + m->extent_bytes + extent > soak.ch.sink_max_bytes)
    return FALSE;
  m->blocks = blocks;
  m->block_fill = fill + span;
  m->extent_bytes += extent;
  return TRUE;
}

static void
model_init (Model * m, guint64 pos)
{
  memset (m, 0, sizeof *m);
  g_object_get (soak.element, "max-size-buffers", &m->max_buffers,
      "max-size-bytes", &m->max_bytes, "max-size-time", &m->max_time, NULL);
  m->queued = g_new (guint64, PROBE_MAX_ITEMS);
  m->sink_pos = m->src_pos = pos;
  m->block_cap = soak.ch.sink_block_size - 64;
  m->block_fill = m->block_cap;
  /* The block p is in and the copier's current one. */
  m->blocks = 2;
  m->max_blocks = soak.ch.sink_max_bytes / soak.ch.sink_block_size;
  /* p (up to 1024 bytes) may hold an extent. */
  m->extent_bytes = 2 * 4096;
}

/* Push one plain buffer of the window (stream lock held).  The model is
 * updated first: FALSE when the window ends before it. */
static gboolean
probe_push (Model * m, guint32 max_size, guint64 * seq)
{
  SoakEntry *e;
  GstFlowReturn ret;
  gboolean filled = model_filled (m);

  if (filled && soak.ch.leaky == 0)
    return FALSE;
  e = soak_log_append (seq);
  e->kind = SOAK_ITEM_BUFFER;
  soak_data_plan_buffer (e, *seq, &soak.rng, max_size);
  e->layout &= SOAK_LAYOUT_NO_OFFSET_END;
  if (!model_pool_fits (m, e)) {
    /* Not pushed: the entry is reused by the next append. */
    soak.next_seq--;
    return FALSE;
  }
  if (filled)
    m->overruns++;
  if (filled && soak.ch.leaky == 1) {
    m->drops++;
  } else {
    while (model_filled (m) && m->head < m->tail)
      model_drop_oldest (m);
    m->queued[m->tail++] = *seq;
    m->buffers++;
    m->bytes += e->size;
    m->sink_pos = soak_data_position_after (m->sink_pos, e);
  }
  soak_log_publish ();
  ret = gst_pad_push (soak.srcpad, soak_data_make_buffer (e, *seq));
  atomic_fetch_add_explicit (&soak.buffers_pushed, 1, memory_order_relaxed);
  atomic_store_explicit (&e->status, ret == GST_FLOW_OK ? SOAK_ACCEPTED
      : SOAK_REFUSED, memory_order_relaxed);
  if (ret != GST_FLOW_OK)
    soak_fail ("probe", "a window buffer's push returned %s with no flush "
        "going on", gst_flow_get_name (ret));
  return TRUE;
}

/* Push p, the buffer downstream will hold; returns its position. */
static guint64
probe_push_held (void)
{
  SoakEntry *e;
  GstFlowReturn ret;
  guint64 seq;

  e = soak_log_append (&seq);
  e->kind = SOAK_ITEM_BUFFER;
  soak_data_plan_buffer (e, seq, &soak.rng, 1024);
  e->layout &= SOAK_LAYOUT_NO_OFFSET_END;
  /* A known position, whatever came before. */
  e->pts = seq * soak.ch.ts_step;
  e->dts = GST_CLOCK_TIME_NONE;
  soak_log_publish ();
  soak_verify_hold (seq);
  ret = gst_pad_push (soak.srcpad, soak_data_make_buffer (e, seq));
  atomic_fetch_add_explicit (&soak.buffers_pushed, 1, memory_order_relaxed);
  atomic_store_explicit (&e->status, ret == GST_FLOW_OK ? SOAK_ACCEPTED
      : SOAK_REFUSED, memory_order_relaxed);
  if (ret != GST_FLOW_OK)
    soak_fail ("probe", "pushing into an empty element returned %s",
        gst_flow_get_name (ret));
  return soak_data_position_after (0, e);
}

static void
probe_check_levels (const Model * m, guint pushed, guint64 overruns0,
    guint64 drops0)
{
  guint buffers, bytes;
  guint64 time, overruns, drops;
  gchar *desc;

  g_object_get (soak.element, "current-level-buffers", &buffers,
      "current-level-bytes", &bytes, "current-level-time", &time, NULL);
  overruns = atomic_load_explicit (&soak.overruns, memory_order_relaxed)
      - overruns0;
  drops = soak_element_dropped () - drops0;
  if (buffers == m->buffers && bytes == m->bytes && time == model_time (m)
      && overruns == m->overruns && (!soak.is_tbqueue || drops == m->drops))
    return;
  desc = g_strdup_printf ("with downstream blocked, %u buffers pushed into "
      "an empty element: it holds %u buffers, %u bytes, %" G_GUINT64_FORMAT
      " ns, emitted %" G_GUINT64_FORMAT " overruns and counted %"
      G_GUINT64_FORMAT " drops; queue holds %" G_GUINT64_FORMAT " buffers, %"
      G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT " ns, emits %"
      G_GUINT64_FORMAT " overruns and drops %" G_GUINT64_FORMAT,
      pushed, buffers, bytes, time, overruns, drops, m->buffers,
      m->bytes, model_time (m), m->overruns, m->drops);
  soak_fail ("limits", "%s", desc);
}

static void
probe_check_survivors (const Model * m, guint64 lo, guint64 hi)
{
  guint i = m->head;
  guint64 s;

  for (s = lo; s < hi; s++) {
    gboolean survives = i < m->tail && m->queued[i] == s;

    if (survives)
      i++;
    if (survives != (soak.probe_seen[s - lo] != 0))
      soak_fail ("limits", "buffer %" G_GUINT64_FORMAT " of a limit probe "
          "window [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ") was %s; "
          "queue %s it (leaky=%d)", s, lo, hi,
          survives ? "dropped" : "delivered", survives ? "keeps" : "drops",
          soak.ch.leaky);
  }
}

/* Push the window; returns its end.  Stream lock held. */
static guint64
probe_window (Model * m, guint64 lo)
{
  guint32 max_size = (guint32) soak_log_range (&soak.rng, 1, 64 * 1024);
  guint64 target = soak_range (&soak.rng, 1, 20), seq = lo;
  guint64 limit = soak_range (&soak.rng, 1, PROBE_MAX_ITEMS);
  gboolean unlimited = m->max_buffers == 0 && m->max_bytes == 0
      && m->max_time == 0;

  while (seq - lo < (unlimited ? limit : PROBE_MAX_ITEMS)
      && (soak.ch.leaky == 0 || m->drops < target)) {
    if (!probe_push (m, max_size, &seq))
      break;
    seq++;
  }
  return seq;
}

void
soak_probe_run (void)
{
  guint64 overruns0, drops0, lo, hi, pos;
  Model m;

  soak.op = "limit probe";
  g_mutex_lock (&soak.ctl_lock);
  if (!soak_barrier (TRUE))
    soak_fail ("probe", "a drain query was refused with no flush going on");
  GST_PAD_STREAM_LOCK (soak.srcpad);
  pos = probe_push_held ();
  soak_verify_wait_held ();
  model_init (&m, pos);
  overruns0 = atomic_load_explicit (&soak.overruns, memory_order_relaxed);
  drops0 = soak_element_dropped ();
  lo = soak.next_seq;
  g_mutex_lock (&soak.vlock);
  soak.probe_seen = g_malloc0 (PROBE_MAX_ITEMS);
  soak.probe_lo = lo;
  soak.probe_hi = lo + PROBE_MAX_ITEMS;
  g_mutex_unlock (&soak.vlock);
  hi = probe_window (&m, lo);
  probe_check_levels (&m, (guint) (hi - lo), overruns0, drops0);
  GST_PAD_STREAM_UNLOCK (soak.srcpad);
  soak_verify_release ();
  if (!soak_barrier (TRUE))
    soak_fail ("probe", "a drain query was refused with no flush going on");
  probe_check_survivors (&m, lo, hi);
  g_mutex_lock (&soak.vlock);
  soak.probe_lo = soak.probe_hi = 0;
  g_clear_pointer (&soak.probe_seen, g_free);
  g_mutex_unlock (&soak.vlock);
  g_mutex_unlock (&soak.ctl_lock);
  g_free (m.queued);
  atomic_fetch_add_explicit (&soak.probes, 1, memory_order_relaxed);
}

/* tbqueue stats: the table of the `stats` fields, the structure built
 * from it, and the "tbqueue-levels" element message.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A reading is a snapshot of plain numbers (Snapshot, below): the levels,
 * the element's counters and libtbq's statistics, each read once with a
 * relaxed load.  Each field of the table names its member of the snapshot,
 * so that the structure, the message and docs/element.md's table (written
 * from this file by `tests/docs/check-stats-doc.py --write`) have the same
 * fields in the same order, with one meaning each.  Threads and locks:
 * gsttbqueue-private.h.
 */
#include "gsttbqueue-stats.h"
#include "gsttbqueue-levels.h"

/* ---- a reading ---- */

typedef struct
{
  guint64 level_buffers, level_bytes, level_time;
  guint64 peak_buffers, peak_bytes, peak_time;
  guint64 copied, copied_bytes, referenced, copy_fallbacks;
  guint64 referenced_special, referenced_meta, referenced_too_large;
  guint64 dropped_upstream, dropped_downstream;
  guint64 overruns, underruns, level_waits, copier_waits;
  guint64 pool_held, pool_limit;
  guint64 spill_errors;
  TbqStats lib;                 /* zero while the element is not running */
} Snapshot;

static void
snapshot_read (GstTbQueue * tbq, Snapshot * n)
{
  GstTbQueueCounters *c = &tbq->counters;

  memset (n, 0, sizeof *n);
  /* qlock: close() clears tbq->q under it before freeing.  The levels are
   * read under it too: what they count out (out_*, the src time) is
   * written only under qlock, so each level is one that really was (read
   * without it, the out counter could be read before k buffers went out
   * and the in counter after k more came in: a level k too high). */
  GST_TBQUEUE_MUTEX_LOCK (tbq);
  if (tbq->q != NULL)
    tbq_queue_get_stats (tbq->q, &n->lib);
  /* Each level read once, so that a peak is never shown below it: the
   * peaks kept are the highest levels before each drop, and the current
   * level is the highest since the last one (gst_tbqueue_note_peaks). */
  n->level_buffers = gst_tbqueue_level_buffers (tbq);
  n->level_bytes = gst_tbqueue_level_bytes (tbq);
  n->level_time = gst_tbqueue_level_time (tbq);
  n->peak_buffers = MAX (TBQ_LOAD (tbq->peak_buffers), n->level_buffers);
  n->peak_bytes = MAX (TBQ_LOAD (tbq->peak_bytes), n->level_bytes);
  n->peak_time = MAX (TBQ_LOAD (tbq->peak_time), n->level_time);
  /* pool_refs_out is qlock's: in - out is a count that really was (in is
   * bumped before the record it counts is published). */
  n->pool_held = gst_tbqueue_pool_buffers_held (tbq);
  if (tbq->held_pool != NULL) {
    gint64 cap = TBQ_LOAD (tbq->pool_cap);

    n->pool_limit = cap == G_MAXINT64 ? G_MAXUINT64 : (guint64) cap;
  }
  GST_TBQUEUE_MUTEX_UNLOCK (tbq);

  n->copied = TBQ_LOAD (c->copied);
  n->copied_bytes = TBQ_LOAD (c->copied_bytes);
  n->referenced = TBQ_LOAD (c->referenced);
  n->copy_fallbacks = TBQ_LOAD (c->copy_fallbacks);
  n->referenced_special = TBQ_LOAD (c->referenced_special);
  n->referenced_meta = TBQ_LOAD (c->referenced_meta);
  n->referenced_too_large = TBQ_LOAD (c->referenced_too_large);
  n->dropped_upstream = TBQ_LOAD (c->dropped_upstream);
  n->dropped_downstream = TBQ_LOAD (c->dropped_downstream);
  n->overruns = TBQ_LOAD (c->overruns);
  n->underruns = TBQ_LOAD (c->underruns);
  n->level_waits = TBQ_LOAD (c->level_waits);
  n->copier_waits = TBQ_LOAD (c->copier_waits);
  n->spill_errors = n->lib.spill.write_errors + n->lib.spill.read_errors;
}

/* ---- the table ---- */

typedef struct
{
  const gchar *name;
  GType type;
  gsize offset;                 /* of its guint64 in the Snapshot */
  const gchar *meaning;         /* one line, Markdown */
} Field;

/* One field: its name, its member of the snapshot, its meaning.  The
 * documentation is generated from these lines: keep each a FIELD_U64 call
 * whose name and meaning are string literals. */
#define FIELD_U64(name, member, meaning) \
  { name, G_TYPE_UINT64, G_STRUCT_OFFSET (Snapshot, member), meaning }

static const Field fields[] = {
  FIELD_U64 ("current-level-buffers", level_buffers,
      "Buffers queued: both layers and what the copy task holds (as the "
      "property)"),
  FIELD_U64 ("current-level-bytes", level_bytes,
      "Payload bytes queued (as the property)"),
  FIELD_U64 ("current-level-time", level_time,
      "Running time queued, ns (as the property)"),
  FIELD_U64 ("peak-level-buffers", peak_buffers,
      "Highest `current-level-buffers` since the element was created, "
      "whatever the buffers' way (copied, frames, lists, referenced); never "
      "below `current-level-buffers`"),
  FIELD_U64 ("peak-level-bytes", peak_bytes,
      "Highest `current-level-bytes`, as `peak-level-buffers`"),
  FIELD_U64 ("peak-level-time", peak_time,
      "Highest `current-level-time` (ns), as `peak-level-buffers`"),
  FIELD_U64 ("records-in", lib.records_in,
      "Records written by the upstream thread (buffers, events and queries)"),
  FIELD_U64 ("records-out", lib.records_out,
      "Records taken by the src task"),
  FIELD_U64 ("buffers-copied", copied,
      "Buffers that travelled by value (copied)"),
  FIELD_U64 ("bytes-copied", copied_bytes,
      "Payload bytes of the buffers copied, small ones and frames alike: "
      "what the upstream thread copied"),
  FIELD_U64 ("buffers-referenced", referenced,
      "Buffers that travelled by reference"),
  FIELD_U64 ("copy-fallbacks", copy_fallbacks,
      "Buffers the transfer mode would copy that could not be copied "
      "without loss and were referenced; the sum of the three below"),
  FIELD_U64 ("referenced-special-memory", referenced_special,
      "Of them: in special memory (fd/DMA-buf, not mappable, caps of "
      "another memory type)"),
  FIELD_U64 ("referenced-uncopyable-meta", referenced_meta,
      "Of them: with a meta that cannot be copied"),
  FIELD_U64 ("referenced-too-large", referenced_too_large,
      "Of them: larger than the sink pool can hold"),
  FIELD_U64 ("pool-buffers-held", pool_held,
      "Buffers of upstream buffer pools (any pool) the element holds by "
      "reference: queued, and those downstream has inside the src task's "
      "push"),
  FIELD_U64 ("pool-buffers-limit", pool_limit,
      "How many of them `transfer=auto` holds at most: half the "
      "`max-buffers` of the pool of the last pool buffer that came in, "
      "rounded down, behind a live source; a pool buffer that would be one "
      "more is copied.  G_MAXUINT64 when nothing is copied (a source that "
      "is not live, an unbounded pool), 0 before any pool buffer came in "
      "(or with another transfer mode)"),
  FIELD_U64 ("dropped-upstream", dropped_upstream,
      "Buffers leaked by `leaky=upstream`"),
  FIELD_U64 ("dropped-downstream", dropped_downstream,
      "Buffers leaked by `leaky=downstream`"),
  FIELD_U64 ("overruns", overruns, "Times the queue was found full"),
  FIELD_U64 ("underruns", underruns, "Times the queue was found empty"),
  FIELD_U64 ("level-waits", level_waits,
      "Times the upstream thread waited for the level to drop"),
  FIELD_U64 ("copier-waits", copier_waits,
      "Times the upstream thread waited for the copy task (a leaky mode: a "
      "full source pool while the sink pool has room, or the oldest items "
      "still on their way to be leaked)"),
  FIELD_U64 ("source-pool-full", lib.records_dropped,
      "Times the source pool had no free block at once"),
  FIELD_U64 ("pressure-waits", lib.pressure_waits,
      "Times the upstream thread waited for a free source block "
      "(`leaky=no` only)"),
  FIELD_U64 ("sink-pressure-waits", lib.sink_pressure_waits,
      "Times the copy task waited for a free sink block"),
  FIELD_U64 ("handoffs", lib.handoffs,
      "Source blocks handed to the copy task"),
  FIELD_U64 ("copier-passes", lib.copier_passes,
      "Copy task passes that moved records"),
  FIELD_U64 ("copier-wakeups", lib.copier_wakeups, "Copy task wake-ups"),
  FIELD_U64 ("copier-sleeps", lib.copier_sleeps,
      "Times the copy task went to sleep (for work, or for room in the "
      "sink pool)"),
  FIELD_U64 ("copier-bytes-moved", lib.bytes_copied,
      "Record bytes (headers and padding included) the copy task moved "
      "from the source pool into sink blocks; a frame's bytes are not "
      "moved, only its small record"),
  FIELD_U64 ("upstream-wakeups", lib.writer_wakeups,
      "System calls the upstream thread made to wake the src task or the "
      "copy task"),
  FIELD_U64 ("src-sleeps", lib.reader_sleeps,
      "Times the src task went to sleep waiting for data"),
  FIELD_U64 ("src-naps", lib.reader_naps,
      "Waits in which the src task napped (wake coalescing)"),
  FIELD_U64 ("src-naps-woken", lib.reader_naps_woken,
      "Naps that something ended before their deadline (an event, a query, "
      "EOS, a flush, a full half of the source pool)"),
  FIELD_U64 ("records-discarded", lib.records_discarded,
      "Records dropped by flushes and state changes"),
  FIELD_U64 ("source-block-size", lib.source.block_size,
      "Bytes per source pool block"),
  FIELD_U64 ("source-blocks", lib.source.blocks_total,
      "Source pool blocks"),
  FIELD_U64 ("source-blocks-in-use", lib.source.blocks_in_use,
      "Source pool blocks in use (the upstream thread's current one "
      "included)"),
  FIELD_U64 ("source-blocks-peak", lib.source.blocks_peak,
      "Highest `source-blocks-in-use`"),
  FIELD_U64 ("sink-block-size", lib.sink.block_size,
      "Bytes per sink pool block"),
  FIELD_U64 ("sink-blocks", lib.sink.blocks_total,
      "Sink blocks allocated (in use and idle); frames are not in blocks, "
      "see `sink-bytes-in-use`"),
  FIELD_U64 ("sink-blocks-in-use", lib.sink.blocks_in_use,
      "Sink blocks holding records (frames' memory not included)"),
  FIELD_U64 ("sink-blocks-peak", lib.sink.blocks_peak,
      "Highest `sink-blocks-in-use`"),
  FIELD_U64 ("sink-blocks-idle", lib.sink.blocks_idle,
      "Sink blocks kept free for the next backlog"),
  FIELD_U64 ("sink-bytes-in-use", lib.extents.budget_used,
      "Sink pool memory counted against `sink-max-bytes`: the sink blocks "
      "in use and the memory of copied frames, queued, on their way to the "
      "spill file or still held downstream, and of what is read back from "
      "the file until the src task pushes it (bytes)"),
  FIELD_U64 ("sink-bytes-peak", lib.extents.budget_peak,
      "Highest `sink-bytes-in-use` since the last READY to PAUSED; never "
      "below it, never above `sink-max-bytes` (bytes)"),
  FIELD_U64 ("sink-allocations", lib.sink.allocations,
      "Sink blocks allocated from the system"),
  FIELD_U64 ("sink-releases", lib.sink.releases,
      "Sink blocks given back to the system"),
  FIELD_U64 ("spill-bytes-written", lib.spill.bytes_written,
      "Bytes written to the spill file (`temp-template`): records, frames "
      "and each unit's 64-byte header"),
  FIELD_U64 ("spill-bytes-read", lib.spill.bytes_read,
      "Bytes read back from the spill file"),
  FIELD_U64 ("spill-level-bytes", lib.spill.level_bytes,
      "Bytes in the spill file not read back yet (bounded by "
      "`spill-max-bytes`)"),
  FIELD_U64 ("spill-errors", spill_errors,
      "Spill file writes that failed (each retried) and units that could "
      "not be read back"),
  FIELD_U64 ("checksum-errors", lib.spill.checksum_errors,
      "Units of the spill file whose checksum or header did not match (an "
      "element error each)"),
};

/* A structure named `name` with every field of the table. */
static GstStructure *
structure_new (const gchar * name, const Snapshot * n)
{
  GstStructure *s = gst_structure_new_empty (name);
  GValue v = G_VALUE_INIT;
  guint i;

  g_value_init (&v, G_TYPE_UINT64);
  for (i = 0; i < G_N_ELEMENTS (fields); i++) {
    g_value_set_uint64 (&v, G_STRUCT_MEMBER (guint64, n, fields[i].offset));
    gst_structure_set_value (s, fields[i].name, &v);
  }
  g_value_unset (&v);
  return s;
}

GstStructure *
gst_tbqueue_stats (GstTbQueue * tbq)
{
  Snapshot n;

  snapshot_read (tbq, &n);
  return structure_new (GST_TBQUEUE_STATS_NAME, &n);
}

/* ---- the levels message ---- */

void
gst_tbqueue_stats_post (GstTbQueue * tbq)
{
  Snapshot n;

  snapshot_read (tbq, &n);
  gst_element_post_message (GST_ELEMENT_CAST (tbq),
      gst_message_new_element (GST_OBJECT_CAST (tbq),
          structure_new (GST_TBQUEUE_LEVELS_MESSAGE_NAME, &n)));
}

/* The system clock's thread, every interval.  The element is held weakly:
 * a tick that comes as it goes posts nothing. */
static gboolean
post_tick (GstClock * clock, GstClockTime time, GstClockID id,
    gpointer user_data)
{
  GstTbQueue *tbq = g_weak_ref_get (user_data);

  if (tbq == NULL)
    return TRUE;
  gst_tbqueue_stats_post (tbq);
  gst_object_unref (tbq);
  return TRUE;
}

static void
weak_ref_free (gpointer data)
{
  g_weak_ref_clear (data);
  g_free (data);
}

/* Object lock: the periodic id that posts, unscheduled and released (if
 * any) and, when running with an interval, a new one from now on. */
static void
locked_rearm (GstTbQueue * tbq)
{
  GstClock *clock;
  GWeakRef *ref;
  GstClockReturn ret;

  if (tbq->levels_clock_id != NULL) {
    /* Returns at once: a tick under way may still post once. */
    gst_clock_id_unschedule (tbq->levels_clock_id);
    gst_clock_id_unref (tbq->levels_clock_id);
    tbq->levels_clock_id = NULL;
  }
  if (!tbq->levels_running || tbq->levels_interval == 0)
    return;
  /* The property's range (at most G_MAXINT64) keeps now + interval, and
   * the ticks after it, from wrapping into the past (a tick due at once,
   * for ever). */
  clock = gst_system_clock_obtain ();
  tbq->levels_clock_id = gst_clock_new_periodic_id (clock,
      gst_clock_get_time (clock) + tbq->levels_interval, tbq->levels_interval);
  gst_object_unref (clock);
  if (tbq->levels_clock_id == NULL)
    goto no_id;
  ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, tbq);
  ret = gst_clock_id_wait_async (tbq->levels_clock_id, post_tick, ref,
      weak_ref_free);
  if (ret != GST_CLOCK_OK) {
    /* A bad time or a clock without async waits is refused before the
     * entry takes the reference: ours to free.  Otherwise the entry frees
     * it with itself. */
    if (ret == GST_CLOCK_BADTIME || ret == GST_CLOCK_UNSUPPORTED)
      weak_ref_free (ref);
    gst_clock_id_unref (tbq->levels_clock_id);
    tbq->levels_clock_id = NULL;
    goto no_id;
  }
  return;

no_id:
  GST_WARNING_OBJECT (tbq, "cannot schedule the levels message every %"
      G_GUINT64_FORMAT " ns", tbq->levels_interval);
}

void
gst_tbqueue_stats_set_post_interval (GstTbQueue * tbq, guint64 interval)
{
  /* The property refuses anything else (gsttbqueue-properties.c). */
  g_return_if_fail (interval == 0
      || interval >= GST_TBQUEUE_LEVELS_MIN_INTERVAL);
  GST_OBJECT_LOCK (tbq);
  if (interval != tbq->levels_interval) {
    tbq->levels_interval = interval;
    locked_rearm (tbq);
  }
  GST_OBJECT_UNLOCK (tbq);
}

guint64
gst_tbqueue_stats_get_post_interval (GstTbQueue * tbq)
{
  guint64 interval;

  GST_OBJECT_LOCK (tbq);
  interval = tbq->levels_interval;
  GST_OBJECT_UNLOCK (tbq);
  return interval;
}

void
gst_tbqueue_stats_start_posting (GstTbQueue * tbq)
{
  GST_OBJECT_LOCK (tbq);
  tbq->levels_running = TRUE;
  locked_rearm (tbq);
  GST_OBJECT_UNLOCK (tbq);
}

void
gst_tbqueue_stats_stop_posting (GstTbQueue * tbq)
{
  GST_OBJECT_LOCK (tbq);
  tbq->levels_running = FALSE;
  locked_rearm (tbq);
  GST_OBJECT_UNLOCK (tbq);
}

/* tbqueue buffering: queue2's use-buffering, its watermarks, BUFFERING
 * messages and the BUFFERING query.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What queue2 computes, computed the same way (so that an application
 * written against queue2 sees the same percentages), over tbqueue's
 * levels: the level is the fullest of the max-size-* limits, each scaled
 * to GST_TBQUEUE_BUFFERING_MAX, and, with use-rate-estimate, of the level
 * as a duration against max-size-time; the percentage is the level over
 * the high watermark, capped at 100.  Buffering starts when the level
 * falls below the low watermark and ends when the percentage reaches 100:
 * between the two nothing starts or ends, so the messages never flap.
 *
 * Where tbqueue differs from queue2, each on purpose:
 *  - Full while the upstream thread waits: for room (a max-size-* limit,
 *    the sink pool's memory or the spill file), or for the answer to a
 *    serialized query that waits behind data downstream is not taking.
 *    Nothing can come in then; an application that pauses below 100 %
 *    would wait forever.  An ALLOCATION query that comes while
 *    buffering, behind data (upstream renegotiating), is refused, as
 *    queue2 refuses it: waiting, it would make the level 100 % with
 *    nearly nothing buffered, and the player would play and pause again
 *    at once; refused, upstream keeps allocating as it did.  queue2
 *    refuses every serialized query behind data; tbqueue answers the
 *    others in their place (a drain must be answered), and those behind
 *    no data post nothing.
 *  - The sink layer is a limit too, where it binds first: the sink pool
 *    against sink-max-bytes, or the spill file against spill-max-bytes.
 *    And an overrun (a leaky mode dropping or leaking for lack of room,
 *    or the upstream thread waiting below a limit) is full until data
 *    goes out: a queue that drops at a limit its level does not show
 *    would otherwise never reach 100 %.
 *  - use-tags-bitrate gives the level as a duration (as a downstream
 *    bitrate does), not the duration of buffers that have none: the time
 *    level, which max-size-time bounds, stays what queue computes.
 *  - The BUFFERING query is answered with use-buffering only; without it,
 *    it goes upstream as on queue.  The range held is given in bytes (the
 *    bytes in and out since the last flush), in time (the running times
 *    at the sink and src pads) or in percent of upstream's duration in
 *    bytes.
 *
 * Locks: `lock` guards the state (gsttbqueue-private.h); no other lock of
 * the element is taken inside it (the levels are relaxed loads) and it is
 * never held while posting.  `post_lock` orders the messages.
 */
#include "gsttbqueue-buffering.h"
#include "gsttbqueue-levels.h"

#define DEFAULT_LOW_WATERMARK 0.01
#define DEFAULT_HIGH_WATERMARK 0.99
/* queue2's rate estimate: a new figure every 0.2 s, the input averaged
 * over up to 16 of them (weighted by their length), the output over the
 * last few. */
#define RATE_INTERVAL 0.2
#define AVG_IN(avg, val, w1, w2) (((avg) * (w1) + (val) * (w2)) / ((w1) + (w2)))
#define AVG_OUT(avg, val) (((avg) * 3.0 + (val)) / 4.0)

void
gst_tbqueue_buffering_init (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  g_mutex_init (&b->lock);
  g_rec_mutex_init (&b->post_lock);
  atomic_init (&b->on, FALSE);
  b->use_rate_estimate = TRUE;
  b->use_tags_bitrate = FALSE;
  b->use_bitrate_query = TRUE;
  b->low = (gint) (DEFAULT_LOW_WATERMARK * GST_TBQUEUE_BUFFERING_MAX);
  b->high = (gint) (DEFAULT_HIGH_WATERMARK * GST_TBQUEUE_BUFFERING_MAX);
  b->percent = -1;
  b->posted = -1;
  b->mode = GST_BUFFERING_STREAM;
  b->left = -1;
}

void
gst_tbqueue_buffering_clear (GstTbQueue * tbq)
{
  g_mutex_clear (&tbq->buffering.lock);
  g_rec_mutex_clear (&tbq->buffering.post_lock);
}

/* ---- the level ---- */

/* `cur` of `max` in GST_TBQUEUE_BUFFERING_MAX units; 0 without a limit.
 * 64-bit and scaled: no limit or level is too large. */
static gint
normalize (guint64 cur, guint64 max)
{
  guint64 p;

  if (max == 0)
    return 0;
  p = gst_util_uint64_scale (cur, GST_TBQUEUE_BUFFERING_MAX, max);
  return (gint) MIN (p, GST_TBQUEUE_BUFFERING_MAX);
}

/* Lock held: the bitrate in use (bits/s, 0: none): the tags', with
 * use-tags-bitrate, else downstream's, with use-bitrate-query, as
 * queue2's bitrate property says. */
static guint
locked_bitrate (GstTbQueueBuffering * b)
{
  guint bitrate = 0;

  if (b->use_tags_bitrate)
    bitrate = b->sink_tags_bitrate ? b->sink_tags_bitrate
        : b->src_tags_bitrate;
  if (bitrate == 0 && b->use_bitrate_query)
    bitrate = b->downstream_bitrate;
  return bitrate;
}

/* Lock held: the level as a duration, from the bitrate in use, else the
 * input rate. */
static void
locked_rate_time (GstTbQueue * tbq, GstTbQueueBuffering * b)
{
  guint64 bytes = gst_tbqueue_level_bytes (tbq);
  guint bitrate = locked_bitrate (b);

  if (bitrate > 0)
    b->rate_time = gst_util_uint64_scale (8 * bytes, GST_SECOND, bitrate);
  else if (b->in_rate > 0.0)
    b->rate_time = (guint64) (bytes / b->in_rate * GST_SECOND);
  else
    b->rate_time = 0;
}

/* Lock held: the sink layer's fill from a snapshot of libtbq's stats.
 * Without spill, the records' bytes against the sink pool's budget
 * (sink-max-bytes, or what an allocation failure left of it): the bytes
 * that fill its blocks, 0 when empty (the blocks in use would never fall
 * below the one being filled).  With spill the file takes the backlog
 * past three quarters of the budget: the file against spill-max-bytes;
 * once the file takes no more (full, or its writes fail), the memory in
 * use against the budget, which then fills to its end but the eighth kept
 * for reading the file back (libtbq's read-back room). */
static gint
locked_sink_level (GstTbQueue * tbq, GstTbQueueBuffering * b,
    const TbqStats * st)
{
  const TbqExtentStats *mem = &st->extents;

  if (!tbq->spilling)
    return normalize (st->bytes_in > st->bytes_out
        ? st->bytes_in - st->bytes_out : 0, mem->budget_limit);
  if (st->spill.failing)
    return normalize (mem->budget_used, mem->budget_limit
        - mem->budget_limit / 8);
  return normalize (st->spill.level_bytes, b->spill_max);
}

/* Lock held: the level, 0..GST_TBQUEUE_BUFFERING_MAX: the fullest of the
 * limits, whichever binds first. */
static gint
locked_level (GstTbQueue * tbq, GstTbQueueBuffering * b)
{
  guint64 bytes = gst_tbqueue_level_bytes (tbq);
  guint64 max_time = TBQ_LOAD (tbq->max_time);
  gint level;

  if (b->eos || b->stalled > 0 || b->overrun
      || GST_TBQUEUE_FLOW (tbq) == GST_FLOW_NOT_LINKED)
    return GST_TBQUEUE_BUFFERING_MAX;
  level = normalize (bytes, TBQ_LOAD (tbq->max_bytes));
  level = MAX (level, b->sink_level);
  level = MAX (level, normalize (gst_tbqueue_level_time (tbq), max_time));
  level = MAX (level, normalize (gst_tbqueue_level_buffers (tbq),
          TBQ_LOAD (tbq->max_buffers)));
  if (b->use_rate_estimate)
    level = MAX (level, normalize (b->rate_time, max_time));
  /* Not 0 % unless empty. */
  if (bytes > 0)
    level = MAX (1, level);
  return level;
}

static gint
to_percent (GstTbQueueBuffering * b, gint level)
{
  gint percent;

  /* The high watermark is 100 %. */
  if (b->high <= 0)
    return 100;
  percent = (gint) ((gint64) level * 100 / b->high);
  return MIN (percent, 100);
}

/* Lock held: the message's stats for `percent`. */
static void
locked_stats (GstTbQueue * tbq, GstTbQueueBuffering * b, gint percent,
    GstBufferingMode * mode, gint * avg_in, gint * avg_out, gint64 * left)
{
  *mode = GST_BUFFERING_STREAM;
  *avg_in = (gint) MIN (b->in_rate, (gdouble) G_MAXINT);
  *avg_out = (gint) MIN (b->out_rate, (gdouble) G_MAXINT);
  *left = percent == 100 ? 0 : -1;
  if (b->use_rate_estimate) {
    guint64 max = TBQ_LOAD (tbq->max_time);

    /* ms until max-size-time's worth is in, at the rate it comes. */
    if (percent != 100 && max > b->rate_time)
      *left = (gint64) ((max - b->rate_time) / GST_MSECOND);
  }
}

static void
locked_set_percent (GstTbQueue * tbq, GstTbQueueBuffering * b, gint percent)
{
  if (percent == b->percent)
    return;
  b->percent = percent;
  locked_stats (tbq, b, percent, &b->mode, &b->avg_in, &b->avg_out,
      &b->left);
  GST_DEBUG_OBJECT (tbq, "buffering %d percent", percent);
}

/* Lock held: look at the level and decide. */
static void
locked_update (GstTbQueue * tbq, GstTbQueueBuffering * b)
{
  gint level, percent;

  if (b->high <= 0) {
    /* Nothing to wait for. */
    if (b->is_buffering) {
      b->is_buffering = FALSE;
      locked_set_percent (tbq, b, 100);
    }
    return;
  }
  locked_rate_time (tbq, b);
  level = locked_level (tbq, b);
  percent = to_percent (b, level);
  if (b->is_buffering) {
    if (percent >= 100)
      b->is_buffering = FALSE;
    locked_set_percent (tbq, b, percent);
  } else if (level < b->low) {
    b->is_buffering = TRUE;
    locked_set_percent (tbq, b, percent);
  }
}

/* ---- the rates ---- */

static gdouble
elapsed_s (gint64 start)
{
  return (g_get_monotonic_time () - start) / (gdouble) G_USEC_PER_SEC;
}

/* Lock held: a new input rate figure every RATE_INTERVAL. */
static void
locked_in_rate (GstTbQueueBuffering * b)
{
  gdouble elapsed, period, rate;

  if (b->in_start == 0) {
    b->in_start = g_get_monotonic_time ();
    return;
  }
  elapsed = elapsed_s (b->in_start);
  if (b->in_last + RATE_INTERVAL >= elapsed)
    return;
  period = elapsed - b->in_last;
  rate = b->bytes_in / period;
  if (b->in_rate == 0.0)
    b->in_rate = rate;
  else
    b->in_rate = AVG_IN (b->in_rate, rate, b->in_period, period);
  if (b->in_period < 16 * RATE_INTERVAL)
    b->in_period += period;
  b->in_last = elapsed;
  b->bytes_in = 0;
}

static void
locked_out_rate (GstTbQueueBuffering * b)
{
  gdouble elapsed, period, rate;

  if (b->out_start == 0) {
    b->out_start = g_get_monotonic_time ();
    return;
  }
  elapsed = elapsed_s (b->out_start);
  if (b->out_last + RATE_INTERVAL >= elapsed)
    return;
  period = elapsed - b->out_last;
  rate = b->bytes_out / period;
  b->out_rate = b->out_rate == 0.0 ? rate : AVG_OUT (b->out_rate, rate);
  b->out_last = elapsed;
  b->bytes_out = 0;
}

static void
locked_reset_rates (GstTbQueueBuffering * b)
{
  b->in_start = b->out_start = 0;
  b->in_last = b->out_last = 0.0;
  b->bytes_in = b->bytes_out = 0;
  b->in_rate = b->out_rate = b->in_period = 0.0;
  b->rate_time = 0;
}

/* ---- posting ---- */

/* Post the percentage if it is not the last one posted.  No lock held.
 * A post that fails (no bus yet: an element not in a bin) is tried again
 * at the next change or state change.
 *
 * The poster holding `post_lock` posts until the last one posted is the
 * percentage now: another thread that changed it meanwhile and saw
 * nothing due (the post under way not yet counted as posted) leaves it
 * to this one.  (Without the loop the level could go back to what was
 * last posted before that post counted, and the newer percentage was
 * never posted: the next change to the stale one posted nothing.) */
static void
post (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  GstMessage *msg;
  gint percent;
  gboolean due;

  g_mutex_lock (&b->lock);
  due = b->percent >= 0 && b->percent != b->posted;
  g_mutex_unlock (&b->lock);
  if (!due)
    return;
  g_rec_mutex_lock (&b->post_lock);
  for (;;) {
    msg = NULL;
    g_mutex_lock (&b->lock);
    percent = b->percent;
    if (percent >= 0 && percent != b->posted) {
      msg = gst_message_new_buffering (GST_OBJECT_CAST (tbq), percent);
      gst_message_set_buffering_stats (msg, b->mode, b->avg_in, b->avg_out,
          b->left);
    }
    g_mutex_unlock (&b->lock);
    if (msg == NULL || !gst_element_post_message (GST_ELEMENT_CAST (tbq),
            msg))
      break;
    g_mutex_lock (&b->lock);
    b->posted = percent;
    g_mutex_unlock (&b->lock);
    GST_DEBUG_OBJECT (tbq, "posted %d%% buffering", percent);
  }
  g_rec_mutex_unlock (&b->post_lock);
}

/* ---- the streaming threads ---- */

/* Data of `bytes` went in (`in`) or out: the rate on that side, the sink
 * layer's fill (sampled here: the two-layer queue exists while the
 * streaming threads run), then the level.  Data out makes room: an
 * overrun is over. */
static void
moved (GstTbQueue * tbq, gboolean in, guint64 bytes)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  TbqStats st = { 0 };

  if (!gst_tbqueue_buffering_on (tbq))
    return;
  g_mutex_lock (&b->lock);
  /* Sampled under `lock`, as every other input of the level: each thread's
   * update then sees what the one before it saw or later (the counters
   * only grow), so the two threads never post an older level after a
   * newer one.  libtbq's locks are inner to `lock`. */
  tbq_queue_get_stats (tbq->q, &st);
  b->sink_level = locked_sink_level (tbq, b, &st);
  if (in) {
    b->bytes_in += bytes;
    locked_in_rate (b);
  } else {
    b->overrun = FALSE;
    b->bytes_out += bytes;
    locked_out_rate (b);
  }
  locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

void
gst_tbqueue_buffering_in (GstTbQueue * tbq, guint64 bytes)
{
  moved (tbq, TRUE, bytes);
}

void
gst_tbqueue_buffering_out (GstTbQueue * tbq, guint64 bytes)
{
  moved (tbq, FALSE, bytes);
}

void
gst_tbqueue_buffering_set_eos (GstTbQueue * tbq, gboolean eos)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  g_mutex_lock (&b->lock);
  b->eos = eos;
  if (gst_tbqueue_buffering_on (tbq))
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

gboolean
gst_tbqueue_buffering_refuses_query (GstTbQueue * tbq, GstQuery * query)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  gboolean buffering;

  if (!gst_tbqueue_buffering_on (tbq)
      || GST_QUERY_TYPE (query) != GST_QUERY_ALLOCATION)
    return FALSE;
  g_mutex_lock (&b->lock);
  buffering = b->is_buffering;
  g_mutex_unlock (&b->lock);
  return buffering && (gst_tbqueue_level_buffers (tbq) > 0
      || TBQ_LOAD (tbq->pushing_data));
}

void
gst_tbqueue_buffering_stall (GstTbQueue * tbq, gboolean stalled)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  g_mutex_lock (&b->lock);
  if (stalled)
    b->stalled++;
  else if (b->stalled > 0)
    b->stalled--;
  if (gst_tbqueue_buffering_on (tbq))
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

void
gst_tbqueue_buffering_overrun (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  if (!gst_tbqueue_buffering_on (tbq))
    return;
  g_mutex_lock (&b->lock);
  b->overrun = TRUE;
  locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

void
gst_tbqueue_buffering_tags (GstTbQueue * tbq, GstEvent * event,
    gboolean sink)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  GstTagList *tags;
  guint bitrate;

  gst_event_parse_tag (event, &tags);
  if (!gst_tag_list_get_uint (tags, GST_TAG_BITRATE, &bitrate)
      && !gst_tag_list_get_uint (tags, GST_TAG_NOMINAL_BITRATE, &bitrate))
    return;
  g_mutex_lock (&b->lock);
  if (sink)
    b->sink_tags_bitrate = bitrate;
  else
    b->src_tags_bitrate = bitrate;
  if (gst_tbqueue_buffering_on (tbq) && b->use_tags_bitrate)
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

void
gst_tbqueue_buffering_check_bitrate (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  GstQuery *query;
  guint bitrate = 0;
  gboolean use, changed;

  if (!gst_tbqueue_buffering_on (tbq))
    return;
  g_mutex_lock (&b->lock);
  use = b->use_bitrate_query;
  g_mutex_unlock (&b->lock);
  /* A split's branches each have their own downstream: no one bitrate. */
  if (!use || tbq->srcpad == NULL || !gst_pad_check_reconfigure (tbq->srcpad))
    return;
  query = gst_query_new_bitrate ();
  if (gst_pad_peer_query (tbq->srcpad, query))
    gst_query_parse_bitrate (query, &bitrate);
  gst_query_unref (query);
  GST_DEBUG_OBJECT (tbq, "downstream bitrate %u", bitrate);
  g_mutex_lock (&b->lock);
  changed = b->downstream_bitrate != bitrate;
  b->downstream_bitrate = bitrate;
  if (changed)
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  if (changed) {
    post (tbq);
    g_object_notify (G_OBJECT (tbq), "bitrate");
  }
}

void
gst_tbqueue_buffering_update (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  if (!gst_tbqueue_buffering_on (tbq))
    return;
  g_mutex_lock (&b->lock);
  locked_in_rate (b);
  locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

void
gst_tbqueue_buffering_restart (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  guint64 spill_max;

  GST_OBJECT_LOCK (tbq);
  spill_max = tbq->spill_max_bytes;
  GST_OBJECT_UNLOCK (tbq);
  g_mutex_lock (&b->lock);
  locked_reset_rates (b);
  b->eos = FALSE;
  b->overrun = FALSE;
  b->sink_level = 0;
  b->spill_max = spill_max;
  b->sink_tags_bitrate = b->src_tags_bitrate = 0;
  if (gst_tbqueue_buffering_on (tbq))
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

/* ---- the query ---- */

gboolean
gst_tbqueue_buffering_query (GstTbQueue * tbq, GstQuery * query)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  GstBufferingMode mode;
  GstFormat format;
  gint percent, avg_in, avg_out;
  gint64 left, start = -1, stop = -1, total = -1, duration = -1;
  gboolean buffering, known;
  guint64 in_bytes, out_bytes;

  if (!gst_tbqueue_buffering_on (tbq))
    return FALSE;
  g_mutex_lock (&b->lock);
  locked_rate_time (tbq, b);
  percent = to_percent (b, b->high > 0 ? locked_level (tbq, b)
      : GST_TBQUEUE_BUFFERING_MAX);
  buffering = b->is_buffering;
  locked_stats (tbq, b, percent, &mode, &avg_in, &avg_out, &left);
  g_mutex_unlock (&b->lock);
  gst_query_set_buffering_percent (query, buffering, percent);
  gst_query_set_buffering_stats (query, mode, avg_in, avg_out, left);

  /* What is held: in and out since the last flush. */
  in_bytes = TBQ_LOAD (tbq->in_bytes);
  out_bytes = MIN (TBQ_LOAD (tbq->out_bytes), in_bytes);
  known = gst_pad_peer_query_duration (tbq->sinkpad, GST_FORMAT_BYTES,
      &duration) && duration > 0;
  if (known && avg_in > 0 && (guint64) duration > in_bytes)
    total = (gint64) ((duration - in_bytes) * 1000 / (guint64) avg_in);
  gst_query_parse_buffering_range (query, &format, NULL, NULL, NULL);
  switch (format) {
    case GST_FORMAT_BYTES:
      start = (gint64) out_bytes;
      stop = (gint64) in_bytes;
      break;
    case GST_FORMAT_PERCENT:
      if (known) {
        start = gst_util_uint64_scale (GST_FORMAT_PERCENT_MAX, out_bytes,
            duration);
        stop = gst_util_uint64_scale (GST_FORMAT_PERCENT_MAX, in_bytes,
            duration);
      }
      break;
    case GST_FORMAT_TIME:{
      gint64 src = TBQ_LOAD (tbq->srctime), sink = TBQ_LOAD (tbq->sinktime);

      if (GST_CLOCK_STIME_IS_VALID (src) && GST_CLOCK_STIME_IS_VALID (sink)
          && src >= 0 && sink >= src) {
        start = src;
        stop = sink;
      }
      break;
    }
    default:
      break;
  }
  if (start >= 0 && stop > start)
    gst_query_add_buffering_range (query, start, stop);
  gst_query_set_buffering_range (query, format, start, stop, total);
  return TRUE;
}

/* ---- the properties ---- */

void
gst_tbqueue_buffering_set_use (GstTbQueue * tbq, gboolean use)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  g_mutex_lock (&b->lock);
  atomic_store_explicit (&b->on, use, memory_order_relaxed);
  if (use) {
    /* From the level as it is: 0 % on an empty queue (the sink layer is
     * sampled again with the next data). */
    b->is_buffering = TRUE;
    b->overrun = FALSE;
    b->sink_level = 0;
    locked_update (tbq, b);
  } else if (b->is_buffering) {
    /* Whoever waits for 100 % gets it. */
    b->is_buffering = FALSE;
    locked_set_percent (tbq, b, 100);
  }
  g_mutex_unlock (&b->lock);
  post (tbq);
}

gboolean
gst_tbqueue_buffering_get_use (GstTbQueue * tbq)
{
  return gst_tbqueue_buffering_on (tbq);
}

void
gst_tbqueue_buffering_set_watermark (GstTbQueue * tbq, gboolean high,
    gdouble value)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  gint v = (gint) (value * GST_TBQUEUE_BUFFERING_MAX + 0.5);

  g_mutex_lock (&b->lock);
  if (high)
    b->high = v;
  else
    b->low = v;
  if (gst_tbqueue_buffering_on (tbq))
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

gdouble
gst_tbqueue_buffering_get_watermark (GstTbQueue * tbq, gboolean high)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  gint v;

  g_mutex_lock (&b->lock);
  v = high ? b->high : b->low;
  g_mutex_unlock (&b->lock);
  return (gdouble) v / GST_TBQUEUE_BUFFERING_MAX;
}

/* The field a flag property lives in (lock held to use it). */
static gboolean *
flag_field (GstTbQueueBuffering * b, GstTbQueueBufferingFlag flag)
{
  switch (flag) {
    case GST_TBQUEUE_BUFFERING_RATE_ESTIMATE:
      return &b->use_rate_estimate;
    case GST_TBQUEUE_BUFFERING_TAGS_BITRATE:
      return &b->use_tags_bitrate;
    case GST_TBQUEUE_BUFFERING_BITRATE_QUERY:
    default:
      return &b->use_bitrate_query;
  }
}

void
gst_tbqueue_buffering_set_flag (GstTbQueue * tbq,
    GstTbQueueBufferingFlag flag, gboolean value)
{
  GstTbQueueBuffering *b = &tbq->buffering;

  g_mutex_lock (&b->lock);
  *flag_field (b, flag) = value;
  if (gst_tbqueue_buffering_on (tbq))
    locked_update (tbq, b);
  g_mutex_unlock (&b->lock);
  post (tbq);
}

gboolean
gst_tbqueue_buffering_get_flag (GstTbQueue * tbq,
    GstTbQueueBufferingFlag flag)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  gboolean v;

  g_mutex_lock (&b->lock);
  v = *flag_field (b, flag);
  g_mutex_unlock (&b->lock);
  return v;
}

gint64
gst_tbqueue_buffering_avg_in_rate (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  gint64 rate;

  g_mutex_lock (&b->lock);
  rate = (gint64) b->in_rate;
  g_mutex_unlock (&b->lock);
  return rate;
}

guint64
gst_tbqueue_buffering_bitrate (GstTbQueue * tbq)
{
  GstTbQueueBuffering *b = &tbq->buffering;
  guint64 bitrate;

  g_mutex_lock (&b->lock);
  bitrate = locked_bitrate (b);
  g_mutex_unlock (&b->lock);
  return bitrate;
}

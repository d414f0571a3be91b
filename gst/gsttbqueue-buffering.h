/* tbqueue buffering: queue2's use-buffering, its watermarks, BUFFERING
 * messages and the BUFFERING query.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With use-buffering the element posts a BUFFERING message (mode stream)
 * whenever the percentage changes while it is buffering: from when the
 * level falls below the low watermark until it reaches the high one,
 * which is 100 %.  The level is that of the limit that binds first: the
 * fullest max-size-* limit over the whole backlog (both layers and the
 * spill file), the level as a duration (a bitrate, or the input rate,
 * with use-rate-estimate), and the sink layer against sink-max-bytes (or
 * the spill file against spill-max-bytes); it is full at EOS, when
 * downstream is not linked, at an overrun (the element drops, leaks or
 * waits) until data goes out, and while the upstream thread waits (for
 * room, or for a serialized query's answer), since nothing more can come
 * in then.  Every function but the hooks' is called
 * with no lock of the element held, and returns at once when use-buffering
 * is off (one relaxed load).
 */
#ifndef __GST_TBQUEUE_BUFFERING_H__
#define __GST_TBQUEUE_BUFFERING_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* queue2's resolution of a level: 1,000,000 is full. */
#define GST_TBQUEUE_BUFFERING_MAX 1000000

void gst_tbqueue_buffering_init (GstTbQueue * tbq);
void gst_tbqueue_buffering_clear (GstTbQueue * tbq);

static inline gboolean
gst_tbqueue_buffering_on (GstTbQueue * tbq)
{
  return atomic_load_explicit (&tbq->buffering.on, memory_order_relaxed);
}

/* The upstream thread queued data of `bytes` (0: an event). */
void gst_tbqueue_buffering_in (GstTbQueue * tbq, guint64 bytes);
/* The src task took data of `bytes` out, and is about to push it. */
void gst_tbqueue_buffering_out (GstTbQueue * tbq, guint64 bytes);
/* EOS was queued (TRUE), or is forgotten (FALSE). */
void gst_tbqueue_buffering_set_eos (GstTbQueue * tbq, gboolean eos);
/* The upstream thread, with a serialized query: whether to refuse it
 * rather than queue it (as queue2 does): an ALLOCATION query while
 * buffering, behind data (buffers queued, or one inside the src task's
 * push).  An application that waits for 100 % keeps downstream from
 * taking that data; upstream allocates as before without an answer. */
gboolean gst_tbqueue_buffering_refuses_query (GstTbQueue * tbq,
    GstQuery * query);
/* The upstream thread starts (TRUE) or stops waiting. */
void gst_tbqueue_buffering_stall (GstTbQueue * tbq, gboolean stalled);
/* The upstream thread found the queue full (an overrun: it drops, leaks
 * or waits): full until data goes out. */
void gst_tbqueue_buffering_overrun (GstTbQueue * tbq);
/* A TAG event at the sink (`sink`) or the src. */
void gst_tbqueue_buffering_tags (GstTbQueue * tbq, GstEvent * event,
    gboolean sink);
/* Src task, before a push: ask downstream its bitrate when the pad was
 * reconfigured (use-bitrate-query). */
void gst_tbqueue_buffering_check_bitrate (GstTbQueue * tbq);
/* Look at the level again and post what changed (a limit changed, a
 * flush, the state). */
void gst_tbqueue_buffering_update (GstTbQueue * tbq);
/* READY to PAUSED and FLUSH_STOP: the rates start over, EOS is forgotten,
 * and buffering starts again from the level (posted). */
void gst_tbqueue_buffering_restart (GstTbQueue * tbq);
/* A BUFFERING query on the src pad: TRUE when answered (use-buffering);
 * FALSE: not the element's to answer. */
gboolean gst_tbqueue_buffering_query (GstTbQueue * tbq, GstQuery * query);

/* The properties' hooks (gsttbqueue-properties.c).  Each change is
 * evaluated at once and what changed is posted. */
void gst_tbqueue_buffering_set_use (GstTbQueue * tbq, gboolean use);
gboolean gst_tbqueue_buffering_get_use (GstTbQueue * tbq);
void gst_tbqueue_buffering_set_watermark (GstTbQueue * tbq, gboolean high,
    gdouble value);
gdouble gst_tbqueue_buffering_get_watermark (GstTbQueue * tbq, gboolean high);
typedef enum
{
  GST_TBQUEUE_BUFFERING_RATE_ESTIMATE,
  GST_TBQUEUE_BUFFERING_TAGS_BITRATE,
  GST_TBQUEUE_BUFFERING_BITRATE_QUERY
} GstTbQueueBufferingFlag;
void gst_tbqueue_buffering_set_flag (GstTbQueue * tbq,
    GstTbQueueBufferingFlag flag, gboolean value);
gboolean gst_tbqueue_buffering_get_flag (GstTbQueue * tbq,
    GstTbQueueBufferingFlag flag);
gint64 gst_tbqueue_buffering_avg_in_rate (GstTbQueue * tbq);
guint64 gst_tbqueue_buffering_bitrate (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_BUFFERING_H__ */

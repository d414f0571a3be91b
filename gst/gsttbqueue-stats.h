/* tbqueue stats: the `stats` structure and the "tbqueue-levels" element
 * message, both built from one table of fields (gsttbqueue-stats.c).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The table is the only list of the fields: docs/element.md's stats table
 * is generated from it and checked against a real tbqueue's `stats`
 * (tests/docs/check-stats-doc.py).  Threads and locks:
 * gsttbqueue-private.h.
 */
#ifndef __GST_TBQUEUE_STATS_H__
#define __GST_TBQUEUE_STATS_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* The name of the `stats` structure. */
#define GST_TBQUEUE_STATS_NAME "tbqueue-stats"
/* The name of the structure of the element message posted every
 * levels_interval (the same fields as `stats`). */
#define GST_TBQUEUE_LEVELS_MESSAGE_NAME "tbqueue-levels"
/* The shortest interval between two messages: a shorter non-zero one is
 * raised to it (a message costs a structure and a bus post). */
#define GST_TBQUEUE_LEVELS_MIN_INTERVAL (1 * GST_MSECOND)

/* The `stats` property's value: a new structure (GST_TBQUEUE_STATS_NAME)
 * with every field of the table.  Any thread; takes qlock briefly. */
GstStructure *gst_tbqueue_stats (GstTbQueue * tbq);

/* Post one "tbqueue-levels" element message now.  Any thread holding no
 * lock of the element. */
void gst_tbqueue_stats_post (GstTbQueue * tbq);

/* The property's hook: post the message every `interval` ns (0: never;
 * otherwise at least GST_TBQUEUE_LEVELS_MIN_INTERVAL, which the property
 * enforces).
 * Applies at once while the element runs (PAUSED and PLAYING), else from
 * the next READY to PAUSED.  Any thread. */
void gst_tbqueue_stats_set_post_interval (GstTbQueue * tbq, guint64 interval);
guint64 gst_tbqueue_stats_get_post_interval (GstTbQueue * tbq);

/* The state changes: posting runs from READY_TO_PAUSED to PAUSED_TO_READY,
 * on the system clock's thread (a periodic clock id: no thread of its own
 * and no polling).  Stop also from finalize. */
void gst_tbqueue_stats_start_posting (GstTbQueue * tbq);
void gst_tbqueue_stats_stop_posting (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_STATS_H__ */

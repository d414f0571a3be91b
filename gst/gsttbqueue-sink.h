/* tbqueue sink side: the chain functions (the libtbq writer), sink events
 * and queries, sink pad activation.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_SINK_H__
#define __GST_TBQUEUE_SINK_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

void gst_tbqueue_sink_set_functions (GstPad * pad);
/* The sink pad's query function (an element derived from the queue may
 * answer some queries itself and hand it the rest). */
gboolean gst_tbqueue_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query);

G_END_DECLS
#endif /* __GST_TBQUEUE_SINK_H__ */

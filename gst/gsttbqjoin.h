/* tbqjoin: the branches of a tbqsplit joined back in the split's order
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as the plugin sees it: its registration and the enum of its
 * order property.  Its type and insides: gsttbqjoin-private.h, which the
 * element's own files include.
 */
#ifndef __GST_TBQ_JOIN_H__
#define __GST_TBQ_JOIN_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstTbqJoinOrder:
 * @GST_TBQ_JOIN_ORDER_SEQUENCE: the split's order: each output goes out
 *   at the place of the input it was made of
 * @GST_TBQ_JOIN_ORDER_ARRIVAL: as outputs come, a funnel (each branch's
 *   own order is kept)
 *
 * In which order a tbqjoin sends what its sink pads receive
 * (#GstTbqJoin:order).
 *
 * Since: 0.5
 */
typedef enum
{
  GST_TBQ_JOIN_ORDER_SEQUENCE = 0,
  GST_TBQ_JOIN_ORDER_ARRIVAL = 1
} GstTbqJoinOrder;

#define GST_TYPE_TBQ_JOIN_ORDER (gst_tbq_join_order_get_type ())
GType gst_tbq_join_order_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (tbqjoin);

G_END_DECLS
#endif /* __GST_TBQ_JOIN_H__ */

/* tbqjoin: the branches of a tbqsplit joined back in the split's order
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as the plugin sees it: its registration.  Its type, its
 * order enum and its insides: gsttbqjoin-private.h, which the element's
 * own files include (and never this header: it is the element's face,
 * above them).
 */
#ifndef __GST_TBQ_JOIN_H__
#define __GST_TBQ_JOIN_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (tbqjoin);

G_END_DECLS
#endif /* __GST_TBQ_JOIN_H__ */

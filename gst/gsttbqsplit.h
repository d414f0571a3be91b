/* tbqsplit: a tbqueue whose items go to whichever of its branches is free.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as the plugin sees it: its registration.  Its insides are
 * gsttbqsplit.c's (over the queue of gsttbqueue-private.h).
 */
#ifndef __GST_TBQ_SPLIT_H__
#define __GST_TBQ_SPLIT_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (tbqsplit);
GType gst_tbq_split_get_type (void);

G_END_DECLS
#endif /* __GST_TBQ_SPLIT_H__ */

/* tbqparallel: a tbqsplit, copies of a worker, a tbqjoin, in one bin.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as the plugin sees it: its registration (gsttbqparallel.c).
 */
#ifndef __GST_TBQ_PARALLEL_H__
#define __GST_TBQ_PARALLEL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (tbqparallel);

G_END_DECLS
#endif /* __GST_TBQ_PARALLEL_H__ */

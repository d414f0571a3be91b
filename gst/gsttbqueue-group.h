/* tbqueue copy groups: the process's groups of tbqueues whose copy work
 * one GstTask does, over one libtbq copy group.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_GROUP_H__
#define __GST_TBQUEUE_GROUP_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* open(): the two-layer queue for `cfg`, made a member of the group the
 * element's copy-group names (made now if it has no member yet).  NULL,
 * with the reason in `msg` and the status in *st, when it cannot be made.
 * No lock held: posts messages. */
GstTbQueueGroup *gst_tbqueue_group_join (GstTbQueue * tbq, TbqConfig * cfg,
    TbqQueue ** q, TbqStatus * st, gchar * msg, gsize msg_size);
/* close(): free the queue (it leaves the group) and let go of the group;
 * its last member stops its task.  No lock held. */
void gst_tbqueue_group_leave (GstTbQueue * tbq, GstTbQueueGroup * group,
    TbqQueue * q);
/* A placement property of the copy task changed while the element is in
 * a group: warn if another member asks for a different one. */
void gst_tbqueue_group_check_placement (GstTbQueue * tbq);

G_END_DECLS
#endif /* __GST_TBQUEUE_GROUP_H__ */

/* libtbq internals: copy groups, queues whose copiers one set of copy
 * threads (or a host's steps) runs, over one share (share.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The member list is under a reader-writer lock: a round over the members
 * holds it for reading (several copy threads may run rounds at once; each
 * member's copier is owned by one of them at a time, by its `busy` flag),
 * a member joins and leaves holding it for writing.  So once
 * tbq_group_remove() returns, no copy thread touches the member again; and
 * no thread sleeps holding it: the wait's condition takes it on its own.
 */
#ifndef TBQ_GROUP_H
#define TBQ_GROUP_H

#include "copier.h"
#include "share.h"

/* Join: TBQ_NO_MEMORY when the member list cannot grow. */
TbqStatus tbq_group_add (TbqGroup * g, TbqCopier * c, TbqQueue * q,
    TbqGroupFunc fn, void *data);
/* Leave: after it, no copy thread serves `c`. */
void tbq_group_remove (TbqGroup * g, TbqCopier * c);
/* What a member's copier and sink pool point to. */
TbqShare *tbq_group_share (TbqGroup * g);
const _Atomic int *tbq_group_serving (TbqGroup * g);

#endif /* TBQ_GROUP_H */

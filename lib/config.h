/* libtbq internals: how a configuration is refused.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef TBQ_CONFIG_H
#define TBQ_CONFIG_H

#include "tbq.h"

/* TBQ_INVALID_CONFIG, with the reason (printf `fmt`) in `msg` when it is
 * not NULL.  For every validation: the queue's, the spill's, a group's. */
TbqStatus tbq_config_refuse (char *msg, size_t msg_size, const char *fmt,
    ...) __attribute__ ((format (printf, 3, 4)));

#endif /* TBQ_CONFIG_H */

/* tbqueue: a two-layer drop-in replacement for queue
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as the plugin sees it: its registration and the enums of
 * its properties.  Its type and insides: gsttbqueue-private.h, which the
 * element's own files include (and never this header: it is the element's
 * face, above them).
 */
#ifndef __GST_TBQUEUE_H__
#define __GST_TBQUEUE_H__

#include <gst/gst.h>

#include "gsttbqueue-enums.h"

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (tbqueue);
/* Before the registration: the element's Doc-uri names `path` (relative
 * to the current directory, or absolute) instead of the installed
 * docs/element.md. */
void gst_tbqueue_set_doc_file (const gchar * path);
/* The Doc-uri of the plugin's elements. */
const gchar *gst_tbqueue_doc_uri (void);

G_END_DECLS
#endif /* __GST_TBQUEUE_H__ */

/* tbqueue properties: the element's property table, and the GObject
 * functions it drives.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_TBQUEUE_PROPERTIES_H__
#define __GST_TBQUEUE_PROPERTIES_H__

#include "gsttbqueue-private.h"

G_BEGIN_DECLS

/* class_init: every property of the table. */
void gst_tbqueue_install_properties (GObjectClass * gobject_class);

/* instance_init: every field the table names holds its default. */
void gst_tbqueue_properties_init (GstTbQueue * tbq);

/* GObject's set_property and get_property (any application thread). */
void gst_tbqueue_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
void gst_tbqueue_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);

/* READY_TO_PAUSED: the refusals made while the element had no bus are
 * posted now, to the bus it has by now; finalize: forgotten. */
void gst_tbqueue_properties_start (GstTbQueue * tbq);
void gst_tbqueue_properties_clear (GstTbQueue * tbq);

/* From dispatch_properties_changed, once every property of a
 * g_object_set () call is stored: the commit hooks of the properties it
 * set, each once. */
void gst_tbqueue_properties_commit (GstTbQueue * tbq, guint n_pspecs,
    GParamSpec ** pspecs);

G_END_DECLS
#endif /* __GST_TBQUEUE_PROPERTIES_H__ */

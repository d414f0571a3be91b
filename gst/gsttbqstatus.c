/* The STREAM_STATUS message of a task an element runs (gsttbqstatus.h).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gsttbqstatus.h"

void
gst_tbq_post_stream_status (GstElement * element, GstObject * src,
    GstTask * task, GstStreamStatusType type)
{
  GstMessage *message;
  GValue value = G_VALUE_INIT;

  message = gst_message_new_stream_status (src, type, element);
  g_value_init (&value, GST_TYPE_TASK);
  g_value_set_object (&value, task);
  gst_message_set_stream_status_object (message, &value);
  g_value_unset (&value);
  gst_element_post_message (element, message);
}

/* tbqueue enums: their GTypes, with the names and nicks gst-inspect-1.0
 * shows and gst-launch-1.0 takes.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element marks them as plugin API in its class_init, so that the
 * documentation lists them with the element (gsttbqueue.c).
 */
#include "gsttbqueue-enums.h"

GType
gst_tbqueue_leaky_get_type (void)
{
  static gsize type = 0;
  /* queue's names and nicks: a launch line written for queue works. */
  static const GEnumValue values[] = {
    {GST_TBQUEUE_NO_LEAK, "Not Leaky", "no"},
    {GST_TBQUEUE_LEAK_UPSTREAM, "Leaky on upstream (new buffers)", "upstream"},
    {GST_TBQUEUE_LEAK_DOWNSTREAM, "Leaky on downstream (old buffers)",
        "downstream"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstTbQueueLeaky",
            values));
  return type;
}

GType
gst_tbqueue_transfer_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQUEUE_TRANSFER_AUTO,
          "Copy small buffers, and buffers of a buffer pool that would wait; "
          "reference the rest", "auto"},
    {GST_TBQUEUE_TRANSFER_COPY,
        "Copy every buffer that can be copied without loss", "copy"},
    {GST_TBQUEUE_TRANSFER_REFERENCE,
        "Queue the buffers themselves, as queue does", "reference"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstTbQueueTransfer",
            values));
  return type;
}

GType
gst_tbqueue_sched_policy_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQUEUE_SCHED_INHERIT,
        "Leave the thread's policy, priority and nice value as they are",
        "inherit"},
    {GST_TBQUEUE_SCHED_OTHER, "SCHED_OTHER (with the nice value)", "other"},
    {GST_TBQUEUE_SCHED_FIFO,
        "SCHED_FIFO (with the real-time priority, 1 to 99)", "fifo"},
    {GST_TBQUEUE_SCHED_RR, "SCHED_RR (with the real-time priority, 1 to 99)",
        "rr"},
    {GST_TBQUEUE_SCHED_BATCH, "SCHED_BATCH (with the nice value)", "batch"},
    {GST_TBQUEUE_SCHED_IDLE, "SCHED_IDLE", "idle"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstTbQueueSchedPolicy", values));
  return type;
}

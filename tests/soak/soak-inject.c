/* The soak harness: faults injected between the element and the verifier,
 * so that the self-tests can show each check fails when it should.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A probe on the element's src pad acts on the N-th buffer that passes
 * (--inject-at, counted from 1) or later:
 *   corrupt    one payload byte flipped           -> "corrupt"
 *   timestamp  its pts moved by 1 ns              -> "corrupt"
 *   drop       dropped                            -> "loss"
 *   reorder    delivered after the next buffer    -> "order"
 *   duplicate  delivered twice                    -> "order"
 *   discont    DISCONT set with nothing missing   -> "discont"
 *   nodiscont  DISCONT cleared on every buffer    -> "discont" (leaky runs)
 *   leak       one reference kept forever         -> "leak"
 *   hang       the src task blocked forever       -> "watchdog"
 *   event      the N-th serialized event dropped  -> "loss"
 * and, with --group-peers, on the first peer's src pad (soak-peers.c):
 *   peer-corrupt  one payload byte flipped        -> "peer"
 *   peer-drop     dropped                         -> "peer"
 * and in a parallel chapter's workers (soak-worker.c has them; with one
 * of these every chapter is parallel):
 *   worker-phantom   logged as dropped, passed on -> "worker"
 *   worker-reorder   sent after the next output   -> "loss"
 *   worker-miscount  dropped, logged as no input  -> "gaps"
 */
#include "soak.h"

static guint64 seen;
static GstBuffer *stash;
static GstBuffer *leaked;

/* A writable copy of the probe's buffer, put in its place. */
static GstBuffer *
replace_writable (GstPadProbeInfo * info)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstBuffer *copy = gst_buffer_copy_deep (buf);

  gst_buffer_unref (buf);
  GST_PAD_PROBE_INFO_DATA (info) = copy;
  return copy;
}

static gboolean
corrupt (GstPadProbeInfo * info)
{
  GstMapInfo map;
  GstBuffer *buf;

  if (gst_buffer_get_size (GST_PAD_PROBE_INFO_BUFFER (info)) < 16)
    return FALSE;
  buf = replace_writable (info);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  map.data[10] ^= 0x40;
  gst_buffer_unmap (buf, &map);
  return TRUE;
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  const gchar *f = soak.inject;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);

  if (++seen < soak.inject_at)
    return GST_PAD_PROBE_OK;
  if (g_str_equal (f, "nodiscont")) {
    if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT))
      GST_BUFFER_FLAG_UNSET (replace_writable (info), GST_BUFFER_FLAG_DISCONT);
    return GST_PAD_PROBE_OK;
  }
  if (soak.inject_at == 0)
    return GST_PAD_PROBE_OK;
  if (g_str_equal (f, "corrupt")) {
    if (corrupt (info))
      soak.inject_at = 0;
  } else if (g_str_equal (f, "timestamp")) {
    GST_BUFFER_PTS (replace_writable (info)) += 1;
    soak.inject_at = 0;
  } else if (g_str_equal (f, "drop")) {
    soak.inject_at = 0;
    return GST_PAD_PROBE_DROP;
  } else if (g_str_equal (f, "reorder") || g_str_equal (f, "duplicate")) {
    if (stash == NULL) {
      stash = gst_buffer_ref (buf);
      return g_str_equal (f, "reorder") ? GST_PAD_PROBE_DROP
          : GST_PAD_PROBE_OK;
    }
    if (g_str_equal (f, "reorder") && seen == soak.inject_at + 1)
      return GST_PAD_PROBE_OK;
    gst_buffer_unref (buf);
    GST_PAD_PROBE_INFO_DATA (info) = stash;
    stash = NULL;
    soak.inject_at = 0;
  } else if (g_str_equal (f, "discont")) {
    if (!GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT)) {
      GST_BUFFER_FLAG_SET (replace_writable (info), GST_BUFFER_FLAG_DISCONT);
      soak.inject_at = 0;
    }
  } else if (g_str_equal (f, "leak")) {
    leaked = gst_buffer_ref (buf);
    soak.inject_at = 0;
  } else if (g_str_equal (f, "hang")) {
    for (;;)
      g_usleep (G_USEC_PER_SEC);
  }
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_event (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);

  if (GST_EVENT_TYPE (event) != GST_EVENT_CUSTOM_DOWNSTREAM
      || ++seen != soak.inject_at)
    return GST_PAD_PROBE_OK;
  return GST_PAD_PROBE_DROP;
}

gboolean
soak_inject_setup (GError ** error)
{
  static const gchar *faults[] = { "corrupt", "timestamp", "drop", "reorder",
    "duplicate", "discont", "nodiscont", "leak", "hang", "event",
    "peer-corrupt", "peer-drop", "worker-phantom", "worker-reorder",
    "worker-miscount", NULL
  };

  if (soak.inject == NULL)
    return TRUE;
  if (!g_strv_contains (faults, soak.inject)) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "unknown fault '%s'", soak.inject);
    return FALSE;
  }
  if (g_str_has_prefix (soak.inject, "peer-"))
    return TRUE;                /* soak_peers_start() sets its probe */
  if (soak_inject_in_workers ())
    return TRUE;                /* the workers act themselves */
  if (g_str_equal (soak.inject, "event"))
    gst_pad_add_probe (soak.esrc, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
        on_event, NULL, NULL);
  else
    gst_pad_add_probe (soak.esrc, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, NULL,
        NULL);
  return TRUE;
}

/* The fault "leak" keeps its reference: that is the point. */
void
soak_inject_finish (void)
{
  g_clear_pointer (&stash, gst_buffer_unref);
}

gboolean
soak_inject_in_workers (void)
{
  return soak.inject != NULL && g_str_has_prefix (soak.inject, "worker-");
}

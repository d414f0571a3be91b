/* The soak harness: peer streams in the soaked element's copy group.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With --group-peers N (tbqueue only), N more tbqueues live in the process,
 * in the process's default copy group as the soaked element is: one copy
 * thread serves them all.  Each peer is our src pad ! tbqueue ! our sink
 * pad, fed by a thread of its own in bursts, with its own random limits and
 * transfer mode, leaky=no: it must deliver every buffer, in order, every
 * byte as pushed.  Its downstream stalls now and then (up to 20 ms), so the
 * group serves members whose sink is blocked; every few thousand buffers a
 * peer drains (EOS), leaves the group (READY) and joins it again
 * (PLAYING).  All this runs while the soaked element goes through its
 * chapters: flushes, state changes (it leaves and joins the group too),
 * geometry, stalls.  At the end each peer sends EOS, which must arrive
 * behind every buffer it pushed within a minute.  A wrong buffer or a
 * missing one fails the soak (check "peer").
 */
#include "soak.h"

#include <string.h>

#define PEER_EOS_TIMEOUT_US (60 * G_USEC_PER_SEC)
#define PEER_STALL_MAX_US 20000

typedef struct
{
  guint index;
  guint64 rng;                  /* pusher only */
  guint64 seed;                 /* the sizes come from it */
  GstElement *element;
  GstPad *src, *sink;           /* ours */
  GThread *thread;

  guint64 pushed;               /* pusher only */
  guint64 cycles;               /* pusher only: leave and join */

  /* sink side: lock */
  GMutex lock;
  GCond cond;
  guint64 expect;               /* next seq */
  guint64 stall_rng;
  gboolean eos;
  _Atomic guint64 delivered;
} Peer;

static Peer *peers;
static guint npeers;

/* Buffer seq's size: mostly small, now and then up to 256 KiB. */
static gsize
peer_size (const Peer * p, guint64 seq)
{
  guint64 x = p->seed ^ (seq * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
  guint64 r = soak_splitmix (&x);

  if (r % 97 == 0)
    return 65536 + (gsize) ((r >> 8) % (192 * 1024));
  return 1 + (gsize) ((r >> 8) % 4096);
}

/* The payload key of buffer seq: the soak's payload (soak-data.c), of a
 * seq of the peer's own, so that no two streams carry the same bytes. */
static guint64
peer_key (const Peer * p, guint64 seq)
{
  return ((guint64) (p->index + 1) << 48) | seq;
}

static GstBuffer *
peer_make_buffer (const Peer * p, guint64 seq)
{
  gsize size = peer_size (p, seq);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  soak_payload_fill (map.data, 0, size, peer_key (p, seq));
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_OFFSET (buf) = seq;
  return buf;
}

static GstFlowReturn
peer_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  Peer *p = gst_pad_get_element_private (pad);
  guint64 seq = GST_BUFFER_OFFSET (buf);
  gsize size = peer_size (p, p->expect);
  GstMapInfo map;
  gssize bad;
  gboolean stall;

  if (seq != p->expect)
    soak_fail ("peer", "peer %u: buffer %" G_GUINT64_FORMAT " came where %"
        G_GUINT64_FORMAT " was due", p->index, seq, p->expect);
  if (gst_buffer_get_size (buf) != size)
    soak_fail ("peer", "peer %u: buffer %" G_GUINT64_FORMAT " has %zu bytes, "
        "pushed with %zu", p->index, seq, gst_buffer_get_size (buf), size);
  gst_buffer_map (buf, &map, GST_MAP_READ);
  bad = soak_payload_compare (map.data, 0, size, peer_key (p, seq));
  gst_buffer_unmap (buf, &map);
  if (bad >= 0)
    soak_fail ("peer", "peer %u: buffer %" G_GUINT64_FORMAT " byte %"
        G_GSSIZE_FORMAT " differs", p->index, seq, bad);
  gst_buffer_unref (buf);
  g_mutex_lock (&p->lock);
  p->expect++;
  stall = soak_rand (&p->stall_rng, 500) == 0;
  atomic_fetch_add_explicit (&p->delivered, 1, memory_order_relaxed);
  g_mutex_unlock (&p->lock);
  /* Downstream busy for a while: the peer's queue fills up. */
  if (stall)
    g_usleep (soak_rand (&p->stall_rng, PEER_STALL_MAX_US));
  return GST_FLOW_OK;
}

static gboolean
peer_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  Peer *p = gst_pad_get_element_private (pad);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    g_mutex_lock (&p->lock);
    if (p->expect != p->pushed)
      soak_fail ("peer", "peer %u: EOS after %" G_GUINT64_FORMAT " of %"
          G_GUINT64_FORMAT " buffers", p->index, p->expect, p->pushed);
    p->eos = TRUE;
    g_cond_broadcast (&p->cond);
    g_mutex_unlock (&p->lock);
  }
  gst_event_unref (event);
  return TRUE;
}

static void
peer_start_stream (Peer * p)
{
  GstSegment seg;
  gchar *id = g_strdup_printf ("soak-peer-%u-%" G_GUINT64_FORMAT, p->index,
      p->cycles);

  gst_pad_push_event (p->src, gst_event_new_stream_start (id));
  gst_pad_push_event (p->src, gst_event_new_caps (soak.meta_caps));
  gst_segment_init (&seg, GST_FORMAT_BYTES);
  gst_pad_push_event (p->src, gst_event_new_segment (&seg));
  g_free (id);
}

/* EOS, and wait until it came out behind every buffer. */
static void
peer_drain (Peer * p)
{
  gint64 until = g_get_monotonic_time () + PEER_EOS_TIMEOUT_US;

  g_mutex_lock (&p->lock);
  p->eos = FALSE;
  g_mutex_unlock (&p->lock);
  if (!gst_pad_push_event (p->src, gst_event_new_eos ()))
    soak_fail ("peer", "peer %u: EOS refused", p->index);
  g_mutex_lock (&p->lock);
  while (!p->eos)
    if (!g_cond_wait_until (&p->cond, &p->lock, until))
      soak_fail ("peer", "peer %u: no EOS downstream within %d s; %"
          G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " buffers delivered",
          p->index, (gint) (PEER_EOS_TIMEOUT_US / G_USEC_PER_SEC), p->expect,
          p->pushed);
  g_mutex_unlock (&p->lock);
}

static gpointer
peer_main (gpointer data)
{
  Peer *p = data;

  peer_start_stream (p);
  while (!atomic_load_explicit (&soak.stop, memory_order_relaxed)) {
    guint64 burst = soak_range (&p->rng, 1, 64), i;

    for (i = 0; i < burst; i++) {
      GstFlowReturn ret = gst_pad_push (p->src, peer_make_buffer (p,
              p->pushed));

      if (ret != GST_FLOW_OK)
        soak_fail ("peer", "peer %u: push %" G_GUINT64_FORMAT " returned %s",
            p->index, p->pushed, gst_flow_get_name (ret));
      p->pushed++;
    }
    g_usleep (soak_range (&p->rng, 100, 2000));
    /* Now and then: drain, leave the group and join it again. */
    if (soak_rand (&p->rng, 100) == 0) {
      peer_drain (p);
      if (gst_element_set_state (p->element, GST_STATE_READY)
          == GST_STATE_CHANGE_FAILURE
          || gst_element_set_state (p->element, GST_STATE_PLAYING)
          == GST_STATE_CHANGE_FAILURE)
        soak_fail ("peer", "peer %u: READY and back to PLAYING failed",
            p->index);
      p->cycles++;
      peer_start_stream (p);
    }
  }
  peer_drain (p);
  return NULL;
}

/* --inject peer-corrupt / peer-drop: on the first peer's inject_at-th
 * buffer (the self-tests: the checks above must catch it). */
static GstPadProbeReturn
peer_inject (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  static guint64 seen;
  GstBuffer *buf;
  GstMapInfo map;

  if (++seen != soak.inject_at)
    return GST_PAD_PROBE_OK;
  if (g_str_equal (soak.inject, "peer-drop"))
    return GST_PAD_PROBE_DROP;
  buf = gst_buffer_copy_deep (GST_PAD_PROBE_INFO_BUFFER (info));
  gst_buffer_unref (GST_PAD_PROBE_INFO_BUFFER (info));
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  map.data[map.size / 2] ^= 0x10;
  gst_buffer_unmap (buf, &map);
  return GST_PAD_PROBE_OK;
}

void
soak_peers_start (guint n)
{
  static const gchar *transfers[] = { "auto", "copy", "reference" };
  guint i;

  npeers = n;
  peers = g_new0 (Peer, n);
  for (i = 0; i < n; i++) {
    Peer *p = &peers[i];
    gchar *name = g_strdup_printf ("peer%u", i);

    p->index = i;
    p->rng = soak.seed ^ (G_GUINT64_CONSTANT (0x9EE2) + i);
    p->seed = soak_splitmix (&p->rng);
    p->stall_rng = soak_splitmix (&p->rng);
    g_mutex_init (&p->lock);
    g_cond_init (&p->cond);
    /* copy-group left "": the default group, as the soaked element's. */
    p->element = gst_element_factory_make ("tbqueue", name);
    g_free (name);
    if (p->element == NULL)
      soak_fail ("peer", "no tbqueue for peer %u", i);
    g_object_set (p->element, "max-size-buffers",
        (guint) soak_range (&p->rng, 4, 400), "max-size-bytes",
        (guint) soak_range (&p->rng, 64 * 1024, 4 * 1024 * 1024),
        "max-size-time", (guint64) 0, NULL);
    gst_util_set_object_arg (G_OBJECT (p->element), "transfer",
        transfers[soak_rand (&p->rng, 3)]);
    p->src = gst_pad_new ("peer-src", GST_PAD_SRC);
    p->sink = gst_pad_new ("peer-sink", GST_PAD_SINK);
    gst_pad_set_element_private (p->sink, p);
    gst_pad_set_chain_function (p->sink, peer_chain);
    gst_pad_set_event_function (p->sink, peer_event);
    {
      GstPad *esink = gst_element_get_static_pad (p->element, "sink");
      GstPad *esrc = gst_element_get_static_pad (p->element, "src");

      if (gst_pad_link (p->src, esink) != GST_PAD_LINK_OK
          || gst_pad_link (esrc, p->sink) != GST_PAD_LINK_OK)
        soak_fail ("peer", "cannot link peer %u", i);
      gst_object_unref (esink);
      gst_object_unref (esrc);
    }
    gst_pad_set_active (p->src, TRUE);
    gst_pad_set_active (p->sink, TRUE);
    gst_element_set_bus (p->element, soak.bus);
    if (i == 0 && soak.inject && g_str_has_prefix (soak.inject, "peer-")) {
      GstPad *esrc = gst_element_get_static_pad (p->element, "src");

      gst_pad_add_probe (esrc, GST_PAD_PROBE_TYPE_BUFFER, peer_inject, NULL,
          NULL);
      gst_object_unref (esrc);
    }
    if (gst_element_set_state (p->element, GST_STATE_PLAYING)
        == GST_STATE_CHANGE_FAILURE)
      soak_fail ("peer", "peer %u refused PLAYING", i);
  }
  for (i = 0; i < n; i++)
    peers[i].thread = g_thread_new ("soak-peer", peer_main, &peers[i]);
}

/* After soak.stop: every peer drained and taken down. */
void
soak_peers_finish (guint64 * buffers, guint64 * cycles)
{
  guint i;

  *buffers = *cycles = 0;
  for (i = 0; i < npeers; i++) {
    Peer *p = &peers[i];
    GstPad *esink = gst_element_get_static_pad (p->element, "sink");
    GstPad *esrc = gst_element_get_static_pad (p->element, "src");

    g_thread_join (p->thread);
    *buffers += atomic_load (&p->delivered);
    *cycles += p->cycles;
    gst_element_set_state (p->element, GST_STATE_NULL);
    gst_pad_set_active (p->src, FALSE);
    gst_pad_set_active (p->sink, FALSE);
    gst_pad_unlink (p->src, esink);
    gst_pad_unlink (esrc, p->sink);
    gst_object_unref (esink);
    gst_object_unref (esrc);
    gst_element_set_bus (p->element, NULL);
    gst_object_unref (p->element);
    gst_object_unref (p->src);
    gst_object_unref (p->sink);
    g_mutex_clear (&p->lock);
    g_cond_clear (&p->cond);
  }
  g_free (peers);
  peers = NULL;
  npeers = 0;
}

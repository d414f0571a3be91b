/* gst-bench parallel: tbqsplit, tbqjoin and tbqparallel against the
 * pipelines they replace.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Four cases (--cases), each with files of its own: NAME-CASE-runs.csv and
 * NAME-CASE-meta.json (NAME is --name, "parallel" by default).  Nothing is
 * pinned: every thread may run on any CPU (the meta file says how many
 * there were).
 *
 * jpegenc  1920x1080 I420 frames of `videotestsrc pattern=snow`, rendered
 *   once into `--frame-set` (8) buffers before anything is timed, pushed in
 *   turn (a new GstBuffer sharing the frame's memory, PTS and offset its
 *   number) from the main thread through our own src pad into
 *     queue        queue ! jpegenc: one encoder, the single-branch pipeline
 *     split-join   tbqsplit, `--workers` (2) x jpegenc, tbqjoin
 *     tbqparallel  tbqparallel workers=2 worker=jpegenc
 *     roundrobin-funnel  roundrobin, 2 x (queue ! jpegenc), funnel (in
 *                  arrival order: it does not keep the order; skipped with
 *                  a message where gst-plugins-bad's rist plugin is missing)
 *   and out to our sink pad, which hashes every JPEG (a 64-bit hash of
 *   every byte) and finds its input by its PTS.  Before the runs the
 *   single-branch pipeline encodes the frame set once: the reference.
 *   Frames per second = frames / (the last frame at our sink - the first
 *   push); CPU per frame = process CPU time (getrusage, every thread) over
 *   the same span / frames.  Every output is compared with the reference
 *   JPEG of its input: `mismatched` counts those whose bytes differ,
 *   `out_of_place` those not at their input's place.  Both must be 0
 *   (roundrobin-funnel: mismatched 0, every frame once; out_of_place is
 *   reported).  Threads: the pushing thread (a buffer copy per frame, next
 *   to nothing), one encoder thread per branch, and for split-join and
 *   tbqparallel the split's copy thread and the join's copy and src tasks
 *   (the src task runs the hash).
 *
 * identity  our src pad ! X ! our sink pad (gb_link: every byte of every
 *   buffer verified, in order), the main thread pushing `--buffers` fresh
 *   buffers of 32 B and 1 MiB as fast as it can, X one of
 *     bare         nothing: the consumer runs inside the push (the floor)
 *     tbqueue      one tbqueue (its defaults)
 *     split-join-N tbqsplit, N x identity, tbqjoin (defaults), N in
 *                  `--branches` (1,2,4,8,16)
 *   CPU per buffer = process CPU from the first push to the last buffer
 *   verified / buffers; `added` is that less bare's in the same run (what
 *   the elements add); `join` is the CPU time of tbqjoin's threads (its
 *   src task, which reorders and runs the check downstream, and its copy
 *   task) per buffer: the reorder cost, read from each thread's CPU-time
 *   clock.
 *
 * arrival  `--producers` (8) threads, each with its own src pad linked to
 *   a request sink pad of X, each pushing `--arrival-buffers` fresh 32-byte
 *   buffers as fast as it can (every push timed with the TSC), X one of
 *     funnel-queue     funnel ! queue
 *     tbqjoin-arrival  tbqjoin order=arrival
 *   (defaults: 200 buffers, 10 MB, 1 s), our sink pad checking every byte
 *   and every producer's order.  The producers push the same stream-start,
 *   caps and segment events (one stream split in 8), so neither sends
 *   sticky events again when the producer changes.  CPU per buffer =
 *   process CPU from the start to the last buffer / buffers (`others`: less
 *   the producers' own CPU time); push p50/p99/p99.9 over every push of
 *   every producer.
 *
 * stall  each run and contender in a process of its own: tbqsplit
 *   max-in-flight=W, 2 x identity, tbqjoin; 1 MiB fresh buffers pushed by
 *   a thread as fast as it can; after `warm-up` buffers (verified, RSS
 *   taken) the worker that gets buffer warm-up + 8 blocks in a pad probe
 *   for `--stall-ms` (2000), RSS and the split's current-in-flight sampled
 *   every 10 ms; then the worker goes on and every buffer is verified.
 *   Growth = the most RSS seen during the stall - RSS before; `flat` = RSS
 *   at the end of the stall - RSS at its middle; the bound = W buffers (the
 *   window) + the split's max-size-bytes + 2 buffers (one admitted past
 *   the limit, one in the pushing thread's hands) + the pools (the split's
 *   source pool and the peak of its sink pool, from its stats; the join's
 *   source pools, 16 KiB per pad, and one 64 KiB sink block).
 *     split-join      max-in-flight=0 (twice the branches: 4)
 *     split-join-w16  max-in-flight=16
 *
 * OPTIONS  --cases jpegenc,identity,arrival,stall  --workers 2
 *          --frames 300  --frame-set 8  --sizes 32,1048576
 *          --branches 1,2,4,8,16  --buffers N (identity, all sizes)
 *          --split-props "max-in-flight=64" (identity: more properties of
 *          every tbqsplit, for experiments)
 *          --producers 8  --arrival-buffers 50000  --arrival-size 32
 *          --arrival-limits "max-size-buffers=0 ..." (both contenders'
 *          limits, for experiments)
 *          --stall-ms 2000  --stall-size 1048576
 */
#include "gst-bench.h"

#include <stdlib.h>
#include <string.h>

#define DRAIN_TIMEOUT_NS (300 * GST_SECOND)
#define FRAME_DURATION (GST_SECOND / 30)

static GbContender *
contender_new (const gchar * name, gchar * desc, gchar * what)
{
  GbContender *c = g_new0 (GbContender, 1);

  /* Kept for the life of the process, like the static table. */
  c->name = g_strdup (name);
  c->props = desc;
  c->what = what;
  return c;
}

/* The contenders of the case being set up, for gb_contenders_select_with. */
static GPtrArray *case_contenders;

static const GbContender *
find_case_contender (const gchar * name)
{
  guint i;

  for (i = 0; i < case_contenders->len; i++) {
    const GbContender *c = g_ptr_array_index (case_contenders, i);

    if (strcmp (c->name, name) == 0)
      return c;
  }
  return gb_contender_find (name);
}

/* "tbqsplit name=s EXTRA tbqjoin name=j s.src_0 ! WORKER ! j.sink_0 ...",
 * with `named` each worker named w0, w1, ... */
static gchar *
split_join_desc (guint branches, const gchar * split_props,
    const gchar * worker, gboolean named)
{
  GString *s = g_string_new ("");
  guint i;

  g_string_append_printf (s, "tbqsplit name=s %s tbqjoin name=j",
      split_props);
  for (i = 0; i < branches; i++) {
    g_string_append_printf (s, " s.src_%u ! %s", i, worker);
    if (named)
      g_string_append_printf (s, " name=w%u", i);
    g_string_append_printf (s, " ! j.sink_%u", i);
  }
  return g_string_free (s, FALSE);
}

/* The case's own GbCommon: files NAME-CASE-*. */
static GbCommon
case_common (const GbCommon * c, const gchar * which)
{
  GbCommon cc = *c;

  /* Kept for the life of the process. */
  cc.name = g_strdup_printf ("%s-%s", c->name, which);
  return cc;
}

static void
meta_write (const GbCommon * cc, const gchar * params,
    const GbContender ** cont, gint n)
{
  FILE *f = gb_out_open (cc, "meta.json");

  gb_meta_begin (f, cc);
  fprintf (f, ",\n  \"params\": {%s},\n", params);
  gb_meta_end (f, cont, n);
}

/* A TAP line per contender: ok when it ran and every row of it was ok.
 * `rows` is an array of `nrows` row structures of `stride` bytes, each
 * with a `const GbContender *` at `cont_off` and a gboolean at `ok_off`
 * (TAP_ROWS gives them). */
static void
tap_rows (const GbCommon * c, const gchar * what, const GbContender ** cont,
    gint ncont, gconstpointer rows, gsize stride, gsize cont_off,
    gsize ok_off, gint nrows, const gchar * claim)
{
  gint k, i;

  for (k = 0; k < ncont; k++) {
    gboolean ok = TRUE, seen = FALSE;

    for (i = 0; i < nrows; i++) {
      const guint8 *row = (const guint8 *) rows + i * stride;

      if (*(const GbContender * const *) (row + cont_off) == cont[k]) {
        seen = TRUE;
        ok = ok && *(const gboolean *) (row + ok_off);
      }
    }
    gb_tap (c, ok && seen, "parallel %s %s: %s", what, cont[k]->name, claim);
  }
}

#define TAP_ROWS(c, what, cont, ncont, rows, nrows, claim) \
  tap_rows ((c), (what), (cont), (ncont), (rows), sizeof *(rows), \
      G_STRUCT_OFFSET (__typeof__ (*(rows)), contender), \
      G_STRUCT_OFFSET (__typeof__ (*(rows)), ok), (nrows), (claim))

/* ---- our own src and sink pads around a contender ---- */

typedef struct
{
  GstElement *elem;
  GbThreads *threads;
  GstPad *src, *sink;
} Rig;

static void
rig_start (Rig * r, GstElement * elem, GstPadChainFunction chain,
    gpointer chain_data, GstCaps * caps, const gchar * name)
{
  GstPad *esink, *esrc;

  r->elem = elem;
  r->threads = gb_threads_watch (elem);
  r->src = gst_pad_new ("src", GST_PAD_SRC);
  r->sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_chain_function (r->sink, chain);
  gst_pad_set_element_private (r->sink, chain_data);
  esink = gst_element_get_static_pad (elem, "sink");
  esrc = gst_element_get_static_pad (elem, "src");
  if (esink == NULL || esrc == NULL || gst_pad_link (r->src, esink)
      != GST_PAD_LINK_OK || gst_pad_link (esrc, r->sink) != GST_PAD_LINK_OK)
    gb_die ("%s: cannot link", name);
  gst_object_unref (esink);
  gst_object_unref (esrc);
  gst_pad_set_active (r->sink, TRUE);
  if (gst_element_set_state (elem, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE)
    gb_die ("%s: cannot go to PLAYING", name);
  gst_pad_set_active (r->src, TRUE);
  if (!gb_pad_start_stream (r->src, "gst-bench-parallel", caps))
    gb_die ("%s: stream-start, caps or segment refused", name);
}

static void
rig_stop (Rig * r)
{
  gst_element_set_state (r->elem, GST_STATE_NULL);
  gst_pad_set_active (r->src, FALSE);
  gst_pad_set_active (r->sink, FALSE);
  gb_threads_free (r->threads, r->elem);
  gst_object_unref (r->src);
  gst_object_unref (r->sink);
  gst_object_unref (r->elem);
}

/* The end of a span: when the last buffer arrived downstream, the
 * process's CPU time and context switches then; a wait for it. */
typedef struct
{
  guint64 t_ns, switches;
  double cpu_s;
  GMutex lock;
  GCond cond;
  gboolean done;
} Finish;

static void
finish_init (Finish * f)
{
  memset (f, 0, sizeof *f);
  g_mutex_init (&f->lock);
  g_cond_init (&f->cond);
}

static void
finish_clear (Finish * f)
{
  g_mutex_clear (&f->lock);
  g_cond_clear (&f->cond);
}

/* Downstream's thread: the last buffer is here. */
static void
finish_mark (Finish * f)
{
  f->t_ns = gb_now_ns ();
  f->cpu_s = gb_cpu_seconds ();
  f->switches = gb_process_switches ();
  g_mutex_lock (&f->lock);
  f->done = TRUE;
  g_cond_signal (&f->cond);
  g_mutex_unlock (&f->lock);
}

/* FALSE when the last buffer did not come within timeout_ns. */
static gboolean
finish_wait (Finish * f, gint64 timeout_ns)
{
  gint64 end = g_get_monotonic_time () + timeout_ns / 1000;
  gboolean done;

  g_mutex_lock (&f->lock);
  while (!f->done && g_cond_wait_until (&f->cond, &f->lock, end));
  done = f->done;
  g_mutex_unlock (&f->lock);
  return done;
}

/* ==== jpegenc ==== */

/* A 64-bit hash of every byte (four independent lanes). */
static guint64
hash_bytes (const guint8 * p, gsize n)
{
  const guint64 k = G_GUINT64_CONSTANT (0x9FB21C651E98DF25);
  guint64 h[4] = { n ^ GB_MIX, GB_STEP, ~(guint64) n, GB_MIX ^ GB_STEP };
  gsize i = 0, j;

  for (; i + 32 <= n; i += 32)
    for (j = 0; j < 4; j++) {
      guint64 w;

      memcpy (&w, p + i + 8 * j, 8);
      h[j] = ((h[j] ^ w) * k) ^ (h[j] >> 29);
    }
  for (; i < n; i++)
    h[0] = (h[0] ^ p[i]) * k;
  for (j = 1; j < 4; j++)
    h[0] = ((h[0] ^ h[j]) * k) ^ (h[0] >> 31);
  return h[0];
}

typedef struct
{
  GstBuffer **frames;
  guint k;
  GstCaps *caps;
  guint64 *ref;                 /* the reference JPEG's hash per frame */
  gchar *video;                 /* "1920x1080 I420" */
} Frames;

static GstPadProbeReturn
collect_frame (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Frames *fr = user_data;

  if (fr->caps == NULL)
    fr->caps = gst_pad_get_current_caps (pad);
  if (fr->k < 1024)
    fr->frames[fr->k++] = gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (info));
  return GST_PAD_PROBE_OK;
}

static void
frames_render (Frames * fr, guint k, guint width, guint height)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=snow num-buffers=%u "
      "! video/x-raw,format=I420,width=%u,height=%u,framerate=30/1 "
      "! fakesink name=out sync=false", k, width, height);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err), *out;
  GstBus *bus;
  GstMessage *msg;
  GstPad *pad;

  if (p == NULL)
    gb_die ("parallel: cannot make '%s': %s", desc, err ? err->message : "?");
  fr->frames = g_new0 (GstBuffer *, MIN (k, 1024));
  out = gst_bin_get_by_name (GST_BIN (p), "out");
  pad = gst_element_get_static_pad (out, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, collect_frame, fr, NULL);
  gst_object_unref (pad);
  gst_object_unref (out);
  bus = gst_element_get_bus (p);
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (msg == NULL || GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS
      || fr->k != k || fr->caps == NULL)
    gb_die ("parallel: rendering %u snow frames failed", k);
  gst_message_unref (msg);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  fr->ref = g_new0 (guint64, k);
  fr->video = g_strdup_printf ("%ux%u I420", width, height);
  g_free (desc);
}

typedef struct
{
  const Frames *fr;
  guint64 n;
  gboolean reference;           /* record the hashes instead */
  guint64 *ref_out;
  /* the sink's thread */
  guint64 seen, mismatched, out_of_place, bytes;
  guint8 *got;
  gchar failure[256];
  gboolean failed;
  Finish fin;
} JpegSink;

static void
jpeg_fail (JpegSink * s, const gchar * why)
{
  if (!s->failed)
    g_strlcpy (s->failure, why, sizeof s->failure);
  s->failed = TRUE;
}

static GstFlowReturn
jpeg_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  JpegSink *s = gst_pad_get_element_private (pad);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  guint64 idx = GST_CLOCK_TIME_IS_VALID (pts)
      ? gst_util_uint64_scale_round (pts, 1, FRAME_DURATION) : G_MAXUINT64;
  GstMapInfo map;

  if (idx >= s->n || s->got[idx]) {
    jpeg_fail (s, "an output with no input of its own (PTS wrong, or twice)");
  } else if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    jpeg_fail (s, "an output that cannot be mapped");
  } else {
    guint64 h = hash_bytes (map.data, map.size);

    s->got[idx] = 1;
    s->bytes += map.size;
    if (s->reference)
      s->ref_out[idx] = h;
    else if (h != s->fr->ref[idx % s->fr->k])
      s->mismatched++;
    if (idx != s->seen)
      s->out_of_place++;
    gst_buffer_unmap (buf, &map);
  }
  gst_buffer_unref (buf);
  if (++s->seen == s->n)
    finish_mark (&s->fin);
  return GST_FLOW_OK;
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  guint64 frames, mismatched, out_of_place;
  double seconds, fps, cpu_ms_per_frame, mean_kib, load1;
  gint threads;
  gboolean ok;
  gchar failure[256];
} JpegRow;

/* One contender, `n` frames; with ref_out the reference pass. */
static void
jpeg_run (JpegRow * row, const Frames * fr, guint64 n, guint64 * ref_out,
    gboolean ordered)
{
  JpegSink s = { 0 };
  Rig r;
  guint64 i, t0;
  double cpu0;
  gint threads;

  s.fr = fr;
  s.n = n;
  s.reference = ref_out != NULL;
  s.ref_out = ref_out;
  s.got = g_new0 (guint8, n);
  finish_init (&s.fin);
  rig_start (&r, gb_contender_make (row->contender, ""), jpeg_chain, &s,
      fr->caps, row->contender->name);
  row->load1 = gb_load_average ();
  t0 = gb_now_ns ();
  cpu0 = gb_cpu_seconds ();
  for (i = 0; i < n; i++) {
    /* A new buffer sharing the frame's memory. */
    GstBuffer *b = gst_buffer_copy (fr->frames[i % fr->k]);
    GstFlowReturn ret;

    GST_BUFFER_PTS (b) = i * FRAME_DURATION;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = FRAME_DURATION;
    GST_BUFFER_OFFSET (b) = i;
    ret = gst_pad_push (r.src, b);
    if (ret != GST_FLOW_OK) {
      g_snprintf (s.failure, sizeof s.failure, "push returned %s",
          gst_flow_get_name (ret));
      s.failed = TRUE;
      break;
    }
  }
  row->ok = !s.failed && finish_wait (&s.fin, DRAIN_TIMEOUT_NS);
  threads = gb_threads_count (r.threads, NULL);
  rig_stop (&r);
  row->frames = n;
  row->threads = threads;
  row->mismatched = s.mismatched;
  row->out_of_place = s.out_of_place;
  if (!row->ok && !s.failed)
    g_snprintf (s.failure, sizeof s.failure, "%" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " frames arrived", s.seen, n);
  else if (row->ok && s.failed)
    row->ok = FALSE;
  if (row->ok && s.mismatched)
    g_snprintf (s.failure, sizeof s.failure, "%" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " JPEGs differ from the single-branch pipeline's",
        s.mismatched, n);
  else if (row->ok && ordered && s.out_of_place)
    g_snprintf (s.failure, sizeof s.failure, "%" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " JPEGs out of their input's place",
        s.out_of_place, n);
  if (row->ok && (s.mismatched || (ordered && s.out_of_place)))
    row->ok = FALSE;
  g_strlcpy (row->failure, s.failure, sizeof row->failure);
  if (row->ok) {
    row->seconds = (s.fin.t_ns - t0) / 1e9;
    row->fps = n / row->seconds;
    row->cpu_ms_per_frame = (s.fin.cpu_s - cpu0) / n * 1e3;
    row->mean_kib = s.bytes / 1024.0 / n;
  }
  g_free (s.got);
  finish_clear (&s.fin);
}

static int
jpegenc_case (const GbCommon * c, guint workers, guint64 frames,
    guint frame_set)
{
  GbCommon cc = case_common (c, "jpegenc");
  const GbContender *cont[8], *single;
  gboolean have_rr = TRUE;
  GstElementFactory *rr = gst_element_factory_find ("roundrobin");
  GString *rrdesc = g_string_new ("roundrobin name=r funnel name=f");
  JpegRow *rows, refrow = { 0 };
  Frames fr = { 0 };
  gint ncont, run, k, i, nrows = 0, failures = 0;
  guint w;
  gchar *params;
  FILE *f;

  if (rr)
    gst_object_unref (rr);
  else
    have_rr = FALSE;
  for (w = 0; w < workers; w++)
    g_string_append_printf (rrdesc, " r.src_%u ! queue ! jpegenc ! f.sink_%u",
        w, w);
  case_contenders = g_ptr_array_new ();
  single = contender_new ("queue", g_strdup ("queue ! jpegenc"),
      g_strdup ("queue ! jpegenc: one encoder (the single-branch pipeline)"));
  g_ptr_array_add (case_contenders, (gpointer) single);
  g_ptr_array_add (case_contenders, contender_new ("split-join",
          split_join_desc (workers, "", "jpegenc", FALSE),
          g_strdup_printf ("tbqsplit, %u x jpegenc, tbqjoin (defaults)",
              workers)));
  g_ptr_array_add (case_contenders, contender_new ("tbqparallel",
          g_strdup_printf ("tbqparallel workers=%u worker=jpegenc", workers),
          g_strdup_printf ("tbqparallel workers=%u worker=jpegenc", workers)));
  g_ptr_array_add (case_contenders, contender_new ("roundrobin-funnel",
          g_string_free (rrdesc, FALSE),
          g_strdup_printf ("roundrobin, %u x (queue ! jpegenc), funnel: "
              "outputs in arrival order", workers)));
  ncont = gb_contenders_select_with (c, "queue,split-join,tbqparallel,"
      "roundrobin-funnel", find_case_contender, cont, G_N_ELEMENTS (cont));
  if (!have_rr) {
    for (k = 0; k < ncont; k++)
      if (strcmp (cont[k]->name, "roundrobin-funnel") == 0) {
        printf ("# roundrobin-funnel skipped: no roundrobin element "
            "(gst-plugins-bad's rist plugin: Debian's "
            "gstreamer1.0-plugins-bad)\n");
        gb_tap (c, TRUE, "parallel jpegenc roundrobin-funnel # SKIP no "
            "roundrobin element (gstreamer1.0-plugins-bad)");
        memmove (&cont[k], &cont[k + 1], (ncont - k - 1) * sizeof cont[0]);
        ncont--;
        break;
      }
  }
  if (ncont == 0)
    return 0;

  printf ("# parallel jpegenc: rendering %u snow frames\n", frame_set);
  frames_render (&fr, frame_set, 1920, 1080);
  /* The reference: the single-branch pipeline, once over the frame set. */
  refrow.contender = single;
  jpeg_run (&refrow, &fr, frame_set, fr.ref, TRUE);
  if (!refrow.ok)
    gb_fail (c, "parallel jpegenc: the reference pass failed: %s",
        refrow.failure);

  params = g_strdup_printf ("\"runs\": %d, \"video\": \"%s\", \"source\": "
      "\"videotestsrc pattern=snow, %u frames rendered once, pushed in turn "
      "from the main thread\", \"frames\": %" G_GUINT64_FORMAT ", "
      "\"workers\": %u, \"limits\": \"element defaults\", \"sink\": "
      "\"our sink pad: a 64-bit hash of every byte, compared with the "
      "single-branch pipeline's JPEG of the same frame\"", c->runs,
      fr.video, frame_set, frames, workers);
  meta_write (&cc, params, cont, ncont);
  g_free (params);

  rows = g_new0 (JpegRow, c->runs * ncont);
  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      JpegRow *row = &rows[nrows++];

      row->run = run;
      row->order = k;
      row->contender = cont[(k + run) % ncont];
      jpeg_run (row, &fr, frames, NULL,
          strcmp (row->contender->name, "roundrobin-funnel") != 0);
      if (!row->ok) {
        failures++;
        fprintf (stderr, "parallel jpegenc %s: %s\n", row->contender->name,
            row->failure);
      }
      printf ("# run %d %-18s %7.1f frames/s %7.2f ms CPU/frame, %"
          G_GUINT64_FORMAT " out of place, %" G_GUINT64_FORMAT
          " differ, %d threads%s\n", run, row->contender->name, row->fps,
          row->cpu_ms_per_frame, row->out_of_place, row->mismatched,
          row->threads, row->ok ? "" : "  FAILED");
    }

  f = gb_out_open (&cc, "runs.csv");
  fprintf (f, "run,video,contender,order,frames,seconds,frames_per_s,"
      "cpu_ms_per_frame,jpeg_kib,mismatched,out_of_place,element_threads,"
      "load1,ok\n");
  for (i = 0; i < nrows; i++) {
    JpegRow *x = &rows[i];

    fprintf (f, "%d,%s,%s,%d,%" G_GUINT64_FORMAT ",%.4f,%.2f,%.3f,%.1f,%"
        G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%.2f,%d\n", x->run,
        fr.video, x->contender->name, x->order, x->frames, x->seconds, x->fps,
        x->cpu_ms_per_frame, x->mean_kib, x->mismatched, x->out_of_place,
        x->threads, x->load1, x->ok);
  }
  fclose (f);
  for (k = 0; k < ncont; k++) {
    gboolean ordered = strcmp (cont[k]->name, "roundrobin-funnel") != 0;

    TAP_ROWS (c, "jpegenc", &cont[k], 1, rows, nrows, ordered
        ? "every JPEG byte-identical to the single-branch pipeline's, in its "
        "order" : "every frame once, every JPEG byte-identical (in arrival "
        "order)");
  }
  for (i = 0; i < (gint) fr.k; i++)
    gst_buffer_unref (fr.frames[i]);
  g_free (fr.frames);
  gst_caps_unref (fr.caps);
  g_free (fr.ref);
  g_free (fr.video);
  g_free (rows);
  g_ptr_array_unref (case_contenders);
  return failures;
}

/* ==== identity ==== */

typedef struct
{
  guint64 last;                 /* the last buffer's number */
  GbThreads *threads;
  double join_s;                /* tbqjoin's threads' CPU then */
  Finish fin;
} LastSeen;

static void
note_last (GbLink * l, GstBuffer * buf, guint64 seq, guint64 stamp,
    gpointer data)
{
  LastSeen *ls = data;

  if (seq == ls->last) {
    ls->join_s = ls->threads
        ? gb_threads_cpu_seconds (ls->threads, "tbqjoin") : 0;
    finish_mark (&ls->fin);
  }
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  guint branches;
  gsize size;
  guint64 buffers;
  double seconds, bps, cpu_us, others_us, added_us, join_us, switches, load1;
  gboolean has_join, has_added;
  gint threads;
  gchar *stats;
  gboolean ok;
  gchar failure[256];
} IdRow;

static void
identity_run (IdRow * row)
{
  GbLink *l = gb_link_new (row->contender, "", row->size, GB_ALLOC_FRESH, 0);
  LastSeen ls = { row->buffers - 1, l->threads, 0 };
  GstElement *split = NULL;
  double cpu0, join0 = 0, push0;
  guint64 i, t0, sw0;

  finish_init (&ls.fin);
  l->consume = note_last;
  l->consume_data = &ls;
  row->load1 = gb_load_average ();
  row->has_join = l->elem && GST_IS_BIN (l->elem)
      && (split = gst_bin_get_by_name (GST_BIN (l->elem), "s")) != NULL;
  t0 = gb_now_ns ();
  cpu0 = gb_cpu_seconds ();
  sw0 = gb_process_switches ();
  push0 = gb_thread_cpu_seconds ();
  if (row->has_join)
    join0 = gb_threads_cpu_seconds (l->threads, "tbqjoin");
  for (i = 0; i < row->buffers; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  row->others_us = gb_thread_cpu_seconds () - push0;
  row->ok = gb_link_drain (l, DRAIN_TIMEOUT_NS);
  if (!row->ok)
    g_strlcpy (row->failure, l->failure, sizeof row->failure);
  row->threads = l->threads ? gb_threads_count (l->threads, NULL) : 0;
  row->stats = split ? gb_tbqueue_stats_brief (split)
      : gb_tbqueue_stats_brief (l->elem);
  if (row->ok) {
    double n = (double) row->buffers, cpu = ls.fin.cpu_s - cpu0;

    row->seconds = (ls.fin.t_ns - t0) / 1e9;
    row->bps = n / row->seconds;
    row->cpu_us = cpu / n * 1e6;
    /* others_us held the pushing thread's CPU time until here. */
    row->others_us = (cpu - row->others_us) / n * 1e6;
    row->join_us = (ls.join_s - join0) / n * 1e6;
    row->switches = (double) (ls.fin.switches - sw0) / n;
  }
  if (split)
    gst_object_unref (split);
  gb_link_free (l);
  finish_clear (&ls.fin);
}

static gsize
parse_size (const gchar * s)
{
  gsize size = (gsize) g_ascii_strtoull (s, NULL, 10);

  if (size < 16 || size % 8)
    gb_die ("parallel: size %s: a multiple of 8, at least 16", s);
  return size;
}

static guint64
identity_buffers (gsize size, gboolean smoke, guint64 force)
{
  if (force)
    return force;
  if (size <= 4096)
    return smoke ? 2000 : 200000;
  if (size <= 65536)
    return smoke ? 200 : 20000;
  return smoke ? 20 : 2000;
}

static int
identity_case (const GbCommon * c, const gchar * sizes_s,
    const gchar * branches_s, guint64 force, const gchar * split_props)
{
  GbCommon cc = case_common (c, "identity");
  gchar **sizes = g_strsplit (sizes_s, ",", -1);
  gchar **branches = g_strsplit (branches_s, ",", -1);
  GString *names = g_string_new ("bare,tbqueue");
  const GbContender *cont[40];
  IdRow *rows;
  gint ncont, run, si, k, i, nrows = 0, failures = 0;
  gchar *params;
  FILE *f;

  case_contenders = g_ptr_array_new ();
  for (i = 0; branches[i]; i++) {
    guint n = (guint) atoi (branches[i]);
    gchar *name = g_strdup_printf ("split-join-%u", n);

    if (n < 1 || n > 64)
      gb_die ("parallel: --branches 1..64");
    g_ptr_array_add (case_contenders, contender_new (name,
            split_join_desc (n, split_props, "identity silent=true", FALSE),
            g_strdup_printf ("tbqsplit %s, %u x identity, tbqjoin "
                "(defaults)", split_props, n)));
    g_string_append_printf (names, ",%s", name);
    g_free (name);
  }
  ncont = gb_contenders_select_with (c, names->str, find_case_contender,
      cont, G_N_ELEMENTS (cont));
  g_string_free (names, TRUE);
  if (ncont == 0)
    goto out;
  params = g_strdup_printf ("\"runs\": %d, \"sizes\": \"%s\", \"branches\": "
      "\"%s\", \"buffers\": {\"32\": %" G_GUINT64_FORMAT ", \"1048576\": %"
      G_GUINT64_FORMAT "}, \"limits\": \"element defaults\", \"alloc\": "
      "\"fresh\", \"pushing\": \"main thread, unpaced\", \"split_props\": "
      "\"%s\"", c->runs, sizes_s, branches_s,
      identity_buffers (32, c->smoke, force),
      identity_buffers (1048576, c->smoke, force), split_props);
  meta_write (&cc, params, cont, ncont);
  g_free (params);

  rows = g_new0 (IdRow, c->runs * ncont * g_strv_length (sizes));
  for (run = 0; run < c->runs; run++)
    for (si = 0; sizes[si]; si++) {
      gint first = nrows;
      IdRow *bare = NULL;

      for (k = 0; k < ncont; k++) {
        IdRow *row = &rows[nrows++];
        const gchar *dash;

        row->run = run;
        row->order = k;
        row->contender = cont[(k + run + si) % ncont];
        row->size = parse_size (sizes[si]);
        row->buffers = identity_buffers (row->size, c->smoke, force);
        dash = strrchr (row->contender->name, '-');
        row->branches = g_str_has_prefix (row->contender->name, "split-join-")
            ? (guint) atoi (dash + 1) : 0;
        identity_run (row);
        if (!row->ok) {
          failures++;
          fprintf (stderr, "parallel identity %s %zu B: %s\n",
              row->contender->name, row->size, row->failure);
        }
        if (row->ok && strcmp (row->contender->name, "bare") == 0)
          bare = row;
      }
      for (i = first; i < nrows; i++) {
        IdRow *row = &rows[i];

        row->has_added = bare != NULL && row->ok;
        if (row->has_added)
          row->added_us = row->cpu_us - bare->cpu_us;
        printf ("# run %d %8zu B %-14s %10.0f buf/s %8.3f us CPU/buf "
            "(added %7.3f, join %7.3f), %5.2f switches/buf, %d threads%s\n",
            run, row->size, row->contender->name, row->bps, row->cpu_us,
            row->added_us, row->join_us, row->switches, row->threads,
            row->ok ? "" : "  FAILED");
      }
    }

  f = gb_out_open (&cc, "runs.csv");
  fprintf (f, "run,size,contender,order,branches,buffers,seconds,"
      "buffers_per_s,cpu_us_per_buffer,others_cpu_us_per_buffer,"
      "added_cpu_us_per_buffer,join_cpu_us_per_buffer,switches_per_buffer,"
      "element_threads,load1,ok,stats\n");
  for (i = 0; i < nrows; i++) {
    IdRow *x = &rows[i];
    gchar added[32] = "", join[32] = "";

    if (x->has_added)
      g_snprintf (added, sizeof added, "%.4f", x->added_us);
    if (x->has_join && x->ok)
      g_snprintf (join, sizeof join, "%.4f", x->join_us);
    fprintf (f, "%d,%zu,%s,%d,%u,%" G_GUINT64_FORMAT ",%.4f,%.1f,%.4f,%.4f,"
        "%s,%s,%.3f,%d,%.2f,%d,%s\n", x->run, x->size, x->contender->name,
        x->order, x->branches, x->buffers, x->seconds, x->bps, x->cpu_us,
        x->others_us, added, join, x->switches, x->threads, x->load1, x->ok,
        x->stats ? x->stats : "");
  }
  fclose (f);
  TAP_ROWS (c, "identity", cont, ncont, rows, nrows, "every buffer verified, in order");
  for (i = 0; i < nrows; i++)
    g_free (rows[i].stats);
  g_free (rows);
out:
  g_strfreev (sizes);
  g_strfreev (branches);
  g_ptr_array_unref (case_contenders);
  return failures;
}

/* ==== arrival ==== */

#define PRODUCER_SHIFT 40

typedef struct
{
  gsize size;
  guint producers;
  guint64 total;
  /* the sink's thread */
  guint64 *expect;
  guint64 seen;
  gboolean failed;
  gchar failure[256];
  Finish fin;
} ArrivalSink;

static GstFlowReturn
arrival_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  ArrivalSink *s = gst_pad_get_element_private (pad);
  guint64 off = GST_BUFFER_OFFSET (buf), p = off >> PRODUCER_SHIFT, stamp;
  GstMapInfo map;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    s->failed = TRUE;
  } else {
    if (p >= s->producers || (off & ((G_GUINT64_CONSTANT (1) <<
                    PRODUCER_SHIFT) - 1)) != s->expect[p]
        || map.size != s->size
        || !gb_payload_check (map.data, map.size, off, &stamp)) {
      if (!s->failed)
        g_snprintf (s->failure, sizeof s->failure, "buffer %" G_GUINT64_FORMAT
            " of producer %" G_GUINT64_FORMAT ": not its producer's next, "
            "or its bytes wrong", off & 0xffffffffff, p);
      s->failed = TRUE;
    } else {
      s->expect[p]++;
    }
    gst_buffer_unmap (buf, &map);
  }
  gst_buffer_unref (buf);
  if (++s->seen == s->total)
    finish_mark (&s->fin);
  return GST_FLOW_OK;
}

typedef struct
{
  GstPad *src;
  guint index;
  guint64 n;
  gsize size;
  double *lat_ns;
  pthread_barrier_t *go;
  double cpu_s;
  GstFlowReturn ret;
} Producer;

static void *
producer_main (void *data)
{
  Producer *p = data;
  guint64 i;

  pthread_barrier_wait (p->go);
  for (i = 0; i < p->n; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, p->size, NULL);
    guint64 seq = ((guint64) p->index << PRODUCER_SHIFT) | i, t0, t1;
    GstMapInfo map;

    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    gb_payload_fill (map.data, p->size, seq, 0);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_OFFSET (buf) = seq;
    t0 = gb_ticks ();
    p->ret = gst_pad_push (p->src, buf);
    t1 = gb_ticks ();
    p->lat_ns[i] = gb_ticks_to_ns (t1 - t0);
    if (p->ret != GST_FLOW_OK)
      break;
  }
  p->cpu_s = gb_thread_cpu_seconds ();
  return NULL;
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  gsize size;
  guint producers;
  guint64 buffers;
  double seconds, bps, cpu_us, others_us, switches, p50, p99, p999, load1;
  gint threads;
  gboolean ok;
  gchar failure[256];
} ArrRow;

static void
arrival_run (ArrRow * row, guint64 per_producer)
{
  ArrivalSink s = { 0 };
  GstElement *bin = gb_contender_make (row->contender, ""), *in;
  GbThreads *threads = gb_threads_watch (bin);
  GstPad *sink = gst_pad_new ("sink", GST_PAD_SINK), *esrc;
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-gst-bench");
  GstEvent *ev[3];
  GstSegment seg;
  Producer *p = g_new0 (Producer, row->producers);
  pthread_t *th = g_new0 (pthread_t, row->producers);
  pthread_barrier_t go;
  double cpu0, producers_s = 0, *all;
  guint64 t0, sw0;
  guint i, e;

  s.size = row->size;
  s.producers = row->producers;
  s.total = per_producer * row->producers;
  s.expect = g_new0 (guint64, row->producers);
  finish_init (&s.fin);
  gst_pad_set_chain_function (sink, arrival_chain);
  gst_pad_set_element_private (sink, &s);
  in = gst_bin_get_by_name (GST_BIN (bin), "in");
  esrc = gst_element_get_static_pad (bin, "src");
  if (in == NULL || esrc == NULL || gst_pad_link (esrc, sink)
      != GST_PAD_LINK_OK)
    gb_die ("parallel arrival %s: cannot link", row->contender->name);
  gst_object_unref (esrc);
  gst_pad_set_active (sink, TRUE);
  /* One stream in `producers` parts: the same sticky events on every pad. */
  gst_segment_init (&seg, GST_FORMAT_TIME);
  ev[0] = gst_event_new_stream_start ("gst-bench-parallel-arrival");
  ev[1] = gst_event_new_caps (caps);
  ev[2] = gst_event_new_segment (&seg);
  gst_caps_unref (caps);
  for (i = 0; i < row->producers; i++) {
    GstPad *req = gst_element_request_pad_simple (in, "sink_%u");

    p[i].src = gst_pad_new ("src", GST_PAD_SRC);
    if (req == NULL || gst_pad_link (p[i].src, req) != GST_PAD_LINK_OK)
      gb_die ("parallel arrival %s: cannot link producer %u",
          row->contender->name, i);
    gst_object_unref (req);
  }
  if (gst_element_set_state (bin, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE)
    gb_die ("parallel arrival %s: cannot go to PLAYING", row->contender->name);
  pthread_barrier_init (&go, NULL, row->producers + 1);
  for (i = 0; i < row->producers; i++) {
    gst_pad_set_active (p[i].src, TRUE);
    for (e = 0; e < 3; e++)
      if (!gst_pad_push_event (p[i].src, gst_event_ref (ev[e])))
        gb_die ("parallel arrival %s: event refused", row->contender->name);
    p[i].index = i;
    p[i].n = per_producer;
    p[i].size = row->size;
    p[i].lat_ns = g_new0 (double, per_producer);
    p[i].go = &go;
    if (pthread_create (&th[i], NULL, producer_main, &p[i]) != 0)
      gb_die ("parallel arrival: cannot start a producer");
  }
  for (e = 0; e < 3; e++)
    gst_event_unref (ev[e]);
  row->load1 = gb_load_average ();
  /* Every producer is waiting at the barrier: the span starts here. */
  t0 = gb_now_ns ();
  cpu0 = gb_cpu_seconds ();
  sw0 = gb_process_switches ();
  pthread_barrier_wait (&go);
  for (i = 0; i < row->producers; i++)
    pthread_join (th[i], NULL);
  row->ok = finish_wait (&s.fin, DRAIN_TIMEOUT_NS) && !s.failed;
  for (i = 0; i < row->producers; i++) {
    producers_s += p[i].cpu_s;
    if (p[i].ret != GST_FLOW_OK && !s.failed) {
      row->ok = FALSE;
      g_snprintf (s.failure, sizeof s.failure, "producer %u: push returned "
          "%s", i, gst_flow_get_name (p[i].ret));
    }
  }
  if (!row->ok && !s.failure[0])
    g_snprintf (s.failure, sizeof s.failure, "%" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " buffers arrived", s.seen, s.total);
  g_strlcpy (row->failure, s.failure, sizeof row->failure);
  row->threads = gb_threads_count (threads, NULL);
  row->buffers = s.total;
  if (row->ok) {
    all = g_new (double, s.total);
    for (i = 0; i < row->producers; i++)
      memcpy (all + i * per_producer, p[i].lat_ns,
          per_producer * sizeof (double));
    gb_percentiles (all, s.total, &row->p50, &row->p99, &row->p999);
    g_free (all);
    row->seconds = (s.fin.t_ns - t0) / 1e9;
    row->bps = s.total / row->seconds;
    row->cpu_us = (s.fin.cpu_s - cpu0) / s.total * 1e6;
    row->others_us = (s.fin.cpu_s - cpu0 - producers_s) / s.total * 1e6;
    row->switches = (double) (s.fin.switches - sw0) / s.total;
  }
  gst_element_set_state (bin, GST_STATE_NULL);
  for (i = 0; i < row->producers; i++) {
    GstPad *peer = gst_pad_get_peer (p[i].src);

    gst_pad_set_active (p[i].src, FALSE);
    if (peer) {
      gst_pad_unlink (p[i].src, peer);
      gst_element_release_request_pad (in, peer);
      gst_object_unref (peer);
    }
    gst_object_unref (p[i].src);
    g_free (p[i].lat_ns);
  }
  gst_pad_set_active (sink, FALSE);
  gst_object_unref (sink);
  gst_object_unref (in);
  gb_threads_free (threads, bin);
  gst_object_unref (bin);
  pthread_barrier_destroy (&go);
  finish_clear (&s.fin);
  g_free (s.expect);
  g_free (p);
  g_free (th);
}

static int
arrival_case (const GbCommon * c, guint producers, guint64 per_producer,
    gsize size, const gchar * limits)
{
  GbCommon cc = case_common (c, "arrival");
  const GbContender *cont[4];
  ArrRow *rows;
  gint ncont, run, k, i, nrows = 0, failures = 0;
  gchar *params;
  FILE *f;

  case_contenders = g_ptr_array_new ();
  g_ptr_array_add (case_contenders, contender_new ("funnel-queue",
          g_strdup_printf ("funnel name=in ! queue %s", limits),
          g_strdup_printf ("funnel ! queue %s", *limits ? limits
              : "(defaults)")));
  g_ptr_array_add (case_contenders, contender_new ("tbqjoin-arrival",
          g_strdup_printf ("tbqjoin name=in order=arrival %s", limits),
          g_strdup_printf ("tbqjoin order=arrival %s: each producer writes "
              "into its own source pool", *limits ? limits
              : "(defaults)")));
  ncont = gb_contenders_select_with (c, "funnel-queue,tbqjoin-arrival",
      find_case_contender, cont, G_N_ELEMENTS (cont));
  if (ncont == 0)
    goto out;
  params = g_strdup_printf ("\"runs\": %d, \"producers\": %u, "
      "\"buffers_per_producer\": %" G_GUINT64_FORMAT ", \"size\": %zu, "
      "\"limits\": \"%s\", \"alloc\": \"fresh\", \"pushing\": "
      "\"one thread per producer, unpaced, every push timed (TSC)\", "
      "\"sticky_events\": \"the same event objects on every producer's pad\"",
      c->runs, producers, per_producer, size, *limits ? limits
      : "element defaults");
  meta_write (&cc, params, cont, ncont);
  g_free (params);

  rows = g_new0 (ArrRow, c->runs * ncont);
  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      ArrRow *row = &rows[nrows++];

      row->run = run;
      row->order = k;
      row->contender = cont[(k + run) % ncont];
      row->size = size;
      row->producers = producers;
      arrival_run (row, per_producer);
      if (!row->ok) {
        failures++;
        fprintf (stderr, "parallel arrival %s: %s\n", row->contender->name,
            row->failure);
      }
      printf ("# run %d %-16s %u producers %10.0f buf/s %7.3f us CPU/buf "
          "(not producers %7.3f), %5.2f switches/buf, push p50 %7.0f p99 "
          "%9.0f ns, %d threads%s\n", run, row->contender->name, producers,
          row->bps, row->cpu_us, row->others_us, row->switches, row->p50,
          row->p99, row->threads, row->ok ? "" : "  FAILED");
    }
  f = gb_out_open (&cc, "runs.csv");
  fprintf (f, "run,size,contender,order,producers,buffers,seconds,"
      "buffers_per_s,cpu_us_per_buffer,others_cpu_us_per_buffer,"
      "switches_per_buffer,push_p50_ns,push_p99_ns,push_p999_ns,"
      "element_threads,load1,ok\n");
  for (i = 0; i < nrows; i++) {
    ArrRow *x = &rows[i];

    fprintf (f, "%d,%zu,%s,%d,%u,%" G_GUINT64_FORMAT ",%.4f,%.1f,%.4f,%.4f,"
        "%.3f,%.1f,%.1f,%.1f,%d,%.2f,%d\n", x->run, x->size,
        x->contender->name, x->order, x->producers, x->buffers, x->seconds,
        x->bps, x->cpu_us, x->others_us, x->switches, x->p50, x->p99, x->p999,
        x->threads, x->load1, x->ok);
  }
  fclose (f);
  TAP_ROWS (c, "arrival", cont, ncont, rows, nrows, "every buffer verified, each producer's in its order");
  g_free (rows);
out:
  g_ptr_array_unref (case_contenders);
  return failures;
}

/* ==== stall ==== */

#define STALL_WARMUP 64
#define SAMPLE_NS (10 * GST_MSECOND)
#define JOIN_SOURCE_POOL (4 * 4096)
#define JOIN_SINK_BLOCK 65536

typedef struct
{
  guint64 at;                   /* the offset that blocks */
  GMutex lock;
  GCond cond;
  gboolean hit, released;
} Stall;

static GstPadProbeReturn
stall_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Stall *st = data;

  if (GST_BUFFER_OFFSET (GST_PAD_PROBE_INFO_BUFFER (info)) == st->at) {
    g_mutex_lock (&st->lock);
    st->hit = TRUE;
    g_cond_broadcast (&st->cond);
    while (!st->released)
      g_cond_wait (&st->cond, &st->lock);
    g_mutex_unlock (&st->lock);
  }
  return GST_PAD_PROBE_OK;
}

typedef struct
{
  GbLink *link;
  atomic_int stop;
  atomic_uint_fast64_t pushed;
} StallPusher;

static void *
stall_pusher_main (void *data)
{
  StallPusher *sp = data;

  while (!atomic_load (&sp->stop)) {
    gb_link_push (sp->link, gb_link_make_buffer (sp->link, 0));
    atomic_store (&sp->pushed, sp->link->pushed);
  }
  return NULL;
}

static guint64
stats_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  gst_structure_get_uint64 (s, field, &v);
  return v;
}

/* One contender in this process; prints one "row,..." line. */
static int
stall_child (const GbCommon * c, const gchar * desc, gsize size,
    guint stall_ms)
{
  GbContender cont = { "stall", NULL, desc, "" };
  Stall st = { 0 };
  StallPusher sp = { 0 };
  GbLink *l;
  GstElement *split;
  GstStructure *stats = NULL;
  pthread_t th;
  guint64 i, rss0, rss_max = 0, rss_mid = 0, rss_end = 0, t_end;
  guint64 pushed_mid = 0, pushed_end = 0, split_pools, join_pools, bound;
  guint in_flight_max = 0, window = 0, max_in_flight = 0, branches = 2;
  guint max_bytes = 0;
  gboolean ok;

  gb_gst_init ();
  l = gb_link_new (&cont, "", size, GB_ALLOC_FRESH, 0);
  split = gst_bin_get_by_name (GST_BIN (l->elem), "s");
  g_mutex_init (&st.lock);
  g_cond_init (&st.cond);
  st.at = G_MAXUINT64;
  for (i = 0; i < branches; i++) {
    gchar *name = g_strdup_printf ("w%" G_GUINT64_FORMAT, i);
    GstElement *w = gst_bin_get_by_name (GST_BIN (l->elem), name);
    GstPad *pad;

    if (w == NULL || split == NULL)
      gb_die ("parallel stall: no element %s or s in the contender", name);
    pad = gst_element_get_static_pad (w, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, stall_probe, &st,
        NULL);
    gst_object_unref (pad);
    gst_object_unref (w);
    g_free (name);
  }
  /* Warm-up: every path taken once, then RSS. */
  for (i = 0; i < STALL_WARMUP; i++)
    gb_link_push (l, gb_link_make_buffer (l, 0));
  if (!gb_link_drain (l, DRAIN_TIMEOUT_NS))
    gb_die ("parallel stall: warm-up: %s", l->failure);
  g_usleep (100000);
  rss0 = gb_rss_bytes ();
  g_mutex_lock (&st.lock);
  st.at = STALL_WARMUP + 8;
  g_mutex_unlock (&st.lock);
  sp.link = l;
  if (pthread_create (&th, NULL, stall_pusher_main, &sp) != 0)
    gb_die ("parallel stall: cannot start the pushing thread");
  g_mutex_lock (&st.lock);
  while (!st.hit)
    g_cond_wait (&st.cond, &st.lock);
  g_mutex_unlock (&st.lock);
  /* The stall: RSS and the window every 10 ms. */
  t_end = gb_now_ns () + (guint64) stall_ms * GST_MSECOND;
  {
    guint64 t_mid = gb_now_ns () + (guint64) stall_ms * GST_MSECOND / 2;
    gboolean mid_taken = FALSE;

    while (gb_now_ns () < t_end) {
      guint64 rss = gb_rss_bytes ();
      guint inf = 0;

      g_object_get (split, "current-in-flight", &inf, NULL);
      rss_max = MAX (rss_max, rss);
      in_flight_max = MAX (in_flight_max, inf);
      if (!mid_taken && gb_now_ns () >= t_mid) {
        rss_mid = rss;
        pushed_mid = atomic_load (&sp.pushed);
        mid_taken = TRUE;
      }
      gb_pace_until (gb_now_ns () + SAMPLE_NS, TRUE);
    }
  }
  rss_end = gb_rss_bytes ();
  rss_max = MAX (rss_max, rss_end);
  pushed_end = atomic_load (&sp.pushed);
  g_object_get (split, "max-in-flight", &max_in_flight, "max-size-bytes",
      &max_bytes, "stats", &stats, NULL);
  /* 0: twice the branches. */
  window = max_in_flight ? max_in_flight : 2 * branches;
  atomic_store (&sp.stop, 1);
  g_mutex_lock (&st.lock);
  st.released = TRUE;
  g_cond_broadcast (&st.cond);
  g_mutex_unlock (&st.lock);
  pthread_join (th, NULL);
  ok = gb_link_drain (l, DRAIN_TIMEOUT_NS);
  if (!ok)
    fprintf (stderr, "parallel stall: %s\n", l->failure);
  split_pools = stats_u64 (stats, "source-block-size")
      * stats_u64 (stats, "source-blocks") + stats_u64 (stats,
      "sink-bytes-peak");
  join_pools = branches * JOIN_SOURCE_POOL + JOIN_SINK_BLOCK;
  bound = (guint64) window * size + max_bytes + 2 * size + split_pools
      + join_pools;
  printf ("row,%zu,%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
      G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT ",%"
      G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d\n",
      size, window, stall_ms, rss_max - MIN (rss0, rss_max),
      (gint64) rss_end - (gint64) rss_mid > 0 ? rss_end - rss_mid : 0, bound,
      split_pools + join_pools, in_flight_max, stats_u64 (stats,
          "peak-level-bytes"), pushed_end - pushed_mid, l->pushed,
      (guint64) max_bytes, ok);
  gst_structure_free (stats);
  gst_object_unref (split);
  gb_link_free (l);
  g_mutex_clear (&st.lock);
  g_cond_clear (&st.cond);
  return ok ? 0 : 1;
}

typedef struct
{
  gint run;
  const GbContender *contender;
  gint order;
  guint64 size, growth, flat, bound, pools, peak_level, pushed_late, pushed,
      max_bytes;
  guint window, stall_ms, in_flight;
  gboolean ok;
} StallRow;

static int
stall_case (const GbCommon * c, gsize size, guint stall_ms)
{
  GbCommon cc = case_common (c, "stall");
  const GbContender *cont[4];
  StallRow *rows;
  gint ncont, run, k, i, nrows = 0, failures = 0;
  gchar *params, *sizes = g_strdup_printf ("%zu", size);
  gchar *ms = g_strdup_printf ("%u", stall_ms);
  FILE *f;

  case_contenders = g_ptr_array_new ();
  g_ptr_array_add (case_contenders, contender_new ("split-join",
          split_join_desc (2, "", "identity silent=true", TRUE),
          g_strdup ("tbqsplit (defaults: max-in-flight twice the branches, "
              "4), 2 x identity, tbqjoin")));
  g_ptr_array_add (case_contenders, contender_new ("split-join-w16",
          split_join_desc (2, "max-in-flight=16", "identity silent=true",
              TRUE),
          g_strdup ("tbqsplit max-in-flight=16, 2 x identity, tbqjoin")));
  ncont = gb_contenders_select_with (c, "split-join,split-join-w16",
      find_case_contender, cont, G_N_ELEMENTS (cont));
  if (ncont == 0)
    goto out;
  params = g_strdup_printf ("\"runs\": %d, \"size\": %zu, \"stall_ms\": %u, "
      "\"warmup_buffers\": %d, \"alloc\": \"fresh\", \"pushing\": \"one "
      "thread, unpaced\", \"split_limits\": \"defaults\", "
      "\"process_per_contender\": true", c->runs, size, stall_ms,
      STALL_WARMUP);
  meta_write (&cc, params, cont, ncont);
  g_free (params);

  rows = g_new0 (StallRow, c->runs * ncont);
  for (run = 0; run < c->runs; run++)
    for (k = 0; k < ncont; k++) {
      const GbContender *ck = cont[(k + run) % ncont];
      const gchar *args[] = { gb_self, "parallel", "--child-stall", ck->props,
        "--stall-size", sizes, "--stall-ms", ms, NULL
      };
      gchar *what = g_strdup_printf ("parallel stall %s", ck->name);
      gchar **lines = gb_run_child_rows (args, what, &failures);
      guint li;

      for (li = 0; lines[li]; li++) {
        StallRow *r = &rows[nrows];
        gint okv = 0;

        if (sscanf (lines[li], "%" G_GUINT64_FORMAT ",%u,%u,%" G_GUINT64_FORMAT
                ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%"
                G_GUINT64_FORMAT ",%u,%" G_GUINT64_FORMAT ",%"
                G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                ",%d", &r->size, &r->window, &r->stall_ms, &r->growth,
                &r->flat, &r->bound, &r->pools, &r->in_flight,
                &r->peak_level, &r->pushed_late, &r->pushed, &r->max_bytes,
                &okv) != 13)
          continue;
        r->run = run;
        r->order = k;
        r->contender = ck;
        /* The window is a hard bound: more in flight is a failure. */
        r->ok = okv && r->in_flight <= r->window;
        if (!r->ok)
          failures++;
        printf ("# run %d %-15s %zu B stall %u ms: RSS +%.1f MiB (bound %.1f "
            "MiB: window %u, split level %.1f MiB, pools %.2f MiB), +%.2f MiB "
            "over the second half, in flight %u, %" G_GUINT64_FORMAT
            " pushes in the second half%s\n", run, ck->name, size, stall_ms,
            r->growth / 1048576.0, r->bound / 1048576.0, r->window,
            r->peak_level / 1048576.0, r->pools / 1048576.0,
            r->flat / 1048576.0, r->in_flight, r->pushed_late,
            r->ok ? "" : "  FAILED");
        nrows++;
      }
      g_strfreev (lines);
      g_free (what);
    }
  f = gb_out_open (&cc, "runs.csv");
  fprintf (f, "run,size,contender,order,window,stall_ms,growth_mib,"
      "bound_mib,growth_per_bound,flat_mib,pools_mib,in_flight_max,"
      "split_level_peak_mib,pushes_second_half,pushed,ok\n");
  for (i = 0; i < nrows; i++) {
    StallRow *x = &rows[i];

    fprintf (f, "%d,%" G_GUINT64_FORMAT ",%s,%d,%u,%u,%.3f,%.3f,%.3f,%.3f,"
        "%.3f,%u,%.3f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d\n",
        x->run, x->size, x->contender->name, x->order, x->window, x->stall_ms,
        x->growth / 1048576.0, x->bound / 1048576.0,
        (double) x->growth / (double) x->bound, x->flat / 1048576.0,
        x->pools / 1048576.0, x->in_flight, x->peak_level / 1048576.0,
        x->pushed_late, x->pushed, x->ok);
  }
  fclose (f);
  TAP_ROWS (c, "stall", cont, ncont, rows, nrows, "no more in flight than "
      "the window, every buffer verified after the stall");
  g_free (rows);
out:
  g_free (sizes);
  g_free (ms);
  g_ptr_array_unref (case_contenders);
  return failures;
}

/* ==== the command ==== */

int
gb_parallel_main (GbCommon * c, int argc, char **argv)
{
  const gchar *cases_s = "jpegenc,identity,arrival,stall";
  const gchar *sizes_s = "32,1048576", *branches_s = "1,2,4,8,16";
  const gchar *child_stall = NULL, *split_props = "", *arrival_limits = "";
  guint workers = 2, frame_set = 8, producers = 8, stall_ms = 0;
  guint64 frames = 0, force = 0, arrival_buffers = 0;
  gsize arrival_size = 32, stall_size = 1048576;
  gchar **cases;
  gint i, failures = 0;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--cases") == 0 && i + 1 < argc)
      cases_s = argv[++i];
    else if (strcmp (argv[i], "--workers") == 0 && i + 1 < argc)
      workers = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
      frames = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--frame-set") == 0 && i + 1 < argc)
      frame_set = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes_s = argv[++i];
    else if (strcmp (argv[i], "--branches") == 0 && i + 1 < argc)
      branches_s = argv[++i];
    else if (strcmp (argv[i], "--buffers") == 0 && i + 1 < argc)
      force = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--split-props") == 0 && i + 1 < argc)
      split_props = argv[++i];
    else if (strcmp (argv[i], "--arrival-limits") == 0 && i + 1 < argc)
      arrival_limits = argv[++i];
    else if (strcmp (argv[i], "--producers") == 0 && i + 1 < argc)
      producers = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--arrival-buffers") == 0 && i + 1 < argc)
      arrival_buffers = g_ascii_strtoull (argv[++i], NULL, 10);
    else if (strcmp (argv[i], "--arrival-size") == 0 && i + 1 < argc)
      arrival_size = parse_size (argv[++i]);
    else if (strcmp (argv[i], "--stall-ms") == 0 && i + 1 < argc)
      stall_ms = (guint) atoi (argv[++i]);
    else if (strcmp (argv[i], "--stall-size") == 0 && i + 1 < argc)
      stall_size = parse_size (argv[++i]);
    else if (strcmp (argv[i], "--child-stall") == 0 && i + 1 < argc)
      child_stall = argv[++i];
    else
      gb_die ("parallel: unknown option %s", argv[i]);
  }
  if (workers < 1 || workers > 64 || frame_set < 1 || frame_set > 1024
      || producers < 1 || producers > 1024)
    gb_die ("parallel: --workers 1..64, --frame-set 1..1024, "
        "--producers 1..1024");
  if (frames == 0)
    frames = c->smoke ? 8 : 300;
  if (arrival_buffers == 0)
    arrival_buffers = c->smoke ? 500 : 50000;
  if (stall_ms == 0)
    stall_ms = c->smoke ? 300 : 2000;
  if (child_stall)
    return stall_child (c, child_stall, stall_size, stall_ms);

  gb_gst_init ();
  cases = g_strsplit (cases_s, ",", -1);
  for (i = 0; cases[i]; i++) {
    if (strcmp (cases[i], "jpegenc") == 0)
      failures += jpegenc_case (c, workers, frames, frame_set);
    else if (strcmp (cases[i], "identity") == 0)
      failures += identity_case (c, sizes_s, branches_s, force,
          split_props);
    else if (strcmp (cases[i], "arrival") == 0)
      failures += arrival_case (c, producers, arrival_buffers, arrival_size,
          arrival_limits);
    else if (strcmp (cases[i], "stall") == 0)
      failures += stall_case (c, stall_size, stall_ms);
    else
      gb_die ("parallel: unknown case %s (jpegenc, identity, arrival, "
          "stall)", cases[i]);
  }
  g_strfreev (cases);
  return failures ? 1 : 0;
}

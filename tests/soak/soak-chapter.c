/* The soak harness: chapters, each a random configuration of the element
 * and a random traffic profile, drawn from the seed and the chapter's
 * index alone (so that one chapter can be replayed by itself); a
 * parallel chapter's split, join and workers too (soak-parallel.c runs
 * them).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "soak.h"

#include <string.h>

#define PICK(rng, array) ((array)[soak_rand ((rng), G_N_ELEMENTS (array))])

static const gchar *const leaky_names[] = { "no", "upstream", "downstream" };
static const gchar *const transfer_names[] = { "auto", "copy", "reference" };

static void plan_parallel (SoakChapter * ch, guint64 * rng);

/* A mode from the set `mask` (bits 1 << mode). */
static gint
pick_mode (guint64 * rng, guint mask)
{
  gint modes[3], n = 0, m;

  for (m = 0; m < 3; m++)
    if (mask & (1u << m))
      modes[n++] = m;
  return n > 0 ? modes[soak_rand (rng, n)] : 0;
}

void
soak_chapter_plan_limits (SoakChapter * ch, guint64 * rng)
{
  static const guint buffers[] = { 0, 1, 2, 3, 5, 10, 50, 200, 200, 1000 };
  static const guint bytes[] = { 0, 0, 1000, 16384, 100000, 1 << 20,
    10 << 20, 10 << 20
  };
  static const guint64 times[] = { 0, 0, GST_MSECOND, 10 * GST_MSECOND,
    100 * GST_MSECOND, GST_SECOND, GST_SECOND
  };

  /* A chapter that spills has limits its backlogs go past the sink pool
   * with (16 sink blocks), often none at all. */
  static const guint spill_buffers[] = { 0, 0, 1000, 20000 };
  static const guint spill_bytes[] = { 0, 0, 10 << 20, 100 << 20 };
  static const guint64 spill_times[] = { 0, 0, GST_SECOND, 10 * GST_SECOND };

  if (ch->spill) {
    ch->max_buffers = PICK (rng, spill_buffers);
    ch->max_bytes = PICK (rng, spill_bytes);
    ch->max_time = PICK (rng, spill_times);
    return;
  }
  ch->max_buffers = PICK (rng, buffers);
  ch->max_bytes = PICK (rng, bytes);
  ch->max_time = PICK (rng, times);
}

static void
plan_geometry (SoakChapter * ch, guint64 * rng)
{
  static const guint source[] = { 128, 256, 512, 1024, 4096, 4096, 16384,
    65536
  };
  static const guint sink[] = { 4096, 16384, 65536, 65536, 262144,
    1 << 20
  };
  static const guint idle[] = { 0, 1, 4, 16 };
  guint64 max_choices[5], min, r;
  guint pick;

  ch->source_block_size = 4096;
  ch->source_blocks = 4;
  ch->sink_block_size = 65536;
  ch->sink_min_bytes = 256 * 1024;
  ch->sink_max_bytes = G_GUINT64_CONSTANT (256) << 20;
  ch->idle_blocks = 16;
  if (!(soak.features & SOAK_F_GEOMETRY))
    goto spill;
  ch->source_block_size = PICK (rng, source);
  ch->source_blocks = (guint) soak_range (rng, 2, 16);
  /* One draw each: MAX evaluates its arguments twice. */
  pick = PICK (rng, sink);
  ch->sink_block_size = MAX (ch->source_block_size, pick);
  max_choices[0] = 2 * (guint64) ch->sink_block_size;
  max_choices[1] = 8 * (guint64) ch->sink_block_size;
  max_choices[2] = 4 << 20;
  max_choices[3] = 64 << 20;
  max_choices[4] = G_GUINT64_CONSTANT (256) << 20;
  min = PICK (rng, max_choices);
  ch->sink_max_bytes = MAX (min, 2 * (guint64) ch->sink_block_size);
  r = soak_rand (rng, 3);
  min = r == 0 ? 0 : r == 1 ? ch->sink_block_size : 256 * 1024;
  ch->sink_min_bytes = MIN (min, ch->sink_max_bytes);
  ch->idle_blocks = PICK (rng, idle);
spill:
  /* Half the chapters spill, past three quarters of a small budget (16
   * sink blocks: spilling needs 8) that backlogs go past. */
  if ((soak.features & SOAK_F_SPILL) && soak_rand (rng, 2) == 0) {
    ch->spill = TRUE;
    ch->sink_max_bytes = 16 * (guint64) ch->sink_block_size;
    ch->sink_min_bytes = MIN (ch->sink_min_bytes, ch->sink_max_bytes);
  }
}

static void
plan_profile (SoakChapter * ch, guint64 * rng)
{
  static const guint64 steps[] = { GST_USECOND, 100 * GST_USECOND,
    GST_MSECOND, 10 * GST_MSECOND, 40 * GST_MSECOND
  };
  static const guint frames[] = { 460800, 1382400, 3110400 };
  guint f = soak.features;

  ch->buffers = soak_log_range (rng, 2000, 200000);
  ch->ts_step = PICK (rng, steps);
  ch->frame_size = PICK (rng, frames);
  /* Operations per 10000, besides single buffers. */
  ch->w_list = (f & SOAK_F_LISTS) ? (guint) soak_range (rng, 0, 800) : 0;
  ch->w_event = (f & SOAK_F_EVENTS) ? (guint) soak_range (rng, 0, 400) : 0;
  ch->w_query = (f & SOAK_F_QUERIES) ? (guint) soak_range (rng, 1, 40) : 0;
  ch->w_eos = (f & SOAK_F_EOS) ? (guint) soak_range (rng, 0, 3) : 0;
  ch->w_flush = (f & SOAK_F_FLUSH_INLINE) ? (guint) soak_range (rng, 0, 5)
      : 0;
  ch->w_state = (f & SOAK_F_STATE) ? (guint) soak_range (rng, 0, 2) : 0;
  /* The probes model queue's drops at the limits with memory alone; a
   * chapter that spills has none (docs/element.md, "Spilling to disk"). */
  ch->w_probe = (f & SOAK_F_PROBE) && !ch->spill
      ? (guint) soak_range (rng, 1, 6) : 0;
  ch->w_limits = (f & SOAK_F_LIMITS) ? (guint) soak_range (rng, 0, 5) : 0;
  ch->big_permille = (guint) soak_range (rng, 0, 3);
  ch->frame_permille = (guint) soak_range (rng, 0, 2);
  ch->stall_permille = (guint) soak_range (rng, 0, 20);
  ch->stall_max_us = (guint) soak_log_range (rng, 10, 300000);
  ch->flush_period_ms = (guint) soak_log_range (rng, 5, 2000);
}

void
soak_chapter_plan (SoakChapter * ch, guint index)
{
  guint64 rng = soak.seed ^ ((guint64) index * G_GUINT64_CONSTANT
      (0xD1B54A32D192ED03));

  soak_splitmix (&rng);
  memset (ch, 0, sizeof *ch);
  ch->index = index;
  ch->leaky = pick_mode (&rng, soak.leaky_mask);
  ch->transfer = pick_mode (&rng, soak.transfer_mask);
  soak_chapter_plan_limits (ch, &rng);
  plan_geometry (ch, &rng);
  if (ch->spill)
    soak_chapter_plan_limits (ch, &rng);
  ch->publish_batch = 1;
  if ((soak.features & SOAK_F_BATCH) && soak_rand (&rng, 2) == 0) {
    static const guint batch[] = { 0, 2, 3, 8, 64 };

    ch->publish_batch = PICK (&rng, batch);
  }
  plan_profile (ch, &rng);
  /* Last, so that the other features draw as they did without it. */
  if ((soak.features & SOAK_F_BUFFERING) && soak_rand (&rng, 2) == 0) {
    static const gdouble low[] = { 0.0, 0.01, 0.1, 0.5 };
    static const gdouble high[] = { 0.0, 0.05, 0.5, 0.99, 1.0 };

    ch->buffering = TRUE;
    ch->low_watermark = PICK (&rng, low);
    ch->high_watermark = PICK (&rng, high);
  }
  if (soak.features & SOAK_F_SEGMENT_JUMP)
    ch->w_segment_jump = (guint) soak_range (&rng, 0, 20);
  plan_parallel (ch, &rng);
}

/* ---- parallel chapters ---- */

void
soak_parallel_plan_limits (SoakParallelPlan * par, guint64 * rng)
{
  static const guint in_flight[] = { 0, 0, 1, 2, 3, 4, 8, 16, 64 };
  SoakChapter limits = {.spill = par->spill };

  soak_chapter_plan_limits (&limits, rng);
  par->max_buffers = limits.max_buffers;
  par->max_bytes = limits.max_bytes;
  par->max_time = limits.max_time;
  par->max_in_flight = PICK (rng, in_flight);
}

void
soak_worker_plan (SoakWorkerConfig * w, guint64 * rng)
{
  memset (w, 0, sizeof *w);
  /* Each input waits a log-uniform time up to 2 ms, or none. */
  if (soak_rand (rng, 4) != 0)
    w->delay_max_us = (guint) soak_log_range (rng, 1, 2000);
  if (soak_rand (rng, 4) == 0) {
    w->stall_permille = (guint) soak_range (rng, 1, 2);
    w->stall_max_ms = (guint) soak_log_range (rng, 5, 200);
  }
  if (soak_rand (rng, 2) == 0)
    w->drop_permille = (guint) soak_log_range (rng, 1, 300);
  w->shape = (guint8) soak_rand (rng, 3);
  w->strip = soak_rand (rng, 4) == 0;
  w->queue = (guint8) soak_rand (rng, 3);
  /* A worker that strips the numbers and outputs from a thread of its
   * own is placed by the split's record, one output per input
   * (docs/parallel.md): it makes no two of one. */
  if (w->strip && w->queue != 0 && w->shape == SOAK_SHAPE_PARTS)
    w->shape = SOAK_SHAPE_PASS;
}

/* Half the chapters (every one with a worker fault to inject). */
static void
plan_parallel (SoakChapter * ch, guint64 * rng)
{
  SoakParallelPlan *p = &ch->par;
  guint i;

  if (!(soak.features & SOAK_F_PARALLEL) || (soak_rand (rng, 2) != 0
          && !soak_inject_in_workers ()))
    return;
  p->on = TRUE;
  p->branches = (guint) soak_range (rng, 1, SOAK_MAX_BRANCHES);
  p->leaky = pick_mode (rng, soak.leaky_mask);
  p->transfer = pick_mode (rng, soak.transfer_mask);
  p->spill = (soak.features & SOAK_F_SPILL) && soak_rand (rng, 2) == 0;
  soak_parallel_plan_limits (p, rng);
  if ((soak.features & SOAK_F_BUFFERING) && soak_rand (rng, 4) == 0) {
    p->buffering = TRUE;
    p->low_watermark = (gdouble) soak_rand (rng, 50) / 100;
    p->high_watermark = p->low_watermark
        + (gdouble) soak_range (rng, 1, 100) / 100 * (1 - p->low_watermark);
  }
  p->w_branch = (guint) soak_range (rng, 0, 5);
  for (i = 0; i < SOAK_MAX_BRANCHES; i++)
    soak_worker_plan (&p->workers[i], rng);
  /* The probes model one element whose src task downstream holds; a
   * split behind it takes what it pushes. */
  ch->w_probe = 0;
  /* The workers take their time: shorter chapters. */
  ch->buffers = MIN (ch->buffers, soak_log_range (rng, 1000, 40000));
}

static void
describe_parallel (GString * s, const SoakParallelPlan * p)
{
  guint i;

  g_string_append_printf (s, " | parallel: %u branches (requests and "
      "releases %u per 10000 ops); split leaky=%s transfer=%s "
      "max-size-buffers=%u max-size-bytes=%u max-size-time=%"
      G_GUINT64_FORMAT " max-in-flight=%u%s", p->branches, p->w_branch,
      leaky_names[p->leaky], transfer_names[p->transfer], p->max_buffers, p->max_bytes,
      p->max_time, p->max_in_flight, p->spill ? " temp-template=(spill)" : "");
  if (p->buffering)
    g_string_append_printf (s, " use-buffering=true low-watermark=%g "
        "high-watermark=%g", p->low_watermark, p->high_watermark);
  for (i = 0; i < p->branches; i++) {
    gchar *w = soak_worker_describe (&p->workers[i]);

    g_string_append_printf (s, "; worker %u: %s", i, w);
    g_free (w);
  }
}

gchar *
soak_chapter_describe (const SoakChapter * ch)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "leaky=%s max-size-buffers=%u "
      "max-size-bytes=%u max-size-time=%" G_GUINT64_FORMAT,
      leaky_names[ch->leaky], ch->max_buffers, ch->max_bytes, ch->max_time);
  if (soak.is_tbqueue)
    g_string_append_printf (s, " transfer=%s source-block-size=%u "
        "source-blocks=%u sink-block-size=%u sink-min-bytes=%"
        G_GUINT64_FORMAT " sink-max-bytes=%" G_GUINT64_FORMAT
        " idle-blocks=%u publish-batch=%u%s", transfer_names[ch->transfer],
        ch->source_block_size, ch->source_blocks, ch->sink_block_size,
        ch->sink_min_bytes, ch->sink_max_bytes, ch->idle_blocks,
        ch->publish_batch, ch->spill ? " temp-template=(spill)" : "");
  if (soak.is_tbqueue && ch->buffering)
    g_string_append_printf (s, " use-buffering=true low-watermark=%g "
        "high-watermark=%g", ch->low_watermark, ch->high_watermark);
  g_string_append_printf (s, " | %" G_GUINT64_FORMAT " buffers, ts step %"
      G_GUINT64_FORMAT " ns, per 10000 ops: list %u event %u query %u "
      "eos %u flush %u state %u probe %u limits %u segment-jump %u; big "
      "%u/1000 frames %u/1000 (%u B); stalls %u/1000 up to %u us; thread "
      "flush every ~%u ms", ch->buffers, ch->ts_step, ch->w_list, ch->w_event,
      ch->w_query, ch->w_eos, ch->w_flush, ch->w_state, ch->w_probe,
      ch->w_limits, ch->w_segment_jump,
      ch->big_permille, ch->frame_permille, ch->frame_size,
      ch->stall_permille, ch->stall_max_us, ch->flush_period_ms);
  if (ch->par.on)
    describe_parallel (s, &ch->par);
  return g_string_free (s, FALSE);
}

/* Set the chapter's properties; pool geometry and publish-batch only with
 * `geometry` (the element must be in READY or NULL). */
void
soak_element_apply (const SoakChapter * ch, gboolean geometry)
{
  GObject *o = G_OBJECT (soak.element);

  g_object_set (o, "leaky", ch->leaky, "max-size-buffers", ch->max_buffers,
      "max-size-bytes", ch->max_bytes, "max-size-time", ch->max_time, NULL);
  if (!soak.is_tbqueue)
    return;
  g_object_set (o, "transfer", ch->transfer, "use-buffering", ch->buffering,
      NULL);
  if (ch->buffering)
    g_object_set (o, "low-watermark", ch->low_watermark, "high-watermark",
        ch->high_watermark, NULL);
  if (geometry) {
    gchar *tmpl = ch->spill ? g_build_filename (g_get_tmp_dir (),
        "tbq-soak-XXXXXX", NULL) : NULL;

    g_object_set (o, "source-block-size", ch->source_block_size,
        "source-blocks", ch->source_blocks, "sink-block-size",
        ch->sink_block_size, "sink-min-bytes", ch->sink_min_bytes,
        "sink-max-bytes", ch->sink_max_bytes, "idle-blocks", ch->idle_blocks,
        "publish-batch", ch->publish_batch, "temp-template", tmpl, NULL);
    g_free (tmpl);
  }
}

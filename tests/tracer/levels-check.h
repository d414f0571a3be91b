/* Helpers of the tbqlevels tracer tests.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each test runs in a process of its own (tap.h forks), so each starts
 * GStreamer with its own tracer parameters, as users do: GST_TRACERS, read
 * by gst_init.  Backlogs are built without timing: downstream is held by a
 * pad probe (the gate) that the test opens, and the test waits until the
 * gate holds a buffer before it pushes on.
 */
#ifndef __LEVELS_CHECK_H__
#define __LEVELS_CHECK_H__

#include <gst/gst.h>

#include "tap.h"

#define WAIT_SECONDS 20         /* hang check, not a speed check */
#define BUFFER_SIZE 100

/* Start GStreamer with GST_TRACERS="tbqlevels(params)"; a %s in `params`
 * becomes the path of this test's CSV file, which is returned. */
gchar *start (const gchar * params);
/* Shut GStreamer down (the tracer closes its file); remove the file. */
void stop (gchar * csv);

/* The tracer records logged so far ("tbqlevels, ts=..." strings). */
extern GPtrArray *records;
/* TRUE if a GLib warning so far contained `text`. */
gboolean warned_about (const gchar * text);

/* A source pad of ours linked to `sinkpad`, its stream started (TIME). */
GstPad *feed_new (GstPad * sinkpad, const gchar * stream_id);
/* Push buffers number from .. from+n-1 (BUFFER_SIZE bytes, 10 ms each);
 * each push must return OK. */
void feed_buffers (GstPad * pad, guint from, guint n);

/* Buffers wait before the sink pad of element `name` until gate_open(). */
void gate_hold (GstElement * pipeline, const gchar * name);
/* Wait until `n` buffers in all have reached the gate. */
void gate_wait_entered (guint n);
void gate_open (void);

/* Set to PLAYING (it may complete asynchronously). */
void play (GstElement * pipeline);
/* Push buffer 0, wait until the gates hold `gates` buffers (one each),
 * then push buffers 1 .. `more`: what follows stays queued. */
void feed_backlog (GstPad * feed, guint gates, guint more);
/* Open the gate, EOS on every feed (NULL-terminated), wait for EOS on the
 * bus and free the feeds. */
void finish (GstElement * pipeline, GstPad * feed, ...) G_GNUC_NULL_TERMINATED;
/* NULL state and unref; checks that every element is finalized. */
void pipeline_free (GstElement * pipeline);

/* The tracer's CSV file. */
typedef struct
{
  gchar **header;
  GPtrArray *rows;              /* gchar ** per line */
  GPtrArray *lines;             /* the lines themselves */
} Csv;

Csv *csv_read (const gchar * path);
void csv_free (Csv * csv);
const gchar *cell (Csv * csv, guint row, const gchar * column);
/* A numeric cell; it must not be empty. */
guint64 value (Csv * csv, guint row, const gchar * column);
/* Rows of `element` (of its single queue `queue` if not NULL): how many,
 * the largest value of a column, the index of the last one. */
guint count_rows (Csv * csv, const gchar * element, const gchar * queue);
guint64 max_of (Csv * csv, const gchar * element, const gchar * queue,
    const gchar * column);
guint last_row (Csv * csv, const gchar * element, const gchar * queue);

#endif /* __LEVELS_CHECK_H__ */

/* The soak harness: where our custom events' references went (a
 * diagnostic, SOAK_EVENT_REFS=1).
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With SOAK_EVENT_REFS set, every reference taken or dropped on a custom
 * event the producer made is recorded with the thread and the stack
 * (GStreamer's mini-object tracer hooks; the leaks tracer the soak runs
 * enables them), and a leaked event's history is printed by the leak
 * check.  The stacks are raw addresses (backtrace_symbols): addr2line
 * turns a module's offset into a line.  It costs a stack walk per
 * reference of these events only, not a log line per reference of every
 * object, which hides the races it is meant to catch.
 */
#include "soak.h"

#include <execinfo.h>
#include <stdlib.h>

#define FRAMES 24

typedef struct
{
  gint refcount;                /* after the change */
  gboolean ref;
  gpointer thread;
  gint n;
  gpointer frames[FRAMES];
} RefRecord;

typedef struct
{
  GstTracer parent;
} SoakRefTracer;

typedef struct
{
  GstTracerClass parent_class;
} SoakRefTracerClass;

G_DEFINE_TYPE (SoakRefTracer, soak_ref_tracer, GST_TYPE_TRACER);

static GMutex lock;
static GHashTable *histories;   /* event -> GArray of RefRecord */
static GstTracer *tracer;

static void
soak_ref_tracer_class_init (SoakRefTracerClass * klass)
{
}

static void
soak_ref_tracer_init (SoakRefTracer * self)
{
}

static void
record (GstMiniObject * object, gint refcount, gboolean ref)
{
  GArray *h;
  RefRecord r;

  if (histories == NULL)
    return;
  g_mutex_lock (&lock);
  h = g_hash_table_lookup (histories, object);
  g_mutex_unlock (&lock);
  if (h == NULL)
    return;
  r.refcount = refcount;
  r.ref = ref;
  r.thread = g_thread_self ();
  r.n = backtrace (r.frames, FRAMES);
  g_mutex_lock (&lock);
  /* Looked up again: the event may have gone meanwhile. */
  if ((h = g_hash_table_lookup (histories, object)) != NULL)
    g_array_append_val (h, r);
  g_mutex_unlock (&lock);
}

static void
on_reffed (GObject * self, GstClockTime ts, GstMiniObject * object,
    gint refcount)
{
  record (object, refcount, TRUE);
}

static void
on_unreffed (GObject * self, GstClockTime ts, GstMiniObject * object,
    gint refcount)
{
  record (object, refcount, FALSE);
}

void
soak_refs_init (void)
{
  if (g_getenv ("SOAK_EVENT_REFS") == NULL)
    return;
  histories = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
      (GDestroyNotify) g_array_unref);
  tracer = g_object_new (soak_ref_tracer_get_type (), NULL);
  gst_tracing_register_hook (tracer, "mini-object-reffed",
      G_CALLBACK (on_reffed));
  gst_tracing_register_hook (tracer, "mini-object-unreffed",
      G_CALLBACK (on_unreffed));
}

void
soak_refs_track (GstMiniObject * object)
{
  if (histories == NULL)
    return;
  g_mutex_lock (&lock);
  g_hash_table_insert (histories, object, g_array_new (FALSE, FALSE,
          sizeof (RefRecord)));
  g_mutex_unlock (&lock);
}

void
soak_refs_forget (GstMiniObject * object)
{
  if (histories == NULL)
    return;
  g_mutex_lock (&lock);
  g_hash_table_remove (histories, object);
  g_mutex_unlock (&lock);
}

void
soak_refs_print (GstMiniObject * object)
{
  GArray *h;
  guint i;

  if (histories == NULL)
    return;
  g_mutex_lock (&lock);
  h = g_hash_table_lookup (histories, object);
  for (i = 0; h != NULL && i < h->len; i++) {
    RefRecord *r = &g_array_index (h, RefRecord, i);
    gchar **sym = backtrace_symbols (r->frames, r->n);

    g_print ("# refs %p: %s -> %d (thread %p)\n", object,
        r->ref ? "ref" : "unref", r->refcount, r->thread);
    for (gint f = 1; sym != NULL && f < r->n; f++)
      g_print ("#     %s\n", sym[f]);
    free (sym);
  }
  g_mutex_unlock (&lock);
}

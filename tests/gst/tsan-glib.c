/* ThreadSanitizer builds only: make GLib's locks visible to ThreadSanitizer.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GLib on Linux implements GMutex and GCond with raw futex system calls, so
 * ThreadSanitizer sees no happens-before edge through them: the GstTask
 * lock that hands a task function to its thread, gst_task_join(), object
 * and bus locks.  Without these edges every hand-over of the element's state
 * between the application thread and its tasks is reported as a race in our
 * own code, which the suppressions must not hide.
 *
 * This file, linked into each test executable and exported from it, wraps
 * the GLib lock functions that GStreamer calls through the PLT: each wrapper
 * calls GLib's own function unchanged (found with dlsym (RTLD_NEXT)) and
 * only adds the acquire/release annotations that describe what the lock
 * does.  GLib's calls to itself do not go through the PLT and stay
 * invisible; tsan.supp covers what happens inside GLib.
 *
 * The same for GAsyncQueue, through which GstHarness hands what reaches its
 * sink pad (buffers, events) to the test thread: a push releases, a pop
 * that returns an item acquires (GLib's own lock inside is invisible).
 *
 * And for GSlice (GLib 2.74), which hands a block one thread freed to
 * another thread's next allocation through magazines under its own locks:
 * a free releases the block, an allocation that returns it acquires it,
 * so that a GstBuffer's memory read by a sink before it freed the buffer
 * is not taken for a race with the thread that gets the same memory for
 * its next buffer (GStreamer allocates buffers from GSlice).
 */
#include <dlfcn.h>
#include <glib.h>
#include <sanitizer/tsan_interface.h>
#include <stdatomic.h>
#include <string.h>

#define REAL(ret, name, args)                                           \
  static ret (*real_ ## name) args;                                     \
  static ret (*get_ ## name (void)) args                                \
  {                                                                     \
    void *f = atomic_load_explicit ((_Atomic (void *) *) &real_ ## name,\
        memory_order_acquire);                                          \
    if (f == NULL) {                                                    \
      f = dlsym (RTLD_NEXT, #name);                                     \
      g_assert (f != NULL);                                             \
      atomic_store_explicit ((_Atomic (void *) *) &real_ ## name, f,    \
          memory_order_release);                                        \
    }                                                                   \
    return (ret (*) args) f;                                            \
  }

REAL (void, g_mutex_lock, (GMutex *));
REAL (void, g_mutex_unlock, (GMutex *));
REAL (gboolean, g_mutex_trylock, (GMutex *));
REAL (void, g_rec_mutex_lock, (GRecMutex *));
REAL (void, g_rec_mutex_unlock, (GRecMutex *));
REAL (gboolean, g_rec_mutex_trylock, (GRecMutex *));
REAL (void, g_cond_wait, (GCond *, GMutex *));
REAL (gboolean, g_cond_wait_until, (GCond *, GMutex *, gint64));
REAL (void, g_async_queue_push, (GAsyncQueue *, gpointer));
REAL (gpointer, g_async_queue_pop, (GAsyncQueue *));
REAL (gpointer, g_async_queue_timeout_pop, (GAsyncQueue *, guint64));
REAL (gpointer, g_async_queue_try_pop, (GAsyncQueue *));
REAL (gpointer, g_async_queue_try_pop_unlocked, (GAsyncQueue *));
REAL (gpointer, g_slice_alloc, (gsize));
REAL (gpointer, g_slice_alloc0, (gsize));
REAL (gpointer, g_slice_copy, (gsize, gconstpointer));
REAL (void, g_slice_free1, (gsize, gpointer));

void
g_mutex_lock (GMutex * mutex)
{
  get_g_mutex_lock ()(mutex);
  __tsan_acquire (mutex);
}

void
g_mutex_unlock (GMutex * mutex)
{
  __tsan_release (mutex);
  get_g_mutex_unlock ()(mutex);
}

gboolean
g_mutex_trylock (GMutex * mutex)
{
  if (!get_g_mutex_trylock ()(mutex))
    return FALSE;
  __tsan_acquire (mutex);
  return TRUE;
}

void
g_rec_mutex_lock (GRecMutex * mutex)
{
  get_g_rec_mutex_lock ()(mutex);
  __tsan_acquire (mutex);
}

void
g_rec_mutex_unlock (GRecMutex * mutex)
{
  __tsan_release (mutex);
  get_g_rec_mutex_unlock ()(mutex);
}

/* GLib calls pthread_mutex_trylock() from inside libglib, where tsan.supp
 * (called_from_lib) hides it, but tail-calls pthread_mutex_lock() and
 * pthread_mutex_unlock() from here, where they are seen: a successful
 * trylock is made known on the pthread mutex (`p`) itself, else its unlock
 * looks like an unlock by a thread that does not hold it. */
gboolean
g_rec_mutex_trylock (GRecMutex * mutex)
{
  if (!get_g_rec_mutex_trylock ()(mutex))
    return FALSE;
  /* After the fact: `p` may have been created by this very call. */
  __tsan_mutex_pre_lock (mutex->p, __tsan_mutex_try_lock);
  __tsan_mutex_post_lock (mutex->p, __tsan_mutex_try_lock, 0);
  __tsan_acquire (mutex);
  return TRUE;
}

/* Waiting releases the mutex and takes it again. */
void
g_cond_wait (GCond * cond, GMutex * mutex)
{
  __tsan_release (mutex);
  get_g_cond_wait ()(cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond * cond, GMutex * mutex, gint64 end_time)
{
  gboolean ret;

  __tsan_release (mutex);
  ret = get_g_cond_wait_until ()(cond, mutex, end_time);
  __tsan_acquire (mutex);
  return ret;
}

void
g_async_queue_push (GAsyncQueue * queue, gpointer data)
{
  __tsan_release (queue);
  get_g_async_queue_push ()(queue, data);
}

/* An item taken: everything its pusher did before the push happened. */
static gpointer
popped (GAsyncQueue * queue, gpointer item)
{
  if (item != NULL)
    __tsan_acquire (queue);
  return item;
}

gpointer
g_async_queue_pop (GAsyncQueue * queue)
{
  return popped (queue, get_g_async_queue_pop ()(queue));
}

gpointer
g_async_queue_timeout_pop (GAsyncQueue * queue, guint64 timeout)
{
  return popped (queue, get_g_async_queue_timeout_pop ()(queue, timeout));
}

gpointer
g_async_queue_try_pop (GAsyncQueue * queue)
{
  return popped (queue, get_g_async_queue_try_pop ()(queue));
}

gpointer
g_async_queue_try_pop_unlocked (GAsyncQueue * queue)
{
  return popped (queue, get_g_async_queue_try_pop_unlocked ()(queue));
}

/* Whether GSlice hands blocks over through its magazines: not with
 * G_SLICE=always-malloc (GStreamer's own tests run so), where a block is
 * malloc's and free's, called from GLib, which tsan.supp ignores
 * (called_from_lib).  There the wrappers add nothing and ignore what the
 * call does as GLib's own calls are ignored: through a wrapper, GLib's
 * tail calls made the free's caller this executable, a free that was
 * checked when the allocation was not, and a block freed, taken again and
 * freed by another thread was a race with the first owner's reads. */
static gboolean
slice_magazines (void)
{
  static int magazines = -1;    /* relaxed: the same value from any thread */
  int m = __atomic_load_n (&magazines, __ATOMIC_RELAXED);

  if (m < 0) {
    const char *env = g_getenv ("G_SLICE");

    m = env == NULL || strstr (env, "always-malloc") == NULL;
    __atomic_store_n (&magazines, m, __ATOMIC_RELAXED);
  }
  return m;
}

void __tsan_ignore_thread_begin (void);
void __tsan_ignore_thread_end (void);

/* A block from GSlice: whatever its last owner did before it freed it
 * happened before. */
static gpointer
sliced (gpointer block)
{
  if (block != NULL)
    __tsan_acquire (block);
  return block;
}

gpointer
g_slice_alloc (gsize size)
{
  gpointer p;

  if (slice_magazines ())
    return sliced (get_g_slice_alloc ()(size));
  __tsan_ignore_thread_begin ();
  p = get_g_slice_alloc ()(size);
  __tsan_ignore_thread_end ();
  return p;
}

gpointer
g_slice_alloc0 (gsize size)
{
  gpointer p;

  if (slice_magazines ())
    return sliced (get_g_slice_alloc0 ()(size));
  __tsan_ignore_thread_begin ();
  p = get_g_slice_alloc0 ()(size);
  __tsan_ignore_thread_end ();
  return p;
}

gpointer
g_slice_copy (gsize size, gconstpointer mem)
{
  /* The copy reads `mem`: checked, as before this wrapper. */
  return sliced (get_g_slice_copy ()(size, mem));
}

void
g_slice_free1 (gsize size, gpointer mem)
{
  if (!slice_magazines ()) {
    __tsan_ignore_thread_begin ();
    get_g_slice_free1 ()(size, mem);
    __tsan_ignore_thread_end ();
    return;
  }
  if (mem != NULL)
    __tsan_release (mem);
  get_g_slice_free1 ()(size, mem);
}

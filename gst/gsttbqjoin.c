/* tbqjoin: the element object, its sink pads' requests and releases, its
 * properties and stats, the two-layer queue's life and the copy task.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threads and locks: gsttbqjoin-private.h.  Here:
 *  - the state-change thread opens the queue (READY->PAUSED, before the
 *    pads are activated: each sink pad's activation opens its writer) and
 *    closes it (PAUSED->READY, after they are deactivated: no writer, no
 *    reader and no done hook runs any more: the pair is unbound first);
 *  - the copy task is a GstTask of the element's own, "<name>:copier",
 *    looping tbq_copier_step().  Why not only libtbq's on-demand pull by
 *    the reader: the src task pulls only when it waits, and while it
 *    pushes a slow downstream a branch's four source blocks would fill and
 *    its thread wait for the reader; the copy task gives them back as
 *    soon as they are sealed, so a branch waits only for a full sink pool.
 *    It posts STREAM_STATUS as every GStreamer task does (CREATE from the
 *    state-change thread, ENTER and LEAVE from its own).  It runs from
 *    open() to close(); an interrupted queue (close() on its way) makes
 *    it wait on copier_cond instead of turning round;
 *  - application threads read the properties and stats under qlock.
 */

/**
 * SECTION:element-tbqjoin
 * @title: tbqjoin
 * @see_also: tbqueue
 *
 * Joins the branches of a tbqsplit back into one stream, in the split's
 * order.  A tbqsplit hands each buffer to whichever of its branches is
 * free, with a sequence number; the branches' workers (encoders, filters,
 * any element that makes its outputs of one input before it takes the
 * next) process them in parallel, and tbqjoin puts what they make back in
 * the order of the inputs: the output of input 7 goes out after those of
 * 0 to 6 and before that of 8, whichever branch finished first.
 *
 * Each sink pad (`sink_%u`, one per branch) has a writer of its own into
 * one two-layer queue, so branches never wait for each other's locks; the
 * src pad's task reads what comes in and sends it in order.  How an
 * output's number is found, what a worker must do to keep the order
 * exact, and what happens when a worker drops, merges, delays or strips
 * the numbers: docs/parallel.md.  A tbqjoin finds its split by itself, by
 * a sticky event the split sends on its branches, nested pairs and
 * several pairs in a pipeline included: there is nothing to set.
 *
 * With #GstTbqJoin:order=arrival (or without a tbqsplit upstream) it is a
 * funnel with a queue: buffers go out as they come, each branch's in its
 * order, held up to #GstTbqJoin:max-size-buffers,
 * #GstTbqJoin:max-size-bytes and #GstTbqJoin:max-size-time.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=300 ! tbqsplit name=s \
 *     tbqjoin name=j ! fakesink \
 *     s. ! jpegenc ! j.  s. ! jpegenc ! j.  s. ! jpegenc ! j.
 * ]| Three JPEG encoders in parallel; the frames come out in order.
 * |[
 * gst-launch-1.0 tbqjoin name=j order=arrival ! fakesink \
 *     audiotestsrc num-buffers=100 ! j.  audiotestsrc num-buffers=100 ! j.
 * ]| A funnel whose producers never wait for each other's lock.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsttbqjoin-private.h"
#include "gsttbqstatus.h"

GST_DEBUG_CATEGORY (gst_tbq_join_debug);

#define DEFAULT_ORDER GST_TBQ_JOIN_ORDER_SEQUENCE
/* queue's defaults. */
#define DEFAULT_MAX_SIZE_BUFFERS 200
#define DEFAULT_MAX_SIZE_BYTES (10 * 1024 * 1024)
#define DEFAULT_MAX_SIZE_TIME GST_SECOND

/* The two-layer queue: records are 48-byte references, so a 64 KiB sink
 * block holds over a thousand; 1024 blocks (64 MiB) is far more than a
 * window of numbers or the arrival limits ever hold. */
#define SINK_BLOCK_SIZE (64 * 1024)
#define SINK_MAX_BLOCKS 1024

enum
{
  PROP_0,
  PROP_ORDER,
  PROP_MAX_SIZE_BUFFERS,
  PROP_MAX_SIZE_BYTES,
  PROP_MAX_SIZE_TIME,
  PROP_CURRENT_LEVEL_BUFFERS,
  PROP_CURRENT_LEVEL_BYTES,
  PROP_CURRENT_LEVEL_TIME,
  PROP_STATS,
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink_%u",
    GST_PAD_SINK,
    GST_PAD_REQUEST,
    GST_STATIC_CAPS_ANY);

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS_ANY);

GType
gst_tbq_join_order_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_TBQ_JOIN_ORDER_SEQUENCE,
        "The split's order: each output at the place of its input",
        "sequence"},
    {GST_TBQ_JOIN_ORDER_ARRIVAL, "As outputs come, as a funnel", "arrival"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstTbqJoinOrder",
            values));
  return type;
}

/* ---- the element ---- */

#define gst_tbq_join_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstTbqJoin, gst_tbq_join, GST_TYPE_ELEMENT,
    GST_DEBUG_CATEGORY_INIT (gst_tbq_join_debug, "tbqjoin", 0,
        "tbqjoin element"));
GST_ELEMENT_REGISTER_DEFINE (tbqjoin, "tbqjoin", GST_RANK_NONE,
    GST_TYPE_TBQ_JOIN);

static GstStateChangeReturn gst_tbq_join_change_state (GstElement * element,
    GstStateChange transition);
static GstPad *gst_tbq_join_request_new_pad (GstElement * element,
    GstPadTemplate * templ, const gchar * name, const GstCaps * caps);
static void gst_tbq_join_release_pad (GstElement * element, GstPad * pad);
static void gst_tbq_join_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_tbq_join_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_tbq_join_dispose (GObject * object);
static void gst_tbq_join_finalize (GObject * object);

static void
gst_tbq_join_class_init (GstTbqJoinClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_tbq_join_set_property;
  gobject_class->get_property = gst_tbq_join_get_property;
  gobject_class->dispose = gst_tbq_join_dispose;
  gobject_class->finalize = gst_tbq_join_finalize;

  /**
   * GstTbqJoin:order:
   *
   * The order of what goes out: the split's ("sequence", the default),
   * or as it comes ("arrival", a funnel).  Without a tbqsplit upstream
   * the join works in arrival order whatever this says (and warns once
   * if it says sequence).  Applies from the next READY to PAUSED change.
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_ORDER,
      g_param_spec_enum ("order", "Order",
          "Output order: the split's sequence, or arrival (a funnel)",
          GST_TYPE_TBQ_JOIN_ORDER, DEFAULT_ORDER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstTbqJoin:max-size-buffers:
   *
   * In arrival order, the most buffers queued (0 = no limit); a branch's
   * thread waits while the join holds that many.  In sequence order the
   * split's window bounds what the join holds, and no branch ever waits
   * here (the order may need that branch's next output).
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_BUFFERS,
      g_param_spec_uint ("max-size-buffers", "Max. size (buffers)",
          "Max. number of buffers queued in arrival order (0=disable)",
          0, G_MAXUINT, DEFAULT_MAX_SIZE_BUFFERS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstTbqJoin:max-size-bytes:
   *
   * In arrival order, the most bytes of buffers queued (0 = no limit).
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_BYTES,
      g_param_spec_uint ("max-size-bytes", "Max. size (kB)",
          "Max. amount of data queued in arrival order (bytes, 0=disable)",
          0, G_MAXUINT, DEFAULT_MAX_SIZE_BYTES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstTbqJoin:max-size-time:
   *
   * In arrival order, the most running time queued (ns, 0 = no limit):
   * for a branch, the running time of its last buffer in less that of
   * its last buffer out (from its first buffer out on).
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE_TIME,
      g_param_spec_uint64 ("max-size-time", "Max. size (ns)",
          "Max. amount of data queued in arrival order (in ns, 0=disable)",
          0, G_MAXUINT64, DEFAULT_MAX_SIZE_TIME,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstTbqJoin:current-level-buffers:
   *
   * Buffers in the join now: written by a branch and not out yet.
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_LEVEL_BUFFERS,
      g_param_spec_uint ("current-level-buffers", "Current level (buffers)",
          "Current number of buffers in the join", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbqJoin:current-level-bytes:
   *
   * Bytes of the buffers in the join now.
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_LEVEL_BYTES,
      g_param_spec_uint ("current-level-bytes", "Current level (kB)",
          "Current amount of data in the join (bytes)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbqJoin:current-level-time:
   *
   * Running time in the join now (ns): the most over the sink pads of
   * their last buffer's running time in less that of the last out.
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_LEVEL_TIME,
      g_param_spec_uint64 ("current-level-time", "Current level (ns)",
          "Current amount of data in the join (in ns)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstTbqJoin:stats:
   *
   * A "tbqjoin-stats" structure: buffers-in, buffers-out, events-out,
   * gaps (numbers that got no output: a worker dropped or merged them),
   * late (outputs that came after their place and were dropped),
   * discarded (buffers dropped by flushes), branches (sink pads),
   * reorder-depth and reorder-depth-peak (items held for the order, now
   * and at most), queries-held (serialized queries waiting now for what
   * comes before them), in-flight (the pair's numbers not resolved), order
   * ("sequence" or "arrival": what the join does now), and pads, one
   * structure per sink pad (name, buffers-in, buffers-out, late, mode,
   * branch, synchronous).  docs/parallel.md says what each means.
   *
   * Since: 0.5
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters of the join: buffers, events, gaps, late outputs, "
          "branches", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata (element_class,
      "Parallel branches join", "Generic",
      "Joins the branches of a tbqsplit in the split's order, or in "
      "arrival order as a funnel", "The tbqueue authors");
  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &sink_template, GST_TYPE_TBQ_JOIN_PAD);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  element_class->change_state = GST_DEBUG_FUNCPTR (gst_tbq_join_change_state);
  element_class->request_new_pad =
      GST_DEBUG_FUNCPTR (gst_tbq_join_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR (gst_tbq_join_release_pad);

  gst_type_mark_as_plugin_api (GST_TYPE_TBQ_JOIN_ORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TBQ_JOIN_PAD, 0);
}

static void
gst_tbq_join_init (GstTbqJoin * join)
{
  join->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_tbq_join_src_set_functions (join->srcpad);
  gst_element_add_pad (GST_ELEMENT (join), join->srcpad);

  join->order = DEFAULT_ORDER;
  atomic_init (&join->max_buffers, DEFAULT_MAX_SIZE_BUFFERS);
  atomic_init (&join->max_bytes, DEFAULT_MAX_SIZE_BYTES);
  atomic_init (&join->max_time, DEFAULT_MAX_SIZE_TIME);
  atomic_init (&join->srcresult, GST_FLOW_FLUSHING);
  pthread_mutex_init (&join->qlock, NULL);
  pthread_cond_init (&join->item_del, NULL);
  pthread_cond_init (&join->retired, NULL);
  pthread_cond_init (&join->copier_cond, NULL);
  g_rec_mutex_init (&join->copy_lock);
  join->pads = g_ptr_array_new_with_free_func (gst_object_unref);
  join->by_branch = g_ptr_array_new ();
  join->released = g_hash_table_new (NULL, NULL);
  g_queue_init (&join->arrival);
  join->clean_len = -1;
}

static void
gst_tbq_join_dispose (GObject * object)
{
  GstElement *element = GST_ELEMENT (object);
  GList *l;

  /* As funnel: the request pads go with the element. */
restart:
  for (l = element->sinkpads; l != NULL; l = l->next) {
    gst_element_release_request_pad (element, GST_PAD (l->data));
    goto restart;
  }
  G_OBJECT_CLASS (parent_class)->dispose (object);
}

static void
gst_tbq_join_finalize (GObject * object)
{
  GstTbqJoin *join = GST_TBQ_JOIN (object);

  gst_clear_object (&join->last_out);
  gst_tbq_join_locked_forget_clean (join);
  g_ptr_array_unref (join->pads);
  g_ptr_array_unref (join->by_branch);
  g_hash_table_unref (join->released);
  if (join->pair != NULL)
    gst_tbq_pair_unref (join->pair);
  pthread_mutex_destroy (&join->qlock);
  pthread_cond_destroy (&join->item_del);
  pthread_cond_destroy (&join->retired);
  pthread_cond_destroy (&join->copier_cond);
  g_rec_mutex_clear (&join->copy_lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- request and release ---- */

static GstPad *
gst_tbq_join_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstTbqJoin *join = GST_TBQ_JOIN (element);
  GstPad *pad;
  gchar *made = NULL;

  if (name == NULL) {
    guint i = 0;

    /* The first free sink_%u. */
    do {
      g_free (made);
      made = g_strdup_printf ("sink_%u", i++);
      pad = gst_element_get_static_pad (element, made);
      if (pad != NULL)
        gst_object_unref (pad);
    } while (pad != NULL);
    name = made;
  }
  pad = GST_PAD_CAST (g_object_new (GST_TYPE_TBQ_JOIN_PAD, "name", name,
          "direction", GST_PAD_SINK, "template", templ, NULL));
  g_free (made);
  gst_tbq_join_sink_set_functions (pad);
  /* CAPS and ACCEPT_CAPS go downstream (as funnel's). */
  GST_PAD_SET_PROXY_CAPS (pad);

  JOIN_LOCK (join);
  /* In the join's generation: a pad requested during a flush has nothing
   * of before it. */
  atomic_store_explicit (&GST_TBQ_JOIN_PAD (pad)->gen,
      atomic_load_explicit (&join->gen, memory_order_seq_cst),
      memory_order_seq_cst);
  g_ptr_array_add (join->pads, gst_object_ref (pad));
  JOIN_UNLOCK (join);
  /* Activated here when the element runs (its writer opens then). */
  if (!gst_element_add_pad (element, pad)) {
    JOIN_LOCK (join);
    g_ptr_array_remove (join->pads, pad);
    JOIN_UNLOCK (join);
    gst_object_unref (pad);
    return NULL;
  }
  GST_DEBUG_OBJECT (join, "requested %s:%s", GST_DEBUG_PAD_NAME (pad));
  return pad;
}

/* A released pad: its writer closes (deactivation); the src side keeps it
 * until it took all its records (gsttbqjoin-src.c), and from then on
 * resolves its branch's numbers as gaps. */
static void
gst_tbq_join_release_pad (GstElement * element, GstPad * pad)
{
  GstTbqJoin *join = GST_TBQ_JOIN (element);
  GstTbqJoinPad *jpad = GST_TBQ_JOIN_PAD (pad);

  GST_DEBUG_OBJECT (join, "releasing %s:%s", GST_DEBUG_PAD_NAME (pad));
  gst_pad_set_active (pad, FALSE);
  /* (The stream lock: the bind query's candidate is the sink side's.) */
  GST_PAD_STREAM_LOCK (pad);
  JOIN_LOCK (join);
  jpad->released = TRUE;
  /* Its worker may have had numbers of its branch still (a queue, an
   * encoder holding its first input): with nothing of them at the pad,
   * only this says whose they were. */
  jpad->released_branch = jpad->mode == JOIN_PAD_UNDECIDED
      && jpad->bound_by_query && join->pair != NULL
      && jpad->cand_pair == join->pair ? (gint) jpad->cand_branch : -1;
  if (join->q == NULL)
    g_ptr_array_remove (join->pads, pad);
  gst_tbq_join_locked_kick (join);
  JOIN_UNLOCK (join);
  GST_PAD_STREAM_UNLOCK (pad);
  gst_element_remove_pad (element, pad);
}

/* ---- the copy task ---- */

static void
copy_task_func (gpointer data)
{
  GstTbqJoin *join = data;
  TbqStatus st = tbq_copier_step (join->q, -1);
  char msg[512];

  switch (st) {
    case TBQ_NO_MEMORY:
      if (tbq_queue_take_error (join->q, msg, sizeof msg) == TBQ_NO_MEMORY)
        GST_ELEMENT_WARNING (join, RESOURCE, NO_SPACE_LEFT,
            ("Cannot grow the join's memory (%s); it goes on with what it "
                "has", msg), (NULL));
      break;
    case TBQ_BUSY:
      /* The src task pulls records itself: a short pass. */
      g_thread_yield ();
      break;
    case TBQ_INTERRUPTED:
      /* close() on its way: no turning round until it stops the task. */
      JOIN_LOCK (join);
      while (!join->copy_stopping && tbq_queue_is_interrupted (join->q))
        JOIN_WAIT (join, copier_cond);
      JOIN_UNLOCK (join);
      break;
    default:
      break;
  }
}

static void
post_copy_status (GstTbqJoin * join, GstTask * task, GstStreamStatusType type)
{
  gst_tbq_post_stream_status (GST_ELEMENT_CAST (join),
      GST_OBJECT_CAST (join), task, type);
}

static void
copy_task_enter (GstTask * task, GThread * thread, gpointer user_data)
{
  post_copy_status (user_data, task, GST_STREAM_STATUS_TYPE_ENTER);
}

static void
copy_task_leave (GstTask * task, GThread * thread, gpointer user_data)
{
  post_copy_status (user_data, task, GST_STREAM_STATUS_TYPE_LEAVE);
}

/* ---- the two-layer queue's life ---- */

static void
open_config (TbqConfig * cfg)
{
  tbq_config_init (cfg);
  /* The source pool stays as libtbq makes it (4 x 4 KiB, all faulted in:
   * a branch never allocates on its way). */
  cfg->sink.block_size = SINK_BLOCK_SIZE;
  cfg->sink.min_blocks = 1;
  cfg->sink.max_blocks = SINK_MAX_BLOCKS;
  cfg->sink.max_idle_blocks = 4;
  /* A branch that finds its source pool full waits for the copy task,
   * a while at a time: its pad may be deactivated meanwhile (a release
   * while the others play), which interrupts no other branch's wait. */
  cfg->backpressure = TBQ_BACKPRESSURE_BLOCK;
  cfg->block_timeout_ns = 20 * GST_MSECOND;
  cfg->publish = TBQ_PUBLISH_EVERY_RECORD;
  /* A waiting src task is woken per record and moves them itself. */
  cfg->wake = TBQ_WAKE_ON_DEMAND;
  cfg->max_coalesce_ns = 0;
  cfg->spin_iterations = 0;
  cfg->max_writers = 1024;
}

/* READY->PAUSED, before the pads are activated. */
static gboolean
gst_tbq_join_open (GstTbqJoin * join)
{
  TbqConfig cfg;
  TbqQueue *q = NULL;
  TbqReader *reader = NULL;
  GstTask *task;
  gchar *name;
  char msg[256];

  open_config (&cfg);
  if (tbq_queue_new (&cfg, &q, msg, sizeof msg) != TBQ_OK)
    goto no_memory;
  if (tbq_reader_new (q, &reader) != TBQ_OK) {
    g_strlcpy (msg, "cannot open the reader", sizeof msg);
    tbq_queue_free (q, NULL, NULL);
    goto no_memory;
  }
  task = gst_task_new (copy_task_func, join, NULL);
  name = g_strdup_printf ("%s:copier", GST_ELEMENT_NAME (join));
  gst_object_set_name (GST_OBJECT_CAST (task), name);
  g_free (name);
  gst_task_set_lock (task, &join->copy_lock);
  gst_task_set_enter_callback (task, copy_task_enter, join, NULL);
  gst_task_set_leave_callback (task, copy_task_leave, join, NULL);

  JOIN_LOCK (join);
  join->q = q;
  join->reader = reader;
  join->copy_task = task;
  join->copy_stopping = FALSE;
  GST_OBJECT_LOCK (join);
  join->active_order = join->order;
  GST_OBJECT_UNLOCK (join);
  join->flushing = FALSE;
  join->have_flush_seqnum = FALSE;
  join->warned_no_pair = FALSE;
  join->warned_late = FALSE;
  JOIN_STORE (join->warned_attrib, FALSE);
  join->epoch = 0;
  join->next = 0;
  join->eos_sent = FALSE;
  JOIN_UNLOCK (join);

  /* An application may give the task a pool of its own now. */
  post_copy_status (join, task, GST_STREAM_STATUS_TYPE_CREATE);
  gst_task_start (task);
  GST_DEBUG_OBJECT (join, "opened");
  return TRUE;

no_memory:
  GST_ELEMENT_ERROR (join, RESOURCE, NO_SPACE_LEFT,
      ("Cannot allocate the join's queue: %s", msg), (NULL));
  return FALSE;
}

/* PAUSED->READY, after the pads are deactivated: no branch writes and
 * the src task is stopped. */
static void
gst_tbq_join_close (GstTbqJoin * join)
{
  GstTbqPair *pair;
  GstTask *task;
  TbqQueue *q;
  guint i;

  JOIN_LOCK (join);
  pair = join->pair;
  JOIN_UNLOCK (join);
  /* Waits for a done hook under way: none runs after this. */
  if (pair != NULL)
    gst_tbq_pair_unbind (pair, join);

  JOIN_LOCK (join);
  task = join->copy_task;
  q = join->q;
  join->copy_stopping = TRUE;
  if (task != NULL)
    gst_task_stop (task);
  if (q != NULL)
    tbq_queue_interrupt (q);
  JOIN_BROADCAST (join, copier_cond);
  JOIN_UNLOCK (join);
  if (task != NULL) {
    gst_task_join (task);
    gst_object_unref (task);
  }

  JOIN_LOCK (join);
  gst_tbq_join_locked_clear_src (join);
  join->copy_task = NULL;
  join->q = NULL;
  join->reader = NULL;
  join->pair = NULL;
  g_ptr_array_set_size (join->by_branch, 0);
  g_hash_table_remove_all (join->released);
  /* Released pads are done with; the others start over. */
  for (i = join->pads->len; i > 0; i--) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i - 1);

    if (pad->released) {
      g_ptr_array_remove_index (join->pads, i - 1);
      continue;
    }
    pad->read = pad->retired = 0;
    pad->pending = 0;
    JOIN_STORE (pad->written, 0);
    g_ptr_array_set_size (pad->sticky, 0);
    pad->mode = JOIN_PAD_UNDECIDED;
    /* The stream's EOS ended with it: READY->PAUSED activates the src
     * pad (its task looks for EOS at once) before the sink pads, whose
     * activation would forget it too late (the old EOS went out first,
     * and the new stream behind it). */
    pad->eos = FALSE;
    pad->new_stream = FALSE;
  }
  JOIN_STORE (join->in_buffers, 0);
  JOIN_STORE (join->in_bytes, 0);
  JOIN_STORE (join->out_buffers, 0);
  JOIN_STORE (join->out_bytes, 0);
  JOIN_UNLOCK (join);

  /* Records still queued hold references: released here (closed
   * writers are freed with the queue). */
  if (q != NULL)
    tbq_queue_free (q, gst_tbq_join_release_record, NULL);
  if (pair != NULL)
    gst_tbq_pair_unref (pair);
  GST_DEBUG_OBJECT (join, "closed");
}

static GstStateChangeReturn
gst_tbq_join_change_state (GstElement * element, GstStateChange transition)
{
  GstTbqJoin *join = GST_TBQ_JOIN (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED
      && !gst_tbq_join_open (join))
    return GST_STATE_CHANGE_FAILURE;

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY
      || (transition == GST_STATE_CHANGE_READY_TO_PAUSED
          && ret == GST_STATE_CHANGE_FAILURE))
    gst_tbq_join_close (join);
  return ret;
}

/* ---- properties and stats ---- */

/* qlock: the time level, the most over the sink pads
 * (gst_tbq_join_pad_time_level()). */
static guint64
locked_level_time (GstTbqJoin * join)
{
  guint64 most = 0;
  guint i;

  for (i = 0; i < join->pads->len; i++) {
    guint64 level =
        gst_tbq_join_pad_time_level (g_ptr_array_index (join->pads, i));

    most = MAX (most, level);
  }
  return most;
}

static guint64
level_of (_Atomic guint64 * in, _Atomic guint64 * out)
{
  /* Relaxed: a level; `out` read first never makes it negative, as
   * nothing is taken out before it is counted in. */
  guint64 o = atomic_load_explicit (out, memory_order_relaxed);
  guint64 i = atomic_load_explicit (in, memory_order_relaxed);

  return i > o ? i - o : 0;
}

static const gchar *
mode_name (JoinPadMode mode)
{
  switch (mode) {
    case JOIN_PAD_SEQUENCE:
      return "sequence";
    case JOIN_PAD_ARRIVAL:
      return "arrival";
    default:
      return "undecided";
  }
}

/* qlock: the stats structure. */
static GstStructure *
locked_stats (GstTbqJoin * join)
{
  GValue pads = G_VALUE_INIT;
  guint64 in = join->released_in;
  guint branches = 0, i;
  GstStructure *s;
  gboolean sequence = join->pair != NULL
      && join->active_order == GST_TBQ_JOIN_ORDER_SEQUENCE;

  gst_value_array_init (&pads, join->pads->len);
  for (i = 0; i < join->pads->len; i++) {
    GstTbqJoinPad *pad = g_ptr_array_index (join->pads, i);
    GValue v = G_VALUE_INIT;
    GstStructure *ps;
    gboolean sync = FALSE;

    in += JOIN_LOAD (pad->buffers_in);
    if (pad->released)
      continue;
    branches++;
    if (pad->mode == JOIN_PAD_SEQUENCE && join->pair != NULL)
      sync = gst_tbq_pair_branch_is_sync (join->pair, pad->branch);
    ps = gst_structure_new ("pad", "name", G_TYPE_STRING,
        GST_PAD_NAME (pad), "buffers-in", G_TYPE_UINT64,
        JOIN_LOAD (pad->buffers_in), "buffers-out", G_TYPE_UINT64,
        pad->buffers_out, "late", G_TYPE_UINT64, pad->late, "mode",
        G_TYPE_STRING, mode_name (pad->mode), "branch", G_TYPE_INT,
        pad->mode == JOIN_PAD_SEQUENCE ? (gint) pad->branch : -1,
        "synchronous", G_TYPE_BOOLEAN, sync, NULL);
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, ps);
    gst_value_array_append_and_take_value (&pads, &v);
  }
  s = gst_structure_new ("tbqjoin-stats",
      "buffers-in", G_TYPE_UINT64, in,
      "buffers-out", G_TYPE_UINT64, JOIN_LOAD (join->pushed_buffers),
      "events-out", G_TYPE_UINT64, JOIN_LOAD (join->events_out),
      "gaps", G_TYPE_UINT64, JOIN_LOAD (join->gaps),
      "late", G_TYPE_UINT64, JOIN_LOAD (join->late),
      "discarded", G_TYPE_UINT64, JOIN_LOAD (join->discarded),
      "branches", G_TYPE_UINT, branches,
      "reorder-depth", G_TYPE_UINT, join->held,
      "reorder-depth-peak", G_TYPE_UINT64, JOIN_LOAD (join->held_peak),
      "queries-held", G_TYPE_UINT, join->queries_held,
      "in-flight", G_TYPE_UINT,
      join->pair != NULL ? gst_tbq_pair_in_flight (join->pair) : 0,
      "order", G_TYPE_STRING, sequence ? "sequence" : "arrival", NULL);
  gst_structure_take_value (s, "pads", &pads);
  return s;
}

static void
gst_tbq_join_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTbqJoin *join = GST_TBQ_JOIN (object);

  switch (prop_id) {
    case PROP_ORDER:
      GST_OBJECT_LOCK (join);
      join->order = g_value_get_enum (value);
      GST_OBJECT_UNLOCK (join);
      return;
    case PROP_MAX_SIZE_BUFFERS:
    case PROP_MAX_SIZE_BYTES:
    case PROP_MAX_SIZE_TIME:
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
  }
  /* A limit: under qlock, and a branch waiting at the old one looks
   * again. */
  JOIN_LOCK (join);
  if (prop_id == PROP_MAX_SIZE_BUFFERS)
    JOIN_STORE (join->max_buffers, g_value_get_uint (value));
  else if (prop_id == PROP_MAX_SIZE_BYTES)
    JOIN_STORE (join->max_bytes, g_value_get_uint (value));
  else
    JOIN_STORE (join->max_time, g_value_get_uint64 (value));
  gst_tbq_join_locked_wake_room_all (join);
  JOIN_UNLOCK (join);
}

static void
gst_tbq_join_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstTbqJoin *join = GST_TBQ_JOIN (object);

  switch (prop_id) {
    case PROP_ORDER:
      GST_OBJECT_LOCK (join);
      g_value_set_enum (value, join->order);
      GST_OBJECT_UNLOCK (join);
      break;
    case PROP_MAX_SIZE_BUFFERS:
      g_value_set_uint (value, JOIN_LOAD (join->max_buffers));
      break;
    case PROP_MAX_SIZE_BYTES:
      g_value_set_uint (value, JOIN_LOAD (join->max_bytes));
      break;
    case PROP_MAX_SIZE_TIME:
      g_value_set_uint64 (value, JOIN_LOAD (join->max_time));
      break;
    case PROP_CURRENT_LEVEL_BUFFERS:
      g_value_set_uint (value, (guint) MIN (G_MAXUINT,
              level_of (&join->in_buffers, &join->out_buffers)));
      break;
    case PROP_CURRENT_LEVEL_BYTES:
      g_value_set_uint (value, (guint) MIN (G_MAXUINT,
              level_of (&join->in_bytes, &join->out_bytes)));
      break;
    case PROP_CURRENT_LEVEL_TIME:
      JOIN_LOCK (join);
      g_value_set_uint64 (value, locked_level_time (join));
      JOIN_UNLOCK (join);
      break;
    case PROP_STATS:
      JOIN_LOCK (join);
      g_value_take_boxed (value, locked_stats (join));
      JOIN_UNLOCK (join);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* tbqueue copy groups: every tbqueue of a process that names the same
 * copy-group ("" and "default" both name the default group, whose task
 * is "default:copier") has its copy work done by one
 * GstTask, "NAME:copier", stepping one libtbq copy group (lib/group.c),
 * and shares that group's reserve of idle sink blocks and its cap.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A group is made by its first member's open() and ends with its last
 * member's close(), under `groups_lock`, which guards the table of groups
 * and every group's member list; the task is started and stopped outside
 * it (its thread posts messages, whose handlers may open other
 * tbqueues).  The group's reserve and cap are those of its first member
 * (its sink-block-size, sink-min-bytes and group-max-bytes); a later
 * member asking for another cap is warned, and so is a member that makes
 * the cap smaller than the members need (two sink blocks each, which the
 * group holds them to instead, lib/share.h).  The element's side of the
 * task's life:
 *
 *  - STREAM_STATUS CREATE, from the member that made the group, before
 *    the task starts (an application may give it a thread pool then);
 *  - ENTER and LEAVE, for every member, from the task's thread: ENTER
 *    when it first serves the member (after the src pad's activation
 *    resumed the queue), LEAVE as the member leaves in close();
 *  - the copy task's placement properties apply to the task's thread as
 *    the member enters and as they change; two members asking for
 *    different placements are warned about (gst_tbqueue_group_check_placement()).
 */
#include "gsttbqueue-group.h"
#include "gsttbqueue-copytask.h"
#include "gsttbqueue-dequeue.h"
#include "gsttbqueue-placement.h"

struct _GstTbQueueGroup
{
  gchar *name;                  /* "" for the default group */
  TbqGroup *g;
  GstTask *task;
  GRecMutex task_lock;
  guint64 max_bytes;            /* its cap (its first member's) */
  gsize reserve_block_size;     /* of its reserve's blocks (0: none) */
  GList *members;               /* GstTbQueue *, under groups_lock */
  guint joining;                /* members on their way in (groups_lock) */
};

/* What the group's thread hears of a member with (lib/group.c): fixed
 * while it is a member. */
typedef struct
{
  GstTbQueue *tbq;
  GstTbQueueGroup *group;
} Member;

static GMutex groups_lock;
static GHashTable *groups;      /* name -> GstTbQueueGroup * */

static const gchar *
group_label (const GstTbQueueGroup * group)
{
  return group->name[0] != '\0' ? group->name : "default";
}

/* The table's key for copy-group `name`: "" for the default group, which
 * "default" names too (its task is "default:copier": one name, one
 * group). */
static gchar *
group_key (const gchar * name)
{
  if (name == NULL || strcmp (name, "default") == 0)
    return g_strdup ("");
  return g_strdup (name);
}

/* A member made the group's cap smaller than its members need to make
 * progress: say what the group holds them to instead. */
static void
group_check_cap (GstTbQueue * tbq, GstTbQueueGroup * group)
{
  TbqGroupStats gs;

  if (group->max_bytes == 0)
    return;
  tbq_group_get_stats (group->g, &gs);
  if (gs.bytes_floors <= group->max_bytes)
    return;
  GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS,
      ("Copy group \"%s\": group-max-bytes %" G_GUINT64_FORMAT " is less "
          "than its %u members need to make progress (two sink blocks each, "
          "%" G_GUINT64_FORMAT " bytes): they hold up to that together",
          group_label (group), group->max_bytes, gs.members,
          gs.bytes_floors), (NULL));
}

static void
group_task_func (gpointer data)
{
  GstTbQueueGroup *group = data;

  /* TBQ_INTERRUPTED: the task is stopping (gst_tbqueue_group_leave()). */
  tbq_group_step (group->g, -1);
}

/* From the task's thread (lib/group.c). */
static void
member_event (TbqQueue * q, TbqGroupEvent ev, void *data)
{
  GstTbQueue *tbq = ((Member *) data)->tbq;
  GstTbQueueGroup *group = ((Member *) data)->group;

  switch (ev) {
    case TBQ_GROUP_ENTER:
      gst_tbqueue_placement_enter (tbq, GST_TBQUEUE_COPY_TASK);
      gst_tbqueue_group_check_placement (tbq);
      gst_tbqueue_post_stream_status (tbq, GST_OBJECT_CAST (tbq),
          group->task, GST_STREAM_STATUS_TYPE_ENTER);
      break;
    case TBQ_GROUP_LEAVE:
      gst_tbqueue_placement_leave (tbq, GST_TBQUEUE_COPY_TASK);
      gst_tbqueue_post_stream_status (tbq, GST_OBJECT_CAST (tbq),
          group->task, GST_STREAM_STATUS_TYPE_LEAVE);
      break;
    case TBQ_GROUP_NO_MEMORY:
      /* The sink pool could not grow: say so, once per failure; it holds
       * what it has, and the group passes it over until it can take
       * again.  Whoever waits for the copier looks at it again. */
      gst_tbqueue_post_no_memory (tbq, FALSE);
      /* Outside qlock, as the element may be closing: NULL then (the
       * reader itself lives until the member has left the group, which
       * waits for this round); a relaxed atomic load, as its stores. */
      tbq_reader_wake (__atomic_load_n (&tbq->reader, __ATOMIC_RELAXED));
      break;
  }
  (void) q;
}

/* A new group named `name` for `tbq`'s geometry `cfg` (groups_lock). */
static GstTbQueueGroup *
locked_group_new (const gchar * name, const TbqConfig * cfg,
    guint64 max_bytes, gchar * msg, gsize msg_size)
{
  GstTbQueueGroup *group = g_new0 (GstTbQueueGroup, 1);
  TbqGroupConfig gc;
  gchar *task_name;

  tbq_group_config_init (&gc);
  gc.max_bytes = max_bytes;
  gc.reserve_block_size = (uint32_t) cfg->sink.block_size;
  gc.reserve_min_blocks = cfg->sink.min_blocks;
  /* Idle blocks kept for the members: what the first one pre-faults,
   * and its idle-blocks, at least. */
  gc.reserve_max_blocks = MAX (cfg->sink.min_blocks,
      cfg->sink.max_idle_blocks);
  if (max_bytes != 0 && (guint64) gc.reserve_min_blocks * cfg->sink.block_size
      > max_bytes)
    gc.reserve_min_blocks = gc.reserve_max_blocks = 0;
  if (tbq_group_new (&gc, &group->g, msg, msg_size) != TBQ_OK) {
    g_free (group);
    return NULL;
  }
  group->name = g_strdup (name);
  group->max_bytes = max_bytes;
  group->reserve_block_size = gc.reserve_min_blocks > 0
      ? gc.reserve_block_size : 0;
  g_rec_mutex_init (&group->task_lock);
  group->task = gst_task_new (group_task_func, group, NULL);
  /* The thread's name says which group it serves (GstTask names its
   * thread after the task). */
  task_name = g_strdup_printf ("%s:copier", group_label (group));
  gst_object_set_name (GST_OBJECT_CAST (group->task), task_name);
  g_free (task_name);
  gst_task_set_lock (group->task, &group->task_lock);
  if (groups == NULL)
    groups = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (groups, group->name, group);
  return group;
}

/* Out of the table: stop its task (if `started`) and free it. */
static void
group_free (GstTbQueueGroup * group, gboolean started)
{
  if (started) {
    gst_task_stop (group->task);
    /* Out of the step's wait, if it sleeps. */
    tbq_group_interrupt (group->g);
    gst_task_join (group->task);
  }
  gst_object_unref (group->task);
  g_rec_mutex_clear (&group->task_lock);
  tbq_group_free (group->g);
  g_free (group->name);
  g_free (group);
}

/* The group lets go of a member (or of one that did not get in):
 * TRUE when it was the last, and the group is out of the table. */
static gboolean
group_release (GstTbQueueGroup * group, GstTbQueue * tbq, gboolean joined)
{
  gboolean last;

  g_mutex_lock (&groups_lock);
  if (joined) {
    group->members = g_list_remove (group->members, tbq);
    tbq->group = NULL;
  } else {
    group->joining--;
  }
  last = group->members == NULL && group->joining == 0;
  if (last)
    g_hash_table_remove (groups, group->name);
  g_mutex_unlock (&groups_lock);
  return last;
}

GstTbQueueGroup *
gst_tbqueue_group_join (GstTbQueue * tbq, TbqConfig * cfg, TbqQueue ** q,
    TbqStatus * st, gchar * msg, gsize msg_size)
{
  GstTbQueueGroup *group;
  Member *member;
  gchar *name;
  guint64 max_bytes;
  gboolean made = FALSE, other_cap = FALSE;

  GST_OBJECT_LOCK (tbq);
  name = group_key (tbq->copy_group);
  max_bytes = tbq->group_max_bytes;
  GST_OBJECT_UNLOCK (tbq);
  g_mutex_lock (&groups_lock);
  group = groups != NULL ? g_hash_table_lookup (groups, name) : NULL;
  if (group == NULL) {
    group = locked_group_new (name, cfg, max_bytes, msg, msg_size);
    made = TRUE;
  } else {
    other_cap = group->max_bytes != max_bytes;
  }
  if (group != NULL)
    group->joining++;
  g_mutex_unlock (&groups_lock);
  g_free (name);
  if (group == NULL) {
    *st = TBQ_NO_MEMORY;
    return NULL;
  }
  /* The sink memory it would pre-fault is the group's reserve (when it
   * keeps blocks of this size): the member pre-faults none of its own and
   * takes its blocks from there while it has some. */
  if (cfg->sink.block_size == group->reserve_block_size)
    cfg->sink.min_blocks = 0;
  /* Without groups_lock: the group's thread may be in a member's ENTER,
   * which takes it (gst_tbqueue_group_check_placement()). */
  member = g_new (Member, 1);
  member->tbq = tbq;
  member->group = group;
  *st = tbq_queue_new_in_group (cfg, group->g, member_event, member, q, msg,
      msg_size);
  if (*st != TBQ_OK) {
    g_free (member);
    /* Started by its maker only: if another joined meanwhile, this maker
     * starts it for them. */
    if (group_release (group, tbq, FALSE))
      group_free (group, !made);
    else if (made)
      gst_task_start (group->task);
    return NULL;
  }
  g_mutex_lock (&groups_lock);
  group->joining--;
  group->members = g_list_prepend (group->members, tbq);
  tbq->group = group;
  tbq->group_member = member;
  g_mutex_unlock (&groups_lock);
  if (made) {
    gst_tbqueue_post_stream_status (tbq, GST_OBJECT_CAST (tbq), group->task,
        GST_STREAM_STATUS_TYPE_CREATE);
    gst_task_start (group->task);
  }
  group_check_cap (tbq, group);
  if (other_cap)
    GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS,
        ("Copy group \"%s\" keeps the cap of its first member "
            "(group-max-bytes %" G_GUINT64_FORMAT "), not this one's (%"
            G_GUINT64_FORMAT ")", group_label (group), group->max_bytes,
            max_bytes), (NULL));
  GST_DEBUG_OBJECT (tbq, "in copy group \"%s\"%s", group_label (group),
      made ? " (made it)" : "");
  return group;
}

void
gst_tbqueue_group_leave (GstTbQueue * tbq, GstTbQueueGroup * group,
    TbqQueue * q)
{
  /* Out of the group (its thread says LEAVE), then free. */
  tbq_queue_free (q, gst_tbqueue_release_record, NULL);
  g_free (tbq->group_member);
  tbq->group_member = NULL;
  if (group_release (group, tbq, TRUE))
    group_free (group, TRUE);
}
void
gst_tbqueue_group_check_placement (GstTbQueue * tbq)
{
  GstTbQueueGroup *group;
  gchar *mine, *other = NULL, *other_name = NULL, *label = NULL;
  GList *l;

  mine = gst_tbqueue_placement_describe (tbq, GST_TBQUEUE_COPY_TASK);
  if (mine == NULL)
    return;
  g_mutex_lock (&groups_lock);
  group = tbq->group;
  if (group != NULL)
    label = g_strdup (group_label (group));
  for (l = group != NULL ? group->members : NULL; l != NULL && other == NULL; l = l->next) {
    GstTbQueue *m = l->data;
    gchar *theirs;

    if (m == tbq)
      continue;
    theirs = gst_tbqueue_placement_describe (m, GST_TBQUEUE_COPY_TASK);
    if (theirs != NULL && strcmp (theirs, mine) != 0) {
      other = theirs;
      other_name = gst_object_get_name (GST_OBJECT_CAST (m));
    } else {
      g_free (theirs);
    }
  }
  g_mutex_unlock (&groups_lock);
  if (other != NULL)
    GST_ELEMENT_WARNING (tbq, RESOURCE, SETTINGS,
        ("Copy group \"%s\" has one thread for its members, and they ask "
            "for different placements: this one %s, %s %s; the thread "
            "follows the last one applied (give them separate copy-group "
            "names to place them apart)", label, mine, other_name, other),
        (NULL));
  g_free (label);
  g_free (mine);
  g_free (other);
  g_free (other_name);
}

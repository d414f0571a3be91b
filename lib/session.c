/* Write sessions: many records into the writer's current block without
 * touching anything shared per record, published once.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The per-record half is inline in tbq.h (tbq_session_reserve(),
 * tbq_session_write()); here are the calls that leave the current block:
 * opening and closing a session, moving to a fresh block, and records
 * above the inline limit, which take an extent (extent.h) and leave an
 * indirect record in the block.  A session is the writer's (writer.h):
 * nothing else uses the writer while it is open.
 */
#include "writer.h"

void
tbq_session_begin_impl (TbqWriter * w, TbqSession * s)
{
  if (s == NULL)
    return;
  memset (s, 0, sizeof *s);
  /* No writer: pos == end, so every reservation fails and
   * tbq_session_next_block() says TBQ_INVALID_ARGUMENT. */
  if (w == NULL)
    return;
  /* A session ends an open reservation. */
  w->reserved = NULL;
  tbq_writer_drop_large (w);
  s->pos = w->wpos;
  s->end = w->wend;
  s->writer = w;
  s->inline_max = w->inline_max;
}

static void
session_account (TbqSession * s)
{
  TbqWriter *w = s->writer;

  /* The session tallied records and payload bytes as it went: no walk
   * over the block's headers here. */
  w->wpos = s->pos;
  tbq_count (&w->records_in, s->records);
  tbq_count (&w->bytes_in, s->bytes);
  s->records = 0;
  s->bytes = 0;
}

void
tbq_session_end_impl (TbqSession * s)
{
  TbqWriter *w = s != NULL ? s->writer : NULL;

  if (w == NULL)
    return;
  session_account (s);
  tbq_writer_drop_large (w);
  tbq_writer_publish (w);
  tbq_writer_woke (w, tbq_wake_published (w->wake, w->wake_policy));
}

/* Take a session record of `span` block bytes at s->pos. */
static inline unsigned char *
session_take (TbqSession * s, size_t span, uint32_t size)
{
  unsigned char *p = s->pos;

  s->pos = p + span;
  s->records++;
  s->bytes += size;
  return p;
}

void *
tbq_session_reserve_large_impl (TbqSession * s, uint16_t type, uint32_t size)
{
  TbqWriter *w = s != NULL ? s->writer : NULL;
  size_t span = tbq_writer_span (size);
  size_t room;
  TbqBlock *e;
  TbqStatus st;

  if (w == NULL)
    return NULL;
  room = (size_t) (s->end - s->pos);
  s->wanted = span;
  w->large_size = size;
  if (tbq_writer_is_inline (w, span, size)) {
    unsigned char *p;

    if (span > room)
      return NULL;
    p = session_take (s, span, size);
    tbq_writer_put_header (p, type, size);
    return p + TBQ_RECORD_HEADER_SIZE;
  }
  /* The extent tbq_session_next_block() took for this retry. */
  e = w->session_extent;
  w->session_extent = NULL;
  if (e != NULL && !tbq_extent_suits (w->extents, e, size)) {
    tbq_extent_unref (e);
    e = NULL;
  }
  st = TBQ_NO_SPACE;
  if (e == NULL && room >= TBQ_INDIRECT_SPAN)
    st = tbq_extent_take (w->extents, size, &e);
  if (e == NULL || room < TBQ_INDIRECT_SPAN) {
    /* No room for the indirect record, or none in the budget: the next
     * block call makes both. */
    if (e != NULL)
      w->session_extent = e;
    w->large_refusal = st;
    return NULL;
  }
  tbq_record_put_indirect (session_take (s, TBQ_INDIRECT_SPAN, size), type,
      size, e);
  return e->data;
}

/* tbq_session_next_block() after a large record (w->large_size bytes, span
 * `wanted`) was refused: TBQ_NO_SPACE when a hand-off makes room for it
 * (it travels inline); else room for its indirect record and its extent,
 * kept for the retry, so that the retry succeeds (TBQ_OK), or what kept
 * them from it. */
static TbqStatus
session_large_refused (TbqWriter * w, size_t wanted)
{
  TbqStatus st = w->large_refusal;

  w->large_refusal = TBQ_NO_SPACE;
  if (!tbq_extents_can_hold (w->extents, w->large_size))
    return wanted > w->cur->capacity ? TBQ_TOO_LARGE : TBQ_NO_SPACE;
  /* Reported once; the budget then holds still (extent.h). */
  if (st == TBQ_NO_MEMORY)
    return st;
  st = tbq_writer_make_room (w, TBQ_INDIRECT_SPAN);
  if (st == TBQ_OK && w->session_extent == NULL)
    st = tbq_writer_wait_for_extent (w, w->large_size, &w->session_extent);
  return st;
}

TbqStatus
tbq_session_next_block_impl (TbqSession * s)
{
  TbqWriter *w = s != NULL ? s->writer : NULL;
  size_t wanted;
  TbqStatus st;

  if (w == NULL)
    return TBQ_INVALID_ARGUMENT;
  wanted = s->wanted;
  session_account (s);
  s->wanted = 0;
  /* A large record refused for its extent needs room in the budget (or
   * is too large), not a fresh block. */
  if (TBQ_UNLIKELY (wanted > w->inline_max))
    st = session_large_refused (w, wanted);
  else
    st = TBQ_NO_SPACE;
  if (st == TBQ_NO_SPACE)
    st = tbq_writer_handoff (w);
  s->pos = w->wpos;
  s->end = w->wend;
  return st;
}

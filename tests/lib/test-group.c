/* Copy groups: many queues, one set of copy threads, one reserve and cap.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "lib-test.h"

#include <sched.h>
#include <stdlib.h>

#define MAX_QUEUES 8

/* Record `seq` of queue `id`: random sizes, some far above the inline
 * maximum (they travel as extents).  The first 8 bytes are the number. */
static uint32_t
size_of (uint32_t id, uint64_t seq)
{
  uint64_t r = mix64 (seq * MAX_QUEUES + id);

  if (r % 97 == 0)
    return 8 + (uint32_t) (r % 20000);  /* large: an extent */
  return 8 + (uint32_t) (r % 300);
}

static void
fill_rec (unsigned char *buf, uint32_t id, uint64_t seq)
{
  memcpy (buf, &seq, 8);
  fill_payload (buf + 8, size_of (id, seq) - 8, seq * MAX_QUEUES + id);
}

static void
check_rec (const TbqRecord * rec, uint32_t id, uint64_t want)
{
  uint64_t seq;

  CHECK_EQ (rec->type, id);
  CHECK (rec->size >= 8);
  memcpy (&seq, rec->data, 8);
  if (seq != want) {
    printf ("# queue %u: expected record %" PRIu64 ", got %" PRIu64 "\n",
        id, want, seq);
    CHECK (0);
  }
  CHECK_EQ (rec->size, size_of (id, seq));
  CHECK (payload_mismatch ((const unsigned char *) rec->data + 8,
          rec->size - 8, seq * MAX_QUEUES + id) < 0);
}

static void
member_config (TbqConfig * cfg)
{
  tbq_config_init (cfg);
  cfg->source.block_size = 1024;
  cfg->source.min_blocks = 2;
  cfg->source.max_blocks = 3;
  cfg->source.max_idle_blocks = 3;
  cfg->sink.block_size = 4096;
  cfg->sink.min_blocks = 1;
  cfg->sink.max_blocks = 24;    /* 96 KiB: a stalled reader fills it */
  cfg->sink.max_idle_blocks = 2;
  cfg->block_timeout_ns = -1;
}

static TbqGroup *
group_new_or_fail (const TbqGroupConfig * gc)
{
  TbqGroup *g = NULL;
  char msg[256] = "";
  TbqStatus st = tbq_group_new (gc, &g, msg, sizeof msg);

  if (st != TBQ_OK) {
    printf ("# tbq_group_new: %s: %s\n", tbq_status_to_string (st), msg);
    _exit (1);
  }
  return g;
}

static TbqQueue *
member_new_or_fail (const TbqConfig * cfg, TbqGroup * g, TbqGroupFunc fn,
    void *data)
{
  TbqQueue *q = NULL;
  char msg[256] = "";
  TbqStatus st = tbq_queue_new_in_group (cfg, g, fn, data, &q, msg,
      sizeof msg);

  if (st != TBQ_OK) {
    printf ("# tbq_queue_new_in_group: %s: %s\n", tbq_status_to_string (st),
        msg);
    _exit (1);
  }
  return q;
}

typedef struct
{
  TbqQueue *q;
  uint32_t id;
  uint64_t n;
  TbqStatus st;
  _Atomic uint64_t written;
  _Atomic int reading;          /* the reader may read (0: stalled) */
  uint64_t got;
  pthread_t wth, rth;
} Stream;

static void *
writer_main (void *arg)
{
  Stream *s = arg;
  TbqWriter *w;
  unsigned char *buf = malloc (20000 + 8);
  uint64_t seq;

  s->st = tbq_writer_new (s->q, &w);
  for (seq = 0; seq < s->n && s->st == TBQ_OK; seq++) {
    fill_rec (buf, s->id, seq);
    s->st = tbq_writer_write (w, (uint16_t) s->id, buf, size_of (s->id, seq));
    atomic_store (&s->written, seq + 1);
  }
  tbq_writer_flush (w);
  tbq_writer_close (w);
  free (buf);
  return NULL;
}

static void *
reader_main (void *arg)
{
  Stream *s = arg;
  TbqReader *r;

  CHECK_OK (tbq_reader_new (s->q, &r));
  while (s->got < s->n) {
    TbqRecord rec;

    if (!atomic_load (&s->reading)) {
      sleep_ns (MS_NS);
      continue;
    }
    CHECK_OK (read_record (r, &rec, 4 * EVENTUALLY_NS));
    check_rec (&rec, s->id, s->got);
    s->got++;
  }
  tbq_reader_free (r);
  return NULL;
}

/* N queues on one copier (one or two threads), random record sizes; the
 * reader of queue 0 stalls.  Every other queue delivers every byte in
 * order, the stalled one holds no more than its own sink limit, and once
 * its reader goes on it delivers everything too. */
static void
queues_share_a_copier_and_a_stalled_reader_stops_no_other (uint32_t threads)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  Stream s[6];
  TbqStats st;
  TbqGroupStats gs;
  uint32_t i, n = 6;

  tbq_group_config_init (&gc);
  gc.threads = threads;
  g = group_new_or_fail (&gc);
  member_config (&cfg);
  for (i = 0; i < n; i++) {
    s[i].q = member_new_or_fail (&cfg, g, NULL, NULL);
    s[i].id = i;
    s[i].n = scaled (20000) + i * 13;
    s[i].st = TBQ_OK;
    s[i].got = 0;
    atomic_init (&s[i].written, 0);
    atomic_init (&s[i].reading, i != 0);
    tbq_queue_resume (s[i].q);
  }
  CHECK_OK (tbq_group_start (g));
  for (i = 0; i < n; i++) {
    CHECK (pthread_create (&s[i].wth, NULL, writer_main, &s[i]) == 0);
    CHECK (pthread_create (&s[i].rth, NULL, reader_main, &s[i]) == 0);
  }
  for (i = 1; i < n; i++) {
    pthread_join (s[i].wth, NULL);
    pthread_join (s[i].rth, NULL);
    CHECK_OK (s[i].st);
    CHECK_EQ (s[i].got, s[i].n);
  }
  /* Queue 0's writer is held back by its full pools, not by the others:
   * its sink layer holds at most its own limit. */
  CHECK (atomic_load (&s[0].written) < s[0].n);
  tbq_queue_get_stats (s[0].q, &st);
  CHECK (st.extents.budget_used <= cfg.sink.max_blocks * cfg.sink.block_size);
  CHECK (st.sink.blocks_total <= cfg.sink.max_blocks);
  atomic_store (&s[0].reading, 1);
  pthread_join (s[0].wth, NULL);
  pthread_join (s[0].rth, NULL);
  CHECK_OK (s[0].st);
  CHECK_EQ (s[0].got, s[0].n);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.members, n);
  CHECK (gs.rounds > 0);
  CHECK_STATUS (tbq_group_free (g), TBQ_BUSY);
  for (i = 0; i < n; i++)
    tbq_queue_free (s[i].q, NULL, NULL);
  CHECK_OK (tbq_group_free (g));
}

static void
one_copy_thread_serves_every_queue (void)
{
  queues_share_a_copier_and_a_stalled_reader_stops_no_other (1);
}

static void
two_copy_threads_serve_every_queue (void)
{
  queues_share_a_copier_and_a_stalled_reader_stops_no_other (2);
}

/* Crew (lib-test.h): a record of queue *(uint32_t *) data. */
static uint64_t
member_record_number (const TbqRecord * rec, void *data)
{
  uint32_t id = *(uint32_t *) data;
  uint64_t seq;

  CHECK (rec->size >= 8);
  memcpy (&seq, rec->data, 8);
  check_rec (rec, id, seq);
  return seq;
}

/* A member with three readers, next to a member with one, on one copy
 * thread under a cap: every record of each comes once, each reader's in
 * order. */
static void
a_member_with_several_readers (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  Stream s[2];
  TbqReader *r[3];
  Crew crew;
  uint32_t i;
  int k;

  tbq_group_config_init (&gc);
  gc.max_bytes = 512 * 1024;
  g = group_new_or_fail (&gc);
  member_config (&cfg);
  for (i = 0; i < 2; i++) {
    cfg.max_readers = i == 0 ? 3 : 1;
    s[i].q = member_new_or_fail (&cfg, g, NULL, NULL);
    s[i].id = i;
    s[i].n = scaled (30000);
    s[i].st = TBQ_OK;
    s[i].got = 0;
    atomic_init (&s[i].written, 0);
    atomic_init (&s[i].reading, 1);
    tbq_queue_resume (s[i].q);
  }
  for (k = 0; k < 3; k++)
    CHECK_OK (tbq_reader_new (s[0].q, &r[k]));
  CHECK_OK (tbq_group_start (g));
  crew_start (&crew, r, 3, s[0].n, member_record_number, &s[0].id);
  for (i = 0; i < 2; i++)
    CHECK (pthread_create (&s[i].wth, NULL, writer_main, &s[i]) == 0);
  CHECK (pthread_create (&s[1].rth, NULL, reader_main, &s[1]) == 0);
  crew_join (&crew);
  for (i = 0; i < 2; i++) {
    pthread_join (s[i].wth, NULL);
    CHECK_OK (s[i].st);
  }
  pthread_join (s[1].rth, NULL);
  CHECK_EQ (s[1].got, s[1].n);
  CHECK_EQ (stats_of (s[0].q).records_out, s[0].n);
  for (i = 0; i < 2; i++)
    tbq_queue_free (s[i].q, NULL, NULL);
  CHECK_OK (tbq_group_free (g));
}

typedef struct
{
  _Atomic int enters;
  _Atomic int leaves;
} Hooks;

static void
count_enter (TbqQueue * q, TbqGroupEvent ev, void *data)
{
  Hooks *h = data;

  (void) q;
  if (ev == TBQ_GROUP_ENTER)
    atomic_fetch_add (&h->enters, 1);
  else if (ev == TBQ_GROUP_LEAVE)
    atomic_fetch_add (&h->leaves, 1);
}

static void
write_n (TbqWriter * w, uint32_t id, uint64_t from, uint64_t n)
{
  unsigned char buf[400];
  uint64_t seq;

  for (seq = from; seq < from + n; seq++) {
    uint32_t size = 8 + (uint32_t) (mix64 (seq) % 300);

    memcpy (buf, &seq, 8);
    fill_payload (buf + 8, size - 8, seq * MAX_QUEUES + id);
    CHECK_OK (tbq_writer_write (w, (uint16_t) id, buf, size));
  }
}

/* A host steps the group: one round moves what every member published
 * (a queue with much to move does not starve one with little), members
 * start interrupted and hear ENTER once, and what the group runs refuses
 * the queue's own copier. */
static void
a_host_round_serves_every_member_in_turn (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  TbqQueue *q[2];
  TbqWriter *w[2];
  TbqReader *r[2];
  Hooks h = { 0 };
  TbqRecord rec;
  uint32_t i;

  tbq_group_config_init (&gc);
  g = group_new_or_fail (&gc);
  member_config (&cfg);
  for (i = 0; i < 2; i++) {
    q[i] = member_new_or_fail (&cfg, g, count_enter, &h);
    CHECK (tbq_queue_is_interrupted (q[i]));
    CHECK_OK (tbq_writer_new (q[i], &w[i]));
    CHECK_OK (tbq_reader_new (q[i], &r[i]));
  }
  CHECK_STATUS (tbq_copier_step (q[0], 0), TBQ_BUSY);
  CHECK_STATUS (tbq_queue_start (q[0]), TBQ_BUSY);
  /* Interrupted members are not served, and hear nothing. */
  CHECK_STATUS (tbq_group_step (g, 0), TBQ_TIMEOUT);
  CHECK_EQ (atomic_load (&h.enters), 0);
  tbq_queue_resume (q[0]);
  tbq_queue_resume (q[1]);
  /* Queue 0 publishes a sealed block and more; queue 1 one record. */
  write_n (w[0], 0, 0, 6);
  write_n (w[1], 1, 0, 1);
  tbq_writer_flush (w[0]);
  tbq_writer_flush (w[1]);
  CHECK_OK (tbq_group_step (g, 0));
  CHECK_EQ (atomic_load (&h.enters), 2);
  /* One round moved both, without any reader pulling. */
  CHECK_EQ (stats_of (q[0]).bytes_copied > 0, 1);
  CHECK_EQ (stats_of (q[1]).bytes_copied > 0, 1);
  CHECK_OK (tbq_reader_next (r[1], &rec));
  CHECK_EQ (rec.type, 1);
  CHECK_STATUS (tbq_group_step (g, 0), TBQ_TIMEOUT);
  CHECK_EQ (atomic_load (&h.enters), 2);
  /* Interrupted, a host's step returns. */
  tbq_group_interrupt (g);
  CHECK_STATUS (tbq_group_step (g, -1), TBQ_INTERRUPTED);
  tbq_group_resume (g);
  CHECK_STATUS (tbq_group_step (g, 0), TBQ_TIMEOUT);
  /* No longer stepped: LEAVE comes from the freeing thread, once. */
  tbq_group_interrupt (g);
  for (i = 0; i < 2; i++)
    tbq_queue_free (q[i], NULL, NULL);
  CHECK_EQ (atomic_load (&h.leaves), 2);
  CHECK_OK (tbq_group_free (g));
  CHECK_OK (tbq_group_new (&gc, &g, NULL, 0));
  CHECK_OK (tbq_group_start (g));
  CHECK_STATUS (tbq_group_step (g, 0), TBQ_BUSY);
  CHECK_OK (tbq_group_free (g));
}

/* The cap: two members whose own limits are larger; with both readers
 * stalled they hold no more than the cap together and each no more than
 * its share (half the cap); what one reader frees, its own copier can
 * use, never the other's beyond its share. */
static void
the_cap_holds_all_members_together (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  TbqQueue *q[2];
  TbqWriter *w[2];
  TbqReader *r[2];
  TbqGroupStats gs;
  TbqRecord rec;
  uint64_t n[2] = { 0, 0 }, cap = 16 * 4096;
  unsigned char buf[300];
  uint32_t i;
  bool more = true;

  tbq_group_config_init (&gc);
  gc.max_bytes = cap;
  g = group_new_or_fail (&gc);
  member_config (&cfg);
  cfg.backpressure = TBQ_BACKPRESSURE_DROP;
  for (i = 0; i < 2; i++) {
    q[i] = member_new_or_fail (&cfg, g, NULL, NULL);
    tbq_queue_resume (q[i]);
    CHECK_OK (tbq_writer_new (q[i], &w[i]));
    CHECK_OK (tbq_reader_new (q[i], &r[i]));
  }
  memset (buf, 7, sizeof buf);
  /* Write into both until neither takes more, stepping the group as a
   * host: no timing involved. */
  while (more) {
    more = false;
    for (i = 0; i < 2; i++) {
      if (tbq_writer_write (w[i], (uint16_t) i, buf, sizeof buf) == TBQ_OK) {
        n[i]++;
        more = true;
      }
      tbq_writer_flush (w[i]);
    }
    while (tbq_group_step (g, 0) == TBQ_OK) {
    }
  }
  tbq_group_get_stats (g, &gs);
  CHECK (gs.bytes_used <= cap);
  CHECK (gs.bytes_peak <= cap);
  CHECK (gs.bytes_used >= cap / 2);
  /* Both got a share: neither is starved, neither holds more. */
  CHECK (n[0] > 0 && n[1] > 0);
  for (i = 0; i < 2; i++)
    CHECK (stats_of (q[i]).sink.blocks_in_use * 4096 <= cap / 2);
  /* Queue 0's reader reads all it has: queue 0 may go on, queue 1 still
   * holds its share and no more. */
  CHECK_STATUS (tbq_writer_write (w[1], 1, buf, sizeof buf), TBQ_DROPPED);
  while (tbq_reader_next (r[0], &rec) == TBQ_OK) {
  }
  while (tbq_group_step (g, 0) == TBQ_OK) {
  }
  CHECK_OK (tbq_writer_write (w[0], 0, buf, sizeof buf));
  while (tbq_group_step (g, 0) == TBQ_OK) {
  }
  CHECK (stats_of (q[1]).sink.blocks_in_use * 4096 <= cap / 2);
  for (i = 0; i < 2; i++)
    tbq_queue_free (q[i], NULL, NULL);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.bytes_used, 0);
  CHECK_OK (tbq_group_free (g));
}

/* The reserve: members take their first blocks from it and give idle
 * ones back, so a new member faults nothing in. */
static void
the_reserve_lends_blocks_and_takes_them_back (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  TbqQueue *q;
  TbqGroupStats gs;
  TbqStats st;

  tbq_group_config_init (&gc);
  gc.reserve_block_size = 4096;
  gc.reserve_min_blocks = 4;
  gc.reserve_max_blocks = 8;
  g = group_new_or_fail (&gc);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.reserve_idle, 4);
  member_config (&cfg);
  cfg.sink.min_blocks = 2;
  q = member_new_or_fail (&cfg, g, NULL, NULL);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.reserve_idle, 2);
  CHECK_EQ (gs.reserve_takes, 2);
  tbq_queue_get_stats (q, &st);
  CHECK_EQ (st.sink.blocks_total, 2);
  tbq_queue_free (q, NULL, NULL);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.reserve_idle, 4);
  CHECK_EQ (gs.reserve_returns, 2);
  /* Another block size does not use it. */
  cfg.sink.block_size = 8192;
  q = member_new_or_fail (&cfg, g, NULL, NULL);
  tbq_group_get_stats (g, &gs);
  CHECK_EQ (gs.reserve_idle, 4);
  tbq_queue_free (q, NULL, NULL);
  CHECK_OK (tbq_group_free (g));
}

typedef struct
{
  TbqGroup *g;
  _Atomic int stop;
  _Atomic int joined;           /* its first member is in the group */
  uint64_t cycles;
} Churn;

static void *
churn_main (void *arg)
{
  Churn *c = arg;
  TbqConfig cfg;

  member_config (&cfg);
  /* At least one cycle, however late the thread runs. */
  do {
    TbqQueue *q = member_new_or_fail (&cfg, c->g, NULL, NULL);
    TbqWriter *w;
    TbqReader *r;
    TbqRecord rec;
    uint64_t k;

    atomic_store (&c->joined, 1);
    tbq_queue_resume (q);
    CHECK_OK (tbq_writer_new (q, &w));
    CHECK_OK (tbq_reader_new (q, &r));
    write_n (w, 2, 0, 20);
    tbq_writer_flush (w);
    for (k = 0; k < 20; k++)
      CHECK_OK (read_record (r, &rec, EVENTUALLY_NS));
    /* Leave with records still queued, now and then. */
    if (c->cycles % 3 == 0)
      write_n (w, 2, 20, 5);
    tbq_queue_free (q, NULL, NULL);
    c->cycles++;
  } while (!atomic_load (&c->stop));
  return NULL;
}

/* Members join and leave while another streams: it loses nothing. */
static void
members_join_and_leave_while_others_stream (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  Stream s;
  Churn c;
  pthread_t cth;

  tbq_group_config_init (&gc);
  g = group_new_or_fail (&gc);
  CHECK_OK (tbq_group_start (g));
  member_config (&cfg);
  s.q = member_new_or_fail (&cfg, g, NULL, NULL);
  s.id = 1;
  s.n = scaled (30000);
  s.st = TBQ_OK;
  s.got = 0;
  atomic_init (&s.written, 0);
  atomic_init (&s.reading, 1);
  tbq_queue_resume (s.q);
  c.g = g;
  c.cycles = 0;
  atomic_init (&c.stop, 0);
  atomic_init (&c.joined, 0);
  CHECK (pthread_create (&cth, NULL, churn_main, &c) == 0);
  /* The stream starts with the churn's first member in the group. */
  while (!atomic_load (&c.joined))
    usleep (100);
  CHECK (pthread_create (&s.wth, NULL, writer_main, &s) == 0);
  CHECK (pthread_create (&s.rth, NULL, reader_main, &s) == 0);
  pthread_join (s.wth, NULL);
  pthread_join (s.rth, NULL);
  atomic_store (&c.stop, 1);
  pthread_join (cth, NULL);
  CHECK_OK (s.st);
  CHECK_EQ (s.got, s.n);
  CHECK (c.cycles > 0);
  tbq_queue_free (s.q, NULL, NULL);
  CHECK_OK (tbq_group_free (g));
}

typedef struct
{
  pthread_t main;
  _Atomic int enters;
  _Atomic int leaves;
  _Atomic int from_main;
} Threads;

static void
note_thread (TbqQueue * q, TbqGroupEvent ev, void *data)
{
  Threads *t = data;

  (void) q;
  if (pthread_equal (pthread_self (), t->main))
    atomic_fetch_add (&t->from_main, 1);
  if (ev == TBQ_GROUP_ENTER)
    atomic_fetch_add (&t->enters, 1);
  else if (ev == TBQ_GROUP_LEAVE)
    atomic_fetch_add (&t->leaves, 1);
}

/* With the group's own thread: ENTER and LEAVE come from it. */
static void
enter_and_leave_come_from_the_serving_thread (void)
{
  TbqGroupConfig gc;
  TbqConfig cfg;
  TbqGroup *g;
  TbqQueue *q[3];
  Threads t;
  uint32_t i;

  memset (&t, 0, sizeof t);
  t.main = pthread_self ();
  tbq_group_config_init (&gc);
  g = group_new_or_fail (&gc);
  CHECK_OK (tbq_group_start (g));
  member_config (&cfg);
  for (i = 0; i < 3; i++)
    q[i] = member_new_or_fail (&cfg, g, note_thread, &t);
  /* Two resumed, one never: that one hears nothing. */
  tbq_queue_resume (q[0]);
  tbq_queue_resume (q[1]);
  WAIT_UNTIL (atomic_load (&t.enters) == 2);
  for (i = 0; i < 3; i++)
    tbq_queue_free (q[i], NULL, NULL);
  CHECK_EQ (atomic_load (&t.leaves), 2);
  CHECK_EQ (atomic_load (&t.enters), 2);
  CHECK_EQ (atomic_load (&t.from_main), 0);
  CHECK_OK (tbq_group_free (g));
}

static void
group_configuration_is_validated (void)
{
  TbqGroupConfig gc;
  TbqGroup *g = NULL;
  char msg[256];

  tbq_group_config_init (&gc);
  gc.threads = 0;
  CHECK_STATUS (tbq_group_new (&gc, &g, msg, sizeof msg), TBQ_INVALID_CONFIG);
  CHECK (strstr (msg, "threads") != NULL);
  gc.threads = TBQ_GROUP_MAX_THREADS + 1;
  CHECK_STATUS (tbq_group_new (&gc, &g, NULL, 0), TBQ_INVALID_CONFIG);
  tbq_group_config_init (&gc);
  gc.reserve_block_size = 4096;
  gc.reserve_min_blocks = 4;
  gc.reserve_max_blocks = 2;
  CHECK_STATUS (tbq_group_new (&gc, &g, msg, sizeof msg), TBQ_INVALID_CONFIG);
  gc.reserve_max_blocks = 4;
  gc.max_bytes = 4096;
  CHECK_STATUS (tbq_group_new (&gc, &g, msg, sizeof msg), TBQ_INVALID_CONFIG);
  CHECK (strstr (msg, "cap") != NULL);
  CHECK (g == NULL);
  CHECK_STATUS (tbq_queue_new_in_group (NULL, NULL, NULL, NULL, NULL, NULL,
          0), TBQ_INVALID_ARGUMENT);
  CHECK_OK (tbq_group_free (NULL));
}

TAP_MAIN (TAP_TEST (one_copy_thread_serves_every_queue),
    TAP_TEST (two_copy_threads_serve_every_queue),
    TAP_TEST (a_member_with_several_readers),
    TAP_TEST (a_host_round_serves_every_member_in_turn),
    TAP_TEST (the_cap_holds_all_members_together),
    TAP_TEST (the_reserve_lends_blocks_and_takes_them_back),
    TAP_TEST (members_join_and_leave_while_others_stream),
    TAP_TEST (enter_and_leave_come_from_the_serving_thread),
    TAP_TEST (group_configuration_is_validated))

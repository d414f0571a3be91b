/* libtbq — a two-layer producer/consumer record queue.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A *writer* (one per producer thread) appends records to a small *source
 * pool* whose few blocks stay in the producer's cache.  A *copier* moves
 * published ranges, in batches, into a large *sink pool* that holds the
 * backlog, and returns each source block as soon as it is consumed.  A
 * *reader* takes sink blocks in FIFO order and iterates their records;
 * with several readers (TbqConfig.max_readers), each claims batches of
 * records from the queue's FIFO order, whichever asks first.
 *
 *   writer ──► source pool ──► copier ──► sink pool ──► reader(s)
 *
 * Records are 8-byte aligned, carry a 32-bit length and a 16-bit type tag,
 * and never straddle blocks.  A record larger than the inline limit
 * (tbq_queue_max_inline_size(), a quarter of a source block) travels out
 * of line: the writer copies its payload once, into an *extent* taken from
 * the sink pool's byte budget, and a small record pointing to it keeps its
 * place in the source block; the reader hands the payload out as one
 * contiguous range.  Every record offered to a writer is either delivered
 * by a reader exactly once, in order (per writer; with several readers,
 * per batch), or counted as dropped (or discarded by tbq_queue_discard()).
 *
 * Threading contract:
 *   - a TbqWriter is used by one thread at a time;
 *   - the copier runs in one thread (tbq_queue_start(), tbq_copier_run() or
 *     tbq_copier_step());
 *   - a TbqReader is used by one thread at a time; a queue has up to
 *     TbqConfig.max_readers of them open (1 by default), each on a thread
 *     of its own if wanted;
 *   - tbq_block_ref()/tbq_block_unref(), tbq_queue_interrupt(),
 *     tbq_queue_resume(), tbq_queue_is_interrupted(), tbq_queue_get_stats(),
 *     tbq_queue_take_error(), tbq_reader_wake(), tbq_reader_get_stats(),
 *     tbq_reader_set_batch(), tbq_reader_set_coalesce() and
 *     tbq_writer_wait_copied() may be called from any thread.
 *
 * Argument contract:
 *   - Every function declared with TBQ_API checks its pointer arguments
 *     and its enum values.  One that returns a TbqStatus refuses a NULL
 *     object or a missing out-pointer with TBQ_INVALID_ARGUMENT and changes
 *     nothing; a function without a status ignores a NULL object (as
 *     free(NULL) does); one that returns a value returns 0 or NULL for it.
 *   - Misuse that can be detected cheaply is refused the same way: a
 *     commit without a reserve, a data pointer of NULL with a non-zero
 *     size, an unknown backpressure mode or publish policy.
 *   - The static inline session functions check nothing: a check would cost
 *     every record.  Define TBQ_DEBUG before including this header to make
 *     them assert their arguments.  A session begun on a NULL writer is
 *     safe: it refuses every record, and tbq_session_next_block() says
 *     TBQ_INVALID_ARGUMENT.
 *   - A pointer that is not NULL must be what the function expects (a
 *     freed writer or queue is not detected).
 *
 * Memory: block allocations (pools growing, see TbqPoolConfig) may fail.
 * A failed allocation is never retried in a loop: the pool stops growing
 * until it shrinks again, the call that failed says TBQ_NO_MEMORY
 * (tbq_copier_step(), or the write that needed the block), everyone else
 * sees backpressure, and tbq_queue_take_error() tells what was asked for
 * and why it failed.
 */
#ifndef TBQ_H
#define TBQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef TBQ_DEBUG
#include <assert.h>
#define TBQ_DEBUG_ASSERT(cond) assert (cond)
#else
#define TBQ_DEBUG_ASSERT(cond) ((void) 0)
#endif

/* The library's exported functions (everything else is hidden). */
#if defined(__GNUC__)
#define TBQ_API __attribute__ ((visibility ("default")))
#else
#define TBQ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TBQ_VERSION_MAJOR 0
#define TBQ_VERSION_MINOR 1

/* Bytes at the start of every block taken by its header. */
#define TBQ_BLOCK_HEADER_SIZE 64u
/* Bytes before each record's payload (length + type tag). */
#define TBQ_RECORD_HEADER_SIZE 8u
/* Records start on this boundary. */
#define TBQ_RECORD_ALIGN 8u

/* Bytes a record of `payload` bytes occupies in a block: the header plus
 * the payload rounded up to TBQ_RECORD_ALIGN (the header is a multiple of
 * it, so one rounding does both: two instructions, not three). */
#define TBQ_RECORD_SPAN(payload) \
  (((size_t) (payload) + TBQ_RECORD_HEADER_SIZE + TBQ_RECORD_ALIGN - 1) & ~(size_t) (TBQ_RECORD_ALIGN - 1))

/* Records of up to this many payload bytes travel inline in every queue
 * (whatever the source block size; see tbq_queue_max_inline_size()). */
#define TBQ_INLINE_MIN 64u

/* The range of TbqConfig.max_coalesce_ns that validation accepts besides
 * 0: from 1 us (shorter is a busy poll) to 60 s (longer is no latency
 * bound). */
#define TBQ_COALESCE_MIN_NS ((int64_t) 1000)
#define TBQ_COALESCE_MAX_NS ((int64_t) 60000000000)

/* The most readers a queue may have open (TbqConfig.max_readers), and the
 * most records a reader of several claims at once (TbqConfig.reader_batch,
 * tbq_reader_set_batch()). */
#define TBQ_MAX_READERS 1024u
#define TBQ_READER_BATCH_MAX 65536u

typedef enum
{
  TBQ_OK = 0,
  TBQ_NO_SPACE,                 /* session: the current block is full (not an error) */
  TBQ_DROPPED,                  /* DROP backpressure: no free source block, record dropped */
  TBQ_TIMEOUT,                  /* a wait ran out of time (BLOCK backpressure: record dropped) */
  TBQ_INTERRUPTED,              /* a wait was interrupted by tbq_queue_interrupt() */
  TBQ_EMPTY,                    /* reader: no record available yet */
  TBQ_TOO_LARGE,                /* record larger than the queue can ever hold */
  TBQ_INVALID_CONFIG,           /* configuration refused by validation */
  TBQ_INVALID_ARGUMENT,         /* NULL, out-of-range argument, or misuse */
  TBQ_NO_MEMORY,                /* allocation failed (see tbq_queue_take_error()) */
  TBQ_BUSY,                     /* resource already in use (as many readers
                                 * as max_readers open, copier running) */
  TBQ_LIMIT,                    /* too many writers */
  TBQ_IO_ERROR,                 /* the spill file: a unit could not be read
                                 * back whole and intact (tbq_queue_take_error()) */
} TbqStatus;

/* A constant English name for every status ("unknown status" otherwise). */
TBQ_API const char *tbq_status_to_string (TbqStatus status);

typedef enum
{
  TBQ_BACKPRESSURE_BLOCK = 0,   /* wait for a free source block, up to block_timeout_ns */
  TBQ_BACKPRESSURE_DROP = 1,    /* fail at once with TBQ_DROPPED */
} TbqBackpressure;

typedef enum
{
  TBQ_PUBLISH_EVERY_RECORD = 0, /* each commit is visible at once (lowest latency) */
  TBQ_PUBLISH_EVERY_N = 1,      /* publish after every `publish_every` records */
  TBQ_PUBLISH_AT_HANDOFF = 2,   /* publish only when a block is handed off or on flush */
} TbqPublishPolicy;

typedef enum
{
  /* Wake a sleeping copier on every publish (one futex wake when it
   * sleeps); the copier thread moves every record as soon as it sees it.
   * For a reader that polls tbq_reader_next() without waiting. */
  TBQ_WAKE_IMMEDIATE = 0,
  /* (1 was TBQ_WAKE_LAZY, a copier polling at a fixed interval: replaced
   * by coalescing, max_coalesce_ns; refused as unknown.) */
  /* Wake on publish only the reader, and only while it waits for records:
   * it then moves them itself (one thread hop); a reader that starts
   * waiting moves what is pending.  While the reader works through a
   * backlog the writer makes no system call (the records could not
   * overtake the backlog anyway); an idle reader gets each record as fast
   * as with IMMEDIATE.  The copier thread is woken when half a writer's
   * source pool is sealed and waiting, and moves sealed blocks.
   *
   * Coalescing (max_coalesce_ns > 0): while records arrive densely (at
   * least two expected within the bound) a waiting reader naps instead:
   * publishing makes no system call, and the reader takes everything
   * published when the nap ends, at most max_coalesce_ns after it last
   * took records.  After an empty nap, or a gap longer than the bound,
   * it asks to be woken per record again, so a lone record after a
   * silence is delivered at once.  tbq_writer_flush() and
   * tbq_queue_interrupt() end a nap at once.
   *
   * The copier thread does not follow a writer through the block it is
   * filling (that would share every cache line the writer writes):
   * records in a writer's current block move when a waiting reader pulls
   * them, after tbq_writer_flush(), tbq_writer_sync() or
   * tbq_writer_close(), or when the block is sealed.  A reader that only
   * polls tbq_reader_next() without ever waiting sees them at the latest
   * at one of those. */
  TBQ_WAKE_ON_DEMAND = 2,
} TbqWakePolicy;

typedef struct
{
  size_t block_size;            /* bytes per block, header included; multiple of 64 */
  size_t min_blocks;            /* allocated and pre-faulted up front */
  size_t max_blocks;            /* growth limit; at least 2 */
  size_t max_idle_blocks;       /* idle blocks kept above min_blocks; the rest is released */
} TbqPoolConfig;

typedef struct
{
  TbqPoolConfig source;         /* one source pool per writer */
  TbqPoolConfig sink;           /* one sink pool per queue */
  TbqBackpressure backpressure;
  int64_t block_timeout_ns;     /* BLOCK: longest wait for a source block; < 0 = forever */
  TbqPublishPolicy publish;
  uint32_t publish_every;       /* N for TBQ_PUBLISH_EVERY_N */
  TbqWakePolicy wake;
  int64_t max_coalesce_ns;      /* TBQ_WAKE_ON_DEMAND: longest a waiting reader
                                 * naps to coalesce wake-ups (0 = woken per record) */
  uint32_t spin_iterations;     /* busy-wait rounds before sleeping in the copier and reader */
  uint32_t max_writers;         /* writers open at once */
  /* Readers open at once, 1 to TBQ_MAX_READERS.  With 1 the reader reads
   * the queue's FIFO order itself; with more, each reader claims batches
   * of up to `reader_batch` records from it (tbq_reader_new()). */
  uint32_t max_readers;
  uint32_t reader_batch;        /* 1 to TBQ_READER_BATCH_MAX */
} TbqConfig;

/* Fill `cfg` with the defaults: source 4 x 4 KiB (16 KiB), sink 64 KiB blocks,
 * 4 pre-allocated, up to 4096 (256 MiB), 16 idle kept; BLOCK forever; publish
 * every record; immediate wake; no coalescing; 64 writers; 1 reader (a
 * reader of several claims 32 records at once). */
TBQ_API void tbq_config_init (TbqConfig * cfg);

/* TBQ_OK, or TBQ_INVALID_CONFIG with a human-readable reason in `msg` (may
 * be NULL).  Refused, among others: pools whose pre-allocated blocks exceed
 * the machine's physical memory, sizes that overflow, a coalescing bound
 * other than 0 or TBQ_COALESCE_MIN_NS..TBQ_COALESCE_MAX_NS, or one
 * with immediate wake. */
TBQ_API TbqStatus tbq_config_validate (const TbqConfig * cfg, char *msg,
    size_t msg_size);

typedef struct TbqQueue TbqQueue;
typedef struct TbqWriter TbqWriter;
typedef struct TbqReader TbqReader;
typedef struct TbqBlock TbqBlock;

/* Called for each record a queue discards (tbq_queue_discard(), tbq_queue_free()),
 * so records that own resources (pointers) can release them. */
typedef void (*TbqReleaseFunc) (uint16_t type, const void *data, uint32_t size, void *user_data);

/* ---- queue ------------------------------------------------------------- */

/* Validates `cfg` (reason in `msg` if not NULL), allocates and pre-faults the
 * sink pool.  Does not start the copier.  TBQ_NO_MEMORY with the reason in
 * `msg` when the pools cannot be pre-allocated. */
TBQ_API TbqStatus tbq_queue_new (const TbqConfig * cfg, TbqQueue ** out,
    char *msg, size_t msg_size);

/* Stops the copier thread if running and every callback consumer,
 * discards every queued record (calling `release` for each, may be NULL;
 * the records in readers' batches not taken yet too), frees every writer,
 * every reader still open and the pools.  No other thread may use the
 * queue. */
TBQ_API void tbq_queue_free (TbqQueue * q, TbqReleaseFunc release,
    void *user_data);

TBQ_API const TbqConfig *tbq_queue_get_config (const TbqQueue * q);

/* Largest payload a source block can hold: every record up to this size
 * is accepted whatever the sink pool's size (inline, when the sink pool is
 * too small for its extent).  Larger records travel out of line, up to
 * tbq_queue_max_extent_size(). */
TBQ_API uint32_t tbq_queue_max_record_size (const TbqQueue * q);

/* Largest payload that travels inline, in the source block: a quarter of
 * a source block's data area, less the record header (1000 bytes for 4 KiB
 * source blocks), and at least TBQ_INLINE_MIN (as far as a block holds
 * it).  Larger records travel out of line in an extent. */
TBQ_API uint32_t tbq_queue_max_inline_size (const TbqQueue * q);

/* Largest payload of a record that travels out of line: what the sink
 * pool's budget (max_blocks x block size) can hold next to two sink
 * blocks, less the extent's 64-byte header and rounding; with spill
 * (tbq_queue_enable_spill()), what an eighth of the budget holds next to
 * four sink blocks and 128 KiB, so that a stalled reader never holds up a
 * record that goes to the file, and the record comes back within the
 * budget.  0 when the sink pool is too small for any extent.  A record
 * larger than both this without spill and tbq_queue_max_record_size() is
 * refused with TBQ_TOO_LARGE; with spill, a record above this is taken
 * (up to the budget less two sink blocks and its read-back room, an
 * eighth) but stays in memory: the spill ends before it. */
TBQ_API uint32_t tbq_queue_max_extent_size (const TbqQueue * q);

/* Run the copier on a thread of the library's own (TBQ_BUSY if it runs
 * already).  While the queue is interrupted the thread pauses; it carries
 * on after tbq_queue_resume(). */
TBQ_API TbqStatus tbq_queue_start (TbqQueue * q);
/* Stop that thread (waits for it); records stay queued. */
TBQ_API void tbq_queue_stop (TbqQueue * q);

/* Make every current and future wait (writer, copier, reader) return
 * TBQ_INTERRUPTED until tbq_queue_resume().  Any thread. */
TBQ_API void tbq_queue_interrupt (TbqQueue * q);
TBQ_API void tbq_queue_resume (TbqQueue * q);
TBQ_API int tbq_queue_is_interrupted (const TbqQueue * q);

/* Drop every queued record — in the writers' source blocks, in flight, in
 * the sink layer and in readers' batches not taken yet — calling `release`
 * for each, exactly once, oldest first per layer.  The caller guarantees
 * that no writer, copier or reader call runs meanwhile (stop or
 * interrupt-and-join them first).  Writers and readers stay usable. */
TBQ_API void tbq_queue_discard (TbqQueue * q, TbqReleaseFunc release,
    void *user_data);

/* The first block allocation failure not reported yet: TBQ_NO_MEMORY with
 * a sentence in `msg` saying which pool, what was asked for and why it
 * failed (each failure is reported once), or TBQ_OK with `msg` empty.
 * Any thread; cheap enough to call after every tbq_copier_step(). */
TBQ_API TbqStatus tbq_queue_take_error (TbqQueue * q, char *msg,
    size_t msg_size);

/* Whether the sink pool could give the copier a block right now without
 * waiting for the reader: a free block, or room to grow below its limit
 * (which an allocation failure lowers).  1 or 0; 0 for NULL.  A hint, any
 * thread: the copier may take that block the next moment.  While it says
 * 1, the copier can move at least one more source block's records. */
TBQ_API int tbq_queue_sink_can_take (const TbqQueue * q);
/* (With spill, both also say 1 while the spill frees room without the
 * reader: a run is active, its writes work and the file has room, and it
 * has records to write: waiting for the copier then ends.) */

/* Whether the sink pool could take a record of `size` payload bytes right
 * now: for a record above tbq_queue_max_inline_size(), room in its budget
 * for the record's extent (next to one more sink block); for any other,
 * tbq_queue_sink_can_take().  1 or 0; 0 for NULL.  A hint, any thread, as
 * tbq_queue_sink_can_take(): the writer that was refused an extent
 * because this says 0 waits for the reader, not for the copier. */
TBQ_API int tbq_queue_sink_can_take_record (const TbqQueue * q,
    uint32_t size);

/* Whether more than half of the sink pool's budget (in a capped copy
 * group, of the member's share) is in use: 1 or 0; 0 for NULL.  A hint,
 * any thread.  A host that hands out records' bytes by reference (zero
 * copy: tbq_block_ref()) copies small ones out instead while this says 1:
 * one small record held for long keeps its whole sink block from the
 * pool, and enough of them would hold all of it. */
TBQ_API int tbq_queue_sink_half_used (const TbqQueue * q);

/* ---- spill: the backlog continues in a file ------------------------------ */

/* How many leading payload bytes of a record own resources (pointers that
 * a TbqReleaseFunc releases); 0 for plain data.  Those bytes are kept in
 * memory while the record is in the spill file. */
typedef uint32_t (*TbqOwnedFunc) (uint16_t type, const void *data,
    uint32_t size, void *user_data);
/* A spill write failed (`msg` names the file, the offset and the error),
 * or succeeded again after failing (`failed` 0).  Called on the spill
 * thread, once per change. */
typedef void (*TbqSpillErrorFunc) (int failed, const char *msg,
    void *user_data);

/* Why a run of the spill began or ended (TbqSpillRun). */
typedef enum
{
  TBQ_SPILL_BUDGET,             /* began: the sink budget is three quarters
                                 * used */
  TBQ_SPILL_EXTENT,             /* began: a large record found no room for
                                 * its extent in the budget */
  TBQ_SPILL_READ_BACK,          /* ended: the reader took every unit the run
                                 * wrote and goes on in memory */
  TBQ_SPILL_DISCARDED           /* ended: a discard (or freeing the queue)
                                 * dropped what the file held */
} TbqSpillReason;

/* A run began (`active` 1: what the copier moves now goes to the file) or
 * ended (0: the backlog is in memory again). */
typedef struct
{
  int active;
  TbqSpillReason reason;
  uint64_t budget_used;         /* began: the sink budget used (bytes) */
  uint64_t budget_limit;        /* began: what bounds it (bytes) */
  uint64_t bytes_written;       /* ended: unit bytes the run wrote to the
                                 * file */
} TbqSpillRun;

/* A run began or ended.  Called on the spill thread with none of the
 * library's locks held, in order (began, ended, began, ...), soon after
 * the change: a run that ends before its start was told is told as
 * begun, then ended.  Freeing the queue tells an active run's end
 * (discarded) before it returns. */
typedef void (*TbqSpillRunFunc) (const TbqSpillRun * run, void *user_data);

typedef struct
{
  const char *temp_template;    /* a path ending in XXXXXX (mkstemp) */
  int remove;                   /* unlink the file as soon as it is open */
  uint64_t max_bytes;           /* most bytes the file holds unread, units'
                                 * headers included (a record larger stays
                                 * in memory); 0: no limit */
  TbqOwnedFunc owned;           /* may be NULL: records own nothing */
  void *owned_data;
  TbqSpillErrorFunc on_error;   /* may be NULL */
  void *error_data;
  TbqSpillRunFunc on_run;       /* may be NULL */
  void *run_data;
} TbqSpillConfig;

/* No template (spill off), remove on, no limit, no callbacks. */
TBQ_API void tbq_spill_config_init (TbqSpillConfig * cfg);

/* Let the sink layer continue in a file when its budget (the sink pool's
 * max_blocks x block size) is three quarters used: the copier's sink
 * blocks then go to a thread of the library's own, which writes them to
 * the file and reads them back ahead of the reader; the reader sees one
 * FIFO stream across memory and file (details in docs/libtbq.md).  Call
 * before anything is written or the copier runs.  TBQ_INVALID_CONFIG
 * (no template, a budget under 8 sink blocks), TBQ_IO_ERROR (the file
 * cannot be created; the reason in `msg`), TBQ_BUSY (already on). */
TBQ_API TbqStatus tbq_queue_enable_spill (TbqQueue * q,
    const TbqSpillConfig * cfg, char *msg, size_t msg_size);
/* The spill file's path, or NULL without spill. */
TBQ_API const char *tbq_queue_spill_path (const TbqQueue * q);

/* ---- copier ------------------------------------------------------------ */

/* One copier pass: move everything published into the sink layer.  If there
 * was nothing to move, wait for work up to `timeout_ns` (< 0: no limit).
 * TBQ_OK when records moved or work may be pending, TBQ_TIMEOUT,
 * TBQ_INTERRUPTED; TBQ_NO_MEMORY when the sink pool could not grow (see
 * tbq_queue_take_error(); the next step waits for the reader to return a
 * block instead); TBQ_BUSY while the thread of tbq_queue_start() exists
 * or another step runs.  For running the copier inside a host framework's
 * task. */
TBQ_API TbqStatus tbq_copier_step (TbqQueue * q, int64_t timeout_ns);

/* Loop tbq_copier_step() in the caller's thread (one the caller created,
 * with the placement and priority it wants) until the queue is interrupted
 * (TBQ_INTERRUPTED), or TBQ_BUSY as tbq_copier_step(). */
TBQ_API TbqStatus tbq_copier_run (TbqQueue * q);

/* ---- copy groups ------------------------------------------------------- */

/* Queues that share their copier and a memory reserve.  Each member keeps
 * its own writers, source pools, reader, limits and FIFO order; the
 * group's copy threads (or a host stepping it) serve the members in turn,
 * one pass each, so a member with a deep backlog never starves another,
 * and a member whose reader stalls (its sink pool full, or its share of
 * the group's cap) is passed over until its reader gives memory back.
 * FIFO holds within each member, not across members. */
typedef struct TbqGroup TbqGroup;

typedef struct
{
  uint32_t threads;             /* copy threads tbq_group_start() runs: 1 to
                                 * TBQ_GROUP_MAX_THREADS */
  uint64_t max_bytes;           /* sink memory (blocks and extents) all members
                                 * hold together, each at most its share
                                 * (TbqGroupStats); 0: no shared cap (each
                                 * member's own limit holds either way) */
  uint32_t reserve_block_size;  /* size of the reserve's idle sink blocks
                                 * (members with other sink blocks do not use
                                 * it); 0: no reserve */
  size_t reserve_min_blocks;    /* faulted in by tbq_group_new() */
  size_t reserve_max_blocks;    /* idle blocks kept for the members at most */
  uint32_t spin_iterations;     /* busy-wait rounds before a copy thread sleeps */
} TbqGroupConfig;

#define TBQ_GROUP_MAX_THREADS 64u

/* What a group tells a member's owner, from the copy thread serving it. */
typedef enum
{
  TBQ_GROUP_ENTER = 0,          /* this thread serves the member from now on
                                 * (once, before its first pass) */
  TBQ_GROUP_NO_MEMORY = 1,      /* the member's sink pool could not grow (see
                                 * tbq_queue_take_error()) */
  TBQ_GROUP_LEAVE = 2,          /* after ENTER: no thread serves the member from
                                 * now on (tbq_queue_free(); from the serving
                                 * thread while the group is served, else from
                                 * the freeing one) */
} TbqGroupEvent;

typedef void (*TbqGroupFunc) (TbqQueue * q, TbqGroupEvent ev, void *data);

typedef struct
{
  uint32_t members;             /* queues in the group now */
  uint64_t rounds;              /* rounds over the members that moved something */
  uint64_t wakeups;             /* copy thread returns from sleep */
  uint64_t bytes_used;          /* sink bytes the members hold (with a cap) */
  uint64_t bytes_peak;          /* highest bytes_used (with a cap) */
  uint64_t reserve_idle;        /* idle blocks in the reserve */
  uint64_t reserve_takes;       /* blocks members took from the reserve */
  uint64_t reserve_returns;     /* blocks members gave back to it */
  /* With a cap: the least the members need to make progress, two sink
   * blocks each (their floors, reserved for each from its join), and the
   * cap they are held to now, max_bytes or those floors when they are
   * more.  Each member holds at most its share: its floor and an equal
   * part of what the floors leave of the cap. */
  uint64_t bytes_floors;
  uint64_t bytes_cap;
} TbqGroupStats;

/* One copy thread, no cap, no reserve, no spinning. */
TBQ_API void tbq_group_config_init (TbqGroupConfig * cfg);
/* TBQ_INVALID_CONFIG (reason in `msg`) or TBQ_NO_MEMORY (the reserve). */
TBQ_API TbqStatus tbq_group_new (const TbqGroupConfig * cfg, TbqGroup ** out,
    char *msg, size_t msg_size);
/* TBQ_BUSY while the group has members (free them first); stops the
 * threads.  Memory its members' zero-copy holders still keep stays valid. */
TBQ_API TbqStatus tbq_group_free (TbqGroup * g);
/* Run the group's copy threads (TBQ_BUSY if they run, or if a host steps
 * the group), or stop them (waits for them). */
TBQ_API TbqStatus tbq_group_start (TbqGroup * g);
TBQ_API void tbq_group_stop (TbqGroup * g);
/* A host's step (a framework's task): one round over the members, and if
 * nothing moved, a wait for work up to `timeout_ns` (< 0: no limit).
 * TBQ_OK, TBQ_TIMEOUT, TBQ_INTERRUPTED (tbq_group_interrupt()), TBQ_BUSY
 * while the group's own threads run. */
TBQ_API TbqStatus tbq_group_step (TbqGroup * g, int64_t timeout_ns);
/* Make a host's step return TBQ_INTERRUPTED (and every later one, until
 * tbq_group_resume()).  A host that stops stepping a group whose members
 * heard ENTER interrupts it first: their tbq_queue_free() waits for a
 * step to say LEAVE while a host serves the group.  Members are interrupted one by one with
 * tbq_queue_interrupt(). */
TBQ_API void tbq_group_interrupt (TbqGroup * g);
TBQ_API void tbq_group_resume (TbqGroup * g);
TBQ_API void tbq_group_get_stats (TbqGroup * g, TbqGroupStats * st);

/* tbq_queue_new() for a member of `g`: its sink pool takes from the
 * group's reserve and cap (TBQ_NO_SPACE, with the reason in `msg`, when
 * the other members hold so much of the cap that this one's floor does
 * not fit), and the group's threads run its copier
 * (tbq_copier_step(), tbq_copier_run() and tbq_queue_start() say
 * TBQ_BUSY).  `fn` (may be NULL) hears of it from the copy thread.  The
 * queue starts interrupted: the group serves it from its first
 * tbq_queue_resume().  tbq_queue_free() takes it out of the group. */
TBQ_API TbqStatus tbq_queue_new_in_group (const TbqConfig * cfg, TbqGroup * g,
    TbqGroupFunc fn, void *data, TbqQueue ** out, char *msg,
    size_t msg_size);
/* After tbq_queue_interrupt(): wait until no copy pass runs on `q` (a
 * group's thread, the queue's copier thread or a pulling reader); none
 * starts on it before tbq_queue_resume().  For a discard. */
TBQ_API void tbq_queue_wait_copier_idle (TbqQueue * q);

/* ---- writer ------------------------------------------------------------ */

/* Open a writer with its own source pool (pre-faulted). Any thread.
 * TBQ_LIMIT beyond max_writers. */
TBQ_API TbqStatus tbq_writer_new (TbqQueue * q, TbqWriter ** out);

/* Publish what was written and hand the writer to the copier, which frees it
 * once its records are moved (or tbq_queue_free() does).  `w` is invalid after. */
TBQ_API void tbq_writer_close (TbqWriter * w);

/* Per-writer overrides (writer thread only).  TBQ_INVALID_ARGUMENT for an
 * unknown mode or policy (the writer keeps its settings). */
TBQ_API TbqStatus tbq_writer_set_backpressure (TbqWriter * w,
    TbqBackpressure mode, int64_t timeout_ns);
TBQ_API TbqStatus tbq_writer_set_publish (TbqWriter * w,
    TbqPublishPolicy policy, uint32_t every);

/* Copy one record (`data` may be NULL when `size` is 0). TBQ_OK,
 * TBQ_TOO_LARGE, TBQ_DROPPED, TBQ_TIMEOUT, TBQ_INTERRUPTED, TBQ_NO_MEMORY
 * (the source pool could not grow, or an extent could not be allocated);
 * anything but TBQ_OK leaves nothing queued, and all but
 * TBQ_INVALID_ARGUMENT count as dropped.  A record above
 * tbq_queue_max_inline_size() is copied once, into an extent; when the
 * sink pool's budget has no room for it now, the writer's backpressure
 * mode applies (drop, or wait for the reader to free room). */
TBQ_API TbqStatus tbq_writer_write (TbqWriter * w, uint16_t type,
    const void *data, uint32_t size);

/* Reserve room for one record of `size` bytes and return where to build it;
 * it is queued by tbq_writer_commit().  Same statuses as write.  Nothing
 * else may be written between reserve and commit; a new reserve replaces
 * an uncommitted one.  Above tbq_queue_max_inline_size() the pointer is
 * into the record's extent: the payload is written once, in place. */
TBQ_API TbqStatus tbq_writer_reserve (TbqWriter * w, uint16_t type,
    uint32_t size, void **data);
/* Queue the reserved record: TBQ_OK, or TBQ_INVALID_ARGUMENT when nothing
 * is reserved (or something was written since the reserve). */
TBQ_API TbqStatus tbq_writer_commit (TbqWriter * w);
/* Give up the reserved record. */
TBQ_API void tbq_writer_cancel (TbqWriter * w);

/* Publish everything written so far, waking nobody: the copier and a
 * reader that looks find it, a reader asleep does not wake for it.  For
 * a host that wakes the reader itself soon after (a tbq_writer_offer(),
 * a record written under TBQ_PUBLISH_EVERY_RECORD, a
 * tbq_reader_wake()), once for several records. */
TBQ_API void tbq_writer_publish (TbqWriter * w);

/* Publish everything written so far and have it delivered now: a waiting
 * reader (napping or not) is asked to take it, else the copier is woken
 * if it sleeps. */
TBQ_API void tbq_writer_flush (TbqWriter * w);

/* Publish everything written so far and offer it to the reader: a waiting
 * reader (napping or not) is woken to take it, a busy one takes it before
 * it next waits.  Unlike tbq_writer_flush() the copier is never woken for
 * it: the records stay in the writer's current block until the reader
 * pulls them or the block is handed off, one thread hop and one wake-up
 * fewer per record while the reader keeps up.  With TBQ_WAKE_IMMEDIATE
 * (every publish wakes the copier) it is tbq_writer_flush(). */
TBQ_API void tbq_writer_offer (TbqWriter * w);

/* Flush, then wait until the copier has moved everything this writer
 * published into the sink layer (TBQ_OK, TBQ_TIMEOUT, TBQ_INTERRUPTED). */
TBQ_API TbqStatus tbq_writer_sync (TbqWriter * w, int64_t timeout_ns);

/* Any thread: wait until the copier has moved everything this writer had
 * published when the call began (TBQ_OK, TBQ_TIMEOUT, TBQ_INTERRUPTED).
 * Unlike tbq_writer_sync() it publishes nothing, so it may be called while
 * the writer's own thread is writing; the writer must stay open. */
TBQ_API TbqStatus tbq_writer_wait_copied (TbqWriter * w, int64_t timeout_ns);

/* ---- write session: many records into the current block, nothing shared
 * touched per record.  Records are published once, by tbq_session_end() or
 * tbq_session_next_block().  The writer may not be used otherwise while a
 * session is open; opening one gives up an uncommitted reserve. */
typedef struct
{
  unsigned char *pos;           /* where the next record header goes */
  unsigned char *end;           /* end of the current block's data area */
  TbqWriter *writer;
  uint64_t records;             /* records written since tbq_session_begin()
                                 * or the last tbq_session_next_block() */
  uint64_t bytes;               /* payload bytes of those records */
  size_t wanted;                /* block bytes the last refused reservation
                                 * needed (for tbq_session_next_block()) */
  size_t inline_max;            /* block bytes of the largest inline record
                                 * (at least TBQ_RECORD_SPAN (TBQ_INLINE_MIN)) */
} TbqSession;

typedef struct
{
  uint32_t size;
  uint16_t type;
  uint16_t reserved;
} TbqRecordHeader;

/* Out-of-line halves of tbq_session_begin(), tbq_session_next_block() and
 * tbq_session_end(): call those instead.  The inline wrappers below hand
 * these functions a copy of the session, so the caller's TbqSession never
 * has its address passed to a function the compiler cannot see.  That is
 * what lets the compiler keep `pos`, `records` and `bytes` in registers
 * across tbq_session_write() calls instead of storing and reloading them
 * for every record (about 4x the producer throughput for small records). */
TBQ_API void tbq_session_begin_impl (TbqWriter * w, TbqSession * s);
TBQ_API TbqStatus tbq_session_next_block_impl (TbqSession * s);
TBQ_API void tbq_session_end_impl (TbqSession * s);
/* Out-of-line half of tbq_session_reserve() for a record above the inline
 * limit (call tbq_session_reserve()). */
TBQ_API void *tbq_session_reserve_large_impl (TbqSession * s, uint16_t type,
    uint32_t size);

/* Open a session on the writer's current block. */
static inline void
tbq_session_begin (TbqWriter * w, TbqSession * s)
{
  TbqSession t;

  TBQ_DEBUG_ASSERT (s != NULL);
  tbq_session_begin_impl (w, &t);
  *s = t;
}

/* A record above the inline limit (out of line; the caller's session is
 * handed over as a copy, as in tbq_session_next_block()). */
static inline void *
tbq_session_reserve_large (TbqSession * s, uint16_t type, uint32_t size)
{
  TbqSession t = *s;
  void *p = tbq_session_reserve_large_impl (&t, type, size);

  *s = t;
  return p;
}

/* Reserve a record: a pointer to its payload, or NULL when the block has
 * no room (then call tbq_session_next_block()).  A record above the inline
 * limit gets its payload in an extent and a small record in the block;
 * NULL when the block has no room for that record, or the sink pool's
 * budget none for the extent now: tbq_session_next_block() then hands the
 * block off, or waits for room (or drops) per backpressure, or says
 * TBQ_TOO_LARGE. */
static inline void *
tbq_session_reserve (TbqSession * s, uint16_t type, uint32_t size)
{
  size_t span = TBQ_RECORD_SPAN (size);
  unsigned char *p;
  TbqRecordHeader h;

  TBQ_DEBUG_ASSERT (s != NULL && s->pos <= s->end);
  p = s->pos;
  /* The first test of the inline limit is a constant: with a constant
   * `size` up to TBQ_INLINE_MIN the compiler drops the check. */
  if (__builtin_expect (span > (size_t) (s->end - p)
          || (span > TBQ_RECORD_SPAN (TBQ_INLINE_MIN)
              && span > s->inline_max), 0)) {
    if (span > s->inline_max)
      return tbq_session_reserve_large (s, type, size);
    s->wanted = span;
    return NULL;
  }
  /* Advance before writing the header: `s` is not reloaded after it. */
  s->pos = p + span;
  s->records++;
  s->bytes += size;
  h.size = size;
  h.type = type;
  h.reserved = 0;
  memcpy (p, &h, sizeof h);
  return p + TBQ_RECORD_HEADER_SIZE;
}

/* Copy a record into the current block: TBQ_OK, or TBQ_NO_SPACE at block end. */
static inline TbqStatus
tbq_session_write (TbqSession * s, uint16_t type, const void *data, uint32_t size)
{
  void *p;

  TBQ_DEBUG_ASSERT (data != NULL || size == 0);
  p = tbq_session_reserve (s, type, size);
  if (p == NULL)
    return TBQ_NO_SPACE;
  if (size != 0)                /* `data` may be NULL then */
    memcpy (p, data, size);
  return TBQ_OK;
}

/* Publish the session's records, hand the block off and continue in a fresh
 * block (waits or drops per backpressure: TBQ_OK, TBQ_DROPPED, TBQ_TIMEOUT,
 * TBQ_INTERRUPTED, TBQ_NO_MEMORY).  When the record the session refused
 * last was refused for its extent: publish, then wait for room in the sink
 * pool's budget (or drop) per backpressure, without a hand-off (TBQ_OK:
 * reserve again), or TBQ_NO_MEMORY once when the extent could not be
 * allocated.  TBQ_TOO_LARGE, without a hand-off, when that record is
 * larger than the queue can ever hold.  The session stays open in every
 * case. */
static inline TbqStatus
tbq_session_next_block (TbqSession * s)
{
  TbqSession t;
  TbqStatus st;

  TBQ_DEBUG_ASSERT (s != NULL);
  t = *s;
  st = tbq_session_next_block_impl (&t);
  *s = t;
  return st;
}

/* Publish the session's records and close it. */
static inline void
tbq_session_end (TbqSession * s)
{
  TbqSession t;

  TBQ_DEBUG_ASSERT (s != NULL);
  t = *s;
  tbq_session_end_impl (&t);
  *s = t;
}

/* ---- reader ------------------------------------------------------------ */

typedef struct
{
  const void *data;             /* valid until the next tbq_reader_next(), or
                                 * while a reference to `block` is held */
  uint32_t size;
  uint16_t type;
  TbqBlock *block;              /* what holds the bytes: a sink block, or the
                                 * record's extent (a large record) */
} TbqRecord;

/* Open a reader: TBQ_BUSY when TbqConfig.max_readers of them are open
 * (with the default 1: a second reader), TBQ_NO_MEMORY.  Any thread.
 *
 * Several readers (max_readers above 1): the queue keeps one FIFO order,
 * and each reader *claims a batch* from it when it has taken its last
 * record: up to TbqConfig.reader_batch records (tbq_reader_set_batch()),
 * never past the end of a sink block or a unit of the spill file.
 * Whichever reader asks first gets the next batch.  Every record goes to
 * exactly one reader.  The records one reader takes are in the queue's
 * order (per writer), but readers are not ordered among one another: a
 * record another reader took later may be older.  A reader holds its
 * batch until it takes the records: one that stalls holding nothing
 * stops nobody.  Each reader is used by one thread at a time; the
 * readers' calls run in parallel (a claim takes a short lock, taking a
 * record from a batch none).  Waits: see tbq_reader_wait(). */
TBQ_API TbqStatus tbq_reader_new (TbqQueue * q, TbqReader ** out);
/* Stop its callback consumer, if any, and give the reader back.  A lone
 * reader's read position is kept for the next tbq_reader_new().  A reader
 * of several gives back the records of its batch it did not take: the
 * next claim of any reader takes them first (the one order that may then
 * look backwards, to that reader); the bytes of the record it took last
 * are no longer valid (unless referenced, tbq_block_ref()). */
TBQ_API void tbq_reader_free (TbqReader * r);

/* Take the next record in FIFO order: TBQ_OK or TBQ_EMPTY. Never waits.
 * A reader of several takes the next record of its batch, and claims the
 * next batch when it has none (TBQ_EMPTY: nothing to claim).
 * With spill: TBQ_IO_ERROR when the next records are in a unit of the
 * file that could not be read back (nothing after it is delivered). 
 * A large record's payload is one contiguous range in its extent.  Drops
 * the reader's reference to the block or extent of the record returned
 * before, as peek does. */
TBQ_API TbqStatus tbq_reader_next (TbqReader * r, TbqRecord * rec);

/* The next record without taking it: TBQ_OK or TBQ_EMPTY, and with spill
 * TBQ_IO_ERROR as next says it (not "nothing yet": nothing after it will
 * come).  Like next, it may release the block of the record returned
 * before. */
TBQ_API TbqStatus tbq_reader_peek (TbqReader * r, TbqRecord * rec);

/* Wait until a record may be available: TBQ_OK (check with next), TBQ_TIMEOUT,
 * TBQ_INTERRUPTED. Returns at once when a record is ready.
 * Several readers: the readers that wait take turns, one at a time, to
 * wait for the queue (that one pulls through the copier and naps as a
 * lone reader does); the others sleep until it returns, then look again.
 * A record that another reader claims first may leave the wait's TBQ_OK
 * without a record to take (check with next, and wait again). */
TBQ_API TbqStatus tbq_reader_wait (TbqReader * r, int64_t timeout_ns);

/* Split wait, for a host that serialises reader calls with a lock of its own
 * and must not hold it while sleeping:
 *   key = tbq_reader_prepare_wait (r);     (under the host lock)
 *   if (tbq_reader_peek (r, &rec) == TBQ_EMPTY) {
 *     unlock; tbq_reader_sleep (r, key, timeout); lock; (then re-check)
 *   }
 * tbq_reader_sleep does not touch the read position; it returns TBQ_OK when
 * the copier published records after the key was taken or on
 * tbq_reader_wake(), TBQ_INTERRUPTED on an interrupt, TBQ_TIMEOUT.  With
 * several readers each reader's sleep is its own (the peek claims); a
 * batch another reader gives back counts as published. */
TBQ_API uint32_t tbq_reader_prepare_wait (TbqReader * r);
TBQ_API TbqStatus tbq_reader_sleep (TbqReader * r, uint32_t key,
    int64_t timeout_ns);
/* The host knows nothing more is queued (its own counts), and waits
 * without a peek: a spill run whose units the reader has all taken ends
 * now (the spill thread is told the reader waits at the run's marker),
 * not at the next record.  A reader call; nothing to do, and no lock,
 * unless the reader is at a marker. */
TBQ_API void tbq_reader_note_idle (TbqReader * r);

/* Make a current or the next tbq_reader_wait() (or tbq_reader_sleep()) of
 * `r` return TBQ_OK, wherever it waits.  Any thread. */
TBQ_API void tbq_reader_wake (TbqReader * r);

/* Change the reader's coalescing bound (TbqConfig.max_coalesce_ns): 0, or
 * TBQ_COALESCE_MIN_NS to TBQ_COALESCE_MAX_NS with TBQ_WAKE_ON_DEMAND; else
 * TBQ_INVALID_ARGUMENT.  Any thread.  It applies from the reader's next
 * wait that sees it (order it before the waits it is meant for: a lock
 * the reader's thread takes before waiting, or tbq_reader_wake()), with
 * a fresh arrival estimate; a nap in progress keeps its deadline
 * (tbq_reader_wake() ends it).  With several readers the bound is the
 * queue's: any reader sets it for the waits of all. */
TBQ_API TbqStatus tbq_reader_set_coalesce (TbqReader * r, int64_t bound_ns);

/* How many records a reader of several claims at once, from its next
 * claim: 1 to TBQ_READER_BATCH_MAX, else TBQ_INVALID_ARGUMENT.  Larger
 * batches take the claim lock less often; smaller ones share a burst
 * among more readers.  A lone reader keeps the value and reads as
 * before.  Any thread. */
TBQ_API TbqStatus tbq_reader_set_batch (TbqReader * r, uint32_t records);

/* One reader's counters (TbqStats sums them over every reader, open and
 * freed). */
typedef struct
{
  uint64_t records_out;         /* records this reader took */
  uint64_t bytes_out;           /* their payload bytes */
  uint64_t batches;             /* batches it claimed (0 for a lone reader) */
  uint64_t claim_waits;         /* of its claims, those that found the claim
                                 * lock held by another reader */
} TbqReaderStats;

/* A snapshot of `r`'s counters; any thread. */
TBQ_API void tbq_reader_get_stats (TbqReader * r, TbqReaderStats * st);

/* Zero-copy: keep a record's bytes after moving on (`b` is TbqRecord.block:
 * a sink block or an extent).  It returns to the sink pool (an extent to
 * its idle cache) when its last reference is released, also after
 * tbq_queue_free(). Any thread.  A kept block counts against the sink
 * budget while kept. */
TBQ_API void tbq_block_ref (TbqBlock * b);
TBQ_API void tbq_block_unref (TbqBlock * b);
/* 1 when `b` (TbqRecord.block) holds records read back from the spill
 * file, else 0 (0 for NULL).  Such memory comes out of the budget's
 * read-back room (tbq_queue_enable_spill()): while a reference to it is
 * kept, the reader may wait at the file for the room to read the next
 * unit back.  A consumer that lets others keep records for long takes a
 * large record's memory out of the budget (tbq_block_leave_budget()) and
 * copies a small one's.  Any thread holding a reference. */
TBQ_API int tbq_block_from_file (const TbqBlock * b);
/* Take `b`, the extent of one large record read back from the spill file
 * (TbqRecord.block: tbq_block_from_file() says 1, and it holds that record
 * alone), out of the sink budget: from now on it counts as its holders'
 * memory, as a copy of it would, and its last unref returns it to the idle
 * cache.  1 when `b` is such an extent (out of the budget now, or already);
 * 0 for anything else (NULL, a sink block, the records of a unit, which
 * small records share, a writer's extent).  Any thread holding a
 * reference. */
TBQ_API int tbq_block_leave_budget (TbqBlock * b);

/* ---- callback consumer: a thread of the library's own that calls `cb` for
 * every record (the record's bytes are valid during the call only).  With
 * spill, at a unit that cannot be read back (TBQ_IO_ERROR) it delivers
 * nothing more and sleeps; tbq_queue_take_error() says why.  One per
 * reader: with several readers, each may run one. */
typedef void (*TbqConsumeFunc) (const TbqRecord * rec, void *user_data);

TBQ_API TbqStatus tbq_consumer_start (TbqReader * r, TbqConsumeFunc cb,
    void *user_data);
/* Deliver what is queued up to now, then stop the thread. */
TBQ_API void tbq_consumer_stop (TbqReader * r);

/* ---- statistics -------------------------------------------------------- */

typedef struct
{
  uint64_t block_size;
  uint64_t blocks_total;        /* allocated now */
  uint64_t blocks_in_use;       /* allocated and not idle */
  uint64_t blocks_peak;         /* highest blocks_in_use seen */
  uint64_t blocks_idle;         /* on the free list */
  uint64_t allocations;         /* blocks allocated since creation */
  uint64_t releases;            /* blocks given back to the system */
  uint64_t blocks_limit;        /* most blocks the pool may hold now: max_blocks,
                                 * or fewer after an allocation failure */
  uint64_t alloc_failures;      /* block allocations that failed */
} TbqPoolStats;

/* Extents: the memory of records that travel out of line, and the sink
 * pool's byte budget they share with the sink blocks. */
typedef struct
{
  uint64_t in_use;              /* extents held: by queued records, the reader,
                                 * zero-copy holders */
  uint64_t bytes_in_use;        /* their bytes (64-byte header and rounding
                                 * to a cache line or to pages included) */
  uint64_t bytes_peak;          /* highest bytes_in_use seen */
  uint64_t idle;                /* extents in the idle cache */
  uint64_t bytes_idle;          /* their bytes */
  uint64_t allocations;         /* extents allocated from the system */
  uint64_t releases;            /* extents given back to the system */
  uint64_t cache_hits;          /* extents reused from the idle cache */
  uint64_t alloc_failures;      /* extent allocations that failed */
  uint64_t pressure_waits;      /* writer waits for room in the budget */
  uint64_t budget_used;         /* sink blocks in use x block size + bytes_in_use:
                                 * all the memory counted against the sink
                                 * pool's max_blocks x block size */
  uint64_t budget_limit;        /* most budget_used may reach now: sink
                                 * max_blocks x block size, or less after an
                                 * extent allocation failed */
  uint64_t budget_peak;         /* highest budget_used reached since the queue
                                 * was created (never below budget_used) */
} TbqExtentStats;

/* The spill file (all 0 without spill). */
typedef struct
{
  uint64_t bytes_written;       /* unit bytes written to the file */
  uint64_t bytes_read;          /* unit bytes read back */
  uint64_t level_bytes;         /* written and not read back yet */
  uint64_t units_written;
  uint64_t units_read;
  uint64_t records_on_disk;     /* records in the file, not read back */
  uint64_t runs;                /* times the sink layer began to spill */
  uint64_t write_errors;        /* writes that failed (each retried) */
  uint64_t read_errors;         /* units that could not be read back */
  uint64_t checksum_errors;     /* of those, checksum or header mismatches */
  uint32_t active;              /* 1 while a run is active */
  uint32_t failing;             /* 1 while writes fail or the file is full */
} TbqSpillStats;

typedef struct
{
  uint64_t records_in;          /* accepted by writers */
  uint64_t records_out;         /* taken by the readers */
  uint64_t records_dropped;     /* refused: backpressure, timeout, interrupt, too large, no memory */
  uint64_t records_discarded;   /* removed by tbq_queue_discard()/free */
  uint64_t bytes_in;            /* payload bytes accepted */
  uint64_t bytes_out;           /* payload bytes taken */
  uint64_t bytes_copied;        /* block bytes moved by the copier */
  uint64_t handoffs;            /* source blocks handed to the copier */
  uint64_t copier_passes;       /* copier passes that moved something */
  uint64_t copier_wakeups;      /* copier returns from sleep */
  uint64_t copier_sleeps;       /* sleeps for the copier's work or for room in
                                 * the sink pool (the copier; a writer waiting
                                 * for room for a large record) */
  uint64_t writer_wakeups;      /* wake-ups (system calls) made by writers:
                                 * publishes, hand-offs, flushes */
  uint64_t writer_sleeps;       /* times a writer (or a sync) went to sleep */
  uint64_t reader_sleeps;       /* times a reader went to sleep (or another
                                 * thread on its event: a paused consumer);
                                 * several readers: waiting for the queue, or
                                 * for the reader that waits for it */
  uint64_t reader_naps;         /* reader waits that napped (coalescing) */
  uint64_t reader_naps_woken;   /* naps that ended before their deadline: a
                                 * flush, a writer short of blocks, the copier
                                 * thread, a kick or an interrupt */
  uint64_t reader_batches;      /* batches readers of several claimed */
  uint64_t reader_claim_waits;  /* claims that found the claim lock held */
  uint64_t pressure_waits;      /* writer waits for a free source block */
  uint64_t sink_pressure_waits; /* copier waits for a free sink block */
  uint32_t writers;             /* writers open */
  uint32_t readers;             /* readers open */
  TbqPoolStats source;          /* summed over every writer's source pool */
  TbqPoolStats sink;
  TbqExtentStats extents;       /* sink side: large records' memory */
  TbqSpillStats spill;
} TbqStats;

/* A consistent-enough snapshot (counters are read one by one). Any thread. */
TBQ_API void tbq_queue_get_stats (TbqQueue * q, TbqStats * stats);

/* ---- Condition variables with deadlines ----
 *
 * For the library's own waits and its users' (the GStreamer elements):
 * a condition variable whose timed waits are on CLOCK_MONOTONIC, so that
 * a change of the wall clock neither ends nor stretches them. */

/* pthread_cond_init() with the monotonic clock; its result. */
TBQ_API int tbq_cond_init_monotonic (pthread_cond_t * cond);
/* Nanoseconds of CLOCK_MONOTONIC. */
TBQ_API int64_t tbq_clock_ns (void);
/* Wait on `cond` (made by tbq_cond_init_monotonic(), `mutex` held) until
 * a wake or the absolute CLOCK_MONOTONIC `deadline_ns` (< 0: no limit).
 * True when the deadline passed; spurious returns happen. */
TBQ_API bool tbq_cond_wait_until (pthread_cond_t * cond,
    pthread_mutex_t * mutex, int64_t deadline_ns);

#ifdef __cplusplus
}
#endif
#endif /* TBQ_H */

/* lib-bench: what the driver (lib-bench.c) and the contenders
 * (lib-contenders-c.c, lib-contenders.cpp) share.  C and C++.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every contender moves the same records: a payload of 8, 16, 32 or 64
 * bytes whose first 64-bit word is the record's sequence number and whose
 * other words are derived from it (bench_payload_fill()), so that every
 * byte changes from one record to the next.  The consumer checks every
 * word of every record against the sequence number it expects next
 * (bench_payload_check()), which verifies the FIFO position, the length
 * and all payload bytes at once.
 */
#ifndef LIB_BENCH_H
#define LIB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Writes per timed group (write-cost percentiles are over group averages). */
#define BENCH_GROUP 1000u
/* Largest payload. */
#define BENCH_MAX_SIZE 64u
/* libtbq type tag of every benchmark record. */
#define BENCH_TBQ_TYPE 1u

#define BENCH_MIX UINT64_C(0x9E3779B97F4A7C15)
#define BENCH_STEP UINT64_C(0xD1B54A32D192ED03)

#define BENCH_NOINLINE __attribute__((noinline))
#define BENCH_INLINE static inline __attribute__((always_inline))

/* Producer loops build a payload of more than 8 bytes BENCH_AHEAD records
 * before it is written, in a ring of BENCH_RING payloads.  Built just in
 * time, its word-by-word stores would still sit in the store buffer when
 * the queue's copy loads them 16 or 32 bytes at a time: a failed
 * store-to-load forward, ~10 cycles per record, for every contender.  An
 * 8-byte payload is one register. */
#define BENCH_AHEAD 8u
#define BENCH_RING 16u

/* Payload words for record `seq`: w[0] = seq, w[k] = seq * MIX + k * STEP. */
BENCH_INLINE void
bench_payload_fill (uint64_t * w, unsigned size, uint64_t seq)
{
  uint64_t b = seq * BENCH_MIX;
  unsigned k;

  w[0] = seq;
  for (k = 1; k < size / 8; k++)
    w[k] = b + k * BENCH_STEP;
}

/* 1 when the `size` bytes at `p` are record `seq`'s payload.  `p` may be
 * unaligned. */
BENCH_INLINE int
bench_payload_check (const void *p, unsigned size, uint64_t seq)
{
  uint64_t w[BENCH_MAX_SIZE / 8];

  bench_payload_fill (w, size, seq);
  return memcmp (p, w, size) == 0;
}

/* Sequence number stored in a payload (to report what arrived instead). */
BENCH_INLINE uint64_t
bench_payload_seq (const void *p)
{
  uint64_t s;

  memcpy (&s, p, sizeof s);
  return s;
}

/* Cheap timestamp for write groups: TSC ticks where there is one, else ns. */
BENCH_INLINE uint64_t
bench_ticks (void)
{
#ifdef BENCH_HAVE_TSC
  return __rdtsc ();
#else
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
#endif
}

static inline int64_t
bench_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void
bench_cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__ ("yield" ::: "memory");
#endif
}

/* How a queue is set up: the same for every contender. */
typedef struct
{
  unsigned size;                /* payload bytes: 8, 16, 32 or 64 */
  uint64_t capacity;            /* records the queue can hold (backlog bound) */
  size_t tbq_block_size;        /* libtbq source and sink block bytes */
  uint32_t idle_spins;          /* consumer polls before it sleeps */
  int64_t idle_sleep_ns;        /* ring consumers: sleep when idle (no wake-up) */
  int defer_start;              /* open without starting the consumer side */
} BenchQueueConfig;

/* Counters a contender keeps; the driver checks them after every pass. */
typedef struct
{
  uint64_t sent;                /* records accepted by the queue */
  uint64_t received;            /* records the consumer took and checked */
  uint64_t errors;              /* records that failed verification */
  uint64_t first_error_expected;        /* first failure: seq expected */
  uint64_t first_error_got;     /* ... and the seq found (or size) */
  uint64_t failed_attempts;     /* write attempts refused (queue full), retried */
  uint64_t pressured;           /* records that needed at least one retry */
  uint64_t pressure_waits;      /* libtbq: writer waits for a source block */
  uint64_t handoffs;            /* libtbq: source blocks handed to the copier */
  uint64_t copier_wakeups;      /* libtbq: copier returns from sleep */
  uint64_t consumer_sleeps;     /* ring consumers: idle sleeps */
} BenchCounters;

typedef struct
{
  const char *name;             /* short id, e.g. "tbq-session" */
  const char *label;            /* human label */
  const char *notes;            /* payload handling, publish policy, capacity */
  int threads;                  /* threads per queue (producer included) */
  int spsc;                     /* a bounded SPSC queue (for "best SPSC") */
  int reference;                /* not a queue: run only when asked for */
  /* Create the queue, start the consumer side (unless defer_start). NULL on
   * failure with the reason in `err`. */
  void *(*open) (const BenchQueueConfig * cfg, char *err, size_t err_size);
  /* Start the consumer side of a queue opened with defer_start. */
  void (*start) (void *ctx);
  /* Producer: write records [seq0, seq0 + n).  When `ticks` is not NULL,
   * store the duration of every complete group of BENCH_GROUP writes there
   * (bench_ticks() units).  Every record is written: a refused write is
   * retried and counted.  Anything the policy holds back is published
   * before returning. */
  void (*send) (void *ctx, uint64_t seq0, uint64_t n, uint64_t * ticks);
  /* The same loop for callgrind: a noinline function per contender. */
  void (*cg_send) (void *ctx, uint64_t seq0, uint64_t n);
  /* Current consumer-side count of verified records (any thread). */
  uint64_t (*received) (void *ctx);
  void (*counters) (void *ctx, BenchCounters * c);
  /* Stop the consumer side (after draining) and free everything. */
  void (*close) (void *ctx);
} BenchContender;

const BenchContender *bench_c_contenders (size_t *n);
const BenchContender *bench_cpp_contenders (size_t *n);
/* Version string of the C++ compiler that built the C++ contenders. */
const char *bench_cpp_compiler (void);

#ifdef __cplusplus
}
#endif
#endif /* LIB_BENCH_H */

/* libtbq internals: what every module assumes about the machine.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cache line (shared state is laid out by it), branch hints, the pause
 * of a spin loop, single-owner statistics counters and cache-line-aligned
 * allocation.  A leaf: it includes nothing of libtbq.  The memory protocol
 * of the whole library is written down once, in block.h.
 */
#ifndef TBQ_MACHINE_H
#define TBQ_MACHINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TBQ_CACHELINE 64

#define TBQ_LIKELY(x) __builtin_expect (!!(x), 1)
#define TBQ_UNLIKELY(x) __builtin_expect (!!(x), 0)

#if defined(__x86_64__) || defined(__i386__)
#define tbq_cpu_relax() __builtin_ia32_pause ()
#elif defined(__aarch64__)
#define tbq_cpu_relax() __asm__ __volatile__ ("yield" ::: "memory")
#else
/* Seq_cst signal fence: a compiler barrier only, so that the spin loop
 * reloads what it polls. */
#define tbq_cpu_relax() atomic_signal_fence (memory_order_seq_cst)
#endif

/* A counter that one thread writes and statistics read from any thread:
 * a relaxed load and store, no read-modify-write. */
static inline void
tbq_count (_Atomic uint64_t * c, uint64_t n)
{
  atomic_store_explicit (c, atomic_load_explicit (c, memory_order_relaxed) + n,
      memory_order_relaxed);
}

/* `size` bytes, zeroed, on a cache line of their own (nothing else shares
 * the first or the last line); NULL when out of memory. */
static inline void *
tbq_alloc_aligned (size_t size)
{
  size_t rounded = (size + TBQ_CACHELINE - 1) & ~(size_t) (TBQ_CACHELINE - 1);
  void *p;

  if (rounded < size)
    return NULL;
  p = aligned_alloc (TBQ_CACHELINE, rounded);
  if (p != NULL)
    memset (p, 0, rounded);
  return p;
}

#endif /* TBQ_MACHINE_H */

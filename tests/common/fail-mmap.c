/* Allocation failures on demand: see fail-mmap.h.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fail-mmap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define NO_SANITIZE \
  __attribute__ ((no_sanitize_address, no_sanitize_thread, \
          no_sanitize_undefined))

static _Atomic size_t fail_size;
static _Atomic uint64_t failed;

typedef void *(*MmapFunc) (void *, size_t, int, int, int, off_t);

NO_SANITIZE static void *
failing_mmap (const char *name, MmapFunc * real, void *addr, size_t len,
    int prot, int flags, int fd, off_t off)
{
  if (len != 0 && len == atomic_load_explicit (&fail_size,
          memory_order_relaxed)) {
    atomic_fetch_add_explicit (&failed, 1, memory_order_relaxed);
    errno = ENOMEM;
    return MAP_FAILED;
  }
  if (*real == NULL)
    *real = (MmapFunc) dlsym (RTLD_NEXT, name);
  return (*real) (addr, len, prot, flags, fd, off);
}

/* Both names: which one is called depends on _FILE_OFFSET_BITS. */
void *test_mmap (void *, size_t, int, int, int, off_t) __asm__ ("mmap");
void *test_mmap64 (void *, size_t, int, int, int, off_t) __asm__ ("mmap64");

NO_SANITIZE void *
test_mmap (void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
  static MmapFunc real;

  return failing_mmap ("mmap", &real, addr, len, prot, flags, fd, off);
}

NO_SANITIZE void *
test_mmap64 (void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
  static MmapFunc real;

  return failing_mmap ("mmap64", &real, addr, len, prot, flags, fd, off);
}

void
fail_mappings_of (size_t size)
{
  atomic_store (&fail_size, size);
}

uint64_t
failed_mappings (void)
{
  return atomic_load (&failed);
}

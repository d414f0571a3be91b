/* Write and read failures on demand: see fail-io.h.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fail-io.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

static _Atomic int write_errno, read_errno;

typedef ssize_t (*PwritevFunc) (int, const struct iovec *, int, off_t);
typedef ssize_t (*PreadFunc) (int, void *, size_t, off_t);

void
fail_writes_with (int err)
{
  atomic_store (&write_errno, err);
}

void
fail_reads_with (int err)
{
  atomic_store (&read_errno, err);
}

static ssize_t
do_pwritev (const char *name, PwritevFunc * real, int fd,
    const struct iovec *iov, int n, off_t off)
{
  int err = atomic_load (&write_errno);

  if (err != 0) {
    errno = err;
    return -1;
  }
  if (*real == NULL)
    *real = (PwritevFunc) dlsym (RTLD_NEXT, name);
  return (*real) (fd, iov, n, off);
}

static ssize_t
do_pread (const char *name, PreadFunc * real, int fd, void *buf, size_t len,
    off_t off)
{
  int err = atomic_load (&read_errno);

  if (err != 0) {
    errno = err;
    return -1;
  }
  if (*real == NULL)
    *real = (PreadFunc) dlsym (RTLD_NEXT, name);
  return (*real) (fd, buf, len, off);
}

/* Both names: which one is called depends on _FILE_OFFSET_BITS. */
ssize_t test_pwritev (int, const struct iovec *, int, off_t)
    __asm__ ("pwritev");
ssize_t test_pwritev64 (int, const struct iovec *, int, off_t)
    __asm__ ("pwritev64");
ssize_t test_pread (int, void *, size_t, off_t) __asm__ ("pread");
ssize_t test_pread64 (int, void *, size_t, off_t) __asm__ ("pread64");

ssize_t
test_pwritev (int fd, const struct iovec *iov, int n, off_t off)
{
  static PwritevFunc real;

  return do_pwritev ("pwritev", &real, fd, iov, n, off);
}

ssize_t
test_pwritev64 (int fd, const struct iovec *iov, int n, off_t off)
{
  static PwritevFunc real;

  return do_pwritev ("pwritev64", &real, fd, iov, n, off);
}

ssize_t
test_pread (int fd, void *buf, size_t len, off_t off)
{
  static PreadFunc real;

  return do_pread ("pread", &real, fd, buf, len, off);
}

ssize_t
test_pread64 (int fd, void *buf, size_t len, off_t off)
{
  static PreadFunc real;

  return do_pread ("pread64", &real, fd, buf, len, off);
}

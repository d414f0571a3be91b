/* The spill file's writes and reads failing on demand, for the tests of
 * what libtbq and the element do when a disk fills up or fails.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An executable built with fail-io.c defines pwritev and pread (and their
 * 64-bit names) itself, as fail-mmap.c defines mmap: it must export them
 * (export_dynamic) and link libdl for dlsym.  While an errno is set, every
 * call of that kind fails with it; otherwise it goes to the next
 * definition (libc's, or a sanitizer's interceptor).
 */
#ifndef TBQ_TEST_FAIL_IO_H
#define TBQ_TEST_FAIL_IO_H

/* Fail every pwritev (pread) with `err` from now on; 0: fail none. */
void fail_writes_with (int err);
void fail_reads_with (int err);

#endif

/* Allocation failures on demand, for the tests of what libtbq and the
 * element do when memory runs out.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An executable built with fail-mmap.c defines mmap (and mmap64) itself:
 * symbols of the executable come first in symbol lookup, so libtbq's calls
 * land there (the executable must export them: export_dynamic, and link
 * libdl for dlsym).  While a size is set, every mapping of exactly that
 * many bytes fails with ENOMEM; everything else goes to the next
 * definition (libc's, or a sanitizer's interceptor).  Pick a page-multiple
 * size that nothing else in the process maps.
 */
#ifndef TBQ_TEST_FAIL_MMAP_H
#define TBQ_TEST_FAIL_MMAP_H

#include <stddef.h>
#include <stdint.h>

/* Fail every mapping of `size` bytes from now on; 0: fail none. */
void fail_mappings_of (size_t size);

/* How many mappings failed so far. */
uint64_t failed_mappings (void);

#endif

/* Reading a fuzzer's input as a stream of little-endian numbers.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct
{
  const uint8_t *p;
  size_t n;
} FuzzInput;

/* The next `bytes` bytes (at most 8) as a number; zeros past the end. */
static inline uint64_t
fuzz_take (FuzzInput * in, unsigned bytes)
{
  uint64_t v = 0;
  unsigned i;

  for (i = 0; i < bytes; i++) {
    if (in->n > 0) {
      v |= (uint64_t) in->p[0] << (8 * i);
      in->p++;
      in->n--;
    }
  }
  return v;
}

#define FUZZ_CHECK(cond, ...) do { \
    if (!(cond)) { \
      fprintf (stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf (stderr, __VA_ARGS__); \
      fprintf (stderr, "\n"); \
      abort (); \
    } \
  } while (0)

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#endif

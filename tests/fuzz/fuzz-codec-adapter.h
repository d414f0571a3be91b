/* The fuzzers' one view of the element's copy-record codec.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * fuzz-codec-adapter.c is the only file that knows where the codec lives
 * and what it is called: when the codec moves or changes its signature,
 * only that file changes.
 */
#ifndef FUZZ_CODEC_ADAPTER_H
#define FUZZ_CODEC_ADAPTER_H

#include <gst/gst.h>

#include "tbq.h"

/* Once per process, before anything else. */
void fuzz_codec_init (void);
/* Bytes the copy record of `buffer` (payload `size`, list position
 * `list`) takes; *info receives what the encoder needs besides. */
gsize fuzz_codec_record_size (GstBuffer * buffer, gsize size, guint32 list,
    guint32 * info);
/* Write the record into `out` (fuzz_codec_record_size bytes). */
void fuzz_codec_encode (GstBuffer * buffer, gsize size, guint32 info,
    void *out);
/* The buffer a record read back from a sink block holds. */
GstBuffer *fuzz_codec_decode (const TbqRecord * rec, guint32 * list,
    gsize * size);
/* Buffer flags the record carries. */
guint32 fuzz_codec_flags_mask (void);
/* The record type tag of a copy record. */
guint16 fuzz_codec_record_type (void);
/* Largest payload a copy record may carry in `q`. */
gsize fuzz_codec_max_payload (TbqQueue * q);

#endif

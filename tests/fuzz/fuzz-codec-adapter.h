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

/* A copy record planned for a buffer, not yet written. */
typedef struct FuzzCodecPlan FuzzCodecPlan;

/* Once per process, before anything else. */
void fuzz_codec_init (void);
/* Plan the copy record of `buffer` (payload `size`, list position `list`)
 * for queue `q`: *record_size receives its bytes.  NULL when the codec
 * refuses to copy the buffer (it would lose something, or `q` cannot hold
 * it); the buffer then travels by reference. */
FuzzCodecPlan *fuzz_codec_plan (TbqQueue * q, GstBuffer * buffer,
    gsize size, guint32 list, gsize * record_size);
/* Write the planned record into `out` (*record_size bytes); frees `plan`. */
void fuzz_codec_encode (FuzzCodecPlan * plan, void *out);
/* The buffer a record read back from the sink pool holds. */
GstBuffer *fuzz_codec_decode (const TbqRecord * rec, guint32 * list,
    gsize * size);
/* What a discarded record owns (NULL: nothing). */
GstMiniObject *fuzz_codec_owned (const TbqRecord * rec);
/* Buffer flags the record carries. */
guint32 fuzz_codec_flags_mask (void);
/* The record type tag of a copy record. */
guint16 fuzz_codec_record_type (void);
/* Largest payload a copy record may carry in `q` (with any header). */
gsize fuzz_codec_max_payload (TbqQueue * q);
/* Alignment the payload of a record larger than `q`'s inline limit has
 * (a record that travels in an extent). */
gsize fuzz_codec_extent_alignment (void);

#endif

/* The status codes' names (tbq_status_to_string): a leaf, so that every
 * room of the library can name a status without reaching up to the queue.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tbq.h"

const char *
tbq_status_to_string (TbqStatus status)
{
  switch (status) {
    case TBQ_OK:
      return "ok";
    case TBQ_NO_SPACE:
      return "no space left in the current block";
    case TBQ_DROPPED:
      return "dropped: no free source block";
    case TBQ_TIMEOUT:
      return "timed out";
    case TBQ_INTERRUPTED:
      return "interrupted";
    case TBQ_EMPTY:
      return "empty";
    case TBQ_TOO_LARGE:
      return "record too large: larger than a source block and than any "
          "extent the sink pool's budget can hold";
    case TBQ_INVALID_CONFIG:
      return "invalid configuration";
    case TBQ_INVALID_ARGUMENT:
      return "invalid argument";
    case TBQ_NO_MEMORY:
      return "out of memory";
    case TBQ_BUSY:
      return "busy";
    case TBQ_LIMIT:
      return "too many writers";
    case TBQ_IO_ERROR:
      return "the spill file could not be read back";
  }
  return "unknown status";
}

/* A shared library whose ELF constructor leaks a block, as GLib's does
 * (tests/common/lsan-constructors.supp): what the suppression leak:_dl_init
 * must hide.  See lsan-probe.c. */
#include <stdlib.h>
#include <string.h>

void *volatile tbq_lsan_probe_kept;

__attribute__((constructor)) static void
leak_at_load (void)
{
  void *p = malloc (16384);

  memset (p, 0x5a, 16384);
  /* Reachable only through a pointer LeakSanitizer cannot see once it is
   * cleared: a direct leak, like GLib's quark block. */
  tbq_lsan_probe_kept = p;
  tbq_lsan_probe_kept = NULL;
}

/* Can LeakSanitizer's suppressions match here?
 *
 * The sanitizer builds suppress the blocks that shared libraries leak in
 * their ELF constructors (lsan-constructors.supp, tests/gst/lsan.supp) by
 * a function name, _dl_init.  A suppression by name matches only when
 * LeakSanitizer can name the frames, which needs a symbolizer
 * (llvm-symbolizer; tools/test names it in ASAN_SYMBOLIZER_PATH).  Without
 * one, every test that loads GLib fails with a leak that is not ours.
 *
 * This program links a library whose constructor leaks as GLib's does and
 * leaks nothing itself.  Run under the suite's LSAN_OPTIONS, it exits 0
 * only if the suppression matched; if not, LeakSanitizer's report ends the
 * process with an error after main, and the message below (printed first)
 * says why. */
#include <stdio.h>
#include <stdlib.h>

int
main (void)
{
  const char *sym = getenv ("ASAN_SYMBOLIZER_PATH");

  printf ("1..1\n");
  printf ("# LeakSanitizer must suppress a leak of a library constructor by "
      "its frame _dl_init (lsan-constructors.supp).\n");
  printf ("# If a leak report follows, the suppression could not match: "
      "LeakSanitizer names frames only with a symbolizer, and "
      "ASAN_SYMBOLIZER_PATH is %s%s.\n", sym ? sym : "not set",
      sym ? "" : " (tools/test sets it to llvm-symbolizer, Debian package "
      "llvm-14; an unset one is looked up on PATH)");
  /* The verdict is LeakSanitizer's, at exit: a report makes the exit
   * status non-zero, and meson counts the test failed after this line. */
  printf ("ok 1 - a library constructor's leak is suppressed by name\n");
  return 0;
}

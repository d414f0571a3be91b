/* A minimal TAP test runner for the C tests.
 *
 * Copyright (C) 2026 The tbqueue authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each test runs in a forked child, so a crash, a failed CHECK or a hang
 * (per-test alarm, TAP_TIMEOUT seconds, default 120) fails that test alone.
 * Output is TAP: "1..N" then "ok K - name" / "not ok K - name".
 * Run one test with: ./test-foo name
 */
#ifndef TBQ_TAP_H
#define TBQ_TAP_H

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct
{
  const char *name;
  void (*fn) (void);
} TapTest;

#define TAP_TEST(fn) { #fn, fn }

#define CHECK(cond) do { \
    if (!(cond)) { \
      fprintf (stdout, "# %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      fflush (stdout); \
      _exit (1); \
    } \
  } while (0)

#define CHECK_EQ(a, b) do { \
    uint64_t a_ = (uint64_t) (a), b_ = (uint64_t) (b); \
    if (a_ != b_) { \
      fprintf (stdout, "# %s:%d: CHECK failed: %s == %s (%" PRIu64 " != %" PRIu64 ")\n", \
          __FILE__, __LINE__, #a, #b, a_, b_); \
      fflush (stdout); \
      _exit (1); \
    } \
  } while (0)

/* A test that cannot run here (says why, then exits with this). */
#define TAP_SKIP_STATUS 77
#define TAP_SKIP(...) do { \
    printf ("# skipped: " __VA_ARGS__); \
    printf ("\n"); \
    fflush (stdout); \
    _exit (TAP_SKIP_STATUS); \
  } while (0)

static inline int
tap_run (const TapTest * tests, size_t n, int argc, char **argv)
{
  const char *only = argc > 1 ? argv[1] : NULL;
  const char *to = getenv ("TAP_TIMEOUT");
  unsigned timeout = to ? (unsigned) atoi (to) : 120;
  size_t i, planned = 0, k = 0;
  int failed = 0;

  for (i = 0; i < n; i++)
    if (only == NULL || strcmp (only, tests[i].name) == 0)
      planned++;
  printf ("1..%zu\n", planned);
  fflush (stdout);
  for (i = 0; i < n; i++) {
    pid_t pid;
    int status = 0;

    if (only != NULL && strcmp (only, tests[i].name) != 0)
      continue;
    k++;
    pid = fork ();
    if (pid == 0) {
      alarm (timeout);
      tests[i].fn ();
      fflush (stdout);
      /* exit(), not _exit(): sanitizers report and set the status at exit. */
      exit (0);
    }
    if (pid < 0 || waitpid (pid, &status, 0) != pid) {
      printf ("not ok %zu - %s # fork/wait failed\n", k, tests[i].name);
      failed++;
      continue;
    }
    if (WIFEXITED (status) && WEXITSTATUS (status) == 0) {
      printf ("ok %zu - %s\n", k, tests[i].name);
    } else if (WIFEXITED (status) && WEXITSTATUS (status) == TAP_SKIP_STATUS) {
      /* Not counted as passed (the reason is the test's last line). */
      printf ("ok %zu - %s # SKIP\n", k, tests[i].name);
    } else {
      if (WIFSIGNALED (status))
        printf ("# killed by signal %d%s\n", WTERMSIG (status),
            WTERMSIG (status) == SIGALRM ? " (timeout)" : "");
      printf ("not ok %zu - %s\n", k, tests[i].name);
      failed++;
    }
    fflush (stdout);
  }
  return failed ? 1 : 0;
}

#define TAP_MAIN(...) \
  int main (int argc, char **argv) { \
    static const TapTest tests_[] = { __VA_ARGS__ }; \
    return tap_run (tests_, sizeof tests_ / sizeof tests_[0], argc, argv); \
  }

#endif /* TBQ_TAP_H */

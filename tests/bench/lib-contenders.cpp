// lib-bench contenders written in C++: moodycamel::ReaderWriterQueue and
// atomic_queue (SPSC), behind the C interface of lib-bench.h.
//
// Copyright (C) 2026 The tbqueue authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The record is a trivially copyable struct of 8, 16, 32 or 64 bytes
// (Rec<S>); each queue stores it by value and the producer hands it over by
// copy (try_enqueue(const T&), try_push(T&)), as a user's message type
// would be.  Producer loops are instantiated per size and timing mode.

#include "lib-bench.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

#include <sched.h>

#include <atomic_queue/atomic_queue.h>
#include <readerwriterqueue/readerwriterqueue.h>

namespace {

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

template <unsigned S> struct Rec {
  uint64_t w[S / 8];
};

struct alignas(64) Verifier {
  alignas(64) std::atomic<uint64_t> received{0}; // consumer-owned
  uint64_t next_seq = 0;
  uint64_t errors = 0;
  uint64_t first_expected = 0;
  uint64_t first_got = 0;
  uint64_t sleeps = 0;
  alignas(64) std::atomic<int> stop{0};

  __attribute__((noinline)) void fail(uint64_t expected, uint64_t got) {
    if (errors++ == 0) {
      first_expected = expected;
      first_got = got;
    }
  }

  template <unsigned S> inline void take(const Rec<S> &r) {
    uint64_t seq = next_seq;
    if (UNLIKELY(!bench_payload_check(r.w, S, seq)))
      fail(seq, bench_payload_seq(r.w));
    next_seq = seq + 1;
    received.store(seq + 1, std::memory_order_release);
  }
};

// Producer loop: records [seq0, seq0 + n), one tick delta per full group.
// Payloads above 8 bytes are built BENCH_AHEAD records ahead (lib-bench.h).
template <unsigned S, bool TIMED, class W>
BENCH_INLINE void send_loop(uint64_t seq0, uint64_t n, uint64_t *ticks,
                            W &&write) {
  uint64_t seq = seq0, end = seq0 + n;
  Rec<S> ring[BENCH_RING];
  if (S > 8)
    for (unsigned k = 0; k < BENCH_AHEAD; k++)
      bench_payload_fill(ring[(seq0 + k) % BENCH_RING].w, S, seq0 + k);
  while (seq < end) {
    uint64_t gend = end - seq > BENCH_GROUP ? seq + BENCH_GROUP : end;
    bool full = gend - seq == BENCH_GROUP;
    uint64_t t0 = TIMED ? bench_ticks() : 0;
    for (; seq < gend; seq++) {
      if (S > 8) {
        write(ring[seq % BENCH_RING]);
        bench_payload_fill(ring[(seq + BENCH_AHEAD) % BENCH_RING].w, S,
                           seq + BENCH_AHEAD);
      } else {
        Rec<S> r;
        r.w[0] = seq;
        write(r);
      }
    }
    if (TIMED && full)
      *ticks++ = bench_ticks() - t0;
  }
}

struct CtxBase {
  unsigned size = 0;
  uint32_t idle_spins = 0;
  int64_t idle_sleep_ns = 0;
  uint64_t sent = 0;
  uint64_t failed_attempts = 0;
  uint64_t pressured = 0;
  std::thread consumer;
  Verifier v;

  virtual ~CtxBase() {}
  virtual void run_consumer() = 0;
  virtual void send(uint64_t seq0, uint64_t n, uint64_t *ticks) = 0;
  virtual void prefault(uint64_t capacity) = 0;

  void start() {
    if (!consumer.joinable())
      consumer = std::thread([this] { run_consumer(); });
  }
  void stop() {
    if (consumer.joinable()) {
      v.stop.store(1, std::memory_order_release);
      consumer.join();
    }
  }
  // Queue full: count, pause, yield every 1024 tries.
  __attribute__((noinline)) void retry_wait(uint64_t &fails) {
    if (fails == 0)
      pressured++;
    failed_attempts++;
    if (++fails % 1024 == 0)
      sched_yield();
    else
      bench_cpu_relax();
  }
  // Idle consumer: poll idle_spins times, then sleep (no wake-up exists).
  void idle(uint32_t &polls) {
    if (++polls < idle_spins) {
      bench_cpu_relax();
    } else {
      struct timespec ts = {0, idle_sleep_ns};
      v.sleeps++;
      nanosleep(&ts, nullptr);
      polls = 0;
    }
  }
};

// Q provides push(const Rec&) -> bool and consume(F) -> bool, where
// consume calls F on the oldest record (in place or a copy) and removes it.
template <class Q, unsigned S> struct Ctx final : CtxBase {
  Q q;
  explicit Ctx(uint64_t capacity) : q(capacity) {}

  void run_consumer() override {
    uint32_t polls = 0;
    auto check = [this](const Rec<S> &r) { v.take<S>(r); };
    for (;;) {
      if (q.consume(check)) {
        polls = 0;
        continue;
      }
      if (v.stop.load(std::memory_order_acquire)) {
        if (!q.consume(check))
          break;
        continue;
      }
      idle(polls);
    }
  }

  template <bool TIMED>
  __attribute__((flatten)) void send_t(uint64_t seq0, uint64_t n,
                                       uint64_t *ticks) {
    send_loop<S, TIMED>(seq0, n, ticks, [this](const Rec<S> &r) {
      uint64_t fails = 0;
      while (UNLIKELY(!q.push(r)))
        retry_wait(fails);
    });
  }

  // Touch every slot once (fill to capacity, then empty), before the
  // consumer starts, as libtbq pre-faults its pools.
  void prefault(uint64_t capacity) override {
    Rec<S> r{};
    for (uint64_t k = 0; k < capacity && q.push(r); k++) {
    }
    while (q.consume([](const Rec<S> &) {})) {
    }
  }

  void send(uint64_t seq0, uint64_t n, uint64_t *ticks) override {
    if (ticks)
      send_t<true>(seq0, n, ticks);
    else
      send_t<false>(seq0, n, ticks);
    sent += n;
  }
};

template <unsigned S> struct RwqQ {
  moodycamel::ReaderWriterQueue<Rec<S>> q;
  explicit RwqQ(uint64_t cap) : q(cap) {}
  inline __attribute__((always_inline)) bool push(const Rec<S> &r) { return q.try_enqueue(r); }
  template <class F> inline bool consume(F &&f) {
    Rec<S> *p = q.peek();
    if (p == nullptr)
      return false;
    f(*p);
    q.pop();
    return true;
  }
};

template <unsigned S> struct AqQ {
  atomic_queue::AtomicQueueB2<Rec<S>, std::allocator<Rec<S>>, true, false,
                              true>
      q;
  explicit AqQ(uint64_t cap) : q(static_cast<unsigned>(cap)) {}
  inline __attribute__((always_inline)) bool push(Rec<S> &r) { return q.try_push(r); }
  inline __attribute__((always_inline)) bool push(const Rec<S> &r) {
    Rec<S> c = r;
    return q.try_push(c);
  }
  template <class F> inline bool consume(F &&f) {
    Rec<S> r;
    if (!q.try_pop(r))
      return false;
    f(r);
    return true;
  }
};

template <template <unsigned> class Q>
CtxBase *make_ctx(const BenchQueueConfig *cfg) {
  switch (cfg->size) {
  case 8:
    return new Ctx<Q<8>, 8>(cfg->capacity);
  case 16:
    return new Ctx<Q<16>, 16>(cfg->capacity);
  case 32:
    return new Ctx<Q<32>, 32>(cfg->capacity);
  default:
    return new Ctx<Q<64>, 64>(cfg->capacity);
  }
}

template <template <unsigned> class Q>
void *open_q(const BenchQueueConfig *cfg, char *err, size_t err_size) {
  CtxBase *c;
  try {
    c = make_ctx<Q>(cfg);
  } catch (const std::exception &e) {
    snprintf(err, err_size, "%s", e.what());
    return nullptr;
  }
  c->size = cfg->size;
  c->idle_spins = cfg->idle_spins;
  c->idle_sleep_ns = cfg->idle_sleep_ns;
  c->prefault(cfg->capacity);
  if (!cfg->defer_start)
    c->start();
  return c;
}

void cpp_start(void *ctx) { static_cast<CtxBase *>(ctx)->start(); }

void cpp_send(void *ctx, uint64_t seq0, uint64_t n, uint64_t *ticks) {
  static_cast<CtxBase *>(ctx)->send(seq0, n, ticks);
}

uint64_t cpp_received(void *ctx) {
  return static_cast<CtxBase *>(ctx)->v.received.load(
      std::memory_order_acquire);
}

void cpp_counters(void *ctx, BenchCounters *bc) {
  CtxBase *c = static_cast<CtxBase *>(ctx);
  *bc = BenchCounters();
  bc->sent = c->sent;
  bc->received = c->v.received.load(std::memory_order_acquire);
  bc->errors = c->v.errors;
  bc->first_error_expected = c->v.first_expected;
  bc->first_error_got = c->v.first_got;
  bc->failed_attempts = c->failed_attempts;
  bc->pressured = c->pressured;
  bc->consumer_sleeps = c->v.sleeps;
}

void cpp_close(void *ctx) {
  CtxBase *c = static_cast<CtxBase *>(ctx);
  c->stop();
  delete c;
}

} // namespace

extern "C" {
BENCH_NOINLINE void bench_cg_rwq(void *ctx, uint64_t seq0, uint64_t n);
BENCH_NOINLINE void bench_cg_atomic_queue(void *ctx, uint64_t seq0,
                                          uint64_t n);

BENCH_NOINLINE void bench_cg_rwq(void *ctx, uint64_t seq0, uint64_t n) {
  cpp_send(ctx, seq0, n, nullptr);
}

BENCH_NOINLINE void bench_cg_atomic_queue(void *ctx, uint64_t seq0,
                                          uint64_t n) {
  cpp_send(ctx, seq0, n, nullptr);
}

static const BenchContender cpp_contenders[] = {
    {"rwq", "moodycamel ReaderWriterQueue",
     "ReaderWriterQueue<Rec<S>> (default 512-slot blocks) sized for the "
     "capacity up front; try_enqueue(const T&) copies the record in; the "
     "consumer verifies in place (peek) then pop(); full: pause and retry "
     "(yield every 1024 tries)",
     2, 1, 0, open_q<RwqQ>, cpp_start, cpp_send, bench_cg_rwq, cpp_received,
     cpp_counters, cpp_close},
    {"atomic-queue", "atomic_queue AtomicQueueB2 SPSC",
     "AtomicQueueB2<Rec<S>, allocator, MAXIMIZE_THROUGHPUT, !TOTAL_ORDER, "
     "SPSC> of capacity rounded up to a power of two; try_push copies the "
     "record in, try_pop copies it out; full: pause and retry (yield every "
     "1024 tries)",
     2, 1, 0, open_q<AqQ>, cpp_start, cpp_send, bench_cg_atomic_queue,
     cpp_received, cpp_counters, cpp_close},
};

const BenchContender *bench_cpp_contenders(size_t *n) {
  *n = sizeof cpp_contenders / sizeof cpp_contenders[0];
  return cpp_contenders;
}

const char *bench_cpp_compiler(void) {
#ifdef __clang__
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown C++ compiler";
#endif
}
}

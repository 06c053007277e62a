// fault_probe: what touching a page of a mapped file costs on this machine,
// against reading the same bytes with pread (a diagnostic behind the notes
// on `msp search` at 100,000 records in bench/README.md, "msp as a
// process"; not part of the build).
//
//   gcc -O2 -o /tmp/fault_probe bench/fault_probe.c
//   /tmp/fault_probe DATA_DIR/vector/index.msv [touches]
//
// Prints the cost per random page touched through a fresh MAP_PRIVATE
// mapping, per 1.5 KB pread at random offsets, and for 1,000 random
// touches in the first 13 MB after nothing / MADV_POPULATE_READ / touching
// the range in order (the file should be in the page cache: cat it first).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static double NowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fault_probe FILE [touches]\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (16 << 20)) {
    fprintf(stderr, "fault_probe: %s: cannot open, or smaller than 16 MB\n", argv[1]);
    return 1;
  }
  const size_t n = (size_t)st.st_size;
  const int touches = argc > 2 ? atoi(argv[2]) : 500;
  volatile long sink = 0;
  srand(1);
  char* p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return 1;
  double t0 = NowMs();
  for (int i = 0; i < touches; ++i) sink += p[((size_t)rand() * 4096) % n];
  const double touch = (NowMs() - t0) * 1e3 / touches;
  munmap(p, n);
  char buf[1536];
  t0 = NowMs();
  for (int i = 0; i < touches; ++i) {
    if (pread(fd, buf, sizeof buf, (off_t)(((size_t)rand() * 4096) % (n - sizeof buf))) > 0) sink += buf[0];
  }
  const double read = (NowMs() - t0) * 1e3 / touches;
  printf("random page touched through a mapping: %.2f us; 1.5 KB pread: %.2f us\n", touch, read);

  const size_t span = (size_t)13 << 20;
  static const char* kModes[] = {"nothing", "MADV_POPULATE_READ", "touching it in order"};
  for (int mode = 0; mode < 3; ++mode) {
    p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return 1;
    t0 = NowMs();
    if (mode == 1 && madvise(p, span, MADV_POPULATE_READ) != 0) perror("madvise");
    if (mode == 2) {
      for (size_t i = 0; i < span; i += 4096) sink += p[i];
    }
    const double t1 = NowMs();
    srand(3);
    for (int i = 0; i < 1000; ++i) sink += p[((size_t)rand() * 4096) % span];
    printf("13 MB after %s: %.2f ms, then 1,000 random touches %.2f ms\n", kModes[mode], t1 - t0, NowMs() - t1);
    munmap(p, span);
  }
  return 0;
}

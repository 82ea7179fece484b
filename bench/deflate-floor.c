/* The compression floor for bench/: libdeflate (kwheel's engine) at one
 * level over the same bytes, cut into the same 1 MiB chunks, on P threads,
 * and nothing else: no hashing, no CRC, no block-boundary scan, no archive,
 * no writes. kwheel / this is what kwheel's own work costs on top.
 *
 *   bench/bundle-scaling compiles it against kwheel's built-in libdeflate:
 *   cc -O2 -pthread -Ithird_party/libdeflate bench/deflate-floor.c \
 *      build/libkwheel_libdeflate.a -o deflate-floor
 *   deflate-floor THREADS LEVEL FILE...   # prints "<input bytes> <output bytes>"
 *
 * Each file is read with read(2) into a per-thread buffer, chunk by chunk,
 * as kwheel reads its members. */
#include <fcntl.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (1u << 20)

struct job { const char *path; off_t off; size_t len; };
static struct job *jobs;
static size_t njobs;
static atomic_size_t next_job, out_bytes;
static int level;

static void *worker(void *arg) {
  (void)arg;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
  unsigned char *in = malloc(CHUNK), *out = malloc(CHUNK + CHUNK / 8 + 1024);
  if (!c || !in || !out) { perror("alloc"); exit(1); }
  for (size_t j; (j = atomic_fetch_add(&next_job, 1)) < njobs;) {
    int fd = open(jobs[j].path, O_RDONLY);
    if (fd < 0 || pread(fd, in, jobs[j].len, jobs[j].off) != (ssize_t)jobs[j].len) { perror(jobs[j].path); exit(1); }
    close(fd);
    size_t n = libdeflate_deflate_compress(c, in, jobs[j].len, out, CHUNK + CHUNK / 8 + 1024);
    if (!n) { fputs("libdeflate: no room\n", stderr); exit(1); }
    atomic_fetch_add(&out_bytes, n);
  }
  libdeflate_free_compressor(c);
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) { fputs("usage: deflate-floor THREADS LEVEL FILE...\n", stderr); return 2; }
  int threads = atoi(argv[1]);
  level = atoi(argv[2]);
  size_t in_bytes = 0;
  for (int i = 3; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) { perror(argv[i]); return 1; }
    in_bytes += (size_t)st.st_size;
    for (off_t off = 0; off == 0 || off < st.st_size; off += CHUNK) {
      jobs = realloc(jobs, (njobs + 1) * sizeof *jobs);
      size_t left = (size_t)(st.st_size - off);
      jobs[njobs++] = (struct job){argv[i], off, left < CHUNK ? left : CHUNK};
      if (st.st_size == 0) break;
    }
  }
  pthread_t t[256];
  if (threads < 1 || threads > 256) threads = 1;
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("%zu %zu\n", in_bytes, (size_t)out_bytes);
  return 0;
}

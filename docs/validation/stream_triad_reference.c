/* Reference STREAM triad for docs/validation/host_membw_vs_stream.sh: the plain OpenMP loop that
 * STREAM times, built with gcc -O3 -fopenmp. Best of REPS timed runs, bytes counted as STREAM
 * counts them (3 arrays x 8 bytes per element).
 * Usage: stream_triad_reference ELEMENTS [REPS] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ELEMENTS [REPS]\n", argv[0]);
    return 2;
  }
  const long n = atol(argv[1]);
  const int reps = argc > 2 ? atoi(argv[2]) : 10;
  double* a = malloc(sizeof(double) * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  double* c = malloc(sizeof(double) * (size_t)n);
  if (!a || !b || !c) return 1;
  const double s = 3.0;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 3.0;
  }
  double best = 1e30;
  for (int k = 0; k < reps + 1; ++k) {
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = omp_get_wtime() - t0;
    if (k > 0 && t < best) best = t; /* the first run is a warm-up, as in STREAM */
  }
  for (long i = 0; i < n; ++i) {
    if (a[i] != 11.0) {
      fprintf(stderr, "wrong result at %ld\n", i);
      return 1;
    }
  }
  printf("threads %d elements %ld best_s %.6f triad_GBps %.2f\n", omp_get_max_threads(), n, best,
         3.0 * 8.0 * (double)n / best / 1e9);
  return 0;
}

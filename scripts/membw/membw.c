// membw measures the memory read bandwidth that T threads reach streaming
// a buffer far larger than the caches (the ceiling of a decode step, which
// reads every weight once per token). BENCHMARKS.md quotes its figure.
//
//   gcc -O3 -march=native -fopenmp scripts/membw/membw.c -o /tmp/membw
//   OMP_NUM_THREADS=2 /tmp/membw
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
	const size_t bytes = (size_t)1 << 30; // 1 GiB
	const size_t n = bytes / sizeof(__m256i);
	__m256i *buf = aligned_alloc(64, bytes);
	memset(buf, 1, bytes);
	double best = 0;
	long long sink = 0;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now();
		long long total = 0;
#pragma omp parallel reduction(+ : total)
		{
			__m256i acc = _mm256_setzero_si256();
#pragma omp for schedule(static)
			for (size_t i = 0; i < n; i += 4) {
				acc = _mm256_xor_si256(acc, _mm256_load_si256(buf + i));
				acc = _mm256_xor_si256(acc, _mm256_load_si256(buf + i + 1));
				acc = _mm256_xor_si256(acc, _mm256_load_si256(buf + i + 2));
				acc = _mm256_xor_si256(acc, _mm256_load_si256(buf + i + 3));
			}
			total += _mm256_extract_epi64(acc, 0);
		}
		double gbs = bytes / (now() - t0) / 1e9;
		sink += total;
		if (gbs > best) best = gbs;
	}
	printf("threads %d: read bandwidth %.1f GB/s (best of 5, 1 GiB buffer) [%lld]\n", omp_get_max_threads(), best, sink & 1);
	free(buf);
	return 0;
}

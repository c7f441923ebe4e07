// kernelbw times a packed decode kernel (one activation row, as a decode
// step runs it) streaming a 1000 MB packed matrix on T threads, alternated
// in one process with a plain read of the same bytes, and the same kernel
// over 600 KB that stays in the L2 caches (its arithmetic alone). The
// machines these figures come from move 40–80 GB/s between minutes, so
// only the ratio of neighbouring lines is worth quoting. The weights are
// arbitrary bytes: the timing does not depend on their values.
//
//   gcc -O3 -march=native -fopenmp -Ipkg/compute/quant scripts/kernelbw/kernelbw.c pkg/compute/quant/kernels*.c -o /tmp/kernelbw
//   OMP_NUM_THREADS=2 /tmp/kernelbw q4_k 2048 5
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels.h"

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// kernel runs the packed kernel over ng groups of gb bytes at p, reps
// times, each thread over its share in calls of at most 256 KB (as
// pkg/compute/cpu's pool makes them) whose outputs land in the thread's part
// of out, each call's in the same place, as a model's decode step writes
// a vector that stays in cache; GB/s.
static double kernel(int type, const uint8_t *p, int ng, size_t gb, int n, int reps, float *out) {
	static uint8_t x[1 << 16]; // activations: any bytes will do
	double t0 = now();
#pragma omp parallel
	{
		const int t = omp_get_thread_num(), nt = omp_get_num_threads();
		const int g0 = ng / nt * t, g1 = t == nt - 1 ? ng : ng / nt * (t + 1);
		const int step = gb < (256 << 10) ? (int)((256 << 10) / gb) : 1; // the pool's calls
		for (int r = 0; r < reps; r++)
			for (int g = g0; g < g1; g += step) {
				const int k = g1 - g < step ? g1 - g : step;
				hx_r16_rows(type, p + (size_t)g * gb, k, x, 0, 1, n, out + (size_t)t * 65536, 0);
			}
	}
	return (double)reps * ng * gb / (now() - t0) / 1e9;
}

// plain reads the bytes at p with 256-bit loads, as scripts/membw does; GB/s.
static double plain(const uint8_t *p, size_t bytes) {
	long long sink = 0;
	double t0 = now();
#pragma omp parallel reduction(+ : sink)
	{
		__m256i acc = _mm256_setzero_si256();
#pragma omp for schedule(static)
		for (size_t i = 0; i < bytes / 256 * 256; i += 256)
			for (int q = 0; q < 8; q++) acc = _mm256_xor_si256(acc, _mm256_load_si256((const __m256i *)(p + i + 32 * q)));
		sink += _mm256_extract_epi64(acc, 0);
	}
	double gbs = bytes / (now() - t0) / 1e9;
	return gbs + (double)(sink & 1) * 1e-12;
}

int main(int argc, char **argv) {
	const char *name = argc > 1 ? argv[1] : "q4_k";
	const int n = argc > 2 ? atoi(argv[2]) : 2048, rounds = argc > 3 ? atoi(argv[3]) : 5;
	const int type = !strcmp(name, "q8_0") ? HX_Q8_0 : !strcmp(name, "q6_k") ? HX_Q6_K : HX_Q4_K;
	const size_t gb = hx_r16_group_bytes(type, n);
	if (!hx_vnni() || gb == 0) {
		fprintf(stderr, "kernelbw: no packed %s kernel for %d columns on this CPU (it needs AVX-512 VNNI)\n", name, n);
		return 1;
	}
	const int ng = (int)(((size_t)1000 << 20) / gb), small = (int)((600 << 10) / gb);
	uint8_t *p = aligned_alloc(64, (ng * gb + 63) / 64 * 64);
	float *out = malloc(sizeof(float) * 65536 * (size_t)omp_get_max_threads());
	if (!p || !out) return 1;
	for (size_t i = 0; i < ng * gb; i++) p[i] = (uint8_t)((i * 2654435761u) >> 13);
	kernel(type, p, small, gb, n, 200, out); // warm up
	printf("%s, %d columns, %d threads: GB/s\n", name, n, omp_get_max_threads());
	for (int r = 0; r < rounds; r++) {
		const double k = kernel(type, p, ng, gb, n, 1, out), m = plain(p, ng * gb);
		const double c = kernel(type, p, small, gb, n, 2000, out);
		printf("kernel %.1f  plain read %.1f  ratio %.2f  in cache %.1f\n", k, m, k / m, c);
	}
	free(p);
	free(out);
	return 0;
}

// vecports times AVX2 vector operations alone and in pairs, in cycles,
// to see which share execution pipes on this CPU: two operations that
// take one cycle a pair together, where each alone issues two a cycle,
// compete for the same two pipes. It is what the BENCHMARKS notes on the
// AVX2 kernels' bounds rest on.
//
//	gcc -O2 -mavx2 -mfma scripts/vecports/vecports.c -o /tmp/vecports && /tmp/vecports
//
// The clock is taken from vpaddd, which every Zen and Intel core of the
// last decade issues four a cycle; on another core, read the figures as
// ratios to that line.
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

// B keeps v in a register and opaque to the compiler.
#define B(v) __asm__ volatile("" : "+x"(v))
#define N 100000000L
typedef __m256i I;
typedef __m256 F;

// PAIR times six independent chains of OX interleaved with six of OY
// (ns per pair of operations).
#define PAIR(TX, OX, TY, OY)                                                                                            \
	({                                                                                                              \
		TX x0, x1, x2, x3, x4, x5, bx;                                                                          \
		TY y0, y1, y2, y3, y4, y5, by;                                                                          \
		x0 = x1 = x2 = x3 = x4 = x5 = bx = init_##TX();                                                         \
		y0 = y1 = y2 = y3 = y4 = y5 = by = init_##TY();                                                         \
		B(bx);                                                                                                  \
		B(by);                                                                                                  \
		double t = now();                                                                                       \
		for (long n = 0; n < N; n++) {                                                                          \
			x0 = OX(x0, bx), y0 = OY(y0, by), x1 = OX(x1, bx), y1 = OY(y1, by), x2 = OX(x2, bx);            \
			y2 = OY(y2, by), x3 = OX(x3, bx), y3 = OY(y3, by), x4 = OX(x4, bx), y4 = OY(y4, by);            \
			x5 = OX(x5, bx), y5 = OY(y5, by);                                                               \
			B(x0); B(x1); B(x2); B(x3); B(x4); B(x5);                                                       \
			B(y0); B(y1); B(y2); B(y3); B(y4); B(y5);                                                       \
		}                                                                                                       \
		(now() - t) / (N * 6.0) * 1e9;                                                                          \
	})

static inline I init_I(void) { return _mm256_set1_epi32(0x01010101); }
static inline F init_F(void) { return _mm256_set1_ps(1.0001f); }
static inline I add(I a, I b) { return _mm256_add_epi32(a, b); }
static inline I maddubs(I a, I b) { return _mm256_maddubs_epi16(a, b); }
static inline I madd(I a, I b) { return _mm256_madd_epi16(a, b); }
static inline I shuf(I a, I b) { return _mm256_shuffle_epi8(a, b); }
static inline I sign(I a, I b) { return _mm256_sign_epi8(a, b); }
static inline I srai(I a, I b) { (void)b; return _mm256_srai_epi32(a, 16); }
static inline I cvt(I a, I b) { (void)b; return _mm256_castps_si256(_mm256_cvtepi32_ps(a)); }
static inline I unpk(I a, I b) { return _mm256_unpacklo_epi32(a, b); }
static inline I unpk64(I a, I b) { return _mm256_unpackhi_epi64(a, b); }
// bcst and ldv load from memory (a broadcast of 32 bits, a whole vector);
// the asm keeps the compiler from hoisting the load out of the loop.
static const int gmem[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static inline I bcst(I a, I b) {
	(void)a, (void)b;
	I r;
	__asm__ volatile("vpbroadcastd %1, %0" : "=x"(r) : "m"(gmem[0]));
	return r;
}
static inline I ldv(I a, I b) {
	(void)a, (void)b;
	I r;
	__asm__ volatile("vmovdqu %1, %0" : "=x"(r) : "m"(gmem));
	return r;
}
static inline I absb(I a, I b) { (void)b; return _mm256_abs_epi8(a); }
static inline I hadd(I a, I b) { return _mm256_hadd_epi32(a, b); }
static inline I perm(I a, I b) { return _mm256_permute2x128_si256(a, b, 0x21); }
static inline I cvtw(I a, I b) { (void)b; return _mm256_cvtepi8_epi16(_mm256_castsi256_si128(a)); }
static inline F vfma(F a, F b) { return _mm256_fmadd_ps(a, b, b); }
static inline F fadd(F a, F b) { return _mm256_add_ps(a, b); }

int main(void) {
	const double cyc = PAIR(I, add, I, add) / 2 * 4; // ns per cycle: vpaddd issues four a cycle
	printf("clock %.2f GHz (from vpaddd)\n", 1 / cyc);
#define SHOW(name, v) printf("%-22s %.2f cycles a pair\n", name, (v) / cyc)
	SHOW("vpmaddubsw alone", PAIR(I, maddubs, I, maddubs));
	SHOW("vpmaddwd alone", PAIR(I, madd, I, madd));
	SHOW("vcvtdq2ps alone", PAIR(I, cvt, I, cvt));
	SHOW("vfmadd alone", PAIR(F, vfma, F, vfma));
	SHOW("vpsrad alone", PAIR(I, srai, I, srai));
	SHOW("maddubs + madd", PAIR(I, maddubs, I, madd));
	SHOW("maddubs + cvtdq2ps", PAIR(I, maddubs, I, cvt));
	SHOW("maddubs + vfmadd", PAIR(I, maddubs, F, vfma));
	SHOW("maddubs + vaddps", PAIR(I, maddubs, F, fadd));
	SHOW("maddubs + vpshufb", PAIR(I, maddubs, I, shuf));
	SHOW("maddubs + vpsignb", PAIR(I, maddubs, I, sign));
	SHOW("maddubs + vpsrad", PAIR(I, maddubs, I, srai));
	SHOW("maddubs + vpaddd", PAIR(I, maddubs, I, add));
	SHOW("vfmadd + cvtdq2ps", PAIR(F, vfma, I, cvt));
	SHOW("vpunpckldq alone", PAIR(I, unpk, I, unpk));
	SHOW("maddubs + vpunpckldq", PAIR(I, maddubs, I, unpk));
	SHOW("maddubs + vpunpckhqdq", PAIR(I, maddubs, I, unpk64));
	SHOW("vfmadd + vpunpckldq", PAIR(F, vfma, I, unpk));
	SHOW("vpsignb alone", PAIR(I, sign, I, sign));
	SHOW("madd + vpsignb", PAIR(I, madd, I, sign));
	SHOW("maddubs + vpabsb", PAIR(I, maddubs, I, absb));
	SHOW("vpunpckldq + vpaddd", PAIR(I, unpk, I, add));
	SHOW("vpunpckldq + vpsignb", PAIR(I, unpk, I, sign));
	SHOW("broadcast alone", PAIR(I, bcst, I, bcst));
	SHOW("maddubs + broadcast", PAIR(I, maddubs, I, bcst));
	SHOW("maddubs + load", PAIR(I, maddubs, I, ldv));
	SHOW("vpsignb + broadcast", PAIR(I, sign, I, bcst));
	SHOW("vphaddd alone", PAIR(I, hadd, I, hadd));
	SHOW("maddubs + vphaddd", PAIR(I, maddubs, I, hadd));
	SHOW("maddubs + vperm2i128", PAIR(I, maddubs, I, perm));
	SHOW("maddubs + vpmovsxbw", PAIR(I, maddubs, I, cvtw));
	return 0;
}

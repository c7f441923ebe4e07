// The emulator's runtime: launches run block after block on the calling
// thread; the threads of a block are fibers, switched cooperatively. A
// thread runs until it reaches a barrier — __syncthreads, or a shuffle (a
// barrier of its warp: lanes write their value, and read their source
// lane's once every lane of the warp has arrived) — or returns. When no
// thread can run, the scheduler releases every warp whose lanes all wait at
// a shuffle, else the block's barrier once every thread waits at it;
// anything else (a lane that has returned or waits at __syncthreads while
// others of its warp shuffle, a __syncthreads some threads never reach) is
// reported as an error rather than left to hang. The threads of each round
// run in a pseudo-random (fixed-seed) order, so a missing barrier shows in
// tests whichever thread was meant to go first.
//
// On x86-64 ELF systems a switch is a few instructions of assembly
// (callee-saved registers and the stack pointer); elsewhere, or built with
// -DHXEMU_UCONTEXT, it is swapcontext, which also saves the signal mask
// with a system call per switch (some twenty times slower, same
// behaviour).
#if defined(__APPLE__)
#define _XOPEN_SOURCE 700 // ucontext
#define _DARWIN_C_SOURCE  // and MAP_ANONYMOUS with it
#endif
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"
#include "emu_internal.h"
#include "kernels_hash.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

#if defined(__x86_64__) && defined(__ELF__) && !defined(HXEMU_UCONTEXT)
#define HXEMU_ASM_SWITCH 1
// hxemu_switch saves the callee-saved registers on the current stack,
// stores the stack pointer in *from and continues on the stack to, which
// holds what an earlier hxemu_switch saved, or a new fiber's first frame
// (zeroed registers and hxemu_trampoline as the return address).
extern "C" void hxemu_switch(void **from, void *to);
extern "C" void hxemu_trampoline();
asm(R"(
	.text
	.p2align 4
	.type hxemu_switch, @function
hxemu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size hxemu_switch, .-hxemu_switch
	.p2align 4
	.type hxemu_trampoline, @function
hxemu_trampoline:
	call hxemu_fiber_entry@PLT
	ud2
	.size hxemu_trampoline, .-hxemu_trampoline
)");
#endif

namespace hxemu {
namespace {

enum State : unsigned char { kRunnable, kAtBarrier, kAtShuffle, kReturned };

struct Fiber {
#ifdef HXEMU_ASM_SWITCH
	void *sp; // saved stack pointer
#else
	ucontext_t ctx;
#endif
	State state;
	unsigned tid; // linear thread index in the block
	uint3 idx;
	uint64_t shuffles; // shuffles completed (selects the exchange buffer)
};

// kStackBytes is each fiber's stack, above an inaccessible guard page.
constexpr size_t kStackBytes = 256 << 10;
constexpr int kMaxThreads = 1024;

// Launch is the state of the running launch (one at a time).
struct Launch {
	const KernelInfo *kernel;
	const hx_emu_arg *args;
	std::vector<Fiber> fibers;
#ifdef HXEMU_ASM_SWITCH
	void *schedSp; // the scheduler's saved stack pointer
#else
	ucontext_t sched;
#endif
	Fiber *cur = nullptr;
	std::string err; // set by a failing thread
	std::vector<uint64_t> xbuf[2]; // warp exchange buffers: [warp*32 + lane]
};

Launch *launch;           // the running launch
std::mutex launchMu;      // serialises launches
std::vector<char *> stacks; // fiber stacks, by thread index, kept between launches
size_t pageBytes;

// yield switches from the running thread f to the scheduler.
void yield(Fiber *f) {
#ifdef HXEMU_ASM_SWITCH
	hxemu_switch(&f->sp, launch->schedSp);
#else
	swapcontext(&f->ctx, &launch->sched);
#endif
}

// resume switches from the scheduler to thread f.
void resume(Fiber *f) {
#ifdef HXEMU_ASM_SWITCH
	hxemu_switch(&launch->schedSp, f->sp);
#else
	swapcontext(&launch->sched, &f->ctx);
#endif
}

// fail ends the running thread with an error (the first one wins); the
// scheduler abandons the launch.
[[noreturn]] void fail(const std::string &msg) {
	Fiber *f = launch->cur;
	if (launch->err.empty()) launch->err = msg;
	f->state = kReturned;
	yield(f);
	abort(); // never resumed
}

// fiberMain is the body of every thread: the kernel, then back to the
// scheduler for good.
[[noreturn]] void fiberMain() {
	launch->kernel->invoke(launch->args);
	Fiber *f = launch->cur;
	f->state = kReturned;
	yield(f);
	abort(); // never resumed
}

// start makes f a new thread that runs fiberMain on stack.
void start(Fiber &f, char *stack) {
#ifdef HXEMU_ASM_SWITCH
	void **sp = reinterpret_cast<void **>(stack + pageBytes + kStackBytes) - 7;
	for (int i = 0; i < 6; i++) sp[i] = nullptr; // r15 … rbp
	sp[6] = reinterpret_cast<void *>(hxemu_trampoline);
	f.sp = sp;
#else
	getcontext(&f.ctx);
	f.ctx.uc_stack.ss_sp = stack + pageBytes;
	f.ctx.uc_stack.ss_size = kStackBytes;
	f.ctx.uc_link = nullptr;
	makecontext(&f.ctx, reinterpret_cast<void (*)()>(fiberMain), 0);
#endif
}

char *stackFor(unsigned tid) {
	if (stacks.size() <= tid) stacks.resize(tid + 1, nullptr);
	if (stacks[tid] == nullptr) {
		void *p = mmap(nullptr, kStackBytes + pageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) return nullptr;
		mprotect(p, pageBytes, PROT_NONE); // overflow faults instead of corrupting
		stacks[tid] = static_cast<char *>(p);
	}
	return stacks[tid];
}

std::string where(const Fiber *f) {
	char buf[160];
	snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u)", blockIdx.x, blockIdx.y, blockIdx.z, f->idx.x,
	         f->idx.y, f->idx.z);
	return buf;
}

std::string blockWhere() {
	char buf[80];
	snprintf(buf, sizeof buf, "block (%u,%u,%u)", blockIdx.x, blockIdx.y, blockIdx.z);
	return buf;
}

// runBlock runs the block blockIdx to its end; it returns an error message
// or "".
std::string runBlock(unsigned n, uint64_t &rng) {
	Launch &L = *launch;
	for (unsigned t = 0; t < n; t++) {
		Fiber &f = L.fibers[t];
		f.state = kRunnable;
		f.tid = t;
		f.idx = uint3{t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
		f.shuffles = 0;
		char *stack = stackFor(t);
		if (stack == nullptr) return "out of memory for thread stacks";
		start(f, stack);
	}
	std::vector<unsigned> order(n);
	for (unsigned t = 0; t < n; t++) order[t] = t;
	const unsigned warps = (n + 31) / 32;
	for (;;) {
		// run every runnable thread to its next barrier, in a shuffled order
		for (unsigned i = n; i > 1; i--) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			std::swap(order[i - 1], order[rng % i]);
		}
		for (unsigned t : order) {
			Fiber &f = L.fibers[t];
			if (f.state != kRunnable) continue;
			L.cur = &f;
			threadIdx = f.idx;
			resume(&f);
			if (!L.err.empty()) return where(&f) + ": " + L.err;
		}
		// release the warps whose lanes all wait at a shuffle
		bool released = false;
		unsigned atBarrier = 0, returned = 0;
		for (unsigned w = 0; w < warps; w++) {
			const unsigned lo = 32 * w, hi = lo + 32 < n ? lo + 32 : n;
			unsigned shuffling = 0;
			for (unsigned t = lo; t < hi; t++) shuffling += L.fibers[t].state == kAtShuffle;
			if (shuffling == hi - lo) {
				for (unsigned t = lo; t < hi; t++) L.fibers[t].state = kRunnable;
				released = true;
			} else if (shuffling > 0) {
				unsigned first = lo;
				while (L.fibers[first].state == kAtShuffle) first++;
				return where(&L.fibers[first]) + ": " +
				       (L.fibers[first].state == kReturned ? "returned" : "waits at __syncthreads") + " while " +
				       std::to_string(shuffling) + " lanes of its warp wait at a shuffle (every lane must shuffle)";
			}
			for (unsigned t = lo; t < hi; t++) {
				atBarrier += L.fibers[t].state == kAtBarrier;
				returned += L.fibers[t].state == kReturned;
			}
		}
		if (released) continue;
		if (returned == n) return "";
		if (returned > 0) {
			return blockWhere() + ": " + std::to_string(atBarrier) + " threads wait at __syncthreads while " +
			       std::to_string(returned) + " have returned (every thread must reach it)";
		}
		for (unsigned t = 0; t < n; t++) L.fibers[t].state = kRunnable; // all at the barrier
	}
}

} // namespace

void syncthreads() {
	Fiber *f = launch->cur;
	f->state = kAtBarrier;
	yield(f);
}

uint64_t shuffle(unsigned mask, uint64_t bits, ShuffleMode mode, int arg, int width) {
	if (mask != 0xffffffffu) fail("shuffle with a partial mask (the emulator needs full warps)");
	if (width <= 0 || width > 32 || (width & (width - 1)) != 0) fail("shuffle width not a power of 2 up to 32");
	Fiber *f = launch->cur;
	const unsigned lane = f->tid & 31, warp = f->tid >> 5;
	std::vector<uint64_t> &buf = launch->xbuf[f->shuffles & 1];
	buf[32 * warp + lane] = bits;
	f->state = kAtShuffle;
	yield(f);
	f->shuffles++;
	const int l = (int)lane, base = l & ~(width - 1), sub = l & (width - 1);
	int src = l;
	switch (mode) {
	case kXor:
		src = l ^ arg;
		if (src >= base + width) src = l; // a later group: own value
		break;
	case kDown:
		src = sub + arg < width ? l + arg : l;
		break;
	case kUp:
		src = sub >= arg ? l - arg : l;
		break;
	case kIdx:
		src = base + (arg & (width - 1));
		break;
	}
	const unsigned n = blockDim.x * blockDim.y * blockDim.z;
	if (src < 0 || 32 * warp + (unsigned)src >= n) src = l; // past a partial warp
	return buf[32 * warp + src];
}

void trap() { fail("__trap()"); }

} // namespace hxemu

using namespace hxemu;

#ifdef HXEMU_ASM_SWITCH
// hxemu_fiber_entry is where hxemu_trampoline starts a new thread.
extern "C" __attribute__((used, visibility("hidden"))) void hxemu_fiber_entry() { fiberMain(); }
#endif

extern "C" {

int hx_emu_kernel_count(void) { return kKernelCount; }
const char *hx_emu_kernel_name(int k) { return kKernels[k].name; }
const char *hx_emu_kernel_sig(int k) { return kKernels[k].sig; }
const char *hx_emu_source_hash(void) { return HX_KERNELS_SOURCE_SHA256; }

char *hx_emu_launch(int k, const int *grid, const int *block, const hx_emu_arg *args) {
	std::lock_guard<std::mutex> lock(launchMu);
	if (k < 0 || k >= kKernelCount) return strdup("no such kernel");
	for (int i = 0; i < 3; i++) {
		if (grid[i] <= 0 || block[i] <= 0) return strdup("empty grid or block");
	}
	const long n = (long)block[0] * block[1] * block[2];
	if (n > kMaxThreads) return strdup("more than 1024 threads in a block");
	if (pageBytes == 0) pageBytes = (size_t)sysconf(_SC_PAGESIZE);
	Launch L;
	L.kernel = &kKernels[k];
	L.args = args;
	L.fibers.resize(n);
	const unsigned warps = (unsigned)(n + 31) / 32;
	L.xbuf[0].assign(32 * warps, 0);
	L.xbuf[1].assign(32 * warps, 0);
	gridDim = dim3{(unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2]};
	blockDim = dim3{(unsigned)block[0], (unsigned)block[1], (unsigned)block[2]};
	launch = &L;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (const char *c = L.kernel->name; *c; c++) rng = (rng ^ (unsigned char)*c) * 0x100000001b3ull;
	std::string err;
	for (unsigned z = 0; z < gridDim.z && err.empty(); z++) {
		for (unsigned y = 0; y < gridDim.y && err.empty(); y++) {
			for (unsigned x = 0; x < gridDim.x && err.empty(); x++) {
				blockIdx = uint3{x, y, z};
				err = runBlock((unsigned)n, rng);
			}
		}
	}
	launch = nullptr;
	return err.empty() ? nullptr : strdup(err.c_str());
}

char *hx_emu_launch_raw(int k, const int *grid, const int *block, const uint64_t *slots) {
	if (k < 0 || k >= kKernelCount) return strdup("no such kernel");
	std::vector<hx_emu_arg> args(strlen(kKernels[k].sig) + 1);
	for (size_t i = 0; kKernels[k].sig[i] != 0; i++) {
		const uint32_t lo = (uint32_t)slots[i];
		switch (kKernels[k].sig[i]) {
		case 'n':
			args[i].i = (int)(int32_t)lo;
			break;
		case 'x':
			memcpy(&args[i].f, &lo, 4);
			break;
		default:
			args[i].p = reinterpret_cast<void *>((uintptr_t)slots[i]);
		}
	}
	return hx_emu_launch(k, grid, block, args.data());
}

void *hx_emu_alloc(size_t n, void **mapping, size_t *mapLen) {
	if (pageBytes == 0) pageBytes = (size_t)sysconf(_SC_PAGESIZE);
	const size_t data = (n + pageBytes - 1) / pageBytes * pageBytes;
	void *p = mmap(nullptr, data + pageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return nullptr;
	char *base = static_cast<char *>(p);
	mprotect(base + data, pageBytes, PROT_NONE);
	*mapping = p;
	*mapLen = data + pageBytes;
	return base + data - n;
}

void hx_emu_free(void *mapping, size_t mapLen) { munmap(mapping, mapLen); }

float hx_emu_h2f(unsigned short h) { return __half2float(__ushort_as_half(h)); }
unsigned short hx_emu_f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }

} // extern "C"

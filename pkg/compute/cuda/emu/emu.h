// C interface of the emulator (emu.cc) for the Go package.
#ifndef HX_EMU_H
#define HX_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// hx_emu_arg is one kernel argument: p for a pointer, i for an int, f for
// a float.
typedef struct {
	void *p;
	int i;
	float f;
} hx_emu_arg;

// The kernel table: names and signatures, one character per parameter
// (f float*, F const float*, i int*, I const int*, h unsigned short*, H
// const unsigned short*, b unsigned char*, B const unsigned char*, q
// unsigned long long*, n int, x float).
int hx_emu_kernel_count(void);
const char *hx_emu_kernel_name(int k);
const char *hx_emu_kernel_sig(int k);

// hx_emu_launch runs kernel k over grid × block threads with args (as many
// as its signature has). It returns NULL, or an error message to free.
char *hx_emu_launch(int k, const int *grid, const int *block, const hx_emu_arg *args);

// hx_emu_launch_raw is hx_emu_launch with the arguments as 64-bit slots,
// as a CUDA launch passes them: an address for a pointer, the low 32 bits
// of the slot for an int or (as bits) a float.
char *hx_emu_launch_raw(int k, const int *grid, const int *block, const uint64_t *slots);

// hx_emu_alloc maps n bytes that end where an inaccessible page begins (so
// reading or writing past the end faults), returning the data pointer and
// the whole mapping (to unmap with hx_emu_free); NULL when out of memory.
void *hx_emu_alloc(size_t n, void **mapping, size_t *mapLen);
void hx_emu_free(void *mapping, size_t mapLen);

// The shim's F16 conversions, for tests.
float hx_emu_h2f(unsigned short h);
unsigned short hx_emu_f2h(float f);

// The source hash of the kernels compiled in (kernels_hash.h).
const char *hx_emu_source_hash(void);

// HX_Q8K_REC of the kernels compiled in.
int hx_emu_q8k_record(void);

#ifdef __cplusplus
}
#endif

#endif

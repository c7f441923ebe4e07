//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <cuda.h>

// The graph calls are found at run time (dlsym in the already loaded
// libcuda), so that a driver without one of them only loses graphs; the
// unversioned names are the ABI of the CUDA 11.8 headers the runner is
// built with.
typedef CUresult (*hx_create_t)(CUgraph *, unsigned int);
typedef CUresult (*hx_add_t)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*hx_inst_t)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*hx_set_t)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*hx_launch_t)(CUgraphExec, CUstream);
typedef CUresult (*hx_exec_destroy_t)(CUgraphExec);
typedef CUresult (*hx_destroy_t)(CUgraph);

static hx_create_t hx_create;
static hx_add_t hx_add;
static hx_inst_t hx_inst;
static hx_set_t hx_set;
static hx_launch_t hx_glaunch;
static hx_exec_destroy_t hx_exec_destroy;
static hx_destroy_t hx_destroy;

// Programmatic edges (CUDA 12.3 and later drivers; the CUDA 11.8 headers
// lack them): CUgraphEdgeData and cuGraphAddDependencies_v2 as the driver
// defines them.
typedef struct {
	unsigned char from_port, to_port, type, reserved[5];
} hx_edge_data;
typedef CUresult (*hx_adddeps_t)(CUgraph, const CUgraphNode *, const CUgraphNode *, const hx_edge_data *, size_t);
static hx_adddeps_t hx_adddeps;
enum {
	HX_PORT_PROGRAMMATIC = 1, // CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
	HX_DEP_PROGRAMMATIC = 1,  // CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
};

// hx_pdl_init finds cuGraphAddDependencies_v2; 0 when the driver lacks it.
static int hx_pdl_init(void) {
	hx_adddeps = (hx_adddeps_t)dlsym(RTLD_DEFAULT, "cuGraphAddDependencies_v2");
	return hx_adddeps != 0;
}

// hx_graph_init finds the graph calls; 0 when one is missing.
static int hx_graph_init(void) {
	hx_create = (hx_create_t)dlsym(RTLD_DEFAULT, "cuGraphCreate");
	hx_add = (hx_add_t)dlsym(RTLD_DEFAULT, "cuGraphAddKernelNode");
	hx_inst = (hx_inst_t)dlsym(RTLD_DEFAULT, "cuGraphInstantiateWithFlags");
	hx_set = (hx_set_t)dlsym(RTLD_DEFAULT, "cuGraphExecKernelNodeSetParams");
	hx_glaunch = (hx_launch_t)dlsym(RTLD_DEFAULT, "cuGraphLaunch");
	hx_exec_destroy = (hx_exec_destroy_t)dlsym(RTLD_DEFAULT, "cuGraphExecDestroy");
	hx_destroy = (hx_destroy_t)dlsym(RTLD_DEFAULT, "cuGraphDestroy");
	return hx_create && hx_add && hx_inst && hx_set && hx_glaunch && hx_exec_destroy && hx_destroy;
}

// hx_node_params fills p for a launch of f with the n 8-byte slots at
// slots (params holds the pointers to them).
static CUresult hx_node_params(CUDA_KERNEL_NODE_PARAMS *p, void **params, CUfunction f, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned long long *slots, int n) {
	if (n > 32) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) params[i] = &slots[i];
	p->func = f;
	p->gridDimX = gx; p->gridDimY = gy; p->gridDimZ = gz;
	p->blockDimX = bx; p->blockDimY = 1; p->blockDimZ = 1;
	p->sharedMemBytes = 0;
	p->kernelParams = params;
	p->extra = 0;
	return CUDA_SUCCESS;
}

// hx_graph_add appends a kernel node after prev (none when prev is 0).
static CUresult hx_graph_add(CUgraph g, CUgraphNode prev, CUgraphNode *node, CUfunction f, unsigned gx, unsigned gy,
                             unsigned gz, unsigned bx, unsigned long long *slots, int n) {
	CUDA_KERNEL_NODE_PARAMS p;
	void *params[32];
	CUresult r = hx_node_params(&p, params, f, gx, gy, gz, bx, slots, n);
	if (r != CUDA_SUCCESS) return r;
	return hx_add(node, g, prev ? &prev : 0, prev ? 1 : 0, &p);
}

// hx_graph_add_pdl appends a kernel node after prev (not 0) by a
// programmatic edge: the node's blocks may start once every block of prev
// has passed its griddepcontrol.launch_dependents (hx_grid_wait).
static CUresult hx_graph_add_pdl(CUgraph g, CUgraphNode prev, CUgraphNode *node, CUfunction f, unsigned gx,
                                 unsigned gy, unsigned gz, unsigned bx, unsigned long long *slots, int n) {
	CUresult r = hx_graph_add(g, 0, node, f, gx, gy, gz, bx, slots, n);
	if (r != CUDA_SUCCESS) return r;
	hx_edge_data e = {HX_PORT_PROGRAMMATIC, 0, HX_DEP_PROGRAMMATIC, {0, 0, 0, 0, 0}};
	return hx_adddeps(g, &prev, node, &e, 1);
}

static CUresult hx_graph_set(CUgraphExec e, CUgraphNode node, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned long long *slots, int n) {
	CUDA_KERNEL_NODE_PARAMS p;
	void *params[32];
	CUresult r = hx_node_params(&p, params, f, gx, gy, gz, bx, slots, n);
	if (r != CUDA_SUCCESS) return r;
	return hx_set(e, node, &p);
}

static CUresult hx_graph_create(CUgraph *g) { return hx_create(g, 0); }
static CUresult hx_graph_instantiate(CUgraphExec *e, CUgraph g) { return hx_inst(e, g, 0); }
static CUresult hx_graph_launch(CUgraphExec e) { return hx_glaunch(e, 0); }
static void hx_graph_free(CUgraphExec e, CUgraph g) {
	if (e) hx_exec_destroy(e);
	if (g) hx_destroy(g);
}
*/
import "C"

import (
	"fmt"
	"log/slog"
	"unsafe"
)

// graphsFound reports whether the driver has the graph calls (looked up
// once per device).
func graphsFound() bool { return C.hx_graph_init() != 0 }

// pdlFound reports whether the driver can chain graph nodes by
// programmatic edges (programmatic dependent launch).
func pdlFound() bool { return C.hx_pdl_init() != 0 }

// cuGraph is a CUDA graph of kernel nodes in a chain and its executable.
type cuGraph struct {
	g     C.CUgraph
	exec  C.CUgraphExec
	nodes []C.CUgraphNode
	fns   []kernelFn
}

// newGraph implements grapher: the launches chained by programmatic edges
// where the device takes them (d.pdl), else by plain ones. A driver that
// has the programmatic edges' call but fails a graph built with them gets
// plain edges from then on.
func (d *device) newGraph(recs []launchRec) (graph, error) {
	g, err := d.buildGraph(recs, d.pdl)
	if err != nil && d.pdl {
		slog.Warn("CUDA graphs go on without programmatic dependent launch", "err", err)
		d.pdl = false
		return d.buildGraph(recs, false)
	}
	return g, err
}

// buildGraph builds and instantiates the graph of recs, each node after
// the one before it (pdl: by programmatic edges).
func (d *device) buildGraph(recs []launchRec, pdl bool) (graph, error) {
	cg := &cuGraph{nodes: make([]C.CUgraphNode, len(recs)), fns: make([]kernelFn, len(recs))}
	if r := C.hx_graph_create(&cg.g); r != C.CUDA_SUCCESS {
		return nil, cuErr("cuGraphCreate", r)
	}
	var prev C.CUgraphNode
	for i := range recs {
		rec := &recs[i]
		f, ok := d.fns[rec.name]
		if !ok {
			cg.destroy()
			return nil, fmt.Errorf("no kernel %s in the loaded module", rec.name)
		}
		cg.fns[i] = f
		s, n := slotsOf(rec)
		gx, gy, gz, bx := C.uint(rec.grid[0]), C.uint(rec.grid[1]), C.uint(rec.grid[2]), C.uint(rec.block)
		var r C.CUresult
		if pdl && prev != nil {
			r = C.hx_graph_add_pdl(cg.g, prev, &cg.nodes[i], C.CUfunction(f), gx, gy, gz, bx, s, n)
		} else {
			r = C.hx_graph_add(cg.g, prev, &cg.nodes[i], C.CUfunction(f), gx, gy, gz, bx, s, n)
		}
		if r != C.CUDA_SUCCESS {
			cg.destroy()
			return nil, cuErr("adding graph node "+rec.name, r)
		}
		prev = cg.nodes[i]
	}
	if r := C.hx_graph_instantiate(&cg.exec, cg.g); r != C.CUDA_SUCCESS {
		cg.destroy()
		return nil, cuErr("cuGraphInstantiateWithFlags", r)
	}
	return cg, nil
}

// slotsOf is rec's parameter slots as hx_graph_add takes them.
func slotsOf(rec *launchRec) (*C.ulonglong, C.int) {
	if len(rec.slots) == 0 {
		return nil, 0
	}
	return (*C.ulonglong)(unsafe.Pointer(&rec.slots[0])), C.int(len(rec.slots))
}

func (g *cuGraph) set(i int, rec *launchRec) error {
	s, n := slotsOf(rec)
	r := C.hx_graph_set(g.exec, g.nodes[i], C.CUfunction(g.fns[i]), C.uint(rec.grid[0]), C.uint(rec.grid[1]), C.uint(rec.grid[2]),
		C.uint(rec.block), s, n)
	if r != C.CUDA_SUCCESS {
		return cuErr("cuGraphExecKernelNodeSetParams", r)
	}
	return nil
}

func (g *cuGraph) run() error {
	if r := C.hx_graph_launch(g.exec); r != C.CUDA_SUCCESS {
		return cuErr("cuGraphLaunch", r)
	}
	return nil
}

func (g *cuGraph) destroy() {
	C.hx_graph_free(g.exec, g.g)
	g.exec, g.g = nil, nil
}

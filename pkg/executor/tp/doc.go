// Package tp runs one model tensor-parallel over several CPU rank
// processes: the ring all-reduce between ranks (Ring), the leader's
// executor that drives rank 0 in-process and ranks 1..N-1 as `helexa
// worker` subprocesses over the runner RPC (Load), and the worker's side
// (OpenWorker).
package tp

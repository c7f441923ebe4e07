// Package tp runs one model tensor-parallel over several rank processes:
// the ring all-reduce between ranks (Ring), the leader's executor that
// drives rank 0 in-process and ranks 1..N-1 as worker subprocesses over
// the runner RPC (Load), and the worker's side (WorkerOpener). It knows
// no device: a Device (local.Shards on the CPU) opens each rank's shard.
package tp

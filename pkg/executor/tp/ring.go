package tp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Ring is one rank's end of a ring all-reduce between the rank processes of
// a tensor-parallel group, over Unix sockets: rank r sends to r+1 and
// receives from r-1. It implements compute.Reducer. A Ring is driven by one
// goroutine; Close may be called from any.
type Ring struct {
	rank, size int
	next, prev net.Conn
	timeout    time.Duration
	seq        uint64 // all-reduces done, checked against the peers'
	out, in    []byte
	mu         sync.Mutex
	err        error // sticky: a broken ring stays broken
}

// SocketPath is where rank listens inside a rendezvous directory.
func SocketPath(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank-%d.sock", rank))
}

// frameHeader is the size of a chunk's header: the all-reduce sequence
// number and the chunk's value count.
const frameHeader = 12

// JoinRing connects rank to its neighbours through sockets in dir and
// checks the ring with a sentinel all-reduce (every rank contributes
// rank+1; all must see size(size+1)/2). Every rank of the group must call
// it; it waits for the others until ctx ends. timeout bounds each later
// exchange: a neighbour silent for longer breaks the ring.
func JoinRing(ctx context.Context, dir string, rank, size int, timeout time.Duration) (*Ring, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("rank %d of a group of %d", rank, size)
	}
	r := &Ring{rank: rank, size: size, timeout: timeout}
	if size == 1 {
		return r, nil
	}
	if err := r.connect(ctx, dir); err != nil {
		r.Close()
		return nil, err
	}
	sum := []float32{float32(rank + 1)}
	if err := r.AllReduce(sum); err != nil {
		r.Close()
		return nil, fmt.Errorf("sentinel all-reduce: %w", err)
	}
	if want := float32(size * (size + 1) / 2); sum[0] != want {
		r.Close()
		return nil, fmt.Errorf("sentinel all-reduce gave %v, want %v: the ranks disagree on the group", sum[0], want)
	}
	return r, nil
}

// connect listens for the previous rank and dials the next one.
func (r *Ring) connect(ctx context.Context, dir string) error {
	path := SocketPath(dir, r.rank)
	_ = os.Remove(path)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("rank %d listening on %s: %w", r.rank, path, err)
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			err = expectHello(c, (r.rank+r.size-1)%r.size, r.size)
			r.prev = c
		}
		accepted <- err
	}()
	next, err := dialRetry(ctx, SocketPath(dir, (r.rank+1)%r.size))
	if err == nil {
		r.next = next
		err = sendHello(next, r.rank, r.size)
	}
	if err != nil {
		ln.Close()
		<-accepted
		return fmt.Errorf("rank %d connecting to rank %d: %w", r.rank, (r.rank+1)%r.size, err)
	}
	if err := <-accepted; err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("rank %d waiting for rank %d: %w", r.rank, (r.rank+r.size-1)%r.size, err)
	}
	return nil
}

// dialRetry dials a Unix socket until it exists and answers or ctx ends.
func dialRetry(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func sendHello(c net.Conn, rank, size int) error {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], uint32(rank))
	binary.LittleEndian.PutUint32(b[4:], uint32(size))
	_, err := c.Write(b[:])
	return err
}

func expectHello(c net.Conn, rank, size int) error {
	var b [8]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return fmt.Errorf("reading the hello: %w", err)
	}
	gotRank, gotSize := int(binary.LittleEndian.Uint32(b[:])), int(binary.LittleEndian.Uint32(b[4:]))
	if gotRank != rank || gotSize != size {
		return fmt.Errorf("connected by rank %d of %d, want rank %d of %d", gotRank, gotSize, rank, size)
	}
	return nil
}

// ErrRingBroken is wrapped by every error of a ring that failed once.
var ErrRingBroken = errors.New("tensor-parallel ring broken")

// AllReduce implements compute.Reducer: reduce-scatter then all-gather
// around the ring. Each chunk's sum is computed by one rank and copied to
// the others, so every rank ends with the same bits.
func (r *Ring) AllReduce(data []float32) error {
	if r.size == 1 {
		return nil
	}
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.seq++
	n := r.size
	chunk := func(i int) []float32 {
		i = ((i % n) + n) % n
		lo, hi := i*len(data)/n, (i+1)*len(data)/n
		return data[lo:hi]
	}
	for s := 0; s < n-1; s++ {
		if err := r.exchange(chunk(r.rank-s), chunk(r.rank-s-1), true); err != nil {
			return r.broken(err)
		}
	}
	for s := 0; s < n-1; s++ {
		if err := r.exchange(chunk(r.rank+1-s), chunk(r.rank-s), false); err != nil {
			return r.broken(err)
		}
	}
	return nil
}

// exchange sends send to the next rank while receiving into recv from the
// previous one, adding (reduce) or copying the received values.
func (r *Ring) exchange(send, recv []float32, add bool) error {
	deadline := time.Now().Add(r.timeout)
	if r.timeout > 0 {
		_ = r.next.SetWriteDeadline(deadline)
		_ = r.prev.SetReadDeadline(deadline)
	}
	r.out = encodeFrame(r.out[:0], r.seq, send)
	sent := make(chan error, 1)
	go func() {
		_, err := r.next.Write(r.out)
		sent <- err
	}()
	rerr := r.receive(recv, add)
	if rerr != nil {
		r.closeConns() // unblock the send, and let the peers see the failure
	}
	if err := <-sent; err != nil && rerr == nil {
		return fmt.Errorf("sending to rank %d: %w", (r.rank+1)%r.size, err)
	}
	return rerr
}

func (r *Ring) receive(recv []float32, add bool) error {
	need := frameHeader + 4*len(recv)
	if cap(r.in) < need {
		r.in = make([]byte, need)
	}
	in := r.in[:need]
	if _, err := io.ReadFull(r.prev, in); err != nil {
		return fmt.Errorf("receiving from rank %d: %w", (r.rank+r.size-1)%r.size, err)
	}
	seq, count := binary.LittleEndian.Uint64(in), int(binary.LittleEndian.Uint32(in[8:]))
	if seq != r.seq || count != len(recv) {
		return fmt.Errorf("rank %d is out of step: all-reduce %d of %d values, this rank is at %d of %d",
			(r.rank+r.size-1)%r.size, seq, count, r.seq, len(recv))
	}
	body := in[frameHeader:]
	for i := range recv {
		v := math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
		if add {
			recv[i] += v
		} else {
			recv[i] = v
		}
	}
	return nil
}

func encodeFrame(b []byte, seq uint64, vals []float32) []byte {
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// broken records the first failure and closes the connections, so that
// the neighbours fail at once too; later calls return the failure.
func (r *Ring) broken(err error) error {
	r.mu.Lock()
	if r.err == nil {
		r.err = fmt.Errorf("%w: rank %d: %w", ErrRingBroken, r.rank, err)
	}
	err = r.err
	r.mu.Unlock()
	r.closeConns()
	return err
}

func (r *Ring) closeConns() {
	for _, c := range []net.Conn{r.next, r.prev} {
		if c != nil {
			c.Close()
		}
	}
}

// Close breaks the ring: a rank blocked in AllReduce fails at once, and so
// do its neighbours.
func (r *Ring) Close() error {
	r.broken(errors.New("closed"))
	return nil
}

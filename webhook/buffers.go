package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
)

// bufferChunk is the unit in which a body's memory is allocated as it
// arrives: a caller that promises a large body and trickles it in makes the
// process allocate what it sent, rounded up to a chunk.
const bufferChunk = 32 << 10

// buffers is the memory budget for request bodies, in the whole server and
// per source address. A request takes its declared length (the body limit
// when it declares none) before its first byte is read and gives it back
// once it is answered: all or nothing, so that requests waiting for room
// hold none, and two large bodies can never each hold half of what both
// need and wait for each other until their deadlines.
type buffers struct {
	total, perAddress int64

	mu     sync.Mutex
	used   int64
	byAddr map[string]int64
	// freed is closed, and replaced, whenever bytes are given back.
	freed chan struct{}
	// peak is the most bytes ever held at once, for tests.
	peak int64
}

func newBuffers(total, perAddress int64) *buffers {
	return &buffers{total: total, perAddress: perAddress, byAddr: map[string]int64{}, freed: make(chan struct{})}
}

// take waits until n bytes fit both bounds, or ctx ends.
func (b *buffers) take(ctx context.Context, addr string, n int64) error {
	for {
		b.mu.Lock()
		if b.used+n <= b.total && b.byAddr[addr]+n <= b.perAddress {
			b.used += n
			b.byAddr[addr] += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *buffers) give(addr string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.byAddr[addr] -= n; b.byAddr[addr] <= 0 {
		delete(b.byAddr, addr)
	}
	close(b.freed)
	b.freed = make(chan struct{})
}

// errNoBuffer is returned when the budget had no room for a body before
// the request's read deadline.
var errNoBuffer = errors.New("no memory for the request body")

// readBody takes room for a body of up to size bytes, waiting until ctx
// ends, then reads r, at most size bytes, and returns it as chunks. The
// caller gives back the bytes held once the request is answered; they are
// held on error too (zero when no room was found).
func (b *buffers) readBody(ctx context.Context, addr string, r io.Reader, size int64) ([][]byte, int64, error) {
	if err := b.take(ctx, addr, size); err != nil {
		return nil, 0, errNoBuffer
	}
	var chunks [][]byte
	var read int64
	for read < size {
		chunk := make([]byte, min(bufferChunk, size-read))
		n, err := io.ReadFull(r, chunk)
		read += int64(n)
		if n > 0 {
			chunks = append(chunks, chunk[:n])
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return chunks, size, nil
		case err != nil:
			return chunks, size, err
		}
	}
	return chunks, size, nil
}

// chunksReader reads the chunks readBody returned, in order.
func chunksReader(chunks [][]byte) io.ReadCloser {
	rs := make([]io.Reader, len(chunks))
	for i, c := range chunks {
		rs[i] = bytes.NewReader(c)
	}
	return io.NopCloser(io.MultiReader(rs...))
}

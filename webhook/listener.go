package webhook

import (
	"net"
	"sync"
)

// DefaultMaxConnsPerAddress bounds the open connections from one source
// address. The apiserver calls over HTTP/2, many calls to a connection, and
// opens another only when one is full (MaxConcurrentStreams, 64 here), so
// 32 carry it far past anything the slots serve; a caller that opens
// connections to trickle headers or bodies stops there.
const DefaultMaxConnsPerAddress = 32

// limitListener closes at once any connection from an address that already
// holds max open ones. It counts before TLS, so a handshake that never
// completes counts too.
type limitListener struct {
	net.Listener
	max     int
	refused func()

	mu   sync.Mutex
	open map[string]int
}

// LimitPerAddress wraps l so that each source address holds at most max
// connections, at least 1 (Options.Validate); refused, when set, is called
// for each one closed.
func LimitPerAddress(l net.Listener, max int, refused func()) net.Listener {
	return &limitListener{Listener: l, max: max, refused: refused, open: map[string]int{}}
}

// Accept returns the next connection within the bound; the others are
// closed without a word, which the caller sees as a reset.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := sourceAddress(c.RemoteAddr().String())
		l.mu.Lock()
		ok := l.open[addr] < l.max
		if ok {
			l.open[addr]++
		}
		l.mu.Unlock()
		if ok {
			return &countedConn{Conn: c, l: l, addr: addr}, nil
		}
		// Counted before it is closed, so that whoever sees the close
		// also sees the count.
		if l.refused != nil {
			l.refused()
		}
		_ = c.Close()
	}
}

func (l *limitListener) done(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

// countedConn gives its place back once, however often it is closed.
type countedConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.done(c.addr) })
	return err
}

package e2e

import (
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// portPool hands out free loopback ports from a range of its own, so that
// the test families do not take each other's ports. env, when set, holds
// another range ("lo-hi").
type portPool struct {
	env    string
	lo, hi int

	mu   sync.Mutex
	next int
}

// take returns a port of the pool that nothing listens on now.
func (p *portPool) take(t *testing.T) int {
	t.Helper()
	lo, hi := p.lo, p.hi
	if spec := os.Getenv(p.env); spec != "" {
		a, b, _ := strings.Cut(spec, "-")
		lo, _ = strconv.Atoi(a)
		hi, _ = strconv.Atoi(b)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next < lo || p.next > hi {
		p.next = lo
	}
	for i := 0; i <= hi-lo; i++ {
		port := p.next
		p.next++
		if p.next > hi {
			p.next = lo
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatalf("no free port in %d-%d", lo, hi)
	return 0
}

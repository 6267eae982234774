package node

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawIO reads and writes a client socket with raw system calls through the
// connection's RawConn. Go's sockets are non-blocking, so a read or write
// returns at once (EAGAIN when it would block, and the RawConn then waits in
// the netpoller as net.Conn does). A raw call does not enter the scheduler's
// system-call state: on a busy node, loopback writes take long enough that
// the runtime's monitor thread would otherwise keep handing the goroutine's
// processor to another thread (measured: 12% of a cluster node's CPU in
// runtime.sysmon under redis-benchmark). Deadlines still apply: the waits
// are the RawConn's.
type rawIO struct {
	rc      syscall.RawConn
	buf     []byte
	n       int
	err     error
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool

	// With a poller (a client socket on Linux): ready is signalled when
	// input arrives, maybe says a read may find input (after a signal,
	// or after a read that filled its buffer), deadline bounds the wait
	// (SetReadDeadline), tryFn reads once without waiting and sets again
	// when the socket was empty.
	poll     *poller
	ready    chan struct{}
	maybe    bool
	again    bool
	deadline time.Time
	timer    *time.Timer
	tryFn    func(fd uintptr) bool
}

// newRawIO returns nil when conn is not a socket with a RawConn.
func newRawIO(conn net.Conn) *rawIO {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{rc: rc}
	r.readFn = func(fd uintptr) bool {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.buf[0])), uintptr(len(r.buf)))
		switch {
		case errno == syscall.EAGAIN || errno == syscall.EINTR:
			return false
		case errno != 0:
			r.err = errno
		case n == 0:
			r.err = io.EOF
		default:
			r.n = int(n)
		}
		return true
	}
	r.tryFn = func(fd uintptr) bool {
		if !r.readFn(fd) {
			r.again = true
		}
		return true
	}
	r.writeFn = func(fd uintptr) bool {
		for len(r.buf) > 0 {
			n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.buf[0])), uintptr(len(r.buf)))
			switch {
			case errno == syscall.EAGAIN:
				return false
			case errno == syscall.EINTR:
				continue
			case errno != 0:
				r.err = errno
				return true
			}
			r.n += int(n)
			r.buf = r.buf[n:]
		}
		return true
	}
	return r
}

// Read reads into b, waiting for data as net.Conn.Read does.
func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.ready != nil && !r.poll.isDead() {
		return r.pollRead(b)
	}
	return r.goRead(b)
}

// goRead reads into b, waiting in Go's netpoller.
func (r *rawIO) goRead(b []byte) (int, error) {
	r.buf, r.n, r.err = b, 0, nil
	if err := r.rc.Read(r.readFn); err != nil {
		return 0, err
	}
	r.buf = nil
	return r.n, r.err
}

// Write writes all of b, waiting for room as net.Conn.Write does.
func (r *rawIO) Write(b []byte) (int, error) {
	r.buf, r.n, r.err = b, 0, nil
	if len(b) == 0 {
		return 0, nil
	}
	err := r.rc.Write(r.writeFn)
	r.buf = nil
	if err != nil {
		return r.n, err
	}
	return r.n, r.err
}

// pollRead is Read for a socket in the poller: it reads when input may be
// there and otherwise waits for the poller's signal. The read goes through
// the RawConn (without waiting) so that it never reaches a descriptor
// number that a concurrent Close freed.
func (r *rawIO) pollRead(b []byte) (int, error) {
	for {
		if r.maybe {
			r.buf, r.n, r.err, r.again = b, 0, nil, false
			err := r.rc.Read(r.tryFn)
			r.buf = nil
			if err != nil {
				return 0, err
			}
			if !r.again {
				// A short read emptied the socket: input that comes
				// later is signalled.
				r.maybe = r.err == nil && r.n == len(b)
				return r.n, r.err
			}
			r.maybe = false
		}
		if r.poll.isDead() {
			// The poller stopped: wait in Go's netpoller from now on.
			return r.goRead(b)
		}
		if err := r.wait(); err != nil {
			return 0, err
		}
		r.maybe = true
	}
}

// wait blocks until the poller's signal or the read deadline.
func (r *rawIO) wait() error {
	if r.deadline.IsZero() {
		<-r.ready
		return nil
	}
	d := time.Until(r.deadline)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
	select {
	case <-r.ready:
		r.timer.Stop()
		return nil
	case <-r.timer.C:
		return os.ErrDeadlineExceeded
	}
}

// wake signals input (or a close) to the reading goroutine.
func (r *rawIO) wake() {
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

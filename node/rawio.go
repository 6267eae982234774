package node

import (
	"io"
	"net"
	"syscall"
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

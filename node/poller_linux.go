package node

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// poller tells client connections, in the order the kernel saw their data
// arrive, that their sockets have input. It is the node's own epoll
// instance, edge-triggered, holding every client socket; the instance's
// descriptor waits in Go's netpoller like any socket, and one goroutine
// (run) takes the ready list and wakes the connections' goroutines.
//
// Waiting in Go's netpoller directly would serve a batch of ready
// connections in reverse order: the runtime collects the ready goroutines
// of one epoll_wait as a stack. Under many clients with one request each in
// flight (redis-benchmark -P 1 -c 50) the request that arrived first was
// then answered last, which widened the tail of the latency distribution
// (p99 about 1.5x redis-server's, whose event loop serves a batch in
// arrival order). A connection waiting here also skips the read that finds
// its socket empty before every wait: it reads only when told there is
// input, or when its last read filled the buffer.
type poller struct {
	file *os.File
	rc   syscall.RawConn

	mu      sync.Mutex
	waiters map[int64]*rawIO

	// dead is set when run stopped: waiting connections are woken and
	// go back to Go's netpoller.
	dead atomic.Bool

	evs [256]syscall.EpollEvent
	n   int
	// batch is how many connections the last poll woke; yields counts
	// the connections that let the rest of their batch run before
	// writing (beforeWrite).
	batch  atomic.Int32
	yields atomic.Int64
	fn     func(fd uintptr) bool
	// idle is when the poller last found no input; only run's
	// goroutine (through fn) touches it.
	idle time.Time
}

// epollET is EPOLLET as the uint32 of an event mask.
const epollET = 1 << 31

// newPoller returns nil when the system has no epoll for it; connections
// then wait in Go's netpoller.
func newPoller() *poller {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "client-epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	p := &poller{file: f, rc: rc, waiters: make(map[int64]*rawIO)}
	p.fn = func(fd uintptr) bool {
		n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, fd,
			uintptr(unsafe.Pointer(&p.evs[0])), uintptr(len(p.evs)), 0, 0, 0)
		if errno != 0 || n == 0 {
			p.idle = time.Now()
			return false
		}
		p.n = int(n)
		return true
	}
	return p
}

// run delivers readiness until the poller is closed.
func (p *poller) run() {
	defer p.stop()
	for {
		if err := p.rc.Read(p.fn); err != nil {
			return
		}
		// Wake in arrival order. A goroutine woken by a channel send
		// runs next, ahead of those woken before it, which move to the
		// back of the run queue: so the first event is woken last.
		p.batch.Store(int32(p.n))
		p.mu.Lock()
		for i := 1; i < p.n; i++ {
			p.wake(&p.evs[i])
		}
		p.wake(&p.evs[0])
		p.mu.Unlock()
		// While input keeps coming the poller never waits, and the
		// runtime polls its own sockets (the cluster bus, MIGRATE's and
		// replication's links, the listener) only when nothing is
		// runnable, or every 10 ms. So once a millisecond passed since
		// the poller last found nothing, it looks again at once: that
		// finds nothing (the woken connections have not run), the poller
		// waits, and the runtime polls when they are done.
		if time.Since(p.idle) > time.Millisecond {
			continue
		}
		// Otherwise let the woken connections run before looking again,
		// as an event loop serves one batch before it polls.
		runtime.Gosched()
	}
}

// beforeWrite is called by a connection that ran the commands it read and
// is about to write their replies. When the poll that woke it woke others
// too, it yields first, so that the batch's commands run before its writes,
// as an event loop writes its replies after serving every ready client:
// written one at a time, between the other connections' commands, each
// reply wakes a client that then waits again for the next (measured with
// redis-benchmark -P 16 -c 50: the client switched context 5 times as
// often), and the write system calls run between the commands.
func (p *poller) beforeWrite() {
	if p.batch.Load() > 1 {
		p.yields.Add(1)
		runtime.Gosched()
	}
}

// wake signals the connection of ev; p.mu is held.
func (p *poller) wake(ev *syscall.EpollEvent) {
	id := int64(uint32(ev.Fd)) | int64(ev.Pad)<<32
	if r := p.waiters[id]; r != nil {
		r.wake()
	}
}

// stop marks the poller dead and wakes every waiting connection.
func (p *poller) stop() {
	p.mu.Lock()
	p.dead.Store(true)
	for _, r := range p.waiters {
		r.wake()
	}
	p.mu.Unlock()
}

func (p *poller) isDead() bool { return p.dead.Load() }

// close stops run.
func (p *poller) close() { p.file.Close() }

// add registers r's socket under id; it reports false when the socket
// stays with Go's netpoller.
func (p *poller) add(r *rawIO, id int64) bool {
	r.ready = make(chan struct{}, 1)
	r.maybe = true
	r.poll = p
	p.mu.Lock()
	p.waiters[id] = r
	p.mu.Unlock()
	var errno error
	err := r.rc.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET}
		ev.Fd, ev.Pad = int32(uint32(id)), int32(id>>32)
		pfd := -1
		p.rc.Control(func(e uintptr) { pfd = int(e) })
		if pfd < 0 {
			errno = syscall.EBADF
			return
		}
		errno = syscall.EpollCtl(pfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err == nil {
		err = errno
	}
	if err != nil || p.dead.Load() {
		p.remove(id)
		r.ready, r.poll = nil, nil
		return false
	}
	return true
}

// remove forgets id. The kernel drops the socket from the epoll instance
// when it is closed.
func (p *poller) remove(id int64) {
	p.mu.Lock()
	delete(p.waiters, id)
	p.mu.Unlock()
}

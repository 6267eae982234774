package node

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/node/resp"
)

// Client flags.
const (
	ClientMulti           uint32 = 1 << iota // inside MULTI
	ClientDirtyCAS                           // a watched key changed: EXEC fails (kept in Client.dirtyCAS)
	ClientDirtyExec                          // a queued command was rejected: EXEC aborts
	ClientReadonly                           // READONLY was sent (cluster replicas)
	ClientAsking                             // ASKING was sent (one command)
	ClientCloseAfterReply                    // QUIT: close once the reply is written
	ClientNoEvict                            // CLIENT NO-EVICT on
	ClientMaster                             // the link to this replica's master: its stream is applied, never answered
	ClientReplica                            // a replica attached to this node (after SYNC/PSYNC)
)

// Reply modes (CLIENT REPLY).
const (
	ReplyOn = iota
	ReplyOff
	ReplySkipNext
	ReplySkip
)

// Client is one connection's state. Fields are owned by the connection's
// goroutine; those read by other goroutines (CLIENT LIST, KILL) are guarded
// by mu or atomic.
type Client struct {
	ID   int64
	srv  *Server
	conn net.Conn
	raw  *rawIO // raw system calls on conn's socket; nil for other conns
	// polled is set when raw waits for input through the server's poller.
	polled bool
	out    resp.Writer

	Addr, LAddr string
	Flags       uint32
	DB          int
	Auth        bool
	User        string
	ReplyMode   int

	Multi   []queued
	Watched []watchKey
	// dirtyCAS is set, by whichever connection writes a key this client
	// watches, to make its EXEC fail; only it crosses goroutines, so it is
	// not one of Flags.
	dirtyCAS atomic.Bool

	CreatedMs int64

	mu      sync.Mutex
	name    string
	libName string
	libVer  string

	// lastCmd is the last command looked up (CLIENT LIST cmd=), set by
	// the dispatcher.
	lastCmd atomic.Pointer[Command]
	// pubState and pubMulti publish DB, Flags, protocol and the MULTI
	// queue length for other goroutines (CLIENT LIST, KILL); the
	// connection's goroutine stores them only when they change.
	pubState     atomic.Uint64
	pubMulti     atomic.Int64
	lastPub      uint64
	lastPubMulti int64
	rbs          atomic.Int64 // read buffer size

	lastInteraction atomic.Int64 // unix ms
	killed          atomic.Bool
	qbuf            atomic.Int64
	obuf            atomic.Int64

	// clockBase is the time the current read batch started, clockBaseMs
	// the same in unix ms, and clockOff the offset from it at which the
	// next command starts (see Server.call).
	clockBase   time.Time
	clockBaseMs int64
	clockOff    time.Duration

	// ackNow is set by REPLCONF GETACK on a master link: the link
	// answers with an ACK once the command is applied.
	ackNow bool
	// repl is the replica link of a connection that sent REPLCONF or
	// PSYNC (repl_master.go).
	repl *replicaLink

	x       Ctx
	keyPos  []int
	lockSet []int
	// keySlots holds the slot of each key in keyPos for a multi-key call.
	keySlots []int
	// prop collects what the running call propagates (feed.go).
	prop propBuf
	// propEnd is the feed offset after this client's last propagated
	// write; propDone the one its replies last waited for (aof.go).
	propEnd, propDone int64
}

type queued struct {
	cmd  *Command
	args [][]byte
}

type watchKey struct {
	db   int
	key  string
	live bool // the key existed and had not expired when WATCH ran
}

// publish makes the fields CLIENT LIST shows visible to other goroutines.
// It costs two comparisons when nothing changed.
func (c *Client) publish() {
	f := c.Flags
	if c.dirtyCAS.Load() {
		f |= ClientDirtyCAS
	}
	st := uint64(uint32(c.DB))<<32 | uint64(f&0xffffff)<<8 | uint64(c.out.Proto&0xff)
	if st != c.lastPub {
		c.lastPub = st
		c.pubState.Store(st)
	}
	m := int64(-1)
	if c.Flags&ClientMulti != 0 {
		m = int64(len(c.Multi))
	}
	if m != c.lastPubMulti {
		c.lastPubMulti = m
		c.pubMulti.Store(m)
	}
}

// published returns the last published DB, flags, protocol and MULTI
// queue length (-1 outside MULTI).
func (c *Client) published() (db int, flags uint32, proto int, multi int64) {
	st := c.pubState.Load()
	return int(int32(st >> 32)), uint32(st>>8) & 0xffffff, int(st & 0xff), c.pubMulti.Load()
}

// Name returns the name set by CLIENT SETNAME.
func (c *Client) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// SetName sets the connection name.
func (c *Client) SetName(n string) {
	c.mu.Lock()
	c.name = n
	c.mu.Unlock()
}

// SetLib sets the library name or version from CLIENT SETINFO.
func (c *Client) SetLib(name, ver *string) {
	c.mu.Lock()
	if name != nil {
		c.libName = *name
	}
	if ver != nil {
		c.libVer = *ver
	}
	c.mu.Unlock()
}

// Kill closes the connection from any goroutine.
func (c *Client) Kill() {
	if c.killed.CompareAndSwap(false, true) {
		c.conn.Close()
		if c.polled {
			c.raw.wake()
		}
	}
}

// Proto returns the protocol version (2 or 3).
func (c *Client) Proto() int { return c.out.Proto }

// setClock starts a read batch at t.
func (c *Client) setClock(t time.Time) {
	c.clockBase, c.clockBaseMs, c.clockOff = t, t.UnixMilli(), 0
}

// setReadDeadline bounds the connection's reads.
func (c *Client) setReadDeadline(t time.Time) {
	if c.polled {
		c.raw.deadline = t
	}
	c.conn.SetReadDeadline(t)
}

// read reads from the connection, with raw system calls when it can.
func (c *Client) read(b []byte) (int, error) {
	if c.raw != nil {
		return c.raw.Read(b)
	}
	return c.conn.Read(b)
}

// write writes all of b to the connection.
func (c *Client) write(b []byte) (int, error) {
	if c.raw != nil {
		return c.raw.Write(b)
	}
	return c.conn.Write(b)
}

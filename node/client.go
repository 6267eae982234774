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
	ClientDirtyCAS                           // a watched key changed: EXEC fails
	ClientDirtyExec                          // a queued command was rejected: EXEC aborts
	ClientReadonly                           // READONLY was sent (cluster replicas)
	ClientAsking                             // ASKING was sent (one command)
	ClientCloseAfterReply                    // QUIT: close once the reply is written
	ClientNoEvict                            // CLIENT NO-EVICT on
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
	out  resp.Writer

	Addr, LAddr string
	Flags       uint32
	DB          int
	Auth        bool
	User        string
	ReplyMode   int

	Multi   []queued
	Watched []watchKey

	CreatedMs int64

	mu      sync.Mutex
	name    string
	libName string
	libVer  string
	lastCmd string

	lastInteraction atomic.Int64 // unix ms
	killed          atomic.Bool
	qbuf            atomic.Int64
	obuf            atomic.Int64

	// clock is when the current command started (see Server.call).
	clock time.Time

	x       Ctx
	keyPos  []int
	lockSet []int
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
	}
}

// Proto returns the protocol version (2 or 3).
func (c *Client) Proto() int { return c.out.Proto }

package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/slotd/slotd/node/config"
	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/resp"
)

// Server is one slotd node.
type Server struct {
	Cfg *config.Config
	Log *zap.Logger
	// baseLog is the logger without this node's fields, from which the
	// component loggers are made once the node's id is known.
	baseLog *zap.Logger
	// RunID is the 40-hex-char id of this process run (INFO run_id).
	RunID string

	ks *keyspace.Keyspace
	// chunks holds the keys frozen or staged by a chunked migration
	// (cmd_migrate_chunk.go).
	chunks   chunkState
	cmds     Table
	started  time.Time
	dirty    keyspace.Counter
	watching atomic.Int64
	lru      atomic.Uint32
	nextID   atomic.Int64

	mu        sync.Mutex
	clients   map[int64]*Client
	listeners []net.Listener
	closed    bool
	done      chan struct{}
	wg        sync.WaitGroup
	// poll tells client connections that input arrived (poller_linux.go);
	// made by Listen, run by Serve; nil where there is none.
	poll atomic.Pointer[poller]

	route atomic.Pointer[Route]
	// feed is the stream of writes for the AOF and replicas (feed.go).
	feed *feed
	// cl is the cluster runtime; nil when cluster-enabled is no.
	cl *clusterNode

	watchMu sync.Mutex
	watched map[watchKey][]*Client

	// Cached configuration read on the command path.
	requirePass atomic.Pointer[string]
	maxClients  atomic.Int64
	maxBulk     atomic.Int64
	protected   atomic.Bool
	limits      atomic.Pointer[connLimits]

	// pause is the CLIENT PAUSE state (see cmd_client.go): 0 when not
	// paused, so the dispatcher pays one atomic load.
	pause     atomic.Int32
	pauseMu   sync.Mutex
	pauseEnd  time.Time
	pauseWake chan struct{}

	// ev is the maxmemory state (evict.go); noActiveExpire is DEBUG
	// SET-ACTIVE-EXPIRE 0.
	ev             evictor
	noActiveExpire atomic.Bool

	// ext is the state of the server commands (info.go).
	ext serverExt
	// aof is the append-only file (aof.go).
	aof aofState
	// rdb is the snapshot persistence state (persist.go).
	rdb rdbState

	// mig caches MIGRATE's connections to its targets (cmd_migrate.go).
	mig migrateCache

	// repl is the replication state (repl*.go); replicaMode is set while
	// this node replicates a master, replGate holds the write refusals the
	// dispatcher checks (0: none, one atomic load per command).
	repl        replication
	replicaMode atomic.Bool
	replGate    atomic.Uint32

	// Stats.
	connsReceived atomic.Int64
	connsRejected atomic.Int64
	cmdsProcessed keyspace.Counter
	netInput      atomic.Int64
	netOutput     atomic.Int64
}

// New builds a server from a configuration. It listens nowhere yet.
func New(cfg *config.Config, log *zap.Logger) *Server {
	var id [20]byte
	rand.Read(id[:])
	s := &Server{
		Cfg:     cfg,
		RunID:   hex.EncodeToString(id[:]),
		ks:      keyspace.New(int(cfg.Int("databases"))),
		clients: map[int64]*Client{},
		watched: map[watchKey][]*Client{},
		done:    make(chan struct{}),
		started: time.Now(),
		feed:    newFeed(),
	}
	s.ks.OnExpire = s.propagateExpired
	if log == nil {
		log = zap.NewNop()
	}
	s.baseLog = log
	s.Log = log.With(zap.String("node", s.RunID[:8]), zap.String("component", "server"))
	s.cmds = buildTable()
	s.applyConfig("")
	cfg.OnChange(s.applyConfig)
	s.initServerCmds()
	s.initRepl()
	s.initAOF()
	s.initPersist()
	s.lru.Store(uint32(time.Now().Unix()) & lruMask)
	return s
}

func (s *Server) applyConfig(string) {
	p := s.Cfg.Str("requirepass")
	s.requirePass.Store(&p)
	s.maxClients.Store(s.Cfg.Int("maxclients"))
	// A string value holds at most keyspace.MaxString bytes (4 GiB): larger
	// bulks are refused as over the limit rather than stored.
	s.maxBulk.Store(min(s.Cfg.Int("proto-max-bulk-len"), keyspace.MaxString))
	s.protected.Store(s.Cfg.Bool("protected-mode"))
	s.applyEvictConfig()
	s.applyLimits()

}

// Keyspace returns the node's data.
func (s *Server) Keyspace() *keyspace.Keyspace { return s.ks }

// Commands returns the command table.
func (s *Server) Commands() Table { return s.cmds }

const lruMask = 1<<24 - 1

func (s *Server) lruClock() uint32 { return s.lru.Load() }

// touch records an access to e: the LRU clock, or under an LFU policy the
// decayed and incremented frequency counter.
func (s *Server) touch(e *keyspace.Entry) {
	if evictPolicy(s.ev.policy.Load()).lfu() {
		s.lfuTouch(e)
		return
	}
	e.Access = s.lru.Load()
}

// Listen opens the client listeners from the bind and port directives.
func (s *Server) Listen() error {
	port := strconv.Itoa(int(s.Cfg.Int("port")))
	var addrs []string
	for _, b := range splitFields(s.Cfg.Str("bind")) {
		optional := len(b) > 0 && b[0] == '-'
		if optional {
			b = b[1:]
		}
		if b == "*" {
			b = "0.0.0.0"
		} else if b == "::*" {
			b = "::"
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(b, port))
		if err != nil {
			if optional {
				continue
			}
			s.closeListeners()
			return err
		}
		addrs = append(addrs, ln.Addr().String())
		s.listeners = append(s.listeners, ln)
	}
	if len(s.listeners) == 0 {
		return errors.New("no address to listen on")
	}
	s.Log.Info("listening", zap.Strings("addrs", addrs))
	if p := newPoller(); p != nil {
		s.poll.Store(p)
	}
	if s.clusterEnabled() {
		if err := s.startCluster(); err != nil {
			s.closeListeners()
			if p := s.poll.Swap(nil); p != nil {
				p.close()
			}
			return err
		}
	}
	return nil
}

// Addr returns the first listener's address.
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
}

// Serve accepts connections until Close; it also runs the server cron.
func (s *Server) Serve() error {
	for _, ln := range s.listeners {
		s.wg.Add(1)
		go func(ln net.Listener) {
			defer s.wg.Done()
			s.acceptLoop(ln)
		}(ln)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.cron()
	}()
	if p := s.poll.Load(); p != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			p.run()
		}()
	}
	s.startReplicaOfConfig()
	<-s.done
	return nil
}

// Close stops listening, disconnects every client and waits for the
// server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.closeListeners()
	if s.cl != nil {
		s.cl.close()
	}
	s.stopRepl()
	for _, c := range s.clients {
		c.Kill()
	}
	if p := s.poll.Load(); p != nil {
		p.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mig.closeAll()
	return nil
}

// Done is closed when the server shuts down.
func (s *Server) Done() <-chan struct{} { return s.done }

func (s *Server) acceptLoop(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select {
			case <-s.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		s.connsReceived.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(conn)
		}()
	}
}

func (s *Server) newClient(conn net.Conn) *Client {
	now := time.Now().UnixMilli()
	c := &Client{
		ID:        s.nextID.Add(1),
		srv:       s,
		conn:      conn,
		Addr:      conn.RemoteAddr().String(),
		LAddr:     conn.LocalAddr().String(),
		CreatedMs: now,
	}
	c.out.Proto = 2
	c.publish()
	c.lastInteraction.Store(now)
	c.x = Ctx{S: s, C: c, W: &c.out}
	c.raw = newRawIO(conn)
	return c
}

// admit registers a new client or returns the error that refuses it.
func (s *Server) admit(c *Client) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "ERR server is shutting down"
	}
	if int64(len(s.clients)) >= s.maxClients.Load() {
		return ErrMaxClients
	}
	if s.protected.Load() && *s.requirePass.Load() == "" && !isLoopback(c.conn.RemoteAddr()) {
		return errDenied
	}
	s.clients[c.ID] = c
	return ""
}

const errDenied = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return true
	}
	return ta.IP.IsLoopback()
}

const (
	readChunk    = 16 * 1024
	flushAt      = 64 * 1024
	maxKeepQuery = 256 * 1024
)

func (s *Server) serveConn(conn net.Conn) {
	c := s.newClient(conn)
	if p := s.poll.Load(); p != nil && c.raw != nil {
		c.polled = p.add(c.raw, c.ID)
	}
	if msg := s.admit(c); msg != "" {
		s.connsRejected.Add(1)
		c.out.Error(msg)
		conn.Write(c.out.B)
		conn.Close()
		if c.polled {
			s.poll.Load().remove(c.ID)
		}
		return
	}
	defer func() {
		s.mu.Lock()
		delete(s.clients, c.ID)
		s.mu.Unlock()
		if c.Flags&ClientReplica != 0 {
			s.replClientGone(c)
		}
		s.unwatchAll(c)
		c.Kill()
		if c.polled {
			s.poll.Load().remove(c.ID)
		}
	}()
	c.Auth = *s.requirePass.Load() == ""
	var p resp.Parser
	buf := make([]byte, readChunk)
	c.rbs.Store(int64(len(buf)))
	start, end, need := 0, 0, 0
	for {
		lim := s.limits.Load()
		if end == len(buf) {
			// Make room: move the unparsed tail to the front, or grow. The
			// buffer doubles rather than jumping to the announced size of a
			// bulk argument, so a header alone cannot make the server
			// allocate: memory follows the bytes actually received.
			if start > 0 {
				copy(buf, buf[start:end])
				end -= start
				start = 0
			}
			if end == len(buf) {
				nb := make([]byte, 2*len(buf))
				copy(nb, buf[:end])
				buf = nb
				c.rbs.Store(int64(len(buf)))
			}
		}
		if lim.idle > 0 {
			c.setReadDeadline(time.Now().Add(lim.idle))
		}
		n, err := c.read(buf[end:])
		var now time.Time
		if n > 0 {
			end += n
			s.netInput.Add(int64(n))
			now = time.Now()
			c.lastInteraction.Store(now.UnixMilli())
		}
		if err != nil {
			return
		}
		if int64(end-start) > lim.queryBuf {
			// client-query-buffer-limit: redis-server closes such a client
			// without a reply.
			s.Log.Warn("closing client that exceeded client-query-buffer-limit", zap.Int64("id", c.ID), zap.String("addr", c.Addr))
			return
		}
		if need > end-start {
			continue
		}
		p.MaxBulk = s.maxBulk.Load()
		if now.IsZero() {
			now = time.Now()
		}
		c.setClock(now)
		for start < end {
			p.Unauthenticated = !c.Auth
			args, used, more, perr := p.Next(buf[start:end])
			if perr != nil {
				c.out.Error("ERR " + perr.Error())
				s.flush(c)
				return
			}
			if used == 0 {
				need = more
				break
			}
			need = 0
			start += used
			if args != nil {
				s.execute(c, args)
				if c.Flags&ClientReplica != 0 {
					// A replica link is written by its stream writer only.
					c.out.B = c.out.B[:0]
				}
			}
			if lim.obufLimits && lim.overOutputHard(c) {
				s.Log.Warn("closing client that exceeded client-output-buffer-limit", zap.Int64("id", c.ID), zap.String("addr", c.Addr))
				return
			}
			if len(c.out.B) >= flushAt {
				if !s.flush(c) {
					return
				}
			}
			if c.Flags&ClientCloseAfterReply != 0 || c.killed.Load() {
				s.flush(c)
				return
			}
		}
		if start == end {
			start, end = 0, 0
			if len(buf) > maxKeepQuery {
				buf = make([]byte, readChunk)
				c.rbs.Store(int64(len(buf)))
			}
		}
		c.qbuf.Store(int64(end - start))
		if c.polled && len(c.out.B) > 0 {
			c.raw.poll.beforeWrite()
		}
		if !s.flush(c) {
			return
		}
	}
}

// flush writes pending replies; it reports false when the connection is
// gone.
func (s *Server) flush(c *Client) bool {
	if c.propEnd != c.propDone {
		// The replies of writes wait for the AOF (group commit).
		c.propDone = c.propEnd
		if s.aof.waitWrite.Load() {
			s.aof.waitDurable(c.propEnd)
		}
	}
	if len(c.out.B) == 0 {
		return true
	}
	if lim := s.limits.Load(); lim.obufLimits {
		if dl := lim.writeDeadline(len(c.out.B)); !dl.IsZero() {
			c.conn.SetWriteDeadline(dl)
			defer c.conn.SetWriteDeadline(time.Time{})
		}
	}
	n, err := c.write(c.out.B)
	s.netOutput.Add(int64(n))
	if cap(c.out.B) > maxKeepQuery {
		c.out.B = nil
	} else {
		c.out.B = c.out.B[:0]
	}
	return err == nil
}

// cron runs the periodic work: the LRU clock and the active expire cycle.
func (s *Server) cron() {
	hz := s.Cfg.Int("hz")
	if hz <= 0 {
		hz = 10
	}
	t := time.NewTicker(time.Second / time.Duration(hz))
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.lru.Store(uint32(now.Unix()) & lruMask)
			s.mig.closeIdle(now)
			if !s.noActiveExpire.Load() && !s.ks.KeepExpired.Load() {

				s.activeExpire(now.UnixMilli(), 25*time.Millisecond)
			}
			s.aofCron()
			s.persistCron(now)
		}
	}
}

// activeExpire samples keys with a TTL, slot by slot, deleting expired
// ones, for at most budget of wall time per call.
func (s *Server) activeExpire(now int64, budget time.Duration) {
	deadline := time.Now().Add(budget)
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		if db.Volatile() == 0 {
			continue
		}
		s.expireDB(db, now, deadline)
	}
}

func (s *Server) expireDB(db *keyspace.DB, now int64, deadline time.Time) {
	const perSlot = 20
	for visited := 0; visited < 16384; visited++ {
		slot := db.NextExpireSlot()
		// The slot's tables may only be read under its lock (FLUSHDB and
		// SWAPDB replace them under all locks). The lock is quiet: a
		// snapshot in progress copies the slot only if a key is deleted
		// (ExpireSample), not for every visit.
		s.ks.LockQuiet(slot)
		if !db.HasVolatile(slot) {
			s.ks.Unlock(slot)
			continue
		}
		for {
			seen, expired := db.ExpireSample(slot, perSlot, now)
			// Keep going in this slot while a quarter of the sample was stale.
			if seen == 0 || expired*4 < seen {
				break
			}
		}
		s.ks.Unlock(slot)
		if visited%64 == 0 && time.Now().After(deadline) {
			return
		}
	}
}

// Context returns a context cancelled when the server closes.
func (s *Server) Context() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.done
		cancel()
	}()
	return ctx
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

package node

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

// evictPolicy is a maxmemory-policy.
type evictPolicy int32

const (
	policyNoEviction evictPolicy = iota
	policyAllKeysLRU
	policyVolatileLRU
	policyAllKeysLFU
	policyVolatileLFU
	policyAllKeysRandom
	policyVolatileRandom
	policyVolatileTTL
)

var policyNames = map[string]evictPolicy{
	"noeviction": policyNoEviction, "allkeys-lru": policyAllKeysLRU, "volatile-lru": policyVolatileLRU,
	"allkeys-lfu": policyAllKeysLFU, "volatile-lfu": policyVolatileLFU, "allkeys-random": policyAllKeysRandom,
	"volatile-random": policyVolatileRandom, "volatile-ttl": policyVolatileTTL,
}

func (p evictPolicy) lfu() bool { return p == policyAllKeysLFU || p == policyVolatileLFU }
func (p evictPolicy) volatile() bool {
	return p == policyVolatileLRU || p == policyVolatileLFU || p == policyVolatileRandom || p == policyVolatileTTL
}
func (p evictPolicy) random() bool { return p == policyAllKeysRandom || p == policyVolatileRandom }

// evictor is the maxmemory state, cached from the configuration so that the
// command path reads one atomic when no limit is set.
type evictor struct {
	maxmem    atomic.Int64
	policy    atomic.Int32
	samples   atomic.Int32
	tenacity  atomic.Int32
	logFactor atomic.Int64
	decayTime atomic.Int64

	// mu serialises evictions; pool holds the best candidates seen so far,
	// as redis-server keeps its eviction pool between calls.
	mu   sync.Mutex
	pool []evictCandidate
}

type evictCandidate struct {
	idle uint64 // higher is evicted first
	db   int
	key  string
}

// evictPoolSize is how many candidates the pool keeps.
const evictPoolSize = 16

func (s *Server) applyEvictConfig() {
	ev := &s.ev
	ev.maxmem.Store(s.Cfg.Int("maxmemory"))
	ev.policy.Store(int32(policyNames[s.Cfg.Str("maxmemory-policy")]))
	ev.samples.Store(int32(min(max(s.Cfg.Int("maxmemory-samples"), 1), 64)))
	ev.tenacity.Store(int32(s.Cfg.Int("maxmemory-eviction-tenacity")))
	ev.logFactor.Store(s.Cfg.Int("lfu-log-factor"))
	ev.decayTime.Store(s.Cfg.Int("lfu-decay-time"))
}

func (s *Server) policy() evictPolicy { return evictPolicy(s.ev.policy.Load()) }

// sharesIntegers reports whether redis-server would reply with shared small
// integer objects (OBJECT REFCOUNT): not when an LRU or LFU policy needs a
// per-key access field under a memory limit.
func (s *Server) sharesIntegers() bool {
	p := s.policy()
	return s.ev.maxmem.Load() == 0 || !(p == policyAllKeysLRU || p == policyVolatileLRU || p.lfu())
}

// LFU access field, as redis-server lays it out in 24 bits: the last
// decrement time in minutes (16 bits) and a logarithmic counter (8 bits).
const lfuInitVal = 5

func lfuMinutes() uint32 { return uint32(time.Now().Unix()/60) & 0xffff }

// newAccess is the access field of a new key.
func (s *Server) newAccess() uint32 {
	if s.policy().lfu() {
		return lfuMinutes()<<8 | lfuInitVal
	}
	return s.lru.Load()
}

// lfuDecayed returns the key's counter decayed by the minutes elapsed
// since it was last decremented: one step per lfu-decay-time minutes.
func (s *Server) lfuDecayed(e *keyspace.Entry) uint32 {
	ldt := e.Access >> 8 & 0xffff
	counter := e.Access & 0xff
	now := lfuMinutes()
	var elapsed uint32
	if now >= ldt {
		elapsed = now - ldt
	} else {
		elapsed = 65535 - ldt + now
	}
	if d := s.ev.decayTime.Load(); d > 0 {
		periods := int64(elapsed) / d
		if periods >= int64(counter) {
			return 0
		}
		counter -= uint32(periods)
	}
	return counter
}

// lfuTouch records an access: decay, then a probabilistic increment that
// gets rarer as the counter grows (1/((c-5)*lfu-log-factor+1)).
func (s *Server) lfuTouch(e *keyspace.Entry) {
	c := s.lfuDecayed(e)
	if c < 255 {
		base := float64(c) - lfuInitVal
		if base < 0 {
			base = 0
		}
		if rand.Float64() < 1/(base*float64(s.ev.logFactor.Load())+1) {
			c++
		}
	}
	e.Access = lfuMinutes()<<8 | c
}

// idleSeconds is OBJECT IDLETIME: seconds since the key's last access by
// the LRU clock, which wraps every 2^24 seconds.
func (s *Server) idleSeconds(e *keyspace.Entry) int64 {
	now := s.lru.Load()
	if now >= e.Access {
		return int64(now - e.Access)
	}
	return int64(lruMask - e.Access + now)
}

// idleScore ranks an eviction candidate under the policy: larger goes
// first.
// expire is the key's expiry time, which only volatile-ttl reads.
func (s *Server) idleScore(p evictPolicy, e *keyspace.Entry, expire int64) uint64 {
	switch {
	case p.lfu():
		return 255 - uint64(s.lfuDecayed(e))
	case p == policyVolatileTTL:
		return math.MaxUint64 - uint64(expire)
	}
	return uint64(s.idleSeconds(e))
}

// checkMemory runs before a command while maxmemory is set: it evicts keys
// until the used memory is under the limit and reports whether the command
// may run. Like redis-server, it evicts before every command, but refuses
// only commands that may grow memory (denyoom, anything queued in MULTI
// but the transaction controls, EXEC of a denyoom queue) when nothing is
// left to evict.
func (s *Server) checkMemory(c *Client, cmd *Command) bool {
	if s.replicaMode.Load() && s.Cfg.Bool("replica-ignore-maxmemory") {
		// A replica holds what its master holds: a key evicted here
		// would be gone without a DEL, from this node and, after a
		// promotion, from the history its replicas continue.
		return true
	}
	if s.evict() {
		return true
	}
	reject := cmd.Flags&FlagDenyOOM != 0
	switch cmd.Name {
	case "exec":
		for _, q := range c.Multi {
			if q.cmd.Flags&FlagDenyOOM != 0 {
				reject = true
			}
		}
	case "discard", "quit", "reset":
	default:
		if c.Flags&ClientMulti != 0 {
			reject = true
		}
	}
	if !reject {
		return true
	}
	cmd.Stats.RejectedCalls.Add(1)
	if cmd.Name == "exec" && c.Flags&ClientMulti != 0 {
		// A refused EXEC ends the transaction, as redis-server does.
		c.out.Error("EXECABORT Transaction discarded because of: " + ErrOOM)
		s.discardMulti(c)
		return false
	}
	s.rejectInMulti(c)
	c.out.Error(ErrOOM)
	return false
}

// evict frees keys by the configured policy until the estimated used
// memory (keyspace.Keyspace.UsedMemory) is at most maxmemory. It returns
// false when memory is over the limit and nothing could be evicted. It
// runs before the command's locks are taken and locks one slot at a time.
// One call works for at most a time budget scaled by
// maxmemory-eviction-tenacity (500µs at the default 10, as redis-server);
// when the budget runs out with keys still evictable the command runs and
// the next one continues.
func (s *Server) evict() bool {
	limit := s.ev.maxmem.Load()
	ks := s.ks
	if ks.UsedMemory() <= limit {
		return true
	}
	p := s.policy()
	if p == policyNoEviction {
		return false
	}
	ev := &s.ev
	ev.mu.Lock()
	defer ev.mu.Unlock()
	budget := time.Duration(ev.tenacity.Load()) * 50 * time.Microsecond
	start := time.Now()
	for n := 0; ks.UsedMemory() > limit; n++ {
		if !s.evictOne(p) {
			return false
		}
		ks.EvictedKeys.Add(1)
		if n%16 == 15 && ev.tenacity.Load() < 100 && time.Since(start) > budget {
			return true
		}
	}
	return true
}

// evictOne removes one key chosen by policy p and reports whether it
// found one.
func (s *Server) evictOne(p evictPolicy) bool {
	if p.random() {
		// Random policies visit the databases in turn, as redis-server does.
		for i := 0; i < s.ks.NumDBs(); i++ {
			db := s.ks.DB(i)
			if s.evictCandidates(db, p) == 0 {
				continue
			}
			for try := 0; try < 64; try++ {
				slot := db.RandomSlot(nil)
				if slot < 0 {
					break
				}
				s.ks.Lock(slot)
				var k string
				var e *keyspace.Entry
				if p.volatile() {
					k, e = db.RandomVolatileInSlot(slot)
				} else {
					k, e = db.RandomInSlot(slot)
				}
				if e != nil {
					s.evictKey(db, slot, k)
				}
				s.ks.Unlock(slot)
				if e != nil {
					return true
				}
			}
		}
		return false
	}
	for attempt := 0; attempt < 8; attempt++ {
		for i := 0; i < s.ks.NumDBs(); i++ {
			if db := s.ks.DB(i); s.evictCandidates(db, p) > 0 {
				s.samplePool(db, p)
			}
		}
		ev := &s.ev
		for len(ev.pool) > 0 {
			c := ev.pool[len(ev.pool)-1]
			ev.pool = ev.pool[:len(ev.pool)-1]
			db := s.ks.DB(c.db)
			key := []byte(c.key)
			slot := slots.Of(key)
			s.ks.Lock(slot)
			e := db.Peek(slot, key)
			ok := e != nil && (!p.volatile() || e.HasTTL())
			if ok {
				s.evictKey(db, slot, c.key)
			}
			s.ks.Unlock(slot)
			if ok {
				return true
			}
		}
		if s.totalCandidates(p) == 0 {
			return false
		}
	}
	return false
}

func (s *Server) evictCandidates(db *keyspace.DB, p evictPolicy) int64 {
	if p.volatile() {
		return db.Volatile()
	}
	return db.Len()
}

func (s *Server) totalCandidates(p evictPolicy) int64 {
	var n int64
	for i := 0; i < s.ks.NumDBs(); i++ {
		n += s.evictCandidates(s.ks.DB(i), p)
	}
	return n
}

// evictKey deletes an evicted key; the caller holds its slot lock.
func (s *Server) evictKey(db *keyspace.DB, slot int, key string) {
	db.Delete(slot, []byte(key), 0)
	if s.feed.on.Load() {
		s.feed.appendCommand(db.ID, delArg, []byte(key))
	}
	s.dirty.Add(1)
	if s.watching.Load() > 0 {
		s.touchWatched(db.ID, []byte(key))
	}
}

// samplePool looks at maxmemory-samples keys of db (volatile ones only
// under a volatile policy), each from a random slot, and keeps the
// evictPoolSize best candidates in the pool, sorted by ascending score.
// Slots without volatile keys are retried a bounded number of times, so a
// database where few keys have a TTL may yield fewer samples.
func (s *Server) samplePool(db *keyspace.DB, p evictPolicy) {
	ev := &s.ev
	want := int(ev.samples.Load())
	for got, try := 0, 0; got < want && try < 4*want; try++ {
		slot := db.RandomSlot(nil)
		if slot < 0 {
			return
		}
		s.ks.Lock(slot)
		var k string
		var e *keyspace.Entry
		if p.volatile() {
			k, e = db.RandomVolatileInSlot(slot)
		} else {
			k, e = db.RandomInSlot(slot)
		}
		var score uint64
		if e != nil {
			var expire int64
			if p == policyVolatileTTL {
				expire = db.ExpireOfKey(slot, k, e)
			}
			score = s.idleScore(p, e, expire)
		}
		s.ks.Unlock(slot)
		if e == nil {
			continue
		}
		got++
		ev.addCandidate(evictCandidate{idle: score, db: db.ID, key: k})
	}
}

func (ev *evictor) addCandidate(c evictCandidate) {
	pool := ev.pool
	for i := range pool {
		if pool[i].db == c.db && pool[i].key == c.key {
			pool[i].idle = c.idle
			sortPool(pool)
			return
		}
	}
	if len(pool) == evictPoolSize {
		if c.idle <= pool[0].idle {
			return
		}
		pool = pool[1:]
	}
	i := 0
	for i < len(pool) && pool[i].idle < c.idle {
		i++
	}
	pool = append(pool, evictCandidate{})
	copy(pool[i+1:], pool[i:])
	pool[i] = c
	if cap(ev.pool) < evictPoolSize+1 {
		ev.pool = make([]evictCandidate, 0, evictPoolSize+1)
	}
	ev.pool = append(ev.pool[:0], pool...)
}

func sortPool(pool []evictCandidate) {
	for i := 1; i < len(pool); i++ {
		for j := i; j > 0 && pool[j].idle < pool[j-1].idle; j-- {
			pool[j], pool[j-1] = pool[j-1], pool[j]
		}
	}
}

// SetActiveExpire turns the active expire cycle on or off (DEBUG
// SET-ACTIVE-EXPIRE); lazy expiry on access continues either way.
func (s *Server) SetActiveExpire(on bool) { s.noActiveExpire.Store(!on) }

// memStats are the Go runtime's figures that MEMORY STATS maps onto
// redis-server's allocator fields.
type memStats struct {
	used, active, resident, peak, startup int64
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

var memMu sync.Mutex

func readMemStats() memStats {
	memMu.Lock()
	defer memMu.Unlock()
	metrics.Read(memSamples)
	v := func(i int) int64 {
		if memSamples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(memSamples[i].Value.Uint64())
	}
	used := v(0)
	ms := memStats{used: used, active: used + v(1), resident: v(2) - v(3)}
	for {
		p := peakMem.Load()
		if used <= p || peakMem.CompareAndSwap(p, used) {
			break
		}
	}
	ms.peak = peakMem.Load()
	ms.startup = startupMem.Load()
	return ms
}

var peakMem, startupMem atomic.Int64

func init() { startupMem.Store(readMemStats().used) }

func freeOSMemory() { debug.FreeOSMemory() }

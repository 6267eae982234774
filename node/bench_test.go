package node

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/slotd/slotd/node/config"

	"github.com/slotd/slotd/node/resp"
)

func runBench(b *testing.B, cmd ...string) {
	runBenchOn(b, New(config.New(), nil), cmd...)
}

// BenchmarkExecGetCluster is BenchmarkExecGet with cluster routing on: the
// difference is the cost of the routing check.
func BenchmarkExecGetCluster(b *testing.B) {
	cfg := config.New()
	if err := cfg.Set("cluster-enabled", "yes"); err == nil {
		b.Fatal("cluster-enabled must not be settable at run time")
	}
	cfg, _ = config.Load([]string{"--cluster-enabled", "yes"})
	s := New(cfg, nil)
	r := NewRoute()
	r.OK, r.Myself = true, 0
	r.Nodes = []RouteNode{{ID: "me", Endpoint: "127.0.0.1:7000"}}
	for i := range r.Owner {
		r.Owner[i] = 0
	}
	s.SetRoute(r)
	runBenchOn(b, s, "GET", "key:__rand_int__")
}

func runBenchOn(b *testing.B, s *Server, cmd ...string) {
	c := s.testClient()
	argv := make([][]byte, len(cmd))
	for i, a := range cmd {
		argv[i] = []byte(a)
	}
	s.execute(c, [][]byte{[]byte("SET"), []byte("key:__rand_int__"), []byte("xxx")})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.out.B = c.out.B[:0]
		s.execute(c, argv)
	}
}

func BenchmarkExecGet(b *testing.B)  { runBench(b, "GET", "key:__rand_int__") }
func BenchmarkExecSet(b *testing.B)  { runBench(b, "SET", "key:__rand_int__", "xxx") }
func BenchmarkExecPing(b *testing.B) { runBench(b, "PING") }

// BenchmarkParsePipeline parses 16 pipelined GETs per iteration.
func BenchmarkParsePipeline(b *testing.B) {
	var frame []byte
	for i := 0; i < 16; i++ {
		frame = append(frame, "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n"...)
	}
	var p resp.Parser
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf := frame
		for len(buf) > 0 {
			_, n, _, err := p.Next(buf)
			if err != nil || n == 0 {
				b.Fatal(err, n)
			}
			buf = buf[n:]
		}
	}
	_ = strconv.Itoa
}

// BenchmarkExecParallelSet runs SETs on distinct keys from GOMAXPROCS
// goroutines: commands on different slots do not serialise on one lock.
func BenchmarkExecParallelSet(b *testing.B) {
	s := New(config.New(), nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := s.testClient()
		keys := make([][]byte, 1024)
		for i := range keys {
			keys[i] = []byte("key:" + strconv.Itoa(int(c.ID)) + ":" + strconv.Itoa(i))
		}
		argv := [][]byte{[]byte("SET"), nil, []byte("xxx")}
		i := 0
		for pb.Next() {
			argv[1] = keys[i&1023]
			i++
			c.out.B = c.out.B[:0]
			s.execute(c, argv)
		}
	})
}

// benchRandomKeys is the number of distinct keys of the random-key
// benchmarks, as redis-benchmark -r 100000 uses.
const benchRandomKeys = 100000

// runRandomBench runs cmd with every "__rand_int__" replaced by a random
// number below benchRandomKeys, as redis-benchmark does, on a server that
// holds all those keys: what a lookup costs when the keys do not fit in
// the caches.
func runRandomBench(b *testing.B, cmd ...string) {
	s := New(config.New(), nil)
	c := s.testClient()
	key := func(n int) []byte { return []byte(fmt.Sprintf("key:%012d", n)) }
	for i := 0; i < benchRandomKeys; i++ {
		s.execute(c, [][]byte{[]byte("SET"), key(i), []byte("123")})
		c.out.B = c.out.B[:0]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const ncmds = 1 << 14
	cmds := make([][][]byte, ncmds)
	for i := range cmds {
		argv := make([][]byte, len(cmd))
		for j, a := range cmd {
			if a == "key:__rand_int__" {
				argv[j] = key(rng.IntN(benchRandomKeys))
			} else {
				argv[j] = []byte(a)
			}
		}
		cmds[i] = argv
	}
	// The set-up's garbage is collected now, not during the timed loop
	// (which allocates nothing).
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	runCmds(s, c, cmds, b.N)
}

// runCmds is runRandomBench's timed loop, a function of its own so that
// valgrind --tool=callgrind --toggle-collect='*runCmds' counts only it.
//
//go:noinline
func runCmds(s *Server, c *Client, cmds [][][]byte, n int) {
	for i := 0; i < n; i++ {
		c.out.B = c.out.B[:0]
		s.execute(c, cmds[i&(len(cmds)-1)])
	}
}

func BenchmarkRandomGet(b *testing.B)  { runRandomBench(b, "GET", "key:__rand_int__") }
func BenchmarkRandomSet(b *testing.B)  { runRandomBench(b, "SET", "key:__rand_int__", "xxx") }
func BenchmarkRandomIncr(b *testing.B) { runRandomBench(b, "INCR", "key:__rand_int__") }
func BenchmarkRandomMSet(b *testing.B) {
	cmd := []string{"MSET"}
	for i := 0; i < 10; i++ {
		cmd = append(cmd, "key:__rand_int__", "xxx")
	}
	runRandomBench(b, cmd...)
}

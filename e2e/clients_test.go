package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedis drives slotd with go-redis v9 in RESP3 and in RESP2.
func TestGoRedis(t *testing.T) {
	srv := startTarget(t)
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{
				Addr:            srv.Addr(),
				Protocol:        proto,
				DisableIdentity: true, // CLIENT SETINFO is a 7.2 command
				DialTimeout:     5 * time.Second,
				ReadTimeout:     10 * time.Second,
				MaxRetries:      -1,
			})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatalf("FLUSHALL: %v", err)
			}
			t.Run("SetGetIncr", func(t *testing.T) {
				if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
					t.Fatal(err)
				}
				if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v" {
					t.Fatalf("GET k = %q, %v", v, err)
				}
				if _, err := rdb.Get(ctx, "missing").Result(); err != redis.Nil {
					t.Fatalf("GET missing: %v, want redis.Nil", err)
				}
				if err := rdb.Set(ctx, "ttl", "v", time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
				for want := int64(1); want <= 3; want++ {
					if n, err := rdb.Incr(ctx, "n").Result(); err != nil || n != want {
						t.Fatalf("INCR n = %d, %v; want %d", n, err, want)
					}
				}
			})
			t.Run("Pipeline", func(t *testing.T) {
				pipe := rdb.Pipeline()
				set := pipe.Set(ctx, "p1", "a", 0)
				get := pipe.Get(ctx, "p1")
				incr := pipe.IncrBy(ctx, "p2", 10)
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				if set.Val() != "OK" || get.Val() != "a" || incr.Val() != 10 {
					t.Fatalf("pipeline: %q %q %d", set.Val(), get.Val(), incr.Val())
				}
			})
			t.Run("TxPipeline", func(t *testing.T) {
				var get *redis.StringCmd
				var incr *redis.IntCmd
				_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "tx", "1", 0)
					incr = p.Incr(ctx, "tx")
					get = p.Get(ctx, "tx")
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if incr.Val() != 2 || get.Val() != "2" {
					t.Fatalf("tx: incr %d get %q", incr.Val(), get.Val())
				}
			})
			t.Run("Hash", func(t *testing.T) {
				if n, err := rdb.HSet(ctx, "h", "f1", "v1", "f2", "v2").Result(); err != nil || n != 2 {
					t.Fatalf("HSET = %d, %v", n, err)
				}
				m, err := rdb.HGetAll(ctx, "h").Result()
				if err != nil || len(m) != 2 || m["f1"] != "v1" || m["f2"] != "v2" {
					t.Fatalf("HGETALL = %v, %v", m, err)
				}
			})
			t.Run("SortedSet", func(t *testing.T) {
				n, err := rdb.ZAdd(ctx, "z", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1.5, Member: "a"}).Result()
				if err != nil || n != 2 {
					t.Fatalf("ZADD = %d, %v", n, err)
				}
				zs, err := rdb.ZRangeWithScores(ctx, "z", 0, -1).Result()
				want := []redis.Z{{Score: 1.5, Member: "a"}, {Score: 2, Member: "b"}}
				if err != nil || fmt.Sprint(zs) != fmt.Sprint(want) {
					t.Fatalf("ZRANGE WITHSCORES = %v, %v; want %v", zs, err, want)
				}
			})
		})
	}
}

// redisCLI runs redis-cli against srv and returns its trimmed output.
func redisCLI(t *testing.T, srv *server, stdin string, args ...string) string {
	t.Helper()
	bin := needTool(t, "redis-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"-h", "127.0.0.1", "-p", fmt.Sprint(srv.Port)}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// TestRedisCLI checks slotd with redis-cli: plain commands, --raw, RESP3
// and pipe mode.
func TestRedisCLI(t *testing.T) {
	srv := startTarget(t)
	check := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	check(redisCLI(t, srv, "", "ping"), "PONG")
	check(redisCLI(t, srv, "", "flushall"), "OK")
	check(redisCLI(t, srv, "", "set", "k", "hello world"), "OK")
	check(redisCLI(t, srv, "", "--no-raw", "get", "k"), `"hello world"`)
	check(redisCLI(t, srv, "", "--raw", "get", "k"), "hello world")
	check(redisCLI(t, srv, "", "--no-raw", "get", "missing"), "(nil)")
	check(redisCLI(t, srv, "", "-3", "--no-raw", "get", "missing"), "(nil)")
	// HELLO 3's map, as redis-cli -3 prints it; the id differs per connection.
	hello := strings.Split(redisCLI(t, srv, "", "-3", "--no-raw", "hello", "3"), "\n")
	wantHello := []string{`1# "server" => "redis"`, `2# "version" => "7.0.15"`, `3# "proto" => (integer) 3`,
		`4# "id" => (integer) `, `5# "mode" => "standalone"`, `6# "role" => "master"`, `7# "modules" => (empty array)`}
	if len(hello) != len(wantHello) {
		t.Errorf("HELLO 3: got %q, want %q", hello, wantHello)
	} else {
		for i := range hello {
			if !strings.HasPrefix(hello[i], wantHello[i]) {
				t.Errorf("HELLO 3 line %d: got %q, want %q", i+1, hello[i], wantHello[i])
			}
		}
	}
	check(redisCLI(t, srv, "", "--no-raw", "nosuchcommand"), "(error) ERR unknown command 'nosuchcommand', with args beginning with: ")

	// Pipe mode: generated protocol, redis-cli reports the reply count.
	var b strings.Builder
	const n = 1000
	for i := 0; i < n; i++ {
		b.Write(encodeCommand(nil, []string{"SET", fmt.Sprintf("pipe:%d", i), strings.Repeat("x", 64)}))
	}
	out := redisCLI(t, srv, b.String(), "--pipe")
	if !strings.Contains(out, fmt.Sprintf("errors: 0, replies: %d", n)) {
		t.Errorf("--pipe output: %q", out)
	}
	check(redisCLI(t, srv, "", "dbsize"), fmt.Sprint(n+1))
	check(redisCLI(t, srv, "", "--raw", "get", "pipe:999"), strings.Repeat("x", 64))
}

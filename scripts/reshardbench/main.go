// Command reshardbench is the helper of scripts/bench-reshard-slotctl.sh:
//
//	reshardbench load ADDR N SIZE      write N keys key:<i> with SIZE-byte values through a cluster client
//	reshardbench probe ADDR FIRST LAST read and write keys of slots FIRST..LAST until SIGTERM, then
//	                                   print the latency percentiles and the error count
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotd/slotd/slots"
)

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: reshardbench load ADDR N SIZE | probe ADDR FIRST LAST")
		os.Exit(2)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{os.Args[2]}, MaxRedirects: 16, MaxRetries: 16,
		ReadTimeout: 30 * time.Second, PoolSize: 64})
	defer c.Close()
	a, _ := strconv.Atoi(os.Args[3])
	b, _ := strconv.Atoi(os.Args[4])
	switch os.Args[1] {
	case "load":
		load(c, a, b)
	case "probe":
		probe(c, a, b)
	}
}

func load(c *redis.ClusterClient, n, size int) {
	ctx := context.Background()
	val := strings.Repeat("x", size)
	const workers, batch = 16, 1000
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * batch; i < n; i += workers * batch {
				pipe := c.Pipeline()
				for j := i; j < min(i+batch, n); j++ {
					pipe.Set(ctx, "key:"+strconv.Itoa(j), val, 0)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					fmt.Fprintln(os.Stderr, "load:", err)
					os.Exit(1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("loaded %d keys in %.1fs\n", n, time.Since(start).Seconds())
}

func probe(c *redis.ClusterClient, first, last int) {
	// Keys of the moving slots, found by hashing.
	var keys []string
	for i := 0; len(keys) < 2000 && i < 10_000_000; i++ {
		k := "key:" + strconv.Itoa(i)
		if s := slots.OfString(k); s >= first && s <= last {
			keys = append(keys, k)
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += 4 {
				select {
				case <-done:
					return
				default:
				}
				k := keys[i%len(keys)]
				t := time.Now()
				var err error
				if i%2 == 0 {
					err = c.Get(ctx, k).Err()
				} else {
					err = c.Set(ctx, k, "probe-value-of-sixty-four-bytes-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0).Err()
				}
				d := time.Since(t)
				mu.Lock()
				lat = append(lat, d)
				if err != nil && err != redis.Nil {
					errs++
				}
				mu.Unlock()
			}
		}()
	}
	<-stop
	close(done)
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("probe: %d requests, %d errors, p50 %v, p99 %v, p99.9 %v, max %v\n", len(lat), errs,
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(0.999).Round(time.Microsecond), pct(1).Round(time.Microsecond))
}

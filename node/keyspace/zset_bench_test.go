package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// zBenchSet returns a set of n members "element:i" with random integer
// scores below n, the shape redis-benchmark's ZADD -r n builds.
func zBenchSet(n int, r *rand.Rand) (*ZSet, [][]byte) {
	z := NewZSet()
	members := make([][]byte, n)
	for i := range members {
		members[i] = []byte(fmt.Sprintf("element:%012d", i))
		z.Add(members[i], float64(r.IntN(n)))
	}
	return z, members
}

// BenchmarkZSetAddRandom re-scores random members of a 100,000-member set,
// like redis-benchmark -t zadd -r 100000 once the set is full.
func BenchmarkZSetAddRandom(b *testing.B) {
	const n = 100000
	r := rand.New(rand.NewPCG(1, 2))
	z, members := zBenchSet(n, r)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		z.Add(members[r.IntN(n)], float64(r.IntN(n)))
	}
}

// BenchmarkZSetRank looks up the rank of random members.
func BenchmarkZSetRank(b *testing.B) {
	const n = 100000
	r := rand.New(rand.NewPCG(1, 2))
	z, members := zBenchSet(n, r)
	b.ResetTimer()
	sum := 0
	for i := 0; i < b.N; i++ {
		sum += z.Rank(z.Get(members[r.IntN(n)]))
	}
	_ = sum
}

// BenchmarkZSetByRank looks up random ranks.
func BenchmarkZSetByRank(b *testing.B) {
	const n = 100000
	r := rand.New(rand.NewPCG(1, 2))
	z, _ := zBenchSet(n, r)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if z.ByRank(r.IntN(n)) == nil {
			b.Fatal("nil")
		}
	}
}

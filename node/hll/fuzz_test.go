package hll

import "testing"

// FuzzValue runs every operation on arbitrary bytes that pass the header
// check, as a client can store any string and then call PFADD, PFCOUNT,
// PFMERGE or PFDEBUG on it: none may panic, and a value that was a well
// formed HLL stays one after Add.
func FuzzValue(f *testing.F) {
	s := New()
	f.Add(s, []byte("a"), uint16(3000))
	for i := 0; i < 40; i++ {
		s, _, _ = Add(s, []byte{byte(i), 'x'}, 3000)
	}
	f.Add(s, []byte("b"), uint16(60))
	d, _ := ToDense(New())
	f.Add(d, []byte("c"), uint16(0))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"), []byte("d"), uint16(3000))
	f.Fuzz(func(t *testing.T, b, ele []byte, sparseMax uint16) {
		if !Valid(b) {
			return
		}
		_, corrupt := Count(b)
		var regs [Registers]uint8
		_ = Merge(&regs, b)
		_, _ = ToDense(append([]byte(nil), b...))
		if b[4] == Sparse {
			_ = Decode(b)
		} else {
			_ = DenseRegisters(b)
		}
		nb, _, err := Add(append([]byte(nil), b...), ele, int(sparseMax))
		if err == nil && corrupt == nil {
			if !Valid(nb) {
				t.Fatalf("a valid HLL became invalid: % x", nb)
			}
			if _, err := Count(nb); err != nil {
				t.Fatalf("a valid HLL became corrupt: % x", nb)
			}
		}
		for _, idx := range []int{0, Registers / 2, Registers - 1} {
			_, _, _ = Set(append([]byte(nil), b...), idx, uint8(len(ele)%64), int(sparseMax))
		}
	})
}

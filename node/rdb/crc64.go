package rdb

// CRC-64 as redis-server computes it for RDB files and DUMP payloads: the
// Jones polynomial, reflected, with a zero initial value and no final
// inversion (hash/crc64 inverts, so it cannot be reused). Slicing by eight
// tables keeps a full-file checksum cheap next to the parsing itself.

const crcPoly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 bit-reversed

var crcTab [8][256]uint64

func init() {
	for i := 0; i < 256; i++ {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ crcPoly
			} else {
				c >>= 1
			}
		}
		crcTab[0][i] = c
	}
	for i := 0; i < 256; i++ {
		c := crcTab[0][i]
		for t := 1; t < 8; t++ {
			c = crcTab[0][c&0xff] ^ c>>8
			crcTab[t][i] = c
		}
	}
}

// CRC64 extends crc (0 to start) over p.
func CRC64(crc uint64, p []byte) uint64 {
	for len(p) >= 8 {
		crc ^= uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
		crc = crcTab[7][crc&0xff] ^ crcTab[6][crc>>8&0xff] ^ crcTab[5][crc>>16&0xff] ^
			crcTab[4][crc>>24&0xff] ^ crcTab[3][crc>>32&0xff] ^ crcTab[2][crc>>40&0xff] ^
			crcTab[1][crc>>48&0xff] ^ crcTab[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = crcTab[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

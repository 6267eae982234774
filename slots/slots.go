package slots

import (
	"github.com/sigurn/crc16"
)

// Count is the number of hash slots in a cluster.
const Count = 16384

var table = crc16.MakeTable(crc16.CRC16_XMODEM)

// hashTag returns the part of key that is hashed: the content of the first
// non-empty {...} section, or the whole key.
func hashTag(key []byte) []byte {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j == i+1 {
						return key
					}
					return key[i+1 : j]
				}
			}
			return key
		}
	}
	return key
}

// Of returns the hash slot of key.
func Of(key []byte) int {
	return int(crc16.Checksum(hashTag(key), table)) & (Count - 1)
}

// OfString returns the hash slot of key.
func OfString(key string) int {
	return Of([]byte(key))
}

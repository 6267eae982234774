// Package rdb is the codec of redis-server's RDB format (version 10, as
// redis-server 7.0 writes it): single values (the body of a DUMP payload),
// DUMP payloads with their version and CRC-64 footer, and whole files.
// Snapshots, replication's full sync and MIGRATE all build on it.
//
// The package is pure: it reads from byte slices or an io.Reader and
// writes to byte slices or an io.Writer, and opens nothing itself.
//
// Reading accepts every type and encoding redis-server 7.0 writes or still
// loads (ziplists, zipmaps, old string-coded scores, quicklists of
// ziplists...) and 7.2's set listpacks; streams and module values are
// refused with ErrUnsupported, since slotd holds neither. Decoded
// collections get the encodings redis-server would give them when loading,
// under the limits in force (keyspace.CurrentLimits).
//
// Writing uses the encodings redis-server 7.0 would use for the same value
// (listpack, intset, quicklist nodes split the way pushes split them), so
// a redis-server loading slotd's output reports the same OBJECT ENCODING
// and about the same memory.
//
// Corrupt input is an error, never a panic, and lengths read from the
// input are checked against the bytes actually present before anything is
// allocated for them.
package rdb

// Package keyspace holds a node's data: databases of keys, each database
// split into the 16384 cluster hash slots so that the keys of one slot can
// be counted, listed and dropped without scanning the others.
//
// Concurrency: the package does no locking of its own on keys. A Keyspace
// owns one mutex per slot, shared by all databases (a key's slot is the same
// in every database). The caller — the node's dispatcher — locks the slots
// of every key a command touches, in ascending order, before it calls into
// a DB, and LockAll for commands that see the whole keyspace. Code that
// holds slot locks must not take them again.
//
// Snapshots: StartCapture makes every slot pending; the first Lock,
// LockSlots or LockAll of a pending slot runs the capture's callback (which
// copies the slot) before it returns, so the slot is copied as it was when
// the capture began. The capture's owner walks the slots with LockQuiet.
// See capture.go and docs/design.md.
//
// Expiry: every read goes through Lookup, which deletes a key whose time has
// passed (lazy expiry); ActiveExpire samples keys with a TTL slot by slot.
package keyspace

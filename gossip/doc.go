// Package gossip owns the cluster's shared view and the bus protocol that
// keeps it in agreement: which nodes exist, their roles and health (PFAIL,
// FAIL), currentEpoch and config epochs, who serves each of the 16384 slots,
// and the typed bus messages with their binary codec.
//
// # The state machine
//
// State is pure: it opens no sockets, starts no goroutines, reads no clock
// and draws randomness only from Config.Rand. The caller (the node's bus
// loop) owns one State and feeds it:
//
//   - Tick(now) every TickInterval ms: pings (a random node once a second,
//     plus every node not heard from for node-timeout/2), PFAIL detection,
//     handshake and FORGET expiry, cluster_state;
//   - Step(now, from, msg) for every message parsed off the bus;
//   - the commands behind CLUSTER MEET, ADDSLOTS, DELSLOTS, SETSLOT, FORGET,
//     SET-CONFIG-EPOCH, BUMPEPOCH, REPLICATE, RESET.
//
// Each returns a list of Outputs that the caller carries out in order:
// Send and Broadcast (encode with AppendMessage, hand to the Transport),
// Persist (write FormatNodesConf before any later Send; durably — temp
// file, fsync, rename — when Persist.Sync says an epoch changed), Event (log it with the node id), SlotsLost (drop the keys of
// those slots), RoleChanged, Deliver (PUBLISH to local subscribers) and
// Forward (failover messages, for package failover). now is milliseconds on
// any monotonic clock, the same one for every call.
//
// The rules follow Redis Cluster (see docs/design.md and
// shared/reference/CLUSTER-COMPAT.md). Where slotd chooses differently:
//
//   - failure reports count only from masters that serve slots, and this
//     node counts itself only when it serves slots (Valkey does the same;
//     Redis counts any master);
//   - a handshake ping or MEET is repeated every second until it is answered
//     or the handshake times out (three node timeouts for CLUSTER MEET), and
//     the receiver of a MEET adds the sender at once from the id and address
//     in its header instead of starting a second handshake, so a MEET
//     survives lost packets;
//   - CLUSTER NODES lists nodes in the order they became known;
//   - a node is PFAIL after a node timeout without any sign of life (a
//     message from it, or a pong that we or a gossiping node received),
//     not a node timeout after our last ping (which Redis sends up to half
//     a timeout late), and a slot-owning master that marks PFAIL pings the
//     other slot-owning masters at once, so FAIL agrees in a round trip;
//   - a master silent that long also counts as unreachable for
//     cluster_state, so a master cut off from the majority stops serving
//     before the majority can have failed it over;
//   - a master's heartbeat that carries a newer config epoch than the
//     claim our view holds for it (Node.ClaimEpoch: raised by heartbeats
//     only, not by the epoch other messages' headers bring) frees the slots
//     our view gives it that it no longer claims (a view restored from an
//     old nodes.conf would otherwise keep them); one with the same epoch
//     does not, since it may have been sent before a SETSLOT NODE gave the
//     master a slot and arrive after it;
//   - a replica of M that comes back as a master with a newer epoch than
//     M's and claims a slot we import from M takes M's place in our open
//     slots at once, M alive or not (a manual failover of a migration's
//     source);
//   - a frame whose epochs exceed MaxEpoch (2^63-1) is malformed, so a
//     peer cannot push an epoch to where the next election wraps it.
//
// Package failover drives elections through RequestVotes, GrantVote,
// Promote, SetNoFailover, PingNode and BroadcastPong, and sets MFlags
// (MFlagPaused) while a master holds writes for a manual failover; each
// Node keeps the MFlags of its last message.
//
// Ordering rules (adopt the larger currentEpoch; a claim wins a slot only
// with a larger config epoch; a stale claim is answered with UPDATE; of two
// masters with equal config epochs the smaller id takes a new one) are
// written once each in order.go.
//
// # Wire format, version 1
//
// A frame is self-delimiting so that it can travel in a UDP packet or in a
// TCP stream. Integers marked uvarint/varint use encoding/binary's varint
// forms and must be minimal; u16/u32 are big-endian.
//
//	offset  size  field
//	0       4     magic "SLBM"
//	4       1     version (1)
//	5       1     type: 0 ping, 1 pong, 2 meet, 3 fail, 4 publish,
//	              5 failover-auth-request, 6 failover-auth-ack, 7 update, 8 mfstart
//	6       4     u32 total frame length, these 10 bytes included (<= 32 MiB)
//	10      ...   header, then the body of the type; the frame must end exactly
//	              where the length says
//
// Header (every type):
//
//	str8     cluster name (u8 length + bytes); a receiver drops frames of another cluster
//	id       sender: the 40-hex node id as 20 raw bytes
//	uvarint  currentEpoch (<= MaxEpoch)
//	uvarint  configEpoch (<= MaxEpoch; the master's when the sender is a replica)
//	u16      flags: 1 myself, 2 master, 4 slave, 8 pfail, 16 fail, 32 handshake,
//	         64 noaddr, 128 nofailover; other bits are invalid
//	u8       1 if a master id follows, else 0
//	id       master id (replicas only)
//	varint   replication offset
//	str8     ip; u16 client port; u16 bus port; str8 hostname
//	u8       cluster state: 0 fail, 1 ok
//	u8       manual-failover flags: 1 paused, 2 force-ack
//	slots    the slots the sender (or its master) serves
//
// A slot set is an encoding byte then either
//
//	0: uvarint range count, then per range uvarint gap and uvarint length-1,
//	   where gap is start-(previous end)-2 (start for the first range), so
//	   ranges are sorted, disjoint and never adjacent;
//	1: the 2048-byte bitmap (slot n is bit n%8 of byte n/8), allowed only
//	   when the range form would be longer.
//
// A node serving one range costs 4-6 bytes instead of Redis's 2048, which
// keeps a ping for a 100-node cluster under memberlist's 1400-byte packets.
//
// Bodies:
//
//	ping, pong, meet  uvarint count, then per entry: id, uvarint ping-sent ms,
//	                  uvarint pong-received ms, str8 ip, u16 port, u16 bus port, u16 flags
//	fail              id of the failing node
//	update            id, uvarint its config epoch, slots
//	publish           uvarint length + channel, uvarint length + message
//	others            empty
//
// ParseMessage accepts exactly one encoding of each message, so a frame it
// accepts appends back to the same bytes (the fuzz target checks it).
//
// # nodes.conf and CLUSTER NODES
//
// FormatNodesConf and ParseNodesConf read and write redis-server's
// cluster-config-file; FormatClusterNodes renders CLUSTER NODES byte for
// byte (lines in the order nodes became known, where redis-server uses its
// hash table's order; tools sort them).
package gossip

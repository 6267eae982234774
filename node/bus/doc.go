// Package bus carries cluster bus frames between slotd nodes on the cluster
// port (port+10000 by default) over hashicorp/memberlist's transport: small
// frames travel as UDP packets, larger ones (or those the caller marks
// reliable) over a TCP stream, both on the same port.
//
// The bus is only a carrier. It does not use memberlist's own membership or
// failure detection: which nodes exist, who is alive and who owns which
// slot is decided by the cluster state machine (package gossip) from the
// frames it exchanges. What the bus adds:
//
//   - cluster-bus-secret: memberlist's AES-GCM encryption with a key derived
//     from the secret, so only holders of the secret can join or read the bus;
//   - a label (the cluster's name) on every packet, so that frames from
//     another cluster sharing the network are dropped before decoding;
//   - counters of frames and bytes in and out, and of frames dropped.
//
// Frames arrive through Config.OnFrame on memberlist's receive goroutines:
// the callback must not block and must copy the frame if it keeps it.
package bus

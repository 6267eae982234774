package gossip

// Transport moves encoded frames between bus addresses. The memberlist
// adapter (UDP+TCP on the cluster port) and the test hub implement it; the
// state machine never sees it: the node's loop reads frames from Transport,
// parses them, calls Step, and carries out the outputs, sending encoded
// frames back through Transport.
type Transport interface {
	// SendTo sends one frame to a bus address. It must not block on the
	// network for long; a lost frame is fine (the protocol resends).
	SendTo(to Addr, frame []byte) error
	// Recv returns the channel of frames received from anyone. The
	// receiver parses them with ParseMessage; the transport does not.
	Recv() <-chan []byte
	// Close stops the transport and releases its port.
	Close() error
}

// Encode is a helper for transports and tests: the frame of m in a new slice.
func Encode(m Message) []byte { return AppendMessage(nil, m) }

package bus

import (
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
)

// Config configures a bus endpoint.
type Config struct {
	// Name identifies this endpoint in memberlist (the node id).
	Name string
	// BindAddr and Port are where the bus listens (UDP and TCP).
	BindAddr string
	Port     int
	// AdvertiseAddr and AdvertisePort are announced to peers; empty/zero
	// means the bind address and port.
	AdvertiseAddr string
	AdvertisePort int
	// Secret, when not empty, turns on encryption: only peers with the
	// same secret can exchange frames.
	Secret string
	// Label separates clusters: peers with another label are ignored.
	Label string
	// OnFrame receives every frame.
	OnFrame func(frame []byte)
	Logger  *zap.Logger
}

// Stats are the bus counters.
type Stats struct {
	FramesIn, FramesOut, BytesIn, BytesOut, SendErrors int64
}

// Bus is one node's endpoint on the cluster bus.
type Bus struct {
	ml  *memberlist.Memberlist
	cfg Config

	framesIn, framesOut, bytesIn, bytesOut, sendErrors atomic.Int64
}

// maxPacket is the largest frame sent as one UDP packet; larger frames go
// over TCP. memberlist's UDP buffer is 1400 bytes and it adds its own
// headers (and, with encryption, about 30 more bytes).
const maxPacket = 1200

// Open starts listening on the bus port.
func Open(cfg Config) (*Bus, error) {
	b := &Bus{cfg: cfg}
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.Name
	mc.BindAddr = cfg.BindAddr
	mc.BindPort = cfg.Port
	mc.AdvertiseAddr = cfg.AdvertiseAddr
	mc.AdvertisePort = cfg.AdvertisePort
	if mc.AdvertiseAddr == "" && cfg.BindAddr != "" && cfg.BindAddr != "0.0.0.0" {
		mc.AdvertiseAddr = cfg.BindAddr
	}
	if mc.AdvertisePort == 0 {
		mc.AdvertisePort = cfg.Port
	}
	mc.Label = cfg.Label
	if cfg.Secret != "" {
		key := sha256.Sum256([]byte(cfg.Secret))
		mc.SecretKey = key[:]
		mc.GossipVerifyIncoming = true
		mc.GossipVerifyOutgoing = true
	}
	mc.Delegate = delegate{b}
	// memberlist's own probing and gossip have no peers to talk to (we
	// never Join); slow them down so they cost nothing.
	mc.ProbeInterval = time.Hour
	mc.GossipInterval = time.Hour
	mc.PushPullInterval = 0
	if cfg.Logger != nil {
		mc.Logger = zap.NewStdLog(cfg.Logger.With(zap.String("component", "bus")))
	} else {
		mc.Logger = log.New(io.Discard, "", 0)
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("cluster bus on port %d: %w", cfg.Port, err)
	}
	b.ml = ml
	return b, nil
}

// Send delivers one frame to the bus endpoint at addr ("ip:port"). Frames
// larger than a UDP packet, and all frames when reliable is set, go over TCP.
func (b *Bus) Send(addr string, frame []byte, reliable bool) error {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("cluster bus: cannot resolve %q", host)
		}
		ip = ips[0]
	}
	to := &memberlist.Node{Name: addr, Addr: ip, Port: uint16(port)}
	if reliable || len(frame) > maxPacket {
		err = b.ml.SendReliable(to, frame)
	} else {
		err = b.ml.SendBestEffort(to, frame)
	}
	if err != nil {
		b.sendErrors.Add(1)
		return err
	}
	b.framesOut.Add(1)
	b.bytesOut.Add(int64(len(frame)))
	return nil
}

// Stats returns the counters.
func (b *Bus) Stats() Stats {
	return Stats{
		FramesIn: b.framesIn.Load(), FramesOut: b.framesOut.Load(),
		BytesIn: b.bytesIn.Load(), BytesOut: b.bytesOut.Load(),
		SendErrors: b.sendErrors.Load(),
	}
}

// Addr returns the advertised bus address.
func (b *Bus) Addr() string {
	n := b.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Close stops the bus.
func (b *Bus) Close() error { return b.ml.Shutdown() }

type delegate struct{ b *Bus }

func (d delegate) NodeMeta(int) []byte { return nil }

func (d delegate) NotifyMsg(frame []byte) {
	d.b.framesIn.Add(1)
	d.b.bytesIn.Add(int64(len(frame)))
	if d.b.cfg.OnFrame != nil {
		d.b.cfg.OnFrame(frame)
	}
}

func (d delegate) GetBroadcasts(int, int) [][]byte { return nil }
func (d delegate) LocalState(bool) []byte          { return nil }
func (d delegate) MergeRemoteState([]byte, bool)   {}

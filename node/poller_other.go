//go:build !linux

package node

// poller is Linux's epoll (poller_linux.go); elsewhere connections wait in
// Go's netpoller.
type poller struct{}

func newPoller() *poller                 { return nil }
func (p *poller) run()                   {}
func (p *poller) close()                 {}
func (p *poller) add(*rawIO, int64) bool { return false }
func (p *poller) remove(int64)           {}
func (p *poller) isDead() bool           { return true }
func (p *poller) beforeWrite()           {}

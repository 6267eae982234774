package node

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/node/rdb"
)

// The append-only file, laid out as redis-server 7.0 lays it out: a
// directory (appenddirname) holding a base file (an RDB image, or commands
// when aof-use-rdb-preamble is no), incremental files of commands, and a
// manifest (appendfilename.manifest) naming them in load order.
//
// The AOF is a sink of the feed (feed.go): the feed's pump writes each
// chunk to the current incremental file as it comes. appendfsync decides
// when the file is fsynced: after every chunk (always), once a second in
// the background (everysec), or when the OS likes (no). With always, a
// client's replies wait until its writes are on disk; as the pump writes
// everything pending at once, clients that wait together share one fsync
// (group commit). Whatever the policy, a reply waits until its writes
// reached the OS, so that a crash of the process alone loses nothing that
// was acknowledged.
//
// A rewrite (BGREWRITEAOF, the automatic rewrite, appendonly turned on)
// opens a new incremental file, switches the feed's output to it at the
// point in time of a snapshot, writes the snapshot as the new base, and
// then replaces the manifest; the files it no longer names are deleted.

// Manifest file types.
const (
	aofBase    = 'b'
	aofHistory = 'h'
	aofIncr    = 'i'
)

type aofFile struct {
	name string
	seq  int64
	typ  byte
}

// aofManifest is the list of files, in load order: the base, then the
// incremental files.
type aofManifest struct {
	base  *aofFile
	incrs []aofFile
	hist  []aofFile
}

func (m *aofManifest) clone() aofManifest {
	c := aofManifest{incrs: append([]aofFile(nil), m.incrs...), hist: append([]aofFile(nil), m.hist...)}
	if m.base != nil {
		b := *m.base
		c.base = &b
	}
	return c
}

func (m *aofManifest) nextIncrSeq() int64 {
	if len(m.incrs) > 0 {
		return m.incrs[len(m.incrs)-1].seq + 1
	}
	var n int64
	for _, h := range m.hist {
		n = max(n, h.seq)
	}
	return n + 1
}

// encode renders the manifest as redis-server writes it.
func (m *aofManifest) encode() []byte {
	var b []byte
	line := func(f aofFile) {
		b = append(b, "file "...)
		b = append(b, quoteManifestName(f.name)...)
		b = append(b, " seq "...)
		b = strconv.AppendInt(b, f.seq, 10)
		b = append(b, " type "...)
		b = append(b, f.typ, '\n')
	}
	if m.base != nil {
		line(*m.base)
	}
	for _, f := range m.hist {
		line(f)
	}
	for _, f := range m.incrs {
		line(f)
	}
	return b
}

func quoteManifestName(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\r\n\"'\\") {
		return s
	}
	return strconv.Quote(s)
}

// errManifest is what a manifest that does not parse reports.
var errManifest = errors.New("Invalid AOF manifest file format")

// parseManifest reads a manifest: lines of key-value pairs, of which
// file, seq and type are required; blank lines and '#' comments are
// skipped, unknown keys ignored.
func parseManifest(b []byte) (aofManifest, error) {
	var m aofManifest
	for _, ln := range strings.Split(string(b), "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" || ln[0] == '#' {
			continue
		}
		fields, err := splitManifestLine(ln)
		if err != nil || len(fields)%2 != 0 {
			return m, errManifest
		}
		var f aofFile
		for i := 0; i < len(fields); i += 2 {
			v := fields[i+1]
			switch fields[i] {
			case "file":
				f.name = v
			case "seq":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					return m, errManifest
				}
				f.seq = n
			case "type":
				if len(v) != 1 {
					return m, errManifest
				}
				f.typ = v[0]
			}
		}
		if f.name == "" || f.seq == 0 || strings.ContainsAny(f.name, "/\\") {
			return m, errManifest
		}
		switch f.typ {
		case aofBase:
			if m.base != nil {
				return m, fmt.Errorf("%w: more than one base AOF", errManifest)
			}
			b := f
			m.base = &b
		case aofIncr:
			m.incrs = append(m.incrs, f)
		case aofHistory:
			m.hist = append(m.hist, f)
		default:
			return m, errManifest
		}
	}
	if m.base == nil && len(m.incrs) == 0 {
		return m, fmt.Errorf("%w: no base and no incr AOF", errManifest)
	}
	return m, nil
}

// splitManifestLine splits a line on spaces, honouring double quotes.
func splitManifestLine(ln string) ([]string, error) {
	var out []string
	for ln = strings.TrimLeft(ln, " \t"); ln != ""; ln = strings.TrimLeft(ln, " \t") {
		if ln[0] == '"' {
			end := 1
			for end < len(ln) && ln[end] != '"' {
				if ln[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(ln) {
				return nil, errManifest
			}
			s, err := strconv.Unquote(ln[:end+1])
			if err != nil {
				return nil, errManifest
			}
			out = append(out, s)
			ln = ln[end+1:]
			continue
		}
		i := strings.IndexAny(ln, " \t")
		if i < 0 {
			i = len(ln)
		}
		out = append(out, ln[:i])
		ln = ln[i:]
	}
	return out, nil
}

// appendfsync policies.
const (
	fsyncEverysec = iota
	fsyncAlways
	fsyncNo
)

// aofState is the AOF of a server.
type aofState struct {
	s *Server

	// on is set while the AOF is written (appendonly yes, after loading).
	on atomic.Bool
	// waitWrite is on while replies must wait for their writes to reach
	// the file (the AOF is on); waitSync is on while they must wait for
	// fsync (appendfsync always).
	waitWrite atomic.Bool
	waitSync  atomic.Bool
	policy    atomic.Int32

	// written and synced are feed offsets: the end of the bytes written to
	// the current file, and of those known to be on disk.
	written atomic.Int64
	synced  atomic.Int64

	// fileMu guards f, the incremental file the sink writes to.
	fileMu sync.Mutex
	f      *os.File
	// pending is what a failed write left, up to feed offset pendingEnd.
	pending    []byte
	pendingEnd int64

	// mu serializes the AOF's lifecycle: start, stop, rewrites and the
	// manifest.
	mu  sync.Mutex
	man aofManifest
	// stop ends the background fsync of the current run.
	stop chan struct{}

	curSize  atomic.Int64 // aof_current_size
	baseSize atomic.Int64 // aof_base_size, the size after the last rewrite

	rewriting      atomic.Bool
	scheduled      atomic.Bool
	rewriteStart   atomic.Int64 // unix ms
	lastRewriteSec atomic.Int64
	lastRewriteErr atomic.Bool
	rewrites       atomic.Int64
	rewriteFails   atomic.Int64
	writeErr       atomic.Bool
	writeErrText   atomic.Pointer[string]
	delayedFsync   atomic.Int64
}

func (s *Server) initAOF() {
	a := &s.aof
	a.s = s
	a.lastRewriteSec.Store(-1)
	a.applyPolicy()
	s.Cfg.OnChange(func(name string) {
		switch name {
		case "appendfsync":
			a.applyPolicy()
		case "appendonly":
			s.aofConfigChanged()
		}
	})
}

func (a *aofState) applyPolicy() {
	p := int32(fsyncEverysec)
	switch a.s.Cfg.Str("appendfsync") {
	case "always":
		p = fsyncAlways
	case "no":
		p = fsyncNo
	}
	a.policy.Store(p)
	a.waitSync.Store(a.on.Load() && p == fsyncAlways)
	if p == fsyncAlways && a.on.Load() {
		// Make what was written so far durable too before anyone relies
		// on the new policy.
		a.s.feed.pump()
		a.fsyncNow()
	}
}

func (a *aofState) dir() string {
	return filepath.Join(a.s.dataDir(), a.s.Cfg.Str("appenddirname"))
}

func (a *aofState) manifestName() string { return a.s.Cfg.Str("appendfilename") + ".manifest" }

func (a *aofState) path(name string) string { return filepath.Join(a.dir(), name) }

// feedWrite is the feed sink: it appends the chunk to the current file.
func (a *aofState) feedWrite(chunk []byte, end int64) {
	a.fileMu.Lock()
	a.writeLocked(chunk, end)
	a.fileMu.Unlock()
}

// writeLocked writes what an earlier failed write left, then chunk, which
// ends the stream at end. What cannot be written is kept for the next try
// (redis-server keeps it in its AOF buffer), and writes are refused with
// MISCONF meanwhile. fileMu is held.
func (a *aofState) writeLocked(chunk []byte, end int64) {
	f := a.f
	if f == nil {
		return
	}
	data := chunk
	if len(a.pending) > 0 {
		a.pending = append(a.pending, chunk...)
		data = a.pending
	}
	n, err := f.Write(data)
	a.curSize.Add(int64(n))
	if err != nil {
		rest := data[n:]
		if len(a.pending) > 0 {
			a.pending = a.pending[:copy(a.pending, rest)]
		} else {
			a.pending = append(a.pending[:0], rest...)
		}
		a.pendingEnd = end
		a.writeFailed("Error writing to the AOF file: ", err)
		return
	}
	a.pending = a.pending[:0]
	a.written.Store(end)
	if a.policy.Load() == fsyncAlways {
		if err := f.Sync(); err != nil {
			a.writeFailed("Can't persist AOF for fsync error when the AOF fsync policy is 'always': ", err)
			return
		}
		a.synced.Store(end)
	}
	if a.writeErr.Load() {
		a.writeErr.Store(false)
		a.s.Log.Info("AOF write error looks solved, Redis can write again.")
	}
}

func (a *aofState) writeFailed(what string, err error) {
	msg := err.Error()
	a.writeErrText.Store(&msg)
	if !a.writeErr.Swap(true) {
		a.s.Log.Warn(what + msg)
	}
}

// recover retries what failed: the bytes a failed write left, or the
// fsync that failed under always (from the background loop, so that the
// AOF recovers without new writes).
func (a *aofState) recover() {
	a.fileMu.Lock()
	defer a.fileMu.Unlock()
	if len(a.pending) > 0 {
		a.writeLocked(nil, a.pendingEnd)
		return
	}
	if a.f == nil || !a.writeErr.Load() || a.policy.Load() != fsyncAlways {
		return
	}
	if err := a.f.Sync(); err != nil {
		return
	}
	a.synced.Store(a.written.Load())
	a.writeErr.Store(false)
	a.s.Log.Info("AOF write error looks solved, Redis can write again.")
}

// aofDenyWrites returns the MISCONF error that refuses writes while the
// last write to the AOF failed, or "" (for the dispatcher's check of
// refused writes, next to stop-writes-on-bgsave-error).
func (s *Server) aofDenyWrites() string {
	if !s.aof.on.Load() || !s.aof.writeErr.Load() {
		return ""
	}
	msg := "unknown error"
	if p := s.aof.writeErrText.Load(); p != nil {
		msg = *p
	}
	return "MISCONF Errors writing to the AOF file: " + msg
}

// fsyncNow fsyncs the current file and advances synced.
func (a *aofState) fsyncNow() {
	a.fileMu.Lock()
	f, end := a.f, a.written.Load()
	a.fileMu.Unlock()
	if f == nil || a.synced.Load() >= end {
		return
	}
	start := time.Now()
	if err := f.Sync(); err != nil {
		a.s.Log.Warn("AOF fsync failed: " + err.Error())
		return
	}
	if time.Since(start) > 2*time.Second {
		a.delayedFsync.Add(1)
	}
	for {
		cur := a.synced.Load()
		if cur >= end || a.synced.CompareAndSwap(cur, end) {
			return
		}
	}
}

// everysec is the background fsync of appendfsync everysec. It returns
// true when the server shuts down, false when the AOF was stopped.
func (a *aofState) everysec(stop <-chan struct{}) bool {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return false
		case <-a.s.done:
			return true
		case <-t.C:
			if a.writeErr.Load() {
				a.recover()
			}
			if a.policy.Load() != fsyncEverysec {
				continue
			}
			if a.rewriting.Load() && a.s.Cfg.Bool("no-appendfsync-on-rewrite") {
				// The rewrite has the disk; the fsync waits for it.
				continue
			}
			a.fsyncNow()
		}
	}
}

// waitDurable holds a client's replies until its writes, which end at
// feed offset off, are in the file (fsynced under appendfsync always).
// The caller's pump writes whatever is pending for every client at once.
func (a *aofState) waitDurable(off int64) {
	// The feed's pumped offset says what every sink has taken; the AOF's
	// own offsets could lag behind a jump of the feed's (setOffset).
	if a.s.feed.pumped.Load() < off {
		a.s.feed.pump()
	}
	// Under always, taken means fsynced, unless a write or an fsync
	// failed: then the reply may not go before the write is on disk, so
	// it waits for a retry to succeed (redis-server exits instead).
	for a.waitSync.Load() && a.writeErr.Load() {
		select {
		case <-a.s.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		a.recover()
	}
}

// openIncr creates (or opens for append) an incremental file.
func (a *aofState) openIncr(name string) (*os.File, error) {
	return os.OpenFile(a.path(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// writeManifest replaces the manifest on disk: a temporary file, synced,
// renamed over the old one, and the directory synced.
func (a *aofState) writeManifest(m *aofManifest) error {
	tmp := a.path("temp-" + a.manifestName())
	if err := writeFileSync(tmp, m.encode()); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.path(a.manifestName())); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(a.dir())
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// loadAOFAtStart loads the AOF named by the manifest and starts writing
// it. Without a manifest the node starts empty (the AOF wins over the RDB
// when enabled, as in redis-server) and a first base is written.
func (s *Server) loadAOFAtStart() error {
	a := &s.aof
	a.mu.Lock()
	defer a.mu.Unlock()
	mb, err := os.ReadFile(a.path(a.manifestName()))
	if errors.Is(err, os.ErrNotExist) {
		if err := a.upgradeLegacy(); err != nil {
			return err
		}
		mb, err = os.ReadFile(a.path(a.manifestName()))
	}
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(a.dir(), 0o755); err != nil {
			return fmt.Errorf("Can't open or create append-only dir %s: %v", a.dir(), err)
		}
		// A fresh AOF: an empty base and a first incremental file.
		return a.rewriteLocked(true, true)
	}
	if err != nil {
		return fmt.Errorf("Fatal error: can't open the AOF manifest %s for reading: %v", a.manifestName(), err)
	}
	m, err := parseManifest(mb)
	if err != nil {
		return fmt.Errorf("%v: %s", err, a.manifestName())
	}
	start := time.Now()
	files := m.incrs
	if m.base != nil {
		files = append([]aofFile{*m.base}, files...)
	}
	var total int64
	for i, f := range files {
		last := i == len(files)-1
		n, err := s.loadAOFFile(f, last)
		if err != nil {
			return err
		}
		total += n
	}
	s.Log.Info(fmt.Sprintf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds()))
	a.man = m
	a.curSize.Store(total)
	a.baseSize.Store(total)
	if len(m.incrs) == 0 {
		// Only a base: start an incremental file after it.
		seq := m.nextIncrSeq()
		nm := m.clone()
		nm.incrs = append(nm.incrs, aofFile{name: fmt.Sprintf("%s.%d.incr.aof", s.Cfg.Str("appendfilename"), seq), seq: seq, typ: aofIncr})
		f, err := a.openIncr(nm.incrs[0].name)
		if err != nil {
			return err
		}
		f.Close()
		if err := a.writeManifest(&nm); err != nil {
			return err
		}
		a.man = nm
	}
	return a.startLocked(a.man.incrs[len(a.man.incrs)-1].name)
}

// upgradeLegacy moves the single AOF file of redis-server before 7.0
// (appendfilename in dir), when there is one and no manifest, into the
// AOF directory as its base, as redis-server 7.0 does on start.
func (a *aofState) upgradeLegacy() error {
	name := a.s.Cfg.Str("appendfilename")
	old := filepath.Join(a.s.dataDir(), name)
	if st, err := os.Stat(old); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(a.dir(), 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %v", a.dir(), err)
	}
	m := aofManifest{base: &aofFile{name: name, seq: 1, typ: aofBase}}
	if err := os.Rename(old, a.path(name)); err != nil {
		return fmt.Errorf("Error moving %s into the append-only dir: %v", name, err)
	}
	if err := a.writeManifest(&m); err != nil {
		return err
	}
	a.s.Log.Info("Successfully migrated an old-style AOF into the AOF directory")
	return nil
}

// startLocked opens the incremental file name for append and attaches the
// AOF to the feed.
func (a *aofState) startLocked(name string) error {
	f, err := a.openIncr(name)
	if err != nil {
		return err
	}
	a.fileMu.Lock()
	a.f = f
	a.fileMu.Unlock()
	off := a.s.feed.attach(a, a.s.done)
	a.s.feed.resetDB()
	a.written.Store(off)
	a.synced.Store(off)
	a.begin()
	return nil
}

// begin marks the AOF as written and starts the background fsync.
func (a *aofState) begin() {
	a.on.Store(true)
	a.waitWrite.Store(true)
	a.waitSync.Store(a.policy.Load() == fsyncAlways)
	a.stop = make(chan struct{})
	stop := a.stop
	a.s.wg.Add(1)
	go func() {
		defer a.s.wg.Done()
		if a.everysec(stop) {
			// Shutting down: what reached the file goes to disk.
			a.s.feed.pump()
			a.fsyncNow()
		}
	}()
}

// stopLocked detaches the AOF from the feed and closes its file (appendonly
// turned off).
func (a *aofState) stopLocked() {
	if !a.on.Load() {
		return
	}
	a.s.feed.detach(a)
	a.on.Store(false)
	a.waitWrite.Store(false)
	a.waitSync.Store(false)
	close(a.stop)
	a.fsyncNow()
	a.fileMu.Lock()
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
	a.fileMu.Unlock()
}

// aofConfigChanged follows CONFIG SET appendonly: turning it on writes a
// first base with a rewrite, as redis-server does; turning it off stops
// writing.
func (s *Server) aofConfigChanged() {
	a := &s.aof
	if s.Cfg.Bool("appendonly") {
		if a.on.Load() || a.rewriting.Load() {
			return
		}
		if err := s.startRewrite(true); err != nil {
			s.Log.Warn("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.")
		}
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopLocked()
}

// restartAOF starts the AOF over from the current dataset (a new base by
// a rewrite), as redis-server does after a replica loads its master's
// RDB: call it after the dataset was replaced and the feed's offset moved
// (feed.setOffset), which the AOF's offsets do not follow.
func (s *Server) restartAOF() {
	a := &s.aof
	a.mu.Lock()
	was := a.on.Load()
	a.stopLocked()
	a.mu.Unlock()
	if was {
		if err := s.startRewrite(true); err != nil {
			s.Log.Warn("Failed enabling the AOF after successful master synchronization! Trying it again in one second.")
			a.scheduled.Store(true)
		}
	}
}

// errRewriteRunning is BGREWRITEAOF's answer while a rewrite runs.
var errRewriteRunning = errors.New("ERR Background append only file rewriting already in progress")

// startRewrite starts a background rewrite (enable: the AOF is being
// turned on and is written from the rewrite's point on).
func (s *Server) startRewrite(enable bool) error {
	a := &s.aof
	if !a.rewriting.CompareAndSwap(false, true) {
		return errRewriteRunning
	}
	a.scheduled.Store(false)
	a.rewriteStart.Store(time.Now().UnixMilli())
	s.Log.Info("Background append only file rewriting started")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		a.mu.Lock()
		defer a.mu.Unlock()
		if enable && !s.Cfg.Bool("appendonly") {
			a.rewriting.Store(false)
			return
		}
		if err := a.rewriteLocked(enable, false); err != nil {
			s.Log.Warn("Background AOF rewrite failed: " + err.Error())
		}
	}()
	return nil
}

// rewriteLocked writes a new base from a snapshot, switching the feed to
// a new incremental file at the snapshot's point in time. enable attaches
// the AOF to the feed at that point (the AOF was off); sync runs at start,
// before any client.
func (a *aofState) rewriteLocked(enable, atStart bool) (err error) {
	s := a.s
	a.rewriting.Store(true)
	start := time.Now()
	a.rewriteStart.Store(start.UnixMilli())
	defer func() {
		a.rewriting.Store(false)
		if atStart {
			// The first base of a fresh AOF is not a rewrite: the
			// rewrite fields and sizes stay as redis-server shows them.
			a.curSize.Store(0)
			a.baseSize.Store(0)
			return
		}
		a.lastRewriteSec.Store(int64(time.Since(start) / time.Second))
		if err != nil {
			a.lastRewriteErr.Store(true)
			a.rewriteFails.Add(1)
			return
		}
		a.lastRewriteErr.Store(false)
		a.rewriteFails.Store(0)
		a.rewrites.Add(1)
	}()
	if err := os.MkdirAll(a.dir(), 0o755); err != nil {
		return err
	}
	if enable {
		// Continue the numbering of files a previous run left.
		if mb, err := os.ReadFile(a.path(a.manifestName())); err == nil {
			if m, err := parseManifest(mb); err == nil {
				a.man = m
			}
		}
	}
	name := s.Cfg.Str("appendfilename")
	old := a.man.clone()
	incrSeq := old.nextIncrSeq()
	incr := aofFile{name: fmt.Sprintf("%s.%d.incr.aof", name, incrSeq), seq: incrSeq, typ: aofIncr}
	nf, err := os.OpenFile(a.path(incr.name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if a.on.Load() {
		// The new incremental file joins the manifest before anything is
		// written to it, so that a crash during the rewrite still finds
		// every write.
		m := old.clone()
		m.incrs = append(m.incrs, incr)
		if err := a.writeManifest(&m); err != nil {
			nf.Close()
			os.Remove(a.path(incr.name))
			return err
		}
		a.man = m
	}
	var baseSeq int64 = 1
	if old.base != nil {
		baseSeq = old.base.seq + 1
	}
	preamble := s.Cfg.Bool("aof-use-rdb-preamble")
	ext := "aof"
	if preamble {
		ext = "rdb"
	}
	base := aofFile{name: fmt.Sprintf("%s.%d.base.%s", name, baseSeq, ext), seq: baseSeq, typ: aofBase}
	tmp := a.path(fmt.Sprintf("temp-rewriteaof-bg-%d.aof", os.Getpid()))
	tf, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		nf.Close()
		return err
	}
	var oldFile *os.File
	switched := false
	atPoint := func() {
		// Every slot lock is held: no command is between its change and
		// its propagation. What the feed holds goes to the old file, and
		// everything after goes to the new one.
		if enable {
			a.fileMu.Lock()
			a.f = nf
			a.fileMu.Unlock()
			off := s.feed.attach(a, s.done)
			a.written.Store(off)
			a.synced.Store(off)
		} else if a.on.Load() {
			s.feed.withSinks(func() {
				a.fileMu.Lock()
				oldFile, a.f = a.f, nf
				// What the old file failed to take is in the new base.
				a.pending = a.pending[:0]
				a.fileMu.Unlock()
			})
		}
		s.feed.resetDB()
		switched = true
	}
	bw := bufio.NewWriterSize(tf, 1<<20)
	if preamble {
		err = s.writeImage(bw, atPoint, true)
	} else {
		err = s.writeCommandSnapshot(bw, atPoint)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tf.Sync()
	}
	if cerr := tf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.path(base.name))
	}
	if err != nil {
		os.Remove(tmp)
		if enable {
			if switched {
				s.feed.detach(a)
				a.fileMu.Lock()
				a.f = nil
				a.fileMu.Unlock()
			}
			nf.Close()
			os.Remove(a.path(incr.name))
		}
		if oldFile != nil {
			oldFile.Sync()
			oldFile.Close()
		}
		return err
	}
	if oldFile != nil {
		// The old file's tail must be durable before the manifest drops it
		// from the load order... it is dropped, but its writes are in the
		// new base only up to the snapshot point, which is exactly its end.
		oldFile.Sync()
		oldFile.Close()
	}
	if !enable && !a.on.Load() {
		// BGREWRITEAOF with the AOF off: the directory is rewritten, and
		// nothing writes to the new incremental file until it is on.
		nf.Close()
	}
	nm := aofManifest{base: &base, incrs: []aofFile{incr}}
	if err := a.writeManifest(&nm); err != nil {
		return err
	}
	// The files the new manifest no longer names are history: delete them.
	if old.base != nil {
		os.Remove(a.path(old.base.name))
	}
	for _, f := range append(old.incrs, old.hist...) {
		if f.name != incr.name {
			os.Remove(a.path(f.name))
		}
	}
	a.man = nm
	bs := fileSize(a.path(base.name))
	a.curSize.Store(bs + fileSize(a.path(incr.name)))
	a.baseSize.Store(bs)
	if enable {
		a.begin()
	}
	if atStart {
		s.Log.Info("Creating AOF base file " + base.name + " on server start")
		s.Log.Info("Creating AOF incr file " + incr.name + " on server start")
		return nil
	}
	s.Log.Info("Background AOF rewrite terminated with success")
	s.Log.Info("Background AOF rewrite finished successfully")
	return nil
}

// aofCron starts the automatic rewrite when the AOF grew by
// auto-aof-rewrite-percentage since the last rewrite and is at least
// auto-aof-rewrite-min-size.
func (s *Server) aofCron() {
	a := &s.aof
	if a.rewriting.Load() || s.bgsaveRunning() {
		return
	}
	if a.scheduled.Load() {
		s.startRewrite(false)
		return
	}
	if !a.on.Load() {
		return
	}
	perc := s.Cfg.Int("auto-aof-rewrite-percentage")
	cur := a.curSize.Load()
	if perc <= 0 || cur < s.Cfg.Int("auto-aof-rewrite-min-size") {
		return
	}
	base := max(a.baseSize.Load(), 1)
	growth := (cur*100)/base - 100
	if growth >= perc {
		s.Log.Info(fmt.Sprintf("Starting automatic rewriting of AOF on %d%% growth", growth))
		s.startRewrite(false)
	}
}

func cmdBgrewriteaof(x *Ctx) {
	if x.S.aof.rewriting.Load() {
		x.W.Error(errRewriteRunning.Error())
		return
	}
	if x.S.bgsaveRunning() || !x.selfLock {
		// One background job at a time, as redis-server's one child, and
		// none from inside a transaction: the cron starts the rewrite when
		// the BGSAVE is done.
		x.S.aof.scheduled.Store(true)
		x.W.Simple("Background append only file rewriting scheduled")
		return
	}
	if err := x.S.startRewrite(false); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.Simple("Background append only file rewriting started")
}

// infoAOF writes the AOF part of INFO persistence.
func (s *Server) infoAOF(w infoWriter) {
	a := &s.aof
	w.kv("aof_enabled", boolInt(s.Cfg.Bool("appendonly")))
	w.kv("aof_rewrite_in_progress", boolInt(a.rewriting.Load()))
	w.kv("aof_rewrite_scheduled", boolInt(a.scheduled.Load()))
	w.kv("aof_last_rewrite_time_sec", a.lastRewriteSec.Load())
	cur := int64(-1)
	if a.rewriting.Load() {
		cur = (time.Now().UnixMilli() - a.rewriteStart.Load()) / 1000
	}
	w.kv("aof_current_rewrite_time_sec", cur)
	status := "ok"
	if a.lastRewriteErr.Load() {
		status = "err"
	}
	w.kv("aof_last_bgrewrite_status", status)
	w.kv("aof_rewrites", a.rewrites.Load())
	w.kv("aof_rewrites_consecutive_failures", a.rewriteFails.Load())
	status = "ok"
	if a.writeErr.Load() {
		status = "err"
	}
	w.kv("aof_last_write_status", status)
	w.kv("aof_last_cow_size", 0)
	w.kv("module_fork_in_progress", 0)
	w.kv("module_fork_last_cow_size", 0)
	if s.Cfg.Bool("appendonly") {
		w.kv("aof_current_size", a.curSize.Load())
		w.kv("aof_base_size", a.baseSize.Load())
		w.kv("aof_pending_rewrite", boolInt(a.scheduled.Load()))
		w.kv("aof_buffer_length", 0)
		w.kv("aof_pending_bio_fsync", 0)
		w.kv("aof_delayed_fsync", a.delayedFsync.Load())
	}
}

// Loading.

// errAOFTruncated reports a file that ends inside a command.
var errAOFTruncated = errors.New("truncated")

// loadAOFFile replays one file of the manifest; last says whether it is the
// last one, the only one a crash may have left torn. It returns the file's
// size after loading.
func (s *Server) loadAOFFile(af aofFile, last bool) (int64, error) {
	a := &s.aof
	path := a.path(af.name)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && af.typ == aofIncr {
			// redis-server tolerates a missing last incremental file
			// only when it is empty; be as strict for the others.
			if last {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("Fatal error: can't open the append log file %s for reading: %v", af.name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() == 0 {
		return 0, nil
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(5); string(head) == "REDIS" {
		if af.typ != aofBase {
			return 0, fmt.Errorf("Bad file format reading the append only file %s: an RDB image in an incremental file", af.name)
		}
		s.Log.Info("Reading RDB base file on AOF loading...")
		var tail *bufio.Reader
		if strings.HasSuffix(af.name, ".rdb") {
			// Keys already expired are kept, as redis-server does for an
			// AOF base: the DELs that follow in the incremental files
			// remove them.
			_, err = s.loadRDB(br, loadOpts{keepExpired: true})
		} else {
			// A single-file AOF of redis-server before 7.0 (moved in by
			// the upgrade): an RDB preamble, then commands.
			tail, err = s.loadPreamble(br)
		}
		if err != nil {
			return 0, fmt.Errorf("Fatal error: the base AOF %s is not a valid RDB file: %v", af.name, err)
		}
		s.Log.Info(fmt.Sprintf("DB loaded from base file %s", af.name))
		if tail == nil {
			return st.Size(), nil
		}
		br = tail
	}
	valid, err := s.replayAOF(br)
	switch {
	case err == nil:
		s.Log.Info(fmt.Sprintf("DB loaded from %s file %s", map[byte]string{aofBase: "base", aofIncr: "incr"}[af.typ], af.name))
		return st.Size(), nil
	case errors.Is(err, errAOFTruncated):
		if !last {
			return 0, fmt.Errorf("Fatal error: the truncated file is not the last file (%s at offset %d)", af.name, valid)
		}
		if !s.Cfg.Bool("aof-load-truncated") {
			return 0, fmt.Errorf("Unexpected end of file reading the append only file %s at offset %d. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", af.name, valid)
		}
		s.Log.Warn(fmt.Sprintf("!!! Warning: short read while loading the AOF file %s!!!", af.name))
		s.Log.Warn(fmt.Sprintf("!!! Truncating the AOF %s at offset %d !!!", af.name, valid))
		if err := os.Truncate(path, valid); err != nil {
			return 0, fmt.Errorf("Error truncating the AOF file %s: %v", af.name, err)
		}
		s.Log.Warn(fmt.Sprintf("AOF %s loaded anyway because aof-load-truncated is enabled", af.name))
		return valid, nil
	default:
		if u, ok := err.(unknownAOFCommand); ok {
			return 0, fmt.Errorf("Unknown command '%s' reading the append only file %s", string(u), af.name)
		}
		return 0, fmt.Errorf("Bad file format reading the append only file %s at offset %d: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>", af.name, valid)
	}
}

// loadPreamble loads the RDB image at the start of r and returns a reader
// of the commands after it. The image's end is found by its trailer: the
// EOF opcode, then the CRC-64 of everything before (or zeros when the
// writer had rdbchecksum no), then a command or the end of the file.
func (s *Server) loadPreamble(r io.Reader) (*bufio.Reader, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	end := -1
	var crc uint64
	from := 0
	for p := 9; p+9 <= len(b); p++ {
		if b[p] != 0xff || (p+9 < len(b) && b[p+9] != '*') {
			continue
		}
		crc = rdb.CRC64(crc, b[from:p+1])
		from = p + 1
		sum := binary.LittleEndian.Uint64(b[p+1 : p+9])
		if sum == crc || sum == 0 {
			if _, err := s.loadRDB(bytes.NewReader(b[:p+9]), loadOpts{keepExpired: true}); err == nil {
				end = p + 9
				break
			}
		}
	}
	if end < 0 {
		_, err := s.loadRDB(bytes.NewReader(b), loadOpts{keepExpired: true})
		if err == nil {
			err = errors.New("no end found")
		}
		return nil, err
	}
	return bufio.NewReader(bytes.NewReader(b[end:])), nil
}

// replayAOF runs the commands of a command file through the dispatcher as
// a client without a connection: replies are dropped, nothing is
// propagated (no sink is attached while loading) and MULTI/EXEC work as
// they do for clients. It returns the offset after the last command that
// ran (before an unfinished MULTI), with errAOFTruncated when the file
// ends inside a command or a transaction, or another error at a byte that
// is not a command.
func (s *Server) replayAOF(r *bufio.Reader) (valid int64, err error) {
	c := s.newClient(loadConn{})
	c.Auth = true
	var off, multiAt int64 = 0, -1
	var args [][]byte
	n := 0
	for {
		var used int64
		args, used, err = readAOFCommand(r, args[:0])
		if err == io.EOF {
			if multiAt >= 0 {
				// A transaction the crash cut: drop it whole.
				c.Multi, c.Flags = nil, c.Flags&^(ClientMulti|ClientDirtyExec|ClientDirtyCAS)
				s.Log.Warn("Revert incomplete MULTI/EXEC transaction in AOF file")
				return multiAt, errAOFTruncated
			}
			return off, nil
		}
		if err != nil {
			if multiAt >= 0 {
				return multiAt, err
			}
			return off, err
		}
		if s.cmds.lookup(args[0]) == nil {
			return off, unknownAOFCommand(sanitize(string(args[0]), 128))
		}
		if skipOnAOFReplay(args) {
			off += used
			continue
		}
		if bytes.EqualFold(args[0], []byte("multi")) {
			multiAt = off
		}
		if n%1024 == 0 {
			c.setClock(time.Now())
		}
		n++
		s.execute(c, args)
		c.out.B = c.out.B[:0]
		off += used
		if c.Flags&ClientMulti == 0 {
			multiAt = -1
		}
	}
}

// skipOnAOFReplay reports the commands a replay leaves out: the slot
// changes a master sends its replicas (cluster_slotrepl.go) share the
// stream with the AOF, but the slot state they set lives in nodes.conf.
func skipOnAOFReplay(args [][]byte) bool {
	if len(args) < 2 {
		return false
	}
	return (bytes.EqualFold(args[0], []byte("cluster")) && bytes.EqualFold(args[1], []byte("setslot"))) ||
		(bytes.EqualFold(args[0], []byte("slotd.migrate")) && bytes.EqualFold(args[1], []byte("setslots")))
}

// unknownAOFCommand is a command name the table does not know.
type unknownAOFCommand string

func (u unknownAOFCommand) Error() string { return "unknown command " + string(u) }

// readAOFCommand reads one multibulk command. It returns io.EOF at a clean
// end, errAOFTruncated when the file ends inside the command, and another
// error for bytes that are not a command.
func readAOFCommand(r *bufio.Reader, args [][]byte) ([][]byte, int64, error) {
	var used int64
	line := func() ([]byte, error) {
		b, err := r.ReadSlice('\n')
		used += int64(len(b))
		if err == io.EOF {
			return nil, errAOFTruncated
		}
		if err != nil {
			return nil, errors.New("line too long")
		}
		if len(b) < 2 || b[len(b)-2] != '\r' {
			return nil, errors.New("bad line ending")
		}
		return b[:len(b)-2], nil
	}
	var b []byte
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return args, used, io.EOF
		}
		var err error
		if b, err = line(); err != nil {
			return args, used, err
		}
		// Annotations (#TS:... of aof-timestamp-enabled) are skipped.
		if len(b) == 0 || b[0] != '#' {
			break
		}
	}
	if len(b) < 2 || b[0] != '*' {
		return args, used, errors.New("expected a multibulk")
	}
	argc, ok := ParseInt(b[1:])
	if !ok || argc < 1 || argc > 1<<20 {
		return args, used, errors.New("bad multibulk length")
	}
	for i := int64(0); i < argc; i++ {
		b, err := line()
		if err != nil {
			return args, used, err
		}
		if len(b) < 2 || b[0] != '$' {
			return args, used, errors.New("expected a bulk")
		}
		l, ok := ParseInt(b[1:])
		if !ok || l < 0 || l > 1<<32 {
			return args, used, errors.New("bad bulk length")
		}
		v := make([]byte, l+2)
		if _, err := io.ReadFull(r, v); err != nil {
			return args, used, errAOFTruncated
		}
		used += l + 2
		if v[l] != '\r' || v[l+1] != '\n' {
			return args, used, errors.New("bad bulk ending")
		}
		args = append(args, v[:l])
	}
	return args, used, nil
}

// loadConn is the connection of the client that replays the AOF: it has
// no peer.
type loadConn struct{}

func (loadConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (loadConn) Write(b []byte) (int, error)      { return len(b), nil }
func (loadConn) Close() error                     { return nil }
func (loadConn) LocalAddr() net.Addr              { return &net.UnixAddr{Name: "aof", Net: "unix"} }
func (loadConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Name: "aof", Net: "unix"} }
func (loadConn) SetDeadline(time.Time) error      { return nil }
func (loadConn) SetReadDeadline(time.Time) error  { return nil }
func (loadConn) SetWriteDeadline(time.Time) error { return nil }

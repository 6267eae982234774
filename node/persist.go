package node

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// rdbState is the RDB persistence state: the running BGSAVE, the outcome
// of the last one, and the figures INFO persistence shows.
type rdbState struct {
	mu        sync.Mutex
	bg        *snapshot // the running BGSAVE, nil when none
	bgDone    chan struct{}
	bgStart   time.Time
	lastTry   time.Time // when the last BGSAVE started
	scheduled bool      // BGSAVE SCHEDULE (or BGSAVE in a transaction) pending

	lastOK     atomic.Bool  // rdb_last_bgsave_status
	lastBgTime atomic.Int64 // rdb_last_bgsave_time_sec, -1 before the first
	lastCow    atomic.Int64 // rdb_last_cow_size: peak captured bytes of the last BGSAVE
	saves      atomic.Int64 // rdb_saves
	seq        atomic.Int64 // temp file names

	lastLoadLoaded  atomic.Int64
	lastLoadExpired atomic.Int64

	// denyWrites is set while stop-writes-on-bgsave-error applies (save
	// rules exist, the last BGSAVE failed): the dispatcher refuses writes
	// and PING with MISCONF.
	denyWrites atomic.Bool

	// dir, when set, replaces the dir directive (in-process tests, which
	// must not chdir).
	dir string
}

// errMisconf is the reply to writes while the last BGSAVE failed; the text
// is redis-server's.
const errMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

const errBgsaveInProgress = "ERR Background save already in progress"

// bgsaveRetryDelay is how long after a failed BGSAVE the save rules wait
// before they try again (redis-server's CONFIG_BGSAVE_RETRY_DELAY).
const bgsaveRetryDelay = 5 * time.Second

func (s *Server) initPersist() {
	p := &s.rdb
	p.lastOK.Store(true)
	p.lastBgTime.Store(-1)
	s.ext.Shutdown = s.prepareShutdown
	s.Cfg.OnChange(func(name string) {
		if name == "save" || name == "stop-writes-on-bgsave-error" || name == "" {
			s.updateDenyWrites()
		}
	})
}

func (s *Server) updateDenyWrites() {
	s.rdb.denyWrites.Store(s.Cfg.Bool("stop-writes-on-bgsave-error") && s.Cfg.Str("save") != "" && !s.rdb.lastOK.Load())
}

// saveRules parses the save directive: pairs of seconds and changes.
func (s *Server) saveRules() [][2]int64 {
	f := strings.Fields(s.Cfg.Str("save"))
	var out [][2]int64
	for i := 0; i+1 < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 == nil && err2 == nil {
			out = append(out, [2]int64{sec, ch})
		}
	}
	return out
}

// dataDir is where dump.rdb lives: the dir directive (the working
// directory, which dir changes).
func (s *Server) dataDir() string {
	if s.rdb.dir != "" {
		return s.rdb.dir
	}
	return s.Cfg.Str("dir")
}

func (s *Server) rdbPath() string {
	return filepath.Join(s.dataDir(), s.Cfg.Str("dbfilename"))
}

// saveToFile writes sn to dbfilename through a temporary file, synced and
// renamed into place, so that a crash leaves the previous file whole.
func (s *Server) saveToFile(sn *snapshot, held bool) error {
	dir := s.dataDir()
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d.%d.rdb", os.Getpid(), s.rdb.seq.Add(1)))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		s.Log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", filepath.Base(tmp), dir, configErrText(err)))
		return err
	}
	err = sn.write(f, held)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.rdbPath())
	}
	if err != nil {
		os.Remove(tmp)
		if !errors.Is(err, errSnapshotCancelled) {
			s.Log.Warn(fmt.Sprintf("Write error saving DB on disk: %s", configErrText(err)))
		}
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// saved records a successful save of sn.
func (s *Server) saved(sn *snapshot) {
	s.dirty.Add(-sn.dirty)
	s.ext.lastSave.Store(time.Now().Unix())
}

// saveNow is SAVE: a snapshot written by the calling goroutine. With held
// the caller holds every slot lock and keeps the node stopped meanwhile (as
// redis-server's SAVE does); otherwise the node keeps serving.
func (s *Server) saveNow(held bool) error {
	if !held {
		s.ks.LockAllQuiet()
	}
	sn := s.beginSnapshot(!held)
	if !held {
		s.ks.UnlockAll()
		addSnapshotProc()
		defer dropSnapshotProc()
	}
	defer sn.end()
	s.rdb.saves.Add(1)
	if err := s.saveToFile(sn, held); err != nil {
		return err
	}
	s.saved(sn)
	s.Log.Info("DB saved on disk")
	return nil
}

// bgsaveRunning reports whether a BGSAVE is in progress.
func (s *Server) bgsaveRunning() bool {
	s.rdb.mu.Lock()
	defer s.rdb.mu.Unlock()
	return s.rdb.bg != nil
}

// startBgsave starts a BGSAVE. The caller holds no slot lock.
func (s *Server) startBgsave() error {
	p := &s.rdb
	// Slot locks come before p.mu (FLUSHALL holds them all when it stops a
	// BGSAVE), so the point in time is taken first.
	s.ks.LockAllQuiet()
	p.mu.Lock()
	if p.bg != nil {
		p.mu.Unlock()
		s.ks.UnlockAll()
		return errors.New(errBgsaveInProgress)
	}
	sn := s.beginSnapshot(true)
	s.ks.UnlockAll()
	now := time.Now()
	p.bg, p.bgStart, p.lastTry, p.scheduled = sn, now, now, false
	done := make(chan struct{})
	p.bgDone = done
	p.mu.Unlock()
	p.saves.Add(1)
	s.Log.Info("Background saving started")
	addSnapshotProc()
	go func() {
		defer dropSnapshotProc()
		stop := make(chan struct{})
		go func() {
			select {
			case <-s.done:
				sn.cancel()
			case <-stop:
			}
		}()
		err := s.saveToFile(sn, false)
		close(stop)
		peak := sn.peak.Load()
		sn.end()
		p.mu.Lock()
		p.bg, p.bgDone = nil, nil
		p.mu.Unlock()
		p.lastBgTime.Store(int64(time.Since(now) / time.Second))
		p.lastCow.Store(peak)
		switch {
		case err == nil:
			s.saved(sn)
			p.lastOK.Store(true)
			s.Log.Info("Background saving terminated with success")
		case errors.Is(err, errSnapshotCancelled):
			// Stopped on purpose: the status stays as it was.
			s.Log.Info("Background saving stopped")
		default:
			p.lastOK.Store(false)
			s.Log.Warn("Background saving error", zap.Error(err))
		}
		s.updateDenyWrites()
		close(done)
	}()
	return nil
}

// stopBgsave cancels a running BGSAVE and waits for it when wait is set.
// It may be called with slot locks held when wait is false.
func (s *Server) stopBgsave(wait bool) {
	p := &s.rdb
	p.mu.Lock()
	sn, done := p.bg, p.bgDone
	p.mu.Unlock()
	if sn == nil {
		return
	}
	sn.cancel()
	if wait {
		<-done
	}
}

// persistCron runs the save rules and scheduled BGSAVEs; called from the
// server cron.
func (s *Server) persistCron(now time.Time) {
	p := &s.rdb
	p.mu.Lock()
	running, scheduled, lastTry := p.bg != nil, p.scheduled, p.lastTry
	lastSave := s.ext.lastSave.Load()
	p.mu.Unlock()
	if running || s.aof.rewriting.Load() {
		return
	}
	retryOK := p.lastOK.Load() || now.Sub(lastTry) > bgsaveRetryDelay
	if !retryOK {
		return
	}
	if scheduled {
		s.startBgsave()
		return
	}
	dirty := s.dirty.Load()
	for _, r := range s.saveRules() {
		if dirty >= r[1] && now.Unix()-lastSave > r[0] {
			s.Log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", r[1], r[0]))
			s.startBgsave()
			return
		}
	}
}

// loadDataAtStart loads dbfilename when it exists (appendonly no). A file
// that does not load stops the start, as in redis-server.
func (s *Server) loadDataAtStart() error {
	path := s.rdbPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB: %s. Exiting.", configErrText(err))
	}
	defer f.Close()
	start := time.Now()
	// Nothing else runs yet: no slot locks are needed, and every core may
	// work on the load (decoding and inserting run in parallel).
	procs := runtime.GOMAXPROCS(0)
	if procs < runtime.NumCPU() {
		runtime.GOMAXPROCS(runtime.NumCPU())
	}
	// Nor is there garbage to speak of: what loading allocates is kept, so
	// the collector stays off while the heap grows from nothing (each cycle
	// would mark the same keys again). Its first cycle over the loaded
	// keyspace then runs in the background, while the node serves, as any
	// Go collection does; GOGC is restored once it has measured the heap,
	// so that restoring it does not start a collection at once, with the
	// node still starting (GOMAXPROCS would wait for it) and every
	// allocation made to help it.
	gcPercent := debug.SetGCPercent(-1)
	res, err := s.loadRDB(f, loadOpts{held: true, keepExpired: s.Role() != "master", ownGC: true})
	runtime.GOMAXPROCS(procs)
	go func() {
		runtime.GC()
		debug.SetGCPercent(gcPercent)
	}()
	s.rdb.lastLoadLoaded.Store(int64(res.Loaded))
	s.rdb.lastLoadExpired.Store(int64(res.Expired))
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB: %v. Exiting.", err)
	}
	s.Log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", res.Loaded, res.Expired))
	s.Log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// LoadData loads the node's data from disk before it serves clients.
func (s *Server) LoadData() error {
	if s.Cfg.Bool("appendonly") {
		// The AOF wins over the RDB when enabled (aof.go).
		return s.loadAOFAtStart()
	}
	return s.loadDataAtStart()
}

// prepareShutdown stops a BGSAVE and, when asked, saves the final
// snapshot; the error aborts the shutdown.
func (s *Server) prepareShutdown(save bool) error {
	s.stopBgsave(true)
	if !save {
		return nil
	}
	s.Log.Info("Saving the final RDB snapshot before exiting.")
	if err := s.saveNow(false); err != nil {
		s.Log.Warn("Error trying to save the DB, can't exit.")
		return err
	}
	return nil
}

// ShutdownOnSignal is SIGTERM/SIGINT: the final save when save rules
// exist, as SHUTDOWN without arguments. It reports false when that save
// failed and the node should keep running, as redis-server does.
func (s *Server) ShutdownOnSignal() bool {
	if err := s.prepareShutdown(s.Cfg.Str("save") != ""); err != nil {
		s.Log.Warn("SIGTERM received but errors trying to shut down the server, check the logs for more information")
		return false
	}
	return true
}

// afterFlushAll is FLUSHALL's persistence part, run under every slot lock
// after the keys are gone: a BGSAVE in progress is stopped and, when save
// rules exist, the now empty dataset is saved, as redis-server does.
func (s *Server) afterFlushAll() {
	s.stopBgsave(false)
	if s.Cfg.Str("save") != "" {
		if err := s.saveNow(true); err != nil {
			s.Log.Warn("save after FLUSHALL failed", zap.Error(err))
		}
	}
}

func cmdSave(x *Ctx) {
	s := x.S
	if s.bgsaveRunning() {
		x.W.Error(errBgsaveInProgress)
		return
	}
	if err := s.saveNow(!x.selfLock); err != nil {
		x.W.Error("ERR")
		return
	}
	x.W.OK()
}

func cmdBgsave(x *Ctx) {
	s := x.S
	if len(x.Args) > 1 && !(len(x.Args) == 2 && strings.EqualFold(x.Arg(1), "schedule")) {
		x.W.Error(ErrSyntax)
		return
	}
	if s.bgsaveRunning() {
		x.W.Error(errBgsaveInProgress)
		return
	}
	if s.aof.rewriting.Load() {
		// One background job at a time, as redis-server's one child.
		if len(x.Args) == 1 {
			x.W.Error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
			return
		}
		s.rdb.mu.Lock()
		s.rdb.scheduled = true
		s.rdb.mu.Unlock()
		x.W.Simple("Background saving scheduled")
		return
	}
	if !x.selfLock {
		// Inside a transaction every lock is held: the cron starts it.
		s.rdb.mu.Lock()
		s.rdb.scheduled = true
		s.rdb.mu.Unlock()
		x.W.Simple("Background saving scheduled")
		return
	}
	if err := s.startBgsave(); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.Simple("Background saving started")
}

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the
// keyspace, load the file back. The caller holds every slot lock.
func debugReload(x *Ctx) {
	s := x.S
	merge, flush, save := false, true, true
	for _, a := range x.Args[2:] {
		switch strings.ToLower(string(a)) {
		case "merge":
			merge = true
		case "noflush":
			flush = false
		case "nosave":
			save = false
		default:
			x.W.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if save {
		s.stopBgsave(false)
		if err := s.saveNow(true); err != nil {
			x.W.Error("ERR")
			return
		}
	}
	if flush {
		for i := 0; i < s.ks.NumDBs(); i++ {
			s.touchWatchedDB(i)
			s.ks.DB(i).Flush()
		}
	}
	f, err := os.Open(s.rdbPath())
	if err != nil {
		x.W.Error("ERR Error trying to load the RDB dump, check server logs.")
		return
	}
	defer f.Close()
	var r io.Reader = f
	_ = merge // a key met twice is an error either way; MERGE is accepted for compatibility
	res, err := s.loadRDB(r, loadOpts{held: true})
	s.rdb.lastLoadLoaded.Store(int64(res.Loaded))
	s.rdb.lastLoadExpired.Store(int64(res.Expired))
	if err != nil {
		s.Log.Warn("DEBUG RELOAD: loading failed", zap.Error(err))
		x.W.Error("ERR Error trying to load the RDB dump, check server logs.")
		return
	}
	s.Log.Info("DB reloaded by DEBUG RELOAD")
	x.W.OK()
}

// infoRDB writes the RDB part of INFO persistence.
func (s *Server) infoRDB(w infoWriter) {
	p := &s.rdb
	p.mu.Lock()
	bg, bgStart := p.bg, p.bgStart
	p.mu.Unlock()
	cur, peak, processed, total, perc := int64(0), int64(0), int64(0), int64(0), "0.00"
	curTime := int64(-1)
	if bg != nil {
		cur, peak = bg.buffered.Load(), bg.peak.Load()
		processed, total = bg.processed.Load(), bg.total
		if total > 0 {
			perc = fmt.Sprintf("%.2f", 100*float64(processed)/float64(total))
		}
		curTime = int64(time.Since(bgStart) / time.Second)
	}
	w.kv("loading", 0)
	w.kv("async_loading", 0)
	w.kv("current_cow_peak", peak)
	w.kv("current_cow_size", cur)
	w.kv("current_cow_size_age", 0)
	w.kv("current_fork_perc", perc)
	w.kv("current_save_keys_processed", processed)
	w.kv("current_save_keys_total", total)
	w.kv("rdb_changes_since_last_save", s.dirty.Load())
	w.kv("rdb_bgsave_in_progress", boolInt(bg != nil))
	w.kv("rdb_last_save_time", s.ext.lastSave.Load())
	status := "ok"
	if !p.lastOK.Load() {
		status = "err"
	}
	w.kv("rdb_last_bgsave_status", status)
	w.kv("rdb_last_bgsave_time_sec", p.lastBgTime.Load())
	w.kv("rdb_current_bgsave_time_sec", curTime)
	w.kv("rdb_saves", p.saves.Load())
	w.kv("rdb_last_cow_size", p.lastCow.Load())
	w.kv("rdb_last_load_keys_expired", p.lastLoadExpired.Load())
	w.kv("rdb_last_load_keys_loaded", p.lastLoadLoaded.Load())
}

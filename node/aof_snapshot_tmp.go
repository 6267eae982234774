package node

// TEMPORARY: stand-ins for the snapshot API that h-snap builds
// (writeSnapshot, loadRDBFrom, dataDir, LoadData). This file is deleted
// when h-snap is merged; its LoadData must then call s.loadAOFAtStart()
// when appendonly is yes.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
	"github.com/slotd/slotd/slots"
)

// writeSnapshot writes the keyspace as an RDB image. This stand-in holds
// every slot lock for the whole write.
func (s *Server) writeSnapshot(w io.Writer, atStart func()) error {
	s.ks.LockAll()
	defer s.ks.UnlockAll()
	if atStart != nil {
		atStart()
	}
	wr := rdb.NewWriter(w, rdb.Options{NoCompression: !s.Cfg.Bool("rdbcompression"), NoChecksum: !s.Cfg.Bool("rdbchecksum")})
	wr.Header(rdb.Info{RedisVer: Version, CTime: time.Now().Unix(), UsedMem: s.ks.UsedMemory(), AOFBase: true})
	var rec rdb.Record
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		if db.Len() == 0 {
			continue
		}
		wr.SelectDB(i, uint64(db.Len()), uint64(db.Volatile()))
		for slot := 0; slot < slots.Count; slot++ {
			var err error
			db.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
				rec = rdb.Record{DB: i, Key: []byte(k), Entry: e, Expire: db.ExpireOfKey(slot, k, e)}
				err = wr.Key(&rec)
				return err == nil
			})
			if err != nil {
				return err
			}
		}
	}
	return wr.Close()
}

// loadRDBFrom loads an RDB stream into the keyspace.
func (s *Server) loadRDBFrom(r io.Reader) (keys int, err error) {
	s.ks.LockAll()
	defer s.ks.UnlockAll()
	err = rdb.NewReader(r).Run(rdb.Handler{Key: func(rec *rdb.Record) error {
		if rec.DB >= s.ks.NumDBs() {
			return fmt.Errorf("database %d out of range", rec.DB)
		}
		key := append([]byte(nil), rec.Key...)
		s.ks.DB(rec.DB).SetWithExpire(slots.Of(key), key, rec.Entry, rec.Expire)
		keys++
		return nil
	}})
	return keys, err
}

func (s *Server) dataDir() string { return s.Cfg.Str("dir") }

// LoadData loads the node's data before it serves clients: the AOF when
// appendonly is yes, else dbfilename.
func (s *Server) LoadData() error {
	if s.Cfg.Bool("appendonly") {
		return s.loadAOFAtStart()
	}
	f, err := os.Open(filepath.Join(s.dataDir(), s.Cfg.Str("dbfilename")))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = s.loadRDBFrom(f)
	return err
}

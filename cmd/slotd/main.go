// Command slotd runs one slotd node. Its command line is redis-server's:
//
//	slotd [/path/to/redis.conf] [--directive value ...]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slotd/slotd/node"
	"github.com/slotd/slotd/node/config"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "-v" || args[0] == "--version") {
		fmt.Printf("slotd v=%s\n", node.Version)
		return
	}
	cfg, err := config.Load(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	log, level, err := newLogger(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	procs := setProcs(cfg)
	srv := node.New(cfg, log)
	srv.Log.Info("starting", zap.String("version", node.Version), zap.Int("procs", procs))
	// loglevel can change at run time (CONFIG SET); logfile cannot.
	cfg.OnChange(func(name string) {
		if name == "loglevel" {
			level.SetLevel(zapLevel(cfg.Str("loglevel")))
		}
	})
	log = srv.Log
	if err := srv.LoadData(); err != nil {
		log.Fatal(err.Error())
	}
	if err := srv.Listen(); err != nil {
		log.Fatal("cannot listen", zap.Error(err))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			select {
			case s := <-sig:
				log.Info("signal received, shutting down", zap.String("signal", s.String()))
				if srv.ShutdownOnSignal() {
					srv.Close()
					return
				}
			case <-srv.Done():
				return
			}
		}
	}()
	srv.Serve()
	srv.Close()
	log.Sync()
}

// newLogger builds the node's logger from logfile and loglevel: JSON lines
// on stdout or appended to the file, at the level loglevel maps to.
func newLogger(cfg *config.Config) (*zap.Logger, zap.AtomicLevel, error) {
	zc := zap.NewProductionConfig()
	zc.Sampling = &zap.SamplingConfig{Initial: 100, Thereafter: 100}
	zc.Level = zap.NewAtomicLevelAt(zapLevel(cfg.Str("loglevel")))
	if f := cfg.Str("logfile"); f != "" {
		zc.OutputPaths = []string{f}
		zc.ErrorOutputPaths = []string{f}
	} else {
		zc.OutputPaths = []string{"stdout"}
	}
	l, err := zc.Build()
	return l, zc.Level, err
}

// zapLevel maps redis-server's log levels onto zap's: debug and verbose
// are debug output, notice is info, warning is warn.
func zapLevel(l string) zapcore.Level {
	switch l {
	case "debug", "verbose":
		return zapcore.DebugLevel
	case "warning":
		return zapcore.WarnLevel
	}
	return zapcore.InfoLevel
}

// setProcs sets how many OS threads run slotd's Go code at once from
// io-threads (default 1, as redis-server's), unless the GOMAXPROCS
// environment variable says otherwise. The keyspace's per-slot locks let
// commands run on every core; how many cores serve clients is a deployment
// choice, and on a machine shared with its clients one is faster (see
// docs/design.md). It returns the number in force.
func setProcs(cfg *config.Config) int {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(int(cfg.Int("io-threads")))
	}
	return runtime.GOMAXPROCS(0)
}

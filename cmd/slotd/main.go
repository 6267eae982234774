// Command slotd runs one slotd node. Its command line is redis-server's:
//
//	slotd [/path/to/redis.conf] [--directive value ...]
package main

import (
	"fmt"
	"os"
	"os/signal"
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
	log, err := newLogger(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := node.New(cfg, log)
	if err := srv.Listen(); err != nil {
		log.Fatal("cannot listen", zap.Error(err))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sig:
			log.Info("signal received, shutting down", zap.String("signal", s.String()))
			srv.Close()
		case <-srv.Done():
		}
	}()
	srv.Serve()
	srv.Close()
	log.Sync()
}

func newLogger(cfg *config.Config) (*zap.Logger, error) {
	zc := zap.NewProductionConfig()
	zc.Sampling = &zap.SamplingConfig{Initial: 100, Thereafter: 100}
	switch cfg.Str("loglevel") {
	case "debug":
		zc.Level = zap.NewAtomicLevelAt(zapcore.DebugLevel)
	case "verbose", "notice":
		zc.Level = zap.NewAtomicLevelAt(zapcore.InfoLevel)
	case "warning":
		zc.Level = zap.NewAtomicLevelAt(zapcore.WarnLevel)
	case "nothing":
		zc.Level = zap.NewAtomicLevelAt(zapcore.FatalLevel)
	}
	if f := cfg.Str("logfile"); f != "" {
		zc.OutputPaths = []string{f}
		zc.ErrorOutputPaths = []string{f}
	} else {
		zc.OutputPaths = []string{"stdout"}
	}
	return zc.Build()
}

// Package config holds a node's configuration: the directives of
// redis.conf with redis-server's names, defaults, units and validation,
// read from a file and the command line, changed by CONFIG SET and written
// back by CONFIG REWRITE.
//
// Values are stored as their canonical text (what CONFIG GET prints) and
// read through typed getters. Callers that need a value on a hot path
// register an OnChange hook and cache it.
package config

//go:build !linux

package store

import (
	"errors"
	"os"
)

// errMapUnsupported: this system cannot map the store's files; scans read.
var errMapUnsupported = errors.New("mapping unsupported")

func mapFile(*os.File, int64) ([]byte, error) { return nil, errMapUnsupported }

func unmapFile([]byte) {}

func adviseWillNeed([]byte, int64, int64) {}

func populate([]byte, int64, int64) (bool, error) { return false, nil }

func resident([]byte, int64) bool { return true }

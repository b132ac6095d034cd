package client

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Header is what every database's description begins with, whether one
// device keeps it (its manifest, Info) or a cluster (its shard map, which
// embeds it). Both encode it as the same JSON fields.
type Header struct {
	Name       string `json:"name"`
	Kind       Kind   `json:"kind"`
	Records    int    `json:"records"`    // a kv database's: its buckets
	Generation uint64 `json:"generation"` // 0: created, never loaded
}

// Head returns the header (of whatever embeds it).
func (h *Header) Head() *Header { return h }

// Hex is bytes a manifest (or a cluster's map) holds, written as a hex
// string in its JSON, as manifests always have: seeds and salts are bytes
// in the program, text only on the wire.
type Hex []byte

// MarshalJSON writes h as a hex string.
func (h Hex) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(h)) }

// UnmarshalJSON reads a hex string.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("client: a manifest's hex field: %w", err)
	}
	*h = d
	return nil
}

// String is h in hex.
func (h Hex) String() string { return hex.EncodeToString(h) }

package client

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

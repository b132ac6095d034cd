package chaos

// Kind is a kind of fault.
type Kind string

// The faults a run injects.
const (
	Kill            Kind = "kill"             // SIGKILL a device, start it again over its store
	Pause           Kind = "pause"            // SIGSTOP a device, SIGCONT it later
	Corrupt         Kind = "corrupt"          // flip one bit of a random stored page
	Wipe            Kind = "wipe"             // SIGKILL a device, delete its store, start it again
	EtcdMember      Kind = "etcd-member"      // stop one etcd member, start it again
	EtcdQuorum      Kind = "etcd-quorum"      // stop a majority of etcd members for at most QuorumLoss
	ConcurrentLoads Kind = "concurrent-loads" // two loads of the database at once
	FullDisk        Kind = "full-disk"        // fill a device's filesystem, free it later
)

// tracks are the fault schedule's independent tracks: each runs rounds of
// its kinds (one of each, in a seeded order) at its own pace, beside the
// others. The device track is one track so that a destructive fault (a
// flipped page, a wipe) never meets another on the same shard: each waits
// until every replica is whole again.
var tracks = [][]Kind{
	{Kill, Pause, Corrupt, Wipe},
	{EtcdMember, EtcdQuorum},
	{ConcurrentLoads},
	{FullDisk},
}

// Kinds are every fault kind, in the order reports list them.
func Kinds() []Kind {
	var ks []Kind
	for _, t := range tracks {
		ks = append(ks, t...)
	}
	return ks
}

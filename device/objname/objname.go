// Package objname owns the names of a database's objects on a device: one
// place that says where its manifest, data, members, grants, evaluation
// keys and delta live, used by the client that writes them, the device
// that guards them (package authz) and the tools that read them. A name is
// "<database>/<rest>": the part before the first '/' is the database, and
// every object of a database has one, so that no database's name is a
// prefix of another's objects.
package objname

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Reserved starts the names the device keeps for itself (access lists); no
// database is named with it.
const Reserved = "_"

// ErrNoDatabase: an object name with no database part ("", "/x", or no
// '/'); ErrReserved: one in the device's reserved namespace.
var (
	ErrNoDatabase = errors.New("objname: the name has no database part (want <database>/<object>)")
	ErrReserved   = errors.New("objname: reserved name")
)

// Database is the database an object belongs to: the part of its name
// before the first '/', which must be there.
func Database(object string) (string, error) {
	db, _, ok := strings.Cut(object, "/")
	switch {
	case db == "" || !ok:
		return "", fmt.Errorf("%w: %q", ErrNoDatabase, object)
	case strings.HasPrefix(db, Reserved):
		return "", fmt.Errorf("%w: %q", ErrReserved, object)
	}
	return db, nil
}

// Prefix is the prefix of every object of database db.
func Prefix(db string) string { return db + "/" }

// Manifest is database db's manifest (its head: replacing it publishes a
// generation).
func Manifest(db string) string { return db + "/head" }

// Fence is the object a compaction raises to hold updates of db back.
func Fence(db string) string { return Manifest(db) + ".fence" }

// Members is the prefix of every member area of db.
func Members(db string) string { return db + "/members/" }

// Member is identity's area of db: where it keeps its evaluation keys and
// finds the grants left for it.
func Member(db, identity string) string { return Members(db) + identity + "/" }

// Grant is where the keys of db's generation selected by keyNonce, sealed
// to identity, lie.
func Grant(db, identity, keyNonce string) string { return Member(db, identity) + "grant." + keyNonce }

// Keys is the prefix of the evaluation keys member uploaded for key set
// keySet.
func Keys(db, member, keySet string) string { return Member(db, member) + "keys/" + keySet }

// LWEKeys is the prefix of the Galois keys of one LWE ring secret
// (fingerprint fp) under a key prefix.
func LWEKeys(keys, fp string) string { return keys + "/lwe-" + fp + "/" }

// Delta is the prefix of db's delta segments.
func Delta(db string) string { return db + "/delta/" }

// Generation is the prefix (without its trailing '/') of the data of
// generation gen of db written by the load named token ("" for a
// generation from before loads carried one).
func Generation(db string, gen uint64, token string) string {
	if token == "" {
		return fmt.Sprintf("%s/g%d", db, gen)
	}
	return fmt.Sprintf("%s/g%d.%s", db, gen, token)
}

// GenerationPrefix is the prefix of every generation's data of db.
func GenerationPrefix(db string) string { return db + "/g" }

// GenerationOf is the generation a data object of db belongs to.
func GenerationOf(db, object string) (uint64, bool) {
	rest, ok := strings.CutPrefix(object, GenerationPrefix(db))
	if !ok {
		return 0, false
	}
	end := strings.IndexAny(rest, "./")
	if end <= 0 {
		return 0, false
	}
	g, err := strconv.ParseUint(rest[:end], 10, 64)
	return g, err == nil
}

// LWETiles is the prefix of an LWE PIR generation's tiles (gen as
// Generation names it); tile k is Stored(LWETiles(gen), k).
func LWETiles(gen string) string { return gen + "/lwe/t" }

// LWEDiagonals is the prefix of an LWE PIR generation's hint diagonals.
func LWEDiagonals(gen string) string { return gen + "/lwe/d" }

// LWEPacker is the prefix of an LWE PIR generation's packer
// precomputation (the packed mode, lwepir.Packer): for each pack, its
// factors' polynomials (N words each) then its a-part (one polynomial of
// N words, each below 2^32), one sequence of N-word polynomials cut into
// objects of LWEPackerLimbs limbs (the last one shorter), a limb a
// polynomial, 8-byte little-endian words.
func LWEPacker(gen string) string { return gen + "/lwe/p" }

// LWEPackerLimbs is the limbs (N-word polynomials) of one packer object:
// 16 MiB at N = 2048, inside a message's bound.
const LWEPackerLimbs = 1024

// Stored is the j-th object under prefix: stored operands are numbered
// objects.
func Stored(prefix string, j int64) string { return fmt.Sprintf("%s%06d", prefix, j) }

// ACL is the object holding db's access list, in the reserved namespace.
func ACL(db string) string { return Reserved + "acl/" + db }

// RotationKey is the Galois key of a column rotation by r among the LWE
// keys under prefix (LWEKeys): the client stores it, the device's QueryLWE
// reads it.
func RotationKey(prefix string, r int) string { return prefix + "rot" + strconv.Itoa(r) }

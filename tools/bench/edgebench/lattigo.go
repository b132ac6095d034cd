package edgebench

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// LattigoResult holds Lattigo's figures for one parameter set.
type LattigoResult struct {
	EncryptMs    float64 // Encode + Encrypt (public key): wall time, fastest round
	EncryptCPUMs float64 // the same in thread CPU time
	WorkingBytes int     // see MeasureLattigo
}

// bytesPerOp returns the heap bytes one call of op allocates (mean of 5).
func bytesPerOp(op func() error) (float64, error) {
	var m0, m1 runtime.MemStats
	const k = 5
	runtime.ReadMemStats(&m0)
	for i := 0; i < k; i++ {
		if err := op(); err != nil {
			return 0, err
		}
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / k, nil
}

// MeasureLattigo times ckks Encode + rlwe public-key Encrypt at ring degree n with
// the given primes (no special primes P, so Lattigo takes its direct
// encryptZeroPkNoP path) and reports its working memory: the live heap
// (after GC) held by the parameters (ring and NTT tables), the encoder, the
// encryptor and the plaintext buffer, plus the bytes allocated per
// encryption in steady state (transient buffers). The public key and the
// output ciphertext are excluded, as they are for the edge encryptor.
func MeasureLattigo(n int, primes []uint64, logScale int, values []float64, iters int) (LattigoResult, error) {
	var r LattigoResult
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	h0 := live()
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: bits.Len(uint(n)) - 1, Q: primes, LogDefaultScale: logScale})
	if err != nil {
		return r, fmt.Errorf("edgebench: lattigo: parameters: %w", err)
	}
	h1 := live()
	_, pk := rlwe.NewKeyGenerator(params).GenKeyPairNew()
	h2 := live()
	encd := ckks.NewEncoder(params)
	enc := rlwe.NewEncryptor(params, pk)
	pt := ckks.NewPlaintext(params, params.MaxLevel())
	h3 := live()
	ct := ckks.NewCiphertext(params, 1, params.MaxLevel())
	op := func() error {
		if err := encd.Encode(values, pt); err != nil {
			return err
		}
		return enc.Encrypt(pt, ct)
	}
	if err := op(); err != nil {
		return r, fmt.Errorf("edgebench: lattigo: encrypt: %w", err)
	}
	// The same timing rule as Measure (fastest of 5 rounds).
	r.EncryptMs, r.EncryptCPUMs, err = TimeOp(iters, op)
	if err != nil {
		return r, fmt.Errorf("edgebench: lattigo: encrypt: %w", err)
	}
	perOp, err := bytesPerOp(op)
	if err != nil {
		return r, fmt.Errorf("edgebench: lattigo: encrypt: %w", err)
	}
	setup := int64(h1) - int64(h0) + int64(h3) - int64(h2)
	r.WorkingBytes = int(setup) + int(math.Round(perOp))
	runtime.KeepAlive(params)
	runtime.KeepAlive(encd)
	runtime.KeepAlive(pt)
	return r, nil
}

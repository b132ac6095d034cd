package storeread

import (
	"bytes"
	"testing"
	"time"

	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// TestReadBenchReadsSameBytes: both paths of the comparison deliver the
// same payload, limb for limb, and the summary arithmetic is exact.
func TestReadBenchReadsSameBytes(t *testing.T) {
	sh := store.Shape{Polys: 2, Limbs: 3, LogN: 10, WordSize: 8}
	rb, err := New(t.TempDir(), layout.Layout{Channels: 4, PageSize: 4096}, sh)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	if rb.Bytes() != 2*3*8192 {
		t.Fatalf("Bytes = %d", rb.Bytes())
	}
	for i := 0; i < sh.NumLimbs(); i++ {
		if err := rb.obj.ReadLimbInto(rb.buf, i/sh.Limbs, i%sh.Limbs); err != nil {
			t.Fatal(err)
		}
		fromStore := bytes.Clone(rb.buf)
		if _, err := rb.seq.ReadAt(rb.buf, int64(i)*int64(len(rb.buf))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fromStore, rb.buf) {
			t.Fatalf("limb %d: store and sequential file differ", i)
		}
	}
	all, err := rb.obj.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if _, err := rb.seq.ReadAt(rb.buf, int64(i)*int64(len(rb.buf))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(all[i], rb.buf) {
			t.Fatalf("limb %d: object read and sequential file differ", i)
		}
	}
	if err := rb.ReadStore(); err != nil {
		t.Fatal(err)
	}
	if err := rb.ReadSequential(); err != nil {
		t.Fatal(err)
	}
	c := summarize(rb.st.Layout(), sh, 10, 2*time.Second, 4*time.Second)
	// 10 rounds of 49152 B = 0.49152 MB; 0.2458 MB/s vs 0.1229 MB/s.
	if c.ParallelMBps != 0.49152/2 || c.SequentialMBps != 0.49152/4 || c.Ratio != 2 {
		t.Fatalf("summarize = %+v", c)
	}
}

func TestCompareReadThroughput(t *testing.T) {
	sh := store.Shape{Polys: 1, Limbs: 2, LogN: 9, WordSize: 8}
	c, err := Compare(t.TempDir(), layout.Layout{Channels: 2, PageSize: 1024}, sh, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c.Bytes != 8192 || c.Rounds != 3 || c.Shape != sh {
		t.Fatalf("comparison = %+v", c)
	}
	if _, err := Compare(t.TempDir(), DefaultLayout, sh, 0); err == nil {
		t.Fatal("0 rounds accepted")
	}
}

// BenchmarkReadLimbs compares, in one run, the store's parallel limb reads
// (store-parallel; store-object reads the whole object per channel) with a
// plain sequential read of the same bytes on the same file system
// (page cache included: no O_DIRECT, nothing dropped). The ratio
// sub-benchmark alternates both and reports parallel/sequential throughput.
func BenchmarkReadLimbs(b *testing.B) {
	rb, err := New(b.TempDir(), DefaultLayout, DefaultShape)
	if err != nil {
		b.Fatal(err)
	}
	defer rb.Close()
	b.Run("store-parallel", func(b *testing.B) {
		b.SetBytes(rb.Bytes())
		for b.Loop() {
			if err := rb.ReadStore(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store-object", func(b *testing.B) {
		b.SetBytes(rb.Bytes())
		for b.Loop() {
			if err := rb.ReadStoreObject(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(rb.Bytes())
		for b.Loop() {
			if err := rb.ReadSequential(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var par, seq time.Duration
		rounds := 0
		for b.Loop() {
			t0 := time.Now()
			if err := rb.ReadStore(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := rb.ReadSequential(); err != nil {
				b.Fatal(err)
			}
			par += t1.Sub(t0)
			seq += time.Since(t1)
			rounds++
		}
		c := summarize(DefaultLayout, DefaultShape, rounds, par, seq)
		b.ReportMetric(c.ParallelMBps, "parallel-MB/s")
		b.ReportMetric(c.SequentialMBps, "sequential-MB/s")
		b.ReportMetric(c.Ratio, "parallel/sequential")
	})
}

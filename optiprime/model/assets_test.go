package model

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestEmbeddedSubsetsMatchModule checks that both embedded subsets decode to
// exactly the first images and labels of the GoMNIST module's files, the full
// set the tests and benchmarks read. CI downloads the module (go mod
// download), so the comparison runs there.
func TestEmbeddedSubsetsMatchModule(t *testing.T) {
	dir, err := DataDir()
	if err != nil {
		t.Skipf("GoMNIST data not available: %v", err)
	}
	train, test, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		get  func() (Dataset, error)
		full Dataset
		n    int
	}{
		{"test", TestSubset, test, TestSubsetLen},
		{"train", TrainSubset, train, TrainSubsetLen},
	} {
		sub, err := c.get()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sub.Len() != c.n || len(sub.Images) != c.n {
			t.Fatalf("%s: %d images, %d labels, want %d", c.name, len(sub.Images), sub.Len(), c.n)
		}
		for i := range c.n {
			if !bytes.Equal(sub.Images[i], c.full.Images[i]) {
				t.Fatalf("%s: embedded image %d differs from the module's", c.name, i)
			}
			if sub.Labels[i] != c.full.Labels[i] {
				t.Fatalf("%s: embedded label %d is %d, the module's %d", c.name, i, sub.Labels[i], c.full.Labels[i])
			}
		}
	}
	// The first training and test digits, well known.
	if tr, _ := TrainSubset(); tr.Labels[0] != 5 {
		t.Errorf("first training label %d, want 5", tr.Labels[0])
	}
}

// TestEmbeddedSubsetErrors checks that a corrupt or short embedded file is a
// named error, not a silent short data set.
func TestEmbeddedSubsetErrors(t *testing.T) {
	d, err := TestSubset()
	if err != nil {
		t.Fatal(err)
	}
	im, lb, err := EncodeIDX(d.Subset(3))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(im)
	zw.Close()
	if got, err := embeddedSubset("x", gz.Bytes(), lb, 3); err != nil || got.Len() != 3 || !bytes.Equal(got.Images[2], d.Images[2]) {
		t.Errorf("gzipped images: %v, %d examples", err, got.Len())
	}
	if _, err := embeddedSubset("x", im, lb, 4); err == nil || !strings.Contains(err.Error(), "want 4") {
		t.Errorf("3 examples where 4 are promised: %v", err)
	}
	if _, err := embeddedSubset("x", gz.Bytes()[:20], lb, 3); err == nil {
		t.Error("truncated gzip accepted")
	}
}

package model

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

//go:generate go run ./internal/trainmnist

// The committed model and MNIST subsets (see doc.go for how they are made).
// They are compiled into the binary, so the demo and `rosemary mpc` run
// without the GoMNIST module, a module cache or a Go toolchain.
var (
	//go:embed testdata/mnist-cnn.rmq
	defaultModel []byte
	//go:embed testdata/t10k-subset-images-idx3-ubyte
	testSubsetImages []byte
	//go:embed testdata/t10k-subset-labels-idx1-ubyte
	testSubsetLabels []byte
	// Written by go run ./optiprime/model/internal/trainsubset.
	//go:embed testdata/train-subset-images-idx3-ubyte.gz
	trainSubsetImages []byte
	//go:embed testdata/train-subset-labels-idx1-ubyte.gz
	trainSubsetLabels []byte
)

// Sizes of the embedded subsets: the first TestSubsetLen images of the MNIST
// test set and the first TrainSubsetLen of the training set.
const (
	TestSubsetLen  = 100
	TrainSubsetLen = 1024
)

// Default returns the committed MNIST model (trained by `go generate` /
// `rosemary mpc train` with DefaultTrainOptions).
func Default() (*Quantized, error) {
	q := new(Quantized)
	if err := q.UnmarshalBinary(defaultModel); err != nil {
		return nil, fmt.Errorf("model: embedded model: %w", err)
	}
	return q, nil
}

// TestSubset returns the embedded first TestSubsetLen images of the MNIST
// test set: the queries of the demo and `rosemary mpc infer`, and the test
// images of the tests.
func TestSubset() (Dataset, error) {
	return embeddedSubset("test subset", testSubsetImages, testSubsetLabels, TestSubsetLen)
}

// TrainSubset returns the embedded first TrainSubsetLen images of the MNIST
// training set: the demo's vector database.
func TrainSubset() (Dataset, error) {
	return embeddedSubset("training subset", trainSubsetImages, trainSubsetLabels, TrainSubsetLen)
}

// embeddedSubset decodes an embedded IDX image/label pair, gzipped or not,
// and checks it holds the n examples its name promises.
func embeddedSubset(name string, images, labels []byte, n int) (Dataset, error) {
	ib, err := maybeGunzip(images)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded %s images: %w", name, err)
	}
	lb, err := maybeGunzip(labels)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded %s labels: %w", name, err)
	}
	imgs, err := DecodeIDXImages(ib)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded %s: %w", name, err)
	}
	labs, err := DecodeIDXLabels(lb)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded %s: %w", name, err)
	}
	if len(imgs) != n || len(labs) != n {
		return Dataset{}, fmt.Errorf("model: embedded %s: %d images and %d labels, want %d of each", name, len(imgs), len(labs), n)
	}
	return Dataset{Images: imgs, Labels: labs}, nil
}

// maybeGunzip returns b decompressed when it starts with the gzip magic, b
// itself otherwise; the decompressed size is capped like readMaybeGzip's.
func maybeGunzip(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, maxDecompressed+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxDecompressed {
		return nil, fmt.Errorf("larger than %d bytes", maxDecompressed)
	}
	return out, nil
}

package model

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

//go:generate go run ./internal/trainmnist

// The committed model and test subset (see doc.go for how they are made).
var (
	//go:embed testdata/mnist-cnn.rmq
	defaultModel []byte
	//go:embed testdata/t10k-subset-images-idx3-ubyte
	subsetImages []byte
	//go:embed testdata/t10k-subset-labels-idx1-ubyte
	subsetLabels []byte
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

// TestSubset returns the committed first 100 images of the MNIST test set,
// so tests need neither the network nor the module cache.
func TestSubset() (Dataset, error) {
	imgs, err := DecodeIDXImages(subsetImages)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded subset: %w", err)
	}
	labels, err := DecodeIDXLabels(subsetLabels)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded subset: %w", err)
	}
	if len(imgs) != len(labels) {
		return Dataset{}, fmt.Errorf("model: embedded subset: %d images, %d labels", len(imgs), len(labels))
	}
	return Dataset{Images: imgs, Labels: labels}, nil
}

// The first 1024 MNIST training images, gzipped (written by
// go run ./hempc/model/internal/trainsubset): the demo's vector database.
var (
	//go:embed testdata/train-subset-images-idx3-ubyte.gz
	trainSubsetImages []byte
	//go:embed testdata/train-subset-labels-idx1-ubyte.gz
	trainSubsetLabels []byte
)

// TrainSubset returns the committed first 1024 images of the MNIST
// training set.
func TrainSubset() (Dataset, error) {
	img, err := gunzip(trainSubsetImages)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded training subset: %w", err)
	}
	lab, err := gunzip(trainSubsetLabels)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded training subset: %w", err)
	}
	imgs, err := DecodeIDXImages(img)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded training subset: %w", err)
	}
	labels, err := DecodeIDXLabels(lab)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: embedded training subset: %w", err)
	}
	if len(imgs) != len(labels) {
		return Dataset{}, fmt.Errorf("model: embedded training subset: %d images, %d labels", len(imgs), len(labels))
	}
	return Dataset{Images: imgs, Labels: labels}, nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, 64<<20))
}

package model

import (
	_ "embed"
	"fmt"
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

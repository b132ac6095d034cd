package model

import (
	"fmt"
	"time"
)

// DefaultModelFile is the committed model, relative to this package.
const DefaultModelFile = "testdata/mnist-cnn.rmq"

// TrainReport summarizes a training run.
type TrainReport struct {
	TrainImages   int     `json:"train_images"`
	TestImages    int     `json:"test_images"`
	Epochs        int     `json:"epochs"`
	Seed          uint64  `json:"seed"`
	FinalLoss     float64 `json:"final_loss"`
	FloatAccuracy float64 `json:"float_accuracy"`
	QuantAccuracy float64 `json:"quantized_accuracy"`
	LogT          int     `json:"log_t"`
	Shifts        []int   `json:"weight_scales"`
	LogitErrBound int64   `json:"logit_error_bound"`
	Seconds       float64 `json:"train_seconds"`
}

// TrainMNIST trains DefaultArch with opt, quantizes it to weightBits-bit
// weights and measures both networks on the test set.
func TrainMNIST(train, test Dataset, opt TrainOptions, weightBits int) (*Quantized, TrainReport, error) {
	start := time.Now()
	f, err := NewFloat(DefaultArch(), opt.Seed)
	if err != nil {
		return nil, TrainReport{}, err
	}
	loss, err := f.Train(train, opt)
	if err != nil {
		return nil, TrainReport{}, fmt.Errorf("model: train: %w", err)
	}
	q, err := Quantize(f, weightBits)
	if err != nil {
		return nil, TrainReport{}, err
	}
	qacc, err := q.Accuracy(test)
	if err != nil {
		return nil, TrainReport{}, err
	}
	return q, TrainReport{
		TrainImages: train.Len(), TestImages: test.Len(), Epochs: opt.Epochs, Seed: opt.Seed,
		FinalLoss: loss, FloatAccuracy: f.Accuracy(test), QuantAccuracy: qacc,
		LogT: q.LogT, Shifts: q.Shift, LogitErrBound: q.LogitErrorBound(),
		Seconds: time.Since(start).Seconds(),
	}, nil
}

// Names of the committed test subset (the first 100 MNIST test images,
// uncompressed IDX) in testdata/.
const (
	SubsetImages = "t10k-subset-images-idx3-ubyte"
	SubsetLabels = "t10k-subset-labels-idx1-ubyte"
)

// Command trainmnist trains the MNIST CNN of package model and writes the
// quantized model file and a small IDX subset of the test set into the
// package's testdata (run by `go generate ./optiprime/model`). It does the same
// as `rosemary mpc train --subset`, without building the whole CLI.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rosemary-fhe/rosemary/optiprime/model"
)

func main() {
	out := flag.String("out", model.DefaultModelFile, "output model file")
	subset := flag.String("subset", "testdata", "directory for the IDX test subset")
	subsetN := flag.Int("subset-n", 100, "test images in the subset")
	flag.Parse()
	if err := run(*out, *subset, *subsetN); err != nil {
		fmt.Fprintln(os.Stderr, "trainmnist:", err)
		os.Exit(1)
	}
}

func run(out, subset string, n int) error {
	dir, err := model.DataDir()
	if err != nil {
		return err
	}
	train, test, err := model.LoadMNIST(dir)
	if err != nil {
		return err
	}
	opt := model.DefaultTrainOptions
	opt.Progress = func(ep int, loss float64) { fmt.Fprintf(os.Stderr, "epoch %d: mean loss %.4f\n", ep+1, loss) }
	q, rep, err := model.TrainMNIST(train, test, opt, 8)
	if err != nil {
		return err
	}
	if err := q.Save(out); err != nil {
		return err
	}
	im, lb, err := model.EncodeIDX(test.Subset(n))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(subset, model.SubsetImages), im, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(subset, model.SubsetLabels), lb, 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

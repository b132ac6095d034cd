package model

import "testing"

func TestTrainSubset(t *testing.T) {
	d, err := TrainSubset()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Images) != 1024 || len(d.Images[0]) != 784 || d.Labels[0] != 5 {
		t.Fatalf("%d images of %d pixels, first label %d", len(d.Images), len(d.Images[0]), d.Labels[0])
	}
}

package workload

import "testing"

func TestEveryWorkloadBuilds(t *testing.T) {
	if len(Names()) < 2 {
		t.Fatalf("workloads: %v", Names())
	}
	for _, w := range All() {
		for _, size := range []string{"", ":small"} {
			p, err := Program(w.Name + size)
			if err != nil {
				t.Fatalf("%s%s: %v", w.Name, size, err)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s%s: %v", w.Name, size, err)
			}
		}
		if w.Source == "" || w.Description == "" {
			t.Errorf("%s: missing source or description", w.Name)
		}
	}
	if _, err := Program("nope"); err == nil {
		t.Fatal("unknown workload accepted")
	}
	if _, err := Program("pir:huge"); err == nil {
		t.Fatal("unknown size accepted")
	}
}

func TestPIRSizing(t *testing.T) {
	// VCaLL: 2^32 records of 96 B in 16 KiB plaintexts (N=8192, 16-bit
	// coefficients for t = 2^16 + 1) = 25,165,824 plaintexts.
	s, err := PIRDatabase("v", "pir-bgv", 1<<32, 96)
	if err != nil {
		t.Fatal(err)
	}
	const want = 25165824
	if s.Rows*s.Cols < want || (s.Rows-1)*s.Cols >= want || s.Cols*s.Cols < want {
		t.Fatalf("rows %d × cols %d for %d plaintexts", s.Rows, s.Cols, want)
	}
	p, err := s.Program()
	if err != nil {
		t.Fatal(err)
	}
	if db := p.Nodes[2]; db.Count != s.Rows*s.Cols || db.Degree != 0 {
		t.Fatalf("database node %+v", db)
	}
}

func TestVecDistShapeRejectsBadGroups(t *testing.T) {
	if _, err := (VecDistShape{Name: "x", Params: "hevec", Plaintexts: 10, Dim: 8, Groups: 3}).Program(); err == nil {
		t.Fatal("accepted 10 plaintexts in 3 groups")
	}
}

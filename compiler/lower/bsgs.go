package lower

import "sort"

// BSGSIndex groups diagonals by giant step ⌊d/n1⌋·n1 with baby steps d mod
// n1 (lintrans.BSGSIndex). It returns the groups and the sorted distinct
// giant and baby steps.
func BSGSIndex(diags []int, slots, n1 int) (index map[int][]int, giant, baby []int) {
	index = map[int][]int{}
	g, b := map[int]bool{}, map[int]bool{}
	for _, d := range diags {
		d &= slots - 1
		j := (d / n1 * n1) & (slots - 1)
		i := d & (n1 - 1)
		index[j] = append(index[j], i)
		g[j], b[i] = true, true
	}
	for j := range index {
		sort.Ints(index[j])
	}
	return index, sortedKeys(g), sortedKeys(b)
}

// BestBSGSRatio is lintrans.FindBestBSGSRatio: the smallest power of two
// n1 at which (baby steps − 1)/(giant steps − 1) reaches 2^logRatio (halved
// if it overshoots). At n1 = 1 the ratio is 0 (or NaN), so the result is
// never 0 and Lattigo's non-BSGS path (N1 = 0) is not taken.
func BestBSGSRatio(diags []int, slots, logRatio int) int {
	ratio := float64(int(1) << logRatio)
	for n1 := 1; n1 < slots; n1 <<= 1 {
		_, giant, baby := BSGSIndex(diags, slots, n1)
		r := float64(len(baby)-1) / float64(len(giant)-1) // +Inf/NaN as in Lattigo
		if r == ratio {
			return n1
		}
		if r > ratio {
			return n1 / 2
		}
	}
	return 1
}

func sortedKeys(m map[int]bool) []int {
	s := make([]int, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Ints(s)
	return s
}

package nand

import "github.com/rosemary-fhe/rosemary/compiler/arch"

// PeakReadGBps is the analytic steady-state bound on sequential read
// throughput of g, in GB/s, for reads spread evenly over every plane:
//
//	per channel: min( k*page / (cmd_k + k*xfer),                 channel bound
//	                  D * k*page / (cmd_k + tR + k*xfer) )       die bound
//
// with k = planes per die (one k-plane command per die cycle), D = dies per
// channel, cmd_k the k-plane read command time and xfer one page's channel
// time. With zero command time and one plane per die it reduces to
// min(channel rate, D*page/(tR + xfer)) per channel; with k planes, the k
// page transfers of a die are serialized on the channel before the die can
// sense again (no cache read), hence k*xfer in the die cycle.
func PeakReadGBps(g arch.NAND) (float64, error) {
	t, err := TimingOf(g)
	if err != nil {
		return 0, err
	}
	k := float64(g.PlanesPerDie)
	page := float64(g.PageBytes)
	cmd := float64(t.ReadCommand[g.PlanesPerDie])
	xfer := float64(t.PageOut)
	tr := float64(t.TR)
	dies := float64(g.ChipsPerChannel * g.DiesPerChip)
	chBound := k * page / (cmd + k*xfer)
	dieBound := dies * k * page / (cmd + tr + k*xfer)
	per := chBound
	if dieBound < per {
		per = dieBound
	}
	// bytes per picosecond -> GB/s: x 1e12 / 1e9.
	return per * float64(g.Channels) * 1e3, nil
}

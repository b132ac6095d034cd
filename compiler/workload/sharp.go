package workload

import "github.com/rosemary-fhe/rosemary/compiler/ir"

// The programs behind SHARP's published figures (Kim et al., "SHARP: A
// Short-Word Hierarchical Accelerator for Robust and Practical Fully
// Homomorphic Encryption", ISCA 2023), at its parameters (preset "sharp":
// N = 2^16, L = 35, dnum = 3): reproduce's validation table simulates
// them on our host-accelerator model to check it against SHARP's reported
// 3.12 ms bootstrapping and 99 ms ResNet-20. They are not registered
// workloads: they check the model, they are not part of the paper's
// figures.

// SHARPBoot is a fully packed bootstrapping (2^15 slots) with the
// structure of Lattigo v6's default bootstrapping (Bossuat et al.,
// Eurocrypt 2021, the algorithm SHARP's evaluation follows):
// CoeffsToSlots in 4 levels, SlotsToCoeffs in 3, a degree-30 cosine with
// 3 double-angle steps, no arcsine — SHARP does not publish its own
// factorisation, so this is our assumption, stated as such. It leaves
// L − 15 = 20 levels.
var SHARPBoot = ir.BootSpec{OutputLevel: 20, CtSLevels: 4, StCLevels: 3, EvalModDegree: 30, DoubleAngle: 3, LogSlots: 15}

// SHARPBootstrapping is one bootstrapping of a ciphertext at level 0.
func SHARPBootstrapping() (*ir.Program, error) {
	b := ir.NewBuilder("sharp-boot", "sharp")
	x := b.Input("ct", 0)
	b.Output("out", b.Boot(x, SHARPBoot))
	return b.Build()
}

// SHARPResNet20 is ResNet-20 on CIFAR-10 as Lee et al. build it (the
// network SHARP and ARK report): three blocks per stage, AppReLU of degrees
// (15, 15, 27), one bootstrapping per convolution, here SHARPBoot at 2^14
// sparse slots. The plaintext weights and masks are the host's own
// (Public): SHARP's benchmark holds the model in its memory, so they are
// read from HBM, not streamed from an SSD as our in-storage workloads are.
func SHARPResNet20() (*ir.Program, error) {
	boot := SHARPBoot
	boot.LogSlots = 14
	p, err := ResNetShape{Name: "resnet20-sharp", Params: "sharp", Blocks: 3, ReLU: leeReLU, Boot: boot, Slots: 1 << 14}.Program()
	if err != nil {
		return nil, err
	}
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Op == ir.OpStored && n.Degree == 0 {
			n.Public = true
		}
	}
	return p, nil
}

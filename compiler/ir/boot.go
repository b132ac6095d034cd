package ir

// BootSpec gives the bootstrapping parameters a Boot node expands with
// (compiler.ExpandBoot follows the circuit of Lattigo v6's CKKS
// bootstrapping; the fields map to its bootstrapping.Parameters).
type BootSpec struct {
	// OutputLevel is the level of the bootstrapped ciphertext.
	OutputLevel int `json:"output_level"`
	// CtSLevels and StCLevels are the number of levels (matrix factors) of
	// the homomorphic DFTs CoeffsToSlots and SlotsToCoeffs.
	CtSLevels int `json:"cts_levels"`
	StCLevels int `json:"stc_levels"`
	// EvalModDegree is the degree of the polynomial approximating the
	// modular reduction (the polynomial actually evaluated, Lattigo's
	// mod1.Parameters.Mod1Poly.Degree()), DoubleAngle the number of
	// double-angle steps.
	EvalModDegree int `json:"evalmod_degree"`
	DoubleAngle   int `json:"double_angle"`
	// LogSlots is log2 of the number of slots bootstrapped.
	LogSlots int `json:"log_slots"`
	// LogN is log2 of the ring degree the bootstrapping circuit runs at
	// (Lattigo's BootstrappingParameters.LogN()); 0 means the LogN of the
	// node's parameter preset. Slots are full when LogSlots = LogN − 1.
	LogN int `json:"log_n,omitempty"`
	// SineEvalMod selects an odd (sine) approximation without double angle
	// (Lattigo's mod1.SinContinuous); the default is an even cosine one
	// (mod1.CosDiscrete / mod1.CosContinuous).
	SineEvalMod bool `json:"sine_evalmod,omitempty"`
	// ArcSineDegree is the degree of the arcsine correction polynomial
	// evaluated after the double angles (Lattigo's Mod1InvDegree); 0: none.
	ArcSineDegree int `json:"arcsine_degree,omitempty"`
}

package ir

// BootSpec gives the bootstrapping parameters a Boot node expands with.
type BootSpec struct {
	// OutputLevel is the level of the bootstrapped ciphertext.
	OutputLevel int `json:"output_level"`
	// CtSLevels and StCLevels are the number of levels (matrix factors) of
	// the homomorphic DFTs CoeffsToSlots and SlotsToCoeffs.
	CtSLevels int `json:"cts_levels"`
	StCLevels int `json:"stc_levels"`
	// EvalModDegree is the degree of the polynomial approximating the
	// modular reduction, DoubleAngle the number of double-angle steps.
	EvalModDegree int `json:"evalmod_degree"`
	DoubleAngle   int `json:"double_angle"`
	// LogSlots is log2 of the number of slots bootstrapped.
	LogSlots int `json:"log_slots"`
}

package soc

// PaperValues are figures quoted from the RISE paper's text (§VI-B, VI-C)
// for setting beside the model's. The paper's Figures 7 and 10 give bars
// whose exact heights are not in its text; the text states the ranges and
// end points below.
type PaperValues struct {
	Source string `json:"source"`
	// Figure 7 (latency), as speed-up ranges over the (N, log Q) points.
	RACEvsBaselineEnc [2]float64 `json:"race_vs_baseline_enc"` // 7.8×–12.58×
	RACEvsBaselineDec [2]float64 `json:"race_vs_baseline_dec"` // 7.9×–66.08×
	RISE1vsRACEEnc    [2]float64 `json:"rise1_vs_race_enc"`    // 3.68×–8.29×
	MaxvsRISE1Enc     [2]float64 `json:"max_vs_rise1_enc"`     // +37.7%–414.92% → 1.377×–5.1492×
	MaxvsRISE1Dec     [2]float64 `json:"max_vs_rise1_dec"`     // +3.4%–35% → 1.034×–1.35×
	MaxvsBaselineEnc  [2]float64 `json:"max_vs_baseline_enc"`  // 38.27×–433.14×
	MaxvsBaselineDec  [2]float64 `json:"max_vs_baseline_dec"`  // 8.2×–89.25×
	SamplingSpeedup   [2]float64 `json:"sampling_speedup"`     // RISE error sampling vs software: 1726.39×–1734.08×
	EncryptionSpeedup [2]float64 `json:"encryption_speedup"`   // RACE encryption alone: 89.82×–123.76×
	DecryptionSpeedup [2]float64 `json:"decryption_speedup"`   // RACE decryption alone: 204.66×–244.44×
	// Figure 10 (message-to-ciphertext FPS) at the smallest and largest N:
	// {smallest N, largest N}; 0 where the text gives no number ("< 1").
	FPSQQVGA map[System][2]float64 `json:"fps_qqvga"`
	FPSQVGA  map[System][2]float64 `json:"fps_qvga"`
	// 5G: frames/s at maximum and minimum mid-band bandwidth.
	FPS5GMaxQQVGA float64 `json:"fps_5g_max_qqvga"` // largest N
	FPS5GMaxQVGA  float64 `json:"fps_5g_max_qvga"`
	FPS5GMinQQVGA float64 `json:"fps_5g_min_qqvga"` // the text says smallest N; the numbers fit the largest
	FPS5GMinQVGA  float64 `json:"fps_5g_min_qvga"`
}

// Paper returns the quoted values.
func Paper() PaperValues {
	return PaperValues{
		Source:            "quoted from RISE (Azad et al., IEEE) §VI-B and §VI-C",
		RACEvsBaselineEnc: [2]float64{7.8, 12.58},
		RACEvsBaselineDec: [2]float64{7.9, 66.08},
		RISE1vsRACEEnc:    [2]float64{3.68, 8.29},
		MaxvsRISE1Enc:     [2]float64{1.377, 5.1492},
		MaxvsRISE1Dec:     [2]float64{1.034, 1.35},
		MaxvsBaselineEnc:  [2]float64{38.27, 433.14},
		MaxvsBaselineDec:  [2]float64{8.2, 89.25},
		SamplingSpeedup:   [2]float64{1726.39, 1734.08},
		EncryptionSpeedup: [2]float64{89.82, 123.76},
		DecryptionSpeedup: [2]float64{204.66, 244.44},
		FPSQQVGA: map[System][2]float64{
			Baseline: {2, 0}, RACE: {16, 5}, RISE1BFU: {48, 10}, RISEMaxBFU: {64, 27},
		},
		FPSQVGA: map[System][2]float64{
			Baseline: {0, 0}, RACE: {5, 2}, RISE1BFU: {13, 4}, RISEMaxBFU: {17, 10},
		},
		FPS5GMaxQQVGA: 70, FPS5GMaxQVGA: 23,
		FPS5GMinQQVGA: 7, FPS5GMinQVGA: 2,
	}
}

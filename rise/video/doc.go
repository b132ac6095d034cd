// Package video carries 8-bit grayscale video through the edge encryptor:
// frames (Frame, the paper's QQVGA and QVGA sizes, a deterministic
// synthetic sequence), their packing into the real slots of CKKS
// ciphertexts, log2(q0) bits per slot as in the RISE paper's section II-D,
// restored exactly after decryption (Codec), the luma planes of YUV4MPEG2
// streams (Y4MReader, WriteY4M), and encrypted video directories, one
// ciphertext file per slot-load with a manifest (Encrypt, Decrypt: what
// `rosemary edge encrypt|decrypt` run).
package video

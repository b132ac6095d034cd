package video

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Y4MReader reads the luma (Y) planes of a YUV4MPEG2 stream.
type Y4MReader struct {
	r         *bufio.Reader
	W, H      int
	chromaLen int
	buf       []byte
}

// maxY4MDim bounds the accepted picture size (a corrupt header must not
// make us allocate gigabytes).
const maxY4MDim = 16384

// NewY4MReader parses the stream header.
func NewY4MReader(r io.Reader) (*Y4MReader, error) {
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("video: y4m header: %w", err)
	}
	fields := strings.Fields(strings.TrimSuffix(line, "\n"))
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return nil, fmt.Errorf("video: not a YUV4MPEG2 stream")
	}
	y := &Y4MReader{r: br}
	cs := "420"
	for _, f := range fields[1:] {
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case 'W':
			y.W, err = strconv.Atoi(f[1:])
		case 'H':
			y.H, err = strconv.Atoi(f[1:])
		case 'C':
			cs = f[1:]
		}
		if err != nil {
			return nil, fmt.Errorf("video: y4m header field %q: %w", f, err)
		}
	}
	if y.W <= 0 || y.H <= 0 || y.W > maxY4MDim || y.H > maxY4MDim {
		return nil, fmt.Errorf("video: y4m size %dx%d out of range", y.W, y.H)
	}
	cw, ch := (y.W+1)/2, (y.H+1)/2
	switch {
	case strings.HasPrefix(cs, "420"):
		y.chromaLen = 2 * cw * ch
	case strings.HasPrefix(cs, "422"):
		y.chromaLen = 2 * cw * y.H
	case strings.HasPrefix(cs, "444"):
		y.chromaLen = 2 * y.W * y.H
	case strings.HasPrefix(cs, "mono"):
		y.chromaLen = 0
	default:
		return nil, fmt.Errorf("video: y4m colour space %q not supported (8-bit 420/422/444/mono)", cs)
	}
	return y, nil
}

// Next returns the next frame's Y plane, or io.EOF at the end.
func (y *Y4MReader) Next() (Frame, error) {
	line, err := y.r.ReadString('\n')
	if err == io.EOF && line == "" {
		return Frame{}, io.EOF
	}
	if err != nil {
		return Frame{}, fmt.Errorf("video: y4m frame header: %w", err)
	}
	if !strings.HasPrefix(line, "FRAME") {
		return Frame{}, fmt.Errorf("video: y4m: expected FRAME, got %q", strings.TrimSpace(line))
	}
	f := Frame{W: y.W, H: y.H, Pix: make([]byte, y.W*y.H)}
	if _, err := io.ReadFull(y.r, f.Pix); err != nil {
		return Frame{}, fmt.Errorf("video: y4m luma plane: %w", err)
	}
	if _, err := y.r.Discard(y.chromaLen); err != nil {
		return Frame{}, fmt.Errorf("video: y4m chroma planes: %w", err)
	}
	return f, nil
}

// WriteY4M writes frames as a grayscale (Cmono) YUV4MPEG2 stream.
func WriteY4M(w io.Writer, frames []Frame) error {
	if len(frames) == 0 {
		return fmt.Errorf("video: no frames to write")
	}
	var hdr bytes.Buffer
	fmt.Fprintf(&hdr, "YUV4MPEG2 W%d H%d F30:1 Ip A1:1 Cmono\n", frames[0].W, frames[0].H)
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("video: write y4m: %w", err)
	}
	for i, f := range frames {
		if f.W != frames[0].W || f.H != frames[0].H || len(f.Pix) != f.W*f.H {
			return fmt.Errorf("video: frame %d has a different size", i)
		}
		if _, err := io.WriteString(w, "FRAME\n"); err != nil {
			return fmt.Errorf("video: write y4m: %w", err)
		}
		if _, err := w.Write(f.Pix); err != nil {
			return fmt.Errorf("video: write y4m: %w", err)
		}
	}
	return nil
}

package infer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rosemary-fhe/rosemary/optiprime/model"
	"github.com/rosemary-fhe/rosemary/optiprime/transport"
)

// Report is the outcome of classifying a dataset privately.
type Report struct {
	Images          int     `json:"images"`
	PrivateAccuracy float64 `json:"private_accuracy"` // private class = label
	PlainAccuracy   float64 `json:"plain_accuracy"`   // plaintext quantized reference = label
	Agreement       float64 `json:"agreement"`        // private class = reference class
	Protocol        string  `json:"protocol"`
	LogN            int     `json:"log_n"`
	MaxLogitDiff    int64   `json:"max_logit_diff"`    // largest |private − reference| logit
	LogitErrorBound int64   `json:"logit_error_bound"` // the model's worst-case bound
	WallS           float64 `json:"wall_s"`            // client wall clock, setup included
	PerImageS       float64 `json:"per_image_s"`
	Stats           Stats   `json:"stats"`
}

// Evaluate opens a session on conn, classifies the images of d privately
// and scores the results against the labels and against ref, the plaintext
// quantized model, which the evaluation (not the protocol) uses. progress,
// if set, is called after every image.
func Evaluate(conn *transport.Conn, cfg Config, d model.Dataset, ref *model.Quantized, progress func(done int)) (*Report, error) {
	if d.Len() == 0 {
		return nil, errors.New("infer: no images")
	}
	if ref == nil {
		return nil, errors.New("infer: a reference model is needed to score agreement")
	}
	start := time.Now()
	c, err := NewClient(conn, cfg)
	if err != nil {
		return nil, err
	}
	r := &Report{Images: d.Len(), LogitErrorBound: ref.LogitErrorBound()}
	var priv, plain, agree int
	for i, img := range d.Images {
		res, err := c.Infer(img)
		if err != nil {
			return nil, fmt.Errorf("infer: image %d: %w", i, err)
		}
		want, err := ref.Forward(img)
		if err != nil {
			return nil, err
		}
		if len(want) != len(res.Logits) {
			return nil, errors.New("infer: reference model does not match the server's")
		}
		for j := range want {
			r.MaxLogitDiff = max(r.MaxLogitDiff, abs(res.Logits[j]-want[j]))
		}
		wc := model.Argmax(want)
		if res.Class == int(d.Labels[i]) {
			priv++
		}
		if wc == int(d.Labels[i]) {
			plain++
		}
		if wc == res.Class {
			agree++
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	r.Stats = c.Stats()
	if err := c.Close(); err != nil {
		return nil, fmt.Errorf("infer: close: %w", err)
	}
	n := float64(d.Len())
	r.PrivateAccuracy, r.PlainAccuracy, r.Agreement = float64(priv)/n, float64(plain)/n, float64(agree)/n
	r.Protocol, r.LogN = r.Stats.Protocol, r.Stats.LogN
	r.WallS = time.Since(start).Seconds()
	r.PerImageS = r.WallS / n
	return r, nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// ServeListener serves clients' sessions on l with the model q under
// srv's rules (mutual TLS and the clients' identity, concurrent sessions,
// idle deadline) until ctx ends or maxSessions (> 0) sessions are done. A
// failed session is reported through srv.Logf and does not stop the
// server.
func ServeListener(ctx context.Context, l net.Listener, srv *transport.SessionServer, q *model.Quantized, maxSessions int) error {
	if err := q.Validate(); err != nil {
		return err
	}
	logf := srv.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return srv.Serve(ctx, l, maxSessions, func(n int, conn *transport.Conn) error {
		t := time.Now()
		st, err := Serve(conn, q)
		if err != nil {
			return err
		}
		logf("session %d: %s, %d images in %.1f s, %d bytes up, %d down", n, st.Protocol, st.Images,
			time.Since(t).Seconds(), st.Total.BytesC2S, st.Total.BytesS2C)
		return nil
	})
}

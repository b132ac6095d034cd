package client_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosemary-fhe/rosemary/client"
	"github.com/rosemary-fhe/rosemary/client/dataset"
	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/device/store/layout"
)

// Store four records in an encrypted PIR database and read one back: the
// device answers without learning which record was asked for.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "rosemary-example-")
	defer os.RemoveAll(dir)
	keys, err := client.NewKeys(filepath.Join(dir, "keys"))
	if err != nil {
		log.Fatal(err)
	}
	// A device in this process, over a store in dir, behind gRPC; a daemon
	// would be client.Open(ctx, "host:port", keys, remote.WithTLS(cfg)),
	// cfg from certs.ClientConfig (the user's certificate, the CA).
	st, err := store.Open(filepath.Join(dir, "store"), layout.Layout{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	dev, _, err := device.InProcess(st, device.DefaultLimits())
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	c := client.New(dev, keys)
	if _, err := c.CreatePIR(ctx, "words", 16, client.PIROptions{}); err != nil {
		log.Fatal(err)
	}
	input := strings.NewReader("alpha\nbravo\ncharlie\ndelta\n")
	if _, err := c.Load(ctx, "words", input, client.LoadOptions{Records: dataset.Lines}); err != nil {
		log.Fatal(err)
	}
	rec, err := c.Get(ctx, "words", 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(bytes.TrimRight(rec, "\x00")))
	// Output: charlie
}

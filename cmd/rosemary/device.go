package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/rosemary-fhe/rosemary/device"
	"github.com/rosemary-fhe/rosemary/store"
	"github.com/rosemary-fhe/rosemary/store/layout"
)

func init() {
	register(command{name: "device", summary: "in-storage device daemon: serve --store DIR --listen ADDR", run: runDevice})
}

func runDevice(args []string) error {
	if len(args) == 0 || args[0] != "serve" {
		return fmt.Errorf("device: usage: rosemary device serve --store DIR [--listen 127.0.0.1:7420]")
	}
	fs := flag.NewFlagSet("device serve", flag.ContinueOnError)
	dir := fs.String("store", "", "object store directory (created if absent)")
	listen := fs.String("listen", "127.0.0.1:7420", "address to listen on")
	channels := fs.Int("channels", 4, "store channels (new stores)")
	page := fs.Int("page", 4096, "store page size in bytes (new stores)")
	resident := fs.Int64("resident-mb", 1024, "device DRAM for uploads and results (MiB)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("device serve: --store is required")
	}
	st, err := store.Open(*dir, layout.Layout{Channels: *channels, PageSize: *page})
	if err != nil {
		return err
	}
	defer st.Close()
	lim := device.DefaultLimits()
	lim.MaxResidentBytes = *resident << 20
	d, err := device.New(st, lim)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("device serve: %w", err)
	}
	// The address line lets a parent process find an ephemeral port.
	fmt.Fprintf(os.Stdout, "listening %s\n", lis.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return device.Serve(ctx, d, lis)
}

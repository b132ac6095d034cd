package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/rosemary-fhe/rosemary/device/certs"
)

func init() {
	register(command{name: "certs", summary: "TLS material: init --dir D (a CA) | issue --dir D --name N [--role user|device|admin|server] [--host H]", run: runCerts})
}

const certsUsage = "usage: rosemary certs init --dir D | issue --dir D --name N [--role user|device|admin|server] [--host H[,H…]]"

func runCerts(args []string) error {
	if len(args) == 0 {
		return errors.New(certsUsage)
	}
	fs := flag.NewFlagSet("certs "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "certificate directory (ca.crt, ca.key, NAME.crt, NAME.key)")
	switch args[0] {
	case "init":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" {
			return errors.New(certsUsage)
		}
		if err := certs.Init(*dir); err != nil {
			return err
		}
		fmt.Printf("CA written: %s/%s (key %s/%s, keep it private)\n", *dir, certs.CAFile, *dir, certs.CAKeyFile)
		return nil
	case "issue":
		name := fs.String("name", "", "identity: the certificate's common name")
		roleName := fs.String("role", string(certs.RoleUser), "user, device, admin or server (a control-plane server: the cluster's etcd)")
		hosts := fs.String("host", "", "device or server: comma-separated IP addresses or DNS names it serves on (default 127.0.0.1,::1,localhost)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" || *name == "" {
			return errors.New(certsUsage)
		}
		role, err := certs.ParseRole(*roleName)
		if err != nil {
			return err
		}
		var hs []string
		if *hosts != "" {
			hs = strings.Split(*hosts, ",")
		}
		if err := certs.Issue(*dir, *name, role, hs); err != nil {
			return err
		}
		fmt.Printf("issued %s (%s): %s %s\n", *name, role, certs.CertFile(*dir, *name), certs.KeyFile(*dir, *name))
		return nil
	}
	return errors.New(certsUsage)
}

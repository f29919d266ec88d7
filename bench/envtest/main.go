// envtest-start: starts controller-runtime's envtest control plane (etcd + kube-apiserver) from
// the binaries in a directory, prints how long Start took, and stops it. labcheck's benchmark
// runs it beside labcheck's own local cluster, on the same binaries.
package main

import (
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: envtest-start DIR (holding kube-apiserver, etcd and kubectl)")
		os.Exit(2)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: os.Args[1]}
	started := time.Now()
	if _, err := env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	fmt.Printf("envtest ready in %.3f s\n", time.Since(started).Seconds())
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest stop:", err)
		os.Exit(1)
	}
}

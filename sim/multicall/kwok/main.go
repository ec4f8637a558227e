// Command rlstack-kwok is the simulated cluster's kwok, kwokctl, etcd and MPI operator in one program, chosen by
// the name it is run as or by its first argument, like rlstack-sim (sim/multicall/k8s). It is a program of its
// own because kwok v0.8.0 needs the Kubernetes libraries at v0.36 while the control plane is built from
// k8s.io/kubernetes' own staging modules (sim/versions.env); one Go program has one version of each library.
// Each entry is upstream's main(): sigs.k8s.io/kwok cmd/kwok and cmd/kwokctl, go.etcd.io/etcd/server/v3 main.go,
// github.com/kubeflow/mpi-operator cmd/mpi-operator/main.go.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app"
	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwokctlcmd "sigs.k8s.io/kwok/pkg/kwokctl/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"

	_ "sigs.k8s.io/kwok/pkg/kwokctl/runtime/binary"
	_ "sigs.k8s.io/kwok/pkg/kwokctl/runtime/compose"
	_ "sigs.k8s.io/kwok/pkg/kwokctl/runtime/kind"
)

var commands = map[string]func(){
	"kwok": func() { kwokMain(kwokcmd.NewCommand) },
	// kwokctl's binary runtime links the configured kwok binary into the cluster's bin folder as
	// kwok-controller and runs it by that name (kwok v0.8.0 pkg/consts ComponentKwokController).
	"kwok-controller": func() { kwokMain(kwokcmd.NewCommand) },
	"kwokctl":         func() { kwokMain(kwokctlcmd.NewCommand) },
	"etcd":            func() { etcdmain.Main(os.Args) },
	"mpi-operator":    mpiOperatorMain,
}

func main() {
	name, args := dispatch(os.Args, func(n string) bool { _, ok := commands[n]; return ok })
	if name == "" {
		usage(os.Args, commands)
	}
	os.Args = args
	commands[name]()
}

// kwokMain is cmd/kwok/main.go and cmd/kwokctl/main.go of kwok v0.8.0 (they differ only in the command).
func kwokMain(newCommand func(ctx context.Context) *cobra.Command) {
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}

	ctx := signals.SetupSignalContext()
	ctx, logger := log.InitFlags(ctx, flagset)

	ctx, err := config.InitFlags(ctx, flagset)
	if err != nil {
		_, _ = os.Stderr.Write([]byte(flagset.FlagUsages()))
		logger.Error("Init config flags", "err", err)
		os.Exit(1)
	}

	command := newCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	if err = command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		os.Exit(1)
	}
}

// mpiOperatorMain is cmd/mpi-operator/main.go of mpi-operator v0.8.0.
func mpiOperatorMain() {
	klog.InitFlags(nil)
	s := options.NewServerOption()
	s.AddFlags(flag.CommandLine)
	flag.Parse()
	if s.MonitoringPort != 0 {
		go func() {
			klog.Infof("Setting up client for monitoring on port: %d", s.MonitoringPort)
			http.Handle("/metrics", promhttp.Handler())
			if err := http.ListenAndServe(fmt.Sprintf(":%d", s.MonitoringPort), nil); err != nil {
				klog.Error("Monitoring endpoint setup failure.", err)
			}
		}()
	}
	if err := app.Run(s); err != nil {
		klog.Fatalf("%v\n", err)
	}
}

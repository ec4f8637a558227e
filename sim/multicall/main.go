// Command rlstack-sim is the whole simulated cluster in one program: kube-apiserver, kube-controller-manager,
// kube-scheduler and kubectl of k8s.io/kubernetes, kwok and kwokctl, etcd and the MPI operator (the versions
// sim/versions.env pins), chosen by the name it is run as (a symlink per component in the binary cache, as
// kwokctl starts them) or by its first argument (`rlstack-sim kube-apiserver --version`). One program compiles
// the Kubernetes libraries once: the control plane is pinned to the minor whose libraries kwok needs (v0.36 for
// kwok v0.8.0), so every component shares one version of each (sim/build.sh, docs/performance.md). Each entry is
// upstream's own main(): k8s.io/kubernetes cmd/<name>/*.go, sigs.k8s.io/kwok cmd/kwok and cmd/kwokctl,
// go.etcd.io/etcd/server/v3 main.go, github.com/kubeflow/mpi-operator cmd/mpi-operator/main.go.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	_ "time/tzdata" // for timeZone support in CronJob (cmd/kube-apiserver, cmd/kube-controller-manager)

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app"
	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins (cmd/kubectl)
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/klog/v2"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
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
	"kube-apiserver":          func() { os.Exit(cli.Run(apiserver.NewAPIServerCommand())) },
	"kube-controller-manager": func() { os.Exit(cli.Run(controllermanager.NewControllerManagerCommand())) },
	"kube-scheduler":          func() { os.Exit(cli.Run(scheduler.NewSchedulerCommand())) },
	"kubectl":                 kubectlMain,
	"kwok":                    func() { kwokMain(kwokcmd.NewCommand) },
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

// kubectlMain is cmd/kubectl/kubectl.go: kwokctl's binary runtime asks `kubectl get --raw /version` and
// `/healthz` while it waits for the cluster (kwok v0.8.0 pkg/kwokctl/runtime/binary/cluster_operation.go).
func kubectlMain() {
	logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
	if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
		kubectlutil.CheckErr(err)
	}
}

// kwokMain is cmd/kwok/main.go and cmd/kwokctl/main.go of kwok v0.8.0 (they differ only in the command).
// k8s.io/component-base's verflag registers a --version flag of its own type on pflag.CommandLine at init (v0.36.3
// version/verflag/verflag.go), and cobra adds pflag.CommandLine to every command, so kwok's own boolean --version
// would fail ("trying to get bool value of flag of type version"): kwok starts from an empty global set, as it
// does in its own program.
func kwokMain(newCommand func(ctx context.Context) *cobra.Command) {
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
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

// Command rlstack-sim is the simulated cluster's Kubernetes control plane in one program: kube-apiserver,
// kube-controller-manager, kube-scheduler and kubectl of k8s.io/kubernetes (the version sim/versions.env pins),
// chosen by the name it is run as (a symlink per component in the binary cache, as kwokctl starts them) or by its
// first argument (`rlstack-sim kube-apiserver --version`). One program shares the Kubernetes libraries the four
// binaries each carried (sim/build.sh, docs/performance.md). Each entry is upstream's own main(), cmd/<name>/*.go.
package main

import (
	"os"
	_ "time/tzdata" // for timeZone support in CronJob (cmd/kube-apiserver, cmd/kube-controller-manager)

	"github.com/spf13/cobra"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins (cmd/kubectl)
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var commands = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": func() *cobra.Command { return controllermanager.NewControllerManagerCommand() },
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubectl":                 nil, // kubectlMain
}

func main() {
	name, args := dispatch(os.Args, func(n string) bool { _, ok := commands[n]; return ok })
	if name == "" {
		usage(os.Args, commands)
	}
	os.Args = args
	if name == "kubectl" {
		kubectlMain()
		return
	}
	os.Exit(cli.Run(commands[name]()))
}

// kubectlMain is cmd/kubectl/kubectl.go: kwokctl's binary runtime asks `kubectl get --raw /version` and
// `/healthz` while it waits for the cluster (kwok v0.8.0 pkg/kwokctl/runtime/binary/cluster_operation.go).
func kubectlMain() {
	logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
	if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
		kubectlutil.CheckErr(err)
	}
}

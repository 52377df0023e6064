package emulator

import (
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/clusterkube"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/nodeagent"
)

// What runs beside a cluster's kube-apiserver (kube-scheduler, kube-controller-manager, the node
// agent and, with the Ray Operator add-on, KubeRay's ray-operator) is package clusterkube's. A
// cluster's runtime starts with its kube-apiserver and stops before it.

// startRuntime arms the cluster's runtime: its components start when first needed, and with ray
// the add-on's part too. It does nothing if the runtime is armed already or the cluster's
// kube-apiserver is not running.
func (e *Emulator) startRuntime(c *cluster, ray bool) {
	armed, run := c.k8s.forRuntime()
	if armed || run.kube == nil || e.bgCtx.Err() != nil {
		return
	}
	r := clusterkube.New(e.bgCtx, clusterkube.Config{
		Name: c.Key, Dir: c.dir, Kube: run.kube, Dyn: run.dyn,
		APIPort: run.api.Port(), CACertPEM: run.pki.CACertPEM, Token: e.token,
		Procs: e.procs, Bins: e.bins, Logf: e.logf, RayProxyEnv: run.rayProxy.Env(),
		NodeAgent: func() nodeagent.Config { return e.nodeAgentConfig(c, run.kube) },
	})
	// New ran without the lock; another start, or the kube-apiserver's stop, may have come between.
	if !c.k8s.keepRuntime(r, run.kube) {
		r.Stop()
		return
	}
	if ray {
		r.ArmRay()
	}
}

// runtimeOf is the cluster's runtime, nil while its kube-apiserver is not running.
func (c *cluster) runtimeOf() *clusterkube.Runtime { return c.k8s.currentRuntime() }

// stopRuntime stops whatever runs for the cluster and waits for it.
func (c *cluster) stopRuntime() {
	if r := c.k8s.takeRuntime(); r != nil {
		r.Stop()
	}
}

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
	c.apiMu.Lock()
	armed, api, pki, kube, dyn, proxy := c.runtime != nil, c.api, c.pki, c.kube, c.dyn, c.rayProxy
	c.apiMu.Unlock()
	if armed || kube == nil || e.bgCtx.Err() != nil {
		return
	}
	r := clusterkube.New(e.bgCtx, clusterkube.Config{
		Name: c.Key, Dir: c.dir, Kube: kube, Dyn: dyn,
		APIPort: api.Port(), CACertPEM: pki.CACertPEM, Token: e.token,
		Procs: e.procs, Bins: e.bins, Logf: e.logf, RayProxyEnv: proxy.Env(),
		NodeAgent: func() nodeagent.Config { return e.nodeAgentConfig(c, kube) },
	})
	// New ran without apiMu; another start, or the kube-apiserver's stop, may have come between.
	c.apiMu.Lock()
	current := c.runtime == nil && c.kube == kube
	if current {
		c.runtime = r
	}
	c.apiMu.Unlock()
	if !current {
		r.Stop()
		return
	}
	if ray {
		r.ArmRay()
	}
}

// runtimeOf is the cluster's runtime, nil while its kube-apiserver is not running.
func (c *cluster) runtimeOf() *clusterkube.Runtime {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	return c.runtime
}

// stopRuntime stops whatever runs for the cluster and waits for it.
func (c *cluster) stopRuntime() {
	c.apiMu.Lock()
	r := c.runtime
	c.runtime = nil
	c.apiMu.Unlock()
	if r != nil {
		r.Stop()
	}
}

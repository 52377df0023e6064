package emulator

import (
	"context"
	"crypto/tls"
	"sync"

	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/tpuwebhook"
)

// GKE's KubeRay TPU webhook, as the Ray Operator add-on's clusters get it, is package
// tpuwebhook. The emulator starts its server on first use, with its own key material and a
// lookup of the running clusters by UID, and registers it in a cluster when the add-on is
// enabled (ray_addon.go).

// rayAddonState is what the emulator keeps for the Ray Operator add-ons of all its clusters.
type rayAddonState struct {
	mu      sync.Mutex
	webhook *tpuwebhook.Server
}

// tpuWebhook returns the webhook server, starting it on first use; it stops with the emulator.
func (e *Emulator) tpuWebhook() (*tpuwebhook.Server, error) {
	e.rayAddon.mu.Lock()
	defer e.rayAddon.mu.Unlock()
	if e.rayAddon.webhook != nil {
		return e.rayAddon.webhook, nil
	}
	pki, err := kubeproc.NewPKI("kuberay-tpu-webhook")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(pki.ServingPEM, pki.ServingKeyPEM)
	if err != nil {
		return nil, err
	}
	wh, err := tpuwebhook.Start(tpuwebhook.Config{
		Kube:        e.kubeOfCluster,
		Logf:        e.logf,
		Certificate: cert,
		CAPEM:       pki.CACertPEM,
	})
	if err != nil {
		return nil, err
	}
	e.goBackground(func(ctx context.Context) {
		<-ctx.Done()
		_ = wh.Close()
	})
	e.rayAddon.webhook = wh
	return wh, nil
}

// kubeOfCluster is the Kubernetes client of the running cluster with this UID (the webhook's
// path names it); it takes the emulator's lock and the cluster's in turn, and holds neither
// when it returns.
func (e *Emulator) kubeOfCluster(uid string) (kubernetes.Interface, bool) {
	c := e.clusterByUID(uid)
	if c == nil {
		return nil, false
	}
	kube, _ := c.clients()
	return kube, kube != nil
}

// clusterByUID finds a cluster by its UID (the webhook's path names it).
func (e *Emulator) clusterByUID(uid string) *cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.st.clusters {
		if c.UID == uid {
			return c
		}
	}
	return nil
}

// installTPUWebhook registers the webhook in a cluster (created, or updated to the running
// server's address and CA), starting the server if it is not running yet.
func (e *Emulator) installTPUWebhook(ctx context.Context, c *cluster) error {
	wh, err := e.tpuWebhook()
	if err != nil {
		return err
	}
	kube, _ := c.clients()
	if kube == nil {
		return errNoAPIServer
	}
	return wh.Install(ctx, kube, c.UID)
}

// removeTPUWebhook unregisters the webhook from a cluster (the add-on was disabled); a cluster
// whose API server is not running has nothing to remove.
func (e *Emulator) removeTPUWebhook(ctx context.Context, c *cluster) error {
	kube, _ := c.clients()
	if kube == nil {
		return nil
	}
	return tpuwebhook.Remove(ctx, kube)
}

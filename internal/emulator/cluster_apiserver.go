package emulator

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rayproxy"
)

// startClusterAPI starts (or restarts) the cluster's kube-apiserver and records its endpoint.
func (e *Emulator) startClusterAPI(ctx context.Context, c *cluster) error {
	e.mu.Lock()
	dns := dnsAccess(c.PB)
	e.mu.Unlock()
	return e.startClusterAPIWith(ctx, c, dns)
}

// startClusterAPIWith starts the cluster's kube-apiserver, serving its DNS endpoint when dns.
func (e *Emulator) startClusterAPIWith(ctx context.Context, c *cluster, dns bool) error {
	e.mu.Lock()
	dir, uid, port, name := c.dir, c.UID, c.APIPort, c.PB.Name
	e.mu.Unlock()
	var extra []string
	if dns {
		extra = append(extra, e.sniFlag())
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	pki, err := kubeproc.LoadPKI(filepath.Join(dir, "pki"))
	if err != nil {
		if pki, err = kubeproc.NewPKI(name); err != nil {
			return err
		}
	}
	proxy, err := e.startRayProxy(c)
	if err != nil {
		return err
	}
	started := time.Now()
	api, err := kubeproc.StartAPIServer(ctx, kubeproc.APIServerConfig{
		Procs:      e.procs,
		Bin:        e.bins.APIServer,
		Dir:        dir,
		PKI:        pki,
		EtcdURL:    e.etcd.URL(),
		EtcdPrefix: "/raytpu/" + uid,
		Token:      e.token,
		Port:       port,
		ExtraArgs:  extra,
		// Its proxy to Services and Pods reaches Ray's endpoints there.
		EgressSocket: proxy.Socket(),
	})
	if err != nil {
		proxy.Close()
		return err
	}
	e.logf("cluster %s: kube-apiserver ready on 127.0.0.1:%d after %s", c.Key, api.Port(), time.Since(started).Round(time.Millisecond))
	kube, dyn, err := kubeClients(api.Port(), pki.CACertPEM, e.token)
	if err == nil {
		err = installComputeClassCRD(ctx, dyn)
	}
	if err != nil {
		api.Stop()
		proxy.Close()
		return err
	}
	// Attached before the cluster is checked, never under the emulator's lock: a Reset (or Close)
	// that took the cluster away meanwhile either stops it or leaves it for the check to stop.
	c.k8s.attach(runningAPI{api: api, pki: pki, kube: kube, dyn: dyn, dnsSNI: dns, rayProxy: proxy})
	e.mu.Lock()
	if e.st.clusters[c.Key] != c {
		e.mu.Unlock()
		c.stopAPIServer()
		return fmt.Errorf("the cluster is gone")
	}
	c.APIPort = api.Port()
	refreshEndpoints(c.PB, api.Port())
	c.PB.MasterAuth = &containerpb.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString(pki.CACertPEM)}
	// A restarted kube-apiserver (a new IP, the DNS endpoint) gets its runtime back, the Ray
	// Operator add-on's part too once its CRDs are there.
	ray := c.RayCRDs && c.rayTarget
	e.mu.Unlock()
	e.startRuntime(c, ray)
	return nil
}

func (e *Emulator) removeClusterDir(c *cluster) {
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// startRayProxy starts the cluster's proxy to its Ray endpoints, for the kube-apiserver about to
// start and the ray-operator its runtime will start.
func (e *Emulator) startRayProxy(c *cluster) (*rayproxy.Proxy, error) {
	dash := c.k8s.dashboards(func() *rayproxy.Dashboards { return rayproxy.NewDashboards(e.rayDashboardConfig(c.Key)) })
	return rayproxy.Start(rayproxy.Config{
		Kube:       func() kubernetes.Interface { kube, _ := c.clients(); return kube },
		Dashboards: dash,
	})
}

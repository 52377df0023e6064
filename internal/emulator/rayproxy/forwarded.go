package rayproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The kube-apiserver's proxy to Services and Pods keeps the client's Host header (k8s.io/apimachinery
// pkg/util/proxy/upgradeaware.go: UseLocationHost is false, and the Service and Pod proxies of
// pkg/registry/core leave it so), and Go's transport writes the Host header, not the URL's host,
// into the request-target it sends an HTTP proxy (net/http Request.write). So a request the
// kube-apiserver proxies names the kube-apiserver itself, not the Pod it dials. The same proxy sets
// X-Forwarded-Uri to the path the client asked for (upgradeaware.go defaultProxyTransport,
// transport.go RoundTrip), /api/v1/namespaces/N/services/[scheme:]S[:port]/proxy/... or
// .../pods/[scheme:]P[:port]/proxy/..., which names the Service or Pod and its port.

// forwardedTarget is the host:port the kube-apiserver's proxy dialled for r, from its
// X-Forwarded-Uri; ok is false for a request that did not come through that proxy.
func forwardedTarget(ctx context.Context, kube kubernetes.Interface, r *http.Request) (hostport string, ok bool, err error) {
	parts := strings.Split(r.Header.Get("X-Forwarded-Uri"), "/")
	// "", "api", "v1", "namespaces", N, "services"|"pods", ID, "proxy", ...
	if len(parts) < 8 || parts[1] != "api" || parts[2] != "v1" || parts[3] != "namespaces" || parts[7] != "proxy" {
		return "", false, nil
	}
	ns, kind, name, port := parts[4], parts[5], parts[6], ""
	if i := strings.Index(name, ":"); i >= 0 && (name[:i] == "http" || name[:i] == "https") {
		name = name[i+1:]
	}
	name, port, _ = strings.Cut(name, ":")
	switch kind {
	case "services":
		svc, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", true, fmt.Errorf("no such host: %w", err)
		}
		for _, p := range svc.Spec.Ports {
			if port == "" && len(svc.Spec.Ports) == 1 || p.Name == port || strconv.Itoa(int(p.Port)) == port {
				return net.JoinHostPort(name+"."+ns+".svc", strconv.Itoa(int(p.Port))), true, nil
			}
		}
		return "", true, fmt.Errorf("the Service %s/%s has no port %q", ns, name, port)
	case "pods":
		pod, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", true, fmt.Errorf("no such host: %w", err)
		}
		switch n := containerPort(pod, port, 0); {
		case n != 0:
			port = strconv.Itoa(n)
		case port == "" && len(pod.Spec.Containers) > 0 && len(pod.Spec.Containers[0].Ports) > 0:
			port = strconv.Itoa(int(pod.Spec.Containers[0].Ports[0].ContainerPort))
		}
		return net.JoinHostPort(pod.Status.PodIP, port), true, nil
	}
	return "", false, nil
}

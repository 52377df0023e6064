package rayproxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/raydashboard"
)

// A request the kube-apiserver's Service or Pod proxy sends names the kube-apiserver (the client's
// Host) in its request-target; its X-Forwarded-Uri names the Service or Pod, and the dashboard
// behind it answers.
func TestProxyReachesTheDashboardForTheAPIServersProxy(t *testing.T) {
	kube := fake.NewClientset(rayPod("a-head", "a", "uid-a", "head", "10.4.0.2", 0), headService("a"))
	_, client := startProxy(t, kube, raydashboard.Config{})
	apiServerProxy := func(forwardedURI string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://10.4.0.2:8265/api/jobs/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "127.0.0.1:6443"
		if forwardedURI != "" {
			req.Header.Set("X-Forwarded-Uri", forwardedURI)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, uri := range []string{
		"/api/v1/namespaces/ml/services/http:a-head-svc:dashboard/proxy/api/jobs/",
		"/api/v1/namespaces/ml/services/a-head-svc:8265/proxy/api/jobs/",
		"/api/v1/namespaces/ml/services/a-head-svc/proxy/api/jobs/",
		"/api/v1/namespaces/ml/pods/a-head:8265/proxy/api/jobs/",
		"/api/v1/namespaces/ml/pods/http:a-head:dashboard/proxy/api/jobs/",
	} {
		if code, body := apiServerProxy(uri); code != http.StatusOK || strings.TrimSpace(body) != "[]" {
			t.Errorf("through the kube-apiserver's proxy as %s: %d %q, want the dashboard's empty job list", uri, code, body)
		}
	}
	for uri, want := range map[string]string{
		"": "no running Pod has the address 127.0.0.1", // the request-target alone names the kube-apiserver
		"/api/v1/namespaces/ml/services/gone-svc:dashboard/proxy/api/jobs/": "no such host",
		"/api/v1/namespaces/ml/services/a-head-svc:metrics/proxy/api/jobs/": `has no port "metrics"`,
		"/api/v1/namespaces/ml/pods/gone-head:8265/proxy/api/jobs/":         "no such host",
	} {
		if code, body := apiServerProxy(uri); code != http.StatusBadGateway || !strings.Contains(body, want) {
			t.Errorf("X-Forwarded-Uri %q: %d %q, want 502 with %q", uri, code, body, want)
		}
	}
}

package rayproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/raydashboard"
	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// rayPod is a running, ready Pod of RayCluster rc (uid) at ip, with the TPUs it asks for.
func rayPod(name, rc string, uid types.UID, nodeType, ip string, tpus int64) *corev1.Pod {
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
	if tpus > 0 {
		limits["google.com/tpu"] = *resource.NewQuantity(tpus, resource.DecimalSI)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml",
			Labels:          map[string]string{rayClusterLabel: rc, rayNodeTypeLabel: nodeType},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: rc, UID: uid, Controller: ptr(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Resources: corev1.ResourceRequirements{Limits: limits},
			Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}, {Name: "serve", ContainerPort: 8000}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func ptr[T any](v T) *T { return &v }

func headService(rc string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: rc + "-head-svc", Namespace: "ml"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{rayClusterLabel: rc, rayNodeTypeLabel: "head"},
			Ports: []corev1.ServicePort{{Name: "dashboard", Port: 8265, TargetPort: intstr.FromString("dashboard")}}},
	}
}

func startProxy(t *testing.T, kube kubernetes.Interface, cfg raydashboard.Config) (*Proxy, *http.Client) {
	t.Helper()
	p, err := Start(Config{Kube: func() kubernetes.Interface { return kube }, Dashboards: NewDashboards(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	proxyURL, _ := url.Parse(p.URL())
	return p, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testwait.Context(t), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// KubeRay's own dashboard client, through the proxy, reaches the dashboard of the RayCluster the
// head Service selects; the head's Serve proxy is healthy once an application is deployed; a
// RayCluster of another UID has a dashboard of its own.
func TestProxyReachesEachRayClustersDashboard(t *testing.T) {
	kube := fake.NewClientset(
		rayPod("a-head", "a", "uid-a", "head", "10.4.0.2", 0),
		rayPod("a-tpu-0", "a", "uid-a", "worker", "10.4.1.2", 4),
		rayPod("b-head", "b", "uid-b", "head", "10.4.0.3", 0),
		headService("a"), headService("b"))
	_, client := startProxy(t, kube, raydashboard.Config{})

	ctx := testwait.Context(t)
	dash := &dashboardclient.RayDashboardClient{}
	dash.InitClient(client, "http://a-head-svc.ml.svc.cluster.local:8265")
	if err := dash.UpdateDeployments(ctx, []byte(`{"applications":[{"name":"llm","import_path":"llm:app","route_prefix":"/llm"}]}`)); err != nil {
		t.Fatalf("PUT through the proxy: %v", err)
	}
	apps, err := dash.GetMultiApplicationStatus(ctx)
	if err != nil || apps["llm"] == nil || apps["llm"].Status != raydashboard.AppRunning {
		t.Fatalf("applications of a: %v, %v", apps, err)
	}

	other := &dashboardclient.RayDashboardClient{}
	other.InitClient(client, "http://b-head-svc.ml.svc:8265")
	if apps, err := other.GetMultiApplicationStatus(ctx); err != nil || len(apps) != 0 {
		t.Fatalf("RayCluster b sees applications %v (%v), want none", apps, err)
	}

	if code, body := get(t, client, "http://10.4.0.2:8000/-/healthz"); code != http.StatusOK || body != "success" {
		t.Fatalf("a's head Serve proxy: %d %q, want 200 success", code, body)
	}
	if code, _ := get(t, client, "http://10.4.1.2:8000/-/healthz"); code != http.StatusOK {
		t.Fatalf("a's worker Serve proxy: %d, want 200 (a proxy on every node)", code)
	}
	if code, body := get(t, client, "http://10.4.0.3:8000/-/healthz"); code != http.StatusBadGateway || !strings.Contains(body, "Serve is not running") {
		t.Fatalf("b runs no Serve, its proxy answered %d %q", code, body)
	}
	// The dashboard by Pod address, as the kube-apiserver's Service proxy dials it.
	if code, body := get(t, client, "http://10.4.0.2:8265/api/serve/applications/"); code != http.StatusOK || !strings.Contains(body, `"llm"`) {
		t.Fatalf("a's dashboard by address: %d %q", code, body)
	}
	for u, want := range map[string]string{
		"http://10.4.1.2:8265/api/jobs/":                "nothing listens on port 8265",   // a worker runs no dashboard
		"http://10.9.9.9:8265/api/jobs/":                "no running Pod has the address", // no such Pod
		"http://missing-svc.ml.svc.cluster.local:8265/": "no such host",                   // no such Service
		"http://a-head-svc.ml.svc.cluster.local:9999/":  "has no port 9999",               // no such port
		"http://example.com/":                           "neither a Pod address nor a Service",
	} {
		if code, body := get(t, client, u); code != http.StatusBadGateway || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want 502 with %q", u, code, body, want)
		}
	}

	// A RayCluster made again under the same name is a new Ray cluster: no applications.
	if err := kube.CoreV1().Pods("ml").Delete(ctx, "a-head", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Pods("ml").Create(ctx, rayPod("a-head", "a", "uid-a2", "head", "10.4.0.4", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if apps, err := dash.GetMultiApplicationStatus(ctx); err != nil || len(apps) != 0 {
		t.Fatalf("the new RayCluster a sees applications %v (%v), want none", apps, err)
	}
}

// A deployment whose replicas need more TPUs than the RayCluster's Pods have stays DEPLOYING and
// says what it needs; one that fits runs.
func TestProxyPlacesReplicasOnTheRayClustersPods(t *testing.T) {
	kube := fake.NewClientset(
		rayPod("a-head", "a", "uid-a", "head", "10.4.0.2", 0),
		rayPod("a-tpu-0", "a", "uid-a", "worker", "10.4.1.2", 4),
		rayPod("a-tpu-1", "a", "uid-a", "worker", "10.4.1.3", 4),
		headService("a"))
	_, client := startProxy(t, kube, raydashboard.Config{})
	dash := &dashboardclient.RayDashboardClient{}
	dash.InitClient(client, "http://a-head-svc.ml.svc.cluster.local:8265")
	ctx := testwait.Context(t)
	config := `{"applications":[
	  {"name":"fits","import_path":"m:app","route_prefix":"/fits","deployments":[{"name":"d","num_replicas":2,"ray_actor_options":{"resources":{"TPU":4}}}]},
	  {"name":"big","import_path":"m:app","route_prefix":"/big","deployments":[{"name":"d","num_replicas":3,"ray_actor_options":{"resources":{"TPU":4}}}]}]}`
	if err := dash.UpdateDeployments(ctx, []byte(config)); err != nil {
		t.Fatal(err)
	}
	apps, err := dash.GetMultiApplicationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if apps["fits"].Status != raydashboard.AppRunning {
		t.Errorf("two replicas of 4 TPUs on two hosts of 4: %s %q, want RUNNING", apps["fits"].Status, apps["fits"].Message)
	}
	want := `Deployment 'd' in application 'big': 1 of 3 replicas cannot be scheduled. Resources required for each replica: {"TPU":4}, total resources available: {"CPU":6,"TPU":8}.`
	if apps["big"].Status != raydashboard.AppDeploying || apps["big"].Message != want {
		t.Errorf("three replicas of 4 TPUs on two hosts: %s %q, want DEPLOYING %q", apps["big"].Status, apps["big"].Message, want)
	}
}

// Before the cluster's kube-apiserver runs, and for CONNECT, the proxy refuses plainly.
func TestProxyRefusesWhatItCannotCarry(t *testing.T) {
	p, err := Start(Config{Kube: func() kubernetes.Interface { return nil }, Dashboards: NewDashboards(raydashboard.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	if code, body := get(t, client, "http://a-head-svc.ml.svc.cluster.local:8265/api/jobs/"); code != http.StatusBadGateway || !strings.Contains(body, "Kubernetes API is not running") {
		t.Fatalf("%d %q", code, body)
	}
	if _, err := client.Get("https://a-head-svc.ml.svc.cluster.local:8443/"); err == nil {
		t.Fatal("a CONNECT tunnel was opened")
	}
}

// Through a CONNECT tunnel, as the kube-apiserver's egress reaches the cluster: requests to a Pod
// address are answered by its RayCluster's dashboard, on the TCP port and the Unix socket alike;
// a CONNECT to an address no Pod has is refused; a loopback target is piped to.
func TestProxyTunnels(t *testing.T) {
	kube := fake.NewClientset(rayPod("a-head", "a", "uid-a", "head", "10.4.0.2", 0), headService("a"))
	p, _ := startProxy(t, kube, raydashboard.Config{})
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "loopback "+r.URL.Path) }))
	defer echo.Close()
	for _, dial := range []func() (net.Conn, error){
		func() (net.Conn, error) { return net.Dial("tcp", strings.TrimPrefix(p.URL(), "http://")) },
		func() (net.Conn, error) { return net.Dial("unix", p.Socket()) },
	} {
		for target, want := range map[string]string{
			"10.4.0.2:8265":                         `"applications":{}`,
			strings.TrimPrefix(echo.URL, "http://"): "loopback /api/serve/applications/",
			"10.9.9.9:8265":                         "refused",
		} {
			conn, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", target)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				if want != "refused" {
					t.Errorf("CONNECT %s: %s", target, resp.Status)
				}
				conn.Close()
				continue
			}
			if want == "refused" {
				t.Errorf("CONNECT %s was accepted; no Pod has that address", target)
			}
			fmt.Fprint(conn, "GET /api/serve/applications/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(body), want) {
				t.Errorf("GET through the tunnel to %s: %s %q, want %q", target, resp.Status, body, want)
			}
			conn.Close()
		}
	}
}

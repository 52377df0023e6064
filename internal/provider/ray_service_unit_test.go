package provider

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A Serve config is read as Ray reads it: names default to "default", route prefixes to "/", and
// both must be unique (null route prefixes aside).
func TestServeApplications(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         []string
		err          string
	}{
		{name: "two applications", config: testServeConfig("llm", "embed"), want: []string{"llm", "embed"}},
		{name: "a default name", config: "applications:\n- import_path: serve_app:app\n", want: []string{"default"}},
		{name: "no HTTP routes", config: "applications:\n- {name: a, import_path: a:app, route_prefix: null}\n- {name: b, import_path: b:app, route_prefix: null}\n",
			want: []string{"a", "b"}},
		{name: "as JSON", config: `{"applications": [{"name": "llm", "import_path": "serve_llm:app"}]}`, want: []string{"llm"}},
		{name: "no applications key", config: "proxy_location: EveryNode\n", err: "it has no applications"},
		{name: "an empty name", config: "applications:\n- {name: '', import_path: a:app}\n", err: `applications[0] has an empty name`},
		{name: "not a mapping", config: "- a\n- b\n", err: "not a YAML mapping"},
		{name: "applications not a list", config: "applications: llm\n", err: "not a YAML mapping"},
		{name: "a shared route", config: "applications:\n- {name: a, import_path: a:app, route_prefix: /x}\n- {name: b, import_path: b:app, route_prefix: /x}\n",
			err: `applications "a" and "b" share route_prefix "/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apps, err := serveApplications(tc.config)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := serveApplicationNames(tc.config); !reflect.DeepEqual(got, tc.want) || len(apps) != len(tc.want) {
				t.Errorf("applications %v, want %v", got, tc.want)
			}
		})
	}
}

// Only a change of what the RayCluster is made of replaces a RayService; an unknown value (a slice
// being replaced) is a change.
func TestClusterConfigChanges(t *testing.T) {
	groups := func(id types.String) types.List {
		return types.ListValueMust(types.StringType, []attr.Value{id})
	}
	state := rayConfigModel{RayVersion: types.StringValue("2.55.0"), PythonVersion: types.StringValue("3.10"),
		Image: types.StringValue("rayproject/ray:2.55.0-py310-tpu"), Head: types.ObjectNull(rayHeadAttrTypes), WorkerGroups: groups(types.StringValue("a")),
		Name: types.StringValue("llm")}
	same := state
	same.Name = types.StringValue("renamed") // not of the rayClusterConfig: its own plan modifier replaces it
	if got := clusterConfigChanges(same, state); len(got) != 0 {
		t.Errorf("no change of the rayClusterConfig: %v", got)
	}
	next := state
	next.RayVersion, next.WorkerGroups = types.StringValue("2.55.1"), groups(types.StringUnknown())
	want := []path.Path{path.Root("ray_version"), path.Root("worker_groups")}
	if got := clusterConfigChanges(next, state); !reflect.DeepEqual(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
}

func TestParseRayServiceImportID(t *testing.T) {
	full := "projects/p/locations/us-east5-b/clusters/c"
	for id, want := range map[string]string{
		full + "/rayServices/ns/llm":                   full + " ns llm",
		full + "/ns/llm":                               full + " ns llm",
		"us-east5-b/c/ns/llm":                          "projects/default-project/locations/us-east5-b/clusters/c ns llm",
		full + "/rayClusters/ns/llm":                   "",
		"p/us-east5-b/c/ns/" + strings.Repeat("a", 35): "",
	} {
		c, ns, name, err := rayServiceKind.parseImportID(id, "default-project")
		got := c.String() + " " + ns + " " + name
		if err != nil {
			got = ""
		}
		if got != want {
			t.Errorf("%s: got %q (%v), want %q", id, got, err, want)
		}
	}
}

// An upgrade moves the head Services as KubeRay v1.5.0 can: off ClusterIP (a headless Service) and
// to or from an internal load balancer (an annotation it does not copy) it cannot.
func TestHeadServiceUpgradeRefusal(t *testing.T) {
	for _, tc := range []struct {
		was, now string
		refused  string // what the reason says, "" when the upgrade can move the Services
	}{
		{serviceClusterIP, serviceClusterIP, ""},
		{serviceClusterIP, serviceNodePort, "clusterIP None"},
		{serviceClusterIP, serviceExternalLB, "for type LoadBalancer"},
		{serviceClusterIP, serviceInternalLB, "for type LoadBalancer"},
		{serviceNodePort, serviceExternalLB, ""},
		{serviceExternalLB, serviceNodePort, ""},
		{serviceNodePort, serviceClusterIP, ""},
		{serviceExternalLB, serviceClusterIP, ""},
		{serviceNodePort, serviceInternalLB, "an external load balancer instead of an internal one"},
		{serviceExternalLB, serviceInternalLB, "an external load balancer instead of an internal one"},
		{serviceInternalLB, serviceExternalLB, "an external load balancer, as before"},
		// The annotation left on a NodePort or ClusterIP Service gives it no load balancer.
		{serviceInternalLB, serviceNodePort, ""},
		{serviceInternalLB, serviceClusterIP, ""},
	} {
		got := headServiceUpgradeRefusal(tc.was, tc.now)
		if (got == "") != (tc.refused == "") || !strings.Contains(got, tc.refused) {
			t.Errorf("%s → %s: %q, want %s", tc.was, tc.now, got, map[bool]string{true: "no refusal", false: "a refusal saying " + tc.refused}[tc.refused == ""])
		}
	}
}

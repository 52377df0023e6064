package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Two texts of one quantity are equal, so the state keeps the configured one; text that is not a
// quantity equals only itself.
func TestQuantitySemanticEquality(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		prior, next string
		equal       bool
	}{
		{"0.5", "500m", true},
		{"500m", "0.5", true},
		{"2048Mi", "2Gi", true},
		{"12Gi", "12288Mi", true},
		{"1", "1000m", true},
		{"1", "1001m", false},
		{"2G", "2Gi", false},
		{"half", "half", true},
		{"half", "0.5", false},
		{"0.5", "half", false},
	} {
		equal, diags := quantityOf(tc.prior).StringSemanticEquals(ctx, quantityOf(tc.next))
		if diags.HasError() || equal != tc.equal {
			t.Errorf("%q then %q: equal %v (%v), want %v", tc.prior, tc.next, equal, diags, tc.equal)
		}
	}
	if _, diags := quantityOf("1").StringSemanticEquals(ctx, types.StringValue("1")); !diags.HasError() {
		t.Error("a quantity compared with a plain string: no error")
	}
}

// The error of text that is not a quantity names the attribute, the text, and what is valid.
func TestQuantityValidation(t *testing.T) {
	ctx := context.Background()
	validate := func(v quantityValue, p path.Path) xattr.ValidateAttributeResponse {
		var resp xattr.ValidateAttributeResponse
		v.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: p}, &resp)
		return resp
	}
	cpu := path.Root("worker_groups").AtListIndex(1).AtName("cpu")
	resp := validate(quantityOf("half"), cpu)
	if resp.Diagnostics.ErrorsCount() != 1 {
		t.Fatalf("half: %v, want one error", resp.Diagnostics)
	}
	d := resp.Diagnostics.Errors()[0]
	if d.Summary() != "Invalid Quantity" {
		t.Errorf("summary %q", d.Summary())
	}
	for _, want := range []string{`worker_groups[1].cpu "half" is not a Kubernetes quantity`, "500m", "8Gi"} {
		if !strings.Contains(d.Detail(), want) {
			t.Errorf("detail %q does not say %q", d.Detail(), want)
		}
	}
	for _, v := range []quantityValue{quantityOf("0.5"), quantityOf("2048Mi"), quantityOf("8G"), quantityOfPointer(nil),
		{StringValue: types.StringUnknown()}} {
		if resp := validate(v, cpu); resp.Diagnostics.HasError() {
			t.Errorf("%v: %v", v, resp.Diagnostics)
		}
	}
}

// Every quantity attribute of every resource is of quantityType, and the attribute types the models
// are built with are the schema's.
func TestQuantityAttributesEverywhere(t *testing.T) {
	ctx := context.Background()
	quantityNames := []string{"cpu", "memory", "memory_limit", "size_limit"}
	var found []string
	var walk func(resourceType, prefix string, attrs map[string]schema.Attribute)
	walk = func(resourceType, prefix string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			p := prefix + name
			switch a := a.(type) {
			case schema.StringAttribute:
				if !slices.Contains(quantityNames, name) && !strings.Contains(a.MarkdownDescription, "Kubernetes quantity") {
					continue
				}
				found = append(found, resourceType+"."+p)
				if a.CustomType == nil || !a.CustomType.Equal(quantityType{}) {
					t.Errorf("%s.%s is a Kubernetes quantity, not of quantityType", resourceType, p)
				}
			case schema.SingleNestedAttribute:
				walk(resourceType, p+".", a.Attributes)
			case schema.ListNestedAttribute:
				walk(resourceType, p+"[*].", a.NestedObject.Attributes)
			case schema.SetNestedAttribute:
				walk(resourceType, p+"[*].", a.NestedObject.Attributes)
			case schema.MapNestedAttribute:
				walk(resourceType, p+"[*].", a.NestedObject.Attributes)
			}
		}
	}
	p, ok := New("test")().(interface {
		Resources(context.Context) []func() resource.Resource
	})
	if !ok {
		t.Fatal("the provider lists no resources")
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "raytpu"}, &meta)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		walk(meta.TypeName, "", s.Schema.Attributes)
	}
	for _, want := range []string{
		"raytpu_ray_history_server.cpu", "raytpu_ray_history_server.memory", "raytpu_ray_history_server.memory_limit",
		"raytpu_ray_cluster.head.cpu", "raytpu_ray_cluster.head.memory", "raytpu_ray_cluster.head.volumes[*].empty_dir.size_limit",
		"raytpu_ray_cluster.worker_groups[*].cpu", "raytpu_ray_cluster.worker_groups[*].memory",
		"raytpu_ray_cluster.worker_groups[*].volumes[*].empty_dir.size_limit",
		"raytpu_ray_service.head.cpu", "raytpu_ray_service.worker_groups[*].memory",
	} {
		if !slices.Contains(found, want) {
			t.Errorf("%s: not found among the quantity attributes %v", want, found)
		}
	}

	if got, want := rayHeadSchema().GetType(), (types.ObjectType{AttrTypes: rayHeadAttrTypes}); !got.Equal(want) {
		t.Errorf("head: the schema's type %v, the models' %v", got, want)
	}
	if got, want := rayWorkerGroupsSchema().GetType(), (types.ListType{ElemType: types.ObjectType{AttrTypes: rayWorkerGroupAttrTypes}}); !got.Equal(want) {
		t.Errorf("worker_groups: the schema's type %v, the models' %v", got, want)
	}
}

// A head and worker groups whose quantities differ only in text are equal to code comparing a plan
// with a state, and ask the same of the cluster; another quantity is a change.
func TestQuantityAwareComparison(t *testing.T) {
	ctx := context.Background()
	config := func(headCPU, groupMemory, sizeLimit string) rayConfig {
		volumes := []rayVolumeConfig{{Name: "shm", MountPath: "/dev/shm", EmptyDir: &rayEmptyDir{SizeLimit: &sizeLimit}}}
		return rayConfig{RayVersion: "2.55.0", PythonVersion: "3.10", Image: "ray",
			Head: rayHeadConfig{CPU: headCPU, Memory: "2048Mi", ServiceType: serviceClusterIP, rayPodConfig: rayPodConfig{Volumes: volumes}},
			Groups: []rayGroupConfig{{Name: "g", Slices: []string{"s"}, CPU: &headCPU, Memory: &groupMemory,
				rayPodConfig: rayPodConfig{Volumes: volumes}}}}
	}
	model := func(c rayConfig) rayConfigModel {
		var m rayConfigModel
		if d := applyRayConfig(ctx, c, &m); d.HasError() {
			t.Fatal(d)
		}
		return m
	}
	canonical := config("500m", "32Gi", "16Gi")
	for _, tc := range []struct {
		what  string
		other rayConfig
		equal bool
	}{
		{"the same text", config("500m", "32Gi", "16Gi"), true},
		{"other text", config("0.5", "32768Mi", "16384Mi"), true},
		{"another cpu", config("0.501", "32Gi", "16Gi"), false},
		{"another memory", config("500m", "32G", "16Gi"), false},
		{"another size limit", config("500m", "32Gi", "17Gi"), false},
	} {
		a, b := model(canonical), model(tc.other)
		if got := equalQuantityAware(a.Head, b.Head) && equalQuantityAware(a.WorkerGroups, b.WorkerGroups); got != tc.equal {
			t.Errorf("%s: the head and groups are equal %v, want %v", tc.what, got, tc.equal)
		}
		same := specHash(canonical.withCanonicalQuantities()) == specHash(tc.other.withCanonicalQuantities())
		if same != tc.equal {
			t.Errorf("%s: the configurations ask the same %v, want %v", tc.what, same, tc.equal)
		}
	}
	edited := config("0.5", "32768Mi", "16384Mi")
	if c := edited.withCanonicalQuantities(); c.Head.CPU != "500m" || *c.Groups[0].Memory != "32Gi" || *c.Groups[0].Volumes[0].EmptyDir.SizeLimit != "16Gi" {
		t.Errorf("in canonical text: %+v", c)
	}
	if edited.Head.CPU != "0.5" || *edited.Groups[0].Memory != "32768Mi" || *edited.Groups[0].Volumes[0].EmptyDir.SizeLimit != "16384Mi" {
		t.Errorf("withCanonicalQuantities changed the configuration it was given: %+v", edited)
	}
	a := model(canonical)
	for _, tc := range []struct {
		what string
		b    attr.Value
	}{
		{"unknown", types.ObjectUnknown(rayHeadAttrTypes)},
		{"null", types.ObjectNull(rayHeadAttrTypes)},
		{"of another type", types.StringValue("500m")},
	} {
		if equalQuantityAware(a.Head, tc.b) {
			t.Errorf("a head equals a value %s", tc.what)
		}
	}
}

package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// history_server's service account defaults to one named after the resource once the plan knows
// its name; the block goes to the RayCluster as collectors and an annotation, from which an
// import reads it back; and adding or changing it restarts every Pod.
func TestHistoryServerPlanApplyImport(t *testing.T) {
	ctx := context.Background()
	history := func(account types.String) types.Object {
		return types.ObjectValueMust(rayHistoryAttrTypes, map[string]attr.Value{
			"bucket": types.StringValue("runs"), "google_service_account": types.StringValue("w@p.iam.gserviceaccount.com"),
			"collector_image": types.StringValue(defaultCollectorImage), "kubernetes_service_account": account,
		})
	}
	without := rayConfigModel{Name: types.StringValue("rc"), Namespace: types.StringValue("default"), RayVersion: types.StringValue("2.55.0"),
		PythonVersion: types.StringValue("3.10"), Image: types.StringValue("ray"), Head: types.ObjectNull(rayHeadAttrTypes),
		WorkerGroups: types.ListValueMust(types.ObjectType{AttrTypes: rayWorkerGroupAttrTypes}, nil), HistoryServer: types.ObjectNull(rayHistoryAttrTypes)}
	plan := without
	plan.HistoryServer = history(types.StringUnknown())
	var diags diag.Diagnostics
	planHistoryServer(ctx, &plan, &diags)
	if diags.HasError() || !plan.HistoryServer.Equal(history(types.StringValue("rc-ray-history"))) {
		t.Fatalf("planned %v (%v)", plan.HistoryServer, diags)
	}
	unnamed := without
	unnamed.Name, unnamed.HistoryServer = types.StringUnknown(), history(types.StringUnknown())
	planHistoryServer(ctx, &unnamed, &diags)
	if !unnamed.HistoryServer.Equal(history(types.StringUnknown())) {
		t.Errorf("a service account named after an unknown name: %v", unnamed.HistoryServer)
	}

	spec := kube.RayClusterSpec{Annotations: map[string]string{}}
	addHistoryServer(ctx, plan, &spec)
	want := kube.Collector{Bucket: "runs", Image: defaultCollectorImage, ServiceAccount: "rc-ray-history", GoogleServiceAccount: "w@p.iam.gserviceaccount.com"}
	if spec.HistoryServer == nil || *spec.HistoryServer != want {
		t.Errorf("collectors %+v, want %+v", spec.HistoryServer, want)
	}
	imported := without
	if d := importHistoryServer(ctx, spec.Annotations, &imported); d.HasError() || !imported.HistoryServer.Equal(plan.HistoryServer) {
		t.Errorf("imported %v, want %v (%v)", imported.HistoryServer, plan.HistoryServer, d)
	}
	if d := importHistoryServer(ctx, map[string]string{}, &imported); d.HasError() || !imported.HistoryServer.IsNull() {
		t.Errorf("imported without the annotation: %v", imported.HistoryServer)
	}

	renamed := plan
	renamed.HistoryServer = history(types.StringValue("other"))
	for what, tc := range map[string]struct {
		prior, next rayConfigModel
		restart     bool
	}{
		"added":             {without, plan, true},
		"removed":           {plan, without, true},
		"renamed":           {plan, renamed, true},
		"the same":          {plan, plan, false},
		"default unplanned": {plan, withHistory(plan, history(types.StringUnknown())), false},
	} {
		if got := plannedRestarts(ctx, tc.prior, tc.next).everything; got != tc.restart {
			t.Errorf("%s: every Pod restarts %v, want %v", what, got, tc.restart)
		}
	}
}

// withHistory is m with history_server h.
func withHistory(m rayConfigModel, h types.Object) rayConfigModel {
	m.HistoryServer = h
	return m
}

package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// sliceCapacityAttributes are the attributes that say where a slice's TPUs come from. Whether a
// change of them replaces the slice is decided in ModifyPlan (planCapacity): only when the slice no
// longer runs on capacity they allow.
func sliceCapacityAttributes() map[string]schema.Attribute {
	keepBool := []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}
	return map[string]schema.Attribute{
		"zone": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Zone of the slice; defaults to the cluster's location when that is a zone. Required for regional clusters.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"spot": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Use Spot capacity: cheaper, and preemptible at any time.",
		},
		"reservation": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "Consume a Compute Engine reservation: one named (of this project or shared from another, " +
				"optionally one of its blocks), or any matching reservation that does not require to be named. One named is " +
				"read at plan time: missing, in another zone, of another machine type, or with too few free hosts, it fails the plan.",
			Attributes: reservationAttributes(),
		},
		"flex_start": schema.BoolAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Use flex-start capacity (Dynamic Workload Scheduler): GKE creates the slice empty and " +
				"autoscaled, and brings all of its hosts up together when a workload asks for them and capacity is found, for " +
				"up to `max_run_duration`. v5e, v5p, v6e and tpu7x, on GKE 1.33.0-gke.1712000 or later. The hosts are not " +
				"waited for. `true` with `queued_provisioning`.",
			PlanModifiers: keepBool,
		},
		"max_run_duration": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "With flex-start capacity (`flex_start`, `queued_provisioning` or a flex-start `fallback` " +
				"entry), how long the hosts may run once they are up, as a Go duration such as `72h`: at most seven days " +
				"(`168h`), GKE's limit; unset, seven days for queued slices and no limit otherwise.",
			Validators: []validator.String{durationValidator{}},
		},
		"queued_provisioning": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Queue for flex-start capacity with ProvisioningRequests (for Kueue or a workload that " +
				"creates ProvisioningRequests with class `queued-provisioning.gke.io`): the slice is created empty and its " +
				"hosts are not waited for.",
		},
		"autoscaling": schema.BoolAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Let GKE's cluster autoscaler scale the slice between none and all of its hosts, as one unit: " +
				"an idle slice stops billing, and pending pods (KubeRay's autoscaler) bring it back whole. Created with all " +
				"of its hosts. Always on with flex-start capacity.",
			PlanModifiers: keepBool,
		},
		"auto_repair": schema.BoolAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Whether GKE repairs failing hosts. A multi-host slice is repaired whole: all of its VMs " +
				"are recreated and every pod on it is evicted. GKE's default (`true`) when unset; a cluster on a release " +
				"channel requires `true` unless the slice uses flex-start capacity.",
			PlanModifiers: keepBool,
		},
		"auto_upgrade": schema.BoolAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Whether GKE upgrades the slice's nodes automatically, within the cluster's maintenance " +
				"policy. GKE's default (`true`) when unset; a cluster on a release channel requires `true` unless the slice " +
				"uses flex-start capacity.",
			PlanModifiers: keepBool,
		},
		"fallback": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Other zones and kinds of capacity to try, in order, when GKE answers the slice's own settings " +
				"with a stockout or an exhausted quota. A failed attempt's node pool is deleted before the next one starts, " +
				"`capacity_used` says which attempt the slice came up on, and an apply that runs out of choices lists every " +
				"attempt and why it failed. Changing the list does not replace a slice that runs on a choice still allowed.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"zone": schema.StringAttribute{
					Optional: true, MarkdownDescription: "Zone to try, of the cluster's region; the slice's zone when unset.",
				},
				"capacity": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "Kind of capacity: `on-demand`, `spot`, `reservation` or `flex-start`; the slice's own " +
						"when unset. Flex-start never stocks out at creation (the slice is created empty), so it can only be last.",
					Validators: []validator.String{stringvalidator.OneOf(fallbackCapacities...)},
				},
				"reservation": schema.SingleNestedAttribute{
					Optional: true, MarkdownDescription: "The reservation of a `reservation` entry; the slice's own when unset.",
					Attributes: reservationAttributes(),
				},
			}},
		},
		"capacity_used": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "Where the slice's capacity came from.",
			PlanModifiers:       []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
			Attributes: map[string]schema.Attribute{
				"zone":        schema.StringAttribute{Computed: true, MarkdownDescription: "Zone of the slice."},
				"type":        schema.StringAttribute{Computed: true, MarkdownDescription: "`on-demand`, `spot`, `reservation`, `flex-start` or `queued`."},
				"reservation": schema.StringAttribute{Computed: true, MarkdownDescription: "The reservation consumed, for `reservation`."},
				"attempt": schema.Int64Attribute{
					Computed: true, MarkdownDescription: "`1` for the slice's own settings, `n + 1` for the n-th `fallback` entry.",
				},
			},
		},
	}
}

func reservationAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"consume": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "`specific` (the default): the reservation named by `name`; `any`: any reservation of the " +
				"zone that matches the slice and does not require to be named.",
			Validators: []validator.String{stringvalidator.OneOf(reservationSpecific, reservationAny)},
		},
		"name":    schema.StringAttribute{Optional: true, MarkdownDescription: "Reservation name, with `consume = \"specific\"`."},
		"project": schema.StringAttribute{Optional: true, MarkdownDescription: "Project of a shared reservation; the cluster's project when unset."},
		"block": schema.StringAttribute{
			Optional: true, MarkdownDescription: "A reservation block of the reservation, to place the slice in that block.",
		},
	}
}

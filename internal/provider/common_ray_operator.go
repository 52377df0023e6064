package provider

import (
	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// rayOperatorAttrTypes are the attributes of raytpu_cluster's ray_operator.
var rayOperatorAttrTypes = map[string]attr.Type{"logging": types.BoolType, "monitoring": types.BoolType}

// rayOperatorSettings is the model of ray_operator and of raytpu_ray_operator's settings.
type rayOperatorSettings struct {
	Logging    types.Bool `tfsdk:"logging"`
	Monitoring types.Bool `tfsdk:"monitoring"`
}

// expandRayOperator is the add-on configuration; enabled is false only to turn it off.
func expandRayOperator(enabled bool, s rayOperatorSettings) *containerpb.RayOperatorConfig {
	return &containerpb.RayOperatorConfig{
		Enabled:                    enabled,
		RayClusterLoggingConfig:    &containerpb.RayClusterLoggingConfig{Enabled: enabled && s.Logging.ValueBool()},
		RayClusterMonitoringConfig: &containerpb.RayClusterMonitoringConfig{Enabled: enabled && s.Monitoring.ValueBool()},
	}
}

func flattenRayOperator(c *containerpb.RayOperatorConfig) rayOperatorSettings {
	return rayOperatorSettings{
		Logging:    types.BoolValue(c.GetRayClusterLoggingConfig().GetEnabled()),
		Monitoring: types.BoolValue(c.GetRayClusterMonitoringConfig().GetEnabled()),
	}
}

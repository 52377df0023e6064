package emulator

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// The ClusterManager setters other than update, setAddons and setResourceLabels: each is a
// cluster update (UPDATE_CLUSTER, as the Operation.Type docs say labels, master auth, network
// policy and maintenance policy changes are reported; UPGRADE_MASTER for a new master version)
// that sets the field it names.

// setClusterField serves SetLegacyAbac, SetLocations, SetLoggingService, SetMonitoringService,
// UpdateMaster, SetMaintenancePolicy, SetMasterAuth, SetNetworkPolicy, StartIPRotation and
// CompleteIPRotation.
func (e *Emulator) setClusterField(rpc string, n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var update *containerpb.ClusterUpdate
	var set func(c *cluster)
	switch rpc {
	case "SetLegacyAbac":
		var req containerpb.SetLegacyAbacRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		set = func(c *cluster) { c.PB.LegacyAbac = &containerpb.LegacyAbac{Enabled: req.Enabled} }
	case "SetLocations":
		var req containerpb.SetLocationsRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		update = &containerpb.ClusterUpdate{DesiredLocations: req.Locations}
	case "SetLoggingService":
		var req containerpb.SetLoggingServiceRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		update = &containerpb.ClusterUpdate{DesiredLoggingService: req.LoggingService}
	case "SetMonitoringService":
		var req containerpb.SetMonitoringServiceRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		update = &containerpb.ClusterUpdate{DesiredMonitoringService: req.MonitoringService}
	case "UpdateMaster":
		var req containerpb.UpdateMasterRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		if req.MasterVersion == "" {
			return nil, apierr.Invalid("Master version is required.")
		}
		update = &containerpb.ClusterUpdate{DesiredMasterVersion: req.MasterVersion}
	case "SetMaintenancePolicy":
		// Checked by the maintenance rules (rules/maintenance.go).
		return e.setMaintenancePolicy(n, body)
	case "SetMasterAuth":
		var req containerpb.SetMasterAuthRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		// Basic authentication and client certificates are gone from GKE; the cluster CA and the
		// token access stay as they are.
		set = func(*cluster) {}
	case "SetNetworkPolicy":
		var req containerpb.SetNetworkPolicyRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		set = func(c *cluster) { c.PB.NetworkPolicy = cloneMsg(req.NetworkPolicy) }
	case "StartIPRotation":
		return e.startIPRotation(n, body)
	case "CompleteIPRotation":
		set = func(*cluster) {}
	default:
		return nil, apierr.New(codes.Unimplemented, "%s is not implemented", rpc)
	}
	return e.reconcileCluster(n, func(c *cluster) (func(), containerpb.Operation_Type, *apierr.Error) {
		if update != nil {
			return applyClusterUpdate(c, update)
		}
		return func() { set(c) }, containerpb.Operation_UPDATE_CLUSTER, nil
	})
}

// setNodePoolField serves SetNodePoolAutoscaling (UPGRADE_NODES: "most forms of updates to node
// pools", Operation.Type docs), SetNodePoolManagement (SET_NODE_POOL_MANAGEMENT) and
// RollbackNodePoolUpgrade (UPGRADE_NODES; the emulator's upgrades never fail half-way, so there is
// nothing to roll back).
func (e *Emulator) setNodePoolField(rpc string, n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	typ := containerpb.Operation_UPGRADE_NODES
	var set func(p *rules.NodePool)
	switch rpc {
	case "SetNodePoolAutoscaling":
		// Checked by the node pool rules (rules/autoscaling.go).
		return e.setNodePoolAutoscaling(n, body)
	case "SetNodePoolManagement":
		var req containerpb.SetNodePoolManagementRequest
		if err := decodeBody(body, &req); err != nil {
			return nil, err
		}
		if req.Management == nil {
			return nil, apierr.Invalid("Management is required.")
		}
		typ = containerpb.Operation_SET_NODE_POOL_MANAGEMENT
		set = func(p *rules.NodePool) { p.PB.Management = cloneMsg(req.Management) }
	case "RollbackNodePoolUpgrade":
		set = func(*rules.NodePool) {}
	default:
		return nil, apierr.New(codes.Unimplemented, "%s is not implemented", rpc)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, p, err := e.lookupPoolLocked(n)
	if err != nil {
		return nil, err
	}
	if err := e.clusterReadyLocked(c, p.PB.Name); err != nil {
		return nil, err
	}
	if rpc == "SetNodePoolManagement" {
		check := cloneNodePool(p.PB)
		set(&rules.NodePool{PB: check})
		if err := rules.CheckManagement(c.PB.GetReleaseChannel().GetChannel(), check); err != nil {
			return nil, err
		}
	}
	op, err := e.newOperationLocked(c, typ, n.poolKey(), p.PB.Name)
	if err != nil {
		return nil, err
	}
	prev := p.PB.Status
	p.PB.Status = containerpb.NodePool_RECONCILING
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(context.Context) *apierr.Error { return nil },
		finish: func(err *apierr.Error) {
			p.PB.Status = restoredStatus(prev, p)
			if err == nil {
				set(p)
				p.PB.Etag = rules.RandomHex(8)
			}
		},
	}), nil
}

// completeNodePoolUpgrade answers CompleteNodePoolUpgrade: the emulator's upgrades have no
// blue-green soak phase to cut short.
func (e *Emulator) completeNodePoolUpgrade(n resourceName) (*emptypb.Empty, *apierr.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, _, err := e.lookupPoolLocked(n); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// desiredHandled are the ClusterUpdate fields applyClusterUpdate models itself; applyDesired
// copies the others.
var desiredHandled = map[string]bool{
	"desired_addons_config": true, "desired_master_version": true, "desired_release_channel": true,
	"desired_workload_identity_config": true, "desired_node_pool_id": true, "desired_node_pool_autoscaling": true,
	"desired_enable_private_endpoint": true, "desired_intra_node_visibility_config": true,
	"desired_l4ilb_subsetting_config": true, "desired_cluster_autoscaling": true, "desired_stack_type": true,
	"desired_control_plane_endpoints_config": true, "desired_private_cluster_config": true,
}

// applyDesired applies a ClusterUpdate's desired_X fields to the cluster's X (or its
// networkConfig's X) where the two have the same type, as GKE reports an update's result: e.g.
// desiredLoggingConfig becomes loggingConfig, desiredDnsConfig networkConfig.dnsConfig. It also
// applies the few whose names differ, and a node pool's desiredNodePoolAutoscaling.
func applyDesired(c *cluster, u *containerpb.ClusterUpdate) {
	pb := c.PB
	if pb.NetworkConfig == nil {
		pb.NetworkConfig = &containerpb.NetworkConfig{}
	}
	targets := []protoreflect.Message{pb.ProtoReflect(), pb.NetworkConfig.ProtoReflect()}
	u.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		rest, ok := strings.CutPrefix(name, "desired_")
		if !ok || desiredHandled[name] {
			return true
		}
		for _, m := range targets {
			tf := m.Descriptor().Fields().ByName(protoreflect.Name(rest))
			if tf == nil || tf.Kind() != fd.Kind() || tf.Cardinality() != fd.Cardinality() || tf.Message() != fd.Message() || tf.Enum() != fd.Enum() {
				continue
			}
			m.Set(tf, copyValue(m, tf, v))
			break
		}
		return true
	})
	if v := u.DesiredIntraNodeVisibilityConfig; v != nil {
		pb.NetworkConfig.EnableIntraNodeVisibility = v.Enabled
	}
	if v := u.DesiredL4IlbSubsettingConfig; v != nil {
		pb.NetworkConfig.EnableL4IlbSubsetting = v.Enabled
	}
	if v := u.DesiredClusterAutoscaling; v != nil {
		pb.Autoscaling = rules.ReportedClusterAutoscaling(v)
	}
	if u.DesiredStackType != containerpb.StackType_STACK_TYPE_UNSPECIFIED {
		if pb.IpAllocationPolicy == nil {
			pb.IpAllocationPolicy = &containerpb.IPAllocationPolicy{}
		}
		pb.IpAllocationPolicy.StackType = u.DesiredStackType
	}
	applyEndpointsUpdate(pb, u)
	if v := u.DesiredNodePoolAutoscaling; v != nil {
		if p := c.pool(u.DesiredNodePoolId); p != nil {
			p.PB.Autoscaling = cloneMsg(v)
		}
	}
}

// copyValue copies v (of field tf's type) so that the cluster shares nothing with the request.
func copyValue(m protoreflect.Message, tf protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch {
	case tf.IsList():
		l := m.NewField(tf).List()
		for i := 0; i < v.List().Len(); i++ {
			item := v.List().Get(i)
			if tf.Message() != nil {
				item = protoreflect.ValueOfMessage(proto.Clone(item.Message().Interface()).ProtoReflect())
			}
			l.Append(item)
		}
		return protoreflect.ValueOfList(l)
	case tf.IsMap():
		mm := m.NewField(tf).Map()
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			mm.Set(k, mv)
			return true
		})
		return protoreflect.ValueOfMap(mm)
	case tf.Message() != nil:
		return protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
	}
	return v
}

// startIPRotation moves the cluster's control plane to a new IP (here a new port) and, with
// rotateCredentials, gives it a new CA, as GKE's IP and credential rotations do: clients must then
// read the cluster's endpoint and masterAuth.clusterCaCertificate anew ("Rotate your cluster
// credentials", GKE docs). GKE serves the old IP until completeIpRotation; the emulator stops it at
// once, which is what a client that kept the old one meets once the rotation completes.
func (e *Emulator) startIPRotation(n resourceName, body []byte) (*containerpb.Operation, *apierr.Error) {
	var req containerpb.StartIPRotationRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.lookupClusterLocked(n)
	if err != nil {
		return nil, err
	}
	if err := e.admitLocked(c, ""); err != nil {
		return nil, err
	}
	if c.PB.Status != containerpb.Cluster_RUNNING {
		return nil, apierr.New(codes.FailedPrecondition, "Cluster %q is in state %s and cannot be updated.", c.PB.Name, c.PB.Status)
	}
	op, err := e.newOperationLocked(c, containerpb.Operation_UPDATE_CLUSTER, c.Key, "")
	if err != nil {
		return nil, err
	}
	c.PB.Status = containerpb.Cluster_RECONCILING
	e.persistLocked()
	return e.startOperation(op, opWork{
		run: func(ctx context.Context) *apierr.Error {
			_, dns := c.k8s.serving()
			c.stopAPIServer()
			e.mu.Lock()
			c.APIPort = 0
			dir := c.dir
			e.mu.Unlock()
			if req.RotateCredentials {
				if err := os.RemoveAll(filepath.Join(dir, "pki")); err != nil {
					return apierr.New(codes.Internal, "Rotating the cluster CA: %v", err)
				}
			}
			if err := e.startClusterAPIWith(ctx, c, dns); err != nil {
				return apierr.New(codes.Internal, "Restarting the control plane on its new IP: %v", err)
			}
			return nil
		},
		finish: func(*apierr.Error) {
			c.PB.Status = containerpb.Cluster_RUNNING
			c.PB.Etag = rules.RandomHex(8)
		},
	}), nil
}

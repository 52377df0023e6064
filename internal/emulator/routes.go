package emulator

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// The emulated Google APIs' methods, one table per API: each row is an HTTP method, a path shape,
// a ":verb" where the API has one, the method's name (for the request log, counters and faults)
// and its handler. A request is reduced to its shape (names become *) and looked up; nothing else
// decides which handler runs.

// route is a resolved GKE API request.
type route struct {
	rpc  string // ClusterManager method name, e.g. CreateNodePool
	name resourceName
	run  gkeHandler
}

// gkeHandler serves one ClusterManager method.
type gkeHandler func(e *Emulator, rt route, body []byte) (proto.Message, *apierr.Error)

// gkeRoute is one ClusterManager method: shape is the path after
// projects/{project}/locations/{location}/, with * for each name.
type gkeRoute struct {
	method, shape, verb, rpc string
	run                      gkeHandler
}

// gkeRoutes are the ClusterManager methods the emulator serves, with the paths and verbs of
// cloud.google.com/go/container/apiv1's REST client and google.golang.org/api/container/v1.
var gkeRoutes = []gkeRoute{
	{"GET", "serverConfig", "", "GetServerConfig", func(*Emulator, route, []byte) (proto.Message, *apierr.Error) {
		return rules.ServerConfig(), nil
	}},
	{"GET", "clusters", "", "ListClusters", func(e *Emulator, rt route, _ []byte) (proto.Message, *apierr.Error) {
		return e.listClusters(rt.name), nil
	}},
	{"POST", "clusters", "", "CreateCluster", byNameAndBody((*Emulator).createCluster)},
	{"GET", "clusters/*", "", "GetCluster", byName((*Emulator).getCluster)},
	{"PUT", "clusters/*", "", "UpdateCluster", byNameAndBody((*Emulator).updateCluster)},
	{"DELETE", "clusters/*", "", "DeleteCluster", byName((*Emulator).deleteCluster)},
	{"POST", "clusters/*", "setAddons", "SetAddonsConfig", byNameAndBody((*Emulator).setAddons)},
	{"POST", "clusters/*", "setResourceLabels", "SetLabels", byNameAndBody((*Emulator).setResourceLabels)},
	{"POST", "clusters/*", "setLegacyAbac", "SetLegacyAbac", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setLocations", "SetLocations", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setLogging", "SetLoggingService", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setMonitoring", "SetMonitoringService", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "updateMaster", "UpdateMaster", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setMaintenancePolicy", "SetMaintenancePolicy", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setMasterAuth", "SetMasterAuth", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "setNetworkPolicy", "SetNetworkPolicy", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "startIpRotation", "StartIPRotation", byRPC((*Emulator).setClusterField)},
	{"POST", "clusters/*", "completeIpRotation", "CompleteIPRotation", byRPC((*Emulator).setClusterField)},
	{"GET", "clusters/*/nodePools", "", "ListNodePools", byName((*Emulator).listNodePools)},
	{"POST", "clusters/*/nodePools", "", "CreateNodePool", byNameAndBody((*Emulator).createNodePool)},
	{"GET", "clusters/*/nodePools/*", "", "GetNodePool", byName((*Emulator).getNodePool)},
	{"PUT", "clusters/*/nodePools/*", "", "UpdateNodePool", byNameAndBody((*Emulator).updateNodePool)},
	{"DELETE", "clusters/*/nodePools/*", "", "DeleteNodePool", byName((*Emulator).deleteNodePool)},
	{"POST", "clusters/*/nodePools/*", "update", "UpdateNodePool", byNameAndBody((*Emulator).updateNodePool)},
	{"POST", "clusters/*/nodePools/*", "setSize", "SetNodePoolSize", byNameAndBody((*Emulator).setNodePoolSize)},
	{"POST", "clusters/*/nodePools/*", "setAutoscaling", "SetNodePoolAutoscaling", byRPC((*Emulator).setNodePoolField)},
	{"POST", "clusters/*/nodePools/*", "setManagement", "SetNodePoolManagement", byRPC((*Emulator).setNodePoolField)},
	{"POST", "clusters/*/nodePools/*", "rollback", "RollbackNodePoolUpgrade", byRPC((*Emulator).setNodePoolField)},
	{"POST", "clusters/*/nodePools/*", "completeUpgrade", "CompleteNodePoolUpgrade", byName((*Emulator).completeNodePoolUpgrade)},
	{"GET", "operations", "", "ListOperations", func(e *Emulator, rt route, _ []byte) (proto.Message, *apierr.Error) {
		return e.listOperations(rt.name), nil
	}},
	{"GET", "operations/*", "", "GetOperation", byName((*Emulator).getOperation)},
	{"POST", "operations/*", "cancel", "CancelOperation", byName((*Emulator).cancelOperation)},
}

// byName, byNameAndBody and byRPC make a handler of a method that takes the resource's name, its
// name and the request body, or the RPC's name too.
func byName[M proto.Message](f func(*Emulator, resourceName) (M, *apierr.Error)) gkeHandler {
	return func(e *Emulator, rt route, _ []byte) (proto.Message, *apierr.Error) { return f(e, rt.name) }
}

func byNameAndBody[M proto.Message](f func(*Emulator, resourceName, []byte) (M, *apierr.Error)) gkeHandler {
	return func(e *Emulator, rt route, body []byte) (proto.Message, *apierr.Error) { return f(e, rt.name, body) }
}

func byRPC[M proto.Message](f func(*Emulator, string, resourceName, []byte) (M, *apierr.Error)) gkeHandler {
	return func(e *Emulator, rt route, body []byte) (proto.Message, *apierr.Error) {
		return f(e, rt.rpc, rt.name, body)
	}
}

// gkeRouteIndex finds a row of gkeRoutes by method, shape and verb.
var gkeRouteIndex = func() map[string]gkeRoute {
	m := map[string]gkeRoute{}
	for _, r := range gkeRoutes {
		m[r.method+" "+r.shape+":"+r.verb] = r
	}
	return m
}()

// unimplementedVerbs are the shapes whose unknown ":verb"s GKE has and the emulator does not
// serve: they answer UNIMPLEMENTED, not 404, so that a client's gap is told from a bad path.
var unimplementedVerbs = map[string]string{"clusters/*": "clusters", "clusters/*/nodePools/*": "nodePools"}

// legacyVerbs are the path segments that the zonal (legacy) v1 paths end with where the
// locations paths have a ":verb", as google.golang.org/api/container/v1 calls them
// (container-api.json: projects.zones.clusters.{addons,legacyAbac,locations,logging,master,
// monitoring,resourceLabels} and projects.zones.clusters.nodePools.{autoscaling,setManagement,
// setSize,update}).
var legacyVerbs = map[string]string{
	"addons": "setAddons", "legacyAbac": "setLegacyAbac", "locations": "setLocations", "logging": "setLogging",
	"master": "updateMaster", "monitoring": "setMonitoring", "resourceLabels": "setResourceLabels",
}

var legacyPoolVerbs = map[string]string{
	"autoscaling": "setAutoscaling", "setManagement": "setManagement", "setSize": "setSize", "update": "update",
}

// parseRoute maps a method and path to a ClusterManager RPC. Paths are those of the REST
// clients, in both forms of the v1 API: /v1/projects/{p}/locations/{l}/{clusters|operations|
// serverConfig}/... (cloud.google.com/go/container/apiv1, google.golang.org/api/container/v1
// Projects.Locations) and the legacy /v1/projects/{p}/zones/{z}/{clusters|operations|serverconfig}/...
// (google.golang.org/api/container/v1 Projects.Zones), whose verbs are path segments
// (.../clusters/{c}/addons) or ":verb"s (.../clusters/{c}:setMasterAuth). The legacy form is
// rewritten to the locations form, then looked up in gkeRoutes.
func parseRoute(method, path string) (route, *apierr.Error) {
	notFound := func() (route, *apierr.Error) {
		return route{}, apierr.NotFound("The requested URL %s was not found on this server.", path)
	}
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return notFound()
	}
	seg := strings.Split(rest, "/")
	verb := ""
	if last := seg[len(seg)-1]; strings.Contains(last, ":") {
		name, v, _ := strings.Cut(last, ":")
		seg[len(seg)-1], verb = name, v
	}
	if len(seg) < 5 || seg[0] != "projects" || (seg[2] != "locations" && seg[2] != "zones") || slices.Contains(seg, "") {
		return notFound()
	}
	if seg[2] == "zones" {
		switch {
		case len(seg) == 5 && seg[4] == "serverconfig":
			seg[4] = "serverConfig"
		case len(seg) == 5 && seg[4] == "serverConfig":
			return notFound()
		case verb == "" && len(seg) == 7 && seg[4] == "clusters" && legacyVerbs[seg[6]] != "":
			seg, verb = seg[:6], legacyVerbs[seg[6]]
		case verb == "" && len(seg) == 9 && seg[4] == "clusters" && seg[6] == "nodePools" && legacyPoolVerbs[seg[8]] != "":
			seg, verb = seg[:8], legacyPoolVerbs[seg[8]]
		}
	}
	shape, names := pathShape(seg[4:])
	r, ok := gkeRouteIndex[method+" "+shape+":"+verb]
	if !ok {
		if kind := unimplementedVerbs[shape]; kind != "" && verb != "" {
			return route{}, apierr.New(codes.Unimplemented, "The emulator does not implement %s:%s.", kind, verb)
		}
		return notFound()
	}
	rt := route{rpc: r.rpc, run: r.run, name: resourceName{Project: seg[1], Location: seg[3]}}
	switch {
	case seg[4] == "operations" && len(names) == 1:
		rt.name.Operation = names[0]
	case seg[4] == "clusters":
		if len(names) > 0 {
			rt.name.Cluster = names[0]
		}
		if len(names) > 1 {
			rt.name.NodePool = names[1]
		}
	}
	return rt, nil
}

// pathShape is a resource path's shape, its collections with * for each name
// (clusters/c/nodePools/p: clusters/*/nodePools/*), and the names in order.
func pathShape(seg []string) (string, []string) {
	shape := make([]string, len(seg))
	var names []string
	for i, s := range seg {
		if i%2 == 1 {
			shape[i] = "*"
			names = append(names, s)
		} else {
			shape[i] = s
		}
	}
	return strings.Join(shape, "/"), names
}

// computeHandler serves one Compute Engine method.
type computeHandler func(e *Emulator, ctx context.Context, rt computeRoute, body []byte) (any, *apierr.Error)

// computeRouteSpec is one Compute Engine method: shape is the path after projects/{project}/,
// with * for each name.
type computeRouteSpec struct {
	method, shape, id string
	run               computeHandler
}

// computeRoutes are the Compute Engine methods the emulator serves, with the paths of
// google.golang.org/api/compute/v1.
var computeRoutes = []computeRouteSpec{
	{"GET", "zones/*/instanceGroupManagers", "compute.instanceGroupManagers.list", func(e *Emulator, _ context.Context, rt computeRoute, _ []byte) (any, *apierr.Error) {
		return e.listInstanceGroupManagers(rt), nil
	}},
	{"GET", "zones/*/instanceGroupManagers/*", "compute.instanceGroupManagers.get", computeByName((*Emulator).getInstanceGroupManager)},
	{"GET", "zones/*/machineTypes", "compute.machineTypes.list", computeByName((*Emulator).listMachineTypes)},
	{"GET", "zones/*/machineTypes/*", "compute.machineTypes.get", computeByName((*Emulator).getMachineType)},
	{"GET", "regions/*/resourcePolicies", "compute.resourcePolicies.list", func(e *Emulator, _ context.Context, rt computeRoute, _ []byte) (any, *apierr.Error) {
		return e.listResourcePolicies(rt), nil
	}},
	{"POST", "regions/*/resourcePolicies", "compute.resourcePolicies.insert", func(e *Emulator, _ context.Context, rt computeRoute, body []byte) (any, *apierr.Error) {
		return e.insertResourcePolicy(rt, body)
	}},
	{"GET", "regions/*/resourcePolicies/*", "compute.resourcePolicies.get", computeByName((*Emulator).getResourcePolicy)},
	{"DELETE", "regions/*/resourcePolicies/*", "compute.resourcePolicies.delete", computeByName((*Emulator).deleteResourcePolicy)},
	{"GET", "zones/*/reservations", "compute.reservations.list", computeByName((*Emulator).listReservations)},
	{"GET", "zones/*/reservations/*", "compute.reservations.get", computeByName((*Emulator).getReservation)},
	{"GET", "aggregated/reservations", "compute.reservations.aggregatedList", computeByName((*Emulator).aggregatedReservations)},
	{"GET", "zones/*/operations/*", "compute.zoneOperations.get", computeByName((*Emulator).getComputeOperation)},
	{"GET", "regions/*/operations/*", "compute.regionOperations.get", computeByName((*Emulator).getComputeOperation)},
	{"POST", "zones/*/operations/*/wait", "compute.zoneOperations.wait", computeWait},
	{"POST", "regions/*/operations/*/wait", "compute.regionOperations.wait", computeWait},
}

func computeByName[R any](f func(*Emulator, computeRoute) (R, *apierr.Error)) computeHandler {
	return func(e *Emulator, _ context.Context, rt computeRoute, _ []byte) (any, *apierr.Error) { return f(e, rt) }
}

func computeWait(e *Emulator, ctx context.Context, rt computeRoute, _ []byte) (any, *apierr.Error) {
	return e.waitComputeOperation(ctx, rt)
}

var computeRouteIndex = func() map[string]computeRouteSpec {
	m := map[string]computeRouteSpec{}
	for _, r := range computeRoutes {
		m[r.method+" "+r.shape] = r
	}
	return m
}()

// parseComputeRoute maps a method and path to a Compute Engine method, with the paths of
// google.golang.org/api/compute/v1: projects/{p}/zones/{z}/{instanceGroupManagers|machineTypes}[/{name}],
// projects/{p}/zones/{z}/reservations[/{name}], projects/{p}/aggregated/reservations,
// projects/{p}/regions/{r}/resourcePolicies[/{name}] and
// projects/{p}/{zones|regions}/{z|r}/operations/{op}[/wait].
func parseComputeRoute(method, path string) (computeRoute, *apierr.Error) {
	notFound := func() (computeRoute, *apierr.Error) {
		return computeRoute{}, apierr.NotFound("The requested URL %s was not found on this server.", path)
	}
	rest, ok := strings.CutPrefix(path, computePrefix)
	if !ok {
		return notFound()
	}
	seg := strings.Split(rest, "/")
	if len(seg) == 4 && seg[0] == "projects" && seg[1] != "" && seg[2] == "aggregated" {
		// projects/{p}/aggregated/{collection}: every zone of the project at once.
		r, ok := computeRouteIndex[method+" aggregated/"+seg[3]]
		if !ok {
			return notFound()
		}
		return computeRoute{method: r.id, run: r.run, project: seg[1], scope: "aggregated"}, nil
	}
	if len(seg) < 5 || len(seg) > 7 || seg[0] != "projects" || slices.Contains(seg, "") {
		return notFound()
	}
	shape, names := pathShape(seg[2:])
	r, ok := computeRouteIndex[method+" "+shape]
	if !ok {
		return notFound()
	}
	rt := computeRoute{method: r.id, run: r.run, project: seg[1], scope: seg[2], where: seg[3]}
	if len(names) > 1 {
		rt.name = names[1]
	}
	return rt, nil
}
